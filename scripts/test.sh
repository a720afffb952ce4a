#!/usr/bin/env bash
# Install dependencies, build, and run caad's whole test suite: unit tests
# (cmocka), the BPF suite (loads and attaches the real programs) and the
# netns/veth integration tests. Needs root for the last two, as in CI.
# Then the .deb and .rpm: both built, the .deb linted, installed, run and
# purged, the .rpm's files compared with it (scripts/package.sh); the same tests under ASan+UBSan and valgrind (scripts/sanitize.sh)
# and each fuzz target for a bounded time (scripts/fuzz.sh); outside CI,
# CAAD_SANITIZE=0 and CAAD_FUZZ_SECONDS=0 skip those.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
./scripts/install-deps.sh
./scripts/build.sh
status=0
timed "tests" meson_test build "$@" || status=1
timed "packages" ./scripts/package.sh || status=1
./scripts/sanitize.sh || status=1
timed "fuzz" ./scripts/fuzz.sh || status=1
exit $status
