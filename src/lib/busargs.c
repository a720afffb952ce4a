/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The arguments of the D-Bus methods: read, checked, and the error a bad
 * one earns. sd-bus already refuses a call whose signature differs from
 * the vtable's; the checks are repeated here so that this code stands on
 * its own (the fuzzer builds any message it likes).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "caad/busargs.h"
#include "caad/macro.h"
#include "caad/utf8.h"

char *caad_busargs_echo(char buf[static CAAD_BUSARGS_ECHO_MAX], const char *s)
{
	size_t len;

	if (!s)
		s = "";
	len = strlen(s);
	if (len < CAAD_BUSARGS_ECHO_MAX)
		memcpy(buf, s, len + 1);
	else
		/* a UTF-8 sequence cut here becomes '?' below */
		snprintf(buf, CAAD_BUSARGS_ECHO_MAX, "%.*s...", CAAD_BUSARGS_ECHO_MAX - 4, s);
	return caad_utf8_sanitize(buf, false);
}

int caad_busargs_parse_flow_id(const char *s, uint64_t *ret)
{
	uint64_t v = 0;
	bool overflow = false;
	const char *p;

	if (!s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return -EINVAL;
	for (p = s; *p; p++) {
		int d = caad_hex_digit(*p);

		if (d < 0)
			return -EINVAL;
		if (v >> 60)
			overflow = true; /* but a later non-hex byte still makes it -EINVAL */
		v = v << 4 | (unsigned)d;
	}
	if (overflow)
		return -ERANGE;
	*ret = v;
	return 0;
}

/*
 * The one string argument of method(s name), with nothing after it; else
 * InvalidArgs saying what the call had instead. (sd-bus answers a call of
 * another signature than the vtable's before it reaches the handler.)
 */
static int read_one_string(sd_bus_message *m, const char *method, const char *name, const char **ret,
                           sd_bus_error *error)
{
	char sig[CAAD_BUSARGS_ECHO_MAX], had[CAAD_BUSARGS_ECHO_MAX + 16];
	const char *s = NULL, *signature;
	int r;

	r = sd_bus_message_read_basic(m, SD_BUS_TYPE_STRING, &s);
	if (r == -ENOMEM)
		return r;
	if (r > 0 && s)
		r = sd_bus_message_at_end(m, false);
	if (r > 0) {
		*ret = s;
		return 0;
	}
	signature = sd_bus_message_get_signature(m, true);
	if (signature && *signature)
		snprintf(had, sizeof(had), "signature '%s'", caad_busargs_echo(sig, signature));
	else
		snprintf(had, sizeof(had), "no arguments");
	sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
	                  "%s() takes one argument, a string %s (signature 's'); it was called with %s", method, name,
	                  had);
	return -EINVAL;
}

int caad_busargs_read_explain(sd_bus_message *m, struct caad_busargs_explain *ret, sd_bus_error *error)
{
	char echo[CAAD_BUSARGS_ECHO_MAX];
	const char *s;
	uint64_t id;
	int r;

	r = read_one_string(m, "Explain", "flow_id", &s, error);
	if (r < 0)
		return r;
	r = caad_busargs_parse_flow_id(s, &id);
	if (r < 0) {
		sd_bus_error_setf(error, CAAD_BUS_ERROR_NO_SUCH_FLOW, "No flow with id '%s': %s", caad_busargs_echo(echo, s),
		                  r == -ERANGE ? "flow ids have 64 bits (16 hex digits), as ListFlows gives them"
		                               : "flow ids are hex numbers, with or without 0x, as ListFlows gives them");
		return r;
	}
	ret->flow_id = id;
	caad_busargs_echo(ret->flow_id_text, s);
	return 0;
}

int caad_busargs_no_such_flow(const struct caad_busargs_explain *args, sd_bus_error *error)
{
	sd_bus_error_setf(error, CAAD_BUS_ERROR_NO_SUCH_FLOW, "No flow with id '%s' in the last scan (ListFlows lists them)",
	                  args->flow_id_text);
	return -ENOENT;
}

int caad_busargs_read_set_mode(sd_bus_message *m, struct caad_busargs_set_mode *ret, sd_bus_error *error)
{
	char echo[CAAD_BUSARGS_ECHO_MAX];
	const char *s;
	int r, mode;

	r = read_one_string(m, "SetMode", "mode", &s, error);
	if (r < 0)
		return r;
	mode = caad_mode_from_string(s);
	if (mode < 0) {
		sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Unknown mode '%s': expected enforce, dry-run or observe",
		                  caad_busargs_echo(echo, s));
		return -EINVAL;
	}
	ret->mode = (enum caad_mode)mode;
	return 0;
}

int caad_busargs_read_set_placement(sd_bus_message *m, struct caad_busargs_set_placement *ret,
                                    sd_bus_error *error)
{
	char echo[CAAD_BUSARGS_ECHO_MAX];
	const char *s;
	int r, placement;

	r = read_one_string(m, "SetPlacement", "placement", &s, error);
	if (r < 0)
		return r;
	placement = caad_placement_from_string(s);
	if (placement < 0) {
		sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Unknown placement '%s': expected prior or measure",
		                  caad_busargs_echo(echo, s));
		return -EINVAL;
	}
	ret->placement = (enum caad_placement)placement;
	return 0;
}
