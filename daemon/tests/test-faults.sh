#!/bin/sh
# coschedd under faults (issue 12 point 5), on fixture trees like
# test-daemon.sh (never the host's cgroups):
#  - SIGKILL mid-apply: a cgroup file the daemon must read or write is a
#    FIFO, so the daemon blocks right there (between cpuset.cpus and
#    cpu.scheduled); it is killed with SIGKILL; no group
#    may then be coscheduled on CPUs other than its placement's
#    (cpu.scheduled set but not confined); restarted, it completes the
#    half-applied group and leaves the placed ones where they were (their
#    files not even rewritten); then 20 kills at random moments of a busy
#    loop, the same invariant after each;
#  - a cgroup removed behind the daemon's back: its CPUs are released
#    (a pending group gets them), logged; recreated, it is placed again;
#  - CPUs going offline under a placed group: released, or re-placed on
#    its core as the kernel shows it then (CPU 6 alone), never left on the
#    offline CPU; back on the whole core when the CPU is back; logged;
#  - PID 1 not answering from the start: the watchdog is served all along
#    (every gap < WATCHDOG_USEC 2 s), READY=1 comes once ListUnits times
#    out (5 s; < 8 s asserted), the unit's group is not coscheduled
#    (test-bus.sh has PID 1 slow, and hung while running).
cd "$(dirname "$0")/.." || exit 1
D=./coschedd
T=$(mktemp -d /tmp/coschedd-test.XXXXXX)
. "$(dirname "$0")/private-bus.sh"
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID JOURNAL_STREAM
PID= BUSPID= MOCKPID=
trap 'kill -9 $PID 2>/dev/null; kill $MOCKPID $BUSPID 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$T"' EXIT
fail=0
pass() { echo "PASS daemon/$1"; }
failt() { echo "FAIL daemon/$1: $2"; fail=1; }
waitfor() {
        i=0
        while [ $i -lt 100 ]; do eval "$1" && return 0; sleep 0.1; i=$((i + 1)); done
        return 1
}

mk_sysfs() { # ROOT
        r=$1
        mkdir -p $r/sys/devices/system/cpu $r/sys/kernel/cosched/levels/1
        echo 0-7 > $r/sys/devices/system/cpu/online
        for c in 0 1 2 3 4 5 6 7; do
                d=$r/sys/devices/system/cpu/cpu$c/topology
                mkdir -p $d
                t=$((c / 2 * 2)); p=$((c / 4 * 4))
                echo "$t-$((t + 1))" > $d/thread_siblings_list
                echo "$p-$((p + 3))" > $d/package_cpus_list
        done
        echo 1 > $r/sys/kernel/cosched/max_level
        echo smt > $r/sys/kernel/cosched/levels/1/name
        printf '0-1\n2-3\n4-5\n6-7\n' > $r/sys/kernel/cosched/levels/1/spans
}
mk_cgroup() { # path
        mkdir -p "$T/cg$1"
        for f in cpuset.cpus cpu.scheduled cgroup.subtree_control; do : > "$T/cg$1/$f"; done
        echo 0 > "$T/cg$1/cpu.scheduled"
}
cpus() { cat "$T/cg$1/cpuset.cpus" 2>/dev/null; }
sched() { cat "$T/cg$1/cpu.scheduled" 2>/dev/null; }
st() { awk -F'\t' -v g="$1" '$1 == "group" && $2 == g { print $7, $8 }' $T/state/state 2>/dev/null; }
# half_applied: groups coscheduled while cpuset.cpus is not their
# checkpointed placement (or there is none).
half_applied() {
        for g in $GRPS; do
                p=$(eval echo \$path_$g)
                [ -p "$T/cg$p/cpu.scheduled" ] && continue
                s=$(sched $p)
                [ "${s:-0}" = 0 ] && continue
                want=$(awk -F'\t' -v g="$g" '$1 == "group" && $2 == g && $7 == "placed" { print $8 }' $T/state/state 2>/dev/null)
                [ -n "$want" ] && [ "$(cpus $p)" = "$want" ] || echo "$g(sched $s, cpus '$(cpus $p)', placement '$want')"
        done
}

mk_sysfs $T/sys
mkdir -p $T/cg $T/state
: > $T/cg/cgroup.subtree_control
GRPS="a b c"
path_a=/a path_b=/b path_c=/c
for g in $GRPS; do mk_cgroup /$g; done
cat > $T/c.conf <<'CONF'
[daemon]
ReservedCPUs=0-1
ReconcileSec=1

[a]
CgroupPath=/a
Level=core
Spans=1
Priority=10

[b]
CgroupPath=/b
Level=core
Spans=1
Priority=5
CONF
ARGS="--no-bus --sysfs-root=$T/sys --cgroup-root=$T/cg --state-dir=$T/state --config=$T/c.conf"
start() { $D $ARGS 2>>$T/log & PID=$!; }
kill9() { kill -KILL $PID 2>/dev/null; wait $PID 2>/dev/null; PID=; }

# --- SIGKILL mid-apply ---------------------------------------------------
start
waitfor '[ "$(sched /a) $(sched /b)" = "1 1" ] && [ -n "$(st b)" ]' || failt kill-setup "a, b not placed: $(tail -2 $T/log)"
a0=$(cpus /a) b0=$(cpus /b)
stamp_a=$(stat -c %Y.%i $T/cg/a/cpuset.cpus $T/cg/a/cpu.scheduled | tr '\n' ' ')
# c's cpu.scheduled is a FIFO: the daemon blocks on it after it wrote
# c's cpuset.cpus.
rm $T/cg/c/cpu.scheduled; mkfifo $T/cg/c/cpu.scheduled
printf '\n[c]\nCgroupPath=/c\nLevel=core\nSpans=1\n' >> $T/c.conf
kill -HUP $PID
if waitfor '[ -n "$(cpus /c)" ]' && sleep 0.3 && kill -0 $PID 2>/dev/null; then
        c0=$(cpus /c)
        kill9
        bad=$(half_applied)
        if [ -z "$bad" ] && [ "$c0" != "$a0" ] && [ "$c0" != "$b0" ]; then
                pass "kill-between-cpuset-and-scheduled (c confined to $c0, not coscheduled)"
        else failt kill-between-cpuset-and-scheduled "half-applied: $bad; c on '$c0', a $a0, b $b0"; fi
else
        failt kill-between-cpuset-and-scheduled "the daemon did not block on c's cpu.scheduled: c cpus '$(cpus /c)'; $(tail -2 $T/log)"
        kill9
fi
rm -f $T/cg/c/cpu.scheduled; echo 0 > $T/cg/c/cpu.scheduled
start
if waitfor '[ "$(sched /c)" = 1 ] && [ "$(st c)" = "placed $(cpus /c)" ]'; then
        now_a=$(stat -c %Y.%i $T/cg/a/cpuset.cpus $T/cg/a/cpu.scheduled | tr '\n' ' ')
        if [ "$(cpus /a) $(cpus /b) $(cpus /c)" = "$a0 $b0 $c0" ] && [ "$(sched /a) $(sched /b)" = "1 1" ] &&
           [ "$now_a" = "$stamp_a" ]; then
                pass "restart-completes-half-applied (a $a0, b $b0 kept, files untouched; c coscheduled on $c0)"
        else failt restart-completes-half-applied "a $(cpus /a) b $(cpus /b) c $(cpus /c) (were $a0 $b0 $c0); a's files $stamp_a -> $now_a"; fi
else failt restart-completes-half-applied "c: sched $(sched /c), state '$(st c)'; $(tail -2 $T/log)"; fi
kill9

# d, lowest priority, finds no free core: pending.
mk_cgroup /d; GRPS="$GRPS d"; path_d=/d
printf '\n[d]\nCgroupPath=/d\nLevel=core\nSpans=1\nPriority=-5\n' >> $T/c.conf

# Random kills: the loop re-applies on every reconcile (ReconcileSec=1)
# and on SIGHUP; kill it at random moments, 20 times.
bad_all= n=0
while [ $n -lt 20 ]; do
        start
        sleep 0.$(( $(od -An -N2 -tu2 /dev/urandom) % 9 + 1 ))
        kill -HUP $PID 2>/dev/null
        sleep 0.0$(( $(od -An -N2 -tu2 /dev/urandom) % 9 + 1 ))
        kill9
        bad=$(half_applied)
        [ -z "$bad" ] || bad_all="$bad_all [kill $n: $bad]"
        n=$((n + 1))
done
start
waitfor '[ "$(sched /a) $(sched /b) $(sched /c)" = "1 1 1" ]'
if [ -z "$bad_all" ] && [ "$(cpus /a) $(cpus /b) $(cpus /c)" = "$a0 $b0 $c0" ]; then
        pass "random-kills (20 SIGKILLs, never half-applied, placements kept: a $a0 b $b0 c $c0)"
else failt random-kills "$bad_all; a $(cpus /a) b $(cpus /b) c $(cpus /c), were $a0 $b0 $c0"; fi

# --- a cgroup removed behind the daemon's back ----------------------------
# d (lowest priority) is pending: no free core. Remove b's cgroup: b is
# released, d gets a core; b back: placed again once there is room.
waitfor 'st d | grep -q pending' || failt removed-setup "d: $(st d)"
: > $T/log.mark; lines=$(wc -l < $T/log)
rm -rf $T/cg/b
if waitfor 'st b | grep -q "^pending"' && waitfor '[ "$(sched /d)" = 1 ]'; then
        msg=$(tail -n +$((lines + 1)) $T/log | grep '\[b\]' | head -2 | tr '\n' '|')
        if echo "$msg" | grep -q 'does not exist'; then
                pass "cgroup-removed-releases (b: $(st b); d placed on $(cpus /d); log: $msg)"
        else failt cgroup-removed-releases "log says nothing about b: $(tail -n +$((lines + 1)) $T/log | tr '\n' '|')"; fi
else failt cgroup-removed-releases "b: $(st b); d: $(st d) sched $(sched /d); $(tail -3 $T/log | tr '\n' '|')"; fi
lines=$(wc -l < $T/log)
mk_cgroup /b
sed -i '/^\[d\]/,$d' $T/c.conf
kill -HUP $PID
if waitfor '[ "$(sched /b)" = 1 ] && [ "$(st b)" = "placed $(cpus /b)" ]' &&
   tail -n +$((lines + 1)) $T/log | grep -q '\[b\] placed /b on CPUs'; then
        pass "cgroup-recreated-placed (b on $(cpus /b))"
else failt cgroup-recreated-placed "b: $(st b) sched $(sched /b); $(tail -3 $T/log | tr '\n' '|')"; fi

# --- CPUs offline under a placed group ------------------------------------
g=$(awk -F'\t' '$1 == "group" && $8 == "6-7" { print $2 }' $T/state/state)
lines=$(wc -l < $T/log)
if [ -n "$g" ]; then
        p=$(eval echo \$path_$g)
        # The spans first: the daemon reads the topology again when it
        # sees the online mask change.
        printf '0-1\n2-3\n4-5\n6\n' > $T/sys/sys/kernel/cosched/levels/1/spans
        echo 0-6 > $T/sys/sys/devices/system/cpu/online
        # Released (pending, cpu.scheduled 0), or re-placed on a whole span
        # as the kernel shows it now (the core 6 with CPU 6 alone): never
        # left on CPU 7, and logged either way.
        if waitfor '[ "$(sched $p)" = 0 ] || [ "$(cpus $p)" = 6 ]' &&
           waitfor 'tail -n +$((lines + 1)) $T/log | grep -q "\[$g\] \(pending\|placed $p on CPUs 6 \)"'; then
                pass "cpus-offline-releases ($g on 6-7, CPU 7 offline: $(tail -n +$((lines + 1)) $T/log | grep "\[$g\]" | head -1 | sed 's/^coschedd: //'); cpu.scheduled $(sched $p) on '$(cpus $p)')"
        else failt cpus-offline-releases "$g: sched $(sched $p) cpus '$(cpus $p)', $(st $g); $(tail -n +$((lines + 1)) $T/log | tr '\n' '|')"; fi
        lines=$(wc -l < $T/log)
        printf '0-1\n2-3\n4-5\n6-7\n' > $T/sys/sys/kernel/cosched/levels/1/spans
        echo 0-7 > $T/sys/sys/devices/system/cpu/online
        if waitfor '[ "$(sched $p)" = 1 ] && [ "$(cpus $p)" = 6-7 ]' && tail -n +$((lines + 1)) $T/log | grep -q "\[$g\] placed $p on CPUs 6-7"; then
                pass "cpus-online-replaces ($g back on 6-7, logged)"
        else failt cpus-online-replaces "$g: sched $(sched $p), $(st $g); $(tail -n +$((lines + 1)) $T/log | tr '\n' '|')"; fi
else failt cpus-offline-releases "no group on 6-7: $(grep ^group $T/state/state | tr '\n' '|')"; fi
kill -TERM $PID; wait $PID; PID=

# --- PID 1 not answering from the start ------------------------------------
if command -v dbus-daemon > /dev/null 2>&1; then
        private_bus_start $T
        mkdir -p $T/cg4/u.slice; : > $T/cg4/u.slice/cpuset.cpus; echo 0 > $T/cg4/u.slice/cpu.scheduled
        mk_cgroup /r4
        ./tests/mock-systemd --notify-socket=$T/notify4 $T/cg4 $T/mock4.log u.slice=/u.slice &
        MOCKPID=$!
        waitfor 'grep -q ready $T/mock4.log 2>/dev/null'
        kill -USR1 $MOCKPID
        waitfor 'grep -q "^hung$" $T/mock4.log'
        printf '[daemon]\nReconcileSec=1\n\n[u]\nSlice=u.slice\nLevel=core\nSpans=1\n' > $T/c4.conf
        t0=$(date +%s%3N)
        NOTIFY_SOCKET=$T/notify4 WATCHDOG_USEC=2000000 $D --sysfs-root=$T/sys --cgroup-root=$T/cg4 \
                --state-dir=$T/state4 --config=$T/c4.conf 2>$T/d4.log &
        PID=$!
        sleep 10
        kill -TERM $PID; t1=$(date +%s%3N)
        waitfor '! kill -0 $PID 2>/dev/null' || kill -KILL $PID
        wait $PID 2>/dev/null; PID=
        ready=$(sed -n 's/^notify \([0-9]*\) READY=1$/\1/p' $T/mock4.log | head -1)
        pings=$(grep -c ' WATCHDOG=1$' $T/mock4.log)
        gap=$({ echo $t0; sed -n 's/^notify \([0-9]*\) WATCHDOG=1$/\1/p' $T/mock4.log; echo $t1; } |
                awk 'NR > 1 && $1 - p > max { max = $1 - p } { p = $1 } END { print max + 0 }')
        if [ -n "$ready" ] && [ $((ready - t0)) -lt 8000 ] && [ "$pings" -ge 4 ] && [ "$gap" -lt 2000 ] &&
           [ "$(cat $T/cg4/u.slice/cpu.scheduled)" = 0 ]; then
                pass "bus-hung-at-start-watchdog (READY=1 after $((ready - t0)) ms, $pings pings, longest gap $gap ms, u not coscheduled)"
        else failt bus-hung-at-start-watchdog "READY=1 at '${ready:+$((ready - t0))}' ms, $pings pings, longest gap $gap ms, u sched $(cat $T/cg4/u.slice/cpu.scheduled); $(tail -3 $T/d4.log | tr '\n' '|')"; fi
else
        failt bus-hung-at-start-watchdog "dbus-daemon not installed: run make deps"
fi
exit $fail
