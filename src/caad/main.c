/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caad: the cache-aware affinitization daemon. Options and start-up; the
 * loop itself is in daemon.c.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caad-config.h"
#include "caad/config.h"
#include "caad/log.h"
#include "caad/macro.h"
#include "caad/scenario.h"
#include "caad/sysfs.h"
#include "caad/topology.h"
#include "daemon.h"

#define EX_DATAERR 65 /* --simulate: a bad scenario */
#define EX_NOINPUT 66 /* --simulate: the scenario cannot be read */

static void help(void)
{
	printf("Usage: caad [OPTIONS]\n"
	       "\n"
	       "Cache-aware affinitization daemon: steers the receive processing of heavy TCP\n"
	       "flows to a peer core sharing the consuming thread's last-level cache.\n"
	       "\n"
	       "  -h --help                 Show this help and exit\n"
	       "     --version              Show the version and exit\n"
	       "  -f --foreground           Stay in the foreground (also under systemd)\n"
	       "  -c --config=PATH          Read only this configuration file\n"
	       "                            (default: %s/caad.conf, %s/caad.conf,\n"
	       "                            %s/caad.conf.d/*.conf)\n"
	       "  -n --dry-run              Log the plan, write nothing\n"
	       "  -i --interface=IFNAME     Manage this interface (repeatable; overrides Interfaces=;\n"
	       "                            default: physical interfaces that are up, multi-queue or with IRQs)\n"
	       "     --interval=MS          Scan period in milliseconds (overrides IntervalMSec=)\n"
	       "     --sysroot=DIR          Read and write DIR/proc and DIR/sys instead of /proc, /sys\n"
	       "     --topology=FILE.xml    Plan for this hwloc XML topology instead of the host's\n"
	       "                            (without --sysroot: its CPUs must be this host's)\n"
	       "     --runtime-dir=DIR      Journal and state here (default: %s)\n"
	       "     --state-dir=DIR        Verdicts of closed-loop trials here (default: %s)\n"
	       "     --log-level=LEVEL      emerg..debug (overrides LogLevel=)\n"
	       "     --restore              Restore what an earlier run's journal records (not an earlier\n"
	       "                            boot's: the reboot reset it), then exit\n"
	       "     --print-topology       Print the machine and the interfaces' queues as caad sees\n"
	       "                            them (honours --topology, --sysroot, -i), then exit\n"
	       "     --json                 With --print-topology: print JSON\n"
	       "     --check-config         Read the configuration (and the options given), report its\n"
	       "                            errors, then exit: 0 valid, 78 not; changes nothing\n"
	       "     --simulate=SCENARIO.json\n"
	       "                            Print the plan for the interfaces and flows of a scenario\n"
	       "                            as JSON (honours --topology, --sysroot, --config), then exit\n",
	       CAAD_VENDORDIR, CAAD_SYSCONFDIR, CAAD_SYSCONFDIR, CAAD_RUNTIME_DIR, CAAD_STATE_DIR);
}

static int parse_args(int argc, char **argv, struct args *a)
{
	enum { ARG_VERSION = 0x100, ARG_INTERVAL, ARG_SYSROOT, ARG_TOPOLOGY, ARG_RUNTIME_DIR, ARG_STATE_DIR, ARG_LOG_LEVEL,
	       ARG_RESTORE, ARG_PRINT_TOPOLOGY, ARG_JSON, ARG_SIMULATE, ARG_CHECK_CONFIG };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "interface", required_argument, NULL, 'i' },
		{ "interval", required_argument, NULL, ARG_INTERVAL },
		{ "sysroot", required_argument, NULL, ARG_SYSROOT },
		{ "topology", required_argument, NULL, ARG_TOPOLOGY },
		{ "runtime-dir", required_argument, NULL, ARG_RUNTIME_DIR },
		{ "state-dir", required_argument, NULL, ARG_STATE_DIR },
		{ "log-level", required_argument, NULL, ARG_LOG_LEVEL },
		{ "restore", no_argument, NULL, ARG_RESTORE },
		{ "print-topology", no_argument, NULL, ARG_PRINT_TOPOLOGY },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "simulate", required_argument, NULL, ARG_SIMULATE },
		{ "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "hfc:ni:", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			help();
			exit(EXIT_SUCCESS);
		case ARG_VERSION:
			printf("caad %s\n", CAAD_VERSION);
			exit(EXIT_SUCCESS);
		case 'f':
			a->foreground = true;
			break;
		case 'c':
			a->config_path = optarg;
			break;
		case 'n':
			a->dry_run = true;
			break;
		case 'i': {
			char **n;

			if (!caad_ifname_valid(optarg)) {
				fprintf(stderr, "caad: --interface: \"%s\" is not an interface name (%s)\n", optarg,
				        CAAD_IFNAME_RULE);
				return -EINVAL;
			}
			n = reallocarray(a->interfaces, a->n_interfaces + 1, sizeof(char *));
			if (!n)
				return -ENOMEM;
			a->interfaces = n;
			a->interfaces[a->n_interfaces++] = optarg;
			break;
		}
		case ARG_INTERVAL: {
			char *end;
			unsigned long v;

			/* digits only, as IntervalMSec=: strtoul() takes blanks,
			 * a sign, and wraps a negative number around */
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (!isdigit((unsigned char)optarg[0]) || errno || *end || v < 10 || v > 60000) {
				fprintf(stderr, "caad: --interval: expected milliseconds from 10 to 60000, got \"%s\"\n",
				        optarg);
				return -EINVAL;
			}
			a->interval_ms = (unsigned)v;
			break;
		}
		case ARG_SYSROOT:
			a->sysroot = optarg;
			break;
		case ARG_TOPOLOGY:
			a->topology_path = optarg;
			break;
		case ARG_STATE_DIR:
		case ARG_RUNTIME_DIR:
			if (!optarg[0]) {
				fprintf(stderr, "caad: --%s: expected a directory, got an empty name\n",
				        c == ARG_STATE_DIR ? "state-dir" : "runtime-dir");
				return -EINVAL;
			}
			*(c == ARG_STATE_DIR ? &a->state_dir : &a->runtime_dir) = optarg;
			break;
		case ARG_LOG_LEVEL:
			a->log_level = caad_log_parse_level(optarg);
			if (a->log_level < 0) {
				fprintf(stderr, "caad: --log-level: unknown level \"%s\"\n", optarg);
				return -EINVAL;
			}
			break;
		case ARG_RESTORE:
			a->restore_only = true;
			break;
		case ARG_PRINT_TOPOLOGY:
			a->print_topology = true;
			break;
		case ARG_JSON:
			a->json = true;
			break;
		case ARG_SIMULATE:
			a->simulate_path = optarg;
			break;
		case ARG_CHECK_CONFIG:
			a->check_config = true;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "caad: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (a->simulate_path && (a->restore_only || a->print_topology)) {
		fprintf(stderr, "caad: --simulate cannot be combined with --restore or --print-topology\n");
		return -EINVAL;
	}
	if (a->check_config && (a->restore_only || a->print_topology || a->simulate_path)) {
		fprintf(stderr, "caad: --check-config cannot be combined with --restore, --print-topology or --simulate\n");
		return -EINVAL;
	}
	/* the format of --print-topology's output: without it, a mistake */
	if (a->json && !a->print_topology) {
		fprintf(stderr, "caad: --json applies to --print-topology only\n");
		return -EINVAL;
	}
	/* one would be left undone: the print exits before any restore */
	if (a->restore_only && a->print_topology) {
		fprintf(stderr, "caad: --restore cannot be combined with --print-topology\n");
		return -EINVAL;
	}
	return 0;
}

/* --simulate: the plan for a scenario on stdout, as JSON; the host's queues
 * and flows are not looked at, nothing is written. Returns the exit status. */
static int simulate(const struct args *a, const struct caad_config *c)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	_cleanup_(caad_scenario_freep) struct caad_scenario *s = NULL;
	_cleanup_(caad_plan_freep) struct caad_plan *p = NULL;
	_cleanup_free_ char *error = NULL;
	int r;

	r = caad_topology_load(a->topology_path, a->sysroot, &t);
	if (r < 0)
		return EXIT_FAILURE; /* logged */
	r = caad_scenario_load(a->simulate_path, t, &s, &error);
	if (r == -ENOMEM) {
		log_error_errno(r, "Failed to read the scenario: %m");
		return EXIT_FAILURE;
	}
	if (r < 0) {
		log_error("%s", error ?: a->simulate_path);
		return r == -EINVAL || r == -EFBIG ? EX_DATAERR : EX_NOINPUT;
	}
	r = caad_scenario_plan(s, t, &c->policy, &p);
	if (r < 0) {
		log_error_errno(r, "Planning failed: %m");
		return EXIT_FAILURE;
	}
	r = caad_scenario_print(stdout, s, &c->policy, p);
	if (r < 0 || fflush(stdout) != 0) {
		log_error_errno(r < 0 ? r : errno, "Failed to write the plan: %m");
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct args args = { .runtime_dir = CAAD_RUNTIME_DIR, .state_dir = CAAD_STATE_DIR, .log_level = -1 };
	struct daemon d = { .args = &args };
	int r;

	r = parse_args(argc, argv, &args);
	if (r < 0) {
		free(args.interfaces); /* those given before the bad option */
		return r == -ENOMEM ? EXIT_FAILURE : 2;
	}
	if (args.log_level >= 0)
		caad_log_set_max_level(args.log_level);
	/* --sysroot=// is the host (its kthreads, genetlink, NIC locality) */
	args.sysroot = caad_sysroot_canonical(args.sysroot);

	caad_config_init(&d.config);
	r = caad_config_load(&d.config, args.config_path);
	if (r < 0 && !args.simulate_path && !args.print_topology && !args.check_config) {
		/* The host first: a crashed run's journal needs no configuration,
		 * and a broken one (a bad drop-in that a reload refused while
		 * the crashed run went on) must not leave its values in place
		 * (systemd does not restart caad after status 78). --restore
		 * does only that, whatever the configuration. */
		bool only = args.restore_only;

		args.restore_only = true;
		int rr = daemon_run(&d);
		daemon_done(&d);
		free(args.interfaces);
		if (only)
			return rr < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
		return EX_CONFIG;
	}
	if (r < 0) {
		daemon_done(&d); /* the config keeps its error's text */
		free(args.interfaces);
		return EX_CONFIG;
	}
	/* (the names were checked with the options: only ENOMEM fails here) */
	r = daemon_config_apply_args(&d.config, &args);
	if (r < 0) {
		log_error_errno(r, "Failed to apply the command line's options: %m");
		daemon_done(&d);
		free(args.interfaces);
		return EXIT_FAILURE;
	}

	if (args.check_config) { /* its errors are logged; none: valid */
		daemon_done(&d);
		free(args.interfaces);
		return EXIT_SUCCESS;
	}

	if (args.simulate_path) {
		r = simulate(&args, &d.config);
		daemon_done(&d);
		free(args.interfaces);
		return r;
	}

	/* The flow snapshots are big arrays made and freed every scan: keep
	 * them out of the heap (an mmap each, given back when freed) so that
	 * the daemon's RSS follows the flows it has now, not the most it ever
	 * had; a fixed threshold also stops glibc from raising it. */
	(void)mallopt(M_MMAP_THRESHOLD, 256 * 1024);

	if (args.print_topology) {
		r = daemon_print_topology(&args, &d.config);
		daemon_done(&d);
		free(args.interfaces);
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	}

	_cleanup_free_ char *abs_config = NULL, *abs_sysroot = NULL, *abs_topology = NULL, *abs_runtime = NULL,
	                    *abs_state = NULL;
	/* Absolute, in the foreground too: daemon(3) changes to /, and the
	 * journal names each path it wrote under --sysroot, which a --restore
	 * or a restart run from another directory must find; --config and
	 * CAAD_CONF_ROOT are read again at every reload. */
	args.config_path = caad_path_absolute(args.config_path, &abs_config);
	args.sysroot = caad_path_absolute(args.sysroot, &abs_sysroot);
	args.topology_path = caad_path_absolute(args.topology_path, &abs_topology);
	args.runtime_dir = caad_path_absolute(args.runtime_dir, &abs_runtime);
	args.state_dir = caad_path_absolute(args.state_dir, &abs_state);
	_cleanup_free_ char *abs_conf_root = NULL;
	const char *conf_root = getenv("CAAD_CONF_ROOT");
	if (conf_root && caad_path_absolute(conf_root, &abs_conf_root) != conf_root)
		(void)setenv("CAAD_CONF_ROOT", abs_conf_root, 1);
	if (!args.foreground && !getenv("NOTIFY_SOCKET") && !args.restore_only) {
		if (daemon(0, 0) < 0) {
			log_error_errno(errno, "Failed to go to the background: %m");
			daemon_done(&d);
			free(args.interfaces);
			return EXIT_FAILURE;
		}
		caad_log_open_syslog("caad"); /* stderr is /dev/null now */
	}

	r = daemon_run(&d);

	daemon_done(&d);
	free(args.interfaces);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
