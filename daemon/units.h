/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Units that declare coscheduling themselves: an [X-Cosched] section in
 * the unit file or a drop-in (systemd ignores X- sections). Learned from
 * PID 1's signals, never by polling it: JobRemoved (a unit started or
 * stopped), PropertiesChanged ActiveState (a service whose process exited
 * stops without a job), UnitNew/UnitRemoved, Reloading (daemon-reload:
 * files may have changed; in between, PID 1 unloads every unit, which is
 * no stop). No answer from PID 1 is no stop either: the unit is asked
 * again. For a unit that runs, the files PID 1 names
 * (FragmentPath, DropInPaths) are read and their [X-Cosched] sections
 * parsed by config.c into one group named after the unit, handed to the
 * manager for the same placement and apply as coschedd.conf's groups.
 * Every call is asynchronous.
 */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

#include "config.h"

struct units;

/* groups: the set of declared groups changed (a unit started, stopped or
 * changed its section); job: a systemd job finished (any unit), so units
 * confined through systemd may have new cgroups. */
typedef void (*units_event_t)(void *userdata, bool groups, bool job);

int units_new(sd_bus *bus, units_event_t event, void *userdata, struct units **ret);
void units_free(struct units *u);
/* Subscribe to PID 1's signals, then list its units and read the running
 * ones; units_ready() once that first listing is read through. */
int units_start(struct units *u);
bool units_ready(const struct units *u);
/* The groups of the running units that have an [X-Cosched] section, by
 * unit name; a unit whose section has errors is there with g->error set.
 * *ret is malloc'ed (free it); the groups live until the next event. */
int units_groups(const struct units *u, const struct group_config ***ret, size_t *n);
/* The names of the units that run (with a section or not: vm.c looks for
 * VMs among them). *ret is malloc'ed; the names live until the next event. */
int units_running(const struct units *u, const char ***ret, size_t *n);
