/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * caad.conf: systemd-style INI, stacked VENDORDIR/caad.conf <
 * SYSCONFDIR/caad.conf < SYSCONFDIR/caad.conf.d/ *.conf (lexical order).
 *
 * inih splits the lines, but as packaged (r55, no INI_HANDLER_LINENO) it
 * neither tells the handler its line nor reports more than the first bad
 * line. So lines reach it through our own reader, which counts them and
 * rejects malformed lines and unknown sections itself; every error is then
 * logged exactly once as "FILE:LINE: what: why". The reader also strips
 * leading whitespace, which inih would otherwise take for a continuation
 * of the previous value ("  MaxFlows=64" becoming part of Interfaces=).
 */
#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "caad-config.h"
#include "caad/macro.h"
#include "caad/config.h"
#include "caad/cpumask.h"
#include "caad/log.h"
#include "caad/sysfs.h"
#include "caad/utf8.h"

#define WHITESPACE " \t\n\r\v\f"
#define COMMENT_CHARS "#;"
/* The longest assignment (inih, as packaged, takes 199 characters a line:
 * longer ones caad hands over itself): a list of every other CPU of 4096
 * fits, a file of one endless line does not. */
#define CONFIG_LINE_MAX 65535
#define IFNAME_MAX 15 /* IFNAMSIZ - 1 */

#define INTERVAL_MS_DEFAULT 250u
#define INTERVAL_MS_MIN 10u
#define INTERVAL_MS_MAX 60000u
#define SCAN_BUDGET_PCT_DEFAULT 10u
#define MAX_FLOWS_DEFAULT 16384u
#define MAX_FLOWS_MIN 64u
#define MAX_FLOWS_MAX 1048576u
#define MIN_FLOW_BYTES_DEFAULT (64u << 10)
#define MIN_FLOW_BYTES_MAX (1u << 30)
#define RATE_THRESHOLD_DEFAULT CAAD_RATE_THRESHOLD_DEFAULT
#define AGE_MS_MAX 3600000u     /* MinAgeMSec=, DwellMSec=: an hour */
#define MAX_MOVES_MAX 1048576u
#define BACKOFF_SEC_MAX 86400u  /* BackOffSec=: a day */
#define TRIAL_MS_MAX 600000u    /* TurnMSec=, SettleMSec=: ten minutes */
#define TRIAL_STEADY_MS_DEFAULT 5000u
#define VERDICT_MAX_AGE_DEFAULT 604800u /* a week */
#define VERDICT_MAX_AGE_MAX 31536000u   /* a year */

#define log_oom() log_error_errno(ENOMEM, "Out of memory")

static const char *const mode_names[_CAAD_MODE_COUNT] = {
	[CAAD_MODE_ENFORCE] = "enforce",
	[CAAD_MODE_DRY_RUN] = "dry-run",
	[CAAD_MODE_OBSERVE] = "observe",
};

const char *caad_mode_to_string(enum caad_mode m)
{
	if ((unsigned)m >= _CAAD_MODE_COUNT)
		return NULL;
	return mode_names[m];
}

static const char *const placement_names[_CAAD_PLACEMENT_COUNT] = {
	[CAAD_PLACEMENT_PRIOR] = "prior",
	[CAAD_PLACEMENT_MEASURE] = "measure",
};

const char *caad_placement_to_string(enum caad_placement p)
{
	if ((unsigned)p >= _CAAD_PLACEMENT_COUNT)
		return NULL;
	return placement_names[p];
}

int caad_placement_from_string(const char *s)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(placement_names); i++)
		if (streq(s, placement_names[i]))
			return (int)i;
	return -EINVAL;
}

int caad_mode_from_string(const char *s)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (streq(s, mode_names[i]))
			return (int)i;
	return -EINVAL;
}

static void strv_free(char **l)
{
	if (!l)
		return;
	for (char **i = l; *i; i++)
		free(*i);
	free(l);
}

static void strv_freep(char ***l)
{
	strv_free(*l);
}

static bool strv_contains(char *const *l, const char *s)
{
	for (; l && *l; l++)
		if (streq(*l, s))
			return true;
	return false;
}

static void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

void caad_config_init(struct caad_config *c)
{
	assert(c);

	/* The policy defaults are spelled out here rather than taken from
	 * caad_policy_init() so that the config file's documented defaults
	 * (etc/caad.conf) live next to the parser. */
	*c = (struct caad_config){
		.mode = CAAD_MODE_ENFORCE,
		.interfaces = NULL,
		.n_interfaces = 0,
		.interval_ms = INTERVAL_MS_DEFAULT,
		.scan_budget_pct = SCAN_BUDGET_PCT_DEFAULT,
		.max_flows = MAX_FLOWS_DEFAULT,
		.min_flow_bytes = MIN_FLOW_BYTES_DEFAULT,
		.log_level = LOG_INFO,
		.irqbalance = CAAD_IRQBALANCE_BAN,
		.placement = CAAD_PLACEMENT_PRIOR,
		.trial_steady_ms = TRIAL_STEADY_MS_DEFAULT,
		.trial_host = true,
		.verdict_max_age_sec = VERDICT_MAX_AGE_DEFAULT,
		.policy = {
			.rate_threshold_bps = RATE_THRESHOLD_DEFAULT,
			.min_age_ms = CAAD_MIN_AGE_MS_DEFAULT,
			.dwell_ms = CAAD_DWELL_MS_DEFAULT,
			.max_moves = CAAD_MAX_MOVES_DEFAULT,
			.allow_smt_sibling = false,
			.allow_other_package = false,
			.disabled_mechanisms = CAAD_MECHANISMS_DEFAULT_OFF,
		},
	};
	caad_cpumask_zero(&c->policy.banned);
	caad_trial_params_init(&c->trial);
}

void caad_config_done(struct caad_config *c)
{
	if (!c)
		return;
	strv_free(c->interfaces);
	c->interfaces = NULL;
	c->n_interfaces = 0;
	free(c->error);
	c->error = NULL;
	free(c->metrics_file);
	c->metrics_file = NULL;
}

/* Log an error with errno set to |r| (for %m), keep the first one's text in
 * c->error, return -|r|. */
static int config_error(struct caad_config *c, int r, const char *fmt, ...) _printf_(3, 4);
static int config_error(struct caad_config *c, int r, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	r = r < 0 ? -r : r;
	errno = r;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	log_error("%s", msg);
	/* (it goes into sd_notify's STATUS= and D-Bus replies: a file name
	 * with a newline must not add a line of its own) */
	if (!c->error && (c->error = strdup(msg))) /* out of memory: the log has it */
		caad_utf8_sanitize(c->error, false);
	return -r;
}

/* As the kernel's dev_valid_name(): it refuses ':' too (alias syntax). */
bool caad_ifname_valid(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || n > IFNAME_MAX)
		return false;
	if (streq(s, ".") || streq(s, ".."))
		return false;
	for (const char *p = s; *p; p++)
		if (*p == '/' || *p == ':' || isspace((unsigned char)*p))
			return false;
	return true;
}

/* Copies names, dropping repeats. An empty list is stored as NULL. */
int caad_config_set_interfaces(struct caad_config *c, char *const *names, size_t n)
{
	_cleanup_(strv_freep) char **l = NULL;
	size_t k = 0;

	assert(c);
	assert(names || n == 0);

	for (size_t i = 0; i < n; i++)
		if (!caad_ifname_valid(names[i]))
			return -EINVAL;

	if (n > 0) {
		l = calloc(n + 1, sizeof(char *));
		if (!l)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			if (strv_contains(l, names[i]))
				continue;
			l[k] = strdup(names[i]);
			if (!l[k])
				return -ENOMEM;
			k++;
		}
	}

	strv_free(c->interfaces);
	c->interfaces = TAKE_PTR(l);
	c->n_interfaces = k;
	return 0;
}

int caad_parse_bool(const char *s, bool *ret)
{
	static const struct {
		const char *word;
		bool value;
	} words[] = {
		{ "yes", true },  { "true", true },   { "on", true },  { "1", true },
		{ "no", false },  { "false", false }, { "off", false }, { "0", false },
	};

	assert(ret);

	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strcasecmp(s, words[i].word) == 0) {
			*ret = words[i].value;
			return 0;
		}
	return -EINVAL;
}

/*
 * DIGITS[.DIGITS][K|M|G|T], SI (powers of 1000), suffix case-insensitive.
 * The result must be a whole number of bits: "1.5G" is fine, "1.5" is not.
 * Syntax errors win over overflow, as in caad_cpumask_parse_list().
 */
int caad_parse_rate(const char *s, uint64_t *ret)
{
	static const struct {
		char suffix;
		unsigned exp10;
	} units[] = {
		{ 'K', 3 }, { 'M', 6 }, { 'G', 9 }, { 'T', 12 },
	};
	const char *p, *frac = NULL;
	size_t n_frac = 0;
	unsigned exp10 = 0;
	uint64_t whole = 0, fraction = 0, scale = 1, v;
	bool overflow = false;

	assert(ret);

	if (!s)
		return -EINVAL;

	p = s;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
			overflow = true;

	if (*p == '.') {
		p++;
		frac = p;
		while (isdigit((unsigned char)*p))
			p++;
		n_frac = (size_t)(p - frac);
		if (n_frac == 0)
			return -EINVAL;
	}

	if (*p) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(units); i++)
			if (toupper((unsigned char)*p) == units[i].suffix)
				break;
		if (i == ARRAY_SIZE(units))
			return -EINVAL;
		exp10 = units[i].exp10;
		p++;
	}
	if (*p)
		return -EINVAL;

	/* Trailing zeros of the fraction carry no precision. */
	while (n_frac > 0 && frac[n_frac - 1] == '0')
		n_frac--;
	if (n_frac > exp10)
		return -EDOM; /* a fraction of a bit */

	if (overflow)
		return -ERANGE;

	for (unsigned i = 0; i < exp10; i++)
		scale *= 10;
	for (size_t i = 0; i < n_frac; i++)
		fraction = fraction * 10 + (uint64_t)(frac[i] - '0');
	for (size_t i = n_frac; i < exp10; i++)
		fraction *= 10; /* at most 12 digits: cannot overflow */

	if (__builtin_mul_overflow(whole, scale, &v) || __builtin_add_overflow(v, fraction, &v))
		return -ERANGE;

	*ret = v;
	return 0;
}

/* Digits only: no sign, no blanks, no base prefix. */
static int parse_unsigned_range(const char *s, unsigned min, unsigned max, unsigned *ret)
{
	unsigned long long v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		if (v <= max)
			v = v * 10 + (unsigned)(*p - '0');
	}
	if (v < min || v > max)
		return -ERANGE;
	*ret = (unsigned)v;
	return 0;
}

struct config_key;

/* Parse value into the field; on failure write the reason into why. */
typedef int (*config_parse_t)(const struct config_key *k, struct caad_config *c, const char *value,
                              char *why, size_t why_size);

struct config_key {
	const char *section;
	const char *name;
	config_parse_t parse;
	size_t offset; /* of the field in struct caad_config */
	unsigned min, max;
};

#define FIELD(c, k, type) ((type *)((char *)(c) + (k)->offset))

static int parse_mode(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                      size_t why_size)
{
	int m = caad_mode_from_string(value);

	if (m < 0) {
		snprintf(why, why_size, "expected enforce, dry-run or observe");
		return m;
	}
	*FIELD(c, k, enum caad_mode) = (enum caad_mode)m;
	return 0;
}

static int parse_placement(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                           size_t why_size)
{
	int p = caad_placement_from_string(value);

	if (p < 0) {
		snprintf(why, why_size, "expected prior or measure");
		return p;
	}
	*FIELD(c, k, enum caad_placement) = (enum caad_placement)p;
	return 0;
}

static int parse_irqbalance(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                            size_t why_size)
{
	int m = caad_irqbalance_mode_from_string(value);

	if (m < 0) {
		snprintf(why, why_size, "expected ban, warn or ignore");
		return m;
	}
	*FIELD(c, k, enum caad_irqbalance_mode) = (enum caad_irqbalance_mode)m;
	return 0;
}

/* "irq rps kthread rfs ntuple": the mechanisms caad may use; the others are
 * disabled. rfs stands for both of its settings (the queue's table and the
 * global one). Empty: the default, as an empty assignment resets a list
 * (Interfaces=, BannedCPUs=); Mode=observe is how to write nothing. */
static int parse_mechanisms(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                            size_t why_size)
{
	static const struct { const char *name; unsigned kinds; } names[] = {
		{ "irq", 1u << CAAD_SETTING_IRQ_AFFINITY },
		{ "rps", 1u << CAAD_SETTING_RPS_CPUS },
		{ "kthread", 1u << CAAD_SETTING_KTHREAD_AFFINITY },
		{ "rfs", (1u << CAAD_SETTING_RFS_FLOW_CNT) | (1u << CAAD_SETTING_RFS_TABLE) },
		{ "ntuple", 1u << CAAD_SETTING_NTUPLE_RULE },
	};
	_cleanup_free_ char *copy = strdup(value);
	unsigned allowed = 0;
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *w = strtok_r(copy, WHITESPACE, &save); w; w = strtok_r(NULL, WHITESPACE, &save)) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (streq(w, names[i].name))
				break;
		if (i == ARRAY_SIZE(names)) {
			snprintf(why, why_size, "unknown mechanism '%s': expected kthread, irq, rps, rfs and/or ntuple", w);
			return -EINVAL;
		}
		allowed |= names[i].kinds;
	}
	*FIELD(c, k, unsigned) = allowed ? ((1u << _CAAD_SETTING_KIND_COUNT) - 1) & ~allowed : CAAD_MECHANISMS_DEFAULT_OFF;
	return 0;
}

static int parse_interfaces(const struct config_key *k, struct caad_config *c, const char *value,
                            char *why, size_t why_size)
{
	_cleanup_free_ char *copy = NULL;
	_cleanup_free_ char **names = NULL;
	char *save = NULL;
	size_t n = 0;

	copy = strdup(value);
	/* n words need at least 2n-1 characters */
	names = calloc(strlen(value) / 2 + 1, sizeof(char *));
	if (!copy || !names)
		return -ENOMEM;

	for (char *w = strtok_r(copy, WHITESPACE, &save); w; w = strtok_r(NULL, WHITESPACE, &save)) {
		if (!caad_ifname_valid(w)) {
			snprintf(why, why_size, "'%s' is not an interface name (%s)", w, CAAD_IFNAME_RULE);
			return -EINVAL;
		}
		names[n++] = w;
	}
	return caad_config_set_interfaces(c, names, n);
}

static int parse_unsigned(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                          size_t why_size)
{
	int r = parse_unsigned_range(value, k->min, k->max, FIELD(c, k, unsigned));

	if (r == -ERANGE)
		snprintf(why, why_size, "out of range %u..%u", k->min, k->max);
	else if (r < 0)
		snprintf(why, why_size, "expected an unsigned decimal number");
	return r;
}

/* Bytes: digits, then K, M or G (powers of 1024; either case) or nothing;
 * the key's min..max. */
static int parse_bytes(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                       size_t why_size)
{
	static const char units[] = "KMG";
	_cleanup_free_ char *digits = strdup(value);
	size_t n = strlen(value);
	unsigned long long v;
	unsigned shift = 0;
	unsigned u;
	int r = 0;

	if (!digits)
		return -ENOMEM;
	if (n > 1 && !isdigit((unsigned char)value[n - 1])) {
		const char *unit = strchr(units, toupper((unsigned char)value[n - 1]));

		if (unit && *unit)
			shift = 10 * (unsigned)(unit - units + 1);
		else
			r = -EINVAL;
		digits[n - 1] = '\0';
	}
	if (r == 0)
		r = parse_unsigned_range(digits, 0, k->max, &u);
	v = r == 0 ? (unsigned long long)u << shift : 0;
	if (r == 0 && (v < k->min || v > k->max))
		r = -ERANGE;
	if (r == -ERANGE)
		snprintf(why, why_size, "out of range %u..%u (1G)", k->min, k->max);
	else if (r < 0)
		snprintf(why, why_size, "expected bytes with an optional K, M or G suffix (powers of 1024), e.g. 64K");
	else
		*FIELD(c, k, unsigned) = (unsigned)v;
	return r;
}

/* ConfidencePercent=: 0 (not asked), or the key's min..max (50..99:
 * below 50 the "lower" bound would lie above the geometric mean it bounds) */
static int parse_confidence(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                            size_t why_size)
{
	unsigned v;
	int r = parse_unsigned_range(value, 0, k->max, &v);

	if (r == 0 && v != 0 && v < k->min)
		r = -ERANGE;
	if (r == -ERANGE)
		snprintf(why, why_size, "expected 0 (not asked) or %u..%u", k->min, k->max);
	else if (r < 0)
		snprintf(why, why_size, "expected an unsigned decimal number");
	else
		*FIELD(c, k, unsigned) = v;
	return r;
}

static int parse_log_level(const struct config_key *k, struct caad_config *c, const char *value,
                           char *why, size_t why_size)
{
	int l = caad_log_parse_level(value);

	if (l < 0) {
		snprintf(why, why_size, "expected emerg, alert, crit, err, warning, notice, info or debug");
		return l;
	}
	*FIELD(c, k, int) = l;
	return 0;
}

const char *caad_parse_rate_error(int r)
{
	if (r == -ERANGE)
		return "larger than 18446744073709551615 bit/s"; /* UINT64_MAX */
	if (r == -EDOM)
		return "not a whole number of bit/s (at most as many decimals as the suffix has zeros)";
	return NULL;
}

static int parse_rate(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                      size_t why_size)
{
	int r = caad_parse_rate(value, FIELD(c, k, uint64_t));

	if (caad_parse_rate_error(r))
		snprintf(why, why_size, "%s", caad_parse_rate_error(r));
	else if (r < 0)
		snprintf(why, why_size,
		         "expected bit/s with an optional K, M, G or T suffix (powers of 1000), e.g. 1G or 2.5G");
	return r;
}

static int parse_cpus(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                      size_t why_size)
{
	int r = caad_cpumask_parse_list(value, FIELD(c, k, struct caad_cpumask));

	if (r == -ERANGE)
		snprintf(why, why_size, "CPU numbers must be below %d", CAAD_CPUS_MAX);
	else if (r < 0)
		snprintf(why, why_size, "expected a CPU list such as 0-3,8");
	return r;
}

static int parse_bool(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                      size_t why_size)
{
	int r = caad_parse_bool(value, FIELD(c, k, bool));

	if (r < 0)
		snprintf(why, why_size, "expected yes/no, true/false, on/off or 1/0");
	return r;
}

/* An absolute file path, or empty for none (NULL). */
static int parse_path(const struct config_key *k, struct caad_config *c, const char *value, char *why,
                      size_t why_size)
{
	char **field = FIELD(c, k, char *), *copy = NULL;
	size_t n = strlen(value);

	if (n > 0 && (value[0] != '/' || value[n - 1] == '/' || n >= PATH_MAX)) {
		snprintf(why, why_size, "expected an absolute file name, or nothing");
		return -EINVAL;
	}
	if (n > 0) {
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
	}
	free(*field);
	*field = copy;
	return 0;
}

#define KEY(s, n, p, field, ...) { s, n, p, offsetof(struct caad_config, field), __VA_ARGS__ }

static const struct config_key config_keys[] = {
	KEY("Daemon", "Mode", parse_mode, mode),
	KEY("Daemon", "Interfaces", parse_interfaces, interfaces),
	KEY("Daemon", "IntervalMSec", parse_unsigned, interval_ms, INTERVAL_MS_MIN, INTERVAL_MS_MAX),
	KEY("Daemon", "ScanBudgetPercent", parse_unsigned, scan_budget_pct, 1, 100),
	KEY("Daemon", "MaxFlows", parse_unsigned, max_flows, MAX_FLOWS_MIN, MAX_FLOWS_MAX),
	KEY("Daemon", "MinFlowBytes", parse_bytes, min_flow_bytes, 0, MIN_FLOW_BYTES_MAX),
	KEY("Daemon", "LogLevel", parse_log_level, log_level),
	KEY("Daemon", "IrqBalance", parse_irqbalance, irqbalance),
	KEY("Daemon", "MetricsFile", parse_path, metrics_file),
	KEY("Daemon", "BackOffSec", parse_unsigned, backoff_sec, 0, BACKOFF_SEC_MAX),
	KEY("Daemon", "Placement", parse_placement, placement),
	KEY("Placement", "RateThreshold", parse_rate, policy.rate_threshold_bps),
	KEY("Placement", "BannedCPUs", parse_cpus, policy.banned),
	KEY("Placement", "AllowSMTSibling", parse_bool, policy.allow_smt_sibling),
	KEY("Placement", "AllowOtherPackage", parse_bool, policy.allow_other_package),
	KEY("Placement", "Mechanisms", parse_mechanisms, policy.disabled_mechanisms),
	KEY("Placement", "MinAgeMSec", parse_unsigned, policy.min_age_ms, 0, AGE_MS_MAX),
	KEY("Placement", "DwellMSec", parse_unsigned, policy.dwell_ms, 0, AGE_MS_MAX),
	KEY("Placement", "MaxMovesPerCycle", parse_unsigned, policy.max_moves, 1, MAX_MOVES_MAX),
	KEY("Trials", "Rounds", parse_unsigned, trial.rounds, 2, 100),
	KEY("Trials", "TurnMSec", parse_unsigned, trial.turn_ms, 100, TRIAL_MS_MAX),
	KEY("Trials", "SettleMSec", parse_unsigned, trial.settle_ms, 0, TRIAL_MS_MAX),
	KEY("Trials", "MarginPercent", parse_unsigned, trial.margin_pct, 0, 100),
	KEY("Trials", "WinPercent", parse_unsigned, trial.win_pct, 50, 100),
	KEY("Trials", "EfficiencyLossPercent", parse_unsigned, trial.eff_loss_pct, 0, 100),
	KEY("Trials", "ConfidencePercent", parse_confidence, trial.confidence_pct, 50, 99),
	KEY("Trials", "SteadyMSec", parse_unsigned, trial_steady_ms, 0, AGE_MS_MAX),
	KEY("Trials", "TryHostSteering", parse_bool, trial_host),
	KEY("Trials", "VerdictMaxAgeSec", parse_unsigned, verdict_max_age_sec, 0, VERDICT_MAX_AGE_MAX),
};

/* The section s as config_keys[] spells it, or NULL: none caad knows. */
static const char *section_known(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(config_keys); i++)
		if (streq(config_keys[i].section, s))
			return config_keys[i].section;
	return NULL;
}

struct parse_ctx {
	struct caad_config *config;
	const char *path;
	FILE *f;
	char *buf; /* getline()'s */
	size_t buf_size;
	unsigned line;
	bool skip_keys; /* in a section already reported as bad */
	const char *section; /* the last good header's, as config_keys[] spells it */
	int read_errno;
	int r;          /* first error */
};

/* Log "FILE:LINE: ..." for the current line, remember the first error.
 * Returns 0, inih's "error" from a handler. */
static int ctx_error(struct parse_ctx *ctx, int r, const char *fmt, ...) _printf_(3, 4);
static int ctx_error(struct parse_ctx *ctx, int r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	config_error(ctx->config, r, "%s:%u: %s", ctx->path, ctx->line, msg);
	if (ctx->r == 0)
		ctx->r = r;
	return 0;
}

/* Whether inih, or for an assignment longer than inih's lines (max - 1)
 * handle_long(), should see the line p (stripped, NUL-terminated, len
 * bytes). */
static bool line_ok(struct parse_ctx *ctx, char *p, size_t len, int max)
{
	const char *known;

	if (*p == '[') {
		/* Keys after a bad header belong to no known section: say so once. */
		ctx->skip_keys = true;
		if (len >= (size_t)max || len < 3 || p[len - 1] != ']') {
			ctx_error(ctx, -EINVAL, "Invalid section header '%s': expected [Section]", p);
			return false;
		}
		p[len - 1] = '\0';
		known = section_known(p + 1);
		if (!known)
			ctx_error(ctx, -EINVAL, "Unknown section [%s]", p + 1);
		p[len - 1] = ']';
		if (!known)
			return false;
		ctx->skip_keys = false;
		ctx->section = known;
		return true;
	}

	if (*p == '\0' || strchr(COMMENT_CHARS, *p))
		return len < (size_t)max; /* a long comment is just dropped */
	/* after a bad header, until the next good one: dropped unsaid */
	if (ctx->skip_keys)
		return false;

	if (len > CONFIG_LINE_MAX) {
		ctx_error(ctx, -EINVAL, "Line too long: longer than %d characters", CONFIG_LINE_MAX);
		return false;
	}
	if (p[strcspn(p, "=:")] != '=') {
		ctx_error(ctx, -EINVAL, "Invalid line '%s': expected Key=Value", p);
		return false;
	}
	/* inih cuts a line at a ';' after whitespace: one in the key leaves
	 * no '=' for it, which it would report only as the file's first error */
	for (const char *q = p + 1; q < p + strcspn(p, "="); q++)
		if (*q == ';' && strchr(WHITESPACE, q[-1])) {
			ctx_error(ctx, -EINVAL, "Invalid line '%s': expected Key=Value (a ';' after whitespace starts a "
			          "comment)", p);
			return false;
		}
	if (*p == '=') {
		ctx_error(ctx, -EINVAL, "Invalid line '%s': missing key before '='", p);
		return false;
	}
	/* ... and one in the value cuts it there: "Interfaces=eth0 ;eth1"
	 * would manage eth0 alone, unsaid */
	for (const char *q = strchr(p, '=') + 1; *q; q++)
		if (*q == ';' && strchr(WHITESPACE, q[-1])) {
			ctx_error(ctx, -EINVAL, "Invalid line '%s': a ';' after whitespace in a value (a comment "
			          "goes on a line of its own)", p);
			return false;
		}
	return true;
}

static int handle_key(void *user, const char *section, const char *name, const char *value);

/* An assignment p (checked by line_ok()) too long for inih's line buffer:
 * handed to handle_key() as inih would, its name and its value stripped,
 * in the section of the last good header (after a bad one, line_ok() drops
 * the line). */
static void handle_long(struct parse_ctx *ctx, char *p)
{
	char *eq = strchr(p, '='), *e = eq;

	while (e > p && strchr(WHITESPACE, e[-1]))
		e--;
	*e = '\0';
	(void)handle_key(ctx, ctx->section, p, eq + 1 + strspn(eq + 1, WHITESPACE));
}

/* inih's fgets()-like reader: one line per call, handed over stripped. */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;
	ssize_t n;
	char *p, *e;

	errno = 0;
	n = getline(&ctx->buf, &ctx->buf_size, ctx->f);
	if (n < 0) {
		if (ferror(ctx->f))
			ctx->read_errno = errno ?: EIO;
		return NULL;
	}
	ctx->line++;

	p = ctx->buf;
	if ((size_t)n != strlen(p)) {
		bool header = p[strspn(p, WHITESPACE)] == '[';

		/* (a line after a bad header goes unsaid, as any there) */
		if (header || !ctx->skip_keys)
			ctx_error(ctx, -EINVAL, "Invalid line: contains a NUL byte");
		/* a section header: the keys after it belong to no section
		 * caad knows, said once (as for any bad header) */
		if (header)
			ctx->skip_keys = true;
		str[0] = '\0';
		return str;
	}
	if (ctx->line == 1 && strncmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3; /* UTF-8 BOM */
	p += strspn(p, WHITESPACE);
	e = p + strlen(p);
	while (e > p && strchr(WHITESPACE, e[-1]))
		e--;
	*e = '\0';

	if (!line_ok(ctx, p, (size_t)(e - p), num)) {
		str[0] = '\0';
		return str;
	}
	if (e - p >= num) {
		handle_long(ctx, p);
		str[0] = '\0';
		return str;
	}
	memcpy(str, p, (size_t)(e - p) + 1);
	return str;
}

static int handle_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;
	const struct config_key *k = NULL;
	char why[256] = "";
	int r;

	if (ctx->skip_keys)
		return 1;
	if (!section || !*section)
		return ctx_error(ctx, -EINVAL, "Assignment '%s=' outside of any section", name);

	for (size_t i = 0; i < ARRAY_SIZE(config_keys); i++)
		if (streq(config_keys[i].section, section) && streq(config_keys[i].name, name)) {
			k = &config_keys[i];
			break;
		}
	if (!k)
		return ctx_error(ctx, -EINVAL, "Unknown key '%s' in section [%s]", name, section);

	r = k->parse(k, ctx->config, value, why, sizeof(why));
	if (r == -ENOMEM)
		return ctx_error(ctx, r, "Out of memory");
	if (r < 0)
		/* a long value cut (65535 characters fit): the reason must show */
		return ctx_error(ctx, -EINVAL, "Invalid %s= value '%.80s%s': %s", name, value,
		                 strlen(value) > 80 ? "..." : "", why);
	return 1;
}

/* Parse the open stream f; path names it in messages. */
static int parse_stream(struct caad_config *c, FILE *f, const char *path)
{
	struct parse_ctx ctx = { .config = c, .path = path, .f = f };
	int r;

	r = ini_parse_stream(read_line, &ctx, handle_key, &ctx);
	free(ctx.buf);

	if (ctx.read_errno)
		return config_error(c, ctx.read_errno, "Failed to read %s: %m", path);
	if (r == -2)
		return log_oom();
	if (r > 0 && ctx.r == 0) {
		/* inih refused a line our reader let through */
		ctx.line = (unsigned)r;
		ctx_error(&ctx, -EINVAL, "Syntax error");
	}
	return ctx.r;
}

int caad_config_parse_file(struct caad_config *c, const char *path)
{
	_cleanup_(fclosep) FILE *f = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;

	assert(c);
	assert(path);

	/* O_NONBLOCK: a FIFO there must not hold the start up (a regular
	 * file reads as before) */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT; /* whether that is an error is the caller's call */
		return config_error(c, errno, "Failed to open %s: %m", path);
	}
	if (fstat(fd, &st) < 0)
		return config_error(c, errno, "Failed to stat %s: %m", path);
	if (S_ISDIR(st.st_mode))
		return config_error(c, EISDIR, "Failed to read %s: %m", path);
	/* a device or a FIFO: /dev/zero would be one endless line; but
	 * /dev/null, "no configuration" (--config=/dev/null), reads as empty */
	if (!S_ISREG(st.st_mode) && !(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))
		return config_error(c, EINVAL, "Failed to read %s: not a regular file", path);
	f = fdopen(fd, "re");
	if (!f)
		return config_error(c, errno, "Failed to read %s: %m", path);
	(void)TAKE_FD(fd); /* f's now */

	return parse_stream(c, f, path);
}

int caad_config_parse_string(struct caad_config *c, const char *text, size_t len, const char *name)
{
	_cleanup_(fclosep) FILE *f = NULL;

	assert(c);
	assert(text || len == 0);
	assert(name);

	if (len == 0)
		return 0; /* an empty file; and fmemopen(NULL, 0) would fail */
	f = fmemopen((void *)text, len, "r"); /* "r": the buffer is only read */
	if (!f)
		return config_error(c, errno, "Failed to read %s: %m", name);
	return parse_stream(c, f, name);
}

/* *.conf, not hidden, a regular file (through a symlink, too). */
static bool dropin_name(DIR *d, const struct dirent *de)
{
	size_t n = strlen(de->d_name);
	struct stat st;

	if (de->d_name[0] == '.' || n <= strlen(".conf") || !streq(de->d_name + n - strlen(".conf"), ".conf"))
		return false;
	if (de->d_type == DT_REG)
		return true;
	if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
		return false;
	return fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISREG(st.st_mode);
}

static int strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the *.conf files in dir, sorted bytewise. A missing dir is empty. */
static int list_dropins(struct caad_config *c, const char *dir, char ***ret, size_t *ret_n)
{
	_cleanup_(closedirp) DIR *d = NULL;
	_cleanup_(strv_freep) char **l = NULL;
	size_t n = 0;

	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			return config_error(c, errno, "Failed to open %s: %m", dir);
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}

	for (;;) {
		struct dirent *de;
		char **nl;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				return config_error(c, errno, "Failed to read %s: %m", dir);
			break;
		}
		if (!dropin_name(d, de))
			continue;

		nl = realloc(l, (n + 2) * sizeof(char *));
		if (!nl)
			return log_oom();
		l = nl;
		l[n] = strdup(de->d_name);
		l[n + 1] = NULL;
		if (!l[n])
			return log_oom();
		n++;
	}

	if (n > 0)
		qsort(l, n, sizeof(char *), strcmp_ptr);
	*ret = TAKE_PTR(l);
	*ret_n = n;
	return 0;
}

/* Parse one file of the stack: missing is fine. Returns the first error. */
static int load_one(struct caad_config *c, const char *root, const char *path, int ret)
{
	_cleanup_free_ char *p = NULL;
	int r;

	if (caad_path(&p, root, "%s", path) < 0)
		return ret ?: log_oom();
	r = caad_config_parse_file(c, p);
	if (r == -ENOENT)
		return ret;
	if (r == 0)
		log_debug("Read %s", p);
	return ret ?: r;
}

int caad_config_load(struct caad_config *c, const char *explicit_path)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_(strv_freep) char **names = NULL;
	const char *root;
	size_t n = 0;
	int r, ret = 0;

	assert(c);

	if (explicit_path) {
		r = caad_config_parse_file(c, explicit_path);
		if (r == -ENOENT)
			return config_error(c, r, "Failed to open %s: %m", explicit_path);
		return r;
	}

	/* For tests and images: read the stack below this directory. */
	root = secure_getenv("CAAD_CONF_ROOT");

	/* Go on after an error, so that one run reports all of them. */
	ret = load_one(c, root, CAAD_VENDORDIR "/caad.conf", ret);
	ret = load_one(c, root, CAAD_SYSCONFDIR "/caad.conf", ret);

	if (caad_path(&dir, root, "%s", CAAD_SYSCONFDIR "/caad.conf.d") < 0)
		return log_oom();
	r = list_dropins(c, dir, &names, &n);
	if (r < 0)
		return ret ?: r;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *p = NULL;

		if (asprintf(&p, "%s/%s", dir, names[i]) < 0)
			return ret ?: log_oom();
		ret = load_one(c, NULL, p, ret);
	}
	return ret;
}
