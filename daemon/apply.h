/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Apply: make the cgroups say what placement decided. Order matters, as the
 * kernel does not load-balance a coscheduled group: confine first, then set
 * cpu.scheduled; on removal 0 first, then widen.
 */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

#include "config.h"
#include "cpuset.h"

struct apply_ctx {
        const char *cgroup_root;
        sd_bus *bus;            /* NULL: units cannot be confined */
};

enum apply_result {
        APPLIED,
        APPLIED_WAITING,        /* confined via systemd; the unit has no cgroup yet */
        APPLIED_CONFINING,      /* AllowedCPUs= asked for, cpuset.cpus does not show it yet: not
                                 * coscheduled; err says why, apply_confined() finishes the job */
};

/* cg: the cgroup used, returned (relative to the root). Returns
 * enum apply_result or -errno with err filled. Never waits: PID 1 realizes
 * AllowedCPUs= when it gets to it, and the caller's event loop must go on. */
int apply_place(const struct apply_ctx *a, enum group_kind kind, const char *target, int level,
                const struct cpuset *cpus, bool moved, char *cg, size_t cglen, char *err, size_t errlen);
/* A unit's second half: once cg's cpuset.cpus shows cpus, set it coscheduled
 * (APPLIED); until then keep it at 0 and return APPLIED_CONFINING with err
 * saying what cpuset.cpus shows. Or -errno. */
int apply_confined(const struct apply_ctx *a, const char *cg, int level, const struct cpuset *cpus, char *err,
                   size_t errlen);
int apply_unplace(const struct apply_ctx *a, enum group_kind kind, const char *target, const char *known_cg,
                  char *err, size_t errlen);
