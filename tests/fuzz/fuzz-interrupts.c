/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding the IRQs of rx queues in /proc/interrupts. The input's first line
 * is "IFNAME [DEVNAME [MSI-IRQ-LIST]]" (what sysfs would tell about the
 * interface: its name, the device behind it, its MSI vectors as a cpulist);
 * the rest is the text of /proc/interrupts. Checked: every IRQ given to a
 * queue comes from a line whose first queue-naming action names that queue
 * and is one of the MSI vectors (when there are any), every such line gives
 * its queue an IRQ, and a queue that had an IRQ keeps it.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "caad/inventory.h"
#include "fuzz.h"

#define N_RX 128
#define KEPT_QUEUE 5 /* has an IRQ before parsing */
#define KEPT_IRQ 100000 /* more than any /proc/interrupts number caad reads */

static struct caad_queue rx[N_RX];

static int match(const char *ifname, const char *devname, const char *action)
{
	int q = caad_inventory_match_irq_name(ifname, action);

	fuzz_assert(q == -ENOENT || (q >= 0 && q <= 65535));
	if (q < 0 && devname[0]) {
		q = caad_inventory_match_irq_name(devname, action);
		fuzz_assert(q == -ENOENT || (q >= 0 && q <= 65535));
	}
	return q;
}

/* For each IRQ line of text: its number and the queue its first matching
 * action names (-1 none). Independent of the parser's own tokenizing. */
typedef void (*line_fn)(unsigned irq, int q, void *userdata);

static void for_each_irq_line(const char *text, const char *ifname, const char *devname, line_fn fn,
                              void *userdata)
{
	_cleanup_free_ char *copy = strdup(text);
	char *line, *next;

	fuzz_assert(copy);
	for (line = copy; line; line = next) {
		char *p = line, *e;
		unsigned long irq;
		int q = -1;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			continue;
		irq = strtoul(p, &e, 10);
		if (*e != ':' || strspn(p, "0123456789") != (size_t)(e - p) || irq > 65535)
			continue;
		for (char *tok = e + 1; *tok && q < 0;) {
			size_t n;
			char saved;

			tok += strspn(tok, " \t");
			n = strcspn(tok, " \t");
			if (n == 0)
				break;
			saved = tok[n];
			tok[n] = '\0';
			if (tok[n - 1] == ',')
				tok[n - 1] = '\0';
			q = match(ifname, devname, tok);
			tok[n] = saved;
			tok += n;
		}
		fn((unsigned)irq, q, userdata);
	}
}

struct check {
	const struct caad_cpumask *msi;
	unsigned queue;
	int irq;
	bool justified;
};

static bool msi_allows(const struct caad_cpumask *msi, unsigned irq)
{
	return caad_cpumask_empty(msi) || caad_cpumask_test(msi, irq);
}

static void check_justified(unsigned irq, int q, void *userdata)
{
	struct check *c = userdata;

	if ((int)irq == c->irq && q == (int)c->queue && msi_allows(c->msi, irq))
		c->justified = true;
}

static void check_complete(unsigned irq, int q, void *userdata)
{
	struct check *c = userdata;

	if (q >= 0 && q < N_RX && msi_allows(c->msi, irq))
		fuzz_assert(rx[q].irq >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *s = fuzz_strndup(data, size);
	struct caad_iface iface = { .rx = rx, .n_rx = N_RX };
	struct caad_cpumask msi;
	char devname[256] = "";
	char *text, *first, *w, *save = NULL;

	fuzz_setup();

	text = strchr(s, '\n');
	if (text)
		*text++ = '\0';
	else
		text = s + size; /* no IRQ lines (or a NUL byte cut them off) */
	first = s;

	w = strtok_r(first, " ", &save);
	snprintf(iface.name, sizeof(iface.name), "%s", w ?: "eth0");
	w = strtok_r(NULL, " ", &save);
	if (w)
		snprintf(devname, sizeof(devname), "%s", w);
	w = strtok_r(NULL, " ", &save);
	if (!w || caad_cpumask_parse_list(w, &msi) < 0)
		caad_cpumask_zero(&msi);
	if (!iface.name[0])
		return 0; /* a NUL byte first: no interface has an empty name */

	for (unsigned i = 0; i < N_RX; i++)
		rx[i] = (struct caad_queue){ .index = i, .irq = -1 };
	rx[KEPT_QUEUE].irq = KEPT_IRQ;

	fuzz_assert(caad_inventory_parse_interrupts(&iface, text, &msi, devname) == 0);

	fuzz_assert(rx[KEPT_QUEUE].irq == KEPT_IRQ);
	for (unsigned i = 0; i < N_RX; i++) {
		struct check c = { .msi = &msi, .queue = i, .irq = rx[i].irq };

		fuzz_assert(rx[i].index == i);
		if (i == KEPT_QUEUE || rx[i].irq < 0)
			continue;
		fuzz_assert(rx[i].irq <= 65535);
		for_each_irq_line(text, iface.name, devname, check_justified, &c);
		fuzz_assert(c.justified);
	}
	struct check c = { .msi = &msi };
	for_each_irq_line(text, iface.name, devname, check_complete, &c);
	return 0;
}
