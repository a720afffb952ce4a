/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <syslog.h>
#include <cmocka.h>

#include "caad/log.h"
#include "caad/loglimit.h"

#define SEC 1000000000ull

/* n lines at now_ns: how many went at LOG_INFO; the last note in note */
static unsigned lines(struct caad_loglimit *l, uint64_t now_ns, unsigned n, char *note, size_t size)
{
	unsigned said = 0;

	for (unsigned i = 0; i < n; i++) {
		int level = caad_loglimit_level(l, now_ns, LOG_INFO, note, size);

		assert_true(level == LOG_INFO || level == LOG_DEBUG);
		if (level == LOG_DEBUG)
			assert_string_equal(note, "");
		said += level == LOG_INFO;
	}
	return said;
}

static void test_burst_then_quiet(void **state)
{
	struct caad_loglimit l = { 0 };
	char note[160];

	/* the first nine: plain */
	for (unsigned i = 1; i < CAAD_LOGLIMIT_BURST; i++) {
		assert_int_equal(caad_loglimit_level(&l, 5 * SEC + i, LOG_INFO, note, sizeof(note)), LOG_INFO);
		assert_string_equal(note, "");
	}
	/* the tenth says that the next go quiet */
	assert_int_equal(caad_loglimit_level(&l, 6 * SEC, LOG_INFO, note, sizeof(note)), LOG_INFO);
	assert_non_null(strstr(note, "changed 10 times in 60 s"));
	/* the rest of the window: debug, no note */
	assert_int_equal(lines(&l, 64 * SEC, 25, note, sizeof(note)), 0);
	/* 25 to tell of in the next window; not after it */
	assert_true(caad_loglimit_active(&l, 124 * SEC));
	assert_false(caad_loglimit_active(&l, 126 * SEC));
	/* the next window: told, once */
	assert_int_equal(caad_loglimit_level(&l, 66 * SEC, LOG_NOTICE, note, sizeof(note)), LOG_NOTICE);
	assert_non_null(strstr(note, "25 more changes of it before this one"));
	assert_int_equal(caad_loglimit_level(&l, 67 * SEC, LOG_INFO, note, sizeof(note)), LOG_INFO);
	assert_string_equal(note, "");
}

/* Lines at debug level, then nothing for over a window: old news, not told. */
static void test_quiet_told_only_soon(void **state)
{
	struct caad_loglimit l = { 0 };
	char note[160];

	assert_int_equal(lines(&l, 5 * SEC, CAAD_LOGLIMIT_BURST + 4, note, sizeof(note)), CAAD_LOGLIMIT_BURST);
	assert_int_equal(caad_loglimit_level(&l, 125 * SEC, LOG_INFO, note, sizeof(note)), LOG_INFO);
	assert_string_equal(note, "");
	assert_false(caad_loglimit_active(&l, 185 * SEC));
}

static void test_slow_changes_all_said(void **state)
{
	struct caad_loglimit l = { 0 };
	char note[160];

	/* one change every 7 s: 9 a window at most, never quiet */
	for (unsigned i = 0; i < 100; i++) {
		assert_int_equal(caad_loglimit_level(&l, (uint64_t)(i + 1) * 7 * SEC, LOG_INFO, note, sizeof(note)),
		                 LOG_INFO);
		assert_string_equal(note, "");
	}
}

static void test_steady_rate(void **state)
{
	struct caad_loglimit l = { 0 };
	char note[160];
	unsigned said = 0;

	/* 13 a second for 10 minutes, as a reader moved to and fro: 10 lines
	 * a window of 60 s, each window after the first telling of the last */
	for (unsigned i = 0; i < 13 * 600; i++) {
		said += caad_loglimit_level(&l, SEC + (uint64_t)i * SEC / 13, LOG_INFO, note, sizeof(note)) ==
		        LOG_INFO;
	}
	assert_int_equal(said, 10 * CAAD_LOGLIMIT_BURST);
}

static void test_active(void **state)
{
	struct caad_loglimit l = { 0 };
	char note[160];

	assert_false(caad_loglimit_active(&l, 5 * SEC));
	(void)caad_loglimit_level(&l, 5 * SEC, LOG_INFO, note, sizeof(note));
	assert_true(caad_loglimit_active(&l, 64 * SEC));
	/* a window over with nothing quiet: a fresh record behaves the same */
	assert_false(caad_loglimit_active(&l, 65 * SEC));
}

static void test_clock_zero_and_backwards(void **state)
{
	struct caad_loglimit l = { 0 };
	char note[160];

	/* a window may start at 0 */
	assert_int_equal(lines(&l, 0, CAAD_LOGLIMIT_BURST + 3, note, sizeof(note)), CAAD_LOGLIMIT_BURST);
	assert_int_equal(caad_loglimit_level(&l, 59 * SEC, LOG_INFO, note, sizeof(note)), LOG_DEBUG);
	/* a time before the window's start (not CLOCK_MONOTONIC's) opens
	 * another, at the level asked */
	l.begin_ns = 10 * SEC;
	assert_true(caad_loglimit_active(&l, 2 * SEC));
	assert_int_equal(caad_loglimit_level(&l, 2 * SEC, LOG_INFO, note, sizeof(note)), LOG_INFO);
	assert_int_equal(l.n, 1);
}

static void test_note_truncated(void **state)
{
	struct caad_loglimit l = { 0 };
	char note[8];

	(void)lines(&l, SEC, CAAD_LOGLIMIT_BURST, note, sizeof(note));
	assert_int_equal(strlen(note), sizeof(note) - 1);
}

/* A failure at every scan: said the first time and every 10 minutes,
 * the rest at debug level; its end tells how many; the next streak is
 * said at once. */
static void test_streak(void **state)
{
	struct caad_logstreak s = { 0 };
	const uint64_t t0 = 50 * SEC, scan = SEC / 4, remind = CAAD_LOGSTREAK_REMIND_NSEC;
	uint64_t t = t0;
	unsigned said = 0;
	int level;

	(void)state;
	assert_int_equal(caad_logstreak_end(&s), 0);
	for (unsigned i = 0; i < 2401; i++, t += scan) { /* 600 s of scans, and one */
		level = caad_logstreak_level(&s, t, LOG_ERR);
		assert_true(level == LOG_ERR || level == LOG_DEBUG);
		if (level == LOG_ERR)
			said++;
		caad_logstreak_failed(&s, t, level);
	}
	/* at t0, and at t0 + 600 s (the 2401st) */
	assert_int_equal(said, 2);
	assert_int_equal(s.said_ns, t0 + remind);
	assert_int_equal(caad_logstreak_level(&s, t0 + remind + scan, LOG_ERR), LOG_DEBUG);
	assert_int_equal(caad_logstreak_level(&s, t0 + 2 * remind - 1, LOG_ERR), LOG_DEBUG);
	assert_int_equal(caad_logstreak_level(&s, t0 + 2 * remind, LOG_ERR), LOG_ERR);
	/* a clock that went back says it again */
	assert_int_equal(caad_logstreak_level(&s, t0, LOG_ERR), LOG_ERR);
	assert_int_equal(caad_logstreak_end(&s), 2401);
	assert_int_equal(caad_logstreak_end(&s), 0);
	/* the next streak, soon after: said at once, at the level asked for */
	assert_int_equal(caad_logstreak_level(&s, t, LOG_WARNING), LOG_WARNING);
	caad_logstreak_failed(&s, t, LOG_WARNING);
	assert_int_equal(caad_logstreak_level(&s, t + scan, LOG_WARNING), LOG_DEBUG);
	assert_int_equal(s.fails, 1);
}

/* A log record is one line, whatever the names in it hold: a thread named
 * "x\n<0>FAKE" must not make a journal record of its own at level 0. */
static void test_log_one_line(void **state)
{
	char buf[256];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	(void)state;
	assert_non_null(tmp);
	assert_true(saved >= 0);
	struct stat st;
	char stream[64];

	assert_int_equal(fstat(fileno(tmp), &st), 0);
	snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	assert_int_equal(setenv("JOURNAL_STREAM", stream, 1), 0); /* stderr's: read at the first record */
	fflush(stderr);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	log_info("flow read by %s on CPU %d", "x\n<0>FAKE\x1b[2J\r", 3);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	assert_string_equal(buf, "<6>flow read by x?<0>FAKE?[2J? on CPU 3\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_quiet),
		cmocka_unit_test(test_quiet_told_only_soon),
		cmocka_unit_test(test_slow_changes_all_said),
		cmocka_unit_test(test_steady_rate),
		cmocka_unit_test(test_active),
		cmocka_unit_test(test_clock_zero_and_backwards),
		cmocka_unit_test(test_note_truncated),
		cmocka_unit_test(test_streak),
		cmocka_unit_test(test_log_one_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
