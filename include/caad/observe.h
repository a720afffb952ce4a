/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "caad/cpumask.h"
#include "caad/flow.h"

/* The BPF observer: loads and attaches bpf/observer.bpf.c, reads its maps. */
struct caad_observer;

/*
 * How a snapshot visits the flows' entries: the flow table's own iterator
 * (the entries and nothing else), or the TCP socket iterator (every TCP
 * socket of the reading process's namespace, each under its lock: more
 * work, for kernels that refuse map element iterators). AUTO takes the
 * first where the kernel loads it.
 */
enum caad_flow_iter {
	CAAD_FLOW_ITER_AUTO,
	CAAD_FLOW_ITER_STORAGE,
	CAAD_FLOW_ITER_TCP,
	_CAAD_FLOW_ITER_COUNT,
};

const char *caad_flow_iter_to_string(enum caad_flow_iter i);

/*
 * Where the programs that learn a flow's reader and its processing CPU
 * attach: the tracepoints sock_recv_length and sk_data_ready (Linux 6.3
 * and later), or, on a kernel without them, the kernel functions
 * tcp_recvmsg() (its return) and sock_def_readable() (its entry), which
 * the tracepoints sit in. FUNCTIONS also takes a tcp_sock by the helper
 * bpf_skc_to_tcp_sock() rather than by the kfunc bpf_rdonly_cast() (6.2),
 * as on an older kernel. AUTO: the tracepoints where the kernel's BTF has
 * both.
 */
enum caad_observer_hooks {
	CAAD_HOOKS_AUTO,
	CAAD_HOOKS_TRACEPOINTS,
	CAAD_HOOKS_FUNCTIONS,
	_CAAD_HOOKS_COUNT,
};

const char *caad_observer_hooks_to_string(enum caad_observer_hooks h);

struct caad_observer_options {
	uint32_t netns_inode;  /* only sockets in this netns; 0 = all (the TCP iterator: the reader's only) */
	uint32_t max_flows;    /* most flows followed at once (MaxFlows=); 0 = default (16384) */
	uint32_t ringbuf_size; /* bytes, power of two >= page size; 0 = default */
	enum caad_flow_iter flow_iter;
	/* where flows are handed over as they change (the TCP iterator): a
	 * pass of the iterator at least this often, ms; 0 = default */
	uint32_t full_pass_ms;
	/* a connection is followed from its first read once it has received
	 * this many bytes (MinFlowBytes=); 0: from its first read */
	uint32_t min_flow_bytes;
	enum caad_observer_hooks hooks;
};

#define CAAD_FULL_PASS_MS_DEFAULT 10000u

int caad_observer_open(const struct caad_observer_options *opts, struct caad_observer **ret);
void caad_observer_free(struct caad_observer *o);
static inline void caad_observer_freep(struct caad_observer **o)
{
	caad_observer_free(*o);
}

/* The ring buffer's epoll fd, to be polled by the event loop. */
int caad_observer_fd(struct caad_observer *o);
/* Drain the ring buffer: CONSUMER_LEFT events, counted for
 * caad_observer_take_left(). Returns events handled. */
int caad_observer_consume(struct caad_observer *o);
/*
 * Every flow, sorted by id, with rates computed against the previous
 * snapshot. *ret and *ret_n: NULL and 0, or the previous snapshot's flows
 * given back as it returned them (their rates and histories may have been
 * changed, not their ids or order), which it takes in any case: on return
 * the new snapshot, or NULL and 0 on error.
 *
 * With the flow table's own iterator, every snapshot is a pass of it.
 * With the TCP one (caad_observer_flow_iter()), the programs hand each
 * flow over as it changes, and a snapshot given the previous one back is
 * that one updated with them: a pass of the iterator only when none was
 * given, at least every full_pass_ms, and after a flow could not be
 * handed over. Then a flow's bytes are as of its first read or data-ready
 * after the previous snapshot, or after caad_observer_prepare() when that
 * was called since; its moves, opening and closing as of now. Its rate is
 * over the time between two hand-overs; a flow not handed over since the
 * last snapshot, or with nothing read since, keeps its rate for two scan
 * periods (caad_observer_set_scan_period(); else two intervals between
 * snapshots) after its bytes were last read (by a hand-over or a pass),
 * then reads 0 (caad_flows_update_rates()).
 */
int caad_observer_snapshot(struct caad_observer *o, struct caad_flow **ret, size_t *ret_n);
/*
 * A snapshot between two due ones (caad's early scan, when a steered flow's
 * reader moved), taken as caad_observer_snapshot() takes the previous
 * one. Where flows are handed over and the previous snapshot was given
 * back, with no caad_observer_prepare() since: that one updated with what
 * was handed over since (moves, openings and closings; bytes), with the
 * rates and consumer windows left as the last due snapshot made them (a
 * new flow's rate 0), and the next snapshot's rates still counted from
 * that one; the generation goes on. A busy flow was handed over just
 * before that snapshot and has nothing new yet: rated now, it would read
 * 0, and too high at the next one. Otherwise, as caad_observer_snapshot().
 */
int caad_observer_snapshot_early(struct caad_observer *o, struct caad_flow **ret, size_t *ret_n);
/* Snapshots that failed in a row (0: the last one did not). The first
 * failure is logged at LOG_ERR, the next ones at LOG_DEBUG (and one every
 * 10 minutes at LOG_ERR again), the end of them at LOG_INFO. */
unsigned caad_observer_snapshot_fails(const struct caad_observer *o);
/*
 * A snapshot is due soon: where flows are handed over, each flow that is
 * read or processed from now on is handed over again, so that the next
 * snapshot has its bytes as of then, not as of just after the previous
 * one. Called a few milliseconds ahead, it takes the lag out of the rates
 * of every flow that moves data at least that often. Nothing otherwise.
 */
void caad_observer_prepare(struct caad_observer *o);
/* Whether the programs hand flows over (the TCP iterator's kernels): where
 * they do not, caad_observer_prepare() does nothing and is not worth a
 * wakeup. */
bool caad_observer_hands_over(const struct caad_observer *o);
/* The period of the snapshots (the daemon's scans): how long a flow keeps
 * its rate without a hand-over is counted in it, not in the time since the
 * last snapshot, which an early one shortens. 0: that time. */
void caad_observer_set_scan_period(struct caad_observer *o, uint64_t period_usec);
/*
 * Where flows are handed over: the CPU time of the last snapshot that was a
 * pass of the flows' iterator, and how often one runs at least, in us (0
 * and 0 otherwise): for a scan budget to count its share in every scan.
 */
void caad_observer_pass_cost(const struct caad_observer *o, uint64_t *cpu_usec, uint64_t *every_usec);
/* Whether the last snapshot was a pass of the flows' iterator; and one
 * that ran only because full_pass_ms had passed (not one that had to: the
 * previous flows not given back, or a flow that could not be handed over). */
bool caad_observer_last_full(const struct caad_observer *o);
bool caad_observer_last_periodic(const struct caad_observer *o);
/* Sum of the per-CPU counters (enum caad_counter). */
/*
 * Steered flows whose reader is followed between scans: ids (sorted, at
 * most CAAD_STAY_MAX taken) and for each the CPUs its reader may read on
 * without its steering going stale (caad_decision_stay()). The set
 * replaces the one before; [] stops following. A read outside the set
 * counts once (until the flow is set again) in caad_observer_take_left(),
 * the number of such reads since it was last called; left_total counts
 * them all. Returns 0 or the last error (the flows it could not follow
 * are seen at the next scan as before).
 */
int caad_observer_set_stay(struct caad_observer *o, const uint64_t *ids, const struct caad_cpumask *cpus, size_t n);
unsigned caad_observer_take_left(struct caad_observer *o);
uint64_t caad_observer_left_total(const struct caad_observer *o);

/* read() calls the last snapshot made on the flow table's iterator (not
 * counting the batch lookups of its copy). */
unsigned caad_observer_snapshot_calls(const struct caad_observer *o);
/* Which iterator the snapshots use (never AUTO). */
enum caad_flow_iter caad_observer_flow_iter(const struct caad_observer *o);
/* Where the reader's and the processing side's programs attach (never AUTO). */
enum caad_observer_hooks caad_observer_hooks(const struct caad_observer *o);
/* Whether this kernel loads an iterator over a socket storage map: 1 yes,
 * 0 refused (the error is logged at debug level), < 0 could not tell. */
int caad_probe_storage_iter(void);
uint64_t caad_observer_counter(struct caad_observer *o, enum caad_counter c);
/* The same, < 0 where the map cannot be read (caad_observer_counter() then
 * gives its last good read, 0 before any: it never goes backwards). */
int caad_observer_counter_read(struct caad_observer *o, enum caad_counter c, uint64_t *ret);

/*
 * On-CPU time of one thread (a trial's consumer): watch tid (0: stop), then
 * read its time since, in ns: its scheduler runtime (steal excluded), read
 * by a BPF task iterator, up to date to within a scheduler tick also while
 * it runs. Once the thread is gone, what was read last; never less than
 * that.
 */
void caad_observer_watch_thread(struct caad_observer *o, uint32_t tid);
uint64_t caad_observer_thread_ns(struct caad_observer *o);
/* The last caad_observer_thread_ns() could not read the thread's time
 * (not: the thread is gone): what it said is not the time now. */
bool caad_observer_thread_ns_failed(const struct caad_observer *o);

/*
 * NET_RX softirq time while a thread is watched that its thread time does
 * not hold already, in ns: on top of other tasks; on top of the watched
 * thread too only where the kernel accounts IRQ time apart (elsewhere the
 * scheduler billed that to the thread's sum_exec_runtime, and adding it
 * again made a same-core placement look costlier than it is). < 0 where
 * its counters cannot be read, or do not count (-ENOLINK: a thread is
 * watched, but the softirq programs could not be attached).
 */
int caad_observer_net_rx_ns(struct caad_observer *o, uint64_t *ret);

/*
 * Whether some interface caad follows has a threaded NAPI: only then does
 * the observer ask, at each data-ready, whether a NAPI kthread processes
 * the flow (proc_kthread), which costs a helper call there.
 */
void caad_observer_set_napi_threads(struct caad_observer *o, bool on);
/*
 * MinFlowBytes= (a reload's): connections not followed yet are followed
 * from their first read once they have received this many bytes; those
 * followed already stay so.
 */
void caad_observer_set_min_flow_bytes(struct caad_observer *o, uint32_t bytes);

/* Whether a kernel with this config (text of /boot/config-RELEASE) and
 * command line accounts IRQ time apart from tasks' run time. */
bool caad_irq_time_accounting(const char *config, const char *cmdline);

/* Inode of the calling process's network namespace. */
/*
 * Whether reading caad's BPF maps (lookup, next key, batch) needs a
 * capability of its own once caad keeps only CAP_NET_ADMIN and
 * CAP_SYS_NICE: before Linux 5.19 every bpf() command was refused without
 * CAP_BPF (or CAP_SYS_ADMIN) while kernel.unprivileged_bpf_disabled was
 * set; 5.19 narrowed that to loading programs and creating maps.
 * release: uname(2)'s; disabled: the sysctl's value (-1 unknown). Returns
 * 0 when none is needed, else the capability to keep: CAP_BPF from 5.8
 * (whatever the sysctl says now: it may be set later), CAP_SYS_ADMIN
 * before it (only while the sysctl is set). A release that does not parse
 * counts as old.
 */
int caad_bpf_read_capability(const char *release, int disabled);

int caad_netns_self_inode(uint32_t *ret);
