#!/bin/bash
# timeout: 240
# boot: cosched_max_level=3 cosched.levelhold=1
# Two groups coscheduled at level 3 on the machine span (issue 10): A and
# B, each with 8 spinners on CPUs 0-7, one per CPU.
#  - A and B ran at once <= 0.1% of the shorter run time (raw view: what
#    executed, every clock gap counts as not running; worst of the groups
#    and of each cross pair on different CPUs);
#  - all 8 threads of each group ran together >= 90% of the time any of
#    them ran (trace view: the scheduler's sched_switch events; TCG on this
#    2-core host executes at most 2 vCPUs at once, so no raw view of 8);
#    stock gives about 0% (8 spinners never all scheduled at once by
#    chance).
# levels/3/turn_us is set to 2 s for TCG, as levels/2/turn_us is set to
# 400 ms in 22-l2-gang (why there).  Here a switch waits for 8 vCPUs that
# the host's 2 cores run in turn, twice (the drain, then the new owner):
# 20 ms at p50 and 50 ms at p99 in 24-level-trace, up to 312 ms in a
# slow run, against microseconds on hardware, and a turn loses that at
# both ends.  At 400 ms turns the co-run came out 86.2% and 88.3%
# (2026-12-05); at 1 s, over 20 s, 88.1-94.3% in 10 runs (2026-12-05/06),
# so the floor was 85% for TCG; at 2 s (turn_us takes up to 10 s)
# 93.9-97.2% in 3 runs (2026-12-06), and the issue's 90% holds.
# corun's setup as in 21-l2-exclusion: --setup-timeout 60.
# On the stock kernel and at cosched_max_level=0 A and B are plain
# groups: they overlap about half the time, and the test fails.
# The test is 21-l2-exclusion's, with these values.
EXCL_NAME=31-l3-exclusion EXCL_LEVEL=3 EXCL_CPUS="0 1 2 3 4 5 6 7" \
EXCL_TURN_US=2000000 EXCL_CORUN=90 EXCL_DURATION=20 \
	exec "$(dirname "$0")/21-l2-exclusion.sh"
