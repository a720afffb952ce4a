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

/* Value of the "flows" LRU hash map, keyed by the kernel socket address. */
struct caad_flow_stats {
	__u64 sk;
	__u32 netns;          /* inode of the socket's network namespace */
	__u16 family;         /* AF_INET / AF_INET6 */
	__u16 lport;          /* local port, host order */
	__u16 rport;          /* remote port, host order */
	__u16 _pad0;
	__u8 laddr[16];       /* IPv4 in the first 4 bytes */
	__u8 raddr[16];

	/* process side: the thread that reads the socket */
	__u32 consumer_pid;   /* tgid */
	__u32 consumer_tid;
	__u32 consumer_cpu;   /* CPU of the last read */
	__u32 _pad1;
	char comm[CAAD_COMM_LEN];
	__u64 bytes;          /* bytes handed to the reader */
	__u64 reads;

	/* softirq side: where the flow's packets are processed */
	__u32 proc_cpu;       /* CPU of the last NET_RX-softirq data-ready */
	__u32 rx_ifindex;     /* sk->sk_rx_dst_ifindex */
	__u32 napi_id;        /* sk->sk_napi_id (< 257 is not a NAPI id) */
	__u32 rx_queue;       /* sk->sk_rx_queue_mapping (65535: unknown) */
	__u64 proc_events;    /* data-ready events in NET_RX softirq */
	__u64 proc_events_same_cpu; /* ... of which on the consumer's CPU */
	__u64 backlog_events; /* data-ready events in process context */

	__u64 first_ns;       /* bpf_ktime_get_ns() at first sight */
	__u64 last_ns;        /* last read or data-ready */
	__u32 proc_kthread;   /* threaded NAPI kthread (pid) that processed it last, 0 none */
	__u32 rcv_ooopack;    /* tcp_sock->rcv_ooopack: packets that arrived out of order */
};

enum caad_event_type {
	CAAD_EVENT_FLOW_NEW = 1,   /* first read seen on a socket */
	CAAD_EVENT_FLOW_CLOSE = 2, /* socket reached TCP_CLOSE (and left the map) */
	CAAD_EVENT_CONSUMER_LEFT = 3, /* a steered flow's reader read on a CPU outside its "stay" set */
};

/*
 * Value of the "stay" hash map, keyed like "flows": for a steered flow,
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
	__u32 cpu;
	__u64 sk;
	__u64 ts_ns;
	__u64 bytes;
};

/* Indices of the per-CPU "counters" array. */
enum caad_counter {
	CAAD_COUNTER_EVENTS_LOST = 0,  /* ring buffer full */
	CAAD_COUNTER_MAP_FULL = 1,     /* flows map update failed */
	CAAD_COUNTER_NET_RX_NS = 2,    /* time spent in NET_RX softirq, ns */
	CAAD_COUNTER_MAX = 3,
};
