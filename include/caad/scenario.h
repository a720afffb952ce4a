/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Scenarios for the offline simulator (caad --simulate): interfaces, queues,
 * flows, banned CPUs and a previous plan, as JSON (docs/scenario.md), and
 * the plan for them, as JSON. Parsing and printing do no other I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "caad/cpumask.h"
#include "caad/flow.h"
#include "caad/inventory.h"
#include "caad/plan.h"
#include "caad/topology.h"

/* "now_ms" when a scenario has none: an hour, so that flows and previous
 * targets without times are old. */
#define CAAD_SCENARIO_NOW_MS_DEFAULT UINT64_C(3600000)
/* Scenario files larger than this are refused. */
#define CAAD_SCENARIO_SIZE_MAX (64u << 20)

struct caad_scenario {
	struct caad_inventory inv;  /* "interfaces": ifindex 1, 2, ... in file order */
	struct caad_flow *flows;    /* "flows": id 1, 2, ... in file order */
	size_t n_flows;
	char **flow_ids;            /* each flow's "id" as written */
	bool *flow_id_numeric;      /* ... and whether it was a JSON number */
	struct caad_cpumask banned; /* "banned_cpus", empty if none */
	struct caad_plan *previous; /* "previous", NULL if none */
	uint64_t now_ns;            /* "now_ms" */
};

/*
 * Parse len bytes of JSON text for topology t. CPU numbers are checked
 * against t. On a bad scenario returns -EINVAL with *ret_error set to
 * "FILE: FIELD: why" (or "FILE:LINE:COLUMN: why" for bad JSON), malloc'ed;
 * -ENOMEM leaves it NULL. Nothing is logged.
 */
int caad_scenario_parse(const char *text, size_t len, const char *filename, const struct caad_topology *t,
                        struct caad_scenario **ret, char **ret_error);
/* Read path (at most CAAD_SCENARIO_SIZE_MAX bytes) and parse it: a file
 * that cannot be read returns its -errno with *ret_error "FILE: why". */
int caad_scenario_load(const char *path, const struct caad_topology *t, struct caad_scenario **ret,
                       char **ret_error);
void caad_scenario_free(struct caad_scenario *s);
static inline void caad_scenario_freep(struct caad_scenario **s)
{
	caad_scenario_free(*s);
}

/* The plan for a scenario: policy with the scenario's banned CPUs added,
 * at its now_ms, after its previous plan. */
int caad_scenario_plan(const struct caad_scenario *s, const struct caad_topology *t,
                       const struct caad_policy *policy, struct caad_plan **ret);

/* The plan as JSON: "flows" (one entry per flow), "irqs", "rps", "kthreads". */
int caad_scenario_print(FILE *f, const struct caad_scenario *s, const struct caad_policy *policy,
                        const struct caad_plan *p);
