/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "caad/topology.h"

/*
 * caad's D-Bus API: org.caad1 at /org/caad1, interface org.caad1.Manager,
 * on the system bus (DBUS_SYSTEM_BUS_ADDRESS is honoured), dispatched by
 * the daemon's sd-event loop. The contract is in docs/dbus.md.
 *
 * Without a bus caad runs on: the API is missing until a connection
 * succeeds (retried every few seconds, also after the bus went away).
 * Every function accepts a NULL bus.
 */
struct caad_bus;
struct daemon;

/* Connect (or plan to retry) on d->event. Fails only for lack of memory. */
int caad_bus_open(struct daemon *d, struct caad_bus **ret);
void caad_bus_free(struct caad_bus *b);

/* Signals. FlowSteered: a heavy flow's decision is new or changed
 * (steer_cpu -1: left alone). PlanApplied: values written by a scan. */
void caad_bus_flow_steered(struct caad_bus *b, uint64_t flow_id, int steer_cpu, enum caad_relation relation);
void caad_bus_plan_applied(struct caad_bus *b, unsigned changed, uint64_t plan_usec);
/* TrialFinished: a closed-loop trial ended with a verdict (a relation) or
 * "aborted". */
void caad_bus_trial_finished(struct caad_bus *b, unsigned trial, const char *verdict);
/* Send PropertiesChanged for the emits-change properties (Mode, Placement,
 * Paused, Interfaces) whose value differs from the last one announced. */
void caad_bus_sync_properties(struct caad_bus *b);
