#!/usr/bin/env bash
# Install everything caad needs to build, test and run its demo on
# Debian 12 (bookworm). Safe to repeat: apt runs only when something is missing.
set -euo pipefail

PACKAGES=(
	# build (build-essential: dpkg-buildpackage checks for it)
	meson ninja-build pkg-config gcc build-essential clang llvm bpftool
	# libraries
	libbpf-dev libelf-dev zlib1g-dev libhwloc-dev libnl-3-dev libnl-genl-3-dev
	libnl-route-3-dev libsystemd-dev libcap-dev libinih-dev libcmocka-dev libjson-c-dev
	# caadctl's tables and trees, and where its bash completion goes
	libsmartcols-dev bash-completion
	# packages (scripts/package.sh): .deb, lintian, .rpm
	debhelper dpkg-dev lintian rpm fakeroot
	# tests and demo; libFuzzer (scripts/fuzz.sh) and valgrind (scripts/sanitize.sh)
	hwloc iperf3 iproute2 ethtool jq procps python3 libclang-rt-14-dev valgrind
	# D-Bus and systemd tests: a private dbus-daemon, busctl, dbus-send/-monitor,
	# systemd-analyze verify (looks up the man pages) and security, setpriv
	dbus-daemon dbus-bin systemd man-db util-linux
	# caadctl tests: tables in a real terminal; man pages rendered without
	# warnings; a locale that writes decimals with a comma (localedef)
	tmux mandoc groff-base locales
	# bench/affinity-matrix's bubble chart; bench/bundle's RPATHs (bench/README.md)
	python3-matplotlib patchelf
	# tests/kernel/vm.sh: another kernel in an emulated machine, its initramfs
	qemu-system-x86 busybox-static cpio kmod
)

if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
export DEBIAN_FRONTEND=noninteractive
# a fresh cloud machine may be running unattended-upgrades: wait for
# dpkg's lock (the option), and try again while the lists' lock is held
# (apt-get update does not wait for that one)
apt_update() {
	for try in $(seq 30); do
		apt-get -o DPkg::Lock::Timeout=600 update -qq && return 0
		[ "$try" = 30 ] && exit 1
		echo "apt-get update failed (try $try of 30); again in 10 s" >&2
		sleep 10
	done
}
if [ ${#missing[@]} -gt 0 ]; then
	echo "Installing: ${missing[*]}"
	apt_update
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# tests/kernel/vm.sh boots Debian 12's own kernel (6.1: no sock_recv_length
# or sk_data_ready tracepoint) with this machine's root: its package, kept
# here and unpacked there, never installed
kernels=/var/cache/caad-test
if [ "$(dpkg --print-architecture)" = amd64 ] && ! compgen -G "$kernels/linux-image-6.1.*.deb" >/dev/null; then
	mkdir -p "$kernels"
	# the newest of bookworm's 6.1 packages, whichever linux-image-amd64
	# is (one from backports is another kernel)
	kernel_package() {
		{ apt-cache pkgnames linux-image-6.1.0- 2>/dev/null || true; } |
			{ grep -E '^linux-image-6\.1\.0-[0-9]+-amd64$' || true; } | sort -V | tail -n 1
	}
	pkg=$(kernel_package)
	if [ -z "$pkg" ]; then
		apt_update
		pkg=$(kernel_package)
	fi
	if [ -z "$pkg" ]; then
		echo "install-deps.sh: no linux-image-6.1.0-*-amd64 package (Debian 12's kernel) in apt's sources" >&2
		exit 1
	fi
	echo "Downloading $pkg into $kernels (tests/kernel/vm.sh)"
	(cd "$kernels" && apt-get download -qq "$pkg" 2>&1 | grep -v "couldn't be accessed by user '_apt'" || true)
	compgen -G "$kernels/linux-image-6.1.*.deb" >/dev/null ||
		{ echo "install-deps.sh: could not download $pkg" >&2; exit 1; }
fi
