/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A strict reader of the Prometheus text exposition format 0.0.4, for
 * "caadctl metrics --json" and for the tests that check caad's metrics
 * (tests/prom-lint.c). Stricter than Prometheus itself where caad's own
 * output can afford it: HELP and TYPE are required, in that order, before a
 * family's samples; no blank lines; counters end in _total.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/utf8.h"
#include "caadctl.h"

struct reader {
	struct ctl_prom *p;
	struct ctl_prom_family *cur;
	unsigned line;
	char *err;
	size_t err_size;
};

static int bad(struct reader *r, const char *fmt, ...) _printf_(2, 3);
static int bad(struct reader *r, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->err_size)
		snprintf(r->err, r->err_size, "line %u: %s", r->line, msg);
	return -EINVAL;
}

static bool name_char(char c, bool first, bool metric)
{
	return isalpha((unsigned char)c) || c == '_' || (metric && c == ':') || (!first && isdigit((unsigned char)c));
}

/* Length of the metric (or label) name at s, 0 if none. */
static size_t name_len(const char *s, bool metric)
{
	size_t n = 0;

	while (s[n] && name_char(s[n], n == 0, metric))
		n++;
	return n;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && streq(s + a - b, suffix);
}

static void family_done(struct ctl_prom_family *f)
{
	free(f->name);
	free(f->type);
	free(f->help);
	for (size_t i = 0; i < f->n_samples; i++) {
		struct ctl_prom_sample *s = &f->samples[i];

		free(s->name);
		free(s->value);
		for (size_t k = 0; k < s->n_labels; k++) {
			free(s->labels[k].name);
			free(s->labels[k].value);
		}
		free(s->labels);
	}
	free(f->samples);
}

void ctl_prom_free(struct ctl_prom *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_families; i++)
		family_done(&p->families[i]);
	free(p->families);
	free(p);
}

static struct ctl_prom_family *family_find(const struct ctl_prom *p, const char *name)
{
	for (size_t i = 0; i < p->n_families; i++)
		if (streq(p->families[i].name, name))
			return &p->families[i];
	return NULL;
}

/* HELP text: "\\" and "\n" are the only escapes. */
static int parse_help(struct reader *r, const char *s, char **ret)
{
	_cleanup_free_ char *out = malloc(strlen(s) + 1);
	size_t o = 0;

	if (!out)
		return -ENOMEM;
	for (; *s; s++) {
		if (*s != '\\') {
			out[o++] = *s;
			continue;
		}
		s++;
		if (*s == '\\')
			out[o++] = '\\';
		else if (*s == 'n')
			out[o++] = '\n';
		else
			return bad(r, "invalid escape '\\%c' in HELP (only \\\\ and \\n)", *s ? *s : ' ');
	}
	out[o] = '\0';
	*ret = TAKE_PTR(out);
	return 0;
}

static int parse_comment(struct reader *r, char *line)
{
	char *name, *rest;
	size_t n;
	bool help;

	if (strncmp(line, "# HELP ", 7) == 0)
		help = true;
	else if (strncmp(line, "# TYPE ", 7) == 0)
		help = false;
	else
		return bad(r, "a comment other than '# HELP' or '# TYPE': %s", line);

	name = line + 7;
	n = name_len(name, true);
	if (n == 0 || name[n] != ' ' || name[n + 1] == '\0')
		return bad(r, "expected '# %s NAME %s'", help ? "HELP" : "TYPE", help ? "TEXT" : "TYPE");
	name[n] = '\0';
	rest = name + n + 1;

	if (help) {
		struct ctl_prom_family *f;

		if (family_find(r->p, name))
			return bad(r, "family %s again: its HELP must come once, before its samples", name);
		f = reallocarray(r->p->families, r->p->n_families + 1, sizeof(*f));
		if (!f)
			return -ENOMEM;
		r->p->families = f;
		r->cur = &f[r->p->n_families++];
		*r->cur = (struct ctl_prom_family){ .name = strdup(name) };
		if (!r->cur->name)
			return -ENOMEM;
		return parse_help(r, rest, &r->cur->help);
	}

	if (!r->cur || !streq(r->cur->name, name) || r->cur->type || r->cur->n_samples)
		return bad(r, "TYPE of %s must follow its HELP, before its samples", name);
	if (!streq(rest, "counter") && !streq(rest, "gauge") && !streq(rest, "histogram") &&
	    !streq(rest, "summary") && !streq(rest, "untyped"))
		return bad(r, "unknown type '%s' of %s", rest, name);
	if (streq(rest, "counter") != ends_with(name, "_total"))
		return bad(r, "%s: counters, and only counters, end in _total", name);
	r->cur->type = strdup(rest);
	return r->cur->type ? 0 : -ENOMEM;
}

/* Go's strconv.ParseFloat as Prometheus uses it: decimal, optional
 * exponent, or NaN/+Inf/-Inf/Inf. No hex, no blanks. */
static int parse_value(const char *s, double *ret)
{
	const char *p = s;
	char *end;

	if (streq(s, "NaN")) {
		*ret = NAN;
		return 0;
	}
	if (streq(s, "+Inf") || streq(s, "Inf")) {
		*ret = INFINITY;
		return 0;
	}
	if (streq(s, "-Inf")) {
		*ret = -INFINITY;
		return 0;
	}
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return -EINVAL;
	for (const char *q = p; *q; q++)
		if (!isdigit((unsigned char)*q) && !strchr(".eE+-", *q))
			return -EINVAL;
	errno = 0;
	*ret = strtod(s, &end);
	if (*end || end == s || (errno == ERANGE && isinf(*ret)))
		return -EINVAL;
	return 0;
}

/* Which family a sample name belongs to, by the family's type. */
static bool sample_of(const struct ctl_prom_family *f, const char *name)
{
	if (streq(name, f->name))
		return !streq(f->type, "histogram");
	if (strncmp(name, f->name, strlen(f->name)) != 0)
		return false;
	name += strlen(f->name);
	if (streq(f->type, "histogram"))
		return streq(name, "_bucket") || streq(name, "_sum") || streq(name, "_count");
	if (streq(f->type, "summary"))
		return streq(name, "_sum") || streq(name, "_count");
	return false;
}

static bool same_series(const struct ctl_prom_sample *a, const struct ctl_prom_sample *b)
{
	if (!streq(a->name, b->name) || a->n_labels != b->n_labels)
		return false;
	for (size_t i = 0; i < a->n_labels; i++) {
		bool found = false;
		for (size_t k = 0; k < b->n_labels && !found; k++)
			found = streq(a->labels[i].name, b->labels[k].name) && streq(a->labels[i].value, b->labels[k].value);
		if (!found)
			return false;
	}
	return true;
}

static int parse_labels(struct reader *r, char **pp, struct ctl_prom_sample *s)
{
	char *p = *pp + 1; /* after '{' */

	while (*p != '}') {
		struct ctl_prom_label *l;
		size_t n = name_len(p, false);
		char *v;

		if (n == 0)
			return bad(r, "invalid label name at '%s'", p);
		if (p[n] != '=' || p[n + 1] != '"')
			return bad(r, "expected '=\"' after label name %.*s", (int)n, p);
		if (n >= 2 && p[0] == '_' && p[1] == '_')
			return bad(r, "label name %.*s is reserved (starts with __)", (int)n, p);
		for (size_t i = 0; i < s->n_labels; i++)
			if (strlen(s->labels[i].name) == n && strncmp(s->labels[i].name, p, n) == 0)
				return bad(r, "label %.*s twice", (int)n, p);
		l = reallocarray(s->labels, s->n_labels + 1, sizeof(*l));
		if (!l)
			return -ENOMEM;
		s->labels = l;
		l = &l[s->n_labels++];
		*l = (struct ctl_prom_label){ .name = strndup(p, n), .value = v = malloc(strlen(p) + 1) };
		if (!l->name || !v)
			return -ENOMEM;
		for (p += n + 2; *p != '"'; p++) {
			if (*p == '\0')
				return bad(r, "unterminated label value");
			if (*p != '\\') {
				*v++ = *p;
				continue;
			}
			p++;
			if (*p == '\\' || *p == '"')
				*v++ = *p;
			else if (*p == 'n')
				*v++ = '\n';
			else
				return bad(r, "invalid escape '\\%c' in a label value (only \\\\, \\\" and \\n)",
				           *p ? *p : ' ');
		}
		*v = '\0';
		p++;
		if (*p == ',')
			p++;
		else if (*p != '}')
			return bad(r, "expected ',' or '}' after a label value");
	}
	*pp = p + 1;
	return 0;
}

static int parse_sample(struct reader *r, char *line)
{
	struct ctl_prom_family *f = r->cur;
	struct ctl_prom_sample *s;
	char *p = line, *value, *ts;
	size_t n = name_len(line, true);
	int k;

	if (n == 0)
		return bad(r, "invalid metric name: %s", line);
	if (!f || !f->type)
		return bad(r, "sample %.*s before its family's HELP and TYPE", (int)n, line);
	s = reallocarray(f->samples, f->n_samples + 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	f->samples = s;
	s = &s[f->n_samples++];
	*s = (struct ctl_prom_sample){ .name = strndup(line, n) };
	if (!s->name)
		return -ENOMEM;
	if (!sample_of(f, s->name))
		return family_find(r->p, s->name) && family_find(r->p, s->name) != f
		               ? bad(r, "sample of family %s after other families: a family's samples are contiguous",
		                     s->name)
		               : bad(r, "sample %s is not of the current family %s (%s)", s->name, f->name, f->type);
	p += n;
	if (*p == '{') {
		k = parse_labels(r, &p, s);
		if (k < 0)
			return k;
	}
	if (*p != ' ' || p[1] == ' ' || p[1] == '\0')
		return bad(r, "expected one space and a value after %s", s->name);
	value = p + 1;
	ts = strchr(value, ' ');
	if (ts) {
		const char *digits;

		*ts++ = '\0';
		digits = ts + (*ts == '-');
		errno = 0;
		if (!*digits || strspn(digits, "0123456789") != strlen(digits) || (strtoll(ts, NULL, 10), errno))
			return bad(r, "invalid timestamp '%s' (milliseconds, a 64-bit integer)", ts);
	}
	if (parse_value(value, &s->v) < 0)
		return bad(r, "invalid value '%s'", value);
	s->value = strdup(value);
	if (!s->value)
		return -ENOMEM;
	if (streq(f->type, "counter") && (s->v < 0 || isnan(s->v)))
		return bad(r, "counter %s is %s: counters are never negative", s->name, value);
	if (streq(f->type, "histogram") && streq(s->name + strlen(f->name), "_bucket")) {
		bool le = false;
		for (size_t i = 0; i < s->n_labels; i++)
			le = le || streq(s->labels[i].name, "le");
		if (!le)
			return bad(r, "histogram bucket without an 'le' label");
	}
	for (size_t i = 0; i + 1 < f->n_samples; i++)
		if (same_series(&f->samples[i], s))
			return bad(r, "series %s with these labels twice", s->name);
	return 0;
}

int ctl_prom_parse(const char *text, struct ctl_prom **ret, char *err, size_t err_size)
{
	_cleanup_(ctl_prom_freep) struct ctl_prom *p = calloc(1, sizeof(*p));
	struct reader r = { .p = p, .err = err, .err_size = err_size };
	_cleanup_free_ char *copy = strdup(text ? text : "");
	char *line, *next;
	int k;

	if (!p || !copy)
		return -ENOMEM;
	if (err_size)
		err[0] = '\0';
	if (!*copy)
		return bad(&r, "empty: no metrics at all");
	if (copy[strlen(copy) - 1] != '\n') {
		r.line = 1;
		for (const char *c = copy; *c; c++)
			r.line += *c == '\n';
		return bad(&r, "the last line does not end with a newline");
	}
	for (line = copy; *line; line = next) {
		char *nl = strchr(line, '\n');

		*nl = '\0';
		next = nl + 1;
		r.line++;
		if (nl > line && nl[-1] == '\r')
			return bad(&r, "carriage return: lines end with \\n only");
		if (*line == '\0')
			return bad(&r, "blank line");
		if (isspace((unsigned char)*line) || isspace((unsigned char)nl[-1]))
			return bad(&r, "leading or trailing blanks");
		for (const char *c = line; *c; c++) {
			size_t n = caad_utf8_sequence(c);

			if ((unsigned char)*c < 0x20 && *c != '\t')
				return bad(&r, "control character 0x%02x", (unsigned)*c);
			/* the format is UTF-8: Prometheus refuses a label value or
			 * HELP of another, and JSON made of it would not be JSON */
			if (n == 0)
				return bad(&r, "a byte 0x%02x of no valid UTF-8 sequence", (unsigned)(unsigned char)*c);
			c += n - 1;
		}
		k = *line == '#' ? parse_comment(&r, line) : parse_sample(&r, line);
		if (k < 0)
			return k;
	}
	for (size_t i = 0; i < p->n_families; i++)
		if (!p->families[i].type) {
			r.line++;
			return bad(&r, "family %s has a HELP but no TYPE", p->families[i].name);
		}
	*ret = TAKE_PTR(p);
	return 0;
}

/* Whether s is a JSON number as written: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? */
static bool json_number_text(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (isdigit((unsigned char)*s))
			s++;
	else
		return false;
	if (*s == '.') {
		if (!isdigit((unsigned char)*++s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		if (*++s == '+' || *s == '-')
			s++;
		if (!isdigit((unsigned char)*s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return *s == '\0';
}

/* A value as JSON: the number as written when that is a JSON number
 * (Prometheus also takes "+1", ".5", "007"), else as json-c writes the
 * double; a string for NaN and the infinities (not JSON numbers). */
static struct json_object *json_value(const struct ctl_prom_sample *s)
{
	if (isnan(s->v) || isinf(s->v))
		return json_object_new_string(s->value);
	if (!json_number_text(s->value))
		return json_object_new_double(s->v);
	return json_object_new_double_s(s->v, s->value);
}

struct json_object *ctl_prom_to_json(const struct ctl_prom *p)
{
	struct json_object *families = json_object_new_array();

	for (size_t i = 0; families && i < p->n_families; i++) {
		const struct ctl_prom_family *f = &p->families[i];
		struct json_object *fo = json_object_new_object(), *samples = json_object_new_array();

		json_object_object_add(fo, "name", json_object_new_string(f->name));
		json_object_object_add(fo, "type", json_object_new_string(f->type));
		json_object_object_add(fo, "help", json_object_new_string(f->help));
		for (size_t k = 0; k < f->n_samples; k++) {
			const struct ctl_prom_sample *s = &f->samples[k];
			struct json_object *so = json_object_new_object(), *labels = json_object_new_object();

			for (size_t l = 0; l < s->n_labels; l++)
				json_object_object_add(labels, s->labels[l].name, json_object_new_string(s->labels[l].value));
			json_object_object_add(so, "name", json_object_new_string(s->name));
			json_object_object_add(so, "labels", labels);
			json_object_object_add(so, "value", json_value(s));
			json_object_array_add(samples, so);
		}
		json_object_object_add(fo, "samples", samples);
		json_object_array_add(families, fo);
	}
	return families;
}
