/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * caad logs to stderr: a test points fd 2 at a file around the calls
 * whose lines it checks. Include after cmocka.h.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct capture {
	int saved;
	char path[PATH_MAX + 32];
};

/* Lines to a new file in dir (which must exist). */
static inline void capture_begin(struct capture *c, const char *dir)
{
	int fd;

	snprintf(c->path, sizeof(c->path), "%s/stderr.XXXXXX", dir);
	fd = mkstemp(c->path);
	assert_true(fd >= 0);
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	assert_true(c->saved >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

/* How often needle occurs in s (a captured log). */
static inline unsigned count_substr(const char *s, const char *needle)
{
	unsigned n = 0;

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* stderr back; what was logged, malloc'ed ("" for nothing). */
static inline char *capture_end(struct capture *c)
{
	char *log;
	long len;
	FILE *f;

	fflush(stderr);
	assert_int_equal(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
	close(c->saved);
	f = fopen(c->path, "re");
	assert_non_null(f);
	/* read by its size: a buffer handed to getdelim() by address made
	 * GCC take every pointer into it for one to a local once inlined */
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len >= 0);
	rewind(f);
	log = malloc((size_t)len + 1);
	assert_non_null(log);
	assert_int_equal(fread(log, 1, (size_t)len, f), (size_t)len);
	log[len] = '\0';
	fclose(f);
	unlink(c->path);
	return log;
}
