#!/bin/bash
# timeout: 600
# Benchmark (not a test): what coscheduling a group changes, on the
# patched kernel.  tests/bench.sh boots it (its gang/plain section) in
# boots of its own: it coschedules, which may switch core scheduling on
# at run time, and the overhead boots (bench-overhead.sh) must not.
# Rates from gangbench, CPUs 2 and 3 (one SMT core), each measured over
# cosched.bench_seconds= (default 5):
#   pingpong-smt      pipe round trips/s, sides on CPUs 2 and 3, plain group
#   pingpong-smt-gang the same inside a coscheduled group
#   barrier-A/B       two groups at once, each a spinning barrier on
#                     CPUs 2 and 3: rounds/s per group, with the groups
#                     plain (-plain) and coscheduled (-gang)
# Every line "bench KEY RATE" goes to the log; the script passes when
# every measurement ran.
. "$(dirname "$0")/lib.sh"
test_init bench-gang
require_cosched
S=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^cosched.bench_seconds=//p' | tail -1)
S=${S:-${BENCH_SECONDS:-5}}
log "bench-info max_level ${MAX_LEVEL:-none}"
log "bench-info corehold $(corehold_state | sed "s/ by pid [0-9]*//")"

bench() { # KEY gangbench-args...
	local key=$1 out
	shift
	if out=$(gangbench "$@" --duration "$S"); then
		log "bench $key $(sed -n 's/.* rate=\([0-9.]*\).*/\1/p' <<< "$out")"
	else
		fail "gangbench $*"
	fi
}

for g in P A B; do
	cg_create $g
	cg_cpus $g "$C1,$C2"
done
bench pingpong-smt pingpong --cpus "$C1,$C2" --cgroup "$(cg_dir P)"
if [ "$COSCHED" = 1 ] && cg_sched P 1; then
	bench pingpong-smt-gang pingpong --cpus "$C1,$C2" --cgroup "$(cg_dir P)"
	cg_sched P 0
fi

# Two groups at once: each gangbench in the background, both read back.
barrier_pair() { # SUFFIX
	gangbench barrier --cpus "$C1,$C2" --cgroup "$(cg_dir A)" --duration "$S" > "$WORK/a" &
	gangbench barrier --cpus "$C1,$C2" --cgroup "$(cg_dir B)" --duration "$S" > "$WORK/b" &
	wait
	for g in A B; do
		local f=$WORK/${g,,} r
		r=$(sed -n 's/.* rate=\([0-9.]*\).*/\1/p' "$f")
		if [ -n "$r" ]; then log "bench barrier-$g-$1 $r"; else fail "barrier $g $1"; fi
	done
}
barrier_pair plain
if [ "$COSCHED" = 1 ] && cg_sched A 1 && cg_sched B 1; then
	barrier_pair gang
fi
finish "benchmark ran (rates in the log)"
