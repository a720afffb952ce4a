/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The machine as caad sees it, for people (a tree) and for programs (JSON):
 * packages > LLCs > cores > PUs, NUMA nodes, CPU kinds, and each managed
 * interface at its locality with its queues, IRQs and NAPIs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/inventory.h"
#include "caad/macro.h"
#include "caad/json.h"
#include "caad/topology.h"
#include "caad/utf8.h"

/* A cpulist in a buffer any fits in. */
struct list_buf {
	char s[CAAD_CPULIST_MAX];
};

static const char *list(struct list_buf *b, const struct caad_cpumask *m)
{
	if (caad_cpumask_format_list(m, b->s, sizeof(b->s)) < 0)
		snprintf(b->s, sizeof(b->s), "?");
	return b->s;
}

/* The package whose CPUs hold all of the NIC's local CPUs, or -1 (machine). */
static int iface_package(const struct caad_topology *t, const struct caad_iface *ifc)
{
	struct caad_cpumask rest;

	if (!ifc->has_local_cpus)
		return -1;
	for (unsigned p = 0; p < t->n_packages; p++) {
		caad_cpumask_andnot(&rest, &ifc->local_cpus, &t->packages[p].cpus);
		if (caad_cpumask_empty(&rest))
			return (int)p;
	}
	return -1;
}

/* The CPUs where a queue's interrupt really lands: effective affinity, else
 * the affinity mask when it names one CPU. */
static bool queue_irq_cpus(const struct caad_queue *q, struct caad_cpumask *ret)
{
	if (q->irq < 0)
		return false;
	if (q->has_effective_affinity && !caad_cpumask_empty(&q->effective_affinity)) {
		*ret = q->effective_affinity;
		return true;
	}
	if (q->has_irq_affinity && caad_cpumask_count(&q->irq_affinity) == 1) {
		*ret = q->irq_affinity;
		return true;
	}
	return false;
}

static void print_pu_annotations(FILE *out, const struct caad_inventory *inv, unsigned cpu)
{
	for (size_t i = 0; inv && i < inv->n_ifaces; i++) {
		const struct caad_iface *ifc = &inv->ifaces[i];

		for (unsigned k = 0; k < ifc->n_rx; k++) {
			const struct caad_queue *q = &ifc->rx[k];
			struct caad_cpumask m;

			if (queue_irq_cpus(q, &m) && caad_cpumask_test(&m, cpu))
				fprintf(out, "  <- %s rx-%u IRQ %d", ifc->name, q->index, q->irq);
			if (q->has_rps && caad_cpumask_test(&q->rps, cpu) && caad_cpumask_count(&q->rps) <= 8)
				fprintf(out, "  <- %s rx-%u RPS", ifc->name, q->index);
		}
	}
}

static void print_iface(FILE *out, const struct caad_iface *ifc, const char *indent)
{
	struct list_buf b;

	fprintf(out, "%sNIC %s (ifindex %d", indent, ifc->name, ifc->ifindex);
	if (ifc->driver[0])
		fprintf(out, ", %s", ifc->driver);
	if (ifc->bus_id[0])
		fprintf(out, ", %s", ifc->bus_id);
	if (ifc->numa_node >= 0)
		fprintf(out, ", NUMA node %d", ifc->numa_node);
	fprintf(out, "): locality %s", caad_locality_source_to_string(ifc->locality));
	if (ifc->has_local_cpus)
		fprintf(out, ", CPUs %s", list(&b, &ifc->local_cpus));
	if (ifc->combined_channels >= 0 || ifc->rx_channels >= 0)
		fprintf(out, ", channels combined %d rx %d", ifc->combined_channels, ifc->rx_channels);
	fprintf(out, ", %u rx queues\n", ifc->n_rx);

	for (unsigned k = 0; k < ifc->n_rx; k++) {
		const struct caad_queue *q = &ifc->rx[k];

		fprintf(out, "%s  rx-%u", indent, q->index);
		if (q->irq >= 0) {
			fprintf(out, "  IRQ %d%s", q->irq, q->irq_managed ? " (managed)" : "");
			if (q->has_irq_affinity)
				fprintf(out, " affinity %s", list(&b, &q->irq_affinity));
			if (q->has_effective_affinity)
				fprintf(out, " effective %s", list(&b, &q->effective_affinity));
		} else {
			fputs("  no IRQ", out);
		}
		if (q->has_rps)
			fprintf(out, "  RPS %s", caad_cpumask_empty(&q->rps) ? "off" : list(&b, &q->rps));
		if (q->has_rps_flow_cnt)
			fprintf(out, "  rps_flow_cnt %u", q->rps_flow_cnt);
		if (q->napi_id)
			fprintf(out, "  NAPI %u", q->napi_id);
		if (q->napi_kthread)
			fprintf(out, " (kthread %d)", (int)q->napi_kthread);
		fputc('\n', out);
	}
	if (ifc->n_napis) {
		fprintf(out, "%s  NAPIs:", indent);
		for (unsigned k = 0; k < ifc->n_napis; k++) {
			fprintf(out, " %u", ifc->napis[k].id);
			if (ifc->napis[k].irq >= 0)
				fprintf(out, " (IRQ %d)", ifc->napis[k].irq);
			if (ifc->napis[k].kthread)
				fprintf(out, " (kthread %d)", (int)ifc->napis[k].kthread);
		}
		fputc('\n', out);
	}
}

static const char *cache_name(const struct caad_topology *t)
{
	static const char *const names[] = { "", "L1", "L2", "L3", "L4", "L5" };

	return t->llc_depth_level < ARRAY_SIZE(names) && t->llc_depth_level ? names[t->llc_depth_level] : "package";
}

/* Core c's first CPU, if c is in package p and LLC l (-1: none). */
static bool core_in(const struct caad_topology *t, unsigned c, unsigned p, int l)
{
	int f = caad_cpumask_next(&t->cores[c].cpus, 0);

	return f >= 0 && t->cpus[f].llc == l && (l >= 0 || t->cpus[f].package == (int)p);
}

/* The CPUs of package p's cores in no LLC; whether there are any. */
static bool cores_without_llc(const struct caad_topology *t, unsigned p, struct caad_cpumask *ret)
{
	caad_cpumask_zero(ret);
	for (unsigned c = 0; c < t->n_cores; c++)
		if (core_in(t, c, p, -1))
			caad_cpumask_or(ret, ret, &t->cores[c].cpus);
	return !caad_cpumask_empty(ret);
}

static void print_cores(FILE *out, const struct caad_topology *t, const struct caad_inventory *inv, unsigned p, int l)
{
	for (unsigned c = 0; c < t->n_cores; c++) {
		if (!core_in(t, c, p, l))
			continue;
		fprintf(out, "    Core %u\n", c);
		CAAD_CPUMASK_FOREACH(cpu, &t->cores[c].cpus) {
			const struct caad_cpu *pu = &t->cpus[cpu];

			fprintf(out, "      PU %d", cpu);
			if (!pu->usable)
				fputs(" (not usable: offline, disallowed or isolated)", out);
			if (t->n_kinds > 1 && pu->kind >= 0)
				fprintf(out, " [%s]", t->kinds[pu->kind].name);
			print_pu_annotations(out, inv, (unsigned)cpu);
			fputc('\n', out);
		}
	}
}

static int topology_print(const struct caad_topology *t, const struct caad_inventory *inv, FILE *out)
{
	struct list_buf b;

	fprintf(out, "Machine: %u CPUs present, usable %s; %u packages, %u NUMA nodes, %u LLCs (%s), %u cores",
	        caad_cpumask_count(&t->present), list(&b, &t->usable), t->n_packages, t->n_numas, t->n_llcs,
	        t->llc_depth_level ? cache_name(t) : "none shared: package", t->n_cores);
	if (t->n_kinds > 1)
		fprintf(out, ", %u CPU kinds", t->n_kinds);
	fputc('\n', out);
	for (unsigned k = 0; t->n_kinds > 1 && k < t->n_kinds; k++)
		fprintf(out, "  CPU kind %s (efficiency %d): %s\n", t->kinds[k].name, t->kinds[k].efficiency,
		        list(&b, &t->kinds[k].cpus));

	for (unsigned p = 0; p < t->n_packages; p++) {
		const struct caad_cpuset_group *pkg = &t->packages[p];

		fprintf(out, "Package %u: CPUs %s", pkg->os_index, list(&b, &pkg->cpus));
		for (unsigned n = 0; n < t->n_numas; n++) {
			struct caad_cpumask in;
			caad_cpumask_and(&in, &t->numas[n].cpus, &pkg->cpus);
			if (!caad_cpumask_empty(&in))
				fprintf(out, ", NUMA node %u", t->numas[n].os_index);
		}
		fputc('\n', out);

		for (unsigned l = 0; l < t->n_llcs; l++) {
			int first = caad_cpumask_next(&t->llcs[l].cpus, 0);

			if (first < 0 || t->cpus[first].package != (int)p)
				continue;
			fprintf(out, "  LLC %s#%u: CPUs %s\n", cache_name(t), t->llcs[l].os_index,
			        list(&b, &t->llcs[l].cpus));
			print_cores(out, t, inv, p, (int)l);
		}
		/* cores no cache of the LLC level covers (low-power E-cores without L3) */
		struct caad_cpumask rest;
		if (cores_without_llc(t, p, &rest)) {
			fprintf(out, "  No shared %s: CPUs %s\n", cache_name(t), list(&b, &rest));
			print_cores(out, t, inv, p, -1);
		}
		for (size_t i = 0; inv && i < inv->n_ifaces; i++)
			if (iface_package(t, &inv->ifaces[i]) == (int)p)
				print_iface(out, &inv->ifaces[i], "  ");
	}
	for (size_t i = 0; inv && i < inv->n_ifaces; i++)
		if (iface_package(t, &inv->ifaces[i]) < 0)
			print_iface(out, &inv->ifaces[i], "");
	return ferror(out) ? -EIO : 0;
}

/* Names (interfaces, drivers, CPU kinds) may hold any byte but NUL and
 * '/': a terminal gets them as caad_utf8_sanitize() leaves them, as the
 * JSON does, not an escape sequence. */
int caad_topology_print(const struct caad_topology *t, const struct caad_inventory *inv, FILE *out)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int r;

	if (!m)
		return -ENOMEM;
	r = topology_print(t, inv, m);
	if (fclose(m) != 0)
		return -ENOMEM;
	if (r < 0)
		return r;
	caad_utf8_sanitize(text, true);
	fputs(text, out);
	return ferror(out) ? -EIO : 0;
}

/* "key": value, or null where it is not known: JSON OUTPUT in caadctl(8). */
static void json_int(FILE *out, const char *key, long long value, bool known)
{
	if (known)
		fprintf(out, "\"%s\": %lld", key, value);
	else
		fprintf(out, "\"%s\": null", key);
}

/* The cores of package p in LLC l (-1: none), as a JSON array. */
static void json_cores(FILE *out, const struct caad_topology *t, unsigned p, int l)
{
	unsigned n_core = 0;

	fputc('[', out);
	for (unsigned c = 0; c < t->n_cores; c++) {
		unsigned n_pu = 0;

		if (!core_in(t, c, p, l))
			continue;
		fprintf(out, "%s{\"index\": %u, \"pus\": [", n_core++ ? ", " : "", c);
		CAAD_CPUMASK_FOREACH(cpu, &t->cores[c].cpus) {
			const struct caad_cpu *pu = &t->cpus[cpu];

			fprintf(out, "%s{\"cpu\": %d, \"usable\": %s, ", n_pu++ ? ", " : "", cpu,
			        pu->usable ? "true" : "false");
			json_int(out, "numa_node", pu->numa, pu->numa >= 0);
			fputs(", \"kind\": ", out);
			caad_json_string(out, pu->kind >= 0 ? t->kinds[pu->kind].name : NULL);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputc(']', out);
}

static void json_list(FILE *out, const char *key, const struct caad_cpumask *m)
{
	struct list_buf b;

	fprintf(out, "\"%s\": ", key);
	caad_json_string(out, list(&b, m));
}

static void json_iface(FILE *out, const struct caad_topology *t, const struct caad_iface *ifc)
{
	fputs("{\"name\": ", out);
	caad_json_name(out, ifc->name);
	fprintf(out, ", \"ifindex\": %d, \"driver\": ", ifc->ifindex);
	caad_json_string(out, ifc->driver[0] ? ifc->driver : NULL);
	fputs(", \"bus_id\": ", out);
	caad_json_string(out, ifc->bus_id[0] ? ifc->bus_id : NULL);
	fputs(", ", out);
	json_int(out, "numa_node", ifc->numa_node, ifc->numa_node >= 0);
	fprintf(out, ", \"locality\": \"%s\", ", caad_locality_source_to_string(ifc->locality));
	if (ifc->has_local_cpus)
		json_list(out, "local_cpus", &ifc->local_cpus);
	else
		fputs("\"local_cpus\": null", out);
	int pkg = iface_package(t, ifc);
	if (pkg >= 0)
		fprintf(out, ", \"package\": %u", t->packages[pkg].os_index);
	else
		fputs(", \"package\": null", out);
	fputs(", ", out);
	json_int(out, "combined_channels", ifc->combined_channels, ifc->combined_channels >= 0);
	fputs(", ", out);
	json_int(out, "rx_channels", ifc->rx_channels, ifc->rx_channels >= 0);
	fputs(", \"queues\": [", out);
	for (unsigned k = 0; k < ifc->n_rx; k++) {
		const struct caad_queue *q = &ifc->rx[k];

		fprintf(out, "%s{\"index\": %u, \"irq\": ", k ? ", " : "", q->index);
		if (q->irq >= 0)
			fprintf(out, "%d", q->irq);
		else
			fputs("null", out);
		fputs(", \"irq_source\": ", out);
		caad_json_string(out, q->irq_source);
		fprintf(out, ", \"managed\": %s, ", q->irq_managed ? "true" : "false");
		if (q->has_irq_affinity)
			json_list(out, "affinity", &q->irq_affinity);
		else
			fputs("\"affinity\": null", out);
		fputs(", ", out);
		if (q->has_effective_affinity)
			json_list(out, "effective_affinity", &q->effective_affinity);
		else
			fputs("\"effective_affinity\": null", out);
		fputs(", ", out);
		if (q->has_rps)
			json_list(out, "rps_cpus", &q->rps);
		else
			fputs("\"rps_cpus\": null", out);
		if (q->has_rps_flow_cnt)
			fprintf(out, ", \"rps_flow_cnt\": %u", q->rps_flow_cnt);
		else
			fputs(", \"rps_flow_cnt\": null", out);
		fputs(", ", out);
		json_int(out, "napi_id", q->napi_id, q->napi_id != 0);
		fputs(", ", out);
		json_int(out, "napi_kthread", q->napi_kthread, q->napi_kthread > 0);
		fputc('}', out);
	}
	fputs("], \"napis\": [", out);
	for (unsigned k = 0; k < ifc->n_napis; k++) {
		const struct caad_napi *n = &ifc->napis[k];

		fprintf(out, "%s{\"id\": %u, ", k ? ", " : "", n->id);
		json_int(out, "irq", n->irq, n->irq >= 0);
		fputs(", ", out);
		json_int(out, "kthread", n->kthread, n->kthread > 0);
		fputc('}', out);
	}
	fputs("]}", out);
}

int caad_topology_to_json(const struct caad_topology *t, const struct caad_inventory *inv, FILE *out)
{
	fprintf(out, "{\"cpus\": %u, ", caad_cpumask_count(&t->present));
	json_list(out, "present", &t->present);
	fputs(", ", out);
	json_list(out, "usable", &t->usable);
	fprintf(out, ", \"llc_level\": %u, \"cache_levels\": [", t->llc_depth_level);
	for (unsigned l = 0, n = 0; l < CAAD_CACHE_LEVELS; l++)
		if (t->cache_levels & (1u << l))
			fprintf(out, "%s%u", n++ ? ", " : "", l + 1);
	fputs("], \"numa_nodes\": [", out);
	for (unsigned n = 0; n < t->n_numas; n++) {
		fprintf(out, "%s{\"os_index\": %u, ", n ? ", " : "", t->numas[n].os_index);
		json_list(out, "cpus", &t->numas[n].cpus);
		fputc('}', out);
	}
	fputs("], \"cpu_kinds\": [", out);
	for (unsigned k = 0; k < t->n_kinds; k++) {
		fprintf(out, "%s{\"name\": ", k ? ", " : "");
		caad_json_string(out, t->kinds[k].name);
		fprintf(out, ", \"efficiency\": %d, ", t->kinds[k].efficiency);
		json_list(out, "cpus", &t->kinds[k].cpus);
		fputc('}', out);
	}
	fputs("], \"packages\": [", out);
	for (unsigned p = 0; p < t->n_packages; p++) {
		unsigned n_llc = 0;

		fprintf(out, "%s{\"os_index\": %u, ", p ? ", " : "", t->packages[p].os_index);
		json_list(out, "cpus", &t->packages[p].cpus);
		fputs(", \"llcs\": [", out);
		for (unsigned l = 0; l < t->n_llcs; l++) {
			int first = caad_cpumask_next(&t->llcs[l].cpus, 0);

			if (first < 0 || t->cpus[first].package != (int)p)
				continue;
			fprintf(out, "%s{\"index\": %u, ", n_llc++ ? ", " : "", l);
			json_list(out, "cpus", &t->llcs[l].cpus);
			fputs(", \"cores\": ", out);
			json_cores(out, t, p, (int)l);
			fputc('}', out);
		}
		/* cores in no LLC: beside the llcs, so that readers of "llcs" see only caches */
		fputs("], \"cores_without_llc\": ", out);
		json_cores(out, t, p, -1);
		fputc('}', out);
	}
	fputs("], \"interfaces\": [", out);
	for (size_t i = 0; inv && i < inv->n_ifaces; i++) {
		if (i)
			fputs(", ", out);
		json_iface(out, t, &inv->ifaces[i]);
	}
	fputs("]}\n", out);
	return ferror(out) ? -EIO : 0;
}
