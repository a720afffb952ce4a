/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caad's metrics: the counters behind the D-Bus properties, the Prometheus
 * text of GetMetrics and of MetricsFile= (rewritten atomically after every
 * scan, for node_exporter's textfile collector), and what the last plan
 * wants for each rx queue (ListQueues, caad_queue_target_cpu). One source
 * for all of them; the text itself is src/lib/metrics.c's.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caad-config.h"
#include "caad/apply.h"
#include "caad/log.h"
#include "caad/metrics.h"
#include "caad/observe.h"
#include "caad/sysfs.h"
#include "daemon.h"

const char *daemon_queue_target(const struct daemon *d, size_t iface, unsigned queue, struct caad_cpumask *ret)
{
	const struct caad_cpumask *irq = NULL, *kthread = NULL, *rps = NULL;

	/* An IRQ affinity, else a threaded-NAPI kthread's, else a non-empty
	 * RPS mask (an empty one only turns RPS off behind a moved IRQ). */
	for (size_t k = 0; d->plan && k < d->plan->n_settings; k++) {
		const struct caad_setting *s = &d->plan->settings[k];

		if (s->iface != (int)iface || s->queue != queue || s->restore)
			continue;
		if (s->kind == CAAD_SETTING_IRQ_AFFINITY)
			irq = &s->cpus;
		else if (s->kind == CAAD_SETTING_KTHREAD_AFFINITY)
			kthread = &s->cpus;
		else if (s->kind == CAAD_SETTING_RPS_CPUS && !caad_cpumask_empty(&s->cpus))
			rps = &s->cpus;
	}
	if (irq) {
		*ret = *irq;
		return "irq";
	}
	if (kthread) {
		*ret = *kthread;
		return "kthread";
	}
	if (rps) {
		*ret = *rps;
		return "rps";
	}
	return NULL;
}

void daemon_fill_counters(const struct daemon *d, struct caad_metrics *m)
{
	struct caad_actuator_stats st = {};

	if (d->actuator)
		caad_actuator_get_stats(d->actuator, &st);
	*m = (struct caad_metrics){
		.version = CAAD_VERSION,
		.mode = caad_mode_to_string(d->config.mode),
		.placement = caad_placement_to_string(d->config.placement),
		.paused = d->paused,
		.flows_seen = d->n_flows,
		.flows_heavy = d->plan ? d->plan->n_decisions : 0,
		.values_changed = d->actuator ? caad_actuator_n_changed(d->actuator) : 0,
		.values_backed_off = d->actuator ? caad_actuator_n_backed_off(d->actuator) : 0,
		.last_plan_usec = d->last_plan_usec,
		.last_scan_timestamp_usec = d->last_scan_usec,
		.scan_period_usec = daemon_scan_period_usec(d),
		.scan_cpu_usec = d->pace.cost_usec,
		.scans = d->scans,
		.early_scans = d->early_scans,
		.moves = st.written,
		.restores = st.restored,
		.backoffs = st.backoffs,
		.undone = st.undone,
		.errors = st.errors + d->errors,
		.reloads = d->reloads,
		.reload_failures = d->reload_failures,
		.bpf_events_lost = d->observer ? caad_observer_counter(d->observer, CAAD_COUNTER_EVENTS_LOST) : 0,
		.bpf_map_full = d->observer ? caad_observer_counter(d->observer, CAAD_COUNTER_MAP_FULL) : 0,
		.bpf_flows_new = d->observer ? caad_observer_counter(d->observer, CAAD_COUNTER_FLOWS_NEW) : 0,
		.bpf_flows_closed = d->observer ? caad_observer_counter(d->observer, CAAD_COUNTER_FLOWS_CLOSED) : 0,
		.bpf_handovers_failed =
			d->observer ? caad_observer_counter(d->observer, CAAD_COUNTER_PUBLISH_FAILED) : 0,
		.trials = d->loop.trials,
		.verdicts_kept_prior = d->loop.kept_prior,
		.verdicts_switched = d->loop.switched,
		.verdicts_aborted = d->loop.aborted,
	};
	for (size_t k = 0; d->plan && k < d->plan->n_decisions; k++)
		m->flows_steered += d->plan->decisions[k].steer_cpu >= 0;
}

int daemon_metrics_text(const struct daemon *d, char **ret)
{
	struct caad_metrics_count classes[_CAAD_ERROR_CLASS_COUNT + 1];
	struct caad_actuator_stats st = {};
	_cleanup_free_ const char **names = NULL;
	_cleanup_free_ struct caad_metrics_queue *queues = NULL;
	size_t n_ifaces = d->inv ? d->inv->n_ifaces : 0, n_queues = 0;
	struct caad_metrics m;

	for (size_t i = 0; i < n_ifaces; i++)
		n_queues += d->inv->ifaces[i].n_rx;
	names = calloc(n_ifaces + 1, sizeof(*names));
	queues = calloc(n_queues + 1, sizeof(*queues));
	if (!names || !queues)
		return -ENOMEM;

	daemon_fill_counters(d, &m);
	m.interfaces = names;
	m.n_interfaces = n_ifaces;
	n_queues = 0;
	for (size_t i = 0; i < n_ifaces; i++) {
		const struct caad_iface *ifc = &d->inv->ifaces[i];

		names[i] = ifc->name;
		for (unsigned q = 0; q < ifc->n_rx; q++) {
			struct caad_metrics_queue *mq = &queues[n_queues++];
			struct caad_cpumask cpus;

			*mq = (struct caad_metrics_queue){ .interface = ifc->name, .queue = ifc->rx[q].index, .target_cpu = -1 };
			mq->mechanism = daemon_queue_target(d, i, ifc->rx[q].index, &cpus);
			if (mq->mechanism)
				mq->target_cpu = caad_cpumask_next(&cpus, 0);
		}
	}
	m.queues = queues;
	m.n_queues = n_queues;

	if (d->actuator)
		caad_actuator_get_stats(d->actuator, &st);
	for (unsigned c = 0; c < _CAAD_ERROR_CLASS_COUNT; c++)
		classes[c] = (struct caad_metrics_count){ caad_error_class_to_string(c), st.errors_by_class[c] };
	classes[_CAAD_ERROR_CLASS_COUNT] = (struct caad_metrics_count){ "plan", d->errors };
	m.error_classes = classes;
	m.n_error_classes = ARRAY_SIZE(classes);

	return caad_metrics_format_string(&m, ret);
}

/* Forget the file written last, when it is not path. */
static void remove_old(struct daemon *d, const char *path)
{
	if (!d->metrics_written || (path && streq(path, d->metrics_written)))
		return;
	if (unlink(d->metrics_written) < 0 && errno != ENOENT)
		log_warning_errno(errno, "Failed to remove the old metrics file %s: %m", d->metrics_written);
	free(d->metrics_written);
	d->metrics_written = NULL;
}

/* Which of caad's own directories path names a file of, or NULL: its
 * runtime directory (its journal, state.json, lock) or its state directory
 * (the closed loop's verdicts), whose files a metrics file written over
 * them would destroy, and remove at exit. */
static const char *own_dir_of(const struct daemon *d, const char *path)
{
	_cleanup_free_ char *copy = strdup(path), *dir = NULL;
	const char *own[] = { d->args->runtime_dir, d->args->state_dir };

	if (!copy)
		return NULL;
	dir = realpath(dirname(copy), NULL);
	if (!dir)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(own); i++) {
		_cleanup_free_ char *o = own[i] ? realpath(own[i], NULL) : NULL;

		if (o && streq(dir, o))
			return own[i];
	}
	return NULL;
}

void daemon_metrics_file_update(struct daemon *d)
{
	_cleanup_free_ char *text = NULL;
	const char *path = d->config.metrics_file, *own;
	int r;

	remove_old(d, path);
	/* another path (a reload): its failures are its own, said again */
	if (d->metrics_failing && (!path || !streq(path, d->metrics_failing))) {
		free(d->metrics_failing);
		d->metrics_failing = NULL;
	}
	if (!path)
		return;
	own = own_dir_of(d, path);
	if (own) {
		if (!d->metrics_failing) {
			bool rt = own == d->args->runtime_dir;

			log_error("MetricsFile=%s is in caad's %s directory %s, whose files are caad's own (its %s): not "
			          "written; choose another directory",
			          path, rt ? "runtime" : "state", own, rt ? "journal" : "verdicts");
			d->metrics_failing = strdup(path);
		}
		return;
	}
	r = daemon_metrics_text(d, &text);
	if (r >= 0)
		r = caad_write_file_replace(path, text, strlen(text), 0644);
	if (r < 0) {
		if (!d->metrics_failing) {
			log_warning_errno(r, "Failed to write the metrics file %s (%m): retrying after every scan", path);
			d->metrics_failing = strdup(path); /* NULL: said again next time */
		}
		return;
	}
	if (d->metrics_failing)
		log_info("Metrics file %s written again", path);
	free(d->metrics_failing);
	d->metrics_failing = NULL;
	if (!d->metrics_written) {
		d->metrics_written = strdup(path);
		if (!d->metrics_written)
			log_warning("Out of memory: the metrics file %s will stay after exit", path);
	}
}

void daemon_metrics_file_remove(struct daemon *d)
{
	remove_old(d, NULL);
}
