#!/bin/bash
# timeout: 120
# boot: cosched_max_level=8 cosched_split_domains cosched.levelhold=1 cosched.corehold=0
# smp: 10,sockets=1,cores=5,threads=2
# cosched.corehold=0: this boot coschedules above level 1 only, where no
# core cookie is involved, so the runner holds none: one live text patch
# of the kernel fewer at boot, where TCG dies (on 2026-12-05 the 16-vCPU
# guest died in 4 boots in a row: twice while corehold switched core
# scheduling on, once at bwhold, once reset early in boot).
# Split domains on a shape that cannot be split evenly (issue 10 point 5):
# one package of 5 cores of 2 threads, booted with cosched_split_domains.
# 2 and 3 do not divide 5, so the kernel adds no split level and says so
# in the boot log (sched-cosched.rst), instead of crashing:
#  - the boot log has "cannot be split evenly: not split";
#  - the levels are those without the parameter: level 2 machine, one
#    span of all 10 CPUs; max_level 2; no level named split;
#  - a group can still be coscheduled at level 2, and back at 0.
. "$(dirname "$0")/lib.sh"
test_init 14-split-uneven
require_cosched
log "# $(nproc --all) CPUs; levels: $(for l in "$COSCHED_SYSFS"/levels/*; do echo -n "$(basename "$l")=$(cat "$l/name"):$(paste -sd' ' "$l/spans") "; done)"
msg=$(dmesg | grep 'cosched: .*cannot be split evenly' | head -1)
log "# boot log: ${msg:-nothing about the split}"
check_eq "boot log says the split is impossible" "$([ -n "$msg" ] && echo yes || echo no)" yes
check_eq "level 2 name" "$(rd "$COSCHED_SYSFS/levels/2/name")" machine
check_eq "level 2 spans" "$(paste -sd' ' "$COSCHED_SYSFS/levels/2/spans" 2>/dev/null)" "0-$(($(nproc --all) - 1))"
check_eq "max_level" "$(rd "$COSCHED_SYSFS/max_level")" 2
check_eq "levels named split" "$(cat "$COSCHED_SYSFS"/levels/*/name 2>/dev/null | grep -c '^split$')" 0
cg_create G
cg_sched G 2 || fail "cannot coschedule G at level 2"
cg_sched G 0 || fail "cannot set G back to 0"
finish "not split, boot log: '${msg#*cosched: }'; levels $(for l in "$COSCHED_SYSFS"/levels/*; do echo -n "$(basename "$l")=$(cat "$l/name") "; done)"
