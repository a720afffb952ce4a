/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "caad/flow.h"
#include "caad/inventory.h"
#include "caad/plan.h"

/*
 * What caad currently sees and decides, as one JSON document: the flows
 * (all of them, heavy ones with their decision) and the managed queues.
 * Written atomically to RUNTIME_DIR/state.json every scan, for people,
 * scripts and tests.
 */
/* Light flows listed at most; "n_flows" counts all, "flows_omitted" the rest. */
#define CAAD_STATE_LIGHT_MAX 256

int caad_state_format(FILE *f, const struct caad_flow *flows, size_t n_flows, const struct caad_inventory *inv,
                      const struct caad_plan *plan, const char *mode);
int caad_state_write(const char *path, const struct caad_flow *flows, size_t n_flows,
                     const struct caad_inventory *inv, const struct caad_plan *plan, const char *mode);
