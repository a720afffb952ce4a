/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "caad/macro.h"

/*
 * A fixed-size CPU set, indexed by OS CPU number (hwloc's P#). Fixed size
 * keeps masks copyable by value and free of allocation in the planner.
 */
#define CAAD_CPUS_MAX 4096
#define CAAD_CPUMASK_WORDS (CAAD_CPUS_MAX / 64)

struct caad_cpumask {
	uint64_t w[CAAD_CPUMASK_WORDS];
};

static inline void caad_cpumask_zero(struct caad_cpumask *m)
{
	for (size_t i = 0; i < CAAD_CPUMASK_WORDS; i++)
		m->w[i] = 0;
}

static inline bool caad_cpumask_test(const struct caad_cpumask *m, unsigned cpu)
{
	return cpu < CAAD_CPUS_MAX && (m->w[cpu / 64] >> (cpu % 64)) & 1;
}

static inline void caad_cpumask_set(struct caad_cpumask *m, unsigned cpu)
{
	if (cpu < CAAD_CPUS_MAX)
		m->w[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

static inline void caad_cpumask_clear(struct caad_cpumask *m, unsigned cpu)
{
	if (cpu < CAAD_CPUS_MAX)
		m->w[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

bool caad_cpumask_equal(const struct caad_cpumask *a, const struct caad_cpumask *b) _pure_;
bool caad_cpumask_empty(const struct caad_cpumask *m) _pure_;
unsigned caad_cpumask_count(const struct caad_cpumask *m) _pure_;
/* First set CPU >= from, or -1. */
int caad_cpumask_next(const struct caad_cpumask *m, int from) _pure_;
void caad_cpumask_and(struct caad_cpumask *dst, const struct caad_cpumask *a, const struct caad_cpumask *b);
void caad_cpumask_or(struct caad_cpumask *dst, const struct caad_cpumask *a, const struct caad_cpumask *b);
void caad_cpumask_andnot(struct caad_cpumask *dst, const struct caad_cpumask *a, const struct caad_cpumask *b);

#define CAAD_CPUMASK_FOREACH(cpu, m) \
	for (int cpu = caad_cpumask_next((m), 0); cpu >= 0; cpu = caad_cpumask_next((m), cpu + 1))

/* "0-3,8,10-11" (cpulist, as smp_affinity_list). Empty string is the empty set.
 * Returns 0 or -EINVAL (syntax) / -ERANGE (CPU >= CAAD_CPUS_MAX). *ret untouched on error. */
int caad_cpumask_parse_list(const char *s, struct caad_cpumask *ret);
/* The CPU affinity of task (a thread id) into *ret (sched_getaffinity():
 * no access to its /proc/PID needed). Returns 0 or -errno. */
int caad_cpumask_of_task(int task, struct caad_cpumask *ret);
/* Set the CPU affinity of task (a thread id, 0: the caller) to m
 * (sched_setaffinity()). Returns 0 or -errno (-EINVAL: none of m active). */
int caad_cpumask_set_task(int task, const struct caad_cpumask *m);
/* The CPUs a task may run on as set: Cpus_allowed_list of the
 * /proc/PID[/task/TID]/status file at path (sched_getaffinity() leaves out
 * the CPUs not active now). Returns 0, -ENODATA (no such line), or the
 * read's or the list's error. */
int caad_cpumask_of_status(const char *path, struct caad_cpumask *ret);
/* Hex bitmap with optional comma-separated 32-bit groups, as rps_cpus and
 * smp_affinity: "00000000,00000003", "3", "0". */
int caad_cpumask_parse_hex(const char *s, struct caad_cpumask *ret);
/* Format as a cpulist ("" for the empty set). Returns length or -ENOBUFS. */
int caad_cpumask_format_list(const struct caad_cpumask *m, char *buf, size_t size);
/* A buffer every cpulist of CAAD_CPUS_MAX CPUs fits in, NUL included: the
 * longest per CPU is a run of two and a gap, "4093-4094," (10 bytes per 3
 * CPUs); 4 bytes a CPU is more. */
#define CAAD_CPULIST_MAX (CAAD_CPUS_MAX * 4)
/* Format as the kernel prints rps_cpus for nbits CPUs: comma-separated
 * 32-bit groups of 8 hex digits, the last group trimmed to the bits needed.
 * Returns length or -ENOBUFS. */
int caad_cpumask_format_hex(const struct caad_cpumask *m, unsigned nbits, char *buf, size_t size);
