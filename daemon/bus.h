/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The systemd (PID 1) D-Bus client: confine units through systemd, which
 * owns their cgroups, and learn where their cgroups are. */

#include <stddef.h>
#include <systemd/sd-bus.h>

#include "cpuset.h"

int bus_open(sd_bus **ret);
/* The unit's cgroup relative to the cgroup root; "" if it has none now
 * (inactive). Loads the unit if needed. */
int bus_unit_cgroup(sd_bus *bus, const char *unit, char *cg, size_t len, char *err, size_t errlen);
/* AllowedCPUs= (runtime) and, if the unit sets none, CPUWeight=100 so that
 * systemd enables the cpu controller that cpu.scheduled lives in.
 * cpus NULL: reset AllowedCPUs= to all CPUs. Skips the call if already so. */
int bus_set_unit_cpus(sd_bus *bus, const char *unit, const struct cpuset *cpus, char *err, size_t errlen);
/* Call handler on every systemd JobRemoved (a unit started, stopped, restarted). */
int bus_subscribe(sd_bus *bus, sd_bus_message_handler_t handler, void *userdata);
