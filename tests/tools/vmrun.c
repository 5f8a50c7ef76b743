// SPDX-License-Identifier: GPL-2.0
/*
 * vmrun - what a VM's vCPUs really executed, from the VM's own clock.
 *
 * tidrun judges a VM's vCPU threads from the scheduler's sched_switch
 * trace; under TCG that trace records a sibling's switch late.  Here the
 * VM itself says when it ran: its payload, vmspin.elf, loops on every
 * vCPU reading the TSC and records each gap of 0x8000 ticks or more (the
 * vCPU did not execute) as (before, after) in a ring in guest RAM, and
 * publishes its latest read as "now" (layout: vmspin.s).  The VM's RAM
 * is a file (QEMU's memory-backend-file,share=on), which vmrun maps.
 *
 * One clock.  Under TCG the nested guest's TSC is QEMU's cpu_get_ticks():
 * this guest's TSC plus an offset fixed at the VM's start.  vmrun maps
 * it to this guest's CLOCK_MONOTONIC (the clock of corun's recorders and
 * of the "mono" trace clock): it reads CLOCK_MONOTONIC (and the TSC)
 * around each read of a vCPU's "now" and its seqlock.  A value v seen
 * with seq s was read by the vCPU after it published seq s - 2, i.e.
 * after an earlier read of ours that still saw less than s - 2 began, and
 * before this read ended: v was current at a time in [a, b].  The
 * narrowest such bracket before the window and the narrowest after it
 * are the anchors of a linear map; every other bracket (both sessions
 * and short bursts during the window) checks it.  The error bound
 * printed is half the wider anchor plus the largest distance by which a
 * checked bracket missed the map.
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
 *        x_overlap_us=.. x_overlap_n=.. x_overlap_max_us=..
 *   x X run_us=.. run_pct_of_window=.. segments=.. overflow=..
 *   pair A,B both_us=.. union_us=.. corun_pct_of_union=.. apart_n=..
 *        apart_us=.. apart_max_us=.. apart_long_us=.. corun_follow_pct=..
 *   gpair AB,X overlap_us=.. overlap_pct_of_min=.. overlap_n=..
 *        overlap_max_us=.. overlap_long_us=.. overlap_long_pct_of_min=..
 *   calib summary tsc_mhz=.. offset_ticks=.. offset_drift_ticks=..
 *        anchor_us=..,.. samples=.. checks=.. check_misses=..
 *        check_max_dev_us=.. err_us=..
 *   run summary window_us=.. gap_us=.. follow_us=.. vcpus=.. ok=0|1
 * Exit status: 0 measured, 1 usage or set-up error, 2 measured but
 * suspect (a ring or X's buffer overflowed, a record went backwards, a
 * vCPU was not seen running after the window, the --exec command
 * failed).
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
#define PAYLOAD_GAP	0x8000		/* ticks: the payload's own threshold */
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

/* v (the vCPU's TSC) was current at some mono time in [a, b]; ta, tb: our TSC */
struct sample {
	uint64_t v, ta, tb;
	int64_t a, b;
};

struct samples {
	struct sample *v;
	size_t n, cap;
};

static void samples_push(struct samples *l, const struct sample *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v) {
			perror("vmrun: realloc");
			exit(1);
		}
	}
	l->v[l->n++] = *s;
}

#define HIST 1024

/*
 * Bracket a vCPU's "now" for dur_ns: each of our reads notes when it
 * began (a, ta) and the last seq it saw.  A consistent read with seq s
 * ended at b; the vCPU read its TSC after it published s - 2, so after
 * our latest read that saw a seq below s - 2 began.
 */
static void calibrate(volatile struct hdr *h, int64_t dur_ns, struct samples *out)
{
	static struct { int64_t a; uint64_t ta; uint32_t seq; } hist[HIST];
	size_t nh = 0;
	int64_t end = mono() + dur_ns;

	for (;;) {
		int64_t a = mono();
		uint64_t ta = __rdtsc();
		uint32_t s1 = ld32(&h->seq);
		uint64_t v = ld64(&h->now);
		uint32_t s2 = ld32(&h->seq);
		uint64_t tb = __rdtsc();
		int64_t b = mono();

		if (s1 == s2 && !(s1 & 1) && s1 >= 4) {
			for (size_t k = 1; k <= nh && k <= HIST; k++) {
				size_t j = (nh - k) % HIST;

				if ((int32_t)(hist[j].seq - (s1 - 2)) < 0) {
					struct sample sm = { v, hist[j].ta, tb, hist[j].a, b };

					samples_push(out, &sm);
					break;
				}
			}
		}
		hist[nh % HIST].a = a;
		hist[nh % HIST].ta = ta;
		hist[nh % HIST].seq = s2;
		nh++;
		if (b >= end)
			break;
	}
}

/* The narrowest bracket of a list. */
static const struct sample *narrowest(const struct samples *l)
{
	const struct sample *best = NULL;

	for (size_t i = 0; i < l->n; i++)
		if (!best || l->v[i].b - l->v[i].a < best->b - best->a)
			best = &l->v[i];
	return best;
}

/* The map: mono = m0 + (v - v0) * k. */
struct tmap {
	uint64_t v0;
	int64_t m0;
	double k;
};

static int64_t tmap(const struct tmap *t, uint64_t v)
{
	return t->m0 + (int64_t)llround((double)(int64_t)(v - t->v0) * t->k);
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
"                      payload's 0x8000 TSC ticks)\n"
"  --follow-us US      apart and overlap windows longer than this are\n"
"                      'long' (default 1000), as tidrun's\n"
"  --cpu CPU           pin vmrun itself (the calibration reads) to CPU\n"
"  --calib-ms MS       calibration reads per vCPU before and after the\n"
"                      window (default 40), and bursts of MS/8 during it\n"
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
	struct samples s1 = { 0 }, s2 = { 0 }, chk = { 0 };
	int64_t per = (int64_t)(calib_ms * 1e6);

	for (int i = 0; i < nv; i++)
		calibrate(h[i], per, &s1);

	/* The window. */
	int64_t t_go = mono(), S = t_go + (int64_t)(warmup * 1e9), E;
	pid_t epid = 0;

	E = S + (int64_t)(duration * 1e9);
	if (x) {
		x->start = S;
		x->end = E;
		atomic_store(&x->go, 1);
	}
	while (mono() < S)
		usleep(1000);
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
	for (int k = 0; mono() < E - per / 8 - 10000000; k++) {
		int64_t next = S + (k + 1) * 250000000LL;

		while (mono() < next && mono() < E - per / 8 - 10000000)
			usleep(5000);
		if (mono() >= E - per / 8 - 10000000)
			break;
		calibrate(h[k % nv], per / 8, &chk);
	}
	while (mono() < E)
		usleep(1000);
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
		size_t before = s2.n;
		int64_t until = mono() + 5000000000LL;

		do
			calibrate(h[i], per, &s2);
		while (s2.n == before && mono() < until);
		if (s2.n == before) {
			fprintf(stderr, "vmrun: vCPU %c did not run within 5 s after the window\n",
				LETTERS[i]);
			missing = 1;
		}
	}
	const struct sample *a1 = narrowest(&s1), *a2 = narrowest(&s2);

	if (!a1 || !a2 || a1->v == a2->v) {
		fprintf(stderr, "vmrun: no calibration brackets (%zu before, %zu after the window)\n",
			s1.n, s2.n);
		printf("run summary ok=0 error=calibration\n");
		return 1;
	}
	struct tmap tm;

	tm.v0 = a1->v;
	tm.m0 = a1->a + (a1->b - a1->a) / 2;
	tm.k = (double)((a2->a + (a2->b - a2->a) / 2) - tm.m0) / (double)(int64_t)(a2->v - a1->v);

	/* Check every bracket against the map. */
	size_t nchk = 0, misses = 0;
	int64_t maxdev = 0;
	struct samples *all[3] = { &s1, &s2, &chk };

	for (int l = 0; l < 3; l++)
		for (size_t i = 0; i < all[l]->n; i++) {
			const struct sample *sm = &all[l]->v[i];
			int64_t t = tmap(&tm, sm->v), dev = 0;

			if (sm == a1 || sm == a2)
				continue;
			nchk++;
			if (t < sm->a)
				dev = sm->a - t;
			if (t > sm->b)
				dev = t - sm->b;
			if (dev) {
				misses++;
				if (dev > maxdev)
					maxdev = dev;
			}
		}
	int64_t half = (a1->b - a1->a) / 2 > (a2->b - a2->a) / 2 ?
		       (a1->b - a1->a) / 2 : (a2->b - a2->a) / 2;
	/* offset = vCPU TSC - our TSC, bracketed by each anchor */
	double off1 = (double)(int64_t)(a1->v - a1->tb) / 2 + (double)(int64_t)(a1->v - a1->ta) / 2;
	double off2 = (double)(int64_t)(a2->v - a2->tb) / 2 + (double)(int64_t)(a2->v - a2->ta) / 2;

	/* The rings, read after every vCPU ran past the window. */
	int64_t payload_gap_ns = (int64_t)ceil(PAYLOAD_GAP * tm.k);
	int backwards = 0, overflow = 0;

	m.win = E - S;
	for (int i = 0; i < nv; i++) {
		volatile struct hdr *hh = h[i];
		uint32_t n1 = ld32(&hh->n), n2, first;
		const uint64_t *ring = (const uint64_t *)(mem + RING + (size_t)m.apic[i] * RING_SZ);
		uint64_t start = ld64(&hh->start), now = read_now(hh, &sq);
		struct segs *g = &m.gaps[i];
		static uint64_t copy[2 * NREC];

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
	printf("# calibration: %zu brackets before, %zu after, %zu during the window; anchors %.1f us and %.1f us wide\n",
	       s1.n, s2.n, chk.n, us(a1->b - a1->a), us(a2->b - a2->a));
	if (gap_ns < payload_gap_ns) {
		fprintf(stderr, "vmrun: --gap-us %.0f is below the payload's %d ticks (%.1f us): using that\n",
			gap_us, PAYLOAD_GAP, us(payload_gap_ns));
		gap_ns = payload_gap_ns;
	}
	if (backwards || overflow || missing)
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
	printf("calib summary tsc_mhz=%.3f offset_ticks=%.0f offset_drift_ticks=%.0f anchor_us=%.1f,%.1f"
	       " samples=%zu checks=%zu check_misses=%zu check_max_dev_us=%.1f err_us=%.1f payload_gap_us=%.1f\n",
	       1000.0 / tm.k, off1, off2 - off1, us(a1->b - a1->a) / 2, us(a2->b - a2->a) / 2,
	       s1.n + s2.n + chk.n, nchk, misses, us(maxdev), us(half + maxdev), us(payload_gap_ns));
	printf("run summary window_us=%.0f gap_us=%.0f follow_us=%.0f vcpus=%d x_cpu=%d"
	       " backwards=%d overflow=%d ok=%d\n",
	       us(m.win), us(gap_ns), us(follow_ns), nv, xcpu, backwards, overflow, status == 0);
	if (dumpfile)
		dump(dumpfile, &m);
	return status;
}
