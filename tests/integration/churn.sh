#!/usr/bin/env bash
# Churn: CAAD_CHURN_CONNECTIONS (default 100000) short TCP connections into
# the receiving namespace while caad runs with a small flow map and a
# heavy iperf3 flow runs alongside. Checks that caad's flow table stays
# within MaxFlows, that entries do not outlive their sockets (the table
# drains once the churn stops), that caad's RSS stays flat after warm-up,
# and that the heavy flow is still steered. Prints the numbers.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init

N=${CAAD_CHURN_CONNECTIONS:-100000}
MAXFLOWS=1024
CHURN=${CHURN:-$CAAD_BUILD_ROOT/bench/churn}
[ -x "$CHURN" ] || fail "churn tool not built at $CHURN"

tb_setup "caadc$$" 80
RT=$TMP/rt
cat >"$TMP/caad.conf" <<CONF
[Daemon]
MaxFlows=$MAXFLOWS
IntervalMSec=100
CONF
ip netns exec "$TB_B" "$CAAD" --foreground --config "$TMP/caad.conf" --interface vb --runtime-dir "$RT" \
	>"$TMP/caad.log" 2>&1 &
CAAD_PID=$!
wait_for 10 test -s "$RT/state.json" || { cat "$TMP/caad.log"; fail "caad did not start"; }

# the heavy flow: receiver on CPU 1, so caad steers rx processing to CPU 0
in_b iperf3 -s -1 -A 1 >/dev/null 2>&1 &
sleep 0.3
DUR=$(( N / 2000 + 20 ))
in_a iperf3 -c "$TB_DST" -t "$DUR" -b 2G >/dev/null 2>&1 &
IPERF=$!
wait_for 5 rps_is 0 1 || { cat "$TMP/caad.log"; fail "heavy flow not steered before the churn"; }

in_b "$CHURN" server 5555 &
sleep 0.2

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$CAAD_PID/status"; }
nflows() { jq '.n_flows' "$RT/state.json" 2>/dev/null || echo 0; }
MAXSEEN=0 SAMPLES=()
in_a "$CHURN" client "$TB_DST" 5555 "$N" >"$TMP/churn.out" &
CLIENT=$!
while kill -0 "$CLIENT" 2>/dev/null; do
	n=$(nflows); [ "$n" -gt "$MAXSEEN" ] && MAXSEEN=$n
	SAMPLES+=("$(rss)")
	sleep 0.2
done
wait "$CLIENT" || fail "churn client failed: $(cat "$TMP/churn.out")"
info "$(cat "$TMP/churn.out")"

# RSS: after warm-up (the first quarter of the samples) it must stay flat
ns=${#SAMPLES[@]}
[ "$ns" -ge 4 ] || fail "churn too short to sample RSS ($ns samples)"
WARM=${SAMPLES[$(( ns / 4 ))]} LAST=${SAMPLES[$(( ns - 1 ))]} PEAK=0
for s in "${SAMPLES[@]}"; do [ "$s" -gt "$PEAK" ] && PEAK=$s; done
info "caad RSS: ${SAMPLES[0]} KiB at start, $WARM KiB after warm-up, $LAST KiB at the end, peak $PEAK KiB ($ns samples)"
info "flow table: at most $MAXSEEN entries seen (MaxFlows=$MAXFLOWS)"
[ "$MAXSEEN" -le "$MAXFLOWS" ] || fail "caad saw $MAXSEEN flows, more than MaxFlows=$MAXFLOWS"
# Under ASan (scripts/sanitize.sh sets CAAD_SANITIZERS) freed memory waits in
# its 256 MB quarantine, so RSS tells nothing there; LSan checks for leaks
# when caad exits below instead.
if [ -z "${CAAD_SANITIZERS:-}" ]; then
	[ $(( LAST - WARM )) -le 1024 ] || fail "RSS grew by $(( LAST - WARM )) KiB after warm-up"
fi

# closed sockets leave the table: a few seconds after the churn only the
# iperf3 connections remain
drained() { [ "$(nflows)" -le 4 ]; }
wait_for 5 drained || { jq '.flows[] | .tuple' "$RT/state.json" | head; fail "$(nflows) flows still listed after the churn"; }
info "flow table after the churn: $(nflows) entries"

# the heavy flow kept its steering throughout
rps_is 0 1 || fail "rx-0 rps_cpus is $(rps_b 0) after the churn, wanted 1"
jq -e '[.flows[] | select(.heavy and .steer_cpu == 0)] | length == 1' "$RT/state.json" >/dev/null ||
	{ jq . "$RT/state.json"; fail "the heavy flow is not steered to CPU 0 after the churn"; }
kill "$IPERF" 2>/dev/null || true
kill -TERM "$CAAD_PID"; wait "$CAAD_PID" || fail "caad exited with an error"
CAAD_PID=
echo "PASS: churn"
