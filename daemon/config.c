/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "util.h"

/*
 * libinih does the key=value splitting and ';' inline comments. What it
 * silently accepts (Debian 12's build: 200-byte lines split into pieces,
 * repeated sections merged, "a: b", indented continuation lines, '#' kept
 * as part of a value, no line numbers in the handler) is caught here: our
 * reader hands inih one line at a time, so it knows the line number and
 * the raw text of every line inih is about to hand to the handler.
 */

enum key {
        K_UNIT, K_SLICE, K_CGROUP, K_LEVEL, K_CPUS, K_SPANS, K_ALLOWED, K_PLACEMENT, K_PRIORITY,
        K_RESERVED, K_ROUNDING, K_REPACK, K_RECONCILE,
        K_VM_ENABLE, K_VM_LEVEL, K_VM_PLACEMENT, K_VM_PIN,
        _K_MAX,
};

enum section { SEC_NONE, SEC_DAEMON, SEC_GROUP, SEC_VMS, SEC_SKIP };

static const struct {
        const char *name;
        enum section sec;
} keys[_K_MAX] = {
        [K_UNIT] = { "Unit", SEC_GROUP },
        [K_SLICE] = { "Slice", SEC_GROUP },
        [K_CGROUP] = { "CgroupPath", SEC_GROUP },
        [K_LEVEL] = { "Level", SEC_GROUP },
        [K_CPUS] = { "CPUs", SEC_GROUP },
        [K_SPANS] = { "Spans", SEC_GROUP },
        [K_ALLOWED] = { "AllowedCPUs", SEC_GROUP },
        [K_PLACEMENT] = { "Placement", SEC_GROUP },
        [K_PRIORITY] = { "Priority", SEC_GROUP },
        [K_RESERVED] = { "ReservedCPUs", SEC_DAEMON },
        [K_ROUNDING] = { "Rounding", SEC_DAEMON },
        [K_REPACK] = { "Repack", SEC_DAEMON },
        [K_RECONCILE] = { "ReconcileSec", SEC_DAEMON },
        [K_VM_ENABLE] = { "Enable", SEC_VMS },
        [K_VM_LEVEL] = { "Level", SEC_VMS },
        [K_VM_PLACEMENT] = { "Placement", SEC_VMS },
        [K_VM_PIN] = { "Pin", SEC_VMS },
};

struct parser {
        struct config *c;
        struct config_errors *e;
        const char *file;
        const char *p;          /* rest of the text */
        int lineno;
        enum section sec;
        size_t group_idx;
        int key_line[_K_MAX];   /* where each key was set in this section, 0 = not yet */
        bool daemon_seen;       /* [daemon] already appeared in this file */
        int daemon_line;
        int vms_line;           /* [vms] already appeared in this file, there; 0 = not yet */
        const char *unit;       /* a unit file: only its [X-Cosched] section, as group unit */
        bool unit_section;      /* [X-Cosched] seen in this file */
        bool continued;         /* a unit file: the last line ended in '\\' */
};

const char *group_kind_to_string(enum group_kind k) {
        switch (k) {
        case KIND_SLICE:
                return "slice";
        case KIND_UNIT:
                return "unit";
        case KIND_CGROUP:
                return "cgroup";
        default:
                return "none";
        }
}

enum group_kind group_kind_from_string(const char *s) {
        if (!strcmp(s, "slice"))
                return KIND_SLICE;
        if (!strcmp(s, "unit"))
                return KIND_UNIT;
        if (!strcmp(s, "cgroup"))
                return KIND_CGROUP;
        return KIND_NONE;
}

const char *rounding_to_string(enum rounding r) {
        return r == ROUND_UP ? "up" : r == ROUND_DOWN ? "down" : "error";
}

#define add_error config_error_add

void config_error_add(struct config_errors *e, const char *file, int line, const char *fmt, ...) {
        char msg[1024], *full = NULL, **n;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (line > 0)
                strappendf(&full, "%s:%d: %s", file, line, msg);
        else
                strappendf(&full, "%s: %s", file, msg);
        n = full ? realloc(e->msgs, sizeof(char *) * (e->n + 1)) : NULL;
        if (!n) {
                /* The message is lost, not the failure: config_load fails on nomem. */
                free(full);
                e->nomem = true;
                return;
        }
        e->msgs = n;
        e->msgs[e->n++] = full;
}

void config_errors_free(struct config_errors *e) {
        for (size_t i = 0; i < e->n; i++)
                free(e->msgs[i]);
        free(e->msgs);
        e->msgs = NULL;
        e->n = 0;
        e->nomem = false;
}

void config_errors_note_nomem(struct config_errors *e) {
        for (size_t i = 0; i < e->n; i++)
                if (strstr(e->msgs[i], "out of memory"))
                        return;
        if (e->nomem)
                add_error(e, "coschedd", 0, "out of memory while loading the configuration");
}

void config_init(struct config *c) {
        *c = (struct config) {
                .daemon = { .rounding = ROUND_UP, .repack = false, .reconcile_sec = 10,
                            .vms = { .enable = true, .pin = VM_PIN_CORES } },
        };
}

void config_free(struct config *c) {
        for (size_t i = 0; i < c->ngroups; i++) {
                free(c->groups[i].name);
                free(c->groups[i].target);
                free(c->groups[i].level);
                free(c->groups[i].error);
        }
        free(c->groups);
        strindex_free(&c->by_name);
        for (size_t i = 0; i < c->nfiles; i++)
                free(c->files[i]);
        free(c->files);
        free(c->daemon.vms.level);
        config_init(c);
}

static const char *intern_file(struct config *c, const char *file) {
        char **n;

        for (size_t i = 0; i < c->nfiles; i++)
                if (!strcmp(c->files[i], file))
                        return c->files[i];
        n = realloc(c->files, sizeof(char *) * (c->nfiles + 1));
        if (!n)
                return NULL;
        c->files = n;
        c->files[c->nfiles] = strdup(file);
        return c->files[c->nfiles] ? c->files[c->nfiles++] : NULL;
}

const struct group_config *config_find_group(const struct config *c, const char *name) {
        size_t i;

        return strindex_get(&c->by_name, name, &i) ? &c->groups[i] : NULL;
}

static bool valid_group_name(const char *s) {
        size_t len = strlen(s);

        if (len == 0 || len > GROUP_NAME_MAX)
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char) *s) && !strchr("_.@:-", *s))
                        return false;
        return true;
}

static bool has_suffix(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a > b && !strcmp(s + a - b, suffix);
}

static bool valid_unit_name(const char *s) {
        if (strlen(s) > 255)
                return false;
        for (const char *p = s; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr(":-_.\\@", *p))
                        return false;
        return true;
}

static bool valid_cgroup_path(const char *s) {
        if (s[0] != '/' || s[1] == 0 || strlen(s) > 1024 || s[strlen(s) - 1] == '/')
                return false;
        if (strstr(s, "//") || strstr(s, "/./") || strstr(s, "/../") || has_suffix(s, "/..") || has_suffix(s, "/."))
                return false;
        for (const char *p = s; *p; p++)
                if (!isgraph((unsigned char) *p))
                        return false;
        return true;
}

static int parse_bool(const char *v, bool *ret) {
        if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on") || !strcmp(v, "1"))
                *ret = true;
        else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off") || !strcmp(v, "0"))
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

static int parse_range(const char *v, int lo, int hi, int *ret) {
        int n;
        if (safe_atoi(v, &n) < 0 || strchr(v, '\n') || n < lo || n > hi)
                return -ERANGE;
        *ret = n;
        return 0;
}

/* ---- sections ---- */

/* Room for one more group: doubling, as 100 000 groups of a kilobyte each
 * would be copied over and over growing one at a time. */
static int reserve_group(struct config *c) {
        struct group_config *n;
        size_t cap = c->groups_cap ? c->groups_cap * 2 : 16;

        if (c->ngroups < c->groups_cap)
                return 0;
        n = realloc(c->groups, sizeof(*n) * cap);
        if (!n)
                return -ENOMEM;
        c->groups = n;
        c->groups_cap = cap;
        return 0;
}

/* The unit's kind from its name; KIND_NONE for a type with no cgroup of its own to coschedule. */
static enum group_kind unit_kind(const char *unit) {
        if (has_suffix(unit, ".slice") && strcmp(unit, "-.slice"))
                return KIND_SLICE;
        if (has_suffix(unit, ".service") || has_suffix(unit, ".scope"))
                return KIND_UNIT;
        return KIND_NONE;
}

/* [X-Cosched] in a unit file: the unit's group, made by the first file
 * that has the section and continued by the later ones. A repeated
 * section in one file continues it too (systemd merges sections), so its
 * keys count as repeated. */
static void begin_unit_section(struct parser *ps, const char *name) {
        const struct group_config *old;
        struct group_config *g;
        size_t i;

        ps->sec = SEC_SKIP;
        if (strcmp(name, "X-Cosched"))
                return; /* systemd's own sections */
        ps->unit_section = true;
        old = config_find_group(ps->c, ps->unit);
        if (old) {
                ps->group_idx = old - ps->c->groups;
                ps->sec = SEC_GROUP;
                return;
        }
        if (reserve_group(ps->c) < 0) {
                ps->e->nomem = true;
                return;
        }
        g = &ps->c->groups[ps->c->ngroups];
        *g = (struct group_config) { .name = strdup(ps->unit), .target = strdup(ps->unit), .kind = unit_kind(ps->unit),
                                     .kind_seen = true, .at = { ps->file, ps->lineno } };
        g->kind_at = g->at;
        i = ps->c->ngroups;
        if (!g->name || !g->target || strindex_put(&ps->c->by_name, g->name, i) < 0) {
                free(g->name);
                free(g->target);
                ps->e->nomem = true;
                return;
        }
        ps->c->ngroups++;
        ps->group_idx = i;
        ps->sec = SEC_GROUP;
        if (g->kind == KIND_NONE)
                add_error(ps->e, ps->file, ps->lineno,
                          "[X-Cosched] in %s: only services, scopes and slices (not -.slice) can be coscheduled",
                          ps->unit);
}

static void begin_section(struct parser *ps, const char *name) {
        const struct group_config *old;
        struct group_config *g;

        if (ps->unit) {
                begin_unit_section(ps, name);
                return;
        }
        memset(ps->key_line, 0, sizeof(ps->key_line));
        ps->sec = SEC_SKIP;
        if (!strcmp(name, "daemon")) {
                if (ps->daemon_seen) {
                        add_error(ps->e, ps->file, ps->lineno, "section [daemon] repeated (first at line %d)",
                                  ps->daemon_line);
                        return;
                }
                ps->daemon_seen = true;
                ps->daemon_line = ps->lineno;
                ps->sec = SEC_DAEMON;
                return;
        }
        if (!strcmp(name, "vms")) {
                if (ps->vms_line) {
                        add_error(ps->e, ps->file, ps->lineno, "section [vms] repeated (first at line %d)",
                                  ps->vms_line);
                        return;
                }
                ps->vms_line = ps->lineno;
                ps->sec = SEC_VMS;
                return;
        }
        if (!valid_group_name(name)) {
                add_error(ps->e, ps->file, ps->lineno,
                          "invalid group name '%s' (1-%d characters of A-Z a-z 0-9 _ . @ : -)", name, GROUP_NAME_MAX);
                return;
        }
        old = config_find_group(ps->c, name);
        if (old) {
                add_error(ps->e, ps->file, ps->lineno, "group [%s] is already defined at %s:%d", name, old->at.file,
                          old->at.line);
                return;
        }
        if (reserve_group(ps->c) < 0) {
                ps->e->nomem = true;
                return;
        }
        g = &ps->c->groups[ps->c->ngroups];
        *g = (struct group_config) { .name = strdup(name), .at = { ps->file, ps->lineno } };
        if (!g->name || strindex_put(&ps->c->by_name, g->name, ps->c->ngroups) < 0) {
                free(g->name);
                ps->e->nomem = true;
                return;
        }
        ps->group_idx = ps->c->ngroups++;
        ps->sec = SEC_GROUP;
}

static struct group_config *cur_group(struct parser *ps) {
        return &ps->c->groups[ps->group_idx];
}

/* ---- keys ---- */

static void set_kind(struct parser *ps, struct group_config *g, enum key k, const char *v) {
        static const enum group_kind kinds[] = { [K_UNIT] = KIND_UNIT, [K_SLICE] = KIND_SLICE, [K_CGROUP] = KIND_CGROUP };
        static const enum key kind_keys[] = { [KIND_UNIT] = K_UNIT, [KIND_SLICE] = K_SLICE, [KIND_CGROUP] = K_CGROUP };

        if (g->kind != KIND_NONE) {
                add_error(ps->e, ps->file, ps->lineno, "%s= conflicts with %s= at line %d: a group has one target",
                          keys[k].name, keys[kind_keys[g->kind]].name, g->kind_at.line);
                return;
        }
        if (k == K_CGROUP && !valid_cgroup_path(v)) {
                add_error(ps->e, ps->file, ps->lineno,
                          "CgroupPath=%s: not an absolute, normalized cgroup path below the root", v);
                return;
        }
        if (k == K_SLICE && (!valid_unit_name(v) || !has_suffix(v, ".slice") || !strcmp(v, "-.slice"))) {
                add_error(ps->e, ps->file, ps->lineno, "Slice=%s: not a slice unit name (NAME.slice, not -.slice)", v);
                return;
        }
        if (k == K_UNIT && (!valid_unit_name(v) || !(has_suffix(v, ".service") || has_suffix(v, ".scope")))) {
                add_error(ps->e, ps->file, ps->lineno,
                          "Unit=%s: not a service or scope unit name (slices go in Slice=)", v);
                return;
        }
        g->kind = kinds[k];
        g->kind_at = (struct where) { ps->file, ps->lineno };
        free(g->target);
        g->target = strdup(v);
        if (!g->target)
                ps->e->nomem = true;
}

static void set_size(struct parser *ps, struct group_config *g, enum key k, const char *v) {
        int n;

        /* A later file of a unit gives the size anew. */
        if (ps->unit && (g->cpus || g->spans) && g->size_at.file != ps->file)
                g->cpus = g->spans = 0;
        if (g->cpus || g->spans) {
                add_error(ps->e, ps->file, ps->lineno, "%s= conflicts with %s= at line %d: give the size one way",
                          keys[k].name, g->cpus ? "CPUs" : "Spans", g->size_at.line);
                return;
        }
        if (parse_range(v, 1, CPUSET_MAX, &n) < 0) {
                add_error(ps->e, ps->file, ps->lineno, "%s=%s: expected a number from 1 to %d", keys[k].name, v,
                          CPUSET_MAX);
                return;
        }
        if (k == K_CPUS)
                g->cpus = n;
        else
                g->spans = n;
        g->size_at = (struct where) { ps->file, ps->lineno };
}

static void group_key(struct parser *ps, enum key k, const char *v) {
        struct group_config *g = cur_group(ps);
        int n;

        switch (k) {
        case K_UNIT:
        case K_SLICE:
        case K_CGROUP:
                set_kind(ps, g, k, v);
                break;
        case K_LEVEL:
                if (!topology_level_spec_valid(v)) {
                        add_error(ps->e, ps->file, ps->lineno,
                                  "Level=%s: expected a level number (1-%d) or one of core, smt, llc, cache, "
                                  "package, socket, cls, mc, die, numa",
                                  v, TOPO_MAX_LEVELS - 1);
                        break;
                }
                free(g->level);
                g->level = strdup(v);
                if (!g->level)
                        ps->e->nomem = true;
                g->level_at = (struct where) { ps->file, ps->lineno };
                break;
        case K_CPUS:
        case K_SPANS:
                set_size(ps, g, k, v);
                break;
        case K_ALLOWED:
                if (cpuset_parse(v, &g->allowed) < 0 || cpuset_empty(&g->allowed)) {
                        add_error(ps->e, ps->file, ps->lineno, "AllowedCPUs=%s: expected a non-empty CPU list such as 0-7,16", v);
                        break;
                }
                g->has_allowed = true;
                g->allowed_at = (struct where) { ps->file, ps->lineno };
                break;
        case K_PLACEMENT:
                if (!strcasecmp(v, "pack"))
                        g->pref = PREF_PACK;
                else if (!strcasecmp(v, "spread"))
                        g->pref = PREF_SPREAD;
                else {
                        add_error(ps->e, ps->file, ps->lineno, "Placement=%s: expected pack or spread", v);
                        break;
                }
                g->has_pref = true;
                break;
        case K_PRIORITY:
                if (parse_range(v, -1000, 1000, &n) < 0) {
                        add_error(ps->e, ps->file, ps->lineno, "Priority=%s: expected a number from -1000 to 1000", v);
                        break;
                }
                g->priority = n;
                g->has_priority = true;
                break;
        default:
                break;
        }
}

static void daemon_key(struct parser *ps, enum key k, const char *v) {
        struct daemon_config *d = &ps->c->daemon;
        int n;

        switch (k) {
        case K_RESERVED:
                if (cpuset_parse(v, &d->reserved) < 0)
                        add_error(ps->e, ps->file, ps->lineno, "ReservedCPUs=%s: expected a CPU list such as 0-1", v);
                break;
        case K_ROUNDING:
                if (!strcasecmp(v, "up"))
                        d->rounding = ROUND_UP;
                else if (!strcasecmp(v, "down"))
                        d->rounding = ROUND_DOWN;
                else if (!strcasecmp(v, "error"))
                        d->rounding = ROUND_ERROR;
                else
                        add_error(ps->e, ps->file, ps->lineno, "Rounding=%s: expected up, down or error", v);
                break;
        case K_REPACK:
                if (parse_bool(v, &d->repack) < 0)
                        add_error(ps->e, ps->file, ps->lineno, "Repack=%s: expected yes or no", v);
                break;
        case K_RECONCILE:
                if (parse_range(v, 1, 3600, &n) < 0)
                        add_error(ps->e, ps->file, ps->lineno, "ReconcileSec=%s: expected seconds from 1 to 3600", v);
                else
                        d->reconcile_sec = n;
                break;
        default:
                break;
        }
}

const char *vm_pin_to_string(enum vm_pin p) {
        return p == VM_PIN_CORES ? "cores" : p == VM_PIN_SIBLINGS ? "siblings" : "no";
}

/* [vms]: the policy for QEMU VMs under machine.slice (vm.c). */
static void vms_key(struct parser *ps, enum key k, const char *v) {
        struct vm_policy *p = &ps->c->daemon.vms;

        switch (k) {
        case K_VM_ENABLE:
                if (parse_bool(v, &p->enable) < 0)
                        add_error(ps->e, ps->file, ps->lineno, "Enable=%s: expected yes or no", v);
                break;
        case K_VM_LEVEL:
                if (strcasecmp(v, "auto") && !topology_level_spec_valid(v)) {
                        add_error(ps->e, ps->file, ps->lineno,
                                  "Level=%s: expected auto, a level number (1-%d) or one of core, smt, llc, cache, "
                                  "package, socket, cls, mc, die, numa",
                                  v, TOPO_MAX_LEVELS - 1);
                        break;
                }
                free(p->level);
                p->level = strcasecmp(v, "auto") ? strdup(v) : NULL;
                if (strcasecmp(v, "auto") && !p->level)
                        ps->e->nomem = true;
                break;
        case K_VM_PLACEMENT:
                if (!strcasecmp(v, "pack"))
                        p->pref = PREF_PACK;
                else if (!strcasecmp(v, "spread"))
                        p->pref = PREF_SPREAD;
                else
                        add_error(ps->e, ps->file, ps->lineno, "Placement=%s: expected pack or spread", v);
                break;
        case K_VM_PIN:
                if (!strcasecmp(v, "cores"))
                        p->pin = VM_PIN_CORES;
                else if (!strcasecmp(v, "siblings"))
                        p->pin = VM_PIN_SIBLINGS;
                else if (!strcasecmp(v, "no"))
                        p->pin = VM_PIN_NO;
                else
                        add_error(ps->e, ps->file, ps->lineno, "Pin=%s: expected cores, siblings or no", v);
                break;
        default:
                break;
        }
}

/* "Key=" in a unit's drop-in: back to unset, as systemd resets a list. */
static void unit_reset_key(struct group_config *g, enum key k) {
        switch (k) {
        case K_LEVEL:
                free(g->level);
                g->level = NULL;
                g->level_seen = false;
                break;
        case K_CPUS:
        case K_SPANS:
                g->cpus = g->spans = 0;
                g->size_seen = false;
                break;
        case K_ALLOWED:
                g->has_allowed = false;
                cpuset_zero(&g->allowed);
                break;
        case K_PLACEMENT:
                g->pref = PREF_PACK;
                g->has_pref = false;
                break;
        case K_PRIORITY:
                g->priority = 0;
                g->has_priority = false;
                break;
        default:
                break;
        }
}

static int handler(void *user, const char *section, const char *name, const char *value) {
        struct parser *ps = user;
        int k;

        (void) section; /* we track sections ourselves, with line numbers */
        if (ps->sec == SEC_SKIP)
                return 1;
        if (ps->sec == SEC_NONE) {
                add_error(ps->e, ps->file, ps->lineno, "%s= outside of a section", name);
                return 1;
        }
        for (k = 0; k < _K_MAX; k++)
                if (!strcasecmp(name, keys[k].name) && keys[k].sec == ps->sec)
                        break;
        if (k == _K_MAX) {
                add_error(ps->e, ps->file, ps->lineno, "unknown key '%s' in %s section", name,
                          ps->unit ? "the [X-Cosched]" : ps->sec == SEC_DAEMON ? "the [daemon]" :
                          ps->sec == SEC_VMS ? "the [vms]" : "a group");
                return 1;
        }
        if (ps->unit && (k == K_UNIT || k == K_SLICE || k == K_CGROUP)) {
                add_error(ps->e, ps->file, ps->lineno,
                          "%s= in [X-Cosched]: the unit itself is coscheduled (%s= names a target in coschedd.conf)",
                          keys[k].name, keys[k].name);
                return 1;
        }
        if (ps->key_line[k]) {
                add_error(ps->e, ps->file, ps->lineno, "%s= repeated (first at line %d)", keys[k].name,
                          ps->key_line[k]);
                return 1;
        }
        ps->key_line[k] = ps->lineno;
        if (ps->sec == SEC_GROUP) {
                /* A bad value was reported already; "needs X=" would repeat it. */
                struct group_config *g = cur_group(ps);
                g->kind_seen |= k == K_UNIT || k == K_SLICE || k == K_CGROUP;
                g->level_seen |= k == K_LEVEL;
                g->size_seen |= k == K_CPUS || k == K_SPANS;
        }
        if (strchr(value, '#')) {
                add_error(ps->e, ps->file, ps->lineno,
                          "'#' in the value of %s=: comments after a value start with ';', or go on a line of their own",
                          keys[k].name);
                return 1;
        }
        if (!*value && ps->unit) {
                unit_reset_key(cur_group(ps), k);
                return 1;
        }
        if (!*value && k != K_RESERVED) {
                add_error(ps->e, ps->file, ps->lineno, "%s= has an empty value", keys[k].name);
                return 1;
        }
        if (ps->sec == SEC_DAEMON)
                daemon_key(ps, k, value);
        else if (ps->sec == SEC_VMS)
                vms_key(ps, k, value);
        else
                group_key(ps, k, value);
        return 1;
}

/* Classify the raw line; returns what inih should see (the line, or a
 * comment in its place when we have already reported it). */
static const char *check_line(struct parser *ps, char *line) {
        char *s = line, *end;

        while (*s == ' ' || *s == '\t')
                s++;
        end = s + strlen(s);
        while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
                *--end = 0;
        if (*s == 0 || *s == ';' || *s == '#')
                return ";";
        if (ps->unit) {
                /* systemd's continuation lines: part of the line before. */
                bool cont = ps->continued;

                ps->continued = end > s && end[-1] == '\\';
                if (cont) {
                        if (ps->sec == SEC_GROUP)
                                add_error(ps->e, ps->file, ps->lineno,
                                          "a continued line ('\\' at the end of the line before) in [X-Cosched]");
                        return ";";
                }
                if (*s != '[' && ps->sec != SEC_GROUP)
                        return ";"; /* systemd's keys */
                if (*s == '[' && (end[-1] != ']' || end - s < 3)) {
                        ps->sec = SEC_SKIP; /* systemd's to complain about */
                        return ";";
                }
        }
        if (*s == '[') {
                char name[256];
                size_t len;

                /* "[db] ; note" is fine, as inih allows: cut the comment. */
                for (char *c = s + 1; *c; c++)
                        if (*c == ';' && (c[-1] == ' ' || c[-1] == '\t')) {
                                *c = 0;
                                break;
                        }
                end = s + strlen(s);
                while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
                        *--end = 0;

                if (end[-1] != ']' || end - s < 3 || (size_t) (end - s) > sizeof(name)) {
                        add_error(ps->e, ps->file, ps->lineno, "malformed section header: expected [name]");
                        ps->sec = SEC_SKIP;
                        return ";";
                }
                len = end - s - 2;
                memcpy(name, s + 1, len);
                name[len] = 0;
                if (strchr(name, '[') || strchr(name, ']') || strchr(name, ';') || strchr(name, '#')) {
                        add_error(ps->e, ps->file, ps->lineno, "malformed section header: expected [name]");
                        ps->sec = SEC_SKIP;
                        return ";";
                }
                begin_section(ps, strstrip(name));
                return s;
        }
        {
                size_t eq = strcspn(s, "="), colon = strcspn(s, ":");
                if (!s[eq] || colon < eq) {
                        add_error(ps->e, ps->file, ps->lineno, "expected key=value");
                        return ";";
                }
                if (eq == 0) {
                        add_error(ps->e, ps->file, ps->lineno, "missing key before '='");
                        return ";";
                }
        }
        return s;
}

static char *reader(char *str, int num, void *stream) {
        struct parser *ps = stream;
        const char *nl, *out;
        char line[CONFIG_MAX_LINE + 2];
        size_t len;

        if (!*ps->p)
                return NULL;
        nl = strchr(ps->p, '\n');
        len = nl ? (size_t) (nl - ps->p) : strlen(ps->p);
        ps->lineno++;
        if (len > CONFIG_MAX_LINE || (int) len + 2 > num) {
                /* In a unit file, only [X-Cosched]'s lines are ours. */
                if (!ps->unit || ps->sec == SEC_GROUP)
                        add_error(ps->e, ps->file, ps->lineno, "line too long (%zu bytes, at most %d)", len,
                                  CONFIG_MAX_LINE);
                if (ps->unit)
                        ps->continued = len && ps->p[len - 1] == '\\';
                out = ";";
        } else {
                memcpy(line, ps->p, len);
                line[len] = 0;
                out = check_line(ps, line);
        }
        ps->p = nl ? nl + 1 : ps->p + len;
        snprintf(str, num, "%s\n", out);
        return str;
}

static void parse(struct parser *ps_in, const char *text, const char *filename) {
        struct parser ps = *ps_in;
        struct config *c = ps.c;
        struct config_errors *e = ps.e;
        int r;

        ps.file = intern_file(c, filename);
        if (!ps.file) {
                e->nomem = true;
                add_error(e, filename, 0, "out of memory");
                return;
        }
        /* Debian builds inih with these as run-time knobs. */
        ini_use_stack = false;
        ini_allow_realloc = false;
        ini_max_line = CONFIG_MAX_LINE + 64;
        ini_initial_alloc = CONFIG_MAX_LINE + 64;
        ini_allow_multiline = false;    /* an indented line is its own line, not a continuation */
        ini_allow_bom = true;
        ini_allow_inline_comments = true;
        ini_inline_comment_prefixes = ";";
        ini_stop_on_first_error = false;
        ini_allow_no_value = false;

        if (text[0] == (char) 0xEF && text[1] == (char) 0xBB && text[2] == (char) 0xBF)
                ps.p += 3;
        r = ini_parse_stream(reader, &ps, handler, &ps);
        if (r == -2) {
                e->nomem = true;
                add_error(e, ps.file, 0, "out of memory");
        }
        else if (r > 0 && !e->n)
                add_error(e, ps.file, r, "syntax error");
        *ps_in = ps;
}

void config_parse_string(struct config *c, const char *text, const char *filename, struct config_errors *e) {
        struct parser ps = { .c = c, .e = e, .p = text, .sec = SEC_NONE };

        parse(&ps, text, filename);
}

bool config_parse_unit_file(struct config *c, const char *unit, const char *text, const char *filename,
                            struct config_errors *e) {
        struct parser ps = { .c = c, .e = e, .p = text, .sec = SEC_NONE, .unit = unit };

        parse(&ps, text, filename);
        return ps.unit_section;
}

/* One index per kind: target -> the first group that names it. */
static int index_targets(const struct config *c, struct strindex by_target[KIND_CGROUP + 1]) {
        for (size_t i = 0; i < c->ngroups; i++) {
                const struct group_config *g = &c->groups[i];
                if (g->kind != KIND_NONE && g->target && strindex_put(&by_target[g->kind], g->target, i) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The group whose target is the first len bytes of name, plus suffix, if any. */
static const struct group_config *group_named(const struct config *c, const struct strindex *x, const char *name,
                                              size_t len, const char *suffix) {
        char buf[1100];
        size_t i;

        if (len + strlen(suffix) >= sizeof(buf))
                return NULL;
        memcpy(buf, name, len);
        strcpy(buf + len, suffix);
        return strindex_get(x, buf, &i) ? &c->groups[i] : NULL;
}

/* Every group g's cgroup is below: raw paths at each '/', slices by
 * systemd's naming (a-b.slice is inside a.slice) at each '-'. Services
 * name no parent here. One lookup per ancestor, not one per group. */
static void check_nesting(const struct config *c, const struct group_config *g, const struct strindex *by_target,
                          struct config_errors *e) {
        char sep = g->kind == KIND_CGROUP ? '/' : '-';
        const char *suffix = g->kind == KIND_CGROUP ? "" : ".slice";
        size_t end;

        if (!g->target || (g->kind != KIND_CGROUP && g->kind != KIND_SLICE))
                return;
        end = strlen(g->target) - strlen(suffix);
        for (size_t p = 1; p < end; p++) {
                const struct group_config *h;

                if (g->target[p] != sep || !(h = group_named(c, by_target, g->target, p, suffix)))
                        continue;
                add_error(e, g->kind_at.file, g->kind_at.line,
                          "group [%s] ('%s') is inside group [%s] ('%s' at %s:%d): coscheduled groups cannot nest",
                          g->name, g->target, h->name, h->target, h->kind_at.file, h->kind_at.line);
        }
}

static void check_group(const struct config *c, size_t i, const struct strindex *by_target, struct config_errors *e) {
        const struct group_config *g = &c->groups[i], *h;
        size_t first;

        if (g->kind == KIND_NONE && !g->kind_seen)
                add_error(e, g->at.file, g->at.line, "group [%s] needs one of Unit=, Slice= or CgroupPath=", g->name);
        if (!g->level && !g->level_seen)
                add_error(e, g->at.file, g->at.line, "group [%s] needs Level=", g->name);
        if (!g->cpus && !g->spans && !g->size_seen)
                add_error(e, g->at.file, g->at.line, "group [%s] needs CPUs= or Spans=", g->name);
        if (g->has_allowed && cpuset_subset(&g->allowed, &c->daemon.reserved))
                add_error(e, g->allowed_at.file, g->allowed_at.line,
                          "group [%s]: every CPU in AllowedCPUs= is reserved by ReservedCPUs=", g->name);
        if (g->kind == KIND_NONE || !g->target)
                return;
        check_nesting(c, g, &by_target[g->kind], e);
        if (strindex_get(&by_target[g->kind], g->target, &first) && first != i) {
                h = &c->groups[first];
                add_error(e, g->kind_at.file, g->kind_at.line, "group [%s] has the same target '%s' as group [%s] at %s:%d",
                          g->name, g->target, h->name, h->kind_at.file, h->kind_at.line);
        }
}

void config_finish(struct config *c, struct config_errors *e) {
        struct strindex by_target[KIND_CGROUP + 1] = {};

        if (index_targets(c, by_target) < 0)
                e->nomem = true;
        else
                for (size_t i = 0; i < c->ngroups; i++)
                        check_group(c, i, by_target, e);
        for (int k = 0; k <= KIND_CGROUP; k++)
                strindex_free(&by_target[k]);
}

static int load_file(struct config *c, const char *path, bool must_exist, struct config_errors *e) {
        char *text = NULL;
        int r;

        r = read_file_str(path, &text);
        if (r == -ENOENT && !must_exist)
                return 0;
        if (r < 0) {
                e->nomem |= r == -ENOMEM;
                add_error(e, path, 0, "cannot read: %s", strerror(-r));
                return r;
        }
        if ((size_t) r != strlen(text))
                add_error(e, path, 0, "contains NUL bytes");
        else
                config_parse_string(c, text, path, e);
        free(text);
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

struct names {
        char **v;
        size_t n;
};

static void names_free(struct names *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i]);
        free(l->v);
        *l = (struct names) {};
}

static int names_add(struct names *l, const char *dir, const char *name) {
        char **n = realloc(l->v, sizeof(char *) * (l->n + 1));

        if (!n)
                return -ENOMEM;
        l->v = n;
        if (asprintf(&l->v[l->n], "%s/%s", dir, name) < 0)
                return -ENOMEM;
        l->n++;
        return 0;
}

/* The *.conf files of dir, sorted. A missing dir is none, unless required. */
static int list_dropins(const char *dir, bool required, struct names *ret, struct config_errors *e) {
        struct dirent *de;
        DIR *d;
        int r = 0;

        d = opendir(dir);
        if (!d) {
                if (errno == ENOENT && !required)
                        return 0;
                r = -errno;
                e->nomem |= r == -ENOMEM;
                add_error(e, dir, 0, "cannot read the drop-in directory: %s", strerror(-r));
                return r;
        }
        errno = 0;
        while (r == 0 && (de = readdir(d))) {
                if (de->d_name[0] != '.' && has_suffix(de->d_name, ".conf"))
                        r = names_add(ret, dir, de->d_name);
        }
        if (r == 0 && errno)
                r = -errno;
        closedir(d);
        if (r < 0) {
                e->nomem |= r == -ENOMEM;
                add_error(e, dir, 0, "cannot read the drop-in directory: %s", strerror(-r));
                return r;
        }
        if (ret->n)
                qsort(ret->v, ret->n, sizeof(char *), cmp_str);
        return 0;
}

int config_load(const char *main_path, const char *dropin_dir, unsigned flags, struct config *c,
                struct config_errors *e) {
        struct names dropins = {};

        config_init(c);
        /* A missing default file is an empty config: the daemon then does
         * nothing. One named on the command line is a mistake. */
        load_file(c, main_path, flags & CONFIG_MAIN_REQUIRED, e);
        if (dropin_dir)
                list_dropins(dropin_dir, flags & CONFIG_DIR_REQUIRED, &dropins, e);
        for (size_t i = 0; i < dropins.n; i++)
                load_file(c, dropins.v[i], true, e);
        names_free(&dropins);
        config_finish(c, e);
        if (e->nomem) {
                config_errors_note_nomem(e);
                return -ENOMEM;
        }
        return e->n ? -EINVAL : 0;
}

void config_dump(const struct config *c, FILE *f) {
        char buf[4096];

        fprintf(f, "[daemon]\n");
        fprintf(f, "ReservedCPUs=%s\n", cpuset_format(&c->daemon.reserved, buf, sizeof(buf)));
        fprintf(f, "Rounding=%s\n", rounding_to_string(c->daemon.rounding));
        fprintf(f, "Repack=%s\n", c->daemon.repack ? "yes" : "no");
        fprintf(f, "ReconcileSec=%u\n", c->daemon.reconcile_sec);
        fprintf(f, "\n[vms]\nEnable=%s\nLevel=%s\nPlacement=%s\nPin=%s\n", c->daemon.vms.enable ? "yes" : "no",
                c->daemon.vms.level ? c->daemon.vms.level : "auto", c->daemon.vms.pref == PREF_SPREAD ? "spread" : "pack",
                vm_pin_to_string(c->daemon.vms.pin));
        for (size_t i = 0; i < c->ngroups; i++) {
                const struct group_config *g = &c->groups[i];
                static const char *const kk[] = { [KIND_NONE] = "?", [KIND_UNIT] = "Unit", [KIND_SLICE] = "Slice",
                                                  [KIND_CGROUP] = "CgroupPath" };

                fprintf(f, "\n; %s:%d\n[%s]\n", g->at.file, g->at.line, g->name);
                fprintf(f, "%s=%s\n", kk[g->kind], g->target ? g->target : "");
                fprintf(f, "Level=%s\n", g->level ? g->level : "");
                if (g->cpus)
                        fprintf(f, "CPUs=%u\n", g->cpus);
                else
                        fprintf(f, "Spans=%u\n", g->spans);
                if (g->has_allowed)
                        fprintf(f, "AllowedCPUs=%s\n", cpuset_format(&g->allowed, buf, sizeof(buf)));
                fprintf(f, "Placement=%s\n", g->pref == PREF_SPREAD ? "spread" : "pack");
                fprintf(f, "Priority=%d\n", g->priority);
        }
}

void config_group_to_request(const struct config *c, const struct group_config *g, const struct topology *t,
                             struct placement_request *req, char *errbuf, size_t errlen, char *note,
                             size_t notelen) {
        char sub[256];
        int level = 0;

        if (note && notelen)
                note[0] = 0;
        *req = (struct placement_request) {
                .name = g->name,
                .spans = g->spans,
                .allowed = g->has_allowed ? &g->allowed : NULL,
                .pref = g->pref,
                .priority = g->priority,
        };
        if (!g->level || topology_resolve_level(t, g->level, &level, sub, sizeof(sub)) < 0) {
                snprintf(errbuf, errlen, "%s", g->level ? sub : "no level");
                req->error = errbuf;
                return;
        }
        req->level = level;
        if (g->cpus) {
                unsigned s = t->levels[level].max_span_cpus, n = g->cpus;
                if (n % s && c->daemon.rounding == ROUND_ERROR) {
                        snprintf(errbuf, errlen, "CPUs=%u is not a multiple of the %u CPUs of a level-%d (%s) span",
                                 n, s, level, t->levels[level].name);
                        req->error = errbuf;
                        return;
                }
                if (n % s && c->daemon.rounding == ROUND_DOWN && n < s) {
                        snprintf(errbuf, errlen, "CPUs=%u is less than one level-%d (%s) span of %u CPUs", n, level,
                                 t->levels[level].name, s);
                        req->error = errbuf;
                        return;
                }
                n = c->daemon.rounding == ROUND_DOWN ? n / s * s : (n + s - 1) / s * s;
                req->cpus = n;
                /* Said where the user looks (log, coschedctl status): the
                 * group gets other CPUs than it asked for. */
                if (n != g->cpus && note)
                        snprintf(note, notelen, "CPUs=%u rounded %s to %u (whole level-%d %s spans of %u CPUs)",
                                 g->cpus, c->daemon.rounding == ROUND_DOWN ? "down" : "up", n, level,
                                 t->levels[level].name, s);
        }
}
