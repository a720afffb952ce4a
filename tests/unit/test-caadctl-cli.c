/* SPDX-License-Identifier: GPL-2.0-or-later */
/* caadctl's grammar (src/caadctl/cli.c): prefixes, ambiguity, verbs, arguments. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "caadctl.h"
#include "capture.h"

static void test_match(void **state)
{
	static const char *const names[] = { "pause", "plan", "", NULL, "status", "stat" };

	assert_int_equal(ctl_match("pause", names, ARRAY_SIZE(names)), 0);
	assert_int_equal(ctl_match("pa", names, ARRAY_SIZE(names)), 0);
	assert_int_equal(ctl_match("pl", names, ARRAY_SIZE(names)), 1);
	assert_int_equal(ctl_match("p", names, ARRAY_SIZE(names)), -ENOTUNIQ);
	assert_int_equal(ctl_match("x", names, ARRAY_SIZE(names)), -ENOENT);
	assert_int_equal(ctl_match("", names, ARRAY_SIZE(names)), -ENOENT);
	assert_int_equal(ctl_match(NULL, names, ARRAY_SIZE(names)), -ENOENT);
	assert_int_equal(ctl_match("pausex", names, ARRAY_SIZE(names)), -ENOENT);
	/* an exact name wins over a longer one it is a prefix of */
	assert_int_equal(ctl_match("stat", names, ARRAY_SIZE(names)), 5);
	assert_int_equal(ctl_match("sta", names, ARRAY_SIZE(names)), -ENOTUNIQ);
	assert_int_equal(ctl_match("statu", names, ARRAY_SIZE(names)), 4);
	/* case matters */
	assert_int_equal(ctl_match("PAUSE", names, ARRAY_SIZE(names)), -ENOENT);
}

static void test_candidates(void **state)
{
	char buf[64];

	ctl_candidates("re", ctl_object_names, _CTL_OBJECT_COUNT, buf, sizeof(buf));
	assert_string_equal(buf, "reload, resume, restore");
	ctl_candidates("p", ctl_object_names, _CTL_OBJECT_COUNT, buf, sizeof(buf));
	assert_string_equal(buf, "placement, pause, plan");
	ctl_candidates("pl", ctl_object_names, _CTL_OBJECT_COUNT, buf, sizeof(buf));
	assert_string_equal(buf, "placement, plan");
	ctl_candidates("zz", ctl_object_names, _CTL_OBJECT_COUNT, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* a short buffer: whole names only */
	ctl_candidates("re", ctl_object_names, _CTL_OBJECT_COUNT, buf, 16);
	assert_string_equal(buf, "reload, resume");
}

/* Every object is reachable by a unique prefix: none is a prefix of another. */
static void test_objects_unique(void **state)
{
	for (size_t i = 0; i < _CTL_OBJECT_COUNT; i++) {
		assert_non_null(ctl_object_names[i]);
		assert_int_equal(ctl_match(ctl_object_names[i], ctl_object_names, _CTL_OBJECT_COUNT), (int)i);
		for (size_t k = 0; k < _CTL_OBJECT_COUNT; k++)
			if (k != i)
				assert_false(strncmp(ctl_object_names[i], ctl_object_names[k], strlen(ctl_object_names[i])) == 0);
	}
}

#define PARSE(cmd, ...)                                                                           \
	({                                                                                        \
		char *argv_[] = { __VA_ARGS__ };                                                  \
		char err_[256] = "";                                                              \
		int r_ = ctl_parse_command((int)ARRAY_SIZE(argv_), argv_, (cmd), err_, sizeof(err_)); \
		snprintf(last_error, sizeof(last_error), "%s", err_);                             \
		r_;                                                                               \
	})

static char last_error[256];

static void test_parse_ok(void **state)
{
	struct ctl_command c;

	assert_int_equal(PARSE(&c, "status"), 0);
	assert_int_equal(c.object, CTL_STATUS);
	assert_int_equal(c.verb, CTL_VERB_NONE);
	assert_null(c.arg);

	assert_int_equal(PARSE(&c, "fl"), 0);
	assert_int_equal(c.object, CTL_FLOWS);
	assert_int_equal(c.verb, CTL_VERB_LIST);

	assert_int_equal(PARSE(&c, "f", "l"), 0);
	assert_int_equal(c.object, CTL_FLOWS);
	assert_int_equal(c.verb, CTL_VERB_LIST);

	assert_int_equal(PARSE(&c, "flows", "s", "0xffff8881"), 0);
	assert_int_equal(c.verb, CTL_VERB_SHOW);
	assert_string_equal(c.arg, "0xffff8881");

	assert_int_equal(PARSE(&c, "q"), 0);
	assert_int_equal(c.object, CTL_QUEUES);
	assert_int_equal(c.verb, CTL_VERB_LIST);

	assert_int_equal(PARSE(&c, "to"), 0);
	assert_int_equal(c.object, CTL_TOPOLOGY);
	assert_int_equal(PARSE(&c, "tr", "list"), 0);
	assert_int_equal(c.object, CTL_TRIALS);

	assert_int_equal(PARSE(&c, "e", "0x1"), 0);
	assert_int_equal(c.object, CTL_EXPLAIN);
	assert_string_equal(c.arg, "0x1");

	assert_int_equal(PARSE(&c, "mode"), 0);
	assert_int_equal(c.object, CTL_MODE);
	assert_null(c.arg);
	assert_int_equal(PARSE(&c, "mo", "dry"), 0);
	assert_string_equal(c.arg, "dry-run"); /* canonical */
	assert_int_equal(PARSE(&c, "mode", "o"), 0);
	assert_string_equal(c.arg, "observe");
	assert_int_equal(PARSE(&c, "mode", "enforce"), 0);
	assert_string_equal(c.arg, "enforce");

	assert_int_equal(PARSE(&c, "rel"), 0);
	assert_int_equal(c.object, CTL_RELOAD);
	assert_int_equal(PARSE(&c, "resu"), 0);
	assert_int_equal(c.object, CTL_RESUME);
	assert_int_equal(PARSE(&c, "rest"), 0);
	assert_int_equal(c.object, CTL_RESTORE);
	assert_int_equal(PARSE(&c, "pa"), 0);
	assert_int_equal(c.object, CTL_PAUSE);
	assert_int_equal(PARSE(&c, "me"), 0);
	assert_int_equal(c.object, CTL_METRICS);
	assert_int_equal(PARSE(&c, "plan", "x.json"), 0);
	assert_int_equal(c.object, CTL_PLAN);
	assert_string_equal(c.arg, "x.json");

	assert_int_equal(PARSE(&c, "placement"), 0);
	assert_int_equal(c.object, CTL_PLACEMENT);
	assert_null(c.arg);
	assert_int_equal(PARSE(&c, "plac", "m"), 0);
	assert_int_equal(c.object, CTL_PLACEMENT);
	assert_string_equal(c.arg, "measure"); /* canonical */
	assert_int_equal(PARSE(&c, "placement", "prior"), 0);
	assert_string_equal(c.arg, "prior");
	assert_int_equal(PARSE(&c, "placement", "p"), 0);
	assert_string_equal(c.arg, "prior");
}

static void test_parse_errors(void **state)
{
	struct ctl_command c = { .object = CTL_METRICS, .arg = "untouched" };

	assert_int_equal(ctl_parse_command(0, NULL, &c, last_error, sizeof(last_error)), -EINVAL);
	assert_string_equal(last_error, "missing OBJECT (see caadctl --help)");

	assert_int_equal(PARSE(&c, "p"), -EINVAL);
	assert_string_equal(last_error, "ambiguous object 'p': it could be placement, pause, plan");
	assert_int_equal(PARSE(&c, "pla", "x.json"), -EINVAL);
	assert_string_equal(last_error, "ambiguous object 'pla': it could be placement, plan");
	assert_int_equal(PARSE(&c, "re"), -EINVAL);
	assert_string_equal(last_error, "ambiguous object 're': it could be reload, resume, restore");
	assert_int_equal(PARSE(&c, "t"), -EINVAL);
	assert_string_equal(last_error, "ambiguous object 't': it could be topology, trials");
	assert_int_equal(PARSE(&c, "m"), -EINVAL);
	assert_string_equal(last_error, "ambiguous object 'm': it could be mode, metrics");
	assert_int_equal(PARSE(&c, "x"), -EINVAL);
	assert_non_null(strstr(last_error, "unknown object 'x': expected status, flows, queues"));
	assert_int_equal(PARSE(&c, ""), -EINVAL);

	assert_int_equal(PARSE(&c, "flows", "x"), -EINVAL);
	assert_string_equal(last_error, "unknown verb of flows 'x': expected list or show");
	assert_int_equal(PARSE(&c, "flows", "show"), -EINVAL);
	assert_string_equal(last_error, "flows show: missing FLOW");
	assert_int_equal(PARSE(&c, "flows", "show", ""), -EINVAL);
	assert_string_equal(last_error, "flows show: empty FLOW");
	assert_int_equal(PARSE(&c, "flows", "list", "extra"), -EINVAL);
	assert_string_equal(last_error, "flows list: unexpected argument 'extra'");
	assert_int_equal(PARSE(&c, "queues", "show"), -EINVAL);
	assert_string_equal(last_error, "unknown verb of queues 'show': expected list");
	assert_int_equal(PARSE(&c, "status", "now"), -EINVAL);
	assert_string_equal(last_error, "status: unexpected argument 'now'");
	assert_int_equal(PARSE(&c, "explain"), -EINVAL);
	assert_string_equal(last_error, "explain: missing FLOW");
	assert_int_equal(PARSE(&c, "explain", "0x1", "0x2"), -EINVAL);
	/* FLOW as caad reads it: hex, 0x optional, 64 bits */
	assert_int_equal(PARSE(&c, "explain", "\xff\x01"), -EINVAL);
	assert_non_null(strstr(last_error, "explain: '\xff\x01' is not a flow id (hex digits"));
	assert_int_equal(PARSE(&c, "flows", "show", "+1001"), -EINVAL);
	assert_string_equal(last_error, "flows show: '+1001' is not a flow id (hex digits, 0x optional; caadctl flows "
	                                "lists them)");
	assert_int_equal(PARSE(&c, "flows", "show", " 1001"), -EINVAL);
	assert_int_equal(PARSE(&c, "explain", "0x1ffffffffffffffff"), -EINVAL);
	assert_non_null(strstr(last_error, "more than 64 bits"));
	assert_int_equal(PARSE(&c, "mode", "fast"), -EINVAL);
	assert_string_equal(last_error, "unknown mode 'fast': expected enforce, dry-run or observe");
	assert_int_equal(PARSE(&c, "mode", "enforce", "now"), -EINVAL);
	assert_int_equal(PARSE(&c, "placement", "fast"), -EINVAL);
	assert_string_equal(last_error, "unknown placement 'fast': expected prior or measure");
	assert_int_equal(PARSE(&c, "placement", "enforce"), -EINVAL);
	assert_int_equal(PARSE(&c, "placement", "prior", "now"), -EINVAL);
	assert_string_equal(last_error, "placement: unexpected argument 'now'");
	assert_int_equal(PARSE(&c, "trials", "show"), -EINVAL);
	assert_string_equal(last_error, "unknown verb of trials 'show': expected list");
	assert_int_equal(PARSE(&c, "plan"), -EINVAL);
	assert_string_equal(last_error, "plan: missing SCENARIO");
	assert_int_equal(PARSE(&c, "pause", "now"), -EINVAL);

	/* nothing written on failure */
	assert_int_equal(c.object, CTL_METRICS);
	assert_string_equal(c.arg, "untouched");
}

/* The message of a failed call as sd-bus hands the failure over: sd_bus_call()
 * names its own errors too (set from the errno), not a reply's alone. */
static char *bus_fail(const char *method, int err, const char *name, const char *msg)
{
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	struct ctl c = { .legend = true };
	struct capture cap;

	if (name)
		sd_bus_error_set(&e, name, msg);
	else if (err)
		sd_bus_error_set_errno(&e, err);
	capture_begin(&cap, "/tmp");
	assert_int_equal(ctl_bus_fail(&c, method, name || err ? &e : NULL, -err), EXIT_FAILURE);
	return capture_end(&cap);
}

static void test_bus_fail(void **state)
{
	_cleanup_free_ char *lost = bus_fail("ListFlows", ECONNRESET, NULL, NULL),
	                   *refused = bus_fail("connect", ECONNREFUSED, NULL, NULL),
	                   *login = bus_fail("GetStatus", EPERM, NULL, NULL),
	                   *caad = bus_fail("SetMode", 0, SD_BUS_ERROR_ACCESS_DENIED, "SetMode: only root may change caad"),
	                   *gone = bus_fail("Reload", 0, SD_BUS_ERROR_SERVICE_UNKNOWN, "x"),
	                   *other = bus_fail("Explain", 0, "org.caad1.Error.NoSuchFlow", "No flow 0x1");

	/* a call whose connection broke: not "Connection reset by peer" alone */
	assert_non_null(strstr(lost, "caadctl: ListFlows: caad is not reachable: the connection to the system D-Bus"));
	assert_non_null(strstr(refused, "caadctl: caad is not reachable: no system D-Bus at "));
	/* the bus's handshake refused the user: not its policy */
	assert_non_null(strstr(login, "caad is not reachable: the system D-Bus at "));
	assert_non_null(strstr(login, "refused this user"));
	assert_non_null(strstr(caad, "caadctl: SetMode: permission denied: SetMode: only root may change caad"));
	assert_non_null(strstr(gone, "caad is not running"));
	assert_non_null(strstr(other, "caadctl: Explain: No flow 0x1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_objects_unique),
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_bus_fail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
