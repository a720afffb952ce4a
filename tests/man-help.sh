#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# man-help.sh PROGRAM PAGE.8 [CAAD.CONF [CAAD.CONF.5 [CONFIG.C]]]
#
# Keeps the man pages honest:
#  - every long option in "PROGRAM --help" is documented (as an item tag) in
#    the OPTIONS section of PAGE.8, and every long option documented there
#    exists in --help;
#  - when --help has an "Objects:" list (caadctl), each object is documented
#    (as an item tag) in the COMMANDS section of PAGE.8, and every command
#    documented there is in the list;
#  - every key of CAAD.CONF (etc/caad.conf: "Key=" lines, commented out or
#    not) is documented (as an item tag) in CAAD.CONF.5, and every key
#    documented there exists in CAAD.CONF; every [Section] of CAAD.CONF is
#    named in CAAD.CONF.5;
#  - with CONFIG.C (src/lib/config.c): the parser's key table and CAAD.CONF
#    list the same keys.
# Without CAAD.CONF only the program and its page are compared.
# CAAD.CONF.5 defaults to caad.conf.5 next to PAGE.8. The pages are read as
# man(7) source (mdoc's .Sh/.It/Fl are understood too); nothing is rendered.
# Prints what is missing where; exit 0 when all agree, 1 on a mismatch,
# 2 on a usage error.
set -euo pipefail

prog=${0##*/}
usage() {
	echo "usage: $prog PROGRAM PAGE.8 [CAAD.CONF [CAAD.CONF.5 [CONFIG.C]]]" >&2
	exit 2
}
[ $# -ge 2 ] && [ $# -le 5 ] || usage
caad=$1 page=$2 conf=${3:-}
confpage=${4:-$(dirname -- "$page")/caad.conf.5}
config_c=${5:-}
name=${caad##*/}

for f in "$page" ${conf:+"$conf" "$confpage"} ${config_c:+"$config_c"}; do
	[ -r "$f" ] || { echo "$prog: cannot read $f" >&2; exit 2; }
done
[ -x "$caad" ] || { echo "$prog: $caad is not executable" >&2; exit 2; }

fail=0
missing() { # WHAT ITEMS: ITEMS one per line (none: nothing is missing)
	local what=$1 item
	while IFS= read -r item; do
		[ -n "$item" ] || continue
		echo "$prog: $item: $what"
		fail=1
	done <<<"$2"
}

# Roff source -> plain words: font and zero-width escapes dropped, \- and
# \(hy made '-', mdoc's "Fl -x" made "--x" (Fl adds the first dash).
roff_plain() {
	sed -E -e 's/\\f(\[[^]]*\]|\([A-Za-z0-9]{2}|[A-Za-z0-9])//g' \
	       -e 's/\\[&%]//g' -e 's/\\-/-/g' -e 's/\\\(hy/-/g' -e 's/\\\(en/-/g' \
	       -e 's/(^|[[:space:]])Fl[[:space:]]+-/\1--/g'
}

# Item tags of one section of a page (all sections when SECTION is empty):
# the line after .TP/.TQ, the argument of .IP, the rest of .It.
tags() { # PAGE SECTION
	awk -v want="$2" '
		function name(line) {
			sub(/^\.S[Hh][ \t]+/, "", line)
			gsub(/"/, "", line)
			sub(/[ \t]+$/, "", line)
			return line
		}
		/^\.S[Hh]([ \t]|$)/ { in_sec = (want == "" || name($0) == want); tag_next = 0; next }
		!in_sec { next }
		tag_next { print; tag_next = 0; next }
		/^\.(TP|TQ)([ \t]|$)/ { tag_next = 1; next }
		/^\.IP[ \t]/ { sub(/^\.IP[ \t]+/, ""); print; next }
		/^\.It[ \t]/ { sub(/^\.It[ \t]+/, ""); print; next }
	' "$1" | roff_plain
}

# Long options in text: --word, not part of a longer word ("a--b").
long_options() {
	{ grep -oE -- '(^|[^A-Za-z0-9_-])--[a-z][a-z0-9-]*' || true; } | sed -E 's/^[^-]*//; s/-+$//' | sort -u
}

# Keys as Key= at the start of a tag, or after whitespace/punctuation.
tag_keys() {
	{ grep -oE -- '(^|[^A-Za-z0-9_])[A-Z][A-Za-z0-9]*=' || true; } | sed -E 's/^[^A-Z]*//; s/=$//' | sort -u
}

# --- PROGRAM --help vs OPTIONS of PAGE.8 ------------------------------------
if ! help=$("$caad" --help 2>&1); then
	echo "$prog: \"$caad --help\" failed:" >&2
	echo "$help" >&2
	exit 1
fi
help_opts=$(printf '%s\n' "$help" | long_options)
[ -n "$help_opts" ] || { echo "$prog: no long options found in \"$caad --help\"" >&2; exit 1; }

if ! grep -qE '^\.S[Hh][[:space:]]+"?OPTIONS"?[[:space:]]*$' "$page"; then
	echo "$prog: $page has no OPTIONS section"
	exit 1
fi
page_opts=$(tags "$page" OPTIONS | long_options)

missing "in \"$name --help\" but not documented in the OPTIONS section of $page" \
	"$(comm -23 <(printf '%s\n' "$help_opts") <(printf '%s\n' "$page_opts"))"
missing "documented in the OPTIONS section of $page but not in \"$name --help\"" \
	"$(comm -13 <(printf '%s\n' "$help_opts") <(printf '%s\n' "$page_opts"))"

# --- the objects of --help vs COMMANDS of PAGE.8 (caadctl) ------------------
help_objects=$(printf '%s\n' "$help" | awk '/^[A-Z][a-z]*:$/ { in_objects = ($0 == "Objects:"); next }
	in_objects && /^  [a-z]/ { print $1 } /^$/ { in_objects = 0 }' | sort -u)
if [ -n "$help_objects" ]; then
	# the first word of each tag, its font macro (.B, .BR, .BI) and quotes dropped
	page_objects=$(tags "$page" COMMANDS | sed -E 's/^\.[A-Za-z]+[[:space:]]+//; s/"//g' | awk '{ print $1 }' | sort -u)
	[ -n "$page_objects" ] || { echo "$prog: $page has no COMMANDS section with item tags"; exit 1; }
	missing "an object in \"$name --help\" but not documented in the COMMANDS section of $page" \
		"$(comm -23 <(printf '%s\n' "$help_objects") <(printf '%s\n' "$page_objects"))"
	missing "documented in the COMMANDS section of $page but not an object in \"$name --help\"" \
		"$(comm -13 <(printf '%s\n' "$help_objects") <(printf '%s\n' "$page_objects"))"
fi

if [ -z "$conf" ]; then
	if [ "$fail" = 0 ]; then
		echo "$prog: OK: $(printf '%s\n' "$help_opts" | wc -l) long options${help_objects:+ and $(printf '%s\n' "$help_objects" | wc -l) objects} of $name documented"
	fi
	exit "$fail"
fi

# --- etc/caad.conf vs caad.conf.5 -------------------------------------------
conf_keys=$(sed -nE 's/^[[:space:]]*[#;]?[[:space:]]*([A-Z][A-Za-z0-9]*)=.*/\1/p' "$conf" | sort -u)
conf_sections=$(sed -nE 's/^[[:space:]]*[#;]?[[:space:]]*\[([A-Za-z0-9]+)\][[:space:]]*$/\1/p' "$conf" | sort -u)
[ -n "$conf_keys" ] || { echo "$prog: no Key= lines found in $conf" >&2; exit 1; }

page_keys=$(tags "$confpage" "" | tag_keys)

missing "in $conf but not documented in $confpage" \
	"$(comm -23 <(printf '%s\n' "$conf_keys") <(printf '%s\n' "$page_keys") | sed 's/$/=/')"
missing "documented in $confpage but not in $conf" \
	"$(comm -13 <(printf '%s\n' "$conf_keys") <(printf '%s\n' "$page_keys") | sed 's/$/=/')"

confpage_plain=$(roff_plain <"$confpage")
for s in $conf_sections; do
	grep -qF -- "[$s]" <<<"$confpage_plain" || missing "section of $conf not named in $confpage" "[$s]"
done

# --- the parser's key table vs etc/caad.conf --------------------------------
if [ -n "$config_c" ]; then
	parser_keys=$({ grep -oE 'KEY\("[A-Za-z0-9]+",[[:space:]]*"[A-Za-z0-9]+"' "$config_c" || true; } |
		sed -E 's/.*"([A-Za-z0-9]+)"$/\1/' | sort -u)
	[ -n "$parser_keys" ] || { echo "$prog: no KEY(\"Section\", \"Name\", ...) entries found in $config_c" >&2; exit 1; }
	missing "accepted by the parser ($config_c) but not in $conf" \
		"$(comm -23 <(printf '%s\n' "$parser_keys") <(printf '%s\n' "$conf_keys") | sed 's/$/=/')"
	missing "in $conf but not accepted by the parser ($config_c)" \
		"$(comm -13 <(printf '%s\n' "$parser_keys") <(printf '%s\n' "$conf_keys") | sed 's/$/=/')"
fi

if [ "$fail" = 0 ]; then
	n_opts=$(printf '%s\n' "$help_opts" | wc -l)
	n_keys=$(printf '%s\n' "$conf_keys" | wc -l)
	echo "$prog: OK: $n_opts long options and $n_keys configuration keys documented"
fi
exit "$fail"
