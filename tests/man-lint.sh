#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# man-lint.sh DIR: every man page in DIR (*.[1-9]) renders without a warning
# from mandoc (-T lint -W warning) or groff (-man -ww -z). Exit 0 when all
# are clean, 1 otherwise, 2 on a usage error or a missing tool.
set -uo pipefail

prog=${0##*/}
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: $prog DIR" >&2; exit 2; }
for t in mandoc groff; do
	command -v "$t" >/dev/null || { echo "$prog: $t not installed (scripts/install-deps.sh installs it)" >&2; exit 2; }
done

fail=0 n=0
for page in "$1"/*.[1-9]; do
	[ -e "$page" ] || continue
	n=$((n + 1))
	out=$(mandoc -T lint -W warning "$page" 2>&1) || true
	[ -z "$out" ] || { echo "$out"; fail=1; }
	out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1) || true
	[ -z "$out" ] || { echo "$page (groff): $out"; fail=1; }
done
[ "$n" -gt 0 ] || { echo "$prog: no man pages in $1" >&2; exit 2; }
[ "$fail" = 0 ] && echo "$prog: OK: $n pages render without warnings"
exit "$fail"
