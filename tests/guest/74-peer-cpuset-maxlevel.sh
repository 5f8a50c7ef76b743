#!/bin/bash
# timeout: 360
# boot: cosched_max_level=8
# parallel: cpuset-prs
# Issue 12 point 2's test_cpuset: 73-peer-cpuset's body (the kernel's
# test_cpuset_prs.sh, bounded: every case it reaches must pass)
# with coscheduling enabled at its highest level (cosched_max_level=8,
# clamped to the highest level the kernel implements) and nothing
# coscheduled.  Partition roots rebuild the scheduling domains and the
# cases take CPUs, span leaders among them, offline and back: the levels'
# spans must follow both.
PRS_TEST_NAME=74-peer-cpuset-maxlevel exec "$(dirname "$0")/73-peer-cpuset.sh"
