/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct caad_link_watch;

/* on_change(userdata, ifname or NULL when unknown/events lost, ifindex or 0
 * when unknown): a rename names only the new name, hence the ifindex */
int caad_link_watch_new(void (*on_change)(void *userdata, const char *ifname, int ifindex), void *userdata,
                        struct caad_link_watch **ret);
int caad_link_watch_fd(struct caad_link_watch *w);
int caad_link_watch_dispatch(struct caad_link_watch *w);
void caad_link_watch_free(struct caad_link_watch *w);
