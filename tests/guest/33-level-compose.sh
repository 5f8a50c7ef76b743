#!/bin/bash
# timeout: 300
# boot: cosched_max_level=3 cosched.levelhold=1
# Two levels above the core at once (issue 10 point 2, "every level"): X
# coscheduled at level 3 (the machine, CPUs 0-7) with 8 spinners, one per
# CPU; B coscheduled at level 2 with 4 spinners on package 0 (CPUs 0-3);
# a plain group P with 4 spinners on package 1 (CPUs 4-7).  A CPU follows
# the widest span that has an owner: in X's machine-wide turn every CPU
# runs X; in the machine's open turn, package 0 takes turns between B and
# its open work, and package 1 runs P.
#  - X ran at once with B, and with P, <= 0.1% of the shorter run time
#    (raw view: what executed); B and P may run at once (other package);
#  - all 8 of X's threads ran together >= 90% of the time any of them ran,
#    and all 4 of B's >= 85% (trace view, as in 21-l2-exclusion), over
#    40 s.  B is at level 2, but its turns on package 0 also end whenever
#    X takes the machine, and each of those is a level-3 switch: 85% is
#    the floor for TCG that level 3 had at 1-s turns (why below); B's
#    co-run at level 2 alone is held to 90% in 21-l2-exclusion and
#    22-l2-gang;
#  - X, B and P each got >= 10% of the run time (raw view).  With equal
#    weights each should get about a third, as plain CFS would give them:
#    X's 8 per-CPU entities weigh 1024 in all against 2048 for B's and
#    P's 4 each, so X owns the machine a third of the time, and B and P
#    run on their packages the rest of it.
# Turns of 2 s at level 3 and 1 s at level 2 for TCG (why in
# 31-l3-exclusion and 22-l2-gang): here a CPU of package 0 switches at
# both levels' ends of turns, and B's turns end whenever X takes the
# machine, each costing tens of ms of follow time under TCG (a level-3
# switch waits for 8 vCPUs on the host's 2 cores).  At 400 ms turns X's
# co-run came out 88.4%, and with 1 s at level 3 only, B's 87.9%
# (2026-12-05).  With 1-s turns at both levels: over 20 s (13 runs,
# 2026-12-05/06) X 84.1-95.9% (mean 92.2%), B 89.7-95.8% (mean 93.3%),
# the 84.1% run (a CI run) with apart windows of 83 ms on average and up
# to 198 ms where the others had 30-60 ms; over 40 s (4 runs) X 88.0-93.1%,
# B 90.7-94.8%, apart windows up to 312 ms.  So the floor was 85% for
# TCG.  With 2-s turns at level 3, over 40 s (3 runs, 2026-12-06): X
# 94.3-95.4%, B 93.0-93.9%.
# The shares are printed, with a floor against starvation only: over
# 20 s X got 21-31% before the open turn was charged at its average
# weight (kernel patch 31), and 26-33% over 40 s after it (B 32-36%,
# P 35-38%, 2026-12-06).  Why X stays below a third is not analysed; one
# part is that without L10 (kernel/LEVELS-PLAN.md) package 0 also
# switches at level 2 under X's turns.
# On the stock kernel and at cosched_max_level=0 X overlaps B and P, and
# the test fails.
. "$(dirname "$0")/lib.sh"
test_init 33-level-compose
require_cosched
level_turn_us 2 1000000
level_turn_us 3 2000000
DURATION=40

cg_create X; cg_cpus X 0-7
cg_create B; cg_cpus B 0-3
cg_create P; cg_cpus P 4-7
if ! cg_sched X 3 && [ "$COSCHED" = 1 ]; then fail "cannot coschedule X at level 3"; fi
if ! cg_sched B 2 && [ "$COSCHED" = 1 ]; then fail "cannot coschedule B at level 2"; fi
tracefs_ready || fail "no sched_switch tracing"
args=()
for c in 0 1 2 3 4 5 6 7; do args+=(--task "x$c:$c:$(cg_rel X):X"); done
for c in 0 1 2 3; do args+=(--task "b$c:$c:$(cg_rel B):B"); done
for c in 4 5 6 7; do args+=(--task "p$c:$c:$(cg_rel P):P"); done
corun_run out --trace --setup-timeout 60 "${args[@]}"

xb=$(kv out gpair X,B overlap_pct_of_min)
xp=$(kv out gpair X,P overlap_pct_of_min)
co_x=$(kv out group X trace_all_pct_of_union)
co_b=$(kv out group B trace_all_pct_of_union)
sx=$(kv out group X share_pct); sb=$(kv out group B share_pct); sp=$(kv out group P share_pct)
log "# trace view overlap: X/B $(kv out gpair X,B trace_overlap_pct_of_min)%, X/P $(kv out gpair X,P trace_overlap_pct_of_min)%; B/P (allowed) $(kv out gpair B,P overlap_pct_of_min)%; corun setup $(kv out run summary setup_us) us"
check_le "X/B overlap % (raw)" "$xb" 0.1
check_le "X/P overlap % (raw)" "$xp" 0.1
check_ge "X co-run % (trace)" "$co_x" 90
check_ge "B co-run % (trace)" "$co_b" 85
check_ge "X share %" "$sx" 10
check_ge "B share %" "$sb" 10
check_ge "P share %" "$sp" 10

if [ "$COSCHED" = 1 ]; then
	cg_sched B 0 || fail "cannot set B back to 0"
	cg_sched X 0 || fail "cannot set X back to 0"
fi
finish "X(3)/B(2) overlap $(num "$xb")%, X/P $(num "$xp")% (<=0.1%, raw), co-run X $(num "$co_x")% (>=90%) B $(num "$co_b")% (>=85%, TCG) (trace), shares X $(num "$sx")% B $(num "$sb")% P $(num "$sp")% (>=10%), turns 2 s (level 3), 1 s (level 2)"
