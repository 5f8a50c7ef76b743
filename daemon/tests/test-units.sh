#!/bin/sh
# units.c: units that declare coscheduling in an [X-Cosched] section of
# their own files, learned from PID 1's signals (tests/mock-systemd on a
# private dbus-daemon, never the host's bus or systemd; its --control FIFO
# plays the units' starts, stops, process exits and daemon-reloads). A
# unit that starts is placed and applied like a configured group; one that
# stops is released (cpu.scheduled 0, AllowedCPUs= and the CPUWeight= the
# daemon set reset) and a pending group takes its CPUs; a drop-in edited
# before daemon-reload re-places it; a bad line is that unit's error with
# file:line; coschedd.conf wins over a unit's section; an idle daemon
# makes no calls to PID 1; a restart keeps units where they were; a
# daemon-reload (every unit unloaded and loaded again) or a PID 1 that does
# not answer is no stop. coschedctl enable/disable write and remove the
# drop-in; a unit released while it runs is widened to its parent's CPUs
# where systemd's reset cannot empty its cpuset.cpus.
cd "$(dirname "$0")/.." || exit 1
if ! command -v dbus-daemon >/dev/null 2>&1; then
        echo "FAIL daemon/units (dbus-daemon not installed: run make deps)"
        exit 1
fi
T=$(mktemp -d /tmp/coschedd-units.XXXXXX)
. "$(dirname "$0")/private-bus.sh"
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID JOURNAL_STREAM
BUSPID= MOCKPID= DPID=
trap 'kill -KILL $DPID 2>/dev/null; kill $MOCKPID $BUSPID 2>/dev/null; exec 9>&-; [ -n "$KEEP" ] || rm -rf "$T"' EXIT
fail=0
pass() { echo "PASS daemon/$1"; }
failt() { echo "FAIL daemon/$1: $2"; fail=1; }
waitfor() {
        i=0
        while [ $i -lt 100 ]; do eval "$1" && return 0; sleep 0.1; i=$((i + 1)); done
        return 1
}

private_bus_start $T || { failt units "dbus-daemon did not start: $(cat $T/bus.err)"; exit 1; }

# The QEMU guest: SMT pairs 0-1 2-3 4-5 6-7, kernel level 1 only.
s=$T/sys
mkdir -p $s/sys/devices/system/cpu $s/sys/kernel/cosched/levels/1
echo 0-7 > $s/sys/devices/system/cpu/online
echo 1 > $s/sys/kernel/cosched/max_level
echo smt > $s/sys/kernel/cosched/levels/1/name
printf '0-1\n2-3\n4-5\n6-7\n' > $s/sys/kernel/cosched/levels/1/spans
for cg in /db.slice /system.slice/web.service /system.slice/big.service /system.slice/bad.service \
        /system.slice/new.service /system.slice/plain.service /db.slice/inner.service; do
        mkdir -p $T/cg$cg
        : > $T/cg$cg/cpuset.cpus
        echo 0 > $T/cg$cg/cpu.scheduled
done
echo 0-7 > $T/cg/cpuset.cpus.effective
echo 0-7 > $T/cg/system.slice/cpuset.cpus.effective

# Unit files as systemd would find them (FragmentPath, DropInPaths).
U=$T/root/etc/systemd/system
mkdir -p $U
cat > $U/web.service <<'EOF'
[Unit]
Description=a web server that wants two cores
[Service]
ExecStart=/bin/sh -c \
  'exec sleep infinity'
[X-Cosched]
Level=core
CPUs=4
EOF
cat > $U/big.service <<'EOF'
[Service]
ExecStart=/bin/sleep infinity
[X-Cosched]
Level=core
Spans=3
Priority=-1
EOF
cat > $U/bad.service <<'EOF'
[Service]
ExecStart=/bin/sleep infinity

[X-Cosched]
Level=core
CPUs=lots
EOF
printf '[Service]\nExecStart=/bin/sleep infinity\n' > $U/plain.service
printf '[Service]\nExecStart=/bin/sleep infinity\n' > $U/new.service
printf '[Service]\nSlice=db.slice\nExecStart=/bin/sleep infinity\n[X-Cosched]\nLevel=core\nSpans=1\n' > $U/inner.service
# Inside db.slice, which is coscheduled on 0-1: the kernel gives it the
# slice's CPUs whatever its cpuset.cpus says.
echo 0-1 > $T/cg/db.slice/inner.service/cpuset.cpus.effective
# Named by coschedd.conf too, which wins.
printf '[Slice]\n[X-Cosched]\nLevel=core\nSpans=3\n' > $U/db.slice
printf '[daemon]\nReconcileSec=1\n\n[db]\nSlice=db.slice\nLevel=core\nSpans=1\nPriority=5\n' > $T/c.conf

mkfifo $T/ctl
./tests/mock-systemd --unit-dir=$U --control=$T/ctl --notify-socket=$T/notify $T/cg $T/mock.log \
        db.slice=/db.slice plain.service=/system.slice/plain.service web.service= big.service= bad.service= inner.service= &
MOCKPID=$!
waitfor 'grep -q ready $T/mock.log 2>/dev/null' || { failt units "mock did not start"; exit 1; }
exec 9>$T/ctl
ctl() { echo "$*" >&9; }
C="./coschedctl --state-dir=$T/state --sysfs-root=$s --cgroup-root=$T/cg"
ARGS="--sysfs-root=$s --cgroup-root=$T/cg --state-dir=$T/state --config=$T/c.conf"
start_daemon() {
        NOTIFY_SOCKET=$T/notify ./coschedd $ARGS 2>>$T/d.log &
        DPID=$!
}
stop_daemon() {
        kill -TERM $DPID
        waitfor '! kill -0 $DPID 2>/dev/null' || kill -KILL $DPID
        wait $DPID 2>/dev/null; DPID=
}
cpus() { cat $T/cg$1/cpuset.cpus; }
sched() { cat $T/cg$1/cpu.scheduled; }
st() { $C status | awk -v g="$1" '$1 == g { print $8, $9 }'; }
ncalls() { grep -c '^call ' $T/mock.log; }

start_daemon
waitfor 'grep -q " READY=1$" $T/mock.log' || failt units "no READY=1: $(tail -3 $T/d.log | tr '\n' '|')"
# coschedd.conf wins over db.slice's own [X-Cosched] (Spans=3).
if [ "$(cpus /db.slice) $(sched /db.slice)" = "0-1 1" ] &&
   grep -q "db.slice: group \[db\] at $T/c.conf:4 names it: that wins over the unit's \[X-Cosched\] at $U/db.slice:2" $T/d.log &&
   ! $C status | grep -q '^db.slice '; then
        pass units-config-wins
else failt units-config-wins "db.slice $(cpus /db.slice) $(sched /db.slice); $($C status | tr '\n' '|')"; fi

# Start: placed, confined through systemd, then coscheduled.
t0=$(date +%s%3N)
ctl start web.service /system.slice/web.service
if waitfor '[ "$(sched /system.slice/web.service)" = 1 ]'; then
        t1=$(date +%s%3N)
        got="$(cpus /system.slice/web.service) $(st web.service)"
        if [ "$got" = "2-5 placed " ] && grep -q '^SetUnitProperties web.service AllowedCPUs=2-5$' $T/mock.log &&
           grep -q "^call GetAll /org/freedesktop/systemd1/unit/web_2eservice$" $T/mock.log &&
           grep -q "^realized web.service AllowedCPUs=2-5: written, cpu.scheduled was 0$" $T/mock.log; then
                pass "units-start-placed (coscheduled $((t1 - t0)) ms after the start job, mock PID 1)"
        else failt units-start-placed "got '$got'; $(grep web $T/mock.log | tr '\n' '|')"; fi
else failt units-start-placed "not coscheduled: $(tail -3 $T/d.log | tr '\n' '|')"; fi
# Units without [X-Cosched] are read, not placed.
if ! $C status | grep -q '^plain.service '; then pass units-plain-unit-ignored
else failt units-plain-unit-ignored "$($C status | grep plain)"; fi

# big.service needs 3 cores, 1 is free: pending. bad.service: its error
# with file:line, the others untouched.
ctl start big.service /system.slice/big.service
ctl start bad.service /system.slice/bad.service
waitfor '[ -n "$(st bad.service)" ] && [ -n "$(st big.service)" ]'
if [ "$(st big.service)" = "pending needs" ]; then pass units-pending
else failt units-pending "$($C status | grep big)"; fi
line=$($C status | grep '^bad.service ')
if echo "$line" | grep -q "error  *$U/bad.service:6: CPUs=lots: expected a number from 1 to" &&
   grep -q "$U/bad.service:6: CPUs=lots: expected a number" $T/d.log &&
   [ "$(sched /system.slice/bad.service)" = 0 ] &&
   [ "$(sched /system.slice/web.service) $(sched /db.slice)" = "1 1" ]; then
        pass units-bad-line-error
else failt units-bad-line-error "$line"; fi

# Idle: no calls to PID 1, though the reconcile timer (ReconcileSec=1)
# runs three times. bad.service is an error of its files, not retried.
sleep 1
n=$(ncalls)
sleep 3.5
if [ "$(ncalls)" = "$n" ] && [ "$(sched /system.slice/web.service)" = 1 ]; then pass "units-no-polling (0 calls in 3.5 s)"
else failt units-no-polling "$(($(ncalls) - n)) calls while idle: $(tail -n +$((n + 1)) $T/mock.log | grep '^call' | sort | uniq -c | tr '\n' '|')"; fi

# Stop: released (0, AllowedCPUs= and CPUWeight= reset), and the pending
# group placed on the freed cores in the same pass.
ctl stop web.service
if waitfor '[ "$(st big.service)" = "placed " ]' &&
   grep -q '^SetUnitProperties web.service CPUWeight=$' $T/mock.log &&
   grep -q '^SetUnitProperties web.service AllowedCPUs=$' $T/mock.log &&
   [ "$(sched /system.slice/web.service)" = 0 ] && ! $C status | grep -q '^web.service '; then
        pass units-stop-released-and-reset
else failt units-stop-released-and-reset "$(grep '^SetUnitProperties web' $T/mock.log | tr '\n' '|'); sched $(sched /system.slice/web.service)"; fi
if waitfor '[ "$(sched /system.slice/big.service)" = 1 ]' && [ "$(cpus /system.slice/big.service)" = "2-7" ]; then
        pass units-stop-pending-placed
else failt units-stop-pending-placed "big.service $(cpus /system.slice/big.service) $(sched /system.slice/big.service): $(st big.service)"; fi

# A drop-in edited, then daemon-reload: re-placed by the new size.
mkdir -p $U/big.service.d
printf '[X-Cosched]\nSpans=1\n' > $U/big.service.d/10-size.conf
ctl reload
if waitfor '[ "$(cpus /system.slice/big.service) $(sched /system.slice/big.service)" = "2-3 1" ]' &&
   grep -q '^call ListUnits' $T/mock.log; then
        pass units-reload-dropin-replaced
else failt units-reload-dropin-replaced "big.service $(cpus /system.slice/big.service) $(st big.service)"; fi

# Restart: the first reconcile waits for PID 1's unit list, so
# big.service is neither released nor moved. That its CPUWeight=100 is
# the daemon's is in the checkpoint, for the release after the restart.
if grep -q "^weight-ours	big.service$" $T/state/state; then pass units-checkpoint-weight-ours
else failt units-checkpoint-weight-ours "$(grep -A1 '^group	big' $T/state/state | tr '\n' '|')"; fi
stop_daemon
n=$(grep -c '^SetUnitProperties' $T/mock.log)
start_daemon
waitfor '[ "$(grep -c " READY=1$" $T/mock.log)" = 2 ]'
sleep 0.5
if [ "$(grep -c '^SetUnitProperties' $T/mock.log)" = "$n" ] && [ "$(st big.service)" = "placed " ] &&
   [ "$(cpus /system.slice/big.service) $(sched /system.slice/big.service)" = "2-3 1" ]; then
        pass units-restart-keeps-placement
else failt units-restart-keeps-placement "$(tail -n +1 $T/mock.log | grep '^SetUnitProperties' | tail -3 | tr '\n' '|') $(st big.service)"; fi

# daemon-reload with nothing changed: PID 1 unloads and reloads every
# unit (UnitRemoved, UnitNew) between Reloading true and false. That is no
# stop: big.service keeps its group, coscheduled throughout, and nothing is
# asked of PID 1 but the listing and the units' properties.
n=$(grep -c '^SetUnitProperties' $T/mock.log)
l=$(grep -c '^call ListUnits' $T/mock.log)
: > $T/sched.log
( while [ ! -e $T/sched.stop ]; do sched /system.slice/big.service >> $T/sched.log; sleep 0.01; done ) &
SAMPLER=$!
ctl reload
waitfor '[ "$(grep -c "^call ListUnits" $T/mock.log)" -gt "$l" ]'
sleep 1
touch $T/sched.stop; wait $SAMPLER
if [ "$(grep -c '^SetUnitProperties' $T/mock.log)" = "$n" ] && [ "$(sort -u $T/sched.log | tr '\n' ' ')" = "1 " ] &&
   ! grep -q "big.service stopped\|released big.service" $T/d.log && [ "$(st big.service)" = "placed " ] &&
   [ "$(cpus /system.slice/big.service)" = "2-3" ]; then
        pass "units-reload-is-no-stop ($(wc -l < $T/sched.log) samples of cpu.scheduled, all 1)"
else failt units-reload-is-no-stop "cpu.scheduled seen: $(sort $T/sched.log | uniq -c | tr '\n' ' '); $(grep 'big.service' $T/d.log | tail -3 | tr '\n' '|')"; fi

# PID 1 does not answer (a daemon-reload under load takes seconds): a
# GetAll that times out is no stop either; the daemon asks again.
kill -USR1 $MOCKPID
ctl touch big.service
waitfor 'grep -q "did not answer about big.service" $T/d.log'
kill -USR2 $MOCKPID
g=$(grep -c '^call GetAll /org/freedesktop/systemd1/unit/big_2eservice' $T/mock.log)
waitfor '[ "$(grep -c "^call GetAll /org/freedesktop/systemd1/unit/big_2eservice" $T/mock.log)" -gt "$g" ]'
sleep 0.5
if grep -q "did not answer about big.service in 5s; it stays as it was, asking again" $T/d.log &&
   ! grep -q "big.service stopped\|released big.service" $T/d.log && [ "$(st big.service)" = "placed " ] &&
   [ "$(cpus /system.slice/big.service) $(sched /system.slice/big.service)" = "2-3 1" ]; then
        pass units-no-answer-is-no-stop
else failt units-no-answer-is-no-stop "$(grep 'big.service' $T/d.log | tail -3 | tr '\n' '|') $(st big.service)"; fi

# Its process exits: a stop without a job (PropertiesChanged only). The
# CPUWeight=100 an earlier run set is reset too.
ctl exit big.service
if waitfor '! $C status | grep -q "^big.service "' && [ "$(sched /system.slice/big.service)" = 0 ] &&
   waitfor 'grep -q "^SetUnitProperties big.service AllowedCPUs=$" $T/mock.log' &&
   grep -q "^SetUnitProperties big.service CPUWeight=$" $T/mock.log; then
        pass units-exit-without-job-released
else failt units-exit-without-job-released "$($C status | grep big)"; fi

# coschedctl enable writes the drop-in, disable removes it.
out=$(./coschedctl --sysfs-root=$s enable --root=$T/root new.service --level core --cpus 2 --placement spread 2>&1); rc=$?
exp="# Written by coschedctl enable: coscheduling for new.service (see coschedd.unit(5)).
# coschedctl disable new.service removes this file.
[X-Cosched]
Level=core
CPUs=2
Placement=spread"
if [ $rc = 0 ] && [ "$(cat $U/new.service.d/50-cosched.conf)" = "$exp" ] &&
   [ "$out" = "Wrote $U/new.service.d/50-cosched.conf." ] && ! grep -q '^Reload$' $T/mock.log; then
        pass ctl-enable-writes-dropin
else failt ctl-enable-writes-dropin "rc=$rc out=$out; $(cat $U/new.service.d/50-cosched.conf 2>&1 | tr '\n' '|')"; fi
ctl start new.service /system.slice/new.service
if waitfor '[ "$(sched /system.slice/new.service)" = 1 ]' && [ "$(st new.service)" = "placed " ]; then
        pass ctl-enable-unit-placed
else failt ctl-enable-unit-placed "$(st new.service)"; fi
out=$(./coschedctl --sysfs-root=$s enable --root=$T/root new.service --level bogus --cpus 2 2>&1); rc=$?
out2=$(./coschedctl --sysfs-root=$s enable --root=$T/root new.service --level core --cpus 2 --spans 1 2>&1); rc2=$?
out3=$(./coschedctl --sysfs-root=$s enable --root=$T/root new.socket --level core --cpus 2 2>&1); rc3=$?
if [ "$rc $rc2 $rc3" = "2 2 2" ] && [ "$(cat $U/new.service.d/50-cosched.conf)" = "$exp" ] && [ ! -e $U/new.socket.d ] &&
   echo "$out" | grep -q "50-cosched.conf:4: Level=bogus: expected a level number" &&
   echo "$out3" | grep -q "only services, scopes and slices"; then
        pass ctl-enable-refuses-bad-values
else failt ctl-enable-refuses-bad-values "$rc $rc2 $rc3: $out | $out2 | $out3"; fi
# --reload asks PID 1 to reload, which the daemon follows. The unit runs
# on: systemd's reset of AllowedCPUs= cannot empty its cpuset.cpus (the
# kernel keeps a cgroup with tasks on some CPUs), so the daemon widens it
# to its parent's.
# (The daemon logs the widening after it wrote cpuset.cpus: wait for both.)
widened="released new.service; .* widened /system.slice/new.service to its parent's CPUs 0-7"
out=$(./coschedctl disable --root=$T/root --reload new.service 2>&1); rc=$?
if [ $rc = 0 ] && [ ! -e $U/new.service.d ] && waitfor "grep -q '^Reload$' $T/mock.log" &&
   waitfor '! $C status | grep -q "^new.service "' && waitfor '[ "$(sched /system.slice/new.service)" = 0 ]' &&
   waitfor '[ "$(cpus /system.slice/new.service)" = 0-7 ]' &&
   waitfor "grep -q '^realized new.service AllowedCPUs=: No space left on device' $T/mock.log" &&
   waitfor 'grep -q "$widened" $T/d.log'; then
        pass ctl-disable-removes-and-releases
else failt ctl-disable-removes-and-releases "rc=$rc $out; $($C status | grep new); cpus $(cpus /system.slice/new.service) sched $(sched /system.slice/new.service); $(grep -c '^Reload$' $T/mock.log) reloads; $(grep '^realized new.service' $T/mock.log | tail -1); $(grep 'new.service' $T/d.log | tail -2 | tr '\n' '|')"; fi
out=$(./coschedctl disable --root=$T/root new.service 2>&1); rc=$?
out2=$(./coschedctl disable --root=$T/root --cpus 2 new.service 2>&1); rc2=$?
out3=$(./coschedctl status --level core 2>&1); rc3=$?
if [ "$rc $rc2 $rc3" = "1 2 2" ] && echo "$out" | grep -q "new.service has no $U/new.service.d/50-cosched.conf"; then
        pass ctl-disable-usage
else failt ctl-disable-usage "$rc $rc2 $rc3: $out | $out2 | $out3"; fi

# A unit with [X-Cosched] inside a coscheduled slice: systemd confines it
# to its own core, but the kernel runs it on the slice's CPUs
# (cpuset.cpus.effective): never coscheduled there, an error that says
# why, and verify says so too.
ctl start inner.service /db.slice/inner.service
if waitfor '[ "$(st inner.service)" = "error /db.slice/inner.service" ]' &&
   [ "$(sched /db.slice/inner.service)" = 0 ] &&
   $C status | grep '^inner.service ' | grep -q 'runs on CPUs 0-1, not [2-7]-[3-7] (cpuset.cpus.effective): its parent' &&
   ! $C verify > /dev/null; then
        pass "units-inside-coscheduled-slice-error ($(cpus /db.slice/inner.service) asked, effective 0-1)"
else failt units-inside-coscheduled-slice-error "$($C status | grep inner); sched $(sched /db.slice/inner.service)"; fi
ctl stop inner.service
if waitfor '! $C status | grep -q "^inner.service "' && waitfor 'grep -q "^SetUnitProperties inner.service AllowedCPUs=$" $T/mock.log'; then
        pass units-inside-slice-stopped-released
else failt units-inside-slice-stopped-released "$($C status | grep inner)"; fi

stop_daemon
exit $fail
