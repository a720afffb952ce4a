#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# completion.sh COMPLETIONS/CAADCTL: the bash completion of caadctl, sourced
# as bash-completion would, answers COMPREPLY for objects, prefixes, verbs,
# modes, placements, options and flow ids (from a stand-in caadctl), and
# nothing where nothing fits.
set -euo pipefail
[ $# = 1 ] && [ -r "$1" ] || { echo "usage: ${0##*/} COMPLETIONS/CAADCTL" >&2; exit 2; }
# shellcheck disable=SC1090
. "$1"

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
}

# Alone, as in a shell without bash-completion ...
run_all
# ... and with bash-completion's helpers (_init_completion, _filedir), as installed.
bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || fail "bash-completion not installed ($bc; scripts/install-deps.sh installs it)"
# shellcheck disable=SC1090
. "$bc"
. "$1"
declare -F _init_completion >/dev/null || fail "$bc has no _init_completion"
run_all
echo "PASS: completion (26 command lines, without and with bash-completion)"
