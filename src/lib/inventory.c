/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/inventory.h"
#include "caad/log.h"
#include "caad/ntuple.h"
#include "caad/sysfs.h"
#include "caad/topology.h"
#include "netdev.h"

static const char *const locality_names[] = {
	[CAAD_LOCALITY_UNKNOWN] = "unknown",
	[CAAD_LOCALITY_HWLOC] = "hwloc",
	[CAAD_LOCALITY_NUMA_NODE] = "numa_node",
	[CAAD_LOCALITY_LOCAL_CPULIST] = "local_cpulist",
};

const char *caad_locality_source_to_string(enum caad_locality_source s)
{
	if ((unsigned)s >= ARRAY_SIZE(locality_names))
		return NULL;
	return locality_names[s];
}

static void iface_done(struct caad_iface *iface)
{
	free(iface->rx);
	iface->rx = NULL;
	iface->n_rx = 0;
	free(iface->napis);
	iface->napis = NULL;
	iface->n_napis = 0;
}

void caad_inventory_free(struct caad_inventory *inv)
{
	if (!inv)
		return;
	for (size_t i = 0; i < inv->n_ifaces; i++)
		iface_done(&inv->ifaces[i]);
	free(inv->ifaces);
	free(inv);
}

const struct caad_iface *caad_inventory_find_ifindex(const struct caad_inventory *inv, int ifindex)
{
	for (size_t i = 0; i < inv->n_ifaces; i++)
		if (inv->ifaces[i].ifindex == ifindex)
			return &inv->ifaces[i];
	return NULL;
}

const struct caad_iface *caad_inventory_find_napi(const struct caad_inventory *inv, uint32_t napi_id,
                                                  int *ret_queue)
{
	if (!napi_id)
		return NULL;
	for (size_t i = 0; i < inv->n_ifaces; i++)
		for (unsigned q = 0; q < inv->ifaces[i].n_rx; q++)
			if (inv->ifaces[i].rx[q].napi_id == napi_id) {
				if (ret_queue)
					*ret_queue = (int)inv->ifaces[i].rx[q].index;
				return &inv->ifaces[i];
			}
	return NULL;
}

/* Parse a decimal number of at most max that ends at end (or at NUL). */
static int parse_number(const char *s, const char *end, unsigned long max, unsigned *ret)
{
	unsigned long v = 0;

	if (!end)
		end = s + strlen(s);
	if (s == end)
		return -EINVAL;
	for (const char *p = s; p < end; p++) {
		unsigned long digit;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		digit = (unsigned long)(*p - '0');
		/* checked before it grows: a 32-bit unsigned long would wrap */
		if (v > (max - digit) / 10)
			return -ERANGE;
		v = v * 10 + digit;
	}
	*ret = (unsigned)v;
	return 0;
}

/* A queue index, ifindex or vector number. */
static int parse_index(const char *s, const char *end, unsigned *ret)
{
	return parse_number(s, end, 65535, ret);
}

/* An IRQ number: hosts with many devices go past 65535. */
static int parse_irq(const char *s, const char *end, unsigned *ret)
{
	return parse_number(s, end, INT_MAX, ret);
}

/* The ifindex in SYSROOT/sys/class/net/NAME/ifindex, or < 0: -ENOENT or
 * -ENODEV no such device (any more), another error (a failed read, odd
 * contents) cannot tell. */
static int ifindex_of(const char *sysroot, const char *name)
{
	_cleanup_free_ char *path = NULL;
	char buf[32];
	unsigned idx;
	int r;

	if (caad_path(&path, sysroot, "/sys/class/net/%s/ifindex", name) < 0)
		return -ENOMEM;
	r = caad_read_line(path, buf, sizeof(buf));
	/* ENOTDIR: a file of that name, not a device; EINVAL: a device being
	 * unregistered (sysfs's netdev_show() refuses it) */
	if (r == -ENOTDIR)
		return -ENOENT;
	if (r == -EINVAL)
		return -ENODEV;
	if (r < 0)
		return r;
	if (parse_number(buf, NULL, INT_MAX, &idx) < 0 || idx == 0)
		return -EINVAL;
	return (int)idx;
}

static bool no_such_device(int r)
{
	return r == -ENOENT || r == -ENODEV;
}

int caad_inventory_iface_fate(const char *sysroot, const char *name, int ifindex, char ret_name[static IF_NAMESIZE])
{
	_cleanup_free_ char *dir = NULL;
	struct dirent *de;
	int r = CAAD_IFACE_GONE, k;
	DIR *d;

	if (ifindex <= 0)
		return CAAD_IFACE_GONE;
	/*
	 * "Gone" only where no device has the ifindex: a read that failed
	 * (EMFILE, ENOMEM, EIO) or odd contents cannot tell, and a restore
	 * told "gone" drops the original it keeps, on a device still there.
	 */
	k = ifindex_of(sysroot, name);
	if (k == ifindex) {
		snprintf(ret_name, IF_NAMESIZE, "%s", name);
		return CAAD_IFACE_STILL_THERE;
	}
	if (k < 0 && !no_such_device(k))
		return k;
	if (caad_path(&dir, sysroot, "/sys/class/net") < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? CAAD_IFACE_GONE : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= IF_NAMESIZE)
			continue;
		k = ifindex_of(sysroot, de->d_name);
		if (k == ifindex) {
			snprintf(ret_name, IF_NAMESIZE, "%s", de->d_name);
			r = CAAD_IFACE_RENAMED;
			break;
		}
		/* a read that failed: unless another entry has it (odd
		 * contents: not a device caad could have had) */
		if (k < 0 && !no_such_device(k) && k != -EINVAL && r == CAAD_IFACE_GONE)
			r = k;
	}
	closedir(d);
	return r;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* A whole decimal unsigned int, nothing else. */
static int parse_uint(const char *s, unsigned *ret)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static bool has_prefix(const char *s, const char *prefix, const char **rest)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n) != 0)
		return false;
	*rest = s + n;
	return true;
}

/* What a vector's name says it serves. */
enum vector_kind {
	VECTOR_RX,   /* rx (and maybe tx): "-TxRx-N", "-rx-N", ... */
	VECTOR_BARE, /* "<ifname>-N": rx queue N, or (beside named ones) a vector of no queue */
	VECTOR_TX,   /* tx only ("-tx-N"): no rx queue's, but numbered with them by some drivers */
	VECTOR_MLX5, /* "mlx5_comp<N>@pci:...": channel N's, or N - 1's (see match_finish()) */
};

/* As caad_inventory_match_irq_name(), with the vector's kind; a tx-only
 * vector's number is returned too (< 0 only for no vector of ifname's). */
static int match_irq_name(const char *ifname, const char *action, enum vector_kind *kind)
{
	const char *rest;
	unsigned q;

	*kind = VECTOR_RX;

	/* mlx5: "mlx5_comp<N>@pci:<bdf>"; completion vector N serves channel
	 * N. The name is not the interface's but its device's: ifname must
	 * be that PCI address, or any mlx5 NIC's vectors would match. */
	if (has_prefix(action, "mlx5_comp", &rest)) {
		const char *at = strchr(rest, '@'), *bdf;
		if (at && has_prefix(at, "@pci:", &bdf) && streq(bdf, ifname) && parse_index(rest, at, &q) == 0) {
			*kind = VECTOR_MLX5;
			return (int)q;
		}
		return -ENOENT;
	}

	/* "<ifname>-TxRx-<N>" (igb, ixgbe), "-txrx-" (tg3 with tx queues
	 * too), "-rxtx-" (vmxnet3, nfp), "-Tx-Rx-" (ena), "-rx-" (e1000e,
	 * tg3), "-fp-" (bnx2x); virtio: "<virtioX>-input.<N>", ifname here
	 * the virtio device's name; "-tx-<N>" serves no rx queue (e1000e,
	 * tg3's vector 0 beside "-rx-1"...) */
	if (has_prefix(action, ifname, &rest)) {
		static const struct {
			const char *infix;
			enum vector_kind kind;
		} infixes[] = {
			{ "-TxRx-", VECTOR_RX },  { "-txrx-", VECTOR_RX }, { "-rxtx-", VECTOR_RX }, { "-Tx-Rx-", VECTOR_RX },
			{ "-rx-", VECTOR_RX },    { "-input.", VECTOR_RX }, { "-fp-", VECTOR_RX },  { "-tx-", VECTOR_TX },
			{ "-", VECTOR_BARE },
		};

		for (size_t i = 0; i < ARRAY_SIZE(infixes); i++) {
			const char *num;

			if (has_prefix(rest, infixes[i].infix, &num) && parse_index(num, NULL, &q) == 0) {
				*kind = infixes[i].kind;
				return (int)q;
			}
		}
		return -ENOENT;
	}

	/* i40e/iavf/ice prefix the driver: "i40e-eth0-TxRx-3", "ice-eth0-TxRx-3" */
	const char *dash = strchr(action, '-');
	if (dash && has_prefix(dash + 1, ifname, &rest) && has_prefix(rest, "-TxRx-", &rest) &&
	    parse_index(rest, NULL, &q) == 0)
		return (int)q;

	return -ENOENT;
}

int caad_inventory_match_irq_name(const char *ifname, const char *action)
{
	enum vector_kind kind;
	int q = match_irq_name(ifname, action, &kind);

	return kind == VECTOR_TX ? -ENOENT : q;
}

static int cmp_queue(const void *a, const void *b)
{
	const struct caad_queue *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static int load_rx_queues(const char *sysroot, struct caad_iface *iface)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ struct caad_queue *rx = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	struct dirent *de;
	int r;

	r = caad_path(&dir, sysroot, "/sys/class/net/%s/queues", iface->name);
	if (r < 0)
		return r;
	d = opendir(dir);
	if (!d)
		return log_error_errno(errno, "%s: cannot list rx queues in %s: %m", iface->name, dir);
	while ((de = readdir(d))) {
		unsigned idx;

		if (strncmp(de->d_name, "rx-", 3) != 0 || parse_index(de->d_name + 3, NULL, &idx) < 0)
			continue;
		/* the kernel writes rx-N: rx-01 beside rx-1 would be queue 1
		 * twice, both read and written at rx-1 */
		if (de->d_name[3] == '0' && de->d_name[4]) {
			log_warning("%s: %s/%s is no queue the kernel makes, ignoring it", iface->name, dir, de->d_name);
			continue;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct caad_queue *nrx = reallocarray(rx, ncap, sizeof(*rx));
			if (!nrx) {
				closedir(d);
				return -ENOMEM;
			}
			rx = nrx;
			cap = ncap;
		}
		rx[n] = (struct caad_queue){ .index = idx, .irq = -1 };
		n++;
	}
	closedir(d);
	if (n > 1) /* rx is NULL without queues: qsort(NULL, 0) is undefined */
		qsort(rx, n, sizeof(*rx), cmp_queue);

	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL, *value = NULL;

		r = caad_path(&path, sysroot, "/sys/class/net/%s/queues/rx-%u/rps_cpus", iface->name, rx[i].index);
		if (r < 0)
			return r;
		r = caad_read_file(path, &value);
		if (r == -ENOENT || r == -ENODEV) {
			/* the queue went since the listing (ethtool -L, a driver
			 * reset; the link event reads it all again): no queue.
			 * ENODEV: it went between the open and the read (sysfs).
			 * Its directory there without rps_cpus: a kernel without
			 * CONFIG_RPS. */
			_cleanup_free_ char *qdir = NULL;

			if (caad_path(&qdir, sysroot, "/sys/class/net/%s/queues/rx-%u", iface->name, rx[i].index) < 0)
				return -ENOMEM;
			if (access(qdir, F_OK) < 0 && errno == ENOENT) {
				log_debug("%s: rx-%u went while its queues were read", iface->name, rx[i].index);
				memmove(&rx[i], &rx[i + 1], (n - i - 1) * sizeof(*rx));
				n--;
				i--;
			}
			continue;
		}
		if (r < 0 && r != -EBADMSG)
			return log_error_errno(r, "%s: failed to read %s: %m", iface->name, path);
		/* odd content costs that queue its RPS, not the interface; a NUL
		 * byte in it (-EBADMSG) too */
		if (r == -EBADMSG)
			log_warning("%s: unexpected content (a NUL byte) in %s, not steering rx-%u with RPS", iface->name,
			            path, rx[i].index);
		else {
			r = caad_cpumask_parse_hex(value, &rx[i].rps);
			if (r < 0)
				log_warning_errno(r, "%s: unexpected content \"%.64s\" in %s, not steering rx-%u with RPS: %m",
				                  iface->name, value, path, rx[i].index);
		}
		rx[i].has_rps = r >= 0;

		free(path);
		free(value);
		path = value = NULL;
		r = caad_path(&path, sysroot, "/sys/class/net/%s/queues/rx-%u/rps_flow_cnt", iface->name,
		              rx[i].index);
		if (r < 0)
			return r;
		r = caad_read_file(path, &value);
		if (r == 0) {
			r = parse_uint(value, &rx[i].rps_flow_cnt);
			if (r < 0)
				log_warning("%s: unexpected content \"%.64s\" in %s, RFS table size unknown", iface->name,
				            value, path);
			rx[i].has_rps_flow_cnt = r >= 0;
		} else if (r != -ENOENT) {
			log_warning_errno(r, "%s: cannot read %s, RFS table size unknown: %m", iface->name, path);
		}
	}

	iface->rx = TAKE_PTR(rx);
	iface->n_rx = (unsigned)n;
	return 0;
}

/* IRQ numbers of the device behind ifname (MSI/MSI-X vectors), sorted, in
 * *ret (free it). Returns the count. */
static int load_msi_irqs(const char *sysroot, const char *ifname, unsigned **ret, char *devname, size_t devname_size)
{
	_cleanup_free_ char *dev = NULL, *dir = NULL;
	_cleanup_free_ unsigned *irqs = NULL;
	char target[PATH_MAX];
	DIR *d;
	struct dirent *de;
	ssize_t k;
	int r, n = 0;

	r = caad_path(&dev, sysroot, "/sys/class/net/%s/device", ifname);
	if (r < 0)
		return r;
	k = readlink(dev, target, sizeof(target) - 1);
	if (k < 0)
		return 0; /* no device: veth, loopback, bridges */
	target[k] = 0;
	const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
	if (strlen(base) >= devname_size)
		return -ENAMETOOLONG;
	strcpy(devname, base);

	/* virtio-net's device is the virtio device; its MSI vectors sit on the PCI
	 * parent. Any other device's parent is a bridge or root port, whose own
	 * vectors (PME, AER) are not the NIC's. */
	static const char *const where[] = { "msi_irqs", "../msi_irqs" };
	size_t n_where = strncmp(devname, "virtio", 6) == 0 ? 2 : 1;
	for (size_t w = 0; w < n_where && n == 0; w++) {
		free(dir);
		dir = NULL;
		if (asprintf(&dir, "%s/%s", dev, where[w]) < 0)
			return -ENOMEM;
		d = opendir(dir);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			unsigned irq, *m;

			if (parse_irq(de->d_name, NULL, &irq) < 0)
				continue;
			m = reallocarray(irqs, (size_t)n + 1, sizeof(*irqs));
			if (!m) {
				closedir(d);
				return -ENOMEM;
			}
			irqs = m;
			irqs[n++] = irq;
		}
		closedir(d);
	}
	if (n > 1)
		qsort(irqs, (size_t)n, sizeof(*irqs), cmp_unsigned);
	*ret = TAKE_PTR(irqs);
	return n;
}

/* The INTx IRQ of the device behind ifname (SYSROOT/sys/class/net/IF/device/irq):
 * 1 and *ret, 0 for none (no such file: not PCI; 0: no INTx pin). */
static int load_intx_irq(const char *sysroot, const char *ifname, unsigned *ret)
{
	_cleanup_free_ char *path = NULL;
	char buf[32];
	unsigned irq;

	if (caad_path(&path, sysroot, "/sys/class/net/%s/device/irq", ifname) < 0)
		return -ENOMEM;
	if (caad_read_line(path, buf, sizeof(buf)) < 0 || parse_irq(buf, NULL, &irq) < 0 || irq == 0)
		return 0;
	*ret = irq;
	return 1;
}

/* An IRQ line whose first queue-naming action names a vector of iface. */
struct named_vector {
	unsigned irq, number;
	bool bare, mlx5;
};

/* The queue index vector v serves, or -1 when it serves none of iface's. */
static int vector_queue(const struct named_vector *v, unsigned base)
{
	return v->number >= base ? (int)(v->number - base) : -1;
}

/* Matching the lines of /proc/interrupts to iface's rx queues, a line at a time. */
struct irq_match {
	struct caad_iface *iface;
	const unsigned *msi; /* sorted; n_msi 0: any IRQ */
	size_t n_msi;
	bool plain_only;     /* no IRQ known to be the device's: a line named just iface, no vector names */
	const char *devname;
	struct named_vector *vec;
	size_t n_vec, cap;
	unsigned low_tx; /* the lowest number of a tx-only vector ("-tx-N"), or UINT_MAX */
	int plain_irq, n_plain;
};

static int match_line(struct irq_match *m, char *line)
{
	char *p = line, *tok, *tsave = NULL;
	bool shared = false; /* an action list "a, b": the IRQ is shared */
	unsigned irq;

	while (*p == ' ')
		p++;
	char *colon = strchr(p, ':');
	if (!colon || parse_irq(p, colon, &irq) < 0)
		return 0; /* header, NMI, LOC, ... */
	if (m->n_msi && !bsearch(&irq, m->msi, m->n_msi, sizeof(*m->msi), cmp_unsigned))
		return 0;

	for (tok = strtok_r(colon + 1, " \t\n", &tsave); tok; tok = strtok_r(NULL, " \t\n", &tsave)) {
		size_t l = strlen(tok);
		enum vector_kind kind = VECTOR_RX;
		int q = -ENOENT;

		if (l > 0 && tok[l - 1] == ',') {
			tok[l - 1] = 0;
			shared = true;
		}
		if (!m->plain_only) {
			q = match_irq_name(m->iface->name, tok, &kind);
			if (q < 0 && m->devname && m->devname[0])
				q = match_irq_name(m->devname, tok, &kind);
		}
		if (q >= 0 && kind == VECTOR_TX) { /* no rx queue's: only its number counts */
			m->low_tx = MIN(m->low_tx, (unsigned)q);
			continue;
		}
		if (q < 0) {
			/* one IRQ named just "eth0", not shared (legacy INTx, e1000) */
			if (streq(tok, m->iface->name) && !shared && (!tsave || !tsave[strspn(tsave, " \t\n")])) {
				m->plain_irq = (int)irq;
				m->n_plain++;
			}
			continue;
		}
		if (m->n_vec == m->cap) {
			size_t ncap = m->cap ? m->cap * 2 : 16;
			struct named_vector *nv = reallocarray(m->vec, ncap, sizeof(*m->vec));
			if (!nv)
				return -ENOMEM;
			m->vec = nv;
			m->cap = ncap;
		}
		m->vec[m->n_vec++] = (struct named_vector){ .irq = irq,
		                                            .number = (unsigned)q,
		                                            .bare = kind == VECTOR_BARE,
		                                            .mlx5 = kind == VECTOR_MLX5 };
		break;
	}
	return 0;
}

/*
 * The numbers in these names count a driver's vectors. They are rx queue
 * numbers only where each queue has a vector of its own, from 0:
 *  - names with an infix ("-TxRx-", "-rx-") outrank bare "eth0-N", which
 *    such drivers give a vector that serves no queue (tg3's link vector
 *    "eth0-0" beside "eth0-txrx-1"...); when that one, or a tx-only
 *    vector, has the lowest number, the queues' count from the lowest of
 *    theirs (tg3 with RSS: "eth0-tx-0", then rx-0 is "eth0-rx-1");
 *  - mlx5's completion vectors count from 0, but from 1 on the kernels
 *    between its dynamic MSI-X allocation (2023) and the fix of their
 *    names ("net/mlx5: offset comp irq index in name by one", 2024), where
 *    "mlx5_async0" takes 0: no "mlx5_comp0" there, channel N's is N + 1;
 *  - fewer vectors than queues: each serves several, in a layout the names
 *    do not tell (i40e/ice: runs of rings; ixgbe: round robin), so none is
 *    taken and the queues are steered with RPS.
 */
static void match_finish(struct irq_match *m)
{
	struct caad_iface *iface = m->iface;
	bool infix = false, all_mlx5 = m->n_vec > 0;
	unsigned low_bare = UINT_MAX, low_infix = UINT_MAX, base = 0;

	for (size_t i = 0; i < m->n_vec; i++) {
		unsigned *low = m->vec[i].bare ? &low_bare : &low_infix;

		infix = infix || !m->vec[i].bare;
		all_mlx5 = all_mlx5 && m->vec[i].mlx5;
		*low = MIN(*low, m->vec[i].number);
	}
	if (infix && MIN(low_bare, m->low_tx) < low_infix)
		base = low_infix;
	if (all_mlx5 && low_infix == 1)
		base = 1;
	if (infix) { /* the bare ones serve no queue */
		size_t n = 0;

		for (size_t i = 0; i < m->n_vec; i++)
			if (!m->vec[i].bare)
				m->vec[n++] = m->vec[i];
		m->n_vec = n;
	}

	unsigned missing = 0, named = 0;
	for (unsigned i = 0; i < iface->n_rx; i++) {
		bool found = false;

		if (iface->rx[i].irq >= 0)
			continue; /* netlink told */
		for (size_t k = 0; k < m->n_vec && !found; k++)
			found = vector_queue(&m->vec[k], base) == (int)iface->rx[i].index;
		missing += !found;
		named += found;
	}
	if (missing && named) {
		log_notice("%s: %u of its %u rx queues have no IRQ vector named for them in /proc/interrupts, so "
		           "the vectors serve several queues each, in a layout their names do not tell: "
		           "its queues are steered without moving IRQs (RPS)",
		           iface->name, missing, iface->n_rx);
		return;
	}
	for (size_t k = 0; k < m->n_vec; k++) {
		int q = vector_queue(&m->vec[k], base);

		for (unsigned i = 0; i < iface->n_rx; i++)
			if ((int)iface->rx[i].index == q && iface->rx[i].irq < 0) {
				iface->rx[i].irq = (int)m->vec[k].irq;
				iface->rx[i].irq_source = "proc-interrupts";
			}
	}
	/* one IRQ named just the interface: its queue's where the device has
	 * no other (INTx, one MSI); beside MSI-X vectors, it is the misc or
	 * link vector (ixgbe, igb, cxgb4: "eth0" beside "eth0-Rx0") */
	if (m->n_vec == 0 && m->n_plain == 1 && m->n_msi <= 1 && iface->n_rx == 1 && iface->rx[0].irq < 0) {
		iface->rx[0].irq = m->plain_irq;
		iface->rx[0].irq_source = "proc-interrupts";
	}
}

int caad_inventory_parse_interrupts(struct caad_iface *iface, const char *interrupts, const unsigned *msi,
                                    size_t n_msi, const char *devname)
{
	_cleanup_free_ char *text = strdup(interrupts); /* strtok_r() cuts it up */
	struct irq_match m = { .iface = iface, .msi = msi, .n_msi = n_msi, .devname = devname, .low_tx = UINT_MAX,
		               .plain_irq = -1 };
	char *save = NULL;
	int r = 0;

	if (!text)
		return -ENOMEM;
	for (char *line = strtok_r(text, "\n", &save); line && r >= 0; line = strtok_r(NULL, "\n", &save))
		r = match_line(&m, line);
	if (r >= 0)
		match_finish(&m);
	free(m.vec);
	return r;
}

/*
 * The IRQs of iface's rx queues from SYSROOT/proc/interrupts, read a line
 * at a time: on a host of thousands of CPUs and IRQs the file is tens of
 * MiB, and a line only some. irqs are those of the device (n_irqs 0: none
 * known, and only a line named just iface's name is taken).
 */
static int match_interrupts(const char *sysroot, struct caad_iface *iface, const unsigned *irqs, size_t n_irqs,
                            const char *devname)
{
	_cleanup_free_ char *path = NULL, *line = NULL;
	struct irq_match m = { .iface = iface, .msi = irqs, .n_msi = n_irqs, .plain_only = n_irqs == 0,
		               .devname = devname, .low_tx = UINT_MAX, .plain_irq = -1 };
	size_t cap = 0;
	FILE *f;
	int r = 0;

	r = caad_path(&path, sysroot, "/proc/interrupts");
	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f) {
		log_warning_errno(errno, "Failed to read %s, IRQs of %s unknown: %m", path, iface->name);
		return 0; /* the queues are still usable with RPS */
	}
	errno = 0;
	while (r >= 0 && getline(&line, &cap, f) >= 0)
		r = match_line(&m, line);
	if (r >= 0 && ferror(f)) {
		log_warning_errno(errno ?: EIO, "Failed to read %s, IRQs of %s unknown: %m", path, iface->name);
		m.n_vec = 0, m.n_plain = 0; /* nothing from a file read in part */
	}
	fclose(f);
	if (r >= 0)
		match_finish(&m);
	free(m.vec);
	return r;
}

static int load_irq_affinity(const char *sysroot, const struct caad_iface *iface, struct caad_queue *q)
{
	_cleanup_free_ char *path = NULL, *value = NULL;
	int r;

	r = caad_path(&path, sysroot, "/proc/irq/%d/smp_affinity_list", q->irq);
	if (r < 0)
		return r;
	r = caad_read_file(path, &value);
	/* EIO: freed between the open and the read (procfs), or a read
	 * that failed: either way its IRQ directory is asked */
	if (r == -EIO || r == -ENODEV) {
		_cleanup_free_ char *dir = NULL;

		if (caad_path(&dir, sysroot, "/proc/irq/%d", q->irq) < 0)
			return -ENOMEM;
		if (access(dir, F_OK) < 0 && errno == ENOENT)
			r = -ENOENT;
	}
	if (r == -ENOENT) {
		/* The IRQ was freed since it was found (a driver reset, the
		 * device going): its number may be another device's by the
		 * time the plan is applied, and caad would move that one.
		 * The queue is steered without it until the next read. */
		log_info("%s rx-%u: IRQ %d was freed while the inventory was read (no %s), not taking it for the "
		         "queue's",
		         iface->name, q->index, q->irq, path);
		q->irq = -1;
		q->irq_source = NULL;
		return 0;
	}
	if (r < 0) {
		log_warning_errno(r, "IRQ %d: cannot read %s, its CPUs unknown: %m", q->irq, path);
		return 0;
	}
	r = caad_cpumask_parse_list(value, &q->irq_affinity);
	if (r < 0) {
		/* odd procfs content costs this queue its IRQ, not the whole inventory */
		log_warning_errno(r, "IRQ %d: unexpected content \"%.64s\" in %s, treating the queue as without IRQ",
		                  q->irq, value, path);
		q->irq = -1;
		q->irq_source = NULL;
		return 0;
	}
	q->has_irq_affinity = true;

	/* where the IRQ really fires (x86 picks one CPU of the mask) */
	free(path);
	free(value);
	path = value = NULL;
	r = caad_path(&path, sysroot, "/proc/irq/%d/effective_affinity_list", q->irq);
	if (r < 0)
		return r;
	if (caad_read_file(path, &value) == 0) {
		q->has_effective_affinity = caad_cpumask_parse_list(value, &q->effective_affinity) >= 0;
		if (!q->has_effective_affinity)
			log_warning("IRQ %d: unexpected content \"%.64s\" in %s, the CPU it fires on unknown", q->irq, value,
			            path);
	}

	/* Kernel-managed IRQs (spread by the driver, affinity fixed) show in
	 * debugfs where it is mounted; else the first write tells (EIO). */
	free(path);
	free(value);
	path = value = NULL;
	r = caad_path(&path, sysroot, "/sys/kernel/debug/irq/irqs/%d", q->irq);
	if (r < 0)
		return r;
	if (caad_read_file(path, &value) == 0 && strstr(value, "IRQD_AFFINITY_MANAGED"))
		q->irq_managed = true;
	return 0;
}

/* The PCI function hwloc places the NIC under: the nearest on its device's
 * sysfs path, as hwloc finds it (the device itself, a virtio device's
 * virtio-pci parent, a sub-function's or a USB NIC's function); none for a
 * device with no PCI function above it (platform, virtio-mmio). */
static void load_pci_bus_id(const char *sysroot, struct caad_iface *iface)
{
	_cleanup_free_ char *dev = NULL;
	char path[PATH_MAX], target[PATH_MAX], sub[PATH_MAX + 16];
	char *slash;

	if (caad_path(&dev, sysroot, "/sys/class/net/%s/device", iface->name) < 0 || !realpath(dev, path))
		return;
	while ((slash = strrchr(path, '/')) && slash > path) {
		const char *base;
		ssize_t k;

		snprintf(sub, sizeof(sub), "%s/subsystem", path);
		k = readlink(sub, target, sizeof(target) - 1);
		if (k > 0) {
			target[k] = 0;
			base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
			if (streq(base, "pci")) {
				if (strlen(slash + 1) < sizeof(iface->pci_bus_id))
					strcpy(iface->pci_bus_id, slash + 1);
				return;
			}
		}
		*slash = '\0';
	}
}

/* Driver, NUMA node and local CPUs of the device behind the interface. */
static void load_device_facts(const char *sysroot, struct caad_iface *iface)
{
	_cleanup_free_ char *drv = NULL, *numa = NULL, *local = NULL, *value = NULL;
	char target[PATH_MAX];
	ssize_t k;

	load_pci_bus_id(sysroot, iface);

	if (caad_path(&drv, sysroot, "/sys/class/net/%s/device/driver", iface->name) < 0 ||
	    caad_path(&numa, sysroot, "/sys/class/net/%s/device/numa_node", iface->name) < 0 ||
	    caad_path(&local, sysroot, "/sys/class/net/%s/device/local_cpulist", iface->name) < 0)
		return;
	k = readlink(drv, target, sizeof(target) - 1);
	if (k > 0) {
		const char *base;

		target[k] = 0;
		base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
		if (strlen(base) < sizeof(iface->driver))
			strcpy(iface->driver, base);
	}
	/* numa_node is -1 on single-node hosts and for devices without affinity */
	if (caad_read_file(numa, &value) == 0) {
		unsigned node;

		if (parse_index(value, NULL, &node) == 0)
			iface->numa_node = (int)node;
		else if (!streq(value, "-1"))
			log_warning("%s: unexpected content \"%.64s\" in %s, ignoring it", iface->name, value, numa);
	}
	free(value);
	value = NULL;
	if (caad_read_file(local, &value) == 0) {
		if (caad_cpumask_parse_list(value, &iface->local_cpus) >= 0 && !caad_cpumask_empty(&iface->local_cpus))
			iface->has_local_cpus = true;
		else
			log_warning("%s: unexpected content \"%.64s\" in %s, ignoring it", iface->name, value, local);
	}
}

static struct caad_napi *iface_napi(struct caad_iface *iface, uint32_t id, bool add)
{
	struct caad_napi *n;

	for (unsigned i = 0; i < iface->n_napis; i++)
		if (iface->napis[i].id == id)
			return &iface->napis[i];
	if (!add)
		return NULL;
	n = reallocarray(iface->napis, iface->n_napis + 1, sizeof(*n));
	if (!n)
		return NULL;
	iface->napis = n;
	n = &iface->napis[iface->n_napis++];
	*n = (struct caad_napi){ .id = id, .irq = -1 };
	return n;
}

/* rx queue -> NAPI -> IRQ and kthread, as the kernel reports them (6.8+):
 * 1 when it listed the interface's NAPIs, 0 when it could not. */
static int load_genl(struct caad_genl *genl, struct caad_iface *iface)
{
	_cleanup_free_ struct caad_genl_queue *queues = NULL;
	_cleanup_free_ struct caad_genl_napi *napis = NULL;
	size_t n_queues = 0, n_napis = 0;
	int r;

	r = caad_genl_channels(genl, iface->ifindex, &iface->rx_channels, &iface->combined_channels);
	if (r < 0 && r != -EOPNOTSUPP)
		log_debug_errno(r, "%s: ethtool channels unavailable: %m", iface->name);

	r = caad_genl_queues(genl, iface->ifindex, &queues, &n_queues, &napis, &n_napis);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		log_debug_errno(r, "%s: netdev netlink queues unavailable, using sysfs/procfs: %m", iface->name);
		return 0;
	}
	for (size_t i = 0; i < n_napis; i++) {
		struct caad_napi *n = iface_napi(iface, napis[i].napi_id, true);

		if (!n)
			return -ENOMEM;
		n->irq = napis[i].irq;
		n->kthread = napis[i].pid;
		if (n->kthread > 0) {
			_cleanup_free_ char *path = NULL;

			if (asprintf(&path, "/proc/%d/comm", (int)n->kthread) < 0)
				return -ENOMEM;
			if (caad_read_line(path, n->kthread_comm, sizeof(n->kthread_comm)) < 0)
				n->kthread_comm[0] = '\0'; /* ended already: the next inventory tells */
		}
	}
	for (size_t i = 0; i < n_queues; i++)
		for (unsigned q = 0; q < iface->n_rx; q++) {
			struct caad_queue *rq = &iface->rx[q];
			const struct caad_napi *napi;

			if (rq->index != queues[i].index || queues[i].napi_id == 0)
				continue;
			rq->napi_id = queues[i].napi_id;
			napi = iface_napi(iface, rq->napi_id, false);
			if (napi && napi->irq >= 0) {
				rq->irq = napi->irq;
				rq->irq_source = "netdev-genl";
			}
		}
	return 1;
}

#define PF_KTHREAD_ 0x00200000 /* include/linux/sched.h */

/* Whether task pid is a kernel thread: the flags of SYSROOT/proc/PID/stat
 * (its ninth field, after the comm in parentheses, which may hold any
 * byte but a NUL). 1, 0 (not one, or unreadable: gone), or -ENOMEM. */
static int task_is_kthread(const char *sysroot, unsigned pid)
{
	_cleanup_free_ char *path = NULL, *stat = NULL;
	unsigned long flags;
	const char *p;
	char *end;

	if (caad_path(&path, sysroot, "/proc/%u/stat", pid) < 0)
		return -ENOMEM;
	if (caad_read_file(path, &stat) < 0)
		return 0;
	p = strrchr(stat, ')');
	/* state ppid pgrp session tty_nr tpgid flags */
	for (unsigned field = 0; p && field < 7; field++)
		p = strchr(p + 1, ' ');
	if (!p || !isdigit((unsigned char)p[1]))
		return 0;
	errno = 0;
	flags = strtoul(p + 1, &end, 10);
	return !errno && (*end == ' ' || !*end) && (flags & PF_KTHREAD_);
}

int caad_inventory_take_kthread(struct caad_iface *iface, bool listed, uint32_t id, pid_t pid, const char *comm)
{
	struct caad_napi *n = iface_napi(iface, id, !listed);

	if (!n)
		return listed ? 0 : -ENOMEM;
	if (n->kthread)
		return 0; /* netlink's, or a first one of the same name */
	n->kthread = pid;
	snprintf(n->kthread_comm, sizeof(n->kthread_comm), "%s", comm);
	return 1;
}

/*
 * Threaded NAPI kthreads are named "napi/<dev>-<napi id>": find those the
 * kernel did not report (before 6.9, or a sysroot) in SYSROOT/proc/<pid>/comm.
 * LISTED: netlink listed iface's NAPIs (see caad_inventory_take_kthread()).
 * Before Linux 5.17 a kthread's comm is cut at 15 characters (later ones
 * show it whole): only whole names count, so a comm of exactly 15, whose id
 * may have lost digits, is taken only where netlink listed the NAPIs (a
 * cut id is then no NAPI of iface's). Any process may name itself so
 * (prctl(PR_SET_NAME)): only a kernel thread is taken.
 */
#define COMM_CUT 15 /* TASK_COMM_LEN - 1 */
static int find_napi_kthreads(const char *sysroot, struct caad_iface *iface, bool listed)
{
	_cleanup_free_ char *dir = NULL, *threaded = NULL;
	char prefix[IF_NAMESIZE + 8], buf[16];
	struct dirent *de;
	DIR *d;
	int r;

	/* Not threaded ("0"): no kthreads to find, and no reason to read
	 * every /proc/PID/comm of the host at each re-inventory. */
	r = caad_path(&threaded, sysroot, "/sys/class/net/%s/threaded", iface->name);
	if (r < 0)
		return r;
	if (caad_read_line(threaded, buf, sizeof(buf)) == 0 && streq(buf, "0"))
		goto map_queues;

	r = caad_path(&dir, sysroot, "/proc");
	if (r < 0)
		return r;
	d = opendir(dir);
	if (!d)
		return 0;
	snprintf(prefix, sizeof(prefix), "napi/%s-", iface->name);
	while ((de = readdir(d))) {
		_cleanup_free_ char *comm = NULL, *value = NULL;
		unsigned pid, id;

		if (parse_uint(de->d_name, &pid) < 0 || pid == 0 || pid > INT_MAX)
			continue;
		if (caad_path(&comm, sysroot, "/proc/%u/comm", pid) < 0) {
			closedir(d);
			return -ENOMEM;
		}
		if (caad_read_file(comm, &value) < 0 || (strlen(value) == COMM_CUT && !listed) ||
		    strncmp(value, prefix, strlen(prefix)) != 0 || parse_uint(value + strlen(prefix), &id) < 0 || id == 0)
			continue;
		r = task_is_kthread(sysroot, pid);
		if (r < 0) {
			closedir(d);
			return r;
		}
		if (r == 0)
			continue; /* a process that took the name */
		r = caad_inventory_take_kthread(iface, listed, id, (pid_t)pid, value);
		if (r < 0) {
			closedir(d);
			return r;
		}
	}
	closedir(d);

map_queues:
	for (unsigned q = 0; q < iface->n_rx; q++) {
		const struct caad_napi *n = iface->rx[q].napi_id ? iface_napi(iface, iface->rx[q].napi_id, false) : NULL;

		if (n)
			iface->rx[q].napi_kthread = n->kthread;
	}
	return 0;
}

int caad_inventory_locate(struct caad_inventory *inv, const struct caad_topology *t)
{
	/* the running host's NICs are not a fake tree's, whatever their
	 * names: an eth0 of --sysroot is not the host's eth0 */
	bool by_name = !(t->live && !inv->host);

	for (size_t i = 0; i < inv->n_ifaces; i++) {
		struct caad_iface *ifc = &inv->ifaces[i];
		/* The host's topology is read again when CPUs change, not when
		 * links come or are renamed: its eth4 is the NIC that had the
		 * name when it loaded, which may be another one now, so the
		 * name counts only on the PCI function of the device that has
		 * it now. An XML file's NICs are the tree's by name (and
		 * caadctl's offline ones have no device at all). */
		const char *bus = t->live ? ifc->pci_bus_id : NULL;
		struct caad_cpumask m;

		ifc->locality = CAAD_LOCALITY_UNKNOWN;
		if (by_name && caad_topology_nic_cpus(t, ifc->name, bus, &m) == 0 && !caad_cpumask_empty(&m)) {
			ifc->locality = CAAD_LOCALITY_HWLOC;
		} else if (ifc->numa_node >= 0 && caad_topology_numa_cpus(t, ifc->numa_node, &m) > 0) {
			ifc->locality = CAAD_LOCALITY_NUMA_NODE;
		} else if (ifc->has_local_cpus) {
			caad_cpumask_and(&m, &ifc->local_cpus, &t->present);
			if (!caad_cpumask_empty(&m))
				ifc->locality = CAAD_LOCALITY_LOCAL_CPULIST;
		}
		if (ifc->locality != CAAD_LOCALITY_UNKNOWN) {
			ifc->local_cpus = m;
			ifc->has_local_cpus = true;
		} else {
			ifc->has_local_cpus = false;
		}
	}
	return 0;
}

static int load_iface(const char *sysroot, struct caad_genl *genl, const char *name, struct caad_iface *iface)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ unsigned *msi = NULL;
	char buf[32];
	char devname[256] = "";
	bool listed = false;
	int n_msi, r;

	if (strlen(name) >= sizeof(iface->name) || !name[0] || strchr(name, '/'))
		return log_error_errno(EINVAL, "Invalid interface name \"%s\"", name);
	snprintf(iface->name, sizeof(iface->name), "%s", name);
	iface->numa_node = -1;
	iface->combined_channels = iface->rx_channels = -1;

	r = caad_path(&path, sysroot, "/sys/class/net/%s/ifindex", name);
	if (r < 0)
		return r;
	r = caad_read_line(path, buf, sizeof(buf));
	if (r == -ENOENT)
		return log_error_errno(ENODEV, "Interface %s not found (no %s)", name, path);
	if (r < 0)
		return log_error_errno(r, "Interface %s: failed to read %s: %m", name, path);
	unsigned idx;
	if (parse_number(buf, NULL, INT_MAX, &idx) < 0 || idx == 0)
		return log_error_errno(EINVAL, "Interface %s: bad ifindex \"%s\" in %s", name, buf, path);
	iface->ifindex = (int)idx;

	r = load_rx_queues(sysroot, iface);
	if (r < 0)
		return r;

	n_msi = load_msi_irqs(sysroot, name, &msi, devname, sizeof(devname));
	/* no device name is so long (a sysfs name is one path component):
	 * a dangling link of a fake tree, say */
	if (n_msi == -ENAMETOOLONG) {
		_cleanup_free_ char *dev = NULL;

		if (caad_path(&dev, sysroot, "/sys/class/net/%s/device", name) < 0)
			return -ENOMEM;
		return log_error_errno(n_msi, "Interface %s: the device name %s points to is too long: %m", name, dev);
	}
	if (n_msi < 0)
		return n_msi;
	snprintf(iface->bus_id, sizeof(iface->bus_id), "%s", devname);
	load_device_facts(sysroot, iface);

	/* The kernel's own answer first (host only: a sysroot is a fake tree) */
	if (genl) {
		r = load_genl(genl, iface);
		if (r < 0)
			return r;
		listed = r > 0;
	}
	if (devname[0]) {
		const unsigned *irqs = msi;
		size_t n_irqs = (size_t)n_msi;
		unsigned intx;

		/* Without MSI its only IRQ is its INTx line: /proc/interrupts
		 * names the vectors of every device, and "iavf-eth0-TxRx-0" or
		 * "eth0-rx-0" may be another's (a VF renamed eth0 in another
		 * namespace). A device with neither (not on PCI) is known by a
		 * line named just its interface's name, or not at all. */
		if (n_msi == 0) {
			r = load_intx_irq(sysroot, name, &intx);
			if (r < 0)
				return r;
			if (r > 0) {
				irqs = &intx;
				n_irqs = 1;
			}
		}
		r = match_interrupts(sysroot, iface, irqs, n_irqs, devname);
		if (r < 0)
			return r;
	}
	r = find_napi_kthreads(sysroot, iface, listed);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < iface->n_rx; i++)
		if (iface->rx[i].irq >= 0) {
			r = load_irq_affinity(sysroot, iface, &iface->rx[i]);
			if (r < 0)
				return r;
		}

	/* the same device at the end as at the start: one deleted meanwhile
	 * read as one without queues, one re-created as two devices' queues
	 * under the first one's ifindex */
	r = caad_read_line(path, buf, sizeof(buf));
	if (r == -ENOENT || r == -ENODEV)
		return log_error_errno(ENODEV, "Interface %s went away while it was read", name);
	if (r < 0)
		return log_error_errno(r, "Interface %s: failed to read %s: %m", name, path);
	if (parse_number(buf, NULL, INT_MAX, &idx) < 0 || idx != (unsigned)iface->ifindex)
		return log_error_errno(ENODEV, "Interface %s was replaced while it was read (ifindex %d, now \"%s\")",
		                       name, iface->ifindex, buf);
	return 0;
}

static unsigned possible_cpus(const char *sysroot)
{
	_cleanup_free_ char *path = NULL, *value = NULL;
	struct caad_cpumask m;
	int last = -1;

	if (caad_path(&path, sysroot, "/sys/devices/system/cpu/possible") < 0 ||
	    caad_read_file(path, &value) < 0 || caad_cpumask_parse_list(value, &m) < 0)
		return 0;
	CAAD_CPUMASK_FOREACH(cpu, &m)
		last = cpu;
	return (unsigned)(last + 1);
}

int caad_inventory_load(const char *sysroot, char *const *ifnames, size_t n, struct caad_inventory **ret)
{
	_cleanup_(caad_inventory_freep) struct caad_inventory *inv = NULL;
	_cleanup_(caad_genl_closep) struct caad_genl *genl = NULL;
	int r;

	inv = calloc(1, sizeof(*inv));
	if (!inv)
		return -ENOMEM;
	inv->ifaces = calloc(n ? n : 1, sizeof(*inv->ifaces));
	if (!inv->ifaces)
		return -ENOMEM;
	bool host = caad_sysroot_is_host(sysroot);
	_cleanup_free_ char *path = NULL, *value = NULL;

	inv->host = host;

	/* netlink speaks for the host only; a sysroot is a fake tree */
	if (host)
		(void)caad_genl_open(&genl);
	for (size_t i = 0; i < n; i++) {
		r = load_iface(sysroot, genl, ifnames[i], &inv->ifaces[i]);
		inv->n_ifaces = i + 1; /* so that free sees it */
		if (r < 0)
			return r;
		/* so does ethtool (unless a test answers for it) */
		if (host || !caad_ethtool_ops_are_kernel()) {
			const char *why;

			r = caad_ntuple_supported(inv->ifaces[i].name, &why);
			if (r < 0)
				return r;
			inv->ifaces[i].ntuple = r > 0;
			if (!r)
				log_debug("%s: no ntuple rules: %s", inv->ifaces[i].name, why);
		}
	}
	inv->n_possible_cpus = possible_cpus(sysroot);

	/* RFS's global table exists in the initial network namespace only */
	r = caad_path(&path, sysroot, "/proc/sys/net/core/rps_sock_flow_entries");
	if (r < 0)
		return r;
	if (caad_read_file(path, &value) == 0) {
		inv->has_rfs_table = parse_uint(value, &inv->rfs_table) == 0;
		if (!inv->has_rfs_table)
			log_warning("Unexpected content \"%.64s\" in %s: RFS's global table size unknown", value, path);
	}
	*ret = TAKE_PTR(inv);
	return 0;
}

void caad_strv_free(char **l)
{
	for (char **p = l; p && *p; p++)
		free(*p);
	free(l);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is IF up (IFF_UP in its flags), physical, and multi-queue or with IRQs? */
static bool worth_managing(const char *sysroot, const char *name)
{
	_cleanup_free_ char *flags_path = NULL, *dev = NULL, *queues = NULL;
	_cleanup_free_ unsigned *msi = NULL;
	char buf[32];
	char devname[256] = "";
	unsigned long flags;
	unsigned n_rx = 0;
	struct dirent *de;
	DIR *d;

	if (caad_path(&dev, sysroot, "/sys/class/net/%s/device", name) < 0 || access(dev, F_OK) < 0)
		return false; /* lo, veth, bridge, bond, tunnel: nothing behind it */
	if (caad_path(&flags_path, sysroot, "/sys/class/net/%s/flags", name) < 0 ||
	    caad_read_line(flags_path, buf, sizeof(buf)) < 0)
		return false;
	flags = strtoul(buf, NULL, 16);
	if (!(flags & 0x1)) /* IFF_UP */
		return false;

	if (caad_path(&queues, sysroot, "/sys/class/net/%s/queues", name) < 0)
		return false;
	d = opendir(queues);
	if (d) {
		while ((de = readdir(d)))
			n_rx += strncmp(de->d_name, "rx-", 3) == 0;
		closedir(d);
	}
	if (n_rx > 1)
		return true;
	return load_msi_irqs(sysroot, name, &msi, devname, sizeof(devname)) > 0;
}

int caad_inventory_autoselect(const char *sysroot, char ***ret)
{
	_cleanup_free_ char *dir = NULL;
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;
	int r;

	r = caad_path(&dir, sysroot, "/sys/class/net");
	if (r < 0)
		return r;
	d = opendir(dir);
	if (!d)
		return log_error_errno(errno, "Cannot list interfaces in %s: %m", dir);
	names = calloc(1, sizeof(char *));
	if (!names) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= IF_NAMESIZE || !worth_managing(sysroot, de->d_name))
			continue;
		char **nn = reallocarray(names, n + 2, sizeof(char *));
		char *copy = strdup(de->d_name);
		if (!nn || !copy) {
			free(copy);
			if (nn)
				names = nn;
			closedir(d);
			caad_strv_free(names);
			return -ENOMEM;
		}
		names = nn;
		names[n++] = copy;
		names[n] = NULL;
	}
	closedir(d);
	qsort(names, n, sizeof(char *), cmp_str);
	*ret = names;
	return (int)n;
}
