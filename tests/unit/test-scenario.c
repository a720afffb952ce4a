/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scenarios of the offline simulator: the examples of docs/examples parse
 * and plan, every kind of bad input gets its error text (file, field, why),
 * and mangled input never crashes.
 */
#include <errno.h>
#include <glob.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "caad/macro.h"
#include "caad/plan.h"
#include "caad/scenario.h"
#include "caad/topology.h"

#include "test-util.h"

#define F "s.json"

static struct caad_topology *topo;

static int setup(void **state)
{
	(void)state;
	topo = load_fixture("24em64t-2n6c2t-pci.xml");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	caad_topology_free(topo);
	topo = NULL;
	return 0;
}

static struct caad_scenario *parse_ok(const char *text)
{
	struct caad_scenario *s = NULL;
	char *error = NULL;
	int r = caad_scenario_parse(text, strlen(text), F, topo, &s, &error);

	if (r < 0)
		fail_msg("parse failed (%d): %s", r, error ? error : "(no text)");
	assert_null(error);
	assert_non_null(s);
	return s;
}

/* The plan of a scenario as JSON, parsed back. */
static json_object *simulate(const struct caad_scenario *s, const struct caad_policy *policy)
{
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	json_object *o;
	FILE *f;

	assert_int_equal(caad_scenario_plan(s, topo, policy, &p), 0);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(caad_scenario_print(f, s, policy, p), 0);
	assert_int_equal(fclose(f), 0);
	o = json_tokener_parse(out);
	if (!o)
		fail_msg("output is not JSON:\n%s", out);
	return o;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no key \"%s\" in %s", key, json_object_to_json_string(o));
	return v;
}

static json_object *flow_out(json_object *plan, const char *id)
{
	json_object *flows = get(plan, "flows");

	for (size_t i = 0; i < json_object_array_length(flows); i++) {
		json_object *f = json_object_array_get_idx(flows, i);
		if (streq(json_object_get_string(get(f, "id")), id))
			return f;
	}
	fail_msg("no flow \"%s\" in the output", id);
	return NULL;
}

/* ---- valid input ------------------------------------------------------- */

static const char *const issue_example =
	"{\"interfaces\": [{\"name\": \"eth0\", \"numa_node\": 0,\n"
	"                 \"queues\": [{\"index\": 0, \"irq\": 100}, {\"index\": 1, \"irq\": 101, \"managed\": true}]}],\n"
	" \"flows\": [{\"id\": \"f1\", \"iface\": \"eth0\", \"queue\": 0, \"consumer_cpu\": 4, \"rate_bps\": 9000000000},\n"
	"           {\"id\": \"f2\", \"iface\": \"eth0\", \"queue\": 1, \"consumer_cpu\": 6, \"rate_bps\": 8000000000}],\n"
	" \"banned_cpus\": \"0-1\"}\n";

/* The issue's example: the key names it fixes, and what they say. */
static void test_issue_example(void **state)
{
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = parse_ok(issue_example);
	struct caad_policy policy;
	json_object *plan, *f1, *f2, *irqs, *rps;

	(void)state;
	assert_int_equal(s->inv.n_ifaces, 1);
	assert_string_equal(s->inv.ifaces[0].name, "eth0");
	assert_int_equal(s->inv.ifaces[0].n_rx, 2);
	assert_true(s->inv.ifaces[0].rx[1].irq_managed);
	assert_true(s->inv.ifaces[0].has_local_cpus);
	assert_true(caad_cpumask_equal(&s->inv.ifaces[0].local_cpus, &topo->packages[topo->cpus[0].package].cpus));
	assert_int_equal(s->n_flows, 2);
	assert_string_equal(s->flow_ids[1], "f2");
	assert_int_equal(s->flows[1].consumer_cpu, 6);
	assert_true(s->flows[1].rate_bps == UINT64_C(8000000000));
	assert_int_equal(caad_cpumask_count(&s->banned), 2);
	assert_null(s->previous);
	assert_true(s->now_ns == CAAD_SCENARIO_NOW_MS_DEFAULT * 1000000);

	caad_policy_init(&policy);
	plan = simulate(s, &policy);
	f1 = flow_out(plan, "f1");
	f2 = flow_out(plan, "f2");
	int s1 = json_object_get_int(get(f1, "steer_cpu")), s2 = json_object_get_int(get(f2, "steer_cpu"));
	assert_true(s1 >= 2 && s1 % 2 == 0 && s1 != 4 && s1 != 16);
	assert_true(s2 >= 2 && s2 % 2 == 0 && s2 != 6 && s2 != 18 && s2 != s1);
	assert_string_equal(json_object_get_string(get(f1, "relation")), "peer-core-same-llc");
	assert_non_null(strstr(json_object_get_string(get(f1, "reason")), "peer core in its LLC"));
	assert_true(json_object_is_type(get(f1, "considered"), json_type_string));

	irqs = get(plan, "irqs");
	assert_int_equal(json_object_array_length(irqs), 1);
	assert_int_equal(json_object_get_int(get(json_object_array_get_idx(irqs, 0), "irq")), 100);
	assert_int_equal(atoi(json_object_get_string(get(json_object_array_get_idx(irqs, 0), "cpus"))), s1);
	/* RPS: off for the IRQ's queue, the steer CPU for the managed one */
	rps = get(plan, "rps");
	assert_int_equal(json_object_array_length(rps), 2);
	json_object *r0 = json_object_array_get_idx(rps, 0), *r1 = json_object_array_get_idx(rps, 1);
	assert_string_equal(json_object_get_string(get(r0, "iface")), "eth0");
	assert_int_equal(json_object_get_int(get(r0, "queue")), 0);
	assert_string_equal(json_object_get_string(get(r0, "cpus")), "");
	assert_int_equal(json_object_get_int(get(r1, "queue")), 1);
	assert_int_equal(atoi(json_object_get_string(get(r1, "cpus"))), s2);
	assert_int_equal(json_object_array_length(get(plan, "kthreads")), 0);
	json_object_put(plan);
}

/* consumer_cpus: the CPUs of the consumer's window, each as if read on at
 * one scan; the planner keeps all of them and their cores free. On the
 * 24em64t, package 0 (one LLC) has the even CPUs; n and n + 12 share a core. */
static void test_consumer_cpus(void **state)
{
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = parse_ok(
		"{\"interfaces\": [{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"irq\": 100}, {\"index\": 1, \"irq\": 101}]}],\n"
		" \"flows\": [{\"id\": \"hop\", \"iface\": \"eth0\", \"queue\": 0, \"consumer_cpu\": 6,\n"
		"            \"consumer_cpus\": \"4,6\", \"rate_bps\": \"9G\"},\n"
		"           {\"id\": \"span\", \"iface\": \"eth0\", \"queue\": 1, \"consumer_cpu\": 5,\n"
		"            \"consumer_cpus\": \"2,5,8\", \"rate_bps\": \"8G\"},\n"
		"           {\"id\": \"one\", \"iface\": \"eth0\", \"queue\": 1, \"consumer_cpu\": 7, \"consumer_cpus\": \"7\",\n"
		"            \"rate_bps\": \"1G\"}]}\n");
	struct caad_policy policy;
	json_object *plan, *hop, *span, *one;
	const char *reason;
	int c;

	(void)state;
	assert_int_equal(s->flows[0].consumer_cpu, 6);
	assert_int_equal(s->flows[0].n_consumer_history, 1);
	assert_int_equal(s->flows[0].consumer_history[0], 4);
	assert_int_equal(s->flows[1].n_consumer_history, 2);
	assert_int_equal(s->flows[1].consumer_history[0], 2);
	assert_int_equal(s->flows[1].consumer_history[1], 8);
	assert_int_equal(s->flows[2].n_consumer_history, 0);

	caad_policy_init(&policy);
	plan = simulate(s, &policy);
	hop = flow_out(plan, "hop");
	c = json_object_get_int(get(hop, "steer_cpu"));
	assert_true(c % 2 == 0 && c % 12 != 4 && c % 12 != 6);
	assert_string_equal(json_object_get_string(get(hop, "relation")), "peer-core-same-llc");
	assert_string_equal(json_object_get_string(get(hop, "consumer_cpus")), "4,6");
	reason = json_object_get_string(get(hop, "reason"));
	assert_non_null(strstr(reason, "consumer on CPU 6, lately also on CPU 4: peer core in its LLC"));

	/* two of its three CPUs are in package 0's LLC: planned there, for
	 * the first of them */
	span = flow_out(plan, "span");
	c = json_object_get_int(get(span, "steer_cpu"));
	assert_true(c % 2 == 0 && c % 12 != 2 && c % 12 != 8 && c % 12 != 4 && c % 12 != 6);
	assert_int_equal(json_object_get_int(get(span, "anchor_cpu")), 2);
	assert_string_equal(json_object_get_string(get(span, "relation")), "peer-core-same-llc");
	assert_string_equal(json_object_get_string(get(span, "consumer_cpus")), "2,5,8");
	reason = json_object_get_string(get(span, "reason"));
	assert_non_null(strstr(reason, "consumer on CPU 2, lately also on CPUs 5,8; planned for "));
	assert_non_null(strstr(reason, "where it read most (2 of its last 3 scans)"));

	/* a window of one CPU is the plain consumer_cpu */
	one = flow_out(plan, "one");
	assert_false(json_object_object_get_ex(one, "consumer_cpus", NULL));
	json_object_put(plan);
}

/* Every example under docs/examples parses and plans. */
static void test_examples(void **state)
{
	const char *src = getenv("CAAD_SOURCE_ROOT");
	_cleanup_free_ char *pattern = NULL;
	glob_t g = {};
	struct caad_policy policy;

	(void)state;
	if (!src)
		test_skip("CAAD_SOURCE_ROOT is not set (run through meson test)");
	caad_policy_init(&policy);
	assert_true(asprintf(&pattern, "%s/docs/examples/*.json", src) > 0);
	assert_int_equal(glob(pattern, 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 4);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		_cleanup_(caad_scenario_freep) struct caad_scenario *s = NULL;
		_cleanup_free_ char *error = NULL;
		json_object *plan;
		size_t steered = 0;

		if (caad_scenario_load(g.gl_pathv[i], topo, &s, &error) < 0)
			fail_msg("%s", error ? error : g.gl_pathv[i]);
		plan = simulate(s, &policy);
		assert_int_equal(json_object_array_length(get(plan, "flows")), s->n_flows);
		for (size_t k = 0; k < s->n_flows; k++)
			steered += json_object_get_int(get(json_object_array_get_idx(get(plan, "flows"), k), "steer_cpu")) > 0;
		assert_true(steered > 0);
		json_object_put(plan);
	}
	globfree(&g);
}

/* Every field of the format, and what each becomes. */
static void test_all_fields(void **state)
{
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = parse_ok(
		"{\"now_ms\": 5000, \"banned_cpus\": \"\",\n"
		" \"interfaces\": [\n"
		"  {\"name\": \"eth1\", \"local_cpus\": \"1,3\", \"queues\": [\n"
		"    {\"index\": 3, \"irq\": 7, \"managed\": false, \"napi_id\": 9001, \"napi_kthread\": 77, \"rps\": false},\n"
		"    {\"index\": 5, \"irq\": null}]},\n"
		"  {\"name\": \"veth9\", \"queues\": []}],\n"
		" \"flows\": [\n"
		"  {\"id\": 42, \"iface\": \"eth1\", \"queue\": 5, \"consumer_cpu\": 3, \"consumer_tid\": 11, \"pid\": 10,\n"
		"   \"comm\": \"fdt\", \"rate_bps\": \"2.5G\", \"softirq_cpu\": 5, \"napi_id\": 9001,\n"
		"   \"laddr\": \"10.0.0.2\", \"lport\": 5201, \"raddr\": \"10.0.0.1\", \"rport\": 40312, \"age_ms\": 1500},\n"
		"  {\"id\": \"six\", \"iface\": \"veth9\", \"queue\": null, \"consumer_cpu\": null, \"rate_bps\": 9e9,\n"
		"   \"laddr\": \"2001:db8::1\", \"raddr\": \"2001:db8::2\"}],\n"
		" \"previous\": []}");
	const struct caad_iface *eth1;
	const struct caad_flow *f;

	(void)state;
	assert_true(s->now_ns == UINT64_C(5000000000));
	assert_int_equal(s->inv.n_ifaces, 2);
	eth1 = &s->inv.ifaces[0];
	assert_int_equal(eth1->ifindex, 1);
	assert_int_equal(s->inv.ifaces[1].ifindex, 2);
	assert_int_equal(eth1->n_rx, 2);
	assert_int_equal(eth1->rx[0].index, 3);
	assert_int_equal(eth1->rx[0].irq, 7);
	assert_false(eth1->rx[0].irq_managed);
	assert_int_equal(eth1->rx[0].napi_id, 9001);
	assert_int_equal(eth1->rx[0].napi_kthread, 77);
	assert_false(eth1->rx[0].has_rps);
	assert_int_equal(eth1->rx[1].irq, -1);
	assert_true(eth1->rx[1].has_rps);
	assert_true(eth1->has_local_cpus);
	assert_int_equal(caad_cpumask_count(&eth1->local_cpus), 2);
	assert_int_equal(s->inv.ifaces[1].n_rx, 0);
	assert_non_null(s->previous);
	assert_int_equal(s->previous->n_decisions, 0);

	f = &s->flows[0];
	assert_string_equal(s->flow_ids[0], "42");
	assert_true(s->flow_id_numeric[0]);
	assert_false(s->flow_id_numeric[1]);
	assert_int_equal(f->id, 1);
	assert_int_equal(f->ifindex, 1);
	assert_int_equal(f->rx_queue, 5);
	assert_int_equal(f->consumer_cpu, 3);
	assert_int_equal(f->tid, 11);
	assert_int_equal(f->pid, 10);
	assert_string_equal(f->comm, "fdt");
	assert_true(f->rate_bps == UINT64_C(2500000000));
	assert_int_equal(f->proc_cpu, 5);
	assert_int_equal(f->napi_id, 9001);
	assert_int_equal(f->family, AF_INET);
	assert_int_equal(f->lport, 5201);
	assert_int_equal(f->rport, 40312);
	assert_true(f->first_ns == UINT64_C(3500000000));
	char tuple[128];
	caad_flow_format_tuple(f, tuple, sizeof(tuple));
	assert_string_equal(tuple, "10.0.0.2:5201 <- 10.0.0.1:40312");

	f = &s->flows[1];
	assert_int_equal(f->id, 2);
	assert_int_equal(f->rx_queue, -1);
	assert_int_equal(f->consumer_cpu, -1);
	assert_true(f->rate_bps == UINT64_C(9000000000));
	assert_int_equal(f->family, AF_INET6);
	assert_int_equal(f->first_ns, 0);

	/* numeric ids stay numbers in the output; unknown consumers are null */
	struct caad_policy policy;
	caad_policy_init(&policy);
	json_object *plan = simulate(s, &policy);
	json_object *out0 = json_object_array_get_idx(get(plan, "flows"), 0);
	assert_true(json_object_is_type(get(out0, "id"), json_type_int));
	assert_int_equal(json_object_get_int(get(out0, "id")), 42);
	json_object *out1 = flow_out(plan, "six");
	assert_true(json_object_is_type(get(out1, "consumer_cpu"), json_type_null));
	assert_true(json_object_is_type(get(out1, "steer_cpu"), json_type_null));
	assert_true(json_object_is_type(get(out1, "queue"), json_type_null));
	assert_non_null(strstr(json_object_get_string(get(out1, "reason")), "consumer CPU unknown"));
	json_object_put(plan);
}

/* Light and young flows say why they are left alone. */
static void test_light_reasons(void **state)
{
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = parse_ok(
		"{\"now_ms\": 10000, \"interfaces\": [{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"irq\": 5}]}],\n"
		" \"flows\": [{\"id\": \"slow\", \"iface\": \"eth0\", \"consumer_cpu\": 2, \"rate_bps\": \"10M\"},\n"
		"           {\"id\": \"young\", \"iface\": \"eth0\", \"consumer_cpu\": 2, \"rate_bps\": \"9G\", \"age_ms\": 300}]}");
	struct caad_policy policy;
	json_object *plan;

	(void)state;
	caad_policy_init(&policy);
	plan = simulate(s, &policy);
	assert_false(json_object_get_boolean(get(flow_out(plan, "slow"), "heavy")));
	assert_non_null(strstr(json_object_get_string(get(flow_out(plan, "slow"), "reason")),
	                       "light: 10.0 Mbit/s, below RateThreshold=1.0 Gbit/s"));
	assert_string_equal(json_object_get_string(get(flow_out(plan, "young"), "reason")),
	                    "too young: seen for 300 ms, MinAgeMSec=500");
	assert_string_equal(json_object_get_string(get(flow_out(plan, "young"), "relation")), "unsteered");
	assert_int_equal(json_object_array_length(get(plan, "irqs")), 0);
	json_object_put(plan);

	/* younger than MinAgeMSec=0: never */
	policy.min_age_ms = 0;
	plan = simulate(s, &policy);
	assert_true(json_object_get_boolean(get(flow_out(plan, "young"), "heavy")));
	json_object_put(plan);
}

/* "previous": hysteresis, and the output's flows fed back as previous. */
static void test_previous(void **state)
{
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = parse_ok(
		"{\"now_ms\": 10000, \"interfaces\": [{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"irq\": 5}]}],\n"
		" \"flows\": [{\"id\": \"f\", \"iface\": \"eth0\", \"queue\": 0, \"consumer_cpu\": 4, \"rate_bps\": \"9G\"}],\n"
		" \"previous\": [{\"id\": \"f\", \"steer_cpu\": 2, \"consumer_cpu\": 0, \"since_ms\": 2000},\n"
		"              {\"id\": \"gone\", \"steer_cpu\": null, \"relation\": \"unsteered\", \"reason\": \"x\"}]}");
	struct caad_policy policy;
	json_object *plan, *f;

	(void)state;
	assert_non_null(s->previous);
	assert_int_equal(s->previous->n_decisions, 1); /* "gone" ended: ignored */
	caad_policy_init(&policy);
	plan = simulate(s, &policy);
	f = flow_out(plan, "f");
	assert_int_equal(json_object_get_int(get(f, "steer_cpu")), 2);
	assert_true(json_object_get_boolean(get(f, "held")));
	assert_int_equal(json_object_get_int(get(f, "since_ms")), 2000);
	assert_int_equal(json_object_get_int(get(f, "anchor_cpu")), 0);
	assert_non_null(strstr(json_object_get_string(get(f, "reason")), "keeps CPU 2"));

	/* the output as the next scenario's previous: still held */
	_cleanup_free_ char *next = NULL;
	assert_true(asprintf(&next,
	                     "{\"now_ms\": 10250, \"interfaces\": [{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"irq\": "
	                     "5}]}],\n \"flows\": [{\"id\": \"f\", \"iface\": \"eth0\", \"queue\": 0, \"consumer_cpu\": 16, "
	                     "\"rate_bps\": \"9G\"}],\n \"previous\": %s}",
	                     json_object_to_json_string(get(plan, "flows"))) > 0);
	json_object_put(plan);
	_cleanup_(caad_scenario_freep) struct caad_scenario *s2 = parse_ok(next);
	plan = simulate(s2, &policy);
	f = flow_out(plan, "f");
	assert_int_equal(json_object_get_int(get(f, "steer_cpu")), 2);
	assert_int_equal(json_object_get_int(get(f, "since_ms")), 2000);
	json_object_put(plan);
}

/* ---- bad input --------------------------------------------------------- */

static const char *const iface_ok = "\"interfaces\": [{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"irq\": 5}]}]";
static const char *const flow_ok = "{\"id\": \"f1\", \"iface\": \"eth0\", \"consumer_cpu\": 2, \"rate_bps\": 1}";

static void expect_error(const char *text, const char *want, int want_r)
{
	struct caad_scenario *s = NULL;
	_cleanup_free_ char *error = NULL;
	int r = caad_scenario_parse(text, strlen(text), F, topo, &s, &error);

	if (r != want_r)
		fail_msg("returned %d (error \"%s\"), expected %d for:\n%s", r, error ? error : "", want_r, text);
	assert_null(s);
	assert_non_null(error);
	if (!strstr(error, want))
		fail_msg("error \"%s\" lacks \"%s\"", error, want);
	assert_int_equal(strncmp(error, F ":", strlen(F ":")), 0);
}

/* The flows of a scenario with eth0 (one queue, rx-0) around them. */
static void expect_flow_error(const char *flow, const char *want)
{
	_cleanup_free_ char *text = NULL;

	assert_true(asprintf(&text, "{%s, \"flows\": [%s, %s]}", iface_ok, flow_ok, flow) > 0);
	expect_error(text, want, -EINVAL);
}

static void expect_iface_error(const char *iface, const char *want)
{
	_cleanup_free_ char *text = NULL;

	assert_true(asprintf(&text, "{\"interfaces\": [%s], \"flows\": []}", iface) > 0);
	expect_error(text, want, -EINVAL);
}

static void test_bad_json(void **state)
{
	(void)state;
	expect_error("", F ":1:1: invalid JSON", -EINVAL);
	expect_error("{", F ":1:2: invalid JSON", -EINVAL);
	expect_error("{\n  \"flows\": [1,\n  ]", F ":3:3: invalid JSON", -EINVAL);
	expect_error("{} {}", F ":1:4: invalid JSON", -EINVAL);
	expect_error("{\"a\": tru}", "invalid JSON", -EINVAL);
	expect_error("{\"flows\": \"\\ud800\"", "invalid JSON", -EINVAL);

	/* what json-c's strict mode takes and JSON does not, or reads otherwise:
	 * a key twice (the last would win), single quotes, \u0000 (cut there) */
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1,\n \"rate_bps\": 2}",
	                  ":2:2: invalid JSON: a key twice in one object");
	expect_error("{\"interfaces\": [], \"flows\": [], \"flows\": []}", ":1:33: invalid JSON: a key twice",
	             -EINVAL);
	expect_error("{'interfaces': [], 'flows': []}", ":1:2: invalid JSON: a single quote", -EINVAL);
	/* a key spelled with an escape: another key's twin ("flows") */
	expect_error("{\"interfaces\": [], \"flows\": [], \"flo\\u0077s\": [1]}", "invalid JSON: an escape in a key",
	             -EINVAL);
	expect_error("{\"now_ms\\u0000x\": 5, \"interfaces\": [], \"flows\": []}", ":1:9: invalid JSON: \\u0000 in a string",
	             -EINVAL);
	/* a lone surrogate (json-c reads either half as U+FFFD: two ids that
	 * differ would be one), bytes that are not UTF-8, NaN and Infinity */
	expect_error("{\"interfaces\": [{\"name\": \"\\ud800\", \"queues\": []}], \"flows\": []}",
	             ":1:27: invalid JSON: a lone UTF-16 surrogate (\\uD800-\\uDBFF without", -EINVAL);
	expect_error("{\"interfaces\": [{\"name\": \"\\ud800\\u0041\", \"queues\": []}], \"flows\": []}",
	             ":1:27: invalid JSON: a lone UTF-16 surrogate (\\uD800-\\uDBFF without", -EINVAL);
	expect_error("{\"interfaces\": [{\"name\": \"x\\uDC00\", \"queues\": []}], \"flows\": []}",
	             ":1:28: invalid JSON: a lone UTF-16 surrogate (\\uDC00-\\uDFFF without", -EINVAL);
	expect_error("{\"interfaces\": [{\"name\": \"\xff\", \"queues\": []}], \"flows\": []}", F ":1:",
	             -EINVAL);
	expect_error("{\"now_ms\": NaN, \"interfaces\": [], \"flows\": []}",
	             ":1:12: invalid JSON: NaN or Infinity: not a JSON number", -EINVAL);
	expect_error("{\"now_ms\": -Infinity, \"interfaces\": [], \"flows\": []}",
	             ":1:13: invalid JSON: NaN or Infinity", -EINVAL);
	/* the same key in other objects, and escapes, are JSON */
	{
		struct caad_scenario *s = NULL;
		_cleanup_free_ char *error = NULL, *text = NULL;

		assert_true(asprintf(&text, "{%s, \"flows\": [%s, {\"id\": \"it's \\\"f2\\\" \\\\ \\ud83d\\ude00\", \"iface\": "
		                            "\"eth0\", \"consumer_cpu\": 2, \"rate_bps\": 1}]}",
		                     iface_ok, flow_ok) > 0);
		if (caad_scenario_parse(text, strlen(text), F, topo, &s, &error) != 0)
			fail_msg("%s: %s", text, error);
		caad_scenario_free(s);
	}

	/* a NUL byte */
	{
		struct caad_scenario *s = NULL;
		_cleanup_free_ char *error = NULL;
		static const char text[] = "{\"interfaces\": []\0, \"flows\": []}";

		assert_int_equal(caad_scenario_parse(text, sizeof(text) - 1, F, topo, &s, &error), -EINVAL);
		assert_string_equal(error, F ":1:18: invalid JSON: a NUL byte");
	}

	/* nesting deeper than json-c takes: an error, no crash */
	{
		char deep[4096];
		size_t n = 0;

		for (unsigned i = 0; i < 1000; i++)
			deep[n++] = '[';
		for (unsigned i = 0; i < 1000; i++)
			deep[n++] = ']';
		deep[n] = '\0';
		expect_error(deep, "invalid JSON", -EINVAL);
	}
}

static void test_bad_structure(void **state)
{
	_cleanup_free_ char *text = NULL;

	(void)state;
	expect_error("[]", F ": (top level): expected an object, got an array", -EINVAL);
	expect_error("null\n", F ": (top level): expected an object, got null", -EINVAL);
	expect_error("null", F ": (top level): expected an object, got null", -EINVAL);
	expect_error("7", F ": (top level): expected an object, got a number", -EINVAL);
	expect_error("{\"flows\": []}", F ": interfaces: missing", -EINVAL);
	expect_error("{\"interfaces\": []}", F ": flows: missing", -EINVAL);
	expect_error("{\"interfaces\": {}, \"flows\": []}", F ": interfaces: expected an array, got an object", -EINVAL);
	expect_error("{\"interfaces\": [], \"flows\": 3}", F ": flows: expected an array, got a number", -EINVAL);
	expect_error("{\"interfaces\": [], \"flows\": [], \"flow\": []}",
	             F ": flow: unknown key (known: interfaces, flows, banned_cpus, previous, now_ms)", -EINVAL);
	expect_error("{\"interfaces\": [], \"flows\": [], \"now_ms\": -1}", F ": now_ms: -1 out of range", -EINVAL);
	expect_error("{\"interfaces\": [], \"flows\": [], \"now_ms\": \"1\"}",
	             F ": now_ms: expected an integer, got a string", -EINVAL);
	expect_error("{\"interfaces\": [7], \"flows\": []}", F ": interfaces[0]: expected an object, got a number", -EINVAL);

	assert_true(asprintf(&text, "{%s, \"flows\": [], \"banned_cpus\": \"0-99\"}", iface_ok) > 0);
	expect_error(text, F ": banned_cpus: CPU 24 not in the topology", -EINVAL);
	free(text);
	assert_true(asprintf(&text, "{%s, \"flows\": [], \"banned_cpus\": \"2-1\"}", iface_ok) > 0);
	expect_error(text, F ": banned_cpus: \"2-1\" is not a CPU list", -EINVAL);
	free(text);
	assert_true(asprintf(&text, "{%s, \"flows\": [], \"banned_cpus\": \"5000\"}", iface_ok) > 0);
	expect_error(text, F ": banned_cpus: \"5000\": CPU numbers must be below 4096", -EINVAL);
}

/* {"interfaces": [{"name": "i0", "queues": []}, ...], "flows": []} */
static char *many_ifaces(size_t n)
{
	size_t size = 64 + n * 48, len = 0;
	char *text = malloc(size);

	assert_non_null(text);
	len += (size_t)snprintf(text + len, size - len, "{\"interfaces\": [");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, size - len, "%s{\"name\": \"i%zu\", \"queues\": []}",
		                        i ? ", " : "", i);
	snprintf(text + len, size - len, "], \"flows\": []}");
	return text;
}

/* The planner keeps an interface's index in 16 bits: one more is the
 * scenario's error, naming the field, not "Planning failed" after it. */
static void test_too_many_interfaces(void **state)
{
	_cleanup_free_ char *text = many_ifaces(INT16_MAX + 1);
	struct caad_policy policy;

	(void)state;
	expect_error(text, F ": interfaces: 32768 interfaces: at most 32767", -EINVAL);
	free(text);

	/* as many as the planner takes: parsed and planned */
	text = many_ifaces(INT16_MAX);
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = parse_ok(text);
	assert_int_equal(s->inv.n_ifaces, INT16_MAX);
	caad_policy_init(&policy);
	json_object_put(simulate(s, &policy));
}

static void test_bad_interfaces(void **state)
{
	(void)state;
	expect_iface_error("{\"queues\": []}", F ": interfaces[0].name: missing");
	expect_iface_error("{\"name\": \"a/b\", \"queues\": []}", F ": interfaces[0].name: \"a/b\" is not an interface name");
	expect_iface_error("{\"name\": \"abcdefghijklmnop\", \"queues\": []}", "is not an interface name");
	expect_iface_error("{\"name\": 3, \"queues\": []}", F ": interfaces[0].name: expected a string, got a number");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": []}, {\"name\": \"eth0\", \"queues\": []}",
	                   F ": interfaces[1].name: \"eth0\" already used by interfaces[0]");
	expect_iface_error("{\"name\": \"eth0\"}", F ": interfaces[0].queues: missing");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": {}}", F ": interfaces[0].queues: expected an array");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [], \"mtu\": 9000}",
	                   F ": interfaces[0].mtu: unknown key (known: name, numa_node, local_cpus, queues, ntuple)");
	expect_iface_error("{\"name\": \"eth0\", \"numa_node\": 7, \"queues\": []}",
	                   F ": interfaces[0].numa_node: NUMA node 7 not in the topology");
	expect_iface_error("{\"name\": \"eth0\", \"numa_node\": -1, \"queues\": []}", F ": interfaces[0].numa_node: -1 out of range");
	expect_iface_error("{\"name\": \"eth0\", \"local_cpus\": \"0-99\", \"queues\": []}",
	                   F ": interfaces[0].local_cpus: CPU 24 not in the topology");
	expect_iface_error("{\"name\": \"eth0\", \"local_cpus\": \"x\", \"queues\": []}",
	                   F ": interfaces[0].local_cpus: \"x\" is not a CPU list");
	expect_iface_error("{\"name\": \"eth0\", \"local_cpus\": \"\", \"queues\": []}",
	                   F ": interfaces[0].local_cpus: an empty list; leave local_cpus out");
	expect_iface_error("{\"name\": \"eth0\", \"numa_node\": 0, \"local_cpus\": \"1\", \"queues\": []}",
	                   F ": interfaces[0].local_cpus: give numa_node or local_cpus, not both");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{}]}", F ": interfaces[0].queues[0].index: missing");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": \"0\"}]}",
	                   F ": interfaces[0].queues[0].index: expected an integer, got a string");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 1.5}]}",
	                   F ": interfaces[0].queues[0].index: expected an integer, got a fractional number");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 65536}]}",
	                   F ": interfaces[0].queues[0].index: 65536 out of range 0..65535");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 0}, {\"index\": 0}]}",
	                   F ": interfaces[0].queues[1].index: rx-0 already listed");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"managed\": true}]}",
	                   F ": interfaces[0].queues[0].managed: a managed queue needs an \"irq\"");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"managed\": 1, \"irq\": 4}]}",
	                   F ": interfaces[0].queues[0].managed: expected true or false, got a number");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"irq\": -5}]}",
	                   F ": interfaces[0].queues[0].irq: -5 out of range");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"napi_kthread\": 0}]}",
	                   F ": interfaces[0].queues[0].napi_kthread: 0 out of range 1..");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"cpus\": \"1\"}]}",
	                   F ": interfaces[0].queues[0].cpus: unknown key");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [[]]}", F ": interfaces[0].queues[0]: expected an object, got an array");
	/* ntuple: whether the NIC takes ntuple rules (rule 6) */
	expect_iface_error("{\"name\": \"eth0\", \"ntuple\": \"yes\", \"queues\": []}",
	                   F ": interfaces[0].ntuple: expected true or false, got a string");
	expect_iface_error("{\"name\": \"eth0\", \"ntuple\": 1, \"queues\": []}",
	                   F ": interfaces[0].ntuple: expected true or false, got a number");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"rps_flow_cnt\": -1}]}",
	                   F ": interfaces[0].queues[0].rps_flow_cnt: -1 out of range");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"rps\": false, \"rps_flow_cnt\": 8}]}",
	                   F ": interfaces[0].queues[0].rps_flow_cnt: a queue without \"rps\" has no RFS table either");
}

/* Repeated names and rx-N are found however far apart and in whatever
 * order, reported at the second as before, and before any error of a
 * later interface: the first error wins. */
static void test_duplicates(void **state)
{
	(void)state;
	expect_iface_error("{\"name\": \"a\", \"queues\": []}, {\"name\": \"b\", \"queues\": []}, "
	                   "{\"name\": \"c\", \"queues\": []}, {\"name\": \"b\", \"queues\": []}",
	                   F ": interfaces[3].name: \"b\" already used by interfaces[1]");
	/* a name thrice: at the second, naming the first */
	expect_iface_error("{\"name\": \"z\", \"queues\": []}, {\"name\": \"a\", \"queues\": []}, "
	                   "{\"name\": \"z\", \"queues\": []}, {\"name\": \"z\", \"queues\": []}",
	                   F ": interfaces[2].name: \"z\" already used by interfaces[0]");
	/* before a later interface's error, after an earlier one's, before
	 * an error later in its own interface */
	expect_iface_error("{\"name\": \"eth0\", \"queues\": []}, {\"name\": \"eth0\", \"queues\": []}, "
	                   "{\"name\": \"eth2\", \"numa_node\": 7, \"queues\": []}",
	                   F ": interfaces[1].name: \"eth0\" already used by interfaces[0]");
	expect_iface_error("{\"name\": \"eth0\", \"numa_node\": 7, \"queues\": []}, {\"name\": \"eth0\", \"queues\": []}",
	                   F ": interfaces[0].numa_node: NUMA node 7 not in the topology");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": []}, {\"name\": \"eth0\", \"numa_node\": 7}",
	                   F ": interfaces[1].name: \"eth0\" already used by interfaces[0]");
	/* a name that differs only in its end, or is another's prefix, is not the same */
	expect_iface_error("{\"name\": \"eth0\", \"queues\": []}, {\"name\": \"eth\", \"queues\": []}, "
	                   "{\"name\": \"eth01\", \"queues\": []}, {\"name\": \"eth1\", \"queues\": 3}",
	                   F ": interfaces[3].queues: expected an array");

	/* rx-N: the second of it, however far apart; numbers in one 64-bit
	 * word or at the ends of the range */
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 3}, {\"index\": 1}, {\"index\": 2}, "
	                   "{\"index\": 1}]}",
	                   F ": interfaces[0].queues[3].index: rx-1 already listed");
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 65535}, {\"index\": 0}, {\"index\": 64}, "
	                   "{\"index\": 63}, {\"index\": 65534}, {\"index\": 65535}]}",
	                   F ": interfaces[0].queues[5].index: rx-65535 already listed");
	/* ... an error before the second comes first */
	expect_iface_error("{\"name\": \"eth0\", \"queues\": [{\"index\": 1}, {\"index\": 2, \"irq\": -1}, "
	                   "{\"index\": 1}]}",
	                   F ": interfaces[0].queues[1].irq: -1 out of range");
	/* ... and one of another interface is not a repeat; nor is one of
	 * an interface before (in a 64-bit word with another number) */
	{
		_cleanup_(caad_scenario_freep) struct caad_scenario *s = parse_ok(
			"{\"interfaces\": [{\"name\": \"eth0\", \"queues\": [{\"index\": 0}, {\"index\": 65535}, "
			"{\"index\": 1}]},\n"
			"                {\"name\": \"eth1\", \"queues\": [{\"index\": 1}, {\"index\": 0}, {\"index\": 65535}]},\n"
			"                {\"name\": \"eth2\", \"queues\": [{\"index\": 2}, {\"index\": 9}, {\"index\": 5}]},\n"
			"                {\"name\": \"eth3\", \"queues\": []}],\n"
			" \"flows\": [{\"id\": 1, \"iface\": \"eth2\", \"queue\": 9, \"rate_bps\": 1},\n"
			"           {\"id\": 2, \"iface\": \"eth2\", \"queue\": 2, \"rate_bps\": 1},\n"
			"           {\"id\": 3, \"iface\": \"eth0\", \"queue\": 65535, \"rate_bps\": 1},\n"
			"           {\"id\": 4, \"iface\": \"eth3\", \"rate_bps\": 1}]}");

		assert_int_equal(s->inv.n_ifaces, 4);
		assert_int_equal(s->inv.ifaces[1].n_rx, 3);
		assert_int_equal(s->flows[0].ifindex, 3);
		assert_int_equal(s->flows[0].rx_queue, 9);
		assert_int_equal(s->flows[1].rx_queue, 2);
		assert_int_equal(s->flows[2].ifindex, 1);
		assert_int_equal(s->flows[3].ifindex, 4);
	}

	/* a flow's iface and queue, looked up: the interface's own queues,
	 * in whatever order they were listed */
	{
		static const char *const ifaces =
			"\"interfaces\": [{\"name\": \"eth0\", \"queues\": [{\"index\": 0}]}, "
			"{\"name\": \"eth1\", \"queues\": [{\"index\": 5}, {\"index\": 2}, {\"index\": 9}]}, "
			"{\"name\": \"eth2\", \"queues\": []}]";
		static const struct {
			const char *flow, *want;
		} cases[] = {
			{ "{\"id\": 1, \"iface\": \"eth1\", \"queue\": 3, \"rate_bps\": 1}", F ": flows[0].queue: eth1 has no rx-3" },
			{ "{\"id\": 1, \"iface\": \"eth1\", \"queue\": 0, \"rate_bps\": 1}", F ": flows[0].queue: eth1 has no rx-0" },
			{ "{\"id\": 1, \"iface\": \"eth1\", \"queue\": 10, \"rate_bps\": 1}", F ": flows[0].queue: eth1 has no rx-10" },
			{ "{\"id\": 1, \"iface\": \"eth2\", \"queue\": 0, \"rate_bps\": 1}", F ": flows[0].queue: eth2 has no rx-0" },
			{ "{\"id\": 1, \"iface\": \"eth\", \"rate_bps\": 1}", F ": flows[0].iface: no interface \"eth\" in interfaces" },
			{ "{\"id\": 1, \"iface\": \"eth10\", \"rate_bps\": 1}",
			  F ": flows[0].iface: no interface \"eth10\" in interfaces" },
			{ "{\"id\": 1, \"iface\": \"abcdefghijklmnopq\", \"rate_bps\": 1}",
			  F ": flows[0].iface: no interface \"abcdefghijklmnopq\" in interfaces" },
		};

		for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
			_cleanup_free_ char *text = NULL;

			assert_true(asprintf(&text, "{%s, \"flows\": [%s]}", ifaces, cases[i].flow) > 0);
			expect_error(text, cases[i].want, -EINVAL);
		}
		/* and the ntuple_queue of a previous entry */
		{
			_cleanup_free_ char *text = NULL;

			assert_true(asprintf(&text, "{%s, \"flows\": [{\"id\": 1, \"iface\": \"eth1\", \"rate_bps\": 1}], "
			                            "\"previous\": [{\"id\": 1, \"steer_cpu\": 2, \"ntuple_queue\": 3}]}",
			                     ifaces) > 0);
			expect_error(text, F ": previous[0].ntuple_queue: eth1 has no rx-3", -EINVAL);
		}
	}
}

static void test_bad_flows(void **state)
{
	(void)state;
	/* the issue's own example of an error */
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"consumer_cpu\": 99, \"rate_bps\": 1}",
	                  F ": flows[1].consumer_cpu: CPU 99 not in the topology");
	expect_flow_error("{\"iface\": \"eth0\", \"rate_bps\": 1}", F ": flows[1].id: missing");
	expect_flow_error("{\"id\": \"\", \"iface\": \"eth0\", \"rate_bps\": 1}", F ": flows[1].id: empty");
	expect_flow_error("{\"id\": true, \"iface\": \"eth0\", \"rate_bps\": 1}",
	                  F ": flows[1].id: expected a string or an integer, got a boolean");
	expect_flow_error("{\"id\": \"f1\", \"iface\": \"eth0\", \"rate_bps\": 1}",
	                  F ": flows[1].id: \"f1\" already used by flows[0]");
	expect_flow_error("{\"id\": \"f2\", \"rate_bps\": 1}", F ": flows[1].iface: missing");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth9\", \"rate_bps\": 1}",
	                  F ": flows[1].iface: no interface \"eth9\" in interfaces");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"queue\": 3, \"rate_bps\": 1}",
	                  F ": flows[1].queue: eth0 has no rx-3");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\"}", F ": flows[1].rate_bps: missing");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": -1}", F ": flows[1].rate_bps: -1 out of range");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1.5}",
	                  F ": flows[1].rate_bps: 1.5 is not a whole number of bit/s");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": \"fast\"}",
	                  F ": flows[1].rate_bps: \"fast\" is not a rate");
	/* beyond 64 bits: json-c reads the nearest bound, refused here */
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 100000000000000000000}",
	                  F ": flows[1].rate_bps: an integer at or beyond the 64-bit limit, out of range 0..18446744073709551614");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": \"100000000000000000000\"}",
	                  F ": flows[1].rate_bps: \"100000000000000000000\" is larger than 18446744073709551615 bit/s");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": \"1.0005K\"}",
	                  F ": flows[1].rate_bps: \"1.0005K\" is not a whole number of bit/s");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"age_ms\": -99999999999999999999}",
	                  F ": flows[1].age_ms: an integer at or beyond the 64-bit limit, out of range 0..3600000");
	/* one address alone: the other is not 0.0.0.0 */
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"laddr\": \"10.0.0.1\", \"lport\": 1,"
	                  " \"rport\": 2}",
	                  F ": flows[1].raddr: missing: laddr and raddr go together");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"raddr\": \"::1\"}",
	                  F ": flows[1].laddr: missing: laddr and raddr go together");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": [1]}",
	                  F ": flows[1].rate_bps: expected bit/s as an integer or a string such as \"9G\", got an array");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"consumer_cpu\": -1}",
	                  F ": flows[1].consumer_cpu: -1 out of range 0..4095");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"consumer_cpus\": \"4-5\"}",
	                  F ": flows[1].consumer_cpus: needs consumer_cpu, the CPU of the latest read (one of them)");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"consumer_cpu\": 6, \"consumer_cpus\": \"4-5\"}",
	                  F ": flows[1].consumer_cpus: must contain consumer_cpu 6");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"consumer_cpu\": 0, \"consumer_cpus\": \"0-4\"}",
	                  F ": flows[1].consumer_cpus: 5 CPUs: at most 4, the scans of the window");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"consumer_cpu\": 0, \"consumer_cpus\": \"0,99\"}",
	                  F ": flows[1].consumer_cpus: CPU 99 not in the topology");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"consumer_cpu\": 0, \"consumer_cpus\": \"0-\"}",
	                  F ": flows[1].consumer_cpus: \"0-\" is not a CPU list such as \"0-3,8\"");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"consumer_cpu\": 0, \"consumer_cpus\": [0, 1]}",
	                  F ": flows[1].consumer_cpus: expected a string, got an array");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"softirq_cpu\": 30}",
	                  F ": flows[1].softirq_cpu: CPU 30 not in the topology");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"comm\": \"abcdefghijklmnop\"}",
	                  F ": flows[1].comm: \"abcdefghijklmnop\" is longer than 15 bytes");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"laddr\": \"10.0.0.300\"}",
	                  F ": flows[1].laddr: \"10.0.0.300\" is not an IPv4 or IPv6 address");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"laddr\": \"10.0.0.1\", \"raddr\": \"::1\"}",
	                  F ": flows[1].raddr: \"::1\": laddr and raddr must be of the same family");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"lport\": 70000}",
	                  F ": flows[1].lport: 70000 out of range 0..65535");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate_bps\": 1, \"age_ms\": 3600001}",
	                  F ": flows[1].age_ms: 3600001 out of range 0..3600000");
	expect_flow_error("{\"id\": \"f2\", \"iface\": \"eth0\", \"rate\": 1}",
	                  F ": flows[1].rate: unknown key (known: id, iface, queue, consumer_cpu,");
	expect_flow_error("\"f2\"", F ": flows[1]: expected an object, got a string");
}

static void test_bad_previous(void **state)
{
	static const struct {
		const char *previous, *want;
	} cases[] = {
		{ "{}", F ": previous: expected an array, got an object" },
		{ "[3]", F ": previous[0]: expected an object, got a number" },
		{ "[{\"steer_cpu\": 1}]", F ": previous[0].id: missing" },
		{ "[{\"id\": \"f1\"}]", F ": previous[0].steer_cpu: missing (null for a flow left alone)" },
		{ "[{\"id\": \"f1\", \"steer_cpu\": \"2\"}]", F ": previous[0].steer_cpu: expected an integer, got a string" },
		{ "[{\"id\": \"f1\", \"steer_cpu\": 4096}]", F ": previous[0].steer_cpu: 4096 out of range 0..4095" },
		{ "[{\"id\": \"f1\", \"steer_cpu\": 2, \"consumer_cpu\": 50}]",
		  F ": previous[0].consumer_cpu: CPU 50 not in the topology" },
		{ "[{\"id\": \"f1\", \"steer_cpu\": 2, \"since_ms\": 99999999}]", F ": previous[0].since_ms: 99999999 out of range" },
		{ "[{\"id\": \"f1\", \"steer_cpu\": 2}, {\"id\": \"f1\", \"steer_cpu\": 3}]",
		  F ": previous[1].id: \"f1\" listed twice" },
		{ "[{\"id\": \"f1\", \"steer_cpu\": 2, \"shares_queue\": \"no\"}]",
		  F ": previous[0].shares_queue: expected true or false, got a string" },
		{ "[{\"id\": \"f1\", \"steer_cpu\": 2, \"ntuple_queue\": 9}]", F ": previous[0].ntuple_queue: eth0 has no rx-9" },
		{ "[{\"id\": \"f1\", \"steer_cpu\": 2, \"ntuple_queue\": \"1\"}]",
		  F ": previous[0].ntuple_queue: expected an integer, got a string" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *text = NULL;

		assert_true(asprintf(&text, "{%s, \"flows\": [%s], \"previous\": %s}", iface_ok, flow_ok,
		                     cases[i].previous) > 0);
		expect_error(text, cases[i].want, -EINVAL);
	}

	/* an entry of a flow that ended is not read further: it may come
	 * from another topology, or a later now_ms */
	{
		_cleanup_free_ char *text = NULL, *error = NULL;
		struct caad_scenario *s = NULL;

		assert_true(asprintf(&text, "{%s, \"flows\": [%s], \"previous\": [{\"id\": \"gone\", \"steer_cpu\": 2, "
		                            "\"consumer_cpu\": 99, \"since_ms\": 99999999}, {\"id\": \"gone\"}]}",
		                     iface_ok, flow_ok) > 0);
		if (caad_scenario_parse(text, strlen(text), F, topo, &s, &error) != 0)
			fail_msg("an ended flow's entry refused: %s", error);
		assert_int_equal(s->previous->n_decisions, 0);
		caad_scenario_free(s);
	}
}

static void test_load(void **state)
{
	struct caad_scenario *s = NULL;
	char *error = NULL;
	char dir[] = "/tmp/caad-test-scenario-XXXXXX";
	_cleanup_free_ char *path = NULL;
	FILE *f;

	(void)state;
	assert_int_equal(caad_scenario_load("/nonexistent/s.json", topo, &s, &error), -ENOENT);
	assert_string_equal(error, "/nonexistent/s.json: cannot read: No such file or directory");
	free(TAKE_PTR(error));

	assert_non_null(mkdtemp(dir));
	assert_int_equal(caad_scenario_load(dir, topo, &s, &error), -EISDIR);
	assert_non_null(strstr(error, "cannot read: Is a directory"));
	free(TAKE_PTR(error));

	assert_true(asprintf(&path, "%s/s.json", dir) > 0);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(issue_example, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(caad_scenario_load(path, topo, &s, &error), 0);
	assert_null(error);
	assert_int_equal(s->n_flows, 2);
	caad_scenario_free(s);
	s = NULL;

	/* the error names the file as given */
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("{\"interfaces\": [], \"flows\": [{}]}", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(caad_scenario_load(path, topo, &s, &error), -EINVAL);
	assert_int_equal(strncmp(error, path, strlen(path)), 0);
	assert_non_null(strstr(error, ": flows[0].id: missing"));
	free(TAKE_PTR(error));

	/* CAAD_SCENARIO_SIZE_MAX bytes are read whole (here: invalid at
	 * once, its second byte a NUL); one more is too large */
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("x", f);
	assert_int_equal(ftruncate(fileno(f), CAAD_SCENARIO_SIZE_MAX), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(caad_scenario_load(path, topo, &s, &error), -EINVAL);
	assert_non_null(strstr(error, ":1:2: invalid JSON: a NUL byte"));
	free(TAKE_PTR(error));
	assert_int_equal(truncate(path, (off_t)CAAD_SCENARIO_SIZE_MAX + 1), 0);
	assert_int_equal(caad_scenario_load(path, topo, &s, &error), -EFBIG);
	assert_non_null(strstr(error, ": larger than 67108864 bytes"));
	assert_null(s);
	free(error);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* Mangled scenarios (bytes replaced, cut short, repeated) with a fixed
 * seed: each parses or fails with a text that names the file; never a
 * crash, never a leak (valgrind, ASan). */
static void test_mangled(void **state)
{
	uint64_t rng = UINT64_C(0x5ce7a410);
	static const char alphabet[] = "{}[]\":,0123456789-.eE ntrufalse\\x";
	const char *seeds[] = { issue_example, NULL };
	unsigned ok = 0, bad = 0;

	(void)state;
	seeds[1] = "{\"now_ms\": 10000, \"interfaces\": [{\"name\": \"eth0\", \"queues\": [{\"index\": 0, \"irq\": 5}]}],\n"
	           " \"flows\": [{\"id\": \"f\", \"iface\": \"eth0\", \"queue\": 0, \"consumer_cpu\": 4, \"rate_bps\": \"9G\"}],\n"
	           " \"previous\": [{\"id\": \"f\", \"steer_cpu\": 2, \"consumer_cpu\": 0, \"since_ms\": 2000}]}";
	for (unsigned round = 0; round < 4000; round++) {
		const char *seed = seeds[round % 2];
		size_t len = strlen(seed);
		_cleanup_free_ char *text = malloc(len + 1);
		struct caad_scenario *s = NULL;
		char *error = NULL;
		int r;

		assert_non_null(text);
		memcpy(text, seed, len + 1);
		for (unsigned k = 0; k < 1 + round % 4; k++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			text[rng % len] = alphabet[(rng >> 32) % (sizeof(alphabet) - 1)];
		}
		if (round % 5 == 0)
			len = (size_t)(rng >> 16) % len;

		r = caad_scenario_parse(text, len, F, topo, &s, &error);
		if (r == 0) {
			struct caad_policy policy;
			_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
			FILE *devnull = fopen("/dev/null", "we");

			assert_null(error);
			caad_policy_init(&policy);
			assert_int_equal(caad_scenario_plan(s, topo, &policy, &p), 0);
			assert_non_null(devnull);
			assert_int_equal(caad_scenario_print(devnull, s, &policy, p), 0);
			fclose(devnull);
			caad_scenario_free(s);
			ok++;
		} else {
			assert_int_equal(r, -EINVAL);
			assert_null(s);
			assert_non_null(error);
			assert_int_equal(strncmp(error, F ":", strlen(F ":")), 0);
			free(error);
			bad++;
		}
	}
	print_message("%u mangled scenarios parsed, %u refused\n", ok, bad);
	assert_true(ok > 50);
	assert_true(bad > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_issue_example),
		cmocka_unit_test(test_consumer_cpus),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_all_fields),
		cmocka_unit_test(test_light_reasons),
		cmocka_unit_test(test_previous),
		cmocka_unit_test(test_bad_json),
		cmocka_unit_test(test_bad_structure),
		cmocka_unit_test(test_bad_interfaces),
		cmocka_unit_test(test_too_many_interfaces),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_bad_flows),
		cmocka_unit_test(test_bad_previous),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_mangled),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
