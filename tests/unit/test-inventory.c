/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The inventory against fake /sys and /proc trees written by each test in a
 * temp dir, plus one read-only look at the host's loopback.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "caad/cpumask.h"
#include "caad/inventory.h"
#include "caad/macro.h"
#include "caad/sysfs.h"
#include "caad/topology.h"

#include "test-util.h"
#include "capture.h"

/* ---- fake trees -------------------------------------------------------- */

/*
 * Reads go through caad_read_file(), wrapped here
 * (-Wl,--wrap=caad_read_file): a read of a path ending in read_fault.suffix
 * fails with read_fault.error, as the read of a sysfs or procfs file that
 * is removed between its open and its read does (ENODEV, EIO).
 */
int __real_caad_read_file(const char *path, char **ret);
int __wrap_caad_read_file(const char *path, char **ret);

static struct {
	const char *suffix; /* NULL: none */
	int error;
	unsigned calls;
} read_fault;

int __wrap_caad_read_file(const char *path, char **ret)
{
	size_t n = strlen(path), k = read_fault.suffix ? strlen(read_fault.suffix) : 0;

	if (read_fault.suffix && n >= k && streq(path + n - k, read_fault.suffix)) {
		read_fault.calls++;
		return read_fault.error;
	}
	return __real_caad_read_file(path, ret);
}

/* The reads failed as many times as wanted, and no more fail. */
static void read_fault_done(unsigned want_calls)
{
	unsigned calls = read_fault.calls;

	read_fault.suffix = NULL;
	read_fault.calls = 0;
	assert_int_equal(calls, want_calls);
}

/* root/rel, and all below it, removed. */
static void rm_tree_rel(const char *root, const char *rel)
{
	_cleanup_free_ char *path = NULL;

	assert_true(asprintf(&path, "%s/%s", root, rel) > 0);
	assert_int_equal(test_rm_tree(path), 0);
}

static void make_dir(const char *root, const char *rel)
{
	_cleanup_free_ char *path = NULL;

	assert_int_equal(caad_path(&path, root, "/%s/", rel), 0);
	mkdir_parents(path, strlen(root) + 1);
}

/* ROOT/rel -> ROOT/target (absolute, as the brief of a fake tree allows). */
static void make_symlink(const char *root, const char *rel, const char *target_rel)
{
	_cleanup_free_ char *path = NULL, *target = NULL;

	assert_int_equal(caad_path(&path, root, "/%s", rel), 0);
	assert_int_equal(caad_path(&target, root, "/%s", target_rel), 0);
	mkdir_parents(path, strlen(root) + 1);
	assert_int_equal(symlink(target, path), 0);
}

static int setup_root(void **state)
{
	char *d = strdup("/tmp/caad-test-inventory-XXXXXX");

	if (!d || !mkdtemp(d)) {
		free(d);
		return -1;
	}
	*state = d;
	read_fault.suffix = NULL; /* one that failed left none behind */
	read_fault.calls = 0;
	return 0;
}

static int teardown_root(void **state)
{
	char *d = *state;
	int r = test_rm_tree(d);

	free(d);
	return r;
}

/* An interface: ifindex and rx queues with the given rps_cpus ("" = no file). */
static void fake_iface(const char *root, const char *name, const char *ifindex, const char *const *rps, size_t n_rx)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "sys/class/net/%s/ifindex", name);
	write_file(root, rel, ifindex);
	for (size_t i = 0; i < n_rx; i++) {
		snprintf(rel, sizeof(rel), "sys/class/net/%s/queues/rx-%zu", name, i);
		make_dir(root, rel);
		if (rps[i][0]) {
			snprintf(rel, sizeof(rel), "sys/class/net/%s/queues/rx-%zu/rps_cpus", name, i);
			write_file(root, rel, rps[i]);
		}
		snprintf(rel, sizeof(rel), "sys/class/net/%s/queues/tx-%zu", name, i);
		make_dir(root, rel);
	}
}

/* A PCI device with MSI vectors, and IF's device link to dev_rel. */
static void fake_device(const char *root, const char *ifname, const char *dev_rel, const char *msi_dir_rel,
                        const unsigned *irqs, size_t n)
{
	char rel[512];

	make_dir(root, dev_rel);
	for (size_t i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "%s/msi_irqs/%u", msi_dir_rel, irqs[i]);
		write_file(root, rel, "msix\n");
	}
	snprintf(rel, sizeof(rel), "sys/class/net/%s/device", ifname);
	make_symlink(root, rel, dev_rel);
}

static void fake_affinity(const char *root, unsigned irq, const char *list)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "proc/irq/%u/smp_affinity_list", irq);
	write_file(root, rel, list);
}

static struct caad_inventory *load_ok(const char *root, char *const *names, size_t n)
{
	struct caad_inventory *inv = NULL;

	assert_int_equal(caad_inventory_load(root, names, n, &inv), 0);
	assert_non_null(inv);
	assert_int_equal(inv->n_ifaces, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(inv->ifaces[i].name, names[i]);
	return inv;
}

static void assert_list(const struct caad_cpumask *m, const char *want)
{
	char got[256];

	assert_true(caad_cpumask_format_list(m, got, sizeof(got)) >= 0);
	assert_string_equal(got, want);
}

static const char *const header_2cpu = "           CPU0       CPU1\n"
                                       "  0:         30          0   IO-APIC   2-edge      timer\n"
                                       "  9:          0          0   IO-APIC   9-fasteoi   acpi\n";
static const char *const footer_2cpu = "NMI:          0          0   Non-maskable interrupts\n"
                                       "LOC:     123456     654321   Local timer interrupts\n"
                                       "ERR:          0\n"
                                       "MIS:          0\n";

static void fake_interrupts(const char *root, const char *body)
{
	_cleanup_free_ char *text = NULL;

	assert_true(asprintf(&text, "%s%s%s", header_2cpu, body, footer_2cpu) > 0);
	write_file(root, "proc/interrupts", text);
}

static int unlink_rel(const char *root, const char *rel)
{
	_cleanup_free_ char *path = NULL;

	assert_int_equal(caad_path(&path, root, "/%s", rel), 0);
	return unlink(path);
}

/* ---- tests ------------------------------------------------------------- */

/*
 * ice with a kernel-managed IRQ (debugfs says IRQD_AFFINITY_MANAGED), the
 * effective affinity, rps_flow_cnt, driver, NUMA node and local CPUs.
 */
static void test_ice_managed(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	static const char *const rps[] = { "00000000,00000000\n", "00000000,00000000\n" };
	static const unsigned msi[] = { 200, 201, 202 };
	char *names[] = { "ens1f0" };
	const char *dev = "sys/devices/pci0000:3a/0000:3b:00.0";

	fake_iface(root, "ens1f0", "7\n", rps, 2);
	fake_device(root, "ens1f0", dev, dev, msi, ARRAY_SIZE(msi));
	make_dir(root, "sys/bus/pci/drivers/ice");
	make_symlink(root, "sys/devices/pci0000:3a/0000:3b:00.0/driver", "sys/bus/pci/drivers/ice");
	write_file(root, "sys/devices/pci0000:3a/0000:3b:00.0/numa_node", "1\n");
	write_file(root, "sys/devices/pci0000:3a/0000:3b:00.0/local_cpulist", "6-11,18-23\n");
	write_file(root, "sys/class/net/ens1f0/queues/rx-0/rps_flow_cnt", "4096\n");
	write_file(root, "sys/class/net/ens1f0/queues/rx-1/rps_flow_cnt", "many\n");
	fake_interrupts(root, " 200:          0          0  IR-PCI-MSIX-0000:3b:00.0 0-edge  ice-0000:3b:00.0:misc\n"
	                      " 201:        100          0  IR-PCI-MSIX-0000:3b:00.0 1-edge  ice-ens1f0-TxRx-0\n"
	                      " 202:          0        100  IR-PCI-MSIX-0000:3b:00.0 2-edge  ice-ens1f0-TxRx-1\n");
	fake_affinity(root, 201, "6\n");
	fake_affinity(root, 202, "7\n");
	write_file(root, "proc/irq/201/effective_affinity_list", "6\n");
	write_file(root, "proc/irq/202/effective_affinity_list", "7\n");
	write_file(root, "sys/kernel/debug/irq/irqs/201", "handler:  handle_edge_irq\ndstate:   0x00601200\n"
	                                                  "            IRQD_ACTIVATED\n            IRQD_IRQ_STARTED\n");
	write_file(root, "sys/kernel/debug/irq/irqs/202", "handler:  handle_edge_irq\ndstate:   0x3640a200\n"
	                                                  "            IRQD_ACTIVATED\n"
	                                                  "            IRQD_AFFINITY_MANAGED\n"
	                                                  "            IRQD_IRQ_STARTED\n");

	inv = load_ok(root, names, 1);
	const struct caad_iface *ifc = &inv->ifaces[0];
	assert_string_equal(ifc->driver, "ice");
	assert_string_equal(ifc->bus_id, "0000:3b:00.0");
	assert_int_equal(ifc->numa_node, 1);
	assert_int_equal(ifc->rx[0].irq, 201);
	assert_int_equal(ifc->rx[1].irq, 202);
	assert_string_equal(ifc->rx[0].irq_source, "proc-interrupts");
	assert_false(ifc->rx[0].irq_managed);
	assert_true(ifc->rx[1].irq_managed);
	assert_true(ifc->rx[1].has_effective_affinity);
	assert_list(&ifc->rx[1].effective_affinity, "7");
	assert_true(ifc->rx[0].has_rps_flow_cnt);
	assert_int_equal(ifc->rx[0].rps_flow_cnt, 4096);
	assert_false(ifc->rx[1].has_rps_flow_cnt); /* "many": warned, not fatal */
	assert_true(ifc->has_local_cpus);
	assert_list(&ifc->local_cpus, "6-11,18-23");

	/* Locality: this XML has no ens1f0, so device/numa_node wins over local_cpulist */
	t = load_fixture("24em64t-2n6c2t-pci.xml");
	assert_int_equal(caad_inventory_locate(inv, t), 0);
	assert_int_equal(ifc->locality, CAAD_LOCALITY_NUMA_NODE);
	struct caad_cpumask node1;
	assert_true(caad_topology_numa_cpus(t, 1, &node1) > 0);
	assert_true(caad_cpumask_equal(&ifc->local_cpus, &node1));
	assert_string_equal(caad_locality_source_to_string(ifc->locality), "numa_node");
	assert_false(inv->host);
	assert_false(t->live);
}

/* The host's root by another spelling is the host (its kthreads, its NIC
 * locality), as caad_path() reads it; a fake tree, or a path that is not
 * there, is kept as given. */
static void test_sysroot_canonical(void **state)
{
	const char *root = *state;
	char link[PATH_MAX], missing[PATH_MAX];

	assert_string_equal(caad_sysroot_canonical("//"), "/");
	assert_string_equal(caad_sysroot_canonical("/./"), "/");
	assert_string_equal(caad_sysroot_canonical("/proc/.."), "/");
	snprintf(link, sizeof(link), "%s/hostroot", root);
	assert_int_equal(symlink("/", link), 0);
	assert_string_equal(caad_sysroot_canonical(link), "/");
	assert_ptr_equal(caad_sysroot_canonical(root), root);
	snprintf(missing, sizeof(missing), "%s/none", root);
	assert_ptr_equal(caad_sysroot_canonical(missing), missing);
	assert_null(caad_sysroot_canonical(NULL));
	assert_string_equal(caad_sysroot_canonical(""), "");
}

/* A fake tree's NIC is placed by its own files, not by the running host's
 * NIC of the same name (the XML here plays the host: eth0 in it is on
 * package 0); with an XML topology, by the XML's NIC of its name. */
static void test_locality_sysroot_not_host(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	static const char *const rps[] = { "0\n" };
	char *names[] = { "eth0" };
	const char *dev = "sys/devices/pci0000:00/0000:05:00.0";
	struct caad_cpumask node1;

	fake_iface(root, "eth0", "2\n", rps, 1);
	fake_device(root, "eth0", dev, dev, NULL, 0);
	write_file(root, "sys/devices/pci0000:00/0000:05:00.0/numa_node", "1\n");
	fake_interrupts(root, "");
	inv = load_ok(root, names, 1);
	t = load_fixture("24em64t-2n6c2t-pci.xml");
	assert_true(caad_topology_numa_cpus(t, 1, &node1) > 0);

	assert_int_equal(caad_inventory_locate(inv, t), 0);
	assert_int_equal(inv->ifaces[0].locality, CAAD_LOCALITY_HWLOC);
	assert_false(caad_cpumask_equal(&inv->ifaces[0].local_cpus, &node1));

	t->live = true;
	assert_int_equal(caad_inventory_locate(inv, t), 0);
	assert_int_equal(inv->ifaces[0].locality, CAAD_LOCALITY_NUMA_NODE);
	assert_true(caad_cpumask_equal(&inv->ifaces[0].local_cpus, &node1));
}

/*
 * On the host, hwloc's NIC names are those it read at the load, and the
 * topology is not read again when links come or are renamed: a NIC that
 * took the name later (here eth0 on 0000:05:00.0, where the topology's
 * eth0 is 0000:04:00.0) is placed by its own numa_node, not by the old
 * NIC's CPUs. The NIC of the name on its PCI function, or a virtio NIC
 * on it, still is placed by hwloc.
 */
static void test_locality_stale_hwloc_name(void **state)
{
	const char *root = *state;
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	static const char *const rps[] = { "0\n" };
	char *names[] = { "eth0" };
	static const struct {
		const char *dev, *pci; /* the device, the PCI function (NULL: none) */
		enum caad_locality_source want;
	} cases[] = {
		{ "sys/devices/pci0000:00/0000:05:00.0", "sys/devices/pci0000:00/0000:05:00.0", CAAD_LOCALITY_NUMA_NODE },
		{ "sys/devices/pci0000:00/0000:04:00.0", "sys/devices/pci0000:00/0000:04:00.0", CAAD_LOCALITY_HWLOC },
		{ "sys/devices/pci0000:00/0000:04:00.0/virtio1", "sys/devices/pci0000:00/0000:04:00.0", CAAD_LOCALITY_HWLOC },
		{ "sys/devices/pci0000:00/0000:05:00.0/virtio1", "sys/devices/pci0000:00/0000:05:00.0", CAAD_LOCALITY_NUMA_NODE },
		/* a sub-function (or a USB NIC): the nearest PCI function above it */
		{ "sys/devices/pci0000:00/0000:04:00.0/mlx5_core.sf.2", "sys/devices/pci0000:00/0000:04:00.0",
		  CAAD_LOCALITY_HWLOC },
		/* not on PCI (no subsystem link to bus/pci): no PCI function to check */
		{ "sys/devices/platform/0000:04:00.0", NULL, CAAD_LOCALITY_NUMA_NODE },
	};
	struct caad_cpumask node1;

	t = load_fixture("24em64t-2n6c2t-pci.xml");
	t->live = true; /* plays the host's */
	assert_true(caad_topology_numa_cpus(t, 1, &node1) > 0);
	make_dir(root, "sys/bus/pci");
	fake_interrupts(root, "");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
		char rel[256];

		fake_iface(root, "eth0", "2\n", rps, 1);
		(void)unlink_rel(root, "sys/class/net/eth0/device");
		fake_device(root, "eth0", cases[i].dev, cases[i].dev, NULL, 0);
		snprintf(rel, sizeof(rel), "%s/numa_node", cases[i].dev);
		write_file(root, rel, "1\n");
		if (cases[i].pci) {
			snprintf(rel, sizeof(rel), "%s/subsystem", cases[i].pci);
			(void)unlink_rel(root, rel);
			make_symlink(root, rel, "sys/bus/pci");
		}
		inv = load_ok(root, names, 1);
		inv->host = true; /* read from the host's /sys */
		assert_int_equal(caad_inventory_locate(inv, t), 0);
		if (inv->ifaces[0].locality != cases[i].want)
			fail_msg("%s: located by %s, expected %s", cases[i].dev,
			         caad_locality_source_to_string(inv->ifaces[0].locality),
			         caad_locality_source_to_string(cases[i].want));
		if (cases[i].want == CAAD_LOCALITY_NUMA_NODE)
			assert_true(caad_cpumask_equal(&inv->ifaces[0].local_cpus, &node1));
		else
			assert_false(caad_cpumask_equal(&inv->ifaces[0].local_cpus, &node1));
	}
}

/* Without numa_node (-1 on one-node hosts), device/local_cpulist decides. */
static void test_locality_local_cpulist(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	static const char *const rps[] = { "0\n" };
	char *names[] = { "enp1s0" };
	const char *dev = "sys/devices/pci0000:00/0000:01:00.0";

	fake_iface(root, "enp1s0", "2\n", rps, 1);
	fake_device(root, "enp1s0", dev, dev, NULL, 0);
	write_file(root, "sys/devices/pci0000:00/0000:01:00.0/numa_node", "-1\n");
	write_file(root, "sys/devices/pci0000:00/0000:01:00.0/local_cpulist", "0-3\n");
	fake_interrupts(root, "");

	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].numa_node, -1);
	t = load_synthetic("package:2 core:4 pu:1");
	assert_int_equal(caad_inventory_locate(inv, t), 0);
	assert_int_equal(inv->ifaces[0].locality, CAAD_LOCALITY_LOCAL_CPULIST);
	assert_list(&inv->ifaces[0].local_cpus, "0-3");

	/* nothing at all: unknown, and no local CPUs claimed */
	assert_int_equal(unlink_rel(root, "sys/devices/pci0000:00/0000:01:00.0/local_cpulist"), 0);
	caad_inventory_free(TAKE_PTR(inv));
	inv = load_ok(root, names, 1);
	assert_int_equal(caad_inventory_locate(inv, t), 0);
	assert_int_equal(inv->ifaces[0].locality, CAAD_LOCALITY_UNKNOWN);
	assert_false(inv->ifaces[0].has_local_cpus);
}

/* bnxt_en names its vectors "<dev>-TxRx-<N>"; threaded NAPI kthreads are
 * found by their "napi/<dev>-<id>" comm (whole names only). */
static void test_bnxt_napi_kthreads(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n", "0\n" };
	static const unsigned msi[] = { 90, 91 };
	char *names[] = { "eno1" };
	const char *dev = "sys/devices/pci0000:00/0000:02:00.0";

	fake_iface(root, "eno1", "5\n", rps, 2);
	fake_device(root, "eno1", dev, dev, msi, ARRAY_SIZE(msi));
	fake_interrupts(root, "  90:         10          0  IR-PCI-MSIX-0000:02:00.0 0-edge  eno1-TxRx-0\n"
	                      "  91:          0         10  IR-PCI-MSIX-0000:02:00.0 1-edge  eno1-TxRx-1\n");
	fake_affinity(root, 90, "0\n");
	fake_affinity(root, 91, "1\n");
	write_file(root, "proc/1/comm", "systemd\n");
	write_file(root, "proc/812/comm", "napi/eno1-8193\n");
	write_file(root, "proc/812/stat", "812 (napi/eno1-8193) S 2 0 0 0 -1 2129984 0 0 0 0\n");
	write_file(root, "proc/813/comm", "napi/eno1-8194\n");
	write_file(root, "proc/813/stat", "813 (napi/eno1-8194) S 2 0 0 0 -1 2129984 0 0 0 0\n");
	/* a process that named itself so (its flags: no PF_KTHREAD), and one
	 * whose stat is gone */
	write_file(root, "proc/700/comm", "napi/eno1-8193\n");
	write_file(root, "proc/700/stat", "700 (napi/eno1-8193) S 1 700 700 0 -1 4194304 0 0 0 0\n");
	write_file(root, "proc/701/comm", "napi/eno1-8194\n");
	write_file(root, "proc/702/comm", "napi/eno1-8195\n"); /* a NAPI of none but its own */
	write_file(root, "proc/702/stat", "702 (napi/eno1-8195) S 1 702 702 0 -1 4194560 0 0 0 0\n");
	write_file(root, "proc/814/comm", "napi/eno10-8195\n"); /* another interface */
	write_file(root, "proc/815/comm", "napi/eno1-x\n");     /* not a NAPI id */
	write_file(root, "proc/self/comm", "napi/eno1-9999\n"); /* not a pid */
	write_file(root, "proc/816/comm", "napi/eno1-81930\n"); /* 15: maybe "napi/eno1-819301" cut */
	write_file(root, "proc/816/stat", "816 (napi/eno1-81930) S 2 0 0 0 -1 2129984 0 0 0 0\n");
	/* 16: whole (Linux 5.17 on), as a name of 6 or more at id 8193 reads */
	write_file(root, "proc/817/comm", "napi/eno1-100000\n");
	write_file(root, "proc/817/stat", "817 (napi/eno1-100000) S 2 0 0 0 -1 2129984 0 0 0 0\n");

	inv = load_ok(root, names, 1);
	const struct caad_iface *ifc = &inv->ifaces[0];
	assert_int_equal(ifc->rx[0].irq, 90);
	assert_int_equal(ifc->rx[1].irq, 91);
	assert_int_equal(ifc->n_napis, 3);
	for (unsigned k = 0; k < ifc->n_napis; k++) {
		uint32_t id = ifc->napis[k].id;
		char want[32];

		assert_true(id == 8193 || id == 8194 || id == 100000);
		assert_int_equal(ifc->napis[k].kthread, id == 8193 ? 812 : id == 8194 ? 813 : 817);
		snprintf(want, sizeof(want), "napi/eno1-%" PRIu32, id);
		assert_string_equal(ifc->napis[k].kthread_comm, want);
		assert_int_equal(ifc->napis[k].irq, -1);
	}
	/* a sysroot has no netlink: queues are not mapped to NAPIs */
	assert_int_equal(ifc->rx[0].napi_id, 0);
	assert_int_equal(ifc->rx[0].napi_kthread, 0);

	/* threaded NAPI off: /proc is not searched (a stale comm is not taken) */
	write_file(root, "sys/class/net/eno1/threaded", "0\n");
	caad_inventory_free(TAKE_PTR(inv));
	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].n_napis, 0);
	write_file(root, "sys/class/net/eno1/threaded", "1\n");
	caad_inventory_free(TAKE_PTR(inv));
	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].n_napis, 3);
}

/* veth-like: queues with RPS, no device, no IRQs. */
/* A device with only tx queues (or none listed yet) has no rx queue to steer. */
/* Where an interface that left the inventory went: by sys/class/net. */
static void test_iface_fate(void **state)
{
	const char *root = *state;
	char now[IF_NAMESIZE] = "";

	write_file(root, "sys/class/net/eth0/ifindex", "2\n");
	write_file(root, "sys/class/net/eth1/ifindex", "7\n");
	write_file(root, "sys/class/net/odd/ifindex", "x\n");

	/* down or no longer selected: the same name, the same ifindex */
	assert_int_equal(caad_inventory_iface_fate(root, "eth0", 2, now), CAAD_IFACE_STILL_THERE);
	assert_string_equal(now, "eth0");
	/* renamed: its ifindex under another name */
	assert_int_equal(caad_inventory_iface_fate(root, "ens1", 7, now), CAAD_IFACE_RENAMED);
	assert_string_equal(now, "eth1");
	/* re-created: the name, another ifindex, and its own nowhere */
	assert_int_equal(caad_inventory_iface_fate(root, "eth0", 3, now), CAAD_IFACE_GONE);
	/* gone */
	assert_int_equal(caad_inventory_iface_fate(root, "eth9", 9, now), CAAD_IFACE_GONE);
	assert_int_equal(caad_inventory_iface_fate(root, "eth9", 0, now), CAAD_IFACE_GONE);
	/* no sys/class/net at all */
	assert_int_equal(caad_inventory_iface_fate("/nonexistent-caad-root", "eth0", 2, now), CAAD_IFACE_GONE);

	/* cannot tell (a restore told "gone" would drop the original of a
	 * device still there): its own ifindex odd, or one that cannot be
	 * read where no other name has it */
	assert_int_equal(caad_inventory_iface_fate(root, "odd", 5, now), -EINVAL);
	make_dir(root, "sys/class/net/unread/ifindex"); /* a read fails: EISDIR */
	assert_int_equal(caad_inventory_iface_fate(root, "unread", 4, now), -EISDIR);
	assert_int_equal(caad_inventory_iface_fate(root, "eth9", 9, now), -EISDIR);
	/* ... unless another name has it */
	assert_int_equal(caad_inventory_iface_fate(root, "ens1", 7, now), CAAD_IFACE_RENAMED);
	assert_string_equal(now, "eth1");
}

/* A sys/class/net that cannot be listed: cannot tell. */
static void test_iface_fate_unlisted(void **state)
{
	const char *root = *state;
	char now[IF_NAMESIZE] = "";

	write_file(root, "sys/class/net", "not a directory\n");
	assert_int_equal(caad_inventory_iface_fate(root, "eth0", 2, now), -ENOTDIR);
}

static void test_no_rx_queues(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	char *names[] = { "nq" };

	write_file(root, "sys/class/net/nq/ifindex", "11\n");
	make_dir(root, "sys/class/net/nq/queues/tx-0");

	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].ifindex, 11);
	assert_int_equal(inv->ifaces[0].n_rx, 0);
}

/*
 * A queue that goes between the listing and its read (a dangling entry
 * stands for it) is not one; a queue directory without rps_cpus (a kernel
 * without CONFIG_RPS) is, without RPS.
 */
static void test_queue_gone_while_read(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "1\n", "" };
	char *names[] = { "eth7" };

	fake_iface(root, "eth7", "12\n", rps, 2);
	make_symlink(root, "sys/class/net/eth7/queues/rx-2", "sys/nonexistent/rx-2");
	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].n_rx, 2);
	assert_int_equal(inv->ifaces[0].rx[0].index, 0);
	assert_true(inv->ifaces[0].rx[0].has_rps);
	assert_int_equal(inv->ifaces[0].rx[1].index, 1);
	assert_false(inv->ifaces[0].rx[1].has_rps);
}

/* A queue removed between the open of its rps_cpus and the read (sysfs
 * says ENODEV) is gone too, not an error of the whole inventory (caad's
 * start failed on it); while its directory is still there, it is a queue
 * without RPS this time. */
static void test_queue_gone_mid_read(void **state)
{
	const char *root = *state;
	static const char *const rps[] = { "1\n", "2\n", "1\n" };
	char *names[] = { "eth7" };

	fake_iface(root, "eth7", "12\n", rps, 3);
	read_fault.suffix = "eth7/queues/rx-2/rps_cpus";
	read_fault.error = -ENODEV;
	{
		_cleanup_(caad_inventory_freep) struct caad_inventory *inv = load_ok(root, names, 1);

		assert_int_equal(inv->ifaces[0].n_rx, 3);
		assert_false(inv->ifaces[0].rx[2].has_rps);
	}
	/* gone by the read: listed (a dangling entry stands for it), its read
	 * ENODEV */
	rm_tree_rel(root, "sys/class/net/eth7/queues/rx-2");
	make_symlink(root, "sys/class/net/eth7/queues/rx-2", "sys/nonexistent/rx-2");
	{
		_cleanup_(caad_inventory_freep) struct caad_inventory *inv = load_ok(root, names, 1);

		assert_int_equal(inv->ifaces[0].n_rx, 2);
		assert_int_equal(inv->ifaces[0].rx[1].index, 1);
		assert_true(inv->ifaces[0].rx[1].has_rps);
	}
	read_fault_done(2);
}

static void test_veth(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n", "00000000,00000003\n" };
	char *names[] = { "vb" };
	const struct caad_iface *vb;

	fake_iface(root, "vb", "5\n", rps, 2);
	write_file(root, "sys/devices/system/cpu/possible", "0-3\n");
	/* no proc/interrupts at all: not needed without a device */

	inv = load_ok(root, names, 1);
	vb = &inv->ifaces[0];
	assert_int_equal(vb->ifindex, 5);
	assert_int_equal(vb->n_rx, 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(vb->rx[i].index, i);
		assert_int_equal(vb->rx[i].irq, -1);
		assert_false(vb->rx[i].irq_managed);
		assert_false(vb->rx[i].has_irq_affinity);
		assert_true(vb->rx[i].has_rps);
	}
	assert_true(caad_cpumask_empty(&vb->rx[0].rps));
	assert_list(&vb->rx[1].rps, "0-1");
	assert_int_equal(inv->n_possible_cpus, 4);

	assert_ptr_equal(caad_inventory_find_ifindex(inv, 5), vb);
	assert_null(caad_inventory_find_ifindex(inv, 6));
	assert_null(caad_inventory_find_ifindex(inv, 0));
}

/* Queue directories in numeric order, junk ignored, RPS optional. */
static void test_queue_listing(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	char *names[] = { "vq" };
	static const unsigned idx[] = { 10, 2, 0, 1 };

	write_file(root, "sys/class/net/vq/ifindex", "9\n");
	for (size_t i = 0; i < ARRAY_SIZE(idx); i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "sys/class/net/vq/queues/rx-%u/rps_cpus", idx[i]);
		write_file(root, rel, idx[i] == 2 ? "4\n" : "0\n");
	}
	make_dir(root, "sys/class/net/vq/queues/rx-3");  /* no rps_cpus: kernel without CONFIG_RPS */
	make_dir(root, "sys/class/net/vq/queues/rx-x");  /* not a queue */
	make_dir(root, "sys/class/net/vq/queues/rx-");   /* not a queue */
	make_dir(root, "sys/class/net/vq/queues/tx-0");
	make_dir(root, "sys/class/net/vq/queues/rxq-4");
	write_file(root, "sys/class/net/vq/queues/rx-01/rps_cpus", "8\n"); /* not rx-1: the kernel writes no zero before N */

	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].n_rx, 5);
	static const unsigned want[] = { 0, 1, 2, 3, 10 };
	for (unsigned i = 0; i < 5; i++) {
		const struct caad_queue *q = &inv->ifaces[0].rx[i];

		assert_int_equal(q->index, want[i]);
		assert_int_equal(q->irq, -1);
		assert_int_equal(q->has_rps, want[i] != 3);
	}
	assert_list(&inv->ifaces[0].rx[2].rps, "2");
	/* no sys/devices/system/cpu/possible in this tree */
	assert_int_equal(inv->n_possible_cpus, 0);
}

/* i40e/ice: "i40e-eth0-TxRx-N" vectors, the misc vector is no queue. */
static void test_i40e(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n", "0\n", "0\n", "0\n" };
	static const unsigned msi[] = { 120, 121, 122, 123, 124 };
	char *names[] = { "eth0" };

	fake_iface(root, "eth0", "2\n", rps, 4);
	fake_device(root, "eth0", "sys/devices/pci0000:00/0000:04:00.0", "sys/devices/pci0000:00/0000:04:00.0", msi,
	            ARRAY_SIZE(msi));
	fake_interrupts(root,
	                " 110:          0          0  IR-PCI-MSI 2099200-edge      i40e-eth10-TxRx-0\n"
	                " 111:          0          0  IR-PCI-MSI 2099201-edge      i40e-eth10-TxRx-1\n"
	                " 120:          0          0  IR-PCI-MSI 2097152-edge      i40e-0000:04:00.0:misc\n"
	                " 121:          5          6  IR-PCI-MSI 2097153-edge      i40e-eth0-TxRx-0\n"
	                " 122:          7          8  IR-PCI-MSI 2097154-edge      i40e-eth0-TxRx-1\n"
	                " 123:          9         10  IR-PCI-MSI 2097155-edge      i40e-eth0-TxRx-2\n"
	                " 124:         11         12  IR-PCI-MSI 2097156-edge      i40e-eth0-TxRx-3\n");
	fake_affinity(root, 120, "0-1\n");
	fake_affinity(root, 121, "0-1\n");
	fake_affinity(root, 122, "1\n");
	fake_affinity(root, 123, "0\n");
	fake_affinity(root, 124, "0-1\n");

	inv = load_ok(root, names, 1);
	const struct caad_iface *eth0 = &inv->ifaces[0];
	assert_int_equal(eth0->ifindex, 2);
	assert_int_equal(eth0->n_rx, 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(eth0->rx[i].index, i);
		assert_int_equal(eth0->rx[i].irq, 121 + (int)i);
		assert_true(eth0->rx[i].has_rps);
		assert_false(eth0->rx[i].irq_managed);
	}
	assert_true(eth0->rx[0].has_irq_affinity);
	assert_list(&eth0->rx[0].irq_affinity, "0-1");
	assert_list(&eth0->rx[1].irq_affinity, "1");
	assert_list(&eth0->rx[2].irq_affinity, "0");
	assert_list(&eth0->rx[3].irq_affinity, "0-1");
}

/*
 * IRQ numbers past 4095 and past 65535 (large hosts): found, and the MSI
 * filter still keeps another device's vectors out, here an mlx5 NIC's
 * that names no interface.
 */
static void test_large_irq_numbers(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n", "0\n" };
	static const unsigned msi[] = { 70000, 5000 };
	char *names[] = { "eth0" };

	fake_iface(root, "eth0", "2\n", rps, 2);
	fake_device(root, "eth0", "sys/devices/pci0000:00/0000:04:00.0", "sys/devices/pci0000:00/0000:04:00.0", msi,
	            ARRAY_SIZE(msi));
	fake_interrupts(root,
	                " 200:          1          0  IR-PCI-MSIX-0000:99:00.0 1-edge  mlx5_comp0@pci:0000:99:00.0\n"
	                " 201:          1          0  IR-PCI-MSIX-0000:99:00.0 2-edge  mlx5_comp1@pci:0000:99:00.0\n"
	                " 5000:         5          6  IR-PCI-MSI 2097153-edge      i40e-eth0-TxRx-0\n"
	                " 70000:        7          8  IR-PCI-MSI 2097154-edge      i40e-eth0-TxRx-1\n");
	fake_affinity(root, 5000, "1\n");
	fake_affinity(root, 70000, "0\n");

	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].rx[0].irq, 5000);
	assert_list(&inv->ifaces[0].rx[0].irq_affinity, "1");
	assert_int_equal(inv->ifaces[0].rx[1].irq, 70000);
	assert_list(&inv->ifaces[0].rx[1].irq_affinity, "0");
}

/* Unparsable smp_affinity_list: that queue loses its IRQ, the rest stands. */
static void test_odd_affinity(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	_cleanup_free_ char *log = NULL;
	static const char *const rps[] = { "0\n", "0\n", "0\n", "0\n" };
	static const unsigned msi[] = { 121, 122, 123, 124 };
	char *names[] = { "eth0" }, zs[4096] = "";
	struct capture c;

	fake_iface(root, "eth0", "2\n", rps, 4);
	fake_device(root, "eth0", "sys/devices/pci0000:00/0000:04:00.0", "sys/devices/pci0000:00/0000:04:00.0", msi,
	            ARRAY_SIZE(msi));
	fake_interrupts(root,
	                " 121:          5          6  IR-PCI-MSI 2097153-edge      i40e-eth0-TxRx-0\n"
	                " 122:          7          8  IR-PCI-MSI 2097154-edge      i40e-eth0-TxRx-1\n"
	                " 123:          9         10  IR-PCI-MSI 2097155-edge      i40e-eth0-TxRx-2\n"
	                " 124:          9         10  IR-PCI-MSI 2097156-edge      i40e-eth0-TxRx-3\n");
	fake_affinity(root, 121, "1\n");
	write_file(root, "proc/irq/121/effective_affinity_list", "what\n");
	/* garbage longer than a log line: the path still in the warning */
	memset(zs, 'z', sizeof(zs) - 2);
	zs[sizeof(zs) - 2] = '\n';
	fake_affinity(root, 122, zs);
	fake_affinity(root, 123, "0-1\n");
	/* unreadable (a directory reads as EISDIR, as a file with NUL bytes
	 * would give EBADMSG): not garbage, not gone either */
	make_dir(root, "proc/irq/124/smp_affinity_list");
	make_dir(root, "sys/class/net/eth0/queues/rx-2/rps_flow_cnt");
	write_file(root, "proc/sys/net/core/rps_sock_flow_entries", "lots\n");

	capture_begin(&c, root);
	inv = load_ok(root, names, 1);
	log = capture_end(&c);
	assert_int_equal(inv->ifaces[0].rx[0].irq, 121);
	assert_list(&inv->ifaces[0].rx[0].irq_affinity, "1");
	assert_false(inv->ifaces[0].rx[0].has_effective_affinity);
	assert_int_equal(inv->ifaces[0].rx[1].irq, -1);
	assert_null(inv->ifaces[0].rx[1].irq_source); /* no IRQ, no source of one */
	assert_false(inv->ifaces[0].rx[1].has_irq_affinity);
	assert_true(inv->ifaces[0].rx[1].has_rps);
	assert_int_equal(inv->ifaces[0].rx[2].irq, 123);
	assert_list(&inv->ifaces[0].rx[2].irq_affinity, "0-1");
	assert_false(inv->ifaces[0].rx[2].has_rps_flow_cnt);
	assert_int_equal(inv->ifaces[0].rx[3].irq, 124);
	assert_false(inv->ifaces[0].rx[3].has_irq_affinity);
	assert_false(inv->has_rfs_table);
	/* each odd file is named in a warning */
	assert_int_equal(count_substr(log, "proc/irq/121/effective_affinity_list"), 1);
	assert_int_equal(count_substr(log, "proc/irq/122/smp_affinity_list"), 1);
	assert_int_equal(count_substr(log, "proc/irq/124/smp_affinity_list"), 1);
	assert_int_equal(count_substr(log, "queues/rx-2/rps_flow_cnt"), 1);
	assert_int_equal(count_substr(log, "proc/sys/net/core/rps_sock_flow_entries"), 1);
}

/*
 * An IRQ freed between /proc/interrupts and its smp_affinity_list (a
 * driver reset): its number may be another device's by the time the plan
 * is applied, so the queue does not keep it; said naming the queue.
 */
static void test_irq_freed_while_read(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	_cleanup_free_ char *log = NULL;
	static const char *const rps[] = { "0\n", "0\n" };
	static const unsigned msi[] = { 121, 122 };
	char *names[] = { "eth0" };
	struct capture c;

	fake_iface(root, "eth0", "2\n", rps, 2);
	fake_device(root, "eth0", "sys/devices/pci0000:00/0000:04:00.0", "sys/devices/pci0000:00/0000:04:00.0", msi,
	            ARRAY_SIZE(msi));
	fake_interrupts(root, " 121:          5          6  IR-PCI-MSI 2097153-edge      i40e-eth0-TxRx-0\n"
	                      " 122:          7          8  IR-PCI-MSI 2097154-edge      i40e-eth0-TxRx-1\n");
	fake_affinity(root, 121, "1\n");
	/* 122: no /proc/irq/122 (freed) */

	capture_begin(&c, root);
	inv = load_ok(root, names, 1);
	log = capture_end(&c);
	assert_int_equal(inv->ifaces[0].rx[0].irq, 121);
	assert_list(&inv->ifaces[0].rx[0].irq_affinity, "1");
	assert_int_equal(inv->ifaces[0].rx[1].irq, -1);
	assert_null(inv->ifaces[0].rx[1].irq_source);
	assert_false(inv->ifaces[0].rx[1].has_irq_affinity);
	assert_true(inv->ifaces[0].rx[1].has_rps); /* steered with RPS meanwhile */
	if (!strstr(log, "eth0 rx-1: IRQ 122 was freed while the inventory was read"))
		fail_msg("logged \"%s\"", log);
}

/* The IRQ freed between the open of its smp_affinity_list and the read
 * (procfs says EIO): not the queue's, as one whose file is gone; an EIO
 * while its directory is there leaves it the queue's, CPUs unknown. */
static void test_irq_freed_mid_read(void **state)
{
	const char *root = *state;
	static const char *const rps[] = { "0\n", "0\n" };
	static const unsigned msi[] = { 121, 122 };
	char *names[] = { "eth0" };

	fake_iface(root, "eth0", "2\n", rps, 2);
	fake_device(root, "eth0", "sys/devices/pci0000:00/0000:04:00.0", "sys/devices/pci0000:00/0000:04:00.0", msi,
	            ARRAY_SIZE(msi));
	fake_interrupts(root, " 121:          5          6  IR-PCI-MSI 2097153-edge      i40e-eth0-TxRx-0\n"
	                      " 122:          7          8  IR-PCI-MSI 2097154-edge      i40e-eth0-TxRx-1\n");
	fake_affinity(root, 121, "1\n");
	fake_affinity(root, 122, "0\n");
	read_fault.suffix = "irq/122/smp_affinity_list";
	read_fault.error = -EIO;
	{
		_cleanup_(caad_inventory_freep) struct caad_inventory *inv = load_ok(root, names, 1);

		assert_int_equal(inv->ifaces[0].rx[1].irq, 122);
		assert_false(inv->ifaces[0].rx[1].has_irq_affinity);
	}
	rm_tree_rel(root, "proc/irq/122");
	{
		_cleanup_(caad_inventory_freep) struct caad_inventory *inv = load_ok(root, names, 1);

		assert_int_equal(inv->ifaces[0].rx[0].irq, 121);
		assert_int_equal(inv->ifaces[0].rx[1].irq, -1);
		assert_false(inv->ifaces[0].rx[1].has_irq_affinity);
	}
	read_fault_done(2);
}

/* mlx5 on the kernels that named completion vectors from 1 ("mlx5_async0",
 * then "mlx5_comp1" for channel 0): rx-N is on mlx5_comp<N+1>, not a
 * device whose rx-0 has no vector (and no IRQ steering at all). */
static void test_mlx5_from_one(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n", "0\n", "0\n", "0\n" };
	static const unsigned msi[] = { 141, 142, 143, 144, 145 };
	char *names[] = { "eth3" };

	fake_iface(root, "eth3", "3\n", rps, 4);
	fake_device(root, "eth3", "sys/devices/pci0000:00/0000:05:00.0", "sys/devices/pci0000:00/0000:05:00.0", msi,
	            ARRAY_SIZE(msi));
	fake_interrupts(root,
	                " 141:          0          0  IR-PCI-MSIX-0000:05:00.0 0-edge  mlx5_async0@pci:0000:05:00.0\n"
	                " 142:          1          0  IR-PCI-MSIX-0000:05:00.0 1-edge  mlx5_comp1@pci:0000:05:00.0\n"
	                " 143:          1          0  IR-PCI-MSIX-0000:05:00.0 2-edge  mlx5_comp2@pci:0000:05:00.0\n"
	                " 144:          1          0  IR-PCI-MSIX-0000:05:00.0 3-edge  mlx5_comp3@pci:0000:05:00.0\n"
	                " 145:          1          0  IR-PCI-MSIX-0000:05:00.0 4-edge  mlx5_comp4@pci:0000:05:00.0\n");
	for (unsigned irq = 141; irq <= 145; irq++)
		fake_affinity(root, irq, "0-1\n");

	inv = load_ok(root, names, 1);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(inv->ifaces[0].rx[i].irq, 142 + (int)i);
}

/* mlx5: completion vectors by channel; two devices, told apart by MSI. */
static void test_mlx5(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n", "0\n", "0\n", "0\n" };
	static const unsigned msi5[] = { 141, 142, 143, 144, 145 }, msi6[] = { 131, 132, 133, 134, 135 };
	char *names[] = { "eth3", "eth4" };

	fake_iface(root, "eth3", "3\n", rps, 4);
	fake_iface(root, "eth4", "4\n", rps, 4);
	fake_device(root, "eth3", "sys/devices/pci0000:00/0000:05:00.0", "sys/devices/pci0000:00/0000:05:00.0", msi5,
	            ARRAY_SIZE(msi5));
	fake_device(root, "eth4", "sys/devices/pci0000:00/0000:06:00.0", "sys/devices/pci0000:00/0000:06:00.0", msi6,
	            ARRAY_SIZE(msi6));
	/* The other device's vectors come first: only the MSI list tells them apart. */
	fake_interrupts(root,
	                " 131:          0          0  IR-PCI-MSIX-0000:06:00.0 0-edge  mlx5_async0@pci:0000:06:00.0\n"
	                " 132:          1          0  IR-PCI-MSIX-0000:06:00.0 1-edge  mlx5_comp0@pci:0000:06:00.0\n"
	                " 133:          1          0  IR-PCI-MSIX-0000:06:00.0 2-edge  mlx5_comp1@pci:0000:06:00.0\n"
	                " 134:          1          0  IR-PCI-MSIX-0000:06:00.0 3-edge  mlx5_comp2@pci:0000:06:00.0\n"
	                " 135:          1          0  IR-PCI-MSIX-0000:06:00.0 4-edge  mlx5_comp3@pci:0000:06:00.0\n"
	                " 141:          0          0  IR-PCI-MSIX-0000:05:00.0 0-edge  mlx5_async0@pci:0000:05:00.0\n"
	                " 142:          1          0  IR-PCI-MSIX-0000:05:00.0 1-edge  mlx5_comp0@pci:0000:05:00.0\n"
	                " 143:          1          0  IR-PCI-MSIX-0000:05:00.0 2-edge  mlx5_comp1@pci:0000:05:00.0\n"
	                " 144:          1          0  IR-PCI-MSIX-0000:05:00.0 3-edge  mlx5_comp2@pci:0000:05:00.0\n"
	                " 145:          1          0  IR-PCI-MSIX-0000:05:00.0 4-edge  mlx5_comp3@pci:0000:05:00.0\n");
	for (unsigned irq = 142; irq <= 145; irq++)
		fake_affinity(root, irq, irq % 2 ? "1\n" : "0\n");
	for (unsigned irq = 132; irq <= 135; irq++)
		fake_affinity(root, irq, "0-1\n");

	inv = load_ok(root, names, 2);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(inv->ifaces[0].rx[i].irq, 142 + (int)i);
		assert_int_equal(inv->ifaces[1].rx[i].irq, 132 + (int)i);
		assert_true(inv->ifaces[0].rx[i].has_irq_affinity);
		assert_list(&inv->ifaces[0].rx[i].irq_affinity, i % 2 ? "1" : "0");
		assert_list(&inv->ifaces[1].rx[i].irq_affinity, "0-1");
	}
	assert_int_equal(inv->ifaces[0].ifindex, 3);
	assert_int_equal(inv->ifaces[1].ifindex, 4);
	assert_ptr_equal(caad_inventory_find_ifindex(inv, 4), &inv->ifaces[1]);
}

/* virtio-net: the device is virtioN, its MSI vectors sit on the PCI parent. */
static void test_virtio(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n", "0\n" };
	static const unsigned msi[] = { 30, 31, 32, 33, 34 };
	char *names[] = { "eth1" };

	fake_iface(root, "eth1", "3\n", rps, 2);
	fake_device(root, "eth1", "sys/devices/pci0000:00/0000:00:03.0/virtio1", "sys/devices/pci0000:00/0000:00:03.0",
	            msi, ARRAY_SIZE(msi));
	/* IRQ 28 still carries the name a renamed NIC had at probe time: only
	 * the MSI list on the PCI parent tells it is not eth1's. */
	fake_interrupts(root,
	                "  25:          0          0  PCI-MSI 65536-edge      virtio0-config\n"
	                "  28:          0          0  PCI-MSI 81920-edge      eth1-TxRx-0\n"
	                "  26:        100          0  PCI-MSI 65537-edge      virtio0-input.0\n"
	                "  30:          0          0  PCI-MSI 49152-edge      virtio1-config\n"
	                "  31:       1000          0  PCI-MSI 49153-edge      virtio1-input.0\n"
	                "  32:          1          0  PCI-MSI 49154-edge      virtio1-output.0\n"
	                "  33:          0       1000  PCI-MSI 49155-edge      virtio1-input.1\n"
	                "  34:          0          1  PCI-MSI 49156-edge      virtio1-output.1\n");
	fake_affinity(root, 31, "0\n");
	fake_affinity(root, 33, "1\n");

	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].n_rx, 2);
	assert_int_equal(inv->ifaces[0].rx[0].irq, 31);
	assert_int_equal(inv->ifaces[0].rx[1].irq, 33);
	assert_list(&inv->ifaces[0].rx[0].irq_affinity, "0");
	assert_list(&inv->ifaces[0].rx[1].irq_affinity, "1");
}

/*
 * A PCI NIC without MSI of its own (legacy INTx) under a root port with
 * MSI vectors (PME, AER): the port's vectors are not the NIC's, so its
 * queue keeps the IRQ its name gives. Only a virtio device looks at its
 * parent.
 */
static void test_msi_of_parent_not_taken(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n" };
	static const unsigned port_msi[] = { 24 };
	char *names[] = { "eth5" };

	fake_iface(root, "eth5", "70000\n", rps, 1); /* a high ifindex, as on container hosts */
	fake_device(root, "eth5", "sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0", "sys/devices/pci0000:00/0000:00:1c.0",
	            port_msi, ARRAY_SIZE(port_msi));
	write_file(root, "sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0/irq", "30\n");
	fake_affinity(root, 30, "0-1\n");
	fake_interrupts(root, "  24:          0          0  PCI-MSI 458752-edge      PCIe PME, aerdrv\n"
	                      "  30:        100          0  IO-APIC  16-fasteoi   eth5\n");
	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].ifindex, 70000);
	assert_int_equal(inv->ifaces[0].rx[0].irq, 30);
}

/* "eth2-rx-N"/"eth2-tx-N" vectors (eth20's are told apart by their MSI
 * vectors, and by name in test_match_irq_name). */
static void test_rx_tx_names(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n", "0\n" };
	static const unsigned msi[] = { 59, 60, 61, 62 };
	char *names[] = { "eth2" };

	fake_iface(root, "eth2", "6\n", rps, 2);
	fake_device(root, "eth2", "sys/devices/pci0000:00/0000:07:00.0",
	            "sys/devices/pci0000:00/0000:07:00.0", msi, ARRAY_SIZE(msi));
	fake_interrupts(root,
	                "  50:          0          0  PCI-MSI 1-edge      eth20-rx-0\n"
	                "  51:          0          0  PCI-MSI 2-edge      eth20-tx-0\n"
	                "  52:          0          0  PCI-MSI 3-edge      eth20-rx-1\n"
	                "  59:          0          0  PCI-MSI 9-edge      eth2-tx-0\n"
	                "  60:          0          0  PCI-MSI 4-edge      eth2-rx-0\n"
	                "  61:          0          0  PCI-MSI 5-edge      eth2-tx-1\n"
	                "  62:          0          0  PCI-MSI 6-edge      eth2-rx-1\n");
	fake_affinity(root, 60, "0\n");
	fake_affinity(root, 62, "1\n");

	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].rx[0].irq, 60);
	assert_int_equal(inv->ifaces[0].rx[1].irq, 62);
	assert_list(&inv->ifaces[0].rx[0].irq_affinity, "0");
	assert_list(&inv->ifaces[0].rx[1].irq_affinity, "1");
}

/*
 * A device without MSI has one IRQ, its INTx line (device/irq): other
 * lines that name eth0's queues are other devices' (a VF renamed eth0 in
 * another network namespace, "lan-eth0-TxRx-0"), and so is another line
 * named just "eth0". Without device/irq (not PCI, or no INTx pin: 0) no
 * IRQ is known to be the device's, and only a line named just its name
 * is taken.
 */
static void test_no_msi_intx_only(void **state)
{
	const char *root = *state;
	static const char *const rps[] = { "0\n" };
	char *names[] = { "eth0" };
	const char *dev = "sys/devices/pci0000:00/0000:09:00.0";
	static const char *const others = "  40:  1  0  PCI-MSIX-0000:0a:02.0 1-edge  iavf-eth0-TxRx-0\n"
	                                  "  41:  1  0  PCI-MSIX-0000:0b:00.0 1-edge  lan-eth0-TxRx-0\n"
	                                  "  42:  1  0  PCI-MSI 2-edge  eth0-rx-0\n"
	                                  "  43:  1  0  PCI-MSI 3-edge  eth0-0\n";
	static const struct {
		const char *irq;   /* device/irq, NULL: none */
		const char *plain; /* lines named just eth0 */
		int want;
	} cases[] = {
		{ "19\n", "  19:  1  0  IO-APIC 19-fasteoi  eth0\n  44:  1  0  IO-APIC 20-fasteoi  eth0\n", 19 },
		{ "19\n", "  44:  1  0  IO-APIC 20-fasteoi  eth0\n", -1 },
		{ "19\n", "", -1 },
		{ NULL, "  19:  1  0  IO-APIC 19-fasteoi  eth0\n", 19 },
		{ NULL, "", -1 },
		{ "0\n", "", -1 },
	};

	fake_iface(root, "eth0", "2\n", rps, 1);
	fake_device(root, "eth0", dev, dev, NULL, 0);
	for (unsigned irq = 40; irq <= 44; irq++)
		fake_affinity(root, irq, "0-1\n");
	fake_affinity(root, 19, "0-1\n");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
		_cleanup_free_ char *text = NULL;

		(void)unlink_rel(root, "sys/devices/pci0000:00/0000:09:00.0/irq");
		if (cases[i].irq)
			write_file(root, "sys/devices/pci0000:00/0000:09:00.0/irq", cases[i].irq);
		assert_true(asprintf(&text, "%s%s", others, cases[i].plain) > 0);
		fake_interrupts(root, text);
		inv = load_ok(root, names, 1);
		if (inv->ifaces[0].rx[0].irq != cases[i].want)
			fail_msg("case %zu: IRQ %d, expected %d", i, inv->ifaces[0].rx[0].irq, cases[i].want);
	}
}

/* A line named just the interface, on a device of several MSI-X vectors
 * whose queue vectors' names caad does not know: the misc vector (cxgb4:
 * "eth0", "eth0-FWeventq", "eth0-Rx0"), not rx-0's. */
static void test_plain_beside_msix(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n" };
	static const unsigned msi[] = { 40, 41, 42 };
	char *names[] = { "eth0" };
	const char *dev = "sys/devices/pci0000:00/0000:05:00.4";

	fake_iface(root, "eth0", "2\n", rps, 1);
	fake_device(root, "eth0", dev, dev, msi, ARRAY_SIZE(msi));
	fake_interrupts(root, "  40:  0  0  IR-PCI-MSIX-0000:05:00.4 0-edge  eth0\n"
	                      "  41:  0  0  IR-PCI-MSIX-0000:05:00.4 1-edge  eth0-FWeventq\n"
	                      "  42:  0  0  IR-PCI-MSIX-0000:05:00.4 2-edge  eth0-Rx0\n");
	for (unsigned irq = 40; irq <= 42; irq++)
		fake_affinity(root, irq, "0-1\n");
	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].rx[0].irq, -1);
}

/* The device is replaced (ifindex_now) or deleted (NULL) while the load
 * reads /proc/interrupts, a FIFO here: its open returns when the load opens
 * it, after the load's first read of the ifindex. No cmocka asserts in
 * this thread: what went wrong is its return value. */
struct midload {
	char *ifindex_path, *fifo;
	const char *ifindex_now;
};

static void *change_midload(void *arg)
{
	const struct midload *m = arg;
	static const char text[] = "           CPU0       CPU1\n"
	                           "  60:          0          0  PCI-MSI 4-edge      eth2-rx-0\n";
	const char *err = NULL;
	FILE *f;
	int fd;

	fd = open(m->fifo, O_WRONLY | O_CLOEXEC); /* until the load opens it */
	if (fd < 0)
		return (void *)"cannot open the FIFO";
	if (m->ifindex_now) {
		f = fopen(m->ifindex_path, "we");
		if (!f || fputs(m->ifindex_now, f) < 0 || fclose(f) != 0)
			err = "cannot rewrite ifindex";
	} else if (unlink(m->ifindex_path) < 0)
		err = "cannot remove ifindex";
	/* then the file: the load reads on past it */
	if (!err && write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1))
		err = "cannot write the FIFO";
	close(fd);
	return (void *)err;
}

/* A device deleted, or deleted and made again under its name, while its
 * inventory is read: an error naming it, not an inventory of no queues or
 * of two devices' queues under the first one's ifindex. */
static void test_replaced_midload(void **state)
{
	const char *root = *state;
	static const char *const rps[] = { "0\n" };
	char *names[] = { "eth2" };
	const char *now[] = { "31\n", NULL };
	const char *said[] = { "Interface eth2 was replaced while it was read (ifindex 6, now \"31\")",
		               "Interface eth2 went away while it was read" };

	for (size_t i = 0; i < ARRAY_SIZE(now); i++) {
		_cleanup_free_ char *log = NULL;
		struct caad_inventory *inv = NULL;
		struct midload m = { .ifindex_now = now[i] };
		struct capture c;
		pthread_t t;
		void *err;
		int r;

		fake_iface(root, "eth2", "6\n", rps, 1);
		if (i == 0)
			fake_device(root, "eth2", "sys/devices/pci0000:00/0000:07:00.0",
			            "sys/devices/pci0000:00/0000:07:00.0", NULL, 0);
		assert_int_equal(caad_path(&m.ifindex_path, root, "/sys/class/net/eth2/ifindex"), 0);
		assert_int_equal(caad_path(&m.fifo, root, "/proc/interrupts"), 0);
		(void)unlink(m.fifo);
		make_dir(root, "proc");
		assert_int_equal(mkfifo(m.fifo, 0600), 0);
		assert_int_equal(pthread_create(&t, NULL, change_midload, &m), 0);
		capture_begin(&c, root);
		r = caad_inventory_load(root, names, 1, &inv);
		log = capture_end(&c);
		/* a load that never opened the FIFO (a regression) must not
		 * leave the thread waiting for it */
		int rfd = open(m.fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		assert_int_equal(pthread_join(t, &err), 0);
		if (rfd >= 0)
			close(rfd);
		if (err)
			fail_msg("%s", (const char *)err);
		assert_int_equal(r, -ENODEV);
		assert_null(inv);
		if (!strstr(log, said[i]))
			fail_msg("logged \"%s\", not \"%s\"", log, said[i]);
		free(m.ifindex_path);
		free(m.fifo);
	}
}

/* An IRQ shared by several actions (its INTx line): the queue's is found among them. */
static void test_shared_irq_line(void **state)
{
	const char *root = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	static const char *const rps[] = { "0\n" };
	char *names[] = { "eth5" };

	fake_iface(root, "eth5", "8\n", rps, 1);
	fake_device(root, "eth5", "sys/devices/pci0000:00/0000:08:00.0",
	            "sys/devices/pci0000:00/0000:08:00.0", NULL, 0);
	write_file(root, "sys/devices/pci0000:00/0000:08:00.0/irq", "17\n");
	fake_interrupts(root, "  17:          3          0   IO-APIC  17-fasteoi   eth5-TxRx-0, ehci_hcd:usb1\n");
	fake_affinity(root, 17, "0-1\n");

	inv = load_ok(root, names, 1);
	assert_int_equal(inv->ifaces[0].rx[0].irq, 17);
	assert_list(&inv->ifaces[0].rx[0].irq_affinity, "0-1");
}

/* n rx queues, none with an IRQ yet, parsed against text (no MSI list) */
static void parse_queues(struct caad_iface *iface, struct caad_queue *rx, unsigned n, const char *name,
                         const char *text)
{
	*iface = (struct caad_iface){ .rx = rx, .n_rx = n };
	snprintf(iface->name, sizeof(iface->name), "%s", name);
	for (unsigned i = 0; i < n; i++)
		rx[i] = (struct caad_queue){ .index = i, .irq = -1 };
	assert_int_equal(caad_inventory_parse_interrupts(iface, text, NULL, 0, NULL), 0);
}

/*
 * The number in a vector's name counts the driver's vectors, not its rx
 * queues: it is taken for a queue only where each queue has a vector.
 */
static void test_vector_layouts(void **state)
{
	struct caad_queue rx[4];
	struct caad_iface iface;

	(void)state;
	/* i40e/ice on a constrained vector budget: 2 vectors for 4 queues, each
	 * serving a run of rings; which is not in the names: none is taken */
	parse_queues(&iface, rx, 4, "eth0",
	             "  120:  1  0  IR-PCI-MSIX 0-edge  i40e-0000:04:00.0:misc\n"
	             "  121:  1  0  IR-PCI-MSIX 1-edge  i40e-eth0-TxRx-0\n"
	             "  122:  1  0  IR-PCI-MSIX 2-edge  i40e-eth0-TxRx-1\n");
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(rx[i].irq, -1);

	/* one each: taken */
	parse_queues(&iface, rx, 2, "eth0",
	             "  121:  1  0  IR-PCI-MSIX 1-edge  i40e-eth0-TxRx-0\n"
	             "  122:  1  0  IR-PCI-MSIX 2-edge  i40e-eth0-TxRx-1\n");
	assert_int_equal(rx[0].irq, 121);
	assert_int_equal(rx[1].irq, 122);

	/* more vectors than queues (mlx5: a completion vector per CPU): queue N has vector N */
	parse_queues(&iface, rx, 2, "eth0",
	             "  60:  1  0  PCI-MSI 1-edge  eth0-TxRx-0\n"
	             "  61:  1  0  PCI-MSI 2-edge  eth0-TxRx-1\n"
	             "  62:  1  0  PCI-MSI 3-edge  eth0-TxRx-2\n");
	assert_int_equal(rx[0].irq, 60);
	assert_int_equal(rx[1].irq, 61);

	/* tg3 with RSS (tg3_request_irq()): vector 0 serves tx and the link,
	 * "eno1-tx-0"; rx-N is on "eno1-rx-(N+1)" */
	parse_queues(&iface, rx, 4, "eno1",
	             "  40:  1  0  PCI-MSI 0-edge  eno1-tx-0\n"
	             "  41:  1  0  PCI-MSI 1-edge  eno1-rx-1\n"
	             "  42:  1  0  PCI-MSI 2-edge  eno1-rx-2\n"
	             "  43:  1  0  PCI-MSI 3-edge  eno1-rx-3\n"
	             "  44:  1  0  PCI-MSI 4-edge  eno1-rx-4\n");
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(rx[i].irq, 41 + (int)i);
	/* ... with tx queues too (TSS): "eno1-0" serves only the link, the
	 * others both directions */
	parse_queues(&iface, rx, 4, "eno1",
	             "  40:  1  0  PCI-MSI 0-edge  eno1-0\n"
	             "  41:  1  0  PCI-MSI 1-edge  eno1-txrx-1\n"
	             "  42:  1  0  PCI-MSI 2-edge  eno1-txrx-2\n"
	             "  43:  1  0  PCI-MSI 3-edge  eno1-txrx-3\n"
	             "  44:  1  0  PCI-MSI 4-edge  eno1-txrx-4\n");
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(rx[i].irq, 41 + (int)i);
	/* a link vector named bare, as older layouts had it */
	parse_queues(&iface, rx, 2, "eno1",
	             "  40:  1  0  PCI-MSI 0-edge  eno1-0\n"
	             "  41:  1  0  PCI-MSI 1-edge  eno1-rx-1\n"
	             "  42:  1  0  PCI-MSI 2-edge  eno1-rx-2\n");
	assert_int_equal(rx[0].irq, 41);
	assert_int_equal(rx[1].irq, 42);
	/* tx and rx vectors each numbered from 0 (e1000e-like): no offset */
	parse_queues(&iface, rx, 2, "eth0",
	             "  50:  1  0  PCI-MSI 0-edge  eth0-tx-0\n"
	             "  51:  1  0  PCI-MSI 1-edge  eth0-tx-1\n"
	             "  52:  1  0  PCI-MSI 2-edge  eth0-rx-0\n"
	             "  53:  1  0  PCI-MSI 3-edge  eth0-rx-1\n");
	assert_int_equal(rx[0].irq, 52);
	assert_int_equal(rx[1].irq, 53);
	/* ena "-Tx-Rx-", vmxnet3 "-rxtx-" */
	parse_queues(&iface, rx, 2, "eth0",
	             "  60:  1  0  PCI-MSI 0-edge  ena-mgmnt@pci:0000:00:05.0\n"
	             "  61:  1  0  PCI-MSI 1-edge  eth0-Tx-Rx-0\n"
	             "  62:  1  0  PCI-MSI 2-edge  eth0-Tx-Rx-1\n");
	assert_int_equal(rx[0].irq, 61);
	assert_int_equal(rx[1].irq, 62);
	parse_queues(&iface, rx, 2, "ens192",
	             "  56:  1  0  PCI-MSI 0-edge  ens192-rxtx-0\n"
	             "  57:  1  0  PCI-MSI 1-edge  ens192-rxtx-1\n"
	             "  58:  1  0  PCI-MSI 2-edge  ens192-event-2\n");
	assert_int_equal(rx[0].irq, 56);
	assert_int_equal(rx[1].irq, 57);

	/* sfc's bare "eth0-N", one per queue: taken as they are */
	parse_queues(&iface, rx, 2, "eth0",
	             "  70:  1  0  PCI-MSI 0-edge  eth0-0\n"
	             "  71:  1  0  PCI-MSI 1-edge  eth0-1\n");
	assert_int_equal(rx[0].irq, 70);
	assert_int_equal(rx[1].irq, 71);

	/* a single queue on an IRQ named just "eth0" (INTx), but not a shared one */
	parse_queues(&iface, rx, 1, "eth0", "  19:  1  0  IO-APIC 19-fasteoi  eth0\n");
	assert_int_equal(rx[0].irq, 19);
	parse_queues(&iface, rx, 1, "eth0", "  19:  1  0  IO-APIC 19-fasteoi  ehci_hcd:usb1, eth0\n");
	assert_int_equal(rx[0].irq, -1);
	parse_queues(&iface, rx, 1, "eth0", "  19:  1  0  IO-APIC 19-fasteoi  eth0, ehci_hcd:usb1\n");
	assert_int_equal(rx[0].irq, -1);
	parse_queues(&iface, rx, 2, "eth0", "  19:  1  0  IO-APIC 19-fasteoi  eth0\n");
	assert_int_equal(rx[0].irq, -1);
	/* e1000e MSI-X: "eth0" is its other-causes vector beside "eth0-rx-0" */
	parse_queues(&iface, rx, 1, "eth0",
	             "  30:  1  0  PCI-MSI 0-edge  eth0-rx-0\n"
	             "  31:  1  0  PCI-MSI 1-edge  eth0-tx-0\n"
	             "  32:  1  0  PCI-MSI 2-edge  eth0\n");
	assert_int_equal(rx[0].irq, 30);
}

static void test_errors(void **state)
{
	const char *root = *state;
	struct caad_inventory *const sentinel = (struct caad_inventory *)(uintptr_t)0x1234;
	struct caad_inventory *inv;
	static const char *const good[] = { "0\n" }, *const bad[] = { "0\n", "zz\n" };

	fake_iface(root, "good", "10\n", good, 1);
	fake_iface(root, "garbage", "11\n", bad, 2);
	write_file(root, "sys/class/net/badidx/ifindex", "zz\n");
	make_dir(root, "sys/class/net/badidx/queues/rx-0");
	/* 2^32 + 1: out of range, not wrapped to ifindex 1 where unsigned long is 32 bits */
	write_file(root, "sys/class/net/hugeidx/ifindex", "4294967297\n");
	make_dir(root, "sys/class/net/hugeidx/queues/rx-0");
	write_file(root, "sys/class/net/zeroidx/ifindex", "0\n");
	make_dir(root, "sys/class/net/zeroidx/queues/rx-0");
	write_file(root, "sys/class/net/noqueues/ifindex", "12\n");

	static const struct {
		const char *name;
		int want;
	} cases[] = {
		{ "nosuch0", -ENODEV },
		{ "", -EINVAL },
		{ "a/b", -EINVAL },
		{ "../good", -EINVAL },
		{ "averyveryverylongname", -EINVAL },
		{ "badidx", -EINVAL },
		{ "hugeidx", -EINVAL },
		{ "zeroidx", -EINVAL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *names[] = { (char *)cases[i].name };

		inv = sentinel;
		assert_int_equal(caad_inventory_load(root, names, 1, &inv), cases[i].want);
		assert_ptr_equal(inv, sentinel); /* untouched on failure */
	}

	/* Garbage in rps_cpus: that queue is not steered with RPS, the
	 * interface is still managed. A NUL byte in it too (caad_read_file's
	 * -EBADMSG), which failed the whole inventory: no steering anywhere. */
	{
		char *names[] = { "garbage" };
		FILE *f;
		_cleanup_free_ char *nul_path = NULL;

		assert_true(asprintf(&nul_path, "%s/sys/class/net/garbage/queues/rx-0/rps_cpus", root) > 0);
		f = fopen(nul_path, "we");
		assert_non_null(f);
		assert_int_equal(fwrite("0\0\n", 1, 3, f), 3);
		assert_int_equal(fclose(f), 0);

		inv = NULL;
		assert_int_equal(caad_inventory_load(root, names, 1, &inv), 0);
		assert_non_null(inv);
		assert_int_equal(inv->n_ifaces, 1);
		assert_int_equal(inv->ifaces[0].n_rx, 2);
		assert_false(inv->ifaces[0].rx[0].has_rps);
		assert_false(inv->ifaces[0].rx[1].has_rps);
		caad_inventory_free(inv);
	}
	/* Garbage in numa_node ("1abc", or past an int): ignored, not read as node 1 or 0. */
	static const char *const odd_numa[] = { "1abc\n", "4294967296\n", "\n", "-2\n" };
	for (size_t i = 0; i < ARRAY_SIZE(odd_numa); i++) {
		char *names[] = { "good" };

		write_file(root, "sys/class/net/good/device/numa_node", odd_numa[i]);
		inv = NULL;
		assert_int_equal(caad_inventory_load(root, names, 1, &inv), 0);
		assert_int_equal(inv->ifaces[0].numa_node, -1);
		caad_inventory_free(inv);
	}
	/* No queues directory at all. */
	{
		char *names[] = { "noqueues" };

		inv = sentinel;
		assert_true(caad_inventory_load(root, names, 1, &inv) < 0);
		assert_ptr_equal(inv, sentinel);
	}
	/* One bad interface fails the whole load, wherever it is (no leak:
	 * the sanitizer builds run this). */
	{
		char *names[] = { "good", "nosuch0" };

		inv = sentinel;
		assert_int_equal(caad_inventory_load(root, names, 2, &inv), -ENODEV);
		assert_ptr_equal(inv, sentinel);
	}
	/* No interfaces: an empty inventory. */
	{
		_cleanup_(caad_inventory_freep) struct caad_inventory *empty = NULL;

		assert_int_equal(caad_inventory_load(root, NULL, 0, &empty), 0);
		assert_non_null(empty);
		assert_int_equal(empty->n_ifaces, 0);
		assert_null(caad_inventory_find_ifindex(empty, 1));
	}
	/* A sysroot that does not exist at all. */
	{
		char *names[] = { "good" };

		inv = sentinel;
		assert_int_equal(caad_inventory_load("/nonexistent/caad-test-root", names, 1, &inv), -ENODEV);
		assert_ptr_equal(inv, sentinel);
	}
	caad_inventory_free(NULL);
}

/* A device link whose name is longer than any device's (a dangling link
 * of a fake tree): the error names the interface. */
static void test_device_name_too_long(void **state)
{
	const char *root = *state;
	struct caad_inventory *const sentinel = (struct caad_inventory *)(uintptr_t)0x1234;
	struct caad_inventory *inv = sentinel;
	_cleanup_free_ char *log = NULL;
	static const char *const rps[] = { "0\n" };
	char *names[] = { "eth0" }, target[300 + 32] = "sys/devices/";
	struct capture c;

	fake_iface(root, "eth0", "2\n", rps, 1);
	memset(target + strlen(target), 'd', 300);
	make_symlink(root, "sys/class/net/eth0/device", target);
	fake_interrupts(root, "");

	capture_begin(&c, root);
	assert_int_equal(caad_inventory_load(root, names, 1, &inv), -ENAMETOOLONG);
	log = capture_end(&c);
	assert_ptr_equal(inv, sentinel);
	if (!strstr(log, "Interface eth0: the device name") || !strstr(log, "sys/class/net/eth0/device"))
		fail_msg("logged \"%s\"", log);
}

/* Without /proc/interrupts the queues are still there, without IRQs. */
static void test_no_proc_interrupts(void **state)
{
	const char *root = *state;
	static const char *const rps[] = { "0\n", "0\n" };
	static const unsigned msi[] = { 121, 122 };
	struct caad_inventory *inv = NULL;
	char *veth[] = { "vb" }, *nic[] = { "eth0" };
	int r;

	fake_iface(root, "vb", "5\n", rps, 2);
	fake_iface(root, "eth0", "2\n", rps, 2);
	fake_device(root, "eth0", "sys/devices/pci0000:00/0000:04:00.0", "sys/devices/pci0000:00/0000:04:00.0", msi,
	            ARRAY_SIZE(msi));

	inv = load_ok(root, veth, 1);
	assert_int_equal(inv->ifaces[0].n_rx, 2);
	caad_inventory_free(TAKE_PTR(inv));

	r = caad_inventory_load(root, nic, 1, &inv);
	assert_int_equal(r, 0);
	assert_non_null(inv);
	assert_int_equal(inv->ifaces[0].n_rx, 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(inv->ifaces[0].rx[i].irq, -1);
		assert_true(inv->ifaces[0].rx[i].has_rps);
	}
	caad_inventory_free(inv);
}

static void test_match_irq_name(void **state)
{
	static const struct {
		const char *ifname, *action;
		int want;
	} cases[] = {
		/* queue vectors */
		{ "eth0", "eth0-TxRx-0", 0 },
		{ "eth0", "eth0-TxRx-3", 3 },
		{ "eth0", "i40e-eth0-TxRx-3", 3 },
		{ "eth0", "ice-eth0-TxRx-0", 0 },
		{ "eth0", "iavf-eth0-TxRx-12", 12 },
		{ "ens1f0np0", "i40e-ens1f0np0-TxRx-7", 7 },
		{ "eth0", "eth0-rx-3", 3 },
		{ "eth2", "eth2-rx-0", 0 },
		{ "eth0", "eth0-fp-2", 2 },
		{ "eth0", "eth0-5", 5 },
		{ "eth1", "eth1-TxRx-0", 0 },
		{ "eth10", "eth10-TxRx-1", 1 },
		{ "virtio2", "virtio2-input.3", 3 },
		{ "virtio1", "virtio1-input.0", 0 },
		{ "0000:05:00.0", "mlx5_comp0@pci:0000:05:00.0", 0 },
		{ "0000:05:00.0", "mlx5_comp3@pci:0000:05:00.0", 3 },
		{ "0000:05:00.0", "mlx5_comp12@pci:0000:05:00.0", 12 },
		{ "eth0", "eth0-TxRx-65535", 65535 },
		/* not rx queue vectors */
		{ "eth0", "eth0-tx-1", -ENOENT },
		{ "eth2", "eth2-tx-0", -ENOENT },
		{ "eth1", "eth10-TxRx-1", -ENOENT },
		{ "eth1", "i40e-eth10-TxRx-1", -ENOENT },
		{ "eth1", "eth10-rx-1", -ENOENT },
		{ "eth0", "eth1-TxRx-3", -ENOENT },
		{ "eth0", "i40e-eth1-TxRx-3", -ENOENT },
		{ "eth", "eth0-TxRx-1", -ENOENT },
		{ "eth0", "mlx5_comp0@pci:0000:05:00.0", -ENOENT }, /* by its device only */
		{ "0000:06:00.0", "mlx5_comp0@pci:0000:05:00.0", -ENOENT },
		{ "0000:05:00.0", "mlx5_comp0@0000:05:00.0", -ENOENT },
		{ "0000:05:00.0", "mlx5_async0@pci:0000:05:00.0", -ENOENT },
		{ "eth0", "mlx5_comp@pci:0000:05:00.0", -ENOENT },
		{ "eth0", "mlx5_comp3", -ENOENT },
		{ "eth0", "mlx5_compx@pci:0000:05:00.0", -ENOENT },
		{ "virtio2", "virtio2-output.3", -ENOENT },
		{ "virtio2", "virtio2-config", -ENOENT },
		{ "virtio1", "virtio10-input.0", -ENOENT },
		{ "eth0", "i40e-0000:04:00.0:misc", -ENOENT },
		{ "0000:04:00.0", "i40e-0000:04:00.0:misc", -ENOENT },
		{ "eth0", "eth0", -ENOENT },
		{ "eth0", "eth0-", -ENOENT },
		{ "eth0", "eth0-TxRx-", -ENOENT },
		{ "eth0", "eth0-TxRx-3x", -ENOENT },
		{ "eth0", "eth0-TxRx--3", -ENOENT },
		{ "eth0", "eth0-TxRx-+3", -ENOENT },
		{ "eth0", "eth0-TxRx-99999", -ENOENT },
		{ "eth0", "i40e-eth0-misc", -ENOENT },
		{ "eth0", "timer", -ENOENT },
		{ "eth0", "2097153-edge", -ENOENT },
		{ "eth0", "IR-PCI-MSI", -ENOENT },
		{ "eth0", "12345", -ENOENT },
		{ "eth0", "", -ENOENT },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int r = caad_inventory_match_irq_name(cases[i].ifname, cases[i].action);

		if (r != cases[i].want)
			fail_msg("match_irq_name(\"%s\", \"%s\") = %d, expected %d", cases[i].ifname,
			         cases[i].action, r, cases[i].want);
	}
}

/* Read-only: the host's loopback has rx queues and no IRQ. */
static void test_host_loopback(void **state)
{
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	char *names[] = { "lo" };
	unsigned idx = if_nametoindex("lo");

	(void)state;
	if (idx == 0 || access("/sys/class/net/lo/queues", F_OK) < 0)
		test_skip("no loopback in /sys/class/net (sysfs not mounted?)");

	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(caad_inventory_load(pass ? "" : NULL, names, 1, &inv), 0);
		assert_non_null(inv);
		assert_int_equal(inv->n_ifaces, 1);
		assert_string_equal(inv->ifaces[0].name, "lo");
		assert_int_equal(inv->ifaces[0].ifindex, (int)idx);
		assert_true(inv->ifaces[0].n_rx >= 1);
		for (unsigned i = 0; i < inv->ifaces[0].n_rx; i++) {
			const struct caad_queue *q = &inv->ifaces[0].rx[i];
			char path[128];

			assert_int_equal(q->irq, -1);
			assert_false(q->has_irq_affinity);
			snprintf(path, sizeof(path), "/sys/class/net/lo/queues/rx-%u/rps_cpus", q->index);
			assert_int_equal(q->has_rps, access(path, F_OK) == 0);
		}
		assert_true(inv->n_possible_cpus >= 1);
		assert_true(inv->n_possible_cpus <= CAAD_CPUS_MAX);
		caad_inventory_free(TAKE_PTR(inv));
	}
}

/*
 * Without Interfaces=: physical (device link), up (IFF_UP), and multi-queue
 * or with an MSI IRQ. lo, veth and bridges have no device; a down NIC and a
 * single-queue NIC without IRQs are left out.
 */
static void test_autoselect(void **state)
{
	const char *root = *state;
	static const char *const two[] = { "0\n", "0\n" }, *const one[] = { "0\n" };
	static const unsigned msi[] = { 40 };
	char **names = NULL;

	make_dir(root, "sys/devices/pci0000:00/0000:04:00.0");
	make_dir(root, "sys/devices/pci0000:00/0000:04:00.1");
	make_dir(root, "sys/devices/pci0000:00/0000:05:00.0");
	fake_iface(root, "eth0", "2\n", two, 2);          /* up, 2 queues */
	make_symlink(root, "sys/class/net/eth0/device", "sys/devices/pci0000:00/0000:04:00.0");
	write_file(root, "sys/class/net/eth0/flags", "0x1003\n");
	fake_iface(root, "eth1", "3\n", two, 2);          /* down */
	make_symlink(root, "sys/class/net/eth1/device", "sys/devices/pci0000:00/0000:04:00.1");
	write_file(root, "sys/class/net/eth1/flags", "0x1002\n");
	fake_iface(root, "eth2", "4\n", one, 1);          /* up, 1 queue, no IRQ */
	make_symlink(root, "sys/class/net/eth2/device", "sys/devices/pci0000:00/0000:05:00.0");
	write_file(root, "sys/class/net/eth2/flags", "0x1003\n");
	fake_iface(root, "eno1", "5\n", one, 1);          /* up, 1 queue, an MSI IRQ */
	fake_device(root, "eno1", "sys/devices/pci0000:00/0000:06:00.0", "sys/devices/pci0000:00/0000:06:00.0", msi,
	            ARRAY_SIZE(msi));
	write_file(root, "sys/class/net/eno1/flags", "0x1003\n");
	fake_iface(root, "lo", "1\n", one, 1);            /* no device */
	write_file(root, "sys/class/net/lo/flags", "0x9\n");
	fake_iface(root, "veth0", "6\n", two, 2);         /* no device */
	write_file(root, "sys/class/net/veth0/flags", "0x1003\n");
	fake_iface(root, "br0", "7\n", one, 1);           /* no device */
	write_file(root, "sys/class/net/br0/flags", "0x1003\n");
	make_dir(root, "sys/class/net/br0/bridge");

	assert_int_equal(caad_inventory_autoselect(root, &names), 2);
	assert_string_equal(names[0], "eno1");
	assert_string_equal(names[1], "eth0");
	assert_null(names[2]);
	caad_strv_free(names);

	/* nothing worth managing: 0 and an empty list, not an error */
	_cleanup_free_ char *empty = NULL;
	assert_int_equal(caad_path(&empty, root, "/empty"), 0);
	write_file(root, "empty/sys/class/net/lo/flags", "0x9\n");
	names = NULL;
	assert_int_equal(caad_inventory_autoselect(empty, &names), 0);
	assert_non_null(names);
	assert_null(names[0]);
	caad_strv_free(names);

	/* no /sys/class/net at all: an error, not a crash */
	names = NULL;
	assert_true(caad_inventory_autoselect("/nonexistent-caad-root", &names) < 0);
	assert_null(names);
}

static bool exists_in(const char *root, const char *rel)
{
	_cleanup_free_ char *path = NULL;

	assert_int_equal(caad_path(&path, root, "/%s", rel), 0);
	return access(path, F_OK) == 0;
}

/* What an atomic write killed before its rename left beside a file of
 * caad's: removed, and nothing else (its own file, an operator's copy
 * such as journal.backup, other names, other lengths or characters, a
 * directory, a symlink). */
static void test_atomic_leftovers(void **state)
{
	const char *root = *state;
	_cleanup_free_ char *journal = NULL, *missing = NULL;
	static const char *const kept[] = { "run/journal", "run/journal.backup", "run/journal.Ab12Cd",
		                            "run/journal.caadtmp.abc12", "run/journal.caadtmp.abc1234",
		                            "run/journal.caadtmp.ab-123", "run/journal2.caadtmp.Ab12Cd",
		                            "run/state.json.caadtmp.Ab12Cd", "run/journal.caadtmp.dir000/x",
		                            "run/journal.caadtmp.link00" };

	write_file(root, "run/journal", "x\tx\n");
	write_file(root, "run/journal.caadtmp.Ab12Cd", "partial");
	write_file(root, "run/journal.caadtmp.000000", "");
	for (size_t i = 1; i < ARRAY_SIZE(kept) - 1; i++)
		write_file(root, kept[i], "");
	make_symlink(root, "run/journal.caadtmp.link00", "run/journal");
	assert_int_equal(caad_path(&journal, root, "/run/journal"), 0);

	assert_int_equal(caad_remove_atomic_leftovers(journal), 2);
	assert_false(exists_in(root, "run/journal.caadtmp.Ab12Cd"));
	assert_false(exists_in(root, "run/journal.caadtmp.000000"));
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++)
		assert_true(exists_in(root, kept[i]));
	assert_int_equal(caad_remove_atomic_leftovers(journal), 0);

	/* what caad_open_tmp() makes (every writer's temporary file, state.json's
	 * too) is what the sweep removes */
	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *tmp = NULL;
		int fd = caad_open_tmp(journal, &tmp);

		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(access(tmp, F_OK), 0);
	}
	assert_int_equal(caad_remove_atomic_leftovers(journal), 2);
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++)
		assert_true(exists_in(root, kept[i]));

	/* a directory that is not there yet (a first start): nothing to do */
	assert_int_equal(caad_path(&missing, root, "/nowhere/state.json"), 0);
	assert_int_equal(caad_remove_atomic_leftovers(missing), 0);
}

/* Both whole-file writes replace the file at once with exactly the data
 * and mode asked, leave no temporary file, and fail cleanly where the
 * directory is missing; only the durability (fsync) differs. */
static void test_write_replace(void **state)
{
	const char *root = *state;
	int (*const fns[])(const char *, const char *, size_t, unsigned) = { caad_write_file_atomic,
		                                                            caad_write_file_replace };

	for (size_t i = 0; i < ARRAY_SIZE(fns); i++) {
		_cleanup_free_ char *path = NULL, *text = NULL, *missing = NULL;
		struct stat st;

		write_file(root, "run/.keep", "");
		assert_int_equal(caad_path(&path, root, "/run/trials.json"), 0);
		assert_int_equal(fns[i](path, "{\"a\": 1}\n", 9, 0644), 0);
		assert_int_equal(caad_read_file_raw(path, &text), 0);
		assert_string_equal(text, "{\"a\": 1}\n");
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0644);
		free(text);
		/* shorter: nothing of the old file stays */
		assert_int_equal(fns[i](path, "{}", 2, 0600), 0);
		assert_int_equal(caad_read_file_raw(path, &text), 0);
		assert_string_equal(text, "{}");
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		assert_int_equal(caad_remove_atomic_leftovers(path), 0);
		assert_int_equal(unlink(path), 0);

		assert_int_equal(caad_path(&missing, root, "/nowhere/metrics.prom"), 0);
		assert_int_equal(fns[i](missing, "x", 1, 0644), -ENOENT);
	}
}

static const struct caad_napi *napi_of(const struct caad_iface *ifc, uint32_t id)
{
	for (unsigned i = 0; i < ifc->n_napis; i++)
		if (ifc->napis[i].id == id)
			return &ifc->napis[i];
	return NULL;
}

/* eno1 (threaded) was renamed lan0 and another NIC took the name eno1: the
 * kthread "napi/eno1-8193" is lan0's NAPI's, whatever its name says. Where
 * netlink listed the new eno1's NAPIs, 8193 is not one of them. */
static void test_napi_kthread_after_rename(void **state)
{
	struct caad_iface ifc = { .name = "eno1", .ifindex = 7 };

	(void)state;
	/* netlink's list, as Linux 6.8 gives it (no pids) and 6.9 does */
	ifc.napis = calloc(2, sizeof(*ifc.napis));
	assert_non_null(ifc.napis);
	ifc.napis[0] = (struct caad_napi){ .id = 8200, .irq = 120 };
	ifc.napis[1] = (struct caad_napi){ .id = 8201, .irq = 121, .kthread = 905 };
	ifc.n_napis = 2;

	assert_int_equal(caad_inventory_take_kthread(&ifc, true, 8193, 812, "napi/eno1-8193"), 0);
	assert_int_equal(ifc.n_napis, 2);
	assert_null(napi_of(&ifc, 8193));
	assert_int_equal(caad_inventory_take_kthread(&ifc, true, 8200, 830, "napi/eno1-8200"), 1);
	assert_int_equal(napi_of(&ifc, 8200)->kthread, 830);
	assert_string_equal(napi_of(&ifc, 8200)->kthread_comm, "napi/eno1-8200");
	assert_int_equal(napi_of(&ifc, 8200)->irq, 120);
	/* netlink's own pid stands */
	assert_int_equal(caad_inventory_take_kthread(&ifc, true, 8201, 831, "napi/eno1-8201"), 0);
	assert_int_equal(napi_of(&ifc, 8201)->kthread, 905);
	for (unsigned i = 0; i < ifc.n_napis; i++)
		assert_int_not_equal(ifc.napis[i].kthread, 812);

	/* no list (before 6.8, a sysroot): the name is all there is */
	assert_int_equal(caad_inventory_take_kthread(&ifc, false, 8193, 812, "napi/eno1-8193"), 1);
	assert_int_equal(ifc.n_napis, 3);
	assert_int_equal(napi_of(&ifc, 8193)->kthread, 812);
	assert_int_equal(napi_of(&ifc, 8193)->irq, -1);
	free(ifc.napis);
}

/* A flow's interface: by its ifindex, else by the NAPI of one of its
 * queues (a VLAN's or bond's flow: the upper device's ifindex). */
static void test_find_napi(void **state)
{
	struct caad_queue q0[] = { { .index = 0, .napi_id = 8193 }, { .index = 1, .napi_id = 8194 } };
	struct caad_queue q1[] = { { .index = 3, .napi_id = 9001 } };
	struct caad_iface ifs[] = { { .name = "eth0", .ifindex = 2, .rx = q0, .n_rx = 2 },
		                    { .name = "eth1", .ifindex = 3, .rx = q1, .n_rx = 1 } };
	struct caad_inventory inv = { .ifaces = ifs, .n_ifaces = 2 };
	int q = -1;

	(void)state;
	assert_ptr_equal(caad_inventory_find_napi(&inv, 8194, &q), &ifs[0]);
	assert_int_equal(q, 1);
	assert_ptr_equal(caad_inventory_find_napi(&inv, 9001, &q), &ifs[1]);
	assert_int_equal(q, 3);
	assert_null(caad_inventory_find_napi(&inv, 0, &q));
	assert_null(caad_inventory_find_napi(&inv, 7777, NULL));
	assert_ptr_equal(caad_inventory_find_flow(&inv, 42, 8193), &ifs[0]); /* eth0.300 */
	assert_ptr_equal(caad_inventory_find_flow(&inv, 3, 8193), &ifs[1]);  /* its ifindex first */
	assert_null(caad_inventory_find_flow(&inv, 42, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_veth, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_atomic_leftovers, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_replaced_midload, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_sysroot_canonical, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_locality_sysroot_not_host, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_locality_stale_hwloc_name, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_write_replace, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_queue_listing, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_no_rx_queues, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_iface_fate, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_iface_fate_unlisted, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_i40e, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_odd_affinity, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_irq_freed_while_read, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_large_irq_numbers, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_mlx5, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_mlx5_from_one, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_irq_freed_mid_read, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_queue_gone_mid_read, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_plain_beside_msix, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_virtio, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_msi_of_parent_not_taken, setup_root, teardown_root),
		cmocka_unit_test(test_vector_layouts),
		cmocka_unit_test_setup_teardown(test_queue_gone_while_read, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_rx_tx_names, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_shared_irq_line, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_no_msi_intx_only, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_errors, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_device_name_too_long, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_no_proc_interrupts, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_autoselect, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_ice_managed, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_locality_local_cpulist, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_bnxt_napi_kthreads, setup_root, teardown_root),
		cmocka_unit_test(test_match_irq_name),
		cmocka_unit_test(test_host_loopback),
		cmocka_unit_test(test_find_napi),
		cmocka_unit_test(test_napi_kthread_after_rename),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
