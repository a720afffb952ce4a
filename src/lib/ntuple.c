/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ntuple rules through SIOCETHTOOL. The ethtool netlink family has no rx
 * classification commands (Linux 6.x), so the ioctl it is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "caad/log.h"
#include "caad/macro.h"
#include "caad/ntuple.h"

static int kernel_ioctl(void *userdata, const char *ifname, void *cmd)
{
	_cleanup_close_ int fd = -1;
	struct ifreq ifr = {};

	(void)userdata;
	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return -EINVAL;
	/* any socket takes SIOCETHTOOL: an AF_UNIX one, which the unit's
	 * RestrictAddressFamilies=AF_UNIX AF_NETLINK allows (AF_INET it
	 * refuses, EAFNOSUPPORT: every NIC read as one without ntuple) */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

static int kernel_ifname(void *userdata, int ifindex, char *name)
{
	_cleanup_close_ int fd = -1;
	struct ifreq ifr = { .ifr_ifindex = ifindex };

	(void)userdata;
	/* AF_UNIX, as above */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFNAME, &ifr) < 0)
		return -errno;
	memcpy(name, ifr.ifr_name, IF_NAMESIZE);
	name[IF_NAMESIZE - 1] = '\0';
	return 0;
}

static const struct caad_ethtool_ops kernel_ops = { .ioctl = kernel_ioctl, .ifname = kernel_ifname };
static const struct caad_ethtool_ops *ops = &kernel_ops;

void caad_ethtool_set_ops(const struct caad_ethtool_ops *o)
{
	ops = o ? o : &kernel_ops;
}

bool caad_ethtool_ops_are_kernel(void)
{
	return ops == &kernel_ops;
}

static int ethtool(const char *ifname, void *cmd)
{
	return ops->ioctl(ops->userdata, ifname, cmd);
}

int caad_ntuple_ifname(int ifindex, char *name)
{
	if (ifindex <= 0)
		return -ENODEV;
	return ops->ifname ? ops->ifname(ops->userdata, ifindex, name) : -EOPNOTSUPP;
}

int caad_ntuple_supported(const char *ifname, const char **why)
{
	struct ethtool_value flags = { .cmd = ETHTOOL_GFLAGS };
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT };
	int r;

	r = ethtool(ifname, &flags);
	if (r < 0 || !(flags.data & ETH_FLAG_NTUPLE)) {
		*why = r == -EOPNOTSUPP || r >= 0 ? "ntuple-filters feature off or not offered" : "features unreadable";
		return 0;
	}
	r = ethtool(ifname, &cnt);
	if (r < 0) {
		*why = "no rx classification rules (ETHTOOL_GRXCLSRLCNT refused)";
		return 0;
	}
	*why = NULL;
	return 1;
}

void caad_ntuple_spec(const struct caad_ntuple_flow *flow, unsigned queue, uint32_t loc,
                      struct ethtool_rx_flow_spec *ret)
{
	memset(ret, 0, sizeof(*ret)); /* unions and padding: what is not set is 0 */
	ret->ring_cookie = queue;
	ret->location = loc;
	if (flow->family == AF_INET6) {
		ret->flow_type = TCP_V6_FLOW;
		memcpy(ret->h_u.tcp_ip6_spec.ip6src, flow->raddr, 16);
		memcpy(ret->h_u.tcp_ip6_spec.ip6dst, flow->laddr, 16);
		ret->h_u.tcp_ip6_spec.psrc = htons(flow->rport);
		ret->h_u.tcp_ip6_spec.pdst = htons(flow->lport);
		memset(ret->m_u.tcp_ip6_spec.ip6src, 0xff, 16);
		memset(ret->m_u.tcp_ip6_spec.ip6dst, 0xff, 16);
		ret->m_u.tcp_ip6_spec.psrc = 0xffff;
		ret->m_u.tcp_ip6_spec.pdst = 0xffff;
	} else {
		ret->flow_type = TCP_V4_FLOW;
		memcpy(&ret->h_u.tcp_ip4_spec.ip4src, flow->raddr, 4);
		memcpy(&ret->h_u.tcp_ip4_spec.ip4dst, flow->laddr, 4);
		ret->h_u.tcp_ip4_spec.psrc = htons(flow->rport);
		ret->h_u.tcp_ip4_spec.pdst = htons(flow->lport);
		ret->m_u.tcp_ip4_spec.ip4src = 0xffffffff;
		ret->m_u.tcp_ip4_spec.ip4dst = 0xffffffff;
		ret->m_u.tcp_ip4_spec.psrc = 0xffff;
		ret->m_u.tcp_ip4_spec.pdst = 0xffff;
	}
}

/* A driver without RX_CLS_LOC_ANY: the highest free location of its table
 * (the operator's own rules usually sit at the low ones). */
static int free_location(const char *ifname, uint32_t n_rules, uint32_t table_size, uint32_t *ret)
{
	_cleanup_free_ struct ethtool_rxnfc *all = NULL;
	int r;

	all = calloc(1, sizeof(*all) + (size_t)n_rules * sizeof(uint32_t));
	if (!all)
		return -ENOMEM;
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = n_rules;
	r = ethtool(ifname, all);
	if (r < 0)
		return r;
	/* GRXCLSRLCNT may leave the table's size at 0 (ixgbe does): this
	 * answer has it, as ethtool(8) reads it */
	if (table_size == 0)
		table_size = (uint32_t)all->data;
	for (uint32_t loc = table_size; loc-- > 0;) {
		bool used = false;

		for (uint32_t i = 0; i < n_rules && !used; i++)
			used = all->rule_locs[i] == loc;
		if (!used) {
			*ret = loc;
			return 0;
		}
	}
	return -ENOSPC;
}

int caad_ntuple_insert(const char *ifname, const struct caad_ntuple_flow *flow, unsigned queue, uint32_t *ret_loc)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT }, ins = { .cmd = ETHTOOL_SRXCLSRLINS };
	uint32_t loc = RX_CLS_LOC_ANY;
	int r;

	/* a rule added between the count and the list (EMSGSIZE): count again */
	for (int tries = 0;; tries++) {
		r = ethtool(ifname, &cnt);
		if (r < 0)
			return r;
		if (cnt.data & RX_CLS_LOC_SPECIAL)
			break;
		r = free_location(ifname, cnt.rule_cnt, (uint32_t)cnt.data, &loc);
		if (r >= 0)
			break;
		if (r != -EMSGSIZE || tries == 2)
			return r;
		cnt = (struct ethtool_rxnfc){ .cmd = ETHTOOL_GRXCLSRLCNT };
	}
	caad_ntuple_spec(flow, queue, loc, &ins.fs);
	r = ethtool(ifname, &ins);
	if (r < 0)
		return r;
	*ret_loc = ins.fs.location;
	return 0;
}

int caad_ntuple_delete(const char *ifname, uint32_t loc)
{
	struct ethtool_rxnfc del = { .cmd = ETHTOOL_SRXCLSRLDEL, .fs.location = loc };

	return ethtool(ifname, &del);
}

int caad_ntuple_get(const char *ifname, uint32_t loc, struct caad_ntuple_flow *ret_flow, unsigned *ret_queue)
{
	struct ethtool_rxnfc get = { .cmd = ETHTOOL_GRXCLSRULE, .fs.location = loc };
	struct caad_ntuple_flow f = {};
	struct ethtool_rx_flow_spec want;
	int r;

	r = ethtool(ifname, &get);
	if (r < 0)
		return r;
	/* exactly caad's kind of rule: no VLAN/user-def or MAC extension, and
	 * a queue, not an offset into an RSS context. A driver may say
	 * FLOW_EXT of every rule, also with nothing in its extension (ixgbe,
	 * txgbe): masks all 0 match nothing more. */
	static const struct ethtool_flow_ext no_ext;
	uint32_t type = get.fs.flow_type;

	if ((type & FLOW_EXT) && memcmp(&get.fs.m_ext, &no_ext, sizeof(no_ext)) == 0)
		type &= ~(uint32_t)FLOW_EXT;
	switch (type) {
	case TCP_V4_FLOW:
		f.family = AF_INET;
		memcpy(f.raddr, &get.fs.h_u.tcp_ip4_spec.ip4src, 4);
		memcpy(f.laddr, &get.fs.h_u.tcp_ip4_spec.ip4dst, 4);
		f.rport = ntohs(get.fs.h_u.tcp_ip4_spec.psrc);
		f.lport = ntohs(get.fs.h_u.tcp_ip4_spec.pdst);
		break;
	case TCP_V6_FLOW:
		f.family = AF_INET6;
		memcpy(f.raddr, get.fs.h_u.tcp_ip6_spec.ip6src, 16);
		memcpy(f.laddr, get.fs.h_u.tcp_ip6_spec.ip6dst, 16);
		f.rport = ntohs(get.fs.h_u.tcp_ip6_spec.psrc);
		f.lport = ntohs(get.fs.h_u.tcp_ip6_spec.pdst);
		break;
	default:
		return -EBADMSG;
	}
	/* caad's rules match the whole 4-tuple and nothing else */
	caad_ntuple_spec(&f, (unsigned)get.fs.ring_cookie, loc, &want);
	if (memcmp(&want.m_u, &get.fs.m_u, sizeof(want.m_u)) != 0 || get.fs.ring_cookie > UINT32_MAX)
		return -EBADMSG;
	*ret_flow = f;
	*ret_queue = (unsigned)get.fs.ring_cookie;
	return 0;
}

int caad_ntuple_find(const char *ifname, const struct caad_ntuple_flow *flow, unsigned queue, uint32_t *ret_loc)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT };
	_cleanup_free_ struct ethtool_rxnfc *all = NULL;
	int r;

	r = ethtool(ifname, &cnt);
	if (r < 0)
		return r;
	all = calloc(1, sizeof(*all) + (size_t)cnt.rule_cnt * sizeof(uint32_t));
	if (!all)
		return -ENOMEM;
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = cnt.rule_cnt;
	r = ethtool(ifname, all);
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < all->rule_cnt && i < cnt.rule_cnt; i++) {
		struct caad_ntuple_flow f;
		unsigned q;

		if (caad_ntuple_get(ifname, all->rule_locs[i], &f, &q) >= 0 && q == queue &&
		    caad_ntuple_flow_equal(&f, flow)) {
			*ret_loc = all->rule_locs[i];
			return 0;
		}
	}
	return -ENOENT;
}

int caad_ntuple_format(const struct caad_ntuple_flow *flow, unsigned queue, char *buf, size_t size)
{
	char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];
	bool v6 = flow->family == AF_INET6;
	int n;

	if (!inet_ntop(v6 ? AF_INET6 : AF_INET, flow->raddr, r, sizeof(r)) ||
	    !inet_ntop(v6 ? AF_INET6 : AF_INET, flow->laddr, l, sizeof(l)))
		return -EINVAL;
	n = snprintf(buf, size, v6 ? "tcp6 [%s]:%u > [%s]:%u queue %u" : "tcp4 %s:%u > %s:%u queue %u", r,
	             flow->rport, l, flow->lport, queue);
	return n < 0 || (size_t)n >= size ? -ENOBUFS : n;
}

/* "ADDR:PORT" or "[ADDR]:PORT" into addr and port. */
static int parse_end(char *s, int family, uint8_t *addr, uint16_t *port)
{
	char *colon = strrchr(s, ':'), *end;
	unsigned long p;

	if (!colon || !colon[1])
		return -EINVAL;
	*colon = '\0';
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno || *end || p > 65535 || colon[1] == '-' || colon[1] == '+')
		return -EINVAL;
	if (family == AF_INET6) {
		size_t n = strlen(s);

		if (n < 2 || s[0] != '[' || s[n - 1] != ']')
			return -EINVAL;
		s[n - 1] = '\0';
		s++;
	}
	if (inet_pton(family, s, addr) != 1)
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

int caad_ntuple_parse(const char *s, struct caad_ntuple_flow *ret_flow, unsigned *ret_queue)
{
	char proto[8], src[64], dst[64], tail;
	struct caad_ntuple_flow f = {};
	unsigned long q;
	char qs[16], *end;

	if (sscanf(s, "%7s %63s > %63s queue %15s%c", proto, src, dst, qs, &tail) != 4)
		return -EINVAL;
	if (streq(proto, "tcp4"))
		f.family = AF_INET;
	else if (streq(proto, "tcp6"))
		f.family = AF_INET6;
	else
		return -EINVAL;
	errno = 0;
	q = strtoul(qs, &end, 10);
	if (errno || *end || q > UINT32_MAX || qs[0] == '-' || qs[0] == '+')
		return -EINVAL;
	if (parse_end(src, f.family, f.raddr, &f.rport) < 0 || parse_end(dst, f.family, f.laddr, &f.lport) < 0)
		return -EINVAL;
	*ret_flow = f;
	*ret_queue = (unsigned)q;
	return 0;
}

bool caad_ntuple_flow_equal(const struct caad_ntuple_flow *a, const struct caad_ntuple_flow *b)
{
	size_t n = a->family == AF_INET6 ? 16 : 4;

	return a->family == b->family && a->lport == b->lport && a->rport == b->rport &&
	       memcmp(a->laddr, b->laddr, n) == 0 && memcmp(a->raddr, b->raddr, n) == 0;
}
