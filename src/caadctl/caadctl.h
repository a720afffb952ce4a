/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * caadctl: the command-line client of caad. Everything it shows comes from
 * the daemon's D-Bus API (org.caad1 on the system bus), except
 * "topology --topology FILE" and "plan", which run offline.
 *
 * One file per object; cli.c (the grammar), format.c and prometheus.c are
 * pure and unit-tested (tests/unit/test-caadctl-*.c).
 */
#include <json-c/json.h>
#include <libsmartcols.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "caad/macro.h"

#define EXIT_USAGE 2

/* ---- the grammar (cli.c): pure ---- */

enum ctl_object {
	CTL_STATUS,
	CTL_FLOWS,
	CTL_QUEUES,
	CTL_TOPOLOGY,
	CTL_EXPLAIN,
	CTL_TRIALS,
	CTL_RELOAD,
	CTL_MODE,
	CTL_PLACEMENT,
	CTL_PAUSE,
	CTL_RESUME,
	CTL_RESTORE,
	CTL_METRICS,
	CTL_PLAN,
	_CTL_OBJECT_COUNT,
};

enum ctl_verb {
	CTL_VERB_NONE, /* the object takes no verb */
	CTL_VERB_LIST,
	CTL_VERB_SHOW,
	_CTL_VERB_COUNT,
};

struct ctl_command {
	enum ctl_object object;
	enum ctl_verb verb;
	const char *arg; /* the one argument, NULL if none; a mode or placement is canonical ("dry-run") */
};

/*
 * Match word against names: an exact name wins, else the one name that
 * starts with word. Returns its index, -ENOENT when none matches (or word
 * is empty), -ENOTUNIQ when several do.
 */
int ctl_match(const char *word, const char *const *names, size_t n);
/* The names word is a prefix of, ", "-separated, into buf (for messages). */
void ctl_candidates(const char *word, const char *const *names, size_t n, char *buf, size_t size);

extern const char *const ctl_object_names[_CTL_OBJECT_COUNT];
extern const char *const ctl_mode_names[3];
extern const char *const ctl_placement_names[2];

/*
 * Parse "OBJECT [VERB] [ARGS]" (what is left after the options). On a usage
 * error returns -EINVAL with a message for people in err. Pure.
 */
int ctl_parse_command(int argc, char *const *argv, struct ctl_command *ret, char *err, size_t err_size);

/* ---- formatting (format.c): pure ---- */

/* "15.2 Gbit/s", "800 kbit/s", "0 bit/s" (SI, three significant digits). */
void ctl_format_rate(uint64_t bps, char *buf, size_t size);
/* "1.5 GB" style, SI, for byte counts. */
void ctl_format_bytes(uint64_t bytes, char *buf, size_t size);
/* A duration: "870 us", "12.3 ms", "1.20 s". */
void ctl_format_usec(uint64_t usec, char *buf, size_t size);
/* "-" for a negative CPU or queue, else the number. */
void ctl_format_int(int v, char *buf, size_t size);
/* A count or id from the daemon's JSON: an integer exactly (past 2^53
 * too), a double rounded down and held at UINT64_MAX; 0 when missing,
 * negative, NaN or not a number. */
uint64_t ctl_json_count(struct json_object *v);
/* Seconds since the epoch as local "YYYY-MM-DD HH:MM"; "-" for 0 (not
 * known) and for what no time_t or calendar holds. */
void ctl_format_time(uint64_t when, char *buf, size_t size);
/* Display columns of a string (UTF-8 aware in a UTF-8 locale). */
size_t ctl_text_width(const char *s);
/*
 * For a terminal of width columns (0: not a terminal, nothing to do): hide
 * the optional columns, in the order given (least wanted first), until the
 * table fits with its SCOLS_FL_TRUNC columns at their header's width;
 * libsmartcols then cuts those to fit. Returns how many were hidden.
 */
size_t ctl_table_fit(struct libscols_table *tb, size_t width, const size_t *optional, size_t n_optional);

/* ---- Prometheus text exposition format 0.0.4 (prometheus.c): pure ---- */

struct ctl_prom_label {
	char *name, *value;
};

struct ctl_prom_sample {
	char *name;
	struct ctl_prom_label *labels;
	size_t n_labels;
	char *value; /* as written */
	double v;
};

struct ctl_prom_family {
	char *name, *type, *help; /* help unescaped */
	struct ctl_prom_sample *samples;
	size_t n_samples;
};

struct ctl_prom {
	struct ctl_prom_family *families;
	size_t n_families;
};

/*
 * Parse text strictly: every family has one "# HELP" and then one
 * "# TYPE" line before its samples, its samples are contiguous, names and
 * label names are valid, label values use only the escapes \\ \" \n, a
 * value is a float (or NaN, +Inf, -Inf), an optional timestamp an integer;
 * no series twice, no blank line, the text ends with a newline; counters
 * (and only they) end in _total and are never negative. Returns 0, or
 * -EINVAL with "line N: what" in err.
 */
int ctl_prom_parse(const char *text, struct ctl_prom **ret, char *err, size_t err_size);
void ctl_prom_free(struct ctl_prom *p);
static inline void ctl_prom_freep(struct ctl_prom **p)
{
	ctl_prom_free(*p);
}
/* The families as JSON: [{"name", "type", "help", "samples": [{"name", "labels": {}, "value"}]}]. */
struct json_object *ctl_prom_to_json(const struct ctl_prom *p);

/* ---- the running command (caadctl.c, output.c, bus.c) ---- */

struct ctl {
	bool json;
	bool pretty;
	bool legend;            /* table headers and legends; --no-legend clears it */
	bool all_flows;         /* topology: mark every flow, not only the steered ones */
	const char *topology_path; /* topology: offline, from this hwloc XML */
	sd_bus *bus;
};

/* Errors: "caadctl: what" on stderr, or {"error": "what"} on stdout under
 * --json. Return the exit status to use (1, or 2 for usage). */
int ctl_fail(struct ctl *c, const char *fmt, ...) _printf_(2, 3);
int ctl_usage_error(struct ctl *c, const char *fmt, ...) _printf_(2, 3);
/* A failed D-Bus call of method, told for people: caad not running,
 * permission denied, or what the daemon said. */
int ctl_bus_fail(struct ctl *c, const char *method, const sd_bus_error *error, int r);

/* Print o (and drop the reference): compact, or indented with --pretty. */
int ctl_json_print(struct ctl *c, struct json_object *o);
/* json-c helpers that accept NULL and print -1 as null. */
struct json_object *ctl_json_string(const char *s);
struct json_object *ctl_json_int_or_null(int v);

/* A table for people: honours the terminal width and --no-legend. */
struct libscols_table *ctl_table_new(struct ctl *c);
/* Add a column; returns 0 or -ENOMEM. */
int ctl_table_column(struct libscols_table *tb, const char *name, double whint, int flags);
int ctl_table_print(struct ctl *c, struct libscols_table *tb);
/* The width of the terminal on standard output, 0 when it is not one. */
size_t ctl_terminal_width(void);
static inline void ctl_table_unrefp(struct libscols_table **tb)
{
	scols_unref_table(*tb);
}
static inline void ctl_json_putp(struct json_object **o)
{
	json_object_put(*o);
}

/* Connect to the system bus once (DBUS_SYSTEM_BUS_ADDRESS is honoured).
 * Returns 0, or the exit status after reporting. */
int ctl_bus(struct ctl *c);
/* Call org.caad1.Manager.method; on failure report and return the exit
 * status (> 0). */
int ctl_call(struct ctl *c, const char *method, sd_bus_message **reply, const char *types, ...);
/* The same for a method that returns one string: *ret lives as long as
 * *reply. A reply without it is reported too. */
int ctl_call_string(struct ctl *c, const char *method, sd_bus_message **reply, const char **ret, const char *types,
                    ...);

/* The Manager's properties (GetAll). Strings live as long as reply. */
struct ctl_status {
	sd_bus_message *reply;
	const char *version, *mode, *placement;
	bool paused;
	char **interfaces; /* NULL-terminated, owned */
	uint64_t flows_seen, flows_heavy, flows_steered, moves, errors, scans, last_plan_usec,
		last_scan_timestamp, scan_period_usec, scan_cpu_usec;
};
int ctl_get_status(struct ctl *c, struct ctl_status *ret);
void ctl_status_done(struct ctl_status *s);

/* ListFlows. Strings live as long as the list. */
struct ctl_flow {
	const char *id, *iface;
	int queue;
	const char *source, *destination, *comm;
	uint32_t tid;
	int consumer_cpu, processing_cpu;
	uint64_t rate_bps, bytes;
	int steer_cpu;
	const char *relation, *reason;
};

struct ctl_flows {
	sd_bus_message *reply;
	struct ctl_flow *flows;
	size_t n;
};
int ctl_list_flows(struct ctl *c, struct ctl_flows *ret);
void ctl_flows_done(struct ctl_flows *f);
struct json_object *ctl_flow_to_json(const struct ctl_flow *f);

/*
 * Draw a topology, as the JSON of "caad --print-topology --json", into tb
 * as a tree (columns TOPOLOGY, CPUS, QUEUES, FLOWS), flows[i] marked
 * "F<marks[i]>" where marks[i] > 0. No I/O. Returns 0, -ENOMEM, or -EINVAL
 * for JSON without packages.
 */
int ctl_topology_draw(struct libscols_table *tb, struct json_object *topo, const struct ctl_flow *flows,
                      const int *marks, size_t n_flows);

/* ---- the objects ---- */

int ctl_status(struct ctl *c, const struct ctl_command *cmd);
int ctl_trials(struct ctl *c, const struct ctl_command *cmd);
int ctl_flows(struct ctl *c, const struct ctl_command *cmd);
int ctl_explain(struct ctl *c, const struct ctl_command *cmd);
int ctl_queues(struct ctl *c, const struct ctl_command *cmd);
int ctl_topology(struct ctl *c, const struct ctl_command *cmd);
int ctl_control(struct ctl *c, const struct ctl_command *cmd); /* reload, mode, placement, pause, resume, restore */
int ctl_metrics(struct ctl *c, const struct ctl_command *cmd);
int ctl_plan(struct ctl *c, const struct ctl_command *cmd);
