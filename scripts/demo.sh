#!/usr/bin/env bash
# caad's main job, safely: two throwaway network namespaces joined by a
# 2-queue veth, a real iperf3 TCP flow whose receiver is pinned to a CPU,
# and caad enforcing inside the receiving namespace only. Shows live what
# caad sees and changes, then cleans everything up (also on Ctrl-C).
# The host's own NICs and IRQs are never touched.
#
# Usage: scripts/demo.sh [--duration SECONDS] [--cpu N] [--no-build] [--caad PATH]
# (--caad runs that binary, e.g. an installed /usr/sbin/caad, and builds nothing)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=20
APP_CPU=
BUILD=1
CAAD=
while [ $# -gt 0 ]; do
	case "$1" in
	--duration) DURATION=$2; shift 2 ;;
	--cpu) APP_CPU=$2; shift 2 ;;
	--no-build) BUILD=0; shift ;;
	--caad) CAAD=$2; BUILD=0; shift 2 ;;
	-h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "demo.sh: run as root (namespaces, BPF)" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "demo.sh: needs at least 2 CPUs" >&2; exit 1; }
APP_CPU=${APP_CPU:-$(( $(nproc) - 1 ))}

if [ "$BUILD" = 1 ]; then
	./scripts/install-deps.sh
	./scripts/build.sh >/dev/null
fi
CAAD=${CAAD:-$PWD/build/src/caad/caad}
[ -x "$CAAD" ] || { echo "demo.sh: $CAAD not built" >&2; exit 1; }

. tests/integration/lib.sh
RT=$(mktemp -d /tmp/caad-demo.XXXXXX)
CAAD_PID= CLI_PID= ORIG= ORIG1= STEERED=0
bold=$(tput bold 2>/dev/null || true) norm=$(tput sgr0 2>/dev/null || true)

# The exit status says whether caad did its job: it steered the flow (a
# queue's rps_cpus changed), it exited cleanly on SIGTERM, and both queues'
# rps_cpus are as it found them.
cleanup() {
	local status=$? rc=0
	trap - EXIT INT TERM
	echo
	if [ -n "$CAAD_PID" ]; then
		if kill -0 "$CAAD_PID" 2>/dev/null; then
			echo "${bold}Stopping caad (SIGTERM): it restores what it changed${norm}"
			kill -TERM "$CAAD_PID"
		elif [ "$status" = 0 ]; then
			echo "demo.sh: caad exited before the end of the demo" >&2
			status=1
		fi
		wait "$CAAD_PID" 2>/dev/null || rc=$?
		[ "$rc" = 0 ] || { echo "demo.sh: caad exited with status $rc" >&2; status=1; }
	fi
	if [ -n "$ORIG" ] && ip netns list | grep -qw "$TB_B"; then
		echo "rx-0 rps_cpus after caad: $(rps_b 0) (before: $ORIG)"
		[ "$(rps_b 0)" = "$ORIG" ] && [ "$(rps_b 1)" = "$ORIG1" ] ||
			{ echo "demo.sh: caad did not restore the queues' rps_cpus" >&2; status=1; }
	fi
	tb_cleanup
	rm -rf "$RT"
	echo "Cleaned up: namespaces ${TB_A:-} and ${TB_B:-} removed."
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tb_setup caad-demo 123
ORIG=$(rps_b 0) ORIG1=$(rps_b 1)
echo "${bold}Testbed${norm}: namespace $TB_A (sender, va 10.123.0.1) <-> $TB_B (receiver, vb $TB_DST), 2 rx queues"
echo "rx-0 rps_cpus before caad: $ORIG"

# caad's defaults, not this host's caad.conf, and its own state directory:
# the demo writes none of an installed caad's files (MetricsFile=, verdicts).
# IrqBalance=ignore: the host's irqbalance (its socket is in /run, which
# the namespace shares) is not caad's to tell anything; veth has no IRQs.
printf '[Daemon]\nInterfaces=vb\nIrqBalance=ignore\n' >"$RT/caad.conf"
# as a process substitution, not a pipe: $! is caad itself, whose exit
# status cleanup() reads
ip netns exec "$TB_B" "$CAAD" --foreground --config "$RT/caad.conf" --runtime-dir "$RT" --state-dir "$RT/state" \
	> >(sed -u 's/^/  caad| /') 2>&1 &
CAAD_PID=$!
wait_for 10 test -s "$RT/state.json" || { echo "demo.sh: caad did not start" >&2; exit 1; }

in_b iperf3 -s -1 -A "$APP_CPU" >"$RT/iperf3-server.log" 2>&1 &
tb_wait_listen 5201
echo "${bold}Flow${norm}: iperf3 receiver pinned to CPU $APP_CPU, sender unpinned, $DURATION s"
in_a iperf3 -c "$TB_DST" -t "$DURATION" -J >"$RT/iperf3.json" 2>&1 &
CLI_PID=$!

start=$(date +%s)
while kill -0 "$CLI_PID" 2>/dev/null; do
	sleep 1
	t=$(( $(date +%s) - start ))
	{ [ "$(rps_b 0)" != "$ORIG" ] || [ "$(rps_b 1)" != "$ORIG1" ]; } && STEERED=1
	jq -r --arg t "$t" --arg rps "$(rps_b 0)" '
		[.flows[] | select(.heavy)] as $h
		| if ($h | length) == 0 then "  [\($t)s] rx-0 rps_cpus=\($rps) | no heavy flow"
		  else $h[] | "  [\($t)s] rx-0 rps_cpus=\($rps) | \(.tuple): \(.rate_bps / 1e9 * 10 | floor / 10) Gbit/s, \(.comm) reads on CPU \(.consumer_cpu), processed on CPU \(.proc_cpu) -> steered to \(.steer_cpu // "-") (\(.relation))"
		  end' "$RT/state.json" 2>/dev/null || true
done
wait "$CLI_PID" 2>/dev/null || { cat "$RT/iperf3.json" >&2; echo "demo.sh: the iperf3 flow failed" >&2; exit 1; }
jq -r '"Sender: \(.end.sum_sent.bits_per_second / 1e9 * 10 | floor / 10) Gbit/s, \(.end.sum_sent.retransmits) retransmits"' \
	"$RT/iperf3.json" 2>/dev/null || true
[ "$STEERED" = 1 ] || { echo "demo.sh: caad never steered the flow" >&2; exit 1; }
