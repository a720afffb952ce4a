/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caadctl [OPTIONS] OBJECT [VERB] [ARGS]: ask the running caad (over the
 * system D-Bus) what it sees and does, and tell it what to do.
 * Exit status: 0 ok, 1 failure (caad not running, refused, failed), 2 usage.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad-config.h"
#include "caadctl.h"

static void help(void)
{
	printf("Usage: caadctl [OPTIONS] OBJECT [VERB] [ARGS]\n"
	       "\n"
	       "Query and control caad, the cache-aware affinitization daemon, over the system\n"
	       "D-Bus. Objects, verbs, modes and placements may be abbreviated to a unique\n"
	       "prefix.\n"
	       "\n"
	       "Objects:\n"
	       "  status                    Mode, interfaces and counters of the running caad\n"
	       "  flows [list]              The TCP flows caad sees, and where each is steered\n"
	       "  flows show FLOW           One flow in full\n"
	       "  queues [list]             The managed rx queues: IRQ, masks, caad's target\n"
	       "  topology                  The machine as a tree, NICs, queues and flows on it\n"
	       "  explain FLOW              What caad decided for a flow, and why\n"
	       "  trials [list]             Closed-loop trials and their verdicts\n"
	       "  metrics                   Counters in the Prometheus text format\n"
	       "  mode [MODE]               Show the mode, or set it: enforce, dry-run, observe\n"
	       "  placement [PLACEMENT]     Show the placement, or set it: prior, measure\n"
	       "  pause                     Stop applying plans (changed values stay)\n"
	       "  resume                    Apply plans again\n"
	       "  restore                   Put every changed value back, and pause\n"
	       "  reload                    Read the configuration again\n"
	       "  plan SCENARIO             caad's planner on a scenario file, offline\n"
	       "\n"
	       "Options:\n"
	       "  -h --help                 Show this help and exit\n"
	       "     --version              Show the version and exit\n"
	       "  -j --json                 Print JSON (errors too, as {\"error\": ...})\n"
	       "  -p --pretty               Print indented JSON (implies --json)\n"
	       "     --no-legend            Print tables without headers and legends\n"
	       "  -a --all                  topology: mark every flow, not only the steered ones\n"
	       "     --topology=FILE.xml    topology, plan: this hwloc XML topology, offline\n"
	       "\n"
	       "Exit status: 0 success, 1 failure (caad not running, refused, failed), 2 usage.\n"
	       "See caadctl(8).\n");
}

/* arg is name, or a prefix of it that getopt_long() takes for it (no
 * other option of caadctl's starts with --j or --p). */
static bool long_prefix(const char *arg, const char *name)
{
	size_t n = strlen(arg);

	return n > 2 && strncmp(arg, "--", 2) == 0 && strncmp(name, arg, n) == 0;
}

static int parse_options(struct ctl *c, int argc, char **argv)
{
	enum { ARG_VERSION = 0x100, ARG_NO_LEGEND, ARG_TOPOLOGY };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "no-legend", no_argument, NULL, ARG_NO_LEGEND },
		{ "all", no_argument, NULL, 'a' },
		{ "topology", required_argument, NULL, ARG_TOPOLOGY },
		{}
	};
	int o;

	/* JSON is known before any error is reported: a first pass for -j/-p
	 * (and, as getopt_long() takes them, their long names shortened) */
	for (int i = 1; i < argc && !streq(argv[i], "--"); i++)
		if (long_prefix(argv[i], "--json") || long_prefix(argv[i], "--pretty") ||
		    (argv[i][0] == '-' && argv[i][1] != '-' && strpbrk(argv[i], "jp") &&
		     strspn(argv[i] + 1, "hjpa") == strlen(argv[i] + 1)))
			c->json = true;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":hjpa", options, NULL)) >= 0) {
		switch (o) {
		case 'h':
			help();
			exit(EXIT_SUCCESS);
		case ARG_VERSION:
			printf("caadctl %s\n", CAAD_VERSION);
			exit(EXIT_SUCCESS);
		case 'j':
			c->json = true;
			break;
		case 'p':
			c->json = c->pretty = true;
			break;
		case ARG_NO_LEGEND:
			c->legend = false;
			break;
		case 'a':
			c->all_flows = true;
			break;
		case ARG_TOPOLOGY:
			c->topology_path = optarg;
			break;
		case ':':
			return ctl_usage_error(c, "option '%s' needs an argument", argv[optind - 1]);
		default: {
			/* A long option is a whole argument, passed already: an
			 * unknown one sets optopt 0; one given a value it does not
			 * take (--json=1) sets optopt to its code. A short letter's
			 * argument may still be in hand (-xj): optind tells nothing,
			 * optopt is the letter. */
			const char *arg = argv[optind - 1];
			size_t n = strcspn(arg, "=");

			if (optopt && strncmp(arg, "--", 2) == 0 && arg[n] == '=')
				for (const struct option *op = options; op->name; op++)
					if (op->val == optopt && op->has_arg == no_argument && n - 2 <= strlen(op->name) &&
					    strncmp(arg + 2, op->name, n - 2) == 0) /* or its prefix: --js=1 */
						return ctl_usage_error(c, "option '%.*s' takes no value", (int)n, arg);
			if (optopt > 0 && optopt < 128 && isgraph(optopt))
				return ctl_usage_error(c, "unknown option '-%c'", optopt);
			return ctl_usage_error(c, "unknown option '%s'", arg);
		}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static int (*const run[_CTL_OBJECT_COUNT])(struct ctl *, const struct ctl_command *) = {
		[CTL_STATUS] = ctl_status,   [CTL_FLOWS] = ctl_flows,     [CTL_QUEUES] = ctl_queues,
		[CTL_TOPOLOGY] = ctl_topology, [CTL_EXPLAIN] = ctl_explain, [CTL_TRIALS] = ctl_trials,
		[CTL_RELOAD] = ctl_control,  [CTL_MODE] = ctl_control,    [CTL_PLACEMENT] = ctl_control,
		[CTL_PAUSE] = ctl_control,
		[CTL_RESUME] = ctl_control,  [CTL_RESTORE] = ctl_control, [CTL_METRICS] = ctl_metrics,
		[CTL_PLAN] = ctl_plan,
	};
	struct ctl c = { .legend = true };
	struct ctl_command cmd;
	char err[512];
	int r;

	setlocale(LC_ALL, ""); /* libsmartcols draws trees with line characters in UTF-8 locales */
	/* numbers as caad writes them and scripts read them: "0.25", never "0,25" */
	setlocale(LC_NUMERIC, "C");
	r = parse_options(&c, argc, argv);
	if (r)
		return r;
	if (ctl_parse_command(argc - optind, argv + optind, &cmd, err, sizeof(err)) < 0)
		return ctl_usage_error(&c, "%s", err);
	if (c.topology_path && cmd.object != CTL_TOPOLOGY && cmd.object != CTL_PLAN)
		return ctl_usage_error(&c, "--topology applies to topology and plan only");
	if (c.all_flows && cmd.object != CTL_TOPOLOGY)
		return ctl_usage_error(&c, "--all applies to the topology object only");

	r = run[cmd.object](&c, &cmd);
	sd_bus_flush_close_unref(c.bus);
	return r;
}
