/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strindex.h"

/* FNV-1a: short keys, no adversary (the config is root's own file). */
static size_t hash(const char *s, size_t len) {
        uint64_t h = UINT64_C(14695981039346656037);

        for (size_t i = 0; i < len; i++)
                h = (h ^ (unsigned char) s[i]) * UINT64_C(1099511628211);
        return (size_t) (h ^ (h >> 32));
}

static struct strindex_slot *find(const struct strindex *x, const char *key, size_t len) {
        size_t mask = x->cap - 1;

        for (size_t i = hash(key, len) & mask;; i = (i + 1) & mask) {
                struct strindex_slot *s = &x->slots[i];
                if (!s->key || (s->len == len && !memcmp(s->key, key, len)))
                        return s;
        }
}

/* Keep the table at most half full, so that probes stay short. */
static int grow(struct strindex *x) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        struct strindex old = *x;

        x->slots = calloc(cap, sizeof(*x->slots));
        if (!x->slots) {
                *x = old;
                return -ENOMEM;
        }
        x->cap = cap;
        for (size_t i = 0; i < old.cap; i++)
                if (old.slots[i].key)
                        *find(x, old.slots[i].key, old.slots[i].len) = old.slots[i];
        free(old.slots);
        return 0;
}

int strindex_put(struct strindex *x, const char *key, size_t val) {
        size_t len = strlen(key);
        struct strindex_slot *s;

        if ((x->n + 1) * 2 > x->cap && grow(x) < 0)
                return -ENOMEM;
        s = find(x, key, len);
        if (s->key)
                return 1;
        *s = (struct strindex_slot) { .key = key, .len = len, .val = val };
        x->n++;
        return 0;
}

bool strindex_getn(const struct strindex *x, const char *key, size_t len, size_t *val) {
        const struct strindex_slot *s;

        if (!x->cap)
                return false;
        s = find(x, key, len);
        if (!s->key)
                return false;
        if (val)
                *val = s->val;
        return true;
}

bool strindex_get(const struct strindex *x, const char *key, size_t *val) {
        return strindex_getn(x, key, strlen(key), val);
}

void strindex_free(struct strindex *x) {
        free(x->slots);
        *x = (struct strindex) {};
}
