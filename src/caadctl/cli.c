/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The grammar, bpftool-style: OBJECT [VERB] [ARGS], where every object,
 * verb, mode and placement may be abbreviated to a unique prefix
 * ("caadctl fl s ID").
 * Pure: no I/O, so that tests/unit/test-caadctl-cli.c can drive it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "caad/busargs.h"
#include "caadctl.h"

const char *const ctl_object_names[_CTL_OBJECT_COUNT] = {
	[CTL_STATUS] = "status",   [CTL_FLOWS] = "flows",     [CTL_QUEUES] = "queues",
	[CTL_TOPOLOGY] = "topology", [CTL_EXPLAIN] = "explain", [CTL_TRIALS] = "trials",
	[CTL_RELOAD] = "reload",   [CTL_MODE] = "mode",       [CTL_PLACEMENT] = "placement",
	[CTL_PAUSE] = "pause",
	[CTL_RESUME] = "resume",   [CTL_RESTORE] = "restore", [CTL_METRICS] = "metrics",
	[CTL_PLAN] = "plan",
};

const char *const ctl_mode_names[3] = { "enforce", "dry-run", "observe" };
const char *const ctl_placement_names[2] = { "prior", "measure" };

static const char *const verb_names[_CTL_VERB_COUNT] = {
	[CTL_VERB_NONE] = "",
	[CTL_VERB_LIST] = "list",
	[CTL_VERB_SHOW] = "show",
};

/* What each object accepts after its name. */
static const struct {
	enum ctl_verb verbs[3]; /* CTL_VERB_NONE-terminated; the first is the default */
	const char *arg;        /* name of the argument for messages, NULL: none */
	bool arg_optional;
} grammar[_CTL_OBJECT_COUNT] = {
	[CTL_FLOWS] = { { CTL_VERB_LIST, CTL_VERB_SHOW } },
	[CTL_QUEUES] = { { CTL_VERB_LIST } },
	[CTL_TRIALS] = { { CTL_VERB_LIST } },
	[CTL_EXPLAIN] = { .arg = "FLOW" },
	[CTL_MODE] = { .arg = "enforce|dry-run|observe", .arg_optional = true },
	[CTL_PLACEMENT] = { .arg = "prior|measure", .arg_optional = true },
	[CTL_PLAN] = { .arg = "SCENARIO" },
};

int ctl_match(const char *word, const char *const *names, size_t n)
{
	size_t len;
	int found = -ENOENT;

	if (!word || !*word)
		return -ENOENT;
	len = strlen(word);
	for (size_t i = 0; i < n; i++) {
		if (!names[i] || !*names[i])
			continue;
		if (streq(word, names[i]))
			return (int)i;
		if (strncmp(word, names[i], len) == 0)
			found = found == -ENOENT ? (int)i : -ENOTUNIQ;
	}
	return found;
}

void ctl_candidates(const char *word, const char *const *names, size_t n, char *buf, size_t size)
{
	size_t len = word ? strlen(word) : 0, o = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int k;

		if (!names[i] || !*names[i] || strncmp(word ? word : "", names[i], len) != 0)
			continue;
		k = snprintf(buf + o, size - o, "%s%s", o ? ", " : "", names[i]);
		if (k < 0 || (size_t)k >= size - o) {
			buf[o] = '\0'; /* whole names only */
			break;
		}
		o += (size_t)k;
	}
}

/* "ambiguous WHAT 'x': pause, plan" or "unknown WHAT 'x'". */
static int match_or_explain(const char *word, const char *const *names, size_t n, const char *what,
                            const char *expected, char *err, size_t err_size)
{
	int i = ctl_match(word, names, n);
	char cands[256];

	if (i == -ENOTUNIQ) {
		ctl_candidates(word, names, n, cands, sizeof(cands));
		snprintf(err, err_size, "ambiguous %s '%s': it could be %s", what, word, cands);
		return -EINVAL;
	}
	if (i < 0) {
		snprintf(err, err_size, "unknown %s '%s': expected %s", what, word, expected);
		return -EINVAL;
	}
	return i;
}

static void join(const char *const *names, size_t n, const char *sep, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && o < size; i++) {
		int k;

		if (!names[i] || !*names[i])
			continue;
		k = snprintf(buf + o, size - o, "%s%s", o ? sep : "", names[i]);
		if (k < 0)
			break;
		o += (size_t)k;
	}
}

int ctl_parse_command(int argc, char *const *argv, struct ctl_command *ret, char *err, size_t err_size)
{
	struct ctl_command cmd = { .verb = CTL_VERB_NONE };
	char expected[256];
	int i, k = 0;

	if (argc < 1) {
		snprintf(err, err_size, "missing OBJECT (see caadctl --help)");
		return -EINVAL;
	}
	join(ctl_object_names, _CTL_OBJECT_COUNT, ", ", expected, sizeof(expected));
	i = match_or_explain(argv[k++], ctl_object_names, _CTL_OBJECT_COUNT, "object", expected, err, err_size);
	if (i < 0)
		return i;
	cmd.object = (enum ctl_object)i;

	/* A verb, when the object has verbs: the given one, else the default. */
	if (grammar[cmd.object].verbs[0] != CTL_VERB_NONE) {
		const char *names[_CTL_VERB_COUNT] = {};
		char list[64];

		for (size_t v = 0; v < ARRAY_SIZE(grammar[cmd.object].verbs) && grammar[cmd.object].verbs[v]; v++)
			names[grammar[cmd.object].verbs[v]] = verb_names[grammar[cmd.object].verbs[v]];
		join(names, _CTL_VERB_COUNT, " or ", list, sizeof(list));
		cmd.verb = grammar[cmd.object].verbs[0];
		if (k < argc) {
			char what[32];

			snprintf(what, sizeof(what), "verb of %s", ctl_object_names[cmd.object]);
			i = match_or_explain(argv[k++], names, _CTL_VERB_COUNT, what, list, err, err_size);
			if (i < 0)
				return i;
			cmd.verb = (enum ctl_verb)i;
		}
	}

	/* The argument. */
	if (cmd.verb == CTL_VERB_SHOW || grammar[cmd.object].arg) {
		const char *name = cmd.verb == CTL_VERB_SHOW ? "FLOW" : grammar[cmd.object].arg;

		if (k < argc) {
			cmd.arg = argv[k++];
			if (*cmd.arg == '\0') {
				snprintf(err, err_size, "%s%s%s: empty %s", ctl_object_names[cmd.object],
				         cmd.verb ? " " : "", verb_names[cmd.verb], name);
				return -EINVAL;
			}
		} else if (!(cmd.verb == CTL_VERB_NONE && grammar[cmd.object].arg_optional)) {
			snprintf(err, err_size, "%s%s%s: missing %s", ctl_object_names[cmd.object], cmd.verb ? " " : "",
			         verb_names[cmd.verb], name);
			return -EINVAL;
		}
	}
	/* a FLOW as caad reads it (Explain): a usage error here, not a failure from caad */
	if (cmd.arg && (cmd.verb == CTL_VERB_SHOW || cmd.object == CTL_EXPLAIN)) {
		uint64_t id;
		int r = caad_busargs_parse_flow_id(cmd.arg, &id);

		if (r < 0) {
			snprintf(err, err_size, "%s%s%s: '%s' is not a flow id (%s; caadctl flows lists them)",
			         ctl_object_names[cmd.object], cmd.verb ? " " : "", verb_names[cmd.verb], cmd.arg,
			         r == -ERANGE ? "more than 64 bits" : "hex digits, 0x optional");
			return -EINVAL;
		}
	}
	if (cmd.object == CTL_MODE && cmd.arg) {
		i = match_or_explain(cmd.arg, ctl_mode_names, ARRAY_SIZE(ctl_mode_names), "mode",
		                     "enforce, dry-run or observe", err, err_size);
		if (i < 0)
			return i;
		cmd.arg = ctl_mode_names[i];
	}
	if (cmd.object == CTL_PLACEMENT && cmd.arg) {
		i = match_or_explain(cmd.arg, ctl_placement_names, ARRAY_SIZE(ctl_placement_names), "placement",
		                     "prior or measure", err, err_size);
		if (i < 0)
			return i;
		cmd.arg = ctl_placement_names[i];
	}

	if (k < argc) {
		snprintf(err, err_size, "%s%s%s: unexpected argument '%s'", ctl_object_names[cmd.object],
		         cmd.verb ? " " : "", verb_names[cmd.verb], argv[k]);
		return -EINVAL;
	}
	*ret = cmd;
	return 0;
}
