/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caadctl topology's drawing (ctl_topology_draw): a synthetic two-package
 * machine, a NIC with an IRQ queue and an RPS queue, a steered flow and an
 * unmarked one, drawn as the tree people see.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "caad/inventory.h"
#include "caad/topology.h"
#include "caadctl.h"

/* The topology's JSON as GetTopology gives it. */
static struct json_object *topology_json(void)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	struct caad_queue rx[2] = {
		{ .index = 0, .irq = 40, .has_irq_affinity = true, .has_effective_affinity = true, .has_rps = true },
		{ .index = 1, .irq = -1, .has_rps = true },
	};
	struct caad_iface ifc = { .name = "eth0", .ifindex = 2, .rx = rx, .n_rx = 2, .numa_node = -1,
		                  .combined_channels = 2, .rx_channels = 0, .has_local_cpus = true,
		                  .locality = CAAD_LOCALITY_NUMA_NODE };
	struct caad_inventory inv = { .ifaces = &ifc, .n_ifaces = 1 };
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(caad_topology_load_synthetic("package:2 l3:1 core:2 pu:2", &t), 0);
	caad_cpumask_set(&rx[0].irq_affinity, 0);
	caad_cpumask_set(&rx[0].irq_affinity, 1);
	caad_cpumask_set(&rx[0].effective_affinity, 1);
	caad_cpumask_set(&rx[1].rps, 2);
	for (unsigned c = 0; c < 4; c++)
		caad_cpumask_set(&ifc.local_cpus, c);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(caad_topology_to_json(t, &inv, f), 0);
	assert_int_equal(fclose(f), 0);
	return json_tokener_parse(text);
}

static char *draw(struct json_object *topo, const struct ctl_flow *flows, const int *marks, size_t n)
{
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = scols_new_table();
	char *out = NULL;

	assert_non_null(tb);
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_NEVER);
	scols_table_enable_noheadings(tb, 0);
	assert_int_equal(ctl_topology_draw(tb, topo, flows, marks, n), 0);
	assert_int_equal(scols_print_table_to_string(tb, &out), 0);
	return out;
}

/* Trailing blanks dropped, for a readable expectation. */
static void rstrip_lines(char *s)
{
	char *o = s;

	for (char *p = s; *p; p++) {
		if (*p == ' ') {
			size_t n = strspn(p, " ");
			if (p[n] == '\n' || p[n] == '\0') {
				p += n - 1;
				continue;
			}
		}
		*o++ = *p;
	}
	*o = '\0';
}

/* A queue's CPUs at their whole length: RPS on every other CPU of a
 * 256-CPU machine ("0,2,4,...,254", 455 characters), not cut or blank. */
static void test_long_cpulist(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	struct caad_queue rx = { .index = 0, .irq = -1, .has_rps = true };
	struct caad_iface ifc = { .name = "eth0", .ifindex = 2, .rx = &rx, .n_rx = 1, .numa_node = -1 };
	struct caad_inventory inv = { .ifaces = &ifc, .n_ifaces = 1 };
	_cleanup_(ctl_json_putp) struct json_object *topo = NULL;
	_cleanup_free_ char *text = NULL, *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(caad_topology_load_synthetic("package:2 l3:1 core:64 pu:2", &t), 0);
	for (unsigned c = 0; c < 256; c += 2)
		caad_cpumask_set(&rx.rps, c);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(caad_topology_to_json(t, &inv, f), 0);
	assert_int_equal(fclose(f), 0);
	topo = json_tokener_parse(text);
	assert_non_null(topo);
	out = draw(topo, NULL, NULL, 0);
	/* the CPUS cell (not wrapped) whole; the QUEUES cell from its start */
	if (!strstr(out, "0,2,4,6,8,10,") || !strstr(out, ",250,252,254 ") || !strstr(out, "RPS 0,2,4,6,"))
		fail_msg("the list was cut:\n%s", out);
}

static void test_tree(void **state)
{
	_cleanup_(ctl_json_putp) struct json_object *topo = topology_json();
	const struct ctl_flow flows[] = {
		{ .id = "0x10", .iface = "eth0", .queue = 0, .source = "10.0.0.1:40000", .destination = "10.0.0.2:5201",
		  .comm = "iperf3", .consumer_cpu = 0, .processing_cpu = 1, .steer_cpu = 1,
		  .relation = "smt-sibling", .reason = "r" },
		{ .id = "0x20", .iface = "eth0", .queue = 1, .source = "10.0.0.1:40001", .destination = "10.0.0.2:22",
		  .comm = "sshd", .consumer_cpu = 2, .processing_cpu = 2, .steer_cpu = -1,
		  .relation = "unsteered", .reason = "not heavy" },
	};
	const int marks[] = { 1, 0 };
	_cleanup_free_ char *out = NULL;

	assert_non_null(topo);
	out = draw(topo, flows, marks, ARRAY_SIZE(flows));
	rstrip_lines(out);
	assert_string_equal(out,
	                    "TOPOLOGY     CPUS QUEUES                          FLOWS\n"
	                    "machine      0-7\n"
	                    "|-package 0  0-3\n"
	                    "| |-L3 #0    0-3\n"
	                    "| | |-core 0 0-1\n"
	                    "| | | |-PU 0 0                                    F1 consumer\n"
	                    "| | | `-PU 1 1    eth0 rx-0 IRQ 40                F1 processing, target\n"
	                    "| | `-core 1 2-3\n"
	                    "| |   |-PU 2 2    eth0 rx-1 RPS\n"
	                    "| |   `-PU 3 3\n"
	                    "| `-NIC eth0 0-3  locality numa_node; 2 rx queues\n"
	                    "|   |-rx-0   1    IRQ 40; RPS off                 F1 arrives\n"
	                    "|   `-rx-1   2    RPS 2\n"
	                    "`-package 1  4-7\n"
	                    "  `-L3 #1    4-7\n"
	                    "    |-core 2 4-5\n"
	                    "    | |-PU 4 4\n"
	                    "    | `-PU 5 5\n"
	                    "    `-core 3 6-7\n"
	                    "      |-PU 6 6\n"
	                    "      `-PU 7 7");
}

/* A NIC without locality hangs from the machine; no flows, no marks. */
static void test_no_locality_no_flows(void **state)
{
	_cleanup_(ctl_json_putp) struct json_object *topo = topology_json();
	struct json_object *ifaces = NULL, *ifc;
	_cleanup_free_ char *out = NULL;

	assert_true(json_object_object_get_ex(topo, "interfaces", &ifaces));
	ifc = json_object_array_get_idx(ifaces, 0);
	json_object_object_add(ifc, "package", NULL);
	out = draw(topo, NULL, NULL, 0);
	assert_null(strstr(out, "F1"));
	assert_non_null(strstr(out, "\n`-NIC eth0 "));
}

/* Two flows on one CPU: one item each, "; " between them. */
static void test_two_flows_one_cpu(void **state)
{
	_cleanup_(ctl_json_putp) struct json_object *topo = topology_json();
	const struct ctl_flow flows[] = {
		{ .id = "0x10", .iface = "eth0", .queue = -1, .consumer_cpu = 2, .processing_cpu = 3, .steer_cpu = 3 },
		{ .id = "0x20", .iface = "eth0", .queue = -1, .consumer_cpu = 3, .processing_cpu = 2, .steer_cpu = -1 },
	};
	const int marks[] = { 1, 2 };
	_cleanup_free_ char *out = draw(topo, flows, marks, ARRAY_SIZE(flows));

	assert_non_null(strstr(out, "F1 consumer; F2 processing\n"));
	assert_non_null(strstr(out, "F1 processing, target; F2 consumer\n"));
	assert_null(strstr(out, "arrives")); /* no rx queue recorded */
}

static void test_not_a_topology(void **state)
{
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = scols_new_table();
	_cleanup_(ctl_json_putp) struct json_object *o = json_tokener_parse("{\"cpus\": 2}");

	assert_int_equal(ctl_topology_draw(tb, o, NULL, NULL, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_no_locality_no_flows),
		cmocka_unit_test(test_two_flows_one_cpu),
		cmocka_unit_test(test_not_a_topology),
		cmocka_unit_test(test_long_cpulist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
