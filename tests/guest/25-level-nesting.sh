#!/bin/bash
# timeout: 180
# (A guard against a hang, not a measure: 44-78 s in the full runs of
# 2026-12-06/07, on a host that was 20-60% slower on 2026-12-07.)
# boot: cosched_max_level=3 cosched.levelhold=1
# Nesting rules above level 1 (issue 10 point 3), as sched-cosched.rst
# documents them: a level above 1 inside a group coscheduled above 1, or
# around one, is EOPNOTSUPP; level 1 inside level 2 or 3 is accepted;
# the older rules stay (wider than the nearest coscheduled ancestor
# EINVAL, narrower than a coscheduled descendant EBUSY).  Each write's
# errno comes from write(2) (schedw), and after a refused write every
# group reads back what it read before.  Every level goes 0 -> 3 -> 0
# with tasks running in the group (they keep running: counted).
. "$(dirname "$0")/lib.sh"
test_init 25-level-nesting
require_cosched
[ "${MAX_LEVEL:-0}" -ge 3 ] || fail "max_level ${MAX_LEVEL:-missing}, want 3 (cosched_max_level=3)"

cg_create G; cg_create H G; cg_create K; cg_create L K
levels() { echo "G=$(rd "$(cg_dir G)/cpu.scheduled") H=$(rd "$(cg_dir G/H)/cpu.scheduled") K=$(rd "$(cg_dir K)/cpu.scheduled") L=$(rd "$(cg_dir K/L)/cpu.scheduled")"; }
# try GROUP VALUE WANT: one write, its result, and nothing changed on error.
try() {
	local before after r
	before=$(levels)
	r=$(schedw "$(cg_dir "$1")/cpu.scheduled" "$2" 2>&1)
	after=$(levels)
	[ "$r" = ENOTSUP ] && r=EOPNOTSUPP
	check_eq "$1 := $2" "$r" "$3"
	[ "$r" = ok ] || check_eq "$1 := $2 refused: levels unchanged" "$after" "$before"
}

try G 2 ok
try G/H 2 EOPNOTSUPP		# above 1 inside above 1
try G/H 3 EOPNOTSUPP
try G/H 1 ok			# level 1 inside level 2
try G 3 ok			# the outer group wider: fine
try G 1 ok			# down to its level-1 child's level: fine
try G/H 0 ok
try G 0 ok
try K/L 2 ok			# above 1 inside a plain group
try K 3 EOPNOTSUPP		# above 1 around above 1
try K 2 EOPNOTSUPP
try K 1 EBUSY			# narrower than its coscheduled child
try K/L 1 ok
try K 1 ok
try K/L 3 EINVAL		# wider than the nearest coscheduled ancestor
try K/L 0 ok
try K 0 ok
log "# at the end: $(levels)"

# Live: a group with 4 spinners on 0-3 goes 0 -> 1 -> 2 -> 3 -> 2 -> 0.
cg_cpus G 0-3
pids=()
for c in 0 1 2 3; do
	( exec taskset -c "$c" sh -c 'while :; do :; done' ) &
	pids+=($!)
	echo "${pids[-1]}" > "$(cg_dir G)/cgroup.procs"
done
for l in 1 2 3 2 0; do
	try G "$l" ok
	sleep 1
done
ticks() { local p t=0; for p in "${pids[@]}"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo "$t"; }
t0=$(ticks); sleep 2; t1=$(ticks)
check_gt "spinners' CPU ticks in 2 s after the changes" "$((t1 - t0))" 0
kill "${pids[@]}"; wait 2>/dev/null
finish "nesting errnos as documented, nothing changed on a refused write; 0-1-2-3-2-0 with 4 spinners running"
