#!/usr/bin/env bash
# caad across link changes in the netns testbed, steering a live flow each
# time: the receiving veth taken down and up, its channel count changed
# (rx-1 disappears), the veth pair deleted and created again, and the new
# one renamed away and back. caad must re-inventory (rtnetlink), keep
# steering, never write to what is gone, never restore values of the old
# device onto the new one, and restore a renamed one under its name.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init

tb_setup "caadh$$" 83
RT=$TMP/rt
# scans every 500 ms: its every-20-scans re-read comes each 10 s (see 4.)
ip netns exec "$TB_B" "$CAAD" --foreground --interface vb --interval 500 --runtime-dir "$RT" >"$TMP/caad.log" 2>&1 &
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

# 4. renamed away and back while steered (same ifindex). rtnetlink names
#    only the new name, vr, which is not configured: caad knows the
#    ifindex, reads again at its next scan (its every-20-scans re-read
#    comes up to 10 s later: the 2 s wait passes without the ifindex in
#    20% of runs) and its journal follows; vr back to vb, the journal
#    follows back, so exit restores vb (a journal left at vr would leave
#    vb's rx-0 steered).
in_b ip link set vb down
sleep 1 # its event's re-read done (two scans): the rename alone must tell
in_b ip link set vb name vr
in_b ip link set vr up
rename_seen() { grep -q "vb (ifindex $new_ifindex) is now vr" "$TMP/caad.log"; }
wait_for 2 rename_seen || { cat "$TMP/caad.log"; fail "the rename vb -> vr was not followed at the next scan"; }
[ "$(in_b cat /sys/class/net/vr/queues/rx-0/rps_cpus)" = 1 ] || fail "vr's rx-0 lost its steering"
alive
in_b ip link set vr down
in_b ip link set vr name vb
in_b ip link set vb up
back_seen() { grep -q "vr (ifindex $new_ifindex) is now vb" "$TMP/caad.log"; }
wait_for 3 back_seen || { cat "$TMP/caad.log"; fail "the rename vr -> vb was not followed"; }
flow 3
wait_for 5 steered || { cat "$TMP/caad.log"; fail "vb is not steered after its renames"; }
wait "$CLI" || true
info "renamed vb -> vr -> vb: each rename followed within a scan, steered again"

# exit: the new device gets its own original back (0) under the name it
# has now, nothing of the old one
kill -TERM "$CAAD_PID"; wait "$CAAD_PID" || fail "caad exit status $? after SIGTERM"; CAAD_PID=
[ "$(rps_b 0)" = 0 ] && [ "$(rps_b 1)" = 0 ] || fail "new vb not restored to its own originals: $(rps_b 0) $(rps_b 1)"
[ ! -e "$RT/journal" ] || fail "journal left behind"
info "SIGTERM: the new vb's originals restored"
echo "PASS: hotplug"
