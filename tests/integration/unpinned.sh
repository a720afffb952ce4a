#!/usr/bin/env bash
# Readers that are not pinned to one CPU (caad.conf(5), "Which flow is
# tried"), in the netns/veth testbed (2 CPUs):
#  1. a trial of an iperf3 flow whose reader may run on CPUs 0-1 says so
#     (its log line, GetTrials' "pinned": false); when the reader moves
#     (this script moves it to the other CPU, twice) the trial follows it
#     instead of ending: it finishes, counts the moves ("consumer_moves"),
#     and stores its verdict for unpinned readers ("pinned": false);
#  2. a flow of the same application whose reader is pinned to one CPU
#     does not take that verdict: a trial of its own starts, for a pinned
#     reader, and ends when someone pins the reader to another CPU;
#  3. a later flow with an unpinned reader takes the unpinned verdict
#     without a trial;
#  4. a trial ends when another thread of the reader takes over reading
#     its flow (the CPU time it counts is the first thread's).
# The trial is short (3 rounds of 1 s turns): what wins is not asked here.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init
command -v taskset >/dev/null || fail "taskset not installed (util-linux)"

tb_setup "caadup$$" 88
cat >"$TMP/caad.conf" <<EOC
[Daemon]
Interfaces=vb
Placement=measure
IntervalMSec=100
[Placement]
RateThreshold=500M
MinAgeMSec=300
DwellMSec=500
[Trials]
Rounds=3
TurnMSec=1000
SettleMSec=300
SteadyMSec=2000
EOC

st=$TMP/rt/state.json
tj=$TMP/rt/trials.json
# the CPU the reader of the heavy flow to local port $1 (not iperf3's control
# connection) read on at caad's last scan
reader_cpu() {
	jq -r --arg p ":$1 <-" '[.flows[] | select((.tuple | contains($p)) and .heavy and .consumer_cpu >= 0)] |
		max_by(.rate_bps) | .consumer_cpu // empty' "$st"
}
# move_reader PID PORT: pin every thread of PID to the CPU its flow's reader
# is not on, for 1.5 s, then let it run on both again
move_reader() {
	local cpu other
	cpu=$(reader_cpu "$2")
	[ -n "$cpu" ] || fail "no reader CPU for port $2: $(jq -c .flows "$st")"
	other=$(( 1 - cpu ))
	taskset -a -pc "$other" "$1" >/dev/null
	sleep 1.5
	taskset -a -pc 0-1 "$1" >/dev/null
	info "reader of :$2 moved from CPU $cpu to CPU $other and unpinned again"
}
# the iperf3 process in the receiver's namespace that listens on port $1
server_pid() { in_b ss -Hltnp "sport = :$1" | sed -nE 's/.*pid=([0-9]+).*/\1/p' | head -n1; }

# --- 1. a trial that follows its unpinned reader --------------------------------
log=$TMP/caad-unpinned.log
start_caad unpinned "$TMP/state"
in_b taskset -c 0-1 iperf3 -s -p 5201 -1 -J >/dev/null 2>&1 &
tb_wait_listen 5201
srv=$(server_pid 5201)
[ -n "$srv" ] || fail "no iperf3 server pid"
in_a iperf3 -c "$TB_DST" -p 5201 -t 40 -A 0 -J >"$TMP/cli.json" 2>&1 &
cli=$!
wait_for 15 grep -q "^Trial 1:" "$log" || { cat "$log"; fail "no trial started"; }
grep -m1 "^Trial 1:" "$log" | sed 's/^/# /'
grep -qE "^Trial 1: .*consumer on CPU [0-9], not pinned: followed where it moves\)" "$log" ||
	fail "the trial does not say its reader is not pinned: $(grep -m1 '^Trial 1:' "$log")"
# (trials.json is written at the end of the scan that logged it)
wait_for 3 jq -e '.trials[0].pinned == false' "$tj" >/dev/null || { jq . "$tj"; fail "GetTrials: not \"pinned\": false"; }
sleep 1
move_reader "$srv" 5201
sleep 1
move_reader "$srv" 5201
wait_for 30 grep -q "^Trial 1 .* done: \|^Trial 1 .* aborted: " "$log" || { cat "$log"; fail "the trial did not end"; }
grep "^Trial 1" "$log" | sed 's/^/# /'
grep -q "^Trial 1 .* aborted: " "$log" && fail "the trial was aborted: $(grep '^Trial 1 .* aborted' "$log")"
grep -q "^Trial 1 (.*, consumer not pinned) done: " "$log" || fail "the verdict is not said to be for unpinned readers"
wait_for 3 grep -qE "^Trial 1: its consumer changed CPUs [1-9][0-9]* times; each turn followed it$" "$log" ||
	fail "the trial did not log its reader's moves"
wait_for 3 jq -e '.trials[0] | .state == "done" and .pinned == false and .consumer_moves >= 1' "$tj" >/dev/null ||
	{ jq '.trials[0] | del(.samples)' "$tj"; fail "GetTrials does not report the moves"; }
info "trial 1: $(jq -r '.trials[0] | "verdict \(.verdict), the reader moved \(.consumer_moves) times"' "$tj")"
stored() {
	jq -e '.verdicts | length == 1 and .[0].comm == "iperf3" and .[0].pinned == false' "$TMP/state/verdicts.json" \
		>/dev/null 2>&1
}
wait_for 3 stored || { cat "$TMP/state/verdicts.json"; fail "the verdict is not stored for unpinned readers"; }
VERDICT=$(jq -r '.verdicts[0].relation' "$TMP/state/verdicts.json")
for p in $(ip netns pids "$TB_A"); do kill -TERM "$p" 2>/dev/null || true; done
wait "$cli" 2>/dev/null || true

# --- 2. a pinned reader of the same application: a trial of its own -------------
in_b iperf3 -s -p 5202 -1 -A 1 -J >/dev/null 2>&1 &
tb_wait_listen 5202
srv=$(server_pid 5202)
in_a iperf3 -c "$TB_DST" -p 5202 -t 30 -A 0 -J >/dev/null 2>&1 &
cli=$!
wait_for 15 grep -q "^Trial 2:" "$log" || { cat "$log"; fail "no trial for the pinned reader"; }
grep -m1 "^Trial 2:" "$log" | sed 's/^/# /'
grep -qE "^Trial 2: .*:5202 .*consumer on CPU 1, pinned to it\)" "$log" ||
	fail "trial 2 is not for a pinned reader: $(grep -m1 '^Trial 2:' "$log")"
grep -q ":5202 .*takes the verdict" "$log" && fail "the pinned reader took the unpinned reader's verdict"
taskset -a -pc 0 "$srv" >/dev/null
wait_for 5 grep -q "^Trial 2 .* aborted: the consumer, pinned to CPU 1, moved to CPU 0; the prior stands$" "$log" ||
	{ grep "^Trial 2" "$log"; fail "trial 2 did not end when its pinned reader was moved"; }
for p in $(ip netns pids "$TB_A"); do kill -TERM "$p" 2>/dev/null || true; done
wait "$cli" 2>/dev/null || true

# --- 3. a later unpinned reader takes the unpinned verdict ------------------------
in_b taskset -c 0-1 iperf3 -s -p 5203 -1 -J >/dev/null 2>&1 &
tb_wait_listen 5203
in_a iperf3 -c "$TB_DST" -p 5203 -t 4 -A 0 -J >/dev/null 2>&1 || fail "iperf3 failed"
grep -qE ":5203 .*\(iperf3 on vb, consumer not pinned\) takes the verdict of trial 1 without a trial of its own: $VERDICT" \
	"$log" || { cat "$log"; fail "the unpinned reader did not take the unpinned verdict"; }
# --- 4. another thread takes over the reading mid-trial: the trial ends ---------
# (the CPU time it counts is the first thread's: the second one's would go
# uncounted)
cat >"$TMP/handoff.py" <<'EOF'
import os, socket, sys, threading, time
if sys.argv[1] == "client":
    s = socket.create_connection((sys.argv[2], int(sys.argv[3])))
    buf, end = bytes(1 << 20), time.monotonic() + float(sys.argv[4])
    while time.monotonic() < end:
        s.sendall(buf)
    sys.exit(0)
# server ADDR PORT FLAG: one thread reads until FLAG exists, then another one
ls = socket.socket(socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[2], int(sys.argv[3])))
ls.listen(1)
c, _ = ls.accept()
buf, turn = bytearray(1 << 20), threading.Event()
def first():
    while not os.path.exists(sys.argv[4]):
        if c.recv_into(buf) == 0:
            break
    turn.set()
def second():
    turn.wait()
    while c.recv_into(buf):
        pass
ts = [threading.Thread(target=first), threading.Thread(target=second)]
for t in ts:
    t.start()
for t in ts:
    t.join()
EOF
in_b taskset -c 1 python3 "$TMP/handoff.py" server "$TB_DST" 5204 "$TMP/handoff" >"$TMP/handoff-srv.log" 2>&1 &
tb_wait_listen 5204
in_a taskset -c 0 python3 "$TMP/handoff.py" client "$TB_DST" 5204 30 >"$TMP/handoff-cli.log" 2>&1 &
cli=$!
wait_for 15 grep -qE "^Trial [0-9]+: .*:5204 .*python3 on vb" "$log" ||
	{ cat "$log" "$TMP/handoff-srv.log" "$TMP/handoff-cli.log"; fail "no trial of the python3 flow"; }
n=$(grep -m1 -E "^Trial [0-9]+: .*:5204 " "$log" | sed -E 's/^Trial ([0-9]+):.*/\1/')
touch "$TMP/handoff"
wait_for 5 grep -qE "^Trial $n .* aborted: another thread reads the flow now \(TID [0-9]+, was [0-9]+\); the prior stands$" \
	"$log" || { grep "^Trial $n" "$log"; fail "trial $n went on when another thread took over the reading"; }
grep -E "^Trial $n .* aborted" "$log" | sed 's/^/# /'
for p in $(ip netns pids "$TB_A"); do kill -TERM "$p" 2>/dev/null || true; done
wait "$cli" 2>/dev/null || true
info "another thread took over the reading: trial $n ended"

stop_caad unpinned
echo "PASS: unpinned"
