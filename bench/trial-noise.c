/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/trial-noise: how often caad's trial decision (caad_trial_decide(),
 * the code the daemon runs) replaces the prior on noise alone, and how
 * often it sees a real difference, from the turns of one placement
 * measured on this machine. bench/trial-noise (the driver) measures them;
 * this program only decides. Prints numbers; it is not a test. See
 * bench/README.md.
 *
 * Input: one line per turn of a flow that stayed on one placement, in
 * time order, "NS BYTES CPU_NS" (the measured part of the turn, bytes
 * read, consumer + softirq CPU time); '#' starts a comment.
 *
 * Every run of 2 x Rounds consecutive turns becomes one simulated trial:
 * its turns alternate alternative, prior (the daemon's order for two
 * candidates) and the alternative's bytes are multiplied by an effect f
 * (its CPU time is kept: goodput and bytes per CPU-second both f times
 * the measured). At f = 1 both candidates are the same placement: every
 * replacement is a false one. Windows overlap (they start at every
 * turn), so they are not independent trials: about turns / (2 x Rounds)
 * are.
 *
 * --synthetic N draws the turns instead: N of them, each one's bytes
 * independent and log-normal with --cv, at the same time and CPU time.
 * On such turns a confidence bound that means what it says replaces an
 * equally fast prior in about 100 - ConfidencePercent= of the trials
 * (fewer with the margin and WinPercent= on top): the calibration of the
 * decision itself, apart from this machine's noise, which is neither
 * independent nor log-normal.
 */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/macro.h"
#include "caad/trial.h"

#define MAX_EFFECTS 32
#define MAX_EFFECT 100.0 /* no more than 100 times the measured bytes ... */
#define MAX_BYTES (UINT64_C(1) << 56) /* ... of a turn: below 2^63 times that */

struct turn {
	uint64_t ns, bytes, cpu_ns;
};

/* a decimal number without sign, whole and in range; *p moves past it */
static bool parse_u64(char **p, uint64_t *ret)
{
	char *end;

	*p += strspn(*p, " \t\r\n");
	if (!(**p >= '0' && **p <= '9'))
		return false;
	errno = 0;
	*ret = strtoull(*p, &end, 10);
	if (errno || !strchr(" \t\r\n", *end))
		return false;
	*p = end;
	return true;
}

/* splitmix64: a small generator whose draws are the same everywhere */
static uint64_t next_u64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static double next_unit(uint64_t *state)
{
	return ((double)(next_u64(state) >> 11) + 0.5) / 9007199254740992.0;
}

/* n turns of 3 s at 2 CPU-seconds whose bytes are log-normal around 6e9
 * (16 Gbit/s) with coefficient of variation cv (Box-Muller) */
static int synthesize(size_t n, double cv, uint64_t seed, struct turn **ret)
{
	double sigma = sqrt(log(1 + cv * cv));
	struct turn *v = calloc(n, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		double z = sqrt(-2 * log(next_unit(&seed))) * cos(2 * M_PI * next_unit(&seed));

		v[i] = (struct turn){ .ns = 3000000000, .cpu_ns = 2000000000,
			              .bytes = (uint64_t)(6e9 * exp(sigma * z - sigma * sigma / 2)) };
	}
	*ret = v;
	return 0;
}

/* Fills *ret, *n_ret; 0, or -1 after saying why */
static int read_series(const char *path, struct turn **ret, size_t *n_ret)
{
	_cleanup_free_ struct turn *v = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t n = 0, cap = 0, bufsz = 0;
	unsigned line = 0;
	FILE *f;
	int r = 0;

	f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	if (!f) {
		fprintf(stderr, "trial-noise: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (getline(&buf, &bufsz, f) >= 0) {
		char *hash = strchr(buf, '#'), *q = buf;
		struct turn t;

		line++;
		if (hash)
			*hash = '\0';
		if (buf[strspn(buf, " \t\r\n")] == '\0')
			continue;
		if (!parse_u64(&q, &t.ns) || !parse_u64(&q, &t.bytes) || !parse_u64(&q, &t.cpu_ns) ||
		    q[strspn(q, " \t\r\n")] != '\0' || t.ns == 0 || t.bytes > MAX_BYTES) {
			fprintf(stderr, "trial-noise: %s:%u: want \"NS BYTES CPU_NS\", numbers >= 0, NS > 0, BYTES <= 2^56\n",
			        path, line);
			r = -1;
			break;
		}
		if (n == cap) {
			struct turn *w = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));
			if (!w) {
				fprintf(stderr, "trial-noise: out of memory\n");
				r = -1;
				break;
			}
			v = w;
		}
		v[n++] = t;
	}
	if (r == 0 && ferror(f)) {
		fprintf(stderr, "trial-noise: %s: read error after line %u\n", path, line);
		r = -1;
	}
	if (f != stdin)
		fclose(f);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(v);
	*n_ret = n;
	return 0;
}

static int parse_effects(const char *s, double *v, unsigned *n)
{
	char *end;

	*n = 0;
	for (;;) {
		if (*n == MAX_EFFECTS)
			return -E2BIG;
		errno = 0;
		v[*n] = strtod(s, &end);
		if (errno || end == s || !(v[*n] > 0 && v[*n] <= MAX_EFFECT))
			return -EINVAL;
		(*n)++;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -EINVAL;
		s = end + 1;
	}
}

/* an unsigned in [min, max], as caad.conf(5) takes the key */
static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the q-quantile of sorted v[0..n), nearest rank: the ceil(q n)-th */
static double quantile(const double *v, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	return n ? v[k ? MIN(k, n) - 1 : 0] : 0;
}

/* an option that takes an unsigned in [min, max] (or 0, where zero_ok) */
struct num_opt {
	int c;
	const char *name;
	unsigned *v;
	unsigned min, max;
	bool zero_ok;
};

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: trial-noise [OPTIONS] SERIES\n"
	        "       trial-noise [OPTIONS] --synthetic=N [--cv=PCT] [--seed=S]\n\n"
	        "Simulated trials of caad_trial_decide() over the turns of one placement\n"
	        "(SERIES: \"NS BYTES CPU_NS\" per turn, '-' for stdin); prints JSON.\n\n"
	        "  -r --rounds=N         turns of each candidate per trial (default: caad's)\n"
	        "  -m --margin=PCT       MarginPercent= (default: caad's)\n"
	        "  -w --win=PCT          WinPercent= (default: caad's)\n"
	        "  -l --eff-loss=PCT     EfficiencyLossPercent= (default: caad's)\n"
	        "  -c --confidence=PCT   ConfidencePercent= (default: caad's; 0: not asked, or 50..99)\n"
	        "  -e --effects=F,...    the alternative's bytes times F (default 1,1.02,1.03,1.05,1.1,1.15,1.2)\n"
	        "  -n --synthetic=N      N independent log-normal turns instead of a SERIES\n"
	        "     --cv=PCT           their coefficient of variation (default 16)\n"
	        "     --seed=S           their generator's seed (default 1)\n"
	        "  -h --help             show this help\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "margin", required_argument, NULL, 'm' },
		{ "win", required_argument, NULL, 'w' },
		{ "eff-loss", required_argument, NULL, 'l' },
		{ "confidence", required_argument, NULL, 'c' },
		{ "effects", required_argument, NULL, 'e' },
		{ "synthetic", required_argument, NULL, 'n' },
		{ "cv", required_argument, NULL, 'V' },
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	double effects[MAX_EFFECTS] = { 1, 1.02, 1.03, 1.05, 1.1, 1.15, 1.2 };
	unsigned n_effects = 7;
	_cleanup_free_ struct turn *turns = NULL;
	_cleanup_free_ struct caad_trial_sample *s = NULL;
	_cleanup_free_ double *ratios = NULL;
	struct caad_trial_params p;
	size_t n_turns = 0, len, windows;
	unsigned synthetic = 0, cv_pct = 16, seed = 1;
	const char *source;
	int c;

	caad_trial_params_init(&p);
	/* the numeric options; the [Trials] ones in the ranges caad.conf(5) allows */
	const struct num_opt nums[] = {
		{ 'r', "rounds", &p.rounds, 2, 100, false },
		{ 'm', "margin", &p.margin_pct, 0, 100, false },
		{ 'w', "win", &p.win_pct, 50, 100, false },
		{ 'l', "eff-loss", &p.eff_loss_pct, 0, 100, false },
		{ 'c', "confidence", &p.confidence_pct, 50, 99, true },
		{ 'n', "synthetic", &synthetic, 2, 10000000, false },
		{ 'V', "cv", &cv_pct, 0, 1000, false },
		{ 'S', "seed", &seed, 0, UINT32_MAX, false },
	};
	while ((c = getopt_long(argc, argv, "r:m:w:l:c:e:n:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'e':
			if (parse_effects(optarg, effects, &n_effects) < 0) {
				fprintf(stderr, "trial-noise: --effects: want up to %d positive numbers, comma-separated, "
				        "not '%s'\n", MAX_EFFECTS, optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default: {
			const struct num_opt *o = NULL;

			for (size_t i = 0; i < ARRAY_SIZE(nums) && !o; i++)
				if (nums[i].c == c)
					o = &nums[i];
			if (!o) {
				usage(stderr);
				return 2;
			}
			if (parse_uint(optarg, o->zero_ok ? 0 : o->min, o->max, o->v) < 0 || (*o->v && *o->v < o->min)) {
				fprintf(stderr, "trial-noise: --%s: want %s%u..%u, not '%s'\n", o->name,
				        o->zero_ok ? "0 or " : "", o->min, o->max, optarg);
				return 2;
			}
			break;
		}
		}
	}
	if (optind + !synthetic != argc) {
		usage(stderr);
		return 2;
	}
	if (synthetic) {
		n_turns = synthetic;
		source = "--synthetic";
		if (synthesize(n_turns, cv_pct / 100.0, seed, &turns) < 0) {
			fprintf(stderr, "trial-noise: out of memory\n");
			return 1;
		}
	} else {
		source = argv[optind];
		if (read_series(source, &turns, &n_turns) < 0)
			return 1;
	}
	len = 2 * (size_t)p.rounds;
	if (n_turns < len) {
		fprintf(stderr, "trial-noise: %s: %zu turns, a trial of %u rounds needs %zu\n", source, n_turns,
		        p.rounds, len);
		return 1;
	}
	windows = n_turns - len + 1;
	s = calloc(len, sizeof(*s));
	ratios = calloc(windows, sizeof(*ratios));
	if (!s || !ratios) {
		fprintf(stderr, "trial-noise: out of memory\n");
		return 1;
	}

	printf("{\"turns\": %zu, \"rounds\": %u, \"margin_pct\": %u, \"win_pct\": %u, \"eff_loss_pct\": %u, "
	       "\"confidence_pct\": %u, "
	       "\"trials\": %zu, \"independent_trials\": %zu, \"effects\": [",
	       n_turns, p.rounds, p.margin_pct, p.win_pct, p.eff_loss_pct, p.confidence_pct, windows,
	       n_turns / len);
	for (unsigned e = 0; e < n_effects; e++) {
		size_t replaced = 0, by_eff = 0;

		for (size_t w = 0; w < windows; w++) {
			struct caad_trial_result res;

			for (size_t k = 0; k < len; k++) {
				const struct turn *t = &turns[w + k];
				unsigned cand = (unsigned)((k + 1) % 2);

				s[k] = (struct caad_trial_sample){
					.round = (unsigned)(k / 2),
					.cand = cand,
					.ns = t->ns,
					.d = { .bytes = cand ? (uint64_t)((double)t->bytes * effects[e]) : t->bytes,
					       .cpu_ns = t->cpu_ns },
				};
			}
			if (caad_trial_decide(&p, s, len, 2, &res) < 0) {
				fprintf(stderr, "trial-noise: out of memory\n");
				return 1;
			}
			ratios[w] = res.scores[1].goodput_ratio;
			replaced += res.winner != 0;
			by_eff += res.winner != 0 && res.by_efficiency;
		}
		qsort(ratios, windows, sizeof(*ratios), cmp_double);
		printf("%s{\"effect\": %.4f, \"replaced\": %zu, \"replaced_share\": %.4f, \"replaced_by_efficiency\": %zu, "
		       "\"median_ratio_p5\": %.4f, \"median_ratio_p50\": %.4f, \"median_ratio_p95\": %.4f}",
		       e ? ", " : "", effects[e], replaced, (double)replaced / (double)windows, by_eff,
		       quantile(ratios, windows, 0.05), quantile(ratios, windows, 0.5), quantile(ratios, windows, 0.95));
	}
	printf("]}\n");
	return 0;
}
