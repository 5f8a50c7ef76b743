/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Placement benchmark (not a test): 1000 groups on 1024 CPUs. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixture.h"
#include "placement.h"

#define NGROUPS 1000

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

int main(void) {
        static struct placement_request req[NGROUPS];
        static struct placement_result res[NGROUPS], again[NGROUPS];
        static char names[NGROUPS][16];
        struct topo_input in;
        struct topology t;
        char err[256];
        double cold[9], warm[9];
        size_t placed = 0;

        /* 8 packages x 64 cores x 2 threads, x86 numbering. */
        fixture_machine(&in, 8, 64, 2, true);
        if (topology_build(&in, &t, err, sizeof(err)) < 0) {
                fprintf(stderr, "%s\n", err);
                return 1;
        }
        fixture_input_free(&in);
        /* A mix: mostly single cores, some 2-core spread groups, some whole
         * packages, priorities varying, so that part of them are pending. */
        for (int i = 0; i < NGROUPS; i++) {
                snprintf(names[i], sizeof(names[i]), "g%04d", i);
                req[i] = (struct placement_request) { .name = names[i], .level = 1, .spans = 1, .priority = i % 7 };
                if (i % 10 == 1) {
                        req[i].spans = 2;
                        req[i].pref = PREF_SPREAD;
                }
                if (i % 100 == 2) {
                        req[i].level = 2;
                        req[i].spans = 0;
                        req[i].cpus = 128;
                }
        }
        for (int k = 0; k < 9; k++) {
                double t0 = now_ms();
                placement_compute(&t, NULL, NGROUPS, req, res);
                cold[k] = now_ms() - t0;
        }
        for (int i = 0; i < NGROUPS; i++) {
                placed += res[i].state == GROUP_PLACED;
                if (res[i].state == GROUP_PLACED)
                        req[i].current = &res[i].cpus;
        }
        for (int k = 0; k < 9; k++) {
                double t0 = now_ms();
                placement_compute(&t, NULL, NGROUPS, req, again);
                warm[k] = now_ms() - t0;
        }
        qsort(cold, 9, sizeof(double), cmp_double);
        qsort(warm, 9, sizeof(double), cmp_double);
        printf("placement bench: %d groups on %d CPUs (%d levels): %zu placed, %zu pending\n", NGROUPS,
               cpuset_count(&t.online), t.nlevels - 1, placed, NGROUPS - placed);
        printf("  from scratch: %.3f ms (median of 9, min %.3f)\n", cold[4], cold[0]);
        printf("  steady state (all current): %.3f ms (median of 9, min %.3f)\n", warm[4], warm[0]);
        printf("  target: < 10 ms: %s\n", cold[4] < 10 && warm[4] < 10 ? "met" : "MISSED");
        topology_free(&t);
        return 0;
}
