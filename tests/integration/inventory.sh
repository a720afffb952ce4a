#!/usr/bin/env bash
# caad --print-topology --json against what the kernel shows, read-only:
#  1. the host's default-route interface (never written: its files are
#     checksummed before and after);
#  2. a 2-queue veth in a namespace of our own, with GRO, threaded NAPI,
#     an RPS mask and an RFS table set there first.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
test_init

json_of() { "$@" --print-topology --json; }

# ---- 1. the host's interface -------------------------------------------
HOSTIF=$(ip -o route show default 2>/dev/null | awk '{print $5; exit}')
[ -n "$HOSTIF" ] || HOSTIF=$(ls /sys/class/net | grep -v '^lo$' | head -1)
[ -n "$HOSTIF" ] || fail "no host interface to look at"
info "host interface $HOSTIF"
host_files() {
	find "/sys/class/net/$HOSTIF/queues/" -name 'rps_*' -type f -exec md5sum {} + 2>/dev/null
	for irq in $(ls "/sys/class/net/$HOSTIF/device/msi_irqs" "/sys/class/net/$HOSTIF/device/../msi_irqs" 2>/dev/null | grep -E '^[0-9]+$'); do
		md5sum "/proc/irq/$irq/smp_affinity_list" 2>/dev/null || true
	done
}
before=$(host_files)
J=$(json_of "$CAAD" -i "$HOSTIF")
[ "$(host_files)" = "$before" ] || fail "--print-topology changed $HOSTIF's settings"
echo "$J" | jq -e . >/dev/null || fail "not JSON: $J"

IFJ=$(echo "$J" | jq -c --arg n "$HOSTIF" '.interfaces[] | select(.name == $n)')
[ -n "$IFJ" ] || fail "$HOSTIF missing from the JSON"
[ "$(echo "$IFJ" | jq .ifindex)" = "$(cat /sys/class/net/$HOSTIF/ifindex)" ] || fail "ifindex differs"
nq=$(ls -d /sys/class/net/$HOSTIF/queues/rx-* | wc -l)
[ "$(echo "$IFJ" | jq '.queues | length')" = "$nq" ] || fail "$HOSTIF: expected $nq rx queues"
[ "$(echo "$J" | jq .cpus)" = "$(nproc --all)" ] || fail "CPU count differs from nproc --all"
if [ -e "/sys/class/net/$HOSTIF/device/driver" ]; then
	drv=$(basename "$(readlink "/sys/class/net/$HOSTIF/device/driver")")
	[ "$(echo "$IFJ" | jq -r .driver)" = "$drv" ] || fail "driver is not $drv"
fi
n_irq=0
for q in $(seq 0 $((nq - 1))); do
	QJ=$(echo "$IFJ" | jq -c ".queues[$q]")
	rps=$(cat "/sys/class/net/$HOSTIF/queues/rx-$q/rps_cpus")
	[ "$(echo "$QJ" | jq -r .rps_cpus)" = "$(python3 -c "
m=int('$rps'.replace(',',''),16); c=[i for i in range(m.bit_length()) if m>>i&1]
out=[];i=0
while i<len(c):
    j=i
    while j+1<len(c) and c[j+1]==c[j]+1: j+=1
    out.append(str(c[i]) if i==j else '%d-%d'%(c[i],c[j])); i=j+1
print(','.join(out))")" ] || fail "rx-$q: rps_cpus differs from $rps"
	irq=$(echo "$QJ" | jq -r .irq)
	[ "$irq" = null ] && continue
	n_irq=$((n_irq + 1))
	# the IRQ is one of the device's, named for this queue, affinity as in procfs
	grep -qE "^ *$irq:" /proc/interrupts || fail "rx-$q: IRQ $irq not in /proc/interrupts"
	[ "$(echo "$QJ" | jq -r .affinity)" = "$(cat /proc/irq/$irq/smp_affinity_list)" ] || fail "rx-$q: affinity differs"
	if [ -e "/proc/irq/$irq/effective_affinity_list" ]; then
		[ "$(echo "$QJ" | jq -r .effective_affinity)" = "$(cat /proc/irq/$irq/effective_affinity_list)" ] ||
			fail "rx-$q: effective affinity differs"
	fi
	name=$(grep -E "^ *$irq:" /proc/interrupts | awk '{print $NF}')
	info "rx-$q -> IRQ $irq ($name, found by $(echo "$QJ" | jq -r .irq_source))"
	case "$name" in *"-$q"|*".$q"|*"comp$q@"*|*"-$q-"*) ;; *) fail "rx-$q: IRQ $irq is \"$name\"";; esac
done
if ls /sys/class/net/$HOSTIF/device/msi_irqs >/dev/null 2>&1 || ls /sys/class/net/$HOSTIF/device/../msi_irqs >/dev/null 2>&1; then
	[ "$n_irq" -gt 0 ] || fail "$HOSTIF has MSI vectors but no rx queue got an IRQ"
fi
"$CAAD" --print-topology -i "$HOSTIF" | grep -q "^ *NIC $HOSTIF (ifindex" || fail "text output lacks $HOSTIF"

# ---- 2. veth in our namespace ------------------------------------------
tb_setup "caadi$$" 79
in_b ethtool -K vb gro on >/dev/null
in_b sh -c 'echo 1 >/sys/class/net/vb/threaded' || fail "cannot enable threaded NAPI on veth"
in_b sh -c 'echo 1 >/sys/class/net/vb/queues/rx-0/rps_cpus; echo 128 >/sys/class/net/vb/queues/rx-1/rps_flow_cnt'
V=$(in_b "$CAAD" --print-topology --json -i vb | jq -c '.interfaces[0]')
info "veth: $V"
[ "$(echo "$V" | jq -r .name)" = vb ] || fail "vb missing"
[ "$(echo "$V" | jq '.queues | length')" = 2 ] || fail "vb: 2 queues expected"
[ "$(echo "$V" | jq -r '.queues[0].rps_cpus')" = 0 ] || fail "vb rx-0: rps_cpus should read CPU 0"
[ "$(echo "$V" | jq -r '.queues[1].rps_cpus')" = "" ] || fail "vb rx-1: RPS should be off"
[ "$(echo "$V" | jq -r '.queues[1].rps_flow_cnt')" = 128 ] || fail "vb rx-1: rps_flow_cnt 128 expected"
[ "$(echo "$V" | jq -r '[.queues[].irq] | unique | .[]')" = null ] || fail "veth has no IRQs"
[ "$(echo "$V" | jq -r .locality)" = unknown ] || fail "veth has no locality"
[ "$(echo "$V" | jq -r .driver)" = null ] || fail "veth has no device driver"
[ "$(echo "$V" | jq -r .rx_channels)" = 2 ] || fail "ethtool netlink: 2 rx channels expected"
# every NAPI's kthread is the "napi/vb-<id>" thread the kernel started
nn=$(echo "$V" | jq '.napis | length')
[ "$nn" -ge 1 ] || fail "threaded veth NAPIs not found"
for k in $(seq 0 $((nn - 1))); do
	id=$(echo "$V" | jq ".napis[$k].id")
	pid=$(echo "$V" | jq ".napis[$k].kthread")
	[ "$pid" -gt 0 ] || fail "NAPI $id: no kthread"
	[ "$(cat /proc/$pid/comm)" = "napi/vb-$id" ] || fail "NAPI $id: pid $pid is $(cat /proc/$pid/comm)"
done
info "veth: $nn threaded NAPIs with their kthreads"
echo "PASS"
