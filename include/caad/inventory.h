/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
	bool has_effective_affinity;
	struct caad_cpumask effective_affinity; /* effective_affinity_list: where it really fires */
	bool has_rps_flow_cnt;
	unsigned rps_flow_cnt;   /* RFS flow table size of the queue */
	uint32_t napi_id;        /* 0 unknown */
	pid_t napi_kthread;      /* threaded NAPI kthread ("napi/<dev>-<id>"), 0 none */
	const char *irq_source;  /* how the IRQ was found: "netdev-genl", "proc-interrupts", NULL */
};

/* Where an interface's NIC sits, best source first. */
enum caad_locality_source {
	CAAD_LOCALITY_UNKNOWN,
	CAAD_LOCALITY_HWLOC,         /* hwloc I/O object of the topology */
	CAAD_LOCALITY_NUMA_NODE,     /* device/numa_node */
	CAAD_LOCALITY_LOCAL_CPULIST, /* device/local_cpulist */
};

const char *caad_locality_source_to_string(enum caad_locality_source s);

/* A NAPI instance of an interface (netdev netlink, or its "napi/<dev>-<id>" kthread). */
struct caad_napi {
	uint32_t id;
	int irq;        /* -1 unknown */
	pid_t kthread;  /* threaded NAPI poll thread, 0 none */
	/* its comm when the inventory was read ("" not read): the kernel names
	 * it once, "napi/<dev>-<id>" with the name the device had then. Whole
	 * in /proc/PID/comm since Linux 5.17 (up to 63 bytes: a device name of
	 * 6 or more with an id of 8193 on makes 16 or more), cut at 15 before */
	char kthread_comm[64];
};

struct caad_iface {
	char name[IF_NAMESIZE];
	int ifindex;
	struct caad_queue *rx;
	unsigned n_rx;
	struct caad_napi *napis; /* all NAPIs known, queue-mapped or not (veth) */
	unsigned n_napis;
	char driver[32];         /* device/driver's name, "" when none (veth, lo) */
	char bus_id[64];         /* device's name, e.g. PCI "0000:3b:00.0", "" when none */
	char pci_bus_id[64];     /* the PCI function hwloc places it under: its device's, or a
	                          * virtio device's parent's name; "" when none (not on PCI) */
	int numa_node;           /* device/numa_node, -1 unknown */
	bool has_local_cpus;
	struct caad_cpumask local_cpus; /* CPUs near the NIC (see locality) */
	enum caad_locality_source locality;
	int combined_channels;   /* ethtool channels: combined count, -1 unknown */
	int rx_channels;         /* ethtool channels: rx-only count, -1 unknown */
	bool ntuple;             /* ntuple filters on and rx classification rules answer (never under a sysroot) */
};

struct caad_inventory {
	struct caad_iface *ifaces;
	size_t n_ifaces;
	bool host;                /* read from the host's /proc and /sys, not a --sysroot tree */
	unsigned n_possible_cpus; /* width of rps_cpus as the kernel prints it */
	/* RFS's global socket flow table (/proc/sys/net/core/rps_sock_flow_entries):
	 * the initial network namespace's only; in another one caad cannot see
	 * nor set it, and RFS works only if the host sized it */
	bool has_rfs_table;
	unsigned rfs_table;
};

/*
 * Read the rx queues of the named interfaces under sysroot (NULL or "" is
 * the host): SYSROOT/sys/class/net/IF/queues/rx-N/rps_cpus, the device's
 * MSI IRQs and SYSROOT/proc/interrupts. An interface that does not exist is
 * an error naming it (-ENODEV; one that goes while it is read: -ENOENT,
 * -EINVAL or -ENODEV, as sysfs says it; a name that is no interface, such
 * as bonding_masters: -ENOTDIR).
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

/*
 * Where each interface's NIC sits: the hwloc I/O object of its name in t
 * (not when t is the running host's and inv a --sysroot tree's; when t is
 * the host's, only under the interface's pci_bus_id), else the CPUs of
 * device/numa_node, else device/local_cpulist (sets locality and
 * local_cpus).
 */
struct caad_topology;
int caad_inventory_locate(struct caad_inventory *inv, const struct caad_topology *t);

const struct caad_iface *caad_inventory_find_ifindex(const struct caad_inventory *inv, int ifindex);

/*
 * The interface one of whose rx queues has NAPI napi_id (0: none), and
 * into *ret_queue (may be NULL) that queue's index, or NULL. A flow that
 * arrived through a VLAN, a bond, a macvlan or a bridge on top of a
 * managed NIC has the upper device's ifindex (the kernel's skb_iif), and
 * the NIC queue's NAPI. Linear in the queues.
 */
const struct caad_iface *caad_inventory_find_napi(const struct caad_inventory *inv, uint32_t napi_id,
                                                  int *ret_queue);

/*
 * Take kthread pid, found in /proc by its comm "napi/<dev>-<id>" with dev
 * iface's name, as the kthread of iface's NAPI id. The kernel names a
 * kthread once, with the name its device had then: after a rename another
 * device may have that name, and the kthread is still the first one's. So
 * where netlink listed iface's NAPIs (listed; NAPI ids are the host's, not
 * a device's) only a kthread of one of those is taken; elsewhere (before
 * Linux 6.8, a sysroot) the name is all there is, and the NAPI is added.
 * A NAPI that has a kthread (netlink's) keeps it. 1 taken, 0 not, -ENOMEM.
 */
int caad_inventory_take_kthread(struct caad_iface *iface, bool listed, uint32_t id, pid_t pid, const char *comm);

/* The interface of a flow: by its ifindex, else by its NAPI. */
static inline const struct caad_iface *caad_inventory_find_flow(const struct caad_inventory *inv, int ifindex,
                                                                uint32_t napi_id)
{
	const struct caad_iface *ifc = caad_inventory_find_ifindex(inv, ifindex);

	return ifc ? ifc : caad_inventory_find_napi(inv, napi_id, NULL);
}

/*
 * Where an interface that left the inventory went, by the host's
 * SYSROOT/sys/class/net/ (every name, not only managed ones):
 *  CAAD_IFACE_STILL_THERE   the same name with the same ifindex (down, or
 *                           no longer selected): its values are still there;
 *  CAAD_IFACE_RENAMED       its ifindex has another name now (ret_name);
 *  CAAD_IFACE_GONE          neither: the device is gone, or the name is a
 *                           new device (another ifindex).
 * Returns one of them, or < 0 when it cannot tell: no memory, a directory
 * or an ifindex that could not be read (where no other name has the
 * ifindex), or name's ifindex did not read as one.
 */
enum caad_iface_fate {
	CAAD_IFACE_GONE,
	CAAD_IFACE_STILL_THERE,
	CAAD_IFACE_RENAMED,
};
int caad_inventory_iface_fate(const char *sysroot, const char *name, int ifindex, char ret_name[static IF_NAMESIZE]);

/*
 * Match one /proc/interrupts action name to an rx queue index of ifname
 * ("eth0-TxRx-3", "i40e-eth0-TxRx-3", "eth0-rx-3", "virtio2-input.3"),
 * or of the device whose name ifname is ("mlx5_comp3@pci:0000:05:00.0"
 * matches only "0000:05:00.0"). Returns the queue index, or -ENOENT when
 * the name is not a queue vector (e.g. "eth0-tx-1", "mlx5_async0").
 */
int caad_inventory_match_irq_name(const char *ifname, const char *action);

/*
 * Find the IRQs of iface's rx queues in the text of /proc/interrupts: an IRQ
 * whose action names rx-N of iface->name, or of devname (the device behind
 * it, e.g. "virtio2"; NULL or "" for none), becomes the IRQ of rx-N unless
 * that queue has one already. When n_msi > 0, only the IRQs of msi (the
 * device's MSI vectors, sorted ascending) are considered. Returns 0 or
 * -ENOMEM.
 */
int caad_inventory_parse_interrupts(struct caad_iface *iface, const char *interrupts, const unsigned *msi,
                                    size_t n_msi, const char *devname);
