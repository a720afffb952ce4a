#!/usr/bin/env bash
# Configure (once) and build caad in ./build. Under CI, warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."
werror=false
[ "${CI:-}" = true ] && werror=true
if [ ! -f build/build.ninja ]; then
	meson setup build -Dwerror=$werror
else
	meson configure build -Dwerror=$werror
fi
ninja -C build
