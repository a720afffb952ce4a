/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the kernel itself says about an interface's queues, over generic
 * netlink: the "netdev" family (queue-get, napi-get: rx queue -> NAPI ->
 * IRQ and threaded-NAPI kthread, Linux 6.8+) and the "ethtool" family
 * (channels). Both are optional: older kernels and drivers without
 * get_channels answer -EOPNOTSUPP and caad falls back to sysfs/procfs.
 */
#include <errno.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "caad/log.h"
#include "caad/macro.h"
#include "netdev.h"

struct caad_genl {
	struct nl_sock *sock;
	int netdev_family;  /* <0: not there */
	int ethtool_family; /* <0: not there */
};

int caad_genl_open(struct caad_genl **ret)
{
	struct caad_genl *g;
	int r;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->sock = nl_socket_alloc();
	if (!g->sock) {
		free(g);
		return -ENOMEM;
	}
	r = genl_connect(g->sock);
	if (r < 0) {
		log_debug("Generic netlink unavailable: %s", nl_geterror(r));
		caad_genl_close(g);
		return -EOPNOTSUPP;
	}
	/* Replies and dumps end by themselves; a stray ACK would end the next dump early. */
	nl_socket_disable_auto_ack(g->sock);
	g->netdev_family = genl_ctrl_resolve(g->sock, "netdev");
	g->ethtool_family = genl_ctrl_resolve(g->sock, ETHTOOL_GENL_NAME);
	*ret = g;
	return 0;
}

void caad_genl_close(struct caad_genl *g)
{
	if (!g)
		return;
	nl_socket_free(g->sock);
	free(g);
}

/* libnl's error codes are its own: keep what matters to callers. */
static int nl_to_errno(int r)
{
	switch (-r) {
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_OPNOTSUPP:
	case NLE_OBJ_NOTFOUND:
	case NLE_AGAIN:
		return -EOPNOTSUPP;
	case NLE_NODEV:
		return -ENODEV;
	case NLE_PERM:
		return -EPERM;
	default:
		return -EIO;
	}
}

struct dump_ctx {
	int ifindex; /* the interface asked about */
	struct caad_genl_queue *queues;
	size_t n_queues, cap_queues;
	struct caad_genl_napi *napis;
	size_t n_napis, cap_napis;
	bool failed;
};

static int grow(void **array, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n < *cap)
		return 0;
	p = reallocarray(*array, *cap ? *cap * 2 : 8, size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = *cap ? *cap * 2 : 8;
	return 0;
}

/* Every attribute caad reads is a u32: libnl refuses a reply with one
 * shorter than that, which nla_get_u32() would read past. */
static const struct nla_policy queue_policy[NETDEV_A_QUEUE_MAX_ + 1] = {
	[NETDEV_A_QUEUE_ID_] = { .type = NLA_U32 },
	[NETDEV_A_QUEUE_IFINDEX_] = { .type = NLA_U32 },
	[NETDEV_A_QUEUE_TYPE_] = { .type = NLA_U32 },
	[NETDEV_A_QUEUE_NAPI_ID_] = { .type = NLA_U32 },
};
static const struct nla_policy napi_policy[NETDEV_A_NAPI_MAX_ + 1] = {
	[NETDEV_A_NAPI_IFINDEX_] = { .type = NLA_U32 },
	[NETDEV_A_NAPI_ID_] = { .type = NLA_U32 },
	[NETDEV_A_NAPI_IRQ_] = { .type = NLA_U32 },
	[NETDEV_A_NAPI_PID_] = { .type = NLA_U32 },
};

/* A reply's attributes, parsed by policy: 0, or < 0 (malformed). */
static int parse_reply(struct nl_msg *msg, struct nlattr **tb, int max, const struct nla_policy *policy)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	if (!genlmsg_valid_hdr(nlh, 0))
		return -EBADMSG;
	return nla_parse(tb, max, genlmsg_attrdata(nlmsg_data(nlh), 0), genlmsg_attrlen(nlmsg_data(nlh), 0), policy) < 0
	               ? -EBADMSG
	               : 0;
}

int caad_genl_parse_queue(struct nl_msg *msg, int ifindex, struct caad_genl_queue *ret)
{
	struct nlattr *tb[NETDEV_A_QUEUE_MAX_ + 1];

	/* the dump asked for ifindex: a reply of another interface's (a
	 * kernel that did not filter) must not pass for one of its queues */
	if (parse_reply(msg, tb, NETDEV_A_QUEUE_MAX_, queue_policy) < 0 || !tb[NETDEV_A_QUEUE_ID_] ||
	    !tb[NETDEV_A_QUEUE_TYPE_] || !tb[NETDEV_A_QUEUE_IFINDEX_] ||
	    nla_get_u32(tb[NETDEV_A_QUEUE_IFINDEX_]) != (uint32_t)ifindex ||
	    nla_get_u32(tb[NETDEV_A_QUEUE_TYPE_]) != NETDEV_QUEUE_TYPE_RX_)
		return 0;
	*ret = (struct caad_genl_queue){
		.index = nla_get_u32(tb[NETDEV_A_QUEUE_ID_]),
		.napi_id = tb[NETDEV_A_QUEUE_NAPI_ID_] ? nla_get_u32(tb[NETDEV_A_QUEUE_NAPI_ID_]) : 0,
	};
	return 1;
}

int caad_genl_parse_napi(struct nl_msg *msg, int ifindex, struct caad_genl_napi *ret)
{
	struct nlattr *tb[NETDEV_A_NAPI_MAX_ + 1];

	if (parse_reply(msg, tb, NETDEV_A_NAPI_MAX_, napi_policy) < 0 || !tb[NETDEV_A_NAPI_ID_] ||
	    !tb[NETDEV_A_NAPI_IFINDEX_] || nla_get_u32(tb[NETDEV_A_NAPI_IFINDEX_]) != (uint32_t)ifindex)
		return 0;
	*ret = (struct caad_genl_napi){
		.napi_id = nla_get_u32(tb[NETDEV_A_NAPI_ID_]),
		.irq = tb[NETDEV_A_NAPI_IRQ_] ? (int)nla_get_u32(tb[NETDEV_A_NAPI_IRQ_]) : -1,
		.pid = tb[NETDEV_A_NAPI_PID_] ? (pid_t)nla_get_u32(tb[NETDEV_A_NAPI_PID_]) : 0,
	};
	return 1;
}

static int on_queue(struct nl_msg *msg, void *arg)
{
	struct dump_ctx *c = arg;
	struct caad_genl_queue q;

	if (!caad_genl_parse_queue(msg, c->ifindex, &q))
		return NL_OK;
	if (grow((void **)&c->queues, &c->cap_queues, c->n_queues, sizeof(*c->queues)) < 0) {
		c->failed = true;
		return NL_STOP;
	}
	c->queues[c->n_queues++] = q;
	return NL_OK;
}

static int on_napi(struct nl_msg *msg, void *arg)
{
	struct dump_ctx *c = arg;
	struct caad_genl_napi n;

	if (!caad_genl_parse_napi(msg, c->ifindex, &n))
		return NL_OK;
	if (grow((void **)&c->napis, &c->cap_napis, c->n_napis, sizeof(*c->napis)) < 0) {
		c->failed = true;
		return NL_STOP;
	}
	c->napis[c->n_napis++] = n;
	return NL_OK;
}

/* One request, its answers through cb until the end of the dump. */
static int transact(struct caad_genl *g, struct nl_msg *msg, nl_recvmsg_msg_cb_t cb, void *arg)
{
	struct nl_cb *nlcb;
	int r;

	nlcb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!nlcb)
		return -ENOMEM;
	nl_cb_set(nlcb, NL_CB_VALID, NL_CB_CUSTOM, cb, arg);
	r = nl_send_auto(g->sock, msg);
	if (r >= 0)
		r = nl_recvmsgs(g->sock, nlcb);
	nl_cb_put(nlcb);
	return r < 0 ? nl_to_errno(r) : 0;
}

static int dump(struct caad_genl *g, uint8_t cmd, int attr, int ifindex, nl_recvmsg_msg_cb_t cb,
                struct dump_ctx *c)
{
	struct nl_msg *msg;
	int r;

	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, g->netdev_family, 0, NLM_F_DUMP, cmd, 1) ||
	    nla_put_u32(msg, attr, (uint32_t)ifindex) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	r = transact(g, msg, cb, c);
	nlmsg_free(msg);
	if (r == 0 && c->failed)
		r = -ENOMEM;
	return r;
}

int caad_genl_queues(struct caad_genl *g, int ifindex, struct caad_genl_queue **queues, size_t *n_queues,
                     struct caad_genl_napi **napis, size_t *n_napis)
{
	struct dump_ctx c = { .ifindex = ifindex };
	int r;

	if (g->netdev_family < 0)
		return -EOPNOTSUPP;
	r = dump(g, NETDEV_CMD_QUEUE_GET_, NETDEV_A_QUEUE_IFINDEX_, ifindex, on_queue, &c);
	if (r >= 0)
		r = dump(g, NETDEV_CMD_NAPI_GET_, NETDEV_A_NAPI_IFINDEX_, ifindex, on_napi, &c);
	if (r < 0) {
		free(c.queues);
		free(c.napis);
		return r;
	}
	*queues = c.queues;
	*n_queues = c.n_queues;
	*napis = c.napis;
	*n_napis = c.n_napis;
	return 0;
}

struct channels_ctx {
	int rx, combined;
	bool got;
};

static const struct nla_policy channels_policy[ETHTOOL_A_CHANNELS_MAX + 1] = {
	[ETHTOOL_A_CHANNELS_RX_COUNT] = { .type = NLA_U32 },
	[ETHTOOL_A_CHANNELS_COMBINED_COUNT] = { .type = NLA_U32 },
};

static int on_channels(struct nl_msg *msg, void *arg)
{
	struct channels_ctx *c = arg;
	struct nlattr *tb[ETHTOOL_A_CHANNELS_MAX + 1];

	if (parse_reply(msg, tb, ETHTOOL_A_CHANNELS_MAX, channels_policy) < 0)
		return NL_OK;
	c->got = true;
	if (tb[ETHTOOL_A_CHANNELS_RX_COUNT])
		c->rx = (int)nla_get_u32(tb[ETHTOOL_A_CHANNELS_RX_COUNT]);
	if (tb[ETHTOOL_A_CHANNELS_COMBINED_COUNT])
		c->combined = (int)nla_get_u32(tb[ETHTOOL_A_CHANNELS_COMBINED_COUNT]);
	return NL_OK;
}

int caad_genl_channels(struct caad_genl *g, int ifindex, int *rx, int *combined)
{
	struct channels_ctx c = { .rx = -1, .combined = -1 };
	struct nl_msg *msg;
	struct nlattr *hdr;
	int r;

	if (g->ethtool_family < 0)
		return -EOPNOTSUPP;
	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, g->ethtool_family, 0, 0, ETHTOOL_MSG_CHANNELS_GET,
	                 ETHTOOL_GENL_VERSION) ||
	    !(hdr = nla_nest_start(msg, ETHTOOL_A_CHANNELS_HEADER)) ||
	    nla_put_u32(msg, ETHTOOL_A_HEADER_DEV_INDEX, (uint32_t)ifindex) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nla_nest_end(msg, hdr);
	r = transact(g, msg, on_channels, &c);
	nlmsg_free(msg);
	if (r < 0)
		return r;
	if (!c.got)
		return -EOPNOTSUPP;
	*rx = c.rx;
	*combined = c.combined;
	return 0;
}
