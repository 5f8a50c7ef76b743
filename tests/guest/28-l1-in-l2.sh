#!/bin/bash
# timeout: 240
# boot: cosched_max_level=3 cosched.levelhold=1
# Level 1 inside level 2 (issue 10 point 3), as sched-cosched.rst
# describes it: O is coscheduled at level 2 on package 0 (CPUs 0-3, cores
# 0-1 and 2-3); its children I and J are coscheduled at level 1.  I has a
# spinner on CPUs 0 and 2, J on CPUs 1 and 3, so each core has one task of
# each; a plain group P outside O has a spinner on each of CPUs 0-3.
#  - the outer turn: P never ran beside I or J (raw view: what executed),
#    overlap <= 0.1% of the shorter;
#  - within O's turns, each core runs one inner group at a time: i0/j1 and
#    i2/j3, siblings of one core each, overlap <= 0.1% (raw view);
#  - everyone progresses: I, J and P each >= 10% of the run time.
# On a stock kernel and with cosched_max_level=0 the groups are not
# coscheduled and every overlap check fails.
# TCG: 400 ms turns at level 2, as in 22-l2-gang (why there).
. "$(dirname "$0")/lib.sh"
test_init 28-l1-in-l2
require_cosched
level_turn_us 2 400000

cg_create O; cg_cpus O 0-3
cg_create I O; cg_create J O
cg_create P; cg_cpus P 0-3
if [ "$COSCHED" = 1 ]; then
	cg_sched O 2 || fail "cannot coschedule O at level 2"
	cg_sched O/I 1 || fail "cannot coschedule O/I at level 1 inside O"
	cg_sched O/J 1 || fail "cannot coschedule O/J at level 1 inside O"
fi
tracefs_ready || fail "no sched_switch tracing"

args=(--task "i0:0:$(cg_rel O/I):I" --task "j1:1:$(cg_rel O/J):J"
      --task "i2:2:$(cg_rel O/I):I" --task "j3:3:$(cg_rel O/J):J")
for c in 0 1 2 3; do
	args+=(--task "p$c:$c:$(cg_rel P):P")
done
corun_run out --trace --setup-timeout 60 "${args[@]}"

ip=$(kv out gpair I,P overlap_pct_of_min)
jp=$(kv out gpair J,P overlap_pct_of_min)
c01=$(kv out pair i0,j1 overlap_pct_of_min)
c23=$(kv out pair i2,j3 overlap_pct_of_min)
s_i=$(kv out group I share_pct); s_j=$(kv out group J share_pct); s_p=$(kv out group P share_pct)
log "# outer: I/P $ip%, J/P $jp% (raw; trace $(kv out gpair I,P trace_overlap_pct_of_min)%, $(kv out gpair J,P trace_overlap_pct_of_min)%)"
log "# inner: core 0-1 i0/j1 $c01%, core 2-3 i2/j3 $c23% (raw); across cores i0/j3 $(kv out pair i0,j3 overlap_pct_of_min)%, i0/i2 $(kv out pair i0,i2 overlap_pct_of_min)%"
log "# shares: I $s_i%, J $s_j%, P $s_p% (raw); corun setup $(kv out run summary setup_us) us"
check_le "I/P overlap % (raw)" "$ip" 0.1
check_le "J/P overlap % (raw)" "$jp" 0.1
check_le "core 0-1: i0/j1 overlap % (raw)" "$c01" 0.1
check_le "core 2-3: i2/j3 overlap % (raw)" "$c23" 0.1
check_ge "I share %" "$s_i" 10
check_ge "J share %" "$s_j" 10
check_ge "P share %" "$s_p" 10

if [ "$COSCHED" = 1 ]; then
	for g in O/I O/J O; do cg_sched "$g" 0 || fail "cannot set $g back to 0"; done
fi
finish "outer I/P $(num "$ip")% J/P $(num "$jp")%, inner per core $(num "$c01")% $(num "$c23")% (<=0.1%, raw), shares I $(num "$s_i")% J $(num "$s_j")% P $(num "$s_p")% (>=10%), turn 400 ms"
