#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# cli.sh CAAD
#
# caad's own command line, as root or not, touching nothing: options out
# of range or malformed are refused with status 2 and a message that names
# the option and the value; --check-config reads the configuration and
# exits 0 when it is valid, 78 with its errors (file and line) when not,
# and writes nothing.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: ${0##*/} CAAD" >&2; exit 2; }
caad=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect WHAT STATUS PATTERN ARGS...: caad ARGS exits STATUS and says PATTERN
# (stdout and stderr together; "" for nothing asked)
expect() {
	local what=$1 want=$2 pattern=$3 rc=0
	shift 3
	"$caad" "$@" >"$tmp/out" 2>&1 </dev/null || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL: $what: status $rc, wanted $want"
		sed 's/^/    /' "$tmp/out"
		fail=1
	elif [ -n "$pattern" ] && ! grep -qF -- "$pattern" "$tmp/out"; then
		echo "FAIL: $what: no \"$pattern\" in:"
		sed 's/^/    /' "$tmp/out"
		fail=1
	else
		echo "ok: $what"
	fi
}

# --interval: digits only (strtoul() alone takes blanks and signs, and
# wraps a negative number around to one in range)
expect "--interval wrapped around" 2 '--interval: expected milliseconds from 10 to 60000, got "-18446744073709551516"' \
	--check-config --interval=-18446744073709551516
expect "--interval with a sign" 2 'got "+100"' --check-config --interval=+100
expect "--interval with a blank" 2 'got " 100"' --check-config "--interval= 100"
expect "--interval in range" 0 "" --check-config --config /dev/null --interval=100
# an empty directory name: not the working directory, nor undefined behaviour
expect "--runtime-dir empty" 2 "--runtime-dir: expected a directory, got an empty name" --runtime-dir= --foreground
expect "--state-dir empty" 2 "--state-dir: expected a directory, got an empty name" --state-dir "" --foreground

# --interface: the bad name, named
expect "--interface with a colon" 2 '--interface: "eth0:1" is not an interface name' \
	--check-config -i eth0 -i eth0:1 -i ens1f0
expect "--interface too long" 2 '"abcdefghijklmnop" is not an interface name (1-15 bytes' \
	--check-config -i abcdefghijklmnop

# <N> priorities only where stderr is the journal's stream (JOURNAL_STREAM
# names its device and inode), not a file of a service's command
printf '[Daemon]\nIntervalMSec=nope\n' >"$tmp/broken.conf"
: >"$tmp/err"
JOURNAL_STREAM=1:1 "$caad" --check-config --config "$tmp/broken.conf" 2>"$tmp/err" && fail=1
if grep -q '^<' "$tmp/err"; then
	echo "FAIL: <N> priorities on a stderr that is not the journal's: $(cat "$tmp/err")"
	fail=1
fi
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/err") "$caad" --check-config --config "$tmp/broken.conf" 2>"$tmp/err" && fail=1
if ! grep -q "^<3>$tmp/broken.conf:2: Invalid IntervalMSec=" "$tmp/err"; then
	echo "FAIL: no <3> priority on the journal's stream: $(cat "$tmp/err")"
	fail=1
fi
echo "ok: <N> priorities on the journal's stream only"

# --check-config
printf '[Daemon]\nInterfaces=eth0 eth1\n[Placement]\nRateThreshold=5G\n' >"$tmp/good.conf"
printf '[Daemon]\nInterfaces=eth0\n[Placement]\nRateThreshold=fast\nDwellMSec=soon\n' >"$tmp/bad.conf"
expect "--check-config, valid" 0 "" --check-config --config "$tmp/good.conf" --runtime-dir "$tmp/rt"
expect "--check-config, broken" 78 "$tmp/bad.conf:4: Invalid RateThreshold= value 'fast'" \
	--check-config --config "$tmp/bad.conf" --runtime-dir "$tmp/rt"
grep -qF "$tmp/bad.conf:5: Invalid DwellMSec= value 'soon'" "$tmp/out" ||
	{ echo "FAIL: --check-config does not report every error"; fail=1; }
[ ! -e "$tmp/rt" ] || { echo "FAIL: --check-config made a runtime directory"; fail=1; }
# the drop-in stack below CAAD_CONF_ROOT, as caad --help names it
confd=$("$caad" --help | grep -o '/[^ ,()]*/caad\.conf\.d' | head -1)
mkdir -p "$tmp/root$confd"
cp "$tmp/bad.conf" "$tmp/root$confd/60-bad.conf"
CAAD_CONF_ROOT=$tmp/root expect "--check-config, a broken drop-in" 78 "60-bad.conf:4: Invalid RateThreshold=" --check-config
rm "$tmp/root$confd/60-bad.conf"
CAAD_CONF_ROOT=$tmp/root expect "--check-config, no files" 0 "" --check-config
expect "--check-config with --restore" 2 "--check-config cannot be combined" --check-config --restore
expect "--json alone" 2 "--json applies to --print-topology only" --json

exit "$fail"
