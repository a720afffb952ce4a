/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The closed loop's bookkeeping (src/caad/closedloop.c, the daemon's): which
 * flow gets a trial, against what, and what becomes of it. Each scan is the
 * daemon's: closed_loop_prepare(), the real planner, the real actuator on a
 * fake sysroot (an interface with RPS only, and the readers' CPU affinities
 * in /proc/PID/task/TID/status), closed_loop_applied(). Flows and the
 * clock are the test's; there is no observer (no CPU time is counted,
 * which the decision rule takes as unknown) and no bus (stubbed below).
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "caad/apply.h"
#include "caad/config.h"
#include "caad/inventory.h"
#include "caad/macro.h"
#include "caad/plan.h"
#include "caad/sysfs.h"
#include "caad/topology.h"
#include "caad/trial.h"
#include "caad/verdict.h"
#include "closedloop.h"
#include "daemon.h"
#include "dbus.h"

#include "test-util.h"

#define GBIT UINT64_C(1000000000)
#define MSEC UINT64_C(1000000)
#define SCAN_NS (500 * MSEC)
#define IFINDEX 2

/* ---- the rest of the daemon, as closedloop.c sees it ------------------ */

static uint64_t clock_ns; /* the test's CLOCK_MONOTONIC */

uint64_t now_usec(clockid_t clock)
{
	(void)clock;
	return clock_ns / 1000;
}

void caad_bus_trial_finished(struct caad_bus *b, unsigned trial, const char *verdict)
{
	(void)b;
	(void)trial;
	(void)verdict;
}

/* ---- fixture ----------------------------------------------------------- */

struct fixture {
	char *top;  /* the temp dir */
	char *root; /* TOP/root: the fake sysroot */
	char *state; /* TOP/state: the verdicts */
	struct args args;
	struct daemon d;
	struct caad_flow flows[4];
	size_t n_flows;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char *names[] = { "vb" };
	struct caad_actuator_options opts = {};
	_cleanup_free_ char *journal = NULL;
	struct daemon *d;

	if (!fx)
		return -1;
	fx->top = strdup("/tmp/caad-test-closedloop-XXXXXX");
	if (!fx->top || !mkdtemp(fx->top) || caad_path(&fx->root, fx->top, "/root") < 0 ||
	    caad_path(&fx->state, fx->top, "/state") < 0 || caad_path(&journal, fx->top, "/journal") < 0 ||
	    mkdir(fx->root, 0755) < 0)
		return -1;
	/* vb: two rx queues with RPS and no IRQ (a virtual device) */
	write_file(fx->root, "sys/class/net/vb/ifindex", "2\n");
	write_file(fx->root, "sys/class/net/vb/queues/rx-0/rps_cpus", "0\n");
	write_file(fx->root, "sys/class/net/vb/queues/rx-1/rps_cpus", "0\n");
	write_file(fx->root, "sys/class/net/vb/queues/tx-0/xps_cpus", "0\n");
	write_file(fx->root, "sys/devices/system/cpu/possible", "0-7\n");

	d = &fx->d;
	fx->args.sysroot = fx->root;
	d->args = &fx->args;
	caad_config_init(&d->config);
	d->config.placement = CAAD_PLACEMENT_MEASURE;
	d->config.policy.rate_threshold_bps = GBIT;
	d->config.policy.min_age_ms = 0;
	d->config.policy.dwell_ms = 2000;
	d->config.trial_steady_ms = 1000;
	d->config.trial_host = false;
	d->config.trial.rounds = 2;
	d->config.trial.turn_ms = 2000;
	d->config.trial.settle_ms = 500;
	/* one package, one L3, 4 cores of 2 PUs: cores {0,1} {2,3} {4,5} {6,7} */
	if (caad_topology_load_synthetic("package:1 l3:1 core:4 pu:2", &d->topo) < 0 ||
	    caad_inventory_load(fx->root, names, 1, &d->inv) < 0)
		return -1;
	opts = (struct caad_actuator_options){ .sysroot = fx->root, .journal_path = journal };
	if (caad_actuator_new(&opts, &d->actuator) < 0 || closed_loop_init(&d->loop, fx->state) < 0)
		return -1;
	/* no store read: the test's verdicts are the loop's */
	d->loop.verdicts_loaded = true;
	clock_ns = UINT64_C(3600) * 1000 * MSEC;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	struct daemon *d = &fx->d;
	int r;

	closed_loop_done(&d->loop);
	caad_plan_free(d->plan);
	caad_actuator_free(d->actuator);
	caad_inventory_free(d->inv);
	caad_topology_free(d->topo);
	caad_config_done(&d->config);
	r = test_rm_tree(fx->top);
	free(fx->root);
	free(fx->state);
	free(fx->top);
	free(fx);
	return r;
}

/*
 * A flow (ids in increasing order: the daemon's flows are sorted) read by
 * thread 4000 + id of comm, pinned to CPU cpu, on rx queue queue of vb,
 * seen since the start.
 */
static struct caad_flow *add_flow(struct fixture *fx, uint64_t id, const char *comm, int cpu, int queue,
                                  uint64_t rate_bps)
{
	struct caad_flow *f = &fx->flows[fx->n_flows++];
	char rel[128], status[128];

	assert_true(fx->n_flows <= ARRAY_SIZE(fx->flows));
	*f = (struct caad_flow){
		.id = id,
		.rate_bps = rate_bps,
		.first_ns = 1,
		.consumer_cpu = cpu,
		.ifindex = IFINDEX,
		.rx_queue = queue,
		.pid = 4000 + (uint32_t)id,
		.tid = 4000 + (uint32_t)id,
		.proc_cpu = -1,
	};
	snprintf(f->comm, sizeof(f->comm), "%s", comm);
	snprintf(rel, sizeof(rel), "proc/%u/task/%u/status", f->pid, f->tid);
	snprintf(status, sizeof(status), "Name:\t%s\nCpus_allowed_list:\t%d\n", comm, cpu);
	write_file(fx->root, rel, status);
	return f;
}

/* One scan, SCAN_NS after the last, as the daemon's (daemon.c scan()). */
static void scan(struct fixture *fx)
{
	struct daemon *d = &fx->d;
	struct caad_plan *plan = NULL;

	clock_ns += SCAN_NS;
	for (size_t i = 0; i < fx->n_flows; i++)
		fx->flows[i].bytes += fx->flows[i].rate_bps / 8 * SCAN_NS / (1000 * MSEC);
	assert_int_equal(closed_loop_prepare(d, fx->flows, fx->n_flows, clock_ns), 0);
	assert_int_equal(caad_plan_compute(d->topo, d->inv, fx->flows, fx->n_flows, &d->config.policy, d->plan,
	                                   clock_ns, &plan),
	                 0);
	assert_true(caad_actuator_apply(d->actuator, d->inv, plan) >= 0);
	closed_loop_applied(d, plan);
	caad_plan_free(d->plan);
	d->plan = plan;
}

static const struct caad_decision *decision(const struct fixture *fx, uint64_t id)
{
	const struct caad_decision *dc = caad_plan_find(fx->d.plan, id);

	assert_non_null(dc);
	return dc;
}

static void put_verdict(struct fixture *fx, const char *comm, enum caad_relation rel, uint64_t decided_sec)
{
	struct caad_verdict v = {
		.relation = rel,
		.decided_sec = decided_sec,
		.trial = 7,
		.goodput_ratio = 1.2,
		.pairs = 2,
		.wins = 2,
		.alternative = rel,
	};

	snprintf(v.iface, sizeof(v.iface), "vb");
	snprintf(v.comm, sizeof(v.comm), "%s", comm);
	assert_int_equal(caad_verdicts_put(&fx->d.loop.verdicts, &v), 0);
}

/* ---- tests ------------------------------------------------------------- */

/*
 * A flow placed by a verdict until a scan ago (here VerdictMaxAgeSec=
 * lowered under it, as a reload does) is not the rules' placement: no
 * trial takes the verdict's CPU, its consumer's own, for its prior. Once
 * the rules have placed it, and DwellMSec= later, its trial tries their
 * peer core against the consumer's own CPU.
 */
static void test_no_trial_of_a_verdict_placement(void **state)
{
	struct fixture *fx = *state;
	struct closed_loop *cl = &fx->d.loop;
	const struct caad_decision *dc;

	assert_int_equal(fx->d.topo->cpus[0].core, fx->d.topo->cpus[1].core);
	assert_int_not_equal(fx->d.topo->cpus[0].core, fx->d.topo->cpus[2].core);
	add_flow(fx, 1, "iperf3", 0, 0, 5 * GBIT);
	put_verdict(fx, "iperf3", CAAD_RELATION_SAME_CORE, (uint64_t)time(NULL) - 600);

	for (unsigned i = 0; i < 8; i++)
		scan(fx);
	dc = decision(fx, 1);
	assert_int_equal(dc->steer_cpu, 0);
	assert_int_equal(dc->relation, CAAD_RELATION_SAME_CORE);
	assert_null(cl->current);

	/* the verdict expires: the rules place the flow, no trial yet */
	fx->d.config.verdict_max_age_sec = 60;
	scan(fx);
	assert_null(cl->current);
	dc = decision(fx, 1);
	assert_int_equal(dc->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	int peer = dc->steer_cpu;

	/* held there DwellMSec= (4 scans): then its trial, prior the peer core */
	for (unsigned i = 0; i < 8 && !cl->current; i++)
		scan(fx);
	assert_non_null(cl->current);
	const struct caad_trial *t = &cl->current->trial;
	assert_int_equal(t->flow_id, 1);
	assert_int_equal(t->cands[0].cpu, peer);
	assert_int_equal(t->cands[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(t->cands[1].cpu, 0);
	assert_int_equal(t->cands[1].relation, CAAD_RELATION_SAME_CORE);
	/* its sibling, where no one else reads */
	assert_int_equal(t->n_cands, 3);
	assert_int_equal(t->cands[2].cpu, 1);
	assert_int_equal(t->cands[2].relation, CAAD_RELATION_SMT_SIBLING);
	assert_int_equal(cl->aborted, 0);
}

/*
 * A verdict dated ahead of the clock (the clock behind, before NTP) is
 * kept and not used until the clock reaches it (caad.conf(5)): the rules
 * place its application's flows, and no trial runs for it meanwhile,
 * whose verdict would replace it, dated by the clock that is behind.
 */
static void test_no_trial_while_verdict_ahead(void **state)
{
	struct fixture *fx = *state;
	struct closed_loop *cl = &fx->d.loop;
	uint64_t ahead = (uint64_t)time(NULL) + 3600;

	add_flow(fx, 1, "iperf3", 0, 0, 5 * GBIT);
	put_verdict(fx, "iperf3", CAAD_RELATION_SAME_CORE, ahead);

	for (unsigned i = 0; i < 12; i++) {
		scan(fx);
		assert_null(cl->current);
	}
	assert_int_equal(cl->trials, 0);
	assert_int_equal(decision(fx, 1)->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(cl->verdicts.n, 1);
	assert_int_equal(cl->verdicts.v[0].decided_sec, ahead);

	/* without it, the same flow would have been tried */
	caad_verdicts_done(&cl->verdicts);
	scan(fx);
	assert_non_null(cl->current);
}

/*
 * Where another heavy flow's consumer reads on the consumer's SMT sibling,
 * the planner puts no closed-loop placement there: a trial's smt-sibling
 * turn would be aborted, and after each cooldown the next trial of the
 * flow again, never to a verdict. The trial is made without that
 * candidate, and runs to its verdict.
 */
static void test_no_smt_turn_on_another_reader(void **state)
{
	struct fixture *fx = *state;
	struct closed_loop *cl = &fx->d.loop;

	add_flow(fx, 1, "iperf3", 0, 0, 8 * GBIT);
	add_flow(fx, 2, "fdt", 1, 1, 3 * GBIT); /* reads on CPU 0's sibling */

	for (unsigned i = 0; i < 10 && !cl->current; i++)
		scan(fx);
	assert_non_null(cl->current);
	const struct caad_trial *t = &cl->current->trial;
	assert_int_equal(t->flow_id, 1);
	assert_int_equal(t->n_cands, 2);
	assert_int_equal(t->cands[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(t->cands[1].cpu, 0);
	assert_int_equal(t->cands[1].relation, CAAD_RELATION_SAME_CORE);

	/* 2 rounds of 2 turns of 2 s */
	for (unsigned i = 0; i < 24 && cl->n_history == 0; i++)
		scan(fx);
	assert_int_equal(cl->n_history, 1);
	assert_int_equal(cl->history[0].trial.flow_id, 1);
	assert_int_equal(cl->history[0].trial.state, CAAD_TRIAL_DONE);
	assert_int_equal(cl->aborted, 0);

	/* fdt's, next: not on CPU 0, its sibling, where iperf3 reads */
	for (unsigned i = 0; i < 10 && !cl->current; i++)
		scan(fx);
	assert_non_null(cl->current);
	t = &cl->current->trial;
	assert_int_equal(t->flow_id, 2);
	for (unsigned c = 0; c < t->n_cands; c++)
		assert_int_not_equal(t->cands[c].cpu, 0);
}

/*
 * A reader not pinned that moves in the turn of its SMT sibling: the
 * prior's turn after it is the rules' placement, which may hold the
 * sibling a while (here DwellMSec= of 4 s, past the settle time of
 * 500 ms): not measured as the prior's. The trial is aborted once its
 * measure begins on the held CPU (found by review: it measured the
 * sibling for the prior).
 */
static void test_prior_turn_not_a_held_one(void **state)
{
	struct fixture *fx = *state;
	struct closed_loop *cl = &fx->d.loop;
	struct caad_flow *f;
	unsigned smt = UINT_MAX, measured_prior = 0;

	fx->d.config.policy.allow_smt_sibling = true;
	fx->d.config.policy.dwell_ms = 4000;
	fx->d.config.trial.turn_ms = 4000;
	f = add_flow(fx, 1, "iperf3", 0, 0, 8 * GBIT);
	write_file(fx->root, "proc/4001/task/4001/status", "Name:\tiperf3\nCpus_allowed_list:\t0-7\n");

	for (unsigned i = 0; i < 10 && !cl->current; i++)
		scan(fx);
	assert_non_null(cl->current);
	for (unsigned c = 0; c < cl->current->trial.n_cands; c++)
		if (cl->current->trial.cands[c].relation == CAAD_RELATION_SMT_SIBLING)
			smt = c;
	assert_int_not_equal(smt, UINT_MAX);

	/* into the sibling's turn, to its last scans; the reader moves to
	 * CPU 4, the turn's CPU with it to 5 */
	for (unsigned i = 0; i < 40 && caad_trial_turn_cand(&cl->current->trial, cl->current->trial.turn) != smt; i++)
		scan(fx);
	assert_int_equal(caad_trial_turn_cand(&cl->current->trial, cl->current->trial.turn), smt);
	for (unsigned i = 0; i < 4000 * MSEC / SCAN_NS - 3; i++)
		scan(fx);
	f->consumer_cpu = 4;
	scan(fx);
	assert_non_null(cl->current);
	assert_int_equal(decision(fx, 1)->steer_cpu, 5);

	/* the prior's turn, if it comes next: never measured on a held CPU */
	for (unsigned i = 0; i < 16 && cl->current; i++) {
		scan(fx);
		if (!cl->current || cl->current->trial.state != CAAD_TRIAL_RUNNING ||
		    caad_trial_turn_cand(&cl->current->trial, cl->current->trial.turn) != 0 ||
		    !cl->current->trial.measuring)
			continue;
		measured_prior++;
		if (decision(fx, 1)->closed_loop)
			fail_msg("the prior's turn measured CPU %d, held from the sibling's turn", decision(fx, 1)->steer_cpu);
	}
	assert_true(cl->aborted == 1 || measured_prior > 0);
	if (cl->aborted)
		assert_non_null(strstr(cl->history[cl->n_history - 1].trial.abort_reason, "still held the last turn's CPU"));
}

/* A verdict that expired (VerdictMaxAgeSec=) is no longer in force, nor
 * shown as one (GetTrials, trials.json), though no flow of its
 * application comes to look it up (found by review: it stayed listed until
 * a later verdict was saved). One that has not expired stays. */
static void test_expired_verdict_not_shown(void **state)
{
	struct fixture *fx = *state;
	struct closed_loop *cl = &fx->d.loop;
	uint64_t now = (uint64_t)time(NULL);

	fx->d.config.verdict_max_age_sec = 60;
	put_verdict(fx, "gone", CAAD_RELATION_SAME_CORE, now - 120);
	put_verdict(fx, "young", CAAD_RELATION_SAME_CORE, now - 10);
	add_flow(fx, 1, "other", 0, 0, 3 * GBIT);
	scan(fx);
	assert_int_equal(cl->verdicts.n, 1);
	assert_string_equal(cl->verdicts.v[0].comm, "young");
}

/* A verdict on a device's interface is kept while its driver cannot be
 * read (a failed readlink read as no driver, and the verdict was dropped
 * as another driver's, for good: review), and used again once it can. */
static void test_verdict_kept_while_driver_unreadable(void **state)
{
	struct fixture *fx = *state;
	struct closed_loop *cl = &fx->d.loop;
	struct caad_verdict v = { .relation = CAAD_RELATION_SAME_CORE, .decided_sec = (uint64_t)time(NULL) - 10,
		                  .trial = 7, .goodput_ratio = 1.2, .pairs = 2, .wins = 2,
		                  .alternative = CAAD_RELATION_SAME_CORE };
	_cleanup_free_ char *device = NULL, *driver = NULL;

	assert_true(asprintf(&device, "%s/sys/class/net/vb/device", fx->root) > 0);
	assert_true(asprintf(&driver, "%s/driver", device) > 0);
	assert_int_equal(mkdir(device, 0755), 0);
	assert_int_equal(symlink("../../../bus/pci/drivers/mlx5_core", driver), 0);
	snprintf(v.iface, sizeof(v.iface), "vb");
	snprintf(v.driver, sizeof(v.driver), "mlx5_core");
	snprintf(v.comm, sizeof(v.comm), "iperf3");
	assert_int_equal(caad_verdicts_put(&cl->verdicts, &v), 0);
	add_flow(fx, 1, "iperf3", 0, 0, 8 * GBIT);

	/* device/driver cannot be read (ENOTDIR): nothing said of the driver */
	assert_int_equal(test_rm_tree(device), 0);
	write_file(fx->root, "sys/class/net/vb/device", "not a directory\n");
	scan(fx);
	assert_int_equal(cl->verdicts.n, 1);

	/* readable again: the verdict places the flow on its consumer's CPU */
	assert_int_equal(unlink(device), 0);
	assert_int_equal(mkdir(device, 0755), 0);
	assert_int_equal(symlink("../../../bus/pci/drivers/mlx5_core", driver), 0);
	scan(fx);
	assert_int_equal(cl->verdicts.n, 1);
	assert_int_equal(decision(fx, 1)->steer_cpu, 0);
}

/* A reader pinned mid-trial (taskset -p) and still at its end, or whose
 * thread renames itself, or a flow whose interface leaves the inventory:
 * the trial ends without a verdict, which would be stored for the kind of
 * reader and the names it had at the start (review). A reader pinned for a
 * while and freed again (how unpinned.sh moves one) keeps its kind. */
static void test_reader_changed_mid_trial(void **state)
{
	struct fixture *fx = *state;
	struct closed_loop *cl = &fx->d.loop;
	struct caad_flow *f = add_flow(fx, 1, "iperf3", 0, 0, 8 * GBIT);

	static const char unpinned[] = "Name:\tiperf3\nCpus_allowed_list:\t0-7\n",
	                  pinned[] = "Name:\tiperf3\nCpus_allowed_list:\t0\n";

	write_file(fx->root, "proc/4001/task/4001/status", unpinned);
	/* pinned from the third scan to the end; renamed: aborted, no verdict */
	for (int change = 0; change < 2; change++) {
		uint64_t aborted = cl->aborted;

		for (unsigned i = 0; i < 400 && !cl->current; i++)
			scan(fx); /* (a cooldown of 60 s after the first) */
		assert_non_null(cl->current);
		assert_true(cl->current->unpinned);
		scan(fx);
		scan(fx);
		assert_non_null(cl->current);
		if (change == 0)
			write_file(fx->root, "proc/4001/task/4001/status", pinned);
		else
			snprintf(f->comm, sizeof(f->comm), "iperf3-worker");
		for (unsigned i = 0; i < 60 && cl->current; i++)
			scan(fx);
		assert_null(cl->current);
		assert_int_equal(cl->aborted, aborted + 1);
		assert_int_equal(cl->verdicts.n, 0);
		assert_non_null(strstr(cl->history[cl->n_history - 1].trial.abort_reason,
		                       change == 0 ? "affinity changed: it is pinned now" : "named otherwise"));
		if (change == 0)
			write_file(fx->root, "proc/4001/task/4001/status", unpinned);
		else
			snprintf(f->comm, sizeof(f->comm), "iperf3");
	}

	/* its interface gone from the inventory (one of several) at the scan
	 * that ends the trial's last turn, before the plan could say the flow
	 * is not planned for: no verdict for it */
	{
		uint64_t aborted = cl->aborted, turn_ns = 2000 * MSEC;
		const struct caad_trial *t;

		for (unsigned i = 0; i < 400 && !cl->current; i++)
			scan(fx);
		assert_non_null(cl->current);
		t = &cl->current->trial;
		while (cl->current && t->turn + 1 < t->n_cands * t->params.rounds)
			scan(fx);
		while (cl->current && clock_ns + SCAN_NS - t->turn_start_ns < turn_ns)
			scan(fx);
		assert_non_null(cl->current);
		f->ifindex = IFINDEX + 1; /* as if vb were another device now */
		scan(fx);
		assert_null(cl->current);
		assert_int_equal(cl->aborted, aborted + 1);
		assert_int_equal(cl->verdicts.n, 0);
		f->ifindex = IFINDEX;
	}

	/* pinned a while and freed again (how taskset -p moves a reader):
	 * still of its kind, the trial ends with a verdict for it */
	{
		uint64_t aborted = cl->aborted;

		for (unsigned i = 0; i < 400 && !cl->current; i++)
			scan(fx);
		assert_non_null(cl->current);
		scan(fx);
		write_file(fx->root, "proc/4001/task/4001/status", pinned);
		scan(fx);
		scan(fx);
		write_file(fx->root, "proc/4001/task/4001/status", unpinned);
		for (unsigned i = 0; i < 60 && cl->current; i++)
			scan(fx);
		assert_null(cl->current);
		assert_int_equal(cl->aborted, aborted);
		assert_int_equal(cl->history[cl->n_history - 1].trial.state, CAAD_TRIAL_DONE);
		assert_int_equal(cl->verdicts.n, 1);
		assert_true(cl->verdicts.v[0].unpinned);
	}
}

/* closed_loop_prepare() of fx, which reads the store, in a child whose
 * exit status says it returned 0 (an alarm ends one that hangs). */
static struct fixture *child_fx;

static int prepare_in_child(void)
{
	alarm(5);
	return closed_loop_prepare(&child_fx->d, child_fx->flows, child_fx->n_flows, clock_ns) == 0 ? 0 : 1;
}

/*
 * A FIFO where the store is (STATE_DIR/verdicts.json) does not hold the
 * daemon in open() (its watchdog would kill it, and the next start hang
 * again): it is a store that cannot be used, put aside as
 * verdicts.json.bad with a warning, and caad starts a new one.
 */
static void test_verdict_store_fifo(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX], aside[PATH_MAX]; /* (not on the heap: the child's _exit leaks nothing) */
	struct stat st;
	pid_t pid;
	int status;

	snprintf(path, sizeof(path), "%s/verdicts.json", fx->state);
	snprintf(aside, sizeof(aside), "%s/verdicts.json.bad", fx->state);
	assert_int_equal(caad_mkdir_p(fx->state, 0755), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	add_flow(fx, 1, "iperf3", 0, 0, 5 * GBIT);
	fx->d.loop.verdicts_loaded = false;

	child_fx = fx;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(prepare_in_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status))
		fail_msg("reading a FIFO as the store did not return (killed by signal %d)", WTERMSIG(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(lstat(aside, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	/* and here: a store that is gone is a new one */
	scan(fx);
	assert_true(fx->d.loop.verdicts_loaded);
	assert_false(fx->d.loop.verdicts_kept_off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_trial_of_a_verdict_placement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_trial_while_verdict_ahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_smt_turn_on_another_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prior_turn_not_a_held_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expired_verdict_not_shown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verdict_kept_while_driver_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_changed_mid_trial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verdict_store_fifo, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
