#!/bin/sh
# bus.c against a mock PID 1 (tests/mock-systemd) on a private dbus-daemon:
# never the host's bus or systemd. Units are confined with runtime
# SetUnitProperties AllowedCPUs= (+ CPUWeight=100), cpu.scheduled goes to
# the unit's ControlGroup, repeated runs change nothing, removal resets.
cd "$(dirname "$0")/.." || exit 1
if ! command -v dbus-daemon >/dev/null 2>&1; then
        # make deps installs it: a missing bus daemon is a set-up failure.
        echo "FAIL daemon/systemd-bus (dbus-daemon not installed: run make deps)"
        exit 1
fi
T=$(mktemp -d /tmp/coschedd-test.XXXXXX)
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID JOURNAL_STREAM
BUSPID= MOCKPID=
trap 'kill $MOCKPID $BUSPID 2>/dev/null; rm -rf "$T"' EXIT
fail=0
pass() { echo "PASS daemon/$1"; }
failt() { echo "FAIL daemon/$1: $2"; fail=1; }
waitfor() {
        i=0
        while [ $i -lt 100 ]; do eval "$1" && return 0; sleep 0.1; i=$((i + 1)); done
        return 1
}

cat > $T/bus.conf <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$T/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
dbus-daemon --config-file=$T/bus.conf --nofork --nopidfile 2>$T/bus.err &
BUSPID=$!
waitfor '[ -S $T/bus ]' || { failt systemd-bus "dbus-daemon did not start: $(cat $T/bus.err)"; exit 1; }
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/bus

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
got=$(grep SetUnitProperties $T/mock.log)
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
got="$(cat $T/cg/system.slice/web.service/cpu.scheduled) $(tail -1 $T/mock.log)"
if [ "$got" = "0 SetUnitProperties web.service AllowedCPUs=" ]; then pass bus-removal-resets
else failt bus-removal-resets "got '$got'"; fi
exit $fail
