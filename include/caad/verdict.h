/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Verdicts of closed-loop trials, remembered per interface, application
 * (comm) and kind of reader (pinned to one CPU, or free to be moved by the
 * scheduler): which topology relation of processing to consumer won there.
 * A later flow of the same application on the same interface, read by a
 * thread pinned the same way, reuses it without a trial. Kept in
 * STATE_DIR/verdicts.json; all of them expire when the kernel or the
 * topology changes, one when its interface's driver changes or when it is
 * older than the configured age.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "caad/observer-abi.h"
#include "caad/topology.h"

#define CAAD_VERDICT_NAME_MAX 64

struct caad_verdict {
	char iface[CAAD_VERDICT_NAME_MAX];
	char driver[CAAD_VERDICT_NAME_MAX]; /* of iface when decided ("" none, a virtual device) */
	char comm[CAAD_COMM_LEN];
	enum caad_relation relation;        /* what won: the processing CPU's relation to the consumer's */
	uint64_t decided_sec;               /* CLOCK_REALTIME */
	unsigned trial;                     /* the trial's id in the run that decided it */
	double goodput_ratio, efficiency_ratio; /* of the winner to the prior; when the prior stood, of the
	                                         * alternative that came closest */
	unsigned pairs, wins;
	int behind;                         /* pairs behind in goodput by more than the margin; -1:
	                                     * not known (a store written before it was kept) */
	/* whose figures those are: the winner (relation), or when the prior
	 * stood (kept_prior), the alternative that came closest; UNSTEERED
	 * (and kept_prior false: neither known) where a store written before
	 * these were kept does not say */
	enum caad_relation alternative;
	bool kept_prior;
	/* decided for a reader the scheduler may move (its CPU affinity holds
	 * more than one usable CPU); false: one pinned to a single CPU. A
	 * store written before it was kept does not say: its trials ended at
	 * the reader's first move, so their readers stayed on one CPU, most
	 * likely pinned there; read as pinned (an unpinned reader gets a
	 * trial of its own) */
	bool unpinned;
	/* put since the set was last loaded or saved: the store does not
	 * hold it (not written to the file, not read from it) */
	bool unsaved;
};

struct caad_verdicts {
	char kernel[128];                   /* uname -r when they were decided */
	char topology[128];                 /* caad_topology_fingerprint() */
	struct caad_verdict *v;
	size_t n;
};

/* A short text that changes when the CPUs, cores, LLCs, packages, NUMA
 * nodes or usable CPUs do: their counts, and which of each every CPU is in. */
void caad_topology_fingerprint(const struct caad_topology *t, char *buf, size_t size);

/*
 * Load path into ret for this kernel and topology. A missing file is an
 * empty set. Verdicts of another kernel or topology, or older than
 * max_age_sec (0: no limit) at now_sec, are dropped: ret_dropped counts
 * them and ret_why (may be NULL) says why. One dated more than 60 s ahead
 * of now_sec (with an age limit) is kept but not found until the clock
 * reaches it (caad_verdicts_ahead()). A file that cannot be parsed is an
 * error naming it, with the line and column of a JSON syntax error
 * (-EBADMSG); so is one that is not a regular file (a FIFO, a device, a
 * symbolic link: caad writes the store by rename, and reads it without
 * waiting on a FIFO's writer); ret is then empty and usable.
 */
int caad_verdicts_load(const char *path, const char *kernel, const char *topology, uint64_t now_sec,
                       uint64_t max_age_sec, struct caad_verdicts *ret, size_t *ret_dropped, char **ret_why);
/* Write vs to path, atomically; once written, none of vs is unsaved. */
int caad_verdicts_save(struct caad_verdicts *vs, const char *path);
int caad_verdicts_format(const struct caad_verdicts *vs, FILE *f);
void caad_verdicts_done(struct caad_verdicts *vs);

/* The verdict for iface, comm and a reader pinned or not (unpinned), or
 * NULL. One decided under another driver (or another interface behind the
 * name) is dropped first. One dated more than 60 s ahead of now_sec (with
 * an age limit) is kept and not returned: ret_ahead (may be NULL) is then
 * true, else false; the application has a verdict, not usable until the
 * clock reaches it, and is not to be tried meanwhile. Names are kept and
 * compared as caad_utf8_sanitize() makes them, as the bus shows them: raw
 * and shown names find the same verdict. */
const struct caad_verdict *caad_verdicts_find(struct caad_verdicts *vs, const char *iface, const char *driver,
                                              const char *comm, bool unpinned, uint64_t now_sec,
                                              uint64_t max_age_sec, bool *ret_ahead);
/* Drop those older than max_age_sec at now_sec (0: none), however long
 * none was looked for (an interface gone, a thread name never seen
 * again): how many. */
size_t caad_verdicts_expire(struct caad_verdicts *vs, uint64_t now_sec, uint64_t max_age_sec);
/* How many are dated more than 60 s ahead of now_sec (kept, not used). */
size_t caad_verdicts_ahead(const struct caad_verdicts *vs, uint64_t now_sec, uint64_t max_age_sec);
/* Add v, replacing the verdict of the same interface, comm and kind of
 * reader; it is unsaved until vs is saved. */
int caad_verdicts_put(struct caad_verdicts *vs, const struct caad_verdict *v);
/* Drop those the store holds (not unsaved): what a load of the store must
 * add to what it reads, or lose. Returns how many are left. */
size_t caad_verdicts_keep_unsaved(struct caad_verdicts *vs);
