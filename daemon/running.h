/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Is the checkpoint current? It is only as fresh as the daemon that
 * writes it: after the daemon stopped (or crashed) it describes a past
 * placement. The daemon holds a lock on STATE_DIR/coschedd.pid for its
 * whole life; coschedctl tries the lock. A lock, not a PID compared with
 * /proc: a PID is reused, a lock dies with its process.
 */

#include <sys/types.h>

#define RUNNING_FILE "coschedd.pid"

enum liveness {
        LIVE,                   /* a running daemon writes the checkpoint */
        STALE,                  /* a checkpoint, and no daemon holds the lock */
        NO_CHECKPOINT,
};

/* The daemon: take the lock (shared, so that a --once next to it does not
 * fail) and write the PID. Returns the fd to keep open, or -errno. */
int running_hold(const char *state_dir);
/* coschedctl: *pid is the PID written last (0 if unknown). */
enum liveness running_check(const char *state_dir, pid_t *pid);
