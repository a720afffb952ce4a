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
 *     marked;
 *  2. place_owners: the fastest flow of each slot owns it; owners that keep
 *     their previous target go first (their load counts), then the others
 *     fastest first choose the least loaded candidate of the best tier;
 *     an owner whose consumer CPU has no candidate gives the slot to the
 *     next flow of it;
 *  3. decide_followers: the other flows of a slot share its CPU when it is
 *     a peer core of their consumer too, else they are conflicted;
 *  4. emit_settings: one mechanism per owned queue, in queue order.
 *
 * How it stays fast on large hosts (1M flows, thousands of queues): only
 * the slot owners are sorted (at most one per queue, and a round per slot
 * that lost its owner); candidates come from per-plan tables (each core's
 * usable CPUs, the cores of each LLC and package), never from scanning the
 * topology per flow; consumer CPUs without any candidate are found once,
 * up front; the decisions' texts live in an arena and are shared: the
 * flows that lose a queue to a faster one share that queue's text.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/plan.h"

/* Reasons are for people; a long text may be shortened, never overflow. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define NSEC_PER_MSEC UINT64_C(1000000)
#define CONSIDERED_MAX 480
#define TEXT_MAX 1024

void caad_policy_init(struct caad_policy *p)
{
	*p = (struct caad_policy){
		.rate_threshold_bps = CAAD_RATE_THRESHOLD_DEFAULT,
		.min_age_ms = CAAD_MIN_AGE_MS_DEFAULT,
		.dwell_ms = CAAD_DWELL_MS_DEFAULT,
		.max_moves = CAAD_MAX_MOVES_DEFAULT,
	};
	caad_cpumask_zero(&p->banned);
}

static const char *const setting_kind_names[_CAAD_SETTING_KIND_COUNT] = {
	[CAAD_SETTING_IRQ_AFFINITY] = "irq-affinity",
	[CAAD_SETTING_RPS_CPUS] = "rps-cpus",
	[CAAD_SETTING_KTHREAD_AFFINITY] = "kthread-affinity",
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

/* A copy of at most TEXT_MAX - 1 bytes of s in the plan, or NULL. */
static const char *arena_strdup(struct caad_plan *p, const char *s)
{
	size_t n = strnlen(s, TEXT_MAX - 1);
	struct caad_plan_arena *a = p->arena;
	char *r;

	if (!a || ARENA_BLOCK - a->used < n + 1) {
		a = malloc(sizeof(*a));
		if (!a)
			return NULL;
		a->next = p->arena;
		a->used = 0;
		p->arena = a;
	}
	r = a->data + a->used;
	memcpy(r, s, n);
	r[n] = '\0';
	a->used += n + 1;
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

/* Decisions in id order need no index (the daemon's flows are sorted by id). */
static int plan_index(struct caad_plan *p)
{
	bool sorted = true;

	free(p->by_id);
	p->by_id = NULL;
	if (p->n_decisions > UINT32_MAX)
		return -E2BIG;
	for (size_t i = 1; i < p->n_decisions && sorted; i++)
		sorted = p->decisions[i - 1].flow_id <= p->decisions[i].flow_id;
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
	p->now_ns = now_ns;
	r = plan_index(p);
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

struct slot {
	int32_t best;    /* heavy index of the fastest flow in it, -1 */
	uint32_t first, end; /* its flows: planner.members[first..end) */
	int32_t owner;   /* heavy index of the placed owner, -1 */
	const char *shared_reason, *conflict_reason;
};

struct iface_state {
	enum iface_mode mode;
	unsigned base;        /* first slot; slot base + n_rx is "every queue" */
	int32_t queue_best;   /* fastest of the queue slots' best, -1 */
	int *qpos;            /* rx queue index -> position in rx[], -1 */
	unsigned n_qpos;
	bool *nic_package;    /* per package: holds CPUs local to the NIC */
	int nic_first_package;
};

struct cand {
	uint32_t k;
	unsigned slot;
	enum hold hold;
	const char *why;                /* for HOLD_*: what is wrong with the previous target */
	const struct caad_decision *pd; /* previous decision */
};

struct planner {
	const struct caad_topology *topo;
	const struct caad_inventory *inv;
	const struct caad_flow *flows;
	const struct caad_policy *policy;
	const struct caad_plan *prev;
	uint64_t now_ns;
	struct caad_plan *plan;

	/* per core */
	unsigned *pu_start, *pus;   /* CSR: its usable, unbanned CPUs */
	int *core_first;            /* lowest present CPU */
	uint8_t *core_state;
	int *core_llc, *core_package;
	int32_t *core_consumer;     /* fastest heavy flow consuming on it, -1 */
	unsigned *llc_start, *llc_cores;       /* CSR: cores of each LLC */
	unsigned *package_start, *package_cores;
	/* per CPU */
	bool *cpu_consumer;
	uint64_t *load;             /* steered bit/s */
	uint64_t *core_load;        /* ... per core */
	const char **fail_reason;   /* consumer CPUs known to have no candidate */
	const char **fail_considered;

	/* heavy flows: decisions[k], and */
	uint64_t *rate;             /* flows[decisions[k].flow].rate_bps, at hand */
	struct heavy {
		int32_t slot;        /* -1: no slot (decided in pass 1) */
		int32_t cpu;         /* decisions[k].consumer_cpu, at hand */
	} *hv;
	struct member {
		uint32_t k;
		int32_t cpu; /* decisions[k].consumer_cpu, at hand */
	} *members;                 /* heavy flows by slot (see slot.first), in flow order */
	struct slot *slots;
	unsigned n_slots;
	struct iface_state *ifs;
	int last_ifindex, last_iface;

	struct cand *round, *next_round;
	size_t n_round, n_next_round;
};

static bool cpu_known(const struct caad_topology *t, int cpu)
{
	return cpu >= 0 && (unsigned)cpu < t->n_cpus && t->cpus[cpu].present;
}

/* Index of the managed interface with this ifindex, or -1. */
static int find_iface(struct planner *pl, int ifindex)
{
	if (ifindex <= 0)
		return -1;
	if (ifindex == pl->last_ifindex)
		return pl->last_iface;
	for (size_t i = 0; i < pl->inv->n_ifaces; i++)
		if (pl->inv->ifaces[i].ifindex == ifindex) {
			pl->last_ifindex = ifindex;
			pl->last_iface = (int)i;
			return (int)i;
		}
	return -1;
}

/* Fastest first, then the lowest id, then the first in the array. */
static bool before(const struct planner *pl, uint32_t a, uint32_t b)
{
	const struct caad_decision *da = &pl->plan->decisions[a], *db = &pl->plan->decisions[b];

	if (pl->rate[a] != pl->rate[b])
		return pl->rate[a] > pl->rate[b];
	if (da->flow_id != db->flow_id)
		return da->flow_id < db->flow_id;
	return da->flow < db->flow;
}

static int cmp_heavy(const void *a, const void *b, void *userdata)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x == y ? 0 : before(userdata, x, y) ? -1 : 1;
}

static int cmp_cand(const void *a, const void *b, void *userdata)
{
	return cmp_heavy(&((const struct cand *)a)->k, &((const struct cand *)b)->k, userdata);
}

static const char *llc_name(const struct planner *pl, int cpu, char *buf, size_t size)
{
	const struct caad_cpu *c = &pl->topo->cpus[cpu];

	if (pl->topo->llc_depth_level > 0)
		snprintf(buf, size, "L%u#%d, package %d", pl->topo->llc_depth_level, c->llc, c->package);
	else
		snprintf(buf, size, "package %d", c->package);
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
	pl->llc_start = calloc(n_llcs + 1, sizeof(unsigned));
	pl->llc_cores = malloc(nc * sizeof(unsigned));
	pl->package_start = calloc(n_packages + 1, sizeof(unsigned));
	pl->package_cores = malloc(nc * sizeof(unsigned));
	pl->cpu_consumer = calloc(ncpu, sizeof(bool));
	pl->load = calloc(ncpu, sizeof(uint64_t));
	pl->fail_reason = calloc(ncpu, sizeof(char *));
	pl->fail_considered = calloc(ncpu, sizeof(char *));

	if (!pl->pu_start || !pl->pus || !pl->core_load || !pl->core_first || !pl->core_state || !pl->core_llc || !pl->core_package ||
	    !pl->core_consumer || !pl->llc_start || !pl->llc_cores || !pl->package_start || !pl->package_cores ||
	    !pl->cpu_consumer || !pl->load || !pl->fail_reason || !pl->fail_considered)
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

static int build_ifaces(struct planner *pl)
{
	const struct caad_topology *t = pl->topo;
	unsigned n_packages = t->n_packages;
	unsigned base = 0;

	pl->ifs = calloc(pl->inv->n_ifaces ? pl->inv->n_ifaces : 1, sizeof(*pl->ifs));
	if (!pl->ifs)
		return -ENOMEM;
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
	if (!pl->slots)
		return -ENOMEM;
	for (unsigned s = 0; s < base; s++)
		pl->slots[s] = (struct slot){ .best = -1, .owner = -1 };
	return 0;
}

static void planner_done(struct planner *pl)
{
	free(pl->pu_start);
	free(pl->pus);
	free(pl->core_load);
	free(pl->core_first);
	free(pl->core_state);
	free(pl->core_llc);
	free(pl->core_package);
	free(pl->core_consumer);
	free(pl->llc_start);
	free(pl->llc_cores);
	free(pl->package_start);
	free(pl->package_cores);
	free(pl->cpu_consumer);
	free(pl->load);
	free(pl->fail_reason);
	free(pl->fail_considered);
	free(pl->rate);
	free(pl->hv);
	free(pl->members);
	free(pl->slots);
	for (size_t i = 0; pl->ifs && i < pl->inv->n_ifaces; i++) {
		free(pl->ifs[i].qpos);
		free(pl->ifs[i].nic_package);
	}
	free(pl->ifs);
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
	int cpu = core_candidate(pl, i);

	if (why->full)
		return;
	text_str(why, " ");
	if (pl->core_consumer[i] >= 0) {
		const struct caad_flow *f = &pl->flows[pl->plan->decisions[pl->core_consumer[i]].flow];

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
 * consumer CPU without one is remembered by the caller. why (may be NULL)
 * gets the candidates and why they lost.
 */
static int choose(const struct planner *pl, int c, enum tier *ret_tier, struct text *why)
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
				text_add(why, "%sSMT sibling: %s", why->len ? " " : "", best >= 0 ? "chosen" : "none usable");
			if (best >= 0) {
				*ret_tier = tier;
				return best;
			}
			continue;
		}

		tier_cores(pl, tier, c, &list, &n);
		if (tier == TIER_OTHER_PACKAGE) {
			for (unsigned i = 0; i < t->n_cores; i++) {
				int cpu = in_tier(pl, tier, c, i) ? core_candidate(pl, i) : -1;
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
			else if (tier == TIER_PACKAGE)
				snprintf(where, sizeof(where), "other LLCs of package %d", cc->package);
			else
				snprintf(where, sizeof(where), "other packages");
			text_add(why, "%s%s:", why->len ? " " : "", where);
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
			if (!why->full && why->len > 0 && why->buf[why->len - 1] == ',')
				why->buf[--why->len] = ';';
		}
		if (best >= 0) {
			*ret_tier = tier;
			return best;
		}
	}
	return -1;
}

/* ---- holding a previous target ----------------------------------------- */

static enum hold classify(const struct planner *pl, uint32_t k, const struct caad_decision **ret_pd,
                          const char **ret_why)
{
	const struct caad_topology *t = pl->topo;
	const struct caad_decision *d = &pl->plan->decisions[k], *pd;
	int c = d->consumer_cpu, s0;
	enum caad_relation rel;

	*ret_why = NULL;
	pd = caad_plan_find(pl->prev, d->flow_id);
	*ret_pd = pd;
	if (!pd || pd->steer_cpu < 0)
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

	if (pl->core_consumer[t->cpus[s0].core] >= 0)
		*ret_why = "is now a consumer's core";
	else if (rel != CAAD_RELATION_PEER_CORE_SAME_LLC && cpu_known(t, pd->anchor_cpu) &&
	         t->cpus[pd->anchor_cpu].llc != t->cpus[c].llc)
		*ret_why = "is no longer in the consumer's LLC (the consumer moved)";
	else
		return HOLD_KEEP;

	uint64_t elapsed = pl->now_ns >= pd->since_ns ? pl->now_ns - pd->since_ns : 0;
	if (elapsed < (uint64_t)pl->policy->dwell_ms * NSEC_PER_MSEC)
		return HOLD_DWELL;
	return HOLD_VOLUNTARY;
}

/* The note of rule 4: the consumer is not on the NIC's socket. */
static void nic_note(const struct planner *pl, const struct caad_decision *d, char *buf, size_t size)
{
	const struct iface_state *is = &pl->ifs[d->iface];
	int pkg = pl->topo->cpus[d->consumer_cpu].package;

	buf[0] = '\0';
	if (!is->nic_package || pkg < 0 || is->nic_package[pkg])
		return;
	snprintf(buf, size,
	         "; note: %s's NIC is local to package %d, the consumer runs on package %d (the NIC's own socket "
	         "measured best; caad does not move applications)",
	         pl->inv->ifaces[d->iface].name, is->nic_first_package, pkg);
}

/* Set decision k to steer to cpu, with its reason. */
static int steer(struct planner *pl, uint32_t k, int cpu, const struct caad_decision *kept, const char *what,
                 const char *tail, const char *considered)
{
	struct caad_decision *d = &pl->plan->decisions[k];
	const struct caad_flow *f = &pl->flows[d->flow];
	char where[64], note[256], name[48];

	/* kept: the previous decision whose target this is, NULL for a new one */
	d->steer_cpu = cpu;
	d->relation = caad_topology_relation(pl->topo, (unsigned)d->consumer_cpu, (unsigned)cpu);
	d->held = kept && kept->steer_cpu == cpu;
	d->since_ns = kept ? kept->since_ns : pl->now_ns;
	d->anchor_cpu = kept ? kept->anchor_cpu : d->consumer_cpu;
	nic_note(pl, d, note, sizeof(note));
	consumer_name(f, name, sizeof(name));
	d->reason = arena_printf(pl->plan, "consumer on CPU %d%s%s%s: %s (%s)%s%s", d->consumer_cpu,
	                         name[0] ? " (" : "", name, name[0] ? ")" : "", what,
	                         llc_name(pl, cpu, where, sizeof(where)), tail, note);
	d->considered = considered ? arena_strdup(pl->plan, considered) : "";
	if (!d->reason || !d->considered)
		return -ENOMEM;
	add_load(pl, cpu, f->rate_bps);
	return 0;
}

/*
 * Place the owner of a slot. Returns 1 when it got a CPU, 0 when not (its
 * decision then says why), or -ENOMEM.
 */
static int place(struct planner *pl, const struct cand *cd)
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
			snprintf(tail, sizeof(tail), ", its target for %.1f s (hysteresis)", age);
		else
			snprintf(tail, sizeof(tail), ", which %s, until DwellMSec=%u is over (its target for %.1f s)",
			         cd->why, pl->policy->dwell_ms, age);
		snprintf(why.buf, sizeof(why.buf), "previous target CPU %d%s%s", pd->steer_cpu,
		         cd->why ? ": " : " still valid", cd->why ?: "");
		r = steer(pl, cd->k, pd->steer_cpu, pd, what, tail, why.buf);
		return r < 0 ? r : 1;
	}

	/* consumer CPUs without any candidate are known (find_hopeless()) */
	cpu = pl->fail_reason[c] ? -1 : choose(pl, c, &tier, &why);
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
			return r < 0 ? r : 1;
		}
		if (cpu >= 0) {
			if (cd->hold == HOLD_VOLUNTARY)
				pl->plan->n_moves++;
			else
				pl->plan->n_forced++;
			snprintf(tail, sizeof(tail), "; moved from CPU %d, which %s", pd->steer_cpu, cd->why);
			r = steer(pl, cd->k, cpu, NULL, tier_where[tier], tail, why.buf);
			return r < 0 ? r : 1;
		}
	}
	if (cpu < 0) {
		d->reason = pl->fail_reason[c];
		d->considered = pl->fail_considered[c];
		return 0;
	}
	/* chosen anew, maybe the same CPU as before: then it is not a change */
	r = steer(pl, cd->k, cpu, pd && cpu == pd->steer_cpu ? pd : NULL, tier_where[tier], "", why.buf);
	if (r >= 0 && pd && cpu == pd->steer_cpu) {
		pl->plan->decisions[cd->k].held = false;
		pl->plan->decisions[cd->k].anchor_cpu = c;
	}
	return r < 0 ? r : 1;
}

/* ---- slots and rounds -------------------------------------------------- */

static bool slot_is_whole(const struct planner *pl, int iface, unsigned slot)
{
	return slot == pl->ifs[iface].base + pl->inv->ifaces[iface].n_rx;
}

static int push_cand(struct planner *pl, uint32_t k, unsigned slot)
{
	pl->next_round[pl->n_next_round++] = (struct cand){ .k = k, .slot = slot };
	return 0;
}

/*
 * The next flow of a slot whose owner could not be placed, if any: the
 * fastest one not tried yet whose consumer CPU has a candidate. An owner
 * fails only when its consumer CPU has none (find_hopeless()), so this one
 * will not: a slot is scanned once, O(flows on it).
 */
static int next_of_slot(struct planner *pl, unsigned s)
{
	const struct slot *sl = &pl->slots[s];
	int32_t best = -1;

	for (uint32_t j = sl->first; j < sl->end; j++) {
		uint32_t k = pl->members[j].k;

		if (pl->fail_reason[pl->members[j].cpu] || pl->plan->decisions[k].reason)
			continue;
		if (best < 0 || before(pl, k, (uint32_t)best))
			best = (int32_t)k;
	}
	return best >= 0 ? push_cand(pl, (uint32_t)best, s) : 0;
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
				r = place(pl, cd);
				if (r < 0)
					return r;
				if (r > 0) {
					pl->slots[cd->slot].owner = (int32_t)cd->k;
					continue;
				}
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
	const struct iface_state *is = &pl->ifs[i];

	for (unsigned q = 0; q < pl->inv->ifaces[i].n_rx; q++) {
		const struct slot *sl = &pl->slots[is->base + q];

		if (sl->best >= 0 && !pl->plan->decisions[sl->best].reason)
			push_cand(pl, (uint32_t)sl->best, is->base + q);
		else if (sl->best >= 0 && next_of_slot(pl, is->base + q) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Consumer CPUs with no candidate at all, whatever the load: their flows
 * cannot be placed (only held on a previous target). Known before placing
 * anything, a queue's flows consumed there are passed over at once.
 */
static int find_hopeless(struct planner *pl)
{
	for (unsigned c = 0; c < pl->topo->n_cpus; c++) {
		struct text why = {};
		enum tier tier;

		if (!pl->cpu_consumer[c] || choose(pl, (int)c, &tier, NULL) >= 0)
			continue;
		(void)choose(pl, (int)c, &tier, &why);
		pl->fail_reason[c] = arena_printf(pl->plan,
		                                  "consumer CPU %u has no usable peer core (banned, offline, isolated or "
		                                  "consumers' cores)", c);
		pl->fail_considered[c] = arena_strdup(pl->plan, why.buf);
		if (!pl->fail_reason[c] || !pl->fail_considered[c])
			return -ENOMEM;
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

		if (w >= 0 && (is->queue_best < 0 || before(pl, (uint32_t)w, (uint32_t)is->queue_best))) {
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
			if (!pl->plan->decisions[pl->slots[whole].best].reason)
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

/* A flow on a queue that a faster flow owns: served too when the owner's
 * CPU is a peer core of its consumer as well, else conflicted. */
static int decide_follower(struct planner *pl, uint32_t k, unsigned owner_slot)
{
	struct caad_decision *d = &pl->plan->decisions[k];
	struct slot *sl = &pl->slots[owner_slot];
	const struct caad_decision *od;
	const struct caad_flow *of;
	char label[64], where[64], rate[32], name[48];

	if (sl->owner < 0) {
		/* every consumer CPU of the queue was tried: this one has no candidate */
		d->reason = pl->fail_reason[d->consumer_cpu] ?: "conflicted: no queue of its interface could be steered";
		d->considered = pl->fail_considered[d->consumer_cpu] ?: "";
		return 0;
	}
	od = &pl->plan->decisions[sl->owner];
	of = &pl->flows[od->flow];
	/* the texts are made once per slot */
	if (!sl->shared_reason || !sl->conflict_reason) {
		queue_label(pl, d->iface, owner_slot, label, sizeof(label));
		consumer_name(of, name, sizeof(name));
	}

	if (caad_topology_relation(pl->topo, (unsigned)d->consumer_cpu, (unsigned)od->steer_cpu) ==
	    CAAD_RELATION_PEER_CORE_SAME_LLC) {
		if (!sl->shared_reason)
			sl->shared_reason = arena_printf(pl->plan,
			                                 "shares %s with a faster flow (%s%sconsumer on CPU %d): its CPU "
			                                 "%d is a peer core in this consumer's LLC too (%s)",
			                                 label, name, name[0] ? ", " : "", od->consumer_cpu,
			                                 od->steer_cpu, llc_name(pl, od->steer_cpu, where, sizeof(where)));
		if (!sl->shared_reason)
			return -ENOMEM;
		d->steer_cpu = od->steer_cpu;
		d->relation = CAAD_RELATION_PEER_CORE_SAME_LLC;
		d->shares_queue = true;
		d->since_ns = od->since_ns;
		d->anchor_cpu = d->consumer_cpu;
		d->reason = sl->shared_reason;
		add_load(pl, od->steer_cpu, pl->flows[d->flow].rate_bps);
		return 0;
	}
	if (pl->fail_reason[d->consumer_cpu]) {
		/* it could not have been steered anywhere anyway: say that */
		d->reason = pl->fail_reason[d->consumer_cpu];
		d->considered = pl->fail_considered[d->consumer_cpu];
		return 0;
	}
	if (!sl->conflict_reason)
		sl->conflict_reason = arena_printf(pl->plan,
		                                   "conflicted: %s is steered to CPU %d for a faster flow (%s%s%s, "
		                                   "consumer on CPU %d), not a peer core of this flow's consumer",
		                                   label, od->steer_cpu, name, name[0] ? ", " : "",
		                                   fmt_rate(of->rate_bps, rate, sizeof(rate)), od->consumer_cpu);
	if (!sl->conflict_reason)
		return -ENOMEM;
	d->reason = sl->conflict_reason;
	return 0;
}

static int decide_followers(struct planner *pl)
{
	/* per interface: the slot of the fastest placed queue owner */
	_cleanup_free_ int *first = malloc((pl->inv->n_ifaces ? pl->inv->n_ifaces : 1) * sizeof(int));
	int r;

	if (!first)
		return -ENOMEM;
	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		const struct iface_state *is = &pl->ifs[i];

		first[i] = -1;
		for (unsigned q = 0; q < pl->inv->ifaces[i].n_rx; q++) {
			int32_t o = pl->slots[is->base + q].owner;
			if (o >= 0 && (first[i] < 0 || before(pl, (uint32_t)o, (uint32_t)pl->slots[first[i]].owner)))
				first[i] = (int)(is->base + q);
		}
	}

	for (size_t k = 0; k < pl->plan->n_decisions; k++) {
		struct caad_decision *d = &pl->plan->decisions[k];
		const struct iface_state *is;
		unsigned whole;
		int32_t s = pl->hv[k].slot;

		if (d->reason || s < 0)
			continue;
		is = &pl->ifs[d->iface];
		whole = is->base + pl->inv->ifaces[d->iface].n_rx;
		if (is->mode == IFACE_WHOLE)
			r = decide_follower(pl, (uint32_t)k, whole);
		else if ((unsigned)s != whole)
			r = decide_follower(pl, (uint32_t)k, (unsigned)s);
		else {
			/* Its queue is unknown: it may arrive on any of them. */
			struct slot *wsl = &pl->slots[whole];
			r = 0;
			if (!wsl->conflict_reason && first[d->iface] >= 0) {
				const struct caad_decision *od = &pl->plan->decisions[pl->slots[first[d->iface]].owner];
				char name[48];
				consumer_name(&pl->flows[od->flow], name, sizeof(name));
				wsl->conflict_reason = arena_printf(
					pl->plan,
					"conflicted: its rx queue is unknown, and %s's queues are steered for faster flows "
					"on known queues (the fastest: %s%sconsumer on CPU %d, steered to CPU %d)",
					pl->inv->ifaces[d->iface].name, name, name[0] ? ", " : "", od->consumer_cpu,
					od->steer_cpu);
				if (!wsl->conflict_reason)
					r = -ENOMEM;
			}
			d->reason = wsl->conflict_reason ?: "conflicted: no queue of its interface could be steered, "
			                                    "and it arrives on any of them";
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

static unsigned queue_settings(struct planner *pl, int iface, const struct caad_queue *q, pid_t kthread, int cpu,
                               const char *reason)
{
	struct caad_cpumask m, none;
	enum caad_setting_kind kind;

	unsigned off = pl->policy->disabled_mechanisms;

	if (kthread > 0 && !(off & (1u << CAAD_SETTING_KTHREAD_AFFINITY)))
		kind = CAAD_SETTING_KTHREAD_AFFINITY;
	else if (q->irq >= 0 && !q->irq_managed && !(off & (1u << CAAD_SETTING_IRQ_AFFINITY)))
		kind = CAAD_SETTING_IRQ_AFFINITY;
	else if (!(off & (1u << CAAD_SETTING_RPS_CPUS)))
		kind = CAAD_SETTING_RPS_CPUS;
	else
		return 0; /* Mechanisms= allows nothing that fits this queue: left as it is */

	/* with RPS switched off (Mechanisms=) caad does not touch rps_cpus at all */
	bool rps = q->has_rps && !(off & (1u << CAAD_SETTING_RPS_CPUS));

	if (!pl->plan->settings) /* counting */
		return kind == CAAD_SETTING_RPS_CPUS ? rps : 1u + rps;

	caad_cpumask_zero(&m);
	caad_cpumask_set(&m, (unsigned)cpu);
	caad_cpumask_zero(&none);
	if (kind != CAAD_SETTING_RPS_CPUS)
		add_setting(pl, kind, iface, q, kthread, &m, reason);
	if (rps)
		add_setting(pl, CAAD_SETTING_RPS_CPUS, iface, q, 0, kind == CAAD_SETTING_RPS_CPUS ? &m : &none,
		            reason);
	return 0;
}

/* Settings in interface and queue order. Called twice: to count (settings
 * NULL), then to fill. */
static size_t emit_settings(struct planner *pl)
{
	size_t n = 0;

	for (size_t i = 0; i < pl->inv->n_ifaces; i++) {
		const struct caad_iface *ifc = &pl->inv->ifaces[i];
		const struct iface_state *is = &pl->ifs[i];
		int32_t whole_owner = pl->slots[is->base + ifc->n_rx].owner;

		for (unsigned q = 0; q < ifc->n_rx; q++) {
			int32_t o = is->mode == IFACE_WHOLE ? whole_owner : pl->slots[is->base + q].owner;
			const struct caad_decision *d;

			if (o < 0)
				continue; /* no heavy flow: left as it is */
			d = &pl->plan->decisions[o];
			n += queue_settings(pl, (int)i, &ifc->rx[q], queue_kthread(ifc, &ifc->rx[q], &pl->flows[d->flow]),
			                    d->steer_cpu, d->reason);
		}
	}
	return n;
}

/* ---- the whole --------------------------------------------------------- */

/*
 * Heavy: fast and old enough (first_ns 0: age unknown, old); with a
 * target of its own in the previous plan, fast down to half the threshold.
 * Returns NULL when heavy, else what it lacks.
 */
static inline const char *light(const struct caad_flow *f, const struct caad_policy *policy,
                                const struct caad_plan *prev, uint64_t now_ns)
{
	uint64_t min_age = (uint64_t)policy->min_age_ms * NSEC_PER_MSEC;

	if (f->rate_bps < policy->rate_threshold_bps / 2)
		return "rate";
	if (f->first_ns > 0 && (now_ns < f->first_ns || now_ns - f->first_ns < min_age))
		return "age";
	if (f->rate_bps < policy->rate_threshold_bps) {
		const struct caad_decision *pd = caad_plan_find(prev, f->id);
		if (!pd || pd->steer_cpu < 0 || pd->shares_queue)
			return "rate";
	}
	return NULL;
}

const char *caad_plan_light_reason(const struct caad_flow *f, const struct caad_policy *policy,
                                   const struct caad_plan *prev, uint64_t now_ns, char *buf, size_t size)
{
	const char *what = light(f, policy, prev, now_ns);
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
		         f->rate_bps >= policy->rate_threshold_bps / 2 ? " (half of it keeps a steered flow heavy)" : "");
	return buf;
}

/* Pass 1: the heavy flows, each in a slot (or decided at once). */
static int collect(struct planner *pl, size_t n_flows)
{
	const struct caad_topology *t = pl->topo;
	uint64_t half = pl->policy->rate_threshold_bps / 2;
	struct caad_plan *plan = pl->plan;

	for (size_t i = 0; i < n_flows; i++) {
		const struct caad_flow *f = &pl->flows[i];
		struct caad_decision *d;
		int iface, c;
		uint32_t k;

		if (f->rate_bps < half) /* most flows, the cheapest test first */
			continue;
		iface = find_iface(pl, f->ifindex);
		if (iface < 0 || light(f, pl->policy, pl->prev, pl->now_ns))
			continue;

		k = (uint32_t)plan->n_decisions++;
		d = &plan->decisions[k];
		c = f->consumer_cpu;
		*d = (struct caad_decision){
			.flow = i,
			.flow_id = f->id,
			.iface = iface,
			.queue = -1,
			.consumer_cpu = cpu_known(t, c) ? c : -1,
			.steer_cpu = -1,
			.anchor_cpu = -1,
			.relation = CAAD_RELATION_UNSTEERED,
			.considered = "",
		};
		pl->hv[k] = (struct heavy){ .slot = -1, .cpu = d->consumer_cpu };
		pl->rate[k] = f->rate_bps;

		const struct caad_iface *ifc = &pl->inv->ifaces[iface];
		const struct iface_state *is = &pl->ifs[iface];
		if (!cpu_known(t, c)) {
			d->reason = "consumer CPU unknown (not read yet, or not in the topology)";
			continue;
		}

		/* Consumers' cores are kept free of steered processing. */
		int core = t->cpus[c].core;
		pl->cpu_consumer[c] = true;
		if (pl->core_consumer[core] < 0 || before(pl, k, (uint32_t)pl->core_consumer[core]))
			pl->core_consumer[core] = (int32_t)k;

		if (ifc->n_rx == 0) {
			d->reason = "no rx queue to steer on its interface";
			continue;
		}

		unsigned slot = is->base + ifc->n_rx;
		if (f->rx_queue >= 0 && (unsigned)f->rx_queue < is->n_qpos && is->qpos[f->rx_queue] >= 0) {
			slot = is->base + (unsigned)is->qpos[f->rx_queue];
			d->queue = f->rx_queue;
		}
		struct slot *sl = &pl->slots[slot];
		pl->hv[k].slot = (int32_t)slot;
		if (sl->best < 0 || before(pl, k, (uint32_t)sl->best))
			sl->best = (int32_t)k;
		if (slot != is->base + ifc->n_rx) {
			struct iface_state *ism = &pl->ifs[iface];
			if (ism->queue_best < 0 || before(pl, k, (uint32_t)ism->queue_best))
				ism->queue_best = (int32_t)k;
		}
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

	for (size_t k = 0; k < n; k++)
		if (pl->hv[k].slot >= 0 && !pl->fail_reason[pl->hv[k].cpu])
			pl->slots[pl->hv[k].slot].end++;
	pl->members = malloc((n ? n : 1) * sizeof(*pl->members));
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
			};
	return 0;
}

int caad_plan_compute(const struct caad_topology *topo, const struct caad_inventory *inv,
                      const struct caad_flow *flows, size_t n_flows, const struct caad_policy *policy,
                      const struct caad_plan *prev, uint64_t now_ns, struct caad_plan **ret)
{
	_cleanup_(caad_plan_freep) struct caad_plan *plan = NULL;
	struct planner pl = {
		.topo = topo, .inv = inv, .flows = flows, .policy = policy, .prev = prev, .now_ns = now_ns,
		.last_ifindex = -1,
	};
	size_t n_settings;
	int r;

	assert(topo && inv && policy && ret);
	assert(flows || n_flows == 0);

	if (n_flows >= INT32_MAX)
		return -E2BIG;
	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	plan->now_ns = now_ns;
	pl.plan = plan;

	/* Sized for every flow being heavy; only what is used is touched, and
	 * the rest is given back below. */
	plan->decisions = malloc((n_flows ? n_flows : 1) * sizeof(*plan->decisions));
	pl.hv = malloc((n_flows ? n_flows : 1) * sizeof(*pl.hv));
	pl.rate = malloc((n_flows ? n_flows : 1) * sizeof(uint64_t));
	if (!plan->decisions || !pl.hv || !pl.rate) {
		r = -ENOMEM;
		goto finish;
	}

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

	n_settings = emit_settings(&pl);
	plan->settings = malloc((n_settings ? n_settings : 1) * sizeof(*plan->settings));
	if (!plan->settings) {
		r = -ENOMEM;
		goto finish;
	}
	emit_settings(&pl);
	assert(plan->n_settings == n_settings);

	if (plan->n_decisions < n_flows) {
		struct caad_decision *nd = realloc(plan->decisions,
		                                   (plan->n_decisions ? plan->n_decisions : 1) * sizeof(*nd));
		if (nd)
			plan->decisions = nd;
	}
	r = plan_index(plan);

finish:
	planner_done(&pl);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(plan);
	return 0;
}
