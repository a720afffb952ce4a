/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "caad/pace.h"

#define MS 1000u

/* n scans of cost each: whether the last one changed "stretched" */
static bool feed(struct caad_pace *p, unsigned n, uint64_t cost, uint64_t iv, unsigned budget)
{
	bool changed = false;

	while (n--)
		changed = caad_pace_add(p, cost, iv, budget);
	return changed;
}

static void test_cheap_scans_keep_the_interval(void **state)
{
	struct caad_pace p = {};

	/* 2 ms a scan every 250 ms is 0.8% of a CPU */
	assert_false(caad_pace_add(&p, 2 * MS, 250 * MS, 10));
	assert_int_equal(p.period_usec, 250 * MS);
	assert_int_equal(p.cost_usec, 2 * MS);
	assert_false(p.stretched);
	/* exactly on the budget: 25 ms is 10% of 250 ms */
	feed(&p, 50, 25 * MS, 250 * MS, 10);
	assert_int_equal(p.period_usec, 250 * MS);
	assert_false(p.stretched);
}

/* New settings (a reload) take effect on the period at once, at the cost
 * seen so far; before any scan, the interval is the period. */
static void test_reset(void **state)
{
	struct caad_pace p = {};

	assert_int_equal(caad_pace_reset(&p, 250 * MS, 10), 250 * MS);
	assert_int_equal(p.period_usec, 0);
	feed(&p, 5, 2 * MS, 60000 * MS, 10);
	assert_int_equal(p.period_usec, 60000 * MS);
	assert_int_equal(caad_pace_reset(&p, 100 * MS, 10), 100 * MS);
	assert_int_equal(caad_pace_period(&p, 100 * MS), 100 * MS);
	/* the budget still holds: 2 ms at 1% is 200 ms */
	assert_int_equal(caad_pace_reset(&p, 100 * MS, 1), 200 * MS);
}

static void test_costly_scans_are_spread(void **state)
{
	struct caad_pace p = {};

	/* the first scan's cost is taken whole: 177 ms at 10% is 1.77 s */
	assert_true(caad_pace_add(&p, 177 * MS, 250 * MS, 10));
	assert_true(p.stretched);
	assert_int_equal(p.period_usec, 1770 * MS);
	/* as many scans again: no new transition to log */
	assert_false(feed(&p, 5, 177 * MS, 250 * MS, 10));
	assert_int_equal(p.period_usec, 1770 * MS);
	/* another budget, the same cost */
	assert_false(caad_pace_add(&p, 177 * MS, 250 * MS, 50));
	assert_int_equal(p.period_usec, 354 * MS);
	/* the whole CPU: never closer than a scan takes */
	assert_false(caad_pace_add(&p, 177 * MS, 100 * MS, 100));
	assert_int_equal(p.period_usec, 177 * MS);
	/* a budget out of range counts as its nearest end */
	caad_pace_add(&p, 177 * MS, 100 * MS, 0);
	assert_int_equal(p.period_usec, 17700 * MS);
	caad_pace_add(&p, 177 * MS, 100 * MS, 1000);
	assert_int_equal(p.period_usec, 177 * MS);
}

static void test_smoothed(void **state)
{
	struct caad_pace p = {};

	feed(&p, 20, 4 * MS, 100 * MS, 10);
	assert_int_equal(p.cost_usec, 4 * MS);
	/* one slow scan (a reload of the queues) moves it by a quarter */
	assert_false(caad_pace_add(&p, 30 * MS, 100 * MS, 10));
	assert_int_equal(p.cost_usec, 10500);
	assert_int_equal(p.period_usec, 105 * MS);
	assert_false(p.stretched); /* 105 ms: not a quarter over 100 */
	/* back to cheap: it decays towards the new cost */
	feed(&p, 30, 4 * MS, 100 * MS, 10);
	assert_true(p.cost_usec < 4 * MS + 10);
	assert_int_equal(p.period_usec, 100 * MS);
	/* a lasting jump is followed within a few scans */
	feed(&p, 12, 100 * MS, 100 * MS, 10);
	assert_true(p.cost_usec > 95 * MS);
	assert_true(p.stretched);
}

/* a period the average converged to: integer steps stop within a few us of it */
#define assert_near(a, b) assert_in_range((a), (b) - 100, (b) + 100)

/* how many of n scans of cost each changed "stretched" */
static unsigned transitions(struct caad_pace *p, unsigned n, uint64_t cost, uint64_t iv, unsigned budget)
{
	unsigned t = 0;

	while (n--)
		t += caad_pace_add(p, cost, iv, budget);
	return t;
}

static void test_hysteresis(void **state)
{
	struct caad_pace p = {};

	/* 11 ms at 10% of 100 ms: 110 ms, over the interval but not a quarter over */
	assert_int_equal(transitions(&p, 20, 11 * MS, 100 * MS, 10), 0);
	assert_int_equal(p.period_usec, 110 * MS);
	assert_false(p.stretched);
	/* 13 ms: 130 ms, stretched once the average gets there, once */
	assert_int_equal(transitions(&p, 40, 13 * MS, 100 * MS, 10), 1);
	assert_true(p.stretched);
	assert_near(p.period_usec, 130 * MS);
	/* back to 11 ms: still over the interval, still stretched */
	assert_int_equal(transitions(&p, 40, 11 * MS, 100 * MS, 10), 0);
	assert_true(p.stretched);
	assert_near(p.period_usec, 110 * MS);
	/* 9 ms: the interval is enough again, once */
	assert_int_equal(transitions(&p, 40, 9 * MS, 100 * MS, 10), 1);
	assert_false(p.stretched);
	assert_int_equal(p.period_usec, 100 * MS);
}

static void test_bounds(void **state)
{
	struct caad_pace p = {};

	/* a 10 s scan at 1% would be 1000 s apart: held to the largest interval */
	caad_pace_add(&p, 10000 * MS, 250 * MS, 1);
	assert_int_equal(p.period_usec, CAAD_PACE_PERIOD_MAX_USEC);
	/* a cost beyond any real scan does not overflow */
	caad_pace_add(&p, UINT64_MAX, 250 * MS, 1);
	assert_int_equal(p.period_usec, CAAD_PACE_PERIOD_MAX_USEC);
	assert_true(p.cost_usec <= CAAD_PACE_PERIOD_MAX_USEC);
	/* an interval longer than the budget asks for wins */
	p = (struct caad_pace){};
	caad_pace_add(&p, 1 * MS, 60000 * MS, 10);
	assert_int_equal(p.period_usec, 60000 * MS);
}

static void test_early_gap(void **state)
{
	struct caad_pace p = {};

	/* nothing measured yet: the least gap */
	assert_int_equal(caad_pace_gap(&p, 50 * MS, 10), 50 * MS);
	caad_pace_add(&p, 2 * MS, 250 * MS, 10);
	assert_int_equal(caad_pace_gap(&p, 50 * MS, 10), 50 * MS);
	/* 30 ms a scan at 10%: 300 ms from the last one */
	feed(&p, 40, 30 * MS, 250 * MS, 10);
	assert_int_equal(caad_pace_gap(&p, 50 * MS, 10), 300 * MS);
	assert_int_equal(caad_pace_gap(&p, 50 * MS, 100), 50 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cheap_scans_keep_the_interval),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_costly_scans_are_spread),
		cmocka_unit_test(test_smoothed),
		cmocka_unit_test(test_hysteresis),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_early_gap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
