/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Make s valid UTF-8, in place and without changing its length: every byte
 * that does not start a valid, shortest-form UTF-8 sequence of a Unicode
 * scalar value (no surrogates, nothing above U+10FFFF) becomes '?', and so
 * do ASCII control characters and DEL, except newline and tab when text is
 * true, and the C1 controls U+0080..U+009F (each byte of them). For
 * strings that come from the kernel or users (thread names, interface
 * names) and go where UTF-8 is required (D-Bus, JSON).
 * Returns s.
 */
char *caad_utf8_sanitize(char *s, bool text);

/* The length of the valid UTF-8 sequence (as above) s starts with: 1 for
 * an ASCII byte (NUL included), 0 when s does not start one. */
size_t caad_utf8_sequence(const char *s);

/* Whether s starts with a C1 control (U+0080..U+009F: 0xc2 0x80..0x9f),
 * valid UTF-8 that a terminal may act on as it does on ESC (U+009B is
 * CSI). */
static inline bool caad_utf8_is_c1(const char *s)
{
	return (unsigned char)s[0] == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] < 0xa0;
}
