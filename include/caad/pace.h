/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * How far apart caad's scans are: IntervalMSec=, unless its scans would
 * then take more than ScanBudgetPercent= of one CPU; then as far apart as
 * keeps them within it (at most CAAD_PACE_PERIOD_MAX_USEC). A scan lists
 * every flow: its cost grows with the flows held open (on a kernel where
 * caad falls back to the TCP socket iterator, with every TCP socket of the
 * machine at each of its passes), and 100k idle connections must not cost
 * caad most of a CPU.
 *
 * The cost is the scan's own CPU time (its thread's: the BPF iterator's
 * work in the kernel included), smoothed over the last few scans, so one
 * slow scan (a reload of the queues) does not stretch the next gap alone.
 */
#define CAAD_PACE_PERIOD_MAX_USEC (60u * 1000 * 1000) /* as IntervalMSec='s largest */

struct caad_pace {
	uint64_t cost_usec;   /* a scan's CPU time, smoothed (0: none seen yet) */
	uint64_t period_usec; /* from one scan's start to the next's, now */
	bool stretched;       /* period_usec is held longer than the interval */
};

/*
 * One scan took cost_usec of CPU: the period from now on, for scans every
 * interval_usec within budget_pct (1-100) percent of a CPU. Returns true
 * when this changed whether the period is stretched, for a log line: it
 * becomes so once the budget asks for a quarter more than the interval,
 * and is no longer once the interval is enough (a cost near the line
 * does not flip it at every scan).
 */
bool caad_pace_add(struct caad_pace *p, uint64_t cost_usec, uint64_t interval_usec, unsigned budget_pct);

/* New settings (a reload): the period for them at the cost seen so far,
 * from now on; returned. */
uint64_t caad_pace_reset(struct caad_pace *p, uint64_t interval_usec, unsigned budget_pct);

/* The period now: interval_usec until a scan was counted. */
static inline uint64_t caad_pace_period(const struct caad_pace *p, uint64_t interval_usec)
{
	return p->period_usec ? p->period_usec : interval_usec;
}

/* The shortest gap from the start of the last scan to an extra one (run
 * early, for a moved reader) that keeps scans within budget_pct: at least
 * min_usec. */
uint64_t caad_pace_gap(const struct caad_pace *p, uint64_t min_usec, unsigned budget_pct);
