#!/bin/bash
# timeout: 600
# boot: cosched_max_level=8
# Issue 12 point 2, first half: the peer suites of 70-peer-suites (the
# kernel's own cgroup and sched selftests) with coscheduling enabled at
# its highest level (cosched_max_level=8, clamped by the kernel to the
# highest level it implements) and nothing coscheduled: no group has
# cpu.scheduled set before or after.  Core scheduling is held on from
# boot by the runner's corehold, as in the stock baseline (see 70).
# Each test's result must be one the stock kernel gave in the recorded
# baseline (tests/peer-baseline/stock.txt, make peer-baseline).
. "$(dirname "$0")/lib.sh"
TEST_NAME=71-peer-maxlevel	# no test_init: the suites make their own cgroups
P=$(dirname "$0")
OUT=/tmp/71-peer-results.txt
log "# $TEST_NAME on $(uname -r) ($(uname -v)), flavour ${COSCHED_FLAVOUR:-?}"
log "# cmdline: $(cat /proc/cmdline)"
hold=$(corehold_state)
ml=$(rd "$COSCHED_SYSFS/max_level")
top=$(ls "$COSCHED_SYSFS/levels" 2>/dev/null | sort -n | tail -1)
log "# max_level $ml, levels offered: $(ls "$COSCHED_SYSFS/levels" 2>/dev/null | paste -sd' ')"
check_gt "max_level (enabled)" "$ml" 0
# Every level up to max_level is listed, and max_level is the highest.
check_eq "highest level listed vs max_level" "${top:-0}" "$ml"
check_eq "core scheduling held on from boot (corehold)" "$([[ $hold == held* ]] && echo yes || echo "no: $hold")" yes

check_eq "groups coscheduled before the suites" "$(coscheduled_groups)" ""
t0=$(date +%s)
# test_cpuset_prs.sh runs alone, in 73-peer-cpuset and 74-peer-cpuset-maxlevel
# (60 cases with CPU hotplug: about 300 s under TCG, more than this boot's rest).
# peer-judge.sh reruns a suite with a difference once (TCG timing; see there).
cmp=$("$P/peer-judge.sh" "$OUT" test_cpu test_core test_freezer test_kill cs_prctl_test)
rc=$?
secs=$(($(date +%s) - t0))
check_eq "groups coscheduled after the suites" "$(coscheduled_groups)" ""
cp "$OUT" "$COSCHED_RESULTS/71-peer-results.txt" 2>/dev/null
log "--- against the stock baseline"
log "$cmp"
[ $rc -eq 0 ] || fail "results differ from stock: $(grep '^# differs:' <<< "$cmp" | sed 's/^# differs: //' | paste -sd';' | cut -c1-300)"
n=$(grep -c ' \(pass\|fail\|skip\)$' "$OUT")
[ "$n" -gt 0 ] || fail "no suite reported a test"
sum=$(grep '^# compare:' <<< "$cmp" | tail -1 | sed 's/^# compare: //')
flaky=$(sed -n 's/^# flaky here: \([^:]*\):.*/\1/p' <<< "$cmp" | paste -sd,)
[ -z "$flaky" ] || sum="$sum, flaky here (passed on rerun): $flaky"
stockfail=$(awk '!/^#/ && $3 ~ /fail/ { printf "%s%s", s, $2; s = "," }' /usr/lib/cosched-tests/peer-baseline/stock.txt 2>/dev/null)
finish "$n tests in $secs s, vs stock: $sum (stock fails too: ${stockfail:-none}) [max_level $ml, corehold $hold]"
