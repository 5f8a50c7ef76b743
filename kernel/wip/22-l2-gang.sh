#!/bin/bash
# timeout: 240
# boot: cosched_max_level=3
# Issue 10 (prototype): level 2 on package 0 (CPUs 0-3): a group G
# coscheduled at level 2 with 4 spinners (one per CPU) against a plain
# group P with 4 spinners on the same CPUs.  Views as in 40-fairness:
# shares and overlap from the clock loops, co-run also from the trace.
# Floors (issue 10): overlap <= 0.1%, G co-run >= 90%, shares 50 +- 10 at
# 100:100 and 67 +- 10 at 200:100.
. "$(dirname "$0")/lib.sh"
test_init 22-l2-gang
require_cosched
log "# levels: $(for l in $COSCHED_SYSFS/levels/*; do echo -n "$(basename $l)=$(cat $l/name):$(paste -sd' ' $l/spans) "; done)"

cg_create G; cg_cpus G 0-3
cg_create P; cg_cpus P 0-3
if ! cg_sched G 2 && [ "$COSCHED" = 1 ]; then fail "cannot coschedule G at level 2"; fi

tasks() {
	local c
	for c in 0 1 2 3; do
		echo --task g$c:$c:"$(cg_rel G)":G --task p$c:$c:"$(cg_rel P)":P
	done
}
measure() {
	# shellcheck disable=SC2046
	corun_run "$1" --trace $(tasks)
}
tracefs_ready || fail "no sched_switch tracing"

T=/sys/kernel/tracing
echo > $T/trace; echo 1 > $T/tracing_on
cg_weight G 100; cg_weight P 100
measure eq
grep -c decide $T/trace | sed 's/^/# decisions: /'
grep -E 'decide|sync|gent' $T/trace | sed -n '200,260p' | sed 's/^/# T /'
grep -E 'sync' $T/trace | tail -20 | sed 's/^/# T /'
s_eq=$(kv eq group G share_pct); x_eq=$(kv eq gpair G,P overlap_pct_of_min)
c_eq=$(kv eq group G all_pct_of_union); t_eq=$(kv eq group G trace_all_pct_of_union)
x_eq_t=$(kv eq gpair G,P trace_overlap_pct_of_min)
check_within "equal weights: G share %" "$s_eq" 50 10
check_le "equal weights: G/P overlap %" "$x_eq" 0.1
check_ge "equal weights: G co-run % (trace)" "$t_eq" 90

cg_weight G 200; cg_weight P 100
measure w2
s_w2=$(kv w2 group G share_pct); x_w2=$(kv w2 gpair G,P overlap_pct_of_min)
c_w2=$(kv w2 group G all_pct_of_union)
check_within "weight 200:100: G share %" "$s_w2" 66.67 10
check_le "weight 200:100: G/P overlap %" "$x_w2" 0.1

cg_sched G 0 || fail "cannot set G back to 0"
finish "G share $(num "$s_eq")%/$(num "$s_w2")% (50/67+-10), G/P overlap $(num "$x_eq")%/$(num "$x_w2")% (<=0.1%), G co-run raw $(num "$c_eq")%/$(num "$c_w2")% trace $(num "$t_eq")% (>=90%), trace overlap $(num "$x_eq_t")%"
