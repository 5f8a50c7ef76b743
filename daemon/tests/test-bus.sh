#!/bin/sh
# bus.c against a mock PID 1 (tests/mock-systemd) on a private dbus-daemon:
# never the host's bus or systemd. Units are confined with runtime
# SetUnitProperties AllowedCPUs= (+ CPUWeight=100), cpu.scheduled goes to
# the unit's ControlGroup, repeated runs change nothing, removal resets.
# Then a PID 1 slow to realize AllowedCPUs= (bus-slow-*): the event loop
# goes on (watchdog pings on time), each group is coscheduled only once its
# cpuset.cpus shows the placement, and one systemd never confines is an
# error, retried every ReconcileSec. Last a PID 1 that stops answering
# (bus-hung-*): every call to it is asynchronous, so the loop, its
# reloads and its watchdog go on, placed groups stay, and a group added
# meanwhile is placed once PID 1 answers again.
cd "$(dirname "$0")/.." || exit 1
if ! command -v dbus-daemon >/dev/null 2>&1; then
        # make deps installs it: a missing bus daemon is a set-up failure.
        echo "FAIL daemon/systemd-bus (dbus-daemon not installed: run make deps)"
        exit 1
fi
T=$(mktemp -d /tmp/coschedd-test.XXXXXX)
. "$(dirname "$0")/private-bus.sh"
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID JOURNAL_STREAM
BUSPID= MOCKPID= DPID=
trap 'kill -KILL $DPID 2>/dev/null; kill $MOCKPID $BUSPID 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$T"' EXIT
fail=0
pass() { echo "PASS daemon/$1"; }
failt() { echo "FAIL daemon/$1: $2"; fail=1; }
waitfor() {
        i=0
        while [ $i -lt 100 ]; do eval "$1" && return 0; sleep 0.1; i=$((i + 1)); done
        return 1
}

private_bus_start $T || { failt systemd-bus "dbus-daemon did not start: $(cat $T/bus.err)"; exit 1; }

# Fixture sysfs: the QEMU guest, kernel interface with level 1 only.
s=$T/sys
mkdir -p $s/sys/devices/system/cpu $s/sys/kernel/cosched/levels/1
echo 0-7 > $s/sys/devices/system/cpu/online
echo 1 > $s/sys/kernel/cosched/max_level
echo smt > $s/sys/kernel/cosched/levels/1/name
printf '0-1\n2-3\n4-5\n6-7\n' > $s/sys/kernel/cosched/levels/1/spans
for cg in /db.slice /system.slice /system.slice/web.service; do
        mkdir -p $T/cg$cg
        : > $T/cg$cg/cpuset.cpus
        echo 0 > $T/cg$cg/cpu.scheduled
done

./tests/mock-systemd $T/cg $T/mock.log db.slice=/db.slice web.service=/system.slice/web.service idle.service= &
MOCKPID=$!
waitfor 'grep -q ready $T/mock.log 2>/dev/null' || { failt systemd-bus "mock did not start"; exit 1; }

cat > $T/c.conf <<'CONF'
[db]
Slice=db.slice
Level=core
Spans=2
Priority=2

[web]
Unit=web.service
Level=core
Spans=1
Priority=1

[idle]
Unit=idle.service
Level=core
Spans=1
CONF
ARGS="--sysfs-root=$s --cgroup-root=$T/cg --state-dir=$T/state --config=$T/c.conf"
./coschedd --once $ARGS 2>$T/d.log
got="$(cat $T/cg/db.slice/cpuset.cpus) $(cat $T/cg/db.slice/cpu.scheduled) $(cat $T/cg/system.slice/web.service/cpuset.cpus) $(cat $T/cg/system.slice/web.service/cpu.scheduled)"
if [ "$got" = "0-3 1 4-5 1" ]; then pass bus-confines-units; else failt bus-confines-units "got '$got'; $(tail -2 $T/d.log)"; fi
exp="SetUnitProperties db.slice CPUWeight=100
SetUnitProperties db.slice AllowedCPUs=0-3
SetUnitProperties web.service CPUWeight=100
SetUnitProperties web.service AllowedCPUs=4-5
SetUnitProperties idle.service CPUWeight=100
SetUnitProperties idle.service AllowedCPUs=6-7"
got=$(grep ^SetUnitProperties $T/mock.log)
if [ "$got" = "$exp" ]; then pass bus-runtime-properties; else failt bus-runtime-properties "$(echo "$got" | tr '\n' '|')"; fi
if grep -q "^group	idle	unit	idle.service	1	smt	placed	6-7	-	confined; waiting for the unit to start" $T/state/state; then
        pass bus-inactive-unit-waits
else failt bus-inactive-unit-waits "$(grep idle $T/state/state)"; fi

n=$(grep -c SetUnitProperties $T/mock.log)
./coschedd --once $ARGS 2>>$T/d.log
if [ "$(grep -c SetUnitProperties $T/mock.log)" = "$n" ]; then pass bus-idempotent
else failt bus-idempotent "$(tail -3 $T/mock.log | tr '\n' '|')"; fi

sed -i '/^\[web\]/,/^Priority=1/d' $T/c.conf
./coschedd --once $ARGS 2>>$T/d.log
got="$(cat $T/cg/system.slice/web.service/cpu.scheduled) $(grep SetUnitProperties $T/mock.log | tail -1)"
if [ "$got" = "0 SetUnitProperties web.service AllowedCPUs=" ]; then pass bus-removal-resets
else failt bus-removal-resets "got '$got'"; fi

# PID 1 slow to realize: 20 slices each confined 1.5 s after their
# SetUnitProperties, one (stuck.slice) never: its cgroup has no
# cpuset.cpus, as before systemd enables the cpuset controller there.
# The daemon's watchdog is 2 s; the old blocking wait held the loop for up
# to 2 s per unit, 32 s here.
kill $MOCKPID; wait $MOCKPID; MOCKPID=
s=$T/sys2
mkdir -p $s/sys/devices/system/cpu $s/sys/kernel/cosched/levels/1 $T/cg2/stuck.slice
echo 0-47 > $s/sys/devices/system/cpu/online
echo 1 > $s/sys/kernel/cosched/max_level
echo smt > $s/sys/kernel/cosched/levels/1/name
i=0; while [ $i -lt 48 ]; do echo "$i-$((i + 1))"; i=$((i + 2)); done > $s/sys/kernel/cosched/levels/1/spans
echo 0 > $T/cg2/stuck.slice/cpu.scheduled
printf '[daemon]\nReconcileSec=2\n' > $T/c2.conf
units="stuck.slice=/stuck.slice" W=
for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20; do
        mkdir -p $T/cg2/w$i.slice
        : > $T/cg2/w$i.slice/cpuset.cpus
        echo 0 > $T/cg2/w$i.slice/cpu.scheduled
        printf '\n[w%s]\nSlice=w%s.slice\nLevel=core\nSpans=1\n' $i $i >> $T/c2.conf
        units="$units w$i.slice=/w$i.slice" W="$W w$i"
done
printf '\n[stuck]\nSlice=stuck.slice\nLevel=core\nSpans=1\nPriority=-1\n' >> $T/c2.conf
./tests/mock-systemd --realize-delay-ms=1500 --notify-socket=$T/notify $T/cg2 $T/mock2.log $units &
MOCKPID=$!
waitfor 'grep -q ready $T/mock2.log 2>/dev/null' || { failt bus-slow "mock did not start"; exit 1; }
C="./coschedctl --state-dir=$T/state2 --sysfs-root=$s --cgroup-root=$T/cg2"
start=$(date +%s%3N)
NOTIFY_SOCKET=$T/notify WATCHDOG_USEC=2000000 ./coschedd --sysfs-root=$s --cgroup-root=$T/cg2 --state-dir=$T/state2 \
        --config=$T/c2.conf 2>$T/d2.log &
DPID=$!
allowed() { sed -n "s/^SetUnitProperties $1.slice AllowedCPUs=//p" $T/mock2.log | tail -1; }

if waitfor 'grep -q " READY=1$" $T/mock2.log'; then
        # First "asked systemd ..., no answer yet", then, once PID 1
        # answered, what cpuset.cpus shows.
        waitfor '$C status | grep -q "^stuck .* waiting  *systemd has not applied AllowedCPUs=$(allowed stuck) to"'
        why="systemd has not applied AllowedCPUs=$(allowed stuck) to /stuck.slice yet (cpuset.cpus: No such file"
        out=$($C status)
        ver=$($C verify); rc=$?
        first=$(grep -m1 ' STATUS=' $T/mock2.log | sed 's/.* STATUS=//')
        if [ "$first" = "0 placed, 0 pending, 0 error, 21 waiting for systemd" ] &&
           echo "$out" | grep -q "^stuck .* waiting  *$why" && [ $rc = 0 ] && echo "$ver" | grep -q "^stuck .* waiting: $why"; then
                pass bus-slow-status-waiting
        else failt bus-slow-status-waiting "STATUS=$first; $(echo "$out" | grep '^stuck'); verify $rc $(echo "$ver" | grep '^stuck')"; fi
else failt bus-slow-status-waiting "no READY=1 in 10 s: $(tail -2 $T/d2.log | tr '\n' '|')"; fi

all_scheduled() {
        for w in $W; do [ "$(cat $T/cg2/$w.slice/cpu.scheduled)" = 1 ] || return 1; done
}
# The mock logs a realization after writing cpuset.cpus: wait for both.
if waitfor 'all_scheduled && [ "$(grep -c "^realized w" $T/mock2.log)" = 20 ]'; then
        bad=
        for w in $W; do
                a=$(allowed $w)
                [ -n "$a" ] && [ "$(cat $T/cg2/$w.slice/cpuset.cpus)" = "$a" ] &&
                        grep -q "^realized $w.slice AllowedCPUs=$a: written, cpu.scheduled was 0$" $T/mock2.log || bad="$bad $w"
        done
        if [ -z "$bad" ]; then pass bus-slow-confined-then-coscheduled
        else failt bus-slow-confined-then-coscheduled "not confined first:$bad; $(grep '^realized' $T/mock2.log | grep -v 'was 0$' | head -2 | tr '\n' '|')"; fi
else
        late=
        for w in $W; do [ "$(cat $T/cg2/$w.slice/cpu.scheduled)" = 1 ] || late="$late $w"; done
        failt bus-slow-confined-then-coscheduled "not coscheduled after 10 s:$late"
fi

# stuck.slice: waiting for 2 s, then an error, still not coscheduled;
# once "systemd" confines it, the next reconcile coschedules it. STATUS=
# is sent last, after cpu.scheduled and the checkpoint.
if waitfor 'grep -q " STATUS=20 placed, 0 pending, 1 error$" $T/mock2.log' &&
   grep -q "^group	stuck	.*	error	.*yet (cpuset.cpus: No such file or directory); waited 2s, retrying every 2s$" $T/state2/state 2>/dev/null &&
   [ "$(cat $T/cg2/stuck.slice/cpu.scheduled)" = 0 ]; then
        pass bus-slow-timeout-is-error
else failt bus-slow-timeout-is-error "$(grep '^group	stuck' $T/state2/state 2>/dev/null); cpu.scheduled $(cat $T/cg2/stuck.slice/cpu.scheduled)"; fi
allowed stuck > $T/cg2/stuck.slice/cpuset.cpus
if waitfor 'grep -q " STATUS=21 placed, 0 pending, 0 error$" $T/mock2.log' &&
   [ "$(cat $T/cg2/stuck.slice/cpu.scheduled)" = 1 ] && $C verify >/dev/null; then
        pass bus-slow-retried-at-reconcile
else failt bus-slow-retried-at-reconcile "$(grep '^group	stuck' $T/state2/state 2>/dev/null); $($C verify 2>&1 | grep -v ' ok$')"; fi

# Every gap between watchdog pings, from the start to now, under the 2 s
# WATCHDOG_USEC; sd-event pings every 1-1.5 s when the loop is free.
kill -TERM $DPID
end=$(date +%s%3N)
waitfor '! kill -0 $DPID 2>/dev/null' || kill -KILL $DPID
wait $DPID 2>/dev/null; DPID=
pings=$(grep -c ' WATCHDOG=1$' $T/mock2.log)
gap=$({ echo $start; sed -n 's/^notify \([0-9]*\) WATCHDOG=1$/\1/p' $T/mock2.log; echo $end; } |
        awk 'NR > 1 && $1 - p > max { max = $1 - p } { p = $1 } END { print max + 0 }')
if [ "$pings" -ge 2 ] && [ "$gap" -lt 2000 ]; then pass "bus-slow-watchdog-on-time ($pings pings, longest gap ${gap} ms)"
else failt bus-slow-watchdog-on-time "$pings pings in $((end - start)) ms, longest gap $gap ms (WATCHDOG_USEC 2000 ms)"; fi

# PID 1 hangs (the mock drops every method call while it has SIGUSR1):
# a reload that needs it must not stall the loop.
kill $MOCKPID; wait $MOCKPID; MOCKPID=
s=$T/sys
mkdir -p $T/cg3
units=
for u in h1 h2 new; do
        mkdir -p $T/cg3/$u.slice
        : > $T/cg3/$u.slice/cpuset.cpus
        echo 0 > $T/cg3/$u.slice/cpu.scheduled
        units="$units $u.slice=/$u.slice"
done
printf '[daemon]\nReconcileSec=1\n\n[h1]\nSlice=h1.slice\nLevel=core\nSpans=1\n\n[h2]\nSlice=h2.slice\nLevel=core\nSpans=1\n' > $T/c3.conf
./tests/mock-systemd --notify-socket=$T/notify3 $T/cg3 $T/mock3.log $units &
MOCKPID=$!
waitfor 'grep -q ready $T/mock3.log 2>/dev/null' || { failt bus-hung "mock did not start"; exit 1; }
C="./coschedctl --state-dir=$T/state3 --sysfs-root=$s --cgroup-root=$T/cg3"
start=$(date +%s%3N)
NOTIFY_SOCKET=$T/notify3 WATCHDOG_USEC=2000000 ./coschedd --sysfs-root=$s --cgroup-root=$T/cg3 --state-dir=$T/state3 \
        --config=$T/c3.conf 2>$T/d3.log &
DPID=$!
sched() { cat $T/cg3/$1.slice/cpu.scheduled; }
waitfor '[ "$(sched h1) $(sched h2)" = "1 1" ]' || failt bus-hung "h1, h2 not placed: $(tail -2 $T/d3.log | tr '\n' '|')"
kill -USR1 $MOCKPID
waitfor 'grep -q "^hung$" $T/mock3.log'
printf '\n[new]\nSlice=new.slice\nLevel=core\nSpans=1\n' >> $T/c3.conf
hup=$(date +%s%3N)
kill -HUP $DPID
sleep 3
# The reload finished (READY=1 again) at once, though PID 1 never answered.
ready=$(sed -n 's/^notify \([0-9]*\) READY=1$/\1/p' $T/mock3.log | awk -v h=$hup '$1 >= h { print $1 - h; exit }')
out=$($C status); rc=$?
if [ -n "$ready" ] && [ "$ready" -lt 1000 ] && grep -q '^ignored ' $T/mock3.log; then
        pass "bus-hung-reload-does-not-wait (READY=1 ${ready} ms after SIGHUP)"
else failt bus-hung-reload-does-not-wait "READY=1 after SIGHUP: '${ready}' ms; $(grep -c '^ignored' $T/mock3.log) calls ignored"; fi
# Placed groups stay placed and coscheduled; the new one is an error
# (not coscheduled), saying systemd does not answer.
if [ $rc = 1 ] && [ "$(sched h1) $(sched h2) $(sched new)" = "1 1 0" ] &&
   echo "$out" | grep -q '^h1 .* placed *$' &&
   echo "$out" | grep -q '^new .* error  *asked systemd for AllowedCPUs=[0-9-]*, no answer yet; waited 2s'; then
        pass bus-hung-placed-groups-stay
else failt bus-hung-placed-groups-stay "rc=$rc $(sched h1) $(sched h2) $(sched new); $(echo "$out" | tr '\n' '|')"; fi
kill -USR2 $MOCKPID
# Its calls time out (5 s) and the next reconcile asks again.
if waitfor '[ "$(sched new)" = 1 ]' && $C status >/dev/null; then pass bus-hung-then-answers
else failt bus-hung-then-answers "$($C status | grep '^new')"; fi
kill -TERM $DPID
end=$(date +%s%3N)
waitfor '! kill -0 $DPID 2>/dev/null' || kill -KILL $DPID
wait $DPID 2>/dev/null; DPID=
pings=$(grep -c ' WATCHDOG=1$' $T/mock3.log)
gap=$({ echo $start; sed -n 's/^notify \([0-9]*\) WATCHDOG=1$/\1/p' $T/mock3.log; echo $end; } |
        awk 'NR > 1 && $1 - p > max { max = $1 - p } { p = $1 } END { print max + 0 }')
if [ "$pings" -ge 3 ] && [ "$gap" -lt 2000 ]; then pass "bus-hung-watchdog-on-time ($pings pings in $((end - start)) ms, longest gap ${gap} ms)"
else failt bus-hung-watchdog-on-time "$pings pings in $((end - start)) ms, longest gap $gap ms (WATCHDOG_USEC 2000 ms)"; fi
exit $fail
