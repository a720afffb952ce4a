// SPDX-License-Identifier: GPL-2.0-or-later
#include "caad/pace.h"

#include "caad/macro.h"

/* The period that keeps a scan of cost_usec within budget_pct of a CPU. */
static uint64_t budget_period(uint64_t cost_usec, unsigned budget_pct)
{
	budget_pct = MIN(MAX(budget_pct, 1u), 100u);
	/* cost_usec is a scan's CPU time: far below the overflow */
	return MIN(cost_usec * 100 / budget_pct, (uint64_t)CAAD_PACE_PERIOD_MAX_USEC);
}

bool caad_pace_add(struct caad_pace *p, uint64_t cost_usec, uint64_t interval_usec, unsigned budget_pct)
{
	uint64_t need;
	bool was = p->stretched;

	cost_usec = MIN(cost_usec, (uint64_t)CAAD_PACE_PERIOD_MAX_USEC);
	/* a quarter of the new one: a jump to 100k flows is followed within
	 * a few scans, one slow scan moves it by a quarter */
	if (!p->cost_usec)
		p->cost_usec = cost_usec;
	else
		p->cost_usec = p->cost_usec - p->cost_usec / 4 + cost_usec / 4;
	need = budget_period(p->cost_usec, budget_pct);
	p->period_usec = MAX(interval_usec, need);
	if (!p->stretched && need > interval_usec + interval_usec / 4)
		p->stretched = true;
	else if (p->stretched && need <= interval_usec)
		p->stretched = false;
	return p->stretched != was;
}

uint64_t caad_pace_gap(const struct caad_pace *p, uint64_t min_usec, unsigned budget_pct)
{
	return MAX(min_usec, budget_period(p->cost_usec, budget_pct));
}

uint64_t caad_pace_reset(struct caad_pace *p, uint64_t interval_usec, unsigned budget_pct)
{
	if (p->cost_usec)
		p->period_usec = MAX(interval_usec, budget_period(p->cost_usec, budget_pct));
	return caad_pace_period(p, interval_usec);
}
