#!/usr/bin/env bash
# Threaded NAPI on veth: with GRO and "threaded" on (and TSO off on the
# sender's side), the receiving veth's
# packets are polled by kthreads "napi/<dev>-<id>". The device has a name of
# 14 characters, so that its kthreads' names are longer than the 15 that
# a comm was cut at before Linux 5.17 (/proc/PID/comm shows a kthread's
# whole name since: a NIC named enp3s0 at NAPI id 8193 makes 16). caad steers the heavy
# flow's NAPI kthread (found by the flow's sk_napi_id) to the peer core of
# the receiver's CPU, journals its affinity as "kthread:PID:COMM", and puts
# it back on SIGTERM, and after SIGKILL at its next start.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init

tb_setup "caadn$$" 82
IF=vbthreadednapi
in_b ip link set vb down
in_b ip link set vb name "$IF"
in_b ip link set "$IF" up
in_b ethtool -K "$IF" gro on >/dev/null
# veth hands TSO packets of local senders straight to the backlog; without
# TSO on the sender's side they go through the receiver's NAPI (veth_xmit)
in_a ethtool -K va tso off >/dev/null
in_b sh -c "echo 1 >/sys/class/net/$IF/threaded" || fail "cannot enable threaded NAPI on veth"
RT=$TMP/rt

# (from /proc/PID/comm: ps may show 15 characters of it)
kthreads() { grep -l "^napi/$IF-[0-9]*\$" /proc/[0-9]*/comm 2>/dev/null | cut -d/ -f3; }
affinity() { taskset -pc "$1" | sed 's/.*: //'; }
[ -n "$(kthreads)" ] || fail "no napi/$IF-* kthreads after enabling threaded NAPI"
declare -A ORIG
for p in $(kthreads); do ORIG[$p]=$(affinity "$p"); done
info "NAPI kthreads: $(for p in "${!ORIG[@]}"; do echo -n "$p(${ORIG[$p]}) "; done)"

start_caad() {
	rm -f "$RT/state.json" # one a SIGKILL left would say "started" at once
	ip netns exec "$TB_B" "$CAAD" --foreground --interface "$IF" --runtime-dir "$RT" >>"$TMP/caad.log" 2>&1 &
	CAAD_PID=$!
	wait_for 10 test -s "$RT/state.json" || { cat "$TMP/caad.log"; fail "caad did not start"; }
}
steered_kthread() {
	for p in $(kthreads); do [ "$(affinity "$p")" = 0 ] && { echo "$p"; return 0; }; done
	return 1
}
flow() {
	in_b iperf3 -s -1 -A 1 >/dev/null 2>&1 &
	tb_wait_listen 5201
	in_a iperf3 -c "$TB_DST" -t "$1" >/dev/null 2>&1 &
	CLI=$!
}
originals_back() {
	for p in "${!ORIG[@]}"; do [ "$(affinity "$p")" = "${ORIG[$p]}" ] || return 1; done
}

# 1. steered, then restored on SIGTERM
start_caad
flow 6
wait_for 5 steered_kthread >/dev/null ||
	{ cat "$TMP/caad.log"; jq -c '.flows' "$RT/state.json"; in_b "$CAAD" --print-topology -i "$IF" | tail -4; fail "no NAPI kthread moved to CPU 0"; }
jq -r '.flows[] | select(.heavy) | "# heavy flow: NAPI \(.napi_id), processed by kthread \(.proc_kthread) on CPU \(.proc_cpu)"' "$RT/state.json"
K=$(steered_kthread)
info "kthread $K ($(cat /proc/$K/comm)) -> CPU $(affinity "$K")"
# the observer saw the kthread at work (it asks only where caad's
# interfaces have a threaded NAPI)
heavy_kthread_seen() {
	local pk
	pk=$(jq -r '[.flows[] | select(.heavy) | .proc_kthread][0] // empty' "$RT/state.json")
	[ -n "$pk" ] && kthreads | grep -qx "$pk"
}
wait_for 3 heavy_kthread_seen ||
	fail "the heavy flow's proc_kthread is none of the napi/$IF kthreads ($(kthreads | tr '\n' ' ')): $(jq -c '[.flows[] | select(.heavy)]' "$RT/state.json")"
grep -q "^kthread:$K:napi/$IF-" "$RT/journal" || fail "the journal does not record kthread $K"
grep -q "NAPI kthread $K" "$TMP/caad.log" || fail "the kthread move was not logged"
# the queue is steered by its kthread: RPS stays off
[ "$(rps_b 0)" = 0 ] && [ "$(rps_b 1)" = 0 ] || fail "RPS turned on beside a steered kthread"
wait "$CLI" || true
kill -TERM "$CAAD_PID"; wait "$CAAD_PID" || fail "caad exit status $? after SIGTERM"; CAAD_PID=
originals_back || fail "kthread affinity not restored after SIGTERM: $(for p in "${!ORIG[@]}"; do echo -n "$p:$(affinity "$p") "; done)"
info "SIGTERM: kthread affinities back to the originals"

# 2. SIGKILL leaves it moved; the next start restores it before anything
# else (no flow then: nothing moves it again), as does caad --restore
kill_steered() {
	start_caad
	flow 4
	wait_for 5 steered_kthread >/dev/null || { cat "$TMP/caad.log"; fail "not steered before SIGKILL"; }
	kill -KILL "$CAAD_PID"; wait "$CAAD_PID" 2>/dev/null || true; CAAD_PID=
	steered_kthread >/dev/null || fail "expected the kthread to stay moved after SIGKILL"
	wait "$CLI" || true
}
kill_steered
start_caad
originals_back || fail "kthread affinity not restored from the journal at the next start"
grep -q "^kthread:" "$RT/journal" 2>/dev/null && fail "the next start kept the kthread in its journal"
kill -TERM "$CAAD_PID"; wait "$CAAD_PID" || fail "caad exit status $? after SIGTERM"; CAAD_PID=
info "SIGKILL then a start: kthread affinities back to the originals"
kill_steered
"$CAAD" --restore --runtime-dir "$RT" >"$TMP/restore.log" 2>&1 || { cat "$TMP/restore.log"; fail "caad --restore failed"; }
originals_back || fail "kthread affinity not restored from the journal"
[ ! -e "$RT/journal" ] || fail "journal left after --restore"
info "SIGKILL then --restore: kthread affinities back to the originals"
echo "PASS: napi"
