/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "caad/macro.h"
#include "caad/cpumask.h"

static struct caad_cpumask mask_of(const int *cpus, size_t n)
{
	struct caad_cpumask m;

	caad_cpumask_zero(&m);
	for (size_t i = 0; i < n; i++)
		caad_cpumask_set(&m, (unsigned)cpus[i]);
	return m;
}

#define MASK(...) mask_of((const int[]){ __VA_ARGS__ }, ARRAY_SIZE(((const int[]){ __VA_ARGS__ })))

static struct caad_cpumask mask_empty(void)
{
	struct caad_cpumask m;

	caad_cpumask_zero(&m);
	return m;
}

static struct caad_cpumask mask_range(unsigned lo, unsigned hi)
{
	struct caad_cpumask m = mask_empty();

	for (unsigned c = lo; c <= hi; c++)
		caad_cpumask_set(&m, c);
	return m;
}

/* A mask no parser produces, to see that outputs stay untouched. */
static struct caad_cpumask mask_sentinel(void)
{
	struct caad_cpumask m;

	for (size_t i = 0; i < CAAD_CPUMASK_WORDS; i++)
		m.w[i] = UINT64_C(0xdeadbeefcafef00d) ^ i;
	return m;
}

static void test_set_test_clear(void **state)
{
	struct caad_cpumask m = mask_empty();

	assert_true(caad_cpumask_empty(&m));
	caad_cpumask_set(&m, 0);
	caad_cpumask_set(&m, 63);
	caad_cpumask_set(&m, 64);
	caad_cpumask_set(&m, CAAD_CPUS_MAX - 1);
	caad_cpumask_set(&m, CAAD_CPUS_MAX); /* ignored */
	assert_true(caad_cpumask_test(&m, 0));
	assert_true(caad_cpumask_test(&m, 63));
	assert_true(caad_cpumask_test(&m, 64));
	assert_true(caad_cpumask_test(&m, CAAD_CPUS_MAX - 1));
	assert_false(caad_cpumask_test(&m, 1));
	assert_false(caad_cpumask_test(&m, CAAD_CPUS_MAX));
	assert_int_equal(caad_cpumask_count(&m), 4);

	caad_cpumask_clear(&m, 63);
	caad_cpumask_clear(&m, CAAD_CPUS_MAX); /* ignored */
	assert_false(caad_cpumask_test(&m, 63));
	assert_int_equal(caad_cpumask_count(&m), 3);
	assert_false(caad_cpumask_empty(&m));
}

static void test_equal_empty_count(void **state)
{
	struct caad_cpumask a = MASK(1, 2, 3, 4000), b = MASK(4000, 3, 2, 1), c = MASK(1, 2, 3);
	struct caad_cpumask e = mask_empty(), full = mask_range(0, CAAD_CPUS_MAX - 1);

	assert_true(caad_cpumask_equal(&a, &b));
	assert_false(caad_cpumask_equal(&a, &c));
	assert_false(caad_cpumask_equal(&a, &e));
	assert_true(caad_cpumask_empty(&e));
	assert_false(caad_cpumask_empty(&c));
	assert_int_equal(caad_cpumask_count(&e), 0);
	assert_int_equal(caad_cpumask_count(&a), 4);
	assert_int_equal(caad_cpumask_count(&full), CAAD_CPUS_MAX);
}

static void test_next(void **state)
{
	struct caad_cpumask m = MASK(0, 5, 64, 127, 128, CAAD_CPUS_MAX - 1);
	struct caad_cpumask e = mask_empty();

	assert_int_equal(caad_cpumask_next(&m, 0), 0);
	assert_int_equal(caad_cpumask_next(&m, -1), 0);
	assert_int_equal(caad_cpumask_next(&m, INT32_MIN), 0);
	assert_int_equal(caad_cpumask_next(&m, 1), 5);
	assert_int_equal(caad_cpumask_next(&m, 5), 5);
	assert_int_equal(caad_cpumask_next(&m, 6), 64);
	assert_int_equal(caad_cpumask_next(&m, 65), 127);
	assert_int_equal(caad_cpumask_next(&m, 128), 128);
	assert_int_equal(caad_cpumask_next(&m, 129), CAAD_CPUS_MAX - 1);
	assert_int_equal(caad_cpumask_next(&m, CAAD_CPUS_MAX - 1), CAAD_CPUS_MAX - 1);
	assert_int_equal(caad_cpumask_next(&m, CAAD_CPUS_MAX), -1);
	assert_int_equal(caad_cpumask_next(&m, INT32_MAX), -1);
	assert_int_equal(caad_cpumask_next(&e, 0), -1);
	assert_int_equal(caad_cpumask_next(&e, -5), -1);
}

static void test_foreach(void **state)
{
	struct caad_cpumask m = MASK(3, 63, 64, 200, CAAD_CPUS_MAX - 1);
	const int want[] = { 3, 63, 64, 200, CAAD_CPUS_MAX - 1 };
	size_t n = 0;

	CAAD_CPUMASK_FOREACH(cpu, &m) {
		assert_true(n < ARRAY_SIZE(want));
		assert_int_equal(cpu, want[n]);
		n++;
	}
	assert_int_equal(n, ARRAY_SIZE(want));

	struct caad_cpumask e = mask_empty();
	CAAD_CPUMASK_FOREACH(cpu, &e)
		fail_msg("empty mask yielded CPU %d", cpu);
}

static void test_and_or_andnot(void **state)
{
	struct caad_cpumask a = MASK(0, 1, 2, 100, 4095), b = MASK(1, 2, 3, 4095), r;
	struct caad_cpumask want_and = MASK(1, 2, 4095), want_or = MASK(0, 1, 2, 3, 100, 4095), want_andnot = MASK(0, 100);

	caad_cpumask_and(&r, &a, &b);
	assert_true(caad_cpumask_equal(&r, &want_and));
	caad_cpumask_or(&r, &a, &b);
	assert_true(caad_cpumask_equal(&r, &want_or));
	caad_cpumask_andnot(&r, &a, &b);
	assert_true(caad_cpumask_equal(&r, &want_andnot));

	/* dst may alias a source. */
	r = a;
	caad_cpumask_and(&r, &r, &b);
	assert_true(caad_cpumask_equal(&r, &want_and));
	r = a;
	caad_cpumask_andnot(&r, &r, &b);
	assert_true(caad_cpumask_equal(&r, &want_andnot));
}

static void test_parse_list(void **state)
{
	static const struct {
		const char *s;
		unsigned lo[4], hi[4];
		size_t n;
	} cases[] = {
		{ "0-3,8,10-11", { 0, 8, 10 }, { 3, 8, 11 }, 3 },
		{ "", { 0 }, { 0 }, 0 },
		{ "\n", { 0 }, { 0 }, 0 },
		{ "  \t", { 0 }, { 0 }, 0 },
		{ "0\n", { 0 }, { 0 }, 1 },
		{ " 1-2,5 \n", { 1, 5 }, { 2, 5 }, 2 },
		{ "7", { 7 }, { 7 }, 1 },
		{ "4-4", { 4 }, { 4 }, 1 },
		{ "007,010", { 7, 10 }, { 7, 10 }, 2 },
		{ "4095", { 4095 }, { 4095 }, 1 },
		{ "0-4095", { 0 }, { 4095 }, 1 },
		{ "8,0-3", { 0, 8 }, { 3, 8 }, 2 },
		{ "0-5,3-8", { 0 }, { 8 }, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct caad_cpumask want = mask_empty(), got = mask_sentinel();

		for (size_t k = 0; k < cases[i].n; k++)
			for (unsigned c = cases[i].lo[k]; c <= cases[i].hi[k]; c++)
				caad_cpumask_set(&want, c);

		assert_int_equal(caad_cpumask_parse_list(cases[i].s, &got), 0);
		if (!caad_cpumask_equal(&got, &want))
			fail_msg("parse_list(\"%s\") gave the wrong set", cases[i].s);
	}
}

static void test_parse_list_errors(void **state)
{
	static const struct {
		const char *s;
		int r;
	} cases[] = {
		{ "1-", -EINVAL },      { "-3", -EINVAL },      { "3-1", -EINVAL },   { "1,,2", -EINVAL },
		{ "a", -EINVAL },       { "1 2", -EINVAL },     { ",", -EINVAL },     { "1,", -EINVAL },
		{ ",1", -EINVAL },      { "1-2-3", -EINVAL },   { "0x3", -EINVAL },   { "+1", -EINVAL },
		{ "1 ,2", -EINVAL },    { "1, 2", -EINVAL },    { "1- 2", -EINVAL },  { "0-7:2", -EINVAL },
		{ "1\n2", -EINVAL },    { "-", -EINVAL },       { "1--2", -EINVAL },  { "5000-1", -EINVAL },
		{ "4096,x", -EINVAL },  { "4096", -ERANGE },    { "0-4096", -ERANGE }, { "1,9999", -ERANGE },
		{ "99999999999999999999", -ERANGE },            { "4096-4097", -ERANGE },
		/* descending: a syntax error, wherever its ends are */
		{ "5000-4097", -EINVAL },                       { "99999999999999999999-5000", -EINVAL },
		{ "4097-99999999999999999999", -ERANGE },       { "3-0002", -EINVAL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct caad_cpumask got = mask_sentinel(), sentinel = mask_sentinel();
		int r = caad_cpumask_parse_list(cases[i].s, &got);

		if (r != cases[i].r)
			fail_msg("parse_list(\"%s\") = %d, want %d", cases[i].s, r, cases[i].r);
		assert_true(caad_cpumask_equal(&got, &sentinel));
	}
}

static void test_parse_hex(void **state)
{
	static const struct {
		const char *s;
		int cpus[8];
		size_t n;
	} cases[] = {
		{ "00000000,00000003", { 0, 1 }, 2 },
		{ "3", { 0, 1 }, 2 },
		{ "0", { 0 }, 0 },
		{ "", { 0 }, 0 },
		{ "\n", { 0 }, 0 },
		{ "ff", { 0, 1, 2, 3, 4, 5, 6, 7 }, 8 },
		{ "1,00000000", { 32 }, 1 },
		{ "80000000", { 31 }, 1 },
		{ "00000001,80000000", { 31, 32 }, 2 },
		{ "Ab\n", { 0, 1, 3, 5, 7 }, 5 },
		{ "aB", { 0, 1, 3, 5, 7 }, 5 },
		{ " 10,00000000,00000000 ", { 68 }, 1 },
		{ "00000000", { 0 }, 0 },
		{ "0000,00000100", { 8 }, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct caad_cpumask got = mask_sentinel();

		assert_int_equal(caad_cpumask_parse_hex(cases[i].s, &got), 0);
		if (caad_cpumask_count(&got) != cases[i].n)
			fail_msg("parse_hex(\"%s\"): %u CPUs, want %zu", cases[i].s, caad_cpumask_count(&got), cases[i].n);
		for (size_t k = 0; k < cases[i].n; k++)
			if (!caad_cpumask_test(&got, (unsigned)cases[i].cpus[k]))
				fail_msg("parse_hex(\"%s\"): CPU %d missing", cases[i].s, cases[i].cpus[k]);
	}

	struct caad_cpumask got, want = mask_range(0, 7);
	assert_int_equal(caad_cpumask_parse_hex("ff", &got), 0);
	assert_true(caad_cpumask_equal(&got, &want));
	want = mask_range(0, 63);
	assert_int_equal(caad_cpumask_parse_hex("ffffffff,FFFFFFFF\n", &got), 0);
	assert_true(caad_cpumask_equal(&got, &want));
}

static void test_parse_hex_wide(void **state)
{
	char buf[2048];
	struct caad_cpumask got, want;
	size_t len;

	/* 128 groups: CPU 4095 is the top bit of the first. */
	len = (size_t)snprintf(buf, sizeof(buf), "80000000");
	for (int i = 0; i < 127; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, ",00000000");
	want = MASK(CAAD_CPUS_MAX - 1);
	assert_int_equal(caad_cpumask_parse_hex(buf, &got), 0);
	assert_true(caad_cpumask_equal(&got, &want));

	/* 129 groups: zero leading groups beyond CAAD_CPUS_MAX are fine ... */
	len = (size_t)snprintf(buf, sizeof(buf), "0");
	for (int i = 0; i < 128; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, ",%08x", i == 127 ? 5u : 0u);
	want = MASK(0, 2);
	assert_int_equal(caad_cpumask_parse_hex(buf, &got), 0);
	assert_true(caad_cpumask_equal(&got, &want));

	/* ... a set bit there is not: CPU 4096. */
	struct caad_cpumask sentinel = mask_sentinel();
	got = mask_sentinel();
	buf[0] = '1';
	assert_int_equal(caad_cpumask_parse_hex(buf, &got), -ERANGE);
	assert_true(caad_cpumask_equal(&got, &sentinel));
}

static void test_parse_hex_errors(void **state)
{
	static const struct {
		const char *s;
		int r;
	} cases[] = {
		{ ",", -EINVAL },
		{ "1,", -EINVAL },
		{ ",1", -EINVAL },
		{ ",00000001", -EINVAL },
		{ "1,2", -EINVAL },
		{ "1,0000001", -EINVAL },
		{ "1,000000000", -EINVAL },
		{ "123456789", -EINVAL },
		{ "g", -EINVAL },
		{ "0x3", -EINVAL },
		{ "1 2", -EINVAL },
		{ "1, 00000000", -EINVAL },
		{ "1,,00000000", -EINVAL },
		{ "-1", -EINVAL },
		{ "3\n3", -EINVAL },
		{ "1,0000000g", -EINVAL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct caad_cpumask got = mask_sentinel(), sentinel = mask_sentinel();
		int r = caad_cpumask_parse_hex(cases[i].s, &got);

		if (r != cases[i].r)
			fail_msg("parse_hex(\"%s\") = %d, want %d", cases[i].s, r, cases[i].r);
		assert_true(caad_cpumask_equal(&got, &sentinel));
	}
}

static void test_format_list(void **state)
{
	char buf[64];
	struct caad_cpumask m;

	m = mask_empty();
	assert_int_equal(caad_cpumask_format_list(&m, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");

	m = MASK(0, 1, 2, 3, 8);
	assert_int_equal(caad_cpumask_format_list(&m, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "0-3,8");

	m = MASK(0, 1, 2, 3, 8, 10, 11);
	assert_int_equal(caad_cpumask_format_list(&m, buf, sizeof(buf)), 11);
	assert_string_equal(buf, "0-3,8,10-11");

	m = MASK(0, 2, 63, 64, 4095);
	assert_int_equal(caad_cpumask_format_list(&m, buf, sizeof(buf)), 14);
	assert_string_equal(buf, "0,2,63-64,4095");

	m = mask_range(0, CAAD_CPUS_MAX - 1);
	assert_int_equal(caad_cpumask_format_list(&m, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "0-4095");

	m = mask_range(4000, CAAD_CPUS_MAX - 1);
	assert_int_equal(caad_cpumask_format_list(&m, buf, sizeof(buf)), 9);
	assert_string_equal(buf, "4000-4095");
}

/* The longest cpulists there are fit in CAAD_CPULIST_MAX. */
static void test_format_list_longest(void **state)
{
	static char buf[CAAD_CPULIST_MAX];
	struct caad_cpumask m;
	int longest = 0;

	(void)state;
	/* every pattern of period 2..4 with its phase: singles, pairs, triples with gaps */
	for (unsigned period = 2; period <= 4; period++)
		for (unsigned run = 1; run < period; run++)
			for (unsigned phase = 0; phase < period; phase++) {
				int n;

				caad_cpumask_zero(&m);
				for (unsigned c = phase; c < CAAD_CPUS_MAX; c++)
					if ((c - phase) % period < run)
						caad_cpumask_set(&m, c);
				n = caad_cpumask_format_list(&m, buf, sizeof(buf));
				assert_true(n > 0 && (size_t)n < sizeof(buf));
				longest = n > longest ? n : longest;
			}
	/* the pairs with gaps of one: 1365 runs of "a-b," less the last comma, one single */
	assert_true(longest > 12000);
}

static void test_format_list_nobufs(void **state)
{
	struct caad_cpumask m = MASK(0, 1, 2, 3, 8);
	char buf[8];

	/* "0-3,8" needs 6 bytes. */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(caad_cpumask_format_list(&m, buf, 5), -ENOBUFS);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'x');
	assert_int_equal(caad_cpumask_format_list(&m, buf, 6), 5);
	assert_string_equal(buf, "0-3,8");
	assert_int_equal(buf[6], 'x');

	assert_int_equal(caad_cpumask_format_list(&m, NULL, 0), -ENOBUFS);
	m = mask_empty();
	assert_int_equal(caad_cpumask_format_list(&m, NULL, 0), -ENOBUFS);
	assert_int_equal(caad_cpumask_format_list(&m, buf, 1), 0);
	assert_string_equal(buf, "");

	/* The longest list: every other CPU. */
	static char big[CAAD_CPUS_MAX * 6];
	struct caad_cpumask even = mask_empty(), back;
	for (unsigned c = 0; c < CAAD_CPUS_MAX; c += 2)
		caad_cpumask_set(&even, c);
	int len = caad_cpumask_format_list(&even, big, sizeof(big));
	assert_true(len > 0);
	assert_int_equal((size_t)len, strlen(big));
	assert_int_equal(caad_cpumask_format_list(&even, big, (size_t)len), -ENOBUFS);
	assert_int_equal(caad_cpumask_format_list(&even, big, (size_t)len + 1), len);
	assert_int_equal(caad_cpumask_parse_list(big, &back), 0);
	assert_true(caad_cpumask_equal(&back, &even));
}

static void test_format_hex(void **state)
{
	static const struct {
		unsigned nbits;
		int cpus[3];
		size_t n;
		const char *want;
	} cases[] = {
		{ 2, { 0 }, 1, "1" },
		{ 2, { 0, 1 }, 2, "3" },
		{ 2, { 0 }, 0, "0" },
		{ 24, { 0 }, 1, "000001" },
		{ 64, { 0 }, 1, "00000000,00000001" },
		{ 40, { 32 }, 1, "01,00000000" },
		{ 0, { 0 }, 0, "" },
		{ 1, { 0 }, 0, "0" },
		{ 1, { 0 }, 1, "1" },
		{ 4, { 3 }, 1, "8" },
		{ 5, { 4 }, 1, "10" },
		{ 8, { 0, 7 }, 2, "81" },
		{ 32, { 31 }, 1, "80000000" },
		{ 32, { 0 }, 0, "00000000" },
		{ 33, { 32 }, 1, "1,00000000" },
		{ 33, { 0 }, 1, "0,00000001" },
		{ 64, { 63, 32, 31 }, 3, "80000001,80000000" },
		{ 96, { 64 }, 1, "00000001,00000000,00000000" },
		{ 100, { 99, 0 }, 2, "8,00000000,00000000,00000001" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct caad_cpumask m = mask_of(cases[i].cpus, cases[i].n);
		char buf[128];
		int r = caad_cpumask_format_hex(&m, cases[i].nbits, buf, sizeof(buf));

		if (r < 0 || !streq(buf, cases[i].want))
			fail_msg("format_hex(nbits=%u) #%zu = %d \"%s\", want \"%s\"", cases[i].nbits, i, r,
			         r < 0 ? "" : buf, cases[i].want);
		assert_int_equal(r, strlen(cases[i].want));
	}
}

static void test_format_hex_full(void **state)
{
	static char buf[CAAD_CPUS_MAX / 32 * 9 + 16];
	struct caad_cpumask m = mask_range(0, CAAD_CPUS_MAX - 1), back;
	int r;

	r = caad_cpumask_format_hex(&m, CAAD_CPUS_MAX, buf, sizeof(buf));
	assert_int_equal(r, CAAD_CPUS_MAX / 32 * 9 - 1);
	for (int i = 0; i < r; i++)
		assert_int_equal(buf[i], i % 9 == 8 ? ',' : 'f');
	assert_int_equal(caad_cpumask_parse_hex(buf, &back), 0);
	assert_true(caad_cpumask_equal(&back, &m));

	/* More bits than the mask holds: zero groups in front. */
	m = MASK(0);
	r = caad_cpumask_format_hex(&m, CAAD_CPUS_MAX + 8, buf, sizeof(buf));
	assert_int_equal(r, CAAD_CPUS_MAX / 32 * 9 + 2);
	assert_memory_equal(buf, "00,00000000,", 12);
	assert_string_equal(buf + r - 8, "00000001");
	assert_int_equal(caad_cpumask_parse_hex(buf, &back), 0);
	assert_true(caad_cpumask_equal(&back, &m));
}

static void test_format_hex_errors(void **state)
{
	struct caad_cpumask m;
	char buf[32];

	m = MASK(2);
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(caad_cpumask_format_hex(&m, 2, buf, sizeof(buf)), -ERANGE);
	assert_int_equal(caad_cpumask_format_hex(&m, 0, buf, sizeof(buf)), -ERANGE);
	assert_int_equal(caad_cpumask_format_hex(&m, 3, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "4");

	m = MASK(CAAD_CPUS_MAX - 1);
	assert_int_equal(caad_cpumask_format_hex(&m, CAAD_CPUS_MAX - 1, buf, sizeof(buf)), -ERANGE);

	/* "00000000,00000001" needs 18 bytes. */
	m = MASK(0);
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(caad_cpumask_format_hex(&m, 64, buf, 17), -ENOBUFS);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'x');
	assert_int_equal(caad_cpumask_format_hex(&m, 64, buf, 18), 17);
	assert_string_equal(buf, "00000000,00000001");
	assert_int_equal(caad_cpumask_format_hex(&m, 64, NULL, 0), -ENOBUFS);

	m = mask_empty();
	assert_int_equal(caad_cpumask_format_hex(&m, 0, buf, 1), 0);
	assert_string_equal(buf, "");
	assert_int_equal(caad_cpumask_format_hex(&m, 0, NULL, 0), -ENOBUFS);
}

/* xorshift64*: a fixed sequence on every machine. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* Masks of varied shapes: sparse, dense, runs, and a bounded width. */
static struct caad_cpumask random_mask(uint64_t *rng, unsigned *width)
{
	struct caad_cpumask m = mask_empty();
	unsigned w = 1 + (unsigned)(rng_next(rng) % CAAD_CPUS_MAX);

	switch (rng_next(rng) % 4) {
	case 0: /* sparse */
		for (unsigned k = rng_next(rng) % 16; k > 0; k--)
			caad_cpumask_set(&m, (unsigned)(rng_next(rng) % w));
		break;
	case 1: /* dense */
		for (unsigned c = 0; c < w; c++)
			if (rng_next(rng) % 4)
				caad_cpumask_set(&m, c);
		break;
	case 2: /* runs */
		for (unsigned c = 0; c < w;) {
			unsigned run = 1 + (unsigned)(rng_next(rng) % 70);
			bool on = rng_next(rng) % 2;

			for (; run > 0 && c < w; run--, c++)
				if (on)
					caad_cpumask_set(&m, c);
		}
		break;
	default: /* words at random */
		for (unsigned i = 0; i < CAAD_CPUMASK_WORDS; i++)
			m.w[i] = rng_next(rng);
		if (w < CAAD_CPUS_MAX) {
			for (unsigned c = w; c < CAAD_CPUS_MAX; c++)
				caad_cpumask_clear(&m, c);
		}
		break;
	}
	*width = w;
	return m;
}

static void test_round_trip(void **state)
{
	static char buf[CAAD_CPUS_MAX * 6];
	uint64_t rng = UINT64_C(0x9e3779b97f4a7c15);

	for (int i = 0; i < 2000; i++) {
		unsigned width, nbits;
		struct caad_cpumask m = random_mask(&rng, &width), back;
		int r, last = -1;

		CAAD_CPUMASK_FOREACH(cpu, &m) last = cpu;

		r = caad_cpumask_format_list(&m, buf, sizeof(buf));
		assert_true(r >= 0);
		assert_int_equal((size_t)r, strlen(buf));
		back = mask_sentinel();
		assert_int_equal(caad_cpumask_parse_list(buf, &back), 0);
		if (!caad_cpumask_equal(&back, &m))
			fail_msg("list round trip #%d failed: \"%.64s...\"", i, buf);

		/* Hex at the mask's own width, at the highest CPU + 1, and at the maximum. */
		const unsigned widths[] = { width, (unsigned)(last + 1), CAAD_CPUS_MAX };
		for (size_t k = 0; k < ARRAY_SIZE(widths); k++) {
			nbits = widths[k];
			r = caad_cpumask_format_hex(&m, nbits, buf, sizeof(buf));
			assert_true(r >= 0);
			assert_int_equal((size_t)r, strlen(buf));
			assert_int_equal(r, nbits == 0 ? 0 : ((nbits % 32 ?: 32) + 3) / 4 + (int)((nbits + 31) / 32 - 1) * 9);
			back = mask_sentinel();
			assert_int_equal(caad_cpumask_parse_hex(buf, &back), 0);
			if (!caad_cpumask_equal(&back, &m))
				fail_msg("hex round trip #%d (nbits %u) failed: \"%.64s...\"", i, nbits, buf);
		}

		/* Counting and iteration agree. */
		unsigned n = 0;
		CAAD_CPUMASK_FOREACH(cpu, &m) n++;
		assert_int_equal(n, caad_cpumask_count(&m));
	}
}

/* A thread's affinity as the kernel holds it: this thread pinned to one of
 * the CPUs it may use reads back as that CPU alone, and as all of them once
 * it may use them again; a thread that does not exist is an error. */
static void test_of_task(void **state)
{
	int tid = (int)syscall(SYS_gettid);
	struct caad_cpumask all, m;
	cpu_set_t one, orig;
	int first;

	assert_int_equal(sched_getaffinity(0, sizeof(orig), &orig), 0);
	assert_int_equal(caad_cpumask_of_task(tid, &all), 0);
	assert_int_equal(caad_cpumask_count(&all), (unsigned)CPU_COUNT(&orig));
	first = caad_cpumask_next(&all, 0);
	assert_true(first >= 0 && CPU_ISSET(first, &orig));

	CPU_ZERO(&one);
	CPU_SET(first, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(caad_cpumask_of_task(tid, &m), 0);
	assert_int_equal(caad_cpumask_count(&m), 1);
	assert_true(caad_cpumask_test(&m, (unsigned)first));
	assert_int_equal(sched_setaffinity(0, sizeof(orig), &orig), 0);
	assert_int_equal(caad_cpumask_of_task(tid, &m), 0);
	assert_true(caad_cpumask_equal(&m, &all));

	assert_int_equal(caad_cpumask_of_task(0x3fffffff, &m), -ESRCH);
}

/* Cpus_allowed_list of a status file, as /proc/PID/status has it. */
static void test_of_status(void **state)
{
	char path[] = "/tmp/caad-test-status-XXXXXX";
	static const char text[] = "Name:\tnapi/eth0-8193\nCpus_allowed:\t10f\nCpus_allowed_list:\t0-3,8\n"
	                           "Mems_allowed_list:\t0\n";
	struct caad_cpumask m;
	char buf[64];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(caad_cpumask_of_status(path, &m), 0);
	assert_true(caad_cpumask_format_list(&m, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, "0-3,8");
	/* no such line; no such file */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "Name:\tx\n", 8), 8);
	close(fd);
	assert_int_equal(caad_cpumask_of_status(path, &m), -ENODATA);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(caad_cpumask_of_status(path, &m), -ENOENT);
	/* this process's own, as the kernel writes it */
	assert_int_equal(caad_cpumask_of_status("/proc/self/status", &m), 0);
	assert_false(caad_cpumask_empty(&m));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_of_status),
		cmocka_unit_test(test_set_test_clear),
		cmocka_unit_test(test_equal_empty_count),
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_and_or_andnot),
		cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_parse_list_errors),
		cmocka_unit_test(test_parse_hex),
		cmocka_unit_test(test_parse_hex_wide),
		cmocka_unit_test(test_parse_hex_errors),
		cmocka_unit_test(test_format_list),
		cmocka_unit_test(test_format_list_longest),
		cmocka_unit_test(test_format_list_nobufs),
		cmocka_unit_test(test_format_hex),
		cmocka_unit_test(test_format_hex_full),
		cmocka_unit_test(test_format_hex_errors),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_of_task),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
