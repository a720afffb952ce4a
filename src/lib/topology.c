/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include <hwloc.h>

#include "caad/inventory.h"
#include "caad/log.h"
#include "caad/sysfs.h"
#include "caad/topology.h"

static const char *const relation_names[_CAAD_RELATION_COUNT] = {
	[CAAD_RELATION_UNSTEERED] = "unsteered",
	[CAAD_RELATION_PEER_CORE_SAME_LLC] = "peer-core-same-llc",
	[CAAD_RELATION_SAME_PACKAGE_OTHER_LLC] = "same-package-other-llc",
	[CAAD_RELATION_OTHER_PACKAGE] = "other-package",
	[CAAD_RELATION_SMT_SIBLING] = "smt-sibling",
	[CAAD_RELATION_SAME_CORE] = "same-core",
	[CAAD_RELATION_HOST_STEERING] = "host-steering",
};

const char *caad_relation_to_string(enum caad_relation r)
{
	if ((unsigned)r >= ARRAY_SIZE(relation_names))
		return NULL;
	return relation_names[r];
}

static void hwloc_topology_destroyp(hwloc_topology_t *topo)
{
	if (*topo)
		hwloc_topology_destroy(*topo);
}

/* hwloc reports failures as -1 with errno, sometimes without setting errno. */
static int hwloc_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

void caad_topology_free(struct caad_topology *t)
{
	if (!t)
		return;
	free(t->cpus);
	free(t->cores);
	free(t->llcs);
	free(t->packages);
	free(t->numas);
	free(t->kinds);
	if (t->hwloc)
		hwloc_topology_destroy(t->hwloc);
	free(t);
}

/* The present CPUs of an hwloc cpuset. */
static void mask_from_bitmap(struct caad_cpumask *m, hwloc_const_bitmap_t b, const struct caad_cpumask *present)
{
	unsigned cpu;

	caad_cpumask_zero(m);
	hwloc_bitmap_foreach_begin(cpu, b) {
		if (cpu >= CAAD_CPUS_MAX)
			break;
		if (!present || caad_cpumask_test(present, cpu))
			caad_cpumask_set(m, cpu);
	}
	hwloc_bitmap_foreach_end();
}

static int group_add(struct caad_cpuset_group **groups, unsigned *n, unsigned os_index,
                     const struct caad_cpumask *cpus)
{
	/* The array only grows: its capacity is the power of two at or above *n. */
	if ((*n & (*n - 1)) == 0) {
		struct caad_cpuset_group *g;

		g = reallocarray(*groups, *n ? *n * 2 : 1, sizeof(**groups));
		if (!g)
			return -ENOMEM;
		*groups = g;
	}
	(*groups)[*n] = (struct caad_cpuset_group){ .os_index = os_index, .cpus = *cpus };
	(*n)++;
	return 0;
}

/*
 * Cores: hwloc's Core objects, by their complete cpuset so that an offline
 * SMT sibling still belongs to its core. A present PU that no Core object
 * covers (no Core level at all, or a core hwloc lost because all of its PUs
 * are offline) is a core of its own.
 */
static int build_cores(struct caad_topology *t, hwloc_topology_t topo)
{
	hwloc_obj_t o = NULL;
	int r;

	while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, o))) {
		struct caad_cpumask m;

		mask_from_bitmap(&m, o->complete_cpuset, &t->present);
		if (caad_cpumask_empty(&m))
			continue;
		r = group_add(&t->cores, &t->n_cores, t->n_cores, &m);
		if (r < 0)
			return r;
		CAAD_CPUMASK_FOREACH(cpu, &m)
			if (t->cpus[cpu].core < 0)
				t->cpus[cpu].core = (int)t->n_cores - 1;
	}

	CAAD_CPUMASK_FOREACH(cpu, &t->present) {
		struct caad_cpumask m;

		if (t->cpus[cpu].core >= 0)
			continue;
		caad_cpumask_zero(&m);
		caad_cpumask_set(&m, (unsigned)cpu);
		r = group_add(&t->cores, &t->n_cores, t->n_cores, &m);
		if (r < 0)
			return r;
		t->cpus[cpu].core = (int)t->n_cores - 1;
	}
	return 0;
}

/* Packages; present PUs outside every Package object form one pseudo package. */
static int build_packages(struct caad_topology *t, hwloc_topology_t topo)
{
	struct caad_cpumask rest;
	hwloc_obj_t o = NULL;
	int r;

	while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, o))) {
		struct caad_cpumask m;

		mask_from_bitmap(&m, o->complete_cpuset, &t->present);
		if (caad_cpumask_empty(&m))
			continue;
		r = group_add(&t->packages, &t->n_packages, o->os_index, &m);
		if (r < 0)
			return r;
		CAAD_CPUMASK_FOREACH(cpu, &m)
			if (t->cpus[cpu].package < 0)
				t->cpus[cpu].package = (int)t->n_packages - 1;
	}

	caad_cpumask_zero(&rest);
	CAAD_CPUMASK_FOREACH(cpu, &t->present)
		if (t->cpus[cpu].package < 0)
			caad_cpumask_set(&rest, (unsigned)cpu);
	if (caad_cpumask_empty(&rest))
		return 0;

	r = group_add(&t->packages, &t->n_packages, t->n_packages == 0 ? 0 : UINT_MAX, &rest);
	if (r < 0)
		return r;
	CAAD_CPUMASK_FOREACH(cpu, &rest)
		t->cpus[cpu].package = (int)t->n_packages - 1;
	return 0;
}

static const hwloc_obj_type_t cache_types[] = {
	HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE,
};

/* Whether the present CPUs of a cache span more than one core. */
static bool cache_is_shared(const struct caad_topology *t, hwloc_obj_t o)
{
	struct caad_cpumask m;
	int core = -1;

	mask_from_bitmap(&m, o->complete_cpuset, &t->present);
	CAAD_CPUMASK_FOREACH(cpu, &m) {
		if (core < 0)
			core = t->cpus[cpu].core;
		else if (t->cpus[cpu].core != core)
			return true;
	}
	return false;
}

/*
 * The highest cache level of which some cache spans more than one core;
 * without one, an L3 or higher there is (one core per cache: an AMD part
 * with one core per CCD, whose L3s are as far apart as other dies'), or 0:
 * no cache information, or per-core L1/L2 only (arm64 firmware that does
 * not describe the system-level cache, VMs that show per-vCPU caches: the
 * package stands for the LLC they do not show).
 */
static unsigned find_llc_level(const struct caad_topology *t, hwloc_topology_t topo)
{
	unsigned highest = 0;

	for (size_t i = ARRAY_SIZE(cache_types); i-- > 0;) {
		hwloc_obj_t o = NULL;

		while ((o = hwloc_get_next_obj_by_type(topo, cache_types[i], o))) {
			if (cache_is_shared(t, o))
				return (unsigned)i + 1;
			if (!highest && i + 1 >= 3)
				highest = (unsigned)i + 1;
		}
	}
	return highest;
}

/*
 * LLCs: the caches of the highest shared level (of the highest level, one
 * core each, where none is shared). Without any cache information each
 * package stands for its LLC, and llc_depth_level stays 0.
 */
static int build_llcs(struct caad_topology *t, hwloc_topology_t topo)
{
	hwloc_obj_t o = NULL;
	int r;

	t->llc_depth_level = find_llc_level(t, topo);
	if (t->llc_depth_level == 0) {
		for (unsigned i = 0; i < t->n_packages; i++) {
			r = group_add(&t->llcs, &t->n_llcs, t->packages[i].os_index, &t->packages[i].cpus);
			if (r < 0)
				return r;
		}
		CAAD_CPUMASK_FOREACH(cpu, &t->present)
			t->cpus[cpu].llc = t->cpus[cpu].package;
		return 0;
	}

	while ((o = hwloc_get_next_obj_by_type(topo, cache_types[t->llc_depth_level - 1], o))) {
		struct caad_cpumask m;

		mask_from_bitmap(&m, o->complete_cpuset, &t->present);
		if (caad_cpumask_empty(&m))
			continue;
		r = group_add(&t->llcs, &t->n_llcs, o->logical_index, &m);
		if (r < 0)
			return r;
		CAAD_CPUMASK_FOREACH(cpu, &m)
			if (t->cpus[cpu].llc < 0)
				t->cpus[cpu].llc = (int)t->n_llcs - 1;
	}
	return 0;
}

/* NUMA nodes by OS number; each CPU's node is the first that holds it. */
static int build_numas(struct caad_topology *t, hwloc_topology_t topo)
{
	hwloc_obj_t o = NULL;
	int r;

	while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o))) {
		struct caad_cpumask m;

		if (o->os_index == HWLOC_UNKNOWN_INDEX || o->os_index > INT_MAX)
			continue;
		mask_from_bitmap(&m, o->complete_cpuset, &t->present);
		r = group_add(&t->numas, &t->n_numas, o->os_index, &m);
		if (r < 0)
			return r;
		CAAD_CPUMASK_FOREACH(cpu, &m)
			if (t->cpus[cpu].numa < 0)
				t->cpus[cpu].numa = (int)o->os_index;
	}
	return 0;
}

/* Every cache level: which cache of each level serves each CPU. */
static void assign_caches(struct caad_topology *t, hwloc_topology_t topo)
{
	for (size_t i = 0; i < ARRAY_SIZE(cache_types); i++) {
		hwloc_obj_t o = NULL;

		while ((o = hwloc_get_next_obj_by_type(topo, cache_types[i], o))) {
			struct caad_cpumask m;

			t->cache_levels |= 1u << i;
			mask_from_bitmap(&m, o->complete_cpuset, &t->present);
			CAAD_CPUMASK_FOREACH(cpu, &m)
				if (t->cpus[cpu].cache[i] < 0)
					t->cpus[cpu].cache[i] = (int)o->logical_index;
		}
	}
}

/* Hybrid CPUs (P/E cores): hwloc's CPU kinds, ranked by efficiency. */
static int build_kinds(struct caad_topology *t, hwloc_topology_t topo)
{
	int n = hwloc_cpukinds_get_nr(topo, 0);

	if (n <= 0)
		return 0;
	t->kinds = calloc((size_t)n, sizeof(*t->kinds));
	if (!t->kinds)
		return -ENOMEM;
	for (int k = 0; k < n; k++) {
		hwloc_bitmap_t b = hwloc_bitmap_alloc();
		struct caad_cpu_kind *kind = &t->kinds[t->n_kinds];
		struct hwloc_info_s *infos = NULL;
		unsigned n_infos = 0;
		int eff = -1;

		if (!b)
			return -ENOMEM;
		if (hwloc_cpukinds_get_info(topo, (unsigned)k, b, &eff, &n_infos, &infos, 0) < 0) {
			hwloc_bitmap_free(b);
			continue;
		}
		snprintf(kind->name, sizeof(kind->name), "kind%d", k);
		for (unsigned i = 0; i < n_infos; i++)
			if (streq(infos[i].name, "CoreType") && infos[i].value)
				snprintf(kind->name, sizeof(kind->name), "%s", infos[i].value);
		kind->efficiency = eff;
		mask_from_bitmap(&kind->cpus, b, &t->present);
		hwloc_bitmap_free(b);
		CAAD_CPUMASK_FOREACH(cpu, &kind->cpus)
			t->cpus[cpu].kind = (int)t->n_kinds;
		t->n_kinds++;
	}
	return 0;
}

int caad_topology_numa_cpus(const struct caad_topology *t, int os_index, struct caad_cpumask *ret)
{
	for (unsigned i = 0; i < t->n_numas; i++)
		if ((int)t->numas[i].os_index == os_index) {
			*ret = t->numas[i].cpus;
			return (int)caad_cpumask_count(ret);
		}
	return -ENOENT;
}

/*
 * Turn a loaded hwloc topology into a caad one, taking ownership of *topo.
 * Present CPUs are hwloc's complete cpuset (offline ones included); usable
 * ones are online (the topology cpuset), allowed and not isolated.
 */
static int topology_build(hwloc_topology_t *topo, const char *what, const struct caad_cpumask *isolated,
                          const struct caad_cpumask *online_now, struct caad_topology **ret)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	hwloc_const_bitmap_t complete;
	struct caad_cpumask online, allowed;
	int last, r;

	complete = hwloc_topology_get_complete_cpuset(*topo);
	last = hwloc_bitmap_last(complete);
	if (last < 0)
		return log_error_errno(ENODATA, "Topology of %s has no CPUs (or infinitely many).", what);
	if (last >= CAAD_CPUS_MAX)
		return log_error_errno(E2BIG, "Topology of %s has CPU %d, caad handles CPUs below %d.", what, last,
		                       CAAD_CPUS_MAX);

	t = calloc(1, sizeof(*t));
	if (!t)
		return log_error_errno(ENOMEM, "Failed to allocate topology: %m");
	t->hwloc = TAKE_PTR(*topo);
	t->n_cpus = (unsigned)last + 1;
	t->cpus = calloc(t->n_cpus, sizeof(*t->cpus));
	if (!t->cpus)
		return log_error_errno(ENOMEM, "Failed to allocate topology: %m");

	mask_from_bitmap(&t->present, complete, NULL);
	mask_from_bitmap(&online, hwloc_topology_get_topology_cpuset(t->hwloc), &t->present);
	mask_from_bitmap(&allowed, hwloc_topology_get_allowed_cpuset(t->hwloc), &t->present);
	caad_cpumask_and(&t->usable, &online, &allowed);
	caad_cpumask_andnot(&t->usable, &t->usable, isolated);
	if (online_now && !caad_cpumask_empty(online_now))
		caad_cpumask_and(&t->usable, &t->usable, online_now);
	if (caad_cpumask_empty(&t->usable))
		return log_error_errno(ENODATA, "Topology of %s leaves no usable CPU (all offline, disallowed or isolated).",
		                       what);

	for (unsigned cpu = 0; cpu < t->n_cpus; cpu++)
		t->cpus[cpu] = (struct caad_cpu){
			.present = caad_cpumask_test(&t->present, cpu),
			.usable = caad_cpumask_test(&t->usable, cpu),
			.core = -1,
			.llc = -1,
			.package = -1,
			.numa = -1,
			.kind = -1,
			.cache = { -1, -1, -1, -1, -1 },
		};

	r = build_cores(t, t->hwloc);
	if (r >= 0)
		r = build_packages(t, t->hwloc);
	if (r >= 0)
		r = build_llcs(t, t->hwloc);
	if (r >= 0)
		r = build_numas(t, t->hwloc);
	if (r >= 0)
		r = build_kinds(t, t->hwloc);
	if (r < 0)
		return log_error_errno(r, "Failed to build topology of %s: %m", what);
	assign_caches(t, t->hwloc);

	log_debug("Topology of %s: %u CPUs (%u present, %u usable), %u cores, %u LLCs (L%u), %u packages.", what,
	          t->n_cpus, caad_cpumask_count(&t->present), caad_cpumask_count(&t->usable), t->n_cores,
	          t->n_llcs, t->llc_depth_level, t->n_packages);

	*ret = TAKE_PTR(t);
	return 0;
}

static const char *const gpu_components[] = { "cuda", "nvml", "opencl", "rsmi", "levelzero", "gl" };

static int topology_new(hwloc_topology_t *ret)
{
	_cleanup_(hwloc_topology_destroyp) hwloc_topology_t topo = NULL;

	if (hwloc_topology_init(&topo) < 0) {
		topo = NULL;
		return log_error_errno(hwloc_errno(), "Failed to initialize hwloc topology: %m");
	}
	/* Keep disallowed PUs as objects: they are present, just not usable.
	 * And never bind caad's thread to each CPU in turn, as hwloc's x86
	 * backend does to read CPUID on each: isolated and nohz_full CPUs
	 * included, at start and at every reload of the topology (the Linux
	 * backend reads caches and CPU kinds from sysfs all the same). */
	unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
#if HWLOC_API_VERSION >= 0x00020500
	flags |= HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING;
#endif
	if (hwloc_topology_set_flags(topo, flags) < 0 ||
	    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) < 0)
		return log_error_errno(hwloc_errno(), "Failed to configure hwloc topology: %m");
	/* GPUs and coprocessors are not caad's business, and their plugins'
	 * discovery initializes the vendor's library in the daemon, which
	 * may start threads: one per CPU on a 16-CPU host with an NVIDIA
	 * GPU and hwloc's OpenCL and GL plugins, none with these left out.
	 * Not every host has every plugin: hwloc refuses an unknown name,
	 * which is then one less to leave out. */
	for (size_t i = 0; i < ARRAY_SIZE(gpu_components); i++)
		(void)hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, gpu_components[i]);

	*ret = TAKE_PTR(topo);
	return 0;
}

/* One CPU list file under SYSROOT; a missing or empty file adds nothing. */
static int read_cpu_list(const char *sysroot, const char *rel, struct caad_cpumask *acc)
{
	_cleanup_free_ char *path = NULL, *s = NULL;
	struct caad_cpumask m;
	int r;

	r = caad_path(&path, sysroot, "%s", rel);
	if (r < 0)
		return log_error_errno(r, "Failed to build path: %m");

	r = caad_read_file(path, &s);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return log_error_errno(r, "Failed to read %s: %m", path);
	/* nohz_full reads "(null)" on some kernels when it is not set */
	if (streq(s, "(null)"))
		return 0;

	r = caad_cpumask_parse_list(s, &m);
	if (r < 0)
		return log_error_errno(r, "Failed to parse %s (\"%s\"): %m", path, s);

	caad_cpumask_or(acc, acc, &m);
	return 0;
}

/* CPUs kept free of housekeeping (isolcpus=, nohz_full=), and the online
 * ones (empty when unknown): a CPU hot-unplugged since hwloc looked, or
 * offline in a sysroot describing another machine, is not usable. */
static int read_cpu_state(const char *sysroot, struct caad_cpumask *isolated, struct caad_cpumask *online)
{
	int r;

	caad_cpumask_zero(isolated);
	caad_cpumask_zero(online);
	r = read_cpu_list(sysroot, "/sys/devices/system/cpu/isolated", isolated);
	if (r >= 0)
		r = read_cpu_list(sysroot, "/sys/devices/system/cpu/nohz_full", isolated);
	if (r >= 0)
		r = read_cpu_list(sysroot, "/sys/devices/system/cpu/online", online);
	return r;
}

int caad_topology_load(const char *xml_path, const char *sysroot, struct caad_topology **ret)
{
	_cleanup_(hwloc_topology_destroyp) hwloc_topology_t topo = NULL;
	struct caad_cpumask isolated, online;
	int r;

	assert(ret);

	/* An XML file describes another machine, unless sysroot says whose
	 * CPU states apply: not the host's by default. */
	caad_cpumask_zero(&isolated);
	caad_cpumask_zero(&online);
	if (!xml_path || sysroot) {
		r = read_cpu_state(sysroot, &isolated, &online);
		if (r < 0)
			return r;
	}

	r = topology_new(&topo);
	if (r < 0)
		return r;

	/* On failure hwloc would silently fall back to the host: never load then. */
	if (xml_path && hwloc_topology_set_xml(topo, xml_path) < 0)
		return log_error_errno(hwloc_errno(), "Failed to read hwloc XML topology %s: %m", xml_path);

	if (hwloc_topology_load(topo) < 0)
		return log_error_errno(hwloc_errno(), "Failed to load topology of %s: %m", xml_path ?: "this host");

	r = topology_build(&topo, xml_path ?: "this host", &isolated, &online, ret);
	if (r >= 0)
		(*ret)->live = !xml_path;
	return r;
}

int caad_topology_check_machine(const struct caad_topology *t, const char *xml_path, const char *sysroot)
{
	_cleanup_free_ char *path = NULL, *have = NULL, *there = NULL, *odd = NULL;
	struct caad_cpumask possible, online, extra, missing;
	int r;

	assert(t);
	assert(xml_path);

	caad_cpumask_zero(&possible);
	caad_cpumask_zero(&online);
	r = read_cpu_list(sysroot, "/sys/devices/system/cpu/possible", &possible);
	if (r >= 0)
		r = read_cpu_list(sysroot, "/sys/devices/system/cpu/online", &online);
	if (r < 0)
		return r;

	/* a list missing (or empty, which no kernel writes): nothing to hold
	 * the XML's CPUs against on that side */
	caad_cpumask_zero(&extra);
	caad_cpumask_zero(&missing);
	if (!caad_cpumask_empty(&possible))
		caad_cpumask_andnot(&extra, &t->present, &possible);
	caad_cpumask_andnot(&missing, &online, &t->present);
	if (caad_cpumask_empty(&extra) && caad_cpumask_empty(&missing))
		return 0;

	/* each list fits CAAD_CPULIST_MAX */
	have = malloc(CAAD_CPULIST_MAX);
	there = malloc(CAAD_CPULIST_MAX);
	odd = malloc(CAAD_CPULIST_MAX);
	if (!have || !there || !odd)
		return log_error_errno(ENOMEM, "Failed to allocate: %m");
	r = caad_path(&path, sysroot, "/sys/devices/system/cpu/%s", caad_cpumask_empty(&extra) ? "online" : "possible");
	if (r < 0)
		return log_error_errno(r, "Failed to build path: %m");
	(void)caad_cpumask_format_list(&t->present, have, CAAD_CPULIST_MAX);
	(void)caad_cpumask_format_list(caad_cpumask_empty(&extra) ? &online : &possible, there, CAAD_CPULIST_MAX);
	(void)caad_cpumask_format_list(caad_cpumask_empty(&extra) ? &missing : &extra, odd, CAAD_CPULIST_MAX);
	log_error("%s has CPUs %s, but %s is %s (%s %s): the topology of another machine", xml_path, have, path,
	          there, caad_cpumask_empty(&extra) ? "not in the file:" : "not there:", odd);
	return -EINVAL;
}

int caad_topology_load_synthetic(const char *description, struct caad_topology **ret)
{
	_cleanup_(hwloc_topology_destroyp) hwloc_topology_t topo = NULL;
	struct caad_cpumask isolated;
	int r;

	assert(description);
	assert(ret);

	r = topology_new(&topo);
	if (r < 0)
		return r;

	if (hwloc_topology_set_synthetic(topo, description) < 0)
		return log_error_errno(hwloc_errno(), "Invalid synthetic topology \"%s\": %m", description);

	if (hwloc_topology_load(topo) < 0)
		return log_error_errno(hwloc_errno(), "Failed to load synthetic topology \"%s\": %m", description);

	caad_cpumask_zero(&isolated);
	return topology_build(&topo, description, &isolated, NULL, ret);
}

static bool cpu_known(const struct caad_topology *t, unsigned cpu)
{
	return cpu < t->n_cpus && t->cpus[cpu].present;
}

/*
 * One usable PU (the lowest-numbered) of every other core that shares cpu's
 * LLC (same_llc) or that is in cpu's package outside that LLC (!same_llc).
 */
static int core_peers(const struct caad_topology *t, unsigned cpu, bool same_llc, struct caad_cpumask *ret)
{
	const struct caad_cpu *c;
	struct caad_cpumask peers;
	int n = 0;

	assert(t);
	assert(ret);

	if (!cpu_known(t, cpu))
		return -EINVAL;
	c = &t->cpus[cpu];

	caad_cpumask_zero(&peers);
	for (unsigned i = 0; i < t->n_cores; i++) {
		const struct caad_cpu *o;
		struct caad_cpumask avail;
		bool in_llc;
		int p;

		if ((int)i == c->core)
			continue;
		caad_cpumask_and(&avail, &t->cores[i].cpus, &t->usable);
		p = caad_cpumask_next(&avail, 0);
		if (p < 0)
			continue;
		o = &t->cpus[p];

		in_llc = c->llc >= 0 && o->llc == c->llc;
		if (same_llc ? !in_llc : (in_llc || o->package != c->package))
			continue;

		caad_cpumask_set(&peers, (unsigned)p);
		n++;
	}

	*ret = peers;
	return n;
}

int caad_topology_llc_peers(const struct caad_topology *t, unsigned cpu, struct caad_cpumask *ret)
{
	return core_peers(t, cpu, true, ret);
}

int caad_topology_package_peers(const struct caad_topology *t, unsigned cpu, struct caad_cpumask *ret)
{
	return core_peers(t, cpu, false, ret);
}

enum caad_relation caad_topology_relation(const struct caad_topology *t, unsigned a, unsigned b)
{
	const struct caad_cpu *ca, *cb;

	assert(t);

	if (!cpu_known(t, a) || !cpu_known(t, b))
		return CAAD_RELATION_UNSTEERED;
	if (a == b)
		return CAAD_RELATION_SAME_CORE;

	ca = &t->cpus[a];
	cb = &t->cpus[b];
	if (ca->core == cb->core)
		return CAAD_RELATION_SMT_SIBLING;
	if (ca->llc >= 0 && ca->llc == cb->llc)
		return CAAD_RELATION_PEER_CORE_SAME_LLC;
	if (ca->package == cb->package)
		return CAAD_RELATION_SAME_PACKAGE_OTHER_LLC;
	return CAAD_RELATION_OTHER_PACKAGE;
}

int caad_topology_nic_names(const struct caad_topology *t, char ***ret)
{
	hwloc_obj_t o = NULL;
	char **l;
	size_t n = 0;

	assert(t);
	assert(t->hwloc);
	assert(ret);

	while ((o = hwloc_get_next_osdev(t->hwloc, o)))
		n += o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && o->name;
	l = calloc(n + 1, sizeof(char *));
	if (!l)
		return -ENOMEM;
	n = 0;
	while ((o = hwloc_get_next_osdev(t->hwloc, o))) {
		if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK || !o->name)
			continue;
		l[n] = strdup(o->name);
		if (!l[n]) {
			caad_strv_free(l);
			return -ENOMEM;
		}
		n++;
	}
	*ret = l;
	return (int)n;
}

/* Whether hwloc's OS device o hangs off the PCI function named bus_id
 * ("0000:3b:00.0", as sysfs names it), or off none where bus_id is "". */
static bool osdev_on_pci(hwloc_obj_t o, const char *bus_id)
{
	char name[32];

	for (o = o->parent; o && hwloc_obj_type_is_io(o->type); o = o->parent)
		if (o->type == HWLOC_OBJ_PCI_DEVICE) {
			snprintf(name, sizeof(name), "%04x:%02x:%02x.%01x", o->attr->pcidev.domain, o->attr->pcidev.bus,
			         o->attr->pcidev.dev, o->attr->pcidev.func);
			return streq(name, bus_id);
		}
	/* none above it (a platform NIC): right for a device with none either */
	return !*bus_id;
}

int caad_topology_nic_cpus(const struct caad_topology *t, const char *ifname, const char *bus_id,
                           struct caad_cpumask *ret)
{
	hwloc_topology_t topo;
	hwloc_obj_t o = NULL;

	assert(t);
	assert(t->hwloc);
	assert(ifname);
	assert(ret);

	topo = t->hwloc;
	while ((o = hwloc_get_next_osdev(topo, o)))
		if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && o->name && streq(o->name, ifname))
			break;
	/* hwloc named its OS devices when the topology loaded: the name may
	 * have gone to another NIC since (a rename, a new device) */
	if (!o || (bus_id && !osdev_on_pci(o, bus_id)))
		return -ENOENT;

	/* The first non-I/O ancestor always exists: at worst the Machine. */
	o = hwloc_get_non_io_ancestor_obj(topo, o);
	assert(o);
	mask_from_bitmap(ret, o->complete_cpuset, &t->present);
	return 0;
}
