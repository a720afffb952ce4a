#!/usr/bin/env bash
# Build caad's .deb and .rpm from the tracked files, check the .deb with
# lintian, install it, run the installed caad in the netns demo, check that
# every file is where the man pages say, remove and purge it, and verify
# nothing is left behind; then compare the rpm's file list with the deb's.
# Needs root (dpkg -i, namespaces). CI runs it from scripts/test.sh.
#
# Usage: scripts/package.sh [--keep DIR]   (DIR receives the built packages)
set -euo pipefail
cd "$(dirname "$0")/.."

KEEP=
[ "${1:-}" = --keep ] && KEEP=$2
[ "$(id -u)" = 0 ] || { echo "package.sh: run as root (dpkg -i)" >&2; exit 1; }

fail() { echo "package.sh: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

VERSION=$(sed -n "s/^  version : '\([^']*\)',/\1/p" meson.build)
[ -n "$VERSION" ] || fail "no version in meson.build"
# It installs its own build and purges it at the end: on a machine where
# caad is installed that would stop the operator's caad and remove its
# configuration and verdicts. Before the trap below, which purges.
# (removed but not purged too: its /etc/caad and /var/lib/caad are there)
# dpkg's state of caad: "" or not-installed where it is not there
caad_state() { dpkg-query -W -f='${db:Status-Status}' caad 2>/dev/null || true; }
case $(caad_state) in
'' | not-installed) ;;
*)
	fail "caad is on this machine (dpkg -l caad: installed, or its configuration kept); this script installs and purges its own build, which would stop that caad and remove /etc/caad and /var/lib/caad: purge it first (dpkg -P caad), or run the tests elsewhere"
	;;
esac
WORK=$(mktemp -d /tmp/caad-package.XXXXXX)
cleanup() {
	# removed but not purged (config-files) too: a step between -r and -P failed
	case $(caad_state) in '' | not-installed) ;; *) dpkg -P caad >/dev/null || true ;; esac
	rm -rf "$WORK"
}
trap cleanup EXIT

# The tracked files only: what a release tarball holds.
SRC=$WORK/caad-$VERSION
mkdir -p "$SRC"
if git rev-parse --git-dir >/dev/null 2>&1; then
	# (a tracked file deleted in the working tree is not there to copy)
	git ls-files -z --cached | while IFS= read -r -d '' f; do
		if [ -e "$f" ] || [ -L "$f" ]; then cp -P --parents -- "$f" "$SRC"; fi
	done
else
	tar -C . --exclude='./build*' --exclude=./.git -cf - . | tar -C "$SRC" -xf -
fi
# a link to a file deleted in the working tree is not shipped
find "$SRC" -xtype l -delete

# ---- .deb ------------------------------------------------------------------
step "dpkg-buildpackage"
cp -r packaging/debian "$SRC/debian"
(cd "$SRC" && dpkg-buildpackage -us -uc -b >"$WORK/deb-build.log" 2>&1) ||
	{ tail -40 "$WORK/deb-build.log"; fail "dpkg-buildpackage failed (log above)"; }
DEB=$(ls "$WORK"/caad_"$VERSION"_*.deb)

step "maintainer scripts"
# removing the package stops caad (which restores the host); that the
# install enables nothing is checked once it is installed, below
dpkg-deb -e "$DEB" "$WORK/deb-control"
grep -q 'deb-systemd-invoke stop .*caad.service' "$WORK/deb-control/prerm" 2>/dev/null ||
	fail "the .deb's prerm does not stop caad.service at removal"

step "lintian"
# No errors or warnings (and no overrides).
lintian --fail-on error,warning --tag-display-limit 0 "$DEB" || fail "lintian found problems"

step "install"
before=$(mktemp)
snapshot() {
	find /etc /usr /lib /var/lib /opt -xdev \
		-path /var/lib/dpkg -prune -o -path /var/lib/apt -prune -o -path /var/lib/systemd -prune -o \
		-path /var/lib/ucf -prune -o -print 2>/dev/null | sort
}
snapshot >"$before"
dpkg -i "$DEB" >/dev/null || fail "dpkg -i failed"

# Every installed path the man pages and README.Debian name, and the rest.
for f in /usr/sbin/caad /usr/bin/caadctl /etc/caad/caad.conf /usr/share/caad/caad.conf \
	/usr/share/dbus-1/system.d/org.caad1.conf /usr/share/bash-completion/completions/caadctl \
	/usr/share/man/man8/caad.8.gz /usr/share/man/man8/caadctl.8.gz /usr/share/man/man5/caad.conf.5.gz \
	/usr/share/doc/caad/README.Debian /usr/share/doc/caad/copyright; do
	[ -e "$f" ] || fail "$f not installed"
done
unit=$(pkg-config --variable=systemdsystemunitdir systemd)/caad.service
[ -e "$unit" ] || fail "$unit not installed"
for page in man/caad.8 man/caadctl.8 man/caad.conf.5; do
	[ -e "$page" ] || continue
	# paths in FILES sections under /usr and /etc that are files shipped by the package
	for p in $(sed -n '/^\.SH FILES/,/^\.SH /p' "$page" | sed 's/\\-/-/g' | grep -oE '/(usr|etc)/[A-Za-z0-9_./-]+' | sort -u); do
		case "$p" in *'*'*|*/caad.conf.d*) continue ;; esac
		[ -e "$p" ] || fail "$page names $p, which the package does not install"
	done
done
grep -q '^/etc/caad/caad.conf$' /var/lib/dpkg/info/caad.conffiles || fail "/etc/caad/caad.conf is not a conffile"
systemctl is-enabled caad.service >/dev/null 2>&1 && fail "caad.service must not be enabled on install"
/usr/sbin/caad --version | grep -q "caad $VERSION" || fail "installed caad --version"
/usr/bin/caadctl --version >/dev/null || fail "installed caadctl --version"

step "installed caad in the netns demo"
./scripts/demo.sh --caad /usr/sbin/caad --duration 6 >"$WORK/demo.log" 2>&1 ||
	{ tail -30 "$WORK/demo.log"; fail "demo with the installed caad failed"; }
grep -q "restores what it changed" "$WORK/demo.log" || fail "demo did not run caad to the end"

step "remove and purge"
dpkg -r caad >/dev/null
[ -e /usr/sbin/caad ] && fail "/usr/sbin/caad left after dpkg -r"
[ -e /etc/caad/caad.conf ] || fail "conffile removed by dpkg -r (only purge may)"
dpkg -P caad >/dev/null
after=$(mktemp)
snapshot >"$after"
# Allowed to change: man-db's cache. Anything else is a leftover.
left=$(comm -13 "$before" "$after" | grep -vE '^/var/cache/man' || true)
[ -z "$left" ] || fail "left behind after purge: $left"
rm -f "$before" "$after"

# ---- .rpm ------------------------------------------------------------------
step "rpmbuild"
mkdir -p "$WORK/rpm/SOURCES"
tar -C "$WORK" -czf "$WORK/rpm/SOURCES/caad-$VERSION.tar.gz" --exclude="caad-$VERSION/debian" "caad-$VERSION"
# (Debian's /bin/sh is dash; rpm's brp-compress needs bash)
rpmbuild -bb --nodeps --define "_topdir $WORK/rpm" --define "__brp_compress bash /usr/lib/rpm/brp-compress /usr" \
	packaging/rpm/caad.spec >"$WORK/rpm-build.log" 2>&1 ||
	{ tail -40 "$WORK/rpm-build.log"; fail "rpmbuild failed (log above)"; }
RPM=$(ls "$WORK"/rpm/RPMS/*/caad-"$VERSION"-*.rpm)
rpm -qp --scripts "$RPM" >"$WORK/rpm-scripts" 2>/dev/null
sed -n '/^preuninstall scriptlet/,/^postuninstall scriptlet/p' "$WORK/rpm-scripts" | grep -q 'caad.service' ||
	{ cat "$WORK/rpm-scripts"; fail "the .rpm's %preun does not stop caad.service at removal"; }

step "rpm and deb ship the same files"
# Normalised: man pages with or without .gz, /lib vs /usr/lib for units,
# and each format's own docs (/usr/share/doc, /usr/share/licenses) aside.
norm() { sed -E 's/\.gz$//; s#^/lib/#/usr/lib/#' | grep -vE '^/usr/share/(doc|licenses)(/|$)' | sort -u; }
dpkg -c "$DEB" | awk '$1 !~ /^d/ {print $6}' | sed 's#^\./#/#' | norm >"$WORK/deb.list"
# directories the rpm owns are not files
rpm -qlvp "$RPM" 2>/dev/null | awk '$1 !~ /^d/ {print $NF}' | norm >"$WORK/rpm.list"
diff -u "$WORK/deb.list" "$WORK/rpm.list" || fail "file lists of the .deb and the .rpm differ"
echo "$(wc -l <"$WORK/deb.list") files in both packages"

if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP"
	cp "$DEB" "$RPM" "$KEEP/"
fi
echo "PASS: packages build, install, run, remove and purge cleanly"
