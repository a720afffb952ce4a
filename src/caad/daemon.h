/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "caad/config.h"
#include "caad/flow.h"
#include "caad/loglimit.h"
#include "caad/pace.h"
#include "caad/plan.h"
#include "closedloop.h"

#define EX_CONFIG 78

struct caad_bus;

struct args {
	const char *config_path;
	const char *sysroot;
	const char *topology_path;
	const char *runtime_dir;
	const char *state_dir;     /* verdicts of the closed loop */
	char **interfaces;
	size_t n_interfaces;
	unsigned interval_ms;
	int log_level;
	bool foreground;
	bool dry_run;
	bool restore_only;
	bool print_topology;
	bool check_config;         /* --check-config */
	bool json;
	const char *simulate_path; /* --simulate */
};

struct daemon {
	struct args *args;
	struct caad_config config;
	struct caad_topology *topo;
	struct caad_inventory *inv;
	struct caad_observer *observer;
	struct caad_actuator *actuator;
	struct caad_irqbalance_sync *irqbalance; /* irqbalance bans of the IRQs caad steers */
	struct caad_link_watch *links;
	sd_event *event;
	sd_event_source *timer;
	sd_event_source *prepare;  /* HANDOVER_LEAD_USEC before the next scan (daemon.c) */
	char *state_path;
	struct caad_cpumask own_base; /* caad's CPU affinity as it started (CPUAffinity=, taskset) */
	struct caad_cpumask own_cpus; /* ... as it set it last: off the heavy readers (keep_off_readers()) */
	bool own_fixed;               /* not to be changed: unreadable at the start, or refused */
	bool inventory_dirty;
	char *cpus_online;         /* SYSROOT/sys/devices/system/cpu/online as last read */
	char *cpus_online_failed;  /* ... as read when the topology then failed to load, NULL none */
	uint64_t topology_retry;   /* cpus_online_failed: load again at this scan (1, 2, 4, ... up to 20 apart) */
	uint64_t topology_gap;     /* ... after this many scans (0: the last load did not fail); a
	                            * refusal's reload (follow_refusals()) waits for it too */
	char *autoselected; /* interfaces picked without Interfaces=, space-separated */
	char *ntuple_noted; /* interfaces said to take no ntuple rules, " name " each */
	bool inventory_lost; /* last re-read failed: a managed interface is gone */
	bool inventory_partial; /* last re-read left out interfaces it could not read, the others managed */
	char *inventory_missing; /* those it left out, "a b" (said when they change); NULL */
	uint64_t inventory_retry; /* inventory_lost: read again at this scan (1, 2, 4, ... up to 20 scans apart) */
	uint64_t inventory_gap;   /* ... after this many scans */
	const char *no_plan; /* why the last scan made no plan (a static string), NULL when it made one */
	uint64_t scans;

	struct caad_bus *bus;      /* the D-Bus API (dbus.c) */
	bool paused;               /* D-Bus Pause/RestoreAll: plan, but apply nothing */
	/* the last scan, for the D-Bus API: flows, and the plan (NULL in
	 * observe mode or while the queues are unknown) indexing into them */
	struct caad_flow *flows;
	size_t n_flows;
	struct caad_plan *plan;    /* also the previous plan of the next scan (hysteresis, logging) */
	/* plan->decisions[k]'s log lines (caad_loglimit), NULL: none kept;
	 * the next, made as the scan's plan is logged, until keep_scan() */
	struct caad_loglimit *decision_logs, *next_decision_logs;
	struct caad_plan_scratch *plan_scratch; /* planning memory kept from scan to scan */
	uint64_t last_plan_usec;   /* how long planning took */
	uint64_t last_scan_usec;   /* CLOCK_REALTIME of the last scan, 0 never */
	uint64_t last_scan_mono;   /* CLOCK_MONOTONIC (usec) when the last scan began */
	struct caad_pace pace;     /* how far apart scans are (ScanBudgetPercent=) */
	uint64_t early_scans;      /* scans run early: a steered flow's reader moved */
	bool scan_is_early;        /* the timer's next scan is an early one */
	uint64_t errors;           /* failed plans (the actuator counts its own) */
	uint64_t reloads, reload_failures;
	char *reload_note;         /* the last reload's failure, in STATUS= until one succeeds: NULL none */
	struct closed_loop loop;   /* Placement=measure */
	char *metrics_written;     /* the MetricsFile= written last (removed at exit) */
	/* what the observer could not do, as its kernel counters last said
	 * it (caad_bpf_map_full_total, caad_bpf_handovers_failed_total) */
	struct limit_notice {
		uint64_t seen; /* the count as of the last message */
		uint64_t said; /* CLOCK_MONOTONIC (usec) of that message, 0 none */
	} map_full, handovers_failed;
	char *metrics_failing;     /* the MetricsFile= whose writes fail: said once, NULL none */
};

/* Command-line options override the configuration files, at start and on
 * every reload; the log level follows (option, else LogLevel=). */
int daemon_config_apply_args(struct caad_config *c, const struct args *a);
/* The time of clock in microseconds (0 where it cannot be read). */
uint64_t now_usec(clockid_t clock);
/* Restore a crashed run's journal, then (unless --restore) run the loop
 * until SIGTERM/SIGINT and restore what was changed. */
int daemon_run(struct daemon *d);
void daemon_done(struct daemon *d);

/* Reload the configuration (SIGHUP, D-Bus Reload) with the notify-reload
 * protocol. On an error the running configuration stays, and *ret_error
 * (when non-NULL) gets the first error's text, "FILE:LINE: what". 1: the
 * new one is in force, but leaving enforce mode could not restore every
 * value (*ret_error says so); 0: done. */
int daemon_reload(struct daemon *d, char **ret_error);
/* D-Bus SetMode: until the next reload or restart. Leaving enforce restores
 * what was written. */
int daemon_set_mode(struct daemon *d, enum caad_mode mode);
/* D-Bus SetPlacement: until the next reload or restart. */
void daemon_set_placement(struct daemon *d, enum caad_placement placement);
/* D-Bus Pause/Resume: stop or restart applying plans; values stay. */
void daemon_set_paused(struct daemon *d, bool paused);
/* D-Bus RestoreAll: put every changed value back and pause. */
int daemon_restore_all(struct daemon *d);
/* --print-topology: the machine and the interfaces caad would manage. */
int daemon_print_topology(const struct args *a, const struct caad_config *c);

/* metrics.c: what the last plan wants for rx queue `queue` of the
 * inventory's interface iface: "irq" (an IRQ affinity), "kthread" (a
 * threaded-NAPI kthread's affinity), "rps" (a non-empty RPS mask) or NULL,
 * with its CPUs in *ret. */
const char *daemon_queue_target(const struct daemon *d, size_t iface, unsigned queue, struct caad_cpumask *ret);
/* The counters of the D-Bus properties and the metrics. */
struct caad_metrics;
void daemon_fill_counters(const struct daemon *d, struct caad_metrics *m);
/* All the metrics as Prometheus text (GetMetrics, MetricsFile=). */
int daemon_metrics_text(const struct daemon *d, char **ret);
/* After a scan: rewrite MetricsFile= atomically (and remove the file of an
 * earlier MetricsFile=); failures are logged once. */
void daemon_metrics_file_update(struct daemon *d);

/* From one scan's start to the next's now: IntervalMSec=, or longer for
 * ScanBudgetPercent= (caad_pace_period()). */
static inline uint64_t daemon_scan_period_usec(const struct daemon *d)
{
	return caad_pace_period(&d->pace, (uint64_t)d->config.interval_ms * 1000);
}
/* At exit: remove the metrics file. */
void daemon_metrics_file_remove(struct daemon *d);
