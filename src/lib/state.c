/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "caad/json.h"
#include "caad/log.h"
#include "caad/state.h"
#include "caad/sysfs.h"
#include "caad/sysfs.h"

static void cpulist(FILE *f, const struct caad_cpumask *m)
{
	static char buf[CAAD_CPULIST_MAX]; /* any list fits */

	if (caad_cpumask_format_list(m, buf, sizeof(buf)) < 0)
		buf[0] = 0;
	caad_json_string(f, buf);
}

int caad_state_format(FILE *f, const struct caad_flow *flows, size_t n_flows, const struct caad_inventory *inv,
                      const struct caad_plan *plan, const char *mode)
{
	/* decision of each flow, by flow index: one pass, not one per flow */
	_cleanup_free_ const struct caad_decision **decision_of = calloc(n_flows ? n_flows : 1, sizeof(void *));

	if (!decision_of)
		return -ENOMEM;
	for (size_t k = 0; plan && k < plan->n_decisions; k++)
		if (plan->decisions[k].flow < n_flows)
			decision_of[plan->decisions[k].flow] = &plan->decisions[k];

	/* every heavy flow, and the first CAAD_STATE_LIGHT_MAX others: with
	 * 100k flows the whole list would be tens of MB every scan */
	size_t light = 0, omitted = 0;
	for (size_t i = 0; i < n_flows; i++)
		if (!decision_of[i] && ++light > CAAD_STATE_LIGHT_MAX)
			omitted++;

	fputs("{\"mode\": ", f);
	caad_json_string(f, mode);
	fprintf(f, ",\n \"n_flows\": %zu, \"flows_omitted\": %zu", n_flows, omitted);
	fputs(",\n \"flows\": [", f);
	light = 0;
	for (size_t i = 0, listed = 0; i < n_flows; i++) {
		const struct caad_flow *fl = &flows[i];
		const struct caad_decision *d = decision_of[i];
		char tuple[128];

		if (!d && ++light > CAAD_STATE_LIGHT_MAX)
			continue;

		caad_flow_format_tuple(fl, tuple, sizeof(tuple));
		fprintf(f, "%s\n  {\"id\": \"%#" PRIx64 "\", \"tuple\": ", listed++ ? "," : "",
		        caad_flow_public_id(fl->id));
		caad_json_string(f, tuple);
		fputs(", \"comm\": ", f);
		caad_json_string(f, fl->comm);
		fprintf(f,
		        ", \"pid\": %u, \"tid\": %u, \"consumer_cpu\": %d, \"proc_cpu\": %d, \"ifindex\": %d, "
		        "\"rx_queue\": %d, \"napi_id\": %u, \"proc_kthread\": %u, \"ooo_packets\": %u, \"bytes\": %llu, "
		        "\"rate_bps\": %llu, \"heavy\": %s",
		        fl->pid, fl->tid, fl->consumer_cpu, fl->proc_cpu, fl->ifindex, fl->rx_queue, fl->napi_id,
		        fl->proc_kthread, fl->ooo_packets,
		        (unsigned long long)fl->bytes, (unsigned long long)fl->rate_bps, d ? "true" : "false");
		/* where the consumer read at the scans before, the latest first */
		fputs(", \"consumer_history\": [", f);
		for (unsigned h = 0; h < fl->n_consumer_history; h++)
			fprintf(f, "%s%u", h ? ", " : "", fl->consumer_history[h]);
		fputc(']', f);
		if (d) {
			if (d->steer_cpu >= 0)
				fprintf(f, ", \"steer_cpu\": %d", d->steer_cpu);
			else
				fputs(", \"steer_cpu\": null", f);
			fputs(", \"relation\": ", f);
			caad_json_string(f, caad_relation_to_string(d->relation));
			fprintf(f, ", \"held\": %s, \"shares_queue\": %s", d->held ? "true" : "false",
			        d->shares_queue ? "true" : "false");
			/* Mechanisms=ntuple: the rule caad keeps for it, to this rx queue */
			if (d->ntuple)
				fprintf(f, ", \"ntuple_queue\": %d", d->queue);
			else
				fputs(", \"ntuple_queue\": null", f);
			fputs(", \"reason\": ", f);
			caad_json_string(f, d->reason);
		}
		fputc('}', f);
	}
	fputs("\n ],\n \"queues\": [", f);
	bool first = true;
	for (size_t i = 0; inv && i < inv->n_ifaces; i++)
		for (unsigned q = 0; q < inv->ifaces[i].n_rx; q++) {
			const struct caad_queue *rq = &inv->ifaces[i].rx[q];

			fprintf(f, "%s\n  {\"iface\": ", first ? "" : ",");
			first = false;
			caad_json_name(f, inv->ifaces[i].name);
			fprintf(f, ", \"queue\": %u, \"irq\": %d", rq->index, rq->irq);
			if (rq->has_rps) {
				fputs(", \"rps_cpus\": ", f);
				cpulist(f, &rq->rps);
			}
			if (rq->has_irq_affinity) {
				fputs(", \"irq_cpus\": ", f);
				cpulist(f, &rq->irq_affinity);
			}
			fputc('}', f);
		}
	fputs("\n ]}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* Written straight into a temporary file, renamed over path: no copy of
 * the document in memory. */
int caad_state_write(const char *path, const struct caad_flow *flows, size_t n_flows,
                     const struct caad_inventory *inv, const struct caad_plan *plan, const char *mode)
{
	_cleanup_free_ char *tmp = NULL;
	FILE *f;
	int fd, r;

	/* the name caad_remove_atomic_leftovers() sweeps after a kill */
	fd = caad_open_tmp(path, &tmp);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	r = caad_state_format(f, flows, n_flows, inv, plan, mode);
	if (r >= 0 && fchmod(fd, 0644) < 0)
		r = -errno;
	if (fclose(f) != 0 && r >= 0)
		r = -errno;
	if (r >= 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}
