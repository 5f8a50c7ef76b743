#!/bin/bash
# timeout: 60
# The guest is what the tests assume: the kernel just built, SMT pairs
# {0,1},{2,3},... in two packages, cgroup v2 with cpu and cpuset, systemd
# in multi-user.
set -u
fail=0
check() { # DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}

R=${COSCHED_RESULTS:-/run/cosched-results}
check "uname -r is $(cat "$R/expect-release")" \
	test "$(uname -r)" = "$(cat "$R/expect-release")"
check "uname -v is the build just made: $(cat "$R/expect-version")" \
	test "$(uname -v)" = "$(cat "$R/expect-version")"

ncpu=$(nproc --all)
check "8 CPUs online ($ncpu)" test "$ncpu" -eq 8
for ((c = 0; c < ncpu; c++)); do
	t=/sys/devices/system/cpu/cpu$c/topology
	want="$((c & ~1))-$((c | 1))"
	check "cpu$c SMT siblings $want" test "$(cat $t/thread_siblings_list)" = "$want"
done
pkgs=$(cat /sys/devices/system/cpu/cpu*/topology/package_cpus_list | sort -u | paste -sd' ')
check "two packages 0-3 and 4-7 ($pkgs)" test "$pkgs" = "0-3 4-7"

check "cgroup v2 at /sys/fs/cgroup" test "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs
ctrl=$(cat /sys/fs/cgroup/cgroup.controllers)
check "cpu controller available ($ctrl)" grep -qw cpu /sys/fs/cgroup/cgroup.controllers
check "cpuset controller available" grep -qw cpuset /sys/fs/cgroup/cgroup.controllers

# The span nodes of the levels above the core are built only when
# cosched_max_level= asks for such a level (12-levels-boot checks them).
ml=$(sed -n 's/.*cosched_max_level=\([0-9]*\).*/\1/p' /proc/cmdline)
if [ "${ml:-0}" -le 1 ]; then
	n=$(dmesg | grep -c 'cosched: level [0-9]')
	check "no span nodes at cosched_max_level=${ml:-unset} ($n level lines)" test "$n" -eq 0
	[ ! -d /sys/kernel/cosched ] ||
		check "no levels/2 in sysfs at cosched_max_level=${ml:-unset}" test ! -e /sys/kernel/cosched/levels/2
fi

state=$(systemctl is-active multi-user.target)
check "systemd reached multi-user.target ($state)" test "$state" = active
failed_units=$(systemctl --failed --no-legend --plain | awk '{print $1}' | paste -sd' ')
check "no failed units (${failed_units:-none})" test -z "$failed_units"

echo "$(uname -r) $ncpu CPUs, SMT pairs, packages $pkgs, cgroup2 [$ctrl], $state"
exit $fail
