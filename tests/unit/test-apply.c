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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "caad/apply.h"
#include "caad/cpumask.h"
#include "caad/inventory.h"
#include "caad/macro.h"
#include "caad/plan.h"
#include "caad/sysfs.h"

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

static void mkdir_parents(char *path, size_t from)
{
	for (char *p = path + from; (p = strchr(p, '/')); p++) {
		*p = 0;
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
}

static void write_file(const char *root, const char *rel, const char *data)
{
	_cleanup_free_ char *path = path_in(root, rel);
	FILE *f;

	mkdir_parents(path, strlen(root) + 1);
	f = fopen(path, "we"); /* truncates, as someone else's write would */
	assert_non_null(f);
	assert_true(fputs(data, f) >= 0);
	assert_int_equal(fclose(f), 0);
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

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
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

	caad_inventory_free(fx->inv);
	r = nftw(fx->top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
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

/* Whether the journal has the line for ROOT/rel with the original value. */
static bool journal_has(char lines[][512], size_t n, const struct fixture *fx, const char *rel, const char *original)
{
	char want[512];

	snprintf(want, sizeof(want), "%s/%s\t%s", fx->root, rel, original);
	for (size_t i = 0; i < n; i++)
		if (streq(lines[i], want))
			return true;
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

/* The journal: "PATH<TAB>ORIGINAL" per object, the first original kept. */
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

/* With BackOffSec= the back-off ends by itself. */
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
	if (r < 0) {
		print_message("SKIP: cannot make %s immutable (needs CAP_LINUX_IMMUTABLE and a file system "
		              "with FS_IOC_SETFLAGS): %s\n", irq101, strerror(errno));
		skip();
	}

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
	assert_int_equal(caad_journal_restore(fx->journal), (int)n);
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, RX0, "0\n");
	assert_false(exists(fx->journal));
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

	assert_int_equal(caad_journal_restore(fx->journal), 3);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, RX1, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_content(fx->root, IRQ100, "0-1\n");
	assert_false(exists(fx->journal));

	/* No journal: nothing to do. */
	assert_int_equal(caad_journal_restore(fx->journal), 0);
	caad_actuator_free(NULL);
}

/* Malformed lines are skipped; a vanished object is not restored or created. */
static void test_journal_restore_malformed(void **state)
{
	struct fixture *fx = *state;
	_cleanup_free_ char *text = NULL, *gone = path_in(fx->root, "sys/class/net/gone/queues/rx-0/rps_cpus");

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

	assert_int_equal(caad_journal_restore(fx->journal), 2);
	assert_content(fx->root, RX0, "0\n");
	assert_content(fx->root, IRQ101, "1\n");
	assert_false(exists(gone));
	assert_false(exists(fx->journal));

	/* Only garbage: nothing restored, the journal is consumed. */
	write_file(fx->root, "run/journal", "junk\njunk again\n");
	assert_int_equal(caad_journal_restore(fx->journal), 0);
	assert_false(exists(fx->journal));

	/* Empty journal. */
	write_file(fx->root, "run/journal", "");
	assert_int_equal(caad_journal_restore(fx->journal), 0);
	assert_false(exists(fx->journal));

	/* A line that cannot be restored: an error, the journal is kept. */
	{
		_cleanup_free_ char *dir_line = NULL, *dir = path_in(fx->root, "proc/irq/103/smp_affinity_list");

		mkdir_parents(dir, strlen(fx->root) + 1);
		assert_int_equal(mkdir(dir, 0755), 0);
		write_file(fx->root, RX1, "1\n");
		assert_true(asprintf(&dir_line, "%s\t0\n%s/%s\t0\n", dir, fx->root, RX1) > 0);
		write_file(fx->root, "run/journal", dir_line);
		assert_int_equal(caad_journal_restore(fx->journal), -EIO);
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
	_cleanup_free_ char *host_before = NULL, *host_after = NULL, *root_slash = NULL;
	struct caad_setting s[] = { rps(0, "0"), rps(1, "1"), irq(100, 0, "0-1"), irq(101, 1, "0") };
	struct caad_plan plan = PLAN(s);

	/* The host's counterparts must not be touched either: read them only. */
	assert_false(exists("/sys/class/net/vb"));
	host_before = read_all("/proc/irq/101/smp_affinity_list");

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
		assert_int_equal(caad_journal_restore(fx->journal), 3);
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

	host_after = read_all("/proc/irq/101/smp_affinity_list");
	assert_int_equal(host_before == NULL, host_after == NULL);
	if (host_before)
		assert_string_equal(host_after, host_before);
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

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_inventory_of_fixture),
		T(test_apply_writes_values),
		T(test_apply_rps_clear_and_full),
		T(test_apply_rps_width),
		T(test_apply_only_differences),
		T(test_journal_contents),
		T(test_journal_unwritable),
		T(test_restore),
		T(test_restore_leaves_foreign_change),
		T(test_backoff),
		T(test_backoff_expires),
		T(test_restore_object_gone),
		T(test_dry_run),
		T(test_set_dry_run),
		T(test_apply_failure_skips_one),
		T(test_apply_write_refused),
		T(test_restore_failure_keeps_journal),
		T(test_journal_restore_after_crash),
		T(test_journal_restore_malformed),
		T(test_shorter_value_replaces_file),
		T(test_nothing_outside_root),
		T(test_actuator_options),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
