// SPDX-License-Identifier: GPL-2.0
/*
 * gangbench - the work rate of small parallel workloads, for benchmarks
 * (never for pass/fail: the numbers depend on the machine's load).
 *
 *   gangbench barrier  --cpus A,B [--cgroup PATH] [--duration SEC]
 *   gangbench pingpong --cpus A,B [--cgroup PATH] [--duration SEC]
 *
 * barrier:  two processes pinned to CPUs A and B meet at a spinning
 *           barrier in shared memory, round after round, as the threads
 *           of a parallel program or the vCPUs of a VM that spin on each
 *           other do.  A round completes only while both run at once, so
 *           rounds/s measures how often the scheduler ran them together.
 * pingpong: two processes pinned to CPUs A and B (A = B: one CPU) pass
 *           a byte back and forth through pipes; round trips/s measures
 *           the cost of wakeups and context switches.
 *
 * Both processes join the cgroup PATH (a directory under the cgroup
 * root, written to its cgroup.procs) first, when given.  Output, one
 * line: "gangbench MODE rounds=N seconds=S rate=R" (R per second).
 * Exit status: 0 measured, 1 usage or set-up error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
	atomic_int stop;
	atomic_uint_fast64_t arrived[2];	/* barrier: rounds reached */
	uint64_t rounds;
	char err[1400];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int join(const char *cgroup, int cpu, char *err, size_t len)
{
	cpu_set_t set;

	if (cgroup) {
		char path[1024], pid[32];
		int fd, n;

		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		fd = open(path, O_WRONLY);
		if (fd < 0) {
			snprintf(err, len, "open %s: %s", path, strerror(errno));
			return -1;
		}
		n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (write(fd, pid, n) != n) {
			snprintf(err, len, "write %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		close(fd);
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		snprintf(err, len, "sched_setaffinity(%d): %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/* Side @me of the barrier: round r ends when both sides reached r. */
static void barrier_side(struct shared *sh, int me)
{
	uint64_t r = 0;

	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		r++;
		atomic_store_explicit(&sh->arrived[me], r, memory_order_release);
		while (atomic_load_explicit(&sh->arrived[!me], memory_order_acquire) < r)
			if (atomic_load_explicit(&sh->stop, memory_order_relaxed))
				return;
		if (me == 0)
			sh->rounds = r;
	}
}

static void pingpong_side(struct shared *sh, int me, int rfd, int wfd)
{
	char c = 0;

	if (me == 0 && write(wfd, &c, 1) != 1)
		return;
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		if (read(rfd, &c, 1) != 1)
			return;
		if (me == 0)
			sh->rounds++;
		if (write(wfd, &c, 1) != 1)
			return;
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: gangbench barrier|pingpong --cpus A,B"
		" [--cgroup PATH] [--duration SEC]\n");
	return 1;
}

int main(int argc, char **argv)
{
	const char *mode, *cgroup = NULL;
	int cpu[2] = { -1, -1 }, ab[2], ba[2];
	double duration = 5.0, t0, t1;
	struct shared *sh;
	pid_t pid[2];
	int barrier, status = 0;

	if (argc < 2)
		return usage();
	mode = argv[1];
	barrier = !strcmp(mode, "barrier");
	if (!barrier && strcmp(mode, "pingpong"))
		return usage();
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--cpus") && i + 1 < argc) {
			if (sscanf(argv[++i], "%d,%d", &cpu[0], &cpu[1]) != 2)
				return usage();
		} else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc) {
			cgroup = argv[++i];
		} else if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
			duration = atof(argv[++i]);
		} else {
			return usage();
		}
	}
	if (cpu[0] < 0 || cpu[1] < 0 || !(duration > 0))
		return usage();
	if (barrier && cpu[0] == cpu[1]) {
		fprintf(stderr, "gangbench: a spinning barrier needs two CPUs\n");
		return 1;
	}

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || pipe(ab) || pipe(ba)) {
		perror("gangbench");
		return 1;
	}
	memset(sh, 0, sizeof(*sh));
	/* The side that writes last after a stop gets EPIPE, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	t0 = now_s();
	for (int me = 0; me < 2; me++) {
		pid[me] = fork();
		if (pid[me] < 0) {
			perror("gangbench: fork");
			return 1;
		}
		if (pid[me] == 0) {
			if (join(cgroup, cpu[me], sh->err, sizeof(sh->err))) {
				atomic_store(&sh->stop, 1);
				_exit(1);
			}
			/* Only the ends a side uses stay open: when one side
			 * exits, the other one's read() sees end of file. */
			close(me ? ab[1] : ab[0]);
			close(me ? ba[0] : ba[1]);
			if (barrier)
				barrier_side(sh, me);
			else if (me == 0)
				pingpong_side(sh, 0, ba[0], ab[1]);
			else
				pingpong_side(sh, 1, ab[0], ba[1]);
			_exit(0);
		}
	}
	usleep((useconds_t)(duration * 1e6));
	atomic_store(&sh->stop, 1);
	t1 = now_s();
	/* A side blocked in read() sees the stop as end of file. */
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	for (int me = 0; me < 2; me++) {
		int st;

		if (waitpid(pid[me], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			status = 1;
	}
	if (status) {
		fprintf(stderr, "gangbench: %s\n", sh->err[0] ? sh->err : "a side failed");
		return 1;
	}
	printf("gangbench %s rounds=%llu seconds=%.3f rate=%.1f\n", mode,
	       (unsigned long long)sh->rounds, t1 - t0,
	       (double)sh->rounds / (t1 - t0));
	return 0;
}
