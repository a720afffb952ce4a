#!/usr/bin/env bash
# The walking skeleton's acceptance test: a real iperf3 flow in a
# netns/veth testbed, caad enforcing inside the receiving namespace.
# Receiver on CPU 1 -> rx-0 rps_cpus becomes 1 (CPU 0, the only peer core
# of CPU 1) within 1 s, the BPF-observed processing CPU becomes 0, and
# SIGTERM restores the original masks. Receiver on CPU 0 -> mask 2.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init

run_case() {
	local app_cpu=$1 want_mask=$2 want_proc=$3
	info "receiver on CPU $app_cpu: expect rps_cpus $want_mask and processing on CPU $want_proc"
	tb_setup "caadt$$" 77
	local orig0 orig1
	orig0=$(rps_b 0) orig1=$(rps_b 1)
	local rt="$TMP/rt-$app_cpu"

	# not through in_b: $! must be caad itself, not a subshell
	ip netns exec "$TB_B" "$CAAD" --foreground --interface vb --runtime-dir "$rt" >"$TMP/caad-$app_cpu.log" 2>&1 &
	CAAD_PID=$!
	wait_for 10 test -s "$rt/state.json" || { cat "$TMP/caad-$app_cpu.log"; fail "caad did not start"; }

	in_b iperf3 -s -1 -A "$app_cpu" -J >"$TMP/srv.json" 2>&1 &
	local srv=$!
	sleep 0.3
	local before_rps; before_rps=$(softnet_received_rps "$want_proc")
	local t0; t0=$(now_ms)
	in_a iperf3 -c "$TB_DST" -t 5 -J >"$TMP/cli.json" 2>&1 &
	local cli=$!

	wait_for 5 rps_is 0 "$want_mask" ||
		{ cat "$TMP/caad-$app_cpu.log"; fail "rx-0 rps_cpus is $(rps_b 0), wanted $want_mask"; }
	local dt=$(( $(now_ms) - t0 ))
	info "rx-0 rps_cpus = $(rps_b 0) after $dt ms"
	[ "$dt" -le 1000 ] || fail "steering took $dt ms (> 1000 ms)"

	# The BPF observer must now see the flow processed on the peer core.
	proc_is() {
		jq -e --argjson c "$want_proc" '[.flows[] | select(.heavy and .proc_cpu == $c)] | length > 0' \
			"$rt/state.json" >/dev/null 2>&1
	}
	wait_for 3 proc_is || { jq . "$rt/state.json"; fail "BPF processing CPU did not become $want_proc"; }
	jq -r '.flows[] | select(.heavy) | "# flow \(.tuple): \(.comm) on CPU \(.consumer_cpu), processed on CPU \(.proc_cpu), steer \(.steer_cpu) (\(.relation))"' "$rt/state.json"

	wait "$cli" || fail "iperf3 client failed: $(cat "$TMP/cli.json")"
	wait "$srv" || true
	local after_rps; after_rps=$(softnet_received_rps "$want_proc")
	info "softnet received_rps on CPU $want_proc: $before_rps -> $after_rps"
	[ "$after_rps" -gt "$before_rps" ] || fail "kernel shows no RPS-steered packets on CPU $want_proc"

	kill -TERM "$CAAD_PID"
	local rc=0; wait "$CAAD_PID" || rc=$?
	CAAD_PID=
	[ "$rc" = 0 ] || { cat "$TMP/caad-$app_cpu.log"; fail "caad exited with $rc after SIGTERM"; }
	[ "$(rps_b 0)" = "$orig0" ] || fail "rx-0 rps_cpus is $(rps_b 0) after exit, was $orig0"
	[ "$(rps_b 1)" = "$orig1" ] || fail "rx-1 rps_cpus is $(rps_b 1) after exit, was $orig1"
	[ ! -e "$rt/journal" ] || fail "journal left behind after a clean exit"
	grep -q "rx-0: RPS CPUs" "$TMP/caad-$app_cpu.log" || fail "the change was not logged"
	info "restored: rx-0 $(rps_b 0), rx-1 $(rps_b 1)"
	tb_cleanup
}

run_case 1 1 0
run_case 0 2 1
echo "PASS: steer"
