/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>

#include "caad/macro.h"
#include "caad/cpumask.h"
#include "caad/sysfs.h"

/* Both text formats come from sysfs and procfs with a trailing newline. */
static void strip_space(const char **start, const char **end)
{
	while (*start < *end && isspace((unsigned char)**start))
		(*start)++;
	while (*end > *start && isspace((unsigned char)(*end)[-1]))
		(*end)--;
}

bool caad_cpumask_equal(const struct caad_cpumask *a, const struct caad_cpumask *b)
{
	for (size_t i = 0; i < CAAD_CPUMASK_WORDS; i++)
		if (a->w[i] != b->w[i])
			return false;
	return true;
}

bool caad_cpumask_empty(const struct caad_cpumask *m)
{
	for (size_t i = 0; i < CAAD_CPUMASK_WORDS; i++)
		if (m->w[i])
			return false;
	return true;
}

unsigned caad_cpumask_count(const struct caad_cpumask *m)
{
	unsigned n = 0;

	for (size_t i = 0; i < CAAD_CPUMASK_WORDS; i++)
		n += (unsigned)__builtin_popcountll(m->w[i]);
	return n;
}

int caad_cpumask_next(const struct caad_cpumask *m, int from)
{
	if (from < 0)
		from = 0;
	if (from >= CAAD_CPUS_MAX)
		return -1;

	size_t i = (size_t)from / 64;
	uint64_t w = m->w[i] & (~UINT64_C(0) << (from % 64));

	for (;;) {
		if (w)
			return (int)(i * 64 + (size_t)__builtin_ctzll(w));
		if (++i >= CAAD_CPUMASK_WORDS)
			return -1;
		w = m->w[i];
	}
}

void caad_cpumask_and(struct caad_cpumask *dst, const struct caad_cpumask *a, const struct caad_cpumask *b)
{
	for (size_t i = 0; i < CAAD_CPUMASK_WORDS; i++)
		dst->w[i] = a->w[i] & b->w[i];
}

void caad_cpumask_or(struct caad_cpumask *dst, const struct caad_cpumask *a, const struct caad_cpumask *b)
{
	for (size_t i = 0; i < CAAD_CPUMASK_WORDS; i++)
		dst->w[i] = a->w[i] | b->w[i];
}

void caad_cpumask_andnot(struct caad_cpumask *dst, const struct caad_cpumask *a, const struct caad_cpumask *b)
{
	for (size_t i = 0; i < CAAD_CPUMASK_WORDS; i++)
		dst->w[i] = a->w[i] & ~b->w[i];
}

/*
 * A decimal CPU number at *p (digits only: no sign, no space). Values past
 * CAAD_CPUS_MAX saturate there so that the caller can report -ERANGE without
 * the number overflowing.
 */
/* A CPU number at *p, saturated at CAAD_CPUS_MAX, and its digits past any
 * leading zeros in *ret_digits (the whole number: what a range's order is
 * read from, where saturated ends are equal). */
static int parse_cpu(const char **p, const char *end, unsigned *ret, const char **ret_digits)
{
	const char *q = *p;
	unsigned v = 0;

	if (q >= end || !isdigit((unsigned char)*q))
		return -EINVAL;
	while (q + 1 < end && *q == '0' && isdigit((unsigned char)q[1]))
		q++;
	*ret_digits = q;
	for (; q < end && isdigit((unsigned char)*q); q++) {
		v = v * 10 + (unsigned)(*q - '0');
		if (v > CAAD_CPUS_MAX)
			v = CAAD_CPUS_MAX;
	}
	*p = q;
	*ret = v;
	return 0;
}

/* Whether the number of digits [a, a_end) is below that of [b, b_end),
 * both without leading zeros. */
static bool digits_below(const char *a, const char *a_end, const char *b, const char *b_end)
{
	if (a_end - a != b_end - b)
		return a_end - a < b_end - b;
	return memcmp(a, b, (size_t)(a_end - a)) < 0;
}

int caad_cpumask_parse_list(const char *s, struct caad_cpumask *ret)
{
	struct caad_cpumask m;
	const char *p, *end;
	bool out_of_range = false;

	assert(s);
	assert(ret);

	p = s;
	end = s + strlen(s);
	strip_space(&p, &end);
	caad_cpumask_zero(&m);

	/* Syntax errors win over range errors, wherever they are in the list. */
	while (p < end) {
		const char *lo_digits, *lo_end, *hi_digits;
		unsigned lo, hi;

		if (parse_cpu(&p, end, &lo, &lo_digits) < 0)
			return -EINVAL;
		lo_end = p;
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			if (parse_cpu(&p, end, &hi, &hi_digits) < 0)
				return -EINVAL;
			/* descending: a syntax error, even where both ends are
			 * out of range (and saturated alike) */
			if (digits_below(hi_digits, p, lo_digits, lo_end))
				return -EINVAL;
		}
		if (p < end) {
			if (*p != ',' || p + 1 == end)
				return -EINVAL;
			p++;
		}

		if (hi >= CAAD_CPUS_MAX) {
			out_of_range = true;
			continue;
		}
		for (unsigned cpu = lo; cpu <= hi; cpu++)
			caad_cpumask_set(&m, cpu);
	}

	if (out_of_range)
		return -ERANGE;

	*ret = m;
	return 0;
}

int caad_cpumask_parse_hex(const char *s, struct caad_cpumask *ret)
{
	struct caad_cpumask m;
	const char *start, *end, *p;
	size_t n_groups = 0;
	bool out_of_range = false;

	assert(s);
	assert(ret);

	start = s;
	end = s + strlen(s);
	strip_space(&start, &end);
	caad_cpumask_zero(&m);

	/* "" is the empty set, as the kernel reads it. */
	if (start == end) {
		*ret = m;
		return 0;
	}

	/* Validate first: 1-8 digits, then any number of ",xxxxxxxx". */
	p = start;
	for (;;) {
		size_t digits = 0;

		while (p < end && caad_hex_digit(*p) >= 0) {
			p++;
			digits++;
		}
		if (n_groups == 0 ? digits < 1 || digits > 8 : digits != 8)
			return -EINVAL;
		n_groups++;
		if (p == end)
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
	}

	/* Group k from the left holds bits [32 * (n_groups - 1 - k), +32). */
	p = start;
	for (size_t k = 0; k < n_groups; k++, p++) {
		size_t base = 32 * (n_groups - 1 - k);
		uint32_t v = 0;

		for (; p < end && *p != ','; p++)
			v = v << 4 | (uint32_t)caad_hex_digit(*p);
		if (!v)
			continue;
		if (base >= CAAD_CPUS_MAX) {
			out_of_range = true;
			break;
		}
		/* CAAD_CPUS_MAX is a multiple of 64: a group never straddles the end. */
		m.w[base / 64] |= (uint64_t)v << (base % 64);
	}

	if (out_of_range)
		return -ERANGE;

	*ret = m;
	return 0;
}

/* Appends like snprintf; buf NULL only measures. */
_printf_(4, 5) static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(buf ? buf + *len : NULL, buf ? size - *len : 0, fmt, ap);
	va_end(ap);
	assert(r >= 0);
	*len += (size_t)r;
}

static size_t format_list(const struct caad_cpumask *m, char *buf, size_t size)
{
	size_t len = 0;
	int cpu = caad_cpumask_next(m, 0);

	if (buf)
		buf[0] = '\0';

	while (cpu >= 0) {
		int last = cpu;

		while (last + 1 < CAAD_CPUS_MAX && caad_cpumask_test(m, (unsigned)last + 1))
			last++;

		append(buf, size, &len, "%s%d", len ? "," : "", cpu);
		if (last != cpu)
			append(buf, size, &len, "-%d", last);

		cpu = caad_cpumask_next(m, last + 1);
	}
	return len;
}

int caad_cpumask_format_list(const struct caad_cpumask *m, char *buf, size_t size)
{
	size_t len;

	assert(m);
	assert(buf || size == 0);

	/* Measure first so that buf is left untouched when it is too small. */
	len = format_list(m, NULL, 0);
	if (len >= size)
		return -ENOBUFS;

	format_list(m, buf, size);
	return (int)len;
}

static uint32_t chunk32(const struct caad_cpumask *m, size_t bit)
{
	if (bit >= CAAD_CPUS_MAX)
		return 0;
	return (uint32_t)(m->w[bit / 64] >> (bit % 64));
}

/*
 * As lib/vsprintf.c bitmap_string() prints "%*pb": 32-bit chunks, most
 * significant first, separated by commas; the first chunk holds nbits % 32
 * bits (32 when that is 0) and is zero-padded to the hex digits those bits
 * need, the others to 8. nbits 0 prints "".
 */
int caad_cpumask_format_hex(const struct caad_cpumask *m, unsigned nbits, char *buf, size_t size)
{
	size_t n_chunks, first_bits, len, pos = 0;

	assert(m);
	assert(buf || size == 0);

	if (caad_cpumask_next(m, nbits < CAAD_CPUS_MAX ? (int)nbits : CAAD_CPUS_MAX) >= 0)
		return -ERANGE;

	n_chunks = ((size_t)nbits + 31) / 32;
	first_bits = nbits % 32 ?: 32;
	len = n_chunks ? (first_bits + 3) / 4 + (n_chunks - 1) * 9 : 0;
	if (len >= size || len > INT_MAX)
		return -ENOBUFS;

	for (size_t i = n_chunks; i-- > 0;) {
		size_t bits = i == n_chunks - 1 ? first_bits : 32;
		int r;

		r = snprintf(buf + pos, size - pos, "%s%0*" PRIx32, pos ? "," : "", (int)(bits + 3) / 4,
		             chunk32(m, i * 32));
		assert(r >= 0);
		pos += (size_t)r;
	}
	buf[pos] = '\0';
	assert(pos == len);
	return (int)len;
}

int caad_cpumask_of_status(const char *path, struct caad_cpumask *ret)
{
	static const char key[] = "\nCpus_allowed_list:";
	_cleanup_free_ char *text = NULL;
	char *line;
	int r;

	r = caad_read_file(path, &text);
	if (r < 0)
		return r;
	line = strstr(text, key);
	if (!line)
		return -ENODATA;
	line += strlen(key);
	line += strspn(line, " \t");
	line[strcspn(line, "\n")] = '\0';
	return caad_cpumask_parse_list(line, ret);
}

int caad_cpumask_set_task(int task, const struct caad_cpumask *m)
{
	size_t size = CPU_ALLOC_SIZE(CAAD_CPUS_MAX);
	cpu_set_t *set = CPU_ALLOC(CAAD_CPUS_MAX);
	int r;

	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(size, set);
	CAAD_CPUMASK_FOREACH(cpu, m)
		CPU_SET_S((unsigned)cpu, size, set);
	r = sched_setaffinity(task, size, set) < 0 ? -errno : 0;
	CPU_FREE(set);
	return r;
}

int caad_cpumask_of_task(int task, struct caad_cpumask *ret)
{
	size_t size = CPU_ALLOC_SIZE(CAAD_CPUS_MAX);
	cpu_set_t *set = CPU_ALLOC(CAAD_CPUS_MAX);

	if (!set)
		return -ENOMEM;
	if (sched_getaffinity(task, size, set) < 0) {
		int r = -errno;
		CPU_FREE(set);
		return r;
	}
	caad_cpumask_zero(ret);
	for (unsigned cpu = 0; cpu < CAAD_CPUS_MAX; cpu++)
		if (CPU_ISSET_S(cpu, size, set))
			caad_cpumask_set(ret, cpu);
	CPU_FREE(set);
	return 0;
}
