#!/bin/sh
# vm.c: QEMU VMs under machine.slice, on fixture trees (cgroups, /proc via
# --proc-root) and tests/mock-systemd on a private dbus-daemon (never the
# host's bus or systemd). A VM unit that starts (JobRemoved) is found
# among the running units; its QEMU's threads named "CPU N/TCG" (and only
# those) go to the threaded child cgroup vcpus, the group vm:UNIT, on one
# core (the smallest level holding 2 vCPUs), coscheduled, its vCPUs pinned
# one to one (reported: the fixture's threads are not real); threads that
# appear late are found by the 100 ms retry; QEMU without debug-threads=on
# and a VM too big for any level are errors with the reason; a unit in
# machine.slice that runs no QEMU is no group; [vms] Enable=no releases
# them (SIGHUP) and Level= sets the level; a restart keeps them in place;
# a stop releases and a pending VM takes the core.
cd "$(dirname "$0")/.." || exit 1
if ! command -v dbus-daemon >/dev/null 2>&1; then
        echo "FAIL daemon/vms (dbus-daemon not installed: run make deps)"
        exit 1
fi
T=$(mktemp -d /tmp/coschedd-vms.XXXXXX)
. "$(dirname "$0")/private-bus.sh"
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID JOURNAL_STREAM
BUSPID= MOCKPID= DPID= FQ=
trap 'kill -KILL $DPID $FQ 2>/dev/null; kill $MOCKPID $BUSPID 2>/dev/null; exec 9>&-; [ -n "$KEEP" ] || rm -rf "$T"' EXIT
fail=0
pass() { echo "PASS daemon/$1"; }
failt() { echo "FAIL daemon/$1: $2"; fail=1; }
waitfor() {
        i=0
        while [ $i -lt 100 ]; do eval "$1" && return 0; sleep 0.1; i=$((i + 1)); done
        return 1
}

private_bus_start $T || { failt vms "dbus-daemon did not start: $(cat $T/bus.err)"; exit 1; }

# The QEMU guest: SMT pairs 0-1 2-3 4-5 6-7, kernel level 1 only.
s=$T/sys
mkdir -p $s/sys/devices/system/cpu $s/sys/kernel/cosched/levels/1
echo 0-7 > $s/sys/devices/system/cpu/online
echo 1 > $s/sys/kernel/cosched/max_level
echo smt > $s/sys/kernel/cosched/levels/1/name
printf '0-1\n2-3\n4-5\n6-7\n' > $s/sys/kernel/cosched/levels/1/spans

# cgroups as the kernel shows them (a mkdir here makes no files: the
# vcpus children are there with the files the kernel would create).
G=$T/cg
mkdir -p $G/machine.slice $G/db
echo "cpuset cpu" > $G/cgroup.subtree_control
echo "cpuset cpu" > $G/machine.slice/cgroup.subtree_control
: > $G/db/cpuset.cpus; echo 0 > $G/db/cpu.scheduled
# vm PID NCPUS NAMEOPT: a VM unit's cgroup and its QEMU in the /proc fixture.
P=$T/proc
vm() {
        unit=$1 pid=$2 n=$3 name=$4 c=$G/machine.slice/$1
        mkdir -p $c/vcpus
        echo $pid > $c/cgroup.procs
        : > $c/cgroup.subtree_control
        echo domain > $c/vcpus/cgroup.type
        : > $c/vcpus/cgroup.threads; : > $c/vcpus/cpuset.cpus; echo 0 > $c/vcpus/cpu.scheduled
        mkdir -p $P/$pid/task/$pid
        printf 'qemu-system-x86_64\0-accel\0tcg\0-name\0%s\0-smp\0%s\0' "$name" "$n" > $P/$pid/cmdline
        echo qemu-system-x86 > $P/$pid/task/$pid/comm
        mkdir -p $P/$pid/task/$((pid + 50)); echo IO mon_iothread > $P/$pid/task/$((pid + 50))/comm
}
vcpu_threads() { # PID N: the threads QEMU names with debug-threads=on
        i=0
        while [ $i -lt $2 ]; do
                mkdir -p $P/$1/task/$(($1 + 1 + i)); echo "CPU $i/TCG" > $P/$1/task/$(($1 + 1 + i))/comm
                ln -s $1/task/$(($1 + 1 + i)) $P/$(($1 + 1 + i))	# /proc/TID, as the kernel has it
                i=$((i + 1))
        done
}
vm vm1.service 1000 2 vm1,debug-threads=on; vcpu_threads 1000 2
vm vm2.service 2000 2 vm2,debug-threads=on; vcpu_threads 2000 2
vm late.service 3000 2 late,debug-threads=on
vm nodbg.service 4000 2 nodbg; vcpu_threads 4000 2
vm big.service 5000 4 big,debug-threads=on; vcpu_threads 5000 4
mkdir -p $G/machine.slice/ct.service $P/6000/task/6000
echo 6000 > $G/machine.slice/ct.service/cgroup.procs
printf '/bin/sleep\0infinity\0' > $P/6000/cmdline

# db takes three cores: one is left for a 2-vCPU VM, a second VM is pending.
printf '[daemon]\nReconcileSec=1\n\n[db]\nCgroupPath=/db\nLevel=core\nSpans=3\nPriority=5\n' > $T/c.conf

mkfifo $T/ctl
./tests/mock-systemd --control=$T/ctl --notify-socket=$T/notify $G $T/mock.log &
MOCKPID=$!
waitfor 'grep -q ready $T/mock.log 2>/dev/null' || { failt vms "mock did not start"; exit 1; }
exec 9>$T/ctl
ctl() { echo "$*" >&9; }
C="./coschedctl --state-dir=$T/state --sysfs-root=$s --cgroup-root=$G"
ARGS="--sysfs-root=$s --cgroup-root=$G --proc-root=$P --state-dir=$T/state --config=$T/c.conf"
start_daemon() {
        NOTIFY_SOCKET=$T/notify ./coschedd $ARGS 2>>$T/d.log &
        DPID=$!
}
stop_daemon() {
        kill -TERM $DPID
        waitfor '! kill -0 $DPID 2>/dev/null' || kill -KILL $DPID
        wait $DPID 2>/dev/null; DPID=
}
V=/machine.slice
cpus() { cat $G$1/cpuset.cpus; }
sched() { cat $G$1/cpu.scheduled; }
st() { $C status | awk -v g="$1" '$1 == g { print $8 }'; }
line() { $C status | grep "^$1 "; }

start_daemon
waitfor 'grep -q " READY=1$" $T/mock.log' || failt vms "no READY=1: $(tail -3 $T/d.log | tr '\n' '|')"
t0=$(date +%s%3N)
ctl start vm1.service $V/vm1.service
if waitfor '[ "$(sched $V/vm1.service/vcpus)" = 1 ]'; then
        t1=$(date +%s%3N)
        got="$(cpus $V/vm1.service/vcpus) $(cat $G$V/vm1.service/vcpus/cgroup.type) $(st vm:vm1.service)"
        if [ "$got" = "6-7 threaded placed" ] && [ "$(cat $G$V/vm1.service/vcpus/cgroup.threads)" = 1002 ] &&
           line vm:vm1.service | grep -q "pinned vCPU:CPU 0:6 1:7" &&
           grep -q "VM vm1.service vm1: QEMU pid 1000, 2 vCPU threads (guest SMT threads 1) moved into $V/vm1.service/vcpus, emulator and I/O threads left out" $T/d.log; then
                pass "vms-start-placed-pinned (coscheduled $((t1 - t0)) ms after the start job, mock PID 1)"
        else failt vms-start-placed-pinned "got '$got'; $(line vm:vm1.service)"; fi
else failt vms-start-placed-pinned "not coscheduled: $(tail -3 $T/d.log | tr '\n' '|')"; fi
# verify reads the pins back (Cpus_allowed_list of each vCPU thread in
# vcpus, by its name): right, then one thread widened.
printf '1001\n1002\n' > $G$V/vm1.service/vcpus/cgroup.threads
echo "Cpus_allowed_list:	6" > $P/1001/status; echo "Cpus_allowed_list:	7" > $P/1002/status
out=$($C --proc-root=$P verify); rc=$?
out=$(echo "$out" | grep '^vm:vm1.service ')
echo "Cpus_allowed_list:	6-7" > $P/1002/status
out2=$($C --proc-root=$P verify); rc2=$?
echo "Cpus_allowed_list:	7" > $P/1002/status
if [ "$rc" = 0 ] && echo "$out" | grep -q " ok$" && [ "$rc2" = 1 ] &&
   echo "$out2" | grep -q "^vm:vm1.service .*drift: vCPU 1 (thread 1002) may run on 6-7, want CPU 7$"; then
        pass vms-verify-pins
else failt vms-verify-pins "rc=$rc '$out'; rc=$rc2 '$(echo "$out2" | tr '\n' '|')'"; fi

# The controllers for vcpus: in the VM's cgroup, which systemd leaves to
# a Delegate=yes unit; not in the emulator's place.
if [ "$(cat $G$V/vm1.service/cgroup.subtree_control)" = "+cpu" ] || grep -q cpuset $G$V/vm1.service/cgroup.subtree_control; then
        pass vms-controllers-in-vm-cgroup
else failt vms-controllers-in-vm-cgroup "$(cat $G$V/vm1.service/cgroup.subtree_control)"; fi

# A second VM: no core left, pending with the numbers.
ctl start vm2.service $V/vm2.service
if waitfor '[ "$(st vm:vm2.service)" = pending ]' && [ "$(sched $V/vm2.service/vcpus)" = 0 ]; then
        pass vms-second-pending
else failt vms-second-pending "$(line vm:vm2.service)"; fi

# Threads that appear after the start job: found by the retry.
ctl start late.service $V/late.service
sleep 0.5
if [ -z "$(st vm:late.service)" ]; then
        vcpu_threads 3000 2
        if waitfor '[ -n "$(st vm:late.service)" ]' && [ "$(cat $G$V/late.service/vcpus/cgroup.threads)" = 3002 ]; then
                pass vms-late-threads-found
        else failt vms-late-threads-found "$(line vm:late.service)"; fi
else failt vms-late-threads-found "a group before its threads: $(line vm:late.service)"; fi
ctl stop late.service
waitfor '[ -z "$(st vm:late.service)" ]'

# Without debug-threads=on: an error that says so; too big: an error.
ctl start nodbg.service $V/nodbg.service
ctl start big.service $V/big.service
ctl start ct.service $V/ct.service
if waitfor 'line vm:nodbg.service | grep -q " error " && line vm:big.service | grep -q " error "' &&
   line vm:nodbg.service | grep -q "runs without -name ...,debug-threads=on: its vCPU threads cannot be told from its other threads; left alone" &&
   line vm:big.service | grep -q "4 vCPUs: no coscheduling level this kernel offers (max_level 1) has spans of 4 CPUs" &&
   [ "$(cat $G$V/nodbg.service/vcpus/cgroup.threads)" = "" ] && [ "$(cat $G$V/nodbg.service/vcpus/cgroup.type)" = domain ]; then
        pass vms-errors-said
else failt vms-errors-said "$($C status | grep vm: | tr '\n' '|')"; fi
if ! $C status | grep -q "ct.service"; then pass vms-no-qemu-no-group
else failt vms-no-qemu-no-group "$(line vm:ct.service)"; fi

# Restart: the VM stays where it is, its files are not rewritten.
touch -d '2000-01-01' $G$V/vm1.service/vcpus/cpuset.cpus $G$V/vm1.service/vcpus/cpu.scheduled
stop_daemon
start_daemon
waitfor '[ "$(grep -c " READY=1$" $T/mock.log)" = 2 ]'
sleep 0.5
if [ "$(st vm:vm1.service) $(cpus $V/vm1.service/vcpus) $(sched $V/vm1.service/vcpus)" = "placed 6-7 1" ] &&
   [ -z "$(find $G$V/vm1.service/vcpus -newermt 2001-01-01 -name 'cpu*')" ]; then
        pass vms-restart-keeps-placement
else failt vms-restart-keeps-placement "$(line vm:vm1.service); $(find $G$V/vm1.service/vcpus -newermt 2001-01-01)"; fi

# Stop: vm1's group released (cpu.scheduled 0, cpuset widened), and the
# pending vm2 takes the core in the same pass.
ctl stop vm1.service
if waitfor '[ "$(st vm:vm2.service)" = placed ]' && [ "$(sched $V/vm1.service/vcpus)" = 0 ] &&
   [ "$(cpus $V/vm1.service/vcpus)" = "" ] && [ "$(cpus $V/vm2.service/vcpus) $(sched $V/vm2.service/vcpus)" = "6-7 1" ] &&
   ! $C status | grep -q "^vm:vm1.service "; then
        pass vms-stop-released-pending-placed
else failt vms-stop-released-pending-placed "$($C status | grep vm: | tr '\n' '|'); vm1 $(sched $V/vm1.service/vcpus)"; fi

# A reload looks at VMs in error anew: nodbg.service, restarted with
# debug-threads=on behind the same unit, is placed... when there is room;
# here its error goes away and it is pending or placed.
printf 'qemu-system-x86_64\0-name\0nodbg,debug-threads=on\0-smp\0%s\0' 2 > $P/4000/cmdline
kill -HUP $DPID
if waitfor '! line vm:nodbg.service | grep -q " error "' && line vm:nodbg.service | grep -qE " (pending|placed) "; then
        pass vms-reload-retries-errors
else failt vms-reload-retries-errors "$(line vm:nodbg.service)"; fi

# Policy: Enable=no releases every VM; Level= sets the level (4 vCPUs on
# two cores, each coscheduled by itself); db gives up a core for it.
printf '[daemon]\nReconcileSec=1\n\n[vms]\nEnable=no\n\n[db]\nCgroupPath=/db\nLevel=core\nSpans=1\nPriority=5\n' > $T/c.conf
kill -HUP $DPID
if waitfor '! $C status | grep -q "^vm:"' && [ "$(sched $V/vm2.service/vcpus)" = 0 ]; then
        pass vms-policy-opt-out
else failt vms-policy-opt-out "$($C status | grep vm: | tr '\n' '|')"; fi
printf '[daemon]\nReconcileSec=1\n\n[vms]\nLevel=core\nPin=siblings\n\n[db]\nCgroupPath=/db\nLevel=core\nSpans=1\nPriority=5\n' > $T/c.conf
kill -HUP $DPID
if waitfor '[ "$(st vm:big.service)" = placed ]' && [ "$(cpus $V/big.service/vcpus)" = "2-5" ] &&
   line vm:big.service | grep -q "pinned vCPU:CPU 0:2 1:3 2:4 3:5"; then
        pass vms-policy-level
else failt vms-policy-level "$($C status | grep vm: | tr '\n' '|')"; fi
stop_daemon

# The host's real /proc and sched_setaffinity (no --proc-root): a stand-in
# QEMU (tests/fake-qemu: two sleeping threads "CPU 0/TCG", "CPU 1/TCG")
# in a one-core fixture topology of the host's CPUs 0-1. Its threads are
# pinned one to one; a widened pin (as a cpuset write leaves it) is
# re-applied by the next reconcile; Enable=no gives them all CPUs back.
s2=$T/sys2
mkdir -p $s2/sys/devices/system/cpu $s2/sys/kernel/cosched/levels/1
echo 0-1 > $s2/sys/devices/system/cpu/online
echo 1 > $s2/sys/kernel/cosched/max_level
echo smt > $s2/sys/kernel/cosched/levels/1/name
echo 0-1 > $s2/sys/kernel/cosched/levels/1/spans
ln -s "$PWD/tests/fake-qemu" $T/qemu-system-x86_64
$T/qemu-system-x86_64 -name real,debug-threads=on -smp 2 > $T/fq.out &
FQ=$!
waitfor 'grep -q ready $T/fq.out' || failt vms-real "fake-qemu not ready"
c=$G/machine.slice/real.service
mkdir -p $c/vcpus
echo $FQ > $c/cgroup.procs; : > $c/cgroup.subtree_control
echo domain > $c/vcpus/cgroup.type
: > $c/vcpus/cgroup.threads; : > $c/vcpus/cpuset.cpus; echo 0 > $c/vcpus/cpu.scheduled
tid() { for t in /proc/$FQ/task/*; do [ "$(cat $t/comm)" = "CPU $1/TCG" ] && echo ${t##*/}; done; }
aff() { taskset -pc $1 | awk -F': ' '{ print $2 }'; }
T0=$(tid 0) T1=$(tid 1)
printf '[daemon]\nReconcileSec=1\n' > $T/c2.conf
ARGS="--sysfs-root=$s2 --cgroup-root=$G --state-dir=$T/state2 --config=$T/c2.conf"
C2="./coschedctl --state-dir=$T/state2 --sysfs-root=$s2 --cgroup-root=$G"
start_daemon
ctl start real.service $V/real.service
waitfor '[ "$(aff $T0) $(aff $T1)" = "0 1" ]'
# A fixture's cgroup.threads keeps the last write; the kernel's lists both.
[ "$(cat $c/vcpus/cgroup.threads)" = "$T1" ] && printf '%s\n%s\n' $T0 $T1 > $c/vcpus/cgroup.threads
if [ "$(aff $T0) $(aff $T1)" = "0 1" ] && [ "$(sched $V/real.service/vcpus)" = 1 ] && $C2 verify > $T/v2.out; then
        pass "vms-real-threads-pinned (threads $T0 $T1 on CPUs 0 1, verify ok)"
else failt vms-real-threads-pinned "$(aff $T0) / $(aff $T1); $(cat $T/v2.out 2>/dev/null | tr '\n' '|')"; fi
taskset -pc 0-1 $T1 > /dev/null
if waitfor '[ "$(aff $T1)" = 1 ]' && grep -q "vm:real.service: vCPU pins re-applied (pinned vCPU:CPU 0:0 1:1)" $T/d.log; then
        pass vms-real-pin-repaired
else failt vms-real-pin-repaired "thread $T1 on $(aff $T1)"; fi
printf '[daemon]\nReconcileSec=1\n[vms]\nEnable=no\n' > $T/c2.conf
kill -HUP $DPID
if waitfor '[ "$(aff $T0) $(aff $T1)" = "0,1 0,1" ] || [ "$(aff $T0) $(aff $T1)" = "0-1 0-1" ]' &&
   [ "$(sched $V/real.service/vcpus)" = 0 ]; then
        pass vms-real-unpinned-at-opt-out
else failt vms-real-unpinned-at-opt-out "$(aff $T0) / $(aff $T1), cpu.scheduled $(sched $V/real.service/vcpus)"; fi
kill $FQ
stop_daemon
exit $fail
