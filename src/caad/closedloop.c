/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The closed loop (Placement=measure). Each scan, before planning: the
 * running trial is fed the flow's counters (bytes, CPU time, out-of-order
 * packets, retransmits, steal) and says where the flow goes for its current
 * turn; a finished trial leaves a verdict; flows of an application with a
 * verdict get its placement; and, when no trial runs, the heaviest steady
 * flow without a verdict starts one. The decisions themselves are pure
 * (src/lib/trial.c); this file reads /proc and keeps the books.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "caad/apply.h"
#include "caad/inventory.h"
#include "caad/json.h"
#include "caad/log.h"
#include "caad/observe.h"
#include "caad/sysfs.h"
#include "closedloop.h"
#include "daemon.h"
#include "dbus.h"

#define NSEC_PER_MSEC UINT64_C(1000000)
#define NSEC_PER_SEC UINT64_C(1000000000)
#define COOLDOWN_NS (60 * NSEC_PER_SEC)
#define TURN_RULES (-2) /* a turn without an override: the rules place the flow */
#define TURN_NONE (-3)  /* a turn with no CPU to go to */

int closed_loop_init(struct closed_loop *cl, const char *state_dir)
{
	struct utsname u;

	*cl = (struct closed_loop){};
	if (asprintf(&cl->verdicts_path, "%s/verdicts.json", state_dir) < 0) {
		cl->verdicts_path = NULL;
		return -ENOMEM;
	}
	if (uname(&u) == 0)
		snprintf(cl->kernel, sizeof(cl->kernel), "%s", u.release);
	return 0;
}

static void record_free(struct trial_record *r)
{
	caad_trial_done(&r->trial);
}

void closed_loop_done(struct closed_loop *cl)
{
	if (cl->current) {
		record_free(cl->current);
		free(cl->current);
	}
	for (size_t i = 0; i < cl->n_history; i++)
		record_free(&cl->history[i]);
	caad_verdicts_done(&cl->verdicts);
	free(cl->verdicts_path);
	free(cl->overrides);
	free(cl->whys);
	caad_flow_set_done(&cl->told);
}

static void save_verdicts(struct daemon *d)
{
	struct closed_loop *cl = &d->loop;
	_cleanup_free_ char *dir = strdup(cl->verdicts_path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	int r;

	if (slash && slash != dir) {
		*slash = '\0';
		(void)caad_mkdir_p(dir, 0755);
	}
	/* (a store that grows by applications would else keep expired ones
	 * that nothing looks for again, and say them in every trials.json) */
	(void)caad_verdicts_expire(&cl->verdicts, (uint64_t)time(NULL), d->config.verdict_max_age_sec);
	if (cl->verdicts_kept_off) {
		log_notice("%s could not be read: the verdict is not stored there, it lasts until caad stops",
		           cl->verdicts_path);
		return;
	}
	r = caad_verdicts_save(&cl->verdicts, cl->verdicts_path);
	cl->verdicts_unsaved = r < 0;
	if (r < 0)
		log_warning_errno(r, "Cannot write %s, the verdict is kept in memory until a later verdict or a reload "
		                  "writes it: %m", cl->verdicts_path);
}

/*
 * Verdicts are read when the topology is known, and again when it changes
 * (and at a reload that changes Placement= or VerdictMaxAgeSec=). Where the
 * store could not be read before, or not written, this run's verdicts it
 * does not hold lived in memory only: they stay there if it still cannot
 * be read, and are added to what it holds (over an older one of the same
 * flow) and written where it now can, so long as the topology is the one
 * they were decided on. Those it holds are read from it again.
 */
static void load_verdicts(struct daemon *d)
{
	struct closed_loop *cl = &d->loop;
	_cleanup_free_ char *why = NULL;
	struct caad_verdicts mine = cl->verdicts;
	bool was_kept_off = cl->verdicts_kept_off;
	size_t dropped = 0;
	size_t added = 0;
	bool had_mine;
	int r;

	cl->verdicts = (struct caad_verdicts){};
	cl->verdicts_unsaved = false; /* until they fail to be written again */
	(void)caad_verdicts_keep_unsaved(&mine);
	caad_topology_fingerprint(d->topo, cl->topology, sizeof(cl->topology));
	if (mine.n && !streq(mine.topology, cl->topology)) {
		log_info("%zu verdict%s of this run dropped: the topology changed", mine.n, mine.n == 1 ? "" : "s");
		caad_verdicts_done(&mine);
	}
	r = caad_verdicts_load(cl->verdicts_path, cl->kernel, cl->topology, (uint64_t)time(NULL),
	                       d->config.verdict_max_age_sec, &cl->verdicts, &dropped, &why);
	cl->verdicts_loaded = true;
	cl->verdicts_kept_off = false;
	had_mine = mine.n > 0;
	if (r >= 0 && mine.n) {
		for (size_t i = 0; i < mine.n; i++)
			if (caad_verdicts_put(&cl->verdicts, &mine.v[i]) >= 0)
				added++;
		caad_verdicts_done(&mine);
	} else if (r < 0 && mine.n) {
		/* still unread: this run's stay, in memory (and are written
		 * where the unusable file was put aside, below) */
		caad_verdicts_done(&cl->verdicts);
		cl->verdicts = mine;
		mine = (struct caad_verdicts){};
	}
	if (r == -EBADMSG) {
		/* put aside: the next verdict would write the store anew, over
		 * every good entry of a file that one bad entry made unusable */
		_cleanup_free_ char *aside = NULL;
		bool kept = false;

		for (unsigned i = 0; i < 100 && !kept; i++) {
			free(aside);
			aside = NULL;
			if ((i ? asprintf(&aside, "%s.bad.%u", cl->verdicts_path, i)
			       : asprintf(&aside, "%s.bad", cl->verdicts_path)) < 0)
				break;
			/* link() where the file system has no RENAME_NOREPLACE */
			kept = renameat2(AT_FDCWD, cl->verdicts_path, AT_FDCWD, aside, RENAME_NOREPLACE) == 0 ||
			       (errno == EINVAL && link(cl->verdicts_path, aside) == 0 && unlink(cl->verdicts_path) == 0);
			if (!kept && errno != EEXIST)
				break;
		}
		cl->verdicts_kept_off = !kept;
		log_warning("Ignoring the stored verdicts, which cannot be used: %s%s%s", why ?: cl->verdicts_path,
		            kept ? "; the file is kept as " : "; the file is left as it is, and no verdict is stored "
		                                             "until it can be read (a reload reads it again)",
		            kept ? aside : "");
	} else if (r < 0) {
		/* a read error may pass: the file stays, and is not written over
		 * with this run's verdicts alone */
		cl->verdicts_kept_off = true;
		log_warning_errno(r, "Cannot read %s, %s; none is stored until it can be read (a reload reads it again): %m",
		                  cl->verdicts_path,
		                  had_mine ? "keeping this run's verdicts in memory" : "starting without verdicts");
	}
	else if (dropped)
		log_info("%zu verdict%s in %s expired: %s", dropped, dropped == 1 ? "" : "s", cl->verdicts_path,
		         why ?: "");
	else if (cl->verdicts.n)
		log_info("%zu verdict%s of earlier trials loaded from %s", cl->verdicts.n,
		         cl->verdicts.n == 1 ? "" : "s", cl->verdicts_path);
	size_t ahead = caad_verdicts_ahead(&cl->verdicts, (uint64_t)time(NULL), d->config.verdict_max_age_sec);
	if (ahead)
		log_notice("%zu verdict%s in %s dated more than 60 s ahead of the clock (is it set?): kept, not used "
		           "until the clock reaches them",
		           ahead, ahead == 1 ? "" : "s", cl->verdicts_path);
	if (had_mine && !cl->verdicts_kept_off)
		save_verdicts(d);
	/* said once written (or said not to be) */
	if (added && was_kept_off)
		log_info("%s can be read again: %zu verdict%s of this run added to it", cl->verdicts_path, added,
		         added == 1 ? "" : "s");
	else if (added)
		log_info("%zu verdict%s of this run that could not be written added to %s", added, added == 1 ? "" : "s",
		         cl->verdicts_path);
	caad_verdicts_done(&mine); /* none left (its array, where find() dropped every one) */
}

/* ---- reading the counters ---------------------------------------------- */

/* First field of /proc/PID/task/TID/schedstat: time on CPU, ns (for
 * kernel threads). */
static uint64_t thread_cpu_ns(const char *sysroot, uint32_t pid, uint32_t tid)
{
	_cleanup_free_ char *path = NULL;
	char line[128];
	unsigned long long ns;

	if (!pid || !tid || caad_path(&path, sysroot, "/proc/%" PRIu32 "/task/%" PRIu32 "/schedstat", pid, tid) < 0 ||
	    caad_read_line(path, line, sizeof(line)) < 0 || sscanf(line, "%llu", &ns) != 1)
		return 0;
	return ns;
}

/* TCP RetransSegs of /proc/net/snmp (caad's network namespace); false
 * where it cannot be read. */
static bool tcp_retrans(const char *sysroot, uint64_t *ret)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	char *hdr, *val, *save1 = NULL, *save2 = NULL, *end;

	if (caad_path(&path, sysroot, "/proc/net/snmp") < 0 || caad_read_file(path, &text) < 0)
		return false;
	hdr = strstr(text, "\nTcp: ");
	if (!hdr)
		return false;
	hdr++;
	val = strstr(hdr + 1, "\nTcp: ");
	if (!val)
		return false;
	*val++ = '\0';
	*strchrnul(val, '\n') = '\0';
	for (char *h = strtok_r(hdr, " \n", &save1), *v = strtok_r(val, " ", &save2); h && v;
	     h = strtok_r(NULL, " \n", &save1), v = strtok_r(NULL, " ", &save2)) {
		if (streq(h, "RetransSegs")) {
			errno = 0;
			*ret = strtoull(v, &end, 10);
			return errno == 0 && end != v && *end == '\0';
		}
	}
	return false;
}

/* Steal and all CPU time from the "cpu" line of /proc/stat, ns; false
 * where it cannot be read. */
static bool cpu_times(const char *sysroot, uint64_t *steal_ns, uint64_t *total_ns)
{
	_cleanup_free_ char *path = NULL;
	unsigned long long v[8] = {};
	char line[512];
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t total = 0;

	*steal_ns = *total_ns = 0;
	if (hz <= 0 || caad_path(&path, sysroot, "/proc/stat") < 0 || caad_read_line(path, line, sizeof(line)) < 0 ||
	    sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
	           &v[6], &v[7]) != 8)
		return false;
	for (size_t i = 0; i < 8; i++)
		total += v[i];
	*steal_ns = v[7] * (NSEC_PER_SEC / (uint64_t)hz);
	*total_ns = total * (NSEC_PER_SEC / (uint64_t)hz);
	return true;
}

/* The trial's counters now; one not readable is marked so (its turn's
 * delta is then unknown, not the 0 or the whole count it would read). */
static void read_counters(struct daemon *d, struct trial_record *rec, const struct caad_flow *f,
                          struct caad_trial_counters *c)
{
	const char *root = d->args->sysroot;
	uint64_t net_rx;

	*c = (struct caad_trial_counters){
		.bytes = f->bytes,
		.ooo = f->ooo_packets,
	};
	if (!tcp_retrans(root, &c->retrans))
		c->unknown |= CAAD_TRIAL_UNKNOWN_RETRANS;
	/* the consumer's time from BPF (a task iterator: no other process's
	 * /proc is read, which a drop-in's User= would hide); a NAPI
	 * kthread's from its /proc */
	if (caad_observer_net_rx_ns(d->observer, &net_rx) < 0)
		c->unknown |= CAAD_TRIAL_UNKNOWN_CPU;
	c->cpu_ns = caad_observer_thread_ns(d->observer);
	if (caad_observer_thread_ns_failed(d->observer))
		c->unknown |= CAAD_TRIAL_UNKNOWN_CPU;
	c->cpu_ns += net_rx;
	caad_trial_kthread_count(&rec->kthread, f->proc_kthread, thread_cpu_ns(root, f->proc_kthread, f->proc_kthread),
	                         c);
	if (!cpu_times(root, &c->steal_ns, &c->total_ns))
		c->unknown |= CAAD_TRIAL_UNKNOWN_STEAL;
}

/* ---- what a flow is ---------------------------------------------------- */

static const struct caad_flow *find_flow(const struct caad_flow *flows, size_t n, uint64_t id)
{
	size_t i = LOWER_BOUND_BY(flows, n, id, id);

	return i < n && flows[i].id == id ? &flows[i] : NULL;
}

/* The driver behind an interface: SYSROOT/sys/class/net/IF/device/driver's
 * name, "" for a virtual device (or one whose driver is unbound). < 0: it
 * cannot be read now, which says nothing of the driver (a verdict looked
 * up with "" would be dropped as another driver's, for good). */
static int iface_driver(const char *sysroot, const char *iface, char *buf, size_t size)
{
	_cleanup_free_ char *path = NULL;
	char target[PATH_MAX];
	ssize_t n;

	buf[0] = '\0';
	if (caad_path(&path, sysroot, "/sys/class/net/%s/device/driver", iface) < 0)
		return -ENOMEM;
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return errno == ENOENT ? 0 : -errno;
	target[n] = '\0';
	const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
	size_t len = strnlen(base, size - 1);
	memcpy(buf, base, len);
	buf[len] = '\0';
	return 0;
}

static const struct caad_iface *flow_iface(const struct daemon *d, const struct caad_flow *f)
{
	return d->inv ? caad_inventory_find_flow(d->inv, f->ifindex, f->napi_id) : NULL;
}

/* Cpus_allowed_list of SYSROOT/proc/PID/task/TID/status: a fake tree's. */
static int status_affinity(const char *sysroot, const struct caad_flow *f, struct caad_cpumask *ret)
{
	_cleanup_free_ char *path = NULL;
	int r;

	r = caad_path(&path, sysroot, "/proc/%u/task/%u/status", f->pid, f->tid);
	if (r < 0)
		return r;
	return caad_cpumask_of_status(path, ret);
}

/*
 * Whether the thread that reads f may be moved by the scheduler
 * (caad_trial_reader_unpinned()). Readers pinned to one CPU and
 * readers free to move get verdicts of their own: where processing goes
 * best differs when the reader follows the wakeups. The affinity comes
 * from sched_getaffinity(), which the service's ProtectProc=invisible
 * does not hide (another user's /proc/PID it does), or under --sysroot
 * from that tree's /proc/PID/task/TID/status. One whose affinity cannot be
 * read (it exited just now) counts as unpinned, as most readers are.
 */
static bool consumer_unpinned(const struct daemon *d, const struct caad_flow *f)
{
	struct caad_cpumask allowed;
	int r;

	if (!caad_sysroot_is_host(d->args->sysroot))
		r = status_affinity(d->args->sysroot, f, &allowed);
	else
		r = caad_cpumask_of_task((int)f->tid, &allowed);
	if (r < 0) {
		log_debug("The CPU affinity of thread %u (%s) is not readable (%s): counted as not pinned", f->tid,
		          f->comm, strerror(-r));
		return true;
	}
	return caad_trial_reader_unpinned(d->topo, &allowed);
}

static bool in_cooldown(struct closed_loop *cl, const char *iface, const char *comm, uint64_t now_ns)
{
	for (size_t i = 0; i < ARRAY_SIZE(cl->cooldown); i++)
		if (cl->cooldown[i].until_ns > now_ns && streq(cl->cooldown[i].iface, iface) &&
		    streq(cl->cooldown[i].comm, comm))
			return true;
	return false;
}

static void add_cooldown(struct closed_loop *cl, const char *iface, const char *comm, uint64_t until_ns)
{
	size_t oldest = 0;

	for (size_t i = 1; i < ARRAY_SIZE(cl->cooldown); i++)
		if (cl->cooldown[i].until_ns < cl->cooldown[oldest].until_ns)
			oldest = i;
	snprintf(cl->cooldown[oldest].iface, sizeof(cl->cooldown[oldest].iface), "%s", iface);
	snprintf(cl->cooldown[oldest].comm, sizeof(cl->cooldown[oldest].comm), "%s", comm);
	cl->cooldown[oldest].until_ns = until_ns;
}

/* ---- overrides --------------------------------------------------------- */

static int add_override(struct closed_loop *cl, uint64_t flow_id, int cpu, const char *fmt, ...) _printf_(4, 5);
static int add_override(struct closed_loop *cl, uint64_t flow_id, int cpu, const char *fmt, ...)
{
	va_list ap;

	if (cl->n_overrides == cl->cap) {
		size_t cap = cl->cap ? cl->cap * 2 : 8;
		struct caad_override *o = realloc(cl->overrides, cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		cl->overrides = o;
		char(*w)[160] = realloc(cl->whys, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		cl->whys = w;
		cl->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(cl->whys[cl->n_overrides], sizeof(cl->whys[0]), fmt, ap);
	va_end(ap);
	cl->overrides[cl->n_overrides] = (struct caad_override){ .flow_id = flow_id, .cpu = cpu };
	cl->n_overrides++;
	return 0;
}

static int cmp_override(const void *a, const void *b)
{
	const struct caad_override *x = a, *y = b;

	return x->flow_id < y->flow_id ? -1 : x->flow_id > y->flow_id;
}

/* ---- trials ------------------------------------------------------------ */

/* "CPU 3 (same-core)", or "the host's own steering (host-steering)". */
static const char *cand_name(const struct caad_trial_cand *c, char *buf, size_t size)
{
	if (c->relation == CAAD_RELATION_HOST_STEERING)
		snprintf(buf, size, "the host's own steering (%s)", caad_relation_to_string(c->relation));
	else
		snprintf(buf, size, "CPU %d (%s)", c->cpu, caad_relation_to_string(c->relation));
	return buf;
}

static void finish(struct daemon *d, uint64_t now_ns)
{
	struct closed_loop *cl = &d->loop;
	struct trial_record *rec = cl->current;
	struct caad_trial *t = &rec->trial;

	if (t->state == CAAD_TRIAL_DONE) {
		const struct caad_trial_cand *w = &t->cands[t->result.winner];
		unsigned shown = t->result.winner;
		/* the prior stood: show how close the best alternative came */
		for (unsigned c = 1; !t->result.winner && c < t->n_cands; c++)
			if (!shown || t->result.scores[c].goodput_ratio > t->result.scores[shown].goodput_ratio)
				shown = c;
		const struct caad_trial_score *s = &t->result.scores[shown];
		struct caad_verdict v = {
			.relation = w->relation,
			.decided_sec = (uint64_t)time(NULL),
			.trial = t->id,
			.goodput_ratio = s->goodput_ratio,
			.efficiency_ratio = s->efficiency_ratio,
			.pairs = s->pairs,
			.wins = s->goodput_wins,
			.behind = (int)s->goodput_behind,
			.alternative = t->cands[shown].relation,
			.kept_prior = !t->result.winner,
		};
		snprintf(v.iface, sizeof(v.iface), "%s", rec->iface);
		snprintf(v.driver, sizeof(v.driver), "%s", rec->driver);
		snprintf(v.comm, sizeof(v.comm), "%s", rec->comm);
		v.unpinned = rec->unpinned;
		if (t->result.winner)
			cl->switched++;
		else
			cl->kept_prior++;
		log_info("Trial %u (%s, %s on %s, consumer %s) done: %s -> %s", t->id, rec->tuple, rec->comm,
		         rec->iface, rec->unpinned ? "not pinned" : "pinned", t->result.reason,
		         caad_relation_to_string(w->relation));
		if (rec->consumer_moves)
			log_info("Trial %u: its consumer changed CPUs %u times; each turn followed it", t->id,
			         rec->consumer_moves);
		for (unsigned c = 0; c < t->n_cands; c++) {
			const struct caad_trial_score *sc = &t->result.scores[c];
			char name[64];
			log_info("Trial %u candidate %u, %s: median %.2f Gbit/s, %.2f GB per CPU-second, "
			         "%" PRIu64 " out-of-order packets, %" PRIu64 " retransmits, steal %.1f%%",
			         t->id, c, cand_name(&t->cands[c], name, sizeof(name)), sc->goodput_bps / 1e9,
			         sc->efficiency / 1e9, sc->ooo, sc->retrans, sc->steal_pct);
		}
		if (caad_verdicts_put(&cl->verdicts, &v) >= 0)
			save_verdicts(d);
		caad_bus_trial_finished(d->bus, t->id, caad_relation_to_string(w->relation));
	} else {
		cl->aborted++;
		add_cooldown(cl, rec->iface, rec->comm, now_ns + COOLDOWN_NS);
		log_info("Trial %u (%s, %s on %s) aborted: %s; the prior stands", t->id, rec->tuple, rec->comm,
		         rec->iface, t->abort_reason);
		caad_bus_trial_finished(d->bus, t->id, "aborted");
	}

	/* keep it for the API: the oldest goes */
	if (cl->n_history == CLOSED_LOOP_HISTORY) {
		record_free(&cl->history[0]);
		memmove(&cl->history[0], &cl->history[1], (CLOSED_LOOP_HISTORY - 1) * sizeof(cl->history[0]));
		cl->n_history--;
	}
	cl->history[cl->n_history++] = *rec;
	free(rec);
	cl->current = NULL;
	caad_observer_watch_thread(d->observer, 0);
}

/* s is a steering setting (IRQ, RPS, kthread) of decision dc's queue (of
 * every queue of its interface, where its queue is unknown). */
static bool steers_queue_of(const struct caad_setting *s, const struct caad_decision *dc)
{
	return s->iface == dc->iface && (dc->queue < 0 || (int)s->queue == dc->queue) &&
	       (s->kind == CAAD_SETTING_IRQ_AFFINITY || s->kind == CAAD_SETTING_RPS_CPUS ||
	        s->kind == CAAD_SETTING_KTHREAD_AFFINITY);
}

/*
 * Whether the steering settings (IRQ, RPS, kthread) of decision dc's queue
 * in plan are caad's to hold: none backed off (someone else changed it) or
 * refused by the kernel. If not, why says which (a read of each).
 */
static bool queue_held(struct daemon *d, const struct caad_plan *plan, const struct caad_decision *dc, char *why,
                       size_t size)
{
	for (size_t i = 0; i < plan->n_settings; i++) {
		const struct caad_setting *s = &plan->settings[i];
		_cleanup_free_ char *label = NULL;
		enum caad_setting_state st;

		if (!steers_queue_of(s, dc))
			continue;
		st = caad_actuator_setting_state(d->actuator, d->inv, s, &label);
		if (st == CAAD_SETTING_BACKED_OFF || st == CAAD_SETTING_REFUSED) {
			snprintf(why, size, "%s is not in place (%s)", label ? label : "its queue's setting",
			         st == CAAD_SETTING_BACKED_OFF ? "someone else changed it"
			                                               : "the kernel refused it, or it cannot be read");
			return false;
		}
	}
	return true;
}

/* Whether plan steers the queue of dc, a flow left to the host's steering,
 * for another flow (its settings are not the host's values going back). */
static bool steered_by_other(const struct caad_plan *plan, const struct caad_decision *dc)
{
	for (size_t i = 0; i < plan->n_settings; i++) {
		const struct caad_setting *s = &plan->settings[i];

		if (steers_queue_of(s, dc) && !s->restore)
			return true;
	}
	return false;
}

/* The candidates for a flow whose prior target is prior_cpu (dec: its
 * decision), on none of the CPUs in avoid. */
static unsigned candidates(const struct daemon *d, int c, int prior_cpu, const struct caad_decision *dec,
                           const struct caad_cpumask *avoid, struct caad_trial_cand *cands)
{
	/* hands off: does caad's steering beat what the host does itself? Not
	 * for a flow an ntuple rule moves: the rule would go with each such
	 * turn, and the flow come back on a queue another flow's steering holds */
	unsigned n = caad_trial_candidates(d->topo, avoid, c, prior_cpu, d->config.trial_host && !dec->ntuple, cands);

	assert(n <= CAAD_TRIAL_MAX_CANDS);
	return n;
}

/*
 * Into avoid: the SMT siblings of f's consumer CPU where another heavy
 * flow's consumer reads. The planner puts no closed-loop placement on
 * another flow's reader (caad_plan_count_readers()): a turn there would
 * end the trial at once (closed_loop_applied()), and the flow's next
 * trial after the cooldown again, never to a verdict. *readers: the
 * readers of each CPU, counted at the first call that needs them.
 */
static int avoid_readers(const struct daemon *d, const struct caad_flow *flows, size_t n, const struct caad_flow *f,
                         uint64_t now_ns, uint8_t **readers, struct caad_cpumask *avoid)
{
	const struct caad_topology *t = d->topo;
	int c = f->consumer_cpu;

	if (c < 0 || (unsigned)c >= t->n_cpus || !t->cpus[c].present || t->cpus[c].core < 0)
		return 0;
	CAAD_CPUMASK_FOREACH(cpu, &t->cores[t->cpus[c].core].cpus) {
		if (cpu == c || (unsigned)cpu >= t->n_cpus)
			continue;
		if (!*readers) {
			*readers = malloc(t->n_cpus);
			if (!*readers)
				return -ENOMEM;
			caad_plan_count_readers(t, flows, n, &d->config.policy, d->plan, now_ns, *readers);
		}
		if ((*readers)[cpu] > caad_plan_reads_on(t, f, &d->config.policy, d->plan, now_ns, cpu))
			caad_cpumask_set(avoid, (unsigned)cpu);
	}
	return 0;
}

static int start_trial(struct daemon *d, const struct caad_flow *flows, size_t n, uint64_t now_ns)
{
	struct closed_loop *cl = &d->loop;
	const struct caad_flow *best = NULL;
	const struct caad_iface *best_ifc = NULL;
	char best_driver[CAAD_VERDICT_NAME_MAX] = "";
	bool best_unpinned = false;
	struct caad_trial_cand cands[CAAD_TRIAL_MAX_CANDS];
	struct caad_trial_params p = d->config.trial;
	struct trial_record *rec;
	_cleanup_free_ uint8_t *readers = NULL;
	unsigned n_cands = 0;
	int r;

	if (!d->plan || d->paused || d->config.mode != CAAD_MODE_ENFORCE)
		return 0; /* trials need a plan in force */

	for (size_t i = 0; i < n; i++) {
		const struct caad_flow *f = &flows[i];
		const struct caad_decision *dec;
		const struct caad_iface *ifc;
		char driver[CAAD_VERDICT_NAME_MAX];
		bool unpinned;

		if (f->rate_bps < d->config.policy.rate_threshold_bps || f->consumer_cpu < 0 ||
		    now_ns < f->first_ns + (uint64_t)d->config.trial_steady_ms * NSEC_PER_MSEC ||
		    (best && f->rate_bps <= best->rate_bps))
			continue;
		dec = caad_plan_find(d->plan, f->id);
		/* steered by the rules for where its consumer is now; not
		 * where the closed loop put it (a verdict that just expired, a
		 * trial that ended; since_ns is that placement's, the steering
		 * kept): tried against that as its prior, the rules' own CPU
		 * would not be a candidate, and a prior that stood would send
		 * later flows to the rules' placement, never measured. Passed
		 * over until the rules have placed it, and DwellMSec= from then */
		if (!dec || dec->steer_cpu < 0 || dec->shares_queue || dec->closed_loop ||
		    dec->consumer_cpu != f->consumer_cpu)
			continue;
		ifc = flow_iface(d, f);
		if (!ifc || in_cooldown(cl, ifc->name, f->comm, now_ns))
			continue;
		unpinned = consumer_unpinned(d, f);
		/* and held there, not just moved: a reader pinned to one CPU
		 * stays; one the scheduler moves may never be still for as long
		 * (the trial follows it), but its target must be the rules'
		 * choice for the CPU it reads on now, not one kept from an
		 * earlier CPU (until DwellMSec= lets the rules move it) */
		if (unpinned ? dec->held && dec->anchor_cpu != f->consumer_cpu
		             : now_ns < dec->since_ns + (uint64_t)d->config.policy.dwell_ms * NSEC_PER_MSEC)
			continue;
		if (iface_driver(d->args->sysroot, ifc->name, driver, sizeof(driver)) < 0)
			continue; /* asked again at the next scan */
		/* one dated ahead of the clock is its verdict too, not used
		 * until the clock reaches it: a trial's would be put over it,
		 * dated by the clock that is behind */
		bool ahead;
		if (caad_verdicts_find(&cl->verdicts, ifc->name, driver, f->comm, unpinned, (uint64_t)time(NULL),
		                       d->config.verdict_max_age_sec, &ahead) ||
		    ahead)
			continue;
		/* a queue someone else holds would end its first turn (and the
		 * next trial's, after each cooldown): not tried while it does */
		char why[160];
		if (!queue_held(d, d->plan, dec, why, sizeof(why)))
			continue;
		/* one with nothing to try against its prior (no host turn, no
		 * usable own CPU) is passed over here: as the fastest, it would
		 * keep every slower flow from its trial for as long as it lives */
		/* (nor an SMT sibling where another heavy flow reads: tried
		 * there, it would be aborted at that turn, trial after trial) */
		struct caad_trial_cand c[CAAD_TRIAL_MAX_CANDS];
		struct caad_cpumask avoid = d->config.policy.banned;
		r = avoid_readers(d, flows, n, f, now_ns, &readers, &avoid);
		if (r < 0)
			return r;
		unsigned k = candidates(d, f->consumer_cpu, dec->steer_cpu, dec, &avoid, c);
		if (k < 2)
			continue;
		memcpy(cands, c, k * sizeof(c[0]));
		n_cands = k;
		best = f;
		best_ifc = ifc;
		best_unpinned = unpinned;
		snprintf(best_driver, sizeof(best_driver), "%s", driver);
	}
	if (!best)
		return 0;
	/* a turn is never shorter than the dwell time; half of it may settle */
	p.turn_ms = MAX(p.turn_ms, d->config.policy.dwell_ms);
	p.settle_ms = MIN(p.settle_ms, p.turn_ms / 2);
	p.collapse_bps = caad_policy_half_threshold(&d->config.policy); /* the planner's half */

	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	r = caad_trial_start(&rec->trial, ++cl->next_id, best->id, &p, cands, n_cands, now_ns);
	if (r < 0) {
		free(rec);
		return r;
	}
	snprintf(rec->iface, sizeof(rec->iface), "%s", best_ifc->name);
	snprintf(rec->driver, sizeof(rec->driver), "%s", best_driver);
	snprintf(rec->comm, sizeof(rec->comm), "%s", best->comm);
	caad_flow_format_tuple(best, rec->tuple, sizeof(rec->tuple));
	rec->consumer_cpu = rec->consumer_now = best->consumer_cpu;
	rec->unpinned = best_unpinned;
	rec->started_sec = (uint64_t)time(NULL);
	rec->rate_bps = best->rate_bps;
	rec->first_ns = best->first_ns;
	rec->tid = best->tid;
	cl->current = rec;
	cl->trials++;
	caad_observer_watch_thread(d->observer, best->tid);
	char list[256];
	size_t len = 0;
	for (unsigned c = 0; c < n_cands && len < sizeof(list); c++) {
		char name[64];
		int w = snprintf(list + len, sizeof(list) - len, "%s%s",
		                 c == 0 ? "prior " : c + 1 == n_cands ? " and " : ", ", cand_name(&cands[c], name, sizeof(name)));
		len += w > 0 ? (size_t)w : 0;
	}
	log_info("Trial %u: %s (%s on %s, %.1f Gbit/s, consumer on CPU %d, %s): %u rounds of %u turns of %u ms, "
	         "candidates: %s", rec->trial.id, rec->tuple, rec->comm, rec->iface, best->rate_bps / 1e9,
	         best->consumer_cpu, best_unpinned ? "not pinned: followed where it moves" : "pinned to it", p.rounds,
	         n_cands, p.turn_ms, list);
	return 1;
}

/*
 * Where candidate cand's turn puts the flow of rec, whose consumer is on
 * CPU rec->consumer_now: its CPU while the consumer is where the trial
 * started; after a move (a reader not pinned to one CPU), the CPU with the
 * same relation to the consumer's new one: the consumer's own, its SMT
 * sibling, or for the prior TURN_RULES (the rules place it, as they would
 * without a trial). TURN_NONE: there is none that caad may use (banned,
 * offline, isolated, or no sibling).
 */
static int turn_cpu(const struct daemon *d, const struct trial_record *rec, unsigned cand)
{
	const struct caad_trial_cand *c = &rec->trial.cands[cand];

	if (c->relation == CAAD_RELATION_HOST_STEERING || rec->consumer_now == rec->consumer_cpu)
		return c->cpu;
	if (cand == 0)
		return TURN_RULES;
	int cpu = caad_trial_cpu_for_relation(d->topo, &d->config.policy.banned, rec->consumer_now, c->relation);
	return cpu < 0 ? TURN_NONE : cpu;
}

/* Advance the running trial; its turn's placement becomes an override. */
static int run_trial(struct daemon *d, const struct caad_flow *flows, size_t n, uint64_t now_ns)
{
	struct closed_loop *cl = &d->loop;
	struct caad_trial *t = &cl->current->trial;
	const struct caad_flow *f = find_flow(flows, n, t->flow_id);
	const struct caad_iface *ifc;
	struct caad_trial_counters c;
	char why[96];
	unsigned cand;

	if (!f)
		caad_trial_abort(t, now_ns, "the flow ended");
	else if (f->first_ns != cl->current->first_ns)
		/* its socket closed and a new one at the same address is read:
		 * another connection, perhaps of another application */
		caad_trial_abort(t, now_ns, "the flow ended (a new connection has its socket's address)");
	else if (f->tid && f->tid != cl->current->tid) {
		/* the time counted is the watched thread's: another one's
		 * reading would go uncounted (or the old one's go on) */
		snprintf(why, sizeof(why), "another thread reads the flow now (TID %u, was %u)", f->tid,
		         cl->current->tid);
		caad_trial_abort(t, now_ns, why);
	} else if (!(ifc = flow_iface(d, f)) || !streq(ifc->name, cl->current->iface)) {
		/* gone from the inventory (a vanished device, one of several),
		 * or renamed: its verdict would be stored under a name that
		 * is no longer its interface's */
		snprintf(why, sizeof(why), "its interface %.32s is gone, or named otherwise now", cl->current->iface);
		caad_trial_abort(t, now_ns, why);
	} else if (!streq(f->comm, cl->current->comm)) {
		/* its verdict would go under the name it had */
		snprintf(why, sizeof(why), "the consumer thread is named otherwise now");
		caad_trial_abort(t, now_ns, why);
	} else if (f->consumer_cpu >= 0 && f->consumer_cpu != cl->current->consumer_now && !cl->current->unpinned) {
		/* pinned when it started: someone moved it, the premise is gone */
		snprintf(why, sizeof(why), "the consumer, pinned to CPU %d, moved to CPU %d", cl->current->consumer_now,
		         f->consumer_cpu);
		caad_trial_abort(t, now_ns, why);
	} else if (d->paused || d->config.mode != CAAD_MODE_ENFORCE)
		caad_trial_abort(t, now_ns, d->paused ? "caad was paused" : "caad left enforce mode");
	if (t->state != CAAD_TRIAL_RUNNING) {
		finish(d, now_ns);
		return 0;
	}
	/* (-1: not known at this scan, not a move) */
	if (f->consumer_cpu >= 0 && f->consumer_cpu != cl->current->consumer_now) {
		cl->current->consumer_moves++;
		cl->current->consumer_now = f->consumer_cpu;
	}
	read_counters(d, cl->current, f, &c);
	cand = caad_trial_step(t, now_ns, &c);
	/* A verdict is of pinned readers or of those the scheduler moves:
	 * one pinned (or freed) since the start, and so still at the end,
	 * had turns of both kinds, and gets none. Asked at the end, not at
	 * each scan: someone who moves a reader by pinning it for a while
	 * (taskset -p) and frees it again leaves it of its kind. */
	if (t->state == CAAD_TRIAL_DONE && consumer_unpinned(d, f) != cl->current->unpinned) {
		snprintf(why, sizeof(why), "the consumer's CPU affinity changed: it is %s now",
		         cl->current->unpinned ? "pinned" : "no longer pinned");
		caad_trial_withdraw(t, why);
	}
	if (t->state == CAAD_TRIAL_RUNNING) {
		cl->turn_cpu = turn_cpu(d, cl->current, cand);
		if (cl->turn_cpu == TURN_NONE) {
			snprintf(why, sizeof(why), "the consumer moved to CPU %d, where its %s turn has no CPU caad may use",
			         cl->current->consumer_now, caad_relation_to_string(t->cands[cand].relation));
			caad_trial_abort(t, now_ns, why);
		}
	}
	if (t->state != CAAD_TRIAL_RUNNING) {
		finish(d, now_ns);
		return 0;
	}
	if (cl->turn_cpu == TURN_RULES)
		return 0;
	return add_override(cl, t->flow_id, cl->turn_cpu, "trial %u, round %u of %u: %s", t->id,
	                    t->turn / t->n_cands + 1, t->params.rounds, caad_relation_to_string(t->cands[cand].relation));
}

/* Flows of applications with a verdict other than the prior get its placement. */
static int reuse_verdicts(struct daemon *d, const struct caad_flow *flows, size_t n)
{
	struct closed_loop *cl = &d->loop;
	uint64_t now_sec = (uint64_t)time(NULL);

	caad_flow_set_keep_live(&cl->told, flows, n);
	if (cl->verdicts.n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct caad_flow *f = &flows[i];
		const struct caad_iface *ifc;
		const struct caad_verdict *v;
		char driver[CAAD_VERDICT_NAME_MAX];
		int cpu, r;

		if (f->rate_bps < caad_policy_half_threshold(&d->config.policy) || f->consumer_cpu < 0 ||
		    (cl->current && cl->current->trial.flow_id == f->id))
			continue;
		ifc = flow_iface(d, f);
		if (!ifc)
			continue;
		if (iface_driver(d->args->sysroot, ifc->name, driver, sizeof(driver)) < 0)
			continue; /* its verdict is looked up at the next scan */
		v = caad_verdicts_find(&cl->verdicts, ifc->name, driver, f->comm, consumer_unpinned(d, f), now_sec,
		                       d->config.verdict_max_age_sec, NULL);
		if (!v)
			continue;
		cpu = caad_trial_verdict_cpu(v, d->topo, &d->config.policy.banned, f->consumer_cpu);
		bool host = cpu == CAAD_OVERRIDE_HOST;
		if (host && !d->config.trial_host)
			continue; /* TryHostSteering=no: the rules place it, the verdict is kept */
		r = caad_flow_set_add(&cl->told, f);
		if (r < 0)
			return r;
		if (r > 0) {
			char tuple[128];
			caad_flow_format_tuple(f, tuple, sizeof(tuple));
			log_info("Flow %s (%s on %s, consumer %s) takes the verdict of trial %u without a trial of its own: "
			         "%s%s", tuple, f->comm, ifc->name, v->unpinned ? "not pinned" : "pinned", v->trial,
			         caad_relation_to_string(v->relation),
			         cpu == CAAD_TRIAL_RULES ? " (the rules' placement)" : "");
			cl->reused++;
		}
		if (cpu == CAAD_TRIAL_RULES)
			continue; /* the rules' placement won: nothing to change */
		r = add_override(cl, f->id, cpu, "verdict of trial %u for %s on %s: %s (goodput %.3fx the prior's)",
		                 v->trial, f->comm, ifc->name, caad_relation_to_string(v->relation), v->goodput_ratio);
		if (r < 0)
			return r;
	}
	return 0;
}

int closed_loop_prepare(struct daemon *d, const struct caad_flow *flows, size_t n, uint64_t now_ns)
{
	struct closed_loop *cl = &d->loop;
	int r;

	cl->n_overrides = 0;
	d->config.policy.overrides = NULL;
	d->config.policy.n_overrides = 0;
	if (d->config.placement != CAAD_PLACEMENT_MEASURE || !d->topo)
		return 0;
	if (!cl->verdicts_loaded)
		load_verdicts(d);
	/* GetTrials and trials.json show the verdicts in force: one that
	 * expired goes now, not at the next save (an application gone for
	 * good was listed with its verdict until a later one was decided) */
	(void)caad_verdicts_expire(&cl->verdicts, (uint64_t)time(NULL), d->config.verdict_max_age_sec);

	if (cl->current) {
		r = run_trial(d, flows, n, now_ns);
		if (r < 0)
			return r;
	}
	r = reuse_verdicts(d, flows, n);
	if (r < 0)
		return r;
	if (!cl->current) {
		r = start_trial(d, flows, n, now_ns);
		if (r > 0)
			r = run_trial(d, flows, n, now_ns);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < cl->n_overrides; i++)
		cl->overrides[i].why = cl->whys[i];
	if (cl->n_overrides > 1)
		qsort(cl->overrides, cl->n_overrides, sizeof(*cl->overrides), cmp_override);
	d->config.policy.overrides = cl->overrides;
	d->config.policy.n_overrides = cl->n_overrides;
	return 0;
}

void closed_loop_abort(struct daemon *d, const char *why)
{
	struct closed_loop *cl = &d->loop;
	uint64_t now_ns = now_usec(CLOCK_MONOTONIC) * 1000;

	if (!cl->current)
		return;
	caad_trial_abort(&cl->current->trial, now_ns, why);
	finish(d, now_ns);
}

void closed_loop_applied(struct daemon *d, const struct caad_plan *plan)
{
	struct closed_loop *cl = &d->loop;
	const struct caad_decision *dc;
	char why[160] = "";

	if (!cl->current || cl->current->trial.state != CAAD_TRIAL_RUNNING || !plan)
		return;
	dc = caad_plan_find(plan, cl->current->trial.flow_id);
	if (!dc)
		snprintf(why, sizeof(why), "the flow is no longer planned for (no longer heavy)");
	else if (cl->turn_cpu == CAAD_OVERRIDE_HOST) {
		if (!dc->host)
			snprintf(why, sizeof(why), "its turn, the host's own steering, was not planned");
		else if (steered_by_other(plan, dc))
			snprintf(why, sizeof(why), "another flow's steering holds its queue: the host's own steering "
			                           "cannot be measured");
		else
			(void)queue_held(d, plan, dc, why, sizeof(why));
	} else if (cl->turn_cpu == TURN_RULES && (dc->steer_cpu < 0 || dc->host))
		snprintf(why, sizeof(why), "its turn, the rules' placement, left it unsteered");
	/* the rules may hold the last turn's CPU a while (DwellMSec=,
	 * MaxMovesPerCycle=): that is no measure of their placement, once
	 * the settle time is over */
	else if (cl->turn_cpu == TURN_RULES && dc->closed_loop && cl->current->trial.measuring)
		snprintf(why, sizeof(why),
		         "its turn, the rules' placement, still held the last turn's CPU %d when its measure began "
		         "(DwellMSec= longer than SettleMSec=)",
		         dc->steer_cpu);
	else if (cl->turn_cpu != TURN_RULES && dc->steer_cpu != cl->turn_cpu)
		snprintf(why, sizeof(why),
		         "its turn's placement, CPU %d, was not planned (a CPU the rules may not use, or another heavy "
		         "flow's consumer reads there)",
		         cl->turn_cpu);
	else if (dc->shares_queue)
		snprintf(why, sizeof(why), "another flow's steering holds its queue: CPU %d is not its turn's",
		         dc->steer_cpu);
	else
		(void)queue_held(d, plan, dc, why, sizeof(why));
	if (why[0])
		closed_loop_abort(d, why);
}

void closed_loop_reset(struct daemon *d, const char *why)
{
	struct closed_loop *cl = &d->loop;

	closed_loop_abort(d, why);
	cl->verdicts_loaded = false; /* read again, against the topology now */
	cl->n_overrides = 0;
	d->config.policy.overrides = NULL;
	d->config.policy.n_overrides = 0;
}

/* ---- the API ----------------------------------------------------------- */

static void format_trial(FILE *f, const struct trial_record *rec)
{
	const struct caad_trial *t = &rec->trial;
	struct caad_trial_result res = {};
	bool have = t->state == CAAD_TRIAL_DONE;

	if (!have)
		have = caad_trial_decide(&t->params, t->samples, t->n_samples, t->n_cands, &res) >= 0;
	else
		res = t->result;
	fprintf(f, "{\"id\": %u, \"state\": \"%s\", \"flow\": ", t->id, caad_trial_state_to_string(t->state));
	caad_json_string(f, rec->tuple);
	fputs(", \"iface\": ", f);
	caad_json_name(f, rec->iface);
	fputs(", \"comm\": ", f);
	caad_json_name(f, rec->comm);
	fprintf(f, ", \"consumer_cpu\": %d, \"pinned\": %s, \"consumer_moves\": %u, \"started\": %" PRIu64
	           ", \"rate_bps\": %" PRIu64
	           ", \"rounds\": %u, \"turn_ms\": %u, \"settle_ms\": %u, \"confidence_pct\": %u"
	           ", \"turns_done\": %zu, \"candidates\": [",
	        rec->consumer_cpu, rec->unpinned ? "false" : "true", rec->consumer_moves, rec->started_sec,
	        rec->rate_bps, t->params.rounds, t->params.turn_ms,
	        t->params.settle_ms, t->params.confidence_pct, t->n_samples);
	for (unsigned c = 0; c < t->n_cands; c++) {
		const struct caad_trial_score *s = &res.scores[c];
		char cpu[16] = "null";
		if (t->cands[c].cpu >= 0)
			snprintf(cpu, sizeof(cpu), "%d", t->cands[c].cpu);
		fprintf(f,
		        "%s{\"cpu\": %s, \"relation\": \"%s\", \"prior\": %s, \"goodput_bps\": %.0f, "
		        "\"bytes_per_cpu_second\": %.0f, \"goodput_ratio\": %.4f, \"efficiency_ratio\": %.4f, "
		        "\"pairs\": %u, \"efficiency_pairs\": %u, \"goodput_wins\": %u, \"efficiency_wins\": %u, "
		        "\"goodput_behind\": %u, "
		        "\"efficiency_behind\": %u, \"goodput_low\": %.4f, \"efficiency_low\": %.4f, "
		        "\"ooo_packets\": %" PRIu64 ", \"retransmits\": %" PRIu64 ", \"steal_pct\": %.2f}",
		        c ? ", " : "", cpu, caad_relation_to_string(t->cands[c].relation), c ? "false" : "true",
		        have ? s->goodput_bps : 0, have ? s->efficiency : 0, have ? s->goodput_ratio : 0,
		        have ? s->efficiency_ratio : 0, s->pairs, s->efficiency_pairs, s->goodput_wins, s->efficiency_wins, s->goodput_behind,
		        s->efficiency_behind, have ? s->goodput_low : 0, have ? s->efficiency_low : 0, s->ooo, s->retrans,
		        s->steal_pct);
	}
	fputs("], \"samples\": [", f);
	for (size_t i = 0; i < t->n_samples; i++) {
		const struct caad_trial_sample *s = &t->samples[i];
		fprintf(f,
		        "%s{\"round\": %u, \"candidate\": %u, \"ns\": %" PRIu64 ", \"bytes\": %" PRIu64
		        ", \"cpu_ns\": %" PRIu64 ", \"ooo_packets\": %" PRIu64 ", \"retransmits\": %" PRIu64
		        ", \"steal_ns\": %" PRIu64 "}",
		        i ? ", " : "", s->round, s->cand, s->ns, s->d.bytes, s->d.cpu_ns, s->d.ooo, s->d.retrans,
		        s->d.steal_ns);
	}
	fputs("], \"verdict\": ", f);
	if (t->state == CAAD_TRIAL_DONE)
		fprintf(f, "\"%s\", \"kept_prior\": %s, \"reason\": ",
		        caad_relation_to_string(t->cands[t->result.winner].relation), t->result.winner ? "false" : "true");
	else
		fputs("null, \"kept_prior\": null, \"reason\": ", f);
	caad_json_string(f, t->state == CAAD_TRIAL_DONE ? t->result.reason
	                    : t->state == CAAD_TRIAL_ABORTED ? t->abort_reason
	                                                      : "running");
	fputc('}', f);
}

int closed_loop_format(const struct daemon *d, FILE *f)
{
	const struct closed_loop *cl = &d->loop;
	bool first = true;

	fprintf(f, "{\"placement\": \"%s\", \"trials\": [", caad_placement_to_string(d->config.placement));
	for (size_t i = 0; i < cl->n_history; i++, first = false) {
		fputs(first ? "" : ", ", f);
		format_trial(f, &cl->history[i]);
	}
	if (cl->current) {
		fputs(first ? "" : ", ", f);
		format_trial(f, cl->current);
	}
	fputs("], \"store\": ", f);
	if (cl->verdicts_loaded) {
		/* the stored form, inside the answer */
		_cleanup_free_ char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		if (!m)
			return -ENOMEM;
		(void)caad_verdicts_format(&cl->verdicts, m);
		if (fclose(m) != 0)
			return -ENOMEM;
		while (len > 0 && buf[len - 1] == '\n')
			buf[--len] = '\0';
		fputs(buf, f);
	} else
		fputs("null", f);
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}
