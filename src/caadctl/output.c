/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What caadctl prints: errors, JSON (json-c) and tables (libsmartcols). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "caad/utf8.h"
#include "caadctl.h"

static int fail_v(struct ctl *c, int status, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (c->json) {
		/* what the user typed may be any bytes; JSON is UTF-8 */
		caad_utf8_sanitize(msg, true);
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "error", json_object_new_string(msg));
		(void)ctl_json_print(c, o);
	} else {
		fflush(stdout);
		fprintf(stderr, "caadctl: %s\n", msg);
		if (status == EXIT_USAGE)
			fputs("Try 'caadctl --help' for more information.\n", stderr);
	}
	return status;
}

int ctl_fail(struct ctl *c, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fail_v(c, EXIT_FAILURE, fmt, ap);
	va_end(ap);
	return r;
}

int ctl_usage_error(struct ctl *c, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fail_v(c, EXIT_USAGE, fmt, ap);
	va_end(ap);
	return r;
}

int ctl_json_print(struct ctl *c, struct json_object *o)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE | (c->pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
	                                                        : JSON_C_TO_STRING_PLAIN);
	const char *s;
	int r = 0;

	if (!o)
		return ctl_fail(c, "Out of memory");
	s = json_object_to_json_string_ext(o, flags);
	if (!s || puts(s) < 0 || fflush(stdout) != 0)
		r = EXIT_FAILURE;
	json_object_put(o);
	return r;
}

struct json_object *ctl_json_string(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

struct json_object *ctl_json_int_or_null(int v)
{
	return v < 0 ? NULL : json_object_new_int(v);
}

struct libscols_table *ctl_table_new(struct ctl *c)
{
	struct libscols_table *tb = scols_new_table();

	if (!tb)
		return NULL;
	/* a terminal: fit its width; a pipe: print everything */
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_AUTO);
	scols_table_enable_noheadings(tb, !c->legend);
	return tb;
}

int ctl_table_column(struct libscols_table *tb, const char *name, double whint, int flags)
{
	struct libscols_column *cl = scols_table_new_column(tb, name, whint, flags);

	return cl ? 0 : -ENOMEM;
}

int ctl_table_print(struct ctl *c, struct libscols_table *tb)
{
	int r = scols_print_table(tb);

	if (r < 0 || fflush(stdout) != 0)
		return ctl_fail(c, "Failed to print the table: %s", strerror(r < 0 ? -r : errno));
	return 0;
}

size_t ctl_terminal_width(void)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
		return 0;
	return ws.ws_col;
}
