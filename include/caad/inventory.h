/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "caad/cpumask.h"

/* An rx queue of a managed interface and what steers it. */
struct caad_queue {
	unsigned index;          /* rx-N */
	int irq;                 /* -1: none (veth, loopback, unknown) */
	bool irq_managed;        /* kernel-managed IRQ: affinity cannot be written */
	bool has_irq_affinity;
	struct caad_cpumask irq_affinity; /* smp_affinity_list */
	bool has_rps;
	struct caad_cpumask rps; /* rps_cpus */
	uint32_t napi_id;        /* 0 unknown */
};

struct caad_iface {
	char name[IF_NAMESIZE];
	int ifindex;
	struct caad_queue *rx;
	unsigned n_rx;
};

struct caad_inventory {
	struct caad_iface *ifaces;
	size_t n_ifaces;
	unsigned n_possible_cpus; /* width of rps_cpus as the kernel prints it */
};

/*
 * Read the rx queues of the named interfaces under sysroot (NULL or "" is
 * the host): SYSROOT/sys/class/net/IF/queues/rx-N/rps_cpus, the device's
 * MSI IRQs and SYSROOT/proc/interrupts. An interface that does not exist is
 * an error naming it (-ENODEV).
 */
int caad_inventory_load(const char *sysroot, char *const *ifnames, size_t n, struct caad_inventory **ret);
void caad_inventory_free(struct caad_inventory *inv);
static inline void caad_inventory_freep(struct caad_inventory **inv)
{
	caad_inventory_free(*inv);
}

/*
 * Interfaces worth managing when none are configured: physical (a device
 * behind them), up, and with more than one rx queue or an MSI IRQ. Never
 * lo, veth, bridges, bonds or tunnels (no device behind them). Returns the
 * count and a NULL-terminated array of names (free with caad_strv_free).
 */
int caad_inventory_autoselect(const char *sysroot, char ***ret);
void caad_strv_free(char **l);

const struct caad_iface *caad_inventory_find_ifindex(const struct caad_inventory *inv, int ifindex);

/*
 * Match one /proc/interrupts action name to an rx queue index of ifname
 * ("eth0-TxRx-3", "i40e-eth0-TxRx-3", "eth0-rx-3", "mlx5_comp3@pci:…",
 * "virtio2-input.3"). Returns the queue index, or -ENOENT when the name
 * is not a queue vector (e.g. "eth0-tx-1", "mlx5_async0").
 */
int caad_inventory_match_irq_name(const char *ifname, const char *action);
