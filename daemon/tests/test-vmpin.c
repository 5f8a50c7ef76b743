/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vmpin.c: QEMU command lines, vCPU thread names, the automatic level and
 * the pin plans, as exact values. */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "test.h"
#include "vmpin.h"

static int machine(struct topology *t, int p, int c, int th, bool inter, int max_level) {
        struct topo_input in;
        char err[256];
        int r;

        fixture_machine(&in, p, c, th, inter);
        if (max_level >= 0)
                in.max_level = max_level;
        r = topology_build(&in, t, err, sizeof(err));
        fixture_input_free(&in);
        return r;
}

/* argv as one string with '|' between the arguments. */
static int cmdline(const char *args, struct vm_cmdline *ret) {
        char buf[1024];
        size_t len = strlen(args) + 1;

        snprintf(buf, sizeof(buf), "%s", args);
        for (char *p = buf; *p; p++)
                if (*p == '|')
                        *p = 0;
        return vm_parse_cmdline(buf, len, ret);
}

static void test_cmdline(void) {
        static const struct {
                const char *args;
                int r, cpus, threads;
                bool qemu, dbg;
                const char *name;
        } cases[] = {
                { "/usr/bin/qemu-system-x86_64|-name|vm1,debug-threads=on|-smp|2", 0, 2, 1, true, true, "vm1" },
                { "qemu-system-x86_64|-smp|4,threads=2|-name|guest=a,debug-threads=on", 0, 4, 2, true, true, "a" },
                { "qemu-system-x86_64|-smp|sockets=1,cores=2,threads=2", 0, 4, 2, true, false, "" },
                { "qemu-system-x86_64|-smp|cpus=3,maxcpus=8", 0, 3, 1, true, false, "" },
                { "qemu-system-aarch64|--smp|2|-name|x,debug-threads=off", 0, 2, 1, true, false, "x" },
                { "qemu-system-x86_64|-name|x", 0, 1, 1, true, false, "x" },
                { "qemu-system-x86_64|-smp|two", -22, 1, 1, true, false, "" },
                { "qemu-system-x86_64|-smp|2,threads=0", -22, 2, 1, true, false, "" },
                { "/bin/sleep|-smp|2", 0, 2, 1, false, false, "" },
                { "qemu-system-x86_64|-smp", 0, 1, 1, true, false, "" },
        };
        char detail[512] = "";

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && !detail[0]; i++) {
                struct vm_cmdline c;
                int r = cmdline(cases[i].args, &c);

                if (r != cases[i].r || (r == 0 && (c.cpus != cases[i].cpus || c.threads != cases[i].threads)) ||
                    c.qemu != cases[i].qemu || c.debug_threads != cases[i].dbg || strcmp(c.name, cases[i].name))
                        snprintf(detail, sizeof(detail), "%s: r=%d cpus=%d threads=%d qemu=%d dbg=%d name=%s",
                                 cases[i].args, r, c.cpus, c.threads, c.qemu, c.debug_threads, c.name);
        }
        test_report("vmpin/cmdline", detail);
}

static void test_comm(void) {
        static const struct {
                const char *comm;
                int idx;
        } cases[] = {
                { "CPU 0/TCG\n", 0 }, { "CPU 1/KVM", 1 }, { "CPU 17/KVM\n", 17 }, { "qemu-system-x86\n", -1 },
                { "CPU 0/TCGx1", -1 }, { "worker\n", -1 }, { "CPU /TCG", -1 }, { "IO mon_iothread", -1 },
        };
        char detail[256] = "";

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && !detail[0]; i++)
                if (vm_vcpu_index(cases[i].comm) != cases[i].idx)
                        snprintf(detail, sizeof(detail), "'%s': %d, expected %d", cases[i].comm,
                                 vm_vcpu_index(cases[i].comm), cases[i].idx);
        test_report("vmpin/vcpu-thread-names", detail);
}

static void test_auto_level(void) {
        struct topology q, q1;
        char detail[256] = "";

        if (machine(&q, 2, 2, 2, false, -1) < 0 || machine(&q1, 2, 2, 2, false, 1) < 0) {
                test_report("vmpin/auto-level", "topology");
                return;
        }
        /* qemu guest: smt (2), mc (4), die (8). max_level 1: only smt. */
        if (vm_auto_level(&q, 1) != 1 || vm_auto_level(&q, 2) != 1 || vm_auto_level(&q, 3) != 2 ||
            vm_auto_level(&q, 4) != 2 || vm_auto_level(&q, 8) != 3 || vm_auto_level(&q, 9) != -1)
                snprintf(detail, sizeof(detail), "levels for 1,2,3,4,8,9 vCPUs: %d %d %d %d %d %d",
                         vm_auto_level(&q, 1), vm_auto_level(&q, 2), vm_auto_level(&q, 3), vm_auto_level(&q, 4),
                         vm_auto_level(&q, 8), vm_auto_level(&q, 9));
        else if (vm_auto_level(&q1, 2) != 1 || vm_auto_level(&q1, 4) != -1)
                snprintf(detail, sizeof(detail), "max_level 1: 2 vCPUs %d, 4 vCPUs %d", vm_auto_level(&q1, 2),
                         vm_auto_level(&q1, 4));
        topology_free(&q);
        topology_free(&q1);
        test_report("vmpin/auto-level", detail);
}

static void plan_case(const char *name, int p, int c, int th, bool inter, const char *cpus, int nvcpus, int threads,
                      enum vm_pin pin, int want_r, const char *want) {
        struct topology t;
        struct cpuset set;
        char detail[256] = "", got[256] = "";
        int plan[64], r;
        size_t len = 0;

        if (machine(&t, p, c, th, inter, -1) < 0 || cpuset_parse(cpus, &set) < 0) {
                test_report(name, "setup");
                return;
        }
        r = vm_pin_plan(&t, &set, nvcpus, threads, pin, plan);
        for (int i = 0; r == 0 && i < nvcpus; i++)
                len += snprintf(got + len, sizeof(got) - len, "%s%d", i ? " " : "", plan[i]);
        if (r != want_r || (r == 0 && strcmp(got, want)))
                snprintf(detail, sizeof(detail), "r=%d plan '%s', expected r=%d '%s'", r, got, want_r, want);
        topology_free(&t);
        test_report(name, detail);
}

static void test_parse_pins(void) {
        int cpu[4], n;
        char detail[128] = "";

        n = vm_parse_pins("CPUs=3 rounded up to 4; pinned vCPU:CPU 0:2 1:3 2:6", cpu, 4);
        if (n != 3 || cpu[0] != 2 || cpu[1] != 3 || cpu[2] != 6 || cpu[3] != -1)
                snprintf(detail, sizeof(detail), "n=%d %d %d %d %d", n, cpu[0], cpu[1], cpu[2], cpu[3]);
        else if (vm_parse_pins("placed", cpu, 4) != 0 || vm_parse_pins(NULL, cpu, 4) != 0 ||
                 vm_parse_pins("pinned vCPU:CPU 9:1", cpu, 4) != 0)
                snprintf(detail, sizeof(detail), "no pins or out of range: not 0");
        test_report("vmpin/parse-pins", detail);
}

int main(void) {
        test_parse_pins();
        test_cmdline();
        test_comm();
        test_auto_level();
        /* The guest test's case: 2 vCPUs on core 2-3. */
        plan_case("vmpin/plan-2-on-core", 2, 2, 2, false, "2-3", 2, 1, VM_PIN_CORES, 0, "2 3");
        /* 4 vCPUs on a package of 4 cores x 2: one per core, siblings idle. */
        plan_case("vmpin/plan-cores-before-siblings", 1, 4, 2, false, "0-7", 4, 1, VM_PIN_CORES, 0, "0 2 4 6");
        plan_case("vmpin/plan-cores-interleaved", 1, 4, 2, true, "0-7", 4, 1, VM_PIN_CORES, 0, "0 1 2 3");
        plan_case("vmpin/plan-cores-then-siblings", 1, 2, 2, false, "0-3", 3, 1, VM_PIN_CORES, 0, "0 2 1");
        /* Pin=siblings packs. */
        plan_case("vmpin/plan-siblings", 1, 4, 2, false, "0-7", 4, 1, VM_PIN_SIBLINGS, 0, "0 1 2 3");
        /* Guest threads=2: guest sibling pairs onto host siblings, even with Pin=cores. */
        plan_case("vmpin/plan-guest-smt", 1, 4, 2, false, "0-7", 4, 2, VM_PIN_CORES, 0, "0 1 2 3");
        plan_case("vmpin/plan-guest-smt-interleaved", 1, 4, 2, true, "0-7", 4, 2, VM_PIN_CORES, 0, "0 4 1 5");
        /* No host SMT: guest threads cannot land on siblings; one per CPU. */
        plan_case("vmpin/plan-guest-smt-no-host-smt", 1, 4, 1, false, "0-3", 4, 2, VM_PIN_CORES, 0, "0 1 2 3");
        plan_case("vmpin/plan-too-small", 2, 2, 2, false, "2-3", 3, 1, VM_PIN_CORES, -28, "");
        plan_case("vmpin/plan-pin-no", 2, 2, 2, false, "2-3", 2, 1, VM_PIN_NO, -22, "");
        return test_failures ? 1 : 0;
}
