/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Numbers for people, and tables that fit. Pure. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "caadctl.h"

/* v scaled by the largest power of 1000 not above it, three significant
 * digits: "1.00", "15.2", "812". */
static void si(uint64_t v, const char *const *units, size_t n_units, char *buf, size_t size)
{
	double x = (double)v;
	size_t u = 0;

	while (u + 1 < n_units && x >= 999.5) {
		x /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%" PRIu64 " %s", v, units[0]);
	else if (x < 9.995)
		snprintf(buf, size, "%.2f %s", x, units[u]);
	else if (x < 99.95)
		snprintf(buf, size, "%.1f %s", x, units[u]);
	else
		snprintf(buf, size, "%.0f %s", x, units[u]);
}

void ctl_format_rate(uint64_t bps, char *buf, size_t size)
{
	static const char *const units[] = { "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s", "Pbit/s", "Ebit/s" };

	si(bps, units, ARRAY_SIZE(units), buf, size);
}

void ctl_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB", "EB" };

	si(bytes, units, ARRAY_SIZE(units), buf, size);
}

void ctl_format_usec(uint64_t usec, char *buf, size_t size)
{
	static const char *const units[] = { "us", "ms", "s" };

	/* the unit and digits of the value as rounded: 999999 us is "1.00 s" */
	si(usec, units, ARRAY_SIZE(units), buf, size);
}

void ctl_format_int(int v, char *buf, size_t size)
{
	if (v < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%d", v);
}

uint64_t ctl_json_count(struct json_object *v)
{
	double d;

	if (json_object_is_type(v, json_type_int)) /* NULL is json_type_null */
		return json_object_get_uint64(v); /* 0 for a negative one */
	if (!json_object_is_type(v, json_type_double))
		return 0;
	d = json_object_get_double(v);
	if (!(d > 0)) /* NaN too */
		return 0;
	return d >= 0x1p64 ? UINT64_MAX : (uint64_t)d;
}

void ctl_format_time(uint64_t when, char *buf, size_t size)
{
	time_t t = (time_t)when;
	struct tm tm;

	if (!when || when > INT64_MAX || (uint64_t)t != when || !localtime_r(&t, &tm) ||
	    !strftime(buf, size, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, size, "-");
}

size_t ctl_text_width(const char *s)
{
	size_t n = mbstowcs(NULL, s, 0), w = 0;
	wchar_t *wcs;
	int k;

	if (n == (size_t)-1)
		return strlen(s);
	wcs = calloc(n + 1, sizeof(wchar_t));
	if (!wcs)
		return strlen(s);
	mbstowcs(wcs, s, n + 1);
	k = wcswidth(wcs, n);
	w = k < 0 ? n : (size_t)k;
	free(wcs);
	return w;
}

/*
 * The width each column needs into w: its widest cell, or its header alone
 * where libsmartcols may cut it. One pass over the lines with an iterator:
 * scols_table_get_line() walks the list from its head, so asking it for
 * each line took time that grew with the square of the flows listed.
 */
static int column_widths(struct libscols_table *tb, size_t *w, size_t n)
{
	struct libscols_iter *it = scols_new_iter(SCOLS_ITER_FORWARD);
	struct libscols_line *ln;

	if (!it)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *h = scols_cell_get_data(scols_column_get_header(scols_table_get_column(tb, i)));

		w[i] = h ? ctl_text_width(h) : 0;
	}
	while (scols_table_next_line(tb, it, &ln) == 0)
		for (size_t i = 0; i < n; i++) {
			const char *d;

			if (scols_column_get_flags(scols_table_get_column(tb, i)) & SCOLS_FL_TRUNC)
				continue;
			d = scols_cell_get_data(scols_line_get_cell(ln, i));
			if (d)
				w[i] = MAX(w[i], ctl_text_width(d));
		}
	scols_free_iter(it);
	return 0;
}

size_t ctl_table_fit(struct libscols_table *tb, size_t width, const size_t *optional, size_t n_optional)
{
	size_t n = scols_table_get_ncols(tb), need = 0, hidden = 0;
	_cleanup_free_ size_t *w = calloc(n + 1, sizeof(size_t));

	if (!width || !w || column_widths(tb, w, n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		need += w[i] + (i > 0); /* one blank between columns */
	for (size_t k = 0; k < n_optional && need > width; k++) {
		struct libscols_column *cl = scols_table_get_column(tb, optional[k]);

		if (!cl || (scols_column_get_flags(cl) & SCOLS_FL_HIDDEN))
			continue;
		scols_column_set_flags(cl, scols_column_get_flags(cl) | SCOLS_FL_HIDDEN);
		need -= w[optional[k]] + 1;
		hidden++;
	}
	return hidden;
}
