/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner: pure functions, no I/O, no clock. For each heavy flow, steer
 * its protocol processing to a peer core of its consumer: a different
 * physical core sharing the consumer's last-level cache, the least loaded
 * first, never a consumer's core, never a banned or unusable CPU.
 *
 * The steps, for the rules see caad(8) "Placement":
 *  1. collect: one pass over the flows finds the heavy ones, each in a
 *     "slot" (an rx queue, or "every queue" of an interface for a flow of
 *     unknown queue), and each slot's fastest flow; consumers' cores are
 *     marked: those of every CPU in a consumer's window (rule 1), the one
 *     planned for being the latest of the LLC it read in most;
 *  2. place_owners: the fastest flow of each slot owns it; owners that keep
 *     their previous target go first (their load counts), then the others
 *     fastest first choose the least loaded candidate of the best tier;
 *     an owner whose consumer CPU has no candidate gives the slot to the
 *     next flow of it;
 *  3. decide_followers: the other flows of a slot share its CPU when it is
 *     a peer core of their consumer too and no consumer's core (an owner
 *     may be on one: kept there, or the closed loop's), else they are
 *     conflicted;
 *  4. emit_settings: one mechanism per owned queue, in queue order; an
 *     owner whose queue has none for its CPU (drop_settingless()) is left
 *     alone first.
 *
 * How it stays fast on large hosts (1M flows, thousands of queues): only
 * the slot owners are sorted (at most one per queue, and a round per slot
 * that lost its owner); candidates come from per-plan tables (each core's
 * usable CPUs, the cores of each LLC and package), never from scanning the
 * topology per flow; consumer CPUs without any candidate are found once,
 * up front; the decisions' texts live in an arena and are shared: the
 * flows that lose a queue to a faster one share that queue's text. With a
 * million heavy flows the cost is memory: a slot or core keeps the sort key
 * of its fastest flow at hand (no lookup per flow); each decision is
 * written once, pointing at its consumer CPU's "no candidate" texts until
 * it is placed or follows an owner, so that the flows whose consumer CPU
 * has none are not looked at again; the big arrays ask for huge pages.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "caad/plan.h"

/* Reasons are for people; a long text may be shortened, never overflow. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define NSEC_PER_MSEC UINT64_C(1000000)
#define CONSIDERED_MAX 480
#define FAIL_REASON_MAX 128
#define TEXT_MAX CAAD_DECISION_TEXT_MAX

void caad_policy_init(struct caad_policy *p)
{
	*p = (struct caad_policy){
		.rate_threshold_bps = CAAD_RATE_THRESHOLD_DEFAULT,
		.min_age_ms = CAAD_MIN_AGE_MS_DEFAULT,
		.dwell_ms = CAAD_DWELL_MS_DEFAULT,
		.max_moves = CAAD_MAX_MOVES_DEFAULT,
		.disabled_mechanisms = CAAD_MECHANISMS_DEFAULT_OFF,
	};
	caad_cpumask_zero(&p->banned);
}

static const char *const setting_kind_names[_CAAD_SETTING_KIND_COUNT] = {
	[CAAD_SETTING_IRQ_AFFINITY] = "irq-affinity",
	[CAAD_SETTING_RPS_CPUS] = "rps-cpus",
	[CAAD_SETTING_KTHREAD_AFFINITY] = "kthread-affinity",
	[CAAD_SETTING_RFS_FLOW_CNT] = "rfs-flow-cnt",
	[CAAD_SETTING_RFS_TABLE] = "rfs-table",
	[CAAD_SETTING_NTUPLE_RULE] = "ntuple-rule",
};

const char *caad_setting_kind_to_string(enum caad_setting_kind k)
{
	return (unsigned)k < _CAAD_SETTING_KIND_COUNT ? setting_kind_names[k] : NULL;
}

/* ---- the plan's string arena ------------------------------------------- */

#define ARENA_BLOCK 65536

struct caad_plan_arena {
	struct caad_plan_arena *next;
	size_t used;
	char data[ARENA_BLOCK];
};

static void arena_free(struct caad_plan_arena *a)
{
	while (a) {
		struct caad_plan_arena *n = a->next;
		free(a);
		a = n;
	}
}

/* size (at most ARENA_BLOCK) zeroed bytes of the plan, or NULL. */
static char *arena_alloc(struct caad_plan *p, size_t size)
{
	struct caad_plan_arena *a = p->arena;
	char *r;

	assert(size <= ARENA_BLOCK);
	if (!a || ARENA_BLOCK - a->used < size) {
		a = malloc(sizeof(*a));
		if (!a)
			return NULL;
		a->next = p->arena;
		a->used = 0;
		p->arena = a;
	}
	r = a->data + a->used;
	memset(r, 0, size);
	a->used += size;
	return r;
}

/* A copy of at most TEXT_MAX - 1 bytes of s in the plan, or NULL. */
static const char *arena_strdup(struct caad_plan *p, const char *s)
{
	size_t n = strnlen(s, TEXT_MAX - 1);
	char *r = arena_alloc(p, n + 1);

	if (r)
		memcpy(r, s, n);
	return r;
}

_printf_(2, 3) static const char *arena_printf(struct caad_plan *p, const char *fmt, ...)
{
	char buf[TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return arena_strdup(p, buf);
}

/* Bounded text built piece by piece; what does not fit becomes "...". */
struct text {
	char buf[CONSIDERED_MAX];
	size_t len;
	bool full;
};

_printf_(2, 3) static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (t->full)
		return;
	va_start(ap, fmt);
	r = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= sizeof(t->buf) - t->len - 4) {
		t->buf[t->len] = '\0';
		if (t->len + 4 <= sizeof(t->buf))
			strcpy(t->buf + t->len, "...");
		t->full = true;
		return;
	}
	t->len += (size_t)r;
}

/* The considered candidates are many short pieces: appended without printf. */
static void text_str(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->full)
		return;
	if (n >= sizeof(t->buf) - t->len - 4) {
		strcpy(t->buf + t->len, "...");
		t->full = true;
		return;
	}
	memcpy(t->buf + t->len, s, n + 1);
	t->len += n;
}

static void text_uint(struct text *t, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	text_str(t, p);
}

/* "9.0 Gbit/s", "12.5 Mbit/s", "800 bit/s" (to a tenth, rounded). */
static const char *fmt_rate(uint64_t bps, char *buf, size_t size)
{
	if (bps >= UINT64_C(1000000000)) {
		uint64_t tenths = bps / 100000000 + (bps % 100000000 >= 50000000);
		snprintf(buf, size, "%llu.%llu Gbit/s", (unsigned long long)(tenths / 10),
		         (unsigned long long)(tenths % 10));
	} else if (bps >= UINT64_C(1000000)) {
		uint64_t tenths = bps / 100000 + (bps % 100000 >= 50000);
		snprintf(buf, size, "%llu.%llu Mbit/s", (unsigned long long)(tenths / 10),
		         (unsigned long long)(tenths % 10));
	} else
		snprintf(buf, size, "%llu bit/s", (unsigned long long)bps);
	return buf;
}

static void text_rate(struct text *t, uint64_t bps)
{
	char buf[32];

	if (bps == 0)
		text_str(t, "0 bit/s");
	else
		text_str(t, fmt_rate(bps, buf, sizeof(buf)));
}

/* "comm/tid" of a flow's consumer, as known: "iperf3/4711", "thread 4711", "". */
static const char *consumer_name(const struct caad_flow *f, char *buf, size_t size)
{
	if (f->comm[0] && f->tid)
		snprintf(buf, size, "%.*s/%u", (int)sizeof(f->comm), f->comm, f->tid);
	else if (f->comm[0])
		snprintf(buf, size, "%.*s", (int)sizeof(f->comm), f->comm);
	else if (f->tid)
		snprintf(buf, size, "thread %u", f->tid);
	else
		buf[0] = '\0';
	return buf;
}

/* ---- plan lookup by flow id -------------------------------------------- */

void caad_plan_free(struct caad_plan *p)
{
	if (!p)
		return;
	free(p->decisions);
	free(p->settings);
	free(p->by_id);
	arena_free(p->arena);
	free(p);
}

static int cmp_by_id(const void *a, const void *b, void *userdata)
{
	const struct caad_decision *d = userdata;
	uint64_t x = d[*(const uint32_t *)a].flow_id, y = d[*(const uint32_t *)b].flow_id;

	return (x > y) - (x < y);
}

/* Decisions in id order need no index (the daemon's flows are sorted by id);
 * sorted: they are known to be. */
static int plan_index(struct caad_plan *p, bool sorted)
{
	free(p->by_id);
	p->by_id = NULL;
	if (p->n_decisions > UINT32_MAX)
		return -E2BIG;
	if (!sorted) {
		sorted = true;
		for (size_t i = 1; i < p->n_decisions && sorted; i++)
			sorted = p->decisions[i - 1].flow_id <= p->decisions[i].flow_id;
	}
	if (sorted)
		return 0;

	p->by_id = malloc(p->n_decisions * sizeof(uint32_t));
	if (!p->by_id)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_decisions; i++)
		p->by_id[i] = (uint32_t)i;
	qsort_r(p->by_id, p->n_decisions, sizeof(uint32_t), cmp_by_id, p->decisions);
	return 0;
}

const struct caad_decision *caad_plan_find(const struct caad_plan *p, uint64_t flow_id)
{
	size_t lo = 0, hi;

	if (!p)
		return NULL;
	hi = p->n_decisions;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct caad_decision *d = &p->decisions[p->by_id ? p->by_id[mid] : mid];

		if (d->flow_id == flow_id)
			return d;
		if (d->flow_id < flow_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int caad_plan_from_decisions(struct caad_decision *decisions, size_t n, uint64_t now_ns, struct caad_plan **ret)
{
	struct caad_plan *p;
	int r;

	assert(decisions || n == 0);
	assert(ret);

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->decisions = decisions;
	p->n_decisions = n;
	p->decisions_cap = n;
	p->now_ns = now_ns;
	r = plan_index(p, false);
	if (r < 0) {
		p->decisions = NULL; /* the caller still owns them */
		caad_plan_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

/* ---- the planner ------------------------------------------------------- */

enum tier {
	TIER_LLC,
	TIER_PACKAGE,
	TIER_OTHER_PACKAGE,
	TIER_SIBLING,
	_TIER_COUNT,
};

static const char *const tier_where[_TIER_COUNT] = {
	[TIER_LLC] = "peer core in its LLC",
	[TIER_PACKAGE] = "no free peer in its LLC: core in another LLC of its package",
	[TIER_OTHER_PACKAGE] = "no free core in its package: core in another package (AllowOtherPackage)",
	[TIER_SIBLING] = "no free peer core: its SMT sibling (AllowSMTSibling)",
};

/* tier_where[tier] for consumer CPU c, whose core may have no last-level
 * cache of its own (an E-core without L3): then it has no "its LLC". */
static const char *tier_text(const struct caad_topology *t, int c, enum tier tier)
{
	if (tier == TIER_PACKAGE && t->cpus[c].llc < 0)
		return "its core shares no last-level cache: another core of its package";
	return tier_where[tier];
}

/* Why a core offers no CPU to steer to. */
enum core_state {
	CORE_OK,
	CORE_BANNED,  /* its usable CPUs are all banned */
	CORE_OFFLINE, /* none of its CPUs is usable */
};

/* How a queue owner's previous target fares now. */
enum hold {
	HOLD_NEW,       /* no previous target */
	HOLD_KEEP,      /* still good: keep it */
	HOLD_DWELL,     /* should move, but not before the dwell time is over */
	HOLD_VOLUNTARY, /* should move: consumer left the LLC or a consumer took the core */
	HOLD_FORCED,    /* must move: not usable, banned, the consumer's own CPU, or disallowed */
};

enum iface_mode {
	IFACE_IDLE,    /* no heavy flow */
	IFACE_WHOLE,   /* a flow of unknown queue owns every queue */
	IFACE_QUEUES,  /* each queue has its own owner */
};

/* A flow's sort key (fastest first, then the lowest id), kept beside a
 * "fastest so far" so that collect() compares without looking it up. */
struct key {
	uint64_t rate, id;
};

struct slot {
	int32_t best;    /* heavy index of the fastest flow in it, -1 */
	int32_t owner;   /* heavy index of the placed owner, -1 */
	uint32_t first, end; /* its flows: planner.members[first..end) */
	uint64_t rate;   /* the sum of its heavy flows' rates */
	struct key best_key;
	const char *shared_reason, *conflict_reason;
	/* the conflict text with rule 4's note, for consumers on package
	 * noted_package (one at a time: a third package makes it anew) */
	const char *conflict_noted;
	int noted_package;
	int iface;       /* index into inventory->ifaces */
};

/*
 * What collect() updates of a slot for every heavy flow, apart from the
 * rest of it: 32 bytes a slot instead of 64 keep the tallies of thousands
 * of queues in the L1/L2 cache while a million flows stream past (the
 * slots' lines missed once every few flows), and are copied into the
 * slots once collect() is done.
 */
struct slot_tally {
	int32_t best;  /* slot.best */
	uint32_t n;    /* its heavy flows */
	uint64_t rate; /* slot.rate */
	struct key best_key;
};

struct iface_state {
	enum iface_mode mode;
	unsigned base;        /* first slot; slot base + n_rx is "every queue" */
	int32_t queue_best;   /* fastest of the queue slots' best, -1 */
	bool queues_started;  /* the queue slots' flows have had their turn */
	int *qpos;            /* rx queue index -> position in rx[], -1 */
	unsigned n_qpos;
	bool *nic_package;    /* per package: holds CPUs local to the NIC */
	int nic_first_package;
};

struct cand {
	uint32_t k;
	unsigned slot;
	struct key key;                 /* k's, to sort without looking it up */
	enum hold hold;
	const char *why;                /* for HOLD_*: what is wrong with the previous target; for
	                                 * HOLD_KEEP, NULL or why it holds where it seems not to */
	const struct caad_decision *pd; /* previous decision */
};

/*
 * Room for a decision (or a struct heavy) per flow, from malloc() as usual.
 * A million heavy flows write 70 MB of decisions once: in 4 KiB pages the
 * page faults alone took longer than the planning (about 36 ms on the
 * development VM), in 2 MiB transparent huge pages a fifth of that.
 * madvise() is a hint: without THP (mode "never") nothing changes.
 */
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void *alloc_large(size_t size)
{
	void *p = malloc(size);
	uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t end = ((uintptr_t)p + size) & ~(HUGE_PAGE - 1);

	/* the huge pages wholly inside: a plan with few heavy flows touches
	 * only the first small pages, as before */
	if (p && end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
	return p;
}

/* ---- memory kept from plan to plan -------------------------------------- */

struct scratch_buf {
	void *p;
	size_t cap; /* elements */
};

struct caad_plan_scratch {
	struct scratch_buf hv, tried, members, ntuple_cands;
	struct scratch_buf spare; /* decisions of a recycled plan */
};

int caad_plan_scratch_new(struct caad_plan_scratch **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void caad_plan_scratch_free(struct caad_plan_scratch *s)
{
	if (!s)
		return;
	free(s->hv.p);
	free(s->tried.p);
	free(s->members.p);
	free(s->ntuple_cands.p);
	free(s->spare.p);
	free(s);
}

void caad_plan_recycle(struct caad_plan_scratch *s, struct caad_plan *p)
{
	if (s && p && p->decisions && p->decisions_cap > s->spare.cap) {
		free(s->spare.p);
		s->spare = (struct scratch_buf){ .p = TAKE_PTR(p->decisions), .cap = p->decisions_cap };
	}
	caad_plan_free(p);
}

/* Room for n elements of size: b's when it holds that many (its memory
 * then already faulted in), else new; b NULL: always new, the caller's. */
static void *room(struct scratch_buf *b, size_t n, size_t size)
{
	n = n ? n : 1;
	if (!b)
		return alloc_large(n * size);
	if (b->cap < n) {
		free(b->p);
		b->cap = 0;
		b->p = alloc_large(n * size);
		if (!b->p)
			return NULL;
		b->cap = n;
	}
	return b->p;
}

/* The new plan's decisions: the recycled ones when they are large enough. */
static struct caad_decision *decisions_room(struct caad_plan_scratch *s, size_t n, size_t *ret_cap)
{
	n = n ? n : 1;
	*ret_cap = n;
	if (s && s->spare.cap >= n) {
		*ret_cap = s->spare.cap;
		s->spare.cap = 0;
		return TAKE_PTR(s->spare.p);
	}
	return alloc_large(n * sizeof(struct caad_decision));
}

struct planner {
	const struct caad_topology *topo;
	const struct caad_inventory *inv;
	const struct caad_flow *flows;
	const struct caad_policy *policy;
	const struct caad_plan *prev;
	uint64_t now_ns;
	struct caad_plan *plan;
	struct caad_plan_scratch *scratch; /* owns hv, tried, members, ntuple_cands when not NULL */

	/* per core */
	unsigned *pu_start, *pus;   /* CSR: its usable, unbanned CPUs */
	int *core_first;            /* lowest present CPU */
	uint8_t *core_state;
	int *core_llc, *core_package;
	int32_t *core_consumer;     /* fastest heavy flow (index in flows) consuming on it, -1 */
	struct key *core_consumer_key;
	unsigned *llc_start, *llc_cores;       /* CSR: cores of each LLC */
	unsigned *package_start, *package_cores;
	/* per CPU */
	uint8_t *cpu_consumer;      /* heavy flows whose windows hold it (and as fast ones caad does
	                             * not steer), up to UINT8_MAX: whether another's does */
	uint64_t *load;             /* steered bit/s */
	uint64_t *core_load;        /* ... per core */
	const char **fail_reason;   /* consumer CPUs known to have no candidate */
	const char **fail_considered;
	struct fail_text {          /* ... their texts, in the plan before that is known */
		char reason[FAIL_REASON_MAX];
		char considered[CONSIDERED_MAX];
	} **fail_text;              /* per consumer CPU planned for, else NULL */

	/* heavy flows: decisions[k], and */
	struct heavy {
		int32_t slot;        /* -1: no slot (decided in pass 1) */
		int32_t cpu;         /* decisions[k].consumer_cpu, at hand */
		const struct caad_decision *pd; /* its decision in the previous plan, NULL */
		bool lower;          /* arrived through a device on top of its interface (found by NAPI) */
	} *hv;
	uint64_t *tried;            /* bit k: placed as a slot's owner, or tried to */
	struct member {
		uint32_t k;
		int32_t cpu; /* decisions[k].consumer_cpu, at hand */
		uint64_t rate; /* its flow's rate_bps, at hand */
	} *members;                 /* heavy flows by slot (see slot.first), in flow order */
	struct slot *slots;
	struct slot_tally *tally;   /* collect()'s, per slot */
	uint64_t *unsteerable;      /* per slot, a bit: a queue with nothing caad may set (queue_steerable()) */
	uint64_t *irq_shared;       /* per slot, a bit: its IRQ serves another rx queue too (irq_movable()) */
	uint64_t *kthread_torn;     /* per slot, a bit: its NAPI kthread polls a queue steered elsewhere, or
	                             * given back to the host, too (mark_torn_kthreads()) */
	uint64_t *kthread_back;     /* per slot, a bit: its kthread goes back to the host here, once: the
	                             * first of the host's queues it polls, else (torn) the first steered
	                             * one with a setting (mark_torn_kthreads()) */
	int32_t *host;              /* per slot: the fastest flow left to the host's steering there
	                             * (CAAD_OVERRIDE_HOST), whose queue goes back to the host's values
	                             * when no (faster) flow owns it; -1 */
	size_t n_host;              /* flows left to the host's steering */
	unsigned n_slots;
	struct iface_state *ifs;
	struct ifindex_pos {
		int ifindex, iface;
	} *by_ifindex;              /* open hash of the managed interfaces (ifindex 0: free) */
	unsigned ifindex_mask;
	int last_ifindex, last_iface;
	bool ids_sorted;            /* the heavy flows came in id order */
	size_t prev_pos;            /* prev_find()'s cursor: in id order, where the last id was */
	uint64_t prev_last_id;

	struct cand *round, *next_round;
	size_t n_round, n_next_round;

	bool ntuple_on;             /* Mechanisms= has ntuple and an interface takes rules (rule 6) */
	uint32_t *ntuple_cands;     /* conflicted flows an ntuple rule might move */
	size_t n_ntuple_cands;
	int rfs_iface;              /* emit_settings(): the first queue given RFS, -1 none */
	unsigned rfs_queue;
};

static bool cpu_known(const struct caad_topology *t, int cpu)
{
	return cpu >= 0 && (unsigned)cpu < t->n_cpus && t->cpus[cpu].present;
}

/*
 * A flow's consumer as rule 1 has it: every CPU its thread read on within
 * the window (consumer_cpu at the latest scan, consumer_history at the ones
 * before), planned for in the LLC where it read at the most scans.
 */
struct consumer {
	int scans[1 + CAAD_CONSUMER_HISTORY]; /* the CPU of each scan with a known one, the latest first */
	unsigned n_scans;                     /* 0: consumer_cpu unknown */
	int cpus[1 + CAAD_CONSUMER_HISTORY];  /* the same without repeats */
	unsigned n_cpus;
	int home;          /* the CPU planned for: the latest of that LLC (ties: the LLC read in last), -1 */
	unsigned n_home;   /* scans in home's LLC */
};

/* Scans of the window in the LLC of cpu. */
static unsigned scans_in_llc(const struct caad_topology *t, const struct consumer *cs, int cpu)
{
	unsigned n = 0;

	for (unsigned i = 0; i < cs->n_scans; i++)
		n += t->cpus[cs->scans[i]].llc == t->cpus[cpu].llc;
	return n;
}

static inline void consumer_latest(const struct caad_flow *f, struct consumer *ret);

/*
 * Whether the window's cores are every usable core of home's LLC: then
 * keeping them all free leaves the flow no peer there (a thread that just
 * moved on a small host, say 2 CPUs), and the consumer is its latest CPU
 * alone, as if it had not moved.
 */
static bool window_covers(const struct caad_topology *t, const struct consumer *cs, const struct caad_cpumask *cpus,
                          unsigned *ret_cores)
{
	int first_core = -1;

	*ret_cores = 0;
	CAAD_CPUMASK_FOREACH(cpu, cpus) {
		bool covered = false;

		if (!caad_cpumask_test(&t->usable, (unsigned)cpu))
			continue;
		if (first_core < 0)
			first_core = t->cpus[cpu].core;
		*ret_cores = MAX(*ret_cores, t->cpus[cpu].core != first_core ? 2u : 1u);
		for (unsigned j = 0; j < cs->n_cpus && !covered; j++)
			covered = t->cpus[cs->cpus[j]].core == t->cpus[cpu].core;
		if (!covered)
			return false;
	}
	return true;
}

static bool window_fills_llc(const struct caad_topology *t, const struct consumer *cs)
{
	int llc = t->cpus[cs->home].llc, pkg = t->cpus[cs->home].package;
	unsigned cores;

	if (llc < 0 || !window_covers(t, cs, &t->llcs[llc].cpus, &cores))
		return false;
	/* an LLC of one core always is: only when the package has no other
	 * core either (else its other LLCs have room, and the latest CPU
	 * alone would put the target where the consumer keeps coming back) */
	return cores > 1 || pkg < 0 || window_covers(t, cs, &t->packages[pkg].cpus, &cores);
}

static inline void consumer_of_anchored(const struct caad_topology *t, const struct caad_flow *f, int prev_anchor,
                                        struct consumer *ret);

static inline void consumer_of(const struct caad_topology *t, const struct caad_flow *f, struct consumer *ret)
{
	consumer_of_anchored(t, f, -1, ret);
}

/*
 * consumer_of(), where the previous plan chose its target for prev_anchor
 * (-1 none): of two LLCs the window read in as often, that one's stays
 * home. The latest scan's would flip the home, and the target with it
 * (forced, past the dwell time), at every scan of a thread that hops
 * between them.
 */
static inline void consumer_of_anchored(const struct caad_topology *t, const struct caad_flow *f, int prev_anchor,
                                        struct consumer *ret)
{
	int prev_llc = cpu_known(t, prev_anchor) ? t->cpus[prev_anchor].llc : -1;

	ret->n_scans = ret->n_cpus = ret->n_home = 0;
	ret->home = -1;
	if (!cpu_known(t, f->consumer_cpu))
		return;
	ret->scans[ret->n_scans++] = f->consumer_cpu;
	if (f->n_consumer_history == 0) { /* most flows */
		ret->cpus[ret->n_cpus++] = ret->home = f->consumer_cpu;
		ret->n_home = 1;
		return;
	}
	for (unsigned h = 0; h < f->n_consumer_history && h < CAAD_CONSUMER_HISTORY; h++)
		if (cpu_known(t, f->consumer_history[h]))
			ret->scans[ret->n_scans++] = f->consumer_history[h];

	for (unsigned i = 0; i < ret->n_scans; i++) {
		int x = ret->scans[i];
		unsigned count = scans_in_llc(t, ret, x);
		bool seen = false;

		if (count > ret->n_home ||
		    (count == ret->n_home && prev_llc >= 0 && t->cpus[x].llc == prev_llc &&
		     t->cpus[ret->home].llc != prev_llc)) {
			ret->home = x;
			ret->n_home = count;
		}
		for (unsigned j = 0; j < i; j++)
			seen = seen || ret->scans[j] == x;
		if (!seen)
			ret->cpus[ret->n_cpus++] = x;
	}
	if (ret->n_cpus > 1 && window_fills_llc(t, ret)) {
		/* the anchor kept a home whose LLC the window fills, and the
		 * latest CPU is in another: taken alone, its target would be
		 * where the window keeps coming back (and the next scan,
		 * anchored there, would not take it alone): as if unanchored */
		if (prev_llc >= 0 && t->cpus[f->consumer_cpu].llc != t->cpus[ret->home].llc) {
			consumer_of_anchored(t, f, -1, ret);
			return;
		}
		consumer_latest(f, ret);
	}
}

/* The consumer as its latest CPU alone. */
static inline void consumer_latest(const struct caad_flow *f, struct consumer *ret)
{
	ret->scans[0] = ret->cpus[0] = ret->home = f->consumer_cpu;
	ret->n_scans = ret->n_cpus = ret->n_home = 1;
}

/* The consumer of heavy flow k as collect() made it (its decision's
 * consumer_cpu is its home): anchored where the previous plan's target
 * was, so that a window that read as often in two LLCs has one home, and
 * one set of CPUs kept free, for every check and text about it. */
static void consumer_of_heavy(const struct planner *pl, uint32_t k, struct consumer *ret)
{
	const struct caad_decision *pd = pl->hv[k].pd;

	consumer_of_anchored(pl->topo, &pl->flows[pl->plan->decisions[k].flow],
	                     pd && pd->steer_cpu >= 0 ? pd->anchor_cpu : -1, ret);
}

void caad_decision_stay(const struct caad_topology *t, const struct caad_decision *d, struct caad_cpumask *ret)
{
	const struct caad_cpu *c, *s;

	caad_cpumask_zero(ret);
	if (!cpu_known(t, d->consumer_cpu) || !cpu_known(t, d->steer_cpu))
		return;
	c = &t->cpus[d->consumer_cpu];
	s = &t->cpus[d->steer_cpu];
	if (d->relation == CAAD_RELATION_SAME_CORE || d->relation == CAAD_RELATION_SMT_SIBLING) {
		*ret = t->cores[c->core].cpus;
		return;
	}
	*ret = c->llc >= 0 ? t->llcs[c->llc].cpus : t->packages[c->package].cpus;
	caad_cpumask_andnot(ret, ret, &t->cores[s->core].cpus);
}

/* Index of the managed interface with this ifindex, or -1. */
static int find_iface(struct planner *pl, int ifindex)
{
	if (ifindex <= 0)
		return -1;
	if (ifindex == pl->last_ifindex)
		return pl->last_iface;
	for (unsigned h = (unsigned)ifindex & pl->ifindex_mask;; h = (h + 1) & pl->ifindex_mask) {
		const struct ifindex_pos *e = &pl->by_ifindex[h];

		if (e->ifindex == 0)
			return -1;
		if (e->ifindex == ifindex) {
			pl->last_ifindex = ifindex;
			pl->last_iface = e->iface;
			return e->iface;
		}
	}
}

/* The managed interface, and into *ret_queue the rx queue, whose NAPI is
 * napi_id, or -1 (caad_inventory_find_napi(); only for a heavy flow that no
 * ifindex matched). */
static int find_iface_by_napi(const struct planner *pl, uint32_t napi_id, int *ret_queue)
{
	const struct caad_iface *ifc = caad_inventory_find_napi(pl->inv, napi_id, ret_queue);

	return ifc ? (int)(ifc - pl->inv->ifaces) : -1;
}

/* Fastest first, then the lowest id, then the first in the array. */
static bool before(const struct planner *pl, uint32_t a, uint32_t b)
{
	const struct caad_decision *da = &pl->plan->decisions[a], *db = &pl->plan->decisions[b];
	uint64_t ra = pl->flows[da->flow].rate_bps, rb = pl->flows[db->flow].rate_bps;

	if (ra != rb)
		return ra > rb;
	if (da->flow_id != db->flow_id)
		return da->flow_id < db->flow_id;
	return da->flow < db->flow;
}

/*
 * Whether a flow of this rate and id comes before the one of key b, seen
 * earlier in the array: before() without looking b up (the ties go to the
 * earlier one).
 */
static inline bool before_key(uint64_t rate, uint64_t id, const struct key *b)
{
	return rate != b->rate ? rate > b->rate : id < b->id;
}

static int cmp_heavy(const void *a, const void *b, void *userdata)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x == y ? 0 : before(userdata, x, y) ? -1 : 1;
}

static int cmp_cand(const void *a, const void *b, void *userdata)
{
	const struct cand *x = a, *y = b;

	if (x->key.rate != y->key.rate)
		return x->key.rate > y->key.rate ? -1 : 1;
	return cmp_heavy(&x->k, &y->k, userdata);
}

/* A package as the topology trees name it (caad --print-topology, caadctl
 * topology): its OS number (physical_package_id, not always 0..n-1), not
 * caad's index. */
static unsigned package_id(const struct planner *pl, int package)
{
	return pl->topo->packages[package].os_index;
}

static const char *llc_name(const struct planner *pl, int cpu, char *buf, size_t size)
{
	const struct caad_cpu *c = &pl->topo->cpus[cpu];
	unsigned level = pl->topo->llc_depth_level, pkg = package_id(pl, c->package);

	if (level > 0 && c->llc < 0) /* a core that no cache of that level covers */
		snprintf(buf, size, "no L%u (core %d), package %u", level, c->core, pkg);
	else if (level > 0)
		snprintf(buf, size, "L%u#%u, package %u", level, pl->topo->llcs[c->llc].os_index, pkg);
	else
		snprintf(buf, size, "package %u", pkg);
	return buf;
}

/* ---- tables ------------------------------------------------------------ */

static int build_tables(struct planner *pl)
{
	const struct caad_topology *t = pl->topo;
	unsigned n_llcs = t->n_llcs ? t->n_llcs : 1, n_packages = t->n_packages ? t->n_packages : 1;
	unsigned nc = t->n_cores ? t->n_cores : 1, ncpu = t->n_cpus ? t->n_cpus : 1;

	pl->pu_start = calloc(nc + 1, sizeof(unsigned));
	pl->pus = malloc(ncpu * sizeof(unsigned));
	pl->core_load = calloc(nc, sizeof(uint64_t));
	pl->core_first = malloc(nc * sizeof(int));
	pl->core_state = malloc(nc);
	pl->core_llc = malloc(nc * sizeof(int));
	pl->core_package = malloc(nc * sizeof(int));
	pl->core_consumer = malloc(nc * sizeof(int32_t));
	pl->core_consumer_key = malloc(nc * sizeof(struct key));
	pl->llc_start = calloc(n_llcs + 1, sizeof(unsigned));
	pl->llc_cores = malloc(nc * sizeof(unsigned));
	pl->package_start = calloc(n_packages + 1, sizeof(unsigned));
	pl->package_cores = malloc(nc * sizeof(unsigned));
	pl->cpu_consumer = calloc(ncpu, sizeof(*pl->cpu_consumer));
	pl->load = calloc(ncpu, sizeof(uint64_t));
	pl->fail_reason = calloc(ncpu, sizeof(char *));
	pl->fail_considered = calloc(ncpu, sizeof(char *));
	pl->fail_text = calloc(ncpu, sizeof(*pl->fail_text));

	if (!pl->pu_start || !pl->pus || !pl->core_load || !pl->core_first || !pl->core_state || !pl->core_llc || !pl->core_package ||
	    !pl->core_consumer || !pl->core_consumer_key || !pl->llc_start || !pl->llc_cores || !pl->package_start ||
	    !pl->package_cores || !pl->cpu_consumer || !pl->load || !pl->fail_reason || !pl->fail_considered ||
	    !pl->fail_text)
		return -ENOMEM;

	for (unsigned i = 0, n_pus = 0; i < t->n_cores; i++) {
		int first = -1;
		bool usable = false;

		pl->pu_start[i] = n_pus;
		CAAD_CPUMASK_FOREACH(cpu, &t->cores[i].cpus) {
			if (first < 0)
				first = cpu;
			if (!caad_cpumask_test(&t->usable, (unsigned)cpu))
				continue;
			usable = true;
			if (!caad_cpumask_test(&pl->policy->banned, (unsigned)cpu) && n_pus < ncpu)
				pl->pus[n_pus++] = (unsigned)cpu;
		}
		pl->pu_start[i + 1] = n_pus;
		pl->core_first[i] = first;
		pl->core_state[i] = n_pus > pl->pu_start[i] ? CORE_OK : usable ? CORE_BANNED : CORE_OFFLINE;
		pl->core_llc[i] = first >= 0 ? t->cpus[first].llc : -1;
		pl->core_package[i] = first >= 0 ? t->cpus[first].package : -1;
		pl->core_consumer[i] = -1;
		if (pl->core_llc[i] >= 0 && (unsigned)pl->core_llc[i] < t->n_llcs)
			pl->llc_start[pl->core_llc[i] + 1]++;
		if (pl->core_package[i] >= 0 && (unsigned)pl->core_package[i] < t->n_packages)
			pl->package_start[pl->core_package[i] + 1]++;
	}
	for (unsigned i = 0; i < n_llcs; i++)
		pl->llc_start[i + 1] += pl->llc_start[i];
	for (unsigned i = 0; i < n_packages; i++)
		pl->package_start[i + 1] += pl->package_start[i];

	/* Fill in core order, so each list is sorted by core index. */
	_cleanup_free_ unsigned *fill_l = calloc(n_llcs, sizeof(unsigned));
	_cleanup_free_ unsigned *fill_p = calloc(n_packages, sizeof(unsigned));
	if (!fill_l || !fill_p)
		return -ENOMEM;
	for (unsigned i = 0; i < t->n_cores; i++) {
		int l = pl->core_llc[i], p = pl->core_package[i];

		if (l >= 0 && (unsigned)l < t->n_llcs)
			pl->llc_cores[pl->llc_start[l] + fill_l[l]++] = i;
		if (p >= 0 && (unsigned)p < t->n_packages)
			pl->package_cores[pl->package_start[p] + fill_p[p]++] = i;
	}
	return 0;
}

/* The planner's bitmaps: a bit per slot or per heavy flow. */
static inline void bit_set(uint64_t *map, size_t i)
{
	map[i / 64] |= UINT64_C(1) << (i % 64);
}

static inline bool bit_test(const uint64_t *map, size_t i)
{
	return map[i / 64] >> (i % 64) & 1;
}

static bool queue_steerable(const struct planner *pl, unsigned slot, const struct caad_queue *q);

static int cmp_irq_slot(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/*
 * An IRQ that serves several rx queues (a driver with fewer vectors than
 * queues, or queues of one NAPI) cannot follow two targets: it is no
 * queue's movable IRQ, and those queues get RPS (rule 5) as a managed
 * one's do. Marked by sorting (IRQ, slot) pairs: 4096 queues, a few
 * microseconds.
 */
static int mark_shared_irqs(struct planner *pl)
{
	/* a slot per rx queue, and one per interface for all of them */
	uint64_t *pairs = malloc((pl->n_slots ? pl->n_slots : 1) * sizeof(*pairs));
	size_t n = 0;

	if (!pairs)
		return -ENOMEM;
	for (size_t i = 0; i < pl->inv->n_ifaces; i++)
		for (unsigned q = 0; q < pl->inv->ifaces[i].n_rx; q++)
			if (pl->inv->ifaces[i].rx[q].irq >= 0)
				pairs[n++] = (uint64_t)(unsigned)pl->inv->ifaces[i].rx[q].irq << 32 | (pl->ifs[i].base + q);
	qsort(pairs, n, sizeof(*pairs), cmp_irq_slot);
	for (size_t j = 0; j < n; j++) {
		bool shared = (j > 0 && pairs[j - 1] >> 32 == pairs[j] >> 32) ||
		              (j + 1 < n && pairs[j + 1] >> 32 == pairs[j] >> 32);
		uint32_t slot = (uint32_t)pairs[j];

		if (shared)
			bit_set(pl->irq_shared, slot);
	}
	free(pairs);
	return 0;
}

static int build_ifaces(struct planner *pl)
{
	const struct caad_topology *t = pl->topo;
	unsigned n_packages = t->n_packages;
	unsigned base = 0;

	/* ifindexes by open addressing, at most half full: they are small and
	 * mostly consecutive, so a lookup is one probe */
	pl->ifindex_mask = 1;
	while (pl->ifindex_mask < 2 * pl->inv->n_ifaces)
		pl->ifindex_mask *= 2;
	pl->by_ifindex = calloc(pl->ifindex_mask, sizeof(*pl->by_ifindex));
	pl->ifindex_mask--;
	pl->ifs = calloc(pl->inv->n_ifaces ? pl->inv->n_ifaces : 1, sizeof(*pl->ifs));
	if (!pl->ifs || !pl->by_ifindex)
		return -ENOMEM;
	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		int ifindex = pl->inv->ifaces[i].ifindex;
		unsigned h = (unsigned)ifindex & pl->ifindex_mask;

		if (ifindex <= 0)
			continue;
		while (pl->by_ifindex[h].ifindex != 0 && pl->by_ifindex[h].ifindex != ifindex)
			h = (h + 1) & pl->ifindex_mask;
		if (pl->by_ifindex[h].ifindex == 0) /* the first of a repeated ifindex, as a scan finds */
			pl->by_ifindex[h] = (struct ifindex_pos){ .ifindex = ifindex, .iface = (int)i };
	}
	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		const struct caad_iface *ifc = &pl->inv->ifaces[i];
		struct iface_state *is = &pl->ifs[i];
		unsigned max_index = 0;

		is->base = base;
		is->queue_best = -1;
		is->nic_first_package = -1;
		base += ifc->n_rx + 1;

		for (unsigned q = 0; q < ifc->n_rx; q++)
			max_index = MAX(max_index, ifc->rx[q].index);
		/* rx-N numbers are dense; a silly one only costs the direct map */
		is->n_qpos = ifc->n_rx ? MIN(max_index, 1u << 20) + 1 : 0;
		if (is->n_qpos) {
			is->qpos = malloc(is->n_qpos * sizeof(int));
			if (!is->qpos)
				return -ENOMEM;
			for (unsigned x = 0; x < is->n_qpos; x++)
				is->qpos[x] = -1;
			for (unsigned q = 0; q < ifc->n_rx; q++)
				if (ifc->rx[q].index < is->n_qpos && is->qpos[ifc->rx[q].index] < 0)
					is->qpos[ifc->rx[q].index] = (int)q;
		}

		if (ifc->has_local_cpus && n_packages > 0) {
			is->nic_package = calloc(n_packages, sizeof(bool));
			if (!is->nic_package)
				return -ENOMEM;
			CAAD_CPUMASK_FOREACH(cpu, &ifc->local_cpus) {
				if (!cpu_known(t, cpu) || t->cpus[cpu].package < 0)
					continue;
				is->nic_package[t->cpus[cpu].package] = true;
				if (is->nic_first_package < 0)
					is->nic_first_package = t->cpus[cpu].package;
			}
		}
	}
	pl->n_slots = base;
	pl->slots = malloc((base ? base : 1) * sizeof(struct slot));
	pl->tally = malloc((base ? base : 1) * sizeof(struct slot_tally));
	/* a bit a slot, looked at for every heavy flow: 512 bytes for 4096
	 * queues, where the queues themselves are 6 MB */
	pl->unsteerable = calloc(base / 64 + 1, sizeof(uint64_t));
	pl->irq_shared = calloc(base / 64 + 1, sizeof(uint64_t));
	pl->kthread_torn = calloc(base / 64 + 1, sizeof(uint64_t));
	pl->kthread_back = calloc(base / 64 + 1, sizeof(uint64_t));
	pl->host = malloc((base ? base : 1) * sizeof(int32_t));
	if (!pl->slots || !pl->tally || !pl->unsteerable || !pl->irq_shared || !pl->kthread_torn || !pl->kthread_back ||
	    !pl->host ||
	    mark_shared_irqs(pl) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		unsigned n_rx = pl->inv->ifaces[i].n_rx, none = 0;

		for (unsigned q = 0; q <= n_rx; q++) {
			unsigned slot = pl->ifs[i].base + q;

			pl->slots[slot] = (struct slot){ .best = -1, .owner = -1, .iface = (int)i };
			pl->tally[slot] = (struct slot_tally){ .best = -1 };
			pl->host[slot] = -1;
			if (q < n_rx && !queue_steerable(pl, slot, &pl->inv->ifaces[i].rx[q])) {
				bit_set(pl->unsteerable, slot);
				none++;
			}
			/* the whole interface (a flow of unknown queue): none of its queues */
			if (q == n_rx && none == n_rx)
				bit_set(pl->unsteerable, slot);
		}
	}
	return 0;
}

static void planner_done(struct planner *pl)
{
	free(pl->pu_start);
	free(pl->pus);
	free(pl->unsteerable);
	free(pl->irq_shared);
	free(pl->kthread_torn);
	free(pl->kthread_back);
	free(pl->host);
	free(pl->core_load);
	free(pl->core_first);
	free(pl->core_state);
	free(pl->core_llc);
	free(pl->core_package);
	free(pl->core_consumer);
	free(pl->core_consumer_key);
	free(pl->llc_start);
	free(pl->llc_cores);
	free(pl->package_start);
	free(pl->package_cores);
	free(pl->cpu_consumer);
	free(pl->load);
	free(pl->fail_reason);
	free(pl->fail_considered);
	free(pl->fail_text);
	if (!pl->scratch) {
		free(pl->hv);
		free(pl->tried);
		free(pl->members);
		free(pl->ntuple_cands);
	}
	free(pl->slots);
	free(pl->tally);
	for (size_t i = 0; pl->ifs && i < pl->inv->n_ifaces; i++) {
		free(pl->ifs[i].qpos);
		free(pl->ifs[i].nic_package);
	}
	free(pl->ifs);
	free(pl->by_ifindex);
	free(pl->round);
	free(pl->next_round);
}

/* ---- choosing a CPU ---------------------------------------------------- */

static void add_load(struct planner *pl, int cpu, uint64_t rate)
{
	uint64_t *core = &pl->core_load[pl->topo->cpus[cpu].core];

	if (__builtin_add_overflow(pl->load[cpu], rate, &pl->load[cpu]))
		pl->load[cpu] = UINT64_MAX;
	if (__builtin_add_overflow(*core, rate, core))
		*core = UINT64_MAX;
}

static void sub_load(struct planner *pl, int cpu, uint64_t rate)
{
	uint64_t *core = &pl->core_load[pl->topo->cpus[cpu].core];

	pl->load[cpu] = pl->load[cpu] > rate ? pl->load[cpu] - rate : 0;
	*core = *core > rate ? *core - rate : 0;
}

/* Spread over cores first, then over the threads of a core: the least
 * loaded core, its least loaded CPU, the lowest number. */
static bool better(const struct planner *pl, int cpu, int best)
{
	uint64_t a, b;

	if (best < 0)
		return true;
	a = pl->core_load[pl->topo->cpus[cpu].core];
	b = pl->core_load[pl->topo->cpus[best].core];
	if (a != b)
		return a < b;
	if (pl->load[cpu] != pl->load[best])
		return pl->load[cpu] < pl->load[best];
	return cpu < best;
}

/* The best CPU of core i, or -1 (none usable, or a consumer's core). */
static int core_candidate(const struct planner *pl, unsigned i)
{
	int best = -1;

	if (pl->core_consumer[i] >= 0)
		return -1;
	for (unsigned j = pl->pu_start[i]; j < pl->pu_start[i + 1]; j++)
		if (better(pl, (int)pl->pus[j], best))
			best = (int)pl->pus[j];
	return best;
}

/* One core in a list of candidates, named by its best CPU (by its lowest
 * when it has none). */
static void describe_core(const struct planner *pl, struct text *why, unsigned i, int chosen)
{
	int cpu;

	if (why->full)
		return;
	cpu = core_candidate(pl, i);
	text_str(why, " ");
	if (pl->core_consumer[i] >= 0) {
		const struct caad_flow *f = &pl->flows[pl->core_consumer[i]];

		text_uint(why, (unsigned)pl->core_first[i]);
		text_str(why, " consumer core");
		if (f->comm[0] || f->tid) {
			char comm[sizeof(f->comm) + 1];
			size_t n = strnlen(f->comm, sizeof(f->comm));

			memcpy(comm, f->comm, n);
			comm[n] = '\0';
			text_str(why, " (");
			text_str(why, comm[0] ? comm : "thread ");
			if (f->tid) {
				if (comm[0])
					text_str(why, "/");
				text_uint(why, f->tid);
			}
			text_str(why, ")");
		}
	} else if (pl->core_state[i] == CORE_BANNED) {
		text_uint(why, (unsigned)pl->core_first[i]);
		text_str(why, " banned");
	} else if (pl->core_state[i] == CORE_OFFLINE) {
		text_uint(why, (unsigned)pl->core_first[i]);
		text_str(why, " offline or isolated");
	} else if (cpu == chosen) {
		text_uint(why, (unsigned)cpu);
		text_str(why, " chosen (");
		text_rate(why, pl->core_load[i]);
		text_str(why, " steered to its core)");
	} else if (chosen >= 0 && pl->core_load[pl->topo->cpus[chosen].core] == pl->core_load[i] &&
	           pl->load[chosen] == pl->load[cpu]) {
		text_uint(why, (unsigned)cpu);
		text_str(why, " as free but higher");
	} else {
		text_uint(why, (unsigned)cpu);
		text_str(why, " busier (");
		text_rate(why, pl->core_load[i]);
		text_str(why, " steered to its core)");
	}
	text_str(why, ",");
}

/* Cores of a tier for consumer CPU c, as a list (LLC, package) or all. */
static bool in_tier(const struct planner *pl, enum tier tier, int c, unsigned core)
{
	const struct caad_cpu *cc = &pl->topo->cpus[c];

	if ((int)core == cc->core)
		return false;
	switch (tier) {
	case TIER_LLC:
		return cc->llc >= 0 && pl->core_llc[core] == cc->llc;
	case TIER_PACKAGE:
		return pl->core_package[core] == cc->package && (cc->llc < 0 || pl->core_llc[core] != cc->llc);
	case TIER_OTHER_PACKAGE:
		return pl->core_package[core] != cc->package;
	default:
		return false;
	}
}

static void tier_cores(const struct planner *pl, enum tier tier, int c, const unsigned **ret, unsigned *ret_n)
{
	const struct caad_cpu *cc = &pl->topo->cpus[c];

	*ret = NULL;
	*ret_n = 0;
	if (tier == TIER_LLC && cc->llc >= 0 && (unsigned)cc->llc < pl->topo->n_llcs) {
		*ret = pl->llc_cores + pl->llc_start[cc->llc];
		*ret_n = pl->llc_start[cc->llc + 1] - pl->llc_start[cc->llc];
	} else if (tier == TIER_PACKAGE && cc->package >= 0 && (unsigned)cc->package < pl->topo->n_packages) {
		*ret = pl->package_cores + pl->package_start[cc->package];
		*ret_n = pl->package_start[cc->package + 1] - pl->package_start[cc->package];
	}
}

/*
 * The least loaded candidate for consumer CPU c, best tier first, or -1.
 * Whether there is one depends only on the tables, not on the load: a
 * consumer CPU without one is remembered by the caller. In other packages,
 * those local to the NIC (nic_package, per package; NULL: not known) come
 * first. why (may be NULL) gets the candidates and why they lost.
 */
static int choose(const struct planner *pl, int c, const bool *nic_package, enum tier *ret_tier, struct text *why)
{
	const struct caad_topology *t = pl->topo;
	const struct caad_cpu *cc = &t->cpus[c];
	char where[64];

	for (enum tier tier = 0; tier < _TIER_COUNT; tier++) {
		const unsigned *list;
		unsigned n;
		int best = -1;

		if (tier == TIER_OTHER_PACKAGE && !pl->policy->allow_other_package)
			continue;
		if (tier == TIER_SIBLING) {
			if (!pl->policy->allow_smt_sibling)
				continue;
			CAAD_CPUMASK_FOREACH(cpu, &t->cores[cc->core].cpus)
				if (cpu != c && caad_cpumask_test(&t->usable, (unsigned)cpu) &&
				    !caad_cpumask_test(&pl->policy->banned, (unsigned)cpu) && !pl->cpu_consumer[cpu] &&
				    better(pl, cpu, best))
					best = cpu;
			if (why)
				text_add(why, "%sSMT sibling: %s", why->len ? "; " : "", best >= 0 ? "chosen" : "none usable");
			if (best >= 0) {
				*ret_tier = tier;
				return best;
			}
			continue;
		}

		tier_cores(pl, tier, c, &list, &n);
		if (tier == TIER_OTHER_PACKAGE) {
			for (int pass = nic_package ? 0 : 1; pass < 2 && best < 0; pass++)
				for (unsigned i = 0; i < t->n_cores; i++) {
					bool nic = pl->core_package[i] >= 0 && nic_package && nic_package[pl->core_package[i]];
					int cpu = in_tier(pl, tier, c, i) && (pass == 1 || nic) ? core_candidate(pl, i) : -1;
					if (cpu >= 0 && better(pl, cpu, best))
						best = cpu;
				}
		} else {
			for (unsigned j = 0; j < n; j++) {
				int cpu = in_tier(pl, tier, c, list[j]) ? core_candidate(pl, list[j]) : -1;
				if (cpu >= 0 && better(pl, cpu, best))
					best = cpu;
			}
		}

		if (why) {
			if (tier == TIER_LLC)
				llc_name(pl, c, where, sizeof(where));
			else if (tier == TIER_PACKAGE && cc->llc < 0) /* its core has none (tier_text()) */
				snprintf(where, sizeof(where), "other cores of package %u", package_id(pl, cc->package));
			else if (tier == TIER_PACKAGE)
				snprintf(where, sizeof(where), "other LLCs of package %u", package_id(pl, cc->package));
			else
				snprintf(where, sizeof(where), "other packages");
			text_add(why, "%s%s:", why->len ? "; " : "", where);
			size_t len0 = why->len;
			if (tier == TIER_OTHER_PACKAGE) {
				for (unsigned i = 0; i < t->n_cores; i++)
					if (in_tier(pl, tier, c, i))
						describe_core(pl, why, i, best);
			} else {
				for (unsigned j = 0; j < n; j++)
					if (in_tier(pl, tier, c, list[j]))
						describe_core(pl, why, list[j], best);
			}
			if (why->len == len0)
				text_add(why, " no other core,");
			/* each core's piece ends in ','; the last one's goes, and
			 * the next tier, if any, begins with "; " */
			if (!why->full && why->len > 0 && why->buf[why->len - 1] == ',')
				why->buf[--why->len] = '\0';
		}
		if (best >= 0) {
			*ret_tier = tier;
			return best;
		}
	}
	return -1;
}

/* ---- holding a previous target ----------------------------------------- */

/* The tier choose() finds a target of relation rel to its consumer in. */
static enum tier relation_tier(enum caad_relation rel)
{
	switch (rel) {
	case CAAD_RELATION_PEER_CORE_SAME_LLC:
		return TIER_LLC;
	case CAAD_RELATION_SAME_PACKAGE_OTHER_LLC:
		return TIER_PACKAGE;
	case CAAD_RELATION_OTHER_PACKAGE:
		return TIER_OTHER_PACKAGE;
	default:
		return TIER_SIBLING;
	}
}

/*
 * Whether consumer CPU c has a candidate in a nearer tier than a target of
 * relation rel: one chosen farther away because its LLC had no free peer
 * (every core a consumer's) goes back once one is free again. Whether a
 * tier has one depends only on the tables, not on the load (choose()).
 */
static bool nearer_tier_free(const struct planner *pl, int c, enum caad_relation rel)
{
	enum tier tier;

	if (rel == CAAD_RELATION_PEER_CORE_SAME_LLC)
		return false;
	return choose(pl, c, NULL, &tier, NULL) >= 0 && tier < relation_tier(rel);
}

/* The closed loop's placement for a flow, if it has one that can be used. */
static const struct caad_override *find_override(const struct planner *pl, uint64_t flow_id)
{
	const struct caad_override *o = pl->policy->overrides;
	size_t lo = LOWER_BOUND_BY(o, pl->policy->n_overrides, flow_id, flow_id);

	if (lo >= pl->policy->n_overrides || o[lo].flow_id != flow_id)
		return NULL;
	o += lo;
	if (o->cpu == CAAD_OVERRIDE_HOST)
		return o;
	if (!cpu_known(pl->topo, o->cpu) || !caad_cpumask_test(&pl->topo->usable, (unsigned)o->cpu) ||
	    caad_cpumask_test(&pl->policy->banned, (unsigned)o->cpu))
		return NULL; /* the rules decide; the closed loop sees the change */
	return o;
}

/*
 * Whether the closed loop's placement of heavy flow k on cpu would put its
 * processing on another flow's reader: a CPU of the window of another heavy
 * flow (or of one as fast that caad does not steer), where the rules' own
 * sibling tier does not go either. The closed loop picks a trial's or a
 * verdict's CPU from the topology alone (caad_trial_cpu_for_relation()):
 * only the planner sees every flow. The consumer's own CPU is the same-core
 * placement's by definition, whoever else reads there.
 */
static bool override_on_reader(const struct planner *pl, uint32_t k, int cpu)
{
	const struct caad_decision *d = &pl->plan->decisions[k];
	struct consumer cs;
	unsigned own = 0;

	if (cpu == d->consumer_cpu || !pl->cpu_consumer[cpu])
		return false;
	/* k's own window counted once (keep_consumer_free()) */
	consumer_of_heavy(pl, k, &cs);
	for (unsigned j = 0; j < cs.n_cpus; j++)
		own += cs.cpus[j] == cpu;
	return pl->cpu_consumer[cpu] > own;
}

static enum hold classify(const struct planner *pl, uint32_t k, const struct caad_decision **ret_pd,
                          const char **ret_why)
{
	const struct caad_topology *t = pl->topo;
	const struct caad_decision *d = &pl->plan->decisions[k], *pd;
	const struct caad_override *o;
	int c = d->consumer_cpu, s0;
	enum caad_relation rel;
	bool window_sibling = false;

	*ret_why = NULL;
	pd = pl->hv[k].pd;
	/* one that steered nowhere (conflicted, its consumer unknown) has no
	 * target to keep or move from: its placement now is a new one */
	*ret_pd = pd && pd->steer_cpu >= 0 ? pd : NULL;
	if (!*ret_pd)
		return HOLD_NEW;
	s0 = pd->steer_cpu;

	if (!cpu_known(t, s0) || !caad_cpumask_test(&t->usable, (unsigned)s0)) {
		*ret_why = "is offline, isolated or gone";
		return HOLD_FORCED;
	}
	if (caad_cpumask_test(&pl->policy->banned, (unsigned)s0)) {
		*ret_why = "is banned";
		return HOLD_FORCED;
	}
	/* the closed loop's placement, refused now (place()), is left at
	 * once: held for DwellMSec= as a sibling a reader came to, its turn
	 * would go on being measured on that reader's CPU */
	if (pl->policy->n_overrides && (o = find_override(pl, d->flow_id)) && o->cpu == s0 &&
	    override_on_reader(pl, k, s0)) {
		*ret_why = "is the closed loop's placement on another heavy flow's consumer CPU";
		return HOLD_FORCED;
	}
	rel = caad_topology_relation(t, (unsigned)c, (unsigned)s0);
	if (rel == CAAD_RELATION_SAME_CORE) {
		*ret_why = "is now the consumer's own CPU";
		return HOLD_FORCED;
	}
	if (rel == CAAD_RELATION_SMT_SIBLING && !pl->policy->allow_smt_sibling) {
		*ret_why = "is now the consumer's SMT sibling";
		return HOLD_FORCED;
	}
	if (rel == CAAD_RELATION_OTHER_PACKAGE && !pl->policy->allow_other_package) {
		*ret_why = "is in another package than the consumer now";
		return HOLD_FORCED;
	}
	if (pl->flows[d->flow].n_consumer_history > 0) {
		struct consumer cs;

		consumer_of_heavy(pl, k, &cs);
		for (unsigned j = 0; j < cs.n_cpus; j++) {
			int x = cs.cpus[j];

			if (x == s0) {
				*ret_why = "is a CPU its consumer read on lately";
				return HOLD_FORCED;
			}
			if (t->cpus[x].core == t->cpus[s0].core && t->cpus[x].core != t->cpus[c].core) {
				/*
				 * The sibling it was chosen as, of a CPU the
				 * consumer still reads on in this LLC: held as
				 * the consumer's sibling. Chosen anew for the
				 * latest CPU, it would follow a reader that hops
				 * between two cores at every scan, forced.
				 */
				if (pl->policy->allow_smt_sibling && rel == CAAD_RELATION_PEER_CORE_SAME_LLC &&
				    cpu_known(t, pd->anchor_cpu) && t->cpus[pd->anchor_cpu].core == t->cpus[s0].core) {
					window_sibling = true;
					continue;
				}
				*ret_why = "is on a core its consumer read on lately";
				return HOLD_FORCED;
			}
		}
	}
	if (window_sibling)
		rel = CAAD_RELATION_SMT_SIBLING;

	/* a sibling target, allowed, is on its own consumer's core: only a
	 * consumer on that CPU itself takes it */
	if (rel == CAAD_RELATION_SMT_SIBLING ? pl->cpu_consumer[s0] : pl->core_consumer[t->cpus[s0].core] >= 0)
		*ret_why = rel == CAAD_RELATION_SMT_SIBLING ? "is now a consumer's CPU" : "is now a consumer's core";
	else if (rel != CAAD_RELATION_PEER_CORE_SAME_LLC && cpu_known(t, pd->anchor_cpu) &&
	         t->cpus[pd->anchor_cpu].llc != t->cpus[c].llc)
		*ret_why = "is no longer in the consumer's LLC (the consumer moved)";
	else if (nearer_tier_free(pl, c, rel)) {
		if (window_sibling)
			*ret_why = "is the SMT sibling of a CPU its consumer read on lately, and another core is free now";
		else if (rel == CAAD_RELATION_SMT_SIBLING)
			*ret_why = "is the consumer's SMT sibling, and another core is free now";
		else
			*ret_why = "is farther than a core free now";
	} else {
		/* what a kept target on its reader's other core is, said */
		if (window_sibling)
			*ret_why = "is the SMT sibling of a CPU its consumer read on lately (AllowSMTSibling)";
		return HOLD_KEEP;
	}

	uint64_t elapsed = pl->now_ns >= pd->since_ns ? pl->now_ns - pd->since_ns : 0;
	if (elapsed < (uint64_t)pl->policy->dwell_ms * NSEC_PER_MSEC)
		return HOLD_DWELL;
	return HOLD_VOLUNTARY;
}

/* The consumer's package when it is not the NIC's (rule 4), else -1. */
static int off_nic_package(const struct planner *pl, const struct caad_decision *d)
{
	const struct iface_state *is = &pl->ifs[d->iface];
	int pkg = pl->topo->cpus[d->consumer_cpu].package;

	return !is->nic_package || pkg < 0 || is->nic_package[pkg] ? -1 : pkg;
}

/* The note of rule 4: the consumer is not on the NIC's socket. */
static void nic_note(const struct planner *pl, const struct caad_decision *d, char *buf, size_t size)
{
	const struct iface_state *is = &pl->ifs[d->iface];
	int pkg = off_nic_package(pl, d);

	buf[0] = '\0';
	if (pkg < 0)
		return;
	snprintf(buf, size,
	         "; note: %s's NIC is local to package %u, the consumer runs on package %u (the NIC's own socket "
	         "measured best; caad does not move applications)",
	         pl->inv->ifaces[d->iface].name, package_id(pl, is->nic_first_package), package_id(pl, pkg));
}

/*
 * What the reason says of the consumer's window when it read on more than
 * one CPU in it: ", lately also on CPUs 4,17; planned for L3#1, package 0,
 * where it read most (3 of its last 4 scans)"; "" for one CPU.
 */
static void window_note(const struct planner *pl, uint32_t k, int home, char *buf, size_t size)
{
	const struct caad_topology *t = pl->topo;
	const struct caad_flow *f = &pl->flows[pl->plan->decisions[k].flow];
	struct consumer cs;
	unsigned other = 0;
	char where[64];
	int n;

	buf[0] = '\0';
	if (f->n_consumer_history == 0)
		return;
	consumer_of_heavy(pl, k, &cs);
	if (cs.n_cpus < 2)
		return;
	n = snprintf(buf, size, ", lately also on CPU%s", cs.n_cpus > 2 ? "s" : "");
	for (unsigned j = 0, first = 1; j < cs.n_cpus; j++) {
		int x = cs.cpus[j];

		if (x == home)
			continue;
		if (n >= 0 && (size_t)n < size)
			n += snprintf(buf + n, size - (size_t)n, "%s%d", first ? " " : ",", x);
		first = 0;
		if (t->cpus[x].llc != t->cpus[home].llc)
			other = MAX(other, scans_in_llc(t, &cs, x));
	}
	if (other == 0 || n < 0 || (size_t)n >= size)
		return;
	/* a tie goes to the LLC its target was chosen for, else the latest */
	const char *why = other < cs.n_home                                   ? "it read most"
	                  : t->cpus[home].llc == t->cpus[f->consumer_cpu].llc ? "it read last"
	                                                                      : "its target was chosen";
	snprintf(buf + n, size - (size_t)n, "; planned for %s, where %s (%u of its last %u scans%s)",
	         llc_name(pl, home, where, sizeof(where)), why, cs.n_home, cs.n_scans,
	         other < cs.n_home ? "" : ", as many as elsewhere");
}

/* Set decision k to steer to cpu, with its reason. */
static int steer(struct planner *pl, uint32_t k, int cpu, const struct caad_decision *kept, const char *what,
                 const char *tail, const char *considered)
{
	struct caad_decision *d = &pl->plan->decisions[k];
	const struct caad_flow *f = &pl->flows[d->flow];
	char where[64], note[256], name[48], window[192];

	/* kept: the previous decision whose target this is, NULL for a new one */
	d->steer_cpu = cpu;
	d->relation = caad_topology_relation(pl->topo, (unsigned)d->consumer_cpu, (unsigned)cpu);
	d->held = kept && kept->steer_cpu == cpu;
	d->closed_loop = false; /* place() says where it is the closed loop's */
	d->since_ns = kept ? kept->since_ns : pl->now_ns;
	d->anchor_cpu = kept ? kept->anchor_cpu : d->consumer_cpu;
	nic_note(pl, d, note, sizeof(note));
	if (d->low_since_ns) {
		char rate[32], thr[32];
		size_t len = strlen(note);

		snprintf(note + len, sizeof(note) - len,
		         "; at %s, below half of RateThreshold=%s for %llu ms: kept for up to DwellMSec=%u",
		         fmt_rate(f->rate_bps, rate, sizeof(rate)), fmt_rate(pl->policy->rate_threshold_bps, thr, sizeof(thr)),
		         (unsigned long long)((pl->now_ns - MIN(d->low_since_ns, pl->now_ns)) / NSEC_PER_MSEC), pl->policy->dwell_ms);
	}
	consumer_name(f, name, sizeof(name));
	window_note(pl, k, d->consumer_cpu, window, sizeof(window));
	d->reason = arena_printf(pl->plan, "consumer on CPU %d%s%s%s%s: %s (%s)%s%s", d->consumer_cpu,
	                         name[0] ? " (" : "", name, name[0] ? ")" : "", window, what,
	                         llc_name(pl, cpu, where, sizeof(where)), tail, note);
	d->considered = considered ? arena_strdup(pl->plan, considered) : "";
	if (!d->reason || !d->considered)
		return -ENOMEM;
	add_load(pl, cpu, f->rate_bps);
	return 0;
}

/* Place the owner of a slot by the rules; as place(). */
static int place_by_rules(struct planner *pl, const struct cand *cd)
{
	struct caad_decision *d = &pl->plan->decisions[cd->k];
	const struct caad_decision *pd = cd->pd;
	char what[64], tail[256];
	enum tier tier = TIER_LLC;
	struct text why = {};
	int c = d->consumer_cpu, cpu, r;

	if (cd->hold == HOLD_KEEP || cd->hold == HOLD_DWELL) {
		double age = (double)(pl->now_ns >= pd->since_ns ? pl->now_ns - pd->since_ns : 0) / 1e9;

		snprintf(what, sizeof(what), "keeps CPU %d", pd->steer_cpu);
		if (cd->hold == HOLD_KEEP)
			snprintf(tail, sizeof(tail), ", its target for %.1f s (hysteresis)%s%s", age,
			         cd->why ? ", which " : "", cd->why ?: "");
		else
			snprintf(tail, sizeof(tail), ", which %s, until DwellMSec=%u is over (its target for %.1f s)",
			         cd->why, pl->policy->dwell_ms, age);
		if (cd->hold == HOLD_KEEP)
			snprintf(why.buf, sizeof(why.buf), "previous target CPU %d still valid", pd->steer_cpu);
		else
			snprintf(why.buf, sizeof(why.buf), "previous target CPU %d: %s", pd->steer_cpu, cd->why);
		r = steer(pl, cd->k, pd->steer_cpu, pd, what, tail, why.buf);
		/* valid by the rules (HOLD_KEEP), it is theirs now; held only
		 * for the dwell time, it is still where the closed loop put it */
		if (r >= 0 && cd->hold == HOLD_DWELL)
			pl->plan->decisions[cd->k].closed_loop = pd->closed_loop;
		return r < 0 ? r : 1;
	}

	/* consumer CPUs without any candidate are known (find_hopeless()) */
	cpu = pl->fail_reason[c] ? -1 : choose(pl, c, pl->ifs[d->iface].nic_package, &tier, &why);
	assert(cpu >= 0 || pl->fail_reason[c]);

	if (pd && cpu != pd->steer_cpu) {
		if (cd->hold == HOLD_VOLUNTARY && (cpu < 0 || pl->plan->n_moves >= pl->policy->max_moves)) {
			snprintf(what, sizeof(what), "keeps CPU %d", pd->steer_cpu);
			if (cpu < 0)
				snprintf(tail, sizeof(tail), ", which %s: no better target", cd->why);
			else
				snprintf(tail, sizeof(tail), ", which %s, for now: MaxMovesPerCycle=%u reached (CPU %d next)",
				         cd->why, pl->policy->max_moves, cpu);
			r = steer(pl, cd->k, pd->steer_cpu, pd, what, tail, why.buf);
			if (r >= 0) /* (as for the dwell time, above) */
				pl->plan->decisions[cd->k].closed_loop = pd->closed_loop;
			return r < 0 ? r : 1;
		}
		if (cpu >= 0) {
			if (cd->hold == HOLD_VOLUNTARY)
				pl->plan->n_moves++;
			else
				pl->plan->n_forced++;
			snprintf(tail, sizeof(tail), "; moved from CPU %d, which %s", pd->steer_cpu, cd->why);
			r = steer(pl, cd->k, cpu, NULL, tier_text(pl->topo, c, tier), tail, why.buf);
			return r < 0 ? r : 1;
		}
	}
	if (cpu < 0) {
		d->reason = pl->fail_reason[c];
		d->considered = pl->fail_considered[c];
		return 0;
	}
	/* chosen anew, maybe the same CPU as before: then it is not a change */
	r = steer(pl, cd->k, cpu, pd && cpu == pd->steer_cpu ? pd : NULL, tier_text(pl->topo, c, tier), "", why.buf);
	if (r >= 0 && pd && cpu == pd->steer_cpu) {
		pl->plan->decisions[cd->k].held = false;
		pl->plan->decisions[cd->k].anchor_cpu = c;
	}
	return r < 0 ? r : 1;
}

/*
 * Place the owner of a slot: where the closed loop puts it, else by the
 * rules. Returns 1 when it got a CPU, 0 when not (its decision then says
 * why), or -ENOMEM.
 */
static int place(struct planner *pl, const struct cand *cd)
{
	struct caad_decision *d = &pl->plan->decisions[cd->k];
	const struct caad_decision *pd = cd->pd;
	const struct caad_override *o = pl->policy->n_overrides ? find_override(pl, d->flow_id) : NULL;
	char tail[256];
	int r;

	assert(!o || o->cpu != CAAD_OVERRIDE_HOST); /* collect() decided those */
	if (!o)
		return place_by_rules(pl, cd);

	if (override_on_reader(pl, cd->k, o->cpu)) {
		/* the closed loop sees its turn not planned, and ends it */
		r = place_by_rules(pl, cd);
		if (r < 0)
			return r;
		d->reason = arena_printf(pl->plan,
		                         "%s; not the closed loop's CPU %d (%s): another heavy flow's consumer reads there",
		                         d->reason, o->cpu, o->why ?: "closed-loop placement");
		return d->reason ? r : -ENOMEM;
	}

	bool same = pd && pd->steer_cpu == o->cpu;

	if (pd && !same)
		pl->plan->n_forced++;
	snprintf(tail, sizeof(tail), ": %s", o->why ?: "closed-loop placement");
	r = steer(pl, cd->k, o->cpu, same ? pd : NULL, "closed-loop placement", tail, "");
	if (r >= 0 && same)
		pl->plan->decisions[cd->k].anchor_cpu = d->consumer_cpu;
	if (r >= 0)
		pl->plan->decisions[cd->k].closed_loop = true;
	return r < 0 ? r : 1;
}

/* ---- slots and rounds -------------------------------------------------- */

static bool slot_is_whole(const struct planner *pl, int iface, unsigned slot)
{
	return slot == pl->ifs[iface].base + pl->inv->ifaces[iface].n_rx;
}

static int push_cand(struct planner *pl, uint32_t k, unsigned slot)
{
	const struct caad_decision *d = &pl->plan->decisions[k];

	pl->next_round[pl->n_next_round++] = (struct cand){
		.k = k,
		.slot = slot,
		.key = { .rate = pl->flows[d->flow].rate_bps, .id = d->flow_id },
	};
	return 0;
}

static bool tried(const struct planner *pl, uint32_t k)
{
	return bit_test(pl->tried, k);
}

/*
 * The next flow of a slot whose owner could not be placed, if any: the
 * fastest one not tried yet whose consumer CPU has a candidate. An owner
 * fails only when its consumer CPU has none (find_hopeless()), so this one
 * will not: a slot is scanned once, O(flows on it).
 */
static int32_t next_member(struct planner *pl, unsigned s)
{
	const struct slot *sl = &pl->slots[s];
	int32_t best = -1;
	uint64_t best_rate = 0;

	for (uint32_t j = sl->first; j < sl->end; j++) {
		const struct member *m = &pl->members[j];

		if (pl->fail_reason[m->cpu] || tried(pl, m->k))
			continue;
		if (best < 0 || (m->rate != best_rate ? m->rate > best_rate : before(pl, m->k, (uint32_t)best))) {
			best = (int32_t)m->k;
			best_rate = m->rate;
		}
	}
	return best;
}

static int next_of_slot(struct planner *pl, unsigned s)
{
	int32_t best = next_member(pl, s);

	return best >= 0 ? push_cand(pl, (uint32_t)best, s) : 0;
}

/*
 * The whole-interface slot's candidate could not be placed, before the
 * queues' own flows had their turn: the next flow of unknown queue takes
 * every queue only if it too is faster than each queue's fastest flow
 * (round 0's rule); else the slot stays without owner and place_owners()
 * gives the queues theirs.
 */
static bool whole_turn_over(struct planner *pl, unsigned s)
{
	const struct iface_state *is = &pl->ifs[pl->slots[s].iface];
	int32_t next;

	if (s != is->base + pl->inv->ifaces[pl->slots[s].iface].n_rx || is->queues_started || is->queue_best < 0)
		return false;
	next = next_member(pl, s);
	return next >= 0 && !before(pl, (uint32_t)next, (uint32_t)is->queue_best);
}

/* A flow an ntuple rule moves off from_slot: its load leaves the CPU of
 * that queue's owner (add_followers_load()), for to_cpu (-1: counted). */
static void move_load(struct planner *pl, unsigned from_slot, int to_cpu, uint64_t rate)
{
	sub_load(pl, pl->plan->decisions[pl->slots[from_slot].owner].steer_cpu, rate);
	if (to_cpu >= 0)
		add_load(pl, to_cpu, rate);
}

/*
 * Every heavy flow of a placed owner's queue is processed on its CPU, steered
 * with it or conflicted, and counts for the owners placed after it (steer()
 * counted the owner's own rate). An owner of unknown queue holds every
 * queue of its interface, with all their flows.
 */
static void add_followers_load(struct planner *pl, const struct cand *cd)
{
	const struct caad_decision *d = &pl->plan->decisions[cd->k];
	const struct iface_state *is = &pl->ifs[d->iface];
	unsigned whole = is->base + pl->inv->ifaces[d->iface].n_rx;
	uint64_t rate = 0, own = pl->flows[d->flow].rate_bps;

	for (unsigned s = cd->slot == whole ? is->base : cd->slot; s <= cd->slot; s++)
		if (__builtin_add_overflow(rate, pl->slots[s].rate, &rate))
			rate = UINT64_MAX;
	if (rate > own)
		add_load(pl, d->steer_cpu, rate - own);
}

/* Place a round of slot owners: kept targets first (their load counts for
 * the others), then the rest fastest first. Failures queue the next flow
 * of their slot for the following round. */
static int run_rounds(struct planner *pl)
{
	while (pl->n_next_round > 0) {
		struct cand *tmp = pl->round;
		int r;

		pl->round = pl->next_round;
		pl->n_round = pl->n_next_round;
		pl->next_round = tmp;
		pl->n_next_round = 0;

		for (size_t i = 0; i < pl->n_round; i++)
			pl->round[i].hold = classify(pl, pl->round[i].k, &pl->round[i].pd, &pl->round[i].why);
		qsort_r(pl->round, pl->n_round, sizeof(struct cand), cmp_cand, pl);

		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < pl->n_round; i++) {
				struct cand *cd = &pl->round[i];
				bool kept = cd->hold == HOLD_KEEP || cd->hold == HOLD_DWELL;

				if (kept != (pass == 0))
					continue;
				bit_set(pl->tried, cd->k);
				r = place(pl, cd);
				if (r < 0)
					return r;
				if (r > 0) {
					pl->slots[cd->slot].owner = (int32_t)cd->k;
					add_followers_load(pl, cd);
					continue;
				}
				if (whole_turn_over(pl, cd->slot))
					continue;
				r = next_of_slot(pl, cd->slot);
				if (r < 0)
					return r;
			}
	}
	return 0;
}

/* Whether any queue slot of the interface has a placed owner. */
static bool queues_owned(const struct planner *pl, size_t i)
{
	const struct iface_state *is = &pl->ifs[i];

	for (unsigned q = 0; q < pl->inv->ifaces[i].n_rx; q++)
		if (pl->slots[is->base + q].owner >= 0)
			return true;
	return false;
}

static int start_queue_slots(struct planner *pl, size_t i)
{
	struct iface_state *is = &pl->ifs[i];

	is->queues_started = true;
	for (unsigned q = 0; q < pl->inv->ifaces[i].n_rx; q++) {
		const struct slot *sl = &pl->slots[is->base + q];

		if (sl->best >= 0 && !tried(pl, (uint32_t)sl->best))
			push_cand(pl, (uint32_t)sl->best, is->base + q);
		else if (sl->best >= 0 && next_of_slot(pl, is->base + q) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Consumer CPUs with no candidate at all, whatever the load: their flows
 * cannot be placed (only held on a previous target). Known before placing
 * anything, a queue's flows consumed there are passed over at once. The
 * texts go where collect() already pointed those flows' decisions.
 */
static int find_hopeless(struct planner *pl)
{
	const struct caad_topology *t = pl->topo;
	/* Without the SMT-sibling tier, the candidates (and the text of those
	 * considered) of a consumer CPU are its core's: per core, the first
	 * consumer CPU asked answers for the others. */
	bool per_core = !pl->policy->allow_smt_sibling;
	_cleanup_free_ int *asked = per_core ? malloc((t->n_cores ? t->n_cores : 1) * sizeof(int)) : NULL;

	if (per_core && !asked)
		return -ENOMEM;
	for (unsigned i = 0; per_core && i < t->n_cores; i++)
		asked[i] = -1;

	for (unsigned c = 0; c < t->n_cpus; c++) {
		struct fail_text *ft = pl->fail_text[c];
		struct text why = {};
		enum tier tier;
		int core;

		if (!ft)
			continue;
		core = t->cpus[c].core;
		if (per_core && asked[core] >= 0) {
			if (!pl->fail_reason[asked[core]])
				continue;
			snprintf(why.buf, sizeof(why.buf), "%s", pl->fail_considered[asked[core]]);
		} else {
			if (per_core)
				asked[core] = (int)c;
			if (choose(pl, (int)c, NULL, &tier, NULL) >= 0)
				continue;
			(void)choose(pl, (int)c, NULL, &tier, &why);
		}
		snprintf(ft->reason, sizeof(ft->reason),
		         "consumer CPU %u has no usable peer core (banned, offline, isolated or consumers' cores)", c);
		snprintf(ft->considered, sizeof(ft->considered), "%s", why.buf);
		pl->fail_reason[c] = ft->reason;
		pl->fail_considered[c] = ft->considered;
	}
	return 0;
}

static int place_owners(struct planner *pl)
{
	size_t n_ifaces = pl->inv->n_ifaces;
	int r;

	/* Round 0: per interface, a flow of unknown queue owns every queue when
	 * it is faster than each queue's fastest flow, else each queue its own. */
	for (size_t i = 0; i < n_ifaces; i++) {
		struct iface_state *is = &pl->ifs[i];
		unsigned whole = is->base + pl->inv->ifaces[i].n_rx;
		int32_t w = pl->slots[whole].best;

		/* the fastest of the queue slots' fastest flows */
		const struct slot *qb = NULL;
		for (unsigned q = is->base; q < whole; q++) {
			const struct slot *sl = &pl->slots[q];

			if (sl->best >= 0 &&
			    (!qb || (sl->best_key.rate != qb->best_key.rate || sl->best_key.id != qb->best_key.id
			                     ? before_key(sl->best_key.rate, sl->best_key.id, &qb->best_key)
			                     : before(pl, (uint32_t)sl->best, (uint32_t)qb->best))))
				qb = sl;
		}
		is->queue_best = qb ? qb->best : -1;

		/* by the slots' keys: a previous owner's rate with its margin, so
		 * that the interface does not flip between the modes (moving every
		 * queue) each time two flows' rates cross */
		if (w >= 0 && (!qb || before_key(pl->slots[whole].best_key.rate, pl->slots[whole].best_key.id,
		                                  &qb->best_key))) {
			is->mode = IFACE_WHOLE;
			push_cand(pl, (uint32_t)w, whole);
		} else if (is->queue_best >= 0) {
			is->mode = IFACE_QUEUES;
			r = start_queue_slots(pl, i);
			if (r < 0)
				return r;
		}
	}
	r = run_rounds(pl);
	if (r < 0)
		return r;

	/* No flow of unknown queue could be placed: the queues' own flows get
	 * their turn; and the other way round. */
	for (size_t i = 0; i < n_ifaces; i++) {
		struct iface_state *is = &pl->ifs[i];
		unsigned whole = is->base + pl->inv->ifaces[i].n_rx;

		if (is->mode == IFACE_WHOLE && pl->slots[whole].owner < 0) {
			is->mode = IFACE_QUEUES;
			r = start_queue_slots(pl, i);
		} else if (is->mode == IFACE_QUEUES && !queues_owned(pl, i) && pl->slots[whole].best >= 0) {
			is->mode = IFACE_WHOLE;
			if (!tried(pl, (uint32_t)pl->slots[whole].best))
				push_cand(pl, (uint32_t)pl->slots[whole].best, whole);
			else
				r = next_of_slot(pl, whole);
		}
		if (r < 0)
			return r;
	}
	return run_rounds(pl);
}

static const char *queue_label(const struct planner *pl, int iface, unsigned slot, char *buf, size_t size)
{
	const struct caad_iface *ifc = &pl->inv->ifaces[iface];

	if (slot_is_whole(pl, iface, slot))
		snprintf(buf, size, "%s (all rx queues)", ifc->name);
	else
		snprintf(buf, size, "%s rx-%u", ifc->name, ifc->rx[slot - pl->ifs[iface].base].index);
	return buf;
}

static bool ntuple_flow_of(const struct caad_flow *f, struct caad_ntuple_flow *ret);

/*
 * Whether cpu, steered for another flow, serves flow k too: a peer core in
 * its consumer's LLC, and no consumer's core (rule 1). Not its own
 * consumer's alone: the owner may have cpu on another reader's core, held
 * there for DwellMSec= or put there by the closed loop (on its own reader's,
 * even), which is the owner's choice and no reason to add k's processing
 * to that reader's core. collect() marked the cores of every heavy flow's
 * window, k's own among them.
 */
static bool serves_too(const struct planner *pl, uint32_t k, int cpu)
{
	const struct caad_decision *d = &pl->plan->decisions[k];

	return caad_topology_relation(pl->topo, (unsigned)d->consumer_cpu, (unsigned)cpu) ==
	               CAAD_RELATION_PEER_CORE_SAME_LLC &&
	       pl->core_consumer[pl->topo->cpus[cpu].core] < 0;
}

/*
 * Rule 6 with ntuple rules: flow k, conflicted on the queue of from_slot,
 * moves by a rule of the NIC's classifier to another rx queue of its
 * interface: one whose owner's CPU serves it too (shared), else one without
 * heavy flows, steered for it (its CPU chosen as for an owner). Returns 1
 * when moved, 0 when not (the NIC takes no rules, its tuple is unknown, no
 * such queue or CPU, MaxMovesPerCycle= reached), or -ENOMEM. Flows that
 * keep their rule come back to that queue in collect().
 */
static int ntuple_move(struct planner *pl, uint32_t k, unsigned from_slot)
{
	struct caad_decision *d = &pl->plan->decisions[k];
	const struct caad_iface *ifc = &pl->inv->ifaces[d->iface];
	const struct iface_state *is = &pl->ifs[d->iface];
	const struct caad_decision *pd;
	struct caad_ntuple_flow nf;
	struct text why = {};
	char from[64], tail[192], where[64], what[64], note[256];
	const char *hold_why;
	int free_q = -1, cpu;
	enum tier tier = TIER_LLC;
	enum hold hold;

	if (!ifc->ntuple || is->mode != IFACE_QUEUES || slot_is_whole(pl, d->iface, from_slot) ||
	    !ntuple_flow_of(&pl->flows[d->flow], &nf))
		return 0;
	queue_label(pl, d->iface, from_slot, from, sizeof(from));
	for (unsigned q = 0; q < ifc->n_rx; q++) {
		const struct slot *sl = &pl->slots[is->base + q];
		const struct caad_decision *od;

		if (is->base + q == from_slot)
			continue;
		if (sl->owner < 0) {
			/* a queue given back to the host is not free */
			if (sl->best < 0 && free_q < 0 && queue_steerable(pl, is->base + q, &ifc->rx[q]) &&
			    pl->host[is->base + q] < 0 && pl->host[is->base + ifc->n_rx] < 0)
				free_q = (int)q;
			continue;
		}
		od = &pl->plan->decisions[sl->owner];
		if (od->steer_cpu < 0 || !serves_too(pl, k, od->steer_cpu))
			continue;
		nic_note(pl, d, note, sizeof(note));
		d->reason = arena_printf(pl->plan,
		                         "moved by an ntuple rule from %s to rx-%u, whose CPU %d (steered for the flow "
		                         "that owns it, consumer on CPU %d) is a peer core in this consumer's LLC too (%s)%s",
		                         from, ifc->rx[q].index, od->steer_cpu, od->consumer_cpu,
		                         llc_name(pl, od->steer_cpu, where, sizeof(where)), note);
		if (!d->reason)
			return -ENOMEM;
		d->considered = "";
		d->steer_cpu = od->steer_cpu;
		d->relation = CAAD_RELATION_PEER_CORE_SAME_LLC;
		d->shares_queue = true;
		d->since_ns = od->since_ns;
		d->anchor_cpu = d->consumer_cpu;
		d->ntuple = true;
		d->queue = (int)ifc->rx[q].index;
		move_load(pl, from_slot, od->steer_cpu, pl->flows[d->flow].rate_bps);
		return 1;
	}
	if (free_q < 0)
		return 0;
	/* a target of its own that still holds is kept (hysteresis): only its
	 * queue changes */
	hold = classify(pl, k, &pd, &hold_why);
	if (hold == HOLD_KEEP || hold == HOLD_DWELL) {
		cpu = pd->steer_cpu;
		snprintf(what, sizeof(what), "keeps CPU %d", cpu);
	} else {
		cpu = choose(pl, d->consumer_cpu, pl->ifs[d->iface].nic_package, &tier, &why);
		if (cpu < 0)
			return 0;
		snprintf(what, sizeof(what), "%s", tier_text(pl->topo, d->consumer_cpu, tier));
		if (pd && pd->steer_cpu != cpu) {
			if (hold == HOLD_VOLUNTARY && pl->plan->n_moves >= pl->policy->max_moves)
				return 0; /* conflicted for now; the next plan may move it */
			if (hold == HOLD_VOLUNTARY)
				pl->plan->n_moves++;
			else
				pl->plan->n_forced++;
		}
	}
	pl->slots[is->base + (unsigned)free_q].owner = (int32_t)k;
	d->ntuple = true;
	d->queue = (int)ifc->rx[free_q].index;
	snprintf(tail, sizeof(tail), "; moved by an ntuple rule from %s (steered to CPU %d for the flow that owns it) to rx-%u", from,
	         pl->plan->decisions[pl->slots[from_slot].owner].steer_cpu, ifc->rx[free_q].index);
	if (steer(pl, k, cpu, cpu == (pd ? pd->steer_cpu : -1) ? pd : NULL, what, tail, why.buf) < 0)
		return -ENOMEM;
	move_load(pl, from_slot, -1, pl->flows[d->flow].rate_bps); /* steer() counted it on its new CPU */
	return 1;
}

/* The position in its interface's rx[] of the queue of index rxq, -1: no
 * such queue (or -1, unknown). */
static int queue_pos(const struct iface_state *is, int rxq)
{
	return rxq >= 0 && (unsigned)rxq < is->n_qpos ? is->qpos[rxq] : -1;
}

/* The flow's own rx queue, as collect() found it (-1: none or unknown). */
static int own_queue(const struct planner *pl, const struct caad_decision *d)
{
	int rxq = pl->flows[d->flow].rx_queue;

	return queue_pos(&pl->ifs[d->iface], rxq) >= 0 ? rxq : -1;
}

/*
 * The conflicted flows of interfaces that take ntuple rules, fastest first
 * (as owners are placed: the outcome does not depend on the flows' order),
 * each moved if it can be; then the flows a rule moved before that are
 * unsteered now lose it, and are on the queue they arrive on by themselves
 * again.
 */
static int ntuple_moves(struct planner *pl)
{
	qsort_r(pl->ntuple_cands, pl->n_ntuple_cands, sizeof(uint32_t), cmp_heavy, pl);
	for (size_t i = 0; i < pl->n_ntuple_cands; i++) {
		uint32_t k = pl->ntuple_cands[i];
		int r = ntuple_move(pl, k, (unsigned)pl->hv[k].slot);

		if (r < 0)
			return r;
	}
	for (size_t k = 0; k < pl->plan->n_decisions; k++) {
		struct caad_decision *d = &pl->plan->decisions[k];

		if (!d->ntuple || d->steer_cpu >= 0)
			continue;
		d->ntuple = false;
		d->queue = own_queue(pl, d);
	}
	return 0;
}

/* Whether the NIC refused flow_id's ntuple rule (struct caad_policy). */
static bool ntuple_refused(const struct planner *pl, uint64_t flow_id)
{
	const uint64_t *ids = pl->policy->ntuple_refused;
	size_t n = pl->policy->n_ntuple_refused, i = caad_lower_bound_u64(ids, n, sizeof(*ids), 0, flow_id);

	return i < n && ids[i] == flow_id;
}

/* collect(): a flow that an ntuple rule moved in the previous plan stays on
 * the rule's queue (slot), whatever queue it was seen on; but not where the
 * NIC refused the rule (its packets never went there). */
static void ntuple_keep(struct planner *pl, struct caad_decision *d, const struct caad_decision *pd, unsigned *slot)
{
	const struct iface_state *is = &pl->ifs[d->iface];
	struct caad_ntuple_flow nf;

	if (!pd || !pd->ntuple || ntuple_refused(pl, d->flow_id) || pd->steer_cpu < 0 || pd->iface != d->iface ||
	    queue_pos(is, pd->queue) < 0 || !ntuple_flow_of(&pl->flows[d->flow], &nf))
		return;
	*slot = is->base + (unsigned)is->qpos[pd->queue];
	d->queue = pd->queue;
	d->ntuple = true;
}

/* The queue's label and its owner's name, for a follower's text. */
static void name_owner(const struct planner *pl, int iface, unsigned slot, const struct caad_flow *owner,
                       char *label, size_t label_size, char *name, size_t name_size)
{
	queue_label(pl, iface, slot, label, label_size);
	consumer_name(owner, name, name_size);
}

/* A flow on a queue that another flow owns (the faster one, or one that
 * holds it for DwellMSec=): served too when the owner's CPU is a peer core
 * of its consumer as well and no consumer's core (serves_too()), else
 * conflicted. */
static pid_t queue_kthread(const struct caad_iface *ifc, const struct caad_queue *q, const struct caad_flow *f);

/*
 * The NAPI kthread that polls flow d's packets, where the owner's setting
 * moves another one (0: none such). On a queue the kernel maps to no NAPI
 * (veth), a queue's kthread is found through its owner's flow: a flow of
 * the interface polled by another NAPI (another rx queue, an interface
 * steered whole) is not served by moving the owner's; with RPS (no
 * kthread mechanism), it is.
 */
static pid_t polled_apart(const struct planner *pl, const struct caad_decision *d, const struct caad_flow *owner,
                          pid_t *ret_owners)
{
	const struct caad_iface *ifc = &pl->inv->ifaces[d->iface];
	const struct iface_state *is = &pl->ifs[d->iface];
	int pos = queue_pos(is, d->queue);
	const struct caad_queue *q;
	pid_t mine, theirs;

	if (ifc->n_rx == 0 || (pl->policy->disabled_mechanisms & (1u << CAAD_SETTING_KTHREAD_AFFINITY)))
		return 0;
	q = &ifc->rx[pos >= 0 ? pos : 0];
	mine = queue_kthread(ifc, q, &pl->flows[d->flow]);
	*ret_owners = theirs = queue_kthread(ifc, q, owner);
	return mine > 0 && theirs > 0 && mine != theirs ? mine : 0;
}

static int decide_follower(struct planner *pl, uint32_t k, unsigned owner_slot)
{
	struct caad_decision *d = &pl->plan->decisions[k];
	struct slot *sl = &pl->slots[owner_slot];
	const struct caad_decision *od;
	const struct caad_flow *of;
	char label[64], where[64], rate[32], name[48], note[256], what[96];
	const char **text;
	int32_t reader;
	int pkg;

	if (sl->owner < 0) {
		/* every consumer CPU of the queue was tried: this one has no candidate */
		d->reason = pl->fail_reason[d->consumer_cpu] ?: "conflicted: no queue of its interface could be steered";
		d->considered = pl->fail_considered[d->consumer_cpu] ?: "";
		return 0;
	}
	od = &pl->plan->decisions[sl->owner];
	of = &pl->flows[od->flow];

	pid_t owners, apart = polled_apart(pl, d, of, &owners);
	if (apart) {
		d->reason = arena_printf(pl->plan,
		                         "not served by its queue's steering: its packets are polled by NAPI kthread %d, "
		                         "and the flow that owns the queue moves another one (%d)",
		                         (int)apart, (int)owners);
		if (!d->reason)
			return -ENOMEM;
		d->considered = "";
		return 0;
	}
	if (serves_too(pl, k, od->steer_cpu)) {
		/* made once per slot: every flow sharing it has its consumer in
		 * the LLC of the queue's CPU, so on one package and one note */
		if (!sl->shared_reason) {
			name_owner(pl, d->iface, owner_slot, of, label, sizeof(label), name, sizeof(name));
			nic_note(pl, d, note, sizeof(note));
			sl->shared_reason = arena_printf(pl->plan,
			                                 "shares %s with the flow that owns it (%s%sconsumer on CPU %d): its CPU "
			                                 "%d is a peer core in this consumer's LLC too (%s)%s",
			                                 label, name, name[0] ? ", " : "", od->consumer_cpu,
			                                 od->steer_cpu, llc_name(pl, od->steer_cpu, where, sizeof(where)),
			                                 note);
		}
		if (!sl->shared_reason)
			return -ENOMEM;
		d->steer_cpu = od->steer_cpu;
		d->relation = CAAD_RELATION_PEER_CORE_SAME_LLC;
		d->shares_queue = true;
		d->since_ns = od->since_ns;
		d->anchor_cpu = d->consumer_cpu;
		d->reason = sl->shared_reason;
		d->considered = "";
		return 0; /* its load counted with its owner's (add_followers_load()) */
	}
	if (pl->fail_reason[d->consumer_cpu]) {
		/* it could not have been steered anywhere anyway: say that */
		d->reason = pl->fail_reason[d->consumer_cpu];
		d->considered = pl->fail_considered[d->consumer_cpu];
		return 0;
	}
	/* (not one of a device on top: its packets may carry a VLAN tag, which
	 * a rule of the 4-tuple alone would not match) */
	if (pl->ntuple_on && pl->inv->ifaces[d->iface].ntuple && !slot_is_whole(pl, d->iface, owner_slot) &&
	    !pl->hv[k].lower && !ntuple_refused(pl, d->flow_id))
		pl->ntuple_cands[pl->n_ntuple_cands++] = k; /* ntuple_moves() may move it */
	pkg = off_nic_package(pl, d);
	text = pkg < 0 ? &sl->conflict_reason : &sl->conflict_noted;
	if (!*text || (pkg >= 0 && sl->noted_package != pkg)) {
		nic_note(pl, d, note, sizeof(note)); /* "" on the NIC's package */
		/* a consumer's core is the slot's, not the flow's: one text for
		 * every flow of the slot still fits */
		reader = pl->core_consumer[pl->topo->cpus[od->steer_cpu].core];
		if (reader == (int32_t)od->flow)
			snprintf(what, sizeof(what), "the core of that flow's own consumer");
		else if (reader >= 0) {
			consumer_name(&pl->flows[reader], name, sizeof(name));
			snprintf(what, sizeof(what), "a consumer's core (%s)", name[0] ? name : "another heavy flow's");
		} else
			snprintf(what, sizeof(what), "not a peer core of this flow's consumer");
		name_owner(pl, d->iface, owner_slot, of, label, sizeof(label), name, sizeof(name));
		*text = arena_printf(pl->plan,
		                     "conflicted: %s is steered to CPU %d for the flow that owns it (%s%s%s, consumer on "
		                     "CPU %d), %s%s",
		                     label, od->steer_cpu, name, name[0] ? ", " : "",
		                     fmt_rate(of->rate_bps, rate, sizeof(rate)), od->consumer_cpu, what, note);
		if (!*text)
			return -ENOMEM;
		if (pkg >= 0)
			sl->noted_package = pkg;
	}
	d->reason = *text;
	d->considered = "";
	return 0;
}

static int decide_followers(struct planner *pl)
{
	/* per interface: the slot of the fastest placed queue owner */
	_cleanup_free_ int *first = malloc((pl->inv->n_ifaces ? pl->inv->n_ifaces : 1) * sizeof(int));
	/* per slot: the slot its flows follow (-1: none, their queue is
	 * unknown and the queues have owners of their own), and whether that
	 * one has no owner */
	_cleanup_free_ int32_t *follow = malloc((pl->n_slots ? pl->n_slots : 1) * sizeof(int32_t));
	_cleanup_free_ bool *ownerless = malloc(pl->n_slots ? pl->n_slots : 1);
	int r;

	if (!first || !follow || !ownerless)
		return -ENOMEM;
	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		const struct iface_state *is = &pl->ifs[i];
		unsigned whole = is->base + pl->inv->ifaces[i].n_rx;

		first[i] = -1;
		for (unsigned q = 0; q < pl->inv->ifaces[i].n_rx; q++) {
			int32_t o = pl->slots[is->base + q].owner;
			if (o >= 0 && (first[i] < 0 || before(pl, (uint32_t)o, (uint32_t)pl->slots[first[i]].owner)))
				first[i] = (int)(is->base + q);
		}
		for (unsigned s = is->base; s <= whole; s++) {
			follow[s] = is->mode == IFACE_WHOLE ? (int32_t)whole : s != whole ? (int32_t)s : -1;
			ownerless[s] = follow[s] >= 0 && pl->slots[follow[s]].owner < 0;
		}
	}

	for (size_t k = 0; k < pl->plan->n_decisions; k++) {
		int32_t s = pl->hv[k].slot;

		if (s < 0)
			continue; /* decided in collect() */
		/* A slot without owner, a consumer CPU without candidate: the
		 * texts collect() gave it stand (most flows of a host with very
		 * many heavy ones, not looked at again). */
		if (ownerless[s] && pl->fail_reason[pl->hv[k].cpu])
			continue;
		if (tried(pl, (uint32_t)k))
			continue; /* an owner, placed or not */
		if (follow[s] >= 0)
			r = decide_follower(pl, (uint32_t)k, (unsigned)follow[s]);
		else {
			/* Its queue is unknown: it may arrive on any of them. */
			struct caad_decision *d = &pl->plan->decisions[k];
			unsigned whole = pl->ifs[d->iface].base + pl->inv->ifaces[d->iface].n_rx;
			struct slot *wsl = &pl->slots[whole];
			r = 0;
			if (!wsl->conflict_reason && first[d->iface] >= 0) {
				const struct caad_decision *od = &pl->plan->decisions[pl->slots[first[d->iface]].owner];
				char name[48];
				consumer_name(&pl->flows[od->flow], name, sizeof(name));
				wsl->conflict_reason = arena_printf(
					pl->plan,
					"conflicted: its rx queue is unknown, and %s's queues are steered for flows "
					"on known queues (the fastest: %s%sconsumer on CPU %d, steered to CPU %d)",
					pl->inv->ifaces[d->iface].name, name, name[0] ? ", " : "", od->consumer_cpu,
					od->steer_cpu);
				if (!wsl->conflict_reason)
					r = -ENOMEM;
			}
			d->reason = wsl->conflict_reason ?: "conflicted: no queue of its interface could be steered, "
			                                    "and it arrives on any of them";
			d->considered = "";
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- settings ---------------------------------------------------------- */

static void add_setting(struct planner *pl, enum caad_setting_kind kind, int iface, const struct caad_queue *q,
                        pid_t kthread, const struct caad_cpumask *cpus, const char *reason)
{
	struct caad_setting *s = &pl->plan->settings[pl->plan->n_settings++];

	s->kind = kind;
	s->iface = iface;
	s->queue = q->index;
	s->irq = kind == CAAD_SETTING_IRQ_AFFINITY ? q->irq : -1;
	s->pid = kind == CAAD_SETTING_KTHREAD_AFFINITY ? kthread : 0;
	s->cpus = *cpus;
	s->value = 0;
	s->flow_id = 0;
	s->rule = (struct caad_ntuple_flow){};
	s->restore = false;
	size_t n = strnlen(reason, sizeof(s->reason) - 1);
	memcpy(s->reason, reason, n);
	s->reason[n] = '\0';
}

/*
 * One mechanism per queue: a threaded NAPI's kthread, else a movable IRQ,
 * each with RPS off so that nothing sends the packets elsewhere again; a
 * queue with neither gets the CPU as its RPS mask.
 */
/*
 * The threaded-NAPI kthread that polls queue q for flow f: the queue's own
 * (netdev netlink maps it), else the one of the NAPI the flow's packets
 * arrived through (sk_napi_id, or the kthread BPF saw process them), e.g.
 * on veth, whose queues the kernel does not map to NAPIs.
 */
static pid_t queue_kthread(const struct caad_iface *ifc, const struct caad_queue *q, const struct caad_flow *f)
{
	if (q->napi_kthread > 0)
		return q->napi_kthread;
	for (unsigned i = 0; f && i < ifc->n_napis; i++)
		if (ifc->napis[i].kthread > 0 &&
		    ((f->napi_id && ifc->napis[i].id == f->napi_id) ||
		     (f->proc_kthread && (uint32_t)ifc->napis[i].kthread == f->proc_kthread)))
			return ifc->napis[i].kthread;
	return 0;
}

/* No IRQ is moved onto a CPU that ran out of vectors (policy->irq_banned);
 * one that is there already may stay. */
static bool irq_banned(const struct caad_policy *policy, const struct caad_queue *q, int cpu)
{
	return caad_cpumask_test(&policy->irq_banned, (unsigned)cpu) &&
	       !(q->has_irq_affinity && caad_cpumask_count(&q->irq_affinity) == 1 &&
	         caad_cpumask_test(&q->irq_affinity, (unsigned)cpu));
}

/* The rps_flow_cnt RFS wants on a queue of ifc: its share of the global
 * table, a power of two (as the kernel rounds it), or the host's if larger. */
static unsigned rfs_flow_cnt(const struct caad_iface *ifc, const struct caad_queue *q)
{
	unsigned share = CAAD_RFS_TABLE_ENTRIES / (ifc->n_rx ? ifc->n_rx : 1), v = CAAD_RFS_FLOW_CNT_MIN;

	while (v < share)
		v *= 2;
	return MAX(v, q->rps_flow_cnt);
}

/*
 * RFS, as the kernel's get_rps_cpu() does it: with a flow table on the
 * queue (rps_flow_cnt) and the global socket flow table
 * (rps_sock_flow_entries), a packet goes to the CPU where its socket was
 * last read (recvmsg records it); the queue's RPS map is looked at only
 * when the socket table has no entry for the flow (before its first read,
 * after a hash collision, its CPU offline), and without a map such a
 * packet stays where it arrived. A flow's CPU switches only once the old
 * CPU's backlog holds none of its packets (rflow->last_qtail): following
 * the reader does not reorder.
 *
 * So a queue whose target is the consumer's own CPU (the closed loop's
 * same-core placement) gets RFS *in addition to* its usual single-CPU
 * setting: the IRQ, kthread or RPS mask puts the packets on that CPU now
 * and covers what RFS has no entry for, and RFS makes the kernel follow the
 * consumer when the scheduler moves it, between two of caad's scans. Any
 * other target turns RFS off on the queue where it is on (rps_flow_cnt 0):
 * it would pull the flow back onto the consumer's CPU. Returns the number
 * of settings (counting), 0 when filling.
 */
static unsigned rfs_settings(struct planner *pl, int iface, const struct caad_queue *q,
                             const struct caad_decision *d)
{
	const struct caad_iface *ifc = &pl->inv->ifaces[iface];
	bool same = d->relation == CAAD_RELATION_SAME_CORE;
	struct caad_setting *s;
	char reason[CAAD_REASON_MAX];
	struct caad_cpumask none;

	if ((pl->policy->disabled_mechanisms & (1u << CAAD_SETTING_RFS_FLOW_CNT)) || !q->has_rps_flow_cnt ||
	    (!same && q->rps_flow_cnt == 0))
		return 0;
	if (same && pl->rfs_iface < 0) {
		pl->rfs_iface = iface; /* the global table goes with the first such queue */
		pl->rfs_queue = q->index;
	}
	if (!pl->plan->settings)
		return 1;
	if (same)
		snprintf(reason, sizeof(reason), "RFS follows the consumer%s; %s",
		         pl->inv->has_rfs_table ? "" : " (rps_sock_flow_entries not visible here: only if the host sized it)",
		         d->reason);
	else
		snprintf(reason, sizeof(reason), "RFS off: it would pull the flow onto the consumer's CPU; %s", d->reason);
	caad_cpumask_zero(&none);
	add_setting(pl, CAAD_SETTING_RFS_FLOW_CNT, iface, q, 0, &none, reason);
	s = &pl->plan->settings[pl->plan->n_settings - 1];
	s->value = same ? rfs_flow_cnt(ifc, q) : 0;
	return 0;
}

/* Whether caad may write queue q's IRQ affinity (slot: its slot): an IRQ
 * of its own, not kernel-managed, and Mechanisms= allows it. */
static bool irq_movable(const struct planner *pl, unsigned slot, const struct caad_queue *q)
{
	return q->irq >= 0 && !q->irq_managed && !bit_test(pl->irq_shared, slot) &&
	       !(pl->policy->disabled_mechanisms & (1u << CAAD_SETTING_IRQ_AFFINITY));
}

/*
 * The mechanism that steers queue q (of slot) to cpu, its NAPI kthread
 * being kthread (0: none): false when there is none, nothing caad may set
 * there for that CPU (drop_settingless() leaves its owner alone then). A
 * threaded NAPI is polled by its kthread, wherever that runs: its IRQ only
 * wakes it, so moving the IRQ moves no processing. Where its kthread
 * cannot be moved (torn, or Mechanisms=), only RPS steers the queue.
 */
static bool queue_kind(const struct planner *pl, unsigned slot, const struct caad_queue *q, pid_t kthread, int cpu,
                       enum caad_setting_kind *ret)
{
	unsigned off = pl->policy->disabled_mechanisms;

	if (kthread > 0 && !bit_test(pl->kthread_torn, slot) && !(off & (1u << CAAD_SETTING_KTHREAD_AFFINITY)))
		*ret = CAAD_SETTING_KTHREAD_AFFINITY;
	else if (kthread <= 0 && irq_movable(pl, slot, q) && !irq_banned(pl->policy, q, cpu))
		*ret = CAAD_SETTING_IRQ_AFFINITY;
	else if (q->has_rps && !(off & (1u << CAAD_SETTING_RPS_CPUS)))
		*ret = CAAD_SETTING_RPS_CPUS;
	else
		return false;
	return true;
}

/* One mechanism per queue (see above), and RFS (see rfs_settings()). */
static unsigned queue_settings(struct planner *pl, int iface, unsigned slot, const struct caad_queue *q,
                               pid_t kthread, const struct caad_decision *d)
{
	struct caad_cpumask m, none;
	enum caad_setting_kind kind;
	int cpu = d->steer_cpu;
	const char *reason = d->reason;

	unsigned off = pl->policy->disabled_mechanisms;

	if (!queue_kind(pl, slot, q, kthread, cpu, &kind))
		return 0; /* (no owner's: drop_settingless()) */

	/* with RPS switched off (Mechanisms=) caad does not touch rps_cpus at all */
	bool rps = q->has_rps && !(off & (1u << CAAD_SETTING_RPS_CPUS));
	/* a torn kthread goes back to the host, once: an earlier plan may
	 * have moved it, and it would poll these queues there for good */
	bool back = kthread > 0 && bit_test(pl->kthread_back, slot);

	if (!pl->plan->settings) /* counting */
		return (kind == CAAD_SETTING_RPS_CPUS ? rps : 1u + rps) + back + rfs_settings(pl, iface, q, d);

	caad_cpumask_zero(&m);
	caad_cpumask_set(&m, (unsigned)cpu);
	caad_cpumask_zero(&none);
	if (back) {
		char why[CAAD_REASON_MAX];

		snprintf(why, sizeof(why), "its NAPI kthread polls queues steered to other CPUs too: the host's own value "
		                           "goes back; %s", reason);
		add_setting(pl, CAAD_SETTING_KTHREAD_AFFINITY, iface, q, kthread, &none, why);
		pl->plan->settings[pl->plan->n_settings - 1].restore = true;
	}
	if (kind != CAAD_SETTING_RPS_CPUS)
		add_setting(pl, kind, iface, q, kthread, &m, reason);
	if (rps)
		add_setting(pl, CAAD_SETTING_RPS_CPUS, iface, q, 0, kind == CAAD_SETTING_RPS_CPUS ? &m : &none,
		            reason);
	return rfs_settings(pl, iface, q, d);
}

#define QUEUE_KINDS 4 /* a queue's kinds of setting: kthread, IRQ, RPS, RFS flow table */

/*
 * A queue no flow owns, with a flow left to the host's steering (d) on it:
 * what caad may have set there goes back to the host's value (the
 * actuator writes back what its journal holds, and nothing where it holds
 * nothing), whatever Mechanisms= says now.
 */
static unsigned restore_settings(struct planner *pl, int iface, unsigned slot, const struct caad_queue *q,
                                 pid_t kthread, const struct caad_decision *d)
{
	enum caad_setting_kind kinds[QUEUE_KINDS];
	struct caad_cpumask none;
	char reason[CAAD_REASON_MAX];
	unsigned n = 0;

	/* (once for a kthread that polls several of them) */
	if (kthread > 0 && bit_test(pl->kthread_back, slot))
		kinds[n++] = CAAD_SETTING_KTHREAD_AFFINITY;
	if (q->irq >= 0 && !q->irq_managed)
		kinds[n++] = CAAD_SETTING_IRQ_AFFINITY;
	if (q->has_rps)
		kinds[n++] = CAAD_SETTING_RPS_CPUS;
	if (q->has_rps_flow_cnt)
		kinds[n++] = CAAD_SETTING_RFS_FLOW_CNT;
	if (!pl->plan->settings)
		return n;
	snprintf(reason, sizeof(reason), "the host's own value goes back; %s", d->reason);
	caad_cpumask_zero(&none);
	for (unsigned i = 0; i < n; i++) {
		add_setting(pl, kinds[i], iface, q, kthread, &none, reason);
		pl->plan->settings[pl->plan->n_settings - 1].restore = true;
	}
	return 0;
}

/* Whether Mechanisms= allows anything on queue q (an ntuple rule moving a
 * flow there is of use only then). */
static bool queue_steerable(const struct planner *pl, unsigned slot, const struct caad_queue *q)
{
	unsigned off = pl->policy->disabled_mechanisms;

	/* (a threaded NAPI's IRQ moves no processing: queue_kind()) */
	return (q->napi_kthread > 0 && !(off & (1u << CAAD_SETTING_KTHREAD_AFFINITY))) ||
	       (q->napi_kthread <= 0 && irq_movable(pl, slot, q)) || (q->has_rps && !(off & (1u << CAAD_SETTING_RPS_CPUS)));
}

/* The global RFS table, when a queue got RFS and the table is smaller than
 * caad's size (0: RFS off). Not there (another network namespace than the
 * host's): nothing to do, the queues' reasons say so. */
static unsigned rfs_table_setting(struct planner *pl)
{
	const struct caad_iface *ifc;
	struct caad_setting *s;
	struct caad_cpumask none;
	char reason[CAAD_REASON_MAX];
	int pos;

	if (pl->rfs_iface < 0 || (pl->policy->disabled_mechanisms & (1u << CAAD_SETTING_RFS_TABLE)) ||
	    !pl->inv->has_rfs_table || pl->inv->rfs_table >= CAAD_RFS_TABLE_ENTRIES)
		return 0;
	if (!pl->plan->settings)
		return 1;
	ifc = &pl->inv->ifaces[pl->rfs_iface];
	pos = (unsigned)pl->rfs_queue < pl->ifs[pl->rfs_iface].n_qpos ? pl->ifs[pl->rfs_iface].qpos[pl->rfs_queue] : -1;
	assert(pos >= 0);
	snprintf(reason, sizeof(reason), "RFS needs the global socket flow table (%u entries now) for %s rx-%u",
	         pl->inv->rfs_table, ifc->name, pl->rfs_queue);
	caad_cpumask_zero(&none);
	add_setting(pl, CAAD_SETTING_RFS_TABLE, pl->rfs_iface, &ifc->rx[pos], 0, &none, reason);
	s = &pl->plan->settings[pl->plan->n_settings - 1];
	s->value = CAAD_RFS_TABLE_ENTRIES;
	return 0;
}

/* The 4-tuple the NIC sees of flow f; false when unknown. An IPv4 peer of a
 * dual-stack socket (::ffff:a.b.c.d) arrives as IPv4. */
static bool ntuple_flow_of(const struct caad_flow *f, struct caad_ntuple_flow *ret)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	*ret = (struct caad_ntuple_flow){ .family = f->family, .lport = f->lport, .rport = f->rport };
	if (f->family == AF_INET6 && memcmp(f->laddr, v4mapped, 12) == 0 && memcmp(f->raddr, v4mapped, 12) == 0) {
		ret->family = AF_INET;
		memcpy(ret->laddr, f->laddr + 12, 4);
		memcpy(ret->raddr, f->raddr + 12, 4);
	} else if (f->family == AF_INET || f->family == AF_INET6) {
		memcpy(ret->laddr, f->laddr, sizeof(ret->laddr));
		memcpy(ret->raddr, f->raddr, sizeof(ret->raddr));
	} else
		return false;
	return f->lport != 0 && f->rport != 0;
}

static int cmp_ntuple(const void *a, const void *b, void *userdata)
{
	const struct planner *pl = userdata;
	const struct caad_decision *x = &pl->plan->decisions[*(const uint32_t *)a];
	const struct caad_decision *y = &pl->plan->decisions[*(const uint32_t *)b];

	if (x->iface != y->iface)
		return x->iface < y->iface ? -1 : 1;
	if (x->queue != y->queue)
		return x->queue < y->queue ? -1 : 1;
	return (x->flow_id > y->flow_id) - (x->flow_id < y->flow_id);
}

/* An ntuple rule per flow that one moves (rule 6), in interface, queue and
 * flow id order (not the flows' order: the same flows give the same plan). */
static unsigned ntuple_settings(struct planner *pl)
{
	size_t n = 0;

	if (!pl->ntuple_on)
		return 0;
	/* ntuple_moves() is done with the candidates' array */
	for (size_t k = 0; k < pl->plan->n_decisions; k++)
		if (pl->plan->decisions[k].ntuple)
			pl->ntuple_cands[n++] = (uint32_t)k;
	if (!pl->plan->settings)
		return (unsigned)n;
	qsort_r(pl->ntuple_cands, n, sizeof(uint32_t), cmp_ntuple, pl);
	for (size_t i = 0; i < n; i++) {
		const struct caad_decision *d = &pl->plan->decisions[pl->ntuple_cands[i]];
		const struct caad_iface *ifc = &pl->inv->ifaces[d->iface];
		struct caad_setting *s;
		struct caad_cpumask none;
		char reason[CAAD_REASON_MAX];
		int pos;

		pos = pl->ifs[d->iface].qpos[d->queue];
		snprintf(reason, sizeof(reason), "ntuple rule to rx-%d: %s", d->queue, d->reason);
		caad_cpumask_zero(&none);
		add_setting(pl, CAAD_SETTING_NTUPLE_RULE, d->iface, &ifc->rx[pos], 0, &none, reason);
		s = &pl->plan->settings[pl->plan->n_settings - 1];
		s->flow_id = d->flow_id;
		(void)ntuple_flow_of(&pl->flows[d->flow], &s->rule);
	}
	return 0;
}

/* The queue a slot's settings follow: its own owner's, or (IFACE_WHOLE) the
 * interface's. -1: none. */
static int32_t slot_owner(const struct planner *pl, size_t iface, unsigned q)
{
	const struct iface_state *is = &pl->ifs[iface];

	return is->mode == IFACE_WHOLE ? pl->slots[is->base + pl->inv->ifaces[iface].n_rx].owner
	                               : pl->slots[is->base + q].owner;
}

static int cmp_torn(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/*
 * The flow left to the host's steering whose queue q of interface i goes
 * back to the host's values when no flow owns it (its own queue's, else
 * one of unknown queue, for every queue), -1; *ret_own: its own queue's
 * (the flow's NAPI kthread is then that queue's, not every queue's).
 */
static int32_t slot_host(const struct planner *pl, size_t i, unsigned q, bool *ret_own)
{
	const struct iface_state *is = &pl->ifs[i];

	*ret_own = pl->host[is->base + q] >= 0;
	return *ret_own ? pl->host[is->base + q] : pl->host[is->base + pl->inv->ifaces[i].n_rx];
}

/* The kthread wish of a queue given back to the host (restore_settings()):
 * no CPU, and unlike every owner's. */
#define KTHREAD_RESTORE (-1)

/*
 * A NAPI kthread that polls two queues whose owners want different CPUs
 * (a driver with fewer NAPIs than queues, or a flow whose packets an
 * ntuple rule moved, which still names its first queue's NAPI) cannot
 * follow both: moved to one, then the other, at every scan. Like a shared
 * IRQ, it is then no queue's to move: it goes back to the host, once
 * (kthread_back), and its queues take RPS (queue_kind(): their IRQs only
 * wake it). Queues of one target (an interface steered whole) share it.
 * A queue given back to the host wishes the host's value for its kthread:
 * beside a steered queue, the actuator would write the original back over
 * caad's value at every scan; so the kthread is torn then too, and goes
 * back to the host while the steered queue takes RPS.
 */
static int mark_torn_kthreads(struct planner *pl)
{
	int64_t (*kt)[3] = malloc((pl->n_slots ? pl->n_slots : 1) * sizeof(*kt)); /* pid, cpu, slot */
	size_t n = 0;

	if (!kt)
		return -ENOMEM;
	memset(pl->kthread_torn, 0, (pl->n_slots / 64 + 1) * sizeof(uint64_t));
	memset(pl->kthread_back, 0, (pl->n_slots / 64 + 1) * sizeof(uint64_t));
	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		const struct caad_iface *ifc = &pl->inv->ifaces[i];

		for (unsigned q = 0; q < ifc->n_rx; q++) {
			int32_t o = slot_owner(pl, i, q), h;
			const struct caad_decision *d = o >= 0 ? &pl->plan->decisions[o] : NULL;
			pid_t pid = d ? queue_kthread(ifc, &ifc->rx[q], &pl->flows[d->flow]) : 0;
			int64_t wish = d ? d->steer_cpu : KTHREAD_RESTORE;
			bool own;

			/* as emit_settings() asks restore_settings() for it */
			if (!d && (h = slot_host(pl, i, q, &own)) >= 0)
				pid = queue_kthread(ifc, &ifc->rx[q], &pl->flows[pl->plan->decisions[h].flow]);
			if (pid > 0) {
				kt[n][0] = pid;
				kt[n][1] = wish;
				kt[n][2] = pl->ifs[i].base + q;
				n++;
			}
		}
	}
	qsort(kt, n, sizeof(*kt), cmp_torn);
	for (size_t j = 0, end; j < n; j = end) {
		bool torn = false, host = kt[j][1] == KTHREAD_RESTORE;
		int64_t first = INT64_MAX;

		for (end = j + 1; end < n && kt[end][0] == kt[j][0]; end++) {
			torn = torn || kt[end][1] != kt[j][1];
			host = host || kt[end][1] == KTHREAD_RESTORE;
		}
		for (size_t k = j; torn && k < end; k++)
			bit_set(pl->kthread_torn, (size_t)kt[k][2]);
		/* given back by the first queue of the host's (restore_settings()),
		 * else, torn, by the first of its steered queues that has a
		 * setting (one that has none gets none: drop_settingless()) */
		for (size_t k = j; host && k < end; k++)
			if (kt[k][1] == KTHREAD_RESTORE)
				first = MIN(first, kt[k][2]);
		for (size_t k = j; torn && !host && k < end; k++) {
			unsigned slot = (unsigned)kt[k][2];
			size_t i = (size_t)pl->slots[slot].iface;
			enum caad_setting_kind kind;

			if (kt[k][2] < first &&
			    queue_kind(pl, slot, &pl->inv->ifaces[i].rx[slot - pl->ifs[i].base], (pid_t)kt[k][0],
			               (int)kt[k][1], &kind))
				first = kt[k][2];
		}
		if (first != INT64_MAX)
			bit_set(pl->kthread_back, (size_t)first);
	}
	free(kt);
	return 0;
}

/* The NAPI kthread that polls queue q of interface i for its owner d, 0:
 * none (queue_kind() asks whether it is torn: mark_torn_kthreads()). */
static pid_t owner_kthread(const struct planner *pl, size_t i, unsigned q, const struct caad_decision *d)
{
	const struct caad_iface *ifc = &pl->inv->ifaces[i];

	return queue_kthread(ifc, &ifc->rx[q], &pl->flows[d->flow]);
}

/* Why queue q of interface i has nothing caad may set for its owner d's
 * CPU (queue_kind() found none), mechanism by mechanism. */
static void settingless_text(const struct planner *pl, size_t i, unsigned q, const struct caad_decision *d, char *buf,
                             size_t size)
{
	const struct caad_iface *ifc = &pl->inv->ifaces[i];
	const struct caad_queue *rx = &ifc->rx[q];
	unsigned off = pl->policy->disabled_mechanisms, slot = pl->ifs[i].base + q;
	const char *kt, *irq, *rps;
	char vectors[64];

	if (queue_kthread(ifc, rx, &pl->flows[d->flow]) <= 0)
		kt = "no NAPI kthread";
	else if (off & (1u << CAAD_SETTING_KTHREAD_AFFINITY))
		kt = "Mechanisms= allows no kthread";
	else
		kt = "its NAPI kthread polls a queue steered elsewhere, or given back to the host, too";
	if (queue_kthread(ifc, rx, &pl->flows[d->flow]) > 0)
		irq = "its IRQ only wakes the kthread";
	else if (rx->irq < 0)
		irq = "no IRQ";
	else if (rx->irq_managed)
		irq = "a kernel-managed IRQ";
	else if (bit_test(pl->irq_shared, slot))
		irq = "an IRQ that serves other rx queues too";
	else if (off & (1u << CAAD_SETTING_IRQ_AFFINITY))
		irq = "Mechanisms= allows no IRQ";
	else {
		snprintf(vectors, sizeof(vectors), "no IRQ vectors left on CPU %d", d->steer_cpu);
		irq = vectors;
	}
	rps = off & (1u << CAAD_SETTING_RPS_CPUS) ? "Mechanisms= allows no RPS" : "no RPS";
	snprintf(buf, size, "%s, %s, %s", kt, irq, rps);
}

/* Decision d, steered by a setting its queue cannot have, is left alone. */
static void unsteer(const struct planner *pl, struct caad_decision *d, const char *reason)
{
	d->steer_cpu = d->anchor_cpu = -1;
	d->relation = CAAD_RELATION_UNSTEERED;
	d->held = d->shares_queue = d->closed_loop = false;
	d->since_ns = 0;
	d->reason = reason;
	d->considered = "";
	if (d->ntuple) { /* a rule to a queue that moves nothing is no use */
		d->ntuple = false;
		d->queue = own_queue(pl, d);
	}
}

/* The slot whose owner's setting steers decision k, which shares it. */
static unsigned shared_slot(const struct planner *pl, uint32_t k)
{
	const struct caad_decision *d = &pl->plan->decisions[k];
	const struct iface_state *is = &pl->ifs[d->iface];

	/* an interface steered whole: its owner's, a flow's rule or not */
	if (is->mode == IFACE_WHOLE)
		return is->base + pl->inv->ifaces[d->iface].n_rx;
	if (d->ntuple) /* moved there by a rule */
		return is->base + (unsigned)is->qpos[d->queue];
	return (unsigned)pl->hv[k].slot;
}

/*
 * An owner placed on a queue that has nothing caad may set for its CPU:
 * queue_steerable() let the queue be owned, but its NAPI kthread is torn
 * (mark_torn_kthreads()) or its IRQ may not go to that CPU (irq_banned:
 * no vectors left), and Mechanisms= allows nothing else there. The plan
 * would write nothing while the decision, and the FlowSteered signal,
 * said steered: the owner is left alone as collect() leaves a flow of a
 * queue with nothing caad may set, and so are the flows its queue's
 * setting steered (sharing it, or moved there by an ntuple rule). An owner
 * of every queue is so only when no queue of its interface has anything.
 * The queue has no owner then: left as it is, or given back to a flow
 * left to the host there (whose kthread mark_torn_kthreads() is asked
 * about again). The load the owner counted while the others were placed
 * stays counted. Returns 1 when an owner was dropped, 0 when none was, or
 * -ENOMEM.
 */
static int drop_settingless(struct planner *pl)
{
	_cleanup_free_ const char **why = calloc(pl->n_slots ? pl->n_slots : 1, sizeof(*why)); /* per slot */
	/* per queue slot of an interface steered whole, a bit: its queue has
	 * no setting for the whole owner's CPU, so a flow known to be on it
	 * is not served (the owner, who may arrive on any queue, is) */
	_cleanup_free_ uint64_t *queue_none = calloc(pl->n_slots / 64 + 1, sizeof(uint64_t));
	char text[CAAD_REASON_MAX];
	bool dropped = false;

	if (!why || !queue_none)
		return -ENOMEM;
	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		const struct caad_iface *ifc = &pl->inv->ifaces[i];
		const struct iface_state *is = &pl->ifs[i];
		unsigned whole = is->base + ifc->n_rx;
		enum caad_setting_kind kind;

		if (is->mode == IFACE_WHOLE && pl->slots[whole].owner >= 0) {
			const struct caad_decision *d = &pl->plan->decisions[pl->slots[whole].owner];
			bool any = false;

			for (unsigned q = 0; q < ifc->n_rx; q++) {
				if (queue_kind(pl, is->base + q, &ifc->rx[q], owner_kthread(pl, i, q, d), d->steer_cpu,
				               &kind))
					any = true;
				else
					bit_set(queue_none, is->base + q);
			}
			if (any) {
				dropped = true; /* (its flows on a queue without one, if any) */
				continue;
			}
			settingless_text(pl, i, 0, d, text, sizeof(text));
			why[whole] = arena_printf(pl->plan,
			                          "no rx queue of its interface has anything caad may set for CPU %d "
			                          "(rx-%u: %s)",
			                          d->steer_cpu, ifc->rx[0].index, text);
			if (!why[whole])
				return -ENOMEM;
			dropped = true;
			continue;
		}
		for (unsigned q = 0; is->mode == IFACE_QUEUES && q < ifc->n_rx; q++) {
			int32_t o = pl->slots[is->base + q].owner;
			const struct caad_decision *d = o >= 0 ? &pl->plan->decisions[o] : NULL;

			if (!d || queue_kind(pl, is->base + q, &ifc->rx[q], owner_kthread(pl, i, q, d), d->steer_cpu, &kind))
				continue;
			settingless_text(pl, i, q, d, text, sizeof(text));
			why[is->base + q] = arena_printf(pl->plan, "its rx queue has nothing caad may set for CPU %d: %s",
			                                 d->steer_cpu, text);
			if (!why[is->base + q])
				return -ENOMEM;
			dropped = true;
		}
	}
	if (!dropped)
		return 0;
	/* (a round again only where an owner went: a flow that shared a
	 * queue wishes nothing of a kthread) */
	bool owner_gone = false;
	for (size_t k = 0; k < pl->plan->n_decisions; k++) {
		struct caad_decision *d = &pl->plan->decisions[k];
		const struct iface_state *is = &pl->ifs[d->iface];
		int pos = queue_pos(is, d->queue);
		const char *w;

		if (d->steer_cpu < 0 || !d->shares_queue)
			continue;
		w = why[shared_slot(pl, (uint32_t)k)];
		if (!w && is->mode == IFACE_WHOLE && pos >= 0 && bit_test(queue_none, is->base + (unsigned)pos)) {
			unsigned q = (unsigned)pos, whole = is->base + pl->inv->ifaces[d->iface].n_rx;

			settingless_text(pl, d->iface, q, &pl->plan->decisions[pl->slots[whole].owner], text,
			                 sizeof(text));
			w = arena_printf(pl->plan,
			                 "its rx queue has nothing caad may set for CPU %d, where the flow that owns its "
			                 "interface is steered: %s",
			                 d->steer_cpu, text);
			if (!w)
				return -ENOMEM;
		}
		if (w)
			unsteer(pl, d, w);
	}
	for (unsigned s = 0; s < pl->n_slots; s++)
		if (why[s]) {
			unsteer(pl, &pl->plan->decisions[pl->slots[s].owner], why[s]);
			pl->slots[s].owner = -1;
			owner_gone = true;
		}
	return owner_gone;
}

/* Settings in interface and queue order, then RFS's global table, then the
 * ntuple rules. Called twice: to count (settings NULL), then to fill. */
static size_t emit_settings(struct planner *pl)
{
	size_t n = 0;

	pl->rfs_iface = -1;
	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		const struct caad_iface *ifc = &pl->inv->ifaces[i];
		const struct iface_state *is = &pl->ifs[i];

		for (unsigned q = 0; q < ifc->n_rx; q++) {
			int32_t o = slot_owner(pl, i, q), h;
			const struct caad_decision *d;
			bool own;

			if (o < 0 && (h = slot_host(pl, i, q, &own)) >= 0) {
				d = &pl->plan->decisions[h];
				/* a flow of unknown queue: its NAPI's kthread, which an
				 * earlier plan may have moved for it (on veth, found
				 * through the flow), goes back too */
				n += restore_settings(pl, (int)i, is->base + q, &ifc->rx[q],
				                      queue_kthread(ifc, &ifc->rx[q], &pl->flows[d->flow]), d);
				continue;
			}
			if (o < 0)
				continue; /* no heavy flow: left as it is */
			d = &pl->plan->decisions[o];
			n += queue_settings(pl, (int)i, is->base + q, &ifc->rx[q], owner_kthread(pl, i, q, d), d);
		}
	}
	n += rfs_table_setting(pl);
	n += ntuple_settings(pl);
	return n;
}

/* ---- the whole --------------------------------------------------------- */

/*
 * A flow steered by the previous plan, now below half the threshold: kept
 * heavy while the dip is younger than DwellMSec= (a reader starved for a
 * moment, a sender between files), so that its steering does not come and
 * go with it. When it began: low_since_ns(pd, now).
 */
static inline uint64_t low_since(const struct caad_decision *pd, uint64_t now_ns)
{
	return pd && pd->low_since_ns ? pd->low_since_ns : now_ns;
}

/* pd placed its flow itself: steered to a CPU of its own queue's setting, or
 * left to the host's steering by the closed loop (not a follower). */
static inline bool placed(const struct caad_decision *pd)
{
	return pd && (pd->steer_cpu >= 0 || pd->host) && !pd->shares_queue;
}

static inline bool dip_held(const struct caad_policy *policy, const struct caad_decision *pd, uint64_t now_ns)
{
	if (!placed(pd) || policy->dwell_ms == 0)
		return false;
	return now_ns - MIN(low_since(pd, now_ns), now_ns) < (uint64_t)policy->dwell_ms * NSEC_PER_MSEC;
}

/*
 * Heavy: fast and old enough (first_ns 0: age unknown, old); with a
 * target of its own in the previous plan, fast down to half the threshold,
 * and below that for a dip shorter than DwellMSec= (dip_held()).
 * Returns NULL when heavy, else what it lacks.
 */
static inline const char *light(const struct caad_flow *f, const struct caad_policy *policy,
                                const struct caad_decision *pd, uint64_t now_ns)
{
	uint64_t min_age = (uint64_t)policy->min_age_ms * NSEC_PER_MSEC;
	bool steered = placed(pd);

	if (f->rate_bps < caad_policy_half_threshold(policy) && !dip_held(policy, pd, now_ns))
		return "rate";
	if (f->first_ns > 0 && (now_ns < f->first_ns || now_ns - f->first_ns < min_age))
		return "age";
	if (f->rate_bps < policy->rate_threshold_bps && !steered)
		return "rate";
	return NULL;
}

const char *caad_plan_light_reason(const struct caad_flow *f, const struct caad_policy *policy,
                                   const struct caad_plan *prev, uint64_t now_ns, char *buf, size_t size)
{
	const char *what = light(f, policy, caad_plan_find(prev, f->id), now_ns);
	char rate[32], thr[32];

	if (!what)
		return NULL;
	if (streq(what, "age"))
		snprintf(buf, size, "too young: seen for %llu ms, MinAgeMSec=%u",
		         (unsigned long long)((now_ns > f->first_ns ? now_ns - f->first_ns : 0) / NSEC_PER_MSEC),
		         policy->min_age_ms);
	else
		snprintf(buf, size, "light: %s, below RateThreshold=%s%s", fmt_rate(f->rate_bps, rate, sizeof(rate)),
		         fmt_rate(policy->rate_threshold_bps, thr, sizeof(thr)),
		         f->rate_bps >= caad_policy_half_threshold(policy) ? " (half of it keeps a steered flow heavy)" : "");
	return buf;
}

/*
 * The window of f's consumer as collect() counts it among the readers
 * (keep_consumer_free()): a flow it plans for, anchored where prev's
 * target was chosen (prev's decision is taken for a managed interface's),
 * else one at RateThreshold= or faster. false: it counts none.
 */
static bool reader_window(const struct caad_topology *t, const struct caad_flow *f, const struct caad_policy *policy,
                          const struct caad_plan *prev, uint64_t now_ns, struct consumer *ret)
{
	const struct caad_decision *pd = caad_plan_find(prev, f->id);

	if (f->rate_bps < caad_policy_half_threshold(policy) && !dip_held(policy, pd, now_ns))
		return false;
	if (!light(f, policy, pd, now_ns)) {
		consumer_of_anchored(t, f, pd && pd->steer_cpu >= 0 ? pd->anchor_cpu : -1, ret);
		return true;
	}
	if (f->rate_bps < policy->rate_threshold_bps)
		return false;
	consumer_of(t, f, ret);
	return true;
}

void caad_plan_count_readers(const struct caad_topology *t, const struct caad_flow *flows, size_t n_flows,
                             const struct caad_policy *policy, const struct caad_plan *prev, uint64_t now_ns,
                             uint8_t *counts)
{
	memset(counts, 0, t->n_cpus);
	for (size_t i = 0; i < n_flows; i++) {
		struct consumer cs;

		if (!reader_window(t, &flows[i], policy, prev, now_ns, &cs))
			continue;
		for (unsigned j = 0; j < cs.n_cpus; j++)
			if (counts[cs.cpus[j]] < UINT8_MAX)
				counts[cs.cpus[j]]++;
	}
}

bool caad_plan_reads_on(const struct caad_topology *t, const struct caad_flow *f, const struct caad_policy *policy,
                        const struct caad_plan *prev, uint64_t now_ns, int cpu)
{
	struct consumer cs;

	if (!reader_window(t, f, policy, prev, now_ns, &cs))
		return false;
	for (unsigned j = 0; j < cs.n_cpus; j++)
		if (cs.cpus[j] == cpu)
			return true;
	return false;
}

void caad_plan_own_cpus(const struct caad_cpumask *base, const struct caad_flow *flows, size_t n_flows,
                        uint64_t threshold_bps, const struct caad_plan *plan, struct caad_cpumask *ret)
{
	struct caad_cpumask readers, targets, off_readers;

	caad_cpumask_zero(&readers);
	caad_cpumask_zero(&targets);
	for (size_t i = 0; i < n_flows; i++)
		if (flows[i].rate_bps >= threshold_bps && flows[i].consumer_cpu >= 0 &&
		    flows[i].consumer_cpu < CAAD_CPUS_MAX)
			caad_cpumask_set(&readers, (unsigned)flows[i].consumer_cpu);
	for (size_t k = 0; plan && k < plan->n_decisions; k++)
		if (plan->decisions[k].steer_cpu >= 0 && plan->decisions[k].steer_cpu < CAAD_CPUS_MAX)
			caad_cpumask_set(&targets, (unsigned)plan->decisions[k].steer_cpu);
	caad_cpumask_andnot(&off_readers, base, &readers);
	caad_cpumask_andnot(ret, &off_readers, &targets);
	if (caad_cpumask_empty(ret))
		*ret = caad_cpumask_empty(&off_readers) ? *base : off_readers;
}

/* Heavy flow k (of this rate and id, the latest seen) becomes the fastest
 * of a group if it is faster than the fastest so far. */
/*
 * The rate a flow bids for its queue with (rule 6: the fastest owns it).
 * The one that owned it in the previous plan bids a quarter more: two
 * flows of about the same rate would otherwise take the queue from each
 * other, and move its IRQ, at every scan their rates cross (rule 7). An
 * owner that has had its target for less than DwellMSec= keeps the queue
 * whatever the others' rates: taking the queue moves its processing as
 * much as moving the flow would.
 */
#define OWNER_MARGIN_DIV 4
static inline uint64_t owner_rate(const struct planner *pl, const struct caad_flow *f,
                                  const struct caad_decision *pd, int queue)
{
	uint64_t r = f->rate_bps;

	/* (queue -1: the whole interface, which a flow of unknown queue owns) */
	if (pd && pd->steer_cpu >= 0 && !pd->shares_queue && pd->queue == queue) {
		if (pl->now_ns - MIN(pd->since_ns, pl->now_ns) < (uint64_t)pl->policy->dwell_ms * NSEC_PER_MSEC)
			return UINT64_MAX;
		r = r + r / OWNER_MARGIN_DIV < r ? UINT64_MAX : r + r / OWNER_MARGIN_DIV;
	}
	return r;
}

static inline void offer(int32_t *best, struct key *best_key, uint32_t k, uint64_t rate, uint64_t id)
{
	if (*best < 0 || before_key(rate, id, best_key)) {
		*best = (int32_t)k;
		*best_key = (struct key){ .rate = rate, .id = id };
	}
}

static inline const struct caad_decision *prev_at(const struct caad_plan *p, size_t i)
{
	return &p->decisions[p->by_id ? p->by_id[i] : i];
}

/*
 * The previous plan's decision for flow id, or NULL. The daemon's flows
 * come in id order, as the previous plan's decisions are (by_id otherwise):
 * a cursor that gallops forward from the last id found costs O(1) a flow
 * and reads the previous plan in order, where a binary search per flow
 * (caad_plan_find) took 20 cache misses each at a million flows. An id
 * below the last one starts over from the beginning.
 */
static const struct caad_decision *prev_find(struct planner *pl, uint64_t id)
{
	const struct caad_plan *p = pl->prev;
	size_t lo, hi, step = 1, n;

	if (!p || p->n_decisions == 0)
		return NULL;
	n = p->n_decisions;
	if (id < pl->prev_last_id)
		pl->prev_pos = 0;
	pl->prev_last_id = id;

	/* gallop: the first of lo + 1, 2, 4, ... at or past id bounds it */
	lo = pl->prev_pos;
	hi = lo;
	while (hi < n && prev_at(p, hi)->flow_id < id) {
		lo = hi + 1;
		hi += step;
		step *= 2;
	}
	if (hi > n)
		hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (prev_at(p, mid)->flow_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	pl->prev_pos = lo;
	return lo < n && prev_at(p, lo)->flow_id == id ? prev_at(p, lo) : NULL;
}

/* Heavy flow k of slot, counted (for group_members()) and bidding for it. */
static inline void tally_add(struct planner *pl, unsigned slot, uint32_t k)
{
	const struct caad_decision *d = &pl->plan->decisions[k];
	const struct caad_flow *f = &pl->flows[d->flow];
	struct slot_tally *ta = &pl->tally[slot];

	ta->n++;
	if (__builtin_add_overflow(ta->rate, f->rate_bps, &ta->rate))
		ta->rate = UINT64_MAX;
	offer(&ta->best, &ta->best_key, k, owner_rate(pl, f, pl->hv[k].pd, d->queue), f->id);
}

/*
 * collect(): heavy flow k is left to the host's steering (the closed
 * loop's hands-off placement, o): it bids for no queue, and its queue
 * (slot; every queue of its interface when it is unknown) goes back to
 * the host's values where no other flow's steering takes it
 * (emit_settings()).
 */
static int leave_to_host(struct planner *pl, uint32_t k, unsigned slot, const struct caad_override *o)
{
	struct caad_decision *d = &pl->plan->decisions[k];
	const struct caad_flow *f = &pl->flows[d->flow];
	int32_t h = pl->host[slot];
	char name[48];

	d->host = d->closed_loop = true;
	d->relation = CAAD_RELATION_HOST_STEERING;
	consumer_name(f, name, sizeof(name));
	d->reason = arena_printf(pl->plan,
	                         "consumer on CPU %d%s%s%s: left to the host's own steering (its queue as caad found "
	                         "it): %s",
	                         d->consumer_cpu, name[0] ? " (" : "", name, name[0] ? ")" : "",
	                         o->why ?: "closed-loop placement");
	if (!d->reason)
		return -ENOMEM;
	if (h < 0 || before(pl, k, (uint32_t)h))
		pl->host[slot] = (int32_t)k;
	pl->n_host++;
	return 0;
}

/*
 * A flow left to the host's steering holds its queue against slower flows,
 * as an owner would (rule 6: the fastest owns a queue): collect()'s heavy
 * flows that would take it, slower ones of its queue (of any queue of its
 * interface, where its own queue is unknown; of unknown queue, where it is
 * on any of them), are left alone, and the queues' tallies are made again
 * without them. A faster flow still takes the queue.
 */
static int yield_to_host(struct planner *pl)
{
	_cleanup_free_ int32_t *fastest = malloc((pl->inv->n_ifaces ? pl->inv->n_ifaces : 1) * sizeof(int32_t));
	struct caad_plan *plan = pl->plan;

	if (!fastest)
		return -ENOMEM;
	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		unsigned base = pl->ifs[i].base;

		fastest[i] = -1;
		for (unsigned s = base; s <= base + pl->inv->ifaces[i].n_rx; s++)
			if (pl->host[s] >= 0 && (fastest[i] < 0 || before(pl, (uint32_t)pl->host[s], (uint32_t)fastest[i])))
				fastest[i] = pl->host[s];
	}
	for (unsigned s = 0; s < pl->n_slots; s++)
		pl->tally[s] = (struct slot_tally){ .best = -1 };
	for (size_t k = 0; k < plan->n_decisions; k++) {
		struct caad_decision *d = &plan->decisions[k];
		int32_t slot = pl->hv[k].slot, h;
		unsigned whole;

		if (slot < 0)
			continue;
		whole = pl->ifs[d->iface].base + pl->inv->ifaces[d->iface].n_rx;
		h = (unsigned)slot == whole ? fastest[d->iface] : pl->host[slot];
		if ((unsigned)slot != whole && pl->host[whole] >= 0 &&
		    (h < 0 || before(pl, (uint32_t)pl->host[whole], (uint32_t)h)))
			h = pl->host[whole];
		if (h >= 0 && before(pl, (uint32_t)h, (uint32_t)k)) {
			const struct caad_decision *hd = &plan->decisions[h];
			char name[48];

			consumer_name(&pl->flows[hd->flow], name, sizeof(name));
			pl->hv[k].slot = -1;
			d->considered = "";
			d->reason = arena_printf(plan,
			                         "left alone: its rx queue is left to the host's own steering for a faster "
			                         "flow (%s%sconsumer on CPU %d), which the closed loop placed so",
			                         name, name[0] ? ", " : "", hd->consumer_cpu);
			if (!d->reason)
				return -ENOMEM;
			continue;
		}
		tally_add(pl, (unsigned)slot, (uint32_t)k);
	}
	return 0;
}

/*
 * Consumers' cores are kept free of steered processing: every CPU the
 * consumer of flow i (cs, or its window unanchored) read on within the
 * window, and their cores. A flow caad does not steer (on an interface it
 * does not manage, or not MinAgeMSec= old yet) keeps them free too when it
 * is as fast as a heavy one: its reader would share its core with another
 * flow's processing.
 */
static void keep_consumer_free(struct planner *pl, size_t i, const struct consumer *cs)
{
	const struct caad_flow *f = &pl->flows[i];
	struct consumer own;

	if (!cs) {
		if (f->rate_bps < pl->policy->rate_threshold_bps)
			return;
		consumer_of(pl->topo, f, &own);
		cs = &own;
	}
	for (unsigned j = 0; j < cs->n_cpus; j++) {
		int core = pl->topo->cpus[cs->cpus[j]].core;

		if (pl->cpu_consumer[cs->cpus[j]] < UINT8_MAX)
			pl->cpu_consumer[cs->cpus[j]]++;
		offer(&pl->core_consumer[core], &pl->core_consumer_key[core], (uint32_t)i, f->rate_bps, f->id);
	}
}

/* Pass 1: the heavy flows, each in a slot (or decided at once). */
static int collect(struct planner *pl, size_t n_flows)
{
	const struct caad_topology *t = pl->topo;
	uint64_t half = caad_policy_half_threshold(pl->policy);
	struct caad_plan *plan = pl->plan;
	uint64_t last_id = 0;

	pl->ids_sorted = true;

	for (size_t i = 0; i < n_flows; i++) {
		const struct caad_flow *f = &pl->flows[i];
		const struct caad_decision *pd;
		struct caad_decision *d;
		struct consumer cs;
		int iface, c, rxq = f->rx_queue;
		bool lower = false;
		uint32_t k;

		/* most flows: the cheapest test first (a previous plan, if any,
		 * is looked at in order, for a steered flow in a dip) */
		pd = NULL;
		if (f->rate_bps < half && (!pl->prev || !dip_held(pl->policy, pd = prev_find(pl, f->id), pl->now_ns)))
			continue;
		iface = find_iface(pl, f->ifindex);
		if (iface < 0 && (iface = find_iface_by_napi(pl, f->napi_id, &rxq)) >= 0)
			lower = true;
		if (iface < 0) {
			keep_consumer_free(pl, i, NULL);
			continue;
		}
		if (!pd)
			pd = prev_find(pl, f->id);
		if (light(f, pl->policy, pd, pl->now_ns)) {
			keep_consumer_free(pl, i, NULL);
			continue;
		}

		k = (uint32_t)plan->n_decisions++;
		d = &plan->decisions[k];
		consumer_of_anchored(t, f, pd && pd->steer_cpu >= 0 ? pd->anchor_cpu : -1, &cs);
		c = cs.home;
		*d = (struct caad_decision){
			.flow = (uint32_t)i,
			.flow_id = f->id,
			.iface = (int16_t)iface,
			.queue = -1,
			.consumer_cpu = c,
			.steer_cpu = -1,
			.anchor_cpu = -1,
			.relation = CAAD_RELATION_UNSTEERED,
			.considered = "",
			.low_since_ns = f->rate_bps < half ? low_since(pd, pl->now_ns) : 0,
		};
		pl->hv[k] = (struct heavy){ .slot = -1, .cpu = c, .pd = pd, .lower = lower };
		if (f->id < last_id)
			pl->ids_sorted = false;
		last_id = f->id;

		const struct caad_iface *ifc = &pl->inv->ifaces[iface];
		const struct iface_state *is = &pl->ifs[iface];
		if (c < 0) {
			d->reason = "consumer CPU unknown (not read yet, or not in the topology)";
			continue;
		}

		keep_consumer_free(pl, i, &cs);

		if (ifc->n_rx == 0) {
			d->reason = "no rx queue to steer on its interface";
			continue;
		}

		unsigned slot = is->base + ifc->n_rx;
		int pos = queue_pos(is, rxq);
		if (pos >= 0) {
			slot = is->base + (unsigned)pos;
			d->queue = rxq;
		} else if (rxq >= 0) {
			/* a queue the inventory does not hold yet (more queues
			 * since it was read, e.g. ethtool -L): on "every queue",
			 * it would take the interface from the queues' owners
			 * for a queue caad cannot set */
			d->reason = arena_printf(plan,
			                         "its rx queue %d is not in the inventory yet: left alone until the "
			                         "queues are read again",
			                         rxq);
			if (!d->reason)
				return -ENOMEM;
			continue;
		}
		if (pl->policy->n_overrides) {
			const struct caad_override *o = find_override(pl, f->id);

			if (o && o->cpu == CAAD_OVERRIDE_HOST) {
				int r = leave_to_host(pl, k, slot, o);
				if (r < 0)
					return r;
				continue;
			}
		}
		if (pl->ntuple_on && ifc->ntuple && pl->prev)
			ntuple_keep(pl, d, pl->hv[k].pd, &slot);
		/* a queue with nothing caad may set (no movable IRQ, no RPS, no
		 * NAPI kthread, or Mechanisms= allows none): a target would be
		 * a decision without a setting */
		if (bit_test(pl->unsteerable, slot)) {
			d->reason = d->queue >= 0 ? "its rx queue has nothing caad may set: no movable IRQ, no RPS and no NAPI "
			                            "kthread (or Mechanisms= allows none of those there)"
			                          : "no rx queue of its interface has anything caad may set: no movable IRQ, no "
			                            "RPS and no NAPI kthread (or Mechanisms= allows none of those there)";
			continue;
		}
		pl->hv[k].slot = (int32_t)slot;
		tally_add(pl, slot, k);

		/* Until it is placed or follows an owner, its texts are those of
		 * its consumer CPU having no candidate: most flows of a host with
		 * very many heavy ones keep them, and are not looked at again. */
		if (!pl->fail_text[c]) {
			pl->fail_text[c] = (struct fail_text *)arena_alloc(plan, sizeof(struct fail_text));
			if (!pl->fail_text[c])
				return -ENOMEM;
		}
		d->reason = pl->fail_text[c]->reason;
		d->considered = pl->fail_text[c]->considered;
	}
	if (pl->n_host) {
		int r = yield_to_host(pl);
		if (r < 0)
			return r;
	}
	for (unsigned s = 0; s < pl->n_slots; s++) {
		pl->slots[s].best = pl->tally[s].best;
		pl->slots[s].best_key = pl->tally[s].best_key;
		pl->slots[s].end = pl->tally[s].n;
		pl->slots[s].rate = pl->tally[s].rate;
	}
	return 0;
}

/*
 * The heavy flows of each slot that could own it, contiguous (a counting
 * sort by slot): only next_of_slot() looks at them, and it passes over
 * flows whose consumer CPU has no candidate, so they are left out.
 */
static int group_members(struct planner *pl)
{
	size_t n = pl->plan->n_decisions;
	uint32_t pos = 0;

	/* collect() counted each slot's flows in end: room for all of them */
	pl->members = room(pl->scratch ? &pl->scratch->members : NULL, n, sizeof(*pl->members));
	if (!pl->members)
		return -ENOMEM;
	for (unsigned s = 0; s < pl->n_slots; s++) {
		uint32_t count = pl->slots[s].end;

		pl->slots[s].first = pl->slots[s].end = pos;
		pos += count;
	}
	for (size_t k = 0; k < n; k++)
		if (pl->hv[k].slot >= 0 && !pl->fail_reason[pl->hv[k].cpu])
			pl->members[pl->slots[pl->hv[k].slot].end++] = (struct member){
				.k = (uint32_t)k,
				.cpu = pl->hv[k].cpu,
				.rate = pl->flows[pl->plan->decisions[k].flow].rate_bps,
			};
	return 0;
}

int caad_plan_compute(const struct caad_topology *topo, const struct caad_inventory *inv,
                      const struct caad_flow *flows, size_t n_flows, const struct caad_policy *policy,
                      const struct caad_plan *prev, uint64_t now_ns, struct caad_plan **ret)
{
	return caad_plan_compute_with(NULL, topo, inv, flows, n_flows, policy, prev, now_ns, ret);
}

int caad_plan_compute_with(struct caad_plan_scratch *scratch, const struct caad_topology *topo,
                           const struct caad_inventory *inv, const struct caad_flow *flows, size_t n_flows,
                           const struct caad_policy *policy, const struct caad_plan *prev, uint64_t now_ns,
                           struct caad_plan **ret)
{
	_cleanup_(caad_plan_freep) struct caad_plan *plan = NULL;
	struct planner pl = {
		.topo = topo, .inv = inv, .flows = flows, .policy = policy, .prev = prev, .now_ns = now_ns,
		.last_ifindex = -1, .scratch = scratch,
	};
	size_t n_settings;
	int r;

	assert(topo && inv && policy && ret);
	assert(flows || n_flows == 0);

	/* a decision keeps the flow's index in 32 bits, the interface's in 16 */
	if (n_flows >= INT32_MAX || inv->n_ifaces > INT16_MAX)
		return -E2BIG;
	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	plan->now_ns = now_ns;
	pl.plan = plan;

	/* Sized for every flow being heavy; only what is used is touched, and
	 * the rest is given back below. */
	plan->decisions = decisions_room(scratch, n_flows, &plan->decisions_cap);
	pl.hv = room(scratch ? &scratch->hv : NULL, n_flows, sizeof(*pl.hv));
	pl.tried = room(scratch ? &scratch->tried : NULL, n_flows / 64 + 1, sizeof(uint64_t));
	if (!plan->decisions || !pl.hv || !pl.tried) {
		r = -ENOMEM;
		goto finish;
	}
	memset(pl.tried, 0, (n_flows / 64 + 1) * sizeof(uint64_t));

	r = build_tables(&pl);
	if (r >= 0)
		r = build_ifaces(&pl);
	if (r < 0)
		goto finish;

	pl.round = malloc((pl.n_slots ? pl.n_slots : 1) * sizeof(struct cand));
	pl.next_round = malloc((pl.n_slots ? pl.n_slots : 1) * sizeof(struct cand));
	if (!pl.round || !pl.next_round) {
		r = -ENOMEM;
		goto finish;
	}

	/* rule 6's ntuple rules: only for interfaces that take them */
	for (size_t i = 0; i < inv->n_ifaces && !(policy->disabled_mechanisms & (1u << CAAD_SETTING_NTUPLE_RULE)); i++)
		pl.ntuple_on = pl.ntuple_on || inv->ifaces[i].ntuple;
	if (pl.ntuple_on) {
		pl.ntuple_cands = room(scratch ? &scratch->ntuple_cands : NULL, n_flows, sizeof(uint32_t));
		if (!pl.ntuple_cands) {
			r = -ENOMEM;
			goto finish;
		}
	}

	r = collect(&pl, n_flows);
	if (r >= 0)
		r = find_hopeless(&pl);
	if (r >= 0)
		r = group_members(&pl);
	if (r >= 0)
		r = place_owners(&pl);
	if (r >= 0)
		r = decide_followers(&pl);
	if (r < 0)
		goto finish;
	if (pl.ntuple_on)
		r = ntuple_moves(&pl);
	/* an owner dropped leaves its queue to a flow left to the host, whose
	 * kthread may tear another's: until no owner is dropped (once, but
	 * for a rare plan; each round drops one at least) */
	do {
		if (r >= 0)
			r = mark_torn_kthreads(&pl);
		if (r >= 0)
			r = drop_settingless(&pl);
	} while (r > 0);
	if (r < 0)
		goto finish;

	n_settings = emit_settings(&pl);
	plan->settings = malloc((n_settings ? n_settings : 1) * sizeof(*plan->settings));
	if (!plan->settings) {
		r = -ENOMEM;
		goto finish;
	}
	emit_settings(&pl);
	assert(plan->n_settings == n_settings);

	/* without a scratch to give it back to, the room no decision took */
	if (!scratch && plan->n_decisions < n_flows) {
		struct caad_decision *nd = realloc(plan->decisions,
		                                   (plan->n_decisions ? plan->n_decisions : 1) * sizeof(*nd));
		if (nd) {
			plan->decisions = nd;
			plan->decisions_cap = plan->n_decisions ? plan->n_decisions : 1;
		}
	}
	r = plan_index(plan, pl.ids_sorted);

finish:
	planner_done(&pl);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(plan);
	return 0;
}
