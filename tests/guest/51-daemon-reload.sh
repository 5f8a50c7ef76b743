#!/bin/bash
# timeout: 120
# A broken config on reload keeps the old placement: systemctl reload fails
# (ExecReload= checks first), a SIGHUP straight to the daemon logs the
# errors and keeps the running config, the group stays coscheduled on its
# CPUs; a restart keeps it where it was (checkpoint in /run/coschedd).
. "$(dirname "$0")/lib.sh"
test_init 51-daemon-reload
require_cosched

daemon_test /etc/coschedd/conf.d/51-daemon-reload.conf
cg_create A
RAW=$(cg_rel A)
good="[t51]
CgroupPath=/$RAW
Level=core
Spans=1
AllowedCPUs=6-7"
printf '%s\n' "$good" > "$DROPIN"
systemctl reload coschedd || fail "reload (good config)"
wait_until "$SETTLE" '[ "$(rd $CG/$RAW/cpu.scheduled)" = 1 ]'
check_eq "placed cpus" "$(rd $CG/$RAW/cpuset.cpus)" 6-7
check_eq "placed level" "$(rd $CG/$RAW/cpu.scheduled)" 1

since=$(date '+%Y-%m-%d %H:%M:%S')
printf '%s\nSpans=2\nColour=blue\n' "$good" > "$DROPIN"
if systemctl reload coschedd 2>/dev/null; then fail "systemctl reload accepted a broken config"
else pass "systemctl reload refused the broken config"; fi
check_eq "daemon still active" "$(systemctl is-active coschedd)" active
kill -HUP "$(systemctl show -p MainPID --value coschedd)"
wait_until "$SETTLE" 'journalctl -u coschedd --since "$since" -o cat | grep -q "keeping the running one"'
journalctl -u coschedd --since "$since" -o cat | tail -5
if journalctl -u coschedd --since "$since" -o cat | grep -q "51-daemon-reload.conf:6: Spans= repeated"; then
	pass "journal names file:line"
else fail "journal has no file:line error"; fi
check_eq "cpus kept" "$(rd $CG/$RAW/cpuset.cpus)" 6-7
check_eq "level kept" "$(rd $CG/$RAW/cpu.scheduled)" 1
status=$(systemctl show -p StatusText --value coschedd)
case "$status" in *"last reload failed"*) pass "StatusText says so: $status" ;; *) fail "StatusText '$status'" ;; esac

# Restart with the good config: same place, verify clean.
printf '%s\n' "$good" > "$DROPIN"
systemctl restart coschedd || fail "restart"
wait_until "$SETTLE" 'coschedctl verify >/dev/null'
check_eq "cpus after restart" "$(rd $CG/$RAW/cpuset.cpus)" 6-7
check_eq "level after restart" "$(rd $CG/$RAW/cpu.scheduled)" 1
coschedctl verify; check_eq "verify after restart" "$?" 0

finish "broken reload refused and old placement kept ($(rd $CG/$RAW/cpuset.cpus) level $(rd $CG/$RAW/cpu.scheduled)), same after restart"
