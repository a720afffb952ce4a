/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "caad/macro.h"
#include "caad/flow.h"
#include "caad/utf8.h"

/* sk_napi_id values below this are sender_cpu hints, not NAPI ids. */
#define NAPI_ID_MIN 257
/* sk_rx_queue_mapping when no queue was recorded (NO_QUEUE_MAPPING). */
#define RX_QUEUE_NONE 65535

#define NSEC_PER_SEC UINT64_C(1000000000)
#define NSEC_PER_MSEC UINT64_C(1000000)

static uint8_t id_key[16];

void caad_flow_id_key_set(const uint8_t key[16])
{
	memcpy(id_key, key, sizeof(id_key));
}

int caad_flow_id_key_random(void)
{
	uint8_t key[16];
	size_t got = 0;

	/* The key hides kernel addresses: an early boot's randomness is
	 * enough, and no wait for the pool (a start timeout) is worth it.
	 * GRND_INSECURE (5.6), else GRND_NONBLOCK, else /dev/urandom (a
	 * kernel or seccomp filter without getrandom(2), a pool not ready). */
#ifdef GRND_INSECURE
	unsigned flags = GRND_INSECURE;
#else
	unsigned flags = GRND_NONBLOCK;
#endif

	while (got < sizeof(key)) {
		ssize_t k = getrandom(key + got, sizeof(key) - got, flags);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EINVAL && flags != GRND_NONBLOCK) {
			flags = GRND_NONBLOCK; /* a kernel before GRND_INSECURE */
			continue;
		}
		if (k < 0 && (errno == EAGAIN || errno == ENOSYS || errno == EPERM)) {
			int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);

			if (fd < 0)
				return -errno;
			while (got < sizeof(key)) {
				k = read(fd, key + got, sizeof(key) - got);
				if (k < 0 && errno == EINTR)
					continue;
				if (k <= 0) {
					int r = k < 0 ? -errno : -EIO;
					close(fd);
					return r;
				}
				got += (size_t)k;
			}
			close(fd);
			break;
		}
		if (k < 0)
			return -errno;
		got += (size_t)k;
	}
	caad_flow_id_key_set(key);
	return 0;
}

uint64_t caad_flow_public_id(uint64_t id)
{
	uint8_t le[8];

	for (unsigned i = 0; i < 8; i++)
		le[i] = (uint8_t)(id >> (8 * i));
	return caad_siphash24(id_key, le, sizeof(le));
}

static uint64_t rotl64(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static uint64_t load_le64(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void sip_rounds(uint64_t v[4], unsigned n)
{
	while (n--) {
		v[0] += v[1];
		v[1] = rotl64(v[1], 13) ^ v[0];
		v[0] = rotl64(v[0], 32);
		v[2] += v[3];
		v[3] = rotl64(v[3], 16) ^ v[2];
		v[0] += v[3];
		v[3] = rotl64(v[3], 21) ^ v[0];
		v[2] += v[1];
		v[1] = rotl64(v[1], 17) ^ v[2];
		v[2] = rotl64(v[2], 32);
	}
}

uint64_t caad_siphash24(const uint8_t key[16], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t k0 = load_le64(key, 8), k1 = load_le64(key + 8, 8), m;
	uint64_t v[4] = { k0 ^ UINT64_C(0x736f6d6570736575), k1 ^ UINT64_C(0x646f72616e646f6d),
		          k0 ^ UINT64_C(0x6c7967656e657261), k1 ^ UINT64_C(0x7465646279746573) };
	size_t whole = len - len % 8;

	for (size_t at = 0; at < whole; at += 8) {
		m = load_le64(p + at, 8);
		v[3] ^= m;
		sip_rounds(v, 2);
		v[0] ^= m;
	}
	/* the last 0-7 bytes, with the length's low byte on top */
	m = load_le64(p + whole, len % 8) | ((uint64_t)(len & 0xff) << 56);
	v[3] ^= m;
	sip_rounds(v, 2);
	v[0] ^= m;
	v[2] ^= 0xff;
	sip_rounds(v, 4);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

int caad_flow_format_tuple(const struct caad_flow *f, char *buf, size_t size)
{
	char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];
	char tmp[2 * (INET6_ADDRSTRLEN + sizeof("[]:65535")) + sizeof(" <- ")];
	int n;

	assert(f);
	assert(buf || size == 0);

	/* An IPv4 peer of a dual-stack socket (::ffff:a.b.c.d) reads as IPv4. */
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (f->family == AF_INET6 && memcmp(f->laddr, v4mapped, 12) == 0 && memcmp(f->raddr, v4mapped, 12) == 0 &&
	    inet_ntop(AF_INET, f->laddr + 12, l, sizeof(l)) && inet_ntop(AF_INET, f->raddr + 12, r, sizeof(r)))
		n = snprintf(tmp, sizeof(tmp), "%s:%u <- %s:%u", l, f->lport, r, f->rport);
	else if (f->family == AF_INET && inet_ntop(AF_INET, f->laddr, l, sizeof(l)) &&
	         inet_ntop(AF_INET, f->raddr, r, sizeof(r)))
		n = snprintf(tmp, sizeof(tmp), "%s:%u <- %s:%u", l, f->lport, r, f->rport);
	else if (f->family == AF_INET6 && inet_ntop(AF_INET6, f->laddr, l, sizeof(l)) &&
	         inet_ntop(AF_INET6, f->raddr, r, sizeof(r)))
		n = snprintf(tmp, sizeof(tmp), "[%s]:%u <- [%s]:%u", l, f->lport, r, f->rport);
	else
		n = snprintf(tmp, sizeof(tmp), "?");

	assert(n >= 0 && (size_t)n < sizeof(tmp));
	if ((size_t)n >= size)
		return -ENOBUFS;

	memcpy(buf, tmp, (size_t)n + 1);
	return n;
}

static int cpu_or_unknown(uint32_t cpu)
{
	return cpu == CAAD_CPU_NONE || cpu > INT_MAX ? -1 : (int)cpu;
}

void caad_flow_from_record(struct caad_flow *f, const struct caad_flow_record *s)
{
	size_t n;

	assert(f);
	assert(s);

	*f = (struct caad_flow){
		.id = s->sk,
		.family = s->family,
		.lport = s->lport,
		.rport = s->rport,
		.pid = s->consumer_pid,
		.tid = s->consumer_tid,
		.consumer_cpu = cpu_or_unknown(s->consumer_cpu),
		.proc_cpu = cpu_or_unknown(s->proc_cpu),
		.ifindex = s->rx_ifindex > INT_MAX ? 0 : (int)s->rx_ifindex,
		/* Covers CAAD_CPU_NONE too: a real mapping is a u16 below 65535. */
		.rx_queue = s->rx_queue >= RX_QUEUE_NONE ? -1 : (int)s->rx_queue,
		.napi_id = s->napi_id < NAPI_ID_MIN ? 0 : s->napi_id,
		.proc_kthread = s->proc_kthread,
		.ooo_packets = s->rcv_ooopack,
		.bytes = s->bytes,
		.first_ns = s->first_ns,
	};
	memcpy(f->laddr, s->laddr, sizeof(f->laddr));
	memcpy(f->raddr, s->raddr, sizeof(f->raddr));

	/* The kernel's comm is NUL-terminated, but the map is not to be trusted. */
	n = strnlen(s->comm, sizeof(s->comm));
	n = MIN(n, sizeof(f->comm) - 1);
	memcpy(f->comm, s->comm, n);
	f->comm[n] = '\0';
	/* any thread names itself (prctl(PR_SET_NAME)): its name goes to
	 * logs, terminals and D-Bus, which take neither controls nor bytes
	 * that are not UTF-8 */
	caad_utf8_sanitize(f->comm, false);
}

enum caad_merge caad_flow_merge_record(struct caad_flow *f, const struct caad_flow_record *rec)
{
	bool same = !rec->first_ns || !f->first_ns || rec->first_ns == f->first_ns;
	uint64_t rate = f->rate_bps, bytes = f->bytes;
	uint16_t hist[CAAD_CONSUMER_HISTORY];
	uint8_t n_hist = f->n_consumer_history;

	/* the close of a newer connection at the address (the listed one's
	 * own close was replaced in "recent" by it): the listed one ended too */
	if (rec->closed)
		return same || rec->first_ns > f->first_ns ? CAAD_MERGE_GONE : CAAD_MERGE_OTHER;
	/* its rate and its consumer's window as the last due snapshot made
	 * them: an early one keeps them; and its bytes, where a pass read
	 * more of this socket than it had when it was handed over (before
	 * the pass) */
	memcpy(hist, f->consumer_history, sizeof(hist));
	caad_flow_from_record(f, rec);
	if (!same)
		return CAAD_MERGE_LIVE; /* another connection: its own, from 0 */
	if (f->bytes < bytes)
		f->bytes = bytes;
	f->rate_bps = rate;
	memcpy(f->consumer_history, hist, sizeof(hist));
	f->n_consumer_history = n_hist;
	return CAAD_MERGE_LIVE;
}

uint64_t caad_flow_record_time(const struct caad_flow_record *s, uint64_t now_ns)
{
	int32_t d;
	uint64_t away;

	if (!s->at_us)
		return now_ns;
	d = (int32_t)(s->at_us - (uint32_t)(now_ns / 1000));
	away = (d < 0 ? -(uint64_t)(int64_t)d : (uint64_t)d) * 1000;
	if (d >= 0)
		return now_ns + away;
	return now_ns > away ? now_ns - away : 1;
}

static int flow_cmp(const void *a, const void *b)
{
	const struct caad_flow *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

struct sort_key {
	uint64_t id;
	size_t at; /* its flow's index */
};

/*
 * keys[0..n) by id, stably, with tmp as room for as many: a radix sort, a
 * byte at a time from the lowest, passing over the bytes all ids share
 * (ids are kernel addresses: most of their high bytes and their lowest).
 * The result is in keys or in tmp: returned.
 */
static struct sort_key *radix_sort(struct sort_key *keys, struct sort_key *tmp, size_t n)
{
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 }, pos = 0;
		struct sort_key *swap;

		for (size_t i = 0; i < n; i++)
			count[(keys[i].id >> shift) & 0xff]++;
		if (count[(keys[0].id >> shift) & 0xff] == n)
			continue; /* the same byte in every id */
		for (unsigned d = 0; d < 256; d++) {
			size_t c = count[d];

			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(keys[i].id >> shift) & 0xff]++] = keys[i];
		swap = keys;
		keys = tmp;
		tmp = swap;
	}
	return keys;
}

/*
 * Sorted by id: the ids with their indices (16 bytes each, contiguous),
 * radix-sorted, then the flows put in place along the cycles of that
 * permutation, each moved once. qsort() of the flows themselves compared
 * through pointers to 128-byte flows, a cache miss each: at 100k flows
 * caad spent a fifth of its time in it (perf, bench/memory's 100k level).
 * Without memory for the keys, the flows are sorted as they are (with
 * aux: not at all, -ENOMEM).
 */
int caad_flows_sort_aux(struct caad_flow *flows, uint64_t *aux, size_t n)
{
	_cleanup_free_ struct sort_key *mem = NULL;
	struct sort_key *keys;

	assert(flows || n == 0);
	if (n < 2)
		return 0;
	mem = malloc(2 * n * sizeof(*mem));
	if (!mem) {
		if (aux)
			return -ENOMEM;
		qsort(flows, n, sizeof(*flows), flow_cmp);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		mem[i] = (struct sort_key){ .id = flows[i].id, .at = i };
	keys = radix_sort(mem, mem + n, n);

	/* position i wants flows[keys[i].at]; a done position gets at = i */
	for (size_t i = 0; i < n; i++) {
		struct caad_flow held;
		uint64_t held_aux;
		size_t j = i;

		if (keys[i].at == i)
			continue;
		held = flows[i];
		held_aux = aux ? aux[i] : 0;
		while (keys[j].at != i) {
			size_t from = keys[j].at;

			flows[j] = flows[from];
			if (aux)
				aux[j] = aux[from];
			keys[j].at = j;
			j = from;
		}
		flows[j] = held;
		if (aux)
			aux[j] = held_aux;
		keys[j].at = j;
	}
	return 0;
}

void caad_flows_sort(struct caad_flow *flows, size_t n)
{
	(void)caad_flows_sort_aux(flows, NULL, n);
}

/* bytes * 8 bit/s over span_ns, without overflow; saturates at UINT64_MAX. */
static uint64_t rate_bps(uint64_t bytes, uint64_t span_ns)
{
	unsigned __int128 r;

	assert(span_ns > 0);

	r = (unsigned __int128)bytes * 8 * NSEC_PER_SEC / span_ns;
	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

/* A flow not in the previous snapshot: its rate from when it was first
 * seen to the snapshot (taken at now_ns). */
static uint64_t new_flow_rate(const struct caad_flow *f, uint64_t now_ns)
{
	if (now_ns <= f->first_ns || now_ns - f->first_ns < NSEC_PER_MSEC)
		return 0;
	return rate_bps(f->bytes, now_ns - f->first_ns);
}

/* flow.h says what a base costs */
_Static_assert(sizeof(struct caad_flow_base) == 48, "struct caad_flow_base grew: flow.h says what it costs");
_Static_assert(sizeof(struct caad_flow) <= 128, "struct caad_flow grew: flow.h and bench/README.md say 128 bytes");
/* what the planner reads of each flow, in its first 44 bytes (flow.h) */
_Static_assert(offsetof(struct caad_flow, rx_queue) + sizeof(int) <= 44, "the planner's fields moved");

void caad_flows_base(struct caad_flow_base *base, const struct caad_flow *flows, const uint64_t *at, size_t n,
                     uint64_t now_ns)
{
	for (size_t i = 0; i < n; i++) {
		const struct caad_flow *f = &flows[i];

		base[i] = (struct caad_flow_base){
			.id = f->id,
			.bytes = f->bytes,
			.bytes_ns = at ? at[i] : now_ns,
			.rate_bps = f->rate_bps,
			.tid = f->tid,
			.consumer_cpu = f->consumer_cpu,
			.n_consumer_history = f->n_consumer_history,
		};
		memcpy(base[i].consumer_history, f->consumer_history, sizeof(base[i].consumer_history));
	}
}

/* A flow's base, kept: its bytes were not read again since (see flow.h). */
static void keep_base(struct caad_flow *f, const struct caad_flow_base *p, uint64_t keep_ns, uint64_t now_ns)
{
	uint64_t age = now_ns > p->bytes_ns ? now_ns - p->bytes_ns : 0;

	f->bytes = p->bytes;
	f->rate_bps = age < keep_ns ? p->rate_bps : 0;
}

/*
 * A hand-over this soon after its base (an eighth of the scan period) is
 * not rated yet: the base kept, it is rated over a longer window later.
 * A pass takes a flow's base wherever it finds it, and a reader in bursts
 * hands its next burst's first read over a moment after: one read over a
 * fraction of a millisecond would rate a 170 Mbit/s flow at 16 Gbit/s.
 */
#define MIN_WINDOW_DIV 8

void caad_flows_update_rates(struct caad_flow *cur, size_t n_cur, const struct caad_flow_base *prev, size_t n_prev,
                             uint64_t *at, bool pass, uint64_t interval_ns, uint64_t keep_ns, uint64_t now_ns)
{
	size_t j = 0;

	assert(cur || n_cur == 0);
	assert(prev || n_prev == 0);

	for (size_t i = 0; i < n_cur; i++) {
		struct caad_flow *f = &cur[i];
		const struct caad_flow_base *p = NULL;
		/* when its bytes were read: 0, not since its base */
		uint64_t t = at ? MIN(at[i], now_ns) : now_ns;
		bool handed = at && at[i] && !pass;

		assert(i == 0 || cur[i - 1].id <= f->id);

		while (j < n_prev && prev[j].id < f->id)
			j++;
		/* First seen since its base's bytes were read, though its id
		 * was there: another socket at the same address. Its bytes are
		 * its own since first_ns. */
		if (j < n_prev && prev[j].id == f->id && f->first_ns <= prev[j].bytes_ns)
			p = &prev[j];

		if (!interval_ns) {
			if (!t)
				t = p ? p->bytes_ns : now_ns;
			f->rate_bps = 0;
		} else if (p && (!t || t <= p->bytes_ns || f->bytes == p->bytes || (handed && f->bytes < p->bytes) ||
		                 (handed && t - p->bytes_ns < interval_ns / MIN_WINDOW_DIV))) {
			keep_base(f, p, keep_ns, now_ns);
			t = p->bytes_ns;
		} else if (p)
			/* Bytes going backwards (a pass): the socket address was reused. */
			f->rate_bps = f->bytes < p->bytes ? 0 : rate_bps(f->bytes - p->bytes, t - p->bytes_ns);
		else {
			if (!t)
				t = now_ns; /* no base to have its bytes from: as of now */
			f->rate_bps = new_flow_rate(f, t);
		}
		if (at)
			at[i] = t;
	}
}

void caad_flows_update_history(struct caad_flow *cur, size_t n_cur, const struct caad_flow_base *prev,
                               size_t n_prev, uint64_t prev_ns)
{
	size_t j = 0;

	assert(cur || n_cur == 0);
	assert(prev || n_prev == 0);

	for (size_t i = 0; i < n_cur; i++) {
		struct caad_flow *f = &cur[i];
		const struct caad_flow_base *p;
		unsigned n = 0;

		assert(i == 0 || cur[i - 1].id <= f->id);

		f->n_consumer_history = 0;
		while (j < n_prev && prev[j].id < f->id)
			j++;
		if (j == n_prev || prev[j].id != f->id)
			continue;
		p = &prev[j];
		/* another socket at the same address (first seen after the
		 * snapshot, or after its base's bytes were read, as the rates
		 * tell one: caad_flows_update_rates()), or another reader */
		if (f->consumer_cpu < 0 || p->consumer_cpu < 0 || p->consumer_cpu > UINT16_MAX || f->bytes < p->bytes ||
		    f->tid != p->tid || (prev_ns && f->first_ns > prev_ns) || (p->bytes_ns && f->first_ns > p->bytes_ns))
			continue;
		f->consumer_history[n++] = (uint16_t)p->consumer_cpu;
		for (unsigned h = 0; h < p->n_consumer_history && n < CAAD_CONSUMER_HISTORY; h++)
			f->consumer_history[n++] = p->consumer_history[h];
		f->n_consumer_history = (uint8_t)n;
	}
}

/* ---- a set of flows ----------------------------------------------------- */

void caad_flow_set_keep_live(struct caad_flow_set *s, const struct caad_flow *flows, size_t n)
{
	size_t k = 0, j = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct caad_flow_set_entry *e = &s->v[i];

		while (j < n && flows[j].id < e->id)
			j++;
		if (j < n && flows[j].id == e->id && flows[j].first_ns == e->first_ns)
			s->v[k++] = *e;
	}
	s->n = k;
}

/* Where f's id is in s, or would go. */
static size_t flow_set_slot(const struct caad_flow_set *s, uint64_t id)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool caad_flow_set_has(const struct caad_flow_set *s, const struct caad_flow *f)
{
	size_t i = flow_set_slot(s, f->id);

	return i < s->n && s->v[i].id == f->id && s->v[i].first_ns == f->first_ns;
}

int caad_flow_set_add(struct caad_flow_set *s, const struct caad_flow *f)
{
	size_t i = flow_set_slot(s, f->id);

	if (i < s->n && s->v[i].id == f->id) {
		if (s->v[i].first_ns == f->first_ns)
			return 0;
		s->v[i].first_ns = f->first_ns; /* another socket at that address */
		return 1;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct caad_flow_set_entry *v = reallocarray(s->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(s->v[0]));
	s->v[i] = (struct caad_flow_set_entry){ .id = f->id, .first_ns = f->first_ns };
	s->n++;
	return 1;
}

void caad_flow_set_done(struct caad_flow_set *s)
{
	free(s->v);
	*s = (struct caad_flow_set){};
}
