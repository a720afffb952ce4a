/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "caad/observer-abi.h"

/*
 * The CPUs a flow's consumer read on at the scans before the latest, kept
 * beside consumer_cpu: with it, the window of 1 + CAAD_CONSUMER_HISTORY
 * scans (1 s at the default IntervalMSec=250) in which the planner treats
 * every CPU the consumer ran on as the consumer's.
 */
#define CAAD_CONSUMER_HISTORY 3

/*
 * A flow: a TCP connection seen from the receiver, 128 bytes. What the
 * planner reads of every flow comes first, within 44 bytes: a pass over a
 * million flows then reads one cache line of each where it can (at 136
 * bytes a flow, the first line of some held only part of it). bench/planner
 * at 1M heavy flows: median 25.4 ms against 32.8 at 136 bytes (5 runs each,
 * interleaved).
 */
struct caad_flow {
	uint64_t id;           /* kernel socket address: unique while it lives; never shown (caad_flow_public_id()) */
	uint64_t rate_bps;     /* read rate over the last interval (or between two hand-overs), bit/s */
	uint64_t first_ns;     /* when it was first seen (CLOCK_MONOTONIC), 0 unknown */
	int consumer_cpu;      /* -1 unknown */
	/* Where the consumer read at the scans before this one, the latest
	 * first: with consumer_cpu, the CPUs it ran on within a short window
	 * (rule 1); n_consumer_history of them, 0 for a new flow. */
	uint16_t consumer_history[CAAD_CONSUMER_HISTORY];
	uint8_t n_consumer_history;
	uint8_t family;        /* AF_INET, AF_INET6; 0 unknown */
	int ifindex;           /* receiving interface, 0 unknown */
	int rx_queue;          /* -1 unknown */

	uint8_t laddr[16], raddr[16];
	uint16_t lport, rport;
	uint32_t pid, tid;     /* consuming process and thread */
	char comm[CAAD_COMM_LEN];
	int proc_cpu;          /* CPU processing its packets (softirq), -1 unknown */
	uint32_t napi_id;      /* 0 unknown */
	uint32_t proc_kthread; /* threaded NAPI kthread that processed it, 0 none */
	uint32_t ooo_packets;  /* packets that arrived out of order (tcp rcv_ooopack) */

	uint64_t bytes;        /* total read by the consumer */
};

/*
 * The id a flow goes by outside caad (D-Bus, state.json, its log): a keyed
 * hash of its id, the kernel socket's address, which would tell any local
 * user where the kernel's memory lies (and undo KASLR). SipHash-2-4 with a
 * key that caad_flow_id_key_random() draws at start (until then, and in
 * tests, a key of zeros): the same for a flow while caad runs, another in
 * the next run; two flows share one with a chance of about n^2 / 2^65.
 */
uint64_t caad_flow_public_id(uint64_t id);
int caad_flow_id_key_random(void); /* 0, or -errno of getrandom(2) */
void caad_flow_id_key_set(const uint8_t key[16]);
/* SipHash-2-4 (Aumasson and Bernstein, 2012) of len bytes at data. */
uint64_t caad_siphash24(const uint8_t key[16], const void *data, size_t len);

/* "10.0.0.2:5201 <- 10.0.0.1:40312" (local <- remote). */
int caad_flow_format_tuple(const struct caad_flow *f, char *buf, size_t size);
/* Convert one record of the BPF snapshot into a flow (rate left 0). */
void caad_flow_from_record(struct caad_flow *f, const struct caad_flow_record *s);
/*
 * A record handed over between snapshots, onto the listed flow f of the same
 * id (socket address): CAAD_MERGE_GONE when it says the flow closed,
 * CAAD_MERGE_LIVE when f now holds it (its rate and consumer window kept,
 * its bytes never fewer, when it is the same connection; a new one at the
 * address starts from 0), CAAD_MERGE_OTHER when it is the close of an
 * earlier connection that had the address (f is left as it is); the close
 * of a later one says f ended too. First-seen times tell connections
 * apart (0: not known, the same).
 */
enum caad_merge { CAAD_MERGE_LIVE, CAAD_MERGE_GONE, CAAD_MERGE_OTHER };
enum caad_merge caad_flow_merge_record(struct caad_flow *f, const struct caad_flow_record *rec);
/* When a record's bytes were read (CLOCK_MONOTONIC), from its at_us (the low
 * 32 bits of the clock in microseconds: within 35 minutes of now_ns, before
 * or after, as a record handed over as a drain runs is); at_us 0: now_ns. */
uint64_t caad_flow_record_time(const struct caad_flow_record *s, uint64_t now_ns);

/*
 * What the next snapshot needs of a flow in this one: the base of its rate
 * and of its consumer's window. 48 bytes where a flow takes 128: the
 * observer keeps these between scans, not a copy of the flows (at 100k
 * flows 4.8 MB instead of 12.8).
 */
struct caad_flow_base {
	uint64_t id;
	uint64_t bytes;
	uint64_t bytes_ns; /* when they were read (CLOCK_MONOTONIC) */
	uint64_t rate_bps; /* its rate in that snapshot */
	uint32_t tid;
	int32_t consumer_cpu;
	uint16_t consumer_history[CAAD_CONSUMER_HISTORY];
	uint8_t n_consumer_history;
};

/* base[i] of flows[i], for n flows, whose bytes were read at at[i] (NULL:
 * all at now_ns; caad_flows_update_rates() fills at). */
void caad_flows_base(struct caad_flow_base *base, const struct caad_flow *flows, const uint64_t *at, size_t n,
                     uint64_t now_ns);

/*
 * Rates: given the previous snapshot's bases (sorted by id) and the new
 * snapshot (taken at now_ns, interval_ns after the previous one; 0: no
 * rates yet), fill rate_bps of the new snapshot's flows. Each flow's bytes
 * were read at at[i] (CLOCK_MONOTONIC), at most now_ns: a flow handed over
 * by the BPF programs has its bytes as of its hand-over, not of the
 * snapshot. NULL: every flow's at now_ns (a pass of the iterator).
 *
 * A flow in the previous snapshot is rated by its byte delta over the time
 * between the two reads of its bytes. One with nothing read since its base
 * (its reader idle; or, handed over, at the start of a burst: a hand-over
 * comes at the first read or data-ready after caad's prepare), read not
 * after it, or not read at all (at[i] 0: handed over no more), has its
 * base's bytes again, as of the base's read, and keeps the base's rate
 * while that read is less than keep_ns old, then reads 0. So does one
 * handed over with fewer bytes than its base (before a pass read more),
 * and one handed over less than an eighth of interval_ns after its base
 * (a burst's first read just after a pass took the base: rated over a
 * longer window later);
 * one that a pass (pass: the flows' iterator read every one, at at[i])
 * read with fewer is another socket at the same address, rated 0. A flow
 * not in the previous one is rated from its first_ns to when its bytes
 * were read. So is one first seen since its base's bytes were read though
 * its id was there: another socket at the same address. On return at[i]
 * says when the bytes of cur[i] were read, for the next base. Both must
 * be sorted by id (caad_flows_sort).
 */
void caad_flows_sort(struct caad_flow *flows, size_t n);
/* The same, aux[i] moved with flows[i]: 0, or -ENOMEM (nothing moved). */
int caad_flows_sort_aux(struct caad_flow *flows, uint64_t *aux, size_t n);
void caad_flows_update_rates(struct caad_flow *cur, size_t n_cur, const struct caad_flow_base *prev, size_t n_prev,
                             uint64_t *at, bool pass, uint64_t interval_ns, uint64_t keep_ns, uint64_t now_ns);
/*
 * The consumer's window: given the previous snapshot's bases and the new
 * snapshot (both sorted by id), fill consumer_history of the new flows with
 * the previous consumer_cpu and history, the latest first. A flow that is
 * new (first seen after prev_ns, the previous snapshot's time, 0: not
 * known; or after its base's bytes were read, as its rate takes it), whose
 * socket was reused (bytes went backwards) or that another
 * thread reads now starts with an empty history; so does one whose
 * consumer CPU is unknown.
 */
void caad_flows_update_history(struct caad_flow *cur, size_t n_cur, const struct caad_flow_base *prev,
                               size_t n_prev, uint64_t prev_ns);

/*
 * A set of flows kept across snapshots, each as (id, first_ns): a socket's
 * address may be reused, and the flow at it then is another. Zeroed to
 * start (empty); caad_flow_set_done() frees it.
 */
struct caad_flow_set {
	struct caad_flow_set_entry {
		uint64_t id, first_ns;
	} *v;
	size_t n, cap;
};
/* Drop the members that are not in flows[0..n) (sorted by id) any more. */
void caad_flow_set_keep_live(struct caad_flow_set *s, const struct caad_flow *flows, size_t n);
bool caad_flow_set_has(const struct caad_flow_set *s, const struct caad_flow *f);
/* Add f: 1, 0 where it was there already, or -ENOMEM. */
int caad_flow_set_add(struct caad_flow_set *s, const struct caad_flow *f);
void caad_flow_set_done(struct caad_flow_set *s);
