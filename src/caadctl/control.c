/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caadctl reload | mode [MODE] | placement [PLACEMENT] | pause | resume |
 * restore: the methods that change what caad does (root only: the bus
 * policy and caad both check), and "mode" and "placement" without an
 * argument, which only read.
 */
#include <stdio.h>

#include "caadctl.h"

/* mode or placement without an argument: the value in force. */
static int print_setting(struct ctl *c, bool placement)
{
	struct ctl_status s;
	int r = ctl_get_status(c, &s);

	if (r)
		return r;
	if (c->json) {
		struct json_object *o = json_object_new_object();

		if (placement)
			json_object_object_add(o, "placement", json_object_new_string(s.placement));
		else {
			json_object_object_add(o, "mode", json_object_new_string(s.mode));
			json_object_object_add(o, "paused", json_object_new_boolean(s.paused));
		}
		r = ctl_json_print(c, o);
	} else {
		if (placement)
			printf("%s\n", s.placement);
		else
			printf("%s%s\n", s.mode, s.paused ? " (paused)" : "");
		r = fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
	}
	ctl_status_done(&s);
	return r;
}

int ctl_control(struct ctl *c, const struct ctl_command *cmd)
{
	const char *method;

	switch (cmd->object) {
	case CTL_RELOAD:
		method = "Reload";
		break;
	case CTL_PAUSE:
		method = "Pause";
		break;
	case CTL_RESUME:
		method = "Resume";
		break;
	case CTL_RESTORE:
		method = "RestoreAll";
		break;
	case CTL_MODE:
		if (cmd->arg)
			return ctl_call(c, "SetMode", NULL, "s", cmd->arg);
		return print_setting(c, false);
	case CTL_PLACEMENT:
		if (cmd->arg)
			return ctl_call(c, "SetPlacement", NULL, "s", cmd->arg);
		return print_setting(c, true);
	default:
		return ctl_fail(c, "internal error: %s is not a control verb", ctl_object_names[cmd->object]);
	}
	return ctl_call(c, method, NULL, NULL);
}
