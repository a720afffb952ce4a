/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding the IRQs of rx queues in /proc/interrupts. The input's first line
 * is "IFNAME [DEVNAME [MSI-IRQ-LIST [N-RX]]]" (what sysfs would tell about
 * the interface: its name, the device behind it, its MSI vectors as a
 * cpulist, its rx queue count, 1-128, default 8); the rest is the text of
 * /proc/interrupts. Checked, with queue KEPT_QUEUE holding an IRQ before:
 *  - it keeps it;
 *  - every other IRQ a queue gets comes from a line (one of the MSI
 *    vectors, when there are any) whose first queue-naming action names
 *    vector number queue + d, one d for all queues; or, with one queue,
 *    from a line whose only action is IFNAME;
 *  - queues get IRQs from names all or none;
 *  - where every queue has a line naming its own number and the names
 *    are all bare ("eth0-N") or none is, every queue gets one.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "caad/cpumask.h"
#include "caad/inventory.h"
#include "fuzz.h"

#define N_RX_MAX 128
#define KEPT_QUEUE 5 /* has an IRQ before parsing (when there are that many queues) */
#define KEPT_IRQ 100000 /* set before parsing: no line may take it away */

static struct caad_queue rx[N_RX_MAX];
static unsigned n_rx;

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

/* A bare "<name>-<digits>" (no infix): its number may count all vectors. */
static bool is_bare(const char *name, const char *action)
{
	size_t n = strlen(name);

	return strncmp(action, name, n) == 0 && action[n] == '-' && action[n + 1] &&
	       strspn(action + n + 1, "0123456789") == strlen(action + n + 1);
}

/* One IRQ line of text, read independently of the parser's own tokenizing. */
struct line {
	unsigned irq;
	int q;      /* the number its first queue-naming action names, or -1 */
	bool bare;  /* that action is a bare "<name>-<N>" */
	bool plain; /* no queue name; its last word is IFNAME and no word ends in ',' */
	bool allowed; /* one of the MSI vectors, or there are none */
};

static size_t read_lines(const char *text, const char *ifname, const char *devname, const unsigned *msi,
                         size_t n_msi, struct line **ret)
{
	_cleanup_free_ char *copy = strdup(text);
	struct line *lines = NULL;
	size_t n = 0;
	char *line, *next;

	fuzz_assert(copy);
	for (line = copy; line; line = next) {
		char *p = line, *e, *last = NULL;
		unsigned long irq;
		bool comma = false;
		struct line l = { .q = -1 };

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
		l.irq = (unsigned)irq;
		for (char *tok = e + 1; *tok;) {
			size_t k;
			char saved;

			tok += strspn(tok, " \t");
			k = strcspn(tok, " \t");
			if (k == 0)
				break;
			saved = tok[k];
			tok[k] = '\0';
			if (tok[k - 1] == ',') {
				tok[k - 1] = '\0';
				comma = true;
			}
			if (l.q < 0) {
				l.q = match(ifname, devname, tok);
				if (l.q >= 0) /* named by IFNAME first, else by DEVNAME */
					l.bare = caad_inventory_match_irq_name(ifname, tok) >= 0 ? is_bare(ifname, tok)
					                                                         : is_bare(devname, tok);
			}
			last = tok;
			tok[k] = saved;
			tok += k;
		}
		/* last points into the restored line: compare up to its end */
		l.plain = l.q < 0 && last && !comma && strncmp(last, ifname, strlen(ifname)) == 0 &&
		          strcspn(last + strlen(ifname), " \t") == 0;
		l.allowed = n_msi == 0;
		for (size_t i = 0; i < n_msi; i++)
			l.allowed |= msi[i] == l.irq;
		lines = realloc(lines, (n + 1) * sizeof(*lines));
		fuzz_assert(lines);
		lines[n++] = l;
	}
	*ret = lines;
	return n;
}

/* Some allowed line names vector queue + d and carries irq. */
static bool justified(const struct line *lines, size_t n, unsigned queue, int irq, unsigned d)
{
	for (size_t i = 0; i < n; i++)
		if (lines[i].allowed && lines[i].q >= 0 && (unsigned)lines[i].q == queue + d && (int)lines[i].irq == irq)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *s = fuzz_strndup(data, size);
	_cleanup_free_ struct line *lines = NULL;
	struct caad_iface iface = { .rx = rx };
	struct caad_cpumask msi_mask;
	unsigned msi[CAAD_CPUS_MAX];
	size_t n_msi = 0, n_lines;
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
	w = strtok_r(NULL, " ", &save);
	n_rx = w ? (unsigned)strtoul(w, NULL, 10) : 8;
	if (n_rx == 0 || n_rx > N_RX_MAX)
		n_rx = 8;
	iface.n_rx = n_rx;
	if (!iface.name[0])
		return 0; /* a NUL byte first: no interface has an empty name */

	for (unsigned i = 0; i < n_rx; i++)
		rx[i] = (struct caad_queue){ .index = i, .irq = -1 };
	if (KEPT_QUEUE < n_rx)
		rx[KEPT_QUEUE].irq = KEPT_IRQ;

	fuzz_assert(caad_inventory_parse_interrupts(&iface, text, msi, n_msi, devname) == 0);
	n_lines = read_lines(text, iface.name, devname, msi, n_msi, &lines);

	if (KEPT_QUEUE < n_rx)
		fuzz_assert(rx[KEPT_QUEUE].irq == KEPT_IRQ);

	/* one offset d justifies every IRQ given (tried: each a line could imply) */
	unsigned given = 0, open = 0;
	for (unsigned i = 0; i < n_rx; i++) {
		fuzz_assert(rx[i].index == i);
		if (i == KEPT_QUEUE)
			continue;
		given += rx[i].irq >= 0;
		open++;
	}
	bool plain_given = false;
	if (given == 1 && n_rx == 1) /* the one queue of an IRQ named IFNAME? */
		for (size_t k = 0; k < n_lines; k++)
			plain_given |= lines[k].allowed && lines[k].plain && (int)lines[k].irq == rx[0].irq;
	if (given && !plain_given) {
		bool any_d = false;
		for (size_t k = 0; k < n_lines && !any_d; k++) {
			unsigned d;
			bool all = true;

			if (!lines[k].allowed || lines[k].q < 0)
				continue;
			d = (unsigned)lines[k].q; /* the d that makes this line queue 0's */
			for (unsigned i = 0; i < n_rx && all; i++)
				if (i != KEPT_QUEUE && rx[i].irq >= 0)
					all = justified(lines, n_lines, i, rx[i].irq, d);
			any_d = all;
		}
		fuzz_assert(any_d);
		fuzz_assert(given == open); /* all or none */
	}

	/* every queue named by its own number, names of one kind: all given */
	bool bare = false, infix = false, each = true;
	for (size_t k = 0; k < n_lines; k++)
		if (lines[k].allowed && lines[k].q >= 0) {
			bare |= lines[k].bare;
			infix |= !lines[k].bare;
		}
	for (unsigned i = 0; i < n_rx && each; i++) {
		bool named = i == KEPT_QUEUE;
		for (size_t k = 0; k < n_lines && !named; k++)
			named = lines[k].allowed && lines[k].q == (int)i;
		each = named;
	}
	if (each && !(bare && infix))
		fuzz_assert(given == open);
	return 0;
}
