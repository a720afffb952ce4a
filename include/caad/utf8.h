/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

/*
 * Make s valid UTF-8, in place and without changing its length: every byte
 * that does not start a valid, shortest-form UTF-8 sequence of a Unicode
 * scalar value (no surrogates, nothing above U+10FFFF) becomes '?', and so
 * do ASCII control characters and DEL, except newline and tab when text is
 * true. For strings that come from the kernel or users (thread names,
 * interface names) and go where UTF-8 is required (D-Bus, JSON).
 * Returns s.
 */
char *caad_utf8_sanitize(char *s, bool text);
