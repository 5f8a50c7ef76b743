/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * coschedd -t against the machine: a config can be valid INI and still
 * name a level this machine does not have (Level=numa on one socket) or a
 * size that Rounding=error refuses here. Those used to pass -t and fail
 * at run time; this reports them as file:line errors instead.
 */

#include "config.h"
#include "topology.h"

/* Add an error for every group that t cannot place as written. */
void check_config_topology(const struct config *c, const struct topology *t, struct config_errors *e);
/* The same against the topology read below sysfs_root ("" = /sys);
 * an unreadable topology is an error too. */
void check_config_sysfs(const struct config *c, const char *sysfs_root, struct config_errors *e);
