/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The actuator: writes only what differs, journals each object's original
 * value durably before its first write, restores on exit or after a crash.
 *
 * Journal: one line per object, "PATH<TAB>ORIGINAL" (or, for a threaded
 * NAPI kthread, "kthread:PID:COMM<TAB>CPULIST"), rewritten atomically (temp
 * file, fsync, rename) whenever an object is added.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "caad/apply.h"
#include "caad/log.h"
#include "caad/sysfs.h"

struct journal_entry {
	char *path;
	char *label;     /* "eth0 rx-3 RPS", "IRQ 112" */
	char *original;  /* as read */
	enum caad_setting_kind kind;
	struct caad_cpumask written;
};

/* dry run: what was last announced per path, so each change is logged once */
struct planned {
	char *path;
	struct caad_cpumask cpus;
};

struct caad_actuator {
	char *sysroot;
	char *journal_path;
	bool dry_run;
	struct journal_entry *entries;
	size_t n_entries, cap_entries;
	struct planned *planned;
	size_t n_planned;
	int *unmovable;   /* IRQs whose affinity the kernel refused (managed) */
	size_t n_unmovable;
	struct backoff {
		char *path;
		uint64_t until_ns; /* CLOCK_MONOTONIC; 0: until cleared */
	} *backoffs;       /* values someone else changed after caad wrote them */
	size_t n_backoffs;
	unsigned backoff_sec;
	bool go_ahead;     /* the next apply rewrites what others changed (reload, resume) */
	struct caad_actuator_stats stats;
};

static void entry_done(struct journal_entry *e)
{
	free(e->path);
	free(e->label);
	free(e->original);
}

static void planned_clear(struct caad_actuator *a)
{
	for (size_t i = 0; i < a->n_planned; i++)
		free(a->planned[i].path);
	free(a->planned);
	a->planned = NULL;
	a->n_planned = 0;
}

/* Dry run: true when path -> cpus was announced already; else remember it. */
static bool planned_seen(struct caad_actuator *a, const char *path, const struct caad_cpumask *cpus)
{
	for (size_t i = 0; i < a->n_planned; i++)
		if (streq(a->planned[i].path, path)) {
			if (caad_cpumask_equal(&a->planned[i].cpus, cpus))
				return true;
			a->planned[i].cpus = *cpus;
			return false;
		}
	struct planned *np = reallocarray(a->planned, a->n_planned + 1, sizeof(*np));
	char *p = strdup(path);
	if (!np || !p) {
		free(p);
		if (np)
			a->planned = np;
		return false; /* log again rather than lose the message */
	}
	a->planned = np;
	a->planned[a->n_planned++] = (struct planned){ .path = p, .cpus = *cpus };
	return false;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void caad_actuator_clear_backoff(struct caad_actuator *a)
{
	a->go_ahead = true;
	for (size_t i = 0; i < a->n_backoffs; i++)
		free(a->backoffs[i].path);
	free(a->backoffs);
	a->backoffs = NULL;
	a->n_backoffs = 0;
}

static int journal_write(struct caad_actuator *a);

/* Labels start with the interface's name: "eth0 rx-3: IRQ 112 CPUs". */
static bool label_of_iface(const char *label, const char *ifname)
{
	size_t n = strlen(ifname);

	return label && strncmp(label, ifname, n) == 0 && label[n] == ' ';
}

int caad_actuator_forget_iface(struct caad_actuator *a, const char *ifname)
{
	_cleanup_free_ char *sys = NULL;
	size_t k = 0;
	int n = 0;

	for (size_t i = 0; i < a->n_entries; i++) {
		if (label_of_iface(a->entries[i].label, ifname)) {
			log_info("%s: its device is gone, nothing to restore", a->entries[i].label);
			entry_done(&a->entries[i]);
			n++;
			continue;
		}
		a->entries[k++] = a->entries[i];
	}
	a->n_entries = k;

	/* back-offs are by path: the interface's sysfs files (IRQs of a new
	 * device are new numbers anyway) */
	if (asprintf(&sys, "/sys/class/net/%s/", ifname) < 0)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < a->n_backoffs; i++) {
		if (strstr(a->backoffs[i].path, sys)) {
			free(a->backoffs[i].path);
			continue;
		}
		a->backoffs[k++] = a->backoffs[i];
	}
	a->n_backoffs = k;
	planned_clear(a);
	if (n > 0) {
		int r = journal_write(a);
		if (r < 0)
			return r;
	}
	return n;
}

void caad_actuator_set_backoff_sec(struct caad_actuator *a, unsigned sec)
{
	a->backoff_sec = sec;
}

unsigned caad_actuator_n_backed_off(const struct caad_actuator *a)
{
	return (unsigned)a->n_backoffs;
}

/* Is path left alone now? An expired back-off is dropped. */
static bool backed_off(struct caad_actuator *a, const char *path)
{
	for (size_t i = 0; i < a->n_backoffs; i++) {
		struct backoff *b = &a->backoffs[i];

		if (!streq(b->path, path))
			continue;
		if (b->until_ns == 0 || mono_ns() < b->until_ns)
			return true;
		log_info("%s: back-off over, caad may change it again", path);
		free(b->path);
		*b = a->backoffs[--a->n_backoffs];
		return false;
	}
	return false;
}

static int backoff_add(struct caad_actuator *a, char *path)
{
	struct backoff *n = reallocarray(a->backoffs, a->n_backoffs + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	a->backoffs = n;
	a->backoffs[a->n_backoffs++] = (struct backoff){
		.path = path,
		.until_ns = a->backoff_sec ? mono_ns() + (uint64_t)a->backoff_sec * 1000000000ull : 0,
	};
	a->stats.backoffs++;
	return 0;
}

bool caad_actuator_irq_unmovable(const struct caad_actuator *a, int irq)
{
	for (size_t i = 0; i < a->n_unmovable; i++)
		if (a->unmovable[i] == irq)
			return true;
	return false;
}

static void mark_unmovable(struct caad_actuator *a, int irq)
{
	int *n;

	if (caad_actuator_irq_unmovable(a, irq))
		return;
	n = reallocarray(a->unmovable, a->n_unmovable + 1, sizeof(*n));
	if (!n)
		return;
	a->unmovable = n;
	a->unmovable[a->n_unmovable++] = irq;
}

int caad_actuator_set_dry_run(struct caad_actuator *a, bool dry_run)
{
	int r = 0;

	if (dry_run == a->dry_run)
		return 0;
	/* Going hands-off: put back what was written while enforcing. */
	if (dry_run && a->n_entries > 0)
		r = caad_actuator_restore(a);
	planned_clear(a);
	a->dry_run = dry_run;
	return r;
}

void caad_actuator_free(struct caad_actuator *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_entries; i++)
		entry_done(&a->entries[i]);
	free(a->entries);
	planned_clear(a);
	caad_actuator_clear_backoff(a);
	free(a->unmovable);
	free(a->sysroot);
	free(a->journal_path);
	free(a);
}

int caad_actuator_new(const struct caad_actuator_options *opts, struct caad_actuator **ret)
{
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = NULL;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->sysroot = strdup(opts->sysroot ? opts->sysroot : "");
	a->journal_path = strdup(opts->journal_path);
	if (!a->sysroot || !a->journal_path)
		return -ENOMEM;
	a->dry_run = opts->dry_run;
	a->backoff_sec = opts->backoff_sec;
	*ret = TAKE_PTR(a);
	return 0;
}

unsigned caad_actuator_n_changed(const struct caad_actuator *a)
{
	return (unsigned)a->n_entries;
}

void caad_actuator_get_stats(const struct caad_actuator *a, struct caad_actuator_stats *ret)
{
	*ret = a->stats;
}

static int journal_write(struct caad_actuator *a)
{
	_cleanup_free_ char *buf = NULL, *dir = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (a->n_entries == 0) {
		if (unlink(a->journal_path) < 0 && errno != ENOENT)
			return log_error_errno(errno, "Failed to remove journal %s: %m", a->journal_path);
		return 0;
	}

	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_entries; i++)
		fprintf(f, "%s\t%s\n", a->entries[i].path, a->entries[i].original);
	if (fclose(f) != 0)
		return -ENOMEM;

	dir = strdup(a->journal_path);
	if (!dir)
		return -ENOMEM;
	r = caad_mkdir_p(dirname(dir), 0755);
	if (r < 0)
		return log_error_errno(r, "Failed to create the journal's directory for %s: %m", a->journal_path);
	r = caad_write_file_atomic(a->journal_path, buf, len, 0600);
	if (r < 0)
		return log_error_errno(r, "Failed to write journal %s: %m", a->journal_path);
	return 0;
}

static struct journal_entry *find_entry(struct caad_actuator *a, const char *path)
{
	for (size_t i = 0; i < a->n_entries; i++)
		if (streq(a->entries[i].path, path))
			return &a->entries[i];
	return NULL;
}

static int parse_value(enum caad_setting_kind kind, const char *s, struct caad_cpumask *ret)
{
	return kind == CAAD_SETTING_RPS_CPUS ? caad_cpumask_parse_hex(s, ret) : caad_cpumask_parse_list(s, ret);
}

/*
 * Objects are files, or threaded-NAPI kthreads named "kthread:PID:COMM" in
 * the journal: their affinity is read and written with sched_*affinity,
 * and only while PID still is that kthread (a PID can be reused).
 */
#define KTHREAD_PREFIX "kthread:"

static int kthread_parse(const char *obj, pid_t *ret_pid, const char **ret_comm)
{
	char *end;
	long pid;

	if (strncmp(obj, KTHREAD_PREFIX, strlen(KTHREAD_PREFIX)) != 0)
		return -EINVAL;
	errno = 0;
	pid = strtol(obj + strlen(KTHREAD_PREFIX), &end, 10);
	if (errno || pid <= 0 || pid > INT_MAX || *end != ':' || !end[1])
		return -EINVAL;
	*ret_pid = (pid_t)pid;
	*ret_comm = end + 1;
	return 0;
}

/* Still the kthread we mean? -ESRCH when it is gone or is another task now. */
static int kthread_check(pid_t pid, const char *comm)
{
	_cleanup_free_ char *path = NULL, *cur = NULL;
	int r;

	if (asprintf(&path, "/proc/%d/comm", (int)pid) < 0)
		return -ENOMEM;
	r = caad_read_file(path, &cur);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	return streq(cur, comm) ? 0 : -ESRCH;
}

static int obj_read(const char *obj, char **ret)
{
	const char *comm;
	cpu_set_t *set;
	size_t size = CPU_ALLOC_SIZE(CAAD_CPUS_MAX);
	struct caad_cpumask m;
	char buf[CAAD_CPUS_MAX * 6];
	pid_t pid;
	int r;

	if (kthread_parse(obj, &pid, &comm) < 0)
		return caad_read_file(obj, ret);
	r = kthread_check(pid, comm);
	if (r < 0)
		return r;
	set = CPU_ALLOC(CAAD_CPUS_MAX);
	if (!set)
		return -ENOMEM;
	if (sched_getaffinity(pid, size, set) < 0) {
		r = -errno;
		CPU_FREE(set);
		return r;
	}
	caad_cpumask_zero(&m);
	for (unsigned cpu = 0; cpu < CAAD_CPUS_MAX; cpu++)
		if (CPU_ISSET_S(cpu, size, set))
			caad_cpumask_set(&m, cpu);
	CPU_FREE(set);
	r = caad_cpumask_format_list(&m, buf, sizeof(buf));
	if (r < 0)
		return r;
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
}

static int obj_write(const char *obj, const char *value)
{
	const char *comm;
	struct caad_cpumask m;
	cpu_set_t *set;
	size_t size = CPU_ALLOC_SIZE(CAAD_CPUS_MAX);
	pid_t pid;
	int r;

	if (kthread_parse(obj, &pid, &comm) < 0)
		return caad_write_file(obj, value);
	r = kthread_check(pid, comm);
	if (r < 0)
		return r;
	r = caad_cpumask_parse_list(value, &m);
	if (r < 0)
		return r;
	set = CPU_ALLOC(CAAD_CPUS_MAX);
	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(size, set);
	CAAD_CPUMASK_FOREACH(cpu, &m)
		CPU_SET_S((unsigned)cpu, size, set);
	r = sched_setaffinity(pid, size, set) < 0 ? -errno : 0;
	CPU_FREE(set);
	return r;
}

static const char *fmt_list(const struct caad_cpumask *m, char *buf, size_t size)
{
	if (caad_cpumask_empty(m))
		return "none";
	if (caad_cpumask_format_list(m, buf, size) < 0)
		return "(many)";
	return buf;
}

/* Width of rps_cpus: the kernel's nr_cpu_ids, else enough for the mask. */
static unsigned rps_width(const struct caad_inventory *inv, const struct caad_cpumask *m)
{
	unsigned w = inv->n_possible_cpus;
	int last = -1;

	CAAD_CPUMASK_FOREACH(cpu, m)
		last = cpu;
	if ((int)w <= last)
		w = (unsigned)last + 1;
	return w ? w : 1;
}

enum caad_error_class caad_error_class_from_errno(int r)
{
	switch (r < 0 ? -r : r) {
	case EIO:
	case EPERM:
		return CAAD_ERROR_MANAGED_IRQ;
	case EINVAL:
	case ERANGE:
	case EOVERFLOW:
		return CAAD_ERROR_OFFLINE_CPU;
	case ENOSPC:
		return CAAD_ERROR_NO_VECTORS;
	case ENOENT:
	case ENODEV:
	case ESRCH: /* a NAPI kthread */
		return CAAD_ERROR_DEVICE_GONE;
	default:
		return CAAD_ERROR_OTHER;
	}
}

const char *caad_error_class_to_string(enum caad_error_class c)
{
	static const char *const names[_CAAD_ERROR_CLASS_COUNT] = {
		[CAAD_ERROR_MANAGED_IRQ] = "managed-irq",
		[CAAD_ERROR_OFFLINE_CPU] = "offline-cpu",
		[CAAD_ERROR_NO_VECTORS] = "no-vectors",
		[CAAD_ERROR_DEVICE_GONE] = "device-gone",
		[CAAD_ERROR_OTHER] = "other",
	};

	return (unsigned)c < _CAAD_ERROR_CLASS_COUNT ? names[c] : NULL;
}

static const char *error_class(int r)
{
	static const char *const why[_CAAD_ERROR_CLASS_COUNT] = {
		[CAAD_ERROR_MANAGED_IRQ] = "kernel-managed or protected IRQ",
		[CAAD_ERROR_OFFLINE_CPU] = "offline or invalid CPU",
		[CAAD_ERROR_NO_VECTORS] = "interrupt vectors exhausted on the target CPU",
		[CAAD_ERROR_DEVICE_GONE] = "device gone",
		[CAAD_ERROR_OTHER] = "unexpected error",
	};

	return why[caad_error_class_from_errno(r)];
}

static void count_error(struct caad_actuator *a, int r)
{
	a->stats.errors++;
	a->stats.errors_by_class[caad_error_class_from_errno(r)]++;
}

static int apply_one(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_setting *s)
{
	const struct caad_iface *iface = &inv->ifaces[s->iface];
	_cleanup_free_ char *path = NULL, *label = NULL, *current = NULL;
	struct caad_cpumask cur;
	char want[CAAD_CPUS_MAX / 4 + CAAD_CPUS_MAX / 32 + 8], from_buf[256], to_buf[256];
	const char *from, *to;
	int r;

	if (s->kind == CAAD_SETTING_KTHREAD_AFFINITY) {
		_cleanup_free_ char *comm_path = NULL, *comm = NULL;

		/* kthread PIDs are the host's: in a fake sysroot they name nothing */
		if (a->sysroot[0] && !streq(a->sysroot, "/")) {
			log_debug("%s rx-%u: kthread %d not moved under a sysroot", iface->name, s->queue, (int)s->pid);
			return -EOPNOTSUPP;
		}
		if (asprintf(&comm_path, "/proc/%d/comm", (int)s->pid) < 0)
			return -ENOMEM;
		r = caad_read_file(comm_path, &comm);
		if (r < 0)
			return log_warning_errno(r == -ENOENT ? -ESRCH : r, "%s rx-%u: NAPI kthread %d gone: %m",
			                         iface->name, s->queue, (int)s->pid);
		if (asprintf(&path, KTHREAD_PREFIX "%d:%s", (int)s->pid, comm) < 0 ||
		    asprintf(&label, "%s rx-%u: NAPI kthread %d (%s) CPUs", iface->name, s->queue, (int)s->pid, comm) < 0)
			return -ENOMEM;
	} else if (s->kind == CAAD_SETTING_RPS_CPUS) {
		r = caad_path(&path, a->sysroot, "/sys/class/net/%s/queues/rx-%u/rps_cpus", iface->name, s->queue);
		if (r >= 0 && asprintf(&label, "%s rx-%u: RPS CPUs", iface->name, s->queue) < 0)
			r = -ENOMEM;
	} else {
		r = caad_path(&path, a->sysroot, "/proc/irq/%d/smp_affinity_list", s->irq);
		if (r >= 0 && asprintf(&label, "%s rx-%u: IRQ %d CPUs", iface->name, s->queue, s->irq) < 0)
			r = -ENOMEM;
	}
	if (r < 0)
		return r;

	if (backed_off(a, path))
		return 0;

	r = obj_read(path, &current);
	if (r < 0)
		return log_warning_errno(r, "%s: cannot read %s (%s): %m", label, path, error_class(r));
	r = parse_value(s->kind, current, &cur);
	if (r < 0)
		return log_warning_errno(r, "%s: unexpected content \"%s\" in %s, leaving it alone", label, current,
		                         path);
	/* caad wrote it, and now it reads otherwise: someone else owns it */
	struct journal_entry *prev = a->dry_run ? NULL : find_entry(a, path);
	if (prev && !a->go_ahead && !caad_cpumask_equal(&cur, &prev->written)) {
		log_notice("%s: changed by someone else to \"%s\" since caad wrote it: leaving it alone %s%s", label,
		           current, a->backoff_sec ? "for a while" : "until the configuration is reloaded",
		           ", and not restoring it on exit");
		entry_done(prev);
		*prev = a->entries[--a->n_entries];
		r = journal_write(a);
		if (r < 0)
			return r;
		return backoff_add(a, TAKE_PTR(path));
	}
	if (caad_cpumask_equal(&cur, &s->cpus))
		return 0;

	if (s->kind == CAAD_SETTING_RPS_CPUS)
		r = caad_cpumask_format_hex(&s->cpus, rps_width(inv, &s->cpus), want, sizeof(want));
	else
		r = caad_cpumask_format_list(&s->cpus, want, sizeof(want));
	if (r < 0)
		return log_error_errno(r, "%s: cannot format the new value: %m", label);

	from = fmt_list(&cur, from_buf, sizeof(from_buf));
	to = fmt_list(&s->cpus, to_buf, sizeof(to_buf));
	if (a->dry_run) {
		if (planned_seen(a, path, &s->cpus))
			return 0;
		log_info("%s %s -> %s (dry run: not written; %s)", label, from, to, s->reason);
		return 1;
	}

	struct journal_entry *e = find_entry(a, path);
	bool added = false;
	if (!e) {
		if (a->n_entries == a->cap_entries) {
			size_t ncap = a->cap_entries ? a->cap_entries * 2 : 16;
			struct journal_entry *ne = reallocarray(a->entries, ncap, sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			a->entries = ne;
			a->cap_entries = ncap;
		}
		e = &a->entries[a->n_entries++];
		*e = (struct journal_entry){ .path = TAKE_PTR(path), .label = TAKE_PTR(label),
			                     .original = TAKE_PTR(current), .kind = s->kind };
		added = true;
		r = journal_write(a);
		if (r < 0) {
			/* Not journaled: do not touch the host. */
			entry_done(e);
			a->n_entries--;
			return r;
		}
	}

	r = obj_write(e->path, want);
	if (r < 0) {
		log_warning_errno(r, "%s: writing \"%s\" to %s failed (%s): %m", e->label, want, e->path,
		                  error_class(r));
		if (s->kind == CAAD_SETTING_IRQ_AFFINITY && (r == -EIO || r == -EPERM)) {
			log_notice("IRQ %d is kernel-managed: %s rx-%u will be steered with RPS instead", s->irq,
			           iface->name, s->queue);
			mark_unmovable(a, s->irq);
		}
		if (added) {
			/* Nothing changed: forget it again. */
			entry_done(e);
			a->n_entries--;
			(void)journal_write(a);
		}
		return r;
	}
	e->written = s->cpus;
	a->stats.written++;
	log_info("%s %s -> %s (%s)", e->label, from, to, s->reason);
	return 1;
}

static int apply_all(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan);

int caad_actuator_apply(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan)
{
	int n = apply_all(a, inv, plan);

	a->go_ahead = false;
	return n;
}

static int apply_all(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan)
{
	int n = 0, failed_iface = -1;
	unsigned failed_queue = 0;

	for (size_t i = 0; i < plan->n_settings; i++) {
		const struct caad_setting *s = &plan->settings[i];
		int r;

		/* A queue whose IRQ could not be moved keeps its RPS mask: turning
		 * RPS off would leave it steered by nothing. */
		if (s->kind == CAAD_SETTING_RPS_CPUS && s->iface == failed_iface && s->queue == failed_queue)
			continue;
		r = apply_one(a, inv, s);
		if (r < 0 && r != -EOPNOTSUPP)
			count_error(a, r);
		if (r == -ENOMEM)
			return r;
		/* the kthread or IRQ did not move: the queue keeps its RPS mask */
		if (r < 0 && s->kind != CAAD_SETTING_RPS_CPUS) {
			failed_iface = s->iface;
			failed_queue = s->queue;
		}
		if (r > 0)
			n += r;
	}
	return n;
}

int caad_actuator_restore(struct caad_actuator *a)
{
	int failed = 0;

	for (size_t i = a->n_entries; i-- > 0;) {
		struct journal_entry *e = &a->entries[i];
		_cleanup_free_ char *current = NULL;
		struct caad_cpumask cur;
		int r;

		r = obj_read(e->path, &current);
		if (r == -ENOENT || r == -ENODEV || r == -ESRCH) {
			log_info("%s: gone, nothing to restore", e->label);
			continue;
		}
		if (r >= 0 && parse_value(e->kind, current, &cur) >= 0 && !caad_cpumask_equal(&cur, &e->written)) {
			log_notice("%s: changed by someone else to \"%s\" since caad wrote it, leaving it", e->label,
			           current);
			continue;
		}
		r = obj_write(e->path, e->original);
		if (r < 0) {
			log_error_errno(r, "%s: failed to restore \"%s\" to %s: %m", e->label, e->original, e->path);
			failed++;
			count_error(a, r);
			continue;
		}
		a->stats.restored++;
		log_info("%s restored to %s", e->label, e->original);
	}

	for (size_t i = 0; i < a->n_entries; i++)
		entry_done(&a->entries[i]);
	a->n_entries = 0;
	if (failed)
		return -EIO; /* keep the journal for the next start */
	return journal_write(a);
}

int caad_journal_restore(const char *journal_path)
{
	_cleanup_free_ char *text = NULL;
	char *save = NULL;
	int r, n = 0, failed = 0;
	unsigned lineno = 0;

	r = caad_read_file(journal_path, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return log_error_errno(r, "Failed to read journal %s: %m", journal_path);

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');

		lineno++;
		if (!tab || tab == line) {
			log_warning("%s:%u: malformed journal line, skipped", journal_path, lineno);
			continue;
		}
		*tab = 0;
		r = obj_write(line, tab + 1);
		if (r == -ENOENT || r == -ENODEV || r == -ESRCH) {
			log_info("%s: gone, nothing to restore", line);
			continue;
		}
		if (r < 0) {
			log_error_errno(r, "%s:%u: failed to restore \"%s\" to %s: %m", journal_path, lineno, tab + 1, line);
			failed++;
			continue;
		}
		log_notice("Restored %s to \"%s\" from the journal of an earlier run", line, tab + 1);
		n++;
	}
	if (failed)
		return -EIO;
	if (unlink(journal_path) < 0 && errno != ENOENT)
		return log_error_errno(errno, "Failed to remove journal %s: %m", journal_path);
	return n;
}
