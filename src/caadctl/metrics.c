/* SPDX-License-Identifier: GPL-2.0-or-later */
/* caadctl metrics: GetMetrics, the Prometheus text caad also writes to MetricsFile=. */
#include <stdio.h>
#include <string.h>

#include "caadctl.h"

int ctl_metrics(struct ctl *c, const struct ctl_command *cmd)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(ctl_prom_freep) struct ctl_prom *p = NULL;
	const char *text;
	char err[256];
	int r;

	r = ctl_call_string(c, "GetMetrics", &reply, &text, NULL);
	if (r)
		return r;
	if (!c->json) {
		fputs(text, stdout);
		return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
	}
	r = ctl_prom_parse(text, &p, err, sizeof(err));
	if (r == -ENOMEM)
		return ctl_fail(c, "Out of memory");
	if (r < 0)
		return ctl_fail(c, "GetMetrics: caad's metrics are not valid Prometheus text: %s", err);
	return ctl_json_print(c, ctl_prom_to_json(p));
}
