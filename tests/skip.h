/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A cmocka test that cannot run here (include after <cmocka.h>). */
#pragma once

#include <stdlib.h>
#include <string.h>

/*
 * test_skip("why", ...): skipped, saying why, outside CI; under CI
 * (CI=true, which .ci/run sets), where every test must run, a failure.
 * cmocka's skip() alone passes in meson's eyes, where scripts/lib.sh
 * cannot see it. FMT is a string literal, without a newline.
 */
#define test_skip(FMT, ...)                                                              \
	do {                                                                              \
		const char *ci_ = getenv("CI");                                           \
		if (ci_ && strcmp(ci_, "true") == 0)                                      \
			fail_msg("CI must run this test, but it cannot here: " FMT, ##__VA_ARGS__); \
		print_message("SKIP: " FMT "\n", ##__VA_ARGS__);                           \
		skip();                                                                   \
	} while (0)
