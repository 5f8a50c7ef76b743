/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Placement: a pure, deterministic function from topology + requests +
 * current placement to a new placement. No I/O, no allocation visible to the
 * caller beyond the results array, so that it is table-testable and fast.
 */

#include <stdbool.h>
#include <stddef.h>

#include "cpuset.h"
#include "topology.h"

enum group_state {
        GROUP_PENDING,
        GROUP_PLACED,
        GROUP_ERROR,
        GROUP_WAITING,  /* never from placement: placed, and apply waits for systemd to confine it */
};

enum placement_pref {
        PREF_PACK,      /* fill partly used containers first, keep whole ones free */
        PREF_SPREAD,    /* one span at a time to the package with most room */
};

struct placement_request {
        const char *name;
        int level;                      /* >= 1 */
        unsigned spans;                 /* > 0: this many spans of the level ... */
        unsigned cpus;                  /* ... or > 0: whole spans adding up to at least this many CPUs */
        const struct cpuset *allowed;   /* NULL: any CPU */
        enum placement_pref pref;
        int priority;                   /* higher is placed first */
        const struct cpuset *current;   /* where the group is now; NULL: nowhere */
        const char *error;              /* set: the request could not be formed */
        const char *absent;             /* set: the group's cgroup is missing: pending with this reason, no CPUs */
};

struct placement_result {
        enum group_state state;
        struct cpuset cpus;
        int nspans;
        bool moved;                     /* placed, but not where it was */
        char reason[320];
};

struct placement_options {
        const struct cpuset *reserved;  /* never handed out; NULL: none */
        bool repack;                    /* may move placed groups to fit a pending one */
};

/* Fills out[i] for r[i]. Returns 0, or -ENOMEM. */
int placement_compute(const struct topology *t, const struct placement_options *o,
                      size_t n, const struct placement_request *r, struct placement_result *out);

const char *group_state_to_string(enum group_state s);
