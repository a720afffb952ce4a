/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "caad/inventory.h"
#include "caad/plan.h"

/*
 * The actuator writes settings that differ from the host's, journals each
 * object's original value (durably, before the first write to it) and
 * restores them all on request, or from the journal after a crash.
 */
struct caad_actuator;

struct caad_actuator_options {
	const char *sysroot;      /* NULL or "" for the host */
	const char *journal_path; /* e.g. /run/caad/journal */
	bool dry_run;             /* log what would change, write nothing */
};

int caad_actuator_new(const struct caad_actuator_options *opts, struct caad_actuator **ret);
void caad_actuator_free(struct caad_actuator *a);
static inline void caad_actuator_freep(struct caad_actuator **a)
{
	caad_actuator_free(*a);
}

/* Apply a plan. Returns the number of values written (in dry-run: the
 * number of would-be changes announced for the first time), or a negative
 * errno for a failure that stopped it. */
int caad_actuator_apply(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan);
/* Put back every original value this actuator changed and clear the journal. */
int caad_actuator_restore(struct caad_actuator *a);
/* Restore what a journal left by an earlier run records (crash recovery).
 * Returns the number of values restored; 0 when there is no journal. */
int caad_journal_restore(const char *journal_path);
/* Switch dry-run on or off (configuration reload). Turning it on restores
 * what was written so far. */
int caad_actuator_set_dry_run(struct caad_actuator *a, bool dry_run);
/* Did the kernel refuse to move this IRQ (EIO/EPERM: managed)? */
bool caad_actuator_irq_unmovable(const struct caad_actuator *a, int irq);
/* Number of objects currently journaled. */
unsigned caad_actuator_n_changed(const struct caad_actuator *a);
