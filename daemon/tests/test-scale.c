/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * 100 000 groups load in well under a second. Lookups by name and the
 * nesting and same-target checks were linear per group, so loading was
 * quadratic (minutes for 100 000). Asserted against a generous bound on
 * the CPU time this process used, as the machines that run this also
 * build kernels (its wall time there is 2-3 times its CPU time); both are
 * printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "config.h"
#include "fixture.h"
#include "state.h"
#include "test.h"
#include "util.h"

#define NGROUPS 100000
#define BOUND_S 5.0

static double clock_s(clockid_t id) {
        struct timespec ts;

        clock_gettime(id, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Raw cgroups below one parent, slices, services: every kind of lookup. */
static int write_config(const char *root) {
        FILE *f;
        char path[512];

        snprintf(path, sizeof(path), "%s/big.conf", root);
        f = fopen(path, "w");
        if (!f)
                return -1;
        fprintf(f, "[daemon]\nReservedCPUs=0\n");
        for (int i = 0; i < NGROUPS; i++)
                switch (i % 3) {
                case 0:
                        fprintf(f, "[g%d]\nCgroupPath=/batch/j%d\nLevel=core\nSpans=1\n", i, i);
                        break;
                case 1:
                        fprintf(f, "[g%d]\nSlice=tenant-s%d.slice\nLevel=mc\nCPUs=3\n", i, i);
                        break;
                default:
                        fprintf(f, "[g%d]\nUnit=u%d.service\nLevel=1\nSpans=1\nAllowedCPUs=0-7\n", i, i);
                }
        return fclose(f);
}

static void test_load(const char *root) {
        char path[512], detail[256] = "";
        struct config c;
        struct config_errors e = {};
        struct topo_input in;
        struct topology t;
        double w0, c0, wall, load, check;

        snprintf(path, sizeof(path), "%s/big.conf", root);
        w0 = clock_s(CLOCK_MONOTONIC);
        c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (config_load(path, NULL, CONFIG_MAIN_REQUIRED, &c, &e) < 0 || c.ngroups != NGROUPS)
                snprintf(detail, sizeof(detail), "load failed: %zu groups, %zu errors%s%s", c.ngroups, e.n,
                         e.n ? ": " : "", e.n ? e.msgs[0] : "");
        load = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        wall = clock_s(CLOCK_MONOTONIC) - w0;
        fixture_machine(&in, 2, 2, 2, false);
        if (!detail[0] && topology_build(&in, &t, detail, sizeof(detail)) == 0) {
                c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
                check_config_topology(&c, &t, &e);
                check = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
                topology_free(&t);
                if (e.n)
                        snprintf(detail, sizeof(detail), "-t found %zu errors: %s", e.n, e.msgs[0]);
                else if (load + check >= BOUND_S)
                        snprintf(detail, sizeof(detail),
                                 "%.3f s CPU to load (%.3f s wall) and %.3f s to check %d groups (bound %.0f s)", load,
                                 wall, check, NGROUPS, BOUND_S);
                else
                        printf("# %d groups: loaded in %.3f s CPU (%.3f s wall), checked against the topology in "
                               "%.3f s (bound %.0f s CPU)\n", NGROUPS, load, wall, check, BOUND_S);
        }
        fixture_input_free(&in);
        config_errors_free(&e);
        config_free(&c);
        test_report("scale/load-100000-groups", detail);
}

int main(void) {
        char *root = fixture_tmpdir();

        if (write_config(root) < 0)
                test_report("scale/load-100000-groups", "cannot write the config");
        else
                test_load(root);
        fixture_rm_rf(root);
        free(root);
        return test_failures ? 1 : 0;
}
