/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A string -> index hash table (open addressing, linear probing). Keys are
 * borrowed: the caller keeps them alive and unchanged while indexed. It
 * exists so that looking a group up by name is O(1): 100 000 groups with
 * linear lookups took minutes to load.
 */

#include <stdbool.h>
#include <stddef.h>

struct strindex_slot {
        const char *key;        /* NULL: empty */
        size_t len;
        size_t val;
};

struct strindex {
        struct strindex_slot *slots;
        size_t cap;             /* a power of two, or 0 */
        size_t n;
};

/* Add key -> val. Returns 0, 1 if key was there already (its value is
 * kept), or -ENOMEM. */
int strindex_put(struct strindex *x, const char *key, size_t val);
/* Look up the first len bytes of key (a prefix of a longer string). */
bool strindex_getn(const struct strindex *x, const char *key, size_t len, size_t *val);
bool strindex_get(const struct strindex *x, const char *key, size_t *val);
void strindex_free(struct strindex *x);
