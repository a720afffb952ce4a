# shellcheck shell=bash
# Helpers for caad's netns/veth testbed. Only namespaces made here are
# touched: never the host's own NICs or IRQs.

fail() { echo "FAIL: $*" >&2; exit 1; }
info() { echo "# $*"; }

require_root_tools() {
	# Tests that need root, BPF or namespaces run in CI (root); anywhere
	# else they say SKIP with the reason (exit 77 is meson's skip).
	if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (network namespaces, BPF)"; exit 77; fi
	for t in ip iperf3 jq; do
		command -v "$t" >/dev/null || fail "$t not installed (scripts/install-deps.sh installs it)"
	done
	CAAD=${CAAD:-$CAAD_BUILD_ROOT/src/caad/caad}
	[ -x "$CAAD" ] || fail "caad binary not found at $CAAD"
}

# Common start of a testbed test: tools, 2 CPUs, a temp dir $TMP, and a
# trap that kills caad ($CAAD_PID) and removes the namespaces on exit.
test_init() {
	require_root_tools
	[ "$(nproc)" -ge 2 ] || fail "needs 2 CPUs, this machine has $(nproc)"
	TMP=$(mktemp -d)
	CAAD_PID=
	trap test_cleanup EXIT
}

test_cleanup() {
	[ -n "${CAAD_PID:-}" ] && kill -KILL "$CAAD_PID" 2>/dev/null
	tb_cleanup
	rm -rf "$TMP"
}

# tb_setup PREFIX SUBNET: namespaces PREFIX-a (sender) and PREFIX-b
# (receiver) joined by a 2-queue veth va <-> vb, 10.SUBNET.0.1 <-> .2
tb_setup() {
	TB_A="$1-a" TB_B="$1-b" TB_SUBNET="$2"
	tb_cleanup
	ip netns add "$TB_A"
	ip netns add "$TB_B"
	ip link add va numtxqueues 2 numrxqueues 2 netns "$TB_A" type veth \
		peer name vb numtxqueues 2 numrxqueues 2 netns "$TB_B"
	ip -n "$TB_A" addr add "10.$TB_SUBNET.0.1/24" dev va
	ip -n "$TB_B" addr add "10.$TB_SUBNET.0.2/24" dev vb
	for ns in "$TB_A" "$TB_B"; do ip -n "$ns" link set lo up; done
	ip -n "$TB_A" link set va up
	ip -n "$TB_B" link set vb up
	TB_DST="10.$TB_SUBNET.0.2"
}

tb_cleanup() {
	for ns in "${TB_A:-}" "${TB_B:-}"; do
		[ -n "$ns" ] || continue
		if ip netns list | grep -qw "$ns"; then
			for p in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
			sleep 0.2
			for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
			ip netns del "$ns" 2>/dev/null
		fi
	done
	return 0
}

in_b() { ip netns exec "$TB_B" "$@"; }
in_a() { ip netns exec "$TB_A" "$@"; }
rps_b() { in_b cat "/sys/class/net/vb/queues/rx-$1/rps_cpus"; }
rps_is() { [ "$(rps_b "$1")" = "$2" ]; }
now_ms() { date +%s%3N; }

# wait_for SECONDS CMD...: poll every 50 ms until CMD succeeds
wait_for() {
	local deadline=$(( $(now_ms) + $1 * 1000 )); shift
	until "$@"; do
		[ "$(now_ms)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# Per-CPU "received_rps" (10th column) of /proc/net/softnet_stat, hex -> dec
softnet_received_rps() {
	local row=$(( $1 + 1 ))
	printf '%d\n' "0x$(sed -n "${row}p" /proc/net/softnet_stat | awk '{print $10}')"
}
