#!/bin/bash
# timeout: 180
# Fairness at level 1: a coscheduled group G with two spinners (CPU 2 and
# 3) against two plain tasks in a sibling cgroup P (CPU 2 and 3).  The
# core's time (the sum of the four run times) must follow cpu.weight:
# equal weights, G gets 50% +- 10%; weight 200 vs 100, G gets 67% +- 10%.
# Exclusion is checked too (G and P never ran at once, <= 0.1%), so that a
# kernel without coscheduling fails here for the right reason.
. "$(dirname "$0")/lib.sh"
test_init 40-fairness
require_cosched
cosched_poll_window 10000000	# the gang floor under TCG (lib.sh)

cg_create G; cg_cpus G "$C1,$C2"
cg_create P; cg_cpus P "$C1,$C2"
if ! cg_sched G 1 && [ "$COSCHED" = 1 ]; then fail "cannot coschedule G"; fi

tasks() {
	echo --task g2:"$C1":"$(cg_rel G)":G --task g3:"$C2":"$(cg_rel G)":G \
		--task p2:"$C1":"$(cg_rel P)":P --task p3:"$C2":"$(cg_rel P)":P
}
# measure OUT: exclusion worst case of groups and cross pairs
measure() {
	# shellcheck disable=SC2046
	corun_run "$1" $(tasks)
	max "$(kv "$1" gpair G,P overlap_pct_of_min)" \
		"$(kv "$1" pair g2,p3 overlap_pct_of_min)" \
		"$(kv "$1" pair g3,p2 overlap_pct_of_min)" > "$WORK/$1.cross"
}

log "# --- equal weights (100/100)"
cg_weight G 100; cg_weight P 100
measure eq
s_eq=$(kv eq group G share_pct); x_eq=$(cat "$WORK/eq.cross")
log "# G share $s_eq% (sched view $(kv eq group G sched_share_pct)%), cross-group overlap $x_eq%, G co-run $(kv eq group G sched_all_pct_of_union)% (raw $(kv eq group G all_pct_of_union)%)"
check_within "equal weights: G share %" "$s_eq" 50 10
check_le "equal weights: G/P overlap %" "$x_eq" 0.1

log "# --- weights G 200, P 100"
cg_weight G 200; cg_weight P 100
measure w2
s_w2=$(kv w2 group G share_pct); x_w2=$(cat "$WORK/w2.cross")
log "# G share $s_w2% (sched view $(kv w2 group G sched_share_pct)%), cross-group overlap $x_w2%, G co-run $(kv w2 group G sched_all_pct_of_union)% (raw $(kv w2 group G all_pct_of_union)%)"
check_within "weight 200:100: G share %" "$s_w2" 66.67 10
check_le "weight 200:100: G/P overlap %" "$x_w2" 0.1

finish "G share $(num "$s_eq")% at 100:100 (50+-10), $(num "$s_w2")% at 200:100 (67+-10); G/P overlap $(num "$x_eq")%, $(num "$x_w2")% (<=0.1%)"
