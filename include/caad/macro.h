/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _pure_ __attribute__((pure))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Take ownership of a pointer away from a cleanup variable. */
#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) _tmp_ = (p);   \
		(p) = NULL;                  \
		_tmp_;                       \
	})

#define TAKE_FD(fd)                  \
	({                           \
		int _tmp_ = (fd);    \
		(fd) = -1;           \
		_tmp_;               \
	})

#define streq(a, b) (strcmp((a), (b)) == 0)

/* The value of hex digit c (either case), or -1. */
static inline int caad_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/*
 * Records sorted by a uint64_t key (a flow's id, mostly): the index of the
 * first of the n records of `size` bytes at base whose key, at `offset`
 * within the record, is >= key; n if there is none.
 */
static inline size_t caad_lower_bound_u64(const void *base, size_t n, size_t size, size_t offset, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + offset, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* qsort()'s comparison of two uint64_t (flow ids), ascending. */
static inline int caad_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The same over an array of structs, by one of their uint64_t members. */
#define LOWER_BOUND_BY(array, n, member, key)                                                   \
	caad_lower_bound_u64((array), (n), sizeof(*(array)), offsetof(__typeof__(*(array)), member), \
	                     (key))
