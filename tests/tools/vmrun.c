// SPDX-License-Identifier: GPL-2.0
/*
 * vmrun - what a VM's vCPUs really executed, from the VM's own clock.
 *
 * tidrun judges a VM's vCPU threads from the scheduler's sched_switch
 * trace; under TCG that trace records a sibling's switch late.  Here the
 * VM itself says when it ran: its payload, vmspin.elf, loops on every
 * vCPU reading the TSC and records each gap of 0x10000 ticks or more (the
 * vCPU did not execute) as (before, after) in a ring in guest RAM, and
 * publishes its latest read as "now" (layout: vmspin.s).  The VM's RAM
 * is a file (QEMU's memory-backend-file,share=on), which vmrun maps.
 *
 * One clock.  Under TCG the nested guest's TSC is QEMU's cpu_get_ticks():
 * this guest's TSC plus an offset fixed at the VM's start.  vmrun reads
 * its own TSC around each read of a vCPU's "now" and its seqlock: a value
 * v seen with seq s was read by the vCPU after it published seq s - 2,
 * i.e. after an earlier read of ours that still saw less than s - 2
 * began (our TSC ta), and before this read ended (tb), so the offset is
 * in [v - tb, v - ta].  Every such bracket (for --calib-ms per vCPU
 * before the window, in short bursts four times a second during it, and
 * after it) holds the one offset: their intersection is the offset and
 * its width the error; an empty intersection (the offset moved) is an
 * error.  Our TSC maps to CLOCK_MONOTONIC (the clock of corun's
 * recorders and of the "mono" trace clock) linearly, from the narrowest
 * of many (TSC, clock, TSC) triples before the window and the narrowest
 * after it; every other triple checks the map.  The error bound printed
 * is the offset's half width plus the wider anchor triple's half width
 * plus the largest distance by which a triple missed the map.
 *
 * X: a spinner of another group, forked here like corun's tasks (joins
 * its cgroup, pinned to its CPU) and recorded like them: CLOCK_MONOTONIC
 * in a tight loop, a gap longer than --gap-us ends a running segment.
 * The vCPUs' gaps shorter than --gap-us count as running too, so both
 * views use one threshold.
 *
 * Output: "# " lines for people, records "KIND ID key=value ..." as
 * tidrun's (a gang of 2-8 vCPUs, letters in APIC-id order):
 *   vcpu A apic=.. run_us=.. run_pct_of_window=.. gaps=.. max_gap_us=..
 *        x_overlap_us=.. x_overlap_n=.. x_overlap_max_us=.. records=..
 *        loops=.. loop_ns=.. (records and loops: live only)
 *   x X run_us=.. run_pct_of_window=.. segments=.. overflow=..
 *   pair A,B both_us=.. union_us=.. corun_pct_of_union=.. apart_n=..
 *        apart_us=.. apart_max_us=.. apart_long_us=.. corun_follow_pct=..
 *   gpair AB,X overlap_us=.. overlap_pct_of_min=.. overlap_n=..
 *        overlap_max_us=.. overlap_long_us=.. overlap_long_pct_of_min=..
 *   calib summary tsc_mhz=.. offset_ticks=.. offset_width_ticks=..
 *        offset_before_ticks=LO,HI offset_after_ticks=LO,HI brackets=..
 *        offset_ok=0|1 offset_err_us=.. anchor_err_us=.. checks=..
 *        check_misses=.. check_max_dev_us=.. err_us=.. payload_gap_us=..
 *   run summary window_us=.. gap_us=.. follow_us=.. vcpus=.. ok=0|1
 * Exit status: 0 measured, 1 usage or set-up error, 2 measured but
 * suspect (a ring or X's buffer overflowed, a record went backwards, a
 * vCPU was not seen running after the window, the offset moved, the
 * --exec command failed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

/* vmspin.s's layout. */
#define HDR		0x200000UL
#define HDR_SZ		64
#define RING		0x400000UL
#define RING_SZ		0x200000UL
#define NREC		131072U
#define MAXID		8
#define MAGIC		0x50534D56U
#define PAYLOAD_GAP	0x10000		/* ticks: the payload's own threshold */
#define MEM_MIN		(RING + MAXID * RING_SZ)

struct hdr {
	uint32_t magic, id, seq, n;
	uint64_t now, start;
	uint32_t ring;
};

static const char LETTERS[] = "ABCDEFGH";

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Until CLOCK_MONOTONIC reads @t: asleep, then spinning the last 2 ms. */
static void wait_until(int64_t t)
{
	while (mono() < t - 2000000)
		usleep(1000);
	while (mono() < t)
		;
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		perror("vmrun: malloc");
		exit(1);
	}
	return p;
}

/* ---------------------------------------------------------------- */
/* Intervals of time in ns, [s, e).                                  */

struct seg {
	int64_t s, e;
};

struct segs {
	struct seg *v;
	size_t n, cap;
};

static void segs_push(struct segs *l, int64_t s, int64_t e)
{
	if (e <= s)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v) {
			perror("vmrun: realloc");
			exit(1);
		}
	}
	l->v[l->n].s = s;
	l->v[l->n].e = e;
	l->n++;
}

static int cmp_seg(const void *pa, const void *pb)
{
	const struct seg *a = pa, *b = pb;

	return (a->s > b->s) - (a->s < b->s);
}

/*
 * A vCPU's running segments in the window [0, win) from its gaps (the
 * vCPU did not execute from s to e): gaps of gap_ns or less count as
 * running.  Returns the number of gaps that count; *maxgap the longest
 * (clipped to the window).
 */
static size_t gaps_to_run(struct segs *gaps, int64_t win, int64_t gap_ns,
			  struct segs *run, int64_t *maxgap)
{
	int64_t cur = 0;
	size_t n = 0;

	qsort(gaps->v, gaps->n, sizeof(*gaps->v), cmp_seg);
	*maxgap = 0;
	for (size_t i = 0; i < gaps->n; i++) {
		struct seg g = gaps->v[i];

		if (g.e - g.s <= gap_ns || g.e <= 0 || g.s >= win)
			continue;
		n++;
		if (g.s < 0)
			g.s = 0;
		if (g.e > win)
			g.e = win;
		if (g.e - g.s > *maxgap)
			*maxgap = g.e - g.s;
		segs_push(run, cur, g.s);
		if (g.e > cur)
			cur = g.e;
	}
	segs_push(run, cur, win);
	return n;
}

/* Maximal intervals during which a condition holds, summarised. */
struct win {
	int64_t cur, sum, max, sum_long;
	size_t n;
};

static void win_step(struct win *w, int on, int64_t dt, int64_t follow_ns)
{
	if (on) {
		w->cur += dt;
		return;
	}
	if (!w->cur)
		return;
	w->n++;
	w->sum += w->cur;
	if (w->cur > w->max)
		w->max = w->cur;
	if (w->cur > follow_ns)
		w->sum_long += w->cur;
	w->cur = 0;
}

struct ev {
	int64_t t;
	int src, d;
};

static int cmp_ev(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;

	return (a->t > b->t) - (a->t < b->t);
}

struct result {
	int64_t run[MAXID], xrun, both, uni, ovl;
	struct win apart, overlap, xo[MAXID];
};

/*
 * Sweep the vCPUs' and X's running segments (each list disjoint) in time
 * order; between two instants nothing changes.  X is source nv (xs NULL:
 * no X).
 */
static void sweep(struct segs *run, int nv, const struct segs *xs,
		  int64_t follow_ns, struct result *r)
{
	size_t ne = 0, cap = 0;
	struct ev *e;
	int on[MAXID + 1] = { 0 };

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < nv; i++)
		cap += 2 * run[i].n;
	if (xs)
		cap += 2 * xs->n;
	e = xmalloc(cap * sizeof(*e));
	for (int i = 0; i <= nv; i++) {
		const struct segs *l = i < nv ? &run[i] : xs;

		if (!l)
			continue;
		for (size_t k = 0; k < l->n; k++) {
			e[ne++] = (struct ev){ l->v[k].s, i, 1 };
			e[ne++] = (struct ev){ l->v[k].e, i, -1 };
		}
	}
	qsort(e, ne, sizeof(*e), cmp_ev);
	for (size_t k = 0; k < ne;) {
		int64_t t = e[k].t, dt;
		int n = 0;

		/* All changes at one instant, then the span up to the next. */
		while (k < ne && e[k].t == t) {
			on[e[k].src] += e[k].d;
			k++;
		}
		dt = k < ne ? e[k].t - t : 0;
		for (int i = 0; i < nv; i++) {
			if (on[i])
				r->run[i] += dt;
			n += on[i] > 0;
			win_step(&r->xo[i], on[i] && on[nv], dt, follow_ns);
		}
		if (on[nv])
			r->xrun += dt;
		if (n == nv)
			r->both += dt;
		if (n)
			r->uni += dt;
		if (n && on[nv])
			r->ovl += dt;
		win_step(&r->apart, n && n < nv, dt, follow_ns);
		win_step(&r->overlap, n && on[nv], dt, follow_ns);
	}
	for (int i = 0; i < nv; i++)	/* close the windows still open */
		win_step(&r->xo[i], 0, 0, follow_ns);
	win_step(&r->apart, 0, 0, follow_ns);
	win_step(&r->overlap, 0, 0, follow_ns);
	free(e);
}

static double pct(int64_t a, int64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static double us(int64_t ns)
{
	return (double)ns / 1000.0;
}

/* The measured intervals, relative to the window's start. */
struct meas {
	int nv;
	int apic[MAXID];
	int64_t win;
	struct segs gaps[MAXID];
	int has_x;
	struct segs xseg;
	int has_loops;			/* live: loops and records in the window */
	uint64_t loops[MAXID], records[MAXID];
};

static void report(struct meas *m, int64_t gap_ns, int64_t follow_ns,
		   const char *xextra)
{
	struct segs run[MAXID] = { 0 };
	int64_t maxgap[MAXID];
	size_t ngaps[MAXID];
	struct result r;
	char label[2 * MAXID], glabel[MAXID + 1];
	int64_t mn;

	for (int i = 0; i < m->nv; i++)
		ngaps[i] = gaps_to_run(&m->gaps[i], m->win, gap_ns, &run[i],
				       &maxgap[i]);
	qsort(m->xseg.v, m->xseg.n, sizeof(*m->xseg.v), cmp_seg);
	sweep(run, m->nv, m->has_x ? &m->xseg : NULL, follow_ns, &r);
	for (int i = 0; i < m->nv; i++) {
		printf("vcpu %c apic=%d run_us=%.0f run_pct_of_window=%.2f gaps=%zu max_gap_us=%.0f",
		       LETTERS[i], m->apic[i], us(r.run[i]), pct(r.run[i], m->win),
		       ngaps[i], us(maxgap[i]));
		if (m->has_x)
			printf(" x_overlap_us=%.0f x_overlap_n=%zu x_overlap_max_us=%.0f",
			       us(r.xo[i].sum), r.xo[i].n, us(r.xo[i].max));
		if (m->has_loops)
			printf(" records=%" PRIu64 " loops=%" PRIu64 " loop_ns=%.0f", m->records[i],
			       m->loops[i], m->loops[i] ? (double)r.run[i] / (double)m->loops[i] : 0.0);
		printf("\n");
		label[2 * i] = LETTERS[i];
		label[2 * i + 1] = i + 1 < m->nv ? ',' : 0;
		glabel[i] = LETTERS[i];
	}
	glabel[m->nv] = 0;
	if (m->has_x)
		printf("x X run_us=%.0f run_pct_of_window=%.2f segments=%zu%s\n",
		       us(r.xrun), pct(r.xrun, m->win), m->xseg.n, xextra);
	printf("pair %s both_us=%.0f union_us=%.0f corun_pct_of_union=%.2f"
	       " apart_n=%zu apart_us=%.0f apart_max_us=%.0f apart_long_us=%.0f corun_follow_pct=%.2f\n",
	       label, us(r.both), us(r.uni), pct(r.both, r.uni), r.apart.n,
	       us(r.uni - r.both), us(r.apart.max), us(r.apart.sum_long),
	       pct(r.uni - r.apart.sum_long, r.uni));
	if (m->has_x) {
		mn = r.uni < r.xrun ? r.uni : r.xrun;
		printf("gpair %s,X overlap_us=%.0f overlap_pct_of_min=%.3f overlap_n=%zu"
		       " overlap_max_us=%.0f overlap_long_us=%.0f overlap_long_pct_of_min=%.3f\n",
		       glabel, us(r.ovl), pct(r.ovl, mn), r.overlap.n,
		       us(r.overlap.max), us(r.overlap.sum_long),
		       pct(r.overlap.sum_long, mn));
	}
	for (int i = 0; i < m->nv; i++)
		free(run[i].v);
}

static void dump(const char *path, const struct meas *m)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "vmrun: %s: %s\n", path, strerror(errno));
		return;
	}
	fprintf(f, "# vmrun dump: ns relative to the window's start\nwindow %" PRId64 "\n", m->win);
	for (int i = 0; i < m->nv; i++) {
		fprintf(f, "vcpu %c %d\n", LETTERS[i], m->apic[i]);
		for (size_t k = 0; k < m->gaps[i].n; k++)
			fprintf(f, "gap %c %" PRId64 " %" PRId64 "\n", LETTERS[i],
				m->gaps[i].v[k].s, m->gaps[i].v[k].e);
	}
	if (m->has_x)
		fprintf(f, "x X\n");
	for (size_t k = 0; k < m->xseg.n; k++)
		fprintf(f, "xseg %" PRId64 " %" PRId64 "\n", m->xseg.v[k].s,
			m->xseg.v[k].e);
	fclose(f);
}

/* --analyze FILE: a dump (or a hand-written one) instead of a VM. */
static int analyze(const char *path, int64_t gap_ns, int64_t follow_ns)
{
	FILE *f = fopen(path, "r");
	struct meas m = { 0 };
	char line[256], c;
	int64_t a, b;
	int id, ln = 0, haswin = 0;

	if (!f) {
		fprintf(stderr, "vmrun: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		ln++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "window %" SCNd64, &a) == 1 && a > 0) {
			m.win = a;
			haswin = 1;
		} else if (sscanf(line, "vcpu %c %d", &c, &id) == 2 &&
			   m.nv < MAXID && c == LETTERS[m.nv]) {
			m.apic[m.nv++] = id;
		} else if (sscanf(line, "gap %c %" SCNd64 " %" SCNd64, &c, &a, &b) == 3 &&
			   strchr(LETTERS, c) && c && c - 'A' < m.nv && a <= b) {
			segs_push(&m.gaps[c - 'A'], a, b);
		} else if (!strcmp(line, "x X\n")) {
			m.has_x = 1;
		} else if (sscanf(line, "xseg %" SCNd64 " %" SCNd64, &a, &b) == 2 &&
			   m.has_x && a <= b) {
			segs_push(&m.xseg, a, b);
		} else {
			fprintf(stderr, "vmrun: %s:%d: cannot parse '%.*s'\n", path,
				ln, (int)strcspn(line, "\n"), line);
			fclose(f);
			return 1;
		}
	}
	fclose(f);
	if (!haswin || m.nv < 2) {
		fprintf(stderr, "vmrun: %s: want a window and 2 to %d vCPUs\n",
			path, MAXID);
		return 1;
	}
	report(&m, gap_ns, follow_ns, "");
	printf("run summary window_us=%.0f gap_us=%.0f follow_us=%.0f vcpus=%d ok=1\n",
	       us(m.win), us(gap_ns), us(follow_ns), m.nv);
	return 0;
}

/* ---------------------------------------------------------------- */
/* The VM's memory and the calibration.                              */

static const uint8_t *mem;

static volatile struct hdr *hdr_of(int apic)
{
	return (volatile struct hdr *)(mem + HDR + (size_t)apic * HDR_SZ);
}

static uint32_t ld32(volatile uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static uint64_t ld64(volatile uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Read a vCPU's "now" consistently; 0 if it was being written. */
static uint64_t read_now(volatile struct hdr *h, uint32_t *seq)
{
	uint32_t s1 = ld32(&h->seq);
	uint64_t v = ld64(&h->now);
	uint32_t s2 = ld32(&h->seq);

	*seq = s2;
	return s1 == s2 && !(s1 & 1) ? v : 0;
}

/*
 * The vCPUs' TSC minus ours, bracketed: a vCPU's value v was read by it
 * while our TSC was in [ta, tb], so the offset lies in [v - tb, v - ta].
 * QEMU keeps it constant, so every bracket holds the same offset and
 * their intersection [lo, hi] narrows it down (empty: it moved).
 */
struct offs {
	size_t n;
	int64_t lo, hi;
};

static void offs_init(struct offs *o)
{
	o->n = 0;
	o->lo = INT64_MIN;
	o->hi = INT64_MAX;
}

static void offs_add(struct offs *o, int64_t lo, int64_t hi)
{
	o->n++;
	if (lo > o->lo)
		o->lo = lo;
	if (hi < o->hi)
		o->hi = hi;
}

static void offs_merge(struct offs *o, const struct offs *p)
{
	if (!p->n)
		return;
	offs_add(o, p->lo, p->hi);
	o->n += p->n - 1;
}

#define HIST 1024

/*
 * Bracket a vCPU's "now" for dur_ns: each of our reads notes our TSC
 * when it began and the last seq it saw.  A consistent read with seq s
 * ended at tb; the vCPU read its TSC after it published s - 2, so after
 * our latest read that still saw a seq below s - 2 began (ta).
 */
static void calibrate(volatile struct hdr *h, int64_t dur_ns, struct offs *o)
{
	static struct { uint64_t ta; uint32_t seq; } hist[HIST];
	size_t nh = 0;
	int64_t end = mono() + dur_ns;

	for (;;) {
		uint64_t ta = __rdtsc();
		uint32_t s1 = ld32(&h->seq);
		uint64_t v = ld64(&h->now);
		uint32_t s2 = ld32(&h->seq);
		uint64_t tb = __rdtsc();

		if (s1 == s2 && !(s1 & 1)) {
			for (size_t k = 1; k <= nh && k <= HIST; k++) {
				size_t j = (nh - k) % HIST;

				if ((int32_t)(hist[j].seq - (s1 - 2)) < 0) {
					offs_add(o, (int64_t)(v - tb), (int64_t)(v - hist[j].ta));
					break;
				}
			}
		}
		hist[nh % HIST].ta = ta;
		hist[nh % HIST].seq = s2;
		nh++;
		if (!(nh & 63) && mono() >= end)
			break;
	}
}

/*
 * Our TSC against CLOCK_MONOTONIC: the clock read c happened while our
 * TSC was in [ta, tb].
 */
struct triple {
	uint64_t ta, tb;
	int64_t c;
};

struct triples {
	struct triple *v;
	size_t n, cap;
};

static void clock_triples(int64_t dur_ns, struct triples *l)
{
	int64_t end = mono() + dur_ns;

	for (;;) {
		struct triple t;

		t.ta = __rdtsc();
		t.c = mono();
		t.tb = __rdtsc();
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 4096;
			l->v = realloc(l->v, l->cap * sizeof(*l->v));
			if (!l->v) {
				perror("vmrun: realloc");
				exit(1);
			}
		}
		l->v[l->n++] = t;
		if (t.c >= end)
			break;
	}
}

static const struct triple *narrowest(const struct triples *l)
{
	const struct triple *best = NULL;

	for (size_t i = 0; i < l->n; i++)
		if (!best || l->v[i].tb - l->v[i].ta < best->tb - best->ta)
			best = &l->v[i];
	return best;
}

/* The map of a vCPU's TSC value: mono = m0 + (v - off - t0) * k. */
struct tmap {
	uint64_t t0;
	int64_t m0, off;
	double k;
};

static int64_t tmap_ours(const struct tmap *t, uint64_t ours)
{
	return t->m0 + (int64_t)llround((double)(int64_t)(ours - t->t0) * t->k);
}

static int64_t tmap(const struct tmap *t, uint64_t v)
{
	return tmap_ours(t, v - (uint64_t)t->off);
}

/* ---------------------------------------------------------------- */
/* X: a clock-loop spinner as corun's.                               */

struct xshared {
	atomic_int ready, go, failed, done;
	int64_t start, end, gap_ns;
	size_t n, cap;
	int overflow, migrations;
	char err[256];
	struct seg segs[];
};

static void x_fail(struct xshared *x, const char *fmt, const char *arg)
{
	snprintf(x->err, sizeof(x->err), fmt, arg, strerror(errno));
	atomic_store(&x->failed, 1);
	_exit(1);
}

static void x_child(struct xshared *x, int cpu, const char *cgroup)
{
	cpu_set_t set;
	int64_t last = 0, cs = 0, ce = 0;
	int inseg = 0;

	prctl(PR_SET_NAME, "vmrun-x");
	if (cgroup) {
		char pid[32];
		int fd = open(cgroup, O_WRONLY), len;

		if (fd < 0)
			x_fail(x, "%s: %s", cgroup);
		len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (write(fd, pid, len) != len)
			x_fail(x, "writing its pid to %s: %s", cgroup);
		close(fd);
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		x_fail(x, "sched_setaffinity%s: %s", "");
	if (sched_getcpu() != cpu) {
		errno = EINVAL;
		x_fail(x, "pinned, but not running on its CPU%s: %s", "");
	}
	atomic_store(&x->ready, 1);
	while (!atomic_load(&x->go)) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	for (;;) {
		int64_t t = mono();
		int near = last && t - last <= x->gap_ns;

		if (t >= x->end) {
			if (inseg && near)
				ce = x->end;
			break;
		}
		if (t >= x->start) {
			if (inseg && near) {
				ce = t;
			} else {
				if (inseg) {
					if (x->n < x->cap)
						x->segs[x->n++] = (struct seg){ cs, ce };
					else
						x->overflow = 1;
				}
				inseg = 1;
				cs = last && last < x->start && near ? x->start : t;
				ce = t;
				if (sched_getcpu() != cpu)
					x->migrations++;
			}
		}
		last = t;
	}
	if (inseg) {
		if (x->n < x->cap)
			x->segs[x->n++] = (struct seg){ cs, ce };
		else
			x->overflow = 1;
	}
	atomic_store(&x->done, 1);
	_exit(0);
}

/* ---------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: vmrun --mem FILE --vcpus N [options]\n"
"       vmrun --analyze DUMP [--gap-us US] [--follow-us US]\n"
"  --mem FILE          the VM's RAM (QEMU memory-backend-file,share=on)\n"
"                      running tests/tools/vmspin.elf\n"
"  --vcpus N           the VM's vCPUs (2 to 8, APIC ids 0-7): all must be\n"
"                      recording; named A, B, ... in APIC-id order\n"
"  --x CPU[:CGROUP]    fork X, a clock-loop spinner pinned to CPU, its pid\n"
"                      written to CGROUP/cgroup.procs (relative to\n"
"                      --cgroup-root, default /sys/fs/cgroup)\n"
"  --duration SEC      measurement window (default 10)\n"
"  --warmup SEC        X spins this long before the window (default 1)\n"
"  --gap-us US         a gap longer than this is 'did not run', for the\n"
"                      vCPUs and X alike (default 50; at least the\n"
"                      payload's 0x10000 TSC ticks)\n"
"  --follow-us US      apart and overlap windows longer than this are\n"
"                      'long' (default 1000), as tidrun's\n"
"  --cpu CPU           pin vmrun itself (the calibration reads) to CPU\n"
"  --calib-ms MS       calibration reads per vCPU before and after the\n"
"                      window (default 40), and bursts of MS/8 during it;\n"
"                      clock triples for MS before and after, MS/8 a burst\n"
"  --exec CMD          run 'sh -c CMD' when the window opens (VMRUN_X_PID\n"
"                      in its environment), wait for it before reporting\n"
"  --dump FILE         write the intervals (--analyze reads them back)\n"
"  --analyze DUMP      report on a dump instead of a VM\n"
"  --help\n");
}

static int parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo) || !(v <= hi)) {
		fprintf(stderr, "vmrun: bad number '%s' (want %g to %g)\n", s, lo, hi);
		return 1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mem", required_argument, NULL, 'm' },
		{ "vcpus", required_argument, NULL, 'n' },
		{ "x", required_argument, NULL, 'x' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "follow-us", required_argument, NULL, 'F' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "calib-ms", required_argument, NULL, 'C' },
		{ "cgroup-root", required_argument, NULL, 'r' },
		{ "exec", required_argument, NULL, 'e' },
		{ "dump", required_argument, NULL, 'D' },
		{ "analyze", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *memfile = NULL, *xarg = NULL, *cgroot = "/sys/fs/cgroup";
	const char *cmd = NULL, *dumpfile = NULL, *anafile = NULL;
	double nv_d = 0, duration = 10, warmup = 1, gap_us = 50, follow_us = 1000;
	double cpu_d = -1, calib_ms = 40;
	int c, status = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': memfile = optarg; break;
		case 'x': xarg = optarg; break;
		case 'r': cgroot = optarg; break;
		case 'e': cmd = optarg; break;
		case 'D': dumpfile = optarg; break;
		case 'A': anafile = optarg; break;
		case 'n': if (parse_num(optarg, 2, MAXID, &nv_d)) return 1; break;
		case 'd': if (parse_num(optarg, 0.01, 3600, &duration)) return 1; break;
		case 'w': if (parse_num(optarg, 0, 60, &warmup)) return 1; break;
		case 'g': if (parse_num(optarg, 1, 1e6, &gap_us)) return 1; break;
		case 'F': if (parse_num(optarg, 0, 1e7, &follow_us)) return 1; break;
		case 'c': if (parse_num(optarg, 0, CPU_SETSIZE - 1, &cpu_d)) return 1; break;
		case 'C': if (parse_num(optarg, 1, 10000, &calib_ms)) return 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vmrun: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 1;
	}
	int64_t gap_ns = (int64_t)(gap_us * 1000), follow_ns = (int64_t)(follow_us * 1000);

	if (anafile)
		return analyze(anafile, gap_ns, follow_ns);
	if (!memfile || !nv_d) {
		fprintf(stderr, "vmrun: --mem and --vcpus are needed\n");
		usage(stderr);
		return 1;
	}
	int nv = (int)nv_d, xcpu = -1;
	char xcg[1024] = "";

	if (nv != nv_d) {
		fprintf(stderr, "vmrun: --vcpus wants a whole number\n");
		return 1;
	}
	if (xarg) {
		char *end;
		long l = strtol(xarg, &end, 10);

		if (end == xarg || (*end && *end != ':') || l < 0 || l >= CPU_SETSIZE) {
			fprintf(stderr, "vmrun: bad --x '%s' (want CPU[:CGROUP])\n", xarg);
			return 1;
		}
		xcpu = (int)l;
		if (*end == ':' && end[1])
			snprintf(xcg, sizeof(xcg), "%s/%s/cgroup.procs", cgroot, end + 1);
	}
	if (cpu_d >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)cpu_d, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "vmrun: --cpu %d: %s\n", (int)cpu_d, strerror(errno));
			return 1;
		}
	}

	/* The VM's RAM. */
	int fd = open(memfile, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "vmrun: %s: %s\n", memfile, strerror(errno));
		return 1;
	}
	if ((uint64_t)st.st_size < MEM_MIN) {
		fprintf(stderr, "vmrun: %s: %lld bytes, want at least %lu (the VM's -m must cover vmspin's rings: 32M)\n",
			memfile, (long long)st.st_size, MEM_MIN);
		return 1;
	}
	mem = mmap(NULL, MEM_MIN, PROT_READ, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "vmrun: mmap %s: %s\n", memfile, strerror(errno));
		return 1;
	}
	close(fd);

	/* The vCPUs: magic set and seq moving, within 10 s. */
	struct meas m = { 0 };
	volatile struct hdr *h[MAXID];
	int64_t deadline = mono() + 10000000000LL;
	uint32_t seq0[MAXID], sq;

	for (;;) {
		m.nv = 0;
		for (int id = 0; id < MAXID; id++)
			if (ld32(&hdr_of(id)->magic) == MAGIC && m.nv < MAXID) {
				seq0[m.nv] = ld32(&hdr_of(id)->seq);
				m.apic[m.nv++] = id;
			}
		if (m.nv >= nv || mono() > deadline)
			break;
		usleep(10000);
	}
	if (m.nv != nv) {
		fprintf(stderr, "vmrun: %s: %d vCPUs recording (APIC ids", memfile, m.nv);
		for (int i = 0; i < m.nv; i++)
			fprintf(stderr, " %d", m.apic[i]);
		fprintf(stderr, "), want %d: is vmspin.elf running with -smp %d in that RAM?\n", nv, nv);
		return 1;
	}
	for (int i = 0; i < nv; i++)
		h[i] = hdr_of(m.apic[i]);
	for (int i = 0; i < nv; i++) {
		while (ld32(&h[i]->seq) == seq0[i] && mono() < deadline)
			usleep(1000);
		if (ld32(&h[i]->seq) == seq0[i]) {
			fprintf(stderr, "vmrun: vCPU %c (APIC id %d) is not running: seq stays %u\n",
				LETTERS[i], m.apic[i], seq0[i]);
			return 1;
		}
	}

	/* X, ready and waiting. */
	struct xshared *x = NULL;
	pid_t xpid = 0;

	if (xcpu >= 0) {
		size_t cap = 1 << 20;

		x = mmap(NULL, sizeof(*x) + cap * sizeof(struct seg), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (x == MAP_FAILED) {
			perror("vmrun: mmap");
			return 1;
		}
		memset(x->segs, 0, cap * sizeof(struct seg));	/* no faults while recording */
		x->cap = cap;
		x->gap_ns = gap_ns;
		fflush(stdout);
		xpid = fork();
		if (xpid < 0) {
			perror("vmrun: fork");
			return 1;
		}
		if (!xpid)
			x_child(x, xcpu, xcg[0] ? xcg : NULL);
		while (!atomic_load(&x->ready) && !atomic_load(&x->failed))
			usleep(1000);
		if (atomic_load(&x->failed)) {
			waitpid(xpid, NULL, 0);
			fprintf(stderr, "vmrun: X: %s\n", x->err);
			return 1;
		}
	}

	/* Calibration before the window (X waits). */
	struct offs o1, o2, oc, oall;
	struct triples t1 = { 0 }, t2 = { 0 }, tc = { 0 };
	int64_t per = (int64_t)(calib_ms * 1e6);
	uint32_t seqS[MAXID], seqE[MAXID];

	offs_init(&o1);
	offs_init(&o2);
	offs_init(&oc);
	for (int i = 0; i < nv; i++)
		calibrate(h[i], per, &o1);
	clock_triples(per, &t1);

	/* The window. */
	int64_t t_go = mono(), S = t_go + (int64_t)(warmup * 1e9), E;
	pid_t epid = 0;

	E = S + (int64_t)(duration * 1e9);
	if (x) {
		x->start = S;
		x->end = E;
		atomic_store(&x->go, 1);
	}
	wait_until(S);
	for (int i = 0; i < nv; i++)
		seqS[i] = ld32(&h[i]->seq);
	if (cmd) {
		char pidbuf[32];

		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)xpid);
		fflush(stdout);
		epid = fork();
		if (epid < 0) {
			perror("vmrun: fork");
		} else if (!epid) {
			setenv("VMRUN_X_PID", pidbuf, 1);
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			perror("vmrun: /bin/sh");
			_exit(127);
		}
	}
	/* Check bursts: 4 a second, vCPU after vCPU. */
	int64_t last_burst = E - per / 4 - 20000000;

	for (int k = 0; mono() < last_burst; k++) {
		int64_t next = S + (k + 1) * 250000000LL;

		while (mono() < next && mono() < last_burst)
			usleep(5000);
		if (mono() >= last_burst)
			break;
		calibrate(h[k % nv], per / 8, &oc);
		clock_triples(per / 8, &tc);
	}
	wait_until(E);
	for (int i = 0; i < nv; i++)
		seqE[i] = ld32(&h[i]->seq);
	if (x) {
		int st2;

		waitpid(xpid, &st2, 0);
		if (!atomic_load(&x->done)) {
			fprintf(stderr, "vmrun: X did not finish the window\n");
			status = 2;
		}
	}

	/* Calibration after the window: every vCPU must have run since. */
	int missing = 0;

	for (int i = 0; i < nv; i++) {
		size_t before = o2.n;
		int64_t until = mono() + 5000000000LL;

		do
			calibrate(h[i], per, &o2);
		while (o2.n == before && mono() < until);
		if (o2.n == before) {
			fprintf(stderr, "vmrun: vCPU %c did not run within 5 s after the window\n",
				LETTERS[i]);
			missing = 1;
		}
	}
	clock_triples(per, &t2);

	/* The offset: one for all brackets. */
	int offset_bad = 0;

	oall = o1;
	offs_merge(&oall, &oc);
	offs_merge(&oall, &o2);
	if (!o1.n || !o2.n) {
		fprintf(stderr, "vmrun: no calibration brackets (%zu before, %zu after the window)\n",
			o1.n, o2.n);
		printf("run summary ok=0 error=calibration\n");
		return 1;
	}
	if (oall.lo > oall.hi) {
		fprintf(stderr, "vmrun: the VM's TSC offset moved: the %zu brackets miss each other by %" PRId64
			" ticks (before the window %" PRId64 "..%" PRId64 ", after %" PRId64 "..%" PRId64 ")\n",
			oall.n, oall.lo - oall.hi, o1.lo, o1.hi, o2.lo, o2.hi);
		offset_bad = 1;
	}

	/* Our TSC to CLOCK_MONOTONIC: the narrowest triples before and after. */
	const struct triple *a1 = narrowest(&t1), *a2 = narrowest(&t2);
	struct tmap tm;

	tm.t0 = a1->ta + (a1->tb - a1->ta) / 2;
	tm.m0 = a1->c;
	tm.k = (double)(a2->c - a1->c) / (double)(int64_t)(a2->ta + (a2->tb - a2->ta) / 2 - tm.t0);
	tm.off = oall.lo + (oall.hi - oall.lo) / 2;

	/* Check every other triple against the map. */
	size_t nchk = 0, misses = 0;
	int64_t maxdev = 0;
	struct triples *all[3] = { &t1, &t2, &tc };

	for (int l = 0; l < 3; l++)
		for (size_t i = 0; i < all[l]->n; i++) {
			const struct triple *t = &all[l]->v[i];
			int64_t lo = tmap_ours(&tm, t->ta), hi = tmap_ours(&tm, t->tb), dev = 0;

			if (t == a1 || t == a2)
				continue;
			nchk++;
			if (t->c < lo)
				dev = lo - t->c;
			if (t->c > hi)
				dev = t->c - hi;
			if (dev) {
				misses++;
				if (dev > maxdev)
					maxdev = dev;
			}
		}
	double half_anchor = us(llround((double)(a1->tb - a1->ta > a2->tb - a2->ta ?
					a1->tb - a1->ta : a2->tb - a2->ta) * tm.k / 2));
	double off_err = offset_bad ? 0 : (double)(oall.hi - oall.lo) / 2 * tm.k / 1000;
	double err = off_err + half_anchor + us(maxdev);

	/* The rings, read after every vCPU ran past the window. */
	int64_t payload_gap_ns = (int64_t)ceil(PAYLOAD_GAP * tm.k);
	int backwards = 0, overflow = 0;

	m.win = E - S;
	m.has_loops = 1;
	for (int i = 0; i < nv; i++) {
		volatile struct hdr *hh = h[i];
		uint32_t n1 = ld32(&hh->n), n2, first;
		const uint64_t *ring = (const uint64_t *)(mem + RING + (size_t)m.apic[i] * RING_SZ);
		uint64_t start = ld64(&hh->start), now = read_now(hh, &sq);
		struct segs *g = &m.gaps[i];
		static uint64_t copy[2 * NREC];

		m.loops[i] = (uint32_t)(seqE[i] - seqS[i]) / 2;
		memcpy(copy, ring, sizeof(copy));
		n2 = ld32(&hh->n);
		first = n2 > NREC ? n2 - NREC : 0;
		if (tmap(&tm, start) > S)	/* began recording in the window */
			segs_push(g, INT64_MIN / 4, tmap(&tm, start) - S);
		for (uint32_t j = first; j < n1; j++) {
			uint64_t gs = copy[2 * (j % NREC)], ge = copy[2 * (j % NREC) + 1];

			if (ge < gs) {
				backwards++;
				continue;
			}
			if (j == first && n2 > NREC && tmap(&tm, ge) > S)
				overflow++;
			if (tmap(&tm, ge) > S && tmap(&tm, gs) < E)
				m.records[i]++;
			segs_push(g, tmap(&tm, gs) - S, tmap(&tm, ge) - S);
		}
		if (now && tmap(&tm, now) < E)	/* not seen running past the window */
			segs_push(g, tmap(&tm, now) - S, INT64_MAX / 4);
	}
	if (x) {
		m.has_x = 1;
		for (size_t k = 0; k < x->n; k++)
			segs_push(&m.xseg, x->segs[k].s - S, x->segs[k].e - S);
	}
	if (epid > 0) {
		int est;

		waitpid(epid, &est, 0);
		if (!WIFEXITED(est) || WEXITSTATUS(est)) {
			fprintf(stderr, "vmrun: --exec command: %s %d\n",
				WIFEXITED(est) ? "exit" : "signal",
				WIFEXITED(est) ? WEXITSTATUS(est) : WTERMSIG(est));
			status = 2;
		}
	}

	printf("# vmrun: %d vCPUs of %s, X %s on CPU %d, window %.3f s, one clock: CLOCK_MONOTONIC\n",
	       nv, memfile, x ? "spinning" : "absent", xcpu, duration);
	printf("# calibration: the VM's TSC minus ours in [%" PRId64 ", %" PRId64 "] by %zu brackets"
	       " (%zu before the window, %zu during, %zu after), ours to CLOCK_MONOTONIC by %zu triples"
	       " (anchors %.3f and %.3f us wide)\n",
	       oall.lo, oall.hi, oall.n, o1.n, oc.n, o2.n, t1.n + t2.n + tc.n,
	       us(llround((double)(a1->tb - a1->ta) * tm.k)), us(llround((double)(a2->tb - a2->ta) * tm.k)));
	if (gap_ns < payload_gap_ns) {
		fprintf(stderr, "vmrun: --gap-us %.0f is below the payload's %d ticks (%.1f us): using that\n",
			gap_us, PAYLOAD_GAP, us(payload_gap_ns));
		gap_ns = payload_gap_ns;
	}
	if (backwards || overflow || missing || offset_bad)
		status = 2;
	if (backwards)
		fprintf(stderr, "vmrun: %d gap records go backwards\n", backwards);
	if (overflow)
		fprintf(stderr, "vmrun: a ring overflowed: records of the window lost\n");
	if (x && (x->overflow || x->migrations)) {
		fprintf(stderr, "vmrun: X %s\n", x->overflow ? "overflowed its buffer" : "migrated");
		status = 2;
	}
	char xextra[64];

	snprintf(xextra, sizeof(xextra), " cpu=%d overflow=%d migrations=%d",
		 xcpu, x ? x->overflow : 0, x ? x->migrations : 0);
	report(&m, gap_ns, follow_ns, xextra);
	printf("calib summary tsc_mhz=%.3f offset_ticks=%" PRId64 " offset_width_ticks=%" PRId64
	       " offset_before_ticks=%" PRId64 ",%" PRId64 " offset_after_ticks=%" PRId64 ",%" PRId64
	       " brackets=%zu offset_ok=%d offset_err_us=%.3f anchor_err_us=%.3f checks=%zu check_misses=%zu"
	       " check_max_dev_us=%.3f err_us=%.3f payload_gap_us=%.1f\n",
	       1000.0 / tm.k, tm.off, oall.hi - oall.lo, o1.lo, o1.hi, o2.lo, o2.hi, oall.n, !offset_bad,
	       off_err, half_anchor, nchk, misses, us(maxdev), err, us(payload_gap_ns));
	printf("run summary window_us=%.0f gap_us=%.0f follow_us=%.0f vcpus=%d x_cpu=%d"
	       " backwards=%d overflow=%d ok=%d\n",
	       us(m.win), us(gap_ns), us(follow_ns), nv, xcpu, backwards, overflow, status == 0);
	if (dumpfile)
		dump(dumpfile, &m);
	return status;
}
