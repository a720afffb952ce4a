#!/usr/bin/env bash
# caad across link changes in the netns testbed, steering a live flow each
# time: the receiving veth taken down and up, its channel count changed
# (rx-1 disappears), and the veth pair deleted and created again. caad must
# re-inventory (rtnetlink), keep steering, never write to what is gone, and
# never restore values of the old device onto the new one.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init

tb_setup "caadh$$" 83
RT=$TMP/rt
ip netns exec "$TB_B" "$CAAD" --foreground --interface vb --runtime-dir "$RT" >"$TMP/caad.log" 2>&1 &
CAAD_PID=$!
wait_for 10 test -s "$RT/state.json" || { cat "$TMP/caad.log"; fail "caad did not start"; }

no_heavy() { jq -e '[.flows[] | select(.heavy)] | length == 0' "$RT/state.json" >/dev/null 2>&1; }
# flow SECONDS: receiver on CPU 1; caad steers rx processing to CPU 0.
# The last flow's end must be seen first: its steering stays on rx-0.
flow() {
	wait_for 5 no_heavy || { jq .flows "$RT/state.json"; fail "the last flow is still listed as heavy"; }
	in_b iperf3 -s -1 -A 1 >/dev/null 2>&1 &
	tb_wait_listen 5201
	in_a iperf3 -c "$TB_DST" -t "$1" >/dev/null 2>&1 &
	CLI=$!
}
# this flow, not the last one: rx-0's mask outlives its flow
steered() {
	rps_is 0 1 && jq -e '[.flows[] | select(.heavy and .steer_cpu == 0)] | length == 1' "$RT/state.json" >/dev/null 2>&1
}
n_queues() { jq '[.queues[] | select(.iface == "vb")] | length' "$RT/state.json"; }
alive() { kill -0 "$CAAD_PID" 2>/dev/null || { cat "$TMP/caad.log"; fail "caad died"; }; }

flow 3
wait_for 5 steered || { cat "$TMP/caad.log"; fail "not steered at first"; }
wait "$CLI" || true
info "steered: rx-0 rps_cpus $(rps_b 0)"

# 1. down and up: the values stay, caad keeps going
in_b ip link set vb down
sleep 0.5
in_b ip link set vb up
alive
flow 3
wait_for 5 steered || { cat "$TMP/caad.log"; fail "not steered after down/up"; }
wait "$CLI" || true
info "down/up: still steered"

# 2. one rx channel: rx-1 is gone; caad sees one queue and never writes rx-1
in_b ethtool -L vb rx 1 tx 1
has_one_queue() { [ "$(n_queues)" = 1 ]; }
wait_for 5 has_one_queue || { jq .queues "$RT/state.json"; fail "caad still lists $(n_queues) queues of vb"; }
alive
flow 3
wait_for 5 steered || { cat "$TMP/caad.log"; fail "not steered with one channel"; }
wait "$CLI" || true
if grep -E "rx-1: .*(fail|cannot)" "$TMP/caad.log"; then fail "caad tried to use the vanished rx-1"; fi
info "channels 2 -> 1: caad lists 1 queue, steers rx-0, leaves rx-1 alone"

# 3. the pair deleted and created again: a new vb (new ifindex, rps 0)
old_ifindex=$(in_b cat /sys/class/net/vb/ifindex)
ip -n "$TB_A" link del va
sleep 1
alive
tb_pair
new_ifindex=$(in_b cat /sys/class/net/vb/ifindex)
[ "$new_ifindex" != "$old_ifindex" ] || fail "the new vb has the old ifindex $old_ifindex"
[ "$(rps_b 0)" = 0 ] || fail "a fresh veth should start with RPS off"
sees_new() { jq -e --argjson i "$new_ifindex" '.queues | map(select(.iface == "vb")) | length == 2' "$RT/state.json" >/dev/null; }
wait_for 5 sees_new || { cat "$TMP/caad.log"; fail "caad did not re-inventory the new vb"; }
grep -q "forgets what it changed there" "$TMP/caad.log" || fail "the old device's values were not forgotten"
flow 3
wait_for 5 steered || { cat "$TMP/caad.log"; fail "the new vb is not steered"; }
wait "$CLI" || true
info "deleted and re-created: new vb (ifindex $new_ifindex) steered"

# exit: the new device gets its own original back (0), nothing of the old one
kill -TERM "$CAAD_PID"; wait "$CAAD_PID" || fail "caad exit status $? after SIGTERM"; CAAD_PID=
[ "$(rps_b 0)" = 0 ] && [ "$(rps_b 1)" = 0 ] || fail "new vb not restored to its own originals: $(rps_b 0) $(rps_b 1)"
[ ! -e "$RT/journal" ] || fail "journal left behind"
info "SIGTERM: the new vb's originals restored"
echo "PASS: hotplug"
