#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# completion.sh COMPLETIONS/CAADCTL: the bash completion of caadctl, sourced
# as bash-completion would, answers COMPREPLY for objects, prefixes, verbs,
# modes, placements, options and flow ids (from a stand-in caadctl), and
# nothing where nothing fits.
set -euo pipefail
[ $# = 1 ] && [ -r "$1" ] || { echo "usage: ${0##*/} COMPLETIONS/CAADCTL" >&2; exit 2; }
comp=$(realpath -- "$1") # sourced again after the cd below
# shellcheck disable=SC1090
. "$comp"

fail() { echo "FAIL: $*" >&2; exit 1; }

# The stand-in for "caadctl --no-legend flows list".
caadctl() {
	[ "$*" = "--no-legend flows list" ] || return 1
	printf '%s\n' "0xffff888101 vb 0 10.0.0.2:5201 10.0.0.1:40312 iperf3" \
		"0xffff888202 vb 1 10.0.0.2:22 10.0.0.1:50000 sshd"
}

# expect "WANTED REPLIES" WORDS...: complete the last word of the command line
expect() {
	local want=$1 got
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_caadctl caadctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$want" ] || fail "'$*': COMPREPLY is '$got', wanted '$want'"
}

# expect_line "WANTED REPLIES" LINE: complete the end of LINE as bash splits
# it into COMP_WORDS, at blanks and at "=" (a word of its own).
expect_line() {
	local want=$1 line=$2 got
	read -r -a COMP_WORDS <<<"${line//=/ = }"
	# a blank at the end starts an empty word (an "=" at the end is one itself)
	[[ $line == *[[:blank:]] ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	# bash-completion's helpers (_filedir) are not written for set -e
	set +e
	_caadctl caadctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	set -e
	got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$want" ] || fail "'$line': COMPREPLY is '$got', wanted '$want'"
}

run_all() {
	[ "$(complete -p caadctl)" = "complete -F _caadctl caadctl" ] || fail "not registered: $(complete -p caadctl)"
	expect "explain flows metrics mode pause placement plan queues reload restore resume status topology trials" caadctl ""
	expect "pause placement plan" caadctl p
	expect "placement plan" caadctl pla
	expect "reload restore resume" caadctl re
	expect "flows" caadctl fl
	expect "list show" caadctl flows ""
	expect "show" caadctl fl s
	expect "list show" caadctl -j fl ""
	expect "list show" caadctl --topology x.xml fl ""
	expect "0xffff888101 0xffff888202" caadctl flows show ""
	expect "0xffff888101 0xffff888202" caadctl f s 0x
	expect "0xffff888202" caadctl explain 0xffff8882
	expect "0xffff888101 0xffff888202" caadctl e ""
	expect "" caadctl explain 0xffff888101 ""
	expect "dry-run enforce observe" caadctl mode ""
	expect "dry-run" caadctl mo d
	expect "measure prior" caadctl placement ""
	expect "measure" caadctl plac m
	expect "" caadctl placement prior ""
	expect "list" caadctl queues ""
	expect "list" caadctl tr ""
	expect "" caadctl status ""
	expect "" caadctl p ""
	expect "--json" caadctl --js
	expect "--no-legend" caadctl flows --no
	expect "--all --help --json --no-legend --pretty --topology --version -a -h -j -p" caadctl -
	# --topology=FILE, as caadctl(8) writes it: FILE is no object
	expect_line "topology trials" "caadctl --topology=x.xml t"
	expect_line "list show" "caadctl --topology=x.xml flows "
	expect_line "list show" "caadctl --topology x.xml flows "
	# ... and its FILE is a file
	expect_line "$fixture" "caadctl --topology=${fixture%.xml}"
	expect_line "$fixture" "caadctl --topology ${fixture%.xml}"
	expect_line "$fixture" "caadctl --topology="
}

# a file for --topology to complete (in the current directory: _filedir
# completes names relative to it)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fixture=caadctl-completion-fixture.xml
: >"$fixture"

# Alone, as in a shell without bash-completion ...
run_all
# ... and with bash-completion's helpers (_init_completion, _filedir), as installed.
bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || fail "bash-completion not installed ($bc; scripts/install-deps.sh installs it)"
# shellcheck disable=SC1090
. "$bc"
# shellcheck disable=SC1090
. "$comp"
declare -F _init_completion >/dev/null || fail "$bc has no _init_completion"
run_all
echo "PASS: completion (32 command lines, without and with bash-completion)"
