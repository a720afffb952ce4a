// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * caad's flow observer: per TCP socket in caad's network namespace, who
 * consumes it (thread, CPU, bytes) and where its packets are processed
 * (CPU of data-ready in NET_RX softirq, rx ifindex/queue, NAPI id).
 *
 * Tracepoints (tp_btf), where the kernel has them: some refuse fentry
 * and kprobes. Before Linux 6.3, which added two of them, the same
 * programs on the functions they sit in (fentry, fexit): user space loads
 * one set.
 * A flow's entry is socket local storage, which a lookup finds through
 * the socket itself (no hash); at most max_flows of them. On a timer,
 * user space has an iterator copy them all into an array, which it then
 * reads; a ring buffer wakes it at once only when a steered flow's reader
 * moves away from it.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "caad/observer-abi.h"

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define SOCK_STREAM 1
#define NET_RX_SOFTIRQ 3
#define MSG_PEEK 2
#define MSG_ERRQUEUE 0x2000
#define TCP_CLOSE 7
#define BPF_F_NO_PREALLOC_ 1
#define TID_CHECK_SHIFT 20 /* sock_recv_length asks for the thread every 1 MiB */

/* Kernels built with CONFIG_SOCK_RX_QUEUE_MAPPING have this field; the
 * vendored vmlinux.h may not: a CO-RE flavour lets the loader decide. */
struct sock___rxq {
	__u16 sk_rx_queue_mapping;
} __attribute__((preserve_access_index));

/*
 * A pointer of another type, for reading only: a kfunc of Linux 6.2 and
 * later. Built twice (bpf/meson.build): with it, and with
 * CAAD_NO_KFUNCS for older kernels, where an extern kfunc, even a weak
 * one, fails the load of a caad without CAP_SYS_ADMIN (libbpf looks for
 * it in the modules' BTF, whose listing needs that). The two objects
 * differ in tcp_of() alone, and user space loads one of them.
 */
#ifndef CAAD_NO_KFUNCS
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#endif

/* A map of one value of type T per CPU (an array of one per-CPU entry). */
#define PERCPU_SLOT(T)                                                                                                 \
	struct {                                                                                                       \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                                                               \
		__uint(max_entries, 1);                                                                                \
		__type(key, __u32);                                                                                    \
		__type(value, T);                                                                                      \
	}

/* Set by user space before load: only sockets of this netns (0: all). */
const volatile __u32 target_netns = 0;

/* Set by user space before load: most flows followed at once (MaxFlows=). */
const volatile __u32 max_flows = 16384;

/* Entries of "flows" now: taken before one is made, given back at close,
 * and set to the entries counted at each snapshot (signed: a miscount
 * errs towards following flows, not refusing all). A cache line of its
 * own (a section of its own): every open and close writes it, atomically,
 * and the flags every event reads (.bss) would bounce with it. */
__s64 n_flows SEC(".data.nflows") = 0;

/*
 * A flow's entry hangs off its socket: finding it (bpf_sk_storage_get) is
 * a load from the socket and from its storage's cache, where a hash map
 * took a hash of the key and a walk of a bucket, 20-30 ns of each event
 * on the development VM. The kernel frees an entry with its socket.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC_);
	__type(key, int);
	__type(value, struct caad_flow_stats);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CAAD_STAY_MAX);
	__type(key, __u64);
	__type(value, struct caad_stay);
} stay SEC(".maps");

/*
 * Set by user space before load: the programs hand each flow over as it
 * changes, into "recent", so that a scan need not visit every flow. For
 * the TCP socket iterator, whose every pass walks the whole established
 * hash, every namespace's sockets in it (on the 2-vCPU development VM, 200k
 * held in two other namespaces and none in caad's made a pass 60 ms of a
 * CPU): caad then runs it every few seconds, not at every scan. A flow
 * is handed over at its first read or data-ready of each scan generation
 * (scan_gen, which caad bumps just before each scan) after the one it
 * opened in, and at once when its reader or processing CPU moves, or it
 * closes once handed over. Off (the flow table's own iterator), the
 * checks below are dead code the verifier removes.
 */
const volatile bool publish = false;

/* Bumped by user space at each scan; a section of its own, so no line
 * that programs write shares its cache line. */
__u32 scan_gen SEC(".data.gen") = 1; /* an entry's pub_gen 0: never */

/*
 * Set by user space (MinFlowBytes=, at start and at a reload): a socket
 * gets its entry at its first read once it has received this many bytes
 * (0: at its first read). Making an entry (an allocation of the socket's
 * storage, charged to its cgroup, and a lock) costs more than a microsecond,
 * and a connection that carries a request or two never matters to
 * steering: below this it costs each read a few loads and no entry. Beside
 * scan_gen: written by user space only.
 */
__u32 min_flow_bytes SEC(".data.gen") = 0;
/* The least min_flow_bytes has been since load (user space lowers it with
 * min_flow_bytes, never raises it): a socket that has received fewer bytes
 * has no entry, whatever the mark was when its entry would have been made.
 * What a read or a close asks before the socket's storage. */
__u32 follow_floor SEC(".data.gen") = 0;

/*
 * Twice max_flows: between two scans, every flow listed at the first may
 * close (its close handed over) and as many new ones take their places
 * and move (handed over at once). More churn than that in one scan
 * interval fails a hand-over, and the next scan is a pass.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC_);
	__uint(max_entries, 2 * 16384); /* resized by user space: 2 * max_flows */
	__type(key, __u64);
	__type(value, struct caad_flow_record);
} recent SEC(".maps");

/*
 * CONSUMER_LEFT, the one event caad acts on at once, and the only one:
 * flows opening and closing are per-CPU counters, which cost an
 * increment where a ring buffer record cost a reserve and a submit, each
 * on the ring's lock (a close took about 900 ns with them). A flow sends
 * it at most once until user space sets its stay entry again, so
 * CAAD_STAY_MAX records fit (each with the ring's 8-byte header).
 */
#define EVENTS_BYTES 16384
_Static_assert(CAAD_STAY_MAX * (8 + sizeof(struct caad_event)) <= EVENTS_BYTES,
               "the events ring must hold one CONSUMER_LEFT per stay entry");
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EVENTS_BYTES);
} events SEC(".maps");

/* While this CPU runs the NET_RX softirq: nonzero (when it entered it, in
 * ns, while a thread is watched; else 1), else 0. */
PERCPU_SLOT(__u64) in_net_rx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CAAD_COUNTER_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &which);

	if (v)
		*v += 1;
}

/* A flow's entry marked closed (no longer listed, its place in n_flows
 * given back): true, or false when it was already. */
static __always_inline bool mark_closed(struct caad_flow_stats *s)
{
	__s64 was;

	if (s->closed)
		return false;
	s->closed = 1;
	/* fetching, for a full barrier between the mark and the read of
	 * "listed" after it (publish_flow() says why): a BPF atomic whose
	 * result is not used is relaxed (on arm64) */
	was = __sync_fetch_and_add(&n_flows, -1);
	barrier_var(was);
	count(CAAD_COUNTER_FLOWS_CLOSED);
	return true;
}

/* A TCP socket? tp_btf hands over BTF-typed pointers: plain loads (CO-RE
 * relocated), no probe-read helper calls on the hot paths. The type too: a
 * raw socket of protocol TCP (SOCK_RAW, IPPROTO_TCP) is no tcp_sock, and
 * bpf_skc_to_tcp_sock() asks only the protocol; connected, it is
 * ESTABLISHED, and its reads would make an entry whose counts lie past
 * its object, never closed (a raw socket has no state changes). sk_type
 * is on sk_protocol's line. */
static __always_inline bool is_tcp(const struct sock *sk)
{
	return sk->sk_protocol == IPPROTO_TCP && sk->sk_type == SOCK_STREAM;
}

/*
 * sk as the tcp_sock it is (or NULL: not one, where that is not known).
 * A cast (bpf_rdonly_cast()), without bpf_skc_to_tcp_sock()'s checks, a
 * helper call that reads two more of the socket's lines; before Linux 6.2
 * (no cast), that helper.
 */
static __always_inline struct tcp_sock *tcp_of(const struct sock *sk)
{
#ifndef CAAD_NO_KFUNCS
	return bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock));
#else
	return bpf_skc_to_tcp_sock((struct sock *)sk);
#endif
}

/* Whether sk cannot have an entry, while the floor is on (off: it may):
 * not TCP, or fewer bytes received than the floor. Asked of the socket
 * before its storage, whose pointer, on a line the reader's recvmsg()
 * does not touch, the CPU that made the socket wrote last (for a
 * connection accepted on another CPU, a cache miss). On the 2-vCPU
 * development VM, reads of 100-byte connections took 165 ns an event with
 * that lookup first, 85 ns with this. tcp_of() after is_tcp(): a socket
 * of another protocol or type is below (it never has an entry). */
static __always_inline bool below_floor(const struct sock *sk)
{
	struct tcp_sock *tp;
	__u32 floor = follow_floor;

	if (!floor)
		return false;
	if (!is_tcp(sk))
		return true;
	tp = tcp_of(sk);
	return tp && tp->bytes_received < floor;
}

/* In the namespace we watch? A load from struct net, another cache line:
 * asked only before a socket enters the flows map. A socket never changes
 * namespace, so one found there is watched; the other programs look it
 * up without asking again. */
static __always_inline bool in_target_netns(const struct sock *sk)
{
	return !target_netns || sk->__sk_common.skc_net.net->ns.inum == target_netns;
}

/*
 * A steered flow's reader left its stay set: caad replans at once. A
 * wakeup is an IPI (irq_work), on a VM an exit to the hypervisor, so the
 * other events (when there were) waited for caad's next scan; this one
 * is why caad wakes.
 */
static __always_inline void emit_consumer_left(__u64 skp, __u32 cpu)
{
	struct caad_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(CAAD_COUNTER_EVENTS_LOST);
		return;
	}
	e->type = CAAD_EVENT_CONSUMER_LEFT;
	e->cpu = cpu;
	e->sk = skp;
	/* FORCE: with records not read yet before it, the default (wake only
	 * a reader that has read everything) would not wake caad */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* BTF-typed loads (tp_btf), not BPF_CORE_READ's probe reads: a helper
 * call each, seven of them at every new flow. */
static __always_inline void fill_tuple(struct caad_flow_stats *s, const struct sock *sk)
{
	const struct sock_common *c = &sk->__sk_common;
	__u16 family = c->skc_family;

	s->family = family;
	s->lport = c->skc_num;
	s->rport = bpf_ntohs(c->skc_dport);
	if (family == AF_INET) {
		__u32 l = c->skc_rcv_saddr, r = c->skc_daddr;

		__builtin_memcpy(s->laddr, &l, 4);
		__builtin_memcpy(s->raddr, &r, 4);
	} else if (family == AF_INET6) {
		for (int i = 0; i < 4; i++) {
			__u32 l = c->skc_v6_rcv_saddr.in6_u.u6_addr32[i], r = c->skc_v6_daddr.in6_u.u6_addr32[i];

			__builtin_memcpy(s->laddr + 4 * i, &l, 4);
			__builtin_memcpy(s->raddr + 4 * i, &r, 4);
		}
	}
}

/*
 * A flow's record as user space reads it: its entry's fields (not its gaps
 * or bookkeeping), and the bytes its reader read up to now, from the
 * socket's own counters (see dump_one()). Reads the entry only.
 */
static __always_inline void fill_record(struct caad_flow_record *d, const struct sock *sk,
                                        const struct caad_flow_stats *s)
{
	struct tcp_sock *tp = tcp_of(sk);
	__u64 bytes = s->bytes;
	__u32 ooo = s->rcv_ooopack;

	if (tp) {
		__u32 seq = tp->copied_seq;
		__u64 rcvd = tp->bytes_received;

		/* (not the sequence alone: 4 GiB read since reads as nothing) */
		if (seq != s->read_seq || rcvd != s->received) {
			bytes += caad_read_delta(seq, s->read_seq, rcvd, s->received);
			if (bpf_core_field_exists(tp->rcv_ooopack))
				ooo = tp->rcv_ooopack;
		}
	}
	d->sk = s->sk;
	d->first_ns = s->first_ns;
	d->bytes = bytes;
	d->family = s->family;
	d->lport = s->lport;
	d->rport = s->rport;
	d->closed = s->closed != 0;
	d->consumer_pid = s->consumer_pid;
	d->consumer_tid = s->consumer_tid;
	d->consumer_cpu = s->consumer_cpu;
	d->proc_cpu = s->proc_cpu;
	d->rx_ifindex = s->rx_ifindex;
	d->napi_id = s->napi_id;
	d->rx_queue = s->rx_queue;
	d->proc_kthread = s->proc_kthread;
	d->rcv_ooopack = ooo;
	__builtin_memcpy(d->laddr, s->laddr, sizeof(d->laddr));
	__builtin_memcpy(d->raddr, s->raddr, sizeof(d->raddr));
	__builtin_memcpy(d->comm, s->comm, sizeof(d->comm));
	d->at_us = 0; /* its caller says when */
}

/* The record's at_us: now, in microseconds, never 0 (a pass's). */
static __always_inline __u32 now_us(void)
{
	__u32 us = bpf_ktime_get_ns() / 1000;

	return us ? us : 1;
}

/* One record of the entry as it is now, into "recent": false (counted)
 * where the update failed. */
static __always_inline bool hand_over(const struct sock *sk, struct caad_flow_stats *s, struct caad_flow_record *r)
{
	fill_record(r, sk, s);
	r->at_us = now_us();
	if (bpf_map_update_elem(&recent, &r->sk, r, BPF_ANY)) {
		count(CAAD_COUNTER_PUBLISH_FAILED);
		return false;
	}
	return true;
}

/*
 * Hand the flow over into "recent" (publish only): once per scan_gen
 * (gen, as the caller read it), or now (force: it closed or moved). The
 * reader's and the processing CPU may both hand it over in one scan_gen,
 * as they race to mark it: the later record replaces the earlier, no harm
 * (no compare-and-swap is needed for it). Its bytes are computed,
 * not stored: the entry's counters stay as its first read left them, so
 * nothing here races with a pass of the iterator. "listed" is written
 * once: its line is the one both sides read at every lookup. The record
 * says when its bytes were read (a clock read, once a scan period for a
 * flow that does not move): a flow read in bursts is handed over whenever
 * its first read after caad's prepare comes, and user space rates it over
 * the time between two records, not between two scans.
 */
static __always_inline void publish_flow(const struct sock *sk, struct caad_flow_stats *s, __u32 gen, bool force)
{
	struct caad_flow_record r;

	if (s->pub_gen == gen && !force)
		return;
	s->pub_gen = gen;
	if (!s->listed) {
		s->listed = 1;
		/* a full barrier between this store and the read of "closed"
		 * below, as the close side has one (n_flows's atomic) between
		 * its mark and its read of "listed": the update's bucket lock
		 * is one on x86, not on arm64, where a lock lets an earlier
		 * store pass a later load. Once a flow (or-ing 0 changes
		 * nothing). Its result used: only a fetching atomic is fully
		 * ordered. */
		__u64 was = __sync_fetch_and_or(&s->claimed, 0);

		barrier_var(was);
	}
	if (!hand_over(sk, s, &r))
		return;
	/*
	 * Another CPU may have changed the entry as this one filled its
	 * record, and handed it over before this update replaced its record:
	 * a close (softirq, a reset, while the reader's recvmsg() is done with
	 * the socket lock) or a processing move. Read again, after the update
	 * (its bucket lock orders it), and hand over again if so: the close
	 * side marks "closed" before it reads "listed", with an atomic between
	 * them, so one of the two sides sees the other's mark.
	 */
	/* And again after that update: a close between this side's re-read
	 * and its second update would have its record replaced by an open
	 * one (a ghost, listed until the next full pass). "closed" only goes
	 * to 1: a re-read after each update ends it, within three (moves
	 * that go on longer are handed over at the next scan_gen). */
	for (int i = 0; i < 3; i++) {
		if ((s->closed != 0) == r.closed && s->proc_cpu == r.proc_cpu && s->consumer_cpu == r.consumer_cpu &&
		    s->rx_queue == r.rx_queue && s->napi_id == r.napi_id && s->rx_ifindex == r.rx_ifindex)
			return;
		if (!hand_over(sk, s, &r))
			return;
	}
	/* past three: the close, at least, is the last word */
	if (s->closed && !r.closed)
		(void)hand_over(sk, s, &r);
}

/* The closed loop's trial watches one thread (watch_tid, below). */
__u32 watch_tid = 0;

/*
 * These two run on every softirq of the machine, so user space attaches
 * them only while a closed-loop trial watches a thread: they time NET_RX
 * (two clock reads) for it. sk_data_ready tells the processing context
 * without them (1.2% of a CPU in bench/observer's stream, when they ran
 * all the time).
 */
SEC("tp_btf/softirq_entry")
int BPF_PROG(caad_softirq_entry, unsigned int vec)
{
	__u32 zero = 0;
	__u64 *v;

	if (vec != NET_RX_SOFTIRQ)
		return 0;
	v = bpf_map_lookup_elem(&in_net_rx, &zero);
	if (v)
		*v = watch_tid ? bpf_ktime_get_ns() : 1;
	return 0;
}

/* Leaving NET_RX: while a thread is watched, its time adds to the CPU's
 * NET_RX_NS counter (what the closed loop charges to the processing side
 * of a placement). A softirq runs on top of the task it interrupted (or
 * that enabled bottom halves): on top of the watched thread itself it
 * goes to NET_RX_ON_WATCHED_NS, which a kernel without IRQ time
 * accounting already billed to that thread's sum_exec_runtime. */
SEC("tp_btf/softirq_exit")
int BPF_PROG(caad_softirq_exit, unsigned int vec)
{
	__u32 zero = 0, which = CAAD_COUNTER_NET_RX_NS, tid = watch_tid;
	__u64 *v, *total;

	if (vec != NET_RX_SOFTIRQ)
		return 0;
	v = bpf_map_lookup_elem(&in_net_rx, &zero);
	if (!v)
		return 0;
	/* 1: entered while nothing was watched */
	if (*v > 1 && tid) {
		if ((__u32)bpf_get_current_pid_tgid() == tid)
			which = CAAD_COUNTER_NET_RX_ON_WATCHED_NS;
		total = bpf_map_lookup_elem(&counters, &which);
		if (total)
			*total += bpf_ktime_get_ns() - *v;
	}
	*v = 0;
	return 0;
}

/*
 * The socket each CPU last looked up the entry of, for each side: a
 * reader drains one socket at a time, and a CPU processes a flow's packets
 * in runs. A read or a data-ready of the same socket again, on the same
 * CPU, with nothing to tell, costs a per-CPU load and compares instead of
 * the entry's lookup (a helper call and its chain of loads). On the 2-vCPU
 * development VM, in two paired runs of bench/observer (3 rounds each,
 * with and without these caches): sock_recv_length 115 and 119 ns/event
 * without, 104 and 100 with; sk_data_ready 109 and 115 without, 94 and 98
 * with.
 *
 * "storage" is the socket's sk_bpf_storage then: a new socket at a freed
 * one's address has none until its first read makes its entry. A side
 * that moves a flow to another CPU clears the CPU it left (else a return
 * there would go unseen); a close clears the reader's, where a socket
 * connected again must make a new entry. Whatever a race leaves behind
 * lasts until the next 1 MiB a reader reads, or 256 data-readies, through
 * the cache: then the lookup runs again.
 */
struct seen {
	__u64 sk;      /* 0: none */
	__u64 storage;
	__u64 bytes;   /* reader: bytes read through the cache (its 1 MiB marks) */
	__u32 napi_id; /* softirq: what the entry holds, as the socket said then */
	__u32 rx_queue;
	__u32 rx_ifindex;
	__u32 runs;    /* softirq: data-readies through the cache */
	__u32 gen;     /* publish: scan_gen when this CPU last looked it up (handed it over) */
	__u32 _pad;
};
PERCPU_SLOT(struct seen) reader_seen SEC(".maps");
PERCPU_SLOT(struct seen) softirq_seen SEC(".maps");

/* What sk's storage pointer is now, as a number to compare. */
static __always_inline __u64 storage_of(const struct sock *sk)
{
	return (__u64)sk->sk_bpf_storage;
}

/* cpu's cache of map no longer names sk: a flow left that CPU. */
static __always_inline void seen_forget(void *map, __u64 sk, __u32 cpu)
{
	__u32 zero = 0;
	struct seen *o = bpf_map_lookup_percpu_elem(map, &zero, cpu);

	if (o && o->sk == sk)
		o->sk = 0;
}

/* A flow's entry closed: gone from what user space reads (handed over at
 * once when user space lists it), forgotten by the CPU that read it last
 * and the one that processed it last (a read or a data-ready of the socket
 * again must look it up), its stay entry dropped (a
 * new socket at this address is not its reader; looked up first: most
 * flows have none, and a delete locks). False when it was closed already. */
static __always_inline bool close_flow(const struct sock *sk, struct caad_flow_stats *s)
{
	__u64 key = (__u64)sk;

	if (!mark_closed(s))
		return false;
	if (publish && s->listed) /* gone from the next scan */
		publish_flow(sk, s, scan_gen, true);
	seen_forget(&reader_seen, key, s->consumer_cpu);
	/* and the processing CPU's: a socket and storage made again at the
	 * same addresses would match its cache, and their data-readies go
	 * untold for up to 256 of them */
	if (s->proc_cpu != CAAD_CPU_NONE)
		seen_forget(&softirq_seen, key, s->proc_cpu);
	if (bpf_map_lookup_elem(&stay, &key))
		bpf_map_delete_elem(&stay, &key);
	return true;
}

/* Process side: a thread read ret bytes from sk. Writes its own fields of
 * the entry (the cache line the softirq side does not write). Its bytes
 * are not counted here: caad_flows_dump reads them from the socket at
 * each scan. No clock but at a flow's first read, and at a hand-over. */
static __always_inline int recv_length(struct sock *sk, int ret, int flags)
{
	__u64 key = (__u64)sk, id, mark;
	struct caad_flow_stats *s;
	struct tcp_sock *tp;
	struct seen *c;
	__u32 cpu, tid, zero = 0, gen;
	bool moved, ask, force = false, left = false;

	/* a peek reads nothing; the error queue's bytes (timestamps, zero-copy
	 * completions) are none of the stream's, and whoever reaps them may
	 * be another thread than the reader */
	if (ret <= 0 || (flags & (MSG_PEEK | MSG_ERRQUEUE)))
		return 0;

	/* this CPU read it last, and its entry: nothing to tell, but every
	 * 1 MiB, when the lookup below asks for the thread */
	c = bpf_map_lookup_elem(&reader_seen, &zero);
	if (c && c->sk == key && c->storage == storage_of(sk)) {
		mark = c->bytes;
		c->bytes = mark + (__u64)ret;
		/* publish: not once since the last scan, when it is handed over */
		if (!((mark ^ (mark + (__u64)ret)) >> TID_CHECK_SHIFT) && !(publish && c->gen != scan_gen))
			return 0;
	}

	gen = publish ? scan_gen : 0;
	/* a connection short so far: no entry, none to make */
	if (below_floor(sk))
		return 0;
	s = bpf_sk_storage_get(&flows, sk, NULL, 0);
	/* closed (on the line of consumer_cpu, read below anyway): data
	 * queued before the close, read after it, which nobody follows. A
	 * socket connected again has no entry by now (its SYN_SENT deleted
	 * the closed one: caad_inet_sock_set_state), so a read never deletes:
	 * one that races a close on another CPU finds the entry closed while
	 * the socket's state is not TCP_CLOSE yet (the tracepoint fires before
	 * the state is stored), and a delete there made an entry that no close
	 * would mark. */
	if (s && s->closed)
		return 0;
	if (!s) {
		struct caad_flow_stats init = {};

		/* Not TCP; not in the namespace we watch; or closed already: a
		 * read after TCP_CLOSE (data queued before a RST or the peer's
		 * FIN in FIN_WAIT2) would make an entry that no close removes. */
		if (!is_tcp(sk) || !in_target_netns(sk) || sk->__sk_common.skc_state == TCP_CLOSE)
			return 0;
		tp = bpf_skc_to_tcp_sock(sk);
		if (!tp)
			return 0;
		/* a short connection so far: no entry yet (this read's bytes
		 * are among those received) */
		if (tp->bytes_received < min_flow_bytes)
			return 0;
		/* a place in the table first; given back if another CPU made
		 * this socket's entry just now */
		/* a full table: a plain load says so, without taking and
		 * giving back a place (two atomics on a shared line at every
		 * read of every socket not followed) */
		if (*(volatile __s64 *)&n_flows >= (__s64)max_flows) {
			count(CAAD_COUNTER_MAP_FULL);
			return 0;
		}
		if (__sync_fetch_and_add(&n_flows, 1) >= (__s64)max_flows) {
			__sync_fetch_and_add(&n_flows, -1);
			count(CAAD_COUNTER_MAP_FULL);
			return 0;
		}
		init.sk = key;
		fill_tuple(&init, sk);
		init.proc_cpu = CAAD_CPU_NONE;
		init.rx_queue = 0xffff;
		init.first_ns = bpf_ktime_get_ns();
		/* its bytes count from this read on: where the reader was
		 * before it */
		init.read_seq = tp->copied_seq - (__u32)ret;
		init.received = tp->bytes_received;
		/* publish: handed over from its first event after the next scan
		 * generation (caad's prepare, just before its next scan), not
		 * now: a connection that closes before that costs no hand-over */
		init.pub_gen = gen;
		/* who reads it, and where: no stay lookup below (a new flow has
		 * none: a close drops its socket's) */
		init.consumer_cpu = bpf_get_smp_processor_id();
		id = bpf_get_current_pid_tgid();
		init.consumer_tid = (__u32)id;
		init.consumer_pid = id >> 32;
		bpf_get_current_comm(init.comm, sizeof(init.comm));
		s = bpf_sk_storage_get(&flows, sk, &init, BPF_SK_STORAGE_GET_F_CREATE);
		/* NULL: no memory, or another CPU's create of this socket's
		 * entry won the race (a create does not replace one: EEXIST),
		 * whose entry this read then counts in */
		if (!s)
			s = bpf_sk_storage_get(&flows, sk, NULL, 0);
		if (!s) {
			__sync_fetch_and_add(&n_flows, -1);
			count(CAAD_COUNTER_MAP_FULL);
			return 0;
		}
		/* Two CPUs may make it at once (the kernel keeps one, and
		 * either may find it made): the first to claim it keeps its
		 * place and reports it as new. */
		if (__sync_lock_test_and_set(&s->claimed, 1) == 0) {
			count(CAAD_COUNTER_FLOWS_NEW);
			/* closed on another CPU (a reset, the peer's FIN in
			 * FIN_WAIT2) between the check above and the create:
			 * its close found no entry to mark. Its place given
			 * back as that close would have (a close at this moment
			 * too may give it back twice: the next pass counts it
			 * right again), and the entry deleted: one marked
			 * closed would stay with the socket, and a read never
			 * deletes one, not even after a connect again that
			 * came before this mark. This narrows the window, it
			 * does not shut it: the tracepoint fires before the
			 * state is stored, and a check between the two finds
			 * it open. Such an entry is listed as an idle flow
			 * until its socket is freed, or connected again. */
			if (sk->__sk_common.skc_state == TCP_CLOSE) {
				if (mark_closed(s))
					bpf_sk_storage_delete(&flows, sk);
				return 0;
			}
		} else {
			__sync_fetch_and_add(&n_flows, -1);
		}
	}

	cpu = bpf_get_smp_processor_id();
	moved = s->consumer_cpu != cpu;
	/*
	 * Which thread reads: asked (a helper call, not inlined) when the
	 * reader changed CPUs, or when this read crosses a 1 MiB mark, of the
	 * reads through this CPU's cache or of those that looked the entry
	 * up, not at every read. A new reader on the same CPU is seen within
	 * 1 MiB of its reading: for a flow at the default RateThreshold=
	 * (1 Gbit/s), within about 8 ms.
	 */
	mark = s->read_mark;
	ask = moved || ((mark ^ (mark + (__u64)ret)) >> TID_CHECK_SHIFT) || (c && c->sk == key);
	if (ask) {
		id = bpf_get_current_pid_tgid();
		tid = (__u32)id;
		if (s->consumer_tid != tid) {
			s->consumer_tid = tid;
			s->consumer_pid = id >> 32;
			bpf_get_current_comm(s->comm, sizeof(s->comm));
			force = true;
		}
	}
	if (moved) {
		/* the reader moved: off the CPUs its steering holds for? Only
		 * here, on a move, does a read look at the stay map. */
		struct caad_stay *st = bpf_map_lookup_elem(&stay, &key);

		if (st && !(st->cpus[(cpu / 64) & (CAAD_STAY_CPUS / 64 - 1)] & (1ull << (cpu & 63)))) {
			bpf_map_delete_elem(&stay, &key); /* once until user space sets it again */
			left = true; /* told below, once the entry says where it went */
		}
		seen_forget(&reader_seen, key, s->consumer_cpu);
		s->consumer_cpu = cpu;
	}
	/* a plain add: a locked one is a full barrier after recvmsg()'s copy
	 * out to the reader (perf put about 45% of this program's samples
	 * just after one); two threads that read one socket at the same
	 * moment may lose a mark, not a byte */
	s->read_mark = mark + (__u64)ret;
	if (c) {
		c->sk = key;
		c->storage = storage_of(sk);
		c->gen = gen;
	}
	/* handed over before caad is woken: the scan it runs then finds it */
	if (publish)
		publish_flow(sk, s, gen, force || moved);
	if (left)
		emit_consumer_left(key, cpu);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(caad_sock_recv_length, struct sock *sk, int ret, int flags)
{
	return recv_length(sk, ret, flags);
}

/*
 * The same where the kernel has no such tracepoint (before Linux 6.3): at
 * the return of tcp_recvmsg(), which every read of a TCP socket through
 * recvmsg(), recvmmsg() or read() ends in, but for one whose protocol
 * kTLS or a sockmap replaced. Its return value from the trampoline, not
 * from the arguments: 6.1 has one more of them than 6.18. User space loads
 * one of the two.
 */
SEC("fexit/tcp_recvmsg")
int BPF_PROG(caad_tcp_recvmsg, struct sock *sk, struct msghdr *msg, size_t len, int flags)
{
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	return recv_length(sk, (int)ret, flags);
}

/*
 * On-CPU time of one thread, the consumer of the flow a closed-loop trial
 * measures (user space sets watch_tid; 0: none), read on demand: user
 * space reads this iterator over the tasks, which writes that thread's
 * se.sum_exec_runtime (rather than /proc/PID/task/TID/schedstat: the
 * service's ProtectProc=invisible hides other users' processes from
 * caad). The scheduler's own clock, CLOCK_THREAD_CPUTIME_ID's, so a
 * hypervisor's steal is not billed to the placement being measured; it is
 * brought up to date at every switch and at every tick of a running
 * thread, so a thread that never leaves its CPU is counted too, to within
 * a tick. Nothing runs on the machine's context switches for it.
 */
SEC("iter/task")
int caad_thread_time(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 tid = watch_tid;
	__u64 sum;

	if (!task || !tid || task->pid != tid)
		return 0;
	sum = task->se.sum_exec_runtime;
	bpf_seq_write(ctx->meta->seq, &sum, sizeof(sum));
	return 0;
}

#define PF_KTHREAD_ 0x00200000 /* include/linux/sched.h */

/* Set by user space: nonzero while one of its interfaces has a threaded
 * NAPI (caad_observer_set_napi_threads()). */
__u32 napi_threads = 0;

/* The kthread this CPU last saw in sk_data_ready, and whether it is a
 * threaded NAPI's: ksoftirqd runs NET_RX under load, and reading its
 * name at every data-ready cost about 40 ns each. */
struct kthread_seen {
	__u64 task;
	__u32 pid;
	__u32 napi;
};
PERCPU_SLOT(struct kthread_seen) kthread_seen SEC(".maps");

/* A threaded NAPI's poll thread ("napi/<dev>-<id>") does what NET_RX
 * softirq does otherwise: it is where the flow is processed. Else a
 * kthread here is one that NET_RX interrupted, or ksoftirqd. */
static __always_inline bool in_napi_kthread(const struct task_struct *t)
{
	struct kthread_seen *k;
	__u32 zero = 0;
	char comm[16];

	if (!(t->flags & PF_KTHREAD_))
		return false;
	k = bpf_map_lookup_elem(&kthread_seen, &zero);
	if (k && k->task == (__u64)t && k->pid == (__u32)t->pid)
		return k->napi;
	bpf_get_current_comm(comm, sizeof(comm));
	bool napi = comm[0] == 'n' && comm[1] == 'a' && comm[2] == 'p' && comm[3] == 'i' && comm[4] == '/';
	if (k) {
		k->task = (__u64)t;
		k->pid = (__u32)t->pid;
		k->napi = napi;
	}
	return napi;
}

/*
 * Softirq side: data became ready on sk. In NET_RX softirq (or a threaded
 * NAPI kthread) this is the CPU that processes the flow; in process context
 * it is a backlog flush by the socket's owner (release_sock) and says
 * nothing about steering. The socket itself tells them apart: NET_RX
 * processes a segment only for a socket nobody owns (else it goes to the
 * backlog), and the owner flushes its backlog before it lets go. Writes
 * only the softirq side's fields: the kernel runs one data-ready of a
 * socket at a time (under its lock), so plain stores, no atomics, and no
 * clock but at a hand-over: the reader keeps the flow's first time.
 */
static __always_inline int data_ready(const struct sock *sk)
{
	__u32 kthread = 0, zero = 0, napi_id, rx_queue = 0xffff, rx_ifindex = 0, cpu, prev, gen;
	__u64 key = (__u64)sk;
	struct caad_flow_stats *s;
	struct task_struct *t;
	struct seen *c;

	/* the context first, the flow table after: a backlog flush (process
	 * context) then costs no lookup. No protocol check: only a TCP socket
	 * has an entry (as in sock_recv_length, its cache line is spared).
	 * BTF-typed loads, not probe reads (a helper call each). */
	if (sk->sk_lock.owned)
		return 0;
	napi_id = sk->sk_napi_id;
	if (bpf_core_field_exists(((struct sock___rxq *)sk)->sk_rx_queue_mapping))
		rx_queue = ((const struct sock___rxq *)sk)->sk_rx_queue_mapping;
	if (bpf_core_field_exists(sk->sk_rx_dst_ifindex))
		rx_ifindex = sk->sk_rx_dst_ifindex;

	/* this CPU processed it last, and nothing changed: its entry says so
	 * already. A threaded NAPI's kthread is asked at each one. */
	c = bpf_map_lookup_elem(&softirq_seen, &zero);
	if (c && c->sk == key && c->storage == storage_of(sk) && c->napi_id == napi_id && c->rx_queue == rx_queue &&
	    c->rx_ifindex == rx_ifindex && !napi_threads && (++c->runs & 255) && !(publish && c->gen != scan_gen))
		return 0;
	gen = publish ? scan_gen : 0;

	s = bpf_sk_storage_get(&flows, (struct sock *)sk, NULL, 0);
	if (!s)
		return 0; /* known from its first read on */
	/* the task (a helper call, not inlined) only where some NAPI of
	 * caad's interfaces is threaded */
	if (napi_threads) {
		t = bpf_get_current_task_btf();
		if (in_napi_kthread(t))
			kthread = t->pid;
	}

	/* kept when processing moves elsewhere: caad needs it to move it back */
	if (kthread)
		s->proc_kthread = kthread;
	/* where it arrives before where it is processed: a record filled
	 * between the two has the new queue with the old CPU at worst, and
	 * its re-check (publish_flow()) sees either change */
	s->rx_ifindex = rx_ifindex;
	s->napi_id = napi_id;
	s->rx_queue = rx_queue;
	cpu = bpf_get_smp_processor_id();
	prev = s->proc_cpu;
	if (prev != cpu) {
		if (prev != CAAD_CPU_NONE)
			seen_forget(&softirq_seen, key, prev);
		s->proc_cpu = cpu;
	}
	/* a closed entry is not cached: a socket connected again makes a
	 * new one, which the next data-ready must find */
	if (c && !s->closed) {
		c->sk = key;
		c->storage = storage_of(sk);
		c->napi_id = napi_id;
		c->rx_queue = rx_queue;
		c->rx_ifindex = rx_ifindex;
		c->gen = gen;
	}
	/* publish: at once where processing moved; where it began (a new
	 * flow's first data-ready), at the next generation like the rest of
	 * it, so that a short connection costs no hand-over */
	if (publish && !s->closed)
		publish_flow(sk, s, gen, prev != cpu && prev != CAAD_CPU_NONE);
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(caad_sk_data_ready, const struct sock *sk)
{
	return data_ready(sk);
}

/* The same where the kernel has no such tracepoint (before Linux 6.3): at
 * the entry of sock_def_readable(), a TCP socket's sk_data_ready, where
 * the tracepoint is. User space loads one of the two. */
SEC("fentry/sock_def_readable")
int BPF_PROG(caad_sock_def_readable, struct sock *sk)
{
	return data_ready(sk);
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(caad_inet_sock_set_state, const struct sock *sk, const int oldstate, const int newstate)
{
	struct caad_flow_stats *s;

	/* connected again after a close (connect(AF_UNSPEC), then connect()):
	 * the entry goes, and the socket's first read makes a new flow's.
	 * Here, not at that read (caad_sock_recv_length says why). One not
	 * marked closed is one the close missed (a race with a first read,
	 * caad_sock_recv_length): closed first, as that close would have. */
	if (newstate == TCP_SYN_SENT) {
		s = bpf_sk_storage_get(&flows, (struct sock *)sk, NULL, 0);
		if (s) {
			close_flow(sk, s);
			bpf_sk_storage_delete(&flows, (struct sock *)sk);
		}
		return 0;
	}
	if (newstate != TCP_CLOSE)
		return 0;
	/* no protocol check but for the floor's cast: only a TCP socket has
	 * an entry. (Not at SYN_SENT above: a connect again zeroed the
	 * socket's count.) */
	if (below_floor(sk))
		return 0;
	s = bpf_sk_storage_get(&flows, (struct sock *)sk, NULL, 0);
	if (!s)
		return 0;
	/*
	 * Gone from what user space reads now, not when the socket is freed:
	 * marked, not deleted. The kernel frees the entry with its socket,
	 * right after this for a socket its application has closed: a delete
	 * here cost about 600 ns a close, and bench/observer's short
	 * connections ran at 0.84 of their rate without caad with it, 0.95
	 * with the mark: the kernel's free of a socket's storage costs it
	 * less than a delete does.
	 */
	close_flow(sk, s);
	return 0;
}

/*
 * The snapshot's copy of every flow's entry (a struct caad_flow_record:
 * its fields, not its gaps), which user space reads in batches: max_flows
 * of them (sized by user space). The iterator below fills it in one
 * read(). Handing the entries over through the iterator's own output
 * instead took a read() per 32 KiB (the kernel's buffer), and
 * each read() starts again from the head of a bucket of the storage map,
 * of which a 2-CPU machine has two: caad took 95% of a CPU at 100k flows
 * (bench/memory), 45% this way, as with the hash map before.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16384); /* resized by user space */
	__type(key, __u32);
	__type(value, struct caad_flow_record);
} dump SEC(".maps");

/* Entries copied into "dump" by the iteration under way, objects it
 * visited, and live (not closed) entries among them, copied or not (user
 * space sets the three to 0 before each). */
__u32 dump_n = 0;
__u32 dump_visited = 0;
__u32 dump_live = 0;
/* The clock (now_us()) as the iteration read it last, at dump_us_at objects
 * visited (user space sets dump_us to 0 before each): a record's time,
 * read again every 64 objects, not at each (a pass of 100k flows would
 * read it 100k times). */
__u32 dump_us = 0;
__u32 dump_us_at = 0;

/*
 * The iterator's output is the number of entries copied, a __u64 written
 * at the end and every 65536 objects visited: a read() with no output
 * after a million of them would fail.
 */
static __always_inline void dump_say(struct seq_file *seq, bool end)
{
	__u64 n = dump_n;

	if (end || !(++dump_visited & 0xffff))
		bpf_seq_write(seq, &n, sizeof(n));
	/* the count made true again: a socket freed without a close seen
	 * here would hold its place for good otherwise. Every live entry
	 * counts, also one there was no room to copy: a flow made as a pass
	 * runs, after its bucket, is missing from this count, so a place may
	 * be given twice and the table hold more than max_flows for a while;
	 * counted here, no new flow is let in until they are fewer again. */
	if (end)
		n_flows = dump_live;
}

/*
 * One flow's entry into "dump", field by field, read with plain loads
 * while the two sides write it (as a map lookup would).
 */
static __always_inline void dump_one(struct sock *sk, struct caad_flow_stats *s)
{
	struct caad_flow_record *d;
	struct tcp_sock *tp;
	__u32 i;

	if (s->closed)
		return; /* its socket not freed yet */
	dump_live++;
	i = dump_n;
	d = bpf_map_lookup_elem(&dump, &i);
	if (!d) {
		/* more than max_flows (see dump_say()): not listed, so counted
		 * as a flow not followed, which the notice of MaxFlows= tells */
		count(CAAD_COUNTER_MAP_FULL);
		return;
	}
	/*
	 * The bytes its reader read: from the socket's own counters, here,
	 * once a scan, not counted at every read. They count splice() and
	 * TCP_ZEROCOPY_RECEIVE too, which sock_recv_length does not see. One
	 * cache line of the socket for a flow that was not read since the
	 * last scan (copied_seq's): with 100k idle flows held open, every
	 * line read of each at every scan costs caad several percent of a CPU
	 * (bench/memory). For a flow read since, bytes_received (another
	 * line) and the out-of-order packets (another). A read of exactly a
	 * multiple of 4 GiB between two scans would pass for none, once.
	 * Where flows are handed over (publish), the entry keeps its first
	 * read's counters, and every record computes from them
	 * (fill_record()): a pass of the iterator every few seconds reads
	 * the three lines.
	 *
	 * Only a TCP stream socket gets an entry (bpf_skc_to_tcp_sock() at
	 * its first read), so the socket is a tcp_sock: tcp_of(), a cast
	 * where the kernel has one.
	 */
	tp = tcp_of(sk);
	if (tp && !publish) {
		__u32 seq = tp->copied_seq;

		if (seq != s->read_seq) {
			__u64 rcvd = tp->bytes_received;

			s->bytes += caad_read_delta(seq, s->read_seq, rcvd, s->received);
			s->read_seq = seq;
			s->received = rcvd;
			if (bpf_core_field_exists(tp->rcv_ooopack))
				s->rcv_ooopack = tp->rcv_ooopack;
		}
	}
	fill_record(d, sk, s);
	/* when its bytes were read, to within 64 objects visited: a pass of
	 * a few milliseconds does not read them all at its start. The TCP
	 * iterator's (publish) walks every socket of the machine, each under
	 * its lock, tens of milliseconds apart at 64 of caad's: at each. */
	if (publish || !dump_us || dump_visited - dump_us_at >= 64) {
		dump_us = now_us();
		dump_us_at = dump_visited;
	}
	d->at_us = dump_us;
	if (publish && !s->listed)
		s->listed = 1; /* its close is handed over (written once: a pass
		                * every 10 s need not dirty 100k entries' lines) */
	dump_n = ++i;
}

/* Every flow's entry into "dump": the flow table's own iterator, which
 * visits the entries and nothing else. */
SEC("iter/bpf_sk_storage_map")
int caad_flows_dump(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct caad_flow_stats *s = ctx->value;
	struct sock *sk = ctx->sk;

	if (!sk || !s) { /* the end */
		dump_say(ctx->meta->seq, true);
		return 0;
	}
	dump_one(sk, s);
	dump_say(ctx->meta->seq, false);
	return 0;
}

/*
 * The same through the TCP sockets of the namespace that reads it (caad's,
 * whose sockets are the only ones with an entry): for a kernel that loads
 * no map element iterator (some refuse them with EPERM), chosen by user
 * space. It visits every TCP socket, an entry or not, each under its lock.
 */
SEC("iter/tcp")
int caad_flows_dump_tcp(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct caad_flow_stats *s;
	struct tcp_sock *tp;

	if (!skc) { /* the end */
		dump_say(ctx->meta->seq, true);
		return 0;
	}
	/* a listener, request or timewait socket has no entry */
	tp = bpf_skc_to_tcp_sock(skc);
	if (tp) {
		s = bpf_sk_storage_get(&flows, (struct sock *)tp, NULL, 0);
		if (s)
			dump_one((struct sock *)tp, s);
	}
	dump_say(ctx->meta->seq, false);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
