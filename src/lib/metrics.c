/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Prometheus text exposition format 0.0.4: for every metric family a
 * "# HELP" and a "# TYPE" line, then its samples "name{label="value"} value".
 * Counters end in _total, durations and times are in seconds (base units).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "caad/macro.h"
#include "caad/metrics.h"
#include "caad/utf8.h"

/* A label value: double quote and newline escaped; a byte
 * that is no UTF-8 (an interface name may hold any but '/', ':' and
 * whitespace), or another control character (C1 ones too: caadctl
 * metrics shows the file on a terminal), as the four characters
 * \xHH: Prometheus refuses a file with invalid UTF-8 in it, and '?' for
 * each would make eth\xfe and eth\xff one series twice. A backslash is
 * \x5c too, so that every backslash a reader decodes starts such an
 * escape: a name spelled "eth\xfe" with a real backslash (Linux allows
 * that as well) and the name with the byte 0xfe stay two series. */
static void label_value(FILE *f, const char *s)
{
	fputc('"', f);
	while (s && *s) {
		size_t n = caad_utf8_sequence(s);

		if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (n == 0 || (unsigned char)*s < 0x20 || *s == 0x7f || *s == '\\' ||
		         caad_utf8_is_c1(s))
			fprintf(f, "\\\\x%02x", (unsigned char)*s);
		else {
			fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		s++;
	}
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void u64(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	family(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* Microseconds as seconds, exactly: no floating point rounding. */
static void usec_as_seconds(FILE *f, const char *name, const char *help, uint64_t usec)
{
	family(f, name, "gauge", help);
	fprintf(f, "%s %" PRIu64 ".%06" PRIu64 "\n", name, usec / 1000000, usec % 1000000);
}

int caad_metrics_format(FILE *f, const struct caad_metrics *m)
{
	family(f, "caad_info", "gauge", "Version, mode and placement of the running caad (always 1).");
	fputs("caad_info{version=", f);
	label_value(f, m->version);
	fputs(",mode=", f);
	label_value(f, m->mode);
	fputs(",placement=", f);
	label_value(f, m->placement);
	fputs("} 1\n", f);

	u64(f, "caad_paused", "gauge", "1 while applying is paused (D-Bus Pause or RestoreAll), else 0.",
	    m->paused);

	family(f, "caad_interface_managed", "gauge", "Interfaces caad manages now (always 1).");
	for (size_t i = 0; i < m->n_interfaces; i++) {
		fputs("caad_interface_managed{interface=", f);
		label_value(f, m->interfaces[i]);
		fputs("} 1\n", f);
	}

	u64(f, "caad_flows", "gauge", "TCP flows in the flow table at the last scan.", m->flows_seen);
	u64(f, "caad_flows_heavy", "gauge",
	    "Heavy flows (at least RateThreshold= on a managed interface) at the last scan.", m->flows_heavy);
	u64(f, "caad_flows_steered", "gauge", "Heavy flows steered to a CPU at the last scan.", m->flows_steered);
	u64(f, "caad_values_changed", "gauge",
	    "Values caad changed from their journaled original (IRQ, kthread and RPS affinities, RFS sizes, ntuple "
	    "rules), now.", m->values_changed);
	u64(f, "caad_values_backed_off", "gauge",
	    "Values caad leaves alone now because someone else changed them after caad wrote them (BackOffSec=).",
	    m->values_backed_off);
	usec_as_seconds(f, "caad_last_plan_duration_seconds", "How long the last planning took.", m->last_plan_usec);
	usec_as_seconds(f, "caad_last_scan_timestamp_seconds",
	                "When the last scan ran, in seconds since the epoch (0: never).", m->last_scan_timestamp_usec);
	usec_as_seconds(f, "caad_scan_period_seconds",
	                "Time from one scan's start to the next's now: IntervalMSec=, or longer where scans that often "
	                "would take more than ScanBudgetPercent= of a CPU.",
	                m->scan_period_usec);
	usec_as_seconds(f, "caad_scan_cpu_seconds",
	                "CPU time of a scan (the BPF flow iterator's included), smoothed over the last few.",
	                m->scan_cpu_usec);
	u64(f, "caad_scans_total", "counter", "Scans since start.", m->scans);
	u64(f, "caad_early_scans_total", "counter",
	    "Scans run before their time because a steered flow's reader moved off the CPUs its steering holds for.",
	    m->early_scans);
	u64(f, "caad_moves_total", "counter", "Values written since start (IRQ, kthread and RPS affinities, RFS sizes, ntuple rules; restores not "
	    "counted).", m->moves);
	u64(f, "caad_restores_total", "counter", "Original values written back since start.", m->restores);
	u64(f, "caad_backoffs_total", "counter",
	    "Values someone else changed after caad wrote them, each then left alone, since start.", m->backoffs);
	u64(f, "caad_undone_total", "counter",
	    "Values put back because another setting of their rx queue failed, since start.", m->undone);
	u64(f, "caad_errors_total", "counter", "Failed reads, writes, restores and plans since start.", m->errors);
	u64(f, "caad_reloads_total", "counter", "Configuration reloads since start, failed ones included.", m->reloads);
	u64(f, "caad_reload_failures_total", "counter", "Configuration reloads refused for an error since start.",
	    m->reload_failures);
	u64(f, "caad_bpf_events_lost_total", "counter",
	    "BPF ring buffer events lost (buffer full): a steered flow's reader moved away, not told at once.",
	    m->bpf_events_lost);
	u64(f, "caad_bpf_map_full_total", "counter",
	    "Reads of flows the BPF observer did not follow (MaxFlows= reached, or no memory), and flows a pass of its "
	    "iterator found beyond MaxFlows=.",
	    m->bpf_map_full);
	u64(f, "caad_bpf_flows_new_total", "counter", "Flows the BPF observer began to follow, at their first read once they had received MinFlowBytes=.",
	    m->bpf_flows_new);
	u64(f, "caad_bpf_flows_closed_total", "counter", "Flows the BPF observer followed that closed.",
	    m->bpf_flows_closed);
	u64(f, "caad_bpf_handovers_failed_total", "counter",
	    "Changed flows the BPF programs could not hand over (no room, or no memory): the next scan walked every socket.",
	    m->bpf_handovers_failed);

	family(f, "caad_errors_by_class_total", "counter",
	       "Failed reads, writes, restores and plans since start, by class (they add up to caad_errors_total).");
	for (size_t i = 0; i < m->n_error_classes; i++) {
		fputs("caad_errors_by_class_total{class=", f);
		label_value(f, m->error_classes[i].label);
		fprintf(f, "} %" PRIu64 "\n", m->error_classes[i].value);
	}

	u64(f, "caad_trials_total", "counter", "Closed-loop placement trials since start (Placement=measure).",
	    m->trials);
	family(f, "caad_trial_verdicts_total", "counter",
	       "Verdicts of closed-loop trials since start: the prior kept, switched to an alternative, or aborted.");
	fprintf(f, "caad_trial_verdicts_total{verdict=\"kept-prior\"} %" PRIu64 "\n", m->verdicts_kept_prior);
	fprintf(f, "caad_trial_verdicts_total{verdict=\"switched\"} %" PRIu64 "\n", m->verdicts_switched);
	fprintf(f, "caad_trial_verdicts_total{verdict=\"aborted\"} %" PRIu64 "\n", m->verdicts_aborted);

	family(f, "caad_queue_target_cpu", "gauge",
	       "The CPU the last plan wants a managed rx queue processed on (its NAPI kthread, IRQ or RPS), -1 for none.");
	for (size_t i = 0; i < m->n_queues; i++) {
		const struct caad_metrics_queue *q = &m->queues[i];
		bool none = !q->mechanism || !*q->mechanism || q->target_cpu < 0;

		fputs("caad_queue_target_cpu{interface=", f);
		label_value(f, q->interface);
		fprintf(f, ",queue=\"%u\",mechanism=", q->queue);
		label_value(f, none ? "none" : q->mechanism);
		fprintf(f, "} %d\n", none ? -1 : q->target_cpu);
	}

	return ferror(f) ? -EIO : 0;
}

int caad_metrics_format_string(const struct caad_metrics *m, char **ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	r = caad_metrics_format(f, m);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	return 0;
}
