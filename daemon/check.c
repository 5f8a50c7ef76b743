/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "check.h"

static void check_level(const struct group_config *g, const struct topology *t, struct config_errors *e) {
        char err[256];
        int level;

        if (topology_resolve_level(t, g->level, &level, err, sizeof(err)) < 0) {
                config_error_add(e, g->level_at.file, g->level_at.line, "group [%s]: Level=%s: %s", g->name, g->level,
                                 err);
                return;
        }
        /* Above max_level it waits for a reboot with another
         * cosched_max_level=; a kernel without coscheduling at all is a
         * run-time state (every group in error), not a config mistake. */
        if (!t->unavailable[0] && level > t->max_level)
                config_error_add(e, g->level_at.file, g->level_at.line,
                                 "group [%s]: Level=%s is level %d (%s), above the kernel's max_level %d", g->name,
                                 g->level, level, t->levels[level].name, t->max_level);
}

/* Rounding=error and Rounding=down below one span refuse some sizes. */
static void check_size(const struct config *c, const struct group_config *g, const struct topology *t,
                       struct config_errors *e) {
        struct placement_request req;
        char err[320];

        config_group_to_request(c, g, t, &req, err, sizeof(err), NULL, 0);
        if (req.error)
                config_error_add(e, g->size_at.file, g->size_at.line, "group [%s]: %s", g->name, req.error);
}

void check_config_topology(const struct config *c, const struct topology *t, struct config_errors *e) {
        for (size_t i = 0; i < c->ngroups; i++) {
                const struct group_config *g = &c->groups[i];
                size_t before = e->n;

                if (!g->level)
                        continue; /* reported by the parser */
                check_level(g, t, e);
                if (e->n == before)
                        check_size(c, g, t, e);
        }
}

void check_config_sysfs(const struct config *c, const char *sysfs_root, struct config_errors *e) {
        struct topology t;
        char err[256];

        if (topology_load(sysfs_root, &t, err, sizeof(err)) < 0) {
                config_error_add(e, sysfs_root[0] ? sysfs_root : "/sys", 0,
                                 "cannot check the levels against the CPU topology: %s", err);
                return;
        }
        check_config_topology(c, &t, e);
        topology_free(&t);
}
