#!/usr/bin/env bash
# Issue 5's acceptance test: Placement=measure in the netns/veth testbed.
#  1. caad runs a trial on an iperf3 flow (consumer pinned to CPU 1) and
#     reports per-placement numbers (GetTrials' JSON via state dir + log);
#  2. retransmits during the trial are no higher than in steady state
#     beyond noise (the sender's TcpRetransSegs, per second);
#  3. the verdict agrees with an independent interleaved A/B measurement
#     made here with caad stopped (RPS masks set by this script), of
#     goodput and of bytes per CPU-second, as caad weighs both. Which
#     placement wins on this machine is not assumed. caad switched -> the
#     A/B must show the alternative ahead in goodput, or in bytes per
#     CPU-second at no more than caad's margin less goodput. caad kept the
#     prior (its rule keeps it under noise, and when a goodput win costs
#     more CPU per byte than EfficiencyLossPercent= allows) -> the A/B must
#     not show the alternative ahead in every round by 2x caad's margin at
#     a cost per byte clearly (by the margin) inside that bound. Both are
#     noisy measurements of the same thing, so a disagreement must
#     replicate: it fails only when a fresh trial (new state, new flow)
#     disagrees again with a fresh A/B, for $ATTEMPTS attempts in all.
#     ConfidencePercent= keeps the prior more often where the turns are
#     noisy (on 2 vCPUs it kept it once at a median of 1.23x where the A/B
#     read 1.39x in 6 of 6): four attempts, not three;
#  4. a second flow of the same application reuses the verdict without a
#     trial, also after a restart (verdicts in --state-dir); one decided
#     while the store could not be read is added to it at a reload;
#  5. no trial starts on a flow whose queue someone else holds (caad backed
#     off from it), until a reload ends the back-off.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init
command -v nstat >/dev/null || fail "nstat not installed (iproute2)"

# Turns measure 2 s, near the A/B's 3 s runs: with 1 s a turn read up to
# 1.5x apart from the next on a 2-vCPU VM, where 3 s runs read 1.1x. They
# settle 2 s, as caad's default: with 500 ms the turns still saw the move
# before (caad.conf(5), SettleMSec=). Rounds as caad's default.
ROUNDS=10 TURN_MS=4000 SETTLE_MS=2000 STEADY_MS=6000 MARGIN=3 EFF_LOSS=20 CONFIDENCE=95 ATTEMPTS=4
tb_setup "caadtr$$" 78
cat >"$TMP/caad.conf" <<EOC
[Daemon]
Interfaces=vb
Placement=measure
[Placement]
RateThreshold=500M
MinAgeMSec=300
DwellMSec=500
[Trials]
Rounds=$ROUNDS
TurnMSec=$TURN_MS
SettleMSec=$SETTLE_MS
SteadyMSec=$STEADY_MS
MarginPercent=$MARGIN
WinPercent=80
EfficiencyLossPercent=$EFF_LOSS
ConfidencePercent=$CONFIDENCE
# two candidates, the A/B's two CPUs: the host's own steering is
# host-steering.sh's (a third candidate would make each attempt 50% longer)
TryHostSteering=no
EOC

retrans_a() { in_a nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ {print $2}'; }

# --- 1. the trial (attempt $1, state in $TMP/state-$1) ------------------------
# Leaves caad running; sets VERDICT, PRIOR_CPU, ALT_CPU, ALT_REL and, for
# the first attempt, checks the retransmits (2.).
run_trial() {
	local n=$1 log=$TMP/caad-trial-$1.log state=$TMP/state-$1
	local cli r0 r1 r2 r3 t0 t1 t2 t3 steady_ms trial_ms trial_s verdicts tj rel
	# attempt 1: a store that cannot be read (a directory in its place)
	if [ "$n" = 1 ]; then mkdir -p "$state/verdicts.json"; fi
	start_caad "trial-$n" "$state"
	in_b iperf3 -s -p 5201 -1 -A 1 -J >"$TMP/srv-$n.json" 2>&1 &
	tb_wait_listen 5201
	# + 30 s: a turn starts at the first scan after the last one ended
	# (up to 250 ms later, more where a loaded machine stretches the scan
	# period), and the flow must outlast the last turn
	trial_s=$(( (ROUNDS * 2 * TURN_MS + STEADY_MS) / 1000 + 30 ))
	in_a iperf3 -c "$TB_DST" -p 5201 -t "$trial_s" -A 0 -J >"$TMP/cli-$n.json" 2>&1 &
	cli=$!

	# steady state: the prior in place, before the trial starts
	sleep 1.5
	r0=$(retrans_a); t0=$(now_ms)
	sleep $(( STEADY_MS / 1000 - 3 ))
	r1=$(retrans_a); t1=$(now_ms)
	steady_ms=$(( t1 - t0 ))
	grep -q "^Trial 1:" "$log" && fail "the trial started before SteadyMSec: $(cat "$log")"

	wait_for 10 grep -q "^Trial 1:" "$log" || { cat "$log"; fail "no trial started"; }
	r2=$(retrans_a); t2=$(now_ms)
	# asked once a second: the turns are being measured (wait_every)
	wait_every 1 $(( ROUNDS * 2 * TURN_MS / 1000 + 10 )) grep -q "^Trial 1 .* done: " "$log" ||
		{ cat "$log"; fail "the trial did not finish"; }
	r3=$(retrans_a); t3=$(now_ms)
	trial_ms=$(( t3 - t2 ))
	wait "$cli" || fail "iperf3 client failed: $(cat "$TMP/cli-$n.json")"
	grep "^Trial 1" "$log" | sed "s/^/# attempt $n: /"

	verdicts=$state/verdicts.json
	# the verdict lived in memory; once the store can be read, a reload
	# adds it there (it was lost before: the reload read the store alone)
	if [ "$n" = 1 ]; then
		grep -q "$verdicts could not be read: the verdict is not stored there" "$log" ||
			{ cat "$log"; fail "a verdict was stored where the store could not be read"; }
		rmdir "$verdicts"
		kill -HUP "$CAAD_PID"
		wait_for 5 grep -q "$verdicts can be read again: 1 verdict of this run added to it" "$log" ||
			{ cat "$log"; fail "the verdict kept in memory was not stored after a reload"; }
		[ -s "$verdicts" ] || { cat "$log"; fail "the reload said the verdict was added, but $verdicts is empty"; }
	fi
	[ -s "$verdicts" ] || fail "no verdicts file"
	jq -e . "$verdicts" >/dev/null || fail "verdicts file is not JSON: $(cat "$verdicts")"
	VERDICT=$(jq -r '.verdicts[] | select(.iface == "vb" and .comm == "iperf3") | .relation' "$verdicts")
	[ -n "$VERDICT" ] || fail "no verdict for iperf3 on vb: $(cat "$verdicts")"
	info "attempt $n: verdict $VERDICT"
	# per-placement numbers were reported, for both candidates
	for rel in peer-core-same-llc same-core; do
		grep -qE "^Trial 1 candidate [0-9], CPU [0-9]+ \($rel\): median [0-9.]+ Gbit/s, [0-9.]+ GB per CPU-second" \
			"$log" || fail "no numbers for $rel in the log"
	done

	# ... and in RUNTIME_DIR/trials.json (what D-Bus GetTrials answers)
	tj=$TMP/rt/trials.json
	jq -e --arg v "$VERDICT" '.placement == "measure" and (.trials | length) == 1 and .trials[0].state == "done"
		and .trials[0].verdict == $v and (.trials[0].candidates | length) == 2
		and ([.trials[0].candidates[] | select(.goodput_bps > 0 and .pairs == '"$ROUNDS"')] | length) == 2
		and .trials[0].confidence_pct == '"$CONFIDENCE"' and .trials[0].candidates[1].goodput_low > 0
		and (.trials[0].samples | length) == '"$(( ROUNDS * 2 ))"'
		and (.store.verdicts | length) == 1' "$tj" >/dev/null || { jq . "$tj"; fail "trials.json does not report the trial"; }
	# caad's own rounds, as the A/B below prints its own
	jq -r '.trials[0] as $t | $t.samples | group_by(.round)[] |
		"caad round \(.[0].round + 1): " + (map("CPU \($t.candidates[.candidate].cpu) \(.bytes * 8 / .ns * 100 | floor / 100) Gbit/s") | join(", "))' \
		"$tj" | sed 's/^/# /'

	# the candidates as caad logged them
	PRIOR_CPU=$(sed -nE 's/^Trial 1 candidate 0, CPU ([0-9]+) .*/\1/p' "$log")
	ALT_CPU=$(sed -nE 's/^Trial 1 candidate 1, CPU ([0-9]+) .*/\1/p' "$log")
	ALT_REL=$(sed -nE 's/^Trial 1 candidate 1, CPU [0-9]+ \(([a-z-]+)\).*/\1/p' "$log")
	[ -n "$PRIOR_CPU" ] && [ -n "$ALT_CPU" ] && [ -n "$ALT_REL" ] || fail "candidates not found in the log"

	# --- 2. retransmits: trial vs steady state (first attempt) -------------
	[ "$n" = 1 ] || return 0
	local steady_rate=$(( (r1 - r0) * 1000 / (steady_ms > 0 ? steady_ms : 1) ))
	local trial_rate=$(( (r3 - r2) * 1000 / (trial_ms > 0 ? trial_ms : 1) ))
	info "retransmits per second: steady $steady_rate ($((r1 - r0)) in $steady_ms ms), trial $trial_rate ($((r3 - r2)) in $trial_ms ms)"
	# noise: three times the steady rate, and at least 20/s (a handful at each of the trial's moves)
	local limit=$(( steady_rate * 3 > steady_rate + 20 ? steady_rate * 3 : steady_rate + 20 ))
	[ "$trial_rate" -le "$limit" ] || fail "retransmits during the trial ($trial_rate/s) above the steady state's beyond noise (limit $limit/s)"
}

# --- 3. the independent A/B, caad stopped --------------------------------------
# caad weighs goodput and bytes per CPU-second (caad.conf(5), "The
# decision"): a goodput win that costs more than EFF_LOSS percent of the
# prior's bytes per CPU-second keeps the prior. So the A/B measures both,
# without caad's BPF: the
# receiving side's CPU time is the busy time of the server's CPU (1: the
# reader, and what it processes there) plus the softirq time of the others
# (processing steered there), from /proc/stat.
mask_of() { printf '%x' $(( 1 << $1 )); }
set_rps() { for q in 0 1; do in_b sh -c "echo $1 > /sys/class/net/vb/queues/rx-$q/rps_cpus"; done; }
rx_cpu_ticks() {
	awk '/^cpu[0-9]/ { t += ($1 == "cpu1") ? $2 + $3 + $4 + $7 + $8 : $8 } END { print t }' /proc/stat
}
# ab_run CPU: "goodput_bps bytes_per_cpu_second" of a 3 s flow processed on CPU
ab_run() {
	local t0 t1 json
	set_rps "$(mask_of "$1")"
	in_b iperf3 -s -p 5203 -1 -A 1 -J >/dev/null 2>&1 &
	local srv=$!
	tb_wait_listen 5203
	t0=$(rx_cpu_ticks)
	json=$(in_a iperf3 -c "$TB_DST" -p 5203 -t 3 -A 0 -J)
	t1=$(rx_cpu_ticks)
	wait "$srv" || true
	jq -r --argjson ticks $(( t1 - t0 )) --argjson hz "$(getconf CLK_TCK)" \
		'.end.sum_received | "\(.bits_per_second) \(if $ticks > 0 then .bytes / ($ticks / $hz) else 0 end)"' <<<"$json"
}
median_of() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
# One interleaved A/B; returns 1 (with $DISAGREE set) when it contradicts caad.
ab_agrees() {
	local gr=() er=() wins=0 r pg= pe= ag= ae= median eff
	for r in $(seq 1 "$ROUNDS"); do
		pg= ag=
		if (( r % 2 )); then read -r pg pe < <(ab_run "$PRIOR_CPU"); read -r ag ae < <(ab_run "$ALT_CPU")
		else read -r ag ae < <(ab_run "$ALT_CPU"); read -r pg pe < <(ab_run "$PRIOR_CPU"); fi
		# (set -e is off here, in until's condition: a failed run must fail)
		[ -n "${pg:-}" ] && [ -n "${ag:-}" ] || fail "an A/B iperf3 run failed (round $r)"
		gr+=("$(jq -n "$ag / $pg")")
		jq -e -n "$pe > 0 and $ae > 0" >/dev/null && er+=("$(jq -n "$ae / $pe")")
		jq -e -n "$ag > $pg" >/dev/null && wins=$(( wins + 1 ))
		info "A/B round $r: prior CPU $PRIOR_CPU $(jq -n "$pg / 1e9 * 100 | floor / 100") Gbit/s" \
			"$(jq -n "$pe / 1e9 * 100 | floor / 100") GB per CPU-second," \
			"CPU $ALT_CPU $(jq -n "$ag / 1e9 * 100 | floor / 100") Gbit/s $(jq -n "$ae / 1e9 * 100 | floor / 100") GB per CPU-second"
	done
	set_rps 0
	median=$(printf '%s\n' "${gr[@]}" | median_of)
	# known when every round has it (as caad's)
	eff=$( (( ${#er[@]} == ROUNDS )) && printf '%s\n' "${er[@]}" | median_of || echo unknown)
	info "A/B: alternative/prior goodput median $median, ahead in $wins of $ROUNDS rounds;" \
		"bytes per CPU-second median $eff; caad's verdict: $VERDICT"
	if [ "$VERDICT" = "$ALT_REL" ]; then
		# caad switched, by goodput (its ratio >= 1 + MARGIN) or by
		# efficiency (its goodput ratio >= 1 still): the A/B must show the
		# alternative ahead in goodput, or ahead in bytes per CPU-second
		# at no more than MARGIN less goodput
		jq -e -n "$median >= 1" >/dev/null && return 0
		[ "$eff" != unknown ] && jq -e -n "$eff >= 1 and $median >= 1 - $MARGIN / 100" >/dev/null && return 0
		DISAGREE="caad switched to $VERDICT, but the A/B favours the prior (goodput $median, efficiency $eff)"
	else
		# caad keeps the prior unless the win is clear, consistent and out
		# of its turns' noise (ConfidencePercent=): only an A/B with the
		# alternative ahead in every round, at a cost per byte clearly
		# inside caad's bound (1 - EFF_LOSS), contradicts that
		if ! jq -e -n "$median >= 1 + 2 * $MARGIN / 100" >/dev/null || (( wins < ROUNDS )); then
			return 0
		fi
		[ "$eff" != unknown ] && ! jq -e -n "$eff >= 1 - ($EFF_LOSS - $MARGIN) / 100" >/dev/null && return 0
		DISAGREE="caad kept the prior, but the A/B shows $ALT_REL clearly ahead (goodput $median, $wins of $ROUNDS; efficiency $eff)"
	fi
	return 1
}

# --- 4a. a second flow of the same application, same run ---------------------
second_flow() {
	local log=$TMP/caad-trial-1.log
	in_b iperf3 -s -p 5202 -1 -A 1 -J >"$TMP/srv-second.json" 2>&1 &
	tb_wait_listen 5202
	in_a iperf3 -c "$TB_DST" -p 5202 -t $(( STEADY_MS / 1000 + 4 )) -A 0 -J >"$TMP/cli-second.json" 2>&1 ||
		fail "second iperf3 failed"
	grep -q "^Trial 2:" "$log" && fail "a second trial ran for the same application"
	grep -qE "takes the verdict of trial 1 without a trial of its own: $VERDICT" "$log" ||
		{ cat "$log"; fail "the second flow did not reuse the verdict"; }
}

n=1
run_trial 1
second_flow
stop_caad trial-1
# A disagreement must replicate: one trial or one A/B on a busy 2-vCPU
# machine can swing by a factor of 4 between rounds.
until ab_agrees; do
	(( n < ATTEMPTS )) || fail "$DISAGREE (in each of $ATTEMPTS attempts)"
	n=$(( n + 1 ))
	info "$DISAGREE: a fresh trial, attempt $n of $ATTEMPTS"
	run_trial "$n"
	stop_caad "trial-$n"
done

# --- 4b. after a restart: the verdict is loaded and reused -------------------
state=$TMP/state-$n
start_caad restart "$state"
wait_for 5 grep -q "1 verdict of earlier trials loaded from $state/verdicts.json" "$TMP/caad-restart.log" ||
	{ cat "$TMP/caad-restart.log"; fail "the verdict was not loaded at start"; }
in_b iperf3 -s -p 5204 -1 -A 1 -J >/dev/null 2>&1 &
tb_wait_listen 5204
in_a iperf3 -c "$TB_DST" -p 5204 -t $(( STEADY_MS / 1000 + 3 )) -A 0 -J >/dev/null 2>&1 || fail "third iperf3 failed"
grep -q "^Trial" "$TMP/caad-restart.log" && fail "a trial ran after the restart: $(grep '^Trial' "$TMP/caad-restart.log")"
grep -q "takes the verdict of trial 1 without a trial of its own: $VERDICT" "$TMP/caad-restart.log" ||
	{ cat "$TMP/caad-restart.log"; fail "the verdict was not reused after the restart"; }
stop_caad restart

# --- 5. a queue someone else holds is not tried ---------------------------------
# Someone else rewrites the flow's RPS masks after caad steered them: caad
# backs off (BackOffSec=0: until a reload), and a trial, whose first turn
# could not be placed, does not start while it does, not even after
# SteadyMSec=. A reload ends the back-off: then the trial starts.
start_caad held "$TMP/state-held"
log=$TMP/caad-held.log
in_b iperf3 -s -p 5205 -1 -A 1 -J >/dev/null 2>&1 &
tb_wait_listen 5205
in_a iperf3 -c "$TB_DST" -p 5205 -t $(( STEADY_MS / 1000 + 40 )) -A 0 -J >/dev/null 2>&1 &
cli=$!
wait_for 5 grep -q "^vb rx-[01]: RPS CPUs .* -> " "$log" || { cat "$log"; fail "the flow was not steered"; }
set_rps 3
wait_for 3 grep -q "someone else" "$log" || { cat "$log"; fail "someone else's RPS masks: no back-off"; }
sleep $(( STEADY_MS / 1000 + 2 ))
grep -q "^Trial" "$log" && { cat "$log"; fail "a trial started on a queue someone else holds"; }
info "queue held by someone else: no trial $(( STEADY_MS / 1000 + 2 )) s on"
kill -HUP "$CAAD_PID"
wait_for 8 grep -q "^Trial 1:" "$log" || { cat "$log"; fail "no trial after the reload ended the back-off"; }
info "after the reload: $(grep -m1 '^Trial 1:' "$log")"
# a reload that changes nothing the trial depends on leaves it running
kill -HUP "$CAAD_PID"
wait_for 3 eval '[ "$(grep -c "Configuration reloaded" "$log")" -ge 2 ]' || fail "the second reload was not done"
sleep 1
grep -q "^Trial 1 .* aborted" "$log" && { cat "$log"; fail "a reload that changed nothing aborted the trial"; }
info "a reload that changed nothing left trial 1 running"
# the client itself, not only the shell that started it
for p in $(ip netns pids "$TB_A"); do kill -TERM "$p" 2>/dev/null || true; done
wait "$cli" 2>/dev/null || true
stop_caad held
set_rps 0
echo "PASS: trial"
