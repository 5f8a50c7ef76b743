#!/bin/bash
# timeout: 180
# coschedd under faults on the real kernel and systemd (issue 12 point 5;
# daemon/tests/test-faults.sh has the deterministic versions on fixtures):
#  - SIGKILL right after a SIGHUP that adds a group: at no time is a group
#    coscheduled while its cpuset.cpus is not one whole SMT core;
#    systemd restarts the daemon (Restart=on-failure), the group placed
#    before keeps its CPUs, the new one is placed, verify is clean;
#  - the first CPU of a placed group's core goes offline (real hotplug):
#    released, or re-placed on what is left of the core, never
#    coscheduled over the offline CPU; back on the whole core when it is
#    online again; both logged in the journal;
#  - the cgroup of a placed group is removed behind the daemon's back:
#    pending, its CPUs free, logged; recreated: placed again.
. "$(dirname "$0")/lib.sh"
test_init 57-daemon-faults
require_cosched

daemon_test /etc/coschedd/conf.d/57-daemon-faults.conf
cg_create A; cg_create B
RA=$(cg_rel A) RB=$(cg_rel B)
sleep 1000 & SA=$!; echo $SA > "$CG/$RA/cgroup.procs"
sleep 1000 & SB=$!; echo $SB > "$CG/$RB/cgroup.procs"
group() { printf '[%s]\nCgroupPath=/%s\nLevel=core\nSpans=1\nAllowedCPUs=4-7\nPriority=%s\n\n' "$@"; }
spans=$(tr '\n' ' ' < $COSCHED_SYSFS/levels/1/spans)
log "# level-1 spans: $spans"
# whole_core CPUS: one of the kernel's level-1 spans right now.
whole_core() { [ -n "$1" ] && grep -qx "$1" $COSCHED_SYSFS/levels/1/spans; }
# half_applied: A or B coscheduled on CPUs that are not one whole core.
half_applied() {
	local g p
	for g in A B; do
		p=$(cg_dir $g)
		[ "$(rd $p/cpu.scheduled)" = 0 ] && continue
		whole_core "$(rd $p/cpuset.cpus)" || echo "$g(sched $(rd $p/cpu.scheduled) cpus '$(rd $p/cpuset.cpus)')"
	done
}
# jgroup SINCE GROUP: the daemon's journal lines about GROUP (the group is
# a journal field, COSCHED_GROUP=, not part of the message).
jgroup() { journalctl -u coschedd --since "$1" COSCHED_GROUP="$2" -o cat --no-pager 2>/dev/null; }

{ printf '[daemon]\nReconcileSec=2\n\n'; group t57a "$RA" 10; } > "$DROPIN"
systemctl reload coschedd || fail "reload (A)"
wait_until "$SETTLE" '[ "$(rd $CG/$RA/cpu.scheduled)" = 1 ]'
a0=$(rd "$CG/$RA/cpuset.cpus")
whole_core "$a0" && pass "A placed on $a0" || fail "A on '$a0', not a core"

# --- SIGKILL right after the SIGHUP that adds B ----------------------------
restarts0=$(systemctl show -p NRestarts --value coschedd)
pid0=$(systemctl show -p MainPID --value coschedd)
{ printf '[daemon]\nReconcileSec=2\n\n'; group t57a "$RA" 10; group t57b "$RB" 5; } > "$DROPIN"
kill -HUP "$pid0"; sleep 0.05; kill -KILL "$pid0"
bad=
for i in $(seq 40); do	# every 0.1 s until the new daemon placed B
	b=$(half_applied); [ -n "$b" ] && bad="$bad [$i: $b]"
	[ "$(systemctl show -p MainPID --value coschedd)" != "$pid0" ] && [ "$(rd $CG/$RB/cpu.scheduled)" = 1 ] && break
	sleep 0.1
done
wait_until "$SETTLE" '[ "$(systemctl is-active coschedd)" = active ] && [ "$(rd $CG/$RB/cpu.scheduled)" = 1 ]'
check_eq "no group half-applied around the SIGKILL" "${bad:-none}" none
check_eq "restarted by systemd (NRestarts)" "$(systemctl show -p NRestarts --value coschedd)" $((restarts0 + 1))
check_eq "A kept its CPUs across the kill" "$(rd $CG/$RA/cpuset.cpus)" "$a0"
check_eq "A coscheduled" "$(rd $CG/$RA/cpu.scheduled)" 1
b0=$(rd "$CG/$RB/cpuset.cpus")
whole_core "$b0" && [ "$b0" != "$a0" ] && pass "B placed on $b0" || fail "B on '$b0' (A on $a0)"
wait_until "$SETTLE" 'coschedctl verify > /dev/null'
coschedctl verify; check_eq "verify after the restart" "$?" 0

# --- the first CPU of B's core goes offline -------------------------------
first=${b0%%-*}
since=$(date '+%Y-%m-%d %H:%M:%S')
sleep 1
if echo 0 > /sys/devices/system/cpu/cpu$first/online; then
	log "# CPU $first offline: online $(cat /sys/devices/system/cpu/online), spans $(tr '\n' ' ' < $COSCHED_SYSFS/levels/1/spans)"
	wait_until "$SETTLE" '[ "$(rd $CG/$RB/cpu.scheduled)" = 0 ] || [ "$(rd $CG/$RB/cpuset.cpus)" != "$b0" ]'
	wait_until "$SETTLE" '[ -n "$(jgroup "$since" t57b)" ]'
	line=$(jgroup "$since" t57b | head -1)
	log "# journal: $line"
	now=$(rd "$CG/$RB/cpuset.cpus"); s=$(rd "$CG/$RB/cpu.scheduled")
	if [ "$s" = 0 ] || { whole_core "$now" && [[ ,$now, != *,$first,* ]] && [ "${now%%-*}" != "$first" ]; }; then
		pass "B after CPU $first went offline: cpu.scheduled $s on '$now'"
	else
		fail "B after CPU $first went offline: cpu.scheduled $s on '$now'"
	fi
	[ -n "$line" ] && pass "logged: $line" || fail "nothing about t57b in the journal after the offline"
	since=$(date '+%Y-%m-%d %H:%M:%S')
	sleep 1
	echo 1 > /sys/devices/system/cpu/cpu$first/online || fail "CPU $first back online"
	wait_until "$SETTLE" '[ "$(rd $CG/$RB/cpu.scheduled)" = 1 ] && [ "$(rd $CG/$RB/cpuset.cpus)" = "$b0" ]'
	check_eq "B back on its core" "$(rd $CG/$RB/cpuset.cpus) $(rd $CG/$RB/cpu.scheduled)" "$b0 1"
	wait_until "$SETTLE" 'jgroup "$since" t57b | grep -q "^placed"'
	line=$(jgroup "$since" t57b | grep '^placed' | head -1)
	[ -n "$line" ] && pass "logged: $line" || fail "no 'placed' line for t57b after the online"
else
	fail "cannot take CPU $first offline"
fi
check_eq "A untouched by B's hotplug" "$(rd $CG/$RA/cpuset.cpus) $(rd $CG/$RA/cpu.scheduled)" "$a0 1"

# --- A's cgroup removed behind the daemon's back --------------------------
since=$(date '+%Y-%m-%d %H:%M:%S')
sleep 1
kill $SA; wait $SA 2>/dev/null
rmdir "$CG/$RA" || fail "rmdir A"
wait_until "$SETTLE" 'coschedctl status | grep -q "^t57a .*pending"'
st=$(coschedctl status | grep '^t57a')
log "# status: $st"
case $st in *pending*"does not exist"*) pass "A pending: cgroup does not exist" ;; *) fail "A after rmdir: $st" ;; esac
case $(coschedctl topology 2>/dev/null | grep -c "t57a") in 0) pass "A holds no CPUs" ;; *) fail "A still holds CPUs: $(coschedctl topology | grep t57a)" ;; esac
wait_until "$SETTLE" 'jgroup "$since" t57a | grep -q "does not exist"'
line=$(jgroup "$since" t57a | tail -1)
[[ $line == *"does not exist"* ]] && pass "logged: $line" || fail "journal after the rmdir: '$line'"
mkdir "$CG/$RA"
wait_until "$SETTLE" '[ "$(rd $CG/$RA/cpu.scheduled)" = 1 ]'
now=$(rd "$CG/$RA/cpuset.cpus")
whole_core "$now" && pass "A placed again on $now once recreated" || fail "A recreated: cpu.scheduled $(rd $CG/$RA/cpu.scheduled) on '$now'"
kill $SB 2>/dev/null

finish "SIGKILL mid-reload: ${bad:-no} half-applied group, A kept $a0, B on $b0; CPU $first offline and back: B released/re-placed and back, logged; A's cgroup removed: pending, recreated: placed on $now"
