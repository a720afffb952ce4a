/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Private to libcaad: generic netlink queries behind the inventory. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct caad_genl;
struct nl_msg;

/* include/uapi/linux/netdev.h (Linux 6.8+); Debian 12's headers predate it.
 * Netlink attribute and command numbers are stable ABI. */
enum {
	NETDEV_A_NAPI_IFINDEX_ = 1,
	NETDEV_A_NAPI_ID_,
	NETDEV_A_NAPI_IRQ_,
	NETDEV_A_NAPI_PID_,
	NETDEV_A_NAPI_MAX_ = NETDEV_A_NAPI_PID_,
};
enum {
	NETDEV_A_QUEUE_ID_ = 1,
	NETDEV_A_QUEUE_IFINDEX_,
	NETDEV_A_QUEUE_TYPE_,
	NETDEV_A_QUEUE_NAPI_ID_,
	NETDEV_A_QUEUE_MAX_ = NETDEV_A_QUEUE_NAPI_ID_,
};
enum { NETDEV_QUEUE_TYPE_RX_ = 0 };
enum { NETDEV_CMD_QUEUE_GET_ = 10, NETDEV_CMD_NAPI_GET_ = 11 };

struct caad_genl_queue {
	unsigned index;   /* rx queue index */
	uint32_t napi_id; /* 0: none */
};

struct caad_genl_napi {
	uint32_t napi_id;
	int irq;   /* -1: not reported */
	pid_t pid; /* threaded NAPI kthread, 0: none */
};

int caad_genl_open(struct caad_genl **ret);
void caad_genl_close(struct caad_genl *g);
/* rx queues and NAPIs of ifindex (netdev family); -EOPNOTSUPP before Linux 6.8. */
int caad_genl_queues(struct caad_genl *g, int ifindex, struct caad_genl_queue **queues, size_t *n_queues,
                     struct caad_genl_napi **napis, size_t *n_napis);
/* One reply of a queue-get (napi-get) dump for ifindex: 1 and *ret for an
 * rx queue (a NAPI) of ifindex, 0 for anything else (another type, another
 * interface's, an attribute too short, a missing one). */
int caad_genl_parse_queue(struct nl_msg *msg, int ifindex, struct caad_genl_queue *ret);
int caad_genl_parse_napi(struct nl_msg *msg, int ifindex, struct caad_genl_napi *ret);
/* ethtool channel counts (-1 where the driver has none); -EOPNOTSUPP without get_channels. */
int caad_genl_channels(struct caad_genl *g, int ifindex, int *rx, int *combined);
static inline void caad_genl_closep(struct caad_genl **g)
{
	caad_genl_close(*g);
}
