#!/usr/bin/env bash
# The closed loop's hands-off candidate (TryHostSteering=, on by default),
# in the netns/veth testbed (2 CPUs: no SMT sibling):
#  1. a trial has three candidates: the prior, the consumer's own CPU, and
#     the host's own steering (GetTrials' JSON: its cpu null), and caad
#     logs each one's numbers;
#  2. in the host's turns the flow's rx queue holds the host's value again
#     (rps_cpus 0, as the testbed has it: caad gives back what it wrote),
#     in the other turns caad's;
#  3. a verdict "host-steering" in the store is taken by a new flow of that
#     application without a trial: listed as left to the host's steering,
#     its queue never written;
#  4. on exit nothing of caad's is left: the masks read as the host had them;
#  5. TryHostSteering=no: the stored verdict is kept but not used, the rules
#     steer the flow (and no trial runs while it lasts).
# (TryHostSteering=no, two candidates: trial.sh.)
# The trial is short (2 rounds of 1.5 s turns): what wins is not asked here,
# only that every turn is what it says.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init

tb_setup "caadhs$$" 87
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
Rounds=2
TurnMSec=1500
SettleMSec=500
SteadyMSec=2000
EOC

orig0=$(rps_b 0) orig1=$(rps_b 1)
[ "$orig0" = 0 ] && [ "$orig1" = 0 ] || fail "the testbed's RPS masks are not 0: $orig0 $orig1"

# --- 1. and 2. the trial --------------------------------------------------------
log=$TMP/caad-trial.log
start_caad trial "$TMP/state"
in_b iperf3 -s -p 5201 -1 -A 1 -J >/dev/null 2>&1 &
tb_wait_listen 5201
in_a iperf3 -c "$TB_DST" -p 5201 -t 40 -A 0 -J >"$TMP/cli.json" 2>&1 &
cli=$!
wait_for 15 grep -q "^Trial 1:" "$log" || { cat "$log"; fail "no trial started"; }
grep -m1 "^Trial 1:" "$log" | sed 's/^/# /'
grep -qE "^Trial 1: .*candidates: prior CPU [0-9] \(peer-core-same-llc\), CPU [0-9] \(same-core\) and the host's own steering \(host-steering\)$" \
	"$log" || fail "the trial's candidates: $(grep -m1 '^Trial 1:' "$log")"

# the masks of both queues, sampled through the trial: "host" while both
# read as the host had them, "caad" while one holds a CPU caad wrote
host=0 steered=0
while ! grep -q "^Trial 1 .* done: \|^Trial 1 .* aborted: " "$log"; do
	kill -0 "$cli" 2>/dev/null || { cat "$log"; fail "the flow ended before the trial did"; }
	r0=$(rps_b 0) r1=$(rps_b 1)
	if [ "$r0" = "$orig0" ] && [ "$r1" = "$orig1" ]; then host=$((host + 1)); else steered=$((steered + 1)); fi
	sleep 0.05
done
grep "^Trial 1" "$log" | sed 's/^/# /'
grep -q "^Trial 1 .* aborted: " "$log" && fail "the trial was aborted: $(grep '^Trial 1 .* aborted' "$log")"
info "samples of the masks during the trial: $host with the host's values, $steered with caad's"
# 2 of 6 turns are the host's, 1.5 s each: about a third of the samples
[ "$host" -ge 5 ] || fail "the host's values were not back during its turns ($host samples)"
[ "$steered" -ge 10 ] || fail "caad's values were not there during the other turns ($steered samples)"
grep -qE "^Trial 1 candidate 2, the host's own steering \(host-steering\): median [0-9.]+ Gbit/s" "$log" ||
	fail "no numbers for the host's own steering in the log"
grep -qE "^vb rx-[01]: RPS CPUs back to the host's 0 \(the host's own value goes back; .*host-steering" "$log" ||
	fail "no give-back logged"

tj=$TMP/rt/trials.json
jq -e '.trials[0] | .state == "done" and (.candidates | length) == 3 and
	.candidates[2].cpu == null and .candidates[2].relation == "host-steering" and (.candidates[2].prior | not) and
	.candidates[2].pairs == 2 and .candidates[2].goodput_bps > 0 and (.samples | length) == 6 and
	([.samples[] | select(.candidate == 2)] | length) == 2' "$tj" >/dev/null ||
	{ jq . "$tj"; fail "trials.json does not report the host's candidate"; }
# the client itself, not only the shell that started it: no flow of this part may outlive it
for p in $(ip netns pids "$TB_A"); do kill -TERM "$p" 2>/dev/null || true; done
wait "$cli" 2>/dev/null || true
stop_caad trial
# --- 4. (first half) nothing of caad's left after the trial's run ----------------
[ "$(rps_b 0)" = "$orig0" ] && [ "$(rps_b 1)" = "$orig1" ] || fail "RPS masks after exit: $(rps_b 0) $(rps_b 1)"

# --- 3. a host-steering verdict, taken without a trial --------------------------
# the store of that run (its kernel and topology), its verdict made "host-steering"
mkdir -p "$TMP/state-host"
jq '.verdicts |= map(.relation = "host-steering" | .alternative = "host-steering" | .kept_prior = false)' \
	"$TMP/state/verdicts.json" >"$TMP/state-host/verdicts.json"
jq -e '.verdicts | length == 1 and .[0].comm == "iperf3"' "$TMP/state-host/verdicts.json" >/dev/null ||
	{ cat "$TMP/state-host/verdicts.json"; fail "no iperf3 verdict to rewrite"; }
log=$TMP/caad-host.log
start_caad host "$TMP/state-host"
wait_for 5 grep -q "1 verdict of earlier trials loaded" "$log" || { cat "$log"; fail "the verdict was not loaded"; }
in_b iperf3 -s -p 5202 -1 -A 1 -J >/dev/null 2>&1 &
tb_wait_listen 5202
in_a iperf3 -c "$TB_DST" -p 5202 -t 10 -A 0 -J >"$TMP/cli-host.json" 2>&1 &
cli=$!
wait_for 5 grep -q ":5202 .*takes the verdict of trial [0-9]* without a trial of its own: host-steering" "$log" ||
	{ cat "$log"; fail "the flow did not take the host-steering verdict"; }
st=$TMP/rt/state.json
listed() {
	jq -e '[.flows[] | select((.tuple | contains(":5202 <-")) and .heavy and .relation == "host-steering" and
		.steer_cpu == null and (.reason | contains("left to the host'"'"'s own steering")))] | length == 1' \
		"$st" >/dev/null 2>&1
}
wait_for 3 listed || { jq . "$st"; fail "the flow is not listed as left to the host's steering"; }
while kill -0 "$cli" 2>/dev/null; do
	[ "$(rps_b 0)" = "$orig0" ] && [ "$(rps_b 1)" = "$orig1" ] || fail "caad wrote an RPS mask: $(rps_b 0) $(rps_b 1)"
	sleep 0.1
done
wait "$cli" || fail "iperf3 failed: $(cat "$TMP/cli-host.json")"
grep -q "^Trial" "$log" && fail "a trial ran for an application with a verdict: $(grep '^Trial' "$log")"
grep -q "RPS CPUs .* -> " "$log" && fail "caad steered the flow: $(grep 'RPS CPUs' "$log")"
stop_caad host
[ "$(rps_b 0)" = "$orig0" ] && [ "$(rps_b 1)" = "$orig1" ] || fail "RPS masks after exit: $(rps_b 0) $(rps_b 1)"

# --- 5. TryHostSteering=no: the stored verdict is not used, the rules place the flow
echo "TryHostSteering=no" >>"$TMP/caad.conf"
log=$TMP/caad-nohost.log
start_caad nohost "$TMP/state-host"
in_b iperf3 -s -p 5203 -1 -A 1 -J >/dev/null 2>&1 &
tb_wait_listen 5203
in_a iperf3 -c "$TB_DST" -p 5203 -t 5 -A 0 -J >/dev/null 2>&1 &
cli=$!
wait_for 5 grep -q "^vb rx-[01]: RPS CPUs .* -> " "$log" || { cat "$log"; fail "TryHostSteering=no: the flow was not steered"; }
wait "$cli" || fail "iperf3 failed"
grep -q "takes the verdict" "$log" && fail "TryHostSteering=no: the host-steering verdict was used"
grep -q "^Trial" "$log" && fail "TryHostSteering=no: a trial ran while the verdict lasts"
jq -e '.verdicts | length == 1 and .[0].relation == "host-steering"' "$TMP/state-host/verdicts.json" >/dev/null ||
	fail "TryHostSteering=no: the stored verdict did not stay"
stop_caad nohost
echo "PASS: host-steering"
