#!/bin/bash
# timeout: 120
# coschedd places INI-declared groups and the cgroup files show it: a raw
# cgroup (CgroupPath=) and a systemd slice (Slice=, confined by systemd via
# AllowedCPUs=), one SMT core and two, CPUs 0-1 reserved. Expected: raw on
# 2-3 (the partly used package fills first), slice on 4-7, cpu.scheduled 1
# in both, the slice's service runs on 4-7, coschedctl verify clean.
# Removing the groups sets cpu.scheduled 0 and widens the CPUs again.
. "$(dirname "$0")/lib.sh"
test_init 50-daemon-place
require_cosched

DROPIN=/etc/coschedd/conf.d/50-daemon-place.conf
SLICE=cosched50.slice
SVC=cosched50-work.service
teardown() {
	rm -f "$DROPIN"
	systemctl stop "$SVC" 2>/dev/null
	systemctl reload coschedd 2>/dev/null
	sleep 1
}
trap 'rc=$?; teardown; (exit $rc); cleanup' EXIT


systemctl is-active -q coschedd || systemctl start coschedd
check_eq "coschedd active" "$(systemctl is-active coschedd)" active
log "# level 1 ($(rd $COSCHED_SYSFS/levels/1/name)) spans: $(rd $COSCHED_SYSFS/levels/1/spans | tr '\n' ' ')"

cg_create A
RAW=$(cg_rel A)
systemd-run --quiet --unit="$SVC" --slice="$SLICE" -p Type=exec sleep 600 || fail "systemd-run $SVC"
cat > "$DROPIN" <<EOF
[daemon]
ReservedCPUs=0-1

[t50-raw]
CgroupPath=/$RAW
Level=core
Spans=1
Priority=10

[t50-slice]
Slice=$SLICE
Level=core
Spans=2
EOF
out=$(coschedd --check-config 2>&1) || fail "check-config: $out"
systemctl reload coschedd || fail "systemctl reload coschedd"

S=/sys/fs/cgroup/$SLICE
wait_until "$SETTLE" '[ "$(rd $CG/$RAW/cpu.scheduled)" = 1 ] && [ "$(rd $S/cpu.scheduled)" = 1 ]'
coschedctl status
check_eq "raw cpuset.cpus" "$(rd $CG/$RAW/cpuset.cpus)" 2-3
check_eq "raw cpu.scheduled" "$(rd $CG/$RAW/cpu.scheduled)" 1
check_eq "slice cpuset.cpus (AllowedCPUs via systemd)" "$(rd $S/cpuset.cpus)" 4-7
check_eq "slice AllowedCPUs property" "$(systemctl show -p AllowedCPUs --value $SLICE)" 4-7
check_eq "slice cpu.scheduled" "$(rd $S/cpu.scheduled)" 1
# The service's cgroup may have no cpuset files of its own (systemd enables
# controllers only where asked); its main task's affinity is what counts.
pid=$(systemctl show -p MainPID --value "$SVC")
check_eq "service task affinity" "$(taskset -pc "$pid" 2>/dev/null | awk '{ print $NF }')" 4-7
coschedctl verify; check_eq "coschedctl verify exit" "$?" 0
status=$(systemctl show -p StatusText --value coschedd)
log "# StatusText: $status"
case "$status" in "2 placed, 0 pending, 0 error"*) pass "StatusText" ;; *) fail "StatusText '$status'" ;; esac

# Removal: 0 first, then widen.
rm -f "$DROPIN"
systemctl reload coschedd || fail "reload after removal"
wait_until "$SETTLE" '[ "$(rd $CG/$RAW/cpu.scheduled)" = 0 ] && [ "$(rd $S/cpu.scheduled)" = 0 ]'
check_eq "raw cpu.scheduled after removal" "$(rd $CG/$RAW/cpu.scheduled)" 0
check_eq "raw cpuset.cpus after removal" "$(rd $CG/$RAW/cpuset.cpus)" ""
check_eq "slice cpu.scheduled after removal" "$(rd $S/cpu.scheduled)" 0
check_eq "slice AllowedCPUs after removal" "$(systemctl show -p AllowedCPUs --value $SLICE)" ""

finish "raw $(rd $CG/$RAW/cpuset.cpus) slice placed 4-7 level 1, verify clean, released on removal"
