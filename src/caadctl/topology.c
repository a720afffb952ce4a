/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caadctl topology: the machine as a tree, package > LLC > core > PU, with
 * each NIC at its locality, each queue's IRQ or RPS on the CPUs that serve
 * it, and the steered flows' consumer, processing and target CPUs marked
 * ("F1 consumer"), so that one sees at a glance where data flows.
 *
 * The tree is drawn from the JSON of caad's topology (GetTopology, or
 * libcaad's caad_topology_to_json() for --topology FILE.xml offline): one
 * drawing for both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/cpumask.h"
#include "caad/inventory.h"
#include "caad/topology.h"
#include "caadctl.h"

enum { COL_NAME, COL_CPUS, COL_QUEUES, COL_FLOWS };

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* An integer, or -1 when missing or null. */
static int get_int(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_int) ? json_object_get_int(v) : -1;
}

static size_t get_len(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
}

static struct json_object *get_idx(struct json_object *o, const char *key, size_t i)
{
	return json_object_array_get_idx(get(o, key), i);
}

static bool cpus(struct json_object *o, const char *key, struct caad_cpumask *ret)
{
	const char *s = get_str(o, key);

	return s && caad_cpumask_parse_list(s, ret) >= 0;
}

/* Append item to the "; "-separated text *acc (a cell; in a terminal too
 * narrow for it libsmartcols wraps it). */
static int append(char **acc, const char *item)
{
	char *n;

	if (asprintf(&n, "%s%s%s", *acc ? *acc : "", *acc ? "; " : "", item) < 0)
		return -ENOMEM;
	free(*acc);
	*acc = n;
	return 0;
}

struct drawing {
	struct libscols_table *tb;
	struct json_object *topo;
	const struct ctl_flow *flows;
	const int *marks; /* F<marks[i]> for flow i, 0 unmarked */
	size_t n_flows;
};

/* The CPUs where a queue's interrupt lands: effective affinity, else an
 * affinity of one CPU (as caad --print-topology). */
static bool queue_irq_cpus(struct json_object *q, struct caad_cpumask *ret)
{
	if (get_int(q, "irq") < 0)
		return false;
	if (cpus(q, "effective_affinity", ret) && !caad_cpumask_empty(ret))
		return true;
	return cpus(q, "affinity", ret) && caad_cpumask_count(ret) == 1;
}

static int pu_queues(const struct drawing *d, int cpu, char **ret)
{
	for (size_t i = 0; i < get_len(d->topo, "interfaces"); i++) {
		struct json_object *ifc = get_idx(d->topo, "interfaces", i);
		const char *name = get_str(ifc, "name");

		for (size_t k = 0; k < get_len(ifc, "queues"); k++) {
			struct json_object *q = get_idx(ifc, "queues", k);
			struct caad_cpumask m;
			char line[96];

			if (queue_irq_cpus(q, &m) && caad_cpumask_test(&m, (unsigned)cpu)) {
				snprintf(line, sizeof(line), "%s rx-%d IRQ %d", name, get_int(q, "index"), get_int(q, "irq"));
				if (append(ret, line) < 0)
					return -ENOMEM;
			}
			if (cpus(q, "rps_cpus", &m) && caad_cpumask_test(&m, (unsigned)cpu) && caad_cpumask_count(&m) <= 8) {
				snprintf(line, sizeof(line), "%s rx-%d RPS", name, get_int(q, "index"));
				if (append(ret, line) < 0)
					return -ENOMEM;
			}
		}
	}
	return 0;
}

static int pu_flows(const struct drawing *d, int cpu, char **ret)
{
	for (size_t i = 0; i < d->n_flows; i++) {
		const struct ctl_flow *f = &d->flows[i];
		char line[96];
		const char *roles[3];
		size_t n = 0;

		if (!d->marks[i])
			continue;
		if (f->consumer_cpu == cpu)
			roles[n++] = "consumer";
		if (f->processing_cpu == cpu)
			roles[n++] = "processing";
		if (f->steer_cpu == cpu)
			roles[n++] = "target";
		if (n == 0)
			continue;
		snprintf(line, sizeof(line), "F%d %s%s%s%s%s", d->marks[i], roles[0], n > 1 ? ", " : "",
		         n > 1 ? roles[1] : "", n > 2 ? ", " : "", n > 2 ? roles[2] : "");
		if (append(ret, line) < 0)
			return -ENOMEM;
	}
	return 0;
}

static struct libscols_line *row(struct drawing *d, struct libscols_line *parent, const char *name,
                                 const char *cpulist, char *queues, char *flows)
{
	struct libscols_line *ln = scols_table_new_line(d->tb, parent);

	if (!ln || scols_line_set_data(ln, COL_NAME, name) < 0 || scols_line_set_data(ln, COL_CPUS, cpulist) < 0 ||
	    (queues && scols_line_refer_data(ln, COL_QUEUES, queues) < 0) ||
	    (flows && scols_line_refer_data(ln, COL_FLOWS, flows) < 0))
		return NULL;
	return ln;
}

/* m as a cpulist at its whole length (RPS on one node of 256 CPUs numbered
 * across sockets is "0,2,4,...,254"): a new string, NULL without memory. */
static char *cpulist(const struct caad_cpumask *m)
{
	char *list = malloc(CAAD_CPULIST_MAX);

	if (list && caad_cpumask_format_list(m, list, CAAD_CPULIST_MAX) < 0)
		list[0] = '\0';
	return list;
}

static int draw_pu(struct drawing *d, struct libscols_line *parent, struct json_object *pu, bool kinds)
{
	_cleanup_free_ char *queues = NULL, *flows = NULL;
	struct json_object *usable = get(pu, "usable");
	int cpu = get_int(pu, "cpu");
	char name[96], list[16];

	snprintf(name, sizeof(name), "PU %d%s%s%s%s", cpu,
	         usable && !json_object_get_boolean(usable) ? " (not usable)" : "", kinds ? " [" : "",
	         kinds ? (get_str(pu, "kind") ?: "?") : "", kinds ? "]" : "");
	snprintf(list, sizeof(list), "%d", cpu);
	if (pu_queues(d, cpu, &queues) < 0 || pu_flows(d, cpu, &flows) < 0)
		return -ENOMEM;
	return row(d, parent, name, list, TAKE_PTR(queues), TAKE_PTR(flows)) ? 0 : -ENOMEM;
}

static int draw_queue(struct drawing *d, struct libscols_line *parent, const char *ifname, struct json_object *q)
{
	_cleanup_free_ char *what = NULL, *flows = NULL, *list = NULL, *rps_line = NULL;
	struct caad_cpumask m;
	int index = get_int(q, "index"), irq = get_int(q, "irq");
	char name[32], line[96];
	struct json_object *managed = get(q, "managed");

	snprintf(name, sizeof(name), "rx-%d", index);
	if (!queue_irq_cpus(q, &m) && !cpus(q, "rps_cpus", &m))
		caad_cpumask_zero(&m);
	list = cpulist(&m);
	if (!list)
		return -ENOMEM;
	if (irq >= 0) {
		snprintf(line, sizeof(line), "IRQ %d%s", irq, managed && json_object_get_boolean(managed) ? " (managed)" : "");
		if (append(&what, line) < 0)
			return -ENOMEM;
	}
	if (get_str(q, "rps_cpus")) {
		const char *rps = get_str(q, "rps_cpus");
		if (asprintf(&rps_line, "RPS %s", *rps ? rps : "off") < 0)
			return -ENOMEM;
		if (append(&what, rps_line) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < d->n_flows; i++) {
		if (!d->marks[i] || d->flows[i].queue != index || !streq(d->flows[i].iface, ifname))
			continue;
		snprintf(line, sizeof(line), "F%d arrives", d->marks[i]);
		if (append(&flows, line) < 0)
			return -ENOMEM;
	}
	return row(d, parent, name, list, TAKE_PTR(what), TAKE_PTR(flows)) ? 0 : -ENOMEM;
}

static int draw_nic(struct drawing *d, struct libscols_line *parent, struct json_object *ifc)
{
	_cleanup_free_ char *what = NULL;
	struct libscols_line *ln;
	const char *ifname = get_str(ifc, "name") ?: "?", *driver = get_str(ifc, "driver"), *bus = get_str(ifc, "bus_id");
	char name[128], line[96];
	size_t nq = get_len(ifc, "queues");

	snprintf(name, sizeof(name), "NIC %s%s%s%s%s%s", ifname, driver || bus ? " (" : "", driver ?: "",
	         driver && bus ? " " : "", bus ?: "", driver || bus ? ")" : "");
	snprintf(line, sizeof(line), "locality %s", get_str(ifc, "locality") ?: "unknown");
	if (append(&what, line) < 0)
		return -ENOMEM;
	if (nq) {
		snprintf(line, sizeof(line), "%zu rx queue%s", nq, nq == 1 ? "" : "s");
		if (append(&what, line) < 0)
			return -ENOMEM;
	}
	ln = row(d, parent, name, get_str(ifc, "local_cpus") ?: "", TAKE_PTR(what), NULL);
	if (!ln)
		return -ENOMEM;
	for (size_t k = 0; k < nq; k++)
		if (draw_queue(d, ln, ifname, get_idx(ifc, "queues", k)) < 0)
			return -ENOMEM;
	return 0;
}

/* NICs placed in package os_index, or (-1) in none. */
/* The cores of obj's array key, each with its PUs, under parent. */
static int draw_cores(struct drawing *d, struct libscols_line *parent, struct json_object *obj, const char *key,
                      bool kinds)
{
	char name[64];

	for (size_t k = 0; k < get_len(obj, key); k++) {
		struct json_object *core = get_idx(obj, key, k);
		struct libscols_line *cl;
		struct caad_cpumask m;
		char list[256] = "";

		caad_cpumask_zero(&m);
		for (size_t u = 0; u < get_len(core, "pus"); u++)
			caad_cpumask_set(&m, (unsigned)get_int(get_idx(core, "pus", u), "cpu"));
		(void)caad_cpumask_format_list(&m, list, sizeof(list));
		snprintf(name, sizeof(name), "core %d", get_int(core, "index"));
		cl = row(d, parent, name, list, NULL, NULL);
		if (!cl)
			return -ENOMEM;
		for (size_t u = 0; u < get_len(core, "pus"); u++)
			if (draw_pu(d, cl, get_idx(core, "pus", u), kinds) < 0)
				return -ENOMEM;
	}
	return 0;
}

static int draw_nics(struct drawing *d, struct libscols_line *parent, int package)
{
	for (size_t i = 0; i < get_len(d->topo, "interfaces"); i++) {
		struct json_object *ifc = get_idx(d->topo, "interfaces", i);

		if (get_int(ifc, "package") == package && draw_nic(d, parent, ifc) < 0)
			return -ENOMEM;
	}
	return 0;
}

int ctl_topology_draw(struct libscols_table *tb, struct json_object *topo, const struct ctl_flow *flows,
                      const int *marks, size_t n_flows)
{
	struct drawing d = { .tb = tb, .topo = topo, .flows = flows, .marks = marks, .n_flows = n_flows };
	struct libscols_line *machine;
	bool kinds = get_len(topo, "cpu_kinds") > 1;
	int llc_level = get_int(topo, "llc_level");
	char name[64];

	if (!get(topo, "packages"))
		return -EINVAL;
	if (scols_table_new_column(tb, "TOPOLOGY", 0, SCOLS_FL_TREE) == NULL ||
	    ctl_table_column(tb, "CPUS", 0, 0) < 0 || ctl_table_column(tb, "QUEUES", 0, SCOLS_FL_WRAP) < 0 ||
	    ctl_table_column(tb, "FLOWS", 0, SCOLS_FL_WRAP) < 0)
		return -ENOMEM;

	machine = row(&d, NULL, "machine", get_str(topo, "present") ?: "", NULL, NULL);
	if (!machine)
		return -ENOMEM;
	for (size_t p = 0; p < get_len(topo, "packages"); p++) {
		struct json_object *pkg = get_idx(topo, "packages", p);
		struct libscols_line *pl;
		int os_index = get_int(pkg, "os_index");

		snprintf(name, sizeof(name), "package %d", os_index);
		pl = row(&d, machine, name, get_str(pkg, "cpus") ?: "", NULL, NULL);
		if (!pl)
			return -ENOMEM;
		for (size_t l = 0; l < get_len(pkg, "llcs"); l++) {
			struct json_object *llc = get_idx(pkg, "llcs", l);
			struct libscols_line *ll;

			if (llc_level > 0)
				snprintf(name, sizeof(name), "L%d #%d", llc_level, get_int(llc, "index"));
			else
				snprintf(name, sizeof(name), "LLC #%d (no shared cache)", get_int(llc, "index"));
			ll = row(&d, pl, name, get_str(llc, "cpus") ?: "", NULL, NULL);
			if (!ll || draw_cores(&d, ll, llc, "cores", kinds) < 0)
				return -ENOMEM;
		}
		/* cores no cache of the LLC level covers (E-cores without L3) */
		if (get_len(pkg, "cores_without_llc") > 0) {
			_cleanup_free_ char *list = NULL;
			struct libscols_line *nl;
			struct caad_cpumask m;

			caad_cpumask_zero(&m);
			for (size_t k = 0; k < get_len(pkg, "cores_without_llc"); k++) {
				struct json_object *core = get_idx(pkg, "cores_without_llc", k);

				for (size_t u = 0; u < get_len(core, "pus"); u++)
					caad_cpumask_set(&m, (unsigned)get_int(get_idx(core, "pus", u), "cpu"));
			}
			list = cpulist(&m);
			if (!list)
				return -ENOMEM;
			snprintf(name, sizeof(name), "no shared L%d", llc_level);
			nl = row(&d, pl, name, list, NULL, NULL);
			if (!nl || draw_cores(&d, nl, pkg, "cores_without_llc", kinds) < 0)
				return -ENOMEM;
		}
		if (draw_nics(&d, pl, os_index) < 0)
			return -ENOMEM;
	}
	return draw_nics(&d, machine, -1);
}

/* ---- where the topology comes from ---- */

/* caad's own JSON of an hwloc XML file, with the NICs it names (no queues: offline). */
static int offline_json(struct ctl *c, struct json_object **ret)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	_cleanup_free_ char *text = NULL;
	char **names = NULL;
	enum json_tokener_error jerr = json_tokener_success;
	size_t len = 0;
	FILE *f;
	int r, n;

	r = caad_topology_load(c->topology_path, NULL, &t);
	if (r < 0)
		return ctl_fail(c, "Cannot load the topology %s: %s", c->topology_path, strerror(-r));
	n = caad_topology_nic_names(t, &names);
	inv = calloc(1, sizeof(*inv));
	if (n < 0 || !inv || !(inv->ifaces = calloc((size_t)n + 1, sizeof(*inv->ifaces)))) {
		caad_strv_free(names);
		return ctl_fail(c, "Out of memory");
	}
	for (int i = 0; i < n; i++) {
		struct caad_iface *ifc = &inv->ifaces[inv->n_ifaces++];

		snprintf(ifc->name, sizeof(ifc->name), "%s", names[i]);
		ifc->numa_node = -1;
		ifc->combined_channels = ifc->rx_channels = -1;
	}
	caad_strv_free(names);
	(void)caad_inventory_locate(inv, t);

	f = open_memstream(&text, &len);
	if (!f)
		return ctl_fail(c, "Out of memory");
	r = caad_topology_to_json(t, inv, f);
	if (fclose(f) != 0 || r < 0)
		return ctl_fail(c, "Cannot describe the topology %s", c->topology_path);
	*ret = json_tokener_parse_verbose(text, &jerr);
	if (!*ret)
		return ctl_fail(c, "internal error: the topology's JSON does not parse: %s", json_tokener_error_desc(jerr));
	return 0;
}

static int daemon_json(struct ctl *c, struct json_object **ret)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	enum json_tokener_error jerr = json_tokener_success;
	const char *text;
	int r;

	r = ctl_call_string(c, "GetTopology", &reply, &text, NULL);
	if (r)
		return r;
	*ret = json_tokener_parse_verbose(text, &jerr);
	if (!*ret || !json_object_is_type(*ret, json_type_object)) {
		json_object_put(*ret);
		*ret = NULL;
		return ctl_fail(c, "GetTopology: caad's topology is not a JSON object: %s", json_tokener_error_desc(jerr));
	}
	return 0;
}

static int legend(struct ctl *c, const struct ctl_flows *l, const int *marks)
{
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = ctl_table_new(c);
	static const char *const cols[] = { "MARK", "FLOW", "COMM", "LOCAL", "REMOTE", "RATE", "RELATION" };
	bool any = false;

	if (!tb)
		return ctl_fail(c, "Out of memory");
	for (size_t i = 0; i < ARRAY_SIZE(cols); i++)
		if (ctl_table_column(tb, cols[i], 0, streq(cols[i], "RELATION") || streq(cols[i], "COMM") ? SCOLS_FL_TRUNC
		                                   : streq(cols[i], "RATE")                               ? SCOLS_FL_RIGHT
		                                                                                          : 0) < 0)
			return ctl_fail(c, "Out of memory");
	for (size_t i = 0; i < l->n; i++) {
		const struct ctl_flow *f = &l->flows[i];
		struct libscols_line *ln;
		char mark[16], rate[32];

		if (!marks[i])
			continue;
		any = true;
		snprintf(mark, sizeof(mark), "F%d", marks[i]);
		ctl_format_rate(f->rate_bps, rate, sizeof(rate));
		ln = scols_table_new_line(tb, NULL);
		if (!ln || scols_line_set_data(ln, 0, mark) < 0 || scols_line_set_data(ln, 1, f->id) < 0 ||
		    scols_line_set_data(ln, 2, f->comm) < 0 || scols_line_set_data(ln, 3, f->destination) < 0 ||
		    scols_line_set_data(ln, 4, f->source) < 0 || scols_line_set_data(ln, 5, rate) < 0 ||
		    scols_line_set_data(ln, 6, f->relation) < 0)
			return ctl_fail(c, "Out of memory");
	}
	if (!any)
		return 0;
	{
		static const size_t optional[] = { 3, 4 }; /* LOCAL, REMOTE */
		(void)ctl_table_fit(tb, ctl_terminal_width(), optional, ARRAY_SIZE(optional));
	}
	putchar('\n');
	return ctl_table_print(c, tb);
}

int ctl_topology(struct ctl *c, const struct ctl_command *cmd)
{
	_cleanup_(ctl_json_putp) struct json_object *topo = NULL;
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = NULL;
	_cleanup_free_ int *marks = NULL;
	struct ctl_flows l = {};
	int r, next = 1;

	r = c->topology_path ? offline_json(c, &topo) : daemon_json(c, &topo);
	if (r)
		return r;
	if (!c->topology_path) {
		r = ctl_list_flows(c, &l);
		if (r)
			return r;
	}

	if (c->json) {
		struct json_object *a = json_object_new_array();

		for (size_t i = 0; a && i < l.n; i++)
			json_object_array_add(a, ctl_flow_to_json(&l.flows[i]));
		json_object_object_add(topo, "flows", a);
		ctl_flows_done(&l);
		return ctl_json_print(c, TAKE_PTR(topo));
	}

	marks = calloc(l.n + 1, sizeof(int));
	tb = ctl_table_new(c);
	if (!marks || !tb) {
		ctl_flows_done(&l);
		return ctl_fail(c, "Out of memory");
	}
	for (size_t i = 0; i < l.n; i++)
		if (c->all_flows || l.flows[i].steer_cpu >= 0)
			marks[i] = next++;
	r = ctl_topology_draw(tb, topo, l.flows, marks, l.n);
	if (r < 0) {
		ctl_flows_done(&l);
		return r == -ENOMEM ? ctl_fail(c, "Out of memory") : ctl_fail(c, "The topology has no packages");
	}
	r = ctl_table_print(c, tb);
	if (r == 0 && c->legend)
		r = legend(c, &l, marks);
	ctl_flows_done(&l);
	return r;
}
