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
	# not "[ ... ] && kill": a caad already gone fails the kill, and under
	# set -e that ended the trap here, leaving the namespaces behind
	if [ -n "${CAAD_PID:-}" ]; then kill -KILL "$CAAD_PID" 2>/dev/null || true; fi
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
	for ns in "$TB_A" "$TB_B"; do ip -n "$ns" link set lo up; done
	tb_pair
	TB_DST="10.$TB_SUBNET.0.2"
}

# The veth pair va/vb of the testbed, up and addressed: made by tb_setup,
# and again by a test that deleted it (a new device, another ifindex).
tb_pair() {
	ip link add va numtxqueues 2 numrxqueues 2 netns "$TB_A" type veth \
		peer name vb numtxqueues 2 numrxqueues 2 netns "$TB_B"
	ip -n "$TB_A" addr add "10.$TB_SUBNET.0.1/24" dev va
	ip -n "$TB_B" addr add "10.$TB_SUBNET.0.2/24" dev vb
	ip -n "$TB_A" link set va up
	ip -n "$TB_B" link set vb up
}

tb_cleanup() {
	for ns in "${TB_A:-}" "${TB_B:-}"; do
		[ -n "$ns" ] || continue
		if ip netns list | grep -qw "$ns"; then
			# each "|| true": a process gone since it was listed fails
			# its kill, which under set -e ended the (EXIT) trap here
			for p in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$p" 2>/dev/null || true; done
			sleep 0.2
			for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
			ip netns del "$ns" 2>/dev/null || true
		fi
	done
	return 0
}

# tb_wait_listen PORT: until a TCP socket listens on PORT in the receiver's
# namespace (a server just started in the background: its client must not
# be refused on a machine slow to start it)
tb_listening() { ip netns exec "$TB_B" ss -Hltn "sport = :$1" | grep -q .; }
tb_wait_listen() { wait_for 10 tb_listening "$1" || fail "nothing listens on port $1 in $TB_B after 10 s"; }

# A closed-loop test's caad ($TMP/caad.conf, runtime dir $TMP/rt, in the
# receiver's namespace): start_caad NAME STATE_DIR logs to
# $TMP/caad-NAME.log and returns once it has written its state; stop_caad
# NAME stops it and fails unless it exits 0.
start_caad() {
	rm -f "$TMP/rt/state.json"
	ip netns exec "$TB_B" "$CAAD" --foreground -c "$TMP/caad.conf" --runtime-dir "$TMP/rt" \
		--state-dir "$2" >"$TMP/caad-$1.log" 2>&1 &
	CAAD_PID=$!
	wait_for 10 test -s "$TMP/rt/state.json" || { cat "$TMP/caad-$1.log"; fail "caad did not start"; }
}
stop_caad() {
	kill -TERM "$CAAD_PID"
	local rc=0; wait "$CAAD_PID" || rc=$?
	CAAD_PID=
	[ "$rc" = 0 ] || { tail -n 30 "$TMP/caad-$1.log"; fail "caad exited with $rc"; }
}

in_b() { ip netns exec "$TB_B" "$@"; }
in_a() { ip netns exec "$TB_A" "$@"; }
# tb_pkill PATTERN: kill this testbed's processes (of either namespace)
# whose command line holds PATTERN; 1 when there was none. Not pkill -f,
# which reaches another test's of the same subnet run meanwhile (sysroot's
# killed trial's iperf3 client so).
tb_pkill() {
	local p found=1
	for p in $(ip netns pids "$TB_A"; ip netns pids "$TB_B"); do
		if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$1"; then
			kill "$p" 2>/dev/null && found=0
		fi
	done
	return "$found"
}
# (the receiving veth is vb, or $IF where a test renamed it)
rps_b() { in_b cat "/sys/class/net/${IF:-vb}/queues/rx-$1/rps_cpus"; }
rps_is() { [ "$(rps_b "$1")" = "$2" ]; }
now_ms() { date +%s%3N; }

# slow_ms MS, slow_s S: a time bound of MS (S) on real CPUs,
# CAAD_TEST_SLOWDOWN times that where they are emulated (tests/kernel/vm.sh
# sets it). Not for a bound that tells two mechanisms apart (an early scan
# from the scheduled one), which must hold there too.
slow_ms() { echo $(( $1 * ${CAAD_TEST_SLOWDOWN:-1} )); }
slow_s() { slow_ms "$1"; }

# wait_for SECONDS CMD...: poll every 50 ms until CMD succeeds
wait_for() { wait_every 0.05 "$@"; }

# wait_every INTERVAL SECS CMD...: wait_for, asking every INTERVAL seconds.
# Where a test measures a flow meanwhile: each ask starts processes (CMD,
# date, sleep), and at 20 a second they took a fifth of a 2-vCPU VM's
# stream from every placement a trial compared, which read alike.
wait_every() {
	local every=$1 deadline=$(( $(now_ms) + $2 * 1000 )); shift 2
	until "$@"; do
		[ "$(now_ms)" -lt "$deadline" ] || return 1
		sleep "$every"
	done
}

# Per-CPU "received_rps" (10th column) of /proc/net/softnet_stat, hex -> dec
softnet_received_rps() {
	local row=$(( $1 + 1 ))
	printf '%d\n' "0x$(sed -n "${row}p" /proc/net/softnet_stat | awk '{print $10}')"
}

# A private system bus for caad's D-Bus API, like Debian's system bus, with
# caad's shipped policy (dbus/org.caad1.conf) and $TMP/bus/local.conf for a
# test's own rules. bus_init sets SOCK and ADDR and exports
# DBUS_SYSTEM_BUS_ADDRESS; bus_start (again after a bus_stop) starts
# dbus-daemon and sets BUS_PID; bus_stop ends it. $TMP must exist; it is
# made world-searchable so that an unprivileged caller (nobody) reaches the
# socket.
bus_init() {
	local src=${CAAD_SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
	command -v dbus-daemon >/dev/null || fail "dbus-daemon not installed (scripts/install-deps.sh installs it)"
	chmod 0755 "$TMP"
	mkdir -m 0755 "$TMP/bus"
	SOCK=$TMP/bus/socket
	ADDR=unix:path=$SOCK
	BUS_PID=
	export DBUS_SYSTEM_BUS_ADDRESS=$ADDR
	cat >"$TMP/bus/bus.conf" <<EOC
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$SOCK</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
  <include>$src/dbus/org.caad1.conf</include>
  <include ignore_missing="yes">$TMP/bus/local.conf</include>
</busconfig>
EOC
}

bus_start() {
	rm -f "$SOCK"
	dbus-daemon --config-file="$TMP/bus/bus.conf" --fork --print-pid=1 >"$TMP/bus/pid" ||
		fail "dbus-daemon did not start"
	BUS_PID=$(cat "$TMP/bus/pid")
	wait_for 5 test -S "$SOCK" || fail "no bus socket"
}

bus_stop() {
	if [ -n "${BUS_PID:-}" ]; then kill "$BUS_PID" 2>/dev/null || true; fi
	BUS_PID=
	return 0
}

# Whether caad owns org.caad1 on the bus at $ADDR.
bus_has_caad() {
	busctl --address="$ADDR" -j call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
		NameHasOwner s org.caad1 2>/dev/null | jq -e '.data[0]' >/dev/null
}
