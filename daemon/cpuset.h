/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fixed-size CPU bitmap. Fixed size keeps placement allocation-free and
 * copyable by assignment; 8192 matches the largest NR_CPUS Debian ships.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CPUSET_MAX 8192
#define CPUSET_WORDS (CPUSET_MAX / 64)

struct cpuset {
        uint64_t w[CPUSET_WORDS];
};

static inline void cpuset_zero(struct cpuset *s) {
        for (size_t i = 0; i < CPUSET_WORDS; i++)
                s->w[i] = 0;
}

static inline void cpuset_set(struct cpuset *s, int cpu) {
        s->w[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

static inline void cpuset_clear(struct cpuset *s, int cpu) {
        s->w[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

static inline bool cpuset_test(const struct cpuset *s, int cpu) {
        return cpu >= 0 && cpu < CPUSET_MAX && (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

int cpuset_count(const struct cpuset *s);
bool cpuset_empty(const struct cpuset *s);
bool cpuset_equal(const struct cpuset *a, const struct cpuset *b);
bool cpuset_subset(const struct cpuset *a, const struct cpuset *b); /* a ⊆ b */
bool cpuset_intersects(const struct cpuset *a, const struct cpuset *b);
void cpuset_or(struct cpuset *d, const struct cpuset *s);
void cpuset_and(struct cpuset *d, const struct cpuset *s);
void cpuset_andnot(struct cpuset *d, const struct cpuset *s);
/* First CPU >= from in s, or -1. */
int cpuset_next(const struct cpuset *s, int from);
int cpuset_last(const struct cpuset *s);

/* Parse a kernel cpulist ("0-3,8,10-11", surrounding whitespace allowed,
 * empty = empty set). Returns 0 or -EINVAL / -ERANGE. */
int cpuset_parse(const char *text, struct cpuset *ret);
/* Format as a compact cpulist; "" for the empty set. Returns buf. */
char *cpuset_format(const struct cpuset *s, char *buf, size_t len);

#define CPUSET_FOREACH(cpu, s) \
        for (int cpu = cpuset_next((s), 0); cpu >= 0; cpu = cpuset_next((s), cpu + 1))
