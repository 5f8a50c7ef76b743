/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "topology.h"

/* Write content to root/rel, creating directories. Returns 0 or -errno. */
int fixture_write(const char *root, const char *rel, const char *content);
/* A fresh temporary directory (caller frees). */
char *fixture_tmpdir(void);
void fixture_rm_rf(const char *dir);

/*
 * Synthetic machines. CPU numbering: "linear" puts a core's threads next to
 * each other (0-1 is a core, as QEMU does); "interleaved" numbers thread 0
 * of every core first (siblings N and N + cores, as most x86 firmware does).
 * Levels: smt (if threads > 1), mc = package, die = machine (if pkgs > 1).
 * Fills a topo_input whose strings the caller frees with fixture_input_free.
 */
int fixture_machine(struct topo_input *in, int pkgs, int cores, int threads, bool interleaved);
void fixture_input_free(struct topo_input *in);
