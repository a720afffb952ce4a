/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "caad-config.h"
#include "caad/config.h"
#include "caad/cpumask.h"
#include "caad/log.h"
#include "caad/macro.h"

#include "capture.h"
#include "../skip.h"

/* ---- helpers ---------------------------------------------------------- */

static char tmpdir[PATH_MAX];

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/caad-test-config.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	unsetenv("CAAD_CONF_ROOT");
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	unsetenv("CAAD_CONF_ROOT");
	return nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkdir_parents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(path, 0755) < 0)
			assert_int_equal(errno, EEXIST);
		*s = '/';
	}
}

/* Write content to tmpdir/rel (parents created); returns the full path. */
static char *write_conf(const char *rel, const char *content)
{
	char *path;
	FILE *f;

	while (*rel == '/')
		rel++;
	assert_true(asprintf(&path, "%s/%s", tmpdir, rel) > 0);
	mkdir_parents(path);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fputs(content, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t size = 0;
	ssize_t n;

	assert_non_null(f);
	n = getdelim(&buf, &size, '\0', f);
	fclose(f);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	return buf;
}

/* Under systemd (JOURNAL_STREAM set) lines start with "<N>". */
static const char *skip_prio(const char *line)
{
	if (line[0] == '<' && line[1] >= '0' && line[1] <= '7' && line[2] == '>')
		return line + 3;
	return line;
}

static unsigned count_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Parse content from a file; return the error and the captured log. */
static int parse_string(struct caad_config *c, const char *content, char **ret_path, char **ret_log)
{
	struct capture cap;
	char *path = write_conf("test.conf", content);
	int r;

	capture_begin(&cap, tmpdir);
	r = caad_config_parse_file(c, path);
	*ret_log = capture_end(&cap);
	*ret_path = path;
	return r;
}

static void assert_defaults(const struct caad_config *c)
{
	assert_int_equal(c->mode, CAAD_MODE_ENFORCE);
	assert_int_equal(c->n_interfaces, 0);
	assert_null(c->interfaces);
	assert_int_equal(c->interval_ms, 250);
	assert_int_equal(c->scan_budget_pct, 10);
	assert_int_equal(c->max_flows, 16384);
	assert_int_equal(c->min_flow_bytes, 65536);
	assert_int_equal(c->log_level, LOG_INFO);
	assert_true(c->policy.rate_threshold_bps == UINT64_C(1000000000));
	assert_false(c->policy.allow_smt_sibling);
	assert_false(c->policy.allow_other_package);
	assert_true(caad_cpumask_empty(&c->policy.banned));
	assert_int_equal(c->policy.min_age_ms, 500);
	assert_int_equal(c->policy.dwell_ms, 2000);
	assert_int_equal(c->policy.max_moves, 16);
	assert_null(c->metrics_file);
	assert_int_equal(c->placement, CAAD_PLACEMENT_PRIOR);
	assert_int_equal(c->trial.rounds, 10);
	assert_int_equal(c->trial.turn_ms, 5000);
	assert_int_equal(c->trial.settle_ms, 2000);
	assert_int_equal(c->trial.margin_pct, 3);
	assert_int_equal(c->trial.win_pct, 80);
	assert_int_equal(c->trial.confidence_pct, 95);
	assert_int_equal(c->trial.eff_loss_pct, 20);
	assert_int_equal(c->trial_steady_ms, 5000);
	assert_true(c->trial_host);
	assert_int_equal(c->verdict_max_age_sec, 604800);
	assert_int_equal(c->backoff_sec, 0);
	assert_int_equal(c->irqbalance, CAAD_IRQBALANCE_BAN);
	/* everything but ntuple */
	assert_int_equal(c->policy.disabled_mechanisms, 1u << CAAD_SETTING_NTUPLE_RULE);
}

/* ---- tests ------------------------------------------------------------ */

static void test_defaults(void **state)
{
	struct caad_config c;

	memset(&c, 0xaa, sizeof(c));
	caad_config_init(&c);
	assert_defaults(&c);
	caad_config_done(&c);
	caad_config_done(&c);
	caad_config_done(NULL);
}

static void test_mode_strings(void **state)
{
	assert_string_equal(caad_mode_to_string(CAAD_MODE_ENFORCE), "enforce");
	assert_string_equal(caad_mode_to_string(CAAD_MODE_DRY_RUN), "dry-run");
	assert_string_equal(caad_mode_to_string(CAAD_MODE_OBSERVE), "observe");
	assert_null(caad_mode_to_string(_CAAD_MODE_COUNT));
	assert_null(caad_mode_to_string((enum caad_mode)-1));

	for (int m = 0; m < _CAAD_MODE_COUNT; m++)
		assert_int_equal(caad_mode_from_string(caad_mode_to_string(m)), m);
	assert_int_equal(caad_mode_from_string("dry_run"), -EINVAL);
	assert_int_equal(caad_mode_from_string("Enforce"), -EINVAL);
	assert_int_equal(caad_mode_from_string(""), -EINVAL);
	assert_int_equal(caad_mode_from_string(NULL), -EINVAL);
}

static void test_parse_bool(void **state)
{
	static const char *const yes[] = { "yes", "YES", "true", "True", "on", "ON", "1" };
	static const char *const no[] = { "no", "No", "false", "FALSE", "off", "Off", "0" };
	static const char *const bad[] = { "", "2", "y", "n", "yess", "on ", " no", "enable", "-1" };
	bool b;

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		b = false;
		assert_int_equal(caad_parse_bool(yes[i], &b), 0);
		assert_true(b);
	}
	for (size_t i = 0; i < ARRAY_SIZE(no); i++) {
		b = true;
		assert_int_equal(caad_parse_bool(no[i], &b), 0);
		assert_false(b);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		b = true;
		assert_int_equal(caad_parse_bool(bad[i], &b), -EINVAL);
		assert_true(b); /* untouched */
		b = false;
		assert_int_equal(caad_parse_bool(bad[i], &b), -EINVAL);
		assert_false(b);
	}
	assert_int_equal(caad_parse_bool(NULL, &b), -EINVAL);
}

static void test_parse_rate(void **state)
{
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} cases[] = {
		{ "1G", 0, UINT64_C(1000000000) },
		{ "1.5G", 0, UINT64_C(1500000000) },
		{ "999", 0, 999 },
		{ "10M", 0, UINT64_C(10000000) },
		{ "0", 0, 0 },
		{ "0G", 0, 0 },
		{ "1K", 0, 1000 },
		{ "1k", 0, 1000 },
		{ "25g", 0, UINT64_C(25000000000) },
		{ "2.5T", 0, UINT64_C(2500000000000) },
		{ "0.001K", 0, 1 },
		{ "1.0", 0, 1 },
		{ "1.50000000000000G", 0, UINT64_C(1500000000) },
		{ "007", 0, 7 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "99999999999999999999999G", -ERANGE, 0 },
		{ "18446745T", -ERANGE, 0 },
		{ "18446744073.709551616G", -ERANGE, 0 },
		{ "G", -EINVAL, 0 },
		{ "1X", -EINVAL, 0 },
		{ "99999999999999999999999X", -EINVAL, 0 }, /* syntax beats range */
		{ "", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ " 1G", -EINVAL, 0 },
		{ "1G ", -EINVAL, 0 },
		{ "1 G", -EINVAL, 0 },
		{ "1GG", -EINVAL, 0 },
		{ "1Gbit", -EINVAL, 0 },
		{ "1.5", -EDOM, 0 }, /* half a bit */
		{ "1.0001K", -EDOM, 0 },
		{ "1.", -EINVAL, 0 },
		{ ".5G", -EINVAL, 0 },
		{ "1.5.G", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "1e9", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t v = UINT64_C(0xdeadbeef);
		int r = caad_parse_rate(cases[i].s, &v);

		if (r != cases[i].r)
			fail_msg("caad_parse_rate(\"%s\") = %d, expected %d", cases[i].s, r, cases[i].r);
		if (cases[i].r == 0 && v != cases[i].v)
			fail_msg("caad_parse_rate(\"%s\") -> %" PRIu64 ", expected %" PRIu64, cases[i].s, v,
			         cases[i].v);
		if (cases[i].r < 0 && v != UINT64_C(0xdeadbeef))
			fail_msg("caad_parse_rate(\"%s\") touched its output on failure", cases[i].s);
	}
	{
		uint64_t v = 1;
		assert_int_equal(caad_parse_rate(NULL, &v), -EINVAL);
		assert_true(v == 1);
	}
}

static void test_set_interfaces(void **state)
{
	static const char *const good[] = { "eth0", "e", "enp3s0f1np1", "abcdefghijklmno", "...", "a.b", "veth-1_x" };
	static const char *const bad[] = { "", ".", "..", "abcdefghijklmnop", "a/b", "a b", "a\tb", "eth0:1", "/" };
	struct caad_config c;
	char n0[] = "eth0", n1[] = "eth1", n2[] = "eth0";
	char *names[] = { n0, n1, n2 };

	caad_config_init(&c);

	assert_int_equal(caad_config_set_interfaces(&c, names, 3), 0);
	assert_int_equal(c.n_interfaces, 2); /* repeats dropped */
	assert_string_equal(c.interfaces[0], "eth0");
	assert_string_equal(c.interfaces[1], "eth1");
	assert_null(c.interfaces[2]);
	/* copies: the caller's buffers are its own */
	n0[3] = '9';
	assert_string_equal(c.interfaces[0], "eth0");
	assert_ptr_not_equal(c.interfaces[1], n1);

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		char *one[] = { (char *)good[i] };

		assert_int_equal(caad_config_set_interfaces(&c, one, 1), 0);
		assert_int_equal(c.n_interfaces, 1);
		assert_string_equal(c.interfaces[0], good[i]);
	}

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *two[] = { (char *)"lo", (char *)bad[i] };

		if (caad_config_set_interfaces(&c, two, 2) != -EINVAL)
			fail_msg("interface name '%s' accepted", bad[i]);
		/* untouched on failure */
		assert_int_equal(c.n_interfaces, 1);
		assert_string_equal(c.interfaces[0], good[ARRAY_SIZE(good) - 1]);
	}

	assert_int_equal(caad_config_set_interfaces(&c, NULL, 0), 0);
	assert_int_equal(c.n_interfaces, 0);
	assert_null(c.interfaces);

	caad_config_done(&c);
}

static void test_parse_each_key(void **state)
{
	struct caad_config c;
	_cleanup_free_ char *path = NULL, *log = NULL;

	caad_config_init(&c);
	assert_int_equal(parse_string(&c,
	                              "[Daemon]\n"
	                              "Mode=dry-run\n"
	                              "Interfaces=eth0 \t enp3s0f1\n"
	                              "IntervalMSec=1000\n"
	                              "ScanBudgetPercent=25\n"
	                              "MaxFlows=65536\n"
	                              "LogLevel=debug\n"
	                              "[Placement]\n"
	                              "RateThreshold=2.5G\n"
	                              "BannedCPUs=0-1,8\n"
	                              "AllowSMTSibling=yes\n"
	                              "AllowOtherPackage=on\n"
	                              "[Trials]\n"
	                              "TryHostSteering=no\n",
	                              &path, &log),
	                 0);
	assert_string_equal(log, "");

	assert_int_equal(c.mode, CAAD_MODE_DRY_RUN);
	assert_int_equal(c.n_interfaces, 2);
	assert_string_equal(c.interfaces[0], "eth0");
	assert_string_equal(c.interfaces[1], "enp3s0f1");
	assert_null(c.interfaces[2]);
	assert_int_equal(c.interval_ms, 1000);
	assert_int_equal(c.scan_budget_pct, 25);
	assert_int_equal(c.max_flows, 65536);
	assert_int_equal(c.log_level, LOG_DEBUG);
	assert_true(c.policy.rate_threshold_bps == UINT64_C(2500000000));
	assert_int_equal(caad_cpumask_count(&c.policy.banned), 3);
	assert_true(caad_cpumask_test(&c.policy.banned, 0));
	assert_true(caad_cpumask_test(&c.policy.banned, 1));
	assert_true(caad_cpumask_test(&c.policy.banned, 8));
	assert_true(c.policy.allow_smt_sibling);
	assert_true(c.policy.allow_other_package);
	assert_false(c.trial_host);
	caad_config_done(&c);
}

static void test_parse_ranges(void **state)
{
	static const struct {
		const char *text;
		unsigned interval, flows;
	} cases[] = {
		{ "[Daemon]\nIntervalMSec=10\nMaxFlows=64\n", 10, 64 },
		{ "[Daemon]\nIntervalMSec=60000\nMaxFlows=1048576\n", 60000, 1048576 },
		{ "[Daemon]\nMode=observe\nLogLevel=err\n", 250, 16384 },
	};
	static const struct {
		const char *text;
		unsigned min_age, dwell, moves;
	} placement[] = {
		{ "[Placement]\nMinAgeMSec=0\nDwellMSec=0\nMaxMovesPerCycle=1\n", 0, 0, 1 },
		{ "[Placement]\nMinAgeMSec=3600000\nDwellMSec=3600000\nMaxMovesPerCycle=1048576\n", 3600000, 3600000,
		  1048576 },
		{ "[Placement]\nDwellMSec=500\n", 500, 500, 16 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct caad_config c;
		_cleanup_free_ char *path = NULL, *log = NULL;

		caad_config_init(&c);
		assert_int_equal(parse_string(&c, cases[i].text, &path, &log), 0);
		assert_string_equal(log, "");
		assert_int_equal(c.interval_ms, cases[i].interval);
		assert_int_equal(c.max_flows, cases[i].flows);
		caad_config_done(&c);
	}
	for (size_t i = 0; i < ARRAY_SIZE(placement); i++) {
		struct caad_config c;
		_cleanup_free_ char *path = NULL, *log = NULL;

		caad_config_init(&c);
		assert_int_equal(parse_string(&c, placement[i].text, &path, &log), 0);
		assert_string_equal(log, "");
		assert_int_equal(c.policy.min_age_ms, placement[i].min_age);
		assert_int_equal(c.policy.dwell_ms, placement[i].dwell);
		assert_int_equal(c.policy.max_moves, placement[i].moves);
		caad_config_done(&c);
	}
}

/*
 * Every key whose value is a plain number: its least and its most are
 * taken, one past either is refused (naming its range) and leaves the
 * field as it was, and a value neither default nor a bound lands in its
 * own field and in no other number key's.
 */
#define NUMBER(s, k, field, lo, hi, mid) { s, k, offsetof(struct caad_config, field), lo, hi, mid }
static const struct number_key {
	const char *section, *key;
	size_t offset;
	unsigned min, max, other;
} number_keys[] = {
	NUMBER("Daemon", "IntervalMSec", interval_ms, 10, 60000, 777),
	NUMBER("Daemon", "ScanBudgetPercent", scan_budget_pct, 1, 100, 37),
	NUMBER("Daemon", "MaxFlows", max_flows, 64, 1048576, 1000),
	NUMBER("Daemon", "BackOffSec", backoff_sec, 0, 86400, 61),
	NUMBER("Placement", "MinAgeMSec", policy.min_age_ms, 0, 3600000, 1234),
	NUMBER("Placement", "DwellMSec", policy.dwell_ms, 0, 3600000, 4321),
	NUMBER("Placement", "MaxMovesPerCycle", policy.max_moves, 1, 1048576, 3),
	NUMBER("Trials", "Rounds", trial.rounds, 2, 100, 7),
	NUMBER("Trials", "TurnMSec", trial.turn_ms, 100, 600000, 2500),
	NUMBER("Trials", "SettleMSec", trial.settle_ms, 0, 600000, 750),
	NUMBER("Trials", "MarginPercent", trial.margin_pct, 0, 100, 9),
	NUMBER("Trials", "WinPercent", trial.win_pct, 50, 100, 66),
	NUMBER("Trials", "EfficiencyLossPercent", trial.eff_loss_pct, 0, 100, 11),
	NUMBER("Trials", "ConfidencePercent", trial.confidence_pct, 50, 99, 90),
	NUMBER("Trials", "SteadyMSec", trial_steady_ms, 0, 3600000, 8000),
	NUMBER("Trials", "VerdictMaxAgeSec", verdict_max_age_sec, 0, 31536000, 3600),
};

static unsigned number_field(const struct caad_config *c, const struct number_key *k)
{
	unsigned v;

	memcpy(&v, (const char *)c + k->offset, sizeof(v));
	return v;
}

/* KEY=VALUE parsed alone; returns what parse_string() did, the log in *ret_log. */
static int parse_number(struct caad_config *c, const struct number_key *k, uint64_t value, char **ret_log)
{
	_cleanup_free_ char *text = NULL, *path = NULL;

	assert_true(asprintf(&text, "[%s]\n%s=%" PRIu64 "\n", k->section, k->key, value) > 0);
	return parse_string(c, text, &path, ret_log);
}

static void test_parse_every_number(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(number_keys); i++) {
		const struct number_key *k = &number_keys[i];
		uint64_t ok[] = { k->min, k->max, k->other };
		struct caad_config defaults;

		caad_config_init(&defaults);
		assert_int_not_equal(number_field(&defaults, k), k->other);
		for (size_t j = 0; j < ARRAY_SIZE(ok); j++) {
			_cleanup_free_ char *log = NULL;
			struct caad_config c;

			caad_config_init(&c);
			if (parse_number(&c, k, ok[j], &log) != 0 || log[0])
				fail_msg("%s=%" PRIu64 " refused:\n%s", k->key, ok[j], log);
			assert_int_equal(number_field(&c, k), ok[j]);
			/* no other key's field moved */
			for (size_t o = 0; o < ARRAY_SIZE(number_keys); o++)
				if (o != i && number_field(&c, &number_keys[o]) != number_field(&defaults, &number_keys[o]))
					fail_msg("%s=%" PRIu64 " changed %s too", k->key, ok[j], number_keys[o].key);
			caad_config_done(&c);
		}
		for (int side = 0; side < 2; side++) {
			_cleanup_free_ char *log = NULL, *range = NULL;
			uint64_t bad = side ? (uint64_t)k->max + 1 : (uint64_t)k->min - 1;
			struct caad_config c;

			if (!side && k->min == 0)
				continue;
			/* ConfidencePercent= takes 0 (not asked) below its range */
			if (side)
				assert_true(asprintf(&range, "%u..%u", k->min, k->max) > 0);
			else
				assert_true(asprintf(&range, "%s%u..%u", streq(k->key, "ConfidencePercent") ? "0 (not asked) or " : "",
				                     k->min, k->max) > 0);
			caad_config_init(&c);
			if (parse_number(&c, k, bad, &log) != -EINVAL || !strstr(log, range) || !strstr(log, k->key))
				fail_msg("%s=%" PRIu64 ": not refused with its range %s:\n%s", k->key, bad, range, log);
			assert_int_equal(number_field(&c, k), number_field(&defaults, k));
			caad_config_done(&c);
		}
		caad_config_done(&defaults);
	}
}

static void test_parse_bytes(void **state)
{
	static const struct {
		const char *value;
		unsigned bytes;
	} cases[] = {
		{ "0", 0 }, { "1", 1 }, { "100", 100 }, { "64K", 65536 }, { "64k", 65536 }, { "2M", 2u << 20 },
		{ "1G", 1u << 30 }, { "1073741824", 1u << 30 }, { "0G", 0 },
	};
	struct caad_config c;

	caad_config_init(&c);
	assert_int_equal(c.min_flow_bytes, 65536); /* the default */
	caad_config_done(&c);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *path = NULL, *log = NULL, *text = NULL;

		assert_true(asprintf(&text, "[Daemon]\nMinFlowBytes=%s\n", cases[i].value) > 0);
		caad_config_init(&c);
		assert_int_equal(parse_string(&c, text, &path, &log), 0);
		assert_string_equal(log, "");
		assert_int_equal(c.min_flow_bytes, cases[i].bytes);
		caad_config_done(&c);
	}
}

static void test_parse_layout(void **state)
{
	struct caad_config c;
	_cleanup_free_ char *path = NULL, *log = NULL;

	caad_config_init(&c);
	/* BOM, CRLF, comments, blanks, indentation, spaces around '=', a key
	 * repeated (the later wins), an empty list clearing an earlier one. */
	assert_int_equal(parse_string(&c,
	                              "\xef\xbb\xbf# comment\r\n"
	                              "; another comment\r\n"
	                              "\r\n"
	                              "  [Daemon]  \r\n"
	                              "Interfaces = eth0 eth1\r\n"
	                              "    MaxFlows = 128\r\n"
	                              "\tMode=observe\r\n"
	                              "Mode=dry-run\r\n"
	                              "   # indented comment\r\n"
	                              "[Placement]\r\n"
	                              "BannedCPUs=3\r\n"
	                              "BannedCPUs=\r\n"
	                              "RateThreshold=0\r\n"
	                              "AllowSMTSibling=TRUE",
	                              &path, &log),
	                 0);
	assert_string_equal(log, "");
	/* the indented MaxFlows= is a key, not a continuation of Interfaces= */
	assert_int_equal(c.n_interfaces, 2);
	assert_string_equal(c.interfaces[1], "eth1");
	assert_int_equal(c.max_flows, 128);
	assert_int_equal(c.mode, CAAD_MODE_DRY_RUN);
	assert_true(caad_cpumask_empty(&c.policy.banned));
	assert_true(c.policy.rate_threshold_bps == 0);
	assert_true(c.policy.allow_smt_sibling);

	free(path);
	free(log);
	assert_int_equal(parse_string(&c, "[Daemon]\nInterfaces=\n", &path, &log), 0);
	assert_int_equal(c.n_interfaces, 0);
	assert_null(c.interfaces);
	caad_config_done(&c);
}

/*
 * Each case: one error, logged exactly once, as "PATH:LINE: ..." with
 * expect in it; the return is -EINVAL.
 */
/* longer than any line the parser takes */
#define LONG_VALUE_8 "xxxxxxxx"
#define LONG_VALUE_64 LONG_VALUE_8 LONG_VALUE_8 LONG_VALUE_8 LONG_VALUE_8 LONG_VALUE_8 LONG_VALUE_8 LONG_VALUE_8 LONG_VALUE_8
#define LONG_VALUE LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64 LONG_VALUE_64

static void test_parse_errors(void **state)
{
	static const struct {
		const char *text;
		unsigned line;
		const char *expect;
	} cases[] = {
		{ "[Daemon]\nMode=enforce\nFoo=bar\n", 3, "Unknown key 'Foo' in section [Daemon]" },
		{ "[Daemon]\nmode=enforce\n", 2, "Unknown key 'mode' in section [Daemon]" },
		{ "[Placement]\nMode=enforce\n", 2, "Unknown key 'Mode' in section [Placement]" },
		{ "[Daemon]\n\n[Bogus]\nX=1\nY=2\n", 3, "Unknown section [Bogus]" },
		{ "[daemon]\nMode=enforce\n", 1, "Unknown section [daemon]" },
		/* what follows a bad header goes unsaid, whatever it is */
		{ "[Bogus]\n=x\nMode\nA ;b=c\n[Daemon]\nMode=enforce\n", 1, "Unknown section [Bogus]" },
		{ "[Bogus]\nFoo=" LONG_VALUE "\n", 1, "Unknown section [Bogus]" },
		{ "[Bogus\n=x\n", 1, "Invalid section header '[Bogus'" },
		{ "# c\nMode=enforce\n", 2, "Assignment 'Mode=' outside of any section" },
		{ "[Daemon\nMode=enforce\n", 1, "Invalid section header '[Daemon': expected [Section]" },
		{ "[Daemon] x\nMode=x\n", 1, "Invalid section header" },
		{ "[Daemon]\nMode\n", 2, "Invalid line 'Mode': expected Key=Value" },
		{ "[Daemon]\n\n\nMode: enforce\n", 4, "Invalid line 'Mode: enforce': expected Key=Value" },
		{ "[Daemon]\n=enforce\n", 2, "Invalid line '=enforce': missing key before '='" },
		{ "[Daemon]\nMode=fast\n", 2, "Invalid Mode= value 'fast': expected enforce, dry-run or observe" },
		{ "[Daemon]\nMode=\n", 2, "Invalid Mode= value ''" },
		{ "[Daemon]\nIntervalMSec=9\n", 2, "Invalid IntervalMSec= value '9': out of range 10..60000" },
		{ "[Daemon]\nIntervalMSec=60001\n", 2, "out of range 10..60000" },
		{ "[Daemon]\nIntervalMSec=99999999999999999999\n", 2, "out of range 10..60000" },
		{ "[Daemon]\nIntervalMSec=-1\n", 2, "Invalid IntervalMSec= value '-1': expected an unsigned" },
		{ "[Daemon]\nIntervalMSec=1s\n", 2, "expected an unsigned decimal number" },
		{ "[Daemon]\nIntervalMSec=\n", 2, "Invalid IntervalMSec= value ''" },
		{ "[Daemon]\nScanBudgetPercent=0\n", 2, "Invalid ScanBudgetPercent= value '0': out of range 1..100" },
		{ "[Daemon]\nScanBudgetPercent=101\n", 2, "out of range 1..100" },
		{ "[Daemon]\nScanBudgetPercent=10%\n", 2, "expected an unsigned decimal number" },
		{ "[Daemon]\nMaxFlows=63\n", 2, "Invalid MaxFlows= value '63': out of range 64..1048576" },
		{ "[Daemon]\nMaxFlows=1048577\n", 2, "out of range 64..1048576" },
		{ "[Daemon]\nMinFlowBytes=2G\n", 2, "Invalid MinFlowBytes= value '2G': out of range 0..1073741824" },
		{ "[Daemon]\nMinFlowBytes=1073741825\n", 2, "out of range 0..1073741824" },
		{ "[Daemon]\nMinFlowBytes=99999999999999999999K\n", 2, "out of range 0..1073741824" },
		{ "[Daemon]\nMinFlowBytes=64X\n", 2, "Invalid MinFlowBytes= value '64X': expected bytes" },
		{ "[Daemon]\nMinFlowBytes=64KB\n", 2, "expected bytes with an optional K, M or G suffix" },
		{ "[Daemon]\nMinFlowBytes=K\n", 2, "expected bytes" },
		{ "[Daemon]\nMinFlowBytes=-1\n", 2, "expected bytes" },
		{ "[Daemon]\nMinFlowBytes=1.5M\n", 2, "expected bytes" },
		{ "[Daemon]\nMinFlowBytes=\n", 2, "Invalid MinFlowBytes= value ''" },
		{ "[Daemon]\nLogLevel=loud\n", 2, "Invalid LogLevel= value 'loud'" },
		{ "[Daemon]\nInterfaces=eth0 a/b\n", 2, "Invalid Interfaces= value 'eth0 a/b': 'a/b' is not an interface name" },
		{ "[Daemon]\nInterfaces=abcdefghijklmnop\n", 2, "'abcdefghijklmnop' is not an interface name" },
		{ "[Daemon]\nInterfaces=eth0 ..\n", 2, "'..' is not an interface name" },
		{ "[Placement]\nRateThreshold=1X\n", 2, "Invalid RateThreshold= value '1X': expected bit/s" },
		{ "[Placement]\nRateThreshold=G\n", 2, "Invalid RateThreshold= value 'G'" },
		{ "[Placement]\nRateThreshold=1.0001K\n", 2, "Invalid RateThreshold= value '1.0001K': not a whole number" },
		{ "[Placement]\nRateThreshold=99999999T\n", 2, "Invalid RateThreshold= value '99999999T': larger than" },
		{ "[Placement]\nBannedCPUs=a-b\n", 2, "Invalid BannedCPUs= value 'a-b': expected a CPU list" },
		{ "[Placement]\nBannedCPUs=4096\n", 2, "Invalid BannedCPUs= value '4096': CPU numbers must be below 4096" },
		{ "[Placement]\nAllowSMTSibling=maybe\n", 2, "Invalid AllowSMTSibling= value 'maybe': expected yes/no" },
		{ "[Placement]\nAllowOtherPackage=2\n", 2, "Invalid AllowOtherPackage= value '2'" },
		{ "[Placement]\nMinAgeMSec=3600001\n", 2, "Invalid MinAgeMSec= value '3600001': out of range 0..3600000" },
		{ "[Placement]\nDwellMSec=1s\n", 2, "Invalid DwellMSec= value '1s': expected an unsigned" },
		{ "[Placement]\nMaxMovesPerCycle=0\n", 2, "Invalid MaxMovesPerCycle= value '0': out of range 1..1048576" },
		{ "[Trials]\nConfidencePercent=30\n", 2, "Invalid ConfidencePercent= value '30': expected 0 (not asked) or 50..99" },
		{ "[Trials]\n\nConfidencePercent=100\n", 3, "expected 0 (not asked) or 50..99" },
		{ "[Trials]\nConfidencePercent=95%\n", 2, "expected an unsigned decimal number" },
		{ "[Trials]\nTryHostSteering=maybe\n", 2, "Invalid TryHostSteering= value 'maybe': expected yes/no" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct caad_config c;
		_cleanup_free_ char *path = NULL, *log = NULL, *want = NULL;
		int r;

		caad_config_init(&c);
		r = parse_string(&c, cases[i].text, &path, &log);
		assert_true(asprintf(&want, "%s:%u: ", path, cases[i].line) > 0);
		if (r != -EINVAL)
			fail_msg("case %zu: returned %d, expected -EINVAL", i, r);
		if (count_lines(log) != 1)
			fail_msg("case %zu: expected one message, got:\n%s", i, log);
		/* one line: "PATH:LINE: " starts it, expect is in it */
		if (strncmp(skip_prio(log), want, strlen(want)) != 0)
			fail_msg("case %zu: log does not start with \"%s\":\n%s", i, want, log);
		if (!strstr(log, cases[i].expect))
			fail_msg("case %zu: log lacks \"%s\":\n%s", i, cases[i].expect, log);
		/* kept for D-Bus Reload's reply: the same text */
		if (!c.error || strncmp(c.error, want, strlen(want)) != 0 || !strstr(c.error, cases[i].expect))
			fail_msg("case %zu: error kept is \"%s\"", i, c.error ? c.error : "(null)");
		caad_config_done(&c);
		assert_null(c.error);
	}
}

static void test_parse_errors_each_once(void **state)
{
	struct caad_config c;
	_cleanup_free_ char *path = NULL, *log = NULL, *l2 = NULL, *l3 = NULL, *l5 = NULL, *l9 = NULL;

	caad_config_init(&c);
	assert_int_equal(parse_string(&c,
	                              "[Daemon]\n"              /* 1 */
	                              "Foo=1\n"                 /* 2 */
	                              "Mode=x\n"                /* 3 */
	                              "[Placement]\n"           /* 4 */
	                              "Bar=2\n"                 /* 5 */
	                              "AllowSMTSibling=yes\n"   /* 6 */
	                              "[Nope]\n"                /* 7 */
	                              "Baz=3\n"                 /* 8 */
	                              "[Daemon]\n"              /* 9 */
	                              "MaxFlows=1\n",           /* 10 */
	                              &path, &log),
	                 -EINVAL);
	assert_true(asprintf(&l2, "%s:2: Unknown key 'Foo'", path) > 0);
	assert_true(asprintf(&l3, "%s:3: Invalid Mode= value 'x'", path) > 0);
	assert_true(asprintf(&l5, "%s:5: Unknown key 'Bar' in section [Placement]", path) > 0);
	assert_true(asprintf(&l9, "%s:7: Unknown section [Nope]", path) > 0);
	assert_int_equal(count_substr(log, l2), 1);
	assert_int_equal(count_substr(log, l3), 1);
	assert_int_equal(count_substr(log, l5), 1);
	assert_int_equal(count_substr(log, l9), 1);
	assert_int_equal(count_substr(log, ":10: Invalid MaxFlows= value '1'"), 1);
	assert_int_equal(count_substr(log, "Baz"), 0); /* inside [Nope]: reported via the header */
	assert_int_equal(count_lines(log), 5);
	/* the first one is kept */
	assert_non_null(c.error);
	assert_int_equal(strncmp(c.error, l2, strlen(l2)), 0);
	/* good lines between bad ones still apply */
	assert_true(c.policy.allow_smt_sibling);
	caad_config_done(&c);
}

static void test_parse_long_lines(void **state)
{
	struct caad_config c;
	_cleanup_free_ char *path = NULL, *log = NULL, *text = NULL, *want = NULL, *cpus = NULL, *names = NULL,
	                    *huge = NULL;
	char comment[1000];
	size_t n = 0;

	/* A long comment is fine; so is a list longer than inih's 199
	 * characters a line: every odd CPU of 4096, 24 interfaces. */
	memset(comment, 'c', sizeof(comment) - 1);
	comment[sizeof(comment) - 1] = '\0';
	cpus = calloc(4096 / 2, sizeof("4095,"));
	names = calloc(24, sizeof("eth-0123456789 "));
	assert_non_null(cpus);
	assert_non_null(names);
	for (unsigned i = 1; i < 4096; i += 2)
		n += (size_t)sprintf(cpus + n, "%s%u", i > 1 ? "," : "", i);
	for (unsigned i = 0, m = 0; i < 24; i++)
		m += (size_t)sprintf(names + m, "%seth-01234567%02u", i ? "  " : "", i);
	assert_true(asprintf(&text, "#%s\n[Daemon]\nInterfaces= %s \nMaxFlows=100\n[Placement]\nBannedCPUs  =  %s\n", comment,
	                     names, cpus) > 0);
	caad_config_init(&c);
	if (parse_string(&c, text, &path, &log) != 0)
		fail_msg("a long list refused:\n%s", log);
	assert_int_equal(c.n_interfaces, 24);
	assert_string_equal(c.interfaces[0], "eth-0123456700");
	assert_string_equal(c.interfaces[23], "eth-0123456723");
	assert_int_equal(caad_cpumask_count(&c.policy.banned), 2048);
	assert_true(caad_cpumask_test(&c.policy.banned, 4095));
	assert_false(caad_cpumask_test(&c.policy.banned, 4094));
	assert_int_equal(c.max_flows, 100);
	caad_config_done(&c);
	free(text), free(path), free(log);

	/* a long value checked as any: the error on its own line */
	assert_true(asprintf(&text, "[Placement]\nBannedCPUs=%s,4096\n[Daemon]\nMaxFlows=100\n", cpus) > 0);
	caad_config_init(&c);
	assert_int_equal(parse_string(&c, text, &path, &log), -EINVAL);
	assert_true(asprintf(&want, "%s:2: Invalid BannedCPUs= value", path) > 0);
	if (!strstr(log, want) || !strstr(log, "...': CPU numbers must be below 4096"))
		fail_msg("log lacks \"%s\" and its reason:\n%s", want, log);
	assert_int_equal(count_lines(log), 1);
	assert_int_equal(c.max_flows, 100);
	caad_config_done(&c);
	free(text), free(path), free(log), free(want);

	/* outside of a section, or in a bad one (said once, at its header) */
	assert_true(asprintf(&text, "Interfaces=%s\n[Nope]\nInterfaces=%s\n", names, names) > 0);
	caad_config_init(&c);
	assert_int_equal(parse_string(&c, text, &path, &log), -EINVAL);
	assert_true(asprintf(&want, "%s:1: Assignment 'Interfaces=' outside of any section", path) > 0);
	if (!strstr(log, want))
		fail_msg("log lacks \"%s\":\n%s", want, log);
	assert_non_null(strstr(log, ":2: Unknown section [Nope]"));
	assert_int_equal(count_lines(log), 2);
	caad_config_done(&c);
	free(text), free(path), free(log), free(want);

	/* longer than 65535 characters: an error, the file goes on */
	huge = malloc(65536 + 1);
	assert_non_null(huge);
	memset(huge, 'x', 65536);
	huge[65536] = '\0';
	memcpy(huge, "Interfaces=", strlen("Interfaces="));
	assert_true(asprintf(&text, "[Daemon]\n%s\nMaxFlows=100\n", huge) > 0);
	caad_config_init(&c);
	assert_int_equal(parse_string(&c, text, &path, &log), -EINVAL);
	assert_true(asprintf(&want, "%s:2: Line too long: longer than 65535 characters", path) > 0);
	if (!strstr(log, want))
		fail_msg("log lacks \"%s\":\n%s", want, log);
	assert_int_equal(count_lines(log), 1);
	assert_int_equal(c.max_flows, 100);
	caad_config_done(&c);
}

/* The same parser over a buffer: exactly len bytes, NUL bytes included. */
/* MetricsFile=: an absolute file name, replaced by a later one, empty for none. */
static void test_metrics_file(void **state)
{
	static const char *const bad[] = { "caad.prom", "./caad.prom", "/var/lib/prometheus/" };
	struct caad_config c;
	_cleanup_free_ char *path = NULL, *log = NULL;

	caad_config_init(&c);
	assert_int_equal(parse_string(&c, "[Daemon]\nMetricsFile=/var/lib/node/caad.prom\n", &path, &log), 0);
	assert_string_equal(c.metrics_file, "/var/lib/node/caad.prom");
	free(path), free(log);
	assert_int_equal(parse_string(&c, "[Daemon]\nMetricsFile=/run/caad.prom\n", &path, &log), 0);
	assert_string_equal(c.metrics_file, "/run/caad.prom");
	free(path), free(log);
	assert_int_equal(parse_string(&c, "[Daemon]\nMetricsFile=\n", &path, &log), 0);
	assert_null(c.metrics_file);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		_cleanup_free_ char *text = NULL;

		free(path), free(log);
		assert_true(asprintf(&text, "[Daemon]\nMetricsFile=/kept.prom\nMetricsFile=%s\n", bad[i]) > 0);
		assert_int_equal(parse_string(&c, text, &path, &log), -EINVAL);
		assert_non_null(strstr(log, "expected an absolute file name, or nothing"));
		assert_string_equal(c.metrics_file, "/kept.prom"); /* a bad value changes nothing */
	}
	caad_config_done(&c);
	assert_null(c.metrics_file);
}

static void test_mechanisms(void **state)
{
	const unsigned all = (1u << _CAAD_SETTING_KIND_COUNT) - 1;
	const unsigned rfs = (1u << CAAD_SETTING_RFS_FLOW_CNT) | (1u << CAAD_SETTING_RFS_TABLE);
	const unsigned ntuple = 1u << CAAD_SETTING_NTUPLE_RULE;
	struct caad_config c;
	_cleanup_free_ char *path = NULL, *log = NULL;

	caad_config_init(&c);
	/* by default everything but ntuple rules (a NIC-wide, small resource) */
	assert_int_equal(c.policy.disabled_mechanisms, ntuple);
	assert_int_equal(parse_string(&c, "[Placement]\nMechanisms=rps  irq\n", &path, &log), 0);
	assert_int_equal(c.policy.disabled_mechanisms, (1u << CAAD_SETTING_KTHREAD_AFFINITY) | rfs | ntuple);
	free(path), free(log);
	assert_int_equal(parse_string(&c, "[Placement]\nMechanisms=kthread irq rps rfs\n", &path, &log), 0);
	assert_int_equal(c.policy.disabled_mechanisms, ntuple);
	free(path), free(log);
	assert_int_equal(parse_string(&c, "[Placement]\nMechanisms=ntuple kthread irq rps rfs\n", &path, &log), 0);
	assert_int_equal(c.policy.disabled_mechanisms, 0);
	free(path), free(log);
	/* empty: back to the default, not "none" */
	assert_int_equal(parse_string(&c, "[Placement]\nMechanisms=rps\nMechanisms=\n", &path, &log), 0);
	assert_int_equal(c.policy.disabled_mechanisms, ntuple);
	free(path), free(log);
	assert_int_equal(parse_string(&c, "[Placement]\nMechanisms=rps\nMechanisms=irq flowdirector\n", &path, &log),
	                 -EINVAL);
	assert_non_null(strstr(log, ":3: "));
	assert_non_null(strstr(log, "unknown mechanism 'flowdirector'"));
	assert_int_equal(c.policy.disabled_mechanisms, all & ~(1u << CAAD_SETTING_RPS_CPUS)); /* rps only, as before */
	caad_config_done(&c);
}

static void test_parse_string(void **state)
{
	static const char text[] = "[Daemon]\nMaxFlows=100\nMode=observe\n";
	static const char nul[] = "[Daemon]\nMode=dry-run\0x\n";
	struct caad_config c;
	struct capture cap;
	_cleanup_free_ char *log = NULL;

	caad_config_init(&c);
	assert_int_equal(caad_config_parse_string(&c, text, strlen("[Daemon]\nMaxFlows=100\n"), "cut.conf"), 0);
	assert_int_equal(c.max_flows, 100);
	assert_int_equal(c.mode, CAAD_MODE_ENFORCE); /* past len */
	assert_int_equal(caad_config_parse_string(&c, NULL, 0, "empty.conf"), 0);

	capture_begin(&cap, tmpdir);
	assert_int_equal(caad_config_parse_string(&c, nul, sizeof(nul) - 1, "nul.conf"), -EINVAL);
	log = capture_end(&cap);
	if (!strstr(log, "nul.conf:2: Invalid line: contains a NUL byte"))
		fail_msg("unexpected log:\n%s", log);
	assert_int_equal(c.mode, CAAD_MODE_ENFORCE);

	/* a NUL in a section header: its keys are that header's error, not
	 * each one of the section before */
	static const char header[] = "[Daemon]\nMode=observe\n[Trials]\0\nRounds=5\n";
	free(log);
	capture_begin(&cap, tmpdir);
	assert_int_equal(caad_config_parse_string(&c, header, sizeof(header) - 1, "hdr.conf"), -EINVAL);
	log = capture_end(&cap);
	if (!strstr(log, "hdr.conf:3: Invalid line: contains a NUL byte") || count_lines(log) != 1)
		fail_msg("unexpected log:\n%s", log);
	caad_config_done(&c);
}

/* A ';' after whitespace in a key (inih takes it for a comment): its own
 * error, also after another one (inih reports only its first). */
static void test_parse_semicolon_in_key(void **state)
{
	struct caad_config c;
	_cleanup_free_ char *path = NULL, *log = NULL;

	caad_config_init(&c);
	assert_int_equal(parse_string(&c, "[Daemon]\nMode=x\nMaxFlows ;c=5\nLogLevel=debug;x\n", &path, &log), -EINVAL);
	if (count_lines(log) != 3 || !strstr(log, ":3: Invalid line 'MaxFlows ;c=5': expected Key=Value"))
		fail_msg("unexpected log:\n%s", log);
	caad_config_done(&c);
}

/* ... and in a value, where inih would cut the value there: an error, the
 * value left as it was (a tab as much as a space). */
static void test_parse_semicolon_in_value(void **state)
{
	struct caad_config c;
	_cleanup_free_ char *path = NULL, *log = NULL;

	caad_config_init(&c);
	assert_int_equal(parse_string(&c, "[Daemon]\nInterfaces=eth0 ;eth1\nBannedCPUs=0-1\t;3\nMaxFlows=7;\n", &path,
	                              &log),
	                 -EINVAL);
	/* (a ';' after no whitespace is part of the value, as inih reads it) */
	if (count_lines(log) != 3 ||
	    !strstr(log, ":2: Invalid line 'Interfaces=eth0 ;eth1': a ';' after whitespace in a value") ||
	    !strstr(log, ":3: Invalid line 'BannedCPUs=0-1") || !strstr(log, ";3': a ';' after whitespace in a value") ||
	    !strstr(log, ":4: Invalid MaxFlows= value '7;'"))
		fail_msg("unexpected log:\n%s", log);
	caad_config_done(&c);
}

static void test_parse_file_missing(void **state)
{
	struct caad_config c;
	struct capture cap;
	_cleanup_free_ char *path = NULL, *log = NULL;

	assert_true(asprintf(&path, "%s/nonexistent.conf", tmpdir) > 0);
	caad_config_init(&c);
	capture_begin(&cap, tmpdir);
	assert_int_equal(caad_config_parse_file(&c, path), -ENOENT);
	log = capture_end(&cap);
	assert_string_equal(log, ""); /* the caller decides */
	assert_defaults(&c);

	free(log);
	capture_begin(&cap, tmpdir);
	assert_int_equal(caad_config_parse_file(&c, tmpdir), -EISDIR);
	log = capture_end(&cap);
	assert_non_null(strstr(log, tmpdir));
	caad_config_done(&c);
}

/* A FIFO or a device is refused at once: a FIFO no one writes would hold
 * the start up, /dev/zero is one endless line. */
static void test_parse_file_not_regular(void **state)
{
	struct caad_config c;
	_cleanup_free_ char *fifo = NULL;
	const char *paths[2];

	assert_true(asprintf(&fifo, "%s/fifo.conf", tmpdir) > 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	paths[0] = fifo;
	paths[1] = "/dev/zero";
	for (size_t i = 0; i < 2; i++) {
		struct capture cap;
		_cleanup_free_ char *log = NULL, *want = NULL;

		caad_config_init(&c);
		capture_begin(&cap, tmpdir);
		assert_int_equal(caad_config_parse_file(&c, paths[i]), -EINVAL);
		log = capture_end(&cap);
		assert_true(asprintf(&want, "Failed to read %s: not a regular file", paths[i]) > 0);
		if (!strstr(log, want) || !c.error || !strstr(c.error, want))
			fail_msg("%s: log \"%s\", error \"%s\"", paths[i], log, c.error ? c.error : "(null)");
		assert_defaults(&c);
		caad_config_done(&c);
	}
	assert_int_equal(unlink(fifo), 0);

	/* /dev/null is "no configuration" (caad -c /dev/null) */
	caad_config_init(&c);
	assert_int_equal(caad_config_parse_file(&c, "/dev/null"), 0);
	assert_null(c.error);
	assert_defaults(&c);
	caad_config_done(&c);
}

/* The error kept for sd_notify's STATUS= and D-Bus is one line: a file
 * name with a newline in it does not add a line of its own there. */
static void test_error_one_line(void **state)
{
	struct caad_config c;
	struct capture cap;
	_cleanup_free_ char *path = NULL, *log = NULL;

	path = write_conf("x\nSTOPPING=1\ny.conf", "[Daemon]\nMaxFlows=many\n");
	caad_config_init(&c);
	capture_begin(&cap, tmpdir);
	assert_int_equal(caad_config_parse_file(&c, path), -EINVAL);
	log = capture_end(&cap);
	assert_non_null(c.error);
	if (strchr(c.error, '\n') || !strstr(c.error, "x?STOPPING=1?y.conf:2: Invalid MaxFlows= value 'many'"))
		fail_msg("error kept: \"%s\"", c.error);
	caad_config_done(&c);
	assert_int_equal(unlink(path), 0);
}

static void test_load_explicit(void **state)
{
	struct caad_config c;
	struct capture cap;
	_cleanup_free_ char *missing = NULL, *log = NULL, *vendor = NULL, *explicit_path = NULL;

	/* a stack that must be ignored when a file is named */
	assert_int_equal(setenv("CAAD_CONF_ROOT", tmpdir, 1), 0);
	vendor = write_conf(CAAD_VENDORDIR "/caad.conf", "[Daemon]\nMode=observe\nMaxFlows=64\n");
	explicit_path = write_conf("explicit.conf", "[Daemon]\nMaxFlows=128\n");

	caad_config_init(&c);
	assert_int_equal(caad_config_load(&c, explicit_path), 0);
	assert_int_equal(c.max_flows, 128);
	assert_int_equal(c.mode, CAAD_MODE_ENFORCE);
	assert_null(c.error);

	assert_true(asprintf(&missing, "%s/missing.conf", tmpdir) > 0);
	capture_begin(&cap, tmpdir);
	assert_int_equal(caad_config_load(&c, missing), -ENOENT);
	log = capture_end(&cap);
	if (!strstr(log, missing))
		fail_msg("log lacks the path:\n%s", log);
	assert_int_equal(count_lines(log), 1);
	assert_non_null(c.error);
	assert_non_null(strstr(c.error, missing));
	caad_config_done(&c);
}

static void test_load_stack(void **state)
{
	struct caad_config c;
	struct capture cap;
	_cleanup_free_ char *log = NULL;
	char *p;

	assert_int_equal(setenv("CAAD_CONF_ROOT", tmpdir, 1), 0);

	/* nothing there at all: defaults, silently */
	caad_config_init(&c);
	capture_begin(&cap, tmpdir);
	assert_int_equal(caad_config_load(&c, NULL), 0);
	log = capture_end(&cap);
	assert_string_equal(log, "");
	assert_defaults(&c);

	/* written out of lexical order on purpose */
	free(write_conf(CAAD_SYSCONFDIR "/caad.conf.d/20-b.conf", "[Daemon]\nMaxFlows=4096\n"));
	free(write_conf(CAAD_SYSCONFDIR "/caad.conf.d/10-a.conf",
	                "[Daemon]\nMaxFlows=2048\nInterfaces=\n[Placement]\nRateThreshold=5M\n"));
	free(write_conf(CAAD_SYSCONFDIR "/caad.conf",
	                "[Daemon]\nIntervalMSec=200\nInterfaces=eth0\nMaxFlows=1024\n"
	                "[Placement]\nBannedCPUs=2\n"));
	free(write_conf(CAAD_VENDORDIR "/caad.conf",
	                "[Daemon]\nMode=observe\nIntervalMSec=100\nMaxFlows=512\nLogLevel=debug\n"
	                "Interfaces=eth9\n[Placement]\nBannedCPUs=0-1\nAllowOtherPackage=yes\n"));
	/* not drop-ins: would break the parse if read */
	free(write_conf(CAAD_SYSCONFDIR "/caad.conf.d/README", "not ini\n"));
	free(write_conf(CAAD_SYSCONFDIR "/caad.conf.d/.hidden.conf", "[Daemon]\nMaxFlows=8\n"));
	free(write_conf(CAAD_SYSCONFDIR "/caad.conf.d/30-c.conf.bak", "[Daemon]\nMaxFlows=8\n"));
	p = write_conf(CAAD_SYSCONFDIR "/caad.conf.d/40-d.conf/x", "");
	free(p);

	caad_config_done(&c);
	caad_config_init(&c);
	free(log);
	capture_begin(&cap, tmpdir);
	assert_int_equal(caad_config_load(&c, NULL), 0);
	log = capture_end(&cap);
	assert_string_equal(log, "");

	assert_int_equal(c.mode, CAAD_MODE_OBSERVE);        /* vendor only */
	assert_int_equal(c.log_level, LOG_DEBUG);           /* vendor only */
	assert_true(c.policy.allow_other_package);          /* vendor only */
	assert_int_equal(c.interval_ms, 200);               /* etc beats vendor */
	assert_true(caad_cpumask_test(&c.policy.banned, 2)); /* etc replaces vendor's 0-1 */
	assert_int_equal(caad_cpumask_count(&c.policy.banned), 1);
	assert_int_equal(c.n_interfaces, 0);                /* 10-a cleared etc's */
	assert_true(c.policy.rate_threshold_bps == UINT64_C(5000000)); /* 10-a */
	assert_int_equal(c.max_flows, 4096);                /* 20-b after 10-a */
	caad_config_done(&c);
}

static void test_load_stack_errors(void **state)
{
	struct caad_config c;
	struct capture cap;
	_cleanup_free_ char *log = NULL, *bad1 = NULL, *bad2 = NULL, *want1 = NULL, *want2 = NULL;

	assert_int_equal(setenv("CAAD_CONF_ROOT", tmpdir, 1), 0);
	bad1 = write_conf(CAAD_SYSCONFDIR "/caad.conf", "[Daemon]\n\nIntervalMSec=1\n");
	free(write_conf(CAAD_SYSCONFDIR "/caad.conf.d/10-ok.conf", "[Daemon]\nMaxFlows=100\n"));
	bad2 = write_conf(CAAD_SYSCONFDIR "/caad.conf.d/20-bad.conf", "[Placement]\nFoo=1\n");

	/* every file is read and every error reported; the first error is returned */
	caad_config_init(&c);
	capture_begin(&cap, tmpdir);
	assert_int_equal(caad_config_load(&c, NULL), -EINVAL);
	log = capture_end(&cap);
	assert_true(asprintf(&want1, "%s:3: Invalid IntervalMSec= value '1'", bad1) > 0);
	assert_true(asprintf(&want2, "%s:2: Unknown key 'Foo' in section [Placement]", bad2) > 0);
	if (!strstr(log, want1) || !strstr(log, want2))
		fail_msg("log lacks \"%s\" or \"%s\":\n%s", want1, want2, log);
	assert_int_equal(count_lines(log), 2);
	assert_int_equal(c.max_flows, 100);
	/* the first error of the stack is kept (D-Bus Reload replies with it) */
	assert_non_null(c.error);
	assert_int_equal(strncmp(c.error, want1, strlen(want1)), 0);
	caad_config_done(&c);
}

/* etc/caad.conf: every key, commented out, with its default. */
static void test_shipped_config(void **state)
{
	const char *src = getenv("CAAD_SOURCE_ROOT");
	_cleanup_free_ char *shipped = NULL, *text = NULL, *out = NULL, *path = NULL, *log = NULL;
	static const char *const keys[] = {
		"Mode", "Interfaces", "IntervalMSec", "ScanBudgetPercent", "MaxFlows", "MinFlowBytes", "LogLevel",
		"RateThreshold", "BannedCPUs", "AllowSMTSibling", "AllowOtherPackage",
		"MinAgeMSec", "DwellMSec", "MaxMovesPerCycle", "IrqBalance", "MetricsFile", "BackOffSec", "Mechanisms",
		"Placement", "Rounds", "TurnMSec", "SettleMSec", "MarginPercent", "WinPercent", "EfficiencyLossPercent", "ConfidencePercent", "SteadyMSec",
		"TryHostSteering", "VerdictMaxAgeSec",
	};
	struct caad_config c;
	unsigned n_keys = 0;
	char *o;

	if (!src)
		test_skip("CAAD_SOURCE_ROOT is not set (run through meson test)");
	assert_true(asprintf(&shipped, "%s/etc/caad.conf", src) > 0);

	/* as shipped: all comments, so the defaults */
	caad_config_init(&c);
	assert_int_equal(caad_config_parse_file(&c, shipped), 0);
	assert_defaults(&c);

	/* uncommented: still the defaults, and every key is there */
	text = read_all(shipped);
	out = o = calloc(1, strlen(text) + 1);
	assert_non_null(out);
	for (const char *l = text; *l;) {
		size_t n = strcspn(l, "\n");

		if (l[0] == '#' && n > 1 && l[1] >= 'A' && l[1] <= 'Z' && memchr(l, '=', n)) {
			l++, n--;
			n_keys++;
		}
		memcpy(o, l, n);
		o += n;
		l += n;
		if (*l == '\n')
			*o++ = *l++;
	}
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		_cleanup_free_ char *k = NULL;

		assert_true(asprintf(&k, "\n%s=", keys[i]) > 0);
		if (!strstr(out, k))
			fail_msg("etc/caad.conf lacks %s=", keys[i]);
	}
	assert_int_equal(n_keys, ARRAY_SIZE(keys));

	assert_int_equal(parse_string(&c, out, &path, &log), 0);
	assert_string_equal(log, "");
	assert_defaults(&c);
	caad_config_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_mode_strings),
		cmocka_unit_test(test_parse_bool),
		cmocka_unit_test(test_parse_rate),
		cmocka_unit_test(test_set_interfaces),
		cmocka_unit_test_setup_teardown(test_parse_each_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_ranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_every_number, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_errors_each_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_long_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_file_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_file_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_one_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_string, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_semicolon_in_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_semicolon_in_value, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_explicit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_stack_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shipped_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mechanisms, setup, teardown),
	};

	/* the messages checked here are errors; make sure they are printed */
	caad_log_set_max_level(LOG_INFO);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
