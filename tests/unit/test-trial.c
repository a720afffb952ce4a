/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The closed loop's decision statistics on recorded samples (clear win,
 * tie, noisy overlap, efficiency), its schedule, and how a trial ends
 * (done, flow gone, rate collapse); the verdict store.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "caad/cpumask.h"
#include "caad/macro.h"
#include "caad/plan.h"
#include "caad/sysfs.h"
#include "caad/trial.h"
#include "caad/verdict.h"

#define NSEC_PER_MSEC UINT64_C(1000000)
#define NSEC_PER_SEC UINT64_C(1000000000)
#define GBIT (1e9 / 8) /* bytes per second at 1 Gbit/s */

/* A sample of goodput gbps (Gbit/s) over 1 s, at cpu_s CPU-seconds. */
static struct caad_trial_sample sample(unsigned round, unsigned cand, double gbps, double cpu_s)
{
	return (struct caad_trial_sample){
		.round = round,
		.cand = cand,
		.ns = 1000000000,
		.d = { .bytes = (uint64_t)(gbps * GBIT), .cpu_ns = (uint64_t)(cpu_s * 1e9) },
	};
}

static struct caad_trial_params params(void)
{
	struct caad_trial_params p;

	caad_trial_params_init(&p);
	p.margin_pct = 3;
	p.win_pct = 80;
	return p;
}

/* Rounds of (prior, alternative) goodputs at equal CPU time, with
 * ConfidencePercent=CONF. */
static int decide_pairs_conf(const double (*g)[2], unsigned n, unsigned conf, struct caad_trial_result *res)
{
	struct caad_trial_params p = params();
	struct caad_trial_sample s[32];

	p.confidence_pct = conf;
	assert_true(n * 2 <= ARRAY_SIZE(s));
	for (unsigned r = 0; r < n; r++) {
		s[2 * r] = sample(r, 0, g[r][0], 1.0);
		s[2 * r + 1] = sample(r, 1, g[r][1], 1.0);
	}
	return caad_trial_decide(&p, s, n * 2, 2, res);
}

/* ... with the default ConfidencePercent= */
static int decide_pairs(const double (*g)[2], unsigned n, struct caad_trial_result *res)
{
	struct caad_trial_params def;

	caad_trial_params_init(&def);
	return decide_pairs_conf(g, n, def.confidence_pct, res);
}

static void test_clear_win(void **state)
{
	static const double g[][2] = { { 10, 11 }, { 10.2, 11 }, { 9.8, 10.9 }, { 10, 10.8 }, { 10.1, 11.2 }, { 10, 11 } };
	struct caad_trial_result res;

	assert_int_equal(decide_pairs(g, ARRAY_SIZE(g), &res), 0);
	assert_int_equal(res.winner, 1);
	assert_int_equal(res.scores[1].pairs, 6);
	assert_int_equal(res.scores[1].goodput_wins, 6);
	assert_true(res.scores[1].goodput_ratio > 1.07 && res.scores[1].goodput_ratio < 1.12);
	assert_float_equal(res.scores[0].goodput_ratio, 1.0, 1e-9);
	assert_non_null(strstr(res.reason, "candidate 1 won"));
}

static void test_clear_loss_keeps_prior(void **state)
{
	static const double g[][2] = { { 11, 10 }, { 11, 10 }, { 11, 10 }, { 11, 10 } };
	struct caad_trial_result res;

	assert_int_equal(decide_pairs(g, ARRAY_SIZE(g), &res), 0);
	assert_int_equal(res.winner, 0);
	assert_int_equal(res.scores[1].goodput_wins, 0);
}

/* Equal within a percent: the prior stands. */
static void test_tie_keeps_prior(void **state)
{
	static const double g[][2] = { { 10, 10.05 }, { 10, 9.98 }, { 10, 10.1 }, { 10, 10.0 }, { 10, 10.08 }, { 10, 9.95 } };
	struct caad_trial_result res;

	assert_int_equal(decide_pairs(g, ARRAY_SIZE(g), &res), 0);
	assert_int_equal(res.winner, 0);
	assert_non_null(strstr(res.reason, "the prior stands"));
}

/* The median is 5% up, but 2 of 6 rounds are 10-15% behind, beyond the 3%
 * margin (4 held: 67% < 80%): noisy, the prior stands. */
static void test_noisy_overlap_keeps_prior(void **state)
{
	static const double g[][2] = { { 10, 10.6 }, { 10, 9.0 }, { 10, 10.5 }, { 10, 10.7 }, { 10, 8.5 }, { 10, 10.5 } };
	struct caad_trial_result res;

	assert_int_equal(decide_pairs(g, ARRAY_SIZE(g), &res), 0);
	assert_true(res.scores[1].goodput_ratio >= 1.03);
	assert_int_equal(res.scores[1].goodput_wins, 4);
	assert_int_equal(res.scores[1].goodput_behind, 2);
	assert_int_equal(res.winner, 0);
}

/* The same rounds with one behind (5 of 6 held, 83%): WinPercent= lets it
 * win; but that one turn, 15% behind, puts the geometric mean of the six
 * ratios (1.017x) within their noise: with 95% confidence only 0.933x,
 * and ConfidencePercent= keeps the prior. */
static void test_held_but_noisy(void **state)
{
	static const double g[][2] = { { 10, 10.6 }, { 10, 10.4 }, { 10, 10.5 }, { 10, 10.7 }, { 10, 8.5 }, { 10, 10.5 } };
	struct caad_trial_result res;

	assert_int_equal(decide_pairs_conf(g, ARRAY_SIZE(g), 0, &res), 0);
	assert_int_equal(res.winner, 1);
	assert_float_equal(res.scores[1].goodput_low, 0, 0); /* not asked */
	assert_int_equal(decide_pairs_conf(g, ARRAY_SIZE(g), 95, &res), 0);
	assert_int_equal(res.winner, 0);
	assert_float_equal(res.scores[1].goodput_low, 0.93294, 1e-4);
	assert_non_null(strstr(res.reason, "but with 95% confidence only 0.933"));
	assert_non_null(strstr(res.reason, "within the noise of its turns"));
}

/* Turns the alternative lost by less than the margin (3%) are ties, not
 * losses: ahead in only 4 of 6, but behind by more than 3% in none, and
 * 10% up: it wins. */
static void test_ties_within_margin_win(void **state)
{
	static const double g[][2] = { { 10, 9.83 }, { 10, 11 }, { 10, 9.94 }, { 10, 11.2 }, { 10, 11.1 }, { 10, 11 } };
	struct caad_trial_result res;

	assert_int_equal(decide_pairs(g, ARRAY_SIZE(g), &res), 0);
	assert_int_equal(res.scores[1].goodput_wins, 4);
	assert_int_equal(res.scores[1].goodput_behind, 0);
	assert_int_equal(res.winner, 1);
	assert_non_null(strstr(res.reason, "over 3% behind in 0"));
}

/* One turn 4% behind (a loss) and one 2.5% behind (a tie): 5 of 6 held,
 * it wins; a second loss (5 of 6 needed, 4 held) keeps the prior. */
static void test_losses_beyond_margin_count(void **state)
{
	static const double one[][2] = { { 10, 9.6 }, { 10, 9.75 }, { 10, 11 }, { 10, 11 }, { 10, 11 }, { 10, 11 } };
	static const double two[][2] = { { 10, 9.6 }, { 10, 9.65 }, { 10, 11 }, { 10, 11 }, { 10, 11 }, { 10, 11 } };
	struct caad_trial_result res;

	/* WinPercent= alone: ConfidencePercent= not asked */
	assert_int_equal(decide_pairs_conf(one, ARRAY_SIZE(one), 0, &res), 0);
	assert_int_equal(res.scores[1].goodput_behind, 1);
	assert_int_equal(res.winner, 1);
	assert_int_equal(decide_pairs_conf(two, ARRAY_SIZE(two), 0, &res), 0);
	assert_int_equal(res.scores[1].goodput_behind, 2);
	assert_true(res.scores[1].goodput_ratio >= 1.03);
	assert_int_equal(res.winner, 0);
	assert_non_null(strstr(res.reason, "over 3% behind in 2"));
}

/* Student's t quantiles, as tables give them */
static void test_student_t_quantile(void **state)
{
	assert_float_equal(caad_student_t_quantile(0.95, 1), 6.3138, 1e-4);
	assert_float_equal(caad_student_t_quantile(0.95, 5), 2.0150, 1e-4);
	assert_float_equal(caad_student_t_quantile(0.95, 10), 1.8125, 1e-4);
	assert_float_equal(caad_student_t_quantile(0.95, 30), 1.6973, 1e-4);
	assert_float_equal(caad_student_t_quantile(0.95, 99), 1.6604, 1e-4);
	assert_float_equal(caad_student_t_quantile(0.975, 2), 4.3027, 1e-4);
	assert_float_equal(caad_student_t_quantile(0.99, 4), 3.7469, 1e-4);
	assert_float_equal(caad_student_t_quantile(0.05, 5), -2.0150, 1e-4);
	assert_float_equal(caad_student_t_quantile(0.5, 7), 0, 1e-9);
	assert_true(isnan(caad_student_t_quantile(0, 5)));
	assert_true(isnan(caad_student_t_quantile(1, 5)));
	assert_true(isnan(caad_student_t_quantile(0.95, 0)));
}

/* Ahead by 4% on the median and never behind by more than the margin, but
 * one turn 20% up and two a little behind: the spread of the ratios is
 * larger than their mean. WinPercent= and MarginPercent= let it win;
 * ConfidencePercent=95 keeps the prior, 50 (the mean alone) does not. The
 * same gain, steady, stands out of its noise. */
static void test_gain_within_noise_keeps_prior(void **state)
{
	static const double noisy[][2] = { { 10, 10.4 }, { 10, 10.5 }, { 10, 9.8 }, { 10, 12 }, { 10, 9.9 }, { 10, 10.4 } };
	static const double steady[][2] = { { 10, 10.4 }, { 10, 10.5 }, { 10, 10.35 }, { 10, 10.45 }, { 10, 10.4 }, { 10, 10.4 } };
	struct caad_trial_result res;

	assert_int_equal(decide_pairs_conf(noisy, ARRAY_SIZE(noisy), 0, &res), 0);
	assert_int_equal(res.winner, 1);
	assert_int_equal(res.scores[1].goodput_behind, 0);
	assert_int_equal(decide_pairs(noisy, ARRAY_SIZE(noisy), &res), 0);
	assert_int_equal(res.winner, 0);
	assert_float_equal(res.scores[1].goodput_low, 0.97626, 1e-4);
	assert_non_null(strstr(res.reason, "within the noise of its turns (ConfidencePercent=)"));
	assert_int_equal(decide_pairs_conf(noisy, ARRAY_SIZE(noisy), 50, &res), 0);
	assert_int_equal(res.winner, 1);
	assert_float_equal(res.scores[1].goodput_low, 1.04765, 1e-4); /* the geometric mean */

	assert_int_equal(decide_pairs(steady, ARRAY_SIZE(steady), &res), 0);
	assert_int_equal(res.winner, 1);
	assert_float_equal(res.scores[1].goodput_low, 1.03664, 1e-4);
	assert_non_null(strstr(res.reason, "at least 1.03"));
	assert_non_null(strstr(res.reason, "with 95% confidence"));
	/* no efficiency bound to show when there is no CPU time */
	assert_null(strstr(res.reason, "0.000x"));
}

/* The textbook bound over the logs of r[0..n): exp(mean - t * sd / sqrt(n)),
 * and in *dist that distance mean - log(bound) */
static double textbook_low(const double *r, unsigned n, double t, double *dist)
{
	double mean = 0, sq = 0;

	for (unsigned i = 0; i < n; i++)
		mean += log(r[i]) / n;
	for (unsigned i = 0; i < n; i++)
		sq += (log(r[i]) - mean) * (log(r[i]) - mean);
	*dist = t * sqrt(sq / (n - 1)) / sqrt(n);
	return exp(mean - *dist);
}

/* The standard error counts the prior's turns that neighbouring pairs
 * share. Prior, alternative, ... six times: each alternative is paired
 * with the prior's turns on both sides (the last with one), so
 * neighbouring ratios share a prior turn and their mean moves more by
 * chance than their spread says: by sqrt(6 * 12.5/36 * 5 / (9.5 -
 * 12.5/6)) = 1.1851 times the textbook standard error (weights: the
 * alternative's turns 1, the first prior turn 1/2, the last 3/2, the
 * others 1, squares summing to 12.5; ratio variances 1.5 each, the last
 * 2, summing to 9.5), right where turns are independent. A 7.5% median
 * gain whose textbook bound clears 1 falls back within the noise. */
static void test_shared_prior_turns_widen_the_bound(void **state)
{
	static const double g[][2] = { { 10, 11.5 }, { 10, 9.8 }, { 10, 11.6 }, { 10, 10.0 }, { 10, 11.4 }, { 10, 10.1 } };
	double r[ARRAY_SIZE(g)], t = caad_student_t_quantile(0.95, ARRAY_SIZE(g) - 1), dist, mean = 0;
	struct caad_trial_result res;

	for (unsigned i = 0; i < ARRAY_SIZE(g); i++) {
		r[i] = g[i][1] / g[i][0];
		mean += log(r[i]) / ARRAY_SIZE(g);
	}
	assert_true(textbook_low(r, ARRAY_SIZE(g), t, &dist) > 1.002);
	assert_int_equal(decide_pairs(g, ARRAY_SIZE(g), &res), 0);
	assert_true(res.scores[1].goodput_ratio >= 1.07);
	assert_int_equal(res.scores[1].goodput_behind, 0);
	assert_int_equal(res.winner, 0);
	assert_float_equal(res.scores[1].goodput_low, 0.99099, 1e-4);
	assert_float_equal((mean - log(res.scores[1].goodput_low)) / dist, 1.18511, 1e-4);
	assert_non_null(strstr(res.reason, "within the noise of its turns"));
}

/* Pairs that share no turn get the textbook bound: alternative, prior,
 * prior, alternative pairs each alternative with the one prior turn
 * beside it. */
static void test_separate_pairs_textbook_bound(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_sample s[] = { sample(0, 1, 11.0, 1.0), sample(0, 0, 10.0, 1.0), sample(1, 0, 10.0, 1.0),
	                                 sample(1, 1, 10.5, 1.0) };
	static const double r[] = { 1.1, 1.05 };
	double dist, want = textbook_low(r, 2, caad_student_t_quantile(0.95, 1), &dist);
	struct caad_trial_result res;

	assert_int_equal(caad_trial_decide(&p, s, ARRAY_SIZE(s), 2, &res), 0);
	assert_int_equal(res.scores[1].pairs, 2);
	assert_float_equal(res.scores[1].goodput_low, want, 1e-9);
	assert_float_equal(want, 0.92792, 1e-4);
}

/* The efficiency ratios get the same standard error as the goodput
 * ones: same goodput (1.05x, steady: its bound is the ratio), bytes per
 * CPU-second 1.08-1.19x. */
static void test_efficiency_bound_counts_shared_turns(void **state)
{
	static const double cpu_s[] = { 0.90, 0.95, 0.88, 0.97, 0.91, 0.93 };
	struct caad_trial_params p = params();
	struct caad_trial_sample s[12];
	double r[6], dist, mean = 0;
	struct caad_trial_result res;

	for (unsigned i = 0; i < 6; i++) {
		s[2 * i] = sample(i, 0, 10, 1.0);
		s[2 * i + 1] = sample(i, 1, 10.5, cpu_s[i]);
		r[i] = 1.05 / cpu_s[i];
		mean += log(r[i]) / 6;
	}
	assert_int_equal(caad_trial_decide(&p, s, 12, 2, &res), 0);
	assert_int_equal(res.winner, 1);
	assert_false(res.by_efficiency);
	assert_float_equal(res.scores[1].goodput_low, 1.05, 1e-6);
	assert_float_equal(res.scores[1].efficiency_low, 1.09859, 1e-4);
	textbook_low(r, 6, caad_student_t_quantile(0.95, 5), &dist);
	assert_float_equal((mean - log(res.scores[1].efficiency_low)) / dist, 1.18511, 1e-4);
}

/* Three candidates in the daemon's rotation: two of an alternative's
 * turns may fall between the same two prior turns, which the standard
 * error counts (1.1760 times the textbook one here, for both). */
static void test_three_candidates_bounds(void **state)
{
	static const double g[3][6] = { { 10, 10.4, 9.6, 10.2, 9.9, 10.1 },
		                        { 11.0, 10.6, 11.5, 10.8, 11.2, 10.9 },
		                        { 9.0, 9.5, 9.2, 9.8, 9.1, 9.4 } };
	struct caad_trial t = { .n_cands = 3 };
	struct caad_trial_params p = params();
	struct caad_trial_sample s[18];
	unsigned next[3] = { 0 };
	struct caad_trial_result res;

	for (unsigned turn = 0; turn < 18; turn++) {
		unsigned c = caad_trial_turn_cand(&t, turn);

		s[turn] = sample(turn / 3, c, g[c][next[c]++], 1.0);
	}
	assert_int_equal(caad_trial_decide(&p, s, 18, 3, &res), 0);
	assert_int_equal(res.scores[1].pairs, 6);
	assert_int_equal(res.scores[2].pairs, 6);
	assert_float_equal(res.scores[1].goodput_low, 1.06801, 1e-4);
	assert_float_equal(res.scores[2].goodput_low, 0.90080, 1e-4);
	assert_int_equal(res.winner, 1);
}

/* decide 4 rounds of the prior (10 Gbit/s per CPU-second) against an
 * alternative at ALT_GBPS over ALT_CPU_S, with EFF_LOSS_PCT */
static unsigned decide_at_cost(double alt_gbps, double alt_cpu_s, unsigned eff_loss_pct, struct caad_trial_result *res)
{
	struct caad_trial_params p = params();
	struct caad_trial_sample s[8];

	p.eff_loss_pct = eff_loss_pct;
	for (unsigned r = 0; r < 4; r++) {
		s[2 * r] = sample(r, 0, 10, 1.0);
		s[2 * r + 1] = sample(r, 1, alt_gbps, alt_cpu_s);
	}
	assert_int_equal(caad_trial_decide(&p, s, 8, 2, res), 0);
	return res->winner;
}

/* A goodput win may cost up to EfficiencyLossPercent= of the prior's
 * bytes per CPU-second, and not a bit more; MarginPercent= is not that
 * bound. */
static void test_goodput_win_at_efficiency_loss(void **state)
{
	struct caad_trial_result res;
	struct caad_trial_params def;

	caad_trial_params_init(&def);
	assert_int_equal(def.eff_loss_pct, 20);

	/* 6% faster, 18.5% less efficient */
	assert_int_equal(decide_at_cost(10.6, 1.3, 20, &res), 1);
	assert_false(res.by_efficiency);
	assert_true(res.scores[1].efficiency_ratio > 0.81 && res.scores[1].efficiency_ratio < 0.82);
	assert_int_equal(decide_at_cost(10.6, 1.3, 18, &res), 0);
	assert_non_null(strstr(res.reason, "the prior stands"));
	assert_non_null(strstr(res.reason, "bytes per CPU-second 0.815x, below the 0.82x that EfficiencyLossPercent=18"));

	/* 1% less efficient: more than none, less than MarginPercent= */
	assert_int_equal(decide_at_cost(10.6, 1.0707, 0, &res), 0);
	assert_int_equal(decide_at_cost(10.6, 1.0707, 1, &res), 1);
	/* no cost at all passes the strictest bound */
	assert_int_equal(decide_at_cost(10.6, 1.05, 0, &res), 1);
	/* 100: the cost is not weighed */
	assert_int_equal(decide_at_cost(10.6, 5.3, 100, &res), 1);
	assert_int_equal(decide_at_cost(10.6, 5.3, 79, &res), 0);
}

/* One turn whose CPU time was not readable does not lift the bound on a
 * goodput win's cost: the efficiency ratio is the median of the pairs
 * that have one. A win on efficiency needs them all. */
static void test_efficiency_of_some_pairs(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_sample s[8];
	struct caad_trial_result res;

	/* 6% faster at twice the CPU per byte; round 2's CPU time unknown */
	for (unsigned r = 0; r < 4; r++) {
		s[2 * r] = sample(r, 0, 10, 1.0);
		s[2 * r + 1] = sample(r, 1, 10.6, r == 2 ? 0 : 2.12);
	}
	assert_int_equal(caad_trial_decide(&p, s, 8, 2, &res), 0);
	assert_int_equal(res.scores[1].pairs, 4);
	assert_int_equal(res.scores[1].efficiency_pairs, 3);
	assert_float_equal(res.scores[1].efficiency_ratio, 0.5, 0.001);
	assert_int_equal(res.winner, 0);
	assert_non_null(strstr(res.reason, "EfficiencyLossPercent=20"));

	/* as cheap per byte in the turns that tell: the goodput win stands,
	 * and says in how many turns its cost was known */
	s[1] = sample(0, 1, 10.6, 1.06);
	s[3] = sample(1, 1, 10.6, 1.06);
	s[7] = sample(3, 1, 10.6, 1.06);
	assert_int_equal(caad_trial_decide(&p, s, 8, 2, &res), 0);
	assert_int_equal(res.winner, 1);
	assert_false(res.by_efficiency);
	assert_non_null(strstr(res.reason, "known in 3 of them"));

	/* same goodput, 20% cheaper in 3 of 4 turns: not an efficiency win */
	for (unsigned r = 0; r < 4; r++)
		s[2 * r + 1] = sample(r, 1, 10.01, r == 2 ? 0 : 0.8);
	assert_int_equal(caad_trial_decide(&p, s, 8, 2, &res), 0);
	assert_float_equal(res.scores[1].efficiency_ratio, 1.25, 0.02);
	assert_int_equal(res.winner, 0);
	/* with the fourth turn's CPU time it is */
	s[5] = sample(2, 1, 10.01, 0.8);
	assert_int_equal(caad_trial_decide(&p, s, 8, 2, &res), 0);
	assert_int_equal(res.winner, 1);
	assert_true(res.by_efficiency);
}

/* Same goodput, clearly cheaper: an efficiency win. */
static void test_efficiency_win(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_sample s[8];
	struct caad_trial_result res;

	for (unsigned r = 0; r < 4; r++) {
		s[2 * r] = sample(r, 0, 10, 1.2);
		s[2 * r + 1] = sample(r, 1, 10.01, 1.0);
	}
	assert_int_equal(caad_trial_decide(&p, s, 8, 2, &res), 0);
	assert_int_equal(res.winner, 1);
	assert_true(res.by_efficiency);
	assert_true(res.scores[1].efficiency_ratio > 1.15);
}

/* Of two winners, the faster one; one round only: no verdict against the prior. */
static void test_three_candidates_and_too_few_rounds(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_sample s[12];
	struct caad_trial_result res;

	for (unsigned r = 0; r < 4; r++) {
		s[3 * r] = sample(r, 0, 10, 1);
		s[3 * r + 1] = sample(r, 1, 10.5, 1);
		s[3 * r + 2] = sample(r, 2, 11, 1);
	}
	assert_int_equal(caad_trial_decide(&p, s, 12, 3, &res), 0);
	assert_int_equal(res.winner, 2);

	assert_int_equal(caad_trial_decide(&p, s, 3, 3, &res), 0);
	assert_int_equal(res.winner, 0);
	assert_non_null(strstr(res.reason, "too few"));
	assert_int_equal(caad_trial_decide(&p, s, 3, 5, &res), -EINVAL);
}

/*
 * Two alternatives that both beat the prior, their goodput within the
 * margin of each other: a tie, which bytes per CPU-second decide (and the
 * reason names the other); beyond the margin, the higher goodput wins.
 */
static void test_tied_alternatives_by_efficiency(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_sample s[18];
	struct caad_trial_result res;

	for (unsigned r = 0; r < 6; r++) {
		s[3 * r] = sample(r, 0, 10, 1);
		s[3 * r + 1] = sample(r, 1, 11.1, 1.2); /* 1.11x at 0.925x bytes per CPU-second */
		s[3 * r + 2] = sample(r, 2, 11.0, 1.0); /* 1.10x at 1.10x */
	}
	assert_int_equal(caad_trial_decide(&p, s, 18, 3, &res), 0);
	assert_int_equal(res.winner, 2);
	assert_false(res.by_efficiency);
	assert_non_null(strstr(res.reason, "candidate 2 won"));
	assert_non_null(strstr(res.reason, "candidate 1 won too, as fast within 3% (1.110x) at 0.925x"));

	/* 1.15x against 1.10x is beyond the margin: goodput decides */
	for (unsigned r = 0; r < 6; r++)
		s[3 * r + 1] = sample(r, 1, 11.5, 1.2);
	assert_int_equal(caad_trial_decide(&p, s, 18, 3, &res), 0);
	assert_int_equal(res.winner, 1);
	assert_null(strstr(res.reason, "won too"));

	/* the order of the candidates does not matter */
	for (unsigned r = 0; r < 6; r++) {
		s[3 * r + 1] = sample(r, 1, 11.0, 1.0);
		s[3 * r + 2] = sample(r, 2, 11.1, 1.2);
	}
	assert_int_equal(caad_trial_decide(&p, s, 18, 3, &res), 0);
	assert_int_equal(res.winner, 1);
	assert_non_null(strstr(res.reason, "candidate 2 won too"));
}

/*
 * Ties are measured against the fastest alternative, not chained: 1.13x
 * ties 1.16x and 1.105x ties 1.13x, but 1.105x is more than the margin
 * below 1.16x. The most efficient of those within the margin of the
 * fastest wins, in whatever order the candidates come.
 */
static void test_tied_alternatives_not_chained(void **state)
{
	static const double fig[3][2] = { { 11.6, 1.16 }, { 11.3, 1.0273 }, { 11.05, 0.9208 } };
	struct caad_trial_params p = params();
	struct caad_trial_sample s[24];
	struct caad_trial_result res;

	for (unsigned order = 0; order < 2; order++) {
		for (unsigned r = 0; r < 6; r++) {
			s[4 * r] = sample(r, 0, 10, 1);
			for (unsigned c = 0; c < 3; c++) {
				const double *f = fig[order ? 2 - c : c];

				s[4 * r + 1 + c] = sample(r, 1 + c, f[0], f[1]);
			}
		}
		assert_int_equal(caad_trial_decide(&p, s, 24, 4, &res), 0);
		assert_int_equal(res.winner, 2); /* 1.13x at 1.10x bytes per CPU-second */
		assert_float_equal(res.scores[res.winner].goodput_ratio, 1.13, 0.001);
		assert_false(res.by_efficiency);
		assert_non_null(strstr(res.reason, order ? "candidate 3 won too" : "candidate 1 won too"));
		assert_non_null(strstr(res.reason, "(1.160x)"));
	}
}

/* ---- candidates and verdicts' placements --------------------------------- */

/* One package, one L3, four cores of two PUs: core k holds CPUs 2k, 2k+1. */
static struct caad_topology *four_cores(void)
{
	struct caad_topology *t = NULL;

	assert_int_equal(caad_topology_load_synthetic("package:1 l3:1 core:4 pu:2", &t), 0);
	assert_int_equal(t->cpus[2].core, t->cpus[3].core);
	assert_int_not_equal(t->cpus[2].core, t->cpus[4].core);
	return t;
}

/*
 * The consumer's own CPU and its sibling are candidates only where caad
 * may steer to them: a reader on an isolated (or offline, or disallowed)
 * CPU would have its same-core turn dropped by the planner, and every
 * trial abort at that turn.
 */
static void test_candidates(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = four_cores();
	struct caad_trial_cand c[CAAD_TRIAL_MAX_CANDS];
	struct caad_cpumask banned = {};

	(void)state;
	assert_int_equal(caad_trial_candidates(t, &banned, 2, 4, true, c), 4);
	assert_int_equal(c[0].cpu, 4);
	assert_int_equal(c[0].relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(c[1].cpu, 2);
	assert_int_equal(c[1].relation, CAAD_RELATION_SAME_CORE);
	assert_int_equal(c[2].cpu, 3);
	assert_int_equal(c[2].relation, CAAD_RELATION_SMT_SIBLING);
	assert_int_equal(c[3].cpu, CAAD_OVERRIDE_HOST);
	assert_int_equal(c[3].relation, CAAD_RELATION_HOST_STEERING);
	assert_int_equal(caad_trial_candidates(t, &banned, 2, 4, false, c), 3);

	/* the sibling as the prior (no free peer core): not twice */
	assert_int_equal(caad_trial_candidates(t, &banned, 2, 3, false, c), 2);
	assert_int_equal(c[0].relation, CAAD_RELATION_SMT_SIBLING);
	assert_int_equal(c[1].relation, CAAD_RELATION_SAME_CORE);

	/* the reader's CPU isolated: no same-core turn */
	caad_cpumask_clear(&t->usable, 2);
	assert_int_equal(caad_trial_candidates(t, &banned, 2, 4, true, c), 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_not_equal(c[i].relation, CAAD_RELATION_SAME_CORE);
	assert_int_equal(caad_trial_cpu_for_relation(t, &banned, 2, CAAD_RELATION_SAME_CORE), -1);
	caad_cpumask_set(&t->usable, 2);

	/* banned: the reader's CPU, then its sibling */
	caad_cpumask_set(&banned, 2);
	assert_int_equal(caad_trial_candidates(t, &banned, 2, 4, false, c), 2);
	assert_int_equal(c[1].relation, CAAD_RELATION_SMT_SIBLING);
	caad_cpumask_set(&banned, 3);
	assert_int_equal(caad_trial_candidates(t, &banned, 2, 4, false, c), 1);
	/* a CPU the topology does not know relates to nothing */
	assert_int_equal(caad_trial_cpu_for_relation(t, &banned, 99, CAAD_RELATION_SAME_CORE), -1);
	assert_int_equal(caad_trial_cpu_for_relation(t, &banned, -1, CAAD_RELATION_SMT_SIBLING), -1);
}

/*
 * A verdict's placement for a later flow: where the prior stood, the
 * rules place it, even where that prior was an SMT sibling (the rules
 * chose it then for want of a free peer core, and may choose a peer now,
 * or AllowSMTSibling=no may rule the sibling out since).
 */
static void test_verdict_cpu(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = four_cores();
	struct caad_verdict v = { .relation = CAAD_RELATION_SMT_SIBLING, .kept_prior = true };
	struct caad_cpumask banned = {};

	(void)state;
	assert_int_equal(caad_trial_verdict_cpu(&v, t, &banned, 2), CAAD_TRIAL_RULES);
	v.kept_prior = false; /* the sibling won */
	assert_int_equal(caad_trial_verdict_cpu(&v, t, &banned, 2), 3);
	assert_int_equal(caad_trial_verdict_cpu(&v, t, &banned, 5), 4);
	caad_cpumask_set(&banned, 3);
	assert_int_equal(caad_trial_verdict_cpu(&v, t, &banned, 2), CAAD_TRIAL_RULES);
	v.relation = CAAD_RELATION_SAME_CORE;
	assert_int_equal(caad_trial_verdict_cpu(&v, t, &banned, 2), 2);
	caad_cpumask_clear(&t->usable, 2);
	assert_int_equal(caad_trial_verdict_cpu(&v, t, &banned, 2), CAAD_TRIAL_RULES);
	v.relation = CAAD_RELATION_HOST_STEERING;
	assert_int_equal(caad_trial_verdict_cpu(&v, t, &banned, 2), CAAD_OVERRIDE_HOST);
	v.relation = CAAD_RELATION_PEER_CORE_SAME_LLC;
	assert_int_equal(caad_trial_verdict_cpu(&v, t, &banned, 2), CAAD_TRIAL_RULES);
}

/*
 * A NAPI kthread's time counts from when the trial first reads it: one
 * that shows up mid-trial does not put its whole life into that turn, a
 * failed read neither drops the counter nor puts its gap into the next
 * turn, and another kthread starts from its own first read.
 */
static void test_kthread_time(void **state)
{
	struct caad_trial_kthread k = {};

	(void)state;
	assert_int_equal(caad_trial_kthread_ns(&k, 0, 0), 0);
	assert_int_equal(caad_trial_kthread_ns(&k, 77, 5000000000), 0); /* 5 s before the trial saw it */
	assert_int_equal(caad_trial_kthread_ns(&k, 77, 5000000300), 300);
	assert_int_equal(caad_trial_kthread_ns(&k, 77, 0), 300);          /* not read */
	assert_int_equal(caad_trial_kthread_ns(&k, 77, 5000009000), 300); /* counted again from here */
	assert_int_equal(caad_trial_kthread_ns(&k, 77, 5000009100), 400);
	assert_int_equal(caad_trial_kthread_ns(&k, 78, 9000000000), 400); /* another kthread */
	assert_int_equal(caad_trial_kthread_ns(&k, 78, 9000000050), 450);
	assert_int_equal(caad_trial_kthread_ns(&k, 0, 0), 450);           /* none now */
	assert_int_equal(caad_trial_kthread_ns(&k, 78, 9000000080), 450);
	assert_int_equal(caad_trial_kthread_ns(&k, 78, 100), 450);        /* a new kthread of that pid */
	assert_int_equal(caad_trial_kthread_ns(&k, 78, 120), 470);
}

/* Pinned: one usable CPU in its affinity; or, with none, one present CPU
 * (a reader pinned to an isolated CPU is not free to move). */
static void test_reader_unpinned(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = four_cores();
	struct caad_cpumask m;

	/* CPUs 6-7 not usable (isolated, say) */
	caad_cpumask_clear(&t->usable, 6);
	caad_cpumask_clear(&t->usable, 7);
	assert_int_equal(caad_cpumask_parse_list("3", &m), 0);
	assert_false(caad_trial_reader_unpinned(t, &m));
	assert_int_equal(caad_cpumask_parse_list("0-7", &m), 0);
	assert_true(caad_trial_reader_unpinned(t, &m));
	assert_int_equal(caad_cpumask_parse_list("6", &m), 0);
	assert_false(caad_trial_reader_unpinned(t, &m));
	assert_int_equal(caad_cpumask_parse_list("6-7", &m), 0);
	assert_true(caad_trial_reader_unpinned(t, &m));
	/* one usable CPU and an isolated one: pinned, as far as the CPUs caad uses go */
	assert_int_equal(caad_cpumask_parse_list("5-6", &m), 0);
	assert_false(caad_trial_reader_unpinned(t, &m));
}

/* The topology's fingerprint shows a short usable list as it is, and
 * tells apart two long ones of as many CPUs. */
static void test_topology_fingerprint(void **state)
{
	_cleanup_(caad_topology_freep) struct caad_topology *small = four_cores(), *big = NULL;
	char a[128], b[128];

	caad_topology_fingerprint(small, a, sizeof(a));
	assert_non_null(strstr(a, " usable=0-7"));

	assert_int_equal(caad_topology_load_synthetic("package:2 l3:1 core:32 pu:2", &big), 0);
	assert_int_equal(caad_cpumask_count(&big->usable), 128);
	for (unsigned c = 0; c < 128; c += 2)
		caad_cpumask_clear(&big->usable, c);
	caad_topology_fingerprint(big, a, sizeof(a));
	for (unsigned c = 0; c < 128; c++)
		c % 2 ? caad_cpumask_clear(&big->usable, c) : caad_cpumask_set(&big->usable, c);
	caad_topology_fingerprint(big, b, sizeof(b));
	assert_non_null(strstr(a, " usable=64#"));
	assert_non_null(strstr(b, " usable=64#"));
	assert_string_not_equal(a, b);
}

/*
 * Machines with as many CPUs, cores, LLCs, packages and NUMA nodes, the
 * same CPUs usable, but CPUs placed otherwise (SMT siblings n and n+1 or
 * n and n+4, an L3 over CPUs 0-1 or 0 and 2, NUMA nodes swapped) have
 * other fingerprints; the same machine read twice has the same one.
 */
static void test_topology_fingerprint_places(void **state)
{
	static const char *const pairs[][2] = {
		{ "package:1 l3:1 core:4 pu:2", "package:1 l3:1 core:4 pu:2(indexes=0,4,1,5,2,6,3,7)" },
		{ "package:1 l3:2 core:2 pu:1", "package:1 l3:2 core:2 pu:1(indexes=0,2,1,3)" },
		{ "package:2 numa:1 core:2 pu:1", "package:2 numa:1(indexes=1,0) core:2 pu:1" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++) {
		_cleanup_(caad_topology_freep) struct caad_topology *a = NULL, *b = NULL, *again = NULL;
		char fa[128], fb[128], fagain[128];

		assert_int_equal(caad_topology_load_synthetic(pairs[i][0], &a), 0);
		assert_int_equal(caad_topology_load_synthetic(pairs[i][1], &b), 0);
		assert_int_equal(caad_topology_load_synthetic(pairs[i][0], &again), 0);
		caad_topology_fingerprint(a, fa, sizeof(fa));
		caad_topology_fingerprint(b, fb, sizeof(fb));
		caad_topology_fingerprint(again, fagain, sizeof(fagain));
		/* the counts and usable CPUs alike, the places not */
		const char *pa = strstr(fa, " places="), *pb = strstr(fb, " places=");
		assert_non_null(pa);
		assert_non_null(pb);
		assert_int_equal(pa - fa, pb - fb);
		assert_memory_equal(fa, fb, (size_t)(pa - fa));
		assert_string_not_equal(fa, fb);
		assert_string_equal(fa, fagain);
	}
}

/* ---- the schedule and the end of a trial -------------------------------- */

static const struct caad_trial_cand cands2[] = { { 0, CAAD_RELATION_PEER_CORE_SAME_LLC },
	                                          { 1, CAAD_RELATION_SAME_CORE } };

/* Feed a trial scans every 250 ms where candidate c reaches rate[c] Gbit/s. */
static unsigned run(struct caad_trial *t, uint64_t *now, struct caad_trial_counters *c, const double *gbps,
                    unsigned max_steps)
{
	unsigned steps = 0, cand = caad_trial_turn_cand(t, 0);

	while (t->state == CAAD_TRIAL_RUNNING && steps < max_steps) {
		*now += 250 * NSEC_PER_MSEC;
		c->bytes += (uint64_t)(gbps[cand] * GBIT / 4);
		c->cpu_ns += 250 * NSEC_PER_MSEC;
		cand = caad_trial_step(t, *now, c);
		steps++;
	}
	return steps;
}

static void test_schedule_interleaves(void **state)
{
	static const struct caad_trial_cand cands3[] = { { 0, CAAD_RELATION_PEER_CORE_SAME_LLC },
		                                          { 1, CAAD_RELATION_SAME_CORE },
		                                          { 2, CAAD_RELATION_SMT_SIBLING } };
	struct caad_trial_params p = params();
	struct caad_trial t;

	p.rounds = 4;
	for (unsigned k = 2; k <= 3; k++) {
		unsigned prev = 0; /* the flow starts on the prior */

		assert_int_equal(caad_trial_start(&t, 1, 42, &p, k == 2 ? cands2 : cands3, k, 0), 0);
		for (unsigned r = 0; r < p.rounds; r++) {
			unsigned seen = 0;

			for (unsigned i = 0; i < k; i++) {
				unsigned c = caad_trial_turn_cand(&t, r * k + i);

				assert_true(c < k);
				/* every turn is a move, the first one too */
				assert_int_not_equal(c, prev);
				seen |= 1u << c;
				prev = c;
			}
			/* each round has each candidate once */
			assert_int_equal(seen, (1u << k) - 1);
		}
		/* with three, each goes first equally often (rotation) */
		if (k == 3)
			for (unsigned r = 0; r < 3; r++)
				assert_int_equal(caad_trial_turn_cand(&t, r * 3), (1 + r) % 3);
		caad_trial_done(&t);
	}

	/* bad parameters */
	p.settle_ms = p.turn_ms;
	assert_int_equal(caad_trial_start(&t, 1, 42, &p, cands2, 2, 0), -EINVAL);
	p = params();
	assert_int_equal(caad_trial_start(&t, 1, 42, &p, cands2, 1, 0), -EINVAL);
	p.eff_loss_pct = 101;
	assert_int_equal(caad_trial_start(&t, 1, 42, &p, cands2, 2, 0), -EINVAL);
	p = params();
	p.confidence_pct = 100;
	assert_int_equal(caad_trial_start(&t, 1, 42, &p, cands2, 2, 0), -EINVAL);
}

/*
 * A flow whose goodput is 12% higher in the first seconds after a move
 * (what turns read on a 2-vCPU VM with caad running) and 8% higher on the
 * alternative: were a turn ever to continue the one before, the rounds
 * in which it does would show the alternative behind and hide the win.
 */
static void test_every_turn_after_a_move(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_counters c = {};
	struct caad_trial t;
	uint64_t now = 0;
	unsigned cand, prev = 0, steps = 0, since_move = 0;

	p.rounds = 6;
	p.turn_ms = 1000;
	p.settle_ms = 250;
	assert_int_equal(caad_trial_start(&t, 1, 42, &p, cands2, 2, now), 0);
	cand = caad_trial_turn_cand(&t, 0);
	while (t.state == CAAD_TRIAL_RUNNING && steps++ < 1000) {
		double gbps = (cand ? 10.8 : 10) * (since_move < 4 ? 1.12 : 1.0);

		now += 250 * NSEC_PER_MSEC;
		c.bytes += (uint64_t)(gbps * GBIT / 4);
		c.cpu_ns += 250 * NSEC_PER_MSEC;
		since_move++;
		cand = caad_trial_step(&t, now, &c);
		if (cand != prev)
			since_move = 0;
		prev = cand;
	}
	assert_int_equal(t.state, CAAD_TRIAL_DONE);
	assert_int_equal(t.n_samples, 12);
	assert_int_equal(t.result.winner, 1);
	assert_int_equal(t.result.scores[1].goodput_wins, 6);
	assert_float_equal(t.result.scores[1].goodput_ratio, 1.08, 0.005);
	caad_trial_done(&t);
}

/* Equal placements on a flow that slows 3% a turn: the alternative's
 * turns come first in each round, but it is compared with the prior's
 * turns on both sides, so the drift wins it nothing. */
static void test_drift_cancels(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_sample s[12];
	struct caad_trial_result res;

	for (unsigned i = 0; i < 12; i++)
		s[i] = sample(i / 2, (i + 1) % 2, 20 * (1 - 0.03 * i), 1.0);
	assert_int_equal(caad_trial_decide(&p, s, 12, 2, &res), 0);
	assert_int_equal(res.winner, 0);
	assert_int_equal(res.scores[1].pairs, 6);
	assert_float_equal(res.scores[1].goodput_ratio, 1.0, 0.001);
	assert_int_equal(res.scores[0].pairs, 6);
}

static void test_trial_runs_to_verdict(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_counters c = {};
	static const double gbps[] = { 10, 12 };
	struct caad_trial t;
	uint64_t now = 1000 * NSEC_PER_MSEC;
	unsigned steps;

	p.rounds = 3;
	p.turn_ms = 1000;
	p.settle_ms = 250;
	assert_int_equal(caad_trial_start(&t, 7, 42, &p, cands2, 2, now), 0);
	steps = run(&t, &now, &c, gbps, 1000);
	assert_int_equal(t.state, CAAD_TRIAL_DONE);
	assert_int_equal(t.n_samples, 6);
	/* six turns of four scans */
	assert_int_equal(steps, 24);
	assert_int_equal(t.result.winner, 1);
	/* each measured part is the turn less its settle time */
	for (size_t i = 0; i < t.n_samples; i++) {
		assert_int_equal(t.samples[i].ns, 750 * NSEC_PER_MSEC);
		assert_float_equal(caad_trial_sample_goodput_bps(&t.samples[i]) / 1e9, gbps[t.samples[i].cand], 0.01);
	}
	/* ended: steps change nothing */
	assert_int_equal(caad_trial_step(&t, now + NSEC_PER_MSEC, &c), 0);
	assert_int_equal(t.n_samples, 6);
	caad_trial_done(&t);
}

/* A counter not readable at either end of a turn gives that turn no
 * delta of it, not the whole count (unknown at the start) or 0 by chance. */
static void test_unknown_counters(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_counters c = { .bytes = 0, .cpu_ns = 5000 * NSEC_PER_SEC, .retrans = 1000000,
		                         .steal_ns = 7 * NSEC_PER_SEC, .total_ns = 100 * NSEC_PER_SEC };
	struct caad_trial t;
	uint64_t now = 0;

	p.rounds = 2;
	p.turn_ms = 1000;
	p.settle_ms = 0;
	assert_int_equal(caad_trial_start(&t, 1, 42, &p, cands2, 2, now), 0);
	/* turn 0 starts: retransmits and CPU time unknown (read as 0) */
	struct caad_trial_counters start = c;
	start.retrans = 0;
	start.cpu_ns = 0;
	start.unknown = CAAD_TRIAL_UNKNOWN_RETRANS | CAAD_TRIAL_UNKNOWN_CPU;
	(void)caad_trial_step(&t, now, &start);
	/* it ends with them readable again, steal not */
	now += 1000 * NSEC_PER_MSEC;
	c.bytes += GBIT;
	c.cpu_ns += NSEC_PER_SEC / 2;
	c.retrans += 3;
	c.steal_ns = 0;
	c.total_ns = 0;
	c.unknown = CAAD_TRIAL_UNKNOWN_STEAL;
	(void)caad_trial_step(&t, now, &c);
	assert_int_equal(t.n_samples, 1);
	assert_int_equal(t.samples[0].d.bytes, GBIT);
	assert_int_equal(t.samples[0].d.retrans, 0);
	assert_int_equal(t.samples[0].d.cpu_ns, 0);
	assert_int_equal(t.samples[0].d.total_ns, 0);
	assert_int_equal(t.samples[0].d.unknown,
	                 CAAD_TRIAL_UNKNOWN_RETRANS | CAAD_TRIAL_UNKNOWN_CPU | CAAD_TRIAL_UNKNOWN_STEAL);
	assert_true(caad_trial_sample_efficiency(&t.samples[0]) == 0);
	/* the next turn, all known at both ends: real deltas */
	now += 1000 * NSEC_PER_MSEC;
	c.bytes += GBIT;
	c.cpu_ns += NSEC_PER_SEC / 4;
	c.retrans += 5;
	c.unknown = 0;
	c.steal_ns = 8 * NSEC_PER_SEC;
	c.total_ns = 110 * NSEC_PER_SEC;
	(void)caad_trial_step(&t, now, &c); /* its start was the end above: steal unknown there */
	now += 1000 * NSEC_PER_MSEC;
	c.bytes += GBIT;
	c.cpu_ns += NSEC_PER_SEC / 4;
	c.retrans += 2;
	c.steal_ns += NSEC_PER_SEC;
	c.total_ns += 10 * NSEC_PER_SEC;
	(void)caad_trial_step(&t, now, &c);
	assert_int_equal(t.n_samples, 3);
	assert_int_equal(t.samples[1].d.retrans, 5);
	assert_int_equal(t.samples[1].d.cpu_ns, NSEC_PER_SEC / 4);
	assert_int_equal(t.samples[1].d.unknown, CAAD_TRIAL_UNKNOWN_STEAL);
	assert_int_equal(t.samples[2].d.retrans, 2);
	assert_int_equal(t.samples[2].d.steal_ns, NSEC_PER_SEC);
	assert_int_equal(t.samples[2].d.total_ns, 10 * NSEC_PER_SEC);
	assert_int_equal(t.samples[2].d.unknown, 0);
	caad_trial_done(&t);
}

/* A scan of a trial at now: 1 Gbit/s, the consumer on CPU 40% of the
 * time, the NAPI kthread pid (0: none) 20%, its read failing with fails. */
static void kthread_scan(struct caad_trial *t, struct caad_trial_kthread *k, uint64_t now, uint32_t pid, bool fails)
{
	struct caad_trial_counters c = {
		.bytes = (uint64_t)((double)now / NSEC_PER_SEC * GBIT),
		.cpu_ns = now / 10 * 4,
	};

	caad_trial_kthread_count(k, pid, fails ? 0 : 7 * NSEC_PER_SEC + now / 10 * 2, &c);
	(void)caad_trial_step(t, now, &c);
}

/*
 * A kthread whose time could not be read makes its turn's CPU time
 * unknown, as a failed read of the consumer's does: the time from the read
 * before to the one after is lost, for the turn that ends there, the one
 * that starts there, and one that spans it. Not so for a flow without a
 * kthread (pid 0).
 */
static void test_kthread_read_fails(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_kthread k = {};
	struct caad_trial t;

	(void)state;
	p.rounds = 3;
	p.turn_ms = 1000;
	p.settle_ms = 0;
	assert_int_equal(caad_trial_start(&t, 1, 42, &p, cands2, 2, 0), 0);
	/* scans every 250 ms, turn i from scan 4i to 4i + 4; the kthread
	 * from the end of turn 0, its read failing in the middle of turn 1
	 * and at the end of turn 2 (the start of turn 3) */
	for (unsigned i = 0; i <= 24; i++)
		kthread_scan(&t, &k, i * 250 * NSEC_PER_MSEC, i < 4 ? 0 : 77, i == 6 || i == 12);
	assert_int_equal(t.state, CAAD_TRIAL_DONE);
	assert_int_equal(t.n_samples, 6);
	/* no kthread: the consumer's time alone, known */
	assert_int_equal(t.samples[0].d.unknown, 0);
	assert_int_equal(t.samples[0].d.cpu_ns, 400 * NSEC_PER_MSEC);
	for (unsigned i = 1; i <= 3; i++) {
		assert_int_equal(t.samples[i].d.unknown, CAAD_TRIAL_UNKNOWN_CPU);
		assert_int_equal(t.samples[i].d.cpu_ns, 0);
		assert_true(caad_trial_sample_efficiency(&t.samples[i]) == 0);
	}
	/* read at both ends and between: whole again */
	for (unsigned i = 4; i <= 5; i++) {
		assert_int_equal(t.samples[i].d.unknown, 0);
		assert_int_equal(t.samples[i].d.cpu_ns, 600 * NSEC_PER_MSEC);
	}
	caad_trial_done(&t);

	/* never readable (a drop-in's User= under ProtectProc=invisible): left
	 * out of every turn alike, which stay known, not a gap in each */
	k = (struct caad_trial_kthread){};
	assert_int_equal(caad_trial_start(&t, 2, 42, &p, cands2, 2, 0), 0);
	for (unsigned i = 0; i <= 24; i++)
		kthread_scan(&t, &k, i * 250 * NSEC_PER_MSEC, 77, true);
	assert_int_equal(t.state, CAAD_TRIAL_DONE);
	assert_int_equal(t.n_samples, 6);
	for (unsigned i = 0; i < t.n_samples; i++) {
		assert_int_equal(t.samples[i].d.unknown, 0);
		assert_int_equal(t.samples[i].d.cpu_ns, 400 * NSEC_PER_MSEC);
	}
	caad_trial_done(&t);
}

static void test_flow_ends_mid_trial(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_counters c = {};
	static const double gbps[] = { 10, 12 };
	struct caad_trial t;
	uint64_t now = 0;

	assert_int_equal(caad_trial_start(&t, 1, 42, &p, cands2, 2, now), 0);
	run(&t, &now, &c, gbps, 10);
	assert_int_equal(t.state, CAAD_TRIAL_RUNNING);
	caad_trial_abort(&t, now, "the flow ended");
	assert_int_equal(t.state, CAAD_TRIAL_ABORTED);
	assert_string_equal(t.abort_reason, "the flow ended");
	assert_int_equal(t.end_ns, now);
	/* a second abort keeps the first reason */
	caad_trial_abort(&t, now + 1, "other");
	assert_string_equal(t.abort_reason, "the flow ended");
	caad_trial_done(&t);
}

static void test_rate_collapse_aborts(void **state)
{
	struct caad_trial_params p = params();
	struct caad_trial_counters c = {};
	static const double gbps[] = { 10, 0.2 }; /* on the alternative the flow nearly stops */
	struct caad_trial t;
	uint64_t now = 0;

	p.collapse_bps = 500000000; /* 0.5 Gbit/s */
	p.turn_ms = 1000;
	p.settle_ms = 0;
	assert_int_equal(caad_trial_start(&t, 1, 42, &p, cands2, 2, now), 0);
	run(&t, &now, &c, gbps, 1000);
	assert_int_equal(t.state, CAAD_TRIAL_ABORTED);
	assert_non_null(strstr(t.abort_reason, "collapsed"));
	assert_non_null(strstr(t.abort_reason, "CPU 1"));
	/* it ended in the alternative's first turn, the trial's first */
	assert_int_equal(t.n_samples, 1);
	caad_trial_done(&t);
}

/* ---- verdicts ----------------------------------------------------------- */

static char *tmpfile_path(void)
{
	char *p = strdup("/tmp/caad-test-verdicts.XXXXXX");
	int fd;

	assert_non_null(p);
	fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	unlink(p);
	return p;
}

static struct caad_verdict verdict(const char *iface, const char *comm, enum caad_relation rel, uint64_t when)
{
	struct caad_verdict v = { .relation = rel, .decided_sec = when, .trial = 3, .goodput_ratio = 1.04,
		                  .pairs = 6, .wins = 6 };

	snprintf(v.iface, sizeof(v.iface), "%s", iface);
	snprintf(v.driver, sizeof(v.driver), "mlx5_core");
	snprintf(v.comm, sizeof(v.comm), "%s", comm);
	return v;
}

static void test_verdicts_roundtrip_and_expiry(void **state)
{
	_cleanup_free_ char *path = tmpfile_path();
	struct caad_verdicts vs = {}, back;
	struct caad_verdict v1 = verdict("eth0", "iperf3", CAAD_RELATION_SAME_CORE, 1000);
	struct caad_verdict v2 = verdict("eth0", "gridftp", CAAD_RELATION_PEER_CORE_SAME_LLC, 5000);
	struct caad_verdict v3 = verdict("eth0", "fdt", CAAD_RELATION_HOST_STEERING, 5000);
	size_t dropped;
	char *why = NULL;

	v1.alternative = CAAD_RELATION_SAME_CORE; /* the winner's figures */
	v2.alternative = CAAD_RELATION_SAME_CORE; /* the prior stood: the closest alternative's */
	v2.kept_prior = true;
	v3.alternative = CAAD_RELATION_HOST_STEERING; /* hands off won */

	/* no file: none */
	assert_int_equal(caad_verdicts_load(path, "6.1", "topo", 6000, 0, &back, &dropped, &why), 0);
	assert_int_equal(back.n, 0);

	snprintf(vs.kernel, sizeof(vs.kernel), "6.1");
	snprintf(vs.topology, sizeof(vs.topology), "topo");
	assert_int_equal(caad_verdicts_put(&vs, &v1), 0);
	assert_int_equal(caad_verdicts_put(&vs, &v2), 0);
	v1.wins = 5; /* the same key replaces */
	v1.behind = 1;
	assert_int_equal(caad_verdicts_put(&vs, &v1), 0);
	assert_int_equal(caad_verdicts_put(&vs, &v3), 0);
	assert_int_equal(vs.n, 3);
	/* the same application read by a thread that is not pinned: a verdict
	 * of its own, beside the pinned reader's, not in its place */
	struct caad_verdict v4 = verdict("eth0", "iperf3", CAAD_RELATION_HOST_STEERING, 5000);
	v4.unpinned = true;
	assert_int_equal(caad_verdicts_put(&vs, &v4), 0);
	assert_int_equal(vs.n, 4);
	assert_int_equal(caad_verdicts_save(&vs, path), 0);

	assert_int_equal(caad_verdicts_load(path, "6.1", "topo", 6000, 0, &back, &dropped, &why), 0);
	assert_int_equal(back.n, 4);
	assert_int_equal(dropped, 0);
	const struct caad_verdict *u = caad_verdicts_find(&back, "eth0", "mlx5_core", "iperf3", true, 6000, 0, NULL);
	assert_non_null(u);
	assert_true(u->unpinned);
	assert_int_equal(u->relation, CAAD_RELATION_HOST_STEERING);
	assert_null(caad_verdicts_find(&back, "eth0", "mlx5_core", "gridftp", true, 6000, 0, NULL));
	const struct caad_verdict *f = caad_verdicts_find(&back, "eth0", "mlx5_core", "iperf3", false, 6000, 0, NULL);
	assert_non_null(f);
	assert_int_equal(f->relation, CAAD_RELATION_SAME_CORE);
	assert_int_equal(f->wins, 5);
	assert_int_equal(f->behind, 1);
	assert_int_equal(f->decided_sec, 1000);
	assert_int_equal(f->alternative, CAAD_RELATION_SAME_CORE);
	assert_false(f->kept_prior);
	f = caad_verdicts_find(&back, "eth0", "mlx5_core", "gridftp", false, 6000, 0, NULL);
	assert_non_null(f);
	assert_int_equal(f->relation, CAAD_RELATION_PEER_CORE_SAME_LLC);
	assert_int_equal(f->alternative, CAAD_RELATION_SAME_CORE);
	assert_true(f->kept_prior);
	f = caad_verdicts_find(&back, "eth0", "mlx5_core", "fdt", false, 6000, 0, NULL);
	assert_non_null(f);
	assert_int_equal(f->relation, CAAD_RELATION_HOST_STEERING);
	assert_int_equal(f->alternative, CAAD_RELATION_HOST_STEERING);
	assert_false(f->kept_prior);
	assert_null(caad_verdicts_find(&back, "eth1", "mlx5_core", "iperf3", false, 6000, 0, NULL));
	/* another driver behind the name: dropped */
	assert_null(caad_verdicts_find(&back, "eth0", "ice", "iperf3", false, 6000, 0, NULL));
	assert_int_equal(back.n, 3);
	caad_verdicts_done(&back);

	/* older than the limit */
	assert_int_equal(caad_verdicts_load(path, "6.1", "topo", 6000, 4000, &back, &dropped, &why), 0);
	assert_int_equal(back.n, 3);
	assert_int_equal(dropped, 1);
	assert_string_equal(back.v[0].comm, "gridftp");
	assert_string_equal(back.v[1].comm, "fdt");
	assert_string_equal(back.v[2].comm, "iperf3");
	assert_true(back.v[2].unpinned);
	free(why);
	why = NULL;
	caad_verdicts_done(&back);

	/* another kernel, another topology: all gone, and said why */
	assert_int_equal(caad_verdicts_load(path, "6.2", "topo", 6000, 0, &back, &dropped, &why), 0);
	assert_int_equal(back.n, 0);
	assert_int_equal(dropped, 4);
	assert_non_null(strstr(why, "6.2"));
	free(why);
	why = NULL;
	assert_int_equal(caad_verdicts_load(path, "6.1", "other", 6000, 0, &back, &dropped, &why), 0);
	assert_int_equal(back.n, 0);
	assert_int_equal(dropped, 4);
	free(why);
	caad_verdicts_done(&vs);
	unlink(path);
}

/*
 * A verdict the store does not hold is unsaved until a write of the store
 * succeeds, not after one that failed: a load of the store (a reload, a
 * topology read again) adds those to what it reads, and only those, so
 * that one decided when the store could not be written is not lost there.
 */
static void test_verdicts_unsaved(void **state)
{
	_cleanup_free_ char *path = tmpfile_path(), *dir = tmpfile_path();
	struct caad_verdicts vs = {}, back;
	struct caad_verdict v1 = verdict("eth0", "iperf3", CAAD_RELATION_SAME_CORE, 1000);
	struct caad_verdict v2 = verdict("eth0", "gridftp", CAAD_RELATION_PEER_CORE_SAME_LLC, 1000);

	(void)state;
	snprintf(vs.kernel, sizeof(vs.kernel), "k");
	snprintf(vs.topology, sizeof(vs.topology), "t");
	assert_int_equal(caad_verdicts_put(&vs, &v1), 0);
	assert_true(vs.v[0].unsaved);
	assert_int_equal(caad_verdicts_save(&vs, path), 0);
	assert_false(vs.v[0].unsaved);

	/* the next one cannot be written (a directory in the file's place) */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(caad_verdicts_put(&vs, &v2), 0);
	assert_true(caad_verdicts_save(&vs, dir) < 0);
	assert_false(vs.v[0].unsaved);
	assert_true(vs.v[1].unsaved);

	/* the store read again holds the first, as written; the second is
	 * what the load must add */
	assert_int_equal(caad_verdicts_load(path, "k", "t", 1000, 0, &back, NULL, NULL), 0);
	assert_int_equal(back.n, 1);
	assert_false(back.v[0].unsaved);
	assert_int_equal(caad_verdicts_keep_unsaved(&vs), 1);
	assert_string_equal(vs.v[0].comm, "gridftp");
	assert_int_equal(caad_verdicts_put(&back, &vs.v[0]), 0);
	assert_int_equal(back.n, 2);
	assert_int_equal(caad_verdicts_save(&back, path), 0);
	assert_int_equal(caad_verdicts_keep_unsaved(&back), 0);
	caad_verdicts_done(&back);
	caad_verdicts_done(&vs);

	/* a verdict that replaces a stored one is unsaved again */
	assert_int_equal(caad_verdicts_load(path, "k", "t", 1000, 0, &back, NULL, NULL), 0);
	assert_int_equal(back.n, 2);
	v1.relation = CAAD_RELATION_SMT_SIBLING;
	assert_int_equal(caad_verdicts_put(&back, &v1), 0);
	assert_int_equal(caad_verdicts_keep_unsaved(&back), 1);
	assert_int_equal(back.v[0].relation, CAAD_RELATION_SMT_SIBLING);
	caad_verdicts_done(&back);
	unlink(path);
	rmdir(dir);
}

/* A store of an earlier caad, without alternative and kept_prior (or with
 * an alternative this one does not know) and behind: read, those not
 * known. */
static void test_verdicts_without_alternative(void **state)
{
	static const char text[] =
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": ["
		"{\"iface\": \"eth0\", \"comm\": \"a\", \"relation\": \"same-core\", \"decided\": 1, \"wins\": 5},"
		"{\"iface\": \"eth0\", \"comm\": \"b\", \"relation\": \"same-core\", \"decided\": 1, "
		"\"alternative\": \"sideways\", \"kept_prior\": 1}]}";
	_cleanup_free_ char *path = tmpfile_path();
	struct caad_verdicts vs;
	char *why = NULL;

	assert_int_equal(caad_write_file_atomic(path, text, strlen(text), 0600), 0);
	assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), 0);
	assert_null(why);
	assert_int_equal(vs.n, 2);
	for (size_t i = 0; i < vs.n; i++) {
		assert_int_equal(vs.v[i].relation, CAAD_RELATION_SAME_CORE);
		assert_int_equal(vs.v[i].alternative, CAAD_RELATION_UNSTEERED);
		assert_false(vs.v[i].kept_prior); /* 1 is not a JSON boolean */
	}
	assert_int_equal(vs.v[0].wins, 5);
	assert_int_equal(vs.v[0].behind, -1);
	/* without "pinned": decided when a trial ended at its reader's first
	 * move, for a pinned reader */
	assert_false(vs.v[0].unpinned);
	assert_non_null(caad_verdicts_find(&vs, "eth0", "", "a", false, 10, 0, NULL));
	assert_null(caad_verdicts_find(&vs, "eth0", "", "a", true, 10, 0, NULL));

	/* saved again, they still do not say: neither is written */
	assert_int_equal(caad_verdicts_save(&vs, path), 0);
	caad_verdicts_done(&vs);
	assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), 0);
	assert_int_equal(vs.n, 2);
	FILE *f = fopen(path, "re");
	char buf[2048];
	size_t len;
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	fclose(f);
	assert_null(strstr(buf, "alternative"));
	assert_null(strstr(buf, "kept_prior"));
	assert_null(strstr(buf, "behind"));
	caad_verdicts_done(&vs);
	unlink(path);
}

/*
 * A thread names itself with any bytes (prctl(PR_SET_NAME)), and the kernel
 * cuts a long name in the middle of a character; an interface's name may
 * hold any byte too. Each verdict is kept under the names as ListFlows and
 * GetTrials show them ('?' for each byte that is not UTF-8): the file reads
 * back (written raw, "\ufffd" made a 15-byte comm 17), and a later lookup
 * of the same raw names, or of the shown ones, finds it.
 */
static void test_verdicts_names_not_utf8(void **state)
{
	static const struct {
		const char *iface, *driver, *comm, *shown_iface, *shown_comm;
	} names[] = {
		{ "eth0", "mlx5_core", "abcdefghijklmn\xff", "eth0", "abcdefghijklmn?" },
		{ "eth\xff", "mlx5\xfe", "\xe9t\xe9", "eth?", "?t?" },
	};
	_cleanup_free_ char *path = tmpfile_path();

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct caad_verdicts vs = { .kernel = "k", .topology = "t" }, back;
		struct caad_verdict v = verdict(names[i].iface, names[i].comm, CAAD_RELATION_SAME_CORE, 5);
		_cleanup_free_ char *text = NULL;
		char *why = NULL;

		snprintf(v.driver, sizeof(v.driver), "%s", names[i].driver);
		assert_int_equal(caad_verdicts_put(&vs, &v), 0);
		assert_int_equal(caad_verdicts_save(&vs, path), 0);
		caad_verdicts_done(&vs);
		assert_int_equal(caad_read_file(path, &text), 0);
		assert_null(strstr(text, "\\ufffd"));

		assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &back, NULL, &why), 0);
		assert_null(why);
		assert_int_equal(back.n, 1);
		assert_string_equal(back.v[0].iface, names[i].shown_iface);
		assert_string_equal(back.v[0].comm, names[i].shown_comm);
		assert_non_null(caad_verdicts_find(&back, names[i].iface, names[i].driver, names[i].comm, false, 10, 0, NULL));
		assert_non_null(caad_verdicts_find(&back, names[i].shown_iface, names[i].driver, names[i].shown_comm,
		                                   false, 10, 0, NULL));
		/* the same verdict again, by its raw names: in the place of the first */
		assert_int_equal(caad_verdicts_put(&back, &v), 0);
		assert_int_equal(back.n, 1);
		caad_verdicts_done(&back);
	}

	/* a control in a file written by hand: read as shown, found by the raw name */
	static const char escaped[] =
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": ["
		"{\"iface\": \"eth0\", \"comm\": \"a\\u001bb\", \"relation\": \"same-core\", \"decided\": 1}]}";
	struct caad_verdicts back;

	assert_int_equal(caad_write_file_atomic(path, escaped, strlen(escaped), 0600), 0);
	assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &back, NULL, NULL), 0);
	assert_int_equal(back.n, 1);
	assert_string_equal(back.v[0].comm, "a?b");
	assert_non_null(caad_verdicts_find(&back, "eth0", "", "a\x1b" "b", false, 10, 0, NULL));
	caad_verdicts_done(&back);
	unlink(path);
}

/* The store at fifo_path, read: 0 when refused at once as a FIFO (the
 * child's exit status; an open that waits for a writer is killed by the
 * alarm). */
static const char *fifo_path;

static int load_fifo(void)
{
	struct caad_verdicts vs;
	char *why = NULL;
	int r;

	alarm(5);
	r = caad_verdicts_load(fifo_path, "k", "t", 10, 0, &vs, NULL, &why);
	if (r != -EBADMSG || vs.n != 0 || !why || !strstr(why, fifo_path) || !strstr(why, "a FIFO"))
		return 1;
	free(why);
	return 0;
}

/*
 * A store that is a FIFO (a socket, a device) cannot be used, as one that
 * is not JSON (-EBADMSG, the file named): it is not waited on (its open
 * would hold caad's event loop until a writer came, its watchdog kill it,
 * and the next start hang again). A symbolic link to a good store is read;
 * a directory cannot be read (-EISDIR), as before.
 */
static void test_verdicts_not_regular(void **state)
{
	static const char good[] = "{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": []}";
	/* (the child's heap is path alone, fifo_path's: nothing to leak at its _exit) */
	_cleanup_free_ char *path = tmpfile_path(), *target = NULL;
	struct caad_verdicts vs;
	char *why = NULL;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(mkfifo(path, 0600), 0);
	fifo_path = path;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(load_fifo());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status))
		fail_msg("reading a FIFO as the store did not return (killed by signal %d)", WTERMSIG(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(unlink(path), 0);

	/* a link to a good store */
	target = tmpfile_path();
	assert_int_equal(caad_write_file_atomic(target, good, strlen(good), 0600), 0);
	assert_int_equal(caad_verdicts_load(target, "k", "t", 10, 0, &vs, NULL, &why), 0);
	assert_null(why);
	caad_verdicts_done(&vs);
	/* ... is read through the link, as before */
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), 0);
	assert_null(why);
	caad_verdicts_done(&vs);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(target), 0);

	/* a directory cannot be read: not a store to put aside (as before) */
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), -EISDIR);
	assert_null(why);
	assert_int_equal(rmdir(path), 0);
}

static void test_verdicts_bad_file(void **state)
{
	static const char *const bad[] = {
		"not json",
		"[]",
		"{\"version\": 2, \"verdicts\": []}",
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": {}}",
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": [{\"iface\": \"eth0\"}]}",
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": [{\"iface\": \"eth0\", "
		"\"comm\": \"x\", \"relation\": \"sideways\", \"decided\": 1}]}",
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": [{\"iface\": \"eth0\", "
		"\"comm\": \"x\", \"relation\": \"unsteered\", \"decided\": 1}]}",
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": [{\"iface\": \"eth0\", "
		"\"comm\": \"0123456789abcdefg\", \"relation\": \"same-core\", \"decided\": 1}]}",
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": [{\"iface\": \"eth0\", "
		"\"comm\": \"x\", \"relation\": \"same-core\", \"decided\": -5}]}",
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": [{\"iface\": \"eth0\", "
		"\"comm\": \"x\", \"pinned\": \"no\", \"relation\": \"same-core\", \"decided\": 5}]}",
		/* json-c would read these as 1 */
		"{\"version\": true, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": []}",
		"{\"version\": 1.9, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": []}",
		"{\"version\": \"1abc\", \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": []}",
		/* a NUL would cut the name to another one */
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": [{\"iface\": \"eth0\\u0000x\", "
		"\"comm\": \"x\", \"relation\": \"same-core\", \"decided\": 5}]}",
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": [{\"iface\": \"eth0\", "
		"\"comm\": \"ip\\u0000erf3\", \"relation\": \"same-core\", \"decided\": 5}]}",
	};
	_cleanup_free_ char *path = tmpfile_path();

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct caad_verdicts vs;
		char *why = NULL;

		assert_int_equal(caad_write_file_atomic(path, bad[i], strlen(bad[i]), 0600), 0);
		assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), -EBADMSG);
		assert_int_equal(vs.n, 0);
		assert_non_null(why);
		assert_non_null(strstr(why, path)); /* the message names the file */
		free(why);
	}

	/* JSON syntax: its line and column; text after the document too */
	static const struct {
		const char *text, *want;
	} syntax[] = {
		{ "{\"version\": 1,\n \"kernel\": \"k\",\n \"verdicts\": [}\n", ":3:" },
		{ "{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": []}\n{}\n",
		  ":2:1: invalid JSON: " },
		{ "{\"version\": 1, \"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": []}",
		  ":1:16: invalid JSON: a key twice in one object" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(syntax); i++) {
		struct caad_verdicts vs;
		_cleanup_free_ char *want = NULL;
		char *why = NULL;

		assert_int_equal(caad_write_file_atomic(path, syntax[i].text, strlen(syntax[i].text), 0600), 0);
		assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), -EBADMSG);
		assert_int_equal(vs.n, 0);
		assert_true(asprintf(&want, "%s%s", path, syntax[i].want) > 0);
		assert_non_null(why);
		if (!strstr(why, want))
			fail_msg("%s, wanted %s", why, want);
		free(why);
	}

	/* a NUL byte, and the document null (once "invalid JSON: success"):
	 * each said so */
	static const struct {
		const char *text;
		size_t len;
		const char *want;
	} odd[] = {
		{ "{\"version\": 1}\0", 15, ": invalid JSON: a NUL byte" },
		{ "null\n", 5, ": not a JSON object" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(odd); i++) {
		struct caad_verdicts vs;
		_cleanup_free_ char *want = NULL;
		char *why = NULL;

		assert_int_equal(caad_write_file_atomic(path, odd[i].text, odd[i].len, 0600), 0);
		assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), -EBADMSG);
		assert_int_equal(vs.n, 0);
		assert_true(asprintf(&want, "%s%s", path, odd[i].want) > 0);
		if (!why || !strstr(why, want))
			fail_msg("%s, wanted %s", why ?: "(no reason)", want);
		free(why);
	}
	unlink(path);
}

/*
 * A bad entry is named by its place; a figure JSON cannot write back
 * (1e999 reads as infinity) is not known, so the store stays readable
 * once saved again; verdicts dated ahead of the clock are kept, not used.
 */
static void test_verdicts_odd_entries(void **state)
{
	static const char second_bad[] =
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": ["
		"{\"iface\": \"eth0\", \"comm\": \"a\", \"relation\": \"same-core\", \"decided\": 1},"
		"{\"iface\": \"eth0\", \"comm\": \"b\", \"relation\": \"sideways\", \"decided\": 1}]}";
	static const char huge[] =
		"{\"version\": 1, \"kernel\": \"k\", \"topology\": \"t\", \"verdicts\": ["
		"{\"iface\": \"eth0\", \"comm\": \"a\", \"relation\": \"same-core\", \"decided\": 1, "
		"\"goodput_ratio\": 1e999, \"efficiency_ratio\": -1e999},"
		"{\"iface\": \"eth0\", \"comm\": \"b\", \"relation\": \"same-core\", \"decided\": 5000, "
		"\"goodput_ratio\": 1.25}]}";
	_cleanup_free_ char *path = tmpfile_path();
	struct caad_verdicts vs;
	size_t dropped;
	char *why = NULL;

	assert_int_equal(caad_write_file_atomic(path, second_bad, strlen(second_bad), 0600), 0);
	assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), -EBADMSG);
	assert_non_null(why);
	assert_non_null(strstr(why, ": verdicts[1]: \"relation\""));
	free(why);
	why = NULL;

	assert_int_equal(caad_write_file_atomic(path, huge, strlen(huge), 0600), 0);
	assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), 0);
	assert_int_equal(vs.n, 2);
	assert_true(vs.v[0].goodput_ratio == 0 && vs.v[0].efficiency_ratio == 0);
	assert_true(vs.v[1].goodput_ratio == 1.25);
	/* a figure caad holds that JSON cannot say is written as not known */
	vs.v[1].efficiency_ratio = NAN;
	assert_int_equal(caad_verdicts_save(&vs, path), 0);
	caad_verdicts_done(&vs);
	assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 0, &vs, NULL, &why), 0);
	assert_null(why);
	assert_int_equal(vs.n, 2);
	assert_true(vs.v[1].goodput_ratio == 1.25 && vs.v[1].efficiency_ratio == 0);
	caad_verdicts_done(&vs);

	/* at 10 s, with an age limit: one decided at 5000 s is ahead of the
	 * clock (behind, before NTP): kept, and in the file once saved, but
	 * not used until the clock reaches it */
	assert_int_equal(caad_verdicts_load(path, "k", "t", 10, 3600, &vs, &dropped, &why), 0);
	assert_int_equal(vs.n, 2);
	assert_int_equal(dropped, 0);
	assert_null(why);
	assert_int_equal(caad_verdicts_ahead(&vs, 10, 3600), 1);
	/* ... and said to be there: "b" is not to be tried meanwhile */
	bool ahead = false;
	assert_null(caad_verdicts_find(&vs, "eth0", "", "b", false, 10, 3600, &ahead));
	assert_true(ahead);
	assert_non_null(caad_verdicts_find(&vs, "eth0", "", "a", false, 10, 3600, &ahead));
	assert_false(ahead);
	assert_null(caad_verdicts_find(&vs, "eth0", "", "c", false, 10, 3600, &ahead));
	assert_false(ahead);
	assert_int_equal(vs.n, 2);
	/* expired ones go however long nothing looked for them; one ahead
	 * of the clock is kept; no age limit keeps all */
	assert_int_equal(caad_verdicts_expire(&vs, 10, 0), 0);
	assert_int_equal(caad_verdicts_expire(&vs, 10, 3600), 0);
	assert_int_equal(vs.n, 2);
	{
		struct caad_verdicts copy = { .n = vs.n, .v = malloc(vs.n * sizeof(*vs.v)) };

		assert_non_null(copy.v);
		memcpy(copy.v, vs.v, vs.n * sizeof(*vs.v));
		assert_int_equal(caad_verdicts_expire(&copy, 5000, 3600), 1);
		assert_int_equal(copy.n, 1);
		assert_string_equal(copy.v[0].comm, "b");
		caad_verdicts_done(&copy);
		/* two expired side by side, between two kept */
		struct caad_verdict four[4] = { vs.v[1], vs.v[0], vs.v[0], vs.v[1] };
		copy = (struct caad_verdicts){ .n = 4, .v = malloc(sizeof(four)) };
		assert_non_null(copy.v);
		memcpy(copy.v, four, sizeof(four));
		assert_int_equal(caad_verdicts_expire(&copy, 5000, 3600), 2);
		assert_int_equal(copy.n, 2);
		assert_string_equal(copy.v[0].comm, "b");
		assert_string_equal(copy.v[1].comm, "b");
		caad_verdicts_done(&copy);
	}
	assert_int_equal(caad_verdicts_save(&vs, path), 0);
	caad_verdicts_done(&vs);
	assert_int_equal(caad_verdicts_load(path, "k", "t", 5000, 3600, &vs, &dropped, &why), 0);
	assert_int_equal(caad_verdicts_ahead(&vs, 5000, 3600), 0);
	assert_non_null(caad_verdicts_find(&vs, "eth0", "", "b", false, 5000, 3600, NULL));
	/* (the other, decided at 1 s, is older than an hour at 5000 s) */
	assert_int_equal(dropped, 1);
	assert_string_equal(why, "older than 3600 s");
	free(why);
	why = NULL;
	caad_verdicts_done(&vs);
	/* at 7000 s with a limit of 6000 s: one too old (decided at 1), the other kept */
	assert_int_equal(caad_verdicts_load(path, "k", "t", 7000, 6000, &vs, &dropped, &why), 0);
	assert_int_equal(vs.n, 1);
	assert_string_equal(why, "older than 6000 s");
	free(why);
	caad_verdicts_done(&vs);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clear_win),
		cmocka_unit_test(test_clear_loss_keeps_prior),
		cmocka_unit_test(test_tie_keeps_prior),
		cmocka_unit_test(test_noisy_overlap_keeps_prior),
		cmocka_unit_test(test_held_but_noisy),
		cmocka_unit_test(test_ties_within_margin_win),
		cmocka_unit_test(test_losses_beyond_margin_count),
		cmocka_unit_test(test_student_t_quantile),
		cmocka_unit_test(test_shared_prior_turns_widen_the_bound),
		cmocka_unit_test(test_separate_pairs_textbook_bound),
		cmocka_unit_test(test_efficiency_bound_counts_shared_turns),
		cmocka_unit_test(test_three_candidates_bounds),
		cmocka_unit_test(test_gain_within_noise_keeps_prior),
		cmocka_unit_test(test_goodput_win_at_efficiency_loss),
		cmocka_unit_test(test_efficiency_of_some_pairs),
		cmocka_unit_test(test_unknown_counters),
		cmocka_unit_test(test_reader_unpinned),
		cmocka_unit_test(test_topology_fingerprint),
		cmocka_unit_test(test_topology_fingerprint_places),
		cmocka_unit_test(test_efficiency_win),
		cmocka_unit_test(test_three_candidates_and_too_few_rounds),
		cmocka_unit_test(test_tied_alternatives_by_efficiency),
		cmocka_unit_test(test_tied_alternatives_not_chained),
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_verdict_cpu),
		cmocka_unit_test(test_kthread_time),
		cmocka_unit_test(test_kthread_read_fails),
		cmocka_unit_test(test_drift_cancels),
		cmocka_unit_test(test_schedule_interleaves),
		cmocka_unit_test(test_every_turn_after_a_move),
		cmocka_unit_test(test_trial_runs_to_verdict),
		cmocka_unit_test(test_flow_ends_mid_trial),
		cmocka_unit_test(test_rate_collapse_aborts),
		cmocka_unit_test(test_verdicts_roundtrip_and_expiry),
		cmocka_unit_test(test_verdicts_unsaved),
		cmocka_unit_test(test_verdicts_without_alternative),
		cmocka_unit_test(test_verdicts_names_not_utf8),
		cmocka_unit_test(test_verdicts_bad_file),
		cmocka_unit_test(test_verdicts_not_regular),
		cmocka_unit_test(test_verdicts_odd_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
