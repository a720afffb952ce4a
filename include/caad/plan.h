/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "caad/cpumask.h"
#include "caad/flow.h"
#include "caad/inventory.h"
#include "caad/topology.h"

#define CAAD_REASON_MAX 256

struct caad_policy {
	uint64_t rate_threshold_bps; /* flows below this are left alone */
	bool allow_smt_sibling;      /* SMT sibling of the consumer as last resort in its core */
	bool allow_other_package;    /* another package when the consumer's has no peer */
	struct caad_cpumask banned;  /* never steer to these */
};

void caad_policy_init(struct caad_policy *p);

struct caad_decision {
	size_t flow;                 /* index into the flows array */
	int iface;                   /* index into inventory->ifaces, -1 unmanaged */
	int queue;                   /* rx queue index, -1 unknown (all queues) */
	int steer_cpu;               /* -1: unsteered */
	enum caad_relation relation;
	char reason[CAAD_REASON_MAX];
};

enum caad_setting_kind {
	CAAD_SETTING_IRQ_AFFINITY,
	CAAD_SETTING_RPS_CPUS,
	_CAAD_SETTING_KIND_COUNT,
};

const char *caad_setting_kind_to_string(enum caad_setting_kind k);

struct caad_setting {
	enum caad_setting_kind kind;
	int iface;                   /* index into inventory->ifaces */
	unsigned queue;
	int irq;                     /* for CAAD_SETTING_IRQ_AFFINITY */
	struct caad_cpumask cpus;
	char reason[CAAD_REASON_MAX];
};

struct caad_plan {
	struct caad_decision *decisions;
	size_t n_decisions;
	struct caad_setting *settings;
	size_t n_settings;
};

/*
 * Pure: topology + queues + flows + policy -> desired settings, each with a
 * reason. No I/O. Flows need not be sorted.
 */
int caad_plan_compute(const struct caad_topology *topo, const struct caad_inventory *inv,
                      const struct caad_flow *flows, size_t n_flows, const struct caad_policy *policy,
                      struct caad_plan **ret);
void caad_plan_free(struct caad_plan *p);
static inline void caad_plan_freep(struct caad_plan **p)
{
	caad_plan_free(*p);
}
