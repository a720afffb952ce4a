/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "caad/json.h"
#include "caad/macro.h"
#include "caad/utf8.h"

static void check(const char *in, bool text, const char *want)
{
	char buf[64];

	assert_true(strlen(in) < sizeof(buf));
	strcpy(buf, in);
	assert_ptr_equal(caad_utf8_sanitize(buf, text), buf);
	if (!streq(buf, want))
		fail_msg("\"%s\" -> \"%s\", wanted \"%s\"", in, buf, want);
	assert_int_equal(strlen(buf), strlen(in)); /* never shorter or longer */
}

static void test_valid_kept(void **state)
{
	check("", false, "");
	check("iperf3", false, "iperf3");
	check("eth0-TxRx-3", false, "eth0-TxRx-3");
	check("caf\xc3\xa9", false, "caf\xc3\xa9");                  /* é, 2 bytes */
	check("\xe2\x86\x92", false, "\xe2\x86\x92");                /* →, 3 bytes */
	check("\xf0\x9f\x98\x80", false, "\xf0\x9f\x98\x80");        /* U+1F600, 4 bytes */
	check("\xc2\xa0", false, "\xc2\xa0");                        /* U+00A0, the first after the C1 controls */
	check("\xef\xbf\xbf", false, "\xef\xbf\xbf");                /* U+FFFF */
	check("\xf4\x8f\xbf\xbf", false, "\xf4\x8f\xbf\xbf");        /* U+10FFFF, the last */
	check("\xed\x9f\xbf", false, "\xed\x9f\xbf");                /* U+D7FF, before the surrogates */
}

static void test_invalid_replaced(void **state)
{
	check("\x80", false, "?");                       /* lone continuation byte */
	check("a\xbf" "b", false, "a?b");
	check("\xc3", false, "?");                       /* truncated at the end */
	check("\xc3" "a", false, "?a");                  /* truncated by ASCII */
	check("\xe2\x86", false, "??");                  /* truncated 3-byte: both looked at */
	check("\xc0\xaf", false, "??");                  /* overlong '/' */
	check("\xe0\x80\xaf", false, "???");             /* overlong, 3 bytes */
	check("\xf0\x80\x80\xaf", false, "????");        /* overlong, 4 bytes */
	check("\xed\xa0\x80", false, "???");             /* U+D800, a surrogate */
	check("\xf4\x90\x80\x80", false, "????");        /* U+110000, too large */
	check("\xf8\x88\x80\x80\x80", false, "?????");   /* 5-byte form */
	check("\xfe\xff", false, "??");
	check("ok\xff" "caf\xc3\xa9", false, "ok?caf\xc3\xa9"); /* valid parts survive */
}

static void test_controls(void **state)
{
	check("a\nb\tc", false, "a?b?c");
	check("a\nb\tc", true, "a\nb\tc");
	check("a\rb\x1b[0m\x7f", true, "a?b?[0m?");
	check("\x01\x1f", false, "??");
	/* C1 controls, valid UTF-8 that a terminal may act on (U+009B: CSI) */
	check("\xc2\x80", false, "??");
	check("a\xc2\x9b" "2Jb", true, "a??2Jb");
	check("\xc2\x9f\xc2\xa0", false, "??\xc2\xa0");
}

/* Every string of two bytes: the result is always valid and the same length. */
static void test_exhaustive_pairs(void **state)
{
	for (unsigned a = 1; a < 256; a++)
		for (unsigned b = 1; b < 256; b++) {
			char buf[3] = { (char)a, (char)b, 0 };
			char again[3];

			caad_utf8_sanitize(buf, true);
			assert_int_equal(strlen(buf), 2);
			/* sanitizing is idempotent: what it made is valid */
			memcpy(again, buf, sizeof(buf));
			caad_utf8_sanitize(again, true);
			assert_memory_equal(again, buf, sizeof(buf));
		}
}

/* JSON strings: valid UTF-8 kept, a byte that starts no valid sequence
 * (a 15-byte thread name cut inside a character) written as U+FFFD. */
static void json(const char *in, const char *want)
{
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	caad_json_string(f, in);
	assert_int_equal(fclose(f), 0);
	if (!streq(out, want))
		fail_msg("json(\"%s\") = %s, wanted %s", in, out, want);
}

static void test_json_string(void **state)
{
	json("iperf3", "\"iperf3\"");
	json("a\"b\\c\n\t\x01\x7f", "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\"");
	json("\xe6\x95\xb0\xe6\x8d\xae", "\"\xe6\x95\xb0\xe6\x8d\xae\"");       /* kept */
	json("a\xe6\x95\xb0\xe6\x8d", "\"a\xe6\x95\xb0\\ufffd\\ufffd\"");      /* cut */
	json("\xff\xc0\xafz", "\"\\ufffd\\ufffd\\ufffdz\"");                  /* never valid */
	json("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");                    /* a surrogate */
	json("\xf0\x9f\x98\x80!", "\"\xf0\x9f\x98\x80!\"");
	json("a\xc2\x9b" "2J\xc2\x80\xc2\xa0", "\"a\\u009b2J\\u0080\xc2\xa0\"");    /* C1 controls escaped */
	assert_int_equal(caad_utf8_sequence("\xf0\x9f\x98\x80"), 4);
	assert_int_equal(caad_utf8_sequence("\xf0\x9f\x98"), 0);
	assert_int_equal(caad_utf8_sequence("a"), 1);
	assert_int_equal(caad_utf8_sequence(""), 1);
}

/* Names as D-Bus carries them: '?' where caad_utf8_sanitize() puts it,
 * so that GetTopology's and ListFlows' names of one interface are equal. */
static void test_json_name(void **state)
{
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	char buf[32];

	assert_non_null(f);
	caad_json_name(f, "eth\xfe");
	fputc(' ', f);
	caad_json_name(f, "e\x1b[1mx");
	fputc(' ', f);
	caad_json_name(f, "a\"b\xc2\x9b");
	fputc(' ', f);
	caad_json_name(f, NULL);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(out, "\"eth?\" \"e?[1mx\" \"a\\\"b??\" null");
	/* the very string a D-Bus method sends */
	snprintf(buf, sizeof(buf), "%s", "e\x1b[1mx");
	assert_string_equal(caad_utf8_sanitize(buf, false), "e?[1mx");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_kept),
		cmocka_unit_test(test_invalid_replaced),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_exhaustive_pairs),
		cmocka_unit_test(test_json_string),
		cmocka_unit_test(test_json_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
