/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caad.conf parsing (our line reader in front of inih, every key's value
 * parser) on arbitrary bytes. Besides memory errors it checks that a parse
 * returns 0 or -EINVAL, that what it accepted is within the documented
 * ranges, and that parsing the same text twice changes nothing more.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "caad/config.h"
#include "caad/irqbalance.h"
#include "fuzz.h"

/* The ranges documented in etc/caad.conf and caad.conf(5). */
static void check_config(const struct caad_config *c)
{
	size_t n = 0;

	fuzz_assert(caad_mode_to_string(c->mode));
	fuzz_assert(c->interval_ms >= 10 && c->interval_ms <= 60000);
	fuzz_assert(c->max_flows >= 64 && c->max_flows <= 1048576);
	fuzz_assert(c->log_level >= LOG_EMERG && c->log_level <= LOG_DEBUG);
	fuzz_assert(caad_irqbalance_mode_to_string(c->irqbalance));
	fuzz_assert(!c->metrics_file || (c->metrics_file[0] == '/' && strlen(c->metrics_file) < PATH_MAX));
	fuzz_assert(c->policy.min_age_ms <= 3600000 && c->policy.dwell_ms <= 3600000);
	fuzz_assert(c->policy.max_moves >= 1 && c->policy.max_moves <= 1048576);

	for (char **i = c->interfaces; i && *i; i++, n++) {
		size_t len = strlen(*i);

		fuzz_assert(len >= 1 && len <= 15);
		fuzz_assert(!strpbrk(*i, "/: \t\n\r\v\f"));
		for (char **j = c->interfaces; j < i; j++)
			fuzz_assert(!streq(*i, *j));
	}
	fuzz_assert(n == c->n_interfaces);
	fuzz_assert((c->interfaces == NULL) == (n == 0));
}

static bool config_equal(const struct caad_config *a, const struct caad_config *b)
{
	if (a->mode != b->mode || a->interval_ms != b->interval_ms || a->max_flows != b->max_flows ||
	    a->log_level != b->log_level || a->n_interfaces != b->n_interfaces || a->irqbalance != b->irqbalance ||
	    !a->metrics_file != !b->metrics_file || (a->metrics_file && !streq(a->metrics_file, b->metrics_file)) ||
	    a->policy.rate_threshold_bps != b->policy.rate_threshold_bps ||
	    a->policy.min_age_ms != b->policy.min_age_ms || a->policy.dwell_ms != b->policy.dwell_ms ||
	    a->policy.max_moves != b->policy.max_moves ||
	    a->policy.allow_smt_sibling != b->policy.allow_smt_sibling ||
	    a->policy.allow_other_package != b->policy.allow_other_package ||
	    !caad_cpumask_equal(&a->policy.banned, &b->policy.banned))
		return false;
	for (size_t i = 0; i < a->n_interfaces; i++)
		if (!streq(a->interfaces[i], b->interfaces[i]))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct caad_config once, twice;
	int r;

	fuzz_setup();

	caad_config_init(&once);
	r = caad_config_parse_string(&once, (const char *)data, size, "fuzz.conf");
	fuzz_assert(r == 0 || r == -EINVAL);
	fuzz_assert((r == 0) == !once.error); /* the first error is kept for Reload */
	if (r == 0) {
		check_config(&once);

		/* Every key overrides: the same file twice (as a drop-in
		 * repeating the main file) is the file once. */
		caad_config_init(&twice);
		fuzz_assert(caad_config_parse_string(&twice, (const char *)data, size, "fuzz.conf") == 0);
		fuzz_assert(caad_config_parse_string(&twice, (const char *)data, size, "fuzz.conf") == 0);
		fuzz_assert(config_equal(&once, &twice));
		caad_config_done(&twice);
	}
	caad_config_done(&once);
	return 0;
}
