// SPDX-License-Identifier: GPL-2.0
/*
 * test_cpu_cosched (tests/peer-build.sh): the kernel's
 * tools/testing/selftests/cgroup/test_cpu.c, compiled with
 * -Dcg_create=peer_cg_create -Dcg_destroy=peer_cg_destroy, so that every
 * cgroup the test creates is coscheduled and every group it removes
 * reports what coscheduling did to it.  The test's own code and
 * assertions are unchanged.
 *
 * peer_cg_create(): cg_create(), then, where the group has the cpu
 * controller (a cpu.scheduled file), write $PEER_COSCHED_LEVEL (default 1)
 * to cpu.scheduled and read it back.  A failed write or read-back fails
 * the creation, and with it the test: a group that silently stays plain
 * would make the run meaningless.  Groups without the cpu controller
 * (test_cpucg_subtree_control's second pair, by design) stay plain and are
 * logged so.
 *
 * peer_cg_destroy(): logs the group's cpu.scheduled, usage_usec and
 * core_sched.force_idle_usec from cpu.stat, then cg_destroy().
 *
 * Log lines start with "# cosched: " (TAP comments); the guest test
 * counts them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_util.h"

int peer_cg_create(const char *cgroup);
int peer_cg_destroy(const char *cgroup);

static int has_sched_file(const char *cgroup)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/cpu.scheduled", cgroup);
	return access(path, F_OK) == 0;
}

int peer_cg_create(const char *cgroup)
{
	const char *level = getenv("PEER_COSCHED_LEVEL");
	char buf[32], want[32];
	int ret;

	if (!level || !*level)
		level = "1";
	ret = cg_create(cgroup);
	if (ret)
		return ret;
	if (!has_sched_file(cgroup)) {
		printf("# cosched: %s: plain (no cpu.scheduled: cpu controller not enabled here)\n",
		       cgroup);
		fflush(stdout);
		return 0;
	}
	if (cg_write(cgroup, "cpu.scheduled", (char *)level)) {
		printf("# cosched: FAILED: %s: write %s to cpu.scheduled: %s\n",
		       cgroup, level, strerror(errno));
		fflush(stdout);
		return -1;
	}
	snprintf(want, sizeof(want), "%s\n", level);
	if (cg_read(cgroup, "cpu.scheduled", buf, sizeof(buf)) || strcmp(buf, want)) {
		printf("# cosched: FAILED: %s: cpu.scheduled reads back '%.*s', not %s\n",
		       cgroup, (int)strcspn(buf, "\n"), buf, level);
		fflush(stdout);
		return -1;
	}
	printf("# cosched: %s: cpu.scheduled=%s\n", cgroup, level);
	fflush(stdout);
	return 0;
}

int peer_cg_destroy(const char *cgroup)
{
	char buf[32] = "";

	if (cgroup && has_sched_file(cgroup)) {
		cg_read(cgroup, "cpu.scheduled", buf, sizeof(buf));
		printf("# cosched: %s: removing: cpu.scheduled=%.*s usage_usec %ld core_sched.force_idle_usec %ld\n",
		       cgroup, (int)strcspn(buf, "\n"), buf,
		       cg_read_key_long(cgroup, "cpu.stat", "usage_usec"),
		       cg_read_key_long(cgroup, "cpu.stat", "core_sched.force_idle_usec"));
		fflush(stdout);
	}
	return cg_destroy(cgroup);
}
