/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "caad/cpumask.h"
#include "caad/flow.h"
#include "caad/inventory.h"
#include "caad/topology.h"

#define CAAD_REASON_MAX 256
/* The longest text of a decision (its reason, its considered), NUL included:
 * what the planner writes and what the API must copy whole. */
#define CAAD_DECISION_TEXT_MAX 1024

/* Policy defaults, shared by caad_policy_init() and the configuration parser. */
#define CAAD_RATE_THRESHOLD_DEFAULT UINT64_C(1000000000)
#define CAAD_MIN_AGE_MS_DEFAULT 500u
#define CAAD_DWELL_MS_DEFAULT 2000u
#define CAAD_MAX_MOVES_DEFAULT 16u

/*
 * A placement chosen by the closed loop (Placement=measure) for one flow:
 * a trial's round, or a remembered verdict. The planner uses it instead of
 * its rules while the CPU is usable and not banned; it is not bound by the
 * dwell time (trials keep their own pace) nor by MaxMovesPerCycle.
 */
struct caad_override {
	uint64_t flow_id;
	int cpu;                     /* CAAD_OVERRIDE_HOST: hands off (below) */
	const char *why;             /* for people, e.g. "trial 2, round 3/6: same-core" */
};

/*
 * The hands-off placement: the flow is not steered, and its rx queue goes
 * back to what the host had there before caad (settings with `restore`),
 * unless another heavy flow's steering takes the queue.
 */
#define CAAD_OVERRIDE_HOST (-1)

struct caad_policy {
	uint64_t rate_threshold_bps; /* flows below this are left alone */
	unsigned min_age_ms;         /* ... and flows younger than this */
	unsigned dwell_ms;           /* a flow keeps its target at least this long (hysteresis) */
	unsigned max_moves;          /* flows whose target may change in one plan (>= 1) */
	bool allow_smt_sibling;      /* SMT sibling of the consumer as last resort in its core */
	bool allow_other_package;    /* another package when the consumer's has no peer */
	struct caad_cpumask banned;  /* never steer to these */
	struct caad_cpumask irq_banned; /* move no IRQ here (no vectors left): RPS or a kthread instead */
	unsigned disabled_mechanisms; /* bits (1 << enum caad_setting_kind) never used; 0: all allowed
	                              * (caad_policy_init(): CAAD_MECHANISMS_DEFAULT_OFF) */
	const struct caad_override *overrides; /* sorted by flow_id, not owned; NULL: none */
	size_t n_overrides;
	/* flows whose ntuple rule the NIC refused (caad_actuator_ntuple_refused()):
	 * no rule is planned for them, and none kept; sorted, not owned */
	const uint64_t *ntuple_refused;
	size_t n_ntuple_refused;
};

void caad_policy_init(struct caad_policy *p);

/* Half of RateThreshold=, rounded up: "below half" is below it exactly
 * (with RateThreshold=1, a flow at 0 bit/s is, as it was not rounded
 * down). The planner's dips and the closed loop's collapses use it. */
static inline uint64_t caad_policy_half_threshold(const struct caad_policy *p)
{
	return p->rate_threshold_bps / 2 + (p->rate_threshold_bps & 1);
}

/*
 * What the planner decided for one heavy flow. The strings belong to the
 * plan and live as long as it does.
 */
struct caad_decision {
	uint64_t flow_id;            /* flows[flow].id: what the next plan looks up */
	uint32_t flow;               /* index into the flows array */
	int queue;                   /* rx queue index, -1 unknown (all queues) */
	int consumer_cpu;            /* the consumer CPU planned for (of the flow's window: the latest in
	                              * the LLC it read in at the most scans), -1 unknown */
	int steer_cpu;               /* -1: unsteered */
	int anchor_cpu;              /* the consumer CPU steer_cpu was chosen for (hysteresis), -1 */
	int16_t iface;               /* index into inventory->ifaces */
	enum caad_relation relation : 8; /* of steer_cpu to consumer_cpu */
	bool held : 1;               /* kept its previous target (hysteresis) */
	bool shares_queue : 1;       /* steered by a faster flow's setting of the same queue */
	bool ntuple : 1;             /* an ntuple rule moves it to rx queue `queue` (rule 6) */
	bool host : 1;               /* left to the host's steering by the closed loop (CAAD_OVERRIDE_HOST);
	                              * steer_cpu -1, relation CAAD_RELATION_HOST_STEERING */
	bool closed_loop : 1;        /* placed by the closed loop (a struct caad_override: a trial's turn,
	                              * a verdict), or kept there since only until DwellMSec= or
	                              * MaxMovesPerCycle= lets the rules move it: not the rules' placement */
	uint64_t since_ns;           /* when steer_cpu became its target (the plan's now if new), 0 unsteered */
	uint64_t low_since_ns;       /* a steered flow below half of RateThreshold= since then, kept
	                              * steered through such a dip for up to DwellMSec=; 0: not low */
	const char *reason;          /* for people, never NULL */
	const char *considered;      /* candidates looked at and why not taken, "" if none, never NULL */
};

/* A million heavy flows are a million decisions: one cache line each. */
_Static_assert(sizeof(struct caad_decision) <= 64, "struct caad_decision outgrew a cache line");

enum caad_setting_kind {
	CAAD_SETTING_IRQ_AFFINITY,
	CAAD_SETTING_RPS_CPUS,
	CAAD_SETTING_KTHREAD_AFFINITY, /* threaded NAPI: the queue's kthread */
	CAAD_SETTING_RFS_FLOW_CNT,     /* RFS: the queue's rps_flow_cnt (value) */
	CAAD_SETTING_RFS_TABLE,        /* RFS: the global rps_sock_flow_entries (value), with RFS_FLOW_CNT */
	CAAD_SETTING_NTUPLE_RULE,      /* a flow's ntuple rule to rx queue `queue` (rule) */
	_CAAD_SETTING_KIND_COUNT,
};

/*
 * RFS sizes (Documentation/networking/scaling.rst): the global socket flow
 * table and, per rx queue, its share of it (rounded up to a power of two,
 * as the kernel does). Larger values set by the host are kept.
 */
#define CAAD_RFS_TABLE_ENTRIES 32768u
#define CAAD_RFS_FLOW_CNT_MIN 256u

/* Mechanisms= off unless listed: ntuple rules are a NIC-wide, small resource
 * shared with the operator's own rules. */
#define CAAD_MECHANISMS_DEFAULT_OFF (1u << CAAD_SETTING_NTUPLE_RULE)

/* A TCP flow as the NIC's classifier sees it arriving: from raddr:rport to
 * laddr:lport (the receiver's local address and port). */
struct caad_ntuple_flow {
	int family;                  /* AF_INET or AF_INET6 */
	uint8_t laddr[16], raddr[16];
	uint16_t lport, rport;
};

const char *caad_setting_kind_to_string(enum caad_setting_kind k);

struct caad_setting {
	enum caad_setting_kind kind;
	int iface;                   /* index into inventory->ifaces */
	unsigned queue;
	int irq;                     /* for CAAD_SETTING_IRQ_AFFINITY, else -1 */
	pid_t pid;                   /* for CAAD_SETTING_KTHREAD_AFFINITY, else 0 */
	struct caad_cpumask cpus;    /* empty for the RFS kinds and ntuple rules */
	unsigned value;              /* for the RFS kinds: the table size to write (0: RFS off) */
	uint64_t flow_id;            /* for CAAD_SETTING_NTUPLE_RULE: the flow it moves, else 0 */
	struct caad_ntuple_flow rule; /* ... and its 4-tuple */
	bool restore;                /* not a value: the host's own, as caad found it, goes back (if caad
	                              * changed it: its journal has it); cpus empty, value 0. For a queue
	                              * left to the host's steering (CAAD_OVERRIDE_HOST) */
	char reason[CAAD_REASON_MAX];
};

struct caad_plan_arena;

struct caad_plan {
	struct caad_decision *decisions; /* in the order of the flows array */
	size_t n_decisions;
	struct caad_setting *settings;
	size_t n_settings;
	uint64_t now_ns;             /* the time it was planned for */
	unsigned n_moves;            /* flows whose target changed, bounded by max_moves */
	unsigned n_forced;           /* ... changed because their target became invalid (not bounded) */

	/* private */
	size_t decisions_cap;        /* room in decisions (caad_plan_recycle() keeps it) */
	struct caad_plan_arena *arena; /* the decisions' strings */
	uint32_t *by_id;             /* decisions by flow id; NULL when they are in id order already */
};

/*
 * Pure: topology + queues + flows + policy -> desired settings, each with a
 * reason. No I/O, no clock: now_ns is CLOCK_MONOTONIC in ns (the clock of
 * caad_flow.first_ns). prev, the plan of the previous cycle (may be NULL),
 * gives hysteresis: a flow keeps its target unless its consumer left the
 * LLC, the target became unusable or a consumer's core, and then only after
 * policy->dwell_ms and within policy->max_moves changes per plan (at once
 * when unusable, or a CPU of its own consumer's window or one of their
 * cores). A flow's consumer is consumer_cpu and its history. Flows
 * need not be sorted (sorted by id they cost less); decisions come in the
 * flows' order. Returns 0 or -ENOMEM.
 */
int caad_plan_compute(const struct caad_topology *topo, const struct caad_inventory *inv,
                      const struct caad_flow *flows, size_t n_flows, const struct caad_policy *policy,
                      const struct caad_plan *prev, uint64_t now_ns, struct caad_plan **ret);

/*
 * Memory the planner keeps from one plan to the next, for a caller that
 * plans again and again (the daemon, every scan). A million heavy flows
 * write about 100 MB per plan; in freshly mapped memory the kernel's page
 * faults and zeroing took a third of the planning. With a scratch the
 * planner's working arrays stay, and the decisions of a plan given back
 * by caad_plan_recycle() hold the next plan's: after the first plans
 * nothing is faulted in again. What it holds is as large as the largest
 * plan so far (pages of it never written are not resident).
 */
struct caad_plan_scratch;
int caad_plan_scratch_new(struct caad_plan_scratch **ret);
void caad_plan_scratch_free(struct caad_plan_scratch *s);
static inline void caad_plan_scratch_freep(struct caad_plan_scratch **s)
{
	caad_plan_scratch_free(*s);
}
/* caad_plan_compute() with the working memory of s (NULL: none kept). */
int caad_plan_compute_with(struct caad_plan_scratch *s, const struct caad_topology *topo,
                           const struct caad_inventory *inv, const struct caad_flow *flows, size_t n_flows,
                           const struct caad_policy *policy, const struct caad_plan *prev, uint64_t now_ns,
                           struct caad_plan **ret);
/* Free p, keeping its decisions' memory in s for the next plan (s NULL:
 * caad_plan_free()). */
void caad_plan_recycle(struct caad_plan_scratch *s, struct caad_plan *p);

/*
 * Where the reader of a steered flow (d->steer_cpu >= 0) may read without
 * the decision going stale, into ret: its consumer CPU's LLC (its package
 * when no LLC is known) less the steer CPU's core, a read there being a
 * collision; for a same-core or SMT-sibling placement (a trial's), the
 * consumer's core. Empty for an unsteered decision. The daemon hands these
 * to the observer, which wakes it when a reader leaves its set.
 */
void caad_decision_stay(const struct caad_topology *t, const struct caad_decision *d, struct caad_cpumask *ret);

/*
 * Why a flow on a managed interface gets no decision (too slow or too
 * young, as caad_plan_compute() with these arguments sees it), written to
 * buf; NULL when it is heavy.
 */
const char *caad_plan_light_reason(const struct caad_flow *f, const struct caad_policy *policy,
                                   const struct caad_plan *prev, uint64_t now_ns, char *buf, size_t size);

/*
 * The heavy flows of flows[0..n_flows) whose consumers read on each CPU, as
 * caad_plan_compute() with these arguments counts them where it keeps a
 * closed-loop placement off another flow's reader (struct caad_override):
 * each such flow once on every CPU of its consumer's window (its CPUs of
 * the last scans). counts: t->n_cpus entries, at most UINT8_MAX each.
 * caad_plan_reads_on(): whether f is counted on cpu. A closed-loop CPU
 * other than the flow's consumer's own, where counts says more readers
 * than the flow itself, is not planned.
 */
void caad_plan_count_readers(const struct caad_topology *t, const struct caad_flow *flows, size_t n_flows,
                             const struct caad_policy *policy, const struct caad_plan *prev, uint64_t now_ns,
                             uint8_t *counts);
bool caad_plan_reads_on(const struct caad_topology *t, const struct caad_flow *f, const struct caad_policy *policy,
                        const struct caad_plan *prev, uint64_t now_ns, int cpu);

/*
 * The CPUs of base that caad's own thread keeps to (ret): those where no
 * heavy flow (rate_bps at or above threshold_bps) is read and no flow of
 * plan (may be NULL) is steered to; where that leaves none, those where
 * none is read; where that leaves none, base. Woken at every scan, caad
 * would otherwise preempt the readers it serves on their own CPUs.
 */
void caad_plan_own_cpus(const struct caad_cpumask *base, const struct caad_flow *flows, size_t n_flows,
                        uint64_t threshold_bps, const struct caad_plan *plan, struct caad_cpumask *ret);

/* The decision about the flow with this id, or NULL. O(log n). */
const struct caad_decision *caad_plan_find(const struct caad_plan *p, uint64_t flow_id);

/*
 * A plan made by hand (e.g. a scenario's previous plan): take decisions
 * (allocated with malloc, n of them; their strings must be static or
 * outlive the plan) and index them for caad_plan_find().
 */
int caad_plan_from_decisions(struct caad_decision *decisions, size_t n, uint64_t now_ns, struct caad_plan **ret);

void caad_plan_free(struct caad_plan *p);
static inline void caad_plan_freep(struct caad_plan **p)
{
	caad_plan_free(*p);
}
