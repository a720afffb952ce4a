/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Closed-loop trials: the schedule of turns, their measurement, and the
 * decision rule. No I/O, no clock: everything comes in as arguments.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/macro.h"
#include "caad/plan.h"
#include "caad/trial.h"

#define NSEC_PER_MSEC UINT64_C(1000000)

int caad_trial_cpu_for_relation(const struct caad_topology *t, const struct caad_cpumask *banned, int c,
                                enum caad_relation rel)
{
	/* a consumer CPU the topology does not know (an XML of another
	 * host, a CPU come online since) has no relation to anything */
	if (c < 0 || (unsigned)c >= t->n_cpus || !t->cpus[c].present || t->cpus[c].core < 0)
		return -1;
	if (rel == CAAD_RELATION_SAME_CORE)
		return caad_cpumask_test(&t->usable, (unsigned)c) && !caad_cpumask_test(banned, (unsigned)c) ? c : -1;
	if (rel != CAAD_RELATION_SMT_SIBLING)
		return -1;
	CAAD_CPUMASK_FOREACH(cpu, &t->cores[t->cpus[c].core].cpus)
		if (cpu != c && caad_cpumask_test(&t->usable, (unsigned)cpu) && !caad_cpumask_test(banned, (unsigned)cpu))
			return cpu;
	return -1;
}

unsigned caad_trial_candidates(const struct caad_topology *t, const struct caad_cpumask *banned, int c,
                               int prior_cpu, bool host, struct caad_trial_cand *cands)
{
	unsigned n = 0;
	int cpu;

	cands[n++] = (struct caad_trial_cand){ prior_cpu, caad_topology_relation(t, (unsigned)c, (unsigned)prior_cpu) };
	/* the consumer's own CPU only where caad may steer to it: one that is
	 * isolated, offline or outside caad's CPUs would be dropped by the
	 * planner, and each trial abort at its first turn */
	cpu = caad_trial_cpu_for_relation(t, banned, c, CAAD_RELATION_SAME_CORE);
	if (cpu >= 0 && cpu != prior_cpu)
		cands[n++] = (struct caad_trial_cand){ cpu, CAAD_RELATION_SAME_CORE };
	cpu = caad_trial_cpu_for_relation(t, banned, c, CAAD_RELATION_SMT_SIBLING);
	if (cpu >= 0 && cpu != prior_cpu)
		cands[n++] = (struct caad_trial_cand){ cpu, CAAD_RELATION_SMT_SIBLING };
	if (host)
		cands[n++] = (struct caad_trial_cand){ CAAD_OVERRIDE_HOST, CAAD_RELATION_HOST_STEERING };
	return n;
}

bool caad_trial_reader_unpinned(const struct caad_topology *t, const struct caad_cpumask *allowed)
{
	struct caad_cpumask in;

	caad_cpumask_and(&in, allowed, &t->usable);
	if (caad_cpumask_empty(&in))
		caad_cpumask_and(&in, allowed, &t->present);
	return caad_cpumask_count(&in) != 1;
}

uint64_t caad_trial_kthread_ns(struct caad_trial_kthread *k, uint32_t pid, uint64_t ns)
{
	if (pid && ns && pid == k->pid && ns >= k->seen_ns)
		k->sum_ns += ns - k->seen_ns;
	k->ever_read |= pid && ns;
	k->failed += pid && !ns && k->ever_read;
	k->pid = ns ? pid : 0;
	k->seen_ns = ns;
	return k->sum_ns;
}

void caad_trial_kthread_count(struct caad_trial_kthread *k, uint32_t pid, uint64_t ns,
                              struct caad_trial_counters *c)
{
	c->cpu_ns += caad_trial_kthread_ns(k, pid, ns);
	c->cpu_gaps = k->failed;
	/* what it ran since the read before is not in the count: a turn
	 * that ends or starts here would read too few CPU-seconds (too many
	 * bytes per CPU-second), as it would where the consumer's or
	 * NET_RX's time could not be read */
	if (pid && !ns && k->ever_read)
		c->unknown |= CAAD_TRIAL_UNKNOWN_CPU;
}

int caad_trial_verdict_cpu(const struct caad_verdict *v, const struct caad_topology *t,
                           const struct caad_cpumask *banned, int c)
{
	int cpu;

	if (v->kept_prior)
		return CAAD_TRIAL_RULES;
	if (v->relation == CAAD_RELATION_HOST_STEERING)
		return CAAD_OVERRIDE_HOST;
	cpu = caad_trial_cpu_for_relation(t, banned, c, v->relation);
	return cpu >= 0 ? cpu : CAAD_TRIAL_RULES;
}

void caad_trial_params_init(struct caad_trial_params *p)
{
	*p = (struct caad_trial_params){
		.rounds = 10,
		.turn_ms = 5000,
		.settle_ms = 2000,
		.margin_pct = 3,
		.win_pct = 80,
		.eff_loss_pct = 20,
		.confidence_pct = 95,
		.collapse_bps = 0,
	};
}

const char *caad_trial_state_to_string(enum caad_trial_state s)
{
	static const char *const names[] = {
		[CAAD_TRIAL_RUNNING] = "running",
		[CAAD_TRIAL_DONE] = "done",
		[CAAD_TRIAL_ABORTED] = "aborted",
	};
	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of v[0..n), reordering v; 0 for none. */
static double median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The prior's turns around turn i: its nearest turn before i and its
 * nearest turn after it (one of them at the ends of a trial), so that a
 * steady drift of the flow's rate favours neither side. Their mean
 * goodput and efficiency (0 where unknown), and which turns gave each.
 */
struct around {
	double goodput, eff;
	size_t g_idx[2], e_idx[2];
	unsigned ng, ne;
};

static void prior_around(const struct caad_trial_sample *s, size_t n, size_t i, struct around *ret)
{
	size_t nb[2];
	unsigned k_nb = 0;
	double g = 0, e = 0;

	*ret = (struct around){ 0 };
	for (size_t j = i; j-- > 0;)
		if (s[j].cand == 0) {
			nb[k_nb++] = j;
			break;
		}
	for (size_t j = i + 1; j < n; j++)
		if (s[j].cand == 0) {
			nb[k_nb++] = j;
			break;
		}
	for (unsigned k = 0; k < k_nb; k++) {
		double v = caad_trial_sample_goodput_bps(&s[nb[k]]);

		if (v > 0) {
			g += v;
			ret->g_idx[ret->ng++] = nb[k];
		}
		v = caad_trial_sample_efficiency(&s[nb[k]]);
		if (v > 0) {
			e += v;
			ret->e_idx[ret->ne++] = nb[k];
		}
	}
	ret->goodput = ret->ng ? g / ret->ng : 0;
	ret->eff = ret->ne ? e / ret->ne : 0;
}

/*
 * How the pairs share turns. A pair's log ratio is about its turn's log
 * minus the mean of the logs of the prior's turns it was paired with;
 * the mean over the pairs is then a sum of weights times turns. Neighbouring
 * pairs share a prior turn between them, so their ratios are not
 * independent and their spread alone understates how far that mean
 * moves by chance. With every turn's noise independent and alike
 * (variance s2 in its log), the mean of the n ratios varies by s2 * sum_w2 / n^2,
 * and the ratios' sample variance expects s2 * (sum_v - sum_w2 / n) /
 * (n - 1), where sum_w2 sums the squared weights of all turns (its own
 * turns 1 each, a prior turn 1/k for each pair of k prior turns it is in)
 * and sum_v the ratios' own variances (1 + 1/k each).
 */
struct sharing {
	double *w;  /* per sample */
	double sum_v;
};

static void sharing_add(struct sharing *sh, size_t turn, const size_t *prior, unsigned k)
{
	sh->w[turn] += 1;
	for (unsigned j = 0; j < k; j++)
		sh->w[prior[j]] -= 1.0 / k;
	sh->sum_v += 1 + 1.0 / k;
}

static double sharing_sum_w2(const struct sharing *sh, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += sh->w[i] * sh->w[i];
	return sum;
}

/* P(T <= t), Student's t with df degrees of freedom: Abramowitz and
 * Stegun 26.7.3 (odd df) and 26.7.4 (even df), finite sums for whole df */
static double student_t_cdf(double t, unsigned df)
{
	double th = atan(fabs(t) / sqrt((double)df)), c2 = cos(th) * cos(th), a, term, sum;

	if (df % 2) {
		sum = 0;
		if (df > 1) {
			term = sum = cos(th);
			for (unsigned k = 3; k + 2 <= df; k += 2) {
				term *= c2 * (double)(k - 1) / (double)k;
				sum += term;
			}
		}
		a = 2 / M_PI * (th + sin(th) * sum);
	} else {
		term = sum = 1;
		for (unsigned k = 2; k + 2 <= df; k += 2) {
			term *= c2 * (double)(k - 1) / (double)k;
			sum += term;
		}
		a = sin(th) * sum;
	}
	/* a = P(|T| <= |t|) */
	return t >= 0 ? (1 + a) / 2 : (1 - a) / 2;
}

double caad_student_t_quantile(double q, unsigned df)
{
	double lo = 0, hi = 1;

	if (!(q > 0 && q < 1) || df == 0)
		return NAN;
	if (q < 0.5)
		return -caad_student_t_quantile(1 - q, df);
	while (student_t_cdf(hi, df) < q && hi < 1e12)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (student_t_cdf(mid, df) < q)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * A one-sided lower confidence bound on the geometric mean of ratios
 * r[0..n): exp(mean - t * se) over their logs, where se is the standard
 * error of that mean given how the pairs share turns (struct sharing):
 * for pairs that share none it is the textbook sd / sqrt(n). 0 where not
 * asked, for fewer than 2, or with a ratio of 0 (no gain to bound).
 */
static double ratio_low(const struct caad_trial_params *p, const double *r, size_t n, double sum_w2, double sum_v)
{
	double sum = 0, sq = 0, mean, dn = (double)n, spread, se;

	if (!p->confidence_pct || p->confidence_pct > 99 || n < 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!(r[i] > 0))
			return 0;
		sum += log(r[i]);
	}
	mean = sum / dn;
	for (size_t i = 0; i < n; i++)
		sq += (log(r[i]) - mean) * (log(r[i]) - mean);
	spread = sum_v - sum_w2 / dn; /* > 0: every pair has a turn of its own */
	if (!(spread > 1e-9))
		return 0;
	se = sqrt(sq / spread * sum_w2) / dn;
	return exp(mean - caad_student_t_quantile(p->confidence_pct / 100.0, (unsigned)(n - 1)) * se);
}

static void score(const struct caad_trial_params *p, const struct caad_trial_sample *samples, size_t n,
                  unsigned cand, struct caad_trial_score *sc, double *buf_a, double *buf_b, double *w_a, double *w_b)
{
	struct sharing sh_a = { .w = w_a }, sh_b = { .w = w_b };
	double tie_floor = 1 - p->margin_pct / 100.0; /* a pair's ratio below this: behind */
	size_t na = 0, nb = 0, ng = 0, ne = 0;
	uint64_t steal = 0, total = 0;

	/* its own medians */
	for (size_t i = 0; i < n; i++) {
		const struct caad_trial_sample *s = &samples[i];
		if (s->cand != cand)
			continue;
		buf_a[na++] = caad_trial_sample_goodput_bps(s);
		if (caad_trial_sample_efficiency(s) > 0)
			buf_b[nb++] = caad_trial_sample_efficiency(s);
		sc->ooo += s->d.ooo;
		sc->retrans += s->d.retrans;
		steal += s->d.steal_ns;
		total += s->d.total_ns;
	}
	sc->goodput_bps = median(buf_a, na);
	sc->efficiency = median(buf_b, nb);
	sc->steal_pct = total ? 100.0 * (double)steal / (double)total : 0;
	if (cand == 0) { /* paired with itself: its turns with some goodput */
		for (size_t i = 0; i < na; i++)
			sc->pairs += buf_a[i] > 0;
		return;
	}

	/* each of its turns paired with the prior's turns around it */
	memset(w_a, 0, n * sizeof(*w_a));
	memset(w_b, 0, n * sizeof(*w_b));
	for (size_t i = 0; i < n; i++) {
		struct around pr;
		double ag, ae;

		if (samples[i].cand != cand)
			continue;
		prior_around(samples, n, i, &pr);
		if (pr.goodput <= 0)
			continue;
		ag = caad_trial_sample_goodput_bps(&samples[i]);
		sc->pairs++;
		/* behind: judged on the ratio itself, of which the median is taken */
		buf_a[ng] = ag / pr.goodput;
		sc->goodput_wins += ag > pr.goodput;
		sc->goodput_behind += buf_a[ng++] < tie_floor;
		sharing_add(&sh_a, i, pr.g_idx, pr.ng);
		ae = caad_trial_sample_efficiency(&samples[i]);
		if (pr.eff > 0 && ae > 0) {
			buf_b[ne] = ae / pr.eff;
			sc->efficiency_wins += ae > pr.eff;
			sc->efficiency_behind += buf_b[ne++] < tie_floor;
			sharing_add(&sh_b, i, pr.e_idx, pr.ne);
		}
	}
	sc->goodput_low = ratio_low(p, buf_a, ng, sharing_sum_w2(&sh_a, n), sh_a.sum_v);
	sc->efficiency_low = ne == sc->pairs ? ratio_low(p, buf_b, ne, sharing_sum_w2(&sh_b, n), sh_b.sum_v) : 0;
	sc->goodput_ratio = median(buf_a, ng);
	/* over the pairs that have one: a turn whose CPU time was not
	 * readable must not lift rule (a)'s bound on the cost of a goodput
	 * win; rule (b), a win on efficiency, needs every pair's */
	sc->efficiency_ratio = median(buf_b, ne);
	sc->efficiency_pairs = (unsigned)ne;
}

/*
 * Whether an alternative held its own in enough of its pairs: not behind
 * by more than the margin in WinPercent= of them, rounded up. A pair
 * within the margin either way is a tie, as noise: on a 2-vCPU testbed a
 * trial that read the same CPU 1.11x faster (median) lost 2 of its 6
 * pairs by under 2%, and counting those against it kept the prior
 * (bench/RESULTS-settle.md, "Ties").
 */
static bool held(const struct caad_trial_params *p, unsigned pairs, unsigned behind)
{
	unsigned need = (pairs * p->win_pct + 99) / 100;

	return behind <= pairs - MIN(need, pairs);
}

/* the goodput half of rule (a): ahead by the margin, not behind in too many turns ... */
static bool goodput_clear(const struct caad_trial_params *p, const struct caad_trial_score *s)
{
	return s->goodput_ratio >= 1 + p->margin_pct / 100.0 && held(p, s->pairs, s->goodput_behind);
}

/* ... and out of the noise of its pairs, where ConfidencePercent= asks */
static bool out_of_noise(const struct caad_trial_params *p, double low)
{
	return !p->confidence_pct || low > 1;
}

/* Two goodput ratios within the margin of each other: a tie, as a turn
 * within the margin is. */
static bool goodput_tie(double margin, const struct caad_trial_score *c, const struct caad_trial_score *w)
{
	return c->goodput_ratio < w->goodput_ratio * (1 + margin) && w->goodput_ratio < c->goodput_ratio * (1 + margin);
}

int caad_trial_decide(const struct caad_trial_params *p, const struct caad_trial_sample *samples, size_t n,
                      unsigned n_cands, struct caad_trial_result *ret)
{
	_cleanup_free_ double *a = NULL, *b = NULL, *w = NULL;
	double margin = p->margin_pct / 100.0, eff_loss = p->eff_loss_pct / 100.0;
	bool won[CAAD_TRIAL_MAX_CANDS] = {}, won_by_goodput[CAAD_TRIAL_MAX_CANDS] = {};
	unsigned top = 0, tied;

	if (n_cands < 1 || n_cands > CAAD_TRIAL_MAX_CANDS)
		return -EINVAL;
	*ret = (struct caad_trial_result){ .winner = 0 };
	a = malloc((n ? n : 1) * sizeof(double));
	b = malloc((n ? n : 1) * sizeof(double));
	w = malloc((n ? n : 1) * 2 * sizeof(double));
	if (!a || !b || !w)
		return -ENOMEM;
	for (unsigned c = 0; c < n_cands; c++)
		score(p, samples, n, c, &ret->scores[c], a, b, w, w + (n ? n : 1));
	ret->scores[0].goodput_ratio = ret->scores[0].pairs ? 1 : 0;
	ret->scores[0].efficiency_ratio = ret->scores[0].efficiency > 0 ? 1 : 0;
	ret->scores[0].goodput_wins = ret->scores[0].efficiency_wins = 0;
	ret->scores[0].goodput_behind = ret->scores[0].efficiency_behind = 0;

	for (unsigned c = 1; c < n_cands; c++) {
		const struct caad_trial_score *s = &ret->scores[c];
		bool eff_known = s->efficiency_ratio > 0, by_goodput, by_efficiency;
		bool eff_whole = eff_known && s->efficiency_pairs == s->pairs;

		if (s->pairs < 2)
			continue;
		by_goodput = goodput_clear(p, s) && out_of_noise(p, s->goodput_low) &&
		             (!eff_known || s->efficiency_ratio >= 1 - eff_loss);
		by_efficiency = eff_whole && s->efficiency_ratio >= 1 + margin &&
		                held(p, s->pairs, s->efficiency_behind) && out_of_noise(p, s->efficiency_low) &&
		                s->goodput_ratio >= 1;
		won[c] = by_goodput || by_efficiency;
		won_by_goodput[c] = by_goodput;
		if (won[c] && (!top || s->goodput_ratio > ret->scores[top].goodput_ratio))
			top = c;
	}
	/*
	 * Of the alternatives that won, the fastest, unless one as fast within
	 * the margin of it (a tie) has more bytes per CPU-second (where both
	 * are known). Each is measured against the fastest, not against the
	 * one before it: so the order of the candidates does not matter, and
	 * no chain of ties within the margin ends further than the margin
	 * below the fastest.
	 */
	ret->winner = top;
	for (unsigned c = 1; top && c < n_cands; c++) {
		const struct caad_trial_score *s = &ret->scores[c], *lead = &ret->scores[ret->winner];

		if (won[c] && c != top && goodput_tie(margin, s, &ret->scores[top]) && s->efficiency_ratio > 0 &&
		    lead->efficiency_ratio > 0 && s->efficiency_ratio > lead->efficiency_ratio)
			ret->winner = c;
	}
	ret->by_efficiency = ret->winner && !won_by_goodput[ret->winner];
	/* the fastest, where the winner's bytes per CPU-second beat it */
	tied = ret->winner != top ? top : 0;

	if (ret->winner) {
		const struct caad_trial_score *s = &ret->scores[ret->winner];
		char g_low[48] = "", e_low[48] = "";

		/* the bounds known (0: unknown, not asked) */
		if (s->goodput_low > 0)
			snprintf(g_low, sizeof(g_low), "; at least %.3fx with %u%% confidence", s->goodput_low,
			         p->confidence_pct);
		if (s->efficiency_pairs < s->pairs)
			snprintf(e_low, sizeof(e_low), "; known in %u of them", s->efficiency_pairs);
		else if (s->efficiency_low > 0)
			snprintf(e_low, sizeof(e_low), "; at least %.3fx", s->efficiency_low);
		int len = snprintf(ret->reason, sizeof(ret->reason),
		                   "candidate %u won: median goodput %.3fx the prior's (ahead in %u of %u turns, over %u%% "
		                   "behind in %u%s), bytes per CPU-second %.3fx (ahead in %u, over %u%% behind in %u%s)",
		                   ret->winner, s->goodput_ratio, s->goodput_wins, s->pairs, p->margin_pct,
		                   s->goodput_behind, g_low, s->efficiency_ratio, s->efficiency_wins, p->margin_pct,
		                   s->efficiency_behind, e_low);
		if (tied && len > 0 && (size_t)len < sizeof(ret->reason))
			snprintf(ret->reason + len, sizeof(ret->reason) - (size_t)len,
			         "; candidate %u won too, as fast within %u%% (%.3fx) at %.3fx bytes per CPU-second",
			         tied, p->margin_pct, ret->scores[tied].goodput_ratio, ret->scores[tied].efficiency_ratio);
	} else {
		/* say how close the best alternative came */
		const struct caad_trial_score *s;
		char lows[96] = "";
		unsigned best = 0;

		for (unsigned c = 1; c < n_cands; c++)
			if (!best || ret->scores[c].goodput_ratio > ret->scores[best].goodput_ratio)
				best = c;
		s = &ret->scores[best];
		if (s->goodput_low > 0 && s->efficiency_low > 0)
			snprintf(lows, sizeof(lows), "; with %u%% confidence at least %.3fx in goodput and %.3fx in bytes "
			         "per CPU-second", p->confidence_pct, s->goodput_low, s->efficiency_low);
		else if (s->goodput_low > 0)
			snprintf(lows, sizeof(lows), "; with %u%% confidence at least %.3fx in goodput", p->confidence_pct,
			         s->goodput_low);

		if (!best || s->pairs < 2)
			snprintf(ret->reason, sizeof(ret->reason), "the prior stands: too few paired turns to compare");
		else if (goodput_clear(p, s) && !out_of_noise(p, s->goodput_low))
			/* ahead on the median, but not beyond what the turns' spread gives by chance */
			snprintf(ret->reason, sizeof(ret->reason),
			         "the prior stands: candidate %u had median goodput %.3fx the prior's (ahead in %u of %u "
			         "turns, over %u%% behind in %u), but with %u%% confidence only %.3fx: within the noise "
			         "of its turns (ConfidencePercent=)",
			         best, s->goodput_ratio, s->goodput_wins, s->pairs, p->margin_pct, s->goodput_behind,
			         p->confidence_pct, s->goodput_low);
		else if (goodput_clear(p, s))
			/* only the cost per byte kept it */
			snprintf(ret->reason, sizeof(ret->reason),
			         "the prior stands: candidate %u had median goodput %.3fx the prior's (ahead in %u of %u "
			         "turns, over %u%% behind in %u), but bytes per CPU-second %.3fx, below the %.2fx that "
			         "EfficiencyLossPercent=%u allows",
			         best, s->goodput_ratio, s->goodput_wins, s->pairs, p->margin_pct, s->goodput_behind,
			         s->efficiency_ratio, 1 - eff_loss, p->eff_loss_pct);
		else
			snprintf(ret->reason, sizeof(ret->reason),
			         "the prior stands: no alternative won by %u%%%s and held within it in %u%% of its turns "
			         "(best: candidate %u, median goodput %.3fx, ahead in %u of %u, over %u%% behind in %u; "
			         "bytes per CPU-second %.3fx, ahead in %u, over %u%% behind in %u%s)",
			         p->margin_pct, p->confidence_pct ? ", out of its turns' noise," : "", p->win_pct, best,
			         s->goodput_ratio, s->goodput_wins, s->pairs, p->margin_pct, s->goodput_behind,
			         s->efficiency_ratio, s->efficiency_wins, p->margin_pct, s->efficiency_behind, lows);
	}
	return 0;
}

int caad_trial_start(struct caad_trial *t, unsigned id, uint64_t flow_id, const struct caad_trial_params *p,
                     const struct caad_trial_cand *cands, unsigned n_cands, uint64_t now_ns)
{
	if (n_cands < 2 || n_cands > CAAD_TRIAL_MAX_CANDS || p->rounds < 2 || p->turn_ms == 0 ||
	    p->settle_ms >= p->turn_ms || p->win_pct > 100 || p->eff_loss_pct > 100 || p->confidence_pct > 99)
		return -EINVAL;
	*t = (struct caad_trial){
		.id = id,
		.flow_id = flow_id,
		.params = *p,
		.n_cands = n_cands,
		.state = CAAD_TRIAL_RUNNING,
		.start_ns = now_ns,
		.turn_start_ns = now_ns,
	};
	memcpy(t->cands, cands, n_cands * sizeof(*cands));
	t->samples = calloc((size_t)p->rounds * n_cands, sizeof(*t->samples));
	return t->samples ? 0 : -ENOMEM;
}

void caad_trial_done(struct caad_trial *t)
{
	free(t->samples);
	t->samples = NULL;
	t->n_samples = 0;
}

unsigned caad_trial_turn_cand(const struct caad_trial *t, unsigned turn)
{
	unsigned round = turn / t->n_cands, pos = turn % t->n_cands;

	/* Every turn begins with a move: a turn that continued the one
	 * before would be measured longer after its move than the others
	 * (and read 10% apart from them on a 2-vCPU VM). Two candidates
	 * alternate, starting with the alternative (the flow is on the
	 * prior); more rotate, starting with candidate 1, which never
	 * repeats a candidate across rounds. */
	if (t->n_cands == 2)
		return (turn + 1) % 2;
	return (1 + round + pos) % t->n_cands;
}

void caad_trial_abort(struct caad_trial *t, uint64_t now_ns, const char *why)
{
	if (t->state != CAAD_TRIAL_RUNNING)
		return;
	t->state = CAAD_TRIAL_ABORTED;
	t->end_ns = now_ns;
	snprintf(t->abort_reason, sizeof(t->abort_reason), "%s", why);
}

void caad_trial_withdraw(struct caad_trial *t, const char *why)
{
	if (t->state != CAAD_TRIAL_DONE)
		return;
	t->state = CAAD_TRIAL_ABORTED;
	snprintf(t->abort_reason, sizeof(t->abort_reason), "%s", why);
}

static void counters_sub(struct caad_trial_counters *d, const struct caad_trial_counters *a,
                         const struct caad_trial_counters *b)
{
	/* counters only grow; a reset (a re-created socket, say) counts as 0,
	 * and so does one not readable at either end */
	unsigned unknown = a->unknown | b->unknown;

	/* a kthread read that failed between them: the time around it is
	 * not in either count (caad_trial_kthread_ns() does not bridge it) */
	if (a->cpu_gaps != b->cpu_gaps)
		unknown |= CAAD_TRIAL_UNKNOWN_CPU;
#define SUB(x, u) d->x = !(unknown & (u)) && a->x >= b->x ? a->x - b->x : 0
	SUB(bytes, 0);
	SUB(cpu_ns, CAAD_TRIAL_UNKNOWN_CPU);
	SUB(ooo, 0);
	SUB(retrans, CAAD_TRIAL_UNKNOWN_RETRANS);
	SUB(steal_ns, CAAD_TRIAL_UNKNOWN_STEAL);
	SUB(total_ns, CAAD_TRIAL_UNKNOWN_STEAL);
#undef SUB
	d->cpu_gaps = a->cpu_gaps - b->cpu_gaps;
	d->unknown = unknown;
}

unsigned caad_trial_step(struct caad_trial *t, uint64_t now_ns, const struct caad_trial_counters *now)
{
	unsigned total = t->params.rounds * t->n_cands;
	uint64_t turn_ns = (uint64_t)t->params.turn_ms * NSEC_PER_MSEC;
	uint64_t settle_ns = (uint64_t)t->params.settle_ms * NSEC_PER_MSEC;

	if (t->state != CAAD_TRIAL_RUNNING)
		return 0;

	if (!t->measuring && now_ns - t->turn_start_ns >= settle_ns) {
		t->measuring = true;
		t->measure_start_ns = now_ns;
		t->at_start = *now;
	}
	if (t->measuring && now_ns - t->turn_start_ns >= turn_ns && now_ns > t->measure_start_ns) {
		struct caad_trial_sample *s = &t->samples[t->n_samples++];

		*s = (struct caad_trial_sample){
			.round = t->turn / t->n_cands,
			.cand = caad_trial_turn_cand(t, t->turn),
			.ns = now_ns - t->measure_start_ns,
		};
		counters_sub(&s->d, now, &t->at_start);
		if (t->params.collapse_bps && caad_trial_sample_goodput_bps(s) < (double)t->params.collapse_bps) {
			char why[128];
			const struct caad_trial_cand *c = &t->cands[s->cand];
			if (c->cpu >= 0)
				snprintf(why, sizeof(why), "the flow's rate collapsed to %.2f Gbit/s on CPU %d",
				         caad_trial_sample_goodput_bps(s) / 1e9, c->cpu);
			else
				snprintf(why, sizeof(why), "the flow's rate collapsed to %.2f Gbit/s under %s",
				         caad_trial_sample_goodput_bps(s) / 1e9, caad_relation_to_string(c->relation));
			caad_trial_abort(t, now_ns, why);
			return 0;
		}
		t->turn++;
		t->turn_start_ns = now_ns;
		t->measuring = settle_ns == 0;
		t->measure_start_ns = now_ns;
		t->at_start = *now;
		if (t->turn >= total) {
			t->end_ns = now_ns;
			if (caad_trial_decide(&t->params, t->samples, t->n_samples, t->n_cands, &t->result) < 0) {
				caad_trial_abort(t, now_ns, "out of memory deciding");
				return 0;
			}
			t->state = CAAD_TRIAL_DONE;
			return t->result.winner;
		}
	}
	return caad_trial_turn_cand(t, t->turn);
}
