/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topology.h"
#include "util.h"

/* A partition read from text: sorted, non-empty, one cpuset per line. */
struct partition {
        int n;
        struct cpuset *sets;
};

static void partition_free(struct partition *p) {
        free(p->sets);
        p->sets = NULL;
        p->n = 0;
}

static int cmp_first(const void *a, const void *b) {
        int fa = cpuset_next(a, 0), fb = cpuset_next(b, 0);
        return (fa > fb) - (fa < fb);
}

static int partition_parse(const char *text, struct partition *ret, char *err, size_t errlen) {
        struct partition p = {};
        const char *line = text;
        int lineno = 0;

        while (line && *line) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t) (nl - line) : strlen(line);
                char buf[4096];
                struct cpuset s;
                struct cpuset *n;

                lineno++;
                if (len >= sizeof(buf)) {
                        partition_free(&p);
                        return errf(err, errlen, -E2BIG, "line %d: cpulist too long", lineno);
                }
                memcpy(buf, line, len);
                buf[len] = 0;
                line = nl ? nl + 1 : NULL;
                if (strspn(buf, " \t\r") == len)
                        continue;
                if (cpuset_parse(buf, &s) < 0 || cpuset_empty(&s)) {
                        partition_free(&p);
                        return errf(err, errlen, -EINVAL, "line %d: bad cpulist '%s'", lineno, buf);
                }
                n = realloc(p.sets, (p.n + 1) * sizeof(*n));
                if (!n) {
                        partition_free(&p);
                        return -ENOMEM;
                }
                p.sets = n;
                p.sets[p.n++] = s;
        }
        if (p.n > 0)
                qsort(p.sets, p.n, sizeof(*p.sets), cmp_first);
        *ret = p;
        return 0;
}

/* Check that p partitions all of online: disjoint and covering. */
static int partition_check(const struct partition *p, const struct cpuset *online, char *err, size_t errlen) {
        struct cpuset seen;
        char a[64], b[256];

        cpuset_zero(&seen);
        for (int i = 0; i < p->n; i++) {
                if (cpuset_intersects(&seen, &p->sets[i]))
                        return errf(err, errlen, -EINVAL, "span %s overlaps another span",
                                    cpuset_format(&p->sets[i], a, sizeof(a)));
                if (!cpuset_subset(&p->sets[i], online))
                        return errf(err, errlen, -EINVAL, "span %s contains offline CPUs",
                                    cpuset_format(&p->sets[i], a, sizeof(a)));
                cpuset_or(&seen, &p->sets[i]);
        }
        if (!cpuset_equal(&seen, online)) {
                struct cpuset missing = *online;
                cpuset_andnot(&missing, &seen);
                return errf(err, errlen, -EINVAL, "spans do not cover online CPUs %s",
                            cpuset_format(&missing, b, sizeof(b)));
        }
        return 0;
}

static bool partition_matches_level(const struct partition *p, const struct topo_level *l) {
        if (!p || p->n != l->nspans)
                return false;
        for (int i = 0; i < p->n; i++)
                if (!cpuset_equal(&p->sets[i], &l->spans[i].cpus))
                        return false;
        return true;
}

static int level_fill(struct topo_level *l, const char *name, const struct partition *p, int ncpu_ids) {
        snprintf(l->name, sizeof(l->name), "%s", name);
        l->nspans = p->n;
        l->spans = calloc(p->n, sizeof(*l->spans));
        l->span_of = malloc(sizeof(int) * (ncpu_ids > 0 ? ncpu_ids : 1));
        if (!l->spans || !l->span_of)
                return -ENOMEM;
        for (int c = 0; c < ncpu_ids; c++)
                l->span_of[c] = -1;
        l->uniform = true;
        for (int i = 0; i < p->n; i++) {
                struct topo_span *s = &l->spans[i];
                s->cpus = p->sets[i];
                s->first = cpuset_next(&s->cpus, 0);
                s->ncpus = cpuset_count(&s->cpus);
                s->parent = -1;
                CPUSET_FOREACH(c, &s->cpus)
                        l->span_of[c] = i;
                if (i > 0 && s->ncpus != l->max_span_cpus)
                        l->uniform = false;
                if (s->ncpus > l->max_span_cpus)
                        l->max_span_cpus = s->ncpus;
        }
        return 0;
}

/* Link level k to level k-1: every child span must sit inside one parent. */
static int level_link(struct topology *t, int k, char *err, size_t errlen) {
        struct topo_level *up = &t->levels[k], *down = &t->levels[k - 1];
        char a[64];

        for (int i = 0; i < down->nspans; i++) {
                struct topo_span *s = &down->spans[i];
                int p = up->span_of[s->first];

                if (p < 0 || !cpuset_subset(&s->cpus, &up->spans[p].cpus))
                        return errf(err, errlen, -EINVAL, "level %d (%s): span %s does not nest in level %d",
                                    k - 1, down->name, cpuset_format(&s->cpus, a, sizeof(a)), k);
                s->parent = p;
                up->spans[p].nchildren++;
        }
        for (int p = 0; p < up->nspans; p++) {
                up->spans[p].children = malloc(sizeof(int) * up->spans[p].nchildren);
                if (!up->spans[p].children)
                        return -ENOMEM;
                up->spans[p].nchildren = 0;
        }
        for (int i = 0; i < down->nspans; i++) {
                struct topo_span *ps = &up->spans[down->spans[i].parent];
                ps->children[ps->nchildren++] = i;
        }
        return 0;
}

static int find_level(const struct topology *t, const struct partition *p) {
        for (int k = 1; k < t->nlevels; k++)
                if (partition_matches_level(p, &t->levels[k]))
                        return k;
        return -1;
}

static int find_level_named(const struct topology *t, const char *name) {
        for (int k = 1; k < t->nlevels; k++)
                if (strcasecmp(t->levels[k].name, name) == 0)
                        return k;
        return -1;
}

static int parse_optional(const char *text, struct partition *p, const struct cpuset *online) {
        char err[8];
        struct partition tmp = {};
        struct cpuset all;

        *p = (struct partition) {};
        if (!text || partition_parse(text, &tmp, err, sizeof(err)) < 0)
                return 0;
        /* Only trust a hardware partition that covers exactly the online CPUs. */
        cpuset_zero(&all);
        for (int i = 0; i < tmp.n; i++)
                cpuset_or(&all, &tmp.sets[i]);
        if (tmp.n == 0 || !cpuset_equal(&all, online) || partition_check(&tmp, online, err, sizeof(err)) < 0) {
                partition_free(&tmp);
                return 0;
        }
        *p = tmp;
        return 0;
}

int topology_build(const struct topo_input *in, struct topology *ret, char *err, size_t errlen) {
        struct topology t = { .kernel = in->kernel, .max_level = in->max_level,
                              .smt_level = -1, .llc_level = -1, .package_level = -1 };
        struct partition parts[TOPO_MAX_LEVELS] = {};
        struct partition cpus = {}, smt = {}, llc = {}, pkg = {};
        char sub[256];
        int r;

        if (in->nlevels < 0 || in->nlevels >= TOPO_MAX_LEVELS)
                return errf(err, errlen, -E2BIG, "%d levels is too many", in->nlevels);

        for (int k = 1; k <= in->nlevels; k++) {
                r = partition_parse(in->spans[k - 1] ? in->spans[k - 1] : "", &parts[k], sub, sizeof(sub));
                if (r < 0) {
                        errf(err, errlen, r, "level %d: %s", k, sub);
                        goto fail;
                }
                if (parts[k].n == 0) {
                        r = errf(err, errlen, -EINVAL, "level %d: no spans", k);
                        goto fail;
                }
        }

        if (in->online) {
                if (cpuset_parse(in->online, &t.online) < 0) {
                        r = errf(err, errlen, -EINVAL, "bad online CPU list '%s'", in->online);
                        goto fail;
                }
        } else
                for (int i = 0; i < parts[1].n; i++)
                        cpuset_or(&t.online, &parts[1].sets[i]);
        if (cpuset_empty(&t.online)) {
                r = errf(err, errlen, -EINVAL, "no online CPUs");
                goto fail;
        }
        t.ncpu_ids = cpuset_last(&t.online) + 1;

        /* Level 0: single CPUs. */
        cpus.n = cpuset_count(&t.online);
        cpus.sets = calloc(cpus.n, sizeof(*cpus.sets));
        if (!cpus.sets) {
                r = -ENOMEM;
                goto fail;
        }
        {
                int i = 0;
                CPUSET_FOREACH(c, &t.online)
                        cpuset_set(&cpus.sets[i++], c);
        }
        t.nlevels = in->nlevels + 1;
        r = level_fill(&t.levels[0], "cpu", &cpus, t.ncpu_ids);
        if (r < 0)
                goto fail;

        for (int k = 1; k <= in->nlevels; k++) {
                const char *name = in->names[k - 1] ? in->names[k - 1] : "";

                r = partition_check(&parts[k], &t.online, sub, sizeof(sub));
                if (r < 0) {
                        errf(err, errlen, r, "level %d (%s): %s", k, name, sub);
                        goto fail;
                }
                r = level_fill(&t.levels[k], name, &parts[k], t.ncpu_ids);
                if (r < 0)
                        goto fail;
                r = level_link(&t, k, err, errlen);
                if (r < 0)
                        goto fail;
        }

        parse_optional(in->smt_part, &smt, &t.online);
        parse_optional(in->llc_part, &llc, &t.online);
        parse_optional(in->pkg_part, &pkg, &t.online);
        /* The kernel names its SMT domain; trust the name over the shape,
         * but fall back to the shape for kernels that name it otherwise. */
        t.smt_level = find_level_named(&t, "smt");
        if (t.smt_level < 0 && smt.n > 0 && smt.n < cpus.n)
                t.smt_level = find_level(&t, &smt);
        t.llc_level = find_level(&t, &llc);
        if (t.llc_level < 0)
                t.llc_level = find_level_named(&t, "mc");
        t.package_level = find_level(&t, &pkg);

        if (!t.kernel)
                snprintf(t.unavailable, sizeof(t.unavailable),
                         "the kernel has no coscheduling support (no /sys/kernel/cosched)");
        else if (t.max_level <= 0)
                snprintf(t.unavailable, sizeof(t.unavailable),
                         "coscheduling is disabled in the kernel (max_level is 0)");
        r = 0;
        *ret = t;
        t = (struct topology) {};
fail:
        for (int k = 0; k < TOPO_MAX_LEVELS; k++)
                partition_free(&parts[k]);
        partition_free(&cpus);
        partition_free(&smt);
        partition_free(&llc);
        partition_free(&pkg);
        topology_free(&t);
        return r;
}

void topology_free(struct topology *t) {
        for (int k = 0; k < TOPO_MAX_LEVELS; k++) {
                struct topo_level *l = &t->levels[k];
                for (int i = 0; l->spans && i < l->nspans; i++)
                        free(l->spans[i].children);
                free(l->spans);
                free(l->span_of);
                l->spans = NULL;
                l->span_of = NULL;
                l->nspans = 0;
        }
        t->nlevels = 0;
}

bool topology_equal(const struct topology *a, const struct topology *b) {
        if (a->nlevels != b->nlevels || a->max_level != b->max_level || a->kernel != b->kernel ||
            !cpuset_equal(&a->online, &b->online))
                return false;
        for (int k = 0; k < a->nlevels; k++) {
                const struct topo_level *x = &a->levels[k], *y = &b->levels[k];
                if (x->nspans != y->nspans || strcmp(x->name, y->name) != 0)
                        return false;
                for (int i = 0; i < x->nspans; i++)
                        if (!cpuset_equal(&x->spans[i].cpus, &y->spans[i].cpus))
                                return false;
        }
        return true;
}

/* ---- reading sysfs ---- */

/* Append the cpulist in path (restricted to online) to a text partition
 * unless an identical line is already there. */
static int collect(char **text, const char *path, const struct cpuset *online) {
        char *content = NULL, line[4096];
        struct cpuset s;
        int r;

        r = read_file_str(path, &content);
        if (r < 0)
                return r;
        r = cpuset_parse(content, &s);
        free(content);
        if (r < 0)
                return r;
        cpuset_and(&s, online);
        if (cpuset_empty(&s))
                return 0;
        cpuset_format(&s, line, sizeof(line));
        if (*text) {
                /* Look for the line as a whole line. */
                size_t len = strlen(line);
                for (const char *p = *text; (p = strstr(p, line)); p += len)
                        if ((p == *text || p[-1] == '\n') && p[len] == '\n')
                                return 0;
        }
        return strappendf(text, "%s\n", line);
}

static int load_fallback_parts(const char *root, const struct cpuset *online, char **smt, char **llc, char **pkg) {
        char path[4096];
        int best_cache = -1;

        CPUSET_FOREACH(c, online) {
                snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", root, c);
                if (collect(smt, path, online) < 0) {
                        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/topology/core_cpus_list", root, c);
                        (void) collect(smt, path, online);
                }
                snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/topology/package_cpus_list", root, c);
                if (collect(pkg, path, online) < 0) {
                        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/topology/core_siblings_list", root, c);
                        (void) collect(pkg, path, online);
                }
        }

        /* The last-level cache: the cache index of the highest level. */
        for (int idx = 0, best_level = -1; idx < 16; idx++) {
                char *v = NULL;
                int level;

                snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/cache/index%d/level", root,
                         cpuset_next(online, 0), idx);
                if (read_file_str(path, &v) < 0)
                        continue;
                if (safe_atoi(v, &level) == 0 && level > best_level) {
                        best_level = level;
                        best_cache = idx;
                }
                free(v);
        }
        if (best_cache >= 0)
                CPUSET_FOREACH(c, online) {
                        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
                                 root, c, best_cache);
                        (void) collect(llc, path, online);
                }
        return 0;
}

/* Does the text partition have fewer, larger parts than prev (i.e. is it a
 * level of its own)? Identical partitions would make an empty level. */
static bool partition_text_equal(const char *a, const char *b) {
        return a && b && strcmp(a, b) == 0;
}

int topology_load(const char *root, struct topology *ret, char *err, size_t errlen) {
        struct topo_input in = {};
        char path[4096], *online = NULL, *max = NULL, *smt = NULL, *llc = NULL, *pkg = NULL;
        char *names[TOPO_MAX_LEVELS] = {}, *spans[TOPO_MAX_LEVELS] = {};
        struct cpuset on;
        int r;

        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", root);
        r = read_file_str(path, &online);
        if (r < 0)
                return errf(err, errlen, r, "cannot read %s: %s", path, strerror(-r));
        if (cpuset_parse(online, &on) < 0) {
                r = errf(err, errlen, -EINVAL, "%s: bad cpulist", path);
                goto out;
        }
        in.online = online;
        load_fallback_parts(root, &on, &smt, &llc, &pkg);
        in.smt_part = smt;
        in.llc_part = llc;
        in.pkg_part = pkg;

        snprintf(path, sizeof(path), "%s/sys/kernel/cosched/max_level", root);
        r = read_file_str(path, &max);
        if (r >= 0) {
                int n;
                if (safe_atoi(max, &n) < 0 || n < 0 || n >= TOPO_MAX_LEVELS) {
                        r = errf(err, errlen, -EINVAL, "%s: bad value '%s'", path, max);
                        goto out;
                }
                in.kernel = true;
                in.max_level = n;
                for (int k = 1; k < TOPO_MAX_LEVELS; k++) {
                        snprintf(path, sizeof(path), "%s/sys/kernel/cosched/levels/%d/spans", root, k);
                        if (read_file_str(path, &spans[k - 1]) < 0)
                                break;
                        snprintf(path, sizeof(path), "%s/sys/kernel/cosched/levels/%d/name", root, k);
                        if (read_file_str(path, &names[k - 1]) < 0)
                                names[k - 1] = strdup("");
                        in.nlevels = k;
                }
        } else {
                /* Stock kernel: derive levels from the hardware so that the
                 * topology can be shown; coscheduling stays refused. */
                const char *cands[3] = { smt, llc, pkg }, *cnames[3] = { "smt", "llc", "package" };
                const char *prev = NULL;
                for (int i = 0; i < 3; i++) {
                        if (!cands[i] || partition_text_equal(prev, cands[i]))
                                continue;
                        if (i == 0 && cpuset_count(&on) == (int) strcnt(smt, '\n'))
                                continue; /* no SMT: threads are single CPUs */
                        names[in.nlevels] = strdup(cnames[i]);
                        spans[in.nlevels] = strdup(cands[i]);
                        in.nlevels++;
                        prev = cands[i];
                }
        }
        for (int k = 0; k < in.nlevels; k++) {
                in.names[k] = strstrip(names[k]);
                in.spans[k] = spans[k];
        }
        r = topology_build(&in, ret, err, errlen);
out:
        for (int k = 0; k < TOPO_MAX_LEVELS; k++) {
                free(names[k]);
                free(spans[k]);
        }
        free(online);
        free(max);
        free(smt);
        free(llc);
        free(pkg);
        return r;
}

/* ---- level names ---- */

static const char *const level_words[] = {
        "core", "smt", "package", "socket", "llc", "cache", "cls", "mc", "die", "numa", NULL,
};

bool topology_level_spec_valid(const char *spec) {
        int n;

        if (safe_atoi(spec, &n) == 0)
                return n >= 1 && n < TOPO_MAX_LEVELS;
        for (size_t i = 0; level_words[i]; i++)
                if (strcasecmp(spec, level_words[i]) == 0)
                        return true;
        return false;
}

int topology_resolve_level(const struct topology *t, const char *spec, int *level, char *err, size_t errlen) {
        int n = -1;

        if (safe_atoi(spec, &n) == 0) {
                if (n < 1 || n >= t->nlevels)
                        return errf(err, errlen, -ENOENT, "level %d does not exist (this machine has levels 1-%d)",
                                    n, t->nlevels - 1);
        } else if (!strcasecmp(spec, "core") || !strcasecmp(spec, "smt")) {
                n = t->smt_level;
                if (n < 0)
                        return errf(err, errlen, -ENOENT, "level '%s': no SMT level on this machine", spec);
        } else if (!strcasecmp(spec, "package") || !strcasecmp(spec, "socket")) {
                n = t->package_level;
                if (n < 0)
                        return errf(err, errlen, -ENOENT, "level '%s': no level spans exactly the packages", spec);
        } else if (!strcasecmp(spec, "llc") || !strcasecmp(spec, "cache")) {
                n = t->llc_level;
                if (n < 0)
                        return errf(err, errlen, -ENOENT, "level '%s': no level spans exactly the last-level caches", spec);
        } else {
                n = find_level_named(t, spec);
                if (n < 0)
                        return errf(err, errlen, -ENOENT, "level '%s' does not exist on this machine", spec);
        }
        *level = n;
        return 0;
}
