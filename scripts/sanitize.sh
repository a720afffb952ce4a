#!/usr/bin/env bash
# caad's tests under sanitizers, as CI runs them after the plain build
# (scripts/test.sh calls this). Steps, all by default:
#   asan          build-asan (-Db_sanitize=address,undefined): every suite
#                 but the testbed's (unit, docs, fuzz corpus replay, ...),
#                 leaks checked
#   asan-testbed  the bpf and integration suites with the ASan-built caad
#                 and tests (root, as in CI)
#   valgrind      build-vg (plain build): unit and fuzz suites under
#                 valgrind memcheck
#
#   scripts/sanitize.sh [STEP...]
#
# CAAD_SANITIZE=0 skips all of it (refused under CI=true). Suppressions for
# other projects' leaks and errors, each with its reason, are in
# tests/sanitizers/; caad's own code is never suppressed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

if [ "${CAAD_SANITIZE:-1}" = 0 ]; then
	refuse_skip_in_ci CAAD_SANITIZE
	echo "sanitize.sh: CAAD_SANITIZE=0, skipping the sanitizer runs"
	exit 0
fi

supp=$PWD/tests/sanitizers
werror=false
[ "${CI:-}" = true ] && werror=true

# setup DIR OPTIONS...: configure DIR once, then build it.
setup() {
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Dwerror=$werror "$@"
	else
		meson configure "$dir" -Dwerror=$werror
	fi
	ninja -C "$dir"
}

# hwloc's PCI plugin unloads libpciaccess with memory still referenced from
# its globals, which LSan and valgrind then report as a leak that no
# suppression can name precisely (see lsan.supp): keep it loaded.
keep_pciaccess_loaded() {
	local lib

	lib=$(ldconfig -p | awk '$1 == "libpciaccess.so.0" { print $NF; exit }')
	if [ -n "$lib" ]; then
		export LD_PRELOAD=$lib
	fi
}

asan_env() {
	# verify_asan_link_order=0: the preloaded libpciaccess comes before the
	# ASan runtime, harmlessly (it defines nothing ASan intercepts).
	export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:verify_asan_link_order=0
	export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	# for tests whose bounds hold only without ASan (RSS: its quarantine)
	export CAAD_SANITIZERS=address,undefined
	keep_pciaccess_loaded
}

# Each step in a subshell, so that its environment stays its own.
step_asan() (
	asan_env
	setup build-asan -Db_sanitize=address,undefined -Db_lundef=false &&
		meson_test build-asan --no-suite bpf --no-suite integration --no-suite bench-smoke --no-suite kernel
)

step_asan_testbed() (
	asan_env
	setup build-asan -Db_sanitize=address,undefined -Db_lundef=false &&
		meson_test build-asan --suite bpf --suite integration
)

step_valgrind() (
	keep_pciaccess_loaded
	setup build-vg &&
		meson_test build-vg --suite unit --suite fuzz --timeout-multiplier 5 \
			--wrapper "valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --suppressions=$supp/valgrind.supp"
)

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(asan asan-testbed valgrind)
status=0
for s in "${steps[@]}"; do
	case $s in
	asan | asan-testbed | valgrind) timed "sanitize $s" "step_${s//-/_}" || status=1 ;;
	*) echo "usage: $0 [asan|asan-testbed|valgrind]..." >&2; exit 2 ;;
	esac
done
exit $status
