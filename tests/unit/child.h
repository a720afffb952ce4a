/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests that run in a child, whose seccomp filter goes with it (include
 * after <cmocka.h>). */
#pragma once

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/* This seccomp filter on the calling process (no_new_privs first): 0, or
 * -1 with errno. */
static inline int seccomp_install(struct sock_filter *filter, unsigned short len)
{
	struct sock_fprog prog = { .len = len, .filter = filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* fn() in a child, as its exit status: it must be 0. */
static inline void assert_child_ok(int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}
