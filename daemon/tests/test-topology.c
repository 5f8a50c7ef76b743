/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Topology parsing from fixture sysfs trees written to a temp dir. */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "test.h"
#include "topology.h"

/* Per-CPU topology files of the QEMU guest (-smp 8,sockets=2,cores=2,threads=2). */
static void write_cpu_tree(const char *root, int ncpus, int threads, int per_pkg, const char *online) {
        char rel[256], val[64], thr[64];

        fixture_write(root, "sys/devices/system/cpu/online", online);
        for (int c = 0; c < ncpus; c++) {
                int t0 = c / threads * threads, p0 = c / per_pkg * per_pkg;
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
                if (threads > 1)
                        snprintf(thr, sizeof(thr), "%d-%d\n", t0, t0 + threads - 1);
                else
                        snprintf(thr, sizeof(thr), "%d\n", c);
                fixture_write(root, rel, thr);
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/package_cpus_list", c);
                snprintf(val, sizeof(val), "%d-%d\n", p0, p0 + per_pkg - 1);
                fixture_write(root, rel, val);
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cache/index0/level", c);
                fixture_write(root, rel, "1\n");
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cache/index0/shared_cpu_list", c);
                fixture_write(root, rel, thr); /* L1 is per core: index3 (L3) must win */
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cache/index3/level", c);
                fixture_write(root, rel, "3\n");
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cache/index3/shared_cpu_list", c);
                fixture_write(root, rel, val);
        }
}

static void write_kernel(const char *root, const char *max, int n, const char *const *names, const char *const *spans) {
        char rel[256];

        fixture_write(root, "sys/kernel/cosched/max_level", max);
        for (int k = 0; k < n; k++) {
                snprintf(rel, sizeof(rel), "sys/kernel/cosched/levels/%d/name", k + 1);
                fixture_write(root, rel, names[k]);
                snprintf(rel, sizeof(rel), "sys/kernel/cosched/levels/%d/spans", k + 1);
                fixture_write(root, rel, spans[k]);
        }
}

/* Summarize a topology as "kernel max=N | 1:smt 0-1 2-3 | 2:mc ... | smt=1 llc=2 pkg=2 | why". */
static void summarize(const struct topology *t, char *buf, size_t len) {
        size_t off = snprintf(buf, len, "%s max=%d", t->kernel ? "kernel" : "fallback", t->max_level);
        char s[256];

        for (int k = 1; k < t->nlevels && off < len; k++) {
                off += snprintf(buf + off, len - off, " | %d:%s", k, t->levels[k].name);
                for (int i = 0; i < t->levels[k].nspans && off < len; i++)
                        off += snprintf(buf + off, len - off, " %s", cpuset_format(&t->levels[k].spans[i].cpus, s, sizeof(s)));
        }
        if (off < len)
                off += snprintf(buf + off, len - off, " | smt=%d llc=%d pkg=%d", t->smt_level, t->llc_level, t->package_level);
        if (off < len && t->unavailable[0])
                snprintf(buf + off, len - off, " | %s", t->unavailable);
}

struct tcase {
        const char *name;
        int ncpus, threads, per_pkg;
        const char *online;
        const char *max;        /* NULL: no /sys/kernel/cosched */
        int nlevels;
        const char *names[4];
        const char *spans[4];
        const char *expect;     /* summary, or "error: ..." */
};

static const struct tcase cases[] = {
        { "qemu-guest", 8, 2, 4, "0-7\n", "3\n", 3, { "smt\n", "mc\n", "die\n" }, { "0-1\n2-3\n4-5\n6-7\n", "0-3\n4-7\n", "0-7\n" },
          "kernel max=3 | 1:smt 0-1 2-3 4-5 6-7 | 2:mc 0-3 4-7 | 3:die 0-7 | smt=1 llc=2 pkg=2" },
        { "qemu-guest-clamped", 8, 2, 4, "0-7\n", "1\n", 1, { "smt\n" }, { "0-1\n2-3\n4-5\n6-7\n" },
          "kernel max=1 | 1:smt 0-1 2-3 4-5 6-7 | smt=1 llc=-1 pkg=-1" },
        { "spans-unsorted", 8, 2, 4, "0-7\n", "1\n", 1, { "smt\n" }, { "6-7\n0-1\n4-5\n2-3\n" },
          "kernel max=1 | 1:smt 0-1 2-3 4-5 6-7 | smt=1 llc=-1 pkg=-1" },
        { "disabled", 8, 2, 4, "0-7\n", "0\n", 0, {}, {},
          "kernel max=0 | smt=-1 llc=-1 pkg=-1 | coscheduling is disabled in the kernel (max_level is 0)" },
        { "stock-kernel", 8, 2, 4, "0-7\n", NULL, 0, {}, {},
          "fallback max=0 | 1:smt 0-1 2-3 4-5 6-7 | 2:llc 0-3 4-7 | smt=1 llc=2 pkg=2 | the kernel has no coscheduling support (no /sys/kernel/cosched)" },
        { "stock-no-smt", 4, 1, 2, "0-3\n", NULL, 0, {}, {},
          "fallback max=0 | 1:llc 0-1 2-3 | smt=-1 llc=1 pkg=1 | the kernel has no coscheduling support (no /sys/kernel/cosched)" },
        { "stock-offline-cpu", 8, 2, 4, "0-2,4-7\n", NULL, 0, {}, {},
          "fallback max=0 | 1:smt 0-1 2 4-5 6-7 | 2:llc 0-2 4-7 | smt=1 llc=2 pkg=2 | the kernel has no coscheduling support (no /sys/kernel/cosched)" },
        { "overlapping-spans", 8, 2, 4, "0-7\n", "1\n", 1, { "smt\n" }, { "0-1\n1-3\n4-5\n6-7\n" },
          "error: level 1 (smt): span 1-3 overlaps another span" },
        { "spans-miss-cpus", 8, 2, 4, "0-7\n", "1\n", 1, { "smt\n" }, { "0-1\n2-3\n4-5\n" },
          "error: level 1 (smt): spans do not cover online CPUs 6-7" },
        { "span-with-offline-cpu", 8, 2, 4, "0-5\n", "1\n", 1, { "smt\n" }, { "0-1\n2-3\n4-5\n6-7\n" },
          "error: level 1 (smt): span 6-7 contains offline CPUs" },
        { "not-nested", 8, 2, 4, "0-7\n", "2\n", 2, { "smt\n", "mc\n" }, { "0-1\n2-3\n4-5\n6-7\n", "0-2\n3-7\n" },
          "error: level 1 (smt): span 2-3 does not nest in level 2" },
        { "bad-cpulist", 8, 2, 4, "0-7\n", "1\n", 1, { "smt\n" }, { "0-1\n2-x\n" },
          "error: level 1: line 2: bad cpulist '2-x'" },
        { "bad-max-level", 8, 2, 4, "0-7\n", "many\n", 0, {}, {},
          "error: ROOT/sys/kernel/cosched/max_level: bad value 'many\n'" },
};

static void run_case(const struct tcase *c) {
        char *root = fixture_tmpdir(), name[128], got[2048], err[512], expect[1024];
        struct topology t;
        const char *root_at;

        snprintf(name, sizeof(name), "topology/%s", c->name);
        write_cpu_tree(root, c->ncpus, c->threads, c->per_pkg, c->online);
        if (c->max)
                write_kernel(root, c->max, c->nlevels, c->names, c->spans);
        if (topology_load(root, &t, err, sizeof(err)) < 0)
                snprintf(got, sizeof(got), "error: %s", err);
        else {
                summarize(&t, got, sizeof(got));
                topology_free(&t);
        }
        /* Error texts name the fixture root; the table says ROOT. */
        snprintf(expect, sizeof(expect), "%s", c->expect);
        root_at = strstr(expect, "ROOT");
        if (root_at) {
                char tmp[1024];
                snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int) (root_at - expect), expect, root, root_at + 4);
                snprintf(expect, sizeof(expect), "%s", tmp);
        }
        if (strcmp(got, expect)) {
                char detail[4096];
                snprintf(detail, sizeof(detail), "expected '%s', got '%s'", expect, got);
                test_report(name, detail);
        } else
                test_report(name, NULL);
        fixture_rm_rf(root);
        free(root);
}

int main(void) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                run_case(&cases[i]);
        return test_failures ? 1 : 0;
}
