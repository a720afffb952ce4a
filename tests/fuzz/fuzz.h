/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the fuzz targets. Each target defines LLVMFuzzerTestOneInput()
 * and is linked either with libFuzzer (-Dfuzz=true, clang) or with
 * fuzz-main.c, which replays the seed corpus as a regression test.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant of the code under test: a violation is a finding, so crash
 * (libFuzzer saves the input) whatever NDEBUG says. */
#define fuzz_assert(expr)                                                                     \
	do {                                                                                  \
		if (!(expr)) {                                                                \
			fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #expr); \
			abort();                                                              \
		}                                                                             \
	} while (0)

/* Rejected inputs are logged at error level; millions of them would drown
 * the fuzzer's own output. CAAD_FUZZ_LOG=1 keeps them. */
static inline void fuzz_setup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	if (!getenv("CAAD_FUZZ_LOG"))
		caad_log_set_max_level(LOG_CRIT);
}

/* data as a NUL-terminated string (it may hold NUL bytes of its own). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}
