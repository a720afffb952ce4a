/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <hwloc.h>

#include "caad/cpumask.h"
#include "caad/inventory.h"
#include "caad/macro.h"
#include "caad/state.h"
#include "caad/sysfs.h"
#include "caad/topology.h"

#include "test-util.h"

static const char *const synthetic_topologies[] = {
	"package:2 l3:2 core:6 pu:2",
	"package:2 l3:4 core:4 pu:2",
	"package:1 l3:8 core:8 pu:2",
	"package:4 numa:2 l3:2 core:4 pu:1",
	"package:2 core:4 pu:2", /* no caches at all: the package is the LLC */
	"package:2 l2:2 pu:2",   /* no Core level: each PU is a core */
	"package:1 l3:1 l2:2 core:2 pu:2", /* shared L2 under a shared L3: the L3 is the LLC */
};

static struct caad_cpumask mask_of(const unsigned *cpus, size_t n)
{
	struct caad_cpumask m;

	caad_cpumask_zero(&m);
	for (size_t i = 0; i < n; i++)
		caad_cpumask_set(&m, cpus[i]);
	return m;
}

static void assert_mask_equal(const struct caad_cpumask *got, const struct caad_cpumask *want)
{
	char g[256], w[256];

	if (caad_cpumask_equal(got, want))
		return;
	assert_true(caad_cpumask_format_list(got, g, sizeof(g)) >= 0);
	assert_true(caad_cpumask_format_list(want, w, sizeof(w)) >= 0);
	fail_msg("mask %s, expected %s", g, w);
}

static void assert_peers(const struct caad_topology *t, unsigned cpu, bool llc, const unsigned *want, size_t n)
{
	struct caad_cpumask got, expected = mask_of(want, n);
	int r;

	r = llc ? caad_topology_llc_peers(t, cpu, &got) : caad_topology_package_peers(t, cpu, &got);
	assert_int_equal(r, (int)n);
	assert_mask_equal(&got, &expected);
}

/* Temp dir with a few files, removed by the test. */
static char *make_tempdir(void)
{
	char *d = strdup("/tmp/caad-test-topology-XXXXXX");

	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void remove_tree(const char *dir, const char *const *rels, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL;

		assert_int_equal(caad_path(&path, dir, "/%s", rels[i]), 0);
		(void)(unlink(path) == 0 || rmdir(path) == 0);
	}
	assert_int_equal(rmdir(dir), 0);
}

/*
 * What must hold on every topology: groups partition the present CPUs,
 * every present CPU points at groups that contain it, and the peer sets
 * are exactly one usable PU (the lowest) per other core of the right domain,
 * never the CPU itself, its siblings or a CPU that is not usable.
 */
static void check_invariants(const struct caad_topology *t)
{
	struct caad_cpumask seen_core, seen_llc, seen_pkg, tmp;

	assert_true(t->n_cpus > 0 && t->n_cpus <= CAAD_CPUS_MAX);
	assert_true(caad_cpumask_test(&t->present, t->n_cpus - 1));
	assert_int_equal(caad_cpumask_next(&t->present, (int)t->n_cpus), -1);
	caad_cpumask_andnot(&tmp, &t->usable, &t->present);
	assert_true(caad_cpumask_empty(&tmp));
	assert_false(caad_cpumask_empty(&t->usable));
	assert_true(t->n_cores > 0 && t->n_llcs > 0 && t->n_packages > 0);
	assert_true(t->llc_depth_level <= 5);

	caad_cpumask_zero(&seen_core);
	for (unsigned i = 0; i < t->n_cores; i++) {
		caad_cpumask_and(&tmp, &seen_core, &t->cores[i].cpus);
		assert_true(caad_cpumask_empty(&tmp));
		assert_false(caad_cpumask_empty(&t->cores[i].cpus));
		caad_cpumask_or(&seen_core, &seen_core, &t->cores[i].cpus);
	}
	assert_true(caad_cpumask_equal(&seen_core, &t->present));

	caad_cpumask_zero(&seen_pkg);
	for (unsigned i = 0; i < t->n_packages; i++) {
		caad_cpumask_and(&tmp, &seen_pkg, &t->packages[i].cpus);
		assert_true(caad_cpumask_empty(&tmp));
		caad_cpumask_or(&seen_pkg, &seen_pkg, &t->packages[i].cpus);
	}
	assert_true(caad_cpumask_equal(&seen_pkg, &t->present));

	caad_cpumask_zero(&seen_llc);
	for (unsigned i = 0; i < t->n_llcs; i++) {
		caad_cpumask_and(&tmp, &seen_llc, &t->llcs[i].cpus);
		assert_true(caad_cpumask_empty(&tmp));
		caad_cpumask_or(&seen_llc, &seen_llc, &t->llcs[i].cpus);
	}

	for (unsigned cpu = 0; cpu < t->n_cpus; cpu++) {
		const struct caad_cpu *c = &t->cpus[cpu];
		struct caad_cpumask llc_peers, pkg_peers, cores_seen;
		unsigned want_llc = 0, want_pkg = 0;
		int n_llc, n_pkg;

		assert_int_equal(c->present, caad_cpumask_test(&t->present, cpu));
		assert_int_equal(c->usable, caad_cpumask_test(&t->usable, cpu));
		if (!c->present) {
			assert_int_equal(caad_topology_llc_peers(t, cpu, &llc_peers), -EINVAL);
			assert_int_equal(caad_topology_relation(t, cpu, cpu), CAAD_RELATION_UNSTEERED);
			continue;
		}
		assert_true(c->core >= 0 && (unsigned)c->core < t->n_cores);
		assert_true(caad_cpumask_test(&t->cores[c->core].cpus, cpu));
		assert_true(c->package >= 0 && (unsigned)c->package < t->n_packages);
		assert_true(caad_cpumask_test(&t->packages[c->package].cpus, cpu));
		if (c->llc >= 0) {
			assert_true((unsigned)c->llc < t->n_llcs);
			assert_true(caad_cpumask_test(&t->llcs[c->llc].cpus, cpu));
		} else {
			assert_false(caad_cpumask_test(&seen_llc, cpu));
		}
		assert_int_equal(caad_topology_relation(t, cpu, cpu), CAAD_RELATION_SAME_CORE);

		n_llc = caad_topology_llc_peers(t, cpu, &llc_peers);
		n_pkg = caad_topology_package_peers(t, cpu, &pkg_peers);
		assert_true(n_llc >= 0 && n_pkg >= 0);
		assert_int_equal((unsigned)n_llc, caad_cpumask_count(&llc_peers));
		assert_int_equal((unsigned)n_pkg, caad_cpumask_count(&pkg_peers));
		caad_cpumask_and(&tmp, &llc_peers, &pkg_peers);
		assert_true(caad_cpumask_empty(&tmp));

		caad_cpumask_zero(&cores_seen);
		CAAD_CPUMASK_FOREACH(p, &llc_peers) {
			const struct caad_cpu *o = &t->cpus[p];
			struct caad_cpumask below;

			assert_true(o->usable);
			assert_int_not_equal(p, cpu);
			assert_int_not_equal(o->core, c->core);
			assert_true(c->llc >= 0);
			assert_int_equal(o->llc, c->llc);
			assert_int_equal(caad_topology_relation(t, cpu, (unsigned)p), CAAD_RELATION_PEER_CORE_SAME_LLC);
			/* the lowest usable PU of its core, one per core */
			caad_cpumask_and(&below, &t->cores[o->core].cpus, &t->usable);
			assert_int_equal(caad_cpumask_next(&below, 0), p);
			assert_false(caad_cpumask_test(&cores_seen, (unsigned)o->core));
			caad_cpumask_set(&cores_seen, (unsigned)o->core);
		}
		CAAD_CPUMASK_FOREACH(p, &pkg_peers) {
			const struct caad_cpu *o = &t->cpus[p];
			struct caad_cpumask below;

			assert_true(o->usable);
			assert_int_not_equal(o->core, c->core);
			assert_int_equal(o->package, c->package);
			assert_true(c->llc < 0 || o->llc != c->llc);
			assert_int_equal(caad_topology_relation(t, cpu, (unsigned)p), CAAD_RELATION_SAME_PACKAGE_OTHER_LLC);
			caad_cpumask_and(&below, &t->cores[o->core].cpus, &t->usable);
			assert_int_equal(caad_cpumask_next(&below, 0), p);
			assert_false(caad_cpumask_test(&cores_seen, (unsigned)o->core));
			caad_cpumask_set(&cores_seen, (unsigned)o->core);
		}

		/* Completeness: count the cores that should have been offered. */
		for (unsigned i = 0; i < t->n_cores; i++) {
			int first;

			caad_cpumask_and(&tmp, &t->cores[i].cpus, &t->usable);
			first = caad_cpumask_next(&tmp, 0);
			if (first < 0 || (int)i == c->core)
				continue;
			if (c->llc >= 0 && t->cpus[first].llc == c->llc)
				want_llc++;
			else if (t->cpus[first].package == c->package)
				want_pkg++;
		}
		assert_int_equal((unsigned)n_llc, want_llc);
		assert_int_equal((unsigned)n_pkg, want_pkg);

		/* Relations of every other CPU agree with the groups. */
		for (unsigned b = 0; b < t->n_cpus; b++) {
			enum caad_relation r = caad_topology_relation(t, cpu, b);
			const struct caad_cpu *o = &t->cpus[b];

			if (!o->present)
				assert_int_equal(r, CAAD_RELATION_UNSTEERED);
			else if (b == cpu)
				assert_int_equal(r, CAAD_RELATION_SAME_CORE);
			else if (o->core == c->core)
				assert_int_equal(r, CAAD_RELATION_SMT_SIBLING);
			else if (c->llc >= 0 && o->llc == c->llc)
				assert_int_equal(r, CAAD_RELATION_PEER_CORE_SAME_LLC);
			else if (o->package == c->package)
				assert_int_equal(r, CAAD_RELATION_SAME_PACKAGE_OTHER_LLC);
			else
				assert_int_equal(r, CAAD_RELATION_OTHER_PACKAGE);
		}
	}
}

static void test_relation_strings(void **state)
{
	static const struct {
		enum caad_relation r;
		const char *s;
	} table[] = {
		{ CAAD_RELATION_UNSTEERED, "unsteered" },
		{ CAAD_RELATION_PEER_CORE_SAME_LLC, "peer-core-same-llc" },
		{ CAAD_RELATION_SAME_PACKAGE_OTHER_LLC, "same-package-other-llc" },
		{ CAAD_RELATION_OTHER_PACKAGE, "other-package" },
		{ CAAD_RELATION_SMT_SIBLING, "smt-sibling" },
		{ CAAD_RELATION_SAME_CORE, "same-core" },
		{ CAAD_RELATION_HOST_STEERING, "host-steering" },
	};

	assert_int_equal(ARRAY_SIZE(table), _CAAD_RELATION_COUNT);
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		assert_string_equal(caad_relation_to_string(table[i].r), table[i].s);
	assert_null(caad_relation_to_string(_CAAD_RELATION_COUNT));
	assert_null(caad_relation_to_string((enum caad_relation)-1));
}

static void test_every_fixture(void **state)
{
	DIR *d;
	struct dirent *de;
	unsigned n = 0;

	d = opendir(fixtures_dir());
	assert_non_null(d);
	while ((de = readdir(d))) {
		_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
		size_t l = strlen(de->d_name);

		if (l < 4 || !streq(de->d_name + l - 4, ".xml"))
			continue;
		print_message("%s\n", de->d_name);
		t = load_fixture(de->d_name);
		check_invariants(t);
		n++;
	}
	closedir(d);
	assert_true(n >= 4);
}

static void test_every_synthetic(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(synthetic_topologies); i++) {
		_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;

		print_message("%s\n", synthetic_topologies[i]);
		t = load_synthetic(synthetic_topologies[i]);
		check_invariants(t);
	}
}

static void test_24em64t_peers(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_fixture("24em64t-2n6c2t-pci.xml");
	struct caad_cpumask m, sentinel;

	assert_peers(t, 0, true, (const unsigned[]){ 2, 4, 6, 8, 10 }, 5);
	assert_peers(t, 1, true, (const unsigned[]){ 3, 5, 7, 9, 11 }, 5);
	/* the SMT sibling of 0 has 0's peers; the sibling of 2 is offered 2's core's lowest PU */
	assert_peers(t, 12, true, (const unsigned[]){ 2, 4, 6, 8, 10 }, 5);
	assert_peers(t, 14, true, (const unsigned[]){ 0, 4, 6, 8, 10 }, 5);
	assert_peers(t, 23, true, (const unsigned[]){ 1, 3, 5, 7, 9 }, 5);
	/* one L3 per package: nothing in the package outside the LLC */
	assert_peers(t, 0, false, NULL, 0);
	assert_peers(t, 13, false, NULL, 0);

	/* unknown CPUs: -EINVAL and the output left alone */
	caad_cpumask_zero(&sentinel);
	caad_cpumask_set(&sentinel, 4000);
	m = sentinel;
	assert_int_equal(caad_topology_llc_peers(t, 24, &m), -EINVAL);
	assert_int_equal(caad_topology_package_peers(t, 24, &m), -EINVAL);
	assert_int_equal(caad_topology_llc_peers(t, CAAD_CPUS_MAX, &m), -EINVAL);
	assert_int_equal(caad_topology_llc_peers(t, UINT_MAX, &m), -EINVAL);
	assert_true(caad_cpumask_equal(&m, &sentinel));
}

static void test_24em64t_layout(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_fixture("24em64t-2n6c2t-pci.xml");

	assert_int_equal(t->n_cpus, 24);
	assert_int_equal(caad_cpumask_count(&t->present), 24);
	assert_int_equal(caad_cpumask_count(&t->usable), 24);
	assert_int_equal(t->n_cores, 12);
	assert_int_equal(t->n_llcs, 2);
	assert_int_equal(t->llc_depth_level, 3);
	assert_int_equal(t->n_packages, 2);

	for (unsigned cpu = 0; cpu < 24; cpu++) {
		const struct caad_cpu *c = &t->cpus[cpu];
		unsigned sibling = cpu < 12 ? cpu + 12 : cpu - 12;

		assert_true(c->present && c->usable);
		assert_int_equal(t->packages[c->package].os_index, cpu % 2);
		assert_int_equal(c->numa, (int)(cpu % 2));
		assert_int_equal(c->core, t->cpus[sibling].core);
		assert_int_equal(caad_cpumask_count(&t->cores[c->core].cpus), 2);
		assert_int_equal(caad_cpumask_count(&t->llcs[c->llc].cpus), 12);
		assert_int_equal(caad_topology_relation(t, cpu, sibling), CAAD_RELATION_SMT_SIBLING);
	}

	assert_int_equal(caad_topology_relation(t, 0, 0), CAAD_RELATION_SAME_CORE);
	assert_int_equal(caad_topology_relation(t, 0, 12), CAAD_RELATION_SMT_SIBLING);
	assert_int_equal(caad_topology_relation(t, 0, 2), CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(caad_topology_relation(t, 0, 14), CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(caad_topology_relation(t, 0, 1), CAAD_RELATION_OTHER_PACKAGE);
	assert_int_equal(caad_topology_relation(t, 13, 0), CAAD_RELATION_OTHER_PACKAGE);
	assert_int_equal(caad_topology_relation(t, 0, 24), CAAD_RELATION_UNSTEERED);
	assert_int_equal(caad_topology_relation(t, 99, 0), CAAD_RELATION_UNSTEERED);
	assert_string_equal(caad_relation_to_string(caad_topology_relation(t, 0, 2)), "peer-core-same-llc");
	assert_string_equal(caad_relation_to_string(caad_topology_relation(t, 0, 1)), "other-package");
}

static void test_nic_cpus(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t24 = load_fixture("24em64t-2n6c2t-pci.xml");
	_cleanup_(caad_topology_freep) struct caad_topology *t32 = load_fixture("32em64t-2n8c2t-pci-normalio.xml");
	_cleanup_(caad_topology_freep) struct caad_topology *vf = load_fixture("16intel64-manyVFs.xml");
	_cleanup_(caad_topology_freep) struct caad_topology *syn = load_synthetic("package:2 l3:2 core:6 pu:2");
	struct caad_cpumask m, want, sentinel;

	/* 24em64t: eth0 and the InfiniBand port hang off package 0 (even P#). */
	assert_int_equal(caad_topology_nic_cpus(t24, "eth0", NULL, &m), 0);
	assert_mask_equal(&m, &t24->packages[t24->cpus[0].package].cpus);
	caad_cpumask_zero(&want);
	for (unsigned cpu = 0; cpu < 24; cpu += 2)
		caad_cpumask_set(&want, cpu);
	assert_mask_equal(&m, &want);
	assert_int_equal(caad_topology_nic_cpus(t24, "ib0", NULL, &m), 0);
	assert_mask_equal(&m, &want);
	/* by name on its PCI function (0000:04:00.0); the name on another
	 * one is another NIC's, named so since hwloc read it */
	assert_int_equal(caad_topology_nic_cpus(t24, "eth0", "0000:04:00.0", &m), 0);
	assert_mask_equal(&m, &want);

	/* 32em64t: the NICs are on package 1 (P#8-15 and their siblings 24-31). */
	assert_int_equal(caad_topology_nic_cpus(t32, "eth1", NULL, &m), 0);
	caad_cpumask_zero(&want);
	for (unsigned cpu = 8; cpu < 16; cpu++) {
		caad_cpumask_set(&want, cpu);
		caad_cpumask_set(&want, cpu + 16);
	}
	assert_mask_equal(&m, &want);

	/* manyVFs: eth0 on package 0, eth6 on package 1. */
	assert_int_equal(caad_topology_nic_cpus(vf, "eth0", NULL, &m), 0);
	want = mask_of((const unsigned[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, 8);
	assert_mask_equal(&m, &want);
	assert_int_equal(caad_topology_nic_cpus(vf, "eth6", NULL, &m), 0);
	want = mask_of((const unsigned[]){ 8, 9, 10, 11, 12, 13, 14, 15 }, 8);
	assert_mask_equal(&m, &want);

	/* not NICs, unknown names, no I/O at all: -ENOENT, output untouched */
	caad_cpumask_zero(&sentinel);
	caad_cpumask_set(&sentinel, 3000);
	m = sentinel;
	assert_int_equal(caad_topology_nic_cpus(t24, "sda", NULL, &m), -ENOENT);
	assert_int_equal(caad_topology_nic_cpus(t24, "mlx4_0", NULL, &m), -ENOENT);
	assert_int_equal(caad_topology_nic_cpus(t24, "eth9", NULL, &m), -ENOENT);
	assert_int_equal(caad_topology_nic_cpus(t24, "", NULL, &m), -ENOENT);
	assert_int_equal(caad_topology_nic_cpus(syn, "eth0", NULL, &m), -ENOENT);
	assert_int_equal(caad_topology_nic_cpus(t24, "eth0", "0000:05:00.0", &m), -ENOENT);
	assert_int_equal(caad_topology_nic_cpus(t24, "eth0", "", &m), -ENOENT);
	assert_true(caad_cpumask_equal(&m, &sentinel));
}

/*
 * 16em64t-4s2c2t-offlines.xml: 16 CPUs exist (complete cpuset 0-15) but
 * only P#0,1,3,4,6,12,15 are online; the others have no PU object at all,
 * and whole cores are missing (package 1 shows one core for P#1 only).
 */
static void test_offlines(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_fixture("16em64t-4s2c2t-offlines.xml");
	static const unsigned online[] = { 0, 1, 3, 4, 6, 12, 15 };
	struct caad_cpumask want = mask_of(online, ARRAY_SIZE(online));

	assert_int_equal(t->n_cpus, 16);
	assert_int_equal(caad_cpumask_count(&t->present), 16);
	assert_mask_equal(&t->usable, &want);
	for (unsigned cpu = 0; cpu < 16; cpu++) {
		bool on = caad_cpumask_test(&want, cpu);

		assert_true(t->cpus[cpu].present);
		assert_int_equal(t->cpus[cpu].usable, on);
		/* packages are P# modulo 4 here */
		assert_int_equal(t->packages[t->cpus[cpu].package].os_index, cpu % 4);
		assert_int_equal(t->cpus[cpu].numa, 0);
	}
	assert_int_equal(t->n_packages, 4);
	/* 6 Core objects, and P#2, 5, 10, 13 whose cores hwloc lost entirely */
	assert_int_equal(t->n_cores, 10);
	assert_int_equal(t->n_llcs, 4);
	assert_int_equal(t->llc_depth_level, 3);

	/* offline P#8 is 0's SMT sibling (Core L#0's complete cpuset is 0,8) */
	assert_int_equal(caad_topology_relation(t, 0, 8), CAAD_RELATION_SMT_SIBLING);
	assert_int_equal(caad_topology_relation(t, 0, 4), CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(caad_topology_relation(t, 0, 1), CAAD_RELATION_OTHER_PACKAGE);

	/* only online CPUs are offered */
	assert_peers(t, 0, true, (const unsigned[]){ 4 }, 1);
	assert_peers(t, 12, true, (const unsigned[]){ 0 }, 1);
	assert_peers(t, 8, true, (const unsigned[]){ 4 }, 1);
	assert_peers(t, 3, true, (const unsigned[]){ 15 }, 1);
	assert_peers(t, 1, true, NULL, 0); /* 5, 9, 13 are offline */
	assert_peers(t, 6, true, NULL, 0);
	/* offline P#2 has no Core object: a core of its own, present, with a peer */
	assert_peers(t, 2, true, (const unsigned[]){ 6 }, 1);
	assert_int_equal(caad_topology_relation(t, 2, 10), CAAD_RELATION_PEER_CORE_SAME_LLC);
	for (unsigned cpu = 0; cpu < 16; cpu++) {
		struct caad_cpumask peers, bad;

		assert_true(caad_topology_llc_peers(t, cpu, &peers) >= 0);
		caad_cpumask_andnot(&bad, &peers, &want);
		assert_true(caad_cpumask_empty(&bad));
		assert_true(caad_topology_package_peers(t, cpu, &peers) >= 0);
		assert_true(caad_cpumask_empty(&peers));
	}
}

static void test_synthetic_layouts(void **state)
{
	static const struct {
		const char *desc;
		unsigned n_cpus, n_packages, n_llcs, cores_per_llc, pus_per_core, llc_level;
		int llc_peers, package_peers;
	} table[] = {
		{ "package:2 l3:2 core:6 pu:2", 48, 2, 4, 6, 2, 3, 5, 6 },
		{ "package:2 l3:4 core:4 pu:2", 64, 2, 8, 4, 2, 3, 3, 12 },
		{ "package:1 l3:8 core:8 pu:2", 128, 1, 8, 8, 2, 3, 7, 56 },
		{ "package:4 numa:2 l3:2 core:4 pu:1", 64, 4, 16, 4, 1, 3, 3, 12 },
		{ "package:2 core:4 pu:2", 16, 2, 2, 4, 2, 0, 3, 0 },
		{ "package:2 l2:2 pu:2", 8, 2, 4, 2, 1, 2, 1, 2 },
		{ "package:1 l3:1 core:1 pu:2", 2, 1, 1, 1, 2, 3, 0, 0 },
		/* one core per L3 (an AMD part with one core per CCD): no peer
		 * shares its LLC, every other core is in other LLCs */
		{ "package:1 l3:4 core:1 pu:2", 8, 1, 4, 1, 2, 3, 0, 3 },
		/* per-core L2 and nothing above (a system-level cache the
		 * firmware does not describe): the package stands for the LLC */
		{ "package:1 l2:4 core:1 pu:2", 8, 1, 1, 4, 2, 0, 3, 0 },
		{ "package:1 l3:1 l2:2 core:2 pu:2", 8, 1, 1, 4, 2, 3, 3, 0 },
		{ "package:2 l3:2 l2:2 core:2 pu:1", 16, 2, 4, 4, 1, 3, 3, 4 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic(table[i].desc);

		print_message("%s\n", table[i].desc);
		assert_int_equal(t->n_cpus, table[i].n_cpus);
		assert_int_equal(t->n_packages, table[i].n_packages);
		assert_int_equal(t->n_llcs, table[i].n_llcs);
		assert_int_equal(t->n_cores, table[i].n_llcs * table[i].cores_per_llc);
		assert_int_equal(t->llc_depth_level, table[i].llc_level);
		for (unsigned l = 0; l < t->n_llcs; l++)
			assert_int_equal(caad_cpumask_count(&t->llcs[l].cpus),
			                 table[i].cores_per_llc * table[i].pus_per_core);
		for (unsigned c = 0; c < t->n_cores; c++)
			assert_int_equal(caad_cpumask_count(&t->cores[c].cpus), table[i].pus_per_core);
		for (unsigned cpu = 0; cpu < t->n_cpus; cpu++) {
			struct caad_cpumask m;

			assert_int_equal(caad_topology_llc_peers(t, cpu, &m), table[i].llc_peers);
			assert_int_equal(caad_topology_package_peers(t, cpu, &m), table[i].package_peers);
		}
	}
}

/* AMD-like CCX layout: exact sets, P# are contiguous in synthetic topologies. */
static void test_synthetic_ccx_peers(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:2 l3:4 core:4 pu:2");
	_cleanup_(caad_topology_freep) struct caad_topology *n = load_synthetic("package:4 numa:2 l3:2 core:4 pu:1");
	assert_peers(t, 0, true, (const unsigned[]){ 2, 4, 6 }, 3);
	assert_peers(t, 1, true, (const unsigned[]){ 2, 4, 6 }, 3);
	assert_peers(t, 13, true, (const unsigned[]){ 8, 10, 14 }, 3);
	assert_peers(t, 0, false, (const unsigned[]){ 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30 }, 12);
	assert_peers(t, 33, false, (const unsigned[]){ 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62 }, 12);
	assert_int_equal(caad_topology_relation(t, 0, 8), CAAD_RELATION_SAME_PACKAGE_OTHER_LLC);
	assert_int_equal(caad_topology_relation(t, 0, 32), CAAD_RELATION_OTHER_PACKAGE);
	assert_int_equal(caad_topology_relation(t, 0, 1), CAAD_RELATION_SMT_SIBLING);
	assert_int_equal(caad_topology_relation(t, 0, 7), CAAD_RELATION_PEER_CORE_SAME_LLC);

	/* two NUMA nodes per package, each holding two L3s */
	for (unsigned cpu = 0; cpu < n->n_cpus; cpu++)
		assert_int_equal(n->cpus[cpu].numa, (int)(cpu / 8));
	assert_peers(n, 9, true, (const unsigned[]){ 8, 10, 11 }, 3);
	assert_peers(n, 0, false, (const unsigned[]){ 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 }, 12);
}

/* Isolated CPUs are present but not usable; a peer core offers its next usable PU. */
static void test_isolated(void **state)
{
	static const char *const files[] = {
		"sys/devices/system/cpu/isolated", "sys/devices/system/cpu", "sys/devices/system", "sys/devices",
		"sys",
	};
	_cleanup_free_ char *root = make_tempdir(), *xml = NULL;
	struct caad_topology *t = NULL;

	assert_int_equal(caad_path(&xml, fixtures_dir(), "/24em64t-2n6c2t-pci.xml"), 0);

	/* no isolated file: nothing isolated */
	assert_int_equal(caad_topology_load(xml, root, &t), 0);
	assert_int_equal(caad_cpumask_count(&t->usable), 24);
	caad_topology_free(t);
	t = NULL;

	write_file(root, "sys/devices/system/cpu/isolated", "2,4,13-15\n");
	assert_int_equal(caad_topology_load(xml, root, &t), 0);
	assert_int_equal(caad_cpumask_count(&t->usable), 19);
	assert_true(t->cpus[2].present);
	assert_false(t->cpus[2].usable);
	assert_false(t->cpus[14].usable);
	assert_peers(t, 0, true, (const unsigned[]){ 16, 6, 8, 10 }, 4); /* 2 and 14 both isolated */
	/* a consumer may sit on an isolated CPU: it still has peers */
	assert_peers(t, 2, true, (const unsigned[]){ 0, 16, 6, 8, 10 }, 5);
	assert_peers(t, 1, true, (const unsigned[]){ 3, 5, 7, 9, 11 }, 5);
	check_invariants(t);
	caad_topology_free(t);
	t = NULL;

	write_file(root, "sys/devices/system/cpu/isolated", "\n");
	assert_int_equal(caad_topology_load(xml, root, &t), 0);
	assert_int_equal(caad_cpumask_count(&t->usable), 24);
	caad_topology_free(t);
	t = NULL;

	write_file(root, "sys/devices/system/cpu/isolated", "banana\n");
	assert_int_equal(caad_topology_load(xml, root, &t), -EINVAL);
	assert_null(t);

	remove_tree(root, files, ARRAY_SIZE(files));
}

/*
 * Whether an XML file can be the machine under a tree: the tree's online
 * CPUs all in it, its CPUs all possible there. The offlines fixture has 16
 * CPUs, 7 online when it was taken.
 */
static void test_check_machine(void **state)
{
	static const char *const files[] = {
		"sys/devices/system/cpu/possible", "sys/devices/system/cpu/online", "sys/devices/system/cpu",
		"sys/devices/system", "sys/devices", "sys",
	};
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_fixture("16em64t-4s2c2t-offlines.xml");
	_cleanup_free_ char *root = make_tempdir();

	/* neither list: nothing to hold it against */
	assert_int_equal(caad_topology_check_machine(t, "x.xml", root), 0);

	write_file(root, "sys/devices/system/cpu/possible", "0-15\n");
	write_file(root, "sys/devices/system/cpu/online", "0-15\n");
	assert_int_equal(caad_topology_check_machine(t, "x.xml", root), 0);
	/* CPUs offline now that were online then, and the other way round */
	write_file(root, "sys/devices/system/cpu/online", "0-2,5\n");
	assert_int_equal(caad_topology_check_machine(t, "x.xml", root), 0);
	/* more CPUs possible than the file has, none of them online */
	write_file(root, "sys/devices/system/cpu/possible", "0-63\n");
	assert_int_equal(caad_topology_check_machine(t, "x.xml", root), 0);

	/* a CPU online that the file does not have */
	write_file(root, "sys/devices/system/cpu/online", "0-16\n");
	assert_int_equal(caad_topology_check_machine(t, "x.xml", root), -EINVAL);
	/* a CPU of the file that cannot be there */
	write_file(root, "sys/devices/system/cpu/online", "0-1\n");
	write_file(root, "sys/devices/system/cpu/possible", "0-1\n");
	assert_int_equal(caad_topology_check_machine(t, "x.xml", root), -EINVAL);
	write_file(root, "sys/devices/system/cpu/possible", "0-14\n");
	assert_int_equal(caad_topology_check_machine(t, "x.xml", root), -EINVAL);
	/* a list that does not parse: an error, not a match */
	write_file(root, "sys/devices/system/cpu/possible", "0-x\n");
	assert_int_equal(caad_topology_check_machine(t, "x.xml", root), -EINVAL);

	remove_tree(root, files, ARRAY_SIZE(files));
}

/* An XML whose allowed cpuset leaves out P#0-3: those stay present, not usable. */
static void test_disallowed(void **state)
{
	static const char *const files[] = { "restricted.xml" };
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	_cleanup_free_ char *root = make_tempdir(), *src = NULL, *data = NULL, *path = NULL;
	char *p;

	assert_int_equal(caad_path(&src, fixtures_dir(), "/24em64t-2n6c2t-pci.xml"), 0);
	assert_int_equal(caad_read_file(src, &data), 0);
	p = strstr(data, "allowed_cpuset=\"0x00ffffff\"");
	assert_non_null(p);
	memcpy(p, "allowed_cpuset=\"0x00fffff0\"", strlen("allowed_cpuset=\"0x00fffff0\""));
	write_file(root, "restricted.xml", data);

	assert_int_equal(caad_path(&path, root, "/restricted.xml"), 0);
	assert_int_equal(caad_topology_load(path, NULL, &t), 0);
	remove_tree(root, files, ARRAY_SIZE(files));

	assert_int_equal(t->n_cpus, 24);
	assert_int_equal(caad_cpumask_count(&t->present), 24);
	assert_int_equal(caad_cpumask_count(&t->usable), 20);
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		assert_true(t->cpus[cpu].present);
		assert_false(t->cpus[cpu].usable);
	}
	/* core {2,14} offers 14, core {0,12} offers 12 */
	assert_peers(t, 6, true, (const unsigned[]){ 12, 14, 4, 8, 10 }, 5);
	assert_peers(t, 0, true, (const unsigned[]){ 14, 4, 6, 8, 10 }, 5);
	assert_peers(t, 5, true, (const unsigned[]){ 13, 15, 7, 9, 11 }, 5); /* 1 and 3 are disallowed */
	check_invariants(t);
}

static void test_load_errors(void **state)
{
	static const char *const files[] = { "garbage.xml", "empty.xml", "truncated.xml" };
	_cleanup_free_ char *root = make_tempdir(), *missing = NULL, *garbage = NULL, *empty = NULL,
	                    *truncated = NULL;
	struct caad_topology *sentinel = (struct caad_topology *)(uintptr_t)0x1234, *t = sentinel;

	assert_int_equal(caad_path(&missing, root, "/does-not-exist.xml"), 0);
	assert_int_equal(caad_path(&garbage, root, "/garbage.xml"), 0);
	assert_int_equal(caad_path(&empty, root, "/empty.xml"), 0);
	assert_int_equal(caad_path(&truncated, root, "/truncated.xml"), 0);
	write_file(root, "garbage.xml", "this is not a topology\n");
	write_file(root, "empty.xml", "");
	write_file(root, "truncated.xml", "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n  <object type=\"Mach");

	assert_int_equal(caad_topology_load(missing, NULL, &t), -ENOENT);
	assert_ptr_equal(t, sentinel);
	assert_true(caad_topology_load(garbage, NULL, &t) < 0);
	assert_ptr_equal(t, sentinel);
	assert_true(caad_topology_load(empty, NULL, &t) < 0);
	assert_ptr_equal(t, sentinel);
	assert_true(caad_topology_load(truncated, NULL, &t) < 0);
	assert_ptr_equal(t, sentinel);
	assert_true(caad_topology_load(root, NULL, &t) < 0); /* a directory */
	assert_ptr_equal(t, sentinel);
	remove_tree(root, files, ARRAY_SIZE(files));

	assert_int_equal(caad_topology_load_synthetic("package:banana", &t), -EINVAL);
	assert_ptr_equal(t, sentinel);
	assert_true(caad_topology_load_synthetic("", &t) < 0);
	assert_ptr_equal(t, sentinel);
	/* P#4096 does not fit a caad_cpumask */
	assert_int_equal(caad_topology_load_synthetic("core:4097 pu:1", &t), -E2BIG);
	assert_ptr_equal(t, sentinel);
}

static void test_largest(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:2 l3:8 core:128 pu:2");
	struct caad_cpumask m;

	assert_int_equal(t->n_cpus, CAAD_CPUS_MAX);
	assert_int_equal(t->n_cores, 2048);
	assert_int_equal(caad_topology_llc_peers(t, CAAD_CPUS_MAX - 1, &m), 127);
	assert_int_equal(caad_topology_package_peers(t, CAAD_CPUS_MAX - 1, &m), 7 * 128);
	assert_true(caad_cpumask_test(&m, 2048));
	assert_false(caad_cpumask_test(&m, 2047));
}

/* Every change of a thread's binding (hwloc's go through these), counted
 * here and passed on: loading the host's topology must make none. */
static unsigned binds;

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	binds++;
	return (int)syscall(SYS_sched_setaffinity, pid, size, set);
}

int pthread_setaffinity_np(pthread_t thread, size_t size, const cpu_set_t *set)
{
	(void)thread;
	binds++;
	return syscall(SYS_sched_setaffinity, 0, size, set) < 0 ? errno : 0;
}

static void test_host(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;

	binds = 0;
	assert_int_equal(caad_topology_load(NULL, NULL, &t), 0);
	check_invariants(t);
	/* hwloc's x86 backend binds the thread to each CPU in turn, isolated
	 * ones included: caad asks it not to */
	assert_int_equal(binds, 0);
}

/* NUMA nodes, every cache level and the NUMA node of each PU. */
static void test_numa_and_caches(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_fixture("24em64t-2n6c2t-pci.xml");
	_cleanup_(caad_topology_freep) struct caad_topology *s = load_synthetic("package:4 numa:2 l3:2 core:4 pu:1");
	struct caad_cpumask m;

	assert_int_equal(t->n_numas, 2);
	assert_int_equal(t->cache_levels, 0x7); /* L1, L2, L3 */
	for (int node = 0; node < 2; node++) {
		assert_int_equal(caad_topology_numa_cpus(t, node, &m), 12);
		CAAD_CPUMASK_FOREACH(cpu, &m)
			assert_int_equal(cpu % 2, node);
	}
	assert_int_equal(caad_topology_numa_cpus(t, 7, &m), -ENOENT);
	for (unsigned cpu = 0; cpu < 24; cpu++) {
		unsigned sibling = cpu < 12 ? cpu + 12 : cpu - 12;

		/* L1/L2 per core: shared by SMT siblings only; L3 per package */
		assert_true(t->cpus[cpu].cache[0] >= 0 && t->cpus[cpu].cache[1] >= 0);
		assert_int_equal(t->cpus[cpu].cache[1], t->cpus[sibling].cache[1]);
		assert_int_not_equal(t->cpus[cpu].cache[1], t->cpus[(cpu + 2) % 24].cache[1]);
		assert_int_equal(t->cpus[cpu].cache[2], t->cpus[(cpu + 2) % 24].cache[2]);
		assert_int_equal(t->cpus[cpu].cache[3], -1);
		assert_int_equal(t->cpus[cpu].kind, -1);
	}
	assert_int_equal(t->n_kinds, 0);

	/* sub-NUMA clustering: two nodes per package, each holding whole LLCs */
	assert_int_equal(s->n_numas, 8);
	assert_int_equal(s->n_llcs, 16);
	for (unsigned n = 0; n < s->n_numas; n++)
		assert_int_equal(caad_cpumask_count(&s->numas[n].cpus), 8);
	for (unsigned cpu = 0; cpu < s->n_cpus; cpu++) {
		assert_int_equal(s->cpus[cpu].numa, (int)(cpu / 8));
		assert_int_equal(s->cpus[cpu].package, (int)(cpu / 16));
		assert_int_equal(s->cpus[cpu].llc, (int)(cpu / 4));
	}
	/* peers stay in the LLC (4 cores), then the package's other LLCs */
	assert_peers(s, 0, true, (const unsigned[]){ 1, 2, 3 }, 3);
	assert_peers(s, 0, false, (const unsigned[]){ 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 }, 12);
}

/* nohz_full CPUs are as off-limits as isolated ones; "(null)" means none. */
static void test_nohz_full(void **state)
{
	static const char *const files[] = {
		"sys/devices/system/cpu/isolated", "sys/devices/system/cpu/nohz_full", "sys/devices/system/cpu",
		"sys/devices/system", "sys/devices", "sys",
	};
	_cleanup_free_ char *root = make_tempdir(), *xml = NULL;
	struct caad_topology *t = NULL;

	assert_int_equal(caad_path(&xml, fixtures_dir(), "/24em64t-2n6c2t-pci.xml"), 0);
	write_file(root, "sys/devices/system/cpu/isolated", "2\n");
	write_file(root, "sys/devices/system/cpu/nohz_full", "4-5\n");
	assert_int_equal(caad_topology_load(xml, root, &t), 0);
	assert_int_equal(caad_cpumask_count(&t->usable), 21);
	assert_false(t->cpus[2].usable);
	assert_false(t->cpus[4].usable);
	assert_false(t->cpus[5].usable);
	assert_true(t->cpus[6].usable);
	assert_peers(t, 0, true, (const unsigned[]){ 14, 16, 6, 8, 10 }, 5);
	check_invariants(t);
	caad_topology_free(t);
	t = NULL;

	write_file(root, "sys/devices/system/cpu/nohz_full", "(null)\n");
	assert_int_equal(caad_topology_load(xml, root, &t), 0);
	assert_int_equal(caad_cpumask_count(&t->usable), 23);
	caad_topology_free(t);
	t = NULL;

	write_file(root, "sys/devices/system/cpu/nohz_full", "4-x\n");
	assert_int_equal(caad_topology_load(xml, root, &t), -EINVAL);
	assert_null(t);
	remove_tree(root, files, ARRAY_SIZE(files));
}

/*
 * Hybrid CPUs: an XML with two CPU kinds (as hwloc writes them for Intel
 * Alder Lake), made from a synthetic topology exported to XML.
 */
static void test_cpu_kinds(void **state)
{
	static const char *const files[] = { "hybrid.xml" };
	static const char kinds[] =
		"<cpukind cpuset=\"0x000000f0\" forced_efficiency=\"0\">\n"
		"  <info name=\"CoreType\" value=\"IntelAtom\"/>\n"
		"</cpukind>\n"
		"<cpukind cpuset=\"0x0000000f\" forced_efficiency=\"1\">\n"
		"  <info name=\"CoreType\" value=\"IntelCore\"/>\n"
		"</cpukind>\n";
	_cleanup_free_ char *root = make_tempdir(), *xml = NULL, *path = NULL;
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	hwloc_topology_t h;
	char *buf = NULL;
	int len = 0;

	assert_int_equal(hwloc_topology_init(&h), 0);
	assert_int_equal(hwloc_topology_set_synthetic(h, "package:1 l3:1 core:8 pu:1"), 0);
	assert_int_equal(hwloc_topology_load(h), 0);
	assert_int_equal(hwloc_topology_export_xmlbuffer(h, &buf, &len, 0), 0);
	char *end = strstr(buf, "</topology>");
	assert_non_null(end);
	assert_true(asprintf(&xml, "%.*s%s%s", (int)(end - buf), buf, kinds, end) > 0);
	hwloc_free_xmlbuffer(h, buf);
	hwloc_topology_destroy(h);

	assert_int_equal(caad_path(&path, root, "/hybrid.xml"), 0);
	write_file(root, "hybrid.xml", xml);
	assert_int_equal(caad_topology_load(path, NULL, &t), 0);
	assert_int_equal(t->n_kinds, 2);
	for (unsigned cpu = 0; cpu < 8; cpu++) {
		const struct caad_cpu_kind *k = &t->kinds[t->cpus[cpu].kind];

		assert_string_equal(k->name, cpu < 4 ? "IntelCore" : "IntelAtom");
		assert_int_equal(k->efficiency, cpu < 4 ? 1 : 0);
		assert_true(caad_cpumask_test(&k->cpus, cpu));
	}
	remove_tree(root, files, ARRAY_SIZE(files));
}

/* --print-topology's text (json false) or JSON of t, without NICs: free() it. */
static char *describe(const struct caad_topology *t, bool json)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(json ? caad_topology_to_json(t, NULL, f) : caad_topology_print(t, NULL, f), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

/* The JSON description is valid and says what the topology says. */
static void test_describe(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_fixture("24em64t-2n6c2t-pci.xml");
	_cleanup_free_ char *text = describe(t, false), *json = describe(t, true);

	assert_non_null(strstr(text, "Machine: 24 CPUs present, usable 0-23; 2 packages, 2 NUMA nodes, 2 LLCs (L3), 12 cores\n"));
	assert_non_null(strstr(text, "Package 1: CPUs 1,3,5,7,9,11,13,15,17,19,21,23, NUMA node 1\n"));
	assert_non_null(strstr(text, "  LLC L3#0: CPUs 0,2,4,6,8,10,12,14,16,18,20,22\n"));
	assert_non_null(strstr(text, "      PU 0\n      PU 12\n"));
	assert_non_null(strstr(json, "{\"cpus\": 24, \"present\": \"0-23\", \"usable\": \"0-23\", \"llc_level\": 3, "
	                             "\"cache_levels\": [1, 2, 3], \"numa_nodes\": [{\"os_index\": 0, \"cpus\": "
	                             "\"0,2,4,6,8,10,12,14,16,18,20,22\"}"));
	assert_non_null(strstr(json, "{\"index\": 0, \"pus\": [{\"cpu\": 0, \"usable\": true, \"numa_node\": 0, "
	                             "\"kind\": null}, {\"cpu\": 12,"));
	assert_non_null(strstr(json, "\"interfaces\": []}\n"));
}

/* A path made absolute before caad leaves its working directory; an empty
 * one (--sysroot=, CAAD_CONF_ROOT=: the host) stays empty, not the cwd. */
static void test_path_absolute(void **state)
{
	_cleanup_free_ char *owned = NULL, *want = NULL;
	char cwd[PATH_MAX];

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_string_equal(caad_path_absolute("", &owned), "");
	assert_null(owned);
	assert_null(caad_path_absolute(NULL, &owned));
	assert_string_equal(caad_path_absolute("/etc/caad", &owned), "/etc/caad");
	assert_null(owned);
	assert_true(asprintf(&want, "%s/x/caad.conf", cwd) > 0);
	assert_string_equal(caad_path_absolute("x/caad.conf", &owned), want);
	assert_non_null(owned);
}

/* Numbers not known are null in the JSON (caadctl(8), JSON OUTPUT), not
 * caad's -1 or 0; known ones are numbers. */
static void test_describe_unknown_null(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	struct caad_queue rx[] = { { .index = 0, .irq = -1 }, { .index = 1, .irq = 31, .napi_id = 8193, .napi_kthread = 77 } };
	struct caad_napi napis[] = { { .id = 8192, .irq = -1 }, { .id = 8193, .irq = 31, .kthread = 77 } };
	struct caad_iface ifc = { .name = "eth0", .ifindex = 2, .numa_node = -1, .combined_channels = -1,
		                  .rx_channels = 0, .rx = rx, .n_rx = 2, .napis = napis, .n_napis = 2 };
	struct caad_inventory inv = { .ifaces = &ifc, .n_ifaces = 1 };
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(caad_topology_load_synthetic("package:1 l3:1 core:2 pu:1", &t), 0);
	t->cpus[1].numa = -1;
	assert_int_equal(caad_topology_to_json(t, &inv, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(out, "{\"cpu\": 0, \"usable\": true, \"numa_node\": 0, "));
	assert_non_null(strstr(out, "{\"cpu\": 1, \"usable\": true, \"numa_node\": null, "));
	assert_non_null(strstr(out, "\"ifindex\": 2, \"driver\": null, \"bus_id\": null, \"numa_node\": null, "));
	assert_non_null(strstr(out, "\"combined_channels\": null, \"rx_channels\": 0, "));
	assert_non_null(strstr(out, "\"rps_flow_cnt\": null, \"napi_id\": null, \"napi_kthread\": null}"));
	assert_non_null(strstr(out, "\"rps_flow_cnt\": null, \"napi_id\": 8193, \"napi_kthread\": 77}"));
	assert_non_null(strstr(out, "\"napis\": [{\"id\": 8192, \"irq\": null, \"kthread\": null}, "
	                            "{\"id\": 8193, \"irq\": 31, \"kthread\": 77}]"));
	assert_null(strstr(out, ": -1"));
}

/* An interface's name in the JSON is the string D-Bus gives for it (ListFlows,
 * ListQueues, Interfaces: '?' for control characters and bytes of no valid
 * UTF-8), so that caadctl can join the two. */
static void test_describe_odd_name(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	struct caad_queue rx = { .index = 0, .irq = -1 };
	struct caad_iface ifc = { .name = "e\x1b[1m\xfe", .ifindex = 2, .numa_node = -1, .rx = &rx, .n_rx = 1 };
	struct caad_inventory inv = { .ifaces = &ifc, .n_ifaces = 1 };
	_cleanup_free_ char *out = NULL, *text = NULL, *st = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(caad_topology_load_synthetic("package:1 l3:1 core:2 pu:1", &t), 0);
	assert_int_equal(caad_topology_to_json(t, &inv, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(out, "{\"name\": \"e?[1m?\", \"ifindex\": 2"));

	/* the same name in the text (no escape sequence to a terminal),
	 * and in state.json: joined on by scripts */
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(caad_topology_print(t, &inv, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "NIC e?[1m? (ifindex 2"));
	assert_null(strchr(text, '\x1b'));
	assert_non_null(strchr(text, '\n'));
	f = open_memstream(&st, &len);
	assert_non_null(f);
	assert_int_equal(caad_state_format(f, NULL, 0, &inv, NULL, "enforce"), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(st, "{\"iface\": \"e?[1m?\", \"queue\": 0"));
}

/*
 * Cores that no cache of the LLC level covers (low-power E-cores without
 * L3, VMs with partial cache data) are shown, not left out: CPUs 2-3 here.
 */
static void test_describe_cores_without_llc(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_fixture("4c-l3-partial.xml");
	_cleanup_free_ char *text = NULL, *json = NULL;

	(void)state;
	assert_int_equal(t->cpus[2].llc, -1);

	text = describe(t, false);
	assert_non_null(strstr(text, "  LLC L3#0: CPUs 0-1\n    Core 0\n      PU 0\n    Core 1\n      PU 1\n"));
	assert_non_null(strstr(text, "  No shared L3: CPUs 2-3\n    Core 2\n      PU 2\n    Core 3\n      PU 3\n"));

	json = describe(t, true);
	assert_non_null(strstr(json, "\"cores_without_llc\": [{\"index\": 2, \"pus\": [{\"cpu\": 2, "));
	assert_non_null(strstr(json, "{\"index\": 3, \"pus\": [{\"cpu\": 3, "));
}

static void test_free_null(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;

	caad_topology_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relation_strings),
		cmocka_unit_test(test_every_fixture),
		cmocka_unit_test(test_every_synthetic),
		cmocka_unit_test(test_24em64t_peers),
		cmocka_unit_test(test_24em64t_layout),
		cmocka_unit_test(test_nic_cpus),
		cmocka_unit_test(test_offlines),
		cmocka_unit_test(test_synthetic_layouts),
		cmocka_unit_test(test_synthetic_ccx_peers),
		cmocka_unit_test(test_isolated),
		cmocka_unit_test(test_disallowed),
		cmocka_unit_test(test_check_machine),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_largest),
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_numa_and_caches),
		cmocka_unit_test(test_nohz_full),
		cmocka_unit_test(test_cpu_kinds),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_describe_odd_name),
		cmocka_unit_test(test_describe_unknown_null),
		cmocka_unit_test(test_path_absolute),
		cmocka_unit_test(test_describe_cores_without_llc),
		cmocka_unit_test(test_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
