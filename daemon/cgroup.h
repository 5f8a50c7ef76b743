/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Raw cgroup v2 file access below a root (the real /sys/fs/cgroup, or a
 * fixture tree in tests). Paths are relative to the root and start with '/'.
 */

#include <stdbool.h>

#include "cpuset.h"

bool cgroup_exists(const char *root, const char *cg);
/* Enable +cpuset +cpu in cgroup.subtree_control of every ancestor of cg. */
int cgroup_enable_controllers(const char *root, const char *cg, char *err, size_t errlen);
int cgroup_set_cpus(const char *root, const char *cg, const struct cpuset *cpus); /* NULL: widen to the parent's */
/* cpuset.cpus of cg set to its parent's cpuset.cpus.effective. The kernel
 * refuses an empty cpuset.cpus in a cgroup that has tasks (ENOSPC): this is
 * the widest it lets such a cgroup be. */
int cgroup_set_cpus_of_parent(const char *root, const char *cg);
int cgroup_get_cpus(const char *root, const char *cg, struct cpuset *ret, bool effective);
/* Whether the CPUs cg really runs on (cpuset.cpus.effective) are not cpus:
 * the kernel narrows a cgroup to its parent's CPUs, and one with none of
 * them in common gets the parent's (a unit inside a confined slice).
 * The effective CPUs go to ret. A tree without the file (a fixture, no
 * cpuset controller) differs in nothing. */
bool cgroup_effective_differs(const char *root, const char *cg, const struct cpuset *cpus, struct cpuset *ret);
int cgroup_set_scheduled(const char *root, const char *cg, int level);
int cgroup_get_scheduled(const char *root, const char *cg, int *level);
