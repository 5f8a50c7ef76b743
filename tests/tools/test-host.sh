#!/bin/sh
# Host-side checks of corun, schedw, gangbench, cookiectl, corehold, tidrun,
# switchtrace, vmspin.elf and vmrun: no cgroups, no root, any 2+ CPUs.
# Run by "make -C tests/tools check".  The machine may be busy (kernel
# builds), so the checks hold whatever share of a CPU the spinners get:
#  - same CPU: two spinners never ran at once (overlap exactly 0) and
#    their run times fit in the window;
#  - different CPUs with a gap threshold (1 s) longer than any host
#    preemption: both "ran" the whole window and overlapped ~100%, which
#    checks the common start barrier and window;
#  - different CPUs, default gap: reported, not judged (depends on load).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CORUN=$HERE/corun
SCHEDW=$HERE/schedw
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Output contract (tests/run.sh): one "PASS name detail" / "FAIL name detail"
# line per check.
ok() { n=$1; shift; echo "PASS tools/$n $*"; }
bad() { n=$1; shift; echo "FAIL tools/$n $*"; fails=$((fails + 1)); }
# kv FILE KIND ID KEY: value of KEY on the record "KIND ID ..."
kv() {
	awk -v k="$2" -v id="$3" -v key="$4" '
		$1 == k && $2 == id { for (i = 3; i <= NF; i++) {
			split($i, a, "="); if (a[1] == key) { print a[2]; exit } } }' "$1"
}
# ge A B: A >= B (decimals)
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

ncpu=$(getconf _NPROCESSORS_ONLN)
if [ "$ncpu" -lt 2 ]; then
	echo "need 2 CPUs, have $ncpu"; exit 1
fi

if "$CORUN" --self-test; then ok corun-self-test "interval arithmetic, apart intervals, recorder and trace parser"; else bad corun-self-test "see output above"; fi

# tidrun on a canned trace: comm with a blank ("CPU 0/TCG"), a thread
# running from before its first event, exact microseconds.
cat > "$tmp/trace" <<'TRACE'
# tracer: nop
   CPU 0/TCG-10 [002] d..2.  1.000000: sched_switch: prev_comm=CPU 0/TCG prev_pid=10 prev_prio=120 prev_state=R ==> next_comm=x next_pid=30 next_prio=120
          <idle>-0 [003] d..2.  1.000000: sched_switch: prev_comm=CPU 1/TCG prev_pid=11 prev_prio=120 prev_state=R ==> next_comm=swapper/3 next_pid=0 next_prio=120
               x-30 [002] d..2.  1.000400: sched_switch: prev_comm=x prev_pid=30 prev_prio=120 prev_state=R ==> next_comm=CPU 0/TCG next_pid=10 next_prio=120
          <idle>-0 [003] d..2.  1.000400: sched_switch: prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=CPU 1/TCG next_pid=11 next_prio=120
   CPU 1/TCG-11 [003] d..2.  1.001000: sched_switch: prev_comm=CPU 1/TCG prev_pid=11 prev_prio=120 prev_state=R ==> next_comm=swapper/3 next_pid=0 next_prio=120
   CPU 0/TCG-10 [002] d..2.  1.001100: sched_switch: prev_comm=CPU 0/TCG prev_pid=10 prev_prio=120 prev_state=R ==> next_comm=x next_pid=30 next_prio=120
TRACE
"$HERE/tidrun" --parse "$tmp/trace" 10 11 30 > "$tmp/tid"
got="$(kv "$tmp/tid" tid A run_us) $(kv "$tmp/tid" tid B run_us) $(kv "$tmp/tid" tid X run_us) $(kv "$tmp/tid" pair A,B both_us) $(kv "$tmp/tid" pair A,B union_us) $(kv "$tmp/tid" pair A,B corun_pct_of_union) $(kv "$tmp/tid" gpair AB,X overlap_us)"
if [ "$got" = "700 600 400 600 700 85.71 0" ]; then ok tidrun-parse "$got"; else bad tidrun-parse "got '$got'"; fi
# Follow windows: one apart interval (A alone, 100 us at the end), long
# only with a bound below 100 us.
"$HERE/tidrun" --follow-us 50 --parse "$tmp/trace" 10 11 30 > "$tmp/tid50"
got="$(kv "$tmp/tid" pair A,B apart_n) $(kv "$tmp/tid" pair A,B apart_max_us) $(kv "$tmp/tid" pair A,B apart_long_us) $(kv "$tmp/tid" pair A,B corun_follow_pct) $(kv "$tmp/tid50" pair A,B apart_long_us) $(kv "$tmp/tid50" pair A,B corun_follow_pct) $(kv "$tmp/tid" gpair AB,X overlap_n)"
if [ "$got" = "1 100 0 100.00 100 85.71 0" ]; then ok tidrun-follow "$got"; else bad tidrun-follow "got '$got'"; fi
# Overlap windows: thread 11 as X overlaps thread 10 once, for 600 us.
"$HERE/tidrun" --parse "$tmp/trace" 10 30 11 > "$tmp/tidx"
"$HERE/tidrun" --follow-us 50 --parse "$tmp/trace" 10 30 11 > "$tmp/tidx50"
got="$(kv "$tmp/tidx" gpair AB,X overlap_n) $(kv "$tmp/tidx" gpair AB,X overlap_max_us) $(kv "$tmp/tidx" gpair AB,X overlap_long_us) $(kv "$tmp/tidx50" gpair AB,X overlap_long_us)"
if [ "$got" = "1 600 0 600" ]; then ok tidrun-overlap-windows "$got"; else bad tidrun-overlap-windows "got '$got'"; fi
# Asleep or waiting: A (10) sleeps from 1.0 to its wakeup at 1.0003 (on
# CPU 5), waits to 1.0005; B (11) is preempted from 1.001 to 1.0012; a
# switch of B on CPU 6 is outside --cpus 2-3.  Union 1500 us, both 800,
# apart 700 of which 300 asleep: co-run 53.33%, awake 73.33%.
cat > "$tmp/wake" <<'TRACE'
   CPU 0/TCG-10 [002] d..2.  1.000000: sched_switch: prev_comm=CPU 0/TCG prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=x next_pid=30 next_prio=120
          <idle>-0 [005] d..2.  1.000300: sched_wakeup: comm=CPU 0/TCG pid=10 prio=120 target_cpu=002
   CPU 1/TCG-11 [006] d..2.  1.000400: sched_switch: prev_comm=CPU 1/TCG prev_pid=11 prev_prio=120 prev_state=R ==> next_comm=swapper/6 next_pid=0 next_prio=120
               x-30 [002] d..2.  1.000500: sched_switch: prev_comm=x prev_pid=30 prev_prio=120 prev_state=R ==> next_comm=CPU 0/TCG next_pid=10 next_prio=120
   CPU 1/TCG-11 [003] d..2.  1.001000: sched_switch: prev_comm=CPU 1/TCG prev_pid=11 prev_prio=120 prev_state=R+ ==> next_comm=swapper/3 next_pid=0 next_prio=120
          <idle>-0 [003] d..2.  1.001200: sched_switch: prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=CPU 1/TCG next_pid=11 next_prio=120
   CPU 0/TCG-10 [002] d..2.  1.001500: sched_switch: prev_comm=CPU 0/TCG prev_pid=10 prev_prio=120 prev_state=R ==> next_comm=x next_pid=30 next_prio=120
TRACE
"$HERE/tidrun" --cpus 2-3 --parse "$tmp/wake" 10 11 30 > "$tmp/wake.out"
got="$(kv "$tmp/wake.out" pair A,B union_us) $(kv "$tmp/wake.out" pair A,B both_us) $(kv "$tmp/wake.out" pair A,B apart_asleep_us) $(kv "$tmp/wake.out" pair A,B corun_pct_of_union) $(kv "$tmp/wake.out" pair A,B corun_awake_pct)"
if [ "$got" = "1500 800 300 53.33 73.33" ]; then ok tidrun-asleep "$got"; else bad tidrun-asleep "got '$got'"; fi
# A gang of three (a 4-vCPU VM's case has four): threads 10, 11 and 30
# never all ran at once; any of them ran the whole 1100 us; X (99) never.
"$HERE/tidrun" --parse "$tmp/trace" 10 11 30 99 > "$tmp/tid3"
got="$(kv "$tmp/tid3" tid C run_us) $(kv "$tmp/tid3" pair A,B,C both_us) $(kv "$tmp/tid3" pair A,B,C union_us) $(kv "$tmp/tid3" pair A,B,C apart_us) $(kv "$tmp/tid3" gpair ABC,X overlap_us)"
if [ "$got" = "400 0 1100 1100 0" ]; then ok tidrun-gang-of-3 "$got"; else bad tidrun-gang-of-3 "got '$got'"; fi
if "$HERE/tidrun" --parse "$tmp/trace" 10 x 30 2>/dev/null; then bad tidrun-bad-tid "accepted 'x'"; else ok tidrun-bad-tid "refused"; fi

# switchtrace on a canned trace: the span is settled on G (101, 102) from
# 10.0002 s (the event) to 10.0100 s (the next decision: event at 10.0103,
# follow 300 us, overtaken with one CPU missing), then open; G ran 10000
# + 9950 us, none of it while settled on open, P 9600 us, in the open
# turn; no idle in G's settled turn of 2 x 9800 us; 300 us of 19.8 ms
# switching.  With 102 counted as P, P ran 9800 us in G's settled turn.
cat > "$tmp/sw" <<'TRACE'
# tracer: nop
            spin-101 [000] d..2.  10.000000: sched_switch: prev_comm=sh prev_pid=201 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=101 next_prio=120
            spin-102 [001] d..2.  10.000100: sched_switch: prev_comm=sh prev_pid=202 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=102 next_prio=120
            spin-102 [001] d..2.  10.000200: sched_cosched_switch: level=2 span_cpu=0 cpus=4 missing=0 old_cgroup=0 new_cgroup=55 drain_ns=50000 follow_ns=250000
            spin-101 [000] d..2.  10.010000: sched_switch: prev_comm=sh prev_pid=101 prev_prio=120 prev_state=R ==> next_comm=swapper next_pid=0 next_prio=120
            spin-102 [001] d..2.  10.010050: sched_switch: prev_comm=sh prev_pid=102 prev_prio=120 prev_state=R ==> next_comm=swapper next_pid=0 next_prio=120
            spin-102 [001] d..2.  10.010300: sched_cosched_switch: level=2 span_cpu=0 cpus=4 missing=1 old_cgroup=55 new_cgroup=0 drain_ns=100000 follow_ns=300000
          <idle>-0 [000] d..2.  10.010350: sched_switch: prev_comm=swapper prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=201 next_prio=120
          <idle>-0 [001] d..2.  10.010400: sched_switch: prev_comm=swapper prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=202 next_prio=120
            spin-102 [001] d..2.  10.020000: sched_switch: prev_comm=sh prev_pid=202 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=102 next_prio=120
TRACE
"$HERE/switchtrace" --level 2 --gid 55 --cpus 0-1 --g "101 102" --p "201 202" "$tmp/sw" > "$tmp/sw.out"
got="$(kv "$tmp/sw.out" ev level=2 events) $(kv "$tmp/sw.out" ev level=2 missed) $(kv "$tmp/sw.out" ev level=2 cpus) $(kv "$tmp/sw.out" run level=2 g_us) $(kv "$tmp/sw.out" run level=2 g_out_us) $(kv "$tmp/sw.out" run level=2 p_us) $(kv "$tmp/sw.out" run level=2 switch_pct) $(kv "$tmp/sw.out" ev level=2 overtaken) $(kv "$tmp/sw.out" idle level=2 g_turn_cpu_us) $(kv "$tmp/sw.out" idle level=2 g_idle_us) $(kv "$tmp/sw.out" lat level=2 follow_p50_us) $(kv "$tmp/sw.out" lat level=2 drain_p99_us)"
if [ "$got" = "2 0 4:2, 19950 0 9600 1.52 1 19600 0 250.0 100.0" ]; then ok switchtrace-parse "$got"; else bad switchtrace-parse "got '$got'"; fi
"$HERE/switchtrace" --level 2 --gid 55 --cpus 0-1 --g "101" --p "102 201 202" "$tmp/sw" > "$tmp/sw2.out"
got="$(kv "$tmp/sw2.out" run level=2 p_out_us) $(kv "$tmp/sw2.out" ev level=3 events)"
if [ "$got" = "9800 " ]; then ok switchtrace-outside "$got"; else bad switchtrace-outside "got '$got'"; fi
# Counted as G, 202 switched in at 10.0104 s, after the last event: its
# turn's end is unknown (the trace may stop inside the next switch), so
# nothing of it is judged; the tail is 10.02 - 10.0103 s.
"$HERE/switchtrace" --level 2 --gid 55 --cpus 0-1 --g "202" --p "101" "$tmp/sw" > "$tmp/sw4.out"
got="$(kv "$tmp/sw4.out" run level=2 g_out_us) $(kv "$tmp/sw4.out" run level=2 g_in_us) $(kv "$tmp/sw4.out" run level=2 tail_us)"
if [ "$got" = "0 0 9700" ]; then ok switchtrace-tail "$got"; else bad switchtrace-tail "got '$got'"; fi
# The same with a next switch decided at 10.021 s (event at 10.03, follow
# 9 ms): 202 switched in while the span was settled on open and ran to
# 10.02 s: all of its 9600 us "in"; 101 as P began before the first
# event: 9800 us out of its turn, never "in".
{ cat "$tmp/sw"
  echo "            spin-101 [000] d..2.  10.030000: sched_cosched_switch: level=2 span_cpu=0 cpus=4 missing=0 old_cgroup=0 new_cgroup=55 drain_ns=50000 follow_ns=9000000"
} > "$tmp/sw5"
"$HERE/switchtrace" --level 2 --gid 55 --cpus 0-1 --g "202" --p "101" "$tmp/sw5" > "$tmp/sw5.out"
got="$(kv "$tmp/sw5.out" run level=2 g_out_us) $(kv "$tmp/sw5.out" run level=2 g_in_us) $(kv "$tmp/sw5.out" run level=2 p_out_us) $(kv "$tmp/sw5.out" run level=2 p_in_us)"
if [ "$got" = "9600 9600 9800 0" ]; then ok switchtrace-switched-in "$got"; else bad switchtrace-switched-in "got '$got'"; fi
"$HERE/switchtrace" --level 3 --gid 55 --cpus 4-7 --g "101" --p "201" "$tmp/sw" > "$tmp/sw3.out"
got="$(kv "$tmp/sw3.out" ev level=3 foreign)"
if [ "$got" = 2 ]; then ok switchtrace-foreign "$got"; else bad switchtrace-foreign "got '$got'"; fi
# Another span's switches in the same trace (package 1's, to G and
# back, while span 0 is settled on G, then open) are left out: span 0's
# figures are those of the trace without them.
{ sed -n 1,4p "$tmp/sw"
  echo "            spin-301 [004] d..2.  10.005000: sched_cosched_switch: level=2 span_cpu=4 cpus=4 missing=0 old_cgroup=0 new_cgroup=55 drain_ns=50000 follow_ns=100000"
  sed -n 5,7p "$tmp/sw"
  echo "            spin-301 [004] d..2.  10.015000: sched_cosched_switch: level=2 span_cpu=4 cpus=4 missing=0 old_cgroup=55 new_cgroup=0 drain_ns=50000 follow_ns=100000"
  sed -n '8,$p' "$tmp/sw"
} > "$tmp/sw6"
"$HERE/switchtrace" --level 2 --gid 55 --cpus 0-1 --g "101 102" --p "201 202" "$tmp/sw6" > "$tmp/sw6.out"
got="$(kv "$tmp/sw6.out" ev level=2 foreign) $(kv "$tmp/sw6.out" ev level=2 events) $(kv "$tmp/sw6.out" ev level=2 missed) $(kv "$tmp/sw6.out" ev level=2 cpus) $(kv "$tmp/sw6.out" run level=2 g_us) $(kv "$tmp/sw6.out" run level=2 g_out_us) $(kv "$tmp/sw6.out" run level=2 p_us) $(kv "$tmp/sw6.out" run level=2 p_out_us) $(kv "$tmp/sw6.out" run level=2 p_in_us) $(kv "$tmp/sw6.out" idle level=2 g_turn_cpu_us)"
if [ "$got" = "2 2 0 4:2, 19950 0 9600 0 0 19600" ]; then ok switchtrace-other-span "$got"; else bad switchtrace-other-span "got '$got'"; fi
# vmrun on a canned dump (ns from the window's start): A's gaps of 200 us
# (across the start), 30 us (shorter than --gap-us 50: it ran) and 100
# us; B's of 150 us and one across the end; X runs 100 us while only B
# does, 100 us while only B does, 50 us while only A does.  By hand: A ran
# 800 us, B 750, both 550 of the 1000 us union; apart 4 windows, 450 us,
# the longest 150; X 250 us, all of it beside the gang.
cat > "$tmp/vm.dump" <<'DUMP'
# vmrun dump: ns relative to the window's start
window 1000000
vcpu A 0
gap A -100000 100000
gap A 400000 430000
gap A 600000 700000
vcpu B 1
gap B 300000 450000
gap B 900000 2000000
x X
xseg 0 100000
xseg 600000 700000
xseg 950000 1000000
DUMP
"$HERE/vmrun" --analyze "$tmp/vm.dump" > "$tmp/vm"
got="$(kv "$tmp/vm" vcpu A run_us) $(kv "$tmp/vm" vcpu A gaps) $(kv "$tmp/vm" vcpu B run_us) $(kv "$tmp/vm" vcpu B max_gap_us) $(kv "$tmp/vm" x X run_us) $(kv "$tmp/vm" pair A,B both_us) $(kv "$tmp/vm" pair A,B union_us) $(kv "$tmp/vm" pair A,B corun_pct_of_union) $(kv "$tmp/vm" pair A,B apart_n) $(kv "$tmp/vm" pair A,B apart_max_us) $(kv "$tmp/vm" gpair AB,X overlap_us) $(kv "$tmp/vm" gpair AB,X overlap_pct_of_min) $(kv "$tmp/vm" gpair AB,X overlap_n)"
if [ "$got" = "800 2 750 150 250 550 1000 55.00 4 150 250 100.000 3" ]; then ok vmrun-analyze "$got"; else bad vmrun-analyze "got '$got'"; fi
# Per vCPU, X beside it: A 50 us once, B 200 us in two windows.
got="$(kv "$tmp/vm" vcpu A x_overlap_us) $(kv "$tmp/vm" vcpu A x_overlap_n) $(kv "$tmp/vm" vcpu B x_overlap_us) $(kv "$tmp/vm" vcpu B x_overlap_n) $(kv "$tmp/vm" vcpu B x_overlap_max_us)"
if [ "$got" = "50 1 200 2 100" ]; then ok vmrun-x-per-vcpu "$got"; else bad vmrun-x-per-vcpu "got '$got'"; fi
# Follow bound 100 us: the 150 us apart window is long; gap threshold
# 120 us: A's 100 us gap counts as running, so A ran from 100 us on.
"$HERE/vmrun" --analyze "$tmp/vm.dump" --follow-us 100 --gap-us 120 > "$tmp/vm2"
got="$(kv "$tmp/vm2" pair A,B apart_long_us) $(kv "$tmp/vm2" vcpu A run_us) $(kv "$tmp/vm2" vcpu A gaps) $(kv "$tmp/vm2" pair A,B both_us) $(kv "$tmp/vm2" pair A,B corun_follow_pct) $(kv "$tmp/vm2" run summary gap_us)"
if [ "$got" = "150 900 1 650 85.00 120" ]; then ok vmrun-thresholds "$got"; else bad vmrun-thresholds "got '$got'"; fi
printf 'window 1000\nvcpu A 0\nbogus\n' > "$tmp/vm.bad"
if "$HERE/vmrun" --analyze "$tmp/vm.bad" > /dev/null 2> "$tmp/vm.err"; then bad vmrun-bad-dump "accepted"
else ok vmrun-bad-dump "$(cat "$tmp/vm.err")"; fi

# vmspin.elf: a 32-bit multiboot ELF whose header QEMU finds.
if od -A n -t x4 -j 4096 -N 12 "$HERE/vmspin.elf" | grep -q "1badb002 00000000 e4524ffe"; then ok vmspin-multiboot-header
else bad vmspin-multiboot-header "$(od -A d -t x4 "$HERE/vmspin.elf" | grep -m1 1badb002)"; fi

# Same CPU: never at once.
"$CORUN" --no-cgroup --duration 2 --task a:0 --task b:0 > "$tmp/same" 2>&1
rc=$?
ov=$(kv "$tmp/same" pair a,b overlap_us)
sov=$(kv "$tmp/same" pair a,b sched_overlap_us)
ra=$(kv "$tmp/same" task a run_us); rb=$(kv "$tmp/same" task b run_us)
win=$(kv "$tmp/same" run summary window_us)
if [ $rc -eq 0 ] && [ "$ov" = 0 ] && [ "$sov" = 0 ] && [ -n "$ra" ] && ge "$win" "$((ra + rb))"; then
	ok corun-same-cpu "overlap ${ov} us (sched view ${sov} us), runs ${ra}+${rb} us <= window ${win} us"
else
	bad corun-same-cpu "rc=$rc overlap=${ov:-?} sched=${sov:-?} runs=${ra:-?}+${rb:-?} window=${win:-?}"
	cat "$tmp/same"
fi

# Different CPUs, gap longer than host preemption: ~100% together.
"$CORUN" --no-cgroup --duration 3 --gap-us 1000000 --task a:0 --task b:1 > "$tmp/diff" 2>&1
rc=$?
pm=$(kv "$tmp/diff" pair a,b overlap_pct_of_min)
cu=$(kv "$tmp/diff" pair a,b corun_pct_of_union)
wa=$(kv "$tmp/diff" task a run_pct_of_window)
if [ $rc -eq 0 ] && ge "${pm:-0}" 99 && ge "${cu:-0}" 99 && ge "${wa:-0}" 99; then
	ok corun-two-cpus "1 s gap: overlap ${pm}% of min, co-run ${cu}% of union, a ran ${wa}% of window"
else
	bad corun-two-cpus "1 s gap: rc=$rc overlap=${pm:-?}% corun=${cu:-?}% a=${wa:-?}%"
	cat "$tmp/diff"
fi

# Different CPUs, default gap: information only.
"$CORUN" --no-cgroup --duration 2 --task a:0 --task b:1 > "$tmp/diff2" 2>&1
echo "info different cpus, 50 us gap: overlap $(kv "$tmp/diff2" pair a,b overlap_pct_of_min)% of min," \
	"runs $(kv "$tmp/diff2" task a run_pct_of_window)% / $(kv "$tmp/diff2" task b run_pct_of_window)% of window (host load)"

# Groups: a1+a2 in group A, b in B.
"$CORUN" --no-cgroup --duration 1 --task a1:0:-:A --task a2:1:-:A --task b:0:-:B > "$tmp/grp" 2>&1
if grep -q '^group A tasks=a1+a2 ' "$tmp/grp" && grep -q '^gpair A,B ' "$tmp/grp" &&
   [ "$(kv "$tmp/grp" pair a1,b overlap_us)" = 0 ]; then
	ok corun-groups "A=a1+a2, B=b, a1/b (same cpu) overlap 0"
else
	bad corun-groups "records missing"; cat "$tmp/grp"
fi
# Apart intervals: all + apart = union (up to rounding), follow = 100 -
# long; a group of one task is never apart.
al=$(kv "$tmp/grp" group A all_us); ap=$(kv "$tmp/grp" group A apart_us)
un=$(kv "$tmp/grp" group A union_us); lp=$(kv "$tmp/grp" group A apart_long_pct_of_union)
fp=$(kv "$tmp/grp" group A corun_follow_pct)
if [ -n "$fp" ] && awk -v a="$al" -v p="$ap" -v u="$un" -v l="$lp" -v f="$fp" \
	'BEGIN { d = a + p - u; e = l + f - 100; exit !(d * d <= 4 && e * e < 1e-6) }' &&
   [ "$(kv "$tmp/grp" group B apart_n)" = 0 ] &&
   [ "$(kv "$tmp/grp" group B sched_corun_follow_pct)" = 100.0000 ] &&
   [ "$(kv "$tmp/grp" run summary follow_us)" = 1000 ]; then
	ok corun-follow "A: all ${al} + apart ${ap} (n=$(kv "$tmp/grp" group A apart_n)) = union ${un} us, co-run ${fp}% counting follow windows"
else
	bad corun-follow "all=${al:-?} apart=${ap:-?} union=${un:-?} long=${lp:-?}% follow=${fp:-?}%"
fi

# cgroup.procs is written (fixture tree instead of /sys/fs/cgroup).
mkdir -p "$tmp/cg/x/y" && : > "$tmp/cg/x/y/cgroup.procs"
"$CORUN" --cgroup-root "$tmp/cg" --duration 0.2 --task t:0:x/y > "$tmp/cgout" 2>&1
if [ $? -eq 0 ] && grep -qE '^[0-9]+$' "$tmp/cg/x/y/cgroup.procs" &&
   grep -q '^task t cpu=0 group=x/y ' "$tmp/cgout"; then
	ok corun-cgroup-procs "pid $(cat "$tmp/cg/x/y/cgroup.procs") written to x/y/cgroup.procs, group x/y"
else
	bad corun-cgroup-procs "pid not written"; cat "$tmp/cgout"
fi
"$CORUN" --cgroup-root "$tmp/cg" --duration 0.2 --task t:0:nope > "$tmp/cgout2" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'nope/cgroup.procs: No such file' "$tmp/cgout2"; then
	ok corun-cgroup-missing "exit 1, $(grep -m1 'nope' "$tmp/cgout2")"
else
	bad corun-cgroup-missing "rc=$rc"; cat "$tmp/cgout2"
fi

# usage_exits_1 NAME PROG ARGS...: each ARGS (one word-split command line)
# is refused with exit 1.
usage_exits_1() {
	name=$1 prog=$2 badargs=""
	shift 2
	for args in "$@"; do
		# shellcheck disable=SC2086
		"$prog" $args > /dev/null 2>&1
		rc=$?
		[ $rc -eq 1 ] || badargs="$badargs '$args'->$rc"
	done
	if [ -z "$badargs" ]; then ok "$name" "$# bad command lines -> exit 1"; else bad "$name" "$badargs"; fi
}

# Bad usage: exit 1, nothing started.
usage_exits_1 corun-usage "$CORUN" "" "--task a" "--task a:x" "--task a:0 --task a:1" \
	"--duration -1 --task a:0" "--task a,b:0" "--follow-us x --task a:0" \
	"--follow-us -1 --task a:0"

usage_exits_1 vmrun-usage "$HERE/vmrun" "" "--mem x" "--vcpus 2" "--mem x --vcpus 1" \
	"--mem x --vcpus 9" "--mem x --vcpus 2.5" "--mem x --vcpus 2 --x a" "--mem x --vcpus 2 --gap-us 0" \
	"--mem $tmp/missing --vcpus 2" "--analyze $tmp/missing" "--mem x --vcpus 2 extra"

# vmspin.elf and vmrun end to end, where the host has QEMU: a 2-vCPU VM
# (TCG) whose RAM is a file here, X on CPU 1, a 1 s window.  The host may
# be busy, so only that it measured is judged: both vCPUs found by APIC
# id and seen running, X ran, the calibration took brackets and triples.
# On a host whose CPUs' TSCs differ, QEMU's monotonic fix-up of its ticks
# moves the VM's TSC offset: vmrun then says so and exits 2 (judged as
# measured; offset_ok is printed).
if command -v qemu-system-x86_64 > /dev/null; then
	timeout 30 qemu-system-x86_64 -accel tcg,thread=multi -smp 2 -m 32 -nodefaults \
		-object memory-backend-file,id=mem,size=32M,mem-path="$tmp/vm.ram",share=on \
		-machine memory-backend=mem -display none -serial none -monitor none \
		-kernel "$HERE/vmspin.elf" > "$tmp/qemu.log" 2>&1 &
	qpid=$!
	for _ in $(seq 50); do [ -s "$tmp/vm.ram" ] && break; sleep 0.1; done
	"$HERE/vmrun" --mem "$tmp/vm.ram" --vcpus 2 --x 1 --duration 1 --warmup 0.2 > "$tmp/vme2e" 2> "$tmp/vme2e.err"
	rc=$?
	kill "$qpid" 2> /dev/null; wait "$qpid" 2> /dev/null
	if { [ $rc -eq 0 ] || { [ $rc -eq 2 ] && grep -q "TSC offset moved" "$tmp/vme2e.err" &&
	       [ "$(grep -c '' "$tmp/vme2e.err")" = 1 ]; }; } &&
	   [ "$(kv "$tmp/vme2e" vcpu A apic) $(kv "$tmp/vme2e" vcpu B apic)" = "0 1" ] &&
	   [ "$(kv "$tmp/vme2e" vcpu A run_us)" -gt 0 ] && [ "$(kv "$tmp/vme2e" vcpu B run_us)" -gt 0 ] &&
	   [ "$(kv "$tmp/vme2e" x X run_us)" -gt 0 ] && [ "$(kv "$tmp/vme2e" calib summary brackets)" -gt 0 ] &&
	   [ "$(kv "$tmp/vme2e" calib summary checks)" -gt 0 ]; then
		ok vmrun-qemu "rc=$rc: vCPU co-run $(kv "$tmp/vme2e" pair A,B corun_pct_of_union)%, overlap with X $(kv "$tmp/vme2e" gpair AB,X overlap_pct_of_min)%, loop $(kv "$tmp/vme2e" vcpu A loop_ns) ns, TSC $(kv "$tmp/vme2e" calib summary tsc_mhz) MHz, offset_ok $(kv "$tmp/vme2e" calib summary offset_ok), error bound $(kv "$tmp/vme2e" calib summary err_us) us (host load)"
	else
		bad vmrun-qemu "rc=$rc"; cat "$tmp/vme2e" "$tmp/vme2e.err" "$tmp/qemu.log"
	fi
else
	echo "info no qemu-system-x86_64 on this host: vmspin.elf and vmrun not run end to end"
fi

# schedw: exact errno names.
: > "$tmp/f"
out=$("$SCHEDW" "$tmp/f" 1); rc=$?
[ "$out" = ok ] && [ $rc -eq 0 ] && [ "$(cat "$tmp/f")" = 1 ] && ok schedw-file "wrote 1: ok" || bad schedw-file "$out rc=$rc"
out=$("$SCHEDW" -n "$tmp/f" 1); rc=$?
[ "$out" = ok ] && [ "$(od -An -c "$tmp/f" | tr -d ' ')" = '1\n' ] && ok schedw-newline "-n appends a newline" || bad schedw-newline "$out"
out=$("$SCHEDW" "$tmp/missing/file" 1); rc=$?
[ "$out" = ENOENT ] && [ $rc -eq 1 ] && ok schedw-enoent "missing file: ENOENT, exit 1" || bad schedw-enoent "$out rc=$rc"
out=$("$SCHEDW" /dev/full 1); rc=$?
[ "$out" = ENOSPC ] && [ $rc -eq 1 ] && ok schedw-enospc "/dev/full: ENOSPC, exit 1" || bad schedw-enospc "$out rc=$rc"
# -e: escapes, a NUL included; -s: one fd, one write per value, no
# truncation between them (a pipe shows each write as it came).
: > "$tmp/f"
out=$("$SCHEDW" -e "$tmp/f" '1\x00x\t\n'); rc=$?
[ "$out" = ok ] && [ "$(od -An -c "$tmp/f" | tr -d ' ')" = '1\0x\t\n' ] && ok schedw-escapes "-e: NUL, tab, newline" || bad schedw-escapes "$out $(od -An -c "$tmp/f")"
out=$("$SCHEDW" -s "$tmp/f" 1 0); rc=$?
[ "$(echo $out)" = "ok ok" ] && [ $rc -eq 0 ] && [ "$(head -c 2 "$tmp/f")" = 10 ] && ok schedw-sequence "-s: two writes on one fd" || bad schedw-sequence "$out rc=$rc"
out=$("$SCHEDW" -s /dev/full 1 0); rc=$?
[ "$(echo $out)" = "ENOSPC ENOSPC" ] && [ $rc -eq 1 ] && ok schedw-sequence-errors "-s: one result per write, exit 1" || bad schedw-sequence-errors "$out rc=$rc"
# -p: pairs, each file opened anew (a write lands at offset 0, without
# truncation), one result per pair, a failed open or write does not stop it.
: > "$tmp/f"; : > "$tmp/g"
out=$("$SCHEDW" -p "$tmp/f" 12 "$tmp/missing/file" 1 /dev/full 1 "$tmp/g" 3 "$tmp/f" 4); rc=$?
[ "$(echo $out)" = "ok ENOENT ENOSPC ok ok" ] && [ $rc -eq 1 ] && [ "$(cat "$tmp/f") $(cat "$tmp/g")" = "42 3" ] &&
	ok schedw-pairs "-p: one open and write per pair, every pair reported, exit 1" || bad schedw-pairs "$out rc=$rc $(cat "$tmp/f" "$tmp/g")"
"$SCHEDW" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok schedw-usage "no arguments: exit 2" || bad schedw-usage "rc=$rc"
"$SCHEDW" -p "$tmp/f" 1 "$tmp/g" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok schedw-pairs-usage "-p with an odd count: exit 2" || bad schedw-pairs-usage "rc=$rc"

# gangbench: both workloads make progress and end on their own (a side
# blocked in read() must see the stop); bad command lines exit 1.
GANGBENCH=$HERE/gangbench
for w in "pingpong --cpus 0,0" "pingpong --cpus 0,1" "barrier --cpus 0,1"; do
	# shellcheck disable=SC2086
	out=$(timeout 20 "$GANGBENCH" $w --duration 0.5); rc=$?
	n=$(echo "$out" | sed -n 's/.* rounds=\([0-9]*\) .*/\1/p')
	if [ $rc -eq 0 ] && [ "${n:-0}" -gt 0 ]; then ok "gangbench-${w%% *}-${w##* }" "$n rounds in 0.5 s"
	else bad "gangbench-${w%% *}-${w##* }" "rc=$rc out='$out'"; fi
done
usage_exits_1 gangbench-usage "$GANGBENCH" "" "spin --cpus 0,1" "barrier" "barrier --cpus 0,0" \
	"pingpong --cpus x" "pingpong --cpus 0,1 --duration 0"

# corun --sleeper: wakes up, records its wakeups, runs a small part of
# the window (100 us bursts, 1 ms sleeps); a plain --task has no wakeup keys.
"$CORUN" --no-cgroup --duration 1 --task a:0 --sleeper w:1 > "$tmp/sleep" 2>&1
rc=$?
wk=$(kv "$tmp/sleep" task w wakeups); wr=$(kv "$tmp/sleep" task w run_pct_of_window)
if [ $rc -eq 0 ] && [ "${wk:-0}" -gt 50 ] && ! ge "${wr:-100}" 50 &&
   [ -z "$(kv "$tmp/sleep" task a wakeups)" ]; then
	ok corun-sleeper "$wk wakeups in 1 s, ran ${wr}% of the window, oversleep avg $(kv "$tmp/sleep" task w wake_lat_avg_us) us"
else
	bad corun-sleeper "rc=$rc wakeups=${wk:-?} run=${wr:-?}%"; cat "$tmp/sleep"
fi

# cookiectl: one line per step; usage errors exit 2 and run no step.
out=$("$HERE/cookiectl" get self); rc=$?
if echo "$out" | grep -qE '^get self: (0x[0-9a-f]+|EINVAL)$'; then
	ok cookiectl-get "'$out' (EINVAL: the host kernel has no core scheduling)"
else
	bad cookiectl-get "rc=$rc out='$out'"
fi
# usage_exits_2 NAME PROG ARGS...: like usage_exits_1, exit 2, no output.
usage_exits_2() {
	name=$1 prog=$2 badargs=""
	shift 2
	for args in "$@"; do
		# shellcheck disable=SC2086
		o=$("$prog" $args 2> /dev/null)
		rc=$?
		[ $rc -eq 2 ] && [ -z "$o" ] || badargs="$badargs '$args'->$rc"
	done
	if [ -z "$badargs" ]; then ok "$name" "$# bad command lines -> exit 2"; else bad "$name" "$badargs"; fi
}
usage_exits_2 cookiectl-usage "$HERE/cookiectl" "" "get" "get x" "get self bogus" "create 0" "cgroup"
usage_exits_2 corehold-usage "$HERE/corehold" "x" "--ready"
# corehold: holds (killed by timeout after writing the ready file) or says
# why the kernel refused the cookie (exit 1).
timeout 2 "$HERE/corehold" --ready "$tmp/ready" > "$tmp/hold" 2>&1; rc=$?
if { [ $rc -eq 124 ] && grep -qE '^[0-9]+ 0x[0-9a-f]+$' "$tmp/ready"; } ||
   { [ $rc -eq 1 ] && grep -q 'PR_SCHED_CORE_CREATE' "$tmp/hold" && [ ! -e "$tmp/ready" ]; }; then
	ok corehold "rc=$rc: $(head -1 "$tmp/hold")"
else
	bad corehold "rc=$rc: $(cat "$tmp/hold")"
fi

echo "host tool tests: $fails failed"
[ $fails -eq 0 ]
