/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The D-Bus API: org.caad1 at /org/caad1, interface org.caad1.Manager, on
 * the system bus, dispatched by the daemon's sd-event loop. It only reads
 * the daemon's last scan and calls the daemon's own operations (reload,
 * mode, placement, pause, restore): no logic of its own; the method arguments are read
 * and checked by src/lib/busargs.c. docs/dbus.md is the contract;
 * dbus/org.caad1.Manager.xml is its introspection, checked by
 * tests/integration/dbus.sh against this vtable.
 *
 * Reads are open to everyone; every method that changes what caad does
 * checks that the caller's effective uid is 0, here and in the bus policy
 * (dbus/org.caad1.conf).
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "caad-config.h"
#include "caad/apply.h"
#include "caad/busargs.h"
#include "caad/config.h"
#include "caad/inventory.h"
#include "caad/log.h"
#include "caad/metrics.h"
#include "caad/observe.h"
#include "caad/plan.h"
#include "caad/topology.h"
#include "caad/utf8.h"
#include "daemon.h"
#include "dbus.h"

#define BUS_NAME "org.caad1"
#define BUS_PATH "/org/caad1"
#define BUS_INTERFACE "org.caad1.Manager"
#define ERROR_INVALID_CONFIG "org.caad1.Error.InvalidConfig"
#define ERROR_RESTORE_FAILED "org.caad1.Error.RestoreFailed"
#define RETRY_USEC (5 * UINT64_C(1000000))

struct caad_bus {
	struct daemon *d;
	sd_bus *bus;             /* NULL while there is no connection */
	sd_event_source *retry;  /* reconnect timer */
	bool serving;            /* the name is ours */
	bool down;               /* "no bus" was logged: say so once, and when it is back */
	/* what the emits-change properties last were */
	enum caad_mode mode;
	enum caad_placement placement;
	bool paused;
	char *interfaces;        /* names, space-separated */
};

/* D-Bus strings must be valid UTF-8, and a thread name or an interface name
 * can be any bytes: a sanitized copy of s in buf. */
static const char *clean(char *buf, size_t size, const char *s)
{
	snprintf(buf, size, "%s", s ? s : "");
	return caad_utf8_sanitize(buf, false);
}

static void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* ---- what the daemon knows, read for the API ---- */

/* "local <- remote" split into destination and source. */
static void flow_endpoints(const struct caad_flow *f, char *src, char *dst, size_t size)
{
	char tuple[128];
	const char *arrow;

	caad_flow_format_tuple(f, tuple, sizeof(tuple));
	arrow = strstr(tuple, " <- ");
	if (!arrow) {
		snprintf(src, size, "?");
		snprintf(dst, size, "?");
		return;
	}
	snprintf(dst, size, "%.*s", (int)(arrow - tuple), tuple);
	snprintf(src, size, "%s", arrow + strlen(" <- "));
}

/* The names of interfaces caad does not manage (loopback, a container's
 * veth) that one reply asked the kernel for: each if_indextoname() is a
 * socket and an ioctl, about 4.5 us on the 2-vCPU test machine, 75 ms of
 * the event loop for a reply of 16384 flows on loopback. */
struct ifname_cache {
	size_t n;
	int ifindex[8];
	char name[8][IF_NAMESIZE]; /* "": none has it */
};

static void flow_iface(const struct daemon *d, const struct caad_flow *f, struct ifname_cache *cache,
                       char buf[static IF_NAMESIZE])
{
	const struct caad_iface *ifc = d->inv ? caad_inventory_find_ifindex(d->inv, f->ifindex) : NULL;
	size_t i;

	if (ifc) {
		snprintf(buf, IF_NAMESIZE, "%s", ifc->name);
		caad_utf8_sanitize(buf, false);
		return;
	}
	buf[0] = '\0';
	if (f->ifindex <= 0)
		return;
	for (i = 0; cache && i < cache->n; i++)
		if (cache->ifindex[i] == f->ifindex) {
			memcpy(buf, cache->name[i], IF_NAMESIZE);
			return;
		}
	if (!if_indextoname((unsigned)f->ifindex, buf))
		buf[0] = '\0';
	caad_utf8_sanitize(buf, false);
	if (cache && cache->n < ARRAY_SIZE(cache->ifindex)) {
		cache->ifindex[cache->n] = f->ifindex;
		memcpy(cache->name[cache->n++], buf, IF_NAMESIZE);
	}
}

/* Why a flow has no decision. */
static void undecided_reason(const struct daemon *d, const struct caad_flow *f, char *buf, size_t size)
{
	if (d->config.mode == CAAD_MODE_OBSERVE)
		snprintf(buf, size, "observe mode: nothing is planned");
	else if (!d->plan)
		snprintf(buf, size, "%s: nothing is planned", d->no_plan ?: "no scan yet");
	else if (!d->inv || !caad_inventory_find_flow(d->inv, f->ifindex, f->napi_id))
		snprintf(buf, size, "not on a managed interface");
	/* the planner's own test: too slow (a steered flow keeps its place
	 * down to half the threshold), or too young */
	else if (!caad_plan_light_reason(f, &d->config.policy, d->plan, d->plan->now_ns, buf, size))
		snprintf(buf, size, "not heavy");
}

/* The flow that goes by public_id (caad_flow_public_id()) outside caad. */
static const struct caad_flow *find_flow(const struct daemon *d, uint64_t public_id)
{
	for (size_t i = 0; i < d->n_flows; i++)
		if (caad_flow_public_id(d->flows[i].id) == public_id)
			return &d->flows[i];
	return NULL;
}

static int check_root(sd_bus_message *m, const char *method, sd_bus_error *error)
{
	_cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
	uid_t euid;
	pid_t pid = 0;
	int r;

	/* From the bus (the broker's SO_PEERCRED of the caller), never
	 * augmented from /proc/PID: a PID read there may be reused by another
	 * process by then (sd_bus_query_sender_creds(3)) */
	r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID, &creds);
	if (r >= 0 && (sd_bus_creds_get_augmented_mask(creds) & SD_BUS_CREDS_EUID))
		r = -EPERM;
	if (r >= 0)
		r = sd_bus_creds_get_euid(creds, &euid);
	if (r < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
		                         "%s() changes what caad does, and the caller's user is unknown (%s): denied",
		                         method, strerror(-r));
	(void)sd_bus_creds_get_pid(creds, &pid);
	if (euid != 0) {
		log_notice("D-Bus: %s() refused to uid %u (pid %d): only root may change what caad does", method,
		           (unsigned)euid, (int)pid);
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
		                         "%s() changes what caad does: only root may call it, the caller is uid %u",
		                         method, (unsigned)euid);
	}
	log_info("D-Bus: %s() by uid 0 (pid %d)", method, (int)pid);
	return 0;
}

/* ---- properties ---- */

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	return sd_bus_message_append(reply, "s", CAAD_VERSION);
}

static int property_get_mode(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct daemon *d = userdata;

	return sd_bus_message_append(reply, "s", caad_mode_to_string(d->config.mode));
}

static int property_get_placement(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct daemon *d = userdata;

	return sd_bus_message_append(reply, "s", caad_placement_to_string(d->config.placement));
}

static int property_get_paused(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct daemon *d = userdata;

	return sd_bus_message_append(reply, "b", (int)d->paused);
}

static int property_get_interfaces(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct daemon *d = userdata;
	int r;

	r = sd_bus_message_open_container(reply, 'a', "s");
	for (size_t i = 0; r >= 0 && d->inv && i < d->inv->n_ifaces; i++) {
		char name[IF_NAMESIZE];
		r = sd_bus_message_append(reply, "s", clean(name, sizeof(name), d->inv->ifaces[i].name));
	}
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

static const struct {
	const char *property;
	size_t offset; /* in struct caad_metrics */
} counters[] = {
	{ "FlowsSeen", offsetof(struct caad_metrics, flows_seen) },
	{ "FlowsHeavy", offsetof(struct caad_metrics, flows_heavy) },
	{ "FlowsSteered", offsetof(struct caad_metrics, flows_steered) },
	{ "Moves", offsetof(struct caad_metrics, moves) },
	{ "Errors", offsetof(struct caad_metrics, errors) },
	{ "Scans", offsetof(struct caad_metrics, scans) },
	{ "LastPlanUSec", offsetof(struct caad_metrics, last_plan_usec) },
	{ "LastScanTimestamp", offsetof(struct caad_metrics, last_scan_timestamp_usec) },
	{ "ScanPeriodUSec", offsetof(struct caad_metrics, scan_period_usec) },
	{ "ScanCPUUSec", offsetof(struct caad_metrics, scan_cpu_usec) },
};

/* The numbers are those of GetMetrics: one source for both. */
static int property_get_counter(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct caad_metrics m;

	daemon_fill_counters(userdata, &m);
	for (size_t i = 0; i < ARRAY_SIZE(counters); i++)
		if (streq(counters[i].property, property))
			return sd_bus_message_append(reply, "t", *(const uint64_t *)((const char *)&m + counters[i].offset));
	return -ENOENT;
}

/* ---- methods that read ---- */

/*
 * dbus-daemon drops the connection that sends a message over its
 * max_message_size (32 MiB by default): a ListFlows reply of some 150k
 * flows would take caad off the bus, at any user's call. Replies stay
 * under this, counted as marshalled (each struct 8-aligned, each string
 * its 4-byte length, bytes and NUL, each number its size, with padding).
 */
#define REPLY_MAX (24u << 20)
static size_t wire_size(const char *const strs[], size_t n_strs, size_t fixed)
{
	size_t z = 8 + fixed; /* struct alignment, numbers */

	for (size_t i = 0; i < n_strs; i++)
		z += 4 + strlen(strs[i]) + 1 + 3; /* length, bytes, NUL, padding to 4 */
	return z;
}

static int method_list_flows(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct daemon *d = userdata;
	struct ifname_cache names = {};
	size_t size = 0;
	int r;

	r = sd_bus_message_new_method_return(m, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(ssisssuiittiss)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < d->n_flows; i++) {
		const struct caad_flow *f = &d->flows[i];
		const struct caad_decision *dec = caad_plan_find(d->plan, f->id);
		char id[32], ifname[IF_NAMESIZE], src[80], dst[80], comm[CAAD_COMM_LEN], reason[CAAD_DECISION_TEXT_MAX];

		snprintf(id, sizeof(id), "%#" PRIx64, caad_flow_public_id(f->id));
		flow_iface(d, f, &names, ifname);
		flow_endpoints(f, src, dst, sizeof(src));
		if (dec)
			clean(reason, sizeof(reason), dec->reason);
		else
			undecided_reason(d, f, reason, sizeof(reason));
		const char *relation = caad_relation_to_string(dec ? dec->relation : CAAD_RELATION_UNSTEERED);
		const char *strs[] = { id, ifname, src, dst, clean(comm, sizeof(comm), f->comm), relation,
			               caad_utf8_sanitize(reason, false) };
		size += wire_size(strs, ARRAY_SIZE(strs), 5 * 4 + 2 * 8 + 4);
		if (size > REPLY_MAX)
			return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
			                         "%zu flows do not fit in one D-Bus reply (%u MiB at most: %zu did); "
			                         "lower MaxFlows= to list them",
			                         d->n_flows, REPLY_MAX >> 20, i);
		r = sd_bus_message_append(reply, "(ssisssuiittiss)", strs[0], strs[1], f->rx_queue, strs[2], strs[3],
		                          strs[4], f->tid, f->consumer_cpu, f->proc_cpu, f->rate_bps, f->bytes,
		                          dec ? dec->steer_cpu : -1, strs[5], strs[6]);
		if (r < 0)
			return r;
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

static int method_list_queues(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct daemon *d = userdata;
	int r;

	r = sd_bus_message_new_method_return(m, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(suiubssss)");
	if (r < 0)
		return r;
	for (size_t i = 0; d->inv && i < d->inv->n_ifaces; i++) {
		const struct caad_iface *ifc = &d->inv->ifaces[i];
		char ifname[IF_NAMESIZE];

		clean(ifname, sizeof(ifname), ifc->name);
		for (unsigned q = 0; q < ifc->n_rx; q++) {
			const struct caad_queue *rq = &ifc->rx[q];
			struct caad_cpumask target;
			/* what the last plan wants for the queue, as in the metrics */
			const char *mechanism = daemon_queue_target(d, i, rq->index, &target);
			/* each fits (CAAD_CPULIST_MAX): "" is "none" here, never "too long" */
			static char irq_cpus[CAAD_CPULIST_MAX], rps_cpus[CAAD_CPULIST_MAX], target_cpus[CAAD_CPULIST_MAX];

			irq_cpus[0] = rps_cpus[0] = target_cpus[0] = '\0';
			if (rq->has_irq_affinity)
				(void)caad_cpumask_format_list(&rq->irq_affinity, irq_cpus, sizeof(irq_cpus));
			if (rq->has_rps)
				(void)caad_cpumask_format_list(&rq->rps, rps_cpus, sizeof(rps_cpus));
			if (mechanism)
				(void)caad_cpumask_format_list(&target, target_cpus, sizeof(target_cpus));
			r = sd_bus_message_append(reply, "(suiubssss)", ifname, rq->index, rq->irq, rq->napi_id,
			                          (int)rq->irq_managed, irq_cpus, rps_cpus, target_cpus,
			                          mechanism ?: "");
			if (r < 0)
				return r;
		}
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

/* Reply with the text format(d, f) writes (JSON), or what failed. */
static int reply_formatted(sd_bus_message *m, const struct daemon *d, int (*format)(const struct daemon *, FILE *),
                           const char *what, sd_bus_error *error)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	r = format(d, f);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "Failed to describe the %s: %m", what);
	return sd_bus_reply_method_return(m, "s", caad_utf8_sanitize(text, true));
}

static int format_topology(const struct daemon *d, FILE *f)
{
	return caad_topology_to_json(d->topo, d->inv, f);
}

static int method_get_topology(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return reply_formatted(m, userdata, format_topology, "topology", error);
}

static int method_get_trials(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return reply_formatted(m, userdata, closed_loop_format, "trials", error);
}

/* Whether a steering value (IRQ, RPS, kthread) of queue `queue` of iface
 * in the plan is left to someone else now: then the queue is left as it is
 * (caad_actuator_apply()), its other values too. */
static bool queue_left(const struct daemon *d, int iface, unsigned queue)
{
	for (size_t k = 0; k < d->plan->n_settings; k++) {
		const struct caad_setting *s = &d->plan->settings[k];

		if (s->iface == iface && s->queue == queue && !s->restore &&
		    (s->kind == CAAD_SETTING_IRQ_AFFINITY || s->kind == CAAD_SETTING_RPS_CPUS ||
		     s->kind == CAAD_SETTING_KTHREAD_AFFINITY) &&
		    caad_actuator_setting_state(d->actuator, d->inv, s, NULL) == CAAD_SETTING_BACKED_OFF)
			return true;
	}
	return false;
}

/* Whether the values a steered flow's decision rests on read as planned, now. */
static void explain_applied(const struct daemon *d, const struct caad_decision *dec, FILE *f)
{
	static const char *const why[] = {
		[CAAD_SETTING_PENDING] = "reads otherwise now: written at the next scan",
		[CAAD_SETTING_BACKED_OFF] = "changed by someone else since caad wrote it: left alone",
		[CAAD_SETTING_REFUSED] = "the kernel refused it (caad's log says why)",
	};
	unsigned in_place = 0, other = 0;

	if (d->config.mode != CAAD_MODE_ENFORCE || d->paused) {
		fprintf(f, "  applied:     no: %s\n", d->config.mode == CAAD_MODE_DRY_RUN ? "dry-run mode writes nothing"
		                                      : d->config.mode == CAAD_MODE_OBSERVE ? "observe mode writes nothing"
		                                                                            : "paused");
		return;
	}
	for (size_t k = 0; d->plan && d->inv && k < d->plan->n_settings; k++) {
		const struct caad_setting *s = &d->plan->settings[k];
		_cleanup_free_ char *label = NULL;
		enum caad_setting_state st;

		if (s->iface != dec->iface || (dec->queue >= 0 && s->queue != (unsigned)dec->queue))
			continue;
		st = caad_actuator_setting_state(d->actuator, d->inv, s, &label);
		if (st == CAAD_SETTING_IN_PLACE)
			in_place++;
		else if (st != CAAD_SETTING_UNKNOWN && label) {
			if (!other++)
				fputs("  applied:     not all of it:\n", f);
			fprintf(f, "               %s %s\n", label,
			        st == CAAD_SETTING_PENDING && !s->restore && s->kind != CAAD_SETTING_NTUPLE_RULE &&
			                        s->kind != CAAD_SETTING_RFS_TABLE && queue_left(d, s->iface, s->queue)
			                ? "reads otherwise now: left as it is with its queue, part of which someone else holds"
			                : why[st]);
		}
	}
	if (!other)
		fprintf(f, "  applied:     %s\n", in_place ? "yes: its values read as planned" : "nothing to read back");
}

static int method_explain(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct daemon *d = userdata;
	_cleanup_free_ char *text = NULL;
	_cleanup_(fclosep) FILE *f = NULL;
	struct caad_busargs_explain args;
	const struct caad_flow *fl;
	const struct caad_decision *dec;
	char ifname[IF_NAMESIZE], src[80], dst[80], comm[CAAD_COMM_LEN], reason[CAAD_DECISION_TEXT_MAX];
	size_t len = 0;
	int r;

	r = caad_busargs_read_explain(m, &args, error);
	if (r < 0)
		return r;
	fl = find_flow(d, args.flow_id);
	if (!fl)
		return caad_busargs_no_such_flow(&args, error);
	dec = caad_plan_find(d->plan, fl->id);

	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	flow_iface(d, fl, NULL, ifname);
	flow_endpoints(fl, src, dst, sizeof(src));
	fprintf(f, "Flow %#" PRIx64 ": %s <- %s\n", caad_flow_public_id(fl->id), dst, src);
	fprintf(f, "  received on: %s", *ifname ? ifname : "an unknown interface");
	if (fl->rx_queue >= 0)
		fprintf(f, " rx-%d\n", fl->rx_queue);
	else
		fputs(", rx queue not recorded by the kernel\n", f);
	fprintf(f, "  consumer:    %s, pid %u, thread %u", clean(comm, sizeof(comm), fl->comm), fl->pid, fl->tid);
	if (fl->consumer_cpu >= 0)
		fprintf(f, ", reading on CPU %d\n", fl->consumer_cpu);
	else
		fputs(", CPU not known yet\n", f);
	if (fl->proc_cpu >= 0)
		fprintf(f, "  processing:  CPU %d (NET_RX softirq)\n", fl->proc_cpu);
	else
		fputs("  processing:  not seen in NET_RX softirq yet\n", f);
	fprintf(f, "  rate:        %.3f Gbit/s, %" PRIu64 " bytes read\n", fl->rate_bps / 1e9, fl->bytes);
	if (dec && dec->steer_cpu >= 0)
		fprintf(f, "  decision:    steer to CPU %d (%s)\n", dec->steer_cpu,
		        caad_relation_to_string(dec->relation));
	else if (dec && dec->host)
		fputs("  decision:    left to the host's own steering (host-steering): its queue as caad found it\n", f);
	else if (dec)
		fputs("  decision:    heavy, left alone\n", f);
	else
		fputs("  decision:    none\n", f);
	if (dec)
		clean(reason, sizeof(reason), dec->reason);
	else
		undecided_reason(d, fl, reason, sizeof(reason));
	fprintf(f, "  reason:      %s\n", reason);
	if (dec && dec->held)
		fputs("  hysteresis:  kept its previous target\n", f);
	if (dec && dec->considered && *dec->considered) {
		char considered[CAAD_DECISION_TEXT_MAX];
		fprintf(f, "  considered:  %s\n", clean(considered, sizeof(considered), dec->considered));
	}
	if (dec && (dec->steer_cpu >= 0 || dec->host))
		explain_applied(d, dec, f);
	r = fclose(TAKE_PTR(f)) != 0 ? -ENOMEM : 0;
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(m, "s", caad_utf8_sanitize(text, true));
}

static int method_get_metrics(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	_cleanup_free_ char *text = NULL;
	int r;

	/* the text of MetricsFile= too */
	r = daemon_metrics_text(userdata, &text);
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(m, "s", caad_utf8_sanitize(text, true));
}

/* ---- methods that change what caad does: root only ---- */

static int method_reload(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct daemon *d = userdata;
	_cleanup_free_ char *why = NULL;
	int r;

	r = check_root(m, "Reload", error);
	if (r < 0)
		return r;
	r = daemon_reload(d, &why);
	if (r == -ENOMEM)
		return r;
	if (r > 0) /* reloaded, but leaving enforce mode did not restore everything */
		return sd_bus_error_setf(error, ERROR_RESTORE_FAILED, "%s",
		                         why ? why : "Reloaded, but values caad wrote could not all be restored");
	if (r < 0)
		return sd_bus_error_setf(error, ERROR_INVALID_CONFIG, "%s; the running configuration is kept",
		                         why ? caad_utf8_sanitize(why, true) : "The configuration has errors (see the log)");
	return sd_bus_reply_method_return(m, NULL);
}

static int method_set_mode(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct daemon *d = userdata;
	struct caad_busargs_set_mode args;
	int r;

	/* the caller's rights first: an unprivileged caller learns nothing of its arguments */
	r = check_root(m, "SetMode", error);
	if (r < 0)
		return r;
	r = caad_busargs_read_set_mode(m, &args, error);
	if (r < 0)
		return r;
	r = daemon_set_mode(d, args.mode);
	/* the error Reload and RestoreAll give for the same failure; any
	 * error, no memory included, comes after the mode changed: said so */
	if (r < 0)
		return sd_bus_error_setf(error, ERROR_RESTORE_FAILED,
		                         "Mode %s set, but some values caad wrote could not be restored (see the log)",
		                         caad_mode_to_string(args.mode));
	return sd_bus_reply_method_return(m, NULL);
}

static int method_set_placement(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct caad_busargs_set_placement args;
	int r;

	/* as SetMode: the caller's rights before its arguments */
	r = check_root(m, "SetPlacement", error);
	if (r < 0)
		return r;
	r = caad_busargs_read_set_placement(m, &args, error);
	if (r < 0)
		return r;
	/* until the next reload or restart, which apply Placement= again */
	daemon_set_placement(userdata, args.placement);
	return sd_bus_reply_method_return(m, NULL);
}

/* Pause and Resume: the method's name says which. */
static int method_pause_resume(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	bool pause = streq(sd_bus_message_get_member(m), "Pause");
	int r = check_root(m, pause ? "Pause" : "Resume", error);

	if (r < 0)
		return r;
	daemon_set_paused(userdata, pause);
	return sd_bus_reply_method_return(m, NULL);
}

static int method_restore_all(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	int r = check_root(m, "RestoreAll", error);

	if (r < 0)
		return r;
	/* paused before it restores: any error (no memory included) leaves
	 * caad paused, which the caller must learn, not a bare NoMemory */
	r = daemon_restore_all(userdata);
	if (r < 0)
		return sd_bus_error_setf(error, ERROR_RESTORE_FAILED,
		                         "Some values could not be restored (see the log); caad is paused");
	return sd_bus_reply_method_return(m, NULL);
}

/* Every method is marked unprivileged so that sd-bus's own check (which
 * wants CAP_SYS_ADMIN) stays out of the way: check_root() decides, with a
 * message that says why. */
static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Mode", "s", property_get_mode, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Placement", "s", property_get_placement, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Paused", "b", property_get_paused, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Interfaces", "as", property_get_interfaces, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	/* these change every scan: read them, no signal */
	SD_BUS_PROPERTY("FlowsSeen", "t", property_get_counter, 0, 0),
	SD_BUS_PROPERTY("FlowsHeavy", "t", property_get_counter, 0, 0),
	SD_BUS_PROPERTY("FlowsSteered", "t", property_get_counter, 0, 0),
	SD_BUS_PROPERTY("Moves", "t", property_get_counter, 0, 0),
	SD_BUS_PROPERTY("Errors", "t", property_get_counter, 0, 0),
	SD_BUS_PROPERTY("Scans", "t", property_get_counter, 0, 0),
	SD_BUS_PROPERTY("LastPlanUSec", "t", property_get_counter, 0, 0),
	SD_BUS_PROPERTY("LastScanTimestamp", "t", property_get_counter, 0, 0),
	SD_BUS_PROPERTY("ScanPeriodUSec", "t", property_get_counter, 0, 0),
	SD_BUS_PROPERTY("ScanCPUUSec", "t", property_get_counter, 0, 0),

	SD_BUS_METHOD_WITH_ARGS("ListFlows", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ssisssuiittiss)", flows),
	                        method_list_flows, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListQueues", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(suiubssss)", queues),
	                        method_list_queues, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetTopology", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json), method_get_topology,
	                        SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetTrials", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", json), method_get_trials,
	                        SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Explain", SD_BUS_ARGS("s", flow_id), SD_BUS_RESULT("s", text), method_explain,
	                        SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetMetrics", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", prometheus_text),
	                        method_get_metrics, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Reload", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_reload,
	                        SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SetMode", SD_BUS_ARGS("s", mode), SD_BUS_NO_RESULT, method_set_mode,
	                        SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SetPlacement", SD_BUS_ARGS("s", placement), SD_BUS_NO_RESULT, method_set_placement,
	                        SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Pause", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_pause_resume, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Resume", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_pause_resume, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("RestoreAll", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_restore_all,
	                        SD_BUS_VTABLE_UNPRIVILEGED),

	SD_BUS_SIGNAL_WITH_ARGS("FlowSteered", SD_BUS_ARGS("s", flow_id, "i", steer_cpu, "s", relation), 0),
	SD_BUS_SIGNAL_WITH_ARGS("PlanApplied", SD_BUS_ARGS("u", changed, "t", plan_usec), 0),
	SD_BUS_SIGNAL_WITH_ARGS("TrialFinished", SD_BUS_ARGS("u", trial, "s", verdict), 0),
	SD_BUS_VTABLE_END,
};

/* ---- the connection ---- */

static void bus_retry_later(struct caad_bus *b, int r, const char *what)
{
	uint64_t now = 0;

	b->serving = false;
	if (!b->down)
		log_warning_errno(r, "%s (%m): running without the D-Bus API, retrying every %" PRIu64 " s", what,
		                  RETRY_USEC / 1000000);
	b->down = true;
	if (sd_event_now(b->d->event, CLOCK_MONOTONIC, &now) < 0 ||
	    sd_event_source_set_time(b->retry, now + RETRY_USEC) < 0 ||
	    sd_event_source_set_enabled(b->retry, SD_EVENT_ONESHOT) < 0)
		log_error("Cannot schedule reconnecting to the system D-Bus: the D-Bus API stays off");
}

static void name_owned(struct caad_bus *b);

/*
 * The name refused by the bus policy to a caad run as another user than
 * root (a drop-in's User=): the shipped policy lets root alone own it. A
 * message that says what to add (true), or false: not that case.
 */
static bool not_owner_msg(int r, char *msg, size_t size)
{
	uid_t uid = geteuid();

	if ((r != EACCES && r != -EACCES && r != EPERM && r != -EPERM) || uid == 0)
		return false;
	snprintf(msg, size,
	         "Cannot own %s on the system D-Bus: its bus policy lets root alone own it, and caad runs as uid %u; "
	         "allow that user in a file in /etc/dbus-1/system.d/ (caad(8), section SAFETY)",
	         BUS_NAME, (unsigned)uid);
	return true;
}

/* The reply to RequestName: an error (the policy forbids it), or a code. */
static int on_name(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct caad_bus *b = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	char msg[512];
	uint32_t code = 0;

	if (e) {
		int r = sd_bus_error_get_errno(e) ?: EACCES;

		if (!not_owner_msg(r, msg, sizeof(msg)))
			snprintf(msg, sizeof(msg), "Cannot own %s on the system D-Bus: %s", BUS_NAME,
			         e->message ? e->message : e->name);
		bus_retry_later(b, r, msg);
		return 0;
	}
	if (sd_bus_message_read(m, "u", &code) < 0 ||
	    (code != 1 /* primary owner */ && code != 4 /* already the owner */)) {
		snprintf(msg, sizeof(msg), "Cannot own %s on the system D-Bus: another process has it", BUS_NAME);
		bus_retry_later(b, EEXIST, msg);
		return 0;
	}
	name_owned(b);
	return 0;
}

static void name_owned(struct caad_bus *b)
{
	b->serving = true;
	if (b->down)
		log_info("D-Bus API back on the system bus as %s", BUS_NAME);
	else
		log_info("D-Bus API on the system bus as %s", BUS_NAME);
	b->down = false;
	caad_bus_sync_properties(b);
}

/* sd-bus turns a lost connection into this local signal. */
static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct caad_bus *b = userdata;

	if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected"))
		bus_retry_later(b, ECONNRESET, "Lost the system D-Bus");
	return 0;
}

/*
 * Connect and ask for the name: at start (wait) until the bus answers, so
 * that READY=1, which follows, means that the API is there (the unit has
 * no BusName=: "systemctl start caad && caadctl status" relies on it);
 * later without blocking the loop.
 */
static int bus_connect(struct caad_bus *b, bool wait)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	char msg[512];
	int r;

	r = sd_bus_open_system(&bus);
	if (r < 0)
		return r;
	(void)sd_bus_set_description(bus, "caad");
	if ((r = sd_bus_add_object_vtable(bus, NULL, BUS_PATH, BUS_INTERFACE, manager_vtable, b->d)) < 0 ||
	    (r = sd_bus_add_filter(bus, NULL, on_message, b)) < 0 ||
	    (r = sd_bus_attach_event(bus, b->d->event, SD_EVENT_PRIORITY_NORMAL)) < 0)
		return r;
	if (!wait) {
		r = sd_bus_request_name_async(bus, NULL, BUS_NAME, 0, on_name, b);
		if (r < 0)
			return r;
		b->bus = TAKE_PTR(bus);
		return 0;
	}
	r = sd_bus_request_name(bus, BUS_NAME, 0);
	b->bus = TAKE_PTR(bus);
	if (r >= 0 || r == -EALREADY) {
		name_owned(b);
		return 0;
	}
	if (r == -ENOMEM)
		return r;
	if (r == -EEXIST)
		snprintf(msg, sizeof(msg), "Cannot own %s on the system D-Bus: another process has it", BUS_NAME);
	else if (!not_owner_msg(r, msg, sizeof(msg)))
		snprintf(msg, sizeof(msg), "Cannot own %s on the system D-Bus", BUS_NAME);
	bus_retry_later(b, r, msg);
	return 0;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct caad_bus *b = userdata;
	int r;

	b->bus = sd_bus_flush_close_unref(b->bus);
	r = bus_connect(b, false);
	if (r < 0)
		bus_retry_later(b, r, "No system D-Bus");
	return 0;
}

int caad_bus_open(struct daemon *d, struct caad_bus **ret)
{
	struct caad_bus *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->d = d;
	b->mode = d->config.mode;
	b->placement = d->config.placement;
	b->paused = d->paused;
	r = sd_event_add_time(d->event, &b->retry, CLOCK_MONOTONIC, UINT64_MAX, 0, on_retry, b);
	if (r < 0) {
		free(b);
		return log_error_errno(r, "Failed to set up the D-Bus reconnect timer: %m");
	}
	(void)sd_event_source_set_enabled(b->retry, SD_EVENT_OFF);
	r = bus_connect(b, true);
	if (r == -ENOMEM) {
		caad_bus_free(b);
		return r;
	}
	if (r < 0)
		bus_retry_later(b, r, "No system D-Bus");
	*ret = b;
	return 0;
}

void caad_bus_free(struct caad_bus *b)
{
	if (!b)
		return;
	sd_bus_flush_close_unref(b->bus);
	sd_event_source_unref(b->retry);
	free(b->interfaces);
	free(b);
}

/* ---- signals ---- */

void caad_bus_flow_steered(struct caad_bus *b, uint64_t flow_id, int steer_cpu, enum caad_relation relation)
{
	char id[32];

	if (!b || !b->serving)
		return;
	snprintf(id, sizeof(id), "%#" PRIx64, caad_flow_public_id(flow_id));
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "FlowSteered", "sis", id, steer_cpu,
	                         caad_relation_to_string(relation));
}

void caad_bus_plan_applied(struct caad_bus *b, unsigned changed, uint64_t plan_usec)
{
	if (!b || !b->serving)
		return;
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "PlanApplied", "ut", changed, plan_usec);
}

void caad_bus_trial_finished(struct caad_bus *b, unsigned trial, const char *verdict)
{
	if (!b || !b->serving)
		return;
	(void)sd_bus_emit_signal(b->bus, BUS_PATH, BUS_INTERFACE, "TrialFinished", "us", trial, verdict);
}

void caad_bus_sync_properties(struct caad_bus *b)
{
	_cleanup_free_ char *ifaces = NULL;
	const struct daemon *d;
	char *changed[5] = {};
	size_t n = 0, len = 0;
	FILE *f;

	if (!b)
		return;
	d = b->d;
	f = open_memstream(&ifaces, &len);
	if (!f)
		return;
	for (size_t i = 0; d->inv && i < d->inv->n_ifaces; i++)
		fprintf(f, "%s%s", i ? " " : "", d->inv->ifaces[i].name);
	if (fclose(f) != 0)
		return;

	if (b->mode != d->config.mode)
		changed[n++] = (char *)"Mode";
	if (b->placement != d->config.placement)
		changed[n++] = (char *)"Placement";
	if (b->paused != d->paused)
		changed[n++] = (char *)"Paused";
	if (!b->interfaces || !streq(b->interfaces, ifaces))
		changed[n++] = (char *)"Interfaces";
	b->mode = d->config.mode;
	b->placement = d->config.placement;
	b->paused = d->paused;
	free(b->interfaces);
	b->interfaces = TAKE_PTR(ifaces);
	if (n == 0 || !b->serving)
		return;
	(void)sd_bus_emit_properties_changed_strv(b->bus, BUS_PATH, BUS_INTERFACE, changed);
}
