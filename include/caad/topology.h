/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "caad/cpumask.h"

/*
 * The machine as caad plans for it, taken from hwloc. CPU numbers are OS
 * numbers (hwloc P#), never assumed contiguous per package.
 */

enum caad_relation {
	CAAD_RELATION_UNSTEERED,          /* caad leaves the flow alone */
	CAAD_RELATION_PEER_CORE_SAME_LLC, /* different core, same last-level cache */
	CAAD_RELATION_SAME_PACKAGE_OTHER_LLC,
	CAAD_RELATION_OTHER_PACKAGE,
	CAAD_RELATION_SMT_SIBLING,
	CAAD_RELATION_SAME_CORE,
	CAAD_RELATION_HOST_STEERING,      /* the closed loop's hands-off placement: the queue as the
	                                   * host had it before caad (where its own settings put it) */
	_CAAD_RELATION_COUNT,
};

const char *caad_relation_to_string(enum caad_relation r);

#define CAAD_CACHE_LEVELS 5

struct caad_cpu {
	bool present;  /* known to the topology at all */
	bool usable;   /* online, allowed, not isolated */
	int core;      /* index into topology->cores */
	int llc;       /* index into topology->llcs (-1: no shared cache known) */
	int package;   /* index into topology->packages */
	int numa;      /* OS index of the NUMA node, -1 if unknown */
	int kind;      /* index into topology->kinds (hybrid CPUs), -1 if hwloc reports none */
	int cache[CAAD_CACHE_LEVELS]; /* logical index of its L1..L5 cache, -1 none */
};

struct caad_cpuset_group {
	unsigned os_index;       /* hwloc os_index (packages) or logical index */
	struct caad_cpumask cpus; /* present CPUs of the group */
};

struct caad_cpu_kind {
	char name[32];      /* hwloc's CoreType info ("IntelAtom", "IntelCore"), or "kind<N>" */
	int efficiency;     /* hwloc's efficiency rank, -1 unknown */
	struct caad_cpumask cpus;
};

struct caad_topology {
	bool live;                /* the running host's (not an XML file, not synthetic) */
	unsigned n_cpus;          /* highest present OS CPU number + 1 */
	struct caad_cpu *cpus;    /* n_cpus entries */
	struct caad_cpumask present;
	struct caad_cpumask usable;

	struct caad_cpuset_group *cores;
	unsigned n_cores;
	struct caad_cpuset_group *llcs;
	unsigned n_llcs;
	unsigned llc_depth_level; /* cache level used as LLC (3 on most hosts), 0 if none */
	struct caad_cpuset_group *packages;
	unsigned n_packages;
	struct caad_cpuset_group *numas; /* os_index: the node's OS number */
	unsigned n_numas;
	unsigned cache_levels; /* bit L-1 set when some L<L> cache exists */

	struct caad_cpu_kind *kinds; /* hwloc CPU kinds, least efficient first */
	unsigned n_kinds;

	void *hwloc; /* hwloc_topology_t, kept for I/O (NIC locality) queries */
};

/*
 * Load the topology: from an hwloc XML file when xml_path is non-NULL, else
 * from the running host. The isolated CPUs (SYSROOT/sys/devices/system/cpu/
 * isolated and .../nohz_full, both kept free of caad's work) and the online
 * ones are read under sysroot ("/": this host's); with sysroot NULL, from
 * this host for its own topology, and not at all for an XML file's (another
 * machine, whose CPU states are not this host's).
 */
int caad_topology_load(const char *xml_path, const char *sysroot, struct caad_topology **ret);
/*
 * Whether t, loaded from the XML file xml_path, can be the machine whose CPUs
 * are under sysroot (NULL: this host): every CPU online there is one of t's,
 * and every one of t's is possible there. Only CPU numbers are compared,
 * not how cores and caches group them. 0, or -EINVAL (logged, naming the
 * file and both sets) when not; a read error as a negative errno.
 */
int caad_topology_check_machine(const struct caad_topology *t, const char *xml_path, const char *sysroot);
/* Load from an hwloc synthetic description ("package:2 l3:2 core:6 pu:2"). */
int caad_topology_load_synthetic(const char *description, struct caad_topology **ret);
void caad_topology_free(struct caad_topology *t);
static inline void caad_topology_freep(struct caad_topology **t)
{
	caad_topology_free(*t);
}

/*
 * Peer cores of cpu: one usable PU (the lowest-numbered) of every other
 * physical core sharing cpu's LLC. Never cpu's own core or SMT siblings.
 * Returns the number of peers found (0 if none), or -EINVAL for an unknown CPU.
 */
int caad_topology_llc_peers(const struct caad_topology *t, unsigned cpu, struct caad_cpumask *ret);
/* Same, for the other LLCs of cpu's package. */
int caad_topology_package_peers(const struct caad_topology *t, unsigned cpu, struct caad_cpumask *ret);

/* How CPU b relates to CPU a. */
enum caad_relation caad_topology_relation(const struct caad_topology *t, unsigned a, unsigned b);

/* Present CPUs of NUMA node os_index; returns their count, -ENOENT for no such node. */
int caad_topology_numa_cpus(const struct caad_topology *t, int os_index, struct caad_cpumask *ret);

/* CPUs local to a network interface (hwloc OS device by name), or -ENOENT.
 * With bus_id non-NULL, only an OS device under the PCI function of that
 * name ("0000:3b:00.0") counts: hwloc's names are those of the load. */
int caad_topology_nic_cpus(const struct caad_topology *t, const char *ifname, const char *bus_id,
                           struct caad_cpumask *ret);
/* Names of the network interfaces the topology holds as hwloc OS devices
 * (an XML file's NICs, say): a NULL-terminated array to free with
 * caad_strv_free(). Returns their count or -ENOMEM. */
int caad_topology_nic_names(const struct caad_topology *t, char ***ret);

/*
 * The machine as caad sees it: packages > LLCs > cores > PUs with NUMA
 * nodes, and (when inv is non-NULL) each interface at its locality with its
 * queues and IRQs on the CPUs that serve them. Text for people, or JSON.
 * The topology/inventory structures are only read.
 */
struct caad_inventory;
int caad_topology_print(const struct caad_topology *t, const struct caad_inventory *inv, FILE *out);
int caad_topology_to_json(const struct caad_topology *t, const struct caad_inventory *inv, FILE *out);
