#!/usr/bin/env bash
# Unit test of build/bench/trial-noise (no root): synthetic series whose
# verdicts are known, and input it must refuse naming file and line.
set -euo pipefail
tool=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
field() { # field EFFECT-INDEX KEY < json
	python3 -c 'import json, sys; print(json.load(sys.stdin)["effects"][int(sys.argv[1])][sys.argv[2]])' "$1" "$2"
}

# 20 equal turns: no alternative can be ahead by the 3% margin at x1, every
# one of the 9 windows of 12 turns (6 rounds) is at x1.05
for i in $(seq 20); do echo "3000000000 6000000000 2000000000"; done > "$tmp/flat"
out=$("$tool" --rounds 6 --effects 1,1.05 "$tmp/flat")
[ "$(field 0 replaced <<<"$out")" = 0 ] || fail "flat, x1: $out"
[ "$(field 1 replaced <<<"$out")" = 9 ] || fail "flat, x1.05: $out"
python3 -c 'import json, sys; j = json.load(sys.stdin); assert j["trials"] == 9 and j["independent_trials"] == 1, j' <<<"$out" ||
	fail "flat: window counts: $out"

# every other turn 10% faster: a window that starts on a fast turn gives the
# alternative (first in each round) all the fast turns; windows 0, 2, .., 8
{ printf '# a comment longer than any buffer: %0600d\n' 0
  for i in $(seq 10); do echo "3000000000 6600000000 2000000000"; echo "3000000000 6000000000 2000000000 # slow"; done
} > "$tmp/zigzag"
out=$("$tool" --rounds 6 --effects 1 "$tmp/zigzag")
[ "$(field 0 replaced <<<"$out")" = 5 ] || fail "zigzag: $out"
# a wider margin than the difference: never
out=$("$tool" --rounds 6 --effects 1 --margin 15 "$tmp/zigzag")
[ "$(field 0 replaced <<<"$out")" = 0 ] || fail "zigzag, margin 15: $out"

# calibration: on independent log-normal turns (CV 16%), ConfidencePercent=95
# replaces an equally fast prior in about 5% of trials, a little less with
# the margin and WinPercent= on top. A bound that took the pairs as
# independent (they share the prior's turns) gives 7.4% here.
out=$("$tool" --synthetic 20000 --seed 1 --rounds 6 --confidence 95 --effects 1,1.2)
python3 -c 'import json, sys; j = json.load(sys.stdin); s = j["effects"][0]["replaced_share"]
assert j["trials"] == 19989 and 0.035 <= s <= 0.060, j
assert j["effects"][1]["replaced_share"] > 0.4, j' <<<"$out" || fail "synthetic calibration: $out"
[ "$("$tool" --synthetic 20000 --seed 1 --rounds 6 --confidence 95 --effects 1,1.2)" = "$out" ] ||
	fail "synthetic turns differ between runs of the same seed"
[ "$("$tool" --synthetic 20000 --seed 2 --rounds 6 --confidence 95 --effects 1,1.2)" != "$out" ] ||
	fail "synthetic turns do not depend on the seed"

# refused input names the file and line
printf '3000000000 1 1\n3000000000 lots 1\n' > "$tmp/bad"
if "$tool" "$tmp/bad" 2> "$tmp/err"; then fail "bad series accepted"; fi
grep -q "$tmp/bad:2" "$tmp/err" || fail "error does not name bad:2: $(cat "$tmp/err")"
printf '3000000000 1 1\n\n  # indented comment\n3000000000 -5 1\n' > "$tmp/negative"
if "$tool" "$tmp/negative" 2> "$tmp/err"; then fail "negative bytes accepted"; fi
grep -q "$tmp/negative:4" "$tmp/err" || fail "error does not name negative:4: $(cat "$tmp/err")"
if "$tool" "$tmp/flat" --rounds 11 2> "$tmp/err"; then fail "20 turns accepted for 11 rounds"; fi
grep -q "needs 22" "$tmp/err" || fail "too few turns: $(cat "$tmp/err")"
for bad in "--effects 1,-2" "--effects inf" "--win 40" "--rounds 1" "--confidence 100" "--confidence 30"; do
	# shellcheck disable=SC2086 # the option and its value
	if "$tool" $bad "$tmp/flat" 2> /dev/null; then fail "$bad accepted"; fi
done
# --synthetic takes no SERIES, and its values in range
"$tool" --synthetic 100 --effects 1 > /dev/null || fail "--synthetic 100 refused"
for bad in "--synthetic 100 $tmp/flat" "--synthetic 1" "--synthetic 100 --cv x" "--synthetic 100 --cv 1001" \
	"--synthetic 100 --seed -1"; do
	# shellcheck disable=SC2086 # options and values
	if "$tool" $bad 2> /dev/null; then fail "$bad accepted"; fi
done
echo "PASS: trial-noise"
