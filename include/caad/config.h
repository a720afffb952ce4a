/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "caad/irqbalance.h"
#include "caad/plan.h"
#include "caad/trial.h"

enum caad_mode {
	CAAD_MODE_ENFORCE,  /* apply the plan */
	CAAD_MODE_DRY_RUN,  /* log the plan, write nothing */
	CAAD_MODE_OBSERVE,  /* observe flows only, no planning output */
	_CAAD_MODE_COUNT,
};

const char *caad_mode_to_string(enum caad_mode m);
int caad_mode_from_string(const char *s); /* -> mode or -EINVAL */

enum caad_placement {
	CAAD_PLACEMENT_PRIOR,   /* the planner's rules (the research prior) */
	CAAD_PLACEMENT_MEASURE, /* ... checked by closed-loop trials, verdicts kept */
	_CAAD_PLACEMENT_COUNT,
};

const char *caad_placement_to_string(enum caad_placement p);
int caad_placement_from_string(const char *s); /* -> placement or -EINVAL */

struct caad_config {
	enum caad_mode mode;
	char **interfaces;     /* NULL-terminated list; empty = none configured */
	size_t n_interfaces;
	unsigned interval_ms;  /* scan period */
	unsigned scan_budget_pct; /* ScanBudgetPercent=: scans' most of a CPU, else further apart */
	unsigned max_flows;    /* size of the BPF flow table */
	unsigned min_flow_bytes; /* MinFlowBytes=: a connection is followed once it received this much */
	int log_level;         /* syslog level */
	enum caad_irqbalance_mode irqbalance; /* what to do when irqbalance runs */
	unsigned backoff_sec;  /* BackOffSec=: leave values others changed alone this long; 0: until reload */
	char *metrics_file;    /* MetricsFile=: Prometheus text rewritten after every scan; NULL: none */
	struct caad_policy policy;
	enum caad_placement placement; /* Placement= */
	struct caad_trial_params trial; /* [Trials] (collapse_bps: half of RateThreshold=) */
	unsigned trial_steady_ms;  /* a flow heavy this long may get a trial */
	bool trial_host;           /* TryHostSteering=: the host's own steering is a candidate too */
	unsigned verdict_max_age_sec; /* verdicts expire after this; 0: only on kernel/topology/driver change */
	char *error;           /* first error of a failed parse or load, "FILE:LINE: what"; NULL if none */
};

void caad_config_init(struct caad_config *c);
void caad_config_done(struct caad_config *c);

/*
 * Parse one INI file into c, overriding what it sets. Unknown sections or
 * keys and bad values are errors: the message names FILE:LINE and is logged
 * (the first one also kept in c->error, e.g. for D-Bus Reload); the return
 * is -EINVAL (or -errno for I/O). On error c may be partially updated:
 * callers parse into a copy and swap.
 */
int caad_config_parse_file(struct caad_config *c, const char *path);
/* The same for len bytes of text (NUL bytes included, no terminator
 * needed); name stands for the file in messages. For tests and fuzzing. */
int caad_config_parse_string(struct caad_config *c, const char *text, size_t len, const char *name);

/*
 * Load the configuration stack: VENDORDIR/caad.conf, then CONFDIR/caad.conf,
 * then CONFDIR/caad.conf.d/ *.conf in lexical order; missing files are skipped.
 * When explicit_path is non-NULL only that file is read (and it must exist).
 */
int caad_config_load(struct caad_config *c, const char *explicit_path);

/* Parse "1G", "500M", "10000000", "2.5G" (bit/s, SI suffixes K M G T).
 * -EINVAL: not such a number; -EDOM: a fraction of a bit ("1.5", "1.0001K");
 * -ERANGE: more than UINT64_MAX. */
int caad_parse_rate(const char *s, uint64_t *ret);
/* What caad_parse_rate()'s -ERANGE or -EDOM says ("larger than ..."), or
 * NULL for another error (each caller says what it expected). */
const char *caad_parse_rate_error(int r);
/* Parse yes/no/true/false/1/0/on/off. */
int caad_parse_bool(const char *s, bool *ret);
/* Whether s may name a network interface, as Linux allows (the rule). */
bool caad_ifname_valid(const char *s);
#define CAAD_IFNAME_RULE "1-15 bytes, none of '/', ':' or whitespace, not '.' or '..'"
/* Replace the interface list (copies). */
int caad_config_set_interfaces(struct caad_config *c, char *const *names, size_t n);
