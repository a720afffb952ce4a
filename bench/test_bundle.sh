#!/usr/bin/env bash
# bench-bundle: bench/bundle makes a copy of the build and the benches'
# tools that runs where none of their libraries is installed. Checked in a
# mount namespace whose library dir holds glibc alone (root: CI), after
# the bundle was moved elsewhere; the unbundled caad must fail there, or
# the check would prove nothing.
set -euo pipefail
src=${CAAD_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
build=${CAAD_BUILD_ROOT:?CAAD_BUILD_ROOT unset}
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ "$(id -u)" != 0 ]; then
	if [ "${CI:-}" = true ]; then fail "bench-bundle needs root in CI"; fi
	echo "SKIP: needs root (a mount namespace that hides the host's libraries)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Refusals: an unknown option, a missing build, a directory in use.
"$src/bench/bundle" --nope "$tmp/x" 2>"$tmp/err" && fail "an unknown option was taken"
grep -q "unknown option --nope" "$tmp/err" || fail "unknown option: $(cat "$tmp/err")"
"$src/bench/bundle" --build "$tmp/nobuild" "$tmp/x" 2>"$tmp/err" && fail "a missing build was bundled"
grep -q "$tmp/nobuild/src/caad/caad not built" "$tmp/err" || fail "missing build: $(cat "$tmp/err")"
mkdir "$tmp/used"; touch "$tmp/used/f"
"$src/bench/bundle" --build "$build" "$tmp/used" 2>"$tmp/err" && fail "a non-empty directory was written into"
grep -q "exists and is not empty" "$tmp/err" || fail "non-empty: $(cat "$tmp/err")"

# made through a symbolic link (ldd names the libraries by their real path)
mkdir "$tmp/real"; ln -s "$tmp/real" "$tmp/ln"
"$src/bench/bundle" --build "$build" "$tmp/ln/b" >"$tmp/out"
grep -q "libraries" "$tmp/out" || fail "no summary line: $(cat "$tmp/out")"
[ -n "$(ls "$tmp/real/b/lib")" ] || fail "no library was carried"
for l in "$tmp"/real/b/lib/*; do
	case $(basename "$l") in
	libc.so.*|libm.so.*|ld-linux*) fail "glibc's $(basename "$l") was carried: it must match the host's ld.so" ;;
	esac
done
mv "$tmp/real/b" "$tmp/moved"

# The host's multiarch library dir, with glibc's files alone in its place.
libc=$(ldd /bin/true | awk '$1 ~ /^libc\.so/ { print $3 }')
libdir=$(dirname "$(realpath "$libc")")
mkdir "$tmp/glibc"
for f in "$libdir"/{libc.so.6,libm.so.6,ld-linux-x86-64.so.2,libpthread.so.0,libdl.so.2,librt.so.1,libresolv.so.2}; do
	if [ -e "$f" ]; then cp -L "$f" "$tmp/glibc/"; fi
done

CAAD_BUILT=$build/src/caad/caad B=$tmp/moved LIBDIR=$libdir GLIBC=$tmp/glibc \
unshare -m bash -euo pipefail -c '
	# builtins only beside the bundle: grep, ldd (a bash script) and the
	# like need libraries that are hidden now
	no() { echo "FAIL: $*" >&2; exit 1; }
	has() { [[ $1 == *"$2"* ]] || no "$3: \"$2\" not in: $1"; }
	mount --make-rprivate /
	mount --bind "$GLIBC" "$LIBDIR"
	if "$CAAD_BUILT" --version >/dev/null 2>&1; then
		no "the build'\''s own caad ran with its libraries hidden: the check would prove nothing"
	fi
	. "$B/env.sh"
	[ "$CAAD" = "$B/build/src/caad/caad" ] || no "env.sh: CAAD=$CAAD"
	[ "$CAAD_BUILD_ROOT" = "$B/build" ] || no "env.sh: CAAD_BUILD_ROOT=$CAAD_BUILD_ROOT"
	[ "$(command -v iperf3)" = "$B/bin/iperf3" ] || no "env.sh: PATH=$PATH"
	has "$("$CAAD" --version)" "caad " "bundled caad"
	has "$("$B/build/src/caadctl/caadctl" --version)" "caadctl " "bundled caadctl"
	has "$(iperf3 -v)" "iperf " "bundled iperf3"
	has "$(bpftool version)" "bpftool" "bundled bpftool"
	has "$(ip -V)" "iproute2" "bundled ip"
	has "$(lscpu)" "Architecture" "bundled lscpu"
	taskset -c 0 true || no "bundled taskset"
	for p in churn floor planner trial-noise; do
		l=$(/lib64/ld-linux-x86-64.so.2 --list "$B/build/bench/$p") || no "bench/$p: $l"
		[[ $l != *"not found"* ]] || no "bench/$p: $l"
	done
'
echo "PASS: bench-bundle"
