# Shell helpers for the guest tests (bash).  Source it first thing:
#
#   . "$(dirname "$0")/lib.sh"
#   test_init 20-exclusion         # cgroups under /sys/fs/cgroup/cosched-test/20-exclusion
#   require_cosched                # reports a stock kernel, never aborts
#   cg_create A; cg_sched A 1
#   corun_run OUT --task a2:2:"$(cg_rel A)":A ...
#   check_le "overlap" "$(kv OUT gpair A,B overlap_pct_of_min)" 0.1
#   finish "overlap ...% (<=0.1%)"  # last line = the detail; exit 0/1
#
# Every helper prints what it did and what it measured, so the log tells
# why a test failed.  A trap removes the test's cgroups on exit.

set -u

CG=${COSCHED_CGROOT:-/sys/fs/cgroup}	# override only for dry runs on a fake tree
# The SMT sibling pair the tests use (CPU 0's core keeps the housekeeping).
read -r C1 C2 <<< "${COSCHED_SIBLINGS:-2 3}"
COSCHED_TOOLS=${COSCHED_TOOLS:-/usr/lib/cosched-tests/bin}
case ":$PATH:" in *":$COSCHED_TOOLS:"*) ;; *) PATH=$COSCHED_TOOLS:$PATH ;; esac
COSCHED_SYSFS=/sys/kernel/cosched
DURATION=${COSCHED_DURATION:-10}	# seconds per corun measurement
# How long a test waits for coschedd or systemd to reach a state (a group
# placed or released, a journal line, a unit pending): a guard against a
# state never reached, not a measure (the delays the issues ask for are
# measured apart).  Under TCG a daemon restart alone took up to 11 s on a
# busy guest (53-daemon-units, 2026-12-07).
SETTLE=30

TEST_NAME=
TEST_CG=		# relative to $CG: cosched-test/NAME
WORK=
FAILS=0
FAILED_CHECKS=
export COSCHED=0		# 1 = cpu.scheduled and max_level present
MAX_LEVEL=
NOTE=			# appended to the detail line (e.g. stock kernel)

log() { printf '%s\n' "$*"; }

# test_init NAME: fresh cgroup subtree, work folder, cleanup trap.
test_init() {
	TEST_NAME=$1
	TEST_CG=cosched-test/$TEST_NAME
	WORK=$(mktemp -d "/tmp/$TEST_NAME.XXXXXX")
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	log "# $TEST_NAME on $(uname -r) ($(uname -v)), flavour ${COSCHED_FLAVOUR:-?}"
	log "# cmdline: $(cat /proc/cmdline)"
	log "# core cookie holder (corehold): $(corehold_state)"
	[ "$(stat -f -c %T "$CG")" = cgroup2fs ] || log "WARNING: $CG is not cgroup v2"
	_cg_enable "$CG"
	[ -d "$CG/cosched-test" ] || mkdir "$CG/cosched-test"
	_cg_enable "$CG/cosched-test"
	[ -d "$CG/$TEST_CG" ] && _cg_remove "$CG/$TEST_CG"
	mkdir "$CG/$TEST_CG"
	_cg_enable "$CG/$TEST_CG"
}

# Enable +cpu +cpuset for the children of DIR (idempotent).
_cg_enable() {
	local dir=$1 c
	for c in cpu cpuset; do
		grep -qw "$c" "$dir/cgroup.subtree_control" && continue
		if ! echo "+$c" > "$dir/cgroup.subtree_control"; then
			log "WARNING: cannot enable $c in $dir/cgroup.subtree_control"
		fi
	done
}

# Kill whatever is left in a cgroup tree and remove it, deepest first.
_cg_remove() {
	local top=$1 d n
	[ -d "$top" ] || return 0
	while read -r d; do
		if [ -e "$d/cgroup.kill" ]; then
			echo 1 > "$d/cgroup.kill" 2>/dev/null
		else
			xargs -r kill -9 < "$d/cgroup.procs" 2>/dev/null
		fi
	done < <(find "$top" -depth -type d)
	while read -r d; do
		for ((n = 0; n < 50; n++)); do
			[ -s "$d/cgroup.procs" ] || break
			sleep 0.1
		done
		rmdir "$d" 2>/dev/null || log "WARNING: cannot remove $d"
	done < <(find "$top" -depth -type d)
}

# Files a test changed (set_restore), put back on exit, last first.
RESTORE_FILES=()
RESTORE_VALUES=()

# set_restore FILE VALUE: write VALUE, remember the old content for the
# exit trap.  Fails (and changes nothing) if FILE cannot be read or written.
set_restore() {
	local old
	old=$(cat "$1" 2>/dev/null) || return 1
	echo "$2" > "$1" 2>/dev/null || return 1
	RESTORE_FILES+=("$1")
	RESTORE_VALUES+=("$old")
}

_restore_all() {
	local i
	for ((i = ${#RESTORE_FILES[@]} - 1; i >= 0; i--)); do
		echo "${RESTORE_VALUES[i]}" > "${RESTORE_FILES[i]}" 2>/dev/null ||
			log "WARNING: cannot restore ${RESTORE_FILES[i]} to ${RESTORE_VALUES[i]}"
	done
}

# level_turn_us LEVEL US: levels/LEVEL/turn_us := US for this test
# (restored on exit), where the kernel has the file: the level tests'
# turns (400 ms under TCG: why in 22-l2-gang).
level_turn_us() {
	local f=$COSCHED_SYSFS/levels/$1/turn_us
	[ -e "$f" ] || return 0
	set_restore "$f" "$2" && log "# levels/$1/turn_us: $2 for this test (was ${RESTORE_VALUES[-1]})"
}

# cosched_poll_window NS: a CPU forced idle by its core polls at most
# /sys/kernel/cosched/idle_poll_ns, then halts; under TCG, waking a halted
# vCPU costs hundreds of microseconds, which a gang's co-run floor cannot
# absorb.  Raise the window for this test (restored on exit), only where
# the kernel has the file.
cosched_poll_window() {
	local f=$COSCHED_SYSFS/idle_poll_ns old
	[ -e "$f" ] || { log "# $f missing: no forced-idle poll window to raise"; return 0; }
	old=$(cat "$f")
	if set_restore "$f" "$1"; then
		log "TCG: forced-idle poll window raised to $(awk -v n="$1" 'BEGIN { printf "%g ms", n / 1e6 }') for this test (idle_poll_ns $old -> $(cat "$f"))"
	else
		fail "cannot write $1 to $f"
	fi
}

# schedstats_set 0|1: core scheduling's forced-idle accounting with
# /proc/sys/kernel/sched_schedstats = 0 (restored on exit).
# A value already set is not written again: a change flips the schedstats
# static key at runtime, which multi-threaded TCG sometimes does not survive.
schedstats_set() {
	local f=/proc/sys/kernel/sched_schedstats
	[ -e "$f" ] || { log "# $f missing"; return 1; }
	if [ "$(cat "$f")" = "$1" ]; then
		log "# $f is $1 already (not written)"
		return 0
	fi
	set_restore "$f" "$1" && log "# $f := $1 for this test (was ${RESTORE_VALUES[-1]}; a runtime static-key flip)"
}

# nap_fd: open fd 7 on a fifo nobody writes, so that "read -r -t SEC -u 7"
# sleeps without a fork (under TCG a forked sleep costs more than a short
# pause).  Once per test, before the loops that nap.
nap_fd() {
	mkfifo "$WORK/nap.fifo" && exec 7<> "$WORK/nap.fifo"
}

# coscheduled_groups: the groups whose cpu.scheduled is not 0, on one line
# (the peer suites must leave none behind).
coscheduled_groups() {
	find "$CG" -name cpu.scheduled 2>/dev/null | while read -r f; do
		[ "$(cat "$f" 2>/dev/null)" = 0 ] || echo "${f%/cpu.scheduled}"
	done | paste -sd' '
}

# corehold_state: what the guest runner's corehold does in this boot
# ("off" with cosched.corehold=0, else its pid), and whether it runs.
corehold_state() {
	local s=${COSCHED_COREHOLD:-unknown}
	case $s in
	off|unknown|failed*) echo "$s" ;;
	*) if kill -0 "$s" 2>/dev/null; then echo "held by pid $s"; else echo "pid $s gone"; fi ;;
	esac
}

cleanup() {
	local rc=$?
	spinners_stop
	trace_remove
	_restore_all
	[ -n "$TEST_CG" ] && _cg_remove "$CG/$TEST_CG"
	rmdir "$CG/cosched-test" 2>/dev/null
	[ -n "$WORK" ] && rm -rf "$WORK"
	exit $rc
}

# cg_create NAME [PARENT]: a cgroup under the test's subtree.
cg_create() {
	local path=$TEST_CG/${2:+$2/}$1
	mkdir "$CG/$path" || { fail "cannot create $CG/$path"; return 1; }
	_cg_enable "$CG/$path"
	log "# cgroup $path created"
}

# cg_rel NAME: path relative to $CG (for corun --task); cg_dir: absolute.
cg_rel() { printf '%s\n' "$TEST_CG/$1"; }
cg_dir() { printf '%s\n' "$CG/$TEST_CG/$1"; }
# cg_id NAME: the cgroup id of the test's cgroup NAME (its directory's
# inode number), as tracepoints such as sched_cosched_switch print it.
cg_id() { stat -c %i "$(cg_dir "$1")"; }

# cg_write NAME FILE VALUE: write with schedw, print the exact result.
cg_write() {
	local out
	out=$(schedw "$(cg_dir "$1")/$2" "$3")
	log "# $1/$2 := '$3': $out"
	[ "$out" = ok ]
}

cg_weight() { cg_write "$1" cpu.weight "$2" || fail "cannot set cpu.weight of $1 to $2"; }
cg_cpus() { cg_write "$1" cpuset.cpus "$2" || fail "cannot set cpuset.cpus of $1 to $2"; }

# cg_read NAME FILE: the content, or "missing".
cg_read() {
	local f
	f=$(cg_dir "$1")/$2
	if [ -e "$f" ]; then cat "$f"; else echo missing; fi
}

# cg_stat NAME KEY: a value from cpu.stat, or "n/a".
cg_stat() {
	local v
	v=$(awk -v k="$2" '$1 == k { print $2 }' "$(cg_dir "$1")/cpu.stat" 2>/dev/null)
	echo "${v:-n/a}"
}

# cg_sched NAME LEVEL: set cpu.scheduled and report.  Returns non-zero
# when the write fails (always on a stock kernel: no such file); the
# measurement is meant to run anyway.
cg_sched() {
	local f out now
	f=$(cg_dir "$1")/cpu.scheduled
	if [ ! -e "$f" ]; then
		log "# $1/cpu.scheduled missing (stock kernel?): measuring $1 as a plain group"
		return 1
	fi
	out=$(schedw "$f" "$2")
	now=$(cat "$f" 2>&1)
	log "# $1/cpu.scheduled := $2: $out, reads back $now"
	[ "$out" = ok ] && [ "$now" = "$2" ]
}

# require_cosched: is the interface there?  Reports, never aborts: a test
# on a stock kernel must still measure and fail on its thresholds.
require_cosched() {
	local probe=$CG/$TEST_CG
	if [ -r "$COSCHED_SYSFS/max_level" ]; then
		MAX_LEVEL=$(cat "$COSCHED_SYSFS/max_level")
		log "# $COSCHED_SYSFS/max_level: $MAX_LEVEL"
	else
		log "# $COSCHED_SYSFS/max_level missing (stock kernel?)"
	fi
	if [ -e "$probe/cpu.scheduled" ] && [ -n "$MAX_LEVEL" ]; then
		COSCHED=1
		log "# cpu.scheduled present: $(cat "$probe/cpu.scheduled")"
	else
		COSCHED=0
		[ -e "$probe/cpu.scheduled" ] || log "cpu.scheduled missing (stock kernel?)"
		NOTE=" [cpu.scheduled missing: stock kernel?]"
		[ -e "$probe/cpu.scheduled" ] && NOTE=" [max_level missing]"
	fi
}

# corun_run OUT ARGS...: run corun, keep its output in $WORK/OUT, show it.
corun_run() {
	local out=$WORK/$1 rc
	shift
	log "# corun --duration $DURATION $*"
	corun --cgroup-root "$CG" --duration "$DURATION" "$@" > "$out" 2> "$out.err"
	rc=$?
	cat "$out"
	[ -s "$out.err" ] && sed 's/^/# stderr: /' "$out.err"
	if [ $rc -ne 0 ]; then
		fail "corun exit $rc ($(head -1 "$out.err" 2>/dev/null))"
	fi
	return $rc
}

# corun_bg OUT ARGS...: like corun_run, in the background (the test acts
# on the tasks meanwhile, e.g. with a long --warmup); corun_wait OUT then
# waits, shows the output and fails the test on a non-zero exit.
CORUN_PID=
corun_bg() {
	local out=$WORK/$1
	shift
	log "# corun --duration $DURATION $* (in the background)"
	corun --cgroup-root "$CG" --duration "$DURATION" "$@" > "$out" 2> "$out.err" &
	CORUN_PID=$!
}
corun_wait() {
	local out=$WORK/$1 rc
	wait "$CORUN_PID"
	rc=$?
	cat "$out"
	[ -s "$out.err" ] && sed 's/^/# stderr: /' "$out.err"
	[ $rc -eq 0 ] || fail "corun exit $rc ($(head -1 "$out.err" 2>/dev/null))"
	return $rc
}

# task_pid NAME TASK [SECONDS]: the pid of corun's task TASK (comm
# corun-TASK) once it is in cgroup NAME; empty after SECONDS (default 10).
task_pid() {
	local end=$((SECONDS + ${3:-10})) p
	while [ $SECONDS -lt $end ]; do
		for p in $(cat "$(cg_dir "$1")/cgroup.procs" 2>/dev/null); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = "corun-$2" ] && { echo "$p"; return 0; }
		done
		sleep 0.05
	done
	return 1
}

# now_us: wall-clock microseconds (date +%s%N), for intervals of seconds.
now_us() { echo $(($(date +%s%N) / 1000)); }

# tracefs_ready: tracefs mounted at /sys/kernel/tracing (for corun
# --trace, the scheduler's own sched_switch record of who ran when).
tracefs_ready() {
	local t=/sys/kernel/tracing
	[ -e $t/events/sched/sched_switch/enable ] && return 0
	mount -t tracefs nodev $t 2>/dev/null
	[ -e $t/events/sched/sched_switch/enable ] || { log "WARNING: no tracefs with sched_switch"; return 1; }
}

# spin_in GROUP CPUS: a busy loop in the test's cgroup GROUP, allowed on
# CPUS (a taskset list); its pid is appended to SPINNERS.  cleanup (or
# spinners_stop) kills them all.
SPINNERS=()
spin_in() {
	( echo $BASHPID > "$(cg_dir "$1")/cgroup.procs"; exec taskset -c "$2" sh -c 'while :; do :; done' ) &
	SPINNERS+=($!)
}
spinners_stop() {
	[ ${#SPINNERS[@]} -gt 0 ] || return 0
	kill "${SPINNERS[@]}" 2>/dev/null
	wait "${SPINNERS[@]}" 2>/dev/null
	SPINNERS=()
}

# trace_record SECONDS OUT EVENT...: the sched EVENTs (sched_switch,
# sched_cosched_switch) for SECONDS in a trace instance of the test's own,
# saved to $WORK/OUT.  The guest runner's tracehold keeps both events'
# probes registered from boot, so enabling them here patches no kernel
# text (TCG).  In steps, to act while tracing: trace_start EVENT...,
# then trace_save OUT.  cleanup removes the instance.
TRACE_INSTANCE=
TRACE_EVENTS=
trace_start() {
	local e
	tracefs_ready || return 1
	TRACE_INSTANCE=/sys/kernel/tracing/instances/cosched-$TEST_NAME
	TRACE_EVENTS="$*"
	mkdir -p "$TRACE_INSTANCE" || return 1
	echo 0 > "$TRACE_INSTANCE/tracing_on"
	echo 32768 > "$TRACE_INSTANCE/buffer_size_kb"
	echo > "$TRACE_INSTANCE/trace"
	for e in "$@"; do
		echo 1 > "$TRACE_INSTANCE/events/sched/$e/enable" || { log "WARNING: cannot trace sched/$e"; return 1; }
	done
	echo 1 > "$TRACE_INSTANCE/tracing_on"
}
trace_save() {
	local e
	echo 0 > "$TRACE_INSTANCE/tracing_on"
	cat "$TRACE_INSTANCE/trace" > "$WORK/$1"
	for e in $TRACE_EVENTS; do echo 0 > "$TRACE_INSTANCE/events/sched/$e/enable"; done
}
trace_record() {
	local secs=$1 out=$2
	shift 2
	trace_start "$@" || return 1
	sleep "$secs"
	trace_save "$out"
}
trace_remove() {
	[ -n "$TRACE_INSTANCE" ] && [ -d "$TRACE_INSTANCE" ] && rmdir "$TRACE_INSTANCE" 2>/dev/null
	TRACE_INSTANCE=
	return 0
}

# kv OUT KIND ID KEY: one value from corun's record "KIND ID key=value...".
kv() {
	awk -v k="$2" -v id="$3" -v key="$4" '
		$1 == k && $2 == id { for (i = 3; i <= NF; i++) {
			n = index($i, "="); if (substr($i, 1, n - 1) == key) {
				print substr($i, n + 1); exit } } }' "$WORK/$1"
}

# plain_worst OUT CPU...: the worst of the plain spinners p<CPU> in corun's
# output OUT: sets run (the least run % of the window) and gap_s (the
# longest wait, s), and logs each spinner's.
plain_worst() {
	local out=$1 c gap runs=() gaps=()
	shift
	for c in "$@"; do
		runs+=("$(kv "$out" task "p$c" run_pct_of_window)")
		gaps+=("$(kv "$out" task "p$c" max_gap_us)")
	done
	run=$(min "${runs[@]}")
	gap=$(max "${gaps[@]}")
	gap_s=$(awk -v g="${gap:-0}" 'BEGIN { printf "%.2f", g / 1e6 }')
	log "# plain spinners ran ${runs[*]}% of the window, longest waits ${gaps[*]} us"
}

# num V: V rounded for the detail line (2 decimals), "?" if empty.
num() { [ -n "${1:-}" ] && awk -v v="$1" 'BEGIN { printf "%.2f", v }' || echo "?"; }

# max V...: the largest of the numbers (empty ones ignored).
max() { printf '%s\n' "$@" | awk 'NF { if (!s || $1 > m) m = $1; s = 1 } END { if (s) print m }'; }
min() { printf '%s\n' "$@" | awk 'NF { if (!s || $1 < m) m = $1; s = 1 } END { if (s) print m }'; }

fail() {
	FAILS=$((FAILS + 1))
	FAILED_CHECKS="$FAILED_CHECKS${FAILED_CHECKS:+; }$1"
	log "FAIL $1"
}
pass() { log "ok   $1"; }

# _cmp VALUE OP LIMIT: awk comparison, false for an empty/non-number VALUE.
_cmp() {
	awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
		if (v !~ /^-?[0-9]+(\.[0-9]+)?$/) exit 1
		v += 0; l += 0
		if (op == "le") exit !(v <= l)
		if (op == "ge") exit !(v >= l)
		if (op == "lt") exit !(v < l)
		if (op == "gt") exit !(v > l)
		exit 1 }'
}

# check_le WHAT VALUE LIMIT (also check_ge, check_gt, check_lt)
check_le() { if _cmp "$2" le "$3"; then pass "$1 $2 <= $3"; else fail "$1 ${2:-?} > $3 (want <= $3)"; fi; }
check_ge() { if _cmp "$2" ge "$3"; then pass "$1 $2 >= $3"; else fail "$1 ${2:-?} < $3 (want >= $3)"; fi; }
check_gt() { if _cmp "$2" gt "$3"; then pass "$1 $2 > $3"; else fail "$1 ${2:-?} <= $3 (want > $3)"; fi; }
check_lt() { if _cmp "$2" lt "$3"; then pass "$1 $2 < $3"; else fail "$1 ${2:-?} >= $3 (want < $3)"; fi; }
# check_within WHAT VALUE CENTER TOL: |VALUE - CENTER| <= TOL
check_within() {
	if awk -v v="$2" -v c="$3" -v t="$4" 'BEGIN { if (v !~ /^-?[0-9]+(\.[0-9]+)?$/) exit 1
			d = v - c; if (d < 0) d = -d; exit !(d <= t) }'; then
		pass "$1 $2 within $3 +- $4"
	else
		fail "$1 ${2:-?} not within $3 +- $4"
	fi
}
# check_eq WHAT GOT WANT (strings)
check_eq() { if [ "$2" = "$3" ]; then pass "$1: $2"; else fail "$1: got '$2', want '$3'"; fi; }

# _console LINE: also on the guest console, so that the numbers reach the
# host's console.log even if the results share does not.
_console() {
	[ -w /dev/console ] && [ -z "${COSCHED_CGROOT:-}" ] &&
		printf 'cosched-test %s: %s\n' "$TEST_NAME" "$1" > /dev/console 2>/dev/null
	return 0
}

# finish DETAIL: the last line (the host shows it), exit 0 iff no check failed.
finish() {
	if [ "$FAILS" -eq 0 ]; then
		_console "PASS: $1$NOTE"
		log "PASS: $1$NOTE"
		exit 0
	fi
	log "# failed: $FAILED_CHECKS"
	_console "failed: $FAILED_CHECKS"
	_console "FAIL: $1$NOTE"
	log "FAIL: $1$NOTE"
	exit 1
}

# wait_until SECONDS CMD: poll CMD (evaluated) every 0.2 s until it
# succeeds or SECONDS pass; the status is CMD's last.
wait_until() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do eval "$2" && return 0; sleep 0.2; done
	eval "$2"
}

# rd FILE: the file's content, or "missing".
rd() { cat "$1" 2>/dev/null || echo missing; }

# daemon_test DROPIN: a coschedd test that declares its groups in the
# conf.d drop-in DROPIN.  Starts the daemon if needed; on exit removes the
# drop-in, reloads the daemon and removes the test's cgroups.
daemon_test() {
	DROPIN=$1
	trap 'rc=$?; daemon_teardown; (exit $rc); cleanup' EXIT
	systemctl is-active -q coschedd || systemctl start coschedd
}
daemon_teardown() {
	rm -f "$DROPIN"
	systemctl reload coschedd 2>/dev/null
	sleep 1
}
