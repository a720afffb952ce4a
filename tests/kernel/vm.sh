#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# vm.sh [--deb FILE] [--timeout S] COMMAND
#
# Runs COMMAND (a shell command line) as root in a virtual machine that
# boots another kernel: by default Debian 12's own (linux-image-6.1.0-*,
# which scripts/install-deps.sh keeps in /var/cache/caad-test), whose
# networking lacks tracepoints that caad uses where it can. The machine
# sees this host's root file system read-only, under a tmpfs where it
# writes, so COMMAND runs this checkout's binaries against that kernel; it
# has 2 CPUs and loopback, no other network, and touches nothing of the
# host's but its work directory ($CAAD_VM_DIR, else /var/tmp/caad-vm: the
# package unpacked and its initramfs, made once). qemu emulates the CPU
# (TCG): slow, but needs no /dev/kvm, and runs inside a virtual machine
# too; COMMAND sees CAAD_TEST_SLOWDOWN=3, by which the integration tests
# stretch their time bounds.
#
# Prints COMMAND's output; exits with its status, 77 (skipped) where there
# is no kernel package or no qemu (a failure under CI=true, which must run
# it), or 1 when the machine does not get as far as COMMAND.
set -euo pipefail

deb=""
timeout_s=900
while [ $# -gt 1 ]; do
	case "$1" in
	--deb) deb=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
if [ $# -ne 1 ]; then
	echo "usage: $0 [--deb FILE] [--timeout S] COMMAND" >&2
	exit 2
fi
command=$1

skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: CI must run this test, but it cannot here: $*" >&2
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}

if [ "$(id -u)" != 0 ]; then
	skip "the machine's COMMAND runs as root, and so must this"
fi
if [ -z "$deb" ]; then
	deb=$(ls /var/cache/caad-test/linux-image-*.deb 2>/dev/null | sort -V | tail -n 1 || true)
	[ -n "$deb" ] || skip "no kernel package in /var/cache/caad-test (scripts/install-deps.sh puts Debian 12's there)"
fi
[ -r "$deb" ] || { echo "$0: $deb: not readable" >&2; exit 2; }
qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || skip "no qemu-system-x86_64 (Debian: qemu-system-x86)"
[ "$(uname -m)" = x86_64 ] || skip "the machine's user space is this host's: x86_64 only"
for tool in busybox cpio depmod modprobe; do
	PATH=$PATH:/usr/sbin:/sbin command -v "$tool" >/dev/null ||
		skip "no $tool (Debian: busybox-static, cpio, kmod)"
done
busybox=$(command -v busybox)
{ ldd "$busybox" 2>&1 || true; } | grep -q "not a dynamic" ||
	skip "$busybox is not statically linked (Debian: busybox-static)"

# The package unpacked once per package, and the initramfs made from it.
# Keyed by this script too (its init, its modules). One run at a time (a
# lock held to the end): two first runs would make one tree, and a new
# tree removes the others.
work=${CAAD_VM_DIR:-/var/tmp/caad-vm}
name=$(basename "$deb" .deb)
root=$work/$name-$(sha256sum < "$0" | cut -c1-12)
mkdir -p "$work"
exec 9> "$work/lock"
flock 9
if [ ! -e "$root/.done" ]; then
	# trees of other packages or of other versions of this script go
	rm -rf "$work"/linux-image-*
	mkdir -p "$root"
	dpkg -x "$deb" "$root/pkg"
	release=$(ls "$root/pkg/lib/modules")
	PATH=$PATH:/usr/sbin:/sbin depmod -b "$root/pkg" "$release"
	# the modules that mount the host's root: 9p over virtio-pci, and the
	# overlay that makes it writable
	mods=()
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		while read -r _ path _; do
			[[ " ${mods[*]:-} " == *" $path "* ]] || mods+=("$path")
		done < <(PATH=$PATH:/usr/sbin:/sbin modprobe -d "$root/pkg" -S "$release" --show-depends "$m" | grep '^insmod')
	done
	mkdir -p "$root/initrd/bin" "$root/initrd/mods" "$root/initrd/"{dev,proc,sys,lower,upper,newroot}
	cp "$busybox" "$root/initrd/bin/busybox"
	: > "$root/initrd/mods/order"
	for path in "${mods[@]}"; do
		cp "$path" "$root/initrd/mods/"
		basename "$path" >> "$root/initrd/mods/order"
	done
	cat > "$root/initrd/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do insmod "/mods/$m" || echo "vm: insmod $m failed"; done
fail() { echo "vm: $*"; poweroff -f; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /lower || fail "no host root"
mount -t tmpfs -o size=1g tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w overlay /newroot || fail "no overlay"
mount -t tmpfs tmpfs /newroot/run
mkdir -p /newroot/run/vm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 vmout /newroot/run/vm || fail "no output directory"
umount /proc /sys /dev
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs dev /newroot/dev
exec chroot /newroot /bin/sh /run/vm/guest.sh
EOF
	chmod +x "$root/initrd/init"
	(cd "$root/initrd" && find . | cpio -o -H newc 2>/dev/null | gzip) > "$root/initrd.gz"
	echo "$release" > "$root/.done"
fi
release=$(cat "$root/.done")

out=$(mktemp -d "$work/run.XXXXXX")
qemu_pid=""
# qemu is waited for in the background: a signal (meson's timeout, ^C)
# runs this trap at once, and stops it
trap '[ -z "$qemu_pid" ] || kill "$qemu_pid" 2>/dev/null; rm -rf "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
printf '%s\n' "$command" > "$out/command"
cat > "$out/guest.sh" <<EOF
#!/bin/sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root CI=${CI:-}
# emulated CPUs: the integration tests' time bounds (tests/integration/lib.sh)
export CAAD_TEST_SLOWDOWN=3
mount -t bpf bpf /sys/fs/bpf
# what udev and systemd make on a booted machine: bash's <(...), and more
ln -sf /proc/self/fd /dev/fd
for i in 0 1 2; do ln -sf /proc/self/fd/\$i /dev/\$(echo stdin stdout stderr | cut -d' ' -f\$((i + 1))); done
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /lib/modules && mount --bind "$root/pkg/lib/modules" /lib/modules
ip link set lo up
echo "vm: kernel \$(uname -r), \$(nproc) CPUs"
cd "$PWD"
sh /run/vm/command > /run/vm/output 2>&1
echo \$? > /run/vm/status
sync
poweroff -f
EOF

echo "vm: booting $name ($release), then: $command"
set +e
timeout --foreground "$timeout_s" "$qemu" -accel tcg -cpu max -smp 2 -m 3072 -nographic -no-reboot \
	-kernel "$root/pkg/boot/vmlinuz-$release" -initrd "$root/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet" \
	-fsdev local,id=hostroot,path=/,readonly=on,security_model=none,multidevs=remap \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev local,id=vmout,path="$out",security_model=none \
	-device virtio-9p-pci,fsdev=vmout,mount_tag=vmout > "$out/console" 2>&1 < /dev/null &
qemu_pid=$!
wait "$qemu_pid"
qemu_status=$?
qemu_pid=""
set -e
[ -e "$out/output" ] && cat "$out/output"
if [ ! -e "$out/status" ]; then
	echo "vm: the machine stopped before COMMAND ended (qemu: exit $qemu_status; 124: past ${timeout_s} s); its console:" >&2
	grep -v "^qemu-system-x86_64: warning" "$out/console" | tail -n 30 >&2
	[ -z "${CAAD_VM_CONSOLE:-}" ] || cp "$out/console" "$CAAD_VM_CONSOLE"
	exit 1
fi
status=$(cat "$out/status")
echo "vm: COMMAND exited $status"
exit "$status"
