/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the cmocka tests (include after <cmocka.h>). */
#pragma once

#include <stdlib.h>

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
