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
#include <sys/socket.h>

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
#define MBIT UINT64_C(1000000)

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

static void set_history(struct caad_flow *f, unsigned n, const int *h)
{
	assert_true(n <= CAAD_CONSUMER_HISTORY);
	for (unsigned i = 0; i < n; i++)
		f->consumer_history[i] = (uint16_t)h[i];
	f->n_consumer_history = (uint8_t)n;
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

/* The clock of the tests: an hour after boot, in ns. */
#define NOW (UINT64_C(3600) * UINT64_C(1000000000))
#define MSEC UINT64_C(1000000)

static struct caad_plan *compute_at(const struct caad_topology *t, const struct caad_inventory *inv,
                                    const struct caad_flow *flows, size_t n, const struct caad_policy *policy,
                                    const struct caad_plan *prev, uint64_t now)
{
	struct caad_plan *p = NULL;

	assert_int_equal(caad_plan_compute(t, inv, flows, n, policy, prev, now, &p), 0);
	assert_non_null(p);
	assert_true(p->n_decisions <= n);
	assert_int_equal(p->now_ns, now);
	for (size_t i = 0; i < p->n_decisions; i++) {
		assert_non_null(p->decisions[i].reason);
		assert_non_null(p->decisions[i].considered);
		assert_true(p->decisions[i].reason[0] != 0);
		/* no reason built from a missing part: a NULL's "(null)", or the
		 * "CPU -1" of a previous decision that steered nowhere */
		if (strstr(p->decisions[i].reason, "(null)") || strstr(p->decisions[i].reason, "CPU -1"))
			fail_msg("flow %llu: reason \"%s\"", (unsigned long long)p->decisions[i].flow_id, p->decisions[i].reason);
		assert_non_null(caad_plan_find(p, p->decisions[i].flow_id));
		assert_int_equal(caad_plan_find(p, p->decisions[i].flow_id)->flow_id, p->decisions[i].flow_id);
		if (i > 0) /* in the flows' order */
			assert_true(p->decisions[i].flow > p->decisions[i - 1].flow);
	}
	return p;
}

static struct caad_plan *compute(const struct caad_topology *t, const struct caad_inventory *inv,
                                 const struct caad_flow *flows, size_t n, const struct caad_policy *policy)
{
	return compute_at(t, inv, flows, n, policy, NULL, NOW);
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
/* How many rx queues of inv fire IRQ irq. */
static unsigned irq_users(const struct caad_inventory *inv, int irq)
{
	unsigned n = 0;

	for (size_t i = 0; i < inv->n_ifaces; i++)
		for (unsigned q = 0; q < inv->ifaces[i].n_rx; q++)
			n += inv->ifaces[i].rx[q].irq == irq;
	return n;
}

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

static const struct caad_setting *must(const struct caad_plan *p, enum caad_setting_kind kind, int iface,
                                       unsigned queue);

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
	assert_int_equal(p.min_age_ms, 500);
	assert_int_equal(p.dwell_ms, 2000);
	assert_int_equal(p.max_moves, 16);
	assert_false(p.allow_smt_sibling);
	assert_false(p.allow_other_package);
	assert_true(caad_cpumask_empty(&p.banned));

	assert_string_equal(caad_setting_kind_to_string(CAAD_SETTING_IRQ_AFFINITY), "irq-affinity");
	assert_string_equal(caad_setting_kind_to_string(CAAD_SETTING_RPS_CPUS), "rps-cpus");
	assert_string_equal(caad_setting_kind_to_string(CAAD_SETTING_KTHREAD_AFFINITY), "kthread-affinity");
	assert_string_equal(caad_setting_kind_to_string(CAAD_SETTING_RFS_FLOW_CNT), "rfs-flow-cnt");
	assert_string_equal(caad_setting_kind_to_string(CAAD_SETTING_RFS_TABLE), "rfs-table");
	assert_string_equal(caad_setting_kind_to_string(CAAD_SETTING_NTUPLE_RULE), "ntuple-rule");
	assert_int_equal(p.disabled_mechanisms, 1u << CAAD_SETTING_NTUPLE_RULE);
	assert_null(caad_setting_kind_to_string(_CAAD_SETTING_KIND_COUNT));

	caad_plan_free(NULL);
	assert_null(caad_plan_find(NULL, 1));
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

/* A decision keeps the interface's index in 16 bits: an inventory past
 * that is refused whole, before anything is read of it. */
static void test_too_many_interfaces(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:1 core:2 pu:1");
	struct caad_plan *p = NULL;
	struct caad_iface dummy = { 0 };
	struct caad_inventory inv = { .ifaces = &dummy, .n_ifaces = (size_t)INT16_MAX + 1 };
	struct caad_policy policy;

	(void)state;
	caad_policy_init(&policy);
	assert_int_equal(caad_plan_compute(t, &inv, NULL, 0, &policy, NULL, 0, &p), -E2BIG);
	assert_null(p);
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

	/* Two queues of one IRQ (fewer vectors than queues), each with a
	 * heavy flow whose consumers want different places: the IRQ cannot
	 * follow both, so it stays where it is and RPS steers each queue. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 4, ETH0_IFINDEX, 0, 10 * GBIT),
			make_flow(2, 16, ETH0_IFINDEX, 1, 9 * GBIT),
		};

		fake_inv_init(&f, 4, 1);
		f.eth0[1].irq = f.eth0[0].irq;
		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		assert_int_equal(p->n_decisions, 2);
		for (unsigned q = 0; q < 2; q++) {
			const struct caad_setting *rps = setting_of(p, CAAD_SETTING_RPS_CPUS, 0, q);

			assert_true(p->decisions[q].steer_cpu >= 0);
			assert_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, q));
			assert_non_null(rps);
			want = single((unsigned)p->decisions[q].steer_cpu);
			assert_mask_equal(&rps->cpus, &want);
		}
		/* the other queues keep an IRQ of their own */
		f.eth0[1].irq = ETH0_FIRST_IRQ + 1;
		fl[1].rx_queue = 2;
		caad_plan_free(p);
		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 0));
		assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 2));
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

	/* (a queue the inventory does not know: test_rx_queue_not_in_inventory) */

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

/*
 * A flow on an rx queue the inventory does not hold yet (ethtool -L 4 -> 16
 * before the queues are read again) is on no queue caad can set: it was
 * taken for one of unknown queue, and being the fastest it moved every
 * queue of the interface to its target, which steered it nowhere (rx-9's
 * IRQ is not one of them) and took rx-1 from its own flow. Now it gets no
 * slot and says why; rx-1's flow keeps its queue.
 */
static void test_rx_queue_not_in_inventory(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 0);
	struct caad_flow fl[] = {
		make_flow(1, 3, ETH0_IFINDEX, 9, 10 * GBIT),
		make_flow(2, 0, ETH0_IFINDEX, 1, 8 * GBIT),
	};

	p = compute(t, &f.inv, fl, 2, &policy);
	const struct caad_decision *d = decision_of(p, 0);
	assert_non_null(d);
	assert_int_equal(d->steer_cpu, -1);
	assert_int_equal(d->relation, CAAD_RELATION_UNSTEERED);
	assert_int_equal(d->queue, -1);
	assert_non_null(strstr(d->reason, "its rx queue 9 is not in the inventory yet"));

	d = decision_of(p, 1);
	assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_false(d->shares_queue);
	struct caad_cpumask want = single((unsigned)d->steer_cpu);
	assert_mask_equal(&must(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1)->cpus, &want);
	for (size_t i = 0; i < p->n_settings; i++)
		assert_int_equal(p->settings[i].queue, 1);
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
		fl[1 - order] = make_flow(8, 5, ETH0_IFINDEX, 0, 5 * GBIT);
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

	/* AllowSMTSibling: the consumer's sibling, as a last resort; and kept
	 * by the next plan (hysteresis), not taken for another consumer's core */
	policy.allow_smt_sibling = true;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);

		assert_int_equal(p->decisions[0].steer_cpu, 18);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_SMT_SIBLING);
		assert_int_equal(p->n_settings, 2);
		for (uint64_t later = 100; later <= 10000; later *= 100) {
			_cleanup_(caad_plan_freep) struct caad_plan *q =
				compute_at(t, &f.inv, &fl, 1, &policy, p, NOW + later * MSEC);

			assert_int_equal(q->decisions[0].steer_cpu, 18);
			assert_true(q->decisions[0].held);
			if (!strstr(q->decisions[0].reason, "(hysteresis)"))
				fail_msg("%s", q->decisions[0].reason);
		}
	}
	/* a flow that steered nowhere, placed now: a new placement, not a
	 * move (nor a forced one) from "CPU -1" */
	{
		struct caad_flow lost = make_flow(1, -1, ETH0_IFINDEX, 0, 10 * GBIT);
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &lost, 1, &policy);
		_cleanup_(caad_plan_freep) struct caad_plan *q =
			compute_at(t, &f.inv, &fl, 1, &policy, p, NOW + 100 * MSEC);

		assert_int_equal(p->decisions[0].steer_cpu, -1);
		assert_int_equal(q->decisions[0].steer_cpu, 18);
		assert_int_equal(q->n_forced, 0);
		assert_int_equal(q->n_moves, 0);
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


/* The closed loop's placement replaces the rules (even the consumer's own
 * CPU, and at once: no dwell, no bound); an unusable or banned one does not;
 * without it the flow goes back to a peer core. */
static void test_override(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:1 core:2 pu:1");
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL;
	struct caad_flow fl[] = { make_flow(5, 1, VETH_IFINDEX, 0, 10 * GBIT), make_flow(9, 1, VETH_IFINDEX, 1, 9 * GBIT) };
	struct caad_override o[] = { { .flow_id = 5, .cpu = 1, .why = "trial 1, round 2 of 6: same-core" },
		                     { .flow_id = 7, .cpu = 0, .why = "no such flow" } };
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.max_moves = 1;
	policy.dwell_ms = 60000;
	fake_inv_init(&f, 2, 2);

	p1 = compute_at(t, &f.inv, fl, 2, &policy, NULL, NOW);
	assert_int_equal(p1->decisions[0].steer_cpu, 0);
	assert_false(p1->decisions[0].closed_loop);

	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	p2 = compute_at(t, &f.inv, fl, 2, &policy, p1, NOW + MSEC);
	assert_int_equal(p2->decisions[0].steer_cpu, 1);
	assert_int_equal(p2->decisions[0].relation, CAAD_RELATION_SAME_CORE);
	assert_true(p2->decisions[0].closed_loop);
	assert_false(p2->decisions[1].closed_loop);
	assert_non_null(strstr(p2->decisions[0].reason, "closed-loop placement"));
	assert_non_null(strstr(p2->decisions[0].reason, "trial 1, round 2 of 6"));
	assert_int_equal(p2->n_forced, 1);
	/* the other flow keeps the rules */
	assert_int_equal(p2->decisions[1].steer_cpu, 0);
	/* rx-0 is processed on CPU 1 */
	bool found = false;
	for (size_t i = 0; i < p2->n_settings; i++)
		if (p2->settings[i].queue == 0) {
			struct caad_cpumask want = single(1);
			assert_mask_equal(&p2->settings[i].cpus, &want);
			found = true;
		}
	assert_true(found);

	/* banned: the rules decide (and move it off the consumer's CPU at once) */
	caad_cpumask_set(&policy.banned, 1);
	p3 = compute_at(t, &f.inv, fl, 2, &policy, p2, NOW + 2 * MSEC);
	assert_int_equal(p3->decisions[0].steer_cpu, 0);
	caad_cpumask_zero(&policy.banned);

	/* the override gone: back to the peer core, before any dwell time */
	policy.overrides = NULL;
	policy.n_overrides = 0;
	p4 = compute_at(t, &f.inv, fl, 2, &policy, p2, NOW + 3 * MSEC);
	assert_int_equal(p4->decisions[0].steer_cpu, 0);
	assert_int_equal(p4->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_false(p4->decisions[0].closed_loop);
}

/*
 * A decision says when its CPU is the closed loop's (closed_loop): placed
 * by an override, and after it, while the rules keep that CPU only for
 * DwellMSec=; not once they move it, nor where they keep it as theirs.
 */
static void test_override_marked(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:1 core:2 pu:2");
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL, *p5 = NULL;
	struct caad_flow fl[] = { make_flow(5, 0, VETH_IFINDEX, 0, 10 * GBIT) };
	struct caad_override o[] = { { .flow_id = 5, .cpu = 1, .why = "trial 1, round 1 of 2: smt-sibling" } };
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	assert_int_equal(t->cpus[0].core, t->cpus[1].core);
	assert_int_not_equal(t->cpus[0].core, t->cpus[2].core);
	caad_policy_init(&policy);
	policy.allow_smt_sibling = true;
	policy.dwell_ms = 60000;
	fake_inv_init(&f, 1, 2);

	p1 = compute_at(t, &f.inv, fl, 1, &policy, NULL, NOW);
	assert_int_equal(p1->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_false(p1->decisions[0].closed_loop);

	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	p2 = compute_at(t, &f.inv, fl, 1, &policy, p1, NOW + MSEC);
	assert_int_equal(p2->decisions[0].steer_cpu, 1);
	assert_true(p2->decisions[0].closed_loop);

	/* the override gone: the sibling held for DwellMSec= is still the
	 * closed loop's placement, not the rules' */
	policy.overrides = NULL;
	policy.n_overrides = 0;
	p3 = compute_at(t, &f.inv, fl, 1, &policy, p2, NOW + 2 * MSEC);
	assert_int_equal(p3->decisions[0].steer_cpu, 1);
	assert_true(p3->decisions[0].held);
	assert_true(p3->decisions[0].closed_loop);

	/* ... and once the rules move it, theirs */
	p4 = compute_at(t, &f.inv, fl, 1, &policy, p3, NOW + 61000 * MSEC);
	assert_int_equal(p4->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_false(p4->decisions[0].closed_loop);

	/* a sibling the rules would keep as theirs (no other core free: a
	 * heavy reader on it) is theirs at once */
	struct caad_flow fl2[] = { fl[0], make_flow(9, 2, VETH_IFINDEX, 1, 9 * GBIT) };
	_cleanup_(caad_plan_freep) struct caad_plan *q = NULL;
	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	q = compute_at(t, &f.inv, fl2, 2, &policy, NULL, NOW);
	assert_int_equal(caad_plan_find(q, 5)->steer_cpu, 1);
	assert_true(caad_plan_find(q, 5)->closed_loop);
	policy.overrides = NULL;
	policy.n_overrides = 0;
	p5 = compute_at(t, &f.inv, fl2, 2, &policy, q, NOW + MSEC);
	assert_int_equal(caad_plan_find(p5, 5)->steer_cpu, 1);
	assert_false(caad_plan_find(p5, 5)->closed_loop);
}


/*
 * A closed-loop placement on another heavy flow's reader's CPU (a trial's
 * smt-sibling turn, a verdict for the application) is not taken: the rules
 * place the flow, as their own sibling tier would not go there either, and
 * the reason says so. A previous target there, the closed loop's, is left
 * at once (not held for DwellMSec= as a sibling a reader came to). Where no
 * other reader is, the placement stands.
 */
static void test_override_reader(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL, *p3 = NULL;
	struct caad_flow fl[] = { make_flow(5, 2, ETH0_IFINDEX, 0, 10 * GBIT), make_flow(9, 14, ETH0_IFINDEX, 1, MBIT) };
	struct caad_override o[] = { { .flow_id = 5, .cpu = 14, .why = "trial 1, round 1 of 10: smt-sibling" } };
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.allow_smt_sibling = true;
	policy.dwell_ms = 60000;
	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	fake_inv_init(&f, 2, 0);

	/* flow 9 light: nobody else reads on 14 */
	p1 = compute_at(t, &f.inv, fl, 2, &policy, NULL, NOW);
	assert_int_equal(p1->decisions[0].steer_cpu, 14);
	assert_non_null(strstr(p1->decisions[0].reason, "closed-loop placement"));

	/* flow 9 heavy, its reader on 14 */
	fl[1].rate_bps = 9 * GBIT;
	p2 = compute_at(t, &f.inv, fl, 2, &policy, p1, NOW + MSEC);
	const struct caad_decision *d = caad_plan_find(p2, 5);
	assert_non_null(d);
	if (d->steer_cpu == 14)
		fail_msg("steered onto flow 9's reader: %s", d->reason);
	assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(p2->n_forced, 1);
	if (!strstr(d->reason, "not the closed loop's CPU 14 (trial 1, round 1 of 10: smt-sibling): another heavy "
	                       "flow's consumer reads there"))
		fail_msg("%s", d->reason);

	/* no previous plan: the same */
	p3 = compute_at(t, &f.inv, fl, 2, &policy, NULL, NOW);
	d = caad_plan_find(p3, 5);
	assert_int_not_equal(d->steer_cpu, 14);
	assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_non_null(strstr(d->reason, "another heavy flow's consumer reads there"));
}

/* caad's own CPUs: off the heavy readers and the steered CPUs; off the
 * readers alone where that leaves none; as started where even that does. */
static void test_own_cpus(void **state)
{
	struct caad_cpumask base, got, want;
	struct caad_flow flows[3] = {
		{ .id = 1, .consumer_cpu = 1, .rate_bps = 5000000000ull },
		{ .id = 2, .consumer_cpu = 2, .rate_bps = 100000000ull }, /* light: not kept off */
		{ .id = 3, .consumer_cpu = -1, .rate_bps = 5000000000ull }, /* reader unknown */
	};
	struct caad_decision dec = { .flow_id = 1, .steer_cpu = 0 };
	struct caad_plan plan = { .decisions = &dec, .n_decisions = 1 };

	assert_int_equal(caad_cpumask_parse_list("0-3", &base), 0);
	caad_plan_own_cpus(&base, flows, 3, 1000000000ull, &plan, &got);
	assert_int_equal(caad_cpumask_parse_list("2-3", &want), 0);
	assert_true(caad_cpumask_equal(&got, &want));
	/* no plan (Mode=observe): the readers only */
	caad_plan_own_cpus(&base, flows, 3, 1000000000ull, NULL, &got);
	assert_int_equal(caad_cpumask_parse_list("0,2-3", &want), 0);
	assert_true(caad_cpumask_equal(&got, &want));
	/* 2 CPUs: the reader on 1, steered to 0: off the reader */
	assert_int_equal(caad_cpumask_parse_list("0-1", &base), 0);
	caad_plan_own_cpus(&base, flows, 3, 1000000000ull, &plan, &got);
	assert_int_equal(caad_cpumask_parse_list("0", &want), 0);
	assert_true(caad_cpumask_equal(&got, &want));
	/* started on the reader's CPU alone: there */
	assert_int_equal(caad_cpumask_parse_list("1", &base), 0);
	caad_plan_own_cpus(&base, flows, 3, 1000000000ull, &plan, &got);
	assert_true(caad_cpumask_equal(&got, &base));
	/* nothing heavy: as started */
	assert_int_equal(caad_cpumask_parse_list("0-3", &base), 0);
	caad_plan_own_cpus(&base, flows, 3, 10000000000ull, NULL, &got);
	assert_true(caad_cpumask_equal(&got, &base));
}

/*
 * The readers caad_plan_count_readers() counts are those the planner keeps
 * a closed-loop placement off: heavy flows' consumers, on every CPU of
 * their windows; a light flow's are none.
 */
static void test_count_readers(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_flow fl[] = { make_flow(5, 2, ETH0_IFINDEX, 0, 10 * GBIT), make_flow(9, 14, ETH0_IFINDEX, 1, 9 * GBIT),
		                  make_flow(11, 4, ETH0_IFINDEX, 1, MBIT) };
	struct caad_override o[] = { { .flow_id = 5, .cpu = 14, .why = "trial 1, round 1 of 10: smt-sibling" } };
	uint8_t counts[24];
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 2, 0);
	set_history(&fl[1], 1, (const int[]){ 16 });

	caad_plan_count_readers(t, fl, ARRAY_SIZE(fl), &policy, NULL, NOW, counts);
	for (unsigned cpu = 0; cpu < 24; cpu++)
		assert_int_equal(counts[cpu], cpu == 2 || cpu == 14 || cpu == 16);
	assert_true(caad_plan_reads_on(t, &fl[1], &policy, NULL, NOW, 14));
	assert_true(caad_plan_reads_on(t, &fl[1], &policy, NULL, NOW, 16));
	assert_false(caad_plan_reads_on(t, &fl[0], &policy, NULL, NOW, 14));
	assert_false(caad_plan_reads_on(t, &fl[2], &policy, NULL, NOW, 4));

	/* and the planner refuses flow 5 the CPU counted there */
	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	p = compute_at(t, &f.inv, fl, ARRAY_SIZE(fl), &policy, NULL, NOW);
	assert_int_not_equal(caad_plan_find(p, 5)->steer_cpu, 14);

	/* flow 9 light: nobody reads on 14 */
	fl[1].rate_bps = MBIT;
	caad_plan_count_readers(t, fl, ARRAY_SIZE(fl), &policy, NULL, NOW, counts);
	assert_int_equal(counts[14], 0);
	assert_int_equal(counts[2], 1);
}

/*
 * The closed loop's hands-off placement (CAAD_OVERRIDE_HOST): the flow is
 * not steered, bids for no queue, and its queue's settings go back to the
 * host's (restores, IRQ before RPS) where no other flow's steering takes
 * it; a flow of unknown queue gives back every queue no one owns; another
 * heavy flow on the same queue owns and steers it.
 */
static void test_override_host(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:1 core:4 pu:1");
	struct caad_flow fl[] = { make_flow(5, 1, ETH0_IFINDEX, 0, 10 * GBIT), make_flow(9, 2, VETH_IFINDEX, 1, 9 * GBIT) };
	struct caad_override o[] = { { .flow_id = 5, .cpu = CAAD_OVERRIDE_HOST, .why = "trial 1, round 2 of 6: host-steering" } };
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	fake_inv_init(&f, 2, 2);
	f.eth0[0].has_rps_flow_cnt = true;

	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);
		const struct caad_decision *d = caad_plan_find(p, 5);
		const struct caad_setting *s;

		assert_non_null(d);
		assert_true(d->host);
		assert_int_equal(d->steer_cpu, -1);
		assert_int_equal(d->relation, CAAD_RELATION_HOST_STEERING);
		assert_int_equal(d->queue, 0);
		assert_non_null(strstr(d->reason, "left to the host's own steering"));
		assert_non_null(strstr(d->reason, "trial 1, round 2 of 6: host-steering"));
		/* eth0 rx-0: its IRQ, RPS and RFS table go back, in that order, nothing else there */
		size_t first = p->n_settings;
		unsigned n = 0;
		for (size_t i = 0; i < p->n_settings; i++)
			if (p->settings[i].iface == 0 && p->settings[i].queue == 0) {
				s = &p->settings[i];
				assert_true(s->restore);
				assert_true(caad_cpumask_empty(&s->cpus));
				assert_int_equal(s->value, 0);
				assert_non_null(strstr(s->reason, "the host's own value goes back"));
				first = MIN(first, i);
				n++;
			}
		assert_int_equal(n, 3);
		assert_int_equal(p->settings[first].kind, CAAD_SETTING_IRQ_AFFINITY);
		assert_int_equal(p->settings[first].irq, ETH0_FIRST_IRQ);
		assert_int_equal(p->settings[first + 1].kind, CAAD_SETTING_RPS_CPUS);
		assert_int_equal(p->settings[first + 2].kind, CAAD_SETTING_RFS_FLOW_CNT);
		/* eth0 rx-1 is nobody's: left as it is */
		assert_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1));
		assert_null(setting_of(p, CAAD_SETTING_RPS_CPUS, 0, 1));
		/* the other flow keeps the rules: a peer core, not restored */
		d = caad_plan_find(p, 9);
		assert_false(d->host);
		assert_true(d->steer_cpu >= 0);
		assert_false(must(p, CAAD_SETTING_RPS_CPUS, 1, 1)->restore);
	}

	/* a faster flow on the same queue owns it: steered for that one, nothing given back */
	{
		struct caad_flow more[] = { fl[0], make_flow(7, 3, ETH0_IFINDEX, 0, 20 * GBIT) };
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, more, 2, &policy);

		assert_true(caad_plan_find(p, 5)->host);
		assert_true(caad_plan_find(p, 7)->steer_cpu >= 0);
		for (size_t i = 0; i < p->n_settings; i++)
			assert_false(p->settings[i].restore);
		assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 0));
	}

	/* a slower flow on its queue yields: left alone, the queue given back all the same */
	{
		struct caad_flow more[] = { fl[0], make_flow(7, 3, ETH0_IFINDEX, 0, 2 * GBIT) };
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, more, 2, &policy);
		const struct caad_decision *d = caad_plan_find(p, 7);

		assert_true(caad_plan_find(p, 5)->host);
		assert_int_equal(d->steer_cpu, -1);
		assert_false(d->host);
		assert_int_equal(d->relation, CAAD_RELATION_UNSTEERED);
		assert_non_null(strstr(d->reason, "left to the host's own steering for a faster flow"));
		assert_true(must(p, CAAD_SETTING_IRQ_AFFINITY, 0, 0)->restore);
		assert_true(must(p, CAAD_SETTING_RPS_CPUS, 0, 0)->restore);
		/* ... also a flow of unknown queue, which would take every queue */
		more[1].rx_queue = -1;
		_cleanup_(caad_plan_freep) struct caad_plan *p2 = compute(t, &f.inv, more, 2, &policy);
		assert_int_equal(caad_plan_find(p2, 7)->steer_cpu, -1);
		assert_true(must(p2, CAAD_SETTING_RPS_CPUS, 0, 0)->restore);
		assert_null(setting_of(p2, CAAD_SETTING_RPS_CPUS, 0, 1));
	}

	/* left to the host, it stays heavy down to half of RateThreshold=, as a steered flow */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p1 = compute_at(t, &f.inv, fl, 2, &policy, NULL, NOW);
		struct caad_flow slow[] = { fl[0], fl[1] };
		slow[0].rate_bps = policy.rate_threshold_bps * 7 / 10;
		_cleanup_(caad_plan_freep) struct caad_plan *p2 = compute_at(t, &f.inv, slow, 2, &policy, p1, NOW + MSEC);
		const struct caad_decision *d = caad_plan_find(p2, 5);
		assert_non_null(d);
		assert_true(d->host);
		/* not so without the previous plan */
		_cleanup_(caad_plan_freep) struct caad_plan *p3 = compute_at(t, &f.inv, slow, 2, &policy, NULL, NOW + MSEC);
		assert_null(caad_plan_find(p3, 5));
	}

	/* its queue unknown: every queue of eth0 no one owns goes back */
	{
		struct caad_flow one = fl[0];
		one.rx_queue = -1;
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &one, 1, &policy);

		assert_true(caad_plan_find(p, 5)->host);
		assert_true(must(p, CAAD_SETTING_IRQ_AFFINITY, 0, 0)->restore);
		assert_true(must(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1)->restore);
		assert_true(must(p, CAAD_SETTING_RPS_CPUS, 0, 1)->restore);
		assert_null(setting_of(p, CAAD_SETTING_RPS_CPUS, 1, 0));
	}
}


/* A consumer that just moved on a 2-CPU host: its window (both CPUs) would
 * leave no peer, so it is planned for its latest CPU at once. */
static void test_window_fills_llc(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:1 core:2 pu:1");
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_flow fl = make_flow(1, 0, VETH_IFINDEX, 0, 10 * GBIT);
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 2, 2);
	fl.consumer_history[0] = 1;
	fl.n_consumer_history = 1;
	p = compute(t, &f.inv, &fl, 1, &policy);
	assert_int_equal(p->decisions[0].consumer_cpu, 0);
	assert_int_equal(p->decisions[0].steer_cpu, 1);
	assert_null(strstr(p->decisions[0].reason, "lately also"));

	/* LLCs with one usable core (the other isolated): the window always
	 * covers its LLC, but the package has room: no target on a CPU the
	 * consumer keeps coming back to (CPU 0, read on in 3 of 4 scans) */
	{
		_cleanup_(caad_topology_freep) struct caad_topology *t4 = load_synthetic("package:1 l3:4 core:2 pu:1");
		_cleanup_(caad_plan_freep) struct caad_plan *q = NULL;
		struct caad_flow hop = make_flow(1, 2, VETH_IFINDEX, 0, 10 * GBIT);
		static const int back[] = { 0, 0, 0 };

		assert_int_equal(t4->n_llcs, 4);
		for (unsigned c = 1; c <= 3; c += 2) {
			caad_cpumask_clear(&t4->usable, c);
			t4->cpus[c].usable = false;
		}
		set_history(&hop, 3, back);
		q = compute(t4, &f.inv, &hop, 1, &policy);
		if (q->decisions[0].steer_cpu < 4)
			fail_msg("steered to CPU %d: %s", q->decisions[0].steer_cpu, q->decisions[0].reason);
		/* with the package's other LLCs unusable too: its latest CPU
		 * alone, as above (else no target at all) */
		for (unsigned c = 4; c < 8; c++) {
			caad_cpumask_clear(&t4->usable, c);
			t4->cpus[c].usable = false;
		}
		caad_plan_free(q);
		q = compute(t4, &f.inv, &hop, 1, &policy);
		assert_int_equal(q->decisions[0].steer_cpu, 0);
	}
}

/* ---- the issue's cases and the rules one by one ------------------------- */

/* Ten heavy flows, five per package, consumed on two cores of each package
 * (one CPU reads two of them): ten distinct peers, none a consumer's core,
 * the free cores filled before their second threads. */
static void test_ten_flows_distinct_peers(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	static const int consumers[10] = { 0, 12, 2, 14, 0, 1, 13, 3, 15, 1 };
	struct caad_cpumask steered, consumer_cores, steered_cores;
	struct caad_flow fl[10];
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 10, 1);
	for (unsigned i = 0; i < 10; i++)
		fl[i] = make_flow(i + 1, consumers[i], ETH0_IFINDEX, (int)i, (20 - i) * GBIT);

	p = compute(t, &f.inv, fl, 10, &policy);
	assert_int_equal(p->n_decisions, 10);
	caad_cpumask_zero(&consumer_cores);
	for (unsigned i = 0; i < 10; i++)
		caad_cpumask_or(&consumer_cores, &consumer_cores, &t->cores[t->cpus[consumers[i]].core].cpus);
	caad_cpumask_zero(&steered);
	caad_cpumask_zero(&steered_cores);
	for (unsigned i = 0; i < 10; i++) {
		const struct caad_decision *d = decision_of(p, i);

		assert_non_null(d);
		assert_true(d->steer_cpu >= 0);
		assert_false(caad_cpumask_test(&steered, (unsigned)d->steer_cpu));
		caad_cpumask_set(&steered, (unsigned)d->steer_cpu);
		caad_cpumask_set(&steered_cores, (unsigned)t->cores[t->cpus[d->steer_cpu].core].os_index);
		assert_false(caad_cpumask_test(&consumer_cores, (unsigned)d->steer_cpu));
		assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_int_equal(t->cpus[d->steer_cpu].package, t->cpus[consumers[i]].package);
		assert_false(d->shares_queue);
		assert_false(d->held);
		assert_int_equal(d->since_ns, NOW);
	}
	/* 4 free cores per package, 5 flows: every free core is used. */
	assert_int_equal(caad_cpumask_count(&steered_cores), 8);
	assert_int_equal(p->n_settings, 20);
}

/* A banned CPU list, for every consumer CPU: never a banned CPU. */
static void test_banned_list(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	assert_int_equal(caad_cpumask_parse_list("2-5,14-17,9,21", &policy.banned), 0);
	fake_inv_init(&f, 4, 1);

	for (unsigned c = 0; c < 24; c++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, (int)c, ETH0_IFINDEX, 0, 10 * GBIT);
		int s;

		p = compute(t, &f.inv, &fl, 1, &policy);
		s = p->decisions[0].steer_cpu;
		assert_true(s >= 0);
		assert_false(caad_cpumask_test(&policy.banned, (unsigned)s));
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		for (size_t i = 0; i < p->n_settings; i++)
			CAAD_CPUMASK_FOREACH(cpu, &p->settings[i].cpus)
				assert_false(caad_cpumask_test(&policy.banned, (unsigned)cpu));
		/* the considered candidates name the banned cores (both threads banned) */
		if (t->cpus[c].package == 0 && t->cpus[c].core != t->cpus[2].core && t->cpus[c].core != t->cpus[4].core)
			assert_non_null(strstr(p->decisions[0].considered, "2 banned"));
	}
}

/* Several heavy flows on one queue whose consumers share an LLC: the
 * queue's CPU serves them all; one in another package is conflicted. */
static void test_shared_queue(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	struct caad_flow fl[] = {
		make_flow(1, 4, ETH0_IFINDEX, 2, 3 * GBIT),
		make_flow(2, 2, ETH0_IFINDEX, 2, 9 * GBIT), /* the owner */
		make_flow(3, 1, ETH0_IFINDEX, 2, 5 * GBIT), /* package 1 */
	};
	p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
	assert_int_equal(p->n_decisions, 3);
	const struct caad_decision *owner = decision_of(p, 1), *shared = decision_of(p, 0), *lost = decision_of(p, 2);

	assert_true(owner->steer_cpu >= 0);
	assert_false(owner->shares_queue);
	/* neither consumer's core */
	assert_int_not_equal(t->cpus[owner->steer_cpu].core, t->cpus[2].core);
	assert_int_not_equal(t->cpus[owner->steer_cpu].core, t->cpus[4].core);
	assert_int_equal(shared->steer_cpu, owner->steer_cpu);
	assert_true(shared->shares_queue);
	assert_int_equal(shared->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_non_null(strstr(shared->reason, "shares eth0 rx-2"));
	assert_non_null(strstr(shared->reason, "iperf3-2"));
	assert_int_equal(lost->steer_cpu, -1);
	assert_int_equal(lost->relation, CAAD_RELATION_UNSTEERED);
	assert_non_null(strstr(lost->reason, "conflicted"));
	assert_non_null(strstr(lost->reason, "iperf3-2"));
	/* the owner's settings only */
	assert_int_equal(p->n_settings, 2);
	assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 2));

	/* All three are processed on the queue's CPU, steered with its owner
	 * or conflicted: an owner placed after it sees their 17 Gbit/s there. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p2 = NULL;
		struct caad_flow fl2[ARRAY_SIZE(fl) + 1];
		char busy[64];

		memcpy(fl2, fl, sizeof(fl));
		fl2[3] = make_flow(4, 6, ETH0_IFINDEX, 1, 2 * GBIT);
		p2 = compute(t, &f.inv, fl2, ARRAY_SIZE(fl2), &policy);
		owner = decision_of(p2, 1);
		assert_true(decision_of(p2, 3)->steer_cpu >= 0);
		assert_int_not_equal(decision_of(p2, 3)->steer_cpu, owner->steer_cpu);
		/* named by its core's least loaded CPU: the owner's CPU's SMT sibling */
		int sibling = -1;
		CAAD_CPUMASK_FOREACH(cpu, &t->cores[t->cpus[owner->steer_cpu].core].cpus)
			if (cpu != owner->steer_cpu)
				sibling = cpu;
		snprintf(busy, sizeof(busy), "%d busier (17.0 Gbit/s steered to its core)", sibling);
		if (!strstr(decision_of(p2, 3)->considered, busy))
			fail_msg("want \"%s\" in: %s", busy, decision_of(p2, 3)->considered);
	}
}

/* The owner of a queue cannot be placed: the next flow of the queue gets it. */
static void test_owner_without_peer(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	/* package 0 banned: CPU 0's consumers have nowhere to go */
	for (unsigned cpu = 0; cpu < 24; cpu += 2)
		caad_cpumask_set(&policy.banned, cpu);
	fake_inv_init(&f, 4, 1);

	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, 1, 9 * GBIT),
			make_flow(2, 0, ETH0_IFINDEX, 1, 8 * GBIT),
			make_flow(3, 3, ETH0_IFINDEX, 1, 2 * GBIT),
		};

		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		assert_int_equal(decision_of(p, 0)->steer_cpu, -1);
		assert_non_null(strstr(decision_of(p, 0)->reason, "no usable peer"));
		assert_int_equal(decision_of(p, 1)->steer_cpu, -1);
		assert_non_null(strstr(decision_of(p, 1)->reason, "no usable peer"));
		int s = decision_of(p, 2)->steer_cpu;
		assert_true(s >= 0);
		assert_int_equal(t->cpus[s].package, t->cpus[3].package);
		assert_false(decision_of(p, 2)->shares_queue);
		const struct caad_setting *irq = setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1);
		assert_non_null(irq);
		assert_true(caad_cpumask_test(&irq->cpus, (unsigned)s));
	}

	/* Same for a flow of unknown queue that owned them all. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, -1, 9 * GBIT),
			make_flow(2, 3, ETH0_IFINDEX, 3, 2 * GBIT),
		};

		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		assert_int_equal(decision_of(p, 0)->steer_cpu, -1);
		assert_true(decision_of(p, 1)->steer_cpu >= 0);
		assert_int_equal(p->n_settings, 2);
		assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 3));
	}

	/* The fastest flow of unknown queue took every queue and cannot be
	 * placed: the next flow of unknown queue takes them only if it too is
	 * faster than each queue's fastest; here rx-3's flow is, and gets its
	 * queue, and the slower flow of unknown queue is not given them all. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, -1, 9 * GBIT),
			make_flow(2, 5, ETH0_IFINDEX, -1, 2 * GBIT),
			make_flow(3, 3, ETH0_IFINDEX, 3, 4 * GBIT),
		};

		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		assert_int_equal(decision_of(p, 0)->steer_cpu, -1);
		assert_true(decision_of(p, 2)->steer_cpu >= 0);
		assert_false(decision_of(p, 2)->shares_queue);
		assert_int_equal(decision_of(p, 1)->steer_cpu, -1);
		assert_non_null(strstr(decision_of(p, 1)->reason, "its rx queue is unknown"));
		assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 3));
		assert_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 0));
	}
}

/* Threaded NAPI: the kthread gets the CPU (and RPS goes off), not the IRQ. */
static void test_kthread_setting(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct caad_cpumask none;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);
	f.eth0[1].napi_kthread = 4242;
	f.veth[0].napi_kthread = 4343;

	struct caad_flow fl[] = {
		make_flow(1, 4, ETH0_IFINDEX, 1, 9 * GBIT),
		make_flow(2, 5, VETH_IFINDEX, 0, 9 * GBIT),
	};
	p = compute(t, &f.inv, fl, 2, &policy);
	const struct caad_setting *k = setting_of(p, CAAD_SETTING_KTHREAD_AFFINITY, 0, 1);
	const struct caad_setting *rps = setting_of(p, CAAD_SETTING_RPS_CPUS, 0, 1);
	assert_non_null(k);
	assert_int_equal(k->pid, 4242);
	assert_int_equal(k->irq, -1);
	struct caad_cpumask want = single((unsigned)decision_of(p, 0)->steer_cpu);
	assert_mask_equal(&k->cpus, &want);
	assert_non_null(rps);
	caad_cpumask_zero(&none);
	assert_mask_equal(&rps->cpus, &none);
	assert_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1));

	k = setting_of(p, CAAD_SETTING_KTHREAD_AFFINITY, 1, 0);
	assert_non_null(k);
	assert_int_equal(k->pid, 4343);
	want = single((unsigned)decision_of(p, 1)->steer_cpu);
	assert_mask_equal(&k->cpus, &want);
	assert_int_equal(p->n_settings, 4);
	for (size_t i = 0; i < p->n_settings; i++)
		assert_true(p->settings[i].pid == 0 || p->settings[i].kind == CAAD_SETTING_KTHREAD_AFFINITY);
}

/*
 * A window that read as often in two LLCs (CPUs 2, 1, 0, 2 of two LLCs of
 * two cores), its previous target anchored in the first: every check of
 * the plan sees the same consumer, so no target is a CPU the window read
 * on, and the plan is the one it would be without that previous plan, the
 * next scan too (it flapped: steered onto CPU 0 "moved from CPU 1, a CPU
 * its consumer read on lately", then unsteered).
 */
static void test_window_tie_anchor(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	_cleanup_(caad_plan_freep) struct caad_plan *prev = NULL, *p = NULL, *p0 = NULL, *p2 = NULL;
	struct caad_decision *pd = calloc(2, sizeof(*pd));
	static const int hist[] = { 1, 0, 2 };
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	assert_non_null(pd);
	assert_int_equal(caad_topology_load_synthetic("package:1 l3:2 core:2 pu:1", &t), 0);
	caad_policy_init(&policy);
	fake_inv_init(&f, 2, 1);
	struct caad_flow fl[] = {
		make_flow(1, 2, ETH0_IFINDEX, 0, 9 * GBIT),
		make_flow(2, 3, ETH0_IFINDEX, 1, 5 * GBIT),
	};
	set_history(&fl[0], 3, hist);
	pd[0] = (struct caad_decision){ .flow_id = 1, .flow = 0, .queue = 0, .consumer_cpu = 0, .steer_cpu = 1,
		                        .anchor_cpu = 0, .relation = CAAD_RELATION_PEER_CORE_SAME_LLC,
		                        .since_ns = NOW - 10 * GBIT, .reason = "x", .considered = "" };
	pd[1] = (struct caad_decision){ .flow_id = 2, .flow = 1, .queue = 1, .consumer_cpu = 3, .steer_cpu = -1,
		                        .anchor_cpu = -1, .reason = "x", .considered = "" };
	assert_int_equal(caad_plan_from_decisions(pd, 2, NOW - GBIT / 4, &prev), 0);

	p = compute_at(t, &f.inv, fl, 2, &policy, prev, NOW);
	p0 = compute(t, &f.inv, fl, 2, &policy);
	p2 = compute_at(t, &f.inv, fl, 2, &policy, p, NOW + GBIT / 4);
	const struct caad_plan *plans[] = { p, p0, p2 };

	for (size_t i = 0; i < 2; i++) {
		/* no flow's target is a CPU flow 1's window read on */
		for (size_t j = 0; j < ARRAY_SIZE(plans); j++) {
			int cpu = decision_of(plans[j], i)->steer_cpu;

			assert_true(cpu != 0 && cpu != 1 && cpu != 2);
		}
		assert_int_equal(decision_of(p, i)->steer_cpu, decision_of(p0, i)->steer_cpu);
		assert_int_equal(decision_of(p2, i)->steer_cpu, decision_of(p0, i)->steer_cpu);
	}
	assert_null(strstr(decision_of(p, 0)->reason, "a CPU its consumer read on lately"));
}

/* A consumer on a core that no L3 covers (an E-core without one): its
 * texts say so, not "L3#-1". */
static void test_consumer_without_llc(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_fixture("4c-l3-partial.xml");
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	assert_int_equal(t->cpus[2].llc, -1);

	caad_policy_init(&policy);
	fake_inv_init(&f, 2, 1);
	struct caad_flow fl[] = { make_flow(1, 2, ETH0_IFINDEX, 0, 9 * GBIT) };
	p = compute(t, &f.inv, fl, 1, &policy);
	const struct caad_decision *d = decision_of(p, 0);
	assert_null(strstr(d->reason, "#-1"));
	assert_null(strstr(d->considered, "#-1"));
	assert_non_null(strstr(d->considered, "no L3 (core 2), package 0"));
	assert_non_null(strstr(d->considered, "other cores of package 0:"));
	assert_null(strstr(d->reason, "its LLC"));
	assert_non_null(strstr(d->reason, "its core shares no last-level cache"));
}

/* One kthread polls two queues (fewer NAPIs than queues) whose flows are
 * read in two packages: it cannot follow both, so it moves for neither
 * (each scan would move it twice), and goes back to the host (an earlier
 * plan may have moved it: it would poll both queues there for good). The
 * queues take RPS: their IRQs only wake the kthread, and moving them
 * would move no processing (found by review). */
static void test_kthread_shared(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);
	f.eth0[0].napi_kthread = 777;
	f.eth0[1].napi_kthread = 777;

	struct caad_flow fl[] = {
		make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT), /* package 0 */
		make_flow(2, 1, ETH0_IFINDEX, 1, 8 * GBIT), /* package 1 */
	};
	p = compute(t, &f.inv, fl, 2, &policy);
	assert_int_equal(decision_of(p, 0)->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(decision_of(p, 1)->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_not_equal(decision_of(p, 0)->steer_cpu, decision_of(p, 1)->steer_cpu);
	for (size_t i = 0; i < p->n_settings; i++)
		assert_int_not_equal(p->settings[i].kind, CAAD_SETTING_IRQ_AFFINITY);
	const struct caad_setting *back = must(p, CAAD_SETTING_KTHREAD_AFFINITY, 0, 0);
	assert_true(back->restore);
	assert_int_equal(back->pid, 777);
	assert_null(setting_of(p, CAAD_SETTING_KTHREAD_AFFINITY, 0, 1));
	for (unsigned q = 0; q < 2; q++) {
		const struct caad_setting *rps = must(p, CAAD_SETTING_RPS_CPUS, 0, q);
		struct caad_cpumask want = single((unsigned)decision_of(p, q)->steer_cpu);

		assert_mask_equal(&rps->cpus, &want);
	}

	/* one flow alone on the two queues' kthread: it follows it */
	caad_plan_freep(&p);
	p = compute(t, &f.inv, fl, 1, &policy);
	assert_non_null(setting_of(p, CAAD_SETTING_KTHREAD_AFFINITY, 0, 0));
}

/*
 * A NAPI kthread that polls a steered queue and one given back to the host
 * (CAAD_OVERRIDE_HOST) cannot do both: the plan held "kthread 777 -> CPU"
 * and "kthread 777 restore", and the actuator wrote the host's value back
 * over caad's at every scan. The restore's wish tears the kthread: it goes
 * back to the host (once), and the steered queue takes RPS (its IRQ only
 * wakes the kthread).
 */
static void test_kthread_shared_host(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_override o[] = { { .flow_id = 5, .cpu = CAAD_OVERRIDE_HOST, .why = "verdict: host-steering" } };
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	fake_inv_init(&f, 4, 1);
	f.eth0[0].napi_kthread = 777;
	f.eth0[1].napi_kthread = 777;

	/* rx-0's flow steered, rx-1's left to the host; then rx-1's of unknown
	 * queue (every queue no one owns goes back: rx-1's kthread too) */
	for (int unknown = 0; unknown < 2; unknown++) {
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT),
			make_flow(5, 2, ETH0_IFINDEX, unknown ? -1 : 1, 8 * GBIT),
		};
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);
		const struct caad_decision *d = caad_plan_find(p, 1);
		struct caad_cpumask want = single((unsigned)d->steer_cpu);
		const struct caad_setting *rps = must(p, CAAD_SETTING_RPS_CPUS, 0, 0);

		assert_true(caad_plan_find(p, 5)->host);
		assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_false(rps->restore);
		assert_mask_equal(&rps->cpus, &want);
		assert_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 0));
		assert_null(setting_of(p, CAAD_SETTING_KTHREAD_AFFINITY, 0, 0));
		assert_true(must(p, CAAD_SETTING_KTHREAD_AFFINITY, 0, 1)->restore);
		/* never a kthread both set and given back */
		for (size_t i = 0; i < p->n_settings; i++)
			for (size_t j = 0; j < p->n_settings; j++)
				assert_false(p->settings[i].kind == CAAD_SETTING_KTHREAD_AFFINITY &&
				             p->settings[j].kind == CAAD_SETTING_KTHREAD_AFFINITY &&
				             p->settings[i].pid == p->settings[j].pid &&
				             p->settings[i].restore != p->settings[j].restore);
	}
}

/*
 * A flow of unknown queue on a veth (its NAPI's kthread found through the
 * flow, the queues mapped to none) left to the host's steering: the
 * kthread an earlier plan moved for it goes back too, once, as the host's
 * turn of a trial must measure the host's own placement (found by
 * review: only the queues' RPS went back).
 */
static void test_kthread_host_of_unknown_queue(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_override o[] = { { .flow_id = 5, .cpu = CAAD_OVERRIDE_HOST, .why = "host-steering" } };
	struct caad_napi napi = { .id = 300, .irq = -1, .kthread = 4343 };
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;
	unsigned back = 0;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 0, 2);
	f.ifaces[1].napis = &napi;
	f.ifaces[1].n_napis = 1;
	struct caad_flow fl = make_flow(5, 4, VETH_IFINDEX, -1, 9 * GBIT);
	fl.napi_id = 300;

	/* the rules first: the kthread moves for it */
	p = compute(t, &f.inv, &fl, 1, &policy);
	assert_true(decision_of(p, 0)->steer_cpu >= 0);
	assert_int_equal(must(p, CAAD_SETTING_KTHREAD_AFFINITY, 1, 0)->pid, 4343);
	caad_plan_freep(&p);

	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	p = compute(t, &f.inv, &fl, 1, &policy);
	assert_true(decision_of(p, 0)->host);
	for (size_t i = 0; i < p->n_settings; i++) {
		assert_true(p->settings[i].restore);
		back += p->settings[i].kind == CAAD_SETTING_KTHREAD_AFFINITY && p->settings[i].pid == 4343;
	}
	assert_int_equal(back, 1);
	assert_non_null(must(p, CAAD_SETTING_RPS_CPUS, 1, 0));
	assert_non_null(must(p, CAAD_SETTING_RPS_CPUS, 1, 1));
}

/*
 * A veth steered whole by a flow of unknown queue, its kthread found
 * through that flow (the kernel maps veth's queues to no NAPI): another
 * flow polled by another NAPI's kthread is not served by moving the
 * owner's, and is not reported as sharing its CPU (found by review). With
 * RPS alone (Mechanisms=), every queue's RPS serves it.
 */
static void test_kthread_follower_apart(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_napi napis[] = { { .id = 300, .irq = -1, .kthread = 4343 },
		                     { .id = 301, .irq = -1, .kthread = 4344 } };
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 0, 2);
	f.ifaces[1].napis = napis;
	f.ifaces[1].n_napis = ARRAY_SIZE(napis);
	struct caad_flow fl[] = { make_flow(1, 4, VETH_IFINDEX, -1, 9 * GBIT), make_flow(2, 6, VETH_IFINDEX, -1, 5 * GBIT) };
	fl[0].napi_id = 300;
	fl[1].napi_id = 301;

	for (int rps_only = 0; rps_only < 2; rps_only++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		bool moved_4344 = false;

		policy.disabled_mechanisms = rps_only ? 1u << CAAD_SETTING_KTHREAD_AFFINITY : 0;
		p = compute(t, &f.inv, fl, 2, &policy);
		const struct caad_decision *a = decision_of(p, 0), *b = decision_of(p, 1);

		assert_true(a->steer_cpu >= 0);
		for (size_t i = 0; i < p->n_settings; i++)
			moved_4344 |= p->settings[i].kind == CAAD_SETTING_KTHREAD_AFFINITY && p->settings[i].pid == 4344;
		assert_false(moved_4344);
		if (rps_only) {
			assert_true(b->shares_queue);
			assert_int_equal(b->steer_cpu, a->steer_cpu);
			assert_non_null(must(p, CAAD_SETTING_RPS_CPUS, 1, 0));
		} else {
			assert_false(b->shares_queue);
			assert_int_equal(b->steer_cpu, -1);
			assert_non_null(strstr(b->reason, "polled by NAPI kthread 4344"));
		}
	}
}

/* Mechanisms=: a disabled mechanism falls through to the next, and a queue
 * that nothing allowed fits is left alone. The veth's kthread is found by
 * the flow's NAPI kthread (sk_napi_id unknown), as BPF reports it. A
 * threaded queue whose kthread may not move is steered by RPS, not by its
 * IRQ, which only wakes the kthread. */
static void test_mechanisms(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct caad_napi napi = { .id = 300, .irq = -1, .kthread = 4343 };
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);
	f.eth0[1].napi_kthread = 4242;
	f.ifaces[1].napis = &napi;
	f.ifaces[1].n_napis = 1;
	struct caad_flow fl[] = {
		make_flow(1, 4, ETH0_IFINDEX, 1, 9 * GBIT),
		make_flow(2, 5, VETH_IFINDEX, 0, 9 * GBIT),
	};
	fl[1].proc_kthread = 4343;

	static const struct {
		unsigned off;
		int eth0_kind, veth_kind; /* -1: no setting for the queue */
	} cases[] = {
		{ 0, CAAD_SETTING_KTHREAD_AFFINITY, CAAD_SETTING_KTHREAD_AFFINITY },
		{ 1u << CAAD_SETTING_KTHREAD_AFFINITY, CAAD_SETTING_RPS_CPUS, CAAD_SETTING_RPS_CPUS },
		{ (1u << CAAD_SETTING_KTHREAD_AFFINITY) | (1u << CAAD_SETTING_IRQ_AFFINITY), CAAD_SETTING_RPS_CPUS,
		  CAAD_SETTING_RPS_CPUS },
		{ (1u << CAAD_SETTING_KTHREAD_AFFINITY) | (1u << CAAD_SETTING_RPS_CPUS), -1, -1 },
	};
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;

		policy.disabled_mechanisms = cases[c].off;
		p = compute(t, &f.inv, fl, 2, &policy);
		for (int kind = 0; kind < _CAAD_SETTING_KIND_COUNT; kind++) {
			const struct caad_setting *e = setting_of(p, (enum caad_setting_kind)kind, 0, 1);
			const struct caad_setting *v = setting_of(p, (enum caad_setting_kind)kind, 1, 0);

			/* RPS goes off beside a kthread or IRQ when RPS is allowed */
			if (kind == CAAD_SETTING_RPS_CPUS && cases[c].eth0_kind != CAAD_SETTING_RPS_CPUS &&
			    !(cases[c].off & (1u << CAAD_SETTING_RPS_CPUS)))
				assert_true(e && caad_cpumask_empty(&e->cpus));
			else
				assert_int_equal(e != NULL, kind == cases[c].eth0_kind);
			if (kind == CAAD_SETTING_RPS_CPUS && cases[c].veth_kind == CAAD_SETTING_KTHREAD_AFFINITY)
				assert_true(v && caad_cpumask_empty(&v->cpus));
			else
				assert_int_equal(v != NULL, kind == cases[c].veth_kind);
			if (v && kind == CAAD_SETTING_KTHREAD_AFFINITY)
				assert_int_equal(v->pid, 4343);
		}
	}
}

/* Rule 4: a consumer off the NIC's package is told so; nobody is moved. */
static void test_nic_locality_note(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);
	f.ifaces[0].has_local_cpus = true;
	f.ifaces[0].local_cpus = t->packages[t->cpus[1].package].cpus; /* the odd CPUs */

	for (int c = 0; c < 2; c++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl = make_flow(1, c, ETH0_IFINDEX, 0, 9 * GBIT);
		const char *note;

		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_true(p->decisions[0].steer_cpu >= 0);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		note = strstr(p->decisions[0].reason, "NIC is local to package");
		if (c == 0) {
			assert_non_null(note);
			assert_non_null(strstr(p->decisions[0].reason, "caad does not move applications"));
		} else
			assert_null(note);
	}

	/* a flow sharing its queue with a faster one is told so too */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT),
			make_flow(2, 2, ETH0_IFINDEX, 0, 5 * GBIT),
		};

		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		assert_true(p->decisions[1].shares_queue);
		assert_non_null(strstr(p->decisions[1].reason, "NIC is local to package 1, the consumer runs on package 0"));
	}

	/* ... and so is a conflicted one, off the NIC's package only: the
	 * conflict's text is shared per queue, but not across packages */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 2, ETH0_IFINDEX, 0, 9 * GBIT), /* owns rx-0, package 0 */
			make_flow(2, 1, ETH0_IFINDEX, 0, 5 * GBIT), /* package 1, the NIC's */
			make_flow(3, 3, ETH0_IFINDEX, 0, 4 * GBIT), /* package 1 */
			make_flow(4, 5, ETH0_IFINDEX, 0, 3 * GBIT), /* package 1 */
			make_flow(5, 1, ETH0_IFINDEX, 1, 9 * GBIT), /* owns rx-1, package 1 */
			make_flow(6, 0, ETH0_IFINDEX, 1, 5 * GBIT), /* package 0 */
			make_flow(7, 4, ETH0_IFINDEX, 1, 4 * GBIT), /* package 0 */
		};

		p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
		for (unsigned i = 1; i < 4; i++) {
			assert_string_equal(decision_of(p, i)->reason, decision_of(p, 1)->reason);
			assert_non_null(strstr(decision_of(p, i)->reason, "conflicted: eth0 rx-0"));
			assert_null(strstr(decision_of(p, i)->reason, "NIC is local"));
		}
		for (unsigned i = 5; i < 7; i++) {
			assert_non_null(strstr(decision_of(p, i)->reason, "conflicted: eth0 rx-1"));
			assert_non_null(strstr(decision_of(p, i)->reason,
			                       "NIC is local to package 1, the consumer runs on package 0"));
		}
		assert_ptr_equal(decision_of(p, 5)->reason, decision_of(p, 6)->reason);
	}
}

/* Heavy = rate and age; a flow with a target stays heavy down to half the rate. */
static void test_age_and_rate_band(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.min_age_ms = 500;
	fake_inv_init(&f, 4, 1);

	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT), /* age unknown: old */
			make_flow(2, 2, ETH0_IFINDEX, 1, 9 * GBIT), /* 499 ms */
			make_flow(3, 4, ETH0_IFINDEX, 2, 9 * GBIT), /* 500 ms */
			make_flow(4, 6, ETH0_IFINDEX, 3, 9 * GBIT), /* from the future */
		};
		fl[1].first_ns = NOW - 499 * MSEC;
		fl[2].first_ns = NOW - 500 * MSEC;
		fl[3].first_ns = NOW + 1;
		p = compute(t, &f.inv, fl, 4, &policy);
		assert_int_equal(p->n_decisions, 2);
		assert_non_null(decision_of(p, 0));
		assert_null(decision_of(p, 1));
		assert_non_null(decision_of(p, 2));
		assert_null(decision_of(p, 3));
		/* a young flow's consumer keeps its core free all the same (a
		 * reader as fast: steered onto it, the flow would move when the
		 * young one is old enough): 2 and 6 are not taken */
		assert_int_equal(decision_of(p, 0)->steer_cpu, 8);
		assert_int_equal(decision_of(p, 2)->steer_cpu, 10);
	}

	/* The band: 0.6 of the threshold keeps a target, 0.4 only for a dip
	 * shorter than DwellMSec=, and a flow without one is not heavy at 0.6. */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL;
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT),
			make_flow(2, 2, ETH0_IFINDEX, 1, 9 * GBIT),
			make_flow(3, 4, ETH0_IFINDEX, 2, GBIT / 2 + GBIT / 10),
		};

		p1 = compute(t, &f.inv, fl, 3, &policy);
		assert_int_equal(p1->n_decisions, 2);
		fl[0].rate_bps = GBIT / 2 + GBIT / 10;
		fl[1].rate_bps = GBIT / 2 - GBIT / 10;
		p2 = compute_at(t, &f.inv, fl, 3, &policy, p1, NOW + 250 * MSEC);
		assert_int_equal(p2->n_decisions, 2);
		assert_non_null(decision_of(p2, 0));
		assert_int_equal(decision_of(p2, 0)->steer_cpu, decision_of(p1, 0)->steer_cpu);
		assert_true(decision_of(p2, 0)->held);
		assert_int_equal(decision_of(p2, 0)->low_since_ns, 0);
		/* flow 2 dips: kept, and says so, from the dip's start */
		assert_int_equal(decision_of(p2, 1)->steer_cpu, decision_of(p1, 1)->steer_cpu);
		assert_int_equal(decision_of(p2, 1)->low_since_ns, NOW + 250 * MSEC);
		assert_non_null(strstr(decision_of(p2, 1)->reason,
		                       "at 400.0 Mbit/s, below half of RateThreshold=1.0 Gbit/s for 0 ms: kept for up to "
		                       "DwellMSec=2000"));
		p3 = compute_at(t, &f.inv, fl, 3, &policy, p2, NOW + 250 * MSEC + (policy.dwell_ms - 1) * MSEC);
		assert_int_equal(p3->n_decisions, 2);
		assert_int_equal(decision_of(p3, 1)->low_since_ns, NOW + 250 * MSEC);
		/* ... until it has lasted DwellMSec=: no longer heavy, its queue
		 * is left as it is */
		p4 = compute_at(t, &f.inv, fl, 3, &policy, p3, NOW + 250 * MSEC + policy.dwell_ms * MSEC);
		assert_int_equal(p4->n_decisions, 1);
		assert_null(decision_of(p4, 1));
		assert_null(setting_of(p4, CAAD_SETTING_IRQ_AFFINITY, 0, 1));
		/* without a dwell time, at once */
		policy.dwell_ms = 0;
		caad_plan_free(p2);
		p2 = compute_at(t, &f.inv, fl, 3, &policy, p1, NOW + 250 * MSEC);
		assert_null(decision_of(p2, 1));
	}

	/* an odd threshold: half of it rounds up, so a flow at 0 bit/s is
	 * below half of RateThreshold=1 (rounded down, no rate was, and a
	 * steered flow stayed heavy while its socket lived: review) */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL;
		struct caad_flow fl = make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT);

		policy.rate_threshold_bps = 1;
		policy.dwell_ms = 0;
		p1 = compute(t, &f.inv, &fl, 1, &policy);
		assert_non_null(decision_of(p1, 0));
		fl.rate_bps = 0;
		p2 = compute_at(t, &f.inv, &fl, 1, &policy, p1, NOW + 250 * MSEC);
		assert_null(decision_of(p2, 0));
	}
}

/* The issue's hysteresis case: the consumer moves within its LLC, the
 * flow keeps its target, although a fresh plan would choose another. */
static void test_hysteresis_within_llc(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL, *fresh = NULL, *p3 = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	struct caad_flow fl = make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT);
	p1 = compute(t, &f.inv, &fl, 1, &policy);
	int s = p1->decisions[0].steer_cpu;
	assert_int_equal(s, 2);
	assert_int_equal(p1->decisions[0].since_ns, NOW);

	fl.consumer_cpu = 4; /* same L3, another core */
	fresh = compute_at(t, &f.inv, &fl, 1, &policy, NULL, NOW + 250 * MSEC);
	assert_int_equal(fresh->decisions[0].steer_cpu, 0);
	p2 = compute_at(t, &f.inv, &fl, 1, &policy, p1, NOW + 250 * MSEC);
	assert_int_equal(p2->decisions[0].steer_cpu, s);
	assert_true(p2->decisions[0].held);
	assert_int_equal(p2->decisions[0].since_ns, NOW);
	assert_int_equal(p2->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_non_null(strstr(p2->decisions[0].reason, "keeps CPU 2"));
	assert_int_equal(p2->n_moves, 0);
	struct caad_cpumask want = single((unsigned)s);
	assert_mask_equal(&setting_of(p2, CAAD_SETTING_IRQ_AFFINITY, 0, 0)->cpus, &want);

	/* ... and keeps it in the cycles after, long after the dwell time */
	fl.consumer_cpu = 16;
	p3 = compute_at(t, &f.inv, &fl, 1, &policy, p2, NOW + 3600 * 1000 * MSEC);
	assert_int_equal(p3->decisions[0].steer_cpu, s);
	assert_int_equal(p3->decisions[0].since_ns, NOW);
}

/* Rule 6 with rule 7: the flow that owns a queue keeps it while another
 * is less than a quarter faster; rates that cross do not move the IRQ. */
static void test_owner_keeps_queue(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL, *p3 = NULL, *fresh = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 0);
	/* on rx-1: a reads on CPU 2 (package 0), b on CPU 5 (package 1) */
	struct caad_flow fl[] = { make_flow(10, 2, ETH0_IFINDEX, 1, 5100 * MBIT),
		                  make_flow(11, 5, ETH0_IFINDEX, 1, 5000 * MBIT) };

	p1 = compute(t, &f.inv, fl, 2, &policy);
	int s = p1->decisions[0].steer_cpu;
	assert_true(s >= 0);
	assert_int_equal(t->cpus[s].package, 0);
	assert_int_equal(p1->decisions[1].steer_cpu, -1);

	/* the rates cross: a still owns rx-1, b is conflicted, nothing moves */
	fl[0].rate_bps = 5000 * MBIT;
	fl[1].rate_bps = 5100 * MBIT;
	fresh = compute_at(t, &f.inv, fl, 2, &policy, NULL, NOW + 10000 * MSEC);
	assert_true(fresh->decisions[1].steer_cpu >= 0); /* without a past: the faster */
	p2 = compute_at(t, &f.inv, fl, 2, &policy, p1, NOW + 10000 * MSEC);
	assert_int_equal(p2->decisions[0].steer_cpu, s);
	assert_int_equal(p2->decisions[1].steer_cpu, -1);
	assert_non_null(strstr(p2->decisions[1].reason, "conflicted: "));
	assert_non_null(strstr(p2->decisions[1].reason, "for the flow that owns it (iperf3-10"));
	struct caad_cpumask want = single((unsigned)s);
	assert_mask_equal(&setting_of(p2, CAAD_SETTING_IRQ_AFFINITY, 0, 1)->cpus, &want);

	/* a quarter faster and more: b takes the queue */
	fl[1].rate_bps = 6300 * MBIT;
	p3 = compute_at(t, &f.inv, fl, 2, &policy, p2, NOW + 20000 * MSEC);
	assert_true(p3->decisions[1].steer_cpu >= 0);
	assert_int_equal(t->cpus[p3->decisions[1].steer_cpu].package, 1);
	assert_int_equal(p3->decisions[0].steer_cpu, -1);

	/* the same between a queue's owner and a flow of unknown queue (which
	 * would take every queue of the interface): crossing rates move
	 * nothing, either way; a quarter faster takes them */
	{
		/* rx-0's flow's rate, the unknown queue's, and which owns the queues */
		static const struct {
			uint64_t queue, whole;
			unsigned owner;
		} steps[] = { { 8000, 7900, 0 }, { 8000, 8100, 0 }, { 8000, 10100, 1 }, { 10200, 10100, 1 } };
		struct caad_flow mix[] = { make_flow(20, 2, ETH0_IFINDEX, 0, 0), make_flow(21, 5, ETH0_IFINDEX, -1, 0) };
		struct caad_plan *prev = NULL;

		for (unsigned i = 0; i < ARRAY_SIZE(steps); i++) {
			struct caad_plan *m;
			unsigned o = steps[i].owner;

			mix[0].rate_bps = steps[i].queue * MBIT;
			mix[1].rate_bps = steps[i].whole * MBIT;
			m = compute_at(t, &f.inv, mix, 2, &policy, prev, NOW + i * 10000 * MSEC);
			if (m->decisions[o].steer_cpu < 0 || m->decisions[1 - o].steer_cpu != -1)
				fail_msg("step %u: flow %u does not own the queues alone", i, o);
			if (i > 0 && steps[i - 1].owner == o)
				assert_int_equal(m->decisions[o].steer_cpu, prev->decisions[o].steer_cpu);
			caad_plan_free(prev);
			prev = m;
		}
		caad_plan_free(prev);
	}
}

/* A thread that reads as often in two LLCs keeps the home its target was
 * chosen for: the latest scan's would flip it, and force a move, at every
 * scan. */
static void test_window_tie_keeps_anchor(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL, *p3 = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 1, 0);
	/* latest on 5 (package 1), before on 2 (package 0): one scan each */
	struct caad_flow fl = make_flow(1, 5, ETH0_IFINDEX, 0, 9 * GBIT);
	set_history(&fl, 1, (const int[]){ 2 });
	p1 = compute(t, &f.inv, &fl, 1, &policy);
	int s = p1->decisions[0].steer_cpu;
	assert_int_equal(p1->decisions[0].anchor_cpu, 5);
	assert_int_equal(t->cpus[s].package, 1);

	/* then latest on 2, before on 5: still one each; the target stays */
	fl.consumer_cpu = 2;
	set_history(&fl, 1, (const int[]){ 5 });
	p2 = compute_at(t, &f.inv, &fl, 1, &policy, p1, NOW + 250 * MSEC);
	assert_int_equal(p2->decisions[0].steer_cpu, s);
	assert_int_equal(p2->decisions[0].consumer_cpu, 5);
	assert_non_null(strstr(p2->decisions[0].reason, "where its target was chosen (1 of its last 2 scans, as many "
	                                                "as elsewhere)"));
	assert_int_equal(p2->n_forced, 0);
	assert_int_equal(p2->n_moves, 0);

	/* read most in package 0 now (2 of 3 scans): it follows, forced */
	set_history(&fl, 2, (const int[]){ 5, 2 });
	p3 = compute_at(t, &f.inv, &fl, 1, &policy, p2, NOW + 500 * MSEC);
	assert_int_equal(p3->decisions[0].consumer_cpu, 2);
	assert_int_equal(t->cpus[p3->decisions[0].steer_cpu].package, 0);
}

/* Rule 5: a queue with nothing caad may set gets no owner, and its flow no
 * target without a setting. */
static void test_unsteerable_queue(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL, *q = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 2, 0);
	f.eth0[1].irq = -1;       /* no IRQ of its own ... */
	f.eth0[1].has_rps = false; /* ... and rps_cpus unreadable (or no CONFIG_RPS) */
	struct caad_flow fl[] = { make_flow(1, 2, ETH0_IFINDEX, 1, 9 * GBIT),
		                  make_flow(2, 4, ETH0_IFINDEX, 0, 9 * GBIT) };

	p = compute(t, &f.inv, fl, 2, &policy);
	assert_int_equal(p->decisions[0].steer_cpu, -1);
	assert_int_equal(p->decisions[0].relation, CAAD_RELATION_UNSTEERED);
	assert_non_null(strstr(p->decisions[0].reason, "nothing caad may set"));
	assert_true(p->decisions[1].steer_cpu >= 0); /* rx-0 is steered as ever */
	for (size_t i = 0; i < p->n_settings; i++)
		assert_int_equal(p->settings[i].queue, 0);

	/* Mechanisms= without irq-affinity: rx-0's IRQ is no use either, RPS is */
	policy.disabled_mechanisms = 1u << CAAD_SETTING_IRQ_AFFINITY;
	q = compute(t, &f.inv, fl, 2, &policy);
	assert_int_equal(q->decisions[0].steer_cpu, -1);
	assert_true(q->decisions[1].steer_cpu >= 0);
	assert_non_null(setting_of(q, CAAD_SETTING_RPS_CPUS, 0, 0));

	/* no queue of the interface has anything caad may set: a flow of
	 * unknown queue, which would own them all, gets no target either */
	f.eth0[0].has_rps = false;
	{
		struct caad_flow unknown = make_flow(3, 2, ETH0_IFINDEX, -1, 9 * GBIT);
		_cleanup_(caad_plan_freep) struct caad_plan *u = compute(t, &f.inv, &unknown, 1, &policy);

		assert_int_equal(u->decisions[0].steer_cpu, -1);
		assert_int_equal(u->n_settings, 0);
		assert_non_null(strstr(u->decisions[0].reason, "no rx queue of its interface has anything caad may set"));
	}
}

/*
 * A queue that has something caad may set, but nothing for the CPU its
 * owner got: its NAPI kthread torn between two targets with only
 * Mechanisms=kthread, or its IRQ's target out of vectors (irq_banned) with
 * only Mechanisms=irq. The plan wrote nothing while the decisions (and
 * the FlowSteered signal) said peer-core-same-llc; now the owner, and the
 * flow that shared its queue, are left alone as on a queue with nothing
 * caad may set.
 */
static void test_settingless_owner(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	unsigned others = (1u << CAAD_SETTING_RFS_FLOW_CNT) | (1u << CAAD_SETTING_RFS_TABLE) |
	                  (1u << CAAD_SETTING_NTUPLE_RULE);
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	fake_inv_init(&f, 4, 0);
	f.eth0[0].napi_kthread = 777;
	f.eth0[1].napi_kthread = 777;

	/* kthread only: rx-0 and rx-1 read in two packages tear 777 */
	{
		struct caad_flow fl[] = {
			make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT), /* package 0 */
			make_flow(2, 1, ETH0_IFINDEX, 1, 8 * GBIT), /* package 1 */
			make_flow(3, 2, ETH0_IFINDEX, 0, 7 * GBIT), /* package 0: would share rx-0 */
		};
		caad_policy_init(&policy);
		policy.disabled_mechanisms = others | (1u << CAAD_SETTING_IRQ_AFFINITY) | (1u << CAAD_SETTING_RPS_CPUS);
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 3, &policy);

		assert_int_equal(p->n_settings, 0);
		for (size_t i = 0; i < 3; i++) {
			const struct caad_decision *d = decision_of(p, i);

			assert_int_equal(d->steer_cpu, -1);
			assert_int_equal(d->relation, CAAD_RELATION_UNSTEERED);
			assert_false(d->shares_queue);
			assert_int_equal(d->since_ns, 0);
			assert_non_null(strstr(d->reason, "its rx queue has nothing caad may set for CPU"));
			assert_non_null(strstr(d->reason, "NAPI kthread polls"));
		}
		/* alone on 777, the flow of rx-0 has it */
		_cleanup_(caad_plan_freep) struct caad_plan *one = compute(t, &f.inv, fl, 1, &policy);
		assert_true(decision_of(one, 0)->steer_cpu >= 0);
		assert_non_null(setting_of(one, CAAD_SETTING_KTHREAD_AFFINITY, 0, 0));

		/* a slower flow left to the host on rx-1: with no owner there
		 * now, rx-1 goes back to the host, its kthread with it */
		struct caad_override o[] = { { .flow_id = 4, .cpu = CAAD_OVERRIDE_HOST, .why = "host-steering" } };
		struct caad_flow more[] = { fl[0], fl[1], make_flow(4, 3, ETH0_IFINDEX, 1, 2 * GBIT) };
		policy.overrides = o;
		policy.n_overrides = ARRAY_SIZE(o);
		_cleanup_(caad_plan_freep) struct caad_plan *h = compute(t, &f.inv, more, 3, &policy);
		assert_int_equal(decision_of(h, 1)->steer_cpu, -1);
		assert_true(decision_of(h, 2)->host);
		assert_true(must(h, CAAD_SETTING_KTHREAD_AFFINITY, 0, 1)->restore);
		for (size_t i = 0; i < h->n_settings; i++) {
			assert_true(h->settings[i].restore);
			assert_int_equal(h->settings[i].queue, 1);
		}
	}

	/* IRQ only, no CPU with vectors left: on a queue, and on every queue
	 * (not threaded: a threaded NAPI's IRQ moves nothing) */
	for (unsigned q = 0; q < 4; q++)
		f.eth0[q].napi_kthread = 0;
	caad_policy_init(&policy);
	policy.disabled_mechanisms = others | (1u << CAAD_SETTING_KTHREAD_AFFINITY) | (1u << CAAD_SETTING_RPS_CPUS);
	for (unsigned cpu = 0; cpu < 24; cpu++)
		caad_cpumask_set(&policy.irq_banned, cpu);
	for (int q = 0; q >= -1; q--) {
		struct caad_flow fl = make_flow(1, 0, ETH0_IFINDEX, q, 9 * GBIT);
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);
		const struct caad_decision *d = decision_of(p, 0);

		assert_int_equal(p->n_settings, 0);
		assert_int_equal(d->steer_cpu, -1);
		assert_int_equal(d->relation, CAAD_RELATION_UNSTEERED);
		assert_non_null(strstr(d->reason, q >= 0 ? "its rx queue has nothing caad may set for CPU"
		                                          : "no rx queue of its interface has anything caad may set"));
		assert_non_null(strstr(d->reason, "no IRQ vectors left"));
	}
	/* ... where one queue's IRQ is on its target already, that one stays:
	 * the interface is steered by it */
	{
		struct caad_flow fl = make_flow(1, 0, ETH0_IFINDEX, -1, 9 * GBIT);
		_cleanup_(caad_plan_freep) struct caad_plan *p0 = NULL, *p = NULL;

		caad_cpumask_zero(&policy.irq_banned);
		p0 = compute(t, &f.inv, &fl, 1, &policy);
		int cpu = decision_of(p0, 0)->steer_cpu;
		assert_true(cpu >= 0);
		for (unsigned c = 0; c < 24; c++)
			caad_cpumask_set(&policy.irq_banned, c);
		f.eth0[2].irq_affinity = single((unsigned)cpu);
		p = compute(t, &f.inv, &fl, 1, &policy);
		assert_int_equal(decision_of(p, 0)->steer_cpu, cpu);
		assert_int_equal(p->n_settings, 1);
		assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 2));
	}
}

/* An invalid target moves at once, whatever dwell time and bound. */
static void test_hysteresis_forced(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.dwell_ms = 1000000;
	policy.max_moves = 1;
	fake_inv_init(&f, 4, 1);

	struct caad_flow fl[] = {
		make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT),
		make_flow(2, 4, ETH0_IFINDEX, 1, 8 * GBIT),
		make_flow(3, 1, ETH0_IFINDEX, 2, 7 * GBIT),
	};
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = compute(t, &f.inv, fl, 3, &policy);
	int s[3];
	for (size_t i = 0; i < 3; i++) {
		s[i] = decision_of(p1, i)->steer_cpu;
		assert_true(s[i] >= 0);
	}

	/* flow 1's target banned; flow 2's consumer moved onto its target;
	 * flow 3's consumer onto its target's sibling */
	struct caad_policy p2policy = policy;
	caad_cpumask_set(&p2policy.banned, (unsigned)s[0]);
	fl[1].consumer_cpu = s[1];
	fl[2].consumer_cpu = (s[2] + 12) % 24;
	_cleanup_(caad_plan_freep) struct caad_plan *p2 = compute_at(t, &f.inv, fl, 3, &p2policy, p1, NOW + MSEC);
	for (size_t i = 0; i < 3; i++) {
		const struct caad_decision *d = decision_of(p2, i);

		assert_true(d->steer_cpu >= 0);
		assert_int_not_equal(d->steer_cpu, s[i]);
		assert_false(d->held);
		assert_int_equal(d->since_ns, NOW + MSEC);
		assert_non_null(strstr(d->reason, "moved from CPU"));
		assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	}
	assert_non_null(strstr(decision_of(p2, 0)->reason, "is banned"));
	assert_non_null(strstr(decision_of(p2, 1)->reason, "consumer's own CPU"));
	assert_non_null(strstr(decision_of(p2, 2)->reason, "SMT sibling"));
	assert_int_equal(p2->n_forced, 3);
	assert_int_equal(p2->n_moves, 0);
}

/* Consumer left its LLC: held until the dwell time is over, then moved. */
static void test_dwell(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:1 l3:2 core:4 pu:1");
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.dwell_ms = 2000;
	fake_inv_init(&f, 2, 1);
	assert_int_equal(t->n_llcs, 2);
	assert_int_not_equal(t->cpus[0].llc, t->cpus[4].llc);

	struct caad_flow fl = make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT);
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = compute(t, &f.inv, &fl, 1, &policy);
	int s = p1->decisions[0].steer_cpu;
	assert_int_equal(t->cpus[s].llc, t->cpus[0].llc);

	fl.consumer_cpu = 4;
	_cleanup_(caad_plan_freep) struct caad_plan *p2 = compute_at(t, &f.inv, &fl, 1, &policy, p1, NOW + 1999 * MSEC);
	assert_int_equal(p2->decisions[0].steer_cpu, s);
	assert_true(p2->decisions[0].held);
	assert_int_equal(p2->decisions[0].relation, CAAD_RELATION_SAME_PACKAGE_OTHER_LLC);
	assert_non_null(strstr(p2->decisions[0].reason, "DwellMSec=2000"));
	assert_non_null(strstr(p2->decisions[0].reason, "no longer in the consumer's LLC"));
	assert_int_equal(p2->n_moves, 0);

	_cleanup_(caad_plan_freep) struct caad_plan *p3 = compute_at(t, &f.inv, &fl, 1, &policy, p2, NOW + 2000 * MSEC);
	int s3 = p3->decisions[0].steer_cpu;
	assert_int_equal(t->cpus[s3].llc, t->cpus[4].llc);
	assert_int_equal(p3->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_false(p3->decisions[0].held);
	assert_int_equal(p3->decisions[0].since_ns, NOW + 2000 * MSEC);
	assert_int_equal(p3->n_moves, 1);

	/* Dwell 0: moved at once. */
	policy.dwell_ms = 0;
	_cleanup_(caad_plan_freep) struct caad_plan *p4 = compute_at(t, &f.inv, &fl, 1, &policy, p1, NOW + 1);
	assert_int_equal(p4->decisions[0].steer_cpu, s3);
}

/* A target chosen farther than the consumer's LLC (its peers were all
 * consumers' cores) goes back to a peer there once one is free, after the
 * dwell time: kept, it would stay in the slower cell for the flow's life. */
static void test_back_to_llc_peer(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:2 core:3 pu:1");
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL, *p3 = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.allow_other_package = true;
	fake_inv_init(&f, 4, 0);
	assert_int_equal(t->cpus[0].package, t->cpus[2].package);
	assert_int_not_equal(t->cpus[0].package, t->cpus[3].package);

	/* every core of package 0 is a reader's: all three go to package 1 */
	struct caad_flow fl[] = { make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT), make_flow(2, 1, ETH0_IFINDEX, 1, 8 * GBIT),
		                  make_flow(3, 2, ETH0_IFINDEX, 2, 7 * GBIT) };
	p1 = compute(t, &f.inv, fl, 3, &policy);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(p1->decisions[i].relation, CAAD_RELATION_OTHER_PACKAGE);
	int s = p1->decisions[0].steer_cpu;

	/* the other two end: within the dwell time, flow 1 waits */
	p2 = compute_at(t, &f.inv, fl, 1, &policy, p1, NOW + 1000 * MSEC);
	assert_int_equal(p2->decisions[0].steer_cpu, s);
	assert_non_null(strstr(p2->decisions[0].reason, "is farther than a core free now"));
	assert_non_null(strstr(p2->decisions[0].reason, "DwellMSec="));
	/* after it, a peer core in its LLC, as a move */
	p3 = compute_at(t, &f.inv, fl, 1, &policy, p2, NOW + 2000 * MSEC);
	assert_int_equal(p3->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(t->cpus[p3->decisions[0].steer_cpu].package, t->cpus[0].package);
	assert_int_equal(p3->n_moves, 1);
	assert_non_null(strstr(p3->decisions[0].reason, "moved from CPU"));

	/* an SMT sibling (AllowSMTSibling=) goes back to another core too */
	{
		_cleanup_(caad_topology_freep) struct caad_topology *ht = load_synthetic("package:1 core:2 pu:2");
		_cleanup_(caad_plan_freep) struct caad_plan *q1 = NULL, *q2 = NULL;
		struct caad_flow two[] = { make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT),
			                   make_flow(2, 2, ETH0_IFINDEX, 1, 8 * GBIT) };

		policy.allow_smt_sibling = true;
		assert_int_equal(ht->cpus[0].core, ht->cpus[1].core);
		assert_int_not_equal(ht->cpus[0].core, ht->cpus[2].core);
		q1 = compute(ht, &f.inv, two, 2, &policy);
		assert_int_equal(q1->decisions[0].relation, CAAD_RELATION_SMT_SIBLING);
		q2 = compute_at(ht, &f.inv, two, 1, &policy, q1, NOW + 2000 * MSEC);
		assert_int_equal(q2->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_int_equal(q2->n_moves, 1);
	}
}

/* A queue's owner keeps it for DwellMSec= after it got its target, however
 * fast another flow of the queue: rates that swap at every scan would
 * otherwise move its IRQ at every scan. */
static void test_owner_dwell(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL, *p3 = NULL, *p4 = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 0);
	/* on rx-0: a reads on CPU 0 (package 0), b on CPU 1 (package 1) */
	struct caad_flow fl[] = { make_flow(10, 0, ETH0_IFINDEX, 0, 10 * GBIT),
		                  make_flow(11, 1, ETH0_IFINDEX, 0, 8 * GBIT) };

	p1 = compute(t, &f.inv, fl, 2, &policy);
	int s = p1->decisions[0].steer_cpu;
	assert_int_equal(t->cpus[s].package, 0);
	assert_int_equal(p1->decisions[1].steer_cpu, -1);

	/* a scan later b is far faster: a keeps rx-0 for now */
	fl[0].rate_bps = 8 * GBIT;
	fl[1].rate_bps = 14 * GBIT;
	p2 = compute_at(t, &f.inv, fl, 2, &policy, p1, NOW + 250 * MSEC);
	assert_int_equal(p2->decisions[0].steer_cpu, s);
	assert_int_equal(p2->decisions[1].steer_cpu, -1);

	/* after the dwell time it takes it */
	p3 = compute_at(t, &f.inv, fl, 2, &policy, p2, NOW + 2000 * MSEC);
	assert_int_equal(p3->decisions[0].steer_cpu, -1);
	assert_true(p3->decisions[1].steer_cpu >= 0);
	assert_int_equal(t->cpus[p3->decisions[1].steer_cpu].package, 1);

	/* and keeps it when the rates swap back a scan later */
	fl[0].rate_bps = 14 * GBIT;
	fl[1].rate_bps = 8 * GBIT;
	p4 = compute_at(t, &f.inv, fl, 2, &policy, p3, NOW + 2250 * MSEC);
	assert_int_equal(p4->decisions[1].steer_cpu, p3->decisions[1].steer_cpu);
	assert_int_equal(p4->decisions[0].steer_cpu, -1);
}

/* A fast reader of an interface caad does not manage (or of a flow not old
 * enough yet) keeps its core free of steered processing too. */
static void test_unmanaged_reader_core(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.min_age_ms = 500;
	fake_inv_init(&f, 4, 0);

	for (unsigned kind = 0; kind < 3; kind++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = { make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT),
			                  make_flow(2, 2, kind == 2 ? ETH0_IFINDEX : 99, 1, 20 * GBIT) };

		if (kind == 1)
			fl[1].rate_bps = 10 * MBIT; /* light: no core kept for it */
		if (kind == 2)
			fl[1].first_ns = NOW - 100 * MSEC; /* heavy, on eth0, too young */
		p = compute(t, &f.inv, fl, 2, &policy);
		assert_int_equal(p->n_decisions, 1);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		if (kind == 1)
			assert_int_equal(p->decisions[0].steer_cpu, 2);
		else
			assert_same_core(t, (unsigned)p->decisions[0].steer_cpu, 2, false);
	}
}

/* A flow that arrived through a device on top of a managed NIC (a VLAN, a
 * bond) has that device's ifindex and the NIC queue's NAPI: steered on
 * that queue. */
static void test_upper_device_by_napi(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 0);
	for (unsigned q = 0; q < 4; q++)
		f.eth0[q].napi_id = 8193 + q;
	struct caad_flow fl[] = { make_flow(1, 0, 42, -1, 9 * GBIT), make_flow(2, 4, 42, 3, 9 * GBIT),
		                  make_flow(3, 6, 42, 1, 9 * GBIT) };
	fl[0].napi_id = 8195; /* eth0 rx-2 */
	fl[1].napi_id = 8194; /* eth0 rx-1, whatever queue it says */
	fl[2].napi_id = 9000; /* not a NAPI of a managed queue */

	p = compute(t, &f.inv, fl, 3, &policy);
	assert_int_equal(p->n_decisions, 2);
	assert_int_equal(decision_of(p, 0)->iface, 0);
	assert_int_equal(decision_of(p, 0)->queue, 2);
	assert_true(decision_of(p, 0)->steer_cpu >= 0);
	assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 2));
	assert_int_equal(decision_of(p, 1)->queue, 1);
	assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1));
	assert_null(decision_of(p, 2));
}

/* In another package, the NIC's own comes first (rule 4). */
static void test_other_package_nic_first(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:3 core:2 pu:1");
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;
	int nic = -1;

	(void)state;
	caad_policy_init(&policy);
	policy.allow_other_package = true;
	fake_inv_init(&f, 4, 0);
	assert_int_equal(t->n_packages, 3);
	for (unsigned cpu = 0; cpu < t->n_cpus; cpu++)
		if (t->cpus[cpu].package != t->cpus[0].package && t->cpus[cpu].package != t->cpus[2].package)
			nic = t->cpus[cpu].package;
	assert_true(nic >= 0);
	f.ifaces[0].has_local_cpus = true;
	f.ifaces[0].local_cpus = t->packages[nic].cpus; /* the last package, not the next one */

	struct caad_flow fl[] = { make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT), make_flow(2, 1, ETH0_IFINDEX, 1, 8 * GBIT) };
	p = compute(t, &f.inv, fl, 2, &policy);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(p->decisions[i].relation, CAAD_RELATION_OTHER_PACKAGE);
		assert_int_equal(t->cpus[p->decisions[i].steer_cpu].package, nic);
	}
}

/* At most MaxMovesPerCycle flows change target per plan, fastest first. */
static void test_moves_bound(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:2 l3:1 core:8 pu:1");
	_cleanup_(caad_plan_freep) struct caad_plan *prev = NULL;
	struct caad_policy policy;
	struct caad_flow fl[5];
	struct fake_inv f;
	uint64_t now = NOW;

	(void)state;
	caad_policy_init(&policy);
	policy.dwell_ms = 0;
	policy.max_moves = 2;
	policy.allow_other_package = true;
	fake_inv_init(&f, 5, 1);

	/* five consumers in package 0 */
	for (unsigned i = 0; i < 5; i++)
		fl[i] = make_flow(i + 1, (int)i, ETH0_IFINDEX, (int)i, (10 - i) * GBIT);
	prev = compute(t, &f.inv, fl, 5, &policy);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(t->cpus[decision_of(prev, i)->steer_cpu].package, 0);

	/* all move to package 1: two flows follow per cycle, fastest first */
	for (unsigned i = 0; i < 5; i++)
		fl[i].consumer_cpu = 8 + (int)i;
	for (unsigned cycle = 0; cycle < 3; cycle++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		unsigned moved = 0;

		now += 250 * MSEC;
		p = compute_at(t, &f.inv, fl, 5, &policy, prev, now);
		for (unsigned i = 0; i < 5; i++) {
			const struct caad_decision *d = decision_of(p, i);
			bool should = i < 2 * (cycle + 1);

			assert_int_equal(t->cpus[d->steer_cpu].package, should ? 1 : 0);
			if (t->cpus[d->steer_cpu].package != t->cpus[decision_of(prev, i)->steer_cpu].package)
				moved++;
			if (!should)
				assert_non_null(strstr(d->reason, "MaxMovesPerCycle=2 reached"));
		}
		assert_int_equal(moved, cycle < 2 ? 2 : 1);
		assert_int_equal(p->n_moves, moved);
		caad_plan_free(prev);
		prev = TAKE_PTR(p);
	}
}

/* A new heavy flow's consumer takes a steered flow's target core. */
static void test_collision_with_consumer(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 1);

	struct caad_flow fl[2] = { make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT) };
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = compute(t, &f.inv, fl, 1, &policy);
	int s = p1->decisions[0].steer_cpu;

	fl[1] = make_flow(2, (s + 12) % 24, ETH0_IFINDEX, 1, 5 * GBIT);
	_cleanup_(caad_plan_freep) struct caad_plan *p2 = compute_at(t, &f.inv, fl, 2, &policy, p1, NOW + 500 * MSEC);
	assert_int_equal(decision_of(p2, 0)->steer_cpu, s); /* dwell */
	assert_non_null(strstr(decision_of(p2, 0)->reason, "is now a consumer's core"));
	_cleanup_(caad_plan_freep) struct caad_plan *p3 = compute_at(t, &f.inv, fl, 2, &policy, p2, NOW + 2500 * MSEC);
	int s3 = decision_of(p3, 0)->steer_cpu;
	assert_true(s3 >= 0);
	assert_int_not_equal(t->cpus[s3].core, t->cpus[s].core);
	assert_int_equal(p3->n_moves, 1);
	assert_int_not_equal(decision_of(p3, 1)->steer_cpu, s3);
}

/* Only queues with heavy flows get settings; the others keep their values. */
static void test_untouched_queues(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 8, 4);

	struct caad_flow fl[] = {
		make_flow(1, 0, ETH0_IFINDEX, 5, 9 * GBIT),
		make_flow(2, 2, ETH0_IFINDEX, 6, GBIT / 10),
		make_flow(3, 3, VETH_IFINDEX, 2, 5 * GBIT),
	};
	p = compute(t, &f.inv, fl, 3, &policy);
	for (size_t i = 0; i < p->n_settings; i++) {
		const struct caad_setting *st = &p->settings[i];
		assert_true((st->iface == 0 && st->queue == 5) || (st->iface == 1 && st->queue == 2));
	}
	assert_int_equal(p->n_settings, 3);
	/* in interface and queue order */
	assert_int_equal(p->settings[0].iface, 0);
	assert_int_equal(p->settings[2].iface, 1);
}

/* Explain names packages and LLCs as the topology trees do: a package by
 * its OS number (POWER9's chips are 0 and 8), an LLC by hwloc's index, not
 * by caad's own counts. */
static void test_considered_os_numbers(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	t->packages[t->cpus[1].package].os_index = 8;
	t->llcs[t->cpus[1].llc].os_index = 5;
	caad_policy_init(&policy);
	for (unsigned cpu = 3; cpu < 24; cpu += 2)
		if (cpu != 13) /* 1's sibling */
			caad_cpumask_set(&policy.banned, cpu);
	fake_inv_init(&f, 4, 1);
	struct caad_flow fl[] = { make_flow(1, 1, ETH0_IFINDEX, 0, 9 * GBIT) };
	p = compute(t, &f.inv, fl, 1, &policy);
	const struct caad_decision *d = decision_of(p, 0);
	assert_int_equal(d->steer_cpu, -1);
	assert_string_equal(d->considered, "L3#5, package 8: 3 banned, 5 banned, 7 banned, 9 banned, 11 banned; "
	                                   "other LLCs of package 8: no other core");
}

/* What Explain shows: the candidates and why each lost. */
static void test_considered(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	caad_cpumask_set(&policy.banned, 2);
	caad_cpumask_set(&policy.banned, 14);
	fake_inv_init(&f, 4, 1);

	/* consumers on 0 (the fast one) and 4; 2 is banned: 6 is chosen */
	struct caad_flow fl[] = {
		make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT),
		make_flow(2, 4, ETH0_IFINDEX, 1, 5 * GBIT),
	};
	p = compute(t, &f.inv, fl, 2, &policy);
	const struct caad_decision *d = decision_of(p, 0);
	assert_int_equal(d->steer_cpu, 6);
	assert_non_null(strstr(d->considered, "L3#"));
	assert_non_null(strstr(d->considered, "2 banned"));
	assert_non_null(strstr(d->considered, "4 consumer core (iperf3-2/4002)"));
	assert_non_null(strstr(d->considered, "6 chosen"));
	assert_non_null(strstr(d->considered, " 10 as free but higher"));
	/* the second flow sees the load of the first on 6 */
	d = decision_of(p, 1);
	assert_int_equal(d->steer_cpu, 8);
	assert_non_null(strstr(d->considered, "18 busier (9.0 Gbit/s")); /* core of 6, its free thread */
	assert_non_null(strstr(d->considered, "0 consumer core (iperf3-1/4001)"));
	assert_non_null(strstr(d->considered, "8 chosen (0 bit/s"));

	/* no candidate at all: every tier tried is listed */
	caad_policy_init(&policy);
	for (unsigned cpu = 0; cpu < 24; cpu += 2)
		if (cpu != 0 && cpu != 12)
			caad_cpumask_set(&policy.banned, cpu);
	caad_plan_free(TAKE_PTR(p));
	p = compute(t, &f.inv, fl, 1, &policy);
	d = decision_of(p, 0);
	assert_int_equal(d->steer_cpu, -1);
	assert_non_null(strstr(d->considered, "other LLCs of package"));
	assert_non_null(strstr(d->considered, "banned"));
	/* the tiers apart by "; ", the list of each by ", ", nothing after
	 * the last: a separator lost between two tiers ran them together */
	assert_string_equal(d->considered, "L3#0, package 0: 2 banned, 4 banned, 6 banned, 8 banned, 10 banned; "
	                                   "other LLCs of package 0: no other core");

	/* ... and with the sibling as the last resort, the tier that has it */
	policy.allow_smt_sibling = true;
	caad_plan_free(TAKE_PTR(p));
	p = compute(t, &f.inv, fl, 1, &policy);
	d = decision_of(p, 0);
	assert_int_equal(d->steer_cpu, 12);
	assert_string_equal(d->considered, "L3#0, package 0: 2 banned, 4 banned, 6 banned, 8 banned, 10 banned; "
	                                   "other LLCs of package 0: no other core; SMT sibling: chosen");

	/* one tier: its list alone, no separator after it */
	caad_policy_init(&policy);
	caad_plan_free(TAKE_PTR(p));
	p = compute(t, &f.inv, fl, 1, &policy);
	d = decision_of(p, 0);
	assert_int_equal(d->steer_cpu, 2);
	assert_string_equal(d->considered, "L3#0, package 0: 2 chosen (0 bit/s steered to its core), 4 as free but "
	                                   "higher, 6 as free but higher, 8 as free but higher, 10 as free but higher");
}

/* The layouts of the issue: one L3 per CCX, many L3s, NUMA below packages. */
static void test_synthetic_layouts(void **state)
{
	static const char *const layouts[] = {
		"package:2 l3:4 core:4 pu:2",
		"package:1 l3:8 core:8 pu:2",
		"package:4 numa:2 l3:2 core:4 pu:1",
	};
	struct fake_inv f;

	(void)state;
	fake_inv_init(&f, 4, 1);
	for (size_t li = 0; li < ARRAY_SIZE(layouts); li++) {
		_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic(layouts[li]);
		struct caad_policy policy;

		assert_int_equal(t->llc_depth_level, 3);
		for (unsigned c = 0; c < t->n_cpus; c++) {
			struct caad_flow fl = make_flow(1, (int)c, ETH0_IFINDEX, 0, 9 * GBIT);
			const struct caad_cpu *cc = &t->cpus[c];
			struct caad_cpumask llc;
			int s;

			/* rule 1: a peer core in its LLC */
			caad_policy_init(&policy);
			{
				_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);
				s = p->decisions[0].steer_cpu;
				assert_true(s >= 0);
				assert_int_equal(t->cpus[s].llc, cc->llc);
				assert_int_not_equal(t->cpus[s].core, cc->core);
				assert_int_equal(p->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
			}
			/* rule 3: LLC banned but for the consumer: another LLC of its package */
			caad_cpumask_andnot(&llc, &t->llcs[cc->llc].cpus, &t->cores[cc->core].cpus);
			policy.banned = llc;
			{
				_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);
				s = p->decisions[0].steer_cpu;
				assert_true(s >= 0);
				assert_int_equal(t->cpus[s].package, cc->package);
				assert_int_not_equal(t->cpus[s].llc, cc->llc);
				assert_int_equal(p->decisions[0].relation, CAAD_RELATION_SAME_PACKAGE_OTHER_LLC);
			}
			/* ... the package banned: nothing, unless AllowOtherPackage */
			caad_cpumask_andnot(&policy.banned, &t->packages[cc->package].cpus, &t->cores[cc->core].cpus);
			{
				_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, &fl, 1, &policy);
				bool alone = t->n_packages == 1;

				assert_int_equal(p->decisions[0].steer_cpu, -1);
				policy.allow_other_package = true;
				caad_plan_free(TAKE_PTR(p));
				p = compute(t, &f.inv, &fl, 1, &policy);
				s = p->decisions[0].steer_cpu;
				if (alone)
					assert_int_equal(s, -1);
				else {
					assert_true(s >= 0);
					assert_int_not_equal(t->cpus[s].package, cc->package);
					assert_int_equal(p->decisions[0].relation, CAAD_RELATION_OTHER_PACKAGE);
				}
			}
		}
	}
}

/* ---- the consumer's window (rule 1) ------------------------------------ */

/* The consumer read on h[0] at the scan before, h[1] before that, ... */
/* A consumer hopping between CPUs 4 and 6 of one LLC gets a peer that is
 * neither, nor their siblings 16 and 18. Peers 0 and 2 are banned, so
 * without the window CPU 4 (the least loaded, lowest) would be chosen. */
static void test_window_one_llc(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	caad_cpumask_parse_list("0,2,12,14", &policy.banned);
	fake_inv_init(&f, 1, 0);

	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = { make_flow(1, 6, ETH0_IFINDEX, 0, 9 * GBIT) };

		p = compute(t, &f.inv, fl, 1, &policy);
		assert_int_equal(p->decisions[0].steer_cpu, 4);
	}
	for (unsigned latest = 0; latest < 2; latest++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = { make_flow(1, latest ? 4 : 6, ETH0_IFINDEX, 0, 9 * GBIT) };
		const int h[] = { latest ? 6 : 4, latest ? 4 : 6, latest ? 6 : 4 };
		const struct caad_decision *d;

		set_history(&fl[0], 3, h);
		p = compute(t, &f.inv, fl, 1, &policy);
		d = &p->decisions[0];
		assert_int_equal(d->consumer_cpu, fl[0].consumer_cpu);
		assert_int_equal(d->steer_cpu, 8);
		assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_non_null(strstr(d->reason, latest ? "lately also on CPU 6: peer core in its LLC"
		                                         : "lately also on CPU 4: peer core in its LLC"));
		assert_null(strstr(d->reason, "planned for"));
		/* the other CPU is a consumer's core among the candidates */
		assert_non_null(strstr(d->considered, latest ? " 6 consumer core" : " 4 consumer core"));
	}
}

/* A consumer across two LLCs: planned for the LLC where it read at the
 * most scans, for its latest CPU there; a tie goes to the LLC it read in
 * last. No CPU of the window, nor their cores, is chosen. */
static void test_window_two_llcs(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 1, 0);

	{
		/* read on 5 (package 1) now, on 2 and 4 (package 0) before */
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = { make_flow(1, 5, ETH0_IFINDEX, 0, 9 * GBIT) };
		const int h[] = { 2, 4 };
		const struct caad_decision *d;

		set_history(&fl[0], 2, h);
		p = compute(t, &f.inv, fl, 1, &policy);
		d = &p->decisions[0];
		assert_int_equal(d->consumer_cpu, 2);
		assert_int_equal(d->anchor_cpu, 2);
		assert_int_equal(d->steer_cpu, 0);
		assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_non_null(strstr(d->reason, "consumer on CPU 2 (iperf3-1/4001), lately also on CPUs 5,4; planned "
		                                  "for L3#"));
		assert_non_null(strstr(d->reason, "where it read most (2 of its last 3 scans): peer core in its LLC"));
	}
	{
		/* one scan each: the latest wins */
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = { make_flow(1, 5, ETH0_IFINDEX, 0, 9 * GBIT) };
		const int h[] = { 2 };
		const struct caad_decision *d;

		set_history(&fl[0], 1, h);
		p = compute(t, &f.inv, fl, 1, &policy);
		d = &p->decisions[0];
		assert_int_equal(d->consumer_cpu, 5);
		assert_int_equal(d->steer_cpu, 1);
		assert_non_null(strstr(d->reason, "where it read last (1 of its last 2 scans, as many as elsewhere)"));
	}
	{
		/* the window's CPU in the other LLC is kept free too: flow 2,
		 * consumed on 7 in package 1, gets neither 5 (flow 1 read there
		 * at the latest scan) nor the banned 1 and 3, but 9 */
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
		struct caad_flow fl[] = { make_flow(1, 5, ETH0_IFINDEX, 0, 9 * GBIT),
			                  make_flow(2, 7, ETH0_IFINDEX, 1, 8 * GBIT) };
		const int h[] = { 2, 2, 2 };

		fake_inv_init(&f, 2, 0);
		set_history(&fl[0], 3, h); /* planned for 2: 3 of 4 scans */
		caad_cpumask_parse_list("1,3,13,15", &policy.banned);
		p = compute(t, &f.inv, fl, 2, &policy);
		assert_int_equal(p->decisions[0].consumer_cpu, 2);
		assert_int_equal(p->decisions[0].steer_cpu, 0);
		assert_int_equal(p->decisions[1].steer_cpu, 9);
		assert_non_null(strstr(p->decisions[1].considered, " 5 consumer core"));
	}
}

/* A target that the consumer's window reaches moves at once, whatever the
 * dwell time: onto a CPU it read on, or onto the core of one. A window CPU
 * of another flow is only a consumer's core (the dwell time holds). A flow
 * sharing a queue does not share a CPU its consumer read on. */
static void test_window_hysteresis(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.dwell_ms = 1000000;
	fake_inv_init(&f, 1, 0);

	for (unsigned sibling = 0; sibling < 2; sibling++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL;
		struct caad_flow fl[] = { make_flow(1, 6, ETH0_IFINDEX, 0, 9 * GBIT) };
		const struct caad_decision *d;
		int s, h[1];

		p1 = compute(t, &f.inv, fl, 1, &policy);
		s = p1->decisions[0].steer_cpu;
		assert_int_equal(s, 0);
		h[0] = sibling ? s + 12 : s;
		set_history(&fl[0], 1, h);
		p2 = compute_at(t, &f.inv, fl, 1, &policy, p1, NOW + MSEC);
		d = &p2->decisions[0];
		assert_int_equal(p2->n_forced, 1);
		assert_int_not_equal(d->steer_cpu, s);
		assert_int_not_equal(d->steer_cpu, s + 12);
		assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_non_null(strstr(d->reason, sibling ? "which is on a core its consumer read on lately"
		                                          : "which is a CPU its consumer read on lately"));
	}

	{
		/* flow 1 is steered to 0; flow 2 (same queue) reads on 8 now and
		 * read on 0 before: 0 is held for flow 1 (dwell), but flow 2 is
		 * conflicted, not sharing it */
		_cleanup_(caad_plan_freep) struct caad_plan *p1 = NULL, *p2 = NULL;
		struct caad_flow fl[] = { make_flow(1, 6, ETH0_IFINDEX, 0, 9 * GBIT),
			                  make_flow(2, 8, ETH0_IFINDEX, 0, 8 * GBIT) };
		const int h[] = { 0 };

		p1 = compute(t, &f.inv, fl, 2, &policy);
		assert_int_equal(p1->decisions[0].steer_cpu, 0);
		assert_int_equal(p1->decisions[1].steer_cpu, 0);
		assert_true(p1->decisions[1].shares_queue);
		set_history(&fl[1], 1, h);
		p2 = compute_at(t, &f.inv, fl, 2, &policy, p1, NOW + MSEC);
		assert_int_equal(p2->decisions[0].steer_cpu, 0);
		assert_true(p2->decisions[0].held);
		assert_non_null(strstr(p2->decisions[0].reason, "is now a consumer's core"));
		assert_int_equal(p2->decisions[1].steer_cpu, -1);
		assert_false(p2->decisions[1].shares_queue);
		assert_non_null(strstr(p2->decisions[1].reason, "conflicted: eth0 rx-0 is steered to CPU 0"));
	}
}

/*
 * AllowSMTSibling=yes and no free core in the package: a reader that hops
 * between CPUs 0 and 2 keeps the sibling it got (12, of 0) while it reads
 * on 2, and back on 0: within its LLC it does not move the flow. Planned
 * for its latest CPU alone, the target followed it 12 -> 14 -> 12 at every
 * scan, each a forced move (12 is on a core it read on lately, 0's).
 * Once a peer core is free, the flow goes there, but not before the dwell
 * time: the sibling is no CPU it reads on. A reader of another flow that
 * comes to the sibling takes it at once, as before.
 */
static void test_window_sibling_hop(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_flow fl[] = { make_flow(1, 0, ETH0_IFINDEX, 0, 9 * GBIT), make_flow(2, 4, ETH0_IFINDEX, 1, 5 * GBIT),
		                  make_flow(3, 6, ETH0_IFINDEX, 2, 5 * GBIT), make_flow(4, 8, ETH0_IFINDEX, 3, 5 * GBIT),
		                  make_flow(5, 10, ETH0_IFINDEX, 4, 5 * GBIT) };
	struct caad_policy policy;
	struct fake_inv f;
	int h[CAAD_CONSUMER_HISTORY] = { 2 };

	(void)state;
	caad_policy_init(&policy);
	policy.allow_smt_sibling = true;
	policy.dwell_ms = 1000000;
	fake_inv_init(&f, 5, 0);

	/* read on 2, now on 0: the cores of 0, 2, 4, 6, 8 and 10 are readers' */
	set_history(&fl[0], 1, h);
	p = compute(t, &f.inv, fl, ARRAY_SIZE(fl), &policy);
	assert_int_equal(p->decisions[0].consumer_cpu, 0);
	assert_int_equal(p->decisions[0].steer_cpu, 12);
	assert_int_equal(p->decisions[0].relation, CAAD_RELATION_SMT_SIBLING);

	for (unsigned scan = 1; scan <= 5; scan++) {
		_cleanup_(caad_plan_freep) struct caad_plan *q = NULL;
		const struct caad_decision *d;

		/* 2, 0, 2, ...: the history the scans before leave */
		memmove(&h[1], &h[0], (CAAD_CONSUMER_HISTORY - 1) * sizeof(h[0]));
		h[0] = fl[0].consumer_cpu;
		fl[0].consumer_cpu = scan % 2 ? 2 : 0;
		set_history(&fl[0], MIN(scan + 1, (unsigned)CAAD_CONSUMER_HISTORY), h);
		q = compute_at(t, &f.inv, fl, ARRAY_SIZE(fl), &policy, p, NOW + scan * 250 * MSEC);
		d = &q->decisions[0];
		assert_int_equal(d->consumer_cpu, fl[0].consumer_cpu);
		if (d->steer_cpu != 12)
			fail_msg("scan %u, consumer on %d: steered to %d: %s", scan, d->consumer_cpu, d->steer_cpu,
			         d->reason);
		assert_true(d->held);
		assert_int_equal(q->n_forced, 0);
		assert_int_equal(q->n_moves, 0);
		assert_non_null(strstr(d->reason, "(hysteresis)"));
		/* its relation is the topology's, to the CPU it is planned for */
		assert_int_equal(d->relation, scan % 2 ? CAAD_RELATION_PEER_CORE_SAME_LLC : CAAD_RELATION_SMT_SIBLING);
		if (scan % 2 && !strstr(d->reason, "which is the SMT sibling of a CPU its consumer read on lately"))
			fail_msg("%s", d->reason);
		caad_plan_free(p);
		p = TAKE_PTR(q);
	}
	/* p: the reader on 2, lately also on 0 */

	{
		/* core 10 free again: a nearer core, a voluntary move, after
		 * the dwell time only */
		_cleanup_(caad_plan_freep) struct caad_plan *q = NULL, *r = NULL;

		fl[4].consumer_cpu = 9;
		q = compute_at(t, &f.inv, fl, ARRAY_SIZE(fl), &policy, p, NOW + 2000 * MSEC);
		assert_int_equal(q->decisions[0].steer_cpu, 12);
		assert_int_equal(q->n_forced, 1); /* flow 5's, off package 0 */
		assert_non_null(strstr(q->decisions[0].reason, "another core is free now"));
		r = compute_at(t, &f.inv, fl, ARRAY_SIZE(fl), &policy, p, NOW + 1002000 * MSEC);
		assert_int_equal(r->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_int_equal(t->cpus[r->decisions[0].steer_cpu].core, t->cpus[10].core);
		assert_non_null(strstr(r->decisions[0].reason, "moved from CPU 12, which is the SMT sibling of a CPU its "
		                                               "consumer read on lately, and another core is free now"));
		fl[4].consumer_cpu = 10;
	}
	{
		/* another flow's reader on 12 (10 and 22 banned: no core is
		 * free): a consumer's CPU, left after the dwell time, for the
		 * sibling of 2 */
		_cleanup_(caad_plan_freep) struct caad_plan *q = NULL, *r = NULL;

		fl[4].consumer_cpu = 12;
		caad_cpumask_parse_list("10,22", &policy.banned);
		q = compute_at(t, &f.inv, fl, ARRAY_SIZE(fl), &policy, p, NOW + 2000 * MSEC);
		assert_int_equal(q->decisions[0].steer_cpu, 12);
		assert_non_null(strstr(q->decisions[0].reason, "is now a consumer's CPU"));
		r = compute_at(t, &f.inv, fl, ARRAY_SIZE(fl), &policy, p, NOW + 1002000 * MSEC);
		assert_int_equal(r->decisions[0].steer_cpu, 14);
		assert_int_equal(r->decisions[0].relation, CAAD_RELATION_SMT_SIBLING);
		assert_int_equal(r->n_moves, 1);
		caad_cpumask_zero(&policy.banned);
		fl[4].consumer_cpu = 10;
	}
}

/* ---- property tests ---------------------------------------------------- */

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

static bool flow_is_heavy(const struct caad_flow *fl, const struct caad_inventory *inv, const struct caad_policy *p,
                          uint64_t now)
{
	return fl->rate_bps >= p->rate_threshold_bps && fl->ifindex > 0 &&
	       caad_inventory_find_ifindex(inv, fl->ifindex) != NULL &&
	       (fl->first_ns == 0 || (now >= fl->first_ns && now - fl->first_ns >= p->min_age_ms * MSEC));
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
 * consumer's own sibling in the last resort, if no consumer reads there).
 */
static enum tier best_tier(const struct caad_topology *t, const struct caad_policy *policy,
                           const struct caad_cpumask *consumer_cores, const struct caad_cpumask *consumer_cpus,
                           unsigned c)
{
	enum tier best = TIER_NONE;

	CAAD_CPUMASK_FOREACH(x, &t->usable) {
		enum tier k = tier_of(caad_topology_relation(t, c, (unsigned)x));

		if (caad_cpumask_test(&policy->banned, (unsigned)x))
			continue;
		if (k == TIER_SIBLING ? !policy->allow_smt_sibling || caad_cpumask_test(consumer_cpus, (unsigned)x)
		                      : caad_cpumask_test(consumer_cores, (unsigned)x))
			continue;
		if (k == TIER_OTHER_PACKAGE && !policy->allow_other_package)
			continue;
		if (k < best)
			best = k;
	}
	return best;
}

/*
 * Rule 1 from the contract: the CPUs of a flow's consumer window that the
 * topology knows (consumer_cpu and its history) into *window, their cores
 * into *cores; returns the CPU to plan for, the latest of the LLC with the
 * most scans (ties: the latest), or -1 when consumer_cpu is unknown.
 */
/* The CPU the previous plan chose flow id's target for, -1 none. */
static int prev_anchor(const struct caad_plan *prev, uint64_t id)
{
	const struct caad_decision *pd = prev ? caad_plan_find(prev, id) : NULL;

	return pd && pd->steer_cpu >= 0 ? pd->anchor_cpu : -1;
}

static int window_of(const struct caad_topology *t, const struct caad_flow *f, int anchor, struct caad_cpumask *window,
                     struct caad_cpumask *cores)
{
	int scans[1 + CAAD_CONSUMER_HISTORY], home = -1;
	unsigned n = 0, best = 0;
	/* a tie goes to the LLC of the CPU the previous target was chosen for */
	int anchor_llc = anchor >= 0 && (unsigned)anchor < t->n_cpus && t->cpus[anchor].present ? t->cpus[anchor].llc : -1;

	caad_cpumask_zero(window);
	caad_cpumask_zero(cores);
	if (f->consumer_cpu < 0 || (unsigned)f->consumer_cpu >= t->n_cpus || !t->cpus[f->consumer_cpu].present)
		return -1;
	scans[n++] = f->consumer_cpu;
	for (unsigned h = 0; h < f->n_consumer_history; h++)
		if (f->consumer_history[h] < t->n_cpus && t->cpus[f->consumer_history[h]].present)
			scans[n++] = f->consumer_history[h];
	for (unsigned i = 0; i < n; i++) {
		unsigned count = 0;

		for (unsigned j = 0; j < n; j++)
			count += t->cpus[scans[j]].llc == t->cpus[scans[i]].llc;
		if (count > best || (count == best && anchor_llc >= 0 && t->cpus[scans[i]].llc == anchor_llc &&
		                     t->cpus[home].llc != anchor_llc)) {
			best = count;
			home = scans[i];
		}
		caad_cpumask_set(window, (unsigned)scans[i]);
		caad_cpumask_or(cores, cores, &t->cores[t->cpus[scans[i]].core].cpus);
	}
	/* a window whose cores are every usable core of home's LLC would leave
	 * no peer there: the consumer is then its latest CPU alone */
	if (caad_cpumask_count(window) > 1 && t->cpus[home].llc >= 0) {
		struct caad_cpumask llc_usable, uncovered;

		caad_cpumask_and(&llc_usable, &t->llcs[t->cpus[home].llc].cpus, &t->usable);
		caad_cpumask_andnot(&uncovered, &llc_usable, cores);
		/* an LLC of one core is always covered: only when its package
		 * has no other usable core either (else a target there is near) */
		int first_core = -1;
		bool one_core = true;
		CAAD_CPUMASK_FOREACH(x, &llc_usable) {
			if (first_core < 0)
				first_core = t->cpus[x].core;
			one_core = one_core && t->cpus[x].core == first_core;
		}
		if (caad_cpumask_empty(&uncovered) && one_core && t->cpus[home].package >= 0) {
			caad_cpumask_and(&llc_usable, &t->packages[t->cpus[home].package].cpus, &t->usable);
			caad_cpumask_andnot(&uncovered, &llc_usable, cores);
		}
		if (caad_cpumask_empty(&uncovered)) {
			caad_cpumask_zero(window);
			caad_cpumask_set(window, (unsigned)f->consumer_cpu);
			*cores = t->cores[t->cpus[f->consumer_cpu].core].cpus;
			home = f->consumer_cpu;
		}
	}
	return home;
}

/* Whether s0, chosen as the SMT sibling of anchor, is held as the sibling
 * of a CPU of the window while the consumer reads on another core of its
 * LLC (rule 7: a consumer that moves within its LLC does not move it). */
static bool window_sibling(const struct caad_topology *t, const struct caad_policy *policy, int anchor, int c, int s0)
{
	return policy->allow_smt_sibling && anchor >= 0 && (unsigned)anchor < t->n_cpus && t->cpus[anchor].present &&
	       t->cpus[anchor].core == t->cpus[s0].core &&
	       caad_topology_relation(t, (unsigned)c, (unsigned)s0) == CAAD_RELATION_PEER_CORE_SAME_LLC;
}

/* Whether a previous target s0 had to change for consumer c, planned for in
 * flow f's window (rule 7). */
static bool target_must_change(const struct caad_topology *t, const struct caad_policy *policy,
                               const struct caad_cpumask *consumer_cores, const struct caad_cpumask *consumer_cpus,
                               const struct caad_decision *pd, int c, const struct caad_flow *f, bool *forced)
{
	struct caad_cpumask window, window_cores;
	int s0 = pd->steer_cpu;
	enum caad_relation rel;

	*forced = true;
	if (s0 < 0 || (unsigned)s0 >= t->n_cpus || !caad_cpumask_test(&t->usable, (unsigned)s0) ||
	    caad_cpumask_test(&policy->banned, (unsigned)s0))
		return true;
	rel = caad_topology_relation(t, (unsigned)c, (unsigned)s0);
	if (rel == CAAD_RELATION_SAME_CORE || (rel == CAAD_RELATION_SMT_SIBLING && !policy->allow_smt_sibling) ||
	    (rel == CAAD_RELATION_OTHER_PACKAGE && !policy->allow_other_package))
		return true;
	window_of(t, f, pd->anchor_cpu, &window, &window_cores);
	if (caad_cpumask_test(&window, (unsigned)s0) ||
	    (rel != CAAD_RELATION_SMT_SIBLING && caad_cpumask_test(&window_cores, (unsigned)s0) &&
	     !window_sibling(t, policy, pd->anchor_cpu, (int)c, s0)))
		return true;
	*forced = false;
	if (caad_cpumask_test(consumer_cores, (unsigned)s0))
		return true;
	/* chosen farther away when nothing nearer was free: back once it is */
	if (best_tier(t, policy, consumer_cores, consumer_cpus, (unsigned)c) < tier_of(rel))
		return true;
	return rel != CAAD_RELATION_PEER_CORE_SAME_LLC && pd->anchor_cpu >= 0 &&
	       t->cpus[pd->anchor_cpu].llc != t->cpus[c].llc;
}

/* Whether queue q may not move by its NAPI kthread: it has none, Mechanisms=
 * has none, or another queue shares it (torn, if their targets differ). */
static bool kthread_torn(const struct caad_inventory *inv, const struct caad_queue *q, const struct caad_policy *policy)
{
	unsigned users = 0;

	if (q->napi_kthread <= 0 || (policy->disabled_mechanisms & (1u << CAAD_SETTING_KTHREAD_AFFINITY)))
		return true;
	for (size_t i = 0; i < inv->n_ifaces; i++)
		for (unsigned j = 0; j < inv->ifaces[i].n_rx; j++)
			users += inv->ifaces[i].rx[j].napi_kthread == q->napi_kthread;
	return users > 1;
}

static void check_plan(const struct caad_topology *t, const struct caad_inventory *inv, const struct caad_flow *fl,
                       size_t n, const struct caad_policy *policy, const struct caad_plan *p,
                       const struct caad_plan *prev, const char *what)
{
	struct caad_cpumask consumer_cores, consumer_cpus;
	uint64_t now = p->now_ns;

	/* Who is heavy: everything above the threshold and old enough, and
	 * with a previous target also down to half of it. */
	for (size_t i = 0; i < n; i++) {
		const struct caad_decision *d = decision_of(p, i);

		if (flow_is_heavy(&fl[i], inv, policy, now) && !d)
			fail_msg("%s: heavy flow %zu has no decision", what, i);
		if (!d)
			continue;
		assert_true(fl[i].rate_bps >= policy->rate_threshold_bps / 2);
		if (fl[i].rate_bps < policy->rate_threshold_bps) {
			const struct caad_decision *pd = caad_plan_find(prev, fl[i].id);
			assert_non_null(pd);
			assert_true(pd->steer_cpu >= 0);
		}
	}

	/* Rule 1: every CPU of a heavy flow's window is a consumer's */
	caad_cpumask_zero(&consumer_cores);
	caad_cpumask_zero(&consumer_cpus);
	for (size_t k = 0; k < p->n_decisions; k++) {
		struct caad_cpumask window, cores;
		int home = window_of(t, &fl[p->decisions[k].flow], prev_anchor(prev, fl[p->decisions[k].flow].id), &window,
		                     &cores);

		assert_int_equal(p->decisions[k].consumer_cpu, home);
		caad_cpumask_or(&consumer_cores, &consumer_cores, &cores);
		caad_cpumask_or(&consumer_cpus, &consumer_cpus, &window);
	}
	/* ... and of a flow as fast that caad does not steer (another
	 * interface's, or too young) */
	for (size_t i = 0; i < n; i++) {
		struct caad_cpumask window, cores;

		if (decision_of(p, i) || fl[i].rate_bps < policy->rate_threshold_bps ||
		    window_of(t, &fl[i], -1, &window, &cores) < 0)
			continue;
		caad_cpumask_or(&consumer_cores, &consumer_cores, &cores);
		caad_cpumask_or(&consumer_cpus, &consumer_cpus, &window);
	}

	for (size_t k = 0; k < p->n_decisions; k++) {
		const struct caad_decision *d = &p->decisions[k];
		const struct caad_flow *f;

		assert_true(d->flow < n);
		f = &fl[d->flow];
		assert_int_equal(d->flow_id, f->id);
		assert_ptr_equal(decision_of(p, d->flow), d);
		assert_true(d->iface >= 0 && (size_t)d->iface < inv->n_ifaces);
		assert_int_equal(inv->ifaces[d->iface].ifindex, f->ifindex);
		assert_true(d->reason[0] != 0);

		if (d->steer_cpu < 0) {
			assert_int_equal(d->relation, CAAD_RELATION_UNSTEERED);
			assert_int_equal(d->since_ns, 0);
			assert_false(d->held);
			assert_false(d->shares_queue);
			if (strstr(d->reason, "no usable peer") && !caad_plan_find(prev, f->id)) {
				enum tier want = best_tier(t, policy, &consumer_cores, &consumer_cpus,
				                           (unsigned)d->consumer_cpu);
				if (want != TIER_NONE)
					fail_msg("%s: flow %zu unsteered, but tier %d has a CPU", what, d->flow, want);
			}
			continue;
		}

		unsigned s = (unsigned)d->steer_cpu, c = (unsigned)d->consumer_cpu;
		struct caad_cpumask window, window_cores;
		window_of(t, f, prev_anchor(prev, f->id), &window, &window_cores);
		/* never a CPU of its consumer's window, nor one of their cores
		 * (but for the planned-for CPU's SMT sibling, when allowed) */
		if (caad_cpumask_test(&window, s))
			fail_msg("%s: flow %zu steered to CPU %u, where its consumer read lately", what, d->flow, s);
		if (d->relation != CAAD_RELATION_SMT_SIBLING && caad_cpumask_test(&window_cores, s) &&
		    !(d->held && window_sibling(t, policy, d->anchor_cpu, (int)c, (int)s)))
			fail_msg("%s: flow %zu steered to CPU %u, on a core its consumer read on lately", what, d->flow, s);
		if (!caad_cpumask_test(&t->usable, s))
			fail_msg("%s: flow %zu steered to unusable CPU %u", what, d->flow, s);
		if (caad_cpumask_test(&policy->banned, s))
			fail_msg("%s: flow %zu steered to banned CPU %u", what, d->flow, s);
		assert_int_not_equal(s, c);
		assert_int_equal(d->relation, caad_topology_relation(t, c, s));
		assert_int_not_equal(d->relation, CAAD_RELATION_SAME_CORE);
		if (!policy->allow_smt_sibling)
			assert_int_not_equal(d->relation, CAAD_RELATION_SMT_SIBLING);
		if (!policy->allow_other_package)
			assert_int_not_equal(d->relation, CAAD_RELATION_OTHER_PACKAGE);
		assert_true(d->since_ns > 0 && d->since_ns <= now);
		if (!d->held && !d->shares_queue) {
			enum tier want = best_tier(t, policy, &consumer_cores, &consumer_cpus, c);

			if (caad_cpumask_test(&consumer_cores, s) && d->relation != CAAD_RELATION_SMT_SIBLING)
				fail_msg("%s: flow %zu steered to CPU %u, a consumer's core", what, d->flow, s);
			if (tier_of(d->relation) != want)
				fail_msg("%s: flow %zu (consumer %u) steered in tier %d, best is %d", what, d->flow, c,
				         tier_of(d->relation), want);
		}
		if (d->shares_queue) {
			bool found = false;

			assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
			/* an owner's target held or placed on a consumer's core
			 * (DwellMSec=, the closed loop) is the owner's alone */
			if (caad_cpumask_test(&consumer_cores, s))
				fail_msg("%s: flow %zu shares CPU %u, a consumer's core", what, d->flow, s);
			for (size_t j = 0; j < p->n_decisions; j++) {
				const struct caad_decision *o = &p->decisions[j];
				found = found || (o != d && !o->shares_queue && o->steer_cpu == d->steer_cpu &&
				                  o->iface == d->iface && (o->queue == d->queue || o->queue == -1));
			}
			if (!found)
				fail_msg("%s: flow %zu shares a queue with nobody", what, d->flow);
		}

		/* Rule 7: a target changes only for a reason, and not too often. */
		const struct caad_decision *pd = caad_plan_find(prev, f->id);
		if (pd && pd->steer_cpu >= 0 && !d->shares_queue && d->steer_cpu != pd->steer_cpu) {
			bool forced;

			if (!target_must_change(t, policy, &consumer_cores, &consumer_cpus, pd, (int)c, f, &forced))
				fail_msg("%s: flow %zu moved from %d to %u without a reason", what, d->flow, pd->steer_cpu, s);
			if (!forced && now - pd->since_ns < policy->dwell_ms * MSEC)
				fail_msg("%s: flow %zu moved within the dwell time", what, d->flow);
		}
		if (pd && pd->steer_cpu >= 0 && d->steer_cpu == pd->steer_cpu && !d->shares_queue && !pd->shares_queue)
			assert_int_equal(d->since_ns, pd->since_ns);

		/* A steered owner's queue (one of them, for a flow of unknown
		 * queue) moves to its CPU by a setting: not a decision alone;
		 * so does the queue of a flow that shares its owner's (its
		 * rule's, moved by one). */
		{
			bool set = false;
			for (size_t j = 0; j < p->n_settings && !set; j++) {
				const struct caad_setting *st = &p->settings[j];
				set = (st->kind == CAAD_SETTING_IRQ_AFFINITY || st->kind == CAAD_SETTING_KTHREAD_AFFINITY ||
				       st->kind == CAAD_SETTING_RPS_CPUS) &&
				      !st->restore && st->iface == d->iface && (d->queue < 0 || st->queue == (unsigned)d->queue) &&
				      caad_cpumask_test(&st->cpus, s);
			}
			if (!set)
				fail_msg("%s: flow %zu (queue %d%s%s) steered to CPU %u by no setting: %s", what, d->flow, d->queue,
				         d->shares_queue ? ", sharing" : "", d->ntuple ? ", ntuple" : "", s, d->reason);
		}
	}
	assert_true(p->n_moves <= policy->max_moves);

	for (size_t i = 0; i < p->n_settings; i++) {
		const struct caad_setting *st = &p->settings[i];
		struct caad_cpumask outside;
		const struct caad_iface *iface;
		const struct caad_queue *q = NULL;
		bool owned = false, heavy_on_it = false;

		assert_true(st->iface >= 0 && (size_t)st->iface < inv->n_ifaces);
		iface = &inv->ifaces[st->iface];
		for (unsigned j = 0; j < iface->n_rx; j++)
			if (iface->rx[j].index == st->queue)
				q = &iface->rx[j];
		assert_non_null(q);
		caad_cpumask_andnot(&outside, &st->cpus, &t->usable);
		if (!caad_cpumask_empty(&outside))
			fail_msg("%s: setting %zu has CPUs outside the usable set", what, i);
		CAAD_CPUMASK_FOREACH(cpu, &st->cpus)
			assert_false(caad_cpumask_test(&policy->banned, (unsigned)cpu));
		assert_true(caad_cpumask_count(&st->cpus) <= 1);
		switch (st->kind) {
		case CAAD_SETTING_IRQ_AFFINITY:
			assert_false(caad_cpumask_empty(&st->cpus));
			assert_int_equal(st->irq, q->irq);
			assert_false(q->irq_managed);
			/* an IRQ of its own: one serving two queues cannot follow two targets */
			assert_int_equal(irq_users(inv, q->irq), 1);
			/* a threaded NAPI's IRQ only wakes its kthread: it moves no processing */
			assert_true(q->napi_kthread <= 0);
			assert_int_equal(st->pid, 0);
			break;
		case CAAD_SETTING_KTHREAD_AFFINITY:
			/* a torn kthread goes back to the host, once */
			if (st->restore) {
				assert_true(caad_cpumask_empty(&st->cpus));
				/* (the queue's, or on a queue mapped to none, veth,
				 * the one found through a flow) */
				assert_true(q->napi_kthread <= 0 || st->pid == q->napi_kthread);
				for (size_t j = 0; j < p->n_settings; j++)
					assert_false(j != i && p->settings[j].kind == CAAD_SETTING_KTHREAD_AFFINITY &&
					             p->settings[j].pid == st->pid);
				break;
			}
			assert_false(caad_cpumask_empty(&st->cpus));
			assert_true(q->napi_kthread > 0);
			assert_int_equal(st->pid, q->napi_kthread);
			break;
		case CAAD_SETTING_RPS_CPUS:
			assert_true(q->has_rps);
			/* empty: RPS off, only beside the queue's IRQ or kthread setting */
			if (caad_cpumask_empty(&st->cpus)) {
				bool other = false;
				for (size_t j = 0; j < p->n_settings; j++)
					other = other || ((p->settings[j].kind == CAAD_SETTING_IRQ_AFFINITY ||
					                   p->settings[j].kind == CAAD_SETTING_KTHREAD_AFFINITY) &&
					                  p->settings[j].iface == st->iface && p->settings[j].queue == st->queue);
				assert_true(other);
			} else {
				/* the queue's kthread and IRQ cannot take its CPU */
				unsigned cpu = (unsigned)caad_cpumask_next(&st->cpus, 0);
				bool irq_there = q->has_irq_affinity && caad_cpumask_count(&q->irq_affinity) == 1 &&
				                 caad_cpumask_test(&q->irq_affinity, cpu);

				assert_true(kthread_torn(inv, q, policy));
				assert_true(q->napi_kthread > 0 || q->irq < 0 || q->irq_managed || irq_users(inv, q->irq) > 1 ||
				            (policy->disabled_mechanisms & (1u << CAAD_SETTING_IRQ_AFFINITY)) ||
				            (caad_cpumask_test(&policy->irq_banned, cpu) && !irq_there));
			}
			break;
		case CAAD_SETTING_RFS_FLOW_CNT:
			/* on for a same-core target, off (0) where it was on for any other */
			assert_true(q->has_rps_flow_cnt);
			assert_true(caad_cpumask_empty(&st->cpus));
			assert_false(policy->disabled_mechanisms & (1u << CAAD_SETTING_RFS_FLOW_CNT));
			if (st->value == 0)
				assert_true(q->rps_flow_cnt > 0);
			else
				assert_true(st->value >= CAAD_RFS_FLOW_CNT_MIN && (st->value & (st->value - 1)) == 0 &&
				            st->value >= q->rps_flow_cnt);
			break;
		case CAAD_SETTING_RFS_TABLE: {
			bool rfs_on = false;

			assert_int_equal(st->value, CAAD_RFS_TABLE_ENTRIES);
			assert_true(inv->has_rfs_table && inv->rfs_table < CAAD_RFS_TABLE_ENTRIES);
			for (size_t j = 0; j < p->n_settings; j++)
				rfs_on = rfs_on || (p->settings[j].kind == CAAD_SETTING_RFS_FLOW_CNT && p->settings[j].value > 0);
			assert_true(rfs_on);
			for (size_t j = i + 1; j < p->n_settings; j++)
				assert_int_not_equal(p->settings[j].kind, CAAD_SETTING_RFS_TABLE);
			continue; /* the host's: belongs to no queue's owner */
		}
		case CAAD_SETTING_NTUPLE_RULE: {
			const struct caad_decision *d = caad_plan_find(p, st->flow_id);

			/* rule 6: a steered flow moved off a queue steered elsewhere */
			assert_false(policy->disabled_mechanisms & (1u << CAAD_SETTING_NTUPLE_RULE));
			assert_true(iface->ntuple);
			assert_non_null(d);
			assert_true(d->ntuple && d->steer_cpu >= 0);
			assert_int_equal(d->iface, st->iface);
			assert_int_equal(d->queue, (int)st->queue);
			assert_true(st->rule.family == AF_INET || st->rule.family == AF_INET6);
			assert_true(st->rule.lport && st->rule.rport);
			for (size_t j = 0; j < p->n_settings; j++)
				assert_false(j != i && p->settings[j].kind == CAAD_SETTING_NTUPLE_RULE &&
				             p->settings[j].flow_id == st->flow_id);
			continue; /* several moved flows may share a queue */
		}
		default:
			fail_msg("%s: setting %zu of unknown kind", what, i);
		}

		/* Each setting belongs to exactly one owner of its queue (rule 5, 6),
		 * and only queues with heavy flows have settings (rule 8). */
		for (size_t k = 0; k < p->n_decisions; k++) {
			const struct caad_decision *d = &p->decisions[k];
			bool on_it = d->iface == st->iface && (d->queue < 0 || (unsigned)d->queue == st->queue);

			heavy_on_it = heavy_on_it || on_it;
			if (d->steer_cpu < 0 || d->shares_queue || !on_it)
				continue;
			if (caad_cpumask_empty(&st->cpus) || caad_cpumask_test(&st->cpus, (unsigned)d->steer_cpu)) {
				assert_false(owned);
				owned = true;
			}
		}
		assert_true(heavy_on_it);
		if (!owned)
			fail_msg("%s: setting %zu (%s, queue %u) has no decision", what, i,
			         caad_setting_kind_to_string(st->kind), st->queue);
		for (size_t j = i + 1; j < p->n_settings; j++)
			assert_false(p->settings[j].kind == st->kind && p->settings[j].iface == st->iface &&
			             p->settings[j].queue == st->queue);
	}
}

/* Same input, same output: every field, every text. */
/* Two plans decided a flow alike (both NULL: neither has it). */
static void assert_same_decision(const struct caad_decision *a, const struct caad_decision *b)
{
	assert_int_equal(a == NULL, b == NULL);
	if (!a)
		return;
	assert_int_equal(a->steer_cpu, b->steer_cpu);
	assert_int_equal(a->queue, b->queue);
	assert_int_equal(a->relation, b->relation);
	assert_int_equal(a->shares_queue, b->shares_queue);
	assert_int_equal(a->held, b->held);
	assert_int_equal(a->since_ns, b->since_ns);
	assert_string_equal(a->reason, b->reason);
}

static void assert_plans_equal(const struct caad_plan *a, const struct caad_plan *b)
{
	assert_int_equal(a->n_decisions, b->n_decisions);
	assert_int_equal(a->n_settings, b->n_settings);
	assert_int_equal(a->n_moves, b->n_moves);
	assert_int_equal(a->n_forced, b->n_forced);
	for (size_t i = 0; i < a->n_decisions; i++) {
		const struct caad_decision *x = &a->decisions[i], *y = &b->decisions[i];

		assert_int_equal(x->flow, y->flow);
		assert_int_equal(x->flow_id, y->flow_id);
		assert_int_equal(x->iface, y->iface);
		assert_same_decision(x, y);
		assert_string_equal(x->considered, y->considered);
	}
	for (size_t i = 0; i < a->n_settings; i++) {
		const struct caad_setting *x = &a->settings[i], *y = &b->settings[i];

		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->iface, y->iface);
		assert_int_equal(x->queue, y->queue);
		assert_int_equal(x->irq, y->irq);
		assert_int_equal(x->pid, y->pid);
		assert_true(caad_cpumask_equal(&x->cpus, &y->cpus));
		assert_string_equal(x->reason, y->reason);
	}
}

static void random_inventory(uint64_t *rng, const struct caad_topology *t, struct fake_inv *f)
{
	fake_inv_init(f, 1 + rng_below(rng, 8), rng_below(rng, 3));
	for (unsigned i = 0; i < f->ifaces[0].n_rx; i++) {
		f->eth0[i].irq_managed = rng_below(rng, 5) == 0;
		if (i > 0 && rng_below(rng, 6) == 0)
			f->eth0[i].irq = f->eth0[0].irq; /* fewer vectors than queues */
		f->eth0[i].has_rps = rng_below(rng, 6) != 0;
		if (rng_below(rng, 8) == 0) /* neighbours may share one (fewer NAPIs than queues) */
			f->eth0[i].napi_kthread = 5000 + (pid_t)(i / 2);
	}
	if (rng_below(rng, 2) == 0) {
		f->ifaces[0].has_local_cpus = true;
		f->ifaces[0].local_cpus = t->packages[rng_below(rng, t->n_packages)].cpus;
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
		if (rng_below(rng, 2))
			fl[i].first_ns = NOW - rng_below(rng, 3000) * MSEC;
		/* a third of the consumers ran on other CPUs lately: mostly
		 * their LLC's, some anywhere, a few unknown */
		if (c >= 0 && rng_below(rng, 3) == 0) {
			fl[i].n_consumer_history = (uint8_t)(1 + rng_below(rng, CAAD_CONSUMER_HISTORY));
			for (unsigned h = 0; h < fl[i].n_consumer_history; h++) {
				unsigned x = rng_below(rng, t->n_cpus + 1);

				if (rng_below(rng, 3) && (unsigned)c < t->n_cpus && t->cpus[c].present &&
				    t->cpus[c].llc >= 0) {
					const struct caad_cpumask *llc = &t->llcs[t->cpus[c].llc].cpus;
					unsigned k = rng_below(rng, caad_cpumask_count(llc));

					x = (unsigned)caad_cpumask_next(llc, 0);
					while (k-- > 0)
						x = (unsigned)caad_cpumask_next(llc, (int)x + 1);
				}
				fl[i].consumer_history[h] = (uint16_t)x;
			}
		}
	}
}

/* The next cycle: consumers move (often within their LLC), rates drift. */
static void evolve_flows(uint64_t *rng, const struct caad_topology *t, struct caad_flow *fl, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int c = fl[i].consumer_cpu;
		unsigned what = rng_below(rng, 8);

		/* the window moves on by one scan, as caad_flows_update_history() does */
		if (c >= 0 && rng_below(rng, 6)) {
			unsigned nh = MIN(fl[i].n_consumer_history + 1u, (unsigned)CAAD_CONSUMER_HISTORY);

			memmove(&fl[i].consumer_history[1], &fl[i].consumer_history[0], (nh - 1) * sizeof(uint16_t));
			fl[i].consumer_history[0] = (uint16_t)c;
			fl[i].n_consumer_history = (uint8_t)nh;
		} else
			fl[i].n_consumer_history = 0;

		if (what == 0)
			fl[i].consumer_cpu = (int)rng_below(rng, t->n_cpus);
		else if (what <= 2 && c >= 0 && (unsigned)c < t->n_cpus && t->cpus[c].present) {
			const struct caad_cpumask *llc = &t->llcs[t->cpus[c].llc].cpus;
			unsigned k = rng_below(rng, caad_cpumask_count(llc));
			int x = caad_cpumask_next(llc, 0);
			while (k-- > 0)
				x = caad_cpumask_next(llc, x + 1);
			fl[i].consumer_cpu = x;
		}
		if (rng_below(rng, 3) == 0)
			fl[i].rate_bps = fl[i].rate_bps / 2 + rng_next(rng) % (10 * GBIT);
	}
}

struct prop_stats {
	unsigned steered, unsteered, held, moved, forced, shared, cases;
};

/* One case: plan, check, recompute (same), shuffle (same per flow), then
 * two more cycles with the plan before as the previous one. */
static void property_case(uint64_t *rng, const struct caad_topology *t, const char *what, struct prop_stats *st)
{
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL, *p2 = NULL, *again = NULL;
	struct caad_flow fl[24], shuffled[24];
	size_t n = rng_below(rng, ARRAY_SIZE(fl) + 1), perm[24];
	struct caad_policy policy;
	struct fake_inv f;
	uint64_t now = NOW;

	caad_policy_init(&policy);
	policy.allow_smt_sibling = rng_below(rng, 4) == 0;
	policy.allow_other_package = rng_below(rng, 4) == 0;
	policy.min_age_ms = rng_below(rng, 3) * 500;
	policy.dwell_ms = rng_below(rng, 4) * 500;
	policy.max_moves = 1 + rng_below(rng, 4);
	for (unsigned k = rng_below(rng, 4); k > 0; k--)
		caad_cpumask_set(&policy.banned, rng_below(rng, t->n_cpus));
	/* CPUs out of IRQ vectors, and Mechanisms= without RPS: queues that
	 * may have nothing for their owner's CPU */
	for (unsigned k = rng_below(rng, 3) == 0 ? t->n_cpus / 2 : 0; k > 0; k--)
		caad_cpumask_set(&policy.irq_banned, rng_below(rng, t->n_cpus));
	if (rng_below(rng, 4) == 0)
		policy.disabled_mechanisms |= 1u << CAAD_SETTING_RPS_CPUS;
	random_inventory(rng, t, &f);
	random_flows(rng, t, fl, n);

	p = compute_at(t, &f.inv, fl, n, &policy, NULL, now);
	check_plan(t, &f.inv, fl, n, &policy, p, NULL, what);
	again = compute_at(t, &f.inv, fl, n, &policy, NULL, now);
	assert_plans_equal(p, again);

	/* "Flows need not be sorted": the same flows in another order get the
	 * same decisions and the same settings. */
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = rng_below(rng, (unsigned)i), tmp = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = tmp;
	}
	for (size_t i = 0; i < n; i++)
		shuffled[i] = fl[perm[i]];
	p2 = compute_at(t, &f.inv, shuffled, n, &policy, NULL, now);
	check_plan(t, &f.inv, shuffled, n, &policy, p2, NULL, what);
	assert_int_equal(p2->n_decisions, p->n_decisions);
	assert_int_equal(p2->n_settings, p->n_settings);
	for (size_t i = 0; i < n; i++) {
		const struct caad_decision *a = decision_of(p, perm[i]), *b = decision_of(p2, i);

		assert_same_decision(a, b);
	}
	for (size_t i = 0; i < p->n_settings; i++) {
		assert_int_equal(p->settings[i].kind, p2->settings[i].kind);
		assert_int_equal(p->settings[i].queue, p2->settings[i].queue);
		assert_true(caad_cpumask_equal(&p->settings[i].cpus, &p2->settings[i].cpus));
	}

	for (unsigned cycle = 0; cycle < 2; cycle++) {
		_cleanup_(caad_plan_freep) struct caad_plan *next = NULL, *next2 = NULL;

		evolve_flows(rng, t, fl, n);
		if (rng_below(rng, 4) == 0)
			caad_cpumask_set(&policy.banned, rng_below(rng, t->n_cpus));
		now += rng_below(rng, 2000) * MSEC;
		next = compute_at(t, &f.inv, fl, n, &policy, p, now);
		check_plan(t, &f.inv, fl, n, &policy, next, p, what);
		next2 = compute_at(t, &f.inv, fl, n, &policy, p, now);
		assert_plans_equal(next, next2);

		/* The previous plan is found per flow in any order: flows
		 * shuffled against a plan in id order, flows in id order
		 * against a plan of shuffled flows (its by_id index). */
		for (size_t i = 0; i < n; i++)
			shuffled[i] = fl[perm[i]];
		_cleanup_(caad_plan_freep) struct caad_plan *nshuf = compute_at(t, &f.inv, shuffled, n, &policy, p, now);
		_cleanup_(caad_plan_freep) struct caad_plan *nfrom2 =
			cycle == 0 ? compute_at(t, &f.inv, fl, n, &policy, p2, now) : NULL;
		for (size_t i = 0; i < n; i++) {
			const struct caad_decision *a = decision_of(next, perm[i]), *b = decision_of(nshuf, i);
			const struct caad_decision *c2 = nfrom2 ? decision_of(nfrom2, perm[i]) : a;

			assert_same_decision(a, b);
			assert_same_decision(a, c2);
		}
		for (size_t k = 0; k < next->n_decisions; k++) {
			st->held += next->decisions[k].held;
			st->shared += next->decisions[k].shares_queue;
		}
		st->moved += next->n_moves;
		st->forced += next->n_forced;
		caad_plan_free(p);
		p = TAKE_PTR(next);
	}

	for (size_t k = 0; k < p->n_decisions; k++) {
		if (p->decisions[k].steer_cpu >= 0)
			st->steered++;
		else
			st->unsteered++;
	}
	st->cases++;
}

/* ---- RFS and ntuple rules ---------------------------------------------- */

/* The setting of kind for (iface, queue) that there must be. */
static const struct caad_setting *must(const struct caad_plan *p, enum caad_setting_kind kind, int iface,
                                       unsigned queue)
{
	const struct caad_setting *s = setting_of(p, kind, iface, queue);

	if (!s)
		fail_msg("no %s setting for iface %d rx-%u", caad_setting_kind_to_string(kind), iface, queue);
	return s;
}

static size_t count_kind(const struct caad_plan *p, enum caad_setting_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_settings; i++)
		n += p->settings[i].kind == kind;
	return n;
}

/* RFS where the closed loop placed a queue's owner on its consumer's own
 * CPU, off where it was on for any other owner, nothing elsewhere. */
static void check_rfs(const struct caad_inventory *inv, const struct caad_policy *policy, const struct caad_plan *p)
{
	bool rfs_on = false, table = false;

	for (size_t i = 0; i < inv->n_ifaces; i++)
		for (unsigned j = 0; j < inv->ifaces[i].n_rx; j++) {
			const struct caad_queue *q = &inv->ifaces[i].rx[j];
			const struct caad_setting *s = setting_of(p, CAAD_SETTING_RFS_FLOW_CNT, (int)i, q->index);
			const struct caad_decision *owner = NULL;

			for (size_t k = 0; k < p->n_decisions; k++) {
				const struct caad_decision *d = &p->decisions[k];

				if (d->iface == (int)i && d->steer_cpu >= 0 && !d->shares_queue &&
				    (d->queue == (int)q->index || d->queue < 0) &&
				    (setting_of(p, CAAD_SETTING_RPS_CPUS, (int)i, q->index) ||
				     setting_of(p, CAAD_SETTING_IRQ_AFFINITY, (int)i, q->index) ||
				     setting_of(p, CAAD_SETTING_KTHREAD_AFFINITY, (int)i, q->index)))
					owner = d;
			}
			bool same = owner && owner->relation == CAAD_RELATION_SAME_CORE;
			bool want = owner && q->has_rps_flow_cnt && (same || q->rps_flow_cnt > 0) &&
			            !(policy->disabled_mechanisms & (1u << CAAD_SETTING_RFS_FLOW_CNT));

			assert_int_equal(s != NULL, want);
			if (s)
				assert_int_equal(s->value > 0, same);
			rfs_on = rfs_on || (s && s->value > 0);
		}
	for (size_t i = 0; i < p->n_settings; i++)
		table = table || p->settings[i].kind == CAAD_SETTING_RFS_TABLE;
	assert_int_equal(table, rfs_on && inv->has_rfs_table && inv->rfs_table < CAAD_RFS_TABLE_ENTRIES);
}

/*
 * The closed loop's same-core placement gets RFS beside its single-CPU
 * setting: the queue's rps_flow_cnt (its share of the global table, a
 * power of two, the host's if larger) and the global table when it is too
 * small and visible; back on a peer core, RFS goes off where it is on.
 */
static void test_rfs_same_core(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_synthetic("package:1 core:4 pu:1");
	struct caad_flow fl[] = { make_flow(5, 1, VETH_IFINDEX, 0, 10 * GBIT), make_flow(9, 0, ETH0_IFINDEX, 1, 9 * GBIT) };
	struct caad_override o[] = { { .flow_id = 5, .cpu = 1, .why = "trial 1, round 1 of 6: same-core" },
		                     { .flow_id = 9, .cpu = 0, .why = "verdict: same-core" } };
	struct caad_policy policy;
	struct caad_cpumask want, none;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	fake_inv_init(&f, 4, 2);
	for (unsigned q = 0; q < 4; q++)
		f.eth0[q].has_rps_flow_cnt = true;
	for (unsigned q = 0; q < 2; q++)
		f.veth[q].has_rps_flow_cnt = true;
	f.inv.has_rfs_table = true;
	f.inv.rfs_table = 0;
	caad_cpumask_zero(&none);

	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);
		const struct caad_setting *s;

		check_rfs(&f.inv, &policy, p);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_SAME_CORE);
		assert_int_equal(p->decisions[1].relation, CAAD_RELATION_SAME_CORE);
		/* veth rx-0: RPS to the consumer's CPU (what RFS has no entry for) and RFS */
		want = single(1);
		assert_mask_equal(&must(p, CAAD_SETTING_RPS_CPUS, 1, 0)->cpus, &want);
		s = must(p, CAAD_SETTING_RFS_FLOW_CNT, 1, 0);
		assert_int_equal(s->value, 16384); /* 32768 over 2 queues */
		assert_non_null(strstr(s->reason, "RFS follows the consumer"));
		/* eth0 rx-1: its IRQ on the consumer's CPU, RPS off, and RFS */
		want = single(0);
		assert_mask_equal(&must(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1)->cpus, &want);
		assert_mask_equal(&must(p, CAAD_SETTING_RPS_CPUS, 0, 1)->cpus, &none);
		assert_int_equal(must(p, CAAD_SETTING_RFS_FLOW_CNT, 0, 1)->value, 8192);
		/* the global table once, with the first queue given RFS, after the queues */
		assert_int_equal(count_kind(p, CAAD_SETTING_RFS_TABLE), 1);
		s = &p->settings[p->n_settings - 1];
		assert_int_equal(s->kind, CAAD_SETTING_RFS_TABLE);
		assert_int_equal(s->value, CAAD_RFS_TABLE_ENTRIES);
		assert_int_equal(s->iface, 0);
		assert_int_equal(s->queue, 1);
		assert_non_null(strstr(s->reason, "0 entries now"));
		/* queue settings grouped: each queue's RFS right after its RPS mask */
		for (size_t i = 0; i < p->n_settings; i++)
			if (p->settings[i].kind == CAAD_SETTING_RFS_FLOW_CNT) {
				assert_true(i > 0);
				assert_int_equal(p->settings[i - 1].kind, CAAD_SETTING_RPS_CPUS);
				assert_int_equal(p->settings[i - 1].queue, p->settings[i].queue);
				assert_int_equal(p->settings[i - 1].iface, p->settings[i].iface);
			}
	}

	/* a larger table of the host is kept, the global one too */
	f.veth[0].rps_flow_cnt = 65536;
	f.inv.rfs_table = 65536;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);

		assert_int_equal(must(p, CAAD_SETTING_RFS_FLOW_CNT, 1, 0)->value, 65536);
		assert_int_equal(count_kind(p, CAAD_SETTING_RFS_TABLE), 0);
	}

	/* in another network namespace than the host's the table is not
	 * there: RFS on the queue anyway, and the reason says what it takes */
	f.veth[0].rps_flow_cnt = 0;
	f.inv.has_rfs_table = false;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);

		assert_int_equal(count_kind(p, CAAD_SETTING_RFS_TABLE), 0);
		assert_non_null(strstr(must(p, CAAD_SETTING_RFS_FLOW_CNT, 1, 0)->reason, "rps_sock_flow_entries not visible"));
	}

	/* Mechanisms= without rfs: the single-CPU settings alone */
	policy.disabled_mechanisms |= (1u << CAAD_SETTING_RFS_FLOW_CNT) | (1u << CAAD_SETTING_RFS_TABLE);
	f.inv.has_rfs_table = true;
	f.inv.rfs_table = 0;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);

		assert_int_equal(count_kind(p, CAAD_SETTING_RFS_FLOW_CNT), 0);
		assert_int_equal(count_kind(p, CAAD_SETTING_RFS_TABLE), 0);
		assert_int_equal(p->n_settings, 3);
	}
	policy.disabled_mechanisms = CAAD_MECHANISMS_DEFAULT_OFF;

	/* back on a peer core (no override): RFS off where it is on (caad's
	 * write, or the host's), left alone where it is off */
	policy.overrides = NULL;
	policy.n_overrides = 0;
	f.veth[0].rps_flow_cnt = 16384;
	f.eth0[1].rps_flow_cnt = 0;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);
		const struct caad_setting *s;

		check_plan(t, &f.inv, fl, 2, &policy, p, NULL, "rfs off");
		check_rfs(&f.inv, &policy, p);
		assert_int_equal(p->decisions[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		want = single((unsigned)p->decisions[0].steer_cpu);
		assert_mask_equal(&must(p, CAAD_SETTING_RPS_CPUS, 1, 0)->cpus, &want);
		s = must(p, CAAD_SETTING_RFS_FLOW_CNT, 1, 0);
		assert_int_equal(s->value, 0);
		assert_non_null(strstr(s->reason, "RFS off"));
		assert_null(setting_of(p, CAAD_SETTING_RFS_FLOW_CNT, 0, 1));
		assert_int_equal(count_kind(p, CAAD_SETTING_RFS_TABLE), 0);
	}
}

static struct caad_flow tcp4_flow(uint64_t id, int consumer_cpu, int rx_queue, uint64_t rate, uint8_t host,
                                  uint16_t rport)
{
	struct caad_flow f = make_flow(id, consumer_cpu, ETH0_IFINDEX, rx_queue, rate);

	f.family = AF_INET;
	memcpy(f.laddr, (uint8_t[]){ 10, 0, 0, 2 }, 4);
	memcpy(f.raddr, (uint8_t[]){ 10, 0, 0, host }, 4);
	f.lport = 5201;
	f.rport = rport;
	return f;
}

/*
 * Rule 6 with ntuple rules: two heavy flows on rx-0 whose consumers are on
 * different packages. Without rules (or a NIC that takes none) the faster
 * one wins and the other is conflicted; with them, the other one moves to
 * a queue without heavy flows, steered for it, and keeps it (and its rule)
 * while it lives; its rule goes with it.
 */
static void test_ntuple_conflict(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_flow fl[] = { tcp4_flow(1, 0, 0, 10 * GBIT, 1, 40001), tcp4_flow(2, 1, 0, 5 * GBIT, 3, 40002) };
	struct caad_policy policy;
	struct fake_inv f;
	const struct caad_decision *d;
	const struct caad_setting *s;

	(void)state;
	caad_policy_init(&policy);
	fake_inv_init(&f, 4, 0);
	f.ifaces[0].ntuple = true;

	/* the default: no ntuple rules, rule 6's "largest rate wins" */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);

		assert_int_equal(p->decisions[1].steer_cpu, -1);
		assert_non_null(strstr(p->decisions[1].reason, "conflicted"));
		assert_false(p->decisions[1].ntuple);
		assert_int_equal(count_kind(p, CAAD_SETTING_NTUPLE_RULE), 0);
	}

	policy.disabled_mechanisms = 0;
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = compute(t, &f.inv, fl, 2, &policy);
	check_plan(t, &f.inv, fl, 2, &policy, p1, NULL, "ntuple");
	assert_false(p1->decisions[0].ntuple);
	assert_int_equal(p1->decisions[0].queue, 0);
	d = &p1->decisions[1];
	assert_true(d->ntuple);
	assert_int_equal(d->queue, 1); /* the first queue without heavy flows */
	assert_true(d->steer_cpu >= 0);
	assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(t->cpus[d->steer_cpu].llc, t->cpus[1].llc);
	assert_non_null(strstr(d->reason, "moved by an ntuple rule from eth0 rx-0"));
	/* rx-1's IRQ goes to the moved flow's CPU; its rule after all queues */
	struct caad_cpumask want = single((unsigned)d->steer_cpu);
	assert_mask_equal(&must(p1, CAAD_SETTING_IRQ_AFFINITY, 0, 1)->cpus, &want);
	s = &p1->settings[p1->n_settings - 1];
	assert_int_equal(s->kind, CAAD_SETTING_NTUPLE_RULE);
	assert_int_equal(s->iface, 0);
	assert_int_equal(s->queue, 1);
	assert_int_equal(s->flow_id, 2);
	assert_int_equal(s->rule.family, AF_INET);
	assert_memory_equal(s->rule.laddr, ((uint8_t[]){ 10, 0, 0, 2 }), 4);
	assert_memory_equal(s->rule.raddr, ((uint8_t[]){ 10, 0, 0, 3 }), 4);
	assert_int_equal(s->rule.lport, 5201);
	assert_int_equal(s->rule.rport, 40002);
	assert_int_equal(count_kind(p1, CAAD_SETTING_NTUPLE_RULE), 1);

	/* next cycle, the rule works (seen on rx-1) or not yet (rx-0): it keeps
	 * its queue, its CPU and its rule */
	for (int seen = 0; seen < 2; seen++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p2 = NULL;

		fl[1].rx_queue = seen;
		p2 = compute_at(t, &f.inv, fl, 2, &policy, p1, NOW + 100 * MSEC);
		check_plan(t, &f.inv, fl, 2, &policy, p2, p1, "ntuple kept");
		assert_true(p2->decisions[1].ntuple);
		assert_int_equal(p2->decisions[1].queue, 1);
		assert_int_equal(p2->decisions[1].steer_cpu, d->steer_cpu);
		assert_true(p2->decisions[1].held);
		assert_int_equal(p2->decisions[1].since_ns, d->since_ns);
		assert_int_equal(count_kind(p2, CAAD_SETTING_NTUPLE_RULE), 1);
		assert_int_equal(p2->n_moves + p2->n_forced, 0);
	}

	/* the NIC refused its rule (the actuator says so): not kept on the
	 * rule's queue, nor moved by another rule, but conflicted on the
	 * queue it arrives on (the plan said it moved for as long as it
	 * lived: review) */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p2 = NULL;
		const uint64_t refused[] = { 2 };

		fl[1].rx_queue = 0;
		policy.ntuple_refused = refused;
		policy.n_ntuple_refused = ARRAY_SIZE(refused);
		p2 = compute_at(t, &f.inv, fl, 2, &policy, p1, NOW + 100 * MSEC);
		check_plan(t, &f.inv, fl, 2, &policy, p2, p1, "ntuple refused");
		assert_false(p2->decisions[1].ntuple);
		assert_int_equal(p2->decisions[1].steer_cpu, -1);
		assert_int_equal(count_kind(p2, CAAD_SETTING_NTUPLE_RULE), 0);
		policy.ntuple_refused = NULL;
		policy.n_ntuple_refused = 0;
	}

	/* the flow ended: no rule (the actuator deletes it) */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p3 = compute_at(t, &f.inv, fl, 1, &policy, p1, NOW + 200 * MSEC);

		assert_int_equal(count_kind(p3, CAAD_SETTING_NTUPLE_RULE), 0);
		assert_null(setting_of(p3, CAAD_SETTING_IRQ_AFFINITY, 0, 1));
	}

	/* no tuple known, or a NIC that takes no rules: conflicted */
	fl[1].rx_queue = 0;
	fl[1].family = 0;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);

		assert_int_equal(p->decisions[1].steer_cpu, -1);
		assert_int_equal(count_kind(p, CAAD_SETTING_NTUPLE_RULE), 0);
	}
	fl[1].family = AF_INET;
	f.ifaces[0].ntuple = false;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);

		assert_int_equal(p->decisions[1].steer_cpu, -1);
		assert_int_equal(count_kind(p, CAAD_SETTING_NTUPLE_RULE), 0);
	}
}

/*
 * Where to: a queue whose owner's CPU serves the moved flow too is shared
 * (no queue spent), before a queue without heavy flows; the conflicted
 * flows go fastest first, so a slower one may share the queue a faster
 * one was moved to; no queue Mechanisms= can steer: conflicted. IPv6 and
 * IPv4-mapped tuples.
 */
static void test_ntuple_targets(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	struct caad_flow fl[] = { tcp4_flow(1, 0, 0, 10 * GBIT, 1, 40001), tcp4_flow(2, 1, 2, 9 * GBIT, 2, 40002),
		                  tcp4_flow(3, 3, 0, 5 * GBIT, 3, 40003), tcp4_flow(4, 5, 0, 4 * GBIT, 4, 40004) };
	static const uint8_t v6l[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
	static const uint8_t v6r[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4 };
	struct caad_policy policy;
	struct fake_inv f;

	(void)state;
	caad_policy_init(&policy);
	policy.disabled_mechanisms = 0;
	fake_inv_init(&f, 3, 0);
	f.ifaces[0].ntuple = true;
	/* flow 3: an IPv4 peer of a dual-stack socket; flow 4: IPv6 */
	fl[2].family = AF_INET6;
	memset(fl[2].laddr, 0, 16);
	memset(fl[2].raddr, 0, 16);
	fl[2].laddr[10] = fl[2].laddr[11] = fl[2].raddr[10] = fl[2].raddr[11] = 0xff;
	memcpy(fl[2].laddr + 12, (uint8_t[]){ 10, 0, 0, 2 }, 4);
	memcpy(fl[2].raddr + 12, (uint8_t[]){ 10, 0, 0, 3 }, 4);
	fl[3].family = AF_INET6;
	memcpy(fl[3].laddr, v6l, 16);
	memcpy(fl[3].raddr, v6r, 16);

	/* flows 3 and 4 (consumers on package 1) share rx-2, steered for flow 2
	 * (consumer on CPU 1, package 1); rx-1 stays free */
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 4, &policy);

		check_plan(t, &f.inv, fl, 4, &policy, p, NULL, "ntuple targets");
		for (size_t k = 2; k < 4; k++) {
			const struct caad_decision *d = &p->decisions[k];

			assert_true(d->ntuple && d->shares_queue);
			assert_int_equal(d->queue, 2);
			assert_int_equal(d->steer_cpu, p->decisions[1].steer_cpu);
			assert_non_null(strstr(d->reason, "moved by an ntuple rule from eth0 rx-0 to rx-2"));
		}
		assert_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1));
		assert_int_equal(count_kind(p, CAAD_SETTING_NTUPLE_RULE), 2);
		for (size_t i = 0; i < p->n_settings; i++) {
			const struct caad_setting *s = &p->settings[i];

			if (s->kind != CAAD_SETTING_NTUPLE_RULE)
				continue;
			assert_int_equal(s->queue, 2);
			if (s->flow_id == 3) {
				assert_int_equal(s->rule.family, AF_INET); /* the packets are IPv4 */
				assert_memory_equal(s->rule.laddr, ((uint8_t[]){ 10, 0, 0, 2 }), 4);
				assert_memory_equal(s->rule.raddr, ((uint8_t[]){ 10, 0, 0, 3 }), 4);
			} else {
				assert_int_equal(s->flow_id, 4);
				assert_int_equal(s->rule.family, AF_INET6);
				assert_memory_equal(s->rule.laddr, v6l, 16);
				assert_memory_equal(s->rule.raddr, v6r, 16);
				assert_int_equal(s->rule.lport, 5201);
				assert_int_equal(s->rule.rport, 40004);
			}
		}
	}

	/* without flow 2: the faster, flow 3, takes the free rx-1, and flow 4
	 * shares it (whatever the flows' order) */
	struct caad_flow three[] = { fl[3], fl[0], fl[2] };
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, three, 3, &policy);
		const struct caad_decision *d3 = decision_of(p, 2), *d4 = decision_of(p, 0);

		check_plan(t, &f.inv, three, 3, &policy, p, NULL, "ntuple free queue");
		assert_true(d3->ntuple && !d3->shares_queue);
		assert_int_equal(d3->queue, 1);
		assert_true(d4->ntuple && d4->shares_queue);
		assert_int_equal(d4->queue, 1);
		assert_int_equal(d4->steer_cpu, d3->steer_cpu);
		assert_non_null(setting_of(p, CAAD_SETTING_IRQ_AFFINITY, 0, 1));
	}

	/* rx-1 and rx-2 steerable by nothing Mechanisms= allows (RPS only,
	 * off): flows 3 and 4 stay conflicted */
	f.eth0[1].irq = f.eth0[2].irq = -1;
	policy.disabled_mechanisms = 1u << CAAD_SETTING_RPS_CPUS;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, three, 3, &policy);

		for (size_t i = 0; i < 3; i += 2) {
			assert_int_equal(decision_of(p, i)->steer_cpu, -1);
			assert_false(decision_of(p, i)->ntuple);
			assert_int_equal(decision_of(p, i)->queue, 0);
			assert_non_null(strstr(decision_of(p, i)->reason, "conflicted"));
		}
		assert_int_equal(count_kind(p, CAAD_SETTING_NTUPLE_RULE), 0);
	}
}

/*
 * A follower's CPU is its owner's, and that may be a consumer's core: the
 * closed loop put the owner on its own reader's CPU, or the owner is held
 * for DwellMSec= on a core another reader has taken since. The follower is
 * then conflicted, not served there, and an ntuple rule may move it.
 */
static void test_follower_consumer_core(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	/* owner 1 (reader on CPU 0) and follower 2 (reader on CPU 4, same L3) on rx-2 */
	struct caad_flow fl[] = { tcp4_flow(1, 0, 2, 10 * GBIT, 1, 40001), tcp4_flow(2, 4, 2, 5 * GBIT, 2, 40002),
		                  tcp4_flow(3, -1, 0, 8 * GBIT, 3, 40003) };
	struct caad_override o[] = { { .flow_id = 1, .cpu = 0, .why = "verdict: same-core" } };
	struct caad_policy policy;
	struct fake_inv f;
	const struct caad_decision *d;

	(void)state;
	caad_policy_init(&policy);
	policy.dwell_ms = 60000;
	fake_inv_init(&f, 4, 0);
	f.ifaces[0].ntuple = true;

	/* the closed loop's same-core placement: CPU 0 is the owner's reader's */
	policy.overrides = o;
	policy.n_overrides = ARRAY_SIZE(o);
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);

		assert_int_equal(p->decisions[0].steer_cpu, 0);
		d = &p->decisions[1];
		assert_int_equal(d->steer_cpu, -1);
		assert_false(d->shares_queue);
		assert_non_null(strstr(d->reason, "conflicted: eth0 rx-2 is steered to CPU 0"));
		assert_non_null(strstr(d->reason, "the core of that flow's own consumer"));
	}
	/* ... which an ntuple rule moves it away from, to a core of its own */
	policy.disabled_mechanisms = 0;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute(t, &f.inv, fl, 2, &policy);

		d = &p->decisions[1];
		assert_true(d->ntuple && !d->shares_queue);
		assert_int_equal(d->queue, 0);
		assert_int_equal(d->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
		assert_int_not_equal(t->cpus[d->steer_cpu].core, t->cpus[0].core);
		assert_int_not_equal(t->cpus[d->steer_cpu].core, t->cpus[4].core);
		assert_int_equal(count_kind(p, CAAD_SETTING_NTUPLE_RULE), 1);
	}
	policy.disabled_mechanisms = CAAD_MECHANISMS_DEFAULT_OFF;
	policy.overrides = NULL;
	policy.n_overrides = 0;

	/* DwellMSec=: the owner alone gets a peer core; then flow 3's reader
	 * comes to that core, and the owner keeps it for now */
	_cleanup_(caad_plan_freep) struct caad_plan *p1 = compute(t, &f.inv, fl, 1, &policy);
	int x = p1->decisions[0].steer_cpu;

	assert_true(x >= 0);
	assert_int_not_equal(t->cpus[x].core, t->cpus[4].core);
	assert_int_equal(t->cpus[x].llc, t->cpus[4].llc);
	fl[2].consumer_cpu = x;
	{
		_cleanup_(caad_plan_freep) struct caad_plan *p = compute_at(t, &f.inv, fl, 3, &policy, p1, NOW + MSEC);

		check_plan(t, &f.inv, fl, 3, &policy, p, p1, "follower on a consumer's core");
		assert_int_equal(p->decisions[0].steer_cpu, x);
		assert_true(p->decisions[0].held);
		d = &p->decisions[1];
		assert_int_equal(d->steer_cpu, -1);
		assert_false(d->shares_queue);
		assert_non_null(strstr(d->reason, "a consumer's core (iperf3-3/4003)"));
	}
}

/* The same flows in any order, and again: the same moves (the conflicted
 * flows are moved fastest first), across cycles with RFS and overrides. */
static void test_property_ntuple_rfs(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	uint64_t rng = 0x6e7475706c65ull;
	unsigned moved = 0, rfs = 0;

	(void)state;
	for (unsigned c = 0; c < 300; c++) {
		_cleanup_(caad_plan_freep) struct caad_plan *p = NULL, *p2 = NULL;
		struct caad_flow fl[24], shuffled[24];
		struct caad_override o[4];
		size_t n = 1 + rng_below(&rng, ARRAY_SIZE(fl)), no = 0;
		struct caad_policy policy;
		struct fake_inv f;
		char what[32];

		snprintf(what, sizeof(what), "ntuple case %u", c);
		caad_policy_init(&policy);
		policy.disabled_mechanisms = rng_below(&rng, 4) == 0 ? CAAD_MECHANISMS_DEFAULT_OFF : 0;
		policy.max_moves = 1 + rng_below(&rng, 4);
		policy.dwell_ms = rng_below(&rng, 3) * 500;
		random_inventory(&rng, t, &f);
		f.ifaces[0].ntuple = rng_below(&rng, 4) != 0;
		f.inv.has_rfs_table = rng_below(&rng, 2);
		f.inv.rfs_table = rng_below(&rng, 2) ? 0 : 65536;
		for (unsigned q = 0; q < f.ifaces[0].n_rx; q++) {
			f.eth0[q].has_rps_flow_cnt = f.eth0[q].has_rps;
			f.eth0[q].rps_flow_cnt = f.eth0[q].has_rps && rng_below(&rng, 4) == 0 ? 4096 : 0;
		}
		random_flows(&rng, t, fl, n);
		for (size_t i = 0; i < n; i++) {
			fl[i].family = rng_below(&rng, 8) ? AF_INET : 0;
			memcpy(fl[i].laddr, (uint8_t[]){ 10, 0, 0, 2 }, 4);
			memcpy(fl[i].raddr, (uint8_t[]){ 10, 0, 1, (uint8_t)i }, 4);
			fl[i].lport = 5201;
			fl[i].rport = (uint16_t)(30000 + i);
			/* the closed loop puts some on their consumer's own CPU */
			if (no < ARRAY_SIZE(o) && fl[i].consumer_cpu >= 0 && fl[i].consumer_cpu < 24 && rng_below(&rng, 5) == 0)
				o[no++] = (struct caad_override){ .flow_id = fl[i].id, .cpu = fl[i].consumer_cpu, .why = "test" };
		}
		/* overrides sorted by flow id, as the daemon gives them */
		for (size_t i = 1; i < no; i++)
			for (size_t j = i; j > 0 && o[j - 1].flow_id > o[j].flow_id; j--) {
				struct caad_override tmp = o[j];
				o[j] = o[j - 1];
				o[j - 1] = tmp;
			}
		policy.overrides = o;
		policy.n_overrides = no;

		p = compute(t, &f.inv, fl, n, &policy);
		if (no)
			check_rfs(&f.inv, &policy, p);
		else
			check_plan(t, &f.inv, fl, n, &policy, p, NULL, what);
		for (size_t i = 0; i < n; i++)
			shuffled[i] = fl[n - 1 - i];
		p2 = compute(t, &f.inv, shuffled, n, &policy);
		assert_int_equal(p->n_settings, p2->n_settings);
		for (size_t i = 0; i < n; i++) {
			const struct caad_decision *a = decision_of(p, i), *b = decision_of(p2, n - 1 - i);

			assert_same_decision(a, b);
			if (!a)
				continue;
			assert_int_equal(a->ntuple, b->ntuple);
			moved += a->ntuple;
		}
		for (size_t i = 0; i < p->n_settings; i++) {
			assert_int_equal(p->settings[i].kind, p2->settings[i].kind);
			assert_int_equal(p->settings[i].queue, p2->settings[i].queue);
			assert_int_equal(p->settings[i].value, p2->settings[i].value);
			rfs += p->settings[i].kind == CAAD_SETTING_RFS_FLOW_CNT;
		}

		/* two more cycles, the plan before as the previous one */
		for (unsigned cycle = 0; cycle < 2; cycle++) {
			_cleanup_(caad_plan_freep) struct caad_plan *next = NULL;

			evolve_flows(&rng, t, fl, n);
			next = compute_at(t, &f.inv, fl, n, &policy, p, NOW + (cycle + 1) * 700 * MSEC);
			if (no)
				check_rfs(&f.inv, &policy, next);
			else
				check_plan(t, &f.inv, fl, n, &policy, next, p, what);
			caad_plan_free(p);
			p = TAKE_PTR(next);
		}
	}
	print_message("300 cases: %u flows moved by ntuple rules, %u RFS settings\n", moved, rfs);
	assert_true(moved > 0);
	assert_true(rfs > 0);
}

/* The machines of the fixtures and the issue's synthetic layouts. */
static void test_property_fixtures(void **state)
{
	static const char *const xmls[] = {
		"24em64t-2n6c2t-pci.xml",
		"32em64t-2n8c2t-pci-normalio.xml",
		"16intel64-manyVFs.xml",
		"16em64t-4s2c2t-offlines.xml",
	};
	static const char *const synthetics[] = {
		"package:2 l3:4 core:4 pu:2",
		"package:1 l3:8 core:8 pu:2",
		"package:4 numa:2 l3:2 core:4 pu:1",
		"package:2 core:4 pu:2",
		"package:1 core:2 pu:1",
	};
	uint64_t rng = UINT64_C(0x5eed0fca4d);
	struct prop_stats st = {};

	(void)state;
	for (size_t ti = 0; ti < ARRAY_SIZE(xmls) + ARRAY_SIZE(synthetics); ti++) {
		bool xml = ti < ARRAY_SIZE(xmls);
		const char *tname = xml ? xmls[ti] : synthetics[ti - ARRAY_SIZE(xmls)];
		_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;

		t = xml ? load_fixture(tname) : load_synthetic(tname);
		for (unsigned round = 0; round < 100; round++) {
			char what[128];

			snprintf(what, sizeof(what), "%s round %u", tname, round);
			property_case(&rng, t, what, &st);
		}
	}
	print_message("%u cases: %u steered, %u unsteered, %u held, %u shared, %u moves, %u forced\n", st.cases,
	              st.steered, st.unsteered, st.held, st.shared, st.moved, st.forced);
	/* The generator exercised every outcome. */
	assert_true(st.steered > 100);
	assert_true(st.unsteered > 20);
	assert_true(st.held > 20);
	assert_true(st.shared > 5);
	assert_true(st.moved > 5);
	assert_true(st.forced > 5);
}

/* Random machines: 1-4 packages, NUMA or not, 1-4 LLCs each, 1-6 cores, SMT or not. */
static void test_property_random_topologies(void **state)
{
	uint64_t rng = UINT64_C(0xca4dbe4c4);
	struct prop_stats st = {};

	(void)state;
	for (unsigned round = 0; round < 500; round++) {
		_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
		char desc[96], what[160];
		unsigned packages = 1 + rng_below(&rng, 4);

		snprintf(desc, sizeof(desc), "package:%u %sl3:%u core:%u pu:%u", packages,
		         rng_below(&rng, 3) == 0 ? "numa:2 " : "", 1 + rng_below(&rng, 4), 1 + rng_below(&rng, 6),
		         1 + rng_below(&rng, 2));
		t = load_synthetic(desc);
		snprintf(what, sizeof(what), "\"%s\" round %u", desc, round);
		property_case(&rng, t, what, &st);
	}
	print_message("%u cases: %u steered, %u unsteered, %u held, %u shared, %u moves, %u forced\n", st.cases,
	              st.steered, st.unsteered, st.held, st.shared, st.moved, st.forced);
	assert_int_equal(st.cases, 500);
	assert_true(st.steered > 100);
	assert_true(st.unsteered > 20);
	assert_true(st.held > 20);
}

/* The CPUs a steered flow's reader may move between are exactly those
 * where the next plan keeps its target: the observer wakes the daemon
 * for a move anywhere else, and only then. */
static void test_decision_stay(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	struct caad_cpumask stay, llc;
	struct caad_decision hand;
	struct caad_policy policy;
	struct caad_flow fl;
	struct fake_inv f;
	unsigned held = 0, changed = 0;

	(void)state;
	caad_policy_init(&policy);
	policy.dwell_ms = 0;
	fake_inv_init(&f, 4, 1);
	fl = make_flow(1, 0, ETH0_IFINDEX, 0, 10 * GBIT);
	p = compute(t, &f.inv, &fl, 1, &policy);
	assert_int_equal(p->n_decisions, 1);
	const struct caad_decision *d = &p->decisions[0];
	assert_true(d->steer_cpu >= 0);

	caad_decision_stay(t, d, &stay);
	llc = t->llcs[t->cpus[0].llc].cpus;
	assert_true(caad_cpumask_test(&stay, 0));
	assert_false(caad_cpumask_test(&stay, (unsigned)d->steer_cpu));
	/* the LLC less the steered core (two threads) */
	assert_int_equal(caad_cpumask_count(&stay), caad_cpumask_count(&llc) - 2);
	for (unsigned cpu = 0; cpu < t->n_cpus; cpu++) {
		_cleanup_(caad_plan_freep) struct caad_plan *next = NULL;
		struct caad_flow moved = fl;

		if (!t->cpus[cpu].usable)
			continue;
		moved.consumer_cpu = (int)cpu;
		next = compute_at(t, &f.inv, &moved, 1, &policy, p, NOW + 1000 * MSEC);
		assert_int_equal(next->n_decisions, 1);
		if (caad_cpumask_test(&stay, cpu)) {
			assert_int_equal(next->decisions[0].steer_cpu, d->steer_cpu);
			assert_true(next->decisions[0].held);
			held++;
		} else {
			if (next->decisions[0].steer_cpu == d->steer_cpu)
				fail_msg("reader on CPU %u, outside its stay set: target %d kept", cpu, d->steer_cpu);
			changed++;
		}
	}
	print_message("reader moved to each CPU: target kept on %u (its stay set), changed on %u\n", held, changed);
	assert_int_equal(held, caad_cpumask_count(&stay));

	/* a trial's same-core placement holds while the reader keeps to its core */
	hand = *d;
	hand.consumer_cpu = hand.steer_cpu = 4;
	hand.relation = CAAD_RELATION_SAME_CORE;
	caad_decision_stay(t, &hand, &stay);
	assert_true(caad_cpumask_equal(&stay, &t->cores[t->cpus[4].core].cpus));
	/* nothing to follow for an unsteered flow */
	hand.steer_cpu = -1;
	caad_decision_stay(t, &hand, &stay);
	assert_true(caad_cpumask_empty(&stay));
}

/* Plans made with a scratch, each given back when the next is made (the
 * daemon's way), are the plans made without one; the memory is reused. */
static void test_scratch(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = load_24em64t();
	_cleanup_(caad_plan_scratch_freep) struct caad_plan_scratch *s = NULL;
	_cleanup_(caad_plan_freep) struct caad_plan *plain = NULL;
	struct caad_plan *kept = NULL;
	uint64_t rng = UINT64_C(0x5c7a7c4);
	unsigned reused = 0;
	struct fake_inv f;

	(void)state;
	assert_int_equal(caad_plan_scratch_new(&s), 0);
	random_inventory(&rng, t, &f);
	f.ifaces[0].ntuple = true;
	for (unsigned cycle = 0; cycle < 60; cycle++) {
		struct caad_flow fl[24];
		size_t n = rng_below(&rng, ARRAY_SIZE(fl) + 1);
		uint64_t now = NOW + cycle * 700 * MSEC;
		const void *spare = NULL;
		struct caad_policy policy;
		struct caad_plan *p = NULL, *q;

		caad_policy_init(&policy);
		policy.disabled_mechanisms = cycle % 2 ? 0 : CAAD_MECHANISMS_DEFAULT_OFF;
		random_flows(&rng, t, fl, n);
		/* the scratch holds the decisions of the plan before the one kept */
		q = compute_at(t, &f.inv, fl, n, &policy, plain, now);
		assert_int_equal(caad_plan_compute_with(s, t, &f.inv, fl, n, &policy, kept, now, &p), 0);
		assert_plans_equal(q, p);
		caad_plan_free(plain);
		plain = q;
		if (kept && kept->decisions_cap >= (n ? n : 1))
			spare = kept->decisions;
		caad_plan_recycle(s, kept);
		kept = p;
		if (spare) {
			/* the next plan takes the recycled room when it fits */
			struct caad_plan *probe = NULL;

			assert_int_equal(caad_plan_compute_with(s, t, &f.inv, fl, n, &policy, kept, now, &probe), 0);
			reused += probe->decisions == spare;
			assert_ptr_equal(probe->decisions, spare);
			caad_plan_recycle(s, probe);
		}
	}
	caad_plan_recycle(s, kept);
	caad_plan_recycle(NULL, NULL);
	print_message("60 plans made with a scratch, the recycled decisions reused %u times\n", reused);
	assert_true(reused > 10);
}

/* A plan made by hand is found by id, sorted or not. */
static void test_plan_from_decisions(void **state)
{
	struct caad_decision *d = calloc(3, sizeof(*d));
	struct caad_plan *p = NULL;

	(void)state;
	assert_non_null(d);
	d[0] = (struct caad_decision){ .flow_id = 30, .steer_cpu = 3, .reason = "", .considered = "" };
	d[1] = (struct caad_decision){ .flow_id = 10, .steer_cpu = 1, .reason = "", .considered = "" };
	d[2] = (struct caad_decision){ .flow_id = 20, .steer_cpu = 2, .reason = "", .considered = "" };
	assert_int_equal(caad_plan_from_decisions(d, 3, NOW, &p), 0);
	for (uint64_t id = 10; id <= 30; id += 10)
		assert_int_equal(caad_plan_find(p, id)->steer_cpu, (int)(id / 10));
	assert_null(caad_plan_find(p, 15));
	assert_null(caad_plan_find(p, 0));
	assert_null(caad_plan_find(p, 31));
	assert_int_equal(p->now_ns, NOW);
	caad_plan_free(p);

	assert_int_equal(caad_plan_from_decisions(NULL, 0, 0, &p), 0);
	assert_null(caad_plan_find(p, 1));
	caad_plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_defaults),
		cmocka_unit_test(test_no_flows),
		cmocka_unit_test(test_too_many_interfaces),
		cmocka_unit_test(test_peer_core_every_consumer),
		cmocka_unit_test(test_setting_kinds),
		cmocka_unit_test(test_rate_threshold),
		cmocka_unit_test(test_unmanaged_ifindex),
		cmocka_unit_test(test_rx_queue_unknown),
		cmocka_unit_test(test_rx_queue_not_in_inventory),
		cmocka_unit_test(test_conflict_same_queue),
		cmocka_unit_test(test_spread_by_load),
		cmocka_unit_test(test_spread_more_flows_than_peers),
		cmocka_unit_test(test_banned),
		cmocka_unit_test(test_banned_llc_falls_back_to_package),
		cmocka_unit_test(test_banned_thread_leaves_sibling),
		cmocka_unit_test(test_nothing_usable),
		cmocka_unit_test(test_two_cpu_vm),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_override_marked),
		cmocka_unit_test(test_override_reader),
		cmocka_unit_test(test_count_readers),
		cmocka_unit_test(test_own_cpus),
		cmocka_unit_test(test_override_host),
		cmocka_unit_test(test_window_fills_llc),
		cmocka_unit_test(test_ten_flows_distinct_peers),
		cmocka_unit_test(test_banned_list),
		cmocka_unit_test(test_shared_queue),
		cmocka_unit_test(test_owner_without_peer),
		cmocka_unit_test(test_kthread_setting),
		cmocka_unit_test(test_kthread_shared),
		cmocka_unit_test(test_kthread_shared_host),
		cmocka_unit_test(test_kthread_host_of_unknown_queue),
		cmocka_unit_test(test_kthread_follower_apart),
		cmocka_unit_test(test_consumer_without_llc),
		cmocka_unit_test(test_window_tie_anchor),
		cmocka_unit_test(test_mechanisms),
		cmocka_unit_test(test_nic_locality_note),
		cmocka_unit_test(test_back_to_llc_peer),
		cmocka_unit_test(test_owner_dwell),
		cmocka_unit_test(test_unmanaged_reader_core),
		cmocka_unit_test(test_other_package_nic_first),
		cmocka_unit_test(test_upper_device_by_napi),
		cmocka_unit_test(test_age_and_rate_band),
		cmocka_unit_test(test_hysteresis_within_llc),
		cmocka_unit_test(test_hysteresis_forced),
		cmocka_unit_test(test_owner_keeps_queue),
		cmocka_unit_test(test_window_tie_keeps_anchor),
		cmocka_unit_test(test_unsteerable_queue),
		cmocka_unit_test(test_settingless_owner),
		cmocka_unit_test(test_dwell),
		cmocka_unit_test(test_moves_bound),
		cmocka_unit_test(test_collision_with_consumer),
		cmocka_unit_test(test_untouched_queues),
		cmocka_unit_test(test_considered),
		cmocka_unit_test(test_considered_os_numbers),
		cmocka_unit_test(test_synthetic_layouts),
		cmocka_unit_test(test_window_one_llc),
		cmocka_unit_test(test_window_two_llcs),
		cmocka_unit_test(test_window_hysteresis),
		cmocka_unit_test(test_window_sibling_hop),
		cmocka_unit_test(test_plan_from_decisions),
		cmocka_unit_test(test_property_fixtures),
		cmocka_unit_test(test_property_random_topologies),
		cmocka_unit_test(test_scratch),
		cmocka_unit_test(test_decision_stay),
		cmocka_unit_test(test_rfs_same_core),
		cmocka_unit_test(test_ntuple_conflict),
		cmocka_unit_test(test_ntuple_targets),
		cmocka_unit_test(test_follower_consumer_core),
		cmocka_unit_test(test_property_ntuple_rfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
