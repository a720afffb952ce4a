/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caadctl plan SCENARIO: the planner on a scenario (interfaces, queues,
 * flows, a previous plan: docs/scenario.md), with no daemon and nothing
 * written; the simulator of "caad --simulate", from libcaad: the host's
 * topology or --topology FILE.xml, the policy of the configuration stack.
 * The plan is the simulator's JSON; for people, two tables drawn from it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/config.h"
#include "caad/scenario.h"
#include "caad/topology.h"
#include "caadctl.h"

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A JSON value as table text: strings as they are, null as "-". */
static const char *text(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	if (!v)
		return "-";
	return json_object_get_string(v);
}

static int flows_table(struct ctl *c, struct json_object *plan)
{
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = ctl_table_new(c);
	static const struct {
		const char *name;
		int flags;
	} cols[] = {
		{ "FLOW", 0 },  { "IFACE", 0 },          { "RXQ", SCOLS_FL_RIGHT },      { "CONSUMER", SCOLS_FL_RIGHT },
		{ "RATE", SCOLS_FL_RIGHT }, { "STEER", SCOLS_FL_RIGHT }, { "RELATION", SCOLS_FL_TRUNC },
		{ "REASON", SCOLS_FL_TRUNC },
	};
	struct json_object *flows = get(plan, "flows");

	if (!tb)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(cols); i++)
		if (ctl_table_column(tb, cols[i].name, 0, cols[i].flags) < 0)
			return -ENOMEM;
	for (size_t i = 0; flows && i < json_object_array_length(flows); i++) {
		struct json_object *f = json_object_array_get_idx(flows, i);
		struct libscols_line *ln = scols_table_new_line(tb, NULL);
		char rate[32];

		ctl_format_rate((uint64_t)json_object_get_uint64(get(f, "rate_bps")), rate, sizeof(rate));
		if (!ln || scols_line_set_data(ln, 0, text(f, "id")) < 0 || scols_line_set_data(ln, 1, text(f, "iface")) < 0 ||
		    scols_line_set_data(ln, 2, text(f, "queue")) < 0 || scols_line_set_data(ln, 3, text(f, "consumer_cpu")) < 0 ||
		    scols_line_set_data(ln, 4, rate) < 0 || scols_line_set_data(ln, 5, text(f, "steer_cpu")) < 0 ||
		    scols_line_set_data(ln, 6, text(f, "relation")) < 0 || scols_line_set_data(ln, 7, text(f, "reason")) < 0)
			return -ENOMEM;
	}
	return ctl_table_print(c, tb);
}

/* What a setting writes: its CPUs (RPS: "off" when none), the RFS sizes,
 * the ntuple rule. */
static const char *setting_value(struct json_object *s, const char *kind, char *buf, size_t size)
{
	if (get(s, "cpus")) {
		const char *cpus = text(s, "cpus");
		return *cpus ? cpus : streq(kind, "rps") ? "off" : "none";
	}
	if (get(s, "rule"))
		return text(s, "rule");
	if (get(s, "value")) {
		snprintf(buf, size, "%s=%s", streq(kind, "rfs") ? "rps_flow_cnt" : "rps_sock_flow_entries",
		         text(s, "value"));
		return buf;
	}
	return "-";
}

static int settings_table(struct ctl *c, struct json_object *plan)
{
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = ctl_table_new(c);
	/* the simulator's lists, and the names in the table */
	static const char *const kinds[] = { "irqs", "rps", "kthreads", "rfs", "rfs_table", "ntuple" };
	static const char *const names[] = { "irq", "rps", "kthread", "rfs", "rfs-table", "ntuple" };
	bool any = false;

	if (!tb)
		return -ENOMEM;
	if (ctl_table_column(tb, "SETTING", 0, 0) < 0 || ctl_table_column(tb, "IFACE", 0, 0) < 0 ||
	    ctl_table_column(tb, "RXQ", 0, SCOLS_FL_RIGHT) < 0 || ctl_table_column(tb, "IRQ/PID", 0, SCOLS_FL_RIGHT) < 0 ||
	    ctl_table_column(tb, "VALUE", 0, 0) < 0 || ctl_table_column(tb, "REASON", 0, SCOLS_FL_TRUNC) < 0)
		return -ENOMEM;
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		struct json_object *list = get(plan, kinds[k]);

		for (size_t i = 0; list && i < json_object_array_length(list); i++) {
			struct json_object *s = json_object_array_get_idx(list, i);
			struct libscols_line *ln = scols_table_new_line(tb, NULL);
			char buf[64];

			any = true;
			if (!ln || scols_line_set_data(ln, 0, names[k]) < 0 || scols_line_set_data(ln, 1, text(s, "iface")) < 0 ||
			    scols_line_set_data(ln, 2, text(s, "queue")) < 0 ||
			    scols_line_set_data(ln, 3, get(s, "irq") ? text(s, "irq") : text(s, "pid")) < 0 ||
			    scols_line_set_data(ln, 4, setting_value(s, names[k], buf, sizeof(buf))) < 0 ||
			    scols_line_set_data(ln, 5, text(s, "reason")) < 0)
				return -ENOMEM;
		}
	}
	if (!any) {
		printf("\nNo settings: nothing to change.\n");
		return 0;
	}
	putchar('\n');
	return ctl_table_print(c, tb);
}

int ctl_plan(struct ctl *c, const struct ctl_command *cmd)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = NULL;
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	_cleanup_(ctl_json_putp) struct json_object *plan = NULL;
	_cleanup_free_ char *error = NULL, *out = NULL;
	enum json_tokener_error jerr = json_tokener_success;
	struct caad_config config;
	size_t len = 0;
	FILE *f;
	int r;

	caad_config_init(&config);
	r = caad_config_load(&config, NULL);
	if (r < 0) {
		r = ctl_fail(c, "The configuration has errors: %s", config.error ?: strerror(-r));
		caad_config_done(&config);
		return r;
	}
	r = caad_topology_load(c->topology_path, NULL, &t);
	if (r < 0) {
		caad_config_done(&config);
		return ctl_fail(c, "Cannot load the topology%s%s: %s", c->topology_path ? " " : "",
		                c->topology_path ?: "", strerror(-r));
	}
	r = caad_scenario_load(cmd->arg, t, &s, &error);
	if (r >= 0)
		r = caad_scenario_plan(s, t, &config.policy, &p);
	if (r >= 0) {
		f = open_memstream(&out, &len);
		if (!f)
			r = -ENOMEM;
		else {
			r = caad_scenario_print(f, s, &config.policy, p);
			if (fclose(f) != 0 && r >= 0)
				r = -ENOMEM;
		}
	}
	caad_config_done(&config);
	if (r == -ENOMEM)
		return ctl_fail(c, "Out of memory");
	if (r < 0)
		return ctl_fail(c, "%s", error ?: strerror(-r));

	plan = json_tokener_parse_verbose(out, &jerr);
	if (!plan)
		return ctl_fail(c, "internal error: the plan's JSON does not parse: %s", json_tokener_error_desc(jerr));
	if (c->json)
		return ctl_json_print(c, TAKE_PTR(plan));
	r = flows_table(c, plan);
	if (r == 0)
		r = settings_table(c, plan);
	if (r < 0)
		return ctl_fail(c, "Out of memory");
	return r;
}
