/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The actuator: writes only what differs, journals each object's original
 * value durably before its first write, restores on exit or after a crash.
 *
 * Journal: one line per object, "PATH<TAB>ORIGINAL" (or, for a threaded
 * NAPI kthread, "kthread:PID:COMM<TAB>CPULIST"), then what tells its
 * device (an ifindex, an IRQ's handlers) and what caad wrote there
 * ("wrote=" fields), rewritten atomically (temp file, fsync, rename)
 * whenever an object is added or dropped and before each write: after a
 * crash, an object that reads neither its original nor what caad wrote is
 * someone else's, and left as it is.
 *
 * A refused read or write is handled by the class of its error (see
 * refused()), logged once with its path, and not tried again while the
 * plan wants the same value; a queue's settings go together (apply_queue()).
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "caad/apply.h"
#include "caad/log.h"
#include "caad/loglimit.h"
#include "caad/ntuple.h"
#include "caad/sysfs.h"

#define NTUPLE_PREFIX "ntuple:" /* an ntuple rule's object: NTUPLE_PREFIX IF:LOCATION */

struct journal_entry {
	char *path;
	char *label;     /* "eth0 rx-3 RPS", "IRQ 112" */
	char *original;  /* as read */
	enum caad_setting_kind kind;
	struct caad_cpumask written; /* what caad wrote there last (has_written) */
	struct caad_cpumask writing; /* the value being written, journaled before the write (has_writing) */
	bool has_written, has_writing;
	int ifindex;     /* of the interface whose value it is: renames and removals go by it */
	char *actions_first; /* an IRQ's actions as first journaled, where a rename of its interface
	                      * renamed them in `actions` (NULL: none): drivers that name handlers once,
	                      * at open, keep the old name until the device is opened again */
	char *actions;   /* an IRQ's: /sys/kernel/irq/N/actions when journaled (NULL: unknown), which
	                  * tells after a crash whether the number still names that device's IRQ */
	bool orphan;     /* an IRQ's or a kthread's whose interface left caad's view (another network
	                  * namespace, or gone): the object may outlive it, and is put back at exit
	                  * only if it still reads what caad wrote (ifindex 0: no interface's now);
	                  * or a device's own value (ifindex kept) while the device is away */
};

/* dry run: what was last announced per path, so each change is logged once */
struct planned {
	char *path;
	struct caad_cpumask cpus;
	uint64_t wanted_ns; /* an ntuple rule's: when the plan last wanted it (ntuple_forgotten()) */
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
		uint64_t wanted_ns; /* an ntuple rule's: when the plan last wanted it */
	} *backoffs;       /* values someone else changed after caad wrote them */
	size_t n_backoffs;
	unsigned backoff_sec;
	uint64_t ntuple_forget_ns; /* caad_actuator_set_ntuple_forget_sec() */
	bool go_ahead;     /* the next apply rewrites what others changed (reload, resume) */
	struct refusal {
		char *path;
		struct caad_cpumask cpus; /* the value refused */
		int error;                /* -errno */
		bool parked;              /* not tried again while the plan wants cpus */
		bool retried;             /* offline CPU: tried again after the topology was read again */
		uint64_t wanted_ns;       /* an ntuple rule's: when the plan last wanted it */
		uint64_t flow_id;         /* an ntuple rule's: the flow it was for (0: none) */
	} *refusals;       /* reads and writes refused, each logged once */
	size_t n_refusals;
	struct caad_cpumask irq_exhausted; /* CPUs that had no vector left for an IRQ (ENOSPC) */
	unsigned wants;    /* CAAD_ACTUATOR_WANT_*: what the daemon should read again */
	struct caad_actuator_stats stats;
	struct logged {
		char *path;
		struct caad_loglimit limit;
	} *logged;         /* values whose changes were logged lately (caad_loglimit) */
	size_t n_logged;
};

static void entry_done(struct journal_entry *e)
{
	free(e->path);
	free(e->label);
	free(e->original);
	free(e->actions);
	free(e->actions_first);
}

static void planned_clear(struct caad_actuator *a)
{
	for (size_t i = 0; i < a->n_planned; i++)
		free(a->planned[i].path);
	free(a->planned);
	a->planned = NULL;
	a->n_planned = 0;
}

/*
 * Room for one more record at the end of *arr (n records of size bytes)
 * and a copy of path for it: 0, or -ENOMEM with neither (*arr may have
 * moved, nothing else changed). The records of paths that caad remembers
 * (announced, refused, logged) grow so.
 */
static int grow_by_one(void **arr, size_t n, size_t size, const char *path, char **ret_copy)
{
	void *na = reallocarray(*arr, n + 1, size);

	if (!na)
		return -ENOMEM;
	*arr = na;
	*ret_copy = strdup(path);
	return *ret_copy ? 0 : -ENOMEM;
}

static uint64_t mono_ns(void);

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
	char *p;

	if (grow_by_one((void **)&a->planned, a->n_planned, sizeof(*a->planned), path, &p) < 0)
		return false; /* log again rather than lose the message */
	a->planned[a->n_planned++] = (struct planned){ .path = p, .cpus = *cpus, .wanted_ns = mono_ns() };
	return false;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The level of a line saying that the value at path changes (and a note
 * for it): a value that a moving reader flips to and fro many times a
 * second gets CAAD_LOGLIMIT_BURST such lines a window, the rest at debug
 * level. Records of values quiet for a window go on the way.
 */
static int change_level(struct caad_actuator *a, const char *path, char *note, size_t size)
{
	uint64_t now = mono_ns();
	struct logged *l = NULL;

	for (size_t i = 0; i < a->n_logged;) {
		if (streq(a->logged[i].path, path)) {
			l = &a->logged[i++];
			continue;
		}
		if (caad_loglimit_active(&a->logged[i].limit, now)) {
			i++;
			continue;
		}
		/* the last moves into the gap: looked at next (l, found
		 * before it, lies below) */
		free(a->logged[i].path);
		a->logged[i] = a->logged[--a->n_logged];
	}
	if (!l) {
		char *p;

		if (grow_by_one((void **)&a->logged, a->n_logged, sizeof(*a->logged), path, &p) < 0) {
			note[0] = '\0';
			return LOG_INFO; /* said rather than lost */
		}
		l = &a->logged[a->n_logged++];
		*l = (struct logged){ .path = p };
	}
	return caad_loglimit_level(&l->limit, now, LOG_INFO, note, size);
}

static struct refusal *find_refusal(struct caad_actuator *a, const char *path)
{
	for (size_t i = 0; i < a->n_refusals; i++)
		if (streq(a->refusals[i].path, path))
			return &a->refusals[i];
	return NULL;
}

static void refusal_drop(struct caad_actuator *a, const char *path)
{
	struct refusal *rf = find_refusal(a, path);

	if (!rf)
		return;
	free(rf->path);
	*rf = a->refusals[--a->n_refusals];
}

/*
 * Remember that path refused cpus with r; parked: do not try it again while
 * the plan wants cpus. Returns true when this is news (to be logged and
 * counted): a new refusal, another error or value, or a retry that failed.
 */
static bool refuse(struct caad_actuator *a, const char *path, const struct caad_cpumask *cpus, int r, bool parked)
{
	struct refusal *rf = find_refusal(a, path);
	bool news;

	if (!rf) {
		char *p;

		if (grow_by_one((void **)&a->refusals, a->n_refusals, sizeof(*a->refusals), path, &p) < 0)
			return true; /* log again rather than lose the message */
		rf = &a->refusals[a->n_refusals++];
		*rf = (struct refusal){ .path = p, .cpus = *cpus, .error = r, .parked = parked, .wanted_ns = mono_ns() };
		return true;
	}
	news = rf->error != r || !caad_cpumask_equal(&rf->cpus, cpus) || (rf->retried && !rf->parked);
	if (!caad_cpumask_equal(&rf->cpus, cpus))
		rf->retried = false;
	rf->cpus = *cpus;
	rf->error = r;
	rf->parked = parked;
	return news;
}

void caad_actuator_clear_backoff(struct caad_actuator *a)
{
	a->go_ahead = true;
	for (size_t i = 0; i < a->n_backoffs; i++)
		free(a->backoffs[i].path);
	free(a->backoffs);
	a->backoffs = NULL;
	a->n_backoffs = 0;
	/* refused values and CPUs without vectors are tried again; managed
	 * IRQs never are */
	for (size_t i = 0; i < a->n_refusals; i++)
		free(a->refusals[i].path);
	free(a->refusals);
	a->refusals = NULL;
	a->n_refusals = 0;
	caad_cpumask_zero(&a->irq_exhausted);
}

unsigned caad_actuator_wants(const struct caad_actuator *a)
{
	return a->wants;
}

void caad_actuator_reread(struct caad_actuator *a, unsigned what)
{
	a->wants &= ~what;
	if (!(what & CAAD_ACTUATOR_WANT_TOPOLOGY))
		return;
	/* an offline or invalid CPU: one more try with the new topology's plan */
	for (size_t i = 0; i < a->n_refusals; i++) {
		struct refusal *rf = &a->refusals[i];

		if (rf->parked && caad_error_class_from_errno(rf->error) == CAAD_ERROR_OFFLINE_CPU) {
			rf->parked = false;
			rf->retried = true;
		}
	}
}

void caad_actuator_irq_exhausted(const struct caad_actuator *a, struct caad_cpumask *ret)
{
	*ret = a->irq_exhausted;
}

static int journal_write(struct caad_actuator *a);
static int journal_irq_is_other(const char *obj, const char *was, const char *was_too);
/* follow_ifindex(): where an entry's interface is now */
enum { FOLLOW_GONE, FOLLOW_RENAMED, FOLLOW_STILL };
static int follow_ifindex(struct caad_actuator *a, struct journal_entry *e, bool all);
static int iface_is(struct caad_actuator *a, const char *path, const struct caad_iface *iface);

/* An entry of the interface ifindex, whose label starts with its name
 * ("eth0 rx-3: IRQ 112 CPUs"): two interfaces that swap names (ea -> eb,
 * eb -> ea in one go) are told apart by their ifindex. */
static bool entry_of_iface(const struct journal_entry *e, int ifindex, const char *ifname)
{
	size_t n = strlen(ifname);

	/* the global RFS table carries the ifindex of the queue it was sized
	 * for, but is no device's: its label ("RFS socket ...") would name an
	 * interface called RFS */
	return e->kind != CAAD_SETTING_RFS_TABLE && e->ifindex == ifindex && e->label &&
	       strncmp(e->label, ifname, n) == 0 && e->label[n] == ' ';
}

/* Whether the record of path (an ntuple rule's: wanted by a plan last at
 * wanted_ns) is to go. */
typedef bool (*record_test)(const struct caad_actuator *a, const char *path, uint64_t wanted_ns, const void *arg);

/* Drop the back-offs, refusals and (with planned) the dry run's
 * announcements that drop() says go. */
static void records_drop(struct caad_actuator *a, record_test drop, const void *arg, bool planned)
{
	size_t k = 0;

	for (size_t i = 0; i < a->n_backoffs; i++) {
		if (drop(a, a->backoffs[i].path, a->backoffs[i].wanted_ns, arg))
			free(a->backoffs[i].path);
		else
			a->backoffs[k++] = a->backoffs[i];
	}
	a->n_backoffs = k;
	k = 0;
	for (size_t i = 0; i < a->n_refusals; i++) {
		if (drop(a, a->refusals[i].path, a->refusals[i].wanted_ns, arg))
			free(a->refusals[i].path);
		else
			a->refusals[k++] = a->refusals[i];
	}
	a->n_refusals = k;
	if (!planned)
		return;
	k = 0;
	for (size_t i = 0; i < a->n_planned; i++) {
		if (drop(a, a->planned[i].path, a->planned[i].wanted_ns, arg))
			free(a->planned[i].path);
		else
			a->planned[k++] = a->planned[i];
	}
	a->n_planned = k;
}

struct under {
	const char *sys, *prefix;
};

/* Whether path is an object under sys (a directory, anywhere in it) or
 * starts with prefix (NULL: none). */
static bool path_under(const struct caad_actuator *a, const char *path, uint64_t wanted_ns, const void *arg)
{
	const struct under *u = arg;

	return strstr(path, u->sys) || (u->prefix && strncmp(path, u->prefix, strlen(u->prefix)) == 0);
}

/* Back-offs and refusals of the objects under a path prefix (an
 * interface's sysfs directory; and prefix, its ntuple rules' "ntuple:IF:",
 * or NULL) go, and so does what dry-run announced; with n entries
 * changed, the journal is written again. Returns n. */
static int forget_paths(struct caad_actuator *a, const char *sys, const char *prefix, int n)
{
	records_drop(a, path_under, &(struct under){ .sys = sys, .prefix = prefix }, false);
	planned_clear(a);
	if (n > 0) {
		int r = journal_write(a);
		if (r < 0)
			return r;
	}
	return n;
}

int caad_actuator_forget_iface(struct caad_actuator *a, int ifindex, const char *ifname, bool may_return)
{
	_cleanup_free_ char *sys = NULL;
	size_t k = 0;
	int n = 0;

	for (size_t i = 0; i < a->n_entries; i++) {
		struct journal_entry *e = &a->entries[i];

		if (entry_of_iface(e, ifindex, ifname) &&
		    (e->kind == CAAD_SETTING_IRQ_AFFINITY || e->kind == CAAD_SETTING_KTHREAD_AFFINITY)) {
			/* a device moved to another network namespace keeps its
			 * IRQs and NAPI kthreads, which are the host's */
			log_info("%s: its interface left caad's view (another network namespace, or gone): put back at "
			         "exit if it still reads what caad wrote",
			         e->label);
			e->orphan = true;
			e->ifindex = 0;
		} else if (entry_of_iface(e, ifindex, ifname) && may_return) {
			/* the device's own values (its sysfs files, its NIC's
			 * rules) go with it into another namespace, and come back
			 * with it: by its ifindex */
			if (!e->orphan)
				log_info("%s: its interface left caad's view: kept, should it come back (from another "
				         "network namespace) with caad's value",
				         e->label);
			e->orphan = true;
		} else if (entry_of_iface(e, ifindex, ifname)) {
			log_info("%s: its device is gone, nothing to restore", e->label);
			entry_done(e);
			n++;
			continue;
		}
		a->entries[k++] = *e;
	}
	a->n_entries = k;

	/* back-offs are by path: the interface's sysfs files, and its ntuple rules */
	_cleanup_free_ char *rules = NULL;
	if (asprintf(&sys, "/sys/class/net/%s/", ifname) < 0 || asprintf(&rules, NTUPLE_PREFIX "%s:", ifname) < 0)
		return -ENOMEM;
	return forget_paths(a, sys, rules, n);
}

int caad_actuator_other_ifindex(const struct caad_actuator *a, const char *ifname, int ifindex)
{
	for (size_t i = 0; i < a->n_entries; i++) {
		const struct journal_entry *e = &a->entries[i];

		if (e->ifindex > 0 && e->ifindex != ifindex && entry_of_iface(e, e->ifindex, ifname))
			return e->ifindex;
	}
	return 0;
}

bool caad_actuator_holds_iface(const struct caad_actuator *a, int ifindex, const char *ifname)
{
	for (size_t i = 0; i < a->n_entries; i++)
		if (entry_of_iface(&a->entries[i], ifindex, ifname))
			return true;
	return false;
}

int caad_actuator_journaled_name(const struct caad_actuator *a, int ifindex, const char *ifname,
                                 char ret[static IF_NAMESIZE])
{
	for (size_t i = 0; ifindex > 0 && i < a->n_entries; i++) {
		const struct journal_entry *e = &a->entries[i];
		size_t n;

		if (e->ifindex != ifindex || !e->label || entry_of_iface(e, ifindex, ifname))
			continue;
		/* a queue's object is "NAME rx-N: ..."; the global RFS table's,
		 * journaled with the ifindex of the queue it was sized for,
		 * names no interface */
		n = strcspn(e->label, " ");
		if (n == 0 || n >= IF_NAMESIZE || strncmp(e->label + n, " rx-", 4) != 0)
			continue;
		memcpy(ret, e->label, n);
		ret[n] = '\0';
		return 1;
	}
	return 0;
}

void caad_actuator_set_backoff_sec(struct caad_actuator *a, unsigned sec)
{
	a->backoff_sec = sec;
}

void caad_actuator_set_ntuple_forget_sec(struct caad_actuator *a, unsigned sec)
{
	a->ntuple_forget_ns = (uint64_t)sec * 1000000000ull;
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

/* Takes path, also on failure. */
static int backoff_add(struct caad_actuator *a, char *path)
{
	struct backoff *n = reallocarray(a->backoffs, a->n_backoffs + 1, sizeof(*n));

	if (!n) {
		free(path);
		return -ENOMEM;
	}
	uint64_t now = mono_ns();
	a->backoffs = n;
	a->backoffs[a->n_backoffs++] = (struct backoff){
		.path = path,
		.wanted_ns = now,
		.until_ns = a->backoff_sec ? now + (uint64_t)a->backoff_sec * 1000000000ull : 0,
	};
	a->stats.backoffs++;
	return 0;
}

int caad_actuator_ntuple_refused(const struct caad_actuator *a, uint64_t **ret, size_t *ret_n)
{
	uint64_t *ids = NULL;
	size_t n = 0;

	*ret = NULL;
	*ret_n = 0;
	for (size_t i = 0; i < a->n_refusals; i++)
		n += a->refusals[i].parked && a->refusals[i].flow_id;
	if (!n)
		return 0;
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < a->n_refusals; i++)
		if (a->refusals[i].parked && a->refusals[i].flow_id)
			ids[n++] = a->refusals[i].flow_id;
	qsort(ids, n, sizeof(*ids), caad_cmp_u64);
	*ret = ids;
	*ret_n = n;
	return 0;
}

bool caad_actuator_irq_unmovable(const struct caad_actuator *a, int irq)
{
	for (size_t i = 0; i < a->n_unmovable; i++)
		if (a->unmovable[i] == irq)
			return true;
	return false;
}

static int forget_paths(struct caad_actuator *a, const char *sys, const char *prefix, int n);

void caad_actuator_forget_irq(struct caad_actuator *a, int irq)
{
	char dir[32];
	size_t k = 0;

	for (size_t i = 0; i < a->n_unmovable; i++)
		if (a->unmovable[i] != irq)
			a->unmovable[k++] = a->unmovable[i];
	a->n_unmovable = k;
	/* and its refused writes and back-offs, by path */
	snprintf(dir, sizeof(dir), "/proc/irq/%d/", irq);
	(void)forget_paths(a, dir, NULL, 0);
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
	for (size_t i = 0; i < a->n_logged; i++)
		free(a->logged[i].path);
	free(a->logged);
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
	caad_actuator_set_ntuple_forget_sec(a, CAAD_NTUPLE_FORGET_SEC);
	*ret = TAKE_PTR(a);
	return 0;
}

unsigned caad_actuator_n_changed(const struct caad_actuator *a)
{
	return (unsigned)a->n_entries;
}

/* The IRQ of an object ".../proc/irq/N/..." (any sysroot before it), with
 * the sysroot's length in *ret_root (may be NULL); -1 for another object. */
static int irq_of_path(const char *obj, size_t *ret_root)
{
	const char *at = strstr(obj, "/proc/irq/");
	char *end;
	long irq;

	if (!at)
		return -1;
	errno = 0;
	irq = strtol(at + strlen("/proc/irq/"), &end, 10);
	if (errno || *end != '/' || irq < 0 || irq > INT_MAX)
		return -1;
	if (ret_root)
		*ret_root = (size_t)(at - obj);
	return (int)irq;
}

size_t caad_actuator_held_irqs(const struct caad_actuator *a, int *ret, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_entries && n < max; i++) {
		int irq = a->entries[i].kind == CAAD_SETTING_IRQ_AFFINITY ? irq_of_path(a->entries[i].path, NULL) : -1;

		if (irq >= 0)
			ret[n++] = irq;
	}
	return n;
}

void caad_actuator_get_stats(const struct caad_actuator *a, struct caad_actuator_stats *ret)
{
	*ret = a->stats;
}

/* A journal line is OBJECT TAB ORIGINAL NEWLINE: neither may hold a
 * control character, or a line could be made to name another object. */
static bool journal_text_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* An IRQ line's third field: the handlers the IRQ had, as its device named them. */
#define IRQ_ACTIONS "actions="
/* A line's last fields, one or two: a value caad wrote there (CPU list or number). */
#define JOURNAL_WROTE "wrote="

static bool count_kind(enum caad_setting_kind kind);

/* What /sys/kernel/irq/N/actions reads under root (a sysroot, "" for the
 * host's): the IRQ's handlers, "i40e-eth0-TxRx-3" and the like; NULL when
 * it cannot be read or is empty (none). */
static char *irq_actions(const char *root, int irq)
{
	_cleanup_free_ char *path = NULL;
	char *text = NULL;

	if (caad_path(&path, root, "/sys/kernel/irq/%d/actions", irq) < 0 || caad_read_file(path, &text) < 0)
		return NULL;
	if (!*text) {
		free(text);
		return NULL;
	}
	return text;
}

/* A journal line's last fields: what caad wrote there, and what it is
 * writing now (an ntuple rule's line has none: the rule is caad's own). */
static void journal_wrote(FILE *f, const struct journal_entry *e)
{
	const struct caad_cpumask *v[2] = { e->has_written ? &e->written : NULL, e->has_writing ? &e->writing : NULL };
	char buf[CAAD_CPUS_MAX * 6];

	if (e->kind == CAAD_SETTING_NTUPLE_RULE)
		return;
	for (unsigned i = 0; i < 2; i++) {
		if (!v[i] || (i == 1 && v[0] && caad_cpumask_equal(v[1], v[0])))
			continue;
		if (count_kind(e->kind))
			fprintf(f, "\t" JOURNAL_WROTE "%" PRIu64, v[i]->w[0]);
		else if (caad_cpumask_format_list(v[i], buf, sizeof(buf)) >= 0)
			fprintf(f, "\t" JOURNAL_WROTE "%s", buf);
	}
}

static int journal_write(struct caad_actuator *a)
{
	_cleanup_free_ char *buf = NULL, *dir = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	for (size_t i = 0; i < a->n_entries; i++)
		if (!journal_text_ok(a->entries[i].path) || !journal_text_ok(a->entries[i].original))
			return log_error_errno(-EBADMSG,
			                       "%s: a control character in its path or original value, not journaled",
			                       a->entries[i].label ? a->entries[i].label : "a setting");

	if (a->n_entries == 0) {
		if (unlink(a->journal_path) < 0 && errno != ENOENT)
			return log_error_errno(errno, "Failed to remove journal %s: %m", a->journal_path);
		return 0;
	}

	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	/* PATH, ORIGINAL and, for an interface's sysfs object or ntuple
	 * rule, its ifindex: after a crash, a name that another device took
	 * since is not written to, and a renamed interface is followed */
	for (size_t i = 0; i < a->n_entries; i++) {
		const struct journal_entry *e = &a->entries[i];

		if (e->ifindex > 0 && (strstr(e->path, "/sys/class/net/") || e->kind == CAAD_SETTING_NTUPLE_RULE))
			fprintf(f, "%s\t%s\t%d", e->path, e->original, e->ifindex);
		else if (e->actions && journal_text_ok(e->actions) && e->actions_first &&
		         !streq(e->actions_first, e->actions) && journal_text_ok(e->actions_first))
			/* either is the device's: renamed handlers, or the names they had */
			fprintf(f, "%s\t%s\t" IRQ_ACTIONS "%s\t" IRQ_ACTIONS "%s", e->path, e->original, e->actions,
			        e->actions_first);
		else if (e->actions && journal_text_ok(e->actions))
			fprintf(f, "%s\t%s\t" IRQ_ACTIONS "%s", e->path, e->original, e->actions);
		else
			fprintf(f, "%s\t%s", e->path, e->original);
		journal_wrote(f, e);
		fputc('\n', f);
	}
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

/*
 * The RFS kinds' values are table sizes, not CPU sets. The actuator
 * compares, journals, refuses and undoes them like sets, so it carries a
 * size in the first word of a set (count_kind(), as_set()); they are only
 * parsed and printed as decimal numbers.
 */
static bool count_kind(enum caad_setting_kind kind)
{
	return kind == CAAD_SETTING_RFS_FLOW_CNT || kind == CAAD_SETTING_RFS_TABLE;
}

/* s itself, or for an RFS kind a copy in *buf with its value as the set. */
static const struct caad_setting *as_set(const struct caad_setting *s, struct caad_setting *buf)
{
	if (!count_kind(s->kind))
		return s;
	*buf = *s;
	caad_cpumask_zero(&buf->cpus);
	buf->cpus.w[0] = s->value;
	return buf;
}

static int parse_value(enum caad_setting_kind kind, const char *s, struct caad_cpumask *ret)
{
	if (count_kind(kind)) {
		unsigned long v;
		char *end;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || end == s || *end || v > UINT32_MAX || s[0] == '-')
			return -EINVAL;
		caad_cpumask_zero(ret);
		ret->w[0] = v;
		return 0;
	}
	return kind == CAAD_SETTING_RPS_CPUS ? caad_cpumask_parse_hex(s, ret) : caad_cpumask_parse_list(s, ret);
}

/*
 * Objects are files, or threaded-NAPI kthreads named "kthread:PID:COMM" in
 * the journal: their affinity is read from /proc/PID/status (as set, see
 * kthread_allowed()) and written with sched_setaffinity(), and only while
 * PID still is that kthread (a PID can be reused).
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

/*
 * The CPUs kthread pid may run on, as set: Cpus_allowed_list of its
 * /proc/PID/status. sched_getaffinity() gives them less the CPUs not
 * active now (offline, or not yet hot-added on a VM): an original read
 * so, and put back, would keep the kthread off those for good.
 */
static int kthread_allowed(pid_t pid, struct caad_cpumask *ret)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "/proc/%d/status", (int)pid) < 0)
		return -ENOMEM;
	if (caad_cpumask_of_status(path, ret) < 0)
		return caad_cpumask_of_task(pid, ret); /* as the scheduler tells it */
	return 0;
}

static int obj_read(const char *obj, char **ret)
{
	const char *comm;
	struct caad_cpumask m;
	char buf[CAAD_CPUS_MAX * 6];
	pid_t pid;
	int r;

	if (kthread_parse(obj, &pid, &comm) < 0)
		return caad_read_file(obj, ret);
	r = kthread_check(pid, comm);
	if (r < 0)
		return r;
	r = kthread_allowed(pid, &m);
	if (r < 0)
		return r;
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
	return caad_cpumask_set_task(pid, &m);
}

static const char *fmt_list(const struct caad_cpumask *m, char *buf, size_t size)
{
	if (caad_cpumask_empty(m))
		return "none";
	if (caad_cpumask_format_list(m, buf, size) < 0)
		return "(many)";
	return buf;
}

/* A value for the log: CPUs, or a table size (see as_set()). */
static const char *fmt_value(enum caad_setting_kind kind, const struct caad_cpumask *m, char *buf, size_t size)
{
	if (!count_kind(kind))
		return fmt_list(m, buf, size);
	snprintf(buf, size, "%" PRIu64, m->w[0]);
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

static const char *const error_text[_CAAD_ERROR_CLASS_COUNT] = {
	[CAAD_ERROR_MANAGED_IRQ] = "kernel-managed or protected IRQ",
	[CAAD_ERROR_OFFLINE_CPU] = "offline or invalid CPU",
	[CAAD_ERROR_NO_VECTORS] = "interrupt vectors exhausted on the target CPU",
	[CAAD_ERROR_DEVICE_GONE] = "device gone",
	[CAAD_ERROR_OTHER] = "unexpected error",
};

/* EIO/EPERM and ENOSPC mean a managed IRQ and no vectors only for an IRQ's
 * affinity; on rps_cpus (EPERM without CAP_NET_ADMIN, a read-only mount)
 * or a kthread they are plain refusals. */
static enum caad_error_class setting_error_class(enum caad_setting_kind kind, int r)
{
	enum caad_error_class c = caad_error_class_from_errno(r);

	if (kind != CAAD_SETTING_IRQ_AFFINITY && (c == CAAD_ERROR_MANAGED_IRQ || c == CAAD_ERROR_NO_VECTORS))
		return CAAD_ERROR_OTHER;
	return c;
}

static void count_class(struct caad_actuator *a, enum caad_error_class c)
{
	a->stats.errors++;
	a->stats.errors_by_class[c]++;
}

static void count_error(struct caad_actuator *a, int r)
{
	count_class(a, caad_error_class_from_errno(r));
}

/* ENOSPC: no IRQ is moved to these CPUs again (until a go-ahead). */
static void exhaust(struct caad_actuator *a, const struct caad_cpumask *cpus)
{
	CAAD_CPUMASK_FOREACH(cpu, cpus) {
		if (caad_cpumask_test(&a->irq_exhausted, (unsigned)cpu))
			continue;
		caad_cpumask_set(&a->irq_exhausted, (unsigned)cpu);
		log_notice("CPU %d has no interrupt vectors left: caad moves no more IRQs there (RPS and kthreads may "
		           "still use it)", cpu);
	}
}

/* The kernel's ENOMEM on a write (an RPS map, a driver's ntuple insert)
 * refuses that object, not caad, which has run out of memory only where
 * its own allocation fails: -ENOMEM stops the whole apply, the rest of
 * the plan with it. -EAGAIN in its place; other errors as they are. */
static int kernel_refusal(int r)
{
	return r == -ENOMEM ? -EAGAIN : r;
}

/*
 * Reading (want NULL) or writing want to path was refused with r. By the
 * error's class:
 *   managed IRQ (EIO, EPERM on an IRQ): the IRQ is unmovable, never tried
 *     again; the queues are read again, and its queue gets RPS;
 *   offline CPU (EINVAL, ERANGE, EOVERFLOW): the topology is read again and
 *     the value tried once more after that; refused again, it is left alone
 *     until the online CPUs change;
 *   no vectors (ENOSPC on an IRQ): its CPUs take no more IRQs;
 *   device gone (ENOENT, ENODEV): dropped; the queues are read again;
 *   anything else (EROFS, EACCES, EPERM on rps_cpus, ...): left alone.
 * A refused write is not tried again while the plan wants the same value
 * (until caad_actuator_clear_backoff()); a refused read is, quietly. Each
 * refusal is logged and counted once. Returns r.
 */
static int refused(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_setting *s,
                   const char *path, const char *label, const char *want, int r)
{
	enum caad_error_class c = setting_error_class(s->kind, r);
	const struct refusal *rf = find_refusal(a, path);
	bool retried = rf && rf->retried && !rf->parked && caad_cpumask_equal(&rf->cpus, &s->cpus);

	/* EBUSY: the IRQ's last move is not done (where the kernel does not
	 * hold the new one pending instead): tried again at the next scan */
	if (!refuse(a, path, &s->cpus, r, want && c != CAAD_ERROR_DEVICE_GONE && r != -EBUSY))
		return r; /* said already */
	count_class(a, c);
	if (c == CAAD_ERROR_DEVICE_GONE)
		a->wants |= CAAD_ACTUATOR_WANT_INVENTORY;
	if (!want)
		return log_warning_errno(r, "%s: cannot read %s (%s): %m", label, path, error_text[c]);

	log_warning_errno(r, "%s: writing \"%s\" to %s failed (%s): %m", label, want, path, error_text[c]);
	switch (c) {
	case CAAD_ERROR_MANAGED_IRQ:
		log_notice("IRQ %d is kernel-managed: %s rx-%u will be steered with RPS instead, never with this IRQ",
		           s->irq, inv->ifaces[s->iface].name, s->queue);
		mark_unmovable(a, s->irq);
		a->wants |= CAAD_ACTUATOR_WANT_INVENTORY;
		break;
	case CAAD_ERROR_OFFLINE_CPU:
		if (retried)
			log_notice("%s: refused again after the topology was read again: left as it is until the online "
			           "CPUs change or the configuration is reloaded", label);
		else {
			log_notice("%s: tried again once the topology has been read again", label);
			a->wants |= CAAD_ACTUATOR_WANT_TOPOLOGY;
		}
		break;
	case CAAD_ERROR_NO_VECTORS:
		exhaust(a, &s->cpus);
		break;
	case CAAD_ERROR_DEVICE_GONE:
		log_info("%s: %s is gone: dropped, nothing to restore there", label, path);
		break;
	default:
		if (r == -EBUSY)
			log_notice("%s: busy (the kernel's last move of it is not done): tried again at the next scan",
			           label);
		else
			log_notice("%s: left as it is; not tried again until the plan wants another value or the "
			           "configuration is reloaded",
			           label);
		break;
	}
	return r;
}

/* The object a setting writes ("kthread:PID:COMM" for a kthread) and its
 * label for the log. -EOPNOTSUPP: a kthread under a sysroot; -ESRCH: the
 * kthread is gone. */
/*
 * What the comm of iface's NAPI kthread pid must read: what it read when
 * the inventory was taken, else "napi/<dev>-<napi id>". -ESRCH when the
 * inventory knows no NAPI of iface polled by pid.
 */
#define KTHREAD_NAME_MAX sizeof(((struct caad_napi *)0)->kthread_comm)
static int napi_kthread_comm(const struct caad_iface *iface, pid_t pid, char ret[static KTHREAD_NAME_MAX])
{
	for (unsigned i = 0; i < iface->n_napis; i++)
		if (pid > 0 && iface->napis[i].kthread == pid) {
			/* as the inventory read it: a renamed device's kthread keeps its first name */
			if (iface->napis[i].kthread_comm[0])
				snprintf(ret, KTHREAD_NAME_MAX, "%s", iface->napis[i].kthread_comm);
			else
				snprintf(ret, KTHREAD_NAME_MAX, "napi/%s-%" PRIu32, iface->name, iface->napis[i].id);
			return 0;
		}
	return -ESRCH;
}

/* Whether comm, as /proc/PID/comm reads, is the name expected: whole (Linux
 * 5.17 on shows a kthread's whole name), or its first 15 characters (the
 * kernel cut it so before). */
static bool kthread_comm_is(const char *comm, const char *expected)
{
	return streq(comm, expected) || (strlen(comm) == 15 && strncmp(comm, expected, 15) == 0);
}

static int setting_path(const struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_setting *s,
                        char **ret_path, char **ret_label)
{
	const struct caad_iface *iface = &inv->ifaces[s->iface];
	_cleanup_free_ char *path = NULL, *label = NULL;
	int r;

	if (s->kind == CAAD_SETTING_KTHREAD_AFFINITY) {
		_cleanup_free_ char *comm_path = NULL, *comm = NULL;
		char expected[KTHREAD_NAME_MAX];

		/* kthread PIDs are the host's: in a fake sysroot they name nothing */
		if (!caad_sysroot_is_host(a->sysroot))
			return -EOPNOTSUPP;
		r = napi_kthread_comm(iface, s->pid, expected);
		if (r < 0)
			return r;
		if (asprintf(&comm_path, "/proc/%d/comm", (int)s->pid) < 0)
			return -ENOMEM;
		r = caad_read_file(comm_path, &comm);
		if (r < 0)
			return r == -ENOENT ? -ESRCH : r;
		/* A PID outlives its task: the kthread may have ended (threaded
		 * switched off sends no link event) and another task taken its
		 * number. Only the NAPI's own kthread is moved. */
		if (!kthread_comm_is(comm, expected))
			return -ESRCH;
		if (asprintf(&path, KTHREAD_PREFIX "%d:%s", (int)s->pid, comm) < 0 ||
		    asprintf(&label, "%s rx-%u: NAPI kthread %d (%s) CPUs", iface->name, s->queue, (int)s->pid, comm) < 0)
			return -ENOMEM;
	} else if (s->kind == CAAD_SETTING_RPS_CPUS) {
		r = caad_path(&path, a->sysroot, "/sys/class/net/%s/queues/rx-%u/rps_cpus", iface->name, s->queue);
		if (r >= 0 && asprintf(&label, "%s rx-%u: RPS CPUs", iface->name, s->queue) < 0)
			r = -ENOMEM;
	} else if (s->kind == CAAD_SETTING_RFS_FLOW_CNT) {
		r = caad_path(&path, a->sysroot, "/sys/class/net/%s/queues/rx-%u/rps_flow_cnt", iface->name, s->queue);
		if (r >= 0 && asprintf(&label, "%s rx-%u: RFS flow table (rps_flow_cnt)", iface->name, s->queue) < 0)
			r = -ENOMEM;
	} else if (s->kind == CAAD_SETTING_RFS_TABLE) {
		/* the host's, not a device's: its label names no interface, so
		 * that forgetting a device that went away keeps it */
		r = caad_path(&path, a->sysroot, "/proc/sys/net/core/rps_sock_flow_entries");
		if (r >= 0 && !(label = strdup("RFS socket flow table (rps_sock_flow_entries)")))
			r = -ENOMEM;
	} else {
		r = caad_path(&path, a->sysroot, "/proc/irq/%d/smp_affinity_list", s->irq);
		if (r >= 0 && asprintf(&label, "%s rx-%u: IRQ %d CPUs", iface->name, s->queue, s->irq) < 0)
			r = -ENOMEM;
	}
	if (r < 0)
		return r;
	*ret_path = TAKE_PTR(path);
	*ret_label = TAKE_PTR(label);
	return 0;
}

/* Refused before and not to be tried now: a managed IRQ, a write refused
 * with this very value, or an object left to someone else (back-off). */
static bool parked(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_setting *setting)
{
	_cleanup_free_ char *path = NULL, *label = NULL;
	const struct refusal *rf;
	struct caad_setting buf;
	const struct caad_setting *s = as_set(setting, &buf);

	if (setting->restore)
		return false; /* a restore writes back what was there */
	if (s->kind == CAAD_SETTING_IRQ_AFFINITY && caad_actuator_irq_unmovable(a, s->irq))
		return true;
	if ((a->n_refusals == 0 && a->n_backoffs == 0) || setting_path(a, inv, s, &path, &label) < 0)
		return false;
	/* a steering value someone else holds now: the rest of its queue
	 * would steer it half (an RPS mask turned off beside an IRQ that is
	 * not caad's); RFS's flow table alone steers nothing */
	if (s->kind != CAAD_SETTING_RFS_FLOW_CNT && backed_off(a, path))
		return true;
	rf = find_refusal(a, path);
	return rf && rf->parked && caad_cpumask_equal(&rf->cpus, &s->cpus);
}

/* A value written by this apply, to put back if its queue's next setting is refused. */
struct undo {
	char *path, *label;
	char *prev;                    /* as read before the write */
	struct caad_cpumask prev_cpus;
	enum caad_setting_kind kind;
	bool added;                    /* its journal entry is new */
};

static void undo_done(struct undo *u)
{
	free(u->path);
	free(u->label);
	free(u->prev);
	*u = (struct undo){};
}

/* What caad holds e's object at changed without a write of its own (the
 * kernel moved it, someone wrote caad's value, an undo): journaled, so
 * that a restore after a crash takes the object for caad's. */
static void entry_set_written(struct caad_actuator *a, struct journal_entry *e, const struct caad_cpumask *m)
{
	if (e->has_written && caad_cpumask_equal(&e->written, m))
		return;
	e->written = *m;
	e->has_written = true;
	(void)journal_write(a); /* not written: a crash restore leaves it as someone else's */
}

/* A journal entry goes: its object is gone, or was never changed after all. */
static void entry_drop(struct caad_actuator *a, struct journal_entry *e)
{
	entry_done(e);
	*e = a->entries[--a->n_entries];
	(void)journal_write(a); /* a stale line would only write back an original */
}

enum caad_setting_state caad_actuator_setting_state(struct caad_actuator *a, const struct caad_inventory *inv,
                                                    const struct caad_setting *setting, char **ret_label)
{
	struct caad_setting buf;
	const struct caad_setting *s = as_set(setting, &buf);
	_cleanup_free_ char *path = NULL, *label = NULL, *current = NULL;
	const struct refusal *rf;
	struct caad_cpumask cur;

	if (ret_label)
		*ret_label = NULL;
	if (s->kind == CAAD_SETTING_NTUPLE_RULE || s->kind == CAAD_SETTING_RFS_TABLE || s->iface < 0 ||
	    (size_t)s->iface >= inv->n_ifaces || setting_path(a, inv, s, &path, &label) < 0)
		return CAAD_SETTING_UNKNOWN;
	if (ret_label)
		*ret_label = TAKE_PTR(label);
	if (backed_off(a, path))
		return CAAD_SETTING_BACKED_OFF;
	if (setting->restore) { /* in place once caad holds nothing there */
		if (!find_entry(a, path))
			return CAAD_SETTING_IN_PLACE;
		return find_refusal(a, path) ? CAAD_SETTING_REFUSED : CAAD_SETTING_PENDING;
	}
	if (obj_read(path, &current) < 0 || parse_value(s->kind, current, &cur) < 0)
		return CAAD_SETTING_REFUSED;
	if (caad_cpumask_equal(&cur, &s->cpus))
		return CAAD_SETTING_IN_PLACE;
	rf = find_refusal(a, path);
	return rf && caad_cpumask_equal(&rf->cpus, &s->cpus) ? CAAD_SETTING_REFUSED : CAAD_SETTING_PENDING;
}

/*
 * A value read as cur where caad wrote `written`: the kernel's doing
 * around CPU hotplug, not someone else's?
 * HOTPLUG_MOVED: the kernel moved it off CPUs that went offline: every CPU
 * caad gave it is offline (an IRQ's affinity is rewritten to the CPUs
 * online then, a kthread's widened), or they are back online and it still
 * reads what the kernel made of it then (an IRQ: the CPUs online then,
 * none of caad's, with caad's all there is, more than one; a kthread:
 * every online CPU): the kernel never moves it back.
 * HOTPLUG_SEEN: nothing moved, but it reads as the CPUs of it online: a
 * kthread's (sched_getaffinity(), where its /proc/PID/status could not be
 * read), or an RPS mask written while some of its CPUs were offline (the
 * kernel keeps the online ones of what it is given).
 * Not known (no online list): HOTPLUG_NO.
 */
enum { HOTPLUG_NO, HOTPLUG_MOVED, HOTPLUG_SEEN };
static int by_hotplug(const char *sysroot, enum caad_setting_kind kind, const struct caad_cpumask *written,
                      const struct caad_cpumask *cur)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	struct caad_cpumask online, both, shared, all;

	if (kind != CAAD_SETTING_IRQ_AFFINITY && kind != CAAD_SETTING_KTHREAD_AFFINITY && kind != CAAD_SETTING_RPS_CPUS)
		return HOTPLUG_NO;
	if (caad_path(&path, sysroot, "/sys/devices/system/cpu/online") < 0 || caad_read_file(path, &text) < 0 ||
	    caad_cpumask_parse_list(text, &online) < 0)
		return HOTPLUG_NO;
	caad_cpumask_and(&both, written, &online);
	if (kind == CAAD_SETTING_RPS_CPUS)
		return caad_cpumask_equal(cur, &both) ? HOTPLUG_SEEN : HOTPLUG_NO;
	if (caad_cpumask_empty(&both))
		return HOTPLUG_MOVED;
	if (kind == CAAD_SETTING_KTHREAD_AFFINITY && caad_cpumask_equal(cur, &both))
		return HOTPLUG_SEEN;
	if (kind == CAAD_SETTING_IRQ_AFFINITY) {
		caad_cpumask_and(&shared, cur, written);
		caad_cpumask_or(&all, cur, written);
		/* one CPU: as likely someone's move (the other CPU of two) */
		return caad_cpumask_empty(&shared) && caad_cpumask_equal(&all, &online) && caad_cpumask_count(cur) > 1
		               ? HOTPLUG_MOVED
		               : HOTPLUG_NO;
	}
	caad_cpumask_and(&all, &online, cur);
	return caad_cpumask_equal(&all, &online) ? HOTPLUG_MOVED : HOTPLUG_NO;
}

static bool gone(int r);

/* e's object reads current, not what caad wrote there, and not by the
 * kernel's doing after CPUs went offline: someone else's now. */
static bool held_by_others(const struct caad_actuator *a, const struct journal_entry *e, const char *current)
{
	struct caad_cpumask cur;

	return parse_value(e->kind, current, &cur) >= 0 && !caad_cpumask_equal(&cur, &e->written) &&
	       by_hotplug(a->sysroot, e->kind, &e->written, &cur) == HOTPLUG_NO;
}

/*
 * A managed queue's object has an orphan's entry (its interface left
 * caad's view): the device came back (from another network namespace), or
 * another one has that IRQ or name now. Of that device, reading what caad
 * wrote,
 * it is caad's still, with its original: the entry is the queue's again
 * (1). Else the object is not what caad changed (a new device's, at its
 * defaults): the entry goes, and its value now is the original (0).
 */
static int adopt_orphan(struct caad_actuator *a, struct journal_entry *e, const struct caad_iface *iface,
                        const char *label, const struct caad_cpumask *cur)
{
	/* a device's own value (ifindex kept): that device, not a new one
	 * under its name; an IRQ the kernel moved off CPUs gone offline
	 * meanwhile is caad's still, as at a restore (held_by_others()) */
	if ((e->ifindex <= 0 || e->ifindex == iface->ifindex) &&
	    (caad_cpumask_equal(cur, &e->written) || by_hotplug(a->sysroot, e->kind, &e->written, cur) != HOTPLUG_NO)) {
		log_info("%s: reads what caad wrote before its interface left, original \"%s\" kept", label, e->original);
		e->orphan = false;
		e->ifindex = iface->ifindex;
		return 1;
	}
	log_info("%s: changed since its interface left caad's view (another device's now): its value is the original",
	         label);
	entry_done(e);
	*e = a->entries[--a->n_entries];
	return journal_write(a) < 0 ? -EIO : 0;
}

/* e's object (path, label, reading current) is someone else's now: its
 * entry goes, and caad backs off from path (taken). The back-off holds
 * even where the journal cannot be written again: without it, the next
 * scan would journal the other's value as the original and write over it
 * (the stale line names only the original, which a crash restore puts
 * back, as it puts back every line). */
static int leave_to_others(struct caad_actuator *a, struct journal_entry *e, char *path, const char *label,
                           const char *current)
{
	int r, q;

	log_notice("%s: changed by someone else to \"%s\" since caad wrote it: leaving it alone %s%s", label, current,
	           a->backoff_sec ? "for a while" : "until the configuration is reloaded",
	           ", and not restoring it on exit");
	entry_done(e);
	*e = a->entries[--a->n_entries];
	r = journal_write(a);
	q = backoff_add(a, path);
	return r < 0 ? r : q;
}

/* What a refused restore is recorded with: no value a plan writes (every CPU). */
static void restore_mark(struct caad_cpumask *m)
{
	memset(m, 0xff, sizeof(*m));
}

/* Dry run: forget that path's announced value, true if one was (the
 * announcement of a value caad would have written must be taken back). */
static bool planned_drop(struct caad_actuator *a, const char *path)
{
	for (size_t i = 0; i < a->n_planned; i++)
		if (streq(a->planned[i].path, path)) {
			free(a->planned[i].path);
			a->planned[i] = a->planned[--a->n_planned];
			return true;
		}
	return false;
}

/*
 * A restore setting (a queue left to the host's steering): what caad
 * wrote at path goes, the original its journal holds comes back, and the
 * entry goes (the value is the host's again: nothing to restore at exit,
 * and a later write journals it anew). Nothing of caad's there: nothing
 * to do. A value someone else changed since caad wrote it is theirs: left,
 * and backed off from, as apply_one() does. A dry run takes back what it
 * announced. Returns 1 when written back, 0 when nothing was, or a
 * negative errno (refused: logged once, the entry stays, the exit tries
 * again).
 */
static int give_back(struct caad_actuator *a, const struct caad_setting *s, const char *path, const char *label)
{
	_cleanup_free_ char *current = NULL;
	struct caad_cpumask mark;
	struct journal_entry *e;
	char note[160];
	int r, level;

	if (a->dry_run) {
		if (planned_drop(a, path)) {
			level = change_level(a, path, note, sizeof(note));
			log_full_errno(level, 0, "%s back to the host's value (dry run: nothing written; %s)%s", label,
			               s->reason, note);
		}
		return 0;
	}
	if (backed_off(a, path))
		return 0;
	e = find_entry(a, path);
	if (!e)
		return 0;
	r = obj_read(path, &current);
	if (gone(r)) {
		/* renamed since the inventory: the next one plans it under its
		 * name now, with its entry */
		r = follow_ifindex(a, e, true);
		if (r < 0)
			return r;
		if (r == FOLLOW_RENAMED) { /* the inventory again, to give it back under its name now */
			a->wants |= CAAD_ACTUATOR_WANT_INVENTORY;
			return 0;
		}
		log_info("%s: gone, nothing to give back", label);
		entry_drop(a, e);
		return 0;
	}
	if (r >= 0 && held_by_others(a, e, current)) {
		char *p = strdup(path);
		return p ? leave_to_others(a, e, p, label, current) : -ENOMEM;
	}
	if (r >= 0)
		r = obj_write(path, e->original);
	if (r < 0) {
		restore_mark(&mark);
		if (refuse(a, path, &mark, r, false)) {
			count_error(a, r);
			log_warning_errno(r, "%s: giving \"%s\" back to %s failed, caad keeps its value (restored on "
			                  "exit): %m", label, e->original, path);
		}
		return r;
	}
	refusal_drop(a, path);
	a->stats.restored++;
	level = change_level(a, path, note, sizeof(note));
	log_full_errno(level, 0, "%s back to the host's %s (%s)%s", label, e->original, s->reason, note);
	entry_drop(a, e);
	return 1;
}

/* s's value is not written because the journal could not say so first
 * (r, what): parked, as a refusal, until the plan wants another value or
 * the configuration is reloaded. Returns r. */
static int unjournaled(struct caad_actuator *a, const char *path, const struct caad_setting *s, const char *label,
                       const char *what, int r)
{
	if (refuse(a, path, &s->cpus, r, true)) {
		count_class(a, CAAD_ERROR_OTHER);
		log_warning_errno(r, "%s: left as it is, %s: %m; not tried again until the plan wants another value or "
		                  "the configuration is reloaded",
		                  label, what);
	}
	return r;
}

/*
 * Returns 1 when written (u then tells how to put it back), 0 when nothing
 * was to be done, a negative errno when it was refused, or -EALREADY when
 * the value is not tried (its CPUs have no vectors left for IRQs).
 */
static int apply_one(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_setting *setting,
                     struct undo *u)
{
	struct caad_setting buf;
	const struct caad_setting *s = as_set(setting, &buf);
	const struct caad_iface *iface = &inv->ifaces[s->iface];
	_cleanup_free_ char *path = NULL, *label = NULL, *current = NULL;
	struct caad_cpumask cur, rest;
	char want[CAAD_CPUS_MAX / 4 + CAAD_CPUS_MAX / 32 + 8], from_buf[256], to_buf[256], note[160];
	const char *from, *to;
	int r, level;

	r = setting_path(a, inv, s, &path, &label);
	if (r == -EOPNOTSUPP) {
		log_debug("%s rx-%u: kthread %d not moved under a sysroot", iface->name, s->queue, (int)s->pid);
		return r;
	}
	if (r == -ESRCH) {
		count_error(a, r);
		a->wants |= CAAD_ACTUATOR_WANT_INVENTORY;
		return log_warning_errno(r, "%s rx-%u: NAPI kthread %d gone: %m", iface->name, s->queue, (int)s->pid);
	}
	if (r < 0)
		return r;
	if (setting->restore)
		return give_back(a, setting, path, label);

	if (backed_off(a, path))
		return 0;

	r = obj_read(path, &current);
	if (r < 0)
		return refused(a, inv, s, path, label, NULL, r);
	r = parse_value(s->kind, current, &cur);
	if (r < 0) {
		if (refuse(a, path, &s->cpus, -EBADMSG, false)) {
			count_class(a, CAAD_ERROR_OTHER);
			log_warning("%s: unexpected content \"%.64s\" in %s, leaving it alone", label, current, path);
		}
		return -EBADMSG;
	}
	/* caad wrote it, and now it reads otherwise: someone else owns it,
	 * unless the kernel moved it off CPUs that went offline */
	struct journal_entry *prev = a->dry_run ? NULL : find_entry(a, path);
	if (prev && prev->orphan) {
		r = adopt_orphan(a, prev, iface, label, &cur);
		if (r < 0)
			return r;
		prev = r ? prev : NULL;
	}
	bool others = prev && !a->go_ahead && !caad_cpumask_equal(&cur, &prev->written);
	if (others) {
		int h = by_hotplug(a->sysroot, s->kind, &prev->written, &cur);

		if (h == HOTPLUG_MOVED) {
			log_info("%s: its CPUs went offline and the kernel moved it to %s: caad's still, original kept",
			         label, current);
			entry_set_written(a, prev, &cur);
		}
		others = h == HOTPLUG_NO;
	}
	if (others)
		return leave_to_others(a, prev, TAKE_PTR(path), label, current);
	if (caad_cpumask_equal(&cur, &s->cpus)) {
		refusal_drop(a, path); /* it holds the value anyway */
		/* after a go-ahead, what someone else wrote there is caad's value now */
		if (prev)
			entry_set_written(a, prev, &cur);
		return 0;
	}
	/* ENOSPC on these CPUs before: stop adding IRQs there */
	caad_cpumask_andnot(&rest, &s->cpus, &a->irq_exhausted);
	if (s->kind == CAAD_SETTING_IRQ_AFFINITY && caad_cpumask_empty(&rest) && !caad_cpumask_empty(&s->cpus)) {
		log_debug("%s: not moved, its CPUs have no interrupt vectors left", label);
		return -EALREADY;
	}

	if (s->kind == CAAD_SETTING_RPS_CPUS)
		r = caad_cpumask_format_hex(&s->cpus, rps_width(inv, &s->cpus), want, sizeof(want));
	else if (count_kind(s->kind))
		r = snprintf(want, sizeof(want), "%u", setting->value);
	else
		r = caad_cpumask_format_list(&s->cpus, want, sizeof(want));
	if (r < 0)
		return log_error_errno(r, "%s: cannot format the new value: %m", label);

	from = fmt_value(s->kind, &cur, from_buf, sizeof(from_buf));
	to = fmt_value(s->kind, &s->cpus, to_buf, sizeof(to_buf));
	if (a->dry_run) {
		if (planned_seen(a, path, &s->cpus))
			return 0;
		level = change_level(a, path, note, sizeof(note));
		log_full_errno(level, 0, "%s %s -> %s (dry run: not written; %s)%s", label, from, to, s->reason, note);
		return 1;
	}

	struct journal_entry *e = find_entry(a, path);
	bool added = false;
	if (e) {
		/* the new value journaled first: after a crash, the object
		 * reading it (or the last one) is caad's, and restored */
		e->writing = s->cpus;
		e->has_writing = true;
		r = journal_write(a);
		if (r < 0) {
			e->has_writing = false;
			return unjournaled(a, path, s, label, "the journal cannot be written", r);
		}
	} else {
		/* the name still the inventory's device: two interfaces that
		 * swapped names since would have this one's value journaled
		 * under the other's ifindex, and restored onto neither */
		r = iface_is(a, path, iface);
		if (r < 0)
			return r;
		if (r == 0) {
			a->wants |= CAAD_ACTUATOR_WANT_INVENTORY;
			log_info("%s: %s is no longer ifindex %d, not written (the next inventory finds it)", label,
			         iface->name, iface->ifindex);
			/* not "gone": what this apply wrote of the queue (its
			 * IRQ, which goes by number) is put back */
			return -ESTALE;
		}
		if (a->n_entries == a->cap_entries) {
			size_t ncap = a->cap_entries ? a->cap_entries * 2 : 16;
			struct journal_entry *ne = reallocarray(a->entries, ncap, sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			a->entries = ne;
			a->cap_entries = ncap;
		}
		e = &a->entries[a->n_entries++];
		*e = (struct journal_entry){ .path = strdup(path), .label = strdup(label),
			                     .original = strdup(current), .kind = s->kind,
			                     .writing = s->cpus, .has_writing = true, .ifindex = iface->ifindex };
		if (s->kind == CAAD_SETTING_IRQ_AFFINITY)
			e->actions = irq_actions(a->sysroot, s->irq); /* NULL: not known, said so */
		if (!e->path || !e->label || !e->original) {
			entry_done(e);
			a->n_entries--;
			return -ENOMEM;
		}
		added = true;
		r = journal_write(a);
		if (r < 0) {
			/* Not journaled: do not touch the host. Parked: what this
			 * apply wrote of the queue before (its IRQ) is put back,
			 * and would be written and put back at every scan. */
			entry_done(e);
			a->n_entries--;
			return unjournaled(a, path, s, label, "its original cannot be journaled", r);
		}
	}

	r = obj_write(path, want);
	e->has_writing = false; /* still journaled: the next journal write drops it */
	if (r < 0) {
		r = kernel_refusal(refused(a, inv, s, path, label, want, r));
		/* Nothing changed: a new entry goes again; a vanished object
		 * takes its old one with it, unless its interface was only
		 * renamed (then followed, to be restored under its new name) */
		if (added)
			entry_drop(a, e);
		else if (setting_error_class(s->kind, r) == CAAD_ERROR_DEVICE_GONE) {
			/* not told (an error): kept, as give_back() keeps it */
			int f = follow_ifindex(a, e, true);

			if (f == FOLLOW_GONE || f == FOLLOW_STILL)
				entry_drop(a, e);
		}
		return r;
	}
	e->written = s->cpus;
	e->has_written = true;
	a->stats.written++;
	refusal_drop(a, path);
	level = change_level(a, path, note, sizeof(note));
	log_full_errno(level, 0, "%s %s -> %s (%s)%s", label, from, to, s->reason, note);
	if (u) {
		*u = (struct undo){ .path = TAKE_PTR(path), .label = TAKE_PTR(label), .prev = TAKE_PTR(current),
			            .prev_cpus = cur, .kind = s->kind, .added = added };
	}
	return 1;
}

/* Put back what u says this apply wrote, because the setting of its queue
 * of kind `refused` was refused. Returns 1 when put back. */
static int undo_one(struct caad_actuator *a, struct undo *u, enum caad_setting_kind refused)
{
	static const char *const what[_CAAD_SETTING_KIND_COUNT] = {
		[CAAD_SETTING_IRQ_AFFINITY] = "its IRQ's affinity",
		[CAAD_SETTING_RPS_CPUS] = "its RPS mask",
		[CAAD_SETTING_KTHREAD_AFFINITY] = "its NAPI kthread's affinity",
		[CAAD_SETTING_RFS_FLOW_CNT] = "its RFS flow table",
		[CAAD_SETTING_RFS_TABLE] = "the RFS socket flow table",
		[CAAD_SETTING_NTUPLE_RULE] = "an ntuple rule",
	};
	struct journal_entry *e;
	char buf[256];
	int r;

	if (!u->path)
		return 0;
	e = find_entry(a, u->path);
	if (e && !u->added) {
		/* caad's earlier value, journaled first as every write is (the
		 * refused setting's journal write since dropped it); put back
		 * even where the journal cannot be written: a half-steered
		 * queue is worse than a crash restore that leaves it */
		e->writing = u->prev_cpus;
		e->has_writing = true;
		(void)journal_write(a);
	}
	r = obj_write(u->path, u->prev);
	if (e)
		e->has_writing = false;
	if (r < 0) {
		count_error(a, r);
		return log_error_errno(r, "%s: failed to put \"%s\" back to %s: %m", u->label, u->prev, u->path);
	}
	a->stats.undone++;
	log_notice("%s put back to %s: %s could not be set with it (a queue is steered all or not at all)", u->label,
	           fmt_value(u->kind, &u->prev_cpus, buf, sizeof(buf)), what[refused]);
	if (e && u->added)
		entry_drop(a, e);
	else if (e) {
		/* journaled before the write: no other journal write */
		e->written = u->prev_cpus;
		e->has_written = true;
	}
	return 1;
}

static int apply_all(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan);

static int apply_ntuple(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan);

/* The object of a kthread's entry or record, whose PID names another task
 * or none now. */
static bool kthread_gone(const char *path)
{
	const char *comm;
	pid_t pid;

	return kthread_parse(path, &pid, &comm) >= 0 && kthread_check(pid, comm) == -ESRCH;
}

static bool kthread_record_gone(const struct caad_actuator *a, const char *path, uint64_t wanted_ns, const void *arg)
{
	return kthread_gone(path);
}

/*
 * NAPI kthreads that are gone, and with them what caad kept of them: a
 * kthread made anew (threaded NAPI turned off and on, channels or rings
 * changed, a reset) has another PID, and the old one's entry could never
 * be restored, its back-off or refusal never be asked again. Each would
 * stay until exit, journaled at every write.
 */
static void drop_dead_kthreads(struct caad_actuator *a)
{
	size_t k = 0;
	int n = 0;

	for (size_t i = 0; i < a->n_entries; i++) {
		struct journal_entry *e = &a->entries[i];

		if (e->kind == CAAD_SETTING_KTHREAD_AFFINITY && kthread_gone(e->path)) {
			log_info("%s: the kthread is gone, nothing to restore", e->label);
			entry_done(e);
			n++;
			continue;
		}
		a->entries[k++] = *e;
	}
	a->n_entries = k;
	records_drop(a, kthread_record_gone, NULL, true);
	if (n > 0)
		(void)journal_write(a); /* a stale line would only be dropped at the next start */
}

/* A device's own values kept while it was away (orphans by ifindex,
 * caad_actuator_forget_iface()): once it is back, whether or not a plan
 * touches them, each is caad's again where it still reads what caad wrote
 * (else its value now is the original: adopt_orphan()), so that a change
 * after that is someone else's; its ntuple rules are apply_ntuple()'s. */
static void adopt_returned(struct caad_actuator *a, const struct caad_inventory *inv)
{
	/* backwards: adopt_orphan() moves the last entry into one it drops */
	for (size_t i = a->n_entries; i-- > 0;) {
		struct journal_entry *e = &a->entries[i];
		const struct caad_iface *iface;
		_cleanup_free_ char *current = NULL;
		struct caad_cpumask cur;

		if (!e->orphan || e->ifindex <= 0 || !(iface = caad_inventory_find_ifindex(inv, e->ifindex)))
			continue;
		if (e->kind == CAAD_SETTING_NTUPLE_RULE) {
			log_info("%s: its interface is back", e->label);
			e->orphan = false;
			continue;
		}
		/* unreadable now: the next apply, or exit, looks again */
		if (obj_read(e->path, &current) < 0 || parse_value(e->kind, current, &cur) < 0)
			continue;
		/* (a journal rewrite that fails after a drop leaves a line that
		 * would only put back an original) */
		(void)adopt_orphan(a, e, iface, e->label, &cur);
	}
}

int caad_actuator_apply(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan)
{
	int n;

	drop_dead_kthreads(a);
	adopt_returned(a, inv);
	n = apply_all(a, inv, plan);

	if (n >= 0) {
		int r = apply_ntuple(a, inv, plan);
		n = r == -ENOMEM ? r : n + MAX(r, 0);
	}
	a->go_ahead = false;
	return n;
}

#define QUEUE_SETTINGS_MAX 4 /* the planner makes up to 3 (an IRQ or kthread, RPS, RFS's flow table),
                              * or 4 restores (kthread, IRQ, RPS, RFS) */

/*
 * One queue's settings, in the planner's order (its IRQ or kthread, then
 * its RPS mask), all or none: a queue with a setting refused before is left
 * as it is; when one is refused now, the rest are skipped (an IRQ that did
 * not move keeps its queue's RPS mask: turning RPS off would leave the
 * queue steered by nothing) and those written before it are put back,
 * unless the refused object is gone (nothing left to contradict them). One
 * found to be someone else's now (caad backs off from it) counts as
 * refused.
 */
static int apply_queue(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_setting *s,
                       size_t n)
{
	struct undo undo[QUEUE_SETTINGS_MAX] = {};
	int written = 0, r = 0;
	bool left = false;
	size_t k;

	assert(n <= QUEUE_SETTINGS_MAX);
	if (s[0].restore) {
		/* giving back: each value on its own, what can go back goes
		 * (nothing of caad's would steer the queue without the rest) */
		for (k = 0; k < n; k++) {
			r = apply_one(a, inv, &s[k], NULL);
			if (r == -ENOMEM)
				return r;
			written += MAX(r, 0);
		}
		return written;
	}
	for (k = 0; k < n; k++)
		if (parked(a, inv, &s[k]))
			return 0;
	for (k = 0; k < n; k++) {
		r = apply_one(a, inv, &s[k], &undo[k]);
		if (r < 0)
			break;
		written += r;
		/* found someone else's just now (backed off from it): the
		 * queue is parked from the next scan on, and is left whole in
		 * this one too, as then */
		if (parked(a, inv, &s[k])) {
			left = true;
			break;
		}
	}
	if ((left || (r < 0 && setting_error_class(s[k].kind, r) != CAAD_ERROR_DEVICE_GONE)) && written > 0)
		for (size_t i = k; i-- > 0;)
			if (undo_one(a, &undo[i], s[k].kind) > 0) /* a failed one stays written */
				written--;
	for (size_t i = 0; i < n; i++)
		undo_done(&undo[i]);
	return r == -ENOMEM ? r : written;
}

/* The global RFS table goes alone (a refusal there undoes no queue), and
 * ntuple rules are apply_ntuple()'s. */
static bool same_queue(const struct caad_setting *x, const struct caad_setting *y)
{
	return x->iface == y->iface && x->queue == y->queue && x->restore == y->restore &&
	       x->kind != CAAD_SETTING_RFS_TABLE && y->kind != CAAD_SETTING_RFS_TABLE &&
	       y->kind != CAAD_SETTING_NTUPLE_RULE;
}

static int apply_all(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan)
{
	int n = 0;

	for (size_t i = 0, j; i < plan->n_settings; i = j) {
		int r;

		if (plan->settings[i].kind == CAAD_SETTING_NTUPLE_RULE) {
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < plan->n_settings && j - i < QUEUE_SETTINGS_MAX &&
		                same_queue(&plan->settings[i], &plan->settings[j]);
		     j++)
			;
		r = apply_queue(a, inv, &plan->settings[i], j - i);
		if (r == -ENOMEM)
			return r;
		n += r;
	}
	return n;
}

/* ---- ntuple rules ------------------------------------------------------ */

/*
 * The plan's ntuple rules are the rules caad wants on the NICs: a planned
 * rule not there yet is inserted, one of caad's that is no longer planned
 * (its flow ended, is light, or is placed otherwise) is deleted. Journal:
 * "ntuple:IFNAME:LOCATION<TAB>RULE" (the rule as caad_ntuple_format()
 * writes it); restoring deletes the rule at LOCATION if it still is that
 * rule, and leaves it if someone else changed it. The location is the
 * driver's choice, known only after the insert: before it the journal
 * says "ntuple:IFNAME:any", and restoring that finds the rule by its
 * 4-tuple and queue among the NIC's rules.
 */

static bool ntuple_obj(const char *obj)
{
	return strncmp(obj, NTUPLE_PREFIX, strlen(NTUPLE_PREFIX)) == 0;
}

/* "ntuple:IFNAME:LOC" -> ifname, loc (RX_CLS_LOC_ANY for "any"). */
static int ntuple_obj_parse(const char *obj, char ifname[static IF_NAMESIZE], uint32_t *ret_loc)
{
	const char *name, *colon;
	unsigned long loc;
	char *end;

	if (!ntuple_obj(obj))
		return -EINVAL;
	name = obj + strlen(NTUPLE_PREFIX);
	colon = strchr(name, ':');
	if (!colon || colon == name || (size_t)(colon - name) >= IF_NAMESIZE)
		return -EINVAL;
	memcpy(ifname, name, (size_t)(colon - name));
	ifname[colon - name] = '\0';
	if (streq(colon + 1, "any")) {
		*ret_loc = RX_CLS_LOC_ANY;
		return 0;
	}
	errno = 0;
	loc = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || loc >= RX_CLS_LOC_ANY || colon[1] == '-')
		return -EINVAL;
	*ret_loc = (uint32_t)loc;
	return 0;
}

/* A rule of ifname with this text: its location, -ENOENT if none. */
static int ntuple_find(const char *ifname, const char *text, uint32_t *ret)
{
	struct caad_ntuple_flow f;
	unsigned q;

	if (caad_ntuple_parse(text, &f, &q) < 0)
		return -ENOENT;
	return caad_ntuple_find(ifname, &f, q, ret);
}

/*
 * Take back the rule a journal line records. Returns 1 when deleted, 0 when
 * there is nothing of caad's to delete (gone, or someone else's now), or a
 * negative errno.
 */
static int ntuple_undo(const char *obj, const char *text, const char *label, int level, const char *note)
{
	char ifname[IF_NAMESIZE], now[160];
	struct caad_ntuple_flow f;
	uint32_t loc;
	unsigned q;
	int r;

	r = ntuple_obj_parse(obj, ifname, &loc);
	if (r < 0) {
		log_warning("%s: not an ntuple rule's journal entry, skipped", obj);
		return 0;
	}
	if (loc == RX_CLS_LOC_ANY) {
		r = ntuple_find(ifname, text, &loc);
		if (r == -ENOENT || r == -ENODEV || r == -EOPNOTSUPP) {
			log_info("%s: not inserted, nothing to delete", label);
			return 0;
		}
		if (r < 0)
			return log_error_errno(r, "%s: cannot read %s's ntuple rules: %m", label, ifname);
	}
	/* no rule there, no device, or a NIC that takes no rules (any more) */
	r = caad_ntuple_get(ifname, loc, &f, &q);
	if (r == -ENOENT || r == -ENODEV || r == -EINVAL || r == -EOPNOTSUPP) {
		log_info("%s: gone, nothing to delete", label);
		return 0;
	}
	if (r == -EBADMSG || (r >= 0 && (caad_ntuple_format(&f, q, now, sizeof(now)) < 0 || !streq(now, text)))) {
		log_notice("%s: location %u holds another rule now (someone else's), leaving it", label, loc);
		return 0;
	}
	if (r < 0)
		return log_error_errno(r, "%s: cannot read rule %u: %m", label, loc);
	r = caad_ntuple_delete(ifname, loc);
	if (r == -ENOENT || r == -ENODEV)
		return 0;
	if (r < 0)
		return kernel_refusal(log_error_errno(r, "%s: failed to delete rule %u: %m", label, loc));
	log_full_errno(level, 0, "%s: deleted%s", label, note);
	return 1;
}

/*
 * Where the NIC of a journaled ntuple rule (obj "ntuple:IFNAME:LOC") is
 * now, by the ifindex it had (want): 0 still under IFNAME; 1 renamed, *ret
 * the line's object under its name now (only with follow: the journal is
 * of this boot); -ENODEV gone, or IFNAME is another device's (its rules
 * went with it, or are not caad's); another -errno when that cannot be
 * told. A malformed obj is 0: ntuple_undo() says what is wrong with it.
 */
static int ntuple_journal_iface(const char *obj, unsigned long want, bool follow, char **ret)
{
	char name[IF_NAMESIZE], now[IF_NAMESIZE];
	uint32_t loc;
	int r;

	if (ntuple_obj_parse(obj, name, &loc) < 0)
		return 0;
	r = caad_ntuple_ifname((int)want, now);
	if (r < 0)
		return r;
	if (streq(now, name))
		return 0;
	if (!follow)
		return -ENODEV;
	if (asprintf(ret, NTUPLE_PREFIX "%s%s", now, obj + strlen(NTUPLE_PREFIX) + strlen(name)) < 0)
		return -ENOMEM;
	return 1;
}

static int ntuple_text(const struct caad_setting *s, char *buf, size_t size)
{
	return caad_ntuple_format(&s->rule, s->queue, buf, size);
}

/* Whether the plan wants the rule of journal entry e. */
static bool ntuple_planned(const struct caad_inventory *inv, const struct caad_plan *plan, const struct journal_entry *e)
{
	for (size_t i = 0; i < plan->n_settings; i++) {
		const struct caad_setting *s = &plan->settings[i];
		char ifname[IF_NAMESIZE], t[160];
		uint32_t loc;

		if (s->kind == CAAD_SETTING_NTUPLE_RULE && ntuple_obj_parse(e->path, ifname, &loc) >= 0 &&
		    streq(ifname, inv->ifaces[s->iface].name) && ntuple_text(s, t, sizeof(t)) >= 0 && streq(t, e->original))
			return true;
	}
	return false;
}

static struct journal_entry *ntuple_entry(struct caad_actuator *a, const char *ifname, const char *text)
{
	for (size_t i = 0; i < a->n_entries; i++) {
		struct journal_entry *e = &a->entries[i];
		char name[IF_NAMESIZE];
		uint32_t loc;

		if (e->kind == CAAD_SETTING_NTUPLE_RULE && ntuple_obj_parse(e->path, name, &loc) >= 0 &&
		    streq(name, ifname) && streq(e->original, text))
			return e;
	}
	return NULL;
}

/*
 * The level of a line that a flow's ntuple rule on ifname (text) was
 * inserted or deleted, and its note (change_level()): a flow's rules to
 * any queue are one object, as a moving reader moves the flow from queue
 * to queue. Out of memory, LOG_INFO: said rather than lost, as there.
 */
static int ntuple_log_level(struct caad_actuator *a, const char *ifname, const char *text, char *note, size_t size)
{
	_cleanup_free_ char *key = NULL;
	const char *q = strstr(text, " queue ");

	if (asprintf(&key, NTUPLE_PREFIX "%s:%.*s", ifname, q ? (int)(q - text) : (int)strlen(text), text) < 0) {
		note[0] = '\0';
		return LOG_INFO;
	}
	return change_level(a, key, note, size);
}

/* The plan wants the rule of key (NTUPLE_PREFIX IF:TEXT) at now: what is
 * kept of it lives on. */
static void ntuple_wanted(struct caad_actuator *a, const char *key, uint64_t now)
{
	for (size_t i = 0; i < a->n_backoffs; i++)
		if (streq(a->backoffs[i].path, key))
			a->backoffs[i].wanted_ns = now;
	for (size_t i = 0; i < a->n_refusals; i++)
		if (streq(a->refusals[i].path, key))
			a->refusals[i].wanted_ns = now;
	for (size_t i = 0; i < a->n_planned; i++)
		if (streq(a->planned[i].path, key))
			a->planned[i].wanted_ns = now;
}

/* An ntuple rule's record not wanted since *now - ntuple_forget_ns (one
 * of a flow that ended, most likely: its tuple will not be back); forgotten
 * (caad_actuator_set_ntuple_forget_sec()). */
static bool ntuple_forgotten(const struct caad_actuator *a, const char *path, uint64_t wanted_ns, const void *now)
{
	return ntuple_obj(path) && wanted_ns + a->ntuple_forget_ns < *(const uint64_t *)now;
}

/* Insert one planned rule: journaled as "any" first, then at its location.
 * Returns 1 when inserted, 0 when not now, or a negative errno. now: this
 * apply's start (ntuple_wanted()). */
static int ntuple_insert(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_setting *s,
                         uint64_t now)
{
	const char *ifname = inv->ifaces[s->iface].name;
	_cleanup_free_ char *key = NULL, *path = NULL, *label = NULL, *text = NULL, *at_path = NULL, *at_label = NULL;
	struct caad_cpumask none;
	struct journal_entry *e;
	char t[160], note[160];
	uint32_t loc;
	int r, level;

	if (ntuple_text(s, t, sizeof(t)) < 0)
		return 0; /* no tuple: the planner makes none such */
	if (ntuple_entry(a, ifname, t))
		return 0; /* there already */
	caad_cpumask_zero(&none);
	if (asprintf(&key, NTUPLE_PREFIX "%s:%s", ifname, t) < 0)
		return -ENOMEM;
	ntuple_wanted(a, key, now);
	struct refusal *rf = find_refusal(a, key);
	/* (a new connection of the same tuple, planned the refused rule, is
	 * told of the refusal too) */
	if (rf && rf->parked)
		rf->flow_id = s->flow_id;
	if (backed_off(a, key) || (rf && rf->parked))
		return 0;
	if (a->dry_run) {
		if (!planned_seen(a, key, &none)) {
			level = ntuple_log_level(a, ifname, t, note, sizeof(note));
			log_full_errno(level, 0, "%s rx-%u: ntuple rule %s (dry run: not inserted; %s)%s", ifname, s->queue,
			               t, s->reason, note);
		}
		return 0;
	}

	/* The entry's names at the location the driver will choose are made
	 * now, as wide as any location: after the insert nothing may fail,
	 * or the rule would stay journaled under "any" and be taken for
	 * someone else's at the next apply (and left on the NIC). */
	if (asprintf(&path, NTUPLE_PREFIX "%s:any", ifname) < 0 ||
	    asprintf(&label, "%s rx-%u: ntuple rule (%s)", ifname, s->queue, t) < 0 || !(text = strdup(t)) ||
	    asprintf(&at_path, NTUPLE_PREFIX "%s:%" PRIu32, ifname, UINT32_MAX) < 0 ||
	    asprintf(&at_label, "%s rx-%u: ntuple rule %" PRIu32 " (%s)", ifname, s->queue, UINT32_MAX, t) < 0)
		return -ENOMEM;
	if (a->n_entries == a->cap_entries) {
		size_t ncap = a->cap_entries ? a->cap_entries * 2 : 16;
		struct journal_entry *ne = reallocarray(a->entries, ncap, sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		a->entries = ne;
		a->cap_entries = ncap;
	}
	e = &a->entries[a->n_entries++];
	*e = (struct journal_entry){ .path = TAKE_PTR(path), .label = TAKE_PTR(label), .original = TAKE_PTR(text),
		                     .kind = CAAD_SETTING_NTUPLE_RULE, .ifindex = inv->ifaces[s->iface].ifindex };
	r = journal_write(a);
	if (r < 0) {
		entry_done(e);
		a->n_entries--;
		return r; /* not journaled: do not touch the NIC */
	}

	r = caad_ntuple_insert(ifname, &s->rule, s->queue, &loc);
	if (r < 0) {
		char *lbl = e->label;

		e->label = NULL;
		entry_drop(a, e);
		bool news = refuse(a, key, &none, r, true);
		struct refusal *nrf = find_refusal(a, key);

		if (nrf)
			nrf->flow_id = s->flow_id; /* (the plan is told: caad_actuator_ntuple_refused()) */
		if (news) {
			count_class(a, caad_error_class_from_errno(r) == CAAD_ERROR_DEVICE_GONE ? CAAD_ERROR_DEVICE_GONE
			                                                                     : CAAD_ERROR_OTHER);
			log_warning_errno(r, "%s: inserting it failed: %m; not tried again while planned, until the "
			                     "configuration is reloaded", lbl);
		}
		free(lbl);
		return kernel_refusal(r);
	}
	/* until this is written down, the "any" line finds it */
	(void)snprintf(at_path, strlen(at_path) + 1, NTUPLE_PREFIX "%s:%" PRIu32, ifname, loc);
	(void)snprintf(at_label, strlen(at_label) + 1, "%s rx-%u: ntuple rule %" PRIu32 " (%s)", ifname, s->queue, loc,
	               t);
	free(e->path);
	free(e->label);
	e->path = TAKE_PTR(at_path);
	e->label = TAKE_PTR(at_label);
	(void)journal_write(a);
	refusal_drop(a, key);
	a->stats.written++;
	level = ntuple_log_level(a, ifname, t, note, sizeof(note));
	log_full_errno(level, 0, "%s: inserted (%s)%s", e->label, s->reason, note);
	return 1;
}

static int apply_ntuple(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan)
{
	uint64_t start = mono_ns();
	int n = 0, r;

	/* the ioctls act on the host's NICs: never under a fake sysroot */
	if (!caad_sysroot_is_host(a->sysroot) && caad_ethtool_ops_are_kernel())
		return 0;

	/* caad's rules that are no longer planned go; those someone else
	 * changed or deleted are forgotten (and left alone a while) */
	for (size_t i = a->n_entries; i-- > 0;) {
		struct journal_entry *e = &a->entries[i];
		char ifname[IF_NAMESIZE], now[160];
		struct caad_ntuple_flow f;
		uint32_t loc;
		unsigned q;

		if (e->kind != CAAD_SETTING_NTUPLE_RULE || ntuple_obj_parse(e->path, ifname, &loc) < 0)
			continue;
		if (e->orphan)
			continue; /* its NIC away (another network namespace): neither deleted nor checked */
		if (!ntuple_planned(inv, plan, e)) {
			char note[160];

			if (a->dry_run)
				continue;
			r = ntuple_undo(e->path, e->original, e->label,
			                ntuple_log_level(a, ifname, e->original, note, sizeof(note)), note);
			if (r < 0) {
				count_error(a, r);
				continue; /* kept: tried again, and at exit */
			}
			entry_drop(a, e);
			n += r;
			continue;
		}
		r = caad_ntuple_get(ifname, loc, &f, &q);
		if (r >= 0 && caad_ntuple_format(&f, q, now, sizeof(now)) >= 0 && streq(now, e->original))
			continue;
		if (r < 0 && r != -ENOENT && r != -EBADMSG && r != -EINVAL)
			continue; /* unreadable now: looked at again next time */
		_cleanup_free_ char *key = NULL;
		if (asprintf(&key, NTUPLE_PREFIX "%s:%s", ifname, e->original) < 0)
			return -ENOMEM;
		log_notice("%s: deleted or replaced by someone else since caad inserted it: leaving it alone %s", e->label,
		           a->backoff_sec ? "for a while" : "until the configuration is reloaded");
		entry_drop(a, e);
		r = backoff_add(a, TAKE_PTR(key));
		if (r < 0)
			return r;
	}

	for (size_t i = 0; i < plan->n_settings; i++) {
		if (plan->settings[i].kind != CAAD_SETTING_NTUPLE_RULE)
			continue;
		r = ntuple_insert(a, inv, &plan->settings[i], start);
		if (r == -ENOMEM)
			return r;
		n += MAX(r, 0);
	}
	/* a refused rule's flow still in the plan (heavy, told of the
	 * refusal and planned without a rule: caad_actuator_ntuple_refused())
	 * still wants it: its refusal stands while the flow lives, else the
	 * rule were planned, refused and logged again every few minutes */
	for (size_t i = 0; i < a->n_refusals; i++)
		if (a->refusals[i].flow_id && caad_plan_find(plan, a->refusals[i].flow_id))
			a->refusals[i].wanted_ns = start;
	records_drop(a, ntuple_forgotten, &start, true);
	return n;
}

/* An object's read or write failed because it is no longer there. */
static bool gone(int r)
{
	return r < 0 && caad_error_class_from_errno(r) == CAAD_ERROR_DEVICE_GONE;
}

#define SYS_NET "/sys/class/net/"

/* The interface an object is of, into ret: ".../sys/class/net/NAME/..."
 * (any sysroot before it) or "ntuple:NAME:...". Returns where that part
 * begins (the sysroot ends there), NULL for another object (an IRQ's, a
 * kthread's, a sysctl). */
static const char *obj_iface(const char *obj, char ret[static IF_NAMESIZE])
{
	bool nt = ntuple_obj(obj);
	const char *at = nt ? obj : strstr(obj, SYS_NET), *name, *end;

	if (!at)
		return NULL;
	name = nt ? obj + strlen(NTUPLE_PREFIX) : at + strlen(SYS_NET);
	end = strchr(name, nt ? ':' : '/');
	if (!end || end == name || (size_t)(end - name) >= IF_NAMESIZE)
		return NULL;
	memcpy(ret, name, (size_t)(end - name));
	ret[end - name] = '\0';
	return at;
}

/* Whether path's interface (if it is an interface's object) is still
 * iface's device: 1 yes (or not an interface's object), 0 no (renamed,
 * another device took the name, gone), < 0 error. */
static int iface_is(struct caad_actuator *a, const char *path, const struct caad_iface *iface)
{
	char name[IF_NAMESIZE], now[IF_NAMESIZE];
	int r;

	if (iface->ifindex <= 0 || ntuple_obj(path) || !obj_iface(path, name)) /* ntuple rules go by ethtool */
		return 1;
	r = caad_inventory_iface_fate(a->sysroot, name, iface->ifindex, now);
	if (r < 0)
		return r;
	return r == CAAD_IFACE_STILL_THERE;
}

static int entry_rename(struct journal_entry *e, const char *from, const char *to);

/*
 * Where e's interface is now, by its ifindex, renamed perhaps while caad
 * did not follow (between two inventories, just before the exit's
 * restore; two interfaces may have swapped names). A rename is followed:
 * all, with every entry of that interface (caad_actuator_rename_iface(),
 * which writes the journal again), else e alone (the exit's restore, which
 * goes entry by entry and writes the journal at its end). Returns
 * FOLLOW_STILL (under its name still, or not an interface's object),
 * FOLLOW_RENAMED (followed: e's object is under the new name now),
 * FOLLOW_GONE (no device has its ifindex), or < 0 error.
 */
static int follow_ifindex(struct caad_actuator *a, struct journal_entry *e, bool all)
{
	char name[IF_NAMESIZE], now[IF_NAMESIZE];
	int r;

	if (e->ifindex <= 0 || !obj_iface(e->path, name) || !entry_of_iface(e, e->ifindex, name))
		return FOLLOW_STILL;
	r = caad_inventory_iface_fate(a->sysroot, name, e->ifindex, now);
	if (r < 0)
		return r;
	if (r != CAAD_IFACE_RENAMED)
		return r == CAAD_IFACE_STILL_THERE ? FOLLOW_STILL : FOLLOW_GONE;
	log_notice("%s: interface %s (ifindex %d) is %s now, caad follows it", e->label, name, e->ifindex, now);
	r = all ? caad_actuator_rename_iface(a, e->ifindex, name, now) : entry_rename(e, name, now);
	return r < 0 ? r : FOLLOW_RENAMED;
}

/*
 * A crash journal's object of interface ifindex `want` whose name is
 * another device's now, or nobody's: under the name that device has now
 * (renamed while caad was down), in *ret (a new string). 1 found, 0 not
 * (gone, or not an interface's object), < 0 error.
 */
static int journal_follow(const char *obj, unsigned long want, char **ret)
{
	_cleanup_free_ char *root = NULL;
	char name[IF_NAMESIZE], now[IF_NAMESIZE];
	const char *at;
	int r;

	if (ntuple_obj(obj) || want == 0 || want > INT_MAX || !(at = obj_iface(obj, name)))
		return 0;
	root = strndup(obj, (size_t)(at - obj));
	if (!root)
		return -ENOMEM;
	r = caad_inventory_iface_fate(root, name, (int)want, now);
	if (r < 0)
		return r;
	if (r != CAAD_IFACE_RENAMED)
		return 0;
	if (asprintf(ret, "%s" SYS_NET "%s%s", root, now, at + strlen(SYS_NET) + strlen(name)) < 0)
		return -ENOMEM;
	return 1;
}

/* Puts e's original back: 0 done (or nothing to do), < 0 failed. */
static int restore_entry(struct caad_actuator *a, struct journal_entry *e)
{
	_cleanup_free_ char *current = NULL;
	int r;

	if (e->kind == CAAD_SETTING_NTUPLE_RULE) {
		_cleanup_free_ char *moved = NULL;

		/* its NIC renamed since caad last looked: deleted under the
		 * name now, as the journal's line after a crash would be */
		r = e->ifindex > 0 ? ntuple_journal_iface(e->path, (unsigned long)e->ifindex, true, &moved) : 0;
		if (r == -ENODEV) {
			log_info("%s: its interface is gone (its rules with it), nothing to restore", e->label);
			return 0;
		}
		if (r < 0)
			return log_error_errno(r, "%s: cannot tell where its interface is: %m", e->label);
		r = ntuple_undo(moved ?: e->path, e->original, e->label, LOG_INFO, "");
		if (r < 0)
			return r;
		a->stats.restored += (unsigned)r;
		return 0;
	}

	/* its interface renamed since caad last looked (after the last
	 * inventory): restored under its name now, and never onto another
	 * device that has taken the old name */
	r = follow_ifindex(a, e, false);
	if (r < 0)
		return log_error_errno(r, "%s: cannot tell where its interface is: %m", e->label);
	if (r == FOLLOW_GONE) {
		log_info("%s: gone, nothing to restore", e->label);
		return 0;
	}
	r = obj_read(e->path, &current);
	if (gone(r)) {
		log_info("%s: gone, nothing to restore", e->label);
		return 0;
	}
	/* its number another device's IRQ now (a driver reloaded) */
	if (r >= 0 && e->kind == CAAD_SETTING_IRQ_AFFINITY && e->actions &&
	    journal_irq_is_other(e->path, e->actions, e->actions_first))
		return 0;
	if (r >= 0 && held_by_others(a, e, current)) {
		if (e->orphan)
			log_info("%s: reads \"%s\" since its interface left caad's view, not what caad wrote: left as it is",
			         e->label, current);
		else
			log_notice("%s: changed by someone else to \"%s\" since caad wrote it, leaving it", e->label,
			           current);
		return 0;
	}
	r = obj_write(e->path, e->original);
	if (gone(r)) { /* since the read */
		log_info("%s: gone, nothing to restore", e->label);
		return 0;
	}
	if (r < 0)
		return log_error_errno(r, "%s: failed to restore \"%s\" to %s: %m", e->label, e->original, e->path);
	a->stats.restored++;
	log_info("%s restored to %s", e->label, e->original);
	return 0;
}

/* Restore the entries of interface ifindex/ifname, or (ifname NULL) all. */
static int restore_entries(struct caad_actuator *a, int ifindex, const char *ifname)
{
	size_t kept = 0, n = 0;
	int r;

	/* the latest first; what fails stays, with its original, in memory
	 * and in the journal: a later restore (or the next start) tries it
	 * again, and an apply meanwhile does not take caad's own value for
	 * the original */
	for (size_t i = a->n_entries; i-- > 0;) {
		if (ifname && !entry_of_iface(&a->entries[i], ifindex, ifname))
			continue;
		n++;
		r = restore_entry(a, &a->entries[i]);
		if (r < 0) {
			count_error(a, r);
			kept++;
			continue;
		}
		entry_done(&a->entries[i]);
		a->entries[i].path = NULL;
	}
	if (ifname && !n)
		return 0;
	size_t k = 0;
	for (size_t i = 0; i < a->n_entries; i++)
		if (a->entries[i].path)
			a->entries[k++] = a->entries[i];
	assert(ifname || k == kept);
	a->n_entries = k;
	r = journal_write(a);
	if (r < 0)
		return r;
	return kept ? -EIO : 0;
}

int caad_actuator_restore(struct caad_actuator *a)
{
	return restore_entries(a, 0, NULL);
}

int caad_actuator_restore_iface(struct caad_actuator *a, int ifindex, const char *ifname)
{
	return restore_entries(a, ifindex, ifname);
}

/*
 * The ifindex, now, of the interface whose sysfs object obj is
 * (".../sys/class/net/DEV/...", any sysroot in it); 0 for another object
 * (an IRQ, a kthread, an ntuple rule), -ENODEV when DEV is gone, another
 * -errno when that cannot be told (-EINVAL: no object under DEV;
 * -EBADMSG: its ifindex file holds no ifindex).
 */
static int journal_obj_ifindex(const char *obj)
{
	static const char net[] = "/sys/class/net/";
	_cleanup_free_ char *path = NULL;
	const char *at = strstr(obj, net), *end;
	char buf[32];
	unsigned long v;
	char *e;
	int r;

	if (!at || ntuple_obj(obj))
		return 0;
	end = strchr(at + strlen(net), '/');
	if (!end)
		return -EINVAL;
	if (asprintf(&path, "%.*sifindex", (int)(end - obj + 1), obj) < 0)
		return -ENOMEM;
	r = caad_read_line(path, buf, sizeof(buf));
	if (r == -ENOENT || r == -ENODEV)
		return -ENODEV;
	if (r < 0)
		return r;
	errno = 0;
	v = strtoul(buf, &e, 10);
	return errno || *e || v == 0 || v > INT_MAX ? -EBADMSG : (int)v;
}

/*
 * Whether the IRQ of a journal line's object (".../proc/irq/N/...", any
 * sysroot in it) has other handlers now than `was` (or than was_too, the
 * names they had before a rename of their interface; NULL: none): another
 * device's since (a driver reload, a reboot), whose affinity is not caad's
 * to put back. 1 (logged), or 0: the same, or not known (unreadable:
 * restored as it was).
 */
static int journal_irq_is_other(const char *obj, const char *was, const char *was_too)
{
	_cleanup_free_ char *root = NULL, *now = NULL;
	size_t root_len;
	int irq = irq_of_path(obj, &root_len);

	if (irq < 0 || !(root = strndup(obj, root_len)))
		return 0;
	now = irq_actions(root, irq);
	if (!now || streq(now, was) || (was_too && streq(now, was_too)))
		return 0;
	log_notice("%s: IRQ %d is \"%s\" now, not \"%s\" as when caad changed it (another device since): not "
	           "restored",
	           obj, irq, now, was);
	return 1;
}

/* A journal line that failed, as it was, for the next attempt. */
static void keep_line(FILE *f, const char *obj, const char *original, const char *ifindex, const char *wrote)
{
	fprintf(f, "%s\t%s", obj, original);
	if (ifindex)
		fprintf(f, "\t%s", ifindex);
	if (wrote)
		fprintf(f, "\t%s", wrote);
	fputc('\n', f);
}

/*
 * Whether a journal line's object (not an ntuple rule) reads neither its
 * original nor a value its "wrote=" fields (wrote: "wrote=A[TAB wrote=B]",
 * NULL for a journal of an earlier caad, which had none) say caad wrote,
 * and not by the kernel's doing after CPUs went offline: someone else
 * changed it after caad's crash (or before it, after caad's last write),
 * and it is theirs. 1 (logged), or 0: restore it (caad's, or not known:
 * unreadable, a field that does not parse).
 */
static int journal_obj_taken(const char *journal_path, unsigned lineno, const char *obj,
                             enum caad_setting_kind kind, const char *original, const char *wrote)
{
	_cleanup_free_ char *current = NULL, *root = NULL;
	struct caad_cpumask cur, m;
	size_t root_len = 0;

	if (!wrote || obj_read(obj, &current) < 0 || parse_value(kind, current, &cur) < 0)
		return 0;
	if (parse_value(kind, original, &m) >= 0 && caad_cpumask_equal(&cur, &m))
		return 0; /* nothing to do, and nothing lost writing it */
	if (kind == CAAD_SETTING_IRQ_AFFINITY && irq_of_path(obj, &root_len) >= 0)
		root = strndup(obj, root_len);
	for (const char *w = wrote, *end; w; w = end ? end + 1 : NULL) {
		_cleanup_free_ char *v = NULL;

		end = strchr(w, '\t');
		if (strncmp(w, JOURNAL_WROTE, strlen(JOURNAL_WROTE)) != 0 ||
		    !(v = strndup(w + strlen(JOURNAL_WROTE), end ? (size_t)(end - w) - strlen(JOURNAL_WROTE) : SIZE_MAX)) ||
		    (count_kind(kind) ? parse_value(kind, v, &m) : caad_cpumask_parse_list(v, &m)) < 0) {
			log_warning("%s:%u: unknown field \"%.64s\" of %s: what caad wrote there is not known, restored "
			            "all the same",
			            journal_path, lineno, w, obj);
			return 0;
		}
		if (caad_cpumask_equal(&cur, &m) ||
		    by_hotplug(root ?: "", kind, &m, &cur) != HOTPLUG_NO)
			return 0;
	}
	_cleanup_free_ char *shown = strdup(wrote);
	for (char *t = shown; t && (t = strchr(t, '\t'));)
		*t = ' ';
	log_notice("%s: reads \"%s\", neither its original \"%s\" nor what caad wrote (%s): changed by someone else "
	           "since, not restored",
	           obj, current, original, shown ?: "?");
	return 1;
}

/* The last place of needle in s, or NULL. */
static const char *last_of(const char *s, const char *needle)
{
	const char *at = NULL;

	for (const char *p = s; (p = strstr(p, needle)); p++)
		at = p;
	return at;
}

/* s begins with one or more digits: past them, else NULL. */
static const char *past_digits(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n ? s + n : NULL;
}

/*
 * The kind of value of a journal line's object, one caad writes, under
 * any sysroot (whatever comes before the object's own part, relative or
 * not); -EINVAL for any other: the journal is the operator's to edit (its
 * messages say so), and a line naming another file would have caad
 * truncate and write it as root.
 */
static int journal_obj_kind(const char *obj)
{
	static const char table[] = "/proc/sys/net/core/rps_sock_flow_entries";
	size_t len = strlen(obj);
	const char *comm, *at;
	pid_t pid;

	if (ntuple_obj(obj))
		return CAAD_SETTING_NTUPLE_RULE;
	if (kthread_parse(obj, &pid, &comm) >= 0)
		return CAAD_SETTING_KTHREAD_AFFINITY;
	if (len > strlen(table) && streq(obj + len - strlen(table), table))
		return CAAD_SETTING_RFS_TABLE;
	/* .../proc/irq/N/smp_affinity_list */
	if ((at = last_of(obj, "/proc/irq/")) && (at = past_digits(at + strlen("/proc/irq/"))) &&
	    streq(at, "/smp_affinity_list"))
		return CAAD_SETTING_IRQ_AFFINITY;
	/* .../sys/class/net/NAME/queues/rx-N/{rps_cpus,rps_flow_cnt} */
	if ((at = last_of(obj, SYS_NET))) {
		const char *name = at + strlen(SYS_NET), *slash = strchr(name, '/');

		if (!slash || slash == name || (size_t)(slash - name) >= IF_NAMESIZE ||
		    (slash - name <= 2 && strspn(name, ".") == (size_t)(slash - name)) ||
		    strncmp(slash, "/queues/rx-", strlen("/queues/rx-")) != 0 ||
		    !(at = past_digits(slash + strlen("/queues/rx-"))))
			return -EINVAL;
		if (streq(at, "/rps_cpus"))
			return CAAD_SETTING_RPS_CPUS;
		if (streq(at, "/rps_flow_cnt"))
			return CAAD_SETTING_RFS_FLOW_CNT;
	}
	return -EINVAL;
}

int caad_journal_restore(const char *journal_path, bool follow_renames)
{
	_cleanup_free_ char *text = NULL, *left = NULL;
	const char *kind;
	FILE *lf;
	size_t left_len = 0;
	int r, n = 0, failed = 0, okind;
	unsigned lineno = 0;

	/* untrimmed: the last line's original may be empty ("PATH\t"); and
	 * without waiting on a FIFO's writer, or a start would hang there */
	r = caad_read_own_file_raw(journal_path, &text, &kind);
	if (r == -ENOENT)
		return 0;
	if (r == -EBADFD)
		return log_error_errno(r, "Failed to read journal %s: it is %s, which caad never writes: remove it",
		                       journal_path, kind);
	if (r < 0)
		return log_error_errno(r, "Failed to read journal %s: %m", journal_path);

	/* the lines that fail, to be tried again at the next start: those
	 * restored are not written again then, over what the host has now */
	lf = open_memstream(&left, &left_len);
	if (!lf)
		return -ENOMEM;
	/* line by line, blank ones counted: messages name the line an editor shows */
	for (char *line = text, *next; line; line = next) {
		_cleanup_free_ char *moved = NULL;
		char *tab, *original, *idx, *wrote;
		unsigned long want = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (!*line)
			continue;
		tab = strchr(line, '\t');
		/* no object or no value: nothing anyone could restore from it */
		if (!tab || tab == line) {
			log_warning("%s:%u: malformed journal line, skipped", journal_path, lineno);
			continue;
		}
		*tab = 0;
		original = tab + 1;
		/* the last fields: what caad wrote there (older journals: none) */
		wrote = strstr(original, "\t" JOURNAL_WROTE);
		if (wrote)
			*wrote++ = 0;
		okind = journal_obj_kind(line);
		if (okind < 0) {
			log_error("%s:%u: %s is not an object caad writes: not restored", journal_path, lineno, line);
			failed++;
			keep_line(lf, line, original, NULL, wrote);
			continue;
		}
		/* a third field: the ifindex the object's interface had, or an
		 * IRQ's handlers (older journals: none) */
		idx = strchr(original, '\t');
		if (idx && strncmp(idx + 1, IRQ_ACTIONS, strlen(IRQ_ACTIONS)) == 0) {
			/* and the names they had before a rename, if any */
			char *too = strstr(idx + 1, "\t" IRQ_ACTIONS);

			*idx++ = 0;
			if (too)
				*too++ = 0;
			r = journal_irq_is_other(line, idx + strlen(IRQ_ACTIONS), too ? too + strlen(IRQ_ACTIONS) : NULL);
			if (r > 0)
				continue;
			/* both fields, as they were, in a line kept for the next
			 * attempt (keep_line() writes idx whole, then wrote) */
			if (too)
				too[-1] = '\t';
		} else if (idx) {
			char *e;

			*idx++ = 0;
			errno = 0;
			want = strtoul(idx, &e, 10);
			/* an original value, but whose device it was is not known:
			 * kept for the operator, never written blind or dropped */
			if (errno || *e || want == 0 || want > INT_MAX) {
				log_error("%s:%u: unknown last field \"%s\" of %s (a journal of another caad?): not "
				          "restored",
				          journal_path, lineno, idx, line);
				failed++;
				keep_line(lf, line, original, idx, wrote);
				continue;
			}
			/* r: the ifindex of the line's interface now (-ENODEV:
			 * gone; for an ntuple rule, also its name another
			 * device's; 0: not an interface's object), and f whether
			 * it was followed: a sysfs object's interface gone or its
			 * name another device's was renamed while caad was down,
			 * perhaps (ifindex want under another name) */
			int f = 0;

			if (ntuple_obj(line)) {
				f = ntuple_journal_iface(line, want, follow_renames, &moved);
				r = f >= 0 ? (int)want : f;
			} else {
				r = journal_obj_ifindex(line);
				if (follow_renames && (r == -ENODEV || (r > 0 && (unsigned long)r != want)))
					f = journal_follow(line, want, &moved);
			}
			if (f > 0) {
				log_notice("%s: its interface (ifindex %lu) was renamed, restoring it as %s", line, want,
				           moved);
				line = moved;
				r = (int)want;
			} else if (f < 0 && f != -ENODEV) {
				log_error_errno(f, "%s:%u: cannot tell where the device of %s went, not restored: %m",
				                journal_path, lineno, line);
				failed++;
				keep_line(lf, line, original, idx, wrote);
				continue;
			}
			if (r == -ENODEV) {
				if (ntuple_obj(line))
					log_info("%s: its interface (ifindex %lu) is gone, or its name another "
					         "device's now: not restored",
					         line, want);
				else
					log_info("%s: gone, nothing to restore", line);
				continue;
			}
			if (r < 0) {
				log_error_errno(r, "%s:%u: cannot tell the device of %s, not restored: %m", journal_path,
				                lineno, line);
				failed++;
				keep_line(lf, line, original, idx, wrote);
				continue;
			}
			if (r > 0 && (unsigned long)r != want) {
				log_notice("%s: its interface is another device now (ifindex %d, was %lu): not restored",
				           line, r, want);
				continue;
			}
		}
		if (ntuple_obj(line)) {
			r = ntuple_undo(line, original, line, LOG_INFO, "");
			if (r < 0) {
				failed++;
				keep_line(lf, line, original, idx, wrote);
			}
			n += MAX(r, 0);
			continue;
		}
		if (journal_obj_taken(journal_path, lineno, line, (enum caad_setting_kind)okind, original, wrote))
			continue;
		r = obj_write(line, original);
		if (gone(r)) {
			log_info("%s: gone, nothing to restore", line);
			continue;
		}
		/* An IRQ whose affinity nobody may set now (managed by the
		 * kernel: EIO) is not the one caad moved: its device changed
		 * (a driver reload, a reboot), and kept, the line would stop
		 * every start from now on. */
		if (r == -EIO && strstr(line, "/proc/irq/")) {
			log_notice("%s: its IRQ's affinity is the kernel's to set now (another device since): not "
			           "restored",
			           line);
			continue;
		}
		if (r < 0) {
			log_error_errno(r, "%s:%u: failed to restore \"%s\" to %s: %m", journal_path, lineno, original, line);
			failed++;
			keep_line(lf, line, original, idx, wrote);
			continue;
		}
		log_notice("Restored %s to \"%s\" from the journal of an earlier run", line, original);
		n++;
	}
	if (fclose(lf) != 0)
		return -ENOMEM;
	if (failed) {
		r = caad_write_file_atomic(journal_path, left, left_len, 0600);
		if (r < 0)
			log_error_errno(r, "Failed to rewrite journal %s: %m", journal_path);
		log_error("%s: %d value%s could not be restored and stay%s in it: fix each object, or remove its "
		          "line, then start caad (or run caad --restore) again",
		          journal_path, failed, failed == 1 ? "" : "s", failed == 1 ? "s" : "");
		return -EIO;
	}
	if (unlink(journal_path) < 0 && errno != ENOENT)
		return log_error_errno(errno, "Failed to remove journal %s: %m", journal_path);
	return n;
}

/* A boot id as the kernel prints it: 36 characters, hex digits and dashes. */
static bool boot_id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n != 36)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* A boot id in path (one line, trimmed) into buf[37]: 0, or -errno (-EBADMSG: not a boot id). */
static int read_boot_id(const char *path, char *buf)
{
	char line[64];
	int r;

	r = caad_read_line(path, line, sizeof(line));
	if (r == -ENOBUFS)
		return -EBADMSG;
	if (r < 0)
		return r;
	if (!boot_id_ok(line))
		return -EBADMSG;
	strcpy(buf, line);
	return 0;
}

int caad_journals_drop_other_boot(const char *runtime_dir, const char *boot_id_path, const char *const *journals,
                                  size_t n, bool *ret_same_boot)
{
	_cleanup_free_ char *mark = NULL;
	char now[37 + 1], was[37];
	int r, dropped = 0;

	if (ret_same_boot)
		*ret_same_boot = false;

	if (!boot_id_path)
		boot_id_path = "/proc/sys/kernel/random/boot_id";
	if (asprintf(&mark, "%s/boot_id", runtime_dir) < 0)
		return -ENOMEM;
	r = read_boot_id(boot_id_path, now);
	if (r < 0) {
		log_warning_errno(r, "Cannot tell this boot from %s (%m): journals are restored whenever they were written",
		                  boot_id_path);
		/* nor is an earlier boot's record kept: a journal of this
		 * boot would be taken for one of that boot's at a start that
		 * can tell */
		if (unlink(mark) < 0 && errno != ENOENT)
			return log_error_errno(errno, "Failed to remove %s: %m", mark);
		return 0;
	}
	r = read_boot_id(mark, was);
	if (r == 0 && streq(was, now)) {
		if (ret_same_boot)
			*ret_same_boot = true;
		return 0;
	}
	if (r == -EBADMSG)
		log_warning("%s: not a boot id, ignored", mark);
	else if (r < 0 && r != -ENOENT)
		log_warning_errno(r, "Failed to read %s, ignored: %m", mark);
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (unlink(journals[i]) == 0) {
			log_notice("%s: written before the host restarted (boot %s, now %s), whose reboot reset what it "
			           "records: removed, not restored",
			           journals[i], was, now);
			dropped++;
		} else if (errno != ENOENT) {
			return log_error_errno(errno, "Failed to remove %s, of an earlier boot: %m", journals[i]);
		}
	}
	strcat(now, "\n");
	r = caad_write_file_atomic(mark, now, strlen(now), 0644);
	if (r < 0) {
		/* what is there is restored all the same (a crash's journal
		 * waits for it), as when the boot cannot be told */
		log_warning_errno(r, "Failed to write %s (%m): the next start cannot tell this boot's journals from an "
		                  "earlier one's",
		                  mark);
		(void)unlink(mark);
	}
	return dropped;
}

/* s with its first `from` (which it holds) made `to`: a new string, or NULL */
static char *replace_first(const char *s, const char *at, const char *from, const char *to)
{
	char *ret = NULL;

	if (asprintf(&ret, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from)) < 0)
		return NULL;
	return ret;
}

/* The first place of name in actions as a whole '-'-separated part of a
 * handler's name ("i40e-eth0-TxRx-3", "eth0-TxRx-3"), or NULL: not inside
 * another word ("mlx5_comp3@pci:..." for an interface named "pci"). */
static const char *name_token(const char *actions, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = actions; n && (p = strstr(p, name)); p++)
		if ((p == actions || p[-1] == '-' || p[-1] == ',') && (p[n] == '\0' || p[n] == '-' || p[n] == ','))
			return p;
	return NULL;
}

/* e, an entry of interface `from`, as one of `to`: its object (an
 * interface's sysfs file, an ntuple rule; IRQs and kthreads do not go by
 * the interface's name), its label, and an IRQ's handlers: drivers that
 * name them after the interface (i40e-eth0-TxRx-3) request them again
 * under the new name when it comes up, and the IRQ keeps caad's affinity. */
static int entry_rename(struct journal_entry *e, const char *from, const char *to)
{
	_cleanup_free_ char *sys_from = NULL, *sys_to = NULL, *nt_from = NULL, *nt_to = NULL, *lb_from = NULL,
	                    *lb_to = NULL;
	const char *at;
	char *path, *label;

	if (asprintf(&sys_from, SYS_NET "%s/", from) < 0 || asprintf(&sys_to, SYS_NET "%s/", to) < 0 ||
	    asprintf(&nt_from, NTUPLE_PREFIX "%s:", from) < 0 || asprintf(&nt_to, NTUPLE_PREFIX "%s:", to) < 0 ||
	    asprintf(&lb_from, "%s ", from) < 0 || asprintf(&lb_to, "%s ", to) < 0)
		return -ENOMEM;
	if ((at = strstr(e->path, sys_from)))
		path = replace_first(e->path, at, sys_from, sys_to);
	else if (strncmp(e->path, nt_from, strlen(nt_from)) == 0)
		path = replace_first(e->path, e->path, nt_from, nt_to);
	else
		path = strdup(e->path);
	label = replace_first(e->label, e->label, lb_from, lb_to);
	if (e->actions && (at = name_token(e->actions, from))) {
		char *actions = replace_first(e->actions, at, from, to);

		if (!actions) {
			free(path);
			free(label);
			return -ENOMEM;
		}
		/* the names as first journaled stay too: a driver that named
		 * its handlers at open keeps them until it is opened again */
		if (!e->actions_first)
			e->actions_first = e->actions;
		else
			free(e->actions);
		e->actions = actions;
	}
	if (!path || !label) {
		free(path);
		free(label);
		return -ENOMEM;
	}
	free(e->path);
	free(e->label);
	e->path = path;
	e->label = label;
	return 0;
}

/* name with its control characters as \xHH, for a log line */
static const char *shown_name(const char *name, char buf[static IF_NAMESIZE * 4 + 1])
{
	char *o = buf;

	for (const unsigned char *c = (const unsigned char *)name; *c && o - buf < IF_NAMESIZE * 4 - 3; c++)
		o += *c < 0x20 || *c == 0x7f ? sprintf(o, "\\x%02x", *c) : sprintf(o, "%c", *c);
	*o = '\0';
	return buf;
}

int caad_actuator_rename_iface(struct caad_actuator *a, int ifindex, const char *from, const char *to)
{
	_cleanup_free_ char *sys_from = NULL, *rules_from = NULL;
	bool keep = journal_text_ok(to);
	char shown[IF_NAMESIZE * 4 + 1];
	size_t k = 0;
	int n = 0, err = 0, r;

	if (asprintf(&sys_from, SYS_NET "%s/", from) < 0 || asprintf(&rules_from, NTUPLE_PREFIX "%s:", from) < 0)
		return -ENOMEM;
	if (!keep)
		log_warning("%s (ifindex %d) is now \"%s\", a name with control characters, which caad's journal cannot "
		            "hold: what caad changed under that name is put back now",
		            from, ifindex, shown_name(to, shown));
	for (size_t i = 0; i < a->n_entries; i++) {
		struct journal_entry *e = &a->entries[i];

		if (entry_of_iface(e, ifindex, from)) {
			r = entry_rename(e, from, to);
			if (r < 0)
				err = r; /* kept under its old name */
			else
				n++;
			/* every later journal write would fail on it (its IRQs'
			 * and kthreads' paths do not name it: they stay) */
			if (r >= 0 && !keep && !journal_text_ok(e->path)) {
				r = restore_entry(a, e);
				/* logged; and no record can keep it for a retry */
				if (r < 0) {
					count_error(a, r);
					log_error("%s: caad's value stays, kept nowhere: the journal cannot hold its "
					          "interface's name; its original was \"%s\"",
					          e->label, e->original);
				}
				entry_done(e);
				continue;
			}
		}
		a->entries[k++] = *e;
	}
	a->n_entries = k;
	r = forget_paths(a, sys_from, rules_from, n);
	return err < 0 ? err : r;
}
