/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * caad's counters as one plain struct, and its Prometheus text exposition
 * (format 0.0.4). Pure: the daemon fills the struct, the formatter only
 * prints it, so the same text can go to D-Bus (GetMetrics), a file, or a
 * unit test.
 */
/* A count for one value of a label (errors by class). */
struct caad_metrics_count {
	const char *label;
	uint64_t value;
};

/* An rx queue of a managed interface and the CPU the last plan wants for it. */
struct caad_metrics_queue {
	const char *interface;
	unsigned queue;
	const char *mechanism;  /* "irq", "kthread" or "rps"; NULL or "" when the plan wants nothing */
	int target_cpu;         /* the lowest CPU of the target, -1 none */
};

struct caad_metrics {
	const char *version;
	const char *mode;               /* enforce, dry-run, observe */
	const char *placement;          /* "prior" */
	bool paused;
	const char *const *interfaces;  /* managed now */
	size_t n_interfaces;

	/* the last scan (gauges) */
	uint64_t flows_seen;            /* flows in the BPF table */
	uint64_t flows_heavy;           /* flows the planner decided on */
	uint64_t flows_steered;         /* ... of which steered to a CPU */
	uint64_t values_changed;        /* objects differing from their original now */
	uint64_t values_backed_off;     /* values caad leaves alone now: someone else changed them */
	uint64_t last_plan_usec;        /* duration of the last planning */
	uint64_t last_scan_timestamp_usec; /* CLOCK_REALTIME, 0 = never */
	uint64_t scan_period_usec;      /* from one scan's start to the next's, now */
	uint64_t scan_cpu_usec;         /* a scan's CPU time, smoothed */

	/* since start (counters) */
	uint64_t scans;
	uint64_t early_scans;           /* ... of them run early: a steered flow's reader moved */
	uint64_t moves;                 /* values written */
	uint64_t restores;              /* values put back */
	uint64_t backoffs;              /* values someone else changed after caad wrote them */
	uint64_t undone;                /* values put back because another setting of their queue failed */
	uint64_t errors;                /* failed reads, writes, restores, plans */
	uint64_t reloads;
	uint64_t reload_failures;
	uint64_t bpf_events_lost;
	uint64_t bpf_map_full;
	uint64_t bpf_flows_new;         /* flows the BPF observer began to follow (a first read, MinFlowBytes=) */
	uint64_t bpf_flows_closed;      /* ... of them closed */
	uint64_t bpf_handovers_failed;  /* changed flows not handed over (a pass of the iterator followed) */
	/* errors by class (caad_errors_by_class_total{class=...}), adding up to errors */
	const struct caad_metrics_count *error_classes;
	size_t n_error_classes;

	/* the closed loop (Placement=measure): trials since start and their
	 * verdicts; all 0 while placement has been "prior" since start */
	uint64_t trials;
	uint64_t verdicts_kept_prior;   /* the prior placement stood */
	uint64_t verdicts_switched;     /* an alternative won clearly */
	uint64_t verdicts_aborted;      /* the flow ended or collapsed mid-trial */

	/* the managed rx queues (caad_queue_target_cpu) */
	const struct caad_metrics_queue *queues;
	size_t n_queues;
};

/* Write m as Prometheus text. Returns 0, or -EIO when f reports an error. */
int caad_metrics_format(FILE *f, const struct caad_metrics *m);
/* Same, into a new NUL-terminated string. */
int caad_metrics_format_string(const struct caad_metrics *m, char **ret);
