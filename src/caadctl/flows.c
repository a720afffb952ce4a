/* SPDX-License-Identifier: GPL-2.0-or-later */
/* caadctl flows [list|show FLOW], caadctl explain FLOW. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/busargs.h"
#include "caadctl.h"

enum { COL_ID, COL_IFACE, COL_QUEUE, COL_LOCAL, COL_REMOTE, COL_COMM, COL_CPU, COL_PROC, COL_RATE, COL_STEER,
       COL_RELATION };

static int flows_table(struct ctl *c, const struct ctl_flows *l)
{
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = ctl_table_new(c);
	static const struct {
		const char *name;
		double whint;
		int flags;
	} cols[] = {
		[COL_ID] = { "ID", 0, 0 },
		[COL_IFACE] = { "IFACE", 0, 0 },
		[COL_QUEUE] = { "RXQ", 0, SCOLS_FL_RIGHT },
		[COL_LOCAL] = { "LOCAL", 0, 0 },
		[COL_REMOTE] = { "REMOTE", 0, 0 },
		[COL_COMM] = { "COMM", 0, SCOLS_FL_TRUNC },
		[COL_CPU] = { "CPU", 0, SCOLS_FL_RIGHT },
		[COL_PROC] = { "PROC", 0, SCOLS_FL_RIGHT },
		[COL_RATE] = { "RATE", 0, SCOLS_FL_RIGHT },
		[COL_STEER] = { "STEER", 0, SCOLS_FL_RIGHT },
		[COL_RELATION] = { "RELATION", 0, SCOLS_FL_TRUNC },
	};

	if (!tb)
		return ctl_fail(c, "Out of memory");
	for (size_t i = 0; i < ARRAY_SIZE(cols); i++)
		if (ctl_table_column(tb, cols[i].name, cols[i].whint, cols[i].flags) < 0)
			return ctl_fail(c, "Out of memory");
	for (size_t i = 0; i < l->n; i++) {
		const struct ctl_flow *f = &l->flows[i];
		struct libscols_line *ln = scols_table_new_line(tb, NULL);
		char q[16], cpu[16], proc[16], rate[32], steer[16];

		if (!ln)
			return ctl_fail(c, "Out of memory");
		ctl_format_int(f->queue, q, sizeof(q));
		ctl_format_int(f->consumer_cpu, cpu, sizeof(cpu));
		ctl_format_int(f->processing_cpu, proc, sizeof(proc));
		ctl_format_rate(f->rate_bps, rate, sizeof(rate));
		ctl_format_int(f->steer_cpu, steer, sizeof(steer));
		if (scols_line_set_data(ln, COL_ID, f->id) < 0 ||
		    scols_line_set_data(ln, COL_IFACE, *f->iface ? f->iface : "-") < 0 ||
		    scols_line_set_data(ln, COL_QUEUE, q) < 0 || scols_line_set_data(ln, COL_LOCAL, f->destination) < 0 ||
		    scols_line_set_data(ln, COL_REMOTE, f->source) < 0 || scols_line_set_data(ln, COL_COMM, f->comm) < 0 ||
		    scols_line_set_data(ln, COL_CPU, cpu) < 0 || scols_line_set_data(ln, COL_PROC, proc) < 0 ||
		    scols_line_set_data(ln, COL_RATE, rate) < 0 || scols_line_set_data(ln, COL_STEER, steer) < 0 ||
		    scols_line_set_data(ln, COL_RELATION, f->relation) < 0)
			return ctl_fail(c, "Out of memory");
	}
	/* in a narrow terminal these go first, then libsmartcols cuts COMM and RELATION */
	static const size_t optional[] = { COL_QUEUE, COL_IFACE, COL_LOCAL, COL_REMOTE };
	(void)ctl_table_fit(tb, ctl_terminal_width(), optional, ARRAY_SIZE(optional));
	return ctl_table_print(c, tb);
}

/* Flow ids are hex ("0x…", as ListFlows gives them); compare them as numbers,
 * read as Explain reads them. */
static bool same_id(const char *a, const char *b)
{
	uint64_t x, y;

	if (caad_busargs_parse_flow_id(a, &x) < 0 || caad_busargs_parse_flow_id(b, &y) < 0)
		return streq(a, b);
	return x == y;
}

static void show_flow(const struct ctl_flow *f)
{
	char rate[32], bytes[32];

	ctl_format_rate(f->rate_bps, rate, sizeof(rate));
	ctl_format_bytes(f->bytes, bytes, sizeof(bytes));
	printf("Flow %s: %s <- %s\n", f->id, f->destination, f->source);
	printf("   Interface: %s", *f->iface ? f->iface : "unknown");
	if (f->queue >= 0)
		printf(" rx-%d\n", f->queue);
	else
		printf(", rx queue not recorded by the kernel\n");
	printf("    Consumer: %s, thread %" PRIu32, f->comm, f->tid);
	if (f->consumer_cpu >= 0)
		printf(", reading on CPU %d\n", f->consumer_cpu);
	else
		printf(", CPU not known yet\n");
	if (f->processing_cpu >= 0)
		printf("  Processing: CPU %d\n", f->processing_cpu);
	else
		printf("  Processing: not seen yet\n");
	printf("        Rate: %s, %s read\n", rate, bytes);
	if (f->steer_cpu >= 0)
		printf("       Steer: CPU %d (%s)\n", f->steer_cpu, f->relation);
	else
		printf("       Steer: none (%s)\n", f->relation);
	printf("      Reason: %s\n", f->reason);
}

int ctl_flows(struct ctl *c, const struct ctl_command *cmd)
{
	struct ctl_flows l;
	int r;

	r = ctl_list_flows(c, &l);
	if (r)
		return r;
	if (cmd->verb == CTL_VERB_SHOW) {
		const struct ctl_flow *f = NULL;

		for (size_t i = 0; i < l.n && !f; i++)
			if (same_id(l.flows[i].id, cmd->arg))
				f = &l.flows[i];
		if (!f)
			r = ctl_fail(c, "No flow '%s' (caadctl flows lists them)", cmd->arg);
		else if (c->json)
			r = ctl_json_print(c, ctl_flow_to_json(f));
		else {
			show_flow(f);
			r = fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
		}
	} else if (c->json) {
		struct json_object *a = json_object_new_array();

		for (size_t i = 0; a && i < l.n; i++)
			json_object_array_add(a, ctl_flow_to_json(&l.flows[i]));
		r = ctl_json_print(c, a);
	} else
		r = flows_table(c, &l);
	ctl_flows_done(&l);
	return r;
}

int ctl_explain(struct ctl *c, const struct ctl_command *cmd)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *text;
	int r;

	r = ctl_call_string(c, "Explain", &reply, &text, "s", cmd->arg);
	if (r)
		return r;
	if (c->json) {
		struct json_object *o = json_object_new_object();
		const char *shown = cmd->arg;
		uint64_t id;
		char idbuf[24];

		/* as flows -j spells it (0x, lower case), however it was typed:
		 * a script joins the two by it; caad took it, so it parses */
		if (caad_busargs_parse_flow_id(cmd->arg, &id) >= 0) {
			snprintf(idbuf, sizeof(idbuf), "%#" PRIx64, id);
			shown = idbuf;
		}
		json_object_object_add(o, "id", json_object_new_string(shown));
		json_object_object_add(o, "explanation", json_object_new_string(text));
		return ctl_json_print(c, o);
	}
	fputs(text, stdout);
	if (*text && text[strlen(text) - 1] != '\n')
		putchar('\n');
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}
