/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
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

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
