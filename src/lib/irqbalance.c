/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Talking to irqbalance through its control socket (see irqbalance.h). */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "caad/irqbalance.h"
#include "caad/log.h"
#include "caad/macro.h"
#include "caad/sysfs.h"

static const char *const mode_names[_CAAD_IRQBALANCE_MODE_COUNT] = {
	[CAAD_IRQBALANCE_BAN] = "ban",
	[CAAD_IRQBALANCE_WARN] = "warn",
	[CAAD_IRQBALANCE_IGNORE] = "ignore",
};

const char *caad_irqbalance_mode_to_string(enum caad_irqbalance_mode m)
{
	return (unsigned)m < ARRAY_SIZE(mode_names) ? mode_names[m] : NULL;
}

int caad_irqbalance_mode_from_string(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (streq(s, mode_names[i]))
			return (int)i;
	return -EINVAL;
}

/* irqbalance<PID>.sock's PID still names an irqbalance (SYSROOT/proc/PID/comm). */
static bool sock_owner_runs(const char *sysroot, const char *name)
{
	_cleanup_free_ char *comm = NULL;
	char buf[32];
	unsigned long pid;
	char *end;

	errno = 0;
	pid = strtoul(name + 10, &end, 10);
	if (errno || end == name + 10 || !streq(end, ".sock") || pid == 0 || pid > INT_MAX)
		return false;
	if (caad_path(&comm, sysroot, "/proc/%lu/comm", pid) < 0)
		return false;
	return caad_read_line(comm, buf, sizeof(buf)) == 0 && streq(buf, "irqbalance");
}

int caad_irqbalance_find(const char *sysroot, char **ret)
{
	_cleanup_free_ char *dir = NULL, *best = NULL;
	struct timespec best_mtime = {};
	bool best_runs = false;
	struct dirent *de;
	DIR *d;

	if (caad_path(&dir, sysroot, "/run/irqbalance") < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	/*
	 * An irqbalance that was killed (SIGKILL, OOM) leaves its socket on
	 * /run: the one whose PID still runs irqbalance wins, then the newest.
	 */
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct stat st;
		bool runs;

		if (strncmp(de->d_name, "irqbalance", 10) != 0 || l < 15 || !streq(de->d_name + l - 5, ".sock"))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		runs = sock_owner_runs(sysroot, de->d_name);
		if (best && (best_runs > runs ||
		             (best_runs == runs && (best_mtime.tv_sec > st.st_mtim.tv_sec ||
		                                    (best_mtime.tv_sec == st.st_mtim.tv_sec &&
		                                     best_mtime.tv_nsec >= st.st_mtim.tv_nsec)))))
			continue;
		free(best);
		best = strdup(de->d_name);
		if (!best) {
			closedir(d);
			return -ENOMEM;
		}
		best_runs = runs;
		best_mtime = st.st_mtim;
	}
	closedir(d);
	if (!best)
		return -ENOENT;
	return asprintf(ret, "%s/%s", dir, best) < 0 ? -ENOMEM : 0;
}

/* A stuck irqbalance must not stall caad's loop: the whole exchange, not
 * each call, gets TRANSACT_USEC (a peer that sent a byte a second would
 * otherwise hold it for as long as it liked). */
#define TRANSACT_USEC 2000000

static uint64_t monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Socket timeouts of what is left until deadline (CLOCK_MONOTONIC, usec):
 * -ETIMEDOUT when nothing is. */
static int time_left(int fd, uint64_t deadline)
{
	uint64_t now = monotonic_usec();
	struct timeval tv;

	if (now >= deadline)
		return -ETIMEDOUT;
	tv = (struct timeval){ .tv_sec = (time_t)((deadline - now) / 1000000),
		               .tv_usec = (suseconds_t)((deadline - now) % 1000000) };
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

/* One request, the whole answer (irqbalance closes after replying). */
static int transact(const char *path, const char *request, char **reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cbuf[CMSG_SPACE(sizeof(struct ucred))] = {};
	struct iovec iov = { .iov_base = (void *)request, .iov_len = strlen(request) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	uint64_t deadline;
	int fd, r = 0;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	deadline = monotonic_usec() + TRANSACT_USEC;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = time_left(fd, deadline);
	if (r < 0)
		goto out;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto out;
	}
	/* irqbalance accepts only root, by the credentials of the message */
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(sizeof(struct ucred));
	*(struct ucred *)CMSG_DATA(cm) = (struct ucred){ .pid = getpid(), .uid = geteuid(), .gid = getegid() };
	r = time_left(fd, deadline);
	if (r < 0)
		goto out;
	if (sendmsg(fd, &msg, MSG_NOSIGNAL) < 0) {
		r = -errno;
		goto out;
	}
	/* Its answer, or just its close: then the request was handled. */
	for (;;) {
		ssize_t k;

		if (cap - len < 512) {
			char *n = realloc(buf, cap + 4096);
			if (!n) {
				r = -ENOMEM;
				goto out;
			}
			buf = n;
			cap += 4096;
		}
		r = time_left(fd, deadline);
		if (r < 0)
			goto out;
		k = read(fd, buf + len, cap - len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = -errno;
			goto out;
		}
		if (k == 0)
			break;
		len += (size_t)k;
		if (len > 1024 * 1024) {
			r = -EMSGSIZE;
			goto out;
		}
	}
	if (!reply)
		goto out;
	if (!buf)
		buf = strdup("");
	else
		buf[len] = 0;
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	*reply = TAKE_PTR(buf);
out:
	close(fd);
	return r;
}

/* Append IRQ number text (0..max, nothing else) to *irqs: -EINVAL when it
 * is not one, -ENOMEM. */
static int push_irq(int **irqs, size_t *n, const char *text, long max)
{
	char *end;
	long irq;
	int *m;

	errno = 0;
	irq = strtol(text, &end, 10);
	if (errno || *end || end == text || irq < 0 || irq > max)
		return -EINVAL;
	m = reallocarray(*irqs, *n + 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	*irqs = m;
	(*irqs)[(*n)++] = (int)irq;
	return 0;
}

int caad_irqbalance_get_banned(const char *socket_path, int **ret)
{
	_cleanup_free_ char *reply = NULL;
	_cleanup_free_ int *irqs = NULL;
	size_t n = 0;
	char *save = NULL;
	int r;

	r = transact(socket_path, "setup", &reply);
	if (r < 0)
		return r;
	if (strncmp(reply, "SLEEP ", 6) != 0)
		return log_warning_errno(EBADMSG, "irqbalance at %s: unexpected answer to setup: \"%.40s\"",
		                         socket_path, reply);
	/* "... IRQ <n> LOAD ... " per banned IRQ, until "BANNED <mask>" */
	for (char *tok = strtok_r(reply, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		char *num;

		if (streq(tok, "BANNED"))
			break;
		if (!streq(tok, "IRQ"))
			continue;
		num = strtok_r(NULL, " \n", &save);
		if (!num)
			break;
		r = push_irq(&irqs, &n, num, 1 << 20);
		if (r == -EINVAL)
			return log_warning_errno(EBADMSG, "irqbalance at %s: bad IRQ \"%s\" in its setup", socket_path,
			                         num);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(irqs);
	return (int)n;
}

/* The request that bans irqs[0..n): -E2BIG when it does not fit. */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The list in ascending order: irqbalance's parser reads numbers until one
 * is 0 (strtoul's "nothing"), so an IRQ 0 anywhere but first would end the
 * list there, and the IRQs after it would not be banned. */
static int ban_request(const int *irqs, size_t n, char **ret)
{
	_cleanup_free_ char *req = NULL;
	_cleanup_free_ int *sorted = n ? malloc(n * sizeof(int)) : NULL;
	size_t len = 0;
	FILE *f;

	if (n && !sorted)
		return -ENOMEM;
	if (n) {
		memcpy(sorted, irqs, n * sizeof(int));
		qsort(sorted, n, sizeof(int), cmp_int);
	}
	f = open_memstream(&req, &len);
	if (!f)
		return -ENOMEM;
	fputs("settings ban irqs", f);
	if (n == 0)
		fputs(" NONE", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, " %d", sorted[i]);
	if (fclose(f) != 0)
		return -ENOMEM;
	/* irqbalance reads one message of at most 500 bytes; its parser
	 * keeps 256 of them: too many IRQs cannot be banned this way */
	if (len >= 256 + strlen("settings ban irqs "))
		return -E2BIG;
	if (ret)
		*ret = TAKE_PTR(req);
	return 0;
}

int caad_irqbalance_set_banned(const char *socket_path, const int *irqs, size_t n)
{
	_cleanup_free_ char *req = NULL;
	int r = ban_request(irqs, n, &req);

	return r < 0 ? r : transact(socket_path, req, NULL);
}

struct caad_irqbalance_sync {
	char *sysroot;
	char *journal;  /* where the original list is kept while caad's bans are in, NULL none */
	char *path;     /* socket of the irqbalance we talk to */
	int *original;  /* its banned list before caad */
	size_t n_original;
	int *current;   /* caad's IRQs banned now (sorted) */
	size_t n_current;
	bool bans_in;   /* caad's bans may be in irqbalance (a send of them was tried, or a crashed
	                 * run's journal names it): its own list goes back even when caad bans none */
	bool warned;
	unsigned fails;     /* updates that failed in a row */
	uint64_t retry_at;  /* CLOCK_MONOTONIC usec: after two of them, not before (1, 2, 4 ... 32 s) */
	char *quiet;    /* the socket a failure was logged for: not again each scan */
	bool restore_said; /* a failed give-back was logged: not again until one succeeds */
};

int caad_irqbalance_sync_new(const char *sysroot, const char *journal, struct caad_irqbalance_sync **ret)
{
	struct caad_irqbalance_sync *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	if ((sysroot && !(s->sysroot = strdup(sysroot))) || (journal && !(s->journal = strdup(journal)))) {
		caad_irqbalance_sync_free(s);
		return -ENOMEM;
	}
	/* a journal the start could not give back (irqbalance busy): caad's
	 * old bans are in, to go back in any mode, not only once ban mode
	 * attaches (IrqBalance=warn or ignore never would) */
	if (journal && access(journal, F_OK) == 0)
		s->bans_in = true;
	*ret = s;
	return 0;
}

void caad_irqbalance_sync_free(struct caad_irqbalance_sync *s)
{
	if (!s)
		return;
	free(s->sysroot);
	free(s->journal);
	free(s->path);
	free(s->original);
	free(s->current);
	free(s->quiet);
	free(s);
}

/* Log a failure about socket once, until one succeeds. */
static bool first_failure(struct caad_irqbalance_sync *s, const char *socket)
{
	if (s->quiet && streq(s->quiet, socket))
		return false;
	free(s->quiet);
	s->quiet = strdup(socket);
	return true;
}

/*
 * The journal: "SOCKET<TAB>IRQ IRQ ...\n" (or NONE), irqbalance's own list,
 * written before caad first adds its bans: after a crash the next start
 * gives it back (caad_irqbalance_journal_restore()), and does not take
 * caad's old bans for irqbalance's own.
 */
static int journal_save(const struct caad_irqbalance_sync *s)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (!s->journal)
		return 0;
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "%s\t", s->path);
	if (s->n_original == 0)
		fputs("NONE", f);
	for (size_t i = 0; i < s->n_original; i++)
		fprintf(f, "%s%d", i ? " " : "", s->original[i]);
	fputc('\n', f);
	if (fclose(f) != 0)
		return -ENOMEM;
	r = caad_write_file_atomic(s->journal, text, len, 0600);
	if (r < 0)
		return log_error_errno(r, "Failed to write %s: %m", s->journal);
	return 0;
}

static void journal_drop(const struct caad_irqbalance_sync *s)
{
	if (s->journal && unlink(s->journal) < 0 && errno != ENOENT)
		log_warning_errno(errno, "Failed to remove %s: %m", s->journal);
}

/* Parse a journal: its socket, and the list (NULL and 0 for NONE). */
/* The journal's text: irqbalance's socket and its own bans. -EBADMSG for
 * what caad never writes (said by the callers: a start, and the scans
 * after it, which say it once). */
static int journal_parse(char *text, char **ret_socket, int **ret_irqs, size_t *ret_n)
{
	_cleanup_free_ int *irqs = NULL;
	char *tab = strchr(text, '\t'), *save = NULL;
	size_t n = 0;

	if (!tab || tab == text || strchr(text, '\n'))
		return -EBADMSG;
	*tab = '\0';
	if (!streq(tab + 1, "NONE"))
		for (char *t = strtok_r(tab + 1, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			int r = push_irq(&irqs, &n, t, INT_MAX);

			if (r == -EINVAL)
				return -EBADMSG;
			if (r < 0)
				return r;
		}
	*ret_socket = text;
	*ret_irqs = TAKE_PTR(irqs);
	*ret_n = n;
	return 0;
}

int caad_irqbalance_journal_restore(const char *journal)
{
	_cleanup_free_ char *text = NULL;
	const char *kind;
	_cleanup_free_ int *irqs = NULL;
	char *socket;
	size_t n;
	int r;

	r = caad_read_own_file(journal, &text, &kind);
	if (r == -ENOENT)
		return 0;
	if (r == -EBADFD)
		return log_warning_errno(r, "Failed to read %s: it is %s, which caad never writes: kept, remove it",
		                         journal, kind);
	if (r < 0)
		return log_warning_errno(r, "Failed to read %s, kept: %m", journal);
	r = journal_parse(text, &socket, &irqs, &n);
	if (r == -ENOMEM)
		return r;
	/* kept, as one that cannot be read: dropped, the scans after would
	 * take what irqbalance holds now (caad's old bans in it) for its own */
	if (r < 0)
		return log_warning_errno(r, "%s is not a socket and a list of IRQs, as caad writes it: kept (caad bans "
		                            "nothing in irqbalance while it is there), remove it", journal);
	r = caad_irqbalance_set_banned(socket, irqs, n);
	if (r == -ENOENT || r == -ECONNREFUSED)
		log_info("irqbalance of %s is gone, and the IRQs caad banned with it", socket);
	else if (r < 0) {
		/* kept: the next start tries again, and caad does not take its
		 * old bans for irqbalance's own meanwhile */
		return log_warning_errno(r, "Failed to give irqbalance at %s its banned IRQs back (%s kept): %m", socket,
		                         journal);
	} else
		log_notice("irqbalance at %s: its banned IRQs put back (%zu) from %s", socket, n, journal);
	if (unlink(journal) < 0 && errno != ENOENT)
		return log_warning_errno(errno, "Failed to remove %s: %m", journal);
	return r < 0 ? 0 : 1;
}

static bool in_list(const int *l, size_t n, int v)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == v)
			return true;
	return false;
}

/* Find irqbalance and remember its own bans, once per irqbalance. */
static int sync_attach(struct caad_irqbalance_sync *s)
{
	_cleanup_free_ char *path = NULL;
	int *orig = NULL, r;

	r = caad_irqbalance_find(s->sysroot, &path);
	if (r < 0)
		return r;
	if (s->path && streq(s->path, path))
		return 0;
	r = caad_irqbalance_get_banned(path, &orig);
	if (r < 0) {
		if (first_failure(s, path))
			log_warning_errno(r, "irqbalance runs (%s) but does not answer: it may move caad's IRQs: %m",
			                  path);
		return r;
	}
	/* A journal of this very irqbalance that a crashed run left, and the
	 * start could not give back: its list is the original, not what
	 * irqbalance holds now (caad's old bans among them). */
	if (s->journal) {
		_cleanup_free_ char *text = NULL;
		const char *kind;
		int *kept, k;
		char *socket;
		size_t n;

		/* kept but unreadable: irqbalance's own list is not known, and
		 * what it holds now has caad's old bans in it; saved as its
		 * own, they would stay for good */
		k = caad_read_own_file(s->journal, &text, &kind);
		if (k == 0) {
			k = journal_parse(text, &socket, &kept, &n);
			if (k == -EBADMSG)
				kind = "not a socket and a list of IRQs";
		}
		if (k < 0 && k != -ENOENT) {
			if (k != -ENOMEM && first_failure(s, path))
				log_warning_errno(k, "%s cannot be read%s%s, so irqbalance's own bans are not known: caad "
				                     "bans nothing in irqbalance (%s), which may move caad's IRQs: %m",
				                  s->journal, kind ? ": it is " : "", kind ?: "", path);
			free(orig);
			return k;
		}
		if (k == 0) {
			if (streq(socket, path)) {
				free(orig);
				orig = kept;
				r = (int)n;
				s->bans_in = true;
			} else {
				/* caad's bans are in another irqbalance, which
				 * this newer one replaces (an --oneshot run, say):
				 * that one's own list goes back first, else it
				 * keeps them for good (gone: they went with it) */
				int g = caad_irqbalance_set_banned(socket, kept, n);

				free(kept);
				if (g < 0 && g != -ENOENT && g != -ECONNREFUSED) {
					if (first_failure(s, socket))
						log_warning_errno(g, "Failed to give irqbalance at %s its banned IRQs back before "
						                     "caad moves to %s: %m", socket, path);
					free(orig);
					return g;
				}
				if (g >= 0)
					log_info("irqbalance's banned IRQs restored at %s (%zu): caad moves to %s", socket,
					         n, path);
				journal_drop(s);
				s->bans_in = false;
			}
		}
	}
	free(s->path);
	free(s->original);
	s->path = TAKE_PTR(path);
	s->original = orig;
	s->n_original = (size_t)r;
	s->n_current = 0;
	log_info("irqbalance found at %s (%d IRQs banned by others): banning the IRQs caad manages there",
	         s->path, r);
	return 0;
}

static int sync_send(struct caad_irqbalance_sync *s, const int *irqs, size_t n)
{
	_cleanup_free_ int *all = calloc(s->n_original + n + 1, sizeof(int));
	size_t k = 0;
	int r;

	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_original; i++)
		all[k++] = s->original[i];
	for (size_t i = 0; i < n; i++)
		if (!in_list(all, k, irqs[i]))
			all[k++] = irqs[i];
	/* too many to say: caad bans none (its own list only, where caad's
	 * may be in; the same list next scan would fail the same way: said
	 * once) */
	r = ban_request(all, k, NULL);
	if (r == -E2BIG) {
		log_warning_errno(r, "Too many IRQs to ban in irqbalance (%zu): it may move caad's IRQs", k);
		if (!s->bans_in)
			return 0;
		n = k = 0;
		for (size_t i = 0; i < s->n_original; i++)
			all[k++] = s->original[i];
	} else if (r < 0)
		return r;
	/* irqbalance's own list is journaled before caad's bans go in */
	if (n > 0) {
		r = journal_save(s);
		if (r < 0)
			return r;
		s->bans_in = true;
	}
	r = caad_irqbalance_set_banned(s->path, all, k);
	if (r == -E2BIG) {
		/* its own list alone does not fit: caad never banned there */
		s->bans_in = false;
		journal_drop(s);
		return 0;
	}
	if (r < 0) {
		/* irqbalance restarted or stopped: look for it again next time */
		if (first_failure(s, s->path))
			log_warning_errno(r, "Failed to update irqbalance's banned IRQs at %s: %m", s->path);
		free(s->path);
		s->path = NULL;
		return r;
	}
	if (n == 0) {
		journal_drop(s); /* its own list again */
		s->bans_in = false;
	}
	free(s->quiet);
	s->quiet = NULL;
	return 1;
}

/* From when the failed try ended (it may have waited out its 2 s): after
 * two in a row, 1 s, then 2, 4 ... 32 s. */
static int sync_failed(struct caad_irqbalance_sync *s, int r)
{
	s->fails++;
	if (s->fails > 1)
		s->retry_at = monotonic_usec() + (UINT64_C(1000000) << MIN(s->fails - 2, 5u));
	return r;
}

int caad_irqbalance_sync_update(struct caad_irqbalance_sync *s, enum caad_irqbalance_mode mode, const int *irqs,
                                size_t n)
{
	_cleanup_free_ int *want = NULL;
	int r;

	if (mode != CAAD_IRQBALANCE_BAN) {
		/* switched away from ban (reload): what caad banned goes back
		 * first, at every scan until it does, as often as sends are
		 * tried (below): each try may cost caad's loop 2 s */
		if (s->bans_in && s->fails > 1 && monotonic_usec() < s->retry_at)
			return 0;
		r = caad_irqbalance_sync_restore(s);
		if (r < 0)
			return sync_failed(s, r);
	}
	if (mode == CAAD_IRQBALANCE_IGNORE)
		return 0;
	if (mode == CAAD_IRQBALANCE_WARN) {
		_cleanup_free_ char *path = NULL;

		if (n > 0 && !s->warned && caad_irqbalance_find(s->sysroot, &path) == 0) {
			log_warning("irqbalance runs (%s) and may move the IRQs caad steers (IrqBalance=warn)", path);
			s->warned = true;
		}
		return 0;
	}

	want = n ? malloc(n * sizeof(int)) : NULL;
	if (n && !want)
		return -ENOMEM;
	if (n) { /* qsort(NULL, 0) is undefined (UBSan: nonnull) */
		memcpy(want, irqs, n * sizeof(int));
		qsort(want, n, sizeof(int), cmp_int);
	}
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || want[u - 1] != want[i])
			want[u++] = want[i];
	n = u;

	/* an irqbalance that keeps failing (stopped, busy) costs caad's loop
	 * up to 2 s a try: the first failure is tried again at the next scan,
	 * later ones 1, 2, 4 ... up to 32 s later */
	if (s->fails > 1 && monotonic_usec() < s->retry_at)
		return 0;
	r = sync_attach(s);
	if (r < 0 && r != -ENOENT)
		return sync_failed(s, r);
	if (r < 0)
		return 0;
	/* (none to ban where caad's may be in: its own list goes back) */
	if (n == s->n_current && (n == 0 ? !s->bans_in : memcmp(want, s->current, n * sizeof(int)) == 0))
		return 0;
	r = sync_send(s, want, n);
	if (r < 0)
		return sync_failed(s, r);
	s->fails = 0;
	/* r == 0: refused as too many; kept as sent, so that the same list
	 * is not offered (and warned about) again at every scan */
	free(s->current);
	s->current = TAKE_PTR(want);
	s->n_current = n;
	return r;
}

/* A give-back that failed with r: said once (it is tried again at every
 * scan, then every 32 s at most), until one succeeds. Returns r. */
static int restore_failed(struct caad_irqbalance_sync *s, int r)
{
	if (!s->restore_said)
		log_warning_errno(r, "Failed to give irqbalance its banned IRQs back%s%s (%s kept): %m",
		                  s->path ? " at " : "", s->path ?: "", s->journal ? s->journal : "no journal");
	s->restore_said = true;
	return r;
}

int caad_irqbalance_sync_restore(struct caad_irqbalance_sync *s)
{
	int r;

	if (!s || !s->bans_in)
		return 0;
	/* a send failed since (irqbalance busy, restarted): found again */
	if (!s->path) {
		r = sync_attach(s);
		if (r == -ENOENT)
			r = -ECONNREFUSED; /* none runs: gone, as below */
		else if (r < 0)
			return restore_failed(s, r);
	} else
		r = 0;
	if (r == 0)
		r = caad_irqbalance_set_banned(s->path, s->original, s->n_original);
	if (r == -ENOENT || r == -ECONNREFUSED) {
		/* irqbalance went away, and caad's bans with it */
		journal_drop(s);
		s->bans_in = false;
		free(s->current);
		s->current = NULL;
		s->n_current = 0;
		return 0;
	}
	if (r < 0)
		return restore_failed(s, r);
	journal_drop(s);
	s->bans_in = false;
	s->fails = 0;
	s->restore_said = false;
	free(s->quiet);
	s->quiet = NULL;
	log_info("irqbalance's banned IRQs restored (%zu)", s->n_original);
	free(s->current);
	s->current = NULL;
	s->n_current = 0;
	return 1;
}
