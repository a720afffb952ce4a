/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * src/lib/busargs.c: the arguments of Explain, SetMode and SetPlacement,
 * read from method calls made here (tests/bus-message.h), and the errors
 * bad ones earn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "caad/busargs.h"
#include "caad/macro.h"
#include "../bus-message.h"

#define MODES "expected enforce, dry-run or observe"
#define PLACEMENTS "expected prior or measure"
#define NOT_HEX "flow ids are hex numbers, with or without 0x, as ListFlows gives them"
#define TOO_BIG "flow ids have 64 bits (16 hex digits), as ListFlows gives them"

static void message_unrefp(sd_bus_message **m)
{
	sd_bus_message_unref(*m);
}

/* A sealed call of member with the arguments of sd_bus_message_append(). */
static sd_bus_message *call(const char *member, const char *types, ...)
{
	sd_bus_message *m = NULL;
	va_list ap;

	assert_int_equal(test_bus_call_new(member, &m), 0);
	if (types) {
		va_start(ap, types);
		assert_true(sd_bus_message_appendv(m, types, ap) >= 0);
		va_end(ap);
	}
	assert_true(test_bus_seal(m) >= 0);
	return m;
}

static void check_error(sd_bus_error *e, const char *name, const char *message)
{
	assert_true(sd_bus_error_is_set(e));
	assert_string_equal(e->name, name);
	assert_string_equal(e->message, message);
	sd_bus_error_free(e);
}

static void test_parse_flow_id(void **state)
{
	static const struct {
		const char *s;
		uint64_t want;
	} good[] = {
		{ "0xffff888109eaeb40", UINT64_C(0xffff888109eaeb40) }, /* as ListFlows gives it */
		{ "ffff888109eaeb40", UINT64_C(0xffff888109eaeb40) },
		{ "0XFFFF888109EAEB40", UINT64_C(0xffff888109eaeb40) },
		{ "0", 0 },
		{ "0x0", 0 },
		{ "dead", 0xdead },
		{ "0xffffffffffffffff", UINT64_MAX },
		{ "0x00000000000000000000ffffffffffffffff", UINT64_MAX }, /* leading zeros are no bits */
	};
	static const char *const invalid[] = {
		"", "0x", "0X", "x1", "-1", "+1", " 1", "1 ", "1\n", "0x-1", "0x+1", "0x 1", "g", "0x0x1",
		"12345678z", "\xc3\xa9", "\xff", "ffffffffffffffffffz", /* too long, but not hex first */
	};
	static const char *const too_big[] = {
		"10000000000000000", "0x1ffffffffffffffff", "0xffffffffffffffff0",
	};
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		v = 42;
		assert_int_equal(caad_busargs_parse_flow_id(good[i].s, &v), 0);
		assert_true(v == good[i].want);
	}
	for (size_t i = 0; i < ARRAY_SIZE(invalid); i++) {
		v = 42;
		if (caad_busargs_parse_flow_id(invalid[i], &v) != -EINVAL)
			fail_msg("'%s' is not -EINVAL", invalid[i]);
		assert_true(v == 42); /* untouched */
	}
	for (size_t i = 0; i < ARRAY_SIZE(too_big); i++) {
		v = 42;
		assert_int_equal(caad_busargs_parse_flow_id(too_big[i], &v), -ERANGE);
		assert_true(v == 42);
	}
	assert_int_equal(caad_busargs_parse_flow_id(NULL, &v), -EINVAL);
}

static void test_echo(void **state)
{
	char buf[CAAD_BUSARGS_ECHO_MAX], in[256], want[CAAD_BUSARGS_ECHO_MAX];

	assert_string_equal(caad_busargs_echo(buf, NULL), "");
	assert_string_equal(caad_busargs_echo(buf, "fast"), "fast");
	assert_string_equal(caad_busargs_echo(buf, "caf\xc3\xa9"), "caf\xc3\xa9");
	assert_string_equal(caad_busargs_echo(buf, "a\tb\nc\x1b"), "a?b?c?");
	assert_string_equal(caad_busargs_echo(buf, "ok\xff\xc3"), "ok??");

	/* 63 bytes fit; 64 are cut to 60 and "..." */
	memset(in, 'a', 63);
	in[63] = '\0';
	assert_string_equal(caad_busargs_echo(buf, in), in);
	memset(in, 'b', sizeof(in) - 1);
	in[sizeof(in) - 1] = '\0';
	memset(want, 'b', 60);
	strcpy(want + 60, "...");
	assert_string_equal(caad_busargs_echo(buf, in), want);
	/* é cut in half at the end: the half becomes '?' */
	memset(in, 'c', 59);
	strcpy(in + 59, "\xc3\xa9\xc3\xa9\xc3\xa9");
	memset(want, 'c', 59);
	strcpy(want + 59, "?...");
	assert_string_equal(caad_busargs_echo(buf, in), want);
}

static void test_explain(void **state)
{
	_cleanup_(message_unrefp) sd_bus_message *m = call("Explain", "s", "0xffff888109eaeb40");
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct caad_busargs_explain a = { .flow_id = 42 };

	assert_int_equal(caad_busargs_read_explain(m, &a, &e), 0);
	assert_false(sd_bus_error_is_set(&e));
	assert_true(a.flow_id == UINT64_C(0xffff888109eaeb40));
	assert_string_equal(a.flow_id_text, "0xffff888109eaeb40");

	/* the daemon's answer when the flow is not in its last scan */
	assert_int_equal(caad_busargs_no_such_flow(&a, &e), -ENOENT);
	check_error(&e, CAAD_BUS_ERROR_NO_SUCH_FLOW,
	            "No flow with id '0xffff888109eaeb40' in the last scan (ListFlows lists them)");
}

static void test_explain_bad_id(void **state)
{
	static const struct {
		const char *id;
		int r;
		const char *message;
	} cases[] = {
		{ "nonsense", -EINVAL, "No flow with id 'nonsense': " NOT_HEX },
		{ "", -EINVAL, "No flow with id '': " NOT_HEX },
		{ "-1", -EINVAL, "No flow with id '-1': " NOT_HEX },
		{ " 0x1", -EINVAL, "No flow with id ' 0x1': " NOT_HEX },
		{ "0xdead\n", -EINVAL, "No flow with id '0xdead?': " NOT_HEX },
		{ "caf\xc3\xa9", -EINVAL, "No flow with id 'caf\xc3\xa9': " NOT_HEX },
		{ "0x10000000000000000", -ERANGE, "No flow with id '0x10000000000000000': " TOO_BIG },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(message_unrefp) sd_bus_message *m = call("Explain", "s", cases[i].id);
		sd_bus_error e = SD_BUS_ERROR_NULL;
		struct caad_busargs_explain a = { .flow_id = 42, .flow_id_text = "untouched" };

		assert_int_equal(caad_busargs_read_explain(m, &a, &e), cases[i].r);
		check_error(&e, CAAD_BUS_ERROR_NO_SUCH_FLOW, cases[i].message);
		assert_true(a.flow_id == 42);
		assert_string_equal(a.flow_id_text, "untouched");
	}
}

/* An id far too long: cut in the message, -ERANGE if all hex, else -EINVAL. */
static void test_explain_oversize(void **state)
{
	char id[4096], want[256];
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct caad_busargs_explain a = { .flow_id = 42 };

	memset(id, 'f', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	snprintf(want, sizeof(want), "No flow with id '%.60s...': " TOO_BIG, id);
	{
		_cleanup_(message_unrefp) sd_bus_message *m = call("Explain", "s", id);

		assert_int_equal(caad_busargs_read_explain(m, &a, &e), -ERANGE);
		check_error(&e, CAAD_BUS_ERROR_NO_SUCH_FLOW, want);
	}
	id[sizeof(id) - 2] = 'z';
	snprintf(want, sizeof(want), "No flow with id '%.60s...': " NOT_HEX, id);
	{
		_cleanup_(message_unrefp) sd_bus_message *m = call("Explain", "s", id);

		assert_int_equal(caad_busargs_read_explain(m, &a, &e), -EINVAL);
		check_error(&e, CAAD_BUS_ERROR_NO_SUCH_FLOW, want);
	}
	assert_true(a.flow_id == 42);
}

/* Calls of another signature than (s): what sd-bus refuses before the
 * handler, refused here too. */
static void test_wrong_arguments(void **state)
{
	static const char *const methods[] = { "Explain", "SetMode", "SetPlacement" };
	static const char *const names[] = { "flow_id", "mode", "placement" };

	for (size_t i = 0; i < ARRAY_SIZE(methods); i++) {
		sd_bus_message *calls[] = {
			call(methods[i], NULL),
			call(methods[i], "i", 1),
			call(methods[i], "u", 1u),
			call(methods[i], "b", 1),
			call(methods[i], "o", "/org/caad1"),
			call(methods[i], "g", "s"),
			call(methods[i], "ss", "0x1", "enforce"),
			call(methods[i], "si", "enforce", 7),
			call(methods[i], "as", 1, "enforce"),
			call(methods[i], "v", "s", "enforce"),
			call(methods[i], "(s)", "enforce"),
			call(methods[i], "a{ss}", 1, "mode", "enforce"),
		};
		static const char *const had[] = {
			"no arguments",      "signature 'i'",  "signature 'u'",  "signature 'b'",
			"signature 'o'",     "signature 'g'",  "signature 'ss'", "signature 'si'",
			"signature 'as'",    "signature 'v'",  "signature '(s)'", "signature 'a{ss}'",
		};

		for (size_t k = 0; k < ARRAY_SIZE(calls); k++) {
			sd_bus_error e = SD_BUS_ERROR_NULL;
			char want[256];
			int r;

			snprintf(want, sizeof(want),
			         "%s() takes one argument, a string %s (signature 's'); it was called with %s", methods[i],
			         names[i], had[k]);
			if (i == 0) {
				struct caad_busargs_explain a = { .flow_id = 42 };

				r = caad_busargs_read_explain(calls[k], &a, &e);
				assert_true(a.flow_id == 42);
			} else if (i == 1) {
				struct caad_busargs_set_mode a = { .mode = _CAAD_MODE_COUNT };

				r = caad_busargs_read_set_mode(calls[k], &a, &e);
				assert_int_equal(a.mode, _CAAD_MODE_COUNT);
			} else {
				struct caad_busargs_set_placement a = { .placement = _CAAD_PLACEMENT_COUNT };

				r = caad_busargs_read_set_placement(calls[k], &a, &e);
				assert_int_equal(a.placement, _CAAD_PLACEMENT_COUNT);
			}
			assert_int_equal(r, -EINVAL);
			check_error(&e, SD_BUS_ERROR_INVALID_ARGS, want);
			sd_bus_message_unref(calls[k]);
		}
	}
}

/* A string that is not UTF-8 never gets into a message: sd-bus refuses it.
 * (The parsers still meet such bytes only through the fuzzer's direct calls.) */
static void test_invalid_utf8_refused(void **state)
{
	_cleanup_(message_unrefp) sd_bus_message *m = NULL;

	assert_int_equal(test_bus_call_new("SetMode", &m), 0);
	assert_int_equal(sd_bus_message_append(m, "s", "enforce\xff"), -EINVAL);
}

static void test_set_mode(void **state)
{
	static const char *const modes[] = { "enforce", "dry-run", "observe" };

	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		_cleanup_(message_unrefp) sd_bus_message *m = call("SetMode", "s", modes[i]);
		sd_bus_error e = SD_BUS_ERROR_NULL;
		struct caad_busargs_set_mode a = { .mode = _CAAD_MODE_COUNT };

		assert_int_equal(caad_busargs_read_set_mode(m, &a, &e), 0);
		assert_false(sd_bus_error_is_set(&e));
		assert_string_equal(caad_mode_to_string(a.mode), modes[i]);
	}
}

static void test_set_mode_unknown(void **state)
{
	static const struct {
		const char *mode;
		const char *echo;
	} cases[] = {
		{ "fast", "fast" },
		{ "", "" },
		{ "Enforce", "Enforce" },    /* no other case */
		{ "enforce ", "enforce " },  /* nor spaces */
		{ "dry", "dry" },            /* nor prefixes: caadctl expands those */
		{ "dry_run", "dry_run" },
		{ "observe\n", "observe?" },
		{ "\x1b[31mred", "?[31mred" },
		{ "\xe2\x86\x92", "\xe2\x86\x92" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(message_unrefp) sd_bus_message *m = call("SetMode", "s", cases[i].mode);
		sd_bus_error e = SD_BUS_ERROR_NULL;
		struct caad_busargs_set_mode a = { .mode = _CAAD_MODE_COUNT };
		char want[256];

		snprintf(want, sizeof(want), "Unknown mode '%s': " MODES, cases[i].echo);
		assert_int_equal(caad_busargs_read_set_mode(m, &a, &e), -EINVAL);
		check_error(&e, SD_BUS_ERROR_INVALID_ARGS, want);
		assert_int_equal(a.mode, _CAAD_MODE_COUNT);
	}
}

static void test_set_mode_oversize(void **state)
{
	char mode[70000], want[256];
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct caad_busargs_set_mode a = { .mode = _CAAD_MODE_COUNT };

	memset(mode, 'x', sizeof(mode) - 1);
	mode[sizeof(mode) - 1] = '\0';
	memcpy(mode, "enforce", 7);
	snprintf(want, sizeof(want), "Unknown mode '%.60s...': " MODES, mode);
	_cleanup_(message_unrefp) sd_bus_message *m = call("SetMode", "s", mode);
	assert_int_equal(caad_busargs_read_set_mode(m, &a, &e), -EINVAL);
	check_error(&e, SD_BUS_ERROR_INVALID_ARGS, want);
	assert_int_equal(a.mode, _CAAD_MODE_COUNT);
}

static void test_set_placement(void **state)
{
	static const char *const placements[] = { "prior", "measure" };

	for (size_t i = 0; i < ARRAY_SIZE(placements); i++) {
		_cleanup_(message_unrefp) sd_bus_message *m = call("SetPlacement", "s", placements[i]);
		sd_bus_error e = SD_BUS_ERROR_NULL;
		struct caad_busargs_set_placement a = { .placement = _CAAD_PLACEMENT_COUNT };

		assert_int_equal(caad_busargs_read_set_placement(m, &a, &e), 0);
		assert_false(sd_bus_error_is_set(&e));
		assert_string_equal(caad_placement_to_string(a.placement), placements[i]);
	}
}

static void test_set_placement_unknown(void **state)
{
	static const struct {
		const char *placement;
		const char *echo;
	} cases[] = {
		{ "fast", "fast" },
		{ "", "" },
		{ "Prior", "Prior" },        /* no other case */
		{ "measure ", "measure " },  /* nor spaces */
		{ "meas", "meas" },          /* nor prefixes: caadctl expands those */
		{ "enforce", "enforce" },    /* a mode is no placement */
		{ "prior\n", "prior?" },
		{ "\x1b[31mred", "?[31mred" },
		{ "\xe2\x86\x92", "\xe2\x86\x92" },
	};
	char oversize[70000], want[256];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(message_unrefp) sd_bus_message *m = call("SetPlacement", "s", cases[i].placement);
		sd_bus_error e = SD_BUS_ERROR_NULL;
		struct caad_busargs_set_placement a = { .placement = _CAAD_PLACEMENT_COUNT };

		snprintf(want, sizeof(want), "Unknown placement '%s': " PLACEMENTS, cases[i].echo);
		assert_int_equal(caad_busargs_read_set_placement(m, &a, &e), -EINVAL);
		check_error(&e, SD_BUS_ERROR_INVALID_ARGS, want);
		assert_int_equal(a.placement, _CAAD_PLACEMENT_COUNT);
	}

	/* far too long: cut in the message */
	memset(oversize, 'x', sizeof(oversize) - 1);
	oversize[sizeof(oversize) - 1] = '\0';
	memcpy(oversize, "measure", 7);
	snprintf(want, sizeof(want), "Unknown placement '%.60s...': " PLACEMENTS, oversize);
	{
		_cleanup_(message_unrefp) sd_bus_message *m = call("SetPlacement", "s", oversize);
		sd_bus_error e = SD_BUS_ERROR_NULL;
		struct caad_busargs_set_placement a = { .placement = _CAAD_PLACEMENT_COUNT };

		assert_int_equal(caad_busargs_read_set_placement(m, &a, &e), -EINVAL);
		check_error(&e, SD_BUS_ERROR_INVALID_ARGS, want);
		assert_int_equal(a.placement, _CAAD_PLACEMENT_COUNT);
	}
}

static int teardown(void **state)
{
	test_bus_free();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_flow_id),
		cmocka_unit_test(test_echo),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_explain_bad_id),
		cmocka_unit_test(test_explain_oversize),
		cmocka_unit_test(test_wrong_arguments),
		cmocka_unit_test(test_invalid_utf8_refused),
		cmocka_unit_test(test_set_mode),
		cmocka_unit_test(test_set_mode_unknown),
		cmocka_unit_test(test_set_mode_oversize),
		cmocka_unit_test(test_set_placement),
		cmocka_unit_test(test_set_placement_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
