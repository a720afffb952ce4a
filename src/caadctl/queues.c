/* SPDX-License-Identifier: GPL-2.0-or-later */
/* caadctl queues: the managed interfaces' rx queues, and what caad wants for each. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "caadctl.h"

struct queue {
	const char *iface;
	uint32_t index;
	int irq;
	uint32_t napi_id;
	int managed;
	const char *irq_affinity, *rps_cpus, *target, *mechanism;
};

enum { COL_IFACE, COL_QUEUE, COL_IRQ, COL_NAPI, COL_MANAGED, COL_AFFINITY, COL_RPS, COL_TARGET, COL_MECHANISM };

static struct json_object *queue_json(const struct queue *q)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "interface", json_object_new_string(q->iface));
	json_object_object_add(o, "queue", json_object_new_int64(q->index));
	json_object_object_add(o, "irq", ctl_json_int_or_null(q->irq));
	json_object_object_add(o, "napi_id", q->napi_id ? json_object_new_int64(q->napi_id) : NULL);
	json_object_object_add(o, "managed", json_object_new_boolean(q->managed));
	json_object_object_add(o, "irq_affinity", ctl_json_string(q->irq >= 0 ? q->irq_affinity : NULL));
	json_object_object_add(o, "rps_cpus", json_object_new_string(q->rps_cpus));
	json_object_object_add(o, "target", ctl_json_string(*q->mechanism ? q->target : NULL));
	json_object_object_add(o, "mechanism", ctl_json_string(*q->mechanism ? q->mechanism : NULL));
	return o;
}

static int add_row(struct libscols_table *tb, const struct queue *q)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	char index[16], irq[16], napi[16];

	if (!ln)
		return -ENOMEM;
	snprintf(index, sizeof(index), "%" PRIu32, q->index);
	ctl_format_int(q->irq, irq, sizeof(irq));
	if (q->napi_id)
		snprintf(napi, sizeof(napi), "%" PRIu32, q->napi_id);
	else
		snprintf(napi, sizeof(napi), "-");
	if (scols_line_set_data(ln, COL_IFACE, q->iface) < 0 || scols_line_set_data(ln, COL_QUEUE, index) < 0 ||
	    scols_line_set_data(ln, COL_IRQ, irq) < 0 || scols_line_set_data(ln, COL_NAPI, napi) < 0 ||
	    scols_line_set_data(ln, COL_MANAGED, q->irq < 0 ? "-" : q->managed ? "yes" : "no") < 0 ||
	    scols_line_set_data(ln, COL_AFFINITY, q->irq < 0 ? "-" : *q->irq_affinity ? q->irq_affinity : "?") < 0 ||
	    scols_line_set_data(ln, COL_RPS, *q->rps_cpus ? q->rps_cpus : "off") < 0 ||
	    scols_line_set_data(ln, COL_TARGET, *q->mechanism ? q->target : "-") < 0 ||
	    scols_line_set_data(ln, COL_MECHANISM, *q->mechanism ? q->mechanism : "-") < 0)
		return -ENOMEM;
	return 0;
}

int ctl_queues(struct ctl *c, const struct ctl_command *cmd)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(ctl_table_unrefp) struct libscols_table *tb = NULL;
	_cleanup_(ctl_json_putp) struct json_object *a = NULL;
	static const struct {
		const char *name;
		int flags;
	} cols[] = {
		[COL_IFACE] = { "IFACE", 0 },         [COL_QUEUE] = { "QUEUE", SCOLS_FL_RIGHT },
		[COL_IRQ] = { "IRQ", SCOLS_FL_RIGHT }, [COL_NAPI] = { "NAPI", SCOLS_FL_RIGHT },
		[COL_MANAGED] = { "MANAGED", 0 },     [COL_AFFINITY] = { "AFFINITY", 0 },
		[COL_RPS] = { "RPS", 0 },             [COL_TARGET] = { "TARGET", 0 },
		[COL_MECHANISM] = { "MECHANISM", 0 },
	};
	int r;

	r = ctl_call(c, "ListQueues", &reply, NULL);
	if (r)
		return r;
	if (c->json)
		a = json_object_new_array();
	else {
		tb = ctl_table_new(c);
		for (size_t i = 0; tb && i < ARRAY_SIZE(cols); i++)
			if (ctl_table_column(tb, cols[i].name, 0, cols[i].flags) < 0)
				return ctl_fail(c, "Out of memory");
	}
	if (!a && !tb)
		return ctl_fail(c, "Out of memory");

	r = sd_bus_message_enter_container(reply, 'a', "(suiubssss)");
	while (r >= 0) {
		struct queue q;

		r = sd_bus_message_read(reply, "(suiubssss)", &q.iface, &q.index, &q.irq, &q.napi_id, &q.managed,
		                        &q.irq_affinity, &q.rps_cpus, &q.target, &q.mechanism);
		if (r <= 0)
			break;
		if (a)
			r = json_object_array_add(a, queue_json(&q)) < 0 ? -ENOMEM : 0;
		else
			r = add_row(tb, &q);
	}
	if (r >= 0)
		r = sd_bus_message_exit_container(reply);
	if (r < 0)
		return ctl_fail(c, "ListQueues: unexpected reply from caad: %s", strerror(-r));
	if (a)
		return ctl_json_print(c, TAKE_PTR(a));
	return ctl_table_print(c, tb);
}
