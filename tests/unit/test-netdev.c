/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * src/lib/netdev.c: replies of the netdev family's queue-get and napi-get
 * dumps, made here as the kernel sends them, and the ones caad must not
 * take: another interface's (a kernel that did not filter the dump), an
 * attribute shorter than its type, a missing one, a tx queue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "netdev.h"

#define FAMILY 42 /* whatever the kernel resolved "netdev" to: not read */

struct attr {
	int type;
	uint32_t value;
	int len; /* bytes of value put: 4, or fewer for a short one */
};

/* A reply of command cmd with the attributes given, the last of type 0. */
static struct nl_msg *reply(uint8_t cmd, const struct attr *attrs)
{
	struct nl_msg *m = nlmsg_alloc();

	assert_non_null(m);
	assert_non_null(genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, FAMILY, 0, NLM_F_MULTI, cmd, 1));
	for (const struct attr *a = attrs; a->type; a++)
		assert_int_equal(nla_put(m, a->type, a->len ? a->len : 4, &a->value), 0);
	return m;
}

static int queue_of(const struct attr *attrs, int ifindex, struct caad_genl_queue *q)
{
	struct nl_msg *m = reply(NETDEV_CMD_QUEUE_GET_, attrs);
	int r = caad_genl_parse_queue(m, ifindex, q);

	nlmsg_free(m);
	return r;
}

static int napi_of(const struct attr *attrs, int ifindex, struct caad_genl_napi *n)
{
	struct nl_msg *m = reply(NETDEV_CMD_NAPI_GET_, attrs);
	int r = caad_genl_parse_napi(m, ifindex, n);

	nlmsg_free(m);
	return r;
}

static void test_queue(void **state)
{
	struct caad_genl_queue q = { 0 };

	(void)state;
	/* rx-3 of ifindex 7, on NAPI 8193 */
	assert_int_equal(queue_of((const struct attr[]){ { NETDEV_A_QUEUE_ID_, 3 },
	                                                 { NETDEV_A_QUEUE_IFINDEX_, 7 },
	                                                 { NETDEV_A_QUEUE_TYPE_, NETDEV_QUEUE_TYPE_RX_ },
	                                                 { NETDEV_A_QUEUE_NAPI_ID_, 8193 },
	                                                 { 0 } },
	                          7, &q),
	                 1);
	assert_int_equal(q.index, 3);
	assert_int_equal(q.napi_id, 8193);
	/* no NAPI (a driver without one): 0 */
	assert_int_equal(queue_of((const struct attr[]){ { NETDEV_A_QUEUE_ID_, 1 },
	                                                 { NETDEV_A_QUEUE_IFINDEX_, 7 },
	                                                 { NETDEV_A_QUEUE_TYPE_, NETDEV_QUEUE_TYPE_RX_ },
	                                                 { 0 } },
	                          7, &q),
	                 1);
	assert_int_equal(q.index, 1);
	assert_int_equal(q.napi_id, 0);

	/* not taken: another interface's, a tx queue, no ifindex, a short
	 * NAPI id (two bytes, where a u32 read would go past it) */
	q = (struct caad_genl_queue){ .index = 99 };
	assert_int_equal(queue_of((const struct attr[]){ { NETDEV_A_QUEUE_ID_, 3 },
	                                                 { NETDEV_A_QUEUE_IFINDEX_, 8 },
	                                                 { NETDEV_A_QUEUE_TYPE_, NETDEV_QUEUE_TYPE_RX_ },
	                                                 { 0 } },
	                          7, &q),
	                 0);
	assert_int_equal(queue_of((const struct attr[]){ { NETDEV_A_QUEUE_ID_, 3 },
	                                                 { NETDEV_A_QUEUE_IFINDEX_, 7 },
	                                                 { NETDEV_A_QUEUE_TYPE_, 1 /* tx */ },
	                                                 { 0 } },
	                          7, &q),
	                 0);
	assert_int_equal(queue_of((const struct attr[]){ { NETDEV_A_QUEUE_ID_, 3 },
	                                                 { NETDEV_A_QUEUE_TYPE_, NETDEV_QUEUE_TYPE_RX_ },
	                                                 { 0 } },
	                          7, &q),
	                 0);
	assert_int_equal(queue_of((const struct attr[]){ { NETDEV_A_QUEUE_ID_, 3 },
	                                                 { NETDEV_A_QUEUE_IFINDEX_, 7 },
	                                                 { NETDEV_A_QUEUE_TYPE_, NETDEV_QUEUE_TYPE_RX_ },
	                                                 { NETDEV_A_QUEUE_NAPI_ID_, 8193, 2 },
	                                                 { 0 } },
	                          7, &q),
	                 0);
	assert_int_equal(q.index, 99); /* left alone */
}

static void test_napi(void **state)
{
	struct caad_genl_napi n = { 0 };

	(void)state;
	assert_int_equal(napi_of((const struct attr[]){ { NETDEV_A_NAPI_IFINDEX_, 7 },
	                                                { NETDEV_A_NAPI_ID_, 8193 },
	                                                { NETDEV_A_NAPI_IRQ_, 120 },
	                                                { NETDEV_A_NAPI_PID_, 777 },
	                                                { 0 } },
	                         7, &n),
	                 1);
	assert_int_equal(n.napi_id, 8193);
	assert_int_equal(n.irq, 120);
	assert_int_equal(n.pid, 777);
	/* no IRQ (veth), not threaded */
	assert_int_equal(napi_of((const struct attr[]){ { NETDEV_A_NAPI_IFINDEX_, 7 }, { NETDEV_A_NAPI_ID_, 8194 }, { 0 } },
	                         7, &n),
	                 1);
	assert_int_equal(n.irq, -1);
	assert_int_equal(n.pid, 0);

	/* not taken: another interface's (its IRQ would be moved as ours), a
	 * short IRQ, no id */
	n = (struct caad_genl_napi){ .napi_id = 1 };
	assert_int_equal(napi_of((const struct attr[]){ { NETDEV_A_NAPI_IFINDEX_, 9 },
	                                                { NETDEV_A_NAPI_ID_, 8193 },
	                                                { NETDEV_A_NAPI_IRQ_, 130 },
	                                                { 0 } },
	                         7, &n),
	                 0);
	assert_int_equal(napi_of((const struct attr[]){ { NETDEV_A_NAPI_IFINDEX_, 7 },
	                                                { NETDEV_A_NAPI_ID_, 8193 },
	                                                { NETDEV_A_NAPI_IRQ_, 130, 1 },
	                                                { 0 } },
	                         7, &n),
	                 0);
	assert_int_equal(napi_of((const struct attr[]){ { NETDEV_A_NAPI_IFINDEX_, 7 }, { NETDEV_A_NAPI_IRQ_, 130 }, { 0 } },
	                         7, &n),
	                 0);
	assert_int_equal(n.napi_id, 1); /* left alone */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_napi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
