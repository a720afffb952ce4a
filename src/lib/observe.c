/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "caad/log.h"
#include "caad/loglimit.h"
#include "caad/observe.h"
#include "caad/sysfs.h"
#include "observer.skel.h"
#include "observer_nokfuncs.skel.h"

/* A flow handed over: when its record's bytes were read. */
struct sample {
	uint64_t id;
	uint64_t at_ns; /* CLOCK_MONOTONIC */
};

struct caad_observer {
	struct caad_observer_bpf *skel;
	struct ring_buffer *rb;
	int n_cpus;
	uint64_t counter_last[CAAD_COUNTER_MAX]; /* caad_observer_counter()'s last good reads */

	struct bpf_link *dump;       /* the flows' iterator (caad_flows_dump or _tcp) */
	enum caad_flow_iter flow_iter;
	enum caad_observer_hooks hooks;
	bool kfuncs;                 /* the object with kfuncs (else observer_nokfuncs's) */
	bool publish;                /* the programs hand flows over as they change ("recent") */
	uint64_t full_pass_ns;       /* publish: a pass of the iterator at least this often */
	uint64_t full_ns;            /* publish: when the last one ran (CLOCK_MONOTONIC), 0 never */
	uint64_t publish_failed;     /* CAAD_COUNTER_PUBLISH_FAILED at the last pass */
	bool last_full;              /* the last snapshot was a pass of the iterator */
	bool last_periodic;          /* ... one that ran only because full_pass_ms had passed */
	size_t n_ret;                /* the last snapshot as it returned it: how many */
	uint64_t ret_print;          /* ... and a fingerprint of its ids, in order */
	bool prepared;               /* caad_observer_prepare() since the last snapshot */
	uint64_t pass_cpu_ns;        /* publish: the CPU time of the last snapshot that was a pass */
	uint32_t dump_max;           /* the "dump" array's entries */
	struct caad_flow_base *prev; /* last snapshot's bases, sorted by id */
	/* publish: when the bytes of the flows handed over since the last
	 * snapshot that rated them were read (an early one does not) */
	struct sample *samples;
	size_t n_samples, cap_samples;
	uint64_t period_ns;          /* the scan period (caad_observer_set_scan_period()), 0 unknown */
	unsigned snapshot_calls;     /* read() calls of the iterator the last snapshot took */
	/* snapshots that failed in a row: the first says why at LOG_ERR, the
	 * rest at LOG_DEBUG but one every 10 minutes (a failure at every scan
	 * would say so every IntervalMSec= otherwise) */
	struct caad_logstreak snap_fails;
	int snap_level;              /* what this snapshot's failure is logged at */
	uint64_t thread_ns_last;     /* caad_observer_thread_ns() said so last */
	uint64_t thread_base;        /* the watched thread's sum_exec_runtime when the watch began */
	bool thread_base_known;
	bool thread_warned;          /* its time could not be read: said once */
	bool thread_failed;          /* ... at the last caad_observer_thread_ns() */
	bool irq_time;               /* the kernel accounts IRQ time (kernel_irq_time_accounting()) */
	size_t n_prev;
	uint64_t prev_ns;

	struct bpf_link *softirq[2]; /* the softirq programs, attached while a thread is watched */

	unsigned consumers_left;     /* CONSUMER_LEFT events since caad_observer_take_left() */
	uint64_t consumers_left_total;
	uint64_t *stay_ids;          /* the stay map's keys, sorted */
	size_t n_stay;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static int verbose = -1;
	char buf[1024];
	int l = level == LIBBPF_WARN ? LOG_WARNING : LOG_DEBUG;
	size_t n;

	/* libbpf's debug output (every relocation) only when asked for */
	if (verbose < 0)
		verbose = getenv("CAAD_LIBBPF_DEBUG") != NULL;
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	if (l > caad_log_get_max_level())
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	log_full_errno(l, 0, "%s", buf);
	return 0;
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

int caad_netns_self_inode(uint32_t *ret)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st) < 0)
		return -errno;
	*ret = (uint32_t)st.st_ino;
	return 0;
}

#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_SYS_ADMIN
#define CAP_SYS_ADMIN 21
#endif

int caad_bpf_read_capability(const char *release, int disabled)
{
	unsigned major, minor;
	bool parsed = release && sscanf(release, "%u.%u", &major, &minor) == 2;

	if (parsed && (major > 5 || (major == 5 && minor >= 19)))
		return 0;
	/* 5.8 to 5.18: kept even with the sysctl off now, for an administrator
	 * may set it while caad runs (no one can clear 1 before a reboot), and
	 * then every read of the flow table fails until caad restarts.
	 * CAP_BPF reads nothing else. */
	if (parsed && major == 5 && minor >= 8)
		return CAP_BPF;
	if (disabled == 0) /* CAP_SYS_ADMIN is too much to keep for what may never come */
		return 0;
	if (!parsed)
		return CAP_BPF; /* unknown: keep what reads the maps on 5.8 and later */
	return CAP_SYS_ADMIN;
}

bool caad_irq_time_accounting(const char *config, const char *cmdline)
{
	static const char want[] = "CONFIG_IRQ_TIME_ACCOUNTING=y";

	/* x86's tsc=noirqtime switches it off at boot */
	if (cmdline && strstr(cmdline, "noirqtime"))
		return false;
	for (const char *line = config; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len == sizeof(want) - 1 && memcmp(line, want, len) == 0)
			return true;
		line = end ? end + 1 : NULL;
	}
	return false;
}

/* From /boot/config-RELEASE (and /proc/cmdline); a kernel whose config is
 * not there is taken not to account IRQ time (see caad_observer_net_rx_ns()). */
static bool kernel_irq_time_accounting(void)
{
	_cleanup_free_ char *path = NULL, *config = NULL, *cmdline = NULL;
	struct utsname u;
	bool on;

	if (uname(&u) < 0 || asprintf(&path, "/boot/config-%s", u.release) < 0)
		return false;
	if (caad_read_file(path, &config) < 0) {
		log_debug("%s not readable: NET_RX time on top of a watched thread is taken to be in its own time", path);
		return false;
	}
	(void)caad_read_file("/proc/cmdline", &cmdline);
	on = caad_irq_time_accounting(config, cmdline);
	log_debug("IRQ time accounting: %s (%s)", on ? "on" : "off", path);
	return on;
}

static void softirq_detach(struct caad_observer *o)
{
	for (size_t i = 0; i < ARRAY_SIZE(o->softirq); i++) {
		bpf_link__destroy(o->softirq[i]);
		o->softirq[i] = NULL;
	}
}

/* The softirq programs, for a watched thread's NET_RX time. */
static int softirq_attach(struct caad_observer *o)
{
	struct bpf_program *progs[] = { o->skel->progs.caad_softirq_entry, o->skel->progs.caad_softirq_exit };

	for (size_t i = 0; i < ARRAY_SIZE(o->softirq); i++) {
		if (o->softirq[i])
			continue;
		o->softirq[i] = bpf_program__attach(progs[i]);
		if (!o->softirq[i]) {
			int r = -errno;

			softirq_detach(o);
			return r;
		}
	}
	return 0;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct caad_observer *o = ctx;
	const struct caad_event *e = data;

	if (size < sizeof(*e) || e->type != CAAD_EVENT_CONSUMER_LEFT)
		return 0;
	o->consumers_left++;
	o->consumers_left_total++;
	log_debug("flow %#" PRIx64 ": its reader left the CPUs its steering holds for (now on CPU %u)",
	          caad_flow_public_id(e->sk), e->cpu);
	return 0;
}

const char *caad_flow_iter_to_string(enum caad_flow_iter i)
{
	static const char *const names[_CAAD_FLOW_ITER_COUNT] = {
		[CAAD_FLOW_ITER_AUTO] = "auto",
		[CAAD_FLOW_ITER_STORAGE] = "storage",
		[CAAD_FLOW_ITER_TCP] = "tcp",
	};

	return (unsigned)i < _CAAD_FLOW_ITER_COUNT ? names[i] : NULL;
}

/*
 * A program that returns 0, loaded as a tracing program of this attach
 * type on this kernel object (its BTF name): what the kernel says of it is
 * what it says of caad's program there, without the noise of a whole
 * object that fails to load. 1 loaded, 0 refused (said at debug level),
 * < 0 the kernel's BTF has no such object.
 */
static int probe_tracing(const char *name, enum bpf_attach_type type, const char *what)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = type);
	int id, fd;

	id = libbpf_find_vmlinux_btf_id(name, type);
	if (id < 0)
		return log_debug_errno(id, "No %s in the kernel's BTF: %m", what);
	po.attach_btf_id = (__u32)id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "caad_probe", "GPL", insns, ARRAY_SIZE(insns), &po);
	if (fd < 0) {
		log_debug_errno(errno, "The kernel refuses a %s: %m", what);
		return 0;
	}
	close(fd);
	return 1;
}

/* Seen refused with EPERM, before any verification, by a 6.18 kernel that
 * loaded the task and TCP iterators. */
int caad_probe_storage_iter(void)
{
	return probe_tracing("bpf_sk_storage_map", BPF_TRACE_ITER, "socket storage map iterator");
}

static enum caad_flow_iter choose_flow_iter(enum caad_flow_iter want)
{
	int r;

	if (want != CAAD_FLOW_ITER_AUTO)
		return want;
	r = caad_probe_storage_iter();
	if (r > 0)
		return CAAD_FLOW_ITER_STORAGE;
	if (r == 0)
		log_info("This kernel refuses map element iterators: the BPF programs hand flows over as they change, "
		         "and its TCP socket iterator, which walks every TCP socket of the machine, reads them all "
		         "every %u s", CAAD_FULL_PASS_MS_DEFAULT / 1000);
	/* could not tell: the TCP iterator, which needs nothing of the map */
	return CAAD_FLOW_ITER_TCP;
}

const char *caad_observer_hooks_to_string(enum caad_observer_hooks h)
{
	static const char *const names[_CAAD_HOOKS_COUNT] = {
		[CAAD_HOOKS_AUTO] = "auto",
		[CAAD_HOOKS_TRACEPOINTS] = "tracepoints",
		[CAAD_HOOKS_FUNCTIONS] = "functions",
	};

	return (unsigned)h < _CAAD_HOOKS_COUNT ? names[h] : NULL;
}

static void btf_freep(struct btf **b)
{
	btf__free(*b);
}

/* Whether the kernel's BTF has this tracepoint ("btf_trace_" its name: a
 * typedef) or this function (a kernel function or a kfunc). */
static bool btf_has(const struct btf *vmlinux, const char *name, bool tracepoint)
{
	char buf[128];

	if (tracepoint) {
		snprintf(buf, sizeof(buf), "btf_trace_%s", name);
		return btf__find_by_name_kind(vmlinux, buf, BTF_KIND_TYPEDEF) > 0;
	}
	return btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
}

/*
 * The tracepoints, where the kernel has both (6.3 and later); else the
 * functions they sit in, where it has those. Where it has neither, the
 * load would fail: said here, by name, rather than by the verifier's log.
 * *kfuncs: whether it has the kfunc bpf_rdonly_cast() (6.2 and later),
 * which FUNCTIONS does without, as an older kernel must.
 */
static int choose_hooks(enum caad_observer_hooks want, enum caad_observer_hooks *ret, bool *kfuncs)
{
	static const char *const tps[] = { "sock_recv_length", "sk_data_ready" };
	static const char *const fns[] = { "tcp_recvmsg", "sock_def_readable" };
	_cleanup_(btf_freep) struct btf *vmlinux = NULL;
	const char *missing = NULL;

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return log_error_errno(errno ? -errno : -ENOENT,
		                       "This kernel's BTF cannot be read (/sys/kernel/btf/vmlinux: %m): caad's BPF programs "
		                       "need a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	for (size_t i = 0; i < ARRAY_SIZE(tps) && !missing; i++)
		if (!btf_has(vmlinux, tps[i], true))
			missing = tps[i];
	*ret = want != CAAD_HOOKS_AUTO ? want : missing ? CAAD_HOOKS_FUNCTIONS : CAAD_HOOKS_TRACEPOINTS;
	*kfuncs = *ret == CAAD_HOOKS_TRACEPOINTS && btf_has(vmlinux, "bpf_rdonly_cast", false);
	if (*ret == CAAD_HOOKS_TRACEPOINTS) {
		if (missing)
			return log_error_errno(-EOPNOTSUPP, "This kernel has no %s tracepoint (Linux 6.3 and later)", missing);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++) {
		if (btf_has(vmlinux, fns[i], false))
			continue;
		if (missing)
			return log_error_errno(-EOPNOTSUPP, "This kernel has neither the tracepoint %s (Linux 6.3 and "
			                       "later) nor the function %s() in its BTF: caad cannot learn where flows "
			                       "are read and processed", missing, fns[i]);
		return log_error_errno(-EOPNOTSUPP, "This kernel has no function %s() in its BTF", fns[i]);
	}
	/* some kernels refuse every fentry (EPERM) */
	if (probe_tracing(fns[1], BPF_TRACE_FENTRY, "program on a kernel function (fentry)") <= 0) {
		if (missing)
			return log_error_errno(-EOPNOTSUPP, "This kernel has no %s tracepoint (Linux 6.3 and later) and "
			                       "refuses BPF programs on kernel functions (fentry on %s()): caad cannot "
			                       "learn where flows are read and processed", missing, fns[1]);
		return log_error_errno(-EOPNOTSUPP, "This kernel refuses BPF programs on kernel functions (fentry on "
		                       "%s())", fns[1]);
	}
	if (want == CAAD_HOOKS_AUTO)
		log_info("This kernel has no %s tracepoint (Linux 6.3 and later): caad's programs attach to the "
		         "functions tcp_recvmsg() and sock_def_readable() instead", missing);
	return 0;
}

/*
 * The observer's skeleton, opened on its own object, or on the one built
 * without kfuncs (bpf/meson.build): an extern kfunc, even a weak one, has
 * libbpf list the modules' BTF where vmlinux lacks it, which needs
 * CAP_SYS_ADMIN, and a caad run as another user has none. The build holds
 * the two objects to the same programs, maps and variables
 * (bpf/check-skeletons.py), so the skeleton's names fit either.
 */
static int open_skeleton(bool kfuncs, struct caad_observer_bpf **ret)
{
	struct caad_observer_bpf *skel = calloc(1, sizeof(*skel));
	int r;

	if (!skel)
		return -ENOMEM;
	r = caad_observer_bpf__create_skeleton(skel);
	if (r == 0) {
		if (!kfuncs)
			skel->skeleton->data = (void *)caad_observer_nokfuncs_bpf__elf_bytes(&skel->skeleton->data_sz);
		r = bpf_object__open_skeleton(skel->skeleton, NULL);
	}
	if (r < 0) {
		caad_observer_bpf__destroy(skel);
		return r;
	}
	*ret = skel;
	return 0;
}

static int attach_flow_iter(struct caad_observer *o)
{
	if (o->flow_iter == CAAD_FLOW_ITER_STORAGE) {
		DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, io);
		union bpf_iter_link_info info = { .map.map_fd = (__u32)bpf_map__fd(o->skel->maps.flows) };

		io.link_info = &info;
		io.link_info_len = sizeof(info);
		o->dump = bpf_program__attach_iter(o->skel->progs.caad_flows_dump, &io);
	} else
		o->dump = bpf_program__attach_iter(o->skel->progs.caad_flows_dump_tcp, NULL);
	if (!o->dump)
		return log_error_errno(errno ? errno : EINVAL, "Failed to attach the flow table's iterator (%s): %m",
		                       caad_flow_iter_to_string(o->flow_iter));
	return 0;
}

int caad_observer_open(const struct caad_observer_options *opts, struct caad_observer **ret)
{
	_cleanup_(caad_observer_freep) struct caad_observer *o = NULL;
	int r;

	libbpf_set_print(libbpf_print);

	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->snap_level = LOG_ERR;
	o->irq_time = kernel_irq_time_accounting();
	o->n_cpus = libbpf_num_possible_cpus();
	if (o->n_cpus <= 0)
		return log_error_errno(o->n_cpus ? o->n_cpus : -EINVAL, "Failed to count possible CPUs: %m");

	r = choose_hooks(opts->hooks, &o->hooks, &o->kfuncs);
	if (r < 0)
		return r;
	r = open_skeleton(o->kfuncs, &o->skel);
	if (r < 0)
		return log_error_errno(r, "Failed to open BPF observer: %m");

	o->skel->rodata->target_netns = opts->netns_inode;
	o->skel->data_gen->min_flow_bytes = opts->min_flow_bytes;
	o->skel->data_gen->follow_floor = opts->min_flow_bytes;
	/* one flows' iterator, attached below (a map iterator to its map) */
	o->flow_iter = choose_flow_iter(opts->flow_iter);
	/* a pass of the TCP iterator walks the whole established hash: flows
	 * are handed over as they change, and it runs every few seconds */
	o->publish = o->flow_iter == CAAD_FLOW_ITER_TCP;
	o->skel->rodata->publish = o->publish;
	if (opts->max_flows > 0) {
		o->skel->rodata->max_flows = opts->max_flows;
		r = bpf_map__set_max_entries(o->skel->maps.dump, opts->max_flows);
		if (r < 0)
			return log_error_errno(r, "Failed to size the flow table's copy to %u: %m", opts->max_flows);
	}
	/* the hand-overs' map, twice MaxFlows=, where flows are handed over;
	 * else unused: one entry (its buckets are allocated whatever it
	 * holds, 32 MiB of the kernel's at MaxFlows=1M) */
	r = bpf_map__set_max_entries(o->skel->maps.recent,
	                             !o->publish                          ? 1
	                             : opts->max_flows == 0               ? bpf_map__max_entries(o->skel->maps.recent)
	                             : opts->max_flows > UINT32_MAX / 2 ? UINT32_MAX
	                                                                  : 2 * opts->max_flows);
	if (r < 0)
		return log_error_errno(r, "Failed to size the hand-overs' map: %m");
	o->full_pass_ns = (uint64_t)(opts->full_pass_ms ? opts->full_pass_ms : CAAD_FULL_PASS_MS_DEFAULT) * 1000000;
	bpf_program__set_autoload(o->skel->progs.caad_flows_dump, o->flow_iter == CAAD_FLOW_ITER_STORAGE);
	bpf_program__set_autoload(o->skel->progs.caad_flows_dump_tcp, o->flow_iter == CAAD_FLOW_ITER_TCP);
	bpf_program__set_autoload(o->skel->progs.caad_sock_recv_length, o->hooks == CAAD_HOOKS_TRACEPOINTS);
	bpf_program__set_autoload(o->skel->progs.caad_sk_data_ready, o->hooks == CAAD_HOOKS_TRACEPOINTS);
	bpf_program__set_autoload(o->skel->progs.caad_tcp_recvmsg, o->hooks == CAAD_HOOKS_FUNCTIONS);
	bpf_program__set_autoload(o->skel->progs.caad_sock_def_readable, o->hooks == CAAD_HOOKS_FUNCTIONS);
	bpf_program__set_autoattach(o->skel->progs.caad_flows_dump, false);
	bpf_program__set_autoattach(o->skel->progs.caad_flows_dump_tcp, false);
	/* the softirq programs: while a thread is watched (caad_observer_watch_thread()) */
	bpf_program__set_autoattach(o->skel->progs.caad_softirq_entry, false);
	bpf_program__set_autoattach(o->skel->progs.caad_softirq_exit, false);
	if (opts->ringbuf_size > 0) {
		r = bpf_map__set_max_entries(o->skel->maps.events, opts->ringbuf_size);
		if (r < 0)
			return log_error_errno(r, "Failed to size the ring buffer to %u: %m", opts->ringbuf_size);
	}

	r = caad_observer_bpf__load(o->skel);
	if (r < 0)
		return log_error_errno(r, "Failed to load BPF observer (it needs the kernel's BTF, root, and the BPF "
		                          "helpers of Linux 5.19: bpf_map_lookup_percpu_elem(), bpf_get_func_ret()): %m");
	r = caad_observer_bpf__attach(o->skel);
	if (r < 0)
		return log_error_errno(r, "Failed to attach BPF observer to its tracepoints: %m");
	r = attach_flow_iter(o);
	if (r < 0)
		return r;
	o->dump_max = bpf_map__max_entries(o->skel->maps.dump);

	o->rb = ring_buffer__new(bpf_map__fd(o->skel->maps.events), handle_event, o, NULL);
	if (!o->rb)
		return log_error_errno(errno ? errno : ENOMEM, "Failed to set up the BPF ring buffer: %m");

	log_debug("BPF observer attached (netns %u, %u flows max, from %u bytes received, %s iterator, %s%s)",
	          opts->netns_inode, o->skel->rodata->max_flows, opts->min_flow_bytes,
	          caad_flow_iter_to_string(o->flow_iter), caad_observer_hooks_to_string(o->hooks),
	          o->kfuncs ? "" : ", without kfuncs");
	*ret = TAKE_PTR(o);
	return 0;
}

void caad_observer_free(struct caad_observer *o)
{
	if (!o)
		return;
	ring_buffer__free(o->rb);
	softirq_detach(o);
	bpf_link__destroy(o->dump);
	caad_observer_bpf__destroy(o->skel);
	free(o->prev);
	free(o->samples);
	free(o->stay_ids);
	free(o);
}

int caad_observer_fd(struct caad_observer *o)
{
	return ring_buffer__epoll_fd(o->rb);
}

int caad_observer_consume(struct caad_observer *o)
{
	int r = ring_buffer__consume(o->rb);

	return r < 0 ? log_warning_errno(r, "Failed to read BPF events: %m") : r;
}

/* Room for more flows in *flows (of *cap). */
static int flows_room(struct caad_flow **flows, size_t *cap, size_t n, size_t more)
{
	struct caad_flow *nf;
	size_t c = *cap;

	if (n + more <= c)
		return 0;
	/* an eighth more: at 100k flows, doubling for a few new ones would
	 * hold 14 MB more until the next snapshot shrinks it */
	c = MAX(n + more, c + c / 8 + 64);
	nf = reallocarray(*flows, c, sizeof(**flows));
	if (!nf)
		return -ENOMEM;
	*flows = nf;
	*cap = c;
	return 0;
}

/*
 * The kernel failed a read of the flow table (said at the snapshot's
 * level): this scan fails, and caad goes on. Its ENOMEM, an allocation of
 * the kernel's for this read under memory pressure, too: -ENOMEM from a
 * snapshot is caad's own allocation failing, which ends it. A macro, for
 * the format's checks.
 */
#define kernel_failed(o, e, ...) not_enomem(log_full_errno((o)->snap_level, (e), __VA_ARGS__))
static int not_enomem(int r)
{
	return r == -ENOMEM ? -ENOBUFS : r;
}

/*
 * Every flow's entry: one read() of the flow table's iterator has them
 * copied into the "dump" array, and says how many (the last __u64 of its
 * output); then DUMP_BATCH of them a batch lookup of the array (at 100k
 * flows 98 calls). Not a mapping of the array: its pages, once read,
 * would count in caad's RSS (12 MB at 100k flows).
 */
#define DUMP_BATCH 1024u
static int read_flows(struct caad_observer *o, uint64_t now, struct caad_flow **flows, size_t *cap, size_t *n,
                      uint64_t **ret_at)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int map = bpf_map__fd(o->skel->maps.dump);
	_cleanup_free_ uint32_t *keys = NULL;
	_cleanup_free_ struct caad_flow_record *vals = NULL;
	_cleanup_close_ int fd = -1;
	uint64_t buf[64], count = 0, *at_ns;
	uint32_t token = 0;
	bool any = false;

	o->skel->bss->dump_n = 0;
	o->skel->bss->dump_visited = 0;
	o->skel->bss->dump_live = 0;
	o->skel->bss->dump_us = 0;
	fd = bpf_iter_create(bpf_link__fd(o->dump));
	if (fd < 0)
		return kernel_failed(o, errno, "Failed to read the BPF flow table: %m");
	for (;;) {
		ssize_t got;

		o->snapshot_calls++;
		got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return kernel_failed(o, errno, "Failed to read the BPF flow table: %m");
		if (got == 0)
			break;
		if (got % sizeof(uint64_t))
			return log_full_errno(o->snap_level, EIO, "The BPF flow table's iterator said %zd bytes, not counts", got);
		count = buf[got / sizeof(uint64_t) - 1];
		any = true;
	}
	if (!any)
		return log_full_errno(o->snap_level, EIO, "The BPF flow table's iterator did not say how many flows it copied");
	if (count > o->dump_max)
		return log_full_errno(o->snap_level, EIO, "The BPF flow table's iterator copied %" PRIu64 " flows, more than %u",
		                       count, o->dump_max);
	if (count == 0)
		return 0;

	keys = malloc(DUMP_BATCH * sizeof(*keys));
	vals = malloc(DUMP_BATCH * sizeof(*vals));
	/* when each one's bytes were read, beside it */
	at_ns = reallocarray(*ret_at, *n + count, sizeof(*at_ns));
	if (at_ns)
		*ret_at = at_ns;
	if (!keys || !vals || !at_ns || flows_room(flows, cap, *n, (size_t)count) < 0)
		return -ENOMEM;
	for (uint32_t at = 0; at < count;) {
		__u32 want = (uint32_t)MIN((uint64_t)DUMP_BATCH, count - at);
		int r;

		/* a batch starts after the key its token names: the last one read */
		r = bpf_map_lookup_batch(map, at ? &token : NULL, &token, keys, vals, &want, &opts);
		if (r < 0 && errno != ENOENT)
			return kernel_failed(o, errno, "Failed to read the BPF flow table's copy: %m");
		if (want == 0)
			break;
		for (__u32 i = 0; i < want; i++) {
			at_ns[*n] = caad_flow_record_time(&vals[i], now);
			caad_flow_from_record(&(*flows)[(*n)++], &vals[i]);
		}
		at += want;
	}
	return 0;
}

/* A snapshot given back, being updated with the flows handed over. */
struct merge {
	struct caad_observer *o; /* its samples: when each record's bytes were read */
	uint64_t now_ns;
	struct caad_flow *flows;
	size_t n, cap;
	size_t n_sorted; /* flows[0, n_sorted) are the given ones, sorted; new ones follow */
	uint8_t *gone;   /* of the given ones: closed since */
	uint64_t *closed; /* closed, not among the given ones (perhaps among the new) */
	size_t n_closed, cap_closed;
	bool appended;
};

static int add_sample(struct caad_observer *o, uint64_t id, uint64_t at_ns)
{
	if (o->n_samples == o->cap_samples) {
		size_t c = o->cap_samples ? 2 * o->cap_samples : 64;
		struct sample *ns = reallocarray(o->samples, c, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		o->samples = ns;
		o->cap_samples = c;
	}
	o->samples[o->n_samples++] = (struct sample){ .id = id, .at_ns = at_ns };
	return 0;
}

static int merge_record(struct merge *m, const struct caad_flow_record *rec)
{
	size_t i = LOWER_BOUND_BY(m->flows, m->n_sorted, id, rec->sk);

	if (!rec->closed && add_sample(m->o, rec->sk, caad_flow_record_time(rec, m->now_ns)) < 0)
		return -ENOMEM;

	if (i < m->n_sorted && m->flows[i].id == rec->sk) {
		enum caad_merge k = caad_flow_merge_record(&m->flows[i], rec);

		if (k != CAAD_MERGE_OTHER)
			m->gone[i] = k == CAAD_MERGE_GONE;
		return 0;
	}
	/* Not among the given ones: new (appended, unsorted: a flow handed
	 * over twice as the drain went, the later kept once sorted), or gone
	 * before it was listed, which the new ones must lose once sorted. */
	if (rec->closed) {
		if (m->n_closed == m->cap_closed) {
			size_t c = m->cap_closed ? 2 * m->cap_closed : 16;
			uint64_t *nc = reallocarray(m->closed, c, sizeof(*nc));

			if (!nc)
				return -ENOMEM;
			m->closed = nc;
			m->cap_closed = c;
		}
		m->closed[m->n_closed++] = rec->sk;
		return 0;
	}
	if (flows_room(&m->flows, &m->cap, m->n, 1) < 0)
		return -ENOMEM;
	caad_flow_from_record(&m->flows[m->n++], rec);
	m->appended = true;
	return 0;
}

/*
 * Take every record handed over into "recent" since the last time, into
 * m (NULL: dropped, a pass of the iterator follows). A lookup and delete
 * of DRAIN_BATCH of them per call; the programs may hand a flow over again
 * meanwhile, which this or the next drain reads.
 */
#define DRAIN_BATCH 1024u
static int drain_recent(struct caad_observer *o, struct merge *m)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int fd = bpf_map__fd(o->skel->maps.recent);
	_cleanup_free_ uint64_t *keys = malloc(DRAIN_BATCH * sizeof(*keys));
	_cleanup_free_ struct caad_flow_record *vals = malloc(DRAIN_BATCH * sizeof(*vals));
	uint64_t token = 0;
	bool first = true;

	if (!keys || !vals)
		return -ENOMEM;
	for (;;) {
		__u32 got = DRAIN_BATCH;
		int r = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &token, &token, keys, vals, &got, &opts);
		bool end = r < 0 && errno == ENOENT;

		if (r < 0 && !end)
			return kernel_failed(o, errno, "Failed to read the flows handed over by the BPF programs: %m");
		for (__u32 k = 0; m && k < got; k++) {
			r = merge_record(m, &vals[k]);
			if (r < 0)
				return r;
		}
		if (end || got == 0)
			return 0;
		first = false;
	}
}

/* The ids of flows (n), in order, folded into 64 bits (FNV-1a's way, a
 * word at a time). */
static uint64_t ids_print(const struct caad_flow *flows, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ flows[i].id) * 0x100000001b3ull;
	return h;
}

/* flows (n) are the last snapshot's, as it returned them. Not the bases'
 * ids: an early snapshot leaves those as the last due one made them. */
static bool given_back(const struct caad_observer *o, const struct caad_flow *flows, size_t n)
{
	return flows && n == o->n_ret && ids_print(flows, n) == o->ret_print;
}

/* The given flows updated with those handed over: closed ones out, new
 * ones in, sorted. */
static int snapshot_merge(struct caad_observer *o, uint64_t now, struct caad_flow **flows, size_t *n, size_t *cap)
{
	struct merge m = { .o = o, .now_ns = now, .flows = *flows, .n = *n, .cap = *n, .n_sorted = *n };
	size_t u = 0;
	int r;

	m.gone = calloc(m.n_sorted ? m.n_sorted : 1, 1);
	if (!m.gone)
		return -ENOMEM;
	r = drain_recent(o, &m);
	*flows = m.flows; /* moved or not, the caller's to free */
	*cap = m.cap;
	if (r >= 0) {
		for (size_t i = 0; i < m.n; i++)
			if (i >= m.n_sorted || !m.gone[i])
				m.flows[u++] = m.flows[i];
		if (m.appended)
			caad_flows_sort(m.flows, u);
		if (m.n_closed && m.appended) {
			size_t k = 0;

			qsort(m.closed, m.n_closed, sizeof(*m.closed), caad_cmp_u64);
			for (size_t i = 0; i < u; i++) {
				size_t j = caad_lower_bound_u64(m.closed, m.n_closed, sizeof(*m.closed), 0, m.flows[i].id);

				if (j == m.n_closed || m.closed[j] != m.flows[i].id)
					m.flows[k++] = m.flows[i];
			}
			u = k;
		}
		*n = u;
	}
	free(m.gone);
	free(m.closed);
	return r;
}

/* A pass of the flows' iterator, into a new array. */
static int snapshot_full(struct caad_observer *o, uint64_t now, struct caad_flow **ret, size_t *ret_n,
                         size_t *ret_cap, uint64_t **ret_at)
{
	/* about as many as last time: no doubling past what is needed */
	size_t cap = o->n_prev + o->n_prev / 16 + 64, n = 0;
	_cleanup_free_ struct caad_flow *flows = NULL;
	int r;

	if (o->publish) {
		/* what was handed over before it: the pass has it all */
		r = drain_recent(o, NULL);
		if (r < 0)
			return r;
		o->publish_failed = caad_observer_counter(o, CAAD_COUNTER_PUBLISH_FAILED);
		o->full_ns = now;
	}
	flows = calloc(cap, sizeof(*flows));
	if (!flows)
		return -ENOMEM;
	r = read_flows(o, now, &flows, &cap, &n, ret_at);
	if (r < 0)
		return r;
	/* without memory to carry the read times along: the flows alone, all
	 * read as of the snapshot (as before the records said when) */
	if (caad_flows_sort_aux(flows, *ret_at, n) < 0) {
		free(TAKE_PTR(*ret_at));
		caad_flows_sort(flows, n);
	}
	*ret = TAKE_PTR(flows);
	*ret_n = n;
	*ret_cap = cap;
	return 0;
}

/* The flows, as the snapshot returns them: no repeats (the later of two
 * kept, and its at[]: NULL, none), and no slack of a shrinking table. */
static void snapshot_tidy(struct caad_flow **flows, size_t *n, size_t cap, uint64_t *at)
{
	struct caad_flow *f = *flows;
	size_t u = 0;

	/* an iteration that goes on past a bucket that changed (a socket
	 * made or closed) may see a flow twice, and a flow may be handed over
	 * twice: the later of the repeats (sorted stably) */
	for (size_t i = 0; i < *n; i++) {
		if (!(u > 0 && f[u - 1].id == f[i].id))
			u++;
		f[u - 1] = f[i];
		if (at)
			at[u - 1] = at[i];
	}
	if (u + 64 < cap) { /* give back the slack of a shrinking table */
		struct caad_flow *nf = reallocarray(f, u ? u : 1, sizeof(*f));
		if (nf)
			*flows = nf;
	}
	*n = u;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->at_ns < y->at_ns ? -1 : x->at_ns > y->at_ns;
}

/*
 * When the bytes of each of flows (n, sorted by id) were read, from the
 * samples of the records merged since the last rated snapshot (the latest
 * of a flow's); 0 for a flow not handed over since. NULL: no memory.
 */
static uint64_t *samples_at(struct caad_observer *o, const struct caad_flow *flows, size_t n)
{
	uint64_t *at = calloc(n ? n : 1, sizeof(*at));
	size_t j = 0;

	if (!at)
		return NULL;
	if (o->n_samples > 1)
		qsort(o->samples, o->n_samples, sizeof(*o->samples), cmp_sample);
	for (size_t i = 0; i < n; i++) {
		while (j < o->n_samples && o->samples[j].id < flows[i].id)
			j++;
		while (j < o->n_samples && o->samples[j].id == flows[i].id)
			at[i] = o->samples[j++].at_ns; /* the latest last */
	}
	return at;
}

/* The samples taken: none; their memory given back after a large drain
 * (100k flows handed over at once held 2 MiB until the next one). */
static void samples_reset(struct caad_observer *o)
{
	o->n_samples = 0;
	if (o->cap_samples > 4096) {
		free(o->samples);
		o->samples = NULL;
		o->cap_samples = 0;
	}
}

static int snapshot(struct caad_observer *o, struct caad_flow **ret, size_t *ret_n, bool early)
{
	_cleanup_free_ struct caad_flow *flows = *ret;
	size_t n = flows ? *ret_n : 0, cap = 0;
	uint64_t now = now_ns();
	_cleanup_free_ uint64_t *at = NULL; /* when each flow's bytes were read */
	uint64_t done;
	bool given, full, periodic, failed;
	int r;

	*ret = NULL;
	*ret_n = 0;
	o->snapshot_calls = 0;
	given = o->publish && given_back(o, flows, n);
	periodic = !o->full_ns || now - o->full_ns >= o->full_pass_ns;
	failed = o->publish && caad_observer_counter(o, CAAD_COUNTER_PUBLISH_FAILED) != o->publish_failed;
	/* early, and no prepare since the last one: the flows handed over
	 * since, no new generation and no new rates (the flows that were
	 * handed over just before the last snapshot have nothing new yet: as
	 * a due snapshot's, their rates would read 0 now and too high at the
	 * next one); a pass, where one is needed, but not the periodic one */
	early = early && given && !o->prepared && !failed;
	full = !early && (!given || periodic || failed);
	/* the programs hand each flow over again at its next read or
	 * data-ready, unless asked to just before */
	if (o->publish && !o->prepared && !early)
		o->skel->data_gen->scan_gen++;
	o->prepared = false;
	if (full) {
		uint64_t cpu = thread_cpu_ns();

		free(TAKE_PTR(flows));
		r = snapshot_full(o, now, &flows, &n, &cap, &at);
		if (o->publish)
			o->pass_cpu_ns = thread_cpu_ns() - cpu;
	} else
		r = snapshot_merge(o, now, &flows, &n, &cap);
	if (r < 0)
		return r;
	/* the rates' now: after the pass and the drain, whose records may be
	 * stamped after the snapshot began */
	done = now_ns();
	o->last_full = full;
	o->last_periodic = full && given && periodic && !failed;
	snapshot_tidy(&flows, &n, cap, at);

	if (!early) {
		uint64_t interval = o->prev_ns ? done - o->prev_ns : 0;

		/* a pass says when it read each flow's bytes; else the records
		 * merged since the last of these snapshots do */
		if (!full) {
			at = samples_at(o, flows, n);
			if (!at)
				return -ENOMEM;
		}
		samples_reset(o);
		/* a rate is kept two scan periods after its flow's last read */
		caad_flows_update_rates(flows, n, o->prev, o->n_prev, at, full, interval,
		                        2 * MAX(interval, o->period_ns), done);
		caad_flows_update_history(flows, n, o->prev, o->n_prev, o->prev_ns);

		/* keep the base of the next rates and consumer histories, in
		 * place of the last one (read for the last time above): at 100k
		 * flows the two side by side were 4.8 MB of caad's peak RSS */
		struct caad_flow_base *base = NULL;
		if (n) {
			base = reallocarray(o->prev, n, sizeof(*base));
			if (!base)
				return -ENOMEM;
		} else
			free(o->prev);
		o->prev = base;
		caad_flows_base(base, flows, at, n, done);
		o->n_prev = n;
		o->prev_ns = done;
	}
	o->n_ret = n;
	o->ret_print = ids_print(flows, n);

	*ret = TAKE_PTR(flows);
	*ret_n = n;
	return 0;
}

/* A snapshot, with its failures said once (and again every 10 minutes
 * while they go on) rather than at every scan, and the end of them. */
static int snapshot_said(struct caad_observer *o, struct caad_flow **ret, size_t *ret_n, bool early)
{
	uint64_t now = now_ns();
	int level = caad_logstreak_level(&o->snap_fails, now, LOG_ERR), r;
	uint32_t failed;

	if (o->snap_fails.fails && level != LOG_DEBUG)
		log_warning("The BPF flow table has not been readable for %" PRIu32 " scans; this one's failure:",
		            o->snap_fails.fails);
	o->snap_level = level;
	r = snapshot(o, ret, ret_n, early);
	o->snap_level = LOG_ERR;
	if (r < 0 && r != -ENOMEM)
		caad_logstreak_failed(&o->snap_fails, now, level);
	else if (r >= 0 && (failed = caad_logstreak_end(&o->snap_fails)))
		log_info("The BPF flow table is readable again, after %" PRIu32 " failed scans", failed);
	return r;
}

int caad_observer_snapshot(struct caad_observer *o, struct caad_flow **ret, size_t *ret_n)
{
	return snapshot_said(o, ret, ret_n, false);
}

int caad_observer_snapshot_early(struct caad_observer *o, struct caad_flow **ret, size_t *ret_n)
{
	return snapshot_said(o, ret, ret_n, true);
}

unsigned caad_observer_snapshot_fails(const struct caad_observer *o)
{
	return o ? o->snap_fails.fails : 0;
}

void caad_observer_pass_cost(const struct caad_observer *o, uint64_t *cpu_usec, uint64_t *every_usec)
{
	bool on = o && o->publish;

	*cpu_usec = on ? o->pass_cpu_ns / 1000 : 0;
	*every_usec = on ? o->full_pass_ns / 1000 : 0;
}

void caad_observer_set_scan_period(struct caad_observer *o, uint64_t period_usec)
{
	if (o)
		o->period_ns = period_usec * 1000;
}

void caad_observer_prepare(struct caad_observer *o)
{
	if (o && o->publish) {
		o->skel->data_gen->scan_gen++;
		o->prepared = true;
	}
}

bool caad_observer_hands_over(const struct caad_observer *o)
{
	return o && o->publish;
}

bool caad_observer_last_full(const struct caad_observer *o)
{
	return o && o->last_full;
}

bool caad_observer_last_periodic(const struct caad_observer *o)
{
	return o && o->last_periodic;
}

_Static_assert(CAAD_STAY_CPUS == CAAD_CPUS_MAX, "the stay map's CPU sets are caad_cpumasks");

static bool has_id(const uint64_t *ids, size_t n, uint64_t id)
{
	size_t i = caad_lower_bound_u64(ids, n, sizeof(*ids), 0, id);

	return i < n && ids[i] == id;
}

int caad_observer_set_stay(struct caad_observer *o, const uint64_t *ids, const struct caad_cpumask *cpus, size_t n)
{
	int fd = bpf_map__fd(o->skel->maps.stay);
	_cleanup_free_ uint64_t *kept = NULL;
	size_t n_kept = 0;
	int r = 0;

	assert(ids || n == 0);
	n = MIN(n, (size_t)CAAD_STAY_MAX);
	for (size_t i = 1; i < n; i++)
		assert(ids[i - 1] < ids[i]);
	kept = malloc((n ? n : 1) * sizeof(*kept));
	if (!kept)
		return -ENOMEM;

	/* the flows no longer steered first: room for the new ones */
	for (size_t i = 0; i < o->n_stay; i++)
		if (!has_id(ids, n, o->stay_ids[i]))
			(void)bpf_map_delete_elem(fd, &o->stay_ids[i]); /* or BPF dropped it */
	for (size_t i = 0; i < n; i++) {
		struct caad_stay v;

		_Static_assert(sizeof(v.cpus) == sizeof(cpus[i].w), "one layout");
		memcpy(v.cpus, cpus[i].w, sizeof(v.cpus));
		if (bpf_map_update_elem(fd, &ids[i], &v, BPF_ANY) < 0) {
			r = log_debug_errno(errno, "Failed to follow flow %#" PRIx64 "'s reader: %m",
			                    caad_flow_public_id(ids[i]));
			continue;
		}
		kept[n_kept++] = ids[i];
	}
	free(o->stay_ids);
	o->stay_ids = TAKE_PTR(kept);
	o->n_stay = n_kept;
	return r;
}

unsigned caad_observer_take_left(struct caad_observer *o)
{
	unsigned n = o ? o->consumers_left : 0;

	if (o)
		o->consumers_left = 0;
	return n;
}

uint64_t caad_observer_left_total(const struct caad_observer *o)
{
	return o ? o->consumers_left_total : 0;
}

unsigned caad_observer_snapshot_calls(const struct caad_observer *o)
{
	return o ? o->snapshot_calls : 0;
}

enum caad_flow_iter caad_observer_flow_iter(const struct caad_observer *o)
{
	return o->flow_iter;
}

enum caad_observer_hooks caad_observer_hooks(const struct caad_observer *o)
{
	return o->hooks;
}

int caad_observer_counter_read(struct caad_observer *o, enum caad_counter c, uint64_t *ret)
{
	__u32 key = c;
	uint64_t sum = 0;
	_cleanup_free_ uint64_t *vals = calloc((size_t)o->n_cpus, sizeof(uint64_t));

	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.counters), &key, vals) < 0)
		return -errno;
	for (int i = 0; i < o->n_cpus; i++)
		sum += vals[i];
	*ret = sum;
	return 0;
}

uint64_t caad_observer_counter(struct caad_observer *o, enum caad_counter c)
{
	uint64_t v;

	if ((unsigned)c >= CAAD_COUNTER_MAX)
		return 0;
	/* a read that fails (no memory) gives the last one: a Prometheus
	 * counter that read 0 for a scrape would count as reset */
	if (caad_observer_counter_read(o, c, &v) == 0 && v >= o->counter_last[c])
		o->counter_last[c] = v;
	return o->counter_last[c];
}

/* The watched thread's se.sum_exec_runtime, from the task iterator (one
 * walk over the machine's tasks); -ESRCH when it is gone. */
static int read_thread_sum(struct caad_observer *o, uint64_t *ret)
{
	struct bpf_link *link = o->skel->links.caad_thread_time;
	_cleanup_close_ int fd = -1;
	uint64_t buf[4];
	size_t got = 0;

	if (!link)
		return -EOPNOTSUPP;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, (char *)buf + got, sizeof(buf) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0 || (got += (size_t)n) == sizeof(buf))
			break;
	}
	if (got != sizeof(uint64_t))
		return -ESRCH; /* a TID is one task: none, or a torn read */
	*ret = buf[0];
	return 0;
}

void caad_observer_watch_thread(struct caad_observer *o, uint32_t tid)
{
	int r;

	if (!o || o->skel->bss->watch_tid == tid)
		return;
	if (!tid)
		softirq_detach(o);
	else if ((r = softirq_attach(o)) < 0)
		log_warning_errno(r, "Failed to attach the softirq programs: thread %u's NET_RX time is not counted: %m",
		                  tid);
	else {
		/* a NET_RX that spanned the last detach left its start time on
		 * its CPU: one that spans this attach would count from it */
		__u32 zero = 0;
		_cleanup_free_ uint64_t *none = calloc((size_t)o->n_cpus, sizeof(uint64_t));

		if (none && bpf_map_update_elem(bpf_map__fd(o->skel->maps.in_net_rx), &zero, none, BPF_ANY) < 0)
			log_debug_errno(errno, "Failed to clear the NET_RX start times: %m");
	}
	__atomic_store_n(&o->skel->bss->watch_tid, tid, __ATOMIC_RELEASE);
	o->thread_ns_last = 0;
	o->thread_base = 0;
	o->thread_base_known = false;
	if (!tid)
		return;
	r = read_thread_sum(o, &o->thread_base);
	if (r < 0)
		log_debug_errno(r, "Failed to read thread %u's CPU time at the start of its watch: %m", tid);
	else
		o->thread_base_known = true;
}

void caad_observer_set_napi_threads(struct caad_observer *o, bool on)
{
	if (o)
		__atomic_store_n(&o->skel->bss->napi_threads, on ? 1u : 0u, __ATOMIC_RELAXED);
}

void caad_observer_set_min_flow_bytes(struct caad_observer *o, uint32_t bytes)
{
	if (!o)
		return;
	/* lowered: the floor first (the mark's release orders it), so that
	 * no entry is made under a floor that still says there is none */
	if (bytes < o->skel->data_gen->follow_floor)
		__atomic_store_n(&o->skel->data_gen->follow_floor, bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&o->skel->data_gen->min_flow_bytes, bytes, __ATOMIC_RELEASE);
}

int caad_observer_net_rx_ns(struct caad_observer *o, uint64_t *ret)
{
	uint64_t ns, on = 0;
	int r;

	*ret = 0;
	if (!o)
		return 0;
	/* a thread watched without the programs that time NET_RX (their
	 * attach failed): the counters stand still, and a placement that
	 * moves NET_RX off the thread's core would look cheaper than it is */
	if (o->skel->bss->watch_tid && (!o->softirq[0] || !o->softirq[1]))
		return -ENOLINK;
	r = caad_observer_counter_read(o, CAAD_COUNTER_NET_RX_NS, &ns);
	if (r >= 0 && o->irq_time)
		r = caad_observer_counter_read(o, CAAD_COUNTER_NET_RX_ON_WATCHED_NS, &on);
	if (r < 0)
		return r;
	*ret = ns + on;
	return 0;
}

uint64_t caad_observer_thread_ns(struct caad_observer *o)
{
	uint64_t sum;
	int r;

	if (o)
		o->thread_failed = false;
	if (!o || !o->skel->bss->watch_tid)
		return o ? o->thread_ns_last : 0;
	r = read_thread_sum(o, &sum);
	if (r < 0) {
		/* gone (its time stays what was read last), or no iterator */
		if (r != -ESRCH && !o->thread_warned) {
			log_warning_errno(r, "Failed to read thread %u's CPU time: %m", o->skel->bss->watch_tid);
			o->thread_warned = true;
		}
		o->thread_failed = r != -ESRCH;
		return o->thread_ns_last;
	}
	if (!o->thread_base_known) { /* it appeared after the watch began */
		o->thread_base = sum;
		o->thread_base_known = true;
	}
	if (sum >= o->thread_base && sum - o->thread_base > o->thread_ns_last)
		o->thread_ns_last = sum - o->thread_base;
	return o->thread_ns_last;
}

bool caad_observer_thread_ns_failed(const struct caad_observer *o)
{
	return o && o->thread_failed;
}
