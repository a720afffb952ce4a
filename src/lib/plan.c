/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner: pure functions, no I/O. For each heavy flow, steer its
 * protocol processing to a peer core of its consumer: a different physical
 * core sharing the consumer's last-level cache, the least loaded first,
 * never a consumer's core, never a banned or unusable CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/plan.h"

/* Reasons are for people; a long IPv6 tuple may shorten one, never overflow it. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

void caad_policy_init(struct caad_policy *p)
{
	*p = (struct caad_policy){
		.rate_threshold_bps = 1000000000ull,
	};
	caad_cpumask_zero(&p->banned);
}

static const char *const setting_kind_names[_CAAD_SETTING_KIND_COUNT] = {
	[CAAD_SETTING_IRQ_AFFINITY] = "irq-affinity",
	[CAAD_SETTING_RPS_CPUS] = "rps-cpus",
};

const char *caad_setting_kind_to_string(enum caad_setting_kind k)
{
	return k < _CAAD_SETTING_KIND_COUNT ? setting_kind_names[k] : NULL;
}

void caad_plan_free(struct caad_plan *p)
{
	if (!p)
		return;
	free(p->decisions);
	free(p->settings);
	free(p);
}

struct planner {
	const struct caad_topology *topo;
	const struct caad_inventory *inv;
	const struct caad_flow *flows;
	const struct caad_policy *policy;
	struct caad_cpumask allowed;   /* usable, not banned, not a consumer's core */
	uint64_t *load;                /* steered bit/s per CPU */
	struct caad_plan *plan;
	size_t cap_settings;
	/* per iface: which queue is claimed by which decision (-1 none) */
	long **claimed;
};

/* Index of the managed interface with this ifindex, or -1. */
static int find_iface(const struct caad_inventory *inv, int ifindex)
{
	const struct caad_iface *iface = caad_inventory_find_ifindex(inv, ifindex);

	return iface ? (int)(iface - inv->ifaces) : -1;
}

static int cmp_heavy(const void *a, const void *b, void *userdata)
{
	const struct caad_flow *flows = userdata;
	const struct caad_flow *x = &flows[*(const size_t *)a], *y = &flows[*(const size_t *)b];

	if (x->rate_bps != y->rate_bps)
		return x->rate_bps > y->rate_bps ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Peers come as one CPU per core (the lowest usable); a banned or busy
 * thread must not rule out its core: take the lowest allowed CPU of each. */
static void allowed_of_cores(const struct planner *pl, struct caad_cpumask *peers)
{
	struct caad_cpumask out, m;

	caad_cpumask_zero(&out);
	CAAD_CPUMASK_FOREACH(cpu, peers) {
		caad_cpumask_and(&m, &pl->topo->cores[pl->topo->cpus[cpu].core].cpus, &pl->allowed);
		int first = caad_cpumask_next(&m, 0);
		if (first >= 0)
			caad_cpumask_set(&out, (unsigned)first);
	}
	*peers = out;
}

/* Least-loaded CPU of candidates (lowest number on ties), or -1. */
static int pick(const struct planner *pl, const struct caad_cpumask *candidates)
{
	int best = -1;

	CAAD_CPUMASK_FOREACH(cpu, candidates)
		if (best < 0 || pl->load[cpu] < pl->load[best])
			best = cpu;
	return best;
}

static int choose_steer_cpu(const struct planner *pl, int c, const char **where)
{
	const struct caad_topology *t = pl->topo;
	struct caad_cpumask cand;
	int cpu;

	if (caad_topology_llc_peers(t, (unsigned)c, &cand) >= 0) {
		allowed_of_cores(pl, &cand);
		cpu = pick(pl, &cand);
		if (cpu >= 0) {
			*where = "peer core in its LLC";
			return cpu;
		}
	}
	if (caad_topology_package_peers(t, (unsigned)c, &cand) >= 0) {
		allowed_of_cores(pl, &cand);
		cpu = pick(pl, &cand);
		if (cpu >= 0) {
			*where = "no free peer in its LLC: core in another LLC of its package";
			return cpu;
		}
	}
	if (pl->policy->allow_other_package) {
		caad_cpumask_zero(&cand);
		const struct caad_cpu *cc = &t->cpus[c];
		CAAD_CPUMASK_FOREACH(p, &pl->allowed)
			if (t->cpus[p].package != cc->package)
				caad_cpumask_set(&cand, (unsigned)p);
		cpu = pick(pl, &cand);
		if (cpu >= 0) {
			*where = "no free core in its package: core in another package (AllowOtherPackage)";
			return cpu;
		}
	}
	if (pl->policy->allow_smt_sibling) {
		caad_cpumask_zero(&cand);
		const struct caad_cpuset_group *core = &t->cores[t->cpus[c].core];
		CAAD_CPUMASK_FOREACH(p, &core->cpus)
			if (p != c && caad_cpumask_test(&t->usable, (unsigned)p) &&
			    !caad_cpumask_test(&pl->policy->banned, (unsigned)p))
				caad_cpumask_set(&cand, (unsigned)p);
		cpu = pick(pl, &cand);
		if (cpu >= 0) {
			*where = "no free peer core: its SMT sibling (AllowSMTSibling)";
			return cpu;
		}
	}
	return -1;
}

static int add_setting(struct planner *pl, enum caad_setting_kind kind, int iface, unsigned queue, int irq,
                       const struct caad_cpumask *cpus, const char *reason)
{
	struct caad_plan *p = pl->plan;

	if (p->n_settings == pl->cap_settings) {
		size_t ncap = pl->cap_settings ? pl->cap_settings * 2 : 16;
		struct caad_setting *ns = reallocarray(p->settings, ncap, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		p->settings = ns;
		pl->cap_settings = ncap;
	}
	struct caad_setting *s = &p->settings[p->n_settings++];
	*s = (struct caad_setting){ .kind = kind, .iface = iface, .queue = queue, .irq = irq, .cpus = *cpus };
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	return 0;
}

/* Settings for one queue steered to cpu: a movable IRQ gets the CPU as
 * affinity (and RPS off), otherwise RPS does the steering. */
static int steer_queue(struct planner *pl, int iface, const struct caad_queue *q, int cpu, const char *reason)
{
	struct caad_cpumask m, none;
	int r;

	caad_cpumask_zero(&m);
	caad_cpumask_set(&m, (unsigned)cpu);
	caad_cpumask_zero(&none);

	if (q->irq >= 0 && !q->irq_managed) {
		r = add_setting(pl, CAAD_SETTING_IRQ_AFFINITY, iface, q->index, q->irq, &m, reason);
		if (r < 0 || !q->has_rps)
			return r;
		return add_setting(pl, CAAD_SETTING_RPS_CPUS, iface, q->index, -1, &none, reason);
	}
	if (!q->has_rps)
		return 0; /* nothing can steer this queue */
	return add_setting(pl, CAAD_SETTING_RPS_CPUS, iface, q->index, -1, &m, reason);
}

static int plan_flow(struct planner *pl, size_t fi, struct caad_decision *d)
{
	const struct caad_flow *f = &pl->flows[fi];
	const struct caad_topology *t = pl->topo;
	const struct caad_iface *iface = &pl->inv->ifaces[d->iface];
	const char *where = NULL;
	char tuple[128];
	int c = f->consumer_cpu, cpu, r;

	caad_flow_format_tuple(f, tuple, sizeof(tuple));
	if (c < 0 || (unsigned)c >= t->n_cpus || !t->cpus[c].present) {
		snprintf(d->reason, sizeof(d->reason), "flow %s: consumer CPU unknown", tuple);
		return 0;
	}

	/* Queues this flow arrives on: its own rx queue when known, else all. */
	unsigned first = 0, last = iface->n_rx;
	if (f->rx_queue >= 0) {
		for (unsigned i = 0; i < iface->n_rx; i++)
			if (iface->rx[i].index == (unsigned)f->rx_queue) {
				first = i;
				last = i + 1;
				d->queue = f->rx_queue;
			}
	}
	if (first == last || iface->n_rx == 0) {
		snprintf(d->reason, sizeof(d->reason), "flow %s on %s: no rx queue to steer", tuple, iface->name);
		return 0;
	}
	for (unsigned i = first; i < last; i++) {
		long owner = pl->claimed[d->iface][i];
		if (owner >= 0) {
			const struct caad_flow *o = &pl->flows[owner];
			snprintf(d->reason, sizeof(d->reason),
			         "flow %s: conflicted, %s rx-%u already steered for a faster flow (consumer %s/%u on CPU %d)",
			         tuple, iface->name, iface->rx[i].index, o->comm, o->tid, o->consumer_cpu);
			return 0;
		}
	}

	cpu = choose_steer_cpu(pl, c, &where);
	if (cpu < 0) {
		snprintf(d->reason, sizeof(d->reason),
		         "flow %s: consumer %s/%u on CPU %d has no usable peer core (banned, offline or busy)", tuple,
		         f->comm, f->tid, c);
		return 0;
	}

	d->steer_cpu = cpu;
	d->relation = caad_topology_relation(t, (unsigned)c, (unsigned)cpu);
	const struct caad_cpu *sc = &t->cpus[cpu];
	snprintf(d->reason, sizeof(d->reason), "flow %s: consumer %s/%u on CPU %d, %s (L%u#%d, package %d)", tuple,
	         f->comm, f->tid, c, where, t->llc_depth_level, sc->llc, sc->package);

	pl->load[cpu] += f->rate_bps;
	for (unsigned i = first; i < last; i++) {
		pl->claimed[d->iface][i] = (long)fi;
		r = steer_queue(pl, d->iface, &iface->rx[i], cpu, d->reason);
		if (r < 0)
			return r;
	}
	return 0;
}

int caad_plan_compute(const struct caad_topology *topo, const struct caad_inventory *inv,
                      const struct caad_flow *flows, size_t n_flows, const struct caad_policy *policy,
                      struct caad_plan **ret)
{
	_cleanup_(caad_plan_freep) struct caad_plan *plan = NULL;
	_cleanup_free_ size_t *heavy = NULL;
	_cleanup_free_ uint64_t *load = NULL;
	_cleanup_free_ long **claimed = NULL;
	_cleanup_free_ long *claimed_store = NULL;
	size_t n_heavy = 0, n_queues = 0;
	int r;

	plan = calloc(1, sizeof(*plan));
	heavy = calloc(n_flows ? n_flows : 1, sizeof(*heavy));
	load = calloc(topo->n_cpus ? topo->n_cpus : 1, sizeof(*load));
	claimed = calloc(inv->n_ifaces ? inv->n_ifaces : 1, sizeof(*claimed));
	if (!plan || !heavy || !load || !claimed)
		return -ENOMEM;
	for (size_t i = 0; i < inv->n_ifaces; i++)
		n_queues += inv->ifaces[i].n_rx;
	claimed_store = malloc((n_queues ? n_queues : 1) * sizeof(long));
	if (!claimed_store)
		return -ENOMEM;
	for (size_t i = 0, off = 0; i < inv->n_ifaces; i++) {
		claimed[i] = claimed_store + off;
		for (unsigned q = 0; q < inv->ifaces[i].n_rx; q++)
			claimed[i][q] = -1;
		off += inv->ifaces[i].n_rx;
	}

	struct planner pl = {
		.topo = topo, .inv = inv, .flows = flows, .policy = policy,
		.load = load, .plan = plan, .claimed = claimed,
	};

	/* Heavy flows on managed interfaces, fastest first. Their consumers'
	 * cores are kept free of steered processing. */
	pl.allowed = topo->usable;
	caad_cpumask_andnot(&pl.allowed, &pl.allowed, &policy->banned);
	for (size_t i = 0; i < n_flows; i++) {
		const struct caad_flow *f = &flows[i];

		if (f->rate_bps < policy->rate_threshold_bps || find_iface(inv, f->ifindex) < 0)
			continue;
		heavy[n_heavy++] = i;
		if (f->consumer_cpu >= 0 && (unsigned)f->consumer_cpu < topo->n_cpus &&
		    topo->cpus[f->consumer_cpu].present)
			caad_cpumask_andnot(&pl.allowed, &pl.allowed, &topo->cores[topo->cpus[f->consumer_cpu].core].cpus);
	}
	qsort_r(heavy, n_heavy, sizeof(*heavy), cmp_heavy, (void *)flows);

	plan->decisions = calloc(n_heavy ? n_heavy : 1, sizeof(*plan->decisions));
	if (!plan->decisions)
		return -ENOMEM;
	for (size_t k = 0; k < n_heavy; k++) {
		struct caad_decision *d = &plan->decisions[plan->n_decisions++];

		*d = (struct caad_decision){
			.flow = heavy[k],
			.iface = find_iface(inv, flows[heavy[k]].ifindex),
			.queue = -1,
			.steer_cpu = -1,
			.relation = CAAD_RELATION_UNSTEERED,
		};
		r = plan_flow(&pl, heavy[k], d);
		if (r < 0)
			return r;
	}

	*ret = TAKE_PTR(plan);
	return 0;
}
