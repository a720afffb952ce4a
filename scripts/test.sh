#!/usr/bin/env bash
# Install dependencies, build, and run caad's whole test suite: unit tests
# (cmocka), the BPF suite (loads and attaches the real programs) and the
# netns/veth integration tests. Needs root for the last two, as in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
status=0
meson test -C build --print-errorlogs "$@" || status=$?
# A skipped test is a failure here: root/BPF/netns tests must run.
if grep -q '"result": "SKIP"' build/meson-logs/testlog.json 2>/dev/null; then
	echo "error: tests were skipped (see above); the whole suite must run (as root)" >&2
	status=1
fi
exit $status
