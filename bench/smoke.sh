#!/usr/bin/env bash
# bench-smoke NAME: bench/run-all --quick --only NAME into a temp dir, then
# check that the bench wrote its results and RESULTS.md has its section.
# Proves in CI (root) that each bench still runs; the numbers mean nothing.
set -euo pipefail
name=$1
src=${CAAD_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
caad=${CAAD:-$CAAD_BUILD_ROOT/src/caad/caad}
if [ "$(id -u)" != 0 ]; then
	if [ "${CI:-}" = true ]; then echo "FAIL: bench-smoke needs root in CI" >&2; exit 1; fi
	echo "SKIP: needs root (network namespaces, RPS masks, BPF)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$name" = trial-noise ]; then
	# not one of run-all's: it runs alone (and takes the lock the same way)
	"$src/bench/trial-noise" --quick --out "$tmp/out/$name" --tool "$CAAD_BUILD_ROOT/bench/trial-noise"
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
r = j["result"]
assert r["turns"] >= 20 and r["effects"][0]["effect"] == 1, r
assert all(0 < g < 1000 for g in j["meta"]["turns_gbps"]), j["meta"]["turns_gbps"]' "$tmp/out/$name/summary.json" ||
		{ echo "FAIL: trial-noise: too few turns, or a turn's goodput out of range (above)" >&2; exit 1; }
	echo "PASS: bench-smoke $name"
	exit 0
fi
extra=()
# the observer's --split arm too (one stream more), which run-all leaves out
[ "$name" = observer ] && extra=(--observer-args=--split)
# run-all takes /tmp/caad-testbed.lock (or sees that a parent, e.g. `flock ... meson test`, holds it)
"$src/bench/run-all" --quick --only "$name" --caad "$caad" --out "$tmp/out" --results "$tmp/RESULTS.md" "${extra[@]}"
for d in "$tmp"/out/*/; do
	for f in summary.json summary.md; do
		[ -s "$d$f" ] || { echo "FAIL: $d$f missing" >&2; exit 1; }
	done
done
case $name in
affinity-matrix)
	for f in runs.json runs.csv affinity-matrix.png; do
		[ -s "$tmp/out/$name/$f" ] || { echo "FAIL: $f missing" >&2; exit 1; }
	done
	[ -s "$tmp/affinity-matrix.png" ] || { echo "FAIL: chart not next to RESULTS.md" >&2; exit 1; } ;;
observer)
	# both kinds of short connections ran and timed the close and read paths
	python3 -c 'import json, sys
cs = json.load(open(sys.argv[1]))["churns"]
assert sorted(cs) == ["followed", "short"], cs
for c in cs.values():
    for p in ("caad_inet_sock_set_state", "caad_sock_recv_length"):
        assert c["progs"][p]["median_ns_per_event"] > 0, c' "$tmp/out/observer/summary.json" ||
		{ echo "FAIL: short connections not timed" >&2; exit 1; }
	# --split: the programs-alone arm ran, with the daemon stopped over its window
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
assert sorted(s["split"]) == ["caad_progs", "progs_off"] and s["split"]["progs_off"]["pairs"] == 1, s["split"]
assert s["arms"]["progs"]["caad_cpu_pct"] < s["arms"]["caad"]["caad_cpu_pct"], s["arms"]' \
		"$tmp/out/observer/summary.json" || { echo "FAIL: --split arm missing or its daemon not stopped" >&2; exit 1; } ;;
esac
grep -q '^## ' "$tmp/RESULTS.md" || { echo "FAIL: RESULTS.md has no sections" >&2; exit 1; }
grep -q '^| target' "$tmp/RESULTS.md" || { echo "FAIL: RESULTS.md has no targets table" >&2; exit 1; }
echo "PASS: bench-smoke $name"
