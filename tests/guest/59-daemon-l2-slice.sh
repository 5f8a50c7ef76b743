#!/bin/bash
# timeout: 200
# boot: cosched_max_level=3 cosched.levelhold=1
# coschedd places a level-2 slice from its configuration (issue 10: "the
# daemon places a level-2 slice from its config", end to end).  CPUs 0-1
# are reserved, so package 1 (CPUs 4-7) is the only whole span of level 2:
# the slice t59.slice, declared with Level=package Spans=1, must get
# AllowedCPUs= 4-7 through systemd and cpu.scheduled 2.  Then coscheduling
# must really happen there: 4 spinners in a service of the slice, one per
# CPU 4-7, against a plain group X with a spinner on each of the same CPUs:
#  - the slice's tasks and X's ran at once <= 0.1% of the shorter run
#    (raw view: what executed);
#  - all 4 of the slice's spinners ran together >= 90% of the time any of
#    them ran (trace view: TCG runs at most 2 vCPUs at once on this host,
#    see 22-l2-gang);
#  - turns of 400 ms at level 2 for TCG, as in 22-l2-gang.
# Removing the group from the configuration sets cpu.scheduled 0 and
# clears AllowedCPUs=.  On the stock kernel there is no level 2: the
# daemon leaves the group in error and nothing is placed, so it fails.
. "$(dirname "$0")/lib.sh"
test_init 59-daemon-l2-slice
require_cosched
level_turn_us 2 400000

SLICE=t59.slice
SVC=t59-work.service
S=$CG/$SLICE
daemon_test /etc/coschedd/conf.d/59-daemon-l2-slice.conf
trap 'rc=$?; systemctl stop "$SVC" 2>/dev/null; daemon_teardown; (exit $rc); cleanup' EXIT
systemd-run --quiet --unit="$SVC" --slice="$SLICE" -p Type=exec sleep 600 || fail "systemd-run $SVC"
printf '[daemon]\nReservedCPUs=0-1\n\n[t59]\nSlice=%s\nLevel=package\nSpans=1\n' "$SLICE" > "$DROPIN"
out=$(coschedd --check-config 2>&1) || fail "check-config: $out"
systemctl reload coschedd || fail "systemctl reload coschedd"
wait_until "$SETTLE" '[ "$(rd $S/cpu.scheduled)" = 2 ]'
coschedctl status | sed 's/^/# /'
log "# level 2 spans: $(paste -sd' ' "$COSCHED_SYSFS/levels/2/spans" 2>/dev/null)"
check_eq "slice cpu.scheduled" "$(rd "$S/cpu.scheduled")" 2
check_eq "slice cpuset.cpus (AllowedCPUs= via systemd)" "$(rd "$S/cpuset.cpus")" 4-7
check_eq "slice AllowedCPUs property" "$(systemctl show -p AllowedCPUs --value "$SLICE")" 4-7
pid=$(systemctl show -p MainPID --value "$SVC")
check_eq "service task affinity" "$(taskset -pc "$pid" 2>/dev/null | awk '{ print $NF }')" 4-7
coschedctl verify > /dev/null; check_eq "coschedctl verify" "$?" 0
placed="on $(rd "$S/cpuset.cpus") at level $(rd "$S/cpu.scheduled")"

# The spinners join the service's cgroup inside the slice: the slice is
# the coscheduled group, its descendants are in its gang.
WCG=$SLICE/$SVC
cg_create X; cg_cpus X 4-7
tracefs_ready || fail "no sched_switch tracing"
args=()
for c in 4 5 6 7; do
	args+=(--task "s$c:$c:$WCG:S" --task "x$c:$c:$(cg_rel X):X")
done
corun_run out --trace --setup-timeout 60 "${args[@]}"
ov=$(kv out gpair S,X overlap_pct_of_min)
co=$(kv out group S trace_all_pct_of_union)
log "# trace view overlap $(kv out gpair S,X trace_overlap_pct_of_min)%; shares S $(kv out group S share_pct)% X $(kv out group X share_pct)%"
check_le "slice/X overlap % (raw)" "$ov" 0.1
check_ge "slice co-run % (trace)" "$co" 90

# Removal: the daemon sets cpu.scheduled 0 and gives the CPUs back.
rm -f "$DROPIN"
systemctl reload coschedd || fail "reload after removal"
wait_until "$SETTLE" '[ "$(rd $S/cpu.scheduled)" = 0 ]'
check_eq "slice cpu.scheduled after removal" "$(rd "$S/cpu.scheduled")" 0
wait_until "$SETTLE" '[ -z "$(systemctl show -p AllowedCPUs --value $SLICE)" ]'
check_eq "slice AllowedCPUs after removal" "$(systemctl show -p AllowedCPUs --value "$SLICE")" ""

finish "t59.slice placed by coschedd $placed (want 4-7, 2); slice/X overlap $(num "$ov")% (<=0.1%, raw), co-run $(num "$co")% (>=90%, trace), turn 400 ms; released on removal"
