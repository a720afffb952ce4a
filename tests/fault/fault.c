/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libcaadfault.so: fault injection for the integration tests, by LD_PRELOAD
 * into the real caad. A fake sysroot is made of regular files that root may
 * always write; this makes chosen opens and writes fail as the kernel's
 * procfs and sysfs do (EIO of a managed IRQ, EINVAL of an offline CPU,
 * ENOSPC of exhausted vectors, ...), or makes a file vanish between caad's
 * read and its write.
 *
 *   CAAD_FAULTS="RULE[,RULE...]"   RULE = SUFFIX:OP:ERRNO[:SKIP[:TIMES]]
 *     SUFFIX  the end of the path as caad opens it, e.g.
 *             "irq/100/smp_affinity_list" (without ':' or ',')
 *     OP      open    opening it for writing fails with ERRNO
 *             write   write(2) to it fails with ERRNO (the open succeeds)
 *             read    opening it for reading fails with ERRNO
 *             vanish  it is unlinked as it is opened for writing, so the
 *                     open fails with ENOENT (ERRNO is not used: write ENOENT)
 *             slow    opening it for writing takes ERRNO milliseconds more,
 *                     then succeeds (a write that holds caad up)
 *             bpf     the bpf(2) call of this command, through libbpf's
 *                     syscall(), fails with ERRNO: SUFFIX is the command's
 *                     name less "BPF_", in lower case, e.g.
 *                     "map_lookup_and_delete_batch" (the flows handed over,
 *                     which caad drains at every scan where the kernel has
 *                     no map element iterator)
 *             readfd  read(2) fails with ERRNO on an fd whose /proc/self/fd
 *                     link ends with SUFFIX, whatever opened it: e.g.
 *                     "bpf_iter" for the BPF iterators caad reads its flow
 *                     table through (made by a bpf(2) call, not an open)
 *     ERRNO   a name (EIO, EINVAL, ENOSPC, ...) or a number (slow: milliseconds)
 *     SKIP    let the first SKIP matching calls through (default 0)
 *     TIMES   then fail this many (default 0: every one)
 *   CAAD_FAULTS_LOG=FILE   append "OP ERRNO PATH" for each injected fault
 *   CAAD_FAULTS_THREAD=1   start an idle thread as caad loads its hwloc
 *                          topology, as a library does there (hwloc's GPU
 *                          plugins load the vendor's driver, which starts
 *                          threads): one that took signals would kill caad
 *
 * Only the libc entry points caad's sysfs.c uses are wrapped (open,
 * openat, their 64-bit and fortified forms, write, close), read, and
 * syscall() for bpf(2).
 */
/* meson's -D_FILE_OFFSET_BITS=64 renames open to open64 in the headers:
 * here both are defined, as themselves */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum op { OP_OPEN, OP_WRITE, OP_READ, OP_VANISH, OP_READFD, OP_SLOW, OP_BPF };

struct rule {
	char suffix[256];
	enum op op;
	int error;
	unsigned skip, times; /* times 0: always */
	unsigned seen, fired;
};

#define RULES_MAX 16
#define FDS_MAX 4096

static struct rule rules[RULES_MAX];
static size_t n_rules;
static bool loaded, any_readfd, any_bpf;
static signed char fd_rule[FDS_MAX]; /* fd -> 1 + index of its "write" rule, 0 none */
static bool fd_trunc[FDS_MAX];       /* O_TRUNC held back until a write goes through */

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_read)(int, void *, size_t);
static int (*real_close)(int);
static long (*real_syscall)(long, ...);

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{ "EPERM", EPERM },   { "ENOENT", ENOENT }, { "ESRCH", ESRCH },         { "EIO", EIO },
	{ "ENODEV", ENODEV }, { "EINVAL", EINVAL }, { "ENOSPC", ENOSPC },       { "EROFS", EROFS },
	{ "EACCES", EACCES }, { "ERANGE", ERANGE }, { "EOVERFLOW", EOVERFLOW }, { "EBUSY", EBUSY },
	{ "ENXIO", ENXIO },   { "EFAULT", EFAULT }, { "ENOMEM", ENOMEM },       { "EAGAIN", EAGAIN },
};

static const char *errno_name(int e)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (errnos[i].value == e)
			return errnos[i].name;
	return "E?";
}

static void die(const char *what, const char *rule)
{
	fprintf(stderr, "libcaadfault: %s in CAAD_FAULTS rule \"%s\"\n", what, rule);
	abort();
}

static void parse_rule(char *text)
{
	char *field[5] = {}, *save = NULL, *copy = strdup(text);
	size_t n = 0;
	struct rule *r;

	if (!copy)
		abort();
	for (char *f = strtok_r(text, ":", &save); f && n < 5; f = strtok_r(NULL, ":", &save))
		field[n++] = f;
	if (n < 3)
		die("want SUFFIX:OP:ERRNO[:SKIP[:TIMES]]", copy);
	if (n_rules == RULES_MAX)
		die("too many rules", copy);
	r = &rules[n_rules++];
	if (strlen(field[0]) >= sizeof(r->suffix))
		die("suffix too long", copy);
	strcpy(r->suffix, field[0]);
	if (!strcmp(field[1], "open"))
		r->op = OP_OPEN;
	else if (!strcmp(field[1], "write"))
		r->op = OP_WRITE;
	else if (!strcmp(field[1], "read"))
		r->op = OP_READ;
	else if (!strcmp(field[1], "vanish"))
		r->op = OP_VANISH;
	else if (!strcmp(field[1], "readfd"))
		r->op = OP_READFD;
	else if (!strcmp(field[1], "slow"))
		r->op = OP_SLOW;
	else if (!strcmp(field[1], "bpf"))
		r->op = OP_BPF;
	else
		die("unknown OP (open, write, read, vanish, readfd, slow, bpf)", copy);
	any_readfd |= r->op == OP_READFD;
	any_bpf |= r->op == OP_BPF;
	r->error = 0;
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (!strcmp(field[2], errnos[i].name))
			r->error = errnos[i].value;
	if (!r->error)
		r->error = atoi(field[2]);
	if (r->error <= 0)
		die("unknown ERRNO", copy);
	r->skip = n > 3 ? (unsigned)strtoul(field[3], NULL, 10) : 0;
	r->times = n > 4 ? (unsigned)strtoul(field[4], NULL, 10) : 0;
	free(copy);
}

static void load(void)
{
	const char *env;
	char *text, *save = NULL;

	if (loaded)
		return;
	loaded = true;
	real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	real_open64 = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
	real_openat = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	real_openat64 = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
	real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (!real_open || !real_open64 || !real_openat || !real_openat64 || !real_write || !real_close || !real_read ||
	    !real_syscall)
		abort();
	env = getenv("CAAD_FAULTS");
	if (!env || !*env)
		return;
	text = strdup(env);
	if (!text)
		abort();
	for (char *r = strtok_r(text, ",", &save); r; r = strtok_r(NULL, ",", &save))
		parse_rule(r);
	free(text);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Whether this matching call is one to fail (counts it). */
static bool fires(struct rule *r)
{
	r->seen++;
	if (r->seen <= r->skip)
		return false;
	if (r->times && r->fired >= r->times)
		return false;
	r->fired++;
	return true;
}

static void note(const struct rule *r, const char *path)
{
	static const char *const ops[] = { "open", "write", "read", "vanish", "readfd", "slow", "bpf" };
	const char *log = getenv("CAAD_FAULTS_LOG");
	char line[4200];
	int fd, n;

	if (!log || !*log)
		return;
	if (r->op == OP_SLOW)
		n = snprintf(line, sizeof(line), "%s %dms %s\n", ops[r->op], r->error, path);
	else
		n = snprintf(line, sizeof(line), "%s %s %s\n", ops[r->op],
		             errno_name(r->op == OP_VANISH ? ENOENT : r->error), path);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	fd = real_open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	(void)!real_write(fd, line, (size_t)n);
	real_close(fd);
}

/* What fd names (its /proc/self/fd link) into path; false when unknown. */
static bool fd_path(int fd, char *path, size_t size)
{
	char link[64];
	ssize_t k;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	k = readlink(link, path, size - 1);
	path[k > 0 ? k : 0] = 0;
	return k > 0;
}

/* Before the real open: -1 with errno set when this open is to fail. */
static int before_open(const char *path, int flags)
{
	bool writing = (flags & O_ACCMODE) != O_RDONLY;

	load();
	for (size_t i = 0; path && i < n_rules; i++) {
		struct rule *r = &rules[i];

		if (r->op == OP_READFD || r->op == OP_BPF || !ends_with(path, r->suffix))
			continue;
		if (r->op == OP_READ ? writing : (!writing || r->op == OP_WRITE))
			continue;
		if (!fires(r))
			continue;
		note(r, path);
		if (r->op == OP_VANISH) {
			(void)unlink(path); /* the open below finds nothing */
			return 0;
		}
		if (r->op == OP_SLOW) {
			struct timespec t = { r->error / 1000, (long)(r->error % 1000) * 1000000 };

			while (nanosleep(&t, &t) < 0 && errno == EINTR)
				;
			return 0;
		}
		errno = r->error;
		return -1;
	}
	return 0;
}

/* The "write" rule of a file opened for writing, or NULL. */
static struct rule *write_rule(const char *path, int flags)
{
	if ((flags & O_ACCMODE) == O_RDONLY || !path)
		return NULL;
	for (size_t i = 0; i < n_rules; i++)
		if (rules[i].op == OP_WRITE && ends_with(path, rules[i].suffix))
			return &rules[i];
	return NULL;
}

/* procfs and sysfs ignore O_TRUNC, and a refused write leaves the old
 * value: for a file with a "write" rule, truncate only as a write passes. */
static int open_flags(const char *path, int flags)
{
	load();
	return write_rule(path, flags) ? flags & ~O_TRUNC : flags;
}

/* After a successful open: remember the fd of a file with a "write" rule. */
static int after_open(const char *path, int flags, int fd)
{
	struct rule *r;

	if (fd < 0 || fd >= FDS_MAX)
		return fd;
	r = write_rule(path, flags);
	fd_rule[fd] = r ? (signed char)(r - rules + 1) : 0;
	fd_trunc[fd] = r && (flags & O_TRUNC);
	return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_FN(name, real)                                                         \
	int name(const char *path, int flags, ...)                                  \
	{                                                                           \
		va_list ap;                                                         \
		mode_t mode;                                                        \
                                                                                    \
		va_start(ap, flags);                                                \
		mode = mode_arg(flags, ap);                                         \
		va_end(ap);                                                         \
		if (before_open(path, flags) < 0)                                   \
			return -1;                                                  \
		return after_open(path, flags, real(path, open_flags(path, flags), mode)); \
	}
#define OPENAT_FN(name, real)                                                       \
	int name(int dirfd, const char *path, int flags, ...)                       \
	{                                                                           \
		va_list ap;                                                         \
		mode_t mode;                                                        \
                                                                                    \
		va_start(ap, flags);                                                \
		mode = mode_arg(flags, ap);                                         \
		va_end(ap);                                                         \
		if (before_open(path, flags) < 0)                                   \
			return -1;                                                  \
		return after_open(path, flags, real(dirfd, path, open_flags(path, flags), mode)); \
	}

OPEN_FN(open, real_open)
OPEN_FN(open64, real_open64)
OPENAT_FN(openat, real_openat)
OPENAT_FN(openat64, real_openat64)

/* the fortified forms (-D_FORTIFY_SOURCE) */
int __open_2(const char *path, int flags)
{
	return open(path, flags);
}

int __open64_2(const char *path, int flags)
{
	return open64(path, flags);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	return openat(dirfd, path, flags);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	return openat64(dirfd, path, flags);
}

ssize_t write(int fd, const void *buf, size_t count)
{
	load();
	if (fd >= 0 && fd < FDS_MAX && fd_rule[fd] > 0) {
		struct rule *r = &rules[fd_rule[fd] - 1];

		if (fires(r)) {
			char path[4096];

			fd_path(fd, path, sizeof(path));
			note(r, path);
			errno = r->error;
			return -1;
		}
		if (fd_trunc[fd]) {
			fd_trunc[fd] = false;
			if (ftruncate(fd, 0) < 0)
				return -1;
		}
	}
	return real_write(fd, buf, count);
}

ssize_t read(int fd, void *buf, size_t count)
{
	char path[4096];

	load();
	if (!any_readfd || fd < 0 || !fd_path(fd, path, sizeof(path)))
		return real_read(fd, buf, count);
	for (size_t i = 0; i < n_rules; i++) {
		struct rule *r = &rules[i];

		if (r->op != OP_READFD || !ends_with(path, r->suffix) || !fires(r))
			continue;
		note(r, path);
		errno = r->error;
		return -1;
	}
	return real_read(fd, buf, count);
}

/* The name of a bpf(2) command as a "bpf" rule names it, or NULL. */
static const char *bpf_cmd_name(long cmd)
{
	switch (cmd) {
	case BPF_MAP_LOOKUP_ELEM:
		return "map_lookup_elem";
	case BPF_MAP_LOOKUP_BATCH:
		return "map_lookup_batch";
	case BPF_MAP_LOOKUP_AND_DELETE_BATCH:
		return "map_lookup_and_delete_batch";
	case BPF_ITER_CREATE:
		return "iter_create";
	default:
		return NULL;
	}
}

/* libbpf makes its bpf(2) calls through syscall(): the six arguments any
 * call may have are passed on as they came (as longs, as the ABI has them) */
long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (size_t i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	load();
	if (any_bpf && nr == SYS_bpf) {
		const char *name = bpf_cmd_name(a[0]);

		for (size_t i = 0; name && i < n_rules; i++) {
			struct rule *r = &rules[i];

			if (r->op != OP_BPF || strcmp(r->suffix, name) != 0 || !fires(r))
				continue;
			note(r, name);
			errno = r->error;
			return -1;
		}
	}
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* the fortified form (-D_FORTIFY_SOURCE), where the buffer's size is known */
ssize_t __read_chk(int fd, void *buf, size_t count, size_t size)
{
	if (count > size)
		abort();
	return read(fd, buf, count);
}

int close(int fd)
{
	load();
	if (fd >= 0 && fd < FDS_MAX) {
		fd_rule[fd] = 0;
		fd_trunc[fd] = false;
	}
	return real_close(fd);
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* hwloc's, without its header: the topology is opaque here */
int hwloc_topology_load(void *topology)
{
	static int (*real_load)(void *);
	static bool started;
	const char *env = getenv("CAAD_FAULTS_THREAD");

	if (!real_load)
		real_load = (int (*)(void *))dlsym(RTLD_NEXT, "hwloc_topology_load");
	if (!real_load) {
		errno = ENOSYS;
		return -1;
	}
	if (env && strcmp(env, "1") == 0 && !started) {
		pthread_t t;

		started = true;
		if (pthread_create(&t, NULL, idle_thread, NULL) == 0)
			pthread_detach(t);
	}
	return real_load(topology);
}
