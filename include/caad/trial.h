/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The closed loop (Placement=measure): a bounded trial that alternates a
 * heavy flow's processing between candidate placements in interleaved
 * rounds, and the rule that decides whether an alternative beats the
 * planner's prior. Pure: the daemon feeds cumulative counters and the
 * time; the trial says where the flow goes now and, at the end, what won.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "caad/topology.h"
#include "caad/verdict.h"

#define CAAD_TRIAL_MAX_CANDS 4

struct caad_trial_params {
	unsigned rounds;       /* every candidate has one turn per round (>= 2) */
	unsigned turn_ms;      /* length of a turn */
	unsigned settle_ms;    /* start of a turn not measured: the move settles (< turn_ms) */
	unsigned margin_pct;   /* an alternative must beat the prior's median by this much ... */
	unsigned win_pct;      /* ... and not be behind by more than it in this share of its paired turns */
	unsigned eff_loss_pct; /* a goodput win may cost this much of the prior's bytes per CPU-second */
	unsigned confidence_pct; /* ... and its gain must stand out of the pairs' noise with this confidence (0: not asked) */
	uint64_t collapse_bps; /* a measured turn slower than this aborts: the flow's rate collapsed */
};

void caad_trial_params_init(struct caad_trial_params *p);

/* Cumulative counters, read at the start and end of each measured part. */
struct caad_trial_counters {
	uint64_t bytes;   /* read by the flow's consumer */
	uint64_t cpu_ns;  /* consumer thread on-CPU + NET_RX softirq (+ NAPI kthread) */
	uint64_t ooo;     /* packets received out of order */
	uint64_t retrans; /* TCP segments retransmitted in caad's network namespace */
	uint64_t steal_ns; /* the host's steal time, all CPUs */
	uint64_t total_ns; /* all CPU time, all CPUs (for the steal share) */
	unsigned cpu_gaps; /* reads of a NAPI kthread's time that failed: the time around each is
	                    * not in cpu_ns, and a turn whose ends differ in it lost some (unknown) */
	unsigned unknown;  /* CAAD_TRIAL_UNKNOWN_*: not readable now; in a sample's deltas, at
	                    * either end of the turn, whose delta is then 0 */
};
#define CAAD_TRIAL_UNKNOWN_CPU (1u << 0)     /* cpu_ns */
#define CAAD_TRIAL_UNKNOWN_RETRANS (1u << 1) /* retrans */
#define CAAD_TRIAL_UNKNOWN_STEAL (1u << 2)   /* steal_ns and total_ns */

/* One measured turn. */
struct caad_trial_sample {
	unsigned round, cand;
	uint64_t ns;       /* how long it was measured */
	struct caad_trial_counters d; /* counter deltas over it */
};

static inline double caad_trial_sample_goodput_bps(const struct caad_trial_sample *s)
{
	return s->ns ? (double)s->d.bytes * 8e9 / (double)s->ns : 0;
}

/* Bytes per CPU-second; 0 when no CPU time was seen. */
static inline double caad_trial_sample_efficiency(const struct caad_trial_sample *s)
{
	return s->d.cpu_ns ? (double)s->d.bytes * 1e9 / (double)s->d.cpu_ns : 0;
}

struct caad_trial_cand {
	int cpu;
	enum caad_relation relation; /* to the consumer's CPU */
};

/*
 * The CPU with relation rel to a consumer on CPU c that caad may use
 * (usable: online, allowed, not isolated; not in banned): c itself for
 * SAME_CORE, its first such SMT sibling for SMT_SIBLING. -1 where there is
 * none, and for any other relation (the prior's, which the planner's rules
 * give).
 */
int caad_trial_cpu_for_relation(const struct caad_topology *t, const struct caad_cpumask *banned, int c,
                                enum caad_relation rel);

/*
 * The candidates of a trial of a flow whose consumer is on CPU c and whose
 * prior (the rules' target) is prior_cpu, into cands: the prior first; the
 * consumer's own CPU and its SMT sibling, each where caad may use it
 * (caad_trial_cpu_for_relation()); with host, the host's own steering
 * (cpu CAAD_OVERRIDE_HOST). Returns how many (<= CAAD_TRIAL_MAX_CANDS).
 */
unsigned caad_trial_candidates(const struct caad_topology *t, const struct caad_cpumask *banned, int c,
                               int prior_cpu, bool host, struct caad_trial_cand *cands);

/*
 * Whether a reader with this CPU affinity may be moved by the scheduler
 * (a trial follows it; verdicts for such readers are kept apart): more
 * than one usable CPU in it. One pinned to a single CPU that caad does not
 * use (isolated, disallowed) is pinned all the same: where no usable CPU
 * is in it, its present CPUs count.
 */
bool caad_trial_reader_unpinned(const struct caad_topology *t, const struct caad_cpumask *allowed);

/*
 * The time on CPU of the NAPI kthreads that processed a trial's flow, as
 * its counters take it: each from when the trial first read it, not its
 * whole life (a kthread that first shows up mid-trial would put all of
 * its past into one turn), and nothing across a read that failed.
 */
struct caad_trial_kthread {
	uint32_t pid;     /* the kthread read last (0: none, or that read failed) */
	uint64_t seen_ns; /* its time on CPU then */
	uint64_t sum_ns;  /* the time counted so far */
	unsigned failed;  /* reads of a kthread that failed so far, once one was read */
	bool ever_read;   /* a kthread's time was read once: one never readable
	                   * (ProtectProc=, no CONFIG_SCHED_INFO) is left out of
	                   * every turn alike, not a gap in each */
};

/* The kthread pid (0: none known) read ns on CPU (0: could not be read):
 * returns the time counted so far. */
uint64_t caad_trial_kthread_ns(struct caad_trial_kthread *k, uint32_t pid, uint64_t ns);

/*
 * The same, into counters c: its time added to c->cpu_ns, and where the
 * flow has a kthread whose time could not be read, after one that could,
 * the CPU time unknown (CAAD_TRIAL_UNKNOWN_CPU) and the read counted in
 * c->cpu_gaps: the time from the read before it to the one after is lost,
 * for the turn that ends or starts at it and for one that spans it. A
 * kthread never read is in no turn's time: each is measured without it.
 */
void caad_trial_kthread_count(struct caad_trial_kthread *k, uint32_t pid, uint64_t ns,
                              struct caad_trial_counters *c);

/* caad_trial_verdict_cpu(): the planner's rules place the flow */
#define CAAD_TRIAL_RULES (-2)

/*
 * Where verdict v puts a flow of its application whose consumer is on CPU
 * c: a CPU (the relation it names, to c); CAAD_OVERRIDE_HOST, the host's
 * own steering; CAAD_TRIAL_RULES where the prior stood (its relation is
 * the one the rules chose then, which they choose again now: an SMT
 * sibling only where no peer core was free, and AllowSMTSibling= allowed
 * it), or where no CPU with its relation is one caad may use.
 */
int caad_trial_verdict_cpu(const struct caad_verdict *v, const struct caad_topology *t,
                           const struct caad_cpumask *banned, int c);

/* Per candidate: the figures of the decision. The prior (0) has ratios 1. */
struct caad_trial_score {
	double goodput_bps;    /* median over its turns */
	double efficiency;     /* median bytes per CPU-second, 0 unknown */
	double goodput_ratio;  /* median over its turns of this / the prior's turns around it */
	double efficiency_ratio; /* the same for efficiency, over the pairs that have one; 0 unknown */
	unsigned pairs;        /* its turns paired so (the prior: its turns with goodput) */
	unsigned efficiency_pairs; /* ... of which both sides had CPU time (rule (b) needs all) */
	unsigned goodput_wins, efficiency_wins; /* ... where this one was ahead */
	unsigned goodput_behind, efficiency_behind; /* ... where it was behind by more than the margin */
	/* a one-sided lower confidence bound (ConfidencePercent=) on the
	 * geometric mean of its paired ratios (Student's t over their logs,
	 * with a standard error that counts the prior turns neighbouring
	 * pairs share): with that confidence it is at least this much of
	 * the prior's; 0 unknown (fewer than 2 pairs, or not asked) */
	double goodput_low, efficiency_low;
	uint64_t ooo, retrans; /* summed over its turns */
	double steal_pct;      /* steal share of all CPU time over its turns */
};

struct caad_trial_result {
	unsigned winner;       /* index of the candidate that stands (0: the prior) */
	bool by_efficiency;    /* the winner won by rule (b) only: its goodput alone would not have */
	struct caad_trial_score scores[CAAD_TRIAL_MAX_CANDS];
	char reason[400];
};

/*
 * samples[0..n) in the order of their turns. Each turn of an alternative
 * is paired with the mean of the prior's nearest turns before and after
 * it (one at the ends of the trial), which cancels a steady drift.
 * The rule: an alternative replaces the prior only when, over its pairs
 * (at least 2), (a) its median goodput ratio to the prior is at
 * least 1 + margin, it is not behind by more than the margin in at least
 * win_pct of its pairs (a pair within the margin is noise, not a loss),
 * and its median efficiency ratio, where any pair has one, is not below
 * 1 - eff_loss_pct/100; or (b) every pair has an efficiency ratio, their
 * median is at least 1 + margin, it is not behind in efficiency by more
 * than the margin in at least win_pct of its pairs, and its median
 * goodput ratio is at least 1. With
 * confidence_pct, either also needs its confidence bound (goodput_low,
 * efficiency_low) above 1: the gain stands out of the pairs' noise. Of
 * several, the one with the higher goodput ratio; goodput ratios within
 * the margin of each other are a tie, which the higher efficiency ratio
 * decides. Anything else keeps the prior.
 */
int caad_trial_decide(const struct caad_trial_params *p, const struct caad_trial_sample *samples, size_t n,
                      unsigned n_cands, struct caad_trial_result *ret);

/* The q-quantile (0 < q < 1) of Student's t distribution with df >= 1
 * degrees of freedom; NAN out of range. */
double caad_student_t_quantile(double q, unsigned df);

enum caad_trial_state {
	CAAD_TRIAL_RUNNING,
	CAAD_TRIAL_DONE,
	CAAD_TRIAL_ABORTED,
};

const char *caad_trial_state_to_string(enum caad_trial_state s);

struct caad_trial {
	unsigned id;
	uint64_t flow_id;
	struct caad_trial_params params;
	struct caad_trial_cand cands[CAAD_TRIAL_MAX_CANDS];
	unsigned n_cands;
	enum caad_trial_state state;
	uint64_t start_ns, end_ns;

	unsigned turn;              /* current turn, 0 .. rounds * n_cands */
	uint64_t turn_start_ns;
	bool measuring;             /* the settle time of this turn is over */
	uint64_t measure_start_ns;
	struct caad_trial_counters at_start;

	struct caad_trial_sample *samples;
	size_t n_samples;
	struct caad_trial_result result; /* when DONE */
	char abort_reason[128];          /* when ABORTED */
};

/*
 * Start a trial of cands (cands[0] is the prior) at now_ns. Returns 0,
 * -EINVAL for fewer than 2 candidates or bad parameters, -ENOMEM.
 */
int caad_trial_start(struct caad_trial *t, unsigned id, uint64_t flow_id, const struct caad_trial_params *p,
                     const struct caad_trial_cand *cands, unsigned n_cands, uint64_t now_ns);
void caad_trial_done(struct caad_trial *t);

/* Which candidate has turn number turn. Every turn is a move (never the
 * candidate of the turn before, and the first is not the prior): two
 * candidates alternate, more rotate their order from round to round. */
unsigned caad_trial_turn_cand(const struct caad_trial *t, unsigned turn);

/*
 * Advance with the counters read now. Returns the candidate whose CPU the
 * flow is to be processed on until the next step while RUNNING; when the
 * trial ends (DONE with t->result, or ABORTED when a measured turn fell
 * below collapse_bps), t->state says so.
 */
unsigned caad_trial_step(struct caad_trial *t, uint64_t now_ns, const struct caad_trial_counters *now);

/* End a running trial from outside (the flow ended, its consumer moved, ...). */
void caad_trial_abort(struct caad_trial *t, uint64_t now_ns, const char *why);
/* A trial that has just ended with a result that cannot stand (its reader
 * is of another kind now): aborted after all, at the end it had. */
void caad_trial_withdraw(struct caad_trial *t, const char *why);
