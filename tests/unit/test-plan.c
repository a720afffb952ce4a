/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner is pure: topologies from hwloc XML fixtures or synthetic
 * descriptions, inventories and flows built in memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "caad/cpumask.h"
#include "caad/flow.h"
#include "caad/inventory.h"
#include "caad/macro.h"
#include "caad/plan.h"
#include "caad/sysfs.h"
#include "caad/topology.h"

#include "test-util.h"

#define GBIT UINT64_C(1000000000)

#define ETH0_IFINDEX 2
#define VETH_IFINDEX 7
#define ETH0_FIRST_IRQ 100

/* ---- fixtures ---------------------------------------------------------- */

/* 2 packages x 6 cores x 2 threads; package 0 = even P#, siblings P#n, P#n+12. */
static struct caad_topology *load_24em64t(void)
{
	struct caad_topology *t = load_fixture("24em64t-2n6c2t-pci.xml");

	/* The layout the tests below rely on, checked rather than assumed. */
	assert_int_equal(t->n_cpus, 24);
	assert_int_equal(t->n_packages, 2);
	assert_int_equal(t->n_cores, 12);
	for (unsigned cpu = 0; cpu < 24; cpu++) {
		assert_int_equal(t->cpus[cpu].core, t->cpus[(cpu + 12) % 24].core);
		assert_int_equal(t->cpus[cpu].package, t->cpus[cpu % 2].package);
		assert_int_equal(t->cpus[cpu].llc, t->cpus[cpu % 2].llc);
	}
	assert_int_not_equal(t->cpus[0].package, t->cpus[1].package);
	assert_int_not_equal(t->cpus[0].llc, t->cpus[1].llc);
	assert_true(caad_cpumask_count(&t->usable) == 24);
	return t;
}

/*
 * An inventory in memory: "eth0" (ifindex 2) whose queue i has the movable
 * IRQ 100 + i and RPS, and a veth-like "veth0" (ifindex 7) with RPS and no
 * IRQs. Its arrays live in the struct: do not copy it after fake_inv_init().
 */
#define FAKE_MAX_QUEUES 16
struct fake_inv {
	struct caad_queue eth0[FAKE_MAX_QUEUES];
	struct caad_queue veth[FAKE_MAX_QUEUES];
	struct caad_iface ifaces[2];
	struct caad_inventory inv;
};

static void fake_inv_init(struct fake_inv *f, unsigned n_eth0, unsigned n_veth)
{
	assert_true(n_eth0 <= FAKE_MAX_QUEUES && n_veth <= FAKE_MAX_QUEUES);
	memset(f, 0, sizeof(*f));
	for (unsigned i = 0; i < n_eth0; i++) {
		f->eth0[i] = (struct caad_queue){ .index = i, .irq = ETH0_FIRST_IRQ + (int)i, .has_rps = true };
		f->eth0[i].has_irq_affinity = true;
		caad_cpumask_set(&f->eth0[i].irq_affinity, 0);
	}
	for (unsigned i = 0; i < n_veth; i++)
		f->veth[i] = (struct caad_queue){ .index = i, .irq = -1, .has_rps = true };
	f->ifaces[0] = (struct caad_iface){ .name = "eth0", .ifindex = ETH0_IFINDEX, .rx = f->eth0, .n_rx = n_eth0 };
	f->ifaces[1] = (struct caad_iface){ .name = "veth0", .ifindex = VETH_IFINDEX, .rx = f->veth, .n_rx = n_veth };
	f->inv = (struct caad_inventory){ .ifaces = f->ifaces, .n_ifaces = 2, .n_possible_cpus = 24 };
}

static struct caad_flow make_flow(uint64_t id, int consumer_cpu, int ifindex, int rx_queue, uint64_t rate_bps)
{
	struct caad_flow f = {
		.id = id,
		.family = 0,
		.pid = 4000 + (uint32_t)id,
		.tid = 4000 + (uint32_t)id,
		.consumer_cpu = consumer_cpu,
		.proc_cpu = -1,
		.ifindex = ifindex,
		.rx_queue = rx_queue,
		.rate_bps = rate_bps,
	};

	snprintf(f.comm, sizeof(f.comm), "iperf3-%u", (unsigned)id);
	return f;
}

static struct caad_cpumask single(unsigned cpu)
{
	struct caad_cpumask m;

	caad_cpumask_zero(&m);
	caad_cpumask_set(&m, cpu);
	return m;
}

static void assert_mask_equal(const struct caad_cpumask *got, const struct caad_cpumask *want)
{
	char g[512], w[512];

	if (caad_cpumask_equal(got, want))
		return;
	assert_true(caad_cpumask_format_list(got, g, sizeof(g)) >= 0);
	assert_true(caad_cpumask_format_list(want, w, sizeof(w)) >= 0);
	fail_msg("mask {%s}, expected {%s}", g, w);
}

static struct caad_plan *compute(const struct caad_topology *t, const struct caad_inventory *inv,
                                 const struct caad_flow *flows, size_t n, const struct caad_policy *policy)
{
	struct caad_plan *p = NULL;

	assert_int_equal(caad_plan_compute(t, inv, flows, n, policy, &p), 0);
	assert_non_null(p);
	assert_true(p->n_decisions <= n);
	return p;
}

/* The decision about flows[fi], or NULL. */
static const struct caad_decision *decision_of(const struct caad_plan *p, size_t fi)
{
	const struct caad_decision *found = NULL;

	for (size_t i = 0; i < p->n_decisions; i++)
		if (p->decisions[i].flow == fi) {
			assert_null(found); /* one decision per flow */
			found = &p->decisions[i];
		}
	return found;
}

/* The only setting of kind for (iface, queue), or NULL. */
static const struct caad_setting *setting_of(const struct caad_plan *p, enum caad_setting_kind kind, int iface,
                                             unsigned queue)
{
	const struct caad_setting *found = NULL;

	for (size_t i = 0; i < p->n_settings; i++) {
		const struct caad_setting *s = &p->settings[i];

		if (s->kind == kind && s->iface == iface && s->queue == queue) {
			assert_null(found);
			found = s;
		}
	}
	return found;
}

static void assert_same_core(const struct caad_topology *t, unsigned a, unsigned b, bool same)
{
	assert_int_equal(t->cpus[a].core == t->cpus[b].core, same);
}

/* ---- tests ------------------------------------------------------------- */

static void test_policy_defaults(void **state)
{
	struct caad_policy p;

	(void)state;
	memset(&p, 0xff, sizeof(p));
	caad_policy_init(&p);
	assert_int_equal(p.rate_threshold_bps, GBIT);
	assert_false(p.allow_smt_sibling);
	assert_false(p.allow_other_package);
	assert_true(caad_cpumask_empty(&p.banned));

	assert_string_equal(caad_setting_kind_to_string(CAAD_SETTING_IRQ_AFFINITY), "irq-affinity");
	assert_string_equal(caad_setting_kind_to_string(CAAD_SETTING_RPS_CPUS), "rps-cpus");
	assert_null(caad_setting_kind_to_string(_CAAD_SETTING_KIND_COUNT));

	caad_plan_free(NULL);
}

static void test_no_flows(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:1 core:2 pu:1");
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_inventory empty = { 0 };
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	p = compute(t, &f.inv, NULL, 0, &policy);
	assert_int_equal(p->n_decisions, 0);
	assert_int_equal(p->n_settings, 0);
	caad_plan_free(TAKE_PTR(p));

	/* No managed interface at all: a heavy flow is nobody's business. */
	struct caad_flow fl = make_flow(1, 1, ETH0_IFINDEX, 0, 10 * GBIT);
	p = compute(t, &empty, &fl, 1, &policy);
	assert_int_equal(p->n_decisions, 0);
	assert_int_equal(p->n_settings, 0);
}

/* Every consumer CPU of the 2 x 6 x 2 machine: a peer core in its LLC. */
static void test_peer_core_every_consumer(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	for (unsigned c = 0; c < 24; c++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, (int)c, ETH0_IFINDEX, 0, 10 * GBIT);
		const struct caad_decision *d;
		const struct caad_setting *irq, *rps;
		struct caad_cpumask none;

		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 1);
		d = decision_of(p, 0);
		assert_non_null(d);
		assert_int_equal(d->iface, 0);
		assert_int_equal(d->queue, 0);
		assert_true(d->steer_cpu >= 0 && d->steer_cpu < 24);
		unsigned s = (unsigned)d->steer_cpu;

		assert_int_not_equal(s, c);
		assert_int_not_equal(s, (c + 12) % 24); /* not the SMT sibling */
		assert_same_core(t, c, s, false);
		assert_int_equal(t->cpus[s].package, t->cpus[c].package);
		assert_int_equal(t->cpus[s].llc, t->cpus[c].llc);
		assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_string_equal(caad_relation_to_string(d->relation), "peer-core-same-llc");
		assert_int_equal(caad_topology_relation(t, c, s), d->relation);
		assert_non_null(strstr(d->reason, "peer core in its LLC"));

		/* A movable IRQ: affinity to the peer, RPS off. Nothing else. */
		assert_int_equal(p->n_settings, 2);
		irq = setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 0);
		rps = setting_of(p, CAAD_SETTING_RPS_CPUS, 0, 0);
		assert_non_null(irq);
		assert_non_null(rps);
		assert_int_equal(irq->irq, ETH0_FIRST_IRQ);
		struct caad_cpumask want = single(s);
		assert_mask_equal(&irq->cpus, &want);
		caad_cpumask_zero(&none);
		assert_mask_equal(&rps->cpus, &none);
		assert_true(irq->reason[0] != 0);
	}
}

/* Which knobs a queue gets depends on what it has. */
static void test_setting_kinds(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct caad_cpumask want;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);

	/* veth-like: no IRQ, RPS does the steering. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, 4, VETH_IFINDEX, 0, 10 * GBIT);

		fake_inv_init(&f, 4, 1);
		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->decisions[0].iface, 1);
		assert_true(p->decisions[0].steer_cpu >= 0);
		assert_int_equal(p->n_settings, 1);
		assert_int_equal(p->settings[0].kind, CAAD_SETTING_RPS_CPUS);
		assert_int_equal(p->settings[0].iface, 1);
		assert_int_equal(p->settings[0].queue, 0);
		want = single((unsigned)p->decisions[0].steer_cpu);
		assert_mask_equal(&p->settings[0].cpus, &want);
	}

	/* A kernel-managed IRQ cannot be moved: RPS instead. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, 4, ETH0_IFINDEX, 2, 10 * GBIT);

		fake_inv_init(&f, 4, 1);
		f.eth0[2].irq_managed = true;
		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->decisions[0].queue, 2);
		assert_true(p->decisions[0].steer_cpu >= 0);
		assert_int_equal(p->n_settings, 1);
		assert_int_equal(p->settings[0].kind, CAAD_SETTING_RPS_CPUS);
		assert_int_equal(p->settings[0].queue, 2);
		want = single((unsigned)p->decisions[0].steer_cpu);
		assert_mask_equal(&p->settings[0].cpus, &want);
	}

	/* A movable IRQ without RPS (kernel without CONFIG_RPS): the IRQ only. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, 4, ETH0_IFINDEX, 1, 10 * GBIT);

		fake_inv_init(&f, 4, 1);
		f.eth0[1].has_rps = false;
		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_settings, 1);
		assert_int_equal(p->settings[0].kind, CAAD_SETTING_IRQ_AFFINITY);
		assert_int_equal(p->settings[0].irq, ETH0_FIRST_IRQ + 1);
		want = single((unsigned)p->decisions[0].steer_cpu);
		assert_mask_equal(&p->settings[0].cpus, &want);
	}

	/* Neither a movable IRQ nor RPS: nothing to write. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, 4, ETH0_IFINDEX, 3, 10 * GBIT);

		fake_inv_init(&f, 4, 1);
		f.eth0[3].irq_managed = true;
		f.eth0[3].has_rps = false;
		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->n_settings, 0);
	}
}

static void test_rate_threshold(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, 0, policy.rate_threshold_bps - 1),
			make_flow(2, 2, ETH0_IFINDEX, 1, 0),
			make_flow(3, 4, VETH_IFINDEX, 0, 1000),
		};

		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		assert_int_equal(p->n_decisions, 0);
		assert_int_equal(p->n_settings, 0);
	}

	/* The threshold itself is heavy; a light flow's consumer does not
	 * keep its core from receiving steered processing. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, 0, policy.rate_threshold_bps),
			make_flow(2, 2, ETH0_IFINDEX, 1, 10),
		};

		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		assert_int_equal(p->n_decisions, 1);
		assert_non_null(decision_of(p, 0));
		assert_null(decision_of(p, 1));
		assert_true(p->decisions[0].steer_cpu >= 0);
		assert_int_equal(p->n_settings, 2);
		for (size_t i = 0; i < p->n_settings; i++)
			assert_int_equal(p->settings[i].queue, 0);
	}

	/* A custom threshold. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, 0, ETH0_IFINDEX, 0, 5000);

		policy.rate_threshold_bps = 4000;
		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 1);
		policy.rate_threshold_bps = 6000;
		caad_plan_free(TAKE_PTR(p));
		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 0);
	}
}

static void test_unmanaged_ifindex(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	struct caad_flow fl[] = {
		make_flow(1, 0, 99, 0, 40 * GBIT),  /* not managed */
		make_flow(2, 2, 0, 0, 40 * GBIT),   /* interface unknown */
		make_flow(3, 4, -3, 0, 40 * GBIT),  /* nonsense */
		make_flow(4, 6, ETH0_IFINDEX, 1, 2 * GBIT),
	};
	p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
	assert_int_equal(p->n_decisions, 1);
	assert_non_null(decision_of(p, 3));
	for (size_t i = 0; i < 3; i++)
		assert_null(decision_of(p, i));
	/* The ignored flows' consumers are not protected either: only flow 4's
	 * settings exist, and they are for its queue. */
	assert_int_equal(p->n_settings, 2);
	for (size_t i = 0; i < p->n_settings; i++) {
		assert_int_equal(p->settings[i].iface, 0);
		assert_int_equal(p->settings[i].queue, 1);
	}
}

/* rx queue unknown: every queue of the interface is steered. */
static void test_rx_queue_unknown(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct caad_cpumask none;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	caad_cpumask_zero(&none);
	fake_inv_init(&f, 4, 3);

	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, 3, ETH0_IFINDEX, -1, 10 * GBIT);

		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->decisions[0].queue, -1);
		int s = p->decisions[0].steer_cpu;
		assert_true(s >= 0);
		struct caad_cpumask want = single((unsigned)s);
		assert_int_equal(p->n_settings, 8);
		for (unsigned q = 0; q < 4; q++) {
			const struct caad_setting *irq = setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, q);
			const struct caad_setting *rps = setting_of(p, CAAD_SETTING_RPS_CPUS, 0, q);

			assert_non_null(irq);
			assert_non_null(rps);
			assert_int_equal(irq->irq, ETH0_FIRST_IRQ + (int)q);
			assert_mask_equal(&irq->cpus, &want);
			assert_mask_equal(&rps->cpus, &none);
		}
	}

	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, 3, VETH_IFINDEX, -1, 10 * GBIT);

		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_settings, 3);
		struct caad_cpumask want = single((unsigned)p->decisions[0].steer_cpu);
		for (unsigned q = 0; q < 3; q++) {
			const struct caad_setting *rps = setting_of(p, CAAD_SETTING_RPS_CPUS, 1, q);

			assert_non_null(rps);
			assert_mask_equal(&rps->cpus, &want);
		}
	}

	/* A queue the inventory does not know (the inventory is stale): the
	 * flow is treated like one whose queue is unknown. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, 3, ETH0_IFINDEX, 9, 10 * GBIT);

		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->decisions[0].queue, -1);
		assert_true(p->decisions[0].steer_cpu >= 0);
		assert_int_equal(p->n_settings, 8);
		for (unsigned q = 0; q < 4; q++)
			assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, q));
	}

	/* An interface without rx queues: nothing to steer. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, 3, VETH_IFINDEX, -1, 10 * GBIT);

		fake_inv_init(&f, 4, 0);
		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->decisions[0].steer_cpu, -1);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_UNSTEERED);
		assert_non_null(strstr(p->decisions[0].reason, "no rx queue"));
		assert_int_equal(p->n_settings, 0);
	}
}

/* Two heavy flows on one queue: the faster one gets it, in any order. */
static void test_conflict_same_queue(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	for (unsigned order = 0; order < 2; order++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow slow = make_flow(10, 2, ETH0_IFINDEX, 1, 3 * GBIT);
		struct caad_flow fast = make_flow(11, 5, ETH0_IFINDEX, 1, 9 * GBIT);
		struct caad_flow fl[2];
		size_t fi_slow = order == 0 ? 0 : 1, fi_fast = 1 - fi_slow;
		const struct caad_decision *ds, *df;

		fl[fi_slow] = slow;
		fl[fi_fast] = fast;
		p = compute(t, &f.inv, fl, 2, &policy);
		assert_int_equal(p->n_decisions, 2);
		ds = decision_of(p, fi_slow);
		df = decision_of(p, fi_fast);
		assert_non_null(ds);
		assert_non_null(df);

		assert_true(df->steer_cpu >= 0);
		assert_int_equal(df->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_int_equal(t->cpus[df->steer_cpu].package, t->cpus[5].package);

		assert_int_equal(ds->steer_cpu, -1);
		assert_int_equal(ds->relation, CAAD_RELATION_UNSTEERED);
		assert_non_null(strstr(ds->reason, "conflicted"));
		assert_non_null(strstr(ds->reason, fast.comm)); /* names who has it */

		/* Only the winner's settings, on its CPU. */
		assert_int_equal(p->n_settings, 2);
		const struct caad_setting *irq = setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1);
		assert_non_null(irq);
		struct caad_cpumask want = single((unsigned)df->steer_cpu);
		assert_mask_equal(&irq->cpus, &want);
	}

	/* A flow of unknown queue claims them all: a later one on a single
	 * queue of that interface conflicts with it. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, -1, 9 * GBIT),
			make_flow(2, 1, ETH0_IFINDEX, 3, 2 * GBIT),
			make_flow(3, 3, VETH_IFINDEX, 0, 1 * GBIT), /* another interface: no conflict */
		};

		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		assert_int_equal(p->n_decisions, 3);
		assert_true(decision_of(p, 0)->steer_cpu >= 0);
		assert_int_equal(decision_of(p, 1)->steer_cpu, -1);
		assert_non_null(strstr(decision_of(p, 1)->reason, "conflicted"));
		assert_true(decision_of(p, 2)->steer_cpu >= 0);
		assert_int_equal(p->n_settings, 8 + 1);
	}

	/* Equal rates: the lower id wins, whatever the array order. */
	for (unsigned order = 0; order < 2; order++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[2];

		fl[order] = make_flow(7, 2, ETH0_IFINDEX, 0, 5 * GBIT);
		fl[1 - order] = make_flow(8, 4, ETH0_IFINDEX, 0, 5 * GBIT);
		p = compute(t, &f.inv, fl, 2, &policy);
		assert_true(decision_of(p, order)->steer_cpu >= 0);
		assert_int_equal(decision_of(p, 1 - order)->steer_cpu, -1);
	}
}

/* Consumers on both packages: distinct peers, never a consumer's core. */
static void test_spread_by_load(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct caad_cpumask steered, consumer_cores;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 8, 1);

	/* Three consumers per package (one on an odd sibling), each on its queue. */
	struct caad_flow fl[] = {
		make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT),  make_flow(2, 1, ETH0_IFINDEX, 1, 8 * GBIT),
		make_flow(3, 14, ETH0_IFINDEX, 2, 7 * GBIT), make_flow(4, 3, ETH0_IFINDEX, 3, 6 * GBIT),
		make_flow(5, 4, ETH0_IFINDEX, 4, 5 * GBIT),  make_flow(6, 17, ETH0_IFINDEX, 5, 4 * GBIT),
	};
	p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
	assert_int_equal(p->n_decisions, ARRAY_SIZE(fl));

	caad_cpumask_zero(&consumer_cores);
	for (size_t i = 0; i < ARRAY_SIZE(fl); i++)
		caad_cpumask_or(&consumer_cores, &consumer_cores, &t->cores[t->cpus[fl[i].consumer_cpu].core].cpus);

	caad_cpumask_zero(&steered);
	for (size_t i = 0; i < ARRAY_SIZE(fl); i++) {
		const struct caad_decision *d = decision_of(p, i);
		unsigned c = (unsigned)fl[i].consumer_cpu;

		assert_non_null(d);
		assert_true(d->steer_cpu >= 0);
		assert_false(caad_cpumask_test(&steered, (unsigned)d->steer_cpu)); /* distinct */
		caad_cpumask_set(&steered, (unsigned)d->steer_cpu);
		assert_false(caad_cpumask_test(&consumer_cores, (unsigned)d->steer_cpu));
		assert_int_not_equal(d->steer_cpu, (int)((c + 12) % 24));
		assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_int_equal(t->cpus[d->steer_cpu].llc, t->cpus[c].llc);

		const struct caad_setting *irq = setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, (unsigned)fl[i].rx_queue);
		assert_non_null(irq);
		struct caad_cpumask want = single((unsigned)d->steer_cpu);
		assert_mask_equal(&irq->cpus, &want);
	}
	/* Distinct cores too, not just distinct PUs. */
	for (size_t i = 0; i < ARRAY_SIZE(fl); i++)
		for (size_t j = i + 1; j < ARRAY_SIZE(fl); j++)
			assert_same_core(t, (unsigned)decision_of(p, i)->steer_cpu,
			                 (unsigned)decision_of(p, j)->steer_cpu, false);
}

/* More heavy flows than free peer cores: load is spread evenly over them. */
static void test_spread_more_flows_than_peers(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct caad_flow fl[8];
	unsigned count[24] = { 0 };
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 8, 1);

	/* Consumers on cores 0, 2, 4 and 6 of package 0 (two flows each, on
	 * distinct queues): the free peer cores are 8 and 10. */
	for (unsigned i = 0; i < ARRAY_SIZE(fl); i++)
		fl[i] = make_flow(i + 1, (int)(2 * (i % 4)), ETH0_IFINDEX, (int)i, 3 * GBIT);
	p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
	assert_int_equal(p->n_decisions, ARRAY_SIZE(fl));
	for (unsigned i = 0; i < ARRAY_SIZE(fl); i++) {
		int s = decision_of(p, i)->steer_cpu;

		assert_true(s == 8 || s == 10 || s == 20 || s == 22);
		count[t->cpus[s].core == t->cpus[8].core ? 8 : 10]++;
	}
	assert_int_equal(count[8], 4);
	assert_int_equal(count[10], 4);
}

static void test_banned(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	fake_inv_init(&f, 4, 1);

	/* Banning the least loaded peer moves the choice to another. */
	for (unsigned c = 0; c < 24; c++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, (int)c, ETH0_IFINDEX, 0, 10 * GBIT);
		int first;

		caad_policy_init(&policy);
		p = compute(t, &f.inv, &fl, 1, &policy);
		first = p->decisions[0].steer_cpu;
		assert_true(first >= 0);
		caad_plan_free(TAKE_PTR(p));

		caad_cpumask_set(&policy.banned, (unsigned)first);
		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_true(p->decisions[0].steer_cpu >= 0);
		assert_int_not_equal(p->decisions[0].steer_cpu, first);
		assert_false(caad_cpumask_test(&policy.banned, (unsigned)p->decisions[0].steer_cpu));
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		for (size_t i = 0; i < p->n_settings; i++)
			CAAD_CPUMASK_FOREACH(cpu, &p->settings[i].cpus)
				assert_false(caad_cpumask_test(&policy.banned, (unsigned)cpu));
	}
}

/* All peer cores of the LLC banned: a core in another LLC of the package. */
static void test_banned_llc_falls_back_to_package(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:2 l3:2 core:4 pu:2");
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct caad_cpumask peers;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	/* Ban every other core of CPU 0's L3, all their threads. */
	assert_int_equal(caad_topology_llc_peers(t, 0, &peers), 3);
	CAAD_CPUMASK_FOREACH(cpu, &peers)
		caad_cpumask_or(&policy.banned, &policy.banned, &t->cores[t->cpus[cpu].core].cpus);

	struct caad_flow fl = make_flow(1, 0, ETH0_IFINDEX, 0, 10 * GBIT);
	p = compute(t, &f.inv, &fl, 1, &policy);
	int s = p->decisions[0].steer_cpu;
	assert_true(s >= 0);
	assert_false(caad_cpumask_test(&policy.banned, (unsigned)s));
	assert_int_equal(t->cpus[s].package, t->cpus[0].package);
	assert_int_not_equal(t->cpus[s].llc, t->cpus[0].llc);
	assert_int_equal(p->decisions[0].relation, CAAD_RELATION_SAME_PACKAGE_OTHER_LLC);
	assert_non_null(strstr(p->decisions[0].reason, "another LLC"));
	assert_int_equal(p->n_settings, 2);
}

/*
 * Banning one thread of a peer core leaves its other thread: still a peer
 * core in the consumer's LLC, and a better choice than none.
 */
static void test_banned_thread_leaves_sibling(void **state)
{
	struct caad_topology *t = load_24em64t();
	struct caad_plan *p;
	struct caad_policy policy;
	struct fake_inv f;
	enum caad_relation relation;
	int s;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	/* Consumer on CPU 0; the first threads 2..10 of its peer cores are
	 * banned, their siblings 14..22 are not. */
	for (unsigned cpu = 2; cpu <= 10; cpu += 2)
		caad_cpumask_set(&policy.banned, cpu);
	struct caad_flow fl = make_flow(1, 0, ETH0_IFINDEX, 0, 10 * GBIT);
	p = compute(t, &f.inv, &fl, 1, &policy);
	assert_int_equal(p->n_decisions, 1);
	s = p->decisions[0].steer_cpu;
	relation = p->decisions[0].relation;
	/* freed before the assertions so a failure leaks nothing */
	caad_plan_free(p);
	caad_topology_free(t);

	assert_true(s >= 14 && s <= 22 && s % 2 == 0);
	assert_int_equal(relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
}

/* Nothing usable: unsteered, no settings; the policy's last resorts. */
static void test_nothing_usable(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	fake_inv_init(&f, 4, 1);
	struct caad_flow fl = make_flow(1, 6, ETH0_IFINDEX, 0, 10 * GBIT);

	/* Every CPU but the consumer's core banned. */
	caad_policy_init(&policy);
	for (unsigned cpu = 0; cpu < 24; cpu++)
		if (t->cpus[cpu].core != t->cpus[6].core)
			caad_cpumask_set(&policy.banned, cpu);
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);

		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->decisions[0].steer_cpu, -1);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_UNSTEERED);
		assert_non_null(strstr(p->decisions[0].reason, "no usable peer"));
		assert_int_equal(p->n_settings, 0);
	}

	/* AllowSMTSibling: the consumer's sibling, as a last resort. */
	policy.allow_smt_sibling = true;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);

		assert_int_equal(p->decisions[0].steer_cpu, 18);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_SMT_SIBLING);
		assert_int_equal(p->n_settings, 2);
	}
	/* ... and never the consumer's own CPU, not even then. */
	caad_cpumask_set(&policy.banned, 18);
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);

		assert_int_equal(p->decisions[0].steer_cpu, -1);
		assert_int_equal(p->n_settings, 0);
	}

	/* Package 0 fully banned but for the consumer's core: AllowOtherPackage
	 * takes a core of package 1, before the SMT sibling. */
	caad_policy_init(&policy);
	policy.allow_other_package = true;
	policy.allow_smt_sibling = true;
	for (unsigned cpu = 0; cpu < 24; cpu += 2)
		if (t->cpus[cpu].core != t->cpus[6].core)
			caad_cpumask_set(&policy.banned, cpu);
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);
		int s = p->decisions[0].steer_cpu;

		assert_true(s >= 0);
		assert_int_equal(s % 2, 1);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_OTHER_PACKAGE);
		assert_false(caad_cpumask_test(&policy.banned, (unsigned)s));
	}
	/* Without it: nothing (the sibling is not allowed either). */
	policy.allow_other_package = false;
	policy.allow_smt_sibling = false;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);

		assert_int_equal(p->decisions[0].steer_cpu, -1);
		assert_int_equal(p->n_settings, 0);
	}

	/* A consumer CPU the topology does not know. */
	caad_policy_init(&policy);
	for (int c = -1; c <= 24; c += 25) {
		struct caad_flow unknown = make_flow(1, c, ETH0_IFINDEX, 0, 10 * GBIT);
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &unknown, 1, &policy);

		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->decisions[0].steer_cpu, -1);
		assert_non_null(strstr(p->decisions[0].reason, "consumer CPU unknown"));
		assert_int_equal(p->n_settings, 0);
	}
}

/* Two CPUs, no caches (like the CI VM): each is the other's peer. */
static void test_two_cpu_vm(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:1 core:2 pu:1");
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 2, 2);
	assert_int_equal(t->n_cpus, 2);

	for (int c = 0; c < 2; c++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, c, VETH_IFINDEX, 1, 10 * GBIT);

		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->decisions[0].steer_cpu, 1 - c);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_int_equal(p->n_settings, 1);
		struct caad_cpumask want = single((unsigned)(1 - c));
		assert_mask_equal(&p->settings[0].cpus, &want);
		assert_int_equal(p->settings[0].queue, 1);
	}

	/* Both CPUs consume heavy flows: no free core, nothing steered. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, VETH_IFINDEX, 0, 10 * GBIT),
			make_flow(2, 1, VETH_IFINDEX, 1, 10 * GBIT),
		};

		p = compute(t, &f.inv, fl, 2, &policy);
		assert_int_equal(p->n_decisions, 2);
		assert_int_equal(p->decisions[0].steer_cpu, -1);
		assert_int_equal(p->decisions[1].steer_cpu, -1);
		assert_int_equal(p->n_settings, 0);
	}
}

/* ---- property test ----------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: fixed seeds, reproducible everywhere */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static unsigned rng_below(uint64_t *s, unsigned n)
{
	return (unsigned)(rng_next(s) % n);
}

static bool flow_is_heavy(const struct caad_flow *fl, const struct caad_inventory *inv, const struct caad_policy *p)
{
	return fl->rate_bps >= p->rate_threshold_bps && fl->ifindex > 0 &&
	       caad_inventory_find_ifindex(inv, fl->ifindex) != NULL;
}

/* Candidate tiers, best first, as the policy orders them. */
enum tier { TIER_LLC, TIER_PACKAGE, TIER_OTHER_PACKAGE, TIER_SIBLING, TIER_NONE };

static enum tier tier_of(enum caad_relation r)
{
	switch (r) {
	case CAAD_RELATION_PEER_CORE_SAME_LLC:
		return TIER_LLC;
	case CAAD_RELATION_SAME_PACKAGE_OTHER_LLC:
		return TIER_PACKAGE;
	case CAAD_RELATION_OTHER_PACKAGE:
		return TIER_OTHER_PACKAGE;
	case CAAD_RELATION_SMT_SIBLING:
		return TIER_SIBLING;
	default:
		return TIER_NONE;
	}
}

/*
 * The best tier in which consumer c has a CPU to steer to, computed from the
 * contract: usable, not banned, not a heavy consumer's core (but for the
 * consumer's own sibling in the last resort).
 */
static enum tier best_tier(const struct caad_topology *t, const struct caad_policy *policy,
                           const struct caad_cpumask *consumer_cores, unsigned c)
{
	enum tier best = TIER_NONE;

	CAAD_CPUMASK_FOREACH(x, &t->usable) {
		enum tier k = tier_of(caad_topology_relation(t, c, (unsigned)x));

		if (caad_cpumask_test(&policy->banned, (unsigned)x))
			continue;
		if (k == TIER_SIBLING ? !policy->allow_smt_sibling : caad_cpumask_test(consumer_cores, (unsigned)x))
			continue;
		if (k == TIER_OTHER_PACKAGE && !policy->allow_other_package)
			continue;
		if (k < best)
			best = k;
	}
	return best;
}


static void check_plan(const struct caad_topology *t, const struct caad_inventory *inv, const struct caad_flow *fl,
                       size_t n, const struct caad_policy *policy, const struct caad_plan *p, const char *what)
{
	struct caad_cpumask consumer_cores;
	size_t n_heavy = 0;

	caad_cpumask_zero(&consumer_cores);
	for (size_t i = 0; i < n; i++) {
		if (!flow_is_heavy(&fl[i], inv, policy))
			continue;
		n_heavy++;
		if (fl[i].consumer_cpu >= 0 && (unsigned)fl[i].consumer_cpu < t->n_cpus &&
		    t->cpus[fl[i].consumer_cpu].present) {
			const struct caad_cpuset_group *core = &t->cores[t->cpus[fl[i].consumer_cpu].core];

			caad_cpumask_or(&consumer_cores, &consumer_cores, &core->cpus);
		}
	}
	if (p->n_decisions != n_heavy)
		fail_msg("%s: %zu decisions for %zu heavy flows", what, p->n_decisions, n_heavy);

	for (size_t k = 0; k < p->n_decisions; k++) {
		const struct caad_decision *d = &p->decisions[k];
		const struct caad_flow *f;

		assert_true(d->flow < n);
		f = &fl[d->flow];
		assert_true(flow_is_heavy(f, inv, policy));
		assert_ptr_equal(decision_of(p, d->flow), d);
		assert_true(d->iface >= 0 && (size_t)d->iface < inv->n_ifaces);
		assert_int_equal(inv->ifaces[d->iface].ifindex, f->ifindex);
		assert_true(d->reason[0] != 0);

		/* Steered to the best tier there is; unsteered only when there is
		 * none (or for a reason that is not about CPUs). */
		if (d->steer_cpu >= 0 || strstr(d->reason, "no usable peer")) {
			unsigned c = (unsigned)f->consumer_cpu;
			enum tier got = d->steer_cpu >= 0 ? tier_of(d->relation) : TIER_NONE;
			enum tier want = best_tier(t, policy, &consumer_cores, c);

			if (got != want)
				fail_msg("%s: flow %zu (consumer %u) steered in tier %d, best is %d", what, d->flow, c,
				         got, want);
		}
		if (d->steer_cpu < 0) {
			assert_int_equal(d->relation, CAAD_RELATION_UNSTEERED);
			continue;
		}
		unsigned s = (unsigned)d->steer_cpu, c = (unsigned)f->consumer_cpu;
		if (!caad_cpumask_test(&t->usable, s))
			fail_msg("%s: flow %zu steered to unusable CPU %u", what, d->flow, s);
		if (caad_cpumask_test(&policy->banned, s))
			fail_msg("%s: flow %zu steered to banned CPU %u", what, d->flow, s);
		if (caad_cpumask_test(&consumer_cores, s) && !(policy->allow_smt_sibling &&
		                                               d->relation == CAAD_RELATION_SMT_SIBLING))
			fail_msg("%s: flow %zu steered to CPU %u, a consumer's core", what, d->flow, s);
		assert_int_not_equal(s, c);
		assert_int_equal(d->relation, caad_topology_relation(t, c, s));
		assert_int_not_equal(d->relation, CAAD_RELATION_SAME_CORE);
		if (!policy->allow_smt_sibling)
			assert_int_not_equal(d->relation, CAAD_RELATION_SMT_SIBLING);
		if (!policy->allow_other_package)
			assert_int_not_equal(d->relation, CAAD_RELATION_OTHER_PACKAGE);
	}

	for (size_t i = 0; i < p->n_settings; i++) {
		const struct caad_setting *st = &p->settings[i];
		struct caad_cpumask outside;
		const struct caad_iface *iface;
		const struct caad_queue *q = NULL;
		bool owned = false;

		assert_true(st->iface >= 0 && (size_t)st->iface < inv->n_ifaces);
		iface = &inv->ifaces[st->iface];
		for (unsigned j = 0; j < iface->n_rx; j++)
			if (iface->rx[j].index == st->queue)
				q = &iface->rx[j];
		assert_non_null(q);
		caad_cpumask_andnot(&outside, &st->cpus, &t->usable);
		if (!caad_cpumask_empty(&outside))
			fail_msg("%s: setting %zu has CPUs outside the usable set", what, i);
		if (st->kind == CAAD_SETTING_IRQ_AFFINITY) {
			assert_false(caad_cpumask_empty(&st->cpus));
			assert_int_equal(st->irq, q->irq);
			assert_false(q->irq_managed);
		} else {
			assert_int_equal(st->kind, CAAD_SETTING_RPS_CPUS);
			assert_true(q->has_rps);
		}
		CAAD_CPUMASK_FOREACH(cpu, &st->cpus)
			assert_false(caad_cpumask_test(&policy->banned, (unsigned)cpu));

		/* Each setting belongs to exactly one steered decision for its queue. */
		for (size_t k = 0; k < p->n_decisions; k++) {
			const struct caad_decision *d = &p->decisions[k];

			if (d->steer_cpu < 0 || d->iface != st->iface ||
			    (d->queue >= 0 && (unsigned)d->queue != st->queue))
				continue;
			bool mine = caad_cpumask_empty(&st->cpus) ||
			            (caad_cpumask_count(&st->cpus) == 1 &&
			             caad_cpumask_test(&st->cpus, (unsigned)d->steer_cpu));

			if (mine) {
				assert_false(owned);
				owned = true;
			}
		}
		if (!owned)
			fail_msg("%s: setting %zu (%s, queue %u) has no decision", what, i,
			         caad_setting_kind_to_string(st->kind), st->queue);
		for (size_t j = i + 1; j < p->n_settings; j++)
			assert_false(p->settings[j].kind == st->kind && p->settings[j].iface == st->iface &&
			             p->settings[j].queue == st->queue);
	}
}

static void random_inventory(uint64_t *rng, struct fake_inv *f)
{
	fake_inv_init(f, 1 + rng_below(rng, 8), rng_below(rng, 3));
	for (unsigned i = 0; i < f->ifaces[0].n_rx; i++) {
		f->eth0[i].irq_managed = rng_below(rng, 5) == 0;
		f->eth0[i].has_rps = rng_below(rng, 6) != 0;
	}
}

/* Ids are unique (the planner breaks rate ties by id). */
static void random_flows(uint64_t *rng, const struct caad_topology *t, struct caad_flow *fl, size_t n)
{
	static const int ifindexes[] = { ETH0_IFINDEX, ETH0_IFINDEX, ETH0_IFINDEX, VETH_IFINDEX, 0, 42 };

	for (size_t i = 0; i < n; i++) {
		int c = (int)rng_below(rng, t->n_cpus + 1) - (rng_below(rng, 10) == 0 ? 1 : 0);
		int q = (int)rng_below(rng, 10) - 1;
		uint64_t rate = rng_next(rng) % (20 * GBIT);

		fl[i] = make_flow(1000 + i * 7 + rng_below(rng, 7), c, ifindexes[rng_below(rng, ARRAY_SIZE(ifindexes))],
		                  q, rate);
	}
}

static void test_property_random(void **state)
{
	static const char *const xmls[] = {
		"24em64t-2n6c2t-pci.xml",
		"32em64t-2n8c2t-pci-normalio.xml",
		"16intel64-manyVFs.xml",
		"16em64t-4s2c2t-offlines.xml",
	};
	static const char *const synthetics[] = {
		"package:2 l3:2 core:4 pu:2",
		"package:1 l3:8 core:8 pu:2",
		"package:2 core:4 pu:2",
		"package:1 core:2 pu:1",
		"package:4 numa:2 l3:2 core:4 pu:1",
	};
	uint64_t rng = UINT64_C(0x5eed0fca4d);
	unsigned n_steered = 0, n_unsteered = 0;

	(void)state;
	for (size_t ti = 0; ti < ARRAY_SIZE(xmls) + ARRAY_SIZE(synthetics); ti++) {
		bool xml = ti < ARRAY_SIZE(xmls);
		const char *tname = xml ? xmls[ti] : synthetics[ti - ARRAY_SIZE(xmls)];
		_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;

		t = xml ? load_fixture(tname) : load_synthetic(tname);

		for (unsigned round = 0; round < 200; round++) {
			_cleanup_(caad_plan_freep) struct caad_plan *p = NULL, *p2 = NULL;
			struct caad_flow fl[24], shuffled[24];
			size_t n = rng_below(&rng, ARRAY_SIZE(fl) + 1), perm[24];
			struct caad_policy policy;
			struct fake_inv f;
			char what[128];

			snprintf(what, sizeof(what), "%s round %u", tname, round);
			caad_policy_init(&policy);
			policy.allow_smt_sibling = rng_below(&rng, 4) == 0;
			policy.allow_other_package = rng_below(&rng, 4) == 0;
			for (unsigned k = rng_below(&rng, 4); k > 0; k--)
				caad_cpumask_set(&policy.banned, rng_below(&rng, t->n_cpus));
			random_inventory(&rng, &f);
			random_flows(&rng, t, fl, n);

			p = compute(t, &f.inv, fl, n, &policy);
			check_plan(t, &f.inv, fl, n, &policy, p, what);
			for (size_t k = 0; k < p->n_decisions; k++) {
				if (p->decisions[k].steer_cpu >= 0)
					n_steered++;
				else
					n_unsteered++;
			}

			/* "Flows need not be sorted": the same flows in another
			 * order get the same decisions. */
			for (size_t i = 0; i < n; i++)
				perm[i] = i;
			for (size_t i = n; i > 1; i--) {
				size_t j = rng_below(&rng, (unsigned)i), tmp = perm[i - 1];
				perm[i - 1] = perm[j];
				perm[j] = tmp;
			}
			for (size_t i = 0; i < n; i++)
				shuffled[i] = fl[perm[i]];
			p2 = compute(t, &f.inv, shuffled, n, &policy);
			check_plan(t, &f.inv, shuffled, n, &policy, p2, what);
			assert_int_equal(p2->n_decisions, p->n_decisions);
			assert_int_equal(p2->n_settings, p->n_settings);
			for (size_t i = 0; i < n; i++) {
				const struct caad_decision *a = decision_of(p, perm[i]), *b = decision_of(p2, i);

				assert_int_equal(a == NULL, b == NULL);
				if (!a)
					continue;
				assert_int_equal(a->steer_cpu, b->steer_cpu);
				assert_int_equal(a->queue, b->queue);
				assert_int_equal(a->relation, b->relation);
			}
		}
	}
	/* The generator exercised both outcomes. */
	assert_true(n_steered > 100);
	assert_true(n_unsteered > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_defaults),
		cmocka_unit_test(test_no_flows),
		cmocka_unit_test(test_peer_core_every_consumer),
		cmocka_unit_test(test_setting_kinds),
		cmocka_unit_test(test_rate_threshold),
		cmocka_unit_test(test_unmanaged_ifindex),
		cmocka_unit_test(test_rx_queue_unknown),
		cmocka_unit_test(test_conflict_same_queue),
		cmocka_unit_test(test_spread_by_load),
		cmocka_unit_test(test_spread_more_flows_than_peers),
		cmocka_unit_test(test_banned),
		cmocka_unit_test(test_banned_llc_falls_back_to_package),
		cmocka_unit_test(test_banned_thread_leaves_sibling),
		cmocka_unit_test(test_nothing_usable),
		cmocka_unit_test(test_two_cpu_vm),
		cmocka_unit_test(test_property_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
