#!/bin/bash
# timeout: 360
# boot: cosched_max_level=3 cosched.levelhold=1
# Affinity above the core (issue 10 point 6).  What the series defines
# (sched-cosched.rst, Placement): a task of a group coscheduled at level L
# runs on the CPU the scheduler puts it on, as allowed by its affinity and
# cpuset, in its group's turn on the level-L span of that CPU; an affinity
# across several spans or changed while the task runs is allowed, and the
# semantics hold on the span the task is on.
# G at level 2 with two spinners: A allowed on all CPUs 0-7 (two
# packages), B pinned to package 0 (0-3), moved to package 1 (4-7) while
# it runs, then back; a plain group P with a spinner on each of CPUs 0-7.
# Over 3 phases of 4 s, from the scheduler's sched_switch trace:
#  - A and B ran in every 2-s window of the run (>= 100 ms in each: 5
#    turns of 400 ms; see the history below for why not 1 s), and B ran
#    on the package it was moved to (>= 90% of its run time in each
#    phase, the first 0.5 s after a move left out);
#  - on each package, no task of G or P began to run while the package
#    was settled on the other (switchtrace, as in 24-level-trace and
#    26-level-live: from a switch's last follow to the next decision):
#    <= 0.1% of each one's run time there;
#  - on each package, G's and P's tasks ran at once <= 2% of G's run time
#    there, the bound 24-level-trace puts on a run recorded outside its
#    turn (trace view: under TCG it shows a vCPU that the host stopped
#    between its switch and the record as still running: 21-l2-exclusion's
#    trace view gave 0.13-0.96% where its raw view, what executed, gave
#    0.00% (2026-12-05); 21 and 22 judge the raw view at 0.1%; here 0.08-
#    0.79% in 17 runs and 1.46% in one, 2026-12-06, when the bound was 1%);
#  - turn_us 400 ms at level 2 for TCG, as in 22-l2-gang.
# On the stock kernel G is a plain group: G and P overlap, and it fails.
# History: in wip/ until 2026-12-06, because one run before patch 30 (a
# turn ends early when its owner has nothing to run) had B without a run
# for a whole second; six runs since then (2026-12-05/06) passed, the
# least run of A or B in a second 164-402 ms, so each second must now
# hold >= 50 ms of each (a turn is 400 ms and G gets about half of them).
# CI (2026-12-06) saw a second without A: the analysis then left out the
# time before each CPU's first switch, and G, twice the open turn's weight
# on a package that holds A and B, gets two turns in a row there, so a
# task running when the trace began could run 800 ms unseen.  What ran
# then is now the prev_pid of the CPU's first switch, and each window's
# runs of A and B, A's CPUs and the leaders' switches to G are printed.
# On 2026-12-06 the sched_cosched_decide tracepoint showed the cause of
# the remaining seconds without a run (about 1 run in 6-8): the open turn
# was charged at the weight queued at the decision instant, and won three
# decisions in a row; patch 31 charges it at its weight averaged over the
# turn.  Of 33 runs since, two still had such a second (B 13 ms and 0
# us), and the decisions printed for the second (20261206-181842) show
# the fair clock, not noise: package 0's leader gave G, A alone there
# (0.5), two turns in a row against an open turn charged 0.4-0.6, then
# the open turn two (charged 0.61 and 0.82, 820 ms), and B, moved back
# onto package 0 as that began, after package 1's open turn, waited
# through it.  At 400-ms turns one owner gets two turns in a row whenever
# the weights differ, so a 1-s window can hold no run of a task by
# design; a 2-s window holds 5 turns.  Over those 33 runs and the 6 of
# 20261206-152551 (before patch 31) the least run of A or B in an
# aligned 2-s window was 401-980 ms.
# The phases were placed by the uptime clock read by awk after the trace
# began, which with every CPU busy can start a second late: B's runs on
# its old package before the move then counted in the phase after it
# (80.07% in one run); they are now placed by trace markers.
. "$(dirname "$0")/lib.sh"
test_init 27-level-affinity
require_cosched
L2=$COSCHED_SYSFS/levels/2
turn0=$(cat "$L2/turn_us" 2>/dev/null)
trap 'rc=$?; [ -n "$turn0" ] && echo "$turn0" > "$L2/turn_us"; (exit $rc); cleanup' EXIT
tracefs_ready || fail "no tracefs"
[ -n "$turn0" ] && echo 400000 > "$L2/turn_us" && log "# levels/2/turn_us: 400000 for TCG (was $turn0)"

cg_create G; cg_cpus G 0-7
cg_create P; cg_cpus P 0-7
spin_in G 0-7; A=${SPINNERS[-1]}
spin_in G 0-3; B=${SPINNERS[-1]}
for c in 0 1 2 3 4 5 6 7; do spin_in P $c; done
PP=("${SPINNERS[@]:2}")
sleep 0.5
cg_sched G 2 || fail "cannot coschedule G at level 2"
sleep 1

now_trace() { awk '{ print $1 }' /proc/uptime; }
# mark NAME: a marker in the trace, on its own clock, by a shell builtin:
# the phases are taken from these (a command such as now_trace's awk can
# take a second to start here, with every CPU busy)
mark() { echo "cosched27 $1" > "$TRACE_INSTANCE/trace_marker"; }
gid=$(cg_id G)
ev=sched_switch
[ -e /sys/kernel/tracing/events/sched/sched_cosched_switch ] && ev="$ev sched_cosched_switch"
# shellcheck disable=SC2086 # two event names
trace_start $ev || fail "no trace"
t_start=$(now_trace)
sleep 4
mark pre1
taskset -pc 4-7 "$B" > /dev/null || fail "taskset B 4-7"
mark moved1
t_move1=$(now_trace)
sleep 4
mark pre2
taskset -pc 0-3 "$B" > /dev/null || fail "taskset B 0-3"
mark moved2
t_move2=$(now_trace)
sleep 4
t_end=$(now_trace)
trace_save trace
log "# A $A (0-7), B $B (0-3, 4-7 at $t_move1, 0-3 at $t_move2), P ${PP[*]}; trace $t_start..$t_end (uptime s)"

# Each phase ends at the marker written before its taskset and begins
# 0.5 s after the marker written when the previous one returned.
awk -v a="$A" -v b="$B" -v gid="$gid" -v pp="${PP[*]}" -v win_s=2 '
function ts() { match($0, /[0-9]+\.[0-9]+: /); return substr($0, RSTART, RLENGTH - 2) + 0 }
# the progress window (win_s seconds from the first switch) time t is in
function win(t) { return int((t - first) / win_s) }
function add(c, from, to,   k, s, e, w, pk, ph) {
	if (to <= from) return
	pk = c < 4 ? 0 : 1
	if (who[c] == "G" || who[c] == "A" || who[c] == "B") grun[pk] += to - from
	# progress per 2-s window, and B per phase and package
	# by window index: a window'"'"'s end, taken back to an index, can round
	# into the window it ends, and the walk would never leave it
	if (who[c] == "A" || who[c] == "B") {
		s = from
		for (w = win(s); s < to; w++) {
			e = first + win_s * (w + 1); if (e > to) e = to
			if (e > s) { run[who[c], w] += e - s; s = e }
		}
	}
	if (who[c] == "B") {
		for (k = 1; k <= 3; k++) {
			s = from > ps[k] ? from : ps[k]; e = to < pe[k] ? to : pe[k]
			if (e > s) { bph[k] += e - s; if (pk == want[k]) bon[k] += e - s }
		}
	}
}
# sweep: at each event, account the time since the last one on every CPU
function sweep(t,   c, pk, g, p) {
	if (last) {
		for (c = 0; c < 8; c++) if (c in who) add(c, last, t)
		for (pk = 0; pk < 2; pk++) {
			g = p = 0
			for (c = pk * 4; c < pk * 4 + 4; c++) {
				if (who[c] == "G" || who[c] == "A" || who[c] == "B") g = 1
				if (who[c] == "P") p = 1
			}
			if (g && p) both[pk] += t - last
		}
	}
	last = t
}
BEGIN { n = split(pp, w, " "); for (i = 1; i <= n; i++) isp[w[i]] = 1 }
function cls(pid) { return pid == a ? "A" : pid == b ? "B" : (pid in isp) ? "P" : "-" }
# first pass: the trace span, and what ran on each CPU when the trace
# began (the prev_pid of its first switch): without it, the time before a
# CPU'"'"'s first switch is nobody'"'"'s
NR == FNR {
	if (match($0, /tracing_mark_write: cosched27 [a-z0-9]+/)) {
		mk[substr($0, RSTART + 30, RLENGTH - 30)] = ts()
		next
	}
	if ($0 !~ / sched_switch: /) next
	t = ts(); if (!first) first = t; lastt = t
	match($0, /\[[0-9]+\]/); c = substr($0, RSTART + 1, RLENGTH - 2) + 0
	if (!(c in init)) { match($0, / prev_pid=[0-9]+/); init[c] = substr($0, RSTART + 10, RLENGTH - 10) }
	next
}
FNR == 1 {
	for (c in init) who[c] = cls(init[c])
	# phases on the trace clock, from the markers
	span = lastt - first
	ps[1] = first;                  pe[1] = mk["pre1"]
	ps[2] = mk["moved1"] + 0.5;     pe[2] = mk["pre2"]
	ps[3] = mk["moved2"] + 0.5;     pe[3] = lastt
	nmk = ("pre1" in mk) + ("moved1" in mk) + ("pre2" in mk) + ("moved2" in mk)
	want[1] = 0; want[2] = 1; want[3] = 0
	nw = int(span / win_s)
}
/ sched_switch: / {
	t = ts()
	match($0, /\[[0-9]+\]/); c = substr($0, RSTART + 1, RLENGTH - 2) + 0
	sweep(t)
	match($0, / next_pid=[0-9]+/); np = substr($0, RSTART + 10, RLENGTH - 10)
	who[c] = cls(np)
	if (who[c] == "A") acpu[win(t), c] = 1
}
# the leaders'"'"' switches, when the kernel has the event: G'"'"'s turns per
# package and window, for the diagnosis of a window without a run
/ sched_cosched_switch: / && / level=2 / {
	t = ts(); match($0, / span_cpu=[0-9]+/); pk = substr($0, RSTART + 10, RLENGTH - 10) + 0 < 4 ? 0 : 1
	if ($0 ~ (" new_cgroup=" gid " ")) gturn[win(t), pk]++
	nsw[win(t), pk]++
}
END {
	for (pk = 0; pk < 2; pk++)
		printf "pkg %d g_us=%.0f both_us=%.0f overlap_pct=%.3f\n", pk, grun[pk] * 1e6, both[pk] * 1e6, grun[pk] ? 100 * both[pk] / grun[pk] : 0
	minA = minB = -1
	for (i = 0; i < nw; i++) {
		if (minA < 0 || run["A", i] < minA) minA = run["A", i]
		if (minB < 0 || run["B", i] < minB) minB = run["B", i]
	}
	printf "progress all windows=%d a_min_us=%.0f b_min_us=%.0f\n", nw, minA * 1e6, minB * 1e6
	printf "markers all n=%d\n", nmk
	for (i = 0; i < nw; i++) {
		cs = ""
		for (c = 0; c < 8; c++) if ((i, c) in acpu) cs = cs c
		printf "# window %d: A %.0f us (switched in on cpus %s), B %.0f us; level-2 switches to G/all pkg0 %d/%d pkg1 %d/%d\n", i, run["A", i] * 1e6, cs == "" ? "none" : cs, run["B", i] * 1e6, gturn[i, 0], nsw[i, 0], gturn[i, 1], nsw[i, 1]
	}
	for (k = 1; k <= 3; k++)
		printf "phase %d b_us=%.0f b_on_pkg_us=%.0f b_on_pkg_pct=%.2f pkg=%d\n", k, bph[k] * 1e6, bon[k] * 1e6, bph[k] ? 100 * bon[k] / bph[k] : 0, want[k]
}' "$WORK/trace" "$WORK/trace" > "$WORK/aff"
cat "$WORK/aff"
# Each package's turns, judged by switchtrace as in 24-level-trace and
# 26-level-live: no task of G or P may begin to run while the package is
# settled on the other (from the switch's last follow to the next
# decision), whatever the trace records late.
for pk in 0 1; do
	cpus=$((pk * 4))-$((pk * 4 + 3))
	switchtrace --level 2 --gid "$gid" --cpus "$cpus" --g "$A $B" --p "${PP[*]}" "$WORK/trace" > "$WORK/st$pk" ||
		fail "switchtrace failed on $cpus"
	grep -v '^inrun' "$WORK/st$pk" | sed "s/^/# package $pk: /"
	grep '^inrun' "$WORK/st$pk" | head -5 | sed "s/^/# package $pk: /"
done

check_gt "2-s windows in the trace" "$(kv aff progress all windows)" 4
check_eq "phase markers in the trace" "$(kv aff markers all n)" 4
check_ge "A ran in every 2 s (least us in a window)" "$(kv aff progress all a_min_us)" 100000
check_ge "B ran in every 2 s (least us in a window)" "$(kv aff progress all b_min_us)" 100000
for k in 1 2 3; do
	check_ge "phase $k: B on package $(kv aff phase $k pkg) %" "$(kv aff phase $k b_on_pkg_pct)" 90
done
for pk in 0 1; do
	check_le "package $pk: G and P at once %" "$(kv aff pkg $pk overlap_pct)" 2
	check_ge "package $pk: level-2 switches" "$(kv st$pk ev level=2 events)" 4
	check_le "package $pk: G switched in while settled on open %" "$(kv st$pk run level=2 g_in_pct)" 0.1
	check_le "package $pk: P switched in while settled on G %" "$(kv st$pk run level=2 p_in_pct)" 0.1
done
finish "level 2, A on 0-7 and B moved 0-3 -> 4-7 -> 0-3 while running: least run per 2 s A $(kv aff progress all a_min_us) us, B $(kv aff progress all b_min_us) us (>= 100000); B on its package $(kv aff phase 1 b_on_pkg_pct)/$(kv aff phase 2 b_on_pkg_pct)/$(kv aff phase 3 b_on_pkg_pct)% (>= 90); G/P at once on package 0 $(kv aff pkg 0 overlap_pct)%, 1 $(kv aff pkg 1 overlap_pct)% (<= 2%, trace), switched in while settled on the other $(kv st0 run level=2 g_in_pct)/$(kv st0 run level=2 p_in_pct)%, $(kv st1 run level=2 g_in_pct)/$(kv st1 run level=2 p_in_pct)% (<= 0.1%, trace)"
