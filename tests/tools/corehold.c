// SPDX-License-Identifier: GPL-2.0
/*
 * corehold - hold one core-scheduling cookie for as long as it lives.
 *
 * Core scheduling switches core-wide selection on (a static key: the
 * kernel patches its own text) with the first core cookie and off after
 * the last.  Multi-threaded QEMU TCG sometimes dies while the kernel
 * patches its text at runtime.  The guest runner starts corehold during
 * boot, before the first test, where the host retries a guest that died:
 * the key then stays on for every test, whatever cookies the tests create
 * and drop.
 *
 *   corehold [--ready FILE]
 *
 * Creates a cookie for itself only (PR_SCHED_CORE_CREATE, scope thread),
 * reads it back (PR_SCHED_CORE_GET), prints "corehold: pid P holds core
 * cookie 0x..." (also into FILE, written only once the cookie is held),
 * then sleeps in pause() until killed.  It never runs again, so its
 * cookie constrains no sibling.  Exit 1 (with the errno) if the kernel
 * refuses the cookie (no CONFIG_SCHED_CORE, no SMT).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE 62
#define PR_SCHED_CORE_GET 0
#define PR_SCHED_CORE_CREATE 1
#define PR_SCHED_CORE_SCOPE_THREAD 0
#endif

int main(int argc, char **argv)
{
	const char *ready = NULL;
	uint64_t id = 0;
	FILE *f;

	if (argc == 3 && !strcmp(argv[1], "--ready")) {
		ready = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: corehold [--ready FILE]\n");
		return 2;
	}
	if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0,
		  PR_SCHED_CORE_SCOPE_THREAD, 0)) {
		fprintf(stderr, "corehold: PR_SCHED_CORE_CREATE: %s\n", strerror(errno));
		return 1;
	}
	if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, 0,
		  PR_SCHED_CORE_SCOPE_THREAD, (unsigned long)&id)) {
		fprintf(stderr, "corehold: PR_SCHED_CORE_GET: %s\n", strerror(errno));
		return 1;
	}
	printf("corehold: pid %d holds core cookie 0x%llx\n", (int)getpid(),
	       (unsigned long long)id);
	fflush(stdout);
	if (ready) {
		f = fopen(ready, "w");
		if (!f || fprintf(f, "%d 0x%llx\n", (int)getpid(),
				  (unsigned long long)id) < 0 || fclose(f)) {
			fprintf(stderr, "corehold: %s: %s\n", ready, strerror(errno));
			return 1;
		}
	}
	for (;;)
		pause();
}
