/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "caad/json.h"
#include "caad/macro.h"
#include "caad/utf8.h"

void caad_json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(f, "\\u%04x", *p);
			} else if (*p >= 0x80) {
				/* JSON is UTF-8: a byte that starts no valid sequence
				 * (a thread name cut in a character) is U+FFFD */
				size_t n = caad_utf8_sequence((const char *)p);

				if (n == 0) {
					fputs("\\ufffd", f);
				} else if (caad_utf8_is_c1((const char *)p)) {
					/* a C1 control, escaped as ASCII ones are: a
					 * terminal showing the JSON acts on none */
					fprintf(f, "\\u%04x", p[1]);
					p++;
				} else {
					fwrite(p, 1, n, f);
					p += n - 1;
				}
			} else {
				fputc(*p, f);
			}
		}
	}
	fputc('"', f);
}

void caad_json_name(FILE *f, const char *s)
{
	_cleanup_free_ char *copy = s ? strdup(s) : NULL;

	/* no memory: the name as it is (still valid JSON, only not cleaned) */
	caad_json_string(f, copy ? caad_utf8_sanitize(copy, false) : s);
}

/* Line and column (from 1) of byte offset off. */
static void line_col(const char *text, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else
			(*col)++;
	}
}

/*
 * What json-c's strict mode lets through that JSON does not allow, or reads
 * otherwise than the text says, in text (parsed by it already): a key twice
 * in one object (the last would win, silently), a single-quoted string,
 * \u0000 in a string (which would cut it there), a lone UTF-16 surrogate
 * (which would read as U+FFFD, as another would), and NaN or Infinity. 1 with *ret_at and
 * *ret_what for the first such place, 0 none, -ENOMEM.
 */
struct json_key {
	size_t at, len; /* the key's text, quotes excluded */
};

/* By text, then by place: a repeat comes right after its twin. */
static int cmp_json_key(const void *a, const void *b, void *text)
{
	const struct json_key *x = a, *y = b;
	int c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	c = memcmp((const char *)text + x->at, (const char *)text + y->at, x->len);
	if (c)
		return c;
	return (x->at > y->at) - (x->at < y->at);
}

/* Four hex digits as a number, or UINT_MAX where they are not (json-c
 * has already refused a malformed \\u, but this does not rely on it). */
static unsigned hex4(const char *p)
{
	unsigned v = 0;

	for (int k = 0; k < 4; k++) {
		int d = caad_hex_digit(p[k]);

		if (d < 0)
			return UINT_MAX;
		v = v * 16 + (unsigned)d;
	}
	return v;
}

static int not_strict(const char *text, size_t len, size_t *ret_at, const char **ret_what)
{
	_cleanup_free_ struct json_key *keys = NULL; /* of the objects open, innermost last */
	_cleanup_free_ size_t *open = NULL;     /* per nesting level: its first key's index; SIZE_MAX: an array */
	size_t n_keys = 0, cap_keys = 0, depth = 0, cap_open = 0;

	for (size_t i = 0; i < len; i++) {
		char ch = text[i];

		if (ch == '\'') {
			*ret_at = i;
			*ret_what = "a single quote: strings take double quotes";
			return 1;
		}
		/* outside strings, JSON's only words are true, false and null;
		 * json-c takes NaN and Infinity as numbers */
		if (ch == 'N' || ch == 'I') {
			*ret_at = i;
			*ret_what = "NaN or Infinity: not a JSON number";
			return 1;
		}
		if (ch == '{' || ch == '[') {
			if (depth == cap_open) {
				size_t c = cap_open ? 2 * cap_open : 16, *n = reallocarray(open, c, sizeof(*n));

				if (!n)
					return -ENOMEM;
				open = n;
				cap_open = c;
			}
			open[depth++] = ch == '{' ? n_keys : SIZE_MAX;
			continue;
		}
		if (ch == '}' || ch == ']') {
			size_t first, dup = SIZE_MAX;

			if (depth == 0 || open[--depth] == SIZE_MAX)
				continue;
			/* an object's keys, sorted when it closes: n log n, where
			 * each key against every one before it was n^2 (a
			 * million keys in one object: hours) */
			first = open[depth];
			if (n_keys - first > 1)
				qsort_r(keys + first, n_keys - first, sizeof(*keys), cmp_json_key, (void *)text);
			for (size_t j = first + 1; j < n_keys; j++)
				if (keys[j].len == keys[j - 1].len &&
				    memcmp(text + keys[j].at, text + keys[j - 1].at, keys[j].len) == 0)
					dup = MIN(dup, keys[j].at);
			if (dup != SIZE_MAX) {
				*ret_at = dup - 1; /* its opening quote */
				*ret_what = "a key twice in one object";
				return 1;
			}
			n_keys = first;
			continue;
		}
		if (ch != '"')
			continue;
		size_t start = ++i;
		bool escaped = false;
		for (; i < len && text[i] != '"'; i++) {
			if (text[i] != '\\')
				continue;
			escaped = true;
			if (i + 5 < len && text[i + 1] == 'u') {
				unsigned u = hex4(text + i + 2);

				if (u == 0) {
					*ret_at = i;
					*ret_what = "\\u0000 in a string";
					return 1;
				}
				/* json-c makes a lone surrogate U+FFFD: two
				 * strings that differ would read as one */
				if (u >= 0xdc00 && u <= 0xdfff) {
					*ret_at = i;
					*ret_what = "a lone UTF-16 surrogate (\\uDC00-\\uDFFF without a \\uD800-\\uDBFF before it)";
					return 1;
				}
				if (u >= 0xd800 && u <= 0xdbff) {
					unsigned low = i + 11 < len && text[i + 6] == '\\' && text[i + 7] == 'u'
					                       ? hex4(text + i + 8)
					                       : UINT_MAX;

					if (low < 0xdc00 || low > 0xdfff) {
						*ret_at = i;
						*ret_what = "a lone UTF-16 surrogate (\\uD800-\\uDBFF without a \\uDC00-\\uDFFF after it)";
						return 1;
					}
					i += 6; /* the pair's second half, checked */
				}
			}
			i++; /* the escaped character */
		}
		size_t k = i + 1;
		while (k < len && isspace((unsigned char)text[k]))
			k++;
		if (depth == 0 || open[depth - 1] == SIZE_MAX || k >= len || text[k] != ':')
			continue; /* a value */
		/* a key spelled with an escape ("if\u0061ce") is another key's
		 * twin that the raw text does not show (json-c keeps the last);
		 * none of caad's keys needs one */
		if (escaped) {
			*ret_at = start - 1;
			*ret_what = "an escape in a key";
			return 1;
		}
		if (n_keys == cap_keys) {
			size_t c = cap_keys ? 2 * cap_keys : 64;
			struct json_key *n = reallocarray(keys, c, sizeof(*n));

			if (!n)
				return -ENOMEM;
			keys = n;
			cap_keys = c;
		}
		keys[n_keys++] = (struct json_key){ start, i - start };
	}
	return 0;
}

int caad_json_parse_text(const char *text, size_t len, const char *file, struct json_object **ret, char **ret_error)
{
	json_tokener *tok;
	json_object *root;
	unsigned line, col;
	size_t end;
	int r;

	*ret = NULL;
	*ret_error = NULL;
	if (memchr(text, '\0', len)) {
		line_col(text, (size_t)((const char *)memchr(text, '\0', len) - text), &line, &col);
		if (asprintf(ret_error, "%s:%u:%u: invalid JSON: a NUL byte", file, line, col) < 0)
			*ret_error = NULL;
		return -EINVAL;
	}
	if (len > INT32_MAX) {
		if (asprintf(ret_error, "%s: larger than %d bytes", file, INT32_MAX) < 0)
			*ret_error = NULL;
		return -EFBIG;
	}

	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	/* no trailing commas, and UTF-8 only (the rest: not_strict()) */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	/* a scalar at the very end ("7", "null": a file whose reader trimmed
	 * its newline) is not over until a character follows: a space ends
	 * it, and tells an unfinished document from a whole one */
	if (jerr == json_tokener_continue && end == len) {
		root = json_tokener_parse_ex(tok, " ", 1);
		jerr = json_tokener_get_error(tok);
	}
	json_tokener_free(tok);

	/* (the document null: success, and no object) */
	if (jerr != json_tokener_success) {
		if (jerr == json_tokener_continue)
			jerr = json_tokener_error_parse_eof;
		json_object_put(root);
		line_col(text, MIN(end, len), &line, &col);
		if (asprintf(ret_error, "%s:%u:%u: invalid JSON: %s", file, line, col, json_tokener_error_desc(jerr)) <
		    0)
			*ret_error = NULL;
		return -EINVAL;
	}
	while (end < len && isspace((unsigned char)text[end]))
		end++;
	if (end < len) {
		json_object_put(root);
		line_col(text, end, &line, &col);
		if (asprintf(ret_error, "%s:%u:%u: invalid JSON: text after the top-level value", file, line, col) < 0)
			*ret_error = NULL;
		return -EINVAL;
	}
	{
		const char *what = NULL;
		size_t at;

		r = not_strict(text, len, &at, &what);
		if (r != 0) {
			json_object_put(root);
			if (r < 0)
				return r;
			line_col(text, at, &line, &col);
			if (asprintf(ret_error, "%s:%u:%u: invalid JSON: %s", file, line, col, what) < 0)
				*ret_error = NULL;
			return -EINVAL;
		}
	}

	*ret = root;
	return 0;
}
