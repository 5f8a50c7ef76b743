/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Table-driven placement tests: exact CPU sets or exact errors. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fixture.h"
#include "placement.h"
#include "test.h"

/* ---- topologies ---- */

static int build_machine(struct topology *t, int p, int c, int th, bool inter, int max_level, bool kernel) {
        struct topo_input in;
        char err[256];
        int r;

        fixture_machine(&in, p, c, th, inter);
        if (max_level >= 0)
                in.max_level = max_level;
        in.kernel = kernel;
        r = topology_build(&in, t, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "topology: %s\n", err);
        fixture_input_free(&in);
        return r;
}

static int build_text(struct topology *t, const char *online, int n, const char *const *names,
                      const char *const *spans, const char *smt, const char *llc, const char *pkg) {
        struct topo_input in = { .kernel = true, .max_level = n, .nlevels = n, .online = online,
                                 .smt_part = smt, .llc_part = llc, .pkg_part = pkg };
        char err[256];
        int r;

        for (int k = 0; k < n; k++) {
                in.names[k] = names[k];
                in.spans[k] = spans[k];
        }
        r = topology_build(&in, t, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "topology: %s\n", err);
        return r;
}

static int get_topology(const char *name, struct topology *t) {
        if (!strcmp(name, "qemu"))          /* the test guest: -smp 8,sockets=2,cores=2,threads=2 */
                return build_machine(t, 2, 2, 2, false, -1, true);
        if (!strcmp(name, "qemu-max1"))     /* kernel clamps max_level to 1 */
                return build_machine(t, 2, 2, 2, false, 1, true);
        if (!strcmp(name, "stock"))         /* no /sys/kernel/cosched */
                return build_machine(t, 2, 2, 2, false, 0, false);
        if (!strcmp(name, "1s-smt"))        /* one socket, 4 cores x 2 threads */
                return build_machine(t, 1, 4, 2, false, -1, true);
        if (!strcmp(name, "2s-smt-x86"))    /* 2 sockets x 4 cores x 2, siblings N and N+8 */
                return build_machine(t, 2, 4, 2, true, -1, true);
        if (!strcmp(name, "nosmt"))         /* 2 sockets x 4 cores, no SMT */
                return build_machine(t, 2, 4, 1, false, -1, true);
        if (!strcmp(name, "smt4"))          /* 2 sockets x 2 cores x 4 threads */
                return build_machine(t, 2, 2, 4, false, -1, true);
        if (!strcmp(name, "256"))           /* 4 sockets x 32 cores x 2, interleaved */
                return build_machine(t, 4, 32, 2, true, -1, true);
        if (!strcmp(name, "holes")) {       /* CPU 3 offline: core 2-3 is down to one thread */
                static const char *const names[] = { "smt", "mc", "die" };
                static const char *const spans[] = { "0-1\n2\n4-5\n6-7\n", "0-2\n4-7\n", "0-2,4-7\n" };
                return build_text(t, "0-2,4-7", 3, names, spans, "0-1\n2\n4-5\n6-7\n", "0-2\n4-7\n", "0-2\n4-7\n");
        }
        if (!strcmp(name, "high")) {        /* CPU ids above 4095 */
                static const char *const names[] = { "smt", "mc" };
                static const char *const spans[] = { "4096-4097\n4098-4099\n8190-8191\n", "4096-4099,8190-8191\n" };
                return build_text(t, "4096-4099,8190-8191", 2, names, spans, spans[0], spans[1], spans[1]);
        }
        if (!strcmp(name, "split")) {       /* clusters inside packages: smt < cls < mc=package < die */
                static const char *const names[] = { "smt", "cls", "mc", "die" };
                static const char *const spans[] = {
                        "0-1\n2-3\n4-5\n6-7\n8-9\n10-11\n12-13\n14-15\n",
                        "0-3\n4-7\n8-11\n12-15\n", "0-7\n8-15\n", "0-15\n",
                };
                return build_text(t, NULL, 4, names, spans, spans[0], spans[1], spans[2]);
        }
        if (!strcmp(name, "uneven")) {      /* a level whose spans differ in size */
                static const char *const names[] = { "smt", "cls", "mc" };
                static const char *const spans[] = { "0-1\n2-3\n4-5\n6-7\n", "0-5\n6-7\n", "0-7\n" };
                return build_text(t, NULL, 3, names, spans, spans[0], NULL, spans[2]);
        }
        return -1;
}

/* ---- cases ---- */

struct rq {
        const char *name;
        const char *level;
        unsigned spans, cpus;
        const char *allowed;
        bool spread;
        int priority;
        const char *current;
        const char *expect; /* a cpulist, "pending: <reason>" or "error: <reason>" */
};

struct pcase {
        const char *name;
        const char *topo;
        const char *reserved;
        enum rounding rounding;
        bool repack;
        struct rq r[8];
};

static const struct pcase cases[] = {
        { "qemu-one-core", "qemu", .r = { { "a", "core", 1, 0, .expect = "0-1" } } },
        { "qemu-two-cores-pack-same-package", "qemu",
          .r = { { "a", "core", 1, 0, .expect = "0-1" }, { "b", "core", 1, 0, .expect = "2-3" } } },
        { "qemu-best-fit-keeps-package-free", "qemu",
          .r = { { "a", "core", 1, 0, .priority = 1, .expect = "0-1" }, { "b", "core", 2, 0, .expect = "4-7" } } },
        { "qemu-partly-used-fills-first", "qemu",
          .r = { { "a", "core", 2, 0, .priority = 2, .expect = "0-3" }, { "b", "core", 1, 0, .priority = 1, .expect = "4-5" },
                 { "c", "core", 1, 0, .expect = "6-7" } } },
        { "qemu-spread", "qemu", .r = { { "a", "core", 2, 0, .spread = true, .expect = "0-1,4-5" } } },
        { "qemu-spread-odd", "qemu", .r = { { "a", "smt", 3, 0, .spread = true, .expect = "0-5" } } },
        { "qemu-reserved-cpu-blocks-its-span", "qemu", "0",
          .r = { { "a", "core", 1, 0, .expect = "2-3" }, { "b", "package", 1, 0, .expect = "4-7" } } },
        { "qemu-cpus-round-up", "qemu", .r = { { "a", "core", 0, 3, .expect = "0-3" } } },
        { "qemu-cpus-round-down", "qemu", .rounding = ROUND_DOWN, .r = { { "a", "core", 0, 3, .expect = "0-1" } } },
        { "qemu-cpus-round-down-below-one-span", "qemu", .rounding = ROUND_DOWN,
          .r = { { "a", "core", 0, 1, .expect = "error: CPUs=1 is less than one level-1 (smt) span of 2 CPUs" } } },
        { "qemu-cpus-round-error", "qemu", .rounding = ROUND_ERROR,
          .r = { { "a", "core", 0, 3, .expect = "error: CPUs=3 is not a multiple of the 2 CPUs of a level-1 (smt) span" },
                 { "b", "core", 0, 4, .expect = "0-3" } } },
        { "qemu-package", "qemu", .r = { { "a", "package", 1, 0, .expect = "0-3" }, { "b", "socket", 0, 4, .expect = "4-7" } } },
        { "qemu-numeric-level", "qemu", .r = { { "a", "2", 1, 0, .expect = "0-3" }, { "b", "3", 1, 0, .expect = "pending: needs 1 level-3 (die) spans, 0 free" } } },
        { "qemu-level-by-kernel-name", "qemu", .r = { { "a", "mc", 1, 0, .expect = "0-3" } } },
        { "qemu-too-big-pending", "qemu", .r = { { "a", "core", 5, 0, .expect = "pending: needs 5 level-1 (smt) spans, 4 free" } } },
        { "qemu-cpus-too-big-pending", "qemu",
          .r = { { "a", "core", 0, 10, .expect = "pending: needs 10 CPUs in whole level-1 (smt) spans, 8 free" } } },
        { "qemu-priority-order", "qemu",
          .r = { { "low", "core", 2, 0, .priority = -5, .expect = "pending: needs 2 level-1 (smt) spans, 0 free" },
                 { "high", "core", 2, 0, .priority = 10, .expect = "0-3" },
                 { "mid", "core", 2, 0, .priority = 0, .expect = "4-7" } } },
        { "qemu-name-breaks-priority-ties", "qemu",
          .r = { { "b", "package", 1, 0, .expect = "4-7" }, { "a", "package", 1, 0, .expect = "0-3" } } },
        { "qemu-placed-groups-stay", "qemu",
          .r = { { "old", "core", 1, 0, .current = "4-5", .expect = "4-5" }, { "new", "core", 1, 0, .expect = "6-7" },
                 { "new2", "core", 2, 0, .expect = "0-3" } } },
        { "qemu-stay-beats-priority", "qemu",
          .r = { { "old", "package", 1, 0, .current = "0-3", .priority = -1, .expect = "0-3" },
                 { "vip", "core", 4, 0, .priority = 100, .expect = "pending: needs 4 level-1 (smt) spans, 2 free" } } },
        { "qemu-current-not-whole-spans-moves", "qemu",
          .r = { { "a", "core", 1, 0, .current = "1-2", .expect = "0-1" } } },
        { "qemu-current-wrong-size-moves", "qemu",
          .r = { { "a", "core", 2, 0, .current = "6-7", .expect = "0-3" } } },
        { "qemu-current-on-reserved-moves", "qemu", "6",
          .r = { { "a", "core", 1, 0, .current = "6-7", .expect = "4-5" } } },
        { "qemu-no-repack-pending", "qemu",
          .r = { { "a", "core", 1, 0, .current = "2-3", .expect = "2-3" }, { "b", "core", 1, 0, .current = "6-7", .expect = "6-7" },
                 { "c", "package", 1, 0, .expect = "pending: needs 1 level-2 (mc) spans, 0 free" } } },
        { "qemu-repack-fits-pending", "qemu", .repack = true,
          .r = { { "a", "core", 1, 0, .current = "2-3", .expect = "0-1" }, { "b", "core", 1, 0, .current = "6-7", .expect = "2-3" },
                 { "c", "package", 1, 0, .expect = "4-7" } } },
        { "qemu-repack-never-evicts", "qemu", .repack = true,
          .r = { { "a", "package", 1, 0, .current = "4-7", .expect = "4-7" }, { "b", "core", 1, 0, .current = "0-1", .expect = "0-1" },
                 { "c", "package", 1, 0, .priority = 9, .expect = "pending: needs 1 level-2 (mc) spans, 0 free" } } },
        { "qemu-allowed-cpus", "qemu",
          .r = { { "a", "core", 1, 0, .allowed = "4-7", .expect = "4-5" }, { "b", "core", 1, 0, .allowed = "3-7", .expect = "6-7" },
                 { "c", "core", 1, 0, .allowed = "1-4", .expect = "2-3" } } },
        { "qemu-allowed-not-whole-span", "qemu",
          .r = { { "a", "core", 1, 0, .allowed = "1-2", .expect = "pending: needs 1 level-1 (smt) spans, 0 free" } } },
        { "qemu-mixed-levels-no-overlap", "qemu",
          .r = { { "c", "core", 1, 0, .priority = 1, .expect = "0-1" }, { "p", "package", 1, 0, .expect = "4-7" },
                 { "p2", "package", 1, 0, .expect = "pending: needs 1 level-2 (mc) spans, 0 free" } } },
        { "qemu-max1-package-above-max", "qemu-max1",
          .r = { { "a", "package", 1, 0, .expect = "error: level 2 (mc) is above the kernel's max_level 1" },
                 { "b", "core", 1, 0, .expect = "0-1" } } },
        { "stock-kernel-refuses", "stock",
          .r = { { "a", "core", 1, 0, .expect = "error: the kernel has no coscheduling support (no /sys/kernel/cosched)" } } },
        { "unknown-level", "qemu",
          .r = { { "a", "numa", 1, 0, .expect = "error: level 'numa' does not exist on this machine" },
                 { "b", "7", 1, 0, .expect = "error: level 7 does not exist (this machine has levels 1-3)" } } },
        { "1s-smt-pack", "1s-smt",
          .r = { { "a", "core", 3, 0, .priority = 1, .expect = "0-5" }, { "b", "core", 1, 0, .expect = "6-7" },
                 { "c", "package", 1, 0, .expect = "pending: needs 1 level-2 (mc) spans, 0 free" } } },
        { "1s-smt-spread-is-pack", "1s-smt", .r = { { "a", "core", 2, 0, .spread = true, .expect = "0-3" } } },
        { "2s-x86-siblings-interleaved", "2s-smt-x86",
          .r = { { "a", "core", 1, 0, .priority = 1, .expect = "0,8" }, { "b", "core", 4, 0, .expect = "4-7,12-15" },
                 { "c", "core", 2, 0, .expect = "1-2,9-10" } } },
        { "2s-x86-spread", "2s-smt-x86", .r = { { "a", "core", 4, 0, .spread = true, .expect = "0-1,4-5,8-9,12-13" } } },
        { "nosmt-core-is-error", "nosmt",
          .r = { { "a", "core", 1, 0, .expect = "error: level 'core': no SMT level on this machine" },
                 { "b", "package", 1, 0, .expect = "0-3" }, { "c", "1", 1, 0, .expect = "4-7" } } },
        { "smt4-core", "smt4",
          .r = { { "a", "core", 1, 0, .priority = 1, .expect = "0-3" }, { "b", "core", 0, 6, .expect = "8-15" },
                 { "c", "core", 0, 2, .expect = "4-7" } } },
        { "holes-best-fit-by-cpus", "holes",
          .r = { { "a", "core", 0, 2, .priority = 3, .expect = "0-1" }, { "b", "core", 0, 2, .priority = 2, .expect = "4-5" },
                 { "c", "core", 1, 0, .priority = 1, .expect = "2" }, { "d", "core", 0, 4, .expect = "pending: needs 4 CPUs in whole level-1 (smt) spans, 2 free" } } },
        { "holes-package-sizes-differ", "holes",
          .r = { { "a", "package", 0, 4, .expect = "4-7" }, { "b", "package", 1, 0, .expect = "0-2" } } },
        { "high-cpu-ids", "high",
          .r = { { "a", "core", 1, 0, .priority = 1, .expect = "4096-4097" }, { "b", "core", 1, 0, .allowed = "8190-8191", .expect = "8190-8191" },
                 { "c", "core", 2, 0, .expect = "pending: needs 2 level-1 (smt) spans, 1 free" } } },
        { "split-levels", "split",
          .r = { { "a", "cls", 1, 0, .priority = 3, .expect = "0-3" }, { "b", "core", 1, 0, .priority = 2, .expect = "4-5" },
                 { "c", "package", 1, 0, .priority = 1, .expect = "8-15" }, { "d", "llc", 1, 0, .expect = "pending: needs 1 level-2 (cls) spans, 0 free" } } },
        { "split-core-fills-cluster", "split",
          .r = { { "a", "core", 3, 0, .priority = 1, .expect = "0-5" }, { "b", "cls", 1, 0, .expect = "8-11" },
                 { "c", "core", 1, 0, .expect = "6-7" } } },
        { "uneven-spans", "uneven",
          .r = { { "a", "cls", 1, 0, .priority = 1, .expect = "6-7" }, { "b", "cls", 1, 0, .expect = "0-5" } } },
        { "uneven-best-fit-smallest", "uneven",
          .r = { { "a", "core", 1, 0, .priority = 1, .expect = "6-7" }, { "b", "core", 2, 0, .expect = "0-3" } } },
        { "256-packages", "256",
          .r = { { "a", "package", 2, 0, .expect = "0-63,128-191" } } },
        { "256-spread-cores", "256",
          .r = { { "a", "core", 4, 0, .spread = true, .expect = "0,32,64,96,128,160,192,224" } } },
        { "256-pack-then-package", "256",
          .r = { { "a", "core", 33, 0, .priority = 1, .expect = "0-32,128-160" }, { "b", "package", 3, 0, .expect = "pending: needs 3 level-2 (mc) spans, 2 free" },
                 { "c", "package", 2, 0, .expect = "64-127,192-255" } } },
};

static void check_case(const struct pcase *pc) {
        struct topology t;
        struct config cfg;
        struct placement_request req[8];
        struct placement_result res[8];
        struct group_config g[8];
        struct cpuset cur[8], reserved;
        char errbuf[8][256], detail[1024] = "", name[128];
        size_t n = 0;

        snprintf(name, sizeof(name), "placement/%s", pc->name);
        if (get_topology(pc->topo, &t) < 0) {
                test_report(name, "cannot build topology");
                return;
        }
        config_init(&cfg);
        cfg.daemon.rounding = pc->rounding;
        cpuset_zero(&reserved);
        if (pc->reserved)
                cpuset_parse(pc->reserved, &reserved);
        while (n < 8 && pc->r[n].name) {
                const struct rq *q = &pc->r[n];
                g[n] = (struct group_config) { .name = (char *) q->name, .level = (char *) q->level, .spans = q->spans,
                                               .cpus = q->cpus, .pref = q->spread ? PREF_SPREAD : PREF_PACK,
                                               .priority = q->priority };
                if (q->allowed) {
                        g[n].has_allowed = true;
                        cpuset_parse(q->allowed, &g[n].allowed);
                }
                config_group_to_request(&cfg, &g[n], &t, &req[n], errbuf[n], sizeof(errbuf[n]), NULL, 0);
                if (q->current) {
                        cpuset_parse(q->current, &cur[n]);
                        req[n].current = &cur[n];
                }
                n++;
        }
        placement_compute(&t, &(struct placement_options) { .reserved = &reserved, .repack = pc->repack }, n, req, res);
        for (size_t i = 0; i < n; i++) {
                char got[1024], buf[512];
                if (res[i].state == GROUP_PLACED)
                        snprintf(got, sizeof(got), "%s", cpuset_format(&res[i].cpus, buf, sizeof(buf)));
                else
                        snprintf(got, sizeof(got), "%s: %s", group_state_to_string(res[i].state), res[i].reason);
                if (strcmp(got, pc->r[i].expect) != 0) {
                        size_t off = strlen(detail);
                        snprintf(detail + off, sizeof(detail) - off, "%s%s: expected '%s', got '%s'", off ? "; " : "",
                                 pc->r[i].name, pc->r[i].expect, got);
                }
        }
        test_report(name, detail);
        topology_free(&t);
}

/*
 * Invariants over many random requests: placed groups are whole spans of
 * their level, never overlap each other or reserved CPUs, stay inside
 * AllowedCPUs, and a second run with the result as current changes nothing.
 */
static unsigned rnd_state = 12345;
static unsigned rnd(void) {
        rnd_state = rnd_state * 1103515245 + 12345;
        return (rnd_state >> 16) & 0x7fff;
}

static void check_invariants(const char *topo) {
        struct topology t;
        struct placement_request req[24];
        struct placement_result res[24], again[24];
        struct cpuset reserved, allowed[24];
        char name[128], detail[512] = "", names[24][8];

        snprintf(name, sizeof(name), "placement/invariants-%s", topo);
        if (get_topology(topo, &t) < 0) {
                test_report(name, "cannot build topology");
                return;
        }
        for (int round = 0; round < 200 && !detail[0]; round++) {
                size_t n = 1 + rnd() % 24;
                struct cpuset used;

                cpuset_zero(&reserved);
                if (rnd() % 2)
                        cpuset_set(&reserved, cpuset_next(&t.online, rnd() % t.ncpu_ids));
                for (size_t i = 0; i < n; i++) {
                        int L = 1 + rnd() % (t.nlevels - 1);
                        snprintf(names[i], sizeof(names[i]), "g%zu", i);
                        req[i] = (struct placement_request) { .name = names[i], .level = L, .priority = rnd() % 3,
                                                              .pref = rnd() % 2 ? PREF_SPREAD : PREF_PACK };
                        if (rnd() % 2)
                                req[i].spans = 1 + rnd() % 3;
                        else
                                req[i].cpus = 1 + rnd() % 8;
                        if (rnd() % 4 == 0) {
                                cpuset_zero(&allowed[i]);
                                for (int c = 0; c < t.ncpu_ids; c++)
                                        if (rnd() % 4)
                                                cpuset_set(&allowed[i], c);
                                req[i].allowed = &allowed[i];
                        }
                }
                placement_compute(&t, &(struct placement_options) { .reserved = &reserved, .repack = rnd() % 2 }, n, req, res);
                cpuset_zero(&used);
                for (size_t i = 0; i < n && !detail[0]; i++) {
                        const struct topo_level *lv = &t.levels[req[i].level];
                        if (res[i].state != GROUP_PLACED)
                                continue;
                        if (cpuset_intersects(&used, &res[i].cpus) || cpuset_intersects(&reserved, &res[i].cpus))
                                snprintf(detail, sizeof(detail), "round %d: %s overlaps", round, names[i]);
                        if (req[i].allowed && !cpuset_subset(&res[i].cpus, req[i].allowed))
                                snprintf(detail, sizeof(detail), "round %d: %s outside AllowedCPUs", round, names[i]);
                        CPUSET_FOREACH(c, &res[i].cpus)
                                if (!cpuset_subset(&lv->spans[lv->span_of[c]].cpus, &res[i].cpus))
                                        snprintf(detail, sizeof(detail), "round %d: %s not whole spans", round, names[i]);
                        cpuset_or(&used, &res[i].cpus);
                        req[i].current = &res[i].cpus;
                }
                if (detail[0])
                        break;
                placement_compute(&t, &(struct placement_options) { .reserved = &reserved }, n, req, again);
                for (size_t i = 0; i < n; i++) {
                        if (res[i].state == GROUP_PLACED &&
                            (again[i].state != GROUP_PLACED || !cpuset_equal(&again[i].cpus, &res[i].cpus)))
                                snprintf(detail, sizeof(detail), "round %d: %s moved on a rerun", round, names[i]);
                        req[i].current = NULL;
                }
        }
        test_report(name, detail);
        topology_free(&t);
}

int main(void) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                check_case(&cases[i]);
        check_invariants("qemu");
        check_invariants("holes");
        check_invariants("split");
        check_invariants("256");
        return test_failures ? 1 : 0;
}
