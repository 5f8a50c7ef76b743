/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"

int cpuset_count(const struct cpuset *s) {
        int n = 0;
        for (size_t i = 0; i < CPUSET_WORDS; i++)
                n += __builtin_popcountll(s->w[i]);
        return n;
}

bool cpuset_empty(const struct cpuset *s) {
        for (size_t i = 0; i < CPUSET_WORDS; i++)
                if (s->w[i])
                        return false;
        return true;
}

bool cpuset_equal(const struct cpuset *a, const struct cpuset *b) {
        return memcmp(a->w, b->w, sizeof(a->w)) == 0;
}

bool cpuset_subset(const struct cpuset *a, const struct cpuset *b) {
        for (size_t i = 0; i < CPUSET_WORDS; i++)
                if (a->w[i] & ~b->w[i])
                        return false;
        return true;
}

bool cpuset_intersects(const struct cpuset *a, const struct cpuset *b) {
        for (size_t i = 0; i < CPUSET_WORDS; i++)
                if (a->w[i] & b->w[i])
                        return true;
        return false;
}

void cpuset_or(struct cpuset *d, const struct cpuset *s) {
        for (size_t i = 0; i < CPUSET_WORDS; i++)
                d->w[i] |= s->w[i];
}

void cpuset_and(struct cpuset *d, const struct cpuset *s) {
        for (size_t i = 0; i < CPUSET_WORDS; i++)
                d->w[i] &= s->w[i];
}

void cpuset_andnot(struct cpuset *d, const struct cpuset *s) {
        for (size_t i = 0; i < CPUSET_WORDS; i++)
                d->w[i] &= ~s->w[i];
}

int cpuset_next(const struct cpuset *s, int from) {
        if (from < 0)
                from = 0;
        for (int i = from / 64; i < CPUSET_WORDS; i++) {
                uint64_t w = s->w[i];
                if (i == from / 64)
                        w &= ~UINT64_C(0) << (from % 64);
                if (w)
                        return i * 64 + __builtin_ctzll(w);
        }
        return -1;
}

int cpuset_last(const struct cpuset *s) {
        for (int i = CPUSET_WORDS - 1; i >= 0; i--)
                if (s->w[i])
                        return i * 64 + 63 - __builtin_clzll(s->w[i]);
        return -1;
}

static int parse_cpu(const char **p, int *ret) {
        char *end;
        long v;

        if (!isdigit((unsigned char) **p))
                return -EINVAL;
        errno = 0;
        v = strtol(*p, &end, 10);
        if (errno || v < 0 || v >= CPUSET_MAX)
                return -ERANGE;
        *p = end;
        *ret = (int) v;
        return 0;
}

int cpuset_parse(const char *text, struct cpuset *ret) {
        struct cpuset s;
        const char *p = text;
        int r;

        cpuset_zero(&s);
        while (isspace((unsigned char) *p))
                p++;
        while (*p && !isspace((unsigned char) *p)) {
                int a, b;

                r = parse_cpu(&p, &a);
                if (r < 0)
                        return r;
                b = a;
                if (*p == '-') {
                        p++;
                        r = parse_cpu(&p, &b);
                        if (r < 0)
                                return r;
                        if (b < a)
                                return -EINVAL;
                }
                for (int c = a; c <= b; c++)
                        cpuset_set(&s, c);
                if (*p == ',') {
                        p++;
                        if (!isdigit((unsigned char) *p))
                                return -EINVAL;
                } else if (*p && !isspace((unsigned char) *p))
                        return -EINVAL;
        }
        while (isspace((unsigned char) *p))
                p++;
        if (*p)
                return -EINVAL;
        *ret = s;
        return 0;
}

char *cpuset_format(const struct cpuset *s, char *buf, size_t len) {
        size_t off = 0;

        if (len == 0)
                return buf;
        buf[0] = 0;
        for (int a = cpuset_next(s, 0); a >= 0;) {
                int b = a;
                int n;

                while (cpuset_test(s, b + 1))
                        b++;
                if (b == a)
                        n = snprintf(buf + off, len - off, "%s%d", off ? "," : "", a);
                else
                        n = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", a, b);
                if (n < 0 || (size_t) n >= len - off) {
                        buf[off] = 0; /* truncated: never leave half a range */
                        break;
                }
                off += n;
                a = cpuset_next(s, b + 1);
        }
        return buf;
}
