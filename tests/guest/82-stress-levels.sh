#!/bin/bash
# timeout: 420
# boot: cosched_max_level=3 cosched.levelhold=1
# 80-stress at every level (issue 12 point 3 with issue 10's levels): the
# same workers and checks, booted with cosched_max_level=3, so that the
# flipper and churn move groups through levels 0-3 (package and machine
# turns, nesting refused with EINVAL, EBUSY or EOPNOTSUPP as documented)
# while tasks move, fork and change affinity, and CPUs, span leaders
# included, go offline and back.
STRESS_TEST_NAME=82-stress-levels exec "$(dirname "$0")/80-stress.sh"
