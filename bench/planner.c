/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/planner: how long caad_plan_compute() takes and how much memory
 * its plan holds, for 1k, 100k and 1M flows, on the 24em64t fixture and on
 * a 1024-CPU synthetic machine with 4096 rx queues. Prints numbers; it is
 * not a test. See bench/README.md.
 *
 * Flows come sorted by id, as the daemon's snapshot does. Three mixes:
 *   heavy     every flow heavy: a decision per flow, and with that many
 *             consumers every core is one, so nothing can be steered (the
 *             worst case for time and memory, not a useful plan);
 *   replan    the same again with the previous plan, 10% of the consumers
 *             moved (the hysteresis path);
 *   few       one heavy flow per 8 CPUs, all the others light (the case
 *             caad is for: a few fast flows among many).
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "caad/flow.h"
#include "caad/inventory.h"
#include "caad/log.h"
#include "caad/macro.h"
#include "caad/plan.h"
#include "caad/topology.h"

#define GBIT UINT64_C(1000000000)
#define NSEC_PER_SEC UINT64_C(1000000000)

static uint64_t rng_state = UINT64_C(0xbe4c4ca4d);

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Bytes malloc holds for the program right now. */
static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* user, nice, system, idle, iowait, irq, softirq, steal of /proc/stat's cpu line */
static int read_cpu_times(uint64_t t[8])
{
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "cpu %lu %lu %lu %lu %lu %lu %lu %lu", &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7]);
	fclose(f);
	return n == 8 ? 0 : -EIO;
}

struct machine {
	const char *name;
	struct caad_topology *topo;
	struct caad_inventory inv;
};

/* n_ifaces interfaces of q queues each, queue i with the movable IRQ base + i. */
static int make_inventory(struct caad_inventory *inv, unsigned n_ifaces, unsigned q)
{
	inv->ifaces = calloc(n_ifaces, sizeof(*inv->ifaces));
	if (!inv->ifaces)
		return -ENOMEM;
	inv->n_ifaces = n_ifaces;
	for (unsigned i = 0; i < n_ifaces; i++) {
		struct caad_iface *ifc = &inv->ifaces[i];

		snprintf(ifc->name, sizeof(ifc->name), "eth%u", i);
		ifc->ifindex = (int)i + 2;
		ifc->numa_node = -1;
		ifc->rx = calloc(q, sizeof(*ifc->rx));
		if (!ifc->rx)
			return -ENOMEM;
		ifc->n_rx = q;
		for (unsigned j = 0; j < q; j++)
			ifc->rx[j] = (struct caad_queue){ .index = j, .irq = (int)(1000 + i * q + j), .has_rps = true };
	}
	return 0;
}

static void free_inventory(struct caad_inventory *inv)
{
	for (size_t i = 0; i < inv->n_ifaces; i++)
		free(inv->ifaces[i].rx);
	free(inv->ifaces);
}

/* Flows sorted by id; n_heavy of them (spread evenly) at 1-20 Gbit/s, the
 * others light; consumers on random usable CPUs, on random queues. */
static void make_flows(const struct machine *m, struct caad_flow *fl, size_t n, size_t n_heavy)
{
	unsigned n_usable = caad_cpumask_count(&m->topo->usable);
	_cleanup_free_ int *usable = malloc(n_usable * sizeof(int));
	unsigned k = 0;

	CAAD_CPUMASK_FOREACH(cpu, &m->topo->usable)
		usable[k++] = cpu;
	for (size_t i = 0; i < n; i++) {
		const struct caad_iface *ifc = &m->inv.ifaces[rng_next() % m->inv.n_ifaces];
		bool heavy = n_heavy >= n || (n_heavy > 0 && i % (n / n_heavy) == 0 && i / (n / n_heavy) < n_heavy);

		fl[i] = (struct caad_flow){
			.id = 0x10000 + i * 64,
			.family = 2,
			.pid = 1000 + (uint32_t)(i % 30000),
			.tid = 1000 + (uint32_t)(i % 30000),
			.consumer_cpu = usable[rng_next() % n_usable],
			.proc_cpu = -1,
			.ifindex = ifc->ifindex,
			.rx_queue = (int)(rng_next() % ifc->n_rx),
			.rate_bps = heavy ? GBIT + rng_next() % (19 * GBIT) : rng_next() % (GBIT / 4),
			.first_ns = 1,
		};
		memcpy(fl[i].comm, "iperf3", 7);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

struct result {
	uint64_t cold_ns;            /* the first plan: a new scratch, every page faulted in */
	uint64_t median_ns, min_ns;  /* the plans after it, with the daemon's reuse of memory */
	uint64_t cpu_median_ns;      /* the thread's CPU time: without the time others ran on its CPU */
	size_t plan_bytes;
	long rss_growth_kib;
	size_t n_decisions, n_settings, n_steered;
	unsigned n_moves;
};

/*
 * One plan with a new scratch (cold), then runs more as the daemon makes
 * them scan after scan: the same scratch, each plan recycled when done
 * with (caad_plan_compute_with(), caad_plan_recycle()).
 */
static int run(const struct machine *m, const struct caad_flow *fl, size_t n, const struct caad_plan *prev,
               uint64_t now, unsigned runs, struct result *res)
{
	_cleanup_(caad_plan_scratch_freep) struct caad_plan_scratch *scratch = NULL;
	uint64_t t[64], tc[64];
	long rss0 = maxrss_kib();
	struct caad_policy policy;
	int e;

	caad_policy_init(&policy);
	*res = (struct result){};
	e = caad_plan_scratch_new(&scratch);
	if (e < 0)
		return e;
	for (unsigned r = 0; r <= runs; r++) {
		struct caad_plan *p = NULL;
		size_t before = heap_bytes();
		uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = now_ns();

		e = caad_plan_compute_with(scratch, m->topo, &m->inv, fl, n, &policy, prev, now, &p);
		if (e < 0)
			return e;
		if (r == 0) {
			res->cold_ns = now_ns() - t0;
			res->plan_bytes = heap_bytes() - before;
			res->n_decisions = p->n_decisions;
			res->n_settings = p->n_settings;
			res->n_moves = p->n_moves;
			for (size_t k = 0; k < p->n_decisions; k++)
				res->n_steered += p->decisions[k].steer_cpu >= 0;
		} else {
			t[r - 1] = now_ns() - t0;
			tc[r - 1] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		}
		caad_plan_recycle(scratch, p);
	}
	qsort(t, runs, sizeof(uint64_t), cmp_u64);
	qsort(tc, runs, sizeof(uint64_t), cmp_u64);
	res->median_ns = t[runs / 2];
	res->min_ns = t[0];
	res->cpu_median_ns = tc[runs / 2];
	res->rss_growth_kib = maxrss_kib() - rss0;
	return 0;
}

static bool want(const char *only, const char *mix)
{
	return !only || streq(only, mix);
}

static void print_result(const char *machine, const char *mix, size_t n, const struct result *r)
{
	printf("%-22s %-9s %8zu %8.3f %10.3f %10.3f %8.3f %8.1f %9.1f %10.1f %9zu %8zu %6zu %5u\n", machine, mix,
	       n, (double)r->cold_ns / 1e6, (double)r->median_ns / 1e6, (double)r->min_ns / 1e6, (double)r->cpu_median_ns / 1e6,
	       (double)r->median_ns / (double)n,
	       (double)r->plan_bytes / 1048576.0, (double)r->rss_growth_kib / 1024.0, r->n_decisions, r->n_steered,
	       r->n_settings, r->n_moves);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "fixtures", required_argument, NULL, 'f' },
		{ "max-flows", required_argument, NULL, 'n' },
		{ "machine", required_argument, NULL, 'm' },
		{ "mix", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static const size_t sizes[] = { 1000, 100000, 1000000 };
	const char *fixtures = BENCH_TOPOLOGIES;
	unsigned runs = 9;
	size_t max_flows = 1000000;
	const char *only_machine = NULL, *only_mix = NULL;
	struct machine machines[2] = {};
	uint64_t cpu0[8], cpu1[8];
	_cleanup_free_ char *xml = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "r:f:n:m:x:h", options, NULL)) >= 0) {
		switch (c) {
		case 'r':
			runs = (unsigned)strtoul(optarg, NULL, 10);
			if (runs < 1 || runs > 64) {
				fprintf(stderr, "planner: --runs: 1..64\n");
				return 2;
			}
			break;
		case 'f':
			fixtures = optarg;
			break;
		case 'n':
			max_flows = strtoul(optarg, NULL, 10);
			break;
		case 'm':
			only_machine = optarg;
			break;
		case 'x':
			only_mix = optarg;
			break;
		case 'h':
			printf("Usage: planner [--runs=N] [--max-flows=N] [--fixtures=DIR] [--machine=24em64t|1024]\n"
			       "               [--mix=heavy|replan|few]\n"
			       "Plan time (the first, then median and best of N more, default 9) and memory for 1k,\n"
			       "100k and 1M flows;\n"
			       "--machine and --mix run only the rows whose machine name starts with that word,\n"
			       "or of that mix (for a profiler).\n");
			return 0;
		default:
			return 2;
		}
	}
	caad_log_set_max_level(LOG_WARNING);

	if (asprintf(&xml, "%s/24em64t-2n6c2t-pci.xml", fixtures) < 0)
		return 1;
	machines[0].name = "24em64t, 64 queues";
	machines[1].name = "1024 CPUs, 4096 queues";
	if ((r = caad_topology_load(xml, NULL, &machines[0].topo)) < 0 ||
	    (r = caad_topology_load_synthetic("package:4 l3:8 core:16 pu:2", &machines[1].topo)) < 0 ||
	    (r = make_inventory(&machines[0].inv, 2, 32)) < 0 || (r = make_inventory(&machines[1].inv, 16, 256)) < 0) {
		fprintf(stderr, "planner: setting up the machines failed: %s\n", strerror(-r));
		return 1;
	}

	_cleanup_free_ struct caad_flow *fl = malloc(max_flows * sizeof(*fl));
	if (!fl)
		return 1;

	printf("caad planner benchmark: time in ms; cold: the first plan, its memory new; then %u plans as\n"
	       "the daemon makes them, its memory reused (median, best; cpu: median of the thread's CPU time,\n"
	       "which leaves out the time other tasks ran on its CPU); ns per flow (median);\n"
	       "plan = bytes the first plan holds (MiB), rss+ = growth of the peak RSS during the runs (MiB)\n\n",
	       runs);
	printf("%-22s %-9s %8s %8s %10s %10s %8s %8s %9s %10s %9s %8s %6s %5s\n", "machine", "mix", "flows", "cold",
	       "median", "best",
	       "cpu", "ns/flow", "plan MiB", "rss+ MiB", "decisions", "steered", "sets", "moves");
	if (read_cpu_times(cpu0) < 0)
		memset(cpu0, 0, sizeof(cpu0));

	for (size_t mi = 0; mi < ARRAY_SIZE(machines); mi++) {
		const struct machine *m = &machines[mi];

		if (only_machine && strncmp(m->name, only_machine, strlen(only_machine)) != 0)
			continue;
		for (size_t si = 0; si < ARRAY_SIZE(sizes) && sizes[si] <= max_flows; si++) {
			size_t n = sizes[si];
			unsigned nr = n >= 1000000 ? MIN(runs, 5u) : runs;
			struct caad_policy policy;
			struct caad_plan *prev = NULL;
			struct result res;
			uint64_t now = 3600 * NSEC_PER_SEC;

			if (want(only_mix, "heavy") || want(only_mix, "replan")) {
				make_flows(m, fl, n, n);
				if (want(only_mix, "heavy")) {
					if ((r = run(m, fl, n, NULL, now, nr, &res)) < 0)
						goto fail;
					print_result(m->name, "heavy", n, &res);
				}
			}

			/* the hysteresis path: the plan before, 10% of the consumers moved */
			if (want(only_mix, "replan")) {
				caad_policy_init(&policy);
				if ((r = caad_plan_compute(m->topo, &m->inv, fl, n, &policy, NULL, now, &prev)) < 0)
					goto fail;
				for (size_t i = 0; i < n; i++)
					if (rng_next() % 10 == 0)
						fl[i].consumer_cpu = (int)(rng_next() % m->topo->n_cpus);
				r = run(m, fl, n, prev, now + 250 * 1000000, nr, &res);
				caad_plan_free(prev);
				if (r < 0)
					goto fail;
				print_result(m->name, "replan", n, &res);
			}

			if (want(only_mix, "few")) {
				make_flows(m, fl, n, m->topo->n_cpus / 8);
				if ((r = run(m, fl, n, NULL, now, nr, &res)) < 0)
					goto fail;
				print_result(m->name, "few", n, &res);
			}
		}
	}

	if (read_cpu_times(cpu1) == 0 && cpu0[0]) {
		uint64_t total = 0, steal = cpu1[7] - cpu0[7];

		for (int i = 0; i < 8; i++)
			total += cpu1[i] - cpu0[i];
		printf("\nsteal time during the run (/proc/stat, all CPUs): %lu of %lu ticks (%.1f%%)\n",
		       (unsigned long)steal, (unsigned long)total, total ? 100.0 * (double)steal / (double)total : 0.0);
	}
	for (size_t mi = 0; mi < ARRAY_SIZE(machines); mi++) {
		caad_topology_free(machines[mi].topo);
		free_inventory(&machines[mi].inv);
	}
	return 0;

fail:
	fprintf(stderr, "planner: planning failed: %s\n", strerror(-r));
	return 1;
}
