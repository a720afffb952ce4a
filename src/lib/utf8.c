/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdint.h>
#include <stddef.h>

#include "caad/utf8.h"

size_t caad_utf8_sequence(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned n;
	uint32_t cp, min;
	size_t i;

	if (*p < 0x80)
		return 1;
	if ((*p & 0xe0) == 0xc0)
		n = 1, cp = *p & 0x1f, min = 0x80;
	else if ((*p & 0xf0) == 0xe0)
		n = 2, cp = *p & 0x0f, min = 0x800;
	else if ((*p & 0xf8) == 0xf0)
		n = 3, cp = *p & 0x07, min = 0x10000;
	else
		return 0; /* a continuation byte out of place, or 0xf8..0xff */
	for (i = 1; i <= n && (p[i] & 0xc0) == 0x80; i++) /* stops at the NUL */
		cp = cp << 6 | (p[i] & 0x3f);
	if (i <= n || cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n + 1;
}

char *caad_utf8_sanitize(char *s, bool text)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		size_t n;

		if (*p < 0x80) {
			if ((*p < 0x20 && !(text && (*p == '\n' || *p == '\t'))) || *p == 0x7f)
				*p = '?';
			p++;
			continue;
		}
		n = caad_utf8_sequence((const char *)p);
		if (n == 0) {
			*p++ = '?'; /* the rest is looked at again on its own */
			continue;
		}
		if (caad_utf8_is_c1((const char *)p)) {
			p[0] = p[1] = '?';
			p += 2;
			continue;
		}
		p += n;
	}
	return s;
}
