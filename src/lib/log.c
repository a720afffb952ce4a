/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "caad/log.h"
#include "caad/utf8.h"

static int max_level = LOG_INFO;
static bool use_syslog;

void caad_log_open_syslog(const char *ident)
{
	openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	use_syslog = true;
}

void caad_log_set_max_level(int level)
{
	max_level = level;
}

int caad_log_get_max_level(void)
{
	return max_level;
}

static const char *const level_names[] = {
	[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit", [LOG_ERR] = "err",
	[LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

int caad_log_parse_level(const char *s)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
		if (strcasecmp(s, level_names[i]) == 0)
			return (int)i;
	if (strcasecmp(s, "error") == 0)
		return LOG_ERR;
	return -EINVAL;
}

/* Whether stderr is the journal's stream that systemd gave the service:
 * JOURNAL_STREAM names its device and inode ("DEV:INO"). Set, but stderr
 * another file (caad --check-config 2>file from a service), the lines go
 * without the <N> priorities that only the journal reads. */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int n = 0;

	if (!e || sscanf(e, "%llu:%llu%n", &dev, &ino, &n) != 2 || e[n] != '\0')
		return false;
	return fstat(STDERR_FILENO, &st) == 0 && (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

int caad_log_internal(int level, int error, const char *fmt, ...)
{
	int e = error < 0 ? -error : error;

	if (level <= max_level) {
		char buf[2048];
		va_list ap;
		static int journal = -1;

		if (journal < 0)
			journal = stderr_is_journal();

		errno = e; /* for %m */
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		/* one line, whatever the names in it hold: a thread named
		 * "x\n<0>..." would otherwise log a record of its own, at the
		 * level it chose, and a terminal reading stderr acts on ESC */
		caad_utf8_sanitize(buf, false);
		if (use_syslog)
			syslog(level, "%s", buf);
		else if (journal)
			fprintf(stderr, "<%d>%s\n", level, buf);
		else
			fprintf(stderr, "%s\n", buf);
	}
	errno = e;
	return -e;
}
