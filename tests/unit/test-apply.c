/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The actuator against a fake sysroot made by each test in a temp dir:
 *
 *   TOP/root/sys/class/net/vb/{ifindex, queues/rx-{0,1}/rps_cpus}
 *   TOP/root/sys/devices/system/cpu/possible          "0-1"
 *   TOP/root/proc/irq/100/smp_affinity_list           "0-1"
 *   TOP/root/proc/irq/101/smp_affinity_list           "1"
 *   TOP/root/run/journal                              (the actuator's)
 *
 * TOP itself holds a sentinel tree that must never change.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cmocka.h>

#include "caad/apply.h"
#include "caad/cpumask.h"
#include "caad/inventory.h"
#include "caad/log.h"
#include "caad/loglimit.h"
#include "caad/macro.h"
#include "caad/ntuple.h"
#include "caad/plan.h"
#include "caad/sysfs.h"

#include "capture.h"
#include "child.h"
#include "test-util.h"

#define RX0 "sys/class/net/vb/queues/rx-0/rps_cpus"
#define RX1 "sys/class/net/vb/queues/rx-1/rps_cpus"
#define IRQ100 "proc/irq/100/smp_affinity_list"
#define IRQ101 "proc/irq/101/smp_affinity_list"

struct fixture {
	char *top;     /* the temp dir */
	char *root;    /* TOP/root: the fake sysroot */
	char *journal; /* ROOT/run/journal */
	struct caad_inventory *inv;
};

/* ---- files ------------------------------------------------------------- */

static char *path_in(const char *root, const char *rel)
{
	char *p = NULL;

	assert_int_equal(caad_path(&p, root, "/%s", rel), 0);
	return p;
}

/* The exact bytes of a file, or NULL when it cannot be read. */
static char *read_all(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[4096];
	ssize_t k;
	size_t len = 0;

	if (fd < 0)
		return NULL;
	for (;;) {
		k = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	if (k < 0)
		return NULL;
	buf[len] = 0;
	return strdup(buf);
}

static void assert_content(const char *root, const char *rel, const char *want)
{
	_cleanup_free_ char *path = path_in(root, rel), *got = read_all(path);

	if (!got)
		fail_msg("%s: cannot read", path);
	if (!streq(got, want))
		fail_msg("%s: \"%s\", expected \"%s\"", path, got, want);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void set_old_mtime(const char *root, const char *rel)
{
	_cleanup_free_ char *path = path_in(root, rel);
	const struct timespec ts[2] = { { .tv_sec = 1000000 }, { .tv_sec = 1000000 } };

	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static bool mtime_is_old(const char *root, const char *rel)
{
	_cleanup_free_ char *path = path_in(root, rel);
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mtim.tv_sec == 1000000;
}

/* ---- refused writes ---------------------------------------------------- */

/*
 * The actuator's writes go through caad_write_file(), wrapped here
 * (-Wl,--wrap=caad_write_file): a write to a path ending in fault.suffix
 * fails as the kernel's would (fault.error), or the file vanishes just
 * before it (fault.vanish). fault.times: fail this many, 0 every one.
 */
int __real_caad_write_file(const char *path, const char *value);
int __wrap_caad_write_file(const char *path, const char *value);

static struct {
	const char *suffix; /* NULL: no fault */
	int error;          /* -errno */
	bool vanish;
	unsigned times;
	unsigned calls;     /* writes to a matching path */
	unsigned writes;    /* all writes */
	const char *inside; /* non-NULL: every path written must start with it */
	const char *peek;   /* non-NULL: at each write of a path ending so, the journal is read */
	const char *journal;
	char *journal_then; /* as read at the last such write (NULL: none, or unreadable) */
} fault;

static char *read_all(const char *path);

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && streq(s + n - k, suffix);
}

int __wrap_caad_write_file(const char *path, const char *value)
{
	fault.writes++;
	if (fault.peek && ends_with(path, fault.peek)) {
		free(fault.journal_then);
		fault.journal_then = read_all(fault.journal);
	}
	if (fault.inside && strncmp(path, fault.inside, strlen(fault.inside)) != 0)
		fail_msg("written outside %s: %s", fault.inside, path);
	if (fault.suffix && ends_with(path, fault.suffix)) {
		fault.calls++;
		if (!fault.times || fault.calls <= fault.times) {
			if (!fault.vanish)
				return fault.error;
			assert_int_equal(unlink(path), 0);
		}
	}
	return __real_caad_write_file(path, value);
}

int __real_caad_inventory_iface_fate(const char *sysroot, const char *name, int ifindex,
                                     char ret_name[static IF_NAMESIZE]);
int __wrap_caad_inventory_iface_fate(const char *sysroot, const char *name, int ifindex,
                                     char ret_name[static IF_NAMESIZE]);

/* caad_inventory_iface_fate()'s error at its next calls (0: none) */
static int fate_error;

int __wrap_caad_inventory_iface_fate(const char *sysroot, const char *name, int ifindex,
                                     char ret_name[static IF_NAMESIZE])
{
	if (fate_error)
		return fate_error;
	return __real_caad_inventory_iface_fate(sysroot, name, ifindex, ret_name);
}

static void fault_set(const char *suffix, int error, unsigned times)
{
	free(fault.journal_then);
	fault = (typeof(fault)){ .suffix = suffix, .error = error, .times = times };
	fate_error = 0;
}

/* ---- fixture ----------------------------------------------------------- */

static void write_originals(const char *root)
{
	write_file(root, RX0, "0\n");
	write_file(root, RX1, "0\n");
	write_file(root, IRQ100, "0-1\n");
	write_file(root, IRQ101, "1\n");
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char *names[] = { "vb" };

	if (!fx)
		return -1;
	fault_set(NULL, 0, 0);
	fx->top = strdup("/tmp/caad-test-apply-XXXXXX");
	if (!fx->top || !mkdtemp(fx->top))
		return -1;
	if (caad_path(&fx->root, fx->top, "/root") < 0 || caad_path(&fx->journal, fx->root, "/run/journal") < 0 ||
	    mkdir(fx->root, 0755) < 0)
		return -1;

	write_file(fx->root, "sys/class/net/vb/ifindex", "2\n");
	write_file(fx->root, "sys/devices/system/cpu/possible", "0-1\n");
	write_originals(fx->root);
	write_file(fx->root, "sys/class/net/vb/queues/tx-0/xps_cpus", "0\n");

	/* The sentinel: the same tree outside ROOT, and a would-be journal. */
	write_file(fx->top, RX0, "0\n");
	write_file(fx->top, RX1, "0\n");
	write_file(fx->top, IRQ100, "0-1\n");
	write_file(fx->top, IRQ101, "1\n");
	write_file(fx->top, "run/keep", "sentinel\n");

	if (caad_inventory_load(fx->root, names, 1, &fx->inv) < 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	int r;

	fault_set(NULL, 0, 0); /* frees what it read */
	caad_inventory_free(fx->inv);
	r = test_rm_tree(fx->top);
	free(fx->journal);
	free(fx->root);
	free(fx->top);
	free(fx);
	return r;
}

/* ---- plans ------------------------------------------------------------- */

static struct caad_setting rps(unsigned queue, const char *cpulist)
{
	struct caad_setting s = { .kind = CAAD_SETTING_RPS_CPUS, .iface = 0, .queue = queue, .irq = -1 };

	assert_int_equal(caad_cpumask_parse_list(cpulist, &s.cpus), 0);
	snprintf(s.reason, sizeof(s.reason), "test: rx-%u RPS to %s", queue, cpulist);
	return s;
}

static struct caad_setting irq(int n, unsigned queue, const char *cpulist)
{
	struct caad_setting s = { .kind = CAAD_SETTING_IRQ_AFFINITY, .iface = 0, .queue = queue, .irq = n };

	assert_int_equal(caad_cpumask_parse_list(cpulist, &s.cpus), 0);
	snprintf(s.reason, sizeof(s.reason), "test: IRQ %d to %s", n, cpulist);
	return s;
}

#define PLAN(arr) ((struct caad_plan){ .settings = (arr), .n_settings = ARRAY_SIZE(arr) })

static struct caad_actuator *actuator(const char *sysroot, const char *journal, bool dry_run)
{
	struct caad_actuator *a = NULL;
	const struct caad_actuator_options opts = { .sysroot = sysroot, .journal_path = journal, .dry_run = dry_run };

	assert_int_equal(caad_actuator_new(&opts, &a), 0);
	assert_non_null(a);
	assert_int_equal(caad_actuator_n_changed(a), 0);
	return a;
}

/* The journal's lines, each checked to be "ROOT/...<TAB>value". */
static size_t journal_lines(const struct fixture *fx, char lines[][512], size_t max)
{
	_cleanup_free_ char *text = read_all(fx->journal);
	char *save = NULL;
	size_t n = 0;

	assert_non_null(text);
	assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		assert_true(n < max);
		assert_true(strlen(l) < 512);
		assert_non_null(strchr(l, '\t'));
		assert_true(strncmp(l, fx->root, strlen(fx->root)) == 0 && l[strlen(fx->root)] == '/');
		strcpy(lines[n++], l);
	}
	return n;
}

/* The journal's lines, whatever objects they name. */
static size_t journal_lines_any(const struct fixture *fx, char lines[][512], size_t max)
{
	_cleanup_free_ char *text = read_all(fx->journal);
	char *save = NULL;
	size_t n = 0;

	assert_non_null(text);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		assert_true(n < max && strlen(l) < 512);
		strcpy(lines[n++], l);
	}
	return n;
}

/* Whether the journal has the line for ROOT/rel with the original value
 * (and, for an interface's object, any ifindex after it; then any values
 * caad wrote there). */
static bool journal_has(char lines[][512], size_t n, const struct fixture *fx, const char *rel, const char *original)
{
	char want[512], line[512], *wrote;
	size_t k;

	snprintf(want, sizeof(want), "%s/%s\t%s", fx->root, rel, original);
	k = strlen(want);
	for (size_t i = 0; i < n; i++) {
		strcpy(line, lines[i]);
		if ((wrote = strstr(line, "\twrote=")))
			*wrote = 0;
		if (strncmp(line, want, k) == 0 &&
		    (!line[k] || (line[k] == '\t' && strspn(line + k + 1, "0123456789") == strlen(line + k + 1))))
			return true;
	}
	return false;
}

/* ---- tests ------------------------------------------------------------- */

static void test_inventory_of_fixture(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(fx->inv->n_ifaces, 1);
	assert_string_equal(fx->inv->ifaces[0].name, "vb");
	assert_int_equal(fx->inv->ifaces[0].n_rx, 2);
	assert_int_equal(fx->inv->n_possible_cpus, 2);
}

/* RPS as the kernel's hex bitmap of nr_cpu_ids bits, IRQs as a cpulist. */
static void test_apply_writes_values(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1"), irq(100, 0, "1"), irq(101, 1, "0") };
	struct caad_plan plan = PLAN(s);

	write_file(fx->root, "proc/irq/102/smp_affinity_list", "0-1\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 4);
	assert_content(fx->root, RX0, "1\n");
	assert_content(fx->root, RX1, "2\n");
	assert_content(fx->root, IRQ100, "1\n");
	assert_content(fx->root, IRQ101, "0\n");
	assert_content(fx->root, "proc/irq/102/smp_affinity_list", "0-1\n"); /* not in the plan */
	assert_int_equal(caad_actuator_n_changed(a), 4);
}

/* RPS off ({} -> "0") and both CPUs ({0,1} -> "3"). */
static void test_apply_rps_clear_and_full(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0-1"), rps(1, "") };
	struct caad_plan plan = PLAN(s);

	write_file(fx->root, RX1, "3\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, RX1, "0\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, RX1, "3\n");
}

/* The width comes from the inventory's possible CPUs (comma-separated
 * 32-bit groups), or from the mask itself when that is unknown. */
static void test_apply_rps_width(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_inventory_freep) struct caad_inventory *wide = NULL;
	char *names[] = { "vb" };

	write_file(fx->root, "sys/devices/system/cpu/possible", "0-39\n");
	write_file(fx->root, RX0, "00,00000000\n");
	write_file(fx->root, RX1, "00,00000000\n");
	assert_int_equal(caad_inventory_load(fx->root, names, 1, &wide), 0);
	assert_int_equal(wide->n_possible_cpus, 40);
	{
		_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
		struct caad_setting s[] = { rps(0, "0"), rps(1, "33") };
		struct caad_plan plan = PLAN(s);

		assert_int_equal(caad_actuator_apply(a, wide, &plan), 2);
		assert_content(fx->root, RX0, "00,00000001\n");
		assert_content(fx->root, RX1, "02,00000000\n");
		assert_int_equal(caad_actuator_restore(a), 0);
		assert_content(fx->root, RX0, "00,00000000\n");
		assert_content(fx->root, RX1, "00,00000000\n");
	}

	/* possible unknown (0): just wide enough for the mask. */
	write_file(fx->root, RX0, "0\n");
	wide->n_possible_cpus = 0;
	{
		_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
		struct caad_setting s[] = { rps(0, "1") };
		struct caad_plan plan = PLAN(s);

		assert_int_equal(caad_actuator_apply(a, wide, &plan), 1);
		assert_content(fx->root, RX0, "2\n");
		assert_int_equal(caad_actuator_restore(a), 0);
		assert_content(fx->root, RX0, "0\n");
	}
}

/* Only what differs is written: a second apply writes nothing. */
static void test_apply_only_differences(void **state)
{
	struct fixture *fx = *state;
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);

	{
		_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);

		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
		set_old_mtime(fx->root, RX0);
		set_old_mtime(fx->root, RX1);
		set_old_mtime(fx->root, IRQ101);
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
		assert_true(mtime_is_old(fx->root, RX0));
		assert_true(mtime_is_old(fx->root, RX1));
		assert_true(mtime_is_old(fx->root, IRQ101));
		assert_int_equal(caad_actuator_n_changed(a), 3);

		/* One value changed behind caad's back: caad backs off from it
		 * (test_backoff), and rewrites nothing else either. */
		write_file(fx->root, RX1, "0\n");
		set_old_mtime(fx->root, RX1);
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
		assert_content(fx->root, RX1, "0\n");
		assert_true(mtime_is_old(fx->root, RX1));
		assert_true(mtime_is_old(fx->root, RX0));
		assert_int_equal(caad_actuator_n_changed(a), 2);
		assert_int_equal(caad_actuator_restore(a), 0);
	}

	/* A plan that matches the host: nothing written, nothing journaled. */
	{
		_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
		struct caad_setting same[] = { rps(0, ""), rps(1, ""), irq(100, 0, "0-1"), irq(101, 1, "1") };
		struct caad_plan same_plan = PLAN(same);

		set_old_mtime(fx->root, IRQ100);
		assert_int_equal(caad_actuator_apply(a, fx->inv, &same_plan), 0);
		assert_int_equal(caad_actuator_n_changed(a), 0);
		assert_false(exists(fx->journal));
		assert_true(mtime_is_old(fx->root, IRQ100));

		struct caad_plan empty = { 0 };
		assert_int_equal(caad_actuator_apply(a, fx->inv, &empty), 0);
	}
}

/* The journal: "PATH<TAB>ORIGINAL" per object, the first original kept;
 * an interface's sysfs object has "<TAB>IFINDEX" after it; then what caad
 * wrote there, as a CPU list. */
static void test_journal_contents(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];
	struct stat st;
	size_t n;

	assert_false(exists(fx->journal));
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	assert_int_equal(stat(fx->journal, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);

	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 3);
	assert_true(journal_has(lines, n, fx, RX0, "0"));
	assert_true(journal_has(lines, n, fx, RX1, "0"));
	assert_true(journal_has(lines, n, fx, IRQ101, "1"));
	for (size_t i = 0; i < n; i++) {
		const char *third = strchr(strchr(lines[i], '\t') + 1, '\t');

		assert_non_null(third);
		if (strstr(lines[i], RX0))
			assert_string_equal(third, "\t2\twrote=0"); /* vb's ifindex */
		else if (strstr(lines[i], RX1))
			assert_string_equal(third, "\t2\twrote=1");
		else
			assert_string_equal(third, "\twrote=0"); /* an IRQ's: no interface */
	}

	/* No temp file left next to it. */
	{
		_cleanup_free_ char *run = path_in(fx->root, "run");
		DIR *d = opendir(run);
		struct dirent *de;
		unsigned entries = 0;

		assert_non_null(d);
		while ((de = readdir(d)))
			if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
				entries++;
		closedir(d);
		assert_int_equal(entries, 1);
	}

	/* Changing an object again keeps its first original, adds no line. */
	struct caad_setting s2[] = { rps(0, "1"), irq(100, 1, "0-1"), irq(101, 0, "0") };
	struct caad_plan plan2 = PLAN(s2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 1);
	assert_content(fx->root, RX0, "2\n");
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 3);
	assert_true(journal_has(lines, n, fx, RX0, "0"));
	assert_true(journal_has(lines, n, fx, IRQ101, "1"));
	assert_int_equal(caad_actuator_n_changed(a), 3);

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
}

/* The journal comes first: when it cannot be written, nothing is. */
static void test_journal_unwritable(void **state)
{
	struct fixture *fx = *state;
	_cleanup_free_ char *journal = path_in(fx->root, "blocker/journal");
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, journal, false);
	struct caad_setting s[] = { rps(0, "0"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);

	write_file(fx->root, "blocker", "a file where the journal's directory should be\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_n_changed(a), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(journal));
}

/*
 * The journal becomes unwritable after caad steered a queue's IRQ: a new
 * target (the IRQ's new value is journaled before its write, its RPS is a
 * new entry) writes nothing; then the queue is left as it is, not tried
 * again at every scan.
 */
static void test_journal_unwritable_later(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *run = path_in(fx->root, "run"), *away = path_in(fx->top, "run-away");
	struct caad_setting s1[] = { irq(101, 0, "0") }, s2[] = { irq(101, 0, "1"), rps(0, "1") };
	struct caad_plan p1 = PLAN(s1), p2 = PLAN(s2);
	struct caad_actuator_stats st;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &p1), 1);
	assert_int_equal(rename(run, away), 0);
	write_file(fx->root, "run", "a file where the journal's directory should be\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 0);
	assert_content(fx->root, IRQ101, "0\n");
	assert_content(fx->root, RX0, "0\n");
	caad_actuator_get_stats(a, &st);
	uint64_t written = st.written, undone = st.undone;
	for (int i = 0; i < 3; i++)
		assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 0);
	caad_actuator_get_stats(a, &st);
	assert_int_equal(st.written, written);
	assert_int_equal(st.undone, undone);
	assert_content(fx->root, IRQ101, "0\n");
	/* once it can be written, a reload's go-ahead tries again */
	_cleanup_free_ char *file = path_in(fx->root, "run");
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rename(away, run), 0);
	caad_actuator_clear_backoff(a);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 2);
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, RX0, "0\n");
}

/* Restore: originals back byte for byte, the journal gone. */
static void test_restore(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0"), rps(1, "0-1"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	assert_true(exists(fx->journal));
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, RX1, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(fx->journal));
	assert_int_equal(caad_actuator_n_changed(a), 0);

	/* Nothing left to restore; and the actuator can be used again. */
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX1, "0\n");
	assert_false(exists(fx->journal));
}

/* A restore setting of kind `kind` for queue (and irq), as the planner makes
 * for a queue left to the host's steering. */
static struct caad_setting give_back_setting(enum caad_setting_kind kind, unsigned queue, int irq_n)
{
	struct caad_setting s = { .kind = kind, .iface = 0, .queue = queue, .irq = irq_n, .restore = true };

	snprintf(s.reason, sizeof(s.reason), "test: rx-%u back to the host's", queue);
	return s;
}

/*
 * A value flipped to and fro, as a moving reader's queue is: its first
 * CAAD_LOGLIMIT_BURST changes are logged, the last saying so, the rest
 * at debug level only (shown with it). A give-back of it counts among
 * them; another value's lines are its own.
 */
static void test_change_lines_limited(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s0[] = { rps(0, "0") }, s1[] = { rps(0, "1") }, other[] = { rps(1, "1") };
	struct caad_setting back[] = { give_back_setting(CAAD_SETTING_RPS_CPUS, 0, -1) };
	struct caad_plan p0 = PLAN(s0), p1 = PLAN(s1), pother = PLAN(other), pback = PLAN(back);
	_cleanup_free_ char *log = NULL, *debug = NULL;
	struct capture cap;
	int was = caad_log_get_max_level(), written = 0, r;

	/* no assertion while stderr is captured: a failure would leave it so */
	caad_log_set_max_level(LOG_INFO);
	capture_begin(&cap, fx->root);
	for (unsigned i = 0; i < 2 * CAAD_LOGLIMIT_BURST; i++)
		written += caad_actuator_apply(a, fx->inv, i % 2 ? &p1 : &p0);
	written += caad_actuator_apply(a, fx->inv, &pback);
	written += caad_actuator_apply(a, fx->inv, &pother);
	log = capture_end(&cap);
	/* every change was written all the same */
	assert_int_equal(written, 2 * CAAD_LOGLIMIT_BURST + 2);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, RX1, "2\n");
	assert_int_equal(count_substr(log, "test: rx-0 RPS to"), CAAD_LOGLIMIT_BURST);
	assert_int_equal(count_substr(log, "its next changes within that time are logged at debug level only"), 1);
	assert_int_equal(count_substr(log, "back to the host's"), 0);
	assert_int_equal(count_substr(log, "test: rx-1 RPS to 1"), 1);

	caad_log_set_max_level(LOG_DEBUG);
	capture_begin(&cap, fx->root);
	r = caad_actuator_apply(a, fx->inv, &p1);
	debug = capture_end(&cap);
	caad_log_set_max_level(was);
	assert_int_equal(r, 1);
	assert_int_equal(count_substr(debug, "test: rx-0 RPS to 1"), 1);
}

/*
 * A queue left to the host's steering: what caad wrote there goes back to
 * the journaled original and leaves the journal (nothing to restore at exit,
 * a later write journals anew); where caad wrote nothing, nothing is
 * written; a value someone else changed since is left to them.
 */
static void test_give_back(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { irq(101, 0, "0"), rps(0, "0"), rps(1, "1") };
	struct caad_setting back[] = { give_back_setting(CAAD_SETTING_IRQ_AFFINITY, 0, 101),
		                       give_back_setting(CAAD_SETTING_RPS_CPUS, 0, -1) };
	struct caad_setting back1[] = { give_back_setting(CAAD_SETTING_RPS_CPUS, 1, -1) };
	struct caad_plan plan = PLAN(s), pback = PLAN(back), pback1 = PLAN(back1);
	char lines[8][512];
	struct caad_actuator_stats st;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	assert_content(fx->root, RX0, "1\n");
	assert_content(fx->root, RX1, "2\n");
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &back[1], NULL), CAAD_SETTING_PENDING);

	/* rx-0 goes back; rx-1 (not in that plan) keeps caad's value */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &pback), 2);
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, RX1, "2\n");
	assert_int_equal(caad_actuator_n_changed(a), 1);
	size_t n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 1);
	assert_true(journal_has(lines, n, fx, RX1, "0"));
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &back[0], NULL), CAAD_SETTING_IN_PLACE);
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &back[1], NULL), CAAD_SETTING_IN_PLACE);
	caad_actuator_get_stats(a, &st);
	assert_int_equal(st.restored, 2);

	/* again: caad holds nothing there, nothing is written */
	write_file(fx->root, RX0, "3\n"); /* the admin, after the give-back: theirs */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &pback), 0);
	assert_content(fx->root, RX0, "3\n");
	assert_int_equal(caad_actuator_n_backed_off(a), 0);

	/* steered again: the value there now is the original journaled */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_true(journal_has(lines, n, fx, RX0, "3"));
	assert_true(journal_has(lines, n, fx, IRQ101, "1"));

	/* someone else changed rx-1 since caad wrote it: theirs, left, dropped and
	 * backed off from (not taken for the host's value by the next steering) */
	write_file(fx->root, RX1, "3\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &pback1), 0);
	assert_content(fx->root, RX1, "3\n");
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_false(journal_has(lines, n, fx, RX1, "0"));
	assert_int_equal(caad_actuator_n_backed_off(a), 1);
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &back1[0], NULL), CAAD_SETTING_BACKED_OFF);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_content(fx->root, RX1, "3\n");

	/* a give-back the kernel refuses: the others of the queue go back, the
	 * entry stays (logged once, REFUSED), and the exit restores it */
	fault_set("rx-0/rps_cpus", -EINVAL, 0);
	assert_true(caad_actuator_apply(a, fx->inv, &pback) <= 1);
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, RX0, "1\n");
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &back[1], NULL), CAAD_SETTING_REFUSED);
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &back[0], NULL), CAAD_SETTING_IN_PLACE);
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_true(journal_has(lines, n, fx, RX0, "3"));
	fault_set(NULL, 0, 0);

	/* exit: what caad still holds goes back */
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, RX1, "3\n");
	assert_false(exists(fx->journal));
}

/* A dry run gives nothing back: it wrote nothing. What it announced is
 * announced again when the queue is steered anew. */
static void test_give_back_dry_run(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, true);
	struct caad_setting s[] = { rps(0, "0") };
	struct caad_setting back[] = { give_back_setting(CAAD_SETTING_RPS_CPUS, 0, -1) };
	struct caad_plan plan = PLAN(s), pback = PLAN(back);

	write_file(fx->root, RX0, "2\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1); /* announced */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0); /* once */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &pback), 0);
	assert_content(fx->root, RX0, "2\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1); /* again */
	assert_false(exists(fx->journal));
}

/* A value someone else changed after caad wrote it is theirs now. */
static void test_restore_leaves_foreign_change(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	write_file(fx->root, RX0, "3\n");
	write_file(fx->root, IRQ101, "0-1\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, IRQ101, "0-1\n");
	assert_content(fx->root, RX1, "0\n");
	assert_false(exists(fx->journal));
}

/* An admin's write during a run wins: kept while caad runs and after it. */
static void test_backoff(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];
	struct caad_actuator_stats st;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(caad_actuator_n_changed(a), 2);
	write_file(fx->root, IRQ101, "1\n"); /* the admin */

	/* the next plans leave it alone and drop it from the journal */
	for (int i = 0; i < 3; i++)
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(caad_actuator_n_backed_off(a), 1);
	size_t n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 1);
	assert_true(journal_has(lines, n, fx, RX0, "0"));
	caad_actuator_get_stats(a, &st);
	assert_int_equal(st.backoffs, 1);
	/* another target for the queue: none of it moves while its IRQ is the
	 * admin's (its RPS alone would steer it half) */
	struct caad_setting s2[] = { rps(0, "1"), irq(101, 0, "1") };
	struct caad_plan plan2 = PLAN(s2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_content(fx->root, RX0, "1\n"); /* CPU 0 still, not 2 (CPU 1) */
	assert_content(fx->root, IRQ101, "1\n");

	/* exit: caad's own value goes back, the admin's stays */
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, RX0, "0\n");

	/* after a reload caad may steer it again, journaling the admin's value */
	caad_actuator_clear_backoff(a);
	assert_int_equal(caad_actuator_n_backed_off(a), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_content(fx->root, IRQ101, "0\n");
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_true(journal_has(lines, n, fx, IRQ101, "1"));
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
}

/*
 * After a go-ahead (reload, resume), a value someone else set that is
 * already what the plan wants is caad's again: the next scan must not take
 * it for a foreign change, and exit still writes back the first original.
 */
static void test_go_ahead_already_equal(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s1[] = { irq(101, 0, "0") }, s2[] = { irq(101, 0, "0-1") };
	struct caad_plan p1 = PLAN(s1), p2 = PLAN(s2);
	char lines[8][512];

	assert_int_equal(caad_actuator_apply(a, fx->inv, &p1), 1);
	write_file(fx->root, IRQ101, "0-1\n"); /* someone, between two scans */
	caad_actuator_clear_backoff(a);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 0); /* holds it already */
	for (int i = 0; i < 2; i++)
		assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 0);
	assert_int_equal(caad_actuator_n_backed_off(a), 0);
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(journal_has(lines, 1, fx, IRQ101, "1"));
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n"); /* the first original */
}

/* Where each planned value stands, as Explain shows it. */
static void test_setting_state(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	_cleanup_free_ char *label = NULL;

	/* not written yet: pending */
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &s[0], &label), CAAD_SETTING_PENDING);
	assert_string_equal(label, "vb rx-0: RPS CPUs");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &s[0], NULL), CAAD_SETTING_IN_PLACE);
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &s[1], NULL), CAAD_SETTING_IN_PLACE);
	/* someone else's write: pending until the next apply sees it, then backed off */
	write_file(fx->root, IRQ101, "1\n");
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &s[1], NULL), CAAD_SETTING_PENDING);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &s[1], NULL), CAAD_SETTING_BACKED_OFF);
	/* a write the kernel refuses */
	struct caad_setting r1[] = { rps(1, "1") };
	struct caad_plan p1 = PLAN(r1);
	fault_set("rx-1/rps_cpus", -EINVAL, 0);
	assert_true(caad_actuator_apply(a, fx->inv, &p1) <= 0);
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &r1[0], NULL), CAAD_SETTING_REFUSED);
	fault_set(NULL, 0, 0);
	/* an object that cannot be read */
	_cleanup_free_ char *rx1 = path_in(fx->root, RX1);
	assert_int_equal(unlink(rx1), 0);
	assert_int_equal(caad_actuator_setting_state(a, fx->inv, &r1[0], NULL), CAAD_SETTING_REFUSED);
}

/* With BackOffSec= the back-off ends by itself. */
/* Someone else's value found while the journal cannot be written again:
 * caad backs off all the same, rather than journal that value as the
 * original at the next scan and write over it. */
static void test_backoff_journal_unwritable(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *run = path_in(fx->root, "run"), *away = path_in(fx->top, "run-away");
	_cleanup_free_ char *file = path_in(fx->root, "run");
	struct caad_setting s[] = { irq(101, 0, "0"), rps(0, "1") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	write_file(fx->root, IRQ101, "1\n"); /* the admin */
	assert_int_equal(rename(run, away), 0);
	write_file(fx->root, "run", "a file where the journal's directory should be\n");
	(void)caad_actuator_apply(a, fx->inv, &plan); /* its journal not written: that queue's error */
	assert_int_equal(caad_actuator_n_backed_off(a), 1);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rename(away, run), 0);
	for (int i = 0; i < 2; i++)
		assert_true(caad_actuator_apply(a, fx->inv, &plan) >= 0);
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(caad_actuator_n_backed_off(a), 1);
	/* nor is it put back at exit: it is the admin's */
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
}

/* A write that finds its object gone, and the look for the interface's new
 * name fails (EMFILE): the entry stays (the device may only have been
 * renamed), rather than its original be lost and caad's own value taken
 * for it at the next write. */
static void test_gone_follow_fails(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s1[] = { rps(0, "1") }, s2[] = { rps(0, "2") };
	struct caad_plan p1 = PLAN(s1), p2 = PLAN(s2);
	char lines[8][512];

	assert_int_equal(caad_actuator_apply(a, fx->inv, &p1), 1);
	fault_set("rx-0/rps_cpus", -ENOENT, 1);
	fate_error = -EMFILE;
	(void)caad_actuator_apply(a, fx->inv, &p2);
	fault_set(NULL, 0, 0);
	assert_int_equal(caad_actuator_n_changed(a), 1);
	size_t n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 1);
	assert_true(journal_has(lines, n, fx, RX0, "0"));
	/* and the original comes back at exit */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 1);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
}

/* The scan that first finds a queue's value someone else's (the admin
 * turned its RPS back on) while the plan moves its IRQ: the queue is left
 * whole in that scan too, its IRQ where it was, not moved beside the
 * admin's RPS mask. */
static void test_backoff_found_mid_queue(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s1[] = { irq(101, 0, "1"), rps(0, "") }, s2[] = { irq(101, 0, "0"), rps(0, "") };
	struct caad_plan p1 = PLAN(s1), p2 = PLAN(s2);

	write_file(fx->root, RX0, "3\n");
	write_file(fx->root, IRQ101, "0-1\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p1), 2);
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, RX0, "0\n");
	write_file(fx->root, RX0, "3\n"); /* the admin */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 0);
		assert_content(fx->root, IRQ101, "1\n");
		assert_content(fx->root, RX0, "3\n");
		assert_int_equal(caad_actuator_n_backed_off(a), 1);
	}
	/* the IRQ is still caad's, and goes back at exit; the RPS mask stays */
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "0-1\n");
	assert_content(fx->root, RX0, "3\n");
}

/* The kernel's ENOMEM on one queue's write refuses that queue; the other
 * queues are written in the same apply, not left to the next scan as if
 * caad had run out of memory. */
static void test_kernel_enomem(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "1"), rps(1, "1") };
	struct caad_plan plan = PLAN(s);

	fault_set("rx-0/rps_cpus", -ENOMEM, 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, RX1, "2\n");
	fault_set(NULL, 0, 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX1, "0\n");
}

static void test_backoff_expires(void **state)
{
	struct fixture *fx = *state;
	struct caad_actuator *a = NULL;
	const struct caad_actuator_options opts = { .sysroot = fx->root, .journal_path = fx->journal,
		                                    .backoff_sec = 1 };
	struct caad_setting s[] = { irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_new(&opts, &a), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	write_file(fx->root, IRQ101, "1\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_content(fx->root, IRQ101, "1\n");
	usleep(1100 * 1000);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, IRQ101, "0\n");
	assert_int_equal(caad_actuator_n_backed_off(a), 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
	caad_actuator_free(a);
}

/*
 * The CPU caad gave an IRQ went offline and the kernel moved the IRQ to
 * the online ones: not someone else's change. caad keeps the value (and
 * its original) and moves it on; with no online list to tell, the same
 * change is someone else's, as before.
 */
static void test_irq_moved_by_hotplug(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *online = path_in(fx->root, "sys/devices/system/cpu/online");
	struct caad_setting s[] = { irq(101, 0, "1") }, s2[] = { irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s), plan2 = PLAN(s2);
	char lines[8][512];

	write_file(fx->root, IRQ101, "0-1\n");
	write_file(fx->root, "sys/devices/system/cpu/online", "0-1\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, IRQ101, "1\n");

	/* CPU 1 offline: the kernel moved IRQ 101 to CPU 0; caad's plan now
	 * wants CPU 0 too, then CPU 1 again once it is back */
	write_file(fx->root, "sys/devices/system/cpu/online", "0\n");
	write_file(fx->root, IRQ101, "0\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_int_equal(caad_actuator_n_backed_off(a), 0);
	assert_int_equal(caad_actuator_n_changed(a), 1);
	write_file(fx->root, "sys/devices/system/cpu/online", "0-1\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(journal_has(lines, 1, fx, IRQ101, "0-1"));

	/* the same move with CPU 1 online: someone else's */
	write_file(fx->root, IRQ101, "0\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_int_equal(caad_actuator_n_backed_off(a), 1);
	assert_int_equal(caad_actuator_n_changed(a), 0);

	/* the kernel's move just before a restore: restored all the same */
	_cleanup_(caad_actuator_freep) struct caad_actuator *b = actuator(fx->root, fx->journal, false);
	write_file(fx->root, IRQ101, "0-1\n");
	assert_int_equal(caad_actuator_apply(b, fx->inv, &plan), 1);
	write_file(fx->root, "sys/devices/system/cpu/online", "0\n");
	write_file(fx->root, IRQ101, "0\n");
	assert_int_equal(caad_actuator_restore(b), 0);
	assert_content(fx->root, IRQ101, "0-1\n");
	assert_int_equal(unlink(online), 0);
}

/* plan's one value applied by a new actuator, then path written as theirs
 * by someone else: caad backs off from it and its restore leaves it so. */
static void assert_theirs(struct fixture *fx, const struct caad_plan *plan, const char *path, const char *theirs)
{
	_cleanup_(caad_actuator_freep) struct caad_actuator *b = actuator(fx->root, fx->journal, false);

	assert_int_equal(caad_actuator_apply(b, fx->inv, plan), 1);
	write_file(fx->root, path, theirs);
	assert_int_equal(caad_actuator_apply(b, fx->inv, plan), 0);
	assert_int_equal(caad_actuator_n_backed_off(b), 1);
	assert_int_equal(caad_actuator_restore(b), 0);
	assert_content(fx->root, path, theirs);
}

/*
 * The CPU caad gave an IRQ went offline and came back (between two scans,
 * or while caad was down): the IRQ reads the CPUs online then, none of
 * caad's, and the kernel does not move it back. caad's still: moved back,
 * restored. A move to one CPU that is not caad's is someone else's.
 */
static void test_irq_moved_by_hotplug_and_back(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *online = path_in(fx->root, "sys/devices/system/cpu/online");
	struct caad_setting s[] = { irq(101, 0, "1") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];

	write_file(fx->root, IRQ101, "0-3\n");
	write_file(fx->root, "sys/devices/system/cpu/online", "0-3\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, IRQ101, "1\n");
	write_file(fx->root, IRQ101, "0,2-3\n"); /* CPU 1 offline, then back */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(caad_actuator_n_backed_off(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(journal_has(lines, 1, fx, IRQ101, "0-3"));

	/* and just before the restore: restored all the same */
	write_file(fx->root, IRQ101, "0,2-3\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "0-3\n");

	/* one CPU, or not all the others: someone else's */
	const char *theirs[] = { "2\n", "0,2\n" };
	for (size_t i = 0; i < ARRAY_SIZE(theirs); i++) {
		write_file(fx->root, IRQ101, "0-3\n");
		assert_theirs(fx, &plan, IRQ101, theirs[i]);
	}
	assert_int_equal(unlink(online), 0);
}

/* An RPS mask written while its CPU went offline reads without it (the
 * kernel keeps the online CPUs of what it is given): the kernel's doing,
 * written again, and restored. With the CPU online, the same is someone
 * else's (RPS turned off). */
static void test_rps_written_offline(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *online = path_in(fx->root, "sys/devices/system/cpu/online");
	struct caad_setting s[] = { rps(0, "1") };
	struct caad_plan plan = PLAN(s);

	write_file(fx->root, RX0, "3\n");
	write_file(fx->root, "sys/devices/system/cpu/online", "0\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	write_file(fx->root, RX0, "0\n"); /* what the kernel made of it */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(caad_actuator_n_backed_off(a), 0);
	write_file(fx->root, RX0, "0\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "3\n");

	write_file(fx->root, "sys/devices/system/cpu/online", "0-1\n");
	assert_theirs(fx, &plan, RX0, "0\n");
	assert_int_equal(unlink(online), 0);
}

/* EBUSY (an IRQ whose last move is not done): not parked, tried again at
 * the next scan. */
static void test_fault_busy(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { irq(100, 0, "1") };
	struct caad_plan plan = PLAN(s);

	fault_set(IRQ100, -EBUSY, 1);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(fx->journal));
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(fault.calls, 2);
	assert_content(fx->root, IRQ100, "1\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ100, "0-1\n");
}

/* An orphan's IRQ (its interface left caad's view) that the kernel moved
 * off a CPU gone offline meanwhile is caad's still when the interface is
 * back: adopted with its original, which the restore puts back. */
static void test_orphan_irq_moved_by_hotplug(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *online = path_in(fx->root, "sys/devices/system/cpu/online");
	struct caad_setting s[] = { irq(101, 0, "1") }, s2[] = { irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s), plan2 = PLAN(s2);

	write_file(fx->root, IRQ101, "0-1\n");
	write_file(fx->root, "sys/devices/system/cpu/online", "0-1\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(caad_actuator_forget_iface(a, 2, "vb", true), 0);
	write_file(fx->root, "sys/devices/system/cpu/online", "0\n");
	write_file(fx->root, IRQ101, "0\n"); /* the kernel's move */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "0-1\n");
	assert_int_equal(unlink(online), 0);
}

/* An object that went away (device unplugged) is not restored, nor created. */
static void test_restore_object_gone(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *rx1 = path_in(fx->root, RX1);
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(unlink(rx1), 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_false(exists(rx1));
	assert_false(exists(fx->journal));
}

/* Dry run: announces each change once, writes nothing, journals nothing. */
static void test_dry_run(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, true);
	_cleanup_free_ char *run = path_in(fx->root, "run");
	struct caad_setting s[] = { rps(0, "0"), rps(1, ""), irq(101, 0, "0"), irq(100, 1, "0") };
	struct caad_plan plan = PLAN(s);

	set_old_mtime(fx->root, RX0);
	set_old_mtime(fx->root, IRQ100);
	set_old_mtime(fx->root, IRQ101);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3); /* rx-1 is already {} */
	/* The same plan again: announced already, so nothing new. */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	/* Another value for one object: announced again. */
	s[3] = irq(100, 1, "1");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);

	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_true(mtime_is_old(fx->root, RX0));
	assert_true(mtime_is_old(fx->root, IRQ100));
	assert_true(mtime_is_old(fx->root, IRQ101));
	assert_false(exists(fx->journal));
	assert_false(exists(run));
	assert_int_equal(caad_actuator_n_changed(a), 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_false(exists(run));
}

/* Switching dry run on restores what was written; off, it writes again. */
static void test_set_dry_run(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_set_dry_run(a, false), 0); /* no change */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	assert_content(fx->root, RX0, "1\n");

	assert_int_equal(caad_actuator_set_dry_run(a, true), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, RX1, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(fx->journal));
	assert_int_equal(caad_actuator_n_changed(a), 0);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	assert_content(fx->root, RX0, "0\n");
	assert_false(exists(fx->journal));
	assert_int_equal(caad_actuator_set_dry_run(a, true), 0);

	/* Enforcing again: everything is written, and announced dry-run
	 * changes do not hide anything. */
	assert_int_equal(caad_actuator_set_dry_run(a, false), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	assert_content(fx->root, RX0, "1\n");
	assert_content(fx->root, IRQ101, "0\n");
	assert_true(exists(fx->journal));
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
}

/* A setting that cannot be read or written is skipped, not journaled; the
 * others are applied. */
static void test_apply_failure_skips_one(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *rx1 = path_in(fx->root, RX1);
	_cleanup_free_ char *irq102 = path_in(fx->root, "proc/irq/102/smp_affinity_list");
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1"), irq(102, 1, "0"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];
	struct stat st;
	size_t n;

	/* rx-1 vanished after the inventory; IRQ 102's file is a directory. */
	assert_int_equal(unlink(rx1), 0);
	mkdir_parents(irq102, strlen(fx->root) + 1);
	assert_int_equal(mkdir(irq102, 0755), 0);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_content(fx->root, RX0, "1\n");
	assert_content(fx->root, IRQ101, "0\n");
	assert_false(exists(rx1));                       /* never created */
	assert_int_equal(stat(irq102, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(caad_actuator_n_changed(a), 2);
	assert_false(caad_actuator_irq_unmovable(a, 102)); /* unreadable is not kernel-managed */

	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 2);
	assert_true(journal_has(lines, n, fx, RX0, "0"));
	assert_true(journal_has(lines, n, fx, IRQ101, "1"));

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(rx1));
}

/* The write itself refused (an immutable file: even root cannot write it,
 * as the kernel refuses a managed IRQ's affinity with EIO): not journaled,
 * and the IRQ is known as unmovable. */
static void test_apply_write_refused(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *irq101 = path_in(fx->root, IRQ101);
	/* as the planner emits them: the IRQ, then RPS off for its queue */
	struct caad_setting s[] = { irq(101, 0, "0"), rps(0, ""), rps(1, "1"), irq(100, 1, "1") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];
	int fd, flags = 0, r;
	size_t n;

	write_file(fx->root, RX0, "3\n");

	fd = open(irq101, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	r = ioctl(fd, FS_IOC_GETFLAGS, &flags);
	if (r == 0) {
		flags |= FS_IMMUTABLE_FL;
		r = ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	close(fd);
	if (r < 0)
		test_skip("cannot make %s immutable (needs CAP_LINUX_IMMUTABLE and a file system with "
		          "FS_IOC_SETFLAGS): %s",
		          irq101, strerror(errno));

	r = caad_actuator_apply(a, fx->inv, &plan);

	/* Writable again, so that the test's cleanup can remove it. */
	fd = open(irq101, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	flags &= ~FS_IMMUTABLE_FL;
	assert_int_equal(ioctl(fd, FS_IOC_SETFLAGS, &flags), 0);
	close(fd);

	assert_int_equal(r, 2);
	assert_content(fx->root, IRQ101, "1\n");
	/* The IRQ did not move: its queue keeps RPS rather than nothing. */
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, RX1, "2\n");
	assert_content(fx->root, IRQ100, "1\n");
	assert_true(caad_actuator_irq_unmovable(a, 101));
	assert_false(caad_actuator_irq_unmovable(a, 100));
	assert_int_equal(caad_actuator_n_changed(a), 2);
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 2);
	assert_true(journal_has(lines, n, fx, RX1, "0"));
	assert_true(journal_has(lines, n, fx, IRQ100, "0-1"));

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX1, "0\n");
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(fx->journal));
	assert_true(caad_actuator_irq_unmovable(a, 101)); /* remembered */
	/* until its device is gone: the number may be another device's next */
	caad_actuator_forget_irq(a, 100);
	assert_true(caad_actuator_irq_unmovable(a, 101));
	caad_actuator_forget_irq(a, 101);
	assert_false(caad_actuator_irq_unmovable(a, 101));
}

/* A restore that fails keeps the journal for the next start. */
static void test_restore_failure_keeps_journal(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *irq101 = path_in(fx->root, IRQ101);
	struct caad_setting s[] = { rps(0, "0"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];
	size_t n;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	/* The IRQ's file cannot be written any more. */
	assert_int_equal(unlink(irq101), 0);
	assert_int_equal(mkdir(irq101, 0755), 0);

	assert_int_equal(caad_actuator_restore(a), -EIO);
	assert_content(fx->root, RX0, "0\n");
	assert_true(exists(fx->journal));
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_true(journal_has(lines, n, fx, IRQ101, "1"));

	/* Next start: the file is back, the journal puts the original back. */
	assert_int_equal(rmdir(irq101), 0);
	write_file(fx->root, IRQ101, "0\n");
	assert_int_equal(caad_journal_restore(fx->journal, true), (int)n);
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, RX0, "0\n");
	assert_false(exists(fx->journal));
}

/*
 * A restore that fails keeps what failed: in the journal and in memory.
 * Applying again meanwhile must not take caad's own value for the
 * original, and the next restore puts the real one back.
 */
static void test_restore_failure_keeps_entry(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *rx0 = path_in(fx->root, RX0);
	struct caad_setting s[] = { rps(0, "1"), rps(1, "1") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(unlink(rx0), 0);
	assert_int_equal(mkdir(rx0, 0755), 0);
	assert_int_equal(caad_actuator_restore(a), -EIO);
	assert_content(fx->root, RX1, "0\n");
	/* only the one that failed is left */
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(journal_has(lines, 1, fx, RX0, "0"));

	/* the object is back, still with caad's value (CPU 1); caad applies again */
	assert_int_equal(rmdir(rx0), 0);
	write_file(fx->root, RX0, "2\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1); /* rx-1 only: rx-0 holds it */
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 2);
	assert_true(journal_has(lines, 2, fx, RX0, "0"));

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, RX1, "0\n");
	assert_false(exists(fx->journal));
}

/*
 * Crash recovery that fails on one line keeps that line only: the next
 * attempt does not write the others again over what the host has now.
 */
static void test_journal_restore_keeps_failed_lines(void **state)
{
	struct fixture *fx = *state;
	_cleanup_free_ char *text = NULL, *dir = path_in(fx->root, "proc/irq/103/smp_affinity_list");
	char lines[8][512];

	mkdir_parents(dir, strlen(fx->root) + 1);
	assert_int_equal(mkdir(dir, 0755), 0);
	write_file(fx->root, RX1, "1\n");
	assert_true(asprintf(&text, "%s/%s\t0\n%s\t0\n", fx->root, RX1, dir) > 0);
	write_file(fx->root, "run/journal", text);

	assert_int_equal(caad_journal_restore(fx->journal, true), -EIO);
	assert_content(fx->root, RX1, "0\n");
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(journal_has(lines, 1, fx, "proc/irq/103/smp_affinity_list", "0"));

	/* the operator sets rx-1 meanwhile; the next attempt leaves it */
	write_file(fx->root, RX1, "1\n");
	assert_int_equal(caad_journal_restore(fx->journal, true), -EIO);
	assert_content(fx->root, RX1, "1\n");

	/* the object is fixed: the journal is done */
	assert_int_equal(rmdir(dir), 0);
	write_file(fx->root, "proc/irq/103/smp_affinity_list", "1\n");
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_content(fx->root, "proc/irq/103/smp_affinity_list", "0\n");
	assert_false(exists(fx->journal));
}

/*
 * After a crash, an IRQ whose affinity the kernel refuses now (EIO: managed,
 * another device behind the number since) is not caad's to put back: the
 * line is dropped, not kept to stop every start. Another object's EIO is
 * kept, as any failure.
 */
static void test_journal_restore_managed_irq(void **state)
{
	struct fixture *fx = *state;
	_cleanup_free_ char *text = NULL;
	char lines[8][512];

	write_file(fx->root, RX1, "1\n");
	write_file(fx->root, "proc/irq/103/smp_affinity_list", "0-1\n");
	assert_true(asprintf(&text, "%s/%s\t0\n%s/proc/irq/103/smp_affinity_list\t1\n", fx->root, RX1, fx->root) > 0);
	write_file(fx->root, "run/journal", text);

	fault_set("irq/103/smp_affinity_list", -EIO, 0);
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_content(fx->root, RX1, "0\n");
	assert_content(fx->root, "proc/irq/103/smp_affinity_list", "0-1\n");
	assert_false(exists(fx->journal));

	write_file(fx->root, "run/journal", text);
	fault_set(RX1, -EIO, 0);
	assert_int_equal(caad_journal_restore(fx->journal, true), -EIO);
	assert_content(fx->root, "proc/irq/103/smp_affinity_list", "1\n");
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(journal_has(lines, 1, fx, RX1, "0"));
}

/*
 * An IRQ's journal line carries its handlers (/sys/kernel/irq/N/actions):
 * after a crash, an IRQ number that another device's handlers hold now (a
 * driver reload) is not written; the same handlers, or none known, are.
 * And so at a running caad's restore.
 */
static void test_journal_irq_identity(void **state)
{
	struct fixture *fx = *state;
	struct caad_setting s[] = { irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	_cleanup_free_ char *want = NULL, *actions = path_in(fx->root, "sys/kernel/irq/101/actions");
	char lines[8][512];
	struct caad_actuator *a;

	write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vb-TxRx-0\n");
	assert_true(asprintf(&want, "%s/%s\t1\tactions=i40e-vb-TxRx-0\twrote=0", fx->root, IRQ101) > 0);

	/* the same handlers after the crash: restored */
	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	caad_actuator_free(a);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_string_equal(lines[0], want);
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_content(fx->root, IRQ101, "1\n");

	/* another device's handlers on that number now: left as it is */
	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	caad_actuator_free(a);
	write_file(fx->root, "sys/kernel/irq/101/actions", "nvme0q3\n");
	assert_int_equal(caad_journal_restore(fx->journal, true), 0);
	assert_content(fx->root, IRQ101, "0\n");
	assert_false(exists(fx->journal));

	/* its handlers unreadable now: restored as before */
	write_file(fx->root, IRQ101, "1\n");
	write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vb-TxRx-0\n");
	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	caad_actuator_free(a);
	assert_int_equal(unlink(actions), 0);
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_content(fx->root, IRQ101, "1\n");

	/* the running caad's restore too: another device's IRQ at that
	 * number now, which happens to read what caad wrote, is left */
	write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vb-TxRx-0\n");
	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	write_file(fx->root, "sys/kernel/irq/101/actions", "nvme0q3\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "0\n");
	caad_actuator_free(a);
}

/*
 * Each journal line says what caad wrote there, journaled before each
 * write (with the value before it): after a crash, an object that reads
 * neither its original nor one of those was changed by someone else since
 * and is left to them; one that reads caad's value is restored. A line
 * that fails is kept whole, what caad wrote with it; a "wrote=" field that
 * does not parse cannot tell, and its object is restored.
 */
static void test_journal_restore_others_since(void **state)
{
	struct fixture *fx = *state;
	struct caad_setting s1[] = { rps(0, "0"), irq(101, 0, "0") }, s2[] = { rps(0, "1"), irq(101, 0, "0-1") };
	struct caad_plan p1 = PLAN(s1), p2 = PLAN(s2);
	_cleanup_free_ char *want = NULL, *irq101 = path_in(fx->root, IRQ101), *text = NULL;
	_cleanup_free_ char *log = NULL;
	struct capture cap;
	char lines[8][512];
	struct caad_actuator *a;
	size_t n;
	int r;

	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p1), 2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 2);
	caad_actuator_free(a); /* a crash: nothing restored */
	/* IRQ 101's line was last written before its write: both values */
	assert_true(asprintf(&want, "%s/%s\t1\twrote=0\twrote=0-1", fx->root, IRQ101) > 0);
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 2);
	assert_true(streq(lines[0], want) || streq(lines[1], want));
	assert_true(journal_has(lines, n, fx, RX0, "0"));

	/* someone sets rx-0 to CPUs 0-1 meanwhile; IRQ 101 reads caad's 0-1 */
	write_file(fx->root, RX0, "3\n");
	capture_begin(&cap, fx->root);
	r = caad_journal_restore(fx->journal, true);
	log = capture_end(&cap);
	assert_int_equal(r, 1);
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(fx->journal));
	assert_non_null(strstr(log, "neither its original \"0\" nor what caad wrote (wrote=1): changed by someone "
	                            "else since, not restored"));

	/* what caad wrote before its last write (killed between the journal
	 * and the write) is caad's too */
	write_file(fx->root, RX0, "0\n");
	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p1), 2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 2);
	caad_actuator_free(a);
	write_file(fx->root, IRQ101, "0\n");
	assert_int_equal(caad_journal_restore(fx->journal, true), 2);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, IRQ101, "1\n");

	/* a line that fails is kept with what caad wrote */
	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p1), 2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 2);
	caad_actuator_free(a);
	assert_int_equal(unlink(irq101), 0);
	assert_int_equal(mkdir(irq101, 0755), 0);
	assert_int_equal(caad_journal_restore(fx->journal, true), -EIO);
	assert_content(fx->root, RX0, "0\n");
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_string_equal(lines[0], want);
	assert_int_equal(rmdir(irq101), 0);

	/* an unknown "wrote=" value: restored all the same */
	write_file(fx->root, IRQ101, "0\n");
	free(text);
	assert_true(asprintf(&text, "%s/%s\t1\twrote=zero\n", fx->root, IRQ101) > 0);
	write_file(fx->root, "run/journal", text);
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_content(fx->root, IRQ101, "1\n");
}

/*
 * Journals of an earlier boot (a persistent runtime directory): the reboot
 * undid what they record, and their numbers may name other objects now.
 * They are removed, not restored; those of this boot, or of a boot that
 * cannot be told, are kept for caad_journal_restore().
 */
static void test_journals_drop_other_boot(void **state)
{
	struct fixture *fx = *state;
	_cleanup_free_ char *dir = path_in(fx->root, "run"), *mark = path_in(fx->root, "run/boot_id"),
	                    *now = path_in(fx->top, "boot_id"), *irqb = path_in(fx->root, "run/irqbalance");
	const char *const journals[] = { fx->journal, irqb };

	write_file(fx->top, "boot_id", "b3e82d90-b8c9-4388-bc48-42a1ef2f4b38\n");
	write_file(fx->root, "run/journal", "/x\t1\n");
	write_file(fx->root, "run/irqbalance", "/s\tNONE\n");

	bool same = true;

	/* no boot recorded (a first start, an older caad's journal): kept, this
	 * boot recorded; not known to be of this boot */
	assert_int_equal(caad_journals_drop_other_boot(dir, now, journals, 2, &same), 0);
	assert_false(same);
	assert_true(exists(fx->journal) && exists(irqb));
	assert_content(fx->root, "run/boot_id", "b3e82d90-b8c9-4388-bc48-42a1ef2f4b38\n");

	/* the same boot: kept, and known to be of it */
	assert_int_equal(caad_journals_drop_other_boot(dir, now, journals, 2, &same), 0);
	assert_true(same);
	assert_true(exists(fx->journal) && exists(irqb));

	/* the host restarted: both removed, the new boot recorded */
	write_file(fx->top, "boot_id", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");
	assert_int_equal(caad_journals_drop_other_boot(dir, now, journals, 2, &same), 2);
	assert_false(same);
	assert_false(exists(fx->journal));
	assert_false(exists(irqb));
	assert_content(fx->root, "run/boot_id", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");
	/* and none there to remove: nothing to do, not an error */
	write_file(fx->top, "boot_id", "b3e82d90-b8c9-4388-bc48-42a1ef2f4b38\n");
	assert_int_equal(caad_journals_drop_other_boot(dir, now, journals, 2, NULL), 0);

	/* this boot cannot be told: nothing removed, nor the earlier boot's
	 * record kept (it would take this boot's journal for its own later) */
	write_file(fx->root, "run/journal", "/x\t1\n");
	write_file(fx->top, "boot_id", "not a boot id\n");
	assert_int_equal(caad_journals_drop_other_boot(dir, now, journals, 1, NULL), 0);
	assert_true(exists(fx->journal));
	assert_false(exists(mark));
	assert_int_equal(unlink(now), 0);
	write_file(fx->root, "run/boot_id", "b3e82d90-b8c9-4388-bc48-42a1ef2f4b38\n");
	assert_int_equal(caad_journals_drop_other_boot(dir, now, journals, 1, NULL), 0);
	assert_true(exists(fx->journal));
	assert_false(exists(mark));

	/* a record that is not a boot id: ignored (kept), then replaced */
	write_file(fx->top, "boot_id", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");
	write_file(fx->root, "run/boot_id", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-and-more\n");
	assert_int_equal(caad_journals_drop_other_boot(dir, now, journals, 1, NULL), 0);
	assert_true(exists(fx->journal));
	assert_content(fx->root, "run/boot_id", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");

	/* a journal of the earlier boot that cannot be removed (a directory
	 * here): an error, and the record stays, for the next start to try */
	write_file(fx->root, "run/irqbalance/x", "\n");
	write_file(fx->top, "boot_id", "b3e82d90-b8c9-4388-bc48-42a1ef2f4b38\n");
	assert_true(caad_journals_drop_other_boot(dir, now, journals, 2, NULL) < 0);
	assert_content(fx->root, "run/boot_id", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n");

	/* no record, and none can be written (a directory in its place): the
	 * journal is kept for the restore, which is not stopped */
	assert_int_equal(unlink(mark), 0);
	write_file(fx->root, "run/boot_id/x", "\n");
	write_file(fx->root, "run/journal", "/x\t1\n");
	assert_int_equal(caad_journals_drop_other_boot(dir, now, journals, 1, &same), 0);
	assert_false(same);
	assert_true(exists(fx->journal));
}

/* A value that vanishes between restore's read and its write is gone, not
 * a failure: nothing is kept to be tried again. */
static void test_restore_object_vanishes(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(1, "1"), irq(100, 0, "1") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	fault_set(RX1, 0, 1);
	fault.vanish = true;
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_int_equal(fault.calls, 1);
	assert_int_equal(caad_actuator_n_changed(a), 0);
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(fx->journal));
}

/*
 * A threaded NAPI kthread is moved only while its PID still names it: a
 * PID outlives its task, and another task (here this test's own thread)
 * may hold the number now. Under no sysroot, on this process alone.
 */
static void test_kthread_pid_reused(void **state)
{
	struct fixture *fx = *state;
	struct caad_iface *ifc = &fx->inv->ifaces[0];
	struct caad_napi napi = { .id = 8193, .irq = -1, .kthread = getpid() };
	struct caad_setting s = { .kind = CAAD_SETTING_KTHREAD_AFFINITY, .iface = 0, .queue = 0, .irq = -1,
		                  .pid = getpid() };
	struct caad_plan plan = { .settings = &s, .n_settings = 1 };
	char name[17] = "", lines[4][512];
	cpu_set_t before, after;
	unsigned first = CPU_SETSIZE;

	assert_int_equal(ifc->n_napis, 0);
	ifc->napis = &napi;
	ifc->n_napis = 1;
	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	for (unsigned c = 0; c < CPU_SETSIZE && first == CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &before))
			first = c;
	caad_cpumask_zero(&s.cpus);
	caad_cpumask_set(&s.cpus, first);
	assert_int_equal(prctl(PR_GET_NAME, name), 0);

	{
		_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator("/", fx->journal, false);

		/* this thread's comm is not "napi/vb-8193": not the kthread */
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
		assert_int_equal(caad_actuator_n_changed(a), 0);
		assert_false(exists(fx->journal));
		assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
		assert_true(CPU_EQUAL(&before, &after));
		assert_true(caad_actuator_wants(a) & CAAD_ACTUATOR_WANT_INVENTORY);
	}

	if (CPU_COUNT(&before) < 2) {
		/* skip() jumps out: napi is this frame's, not the teardown's to free */
		ifc->napis = NULL;
		ifc->n_napis = 0;
		test_skip("kthread affinity change not checked: this process may run on one CPU only");
	} else {
		_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator("/", fx->journal, false);

		/* named as the kernel names the NAPI's kthread: moved */
		assert_int_equal(prctl(PR_SET_NAME, "napi/vb-8193"), 0);
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
		assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
		assert_int_equal(CPU_COUNT(&after), 1);
		assert_true(CPU_ISSET(first, &after));
		assert_int_equal(journal_lines_any(fx, lines, ARRAY_SIZE(lines)), 1);
		assert_true(strncmp(lines[0], "kthread:", 8) == 0 && strstr(lines[0], ":napi/vb-8193\t"));
		assert_int_equal(caad_actuator_restore(a), 0);
		assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
		assert_true(CPU_EQUAL(&before, &after));
		assert_false(exists(fx->journal));

		/* the device renamed to vc: the kernel does not rename its kthread,
		 * and the comm the inventory read is what it must still read */
		snprintf(ifc->name, sizeof(ifc->name), "vc");
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
		assert_int_equal(caad_actuator_n_changed(a), 0);
		snprintf(napi.kthread_comm, sizeof(napi.kthread_comm), "napi/vb-8193");
		caad_actuator_clear_backoff(a);
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
		assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
		assert_int_equal(CPU_COUNT(&after), 1);
		assert_int_equal(caad_actuator_restore(a), 0);
		assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
		assert_true(CPU_EQUAL(&before, &after));
		snprintf(ifc->name, sizeof(ifc->name), "vb");
	}
	assert_int_equal(prctl(PR_SET_NAME, name), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(before), &before), 0);
	ifc->napis = NULL;
	ifc->n_napis = 0;
}

/*
 * A NAPI kthread that is gone (made anew with another PID: threaded NAPI
 * off and on, a reset) takes its entry with it: nothing is left to
 * restore, nor to journal at every write until exit. A child process
 * named as the kthread stands for it.
 */
static void test_kthread_gone(void **state)
{
	struct fixture *fx = *state;
	struct caad_iface *ifc = &fx->inv->ifaces[0];
	struct caad_napi napi = { .id = 8193, .irq = -1 };
	struct caad_setting s = { .kind = CAAD_SETTING_KTHREAD_AFFINITY, .iface = 0, .queue = 0, .irq = -1 };
	struct caad_plan plan = { .settings = &s, .n_settings = 1 }, none = { 0 };
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator("/", fx->journal, false);
	char lines[4][512], c;
	cpu_set_t set;
	int go[2], status;
	pid_t child;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	if (CPU_COUNT(&set) < 2)
		test_skip("a kthread's move not checked: this process may run on one CPU only");
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		(void)prctl(PR_SET_NAME, "napi/vb-8193");
		(void)!write(go[1], "x", 1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(go[0], &c, 1), 1);
	close(go[0]);
	close(go[1]);
	napi.kthread = s.pid = child;
	snprintf(napi.kthread_comm, sizeof(napi.kthread_comm), "napi/vb-8193");
	caad_cpumask_zero(&s.cpus);
	for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set)) {
			caad_cpumask_set(&s.cpus, cpu);
			break;
		}
	ifc->napis = &napi;
	ifc->n_napis = 1;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(journal_lines_any(fx, lines, ARRAY_SIZE(lines)), 1);
	/* there still: kept */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 0);
	assert_int_equal(caad_actuator_n_changed(a), 1);

	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 0);
	ifc->napis = NULL; /* (a failed assertion jumps past the end) */
	ifc->n_napis = 0;
	assert_int_equal(caad_actuator_n_changed(a), 0);
	assert_false(exists(fx->journal));
	assert_int_equal(caad_actuator_restore(a), 0);
}

/*
 * A renamed interface keeps its values: the journal follows the new name
 * (sysfs paths and labels; an IRQ's path has no name in it), and restore
 * writes there. Forgetting it drops its entries, not the others'.
 */
static void test_rename_iface(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *from = path_in(fx->root, "sys/class/net/vb"), *to = path_in(fx->root, "sys/class/net/vc");
	struct caad_setting s[] = { rps(1, "1"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	/* the IRQs it holds (what a paused caad keeps banned in irqbalance) */
	int held[4] = { -1, -1 };
	assert_int_equal(caad_actuator_held_irqs(a, held, ARRAY_SIZE(held)), 1);
	assert_int_equal(held[0], 101);
	assert_int_equal(caad_actuator_held_irqs(a, held, 0), 0);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(caad_actuator_rename_iface(a, 2, "vb", "vc"), 2);
	assert_int_equal(caad_actuator_rename_iface(a, 2, "vb", "vc"), 0); /* nothing of vb left */
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 2);
	assert_true(journal_has(lines, 2, fx, "sys/class/net/vc/queues/rx-1/rps_cpus", "0"));
	assert_true(journal_has(lines, 2, fx, IRQ101, "1"));

	/* the name the journal holds ifindex 2 under, where it is not the one asked */
	char was[IF_NAMESIZE] = "";
	assert_int_equal(caad_actuator_journaled_name(a, 2, "vc", was), 0);
	assert_int_equal(caad_actuator_journaled_name(a, 7, "vb", was), 0);
	assert_int_equal(caad_actuator_journaled_name(a, 0, "vb", was), 0);
	assert_int_equal(caad_actuator_journaled_name(a, 2, "vb", was), 1);
	assert_string_equal(was, "vc");
	/* back under vb (as when caad missed the first rename): followed back */
	assert_int_equal(rename(to, from), 0);
	assert_int_equal(caad_actuator_rename_iface(a, 2, was, "vb"), 2);
	assert_int_equal(caad_actuator_journaled_name(a, 2, "vb", was), 0);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(caad_actuator_rename_iface(a, 2, "vb", "vc"), 2);

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, "sys/class/net/vc/queues/rx-1/rps_cpus", "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(fx->journal));

	/* forget: a name with no entries keeps them all; its own name drops them */
	assert_int_equal(rename(to, from), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	/* entries of vb as ifindex 2: none under another name, or of ifindex 2 */
	assert_int_equal(caad_actuator_other_ifindex(a, "vb", 7), 2);
	assert_int_equal(caad_actuator_other_ifindex(a, "vb", 2), 0);
	assert_int_equal(caad_actuator_other_ifindex(a, "v", 7), 0);
	assert_int_equal(caad_actuator_other_ifindex(a, "vc", 7), 0);
	assert_int_equal(caad_actuator_forget_iface(a, 2, "vc", false), 0);
	assert_int_equal(caad_actuator_forget_iface(a, 2, "vb", false), 1);
	/* its IRQ is the host's, and may outlive the interface here (moved
	 * to another network namespace): kept for exit, of no interface now */
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(caad_actuator_other_ifindex(a, "vb", 7), 0);
	assert_true(exists(fx->journal));
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(fx->journal));
}

/*
 * A PCI function moved to another network namespace takes its own values
 * (RPS) with it, and brings them back: they are kept for it by ifindex,
 * adopted when it is back still reading caad's value, and restored at
 * exit; a device made anew under the name (another ifindex) has none of
 * them, and its value is its own original.
 */
static void test_forget_iface_may_return(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *here = path_in(fx->root, "sys/class/net/vb"), *away = path_in(fx->top, "vb-away");
	struct caad_setting s[] = { rps(1, "1") };
	struct caad_plan plan = PLAN(s), none = { 0 };
	char lines[4][512];

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, RX1, "2\n");
	/* away: kept (nothing forgotten), in the journal too */
	assert_int_equal(rename(here, away), 0);
	assert_int_equal(caad_actuator_forget_iface(a, 2, "vb", true), 0);
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(journal_has(lines, 1, fx, RX1, "0"));
	/* back, still caad's: adopted with its original, restored at exit */
	assert_int_equal(rename(away, here), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX1, "0\n");

	/* away again, and a new device under the name (ifindex 9): the old
	 * entry goes, the new one's value is its original */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(caad_actuator_forget_iface(a, 2, "vb", true), 0);
	write_file(fx->root, RX1, "2\n");
	fx->inv->ifaces[0].ifindex = 9;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_n_changed(a), 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX1, "2\n");
	fx->inv->ifaces[0].ifindex = 2;
	/* back, and no plan about it for a while: its again, so that a later
	 * change is someone else's (backed off), not taken for the original */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	write_file(fx->root, RX1, "0\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(rename(here, away), 0);
	assert_int_equal(caad_actuator_forget_iface(a, 2, "vb", true), 0);
	assert_int_equal(rename(away, here), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 0);
	write_file(fx->root, RX1, "4\n"); /* the admin */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_content(fx->root, RX1, "4\n");
	assert_int_equal(caad_actuator_n_backed_off(a), 1);
	caad_actuator_clear_backoff(a);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX1, "4\n");
	/* back with another value than caad's (changed while away): that is
	 * its original, not someone else's change after it came back */
	write_file(fx->root, RX1, "0\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(rename(here, away), 0);
	assert_int_equal(caad_actuator_forget_iface(a, 2, "vb", true), 0);
	assert_int_equal(rename(away, here), 0);
	write_file(fx->root, RX1, "8\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 0);
	assert_int_equal(caad_actuator_n_changed(a), 0);
	assert_int_equal(caad_actuator_n_backed_off(a), 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX1, "8\n");
	/* a virtual device (may_return false): forgotten at once */
	write_file(fx->root, RX1, "2\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	write_file(fx->root, RX1, "0\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(caad_actuator_forget_iface(a, 2, "vb", false), 1);
	assert_int_equal(caad_actuator_n_changed(a), 0);
}

/*
 * Drivers that name an IRQ's handlers after the interface (i40e-vb-TxRx-0)
 * request them again under the new name when the device is opened again,
 * and keep the old one until then (a rename while it is up): either way
 * the IRQ, which keeps caad's affinity, is still the one caad changed, and
 * is put back, after a crash too.
 */
static void test_rename_irq_actions(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *from = path_in(fx->root, "sys/class/net/vb"), *to = path_in(fx->root, "sys/class/net/vc");
	_cleanup_free_ char *want = NULL;
	struct caad_setting s[] = { irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	char lines[4][512];

	write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vb-TxRx-0\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(caad_actuator_rename_iface(a, 2, "vb", "vc"), 1);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(asprintf(&want, "%s/%s\t1\tactions=i40e-vc-TxRx-0\tactions=i40e-vb-TxRx-0\twrote=0",
	                     fx->root, IRQ101) > 0);
	assert_string_equal(lines[0], want);
	write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vc-TxRx-0\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(rename(to, from), 0);

	/* renamed while up: the handlers keep the old name */
	write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vb-TxRx-0\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(caad_actuator_rename_iface(a, 2, "vb", "vc"), 1);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(rename(to, from), 0);
	/* ... and after a crash, with either name, from the journal's line
	 * (an IRQ's object does not name the interface: no directory moves) */
	for (unsigned k = 0; k < 2; k++) {
		struct caad_actuator *b = actuator(fx->root, fx->journal, false);

		write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vb-TxRx-0\n");
		assert_int_equal(caad_actuator_apply(b, fx->inv, &plan), 1);
		assert_int_equal(caad_actuator_rename_iface(b, 2, "vb", "vd"), 1);
		caad_actuator_free(b); /* "crash": no restore */
		write_file(fx->root, "sys/kernel/irq/101/actions", k ? "i40e-vd-TxRx-0\n" : "i40e-vb-TxRx-0\n");
		assert_int_equal(caad_journal_restore(fx->journal, false), 1);
		assert_content(fx->root, IRQ101, "1\n");
		assert_false(exists(fx->journal));
	}
	/* a restore that fails keeps the line with both names for the next */
	{
		struct caad_actuator *b = actuator(fx->root, fx->journal, false);

		write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vb-TxRx-0\n");
		assert_int_equal(caad_actuator_apply(b, fx->inv, &plan), 1);
		assert_int_equal(caad_actuator_rename_iface(b, 2, "vb", "vd"), 1);
		caad_actuator_free(b);
		fault_set("irq/101/smp_affinity_list", -ENOSPC, 1); /* no vector left there, for now */
		assert_true(caad_journal_restore(fx->journal, false) < 0);
		fault_set(NULL, 0, 0);
		assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
		free(want);
		assert_true(asprintf(&want, "%s/%s\t1\tactions=i40e-vd-TxRx-0\tactions=i40e-vb-TxRx-0\twrote=0",
		                     fx->root, IRQ101) > 0);
		assert_string_equal(lines[0], want);
		assert_int_equal(caad_journal_restore(fx->journal, false), 1);
		assert_content(fx->root, IRQ101, "1\n");
	}
	/* another device's since, neither name: not restored */
	{
		struct caad_actuator *b = actuator(fx->root, fx->journal, false);

		write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vb-TxRx-0\n");
		assert_int_equal(caad_actuator_apply(b, fx->inv, &plan), 1);
		assert_int_equal(caad_actuator_rename_iface(b, 2, "vb", "vd"), 1);
		caad_actuator_free(b);
		write_file(fx->root, "sys/kernel/irq/101/actions", "nvme0q3\n");
		assert_int_equal(caad_journal_restore(fx->journal, false), 0);
		assert_content(fx->root, IRQ101, "0\n");
		write_file(fx->root, IRQ101, "1\n");
	}

	/* the name only as a whole part of a handler's name: "vbx" is
	 * another device's, and stays as recorded */
	write_file(fx->root, "sys/kernel/irq/101/actions", "i40e-vbx-TxRx-0\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(caad_actuator_rename_iface(a, 2, "vb", "vc"), 1);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	free(want);
	assert_true(asprintf(&want, "%s/%s\t1\tactions=i40e-vbx-TxRx-0\twrote=0", fx->root, IRQ101) > 0);
	assert_string_equal(lines[0], want);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(rename(to, from), 0);
}

/*
 * Renamed to a name with a control character (the kernel allows one):
 * the journal cannot hold it, and an entry under it would make every
 * later journal write fail. What caad changed there is put back at once,
 * and later changes are journaled again.
 */
static void test_rename_iface_control_char(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *from = path_in(fx->root, "sys/class/net/vb"),
	                    *to = path_in(fx->root, "sys/class/net/v\001c");
	struct caad_setting s[] = { rps(1, "1"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	struct caad_setting s2[] = { irq(100, 0, "0") };
	struct caad_plan plan2 = PLAN(s2);
	char lines[8][512];

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(caad_actuator_rename_iface(a, 2, "vb", "v\001c"), 2);
	/* its RPS mask, under the name, is put back; its IRQ (by number) stays */
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_content(fx->root, "sys/class/net/v\001c/queues/rx-1/rps_cpus", "0\n");
	assert_content(fx->root, IRQ101, "0\n");
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(journal_has(lines, 1, fx, IRQ101, "1"));
	/* the journal takes the next change */
	assert_int_equal(rename(to, from), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 1);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 2);
	assert_true(journal_has(lines, 2, fx, IRQ100, "0-1"));
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
}

/* ... and where that put-back is refused, the loss is counted, not silent. */
static void test_rename_iface_control_char_refused(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *from = path_in(fx->root, "sys/class/net/vb"),
	                    *to = path_in(fx->root, "sys/class/net/v\001c");
	struct caad_setting s[] = { rps(1, "1") };
	struct caad_plan plan = PLAN(s);
	struct caad_actuator_stats st;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(rename(from, to), 0);
	fault_set("rx-1/rps_cpus", -EACCES, 1);
	assert_int_equal(caad_actuator_rename_iface(a, 2, "vb", "v\001c"), 1);
	fault_set(NULL, 0, 0);
	assert_int_equal(caad_actuator_n_changed(a), 0);
	caad_actuator_get_stats(a, &st);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.restored, 0);
	assert_int_equal(rename(to, from), 0);
}

/*
 * Two interfaces swap names in one go (vb -> vt, vx -> vb, vt -> vx, as
 * udev rules may): each one's values follow its own device, by ifindex,
 * and exit writes each original back onto the device it was read from.
 */
static void test_rename_swap(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	_cleanup_free_ char *vb = path_in(fx->root, "sys/class/net/vb"), *vx = path_in(fx->root, "sys/class/net/vx"),
	                    *vt = path_in(fx->root, "sys/class/net/vt");
	char *names[] = { "vb", "vx" };
	char lines[8][512];

	write_file(fx->root, "sys/class/net/vx/ifindex", "3\n");
	write_file(fx->root, "sys/class/net/vx/queues/rx-0/rps_cpus", "3\n");
	assert_int_equal(caad_inventory_load(fx->root, names, 2, &inv), 0);
	struct caad_setting s[] = { rps(0, "1"), rps(0, "0") };
	s[1].iface = 1;
	struct caad_plan plan = PLAN(s);
	assert_int_equal(caad_actuator_apply(a, inv, &plan), 2);
	assert_content(fx->root, RX0, "2\n");
	assert_content(fx->root, "sys/class/net/vx/queues/rx-0/rps_cpus", "1\n");

	assert_int_equal(rename(vb, vt), 0);
	assert_int_equal(rename(vx, vb), 0);
	assert_int_equal(rename(vt, vx), 0);
	assert_int_equal(caad_actuator_rename_iface(a, 2, "vb", "vx"), 1);
	assert_int_equal(caad_actuator_rename_iface(a, 3, "vx", "vb"), 1);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 2);
	assert_true(journal_has(lines, 2, fx, "sys/class/net/vx/queues/rx-0/rps_cpus", "0"));
	assert_true(journal_has(lines, 2, fx, RX0, "3"));

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, "sys/class/net/vx/queues/rx-0/rps_cpus", "0\n"); /* ifindex 2's */
	assert_content(fx->root, RX0, "3\n");                                      /* ifindex 3's */
	assert_false(exists(fx->journal));
}

/*
 * Renamed while caad did not follow (after the last inventory, before
 * the exit's restore; or while caad was down): found by its ifindex and
 * restored under its name now, not dropped as gone. A name another
 * device took since is left alone.
 */
static void test_restore_follows_rename(void **state)
{
	struct fixture *fx = *state;
	struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *vb = path_in(fx->root, "sys/class/net/vb"), *vz = path_in(fx->root, "sys/class/net/vz"),
	                    *vy = path_in(fx->root, "sys/class/net/vy");
	struct caad_setting s[] = { rps(0, "0"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];

	/* at exit: every entry of the interface follows, the IRQ's stays */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(rename(vb, vz), 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, "sys/class/net/vz/queues/rx-0/rps_cpus", "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_int_equal(caad_actuator_n_changed(a), 0);
	assert_false(exists(fx->journal));
	caad_actuator_free(a);

	/* after a crash: the journal's line follows, and the name's new
	 * device (ifindex 9) is not written; only with a journal known to be
	 * of this boot (after a reboot, ifindex 2 may be another device) */
	assert_int_equal(rename(vz, vb), 0);
	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	caad_actuator_free(a); /* "crash" */
	assert_int_equal(rename(vb, vz), 0);
	write_file(fx->root, "sys/class/net/vb/ifindex", "9\n");
	write_file(fx->root, RX0, "1\n");
	_cleanup_free_ char *saved = read_all(fx->journal);
	assert_int_equal(caad_journal_restore(fx->journal, false), 1); /* the IRQ's */
	assert_content(fx->root, "sys/class/net/vz/queues/rx-0/rps_cpus", "1\n");
	write_file(fx->root, IRQ101, "0\n");
	write_file(fx->root, "run/journal", saved); /* as the crash left it */
	assert_int_equal(caad_journal_restore(fx->journal, true), 2);
	assert_content(fx->root, "sys/class/net/vz/queues/rx-0/rps_cpus", "0\n");
	assert_content(fx->root, RX0, "1\n"); /* the other device's */
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(fx->journal));

	/* while running: a write to a journaled object of a renamed
	 * interface fails, and its entry follows (restored at exit) */
	assert_int_equal(rename(vb, vy), 0);
	assert_int_equal(rename(vz, vb), 0);
	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	struct caad_setting s2[] = { rps(0, "1") };
	struct caad_plan plan2 = PLAN(s2);
	fault_set("vb/queues/rx-0/rps_cpus", 0, 1);
	fault.vanish = true; /* stands for the rename: unlinked just before the write */
	write_file(fx->root, "sys/class/net/vz/ifindex", "2\n");
	write_file(fx->root, "sys/class/net/vz/queues/rx-0/rps_cpus", "1\n");
	write_file(fx->root, "sys/class/net/vb/ifindex", "8\n");
	(void)caad_actuator_apply(a, fx->inv, &plan2);
	assert_int_equal(fault.calls, 1);
	fault_set(NULL, 0, 0);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 2);
	assert_true(journal_has(lines, 2, fx, "sys/class/net/vz/queues/rx-0/rps_cpus", "0"));
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, "sys/class/net/vz/queues/rx-0/rps_cpus", "0\n");
	caad_actuator_free(a);
}

/* An ifindex that cannot be read at the exit's restore cannot tell "gone"
 * from "still there": the original is kept, in memory and in the journal,
 * not dropped as a gone device's, and a later restore puts it back. */
static void test_restore_ifindex_unread(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *ifindex = path_in(fx->root, "sys/class/net/vb/ifindex");
	struct caad_setting s[] = { rps(0, "0") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, RX0, "1\n");
	assert_int_equal(unlink(ifindex), 0);
	assert_int_equal(mkdir(ifindex, 0755), 0); /* a read fails: EISDIR */
	assert_true(caad_actuator_restore(a) < 0);
	assert_content(fx->root, RX0, "1\n");
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 1);
	assert_true(journal_has(lines, 1, fx, RX0, "0"));

	assert_int_equal(rmdir(ifindex), 0);
	write_file(fx->root, "sys/class/net/vb/ifindex", "2\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_false(exists(fx->journal));
}

/* A name another device took just before the exit, unseen: the original
 * goes onto its own device (by ifindex), not onto the new holder of the
 * name. */
static void test_restore_follows_swap(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *vb = path_in(fx->root, "sys/class/net/vb"), *vx = path_in(fx->root, "sys/class/net/vx");
	struct caad_setting s[] = { rps(0, "0") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(rename(vb, vx), 0);
	write_file(fx->root, "sys/class/net/vb/ifindex", "3\n");
	write_file(fx->root, RX0, "3\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, "sys/class/net/vx/queues/rx-0/rps_cpus", "0\n");
	assert_content(fx->root, RX0, "3\n");
	assert_false(exists(fx->journal));
}

/*
 * Two interfaces swapped names after the inventory: nothing is written or
 * journaled under a name that is another device's now (its value would
 * be journaled with the other's ifindex and restored onto neither).
 */
static void test_apply_name_swapped(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	char *names[] = { "vb", "vx" };
	struct caad_setting s[] = { irq(101, 0, "0"), rps(0, "1") };
	struct caad_plan plan = PLAN(s);

	write_file(fx->root, "sys/class/net/vx/ifindex", "3\n");
	write_file(fx->root, "sys/class/net/vx/queues/rx-0/rps_cpus", "3\n");
	assert_int_equal(caad_inventory_load(fx->root, names, 2, &inv), 0);
	/* vb is ifindex 3 now, vx ifindex 2 */
	write_file(fx->root, "sys/class/net/vb/ifindex", "3\n");
	write_file(fx->root, "sys/class/net/vx/ifindex", "2\n");
	(void)caad_actuator_apply(a, inv, &plan);
	assert_content(fx->root, IRQ101, "1\n"); /* written with the queue, put back with it */
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, "sys/class/net/vx/queues/rx-0/rps_cpus", "3\n");
	assert_int_equal(caad_actuator_n_changed(a), 0);
	assert_false(exists(fx->journal));
	assert_true(caad_actuator_wants(a) & CAAD_ACTUATOR_WANT_INVENTORY);
}

/* Crash recovery: the journal of an actuator that never restored. */
static void test_journal_restore_after_crash(void **state)
{
	struct fixture *fx = *state;
	struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	caad_actuator_free(a); /* "crash": no restore */
	assert_true(exists(fx->journal));
	assert_content(fx->root, RX0, "1\n");

	assert_int_equal(caad_journal_restore(fx->journal, true), 3);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, RX1, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(fx->journal));

	/* No journal: nothing to do. */
	assert_int_equal(caad_journal_restore(fx->journal, true), 0);
	caad_actuator_free(NULL);

	/* an empty original on the journal's last line ("PATH\t") is one too */
	struct caad_setting s1[] = { rps(1, "1") };
	struct caad_plan p1 = PLAN(s1);
	write_file(fx->root, RX1, "");
	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p1), 1);
	caad_actuator_free(a);
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_content(fx->root, RX1, "\n");
	assert_false(exists(fx->journal));
}

/*
 * After a crash, an interface name that another device took since (driver
 * reload, udev rename) is not written to: its ifindex differs from the
 * journal's. An IRQ's line, and a journal of an older caad without the
 * ifindex field, are restored as they were.
 */
static void test_journal_restore_other_device(void **state)
{
	struct fixture *fx = *state;
	struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "0"), irq(101, 0, "0") };
	struct caad_plan plan = PLAN(s);
	_cleanup_free_ char *rx0 = path_in(fx->root, RX0), *irq101 = path_in(fx->root, IRQ101);
	FILE *f;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	caad_actuator_free(a); /* "crash" */
	write_file(fx->root, "sys/class/net/vb/ifindex", "9\n"); /* vb is another device now */
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_content(fx->root, RX0, "1\n");    /* the other device's: left alone */
	assert_content(fx->root, IRQ101, "1\n"); /* restored */
	assert_false(exists(fx->journal));

	/* the same device: restored; an older journal (two fields): restored */
	write_file(fx->root, "sys/class/net/vb/ifindex", "2\n");
	write_file(fx->root, IRQ101, "0\n");
	f = fopen(fx->journal, "we");
	assert_non_null(f);
	fprintf(f, "%s\t0\t2\n%s\t1\n", rx0, irq101);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(caad_journal_restore(fx->journal, true), 2);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
}

/*
 * Lines without an object or a value are skipped, each named by its line
 * (blank lines counted); a vanished object is not restored or created; a
 * line whose device cannot be told is kept, not written or dropped.
 */
static void test_journal_restore_malformed(void **state)
{
	struct fixture *fx = *state;
	_cleanup_free_ char *text = NULL, *gone = path_in(fx->root, "sys/class/net/gone/queues/rx-0/rps_cpus");
	_cleanup_free_ char *log = NULL;
	struct capture cap;
	int r;

	write_file(fx->root, RX0, "3\n");
	write_file(fx->root, IRQ101, "0\n");
	assert_true(asprintf(&text,
	                     "no tab on this line\n"
	                     "\tno path on this one\n"
	                     "\n"
	                     "%s/%s\t0\n"
	                     "%s\t0\n"
	                     "%s/%s\t1\n"
	                     "\t\n"
	                     "garbage \x01\x02 here",
	                     fx->root, RX0, gone, fx->root, IRQ101) > 0);
	write_file(fx->root, "run/journal", text);

	capture_begin(&cap, fx->root);
	r = caad_journal_restore(fx->journal, true);
	log = capture_end(&cap);
	assert_int_equal(r, 2);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(gone));
	assert_false(exists(fx->journal));
	assert_int_equal(count_substr(log, "malformed journal line"), 4);
	assert_int_equal(count_substr(log, "journal:1: malformed"), 1);
	assert_int_equal(count_substr(log, "journal:2: malformed"), 1);
	assert_int_equal(count_substr(log, "journal:7: malformed"), 1);
	assert_int_equal(count_substr(log, "journal:8: malformed"), 1);

	/* A last field this caad does not know (another version's), or an
	 * interface path with no object under it: whose device the value
	 * was is not known. Kept for the operator, not written, not dropped. */
	{
		_cleanup_free_ char *odd = NULL, *want0 = NULL, *want1 = NULL;
		char lines[4][512];

		write_file(fx->root, RX0, "3\n");
		assert_true(asprintf(&want0, "%s/%s\t0\tnapi=3", fx->root, RX0) > 0);
		assert_true(asprintf(&want1, "%s/sys/class/net/vb\t0\t2", fx->root) > 0);
		assert_true(asprintf(&odd, "%s\n%s\n", want0, want1) > 0);
		write_file(fx->root, "run/journal", odd);
		assert_int_equal(caad_journal_restore(fx->journal, true), -EIO);
		assert_content(fx->root, RX0, "3\n");
		assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 2);
		assert_string_equal(lines[0], want0);
		assert_string_equal(lines[1], want1);
		assert_int_equal(unlink(fx->journal), 0);
	}

	/* A line naming a file caad never writes (edited by hand): not
	 * written, kept for the operator. */
	{
		_cleanup_free_ char *other = path_in(fx->root, "var/lib/precious"), *dots = NULL, *text2 = NULL;
		char lines[4][512];

		write_file(fx->root, "var/lib/precious", "keep me\n");
		assert_true(asprintf(&dots, "%s/proc/irq/../../var/lib/precious/smp_affinity_list", fx->root) > 0);
		assert_true(asprintf(&text2, "%s\t1\n%s\t2\n", other, dots) > 0);
		write_file(fx->root, "run/journal", text2);
		capture_begin(&cap, fx->root);
		r = caad_journal_restore(fx->journal, true);
		free(log);
		log = capture_end(&cap);
		assert_int_equal(r, -EIO);
		assert_content(fx->root, "var/lib/precious", "keep me\n");
		assert_int_equal(count_substr(log, "is not an object caad writes"), 2);
		assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 2);
		assert_int_equal(unlink(fx->journal), 0);

		/* a sysroot given as it was typed (not normalised): its objects
		 * are caad's all the same */
		free(text2);
		write_file(fx->root, IRQ101, "0\n");
		write_file(fx->root, RX0, "3\n");
		assert_true(asprintf(&text2, "%s/./%s\t1\n%s//%s\t0\n", fx->root, IRQ101, fx->root, RX0) > 0);
		write_file(fx->root, "run/journal", text2);
		assert_int_equal(caad_journal_restore(fx->journal, true), 2);
		assert_content(fx->root, IRQ101, "1\n");
		assert_content(fx->root, RX0, "0\n");
	}

	/* Only garbage: nothing restored, the journal is consumed. */
	write_file(fx->root, "run/journal", "junk\njunk again\n");
	assert_int_equal(caad_journal_restore(fx->journal, true), 0);
	assert_false(exists(fx->journal));

	/* Empty journal. */
	write_file(fx->root, "run/journal", "");
	assert_int_equal(caad_journal_restore(fx->journal, true), 0);
	assert_false(exists(fx->journal));

	/* A line that cannot be restored: an error, the journal is kept. */
	{
		_cleanup_free_ char *dir_line = NULL, *dir = path_in(fx->root, "proc/irq/103/smp_affinity_list");

		mkdir_parents(dir, strlen(fx->root) + 1);
		assert_int_equal(mkdir(dir, 0755), 0);
		write_file(fx->root, RX1, "1\n");
		assert_true(asprintf(&dir_line, "%s\t0\n%s/%s\t0\n", dir, fx->root, RX1) > 0);
		write_file(fx->root, "run/journal", dir_line);
		assert_int_equal(caad_journal_restore(fx->journal, true), -EIO);
		assert_content(fx->root, RX1, "0\n");
		assert_true(exists(fx->journal));
	}
}

/*
 * A value shorter than the file's: the file is the new value, not the new
 * value over the tail of the old one ("1\n1\n" would not even parse). Real
 * sysfs/procfs parse one write and do not care; a fake sysroot's files do.
 */
static void test_shorter_value_replaces_file(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { irq(100, 0, "1") };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, IRQ100, "1\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ100, "0-1\n");

	/* And the other way round: restoring an original shorter than caad's value. */
	struct caad_setting s2[] = { irq(101, 0, "0-1") };
	struct caad_plan plan2 = PLAN(s2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 1);
	assert_content(fx->root, IRQ101, "0-1\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ101, "1\n");
}

/* Snapshot of every file under dir but skip: "relpath\tcontent\tmtime" lines. */
struct snapshot {
	char *text;
	size_t len;
	FILE *f;
	const char *base, *skip;
};
static struct snapshot *snap_cur;

static int snap_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (snap_cur->skip && strncmp(path, snap_cur->skip, strlen(snap_cur->skip)) == 0 &&
	    (path[strlen(snap_cur->skip)] == 0 || path[strlen(snap_cur->skip)] == '/'))
		return 0;
	if (flag == FTW_F) {
		_cleanup_free_ char *c = read_all(path);

		fprintf(snap_cur->f, "%s\t%s\t%lld.%09ld\n", path + strlen(snap_cur->base), c ? c : "(unreadable)",
		        (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	} else {
		fprintf(snap_cur->f, "%s/\n", path + strlen(snap_cur->base));
	}
	return 0;
}

static char *snapshot(const char *dir, const char *skip)
{
	struct snapshot s = { .base = dir, .skip = skip };

	s.f = open_memstream(&s.text, &s.len);
	assert_non_null(s.f);
	snap_cur = &s;
	assert_int_equal(nftw(dir, snap_one, 16, FTW_PHYS), 0);
	snap_cur = NULL;
	assert_int_equal(fclose(s.f), 0);
	return s.text;
}

/* Only file names under dir (what exists, not what it holds). */
static char *names_under(const char *dir)
{
	_cleanup_free_ char *full = NULL;
	char *out;
	size_t n = 0;

	full = snapshot(dir, NULL);
	out = calloc(1, strlen(full) + 1);
	assert_non_null(out);
	for (char *l = full, *nl; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		assert_non_null(nl);
		char *tab = memchr(l, '\t', (size_t)(nl - l));
		size_t k = (size_t)((tab ? tab : nl) - l);

		memcpy(out + n, l, k);
		n += k;
		out[n++] = '\n';
	}
	return out;
}

/* Nothing is written outside ROOT, whatever the actuator does. */
static void test_nothing_outside_root(void **state)
{
	struct fixture *fx = *state;
	_cleanup_free_ char *before = NULL, *after = NULL, *names_before = NULL, *names_after = NULL;
	_cleanup_free_ char *root_slash = NULL;
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1"), irq(100, 0, "0-1"), irq(101, 1, "0") };
	struct caad_plan plan = PLAN(s);

	/* The host's counterparts must not be touched either: every write
	 * goes through caad_write_file(), which fails the test outside ROOT
	 * (comparing the host's files before and after would see irqbalance
	 * or the kernel move an IRQ meanwhile). */
	assert_false(exists("/sys/class/net/vb"));
	fault.inside = fx->root;

	assert_true(asprintf(&root_slash, "%s/", fx->root) > 0);
	before = snapshot(fx->top, fx->root);
	names_before = names_under(fx->root);

	for (int round = 0; round < 2; round++) {
		const char *sysroot = round ? root_slash : fx->root;
		struct caad_actuator *a;

		a = actuator(sysroot, fx->journal, true);
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
		caad_actuator_free(a);

		a = actuator(sysroot, fx->journal, false);
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
		{
			char lines[8][512];

			assert_int_equal(journal_lines(fx, lines, ARRAY_SIZE(lines)), 3);
		}
		assert_int_equal(caad_actuator_restore(a), 0);
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
		caad_actuator_free(a); /* crash */
		assert_int_equal(caad_journal_restore(fx->journal, true), 3);
	}

	after = snapshot(fx->top, fx->root);
	assert_string_equal(after, before);

	/* Inside ROOT: the same files as before (no temp file left over), the
	 * journal's directory aside. */
	names_after = names_under(fx->root);
	{
		const char *run = "/run/\n";
		char *p = strstr(names_after, run);

		if (p)
			memmove(p, p + strlen(run), strlen(p + strlen(run)) + 1);
	}
	assert_string_equal(names_after, names_before);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, IRQ101, "1\n");

	assert_true(fault.writes > 0);
	assert_false(exists("/sys/class/net/vb"));
}

static void test_actuator_options(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = NULL;
	struct caad_setting s[] = { rps(0, "0") };
	struct caad_plan plan = PLAN(s);
	char *names[] = { "vb" };
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;

	/* The options are copied: the caller's strings may go away. */
	{
		char *root = strdup(fx->root), *journal = strdup(fx->journal);
		const struct caad_actuator_options opts = { .sysroot = root, .journal_path = journal };

		assert_non_null(root);
		assert_non_null(journal);
		assert_int_equal(caad_actuator_new(&opts, &a), 0);
		memset(root, 'x', strlen(root));
		memset(journal, 'x', strlen(journal));
		free(root);
		free(journal);
	}
	assert_int_equal(caad_inventory_load(fx->root, names, 1, &inv), 0);
	assert_int_equal(caad_actuator_apply(a, inv, &plan), 1);
	assert_content(fx->root, RX0, "1\n");
	assert_true(exists(fx->journal));
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "0\n");
}

/* ---- error classes (issue 6) ------------------------------------------- */

static struct caad_actuator_stats stats_of(const struct caad_actuator *a)
{
	struct caad_actuator_stats st;

	caad_actuator_get_stats(a, &st);
	return st;
}

/* EIO on an IRQ: managed. Unmovable, never tried again, the queue keeps its
 * RPS mask, nothing journaled; the inventory is to be read again. */
static void test_fault_managed_irq(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { irq(100, 0, "1"), rps(0, "") };
	struct caad_plan plan = PLAN(s);

	write_file(fx->root, RX0, "3\n");
	fault_set(IRQ100, -EIO, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(fault.calls, 1); /* never retried */
	assert_int_equal(fault.writes, 1);
	assert_true(caad_actuator_irq_unmovable(a, 100));
	assert_true(caad_actuator_wants(a) & CAAD_ACTUATOR_WANT_INVENTORY);
	assert_false(caad_actuator_wants(a) & CAAD_ACTUATOR_WANT_TOPOLOGY);
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_content(fx->root, RX0, "3\n");
	assert_false(exists(fx->journal));
	assert_int_equal(stats_of(a).errors, 1);
	assert_int_equal(stats_of(a).errors_by_class[CAAD_ERROR_MANAGED_IRQ], 1);
	caad_actuator_reread(a, CAAD_ACTUATOR_WANT_INVENTORY);
	assert_int_equal(caad_actuator_wants(a), 0);

	/* the planner's next plan for the queue: RPS */
	struct caad_setting s2[] = { rps(0, "1") };
	struct caad_plan plan2 = PLAN(s2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 1);
	assert_content(fx->root, RX0, "2\n");
	/* an operator's go-ahead does not make a managed IRQ movable */
	caad_actuator_clear_backoff(a);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(fault.calls, 1);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(fx->journal));
}

/* EPERM (or EIO) on rps_cpus is no managed IRQ: a plain refusal. */
static void test_fault_eperm_on_rps(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "1") };
	struct caad_plan plan = PLAN(s);

	fault_set(RX0, -EPERM, 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(fault.calls, 1);
	assert_int_equal(stats_of(a).errors_by_class[CAAD_ERROR_OTHER], 1);
	assert_int_equal(stats_of(a).errors_by_class[CAAD_ERROR_MANAGED_IRQ], 0);
	assert_int_equal(caad_actuator_wants(a), 0);
	assert_content(fx->root, RX0, "0\n");
	assert_false(exists(fx->journal));
}

/* EINVAL: the topology is to be read again, and the value is tried again
 * only after that; refused once more, it is left alone. */
static void test_fault_offline_cpu(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { irq(100, 0, "1"), rps(0, "") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];
	size_t n;

	write_file(fx->root, RX0, "3\n");
	fault_set(IRQ100, -EINVAL, 1);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_wants(a), CAAD_ACTUATOR_WANT_TOPOLOGY);
	assert_int_equal(stats_of(a).errors_by_class[CAAD_ERROR_OFFLINE_CPU], 1);
	assert_false(exists(fx->journal));
	/* not before the topology was read again */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(fault.calls, 1);
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_content(fx->root, RX0, "3\n");

	caad_actuator_reread(a, CAAD_ACTUATOR_WANT_TOPOLOGY);
	assert_int_equal(caad_actuator_wants(a), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(fault.calls, 2);
	assert_content(fx->root, IRQ100, "1\n");
	assert_content(fx->root, RX0, "0\n");
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 2);
	assert_true(journal_has(lines, n, fx, IRQ100, "0-1"));
	assert_true(journal_has(lines, n, fx, RX0, "3"));

	/* refused every time: one re-read, one retry, then left alone */
	struct caad_setting s2[] = { irq(101, 1, "0") };
	struct caad_plan plan2 = PLAN(s2);
	fault_set(IRQ101, -ERANGE, 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_int_equal(caad_actuator_wants(a), CAAD_ACTUATOR_WANT_TOPOLOGY);
	caad_actuator_reread(a, CAAD_ACTUATOR_WANT_TOPOLOGY);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_int_equal(fault.calls, 2);
	assert_int_equal(caad_actuator_wants(a), 0); /* no loop of re-reads */
	for (int i = 0; i < 3; i++)
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_int_equal(fault.calls, 2);
	/* the online CPUs changed (hotplug): one more try */
	caad_actuator_reread(a, CAAD_ACTUATOR_WANT_TOPOLOGY);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_int_equal(fault.calls, 3);
	assert_content(fx->root, IRQ101, "1\n");

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(fx->journal));
}

/* ENOSPC: no IRQ is moved to that CPU again; RPS may still use it. */
static void test_fault_no_vectors(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { irq(100, 0, "1"), rps(0, ""), irq(102, 1, "1"), rps(1, ""), irq(101, 1, "1") };
	struct caad_plan plan = PLAN(s);
	struct caad_cpumask ex, want;

	write_file(fx->root, "proc/irq/102/smp_affinity_list", "0-1\n");
	write_file(fx->root, RX0, "3\n");
	write_file(fx->root, RX1, "3\n");
	fault_set(IRQ100, -ENOSPC, 0);
	/* IRQ 101 is on CPU 1 already: that is no move, nothing to write */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(fault.writes, 1); /* IRQ 102 never tried */
	caad_actuator_irq_exhausted(a, &ex);
	assert_int_equal(caad_cpumask_parse_list("1", &want), 0);
	assert_true(caad_cpumask_equal(&ex, &want));
	assert_int_equal(stats_of(a).errors_by_class[CAAD_ERROR_NO_VECTORS], 1);
	assert_int_equal(stats_of(a).errors, 1);
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_content(fx->root, "proc/irq/102/smp_affinity_list", "0-1\n");
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, RX1, "3\n");
	assert_false(exists(fx->journal));

	/* the next plan steers those queues to CPU 1 with RPS; another CPU
	 * still takes IRQs */
	struct caad_setting s2[] = { rps(0, "1"), rps(1, "1"), irq(102, 1, "0") };
	struct caad_plan plan2 = PLAN(s2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 3);
	assert_content(fx->root, RX0, "2\n");
	assert_content(fx->root, "proc/irq/102/smp_affinity_list", "0\n");

	/* a go-ahead (reload) forgets it */
	caad_actuator_clear_backoff(a);
	caad_actuator_irq_exhausted(a, &ex);
	assert_true(caad_cpumask_empty(&ex));

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, RX1, "3\n");
	assert_content(fx->root, "proc/irq/102/smp_affinity_list", "0-1\n");
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(fx->journal));
}

/* A file that vanishes between caad's read and its write: dropped, no
 * journal line for it, the queue's IRQ (already moved) kept. */
static void test_fault_vanish(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *rx0 = path_in(fx->root, RX0), *rx1 = path_in(fx->root, RX1);
	struct caad_setting s[] = { irq(100, 0, "1"), rps(0, ""), rps(1, "1") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];
	size_t n;

	write_file(fx->root, RX0, "3\n");
	fault_set(RX0, 0, 1);
	fault.vanish = true;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_false(exists(rx0));
	assert_content(fx->root, IRQ100, "1\n");
	assert_content(fx->root, RX1, "2\n");
	assert_true(caad_actuator_wants(a) & CAAD_ACTUATOR_WANT_INVENTORY);
	assert_int_equal(stats_of(a).errors_by_class[CAAD_ERROR_DEVICE_GONE], 1);
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 2);
	assert_true(journal_has(lines, n, fx, IRQ100, "0-1"));
	assert_true(journal_has(lines, n, fx, RX1, "0"));
	/* the next plans: no write, no new error, nothing created */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(fault.calls, 1);
	assert_int_equal(stats_of(a).errors, 1);
	assert_false(exists(rx0));

	/* one caad changed before vanishes: its journal line goes with it */
	struct caad_setting s2[] = { rps(1, "0") };
	struct caad_plan plan2 = PLAN(s2);
	fault_set(RX1, 0, 1);
	fault.vanish = true;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_false(exists(rx1));
	assert_int_equal(caad_actuator_n_changed(a), 1);
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 1);
	assert_true(journal_has(lines, n, fx, IRQ100, "0-1"));

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(rx0));
	assert_false(exists(rx1));
	assert_false(exists(fx->journal));
}

/* A read-only rps_cpus (EROFS): the queue is left whole, its IRQ put back,
 * said once and not tried again until a go-ahead. */
static void test_fault_read_only(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { irq(100, 0, "1"), rps(0, ""), rps(1, "1") };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];
	size_t n;

	write_file(fx->root, RX0, "3\n");
	fault_set(RX0, -EROFS, 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, IRQ100, "0-1\n"); /* put back */
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, RX1, "2\n");
	assert_int_equal(stats_of(a).undone, 1);
	assert_int_equal(stats_of(a).errors, 1);
	assert_int_equal(stats_of(a).errors_by_class[CAAD_ERROR_OTHER], 1);
	assert_int_equal(caad_actuator_wants(a), 0);
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 1);
	assert_true(journal_has(lines, n, fx, RX1, "0"));
	/* IRQ 100 up, RPS refused, IRQ 100 back, rx-1 */
	assert_int_equal(fault.writes, 4);

	for (int i = 0; i < 3; i++)
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(fault.writes, 4); /* the queue is not tried again */
	assert_int_equal(stats_of(a).errors, 1);

	/* another value is tried; so is the same after a go-ahead */
	struct caad_setting s2[] = { irq(100, 0, "0"), rps(0, "1") };
	struct caad_plan plan2 = PLAN(s2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_int_equal(fault.calls, 2);
	caad_actuator_clear_backoff(a);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(fault.calls, 3);
	assert_content(fx->root, IRQ100, "0-1\n");

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_content(fx->root, RX0, "3\n");
	assert_content(fx->root, RX1, "0\n");
	assert_false(exists(fx->journal));
}

/* A FIFO where the journal should be (nothing caad writes): an error that
 * says so, at once rather than a start that waits on a writer; kept. */
static void test_journal_restore_fifo(void **state)
{
	struct fixture *fx = *state;
	_cleanup_free_ char *log = NULL;
	struct capture cap;
	struct stat st;
	int r;

	mkdir_parents(fx->journal, strlen(fx->root) + 1);
	assert_int_equal(mkfifo(fx->journal, 0600), 0);
	capture_begin(&cap, fx->root);
	r = caad_journal_restore(fx->journal, true);
	log = capture_end(&cap);
	assert_int_equal(r, -EBADFD);
	assert_non_null(strstr(log, "it is a FIFO, which caad never writes: remove it"));
	assert_int_equal(lstat(fx->journal, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_content(fx->root, IRQ101, "1\n");
}

/*
 * A queue's IRQ moved again, then its RPS refused: the IRQ's put-back of
 * caad's earlier value is journaled before it is written, as every write
 * is (the RPS's journal write before had dropped it), so that a crash
 * then finds the IRQ caad's and restores it.
 */
static void test_undo_journaled_first(void **state)
{
	struct fixture *fx = *state;
	struct caad_setting s1[] = { irq(101, 0, "0"), rps(0, "0") }, s2[] = { irq(101, 0, "0-1"), rps(0, "1") };
	struct caad_plan p1 = PLAN(s1), p2 = PLAN(s2);
	struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_free_ char *want = NULL;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &p1), 2);
	fault_set(RX0, -EINVAL, 0);
	fault.peek = IRQ101;
	fault.journal = fx->journal;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &p2), 0);
	assert_content(fx->root, IRQ101, "0\n");
	assert_int_equal(stats_of(a).undone, 1);
	/* the journal as the put-back found it */
	assert_true(asprintf(&want, "%s/%s\t1\twrote=0-1\twrote=0\n", fx->root, IRQ101) > 0);
	assert_non_null(fault.journal_then);
	assert_non_null(strstr(fault.journal_then, want));
	fault_set(NULL, 0, 0);
	caad_actuator_free(a); /* a crash */
	assert_int_equal(caad_journal_restore(fx->journal, true), 2);
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, RX0, "0\n");
}

/* An IRQ that caad moved before, refused with its new value: it keeps the
 * value caad wrote, and the journal keeps the first original. */
static void test_fault_keeps_first_original(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { irq(100, 0, "1") }, s2[] = { irq(100, 0, "0") };
	struct caad_plan plan = PLAN(s), plan2 = PLAN(s2);
	char lines[8][512];
	size_t n;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	fault_set(IRQ100, -ENOSPC, 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan2), 0);
	assert_content(fx->root, IRQ100, "1\n");
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 1);
	assert_true(journal_has(lines, n, fx, IRQ100, "0-1"));
	/* caad's own value is no one else's change: no back-off */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_n_backed_off(a), 0);
	fault_set(NULL, 0, 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(fx->journal));
}

/* ---- RFS ---------------------------------------------------------------- */

#define RFS0 "sys/class/net/vb/queues/rx-0/rps_flow_cnt"
#define RFS1 "sys/class/net/vb/queues/rx-1/rps_flow_cnt"
#define RFS_TABLE "proc/sys/net/core/rps_sock_flow_entries"

static struct caad_setting rfs(enum caad_setting_kind kind, unsigned queue, unsigned value)
{
	struct caad_setting s = { .kind = kind, .iface = 0, .queue = queue, .irq = -1, .value = value };

	snprintf(s.reason, sizeof(s.reason), "test: %s %u", caad_setting_kind_to_string(kind), value);
	return s;
}

static void write_rfs_originals(const char *root)
{
	write_file(root, RFS0, "0\n");
	write_file(root, RFS1, "0\n");
	write_file(root, RFS_TABLE, "0\n");
}

/* A queue's rps_flow_cnt and the global table: written as decimal numbers,
 * journaled "PATH<TAB>ORIGINAL" like the others, written once, restored. */
static void test_rfs_values(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "1"), rfs(CAAD_SETTING_RFS_FLOW_CNT, 0, 16384),
		                    rfs(CAAD_SETTING_RFS_TABLE, 0, 32768) };
	struct caad_plan plan = PLAN(s);
	char lines[8][512];
	size_t n;

	write_rfs_originals(fx->root);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	assert_content(fx->root, RX0, "2\n");
	assert_content(fx->root, RFS0, "16384\n");
	assert_content(fx->root, RFS_TABLE, "32768\n");
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 3);
	assert_true(journal_has(lines, n, fx, RFS0, "0"));
	assert_true(journal_has(lines, n, fx, RFS_TABLE, "0"));
	/* the global table's entry, of vb's ifindex, names no interface: not
	 * a name vb went by (caad_actuator_journaled_name()) */
	char was[IF_NAMESIZE];
	assert_int_equal(caad_actuator_journaled_name(a, fx->inv->ifaces[0].ifindex, "vb", was), 0);
	assert_int_equal(caad_actuator_journaled_name(a, fx->inv->ifaces[0].ifindex, "vc", was), 1);
	assert_string_equal(was, "vb");

	/* as the kernel shows them: nothing to do */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);

	/* RFS off again (a peer core now): 0 written, the original kept */
	s[1].value = 0;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_content(fx->root, RFS0, "0\n");
	n = journal_lines(fx, lines, ARRAY_SIZE(lines));
	assert_true(journal_has(lines, n, fx, RFS0, "0"));

	s[1].value = 16384;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RFS0, "0\n");
	assert_content(fx->root, RFS_TABLE, "0\n");
	assert_content(fx->root, RX0, "0\n");
	assert_false(exists(fx->journal));
}

/* After a crash the journal puts the exact original sizes back; someone
 * else's size is left alone (and not restored). */
static void test_rfs_restore(void **state)
{
	struct fixture *fx = *state;
	struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(1, "0"), rfs(CAAD_SETTING_RFS_FLOW_CNT, 1, 4096),
		                    rfs(CAAD_SETTING_RFS_TABLE, 1, 32768) };
	struct caad_plan plan = PLAN(s);

	write_rfs_originals(fx->root);
	write_file(fx->root, RFS_TABLE, "2048\n");
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	caad_actuator_free(a); /* "crash" */
	assert_int_equal(caad_journal_restore(fx->journal, true), 3);
	assert_content(fx->root, RFS1, "0\n");
	assert_content(fx->root, RFS_TABLE, "2048\n");
	assert_false(exists(fx->journal));

	a = actuator(fx->root, fx->journal, false);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 3);
	write_file(fx->root, RFS_TABLE, "65536\n");
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RFS_TABLE, "65536\n");
	assert_content(fx->root, RFS1, "0\n");
	caad_actuator_free(a);
}

/* The global table is no interface's, even one called RFS (its label
 * starts "RFS "): forgetting or renaming that interface keeps it. */
static void test_rfs_table_of_no_iface(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	char *names[] = { "RFS" };
	struct caad_setting s[] = { rfs(CAAD_SETTING_RFS_TABLE, 0, 32768) };
	struct caad_plan plan = PLAN(s);
	char was[IF_NAMESIZE];

	write_file(fx->root, "sys/class/net/RFS/ifindex", "4\n");
	write_file(fx->root, "sys/class/net/RFS/queues/rx-0/rps_cpus", "0\n");
	write_file(fx->root, RFS_TABLE, "0\n");
	assert_int_equal(caad_inventory_load(fx->root, names, 1, &inv), 0);
	assert_int_equal(caad_actuator_apply(a, inv, &plan), 1);
	assert_int_equal(caad_actuator_rename_iface(a, 4, "RFS", "vq"), 0);
	assert_int_equal(caad_actuator_journaled_name(a, 4, "vq", was), 0);
	assert_int_equal(caad_actuator_forget_iface(a, 4, "RFS", false), 0);
	assert_int_equal(caad_actuator_n_changed(a), 1);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_content(fx->root, RFS_TABLE, "0\n");
}

/* A queue's RFS table goes with the queue (all or nothing); the global
 * table goes alone: refused, the queues stay steered. */
static void test_rfs_refused(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { rps(0, "1"), rfs(CAAD_SETTING_RFS_FLOW_CNT, 0, 16384),
		                    rfs(CAAD_SETTING_RFS_TABLE, 0, 32768) };
	struct caad_plan plan = PLAN(s);
	struct caad_actuator_stats st;

	write_rfs_originals(fx->root);
	fault_set("rps_sock_flow_entries", -EACCES, 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_content(fx->root, RX0, "2\n");
	assert_content(fx->root, RFS0, "16384\n");
	assert_content(fx->root, RFS_TABLE, "0\n");
	caad_actuator_get_stats(a, &st);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.undone, 0);
	assert_int_equal(caad_actuator_restore(a), 0);

	fault_set("rps_flow_cnt", -EACCES, 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_content(fx->root, RX0, "0\n"); /* put back: its RFS table was refused */
	assert_content(fx->root, RFS0, "0\n");
	caad_actuator_get_stats(a, &st);
	assert_int_equal(st.undone, 1);
	fault_set(NULL, 0, 0);
}

/* ---- ntuple rules, through the ethtool seam ---------------------------- */

#define NIC_SIZE 8

/* A NIC's rx classifier: NIC_SIZE locations, what caad asked of it. */
static struct fake_nic {
	const char *name; /* its name now; its ifindex is vb's in the fixture's tree, 2 */
	bool ntuple_feature, loc_any, no_rxnfc;
	bool size_in_all_only; /* GRXCLSRLCNT says 0 for the table's size (ixgbe) */
	bool says_ext;         /* GRXCLSRULE says FLOW_EXT of every rule, its masks 0 (ixgbe) */
	int insert_error;
	bool used[NIC_SIZE];
	struct ethtool_rx_flow_spec rules[NIC_SIZE];
	struct ethtool_rx_flow_spec inserted[16]; /* as caad passed them */
	unsigned inserts, deletes, deleted[16];
} nic;

static uint32_t nic_count(void)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < NIC_SIZE; i++)
		n += nic.used[i];
	return n;
}

static int fake_ethtool(void *userdata, const char *ifname, void *cmd)
{
	struct ethtool_rxnfc *rx = cmd;
	uint32_t loc, k = 0;

	assert_ptr_equal(userdata, &nic);
	assert_string_equal(ifname, nic.name);
	switch (*(uint32_t *)cmd) {
	case ETHTOOL_GFLAGS:
		((struct ethtool_value *)cmd)->data = nic.ntuple_feature ? ETH_FLAG_NTUPLE : 0;
		return 0;
	case ETHTOOL_GRXCLSRLCNT:
		if (nic.no_rxnfc)
			return -EOPNOTSUPP;
		rx->rule_cnt = nic_count();
		rx->data = (nic.size_in_all_only ? 0 : NIC_SIZE) | (nic.loc_any ? RX_CLS_LOC_SPECIAL : 0);
		return 0;
	case ETHTOOL_GRXCLSRLALL:
		for (unsigned i = 0; i < NIC_SIZE; i++)
			if (nic.used[i]) {
				assert_true(k < rx->rule_cnt);
				rx->rule_locs[k++] = i;
			}
		rx->rule_cnt = k;
		rx->data = NIC_SIZE;
		return 0;
	case ETHTOOL_GRXCLSRULE:
		loc = rx->fs.location;
		if (loc >= NIC_SIZE || !nic.used[loc])
			return -ENOENT;
		rx->fs = nic.rules[loc];
		if (nic.says_ext)
			rx->fs.flow_type |= FLOW_EXT;
		return 0;
	case ETHTOOL_SRXCLSRLINS:
		assert_true(nic.inserts < ARRAY_SIZE(nic.inserted));
		nic.inserted[nic.inserts++] = rx->fs;
		if (nic.insert_error)
			return nic.insert_error;
		loc = rx->fs.location;
		if (loc == RX_CLS_LOC_ANY) {
			if (!nic.loc_any)
				return -EINVAL;
			for (loc = 0; loc < NIC_SIZE && nic.used[loc]; loc++)
				;
			if (loc == NIC_SIZE)
				return -ENOSPC;
		} else if (loc >= NIC_SIZE || nic.used[loc])
			return -EINVAL;
		nic.used[loc] = true;
		nic.rules[loc] = rx->fs;
		nic.rules[loc].location = loc;
		rx->fs.location = loc;
		return 0;
	case ETHTOOL_SRXCLSRLDEL:
		loc = rx->fs.location;
		if (loc >= NIC_SIZE || !nic.used[loc])
			return -ENOENT;
		nic.used[loc] = false;
		nic.deleted[nic.deletes++] = loc;
		return 0;
	default:
		fail_msg("unexpected ethtool command %#x", *(uint32_t *)cmd);
		return -EOPNOTSUPP;
	}
}

/* Field by field: the struct has padding. */
static void assert_spec_equal(const struct ethtool_rx_flow_spec *got, const struct ethtool_rx_flow_spec *want)
{
	assert_int_equal(got->flow_type, want->flow_type);
	assert_memory_equal(&got->h_u, &want->h_u, sizeof(want->h_u));
	assert_memory_equal(&got->h_ext, &want->h_ext, sizeof(want->h_ext));
	assert_memory_equal(&got->m_u, &want->m_u, sizeof(want->m_u));
	assert_memory_equal(&got->m_ext, &want->m_ext, sizeof(want->m_ext));
	assert_int_equal(got->ring_cookie, want->ring_cookie);
	assert_int_equal(got->location, want->location);
}

static int fake_ifname(void *userdata, int ifindex, char *name)
{
	assert_ptr_equal(userdata, &nic);
	if (ifindex != 2 || !nic.name)
		return -ENODEV;
	snprintf(name, IF_NAMESIZE, "%s", nic.name);
	return 0;
}

static const struct caad_ethtool_ops fake_ops = { .ioctl = fake_ethtool, .ifname = fake_ifname, .userdata = &nic };

static int setup_nic(void **state)
{
	nic = (struct fake_nic){ .name = "vb", .ntuple_feature = true, .loc_any = true };
	caad_ethtool_set_ops(&fake_ops);
	return setup(state);
}

static int teardown_nic(void **state)
{
	caad_ethtool_set_ops(NULL);
	assert_true(caad_ethtool_ops_are_kernel());
	return teardown(state);
}

static struct caad_setting ntuple_rule(uint64_t flow_id, unsigned queue, int family, const char *laddr,
                                       uint16_t lport, const char *raddr, uint16_t rport)
{
	struct caad_setting s = { .kind = CAAD_SETTING_NTUPLE_RULE, .iface = 0, .queue = queue, .irq = -1,
		                  .flow_id = flow_id };

	s.rule.family = family;
	assert_int_equal(inet_pton(family, laddr, s.rule.laddr), 1);
	assert_int_equal(inet_pton(family, raddr, s.rule.raddr), 1);
	s.rule.lport = lport;
	s.rule.rport = rport;
	snprintf(s.reason, sizeof(s.reason), "test: flow %" PRIu64 " to rx-%u", flow_id, queue);
	return s;
}

static char *journal_text(const struct fixture *fx)
{
	char *t = read_all(fx->journal);

	return t ? t : strdup("");
}

/* The exact rules caad builds: TCP_V4_FLOW / TCP_V6_FLOW, from the remote
 * end to the local one in network byte order, every field of the 4-tuple
 * masked in, nothing else, the queue as ring_cookie, at RX_CLS_LOC_ANY. */
static void test_ntuple_spec(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002),
		                    ntuple_rule(9, 0, AF_INET6, "fd00::2", 5201, "fd00::4", 40004) };
	struct caad_plan plan = PLAN(s);
	struct ethtool_rx_flow_spec want4, want6;
	_cleanup_free_ char *j = NULL;

	memset(&want4, 0, sizeof(want4));
	memset(&want6, 0, sizeof(want6));
	want4.flow_type = TCP_V4_FLOW;
	want4.ring_cookie = 1;
	want4.location = RX_CLS_LOC_ANY;
	want4.h_u.tcp_ip4_spec.ip4src = htonl(0x0a000003);
	want4.h_u.tcp_ip4_spec.ip4dst = htonl(0x0a000002);
	want4.h_u.tcp_ip4_spec.psrc = htons(40002);
	want4.h_u.tcp_ip4_spec.pdst = htons(5201);
	want4.m_u.tcp_ip4_spec.ip4src = want4.m_u.tcp_ip4_spec.ip4dst = 0xffffffff;
	want4.m_u.tcp_ip4_spec.psrc = want4.m_u.tcp_ip4_spec.pdst = 0xffff;
	want6.flow_type = TCP_V6_FLOW;
	want6.ring_cookie = 0;
	want6.location = RX_CLS_LOC_ANY;
	assert_int_equal(inet_pton(AF_INET6, "fd00::4", want6.h_u.tcp_ip6_spec.ip6src), 1);
	assert_int_equal(inet_pton(AF_INET6, "fd00::2", want6.h_u.tcp_ip6_spec.ip6dst), 1);
	want6.h_u.tcp_ip6_spec.psrc = htons(40004);
	want6.h_u.tcp_ip6_spec.pdst = htons(5201);
	memset(want6.m_u.tcp_ip6_spec.ip6src, 0xff, 16);
	memset(want6.m_u.tcp_ip6_spec.ip6dst, 0xff, 16);
	want6.m_u.tcp_ip6_spec.psrc = want6.m_u.tcp_ip6_spec.pdst = 0xffff;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(nic.inserts, 2);
	assert_spec_equal(&nic.inserted[0], &want4);
	assert_spec_equal(&nic.inserted[1], &want6);
	assert_true(nic.used[0] && nic.used[1]);
	assert_int_equal(caad_actuator_n_changed(a), 2);

	/* journaled: the location the driver chose, and the rule */
	j = journal_text(fx);
	assert_string_equal(j, "ntuple:vb:0\ttcp4 10.0.0.3:40002 > 10.0.0.2:5201 queue 1\t2\n"
	                       "ntuple:vb:1\ttcp6 [fd00::4]:40004 > [fd00::2]:5201 queue 0\t2\n");

	/* there already: nothing inserted again */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(nic.inserts, 2);
}

/* A flow that ends (its rule no longer planned) takes its rule with it;
 * restore deletes the rest, and only caad's. */
static void test_ntuple_delete(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002),
		                    ntuple_rule(9, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.4", 40004) };
	struct caad_plan plan = PLAN(s);
	struct caad_setting one[] = { s[1] }, moved[] = { s[1] };
	struct caad_plan plan1 = PLAN(one), plan_moved = PLAN(moved);
	struct caad_plan none = { .settings = NULL, .n_settings = 0 };
	_cleanup_free_ char *j = NULL;

	/* an operator's own rule at location 0 */
	nic.used[0] = true;
	caad_ntuple_spec(&s[0].rule, 3, 0, &nic.rules[0]);
	nic.rules[0].h_u.tcp_ip4_spec.pdst = htons(22);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_true(nic.used[1] && nic.used[2]);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan1), 1); /* flow 7 ended */
	assert_int_equal(nic.deletes, 1);
	assert_int_equal(nic.deleted[0], 1);
	j = journal_text(fx);
	assert_string_equal(j, "ntuple:vb:2\ttcp4 10.0.0.4:40004 > 10.0.0.2:5201 queue 1\t2\n");

	/* flow 9 planned to another queue: the old rule goes, a new one comes */
	moved[0].queue = 0;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan_moved), 2);
	assert_int_equal(nic.deletes, 2);
	assert_int_equal(nic.deleted[1], 2);
	assert_int_equal(nic.rules[1].ring_cookie, 0);

	assert_int_equal(caad_actuator_restore(a), 0);
	assert_int_equal(nic.deletes, 3);
	assert_true(nic.used[0]); /* the operator's */
	assert_int_equal(nic_count(), 1);
	assert_false(exists(fx->journal));
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 0);

	/* a NIC that says FLOW_EXT of every rule (ixgbe): caad's are still
	 * its own, kept while planned and deleted at the end */
	nic.says_ext = true;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(nic_count(), 3);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_int_equal(nic_count(), 1);
	assert_false(exists(fx->journal));
}

/*
 * A flow whose rule moves from queue to queue and back (a reader moved to
 * and fro): its rules' lines, deleted and inserted, are one object's, of
 * which CAAD_LOGLIMIT_BURST are logged; another flow's are its own.
 */
static void test_ntuple_lines_limited(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting q0[] = { ntuple_rule(9, 0, AF_INET, "10.0.0.2", 5201, "10.0.0.4", 40004) };
	struct caad_setting q1[] = { ntuple_rule(9, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.4", 40004) };
	struct caad_setting other[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002) };
	struct caad_plan p0 = PLAN(q0), p1 = PLAN(q1), pother = PLAN(other);
	_cleanup_free_ char *log = NULL;
	struct capture cap;
	int was = caad_log_get_max_level(), written = 0;

	caad_log_set_max_level(LOG_INFO);
	capture_begin(&cap, fx->root);
	written += caad_actuator_apply(a, fx->inv, &p0);
	for (unsigned i = 0; i < CAAD_LOGLIMIT_BURST; i++)
		written += caad_actuator_apply(a, fx->inv, i % 2 ? &p0 : &p1); /* one delete, one insert each */
	written += caad_actuator_apply(a, fx->inv, &pother); /* flow 9's goes, flow 7's comes */
	log = capture_end(&cap);
	caad_log_set_max_level(was);

	assert_int_equal(written, 1 + 2 * CAAD_LOGLIMIT_BURST + 2);
	assert_int_equal(nic.deletes, CAAD_LOGLIMIT_BURST + 1);
	assert_int_equal(count_substr(log, "10.0.0.4:40004 > 10.0.0.2:5201 queue 0): inserted") +
	                 count_substr(log, "10.0.0.4:40004 > 10.0.0.2:5201 queue 1): inserted") +
	                 count_substr(log, "10.0.0.4:40004 > 10.0.0.2:5201 queue 0): deleted") +
	                 count_substr(log, "10.0.0.4:40004 > 10.0.0.2:5201 queue 1): deleted"),
	                 CAAD_LOGLIMIT_BURST);
	assert_int_equal(count_substr(log, "its next changes within that time are logged at debug level only"), 1);
	assert_int_equal(count_substr(log, "10.0.0.3:40002 > 10.0.0.2:5201 queue 1): inserted (test: flow 7 to rx-1)"), 1);
	assert_int_equal(caad_actuator_restore(a), 0);
}

/* After a crash: the journal's rules are deleted if still caad's; a rule
 * someone else put at a journaled location stays; a rule journaled before
 * its insert returned ("any") is found by its tuple. */
static void test_ntuple_crash_restore(void **state)
{
	struct fixture *fx = *state;
	struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002),
		                    ntuple_rule(9, 1, AF_INET6, "fd00::2", 5201, "fd00::4", 40004) };
	struct caad_plan plan = PLAN(s);
	FILE *f;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	caad_actuator_free(a); /* "crash" */
	/* someone replaced caad's rule at location 1 */
	nic.rules[1].ring_cookie = 5;
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_false(nic.used[0]);
	assert_true(nic.used[1]);
	assert_false(exists(fx->journal));

	/* a crash between the insert and the journal's location */
	nic.used[1] = false;
	assert_int_equal(caad_ntuple_insert("vb", &s[0].rule, 1, &(uint32_t){ 0 }), 0);
	f = fopen(fx->journal, "we");
	assert_non_null(f);
	fputs("ntuple:vb:any\ttcp4 10.0.0.3:40002 > 10.0.0.2:5201 queue 1\n"
	      "ntuple:vb:any\ttcp4 10.0.0.9:1 > 10.0.0.2:5201 queue 1\n"
	      "ntuple:vb\tbroken\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_int_equal(nic_count(), 0);
}

/* After a crash, the journal's rules follow their NIC by its ifindex: one
 * renamed since is asked under its name now (the fake NIC asserts the
 * name); a name that another device has now, or a NIC gone, is left be. */
static void test_ntuple_crash_renamed(void **state)
{
	struct fixture *fx = *state;
	struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002) };
	struct caad_plan plan = PLAN(s);
	_cleanup_free_ char *j = NULL;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	caad_actuator_free(a); /* "crash" */
	j = journal_text(fx);
	assert_string_equal(j, "ntuple:vb:0\ttcp4 10.0.0.3:40002 > 10.0.0.2:5201 queue 1\t2\n");

	/* renamed vb -> vc while caad was down: deleted under vc */
	nic.name = "vc";
	assert_int_equal(caad_journal_restore(fx->journal, true), 1);
	assert_int_equal(nic_count(), 0);
	assert_int_equal(nic.deletes, 1);
	assert_false(exists(fx->journal));

	/* a journal of unknown boot follows no rename: not deleted */
	write_file(fx->root, "run/journal", j);
	assert_true(exists(fx->journal));
	nic.used[0] = true;
	assert_int_equal(caad_journal_restore(fx->journal, false), 0);
	assert_true(nic.used[0]);
	assert_false(exists(fx->journal));

	/* ifindex 2 gone (vb now another device's, or none's): left be */
	nic.name = NULL;
	write_file(fx->root, "run/journal", j);
	assert_int_equal(caad_journal_restore(fx->journal, true), 0);
	assert_true(nic.used[0]);
	assert_int_equal(nic.deletes, 1);
	assert_false(exists(fx->journal));
}

/* At exit, a rule whose NIC was renamed after caad last looked is
 * deleted under the name now; one whose NIC is gone is left be. */
static void test_ntuple_restore_renamed(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002) };
	struct caad_plan plan = PLAN(s);

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	nic.name = "vc";
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_int_equal(nic_count(), 0);
	assert_int_equal(nic.deletes, 1);
	assert_false(exists(fx->journal));

	nic.name = "vb";
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	nic.name = NULL;
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_int_equal(nic_count(), 1);
	assert_int_equal(nic.deletes, 1);
	assert_false(exists(fx->journal));
}

/* A driver that wants a location: the highest free one. */
static void test_ntuple_location(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002),
		                    ntuple_rule(9, 0, AF_INET, "10.0.0.2", 5201, "10.0.0.4", 40004) };
	struct caad_plan plan = PLAN(s);

	nic.loc_any = false;
	nic.used[NIC_SIZE - 1] = true; /* the operator's */
	nic.rules[NIC_SIZE - 1].flow_type = UDP_V4_FLOW;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(nic.inserted[0].location, NIC_SIZE - 2);
	assert_int_equal(nic.inserted[1].location, NIC_SIZE - 3);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_int_equal(nic_count(), 1);

	/* the table's size only in GRXCLSRLALL's answer (ixgbe): the same */
	nic.size_in_all_only = true;
	nic.inserts = 0;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 2);
	assert_int_equal(nic.inserted[0].location, NIC_SIZE - 2);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_int_equal(nic_count(), 1);

	/* an operator's rule for the same 4-tuple and queue with a VLAN match
	 * (FLOW_EXT), or into an RSS context, is not caad's to find (and
	 * delete after a crash); the plain one is, also said with an empty
	 * FLOW_EXT */
	uint32_t loc = 99;
	nic.used[0] = true;
	caad_ntuple_spec(&s[0].rule, 1, 0, &nic.rules[0]);
	nic.rules[0].flow_type |= FLOW_EXT;
	nic.rules[0].h_ext.vlan_tci = htons(5);
	nic.rules[0].m_ext.vlan_tci = htons(0xfff);
	assert_int_equal(caad_ntuple_find("vb", &s[0].rule, 1, &loc), -ENOENT);
	memset(&nic.rules[0].h_ext, 0, sizeof(nic.rules[0].h_ext));
	memset(&nic.rules[0].m_ext, 0, sizeof(nic.rules[0].m_ext));
	assert_int_equal(caad_ntuple_find("vb", &s[0].rule, 1, &loc), 0);
	assert_int_equal(loc, 0);
	nic.rules[0].flow_type = TCP_V4_FLOW | FLOW_RSS;
	assert_int_equal(caad_ntuple_find("vb", &s[0].rule, 1, &loc), -ENOENT);
	nic.rules[0].flow_type = TCP_V4_FLOW;
	assert_int_equal(caad_ntuple_find("vb", &s[0].rule, 1, &loc), 0);
	assert_int_equal(loc, 0);
	nic.used[0] = false;
}

/* Refused (a full table): said once, not tried again while planned, until
 * a go-ahead; nothing journaled. Deleted behind caad's back: left alone,
 * not inserted again, nothing to restore. */
static void test_ntuple_refused(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002) };
	struct caad_plan plan = PLAN(s);
	struct caad_actuator_stats st;

	uint64_t *refused = NULL;
	size_t n_refused;

	assert_int_equal(caad_actuator_ntuple_refused(a, &refused, &n_refused), 0);
	assert_int_equal(n_refused, 0);
	nic.insert_error = -ENOSPC;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(nic.inserts, 1);
	assert_false(exists(fx->journal));
	caad_actuator_get_stats(a, &st);
	assert_int_equal(st.errors, 1);
	/* the plan is told whose rule the NIC refused */
	assert_int_equal(caad_actuator_ntuple_refused(a, &refused, &n_refused), 0);
	assert_int_equal(n_refused, 1);
	assert_int_equal(refused[0], 7);
	free(refused);

	nic.insert_error = 0;
	caad_actuator_clear_backoff(a);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(nic.inserts, 2);
	assert_int_equal(caad_actuator_ntuple_refused(a, &refused, &n_refused), 0);
	assert_int_equal(n_refused, 0);

	nic.used[0] = false; /* an operator deleted it */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(nic.inserts, 2);
	assert_int_equal(caad_actuator_n_backed_off(a), 1);
	assert_int_equal(caad_actuator_n_changed(a), 0);
	assert_int_equal(caad_actuator_restore(a), 0);
	assert_int_equal(nic.deletes, 0);
}

/*
 * What caad keeps of a flow's rule (a refusal, a back-off) is by its tuple:
 * forgotten once no plan wanted it for a while (here at once), so that
 * flows that ended leave nothing; while wanted, it stays.
 */
static void test_ntuple_forgotten(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002) };
	struct caad_plan plan = PLAN(s), none = { 0 };

	caad_actuator_set_ntuple_forget_sec(a, 0);
	/* refused, and not tried again while wanted */
	nic.insert_error = -ENOSPC;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(nic.inserts, 1);
	/* its flow still heavy, planned without the rule (the planner is told
	 * of the refusal): the refusal stands, and tells the plan again (else
	 * the rule were planned and refused again at each forgetting); a new
	 * connection of that tuple planned the rule is told of it too */
	{
		struct caad_decision dec = { .flow_id = 7, .queue = 0, .steer_cpu = -1 };
		struct caad_plan heavy = { .decisions = &dec, .n_decisions = 1 };
		uint64_t *refused = NULL;
		size_t n_refused;

		assert_int_equal(caad_actuator_apply(a, fx->inv, &heavy), 0);
		assert_int_equal(caad_actuator_apply(a, fx->inv, &heavy), 0);
		assert_int_equal(caad_actuator_ntuple_refused(a, &refused, &n_refused), 0);
		assert_int_equal(n_refused, 1);
		free(refused);
		s[0].flow_id = 8;
		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
		assert_int_equal(nic.inserts, 1);
		assert_int_equal(caad_actuator_ntuple_refused(a, &refused, &n_refused), 0);
		assert_int_equal(n_refused, 1);
		assert_int_equal(refused[0], 8);
		free(refused);
		s[0].flow_id = 7;
	}
	/* its flow gone for a plan: the refusal with it; a flow of that
	 * tuple again is tried again */
	nic.insert_error = 0;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(nic.inserts, 2);

	/* deleted by someone else: backed off while wanted, then forgotten */
	nic.used[0] = false;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_n_backed_off(a), 1);
	assert_int_equal(nic.inserts, 2);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 0);
	assert_int_equal(caad_actuator_n_backed_off(a), 0);

	/* the default keeps them across a plan without the rule */
	caad_actuator_set_ntuple_forget_sec(a, CAAD_NTUPLE_FORGET_SEC);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	nic.used[0] = false;
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 0);
	assert_int_equal(caad_actuator_n_backed_off(a), 1);
	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
	assert_int_equal(nic.inserts, 3);
	/* ... and an interface that went forgets its rules' back-offs too */
	assert_true(caad_actuator_forget_iface(a, fx->inv->ifaces[0].ifindex, fx->inv->ifaces[0].name, false) >= 0);
	assert_int_equal(caad_actuator_n_backed_off(a), 0);
	assert_int_equal(caad_actuator_restore(a), 0);
}

/* A NIC moved away (another namespace) keeps caad's rule: not deleted
 * (nor counted as failing) while it is away, and deleted once it is back
 * and the plan no longer wants it. */
static void test_ntuple_nic_away(void **state)
{
	struct fixture *fx = *state;
	_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002) };
	struct caad_plan plan = PLAN(s), none = { 0 };
	struct caad_actuator_stats st;
	int ifindex = fx->inv->ifaces[0].ifindex;

	assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 1);
	assert_int_equal(caad_actuator_forget_iface(a, ifindex, "vb", true), 0);
	fx->inv->ifaces[0].ifindex = ifindex + 100; /* none of the inventory's is it */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 0);
	assert_int_equal(nic.deletes, 0);
	caad_actuator_get_stats(a, &st);
	assert_int_equal(st.errors, 0);
	assert_int_equal(caad_actuator_n_changed(a), 1);
	fx->inv->ifaces[0].ifindex = ifindex; /* back */
	assert_int_equal(caad_actuator_apply(a, fx->inv, &none), 1);
	assert_int_equal(nic.deletes, 1);
	assert_int_equal(caad_actuator_n_changed(a), 0);
}

/* Dry run: said, not inserted; under a sysroot with the kernel's ioctl:
 * never tried (the host's NICs are not the fake tree's). */
static void test_ntuple_dry_run_and_sysroot(void **state)
{
	struct fixture *fx = *state;
	struct caad_setting s[] = { ntuple_rule(7, 1, AF_INET, "10.0.0.2", 5201, "10.0.0.3", 40002) };
	struct caad_plan plan = PLAN(s);

	{
		_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, true);

		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
		assert_int_equal(nic.inserts, 0);
		assert_false(exists(fx->journal));
	}
	caad_ethtool_set_ops(NULL);
	{
		_cleanup_(caad_actuator_freep) struct caad_actuator *a = actuator(fx->root, fx->journal, false);

		assert_int_equal(caad_actuator_apply(a, fx->inv, &plan), 0);
		assert_false(exists(fx->journal));
	}
	caad_ethtool_set_ops(&fake_ops);
}

/* The inventory asks the NIC: feature on and rules answered, or not. */
static void test_ntuple_supported(void **state)
{
	struct fixture *fx = *state;
	char *names[] = { "vb" };
	const char *why;

	for (int c = 0; c < 3; c++) {
		_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;

		nic.ntuple_feature = c != 1;
		nic.no_rxnfc = c == 2;
		assert_int_equal(caad_inventory_load(fx->root, names, 1, &inv), 0);
		assert_int_equal(inv->ifaces[0].ntuple, c == 0);
		assert_int_equal(caad_ntuple_supported("vb", &why), c == 0);
		assert_true(c == 0 ? why == NULL : why != NULL);
	}
	/* and the global RFS table when it is there (the first network
	 * namespace's only) */
	{
		_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;

		assert_false(fx->inv->has_rfs_table);
		write_file(fx->root, RFS_TABLE, "4096\n");
		assert_int_equal(caad_inventory_load(fx->root, names, 1, &inv), 0);
		assert_true(inv->has_rfs_table);
		assert_int_equal(inv->rfs_table, 4096);
	}
}

/* A filter that refuses AF_INET and AF_INET6 sockets with EAFNOSUPPORT, as
 * the unit's RestrictAddressFamilies=AF_UNIX AF_NETLINK does. */
static int deny_inet_sockets(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT),
	};

	return seccomp_install(f, ARRAY_SIZE(f));
}

static int ntuple_without_inet(void)
{
	const char *why = NULL;
	char name[IF_NAMESIZE];

	if (deny_inet_sockets() < 0)
		return 4;
	if (socket(AF_INET, SOCK_DGRAM, 0) >= 0 || errno != EAFNOSUPPORT)
		return 3; /* the filter does not hold */
	/* where a journaled rule's NIC went: loopback is ifindex 1 in every
	 * network namespace; none has INT_MAX */
	if (caad_ntuple_ifname(1, name) != 0 || !streq(name, "lo") || caad_ntuple_ifname(INT_MAX, name) != -ENODEV)
		return 2;
	return caad_ntuple_supported("lo", &why) == 0 && why && strstr(why, "feature off") ? 0 : 1;
}

/*
 * The NIC's features read through the kernel under the shipped unit's
 * address families (no AF_INET): loopback's ntuple feature reads as off,
 * not as unreadable (which every NIC would be), and its name is found by
 * its ifindex. In a child, whose filter goes with it.
 */
static void test_ntuple_ioctl_without_inet(void **state)
{
	(void)state;
	assert_child_ok(ntuple_without_inet);
}

/* The journal's text of a rule, both ways. */
static void test_ntuple_text(void **state)
{
	static const char *const good[] = { "tcp4 10.0.0.3:40002 > 10.0.0.2:5201 queue 1",
		                             "tcp6 [fd00::4]:1 > [::1]:65535 queue 4294967295" };
	static const char *const bad[] = { "", "tcp4", "udp4 10.0.0.3:1 > 10.0.0.2:2 queue 1",
		                           "tcp4 10.0.0.3:1 > 10.0.0.2:2 queue 1 x", "tcp4 10.0.0.3:70000 > 10.0.0.2:2 queue 1",
		                           "tcp6 fd00::4:1 > [::1]:2 queue 1", "tcp4 [10.0.0.3]:1 > 10.0.0.2:2 queue 1",
		                           "tcp4 10.0.0.3:1 > 10.0.0.2:2 queue -1" };
	struct caad_ntuple_flow f;
	unsigned q;
	char buf[160];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		assert_int_equal(caad_ntuple_parse(good[i], &f, &q), 0);
		assert_true(caad_ntuple_format(&f, q, buf, sizeof(buf)) > 0);
		assert_string_equal(buf, good[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (caad_ntuple_parse(bad[i], &f, &q) == 0)
			fail_msg("\"%s\" parsed", bad[i]);
	assert_int_equal(caad_ntuple_format(&f, 1, buf, 8), -ENOBUFS);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TN(fn) cmocka_unit_test_setup_teardown(fn, setup_nic, teardown_nic)
	const struct CMUnitTest tests[] = {
		T(test_inventory_of_fixture),
		T(test_apply_writes_values),
		T(test_apply_rps_clear_and_full),
		T(test_apply_rps_width),
		T(test_apply_only_differences),
		T(test_journal_contents),
		T(test_journal_unwritable),
		T(test_journal_unwritable_later),
		T(test_restore),
		T(test_restore_leaves_foreign_change),
		T(test_give_back),
		T(test_change_lines_limited),
		T(test_give_back_dry_run),
		T(test_backoff),
		T(test_go_ahead_already_equal),
		T(test_setting_state),
		T(test_backoff_journal_unwritable),
		T(test_gone_follow_fails),
		T(test_backoff_found_mid_queue),
		T(test_kernel_enomem),
		T(test_backoff_expires),
		T(test_irq_moved_by_hotplug),
		T(test_orphan_irq_moved_by_hotplug),
		T(test_irq_moved_by_hotplug_and_back),
		T(test_rps_written_offline),
		T(test_restore_object_gone),
		T(test_dry_run),
		T(test_set_dry_run),
		T(test_apply_failure_skips_one),
		T(test_apply_write_refused),
		T(test_restore_failure_keeps_journal),
		T(test_restore_failure_keeps_entry),
		T(test_journal_restore_keeps_failed_lines),
		T(test_journal_restore_managed_irq),
		T(test_restore_object_vanishes),
		T(test_journal_irq_identity),
		T(test_journal_restore_others_since),
		T(test_undo_journaled_first),
		T(test_journal_restore_fifo),
		T(test_journals_drop_other_boot),
		T(test_kthread_pid_reused),
		T(test_kthread_gone),
		T(test_forget_iface_may_return),
		T(test_rename_irq_actions),
		T(test_rename_iface),
		T(test_rename_iface_control_char),
		T(test_rename_iface_control_char_refused),
		T(test_rename_swap),
		T(test_restore_follows_rename),
		T(test_apply_name_swapped),
		T(test_restore_follows_swap),
		T(test_restore_ifindex_unread),
		T(test_journal_restore_after_crash),
		T(test_journal_restore_other_device),
		T(test_journal_restore_malformed),
		T(test_shorter_value_replaces_file),
		T(test_nothing_outside_root),
		T(test_actuator_options),
		T(test_fault_managed_irq),
		T(test_fault_eperm_on_rps),
		T(test_fault_offline_cpu),
		T(test_fault_busy),
		T(test_fault_no_vectors),
		T(test_fault_vanish),
		T(test_fault_read_only),
		T(test_fault_keeps_first_original),
		T(test_rfs_values),
		T(test_rfs_restore),
		T(test_rfs_refused),
		T(test_rfs_table_of_no_iface),
		TN(test_ntuple_spec),
		TN(test_ntuple_delete),
		TN(test_ntuple_lines_limited),
		TN(test_ntuple_crash_restore),
		TN(test_ntuple_crash_renamed),
		TN(test_ntuple_restore_renamed),
		TN(test_ntuple_location),
		TN(test_ntuple_refused),
		TN(test_ntuple_forgotten),
		TN(test_ntuple_nic_away),
		TN(test_ntuple_dry_run_and_sysroot),
		TN(test_ntuple_supported),
		cmocka_unit_test(test_ntuple_text),
		cmocka_unit_test(test_ntuple_ioctl_without_inet),
	};
#undef T
#undef TN

	return cmocka_run_group_tests(tests, NULL, NULL);
}
