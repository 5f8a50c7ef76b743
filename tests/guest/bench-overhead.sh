#!/bin/bash
# timeout: 1500
# Benchmark (not a test): what the patches cost with NOTHING coscheduled.
# tests/bench.sh boots it, alternating, on the stock kernel and on the
# patched kernel with cosched_max_level=0 and with the highest level, and
# compares the medians.  This script must never create a coscheduled group
# or a PR_SCHED_CORE cookie (the host boots it with cosched.corehold=0,
# and it fails if the runner's corehold holds one anyway): it only creates
# plain cgroups (cpu and cpuset
# enabled, as the tests do), identically on every kernel.
# Each rate is measured over about cosched.bench_seconds= (default 5),
# after a short calibration run that sizes the loop count, and
# cosched.bench_reps= times (default 3; the fastest counts):
#   pingpong-1cpu     gangbench pipe round trips/s, both sides on CPU 2
#   pingpong-smt      the same, sides on CPUs 2 and 3 (one SMT core)
#   hackbench-proc    hackbench -P -g 4 -f 10 (rt-tests): messages/s
#   hackbench-thread  the same with -T (threads)
#   perf-messaging    perf bench sched messaging -g 4 (processes): messages/s
#   perf-messaging-t  the same with -t (threads)
#   perf-pipe         perf bench sched pipe: round trips/s
# hackbench and perf run in a plain cgroup with all CPUs.  Every line
# "bench KEY RATE" goes to the log, "bench-info KEY VALUE" says what ran;
# the script passes when every measurement ran.
. "$(dirname "$0")/lib.sh"
test_init bench-overhead
require_cosched
S=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^cosched.bench_seconds=//p' | tail -1)
S=${S:-${BENCH_SECONDS:-5}}
# Each rate is measured REPS times in the boot and the fastest counts:
# on a shared host, noise (the host descheduling a vCPU) only ever slows
# a run down.  Every run is logged as "bench-rep KEY RATE".
REPS=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^cosched.bench_reps=//p' | tail -1)
REPS=${REPS:-${BENCH_REPS:-3}}
log "bench-info reps $REPS"
log "bench-info max_level ${MAX_LEVEL:-none}"
log "bench-info release $(uname -r)"
log "bench-info cpus $(nproc) (SMT pairs $(sort -u /sys/devices/system/cpu/cpu*/topology/thread_siblings_list | paste -sd' ' -))"
# The guest runner's corehold would hold a core cookie from boot:
# tests/bench.sh boots this script with cosched.corehold=0.
log "bench-info corehold ${COSCHED_COREHOLD:-unknown}"
case ${COSCHED_COREHOLD:-unknown} in
off|unknown) ;;
*) fail "corehold holds a core cookie ($(corehold_state)): boot with cosched.corehold=0" ;;
esac

cg_create P
cg_cpus P "$C1,$C2"
cg_create W

# in_w CMD...: CMD in the plain cgroup W.
in_w() { (echo "$BASHPID" > "$(cg_dir W)/cgroup.procs" && exec "$@"); }

# best KEY RATE...: log each run, and the fastest as "bench KEY RATE".
best() {
	local key=$1 r
	shift
	for r in "$@"; do log "bench-rep $key $r"; done
	log "bench $key $(printf '%s\n' "$@" | sort -g | tail -1)"
}

pingpong() { # KEY CPUS
	local out i rates=()
	for ((i = 0; i < REPS; i++)); do
		if ! out=$(gangbench pingpong --cpus "$2" --cgroup "$(cg_dir P)" --duration "$S"); then
			fail "gangbench pingpong --cpus $2"
			return
		fi
		log "# $1: $out"
		rates+=("$(sed -n 's/.* rate=\([0-9.]*\).*/\1/p' <<< "$out")")
	done
	best "$1" "${rates[@]}"
}

# measure KEY PER_LOOP LOOPS FUNC ARGS...: "FUNC ARGS... N" runs N loops
# and prints the seconds they took (as the program measured them).  The
# loop count doubles until a run takes 0.5 s, then is scaled to about $S
# seconds for the measured run; rate = loops * PER_LOOP / seconds.
measure() {
	local key=$1 per=$2 n=$3 t
	shift 3
	while :; do
		t=$("$@" "$n")
		if ! [[ $t =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
			fail "$key: '$* $n' printed no time ('$t')"
			return
		fi
		awk -v t="$t" 'BEGIN { exit !(t >= 0.5) }' && break
		n=$((n * 2))
	done
	n=$(awk -v n="$n" -v t="$t" -v s="$S" 'BEGIN { m = int(n * s / t); print (m > n ? m : n) }')
	local i rates=()
	for ((i = 0; i < REPS; i++)); do
		t=$("$@" "$n")
		if ! [[ $t =~ ^[0-9]+(\.[0-9]+)?$ ]] || awk -v t="$t" 'BEGIN { exit !(t <= 0) }'; then
			fail "$key: '$* $n' printed no time ('$t')"
			return
		fi
		log "# $key: $* $n: $t s"
		rates+=("$(awk -v n="$n" -v p="$per" -v t="$t" 'BEGIN { printf "%.1f", n * p / t }')")
	done
	best "$key" "${rates[@]}"
}

HB_G=4 HB_F=10		# hackbench: 4 groups of 10 senders and 10 receivers
hackbench_s() { # -P|-T LOOPS
	in_w hackbench "$1" -g $HB_G -f $HB_F -l "$2" 2>&1 | sed -n 's/^Time: *//p' | tail -1
}
PM_G=4 PM_F=20		# perf bench sched messaging: 20 fds per group (fixed)
messaging_s() { # ""|-t LOOPS
	in_w perf bench -f simple sched messaging ${1:+"$1"} -g $PM_G -l "$2" 2>/dev/null | tail -1
}
pipe_s() { # LOOPS
	in_w perf bench -f simple sched pipe -l "$1" 2>/dev/null | tail -1
}

pingpong pingpong-1cpu "$C1,$C1"
pingpong pingpong-smt "$C1,$C2"

if command -v hackbench > /dev/null; then
	log "bench-info hackbench $(dpkg-query -W -f '${Package} ${Version}' rt-tests 2>/dev/null)"
	# each loop: every sender sends one message to each receiver of its group
	measure hackbench-proc $((HB_G * HB_F * HB_F)) 2 hackbench_s -P
	measure hackbench-thread $((HB_G * HB_F * HB_F)) 2 hackbench_s -T
else
	fail "hackbench not in the image (package rt-tests)"
fi

if command -v perf > /dev/null && perf bench sched pipe -l 1 > /dev/null 2>&1; then
	log "bench-info perf $(perf version) $(command -v perf)"
	measure perf-messaging $((PM_G * PM_F * PM_F)) 1 messaging_s ""
	measure perf-messaging-t $((PM_G * PM_F * PM_F)) 1 messaging_s -t
	measure perf-pipe 1 1000 pipe_s
else
	fail "perf not in the image (tests/perf-build.sh builds it, image/build.sh installs it)"
fi

# Nothing may have been coscheduled meanwhile (coschedd runs in the image
# with no groups declared): count the groups whose cpu.scheduled is not 0.
n=$(find "$CG" -name cpu.scheduled 2>/dev/null | xargs -r grep -L -x 0 2>/dev/null | wc -l)
log "bench-info coscheduled-groups $n"
[ "$n" = 0 ] || fail "$n coscheduled group(s) during the overhead run: $(find "$CG" -name cpu.scheduled | xargs -r grep -L -x 0 | head -3)"
finish "benchmark ran (rates in the log)"
