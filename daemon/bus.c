/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "strindex.h"
#include "util.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"

struct unit_entry {
        char *name;
        char *path;             /* NULL until LoadUnit answered: then cached */
        struct bus_op *op;      /* in flight, or NULL */
        bool weight_ours;       /* we set CPUWeight=100 (it had none): a release resets it */
};

struct bus {
        sd_bus *bus;
        struct unit_entry **units;
        size_t nunits, cap;
        struct strindex by_name;
        size_t pending;
};

/* One confinement: [LoadUnit] -> GetAll -> [SetUnitProperties] -> done. */
struct bus_op {
        struct bus *b;
        struct unit_entry *u;
        char *key;
        bool release, zero_first;
        struct cpuset cpus;
        bus_unit_done_t done;
        bus_unit_hook_t before_set;
        void *userdata;
        sd_bus_slot *slot;      /* the call in flight */
        char *cgroup;
};

int bus_open(struct bus **ret) {
        struct bus *b = calloc(1, sizeof(*b));
        int r;

        if (!b)
                return -ENOMEM;
        r = sd_bus_open_system(&b->bus);
        if (r >= 0)
                r = sd_bus_set_method_call_timeout(b->bus, BUS_TIMEOUT_USEC);
        if (r < 0) {
                sd_bus_unref(b->bus);
                free(b);
                return r;
        }
        *ret = b;
        return 0;
}

sd_bus *bus_sd(struct bus *b) {
        return b->bus;
}

size_t bus_pending(const struct bus *b) {
        return b ? b->pending : 0;
}

static void op_free(struct bus_op *op) {
        if (!op)
                return;
        sd_bus_slot_unref(op->slot);
        free(op->key);
        free(op->cgroup);
        free(op);
}

/* Detach from the unit first: done may ask again for the same unit. */
static void op_finish(struct bus_op *op, int r, const char *error) {
        struct bus_unit_result res = { .key = op->key, .unit = op->u->name, .cpus = op->release ? NULL : &op->cpus,
                                       .r = r, .cgroup = op->cgroup ? op->cgroup : "", .error = error ? error : "" };

        op->u->op = NULL;
        op->b->pending--;
        op->done(op->userdata, &res);
        op_free(op);
}

static void finish_error(struct bus_op *op, sd_bus_message *m, int r, const char *what) {
        const sd_bus_error *e = m ? sd_bus_message_get_error(m) : NULL;
        char err[512];

        if (m && !r)
                r = -sd_bus_message_get_errno(m);
        if (r >= 0)
                r = -EIO;
        snprintf(err, sizeof(err), "%s %s: %s", what, op->u->name, e && e->message ? e->message : strerror(-r));
        op_finish(op, r, err);
}

static void bus_free_units(struct bus *b) {
        for (size_t i = 0; i < b->nunits; i++) {
                op_free(b->units[i]->op);
                free(b->units[i]->name);
                free(b->units[i]->path);
                free(b->units[i]);
        }
        free(b->units);
        strindex_free(&b->by_name);
}

void bus_free(struct bus *b) {
        if (!b)
                return;
        bus_free_units(b);
        sd_bus_flush_close_unref(b->bus);
        free(b);
}

/* The cache entry of a unit, made on first use; entries live as long as the bus. */
static struct unit_entry *unit_entry(struct bus *b, const char *name) {
        struct unit_entry *u, **n;
        size_t i;

        if (strindex_get(&b->by_name, name, &i))
                return b->units[i];
        if (b->nunits == b->cap) {
                n = realloc(b->units, sizeof(*n) * (b->cap ? b->cap * 2 : 16));
                if (!n)
                        return NULL;
                b->units = n;
                b->cap = b->cap ? b->cap * 2 : 16;
        }
        u = calloc(1, sizeof(*u));
        if (!u || !(u->name = strdup(name)) || strindex_put(&b->by_name, u->name, b->nunits) < 0) {
                if (u)
                        free(u->name);
                free(u);
                return NULL;
        }
        b->units[b->nunits++] = u;
        return u;
}

bool bus_weight_ours(const struct bus *b, const char *unit) {
        size_t i;

        return b && strindex_get(&b->by_name, unit, &i) && b->units[i]->weight_ours;
}

int bus_set_weight_ours(struct bus *b, const char *unit) {
        struct unit_entry *u = unit_entry(b, unit);

        if (!u)
                return -ENOMEM;
        u->weight_ours = true;
        return 0;
}

static const char *unit_interface(const char *unit) {
        const char *dot = strrchr(unit, '.');

        if (dot && !strcmp(dot, ".slice"))
                return "org.freedesktop.systemd1.Slice";
        if (dot && !strcmp(dot, ".scope"))
                return "org.freedesktop.systemd1.Scope";
        return "org.freedesktop.systemd1.Service";
}

/* systemd's AllowedCPUs= on D-Bus: a little-endian bitmask as bytes. */
static size_t cpus_to_mask(const struct cpuset *cpus, uint8_t *mask, size_t len) {
        int last = cpus ? cpuset_last(cpus) : -1;
        size_t n = last < 0 ? 0 : (size_t) last / 8 + 1;

        memset(mask, 0, len);
        if (n > len)
                n = len;
        if (cpus)
                CPUSET_FOREACH(c, cpus)
                        if ((size_t) c / 8 < n)
                                mask[c / 8] |= 1u << (c % 8);
        return n;
}

/* What the unit has now, from GetAll on its interface. */
struct unit_props {
        uint8_t mask[CPUSET_MAX / 8];
        size_t nmask;
        uint64_t weight;        /* UINT64_MAX: unset */
};

static int read_mask(sd_bus_message *m, struct unit_props *p) {
        const void *v;
        size_t sz;
        int r;

        r = sd_bus_message_enter_container(m, 'v', "ay");
        if (r >= 0)
                r = sd_bus_message_read_array(m, 'y', &v, &sz);
        if (r < 0)
                return r;
        p->nmask = sz < sizeof(p->mask) ? sz : sizeof(p->mask);
        memcpy(p->mask, v, p->nmask);
        /* Trailing zero bytes carry no CPUs. */
        while (p->nmask && p->mask[p->nmask - 1] == 0)
                p->nmask--;
        return sd_bus_message_exit_container(m);
}

static int read_props(sd_bus_message *m, struct bus_op *op, struct unit_props *p) {
        const char *name, *cg;
        int r;

        *p = (struct unit_props) { .weight = UINT64_MAX };
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &name);
                if (r >= 0 && !strcmp(name, "ControlGroup")) {
                        r = sd_bus_message_read(m, "v", "s", &cg);
                        if (r >= 0 && !op->cgroup && !(op->cgroup = strdup(cg)))
                                r = -ENOMEM;
                } else if (r >= 0 && !strcmp(name, "AllowedCPUs"))
                        r = read_mask(m, p);
                else if (r >= 0 && !strcmp(name, "CPUWeight"))
                        r = sd_bus_message_read(m, "v", "t", &p->weight);
                else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int on_set(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct bus_op *op = userdata;

        (void) ret_error;
        if (sd_bus_message_is_method_error(m, NULL))
                finish_error(op, m, 0, "SetUnitProperties AllowedCPUs=");
        else
                op_finish(op, 0, NULL);
        return 0;
}

/* weight: CPUWeight= to set, 0 to leave it; UINT64_MAX resets it to unset. */
static int append_set(sd_bus_message *m, const char *unit, const uint8_t *want, size_t nwant, uint64_t weight) {
        int r;

        r = sd_bus_message_append(m, "sb", unit, 1); /* runtime: gone at reboot, like our placement */
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0 && weight)
                r = sd_bus_message_append(m, "(sv)", "CPUWeight", "t", weight);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "AllowedCPUs");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "ay");
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', want, nwant);
        for (int i = 0; r >= 0 && i < 3; i++)
                r = sd_bus_message_close_container(m);
        return r;
}

static int send_set(struct bus_op *op, const uint8_t *want, size_t nwant, uint64_t weight) {
        sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(op->b->bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "SetUnitProperties");
        if (r >= 0)
                r = append_set(m, op->u->name, want, nwant, weight);
        if (r >= 0)
                r = sd_bus_call_async(op->b->bus, &op->slot, m, on_set, op, 0);
        sd_bus_message_unref(m);
        return r;
}

static int on_props(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        uint8_t want[CPUSET_MAX / 8];
        struct unit_props have;
        struct bus_op *op = userdata;
        size_t nwant;
        bool set_weight, reset_weight;
        int r;

        (void) ret_error;
        op->slot = sd_bus_slot_unref(op->slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                /* A stale cached path: look the unit up again next time. */
                free(op->u->path);
                op->u->path = NULL;
                finish_error(op, m, 0, "GetAll");
                return 0;
        }
        r = read_props(m, op, &have);
        if (r < 0) {
                finish_error(op, NULL, r, "reading the properties of");
                return 0;
        }
        nwant = cpus_to_mask(op->release ? NULL : &op->cpus, want, sizeof(want));
        set_weight = !op->release && have.weight == UINT64_MAX;
        /* What we set, we take back on release; a weight someone else
         * set since then (not 100) is theirs. */
        reset_weight = op->release && op->u->weight_ours && have.weight == 100;
        if (op->release && have.weight != 100)
                op->u->weight_ours = false;
        if (have.nmask == nwant && !memcmp(have.mask, want, nwant) && !set_weight && !reset_weight) {
                op_finish(op, 0, NULL);
                return 0;
        }
        if (op->zero_first)
                op->before_set(op->userdata, op->cgroup ? op->cgroup : "");
        r = send_set(op, want, nwant, set_weight ? 100 : reset_weight ? UINT64_MAX : 0);
        if (r >= 0 && (set_weight || reset_weight))
                op->u->weight_ours = set_weight;
        if (r < 0)
                finish_error(op, NULL, r, "SetUnitProperties AllowedCPUs=");
        return 0;
}

static int get_props(struct bus_op *op) {
        return sd_bus_call_method_async(op->b->bus, &op->slot, SD_DEST, op->u->path, "org.freedesktop.DBus.Properties",
                                        "GetAll", on_props, op, "s", unit_interface(op->u->name));
}

static int on_loaded(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct bus_op *op = userdata;
        const char *path;
        int r;

        (void) ret_error;
        op->slot = sd_bus_slot_unref(op->slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                finish_error(op, m, 0, "LoadUnit");
                return 0;
        }
        r = sd_bus_message_read(m, "o", &path);
        if (r >= 0 && !(op->u->path = strdup(path)))
                r = -ENOMEM;
        if (r >= 0)
                r = get_props(op);
        if (r < 0)
                finish_error(op, NULL, r, "LoadUnit");
        return 0;
}

/* LoadUnit rather than GetUnit: a slice nobody started yet is still a unit.
 * Only once per unit: the path does not change. */
static int op_start(struct bus_op *op) {
        if (op->u->path)
                return get_props(op);
        return sd_bus_call_method_async(op->b->bus, &op->slot, SD_DEST, SD_PATH, SD_MANAGER, "LoadUnit", on_loaded, op,
                                        "s", op->u->name);
}

static bool same_request(const struct bus_op *op, const struct bus_unit_request *req) {
        return !strcmp(op->key, req->key) && op->release == !req->cpus && op->zero_first == req->zero_first &&
               (!req->cpus || cpuset_equal(&op->cpus, req->cpus));
}

int bus_confine_unit(struct bus *b, const struct bus_unit_request *req, bus_unit_done_t done, bus_unit_hook_t before_set,
                     void *userdata) {
        struct unit_entry *u = unit_entry(b, req->unit);
        struct bus_op *op;
        int r;

        if (!u)
                return -ENOMEM;
        if (u->op && same_request(u->op, req))
                return 1;
        op = calloc(1, sizeof(*op));
        if (!op || !(op->key = strdup(req->key))) {
                free(op);
                return -ENOMEM;
        }
        *op = (struct bus_op) { .b = b, .u = u, .key = op->key, .release = !req->cpus, .zero_first = req->zero_first,
                                .done = done, .before_set = before_set, .userdata = userdata };
        if (req->cpus)
                op->cpus = *req->cpus;
        r = op_start(op);
        if (r < 0) {
                op_free(op);
                return r;
        }
        /* The newer request wins: the older one's answer no longer matters. */
        if (u->op) {
                op_free(u->op);
                b->pending--;
        }
        u->op = op;
        b->pending++;
        return 0;
}
