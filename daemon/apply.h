/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Apply: make the cgroups say what placement decided. Order matters, as the
 * kernel does not load-balance a coscheduled group: confine first, then set
 * cpu.scheduled; on removal 0 first, then widen.
 */

#include <stdbool.h>
#include <stddef.h>
#include "bus.h"
#include "config.h"
#include "cpuset.h"

struct apply_ctx {
        const char *cgroup_root;
        struct bus *bus;        /* NULL: units cannot be confined */
        /* Units: systemd's answer, and the hook that sets a unit's
         * cpu.scheduled to 0 (apply_zero) before its CPUs change. */
        bus_unit_done_t done;
        bus_unit_hook_t zero;
        void *userdata;
};

enum apply_result {
        APPLIED,
        APPLIED_CONFINING,      /* AllowedCPUs= asked for, cpuset.cpus does not show it yet: not
                                 * coscheduled; err says why, apply_confined() finishes the job */
        APPLIED_ASKING,         /* a unit: systemd was asked; a->done gets the answer, then
                                 * apply_confined() on the cgroup it names */
};

/* Raw cgroups: confine and coschedule now; cg is target. Units: ask
 * systemd (asynchronously: PID 1 may be slow or hung, and the caller's
 * event loop must go on), after setting known_cg's cpu.scheduled to 0 if
 * moved. Returns enum apply_result or -errno with err filled. */
int apply_place(const struct apply_ctx *a, const char *key, enum group_kind kind, const char *target, int level,
                const struct cpuset *cpus, bool moved, const char *known_cg, char *err, size_t errlen);
/* cpu.scheduled 0 in cg, if it exists ("" : none). */
void apply_zero(const char *cgroup_root, const char *cg);
/* A unit's second half: once cg's cpuset.cpus shows cpus, set it coscheduled
 * (APPLIED); until then keep it at 0 and return APPLIED_CONFINING with err
 * saying what cpuset.cpus shows. Or -errno. */
int apply_confined(const struct apply_ctx *a, const char *cg, int level, const struct cpuset *cpus, char *err,
                   size_t errlen);
/* 0 first, then widen; for a unit the widening is asked of systemd
 * (APPLIED_ASKING, a->done gets the answer with cpus NULL, then
 * apply_released() on the cgroup it names). */
int apply_unplace(const struct apply_ctx *a, const char *key, enum group_kind kind, const char *target,
                  const char *known_cg, char *err, size_t errlen);
/* A released unit's cgroup ("": none, it stopped) once systemd has reset
 * its AllowedCPUs=: systemd writes an empty cpuset.cpus, which the kernel
 * refuses while the cgroup has tasks, so a running unit would stay on its
 * old CPUs. Those are set to its parent's then. Returns 1 if it widened, 0
 * if nothing was left to widen, or -errno with err filled. */
int apply_released(const char *cgroup_root, const char *cg, char *err, size_t errlen);
