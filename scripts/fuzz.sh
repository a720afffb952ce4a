#!/usr/bin/env bash
# Build the libFuzzer targets of tests/fuzz (clang, ASan+UBSan) in
# ./build-fuzz and run each for a bounded time from its seed corpus; a crash,
# leak, timeout or broken invariant fails the run. Run by scripts/test.sh.
#
#   scripts/fuzz.sh [TARGET...]     e.g. scripts/fuzz.sh fuzz-config
#
# CAAD_FUZZ_SECONDS: seconds per target (default 30); 0 skips fuzzing,
# which CI (CI=true) refuses. New inputs the fuzzer finds collect in
# build-fuzz/corpus/TARGET/ (the seeds in git stay as they are); an input
# that fails is saved in build-fuzz/findings/TARGET/ and replayed with
# `build-fuzz/tests/fuzz/TARGET FILE`. Add it to tests/fuzz/corpus/ with the
# fix: the corpora are replayed by the 'fuzz' suite of every build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

seconds=${CAAD_FUZZ_SECONDS:-30}
case $seconds in
'' | *[!0-9]*) echo "error: CAAD_FUZZ_SECONDS='$seconds' is not a number of seconds" >&2; exit 2 ;;
0) refuse_skip_in_ci CAAD_FUZZ_SECONDS; echo "fuzz.sh: CAAD_FUZZ_SECONDS=0, not fuzzing"; exit 0 ;;
esac

if [ ! -f build-fuzz/build.ninja ]; then
	CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false
fi
ninja -C build-fuzz

if [ $# -gt 0 ]; then
	targets=("$@")
else
	mapfile -t targets < <(meson introspect build-fuzz --targets |
		jq -r '.[] | select(.type == "executable" and (.name | startswith("fuzz-"))) | .name' | sort)
fi
[ ${#targets[@]} -gt 0 ] || { echo "error: no fuzz targets in build-fuzz" >&2; exit 1; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
for t in "${targets[@]}"; do
	name=${t#fuzz-}
	seeds=tests/fuzz/corpus/$name
	[ -d "$seeds" ] || { echo "error: $t has no seed corpus $seeds" >&2; status=1; continue; }
	mkdir -p "build-fuzz/corpus/$name" "build-fuzz/findings/$name"
	args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
	      -artifact_prefix="build-fuzz/findings/$name/")
	[ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
	log=build-fuzz/$t.log
	echo "== $t: ${seconds} s"
	if "build-fuzz/tests/fuzz/$t" "${args[@]}" "build-fuzz/corpus/$name" "$seeds" >"$log" 2>&1; then
		# "#N DONE cov: C ft: F corp: ..." and the final stats
		grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1
		grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" | tr '\n' ' '
		echo
	else
		tail -n 60 "$log"
		echo "FAIL: $t: see $log; the input is in build-fuzz/findings/$name/" >&2
		status=1
	fi
done
exit $status
