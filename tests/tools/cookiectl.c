// SPDX-License-Identifier: GPL-2.0
/*
 * cookiectl - run core-scheduling prctl() steps in order, print each result.
 *
 *   cookiectl STEP...
 *
 * Steps (PID is a number or "self"):
 *   cgroup DIR       move this process into the cgroup DIR (cgroup.procs)
 *   get PID          PR_SCHED_CORE_GET: prints the cookie id (0x0 = none)
 *   create PID       PR_SCHED_CORE_CREATE, scope thread
 *   share-to PID     PR_SCHED_CORE_SHARE_TO: push this thread's cookie to PID
 *   share-from PID   PR_SCHED_CORE_SHARE_FROM: pull PID's cookie to this thread
 *   hold             sleep until killed (keeps this process and its cookie)
 *
 * Each step prints one line "STEP ARG: RESULT", RESULT being "ok", a cookie
 * id, or the errno name (EBUSY, EPERM, ESRCH, ...).  A failed step does not
 * stop the sequence.  Exit 0 when every step succeeded, 1 otherwise, 2 on
 * a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE 62
#define PR_SCHED_CORE_GET 0
#define PR_SCHED_CORE_CREATE 1
#define PR_SCHED_CORE_SHARE_TO 2
#define PR_SCHED_CORE_SHARE_FROM 3
#define PR_SCHED_CORE_SCOPE_THREAD 0
#endif

static const char *ename(int e)
{
	switch (e) {
	case EBUSY: return "EBUSY";
	case EPERM: return "EPERM";
	case ESRCH: return "ESRCH";
	case EINVAL: return "EINVAL";
	case ENODEV: return "ENODEV";
	case ENOMEM: return "ENOMEM";
	case EFAULT: return "EFAULT";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case ENOTSUP: return "ENOTSUP";
	default: return NULL;
	}
}

static void print_err(const char *step, const char *arg, int e)
{
	const char *n = ename(e);

	if (n)
		printf("%s %s: %s\n", step, arg, n);
	else
		printf("%s %s: errno%d\n", step, arg, e);
}

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	if (!strcmp(s, "self")) {
		*pid = 0;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 1 << 30)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static int join_cgroup(const char *dir)
{
	char path[4096], buf[32];
	int fd, len, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	ok = write(fd, buf, len) == len;
	if (!ok) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

static void usage(void)
{
	fprintf(stderr, "usage: cookiectl STEP...  (cgroup DIR | get PID | create PID |"
		" share-to PID | share-from PID | hold; PID a number or self)\n");
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 2) {
		usage();
		return 2;
	}
	/* Check the whole command line first: no step runs on a bad one. */
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		pid_t pid;

		if (!strcmp(s, "hold"))
			continue;
		if (strcmp(s, "cgroup") && strcmp(s, "get") && strcmp(s, "create") &&
		    strcmp(s, "share-to") && strcmp(s, "share-from")) {
			fprintf(stderr, "cookiectl: unknown step '%s'\n", s);
			usage();
			return 2;
		}
		if (i + 1 >= argc ||
		    (strcmp(s, "cgroup") && parse_pid(argv[i + 1], &pid))) {
			fprintf(stderr, "cookiectl: step '%s' needs %s\n", s,
				strcmp(s, "cgroup") ? "a PID (number or self)" : "a DIR");
			usage();
			return 2;
		}
		i++;
	}
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *a = i + 1 < argc ? argv[i + 1] : "";
		pid_t pid = 0;
		int r;

		if (!strcmp(s, "hold")) {
			printf("hold: pid %d\n", (int)getpid());
			fflush(stdout);
			for (;;)
				pause();
		}
		i++;
		if (!strcmp(s, "cgroup")) {
			r = join_cgroup(a);
		} else {
			parse_pid(a, &pid);
			if (!strcmp(s, "get")) {
				uint64_t id = 0;

				r = prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, pid,
					  PR_SCHED_CORE_SCOPE_THREAD, (unsigned long)&id);
				if (!r) {
					printf("get %s: 0x%llx\n", a, (unsigned long long)id);
					fflush(stdout);
					continue;
				}
			} else {
				int op = !strcmp(s, "create") ? PR_SCHED_CORE_CREATE :
					 !strcmp(s, "share-to") ? PR_SCHED_CORE_SHARE_TO :
					 PR_SCHED_CORE_SHARE_FROM;

				r = prctl(PR_SCHED_CORE, op, pid,
					  PR_SCHED_CORE_SCOPE_THREAD, 0);
			}
		}
		if (r) {
			print_err(s, a, errno);
			failed = 1;
		} else {
			printf("%s %s: ok\n", s, a);
		}
		fflush(stdout);
	}
	return failed;
}
