#!/bin/bash
# Runs the kernel's own selftests (tests/peer-build.sh installs them in
# /usr/lib/cosched-tests/selftests) one suite after the other and writes
# one line per test to OUT:
#
#   SUITE TEST RESULT        e.g. "cgroup/test_cpu test_cpucg_max fail"
#
# RESULT is pass, fail or skip; every suite also gets "SUITE (exit) CODE"
# (124: killed by its timeout), so that a crash or a hang shows even where
# the suite's own lines stop.  Not a test by itself: run.sh never lists it.
# Used by the 7x-peer-* tests and, for the recorded stock and
# CONFIG_COSCHEDULING=n baselines, by peer-measure.sh (make peer-baseline).
#
#   peer-suites.sh OUT [SUITE...]   default: every suite below
#
# Suites: test_cpu test_cpuset_prs test_core test_freezer test_kill
# cs_prctl_test (and test_cpu_cosched: test_cpu with its groups
# coscheduled, see tests/peer-cosched-cg.c).  The whole output of each
# suite goes to stdout (the test's log), with its duration.
set -u

OUT=${1:?usage: peer-suites.sh OUT [SUITE...]}
shift
SUITES=${*:-test_cpu test_cpuset_prs test_core test_freezer test_kill cs_prctl_test}
SELF=${COSCHED_SELFTESTS:-/usr/lib/cosched-tests/selftests}
LIMIT=${PEER_SUITE_TIMEOUT:-300}	# seconds per suite
PRS_LIMIT=${PEER_PRS_TIMEOUT:-600}	# test_cpuset_prs.sh: enough to end (73/74 bound it)
: > "$OUT"

# tap SUITE FILE: kselftest TAP lines ("ok N name", "not ok N name",
# "ok N # SKIP name", "1..0 # SKIP why") to result lines.  A forked child
# that exits with unflushed stdio can repeat lines: the first "ok N" wins.
tap() {
	awk -v s="$1" '
	/^1\.\.0 # SKIP/ { print s, "(all)", "skip"; next }
	/^(not )?ok [0-9]+ / {
		fail = ($1 == "not"); i = fail ? 3 : 2; n = $i
		if (n in seen) next
		seen[n] = 1
		rest = $0; sub(/^(not )?ok [0-9]+ /, "", rest)
		res = fail ? "fail" : "pass"
		if (rest ~ /^# SKIP/) { res = "skip"; sub(/^# SKIP */, "", rest) }
		split(rest, w, " "); name = w[1]
		if (name == "") name = "test" n
		print s, name, res
	}' "$2"
}

# test_cpuset_prs.sh, run with -v: its state matrix prints "Test N done."
# per case, or one of three "Test TEST_MATRIX[N] failed ... check!" lines
# or "Effective cpus changed to ... after test N!" and stops; then
# test_isolated (done once its "Cleaning up" is printed: nothing after
# that exits) and test_inotify.  A case the script never reached (it
# stopped or ran out of time) has no line.
prs_cases() {
	awk -v s="$1" -v rc="$3" '
	/^Test [0-9]+ done\.$/ { print s, "matrix" $2, "pass"; next }
	/^(FAILED: )?Test TEST_MATRIX\[[0-9]+\] failed .* check!$/ {
		match($0, /\[[0-9]+\]/)
		print s, "matrix" substr($0, RSTART + 1, RLENGTH - 2), "fail"; next
	}
	/^Effective cpus changed to .* after test [0-9]+!$/ {
		n = $NF; sub(/!$/, "", n); print s, "matrix" n, "fail"; next
	}
	/^All [0-9]+ tests of TEST_MATRIX PASSED\.$/ { matrix = 1; next }
	matrix && /^Cleaning up$/ { isolated = 1; print s, "test_isolated", "pass"; next }
	/^Inotify test PASSED$/ { print s, "test_inotify", "pass"; next }
	/^FAILED: Inotify test/ { print s, "test_inotify", "fail"; next }
	/^wait_inotify not found/ { print s, "test_inotify", "skip"; next }
	END { if (matrix && !isolated && rc == 1) print s, "test_isolated", "fail" }' "$2"
}

# prs_cleanup: a test_cpuset_prs.sh stopped by its limit leaves its
# "test" cgroup behind, partitions and all: make every partition a member
# again and remove the groups, deepest first (its CPUs are back online
# by then, see the end of this file).
prs_cleanup() {
	local root dir
	root=$(mount -t cgroup2 | awk '{ print $3; exit }')/test
	[ -d "$root" ] || return 0
	echo "=== cleaning up $root (the script was stopped)"
	find "$root" -depth -type d | while read -r dir; do
		while read -r p; do
			echo "$p" > "${root%/test}/cgroup.procs"
		done < "$dir/cgroup.procs" 2>/dev/null
		echo member > "$dir/cpuset.cpus.partition" 2>/dev/null
		rmdir "$dir" 2>/dev/null || echo "could not remove $dir"
	done
}

# cs_prctl_test: one "(LINE) PASSED: check" / "(LINE) FAILED: check" per
# validate() in cs_prctl_test.c; each is one test, named by its line.
prctl_checks() {
	sed -n 's/^(\([0-9]*\)) \(PASSED\|FAILED\): .*/\1 \2/p' "$2" | awk -v s="$1" '
	!seen[$1]++ { print s, "line" $1, ($2 == "PASSED" ? "pass" : "fail") }'
}

run_suite() {
	local name=$1 suite bin log rc t0 secs
	case $name in
	cs_prctl_test) suite=sched/cs_prctl_test ;;
	test_cpuset_prs) suite=cgroup/test_cpuset_prs.sh ;;
	*) suite=cgroup/$name ;;
	esac
	local limit=$LIMIT args=
	# test_cpuset_prs.sh: -v prints each case it passed; its 60 cases
	# take CPUs offline and back, which TCG makes slow: 294 s on stock
	# (median), where the 300 s of the other suites ran out in 3 of 5 boots.
	[ "$name" = test_cpuset_prs ] && { limit=$PRS_LIMIT; args=-v; }
	bin=$SELF/$suite
	log=$(mktemp)
	echo "=== $suite $args (limit $limit s)"
	if [ ! -x "$bin" ]; then
		echo "$suite: not installed in the image ($bin)"
		echo "$suite (exit) missing" >> "$OUT"
		return
	fi
	t0=$(date +%s.%N)
	# Line-buffered: the suites fork, and a child exiting with a full
	# stdio buffer would print the parent's lines a second time.
	# test_cpuset_prs.sh calls "awk -e PROGRAM" (gawk); the image's awk
	# is mawk, which has no -e: a shim drops it, or the script skips
	# with "Cgroup v2 mount point not found!".
	local shim=/tmp/peer-suites-awk
	mkdir -p "$shim"
	printf '#!/bin/sh\n[ "$1" = -e ] && shift\nexec /usr/bin/awk "$@"\n' > "$shim/awk"
	chmod +x "$shim/awk"
	(cd "$(dirname "$bin")" && PATH=$shim:$PATH timeout -k 5 "$limit" stdbuf -oL -eL "$bin" $args) > "$log" 2>&1
	rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	cat "$log"
	echo "=== $suite: exit $rc after $secs s"
	case $name in
	cs_prctl_test) prctl_checks "$suite" "$log" >> "$OUT" ;;
	test_cpuset_prs)
		prs_cases "$suite" "$log" "$rc" >> "$OUT"
		# And the whole: the script stops at its first failed check.
		if grep -q '^Test SKIPPED' "$log"; then
			echo "$suite (all) skip"
		elif [ $rc -eq 0 ]; then
			echo "$suite (all) pass"
		else
			echo "$suite (all) fail"
		fi >> "$OUT" ;;
	*) tap "$suite" "$log" >> "$OUT" ;;
	esac
	echo "$suite (exit) $rc" >> "$OUT"
	echo "$suite (seconds) $secs" >> "$OUT.seconds"
	rm -f "$log"
}

: > "$OUT.seconds"
for s in $SUITES; do
	run_suite "$s"
done
# test_cpuset_prs.sh takes CPUs offline and back: make sure they are back.
off=$(cat /sys/devices/system/cpu/offline 2>/dev/null)
if [ -n "$off" ]; then
	echo "WARNING: CPUs $off still offline after the suites; bringing them back"
	for c in $(awk -v RS=, '{ n = split($0, r, "-"); for (i = r[1]; i <= r[n]; i++) print i }' <<< "$off"); do
		echo 1 > "/sys/devices/system/cpu/cpu$c/online"
	done
	echo "peer-suites (cpus-online) fail" >> "$OUT"
else
	echo "peer-suites (cpus-online) pass" >> "$OUT"
fi
prs_cleanup
