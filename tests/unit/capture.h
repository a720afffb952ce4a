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

/* stderr back; what was logged, malloc'ed ("" for nothing). */
static inline char *capture_end(struct capture *c)
{
	char *log = NULL;
	size_t size = 0;
	FILE *f;

	fflush(stderr);
	assert_int_equal(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
	close(c->saved);
	f = fopen(c->path, "re");
	assert_non_null(f);
	if (getdelim(&log, &size, '\0', f) < 0) {
		free(log);
		log = strdup("");
	}
	fclose(f);
	unlink(c->path);
	assert_non_null(log);
	return log;
}
