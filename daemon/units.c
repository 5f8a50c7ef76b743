/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "log.h"
#include "strindex.h"
#include "units.h"
#include "util.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define SD_UNIT "org.freedesktop.systemd1.Unit"
#define UNIT_PREFIX "/org/freedesktop/systemd1/unit"

/* A service, slice or scope PID 1 told us about. Entries live as long as
 * the daemon (one per such unit that ran while it did). */
struct decl {
        struct units *u;
        char *name;
        sd_bus_slot *slot;      /* GetAll in flight */
        bool again;             /* an event came while it was in flight: ask once more */
        bool scanning;          /* counted in units->scan_left */
        bool running;
        struct config cfg;      /* its group, when running with an [X-Cosched] section */
        char *digest;           /* what was last handed to the manager: "" nothing */
};

struct units {
        sd_bus *bus;
        units_event_t event;
        void *userdata;
        struct decl **v;
        size_t n, cap;
        struct strindex by_name;
        sd_bus_slot *list_slot; /* ListUnits in flight */
        bool list_again;
        size_t scan_left;       /* refreshes of the listing not answered yet */
        bool ready;
        bool pid1_reloading;    /* between Reloading true and false */
};

static bool wanted_type(const char *name) {
        const char *dot = strrchr(name, '.');

        return dot && (!strcmp(dot, ".service") || !strcmp(dot, ".slice") || !strcmp(dot, ".scope"));
}

/* PID 1's states in which the unit has (or is about to have) processes. */
static bool running_state(const char *s) {
        return s[0] && strcmp(s, "inactive") && strcmp(s, "failed");
}

int units_new(sd_bus *bus, units_event_t event, void *userdata, struct units **ret) {
        struct units *u = calloc(1, sizeof(*u));

        if (!u)
                return -ENOMEM;
        u->bus = sd_bus_ref(bus);
        u->event = event;
        u->userdata = userdata;
        *ret = u;
        return 0;
}

void units_free(struct units *u) {
        if (!u)
                return;
        for (size_t i = 0; i < u->n; i++) {
                sd_bus_slot_unref(u->v[i]->slot);
                config_free(&u->v[i]->cfg);
                free(u->v[i]->name);
                free(u->v[i]->digest);
                free(u->v[i]);
        }
        free(u->v);
        strindex_free(&u->by_name);
        sd_bus_slot_unref(u->list_slot);
        sd_bus_unref(u->bus);
        free(u);
}

bool units_ready(const struct units *u) {
        return !u || u->ready;
}

static struct decl *find(struct units *u, const char *name) {
        size_t i;

        return strindex_get(&u->by_name, name, &i) ? u->v[i] : NULL;
}

static struct decl *get(struct units *u, const char *name) {
        struct decl *d = find(u, name), **n;

        if (d)
                return d;
        if (u->n == u->cap) {
                n = realloc(u->v, sizeof(*n) * (u->cap ? u->cap * 2 : 16));
                if (!n)
                        return NULL;
                u->v = n;
                u->cap = u->cap ? u->cap * 2 : 16;
        }
        d = calloc(1, sizeof(*d));
        if (!d || !(d->name = strdup(name)) || !(d->digest = strdup("")) ||
            strindex_put(&u->by_name, d->name, u->n) < 0) {
                if (d) {
                        free(d->name);
                        free(d->digest);
                }
                free(d);
                return NULL;
        }
        config_init(&d->cfg);
        d->u = u;
        u->v[u->n++] = d;
        return d;
}

static void check_ready(struct units *u) {
        size_t k = 0;

        if (u->ready || u->list_slot || u->scan_left)
                return;
        u->ready = true;
        for (size_t i = 0; i < u->n; i++)
                k += u->v[i]->running && u->v[i]->cfg.ngroups;
        log_info("units: %zu services, slices and scopes read, %zu running with [X-Cosched]", u->n, k);
        u->event(u->userdata, true, false);
}

/* ---- reading a unit's files ---- */

struct files {
        const char *fragment;
        const char **dropins;
        size_t ndropins;
};

static void parse_file(struct config *c, const char *unit, const char *path, bool *any, struct config_errors *e) {
        char *text = NULL;
        int r;

        if (!path[0] || !strcmp(path, "/dev/null"))
                return;
        r = read_file_str(path, &text);
        if (r == -ENOENT)
                return; /* removed since PID 1 loaded it: the next Reloading says so */
        if (r < 0)
                config_error_add(e, path, 0, "cannot read: %s", strerror(-r));
        else if ((size_t) r != strlen(text))
                config_error_add(e, path, 0, "contains NUL bytes");
        else
                *any |= config_parse_unit_file(c, unit, text, path, e);
        free(text);
}

/* The unit's group from its files into c; the digest says what the
 * manager is handed ("" nothing), so that an unchanged refresh is silent. */
static char *load_decl(const struct decl *d, struct config *c, const struct files *f, struct config_errors *e) {
        char *digest = NULL;
        bool any = false;
        size_t len;
        FILE *m;

        parse_file(c, d->name, f->fragment, &any, e);
        for (size_t i = 0; i < f->ndropins; i++)
                parse_file(c, d->name, f->dropins[i], &any, e);
        if (!any) {
                config_free(c);
                return strdup("");
        }
        config_finish(c, e);
        if (e->nomem)
                config_errors_note_nomem(e);
        if (e->n && c->ngroups && !(c->groups[0].error = strdup(e->msgs[0])))
                e->nomem = true;
        m = open_memstream(&digest, &len);
        if (!m)
                return NULL;
        config_dump(c, m);
        for (size_t i = 0; i < e->n; i++)
                fprintf(m, "! %s\n", e->msgs[i]);
        if (fclose(m) != 0) {
                free(digest);
                return NULL;
        }
        return digest;
}

static void describe(const struct decl *d, const struct files *f, const struct config_errors *e) {
        const struct group_config *g = d->cfg.ngroups ? &d->cfg.groups[0] : NULL;

        for (size_t i = 0; i < e->n; i++)
                log_group(LOG_ERR, d->name, "%s", e->msgs[i]);
        if (!g)
                return;
        if (e->n)
                log_group(LOG_ERR, d->name, "%s: [X-Cosched] has errors: the unit is in error, not placed", d->name);
        else
                log_group(LOG_INFO, d->name, "%s runs with [X-Cosched] (Level=%s %s=%u; %s%s%zu drop-ins): placing it",
                          d->name, g->level, g->cpus ? "CPUs" : "Spans", g->cpus ? g->cpus : g->spans,
                          f->fragment[0] ? f->fragment : "no unit file", ", ", f->ndropins);
}

/* What PID 1 says about the unit now: the group to hand over, or none.
 * d->cfg is only replaced when that changes: the manager holds pointers
 * into it until the event. */
static void update(struct units *u, struct decl *d, bool running, const struct files *f) {
        struct config_errors e = {};
        struct config c;
        char *digest;

        config_init(&c);
        digest = running ? load_decl(d, &c, f, &e) : strdup("");
        if (!digest) {
                log_group(LOG_ERR, d->name, "%s: out of memory reading its unit files; keeping what it had", d->name);
                config_free(&c);
                config_errors_free(&e);
                return;
        }
        if (!strcmp(digest, d->digest)) {
                bool flipped = d->running != running;

                d->running = running; /* "" both times: no group either way */
                free(digest);
                config_free(&c);
                config_errors_free(&e);
                /* A unit without a section started or stopped: vm.c looks
                 * for VMs among the running units. */
                if (flipped && u->ready)
                        u->event(u->userdata, true, false);
                return;
        }
        d->running = running;
        config_free(&d->cfg);
        d->cfg = c;
        if (running)
                describe(d, f, &e);
        if (!d->cfg.ngroups && d->digest[0])
                log_group(LOG_INFO, d->name, "%s %s: releasing its group", d->name,
                          running ? "no longer has [X-Cosched]" : "stopped");
        free(d->digest);
        d->digest = digest;
        config_errors_free(&e);
        if (u->ready)
                u->event(u->userdata, true, false);
}

/* ---- asking PID 1 ---- */

static int refresh(struct units *u, struct decl *d);

static int read_strv(sd_bus_message *m, const char ***ret, size_t *n) {
        const char *s, **v = NULL, **nv;
        size_t k = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_enter_container(m, 'a', "s");
        while (r >= 0 && (r = sd_bus_message_read(m, "s", &s)) > 0) {
                nv = realloc(v, sizeof(*v) * (k + 1));
                if (!nv) {
                        r = -ENOMEM;
                        break;
                }
                v = nv;
                v[k++] = s; /* points into the message */
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                free(v);
                return r;
        }
        *ret = v;
        *n = k;
        return 0;
}

static int read_unit_props(sd_bus_message *m, const char **state, struct files *f) {
        const char *name;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &name);
                if (r >= 0 && !strcmp(name, "ActiveState"))
                        r = sd_bus_message_read(m, "v", "s", state);
                else if (r >= 0 && !strcmp(name, "FragmentPath"))
                        r = sd_bus_message_read(m, "v", "s", &f->fragment);
                else if (r >= 0 && !strcmp(name, "DropInPaths") && !f->dropins)
                        r = read_strv(m, &f->dropins, &f->ndropins);
                else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int on_unit_props(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct decl *d = userdata;
        struct units *u = d->u;
        struct files f = { .fragment = "" };
        const char *state = "";
        int r;

        (void) ret_error;
        d->slot = sd_bus_slot_unref(d->slot);
        if (sd_bus_message_is_method_error(m, SD_BUS_ERROR_NO_REPLY)) {
                /* No answer is not a stop: PID 1 answers nothing while it
                 * reloads, which takes seconds on a slow machine. */
                log_group(LOG_WARNING, d->name, "units: systemd did not answer about %s in %ds; %s, asking again",
                          d->name, BUS_TIMEOUT_USEC / 1000000, d->running ? "it stays as it was" : "not placed yet");
                d->again = true;
        } else if (sd_bus_message_is_method_error(m, NULL)) {
                /* Gone (unloaded) or PID 1 failed: nothing runs there we could place. */
                const sd_bus_error *e = sd_bus_message_get_error(m);
                log_debug("units: GetAll %s: %s", d->name, e && e->message ? e->message : "error");
                update(u, d, false, &f);
        } else if ((r = read_unit_props(m, &state, &f)) < 0)
                log_group(LOG_WARNING, d->name, "units: reading the properties of %s: %s", d->name, strerror(-r));
        else
                update(u, d, running_state(state), &f);
        free(f.dropins);
        if (d->again) {
                d->again = false;
                if (refresh(u, d) >= 0)
                        return 0;
        }
        if (d->scanning) {
                d->scanning = false;
                u->scan_left--;
                check_ready(u);
        }
        return 0;
}

/* GetAll on the unit's object (its path is its name, escaped, as PID 1
 * names it: no LoadUnit needed); one call per unit in flight. */
static int refresh(struct units *u, struct decl *d) {
        char *path = NULL;
        int r;

        if (d->slot) {
                d->again = true;
                return 0;
        }
        r = sd_bus_path_encode(UNIT_PREFIX, d->name, &path);
        if (r >= 0)
                r = sd_bus_call_method_async(u->bus, &d->slot, SD_DEST, path, "org.freedesktop.DBus.Properties", "GetAll",
                                             on_unit_props, d, "s", SD_UNIT);
        free(path);
        if (r < 0)
                log_group(LOG_WARNING, d->name, "units: asking systemd about %s: %s", d->name, strerror(-r));
        return r;
}

static void refresh_name(struct units *u, const char *name, bool scan) {
        struct decl *d;

        if (!wanted_type(name))
                return;
        d = get(u, name);
        if (!d) {
                log_error("units: out of memory tracking %s", name);
                return;
        }
        if (refresh(u, d) < 0 || !scan || d->scanning)
                return;
        d->scanning = true;
        u->scan_left++;
}

static int list_units(struct units *u);

static int on_list(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct units *u = userdata;
        const char *name, *state;
        int r;

        (void) ret_error;
        u->list_slot = sd_bus_slot_unref(u->list_slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(m);
                log_error("units: ListUnits: %s; units with [X-Cosched] are found as their jobs finish",
                          e && e->message ? e->message : "error");
        } else {
                /* Running ones: read their files. Tracked ones that no
                 * longer run, or are gone: read too, to let them go. */
                r = sd_bus_message_enter_container(m, 'a', "(ssssssouso)");
                while (r >= 0 && (r = sd_bus_message_read(m, "(ssssssouso)", &name, NULL, NULL, &state, NULL, NULL, NULL,
                                                          NULL, NULL, NULL)) > 0)
                        if (running_state(state) || find(u, name))
                                refresh_name(u, name, true);
                if (r < 0)
                        log_error("units: reading ListUnits: %s", strerror(-r));
                for (size_t i = 0; i < u->n; i++)
                        if (u->v[i]->running && !u->v[i]->slot)
                                refresh_name(u, u->v[i]->name, true);
        }
        if (u->list_again) {
                u->list_again = false;
                if (list_units(u) >= 0)
                        return 0;
        }
        check_ready(u);
        return 0;
}

static int list_units(struct units *u) {
        if (u->list_slot) {
                u->list_again = true;
                return 0;
        }
        return sd_bus_call_method_async(u->bus, &u->list_slot, SD_DEST, SD_PATH, SD_MANAGER, "ListUnits", on_list, u,
                                        NULL);
}

/* ---- signals ---- */

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct units *u = userdata;
        const char *unit, *result;
        uint32_t id;
        int r;

        (void) ret_error;
        r = sd_bus_message_read(m, "uoss", &id, NULL, &unit, &result);
        if (r >= 0)
                refresh_name(u, unit, false);
        u->event(u->userdata, false, true);
        return 0;
}

static int on_unit_new(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct units *u = userdata;
        const char *unit;

        (void) ret_error;
        /* Loaded is not started (a start ends in JobRemoved); only a
         * unit we hold is read again. */
        if (sd_bus_message_read(m, "so", &unit, NULL) >= 0 && find(u, unit) && find(u, unit)->running)
                refresh_name(u, unit, false);
        return 0;
}

static int on_unit_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct units *u = userdata;
        struct decl *d;
        const char *unit;

        (void) ret_error;
        /* A daemon-reload unloads every unit, running ones too, and loads
         * them again: not a stop. The listing after it reads them all. */
        if (u->pid1_reloading)
                return 0;
        /* Unloaded: asking about it would load it again. */
        if (sd_bus_message_read(m, "so", &unit, NULL) >= 0 && (d = find(u, unit)) && d->running && !d->slot)
                update(u, d, false, &(struct files) { .fragment = "" });
        return 0;
}

static int on_reloading(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct units *u = userdata;
        int active;

        (void) ret_error;
        if (sd_bus_message_read(m, "b", &active) < 0)
                return 0;
        u->pid1_reloading = active;
        /* After daemon-reload: unit files and drop-ins may have changed. */
        if (!active && list_units(u) < 0)
                log_error("units: cannot list the units after daemon-reload");
        return 0;
}

/* A service whose main process exited stops without a job. */
static int on_properties(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct units *u = userdata;
        const char *iface, *name;
        char *unit = NULL;
        struct decl *d;
        bool state = false;
        int r;

        (void) ret_error;
        if (sd_bus_path_decode(sd_bus_message_get_path(m), UNIT_PREFIX, &unit) <= 0)
                return 0;
        d = find(u, unit);
        r = d && d->running ? sd_bus_message_read(m, "s", &iface) : -ENOENT;
        if (r >= 0)
                r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && !state && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &name);
                state = r >= 0 && !strcmp(name, "ActiveState");
                if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (state)
                refresh(u, d);
        free(unit);
        return 0;
}

int units_start(struct units *u) {
        int r;

        r = sd_bus_match_signal_async(u->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved", on_job_removed, NULL, u);
        if (r >= 0)
                r = sd_bus_match_signal_async(u->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "UnitNew", on_unit_new, NULL, u);
        if (r >= 0)
                r = sd_bus_match_signal_async(u->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "UnitRemoved", on_unit_removed,
                                              NULL, u);
        if (r >= 0)
                r = sd_bus_match_signal_async(u->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "Reloading", on_reloading, NULL,
                                              u);
        if (r >= 0)
                r = sd_bus_add_match_async(u->bus, NULL,
                                           "type='signal',sender='" SD_DEST "',interface='org.freedesktop.DBus.Properties',"
                                           "member='PropertiesChanged',path_namespace='" UNIT_PREFIX "',"
                                           "arg0='" SD_UNIT "'",
                                           on_properties, NULL, u);
        /* PID 1 only broadcasts job and unit signals to subscribed clients. */
        if (r >= 0)
                r = sd_bus_call_method_async(u->bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe", NULL, NULL, NULL);
        if (r >= 0)
                r = list_units(u);
        return r;
}

static int cmp_group(const void *a, const void *b) {
        return strcmp((*(const struct group_config *const *) a)->name, (*(const struct group_config *const *) b)->name);
}

int units_running(const struct units *u, const char ***ret, size_t *n) {
        const char **v;
        size_t k = 0;

        *ret = NULL;
        *n = 0;
        if (!u || !u->n)
                return 0;
        v = calloc(u->n, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < u->n; i++)
                if (u->v[i]->running)
                        v[k++] = u->v[i]->name;
        *ret = v;
        *n = k;
        return 0;
}

int units_groups(const struct units *u, const struct group_config ***ret, size_t *n) {
        const struct group_config **v;
        size_t k = 0;

        *ret = NULL;
        *n = 0;
        if (!u || !u->n)
                return 0;
        v = calloc(u->n, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < u->n; i++)
                if (u->v[i]->running && u->v[i]->cfg.ngroups)
                        v[k++] = &u->v[i]->cfg.groups[0];
        qsort(v, k, sizeof(*v), cmp_group);
        *ret = v;
        *n = k;
        return 0;
}
