/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"

/*
 * The span tree. levels[0] holds one span per online CPU; levels[1..] are
 * the kernel's coscheduling levels (or, on a kernel without them, levels
 * derived from the CPU topology so that it can at least be shown). Every
 * level partitions the online CPUs and nests in the level above; spans are
 * sorted by, and named after, their lowest CPU.
 */

#define TOPO_MAX_LEVELS 16

struct topo_span {
        struct cpuset cpus;
        int first;      /* lowest CPU: the span's name */
        int ncpus;
        int parent;     /* index in the level above, -1 at the top */
        int *children;  /* indexes in the level below */
        int nchildren;
};

struct topo_level {
        char name[32];
        int nspans;
        struct topo_span *spans;
        int *span_of;   /* CPU id -> span index, -1 if offline; ncpu_ids long */
        int max_span_cpus;
        bool uniform;   /* all spans have max_span_cpus CPUs */
};

struct topology {
        int nlevels;    /* including level 0 */
        struct topo_level levels[TOPO_MAX_LEVELS];
        struct cpuset online;
        int ncpu_ids;   /* highest online CPU + 1 */
        bool kernel;    /* levels come from /sys/kernel/cosched */
        int max_level;  /* highest level cpu.scheduled accepts */
        char unavailable[256]; /* why coscheduling is refused; "" if it is not */
        /* Levels matching the hardware partitions, -1 if none does. */
        int smt_level;
        int llc_level;
        int package_level;
};

/* The raw material a topology is built from; also what tests write by hand. */
struct topo_input {
        bool kernel;
        int max_level;
        int nlevels;                    /* levels 1..nlevels */
        const char *names[TOPO_MAX_LEVELS];
        const char *spans[TOPO_MAX_LEVELS]; /* one cpulist per line */
        const char *online;             /* cpulist; NULL = union of level 1 */
        const char *smt_part;           /* hardware partitions, lines of cpulists, may be NULL */
        const char *llc_part;
        const char *pkg_part;
};

int topology_build(const struct topo_input *in, struct topology *ret, char *err, size_t errlen);
/* Read /sys/kernel/cosched, falling back to /sys/devices/system/cpu. */
int topology_load(const char *sysfs_root, struct topology *ret, char *err, size_t errlen);
void topology_free(struct topology *t);
bool topology_equal(const struct topology *a, const struct topology *b);

/* Is spec a level name or number the config may use? (No topology needed.) */
bool topology_level_spec_valid(const char *spec);
/* Map "core", "package", "llc", "mc", "2"... to a level of t. */
int topology_resolve_level(const struct topology *t, const char *spec, int *level, char *err, size_t errlen);
