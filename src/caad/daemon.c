/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's loop: observe flows (BPF), read the queues (sysfs/procfs,
 * rtnetlink), plan (pure), apply what differs (journaled), and restore
 * everything on exit. Single-threaded, on sd-event.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "caad-config.h"
#include "caad/apply.h"
#include "caad/inventory.h"
#include "caad/irqbalance.h"
#include "caad/log.h"
#include "caad/observe.h"
#include "caad/pace.h"
#include "caad/state.h"
#include "caad/sysfs.h"
#include "caad/topology.h"
#include "caad/verdict.h"
#include "daemon.h"
#include "dbus.h"
#include "netlink.h"

uint64_t now_usec(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}


/* kernel.unprivileged_bpf_disabled, -1 when unknown */
static int unprivileged_bpf_disabled(void)
{
	char buf[16];
	int v;

	if (caad_read_line("/proc/sys/kernel/unprivileged_bpf_disabled", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%d", &v) != 1)
		return -1;
	return v;
}

/* After BPF is attached caad needs only: CAP_NET_ADMIN (rps_cpus, netlink),
 * CAP_SYS_NICE (threaded-NAPI kthread affinity); before Linux 5.19, with
 * unprivileged BPF disabled (or, from 5.8, as it may be later), CAP_BPF
 * too, to read its own maps. /proc/irq
 * and the journal are owned by root, which caad stays; run as another user
 * (a drop-in's User= with AmbientCapabilities=), CAP_DAC_OVERRIDE too, to
 * write them. Of these, only what the service manager left it can be
 * kept; everything else goes, whoever caad runs as. */
static int drop_privileges(void)
{
	cap_value_t want[4] = { CAP_NET_ADMIN, CAP_SYS_NICE }, keep[4];
	size_t n_want = 2, n_keep = 0;
	struct utsname u;
	cap_t caps;
	int r = 0, bpf_cap;

	if (geteuid() != 0)
		want[n_want++] = CAP_DAC_OVERRIDE;
	bpf_cap = caad_bpf_read_capability(uname(&u) == 0 ? u.release : NULL, unprivileged_bpf_disabled());
	if (bpf_cap > 0) {
		want[n_want++] = (cap_value_t)bpf_cap;
		log_info("Keeping %s: this kernel reads BPF maps only with it while kernel.unprivileged_bpf_disabled "
		         "is set (now, or once set while caad runs)",
		         cap_to_name((cap_value_t)bpf_cap));
	}
	caps = cap_get_proc();
	if (!caps)
		return log_error_errno(errno, "Failed to read our capabilities: %m");
	for (size_t i = 0; i < n_want; i++) {
		cap_flag_value_t v = CAP_CLEAR;

		if (cap_get_flag(caps, want[i], CAP_PERMITTED, &v) == 0 && v == CAP_SET)
			keep[n_keep++] = want[i];
		else
			log_warning("%s is not ours to keep (the service's CapabilityBoundingSet=, or a container): "
			            "what needs it will fail",
			            cap_to_name(want[i]));
	}
	cap_free(caps);
	/* the running kernel's capabilities, newer ones than these headers' too */
	for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++) {
		bool k = false;
		for (size_t i = 0; i < n_want; i++)
			k = k || want[i] == c;
		if (k || !CAP_IS_SUPPORTED(c) || cap_get_bound(c) != 1)
			continue; /* kept, unknown to the kernel, or not in the bounding set anyway */
		if (cap_drop_bound(c) >= 0)
			continue;
		if (errno != EPERM)
			return log_error_errno(errno, "Failed to drop capability %s from the bounding set: %m",
			                       cap_to_name(c));
		/* Without CAP_SETPCAP (caad.service's CapabilityBoundingSet= leaves it
		 * out) the bounding set stays as the service manager made it; the
		 * permitted and effective sets below and no_new_privs still hold. */
		log_debug("Cannot shrink the bounding set without CAP_SETPCAP; leaving it as it is");
		break;
	}
	caps = cap_init();
	if (!caps)
		return -ENOMEM;
	if ((n_keep > 0 && (cap_set_flag(caps, CAP_PERMITTED, (int)n_keep, keep, CAP_SET) < 0 ||
	                    cap_set_flag(caps, CAP_EFFECTIVE, (int)n_keep, keep, CAP_SET) < 0)) ||
	    cap_set_proc(caps) < 0)
		r = log_error_errno(errno, "Failed to drop capabilities: %m");
	cap_free(caps);
	if (r < 0)
		return r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return log_error_errno(errno, "Failed to set no_new_privs: %m");
	log_debug("Capabilities dropped to the %zu kept", n_keep);
	return 0;
}

static void on_link_change(void *userdata, const char *ifname, int ifindex)
{
	struct daemon *d = userdata;

	if (!ifname || d->config.n_interfaces == 0) {
		d->inventory_dirty = true;
		return;
	}
	/* renamed away from a configured name: the event has the new name */
	if (d->inv && ifindex > 0 && caad_inventory_find_ifindex(d->inv, ifindex))
		d->inventory_dirty = true;
	for (size_t i = 0; i < d->config.n_interfaces; i++)
		if (streq(d->config.interfaces[i], ifname))
			d->inventory_dirty = true;
}

/* Without Interfaces=, pick them anew on every re-read (links come and go). */
static int autoselect(struct daemon *d, char ***ret)
{
	_cleanup_free_ char *joined = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	n = caad_inventory_autoselect(d->args->sysroot, ret);
	if (n < 0)
		return n;
	f = open_memstream(&joined, &len);
	if (!f) {
		caad_strv_free(*ret);
		*ret = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? " " : "", (*ret)[i]);
	fclose(f);
	if (!d->autoselected || !streq(d->autoselected, joined)) {
		if (n == 0)
			log_notice("No interface configured and none worth managing (physical, up, multi-queue or "
			           "with IRQs): waiting for one");
		else
			log_info("No interface configured: managing %s (physical, up, multi-queue or with IRQs)",
			         joined);
		free(d->autoselected);
		d->autoselected = TAKE_PTR(joined);
	}
	return n;
}

/* The observer asks which kthread processes a flow only while one of our
 * interfaces has a threaded NAPI (a helper call at every data-ready). */
static void note_napi_threads(struct daemon *d)
{
	bool any = false;

	for (size_t i = 0; d->inv && i < d->inv->n_ifaces; i++)
		for (unsigned k = 0; k < d->inv->ifaces[i].n_napis; k++)
			any = any || d->inv->ifaces[i].napis[k].kthread > 0;
	caad_observer_set_napi_threads(d->observer, any);
}

/* Mechanisms=ntuple, and an interface whose NIC takes no ntuple rules: said
 * once per interface; the planner plans none for it (and nothing tries). */
static void note_ntuple(struct daemon *d, const struct caad_inventory *inv)
{
	if (d->config.policy.disabled_mechanisms & (1u << CAAD_SETTING_NTUPLE_RULE))
		return;
	for (size_t i = 0; i < inv->n_ifaces; i++) {
		const char *name = inv->ifaces[i].name;
		_cleanup_free_ char *key = NULL;
		char *noted;

		if (inv->ifaces[i].ntuple || asprintf(&key, " %s ", name) < 0 ||
		    (d->ntuple_noted && strstr(d->ntuple_noted, key)))
			continue;
		log_notice("%s: its NIC takes no ntuple rules (ntuple-filters off, or no rx classification): its "
		           "conflicted flows stay where they are (Mechanisms=ntuple)", name);
		if (asprintf(&noted, "%s%s", d->ntuple_noted ?: "", key) < 0)
			return;
		free(d->ntuple_noted);
		d->ntuple_noted = noted;
	}
}

/* The interface ifindex was renamed from `from` to `to`: the journal follows. */
static int follow_rename(struct daemon *d, int ifindex, const char *from, const char *to)
{
	int r = caad_actuator_rename_iface(d->actuator, ifindex, from, to);

	if (r > 0)
		log_notice("%s (ifindex %d) is now %s: what caad changed there is restored under that name", from,
		           ifindex, to);
	return r;
}

/*
 * An interface that left the inventory: down or no longer selected, its
 * values stay and are restored at exit; renamed, they follow the new
 * name; gone, or re-created as a new device (another ifindex), they went
 * with it: nothing to restore there. With loaded false, one of the old
 * inventory when the new one could not be loaded (a configured interface
 * is missing): only a rename is followed; what is left of a vanished one
 * (its IRQs) is restored at exit.
 */
static int iface_left(struct daemon *d, const struct caad_iface *old, bool loaded)
{
	char now[IF_NAMESIZE];
	int r = caad_inventory_iface_fate(d->args->sysroot, old->name, old->ifindex, now);

	if (r == CAAD_IFACE_STILL_THERE) {
		/* one that a reload took out of Interfaces= was restored then,
		 * and has nothing left here */
		if (loaded && caad_actuator_holds_iface(d->actuator, old->ifindex, old->name))
			log_info("%s is no longer managed (down, or not chosen): what caad changed there is restored "
			         "at exit",
			         old->name);
		return 0;
	}
	if (r == CAAD_IFACE_RENAMED)
		return follow_rename(d, old->ifindex, old->name, now);
	if (r < 0 || !loaded)
		return 0;
	/* a PCI function is moved between namespaces (and back), not made
	 * anew: its own values are kept for it (a veth's are not: made anew) */
	r = caad_actuator_forget_iface(d->actuator, old->ifindex, old->name, old->bus_id[0] != '\0');
	/* the kernel's refusal to move its IRQs was that device's */
	for (unsigned q = 0; q < old->n_rx; q++)
		if (old->rx[q].irq >= 0)
			caad_actuator_forget_irq(d->actuator, old->rx[q].irq);
	if (r > 0)
		log_notice("%s (ifindex %d) is gone or was re-created: caad forgets what it changed there", old->name,
		           old->ifindex);
	return r;
}

/* Whether interface name can be read now (an inventory of it alone): 0,
 * or the error that reading it gives. */
static int probe_iface(const struct daemon *d, char *name)
{
	_cleanup_(caad_inventory_freep) struct caad_inventory *probe = NULL;
	int r = caad_inventory_load(d->args->sysroot, &name, 1, &probe);

	return r < 0 ? r : 0;
}

/*
 * The interfaces of names that can be read, when one of them cannot (a VF
 * torn down, a card pulled): the others are managed on, not left
 * unsteered with it until it comes back. -ENODEV when none can be, or all
 * can one by one (the set changed as it was read: the next scan tries).
 */
static int load_present(struct daemon *d, char **names, size_t n, struct caad_inventory **ret)
{
	_cleanup_free_ char **present = calloc(n, sizeof(char *));
	_cleanup_free_ char *missing = NULL;
	size_t k = 0, len = 0;
	FILE *m = open_memstream(&missing, &len);

	if (!present || !m) {
		if (m)
			fclose(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (probe_iface(d, names[i]) == 0)
			present[k++] = names[i];
		else
			fprintf(m, "%s%s", k == i ? "" : " ", names[i]);
	}
	if (fclose(m) != 0)
		return -ENOMEM;
	if (k == 0 || k == n)
		return -ENODEV;
	/* said when the set left out changes (a second one gone, one back) */
	if (!d->inventory_missing || !streq(d->inventory_missing, missing)) {
		log_warning("%s cannot be read: caad manages the other interfaces until it can", missing);
		free(d->inventory_missing);
		d->inventory_missing = TAKE_PTR(missing);
	}
	return caad_inventory_load(d->args->sysroot, present, k, ret);
}

static int reload_inventory(struct daemon *d)
{
	struct caad_inventory *inv = NULL;
	char **names = d->config.interfaces, **auto_names = NULL;
	size_t n_names = d->config.n_interfaces;
	int r;

	if (n_names == 0) {
		r = autoselect(d, &auto_names);
		if (r < 0)
			return r;
		names = auto_names;
		n_names = (size_t)r;
	}
	r = caad_inventory_load(d->args->sysroot, names, n_names, &inv);
	/* at start one that cannot be read is an error (caad exits) */
	bool partial = false;
	if (r < 0 && r != -ENOMEM && d->inv && n_names > 1) {
		int q = load_present(d, names, n_names, &inv);

		if (q >= 0 || q == -ENOMEM)
			r = q;
		partial = q >= 0;
	}
	caad_strv_free(auto_names);
	if (r >= 0 && partial != d->inventory_partial) {
		if (!partial) {
			log_info("Every interface to manage can be read again");
			free(d->inventory_missing);
			d->inventory_missing = NULL;
		}
		d->inventory_partial = partial;
	}
	if (r < 0) {
		/* Keep the old one; try again next scan. A configured interface
		 * that was renamed or went away meanwhile took caad's values
		 * with it: the journal follows. */
		for (size_t i = 0; d->inv && d->actuator && i < d->inv->n_ifaces; i++)
			(void)iface_left(d, &d->inv->ifaces[i], false);
		return r;
	}
	(void)caad_inventory_locate(inv, d->topo);
	note_ntuple(d, inv);
	if (d->actuator)
		caad_actuator_reread(d->actuator, CAAD_ACTUATOR_WANT_INVENTORY);
	for (size_t i = 0; d->inv && d->actuator && i < d->inv->n_ifaces; i++) {
		const struct caad_iface *old = &d->inv->ifaces[i];
		bool same = false;

		for (size_t j = 0; j < inv->n_ifaces; j++)
			same = same || (streq(inv->ifaces[j].name, old->name) && inv->ifaces[j].ifindex == old->ifindex);
		if (!same)
			(void)iface_left(d, old, true);
	}
	/* one that left earlier (down, or not selected) and came back under
	 * its name as another device, or under it from another name: what
	 * caad changed on the one it was then went with it, or follows it
	 * (each such ifindex is settled at once: at most one round each) */
	for (size_t i = 0; d->actuator && i < inv->n_ifaces; i++)
		for (size_t left = caad_actuator_n_changed(d->actuator); left > 0; left--) {
			struct caad_iface was = { .ifindex = caad_actuator_other_ifindex(d->actuator, inv->ifaces[i].name,
			                                                                 inv->ifaces[i].ifindex) };

			if (was.ifindex <= 0)
				break;
			snprintf(was.name, sizeof(was.name), "%s", inv->ifaces[i].name);
			if (iface_left(d, &was, true) <= 0)
				break;
		}
	/* one renamed while a configured name was missing (no inventory could
	 * be read, so the journal kept the name it went by then) and now back
	 * under a name caad manages: its values are restored there */
	for (size_t i = 0; d->actuator && i < inv->n_ifaces; i++) {
		const struct caad_iface *ifc = &inv->ifaces[i];
		char was[IF_NAMESIZE];

		for (size_t left = caad_actuator_n_changed(d->actuator); left > 0; left--)
			if (caad_actuator_journaled_name(d->actuator, ifc->ifindex, ifc->name, was) <= 0 ||
			    follow_rename(d, ifc->ifindex, was, ifc->name) <= 0)
				break;
	}
	/* IRQs the kernel refused to move are managed: plan RPS for them
	 * (after the devices that left, whose refusals go with them) */
	for (size_t i = 0; d->actuator && i < inv->n_ifaces; i++)
		for (unsigned q = 0; q < inv->ifaces[i].n_rx; q++) {
			struct caad_queue *rq = &inv->ifaces[i].rx[q];
			if (rq->irq >= 0 && caad_actuator_irq_unmovable(d->actuator, rq->irq))
				rq->irq_managed = true;
		}
	caad_inventory_free(d->inv);
	d->inv = inv;
	d->inventory_dirty = false;
	note_napi_threads(d);
	return 0;
}

/*
 * Log each heavy flow's decision when it first appears or changes: the
 * previous plan (d->plan) is looked up by flow id, O(log n) per flow. A
 * flow re-steered many times a minute (a reader the scheduler moves to
 * and fro) has its lines limited (caad_loglimit): its record follows it
 * from plan to plan beside its decision. The D-Bus signal goes each time
 * (and once more when a flow it told of leaves the plan: keep_scan()).
 */
static void log_decisions(struct daemon *d, const struct caad_flow *flows, const struct caad_plan *plan,
                          uint64_t now_ns)
{
	struct caad_loglimit *logs = calloc(MAX(plan->n_decisions, (size_t)1), sizeof(*logs));

	for (size_t k = 0; k < plan->n_decisions; k++) {
		const struct caad_decision *dec = &plan->decisions[k];
		const struct caad_flow *f = &flows[dec->flow];
		const struct caad_decision *old = caad_plan_find(d->plan, f->id);
		struct caad_loglimit fresh = { 0 }, *l = logs ? &logs[k] : &fresh;
		char tuple[128], note[160];
		int level;

		if (old && d->decision_logs)
			*l = d->decision_logs[old - d->plan->decisions];
		if (old && old->steer_cpu == dec->steer_cpu && old->host == dec->host)
			continue;
		/* a flow new to the plan: its first line always goes */
		level = caad_loglimit_level(l, now_ns, LOG_INFO, note, sizeof(note));
		caad_flow_format_tuple(f, tuple, sizeof(tuple));
		if (dec->steer_cpu >= 0)
			log_full_errno(level, 0, "Heavy flow %s (%.1f Gbit/s, processed on CPU %d) -> CPU %d, %s: %s%s",
			               tuple, f->rate_bps / 1e9, f->proc_cpu, dec->steer_cpu,
			               caad_relation_to_string(dec->relation), dec->reason, note);
		else if (dec->host)
			log_full_errno(level, 0,
			               "Heavy flow %s (%.1f Gbit/s, processed on CPU %d) -> the host's own steering: %s%s",
			               tuple, f->rate_bps / 1e9, f->proc_cpu, dec->reason, note);
		else
			log_full_errno(level, 0, "Heavy flow %s (%.1f Gbit/s, processed on CPU %d) left alone: %s%s",
			               tuple, f->rate_bps / 1e9, f->proc_cpu, dec->reason, note);
		caad_bus_flow_steered(d->bus, f->id, dec->steer_cpu, dec->relation);
	}
	free(d->next_decision_logs);
	d->next_decision_logs = logs;
}

/* A scan's STATUS= line (systemctl status), with the last reload's
 * failure after it until a reload succeeds: else the next scan's line
 * hides it, and `systemctl reload` itself does not wait to hear it. */
_printf_(2, 3) static void notify_scan_status(struct daemon *d, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sd_notifyf(false, "STATUS=%s%s%s", line, d->reload_note ? "; " : "", d->reload_note ?: "");
}

/* A reload's outcome worth STATUS= until the next reload succeeds. */
_printf_(2, 3) static void notify_reload_note(struct daemon *d, const char *fmt, ...)
{
	char *note = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&note, fmt, ap) < 0)
		note = NULL;
	va_end(ap);
	free(d->reload_note);
	d->reload_note = note;
	sd_notifyf(false, "READY=1\nSTATUS=%s", note ?: "Reload failed");
}

/* The STATUS= line of systemctl status, after every scan. */
static void notify_status(struct daemon *d, size_t n_flows, const struct caad_plan *plan)
{
	size_t steered = 0;

	for (size_t k = 0; plan && k < plan->n_decisions; k++)
		steered += plan->decisions[k].steer_cpu >= 0;
	notify_scan_status(d, "%s%s: %zu flows, %zu heavy, %zu steered, %u values changed",
	                   caad_mode_to_string(d->config.mode), d->paused ? " (paused)" : "", n_flows,
	                   plan ? plan->n_decisions : 0, steered, caad_actuator_n_changed(d->actuator));
}

/* Keep the scan's flows and plan for the D-Bus API, until the next scan.
 * A flow gone from the plan (closed, light again, off a managed interface;
 * or no plan at all: observe mode, the queues unknown, a failed plan) that
 * the signal said was steered, or left to the host, is told that caad no
 * longer steers it, as ListFlows shows it from now on. */
static void keep_scan(struct daemon *d, struct caad_flow **flows, size_t n, struct caad_plan **plan)
{
	for (size_t k = 0; d->plan && k < d->plan->n_decisions; k++) {
		const struct caad_decision *old = &d->plan->decisions[k];

		if ((old->steer_cpu >= 0 || old->host) && !caad_plan_find(*plan, old->flow_id))
			caad_bus_flow_steered(d->bus, old->flow_id, -1, CAAD_RELATION_UNSTEERED);
	}
	free(d->flows);
	d->flows = TAKE_PTR(*flows);
	d->n_flows = n;
	caad_plan_recycle(d->plan_scratch, d->plan);
	d->plan = TAKE_PTR(*plan);
	/* the lines' records are this plan's only if it was logged */
	free(d->decision_logs);
	d->decision_logs = TAKE_PTR(d->next_decision_logs);
	caad_bus_sync_properties(d->bus);
}

/* A scan that ends without a plan (why: what D-Bus says of it): state.json
 * shows its flows and no decisions, and the scan is kept as the others. */
static void keep_scan_no_plan(struct daemon *d, struct caad_flow **flows, size_t n, struct caad_plan **plan,
                              const char *why)
{
	d->no_plan = why;
	(void)caad_state_write(d->state_path, *flows, n, NULL, NULL, caad_mode_to_string(d->config.mode));
	keep_scan(d, flows, n, plan);
}

/* irqbalance must leave alone the IRQs caad steers now, and only those;
 * paused, those it holds (they stay where they are until Resume). */
static void irqbalance_follow(struct daemon *d, const struct caad_plan *plan)
{
	_cleanup_free_ int *irqs = NULL;
	size_t n = 0;

	if (!d->irqbalance)
		return;
	if (d->paused && d->config.mode == CAAD_MODE_ENFORCE && d->actuator) {
		size_t held = caad_actuator_n_changed(d->actuator);

		irqs = calloc(held + 1, sizeof(int));
		if (!irqs)
			return;
		n = caad_actuator_held_irqs(d->actuator, irqs, held);
	} else if (plan && d->config.mode == CAAD_MODE_ENFORCE && !d->paused) {
		irqs = calloc(plan->n_settings + 1, sizeof(int));
		if (!irqs)
			return;
		for (size_t i = 0; i < plan->n_settings; i++)
			if (plan->settings[i].kind == CAAD_SETTING_IRQ_AFFINITY && !plan->settings[i].restore &&
			    !caad_actuator_irq_unmovable(d->actuator, plan->settings[i].irq))
				irqs[n++] = plan->settings[i].irq;
	}
	(void)caad_irqbalance_sync_update(d->irqbalance, d->config.irqbalance, irqs, n);
}

/*
 * Where the isolated and online CPUs that the plans keep to are read: the
 * test tree's; else this host's, also for an XML file's topology, which
 * caad steers this host by only where the file can be this host's
 * (load_topology()).
 */
static const char *daemon_cpu_root(const struct args *a)
{
	return a->sysroot ?: "/";
}

/* SYSROOT/sys/devices/system/cpu/online's text, NULL when unreadable. */
static char *read_cpus_online(const struct daemon *d)
{
	_cleanup_free_ char *path = NULL;
	char *online = NULL;

	if (caad_path(&path, d->args->sysroot, "/sys/devices/system/cpu/online") < 0 ||
	    caad_read_file(path, &online) < 0)
		return NULL;
	return online;
}

/*
 * The topology the plans are made for, at the start and at each reload. An
 * XML file that this host is steered by (no --sysroot) is taken only where
 * its CPUs can be this host's (a corrected XML of it), at a reload too: the
 * file may have been replaced since. A test tree is steered by whatever it
 * is given.
 */
static int load_topology(const struct args *a, struct caad_topology **ret)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	int r;

	r = caad_topology_load(a->topology_path, daemon_cpu_root(a), &t);
	if (r < 0)
		return log_error_errno(r, "Failed to load the topology%s%s: %m", a->topology_path ? " from " : "",
		                       a->topology_path ? a->topology_path : "");
	if (a->topology_path && !a->sysroot) {
		r = caad_topology_check_machine(t, a->topology_path, NULL);
		if (r < 0)
			return log_error_errno(r, "Refusing to steer this host by %s; an XML of this host "
			                       "(lstopo --of xml), or --sysroot for a test tree: %m", a->topology_path);
	}
	*ret = TAKE_PTR(t);
	return 0;
}

static int reload_topology(struct daemon *d)
{
	struct caad_topology *t = NULL;
	char before[128] = "", after[128];
	/* the online CPUs, read before the load: a CPU that goes or comes
	 * while hwloc loads is a change follow_cpu_hotplug() still sees */
	_cleanup_free_ char *online = read_cpus_online(d);

	if (load_topology(d->args, &t) < 0) {
		log_warning("Keeping the previous topology for now");
		return -EAGAIN; /* try again next scan */
	}
	if (d->topo)
		caad_topology_fingerprint(d->topo, before, sizeof(before));
	caad_topology_fingerprint(t, after, sizeof(after));
	caad_topology_free(d->topo);
	d->topo = t;
	/* the online CPUs it was loaded with, whoever asked for the load: a
	 * change back to those that follow_cpu_hotplug() knew is one too */
	if (online) {
		free(d->cpus_online);
		d->cpus_online = TAKE_PTR(online);
	}
	free(d->cpus_online_failed);
	d->cpus_online_failed = NULL;
	d->topology_gap = 0;
	/* read again after a refusal, it may be the same: a trial and the
	 * verdicts hold on as long as the CPUs, caches and usable CPUs do */
	if (!streq(before, after))
		closed_loop_reset(d, "the topology changed");
	d->inventory_dirty = true; /* locality is relative to the topology */
	/* values refused for an offline CPU get one more try */
	if (d->actuator)
		caad_actuator_reread(d->actuator, CAAD_ACTUATOR_WANT_TOPOLOGY);
	return 0;
}

/* Scans until a read that failed is tried again: 1 after a first failure,
 * then twice the last gap, at most 20 (where the periodic reads are). */
static uint64_t retry_gap(bool failed_before, uint64_t last_gap)
{
	return MIN(failed_before ? 2 * last_gap : 1, (uint64_t)20);
}

/* CPU hotplug: when the online CPUs change, the topology is read again
 * (the plan then moves what sat on a CPU that went away). */
static void follow_cpu_hotplug(struct daemon *d)
{
	_cleanup_free_ char *online = read_cpus_online(d);

	if (!online)
		return;
	if (!d->cpus_online) {
		d->cpus_online = TAKE_PTR(online);
		return;
	}
	if (streq(d->cpus_online, online)) {
		free(d->cpus_online_failed);
		d->cpus_online_failed = NULL;
		return;
	}
	/* a topology that failed to load for these CPUs: said once, and
	 * tried again at the next scan, then 2, 4, ... up to 20 scans later
	 * (as the queues), not at every scan */
	bool again = d->cpus_online_failed && streq(d->cpus_online_failed, online);
	if (again && d->scans < d->topology_retry)
		return;
	if (!again)
		log_notice("Online CPUs changed from %s to %s: reading the topology again", d->cpus_online, online);
	if (reload_topology(d) < 0) {
		d->topology_gap = retry_gap(again, d->topology_gap);
		d->topology_retry = d->scans + d->topology_gap;
		free(d->cpus_online_failed);
		d->cpus_online_failed = TAKE_PTR(online);
	}
	/* else reload_topology() took the online CPUs it read */
}

/* What the kernel refused tells what to read again before the next plan:
 * the topology after an offline or invalid CPU (EINVAL and co.), the queues
 * after a vanished object or a managed IRQ. */
static void follow_refusals(struct daemon *d)
{
	unsigned wants = caad_actuator_wants(d->actuator);

	if (wants & CAAD_ACTUATOR_WANT_INVENTORY)
		d->inventory_dirty = true;
	/* one that fails to load is tried again 1, 2, 4 ... up to 20 scans
	 * later, as after a hotplug, not at every scan */
	if ((wants & CAAD_ACTUATOR_WANT_TOPOLOGY) && d->scans >= d->topology_retry) {
		if (!d->topology_gap)
			log_notice("Reading the topology again: an affinity was refused as for an offline or invalid CPU");
		if (reload_topology(d) < 0) { /* (a load resets the gap) */
			d->topology_gap = retry_gap(d->topology_gap != 0, d->topology_gap);
			d->topology_retry = d->scans + d->topology_gap;
		}
	}
}

/* RUNTIME_DIR/trials.json: what GetTrials says, for scripts without D-Bus. */
static void write_trials(struct daemon *d)
{
	_cleanup_free_ char *text = NULL, *path = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	if (!f)
		return;
	r = closed_loop_format(d, f);
	if (fclose(f) != 0 || r < 0 || asprintf(&path, "%s/trials.json", d->args->runtime_dir) < 0)
		return;
	(void)caad_write_file_replace(path, text, len, 0644);
}

/* The observer follows the readers of the flows this plan steers (none
 * when it is not applied). */
static void follow_readers(struct daemon *d, const struct caad_plan *plan, bool applied)
{
	_cleanup_free_ uint64_t *ids = NULL;
	_cleanup_free_ struct caad_cpumask *cpus = NULL;
	size_t n = 0, max = applied && plan ? MIN(plan->n_decisions, (size_t)CAAD_STAY_MAX) : 0;

	if (max > 0) {
		ids = malloc(max * sizeof(*ids));
		cpus = malloc(max * sizeof(*cpus));
		if (!ids || !cpus)
			return; /* followed at the next scan */
		/* decisions in id order: the daemon's flows are sorted */
		for (size_t k = 0; k < plan->n_decisions && n < max; k++) {
			const struct caad_decision *dec = &plan->decisions[k];

			if (dec->steer_cpu < 0 || (n > 0 && ids[n - 1] >= dec->flow_id))
				continue;
			caad_decision_stay(d->topo, dec, &cpus[n]);
			ids[n++] = dec->flow_id;
		}
	}
	(void)caad_observer_set_stay(d->observer, ids, cpus, n);
}

/*
 * caad's own thread off the CPUs where heavy flows are read, and where
 * plan steers flows, as far as the CPUs it was started with allow
 * (caad_plan_own_cpus()). Woken at every scan (twice where flows are
 * handed over), on a reader's CPU it preempts that reader; as the sender
 * runs on without it, the stream loses more than caad's own time there. On
 * the 2-vCPU development VM, with a veth stream read on CPU 1 and scans
 * every 50 ms (60 s, caad stopped and let run in turns of 5 s): caad kept
 * to CPU 1 cost the stream 12.7% of its goodput, kept to CPU 0 3.7%.
 * Changed only when it differs; refused once (a seccomp filter, a cpuset
 * without those CPUs), never asked again.
 */
static void keep_off_readers(struct daemon *d, const struct caad_flow *flows, size_t n, const struct caad_plan *plan)
{
	struct caad_cpumask want;
	char list[256];
	int r;

	if (d->own_fixed)
		return;
	caad_plan_own_cpus(&d->own_base, flows, n, d->config.policy.rate_threshold_bps, plan, &want);
	if (caad_cpumask_equal(&want, &d->own_cpus))
		return;
	r = caad_cpumask_set_task(0, &want);
	if (r == -EINVAL && !caad_cpumask_equal(&want, &d->own_base)) {
		want = d->own_base; /* none of those online now */
		r = caad_cpumask_set_task(0, &want);
	}
	if (r < 0) {
		d->own_fixed = true;
		log_debug_errno(r, "Cannot set caad's own CPUs (%m): it runs where it was started");
		return;
	}
	d->own_cpus = want;
	if (caad_cpumask_format_list(&want, list, sizeof(list)) < 0)
		snprintf(list, sizeof(list), "(%u CPUs)", caad_cpumask_count(&want));
	log_debug("caad itself runs on CPUs %s now: off the heavy flows' readers and steering", list);
}

static int scan(struct daemon *d)
{
	_cleanup_free_ struct caad_flow *flows = NULL;
	_cleanup_(caad_plan_freep) struct caad_plan *plan = NULL;
	size_t n = 0;
	int r;

	d->scans++;
	d->last_scan_usec = now_usec(CLOCK_REALTIME);
	/* what the ring buffer has is this scan's: no early one after it */
	(void)caad_observer_consume(d->observer);
	(void)caad_observer_take_left(d->observer);
	/* The last scan's flows go to the snapshot, which updates them or
	 * frees them before it reads the next: at 100k flows each is 14 MB.
	 * Everything that outlives them (the plan, the D-Bus API) finds flows
	 * by id, not by index into them. */
	flows = TAKE_PTR(d->flows);
	n = d->n_flows;
	d->n_flows = 0;
	r = (d->scan_is_early ? caad_observer_snapshot_early : caad_observer_snapshot)(d->observer, &flows, &n);
	d->scan_is_early = false;
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* what is in place stays, and so does the plan that put it there:
		 * the next one holds its flows by it (hysteresis, dwell), and it
		 * is what D-Bus and the metrics show meanwhile; the flows are
		 * none until they are readable again */
		notify_scan_status(d, "%s: flows unreadable for %u scans (caad's log says why); steering kept",
		                   caad_mode_to_string(d->config.mode), caad_observer_snapshot_fails(d->observer));
		/* a trial's turn would go on unmeasured, and the next sample
		 * span the gap, credited to whichever turn was on */
		closed_loop_abort(d, "the flows could not be read");
		/* state.json as D-Bus says it: no flows (not an old scan's) */
		(void)caad_state_write(d->state_path, NULL, 0, NULL, NULL, caad_mode_to_string(d->config.mode));
		caad_bus_sync_properties(d->bus);
		return r;
	}

	/* Re-read the queues when rtnetlink says a link changed, after caad
	 * wrote, and every 20 scans in case an event was missed; when the
	 * last read failed, at the next scan, then 2, 4, ... up to 20 scans
	 * later (a passing failure costs a scan, a lasting one logs its
	 * error every 20 scans, as before). */
	follow_cpu_hotplug(d);
	if (d->inventory_dirty || (d->scans % 20) == 0 || (d->inventory_lost && d->scans >= d->inventory_retry)) {
		r = reload_inventory(d);
		d->inventory_dirty = false;
		if (r < 0 && !d->inventory_lost)
			log_warning_errno(r, "Queues unknown for now (%m): not steering until they are back");
		else if (r >= 0 && d->inventory_lost)
			log_info("Queues readable again: steering resumes");
		d->inventory_gap = r < 0 ? retry_gap(d->inventory_lost, d->inventory_gap) : 0;
		d->inventory_retry = d->scans + d->inventory_gap;
		d->inventory_lost = r < 0;
	}
	if (d->inventory_lost) {
		notify_scan_status(d, "%s: %zu flows, managed queues unknown", caad_mode_to_string(d->config.mode), n);
		closed_loop_abort(d, "the managed interfaces' queues are unknown");
		keep_scan_no_plan(d, &flows, n, &plan, "the managed interfaces' queues are unknown");
		return 0;
	}

	if (d->config.mode != CAAD_MODE_OBSERVE) {
		uint64_t t0 = now_usec(CLOCK_MONOTONIC);

		/* Placement=measure: a trial's turn or a verdict overrides the rules */
		r = closed_loop_prepare(d, flows, n, t0 * 1000);
		if (r < 0) {
			/* no plan shown: the last one may name the interfaces of
			 * an inventory read again since */
			keep_scan_no_plan(d, &flows, n, &plan, "the closed loop failed (caad's log says why)");
			return log_error_errno(r, "Closed loop failed: %m");
		}
		struct caad_policy policy = d->config.policy;
		_cleanup_free_ uint64_t *refused = NULL;

		/* no more IRQs onto CPUs that ran out of vectors (RPS may go there) */
		caad_actuator_irq_exhausted(d->actuator, &policy.irq_banned);
		/* no rule for a flow whose rule the NIC refused: else the plan
		 * says it moved while its packets arrive where they did */
		r = caad_actuator_ntuple_refused(d->actuator, &refused, &policy.n_ntuple_refused);
		if (r < 0) /* (planned as before: the refused rules stay parked) */
			log_warning_errno(r, "Cannot list the refused ntuple rules for the plan: %m");
		policy.ntuple_refused = refused;
		/* the previous plan gives hysteresis; flows' times are CLOCK_MONOTONIC */
		r = caad_plan_compute_with(d->plan_scratch, d->topo, d->inv, flows, n, &policy, d->plan, t0 * 1000,
		                           &plan);
		d->last_plan_usec = now_usec(CLOCK_MONOTONIC) - t0;
		if (r < 0) {
			d->errors++;
			keep_scan_no_plan(d, &flows, n, &plan, "planning failed (caad's log says why)"); /* as above */
			return log_error_errno(r, "Planning failed: %m");
		}
		d->no_plan = NULL;
		log_decisions(d, flows, plan, t0 * 1000);
		/* paused: the plan is shown (D-Bus, state.json), not applied */
		r = d->paused ? 0 : caad_actuator_apply(d->actuator, d->inv, plan);
		follow_readers(d, plan, !d->paused && d->config.mode == CAAD_MODE_ENFORCE);
		/* a trial measures only what is in place */
		if (!d->paused && d->config.mode == CAAD_MODE_ENFORCE)
			closed_loop_applied(d, plan);
		if (r > 0) {
			d->inventory_dirty = true; /* show the new values */
			caad_bus_plan_applied(d->bus, (unsigned)r, d->last_plan_usec);
		}
		follow_refusals(d);
	} else
		follow_readers(d, NULL, false);
	irqbalance_follow(d, plan);
	keep_off_readers(d, flows, n, plan);

	(void)caad_state_write(d->state_path, flows, n, d->inv, plan, caad_mode_to_string(d->config.mode));
	if (d->config.placement == CAAD_PLACEMENT_MEASURE)
		write_trials(d);
	notify_status(d, n, plan);
	keep_scan(d, &flows, n, &plan);
	return 0;
}

/* The period was stretched for the scan budget, or is back to the interval. */
static void log_pace(const struct daemon *d, uint64_t interval_usec)
{
	if (d->pace.stretched)
		log_notice("Scans of %zu flows take %.1f ms of CPU each: one every %.0f ms, not IntervalMSec=%u, "
		           "to keep them within ScanBudgetPercent=%u",
		           d->n_flows, d->pace.cost_usec / 1e3, d->pace.period_usec / 1e3, d->config.interval_ms,
		           d->config.scan_budget_pct);
	else
		log_info("Scans of %zu flows take %.1f ms of CPU each: one every IntervalMSec=%" PRIu64 " again",
		         d->n_flows, d->pace.cost_usec / 1e3, interval_usec / 1000);
}

/*
 * Where the BPF programs hand flows over as they change (the TCP socket
 * iterator's kernels), each flow read or processed after
 * caad_observer_prepare() is handed over again: run HANDOVER_LEAD_USEC
 * before a scan (at most a quarter of the period), it gives the scan every
 * busy flow's bytes as of a few milliseconds before, not as of just after
 * the previous scan, a period late.
 */
#define HANDOVER_LEAD_USEC 10000u

static void arm_prepare(struct daemon *d, uint64_t at, uint64_t period_usec)
{
	uint64_t lead = MIN((uint64_t)HANDOVER_LEAD_USEC, period_usec / 4);

	/* nothing to ask for (no hand-overs: a wakeup for nothing at every
	 * scan), or too close: the snapshot asks for itself */
	if (!d->prepare || !caad_observer_hands_over(d->observer) || at < now_usec(CLOCK_MONOTONIC) + lead)
		return;
	if (sd_event_source_set_time(d->prepare, at - lead) >= 0)
		(void)sd_event_source_set_enabled(d->prepare, SD_EVENT_ONESHOT);
}

static int on_prepare(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	caad_observer_prepare(d->observer);
	return 0;
}

/*
 * What a scan that took cpu_usec costs, for the budget. Where flows are
 * handed over, the pass of the iterator that runs every few seconds counts
 * in every scan by its share (its cost times the period over its own): a
 * pass at 100k flows spiked the smoothed cost, stretched the period for a
 * few scans and logged it, every ten seconds.
 */
static uint64_t scan_cost(const struct daemon *d, uint64_t cpu_usec)
{
	uint64_t pass, every, period = daemon_scan_period_usec(d);

	caad_observer_pass_cost(d->observer, &pass, &every);
	if (!every)
		return cpu_usec;
	if (caad_observer_last_full(d->observer)) {
		/* a pass that had to run (a flow could not be handed over:
		 * every scan may need one) counts whole */
		if (!caad_observer_last_periodic(d->observer))
			return cpu_usec;
		cpu_usec -= MIN(cpu_usec, pass);
	}
	return cpu_usec + pass * MIN(period, every) / every;
}

/*
 * A limit the observer hit grows its kernel counter: how many more times
 * since the last message, to say now, or 0 (not grown, or said within
 * LIMIT_NOTICE_USEC: a host at MaxFlows= for hours gets a line every ten
 * minutes, not one a scan; the metrics count every one).
 */
#define LIMIT_NOTICE_USEC (600u * 1000000u)

static uint64_t limit_grew(struct limit_notice *l, uint64_t count, uint64_t now)
{
	uint64_t grew;

	if (count < l->seen) /* another observer, counting from 0 */
		l->seen = count;
	if (count == l->seen || (l->said && now - l->said < LIMIT_NOTICE_USEC))
		return 0;
	grew = count - l->seen;
	l->seen = count;
	l->said = now;
	return grew;
}

static void notice_limits(struct daemon *d, uint64_t now)
{
	uint64_t k;

	if (!d->observer)
		return;
	k = limit_grew(&d->map_full, caad_observer_counter(d->observer, CAAD_COUNTER_MAP_FULL), now);
	if (k)
		log_notice("MaxFlows=%u reached, or no kernel memory for a flow's entry: new flows are not followed "
		           "(%" PRIu64 " reads of them, or flows a pass found beyond it, since the last notice, "
		           "caad_bpf_map_full_total); raise MaxFlows= to follow them, where it is the limit",
		           d->config.max_flows, k);
	k = limit_grew(&d->handovers_failed, caad_observer_counter(d->observer, CAAD_COUNTER_PUBLISH_FAILED), now);
	if (k)
		log_notice("%" PRIu64 " changes of flows could not be handed over (room for twice MaxFlows=%u, or no "
		           "kernel memory): scans walked every socket instead (caad_bpf_handovers_failed_total)",
		           k, d->config.max_flows);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	uint64_t iv = (uint64_t)d->config.interval_ms * 1000, cpu = now_usec(CLOCK_THREAD_CPUTIME_ID), next, now;
	int r;

	d->last_scan_mono = now_usec(CLOCK_MONOTONIC);
	caad_observer_set_scan_period(d->observer, daemon_scan_period_usec(d));
	r = scan(d);
	notice_limits(d, d->last_scan_mono);
	/* its CPU time (the BPF iterator's, in the kernel, included) sets
	 * how far apart scans must be for ScanBudgetPercent= */
	if (caad_pace_add(&d->pace, scan_cost(d, now_usec(CLOCK_THREAD_CPUTIME_ID) - cpu), iv,
	                  d->config.scan_budget_pct))
		log_pace(d, iv);
	if (r == -ENOMEM)
		return sd_event_exit(d->event, r);
	daemon_metrics_file_update(d);
	/* from when this one was due, so scans keep their pace; but a scan
	 * (or a stall) longer than the period does not make the next ones
	 * run back to back to catch up */
	iv = d->pace.period_usec;
	next = usec + iv;
	now = now_usec(CLOCK_MONOTONIC);
	if (next < now + iv / 2)
		next = now + iv / 2;
	arm_prepare(d, next, iv);
	return sd_event_source_set_time(s, next);
}

/*
 * A steered flow's reader moved off the CPUs its steering holds for: scan
 * now rather than at the next tick, to follow it within milliseconds. A
 * reader the scheduler keeps moving must not make caad scan without end:
 * early scans are at least EARLY_SCAN_GAP_USEC apart, and as far as the
 * scan budget asks (ScanBudgetPercent=, 10% of a CPU by default: ten
 * times as far as a scan takes).
 */
#define EARLY_SCAN_GAP_USEC 50000u

static void scan_early(struct daemon *d)
{
	uint64_t now = now_usec(CLOCK_MONOTONIC), at, next;

	at = MAX(now, d->last_scan_mono + caad_pace_gap(&d->pace, EARLY_SCAN_GAP_USEC, d->config.scan_budget_pct));
	if (sd_event_source_get_time(d->timer, &next) < 0)
		return;
	if (next <= at) {
		log_debug("A steered flow's reader moved: the next scan, in %" PRIu64 " ms, follows it",
		          (next > now ? next - now : 0) / 1000);
		return;
	}
	if (sd_event_source_set_time(d->timer, at) >= 0) {
		log_debug("A steered flow's reader moved: scanning in %" PRIu64 " ms, not %" PRIu64 " ms",
		          (at - now) / 1000, (next - now) / 1000);
		d->early_scans++;
		d->scan_is_early = true;
		arm_prepare(d, at, daemon_scan_period_usec(d));
	}
}

static int on_ringbuf(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;

	(void)caad_observer_consume(d->observer);
	if (caad_observer_take_left(d->observer) > 0)
		scan_early(d);
	return 0;
}


static int on_links(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;

	return caad_link_watch_dispatch(d->links);
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	log_info("Received %s, restoring and exiting", strsignal((int)si->ssi_signo));
	return sd_event_exit(d->event, 0);
}

/* A signal ahead of everything else pending: a stop sent while caad was
 * starting (its crash replay, the BPF load) is pending as the loop starts,
 * beside the first scan, which must not write first what the exit then
 * restores at once. Floating: the loop owns it. */
static int add_signal(sd_event *e, int sig, sd_event_signal_handler_t handler, void *userdata)
{
	sd_event_source *s = NULL;
	int r = sd_event_add_signal(e, &s, sig, handler, userdata);

	if (r < 0)
		return r;
	r = sd_event_source_set_priority(s, SD_EVENT_PRIORITY_IMPORTANT);
	if (r >= 0)
		r = sd_event_source_set_floating(s, true);
	sd_event_source_unref(s);
	return r;
}

/* Command-line options override the configuration files, at start and on
 * every reload; the log level follows (option, else LogLevel=). */
int daemon_config_apply_args(struct caad_config *c, const struct args *a)
{
	/* the scalars first: a failed copy of the names below must not leave
	 * a --dry-run caad in the file's Mode= */
	if (a->interval_ms)
		c->interval_ms = a->interval_ms;
	if (a->dry_run)
		c->mode = CAAD_MODE_DRY_RUN;
	caad_log_set_max_level(a->log_level >= 0 ? a->log_level : c->log_level);
	if (a->n_interfaces)
		return caad_config_set_interfaces(c, a->interfaces, a->n_interfaces);
	return 0;
}

/* The period got shorter (IntervalMSec=, ScanBudgetPercent=, a reload):
 * the next scan comes by it, not at the tick armed with the old one (a
 * minute away, from IntervalMSec=60000). */
static void rearm_sooner(struct daemon *d)
{
	uint64_t next, at, now = now_usec(CLOCK_MONOTONIC);
	uint64_t period = caad_pace_reset(&d->pace, (uint64_t)d->config.interval_ms * 1000, d->config.scan_budget_pct);

	if (!d->timer || sd_event_source_get_time(d->timer, &next) < 0)
		return;
	at = MAX(now, d->last_scan_mono + period);
	if (at < next && sd_event_source_set_time(d->timer, at) >= 0)
		arm_prepare(d, at, period);
}

/*
 * Whether a running trial's turns would span a change of what they depend
 * on: the mode, the interfaces, the scan period and budget, irqbalance's
 * handling, the placement rules ([Placement] but Placement= itself, whose
 * change resets the closed loop) and [Trials]. Configuration management
 * that reloads at every run would otherwise abort every trial (and hold
 * the application off trials for 60 s each time).
 */
static bool trial_settings_changed(const struct caad_config *a, const struct caad_config *b)
{
	const struct caad_policy *p = &a->policy, *q = &b->policy;
	const struct caad_trial_params *s = &a->trial, *t = &b->trial;

	/* the same interfaces in another order are the same set */
	if (a->n_interfaces != b->n_interfaces)
		return true;
	for (size_t i = 0; i < a->n_interfaces; i++) {
		bool found = false;

		for (size_t j = 0; j < b->n_interfaces && !found; j++)
			found = streq(a->interfaces[i], b->interfaces[j]);
		if (!found)
			return true;
	}
	return a->mode != b->mode || a->interval_ms != b->interval_ms || a->scan_budget_pct != b->scan_budget_pct ||
	       a->irqbalance != b->irqbalance || p->rate_threshold_bps != q->rate_threshold_bps ||
	       p->min_age_ms != q->min_age_ms || p->dwell_ms != q->dwell_ms || p->max_moves != q->max_moves ||
	       p->allow_smt_sibling != q->allow_smt_sibling || p->allow_other_package != q->allow_other_package ||
	       p->disabled_mechanisms != q->disabled_mechanisms || !caad_cpumask_equal(&p->banned, &q->banned) ||
	       s->rounds != t->rounds || s->turn_ms != t->turn_ms || s->settle_ms != t->settle_ms ||
	       s->margin_pct != t->margin_pct || s->win_pct != t->win_pct || s->eff_loss_pct != t->eff_loss_pct ||
	       s->confidence_pct != t->confidence_pct || s->collapse_bps != t->collapse_bps ||
	       a->trial_steady_ms != b->trial_steady_ms || a->trial_host != b->trial_host;
}

/* A reload that keeps the running configuration, for why (text), with the
 * log level it had (daemon_config_apply_args() set the new one). */
static int reload_refused(struct daemon *d, int error, const char *why, int log_level, char **ret_error)
{
	caad_log_set_max_level(log_level);
	d->reload_failures++;
	log_error("Reload failed: %s; keeping the running configuration", why);
	notify_reload_note(d, "Reload failed, running configuration kept: %s", why);
	if (ret_error)
		*ret_error = strdup(why);
	return error < 0 ? error : -EINVAL;
}

/* After a reload: what caad changed on an interface of the inventory that
 * Interfaces= no longer names goes back now, as leaving enforce mode puts
 * everything back, rather than staying, unmanaged, until exit. (An empty
 * Interfaces= chooses again at the next scan: one it does not choose,
 * like one that went down, keeps its values until exit.) */
static int give_back_deselected(struct daemon *d)
{
	int ret = 0;

	if (!d->inv || !d->config.n_interfaces)
		return 0;
	for (size_t i = 0; i < d->inv->n_ifaces; i++) {
		const struct caad_iface *f = &d->inv->ifaces[i];
		bool named = false;
		int r;

		for (size_t j = 0; j < d->config.n_interfaces && !named; j++)
			named = streq(d->config.interfaces[j], f->name);
		if (named)
			continue;
		log_info("%s is no longer in Interfaces=: what caad changed there is restored now", f->name);
		r = caad_actuator_restore_iface(d->actuator, f->ifindex, f->name);
		if (r < 0 && ret == 0)
			ret = r;
	}
	return ret;
}

int daemon_reload(struct daemon *d, char **ret_error)
{
	struct caad_config c;
	int r, log_level = caad_log_get_max_level();

	/* systemd's notify-reload protocol: RELOADING=1 with the time, then READY=1 */
	sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, now_usec(CLOCK_MONOTONIC));
	d->reloads++;
	caad_config_init(&c);
	r = caad_config_load(&c, d->args->config_path);
	if (r < 0) {
		d->reload_failures++;
		log_error("Reload failed: keeping the running configuration");
		notify_reload_note(d, "Reload failed, running configuration kept: %s", c.error ? c.error : "see the log");
		if (ret_error)
			*ret_error = TAKE_PTR(c.error);
		caad_config_done(&c);
		return r;
	}
	/* names were checked at start: only ENOMEM can fail here */
	r = daemon_config_apply_args(&c, d->args);
	if (r < 0) {
		caad_config_done(&c);
		return reload_refused(d, r, "the command line's interfaces could not be kept", log_level, ret_error);
	}
	/* a new one that is not there is a mistake to say, as at start (one
	 * the running configuration names already may be gone for a moment:
	 * caad manages the others meanwhile, where there are others) */
	size_t readable = 0, n_running = 0;
	for (size_t i = 0; i < c.n_interfaces; i++) {
		_cleanup_free_ char *what = NULL;
		bool running = false;

		for (size_t j = 0; j < d->config.n_interfaces && !running; j++)
			running = streq(d->config.interfaces[j], c.interfaces[i]);
		n_running += running;
		r = probe_iface(d, c.interfaces[i]);
		if (r >= 0)
			readable++;
		if (r >= 0 || running)
			continue;
		if (asprintf(&what, "interface %s (of Interfaces= or --interface) cannot be managed: %s", c.interfaces[i],
		             strerror(-r)) < 0)
			what = NULL;
		caad_config_done(&c);
		return reload_refused(d, r, what ?: "Interfaces= names an interface caad cannot manage", log_level,
		                      ret_error);
	}
	/* none readable: refused where the set changes (caad would manage
	 * nothing of what it is told now), not where it is the running one,
	 * all of it away for a moment (a NIC reset): a reload for a LogLevel=
	 * then is no mistake (names are unique: a config's repeats go) */
	if (c.n_interfaces > 0 && readable == 0 &&
	    !(n_running == c.n_interfaces && c.n_interfaces == d->config.n_interfaces)) {
		caad_config_done(&c);
		return reload_refused(d, -ENODEV, "none of the interfaces to manage (Interfaces= or --interface) can be read",
		                      log_level, ret_error);
	}
	/* the observer's maps were sized at start: the notices name the size in force */
	if (c.max_flows != d->config.max_flows) {
		log_notice("Reload: MaxFlows=%u takes effect at the next start; until then caad follows up to %u flows",
		           c.max_flows, d->config.max_flows);
		c.max_flows = d->config.max_flows;
	}
	if (c.placement != d->config.placement || c.verdict_max_age_sec != d->config.verdict_max_age_sec)
		closed_loop_reset(d, "the configuration changed");
	else if (trial_settings_changed(&d->config, &c)) /* its turns would span settings it did not start with */
		closed_loop_abort(d, "the configuration was reloaded with other settings");
	/* a store that could not be read, or written: tried again */
	if (d->loop.verdicts_kept_off || d->loop.verdicts_unsaved)
		d->loop.verdicts_loaded = false;
	if (c.min_flow_bytes != d->config.min_flow_bytes)
		log_info("Reload: MinFlowBytes=%u: connections not followed yet are followed from that many bytes received",
		         c.min_flow_bytes);
	caad_config_done(&d->config);
	d->config = c;
	d->inventory_dirty = true;
	/* what caad may use now (isolcpus=, nohz_full=, its cgroup's
	 * AllowedCPUs=) and the NICs' names in hwloc's view: read again, as
	 * after a hotplug (kept as it was where it cannot be read) */
	(void)reload_topology(d);
	rearm_sooner(d);
	r = give_back_deselected(d);
	/* dry-run and observe write nothing: what enforce wrote goes back */
	int q = caad_actuator_set_dry_run(d->actuator, c.mode != CAAD_MODE_ENFORCE);
	if (r >= 0)
		r = q;
	/* values others changed may be steered again */
	caad_actuator_clear_backoff(d->actuator);
	caad_actuator_set_backoff_sec(d->actuator, c.backoff_sec);
	/* for connections not followed yet; those followed stay so */
	caad_observer_set_min_flow_bytes(d->observer, c.min_flow_bytes);
	log_info("Configuration reloaded: mode %s", caad_mode_to_string(c.mode));
	if (r < 0) {
		/* reloaded all the same: the caller hears what is left */
		log_error_errno(r, "Mode %s: values caad wrote could not all be restored: %m", caad_mode_to_string(c.mode));
		notify_reload_note(d, "Reloaded, mode %s, but values caad wrote could not all be restored",
		                   caad_mode_to_string(c.mode));
		if (ret_error && asprintf(ret_error, "reloaded (mode %s), but values caad wrote could not all be restored: "
		                                     "see caad's log",
		                          caad_mode_to_string(c.mode)) < 0)
			*ret_error = NULL;
		caad_bus_sync_properties(d->bus);
		return 1;
	}
	free(d->reload_note);
	d->reload_note = NULL;
	sd_notify(false, "READY=1");
	caad_bus_sync_properties(d->bus);
	return 0;
}

int daemon_set_mode(struct daemon *d, enum caad_mode mode)
{
	int r;

	if (mode == d->config.mode)
		return 0;
	log_info("Mode %s -> %s", caad_mode_to_string(d->config.mode), caad_mode_to_string(mode));
	if (mode != CAAD_MODE_ENFORCE)
		closed_loop_abort(d, "caad left enforce mode");
	d->config.mode = mode;
	d->inventory_dirty = true;
	caad_actuator_clear_backoff(d->actuator);
	/* dry-run and observe write nothing: what enforce wrote goes back */
	r = caad_actuator_set_dry_run(d->actuator, mode != CAAD_MODE_ENFORCE);
	caad_bus_sync_properties(d->bus);
	return r;
}

void daemon_set_placement(struct daemon *d, enum caad_placement placement)
{
	if (placement == d->config.placement)
		return;
	log_info("Placement %s -> %s", caad_placement_to_string(d->config.placement),
	         caad_placement_to_string(placement));
	closed_loop_reset(d, "Placement= changed");
	d->config.placement = placement;
	caad_bus_sync_properties(d->bus);
}

void daemon_set_paused(struct daemon *d, bool paused)
{
	if (paused == d->paused)
		return;
	if (paused)
		closed_loop_abort(d, "caad was paused");
	d->paused = paused;
	/* an operator's explicit go-ahead: values others changed are fair game again */
	if (!paused)
		caad_actuator_clear_backoff(d->actuator);
	log_info(paused ? "Paused: plans are no longer applied, changed values stay"
	                : "Resumed: plans are applied again");
	caad_bus_sync_properties(d->bus);
}

int daemon_restore_all(struct daemon *d)
{
	int r;

	closed_loop_abort(d, "every value was restored");
	d->paused = true;
	caad_bus_sync_properties(d->bus);
	r = caad_actuator_restore(d->actuator);
	d->inventory_dirty = true;
	if (r < 0)
		return log_error_errno(r, "Some values could not be restored, paused: %m");
	log_info("Every changed value restored; paused until resumed");
	return 0;
}

static int on_reload_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)daemon_reload(userdata, NULL);
	return 0;
}

/* The temporary files that a write of path killed midway (SIGKILL, a
 * crash) left beside it go, said with how many. */
static void remove_leftovers(const char *path)
{
	int r = caad_remove_atomic_leftovers(path);

	if (r > 0)
		log_info("Removed %d temporary file%s that a killed write left beside %s", r, r == 1 ? "" : "s", path);
	else if (r < 0)
		log_warning_errno(r, "Failed to remove what a killed write left beside %s: %m", path);
}

/* caad's files in the runtime directory without the temporary files that
 * a killed write left beside them. */
static void remove_runtime_leftovers(const char *runtime_dir)
{
	static const char *const files[] = { "journal", "irqbalance", "state.json", "trials.json", "boot_id" };

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *path = NULL;

		if (asprintf(&path, "%s/%s", runtime_dir, files[i]) < 0)
			return;
		remove_leftovers(path);
	}
}

int daemon_run(struct daemon *d)
{
	struct args *a = d->args;
	_cleanup_free_ char *journal = NULL, *irqb_journal = NULL, *lock_path = NULL;
	_cleanup_close_ int lock = -1;
	uint32_t netns;
	sigset_t mask;
	int r;

	/*
	 * SIGTERM, SIGINT and SIGHUP wait for the event loop (a signalfd),
	 * blocked first thing: a thread inherits its creator's mask, and one
	 * that does not block them takes them with their default action,
	 * killing caad without restoring the host. Libraries start threads:
	 * on a 16-CPU host with an NVIDIA GPU, 16 were started during
	 * hwloc's discovery (its GPU plugins, now left out: topology.c). A
	 * signal that comes while the host is restored or set up waits.
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return log_error_errno(errno, "Failed to block signals: %m");
	/* A log reader that went away ("caad --foreground | less", quit)
	 * must not kill caad before it restores: a write then fails with
	 * EPIPE, which logging ignores. (systemd ignores it for services.) */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return log_error_errno(errno, "Failed to ignore SIGPIPE: %m");

	if (asprintf(&journal, "%s/journal", a->runtime_dir) < 0 ||
	    asprintf(&irqb_journal, "%s/irqbalance", a->runtime_dir) < 0 ||
	    asprintf(&d->state_path, "%s/state.json", a->runtime_dir) < 0)
		return -ENOMEM;

	/* One caad per runtime directory: a second one (or a --restore while
	 * caad runs) would restore the first one's journal under it, and the
	 * two would fight over the values. The lock goes with the process. */
	r = caad_mkdir_p(a->runtime_dir, 0755);
	if (r < 0)
		return log_error_errno(r, "Failed to create %s: %m", a->runtime_dir);
	if (asprintf(&lock_path, "%s/lock", a->runtime_dir) < 0)
		return -ENOMEM;
	lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0)
		return log_error_errno(errno, "Failed to open %s: %m", lock_path);
	if (flock(lock, LOCK_EX | LOCK_NB) < 0)
		return log_error_errno(errno, "Another caad runs with the runtime directory %s (%s is locked)%s: %m",
		                       a->runtime_dir, lock_path,
		                       a->restore_only ? "; it restores the host itself when it stops" : "");

	/* What a write killed before its rename (a crash, kill -9) left in
	 * the directory that is ours alone now: the runtime files do not
	 * pile up there over restarts (RuntimeDirectoryPreserve=). Not beside
	 * MetricsFile=, in a directory others write to ("caad.prom.old123"
	 * may be theirs), whose reader takes *.prom files only. */
	remove_runtime_leftovers(a->runtime_dir);

	/* A journal left by a crashed run comes first: put the host back,
	 * and irqbalance's banned list; not one of an earlier boot (a
	 * persistent --runtime-dir), which the reboot undid. */
	bool same_boot;
	r = caad_journals_drop_other_boot(a->runtime_dir, NULL, (const char *const[]){ journal, irqb_journal }, 2,
	                                  &same_boot);
	if (r < 0)
		return r;
	/* kept when irqbalance does not answer: no reason not to put the
	 * host's own values back now (nor, for a start, not to start) */
	int irqb = caad_irqbalance_journal_restore(irqb_journal);
	if (irqb == -ENOMEM)
		return irqb;
	/* a rename followed by ifindex only where the journal is known to be
	 * of this boot: after a reboot an ifindex may name another device */
	r = caad_journal_restore(journal, same_boot);
	if (r < 0)
		return r;
	if (a->restore_only)
		return MIN(irqb, 0); /* a journal not fully restored: status 1 */

	r = closed_loop_init(&d->loop, a->state_dir);
	if (r < 0)
		return r;
	/* before any flow is shown: their ids are hashed with it */
	r = caad_flow_id_key_random();
	if (r < 0)
		return log_error_errno(r, "Failed to draw the key that flow ids are shown with: %m");
	/* the online CPUs the topology is loaded with (read before it) */
	d->cpus_online = read_cpus_online(d);
	r = load_topology(a, &d->topo);
	if (r < 0)
		return r;
	r = reload_inventory(d);
	if (r < 0)
		return r;
	for (size_t i = 0; i < d->inv->n_ifaces; i++) {
		const struct caad_iface *ifc = &d->inv->ifaces[i];
		unsigned irqs = 0;
		for (unsigned q = 0; q < ifc->n_rx; q++)
			irqs += ifc->rx[q].irq >= 0;
		log_info("Managing %s (ifindex %d): %u rx queues, %u with an IRQ", ifc->name, ifc->ifindex, ifc->n_rx,
		         irqs);
	}

	r = caad_netns_self_inode(&netns);
	if (r < 0)
		return log_error_errno(r, "Failed to find our network namespace: %m");
	struct caad_observer_options oo = {
		.netns_inode = netns,
		.max_flows = d->config.max_flows,
		.min_flow_bytes = d->config.min_flow_bytes,
	};
	r = caad_observer_open(&oo, &d->observer);
	if (r < 0)
		return r;
	note_napi_threads(d);

	r = caad_mkdir_p(a->runtime_dir, 0755);
	if (r < 0)
		return log_error_errno(r, "Failed to create %s: %m", a->runtime_dir);
	struct caad_actuator_options ao = {
		.sysroot = a->sysroot,
		.journal_path = journal,
		.dry_run = d->config.mode != CAAD_MODE_ENFORCE,
		.backoff_sec = d->config.backoff_sec,
	};
	r = caad_actuator_new(&ao, &d->actuator);
	if (r < 0)
		return r;
	r = caad_plan_scratch_new(&d->plan_scratch);
	if (r < 0)
		return log_error_errno(r, "Out of memory: %m");
	r = caad_irqbalance_sync_new(a->sysroot, irqb_journal, &d->irqbalance);
	if (r < 0)
		return r;

	r = caad_link_watch_new(on_link_change, d, &d->links);
	if (r < 0)
		return r;
	/* a link that changed since the first inventory (the BPF load and the
	 * rest of the start-up came between): read again at the first scan */
	d->inventory_dirty = true;

	r = drop_privileges();
	if (r < 0)
		return r;

	/* where caad may run, as it was started: what it keeps to, less the
	 * heavy readers' CPUs (keep_off_readers()) */
	d->own_fixed = caad_cpumask_of_task(0, &d->own_base) < 0;
	d->own_cpus = d->own_base;

	r = sd_event_default(&d->event);
	if (r < 0)
		return log_error_errno(r, "Failed to create the event loop: %m");
	if ((r = add_signal(d->event, SIGTERM, on_exit_signal, d)) < 0 ||
	    (r = add_signal(d->event, SIGINT, on_exit_signal, d)) < 0 ||
	    (r = add_signal(d->event, SIGHUP, on_reload_signal, d)) < 0 ||
	    (r = sd_event_add_io(d->event, NULL, caad_observer_fd(d->observer), EPOLLIN, on_ringbuf, d)) < 0 ||
	    (r = sd_event_add_io(d->event, NULL, caad_link_watch_fd(d->links), EPOLLIN, on_links, d)) < 0 ||
	    (r = sd_event_add_time_relative(d->event, &d->timer, CLOCK_MONOTONIC, 0, 1000, on_timer, d)) < 0 ||
	    (r = sd_event_add_time(d->event, &d->prepare, CLOCK_MONOTONIC, UINT64_MAX, 1000, on_prepare, d)) < 0 ||
	    (r = sd_event_source_set_enabled(d->prepare, SD_EVENT_OFF)) < 0)
		return log_error_errno(r, "Failed to set up the event loop: %m");
	r = sd_event_source_set_enabled(d->timer, SD_EVENT_ON);
	if (r < 0)
		return r;
	/* a scan timer that fails is disabled by sd-event, silently, while the
	 * loop would go on pinging the watchdog: end the loop instead (caad
	 * restores and exits with a failure, and systemd restarts it) */
	r = sd_event_source_set_exit_on_failure(d->timer, true);
	if (r < 0)
		return log_error_errno(r, "Failed to set up the scan timer: %m");
	(void)sd_event_set_watchdog(d->event, true);
	r = caad_bus_open(d, &d->bus); /* without a bus caad runs on, without the API */
	if (r < 0)
		return r;

	log_info("caad %s running: mode %s, placement %s, scan every %u ms, heavy from %.2f Gbit/s", CAAD_VERSION,
	         caad_mode_to_string(d->config.mode), caad_placement_to_string(d->config.placement),
	         d->config.interval_ms, d->config.policy.rate_threshold_bps / 1e9);
	sd_notify(false, "READY=1\nSTATUS=running");

	r = sd_event_loop(d->event);

	sd_notify(false, "STOPPING=1");
	daemon_metrics_file_remove(d);
	int q = caad_actuator_restore(d->actuator);
	/* irqbalance's own list not back (logged, its journal kept for the
	 * next start or caad --restore): a failure too, as for --restore */
	int qi = caad_irqbalance_sync_restore(d->irqbalance);
	if (q < 0)
		log_error_errno(q, "Some values could not be restored; the journal %s is kept for the next start: %m",
		                journal);
	if (qi < 0) /* (sync_restore() says a repeated failure once: said here at exit) */
		log_error_errno(qi, "irqbalance's own banned IRQs could not be given back; its journal is kept for the "
		                    "next start: %m");
	if (qi < 0 && q >= 0)
		q = qi;
	return r < 0 ? r : q;
}

void daemon_done(struct daemon *d)
{
	free(d->inventory_missing);
	closed_loop_done(&d->loop);
	caad_bus_free(d->bus);
	free(d->flows);
	caad_plan_free(d->plan);
	free(d->decision_logs);
	free(d->next_decision_logs);
	caad_plan_scratch_free(d->plan_scratch);
	caad_link_watch_free(d->links);
	sd_event_source_unref(d->timer);
	sd_event_source_unref(d->prepare);
	sd_event_unref(d->event);
	caad_actuator_free(d->actuator);
	caad_irqbalance_sync_free(d->irqbalance);
	caad_observer_free(d->observer);
	caad_inventory_free(d->inv);
	caad_topology_free(d->topo);
	caad_config_done(&d->config);
	free(d->cpus_online);
	free(d->cpus_online_failed);
	free(d->autoselected);
	free(d->ntuple_noted);
	free(d->state_path);
	free(d->metrics_written);
	free(d->metrics_failing);
	free(d->reload_note);
}

int daemon_print_topology(const struct args *a, const struct caad_config *c)
{
	_cleanup_(caad_topology_freep) struct caad_topology *t = NULL;
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	char **names = c->interfaces, **auto_names = NULL;
	size_t n = c->n_interfaces;
	int r;

	r = caad_topology_load(a->topology_path, a->sysroot, &t);
	if (r < 0)
		return r;
	if (n == 0) {
		r = caad_inventory_autoselect(a->sysroot, &auto_names);
		if (r < 0)
			return r;
		names = auto_names;
		n = (size_t)r;
	}
	r = caad_inventory_load(a->sysroot, names, n, &inv);
	caad_strv_free(auto_names);
	if (r < 0)
		return r;
	(void)caad_inventory_locate(inv, t);
	r = a->json ? caad_topology_to_json(t, inv, stdout) : caad_topology_print(t, inv, stdout);
	if (r >= 0 && fflush(stdout) != 0)
		r = -errno;
	if (r < 0)
		return log_error_errno(r, "Failed to print the topology: %m");
	return 0;
}
