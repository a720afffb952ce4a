/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which capability caad keeps to read its BPF maps, by kernel release and
 * kernel.unprivileged_bpf_disabled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/capability.h>

#include "caad/observe.h"

static void test_bpf_read_capability(void **state)
{
	(void)state;
	/* 5.19 and later: reading maps needs nothing, whatever the sysctl */
	assert_int_equal(caad_bpf_read_capability("5.19.0", 2), 0);
	assert_int_equal(caad_bpf_read_capability("6.1.0-27-amd64", 1), 0);
	assert_int_equal(caad_bpf_read_capability("6.18.44-fc-v669", -1), 0);
	assert_int_equal(caad_bpf_read_capability("10.0.0", 2), 0);
	/* before it, with the sysctl set (or unknown): CAP_BPF from 5.8 */
	assert_int_equal(caad_bpf_read_capability("5.15.0-91-generic", 2), CAP_BPF);
	assert_int_equal(caad_bpf_read_capability("5.18.19", 1), CAP_BPF);
	assert_int_equal(caad_bpf_read_capability("5.8.0", -1), CAP_BPF);
	/* ... CAP_SYS_ADMIN before CAP_BPF existed */
	assert_int_equal(caad_bpf_read_capability("5.7.19", 1), CAP_SYS_ADMIN);
	assert_int_equal(caad_bpf_read_capability("4.19.0-26-amd64", 2), CAP_SYS_ADMIN);
	/* the sysctl off now: CAP_BPF still from 5.8 (it may be set while caad
	 * runs), nothing before (CAP_SYS_ADMIN is too much to keep for it) */
	assert_int_equal(caad_bpf_read_capability("5.10.0", 0), CAP_BPF);
	assert_int_equal(caad_bpf_read_capability("5.18.0", 0), CAP_BPF);
	assert_int_equal(caad_bpf_read_capability("5.19.0", 0), 0);
	assert_int_equal(caad_bpf_read_capability("4.19.0", 0), 0);
	assert_int_equal(caad_bpf_read_capability("weird", 0), 0);
	/* a release that does not parse counts as old */
	assert_int_equal(caad_bpf_read_capability("weird", 1), CAP_BPF);
	assert_int_equal(caad_bpf_read_capability(NULL, 1), CAP_BPF);
}

/* Whether NET_RX time on top of a watched thread is in its run time too. */
static void test_irq_time_accounting(void **state)
{
	(void)state;
	assert_true(caad_irq_time_accounting("CONFIG_X=y\nCONFIG_IRQ_TIME_ACCOUNTING=y\nCONFIG_Y=m\n", "ro quiet"));
	assert_true(caad_irq_time_accounting("CONFIG_IRQ_TIME_ACCOUNTING=y", NULL));
	assert_false(caad_irq_time_accounting("# CONFIG_IRQ_TIME_ACCOUNTING is not set\n", NULL));
	assert_false(caad_irq_time_accounting("CONFIG_IRQ_TIME_ACCOUNTING=yes\nXCONFIG_IRQ_TIME_ACCOUNTING=y\n", NULL));
	assert_false(caad_irq_time_accounting("", NULL));
	assert_false(caad_irq_time_accounting(NULL, NULL));
	/* x86: tsc=noirqtime switches it off at boot */
	assert_false(caad_irq_time_accounting("CONFIG_IRQ_TIME_ACCOUNTING=y\n", "ro tsc=noirqtime quiet"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bpf_read_capability),
		cmocka_unit_test(test_irq_time_accounting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
