#!/usr/bin/env bash
# Issue 6: "Retransmit counters across 20 forced moves of a live flow are
# reported." A live iperf3 flow in the netns/veth testbed, caad enforcing in
# the receiving namespace with a short DwellMSec. The receiving thread is
# moved between CPU 0 and 1 (taskset -p) 20 times; each time caad moves
# the processing (rx-0's RPS mask) to the new peer core. Per move: how long
# caad took to follow, and the sender's TcpRetransSegs (namespace A) and
# the receiver's TcpExtTCPOFOQueue (namespace B) in a window of WINDOW_MS
# from the move, against a window of the same length in steady state just
# before the next move. A table and a summary line (with the steal time of
# the run) go to standard output, i.e. the test log; MOVES_OUT=FILE copies
# them there too.
#
# Asserted: caad followed every move within DwellMSec + its consumer
# window + slack, the flow survived, every counter was read; and, asked for
# ntuple rules, caad found that veth takes none, said so once and never
# tried one. Not asserted:
# any retransmit or out-of-order count (a 2-vCPU VM with steal is noisy;
# the numbers are reported). Also asserted: so many changes are not all
# logged (caad_loglimit: 10 lines a minute per flow and per value).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init
command -v nstat >/dev/null || fail "nstat not installed (iproute2)"
command -v taskset >/dev/null || fail "taskset not installed (util-linux)"

MOVES=${MOVES:-20} PERIOD_MS=4000 WINDOW_MS=1500 DWELL_MS=200 INTERVAL_MS=250
# caad follows once the consumer's window (1 + 3 scans) holds the new CPU
# only: both CPUs are the consumer's until then
BOUND_MS=$(( DWELL_MS + 4 * INTERVAL_MS + 1800 ))

tb_setup "caadmv$$" 86
cat >"$TMP/caad.conf" <<EOC
[Daemon]
Interfaces=vb
IntervalMSec=$INTERVAL_MS
[Placement]
RateThreshold=500M
MinAgeMSec=300
DwellMSec=$DWELL_MS
# ntuple asked for: veth has no ntuple filters, which caad must find out,
# say once and never try
Mechanisms=kthread irq rps rfs ntuple
EOC

# the counters, absolute, without touching nstat's history
counter() { ip netns exec "$1" nstat -asz "$2" | awk -v k="$2" '$1 == k {print $2}'; }
retrans() { counter "$TB_A" TcpRetransSegs; }
ofo() { counter "$TB_B" TcpExtTCPOFOQueue; }
# steal and total jiffies of all CPUs (/proc/stat's first line)
cpu_times() { awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t}' /proc/stat; }
# rx-0's RPS mask when processing is on the peer of CPU $1 (the other CPU)
peer_mask() { if [ "$1" = 0 ]; then echo 2; else echo 1; fi; }

ip netns exec "$TB_B" "$CAAD" --foreground -c "$TMP/caad.conf" --runtime-dir "$TMP/rt" >"$TMP/caad.log" 2>&1 &
CAAD_PID=$!
wait_for 10 test -s "$TMP/rt/state.json" || { cat "$TMP/caad.log"; fail "caad did not start"; }

duration=$(( (MOVES * PERIOD_MS + 15000) / 1000 ))
ip netns exec "$TB_B" iperf3 -s -p 5201 -1 -A 1 -J >"$TMP/srv.json" 2>&1 &
srv=$!
tb_wait_listen 5201
ip netns exec "$TB_A" iperf3 -c "$TB_DST" -p 5201 -t "$duration" -J >"$TMP/cli.json" 2>&1 &
cli=$!

cpu=1
wait_for 8 rps_is 0 "$(peer_mask $cpu)" ||
	{ cat "$TMP/caad.log"; fail "caad did not steer the flow before the moves (rx-0 rps_cpus $(rps_b 0))"; }
sleep 1
read -r steal0 total0 < <(cpu_times)

rows=() follow=() bad=0
sum_rm=0 sum_rs=0 sum_om=0 sum_os=0
for i in $(seq 1 "$MOVES"); do
	from=$cpu
	cpu=$(( 1 - cpu ))
	want=$(peer_mask $cpu)
	r0=$(retrans) o0=$(ofo)
	t0=$(now_ms)
	taskset -a -p -c "$cpu" "$srv" >/dev/null || fail "move $i: taskset failed (iperf3 gone?)"
	# follow: poll rx-0's mask until it is the new peer's
	t_follow=-1
	while [ "$(( $(now_ms) - t0 ))" -lt "$WINDOW_MS" ] || [ "$t_follow" -lt 0 ]; do
		if [ "$t_follow" -lt 0 ] && rps_is 0 "$want"; then t_follow=$(( $(now_ms) - t0 )); fi
		[ "$(( $(now_ms) - t0 ))" -lt $(( BOUND_MS + 2000 )) ] || break
		sleep 0.05
	done
	# the move's window: WINDOW_MS from the move (later if following took longer)
	now=$(( $(now_ms) - t0 ))
	[ "$now" -ge "$WINDOW_MS" ] || sleep "$(awk -v ms=$(( WINDOW_MS - now )) 'BEGIN {print ms / 1000}')"
	r1=$(retrans) o1=$(ofo)
	t1=$(( $(now_ms) - t0 ))
	# steady state: the last WINDOW_MS before the next move
	now=$(( $(now_ms) - t0 ))
	[ "$now" -ge $(( PERIOD_MS - WINDOW_MS )) ] ||
		sleep "$(awk -v ms=$(( PERIOD_MS - WINDOW_MS - now )) 'BEGIN {print ms / 1000}')"
	r2=$(retrans) o2=$(ofo)
	t2=$(now_ms)
	now=$(( t2 - t0 ))
	[ "$now" -ge "$PERIOD_MS" ] || sleep "$(awk -v ms=$(( PERIOD_MS - now )) 'BEGIN {print ms / 1000}')"
	r3=$(retrans) o3=$(ofo)
	t3=$(( $(now_ms) - t2 ))
	for v in "$r0" "$r1" "$r2" "$r3" "$o0" "$o1" "$o2" "$o3"; do
		[[ "$v" =~ ^[0-9]+$ ]] || fail "move $i: a counter could not be read ('$v')"
	done
	rm_=$(( r1 - r0 )) rs=$(( r3 - r2 )) om=$(( o1 - o0 )) os=$(( o3 - o2 ))
	sum_rm=$(( sum_rm + rm_ )) sum_rs=$(( sum_rs + rs )) sum_om=$(( sum_om + om )) sum_os=$(( sum_os + os ))
	follow+=("$t_follow")
	if [ "$t_follow" -lt 0 ] || [ "$t_follow" -gt "$BOUND_MS" ]; then bad=$(( bad + 1 )); fi
	rows+=("$(printf '%4d  %d -> %d  %9s  %6d  %9d  %6d  %9d  %5d/%d' "$i" "$from" "$cpu" \
		"$([ "$t_follow" -ge 0 ] && echo "$t_follow" || echo never)" "$rm_" "$rs" "$om" "$os" "$t1" "$t3")")
done
read -r steal1 total1 < <(cpu_times)

wait "$cli" || fail "iperf3 client failed: $(tail -c 500 "$TMP/cli.json")"
wait "$srv" || true
gbps=$(jq -r '.end.sum_received.bits_per_second / 1e9 | . * 100 | round / 100' "$TMP/cli.json")
steal=$(awk -v s=$(( steal1 - steal0 )) -v t=$(( total1 - total0 )) 'BEGIN {printf "%.1f", t ? 100 * s / t : 0}')
sorted=$(printf '%s\n' "${follow[@]}" | sort -n)
median=$(sed -n "$(( (MOVES + 1) / 2 ))p" <<<"$sorted")
max=$(tail -n 1 <<<"$sorted")

{
	echo "# moves: receiver moved between CPU 0 and 1 every ${PERIOD_MS} ms; caad DwellMSec=$DWELL_MS IntervalMSec=$INTERVAL_MS"
	echo "# counters over ${WINDOW_MS} ms from each move vs the last ${WINDOW_MS} ms before the next (steady)"
	echo "# move  cpu     follow_ms  retrans  retrans_st  ofo_q  ofo_q_st  win_ms"
	printf '%s\n' "${rows[@]}"
	printf 'moves: %d forced moves of a %s Gbit/s flow; caad followed %d/%d within %d ms (median %s ms, max %s ms); ' \
		"$MOVES" "$gbps" $(( MOVES - bad )) "$MOVES" "$BOUND_MS" "$median" "$max"
	printf 'TcpRetransSegs %d around moves vs %d steady; TcpExtTCPOFOQueue %d around moves vs %d steady; steal %s%%\n' \
		"$sum_rm" "$sum_rs" "$sum_om" "$sum_os" "$steal"
} | tee "$TMP/moves.txt"
[ -z "${MOVES_OUT:-}" ] || cp "$TMP/moves.txt" "$MOVES_OUT"

kill -TERM "$CAAD_PID"
rc=0; wait "$CAAD_PID" || rc=$?
CAAD_PID=
[ "$rc" = 0 ] || { tail -n 30 "$TMP/caad.log"; fail "caad exited with $rc"; }
[ "$(rps_b 0)" = 0 ] || fail "rx-0 rps_cpus is $(rps_b 0) after exit, was 0"
[ ! -e "$TMP/rt/journal" ] || fail "journal left behind"

[ "$(grep -c 'vb: its NIC takes no ntuple rules' "$TMP/caad.log")" = 1 ] ||
	fail "caad did not say exactly once that vb takes no ntuple rules"
! grep -q "ntuple rule.*insert" "$TMP/caad.log" || fail "caad tried an ntuple rule on veth"
[ "$bad" = 0 ] || { tail -n 40 "$TMP/caad.log"; fail "caad did not follow $bad of $MOVES moves within $BOUND_MS ms"; }
# Every move changed rx-0 and the flow's decision (followed, above), more
# than 10 times a minute: 10 lines of each a minute, the 10th saying so,
# the rest at debug level; the first line of the next minute tells of them.
if [ "$MOVES" -ge 20 ]; then
	burst='changed 10 times in 60 s: its next changes within that time are logged at debug level only'
	told='more changes of it before this one were logged at debug level only'
	n_rps=$(grep -c '^vb rx-0: RPS CPUs .* -> ' "$TMP/caad.log" || true)
	[ "$n_rps" -lt $(( MOVES + 1 )) ] || fail "all $n_rps changes of rx-0 were logged at info level: no limit"
	# one grep each: grep -q ending a pipe under pipefail can fail the
	# grep before it (SIGPIPE)
	for what in '^vb rx-0: RPS CPUs .* -> ' '^Heavy flow .* -> CPU '; do
		grep -qE "$what.*\[it $burst\]" "$TMP/caad.log" || fail "no line matching '$what' said it changes often"
		grep -qE "$what.*\[[0-9]+ $told\]" "$TMP/caad.log" ||
			fail "no line matching '$what' told of the changes logged at debug level"
	done
fi
awk -v g="$gbps" 'BEGIN {exit !(g > 0)}' || fail "the flow carried nothing"
echo "PASS: moves"
