/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * ntuple rules (issue 4, rule 6): the NIC's rx flow classifier sends one
 * TCP flow to a chosen rx queue. Rules are written with the SIOCETHTOOL rx
 * classification commands (ETHTOOL_SRXCLSRLINS at RX_CLS_LOC_ANY, or at a
 * free location for drivers that want one, and ETHTOOL_SRXCLSRLDEL). Every
 * ioctl goes through caad_ethtool_ops, which tests replace.
 */

#include <linux/ethtool.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "caad/plan.h"

struct caad_ethtool_ops {
	/* SIOCETHTOOL on ifname; cmd is the command's struct (struct
	 * ethtool_value, struct ethtool_rxnfc, ...), read and written back as
	 * the kernel does. Returns 0 or -errno. */
	int (*ioctl)(void *userdata, const char *ifname, void *cmd);
	/* SIOCGIFNAME: the name of the interface ifindex now, into name;
	 * 0 or -errno (-ENODEV: none has it) */
	int (*ifname)(void *userdata, int ifindex, char *name);
	void *userdata;
};

/* Use ops for every ethtool call from now on; NULL: the kernel's again. */
void caad_ethtool_set_ops(const struct caad_ethtool_ops *ops);
/* Whether the calls go to the kernel (not to a test's ops). */
bool caad_ethtool_ops_are_kernel(void);
/* The name of the interface ifindex now (IF_NAMESIZE bytes): 0, or -errno
 * (-ENODEV: no interface has it). Where a journaled rule's NIC went. */
int caad_ntuple_ifname(int ifindex, char *name);

/*
 * Whether ifname can take caad's rules: its ntuple-filters feature is on
 * (ETHTOOL_GFLAGS: ETH_FLAG_NTUPLE) and it answers rx classification rule
 * queries (ETHTOOL_GRXCLSRLCNT). Returns 1 yes, 0 no (why: a short text,
 * static), or -ENOMEM.
 */
int caad_ntuple_supported(const char *ifname, const char **why);

/* The rule for flow -> rx queue queue at location loc (RX_CLS_LOC_ANY: the
 * driver's choice): TCP_V4_FLOW or TCP_V6_FLOW, the whole 4-tuple matched. */
void caad_ntuple_spec(const struct caad_ntuple_flow *flow, unsigned queue, uint32_t loc,
                      struct ethtool_rx_flow_spec *ret);

/* Insert the rule; *ret_loc is where the driver put it. 0 or -errno. */
int caad_ntuple_insert(const char *ifname, const struct caad_ntuple_flow *flow, unsigned queue, uint32_t *ret_loc);
/* Delete the rule at loc. 0 or -errno (-ENOENT: none there). */
int caad_ntuple_delete(const char *ifname, uint32_t loc);
/* The TCP rule at loc. 0, -ENOENT (none), -EBADMSG (not a whole TCP 4-tuple
 * rule: not one of caad's) or -errno. */
int caad_ntuple_get(const char *ifname, uint32_t loc, struct caad_ntuple_flow *ret_flow, unsigned *ret_queue);

/* The location of ifname's rule for flow -> queue (caad's kind: the whole
 * 4-tuple). 0, -ENOENT (none) or -errno. */
int caad_ntuple_find(const char *ifname, const struct caad_ntuple_flow *flow, unsigned queue, uint32_t *ret_loc);

/*
 * As the journal and the log write a rule: "tcp4 10.0.0.1:40312 > 10.0.0.2:5201
 * queue 3", "tcp6 [fd00::1]:40312 > [fd00::2]:5201 queue 3" (from the remote
 * end to the local one, as packets arrive). Returns the length or -ENOBUFS.
 */
int caad_ntuple_format(const struct caad_ntuple_flow *flow, unsigned queue, char *buf, size_t size);
/* The reverse; -EINVAL when s is not such a text. */
int caad_ntuple_parse(const char *s, struct caad_ntuple_flow *ret_flow, unsigned *ret_queue);
bool caad_ntuple_flow_equal(const struct caad_ntuple_flow *a, const struct caad_ntuple_flow *b);
