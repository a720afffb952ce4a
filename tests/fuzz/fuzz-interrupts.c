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
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "caad/cpumask.h"
#include "caad/inventory.h"
#include "fuzz.h"

#define N_RX 128
#define KEPT_QUEUE 5 /* has an IRQ before parsing */
#define KEPT_IRQ 100000 /* set before parsing: no line may take it away */

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
		errno = 0;
		irq = strtoul(p, &e, 10);
		if (errno || *e != ':' || strspn(p, "0123456789") != (size_t)(e - p) || irq > INT_MAX)
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
	const unsigned *msi; /* sorted */
	size_t n_msi;
	unsigned queue;
	int irq;
	bool justified;
};

static bool msi_allows(const struct check *c, unsigned irq)
{
	if (c->n_msi == 0)
		return true;
	for (size_t i = 0; i < c->n_msi; i++)
		if (c->msi[i] == irq)
			return true;
	return false;
}

static void check_justified(unsigned irq, int q, void *userdata)
{
	struct check *c = userdata;

	if ((int)irq == c->irq && q == (int)c->queue && msi_allows(c, irq))
		c->justified = true;
}

static void check_complete(unsigned irq, int q, void *userdata)
{
	struct check *c = userdata;

	if (q >= 0 && q < N_RX && msi_allows(c, irq))
		fuzz_assert(rx[q].irq >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *s = fuzz_strndup(data, size);
	struct caad_iface iface = { .rx = rx, .n_rx = N_RX };
	struct caad_cpumask msi_mask;
	unsigned msi[CAAD_CPUS_MAX];
	size_t n_msi = 0;
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
	if (!w || caad_cpumask_parse_list(w, &msi_mask) < 0)
		caad_cpumask_zero(&msi_mask);
	CAAD_CPUMASK_FOREACH(irq, &msi_mask)
		msi[n_msi++] = (unsigned)irq; /* ascending */
	if (!iface.name[0])
		return 0; /* a NUL byte first: no interface has an empty name */

	for (unsigned i = 0; i < N_RX; i++)
		rx[i] = (struct caad_queue){ .index = i, .irq = -1 };
	rx[KEPT_QUEUE].irq = KEPT_IRQ;

	fuzz_assert(caad_inventory_parse_interrupts(&iface, text, msi, n_msi, devname) == 0);

	fuzz_assert(rx[KEPT_QUEUE].irq == KEPT_IRQ);
	for (unsigned i = 0; i < N_RX; i++) {
		struct check c = { .msi = msi, .n_msi = n_msi, .queue = i, .irq = rx[i].irq };

		fuzz_assert(rx[i].index == i);
		if (i == KEPT_QUEUE || rx[i].irq < 0)
			continue;
		for_each_irq_line(text, iface.name, devname, check_justified, &c);
		fuzz_assert(c.justified);
	}
	struct check c = { .msi = msi, .n_msi = n_msi };
	for_each_irq_line(text, iface.name, devname, check_complete, &c);
	return 0;
}
