/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Lines about one object that can change many times a second: a heavy
 * flow's decision, a value caad writes. Where the scheduler moves a reader
 * that is not pinned to and fro, each move re-steers its flow, and every
 * such move was four lines: fifty a second on a busy 2-CPU host.
 *
 * An object has at most CAAD_LOGLIMIT_BURST lines at their level in a
 * window of CAAD_LOGLIMIT_WINDOW_NSEC from its first; the last of them
 * says so, and the rest go at debug level (LogLevel=debug shows every
 * one). Its first line in the next window, if it comes within a window
 * of the last one's end, says how many went at debug level.
 */
#define CAAD_LOGLIMIT_BURST 10u
#define CAAD_LOGLIMIT_WINDOW_NSEC (60ull * 1000000000ull)

struct caad_loglimit {
	uint64_t begin_ns; /* the window's first line (CLOCK_MONOTONIC) */
	uint32_t n;        /* lines in the window, those at debug level included; 0: none yet */
};

/*
 * One more line about the object at now_ns, meant for `level`: the level
 * to log it at (level, or LOG_DEBUG past the burst) and, in note (size
 * bytes, at least 1), "" or a sentence to append to the line.
 */
int caad_loglimit_level(struct caad_loglimit *l, uint64_t now_ns, int level, char *note, size_t size);

/* False once the object's record may go: its window is over, and so is
 * the next, where it had lines at debug level to tell of. */
static inline bool caad_loglimit_active(const struct caad_loglimit *l, uint64_t now_ns)
{
	uint64_t keep = (l->n > CAAD_LOGLIMIT_BURST ? 2 : 1) * CAAD_LOGLIMIT_WINDOW_NSEC;

	return l->n && (now_ns < l->begin_ns || now_ns - l->begin_ns < keep);
}

/*
 * A failure that may come back at every scan, e.g. a BPF iterator that
 * cannot be read: said at its level the first time, and once every
 * CAAD_LOGSTREAK_REMIND_NSEC while it goes on; the rest at debug level.
 * Whoever ends the streak says so, with how many failures it had.
 */
#define CAAD_LOGSTREAK_REMIND_NSEC (600ull * 1000000000ull)

struct caad_logstreak {
	uint32_t fails;   /* failures in a row; 0: none now */
	uint64_t said_ns; /* when one was last said at its level (CLOCK_MONOTONIC) */
};

/* The level a failure at now_ns is to be logged at: level or LOG_DEBUG. */
int caad_logstreak_level(const struct caad_logstreak *s, uint64_t now_ns, int level);
/* One more failure, at now_ns, logged at `logged` (caad_logstreak_level()'s). */
void caad_logstreak_failed(struct caad_logstreak *s, uint64_t now_ns, int logged);
/* A success: the failures its streak had (0: there was none), and none now. */
uint32_t caad_logstreak_end(struct caad_logstreak *s);
