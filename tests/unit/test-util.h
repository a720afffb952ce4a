/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the cmocka tests (include after <cmocka.h>). */
#pragma once

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "caad/sysfs.h"
#include "caad/topology.h"

#include "../skip.h"

static inline const char *fixtures_dir(void)
{
	const char *d = getenv("CAAD_TOPOLOGIES");

	if (!d)
		test_skip("CAAD_TOPOLOGIES is not set (run through meson test)");
	return d;
}

/* An hwloc XML from tests/fixtures/topologies. */
static inline struct caad_topology *load_fixture(const char *name)
{
	_cleanup_free_ char *path = NULL;
	struct caad_topology *t = NULL;

	assert_int_equal(caad_path(&path, fixtures_dir(), "/%s", name), 0);
	assert_int_equal(caad_topology_load(path, NULL, &t), 0);
	assert_non_null(t);
	return t;
}

static inline struct caad_topology *load_synthetic(const char *desc)
{
	struct caad_topology *t = NULL;

	assert_int_equal(caad_topology_load_synthetic(desc, &t), 0);
	assert_non_null(t);
	return t;
}

/* Makes the directories of path below its first `from` bytes (a root
 * that exists already). */
static inline void mkdir_parents(char *path, size_t from)
{
	for (char *p = path + from; (p = strchr(p, '/')); p++) {
		*p = 0;
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
}

/* ROOT/rel holds data, its directories made; truncated first, as someone
 * else's write would. */
static inline void write_file(const char *root, const char *rel, const char *data)
{
	_cleanup_free_ char *path = NULL;
	FILE *f;

	assert_int_equal(caad_path(&path, root, "/%s", rel), 0);
	mkdir_parents(path, strlen(root) + 1);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs(data, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static inline int test_rm_one_(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

/* dir and all below it gone (symlinks not followed): 0, or -1. */
static inline int test_rm_tree(const char *dir)
{
	return nftw(dir, test_rm_one_, 16, FTW_DEPTH | FTW_PHYS);
}
