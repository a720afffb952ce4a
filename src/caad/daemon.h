/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "caad/config.h"
#include "caad/flow.h"
#include "caad/plan.h"

#define EX_CONFIG 78

struct args {
	const char *config_path;
	const char *sysroot;
	const char *topology_path;
	const char *runtime_dir;
	char **interfaces;
	size_t n_interfaces;
	unsigned interval_ms;
	int log_level;
	bool foreground;
	bool dry_run;
	bool restore_only;
	bool print_topology;
	bool json;
};

struct daemon {
	struct args *args;
	struct caad_config config;
	struct caad_topology *topo;
	struct caad_inventory *inv;
	struct caad_observer *observer;
	struct caad_actuator *actuator;
	struct caad_link_watch *links;
	sd_event *event;
	sd_event_source *timer;
	char *state_path;
	bool inventory_dirty;
	char *autoselected; /* interfaces picked without Interfaces=, space-separated */
	bool inventory_lost; /* last re-read failed: a managed interface is gone */
	uint64_t scans;
	/* last logged decision per flow, to log each change once */
	struct seen { uint64_t id; int steer_cpu; } *seen;
	size_t n_seen;
};

/* Command-line options override the configuration files, at start and on
 * every reload; the log level follows (option, else LogLevel=). */
int daemon_config_apply_args(struct caad_config *c, const struct args *a);
/* Restore a crashed run's journal, then (unless --restore) run the loop
 * until SIGTERM/SIGINT and restore what was changed. */
int daemon_run(struct daemon *d);
void daemon_done(struct daemon *d);
/* --print-topology: the machine and the interfaces caad would manage. */
int daemon_print_topology(const struct args *a, const struct caad_config *c);
