// SPDX-License-Identifier: GPL-2.0
/*
 * corun - measure which pinned spinner tasks really ran at the same time.
 *
 * Each task is a child process that joins a cgroup (writes its pid into
 * <cgroup-root>/<path>/cgroup.procs), pins itself to one CPU, waits at a
 * shared-memory start barrier and then spins in a tight
 * clock_gettime(CLOCK_MONOTONIC) loop.  Consecutive clock reads closer
 * than --gap-us belong to one running segment; a longer gap means the task
 * was not running (descheduled, or its vCPU was) and ends the segment.
 * Segments go into preallocated shared memory.  Afterwards the parent
 * prints per task its run time and per pair of tasks the time both ran at
 * once (the intersection of their segment sets), per group (tasks with the
 * same group label, by default the cgroup path) the union of its tasks,
 * and per pair of groups the time they ran at once.
 *
 * A --sleeper task runs bursts and sleeps between them (a task that wakes
 * often); its record adds wakeups and oversleep (wakeup latency).
 *
 * A gang at coscheduling level 1 may run apart for as long as the
 * siblings take to follow a switch of the core (an IPI: ~100 us and more
 * under QEMU TCG), which all_pct_of_union counts against it.  So a group
 * record also describes its "apart" intervals: the maximal intervals
 * inside the group's union during which some, but not all, of its tasks
 * ran (a task handing over to its sibling is one interval).  Those no
 * longer than --follow-us count as a switch being followed; the rest
 * (apart_long_*) break the claim "outside the follow windows the gang
 * runs together", and corun_follow_pct is the co-run with the follow
 * windows counted as together: 100 * (all + short apart) / union.
 *
 * Output: lines starting with "# " are for humans; every other line is a
 * machine-readable record "KIND ID key=value ...":
 *   run summary window_us=... gap_us=... follow_us=... tasks=N
 *        start_mono_ns=.. ok=0|1
 * (start_mono_ns: the window's start on CLOCK_MONOTONIC, the origin of
 * the times --dump writes)
 *   task NAME cpu=.. group=.. run_us=.. share_pct=.. run_pct_of_window=..
 *        segments=.. max_gap_us=.. loop_ns=.. migrations=.. overflow=..
 *        finished=0|1 gaps_{100us,1ms,10ms,long}=COUNT gap_us_{...}=TIME
 *   pair A,B overlap_us=.. overlap_pct_of_a=.. overlap_pct_of_b=..
 *        overlap_pct_of_min=.. union_us=.. corun_pct_of_union=..
 *   group G tasks=a+b run_us=.. share_pct=.. union_us=.. all_us=..
 *        all_pct_of_union=.. apart_n=.. apart_us=.. apart_p50_us=..
 *        apart_p99_us=.. apart_max_us=.. apart_long_n=.. apart_long_us=..
 *        apart_long_pct_of_union=.. corun_follow_pct=..
 *   gpair G,H overlap_us=.. overlap_pct_of_min=.. overlap_pct_of_g=..
 *        overlap_pct_of_h=.. pairsum_us=.. pairsum_pct_of_min=..
 * All times in microseconds over the common measurement window.  The
 * pair, group and gpair records repeat their keys with a sched_ prefix
 * (the switch-aware view) and, with --trace, a trace_ prefix.  Percentiles of
 * apart intervals are nearest-rank (the smallest length that p% of the
 * intervals do not exceed; 0 without intervals); "long" means strictly
 * longer than --follow-us.
 * Exit status: 0 = measured, 1 = usage or set-up error, 2 = measured but
 * suspect (segment overflow, a task that did not finish, a migration).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TASKS 64

/* A closed interval of time [s, e] in ns; length e - s. */
struct seg {
	int64_t s, e;
};

struct seglist {
	struct seg *v;
	size_t n, cap;
};

/*
 * Recorder state of one task, in shared memory.  Written only by the
 * child; read by the parent after the child exited (or was killed, in
 * which case cur_* hold the segment that was still open).
 */
struct rec {
	int64_t gap_ns;
	int64_t win_start, win_end;	/* record only inside the window */
	size_t max;			/* capacity of segs[] */
	size_t n;			/* closed segments in segs[] */
	int open;			/* a segment is open: cur_s..cur_e */
	int64_t cur_s, cur_e;
	int64_t last;			/* last clock read, 0 = none yet */
	int64_t max_gap;		/* longest gap seen inside the window */
	/* Gaps by length: < 100 us, < 1 ms, < 10 ms, longer (count, ns). */
	uint64_t gap_n[4];
	int64_t gap_t[4];
	uint64_t overflow;		/* segments merged because segs[] was full */
	uint64_t loops;			/* clock reads inside the window */
	/*
	 * --home: the open segment began off the home CPUs.  Such a
	 * segment is not stored, only counted (away_n, away_ns).
	 */
	int away;
	uint64_t away_n;
	int64_t away_ns;
	struct seg *segs;
};

struct task {
	char name[64];
	int cpu;
	char cgroup[512];	/* "" = do not move */
	char group[128];
	int64_t sleep_ns;	/* --sleeper: sleep this long after each burst */
	int64_t burst_ns;	/* --sleeper: run this long (wall clock) per wakeup */
};

/*
 * --home: the CPUs the measurement is about (a span).  A task's run off
 * them is left out of every view and reported as away_us.
 */
static cpu_set_t home_cpus;
static int have_home;

/* Shared control block, followed by per-task struct slot and segments. */
struct shared {
	atomic_int ready;
	atomic_int failed;
	atomic_int go;
	int64_t start_ns, end_ns;
	struct slot {
		struct rec rec;		/* every gap ends a segment */
		struct rec srec;	/* only gaps with a context switch do */
		uint64_t quiet_gaps;	/* gaps in the window without a switch */
		int64_t quiet_ns;
		int done;
		int migrations;
		int bad_cpu;
		/* --sleeper: wakeups inside the window, oversleep (wakeup
		 * latency: slept minus asked) sum, max, counts > 1 and 10 ms */
		uint64_t wakeups, lat_1ms, lat_10ms;
		int64_t lat_sum, lat_max;
		char err[256];
	} slot[MAX_TASKS];
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---------------------------------------------------------------- */
/* Recorder: pure logic, fed with clock reads (tested by --self-test). */

static void rec_init(struct rec *r, struct seg *buf, size_t max,
		     int64_t gap_ns, int64_t win_start, int64_t win_end)
{
	memset(r, 0, sizeof(*r));
	r->segs = buf;
	r->max = max;
	r->gap_ns = gap_ns;
	r->win_start = win_start;
	r->win_end = win_end;
}

static void rec_gap(struct rec *r, int64_t g)
{
	int b = g < 100000 ? 0 : g < 1000000 ? 1 : g < 10000000 ? 2 : 3;

	if (g > r->max_gap)
		r->max_gap = g;
	r->gap_n[b]++;
	r->gap_t[b] += g;
}

static void rec_close(struct rec *r)
{
	if (!r->open)
		return;
	if (r->away) {
		r->away_n++;
		r->away_ns += r->cur_e - r->cur_s;
		r->open = r->away = 0;
		return;
	}
	if (r->n < r->max) {
		r->segs[r->n].s = r->cur_s;
		r->segs[r->n].e = r->cur_e;
		r->n++;
		r->open = 0;
	}
	/* Full: keep the segment open; rec_feed merges into it. */
}

/*
 * Feed one clock read t (monotonic, in ns).  cont = 1: whatever the gap
 * since the previous read, the task was not switched out (the gap was an
 * interrupt or the vCPU was stolen), so the segment goes on.  Returns 1
 * past the window.
 */
static int rec_feed(struct rec *r, int64_t t, int cont)
{
	int64_t prev = r->last;
	int near = prev && (t - prev <= r->gap_ns || cont);

	r->last = t;
	if (t < r->win_start)
		return 0;
	if (t >= r->win_end) {
		/* The run may have extended up to the end of the window. */
		if (r->open && near)
			r->cur_e = r->win_end;
		else if (prev && prev < r->win_end && !near)
			/* Waiting when the window closed: count the part inside. */
			rec_gap(r, r->win_end - (prev > r->win_start ? prev : r->win_start));
		rec_close(r);
		return 1;
	}
	r->loops++;
	if (r->open && near) {
		if (t - prev > r->gap_ns)
			rec_gap(r, t - prev);	/* counted, but not a gap in the run */
		r->cur_e = t;
		return 0;
	}
	if (r->open) {
		rec_gap(r, t - prev);
		rec_close(r);
		if (r->open) {
			/* segs[] full: count the gap as running, flag it. */
			r->overflow++;
			r->cur_e = t;
			return 0;
		}
	} else if (prev && t - prev > r->gap_ns && !near) {
		/* First read in the window after a gap: count the part inside. */
		rec_gap(r, t - (prev > r->win_start ? prev : r->win_start));
	}
	r->open = 1;
	r->away = 0;	/* the caller says where the new segment runs */
	/* A task already spinning when the window opened starts at its start. */
	if (prev && prev < r->win_start && near)
		r->cur_s = r->win_start;
	else
		r->cur_s = t;
	r->cur_e = t;
	return 0;
}

/* ---------------------------------------------------------------- */
/* Segment lists: sorted, disjoint.                                  */

static void sl_push(struct seglist *l, int64_t s, int64_t e)
{
	if (e < s)
		return;
	if (l->n && s <= l->v[l->n - 1].e) {	/* overlapping or touching */
		if (e > l->v[l->n - 1].e)
			l->v[l->n - 1].e = e;
		return;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v) {
			perror("corun: realloc");
			exit(1);
		}
	}
	l->v[l->n].s = s;
	l->v[l->n].e = e;
	l->n++;
}

static void sl_free(struct seglist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int64_t sl_len(const struct seglist *l)
{
	int64_t sum = 0;

	for (size_t i = 0; i < l->n; i++)
		sum += l->v[i].e - l->v[i].s;
	return sum;
}

static struct seglist sl_copy(const struct seg *v, size_t n)
{
	struct seglist l = { 0 };

	for (size_t i = 0; i < n; i++)
		sl_push(&l, v[i].s, v[i].e);
	return l;
}

static struct seglist sl_union(const struct seglist *a, const struct seglist *b)
{
	struct seglist l = { 0 };
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n) {
		if (j >= b->n || (i < a->n && a->v[i].s <= b->v[j].s)) {
			sl_push(&l, a->v[i].s, a->v[i].e);
			i++;
		} else {
			sl_push(&l, b->v[j].s, b->v[j].e);
			j++;
		}
	}
	return l;
}

static struct seglist sl_intersect(const struct seglist *a,
				   const struct seglist *b)
{
	struct seglist l = { 0 };
	size_t i = 0, j = 0;

	while (i < a->n && j < b->n) {
		int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
		int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;

		if (s < e)
			sl_push(&l, s, e);
		if (a->v[i].e < b->v[j].e)
			i++;
		else
			j++;
	}
	return l;
}

static int64_t sl_overlap(const struct seglist *a, const struct seglist *b)
{
	struct seglist l = sl_intersect(a, b);
	int64_t len = sl_len(&l);

	sl_free(&l);
	return len;
}

/*
 * The parts of a that b does not cover.  Zero-length pieces are dropped
 * (they last no time), and pieces that touch merge (sl_push), so that a
 * zero-length segment of b does not split one piece into two.
 */
static struct seglist sl_minus(const struct seglist *a, const struct seglist *b)
{
	struct seglist l = { 0 };
	size_t j = 0;

	for (size_t i = 0; i < a->n; i++) {
		int64_t s = a->v[i].s;

		/* b is sorted: what ends before this piece ends before the next. */
		while (j < b->n && b->v[j].e <= s)
			j++;
		for (size_t k = j; k < b->n && b->v[k].s < a->v[i].e; k++) {
			if (b->v[k].s > s)
				sl_push(&l, s, b->v[k].s);
			s = b->v[k].e;
		}
		if (s < a->v[i].e)
			sl_push(&l, s, a->v[i].e);
	}
	return l;
}

/*
 * A group's apart intervals (union minus all-at-once), summarised.  "Long"
 * ones last more than the follow bound: a switch of the core that the
 * siblings did not follow in time, or a gang that does not run together.
 */
struct apart {
	size_t n, nlong;
	int64_t sum, sum_long;
	int64_t p50, p99, max;
};

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* Nearest rank: the smallest of n sorted values with p% of them <= it. */
static int64_t nearest_rank(const int64_t *v, size_t n, unsigned int p)
{
	size_t r = (n * p + 99) / 100;

	if (!n)
		return 0;
	return v[r ? r - 1 : 0];
}

static void apart_stats(const struct seglist *ap, int64_t follow_ns,
			struct apart *a)
{
	int64_t *len;

	memset(a, 0, sizeof(*a));
	if (!ap->n)
		return;
	len = malloc(ap->n * sizeof(*len));
	if (!len) {
		perror("corun: malloc");
		exit(1);
	}
	for (size_t i = 0; i < ap->n; i++) {
		len[i] = ap->v[i].e - ap->v[i].s;
		a->sum += len[i];
		if (len[i] > follow_ns) {
			a->nlong++;
			a->sum_long += len[i];
		}
	}
	qsort(len, ap->n, sizeof(*len), cmp_i64);
	a->n = ap->n;
	a->p50 = nearest_rank(len, ap->n, 50);
	a->p99 = nearest_rank(len, ap->n, 99);
	a->max = len[ap->n - 1];
	free(len);
}

/* ---------------------------------------------------------------- */
/* Self-test.                                                        */

static int st_fail;

static void st_check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	st_fail++;
	va_start(ap, fmt);
	fprintf(stderr, "self-test FAIL: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static struct seglist st_list(const int64_t *p, size_t npairs)
{
	struct seglist l = { 0 };

	for (size_t i = 0; i < npairs; i++)
		sl_push(&l, p[2 * i], p[2 * i + 1]);
	return l;
}

static void st_case(const char *what, const int64_t *a, size_t na,
		    const int64_t *b, size_t nb, int64_t want_i, int64_t want_u)
{
	struct seglist la = st_list(a, na), lb = st_list(b, nb);
	struct seglist i = sl_intersect(&la, &lb), u = sl_union(&la, &lb);
	struct seglist i2 = sl_intersect(&lb, &la), u2 = sl_union(&lb, &la);

	st_check(sl_len(&i) == want_i, "%s: intersection %" PRId64 " != %" PRId64,
		 what, sl_len(&i), want_i);
	st_check(sl_len(&u) == want_u, "%s: union %" PRId64 " != %" PRId64,
		 what, sl_len(&u), want_u);
	st_check(sl_len(&i2) == want_i && sl_len(&u2) == want_u,
		 "%s: not symmetric", what);
	st_check(sl_len(&la) + sl_len(&lb) == want_i + want_u,
		 "%s: |a|+|b| != |a^b|+|avb|", what);
	sl_free(&la); sl_free(&lb); sl_free(&i); sl_free(&u);
	sl_free(&i2); sl_free(&u2);
}

/* Random lists on a discrete time line, checked against a bitmap. */
static void st_random(void)
{
	enum { T = 400 };
	unsigned int seed = 12345;

	for (int round = 0; round < 2000; round++) {
		unsigned char ba[T] = { 0 }, bb[T] = { 0 };
		struct seglist la = { 0 }, lb = { 0 };
		int64_t bi = 0, bu = 0;

		for (int w = 0; w < 2; w++) {
			struct seglist *l = w ? &lb : &la;
			unsigned char *bm = w ? bb : ba;
			int64_t t = rand_r(&seed) % 20;

			while (t < T) {
				int64_t len = rand_r(&seed) % 30;
				int64_t e = t + len < T ? t + len : T;

				sl_push(l, t, e);
				for (int64_t k = t; k < e; k++)
					bm[k] = 1;
				t = e + rand_r(&seed) % 40;
			}
		}
		for (int k = 0; k < T; k++) {
			bi += ba[k] && bb[k];
			bu += ba[k] || bb[k];
		}
		st_check(sl_overlap(&la, &lb) == bi,
			 "random round %d: overlap %" PRId64 " != %" PRId64,
			 round, sl_overlap(&la, &lb), bi);
		struct seglist u = sl_union(&la, &lb);

		st_check(sl_len(&u) == bu, "random round %d: union %" PRId64
			 " != %" PRId64, round, sl_len(&u), bu);
		for (size_t k = 1; k < u.n; k++)
			st_check(u.v[k - 1].e < u.v[k].s,
				 "random round %d: union not disjoint", round);
		sl_free(&u); sl_free(&la); sl_free(&lb);
	}
}

static void st_recorder(void)
{
	struct seg buf[4];
	struct rec r;

	/* gap 50, window [100, 1000) */
	rec_init(&r, buf, 4, 50, 100, 1000);
	const int64_t t1[] = { 60, 90, 120, 150, 400, 420, 430, 900, 950, 990,
			       1010 };
	int done = 0;

	for (size_t k = 0; k < sizeof(t1) / sizeof(t1[0]); k++)
		done = rec_feed(&r, t1[k], 0);
	st_check(done == 1, "recorder: not done after window end");
	st_check(r.n == 3, "recorder: %zu segments, want 3", r.n);
	if (r.n == 3) {
		/* Spinning since 60 (gap 30 to 90, 30 to 120): starts at 100. */
		st_check(buf[0].s == 100 && buf[0].e == 150,
			 "recorder: seg0 [%" PRId64 ",%" PRId64 "] want [100,150]",
			 buf[0].s, buf[0].e);
		st_check(buf[1].s == 400 && buf[1].e == 430,
			 "recorder: seg1 [%" PRId64 ",%" PRId64 "] want [400,430]",
			 buf[1].s, buf[1].e);
		/* Still spinning at the end (990 -> 1010): ends at 1000. */
		st_check(buf[2].s == 900 && buf[2].e == 1000,
			 "recorder: seg2 [%" PRId64 ",%" PRId64 "] want [900,1000]",
			 buf[2].s, buf[2].e);
	}
	st_check(r.max_gap == 470, "recorder: max gap %" PRId64 " want 470",
		 r.max_gap);
	st_check(r.overflow == 0, "recorder: overflow without need");
	st_check(r.gap_n[0] == 2 && r.gap_t[0] == 720 && !r.gap_n[1],
		 "recorder: gap histogram %" PRIu64 "/%" PRId64, r.gap_n[0],
		 r.gap_t[0]);

	/* A task that starts late, and one last read long before the end. */
	rec_init(&r, buf, 4, 50, 100, 1000);
	const int64_t t2[] = { 300, 310, 700, 2000 };

	for (size_t k = 0; k < sizeof(t2) / sizeof(t2[0]); k++)
		rec_feed(&r, t2[k], 0);
	st_check(r.n == 2 && buf[0].s == 300 && buf[0].e == 310 &&
		 buf[1].s == 700 && buf[1].e == 700,
		 "recorder: late start / early end wrong (n=%zu)", r.n);

	/* Waiting when the window closed: the wait counts up to its end. */
	rec_init(&r, buf, 4, 50, 100, 1000);
	const int64_t t4[] = { 90, 120, 150, 300, 5000 };

	for (size_t k = 0; k < sizeof(t4) / sizeof(t4[0]); k++)
		rec_feed(&r, t4[k], 0);
	st_check(r.max_gap == 700 && r.gap_n[2] == 0 && r.gap_n[1] == 0 &&
		 r.gap_n[0] == 2 && r.gap_t[0] == 850,
		 "recorder: trailing wait: max gap %" PRId64 " want 700, %" PRIu64
		 " gaps of %" PRId64 " want 2 of 850", r.max_gap, r.gap_n[0],
		 r.gap_t[0]);

	/* Never ran in the window: the whole window is one wait. */
	rec_init(&r, buf, 4, 50, 100, 1000);
	rec_feed(&r, 50, 0);
	rec_feed(&r, 2000, 0);
	st_check(r.n == 0 && r.max_gap == 900,
		 "recorder: no run in the window: max gap %" PRId64 " want 900",
		 r.max_gap);

	/* Overflow: capacity 2, four segments -> last two merged, flagged. */
	rec_init(&r, buf, 2, 50, 0, 1000);
	const int64_t t3[] = { 10, 20, 200, 210, 400, 410, 600, 610, 1001 };

	for (size_t k = 0; k < sizeof(t3) / sizeof(t3[0]); k++)
		rec_feed(&r, t3[k], 0);
	/* [10,20] and [200,210] stored; [400,410] and [600,610] merged. */
	st_check(r.overflow == 1, "recorder: overflow %" PRIu64 " want 1",
		 r.overflow);
	st_check(r.n == 2 && buf[1].s == 200 && buf[1].e == 210 && r.open &&
		 r.cur_s == 400 && r.cur_e == 610,
		 "recorder: overflow segment wrong (n=%zu)", r.n);

	/* --home: a segment marked away is counted, not stored. */
	rec_init(&r, buf, 4, 50, 0, 1000);
	rec_feed(&r, 10, 0);
	rec_feed(&r, 20, 0);
	r.away = 1;
	rec_feed(&r, 200, 0);
	rec_feed(&r, 210, 0);
	rec_feed(&r, 1001, 0);
	st_check(r.n == 1 && buf[0].s == 200 && buf[0].e == 210 &&
		 r.away_n == 1 && r.away_ns == 10,
		 "recorder: away segment wrong (n=%zu, away %" PRIu64 "/%" PRId64 ")",
		 r.n, r.away_n, r.away_ns);
}

/* The switch-aware recorder: gaps without a context switch do not split. */
static void st_recorder_cont(void)
{
	struct seg buf[4];
	struct rec r;
	/* reads, and whether the gap before each was without a switch */
	const int64_t t[] = { 60, 120, 150, 400, 420, 900, 940, 1300 };
	const int c[] = { 0, 1, 0, 1, 0, 0, 0, 1 };

	rec_init(&r, buf, 4, 50, 100, 1000);
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		rec_feed(&r, t[k], c[k]);
	/* 60->120 no switch: starts at 100; 150->400 no switch: one segment
	 * to 420; 420->900 switched; 940->1300 no switch: runs to 1000. */
	st_check(r.n == 2 && buf[0].s == 100 && buf[0].e == 420 &&
		 buf[1].s == 900 && buf[1].e == 1000,
		 "recorder cont: n=%zu [%" PRId64 ",%" PRId64 "] [%" PRId64
		 ",%" PRId64 "]", r.n, buf[0].s, buf[0].e, buf[1].s, buf[1].e);
	st_check(r.gap_n[0] == 2 && r.gap_t[0] == 250 + 480,
		 "recorder cont: gaps %" PRIu64 "/%" PRId64, r.gap_n[0],
		 r.gap_t[0]);
}

/*
 * A two-task gang, a and b.  a starts 20 and 30 before b; b stops 10
 * before a; a runs 500 alone (a long apart interval); a hands over to b
 * without a gap (one interval of 200, not two); b runs a zero-length
 * segment inside a run of a alone (must not split that interval).
 */
static const int64_t st_gang_a[] = { 0, 1000, 1200, 2000, 3000, 4000,
				     5000, 5100, 6000, 6100 };
static const int64_t st_gang_b[] = { 20, 1000, 1230, 1990, 3000, 3500,
				     5100, 5200, 6050, 6050 };

/*
 * Union [0,1000] [1200,2000] [3000,4000] [5000,5200] [6000,6100] = 3100;
 * all at once [20,1000] [1230,1990] [3000,3500] = 2240; apart: 20, 30,
 * 10, 500, 200, 100 (sorted 10 20 30 100 200 500) = 860 = 3100 - 2240.
 */
static void st_apart_check(const char *what, const struct apart *a,
			   int64_t follow_ns, size_t want_nlong, int64_t want_long)
{
	st_check(a->n == 6 && a->sum == 860, "%s: n=%zu sum=%" PRId64
		 ", want 6/860", what, a->n, a->sum);
	/* Nearest rank: p50 is the 3rd of 6, p99 the 6th. */
	st_check(a->p50 == 30 && a->p99 == 500 && a->max == 500,
		 "%s: p50=%" PRId64 " p99=%" PRId64 " max=%" PRId64
		 ", want 30/500/500", what, a->p50, a->p99, a->max);
	st_check(a->nlong == want_nlong && a->sum_long == want_long,
		 "%s, follow %" PRId64 ": long n=%zu sum=%" PRId64 ", want %zu/%"
		 PRId64, what, follow_ns, a->nlong, a->sum_long, want_nlong,
		 want_long);
}

static void st_apart(void)
{
	struct seglist la = st_list(st_gang_a, 5), lb = st_list(st_gang_b, 5);
	struct seglist un = sl_union(&la, &lb), all = sl_intersect(&la, &lb);
	struct seglist ap = sl_minus(&un, &all);
	/* Bound, long count and time: strictly longer than the bound is long. */
	const int64_t follow[][3] = {
		{ 0, 6, 860 }, { 9, 6, 860 }, { 10, 5, 850 }, { 99, 3, 800 },
		{ 100, 2, 700 }, { 199, 2, 700 }, { 200, 1, 500 },
		{ 499, 1, 500 }, { 500, 0, 0 }, { 1000, 0, 0 },
	};
	struct apart a;

	st_check(sl_len(&un) == 3100 && sl_len(&all) == 2240,
		 "apart: union %" PRId64 " all %" PRId64 ", want 3100/2240",
		 sl_len(&un), sl_len(&all));
	for (size_t k = 0; k < sizeof(follow) / sizeof(follow[0]); k++) {
		apart_stats(&ap, follow[k][0], &a);
		st_apart_check("apart", &a, follow[k][0], (size_t)follow[k][1],
			       follow[k][2]);
	}

	/* None apart: a gang that always ran together. */
	sl_free(&ap);
	ap = sl_minus(&all, &all);
	apart_stats(&ap, 0, &a);
	st_check(!ap.n && !a.n && !a.sum && !a.p50 && !a.p99 && !a.max &&
		 !a.nlong, "apart: all minus all has intervals");
	/* One interval: every percentile is that interval. */
	sl_free(&ap);
	sl_push(&ap, 7, 19);
	apart_stats(&ap, 1000, &a);
	st_check(a.n == 1 && a.p50 == 12 && a.p99 == 12 && a.max == 12 &&
		 !a.nlong, "apart: single interval wrong");
	sl_free(&la); sl_free(&lb); sl_free(&un); sl_free(&all); sl_free(&ap);
}

/* sl_minus alone: b reaching out of a, and a zero-length b. */
static void st_minus(void)
{
	const int64_t a[] = { 10, 20, 40, 100 }, b[] = { 0, 15, 18, 50, 70, 70 };
	struct seglist la = st_list(a, 2), lb = st_list(b, 3);
	struct seglist m = sl_minus(&la, &lb);

	st_check(m.n == 2 && m.v[0].s == 15 && m.v[0].e == 18 &&
		 m.v[1].s == 50 && m.v[1].e == 100,
		 "minus: [10,20][40,100] - [0,15][18,50][70,70] wrong (n=%zu)",
		 m.n);
	sl_free(&la); sl_free(&lb); sl_free(&m);
}

/* Apart time and intervals of three random lists, against a bitmap. */
static void st_apart_random(void)
{
	enum { T = 400, N = 3 };
	unsigned int seed = 54321;

	for (int round = 0; round < 2000; round++) {
		unsigned char bm[N][T] = { { 0 } };
		struct seglist l[N] = { { 0 } }, un = { 0 }, all, ap;
		int64_t bsum = 0, bn = 0;
		int prev = 0;

		for (int w = 0; w < N; w++) {
			int64_t t = rand_r(&seed) % 20;

			while (t < T) {
				int64_t e = t + rand_r(&seed) % 60;

				e = e < T ? e : T;
				sl_push(&l[w], t, e);
				for (int64_t k = t; k < e; k++)
					bm[w][k] = 1;
				t = e + rand_r(&seed) % 40;
			}
		}
		all = sl_copy(l[0].v, l[0].n);
		for (int w = 0; w < N; w++) {
			struct seglist u = sl_union(&un, &l[w]);
			struct seglist a = sl_intersect(&all, &l[w]);

			sl_free(&un);
			sl_free(&all);
			un = u;
			all = a;
		}
		for (int k = 0; k < T; k++) {
			int ran = bm[0][k] + bm[1][k] + bm[2][k];
			int apart = ran > 0 && ran < N;

			bsum += apart;
			bn += apart && !prev;
			prev = apart;
		}
		ap = sl_minus(&un, &all);
		st_check(sl_len(&ap) == bsum && (int64_t)ap.n == bn,
			 "apart random round %d: %zu intervals, %" PRId64
			 " in all; want %" PRId64 ", %" PRId64, round, ap.n,
			 sl_len(&ap), bn, bsum);
		for (size_t k = 0; k < ap.n; k++)
			st_check(ap.v[k].s < ap.v[k].e &&
				 (!k || ap.v[k - 1].e < ap.v[k].s),
				 "apart random round %d: intervals not disjoint",
				 round);
		for (int w = 0; w < N; w++)
			sl_free(&l[w]);
		sl_free(&un); sl_free(&all); sl_free(&ap);
	}
}

static long trace_parse(FILE *f, const pid_t *pids, int ntasks,
			struct seglist *out, int64_t start, int64_t end);
static void st_view_follow(void);

/* The trace view from a canned trace: clipping, cross-CPU order, junk. */
static void st_trace(void)
{
	static char text[] =
		"# tracer: nop\n"
		"  corun-a-10 [002] d..2.  1.000100: sched_switch: prev_comm=corun-a prev_pid=10 prev_prio=120 prev_state=R ==> next_comm=kworker/2:0 next_pid=99 next_prio=120\n"
		"  <idle>-0   [003] d..2.  1.000150: sched_switch: prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=corun-b b next_pid=11 next_prio=120\n"
		"  kworker-99 [002] d..2.  1.000300: sched_switch: prev_comm=kworker/2:0 prev_pid=99 prev_prio=120 prev_state=I ==> next_comm=corun-a next_pid=10 next_prio=120\n"
		"  corun-a-10 [002] d..2.  1.000500: sched_waking: comm=x pid=5 prio=120 target_cpu=002\n"
		"  corun-b-11 [003] d..2.  1.000700: sched_switch: prev_comm=corun-b b prev_pid=11 prev_prio=120 prev_state=R ==> next_comm=swapper/3 next_pid=0 next_prio=120\n"
		"  garbage line without an event\n";
	const pid_t pids[2] = { 10, 11 };
	struct seglist l[2] = { { 0 } };
	FILE *f = fmemopen(text, sizeof(text) - 1, "r");
	long n;

	if (!f) {
		st_check(0, "trace: fmemopen: %s", strerror(errno));
		return;
	}
	/* Window 1.000200 .. 1.000600 s; a was running before its first event. */
	n = trace_parse(f, pids, 2, l, 1000200000LL, 1000600000LL);
	fclose(f);
	st_check(n == 4, "trace: %ld events, want 4", n);
	st_check(l[0].n == 1 && l[0].v[0].s == 1000300000LL &&
		 l[0].v[0].e == 1000600000LL, "trace: task a segments wrong");
	st_check(l[1].n == 1 && l[1].v[0].s == 1000200000LL &&
		 l[1].v[0].e == 1000600000LL, "trace: task b segments wrong");
	sl_free(&l[0]);
	sl_free(&l[1]);
}

static int self_test(void)
{
	const int64_t a1[] = { 0, 10, 20, 30 }, b1[] = { 5, 25 };
	const int64_t a2[] = { 0, 10 }, b2[] = { 10, 20 };
	const int64_t a3[] = { 0, 100 }, b3[] = { 10, 20, 30, 40, 90, 120 };
	const int64_t a4[] = { 0, 10, 20, 30, 40, 50 }, b4[] = { 0, 10, 20, 30, 40, 50 };
	const int64_t a5[] = { 0, 10 };
	const int64_t a6[] = { 0, 5, 5, 10 }, b6[] = { 2, 8 };

	st_case("partial", a1, 2, b1, 1, 10, 30);
	st_case("touching", a2, 1, b2, 1, 0, 20);
	st_case("contained", a3, 1, b3, 3, 30, 120);
	st_case("identical", a4, 3, b4, 3, 30, 30);
	st_case("empty", a5, 1, NULL, 0, 0, 10);
	st_case("coalesced", a6, 2, b6, 1, 6, 10);
	st_random();
	st_recorder();
	st_recorder_cont();
	st_trace();
	st_minus();
	st_apart();
	st_apart_random();
	st_view_follow();
	if (st_fail) {
		printf("self-test: %d check(s) failed\n", st_fail);
		return 1;
	}
	printf("self-test: ok\n");
	return 0;
}

/* ---------------------------------------------------------------- */
/* Measurement.                                                      */

static void child_fail(struct slot *sl, struct shared *sh, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sl->err, sizeof(sl->err), fmt, ap);
	va_end(ap);
	atomic_fetch_add(&sh->failed, 1);
	_exit(1);
}

static void child(struct shared *sh, struct slot *sl, const struct task *t,
		  const char *cgroot, int no_cgroup)
{
	struct rec *r = &sl->rec;
	char comm[16];
	cpu_set_t set;

	/* Named after the task, so that a sched_switch trace tells them apart. */
	snprintf(comm, sizeof(comm), "corun-%s", t->name);
	prctl(PR_SET_NAME, comm);

	if (!no_cgroup && t->cgroup[0]) {
		char path[1024];
		char pid[32];
		int fd, len;

		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", cgroot,
			 t->cgroup);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			child_fail(sl, sh, "open %s: %s", path, strerror(errno));
		len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (write(fd, pid, len) != len)
			child_fail(sl, sh, "write pid to %s: %s", path,
				   strerror(errno));
		close(fd);
	}
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		child_fail(sl, sh, "sched_setaffinity(cpu %d): %s", t->cpu,
			   strerror(errno));
	if (sched_getcpu() != t->cpu)
		child_fail(sl, sh, "pinned to cpu %d but running on %d",
			   t->cpu, sched_getcpu());

	atomic_fetch_add(&sh->ready, 1);
	while (!atomic_load(&sh->go)) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	/*
	 * Spin through the warm-up, record inside [start_ns, end_ns).  At
	 * each gap, the thread's context-switch count tells a descheduling
	 * (count moved) from an interrupt or a stolen vCPU (it did not); the
	 * second recorder only splits at the former.  A switch between the
	 * clock read and the count read would be charged to this gap and
	 * hide the stop from the next one: the clock is read again after
	 * the count, and if that took longer than a gap, both gaps count as
	 * switches.
	 */
	struct rec *sr = &sl->srec;
	struct rusage ru;
	long csw;
	int64_t burst_start = 0;

	if (t->sleep_ns)
		prctl(PR_SET_TIMERSLACK, 1UL);	/* wake when asked, not 50 us later */

	getrusage(RUSAGE_THREAD, &ru);
	csw = ru.ru_nvcsw + ru.ru_nivcsw;
	r->win_start = sr->win_start = sh->start_ns;
	r->win_end = sr->win_end = sh->end_ns;
	for (;;) {
		int64_t t0 = now_ns();
		/* A segment's start changes only when a new one opens. */
		int64_t r_s = r->open ? r->cur_s : INT64_MIN;
		int64_t sr_s = sr->open ? sr->cur_s : INT64_MIN;
		int64_t t1 = 0;
		int quiet = 0;

		if (r->last && t0 - r->last > r->gap_ns) {
			getrusage(RUSAGE_THREAD, &ru);
			quiet = ru.ru_nvcsw + ru.ru_nivcsw == csw;
			csw = ru.ru_nvcsw + ru.ru_nivcsw;
			t1 = now_ns();
			if (t1 - t0 > r->gap_ns)
				quiet = 0;
			else
				t1 = 0;
			if (quiet && t0 >= r->win_start && t0 < r->win_end) {
				sl->quiet_gaps++;
				sl->quiet_ns += t0 - r->last;
			}
		}
		rec_feed(sr, t0, quiet);
		if (rec_feed(r, t0, 0))
			break;
		if (t1) {
			/* Stopped while reading the count: a switch gap. */
			rec_feed(sr, t1, 0);
			if (rec_feed(r, t1, 0))
				break;
		}
		if (r->open && r->cur_s != r_s) {
			int cpu = sched_getcpu();

			if (cpu != t->cpu) {
				sl->migrations++;
				sl->bad_cpu = cpu;
			}
			if (have_home) {
				r->away = !CPU_ISSET(cpu, &home_cpus);
				if (sr->open && sr->cur_s != sr_s)
					sr->away = r->away;
			}
		}
		if (t->sleep_ns && !burst_start) {
			burst_start = t0;
		} else if (t->sleep_ns && t0 - burst_start >= t->burst_ns) {
			struct timespec ts = { t->sleep_ns / 1000000000LL,
					       t->sleep_ns % 1000000000LL };
			int64_t b = now_ns(), a, lat;

			nanosleep(&ts, NULL);
			a = now_ns();
			lat = a - b - t->sleep_ns;
			if (b >= r->win_start && b < r->win_end) {
				sl->wakeups++;
				sl->lat_sum += lat;
				if (lat > sl->lat_max)
					sl->lat_max = lat;
				sl->lat_1ms += lat > 1000000;
				sl->lat_10ms += lat > 10000000;
			}
			burst_start = a;
		}
	}
	sl->done = 1;
	_exit(0);
}

/* ---------------------------------------------------------------- */
/*
 * Trace view: the scheduler's own record.  With --trace, sched_switch is
 * traced on the tasks' CPUs with the "mono" trace clock (CLOCK_MONOTONIC,
 * the recorders' clock) from before the children exist until they exited;
 * a task runs from a switch to it until the next switch away from it.
 * Neither interrupts nor a vCPU stolen by the host end a segment here:
 * this is what the guest scheduler had running, to the microsecond.
 */

struct tracefs {
	const char *dir;
	char old_clock[64], old_mask[256], old_on[16], old_event[16];
};

static int tfs_write(const struct tracefs *t, const char *file, const char *val)
{
	char path[512];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", t->dir, file);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "corun: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ok = fputs(val, f) >= 0;
	ok = !fclose(f) && ok;
	if (!ok)
		fprintf(stderr, "corun: writing '%s' to %s: %s\n", val, path,
			strerror(errno));
	return ok ? 0 : -1;
}

/* The selected entry of a file like trace_clock ("[mono]"), or line 1. */
static void tfs_read(const struct tracefs *t, const char *file, char *buf,
		     size_t len)
{
	char path[512], *b, *e;
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", t->dir, file);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	b = strchr(buf, '[');
	e = b ? strchr(b, ']') : NULL;
	if (b && e) {
		*e = '\0';
		memmove(buf, b + 1, strlen(b + 1) + 1);
	}
}

static int trace_start(struct tracefs *t, const struct task *tasks, int ntasks)
{
	uint64_t mask = 0;
	char val[32];

	for (int i = 0; i < ntasks; i++) {
		if (tasks[i].cpu >= 32) {
			fprintf(stderr, "corun: --trace supports CPUs 0-31\n");
			return -1;
		}
		mask |= 1ULL << tasks[i].cpu;
	}
	tfs_read(t, "trace_clock", t->old_clock, sizeof(t->old_clock));
	tfs_read(t, "tracing_cpumask", t->old_mask, sizeof(t->old_mask));
	tfs_read(t, "tracing_on", t->old_on, sizeof(t->old_on));
	tfs_read(t, "events/sched/sched_switch/enable", t->old_event,
		 sizeof(t->old_event));
	snprintf(val, sizeof(val), "%" PRIx64 "\n", mask);
	if (tfs_write(t, "tracing_on", "0\n") ||
	    tfs_write(t, "trace_clock", "mono\n") ||
	    tfs_write(t, "tracing_cpumask", val) ||
	    tfs_write(t, "buffer_size_kb", "16384\n") ||
	    tfs_write(t, "trace", "\n") ||
	    tfs_write(t, "events/sched/sched_switch/enable", "1\n") ||
	    tfs_write(t, "tracing_on", "1\n"))
		return -1;
	return 0;
}

/* Stop tracing; the buffer stays readable.  Overruns lost events. */
static uint64_t trace_stop(const struct tracefs *t, const struct task *tasks,
			   int ntasks)
{
	uint64_t lost = 0;

	tfs_write(t, "tracing_on", "0\n");
	for (int i = 0; i < ntasks; i++) {
		char path[512], line[256];
		FILE *f;

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", t->dir,
			 tasks[i].cpu);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "overrun: ", 9))
				lost += strtoull(line + 9, NULL, 10);
		fclose(f);
	}
	return lost;
}

static void trace_restore(const struct tracefs *t)
{
	char val[300];

	snprintf(val, sizeof(val), "%s\n", t->old_event[0] ? t->old_event : "0");
	tfs_write(t, "events/sched/sched_switch/enable", val);
	if (t->old_clock[0]) {
		snprintf(val, sizeof(val), "%s\n", t->old_clock);
		tfs_write(t, "trace_clock", val);
	}
	if (t->old_mask[0]) {
		snprintf(val, sizeof(val), "%s\n", t->old_mask);
		tfs_write(t, "tracing_cpumask", val);
	}
	snprintf(val, sizeof(val), "%s\n", t->old_on[0] ? t->old_on : "1");
	tfs_write(t, "tracing_on", val);
}

/*
 * Parse the text of a sched_switch trace ("... [CPU] ... SEC.USEC:
 * sched_switch: prev_comm=.. prev_pid=P ... ==> next_comm=.. next_pid=N
 * ...") into per-task run segments clipped to [start, end].  A task is
 * known by its pid.  Returns the number of sched_switch events read.
 */
static long trace_parse(FILE *f, const pid_t *pids, int ntasks,
			struct seglist *out, int64_t start, int64_t end)
{
	int64_t since[MAX_TASKS];
	char line[1024];
	long events = 0;

	for (int i = 0; i < ntasks; i++)
		since[i] = -1;
	while (fgets(line, sizeof(line), f)) {
		char *ev = strstr(line, ": sched_switch: "), *ts, *pp, *np;
		long long sec, usec;
		pid_t prev, next;
		int64_t t;

		if (!ev)
			continue;
		*ev = '\0';
		ts = strrchr(line, ' ');
		pp = strstr(ev + 1, " prev_pid=");
		np = strstr(ev + 1, " next_pid=");
		if (!ts || !pp || !np || sscanf(ts + 1, "%lld.%lld", &sec, &usec) != 2)
			continue;
		events++;
		t = (int64_t)sec * 1000000000LL + (int64_t)usec * 1000;
		prev = (pid_t)atoi(pp + 10);
		next = (pid_t)atoi(np + 10);
		for (int i = 0; i < ntasks; i++) {
			if (pids[i] == prev && since[i] >= 0) {
				int64_t s = since[i] > start ? since[i] : start;
				int64_t e = t < end ? t : end;

				if (s < e)
					sl_push(&out[i], s, e);
				since[i] = -1;
			}
			if (pids[i] == next)
				since[i] = t;
		}
	}
	/* Still running when tracing stopped: it ran to the window's end. */
	for (int i = 0; i < ntasks; i++)
		if (since[i] >= 0 && since[i] < end)
			sl_push(&out[i], since[i] > start ? since[i] : start, end);
	return events;
}

/* Parse a CPU list such as "0-3,6" into @set; 0 on success. */
static int parse_cpulist(const char *arg, cpu_set_t *set)
{
	const char *p = arg;
	char *end;

	CPU_ZERO(set);
	do {
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0 || a >= CPU_SETSIZE)
			return -1;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b >= CPU_SETSIZE)
				return -1;
		}
		for (long c = a; c <= b; c++)
			CPU_SET(c, set);
		p = end + 1;
	} while (*end == ',');
	return *end ? -1 : 0;
}

static int parse_task(const char *arg, struct task *t)
{
	char buf[1024], *p, *f[4] = { 0 };
	int n = 0;
	char *end;

	snprintf(buf, sizeof(buf), "%s", arg);
	p = buf;
	while (n < 4) {
		f[n++] = p;
		if (n == 4)
			break;
		p = strchr(p, ':');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (n < 2 || !f[0][0] || strlen(f[0]) >= sizeof(t->name) ||
	    strpbrk(f[0], ", =+\t")) {
		fprintf(stderr, "corun: bad --task '%s' (want NAME:CPU[:CGROUP[:GROUP]],"
			" NAME without , = + or blanks)\n", arg);
		return -1;
	}
	snprintf(t->name, sizeof(t->name), "%s", f[0]);
	errno = 0;
	t->cpu = (int)strtol(f[1], &end, 10);
	if (errno || end == f[1] || *end || t->cpu < 0 || t->cpu >= CPU_SETSIZE) {
		fprintf(stderr, "corun: bad cpu in --task '%s'\n", arg);
		return -1;
	}
	t->cgroup[0] = '\0';
	if (f[2] && f[2][0] && strcmp(f[2], "-"))
		snprintf(t->cgroup, sizeof(t->cgroup), "%s", f[2]);
	if (f[3] && f[3][0])
		snprintf(t->group, sizeof(t->group), "%s", f[3]);
	else
		snprintf(t->group, sizeof(t->group), "%s",
			 t->cgroup[0] ? t->cgroup : t->name);
	if (strpbrk(t->group, ", =\t")) {
		fprintf(stderr, "corun: group label '%s' must not contain , = or"
			" blanks\n", t->group);
		return -1;
	}
	return 0;
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

static double us(int64_t ns)
{
	return (double)ns / 1000.0;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Everything computed from one set of segment lists. */
struct view {
	struct seglist list[MAX_TASKS];
	int64_t run[MAX_TASKS], sum;
	int64_t ov[MAX_TASKS][MAX_TASKS];	/* pairwise, i < j */
	int ng, rep[MAX_TASKS], gof[MAX_TASKS], members[MAX_TASKS];
	char names[MAX_TASKS][256];
	int64_t grun[MAX_TASKS], gunion[MAX_TASKS], gall[MAX_TASKS];
	int64_t gov[MAX_TASKS][MAX_TASKS], gpairsum[MAX_TASKS][MAX_TASKS];
	struct seglist gu[MAX_TASKS];
	struct apart apart[MAX_TASKS];	/* per group, long: > follow_ns */
};

static void view_compute(struct view *w, const struct task *tasks, int ntasks,
			 int64_t follow_ns)
{
	w->sum = 0;
	for (int i = 0; i < ntasks; i++) {
		w->run[i] = sl_len(&w->list[i]);
		w->sum += w->run[i];
	}
	for (int i = 0; i < ntasks; i++)
		for (int j = i + 1; j < ntasks; j++)
			w->ov[i][j] = w->ov[j][i] = sl_overlap(&w->list[i], &w->list[j]);

	/* Groups, in order of first appearance. */
	w->ng = 0;
	for (int i = 0; i < ntasks; i++) {
		int g;

		for (g = 0; g < w->ng; g++)
			if (!strcmp(tasks[w->rep[g]].group, tasks[i].group))
				break;
		if (g == w->ng) {
			w->rep[w->ng++] = i;
			w->members[g] = 0;
			w->names[g][0] = '\0';
		}
		w->gof[i] = g;
	}
	for (int g = 0; g < w->ng; g++) {
		struct seglist all = { 0 };
		int first = 1;

		w->gu[g] = (struct seglist){ 0 };
		w->grun[g] = 0;
		for (int i = 0; i < ntasks; i++) {
			if (w->gof[i] != g)
				continue;
			struct seglist u = sl_union(&w->gu[g], &w->list[i]);

			sl_free(&w->gu[g]);
			w->gu[g] = u;
			if (first) {
				all = sl_copy(w->list[i].v, w->list[i].n);
				first = 0;
			} else {
				struct seglist a = sl_intersect(&all, &w->list[i]);

				sl_free(&all);
				all = a;
			}
			w->grun[g] += w->run[i];
			w->members[g]++;
			snprintf(w->names[g] + strlen(w->names[g]),
				 sizeof(w->names[g]) - strlen(w->names[g]), "%s%s",
				 w->members[g] > 1 ? "+" : "", tasks[i].name);
		}
		w->gunion[g] = sl_len(&w->gu[g]);
		w->gall[g] = sl_len(&all);

		/* all lies inside the union: the rest is exactly the apart time. */
		struct seglist ap = sl_minus(&w->gu[g], &all);

		apart_stats(&ap, follow_ns, &w->apart[g]);
		sl_free(&ap);
		sl_free(&all);
	}
	for (int g = 0; g < w->ng; g++)
		for (int h = g + 1; h < w->ng; h++) {
			w->gov[g][h] = sl_overlap(&w->gu[g], &w->gu[h]);
			w->gpairsum[g][h] = 0;
			for (int i = 0; i < ntasks; i++)
				for (int j = 0; j < ntasks; j++)
					if (w->gof[i] == g && w->gof[j] == h)
						w->gpairsum[g][h] += w->ov[i][j];
		}
}

/* Co-run of group g with its short apart intervals (follow windows) as together. */
static double follow_pct(const struct view *w, int g)
{
	const struct apart *a = &w->apart[g];

	return pct(w->gall[g] + a->sum - a->sum_long, w->gunion[g]);
}

static void view_free(struct view *w, int ntasks)
{
	for (int i = 0; i < ntasks; i++)
		sl_free(&w->list[i]);
	for (int g = 0; g < w->ng; g++)
		sl_free(&w->gu[g]);
}

/* The same gang through view_compute, next to a one-task group. */
static void st_view_follow(void)
{
	static struct view w;
	static struct task t[3] = {
		{ .name = "a", .group = "G" }, { .name = "b", .group = "G" },
		{ .name = "c", .group = "H" },
	};
	const int64_t c[] = { 0, 700, 800, 900 };

	memset(&w, 0, sizeof(w));
	w.list[0] = st_list(st_gang_a, 5);
	w.list[1] = st_list(st_gang_b, 5);
	w.list[2] = st_list(c, 2);
	view_compute(&w, t, 3, 100);
	st_check(w.ng == 2 && w.gunion[0] == 3100 && w.gall[0] == 2240,
		 "view follow: ng=%d union %" PRId64 " all %" PRId64, w.ng,
		 w.gunion[0], w.gall[0]);
	st_apart_check("view follow", &w.apart[0], 100, 2, 700);
	/* (2240 + 860 - 700) / 3100 */
	st_check(follow_pct(&w, 0) == pct(2400, 3100),
		 "view follow: corun_follow_pct %.6f, want %.6f",
		 follow_pct(&w, 0), pct(2400, 3100));
	/* A group of one is never apart: it always runs "together". */
	st_check(!w.apart[1].n && follow_pct(&w, 1) == 100.0,
		 "view follow: one-task group apart n=%zu, %.3f%%",
		 w.apart[1].n, follow_pct(&w, 1));
	view_free(&w, 3);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: corun [options] --task NAME:CPU[:CGROUP[:GROUP]] ...\n"
"       corun --self-test\n"
"  --task NAME:CPU[:CGROUP[:GROUP]]  spinner pinned to CPU, moved into\n"
"                      CGROUP (relative to the cgroup root; '-' or empty:\n"
"                      stay), counted in GROUP (default: CGROUP, else NAME)\n"
"  --sleeper NAME:CPU[:CGROUP[:GROUP]]  like --task, but after each burst\n"
"                      of --burst-us (wall clock, default 100) it sleeps\n"
"                      --sleep-us (default 1000): wakeups and oversleep\n"
"                      (wakeup latency) are reported\n"
"  --duration SEC      measurement window (default 10)\n"
"  --warmup SEC        spin before the window opens (default 0.5)\n"
"  --setup-timeout SEC  the tasks' setup (cgroup, pinning) must be done in\n"
"                      this time (default 10)\n"
"  --gap-us US         a gap longer than this ends a segment (default 50)\n"
"  --follow-us US      bound on a group's apart intervals (some but not all\n"
"                      of its tasks ran): longer ones are apart_long_*, the\n"
"                      shorter count as together in corun_follow_pct (the\n"
"                      time siblings may take to follow a switch; default\n"
"                      1000)\n"
"  --max-segments N    per task (default 262144); overflow is reported\n"
"  --cgroup-root DIR   default /sys/fs/cgroup\n"
"  --no-cgroup         do not move tasks into cgroups\n"
"  --home CPUS         the CPUs measured (a span, as 0-3): a run that\n"
"                      begins on another CPU is left out of the raw and\n"
"                      sched views and reported as away_us (a task that\n"
"                      hotplug or a cpuset fallback moved off the span)\n"
"  --dump FILE         write every segment: view task start_ns end_ns\n"
"                      (from the window's start, start_mono_ns)\n"
"  --trace[=DIR]       third view (trace_ keys) from a sched_switch trace\n"
"                      of the tasks' CPUs (tracefs DIR, default\n"
"                      /sys/kernel/tracing; changed settings are restored)\n"
"  --self-test         check the interval arithmetic, apart statistics,\n"
"                      recorder and trace parser\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "task", required_argument, NULL, 't' },
		{ "sleeper", required_argument, NULL, 'z' },
		{ "sleep-us", required_argument, NULL, 'Z' },
		{ "burst-us", required_argument, NULL, 'B' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "setup-timeout", required_argument, NULL, 'U' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "follow-us", required_argument, NULL, 'F' },
		{ "max-segments", required_argument, NULL, 'm' },
		{ "cgroup-root", required_argument, NULL, 'r' },
		{ "no-cgroup", no_argument, NULL, 'n' },
		{ "dump", required_argument, NULL, 'D' },
		{ "home", required_argument, NULL, 'H' },
		{ "trace", optional_argument, NULL, 'T' },
		{ "self-test", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static struct task tasks[MAX_TASKS];
	int ntasks = 0, no_cgroup = 0, c, status = 0;
	double duration = 10.0, warmup = 0.5, gap_us = 50.0, setup_s = 10.0;
	double sleep_us = 1000.0, burst_us = 100.0, follow_us = 1000.0;
	int sleeper[MAX_TASKS] = { 0 };
	long max_segs = 262144;
	const char *cgroot = "/sys/fs/cgroup", *dump = NULL;
	static const char *const vname[] = { "raw", "sched", "trace" };
	static const char *const vkey[] = { "", "sched_", "trace_" };
	struct tracefs tfs = { 0 };
	uint64_t trace_lost = 0;
	long trace_events = 0;
	int nv = 2;
	char *end;
	pid_t pids[MAX_TASKS];

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
		case 'z':
			if (ntasks == MAX_TASKS) {
				fprintf(stderr, "corun: at most %d tasks\n", MAX_TASKS);
				return 1;
			}
			if (parse_task(optarg, &tasks[ntasks]))
				return 1;
			for (int i = 0; i < ntasks; i++)
				if (!strcmp(tasks[i].name, tasks[ntasks].name)) {
					fprintf(stderr, "corun: task name '%s' used twice\n",
						tasks[i].name);
					return 1;
				}
			sleeper[ntasks] = c == 'z';
			ntasks++;
			break;
		case 'd':
		case 'w':
		case 'U':
		case 'Z':
		case 'B':
		case 'F':
		case 'g': {
			double v = strtod(optarg, &end);

			if (end == optarg || *end || !(v >= 0) || v > 1e6) {
				fprintf(stderr, "corun: bad number '%s'\n", optarg);
				return 1;
			}
			if (c == 'd')
				duration = v;
			else if (c == 'w')
				warmup = v;
			else if (c == 'U')
				setup_s = v;
			else if (c == 'Z')
				sleep_us = v;
			else if (c == 'B')
				burst_us = v;
			else if (c == 'F')
				follow_us = v;
			else
				gap_us = v;
			break;
		}
		case 'm':
			max_segs = strtol(optarg, &end, 10);
			if (end == optarg || *end || max_segs < 1 || max_segs > 1L << 26) {
				fprintf(stderr, "corun: bad --max-segments '%s'\n", optarg);
				return 1;
			}
			break;
		case 'r':
			cgroot = optarg;
			break;
		case 'n':
			no_cgroup = 1;
			break;
		case 'D':
			dump = optarg;
			break;
		case 'H':
			if (parse_cpulist(optarg, &home_cpus)) {
				fprintf(stderr, "corun: bad --home CPU list '%s'\n", optarg);
				return 1;
			}
			have_home = 1;
			break;
		case 'T':
			tfs.dir = optarg ? optarg : "/sys/kernel/tracing";
			nv = 3;
			break;
		case 'S':
			return self_test();
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc || ntasks == 0 || duration <= 0) {
		usage(stderr);
		return 1;
	}
	for (int i = 0; i < ntasks; i++)
		if (sleeper[i]) {
			tasks[i].sleep_ns = (int64_t)(sleep_us * 1000.0);
			tasks[i].burst_ns = (int64_t)(burst_us * 1000.0);
			if (tasks[i].sleep_ns < 1)
				tasks[i].sleep_ns = 1;
		}

	size_t seg_bytes = (size_t)max_segs * sizeof(struct seg);
	size_t total = sizeof(struct shared) + 2 * (size_t)ntasks * seg_bytes;
	struct shared *sh = mmap(NULL, total, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (sh == MAP_FAILED) {
		perror("corun: mmap");
		return 1;
	}
	memset(sh, 0, sizeof(*sh));
	for (int i = 0; i < ntasks; i++) {
		struct seg *buf = (struct seg *)((char *)sh + sizeof(*sh) +
						 2 * (size_t)i * seg_bytes);

		/* Touch the buffers now so that recording takes no page faults. */
		memset(buf, 0, 2 * seg_bytes);
		rec_init(&sh->slot[i].rec, buf, (size_t)max_segs,
			 (int64_t)(gap_us * 1000.0), 0, 0);
		rec_init(&sh->slot[i].srec, buf + max_segs, (size_t)max_segs,
			 (int64_t)(gap_us * 1000.0), 0, 0);
	}

	if (tfs.dir && trace_start(&tfs, tasks, ntasks)) {
		trace_restore(&tfs);
		printf("run summary ok=0 error=trace\n");
		return 1;
	}
	fflush(stdout);
	for (int i = 0; i < ntasks; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("corun: fork");
			for (int k = 0; k < i; k++)
				kill(pids[k], SIGKILL);
			return 1;
		}
		if (pids[i] == 0)
			child(sh, &sh->slot[i], &tasks[i], cgroot, no_cgroup);
	}

	/* Barrier: every child in its cgroup and pinned, or one failed. */
	int64_t setup_start = now_ns(), setup_ns;
	int64_t deadline = setup_start + (int64_t)(setup_s * 1e9);

	while (atomic_load(&sh->ready) + atomic_load(&sh->failed) < ntasks &&
	       now_ns() < deadline) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	if (atomic_load(&sh->failed) || atomic_load(&sh->ready) < ntasks) {
		for (int i = 0; i < ntasks; i++)
			kill(pids[i], SIGKILL);
		for (int i = 0; i < ntasks; i++)
			waitpid(pids[i], NULL, 0);
		for (int i = 0; i < ntasks; i++)
			if (sh->slot[i].err[0])
				fprintf(stderr, "corun: task %s: %s\n",
					tasks[i].name, sh->slot[i].err);
		if (!atomic_load(&sh->failed))
			fprintf(stderr, "corun: tasks not ready after %g s\n",
				setup_s);
		printf("run summary ok=0 error=setup\n");
		return 1;
	}
	setup_ns = now_ns() - setup_start;
	sh->start_ns = now_ns() + (int64_t)(warmup * 1e9) + 2000000;
	sh->end_ns = sh->start_ns + (int64_t)(duration * 1e9);
	atomic_store(&sh->go, 1);

	/* Wait; a starved child is killed after a grace period. */
	int left = ntasks;
	int64_t kill_at = sh->end_ns + 5LL * 1000000000LL +
			  (int64_t)(duration * 1e9);

	while (left > 0) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			left--;
			continue;
		}
		if (p < 0 && errno != EINTR)
			break;
		if (now_ns() > kill_at) {
			for (int i = 0; i < ntasks; i++)
				kill(pids[i], SIGKILL);
			kill_at = INT64_MAX;
		}
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
	}

	/* Views: raw (every gap), sched (switch gaps only), trace. */
	int64_t window = sh->end_ns - sh->start_ns;
	int64_t follow_ns = (int64_t)(follow_us * 1000.0);
	static struct view v[3];

	if (tfs.dir) {
		char path[512];
		FILE *f;

		trace_lost = trace_stop(&tfs, tasks, ntasks);
		snprintf(path, sizeof(path), "%s/trace", tfs.dir);
		f = fopen(path, "r");
		if (f) {
			trace_events = trace_parse(f, pids, ntasks, v[2].list,
						   sh->start_ns, sh->end_ns);
			fclose(f);
		} else {
			fprintf(stderr, "corun: %s: %s\n", path, strerror(errno));
		}
		trace_restore(&tfs);
		if (!trace_events || trace_lost)
			status = 2;
		view_compute(&v[2], tasks, ntasks, follow_ns);
	}

	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < ntasks; i++) {
			struct slot *sl = &sh->slot[i];
			struct rec *r = k ? &sl->srec : &sl->rec;

			v[k].list[i] = sl_copy(r->segs, r->n);
			/* killed, or overflowed at the very end */
			if (r->open && !r->away)
				sl_push(&v[k].list[i], r->cur_s, r->cur_e);
			if (!sl->done || r->overflow || sl->migrations)
				status = 2;
		}
		view_compute(&v[k], tasks, ntasks, follow_ns);
	}
	struct view *raw = &v[0], *sv = &v[1];

	if (dump) {
		FILE *f = fopen(dump, "w");

		if (!f) {
			perror(dump);
			status = status ? status : 2;
		} else {
			for (int k = 0; k < nv; k++)
				for (int i = 0; i < ntasks; i++)
					for (size_t n = 0; n < v[k].list[i].n; n++)
						fprintf(f, "%s %s %" PRId64 " %" PRId64 "\n",
							vname[k], tasks[i].name,
							v[k].list[i].v[n].s - sh->start_ns,
							v[k].list[i].v[n].e - sh->start_ns);
			fclose(f);
		}
	}

	printf("# corun: window %.3f s, gap %.0f us, %d tasks.  \"ran\": the"
	       " clock loop ran (every gap is a stop); [sched: gaps without a"
	       " context switch, i.e. interrupts or a stolen vCPU, do not"
	       " count as stops]\n", (double)window / 1e9, gap_us, ntasks);
	if (tfs.dir)
		printf("# trace: %ld sched_switch events, %" PRIu64 " lost;"
		       " [trace: from a switch to the task to the next switch"
		       " away]\n", trace_events, trace_lost);
	for (int i = 0; i < ntasks; i++) {
		struct slot *sl = &sh->slot[i];
		struct rec *r = &sl->rec;
		double loop = r->loops ? (double)raw->run[i] / (double)r->loops : 0;

		printf("# task %s (cpu %d, group %s%s%s): ran %.3f s = %.2f%% of"
		       " window [sched %.3f s], %.2f%% of all run time [sched"
		       " %.2f%%]; %zu segments, longest gap %.1f ms, %.0f ns per"
		       " clock read%s%s%s\n"
		       "#   gaps <100us %" PRIu64 " (%.1f ms), <1ms %" PRIu64
		       " (%.1f ms), <10ms %" PRIu64 " (%.1f ms), longer %" PRIu64
		       " (%.1f ms); without a context switch %" PRIu64
		       " (%.1f ms)\n",
		       tasks[i].name, tasks[i].cpu, tasks[i].group,
		       tasks[i].cgroup[0] ? ", cgroup " : "", tasks[i].cgroup,
		       (double)raw->run[i] / 1e9, pct(raw->run[i], window),
		       (double)sv->run[i] / 1e9,
		       pct(raw->run[i], raw->sum), pct(sv->run[i], sv->sum),
		       raw->list[i].n, (double)r->max_gap / 1e6, loop,
		       sl->done ? "" : "; DID NOT FINISH (killed)",
		       r->overflow ? "; SEGMENT OVERFLOW" : "",
		       sl->migrations ? "; MIGRATED" : "",
		       r->gap_n[0], (double)r->gap_t[0] / 1e6,
		       r->gap_n[1], (double)r->gap_t[1] / 1e6,
		       r->gap_n[2], (double)r->gap_t[2] / 1e6,
		       r->gap_n[3], (double)r->gap_t[3] / 1e6,
		       sl->quiet_gaps, (double)sl->quiet_ns / 1e6);
		if (r->away_n)
			printf("#   off the --home CPUs: %" PRIu64 " runs, %.1f ms"
			       " [sched %.1f ms], left out of the views\n",
			       r->away_n, (double)r->away_ns / 1e6,
			       (double)sl->srec.away_ns / 1e6);
		if (tasks[i].sleep_ns)
			printf("#   sleeper: %" PRIu64 " wakeups (%.0f/s), oversleep"
			       " avg %.1f us, max %.1f ms, > 1 ms %" PRIu64
			       ", > 10 ms %" PRIu64 " (asked %.0f us sleep, %.0f us"
			       " bursts)\n", sl->wakeups,
			       (double)sl->wakeups * 1e9 / (double)window,
			       sl->wakeups ? us(sl->lat_sum) / (double)sl->wakeups : 0.0,
			       (double)sl->lat_max / 1e6, sl->lat_1ms, sl->lat_10ms,
			       us(tasks[i].sleep_ns), us(tasks[i].burst_ns));
		if (r->gap_ns && loop > (double)r->gap_ns / 4)
			printf("# warning: task %s reads the clock every %.0f ns,"
			       " too slow for a %.0f us gap\n", tasks[i].name,
			       loop, gap_us);
	}
	for (int i = 0; i < ntasks; i++)
		for (int j = i + 1; j < ntasks; j++) {
			int64_t mr = raw->run[i] < raw->run[j] ? raw->run[i] : raw->run[j];
			int64_t ms = sv->run[i] < sv->run[j] ? sv->run[i] : sv->run[j];
			int64_t ur = raw->run[i] + raw->run[j] - raw->ov[i][j];
			int64_t us_ = sv->run[i] + sv->run[j] - sv->ov[i][j];

			printf("# pair %s,%s: ran at once %.3f s = %.3f%% of the"
			       " shorter run [sched %.3f%%], together %.2f%% of the"
			       " time either ran [sched %.2f%%]\n", tasks[i].name,
			       tasks[j].name, (double)raw->ov[i][j] / 1e9,
			       pct(raw->ov[i][j], mr), pct(sv->ov[i][j], ms),
			       pct(raw->ov[i][j], ur), pct(sv->ov[i][j], us_));
			if (tfs.dir) {
				struct view *tv = &v[2];
				int64_t ut = tv->run[i] + tv->run[j] - tv->ov[i][j];

				printf("#   [trace: at once %.3f%% of the shorter,"
				       " together %.2f%% of the time either ran]\n",
				       pct(tv->ov[i][j], min64(tv->run[i], tv->run[j])),
				       pct(tv->ov[i][j], ut));
			}
		}
	for (int g = 0; g < raw->ng; g++) {
		const struct apart *a = &raw->apart[g];

		printf("# group %s (%s): run time %.3f s = %.2f%% of all [sched"
		       " %.2f%%]; some task ran %.3f s, all %d at once %.3f s ="
		       " %.2f%% of that [sched %.2f%%]\n",
		       tasks[raw->rep[g]].group, raw->names[g],
		       (double)raw->grun[g] / 1e9, pct(raw->grun[g], raw->sum),
		       pct(sv->grun[g], sv->sum), (double)raw->gunion[g] / 1e9,
		       raw->members[g], (double)raw->gall[g] / 1e9,
		       pct(raw->gall[g], raw->gunion[g]),
		       pct(sv->gall[g], sv->gunion[g]));
		printf("#   apart (some but not all ran): %zu times, %.3f s,"
		       " p50 %.0f us, p99 %.0f us, max %.0f us; longer than"
		       " %.0f us: %zu, %.3f s = %.3f%% of the union; together"
		       " counting the shorter as followed %.2f%% [sched %.2f%%]",
		       a->n, (double)a->sum / 1e9, us(a->p50), us(a->p99),
		       us(a->max), follow_us, a->nlong,
		       (double)a->sum_long / 1e9, pct(a->sum_long, raw->gunion[g]),
		       follow_pct(raw, g), follow_pct(sv, g));
		if (tfs.dir)
			printf(" [trace %.2f%%, %zu longer]", follow_pct(&v[2], g),
			       v[2].apart[g].nlong);
		printf("\n");
	}
	for (int g = 0; g < raw->ng; g++)
		for (int h = g + 1; h < raw->ng; h++)
			printf("# groups %s,%s: ran at once %.3f s = %.3f%% of the"
			       " shorter [sched %.3f%%]\n", tasks[raw->rep[g]].group,
			       tasks[raw->rep[h]].group,
			       (double)raw->gov[g][h] / 1e9,
			       pct(raw->gov[g][h], min64(raw->gunion[g], raw->gunion[h])),
			       pct(sv->gov[g][h], min64(sv->gunion[g], sv->gunion[h])));

	/* Machine-readable summary: raw keys, then the same with sched_. */
	printf("run summary window_us=%.0f gap_us=%.0f follow_us=%.0f tasks=%d"
	       " groups=%d total_run_us=%.0f sched_total_run_us=%.0f",
	       us(window), gap_us, follow_us, ntasks, raw->ng, us(raw->sum),
	       us(sv->sum));
	if (tfs.dir)
		printf(" trace_total_run_us=%.0f trace_events=%ld trace_lost=%"
		       PRIu64, us(v[2].sum), trace_events, trace_lost);
	printf(" setup_us=%.0f start_mono_ns=%" PRId64 " ok=%d\n",
	       setup_ns / 1e3, sh->start_ns, status == 0);
	for (int i = 0; i < ntasks; i++) {
		struct slot *sl = &sh->slot[i];
		struct rec *r = &sl->rec;

		printf("task %s cpu=%d group=%s run_us=%.0f share_pct=%.3f"
		       " run_pct_of_window=%.3f segments=%zu max_gap_us=%.0f"
		       " loop_ns=%.0f migrations=%d overflow=%" PRIu64
		       " finished=%d gaps_100us=%" PRIu64 " gaps_1ms=%" PRIu64
		       " gaps_10ms=%" PRIu64 " gaps_long=%" PRIu64
		       " gap_us_100us=%.0f gap_us_1ms=%.0f gap_us_10ms=%.0f"
		       " gap_us_long=%.0f quiet_gaps=%" PRIu64 " quiet_gap_us=%.0f"
		       " sched_run_us=%.0f sched_share_pct=%.3f"
		       " sched_run_pct_of_window=%.3f sched_segments=%zu"
		       " away_us=%.0f away_segments=%" PRIu64
		       " sched_away_us=%.0f",
		       tasks[i].name, tasks[i].cpu, tasks[i].group,
		       us(raw->run[i]), pct(raw->run[i], raw->sum),
		       pct(raw->run[i], window), raw->list[i].n, us(r->max_gap),
		       r->loops ? (double)raw->run[i] / (double)r->loops : 0.0,
		       sl->migrations, r->overflow + sl->srec.overflow, sl->done,
		       r->gap_n[0], r->gap_n[1], r->gap_n[2], r->gap_n[3],
		       us(r->gap_t[0]), us(r->gap_t[1]), us(r->gap_t[2]),
		       us(r->gap_t[3]), sl->quiet_gaps, us(sl->quiet_ns),
		       us(sv->run[i]), pct(sv->run[i], sv->sum),
		       pct(sv->run[i], window), sv->list[i].n,
		       us(r->away_ns), r->away_n, us(sl->srec.away_ns));
		if (tasks[i].sleep_ns)
			printf(" wakeups=%" PRIu64 " wakeups_per_s=%.1f"
			       " wake_lat_avg_us=%.1f wake_lat_max_us=%.0f"
			       " wake_lat_1ms=%" PRIu64 " wake_lat_10ms=%" PRIu64,
			       sl->wakeups, (double)sl->wakeups * 1e9 / (double)window,
			       sl->wakeups ? us(sl->lat_sum) / (double)sl->wakeups : 0.0,
			       us(sl->lat_max), sl->lat_1ms, sl->lat_10ms);
		if (tfs.dir)
			printf(" trace_run_us=%.0f trace_share_pct=%.3f"
			       " trace_run_pct_of_window=%.3f trace_segments=%zu",
			       us(v[2].run[i]), pct(v[2].run[i], v[2].sum),
			       pct(v[2].run[i], window), v[2].list[i].n);
		printf("\n");
	}
	for (int i = 0; i < ntasks; i++)
		for (int j = i + 1; j < ntasks; j++) {
			printf("pair %s,%s", tasks[i].name, tasks[j].name);
			for (int k = 0; k < nv; k++) {
				struct view *w = &v[k];
				int64_t ov = w->ov[i][j];
				int64_t un = w->run[i] + w->run[j] - ov;
				const char *p = vkey[k];

				printf(" %soverlap_us=%.0f %soverlap_pct_of_a=%.4f"
				       " %soverlap_pct_of_b=%.4f %soverlap_pct_of_min=%.4f"
				       " %sunion_us=%.0f %scorun_pct_of_union=%.4f",
				       p, us(ov), p, pct(ov, w->run[i]), p,
				       pct(ov, w->run[j]), p,
				       pct(ov, min64(w->run[i], w->run[j])), p,
				       us(un), p, pct(ov, un));
			}
			printf("\n");
		}
	for (int g = 0; g < raw->ng; g++) {
		printf("group %s tasks=%s", tasks[raw->rep[g]].group, raw->names[g]);
		for (int k = 0; k < nv; k++) {
			struct view *w = &v[k];
			const struct apart *a = &w->apart[g];
			const char *p = vkey[k];

			printf(" %srun_us=%.0f %sshare_pct=%.3f %sunion_us=%.0f"
			       " %sall_us=%.0f %sall_pct_of_union=%.4f",
			       p, us(w->grun[g]), p, pct(w->grun[g], w->sum),
			       p, us(w->gunion[g]), p, us(w->gall[g]), p,
			       pct(w->gall[g], w->gunion[g]));
			printf(" %sapart_n=%zu %sapart_us=%.0f %sapart_p50_us=%.0f"
			       " %sapart_p99_us=%.0f %sapart_max_us=%.0f"
			       " %sapart_long_n=%zu %sapart_long_us=%.0f"
			       " %sapart_long_pct_of_union=%.4f"
			       " %scorun_follow_pct=%.4f",
			       p, a->n, p, us(a->sum), p, us(a->p50), p, us(a->p99),
			       p, us(a->max), p, a->nlong, p, us(a->sum_long),
			       p, pct(a->sum_long, w->gunion[g]),
			       p, follow_pct(w, g));
		}
		printf("\n");
	}
	for (int g = 0; g < raw->ng; g++)
		for (int h = g + 1; h < raw->ng; h++) {
			printf("gpair %s,%s", tasks[raw->rep[g]].group,
			       tasks[raw->rep[h]].group);
			for (int k = 0; k < nv; k++) {
				struct view *w = &v[k];
				const char *p = vkey[k];
				int64_t ov = w->gov[g][h];

				printf(" %soverlap_us=%.0f %soverlap_pct_of_min=%.4f"
				       " %soverlap_pct_of_a=%.4f %soverlap_pct_of_b=%.4f"
				       " %spairsum_us=%.0f %spairsum_pct_of_min=%.4f",
				       p, us(ov), p,
				       pct(ov, min64(w->gunion[g], w->gunion[h])),
				       p, pct(ov, w->gunion[g]), p,
				       pct(ov, w->gunion[h]), p, us(w->gpairsum[g][h]),
				       p, pct(w->gpairsum[g][h],
					      min64(w->grun[g], w->grun[h])));
			}
			printf("\n");
		}
	for (int i = 0; i < ntasks; i++) {
		struct slot *sl = &sh->slot[i];
		uint64_t of = sl->rec.overflow + sl->srec.overflow;

		if (of)
			fprintf(stderr, "corun: task %s: segment buffer overflow (%"
				PRIu64 " gaps counted as running); raise"
				" --max-segments\n", tasks[i].name, of);
		if (!sl->done)
			fprintf(stderr, "corun: task %s did not finish the window"
				" (starved?) and was killed\n", tasks[i].name);
		if (sl->migrations)
			fprintf(stderr, "corun: task %s ran on cpu %d, not %d\n",
				tasks[i].name, sl->bad_cpu, tasks[i].cpu);
	}
	for (int k = 0; k < nv; k++)
		view_free(&v[k], ntasks);
	return status;
}
