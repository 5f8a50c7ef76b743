#!/bin/bash
# timeout: 240
# boot: cosched_max_level=3 cosched.levelhold=1
# The sched_cosched_switch tracepoint (issue 10 point 7): one event per
# collective switch of a span above the core, emitted when the last CPU of
# the span followed (or when the next decision came first: missing > 0),
# with the level, the span's first CPU, its CPUs up, the old and new owner
# (cgroup id, 0: open to all work), and the times from the leader's
# decision until the new owner was published (drain_ns) and until the
# last CPU followed (follow_ns).
# At level 2 (G: 4 spinners on package 0, CPUs 0-3, against a plain group
# P with 4 spinners there) and at level 3 (8 and 8 on CPUs 0-7), with
# turns of 50 ms (levels/N/turn_us; about 100 switches; the default turns
# of a few ms would make the trace's recording lag below a large part of
# each turn under TCG), for DURATION s each, the test records the
# event and sched_switch in one trace instance and checks, with
# tests/tools/switchtrace:
#  - events >= 10, all of the span (level, span_cpu 0, cpus 4 or 8);
#  - owners are G's cgroup id (its inode) or 0, and alternate: each
#    event's old owner is the previous event's new owner (none missed);
#  - 0 < drain_ns <= follow_ns;
#  - the events tell what ran: from an event (every CPU followed) to the
#    next decision (the next event's time - follow_ns) the span is settled
#    on the new owner.  No spinner of G was switched in while the span was
#    settled on open, nor one of P while settled on G: such runs <= 0.1%
#    of their run time; all of G's run time while settled on open, and
#    P's while settled on G, <= 2% (trace view: the last CPU to drain
#    publishes, follows and may emit the event before the trace records
#    its own switch away from the old owner, and TCG can stop that vCPU
#    in between: 0.7-0.9% at level 3 with 50 ms turns, 2026-12-05; a CPU
#    that did not follow for whole turns would exceed it).  The switches
#    themselves are the overlap tests' business (21, 22); the time spent
#    switching is printed;
#  - the latencies' p50 and p99 per level are printed (make bench prints
#    them too).
# On the stock kernel there is no such event: the test fails there.
. "$(dirname "$0")/lib.sh"
test_init 24-level-trace
require_cosched
T=/sys/kernel/tracing
tracefs_ready || fail "no tracefs"
if [ ! -e $T/events/sched/sched_cosched_switch ]; then
	fail "no sched/sched_cosched_switch event in $T/events (stock kernel?)"
	finish "no sched_cosched_switch tracepoint"
fi
log "# format: $(grep -o 'print fmt: "[^"]*"' $T/events/sched/sched_cosched_switch/format)"

# measure LEVEL CPUS CPU...: G at LEVEL against plain P on CPUS.
measure() {
	local level=$1 cpus=$2 g=G$1 p=P$1 gid c gpids ppids
	shift 2
	level_turn_us "$level" 50000
	cg_create "$g"; cg_cpus "$g" "$cpus"
	cg_create "$p"; cg_cpus "$p" "$cpus"
	for c in "$@"; do spin_in "$g" "$c"; spin_in "$p" "$c"; done
	sleep 0.5
	cg_sched "$g" "$level" || fail "cannot coschedule $g at level $level"
	gid=$(cg_id "$g")
	sleep 1
	trace_record "$DURATION" "trace$level" sched_switch sched_cosched_switch || fail "no trace"
	gpids=$(tr '\n' ' ' < "$(cg_dir "$g")/cgroup.procs")
	ppids=$(tr '\n' ' ' < "$(cg_dir "$p")/cgroup.procs")
	log "# level $level: G $g (cgroup id $gid), spinners G $gpids/ P $ppids"
	switchtrace --level "$level" --gid "$gid" --cpus "$cpus" --g "$gpids" --p "$ppids" \
		"$WORK/trace$level" > "$WORK/l$level"
	cat "$WORK/l$level"
	spinners_stop
	cg_sched "$g" 0
}

# judge LEVEL NCPUS
judge() {
	local l=$1 n=$2 f=l$1
	check_ge "level $l: switch events" "$(kv "$f" ev "level=$l" events)" 10
	check_eq "level $l: events of another span or level" "$(kv "$f" ev "level=$l" foreign)" 0
	check_eq "level $l: events by cpus" "$(kv "$f" ev "level=$l" cpus)" "$n:$(kv "$f" ev "level=$l" events),"
	check_eq "level $l: owners neither G nor open" "$(kv "$f" ev "level=$l" strange)" 0
	check_eq "level $l: a switch missed (old != previous new)" "$(kv "$f" ev "level=$l" missed)" 0
	check_eq "level $l: not 0 < drain_ns <= follow_ns" "$(kv "$f" ev "level=$l" badlat)" 0
	check_gt "level $l: G ran (us)" "$(kv "$f" run "level=$l" g_us)" 0
	check_gt "level $l: P ran (us)" "$(kv "$f" run "level=$l" p_us)" 0
	check_le "level $l: G switched in while settled on open %" "$(kv "$f" run "level=$l" g_in_pct)" 0.1
	check_le "level $l: P switched in while settled on G %" "$(kv "$f" run "level=$l" p_in_pct)" 0.1
	check_le "level $l: G ran while settled on open %" "$(kv "$f" run "level=$l" g_out_pct)" 2
	check_le "level $l: P ran while settled on G %" "$(kv "$f" run "level=$l" p_out_pct)" 2
}

measure 2 0-3 0 1 2 3
judge 2 4
measure 3 0-7 0 1 2 3 4 5 6 7
judge 3 8
summary() { # LEVEL
	local f=l$1 k="level=$1"
	echo "level $1 $(kv $f ev $k events) switches ($(kv $f ev $k overtaken) overtaken, $(kv $f ev $k missed) missed), follow p50 $(kv $f lat $k follow_p50_us) us p99 $(kv $f lat $k follow_p99_us) us, switching $(kv $f run $k switch_pct)% of the time, G/P switched in outside $(kv $f run $k g_in_pct)%/$(kv $f run $k p_in_pct)% (<= 0.1%), ran outside $(kv $f run $k g_out_pct)%/$(kv $f run $k p_out_pct)% (<= 2%)"
}
finish "sched_cosched_switch: $(summary 2); $(summary 3)"
