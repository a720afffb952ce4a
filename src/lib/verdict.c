/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Remembered verdicts of closed-loop trials (STATE_DIR/verdicts.json). */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caad/flow.h"
#include "caad/json.h"
#include "caad/macro.h"
#include "caad/sysfs.h"
#include "caad/utf8.h"
#include "caad/verdict.h"

#define VERDICTS_VERSION 1

/* The lowest present CPU of group i of groups (UINT64_MAX: none), to hash. */
static uint64_t group_cpu(const struct caad_cpuset_group *groups, unsigned n, int i)
{
	return i >= 0 && (unsigned)i < n ? (uint64_t)caad_cpumask_next(&groups[i].cpus, 0) : UINT64_MAX;
}

/*
 * A hash of where each present CPU is: its core and LLC, named by their
 * lowest CPU (caad numbers them in hwloc's order, which names nothing:
 * the grouping is what a verdict's relation depends on), its package and
 * NUMA node by their OS numbers. Two machines with as many of each but
 * SMT siblings numbered otherwise (n and n+1, or n and n+12) differ here.
 */
static uint64_t places_hash(const struct caad_topology *t, const uint8_t key[16])
{
	uint64_t h = 0;

	CAAD_CPUMASK_FOREACH(cpu, &t->present) {
		const struct caad_cpu *c;

		if ((unsigned)cpu >= t->n_cpus)
			break;
		c = &t->cpus[cpu];
		uint64_t x[6] = {
			h,
			(uint64_t)cpu,
			group_cpu(t->cores, t->n_cores, c->core),
			group_cpu(t->llcs, t->n_llcs, c->llc),
			c->package >= 0 && (unsigned)c->package < t->n_packages ? t->packages[c->package].os_index : UINT64_MAX,
			(uint64_t)(int64_t)c->numa,
		};
		h = caad_siphash24(key, x, sizeof(x));
	}
	return h;
}

void caad_topology_fingerprint(const struct caad_topology *t, char *buf, size_t size)
{
	static const uint8_t key[16]; /* a fixed key: the same text run after run */
	char usable[40];

	/* a list too long to show (every other CPU of 128, say): its count
	 * and a hash of the mask, so that another set of as many CPUs reads
	 * otherwise too (40 bytes: with the rest, the text fits in the 128
	 * bytes a store's "topology" holds for counts of up to 4 digits) */
	if (caad_cpumask_format_list(&t->usable, usable, sizeof(usable)) < 0)
		snprintf(usable, sizeof(usable), "%u#%016" PRIx64, caad_cpumask_count(&t->usable),
		         caad_siphash24(key, t->usable.w, sizeof(t->usable.w)));
	snprintf(buf, size, "cpus=%u cores=%u llcs=%u packages=%u numa=%u usable=%s places=%016" PRIx64, t->n_cpus,
	         t->n_cores, t->n_llcs, t->n_packages, t->n_numas, usable, places_hash(t, key));
}

void caad_verdicts_done(struct caad_verdicts *vs)
{
	free(vs->v);
	vs->v = NULL;
	vs->n = 0;
}

static int relation_from_string(const char *s, enum caad_relation *ret)
{
	for (enum caad_relation r = 0; r < _CAAD_RELATION_COUNT; r++)
		if (streq(caad_relation_to_string(r), s)) {
			*ret = r;
			return 0;
		}
	return -EINVAL;
}

static void copy_name(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/*
 * An interface, driver or thread name as a verdict keeps it, and as it is
 * looked for: as ListFlows and GetTrials show it (caad_utf8_sanitize(),
 * '?' for each byte that is not UTF-8 and each control), whatever bytes
 * the kernel gave. Kept raw, such a byte would be written as "\ufffd",
 * three bytes: a 15-byte comm would read back as 17 (the whole file
 * refused), a shorter one as a name no thread has. Its length is src's:
 * false when that does not fit in size bytes.
 */
static bool key_name(char *dst, size_t size, const char *src)
{
	if (strlen(src ?: "") >= size)
		return false;
	copy_name(dst, size, src);
	caad_utf8_sanitize(dst, false);
	return true;
}

/* A JSON string that fits in size bytes with its NUL, and holds no NUL of
 * its own ("eth0\u0000x" would be cut to another name) */
static bool short_string(json_object *x, size_t size)
{
	int len;

	if (!json_object_is_type(x, json_type_string))
		return false;
	len = json_object_get_string_len(x);
	return len >= 0 && (size_t)len < size && strlen(json_object_get_string(x)) == (size_t)len;
}

/* One entry of "verdicts"; -EBADMSG with *why set when it is malformed. */
static int parse_one(json_object *o, struct caad_verdict *v, const char **why)
{
	json_object *x;

	*v = (struct caad_verdict){};
	if (!json_object_is_type(o, json_type_object))
		return (*why = "an entry is not an object"), -EBADMSG;
	if (!json_object_object_get_ex(o, "iface", &x) || !short_string(x, sizeof(v->iface)) ||
	    json_object_get_string_len(x) == 0)
		return (*why = "\"iface\" missing or not a short string"), -EBADMSG;
	(void)key_name(v->iface, sizeof(v->iface), json_object_get_string(x));
	if (!json_object_object_get_ex(o, "comm", &x) || !short_string(x, sizeof(v->comm)))
		return (*why = "\"comm\" missing, longer than 15 bytes or with a NUL"), -EBADMSG;
	(void)key_name(v->comm, sizeof(v->comm), json_object_get_string(x));
	if (json_object_object_get_ex(o, "driver", &x)) {
		if (!short_string(x, sizeof(v->driver)))
			return (*why = "\"driver\" is not a short string"), -EBADMSG;
		(void)key_name(v->driver, sizeof(v->driver), json_object_get_string(x));
	}
	if (!json_object_object_get_ex(o, "relation", &x) || !json_object_is_type(x, json_type_string) ||
	    relation_from_string(json_object_get_string(x), &v->relation) < 0 ||
	    v->relation == CAAD_RELATION_UNSTEERED)
		return (*why = "\"relation\" missing or not a relation caad places on"), -EBADMSG;
	if (!json_object_object_get_ex(o, "decided", &x) || !json_object_is_type(x, json_type_int) ||
	    json_object_get_int64(x) < 0)
		return (*why = "\"decided\" missing or not a time in seconds"), -EBADMSG;
	v->decided_sec = (uint64_t)json_object_get_int64(x);
	/* the figures are for people: kept when they are finite numbers (json-c
	 * reads 1e999 and Infinity as doubles, which JSON cannot write back) */
	if (json_object_object_get_ex(o, "goodput_ratio", &x) && json_object_is_type(x, json_type_double) &&
	    isfinite(json_object_get_double(x)))
		v->goodput_ratio = json_object_get_double(x);
	if (json_object_object_get_ex(o, "efficiency_ratio", &x) && json_object_is_type(x, json_type_double) &&
	    isfinite(json_object_get_double(x)))
		v->efficiency_ratio = json_object_get_double(x);
	if (json_object_object_get_ex(o, "pairs", &x) && json_object_is_type(x, json_type_int))
		v->pairs = (unsigned)MIN(MAX(json_object_get_int64(x), 0), 1000000);
	if (json_object_object_get_ex(o, "wins", &x) && json_object_is_type(x, json_type_int))
		v->wins = (unsigned)MIN(MAX(json_object_get_int64(x), 0), 1000000);
	v->behind = -1;
	if (json_object_object_get_ex(o, "behind", &x) && json_object_is_type(x, json_type_int))
		v->behind = (int)MIN(MAX(json_object_get_int64(x), 0), 1000000);
	if (json_object_object_get_ex(o, "trial", &x) && json_object_is_type(x, json_type_int))
		v->trial = (unsigned)MIN(MAX(json_object_get_int64(x), 0), 1000000000);
	/* whose figures: both known, or neither */
	if (json_object_object_get_ex(o, "alternative", &x) && json_object_is_type(x, json_type_string) &&
	    relation_from_string(json_object_get_string(x), &v->alternative) >= 0 &&
	    json_object_object_get_ex(o, "kept_prior", &x) && json_object_is_type(x, json_type_boolean))
		v->kept_prior = json_object_get_boolean(x);
	else
		v->alternative = CAAD_RELATION_UNSTEERED;
	/* missing: a store of a caad whose trials ended when the reader
	 * moved: read as decided for a pinned reader (verdict.h) */
	if (json_object_object_get_ex(o, "pinned", &x)) {
		if (!json_object_is_type(x, json_type_boolean))
			return (*why = "\"pinned\" is not true or false"), -EBADMSG;
		v->unpinned = !json_object_get_boolean(x);
	}
	return 0;
}

/* Past its age (1), dated ahead of the clock by more than a minute (2), or 0. */
static int expired(const struct caad_verdict *v, uint64_t now_sec, uint64_t max_age_sec)
{
	if (!max_age_sec)
		return 0;
	if (v->decided_sec > now_sec + 60)
		return 2;
	return now_sec - MIN(now_sec, v->decided_sec) > max_age_sec;
}

int caad_verdicts_load(const char *path, const char *kernel, const char *topology, uint64_t now_sec,
                       uint64_t max_age_sec, struct caad_verdicts *ret, size_t *ret_dropped, char **ret_why)
{
	_cleanup_free_ char *text = NULL, *syntax = NULL;
	json_object *root = NULL, *x, *list;
	const char *why = NULL, *kind = NULL;
	size_t n, dropped = 0, bad_entry = SIZE_MAX;
	int r;

	*ret = (struct caad_verdicts){};
	copy_name(ret->kernel, sizeof(ret->kernel), kernel);
	copy_name(ret->topology, sizeof(ret->topology), topology);
	if (ret_dropped)
		*ret_dropped = 0;
	if (ret_why)
		*ret_why = NULL;

	/* not a regular file (a FIFO there would hold caad in open() for
	 * good): a store that cannot be used, as one that is not JSON */
	r = caad_read_own_file(path, &text, &kind);
	if (r == -ENOENT)
		return 0;
	if (r == -EBADFD && kind) {
		if (ret_why && asprintf(ret_why, "%s: %s, not a regular file", path, kind) < 0)
			*ret_why = NULL;
		return -EBADMSG;
	}
	/* a NUL byte, which no JSON text holds (the reader refuses it) */
	if (r == -EBADMSG) {
		if (ret_why && asprintf(ret_why, "%s: invalid JSON: a NUL byte", path) < 0)
			*ret_why = NULL;
		return r;
	}
	if (r < 0)
		return r;
	/* its text as JSON first: an error there names its line and column */
	r = caad_json_parse_text(text, strlen(text), path, &root, &syntax);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		if (ret_why)
			*ret_why = TAKE_PTR(syntax);
		return -EBADMSG;
	}
	if (!json_object_is_type(root, json_type_object)) {
		why = "not a JSON object";
		goto bad;
	}
	if (!json_object_object_get_ex(root, "version", &x) || !json_object_is_type(x, json_type_int) ||
	    json_object_get_int64(x) != VERDICTS_VERSION) {
		why = "\"version\" is not 1";
		goto bad;
	}
	if (!json_object_object_get_ex(root, "verdicts", &list) || !json_object_is_type(list, json_type_array)) {
		why = "\"verdicts\" is not an array";
		goto bad;
	}
	n = json_object_array_length(list);
	/* a different kernel or machine: nothing said about it holds */
	if (!json_object_object_get_ex(root, "kernel", &x) || !streq(json_object_get_string(x) ?: "", kernel)) {
		if (ret_why && asprintf(ret_why, "decided under kernel %s, running %s",
		                        x ? json_object_get_string(x) : "(unknown)", kernel) < 0)
			*ret_why = NULL;
		dropped = n;
		goto done;
	}
	if (!json_object_object_get_ex(root, "topology", &x) || !streq(json_object_get_string(x) ?: "", topology)) {
		if (ret_why && asprintf(ret_why, "decided on topology \"%s\", now \"%s\"",
		                        x ? json_object_get_string(x) : "(unknown)", topology) < 0)
			*ret_why = NULL;
		dropped = n;
		goto done;
	}
	ret->v = calloc(n ? n : 1, sizeof(*ret->v));
	if (!ret->v) {
		json_object_put(root);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct caad_verdict *v = &ret->v[ret->n];

		r = parse_one(json_object_array_get_idx(list, i), v, &why);
		/* one bad entry refuses the whole file (caad(8)), not just
		 * itself: caad alone writes the store, whole and atomically,
		 * and every name it keeps reads back, so an entry it cannot
		 * read was written by someone else (by hand, another caad);
		 * the file is put aside as it is, to be mended, rather than
		 * half used and written anew without that entry at the next
		 * verdict */
		if (r < 0) {
			caad_verdicts_done(ret);
			bad_entry = i;
			goto bad;
		}
		/* one dated ahead of the clock is kept (the clock may be
		 * behind, before NTP): not used until the clock reaches it,
		 * and not lost from the file at the next save */
		if (expired(v, now_sec, max_age_sec) == 1)
			dropped++;
		else
			ret->n++;
	}
	if (dropped && ret_why && asprintf(ret_why, "older than %" PRIu64 " s", max_age_sec) < 0)
		*ret_why = NULL;
done:
	json_object_put(root);
	if (ret_dropped)
		*ret_dropped = dropped;
	return 0;
bad:
	json_object_put(root);
	/* an entry is named by its place, as the file's reader counts them */
	if (ret_why && (bad_entry == SIZE_MAX ? asprintf(ret_why, "%s: %s", path, why)
	                                      : asprintf(ret_why, "%s: verdicts[%zu]: %s", path, bad_entry, why)) < 0)
		*ret_why = NULL;
	return -EBADMSG;
}

/* JSON has no infinity or NaN: such a figure is written as not known (0) */
static double finite_or_0(double x)
{
	return isfinite(x) ? x : 0;
}

int caad_verdicts_format(const struct caad_verdicts *vs, FILE *f)
{
	fprintf(f, "{\"version\": %d, \"kernel\": ", VERDICTS_VERSION);
	caad_json_string(f, vs->kernel);
	fputs(", \"topology\": ", f);
	caad_json_string(f, vs->topology);
	fputs(", \"verdicts\": [", f);
	for (size_t i = 0; i < vs->n; i++) {
		const struct caad_verdict *v = &vs->v[i];

		fputs(i ? ",\n  {\"iface\": " : "\n  {\"iface\": ", f);
		caad_json_string(f, v->iface);
		fputs(", \"driver\": ", f);
		caad_json_string(f, v->driver);
		fputs(", \"comm\": ", f);
		caad_json_string(f, v->comm);
		fprintf(f, ", \"pinned\": %s", v->unpinned ? "false" : "true");
		fprintf(f,
		        ", \"relation\": \"%s\", \"decided\": %" PRIu64 ", \"trial\": %u, \"goodput_ratio\": %.4f, "
		        "\"efficiency_ratio\": %.4f, \"pairs\": %u, \"wins\": %u",
		        caad_relation_to_string(v->relation), v->decided_sec, v->trial, finite_or_0(v->goodput_ratio),
		        finite_or_0(v->efficiency_ratio), v->pairs, v->wins);
		if (v->behind >= 0)
			fprintf(f, ", \"behind\": %d", v->behind);
		/* not known for one of an earlier caad's store: not said */
		if (v->alternative != CAAD_RELATION_UNSTEERED)
			fprintf(f, ", \"alternative\": \"%s\", \"kept_prior\": %s",
			        caad_relation_to_string(v->alternative), v->kept_prior ? "true" : "false");
		fputc('}', f);
	}
	fputs(vs->n ? "\n]}\n" : "]}\n", f);
	return ferror(f) ? -EIO : 0;
}

int caad_verdicts_save(struct caad_verdicts *vs, const char *path)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	if (!f)
		return -ENOMEM;
	r = caad_verdicts_format(vs, f);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0)
		return r;
	r = caad_write_file_atomic(path, buf, len, 0644);
	if (r < 0)
		return r;
	for (size_t i = 0; i < vs->n; i++)
		vs->v[i].unsaved = false;
	return 0;
}

static void drop(struct caad_verdicts *vs, size_t i)
{
	memmove(&vs->v[i], &vs->v[i + 1], (vs->n - i - 1) * sizeof(*vs->v));
	vs->n--;
}

const struct caad_verdict *caad_verdicts_find(struct caad_verdicts *vs, const char *iface, const char *driver,
                                              const char *comm, bool unpinned, uint64_t now_sec,
                                              uint64_t max_age_sec, bool *ret_ahead)
{
	char key_iface[CAAD_VERDICT_NAME_MAX], key_driver[CAAD_VERDICT_NAME_MAX], key_comm[CAAD_COMM_LEN];

	if (ret_ahead)
		*ret_ahead = false;
	if (!key_name(key_iface, sizeof(key_iface), iface) || !key_name(key_comm, sizeof(key_comm), comm))
		return NULL; /* too long for a verdict's: none has it */
	/* one too long is another than any verdict's */
	bool driver_fits = key_name(key_driver, sizeof(key_driver), driver);

	for (size_t i = 0; i < vs->n; i++) {
		struct caad_verdict *v = &vs->v[i];

		if (!streq(v->iface, key_iface) || !streq(v->comm, key_comm) || v->unpinned != unpinned)
			continue;
		int r = expired(v, now_sec, max_age_sec);

		if (!driver_fits || !streq(v->driver, key_driver) || r == 1) {
			drop(vs, i);
			return NULL;
		}
		if (r == 2) { /* ahead of the clock: kept, not used */
			if (ret_ahead)
				*ret_ahead = true;
			return NULL;
		}
		return v;
	}
	return NULL;
}

size_t caad_verdicts_expire(struct caad_verdicts *vs, uint64_t now_sec, uint64_t max_age_sec)
{
	size_t n = 0;

	for (size_t i = vs->n; i-- > 0;)
		if (expired(&vs->v[i], now_sec, max_age_sec) == 1) {
			drop(vs, i);
			n++;
		}
	return n;
}

size_t caad_verdicts_ahead(const struct caad_verdicts *vs, uint64_t now_sec, uint64_t max_age_sec)
{
	size_t n = 0;

	for (size_t i = 0; i < vs->n; i++)
		n += expired(&vs->v[i], now_sec, max_age_sec) == 2;
	return n;
}

int caad_verdicts_put(struct caad_verdicts *vs, const struct caad_verdict *v)
{
	struct caad_verdict key = *v, *nv;

	/* as key_name() makes them (in place: the same length) */
	caad_utf8_sanitize(key.iface, false);
	caad_utf8_sanitize(key.driver, false);
	caad_utf8_sanitize(key.comm, false);
	key.unsaved = true;
	for (size_t i = 0; i < vs->n; i++)
		if (streq(vs->v[i].iface, key.iface) && streq(vs->v[i].comm, key.comm) &&
		    vs->v[i].unpinned == key.unpinned) {
			vs->v[i] = key;
			return 0;
		}
	nv = realloc(vs->v, (vs->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	vs->v = nv;
	vs->v[vs->n++] = key;
	return 0;
}

size_t caad_verdicts_keep_unsaved(struct caad_verdicts *vs)
{
	for (size_t i = vs->n; i-- > 0;)
		if (!vs->v[i].unsaved)
			drop(vs, i);
	return vs->n;
}
