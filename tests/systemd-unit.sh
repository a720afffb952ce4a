#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# systemd-unit.sh CAAD CAAD.SERVICE MANDIR
#
# Checks systemd/caad.service without a running systemd:
#  - "systemd-analyze verify" is silent on it, with ExecStart= pointing at
#    the built CAAD (verify wants the binary to exist) and the man pages of
#    Documentation= found in MANDIR;
#  - "systemd-analyze security --offline=yes" rates its exposure at most
#    2.0 (MAX_EXPOSURE overrides);
#  - it keeps what caad needs: Type=notify, WatchdogSec=, /run/caad
#    writable, AF_UNIX and AF_NETLINK, the bpf syscall, and the capabilities
#    caad keeps after start-up.
# Exit 0 when all hold, 1 otherwise, 2 on a usage error.
set -euo pipefail

prog=${0##*/}
[ $# -eq 3 ] || { echo "usage: $prog CAAD CAAD.SERVICE MANDIR" >&2; exit 2; }
caad=$(realpath "$1") unit=$2 mandir=$3
max=${MAX_EXPOSURE:-2.0}
command -v systemd-analyze >/dev/null || { echo "$prog: systemd-analyze not installed" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "$prog: $*"; fail=1; }

# verify looks the man pages up with man(1): give it ours
mkdir -p "$tmp/man/man8" "$tmp/man/man5"
cp "$mandir/caad.8" "$tmp/man/man8/"
cp "$mandir/caad.conf.5" "$tmp/man/man5/"
mkdir "$tmp/units"
sed -e "s|^ExecStart=/usr/sbin/caad |ExecStart=$caad |" -e "s|^ExecStopPost=-/usr/sbin/caad |ExecStopPost=-$caad |" \
	"$unit" >"$tmp/units/caad.service"
grep -q "^ExecStart=$caad " "$tmp/units/caad.service" || bad "ExecStart= is not /usr/sbin/caad ..."

out=$(cd "$tmp/units" && MANPATH="$tmp/man" systemd-analyze verify ./caad.service 2>&1) ||
	bad "systemd-analyze verify failed"
[ -z "$out" ] || bad "systemd-analyze verify is not silent:"$'\n'"$out"

sec=$(cd "$tmp/units" && systemd-analyze security --offline=yes ./caad.service 2>&1) ||
	bad "systemd-analyze security failed: $sec"
level=$(sed -n 's/.*Overall exposure level for caad\.service: \([0-9][0-9.]*\).*/\1/p' <<<"$sec")
if [ -z "$level" ]; then
	bad "no \"Overall exposure level\" line in:"$'\n'"$sec"
elif awk -v l="$level" -v m="$max" 'BEGIN { exit !(l > m) }'; then
	bad "exposure $level > $max; what costs:"$'\n'"$(grep '✗' <<<"$sec")"
else
	echo "# exposure $level (at most $max)"
fi

# What caad cannot run without: the last line of a setting wins, but list
# settings add up (an empty one resets them), so those are read whole
setting() { sed -n "s/^$1=//p" "$unit" | tail -1; }
settings() { sed -n "s/^$1=//p" "$unit" | awk '$0 == "" { n = 0; next } { l[n++] = $0 } END { for (i = 0; i < n; i++) print l[i] }'; }
[ "$(setting Type)" = notify ] || bad "Type= is not notify"
[ -n "$(setting WatchdogSec)" ] || bad "no WatchdogSec="
[ "$(setting Restart)" = on-failure ] || bad "Restart= is not on-failure"
[ "$(setting ExecStopPost)" = "-/usr/sbin/caad --restore" ] ||
	bad "ExecStopPost= does not restore what a stop that went wrong left (caad --restore)"
settings ReadWritePaths | grep -qw /run/caad || bad "/run/caad is not writable"
[ "$(setting ProtectKernelTunables)" != yes ] || bad "ProtectKernelTunables=yes blocks /proc/irq writes"
for af in AF_UNIX AF_NETLINK; do
	settings RestrictAddressFamilies | grep -qw "$af" || bad "$af not allowed (D-Bus and sd_notify, netlink)"
done
settings SystemCallFilter | grep -qw bpf || bad "the bpf syscall is not allowed"
settings SystemCallFilter | grep -q '~@resources' && bad "~@resources blocks sched_setaffinity"
for cap in CAP_BPF CAP_PERFMON CAP_NET_ADMIN CAP_SYS_NICE; do
	settings CapabilityBoundingSet | grep -qw "$cap" || bad "$cap missing from CapabilityBoundingSet="
done

[ $fail = 0 ] && echo "# caad.service: verify silent, exposure $level"
exit $fail
