# shellcheck shell=bash
# Helpers shared by the test scripts (sourced, not run).

# root by "su" without "-" keeps a user's PATH: the tests call ethtool,
# ip, ldconfig and sysctl from the sbin directories
for d in /usr/local/sbin /usr/sbin /sbin; do
	case ":$PATH:" in *":$d:"*) ;; *) PATH=$PATH:$d ;; esac
done
export PATH

# meson_test BUILDDIR [MESON-TEST-ARGS...]: run meson test; a skipped test
# is a failure here, since CI (root) must run the root/BPF/netns tests.
# Its logs are testlog.json/.txt, or testlog-valgrind.* with --wrapper
# valgrind (meson adds the wrapper's name): any testlog*, this run's only.
meson_test() {
	local dir=$1 status=0 txt logs=()
	shift
	rm -f "$dir"/meson-logs/testlog*.json "$dir"/meson-logs/testlog*.txt
	meson test -C "$dir" --print-errorlogs "$@" || status=$?
	for txt in "$dir"/meson-logs/testlog*.json; do [ -e "$txt" ] && logs+=("$txt"); done
	if [ ${#logs[@]} = 0 ]; then
		# (a build that failed first said so above)
		[ "$status" != 0 ] || echo "error: meson test left no testlog*.json in $dir/meson-logs: its skips cannot be checked" >&2
		return 1
	fi
	if grep -q '"result": "SKIP"' "${logs[@]}"; then
		echo "error: tests were skipped in $dir (see above); the whole suite must run (as root)" >&2
		status=1
	fi
	# a cmocka test that skipped itself, which meson counts as passed
	for txt in "$dir"/meson-logs/testlog*.txt; do
		[ -e "$txt" ] || continue
		if grep -q '^\[  SKIPPED \]' "$txt"; then
			grep -B3 '^\[  SKIPPED \]' "$txt" | grep '^SKIP: ' | sort -u >&2 || true
			echo "error: cmocka tests skipped themselves in $dir (see $txt)" >&2
			status=1
		fi
	done
	return $status
}

# refuse_skip_in_ci VAR: VAR=0 skips a step outside CI only.
refuse_skip_in_ci() {
	if [ "${CI:-}" = true ]; then
		echo "error: $1=0 skips a step that CI must run" >&2
		exit 1
	fi
}

# timed NAME CMD...: run CMD, print how long it took.
timed() {
	local name=$1 start status=0
	shift
	start=$(date +%s)
	"$@" || status=$?
	echo "== $name: $(($(date +%s) - start)) s$([ $status = 0 ] || echo ", FAILED")"
	return $status
}
