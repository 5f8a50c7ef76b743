/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "vmpin.h"

/* One -smp key=value; n is its value, or -1 if absent. */
static int smp_key(const char *opt, const char *key) {
        size_t k = strlen(key);
        int n;

        for (const char *p = opt; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
                if (!strncmp(p, key, k) && p[k] == '=') {
                        char v[16];
                        snprintf(v, sizeof(v), "%.*s", (int) strcspn(p + k + 1, ","), p + k + 1);
                        return safe_atoi(v, &n) < 0 || n < 1 ? -2 : n;
                }
        return -1;
}

/* "-smp 4", "-smp 4,threads=2", "-smp cpus=4,sockets=1,cores=2,threads=2",
 * "-smp sockets=1,cores=2" (cpus the product), as QEMU reads them. */
static int parse_smp(const char *opt, struct vm_cmdline *ret) {
        static const char *const topo[] = { "sockets", "dies", "clusters", "cores", "threads" };
        int cpus = -1, prod = 1, v;
        char first[16];

        snprintf(first, sizeof(first), "%.*s", (int) strcspn(opt, ","), opt);
        if (!strchr(first, '=') && (safe_atoi(first, &cpus) < 0 || cpus < 1))
                return -EINVAL;
        if (strchr(first, '='))
                cpus = smp_key(opt, "cpus");
        for (size_t i = 0; i < sizeof(topo) / sizeof(topo[0]); i++) {
                v = smp_key(opt, topo[i]);
                if (v == -2)
                        return -EINVAL;
                prod *= v > 0 ? v : 1;
        }
        if (cpus == -2)
                return -EINVAL;
        ret->cpus = cpus > 0 ? cpus : prod;
        v = smp_key(opt, "threads");
        ret->threads = v > 0 ? v : 1;
        return 0;
}

static void parse_name(const char *opt, struct vm_cmdline *ret) {
        const char *p = opt;

        if (!strncmp(p, "guest=", 6))
                p += 6;
        snprintf(ret->name, sizeof(ret->name), "%.*s", (int) strcspn(p, ","), p);
        for (p = opt; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
                if (!strncmp(p, "debug-threads=on", 16) && (p[16] == ',' || !p[16]))
                        ret->debug_threads = true;
}

int vm_parse_cmdline(const char *buf, size_t len, struct vm_cmdline *ret) {
        const char *arg = buf, *end = buf + len, *base;
        int r = 0;

        *ret = (struct vm_cmdline) { .cpus = 1, .threads = 1 };
        if (!len || buf[len - 1])
                return -EINVAL;
        base = strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
        ret->qemu = !strncmp(base, "qemu-system-", 12);
        for (; arg < end; arg += strlen(arg) + 1) {
                const char *next = arg + strlen(arg) + 1;
                const char *opt = arg[0] == '-' ? arg + 1 + (arg[1] == '-') : NULL;

                if (!opt || next >= end)
                        continue;
                if (!strcmp(opt, "smp") && parse_smp(next, ret) < 0)
                        r = -EINVAL;
                else if (!strcmp(opt, "name"))
                        parse_name(next, ret);
        }
        return r;
}

int vm_vcpu_index(const char *comm) {
        unsigned n;
        char accel[16];
        int k = 0;

        if (sscanf(comm, "CPU %u/%15[A-Za-z]%n", &n, accel, &k) != 2 || (comm[k] && comm[k] != '\n') || n > 8191)
                return -1;
        return (int) n;
}

int vm_auto_level(const struct topology *t, int n) {
        for (int l = 1; l < t->nlevels && l <= t->max_level; l++)
                if (t->levels[l].max_span_cpus >= n)
                        return l;
        return -1;
}

/* The cores of cpus, each as its CPUs in order, cores by first CPU. */
struct cores {
        int n;
        int *start, *len;       /* into cpu */
        int *cpu;
};

static int cores_of(const struct topology *t, const struct cpuset *cpus, struct cores *c) {
        int lvl = t->smt_level > 0 ? t->smt_level : 0, total = cpuset_count(cpus), k = 0;
        const struct topo_level *L = &t->levels[lvl];

        c->n = 0;
        c->cpu = calloc(total + 1, sizeof(int));
        c->start = calloc(total + 1, sizeof(int));
        c->len = calloc(total + 1, sizeof(int));
        if (!c->cpu || !c->start || !c->len)
                return -ENOMEM;
        /* Spans are sorted by first CPU: walking them in order keeps cores in order. */
        for (int s = 0; s < L->nspans; s++) {
                int before = k;
                CPUSET_FOREACH(cpu, &L->spans[s].cpus)
                        if (cpuset_test(cpus, cpu))
                                c->cpu[k++] = cpu;
                if (k > before) {
                        c->start[c->n] = before;
                        c->len[c->n++] = k - before;
                }
        }
        return k;
}

static void cores_free(struct cores *c) {
        free(c->cpu);
        free(c->start);
        free(c->len);
}

int vm_pin_plan(const struct topology *t, const struct cpuset *cpus, int nvcpus, int threads, enum vm_pin pin,
                int *cpu) {
        struct cores c = {};
        int total, i, r = 0;

        if (pin == VM_PIN_NO)
                return -EINVAL;
        total = cores_of(t, cpus, &c);
        if (total < 0 || total < nvcpus) {
                cores_free(&c);
                return total < 0 ? total : -ENOSPC;
        }
        if (threads > 1 && nvcpus % threads == 0 && nvcpus / threads <= c.n) {
                /* Guest core k's threads onto host core k's siblings, if they fit. */
                for (i = 0; i < nvcpus && c.len[i / threads] >= threads; i++)
                        cpu[i] = c.cpu[c.start[i / threads] + i % threads];
                if (i == nvcpus)
                        goto out;
        }
        if (pin == VM_PIN_SIBLINGS) {
                for (i = 0; i < nvcpus; i++)
                        cpu[i] = c.cpu[i];
                goto out;
        }
        /* Round robin over the cores: the j-th pass takes each core's j-th CPU. */
        i = 0;
        for (int j = 0; i < nvcpus; j++)
                for (int k = 0; k < c.n && i < nvcpus; k++)
                        if (j < c.len[k])
                                cpu[i++] = c.cpu[c.start[k] + j];
out:
        cores_free(&c);
        return r;
}

int vm_parse_pins(const char *reason, int *cpu, int n) {
        const char *p = reason ? strstr(reason, "pinned vCPU:CPU") : NULL;
        int k = 0, i, c, used;

        for (int j = 0; j < n; j++)
                cpu[j] = -1;
        if (!p)
                return 0;
        for (p += strlen("pinned vCPU:CPU"); sscanf(p, " %d:%d%n", &i, &c, &used) == 2; p += used)
                if (i >= 0 && i < n && c >= 0) {
                        cpu[i] = c;
                        k = i + 1 > k ? i + 1 : k;
                }
        return k;
}
