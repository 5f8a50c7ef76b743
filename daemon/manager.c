/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "bus.h"
#include "cgroup.h"
#include "log.h"
#include "manager.h"
#include "placement.h"
#include "running.h"
#include "util.h"

/* PID 1 realizes AllowedCPUs= from its own loop, some time after
 * SetUnitProperties returned; until cpuset.cpus shows it a group waits
 * (not coscheduled), looked at this often, for this long. Then it is an
 * error, retried every ReconcileSec. */
#define CONFINE_POLL_USEC (20 * 1000)
#define CONFINE_TIMEOUT_USEC (2 * 1000 * 1000)

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static int load_config(const struct manager_options *o, struct config *c) {
        struct config_errors e = {};
        int r = config_load(o->config_path, o->config_dir, o->config_flags, c, &e);

        for (size_t i = 0; i < e.n; i++)
                log_error("%s", e.msgs[i]);
        config_errors_free(&e);
        return r;
}

/* The groups to place: config's, then the units' [X-Cosched] ones.
 * config wins: a unit it names (as a group name or a target) keeps
 * config's group, and its own section is ignored, with a notice. */
/* The VMs among the running units (names), and their groups. Called only
 * once the new group array exists: vms_update frees the old VM groups,
 * which m->groups points to until it is replaced. */
static int vm_groups(struct manager *m, const char **names, size_t nn, const struct group_config ***ret,
                     size_t *n) {
        *ret = NULL;
        *n = 0;
        if (!m->vms)
                return 0;
        vms_update(m->vms, names, nn, &m->config.daemon.vms, m->have_topo ? &m->topo : NULL);
        return vms_groups(m->vms, ret, n);
}

static void rebuild_groups(struct manager *m) {
        const struct group_config **ug = NULL, **vg = NULL, **v;
        const char **names = NULL;
        struct strindex by_target = {};
        size_t nu = 0, nv = 0, nn = 0, n = 0, k;
        bool nomem = false;

        if (units_groups(m->units, &ug, &nu) < 0)
                nomem = true;
        /* VMs are running units: nn bounds their number. */
        if ((m->vms && units_running(m->units, &names, &nn) < 0) ||
            !(v = calloc(m->config.ngroups + nu + nn + 1, sizeof(*v)))) {
                log_error("out of memory: the groups of units and VMs stay as they were");
                free(ug);
                free(names);
                return;
        }
        if (vm_groups(m, names, nn, &vg, &nv) < 0)
                nomem = true;
        free(names);
        strindex_free(&m->groups_by_name);
        for (size_t i = 0; i < m->config.ngroups; i++) {
                const struct group_config *g = &m->config.groups[i];

                v[n] = g;
                nomem |= strindex_put(&m->groups_by_name, g->name, n) < 0;
                if ((nu || nv) && g->target)
                        nomem |= strindex_put(&by_target, g->target, n) < 0;
                n++;
        }
        for (size_t i = 0; i < nu; i++) {
                const struct group_config *g = ug[i];

                if (strindex_get(&m->groups_by_name, g->name, &k) || strindex_get(&by_target, g->target, &k)) {
                        log_group(LOG_NOTICE, g->name,
                                  "%s: group [%s] at %s:%d names it: that wins over the unit's [X-Cosched] at %s:%d",
                                  g->name, v[k]->name, v[k]->at.file, v[k]->at.line, g->at.file, g->at.line);
                        continue;
                }
                v[n] = g;
                nomem |= strindex_put(&m->groups_by_name, g->name, n) < 0;
                n++;
        }
        for (size_t i = 0; i < nv; i++) {
                const struct group_config *g = vg[i];

                if (strindex_get(&m->groups_by_name, g->name, &k) || strindex_get(&by_target, g->target, &k)) {
                        log_group(LOG_NOTICE, g->name, "%s: group [%s] names its cgroup %s: that wins over [vms]",
                                  g->name, v[k]->name, g->target);
                        continue;
                }
                v[n] = g;
                nomem |= strindex_put(&m->groups_by_name, g->name, n) < 0;
                n++;
        }
        if (nomem)
                log_error("out of memory indexing the groups: lookups are linear");
        strindex_free(&by_target);
        free(ug);
        free(vg);
        free(m->groups);
        m->groups = v;
        m->ngroups = n;
}

/* A group by name, and its index in m->groups. */
static const struct group_config *find_group(const struct manager *m, const char *name, size_t *idx) {
        if (m->groups_by_name.n == m->ngroups)
                return strindex_get(&m->groups_by_name, name, idx) ? m->groups[*idx] : NULL;
        for (size_t i = 0; i < m->ngroups; i++)
                if (!strcmp(m->groups[i]->name, name)) {
                        *idx = i;
                        return m->groups[i];
                }
        return NULL;
}

static void read_online(struct manager *m, char *buf, size_t len) {
        char path[4096], *v = NULL;

        snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", m->opt.sysfs_root);
        buf[0] = 0;
        if (read_file_str(path, &v) >= 0)
                snprintf(buf, len, "%s", v);
        free(v);
}

/* (Re)read the topology; returns true if it changed. */
static bool load_topology(struct manager *m) {
        struct topology t;
        char err[256];

        read_online(m, m->online, sizeof(m->online));
        if (topology_load(m->opt.sysfs_root, &t, err, sizeof(err)) < 0) {
                bool changed = m->have_topo || strcmp(err, m->topo_err);
                if (changed)
                        log_error("cannot use the CPU topology: %s", err);
                if (m->have_topo)
                        topology_free(&m->topo);
                m->have_topo = false;
                snprintf(m->topo_err, sizeof(m->topo_err), "topology: %s", err);
                return changed;
        }
        if (m->have_topo && topology_equal(&m->topo, &t)) {
                topology_free(&t);
                return false;
        }
        if (m->have_topo)
                topology_free(&m->topo);
        m->topo = t;
        m->have_topo = true;
        m->topo_err[0] = 0;
        log_info("topology: %d online CPUs, %d levels, max_level %d%s%s", cpuset_count(&t.online), t.nlevels - 1,
                 t.max_level, t.unavailable[0] ? "; " : "", t.unavailable);
        /* A VM's level comes from the topology, and its group points into it. */
        if (m->vms)
                rebuild_groups(m);
        return true;
}

static void schedule_reconcile(struct manager *m);

/* From vm.c: a VM's vCPU threads were found (or not, in time). */
static void on_vms_event(void *userdata) {
        struct manager *m = userdata;

        rebuild_groups(m);
        if (m->started)
                schedule_reconcile(m);
}

/* CPUWeight=100 that an earlier run set is still ours to take back. */
static void seed_weights(struct manager *m) {
        for (size_t i = 0; m->bus && i < m->st.n; i++)
                if (m->st.e[i].weight_ours && bus_set_weight_ours(m->bus, m->st.e[i].target) < 0)
                        log_warning("out of memory: %s will keep CPUWeight=100 when released", m->st.e[i].target);
}

int manager_new(const struct manager_options *o, struct manager **ret) {
        struct manager *m = calloc(1, sizeof(*m));
        int r;

        if (!m)
                return -ENOMEM;
        m->opt = *o;
        m->running_fd = -1;
        m->ask_systemd = true;
        r = load_config(o, &m->config);
        if (r < 0) {
                free(m);
                return r;
        }
        load_topology(m);
        r = vms_new(o->cgroup_root, o->proc_root ? o->proc_root : "", on_vms_event, m, &m->vms);
        if (r < 0) {
                config_free(&m->config);
                free(m);
                return r;
        }
        rebuild_groups(m);
        if (mkdir(o->state_dir, 0755) < 0 && errno != EEXIST)
                log_warning("cannot create %s: %s", o->state_dir, strerror(errno));
        r = state_read(o->state_dir, &m->st);
        if (r < 0) {
                log_warning("ignoring unreadable checkpoint in %s: %s", o->state_dir, strerror(-r));
                state_free(&m->st);
        }
        if (o->use_bus) {
                r = bus_open(&m->bus);
                if (r < 0) {
                        log_warning("no system bus (%s): systemd units cannot be confined", strerror(-r));
                        m->bus = NULL;
                }
        }
        seed_weights(m);
        *ret = m;
        return 0;
}

void manager_free(struct manager *m) {
        if (!m)
                return;
        sd_event_source_unref(m->timer);
        sd_event_source_unref(m->defer);
        sd_event_source_unref(m->confine);
        sd_event_source_unref(m->publish);
        sd_event_source_unref(m->units_wait);
        sd_device_monitor_unref(m->monitor);
        units_free(m->units);
        vms_free(m->vms);
        bus_free(m->bus);
        sd_event_unref(m->event);
        free(m->groups);
        strindex_free(&m->groups_by_name);
        config_free(&m->config);
        if (m->have_topo)
                topology_free(&m->topo);
        state_free(&m->st);
        if (m->running_fd >= 0)
                close(m->running_fd);
        free(m);
}

static bool same_target(const struct state_entry *e, const struct group_config *g) {
        return e->kind == g->kind && !strcmp(e->target, g->target);
}

/* Groups that held CPUs and no longer will: coscheduling off, then widen
 * (for units, systemd's answer is logged by on_unit_answer). */
static void unplace_gone(struct manager *m, const struct apply_ctx *a, const struct placement_result *res) {
        for (size_t i = 0; i < m->st.n; i++) {
                const struct state_entry *e = &m->st.e[i];
                size_t k = 0;
                const struct group_config *g = find_group(m, e->name, &k);
                char err[512];
                int r;

                if (cpuset_empty(&e->cpus))
                        continue;
                if (g && same_target(e, g) && res[k].state == GROUP_PLACED)
                        continue;
                r = apply_unplace(a, e->name, e->kind, e->target, e->cgroup, err, sizeof(err));
                if (r < 0)
                        log_group(LOG_WARNING, e->name, "releasing %s: %s", e->target, err);
                else if (r == APPLIED)
                        log_group(LOG_INFO, e->name, "released %s", e->target);
        }
}

static void log_transition(const struct state_entry *old, const struct state_entry *e) {
        char cpus[4096];

        if (old && old->state == e->state && cpuset_equal(&old->cpus, &e->cpus) && !strcmp(old->reason, e->reason))
                return;
        cpuset_format(&e->cpus, cpus, sizeof(cpus));
        if (e->state == GROUP_PLACED)
                log_transition_fields(LOG_INFO, e->name, "placed", cpus, "placed %s on CPUs %s (level %d %s)%s%s",
                                      e->target, cpus, e->level, e->level_name, e->reason[0] ? ": " : "", e->reason);
        else
                log_transition_fields(e->state == GROUP_ERROR ? LOG_ERR : LOG_NOTICE, e->name,
                                      group_state_to_string(e->state), cpus, "%s %s: %s",
                                      group_state_to_string(e->state), e->target, e->reason);
}

/* Build the placement requests; current placements come from the checkpoint.
 * note[i]: how group i's CPUs= was rounded, "" if it was not. */
static void build_requests(struct manager *m, struct placement_request *req, char (*errbuf)[320], char (*note)[160]) {
        for (size_t i = 0; i < m->ngroups; i++) {
                const struct group_config *g = m->groups[i];
                const struct state_entry *e = state_find(&m->st, g->name);

                if (!m->have_topo || g->error) {
                        /* A unit whose [X-Cosched] has errors: in error, alone. */
                        req[i] = (struct placement_request) { .name = g->name,
                                                              .error = g->error ? g->error : m->topo_err };
                        continue;
                }
                config_group_to_request(&m->config, g, &m->topo, &req[i], errbuf[i], sizeof(errbuf[i]), note[i],
                                        sizeof(note[i]));
                if (e && same_target(e, g) && e->level == req[i].level && !cpuset_empty(&e->cpus))
                        req[i].current = &e->cpus;
                /* A cgroup that is not there (removed behind our back, or
                 * not created yet) holds no CPUs: pending until it is. */
                if (!req[i].error && g->kind == KIND_CGROUP && !cgroup_exists(m->opt.cgroup_root, g->target)) {
                        snprintf(errbuf[i], sizeof(errbuf[i]), "cgroup %s does not exist", g->target);
                        req[i].absent = errbuf[i];
                }
        }
}

static void fill_entry(const struct manager *m, const struct group_config *g, const struct placement_request *req,
                       const struct placement_result *res, const char *note, struct state_entry *e) {
        snprintf(e->name, sizeof(e->name), "%s", g->name);
        e->kind = g->kind;
        snprintf(e->target, sizeof(e->target), "%s", g->target);
        e->level = req->error ? 0 : req->level;
        snprintf(e->level_name, sizeof(e->level_name), "%s",
                 e->level && m->have_topo ? m->topo.levels[e->level].name : "");
        e->state = res->state;
        if (res->state == GROUP_PLACED)
                e->cpus = res->cpus;
        snprintf(e->note, sizeof(e->note), "%s", note);
        /* A rounded size is said with the state, so that the log and
         * coschedctl status show why the group got other CPUs than asked. */
        snprintf(e->reason, sizeof(e->reason), "%s%s%s", res->reason, res->reason[0] && note[0] ? "; " : "",
                 res->state == GROUP_ERROR ? "" : note);
}

/* The clock of a wait for systemd runs from the first reconcile that found
 * the group unconfined, not from the latest: a reconcile in between (timer,
 * JobRemoved) must not keep it waiting for ever. */
static uint64_t waiting_since(const struct state_entry *old, const struct state_entry *e, uint64_t now) {
        if (old && old->waiting_since && old->kind == e->kind && !strcmp(old->target, e->target) &&
            !strcmp(old->cgroup, e->cgroup) && cpuset_equal(&old->cpus, &e->cpus))
                return old->waiting_since;
        return now;
}

/* why: apply's account of what cpuset.cpus shows. */
static void mark_waiting(const struct manager *m, struct state_entry *e, const char *why, uint64_t now) {
        if (now - e->waiting_since < CONFINE_TIMEOUT_USEC) {
                e->state = GROUP_WAITING;
                snprintf(e->reason, sizeof(e->reason), "%s", why);
                return;
        }
        e->state = GROUP_ERROR;
        snprintf(e->reason, sizeof(e->reason), "%s; waited %us, retrying every %us", why,
                 CONFINE_TIMEOUT_USEC / 1000000, m->config.daemon.reconcile_sec);
}

static void set_placed(struct state_entry *e) {
        e->state = GROUP_PLACED;
        snprintf(e->reason, sizeof(e->reason), "%s", e->note);
        e->waiting_since = 0;
}

/* A unit whose cgroup shows its CPUs: coschedule it; else wait for systemd. */
static void unit_confined(const struct manager *m, struct state_entry *e, const struct state_entry *old, uint64_t now) {
        struct apply_ctx a = { .cgroup_root = m->opt.cgroup_root };
        char err[512];
        int r;

        r = apply_confined(&a, e->cgroup, e->level, &e->cpus, err, sizeof(err));
        if (r == APPLIED)
                set_placed(e);
        else if (r < 0) {
                e->state = GROUP_ERROR;
                snprintf(e->reason, sizeof(e->reason), "%s", err);
                e->waiting_since = 0;
        } else {
                e->waiting_since = waiting_since(old, e, now);
                mark_waiting(m, e, err, now);
        }
}

/* Placed where it already was: it stays placed while systemd is asked
 * again (in the background), and its cpu.scheduled is repaired now. */
static bool unit_steady(const struct state_entry *old, const struct state_entry *e) {
        return old && old->state == GROUP_PLACED && old->kind == e->kind && !strcmp(old->target, e->target) &&
               old->level == e->level && cpuset_equal(&old->cpus, &e->cpus);
}

static void apply_unit(struct manager *m, const struct apply_ctx *a, const struct placement_result *res,
                       struct state_entry *e) {
        const struct state_entry *old = state_find(&m->st, e->name);
        char err[512], cpus[4096], why[sizeof(e->reason)];
        uint64_t now;
        int r;

        if (old && old->kind == e->kind && !strcmp(old->target, e->target))
                snprintf(e->cgroup, sizeof(e->cgroup), "%s", old->cgroup);
        /* Placed where it was, and no word from systemd since the last
         * look (no job, no unit event): cgroupfs alone says whether it
         * still holds, so that an idle daemon makes no calls to PID 1. An
         * inactive unit waits for its start job. */
        if (!m->ask_systemd && unit_steady(old, e) && !res->moved) {
                if (!e->cgroup[0]) {
                        snprintf(e->reason, sizeof(e->reason), "%s", old->reason);
                        return;
                }
                if (apply_confined(&(struct apply_ctx) { .cgroup_root = m->opt.cgroup_root }, e->cgroup, e->level,
                                   &e->cpus, err, sizeof(err)) == APPLIED) {
                        snprintf(e->reason, sizeof(e->reason), "%s", old->reason);
                        return;
                }
        }
        r = apply_place(a, e->name, e->kind, e->target, e->level, &e->cpus, res->moved, e->cgroup, err, sizeof(err));
        if (r < 0) {
                e->state = GROUP_ERROR;
                snprintf(e->reason, sizeof(e->reason), "%s", err);
                return;
        }
        if (unit_steady(old, e)) {
                snprintf(e->reason, sizeof(e->reason), "%s", old->reason);
                if (e->cgroup[0])
                        unit_confined(m, e, old, now_usec());
                return;
        }
        /* Not coscheduled until systemd says where its cgroup is and that
         * cgroup shows the CPUs. Asked again for the same CPUs, it keeps
         * what it waits for, and its clock: a timed-out group stays an
         * error rather than flip to waiting at every reconcile. */
        now = now_usec();
        e->state = GROUP_WAITING;
        e->asking = true;
        e->waiting_since = waiting_since(old, e, now);
        if (e->waiting_since != now)
                snprintf(why, sizeof(why), "%.*s", (int) strcspn(old->reason, ";"), old->reason);
        else
                snprintf(why, sizeof(why), "asked systemd for AllowedCPUs=%s, no answer yet",
                         cpuset_format(&e->cpus, cpus, sizeof(cpus)));
        mark_waiting(m, e, why, now);
}

static void apply_group(struct manager *m, const struct apply_ctx *a, size_t i, const struct placement_request *req,
                        const struct placement_result *res, struct state_entry *e) {
        const struct group_config *g = m->groups[i];
        char err[512];
        int r;

        if (res->state != GROUP_PLACED)
                return;
        if (g->kind != KIND_CGROUP) {
                apply_unit(m, a, res, e);
                return;
        }
        snprintf(e->cgroup, sizeof(e->cgroup), "%s", g->target);
        r = apply_place(a, g->name, g->kind, g->target, req->level, &res->cpus, res->moved, g->target, err,
                        sizeof(err));
        if (r < 0) {
                e->state = GROUP_ERROR;
                snprintf(e->reason, sizeof(e->reason), "%s", err);
        }
}

static size_t count_state(const struct state *st, enum group_state s) {
        size_t n = 0;

        for (size_t i = 0; i < st->n; i++)
                n += st->e[i].state == s;
        return n;
}

/* The checkpoint and STATUS=, after every change of a group's state. */
static void publish(struct manager *m) {
        size_t waiting = count_state(&m->st, GROUP_WAITING);
        char waits[64] = "";
        int r;

        for (size_t i = 0; i < m->st.n; i++)
                m->st.e[i].weight_ours = m->st.e[i].kind != KIND_CGROUP && bus_weight_ours(m->bus, m->st.e[i].target);
        r = state_write(m->opt.state_dir, &m->st);
        if (r < 0)
                log_warning("cannot write the checkpoint to %s: %s", m->opt.state_dir, strerror(-r));
        if (waiting)
                snprintf(waits, sizeof(waits), ", %zu waiting for systemd", waiting);
        sd_notifyf(false, "STATUS=%zu placed, %zu pending, %zu error%s%s%s", count_state(&m->st, GROUP_PLACED),
                   count_state(&m->st, GROUP_PENDING), count_state(&m->st, GROUP_ERROR), waits,
                   m->last_reload_error[0] ? "; " : "", m->last_reload_error);
}

/* Look again soon, from the loop: sleeping in it would starve the watchdog
 * (WatchdogSec=) and every other event. Without a loop (--once) the
 * caller looks again itself. */
static void arm_confine(struct manager *m) {
        if (!m->confine)
                return;
        if (!count_state(&m->st, GROUP_WAITING)) {
                sd_event_source_set_enabled(m->confine, SD_EVENT_OFF);
                return;
        }
        sd_event_source_set_time_relative(m->confine, CONFINE_POLL_USEC);
        sd_event_source_set_enabled(m->confine, SD_EVENT_ONESHOT);
}

/* Waiting groups that systemd has confined by now get cpu.scheduled;
 * the others wait on, or time out. No bus calls: only cgroupfs reads. */
static void check_waiting(struct manager *m) {
        uint64_t now = now_usec();
        bool changed = false;

        for (size_t i = 0; i < m->st.n; i++) {
                struct state_entry *e = &m->st.e[i], old;

                if (e->state != GROUP_WAITING)
                        continue;
                old = *e;
                if (e->asking) {
                        char why[sizeof(e->reason)];
                        /* The reason without a previous "; waited" suffix. */
                        snprintf(why, sizeof(why), "%.*s", (int) strcspn(e->reason, ";"), e->reason);
                        mark_waiting(m, e, why, now);
                } else
                        unit_confined(m, e, &old, now);
                if (e->state != old.state) {
                        log_transition(&old, e);
                        changed = true;
                }
        }
        if (changed)
                publish(m);
}

/* Checkpoint and STATUS= once per loop iteration, not once per answer:
 * a thousand units answer one after the other. */
static void publish_later(struct manager *m) {
        if (m->publish)
                sd_event_source_set_enabled(m->publish, SD_EVENT_ONESHOT);
        else
                m->dirty = true; /* --once: manager_once publishes */
}

/* systemd reset the unit's AllowedCPUs=; the cgroup may still hold it
 * (apply_released), unless the group is placed there again meanwhile. */
static void unit_released(struct manager *m, const struct bus_unit_result *res) {
        const struct state_entry *e = state_find(&m->st, res->key);
        char err[512], cpus[4096];
        struct cpuset now;
        int r;

        if (res->r < 0) {
                log_group(LOG_WARNING, res->key, "releasing %s: %s", res->unit, res->error);
                return;
        }
        if (e && (e->state == GROUP_PLACED || e->state == GROUP_WAITING) && !strcmp(e->target, res->unit))
                r = 0;
        else
                r = apply_released(m->opt.cgroup_root, res->cgroup, err, sizeof(err));
        if (r < 0)
                log_group(LOG_WARNING, res->key, "released %s, but its tasks stay on their CPUs: %s", res->unit, err);
        else if (r > 0 && cgroup_get_cpus(m->opt.cgroup_root, res->cgroup, &now, false) == 0)
                log_group(LOG_INFO, res->key, "released %s; the kernel keeps a cgroup with tasks on some CPUs, not "
                          "on none as systemd asked: widened %s to its parent's CPUs %s", res->unit, res->cgroup,
                          cpuset_format(&now, cpus, sizeof(cpus)));
        else
                log_group(LOG_INFO, res->key, "released %s", res->unit);
}

/* systemd answered about a unit (from the bus's event processing). The
 * answer counts only if the group is still placed there. */
static void on_unit_answer(void *userdata, const struct bus_unit_result *res) {
        struct manager *m = userdata;
        struct state_entry *e, old;

        if (!res->cpus) {
                unit_released(m, res);
                return;
        }
        e = state_find(&m->st, res->key);
        if (!e || e->kind == KIND_CGROUP || strcmp(e->target, res->unit) || !cpuset_equal(&e->cpus, res->cpus) ||
            e->state == GROUP_PENDING)
                return;
        old = *e;
        e->asking = false;
        if (res->r < 0) {
                e->state = GROUP_ERROR;
                snprintf(e->reason, sizeof(e->reason), "%s", res->error);
                e->waiting_since = 0;
        } else if (!res->cgroup[0]) {
                /* Re-applied when the unit starts (JobRemoved). */
                e->cgroup[0] = 0;
                set_placed(e);
                snprintf(e->reason, sizeof(e->reason), "confined; waiting for the unit to start");
        } else {
                snprintf(e->cgroup, sizeof(e->cgroup), "%s", res->cgroup);
                unit_confined(m, e, &old, now_usec());
        }
        log_transition(&old, e);
        publish_later(m);
        arm_confine(m);
}

static void on_unit_zero(void *userdata, const char *cg) {
        struct manager *m = userdata;

        apply_zero(m->opt.cgroup_root, cg);
}

static struct apply_ctx apply_ctx_of(struct manager *m) {
        return (struct apply_ctx) { .cgroup_root = m->opt.cgroup_root, .bus = m->bus, .done = on_unit_answer,
                                    .zero = on_unit_zero, .userdata = m };
}

/* A VM's vCPU threads one to one onto its group's CPUs, after the
 * group's cpuset is written (a pin outside it fails), again at every
 * reconcile: a cpuset write resets the threads' affinity. */
static void pin_vms(struct manager *m, struct state *ns) {
        for (size_t i = 0; m->vms && m->have_topo && i < ns->n; i++) {
                struct state_entry *e = &ns->e[i];
                const struct state_entry *old = state_find(&m->st, e->name);
                char note[sizeof(e->note)];
                int r;

                if (e->state != GROUP_PLACED || !vms_owns(m->vms, e->name))
                        continue;
                r = vms_pin(m->vms, e->name, &m->topo, &e->cpus, note, sizeof(note));
                if (r < 0) {
                        e->state = GROUP_ERROR;
                        snprintf(e->reason, sizeof(e->reason), "%s", note);
                        continue;
                }
                if (r > 0 && old && old->state == GROUP_PLACED && cpuset_equal(&old->cpus, &e->cpus))
                        log_group(LOG_NOTICE, e->name, "%s: vCPU pins re-applied (%s)", e->name, note);
                if (note[0]) {
                        size_t len = strlen(e->note);
                        snprintf(e->note + len, sizeof(e->note) - len, "%s%s", len ? "; " : "", note);
                }
                snprintf(e->reason, sizeof(e->reason), "%s", e->note);
        }
}

int manager_reconcile(struct manager *m) {
        size_t n = m->ngroups;
        struct apply_ctx a = apply_ctx_of(m);
        struct placement_request *req = calloc(n ? n : 1, sizeof(*req));
        struct placement_result *res = calloc(n ? n : 1, sizeof(*res));
        char (*errbuf)[320] = calloc(n ? n : 1, sizeof(*errbuf));
        char (*note)[160] = calloc(n ? n : 1, sizeof(*note));
        struct state ns = { .e = calloc(n ? n : 1, sizeof(struct state_entry)), .n = n,
                            .reserved = m->config.daemon.reserved };
        int r = -ENOMEM;

        if (!req || !res || !errbuf || !note || !ns.e)
                goto out;
        build_requests(m, req, errbuf, note);
        r = placement_compute(m->have_topo ? &m->topo : &(struct topology) {},
                              &(struct placement_options) { .reserved = &m->config.daemon.reserved,
                                                            .repack = m->config.daemon.repack },
                              n, req, res);
        if (r < 0)
                goto out;

        unplace_gone(m, &a, res);
        /* Moved groups first: they leave CPUs that new groups may take. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++) {
                        const struct group_config *g = m->groups[i];
                        struct state_entry *e = &ns.e[i];

                        /* Pass 0: moved groups; pass 1: all others. */
                        if ((pass == 0) != (res[i].state == GROUP_PLACED && res[i].moved))
                                continue;
                        fill_entry(m, g, &req[i], &res[i], note[i], e);
                        apply_group(m, &a, i, &req[i], &res[i], e);
                }
        pin_vms(m, &ns);
        for (size_t i = 0; i < n; i++)
                log_transition(state_find(&m->st, ns.e[i].name), &ns.e[i]);
        state_free(&m->st);
        m->st = ns;
        ns = (struct state) {};
        (void) state_index(&m->st); /* without it, lookups are linear: slower, not wrong */
        publish(m);
        arm_confine(m);
        m->ask_systemd = false;
        r = 0;
out:
        free(req);
        free(res);
        free(errbuf);
        free(note);
        state_free(&ns);
        return r;
}

/* --once has no loop: take systemd's answers (or their time-outs) here. */
static void once_step(struct manager *m) {
        struct timespec step = { 0, CONFINE_POLL_USEC * 1000 };
        sd_bus *bus = m->bus ? bus_sd(m->bus) : NULL;

        if (!bus_pending(m->bus)) {
                nanosleep(&step, NULL);
                return;
        }
        while (sd_bus_process(bus, NULL) > 0)
                ;
        if (bus_pending(m->bus))
                (void) sd_bus_wait(bus, CONFINE_POLL_USEC);
}

static int start_units(struct manager *m);

/* --once: the units with [X-Cosched] too, else their groups would be
 * released; as long as the loop would wait for them. */
static void once_units(struct manager *m) {
        uint64_t end = now_usec() + BUS_TIMEOUT_USEC;
        sd_bus *bus = bus_sd(m->bus);

        if (start_units(m) < 0)
                return;
        while (!units_ready(m->units) && now_usec() < end) {
                while (sd_bus_process(bus, NULL) > 0 && !units_ready(m->units))
                        ;
                if (!units_ready(m->units))
                        (void) sd_bus_wait(bus, CONFINE_POLL_USEC);
        }
        if (!units_ready(m->units))
                log_warning("systemd has not listed its units in %ds: units with [X-Cosched] are left out",
                            BUS_TIMEOUT_USEC / 1000000);
        rebuild_groups(m);
}

int manager_once(struct manager *m) {
        int r;

        if (m->bus)
                once_units(m);
        r = manager_reconcile(m);
        if (r < 0)
                return r;
        /* Nothing else would finish them: wait as long as the loop would. */
        while (bus_pending(m->bus) || count_state(&m->st, GROUP_WAITING)) {
                once_step(m);
                check_waiting(m);
        }
        if (m->dirty)
                publish(m);
        return 0;
}

/* ---- events ---- */

static int on_confine(sd_event_source *s, uint64_t usec, void *userdata) {
        struct manager *m = userdata;

        (void) s;
        (void) usec;
        check_waiting(m);
        arm_confine(m);
        return 0;
}

static int on_publish(sd_event_source *s, void *userdata) {
        (void) s;
        publish(userdata);
        return 0;
}

static int on_defer(sd_event_source *s, void *userdata) {
        struct manager *m = userdata;

        (void) s;
        sd_event_source_set_enabled(m->defer, SD_EVENT_OFF);
        manager_reconcile(m);
        return 0;
}

/* Coalesce bursts (a restart is several jobs) into one reconcile. */
static void schedule_reconcile(struct manager *m) {
        sd_event_source_set_enabled(m->defer, SD_EVENT_ONESHOT);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct manager *m = userdata;
        struct config c;
        int r;

        (void) s;
        (void) si;
        sd_notify(false, "RELOADING=1");
        r = load_config(&m->opt, &c);
        if (r < 0) {
                config_free(&c);
                log_error("reload: the new configuration is invalid, keeping the running one");
                snprintf(m->last_reload_error, sizeof(m->last_reload_error), "last reload failed, old config kept");
        } else {
                config_free(&m->config);
                m->config = c;
                vms_retry(m->vms);
                rebuild_groups(m);
                m->last_reload_error[0] = 0;
                log_info("reload: configuration with %zu groups loaded", c.ngroups);
                sd_event_source_set_time_relative(m->timer, (uint64_t) m->config.daemon.reconcile_sec * 1000000);
        }
        load_topology(m);
        manager_reconcile(m);
        sd_notify(false, "READY=1");
        return 0;
}

/* Periodic: cgroups recreated behind our back get their settings again,
 * and a changed online mask means hotplug the monitor may have missed. */
static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct manager *m = userdata;
        char online[sizeof(m->online)];

        (void) usec;
        read_online(m, online, sizeof(online));
        if (strcmp(online, m->online))
                load_topology(m);
        manager_reconcile(m);
        sd_event_source_set_time_relative(s, (uint64_t) m->config.daemon.reconcile_sec * 1000000);
        sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;
}

static int on_cpu_uevent(sd_device_monitor *mon, sd_device *d, void *userdata) {
        struct manager *m = userdata;

        (void) mon;
        (void) d;
        if (load_topology(m))
                schedule_reconcile(m);
        return 0;
}

/* The loop's first reconcile waits for PID 1's unit listing, so that
 * groups of units placed before a restart are not released meanwhile. */
static void first_reconcile(struct manager *m) {
        m->started = true;
        if (m->units_wait)
                sd_event_source_set_enabled(m->units_wait, SD_EVENT_OFF);
        manager_reconcile(m);
        sd_notify(false, "READY=1");
}

/* From units.c: a unit with [X-Cosched] started, stopped or changed
 * (groups), or a job finished (job: units confined through systemd may
 * have new cgroups, ask it again). */
static void on_units_event(void *userdata, bool groups, bool job) {
        struct manager *m = userdata;

        if (groups)
                rebuild_groups(m);
        if (job)
                m->ask_systemd = true;
        if (m->started)
                schedule_reconcile(m);
        else if (m->event && units_ready(m->units))
                first_reconcile(m);
}

static int on_units_wait(sd_event_source *s, uint64_t usec, void *userdata) {
        struct manager *m = userdata;

        (void) s;
        (void) usec;
        if (m->started)
                return 0;
        log_warning("systemd has not listed its units in %ds: placing the configured groups now; units with "
                    "[X-Cosched] follow when it answers", BUS_TIMEOUT_USEC / 1000000);
        first_reconcile(m);
        return 0;
}

static int start_units(struct manager *m) {
        int r;

        r = units_new(bus_sd(m->bus), on_units_event, m, &m->units);
        if (r >= 0)
                r = units_start(m->units);
        if (r < 0) {
                log_warning("cannot follow systemd's units (%s): [X-Cosched] sections are ignored, relying on the "
                            "%us timer", strerror(-r), m->config.daemon.reconcile_sec);
                units_free(m->units);
                m->units = NULL;
        }
        return r;
}

static int setup_events(struct manager *m) {
        sigset_t ss;
        int r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        sigemptyset(&ss);
        sigaddset(&ss, SIGHUP);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        if ((r = sd_event_add_signal(m->event, NULL, SIGTERM, NULL, NULL)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGINT, NULL, NULL)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m)) < 0)
                return r;
        r = sd_event_add_time_relative(m->event, &m->timer, CLOCK_MONOTONIC,
                                       (uint64_t) m->config.daemon.reconcile_sec * 1000000, 0, on_timer, m);
        if (r < 0)
                return r;
        r = sd_event_add_defer(m->event, &m->defer, on_defer, m);
        if (r < 0)
                return r;
        sd_event_source_set_enabled(m->defer, SD_EVENT_OFF);
        r = sd_event_add_defer(m->event, &m->publish, on_publish, m);
        if (r < 0)
                return r;
        sd_event_source_set_enabled(m->publish, SD_EVENT_OFF);
        /* 1 ms accuracy: the default 250 ms would dwarf the poll interval. */
        r = sd_event_add_time_relative(m->event, &m->confine, CLOCK_MONOTONIC, CONFINE_POLL_USEC, 1000, on_confine, m);
        if (r < 0)
                return r;
        sd_event_source_set_enabled(m->confine, SD_EVENT_OFF);
        /* WATCHDOG=1 pings at half of WatchdogSec=, from the loop itself. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning("watchdog: %s", strerror(-r));

        if (m->vms && (r = vms_attach_event(m->vms, m->event)) < 0)
                log_warning("VMs: no timer to look for vCPU threads (%s): only on unit events", strerror(-r));
        if (m->bus) {
                r = sd_bus_attach_event(bus_sd(m->bus), m->event, 0);
                if (r < 0)
                        log_warning("cannot attach to the system bus (%s)", strerror(-r));
                else if (start_units(m) >= 0)
                        r = sd_event_add_time_relative(m->event, &m->units_wait, CLOCK_MONOTONIC, BUS_TIMEOUT_USEC,
                                                       0, on_units_wait, m);
                if (r < 0)
                        log_warning("cannot wait for systemd's units: %s", strerror(-r));
        }
        if (!m->opt.sysfs_root[0]) {
                r = sd_device_monitor_new(&m->monitor);
                if (r >= 0)
                        r = sd_device_monitor_filter_add_match_subsystem_devtype(m->monitor, "cpu", NULL);
                if (r >= 0)
                        r = sd_device_monitor_attach_event(m->monitor, m->event);
                if (r >= 0)
                        r = sd_device_monitor_start(m->monitor, on_cpu_uevent, m);
                if (r < 0)
                        log_warning("no CPU hotplug events (%s): polling every %us", strerror(-r),
                                    m->config.daemon.reconcile_sec);
        }
        return 0;
}

int manager_run(struct manager *m) {
        int r;

        r = setup_events(m);
        if (r < 0) {
                log_error("event loop setup: %s", strerror(-r));
                return r;
        }
        /* Only the loop keeps the checkpoint current; --once leaves it stale. */
        m->running_fd = running_hold(m->opt.state_dir);
        if (m->running_fd < 0)
                log_warning("cannot lock %s/%s: coschedctl will call the checkpoint stale: %s", m->opt.state_dir,
                            RUNNING_FILE, strerror(-m->running_fd));
        if (units_ready(m->units))
                first_reconcile(m);
        r = sd_event_loop(m->event);
        sd_notify(false, "STOPPING=1");
        /* Groups stay as they are: the checkpoint lets a restart carry on. */
        return r;
}
