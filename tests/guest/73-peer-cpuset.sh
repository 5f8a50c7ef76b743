#!/bin/bash
# timeout: 360
# boot: cosched_max_level=0
# parallel: cpuset-prs
# Issue 12 point 1's test_cpuset: the kernel's own test_cpuset_prs.sh
# (cpuset partition roots: 60 state-transition cases, 25 of them with
# CPUs going offline and back, then isolated partitions and inotify) on
# the patched kernel with the feature unused, cosched_max_level=0, core
# scheduling held on from boot by corehold as in the stock baseline.
# 74-peer-cpuset-maxlevel runs this body at the highest level.
#
# The script judges each case itself (the matrix holds each case's
# expected CPUs and partition states) and stops at the first that fails;
# stock passed every case it ran (its recorded exits are 124, out of
# time, or 0, never 1, the exit of a failed case).  Under TCG the whole
# script takes about 300 s on stock (median 294 s), too long to run twice
# in make test, so it runs in a bounded form: it gets BOUND seconds (SOAK
# seconds with SOAK=N, enough to end at 600) and is stopped there.
# The script is one shell forking small commands: its guest keeps one
# host core busy (QEMU at 52-54% of this 2-core host, 2026-12-07), so
# this boot and 74's run at the same time ("# parallel: cpuset-prs").
#  - every case it reached passed, and it reached at least FLOOR cases of
#    the matrix (a hang or a deadlock in the first cases shows there; the
#    boot's kernel-log check and the hung-task detector see the rest);
#  - if it ended by itself: exit 0, every case of the matrix passed, and
#    test_isolated and test_inotify passed;
#  - either way, afterwards: every CPU online, its cgroups gone (after a
#    stop, peer-suites.sh brings CPUs back and removes them), nothing
#    coscheduled.
. "$(dirname "$0")/lib.sh"
TEST_NAME=${PRS_TEST_NAME:-73-peer-cpuset}	# no test_init: the script makes its own cgroups
P=$(dirname "$0")
PRS_BOUND=240	# seconds the script gets without SOAK
FLOOR=10	# matrix cases it must reach in them
SUITE=cgroup/test_cpuset_prs.sh
SCRIPT=/usr/lib/cosched-tests/selftests/$SUITE
STOCK=/usr/lib/cosched-tests/peer-baseline/stock.txt
OUT=/tmp/$TEST_NAME-results.txt
log "# $TEST_NAME on $(uname -r) ($(uname -v)), flavour ${COSCHED_FLAVOUR:-?}"
log "# cmdline: $(cat /proc/cmdline)"
hold=$(corehold_state)
ml=$(rd "$COSCHED_SYSFS/max_level")
if [ -n "${PRS_TEST_NAME:-}" ]; then
	check_gt "max_level (enabled)" "$ml" 0
else
	check_eq "max_level (feature unused)" "$ml" 0
fi
check_eq "core scheduling held on from boot (corehold)" "$([[ $hold == held* ]] && echo yes || echo "no: $hold")" yes

check_eq "groups coscheduled before the script" "$(coscheduled_groups)" ""

# The cases the script holds: the lines of its TEST_MATRIX.
ncases=$(awk '/^TEST_MATRIX=\(/ { m = 1; next } m && /^\)/ { m = 0 } m && /^[[:space:]]*"/ { n++ } END { print n + 0 }' "$SCRIPT" 2>/dev/null)
check_gt "cases in the script's matrix" "$ncases" 0

BOUND=${COSCHED_SOAK:-0}
[[ $BOUND =~ ^[0-9]+$ ]] && [ "$BOUND" -gt 0 ] || BOUND=$PRS_BOUND
PEER_PRS_TIMEOUT=$BOUND "$P/peer-suites.sh" "$OUT" test_cpuset_prs
secs=$(awk '$2 == "(seconds)" { print $3 }' "$OUT.seconds")
cp "$OUT" "$COSCHED_RESULTS/$TEST_NAME-results.txt" 2>/dev/null
res() { awk -v s="$SUITE" -v t="$1" '$1 == s && $2 == t { print $3 }' "$OUT"; }

log "--- results (this run; stock's from $STOCK)"
log "$(grep "^$SUITE " "$STOCK" 2>/dev/null | sed 's/^/# stock: /')"
cat "$OUT"
rc=$(res '(exit)')
reached=$(awk -v s="$SUITE" '$1 == s && $2 ~ /^matrix[0-9]+$/' "$OUT" | wc -l)
passed=$(awk -v s="$SUITE" '$1 == s && $2 ~ /^matrix[0-9]+$/ && $3 == "pass"' "$OUT" | wc -l)
notpass=$(awk -v s="$SUITE" '$1 == s && $2 !~ /^\(/ && $3 != "pass" { printf "%s%s %s", c, $2, $3; c = ", " }' "$OUT")
check_eq "cases not passed (of $reached reached)" "$notpass" ""
check_ge "matrix cases reached in $BOUND s" "$reached" "$FLOOR"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	how="stopped by its bound of $BOUND s at $passed/$ncases matrix cases"
	log "# $how: test_isolated and test_inotify not reached"
else
	how="ended by itself: $passed/$ncases matrix cases, test_isolated $(res test_isolated), test_inotify $(res test_inotify)"
	check_eq "exit of the script" "$rc" 0
	check_eq "matrix cases passed (of $ncases)" "$passed" "$ncases"
	check_eq "test_isolated" "$(res test_isolated)" pass
	check_eq "test_inotify" "$(res test_inotify)" pass
	check_eq "CPUs all online when it ended" "$(awk '$2 == "(cpus-online)" { print $3 }' "$OUT")" pass
fi
check_eq "CPUs offline afterwards" "$(cat /sys/devices/system/cpu/offline)" ""
check_eq "its cgroup left afterwards" "$(ls -d "$CG/test" 2>/dev/null)" ""
check_eq "groups coscheduled after the script" "$(coscheduled_groups)" ""

# What stock gave: a failed case exits 1, so stock's exits say whether it
# failed any case in the boots recorded.
stock_exits=$(awk -v s="$SUITE" '$1 == s && $2 == "(exit)" { print $3, $4 }' "$STOCK" 2>/dev/null)
stock_secs=$(sed -n "s|^# duration: $SUITE \([0-9.]*\) s.*|\1|p" "$STOCK" 2>/dev/null)
case "|${stock_exits%% *}|" in
*"|1|"*) fail "stock's baseline has a failed case (exit 1: $stock_exits): judge case by case against it" ;;
"||") fail "stock's baseline has no line for $SUITE ($STOCK)" ;;
*) pass "stock failed no case (exits $stock_exits)" ;;
esac
finish "$how, in ${secs:-?} s (stock: every case it ran passed, exits $stock_exits, ${stock_secs:-?} s) [max_level $ml, corehold $hold]"
