#!/bin/bash
# timeout: 240
# boot: cosched_max_level=3 cosched.levelhold=1
# Level 2 against plain work (issue 10): on package 0 (CPUs 0-3), a group
# G coscheduled at level 2 with 4 spinners, one per CPU, against a plain
# group P with 4 spinners on the same CPUs; equal weights, then 200:100.
#  - G and P ran at once <= 0.1% of the shorter run time (raw view: what
#    executed, every clock gap counts as not running);
#  - all 4 of G's threads ran together >= 90% of the time any of them ran
#    (trace view: the scheduler's sched_switch events; on this 2-core host
#    TCG executes at most 2 vCPUs at once, so no raw view can show 4);
#  - G's share of the run time 50% +- 10 at 100:100, 67% +- 10 at 200:100
#    (raw view).
# TCG: 8 vCPUs share this host's 2 cores, and a vCPU the host is not
# running cannot follow a switch: at 100 ms turns the co-run came out
# 76-91% (2026-12-05), about 10 ms lost at each end of a turn, against
# microseconds on hardware.  The default turns (12 ms for two equal
# entities) would lose most of each turn, so the test sets
# levels/2/turn_us to 400 ms, says so, and restores it.
# corun's setup may take longer than 10 s (why in 21-l2-exclusion):
# --setup-timeout 60, setup time printed.
. "$(dirname "$0")/lib.sh"
test_init 22-l2-gang
require_cosched
log "# levels: $(for l in "$COSCHED_SYSFS"/levels/*; do echo -n "$(basename "$l")=$(cat "$l/name"):$(paste -sd' ' "$l/spans") "; done)"
log "# levelhold: ${COSCHED_LEVELHOLD:-unset}"
level_turn_us 2 400000

cg_create G; cg_cpus G 0-3
cg_create P; cg_cpus P 0-3
if ! cg_sched G 2 && [ "$COSCHED" = 1 ]; then fail "cannot coschedule G at level 2"; fi

tasks() {
	local c
	for c in 0 1 2 3; do
		echo --task "g$c:$c:$(cg_rel G):G" --task "p$c:$c:$(cg_rel P):P"
	done
}
tracefs_ready || fail "no sched_switch tracing"

cg_weight G 100; cg_weight P 100
# shellcheck disable=SC2046
corun_run eq --trace --setup-timeout 60 $(tasks)
cg_weight G 200; cg_weight P 100
# shellcheck disable=SC2046
corun_run w2 --trace --setup-timeout 60 $(tasks)

s_eq=$(kv eq group G share_pct); s_w2=$(kv w2 group G share_pct)
x_eq=$(kv eq gpair G,P overlap_pct_of_min); x_w2=$(kv w2 gpair G,P overlap_pct_of_min)
t_eq=$(kv eq group G trace_all_pct_of_union); t_w2=$(kv w2 group G trace_all_pct_of_union)
tx_eq=$(kv eq gpair G,P trace_overlap_pct_of_min); tx_w2=$(kv w2 gpair G,P trace_overlap_pct_of_min)
log "# trace view overlap: $tx_eq% / $tx_w2%; corun setup $(kv eq run summary setup_us) us / $(kv w2 run summary setup_us) us"
check_le "100:100: G/P overlap % (raw)" "$x_eq" 0.1
check_ge "100:100: G co-run % (trace)" "$t_eq" 90
check_within "100:100: G share %" "$s_eq" 50 10
check_le "200:100: G/P overlap % (raw)" "$x_w2" 0.1
check_ge "200:100: G co-run % (trace)" "$t_w2" 90
check_within "200:100: G share %" "$s_w2" 66.67 10

[ "$COSCHED" = 1 ] && { cg_sched G 0 || fail "cannot set G back to 0"; }
finish "G/P overlap $(num "$x_eq")%/$(num "$x_w2")% (<=0.1%, raw), G co-run $(num "$t_eq")%/$(num "$t_w2")% (>=90%, trace), G share $(num "$s_eq")%/$(num "$s_w2")% (50/67 +-10), turn 400 ms"
