/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "caad/json.h"
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
