/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdarg.h>
#include <syslog.h>

#include "caad/macro.h"

/*
 * Logging. Levels are syslog's. Messages go to stderr; under systemd
 * (JOURNAL_STREAM set) each line carries a <N> priority prefix so the
 * journal records the level.
 *
 * log_*_errno(r, ...) log with errno set to |r| (so %m works) and return
 * -|r|: "return log_error_errno(r, "Failed to ...: %m");".
 */

void caad_log_set_max_level(int level);
int caad_log_get_max_level(void);
int caad_log_parse_level(const char *s);
/* Send messages to syslog from now on (after detaching from the terminal). */
void caad_log_open_syslog(const char *ident); /* "debug", "info", ... -> level or -EINVAL */

int caad_log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_full_errno(level, error, ...) caad_log_internal((level), (error), __VA_ARGS__)
#define log_debug(...) ((void)log_full_errno(LOG_DEBUG, 0, __VA_ARGS__))
#define log_info(...) ((void)log_full_errno(LOG_INFO, 0, __VA_ARGS__))
#define log_notice(...) ((void)log_full_errno(LOG_NOTICE, 0, __VA_ARGS__))
#define log_warning(...) ((void)log_full_errno(LOG_WARNING, 0, __VA_ARGS__))
#define log_error(...) ((void)log_full_errno(LOG_ERR, 0, __VA_ARGS__))
#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, (e), __VA_ARGS__)
