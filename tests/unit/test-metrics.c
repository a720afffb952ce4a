/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caad_metrics_format() against a strict reader of the Prometheus text
 * format 0.0.4: every family has exactly one HELP and one TYPE line before
 * its samples, names and label names are valid, label values use only the
 * three escapes, values parse completely, counters end in _total and are
 * whole numbers, nothing else appears (no blank lines, no stray text).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "caad/macro.h"
#include "caad/utf8.h"
#include "caad/metrics.h"

#define MAX_SAMPLES 64
#define MAX_FAMILIES 32

struct sample {
	char name[64];
	char labels[256]; /* unescaped, "k=v,k=v" in order */
	char value[64];   /* as written */
	double v;
};

struct family {
	char name[64];
	char type[16];
	bool help;
};

struct exposition {
	struct sample samples[MAX_SAMPLES];
	size_t n_samples;
	struct family families[MAX_FAMILIES];
	size_t n_families;
};

static bool name_ok(const char *s, size_t n, bool metric)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_' || (metric && s[0] == ':')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || (metric && s[i] == ':')))
			return false;
	return true;
}

static struct family *family_find(struct exposition *e, const char *name)
{
	for (size_t i = 0; i < e->n_families; i++)
		if (streq(e->families[i].name, name))
			return &e->families[i];
	return NULL;
}

/* Fails the test on the first violation; line numbers in the message. */
static void parse(const char *text, struct exposition *e)
{
	struct family *cur = NULL;
	unsigned lineno = 0;
	const char *p = text;

	memset(e, 0, sizeof(*e));
	assert_true(*text != '\0');
	assert_int_equal(text[strlen(text) - 1], '\n');

	while (*p) {
		const char *eol = strchr(p, '\n');
		char line[512];
		size_t len;

		assert_non_null(eol);
		len = (size_t)(eol - p);
		lineno++;
		if (len == 0 || len >= sizeof(line))
			fail_msg("line %u: empty or too long", lineno);
		memcpy(line, p, len);
		line[len] = '\0';
		p = eol + 1;

		if (strncmp(line, "# HELP ", 7) == 0) {
			char *name = line + 7, *sp = strchr(name, ' ');
			if (!sp || !name_ok(name, (size_t)(sp - name), true) || sp[1] == '\0')
				fail_msg("line %u: bad HELP: %s", lineno, line);
			*sp = '\0';
			if (family_find(e, name))
				fail_msg("line %u: second HELP for %s", lineno, name);
			for (const char *h = sp + 1; *h; h++)
				if (*h == '\\' && h[1] != '\\' && h[1] != 'n')
					fail_msg("line %u: bad escape in HELP", lineno);
			assert_true(e->n_families < MAX_FAMILIES);
			cur = &e->families[e->n_families++];
			snprintf(cur->name, sizeof(cur->name), "%.63s", name);
			cur->help = true;
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			char *name = line + 7, *sp = strchr(name, ' ');
			if (!sp)
				fail_msg("line %u: bad TYPE: %s", lineno, line);
			*sp = '\0';
			if (!cur || !streq(cur->name, name) || cur->type[0])
				fail_msg("line %u: TYPE %s not right after its HELP", lineno, name);
			if (!streq(sp + 1, "counter") && !streq(sp + 1, "gauge"))
				fail_msg("line %u: type '%s' is not counter or gauge", lineno, sp + 1);
			snprintf(cur->type, sizeof(cur->type), "%.15s", sp + 1);
			continue;
		}
		if (line[0] == '#')
			fail_msg("line %u: unexpected comment: %s", lineno, line);

		/* a sample */
		struct sample *s;
		char *q = line, *end;
		size_t n = strcspn(q, "{ ");

		assert_true(e->n_samples < MAX_SAMPLES);
		s = &e->samples[e->n_samples++];
		if (!name_ok(q, n, true) || n >= sizeof(s->name))
			fail_msg("line %u: bad metric name: %s", lineno, line);
		memcpy(s->name, q, n);
		s->name[n] = '\0';
		if (!cur || !streq(cur->name, s->name) || !cur->type[0])
			fail_msg("line %u: sample %s outside its family (HELP and TYPE first)", lineno, s->name);
		q += n;
		if (*q == '{') {
			size_t o = 0;
			q++;
			for (;;) {
				size_t ln = strcspn(q, "=");
				if (!name_ok(q, ln, false) || q[ln] != '=' || q[ln + 1] != '"')
					fail_msg("line %u: bad label: %s", lineno, line);
				o += (size_t)snprintf(s->labels + o, sizeof(s->labels) - o, "%s%.*s=", o ? "," : "",
				                      (int)ln, q);
				q += ln + 2;
				while (*q != '"') {
					char c = *q;
					if (c == '\0')
						fail_msg("line %u: unterminated label value", lineno);
					if (c == '\\') {
						q++;
						if (*q == 'n')
							c = '\n';
						else if (*q == '\\' || *q == '"')
							c = *q;
						else
							fail_msg("line %u: bad escape \\%c", lineno, *q);
					}
					assert_true(o + 1 < sizeof(s->labels));
					s->labels[o++] = c;
					s->labels[o] = '\0';
					q++;
				}
				q++;
				if (*q == ',') {
					q++;
					continue;
				}
				if (*q != '}')
					fail_msg("line %u: expected , or } after a label", lineno);
				q++;
				break;
			}
		}
		if (*q != ' ' || q[1] == '\0' || q[1] == ' ')
			fail_msg("line %u: expected one blank and a value: %s", lineno, line);
		q++;
		snprintf(s->value, sizeof(s->value), "%.63s", q);
		errno = 0;
		s->v = strtod(q, &end);
		if (errno || *end || end == q || isnan(s->v))
			fail_msg("line %u: bad value '%s'", lineno, q);
		if (streq(cur->type, "counter")) {
			for (const char *c = q; *c; c++)
				if (!isdigit((unsigned char)*c))
					fail_msg("line %u: counter value '%s' is not a whole number", lineno, q);
		}
	}

	for (size_t i = 0; i < e->n_families; i++) {
		const struct family *f = &e->families[i];
		size_t l = strlen(f->name);
		bool total = l > 6 && streq(f->name + l - 6, "_total");

		assert_true(f->help);
		if (!f->type[0])
			fail_msg("family %s has no TYPE", f->name);
		if (streq(f->type, "counter") != total)
			fail_msg("family %s: only counters, and all of them, end in _total", f->name);
	}
}

static const struct sample *find(const struct exposition *e, const char *name, const char *labels)
{
	for (size_t i = 0; i < e->n_samples; i++)
		if (streq(e->samples[i].name, name) && streq(e->samples[i].labels, labels))
			return &e->samples[i];
	fail_msg("no sample %s{%s}", name, labels);
	return NULL;
}

static size_t count(const struct exposition *e, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < e->n_samples; i++)
		n += streq(e->samples[i].name, name);
	return n;
}

static char *format(const struct caad_metrics *m)
{
	char *text = NULL;

	assert_int_equal(caad_metrics_format_string(m, &text), 0);
	assert_non_null(text);
	return text;
}

static const char *const two_ifaces[] = { "eth2", "ens1f0np0" };

static struct caad_metrics sample_metrics(void)
{
	return (struct caad_metrics){
		.version = "0.1.0",
		.mode = "enforce",
		.placement = "prior",
		.paused = true,
		.interfaces = two_ifaces,
		.n_interfaces = 2,
		.flows_seen = 7,
		.flows_heavy = 3,
		.flows_steered = 2,
		.values_changed = 4,
		.values_backed_off = 6,
		.last_plan_usec = 1234567,
		.last_scan_timestamp_usec = UINT64_C(1700000000123456),
		.scan_period_usec = 1770000,
		.scan_cpu_usec = 177123,
		.scans = 1001,
		.early_scans = 17,
		.moves = 11,
		.restores = 5,
		.backoffs = 8,
		.undone = 9,
		.errors = 2,
		.reloads = 3,
		.reload_failures = 1,
		.bpf_events_lost = UINT64_MAX,
		.bpf_map_full = 0,
		.bpf_flows_new = 40,
		.bpf_flows_closed = 38,
		.bpf_handovers_failed = 5,
	};
}

static void test_every_field(void **state)
{
	struct caad_metrics m = sample_metrics();
	_cleanup_free_ char *text = format(&m);
	struct exposition e;

	parse(text, &e);
	assert_string_equal(find(&e, "caad_info", "version=0.1.0,mode=enforce,placement=prior")->value, "1");
	assert_string_equal(find(&e, "caad_paused", "")->value, "1");
	assert_int_equal(count(&e, "caad_interface_managed"), 2);
	assert_string_equal(find(&e, "caad_interface_managed", "interface=eth2")->value, "1");
	assert_string_equal(find(&e, "caad_interface_managed", "interface=ens1f0np0")->value, "1");
	assert_string_equal(find(&e, "caad_flows", "")->value, "7");
	assert_string_equal(find(&e, "caad_flows_heavy", "")->value, "3");
	assert_string_equal(find(&e, "caad_flows_steered", "")->value, "2");
	assert_string_equal(find(&e, "caad_values_changed", "")->value, "4");
	assert_string_equal(find(&e, "caad_values_backed_off", "")->value, "6");
	assert_string_equal(find(&e, "caad_last_plan_duration_seconds", "")->value, "1.234567");
	assert_string_equal(find(&e, "caad_last_scan_timestamp_seconds", "")->value, "1700000000.123456");
	assert_string_equal(find(&e, "caad_scan_period_seconds", "")->value, "1.770000");
	assert_string_equal(find(&e, "caad_scan_cpu_seconds", "")->value, "0.177123");
	assert_string_equal(find(&e, "caad_scans_total", "")->value, "1001");
	assert_string_equal(find(&e, "caad_early_scans_total", "")->value, "17");
	assert_string_equal(find(&e, "caad_moves_total", "")->value, "11");
	assert_string_equal(find(&e, "caad_restores_total", "")->value, "5");
	assert_string_equal(find(&e, "caad_backoffs_total", "")->value, "8");
	assert_string_equal(find(&e, "caad_undone_total", "")->value, "9");
	assert_string_equal(find(&e, "caad_errors_total", "")->value, "2");
	assert_string_equal(find(&e, "caad_reloads_total", "")->value, "3");
	assert_string_equal(find(&e, "caad_reload_failures_total", "")->value, "1");
	assert_string_equal(find(&e, "caad_bpf_events_lost_total", "")->value, "18446744073709551615");
	assert_string_equal(find(&e, "caad_bpf_map_full_total", "")->value, "0");
	assert_string_equal(find(&e, "caad_bpf_flows_new_total", "")->value, "40");
	assert_string_equal(find(&e, "caad_bpf_flows_closed_total", "")->value, "38");
	assert_string_equal(find(&e, "caad_bpf_handovers_failed_total", "")->value, "5");
	/* trials and verdicts: the families are there, at the 0s given (the
	 * daemon keeping them 0 under Placement=prior: caadctl.sh) */
	assert_string_equal(find(&e, "caad_trials_total", "")->value, "0");
	assert_string_equal(find(&e, "caad_trial_verdicts_total", "verdict=kept-prior")->value, "0");
	assert_string_equal(find(&e, "caad_trial_verdicts_total", "verdict=switched")->value, "0");
	assert_string_equal(find(&e, "caad_trial_verdicts_total", "verdict=aborted")->value, "0");
	/* no classes or queues given: their families are there, empty */
	assert_non_null(family_find(&e, "caad_errors_by_class_total"));
	assert_non_null(family_find(&e, "caad_queue_target_cpu"));
	/* nothing else */
	assert_int_equal(e.n_samples, 31);
	assert_int_equal(e.n_families, 30);
}

/* Errors by class, verdicts and each queue's target CPU (-1 and
 * mechanism "none" when the plan wants nothing for it). */
static void test_classes_verdicts_queues(void **state)
{
	static const struct caad_metrics_count classes[] = {
		{ "managed-irq", 3 }, { "device-gone", 1 }, { "plan", 0 },
	};
	static const struct caad_metrics_queue queues[] = {
		{ "eth2", 0, "irq", 5 },
		{ "eth2", 1, "rps", 7 },
		{ "eth2", 2, "", 3 },
		{ "vb", 0, NULL, -1 },
	};
	struct caad_metrics m = sample_metrics();
	_cleanup_free_ char *text = NULL;
	struct exposition e;

	m.error_classes = classes;
	m.n_error_classes = ARRAY_SIZE(classes);
	m.trials = 4;
	m.verdicts_kept_prior = 2;
	m.verdicts_switched = 1;
	m.verdicts_aborted = 1;
	m.queues = queues;
	m.n_queues = ARRAY_SIZE(queues);
	text = format(&m);
	parse(text, &e);
	assert_string_equal(find(&e, "caad_errors_by_class_total", "class=managed-irq")->value, "3");
	assert_string_equal(find(&e, "caad_errors_by_class_total", "class=device-gone")->value, "1");
	assert_string_equal(find(&e, "caad_errors_by_class_total", "class=plan")->value, "0");
	assert_int_equal(count(&e, "caad_errors_by_class_total"), 3);
	assert_string_equal(find(&e, "caad_trials_total", "")->value, "4");
	assert_string_equal(find(&e, "caad_trial_verdicts_total", "verdict=kept-prior")->value, "2");
	assert_string_equal(find(&e, "caad_trial_verdicts_total", "verdict=switched")->value, "1");
	assert_string_equal(find(&e, "caad_trial_verdicts_total", "verdict=aborted")->value, "1");
	assert_string_equal(find(&e, "caad_queue_target_cpu", "interface=eth2,queue=0,mechanism=irq")->value, "5");
	assert_string_equal(find(&e, "caad_queue_target_cpu", "interface=eth2,queue=1,mechanism=rps")->value, "7");
	assert_string_equal(find(&e, "caad_queue_target_cpu", "interface=eth2,queue=2,mechanism=none")->value, "-1");
	assert_string_equal(find(&e, "caad_queue_target_cpu", "interface=vb,queue=0,mechanism=none")->value, "-1");
	assert_int_equal(count(&e, "caad_queue_target_cpu"), 4);
}

/* Label values carry any bytes: quote and newline are escaped and read
 * back exactly, a backslash reads back as \x5c. */
static void test_label_escapes(void **state)
{
	static const char *const odd[] = { "a\"b", "c\\d", "e\nf", "\\\"\n" };
	struct caad_metrics m = sample_metrics();
	_cleanup_free_ char *text = NULL;
	struct exposition e;

	m.interfaces = odd;
	m.n_interfaces = ARRAY_SIZE(odd);
	m.version = "1.0\"x\\";
	text = format(&m);
	assert_non_null(strstr(text, "caad_interface_managed{interface=\"a\\\"b\"} 1\n"));
	assert_non_null(strstr(text, "caad_interface_managed{interface=\"e\\nf\"} 1\n"));
	assert_non_null(strstr(text, "caad_interface_managed{interface=\"c\\\\x5cd\"} 1\n"));
	parse(text, &e);
	find(&e, "caad_interface_managed", "interface=a\"b");
	find(&e, "caad_interface_managed", "interface=c\\x5cd");
	find(&e, "caad_interface_managed", "interface=e\nf");
	find(&e, "caad_interface_managed", "interface=\\x5c\"\n");
	find(&e, "caad_info", "version=1.0\"x\\x5c,mode=enforce,placement=prior");
}

/* Bytes that are no UTF-8 in a name (Linux allows them): the file stays
 * valid UTF-8, and two such names stay two series. */
static void test_label_not_utf8(void **state)
{
	static const char *const odd[] = { "eth\xfe", "eth\xff", "t\x01" "b", "\xc3\xa9t\xc3", "eth\\xfe", "c1\xc2\x9b" };
	struct caad_metrics m = sample_metrics();
	_cleanup_free_ char *text = NULL, *copy = NULL;
	struct exposition e;

	(void)state;
	m.interfaces = odd;
	m.n_interfaces = ARRAY_SIZE(odd);
	text = format(&m);
	copy = strdup(text);
	assert_non_null(copy);
	assert_string_equal(caad_utf8_sanitize(copy, true), text);
	assert_non_null(strstr(text, "caad_interface_managed{interface=\"eth\\\\xfe\"} 1\n"));
	assert_non_null(strstr(text, "caad_interface_managed{interface=\"eth\\\\xff\"} 1\n"));
	assert_non_null(strstr(text, "caad_interface_managed{interface=\"t\\\\x01b\"} 1\n"));
	/* é kept whole, the lone lead byte after it spelled out */
	assert_non_null(strstr(text, "caad_interface_managed{interface=\"\xc3\xa9t\\\\xc3\"} 1\n"));
	parse(text, &e);
	find(&e, "caad_interface_managed", "interface=eth\\xfe");
	find(&e, "caad_interface_managed", "interface=eth\\xff");
	/* the name spelled with a backslash is a series of its own */
	find(&e, "caad_interface_managed", "interface=eth\\x5cxfe");
	/* a C1 control (CSI), valid UTF-8, spelled out too */
	find(&e, "caad_interface_managed", "interface=c1\\xc2\\x9b");
	assert_int_equal(count(&e, "caad_interface_managed"), 6);
}

/* Nothing set: still a complete, valid exposition; a family without
 * samples keeps its HELP and TYPE. NULL strings are empty labels. */
static void test_empty(void **state)
{
	struct caad_metrics m = {};
	_cleanup_free_ char *text = format(&m);
	struct exposition e;

	parse(text, &e);
	assert_int_equal(count(&e, "caad_interface_managed"), 0);
	assert_non_null(family_find(&e, "caad_interface_managed"));
	find(&e, "caad_info", "version=,mode=,placement=");
	assert_string_equal(find(&e, "caad_paused", "")->value, "0");
	assert_string_equal(find(&e, "caad_last_plan_duration_seconds", "")->value, "0.000000");
	assert_string_equal(find(&e, "caad_last_scan_timestamp_seconds", "")->value, "0.000000");
}

/* Seconds are printed exactly from microseconds, up to the largest. */
static void test_seconds(void **state)
{
	static const struct {
		uint64_t usec;
		const char *text;
	} cases[] = {
		{ 1, "0.000001" },
		{ 999999, "0.999999" },
		{ 1000000, "1.000000" },
		{ UINT64_MAX, "18446744073709.551615" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct caad_metrics m = sample_metrics();
		_cleanup_free_ char *text = NULL;
		struct exposition e;

		m.last_plan_usec = cases[i].usec;
		text = format(&m);
		parse(text, &e);
		assert_string_equal(find(&e, "caad_last_plan_duration_seconds", "")->value, cases[i].text);
	}
}

/* The FILE and string forms agree; a failing stream is reported. */
static void test_stream(void **state)
{
	struct caad_metrics m = sample_metrics();
	_cleanup_free_ char *text = format(&m), *buf = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(caad_metrics_format(f, &m), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, text);

	f = fopen("/dev/full", "we");
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(caad_metrics_format(f, &m), -EIO);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_field),
		cmocka_unit_test(test_classes_verdicts_queues),
		cmocka_unit_test(test_label_escapes),
		cmocka_unit_test(test_label_not_utf8),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
