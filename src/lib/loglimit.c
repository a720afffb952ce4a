// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>
#include <syslog.h>

#include "caad/loglimit.h"

int caad_loglimit_level(struct caad_loglimit *l, uint64_t now_ns, int level, char *note, size_t size)
{
	uint32_t missed = 0;

	note[0] = '\0';
	/* a clock that went back (another clock's value) starts a window too */
	if (!l->n || now_ns < l->begin_ns || now_ns - l->begin_ns >= CAAD_LOGLIMIT_WINDOW_NSEC) {
		/* told in the next window only: long after, they are old news */
		if (l->n > CAAD_LOGLIMIT_BURST && now_ns >= l->begin_ns &&
		    now_ns - l->begin_ns < 2 * CAAD_LOGLIMIT_WINDOW_NSEC)
			missed = l->n - CAAD_LOGLIMIT_BURST;
		l->begin_ns = now_ns;
		l->n = 0;
	}
	if (l->n < UINT32_MAX)
		l->n++;
	if (l->n > CAAD_LOGLIMIT_BURST)
		return LOG_DEBUG;
	if (missed)
		snprintf(note, size, " [%u more changes of it before this one were logged at debug level only]", missed);
	else if (l->n == CAAD_LOGLIMIT_BURST)
		snprintf(note, size, " [it changed %u times in %llu s: its next changes within that time are logged "
		         "at debug level only]", CAAD_LOGLIMIT_BURST,
		         (unsigned long long)(CAAD_LOGLIMIT_WINDOW_NSEC / 1000000000ull));
	return level;
}

int caad_logstreak_level(const struct caad_logstreak *s, uint64_t now_ns, int level)
{
	/* a clock that went back says it again too */
	if (!s->fails || now_ns < s->said_ns || now_ns - s->said_ns >= CAAD_LOGSTREAK_REMIND_NSEC)
		return level;
	return LOG_DEBUG;
}

void caad_logstreak_failed(struct caad_logstreak *s, uint64_t now_ns, int logged)
{
	if (logged != LOG_DEBUG)
		s->said_ns = now_ns;
	if (s->fails < UINT32_MAX)
		s->fails++;
}

uint32_t caad_logstreak_end(struct caad_logstreak *s)
{
	uint32_t n = s->fails;

	s->fails = 0;
	return n;
}
