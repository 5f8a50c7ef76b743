#!/bin/bash
# timeout: 120
# Exclusion and gang at level 1: two coscheduled groups A and B, each with
# one spinner on CPU 2 and one on CPU 3 (SMT siblings; CPU 0 keeps the
# housekeeping).  corun records when each spinner really ran (guest clock).
#  - threads of different groups ran at once <= 0.1% of their run time
#    (worst of: A vs B as groups, a2 vs b3, a3 vs b2; each relative to the
#    shorter of the two run times);
#  - the two threads of one group ran together >= 90% of the time either ran.
# Exclusion is judged on what executed (every clock gap counts as not
# running: the strictest view).  Gang is judged on what the scheduler ran,
# from its own sched_switch trace on the two CPUs (corun --trace, global
# CLOCK_MONOTONIC): a thread runs from the switch to it to the switch away
# from it, so neither interrupts (out of scope, as in the RFC) nor a vCPU
# that the host stole count as the scheduler not running it.  All three
# views (raw, sched: clock gaps with a context switch, trace) are printed.
. "$(dirname "$0")/lib.sh"
test_init 20-exclusion
require_cosched
cosched_poll_window 10000000	# the gang floor under TCG (lib.sh)

for g in A B; do
	cg_create $g
	cg_cpus $g "$C1,$C2"
	if ! cg_sched $g 1 && [ "$COSCHED" = 1 ]; then fail "cannot coschedule $g"; fi
done

# Keep every segment for analysis on the host (results folder, if any).
dump=()
[ -d "${COSCHED_RESULTS:-}" ] && dump=(--dump "$COSCHED_RESULTS/$TEST_NAME.segments")
tracefs_ready || fail "no sched_switch tracing"
corun_run out --trace "${dump[@]}" \
	--task a2:"$C1":"$(cg_rel A)":A --task a3:"$C2":"$(cg_rel A)":A \
	--task b2:"$C1":"$(cg_rel B)":B --task b3:"$C2":"$(cg_rel B)":B

g_ov=$(kv out gpair A,B overlap_pct_of_min)
p1=$(kv out pair a2,b3 overlap_pct_of_min)
p2=$(kv out pair a3,b2 overlap_pct_of_min)
cross=$(max "$g_ov" "$p1" "$p2")
s_cross=$(max "$(kv out gpair A,B sched_overlap_pct_of_min)" \
	"$(kv out pair a2,b3 sched_overlap_pct_of_min)" "$(kv out pair a3,b2 sched_overlap_pct_of_min)")
co_a=$(kv out pair a2,a3 trace_corun_pct_of_union)
co_b=$(kv out pair b2,b3 trace_corun_pct_of_union)
s_a=$(kv out pair a2,a3 sched_corun_pct_of_union)
s_b=$(kv out pair b2,b3 sched_corun_pct_of_union)
raw_a=$(kv out pair a2,a3 corun_pct_of_union)
raw_b=$(kv out pair b2,b3 corun_pct_of_union)
t_cross=$(max "$(kv out gpair A,B trace_overlap_pct_of_min)" \
	"$(kv out pair a2,b3 trace_overlap_pct_of_min)" "$(kv out pair a3,b2 trace_overlap_pct_of_min)")
log "# cross-group overlap: groups $g_ov%, a2/b3 $p1%, a3/b2 $p2% of the shorter run (sched view: $s_cross%, trace: $t_cross%)"
log "# same-group co-run (trace): A $co_a%, B $co_b% of the time either ran (sched view: A $s_a%, B $s_b%; raw: A $raw_a%, B $raw_b%)"
log "# trace: $(kv out run summary trace_events) sched_switch events, $(kv out run summary trace_lost) lost"
log "# gaps without a context switch: a2 $(kv out task a2 quiet_gaps) ($(kv out task a2 quiet_gap_us) us), a3 $(kv out task a3 quiet_gaps) ($(kv out task a3 quiet_gap_us) us)"
log "# shares: A $(kv out group A share_pct)%, B $(kv out group B share_pct)%"

check_le "cross-group overlap %" "$cross" 0.1
check_ge "A co-run %" "$co_a" 90
check_ge "B co-run %" "$co_b" 90

finish "overlap $(num "$cross")% (<=0.1%) [sched $(num "$s_cross")%, trace $(num "$t_cross")%], co-run A $(num "$co_a")% B $(num "$co_b")% (>=90%, trace) [sched $(num "$s_a")% $(num "$s_b")%, raw $(num "$raw_a")% $(num "$raw_b")%], shares A $(num "$(kv out group A share_pct)")% B $(num "$(kv out group B share_pct)")%"
