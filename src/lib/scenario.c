/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scenarios of the offline simulator: JSON in (json-c), a plan, JSON out.
 * Every error names the file, the field (as a path: flows[2].consumer_cpu)
 * and why; the first error wins and parsing stops there.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "caad/config.h"
#include "caad/json.h"
#include "caad/macro.h"
#include "caad/ntuple.h"
#include "caad/scenario.h"

#define NSEC_PER_MSEC UINT64_C(1000000)
#define QUEUE_INDEX_MAX 65535
#define NOW_MS_MAX (UINT64_MAX / NSEC_PER_MSEC)
/* What caad_plan_compute() takes, refused here first so that the error
 * names the field: a decision keeps the interface's index in 16 bits
 * (struct caad_decision.iface), the flow's in 32. Queues need no limit of
 * their own: their indices are unique and at most QUEUE_INDEX_MAX. */
#define IFACES_MAX INT16_MAX
#define FLOWS_MAX (INT32_MAX - 1)

struct parser {
	const char *file;
	const struct caad_topology *topo;
	struct caad_scenario *s;
	size_t *by_id; /* flows by id, then by position */
	/* The interfaces' names (pointers to caad_iface.name) in a tree (a
	 * scan of the earlier names for each took 3.5 s for 32767). A tree,
	 * not a sorted copy after them all: a repeated name is an error as
	 * its interface is parsed, before any error of a later one, since
	 * the first error wins. The flows look their iface up in it too. */
	void *names;
	/* The rx-N of the interface being parsed (a bit each), cleared after it */
	uint64_t rx_seen[(QUEUE_INDEX_MAX + 1) / 64];
	/* Per interface, its rx indices sorted, made at a flow's first look */
	uint16_t **rx_sorted;
	size_t n_rx_sorted;
	char *error;
	bool oom;
};

_printf_(3, 4) static int fail(struct parser *p, const char *field, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!p->error && asprintf(&p->error, "%s: %s: %s", p->file, field, msg) < 0) {
		p->error = NULL;
		p->oom = true;
	}
	return p->oom ? -ENOMEM : -EINVAL;
}

static const char *type_name(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a fractional number";
	case json_type_int:
		return "a number";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "something else";
}

/* Every key of o must be one of keys (NULL-terminated). */
static int check_keys(struct parser *p, json_object *o, const char *path, const char *const *keys)
{
	json_object_object_foreach(o, key, val) {
		bool known = false;
		char field[256], list[256] = "";
		size_t len = 0;

		(void)val;
		for (const char *const *k = keys; *k; k++)
			known = known || streq(*k, key);
		if (known)
			continue;
		for (const char *const *k = keys; *k; k++)
			len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0, "%s%s",
			                        k == keys ? "" : ", ", *k);
		snprintf(field, sizeof(field), "%s%s%s", path, *path ? "." : "", key);
		return fail(p, field, "unknown key (known: %s)", list);
	}
	return 0;
}

/* The member key of o: 1 when present and not null, 0 when absent or null. */
static int member(json_object *o, const char *key, json_object **ret)
{
	*ret = NULL;
	return json_object_object_get_ex(o, key, ret) && *ret ? 1 : 0;
}

/* json-c takes an integer beyond 64 bits as its nearest bound: UINT64_MAX
 * or INT64_MIN (no error). No field here takes either, so both are refused
 * as what they most likely are (rate_bps stops one short of UINT64_MAX). */
static bool int_clamped(json_object *v)
{
	return json_object_get_uint64(v) == UINT64_MAX || json_object_get_int64(v) == INT64_MIN;
}

static int get_int(struct parser *p, json_object *v, const char *field, int64_t min, int64_t max, int64_t *ret)
{
	int64_t x;

	if (!json_object_is_type(v, json_type_int))
		return fail(p, field, "expected an integer, got %s", type_name(v));
	if (int_clamped(v))
		return fail(p, field, "an integer at or beyond the 64-bit limit, out of range %" PRId64 "..%" PRId64, min,
		            max);
	x = json_object_get_int64(v);
	if (x < min || x > max || (x == INT64_MAX && json_object_get_uint64(v) > INT64_MAX))
		return fail(p, field, "%s out of range %" PRId64 "..%" PRId64, json_object_to_json_string(v), min,
		            max);
	*ret = x;
	return 0;
}

static int get_u64(struct parser *p, json_object *v, const char *field, uint64_t max, uint64_t *ret)
{
	if (!json_object_is_type(v, json_type_int))
		return fail(p, field, "expected an integer, got %s", type_name(v));
	if (int_clamped(v))
		return fail(p, field, "an integer at or beyond the 64-bit limit, out of range 0..%" PRIu64,
		            max == UINT64_MAX ? max - 1 : max);
	if (json_object_get_int64(v) < 0 || json_object_get_uint64(v) > max)
		return fail(p, field, "%s out of range 0..%" PRIu64, json_object_to_json_string(v), max);
	*ret = json_object_get_uint64(v);
	return 0;
}

static int get_bool(struct parser *p, json_object *v, const char *field, bool *ret)
{
	if (!json_object_is_type(v, json_type_boolean))
		return fail(p, field, "expected true or false, got %s", type_name(v));
	*ret = json_object_get_boolean(v);
	return 0;
}

static int get_string(struct parser *p, json_object *v, const char *field, const char **ret)
{
	if (!json_object_is_type(v, json_type_string))
		return fail(p, field, "expected a string, got %s", type_name(v));
	*ret = json_object_get_string(v);
	if (strlen(*ret) != (size_t)json_object_get_string_len(v))
		return fail(p, field, "contains a NUL character");
	return 0;
}

/* Member key of o: a CPU the topology knows; absent or null: -1. */
static int get_cpu(struct parser *p, json_object *o, const char *key, const char *path, int *ret)
{
	char field[256];
	json_object *v;
	int64_t x;
	int r;

	snprintf(field, sizeof(field), "%s.%s", path, key);
	if (!json_object_object_get_ex(o, key, &v) || !v) {
		*ret = -1;
		return 0;
	}
	r = get_int(p, v, field, 0, CAAD_CPUS_MAX - 1, &x);
	if (r < 0)
		return r;
	if ((unsigned)x >= p->topo->n_cpus || !p->topo->cpus[x].present)
		return fail(p, field, "CPU %" PRId64 " not in the topology", x);
	*ret = (int)x;
	return 0;
}

/* A CPU list of CPUs the topology knows. */
static int get_cpulist(struct parser *p, json_object *v, const char *field, struct caad_cpumask *ret)
{
	struct caad_cpumask m, outside;
	const char *s = NULL;
	int r;

	r = get_string(p, v, field, &s);
	if (r < 0)
		return r;
	r = caad_cpumask_parse_list(s, &m);
	if (r == -ERANGE)
		return fail(p, field, "\"%s\": CPU numbers must be below %d", s, CAAD_CPUS_MAX);
	if (r < 0)
		return fail(p, field, "\"%s\" is not a CPU list such as \"0-3,8\"", s);
	caad_cpumask_andnot(&outside, &m, &p->topo->present);
	if (!caad_cpumask_empty(&outside))
		return fail(p, field, "CPU %d not in the topology", caad_cpumask_next(&outside, 0));
	*ret = m;
	return 0;
}

/* bit/s: an integer, or a string with an SI suffix ("9G"). */
static int get_rate(struct parser *p, json_object *v, const char *field, uint64_t *ret)
{
	const char *s = NULL;
	int r;

	if (json_object_is_type(v, json_type_int))
		return get_u64(p, v, field, UINT64_MAX, ret);
	if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);

		/* 9e9 is how some writers print 9000000000 */
		if (!(d >= 0 && d < 18446744073709551616.0) || d != (double)(uint64_t)d)
			return fail(p, field, "%s is not a whole number of bit/s", json_object_to_json_string(v));
		*ret = (uint64_t)d;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return fail(p, field, "expected bit/s as an integer or a string such as \"9G\", got %s",
		            type_name(v));
	r = get_string(p, v, field, &s);
	if (r < 0)
		return r;
	r = caad_parse_rate(s, ret);
	if (caad_parse_rate_error(r))
		return fail(p, field, "\"%s\" is %s", s, caad_parse_rate_error(r));
	if (r < 0)
		return fail(p, field, "\"%s\" is not a rate: bit/s with an optional K, M, G or T suffix", s);
	return 0;
}

/* ---- interfaces -------------------------------------------------------- */

static int parse_queue(struct parser *p, json_object *o, const char *path, struct caad_iface *ifc, unsigned qi)
{
	static const char *const keys[] = { "index", "irq", "managed", "napi_id", "napi_kthread", "rps", "rps_flow_cnt",
		                            NULL };
	struct caad_queue *q = &ifc->rx[qi];
	char field[256];
	json_object *v;
	int64_t x;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return fail(p, path, "expected an object, got %s", type_name(o));
	r = check_keys(p, o, path, keys);
	if (r < 0)
		return r;
	*q = (struct caad_queue){ .irq = -1, .has_rps = true };

	snprintf(field, sizeof(field), "%s.index", path);
	if (!member(o, "index", &v))
		return fail(p, field, "missing: the queue's number N of rx-N");
	if ((r = get_int(p, v, field, 0, QUEUE_INDEX_MAX, &x)) < 0)
		return r;
	q->index = (unsigned)x;
	if (p->rx_seen[q->index / 64] & (UINT64_C(1) << (q->index % 64)))
		return fail(p, field, "rx-%u already listed", q->index);
	p->rx_seen[q->index / 64] |= UINT64_C(1) << (q->index % 64);

	snprintf(field, sizeof(field), "%s.irq", path);
	if (member(o, "irq", &v)) {
		if ((r = get_int(p, v, field, 0, INT32_MAX, &x)) < 0)
			return r;
		q->irq = (int)x;
	}
	snprintf(field, sizeof(field), "%s.managed", path);
	if (member(o, "managed", &v) && (r = get_bool(p, v, field, &q->irq_managed)) < 0)
		return r;
	if (q->irq_managed && q->irq < 0)
		return fail(p, field, "a managed queue needs an \"irq\"");
	snprintf(field, sizeof(field), "%s.napi_id", path);
	if (member(o, "napi_id", &v)) {
		if ((r = get_int(p, v, field, 0, UINT32_MAX, &x)) < 0)
			return r;
		q->napi_id = (uint32_t)x;
	}
	snprintf(field, sizeof(field), "%s.napi_kthread", path);
	if (member(o, "napi_kthread", &v)) {
		if ((r = get_int(p, v, field, 1, INT32_MAX, &x)) < 0)
			return r;
		q->napi_kthread = (pid_t)x;
	}
	snprintf(field, sizeof(field), "%s.rps", path);
	if (member(o, "rps", &v) && (r = get_bool(p, v, field, &q->has_rps)) < 0)
		return r;
	/* RFS's table comes with RPS (CONFIG_RPS), empty unless given */
	q->has_rps_flow_cnt = q->has_rps;
	snprintf(field, sizeof(field), "%s.rps_flow_cnt", path);
	if (member(o, "rps_flow_cnt", &v)) {
		if (!q->has_rps)
			return fail(p, field, "a queue without \"rps\" has no RFS table either");
		if ((r = get_int(p, v, field, 0, 1 << 29, &x)) < 0)
			return r;
		q->rps_flow_cnt = (unsigned)x;
	}
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The position of the interface whose name this is (from the tree) */
static size_t iface_of_name(const struct parser *p, const char *name)
{
	return (size_t)((const struct caad_iface *)(const void *)(name - offsetof(struct caad_iface, name)) -
	                p->s->inv.ifaces);
}

static int parse_interface(struct parser *p, json_object *o, size_t i)
{
	static const char *const keys[] = { "name", "numa_node", "local_cpus", "queues", "ntuple", NULL };
	struct caad_iface *ifc = &p->s->inv.ifaces[i];
	char path[64], field[256];
	const char *name;
	char **known;
	json_object *v;
	int64_t x;
	int r;

	snprintf(path, sizeof(path), "interfaces[%zu]", i);
	if (!json_object_is_type(o, json_type_object))
		return fail(p, path, "expected an object, got %s", type_name(o));
	if ((r = check_keys(p, o, path, keys)) < 0)
		return r;

	ifc->ifindex = (int)i + 1;
	ifc->numa_node = -1;
	snprintf(field, sizeof(field), "%s.name", path);
	if (!member(o, "name", &v))
		return fail(p, field, "missing");
	if ((r = get_string(p, v, field, &name)) < 0)
		return r;
	if (!caad_ifname_valid(name))
		return fail(p, field, "\"%s\" is not an interface name (%s)", name, CAAD_IFNAME_RULE);
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	known = tsearch(ifc->name, &p->names, cmp_name);
	if (!known)
		return -ENOMEM;
	if (*known != ifc->name) /* the first of the name: a later one is never added */
		return fail(p, field, "\"%s\" already used by interfaces[%zu]", name, iface_of_name(p, *known));

	snprintf(field, sizeof(field), "%s.numa_node", path);
	if (member(o, "numa_node", &v)) {
		bool any = false;

		if ((r = get_int(p, v, field, 0, INT32_MAX, &x)) < 0)
			return r;
		caad_cpumask_zero(&ifc->local_cpus);
		for (unsigned cpu = 0; cpu < p->topo->n_cpus; cpu++)
			if (p->topo->cpus[cpu].present && p->topo->cpus[cpu].numa == x) {
				caad_cpumask_set(&ifc->local_cpus, cpu);
				any = true;
			}
		if (!any)
			return fail(p, field, "NUMA node %" PRId64 " not in the topology", x);
		ifc->numa_node = (int)x;
		ifc->has_local_cpus = true;
	}
	snprintf(field, sizeof(field), "%s.local_cpus", path);
	if (member(o, "local_cpus", &v)) {
		if (ifc->has_local_cpus)
			return fail(p, field, "give numa_node or local_cpus, not both");
		if ((r = get_cpulist(p, v, field, &ifc->local_cpus)) < 0)
			return r;
		if (caad_cpumask_empty(&ifc->local_cpus))
			return fail(p, field, "an empty list; leave local_cpus out where the NIC's locality is unknown");
		ifc->has_local_cpus = true;
	}
	snprintf(field, sizeof(field), "%s.ntuple", path);
	if (member(o, "ntuple", &v) && (r = get_bool(p, v, field, &ifc->ntuple)) < 0)
		return r;

	snprintf(field, sizeof(field), "%s.queues", path);
	if (!member(o, "queues", &v))
		return fail(p, field, "missing: the rx queues, [] for none");
	if (!json_object_is_type(v, json_type_array))
		return fail(p, field, "expected an array, got %s", type_name(v));
	size_t n = json_object_array_length(v);
	if (n > QUEUE_INDEX_MAX + 1)
		return fail(p, field, "more than %d queues", QUEUE_INDEX_MAX + 1);
	ifc->rx = calloc(n ? n : 1, sizeof(*ifc->rx));
	if (!ifc->rx)
		return -ENOMEM;
	for (size_t q = 0; q < n; q++) {
		char qpath[128];

		snprintf(qpath, sizeof(qpath), "%s.queues[%zu]", path, q);
		if ((r = parse_queue(p, json_object_array_get_idx(v, q), qpath, ifc, (unsigned)q)) < 0)
			return r;
		ifc->n_rx++;
	}
	/* whole words: every bit set in them is one of this interface's */
	for (unsigned q = 0; q < ifc->n_rx; q++)
		p->rx_seen[ifc->rx[q].index / 64] = 0;
	return 0;
}

/* ---- flows ------------------------------------------------------------- */

static int find_iface(const struct parser *p, const char *name)
{
	char **known = tfind(name, &p->names, cmp_name);

	return known ? (int)iface_of_name(p, *known) : -1;
}

static int cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* Whether interface i has rx-index: 1 or 0. Its indices sorted, made at
 * the first look: flows on an interface of 65536 queues would otherwise
 * each look at every queue. */
static int has_queue(struct parser *p, size_t i, unsigned index)
{
	const struct caad_iface *ifc = &p->s->inv.ifaces[i];
	uint16_t *sorted;

	if (ifc->n_rx == 0)
		return 0;
	if (!p->rx_sorted) {
		p->rx_sorted = calloc(p->s->inv.n_ifaces, sizeof(uint16_t *));
		if (!p->rx_sorted)
			return -ENOMEM;
		p->n_rx_sorted = p->s->inv.n_ifaces;
	}
	if (!p->rx_sorted[i]) {
		sorted = malloc(ifc->n_rx * sizeof(uint16_t));
		if (!sorted)
			return -ENOMEM;
		for (unsigned q = 0; q < ifc->n_rx; q++)
			sorted[q] = (uint16_t)ifc->rx[q].index;
		qsort(sorted, ifc->n_rx, sizeof(uint16_t), cmp_u16);
		p->rx_sorted[i] = sorted;
	}
	return bsearch(&(uint16_t){ (uint16_t)index }, p->rx_sorted[i], ifc->n_rx, sizeof(uint16_t), cmp_u16) ? 1 : 0;
}

/* An id: a non-empty string, or an integer (kept as written). */
static int get_id(struct parser *p, json_object *v, const char *field, char **ret, bool *ret_numeric)
{
	const char *s = NULL;
	int r;

	if (json_object_is_type(v, json_type_int)) {
		int64_t x;

		if ((r = get_int(p, v, field, 0, INT64_MAX, &x)) < 0)
			return r;
		if (asprintf(ret, "%" PRId64, x) < 0) {
			*ret = NULL; /* (asprintf() leaves it undefined; the caller frees it) */
			return -ENOMEM;
		}
		*ret_numeric = true;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return fail(p, field, "expected a string or an integer, got %s", type_name(v));
	if ((r = get_string(p, v, field, &s)) < 0)
		return r;
	if (!*s)
		return fail(p, field, "empty");
	*ret = strdup(s);
	if (!*ret)
		return -ENOMEM;
	*ret_numeric = false;
	return 0;
}

static int get_addr(struct parser *p, json_object *o, const char *key, const char *path, uint8_t *family,
                    uint8_t addr[16])
{
	char field[256];
	const char *s = NULL;
	json_object *v;
	int r, fam;

	snprintf(field, sizeof(field), "%s.%s", path, key);
	if (!member(o, key, &v))
		return 0;
	if ((r = get_string(p, v, field, &s)) < 0)
		return r;
	fam = strchr(s, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(fam, s, addr) != 1)
		return fail(p, field, "\"%s\" is not an IPv4 or IPv6 address", s);
	if (*family && *family != fam)
		return fail(p, field, "\"%s\": laddr and raddr must be of the same family", s);
	*family = (uint8_t)fam;
	return 0;
}

static int parse_flow(struct parser *p, json_object *o, size_t i)
{
	static const char *const keys[] = { "id",   "iface", "queue", "consumer_cpu", "consumer_cpus", "consumer_tid",
		                            "pid", "comm", "rate_bps", "softirq_cpu", "napi_id", "laddr", "lport",
		                            "raddr", "rport", "age_ms", NULL };
	struct caad_scenario *s = p->s;
	struct caad_flow *f = &s->flows[i];
	char path[64], field[256];
	const char *str;
	json_object *v;
	int64_t x;
	int r, iface;

	snprintf(path, sizeof(path), "flows[%zu]", i);
	if (!json_object_is_type(o, json_type_object))
		return fail(p, path, "expected an object, got %s", type_name(o));
	if ((r = check_keys(p, o, path, keys)) < 0)
		return r;
	*f = (struct caad_flow){ .id = i + 1, .consumer_cpu = -1, .proc_cpu = -1, .rx_queue = -1 };

	snprintf(field, sizeof(field), "%s.id", path);
	if (!member(o, "id", &v))
		return fail(p, field, "missing");
	if ((r = get_id(p, v, field, &s->flow_ids[i], &s->flow_id_numeric[i])) < 0)
		return r;

	snprintf(field, sizeof(field), "%s.iface", path);
	if (!member(o, "iface", &v))
		return fail(p, field, "missing");
	if ((r = get_string(p, v, field, &str)) < 0)
		return r;
	iface = find_iface(p, str);
	if (iface < 0)
		return fail(p, field, "no interface \"%s\" in interfaces", str);
	f->ifindex = s->inv.ifaces[iface].ifindex;

	snprintf(field, sizeof(field), "%s.queue", path);
	if (member(o, "queue", &v)) {
		if ((r = get_int(p, v, field, 0, QUEUE_INDEX_MAX, &x)) < 0)
			return r;
		if ((r = has_queue(p, (size_t)iface, (unsigned)x)) < 0)
			return r;
		if (!r)
			return fail(p, field, "%s has no rx-%" PRId64, s->inv.ifaces[iface].name, x);
		f->rx_queue = (int)x;
	}

	if ((r = get_cpu(p, o, "consumer_cpu", path, &f->consumer_cpu)) < 0 ||
	    (r = get_cpu(p, o, "softirq_cpu", path, &f->proc_cpu)) < 0)
		return r;

	/* consumer_cpus: the CPUs of the window, as if the consumer had read
	 * on each of the others at one of the scans before */
	snprintf(field, sizeof(field), "%s.consumer_cpus", path);
	if (member(o, "consumer_cpus", &v)) {
		struct caad_cpumask m;

		if ((r = get_cpulist(p, v, field, &m)) < 0)
			return r;
		if (f->consumer_cpu < 0)
			return fail(p, field, "needs consumer_cpu, the CPU of the latest read (one of them)");
		if (!caad_cpumask_test(&m, (unsigned)f->consumer_cpu))
			return fail(p, field, "must contain consumer_cpu %d", f->consumer_cpu);
		if (caad_cpumask_count(&m) > 1 + CAAD_CONSUMER_HISTORY)
			return fail(p, field, "%u CPUs: at most %d, the scans of the window", caad_cpumask_count(&m),
			            1 + CAAD_CONSUMER_HISTORY);
		CAAD_CPUMASK_FOREACH(cpu, &m)
			if (cpu != f->consumer_cpu)
				f->consumer_history[f->n_consumer_history++] = (uint16_t)cpu;
	}

	snprintf(field, sizeof(field), "%s.consumer_tid", path);
	if (member(o, "consumer_tid", &v)) {
		if ((r = get_int(p, v, field, 0, INT32_MAX, &x)) < 0)
			return r;
		f->tid = (uint32_t)x;
	}
	snprintf(field, sizeof(field), "%s.pid", path);
	f->pid = f->tid;
	if (member(o, "pid", &v)) {
		if ((r = get_int(p, v, field, 0, INT32_MAX, &x)) < 0)
			return r;
		f->pid = (uint32_t)x;
	}
	snprintf(field, sizeof(field), "%s.comm", path);
	if (member(o, "comm", &v)) {
		if ((r = get_string(p, v, field, &str)) < 0)
			return r;
		if (strlen(str) >= sizeof(f->comm))
			return fail(p, field, "\"%s\" is longer than %zu bytes", str, sizeof(f->comm) - 1);
		snprintf(f->comm, sizeof(f->comm), "%s", str);
	}

	snprintf(field, sizeof(field), "%s.rate_bps", path);
	if (!member(o, "rate_bps", &v))
		return fail(p, field, "missing");
	if ((r = get_rate(p, v, field, &f->rate_bps)) < 0)
		return r;

	snprintf(field, sizeof(field), "%s.napi_id", path);
	if (member(o, "napi_id", &v)) {
		if ((r = get_int(p, v, field, 0, UINT32_MAX, &x)) < 0)
			return r;
		f->napi_id = (uint32_t)x;
	}
	if ((r = get_addr(p, o, "laddr", path, &f->family, f->laddr)) < 0 ||
	    (r = get_addr(p, o, "raddr", path, &f->family, f->raddr)) < 0)
		return r;
	/* one address alone would read the other as 0.0.0.0 (an ntuple
	 * rule for that source) */
	bool has_laddr = member(o, "laddr", &v);
	if (has_laddr != member(o, "raddr", &v)) {
		snprintf(field, sizeof(field), "%s.%s", path, has_laddr ? "raddr" : "laddr");
		return fail(p, field, "missing: laddr and raddr go together");
	}
	snprintf(field, sizeof(field), "%s.lport", path);
	if (member(o, "lport", &v)) {
		if ((r = get_int(p, v, field, 0, 65535, &x)) < 0)
			return r;
		f->lport = (uint16_t)x;
	}
	snprintf(field, sizeof(field), "%s.rport", path);
	if (member(o, "rport", &v)) {
		if ((r = get_int(p, v, field, 0, 65535, &x)) < 0)
			return r;
		f->rport = (uint16_t)x;
	}

	/* age_ms: first seen that long before now_ms; absent: age unknown (old) */
	snprintf(field, sizeof(field), "%s.age_ms", path);
	if (member(o, "age_ms", &v)) {
		uint64_t age;

		if ((r = get_u64(p, v, field, s->now_ns / NSEC_PER_MSEC, &age)) < 0)
			return r;
		f->first_ns = s->now_ns - age * NSEC_PER_MSEC;
		if (f->first_ns == 0)
			f->first_ns = 1; /* 0 would mean unknown */
	}
	return 0;
}

static int cmp_id(const void *a, const void *b, void *userdata)
{
	char *const *ids = userdata;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(ids[x], ids[y]);

	return c ? c : (x > y) - (x < y);
}

/* Sort the flows by id; a repeated id is an error at its later use. */
static int index_ids(struct parser *p)
{
	struct caad_scenario *s = p->s;
	size_t n = s->n_flows;

	p->by_id = malloc((n ? n : 1) * sizeof(size_t));
	if (!p->by_id)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		p->by_id[i] = i;
	qsort_r(p->by_id, n, sizeof(size_t), cmp_id, s->flow_ids);
	for (size_t i = 1; i < n; i++)
		if (streq(s->flow_ids[p->by_id[i - 1]], s->flow_ids[p->by_id[i]])) {
			char field[64];

			snprintf(field, sizeof(field), "flows[%zu].id", p->by_id[i]);
			return fail(p, field, "\"%s\" already used by flows[%zu]", s->flow_ids[p->by_id[i]],
			            p->by_id[i - 1]);
		}
	return 0;
}

/* The position of the flow with this id, or -1. */
static ssize_t flow_by_id(const struct parser *p, const char *id)
{
	size_t lo = 0, hi = p->s->n_flows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->s->flow_ids[p->by_id[mid]], id);

		if (c == 0)
			return (ssize_t)p->by_id[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* ---- previous plan ----------------------------------------------------- */

static int parse_previous(struct parser *p, json_object *arr)
{
	struct caad_scenario *s = p->s;
	_cleanup_free_ struct caad_decision *d = NULL;
	_cleanup_free_ bool *seen = NULL;
	size_t n = json_object_array_length(arr), k = 0;
	int r;

	d = calloc(n ? n : 1, sizeof(*d));
	seen = calloc(s->n_flows ? s->n_flows : 1, sizeof(bool));
	if (!d || !seen)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i), *v;
		char path[64], field[256];
		_cleanup_free_ char *id = NULL;
		bool numeric;
		ssize_t fi;
		int64_t x;

		snprintf(path, sizeof(path), "previous[%zu]", i);
		if (!json_object_is_type(o, json_type_object))
			return fail(p, path, "expected an object, got %s", type_name(o));

		snprintf(field, sizeof(field), "%s.id", path);
		if (!member(o, "id", &v))
			return fail(p, field, "missing");
		if ((r = get_id(p, v, field, &id, &numeric)) < 0)
			return r;
		fi = flow_by_id(p, id);
		if (fi >= 0 && seen[fi])
			return fail(p, field, "\"%s\" listed twice", id);
		if (fi < 0)
			continue; /* a flow that ended since: nothing else of it read */
		seen[fi] = true;

		struct caad_decision *e = &d[k];
		*e = (struct caad_decision){ .steer_cpu = -1, .consumer_cpu = -1, .anchor_cpu = -1, .reason = "",
			                     .considered = "" };
		snprintf(field, sizeof(field), "%s.steer_cpu", path);
		if (!json_object_object_get_ex(o, "steer_cpu", &v))
			return fail(p, field, "missing (null for a flow left alone)");
		if (v) {
			if ((r = get_int(p, v, field, 0, CAAD_CPUS_MAX - 1, &x)) < 0)
				return r;
			e->steer_cpu = (int)x; /* a CPU gone since is fine: that is a case to simulate */
		}
		if ((r = get_cpu(p, o, "consumer_cpu", path, &e->consumer_cpu)) < 0 ||
		    (r = get_cpu(p, o, "anchor_cpu", path, &e->anchor_cpu)) < 0)
			return r;
		if (e->anchor_cpu < 0)
			e->anchor_cpu = e->consumer_cpu;
		snprintf(field, sizeof(field), "%s.since_ms", path);
		if (member(o, "since_ms", &v)) {
			uint64_t since;

			if ((r = get_u64(p, v, field, s->now_ns / NSEC_PER_MSEC, &since)) < 0)
				return r;
			e->since_ns = since * NSEC_PER_MSEC;
		}
		snprintf(field, sizeof(field), "%s.shares_queue", path);
		if (member(o, "shares_queue", &v)) {
			bool b = false;

			if ((r = get_bool(p, v, field, &b)) < 0)
				return r;
			e->shares_queue = b;
		}
		snprintf(field, sizeof(field), "%s.ntuple_queue", path);
		x = -1;
		if (member(o, "ntuple_queue", &v) && (r = get_int(p, v, field, 0, QUEUE_INDEX_MAX, &x)) < 0)
			return r;
		/* the other keys of an output entry (reason, relation, ...) are not needed */

		e->flow = (uint32_t)fi;
		e->flow_id = s->flows[fi].id;
		e->iface = -1;
		e->queue = -1;
		if (x >= 0) {
			/* an ntuple rule moved it there: a queue of its interface */
			size_t i_iface = (size_t)s->flows[fi].ifindex - 1;

			if ((r = has_queue(p, i_iface, (unsigned)x)) < 0)
				return r;
			if (!r)
				return fail(p, field, "%s has no rx-%" PRId64, s->inv.ifaces[i_iface].name, x);
			e->iface = (int16_t)(s->flows[fi].ifindex - 1);
			e->queue = (int)x;
			e->ntuple = true;
		}
		if (e->steer_cpu >= 0 && e->consumer_cpu >= 0 && (unsigned)e->steer_cpu < p->topo->n_cpus)
			e->relation = caad_topology_relation(p->topo, (unsigned)e->consumer_cpu, (unsigned)e->steer_cpu);
		k++;
	}
	r = caad_plan_from_decisions(d, k, s->now_ns, &s->previous);
	if (r < 0)
		return r;
	TAKE_PTR(d);
	return 0;
}

/* ---- the whole --------------------------------------------------------- */

void caad_scenario_free(struct caad_scenario *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->inv.n_ifaces; i++)
		free(s->inv.ifaces[i].rx);
	free(s->inv.ifaces);
	for (size_t i = 0; s->flow_ids && i < s->n_flows; i++)
		free(s->flow_ids[i]);
	free(s->flow_ids);
	free(s->flow_id_numeric);
	free(s->flows);
	caad_plan_free(s->previous);
	free(s);
}

static int parse_root(struct parser *p, json_object *root)
{
	static const char *const keys[] = { "interfaces", "flows", "banned_cpus", "previous", "now_ms", NULL };
	struct caad_scenario *s = p->s;
	json_object *v;
	size_t n;
	int r;

	if (!json_object_is_type(root, json_type_object))
		return fail(p, "(top level)", "expected an object, got %s", type_name(root));
	if ((r = check_keys(p, root, "", keys)) < 0)
		return r;

	s->now_ns = CAAD_SCENARIO_NOW_MS_DEFAULT * NSEC_PER_MSEC;
	if (member(root, "now_ms", &v)) {
		uint64_t ms;

		if ((r = get_u64(p, v, "now_ms", NOW_MS_MAX, &ms)) < 0)
			return r;
		s->now_ns = ms * NSEC_PER_MSEC;
	}

	if (!member(root, "interfaces", &v))
		return fail(p, "interfaces", "missing");
	if (!json_object_is_type(v, json_type_array))
		return fail(p, "interfaces", "expected an array, got %s", type_name(v));
	n = json_object_array_length(v);
	if (n > IFACES_MAX)
		return fail(p, "interfaces", "%zu interfaces: at most %d", n, IFACES_MAX);
	s->inv.ifaces = calloc(n ? n : 1, sizeof(*s->inv.ifaces));
	if (!s->inv.ifaces)
		return -ENOMEM;
	s->inv.n_possible_cpus = p->topo->n_cpus;
	for (size_t i = 0; i < n; i++) {
		s->inv.n_ifaces++;
		if ((r = parse_interface(p, json_object_array_get_idx(v, i), i)) < 0)
			return r;
	}

	if (!member(root, "flows", &v))
		return fail(p, "flows", "missing");
	if (!json_object_is_type(v, json_type_array))
		return fail(p, "flows", "expected an array, got %s", type_name(v));
	n = json_object_array_length(v);
	if (n > FLOWS_MAX) /* beyond a file of CAAD_SCENARIO_SIZE_MAX, not a text */
		return fail(p, "flows", "%zu flows: at most %d", n, FLOWS_MAX);
	s->flows = calloc(n ? n : 1, sizeof(*s->flows));
	s->flow_ids = calloc(n ? n : 1, sizeof(char *));
	s->flow_id_numeric = calloc(n ? n : 1, sizeof(bool));
	if (!s->flows || !s->flow_ids || !s->flow_id_numeric)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		s->n_flows++;
		if ((r = parse_flow(p, json_object_array_get_idx(v, i), i)) < 0)
			return r;
	}
	if ((r = index_ids(p)) < 0)
		return r;

	if (member(root, "banned_cpus", &v) && (r = get_cpulist(p, v, "banned_cpus", &s->banned)) < 0)
		return r;

	if (member(root, "previous", &v)) {
		if (!json_object_is_type(v, json_type_array))
			return fail(p, "previous", "expected an array, got %s", type_name(v));
		if ((r = parse_previous(p, v)) < 0)
			return r;
	}
	return 0;
}

static void noop_free(void *name)
{
	(void)name; /* the tree's keys are the interfaces' own names */
}

int caad_scenario_parse(const char *text, size_t len, const char *filename, const struct caad_topology *t,
                        struct caad_scenario **ret, char **ret_error)
{
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = NULL;
	struct parser p = { .file = filename ?: "(scenario)", .topo = t };
	json_object *root;
	int r;

	assert(text || len == 0);
	assert(t && ret && ret_error);
	*ret_error = NULL;

	r = caad_json_parse_text(text, len, p.file, &root, ret_error);
	if (r < 0)
		return r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		json_object_put(root);
		return -ENOMEM;
	}
	p.s = s;
	r = parse_root(&p, root);
	json_object_put(root);
	free(p.by_id);
	tdestroy(p.names, noop_free);
	for (size_t i = 0; i < p.n_rx_sorted; i++)
		free(p.rx_sorted[i]);
	free(p.rx_sorted);
	if (r < 0) {
		*ret_error = TAKE_PTR(p.error);
		free(p.error);
		return p.oom ? -ENOMEM : r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

int caad_scenario_load(const char *path, const struct caad_topology *t, struct caad_scenario **ret,
                       char **ret_error)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, size = 0;

	assert(path && ret && ret_error);
	*ret_error = NULL;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int r = -errno;
		if (asprintf(ret_error, "%s: cannot read: %s", path, strerror(errno)) < 0)
			*ret_error = NULL;
		return r;
	}
	for (;;) {
		ssize_t k;

		if (len == size) {
			char *n;

			/* room for one byte past the limit: a file of exactly
			 * CAAD_SCENARIO_SIZE_MAX bytes is taken, one more is not */
			if (size > CAAD_SCENARIO_SIZE_MAX) {
				if (asprintf(ret_error, "%s: larger than %u bytes", path, CAAD_SCENARIO_SIZE_MAX) < 0)
					*ret_error = NULL;
				return -EFBIG;
			}
			size = size ? MIN(size * 2, (size_t)CAAD_SCENARIO_SIZE_MAX + 1) : 65536;
			n = realloc(buf, size + 1);
			if (!n)
				return -ENOMEM;
			buf = n;
		}
		k = read(fd, buf + len, size - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int r = -errno;
			if (asprintf(ret_error, "%s: cannot read: %s", path, strerror(errno)) < 0)
				*ret_error = NULL;
			return r;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	return caad_scenario_parse(buf ?: "", len, path, t, ret, ret_error);
}

int caad_scenario_plan(const struct caad_scenario *s, const struct caad_topology *t,
                       const struct caad_policy *policy, struct caad_plan **ret)
{
	struct caad_policy pol = *policy;

	caad_cpumask_or(&pol.banned, &pol.banned, &s->banned);
	return caad_plan_compute(t, &s->inv, s->flows, s->n_flows, &pol, s->previous, s->now_ns, ret);
}

/* ---- output ------------------------------------------------------------ */

static void json_cpus(FILE *f, const struct caad_cpumask *m)
{
	char buf[CAAD_CPUS_MAX * 6];

	if (caad_cpumask_format_list(m, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	caad_json_string(f, buf);
}

static void json_id(FILE *f, const struct caad_scenario *s, size_t i)
{
	if (s->flow_id_numeric[i])
		fputs(s->flow_ids[i], f);
	else
		caad_json_string(f, s->flow_ids[i]);
}

int caad_scenario_print(FILE *f, const struct caad_scenario *s, const struct caad_policy *policy,
                        const struct caad_plan *p)
{
	_cleanup_free_ const struct caad_decision **dec = calloc(s->n_flows ? s->n_flows : 1, sizeof(void *));
	static const char *const sections[_CAAD_SETTING_KIND_COUNT] = {
		[CAAD_SETTING_IRQ_AFFINITY] = "irqs",
		[CAAD_SETTING_RPS_CPUS] = "rps",
		[CAAD_SETTING_KTHREAD_AFFINITY] = "kthreads",
		[CAAD_SETTING_RFS_FLOW_CNT] = "rfs",
		[CAAD_SETTING_RFS_TABLE] = "rfs_table",
		[CAAD_SETTING_NTUPLE_RULE] = "ntuple",
	};
	struct caad_policy pol = *policy;

	if (!dec)
		return -ENOMEM;
	caad_cpumask_or(&pol.banned, &pol.banned, &s->banned);
	for (size_t k = 0; k < p->n_decisions; k++)
		if (p->decisions[k].flow < s->n_flows)
			dec[p->decisions[k].flow] = &p->decisions[k];

	fprintf(f, "{\"now_ms\": %" PRIu64 ", \"moves\": %u, \"forced_moves\": %u,\n \"flows\": [",
	        p->now_ns / NSEC_PER_MSEC, p->n_moves, p->n_forced);
	for (size_t i = 0; i < s->n_flows; i++) {
		const struct caad_flow *fl = &s->flows[i];
		const struct caad_decision *d = dec[i];
		const struct caad_iface *ifc = &s->inv.ifaces[fl->ifindex - 1];
		char light[256];

		fputs(i ? ",\n  {\"id\": " : "\n  {\"id\": ", f);
		json_id(f, s, i);
		fputs(", \"iface\": ", f);
		caad_json_string(f, ifc->name);
		if (fl->rx_queue >= 0)
			fprintf(f, ", \"queue\": %d", fl->rx_queue);
		else
			fputs(", \"queue\": null", f);
		if (fl->consumer_cpu >= 0)
			fprintf(f, ", \"consumer_cpu\": %d", fl->consumer_cpu);
		else
			fputs(", \"consumer_cpu\": null", f);
		if (fl->n_consumer_history > 0) {
			struct caad_cpumask window;

			caad_cpumask_zero(&window);
			caad_cpumask_set(&window, (unsigned)fl->consumer_cpu);
			for (unsigned h = 0; h < fl->n_consumer_history; h++)
				caad_cpumask_set(&window, fl->consumer_history[h]);
			fputs(", \"consumer_cpus\": ", f);
			json_cpus(f, &window);
		}
		fprintf(f, ", \"rate_bps\": %" PRIu64 ", \"heavy\": %s", fl->rate_bps, d ? "true" : "false");
		if (d && d->steer_cpu >= 0)
			fprintf(f, ", \"steer_cpu\": %d", d->steer_cpu);
		else
			fputs(", \"steer_cpu\": null", f);
		fputs(", \"relation\": ", f);
		caad_json_string(f, caad_relation_to_string(d ? d->relation : CAAD_RELATION_UNSTEERED));
		if (d) {
			fprintf(f, ", \"held\": %s, \"shares_queue\": %s", d->held ? "true" : "false",
			        d->shares_queue ? "true" : "false");
			if (d->steer_cpu >= 0)
				fprintf(f, ", \"since_ms\": %" PRIu64 ", \"anchor_cpu\": %d", d->since_ns / NSEC_PER_MSEC,
				        d->anchor_cpu);
			if (d->ntuple)
				fprintf(f, ", \"ntuple_queue\": %d", d->queue);
		}
		fputs(", \"reason\": ", f);
		caad_json_string(f, d ? d->reason
		                      : caad_plan_light_reason(fl, &pol, s->previous, s->now_ns, light, sizeof(light)) ?:
		                                "not heavy");
		if (d) {
			fputs(", \"considered\": ", f);
			caad_json_string(f, d->considered);
		}
		fputc('}', f);
	}
	fputs("\n ]", f);

	for (enum caad_setting_kind kind = 0; kind < _CAAD_SETTING_KIND_COUNT; kind++) {
		bool first = true;

		fprintf(f, ",\n \"%s\": [", sections[kind]);
		for (size_t i = 0; i < p->n_settings; i++) {
			const struct caad_setting *st = &p->settings[i];

			if (st->kind != kind)
				continue;
			fputs(first ? "\n  {" : ",\n  {", f);
			first = false;
			if (kind == CAAD_SETTING_IRQ_AFFINITY)
				fprintf(f, "\"irq\": %d, ", st->irq);
			else if (kind == CAAD_SETTING_KTHREAD_AFFINITY)
				fprintf(f, "\"pid\": %d, ", (int)st->pid);
			if (kind == CAAD_SETTING_NTUPLE_RULE) {
				const struct caad_decision *nd = caad_plan_find(p, st->flow_id);
				char rule[160];

				fputs("\"flow\": ", f);
				if (nd && nd->flow < s->n_flows)
					json_id(f, s, nd->flow);
				else
					fputs("null", f);
				fputs(", \"rule\": ", f);
				caad_json_string(f, caad_ntuple_format(&st->rule, st->queue, rule, sizeof(rule)) >= 0 ? rule : "");
				fputs(", ", f);
			}
			fputs("\"iface\": ", f);
			caad_json_string(f, s->inv.ifaces[st->iface].name);
			fprintf(f, ", \"queue\": %u", st->queue);
			if (st->restore)
				fputs(", \"restore\": true", f); /* the host's value goes back: no value of caad's */
			else if (kind == CAAD_SETTING_RFS_FLOW_CNT || kind == CAAD_SETTING_RFS_TABLE)
				fprintf(f, ", \"value\": %u", st->value);
			else if (kind != CAAD_SETTING_NTUPLE_RULE) {
				fputs(", \"cpus\": ", f);
				json_cpus(f, &st->cpus);
			}
			fputs(", \"reason\": ", f);
			caad_json_string(f, st->reason);
			fputc('}', f);
		}
		fputs(first ? "]" : "\n ]", f);
	}
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}
