/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>
#include <systemd/sd-bus.h>

#include "caad/config.h"

/*
 * The arguments of org.caad1.Manager's methods (docs/dbus.md), read from
 * the method call and checked here, not in the daemon, so that the unit
 * tests and fuzz-dbus run the code the daemon runs. Only Explain, SetMode
 * and SetPlacement take arguments; the properties are read-only.
 *
 * caad_busargs_read_*() read from m's current position (m sealed, as sd-bus
 * hands a call to its handler). On success they fill *ret and return 0. On
 * failure they set error to what the caller gets back, return a negative
 * errno and leave *ret alone; the message names the method and what it
 * expects, quotes the offending value (shortened, made valid UTF-8) and is
 * valid UTF-8 itself, as a D-Bus reply needs.
 *
 *   -EINVAL  arguments of another signature than the method's, or extra
 *            ones: org.freedesktop.DBus.Error.InvalidArgs; an unknown mode or
 *            placement: InvalidArgs; a flow id that is not hex: CAAD_BUS_ERROR_NO_SUCH_FLOW
 *   -ERANGE  a flow id above 64 bits: CAAD_BUS_ERROR_NO_SUCH_FLOW
 *   -ENOMEM  (error not set)
 */
#define CAAD_BUS_ERROR_NO_SUCH_FLOW "org.caad1.Error.NoSuchFlow"

/* Enough of a caller's string to recognize it, in an error message. */
#define CAAD_BUSARGS_ECHO_MAX 64

struct caad_busargs_explain {
	uint64_t flow_id;
	char flow_id_text[CAAD_BUSARGS_ECHO_MAX]; /* as the caller gave it, for messages */
};

struct caad_busargs_set_mode {
	enum caad_mode mode;
};

struct caad_busargs_set_placement {
	enum caad_placement placement;
};

/* Explain(s flow_id): the id as ListFlows gives it, with or without 0x. */
int caad_busargs_read_explain(sd_bus_message *m, struct caad_busargs_explain *ret, sd_bus_error *error);
/* The error of an Explain whose flow is not in the last scan: -ENOENT. */
int caad_busargs_no_such_flow(const struct caad_busargs_explain *args, sd_bus_error *error);

/* SetMode(s mode): enforce, dry-run or observe. */
int caad_busargs_read_set_mode(sd_bus_message *m, struct caad_busargs_set_mode *ret, sd_bus_error *error);

/* SetPlacement(s placement): prior or measure. */
int caad_busargs_read_set_placement(sd_bus_message *m, struct caad_busargs_set_placement *ret,
                                    sd_bus_error *error);

/* A flow id: 1 or more hex digits (either case) after an optional 0x or 0X,
 * nothing else (no sign, no spaces). 0, -EINVAL or -ERANGE; *ret untouched
 * on error. */
int caad_busargs_parse_flow_id(const char *s, uint64_t *ret);

/* s shortened to fit buf (its end replaced by "...") and made valid UTF-8
 * without control characters; NULL as "". Returns buf. */
char *caad_busargs_echo(char buf[static CAAD_BUSARGS_ECHO_MAX], const char *s);
