/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

/*
 * Bookkeeping for one computation. busy[l][s] counts the unavailable CPUs
 * (reserved or given to a group) of span s at level l, so that "is this span
 * free" is O(1) at every level. free[l][s] is, for the request being placed,
 * the usable capacity (spans or CPUs) below span s of level l.
 */
struct ctx {
        const struct topology *t;
        int *busy[TOPO_MAX_LEVELS];
        int *free[TOPO_MAX_LEVELS];
        int free_root;
        int level;              /* of the request being placed */
        bool weigh_cpus;        /* capacity counts CPUs, not spans */
        struct cpuset taken;
        int ntaken;
};

const char *group_state_to_string(enum group_state s) {
        switch (s) {
        case GROUP_PLACED:
                return "placed";
        case GROUP_PENDING:
                return "pending";
        case GROUP_ERROR:
                return "error";
        case GROUP_WAITING:
                return "waiting";
        }
        return "?";
}

static void ctx_free(struct ctx *c) {
        for (int l = 0; l < TOPO_MAX_LEVELS; l++) {
                free(c->busy[l]);
                free(c->free[l]);
                c->busy[l] = c->free[l] = NULL;
        }
}

static int ctx_init(struct ctx *c, const struct topology *t, const struct cpuset *reserved) {
        *c = (struct ctx) { .t = t };
        for (int l = 0; l < t->nlevels; l++) {
                int n = t->levels[l].nspans;
                c->busy[l] = calloc(n ? n : 1, sizeof(int));
                c->free[l] = calloc(n ? n : 1, sizeof(int));
                if (!c->busy[l] || !c->free[l]) {
                        ctx_free(c);
                        return -ENOMEM;
                }
        }
        if (reserved)
                CPUSET_FOREACH(cpu, reserved) {
                        if (cpu >= t->ncpu_ids)
                                break;
                        for (int l = 0; l < t->nlevels; l++) {
                                int s = t->levels[l].span_of[cpu];
                                if (s >= 0)
                                        c->busy[l][s]++;
                        }
                }
        return 0;
}

static void mark_busy(struct ctx *c, const struct cpuset *cpus) {
        CPUSET_FOREACH(cpu, cpus) {
                if (cpu >= c->t->ncpu_ids)
                        break;
                for (int l = 0; l < c->t->nlevels; l++) {
                        int s = c->t->levels[l].span_of[cpu];
                        if (s >= 0)
                                c->busy[l][s]++;
                }
        }
}

static bool span_allowed(const struct topo_span *s, const struct cpuset *allowed) {
        return !allowed || cpuset_subset(&s->cpus, allowed);
}

static int span_weight(const struct ctx *c, const struct topo_span *s) {
        return c->weigh_cpus ? s->ncpus : 1;
}

/* Capacity of every span at and above the request's level. */
static void compute_free(struct ctx *c, const struct placement_request *r) {
        const struct topology *t = c->t;
        int L = r->level;

        for (int l = L + 1; l < t->nlevels; l++)
                memset(c->free[l], 0, sizeof(int) * t->levels[l].nspans);
        c->free_root = 0;
        for (int s = 0; s < t->levels[L].nspans; s++) {
                const struct topo_span *sp = &t->levels[L].spans[s];
                int w = 0;

                if (c->busy[L][s] == 0 && span_allowed(sp, r->allowed))
                        w = span_weight(c, sp);
                c->free[L][s] = w;
                c->free_root += w;
                for (int l = L + 1, p = sp->parent; l < t->nlevels && p >= 0; p = t->levels[l].spans[p].parent, l++)
                        c->free[l][p] += w;
        }
}

static void take_span(struct ctx *c, int s) {
        const struct topology *t = c->t;
        const struct topo_span *sp = &t->levels[c->level].spans[s];
        int w = c->free[c->level][s];

        cpuset_or(&c->taken, &sp->cpus);
        c->ntaken++;
        c->free[c->level][s] = 0;
        c->free_root -= w;
        for (int l = c->level + 1, p = sp->parent; l < t->nlevels && p >= 0; p = t->levels[l].spans[p].parent, l++)
                c->free[l][p] -= w;
}

/* Children of span s at level l (l == nlevels: the virtual root). */
static void children_of(const struct ctx *c, int l, int s, const int **ret, int *n) {
        if (l == c->t->nlevels) {
                *ret = NULL; /* identity: 0..nspans-1 of the top level */
                *n = c->t->levels[l - 1].nspans;
                return;
        }
        *ret = c->t->levels[l].spans[s].children;
        *n = c->t->levels[l].spans[s].nchildren;
}

/*
 * Take at least need capacity below span s of level l, packing: if one
 * child can hold all of it, descend into the fullest such child (best fit,
 * so partly used containers fill first and whole ones stay free); otherwise
 * take the child with most room whole and go on. Returns capacity taken.
 */
static int alloc_pack(struct ctx *c, int l, int s, int need) {
        int got = 0;

        if (l == c->level) {
                int w = c->free[l][s];
                take_span(c, s);
                return w;
        }
        while (got < need) {
                const int *ch;
                int n, best = -1, best_free = 0, big = -1, big_free = 0;

                children_of(c, l, s, &ch, &n);
                for (int i = 0; i < n; i++) {
                        int k = ch ? ch[i] : i, f = c->free[l - 1][k];
                        /* Ties go to the smaller span: big ones stay whole. */
                        if (f >= need - got &&
                            (best < 0 || f < best_free ||
                             (f == best_free && c->t->levels[l - 1].spans[k].ncpus < c->t->levels[l - 1].spans[best].ncpus))) {
                                best = k;
                                best_free = f;
                        }
                        if (f > big_free) {
                                big = k;
                                big_free = f;
                        }
                }
                if (best >= 0)
                        return got + alloc_pack(c, l - 1, best, need - got);
                if (big < 0)
                        break; /* cannot happen: capacity was checked */
                got += alloc_pack(c, l - 1, big, big_free);
        }
        return got;
}

/* The level whose spans a spread request is spread over. */
static int spread_level(const struct topology *t, int L) {
        if (t->package_level > L)
                return t->package_level;
        return L + 1 < t->nlevels ? L + 1 : -1;
}

static void alloc_spread(struct ctx *c, int need) {
        int P = spread_level(c->t, c->level), got = 0;

        if (P < 0) {
                alloc_pack(c, c->t->nlevels, 0, need);
                return;
        }
        while (got < need) {
                int best = -1;
                for (int k = 0; k < c->t->levels[P].nspans; k++)
                        if (c->free[P][k] > 0 && (best < 0 || c->free[P][k] > c->free[P][best]))
                                best = k;
                if (best < 0)
                        break;
                /* One span at a time, packed inside the container. */
                got += alloc_pack(c, P, best, 1);
        }
}

static const char *level_name(const struct topology *t, int l) {
        return t->levels[l].name[0] ? t->levels[l].name : "?";
}

static int request_need(const struct placement_request *r) {
        return r->cpus ? (int) r->cpus : (int) r->spans;
}

/* Reasons a request can never be placed on this topology. */
static bool check_request(const struct topology *t, const struct placement_request *r, struct placement_result *o) {
        if (r->error) {
                o->state = GROUP_ERROR;
                snprintf(o->reason, sizeof(o->reason), "%s", r->error);
                return false;
        }
        if (r->absent) {
                o->state = GROUP_PENDING;
                snprintf(o->reason, sizeof(o->reason), "%s", r->absent);
                return false;
        }
        if (r->level < 1 || r->level >= t->nlevels) {
                o->state = GROUP_ERROR;
                snprintf(o->reason, sizeof(o->reason), "level %d does not exist", r->level);
                return false;
        }
        if (t->unavailable[0]) {
                o->state = GROUP_ERROR;
                snprintf(o->reason, sizeof(o->reason), "%s", t->unavailable);
                return false;
        }
        if (r->level > t->max_level) {
                o->state = GROUP_ERROR;
                snprintf(o->reason, sizeof(o->reason), "level %d (%s) is above the kernel's max_level %d",
                         r->level, level_name(t, r->level), t->max_level);
                return false;
        }
        if ((r->cpus == 0) == (r->spans == 0)) {
                o->state = GROUP_ERROR;
                snprintf(o->reason, sizeof(o->reason), "size must be given in CPUs or in spans");
                return false;
        }
        return true;
}

/* Is the group's current placement still whole free allowed spans of its
 * level, of the size it asks for? Then it stays where it is. */
static bool current_still_fits(struct ctx *c, const struct placement_request *r) {
        const struct topo_level *lv = &c->t->levels[r->level];
        struct cpuset left = *r->current;
        int have = 0, smallest = 1 << 30, nspans = 0;

        if (cpuset_empty(r->current) || (r->allowed && !cpuset_subset(r->current, r->allowed)))
                return false;
        while (!cpuset_empty(&left)) {
                int cpu = cpuset_next(&left, 0), s;
                if (cpu >= c->t->ncpu_ids || (s = lv->span_of[cpu]) < 0)
                        return false;
                if (!cpuset_subset(&lv->spans[s].cpus, &left) || c->busy[r->level][s] != 0)
                        return false;
                cpuset_andnot(&left, &lv->spans[s].cpus);
                have += r->cpus ? lv->spans[s].ncpus : 1;
                if (lv->spans[s].ncpus < smallest)
                        smallest = lv->spans[s].ncpus;
                nspans++;
        }
        if (r->spans)
                return have == (int) r->spans;
        /* Enough CPUs, and not a span more than needed. */
        return have >= (int) r->cpus && have - smallest < (int) r->cpus;
}

static void place_one(struct ctx *c, const struct placement_request *r, struct placement_result *o) {
        int need = request_need(r);

        c->level = r->level;
        c->weigh_cpus = r->cpus > 0;
        cpuset_zero(&c->taken);
        c->ntaken = 0;
        compute_free(c, r);
        if (c->free_root < need) {
                o->state = GROUP_PENDING;
                if (r->cpus)
                        snprintf(o->reason, sizeof(o->reason),
                                 "needs %d CPUs in whole level-%d (%s) spans, %d free", need, r->level,
                                 level_name(c->t, r->level), c->free_root);
                else
                        snprintf(o->reason, sizeof(o->reason), "needs %d level-%d (%s) spans, %d free",
                                 need, r->level, level_name(c->t, r->level), c->free_root);
                return;
        }
        if (r->pref == PREF_SPREAD)
                alloc_spread(c, need);
        else
                alloc_pack(c, c->t->nlevels, 0, need);
        o->state = GROUP_PLACED;
        o->cpus = c->taken;
        o->nspans = c->ntaken;
        o->moved = r->current && !cpuset_equal(r->current, &o->cpus);
        o->reason[0] = 0;
        mark_busy(c, &o->cpus);
}

/* Priority order: higher first, then by name, so that it is deterministic. */
static int cmp_priority(const void *a, const void *b, void *base) {
        const struct placement_request *r = base;
        const struct placement_request *x = &r[*(const size_t *) a], *y = &r[*(const size_t *) b];

        if (x->priority != y->priority)
                return x->priority > y->priority ? -1 : 1;
        return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int run(const struct topology *t, const struct placement_options *o, size_t n,
               const struct placement_request *r, const size_t *order, bool keep, struct placement_result *out) {
        struct ctx c;
        int res = ctx_init(&c, t, o->reserved);

        if (res < 0)
                return res;
        for (size_t i = 0; i < n; i++)
                out[i] = (struct placement_result) { .state = GROUP_PENDING };

        /* Pass 1: groups that are placed and still fit stay where they are,
         * in priority order so that a conflict goes to the more important. */
        if (keep)
                for (size_t j = 0; j < n; j++) {
                        size_t i = order[j];
                        if (!r[i].current || !check_request(t, &r[i], &out[i]))
                                continue;
                        if (current_still_fits(&c, &r[i])) {
                                const struct topo_level *lv = &t->levels[r[i].level];
                                out[i].state = GROUP_PLACED;
                                out[i].cpus = *r[i].current;
                                out[i].nspans = 0;
                                CPUSET_FOREACH(cpu, &out[i].cpus)
                                        out[i].nspans += lv->spans[lv->span_of[cpu]].first == cpu;
                                mark_busy(&c, &out[i].cpus);
                        }
                }

        /* Pass 2: everyone else, in priority order. */
        for (size_t j = 0; j < n; j++) {
                size_t i = order[j];
                if (out[i].state == GROUP_PLACED || !check_request(t, &r[i], &out[i]))
                        continue;
                place_one(&c, &r[i], &out[i]);
        }
        ctx_free(&c);
        return 0;
}

static size_t count_placed(size_t n, const struct placement_result *out) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                k += out[i].state == GROUP_PLACED;
        return k;
}

int placement_compute(const struct topology *t, const struct placement_options *o,
                      size_t n, const struct placement_request *r, struct placement_result *out) {
        struct placement_options none = {};
        struct placement_result *alt = NULL;
        size_t *order;
        int res;

        if (!o)
                o = &none;
        order = malloc(sizeof(size_t) * (n ? n : 1));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                order[i] = i;
        qsort_r(order, n, sizeof(size_t), cmp_priority, (void *) r);

        res = run(t, o, n, r, order, true, out);
        if (res < 0 || !o->repack || count_placed(n, out) == n)
                goto done;

        /* Something is pending. Repacking from scratch may fit it; take the
         * result only if nobody placed now loses their place. */
        alt = malloc(sizeof(*alt) * n);
        if (!alt) {
                res = -ENOMEM;
                goto done;
        }
        res = run(t, o, n, r, order, false, alt);
        if (res < 0)
                goto done;
        if (count_placed(n, alt) > count_placed(n, out)) {
                bool keeps_all = true;
                for (size_t i = 0; i < n; i++)
                        if (out[i].state == GROUP_PLACED && alt[i].state != GROUP_PLACED)
                                keeps_all = false;
                if (keeps_all)
                        memcpy(out, alt, sizeof(*alt) * n);
        }
done:
        free(alt);
        free(order);
        return res;
}
