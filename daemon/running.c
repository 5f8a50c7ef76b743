/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "running.h"
#include "state.h"
#include "util.h"

int running_hold(const char *state_dir) {
        char path[PATH_MAX], pid[32];
        int fd, r;

        snprintf(path, sizeof(path), "%s/%s", state_dir, RUNNING_FILE);
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        snprintf(pid, sizeof(pid), "%d\n", (int) getpid());
        if (flock(fd, LOCK_SH) < 0 || ftruncate(fd, 0) < 0 || pwrite(fd, pid, strlen(pid), 0) != (ssize_t) strlen(pid)) {
                r = errno ? -errno : -EIO;
                close(fd);
                return r;
        }
        return fd;
}

static pid_t read_pid(const char *path) {
        char *v = NULL;
        int pid = 0;

        if (read_file_str(path, &v) >= 0 && safe_atoi(v, &pid) < 0)
                pid = 0;
        free(v);
        return pid;
}

enum liveness running_check(const char *state_dir, pid_t *pid) {
        char path[PATH_MAX];
        enum liveness l = STALE;
        int fd;

        *pid = 0;
        snprintf(path, sizeof(path), "%s/%s", state_dir, STATE_FILE);
        if (access(path, F_OK) < 0)
                return NO_CHECKPOINT;
        snprintf(path, sizeof(path), "%s/%s", state_dir, RUNNING_FILE);
        *pid = read_pid(path);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return STALE; /* no daemon since the checkpoint was written */
        /* Exclusive and non-blocking: it fails while any daemon holds its
         * shared lock; if it succeeds, nobody does. */
        if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK)
                l = LIVE;
        close(fd); /* drops our lock, if we got it */
        return l;
}
