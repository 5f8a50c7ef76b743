#!/bin/sh
# coschedd end to end on fixture trees: a fake sysfs (the QEMU guest's
# topology with the kernel interface) and a fake cgroup2 tree of plain
# files. Never touches the host's cgroups: --cgroup-root points into $T.
cd "$(dirname "$0")/.." || exit 1
D=./coschedd
T=$(mktemp -d /tmp/coschedd-test.XXXXXX)
# Not under anyone's service manager here.
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID JOURNAL_STREAM
trap 'kill $PID 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$T"' EXIT
fail=0
pass() { echo "PASS daemon/$1"; }
# waitfor CMD: poll up to 10 s (CI machines can be busy building kernels).
waitfor() {
        i=0
        while [ $i -lt 100 ]; do eval "$1" && return 0; sleep 0.1; i=$((i + 1)); done
        return 1
}
failt() { echo "FAIL daemon/$1: $2"; fail=1; }

mk_sysfs() {
        r=$T/sys
        mkdir -p $r/sys/devices/system/cpu $r/sys/kernel/cosched/levels/1 $r/sys/kernel/cosched/levels/2 $r/sys/kernel/cosched/levels/3
        echo 0-7 > $r/sys/devices/system/cpu/online
        for c in 0 1 2 3 4 5 6 7; do
                d=$r/sys/devices/system/cpu/cpu$c/topology
                mkdir -p $d
                t=$((c / 2 * 2)); p=$((c / 4 * 4))
                echo "$t-$((t + 1))" > $d/thread_siblings_list
                echo "$p-$((p + 3))" > $d/package_cpus_list
        done
        echo 3 > $r/sys/kernel/cosched/max_level
        echo smt > $r/sys/kernel/cosched/levels/1/name
        printf '0-1\n2-3\n4-5\n6-7\n' > $r/sys/kernel/cosched/levels/1/spans
        echo mc > $r/sys/kernel/cosched/levels/2/name
        printf '0-3\n4-7\n' > $r/sys/kernel/cosched/levels/2/spans
        echo die > $r/sys/kernel/cosched/levels/3/name
        echo 0-7 > $r/sys/kernel/cosched/levels/3/spans
}

mk_cgroup() { # path
        mkdir -p "$T/cg$1"
        for f in cpuset.cpus cpu.scheduled cgroup.subtree_control; do : > "$T/cg$1/$f"; done
        echo 0 > "$T/cg$1/cpu.scheduled"
}

mk_sysfs
mkdir -p $T/cg $T/state $T/etc/conf.d
: > $T/cg/cgroup.subtree_control
mk_cgroup /batch
mk_cgroup /batch/a
mk_cgroup /batch/b
mk_cgroup /web
mk_cgroup /vip

cat > $T/etc/coschedd.conf <<'CONF'
[daemon]
ReservedCPUs=0
ReconcileSec=1

[a]
CgroupPath=/batch/a
Level=core
Spans=1
Priority=10

[b]
CgroupPath=/batch/b
Level=package
CPUs=4

[web]
CgroupPath=/web
Level=core
Spans=4
CONF
ARGS="--no-bus --sysfs-root=$T/sys --cgroup-root=$T/cg --state-dir=$T/state --config=$T/etc/coschedd.conf"

# --check-config: silent success.
out=$($D --check-config $ARGS 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -z "$out" ]; then pass check-config-silent; else failt check-config-silent "rc=$rc out=$out"; fi

# --once: a on core 2-3 (0 reserved), b on package 4-7, web pending.
$D --once $ARGS 2>$T/log
got="$(cat $T/cg/batch/a/cpuset.cpus) $(cat $T/cg/batch/a/cpu.scheduled) $(cat $T/cg/batch/b/cpuset.cpus) $(cat $T/cg/batch/b/cpu.scheduled) $(cat $T/cg/web/cpu.scheduled)"
if [ "$got" = "2-3 1 4-7 2 0" ]; then pass once-places-groups; else failt once-places-groups "got '$got'"; fi
if grep -q '+cpuset' $T/cg/batch/cgroup.subtree_control 2>/dev/null || grep -q '+cpu' $T/cg/batch/cgroup.subtree_control; then
        pass enables-controllers
else failt enables-controllers "batch subtree_control: $(cat $T/cg/batch/cgroup.subtree_control)"; fi
if grep -q "^group	web	cgroup	/web	1	smt	pending	-	-	needs 4 level-1 (smt) spans, 0 free" $T/state/state; then
        pass state-records-pending
else failt state-records-pending "$(grep web $T/state/state)"; fi

# A restart keeps placements (from the checkpoint) even when a new
# higher-priority group would like the same CPUs.
cat >> $T/etc/coschedd.conf <<'CONF'

[vip]
CgroupPath=/vip
Level=core
Spans=1
Priority=100
CONF
$D --once $ARGS 2>>$T/log
got="$(cat $T/cg/batch/a/cpuset.cpus) $(cat $T/cg/vip/cpuset.cpus)"
if [ "$got" = "2-3 " ] && grep -q "^group	vip	.*pending" $T/state/state; then pass restart-keeps-placement
else failt restart-keeps-placement "got '$got'"; fi

# Broken config: --check-config prints every error with file:line, exit 1.
cp $T/etc/coschedd.conf $T/good.conf
printf '\n[bad]\nCgroupPath=/x\nLevel=hyper\nSpans=1\nColour=red\n' >> $T/etc/coschedd.conf
out=$($D --check-config $ARGS 2>&1); rc=$?
exp="$T/etc/coschedd.conf:29: Level=hyper: expected a level number (1-15) or one of core, smt, llc, cache, package, socket, cls, mc, die, numa
$T/etc/coschedd.conf:31: unknown key 'Colour' in a group section"
if [ $rc -eq 1 ] && [ "$out" = "$exp" ]; then pass check-config-errors; else failt check-config-errors "rc=$rc out=$out"; fi
if $D --once $ARGS 2>/dev/null; then failt refuses-invalid-config "started"; else pass refuses-invalid-config; fi

# A config or drop-in directory named on the command line must be there:
# a typo is no empty configuration. (The derived conf.d may be absent.)
out=$($D --check-config --sysfs-root=$T/sys --config=$T/etc/nope.conf 2>&1); rc=$?
if [ $rc -eq 1 ] && [ "$out" = "$T/etc/nope.conf: cannot read: No such file or directory" ]; then
        pass check-config-named-config-missing
else failt check-config-named-config-missing "rc=$rc out=$out"; fi
out=$($D --once $ARGS --config=$T/good.conf --config-dir=$T/etc/nodir 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "^coschedd: $T/etc/nodir: cannot read the drop-in directory: No such file or directory$"; then
        pass daemon-named-config-dir-missing
else failt daemon-named-config-dir-missing "rc=$rc out=$out"; fi

# -t resolves levels and sizes on the machine (the fixture: smt, mc, die;
# max_level 3): valid INI that this topology cannot place is an error.
cat > $T/topo.conf <<'CONF'
[daemon]
Rounding=error

[n]
CgroupPath=/n
Level=numa
Spans=1

[nine]
CgroupPath=/nine
Level=9
Spans=1

[odd]
CgroupPath=/odd
Level=core
CPUs=3

[fine]
CgroupPath=/fine
Level=die
CPUs=8
CONF
out=$($D -t --sysfs-root=$T/sys --config=$T/topo.conf 2>&1); rc=$?
exp="$T/topo.conf:6: group [n]: Level=numa: level 'numa' does not exist on this machine
$T/topo.conf:11: group [nine]: Level=9: level 9 does not exist (this machine has levels 1-3)
$T/topo.conf:17: group [odd]: CPUs=3 is not a multiple of the 2 CPUs of a level-1 (smt) span"
if [ $rc -eq 1 ] && [ "$out" = "$exp" ]; then pass check-config-topology; else failt check-config-topology "rc=$rc out=$out"; fi
cp -r $T/sys $T/sys1 && echo 1 > $T/sys1/sys/kernel/cosched/max_level
out=$($D -t --sysfs-root=$T/sys1 --config=$T/topo.conf 2>&1 | tail -1); rc=$?
if [ "$out" = "$T/topo.conf:21: group [fine]: Level=die is level 3 (die), above the kernel's max_level 1" ]; then
        pass check-config-max-level
else failt check-config-max-level "out=$out"; fi
out=$($D -t --sysfs-root=$T/nosys --config=$T/good.conf 2>&1); rc=$?
case "$rc $out" in "1 $T/nosys: cannot check the levels against the CPU topology: cannot read $T/nosys/sys/devices/system/cpu/online"*)
        pass check-config-needs-topology ;;
*) failt check-config-needs-topology "rc=$rc out=$out" ;;
esac

# --syntax-only, the unit's ExecStartPre= and ExecReload=: the files
# alone. The same config passes, and the daemon starts with it: the groups
# this machine cannot place are in error, the others placed.
out=$($D -t --syntax-only --sysfs-root=$T/sys --config=$T/topo.conf 2>&1); rc=$?
out2=$($D --syntax-only --config=$T/topo.conf 2>&1); rc2=$?
if [ "$rc $rc2" = "0 2" ] && [ -z "$out" ] && [ "$out2" = "coschedd: --syntax-only goes with -t (--check-config)" ]; then
        pass check-config-syntax-only
else failt check-config-syntax-only "rc=$rc out=$out; rc=$rc2 $out2"; fi
mk_cgroup /fine; mk_cgroup /n; mk_cgroup /nine; mk_cgroup /odd
$D --once --no-bus --sysfs-root=$T/sys --cgroup-root=$T/cg --state-dir=$T/state-topo --config=$T/topo.conf 2>/dev/null; rc=$?
got=$(awk -F'\t' '$1 == "group" { printf "%s %s|", $2, $7 }' $T/state-topo/state 2>/dev/null)
if [ $rc = 0 ] && [ "$got" = "n error|nine error|odd error|fine placed|" ] && [ "$(cat $T/cg/fine/cpu.scheduled)" = 3 ]; then
        pass daemon-level-missing-is-group-error
else failt daemon-level-missing-is-group-error "rc=$rc $got"; fi

# The event loop: SIGHUP with a broken config keeps the old placement;
# a good one removing group a releases it (0 first, then widen).
cp $T/good.conf $T/etc/coschedd.conf
ino=$(stat -c %i $T/state/state)
$D $ARGS 2>$T/loop.log &
PID=$!
# The checkpoint is replaced (rename) by every reconcile.
waitfor '[ "$(stat -c %i $T/state/state)" != "$ino" ]'
printf '\n[bad]\nLevel=7 # seven\n' >> $T/etc/coschedd.conf
kill -HUP $PID
waitfor 'grep -q "keeping the running one" $T/loop.log'
got="$(cat $T/cg/batch/a/cpuset.cpus) $(cat $T/cg/batch/a/cpu.scheduled)"
if [ "$got" = "2-3 1" ] && grep -q "keeping the running one" $T/loop.log; then pass reload-broken-keeps-old
else failt reload-broken-keeps-old "got '$got'; $(tail -1 $T/loop.log)"; fi
sed '/^\[a\]/,/^Priority=10/d' $T/good.conf > $T/etc/coschedd.conf
kill -HUP $PID
waitfor '! grep -q "^group	a	" $T/state/state'
got="$(cat $T/cg/batch/a/cpu.scheduled) [$(cat $T/cg/batch/a/cpuset.cpus)]"
if [ "$got" = "0 []" ] && ! grep -q "^group	a	" $T/state/state; then pass reload-removal-releases
else failt reload-removal-releases "got '$got'"; fi
# CPU hotplug: CPU 7 goes offline, the kernel's spans shrink; the timer
# sees the online mask change, b (4 CPUs of a package) no longer fits and
# is released; when CPU 7 is back, b is placed again.
k=$T/sys/sys/kernel/cosched/levels
echo 0-6 > $T/sys/sys/devices/system/cpu/online
printf '0-1\n2-3\n4-5\n6\n' > $k/1/spans; printf '0-3\n4-6\n' > $k/2/spans; echo 0-6 > $k/3/spans
if waitfor 'grep -q "^group	b	.*pending	-	-	needs 4 CPUs" $T/state/state' && [ "$(cat $T/cg/batch/b/cpu.scheduled)" = 0 ]; then
        pass hotplug-offline-releases
else failt hotplug-offline-releases "$(grep '^group	b' $T/state/state); sched $(cat $T/cg/batch/b/cpu.scheduled)"; fi
echo 0-7 > $T/sys/sys/devices/system/cpu/online
printf '0-1\n2-3\n4-5\n6-7\n' > $k/1/spans; printf '0-3\n4-7\n' > $k/2/spans; echo 0-7 > $k/3/spans
if waitfor '[ "$(cat $T/cg/batch/b/cpu.scheduled)" = 2 ]' && [ "$(cat $T/cg/batch/b/cpuset.cpus)" = 4-7 ]; then
        pass hotplug-online-replaces
else failt hotplug-online-replaces "$(grep '^group	b' $T/state/state)"; fi
kill -TERM $PID; wait $PID; rc=$?
if [ $rc -eq 0 ]; then pass sigterm-exits-cleanly; else failt sigterm-exits-cleanly "rc=$rc"; fi
PID=

# coschedctl reads the checkpoint, the fixture sysfs and cgroup tree, and
# calls it current only while a daemon runs: start the loop again.
ino=$(stat -c %i $T/state/state)
$D $ARGS 2>$T/loop2.log &
PID=$!
waitfor '[ "$(stat -c %i $T/state/state)" != "$ino" ]'
C="./coschedctl --state-dir=$T/state --sysfs-root=$T/sys --cgroup-root=$T/cg"
out=$($C status); rc=$?
# web (4 cores) is pending: status says so in its exit status.
if [ $rc -eq 1 ] && echo "$out" | grep -q '^b  *cgroup /batch/b  *2 mc  *4-7  *4  *placed' &&
   echo "$out" | grep -q '^vip .* 2-3  *2  *placed' && echo "$out" | grep -q '^web .* pending  *needs 4'; then
        pass ctl-status
else failt ctl-status "rc=$rc $(echo "$out" | tr '\n' '|')"; fi
out=$($C --json status)
case "$out" in
'[{"group":"b","kind":"cgroup","target":"/batch/b","level":2,"level_name":"mc","cpus":"4-7","spans":"4","state":"placed",'*) pass ctl-status-json ;;
*) failt ctl-status-json "$out" ;;
esac
out=$($C topology)
if echo "$out" | grep -q '^  mc 4-7 \[b\]' && echo "$out" | grep -q '^    smt 0-1 \[partly: reserved\]' && echo "$out" | grep -q '^    smt 2-3 \[vip\]' && echo "$out" | grep -q '^die 0-7 \[partly: b,vip,reserved\]'; then
        pass ctl-topology
else failt ctl-topology "$(echo "$out" | tr '\n' '|')"; fi
if $C --json topology | grep -q '"span":4,"cpus":"4-7","used_by":"b"'; then pass ctl-topology-json; else failt ctl-topology-json "$($C --json topology)"; fi
# verify checks pending (and error) groups too: reported, exit 1, and
# drift if one is coscheduled all the same.
out=$($C verify); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q '^web  */web  *pending: needs 4 level-1 (smt) spans, 0 free$' &&
   echo "$out" | grep -q '^b .* ok$'; then
        pass ctl-verify-pending
else failt ctl-verify-pending "rc=$rc $(echo "$out" | tr '\n' '|')"; fi
echo 1 > $T/cg/web/cpu.scheduled
if $C verify | grep -q '^web  */web  *drift: cpu.scheduled is 1 while pending: needs 4'; then pass ctl-verify-pending-coscheduled
else failt ctl-verify-pending-coscheduled "$($C verify | grep '^web')"; fi
echo 0 > $T/cg/web/cpu.scheduled

# Without web everything is placed: exit 0.
sed -i '/^\[web\]/,/^Spans=4/d' $T/etc/coschedd.conf
kill -HUP $PID
waitfor '! grep -q "^group	web	" $T/state/state'
out=$($C status); rc=$?
if [ $rc -eq 0 ]; then pass ctl-status-all-placed; else failt ctl-status-all-placed "rc=$rc $(echo "$out" | tr '\n' '|')"; fi
if $C verify >/dev/null; then pass ctl-verify-clean; else failt ctl-verify-clean "$($C verify)"; fi
echo 0 > $T/cg/batch/b/cpu.scheduled
out=$($C verify); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q '^b .*drift: cpu.scheduled is 0, want 2'; then pass ctl-verify-drift
else failt ctl-verify-drift "rc=$rc $out"; fi
if $C --json verify | grep -q '"state":"placed","result":"drift: cpu.scheduled is 0, want 2"'; then pass ctl-verify-json; else failt ctl-verify-json "$($C --json verify)"; fi
# ReconcileSec=1: the loop rewrites what drifted.
if waitfor '$C verify >/dev/null'; then pass reconcile-repairs-drift; else failt reconcile-repairs-drift "$($C verify)"; fi

# CPUs= rounded to whole spans is said, in the log and in status.
sed -i '/^\[b\]/,/^CPUs=4/d' $T/etc/coschedd.conf
printf '\n[r]\nCgroupPath=/batch/b\nLevel=core\nCPUs=3\n' >> $T/etc/coschedd.conf
kill -HUP $PID
note="CPUs=3 rounded up to 4 (whole level-1 smt spans of 2 CPUs)"
if waitfor 'grep -q "^group	r	.*placed	4-7	/batch/b	$note$" $T/state/state' &&
   $C status | grep -q "^r .* placed  *$note$" && grep -q "\[r\] placed /batch/b on CPUs 4-7 (level 1 smt): $note$" $T/loop2.log; then
        pass rounding-reported
else failt rounding-reported "$(grep '^group	r' $T/state/state); $(grep '\[r\]' $T/loop2.log | tail -1)"; fi

# The daemon stops: the checkpoint stays, but is stale.
kill -TERM $PID; wait $PID; PID=
out=$($C status 2>&1 >/dev/null); rc=$?
if [ $rc -eq 3 ] && echo "$out" | grep -q "^coschedctl: coschedd (pid [0-9]*) is not running: the checkpoint in $T/state is stale$"; then
        pass ctl-status-stale
else failt ctl-status-stale "rc=$rc $out"; fi
$C verify >/dev/null 2>&1; rc=$?
if [ $rc -eq 3 ]; then pass ctl-verify-stale; else failt ctl-verify-stale "rc=$rc"; fi
$D --once $ARGS 2>/dev/null
$C status >/dev/null 2>&1; rc=$?
if [ $rc -eq 3 ]; then pass ctl-status-stale-after-once; else failt ctl-status-stale-after-once "rc=$rc"; fi
out=$(./coschedctl --state-dir=$T/none status 2>&1); rc=$?
if [ $rc -eq 3 ] && [ "$out" = "coschedctl: no checkpoint in $T/none: coschedd has not run since boot" ]; then
        pass ctl-no-checkpoint
else failt ctl-no-checkpoint "rc=$rc $out"; fi
out=$($C status extra 2>&1); rc=$?
out2=$($C verify --json x 2>&1); rc2=$?
if [ $rc -eq 2 ] && [ $rc2 -eq 2 ] && [ "$out" = "coschedctl: unexpected argument 'extra': status takes none" ]; then
        pass ctl-extra-arguments
else failt ctl-extra-arguments "rc=$rc $out; rc=$rc2 $out2"; fi
v1=$(./coschedctl --version); v2=$($D --version)
case "$v1|$v2" in "coschedctl "[0-9]*"|coschedd "[0-9]*) pass version ;; *) failt version "$v1|$v2" ;; esac

# Stock kernel: no /sys/kernel/cosched -> groups error with a clear reason.
rm -rf $T/sys/sys/kernel/cosched
$D --once $ARGS 2>/dev/null
if grep -q "^group	r	.*error	.*the kernel has no coscheduling support" $T/state/state; then pass stock-kernel-refuses
else failt stock-kernel-refuses "$(grep "^group	r" $T/state/state)"; fi
exit $fail
