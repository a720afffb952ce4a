/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caadctl's pure formatting (src/caadctl/format.c) and its strict
 * Prometheus reader (src/caadctl/prometheus.c): what it accepts, what it
 * refuses and where, and that caad's own metrics pass it.
 */
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

#include "caad/metrics.h"
#include "caadctl.h"

static void test_rate(void **state)
{
	static const struct {
		uint64_t v;
		const char *s;
	} cases[] = {
		{ 0, "0 bit/s" },
		{ 999, "999 bit/s" },
		{ 1000, "1.00 kbit/s" },
		{ 80000, "80.0 kbit/s" },
		{ 999499, "999 kbit/s" },
		{ 999500, "1.00 Mbit/s" },
		{ 15200000000, "15.2 Gbit/s" },
		{ 9994000000, "9.99 Gbit/s" },
		{ 9996000000, "10.0 Gbit/s" },
		{ 400000000000, "400 Gbit/s" },
		{ UINT64_MAX, "18.4 Ebit/s" },
	};
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ctl_format_rate(cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].s);
	}
	ctl_format_bytes(1500000000, buf, sizeof(buf));
	assert_string_equal(buf, "1.50 GB");
	ctl_format_bytes(12, buf, sizeof(buf));
	assert_string_equal(buf, "12 B");
	/* a short buffer is cut, never overrun */
	ctl_format_rate(15200000000, buf, 5);
	assert_string_equal(buf, "15.2");
}

static void test_usec_int(void **state)
{
	static const struct {
		uint64_t v;
		const char *s;
	} cases[] = {
		{ 0, "0 us" },       { 870, "870 us" },       { 1000, "1.00 ms" },   { 12345, "12.3 ms" },
		{ 123456, "123 ms" }, { 1200000, "1.20 s" },   { 61000000, "61.0 s" }, { 3600000000, "3600 s" },
		/* the unit and digits of the value as rounded */
		{ 999, "999 us" },    { 999999, "1.00 s" },    { 9999, "10.0 ms" },   { 99999, "100 ms" },
		{ 9999999, "10.0 s" }, { 99999999, "100 s" },
	};
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ctl_format_usec(cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].s);
	}
	ctl_format_int(-1, buf, sizeof(buf));
	assert_string_equal(buf, "-");
	ctl_format_int(0, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	ctl_format_int(4095, buf, sizeof(buf));
	assert_string_equal(buf, "4095");
}

/* Counts and ids from the daemon's JSON, and its times. */
static void test_json_count_time(void **state)
{
	struct json_object *o = json_tokener_parse("[12345678901234567, 18446744073709551615, 9007199254740993, -3, "
	                                           "2.9, -0.5, 1e30, \"7\", null, true]");
	static const uint64_t want[] = { 12345678901234567u, UINT64_MAX, 9007199254740993u, 0, 2, 0, UINT64_MAX, 0, 0, 0 };
	char buf[32];

	(void)state;
	assert_non_null(o);
	assert_int_equal(json_object_array_length(o), ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		assert_true(ctl_json_count(json_object_array_get_idx(o, i)) == want[i]);
	assert_true(ctl_json_count(NULL) == 0);
	json_object_put(o);

	setenv("TZ", "UTC", 1);
	tzset();
	ctl_format_time(1700000000, buf, sizeof(buf));
	assert_string_equal(buf, "2023-11-14 22:13");
	ctl_format_time(0, buf, sizeof(buf)); /* not known */
	assert_string_equal(buf, "-");
	ctl_format_time(UINT64_MAX, buf, sizeof(buf)); /* no time_t: not 1969 */
	assert_string_equal(buf, "-");
	ctl_format_time((uint64_t)INT64_MAX, buf, sizeof(buf)); /* no calendar year */
	assert_string_equal(buf, "-");
}

static const char good[] = "# HELP caad_flows Flows.\n"
                           "# TYPE caad_flows gauge\n"
                           "caad_flows 3\n"
                           "# HELP caad_scans_total Scans \\\\ since\\nstart.\n"
                           "# TYPE caad_scans_total counter\n"
                           "caad_scans_total 12 1700000000000\n"
                           "# HELP caad_q Queues.\n"
                           "# TYPE caad_q gauge\n"
                           "caad_q{interface=\"a\\\"b\\\\c\\nd\",queue=\"0\"} -1\n"
                           "caad_q{interface=\"eth0\",queue=\"1\",} 1.5e3\n"
                           "caad_q{interface=\"eth0\",queue=\"2\"} NaN\n"
                           "caad_q{interface=\"\xc3\xa9th0\",queue=\"3\"} +Inf\n"
                           "# HELP caad_empty No samples yet.\n"
                           "# TYPE caad_empty gauge\n"
                           "# HELP lat_seconds Latency.\n"
                           "# TYPE lat_seconds histogram\n"
                           "lat_seconds_bucket{le=\"0.1\"} 1\n"
                           "lat_seconds_bucket{le=\"+Inf\"} 2\n"
                           "lat_seconds_sum 0.3\n"
                           "lat_seconds_count 2\n";

static void test_prom_good(void **state)
{
	_cleanup_(ctl_prom_freep) struct ctl_prom *p = NULL;
	struct ctl_prom_family *f;
	char err[256];

	assert_int_equal(ctl_prom_parse(good, &p, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(p->n_families, 5);
	f = &p->families[1];
	assert_string_equal(f->name, "caad_scans_total");
	assert_string_equal(f->type, "counter");
	assert_string_equal(f->help, "Scans \\ since\nstart.");
	assert_int_equal(f->n_samples, 1);
	assert_string_equal(f->samples[0].value, "12");
	f = &p->families[2];
	assert_int_equal(f->n_samples, 4);
	assert_int_equal(f->samples[0].n_labels, 2);
	assert_string_equal(f->samples[0].labels[0].name, "interface");
	assert_string_equal(f->samples[0].labels[0].value, "a\"b\\c\nd");
	assert_true(f->samples[0].v == -1);
	assert_true(f->samples[1].v == 1500);
	assert_true(isnan(f->samples[2].v));
	assert_true(isinf(f->samples[3].v));
	assert_int_equal(p->families[3].n_samples, 0);
	assert_int_equal(p->families[4].n_samples, 4);
}

static void test_prom_json(void **state)
{
	_cleanup_(ctl_prom_freep) struct ctl_prom *p = NULL;
	_cleanup_(ctl_json_putp) struct json_object *j = NULL;
	char err[256];

	assert_int_equal(ctl_prom_parse(good, &p, err, sizeof(err)), 0);
	j = ctl_prom_to_json(p);
	assert_non_null(j);
	assert_string_equal(json_object_to_json_string_ext(json_object_array_get_idx(j, 2), JSON_C_TO_STRING_PLAIN),
	                    "{\"name\":\"caad_q\",\"type\":\"gauge\",\"help\":\"Queues.\",\"samples\":["
	                    "{\"name\":\"caad_q\",\"labels\":{\"interface\":\"a\\\"b\\\\c\\nd\",\"queue\":\"0\"},\"value\":-1},"
	                    "{\"name\":\"caad_q\",\"labels\":{\"interface\":\"eth0\",\"queue\":\"1\"},\"value\":1.5e3},"
	                    "{\"name\":\"caad_q\",\"labels\":{\"interface\":\"eth0\",\"queue\":\"2\"},\"value\":\"NaN\"},"
	                    "{\"name\":\"caad_q\",\"labels\":{\"interface\":\"\xc3\xa9th0\",\"queue\":\"3\"},\"value\":\"+Inf\"}]}");
}

/* Prometheus numbers that are not JSON numbers ("+1", ".5", "007", "5.")
 * come out as JSON numbers all the same. */
static void test_prom_json_numbers(void **state)
{
	static const char text[] = "# HELP a A.\n# TYPE a gauge\n"
	                           "a{k=\"0\"} +1\na{k=\"1\"} .5\na{k=\"2\"} 007\na{k=\"3\"} 5.\na{k=\"4\"} -0.25e-2\n";
	_cleanup_(ctl_prom_freep) struct ctl_prom *p = NULL;
	_cleanup_(ctl_json_putp) struct json_object *j = NULL, *back = NULL;
	const char *out;
	char err[256];

	(void)state;
	assert_int_equal(ctl_prom_parse(text, &p, err, sizeof(err)), 0);
	j = ctl_prom_to_json(p);
	assert_non_null(j);
	out = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	back = json_tokener_parse(out); /* strict enough to refuse +1 and .5 */
	if (!back)
		fail_msg("not JSON: %s", out);
	struct json_object *samples = json_object_object_get(json_object_array_get_idx(back, 0), "samples");
	const double want[] = { 1, 0.5, 7, 5, -0.0025 };
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		struct json_object *v = json_object_object_get(json_object_array_get_idx(samples, i), "value");
		assert_true(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int));
		assert_true(json_object_get_double(v) == want[i]);
	}
	assert_non_null(strstr(out, "\"value\":-0.25e-2")); /* a JSON number: kept as written */
	assert_null(strstr(out, ":+1"));
	assert_null(strstr(out, ":.5"));
	assert_null(strstr(out, ":007"));
	assert_null(strstr(out, ":5.}"));
}

/* Each text is refused, and the message names the line and the fault. */
static void test_prom_bad(void **state)
{
	static const struct {
		const char *text, *error;
	} cases[] = {
		{ "", "line 0: empty" },
		{ "# HELP a A.\n# TYPE a gauge\na 1", "line 3: the last line does not end with a newline" },
		{ "# HELP a A.\n\n# TYPE a gauge\n", "line 2: blank line" },
		{ "# HELP a A.\r\n# TYPE a gauge\n", "line 1: carriage return" },
		{ "a 1\n", "line 1: sample a before its family's HELP and TYPE" },
		{ "# TYPE a gauge\na 1\n", "line 1: TYPE of a must follow its HELP" },
		{ "# HELP a A.\na 1\n", "line 2: sample a before its family's HELP and TYPE" },
		{ "# HELP a A.\n# TYPE a gauge\n# TYPE a gauge\n", "line 3: TYPE of a must follow its HELP" },
		{ "# HELP a A.\n# TYPE a gauge\n# HELP a again\n", "line 3: family a again" },
		{ "# HELP a A.\n# TYPE a gauge\na 1\n# HELP b B.\n# TYPE b gauge\na 2\n",
		  "line 6: sample of family a after other families" },
		{ "# HELP a A.\n# TYPE a gauge\nb 1\n", "line 3: sample b is not of the current family a" },
		{ "# HELP a A.\n# TYPE a gaug\n", "line 2: unknown type 'gaug'" },
		{ "# HELP a_total A.\n# TYPE a_total gauge\n", "line 2: a_total: counters, and only counters, end in _total" },
		{ "# HELP a A.\n# TYPE a counter\n", "line 2: a: counters, and only counters, end in _total" },
		{ "# HELP a_total A.\n# TYPE a_total counter\na_total -1\n", "line 3: counter a_total is -1" },
		{ "# HELP 1a A.\n", "line 1: expected '# HELP NAME TEXT'" },
		{ "# HELP a\n", "line 1: expected '# HELP NAME TEXT'" },
		{ "# HELP a A \\t.\n", "line 1: invalid escape '\\t' in HELP" },
		{ "# a comment\n", "line 1: a comment other than" },
		{ "# HELP a A.\n# TYPE a gauge\na{b=\"1\"} 1\na{b=\"1\"} 2\n", "line 4: series a with these labels twice" },
		{ "# HELP a A.\n# TYPE a gauge\na{b=\"1\",b=\"2\"} 1\n", "line 3: label b twice" },
		{ "# HELP a A.\n# TYPE a gauge\na{__b=\"1\"} 1\n", "line 3: label name __b is reserved" },
		{ "# HELP a A.\n# TYPE a gauge\na{b=1} 1\n", "line 3: expected '=\"' after label name b" },
		{ "# HELP a A.\n# TYPE a gauge\na{b=\"1} 1\n", "line 3: unterminated label value" },
		{ "# HELP a A.\n# TYPE a gauge\na{b=\"\\x\"} 1\n", "line 3: invalid escape '\\x' in a label value" },
		{ "# HELP a A.\n# TYPE a gauge\na{b=\"1\"c=\"2\"} 1\n", "line 3: expected ',' or '}'" },
		{ "# HELP a A.\n# TYPE a gauge\na{1b=\"1\"} 1\n", "line 3: invalid label name" },
		{ "# HELP a A.\n# TYPE a gauge\na  1\n", "line 3: expected one space and a value" },
		{ "# HELP a A.\n# TYPE a gauge\na\n", "line 3: expected one space and a value" },
		{ "# HELP a A.\n# TYPE a gauge\na 1 \n", "line 3: leading or trailing blanks" },
		{ "# HELP a A.\n# TYPE a gauge\na one\n", "line 3: invalid value 'one'" },
		{ "# HELP a A.\n# TYPE a gauge\na 0x10\n", "line 3: invalid value '0x10'" },
		{ "# HELP a A.\n# TYPE a gauge\na 1e999\n", "line 3: invalid value '1e999'" },
		{ "# HELP a A.\n# TYPE a gauge\na 1 12.5\n", "line 3: invalid timestamp '12.5'" },
		{ "# HELP a A.\n# TYPE a gauge\na 1\x01\n", "line 3: control character 0x01" },
		{ "# HELP a A.\n# TYPE a gauge\na 1 99999999999999999999\n", "line 3: invalid timestamp '99999999999999999999'" },
		{ "# HELP a A.\n# TYPE a gauge\na{b=\"\xff\"} 1\n", "line 3: a byte 0xff of no valid UTF-8 sequence" },
		{ "# HELP a A \xc3.\n", "line 1: a byte 0xc3 of no valid UTF-8 sequence" },
		{ "# HELP h H.\n# TYPE h histogram\nh_bucket 1\n", "line 3: histogram bucket without an 'le' label" },
		{ "# HELP h H.\n# TYPE h histogram\nh 1\n", "line 3: sample h is not of the current family h" },
		{ "# HELP a A.\n", "line 2: family a has a HELP but no TYPE" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ctl_prom *p = NULL;
		char err[256];
		int r = ctl_prom_parse(cases[i].text, &p, err, sizeof(err));

		if (r != -EINVAL || strncmp(err, cases[i].error, strlen(cases[i].error)) != 0)
			fail_msg("case %zu: got %d '%s', wanted '%s'", i, r, err, cases[i].error);
		assert_null(p);
	}
}

/* caad's own metrics, with every optional part filled, are strict text. */
static void test_caad_metrics_pass(void **state)
{
	static const char *const ifaces[] = { "eth2", "we\"ird\\name\n" };
	static const struct caad_metrics_count classes[] = { { "managed-irq", 2 }, { "plan", 1 } };
	static const struct caad_metrics_queue queues[] = { { "eth2", 0, "irq", 5 }, { "eth2", 1, NULL, -1 } };
	struct caad_metrics m = {
		.version = "0.1.0", .mode = "enforce", .placement = "prior", .interfaces = ifaces,
		.n_interfaces = ARRAY_SIZE(ifaces), .flows_seen = 3, .last_plan_usec = 42, .errors = 3,
		.error_classes = classes, .n_error_classes = ARRAY_SIZE(classes), .queues = queues,
		.n_queues = ARRAY_SIZE(queues), .bpf_events_lost = UINT64_MAX,
	};
	_cleanup_(ctl_prom_freep) struct ctl_prom *p = NULL;
	_cleanup_free_ char *text = NULL;
	char err[256];

	assert_int_equal(caad_metrics_format_string(&m, &text), 0);
	if (ctl_prom_parse(text, &p, err, sizeof(err)) < 0)
		fail_msg("%s in:\n%s", err, text);
	for (size_t i = 0; i < p->n_families; i++)
		assert_true(p->families[i].help && *p->families[i].help);
}

/* Optional columns are hidden, least wanted first, until the table fits
 * with its truncatable columns at their header's width. */
static void test_table_fit(void **state)
{
	static const size_t optional[] = { 2, 1 };
	static const char *const row[] = { "0xffff888109eab0c0", "10.81.0.2:5201", "10.81.0.1:33594", "peer-core-same-llc" };
	static const char *const short_row[] = { "0x1", "a:1", "b:2", "x" };
	/* natural: 18 + 14 + 15 + 18 (RELATION: header 8 when cut) + 3 blanks */
	static const struct {
		size_t width, hidden;
		bool local, remote;
	} cases[] = {
		{ 0, 0, true, true },    /* not a terminal */
		{ 200, 0, true, true },
		{ 58, 0, true, true },   /* 18 + 14 + 15 + 8 + 3: fits once RELATION is cut */
		{ 57, 1, true, false },  /* REMOTE goes first */
		{ 42, 1, true, false },
		{ 41, 2, false, false },
		{ 10, 2, false, false }, /* nothing more to hide */
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(ctl_table_unrefp) struct libscols_table *tb = scols_new_table();
		struct libscols_line *ln;

		assert_non_null(tb);
		assert_non_null(scols_table_new_column(tb, "ID", 0, 0));
		assert_non_null(scols_table_new_column(tb, "LOCAL", 0, 0));
		assert_non_null(scols_table_new_column(tb, "REMOTE", 0, 0));
		assert_non_null(scols_table_new_column(tb, "RELATION", 0, SCOLS_FL_TRUNC));
		/* the widest cells on the middle line of three: every line is measured */
		for (size_t l = 0; l < 3; l++) {
			ln = scols_table_new_line(tb, NULL);
			assert_non_null(ln);
			for (size_t k = 0; k < ARRAY_SIZE(row); k++)
				assert_int_equal(scols_line_set_data(ln, k, l == 1 ? row[k] : short_row[k]), 0);
		}
		assert_int_equal(ctl_table_fit(tb, cases[i].width, optional, ARRAY_SIZE(optional)), cases[i].hidden);
		assert_int_equal(!(scols_column_get_flags(scols_table_get_column(tb, 1)) & SCOLS_FL_HIDDEN), cases[i].local);
		assert_int_equal(!(scols_column_get_flags(scols_table_get_column(tb, 2)) & SCOLS_FL_HIDDEN), cases[i].remote);
	}
	assert_int_equal(ctl_text_width("abc"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_usec_int),
		cmocka_unit_test(test_json_count_time),
		cmocka_unit_test(test_prom_good),
		cmocka_unit_test(test_prom_json),
		cmocka_unit_test(test_prom_json_numbers),
		cmocka_unit_test(test_prom_bad),
		cmocka_unit_test(test_caad_metrics_pass),
		cmocka_unit_test(test_table_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
