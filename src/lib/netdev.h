/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Private to libcaad: generic netlink queries behind the inventory. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct caad_genl;

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
/* ethtool channel counts (-1 where the driver has none); -EOPNOTSUPP without get_channels. */
int caad_genl_channels(struct caad_genl *g, int ifindex, int *rx, int *combined);
static inline void caad_genl_closep(struct caad_genl **g)
{
	caad_genl_close(*g);
}
