/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * D-Bus method calls made in the test itself, as sd-bus hands them to a
 * method handler (sealed, read from the start), with no bus daemon: for
 * tests/unit/test-busargs.c and tests/fuzz/fuzz-dbus.c.
 *
 * sd-bus makes messages only for a bus that was started, so the bus is
 * started on one end of a socketpair: it writes its AUTH line there and
 * never hears back. Nothing is sent. Never flush it (sd_bus_flush() would
 * wait for the authentication): test_bus_free() closes it.
 */
#pragma once

#include <errno.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

static sd_bus *test_bus_;
static int test_bus_peer_ = -1;

static inline void test_bus_free(void)
{
	if (test_bus_) {
		sd_bus_close(test_bus_);
		test_bus_ = sd_bus_unref(test_bus_);
	}
	if (test_bus_peer_ >= 0)
		close(test_bus_peer_);
	test_bus_peer_ = -1;
}

static inline sd_bus *test_bus(void)
{
	sd_bus *bus = NULL;
	int sv[2], r;

	if (test_bus_)
		return test_bus_;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_fd(bus, sv[0], sv[0]);
	if (r < 0) {
		sd_bus_unref(bus);
		close(sv[0]);
		close(sv[1]);
		return NULL;
	}
	/* the bus owns sv[0] now */
	r = sd_bus_start(bus);
	if (r < 0) {
		sd_bus_unref(bus);
		close(sv[1]);
		return NULL;
	}
	test_bus_ = bus;
	test_bus_peer_ = sv[1];
	return test_bus_;
}

/* A call of org.caad1.Manager's member, to fill before test_bus_seal(). */
static inline int test_bus_call_new(const char *member, sd_bus_message **ret)
{
	sd_bus *bus = test_bus();

	if (!bus)
		return -ENOTCONN;
	return sd_bus_message_new_method_call(bus, ret, "org.caad1", "/org/caad1", "org.caad1.Manager", member);
}

/* Seal m as if received, and go back to its first argument. */
static inline int test_bus_seal(sd_bus_message *m)
{
	static uint64_t cookie;
	int r;

	r = sd_bus_message_seal(m, ++cookie, 0);
	if (r < 0)
		return r;
	return sd_bus_message_rewind(m, true);
}
