#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# simulate.sh CAAD SOURCE_ROOT
#
# caad --simulate on every scenario of docs/examples against the 24em64t
# topology (2 packages x 6 cores x 2 threads, P#n and P#n+12 siblings, even
# CPUs on package 0): the plan is JSON with the documented keys, every steer
# CPU is a peer core, never a consumer's core or a banned CPU; the examples'
# particular cases; exit codes 65, 66, 78 and 2; the same plan twice.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: ${0##*/} CAAD SOURCE_ROOT" >&2; exit 2; }
caad=$1 src=$2
topo=$src/tests/fixtures/topologies/24em64t-2n6c2t-pci.xml
examples=$src/docs/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # WHAT JQ-FILTER FILE: the filter must print true
	if [ "$(jq -e "$2" "$3" 2>&1)" != true ]; then
		echo "FAIL: $1 ($3)"
		jq -c "$2" "$3" 2>&1 | head -5 || true
		fail=1
	fi
}
sim() { # OUT ARGS...
	local out=$1 rc=0
	shift
	"$caad" --simulate "$@" >"$out" 2>"$out.err" || rc=$?
	echo "$rc"
}

# On the 24em64t: a CPU's core is its number mod 12, its package its number mod 2.
n=0
for f in "$examples"/*.json; do
	out=$tmp/$(basename "$f")
	rc=$(sim "$out" "$f" --topology "$topo")
	if [ "$rc" != 0 ]; then
		echo "FAIL: $f: exit $rc: $(cat "$out.err")"
		fail=1
		continue
	fi
	n=$((n + 1))
	check "keys" 'has("flows") and has("irqs") and has("rps") and has("kthreads")' "$out"
	check "one entry per flow" "(.flows | map(.id)) == $(jq -c '.flows | map(.id)' "$f")" "$out"
	check "entries" '[.flows[] | has("id") and has("steer_cpu") and has("relation") and has("reason") and (.reason | length > 0)] | all' "$out"
	check "relations" '[.flows[].relation] - ["peer-core-same-llc", "same-package-other-llc", "other-package", "smt-sibling", "unsteered"] == []' "$out"
	check "new keys" 'has("rfs") and has("rfs_table") and has("ntuple")' "$out"
	check "unsteered flows have no CPU" '[.flows[] | select(.steer_cpu == null) | .relation == "unsteered"] | all' "$out"
	check "a steer CPU is a peer core: same package, not the consumer's core" \
		'[.flows[] | select(.steer_cpu != null) | (.steer_cpu % 12 != .consumer_cpu % 12) and (.steer_cpu % 2 == .consumer_cpu % 2)] | all' "$out"
	check "no steer CPU is a heavy consumer's core (but a held one)" \
		'([.flows[] | select(.heavy and .consumer_cpu != null) | .consumer_cpu % 12]) as $cc
		 | [.flows[] | select(.steer_cpu != null and (.held | not)) | (.steer_cpu % 12) as $s | $cc | index($s) == null] | all' "$out"
	check "no steer CPU is on a core of a heavy consumer's window (but a held one)" \
		'def cpus: split(",") | map(if test("-") then (split("-") | map(tonumber) | range(.[0]; .[1] + 1)) else tonumber end);
		 ([.flows[] | select(.heavy and .consumer_cpus != null) | .consumer_cpus | cpus[] % 12]) as $wc
		 | [.flows[] | select(.steer_cpu != null and (.held | not)) | (.steer_cpu % 12) as $s | $wc | index($s) == null] | all' "$out"
	banned=$(jq -r '.banned_cpus // ""' "$f")
	if [ -n "$banned" ]; then
		check "no banned CPU" "[.flows[].steer_cpu, (.irqs[].cpus | tonumber? )] - [$(echo "$banned" | sed -E 's/([0-9]+)-([0-9]+)/range(\1;\2+1)/g')] == [.flows[].steer_cpu, (.irqs[].cpus | tonumber?)]" "$out"
	fi
	check "IRQ masks are one CPU" '[.irqs[].cpus | test("^[0-9]+$")] | all' "$out"
	check "kthread masks are one CPU" '[.kthreads[].cpus | test("^[0-9]+$")] | all' "$out"
	check "RPS masks are one CPU or off" '[.rps[].cpus | test("^([0-9]+)?$")] | all' "$out"
	# the same input, the same output
	"$caad" --simulate "$f" --topology "$topo" >"$out.again"
	cmp -s "$out" "$out.again" || { echo "FAIL: $f: two runs differ"; fail=1; }
done
[ "$n" -ge 5 ] || { echo "FAIL: only $n examples ran"; fail=1; }

# The examples' own cases.
o=$tmp/issue-example.json
check "issue: f1 on its IRQ, f2 by RPS (managed IRQ)" \
	'(.flows[0].steer_cpu | tostring) == .irqs[0].cpus and .irqs[0].irq == 100
	 and (.rps[] | select(.queue == 1) | .cpus) == (.flows[1].steer_cpu | tostring)
	 and (.rps[] | select(.queue == 0) | .cpus) == ""' "$o"
check "issue: the NIC's package is said" '(.flows[1].reason | test("NIC is local to package 0")) and (.flows[0].reason | test("NIC") | not)' "$o"
o=$tmp/hysteresis.json
check "hysteresis: a consumer moved within its LLC keeps its target" \
	'.flows[] | select(.id == "moved-within-llc") | .steer_cpu == 2 and .held and .since_ms == 1000' "$o"
check "hysteresis: a collision waits for the dwell time" \
	'.flows[] | select(.id == "collided") | .steer_cpu == 6 and .held and (.reason | test("DwellMSec"))' "$o"
check "hysteresis: a banned target moves at once" \
	'.flows[] | select(.id == "target-banned") | .steer_cpu != 8 and (.held | not) and (.reason | test("banned"))' "$o"
check "hysteresis: counted" '.forced_moves == 2 and .moves == 0' "$o"
o=$tmp/dtn-two-packages.json
check "dtn: ten distinct peers" '[.flows[] | select(.heavy) | .steer_cpu] | unique | length == 10' "$o"
check "dtn: light and young flows are left alone" \
	'[.flows[] | select(.id == "ssh" or .id == "new-transfer") | .heavy == false and .steer_cpu == null] == [true, true]' "$o"
o=$tmp/consumer-window.json
check "window: a consumer hopping between 4 and 6 gets neither core (4 without its window)" \
	'.flows[0].consumer_cpus == "4,6" and .flows[0].steer_cpu == 8 and (.flows[0].reason | test("lately also on CPU 4: peer core"))
	 and (.flows[1] | has("consumer_cpus") | not)' "$o"
o=$tmp/veth-threaded-napi.json
check "veth: RPS on every queue, shared by a flow in the same LLC" \
	'(.rps | map(select(.iface == "veth0")) | length) == 2 and (.flows[1].shares_queue and .flows[1].steer_cpu == .flows[0].steer_cpu)' "$o"
check "threaded NAPI: the kthread, not the IRQ" \
	'(.kthreads | length) == 1 and .kthreads[0].pid == 813 and (.irqs | length) == 0' "$o"

o=$tmp/ntuple-conflict.json
check "ntuple: off by default, rule 6's largest rate wins" \
	'.flows[1].steer_cpu == null and (.flows[1].reason | test("conflicted")) and (.ntuple | length) == 0' "$o"
# Mechanisms=ntuple: the slower flow moves to rx-1 by a rule, rx-1's IRQ follows it.
printf '[Placement]\nMechanisms=kthread irq rps rfs ntuple\n' >"$tmp/ntuple.conf"
rc=$(sim "$tmp/ntuple.out" "$examples/ntuple-conflict.json" --topology "$topo" --config "$tmp/ntuple.conf")
[ "$rc" = 0 ] || { echo "FAIL: ntuple: exit $rc: $(cat "$tmp/ntuple.out.err")"; fail=1; }
check "ntuple: the conflicted flow moved to rx-1 by a rule" \
	'.flows[1].ntuple_queue == 1 and .flows[1].steer_cpu % 2 == 1 and (.flows[1].reason | test("moved by an ntuple rule"))
	 and .ntuple == [{"flow": "other-socket", "rule": "tcp4 10.0.0.3:40002 > 10.0.0.2:5202 queue 1", "iface": "eth0",
	                  "queue": 1, "reason": .ntuple[0].reason}]
	 and (.irqs[] | select(.queue == 1) | .cpus) == (.flows[1].steer_cpu | tostring)' "$tmp/ntuple.out"
jq -n 'input as $out | input as $s | $s + {previous: $out.flows}' "$tmp/ntuple.out" "$examples/ntuple-conflict.json" \
	>"$tmp/ntuple-next.json"
rc=$(sim "$tmp/ntuple-next.out" "$tmp/ntuple-next.json" --topology "$topo" --config "$tmp/ntuple.conf")
[ "$rc" = 0 ] || { echo "FAIL: ntuple, next: exit $rc: $(cat "$tmp/ntuple-next.out.err")"; fail=1; }
check "ntuple: the next plan keeps the rule, the queue and the CPU" \
	'.flows[1].ntuple_queue == 1 and .flows[1].held and (.ntuple | length) == 1' "$tmp/ntuple-next.out"

# --config: DwellMSec=0 lets the collided flow move now.
printf '[Placement]\nDwellMSec=0\n' >"$tmp/nodwell.conf"
rc=$(sim "$tmp/nodwell.json" "$examples/hysteresis.json" --topology "$topo" --config "$tmp/nodwell.conf")
[ "$rc" = 0 ] || { echo "FAIL: --config: exit $rc"; fail=1; }
check "--config DwellMSec=0" '.flows[] | select(.id == "collided") | .steer_cpu != 6 and (.held | not)' "$tmp/nodwell.json"

# Without --topology: the host's.
printf '{"interfaces": [{"name": "lo0", "queues": [{"index": 0}]}], "flows": [{"id": "a", "iface": "lo0", "consumer_cpu": 0, "rate_bps": "5G"}]}' >"$tmp/host.json"
rc=$(sim "$tmp/host.out" "$tmp/host.json")
[ "$rc" = 0 ] || { echo "FAIL: host topology: exit $rc: $(cat "$tmp/host.out.err")"; fail=1; }
check "host topology" '.flows[0].id == "a"' "$tmp/host.out"

# Exit codes and messages.
expect() { # WHAT RC STDERR-SUBSTRING ARGS...
	local what=$1 want=$2 msg=$3 rc
	shift 3
	rc=$(sim "$tmp/x.out" "$@")
	if [ "$rc" != "$want" ] || ! grep -qF -- "$msg" "$tmp/x.out.err"; then
		echo "FAIL: $what: exit $rc (want $want), stderr: $(cat "$tmp/x.out.err") (want \"$msg\")"
		fail=1
	fi
	[ ! -s "$tmp/x.out" ] || { echo "FAIL: $what: wrote to stdout"; fail=1; }
}
printf '{"interfaces": [], "flows": [{"id": "f", "iface": "eth0", "rate_bps": 1}]}' >"$tmp/bad.json"
expect "bad scenario" 65 "bad.json: flows[0].iface: no interface \"eth0\" in interfaces" "$tmp/bad.json" --topology "$topo"
printf '{"interfaces": [{"name": "eth0", "queues": []}], "flows": [{"id": "f", "iface": "eth0", "consumer_cpu": 99, "rate_bps": 1}]}' >"$tmp/cpu.json"
expect "CPU not in the topology" 65 "cpu.json: flows[0].consumer_cpu: CPU 99 not in the topology" "$tmp/cpu.json" --topology "$topo"
printf '{"interfaces": [{"name": "eth0", "queues": []}], "flows": [{"id": "f", "iface": "eth0", "consumer_cpu": 6, "consumer_cpus": "4-5", "rate_bps": 1}]}' >"$tmp/window.json"
expect "a window without its consumer_cpu" 65 "window.json: flows[0].consumer_cpus: must contain consumer_cpu 6" "$tmp/window.json" --topology "$topo"
printf '{"interfaces": [}' >"$tmp/syntax.json"
expect "bad JSON" 65 "syntax.json:1:17: invalid JSON" "$tmp/syntax.json" --topology "$topo"
expect "missing file" 66 "nonexistent.json: cannot read" "$tmp/nonexistent.json" --topology "$topo"
printf '[Placement]\nDwellMSec=soon\n' >"$tmp/bad.conf"
expect "bad config" 78 "Invalid DwellMSec= value 'soon'" "$examples/issue-example.json" --topology "$topo" --config "$tmp/bad.conf"
expect "with --restore" 2 "cannot be combined" "$examples/issue-example.json" --restore
rc=0
"$caad" --simulate >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: --simulate without a file: exit $rc"; fail=1; }

[ "$fail" = 0 ] && echo "simulate.sh: OK: $n examples"
exit "$fail"
