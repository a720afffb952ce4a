/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdio.h>

struct json_object;

/* Write s as a JSON string literal (quoted, escaped) to f. NULL -> null. */
void caad_json_string(FILE *f, const char *s);

/* Write a name (an interface's, a thread's) as caad's D-Bus strings carry
 * it: caad_utf8_sanitize()'d ('?' for each byte that starts no valid
 * sequence, and for each control character), then as caad_json_string().
 * A name in GetTopology's or GetTrials' JSON is then the same string as in
 * ListFlows, ListQueues and Interfaces, and the two join. NULL -> null. */
void caad_json_name(FILE *f, const char *s);

/*
 * Parse text[0..len) as one JSON document, as strictly as JSON is written:
 * no NUL byte, no trailing comma, no text after the value, no key twice in
 * one object, no escape in a key (a twin of another key in disguise), no
 * single quotes, no \u0000 in a string (json-c lets the last five through,
 * or reads them otherwise than the text says). On
 * error -EINVAL with *ret_error "FILE:LINE:COL: invalid JSON: why" (FILE
 * as given), -EFBIG for more than 2 GiB, or -ENOMEM. The document null
 * is 0 with *ret NULL.
 */
int caad_json_parse_text(const char *text, size_t len, const char *file, struct json_object **ret, char **ret_error);
