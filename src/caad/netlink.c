/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rtnetlink link events (libnl-route): a link added, removed, renamed or
 * changed means the inventory must be read again. */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <linux/if_link.h>
#include <netlink/attr.h>
#include <netlink/socket.h>

#include "caad/log.h"
#include "netlink.h"

struct caad_link_watch {
	struct nl_sock *sock;
	void (*on_change)(void *userdata, const char *ifname, int ifindex);
	void *userdata;
};

/* A name that is a string (NUL-terminated, which libnl checks) of at most
 * IFNAMSIZ bytes: compared with the managed names as it is. */
static const struct nla_policy link_policy[IFLA_MAX + 1] = {
	[IFLA_IFNAME] = { .type = NLA_STRING, .maxlen = IFNAMSIZ },
};

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct caad_link_watch *w = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[IFLA_MAX + 1];
	const char *name = NULL;
	int ifindex = 0;

	if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
		return NL_OK;
	/* the link by its index even where its attributes do not parse: a
	 * change is a change (the inventory is read again) */
	if (nlmsg_valid_hdr(nlh, sizeof(struct ifinfomsg)))
		ifindex = ((const struct ifinfomsg *)nlmsg_data(nlh))->ifi_index;
	if (nlmsg_parse(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX, link_policy) >= 0 && tb[IFLA_IFNAME])
		name = nla_get_string(tb[IFLA_IFNAME]);
	log_debug("rtnetlink: %s %s (ifindex %d)", nlh->nlmsg_type == RTM_NEWLINK ? "new/changed link" : "deleted link",
	          name ? name : "?", ifindex);
	w->on_change(w->userdata, name, ifindex);
	return NL_OK;
}

int caad_link_watch_new(void (*on_change)(void *userdata, const char *ifname, int ifindex), void *userdata,
                        struct caad_link_watch **ret)
{
	struct caad_link_watch *w;
	int r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->on_change = on_change;
	w->userdata = userdata;
	w->sock = nl_socket_alloc();
	if (!w->sock) {
		free(w);
		return -ENOMEM;
	}
	nl_socket_disable_seq_check(w->sock);
	nl_socket_modify_cb(w->sock, NL_CB_VALID, NL_CB_CUSTOM, on_valid, w);
	r = nl_connect(w->sock, NETLINK_ROUTE);
	if (r >= 0)
		r = nl_socket_add_membership(w->sock, RTNLGRP_LINK);
	if (r >= 0)
		r = nl_socket_set_nonblocking(w->sock);
	if (r < 0) {
		log_error("Failed to subscribe to rtnetlink link events: %s", nl_geterror(r));
		caad_link_watch_free(w);
		return -EIO;
	}
	*ret = w;
	return 0;
}

int caad_link_watch_fd(struct caad_link_watch *w)
{
	return nl_socket_get_fd(w->sock);
}

int caad_link_watch_dispatch(struct caad_link_watch *w)
{
	int r = nl_recvmsgs_default(w->sock);

	if (r < 0 && r != -NLE_AGAIN) {
		/* e.g. ENOBUFS: events were lost; the caller re-reads everything */
		log_debug("rtnetlink: %s", nl_geterror(r));
		w->on_change(w->userdata, NULL, 0);
	}
	return 0;
}

void caad_link_watch_free(struct caad_link_watch *w)
{
	if (!w)
		return;
	nl_socket_free(w->sock);
	free(w);
}
