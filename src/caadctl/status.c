/* SPDX-License-Identifier: GPL-2.0-or-later */
/* caadctl status: the Manager's properties. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "caadctl.h"

static struct json_object *status_json(const struct ctl_status *s)
{
	struct json_object *o = json_object_new_object(), *ifaces = json_object_new_array();

	for (char **i = s->interfaces; i && *i; i++)
		json_object_array_add(ifaces, json_object_new_string(*i));
	json_object_object_add(o, "version", json_object_new_string(s->version));
	json_object_object_add(o, "mode", json_object_new_string(s->mode));
	json_object_object_add(o, "placement", json_object_new_string(s->placement));
	json_object_object_add(o, "paused", json_object_new_boolean(s->paused));
	json_object_object_add(o, "interfaces", ifaces);
	json_object_object_add(o, "flows_seen", json_object_new_uint64(s->flows_seen));
	json_object_object_add(o, "flows_heavy", json_object_new_uint64(s->flows_heavy));
	json_object_object_add(o, "flows_steered", json_object_new_uint64(s->flows_steered));
	json_object_object_add(o, "moves", json_object_new_uint64(s->moves));
	json_object_object_add(o, "errors", json_object_new_uint64(s->errors));
	json_object_object_add(o, "scans", json_object_new_uint64(s->scans));
	json_object_object_add(o, "last_plan_usec", json_object_new_uint64(s->last_plan_usec));
	json_object_object_add(o, "last_scan_timestamp_usec", json_object_new_uint64(s->last_scan_timestamp));
	json_object_object_add(o, "scan_period_usec", json_object_new_uint64(s->scan_period_usec));
	json_object_object_add(o, "scan_cpu_usec", json_object_new_uint64(s->scan_cpu_usec));
	return o;
}

/* "2026-11-21 10:04:05 UTC (0.2 s ago)", or "never". */
static void format_scan_time(uint64_t usec, char *buf, size_t size)
{
	struct timespec now;
	time_t t = (time_t)(usec / 1000000);
	struct tm tm;
	char when[64], ago[48] = "";

	if (usec == 0 || !localtime_r(&t, &tm) || strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm) == 0) {
		snprintf(buf, size, "never");
		return;
	}
	if (clock_gettime(CLOCK_REALTIME, &now) == 0) {
		uint64_t n = (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
		char d[32];

		ctl_format_usec(n > usec ? n - usec : 0, d, sizeof(d));
		snprintf(ago, sizeof(ago), " (%s ago)", d);
	}
	snprintf(buf, size, "%s%s", when, ago);
}

int ctl_status(struct ctl *c, const struct ctl_command *cmd)
{
	struct ctl_status s;
	char plan[32], scan[128], period[32], cpu[32];
	int r;

	r = ctl_get_status(c, &s);
	if (r)
		return r;
	if (c->json) {
		r = ctl_json_print(c, status_json(&s));
		ctl_status_done(&s);
		return r;
	}

	ctl_format_usec(s.last_plan_usec, plan, sizeof(plan));
	format_scan_time(s.last_scan_timestamp, scan, sizeof(scan));
	ctl_format_usec(s.scan_period_usec, period, sizeof(period));
	ctl_format_usec(s.scan_cpu_usec, cpu, sizeof(cpu));
	printf("caad %s: %s%s, placement %s\n", s.version, s.mode, s.paused ? ", paused (plans are not applied)" : "",
	       s.placement);
	printf("  Interfaces: ");
	if (!s.interfaces || !s.interfaces[0])
		printf("none");
	for (char **i = s.interfaces; i && *i; i++)
		printf("%s%s", i == s.interfaces ? "" : " ", *i);
	printf("\n"
	       "       Flows: %" PRIu64 " seen, %" PRIu64 " heavy, %" PRIu64 " steered\n"
	       "       Moves: %" PRIu64 " values written\n"
	       "      Errors: %" PRIu64 "\n"
	       "       Scans: %" PRIu64 ", the last at %s\n"
	       "              every %s, %s of CPU each\n"
	       "   Last plan: %s\n",
	       s.flows_seen, s.flows_heavy, s.flows_steered, s.moves, s.errors, s.scans, scan, period, cpu, plan);
	ctl_status_done(&s);
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}
