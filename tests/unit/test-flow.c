/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "caad/macro.h"
#include "caad/flow.h"
#include "caad/observer-abi.h"
#include "child.h"

#define NSEC_PER_SEC UINT64_C(1000000000)
#define NSEC_PER_MSEC UINT64_C(1000000)

static struct caad_flow flow_v4(const char *l, uint16_t lport, const char *r, uint16_t rport)
{
	struct caad_flow f = { .family = AF_INET, .lport = lport, .rport = rport };

	assert_int_equal(inet_pton(AF_INET, l, f.laddr), 1);
	assert_int_equal(inet_pton(AF_INET, r, f.raddr), 1);
	return f;
}

static struct caad_flow flow_v6(const char *l, uint16_t lport, const char *r, uint16_t rport)
{
	struct caad_flow f = { .family = AF_INET6, .lport = lport, .rport = rport };

	assert_int_equal(inet_pton(AF_INET6, l, f.laddr), 1);
	assert_int_equal(inet_pton(AF_INET6, r, f.raddr), 1);
	return f;
}

static void test_format_tuple_v4(void **state)
{
	struct caad_flow f = flow_v4("10.0.0.2", 5201, "10.0.0.1", 40312);
	char buf[128];

	assert_int_equal(caad_flow_format_tuple(&f, buf, sizeof(buf)), 31);
	assert_string_equal(buf, "10.0.0.2:5201 <- 10.0.0.1:40312");

	f = flow_v4("255.255.255.255", 65535, "0.0.0.0", 0);
	assert_int_equal(caad_flow_format_tuple(&f, buf, sizeof(buf)), 34);
	assert_string_equal(buf, "255.255.255.255:65535 <- 0.0.0.0:0");
}

static void test_format_tuple_v6(void **state)
{
	struct caad_flow f = flow_v6("fd00::2", 5201, "fd00::1", 40312);
	char buf[128];

	assert_int_equal(caad_flow_format_tuple(&f, buf, sizeof(buf)), 33);
	assert_string_equal(buf, "[fd00::2]:5201 <- [fd00::1]:40312");

	f = flow_v6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535, "::ffff:10.0.0.1", 443);
	int r = caad_flow_format_tuple(&f, buf, sizeof(buf));
	assert_string_equal(buf, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535 <- [::ffff:10.0.0.1]:443");
	assert_int_equal(r, strlen(buf));
}

static void test_format_tuple_v4mapped(void **state)
{
	/* a dual-stack listener's IPv4 peer reads as IPv4 */
	struct caad_flow f = flow_v6("::ffff:10.99.0.2", 5201, "::ffff:10.99.0.1", 51808);
	char buf[128];

	assert_int_equal(caad_flow_format_tuple(&f, buf, sizeof(buf)), (int)strlen("10.99.0.2:5201 <- 10.99.0.1:51808"));
	assert_string_equal(buf, "10.99.0.2:5201 <- 10.99.0.1:51808");
}

static void test_format_tuple_unknown(void **state)
{
	struct caad_flow f = { .family = AF_UNIX };
	char buf[16];

	assert_int_equal(caad_flow_format_tuple(&f, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "?");

	f.family = 0;
	assert_int_equal(caad_flow_format_tuple(&f, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "?");
}

static void test_format_tuple_nobufs(void **state)
{
	struct caad_flow f = flow_v4("10.0.0.2", 5201, "10.0.0.1", 40312);
	const char *want = "10.0.0.2:5201 <- 10.0.0.1:40312";
	char buf[64];

	memset(buf, 'x', sizeof(buf));
	assert_int_equal(caad_flow_format_tuple(&f, buf, strlen(want)), -ENOBUFS);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'x');
	assert_int_equal(caad_flow_format_tuple(&f, buf, strlen(want) + 1), strlen(want));
	assert_string_equal(buf, want);
	assert_int_equal(caad_flow_format_tuple(&f, NULL, 0), -ENOBUFS);

	f.family = AF_UNIX;
	assert_int_equal(caad_flow_format_tuple(&f, buf, 1), -ENOBUFS);
	assert_int_equal(caad_flow_format_tuple(&f, buf, 2), 1);
	assert_string_equal(buf, "?");
}

static struct caad_flow_record record_sample(void)
{
	struct caad_flow_record s = {
		.sk = UINT64_C(0xffff888112345678),
		.family = AF_INET,
		.lport = 5201,
		.rport = 40312,
		.consumer_pid = 4711,
		.consumer_tid = 4712,
		.consumer_cpu = 4,
		.comm = "iperf3",
		.bytes = 123456789,
		.proc_cpu = 5,
		.rx_ifindex = 3,
		.napi_id = 8193,
		.rx_queue = 7,
		.first_ns = 1000,
	};

	s.laddr[0] = 10, s.laddr[3] = 2;
	s.raddr[0] = 10, s.raddr[3] = 1;
	return s;
}

/* A record handed over onto the listed flow of its socket's address: the
 * same connection keeps its rate, window and bytes; another one at the
 * address (the socket freed and its memory taken again) starts anew, and
 * the close of an earlier one there leaves the listed one be. */
static void test_merge_record(void **state)
{
	struct caad_flow_record s = record_sample();
	struct caad_flow f;

	caad_flow_from_record(&f, &s);
	f.rate_bps = 7000000000;
	f.consumer_history[0] = 3;
	f.n_consumer_history = 1;

	s.bytes = 1000; /* fewer than a pass read since */
	s.consumer_cpu = 6;
	assert_int_equal(caad_flow_merge_record(&f, &s), CAAD_MERGE_LIVE);
	assert_int_equal(f.bytes, 123456789);
	assert_int_equal(f.rate_bps, 7000000000);
	assert_int_equal(f.n_consumer_history, 1);
	assert_int_equal(f.consumer_cpu, 6);

	s.closed = 1;
	s.first_ns = 500; /* an earlier connection at the address */
	assert_int_equal(caad_flow_merge_record(&f, &s), CAAD_MERGE_OTHER);
	assert_int_equal(f.rate_bps, 7000000000);
	assert_int_equal(f.first_ns, 1000);
	s.first_ns = 1000;
	assert_int_equal(caad_flow_merge_record(&f, &s), CAAD_MERGE_GONE);
	/* a later connection's close (it opened and closed at the address
	 * within a scan, its record replacing this one's close): gone too */
	s.first_ns = 1500;
	assert_int_equal(caad_flow_merge_record(&f, &s), CAAD_MERGE_GONE);

	s.closed = 0;
	s.first_ns = 2000; /* a new one at the address */
	s.bytes = 10;
	assert_int_equal(caad_flow_merge_record(&f, &s), CAAD_MERGE_LIVE);
	assert_int_equal(f.first_ns, 2000);
	assert_int_equal(f.bytes, 10);
	assert_int_equal(f.rate_bps, 0);
	assert_int_equal(f.n_consumer_history, 0);
}

static void test_from_record(void **state)
{
	struct caad_flow_record s = record_sample();
	struct caad_flow f;
	char buf[64];

	memset(&f, 0xa5, sizeof(f));
	caad_flow_from_record(&f, &s);

	assert_int_equal(f.id, UINT64_C(0xffff888112345678));
	assert_int_equal(f.family, AF_INET);
	assert_memory_equal(f.laddr, s.laddr, 16);
	assert_memory_equal(f.raddr, s.raddr, 16);
	assert_int_equal(f.lport, 5201);
	assert_int_equal(f.rport, 40312);
	assert_int_equal(f.pid, 4711);
	assert_int_equal(f.tid, 4712);
	assert_string_equal(f.comm, "iperf3");
	assert_int_equal(f.consumer_cpu, 4);
	assert_int_equal(f.proc_cpu, 5);
	assert_int_equal(f.ifindex, 3);
	assert_int_equal(f.rx_queue, 7);
	assert_int_equal(f.napi_id, 8193);
	assert_int_equal(f.bytes, 123456789);
	assert_int_equal(f.rate_bps, 0);
	assert_int_equal(f.first_ns, 1000);

	assert_int_equal(caad_flow_format_tuple(&f, buf, sizeof(buf)), 31);
	assert_string_equal(buf, "10.0.0.2:5201 <- 10.0.0.1:40312");
}

static void test_from_record_unknown(void **state)
{
	struct caad_flow_record s = record_sample();
	struct caad_flow f;

	s.consumer_cpu = CAAD_CPU_NONE;
	s.proc_cpu = CAAD_CPU_NONE;
	s.rx_queue = 65535;
	s.napi_id = 256; /* a sender_cpu hint, not a NAPI id */
	s.rx_ifindex = 0;
	caad_flow_from_record(&f, &s);
	assert_int_equal(f.consumer_cpu, -1);
	assert_int_equal(f.proc_cpu, -1);
	assert_int_equal(f.rx_queue, -1);
	assert_int_equal(f.napi_id, 0);
	assert_int_equal(f.ifindex, 0);

	s.rx_queue = CAAD_CPU_NONE;
	s.napi_id = 257;
	s.consumer_cpu = 0;
	s.proc_cpu = 0;
	caad_flow_from_record(&f, &s);
	assert_int_equal(f.rx_queue, -1);
	assert_int_equal(f.napi_id, 257);
	assert_int_equal(f.consumer_cpu, 0);
	assert_int_equal(f.proc_cpu, 0);

	s.rx_queue = 0;
	s.napi_id = 0;
	caad_flow_from_record(&f, &s);
	assert_int_equal(f.rx_queue, 0);
	assert_int_equal(f.napi_id, 0);

	s.rx_queue = 65534;
	caad_flow_from_record(&f, &s);
	assert_int_equal(f.rx_queue, 65534);
}

static void test_from_record_comm(void **state)
{
	struct caad_flow_record s = record_sample();
	struct caad_flow f;

	/* Not NUL-terminated in the map: truncated to fit. */
	memcpy(s.comm, "0123456789abcdef", CAAD_COMM_LEN);
	caad_flow_from_record(&f, &s);
	assert_string_equal(f.comm, "0123456789abcde");

	memset(s.comm, 0, sizeof(s.comm));
	caad_flow_from_record(&f, &s);
	assert_string_equal(f.comm, "");

	/* Bytes after the NUL are not copied. */
	memcpy(s.comm, "ab\0cdefghijklmn", CAAD_COMM_LEN);
	memset(&f, 'z', sizeof(f));
	caad_flow_from_record(&f, &s);
	assert_string_equal(f.comm, "ab");
	for (size_t i = 2; i < sizeof(f.comm); i++)
		assert_int_equal(f.comm[i], 0);

	/* a thread names itself: no line breaks, escapes or stray bytes */
	memset(s.comm, 0, sizeof(s.comm));
	memcpy(s.comm, "x\n<0>\x1b[2J\xff\xc2\x9b", 12);
	caad_flow_from_record(&f, &s);
	assert_string_equal(f.comm, "x?<0>?[2J???");
}

static void test_from_record_v6(void **state)
{
	struct caad_flow_record s = record_sample();
	struct caad_flow f;
	char buf[128];

	s.family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "fd00::2", s.laddr), 1);
	assert_int_equal(inet_pton(AF_INET6, "fd00::1", s.raddr), 1);
	caad_flow_from_record(&f, &s);
	assert_int_equal(f.family, AF_INET6);
	assert_int_equal(caad_flow_format_tuple(&f, buf, sizeof(buf)), 33);
	assert_string_equal(buf, "[fd00::2]:5201 <- [fd00::1]:40312");
}

static void test_sort(void **state)
{
	const uint64_t ids[] = { 5, UINT64_MAX, 1, UINT64_C(0x8000000000000000), 0, 42, UINT64_C(0x7fffffffffffffff), 3 };
	const uint64_t want[] = { 0, 1, 3, 5, 42, UINT64_C(0x7fffffffffffffff), UINT64_C(0x8000000000000000), UINT64_MAX };
	struct caad_flow flows[ARRAY_SIZE(ids)];

	for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
		flows[i] = (struct caad_flow){ .id = ids[i], .bytes = ids[i] ^ 0x55 };

	caad_flows_sort(flows, ARRAY_SIZE(flows));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		assert_int_equal(flows[i].id, want[i]);
		assert_int_equal(flows[i].bytes, want[i] ^ 0x55); /* moved whole */
	}

	caad_flows_sort(NULL, 0);
	caad_flows_sort(flows, 1);
	assert_int_equal(flows[0].id, 0);
}

/* Many flows in a random order (long cycles of the permutation, repeated
 * ids): sorted, and each moved whole, none lost or doubled; with aux, each
 * aux[i] moved along with its flow. */
static void sort_many(bool with_aux)
{
	enum { N = 5000 };
	struct caad_flow *flows = calloc(N, sizeof(*flows));
	uint64_t *aux = calloc(N, sizeof(*aux));
	unsigned seen[N] = { 0 };
	uint64_t ids[N], x = 88172645463325252ull;

	assert_non_null(flows);
	assert_non_null(aux);
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		ids[i] = x % (N / 2);
		flows[i] = (struct caad_flow){ .id = ids[i], .bytes = i };
		aux[i] = i * 7 + 1;
	}
	if (with_aux)
		assert_int_equal(caad_flows_sort_aux(flows, aux, N), 0);
	else
		caad_flows_sort(flows, N);
	for (size_t i = 0; i < N; i++) {
		if (i > 0)
			assert_true(flows[i - 1].id <= flows[i].id);
		assert_true(flows[i].bytes < N);
		assert_int_equal(flows[i].id, ids[flows[i].bytes]); /* moved whole */
		if (with_aux)
			assert_int_equal(aux[i], flows[i].bytes * 7 + 1);
		else
			assert_int_equal(aux[i], i * 7 + 1); /* not touched */
		seen[flows[i].bytes]++;
	}
	for (size_t i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	free(aux);
	free(flows);
}

static void test_sort_many(void **state)
{
	sort_many(false);
}

static void test_sort_many_aux(void **state)
{
	sort_many(true);
}

/* The library's calls with the previous snapshot given as flows, whose
 * bytes were read at prev_at: their bases are what the observer keeps. The
 * new snapshot's were read at at[i] (NULL: now_ns); a rate is kept for
 * two intervals. */
static void rates_keep(struct caad_flow *cur, size_t n_cur, const struct caad_flow *prev, size_t n_prev,
                       uint64_t prev_at, uint64_t *at, uint64_t interval_ns, uint64_t keep_ns, uint64_t now_ns);

static void rates_read_at(struct caad_flow *cur, size_t n_cur, const struct caad_flow *prev, size_t n_prev,
                          uint64_t prev_at, uint64_t *at, uint64_t interval_ns, uint64_t now_ns)
{
	rates_keep(cur, n_cur, prev, n_prev, prev_at, at, interval_ns, 2 * interval_ns, now_ns);
}

static void rates_keep(struct caad_flow *cur, size_t n_cur, const struct caad_flow *prev, size_t n_prev,
                       uint64_t prev_at, uint64_t *at, uint64_t interval_ns, uint64_t keep_ns, uint64_t now_ns)
{
	_cleanup_free_ struct caad_flow_base *base = n_prev ? calloc(n_prev, sizeof(*base)) : NULL;

	assert_true(base || n_prev == 0);
	caad_flows_base(base, prev, NULL, n_prev, prev_at);
	for (size_t i = 0; i < n_prev; i++) {
		assert_int_equal(base[i].bytes_ns, prev_at);
		assert_int_equal(base[i].rate_bps, prev[i].rate_bps);
	}
	/* without read times, a pass's: every flow read at now_ns */
	caad_flows_update_rates(cur, n_cur, base, n_prev, at, !at, interval_ns, keep_ns, now_ns);
}

/* Every flow's bytes read at its snapshot (a pass of the iterator each). */
static void update_rates(struct caad_flow *cur, size_t n_cur, const struct caad_flow *prev, size_t n_prev,
                         uint64_t interval_ns, uint64_t now_ns)
{
	assert_true(interval_ns <= now_ns);
	rates_read_at(cur, n_cur, prev, n_prev, now_ns - interval_ns, NULL, interval_ns, now_ns);
}

static void update_history(struct caad_flow *cur, size_t n_cur, const struct caad_flow *prev, size_t n_prev,
                           uint64_t prev_ns)
{
	_cleanup_free_ struct caad_flow_base *base = n_prev ? calloc(n_prev, sizeof(*base)) : NULL;

	assert_true(base || n_prev == 0);
	caad_flows_base(base, prev, NULL, n_prev, prev_ns);
	caad_flows_update_history(cur, n_cur, base, n_prev, prev_ns);
}

/* A snapshot's time in these tests, when a call does not say otherwise. */
#define NOW (10 * NSEC_PER_SEC)

static struct caad_flow flow_at(uint64_t id, uint64_t bytes, uint64_t first_ns)
{
	return (struct caad_flow){ .id = id, .bytes = bytes, .first_ns = first_ns, .rate_bps = UINT64_C(0xdeadbeef) };
}

static void test_rates_normal(void **state)
{
	struct caad_flow prev[] = {
		flow_at(10, 1000000, 0),
		flow_at(20, 0, 0),
	};
	struct caad_flow cur[] = {
		flow_at(10, 2000000, 0), /* 1 MB in 1 s */
		flow_at(20, 125, 0),     /* 125 B in 1 s */
	};

	update_rates(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 8000000);
	assert_int_equal(cur[1].rate_bps, 1000);

	/* Over half a second: twice the rate. */
	update_rates(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), NSEC_PER_SEC / 2, NOW);
	assert_int_equal(cur[0].rate_bps, 16000000);
	assert_int_equal(cur[1].rate_bps, 2000);

	/* No bytes: the base's rate kept for two intervals, then 0. */
	cur[0].bytes = prev[0].bytes;
	prev[0].rate_bps = 5;
	update_rates(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 5);
	rates_read_at(cur, 1, prev, 1, NOW - 2 * NSEC_PER_SEC, NULL, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 0);

	/* Rounds down. */
	cur[0].bytes = prev[0].bytes + 1;
	update_rates(cur, 1, prev, ARRAY_SIZE(prev), 3 * NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 2);
}

static void test_rates_bytes_reset(void **state)
{
	struct caad_flow prev[] = { flow_at(10, 5000000, 0) };
	/* Same socket address, a new connection that read less. */
	struct caad_flow cur[] = { flow_at(10, 1000, 0) };

	update_rates(cur, 1, prev, 1, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 0);
}

/* An id of the snapshot before, first seen since: another socket at the
 * same address (or evicted and seen again), rated as new, whether it read
 * more or less than the old one. */
static void test_rates_address_reused(void **state)
{
	struct caad_flow prev[] = { flow_at(10, 5000000, 0), flow_at(20, 1000, 0) };
	struct caad_flow cur[] = {
		flow_at(10, 1000000, NOW - NSEC_PER_SEC / 2), /* less: 1 MB over 0.5 s */
		flow_at(20, 3000000, NOW - NSEC_PER_SEC / 4), /* more: 3 MB over 0.25 s */
	};

	update_rates(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 16000000);
	assert_int_equal(cur[1].rate_bps, 96000000);

	/* first seen exactly at the snapshot before: the same flow */
	cur[1].first_ns = NOW - NSEC_PER_SEC;
	update_rates(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), NSEC_PER_SEC, NOW);
	assert_int_equal(cur[1].rate_bps, (3000000 - 1000) * 8);
}

static void test_rates_new_flow(void **state)
{
	struct caad_flow prev[] = { flow_at(10, 0, 0) };
	/* rated from first seen to the snapshot (NOW) */
	struct caad_flow cur[] = {
		flow_at(5, 1000000, NOW - 2 * NSEC_PER_SEC),      /* 1 MB over 2 s */
		flow_at(15, 1000000, NOW - NSEC_PER_MSEC),        /* exactly 1 ms */
		flow_at(16, 1000000, NOW - NSEC_PER_MSEC + 1),    /* under 1 ms */
		flow_at(17, 1000000, NOW),                        /* no span */
		flow_at(18, 1000000, NOW + NSEC_PER_SEC),         /* first seen after the snapshot began */
	};

	update_rates(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 4000000);
	assert_int_equal(cur[1].rate_bps, UINT64_C(8000000000));
	assert_int_equal(cur[2].rate_bps, 0);
	assert_int_equal(cur[3].rate_bps, 0);
	assert_int_equal(cur[4].rate_bps, 0);

	/* No previous snapshot at all. */
	cur[0].rate_bps = 1;
	update_rates(cur, 1, NULL, 0, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 4000000);
	/* the same flow, a second later: over 3 s */
	update_rates(cur, 1, NULL, 0, NSEC_PER_SEC, NOW + NSEC_PER_SEC);
	assert_int_equal(cur[0].rate_bps, 2666666);
}

static void test_rates_zero_interval(void **state)
{
	struct caad_flow prev[] = { flow_at(10, 0, 0) };
	struct caad_flow cur[] = {
		flow_at(10, 1000000, 0),
		flow_at(11, 1000000, 0), /* new */
	};

	update_rates(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), 0, NOW);
	assert_int_equal(cur[0].rate_bps, 0);
	assert_int_equal(cur[1].rate_bps, 0);
}

static void test_rates_large(void **state)
{
	const uint64_t half = UINT64_C(1) << 63;
	/* snapshots at the end of time: every interval fits before them */
	struct caad_flow prev[] = {
		flow_at(1, half - 1000, 0),
		flow_at(2, 0, 0),
		flow_at(3, 0, 0),
		flow_at(4, 1, 0),
	};
	struct caad_flow cur[] = {
		flow_at(1, half + 1000, 0),                  /* 2000 B around 2^63 */
		flow_at(2, UINT64_C(1) << 62, 0),            /* bytes * 8e9 overflows 64 bits */
		flow_at(3, half, 0),                         /* the rate itself overflows */
		flow_at(4, UINT64_MAX, 0),
		flow_at(5, UINT64_MAX, 0),                      /* new, huge span (now UINT64_MAX) */
	};

	update_rates(cur, 4, prev, ARRAY_SIZE(prev), NSEC_PER_SEC, UINT64_MAX);
	assert_int_equal(cur[0].rate_bps, 16000);
	/* 2^62 B * 8 * 1e9 / 1e9 ns = 2^65 bit/s: saturates. */
	assert_int_equal(cur[1].rate_bps, UINT64_MAX);
	assert_int_equal(cur[2].rate_bps, UINT64_MAX);
	assert_int_equal(cur[3].rate_bps, UINT64_MAX);

	/* 2^62 B over 2^40 ns = 2^22 * 8e9 bit/s, exact. */
	update_rates(cur, 2, prev, ARRAY_SIZE(prev), UINT64_C(1) << 40, UINT64_MAX);
	assert_int_equal(cur[0].rate_bps, 14); /* floor(16000e9 / 2^40) */
	assert_int_equal(cur[1].rate_bps, UINT64_C(33554432000000000));

	/* (2^64 - 2) B over 2^63 ns. */
	update_rates(cur, 4, prev, ARRAY_SIZE(prev), half, UINT64_MAX);
	assert_int_equal(cur[3].rate_bps, UINT64_C(15999999999)); /* floor((2^64-2)*8e9 / 2^63) */

	update_rates(&cur[4], 1, prev, ARRAY_SIZE(prev), NSEC_PER_SEC, UINT64_MAX);
	assert_int_equal(cur[4].rate_bps, UINT64_C(8000000000));
}

static void test_rates_merge(void **state)
{
	/* Closed flows in prev, new ones in cur, interleaved. */
	struct caad_flow prev[] = {
		flow_at(2, 100, 0),
		flow_at(4, 100, 0),
		flow_at(6, 100, 0),
		flow_at(9, 100, 0),
		flow_at(100, 100, 0),
	};
	struct caad_flow cur[] = {
		flow_at(1, 1000, NOW - 2 * NSEC_PER_SEC), /* new: 500 B/s */
		flow_at(4, 225, 0),                       /* +125 B */
		flow_at(5, 0, NOW),                       /* new, no span */
		flow_at(9, 350, 0),                       /* +250 B */
		flow_at(50, 2000, NOW - 4 * NSEC_PER_SEC), /* new: 500 B/s */
		flow_at(200, 100, NOW),                   /* new, no span */
	};

	caad_flows_sort(prev, ARRAY_SIZE(prev));
	caad_flows_sort(cur, ARRAY_SIZE(cur));
	update_rates(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 4000);
	assert_int_equal(cur[1].rate_bps, 1000);
	assert_int_equal(cur[2].rate_bps, 0);
	assert_int_equal(cur[3].rate_bps, 2000);
	assert_int_equal(cur[4].rate_bps, 4000);
	assert_int_equal(cur[5].rate_bps, 0);

	/* Nothing current: nothing to do, nothing read out of bounds. */
	update_rates(NULL, 0, prev, ARRAY_SIZE(prev), NSEC_PER_SEC, NOW);
}

/* Flows handed over: each rated over the time between the two reads of its
 * bytes, not between the two snapshots. */
static void test_rates_read_times(void **state)
{
	struct caad_flow prev[] = { flow_at(10, 1000000, 0), flow_at(20, 1000000, 0), flow_at(30, 0, 0) };
	struct caad_flow cur[] = {
		flow_at(10, 2000000, 0),                       /* 1 MB, read 0.25 s after the base's */
		flow_at(20, 2000000, 0),                       /* 1 MB, "read" after the snapshot */
		flow_at(30, 1000, 0),                          /* 1000 B, read at the snapshot */
		flow_at(40, 1000000, NOW - NSEC_PER_SEC),      /* new: 1 MB over 0.5 s to its read */
		flow_at(50, 1000000, NOW - NSEC_PER_SEC / 2),  /* new, no read time: to now */
	};
	uint64_t base_at = NOW - NSEC_PER_SEC + NSEC_PER_SEC / 2; /* the base's bytes, half an interval late */
	uint64_t at[] = { base_at + NSEC_PER_SEC / 4, NOW + 1, NOW, NOW - NSEC_PER_SEC / 2, 0 };

	rates_read_at(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), base_at, at, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 32000000);
	assert_int_equal(cur[1].rate_bps, 16000000); /* at most now: over 0.5 s */
	assert_int_equal(cur[2].rate_bps, 16000);
	assert_int_equal(cur[3].rate_bps, 16000000);
	assert_int_equal(cur[4].rate_bps, 16000000);
	/* when each one's bytes were read, for the next base */
	assert_int_equal(at[0], base_at + NSEC_PER_SEC / 4);
	assert_int_equal(at[1], NOW);
	assert_int_equal(at[2], NOW);
	assert_int_equal(at[3], NOW - NSEC_PER_SEC / 2);
	assert_int_equal(at[4], NOW);
}

/* A flow not handed over since its base: it keeps the base's rate while
 * that read is less than two intervals old (a reader between bursts),
 * then reads 0 (one that stopped); its bytes stay read at the base's time. */
static void test_rates_kept(void **state)
{
	struct caad_flow prev[] = { flow_at(10, 1000000, 0), flow_at(20, 1000000, NOW - 5 * NSEC_PER_SEC) };
	struct caad_flow cur[] = { flow_at(10, 1000000, 0), flow_at(20, 1000000, NOW - 5 * NSEC_PER_SEC) };
	uint64_t at[2] = { 0, 0 };

	prev[0].rate_bps = 777;
	prev[1].rate_bps = 999;
	/* read 1.9 intervals ago */
	rates_read_at(cur, 2, prev, 2, NOW - 19 * NSEC_PER_SEC / 10, at, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 777);
	assert_int_equal(cur[1].rate_bps, 999);
	assert_int_equal(at[0], NOW - 19 * NSEC_PER_SEC / 10);
	assert_int_equal(at[1], NOW - 19 * NSEC_PER_SEC / 10);
	/* exactly two intervals ago: 0 */
	at[0] = at[1] = 0;
	rates_read_at(cur, 2, prev, 2, NOW - 2 * NSEC_PER_SEC, at, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 0);
	assert_int_equal(cur[1].rate_bps, 0);
	assert_int_equal(at[0], NOW - 2 * NSEC_PER_SEC);
	/* a read time not after the base's: none since */
	at[0] = NOW - 3 * NSEC_PER_SEC / 2;
	at[1] = 0;
	rates_read_at(cur, 2, prev, 2, NOW - NSEC_PER_SEC, at, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 777);
	assert_int_equal(at[0], NOW - NSEC_PER_SEC);
	/* the first snapshot after none: no rates */
	at[0] = at[1] = 0;
	rates_read_at(cur, 2, prev, 2, NOW - NSEC_PER_SEC, at, 0, NOW);
	assert_int_equal(cur[0].rate_bps, 0);
	assert_int_equal(cur[1].rate_bps, 0);
	/* another socket at the address, first seen since: rated as new, now */
	cur[1].first_ns = NOW - NSEC_PER_SEC / 2;
	at[0] = at[1] = 0;
	rates_read_at(cur, 2, prev, 2, NOW - NSEC_PER_SEC, at, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[1].rate_bps, 16000000);
	assert_int_equal(at[1], NOW);
	/* how long it is kept is the caller's (two scan periods, which an
	 * early snapshot's short interval does not shorten) */
	at[0] = 0;
	rates_keep(cur, 1, prev, 1, NOW - NSEC_PER_SEC, at, NSEC_PER_SEC / 20, 2 * NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 777);
}

/* A hand-over at the start of a burst (nothing read since the base), one
 * not after the base's read, and one with fewer bytes than the base (handed
 * over before a pass read them): the base kept, its bytes and its time. */
static void test_rates_kept_handed_over(void **state)
{
	const uint64_t base_at = NOW - NSEC_PER_SEC;
	struct caad_flow prev[] = { flow_at(10, 5000, 0), flow_at(20, 5000, 0), flow_at(30, 5000, 0),
		                    flow_at(40, 5000, 0) };
	struct caad_flow cur[] = { flow_at(10, 5000, 0), flow_at(20, 6000, 0), flow_at(30, 4000, 0),
		                   flow_at(40, 6000, 0) };
	uint64_t at[] = { NOW - NSEC_PER_SEC / 10, base_at, NOW - NSEC_PER_SEC / 10, base_at + NSEC_PER_SEC / 8 };

	for (size_t i = 0; i < ARRAY_SIZE(prev); i++)
		prev[i].rate_bps = 100 + i;
	rates_read_at(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), base_at, at, NSEC_PER_SEC, NOW);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(cur[i].rate_bps, 100 + i);
		assert_int_equal(cur[i].bytes, 5000);
		assert_int_equal(at[i], base_at);
	}
	/* an eighth of the period after it: rated */
	assert_int_equal(cur[3].rate_bps, 64000);
	assert_int_equal(cur[3].bytes, 6000);
	assert_int_equal(at[3], base_at + NSEC_PER_SEC / 8);

	/* a burst's first read handed over a moment after a pass took the
	 * base: not rated over that moment (1 ms: 8 Mbit/s for 1000 bytes),
	 * the base kept for a longer window */
	cur[3].bytes = 6000;
	at[3] = base_at + NSEC_PER_MSEC;
	rates_read_at(&cur[3], 1, &prev[3], 1, base_at, &at[3], NSEC_PER_SEC, NOW);
	assert_int_equal(cur[3].rate_bps, 103);
	assert_int_equal(cur[3].bytes, 5000);
	assert_int_equal(at[3], base_at);

	/* nothing read since a base two intervals old: 0 */
	at[0] = NOW - NSEC_PER_SEC / 10;
	rates_read_at(cur, 1, prev, 1, NOW - 2 * NSEC_PER_SEC, at, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[0].rate_bps, 0);
	assert_int_equal(at[0], NOW - 2 * NSEC_PER_SEC);

	/* read by a pass, fewer bytes: another socket (rate 0), not kept */
	cur[2].bytes = 4000;
	rates_read_at(&cur[2], 1, &prev[2], 1, base_at, NULL, NSEC_PER_SEC, NOW);
	assert_int_equal(cur[2].rate_bps, 0);
	assert_int_equal(cur[2].bytes, 4000);
}

/* A record's time from the low 32 bits of the clock in microseconds: before
 * now or after it (handed over as the drain ran), across a wrap of those
 * bits, and 0 for a pass's record. */
static void test_record_time(void **state)
{
	const uint64_t now = UINT64_C(5000000000000) + 123456789; /* about 83 minutes: past a wrap */
	const uint64_t now_us = now / 1000;
	struct caad_flow_record r = {};

	assert_int_equal(caad_flow_record_time(&r, now), now);
	r.at_us = (uint32_t)(now_us - 250000); /* 0.25 s before */
	assert_int_equal(caad_flow_record_time(&r, now), now - 250000000); /* to within 1 us */
	r.at_us = (uint32_t)(now_us + 3); /* 3 us after */
	assert_int_equal(caad_flow_record_time(&r, now), now + 3000);
	r.at_us = (uint32_t)now_us;
	assert_int_equal(caad_flow_record_time(&r, now), now);
	/* across a wrap of the 32 bits: just before and just after it */
	const uint64_t wrap_ns = (UINT64_C(1) << 32) * 1000;
	r.at_us = UINT32_MAX; /* 1 us before the wrap */
	assert_int_equal(caad_flow_record_time(&r, wrap_ns + 5000), wrap_ns - 1000);
	r.at_us = 2;
	assert_int_equal(caad_flow_record_time(&r, wrap_ns - 1000), wrap_ns + 2000);
	/* before the clock began: not below 1 */
	r.at_us = UINT32_MAX - 10;
	assert_int_equal(caad_flow_record_time(&r, 1000), 1);
}

/* The lower bound the daemon's id lookups share, over flows by id. */
static void test_lower_bound(void **state)
{
	struct caad_flow f[] = { flow_at(10, 0, 0), flow_at(20, 0, 0), flow_at(20, 1, 0), flow_at(30, 0, 0) };
	const uint64_t ids[] = { 5, 7, 7, 9 };

	assert_int_equal(LOWER_BOUND_BY(f, 0, id, 10), 0);
	assert_int_equal(LOWER_BOUND_BY(f, ARRAY_SIZE(f), id, 0), 0);
	assert_int_equal(LOWER_BOUND_BY(f, ARRAY_SIZE(f), id, 10), 0);
	assert_int_equal(LOWER_BOUND_BY(f, ARRAY_SIZE(f), id, 11), 1);
	assert_int_equal(LOWER_BOUND_BY(f, ARRAY_SIZE(f), id, 20), 1); /* the first of equals */
	assert_int_equal(LOWER_BOUND_BY(f, ARRAY_SIZE(f), id, 21), 3);
	assert_int_equal(LOWER_BOUND_BY(f, ARRAY_SIZE(f), id, 30), 3);
	assert_int_equal(LOWER_BOUND_BY(f, ARRAY_SIZE(f), id, 31), 4);
	assert_int_equal(LOWER_BOUND_BY(f, ARRAY_SIZE(f), id, UINT64_MAX), 4);
	/* another member: bytes is not sorted here but the first two are */
	assert_int_equal(LOWER_BOUND_BY(f, 2, bytes, 0), 0);
	/* plain ids, key at offset 0 */
	assert_int_equal(caad_lower_bound_u64(ids, ARRAY_SIZE(ids), sizeof(*ids), 0, 7), 1);
	assert_int_equal(caad_lower_bound_u64(ids, ARRAY_SIZE(ids), sizeof(*ids), 0, 8), 3);
	assert_int_equal(caad_lower_bound_u64(ids, ARRAY_SIZE(ids), sizeof(*ids), 0, 10), 4);
}

static struct caad_flow reader(uint64_t id, uint32_t tid, int cpu, uint64_t bytes)
{
	return (struct caad_flow){ .id = id, .tid = tid, .consumer_cpu = cpu, .bytes = bytes };
}

static void assert_history(const struct caad_flow *f, unsigned n, const int *want)
{
	assert_int_equal(f->n_consumer_history, n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(f->consumer_history[i], want[i]);
}

/* The consumer's window: each scan's CPU, the latest first, at most
 * CAAD_CONSUMER_HISTORY of the scans before; a new flow, a reused socket,
 * another reader or an unknown CPU starts it over. */
static void test_history(void **state)
{
	struct caad_flow prev[] = {
		reader(1, 10, 4, 100),  /* hops 4 -> 6 */
		reader(2, 11, 5, 100),  /* another thread reads it now */
		reader(3, 12, 7, 100),  /* bytes go back: another socket */
		reader(5, 14, 3, 100),  /* consumer CPU unknown now */
		reader(6, 15, -1, 100), /* was unknown */
		reader(7, 16, 8, 100),  /* already a full window */
	};
	struct caad_flow cur[] = {
		reader(1, 10, 6, 200), reader(2, 99, 5, 200), reader(3, 12, 7, 50), reader(4, 13, 2, 10),
		reader(5, 14, -1, 200), reader(6, 15, 9, 200), reader(7, 16, 8, 200),
	};
	const int h7[] = { 8, 9, 10 };

	(void)state;
	prev[0].consumer_history[0] = 6;
	prev[0].n_consumer_history = 1;
	prev[5].consumer_history[0] = 9;
	prev[5].consumer_history[1] = 10;
	prev[5].consumer_history[2] = 11;
	prev[5].n_consumer_history = 3;
	update_history(cur, ARRAY_SIZE(cur), prev, ARRAY_SIZE(prev), NOW - NSEC_PER_SEC);
	{
		const int want[] = { 4, 6 };
		assert_history(&cur[0], 2, want);
	}
	assert_history(&cur[1], 0, NULL);
	assert_history(&cur[2], 0, NULL);
	assert_history(&cur[3], 0, NULL);
	assert_history(&cur[4], 0, NULL);
	assert_history(&cur[5], 0, NULL);
	assert_history(&cur[6], 3, h7);

	/* over successive snapshots, the window slides */
	struct caad_flow a = reader(1, 10, 4, 0), b;
	for (int cpu = 5; cpu <= 9; cpu++) {
		b = reader(1, 10, cpu, (uint64_t)cpu);
		update_history(&b, 1, &a, 1, 0);
		a = b;
	}
	{
		const int want[] = { 8, 7, 6 };
		assert_int_equal(a.consumer_cpu, 9);
		assert_history(&a, 3, want);
	}

	/* another socket at the address, first seen since the snapshot
	 * before, read by the same thread: its window starts over */
	a = reader(1, 10, 4, 100);
	b = reader(1, 10, 5, 200);
	b.first_ns = NOW - NSEC_PER_SEC / 2;
	update_history(&b, 1, &a, 1, NOW - NSEC_PER_SEC);
	assert_history(&b, 0, NULL);
	b.first_ns = NOW - 2 * NSEC_PER_SEC; /* seen before it: the same flow */
	update_history(&b, 1, &a, 1, NOW - NSEC_PER_SEC);
	assert_int_equal(b.n_consumer_history, 1);
	/* a base whose bytes were read before its snapshot's time (a
	 * hand-over): first seen after that read, it is another socket, as
	 * the rates take it, though not after the snapshot */
	{
		struct caad_flow_base base;
		uint64_t at = NOW - 2 * NSEC_PER_SEC;

		caad_flows_base(&base, &a, &at, 1, NOW - NSEC_PER_SEC);
		b.first_ns = NOW - 3 * NSEC_PER_SEC / 2;
		caad_flows_update_history(&b, 1, &base, 1, NOW - NSEC_PER_SEC);
		assert_history(&b, 0, NULL);
		b.first_ns = NOW - 3 * NSEC_PER_SEC; /* before it: the same */
		caad_flows_update_history(&b, 1, &base, 1, NOW - NSEC_PER_SEC);
		assert_int_equal(b.n_consumer_history, 1);
	}

	/* nothing before: nothing kept */
	update_history(cur, ARRAY_SIZE(cur), NULL, 0, 0);
	for (size_t i = 0; i < ARRAY_SIZE(cur); i++)
		assert_int_equal(cur[i].n_consumer_history, 0);
}

/*
 * The observer's count of what a reader read between two scans
 * (observer-abi.h): copied_seq's 32-bit difference, placed by
 * bytes_received's 64-bit one. Wrong multiples of 4 GiB would show here.
 */
static void test_read_delta(void **state)
{
	const uint64_t G4 = UINT64_C(1) << 32;

	(void)state;
	/* nothing read, nothing arrived */
	assert_int_equal(caad_read_delta(1000, 1000, 5000, 5000), 0);
	/* all that arrived was read */
	assert_int_equal(caad_read_delta(1000 + 300, 1000, 5300, 5000), 300);
	/* arrived, not read yet: the queue grew */
	assert_int_equal(caad_read_delta(1000, 1000, 9000, 5000), 0);
	/* read what was queued before: more read than arrived */
	assert_int_equal(caad_read_delta(1000 + 4000, 1000, 5000, 5000), 4000);
	/* copied_seq wrapped past 2^32 once */
	assert_int_equal(caad_read_delta(100, UINT32_MAX - 99, 200, 0), 200);
	/* more than 4 GiB between two scans: 10 GiB + 7 read, a window of 1 MiB
	 * still queued at the end that was not at the start */
	uint64_t read = 10 * (G4 / 4) + 7, queued = UINT64_C(1) << 20;
	uint32_t then = 123456789;
	assert_int_equal(caad_read_delta((uint32_t)(then + read), then, 42 + read + queued, 42), read);
	/* 12 GiB read, of which 1 GiB was queued at the first scan: arrived
	 * less than read */
	read = 3 * G4;
	assert_int_equal(caad_read_delta((uint32_t)(then + read), then, 42 + read - (G4 / 4), 42), read);
	/* exactly 4 GiB read and arrived: not 0 */
	assert_int_equal(caad_read_delta(then, then, G4, 0), G4);
	/* bytes_received started again (a disconnect): no more than copied_seq says */
	assert_int_equal(caad_read_delta(1000 + 10, 1000, 0, 5000), 10);
}

/* SipHash-2-4's reference vectors (the paper's key 00..0f, messages
 * 00, 01, ... of length 0 to 15): the empty one, one of 8 bytes (a flow's
 * id), and the paper's worked example of 15. */
static void test_siphash(void **state)
{
	uint8_t key[16], msg[15];

	(void)state;
	for (unsigned i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (unsigned i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	assert_true(caad_siphash24(key, msg, 0) == UINT64_C(0x726fdb47dd0e0e31));
	assert_true(caad_siphash24(key, msg, 8) == UINT64_C(0x93f5f5799a932462));
	assert_true(caad_siphash24(key, msg, 15) == UINT64_C(0xa129ca6149be45e5));
}

/* The id shown is not the address, is the same for one flow under one
 * key, another for the next key, and tells flows apart. */
static void test_public_id(void **state)
{
	const uint64_t addr = UINT64_C(0xffff888109eaeb40);
	uint8_t key[16] = { 0 };
	uint64_t a, b;

	(void)state;
	caad_flow_id_key_set(key);
	a = caad_flow_public_id(addr);
	assert_true(a != addr);
	assert_true(a == caad_flow_public_id(addr));
	assert_true(a != caad_flow_public_id(addr + 0x40));
	/* the key's 16 bytes in little-endian order, as caad_siphash24 reads them */
	assert_true(a == caad_siphash24(key, (const uint8_t[8]){ 0x40, 0xeb, 0xea, 0x09, 0x81, 0x88, 0xff, 0xff }, 8));
	key[15] = 1;
	caad_flow_id_key_set(key);
	b = caad_flow_public_id(addr);
	assert_true(b != a);
	assert_int_equal(caad_flow_id_key_random(), 0);
	assert_true(caad_flow_public_id(addr) != b);
	caad_flow_id_key_set((const uint8_t[16]){ 0 });
	assert_true(caad_flow_public_id(addr) == a);
}

static int key_without_getrandom(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getrandom, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	const uint64_t addr = UINT64_C(0xffff888109eaeb40);
	uint64_t zero;
	char b;

	caad_flow_id_key_set((const uint8_t[16]){ 0 });
	zero = caad_flow_public_id(addr);
	if (seccomp_install(f, ARRAY_SIZE(f)) < 0)
		return 4;
	if (getrandom(&b, 1, GRND_NONBLOCK) >= 0 || errno != ENOSYS)
		return 3; /* the filter does not hold */
	return caad_flow_id_key_random() == 0 && caad_flow_public_id(addr) != zero ? 0 : 1;
}

/* Without getrandom(2) (a seccomp filter, an old kernel: ENOSYS) the key
 * comes from /dev/urandom, and caad still starts. In a child, whose filter
 * goes with it. */
static void test_public_id_without_getrandom(void **state)
{
	(void)state;
	assert_child_ok(key_without_getrandom);
}

/* Flows told once while each lives: more of them than any fixed ring
 * held, over scans; a socket address reused, and flows gone, are new. */
static void test_flow_set(void **state)
{
	struct caad_flow flows[40] = {};
	struct caad_flow_set s = {};
	unsigned added = 0;

	for (size_t i = 0; i < ARRAY_SIZE(flows); i++)
		flows[i] = (struct caad_flow){ .id = 0x1000 + 64 * i, .first_ns = 1000 + i };
	for (int scan = 0; scan < 3; scan++) {
		caad_flow_set_keep_live(&s, flows, ARRAY_SIZE(flows));
		/* not in id order: the set sorts them */
		for (size_t i = 0; i < ARRAY_SIZE(flows); i++) {
			const struct caad_flow *f = &flows[(i * 7) % ARRAY_SIZE(flows)];
			bool had = caad_flow_set_has(&s, f);
			int r = caad_flow_set_add(&s, f);

			assert_true(r >= 0);
			assert_int_equal(r, !had);
			added += r;
			assert_true(caad_flow_set_has(&s, f));
		}
	}
	assert_int_equal(added, ARRAY_SIZE(flows));
	assert_int_equal(s.n, ARRAY_SIZE(flows));
	for (size_t i = 1; i < s.n; i++)
		assert_true(s.v[i - 1].id < s.v[i].id);

	/* flow 5's address taken by another socket: new; flow 6 closed,
	 * then the same address and first_ns again (not dropped) */
	flows[5].first_ns = 99999;
	assert_false(caad_flow_set_has(&s, &flows[5]));
	caad_flow_set_keep_live(&s, flows, ARRAY_SIZE(flows));
	assert_int_equal(s.n, ARRAY_SIZE(flows) - 1);
	assert_int_equal(caad_flow_set_add(&s, &flows[5]), 1);
	assert_int_equal(caad_flow_set_add(&s, &flows[5]), 0);
	/* a socket reused between two scans that kept it: replaced */
	flows[7].first_ns = 77777;
	assert_int_equal(caad_flow_set_add(&s, &flows[7]), 1);
	assert_true(caad_flow_set_has(&s, &flows[7]));

	/* gone from a snapshot: dropped, told again when back */
	caad_flow_set_keep_live(&s, flows + 20, 20);
	assert_int_equal(s.n, 20);
	assert_false(caad_flow_set_has(&s, &flows[0]));
	assert_true(caad_flow_set_has(&s, &flows[39]));
	caad_flow_set_keep_live(&s, NULL, 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(caad_flow_set_add(&s, &flows[0]), 1);
	caad_flow_set_done(&s);
	assert_null(s.v);
	assert_int_equal(s.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_tuple_v4),
		cmocka_unit_test(test_format_tuple_v6),
		cmocka_unit_test(test_format_tuple_v4mapped),
		cmocka_unit_test(test_format_tuple_unknown),
		cmocka_unit_test(test_format_tuple_nobufs),
		cmocka_unit_test(test_from_record),
		cmocka_unit_test(test_merge_record),
		cmocka_unit_test(test_from_record_unknown),
		cmocka_unit_test(test_from_record_comm),
		cmocka_unit_test(test_from_record_v6),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_sort_many),
		cmocka_unit_test(test_sort_many_aux),
		cmocka_unit_test(test_rates_normal),
		cmocka_unit_test(test_rates_bytes_reset),
		cmocka_unit_test(test_rates_new_flow),
		cmocka_unit_test(test_rates_address_reused),
		cmocka_unit_test(test_rates_zero_interval),
		cmocka_unit_test(test_rates_large),
		cmocka_unit_test(test_rates_merge),
		cmocka_unit_test(test_rates_read_times),
		cmocka_unit_test(test_rates_kept),
		cmocka_unit_test(test_rates_kept_handed_over),
		cmocka_unit_test(test_record_time),
		cmocka_unit_test(test_lower_bound),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_read_delta),
		cmocka_unit_test(test_siphash),
		cmocka_unit_test(test_public_id),
		cmocka_unit_test(test_public_id_without_getrandom),
		cmocka_unit_test(test_flow_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
