/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Placement=measure: one trial at a time on the heaviest steady flow
 * without a verdict, verdicts remembered in STATE_DIR/verdicts.json and
 * reused for later flows of the same application on the same interface
 * whose reader is pinned the same way (to one CPU, or not).
 */

#include <stdint.h>
#include <stdio.h>

#include "caad/flow.h"
#include "caad/plan.h"
#include "caad/trial.h"
#include "caad/verdict.h"

struct daemon;

#define CLOSED_LOOP_HISTORY 16

/* A trial as shown by the API: the trial and what it was about. */
struct trial_record {
	struct caad_trial trial;  /* samples kept while running and after */
	char iface[CAAD_VERDICT_NAME_MAX];
	char driver[CAAD_VERDICT_NAME_MAX];
	char comm[CAAD_COMM_LEN];
	char tuple[128];
	int consumer_cpu;         /* when it started */
	int consumer_now;         /* at the last scan */
	unsigned consumer_moves;  /* how often the consumer changed CPUs since it started */
	bool unpinned;            /* its consumer may run on more than one CPU (see consumer_unpinned()) */
	uint64_t started_sec;     /* CLOCK_REALTIME */
	uint64_t rate_bps;        /* when it started */
	uint64_t first_ns;        /* its flow's: another socket at the address has another */
	uint32_t tid;             /* the consumer thread whose CPU time it counts */
	struct caad_trial_kthread kthread; /* its NAPI kthreads' time, in its counters */
};

struct closed_loop {
	char *verdicts_path;      /* STATE_DIR/verdicts.json */
	char kernel[128], topology[128];
	struct caad_verdicts verdicts;
	bool verdicts_loaded;
	bool verdicts_kept_off;   /* the store is there but was not read (nor put aside): not written over */
	bool verdicts_unsaved;    /* its last write failed: a reload reads it again and writes it */

	struct trial_record *current; /* NULL: no trial running */
	struct trial_record history[CLOSED_LOOP_HISTORY]; /* finished, oldest first */
	size_t n_history;
	unsigned next_id;

	struct cooldown {
		char iface[CAAD_VERDICT_NAME_MAX];
		char comm[CAAD_COMM_LEN];
		uint64_t until_ns;
	} cooldown[8];            /* after an aborted trial, no new one for the same app for a while */

	struct caad_flow_set told; /* flows told they take a verdict (once while each lives) */

	int turn_cpu;             /* the running trial's placement for this turn; TURN_RULES: the
	                           * rules' (the prior's, after its consumer moved) */
	struct caad_override *overrides; /* for this scan's plan, sorted by flow id */
	char (*whys)[160];
	size_t n_overrides, cap;

	uint64_t trials, kept_prior, switched, aborted, reused;
};

int closed_loop_init(struct closed_loop *cl, const char *state_dir);
void closed_loop_done(struct closed_loop *cl);

/* Before planning: advance the trial, start one, and set the overrides in
 * d->config.policy for flows[0..n) (sorted by id). */
int closed_loop_prepare(struct daemon *d, const struct caad_flow *flows, size_t n, uint64_t now_ns);
/* Placement= changed, or the topology did: forget (and for a topology,
 * re-check) the verdicts; a running trial ends. */
void closed_loop_reset(struct daemon *d, const char *why);
/* A running trial ends now, aborted (caad paused, left enforce mode,
 * restored everything, reloaded): turns that span it would be measured on
 * values caad did not hold. */
void closed_loop_abort(struct daemon *d, const char *why);
/* After plan was applied: a running trial whose turn's placement is not
 * what was planned and in place for its flow (a CPU the rules may not
 * use, a faster flow's queue, a value backed off or refused) ends,
 * aborted: it would measure another placement than it names. */
void closed_loop_applied(struct daemon *d, const struct caad_plan *plan);

/* {"placement": ..., "trials": [...], "store": {... "verdicts": [...]}} for
 * GetTrials: the last trials (the running one last) and the verdicts. */
int closed_loop_format(const struct daemon *d, FILE *f);
