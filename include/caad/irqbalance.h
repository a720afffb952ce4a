/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/*
 * irqbalance(1) moves IRQs by load and would undo caad's placements. It
 * listens on SYSROOT/run/irqbalance/irqbalance<PID>.sock (built with its
 * UI socket, as Debian's is) and speaks a line protocol to root callers:
 *   "setup"                  -> "SLEEP n [IRQ i LOAD l DIFF d CLASS c]... BANNED <cpumask>"
 *   "settings ban irqs A B"  -> replaces the banned list ("NONE" clears it)
 * caad adds the IRQs it manages to the list that was there, and puts the
 * old list back on exit.
 */

enum caad_irqbalance_mode {
	CAAD_IRQBALANCE_BAN,    /* ban caad's IRQs through the socket (default) */
	CAAD_IRQBALANCE_WARN,   /* only warn that irqbalance runs */
	CAAD_IRQBALANCE_IGNORE, /* say nothing */
	_CAAD_IRQBALANCE_MODE_COUNT,
};

const char *caad_irqbalance_mode_to_string(enum caad_irqbalance_mode m);
int caad_irqbalance_mode_from_string(const char *s);

/* Path of the running irqbalance's socket (first one found), -ENOENT if none. */
int caad_irqbalance_find(const char *sysroot, char **ret);
/* The IRQs irqbalance has banned now ("setup"). Returns the count. */
int caad_irqbalance_get_banned(const char *socket_path, int **ret);
/* Replace the banned list; n == 0 clears it. */
int caad_irqbalance_set_banned(const char *socket_path, const int *irqs, size_t n);

/*
 * Keeping irqbalance's banned list in step with the IRQs caad manages.
 * update() bans exactly original + irqs (irqbalance found anew when it
 * restarts), restore() puts the original list back. Both are no-ops when
 * irqbalance does not run. Returns 1 when the list was changed.
 */
struct caad_irqbalance_sync;
/* journal: a file that keeps irqbalance's own list while caad's bans are
 * in (NULL: none), for caad_irqbalance_journal_restore() after a crash. */
int caad_irqbalance_sync_new(const char *sysroot, const char *journal, struct caad_irqbalance_sync **ret);
/* mode: the current IrqBalance= (it can change on reload); n == 0 gives
 * irqbalance its own list back. */
int caad_irqbalance_sync_update(struct caad_irqbalance_sync *s, enum caad_irqbalance_mode mode, const int *irqs,
                                size_t n);
int caad_irqbalance_sync_restore(struct caad_irqbalance_sync *s);
void caad_irqbalance_sync_free(struct caad_irqbalance_sync *s);
/*
 * After a crash: give irqbalance the list the journal kept, and remove
 * the journal (also when that irqbalance is gone: its bans went with it).
 * Kept when irqbalance does not answer, or the journal cannot be read.
 * Returns 1 when given back, 0 when there was nothing to do (or that
 * irqbalance is gone), < 0 when it could not be (logged, the journal
 * kept: a start goes on, caad --restore fails) or on ENOMEM.
 */
int caad_irqbalance_journal_restore(const char *journal);
