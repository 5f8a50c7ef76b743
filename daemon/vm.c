/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "util.h"
#include "vm.h"
#include "vmpin.h"

#define VM_SLICE "/machine.slice/"
#define VM_RETRY_USEC (100 * 1000)
#define VM_DISCOVER_USEC (60ULL * 1000 * 1000)
#define VM_MAX_VCPUS 1024

enum vm_state {
        VM_STARTING,    /* no QEMU, or not all of its vCPU threads, yet */
        VM_READY,       /* vCPU threads in <cg>/vcpus: a group */
        VM_ERROR,       /* a group in error: left alone, status says why */
        VM_IGNORED,     /* no QEMU process in time: not a VM we handle */
};

struct vm {
        char *unit;
        char cg[PATH_MAX];              /* /machine.slice/UNIT */
        enum vm_state state;
        uint64_t since;
        struct vm_cmdline cmd;
        pid_t *tids;                    /* by vCPU index, cmd.cpus long */
        char error[256];
        struct config cfg;              /* its one group */
        enum vm_pin pin;                /* the policy's, when the group was built */
        bool seen;
};

struct vms {
        char *cgroup_root, *proc_root;
        vms_event_t event;
        void *userdata;
        sd_event_source *retry;
        struct vm **v;
        size_t n;
};

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int vms_new(const char *cgroup_root, const char *proc_root, vms_event_t event, void *userdata, struct vms **ret) {
        struct vms *v = calloc(1, sizeof(*v));

        if (!v || !(v->cgroup_root = strdup(cgroup_root)) || !(v->proc_root = strdup(proc_root))) {
                vms_free(v);
                return -ENOMEM;
        }
        v->event = event;
        v->userdata = userdata;
        *ret = v;
        return 0;
}

static void vm_free(struct vm *vm) {
        if (!vm)
                return;
        config_free(&vm->cfg);
        free(vm->tids);
        free(vm->unit);
        free(vm);
}

void vms_free(struct vms *v) {
        if (!v)
                return;
        for (size_t i = 0; i < v->n; i++)
                vm_free(v->v[i]);
        free(v->v);
        sd_event_source_unref(v->retry);
        free(v->cgroup_root);
        free(v->proc_root);
        free(v);
}

static const char *proc(const struct vms *v) {
        return v->proc_root[0] ? v->proc_root : "/proc";
}

/* ---- finding the vCPU threads ---- */

static int read_cmdline(const struct vms *v, long pid, struct vm_cmdline *cmd) {
        char path[PATH_MAX], buf[8192];
        ssize_t len;
        int fd;

        snprintf(path, sizeof(path), "%s/%ld/cmdline", proc(v), pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        len = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (len <= 0)
                return len < 0 ? -errno : -ENODATA;
        if (buf[len - 1])
                buf[len++] = 0; /* cut at the buffer's end */
        return vm_parse_cmdline(buf, len, cmd);
}

/* The threads of pid named "CPU N/...", into tids[N]; returns how many. */
static int scan_tasks(const struct vms *v, long pid, pid_t *tids, int ncpus) {
        char path[PATH_MAX], *comm;
        struct dirent *de;
        int found = 0, idx;
        DIR *d;

        snprintf(path, sizeof(path), "%s/%ld/task", proc(v), pid);
        d = opendir(path);
        if (!d)
                return 0;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%ld/task/%s/comm", proc(v), pid, de->d_name);
                comm = NULL;
                if (read_file_str(path, &comm) >= 0 && (idx = vm_vcpu_index(comm)) >= 0 && idx < ncpus &&
                    !tids[idx]) {
                        tids[idx] = (pid_t) atol(de->d_name);
                        found++;
                }
                free(comm);
        }
        closedir(d);
        return found;
}

/* A sub-cgroup other than ours: someone else (libvirt's vcpuN/emulator
 * layout) manages the VM's threads. */
static bool foreign_children(const struct vms *v, const struct vm *vm) {
        char path[PATH_MAX];
        struct dirent *de;
        bool foreign = false;
        DIR *d;

        snprintf(path, sizeof(path), "%s%s", v->cgroup_root, vm->cg);
        d = opendir(path);
        if (!d)
                return false;
        while (!foreign && (de = readdir(d)))
                foreign = de->d_type == DT_DIR && de->d_name[0] != '.' && strcmp(de->d_name, "vcpus");
        closedir(d);
        return foreign;
}

static void set_error(struct vm *vm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(struct vm *vm, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(vm->error, sizeof(vm->error), fmt, ap);
        va_end(ap);
        vm->state = VM_ERROR;
        log_group(LOG_ERR, vm->unit, "VM %s: %s", vm->unit, vm->error);
}

/* vcpus: threaded, so that single threads can move there and the VM's
 * cgroup becomes their thread root; then +cpu +cpuset in the VM's
 * cgroup (threaded controllers: allowed next to its own processes once
 * it is a thread root, refused with EBUSY before). */
static int make_vcpus(const struct vms *v, const struct vm *vm, char *err, size_t errlen) {
        char path[PATH_MAX], *type = NULL, tid[32];
        int r;

        snprintf(path, sizeof(path), "%s%s/vcpus", v->cgroup_root, vm->cg);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return errf(err, errlen, -errno, "creating %s: %s", path, strerror(errno));
        snprintf(path, sizeof(path), "%s%s/vcpus/cgroup.type", v->cgroup_root, vm->cg);
        r = read_file_str(path, &type);
        if (r >= 0 && strcmp(strstrip(type), "threaded"))
                r = write_file_str(path, "threaded");
        free(type);
        if (r < 0)
                return errf(err, errlen, r, "making %s threaded: %s (the VM's cgroup must have no domain "
                            "controllers enabled for its children: is the unit Delegate=yes?)", path, strerror(-r));
        snprintf(path, sizeof(path), "%s/vcpus", vm->cg);
        r = cgroup_enable_controllers(v->cgroup_root, path, err, errlen);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "%s%s/vcpus/cgroup.threads", v->cgroup_root, vm->cg);
        for (int i = 0; i < vm->cmd.cpus; i++) {
                snprintf(tid, sizeof(tid), "%d", (int) vm->tids[i]);
                r = write_file_str(path, tid);
                if (r < 0)
                        return errf(err, errlen, r, "moving vCPU %d (thread %s) into %s: %s", i, tid, path,
                                    strerror(-r));
        }
        return 0;
}

/* Look at the VM's processes once more; returns true if its state changed. */
static bool discover(struct vms *v, struct vm *vm) {
        char path[PATH_MAX], *procs = NULL, *save = NULL, err[512];
        struct vm_cmdline cmd = {};
        enum vm_state old = vm->state;
        long qemu = 0;
        int found = 0;

        snprintf(path, sizeof(path), "%s%s/cgroup.procs", v->cgroup_root, vm->cg);
        if (read_file_str(path, &procs) < 0)
                procs = NULL;
        for (char *tok = procs ? strtok_r(procs, "\n", &save) : NULL; tok && !qemu; tok = strtok_r(NULL, "\n", &save)) {
                long pid = atol(tok);
                if (pid > 0 && read_cmdline(v, pid, &cmd) != -ENOENT && cmd.qemu)
                        qemu = pid;
        }
        free(procs);
        if (qemu && read_cmdline(v, qemu, &cmd) < 0)
                set_error(vm, "QEMU (pid %ld): cannot read its -smp option: left alone", qemu);
        else if (qemu && !cmd.debug_threads)
                set_error(vm, "QEMU (pid %ld) runs without -name ...,debug-threads=on: its vCPU threads cannot be "
                          "told from its other threads; left alone", qemu);
        else if (qemu && cmd.cpus > VM_MAX_VCPUS)
                set_error(vm, "QEMU (pid %ld): %d vCPUs, more than %d: left alone", qemu, cmd.cpus, VM_MAX_VCPUS);
        else if (qemu && foreign_children(v, vm))
                set_error(vm, "%s has sub-cgroups of another manager (libvirt's?): left alone", vm->cg);
        else if (qemu) {
                pid_t *tids = calloc(cmd.cpus, sizeof(pid_t));
                if (!tids)
                        set_error(vm, "out of memory");
                else if ((found = scan_tasks(v, qemu, tids, cmd.cpus)) == cmd.cpus) {
                        free(vm->tids);
                        vm->tids = tids;
                        vm->cmd = cmd;
                        tids = NULL;
                        if (make_vcpus(v, vm, err, sizeof(err)) < 0)
                                set_error(vm, "%s", err);
                        else {
                                vm->state = VM_READY;
                                log_group(LOG_INFO, vm->unit, "VM %s%s%s: QEMU pid %ld, %d vCPU threads (guest SMT "
                                          "threads %d) moved into %s/vcpus, emulator and I/O threads left out",
                                          vm->unit, cmd.name[0] ? " " : "", cmd.name, qemu, cmd.cpus, cmd.threads,
                                          vm->cg);
                        }
                } else if (now_usec() - vm->since > VM_DISCOVER_USEC)
                        set_error(vm, "QEMU (pid %ld): %d of its %d vCPU threads found after %llus: left alone", qemu,
                                  found, cmd.cpus, VM_DISCOVER_USEC / 1000000);
                free(tids);
        } else if (now_usec() - vm->since > VM_DISCOVER_USEC) {
                vm->state = VM_IGNORED;
                log_group(LOG_NOTICE, vm->unit, "%s in machine.slice runs no QEMU after %llus: not a VM coschedd "
                          "handles", vm->unit, VM_DISCOVER_USEC / 1000000);
        }
        return vm->state != old;
}

/* ---- groups ---- */

/* The VM's group: the vcpus cgroup, one span of the smallest level that
 * holds the vCPUs (or [vms] Level=, with CPUs= the vCPU count). */
static int build_group(struct vm *vm, const struct vm_policy *p, const struct topology *t) {
        struct group_config *g;
        char level[16] = "", err[320] = "";
        int l = -1;

        config_free(&vm->cfg);
        vm->pin = p->pin;
        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        vm->cfg.groups = g;
        vm->cfg.ngroups = vm->cfg.groups_cap = 1;
        if (vm->state == VM_ERROR)
                snprintf(err, sizeof(err), "%s", vm->error);
        else if (!p->level && t && (l = vm_auto_level(t, vm->cmd.cpus)) < 0)
                snprintf(err, sizeof(err), "%d vCPUs: no coscheduling level this kernel offers (max_level %d) has "
                         "spans of %d CPUs; [vms] Level= can name one that takes them on several spans",
                         vm->cmd.cpus, t->max_level, vm->cmd.cpus);
        snprintf(level, sizeof(level), "%d", l > 0 ? l : 1);
        g->kind = KIND_CGROUP;
        g->kind_seen = g->level_seen = g->size_seen = true;
        g->pref = p->pref;
        g->has_pref = true;
        if (p->level || !t)
                g->cpus = vm->cmd.cpus;
        else
                g->spans = 1;
        if (asprintf(&g->name, VM_GROUP_PREFIX "%s", vm->unit) < 0)
                g->name = NULL;
        if (asprintf(&g->target, "%s/vcpus", vm->cg) < 0)
                g->target = NULL;
        g->level = strdup(p->level ? p->level : level);
        g->error = err[0] ? strdup(err) : NULL;
        if (!g->name || !g->target || !g->level || (err[0] && !g->error))
                return -ENOMEM;
        return 0;
}

/* ---- following the units ---- */

static struct vm *find(const struct vms *v, const char *unit) {
        for (size_t i = 0; i < v->n; i++)
                if (!strcmp(v->v[i]->unit, unit))
                        return v->v[i];
        return NULL;
}

static struct vm *add(struct vms *v, const char *unit) {
        struct vm *vm = calloc(1, sizeof(*vm)), **n;

        if (!vm || !(vm->unit = strdup(unit)) || !(n = realloc(v->v, sizeof(*n) * (v->n + 1)))) {
                vm_free(vm);
                return NULL;
        }
        v->v = n;
        config_init(&vm->cfg);
        snprintf(vm->cg, sizeof(vm->cg), VM_SLICE "%s", unit);
        vm->since = now_usec();
        v->v[v->n++] = vm;
        return vm;
}

static bool real_proc(const struct vms *v) {
        return !v->proc_root[0];
}

/* Back to every CPU the cgroup allows: the VM is no longer ours to pin. */
static void unpin(const struct vms *v, const struct vm *vm) {
        cpu_set_t all;

        if (vm->state != VM_READY || !real_proc(v))
                return;
        memset(&all, 0xff, sizeof(all));
        for (int i = 0; i < vm->cmd.cpus; i++)
                (void) sched_setaffinity(vm->tids[i], sizeof(all), &all);
}

static void arm_retry(struct vms *v) {
        bool starting = false;

        for (size_t i = 0; i < v->n; i++)
                starting |= v->v[i]->state == VM_STARTING;
        if (!v->retry)
                return;
        if (starting)
                sd_event_source_set_time_relative(v->retry, VM_RETRY_USEC);
        sd_event_source_set_enabled(v->retry, starting ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        struct vms *v = userdata;
        bool changed = false;

        (void) s;
        (void) usec;
        for (size_t i = 0; i < v->n; i++)
                if (v->v[i]->state == VM_STARTING)
                        changed |= discover(v, v->v[i]);
        arm_retry(v);
        if (changed)
                v->event(v->userdata);
        return 0;
}

int vms_attach_event(struct vms *v, sd_event *e) {
        int r = sd_event_add_time_relative(e, &v->retry, CLOCK_MONOTONIC, VM_RETRY_USEC, 1000, on_retry, v);

        if (r < 0)
                return r;
        arm_retry(v);
        return 0;
}

static bool vm_unit(const struct vms *v, const char *unit) {
        char path[PATH_MAX];
        size_t len = strlen(unit);

        if (len > 6 && !strcmp(unit + len - 6, ".slice"))
                return false;
        snprintf(path, sizeof(path), VM_SLICE "%s", unit);
        return cgroup_exists(v->cgroup_root, path);
}

void vms_update(struct vms *v, const char *const *units, size_t n, const struct vm_policy *p,
                const struct topology *t) {
        size_t k = 0;

        for (size_t i = 0; i < v->n; i++)
                v->v[i]->seen = false;
        for (size_t i = 0; p->enable && i < n; i++) {
                struct vm *vm = find(v, units[i]);

                if (!vm && vm_unit(v, units[i]) && !(vm = add(v, units[i]))) {
                        log_error("VM %s: out of memory, left alone", units[i]);
                        continue;
                }
                if (!vm)
                        continue;
                vm->seen = true;
                if (vm->state == VM_STARTING)
                        discover(v, vm);
                if ((vm->state == VM_READY || vm->state == VM_ERROR) && build_group(vm, p, t) < 0)
                        log_error("VM %s: out of memory building its group", vm->unit);
        }
        /* Gone (stopped), or no longer wanted (Enable=no). */
        for (size_t i = 0; i < v->n; i++) {
                if (v->v[i]->seen) {
                        v->v[k++] = v->v[i];
                        continue;
                }
                if (v->v[i]->state == VM_READY)
                        log_group(LOG_INFO, v->v[i]->unit, "VM %s: %s, releasing its group", v->v[i]->unit,
                                  p->enable ? "stopped" : "[vms] Enable=no");
                unpin(v, v->v[i]);
                vm_free(v->v[i]);
        }
        v->n = k;
        arm_retry(v);
}

void vms_retry(struct vms *v) {
        for (size_t i = 0; v && i < v->n; i++)
                if (v->v[i]->state == VM_ERROR || v->v[i]->state == VM_IGNORED) {
                        v->v[i]->state = VM_STARTING;
                        v->v[i]->since = now_usec();
                }
}

int vms_groups(const struct vms *v, const struct group_config ***ret, size_t *n) {
        const struct group_config **g = calloc(v->n + 1, sizeof(*g));
        size_t k = 0;

        if (!g)
                return -ENOMEM;
        for (size_t i = 0; i < v->n; i++)
                if ((v->v[i]->state == VM_READY || v->v[i]->state == VM_ERROR) && v->v[i]->cfg.ngroups &&
                    v->v[i]->cfg.groups[0].name)
                        g[k++] = &v->v[i]->cfg.groups[0];
        *ret = g;
        *n = k;
        return 0;
}

static struct vm *find_group(const struct vms *v, const char *group) {
        if (strncmp(group, VM_GROUP_PREFIX, strlen(VM_GROUP_PREFIX)))
                return NULL;
        return find(v, group + strlen(VM_GROUP_PREFIX));
}

bool vms_owns(const struct vms *v, const char *group) {
        return v && find_group(v, group);
}

/* ---- pins ---- */

static int pin_one(pid_t tid, int cpu) {
        cpu_set_t want, have;

        CPU_ZERO(&want);
        CPU_SET(cpu, &want);
        if (sched_getaffinity(tid, sizeof(have), &have) == 0 && CPU_EQUAL(&want, &have))
                return 0;
        return sched_setaffinity(tid, sizeof(want), &want) < 0 ? -errno : 1;
}

int vms_pin(struct vms *v, const char *group, const struct topology *t, const struct cpuset *cpus, char *note,
            size_t notelen) {
        struct vm *vm = find_group(v, group);
        int *plan, r, changed = 0;
        size_t len = 0;

        note[0] = 0;
        if (!vm || vm->state != VM_READY || vm->cfg.groups[0].error)
                return 0;
        /* pin comes from the policy the group was built with. */
        if (vm->pin == VM_PIN_NO) {
                snprintf(note, notelen, "vCPUs not pinned ([vms] Pin=no)");
                return 0;
        }
        if (cpuset_count(cpus) > CPU_SETSIZE || cpuset_last(cpus) >= CPU_SETSIZE)
                return errf(note, notelen, -ERANGE, "CPUs above %d cannot be pinned", CPU_SETSIZE - 1);
        plan = calloc(vm->cmd.cpus, sizeof(int));
        if (!plan)
                return errf(note, notelen, -ENOMEM, "out of memory");
        r = vm_pin_plan(t, cpus, vm->cmd.cpus, vm->cmd.threads, vm->pin, plan);
        if (r < 0) {
                free(plan);
                return errf(note, notelen, r, "no pins: %d vCPUs on %d CPUs", vm->cmd.cpus, cpuset_count(cpus));
        }
        len = snprintf(note, notelen, "pinned vCPU:CPU");
        for (int i = 0; i < vm->cmd.cpus && r >= 0; i++) {
                if (real_proc(v)) {
                        r = pin_one(vm->tids[i], plan[i]);
                        changed |= r > 0;
                }
                if (len < notelen)
                        len += snprintf(note + len, notelen - len, " %d:%d", i, plan[i]);
                if (r < 0)
                        r = errf(note, notelen, r, "pinning vCPU %d (thread %d) to CPU %d: %s", i,
                                 (int) vm->tids[i], plan[i], strerror(-r));
        }
        free(plan);
        return r < 0 ? r : changed;
}
