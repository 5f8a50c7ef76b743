/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The checkpoint in /run/coschedd/state: what the daemon decided and
 * applied, one group per line. The daemon reads it back on restart (groups
 * stay where they are) and coschedctl reads it for status and verify.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "cpuset.h"
#include "placement.h"
#include "strindex.h"

#define STATE_FILE "state"

struct state_entry {
        char name[256];                 /* a group name, or a unit's (up to 255 bytes) */
        enum group_kind kind;
        char target[1025];
        int level;                      /* 0 if unresolved */
        char level_name[32];
        enum group_state state;
        struct cpuset cpus;             /* placed CPUs (also kept for error after placement) */
        char cgroup[1025];              /* the cgroup written to, relative to the cgroup root; "" unknown */
        char reason[320];
        uint64_t waiting_since;         /* daemon only, not checkpointed: CLOCK_MONOTONIC usec when it began to
                                         * wait for systemd's confinement; 0 if not waiting */
        bool asking;                    /* daemon only: systemd was asked, has not answered */
        char note[160];                 /* daemon only: the reason of a placed group (CPUs= rounding) */
        bool weight_ours;               /* a unit whose CPUWeight=100 this daemon set (it had none): its
                                         * release resets it, also after a restart ("weight-ours" line) */
};

struct state {
        struct state_entry *e;
        size_t n;
        struct cpuset reserved;         /* [daemon] ReservedCPUs= in force */
        struct strindex by_name;        /* name -> index in e, once e is complete (state_index) */
};

int state_write(const char *dir, const struct state *s);
/* Missing file: empty state, returns 0. */
int state_read(const char *dir, struct state *s);
void state_free(struct state *s);
/* Index the entries by name, once e no longer moves; -ENOMEM leaves
 * state_find on a linear search. state_read indexes what it read. */
int state_index(struct state *s);
struct state_entry *state_find(const struct state *s, const char *name);
