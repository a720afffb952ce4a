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
 * steers them apart on purpose. Each side's fields are a group of their
 * own, at least 64 bytes from the other's and from the storage element's
 * header (which every lookup reads, just before each value): wherever the
 * kernel puts the value, neither side's writes take a cache line from
 * under the other's lookups or writes. The gaps cost 112 bytes a flow; on
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
	__u16 _pad0;
	__u32 consumer_pid;   /* tgid */
	__u32 consumer_tid;
	__u32 consumer_cpu;   /* CPU of the last read */
	__u8 laddr[16];       /* IPv4 in the first 4 bytes */
	__u8 raddr[16];
	__u64 claimed;        /* 1 once a CPU counted it in n_flows (of two that made it at once) */

	/* reader side: written at every read */
	__u64 bytes;          /* bytes handed to the reader (no clock read per read:
	                       * user space rates the flow between its snapshots) */

	char comm[CAAD_COMM_LEN]; /* written with consumer_tid */
	__u8 _gap1[48];

	/* softirq side: where the flow's packets are processed, written at
	 * every data-ready in NET_RX softirq (or a threaded NAPI kthread) */
	__u32 proc_cpu;       /* CPU of the last one */
	__u32 rx_ifindex;     /* sk->sk_rx_dst_ifindex */
	__u32 napi_id;        /* sk->sk_napi_id (< 257 is not a NAPI id) */
	__u32 rx_queue;       /* sk->sk_rx_queue_mapping (65535: unknown) */
	__u32 proc_kthread;   /* threaded NAPI kthread (pid) that processed it last, 0 none */
	/* not the softirq side's: caad_flows_dump's, once a scan */
	__u32 rcv_ooopack;    /* tcp_sock->rcv_ooopack: packets that arrived out of order, as
	                       * read at the last scan after which the reader read more */
	__u64 ooo_bytes;      /* bytes when rcv_ooopack was read (so each scan reads it only
	                       * for flows read since: not for many idle ones) */
	__u8 _gap2[64];       /* from whatever memory follows the value */
};

/* The groups' distances, for both sides to check. */
_Static_assert(__builtin_offsetof(struct caad_flow_stats, bytes) >= 64, "the reader's fields near the key");
_Static_assert(__builtin_offsetof(struct caad_flow_stats, proc_cpu) -
                       __builtin_offsetof(struct caad_flow_stats, comm) >= 64,
               "the reader's and the softirq side's fields could share a cache line");
_Static_assert(sizeof(struct caad_flow_stats) - __builtin_offsetof(struct caad_flow_stats, _gap2) >= 64,
               "the softirq side's fields near the memory after the value");
_Static_assert(sizeof(struct caad_flow_stats) == 248, "struct caad_flow_stats: caad.conf(5) MaxFlows= says 248 bytes");

/*
 * A flow as a snapshot hands it over: the "dump" array's value, which
 * caad_flows_dump fills from each entry (what caad reads of it: not the
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
	__u16 _pad0;
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
	__u32 _pad1;
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
	CAAD_COUNTER_MAP_FULL = 1,     /* a new flow not followed: max_flows reached, or no memory */
	CAAD_COUNTER_NET_RX_NS = 2,    /* time spent in NET_RX softirq while a thread is watched (watch_tid),
	                                * on top of any other task, ns */
	CAAD_COUNTER_NET_RX_ON_WATCHED_NS = 3, /* the same, on top of the watched thread itself (in its own
	                                        * sum_exec_runtime too unless the kernel accounts IRQ time) */
	CAAD_COUNTER_FLOWS_NEW = 4,    /* flows followed from their first read on */
	CAAD_COUNTER_FLOWS_CLOSED = 5, /* ... that reached TCP_CLOSE (no longer listed) */
	CAAD_COUNTER_MAX = 6,
};
