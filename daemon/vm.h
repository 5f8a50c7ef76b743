/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * QEMU VMs under machine.slice. A running unit (service or scope, a
 * systemd-machined machine-*.scope included) whose cgroup is
 * /machine.slice/UNIT is looked at when units.c says it started (PID 1's
 * signals, no polling of PID 1). Its QEMU process (cgroup.procs,
 * /proc/PID/cmdline) must run with -name ...,debug-threads=on, which names
 * the vCPU threads "CPU N/TCG" (or /KVM): those threads, and only those,
 * move into a threaded child cgroup "vcpus", the VM's group "vm:UNIT",
 * placed and coscheduled like any raw cgroup; emulator and I/O threads
 * stay in the VM's cgroup, outside the gang. After each apply the vCPU
 * threads are pinned one to one onto the group's CPUs (vmpin.c). A VM
 * whose vCPU threads are not all there yet is looked at again every
 * 100 ms (QEMU creates them after its start job finished) for up to 60 s.
 */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "topology.h"

#define VM_GROUP_PREFIX "vm:"

struct vms;

/* The VMs' groups changed (a VM's threads were found, or not found in time). */
typedef void (*vms_event_t)(void *userdata);

/* proc_root: "" for the real /proc (then pins are applied with
 * sched_setaffinity); a fixture tree's pins are only reported. */
int vms_new(const char *cgroup_root, const char *proc_root, vms_event_t event, void *userdata, struct vms **ret);
void vms_free(struct vms *v);
/* The loop's timer for VMs still starting; without it (--once) they are
 * looked at only by vms_update. */
int vms_attach_event(struct vms *v, sd_event *e);
/* The running units are these: start tracking the ones in machine.slice,
 * drop the others (a dropped VM whose threads live on, e.g. after
 * Enable=no, gets its pins back to all CPUs). t may be NULL (no topology). */
void vms_update(struct vms *v, const char *const *units, size_t n, const struct vm_policy *p, const struct topology *t);
/* VMs in error, or ignored, are looked at anew by the next vms_update
 * (a reload: the admin fixed something). */
void vms_retry(struct vms *v);
/* The VMs' groups, for the manager's placement; *ret is malloc'ed, the
 * groups live until the next vms_update. */
int vms_groups(const struct vms *v, const struct group_config ***ret, size_t *n);
bool vms_owns(const struct vms *v, const char *group);
/* After the group was confined to cpus: pin its vCPU threads (only where
 * they are not already). note gets "pinned vCPU:CPU 0:2 1:3". Returns 0,
 * 1 if a pin was (re)applied, or -errno with note saying what failed. */
int vms_pin(struct vms *v, const char *group, const struct topology *t, const struct cpuset *cpus, char *note,
            size_t notelen);
