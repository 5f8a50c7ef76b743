/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apply.h"
#include "bus.h"
#include "cgroup.h"
#include "util.h"

/* Write cpu.scheduled only when it differs: the write is a collective
 * re-parenting in the kernel, not free. */
static int set_level(const char *root, const char *cg, int level, char *err, size_t errlen) {
        int cur, r;

        if (cgroup_get_scheduled(root, cg, &cur) == 0 && cur == level)
                return 0;
        r = cgroup_set_scheduled(root, cg, level);
        if (r < 0)
                return errf(err, errlen, r, "writing %d to %s/cpu.scheduled: %s", level, cg, strerror(-r));
        return 0;
}

static int place_cgroup(const struct apply_ctx *a, const char *cg, int level, const struct cpuset *cpus, bool moved,
                        char *err, size_t errlen) {
        struct cpuset cur;
        int r;

        if (!cgroup_exists(a->cgroup_root, cg))
                return errf(err, errlen, -ENOENT, "cgroup %s does not exist (yet)", cg);
        r = cgroup_enable_controllers(a->cgroup_root, cg, err, errlen);
        if (r < 0)
                return r;
        if (moved)
                (void) cgroup_set_scheduled(a->cgroup_root, cg, 0);
        if (cgroup_get_cpus(a->cgroup_root, cg, &cur, false) < 0 || !cpuset_equal(&cur, cpus)) {
                r = cgroup_set_cpus(a->cgroup_root, cg, cpus);
                if (r < 0) {
                        /* Never leave it coscheduled on CPUs we did not choose. */
                        (void) cgroup_set_scheduled(a->cgroup_root, cg, 0);
                        return errf(err, errlen, r, "writing %s/cpuset.cpus: %s", cg, strerror(-r));
                }
        }
        return set_level(a->cgroup_root, cg, level, err, errlen);
}

int apply_confined(const struct apply_ctx *a, const char *cg, int level, const struct cpuset *cpus, char *err,
                   size_t errlen) {
        char want[4096], have[4096];
        struct cpuset cur, eff;
        int r;

        r = cgroup_get_cpus(a->cgroup_root, cg, &cur, false);
        if (r == 0 && cpuset_equal(&cur, cpus) && !cgroup_effective_differs(a->cgroup_root, cg, cpus, &eff)) {
                r = set_level(a->cgroup_root, cg, level, err, errlen);
                return r < 0 ? r : APPLIED;
        }
        /* Not where placement put it (yet), e.g. still at a level it had
         * before: it must not be coscheduled meanwhile. */
        (void) set_level(a->cgroup_root, cg, 0, NULL, 0);
        cpuset_format(cpus, want, sizeof(want));
        if (r == 0 && cpuset_equal(&cur, cpus)) {
                /* systemd did its part; the parent's CPUs do not allow it. */
                cpuset_format(&eff, have, sizeof(have));
                snprintf(err, errlen, "%s runs on CPUs %s, not %s (cpuset.cpus.effective): its parent cgroup does not "
                         "hold these CPUs (a unit inside a confined or coscheduled slice?)", cg, have, want);
                return APPLIED_CONFINING;
        }
        if (r < 0)
                snprintf(have, sizeof(have), ": %s", strerror(-r));
        else if (cpuset_empty(&cur))
                snprintf(have, sizeof(have), " is empty");
        else {
                snprintf(have, sizeof(have), " is ");
                cpuset_format(&cur, have + 4, sizeof(have) - 4);
        }
        snprintf(err, errlen, "systemd has not applied AllowedCPUs=%s to %s yet (cpuset.cpus%s)", want, cg, have);
        return APPLIED_CONFINING;
}

void apply_zero(const char *cgroup_root, const char *cg) {
        if (cg[0] && cgroup_exists(cgroup_root, cg))
                (void) cgroup_set_scheduled(cgroup_root, cg, 0);
}

/* The unit's cgroup and AllowedCPUs= come back in a->done: PID 1 answers
 * from its own loop, and realizes AllowedCPUs= after it answered. */
static int ask_systemd(const struct apply_ctx *a, const char *key, const char *unit, const struct cpuset *cpus,
                       char *err, size_t errlen) {
        struct bus_unit_request req = { .key = key, .unit = unit, .cpus = cpus, .zero_first = true };
        int r;

        if (!a->bus)
                return errf(err, errlen, -ENOTCONN, "no connection to systemd to %s %s", cpus ? "confine" : "widen",
                            unit);
        r = bus_confine_unit(a->bus, &req, a->done, a->zero, a->userdata);
        if (r < 0)
                return errf(err, errlen, r, "asking systemd about %s: %s", unit, strerror(-r));
        return APPLIED_ASKING;
}

int apply_place(const struct apply_ctx *a, const char *key, enum group_kind kind, const char *target, int level,
                const struct cpuset *cpus, bool moved, const char *known_cg, char *err, size_t errlen) {
        int r;

        if (kind == KIND_CGROUP) {
                r = place_cgroup(a, target, level, cpus, moved, err, errlen);
                return r < 0 ? r : APPLIED;
        }
        if (moved)
                apply_zero(a->cgroup_root, known_cg);
        return ask_systemd(a, key, target, cpus, err, errlen);
}

int apply_unplace(const struct apply_ctx *a, const char *key, enum group_kind kind, const char *target,
                  const char *known_cg, char *err, size_t errlen) {
        int r;

        if (kind != KIND_CGROUP) {
                /* The unit's cgroup as last seen now, the one systemd names
                 * again before it widens (the zero hook). */
                apply_zero(a->cgroup_root, known_cg ? known_cg : "");
                return ask_systemd(a, key, target, NULL, err, errlen);
        }
        if (!cgroup_exists(a->cgroup_root, target))
                return 0;
        r = cgroup_set_scheduled(a->cgroup_root, target, 0);
        if (r < 0 && r != -ENOENT)
                return errf(err, errlen, r, "writing 0 to %s/cpu.scheduled: %s", target, strerror(-r));
        r = cgroup_set_cpus(a->cgroup_root, target, NULL);
        if (r == -ENOSPC) /* it has tasks: the kernel wants CPUs there */
                r = cgroup_set_cpus_of_parent(a->cgroup_root, target);
        if (r < 0)
                return errf(err, errlen, r, "widening %s/cpuset.cpus: %s", target, strerror(-r));
        return 0;
}

int apply_released(const char *cgroup_root, const char *cg, char *err, size_t errlen) {
        struct cpuset cur;
        int r;

        /* Gone, no cpuset controller there (systemd turns it off when no
         * unit of the slice needs it), or empty: nothing holds it. */
        if (!cg[0] || cgroup_get_cpus(cgroup_root, cg, &cur, false) < 0 || cpuset_empty(&cur))
                return 0;
        r = cgroup_set_cpus_of_parent(cgroup_root, cg);
        if (r < 0)
                return errf(err, errlen, r, "widening %s/cpuset.cpus to its parent's CPUs: %s", cg, strerror(-r));
        return 1;
}
