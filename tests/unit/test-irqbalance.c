/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * irqbalance's control socket, faked by a thread that speaks its protocol:
 * one message per connection, the sender's credentials checked, "setup"
 * answered with the banned IRQs, "settings ban irqs" replacing them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"

#include "caad/irqbalance.h"
#include "caad/macro.h"
#include "caad/sysfs.h"

struct fake {
	char root[64];
	char path[100];
	int listener;
	pthread_t thread;
	pthread_mutex_t lock;
	char banned[512];   /* space-separated, as irqbalance keeps them */
	char last[512];     /* last request */
	bool bogus_setup;   /* answer setup with garbage */
	bool drip;          /* answer setup a byte every 200 ms, for 8 s */
	bool saw_creds;     /* every request carried the caller's uid */
	unsigned requests;
};

static void *serve(void *p)
{
	struct fake *f = p;

	for (;;) {
		char buf[500], cbuf[CMSG_SPACE(sizeof(struct ucred))];
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		                      .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		ssize_t k;
		int c = accept(f->listener, NULL, NULL);

		if (c < 0)
			return NULL; /* listener closed: the test is over */
		k = recvmsg(c, &msg, 0);
		if (k <= 0) {
			close(c);
			continue;
		}
		buf[k] = 0;
		pthread_mutex_lock(&f->lock);
		f->requests++;
		cm = CMSG_FIRSTHDR(&msg);
		if (!cm || cm->cmsg_type != SCM_CREDENTIALS ||
		    ((struct ucred *)CMSG_DATA(cm))->uid != geteuid())
			f->saw_creds = false;
		snprintf(f->last, sizeof(f->last), "%s", buf);
		if (streq(buf, "setup")) {
			char reply[8192] = "SLEEP 10 ";
			char *save = NULL, copy[512];

			if (f->drip) {
				pthread_mutex_unlock(&f->lock);
				for (unsigned i = 0; i < 40 && send(c, "S", 1, MSG_NOSIGNAL) == 1; i++)
					usleep(200000);
				close(c);
				continue;
			}
			if (f->bogus_setup)
				snprintf(reply, sizeof(reply), "HELLO");
			else {
				snprintf(copy, sizeof(copy), "%s", f->banned);
				for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
					snprintf(reply + strlen(reply), sizeof(reply) - strlen(reply),
					         "IRQ %s LOAD 0 DIFF 0 CLASS 3 ", t);
				snprintf(reply + strlen(reply), sizeof(reply) - strlen(reply), "BANNED 00000000");
			}
			(void)!write(c, reply, strlen(reply));
		} else if (strncmp(buf, "settings ban irqs ", 18) == 0) {
			snprintf(f->banned, sizeof(f->banned), "%s", streq(buf + 18, "NONE") ? "" : buf + 18);
		}
		pthread_mutex_unlock(&f->lock);
		close(c);
	}
}

/* Another fake irqbalance below the same root, on irqbalance<pid>.sock. */
static int fake_start(struct fake *f, const char *root, unsigned pid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int one = 1;

	snprintf(f->root, sizeof(f->root), "%s", root);
	snprintf(f->path, sizeof(f->path), "%s/run/irqbalance/irqbalance%u.sock", f->root, pid);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	f->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->listener < 0 || bind(f->listener, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(f->listener, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 || listen(f->listener, 4) < 0)
		return -1;
	f->saw_creds = true;
	pthread_mutex_init(&f->lock, NULL);
	return pthread_create(&f->thread, NULL, serve, f) != 0 ? -1 : 0;
}

static void fake_stop(struct fake *f)
{
	shutdown(f->listener, SHUT_RDWR);
	close(f->listener);
	pthread_join(f->thread, NULL);
	unlink(f->path);
}

static int setup_fake(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int one = 1;

	if (!f)
		return -1;
	snprintf(f->root, sizeof(f->root), "/tmp/caad-test-irqb-XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/run", f->root);
	mkdir(f->path, 0755);
	snprintf(f->path, sizeof(f->path), "%s/run/irqbalance", f->root);
	mkdir(f->path, 0755);
	snprintf(f->path, sizeof(f->path), "%s/run/irqbalance/irqbalance4242.sock", f->root);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	f->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->listener < 0 || bind(f->listener, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(f->listener, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 || listen(f->listener, 4) < 0)
		return -1;
	snprintf(f->banned, sizeof(f->banned), "5 7");
	f->saw_creds = true;
	pthread_mutex_init(&f->lock, NULL);
	if (pthread_create(&f->thread, NULL, serve, f) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown_fake(void **state)
{
	struct fake *f = *state;
	char dir[128];

	shutdown(f->listener, SHUT_RDWR);
	close(f->listener);
	pthread_join(f->thread, NULL);
	unlink(f->path);
	snprintf(dir, sizeof(dir), "%s/run/irqbalance", f->root);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/run", f->root);
	rmdir(dir);
	rmdir(f->root);
	free(f);
	return 0;
}

/* A killed irqbalance's socket left on /run: the live one is found,
 * whichever the directory lists first; without /proc, the newest. */
static void test_find_skips_stale(void **state)
{
	struct fake *f = *state;
	char stale[100], comm[160], proc[160];
	struct timespec old[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
	int fds[2];

	for (int i = 0; i < 2; i++) {
		const char *name = i ? "irqbalance99999.sock" : "irqbalance1021.sock";
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		snprintf(stale, sizeof(stale), "%s/run/irqbalance/%s", f->root, name);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", stale);
		assert_true(fd >= 0);
		assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		fds[i] = fd; /* never listens: refuses connections, as a dead one's */
	}
	/* no proc/: the newest socket wins; make the live one the newest */
	for (int i = 0; i < 2; i++) {
		snprintf(stale, sizeof(stale), "%s/run/irqbalance/%s", f->root,
		         i ? "irqbalance99999.sock" : "irqbalance1021.sock");
		assert_int_equal(utimensat(AT_FDCWD, stale, old, AT_SYMLINK_NOFOLLOW), 0);
	}
	_cleanup_free_ char *path = NULL;
	assert_int_equal(caad_irqbalance_find(f->root, &path), 0);
	assert_string_equal(path, f->path);
	free(path);
	path = NULL;

	/* the stale ones made newest (the live one strictly older: a tie
	 * would go by the directory's order): with proc/4242/comm
	 * "irqbalance", the live one still wins */
	struct timespec older[2] = { { .tv_sec = 999999000 }, { .tv_sec = 999999000 } };
	assert_int_equal(utimensat(AT_FDCWD, f->path, older, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(caad_irqbalance_find(f->root, &path), 0);
	assert_string_not_equal(path, f->path); /* without /proc: the newer stale one */
	free(path);
	path = NULL;
	snprintf(proc, sizeof(proc), "%s/proc", f->root);
	assert_int_equal(mkdir(proc, 0755), 0);
	snprintf(proc, sizeof(proc), "%s/proc/4242", f->root);
	assert_int_equal(mkdir(proc, 0755), 0);
	snprintf(comm, sizeof(comm), "%s/proc/4242/comm", f->root);
	FILE *fp = fopen(comm, "we");
	assert_non_null(fp);
	fputs("irqbalance\n", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(caad_irqbalance_find(f->root, &path), 0);
	assert_string_equal(path, f->path);

	unlink(comm);
	rmdir(proc);
	snprintf(proc, sizeof(proc), "%s/proc", f->root);
	rmdir(proc);
	for (int i = 0; i < 2; i++) {
		close(fds[i]);
		snprintf(stale, sizeof(stale), "%s/run/irqbalance/%s", f->root,
		         i ? "irqbalance99999.sock" : "irqbalance1021.sock");
		unlink(stale);
	}
}

static void test_ban_and_restore(void **state)
{
	struct fake *f = *state;
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ int *orig = NULL;
	int n;

	assert_int_equal(caad_irqbalance_find(f->root, &path), 0);
	assert_string_equal(path, f->path);

	/* what the admin banned stays banned: caad adds to it */
	n = caad_irqbalance_get_banned(path, &orig);
	assert_int_equal(n, 2);
	assert_int_equal(orig[0], 5);
	assert_int_equal(orig[1], 7);

	int mine[] = { 5, 7, 120, 121 };
	assert_int_equal(caad_irqbalance_set_banned(path, mine, ARRAY_SIZE(mine)), 0);
	assert_string_equal(f->last, "settings ban irqs 5 7 120 121");
	assert_string_equal(f->banned, "5 7 120 121");

	/* an IRQ 0 goes first, wherever it is in the list: irqbalance's
	 * parser stops at a 0 */
	int with0[] = { 5, 0, 121, 120 };
	assert_int_equal(caad_irqbalance_set_banned(path, with0, ARRAY_SIZE(with0)), 0);
	assert_string_equal(f->last, "settings ban irqs 0 5 120 121");

	/* back to the original list, then to none */
	assert_int_equal(caad_irqbalance_set_banned(path, orig, (size_t)n), 0);
	assert_string_equal(f->banned, "5 7");
	assert_int_equal(caad_irqbalance_set_banned(path, NULL, 0), 0);
	assert_string_equal(f->last, "settings ban irqs NONE");
	assert_string_equal(f->banned, "");
	free(orig);
	orig = NULL;
	assert_int_equal(caad_irqbalance_get_banned(path, &orig), 0);

	assert_true(f->saw_creds);
	assert_int_equal(f->requests, 6);
}

static void test_bad_answers(void **state)
{
	struct fake *f = *state;
	_cleanup_free_ int *irqs = NULL;
	int many[200];

	f->bogus_setup = true;
	assert_int_equal(caad_irqbalance_get_banned(f->path, &irqs), -EBADMSG);
	assert_null(irqs);

	/* irqbalance keeps 256 bytes of the list: refuse rather than truncate */
	for (size_t i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = 1000 + (int)i;
	f->last[0] = 0;
	assert_int_equal(caad_irqbalance_set_banned(f->path, many, ARRAY_SIZE(many)), -E2BIG);
	assert_string_equal(f->last, "");
}

/* The daemon's view: ban what caad manages on top of the admin's list,
 * only when it changes, and give the admin's list back on restore. */
/* A peer that answers a byte at a time: the whole exchange is bounded
 * (2 s), not each read, which such a peer would renew for as long as it
 * liked. */
static void test_dripping_peer(void **state)
{
	struct fake *f = *state;
	struct timespec t0, t1;
	int *irqs = NULL;

	f->drip = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_true(caad_irqbalance_get_banned(f->path, &irqs) < 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_null(irqs);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (secs > 4)
		fail_msg("a dripping irqbalance held caad for %.1f s", secs);
	f->drip = false;
}

static void test_sync(void **state)
{
	struct fake *f = *state;
	struct caad_irqbalance_sync *s = NULL;
	int a[] = { 121, 120, 121 }, b[] = { 120 };

	assert_int_equal(caad_irqbalance_sync_new(f->root, NULL, &s), 0);
	assert_int_equal(caad_irqbalance_sync_restore(s), 0); /* nothing banned yet */
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
	assert_string_equal(f->banned, "5 7 120 121");
	unsigned before = f->requests;
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 0); /* unchanged: no request */
	assert_int_equal(f->requests, before);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, b, ARRAY_SIZE(b)), 1);
	assert_string_equal(f->banned, "5 7 120");
	/* no IRQ left to manage: caad's bans go, the admin's stay (UBSan once
	 * caught a qsort(NULL, 0) here) */
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, NULL, 0), 1);
	assert_string_equal(f->banned, "5 7");
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, b, ARRAY_SIZE(b)), 1);
	assert_string_equal(f->banned, "5 7 120");
	assert_int_equal(caad_irqbalance_sync_restore(s), 1);
	assert_string_equal(f->banned, "5 7");
	/* banned again, then IrqBalance=warn on reload: the bans go back */
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, b, ARRAY_SIZE(b)), 1);
	assert_string_equal(f->banned, "5 7 120");
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_WARN, b, ARRAY_SIZE(b)), 0);
	assert_string_equal(f->banned, "5 7");
	caad_irqbalance_sync_free(s);

	/* warn and ignore never talk to irqbalance */
	before = f->requests;
	assert_int_equal(caad_irqbalance_sync_new(f->root, NULL, &s), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_WARN, a, ARRAY_SIZE(a)), 0);
	caad_irqbalance_sync_free(s);
	assert_int_equal(caad_irqbalance_sync_new(f->root, NULL, &s), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_IGNORE, a, ARRAY_SIZE(a)), 0);
	caad_irqbalance_sync_free(s);
	assert_int_equal(f->requests, before);
	assert_string_equal(f->banned, "5 7");

	/* no irqbalance: nothing to do, no error */
	assert_int_equal(caad_irqbalance_sync_new("/nonexistent-caad-root", NULL, &s), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 0);
	assert_int_equal(caad_irqbalance_sync_restore(s), 0);
	caad_irqbalance_sync_free(s);
}

/*
 * Switched away from ban (a reload to warn) while irqbalance hangs (its
 * socket listens, nobody answers: each try waits out 2 s): caad's bans go
 * back as soon as it answers, but a hung one is not tried at every scan.
 */
static void test_sync_restore_backoff(void **state)
{
	struct fake *f = *state;
	struct caad_irqbalance_sync *s = NULL;
	_cleanup_free_ char *journal = NULL, *away = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int a[] = { 120 }, hung;

	assert_true(asprintf(&journal, "%s/irqbalance-journal", f->root) > 0);
	assert_true(asprintf(&away, "%s.away", f->path) > 0);
	assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
	assert_int_equal(rename(f->path, away), 0);
	hung = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(hung >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	assert_int_equal(bind(hung, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(hung, 8), 0);
	struct capture cap;
	capture_begin(&cap, f->root);
	assert_true(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_WARN, NULL, 0) < 0);
	assert_true(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_WARN, NULL, 0) < 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_WARN, NULL, 0), 0); /* not tried */
	_cleanup_free_ char *log = capture_end(&cap);
	/* the failure said once, not at each try */
	if (count_substr(log, "Failed to give irqbalance its banned IRQs back") != 1)
		fail_msg("the failed give-back was not said once:\n%s", log);
	close(hung);
	unlink(f->path);
	assert_int_equal(rename(away, f->path), 0);
	assert_string_equal(f->banned, "5 7 120");
	assert_int_equal(caad_irqbalance_sync_restore(s), 1); /* the exit tries anyway */
	assert_string_equal(f->banned, "5 7");
	caad_irqbalance_sync_free(s);
}

/*
 * A send that failed (irqbalance away or busy for a moment) may leave
 * caad's bans in it: they go at the next update that bans none, or at the
 * restore, which finds irqbalance again. Bans that do not fit: caad's go,
 * and a list of irqbalance's own that does not fit alone is never
 * touched nor journaled.
 */
static void test_sync_failures(void **state)
{
	struct fake *f = *state;
	struct caad_irqbalance_sync *s = NULL;
	_cleanup_free_ char *journal = NULL, *away = NULL;
	int a[] = { 120 }, many[60];

	assert_true(asprintf(&journal, "%s/irqbalance-journal", f->root) > 0);
	assert_true(asprintf(&away, "%s.away", f->path) > 0);
	assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
	for (unsigned how = 0; how < 2; how++) {
		assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
		assert_string_equal(f->banned, "5 7 120");
		/* the unban fails: irqbalance's socket does not answer for a
		 * moment (bound, not listening: ECONNREFUSED) */
		{
			struct sockaddr_un sa = { .sun_family = AF_UNIX };
			int dead = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

			assert_int_equal(rename(f->path, away), 0);
			snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
			assert_true(dead >= 0);
			assert_int_equal(bind(dead, (struct sockaddr *)&sa, sizeof(sa)), 0);
			assert_true(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, NULL, 0) < 0);
			close(dead);
			assert_int_equal(rename(away, f->path), 0);
		}
		assert_string_equal(f->banned, "5 7 120");
		/* the next scan, none to ban still; or the exit */
		if (how == 0)
			assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, NULL, 0), 1);
		else
			assert_int_equal(caad_irqbalance_sync_restore(s), 1);
		assert_string_equal(f->banned, "5 7");
		assert_int_equal(access(journal, F_OK), -1);
	}

	/* failing again and again: tried at the next scan once, then not
	 * before a second has passed (each try may cost caad's loop 2 s);
	 * the exit tries anyway */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int dead = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
		assert_int_equal(rename(f->path, away), 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
		assert_true(dead >= 0);
		assert_int_equal(bind(dead, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_true(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, NULL, 0) < 0);
		assert_true(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, NULL, 0) < 0);
		assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, NULL, 0), 0); /* not tried */
		close(dead);
		assert_int_equal(rename(away, f->path), 0);
		assert_string_equal(f->banned, "5 7 120");
		assert_int_equal(caad_irqbalance_sync_restore(s), 1);
		assert_string_equal(f->banned, "5 7");
	}

	/* caad's bans in, then more than fit: caad's go, irqbalance's stay */
	for (size_t i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = 1000 + (int)i;
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
	assert_string_equal(f->banned, "5 7 120");
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, many, ARRAY_SIZE(many)), 1);
	assert_string_equal(f->banned, "5 7");
	assert_int_equal(access(journal, F_OK), -1);
	assert_int_equal(caad_irqbalance_sync_restore(s), 0); /* nothing of caad's in it */
	caad_irqbalance_sync_free(s);

	/* irqbalance's own list alone does not fit: never touched, nothing journaled */
	{
		char own[512] = "";

		for (size_t i = 0; i < ARRAY_SIZE(many); i++)
			snprintf(own + strlen(own), sizeof(own) - strlen(own), "%s%d", i ? " " : "", many[i]);
		snprintf(f->banned, sizeof(f->banned), "%s", own);
		assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
		unsigned before = f->requests;
		assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 0);
		assert_int_equal(f->requests, before + 1); /* its setup only */
		assert_int_equal(access(journal, F_OK), -1);
		assert_int_equal(caad_irqbalance_sync_restore(s), 0);
		assert_string_equal(f->banned, own);
		caad_irqbalance_sync_free(s);
	}
}

/* A second irqbalance (an --oneshot run) newer than the one caad banned
 * in: caad moves to it, and gives the first its own list back before; and
 * back again when it is gone. */
static void test_sync_second_irqbalance(void **state)
{
	struct fake *f = *state, g = {};
	struct caad_irqbalance_sync *s = NULL;
	_cleanup_free_ char *journal = NULL;
	int a[] = { 120 };

	assert_true(asprintf(&journal, "%s/irqbalance-journal", f->root) > 0);
	assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
	assert_string_equal(f->banned, "5 7 120");

	usleep(20000); /* a newer socket */
	snprintf(g.banned, sizeof(g.banned), "9");
	assert_int_equal(fake_start(&g, f->root, 5000), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
	assert_string_equal(g.banned, "9 120");
	assert_string_equal(f->banned, "5 7");

	/* the second one gone: back to the first, whose own list it is */
	fake_stop(&g);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
	assert_string_equal(f->banned, "5 7 120");
	assert_int_equal(caad_irqbalance_sync_restore(s), 1);
	assert_string_equal(f->banned, "5 7");
	caad_irqbalance_sync_free(s);
}

/* The journal: irqbalance's own list, kept while caad's bans are in. */
static void test_sync_journal(void **state)
{
	struct fake *f = *state;
	struct caad_irqbalance_sync *s = NULL;
	_cleanup_free_ char *journal = NULL, *text = NULL, *want = NULL;
	int a[] = { 120 }, b[] = { 121 }, many[300];

	assert_true(asprintf(&journal, "%s/irqbalance-journal", f->root) > 0);
	assert_true(asprintf(&want, "%s\t5 7", f->path) > 0);

	/* banned: the journal holds the list before */
	assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
	assert_string_equal(f->banned, "5 7 120");
	assert_int_equal(caad_read_file(journal, &text), 0);
	assert_string_equal(text, want);
	free(text);
	text = NULL;
	caad_irqbalance_sync_free(s); /* a crash: nothing given back */
	assert_string_equal(f->banned, "5 7 120");

	/* a start that could not give it back takes the journal's list for
	 * irqbalance's own, not what irqbalance holds (caad's 120 in it) */
	assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, b, ARRAY_SIZE(b)), 1);
	assert_string_equal(f->banned, "5 7 121");
	caad_irqbalance_sync_free(s); /* a crash again */

	/* a start in warn or ignore mode that could not give it back at
	 * first (irqbalance busy) gives it back at its first update */
	for (int mode = CAAD_IRQBALANCE_WARN; mode <= CAAD_IRQBALANCE_IGNORE; mode++) {
		assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
		assert_int_equal(caad_irqbalance_sync_update(s, mode, b, ARRAY_SIZE(b)), 0);
		assert_string_equal(f->banned, "5 7");
		assert_int_equal(access(journal, F_OK), -1);
		caad_irqbalance_sync_free(s);
		/* (crashed again, with 121 in) */
		assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
		assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, b, ARRAY_SIZE(b)), 1);
		assert_string_equal(f->banned, "5 7 121");
		caad_irqbalance_sync_free(s);
	}

	/* the next start gives the list back and drops the journal */
	assert_int_equal(caad_irqbalance_journal_restore(journal), 1);
	assert_string_equal(f->banned, "5 7");
	assert_int_equal(access(journal, F_OK), -1);
	assert_int_equal(caad_irqbalance_journal_restore(journal), 0);

	/* a clean restore drops it too; no IRQs left to ban, likewise */
	assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
	assert_int_equal(access(journal, F_OK), 0);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, NULL, 0), 1);
	assert_int_equal(access(journal, F_OK), -1);
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, a, ARRAY_SIZE(a)), 1);
	assert_int_equal(caad_irqbalance_sync_restore(s), 1);
	assert_string_equal(f->banned, "5 7");
	assert_int_equal(access(journal, F_OK), -1);

	/* too many IRQs: refused once, not offered again at every scan */
	for (size_t i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = 1000 + (int)i;
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, many, ARRAY_SIZE(many)), 0);
	unsigned before = f->requests;
	assert_int_equal(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, many, ARRAY_SIZE(many)), 0);
	assert_int_equal(f->requests, before);
	assert_string_equal(f->banned, "5 7");
	caad_irqbalance_sync_free(s);

	/* an irqbalance that is gone took the bans with it */
	free(text);
	assert_true(asprintf(&text, "%s/run/irqbalance/irqbalance9999.sock\t1 2\n", f->root) > 0);
	assert_int_equal(caad_write_file_atomic(journal, text, strlen(text), 0600), 0);
	assert_int_equal(caad_irqbalance_journal_restore(journal), 0);
	assert_int_equal(access(journal, F_OK), -1);
	assert_string_equal(f->banned, "5 7");

	/* one that caad never writes (by hand, or of a newer caad): kept, as
	 * one that cannot be read, and nothing banned while it is there;
	 * dropped, what irqbalance holds (caad's old 120 in it) would be
	 * saved as its own, and stay banned for good */
	{
		_cleanup_free_ char *bad_irq = NULL;

		assert_true(asprintf(&bad_irq, "%s/run/irqbalance/irqbalance1.sock\t5 x", f->root) > 0);
		const char *const junk[] = { "junk", "\t1 2", bad_irq };

		for (size_t i = 0; i < ARRAY_SIZE(junk); i++) {
			free(text);
			assert_non_null(text = strdup(junk[i]));
			assert_int_equal(caad_write_file_atomic(journal, text, strlen(text), 0600), 0);
			assert_int_equal(caad_irqbalance_journal_restore(journal), -EBADMSG);
			assert_int_equal(access(journal, F_OK), 0);
			snprintf(f->banned, sizeof(f->banned), "5 7 120");
			assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
			assert_true(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, b, ARRAY_SIZE(b)) <= 0);
			assert_true(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, b, ARRAY_SIZE(b)) <= 0);
			assert_string_equal(f->banned, "5 7 120");
			caad_irqbalance_sync_free(s);
			assert_int_equal(access(journal, F_OK), 0);
		}
		assert_int_equal(unlink(journal), 0);
		snprintf(f->banned, sizeof(f->banned), "5 7");
	}

	/* an irqbalance that does not answer (it listens, never accepts): the
	 * journal is kept for the next start, and this one goes on (no error:
	 * caad's own journal, restored next, must not wait on irqbalance) */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		_cleanup_close_ int mute = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/run/irqbalance/irqbalance77.sock", f->root);
		assert_true(mute >= 0);
		assert_int_equal(bind(mute, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_int_equal(listen(mute, 4), 0);
		free(text);
		assert_true(asprintf(&text, "%s\t1 2\n", sa.sun_path) > 0);
		assert_int_equal(caad_write_file_atomic(journal, text, strlen(text), 0600), 0);
		assert_true(caad_irqbalance_journal_restore(journal) < 0);
		assert_int_equal(access(journal, F_OK), 0);
		assert_int_equal(unlink(journal), 0);
		assert_int_equal(unlink(sa.sun_path), 0);
	}

	/* a kept journal that cannot be read (a symlink to itself: ELOOP,
	 * where a write would replace it): irqbalance's own list is not
	 * known, so nothing is banned there, and the journal is not replaced
	 * by what irqbalance holds (caad's old bans in it) */
	{
		struct stat st;

		assert_int_equal(symlink(journal, journal), 0);
		assert_true(caad_irqbalance_journal_restore(journal) < 0);
		snprintf(f->banned, sizeof(f->banned), "5 7 120"); /* caad's 120 from the crashed run */
		assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
		assert_true(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, b, ARRAY_SIZE(b)) <= 0);
		assert_string_equal(f->banned, "5 7 120");
		caad_irqbalance_sync_free(s);
		assert_int_equal(lstat(journal, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		assert_int_equal(unlink(journal), 0);
	}

	/* a FIFO where the journal should be: an error at once, not a start
	 * that waits on a writer; kept, and nothing banned with it */
	{
		struct stat st;

		assert_int_equal(mkfifo(journal, 0600), 0);
		assert_int_equal(caad_irqbalance_journal_restore(journal), -EBADFD);
		assert_int_equal(caad_irqbalance_sync_new(f->root, journal, &s), 0);
		assert_true(caad_irqbalance_sync_update(s, CAAD_IRQBALANCE_BAN, b, ARRAY_SIZE(b)) <= 0);
		caad_irqbalance_sync_free(s);
		assert_int_equal(lstat(journal, &st), 0);
		assert_true(S_ISFIFO(st.st_mode));
		assert_int_equal(unlink(journal), 0);
	}
}

static void test_absent(void **state)
{
	char *path = NULL;
	_cleanup_free_ int *irqs = NULL;

	assert_int_equal(caad_irqbalance_find("/nonexistent-caad-root", &path), -ENOENT);
	assert_null(path);
	assert_true(caad_irqbalance_get_banned("/nonexistent-caad-root/irqbalance1.sock", &irqs) < 0);

	assert_int_equal(caad_irqbalance_mode_from_string("ban"), CAAD_IRQBALANCE_BAN);
	assert_int_equal(caad_irqbalance_mode_from_string("warn"), CAAD_IRQBALANCE_WARN);
	assert_int_equal(caad_irqbalance_mode_from_string("ignore"), CAAD_IRQBALANCE_IGNORE);
	assert_int_equal(caad_irqbalance_mode_from_string("Ban"), -EINVAL);
	assert_string_equal(caad_irqbalance_mode_to_string(CAAD_IRQBALANCE_WARN), "warn");
	assert_null(caad_irqbalance_mode_to_string(_CAAD_IRQBALANCE_MODE_COUNT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_find_skips_stale, setup_fake, teardown_fake),
		cmocka_unit_test_setup_teardown(test_ban_and_restore, setup_fake, teardown_fake),
		cmocka_unit_test_setup_teardown(test_bad_answers, setup_fake, teardown_fake),
		cmocka_unit_test_setup_teardown(test_sync, setup_fake, teardown_fake),
		cmocka_unit_test_setup_teardown(test_dripping_peer, setup_fake, teardown_fake),
		cmocka_unit_test_setup_teardown(test_sync_journal, setup_fake, teardown_fake),
		cmocka_unit_test_setup_teardown(test_sync_second_irqbalance, setup_fake, teardown_fake),
		cmocka_unit_test_setup_teardown(test_sync_failures, setup_fake, teardown_fake),
		cmocka_unit_test_setup_teardown(test_sync_restore_backoff, setup_fake, teardown_fake),
		cmocka_unit_test(test_absent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
