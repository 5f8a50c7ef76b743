/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coschedctl: show what coschedd decided, the span tree, and drift. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "cgroup.h"
#include "config.h"
#include "util.h"
#include "placement.h"
#include "running.h"
#include "state.h"
#include "topology.h"
#include "version.h"
#include "vmpin.h"

/* Exit status: scripts and monitoring tell these apart. */
enum {
        EXIT_OK = 0,
        EXIT_GROUPS = 1,        /* a group in error or pending, or drift (verify) */
        EXIT_USAGE = 2,
        EXIT_NOT_RUNNING = 3,   /* no checkpoint, or no daemon keeps it current */
};

struct opts {
        const char *state_dir, *sysfs_root, *cgroup_root, *proc_root;
        bool json;
        /* enable, disable */
        const char *level, *cpus, *spans, *placement, *allowed, *priority;
        const char *root;       /* NULL: / */
        int reload;             /* -1: unless --root */
        bool unit_opts;         /* one of the above was given */
};

#define DROPIN_NAME "50-cosched.conf"
#define UNIT_DIR "/etc/systemd/system"


static void help(void) {
        printf("coschedctl [OPTIONS...] COMMAND\n\n"
               "Commands:\n"
               "  status      Groups: kind, level, CPUs, spans, placed/waiting/pending/error\n"
               "  topology    The span tree with the group on each span\n"
               "  verify      Compare the cgroups with the placement\n"
               "  enable UNIT --level=LEVEL --cpus=N|--spans=N [--placement=pack|spread]\n"
               "              [--allowed-cpus=LIST] [--priority=N]\n"
               "              Write UNIT's [X-Cosched] drop-in, " UNIT_DIR "/UNIT.d/" DROPIN_NAME ",\n"
               "              and ask systemd to reload (coschedd places UNIT while it runs)\n"
               "  disable UNIT\n"
               "              Remove that drop-in, and ask systemd to reload\n\n"
               "Exit status: 0 all groups placed (or waiting for systemd) and the daemon\n"
               "running; 1 a group in error or pending, or drift (verify); 2 bad usage;\n"
               "3 no checkpoint, or coschedd not running (the checkpoint is stale).\n\n"
               "Options:\n"
               "  -h --help            Show this help\n"
               "     --version         Show the version\n"
               "     --json            Machine-readable output\n"
               "     --state-dir=DIR   coschedd's checkpoint (default /run/coschedd)\n"
               "     --sysfs-root=DIR  Read /sys below DIR\n"
               "     --cgroup-root=DIR The cgroup2 mount (default /sys/fs/cgroup)\n"
               "     --proc-root=DIR   verify: VMs' vCPU threads below DIR (default /proc)\n"
               "     --root=DIR        enable, disable: the drop-in below DIR; no reload\n"
               "     --reload, --no-reload\n"
               "                       enable, disable: ask systemd to reload, or not\n");
}

static void json_str(const char *s) {
        putchar('"');
        for (; s && *s; s++) {
                if (*s == '"' || *s == '\\')
                        printf("\\%c", *s);
                else if ((unsigned char) *s < 0x20)
                        printf("\\u%04x", *s);
                else
                        putchar(*s);
        }
        putchar('"');
}

/* "0,2,4": the spans (by lowest CPU) that make up cpus at level l. */
static void spans_of(const struct topology *t, bool have_topo, int l, const struct cpuset *cpus, char *buf, size_t len) {
        size_t off = 0;

        buf[0] = 0;
        if (!have_topo || l < 1 || l >= t->nlevels)
                return;
        CPUSET_FOREACH(c, cpus) {
                int s;
                if (c >= t->ncpu_ids || (s = t->levels[l].span_of[c]) < 0 || t->levels[l].spans[s].first != c)
                        continue;
                off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", c);
                if (off >= len)
                        break;
        }
}

/* A group in error or pending is not what the config asks for. Waiting
 * is: systemd is confining it, and it is not coscheduled meanwhile. */
static int groups_status(const struct state *st) {
        for (size_t i = 0; i < st->n; i++)
                if (st->e[i].state == GROUP_ERROR || st->e[i].state == GROUP_PENDING)
                        return EXIT_GROUPS;
        return EXIT_OK;
}

static int cmd_status(const struct opts *o, const struct state *st, const struct topology *t, bool have_topo) {
        static char cpus[CPUSET_MAX * 6], spans[CPUSET_MAX * 6];

        if (o->json) {
                printf("[");
                for (size_t i = 0; i < st->n; i++) {
                        const struct state_entry *e = &st->e[i];
                        cpuset_format(&e->cpus, cpus, sizeof(cpus));
                        spans_of(t, have_topo, e->level, &e->cpus, spans, sizeof(spans));
                        printf("%s{\"group\":", i ? "," : "");
                        json_str(e->name);
                        printf(",\"kind\":");
                        json_str(group_kind_to_string(e->kind));
                        printf(",\"target\":");
                        json_str(e->target);
                        printf(",\"level\":%d,\"level_name\":", e->level);
                        json_str(e->level_name);
                        printf(",\"cpus\":");
                        json_str(cpus);
                        printf(",\"spans\":");
                        json_str(spans);
                        printf(",\"state\":");
                        json_str(group_state_to_string(e->state));
                        printf(",\"cgroup\":");
                        json_str(e->cgroup);
                        printf(",\"reason\":");
                        json_str(e->reason);
                        printf("}");
                }
                printf("]\n");
                return groups_status(st);
        }
        printf("%-16s %-6s %-28s %-9s %-14s %-10s %-8s %s\n", "GROUP", "KIND", "TARGET", "LEVEL", "CPUS", "SPANS",
               "STATE", "REASON");
        for (size_t i = 0; i < st->n; i++) {
                const struct state_entry *e = &st->e[i];
                char level[48];
                cpuset_format(&e->cpus, cpus, sizeof(cpus));
                spans_of(t, have_topo, e->level, &e->cpus, spans, sizeof(spans));
                if (e->level)
                        snprintf(level, sizeof(level), "%d %s", e->level, e->level_name);
                else
                        snprintf(level, sizeof(level), "-");
                printf("%-16s %-6s %-28s %-9s %-14s %-10s %-8s %s\n", e->name, group_kind_to_string(e->kind), e->target,
                       level, cpus[0] ? cpus : "-", spans[0] ? spans : "-", group_state_to_string(e->state), e->reason);
        }
        return groups_status(st);
}

/* Who holds span s: one group if a group owns all of it, else a list
 * ("partly: a,reserved"). */
static void occupancy(const struct state *st, const struct cpuset *span, char *buf, size_t len) {
        size_t off = 0;
        bool whole = false;

        buf[0] = 0;
        for (size_t i = 0; i < st->n; i++) {
                const struct state_entry *e = &st->e[i];
                /* A waiting group holds its CPUs too: systemd is confining it there. */
                if ((e->state != GROUP_PLACED && e->state != GROUP_WAITING) || !cpuset_intersects(&e->cpus, span))
                        continue;
                whole = cpuset_subset(span, &e->cpus);
                off += snprintf(buf + off, len - off, "%s%s", off ? "," : "", e->name);
                if (off >= len)
                        break;
        }
        if (cpuset_intersects(span, &st->reserved))
                off += snprintf(buf + off, len - off, "%sreserved", off ? "," : "");
        if (off && !whole) {
                char tmp[512];
                snprintf(tmp, sizeof(tmp), "partly: %s", buf);
                snprintf(buf, len, "%s", tmp);
        }
}

static void print_span(const struct opts *o, const struct state *st, const struct topology *t, int l, int s, int depth,
                       bool *first) {
        const struct topo_span *sp = &t->levels[l].spans[s];
        char cpus[CPUSET_MAX * 6], who[512];

        cpuset_format(&sp->cpus, cpus, sizeof(cpus));
        occupancy(st, &sp->cpus, who, sizeof(who));
        if (o->json) {
                printf("%s{\"level\":%d,\"name\":", *first ? "" : ",", l);
                json_str(t->levels[l].name);
                printf(",\"span\":%d,\"cpus\":", sp->first);
                json_str(cpus);
                printf(",\"used_by\":");
                json_str(who);
                printf("}");
                *first = false;
        } else
                printf("%*s%s %s [%s]\n", depth * 2, "", t->levels[l].name, cpus, who[0] ? who : "free");
        if (l > 1)
                for (int i = 0; i < sp->nchildren; i++)
                        print_span(o, st, t, l - 1, sp->children[i], depth + 1, first);
}

static int cmd_topology(const struct opts *o, const struct state *st, const struct topology *t) {
        int top = t->nlevels - 1;
        bool first = true;

        if (o->json) {
                printf("{\"kernel\":%s,\"max_level\":%d,\"unavailable\":", t->kernel ? "true" : "false", t->max_level);
                json_str(t->unavailable);
                printf(",\"levels\":[");
                for (int l = 1; l <= top; l++) {
                        printf("%s", l > 1 ? "," : "");
                        json_str(t->levels[l].name);
                }
                printf("],\"spans\":[");
        } else {
                printf("%s, max_level %d%s%s\n", t->kernel ? "kernel coscheduling levels" : "CPU topology (fallback)",
                       t->max_level, t->unavailable[0] ? ": " : "", t->unavailable);
                for (int l = 1; l <= top; l++)
                        printf("level %d: %s (%d spans)%s%s%s\n", l, t->levels[l].name, t->levels[l].nspans,
                               l == t->smt_level ? " =core" : "", l == t->llc_level ? " =llc" : "",
                               l == t->package_level ? " =package" : "");
        }
        for (int s = 0; top >= 1 && s < t->levels[top].nspans; s++)
                print_span(o, st, t, top, s, 0, &first);
        if (o->json)
                printf("]}\n");
        return 0;
}

/* The cgroup a group's entry names: the one written, or a raw path. */
static const char *entry_cgroup(const struct state_entry *e) {
        if (e->cgroup[0])
                return e->cgroup;
        return e->kind == KIND_CGROUP ? e->target : "";
}

/* An unplaced group must at least not be coscheduled on CPUs nobody chose. */
static void verify_unplaced(const struct opts *o, const struct state_entry *e, char *msg, size_t len) {
        const char *cg = entry_cgroup(e);
        int level = 0;

        if (cg[0] && cgroup_get_scheduled(o->cgroup_root, cg, &level) == 0 && level != 0)
                snprintf(msg, len, "drift: cpu.scheduled is %d while %s: %s", level, group_state_to_string(e->state),
                         e->reason);
        else
                snprintf(msg, len, "%s: %s", group_state_to_string(e->state), e->reason);
}

static void verify_waiting(const struct opts *o, const struct state_entry *e, char *msg, size_t len) {
        int level = -1;

        /* Waiting for systemd's confinement is no drift, as long as the
         * group is not coscheduled meanwhile. */
        if (cgroup_get_scheduled(o->cgroup_root, e->cgroup, &level) == 0 && level != 0)
                snprintf(msg, len, "drift: cpu.scheduled is %d while waiting for systemd", level);
        else
                snprintf(msg, len, "waiting: %s", e->reason);
}

/* A thread's allowed CPUs as /proc shows them (Cpus_allowed_list). */
static int thread_cpus(const struct opts *o, long tid, struct cpuset *ret) {
        char path[PATH_MAX], *text = NULL, *l;
        int r;

        snprintf(path, sizeof(path), "%s/%ld/status", o->proc_root, tid);
        r = read_file_str(path, &text);
        if (r < 0)
                return r;
        l = strstr(text, "Cpus_allowed_list:");
        r = l ? cpuset_parse(strtok(l + strlen("Cpus_allowed_list:"), "\n"), ret) : -ENODATA;
        free(text);
        return r;
}

static int thread_vcpu(const struct opts *o, long tid) {
        char path[PATH_MAX], *comm = NULL;
        int idx = -1;

        snprintf(path, sizeof(path), "%s/%ld/comm", o->proc_root, tid);
        if (read_file_str(path, &comm) >= 0)
                idx = vm_vcpu_index(comm);
        free(comm);
        return idx;
}

/* A VM's group: each vCPU thread in its cgroup allowed exactly the CPU
 * its reason names ("pinned vCPU:CPU 0:2 1:3"). */
static void verify_pins(const struct opts *o, const struct state_entry *e, char *msg, size_t len) {
        int pins[1024], n = vm_parse_pins(e->reason, pins, 1024), seen = 0;
        char path[PATH_MAX], *threads = NULL, *save = NULL, have[64];
        struct cpuset cpus = {};

        if (!n)
                return;
        snprintf(path, sizeof(path), "%s%s/cgroup.threads", o->cgroup_root, e->cgroup);
        if (read_file_str(path, &threads) < 0) {
                snprintf(msg, len, "drift: cannot read %s", path);
                return;
        }
        for (char *t = strtok_r(threads, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
                long tid = atol(t);
                int idx = thread_vcpu(o, tid);

                if (idx < 0 || idx >= n || pins[idx] < 0)
                        continue;
                seen++;
                cpuset_zero(&cpus);
                if (thread_cpus(o, tid, &cpus) < 0 || cpuset_count(&cpus) != 1 || !cpuset_test(&cpus, pins[idx])) {
                        snprintf(msg, len, "drift: vCPU %d (thread %ld) may run on %s, want CPU %d", idx, tid,
                                 cpuset_format(&cpus, have, sizeof(have)), pins[idx]);
                        break;
                }
        }
        free(threads);
        if (!strcmp(msg, "ok") && seen != n)
                snprintf(msg, len, "drift: %d of %d pinned vCPU threads in %s", seen, n, e->cgroup);
}

static void verify_placed(const struct opts *o, const struct state_entry *e, char *msg, size_t len) {
        char want[4096], have[4096];
        struct cpuset cpus;
        int level = -1;

        if (!e->cgroup[0])
                snprintf(msg, len, "waiting: no cgroup yet");
        else if (cgroup_get_scheduled(o->cgroup_root, e->cgroup, &level) < 0 || level != e->level)
                snprintf(msg, len, "drift: cpu.scheduled is %d, want %d", level, e->level);
        else if (cgroup_get_cpus(o->cgroup_root, e->cgroup, &cpus, false) < 0 || !cpuset_equal(&cpus, &e->cpus))
                snprintf(msg, len, "drift: cpuset.cpus is %s, want %s", cpuset_format(&cpus, have, sizeof(have)),
                         cpuset_format(&e->cpus, want, sizeof(want)));
        else if (cgroup_effective_differs(o->cgroup_root, e->cgroup, &e->cpus, &cpus))
                snprintf(msg, len, "drift: cpuset.cpus.effective is %s, want %s", cpuset_format(&cpus, have, sizeof(have)),
                         cpuset_format(&e->cpus, want, sizeof(want)));
        else {
                snprintf(msg, len, "ok");
                verify_pins(o, e, msg, len);
        }
}

static void verify_print(const struct opts *o, const struct state_entry *e, const char *msg, bool *first) {
        const char *cg = entry_cgroup(e);

        if (o->json) {
                printf("%s{\"group\":", *first ? "" : ",");
                json_str(e->name);
                printf(",\"cgroup\":");
                json_str(cg);
                printf(",\"state\":");
                json_str(group_state_to_string(e->state));
                printf(",\"result\":");
                json_str(msg);
                printf("}");
                *first = false;
        } else
                printf("%-16s %-32s %s\n", e->name, cg[0] ? cg : "-", msg);
}

/* Every group: placed ones against their cgroups, waiting ones not
 * coscheduled yet, error and pending ones reported (and not coscheduled). */
static int cmd_verify(const struct opts *o, const struct state *st) {
        int r = EXIT_OK;
        bool first = true;

        if (o->json)
                printf("[");
        for (size_t i = 0; i < st->n; i++) {
                const struct state_entry *e = &st->e[i];
                char msg[512];

                if (e->state == GROUP_WAITING)
                        verify_waiting(o, e, msg, sizeof(msg));
                else if (e->state == GROUP_PLACED)
                        verify_placed(o, e, msg, sizeof(msg));
                else
                        verify_unplaced(o, e, msg, sizeof(msg));
                if (!strncmp(msg, "drift", 5) || e->state == GROUP_ERROR || e->state == GROUP_PENDING)
                        r = EXIT_GROUPS;
                verify_print(o, e, msg, &first);
        }
        if (o->json)
                printf("]\n");
        return r;
}

/* status and verify describe what a running daemon keeps current. */
static int report_liveness(const struct opts *o, enum liveness l, pid_t pid) {
        switch (l) {
        case LIVE:
                return EXIT_OK;
        case NO_CHECKPOINT:
                fprintf(stderr, "coschedctl: no checkpoint in %s: coschedd has not run since boot\n", o->state_dir);
                return EXIT_NOT_RUNNING;
        default:
                if (pid > 0)
                        fprintf(stderr, "coschedctl: coschedd (pid %d) is not running: the checkpoint in %s is stale\n",
                                (int) pid, o->state_dir);
                else
                        fprintf(stderr, "coschedctl: coschedd is not running: the checkpoint in %s is stale\n",
                                o->state_dir);
                return EXIT_NOT_RUNNING;
        }
}

static int run(const struct opts *o, const char *cmd) {
        struct state st;
        struct topology t = {};
        char err[256];
        bool have_topo;
        int r, live = EXIT_OK;
        enum liveness l;
        pid_t pid;

        /* topology shows the machine, with or without a daemon. */
        if (strcmp(cmd, "topology")) {
                l = running_check(o->state_dir, &pid);
                live = report_liveness(o, l, pid);
                if (l == NO_CHECKPOINT)
                        return live;
        }
        r = state_read(o->state_dir, &st);
        if (r < 0) {
                fprintf(stderr, "coschedctl: cannot read %s/%s: %s\n", o->state_dir, STATE_FILE, strerror(-r));
                return EXIT_NOT_RUNNING;
        }
        have_topo = topology_load(o->sysfs_root, &t, err, sizeof(err)) == 0;
        if (!strcmp(cmd, "status"))
                r = cmd_status(o, &st, &t, have_topo);
        else if (!strcmp(cmd, "topology")) {
                if (!have_topo) {
                        fprintf(stderr, "coschedctl: %s\n", err);
                        r = 1;
                } else
                        r = cmd_topology(o, &st, &t);
        } else
                r = cmd_verify(o, &st);
        if (have_topo)
                topology_free(&t);
        state_free(&st);
        /* A stale checkpoint is printed (it says what was applied last),
         * but the answer is "not running". */
        return live != EXIT_OK ? live : r;
}

/* ---- enable, disable: the unit's drop-in ---- */

static bool unit_name_ok(const char *unit) {
        size_t n = strlen(unit);

        return n > 0 && n < 256 && !strchr(unit, '/') && unit[0] != '.';
}

static int dropin_path(const struct opts *o, const char *unit, char *dir, size_t dlen, char *file, size_t flen) {
        if (!unit_name_ok(unit)) {
                fprintf(stderr, "coschedctl: '%s' is not a unit name\n", unit);
                return -EINVAL;
        }
        snprintf(dir, dlen, "%s" UNIT_DIR "/%s.d", o->root ? o->root : "", unit);
        snprintf(file, flen, "%s/" DROPIN_NAME, dir);
        return 0;
}

/* mkdir -p */
static int mkdir_parents(const char *dir) {
        char p[4096];

        snprintf(p, sizeof(p), "%s", dir);
        for (char *s = p + 1; *s; s++)
                if (*s == '/') {
                        *s = 0;
                        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        *s = '/';
                }
        return mkdir(p, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* systemctl daemon-reload: PID 1 reads the drop-in, and coschedd follows
 * its Reloading signal. */
static int reload_systemd(const struct opts *o, const char *what) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r;

        if (o->reload == 0 || (o->reload < 0 && o->root)) {
                if (!o->root)
                        printf("Run systemctl daemon-reload to %s it.\n", what);
                return EXIT_OK;
        }
        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "Reload", &e, NULL, NULL);
        if (r < 0)
                fprintf(stderr, "coschedctl: asking systemd to reload: %s; run systemctl daemon-reload to %s it\n",
                        e.message ? e.message : strerror(-r), what);
        sd_bus_error_free(&e);
        sd_bus_flush_close_unref(bus);
        return r < 0 ? EXIT_GROUPS : EXIT_OK;
}

/* The drop-in's text, checked by the parser coschedd reads it with. */
static int enable_text(const struct opts *o, const char *unit, const char *file, char **ret) {
        struct config_errors e = {};
        struct config c;
        char *t = NULL;
        int r = 0;

        if (!o->level || (!o->cpus == !o->spans)) {
                fprintf(stderr, "coschedctl: enable needs --level and one of --cpus or --spans\n");
                return -EINVAL;
        }
        strappendf(&t, "# Written by coschedctl enable: coscheduling for %s (see coschedd.unit(5)).\n"
                       "# coschedctl disable %s removes this file.\n[X-Cosched]\nLevel=%s\n", unit, unit, o->level);
        if (o->cpus)
                strappendf(&t, "CPUs=%s\n", o->cpus);
        if (o->spans)
                strappendf(&t, "Spans=%s\n", o->spans);
        if (o->placement)
                strappendf(&t, "Placement=%s\n", o->placement);
        if (o->allowed)
                strappendf(&t, "AllowedCPUs=%s\n", o->allowed);
        if (o->priority)
                strappendf(&t, "Priority=%s\n", o->priority);
        if (!t)
                return -ENOMEM;
        if (strpbrk(o->level, "\n") || (o->cpus && strchr(o->cpus, '\n')) || (o->spans && strchr(o->spans, '\n')) ||
            (o->placement && strchr(o->placement, '\n')) || (o->allowed && strchr(o->allowed, '\n')) ||
            (o->priority && strchr(o->priority, '\n'))) {
                fprintf(stderr, "coschedctl: a value with a newline\n");
                free(t);
                return -EINVAL;
        }
        config_init(&c);
        config_parse_unit_file(&c, unit, t, file, &e);
        config_finish(&c, &e);
        for (size_t i = 0; i < e.n; i++)
                fprintf(stderr, "coschedctl: %s\n", e.msgs[i]);
        if (e.n || e.nomem)
                r = e.nomem && !e.n ? -ENOMEM : -EINVAL;
        config_errors_free(&e);
        config_free(&c);
        if (r < 0) {
                free(t);
                return r;
        }
        *ret = t;
        return 0;
}

/* A level this machine does not have is written all the same (the unit
 * may be meant for another kernel), but said. */
static void warn_level(const struct opts *o, const char *unit) {
        struct topology t;
        char err[256];
        int level;

        if (topology_load(o->sysfs_root, &t, err, sizeof(err)) < 0)
                return;
        if (topology_resolve_level(&t, o->level, &level, err, sizeof(err)) < 0)
                fprintf(stderr, "coschedctl: warning: Level=%s: %s: %s will be in error here\n", o->level, err, unit);
        else if (!t.unavailable[0] && level > t.max_level)
                fprintf(stderr, "coschedctl: warning: Level=%s is level %d, above this kernel's max_level %d: %s "
                        "will be in error here\n", o->level, level, t.max_level, unit);
        topology_free(&t);
}

static int cmd_enable(const struct opts *o, const char *unit) {
        char dir[4096], file[4200], *text = NULL;
        int r;

        if (dropin_path(o, unit, dir, sizeof(dir), file, sizeof(file)) < 0)
                return EXIT_USAGE;
        r = enable_text(o, unit, file, &text);
        if (r < 0)
                return r == -ENOMEM ? EXIT_GROUPS : EXIT_USAGE;
        warn_level(o, unit);
        r = mkdir_parents(dir);
        if (r >= 0)
                r = write_file_atomic(file, text);
        free(text);
        if (r < 0) {
                fprintf(stderr, "coschedctl: writing %s: %s\n", file, strerror(-r));
                return EXIT_GROUPS;
        }
        printf("Wrote %s.\n", file);
        return reload_systemd(o, "apply");
}

static int cmd_disable(const struct opts *o, const char *unit) {
        char dir[4096], file[4200];

        if (dropin_path(o, unit, dir, sizeof(dir), file, sizeof(file)) < 0)
                return EXIT_USAGE;
        if (unlink(file) < 0) {
                if (errno == ENOENT)
                        fprintf(stderr, "coschedctl: %s has no %s (coschedctl enable writes it); an [X-Cosched] "
                                "section elsewhere is not coschedctl's to remove\n", unit, file);
                else
                        fprintf(stderr, "coschedctl: removing %s: %s\n", file, strerror(errno));
                return EXIT_GROUPS;
        }
        (void) rmdir(dir); /* only if nothing else is in it */
        printf("Removed %s.\n", file);
        return reload_systemd(o, "apply");
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },  { "version", no_argument, NULL, 'V' },
                { "json", no_argument, NULL, 'j' },
                { "state-dir", required_argument, NULL, 's' }, { "sysfs-root", required_argument, NULL, 'S' },
                { "cgroup-root", required_argument, NULL, 'c' }, { "proc-root", required_argument, NULL, 'O' },
                { "level", required_argument, NULL, 'L' }, { "cpus", required_argument, NULL, 'C' },
                { "spans", required_argument, NULL, 'N' }, { "placement", required_argument, NULL, 'P' },
                { "allowed-cpus", required_argument, NULL, 'A' }, { "priority", required_argument, NULL, 'p' },
                { "root", required_argument, NULL, 'R' }, { "reload", no_argument, NULL, 'r' },
                { "no-reload", no_argument, NULL, 'n' }, {},
        };
        struct opts o = { .state_dir = "/run/coschedd", .sysfs_root = "", .cgroup_root = "/sys/fs/cgroup",
                          .proc_root = "/proc", .reload = -1 };
        const char *cmd;
        int c;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return EXIT_OK;
                case 'V':
                        printf("coschedctl %s\n", COSCHED_VERSION);
                        return EXIT_OK;
                case 'j':
                        o.json = true;
                        break;
                case 's':
                        o.state_dir = optarg;
                        break;
                case 'S':
                        o.sysfs_root = optarg;
                        break;
                case 'c':
                        o.cgroup_root = optarg;
                        break;
                case 'O':
                        o.proc_root = optarg;
                        break;
                case 'L':
                        o.level = optarg;
                        o.unit_opts = true;
                        break;
                case 'C':
                        o.cpus = optarg;
                        o.unit_opts = true;
                        break;
                case 'N':
                        o.spans = optarg;
                        o.unit_opts = true;
                        break;
                case 'P':
                        o.placement = optarg;
                        o.unit_opts = true;
                        break;
                case 'A':
                        o.allowed = optarg;
                        o.unit_opts = true;
                        break;
                case 'p':
                        o.priority = optarg;
                        o.unit_opts = true;
                        break;
                case 'R':
                        o.root = optarg;
                        break;
                case 'r':
                case 'n':
                        o.reload = c == 'r';
                        break;
                default:
                        return EXIT_USAGE;
                }
        cmd = optind < argc ? argv[optind] : "status";
        if (!strcmp(cmd, "enable") || !strcmp(cmd, "disable")) {
                if (optind + 2 != argc) {
                        fprintf(stderr, "coschedctl: %s takes one unit name\n", cmd);
                        return EXIT_USAGE;
                }
                if (!strcmp(cmd, "disable") && o.unit_opts) {
                        fprintf(stderr, "coschedctl: disable takes no --level, --cpus, ... options\n");
                        return EXIT_USAGE;
                }
                return !strcmp(cmd, "enable") ? cmd_enable(&o, argv[optind + 1]) : cmd_disable(&o, argv[optind + 1]);
        }
        if (strcmp(cmd, "status") && strcmp(cmd, "topology") && strcmp(cmd, "verify")) {
                fprintf(stderr, "coschedctl: unknown command '%s' (status, topology, verify, enable, disable)\n", cmd);
                return EXIT_USAGE;
        }
        if (o.unit_opts || o.root || o.reload >= 0) {
                fprintf(stderr, "coschedctl: --level, --cpus, --root, ... are options of enable and disable\n");
                return EXIT_USAGE;
        }
        if (optind + 1 < argc) {
                fprintf(stderr, "coschedctl: unexpected argument '%s': %s takes none\n", argv[optind + 1], cmd);
                return EXIT_USAGE;
        }
        return run(&o, cmd);
}
