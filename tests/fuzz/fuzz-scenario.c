/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scenario files (caad --simulate): JSON parsed into interfaces, queues,
 * flows and a previous plan, then planned and printed, on a synthetic
 * dual-socket topology with two LLCs per package. Checked beyond memory
 * errors: a parse answers 0 with a scenario, or an error with a message;
 * the plan steers only to usable CPUs outside the banned ones, names only
 * flows and interfaces that exist, and moves at most max_moves flows.
 */
#include <errno.h>
#include <stdio.h>

#include "caad/plan.h"
#include "caad/scenario.h"
#include "caad/topology.h"
#include "fuzz.h"

#define TOPOLOGY "package:2 l3:2 core:4 pu:2"

static struct caad_topology *topo; /* made once, kept to the end */
static FILE *devnull;

static void check_plan(const struct caad_scenario *s, const struct caad_policy *policy,
                       const struct caad_plan *p)
{
	struct caad_cpumask allowed;

	caad_cpumask_andnot(&allowed, &topo->usable, &policy->banned);
	caad_cpumask_andnot(&allowed, &allowed, &s->banned);

	fuzz_assert(p->n_decisions <= s->n_flows);
	fuzz_assert(p->n_moves <= policy->max_moves);
	for (size_t i = 0; i < p->n_decisions; i++) {
		const struct caad_decision *d = &p->decisions[i];

		fuzz_assert(d->flow < s->n_flows);
		fuzz_assert(d->iface >= 0 && (size_t)d->iface < s->inv.n_ifaces);
		fuzz_assert(d->reason && d->considered);
		fuzz_assert(d->steer_cpu == -1 || caad_cpumask_test(&allowed, (unsigned)d->steer_cpu));
		fuzz_assert(caad_plan_find(p, d->flow_id) == d);
	}
	for (size_t i = 0; i < p->n_settings; i++) {
		const struct caad_setting *st = &p->settings[i];
		struct caad_cpumask outside;

		fuzz_assert(st->iface >= 0 && (size_t)st->iface < s->inv.n_ifaces);
		fuzz_assert((unsigned)st->kind < _CAAD_SETTING_KIND_COUNT);
		caad_cpumask_andnot(&outside, &st->cpus, &allowed);
		fuzz_assert(caad_cpumask_empty(&outside));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = NULL;
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	_cleanup_free_ char *error = NULL;
	struct caad_policy policy;
	int r;

	fuzz_setup();
	if (!topo) {
		fuzz_assert(caad_topology_load_synthetic(TOPOLOGY, &topo) == 0);
		devnull = fopen("/dev/null", "we");
		fuzz_assert(devnull);
	}

	r = caad_scenario_parse((const char *)data, size, "fuzz.json", topo, &s, &error);
	fuzz_assert(r == 0 || r == -EINVAL);
	fuzz_assert((r == 0) == (s != NULL));
	fuzz_assert((r == 0) == (error == NULL));
	if (r < 0)
		return 0;

	/* Both fallbacks of the policy, chosen by the input's length. */
	caad_policy_init(&policy);
	policy.allow_smt_sibling = size & 1;
	policy.allow_other_package = size & 2;
	fuzz_assert(caad_scenario_plan(s, topo, &policy, &p) == 0);
	check_plan(s, &policy, p);
	fuzz_assert(caad_scenario_print(devnull, s, &policy, p) >= 0);
	return 0;
}
