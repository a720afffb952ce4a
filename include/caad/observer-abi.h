/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ABI between caad's BPF programs (bpf/observer.bpf.c) and user space:
 * map value and ring buffer event layouts. Included by both sides.
 */
#pragma once

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CAAD_COMM_LEN 16
#define CAAD_CPU_NONE 0xffffffffu

/*
 * Value of the "flows" socket storage map: a TCP socket's entry, made at
 * its first read; sk, the kernel socket address, is the flow's id.
 *
 * Two CPUs write it: the reader's (sock_recv_length) and the one that
 * processes the flow's packets (sk_data_ready in NET_RX softirq), and caad
 * steers them apart on purpose (the flows' iterator writes the bytes, once a
 * scan). Each side's fields are a group of their own, at least 64 bytes
 * from the other's and from the storage element's header (which every
 * lookup reads, just before each value): wherever the kernel puts the
 * value, neither side's writes take a cache line from under the other's
 * lookups or writes (but for pub_gen, where flows are handed over: a
 * write once a scan generation). The gaps cost 96 bytes a flow (_gap1,
 * _pad2, _gap2); on
 * the 2-vCPU development VM, sk_data_ready took about 165 ns an event
 * instead of 220 (bench/observer, rounds with under 7% steal, with the
 * hash map of the time). Checked again on socket storage: with bytes
 * moved beside the header, sk_data_ready took 119-122 ns an event, not
 * 78-91, and sock_recv_length gained nothing it could show (two runs).
 */
struct caad_flow_stats {
	/* written at the first read, or when the reader changes; read by both
	 * sides, and first: beside the map's key, which every lookup reads */
	__u64 sk;
	__u64 first_ns;       /* bpf_ktime_get_ns() at first sight */
	__u32 closed;         /* 1 once the socket reached TCP_CLOSE: no longer listed, out of
	                       * n_flows; the kernel frees the entry with its socket */
	__u16 family;         /* AF_INET / AF_INET6 */
	__u16 lport;          /* local port, host order */
	__u16 rport;          /* remote port, host order */
	__u16 listed;         /* where flows are handed over: 1 once user space may list it
	                       * (handed over, or copied by a pass), whose close is then too */
	__u32 consumer_pid;   /* tgid */
	__u32 consumer_tid;
	__u32 consumer_cpu;   /* CPU of the last read */
	__u8 laddr[16];       /* IPv4 in the first 4 bytes */
	__u8 raddr[16];
	__u64 claimed;        /* 1 once a CPU counted it in n_flows (of two that made it at once) */

	/* reader side: written when a read looks the entry up (its first; on
	 * a CPU whose last read was of another socket; every 1 MiB) */
	__u64 read_mark;      /* bytes of the reads that looked it up: the thread is asked
	                       * again when they cross a 1 MiB mark */
	char comm[CAAD_COMM_LEN]; /* written with consumer_tid */

	/* the flows' iterator's, once a scan (and the first read's): what the
	 * reader read, from the kernel's own counters, not counted per read */
	__u64 bytes;          /* bytes read since (and with) the first read seen */
	__u32 read_seq;       /* tcp_sock->copied_seq then (the first read's: before it) */
	__u32 pub_gen;        /* where flows are handed over as they change (caad_observer's
	                       * "publish"): the scan_gen of the last hand-over, written by
	                       * the side that hands it over (the softirq side too: once a
	                       * scan generation, or when processing moves; not at each
	                       * event) */
	__u64 received;       /* tcp_sock->bytes_received then */
	__u8 _gap1[24];

	/* softirq side: where the flow's packets are processed, written at
	 * every data-ready in NET_RX softirq (or a threaded NAPI kthread) */
	__u32 proc_cpu;       /* CPU of the last one */
	__u32 rx_ifindex;     /* sk->sk_rx_dst_ifindex */
	__u32 napi_id;        /* sk->sk_napi_id (< 257 is not a NAPI id) */
	__u32 rx_queue;       /* sk->sk_rx_queue_mapping (65535: unknown) */
	__u32 proc_kthread;   /* threaded NAPI kthread (pid) that processed it last, 0 none */
	/* not the softirq side's: the flows' iterator's, once a scan */
	__u32 rcv_ooopack;    /* tcp_sock->rcv_ooopack: packets that arrived out of order, as
	                       * read at the last scan after which the reader read more */
	__u8 _pad2[8];
	__u8 _gap2[64];       /* from whatever memory follows the value */
};

/* The groups' distances, for both sides to check. */
_Static_assert(__builtin_offsetof(struct caad_flow_stats, read_mark) >= 64, "the reader's fields near the key");
/* 64 bytes from the end of one to the start of the other, wherever the
 * value lies (it is 8-byte aligned, not 64): read_mark, which a read writes
 * at every lookup, and the softirq side's fields never share a line. comm,
 * written only when another thread reads the flow, may share one with
 * proc_cpu (64 more bytes would take 256 from each flow's 248). */
_Static_assert(__builtin_offsetof(struct caad_flow_stats, proc_cpu) -
                       (__builtin_offsetof(struct caad_flow_stats, read_mark) + sizeof(__u64)) >=
                       64,
               "the reader's and the softirq side's fields could share a cache line");
_Static_assert(sizeof(struct caad_flow_stats) - __builtin_offsetof(struct caad_flow_stats, _gap2) >= 64,
               "the softirq side's fields near the memory after the value");
_Static_assert(__builtin_offsetof(struct caad_flow_stats, read_mark) < __builtin_offsetof(struct caad_flow_stats, comm),
               "the reader's fields are read_mark to comm");
_Static_assert(sizeof(struct caad_flow_stats) == 248, "struct caad_flow_stats: caad.conf(5) MaxFlows= says 248 bytes");

/*
 * Bytes a flow's reader read between two scans. tcp_sock's copied_seq,
 * the sequence number of the next byte the application reads, moved by
 * seq - seq_then: exact, but in 32 bits, which wrap at every 4 GiB (0.34 s
 * of a 100 Gbit/s flow; scans may be a minute apart). bytes_received, in
 * 64 bits, counts what reached the receive queue in order: it moved by
 * what the reader read plus what the queue gained meanwhile, less than
 * 2 GiB either way (a receive window is at most 1 GiB). So the count
 * congruent to the first difference and within 2 GiB of the second.
 */
static inline __attribute__((always_inline)) __u64 caad_read_delta(__u32 seq, __u32 seq_then, __u64 rcvd,
                                                                   __u64 rcvd_then)
{
	__u64 arrived = rcvd - rcvd_then;
	__s64 d;

	if ((__s64)arrived < 0) /* bytes_received starts again at a disconnect */
		arrived = 0;
	d = (__s64)arrived + (__s32)((seq - seq_then) - (__u32)arrived);
	return d < 0 ? 0 : (__u64)d;
}

/*
 * A flow as a snapshot hands it over: the "dump" array's value, which
 * the flows' iterator fills from each entry (what caad reads of it: not the
 * gaps that keep the two writers apart, nor the entry's bookkeeping). 120
 * bytes, not the entry's 248: half the copying, in the kernel and out to
 * caad, at every scan of every flow, and half the array.
 */
struct caad_flow_record {
	__u64 sk;             /* the flow's id */
	__u64 first_ns;
	__u64 bytes;
	__u16 family;
	__u16 lport;
	__u16 rport;
	__u16 closed;         /* 1: it closed (only a hand-over through "recent" says so) */
	__u32 consumer_pid;
	__u32 consumer_tid;
	__u32 consumer_cpu;
	__u32 proc_cpu;
	__u32 rx_ifindex;
	__u32 napi_id;
	__u32 rx_queue;
	__u32 proc_kthread;
	__u32 rcv_ooopack;
	__u8 laddr[16];
	__u8 raddr[16];
	char comm[CAAD_COMM_LEN];
	/* When its bytes were read: CLOCK_MONOTONIC in microseconds, its low
	 * 32 bits (they wrap every 71 minutes; a record is read within a scan
	 * period); 0: not known (as of when user space reads it). */
	__u32 at_us;
};

_Static_assert(sizeof(struct caad_flow_record) == 120,
               "struct caad_flow_record: its comment and caad.conf(5) MaxFlows= say 120 bytes");

/* Flows opening and closing are counters (CAAD_COUNTER_FLOWS_*), not events:
 * 1 and 2 were those events. */
enum caad_event_type {
	CAAD_EVENT_CONSUMER_LEFT = 3, /* a steered flow's reader read on a CPU outside its "stay" set */
};

/*
 * Value of the "stay" hash map, keyed by the flow's id: for a steered flow,
 * the CPUs its reader may move between without its steering going stale
 * (its LLC less the steered core). A read elsewhere sends
 * CAAD_EVENT_CONSUMER_LEFT once and drops the entry; user space then
 * replans at once instead of at its next scan.
 */
#define CAAD_STAY_CPUS 4096
#define CAAD_STAY_MAX 512 /* steered flows followed this way; the others at the next scan */
struct caad_stay {
	__u64 cpus[CAAD_STAY_CPUS / 64];
};

/* Ring buffer record. */
struct caad_event {
	__u32 type;
	__u32 cpu; /* where the reader read */
	__u64 sk;  /* the flow's id */
};

/* Indices of the per-CPU "counters" array. */
enum caad_counter {
	CAAD_COUNTER_EVENTS_LOST = 0,  /* ring buffer full */
	CAAD_COUNTER_MAP_FULL = 1,     /* a read of a flow not followed: max_flows reached, or no memory */
	CAAD_COUNTER_NET_RX_NS = 2,    /* time spent in NET_RX softirq while a thread is watched (watch_tid),
	                                * on top of any other task, ns */
	CAAD_COUNTER_NET_RX_ON_WATCHED_NS = 3, /* the same, on top of the watched thread itself (in its own
	                                        * sum_exec_runtime too unless the kernel accounts IRQ time) */
	CAAD_COUNTER_FLOWS_NEW = 4,    /* flows followed, from their first read past min_flow_bytes on */
	CAAD_COUNTER_FLOWS_CLOSED = 5, /* ... that reached TCP_CLOSE (no longer listed) */
	CAAD_COUNTER_PUBLISH_FAILED = 6, /* a changed flow not handed over ("recent" full, or no memory) */
	CAAD_COUNTER_MAX = 7,
};
