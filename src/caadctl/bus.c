/* SPDX-License-Identifier: GPL-2.0-or-later */
/* caad's D-Bus API as caadctl uses it: org.caad1 /org/caad1 org.caad1.Manager. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "caadctl.h"

#define BUS_NAME "org.caad1"
#define BUS_PATH "/org/caad1"
#define BUS_INTERFACE "org.caad1.Manager"

/* The system bus's address as sd-bus takes it (ctl_bus() unsets an empty
 * DBUS_SYSTEM_BUS_ADDRESS, which sd-bus would take as an address). */
static const char *bus_address(void)
{
	const char *a = getenv("DBUS_SYSTEM_BUS_ADDRESS");

	return a && *a ? a : "unix:path=/run/dbus/system_bus_socket";
}

/* An error that sd-bus made of an errno of its own (the socket, the
 * connection), not one a reply carried: sd_bus_call() names every failure,
 * its own as "System.Error.E..." or a standard name mapped from the errno
 * (ECONNRESET: Disconnected, ENOENT: FileNotFound; EPERM, as EACCES:
 * AccessDenied, which a reply carries too: told apart by the errno). */
static bool bus_own_error(const char *name)
{
	return !name || strncmp(name, "System.Error.", strlen("System.Error.")) == 0 ||
	       streq(name, SD_BUS_ERROR_DISCONNECTED) || streq(name, SD_BUS_ERROR_NO_SERVER) ||
	       streq(name, SD_BUS_ERROR_FILE_NOT_FOUND);
}

/* A method of caad's that changes what it does (root's alone, by caad's
 * own check and the bus policy it ships). */
static bool changes_caad(const char *method)
{
	static const char *const changing[] = { "Reload", "Pause", "Resume", "RestoreAll", "SetMode", "SetPlacement" };

	for (size_t i = 0; i < ARRAY_SIZE(changing); i++)
		if (streq(method, changing[i]))
			return true;
	return false;
}

int ctl_bus_fail(struct ctl *c, const char *method, const sd_bus_error *error, int r)
{
	const char *name = error && error->name ? error->name : NULL;
	const char *msg = error && error->message ? error->message : NULL;
	bool own = bus_own_error(name);
	int e = name ? sd_bus_error_get_errno(error) : r < 0 ? -r : EIO;

	if (own && (e == ENOENT || e == ECONNREFUSED || e == ENOTCONN || e == ECONNRESET)) {
		if (streq(method, "connect"))
			return ctl_fail(c, "caad is not reachable: no system D-Bus at %s (%s)", bus_address(), strerror(e));
		return ctl_fail(c, "%s: caad is not reachable: the connection to the system D-Bus at %s was lost (%s)",
		                method, bus_address(), strerror(e));
	}
	if (name && (streq(name, SD_BUS_ERROR_SERVICE_UNKNOWN) || streq(name, SD_BUS_ERROR_NAME_HAS_NO_OWNER)))
		return ctl_fail(c, "caad is not running: nobody owns %s on the system D-Bus (start it with "
		                   "'systemctl start caad')", BUS_NAME);
	if ((name && streq(name, SD_BUS_ERROR_ACCESS_DENIED)) || (own && (e == EACCES || e == EPERM))) {
		/* caad's own refusal says why; the bus policy's is a rule dump. */
		if (msg && strstr(msg, "only root may"))
			return ctl_fail(c, "%s: permission denied: %s", method, msg);
		/* the bus itself: its socket, or its handshake (EPERM: a reply's
		 * AccessDenied is EACCES) */
		if (own || r == -EPERM)
			return ctl_fail(c, "caad is not reachable: the system D-Bus at %s refused this user (%s)",
			                bus_address(), strerror(e));
		if (changes_caad(method))
			return ctl_fail(c, "%s: permission denied: only root may change what caad does%s%s%s", method,
			                msg ? " (D-Bus: " : "", msg ? msg : "", msg ? ")" : "");
		/* a read: the host's bus policy keeps this user from caad */
		return ctl_fail(c, "%s: permission denied by the system D-Bus policy%s%s%s", method,
		                msg ? " (D-Bus: " : "", msg ? msg : "", msg ? ")" : "");
	}
	/* sd-bus's own timeout of the call; NoReply: the bus gave up on caad,
	 * which went away or hung */
	if (name && streq(name, SD_BUS_ERROR_TIMEOUT))
		return ctl_fail(c, "%s: caad did not answer in time", method);
	if (name && streq(name, SD_BUS_ERROR_NO_REPLY))
		return ctl_fail(c, "%s: caad went away or did not answer", method);
	if (msg)
		return ctl_fail(c, "%s: %s", method, msg);
	return ctl_fail(c, "%s failed: %s", method, strerror(r < 0 ? -r : EIO));
}

int ctl_bus(struct ctl *c)
{
	int r;

	if (c->bus)
		return 0;
	/* set but empty is unset, as for the shell's other variables: sd-bus
	 * would take "" for the address, and fail */
	if (getenv("DBUS_SYSTEM_BUS_ADDRESS") && !*getenv("DBUS_SYSTEM_BUS_ADDRESS"))
		(void)unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
	r = sd_bus_open_system(&c->bus);
	if (r < 0)
		return ctl_bus_fail(c, "connect", NULL, r);
	(void)sd_bus_set_description(c->bus, "caadctl");
	return 0;
}

static int call_v(struct ctl *c, const char *interface, const char *method, sd_bus_message **reply,
                  const char *types, va_list ap)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	r = ctl_bus(c);
	if (r)
		return r;
	r = sd_bus_message_new_method_call(c->bus, &m, BUS_NAME, BUS_PATH, interface, method);
	if (r >= 0 && types)
		r = sd_bus_message_appendv(m, types, ap);
	if (r >= 0)
		r = sd_bus_call(c->bus, m, 0, &error, reply);
	if (r < 0)
		return ctl_bus_fail(c, method, &error, r);
	return 0;
}

int ctl_call(struct ctl *c, const char *method, sd_bus_message **reply, const char *types, ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = call_v(c, BUS_INTERFACE, method, reply, types, ap);
	va_end(ap);
	return r;
}

int ctl_call_string(struct ctl *c, const char *method, sd_bus_message **reply, const char **ret, const char *types,
                    ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = call_v(c, BUS_INTERFACE, method, reply, types, ap);
	va_end(ap);
	if (r)
		return r;
	r = sd_bus_message_read(*reply, "s", ret);
	if (r <= 0) /* 0: a reply without its string */
		return ctl_fail(c, "%s: unexpected reply from caad: %s", method, strerror(r < 0 ? -r : EBADMSG));
	return 0;
}

static int properties(struct ctl *c, sd_bus_message **reply, ...)
{
	va_list ap;
	int r;

	va_start(ap, reply);
	r = call_v(c, "org.freedesktop.DBus.Properties", "GetAll", reply, "s", ap);
	va_end(ap);
	return r;
}

void ctl_status_done(struct ctl_status *s)
{
	sd_bus_message_unref(s->reply);
	if (s->interfaces)
		for (char **i = s->interfaces; *i; i++)
			free(*i);
	free(s->interfaces);
	*s = (struct ctl_status){};
}

static int bad_reply(struct ctl *c, const char *method, int r)
{
	return ctl_fail(c, "%s: unexpected reply from caad: %s", method, strerror(-r));
}

int ctl_get_status(struct ctl *c, struct ctl_status *ret)
{
	static const struct {
		const char *name;
		size_t offset;
	} counters[] = {
		{ "FlowsSeen", offsetof(struct ctl_status, flows_seen) },
		{ "FlowsHeavy", offsetof(struct ctl_status, flows_heavy) },
		{ "FlowsSteered", offsetof(struct ctl_status, flows_steered) },
		{ "Moves", offsetof(struct ctl_status, moves) },
		{ "Errors", offsetof(struct ctl_status, errors) },
		{ "Scans", offsetof(struct ctl_status, scans) },
		{ "LastPlanUSec", offsetof(struct ctl_status, last_plan_usec) },
		{ "LastScanTimestamp", offsetof(struct ctl_status, last_scan_timestamp) },
		{ "ScanPeriodUSec", offsetof(struct ctl_status, scan_period_usec) },
		{ "ScanCPUUSec", offsetof(struct ctl_status, scan_cpu_usec) },
	};
	struct ctl_status s = {};
	int r;

	r = properties(c, &s.reply, BUS_INTERFACE);
	if (r)
		return r;
	r = sd_bus_message_enter_container(s.reply, 'a', "{sv}");
	while (r >= 0) {
		const char *name;
		bool done = false;

		r = sd_bus_message_enter_container(s.reply, 'e', "sv");
		if (r <= 0)
			break;
		r = sd_bus_message_read(s.reply, "s", &name);
		if (r < 0)
			break;
		if (streq(name, "Version") || streq(name, "Mode") || streq(name, "Placement")) {
			const char **p = streq(name, "Version") ? &s.version : streq(name, "Mode") ? &s.mode : &s.placement;
			r = sd_bus_message_read(s.reply, "v", "s", p);
			done = true;
		} else if (streq(name, "Paused")) {
			int b;
			r = sd_bus_message_read(s.reply, "v", "b", &b);
			s.paused = b;
			done = true;
		} else if (streq(name, "Interfaces")) {
			r = sd_bus_message_enter_container(s.reply, 'v', "as");
			if (r >= 0)
				r = sd_bus_message_read_strv(s.reply, &s.interfaces);
			if (r >= 0)
				r = sd_bus_message_exit_container(s.reply);
			done = true;
		}
		for (size_t i = 0; !done && i < ARRAY_SIZE(counters); i++)
			if (streq(name, counters[i].name)) {
				r = sd_bus_message_read(s.reply, "v", "t", (uint64_t *)((char *)&s + counters[i].offset));
				done = true;
			}
		if (!done) /* a property of a newer caad */
			r = sd_bus_message_skip(s.reply, "v");
		if (r >= 0)
			r = sd_bus_message_exit_container(s.reply);
	}
	if (r >= 0)
		r = sd_bus_message_exit_container(s.reply);
	if (r < 0 || !s.mode || !s.version || !s.placement) {
		ctl_status_done(&s);
		return bad_reply(c, "GetAll", r < 0 ? r : -EBADMSG);
	}
	*ret = s;
	return 0;
}

void ctl_flows_done(struct ctl_flows *f)
{
	sd_bus_message_unref(f->reply);
	free(f->flows);
	*f = (struct ctl_flows){};
}

int ctl_list_flows(struct ctl *c, struct ctl_flows *ret)
{
	struct ctl_flows l = {};
	int r;

	r = ctl_call(c, "ListFlows", &l.reply, NULL);
	if (r)
		return r;
	r = sd_bus_message_enter_container(l.reply, 'a', "(ssisssuiittiss)");
	for (;;) {
		struct ctl_flow f, *n;

		if (r < 0)
			break;
		r = sd_bus_message_read(l.reply, "(ssisssuiittiss)", &f.id, &f.iface, &f.queue, &f.source,
		                        &f.destination, &f.comm, &f.tid, &f.consumer_cpu, &f.processing_cpu,
		                        &f.rate_bps, &f.bytes, &f.steer_cpu, &f.relation, &f.reason);
		if (r <= 0)
			break;
		n = reallocarray(l.flows, l.n + 1, sizeof(*n));
		if (!n) {
			r = -ENOMEM;
			break;
		}
		l.flows = n;
		l.flows[l.n++] = f;
	}
	if (r >= 0)
		r = sd_bus_message_exit_container(l.reply);
	if (r < 0) {
		ctl_flows_done(&l);
		return bad_reply(c, "ListFlows", r);
	}
	*ret = l;
	return 0;
}

struct json_object *ctl_flow_to_json(const struct ctl_flow *f)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(f->id));
	json_object_object_add(o, "interface", ctl_json_string(*f->iface ? f->iface : NULL));
	json_object_object_add(o, "queue", ctl_json_int_or_null(f->queue));
	json_object_object_add(o, "source", json_object_new_string(f->source));
	json_object_object_add(o, "destination", json_object_new_string(f->destination));
	json_object_object_add(o, "comm", json_object_new_string(f->comm));
	json_object_object_add(o, "tid", json_object_new_int64(f->tid));
	json_object_object_add(o, "consumer_cpu", ctl_json_int_or_null(f->consumer_cpu));
	json_object_object_add(o, "processing_cpu", ctl_json_int_or_null(f->processing_cpu));
	json_object_object_add(o, "rate_bps", json_object_new_uint64(f->rate_bps));
	json_object_object_add(o, "bytes", json_object_new_uint64(f->bytes));
	json_object_object_add(o, "steer_cpu", ctl_json_int_or_null(f->steer_cpu));
	json_object_object_add(o, "relation", json_object_new_string(f->relation));
	json_object_object_add(o, "reason", json_object_new_string(f->reason));
	return o;
}
