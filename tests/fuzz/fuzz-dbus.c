/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The D-Bus method arguments (src/lib/busargs.c): a method call is built
 * from the input, without a bus daemon (tests/bus-message.h), sealed as
 * sd-bus hands it to a handler, and given to the argument reader of every
 * method that has arguments (Explain, SetMode, SetPlacement).
 *
 * Each line of the input is one argument of the call, "TYPE VALUE":
 *
 *   s VALUE, o VALUE, g VALUE     a string, object path, signature
 *   y b n q i u x t d VALUE       a number (VALUE as strtoll/strtoull/strtod read it)
 *   as A,B,...                    an array of strings
 *   v VALUE                       a variant holding a string
 *   (s) VALUE                     a struct of one string
 *   a{ss} K=V,...                 a dict of strings
 *
 * and any other line is one string argument, the whole line; so "dry-run"
 * alone is a good SetMode call, "measure" a good SetPlacement call, and
 * "s dry-run\ni 1" one with an extra argument.
 * In values, \n \t \\ and \xHH stand for their byte. A value sd-bus refuses
 * (not UTF-8, not an object path) leaves its argument out.
 *
 * Checked, besides ASan/UBSan: each reader answers 0 exactly for a call of
 * signature 's' whose string is good (by a reference parser), fills its
 * result from that string, and otherwise sets the error the daemon must
 * send (InvalidArgs for another signature; NoSuchFlow and the errno of
 * caad_busargs_parse_flow_id() for a bad flow id) with a message that is
 * valid UTF-8 without control characters and short, and leaves its result
 * alone. Every string value, and the raw input, also goes through the
 * string parsers directly, bytes sd-bus would refuse included.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "caad/busargs.h"
#include "caad/utf8.h"
#include "fuzz.h"
#include "../bus-message.h"

#define MAX_ARGS 64
#define MESSAGE_MAX 512 /* longest error message: fixed words and two echoes */

static void message_unrefp(sd_bus_message **m)
{
	sd_bus_message_unref(*m);
}

/* Valid UTF-8 without control characters: what sanitizing leaves as it is. */
static bool clean_text(const char *s)
{
	_cleanup_free_ char *copy = strdup(s);

	fuzz_assert(copy);
	return streq(caad_utf8_sanitize(copy, false), s);
}

/* ---- references ---- */

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* What caad_busargs_parse_flow_id() must answer, by strtoull(). */
static int reference_flow_id(const char *s, uint64_t *ret)
{
	unsigned long long v;
	const char *p = s;

	if (p[0] == '0' && (p[1] | 0x20) == 'x')
		p += 2;
	if (!*p)
		return -EINVAL;
	for (const char *q = p; *q; q++)
		if (!is_hex(*q))
			return -EINVAL;
	errno = 0;
	v = strtoull(p, NULL, 16);
	if (errno == ERANGE)
		return -ERANGE;
	fuzz_assert(errno == 0);
	*ret = v;
	return 0;
}

static int reference_mode(const char *s)
{
	static const char *const names[] = { "enforce", "dry-run", "observe" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (streq(s, names[i]))
			return (int)i;
	return -EINVAL;
}

static int reference_placement(const char *s)
{
	static const char *const names[] = { "prior", "measure" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (streq(s, names[i]))
			return (int)i;
	return -EINVAL;
}

/* ---- the string parsers on any bytes ---- */

static void check_strings(const char *s)
{
	char echo[CAAD_BUSARGS_ECHO_MAX];
	uint64_t v = 0x5a5a5a5a5a5a5a5a, want = 0;
	int r, w;

	r = caad_busargs_parse_flow_id(s, &v);
	w = reference_flow_id(s, &want);
	fuzz_assert(r == w);
	fuzz_assert(r == 0 ? v == want : v == 0x5a5a5a5a5a5a5a5a);

	fuzz_assert(caad_mode_from_string(s) == reference_mode(s));
	fuzz_assert(caad_placement_from_string(s) == reference_placement(s));

	fuzz_assert(caad_busargs_echo(echo, s) == echo);
	fuzz_assert(strlen(echo) < sizeof(echo));
	fuzz_assert(clean_text(echo));
	if (strlen(s) < sizeof(echo) && clean_text(s))
		fuzz_assert(streq(echo, s));
}

/* ---- the readers on a message ---- */

static void check_error(sd_bus_error *e, const char *name)
{
	fuzz_assert(sd_bus_error_is_set(e));
	fuzz_assert(streq(e->name, name));
	fuzz_assert(e->message);
	fuzz_assert(strlen(e->message) < MESSAGE_MAX);
	fuzz_assert(clean_text(e->message));
	sd_bus_error_free(e);
}

/* arg: the string of a call of signature "s", else NULL. */
static void check_readers(sd_bus_message *m, const char *arg)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct caad_busargs_explain x, poison_x;
	struct caad_busargs_set_mode sm = { .mode = _CAAD_MODE_COUNT };
	struct caad_busargs_set_placement sp = { .placement = _CAAD_PLACEMENT_COUNT };
	uint64_t want = 0;
	int r, w;

	memset(&poison_x, 0x5a, sizeof(poison_x));
	x = poison_x;
	fuzz_assert(sd_bus_message_rewind(m, true) >= 0);
	r = caad_busargs_read_explain(m, &x, &e);
	if (!arg) {
		fuzz_assert(r == -EINVAL);
		check_error(&e, SD_BUS_ERROR_INVALID_ARGS);
		fuzz_assert(memcmp(&x, &poison_x, sizeof(x)) == 0);
	} else if ((w = reference_flow_id(arg, &want)) < 0) {
		fuzz_assert(r == w);
		check_error(&e, CAAD_BUS_ERROR_NO_SUCH_FLOW);
		fuzz_assert(memcmp(&x, &poison_x, sizeof(x)) == 0);
	} else {
		char echo[CAAD_BUSARGS_ECHO_MAX];

		fuzz_assert(r == 0);
		fuzz_assert(!sd_bus_error_is_set(&e));
		fuzz_assert(x.flow_id == want);
		fuzz_assert(streq(x.flow_id_text, caad_busargs_echo(echo, arg)));
		fuzz_assert(caad_busargs_no_such_flow(&x, &e) == -ENOENT);
		check_error(&e, CAAD_BUS_ERROR_NO_SUCH_FLOW);
	}

	fuzz_assert(sd_bus_message_rewind(m, true) >= 0);
	r = caad_busargs_read_set_mode(m, &sm, &e);
	if (arg && (w = reference_mode(arg)) >= 0) {
		fuzz_assert(r == 0);
		fuzz_assert(!sd_bus_error_is_set(&e));
		fuzz_assert((int)sm.mode == w);
	} else {
		fuzz_assert(r == -EINVAL);
		check_error(&e, SD_BUS_ERROR_INVALID_ARGS);
		fuzz_assert(sm.mode == _CAAD_MODE_COUNT);
	}

	fuzz_assert(sd_bus_message_rewind(m, true) >= 0);
	r = caad_busargs_read_set_placement(m, &sp, &e);
	if (arg && (w = reference_placement(arg)) >= 0) {
		fuzz_assert(r == 0);
		fuzz_assert(!sd_bus_error_is_set(&e));
		fuzz_assert((int)sp.placement == w);
	} else {
		fuzz_assert(r == -EINVAL);
		check_error(&e, SD_BUS_ERROR_INVALID_ARGS);
		fuzz_assert(sp.placement == _CAAD_PLACEMENT_COUNT);
	}
}

/* ---- the input as a call ---- */

static int unhex(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* value[0..len) with its escapes undone, NUL-terminated (a \x00 ends it early). */
static char *decode(const char *value, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	fuzz_assert(out);
	for (size_t i = 0; i < len; i++) {
		char c = value[i];

		if (c == '\\' && i + 1 < len) {
			char n = value[i + 1];

			if (n == 'n' || n == 't' || n == '\\') {
				c = n == 'n' ? '\n' : n == 't' ? '\t' : '\\';
				i++;
			} else if (n == 'x' && i + 3 < len && is_hex(value[i + 2]) && is_hex(value[i + 3])) {
				c = (char)(unhex(value[i + 2]) << 4 | unhex(value[i + 3]));
				i += 3;
			}
		}
		*o++ = c;
	}
	*o = '\0';
	return out;
}

/*
 * Whether sd-bus takes v as a value of type (s, o or g), tried on a
 * message of its own: sd-bus 252 refuses a bad string but leaves its type
 * in the message's signature, and would seal a message whose body lacks it
 * (one that could never come off the wire).
 */
static bool bus_accepts(char type, const char *v)
{
	_cleanup_(message_unrefp) sd_bus_message *scratch = NULL;

	fuzz_assert(test_bus_call_new("Explain", &scratch) >= 0);
	return sd_bus_message_append_basic(scratch, type, v) >= 0;
}

/* The items of a comma-separated list, decoded: strings, or K=V entries. */
static int append_items(sd_bus_message *m, const char *value, size_t len, bool dict)
{
	size_t start = 0;
	int r = 0;

	for (size_t i = 0; r >= 0 && i <= len; i++) {
		_cleanup_free_ char *item = NULL;
		char *eq;

		if (i < len && value[i] != ',')
			continue;
		item = decode(value + start, i - start);
		start = i + 1;
		check_strings(item);
		if (!bus_accepts('s', item))
			continue; /* left out */
		if (!dict) {
			r = sd_bus_message_append_basic(m, 's', item);
			continue;
		}
		eq = strchr(item, '=');
		if (eq)
			*eq++ = '\0';
		r = sd_bus_message_append(m, "{ss}", item, eq ?: "");
	}
	return r;
}

/* One line as an argument of m. 0: appended (*string: a plain string
 * argument's value, else NULL); 1: left out, a value sd-bus refuses;
 * <0: sd-bus refused it otherwise (a signature over 255 characters). */
static int append_line(sd_bus_message *m, const char *line, size_t len, char **string)
{
	static const char *const basic = "sogybnqiuxtd";
	const char *sp = memchr(line, ' ', len);
	size_t tlen = sp ? (size_t)(sp - line) : 0;
	const char *value = sp ? sp + 1 : line;
	size_t vlen = sp ? len - tlen - 1 : len;
	_cleanup_free_ char *v = NULL;
	char type = 's';
	int r;

	*string = NULL;
	if (tlen == 1 && line[0] && strchr(basic, line[0]))
		type = line[0];
	else if (tlen == 2 && memcmp(line, "as", 2) == 0)
		type = 'a';
	else if (tlen == 1 && line[0] == 'v')
		type = 'v';
	else if (tlen == 3 && memcmp(line, "(s)", 3) == 0)
		type = 'r';
	else if (tlen == 5 && memcmp(line, "a{ss}", 5) == 0)
		type = 'e';
	else {
		value = line; /* the whole line, a string */
		vlen = len;
	}

	if (type == 'a' || type == 'e') {
		r = sd_bus_message_open_container(m, 'a', type == 'a' ? "s" : "{ss}");
		if (r >= 0)
			r = append_items(m, value, vlen, type == 'e');
		if (r >= 0)
			r = sd_bus_message_close_container(m);
		return r < 0 ? r : 0;
	}

	v = decode(value, vlen);
	check_strings(v);
	/* the strings, also those in a variant or struct */
	if (strchr("sogvr", type) && !bus_accepts(type == 'o' || type == 'g' ? type : 's', v))
		return 1; /* left out */
	switch (type) {
	case 's':
	case 'o':
	case 'g':
		r = sd_bus_message_append_basic(m, type, v);
		if (r >= 0 && type == 's')
			*string = TAKE_PTR(v);
		break;
	case 'y': {
		uint8_t x = (uint8_t)strtoull(v, NULL, 0);
		r = sd_bus_message_append_basic(m, type, &x);
		break;
	}
	case 'b':
	case 'i': {
		int32_t x = (int32_t)strtoll(v, NULL, 0);
		r = sd_bus_message_append_basic(m, type, &x);
		break;
	}
	case 'n':
	case 'q': {
		uint16_t x = (uint16_t)strtoull(v, NULL, 0);
		r = sd_bus_message_append_basic(m, type, &x);
		break;
	}
	case 'u': {
		uint32_t x = (uint32_t)strtoull(v, NULL, 0);
		r = sd_bus_message_append_basic(m, type, &x);
		break;
	}
	case 'x':
	case 't': {
		uint64_t x = strtoull(v, NULL, 0);
		r = sd_bus_message_append_basic(m, type, &x);
		break;
	}
	case 'd': {
		double x = strtod(v, NULL);
		r = sd_bus_message_append_basic(m, type, &x);
		break;
	}
	case 'v':
		r = sd_bus_message_append(m, "v", "s", v);
		break;
	case 'r':
		r = sd_bus_message_append(m, "(s)", v);
		break;
	default:
		abort();
	}
	return r < 0 ? r : 0;
}

/* A call with one string argument s, whatever the input's signature: every
 * value reaches the readers' value checks. */
static void check_one_string(const char *s)
{
	_cleanup_(message_unrefp) sd_bus_message *m = NULL;

	fuzz_assert(test_bus_call_new("SetMode", &m) >= 0);
	if (sd_bus_message_append_basic(m, 's', s) < 0)
		return; /* not UTF-8: sd-bus keeps it out of any message */
	fuzz_assert(test_bus_seal(m) >= 0);
	check_readers(m, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_(message_unrefp) sd_bus_message *m = NULL;
	_cleanup_free_ char *raw = NULL, *first = NULL, *last = NULL;
	const char *text = (const char *)data, *end = text + size;
	unsigned n_args = 0, n_strings = 0;
	bool one_string;

	fuzz_setup();
	raw = fuzz_strndup(data, size);
	check_strings(raw);

	fuzz_assert(test_bus_call_new("Explain", &m) >= 0);
	for (const char *line = text; line < end && n_args < MAX_ARGS;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
		char *string;
		int r;

		r = append_line(m, line, len, &string);
		if (r < 0)
			return 0; /* sd-bus refused it: a signature over 255 characters */
		if (r == 0)
			n_args++;
		if (string) {
			n_strings++;
			free(last);
			last = string;
			if (!first) {
				first = strdup(string);
				fuzz_assert(first);
			}
		}
		line += len + 1;
	}
	if (test_bus_seal(m) < 0)
		return 0;
	/* signature "s", the only good one: one argument, a string */
	one_string = n_args == 1 && n_strings == 1;
	fuzz_assert(streq(sd_bus_message_get_signature(m, true), "s") == one_string);
	check_readers(m, one_string ? last : NULL);
	if (first)
		check_one_string(first);
	return 0;
}
