/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caadctl trials [list]: the closed loop's trials (Placement=measure) as
 * GetTrials gives them: one row per trial and candidate placement, with
 * the figures the decision rests on, then the stored verdicts. Under -j
 * the JSON of GetTrials itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "caadctl.h"

enum { COL_ID, COL_STATE, COL_COMM, COL_FLOW, COL_CPU, COL_RELATION, COL_GOODPUT, COL_EFFICIENCY, COL_RATIO,
       COL_WINS, COL_EFF_RATIO, COL_EFF_WINS, COL_OOO, COL_RETRANS, COL_STEAL, COL_VERDICT, COL_REASON };

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A string member, "-" when missing or null. */
static const char *text(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "-";
}

static double number(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v ? json_object_get_double(v) : 0;
}

static uint64_t count(struct json_object *o, const char *key)
{
	return ctl_json_count(get(o, key));
}

/* "0.871", or "-" for 0: not known. */
static void format_ratio(double v, char *buf, size_t size)
{
	if (v > 0)
		snprintf(buf, size, "%.3f", v);
	else
		snprintf(buf, size, "-");
}

/*
 * "5/6 (1 behind)": paired turns ahead of the prior, of all its paired
 * turns, and those behind by more than the margin (which the decision
 * counts) where the member BEHIND of O says (a caad before it did not).
 */
static void format_wins(uint64_t wins, uint64_t pairs, struct json_object *o, const char *behind, char *buf,
                        size_t size)
{
	if (!pairs)
		snprintf(buf, size, "-");
	else if (get(o, behind))
		snprintf(buf, size, "%" PRIu64 "/%" PRIu64 " (%" PRIu64 " behind)", wins, pairs, count(o, behind));
	else
		snprintf(buf, size, "%" PRIu64 "/%" PRIu64, wins, pairs);
}

/* A trial's verdict for its rows: the relation that won, "aborted", or "-" while it runs. */
static const char *verdict(struct json_object *t)
{
	struct json_object *v = get(t, "verdict");

	if (v && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return streq(text(t, "state"), "aborted") ? "aborted" : "-";
}

static int candidate_row(struct libscols_table *tb, struct json_object *t, struct json_object *cand)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	bool prior = json_object_get_boolean(get(cand, "prior"));
	char id[24], cpu[16], goodput[32], efficiency[40], ratio[16], wins[80], eff_ratio[16], eff_wins[80], ooo[24],
		retrans[24], steal[16];
	uint64_t pairs = count(cand, "pairs");

	if (!ln)
		return -ENOMEM;
	snprintf(id, sizeof(id), "%" PRIu64, count(t, "id"));
	ctl_format_int(get(cand, "cpu") ? json_object_get_int(get(cand, "cpu")) : -1, cpu, sizeof(cpu));
	if (count(cand, "goodput_bps"))
		ctl_format_rate(count(cand, "goodput_bps"), goodput, sizeof(goodput));
	else
		snprintf(goodput, sizeof(goodput), "-");
	if (count(cand, "bytes_per_cpu_second"))
		ctl_format_bytes(count(cand, "bytes_per_cpu_second"), efficiency, sizeof(efficiency));
	else
		snprintf(efficiency, sizeof(efficiency), "-");
	if (prior) {
		/* the yardstick: its ratios are 1 by definition */
		snprintf(ratio, sizeof(ratio), "prior");
		snprintf(eff_ratio, sizeof(eff_ratio), "prior");
		snprintf(wins, sizeof(wins), "-");
		snprintf(eff_wins, sizeof(eff_wins), "-");
	} else {
		format_ratio(number(cand, "goodput_ratio"), ratio, sizeof(ratio));
		format_ratio(number(cand, "efficiency_ratio"), eff_ratio, sizeof(eff_ratio));
		format_wins(count(cand, "goodput_wins"), pairs, cand, "goodput_behind", wins, sizeof(wins));
		/* efficiency is counted over the pairs whose CPU time was known
		 * (an older caad's trials do not say: all of them) */
		format_wins(count(cand, "efficiency_wins"), get(cand, "efficiency_pairs") ? count(cand, "efficiency_pairs") : pairs,
		            cand, "efficiency_behind", eff_wins, sizeof(eff_wins));
	}
	snprintf(ooo, sizeof(ooo), "%" PRIu64, count(cand, "ooo_packets"));
	snprintf(retrans, sizeof(retrans), "%" PRIu64, count(cand, "retransmits"));
	if (get(cand, "steal_pct")) /* an older caad's trials do not say */
		snprintf(steal, sizeof(steal), "%.1f%%", number(cand, "steal_pct"));
	else
		snprintf(steal, sizeof(steal), "-");
	if (scols_line_set_data(ln, COL_ID, id) < 0 || scols_line_set_data(ln, COL_STATE, text(t, "state")) < 0 ||
	    scols_line_set_data(ln, COL_COMM, text(t, "comm")) < 0 ||
	    scols_line_set_data(ln, COL_FLOW, text(t, "flow")) < 0 || scols_line_set_data(ln, COL_CPU, cpu) < 0 ||
	    scols_line_set_data(ln, COL_RELATION, text(cand, "relation")) < 0 ||
	    scols_line_set_data(ln, COL_GOODPUT, goodput) < 0 ||
	    scols_line_set_data(ln, COL_EFFICIENCY, efficiency) < 0 || scols_line_set_data(ln, COL_RATIO, ratio) < 0 ||
	    scols_line_set_data(ln, COL_WINS, wins) < 0 || scols_line_set_data(ln, COL_EFF_RATIO, eff_ratio) < 0 ||
	    scols_line_set_data(ln, COL_EFF_WINS, eff_wins) < 0 || scols_line_set_data(ln, COL_OOO, ooo) < 0 ||
	    scols_line_set_data(ln, COL_RETRANS, retrans) < 0 || scols_line_set_data(ln, COL_STEAL, steal) < 0 ||
	    scols_line_set_data(ln, COL_VERDICT, verdict(t)) < 0 ||
	    scols_line_set_data(ln, COL_REASON, text(t, "reason")) < 0)
		return -ENOMEM;
	return 0;
}

static int trials_table(struct ctl *c, struct json_object *trials)
{
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = ctl_table_new(c);
	static const struct {
		const char *name;
		int flags;
	} cols[] = {
		[COL_ID] = { "ID", SCOLS_FL_RIGHT },
		[COL_STATE] = { "STATE", 0 },
		[COL_COMM] = { "COMM", 0 },
		[COL_FLOW] = { "FLOW", 0 },
		[COL_CPU] = { "CPU", SCOLS_FL_RIGHT },
		[COL_RELATION] = { "RELATION", 0 },
		[COL_GOODPUT] = { "GOODPUT", SCOLS_FL_RIGHT },
		[COL_EFFICIENCY] = { "BYTES/CPU-S", SCOLS_FL_RIGHT },
		[COL_RATIO] = { "RATIO", SCOLS_FL_RIGHT },
		[COL_WINS] = { "WINS", SCOLS_FL_RIGHT },
		[COL_EFF_RATIO] = { "EFF-RATIO", SCOLS_FL_RIGHT },
		[COL_EFF_WINS] = { "EFF-WINS", SCOLS_FL_RIGHT },
		[COL_OOO] = { "OOO", SCOLS_FL_RIGHT },
		[COL_RETRANS] = { "RETRANS", SCOLS_FL_RIGHT },
		[COL_STEAL] = { "STEAL", SCOLS_FL_RIGHT },
		[COL_VERDICT] = { "VERDICT", 0 },
		[COL_REASON] = { "REASON", SCOLS_FL_TRUNC },
	};
	/* in a narrow terminal these go first, then libsmartcols cuts REASON */
	static const size_t optional[] = { COL_FLOW, COL_STEAL, COL_EFF_WINS, COL_EFF_RATIO, COL_RETRANS, COL_OOO,
		                           COL_EFFICIENCY, COL_STATE };
	size_t n = json_object_array_length(trials);

	if (!tb)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(cols); i++)
		if (ctl_table_column(tb, cols[i].name, 0, cols[i].flags) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *t = json_object_array_get_idx(trials, i), *cands = get(t, "candidates");

		if (!json_object_is_type(cands, json_type_array))
			continue; /* not caad's shape: nothing to show */
		for (size_t k = 0; k < json_object_array_length(cands); k++)
			if (candidate_row(tb, t, json_object_array_get_idx(cands, k)) < 0)
				return -ENOMEM;
	}
	(void)ctl_table_fit(tb, ctl_terminal_width(), optional, ARRAY_SIZE(optional));
	return ctl_table_print(c, tb);
}

/* Whether a verdict kept the prior: "kept", "replaced", or "-" where a
 * store written before caad said so does not. */
static const char *prior_kept(struct json_object *v)
{
	struct json_object *k = get(v, "kept_prior");

	if (!k || !json_object_is_type(k, json_type_boolean))
		return "-";
	return json_object_get_boolean(k) ? "kept" : "replaced";
}

/* The alternative a verdict's figures are of, "-" where not known. */
static const char *alternative(struct json_object *v)
{
	const char *a = text(v, "alternative");

	return streq(a, "unsteered") ? "-" : a;
}

/* The verdicts in force, as caad stores them: what later flows get. */
static int verdicts_table(struct ctl *c, struct json_object *verdicts)
{
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = ctl_table_new(c);
	static const char *const names[] = { "IFACE", "DRIVER", "COMM",  "READER",      "VERDICT", "PRIOR",
		                             "DECIDED", "TRIAL", "ALTERNATIVE", "RATIO",   "WINS" };

	if (!tb)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (ctl_table_column(tb, names[i], 0, i == 7 || i >= 9 ? SCOLS_FL_RIGHT : 0) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < json_object_array_length(verdicts); i++) {
		struct json_object *v = json_object_array_get_idx(verdicts, i);
		struct json_object *pinned = get(v, "pinned");
		struct libscols_line *ln = scols_table_new_line(tb, NULL);
		char decided[32], trial[24], ratio[16], wins[80];

		if (!ln)
			return -ENOMEM;
		ctl_format_time(count(v, "decided"), decided, sizeof(decided));
		snprintf(trial, sizeof(trial), "%" PRIu64, count(v, "trial"));
		format_ratio(number(v, "goodput_ratio"), ratio, sizeof(ratio));
		format_wins(count(v, "wins"), count(v, "pairs"), v, "behind", wins, sizeof(wins));
		if (scols_line_set_data(ln, 0, text(v, "iface")) < 0 ||
		    scols_line_set_data(ln, 1, *text(v, "driver") ? text(v, "driver") : "-") < 0 ||
		    scols_line_set_data(ln, 2, text(v, "comm")) < 0 ||
		    /* a store of an earlier caad does not say: its trials had pinned readers */
		    scols_line_set_data(ln, 3, pinned && !json_object_get_boolean(pinned) ? "unpinned" : "pinned") < 0 ||
		    scols_line_set_data(ln, 4, text(v, "relation")) < 0 || scols_line_set_data(ln, 5, prior_kept(v)) < 0 ||
		    scols_line_set_data(ln, 6, decided) < 0 || scols_line_set_data(ln, 7, trial) < 0 ||
		    scols_line_set_data(ln, 8, alternative(v)) < 0 || scols_line_set_data(ln, 9, ratio) < 0 ||
		    scols_line_set_data(ln, 10, wins) < 0)
			return -ENOMEM;
	}
	return ctl_table_print(c, tb);
}

int ctl_trials(struct ctl *c, const struct ctl_command *cmd)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(ctl_json_putp) struct json_object *doc = NULL;
	enum json_tokener_error jerr = json_tokener_success;
	struct json_object *trials, *verdicts;
	const char *json, *placement;
	size_t n_trials, n_verdicts;
	int r;

	r = ctl_call_string(c, "GetTrials", &reply, &json, NULL);
	if (r)
		return r;
	doc = json_tokener_parse_verbose(json, &jerr);
	trials = get(doc, "trials");
	if (!doc || !json_object_is_type(trials, json_type_array))
		return ctl_fail(c, "GetTrials: caad's answer is not the expected JSON%s%s",
		                doc ? "" : ": ", doc ? "" : json_tokener_error_desc(jerr));
	if (c->json)
		return ctl_json_print(c, TAKE_PTR(doc));

	placement = text(doc, "placement");
	verdicts = get(get(doc, "store"), "verdicts");
	n_trials = json_object_array_length(trials);
	n_verdicts = json_object_is_type(verdicts, json_type_array) ? json_object_array_length(verdicts) : 0;
	if (n_trials == 0) {
		if (streq(placement, "prior"))
			printf("No trials: Placement=prior, so each heavy flow gets the measured prior (a peer core\n"
			       "in its consumer's LLC) and no other placement is tried.\n");
		else
			printf("No trials yet: Placement=%s tries a heavy flow once it has been steady for\n"
			       "SteadyMSec= and its application has no verdict on its interface.\n", placement);
	} else {
		r = trials_table(c, trials);
		if (r < 0)
			return r == -ENOMEM ? ctl_fail(c, "Out of memory") : r;
		if (r)
			return r;
	}
	if (n_verdicts) {
		if (c->legend)
			printf("\nVerdicts in force (later flows of the same application on the same interface get them):\n");
		else
			putchar('\n');
		r = verdicts_table(c, verdicts);
		if (r < 0)
			return r == -ENOMEM ? ctl_fail(c, "Out of memory") : r;
		return r;
	}
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}
