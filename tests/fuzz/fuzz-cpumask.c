/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The two CPU set formats caad reads from and writes to procfs and sysfs:
 * cpulists ("0-3,8", smp_affinity_list, BannedCPUs=) and the kernel's hex
 * masks ("00000000,00000003", rps_cpus). On arbitrary text each parser must
 * answer 0, -EINVAL or -ERANGE, leave its output alone on error, agree with
 * a naive reference parser, and round-trip: parse(format(m)) == m for both
 * formats, format(parse(format(m))) == format(m).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "caad/cpumask.h"
#include "fuzz.h"

/* Longer than any cpulist of 4096 CPUs: at most one "NNNN-NNNN," per 3 CPUs
 * (two in the range, one gap), or one "NNNN," per 2. */
#define LIST_MAX (CAAD_CPUS_MAX / 3 * 10 + CAAD_CPUS_MAX / 2 * 5)
/* 128 groups of 8 hex digits and a comma. */
#define HEX_MAX (CAAD_CPUS_MAX / 32 * 9 + 1)

static char list_buf[LIST_MAX], list_buf2[LIST_MAX], hex_buf[HEX_MAX];

static void fill_poison(struct caad_cpumask *m)
{
	memset(m, 0xa5, sizeof(*m));
}

static bool is_poison(const struct caad_cpumask *m)
{
	struct caad_cpumask p;

	fill_poison(&p);
	return caad_cpumask_equal(m, &p);
}

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* A reference cpulist parser for inputs the real one accepted: split at
 * commas, each item N or N-M. */
static void reference_list(const char *s, struct caad_cpumask *m)
{
	caad_cpumask_zero(m);
	while (is_space(*s))
		s++;
	while (*s && !is_space(*s)) {
		unsigned long lo = strtoul(s, (char **)&s, 10), hi = lo;

		if (*s == '-')
			hi = strtoul(s + 1, (char **)&s, 10);
		for (unsigned long cpu = lo; cpu <= hi; cpu++)
			caad_cpumask_set(m, (unsigned)cpu);
		if (*s == ',')
			s++;
	}
}

/* A reference hex parser for inputs the real one accepted: the digits, commas
 * dropped, are one big number, the last digit holding CPUs 0-3. */
static void reference_hex(const char *s, struct caad_cpumask *m)
{
	const char *end = s + strlen(s);
	unsigned bit = 0;

	caad_cpumask_zero(m);
	while (end > s && is_space(end[-1]))
		end--;
	for (const char *p = end; p > s && !is_space(p[-1]); p--) {
		char c = p[-1];
		unsigned v;

		if (c == ',')
			continue;
		v = c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
		for (unsigned b = 0; b < 4; b++, bit++)
			if (v >> b & 1) {
				fuzz_assert(bit < CAAD_CPUS_MAX);
				caad_cpumask_set(m, bit);
			}
	}
}

static int last_cpu(const struct caad_cpumask *m)
{
	int last = -1;

	CAAD_CPUMASK_FOREACH(cpu, m)
		last = cpu;
	return last;
}

/* Both formats of m parse back to m. */
static void check_round_trip(const struct caad_cpumask *m)
{
	struct caad_cpumask back;
	unsigned count = 0;
	int len, last = last_cpu(m);

	CAAD_CPUMASK_FOREACH(cpu, m)
		count++;
	fuzz_assert(count == caad_cpumask_count(m));
	fuzz_assert(caad_cpumask_empty(m) == (count == 0));

	len = caad_cpumask_format_list(m, list_buf, sizeof(list_buf));
	fuzz_assert(len >= 0 && (size_t)len == strlen(list_buf));
	fuzz_assert(caad_cpumask_parse_list(list_buf, &back) == 0);
	fuzz_assert(caad_cpumask_equal(&back, m));
	fuzz_assert(caad_cpumask_format_list(&back, list_buf2, sizeof(list_buf2)) == len);
	fuzz_assert(streq(list_buf, list_buf2));

	/* Exactly len + 1 bytes are needed; with fewer buf stays as it was. */
	strcpy(list_buf2, "untouched");
	if (len >= 9) {
		fuzz_assert(caad_cpumask_format_list(m, list_buf2, (size_t)len) == -ENOBUFS);
		fuzz_assert(streq(list_buf2, "untouched"));
	}
	fuzz_assert(caad_cpumask_format_list(m, list_buf2, (size_t)len + 1) == len);

	/* As the kernel prints rps_cpus for the fewest and the most CPUs. */
	const unsigned widths[] = { (unsigned)(last + 1), CAAD_CPUS_MAX };
	for (size_t i = 0; i < ARRAY_SIZE(widths); i++) {
		len = caad_cpumask_format_hex(m, widths[i], hex_buf, sizeof(hex_buf));
		fuzz_assert(len >= 0 && (size_t)len == strlen(hex_buf));
		fuzz_assert(caad_cpumask_parse_hex(hex_buf, &back) == 0);
		fuzz_assert(caad_cpumask_equal(&back, m));
	}
	if (last >= 0)
		fuzz_assert(caad_cpumask_format_hex(m, (unsigned)last, hex_buf, sizeof(hex_buf)) == -ERANGE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *s = NULL;
	struct caad_cpumask m, ref;
	int r;

	fuzz_setup();
	s = fuzz_strndup(data, size);

	fill_poison(&m);
	r = caad_cpumask_parse_list(s, &m);
	fuzz_assert(r == 0 || r == -EINVAL || r == -ERANGE);
	if (r < 0)
		fuzz_assert(is_poison(&m));
	else {
		reference_list(s, &ref);
		fuzz_assert(caad_cpumask_equal(&m, &ref));
		check_round_trip(&m);
	}

	fill_poison(&m);
	r = caad_cpumask_parse_hex(s, &m);
	fuzz_assert(r == 0 || r == -EINVAL || r == -ERANGE);
	if (r < 0)
		fuzz_assert(is_poison(&m));
	else {
		reference_hex(s, &ref);
		fuzz_assert(caad_cpumask_equal(&m, &ref));
		check_round_trip(&m);
	}
	return 0;
}
