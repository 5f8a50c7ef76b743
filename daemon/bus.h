/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The systemd (PID 1) D-Bus client: confine units through systemd, which
 * owns their cgroups, and learn where their cgroups are. Every call is
 * asynchronous: PID 1 can be slow or hung, and the daemon's event loop
 * (which also sends the watchdog pings) must never wait for it. One
 * operation per unit is in flight at a time; unit object paths are cached.
 */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

#include "cpuset.h"

/* PID 1 answers these in milliseconds; this long means it is hung. */
#define BUS_TIMEOUT_USEC (5 * 1000 * 1000)

struct bus;

struct bus_unit_request {
        const char *key;                /* the caller's name for it (the group) */
        const char *unit;
        const struct cpuset *cpus;      /* AllowedCPUs=; NULL: reset to all CPUs (release) */
        bool zero_first;                /* call before_set with the unit's cgroup first */
};

struct bus_unit_result {
        const char *key, *unit;
        const struct cpuset *cpus;      /* as requested */
        int r;                          /* 0 or -errno */
        const char *cgroup;             /* the unit's ControlGroup, "" if it has none (inactive) */
        const char *error;              /* r < 0: what failed */
};

typedef void (*bus_unit_done_t)(void *userdata, const struct bus_unit_result *res);
/* Called with the unit's cgroup ("" if none) before AllowedCPUs= changes. */
typedef void (*bus_unit_hook_t)(void *userdata, const char *cgroup);

int bus_open(struct bus **ret);
void bus_free(struct bus *b);
sd_bus *bus_sd(struct bus *b);
/* Asks for AllowedCPUs= (runtime) and, if the unit sets none, CPUWeight=100
 * so that systemd enables the cpu controller that cpu.scheduled lives in;
 * skips the change if the unit has it already. A release (cpus NULL)
 * resets AllowedCPUs=, and CPUWeight= if this process set it and it is
 * still 100. done is called once, from
 * the bus's event processing, unless a later request for the same unit
 * replaced this one. Returns 0 (started), 1 (the same request is in flight
 * already: left to finish) or -errno. */
int bus_confine_unit(struct bus *b, const struct bus_unit_request *req, bus_unit_done_t done, bus_unit_hook_t before_set,
                     void *userdata);
/* Whether this process set the unit's CPUWeight=100 (a release resets it).
 * bus_set_weight_ours says so for a unit an earlier run set it on (from the
 * checkpoint), so that a restart does not leave it behind. */
bool bus_weight_ours(const struct bus *b, const char *unit);
int bus_set_weight_ours(struct bus *b, const char *unit);
/* Operations in flight. */
size_t bus_pending(const struct bus *b);
