/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-device.h>
#include <systemd/sd-event.h>

#include "bus.h"
#include "config.h"
#include "state.h"
#include "topology.h"
#include "units.h"
#include "vm.h"

struct manager_options {
        const char *config_path;
        const char *config_dir;         /* conf.d */
        unsigned config_flags;          /* CONFIG_*_REQUIRED: named on the command line */
        const char *sysfs_root;         /* "" = the real /sys */
        const char *cgroup_root;
        const char *proc_root;          /* "" = the real /proc (VMs' threads) */
        const char *state_dir;
        bool use_bus;
};

struct manager {
        struct manager_options opt;
        struct config config;           /* coschedd.conf and conf.d */
        struct units *units;            /* units with [X-Cosched]; NULL without a bus */
        struct vms *vms;                /* QEMU VMs in machine.slice, found among the running units */
        /* What is placed: config's groups, then the units', then the VMs'
         * (a unit or cgroup that config names already is config's); by name. */
        const struct group_config **groups;
        size_t ngroups;
        struct strindex groups_by_name;
        bool ask_systemd;               /* a systemd event since the last reconcile: ask it again
                                         * about every unit, not only cgroupfs */
        bool started;                   /* the loop's first reconcile ran */
        sd_event_source *units_wait;    /* gives up waiting for PID 1's first unit listing */
        struct topology topo;
        bool have_topo;
        char topo_err[256];
        char online[4096];              /* last /sys/devices/system/cpu/online, to spot hotplug cheaply */
        struct state st;                /* the current placement, as checkpointed */
        sd_event *event;
        struct bus *bus;
        sd_event_source *timer;
        sd_event_source *defer;
        sd_event_source *confine;       /* looks for systemd's confinement of waiting groups */
        sd_event_source *publish;       /* checkpoint and STATUS= after systemd's answers */
        bool dirty;                     /* --once: an answer changed a group, publish at the end */
        sd_device_monitor *monitor;
        char last_reload_error[128];
        int running_fd;                 /* the lock that tells coschedctl the checkpoint is live; -1 */
};

/* Load config (must be valid), topology and the checkpoint. */
int manager_new(const struct manager_options *o, struct manager **ret);
void manager_free(struct manager *m);
/* Place and apply once, checkpoint, report STATUS=. Groups systemd has
 * not confined yet are left waiting, for the loop's timer to finish. */
int manager_reconcile(struct manager *m);
/* --once: reconcile, then see waiting groups through (or time them out). */
int manager_once(struct manager *m);
/* The event loop until SIGTERM/SIGINT. */
int manager_run(struct manager *m);
