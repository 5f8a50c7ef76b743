#!/bin/bash
# timeout: 180
# boot: cosched_max_level=8
# Issue 10 point 1, first step: the span nodes of the levels above the
# core, built at boot when cosched_max_level= asks for a level above 1.
# The kernel prints one line per level ("cosched: level N NAME: K spans
# of M CPUs"); this test derives the levels it should have printed from
# a different source, the topology and cache files in sysfs (cluster,
# last-level cache, package, all CPUs, bottom-up; a level is kept if its
# spans are wider than the level below; named after the outermost of
# machine, package, llc, cluster it equals), and compares them line by
# line.  On the test guest (2 packages of 2 cores of 2 threads): level 2
# package (2 spans of 4 CPUs), level 3 machine (1 span of 8).  The
# kernel's /sys/kernel/cosched/levels/N (name, spans, leaders) must say
# the same, and each span's leader must be its highest online CPU, also
# while CPUs go offline and come back: the leaders of both levels (7),
# then a leader of package 0 (3), then all of package 1 one by one, then
# all back (the SMT core 0-1 stays whole: no static key is flipped), and
# unchanged by a cpuset partition of CPUs 6-7 (domains rebuilt).
# levels/2/turn_us takes 0 to 10 s in microseconds, ERANGE above and
# EINVAL for what is not a number, and a refused write leaves the value.
# max_level is the highest level built (cosched_max_level=8 clamped to it,
# with the boot line saying so).  That no
# nodes are built below cosched_max_level=2 is checked by 00-smoke, which
# boots with cosched_max_level=1.
. "$(dirname "$0")/lib.sh"
TEST_NAME=12-levels-boot	# used by finish; no cgroups needed
export TEST_NAME
log "# cmdline: $(cat /proc/cmdline)"

SYS=/sys/devices/system/cpu

# spans_of KIND: one line per CPU: the list of CPUs that share KIND with
# it; a CPU whose file is missing (no L3 described, no clusters) counts as
# sharing only its SMT core, so that KIND adds no level.
spans_of() {
	local c f t
	for c in $(seq 0 $(($(nproc --all) - 1))); do
		t=$SYS/cpu$c/topology
		case $1 in
		smt) f=$t/thread_siblings_list ;;
		cluster) f=$t/cluster_cpus_list ;;
		package) f=$t/package_cpus_list ;;
		llc) f=$(grep -l '^3$' "$SYS/cpu$c"/cache/index*/level 2>/dev/null |
			head -1 | sed 's/level$/shared_cpu_list/') ;;
		machine) echo "0-$(($(nproc --all) - 1))"; continue ;;
		esac
		cat "${f:-/nonexistent}" 2>/dev/null || cat "$t/thread_siblings_list"
	done
}

# The distinct spans of KIND, sorted: a level's identity.
level_of() { spans_of "$1" | sort -u | paste -sd' '; }

# width SPANS: "K spans of M CPUs" (or "of A to B CPUs"), as the kernel says.
width() {
	local n=0 lo='' hi='' s w
	for s in $1; do
		w=$(echo "$s" | awk -F, '{ n = 0; for (i = 1; i <= NF; i++) {
			split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) }
			print n }')
		n=$((n + 1))
		[ -z "$lo" ] || [ "$w" -lt "$lo" ] && lo=$w
		[ -z "$hi" ] || [ "$w" -gt "$hi" ] && hi=$w
	done
	if [ "$lo" = "$hi" ]; then
		[ "$n" -gt 1 ] && echo "$n spans of $hi CPUs" || echo "$n span of $hi CPUs"
	else
		echo "$n spans of $lo to $hi CPUs"
	fi
}

declare -A span
declare -a names spans
for k in smt cluster llc package machine; do span[$k]=$(level_of $k); done
for k in smt cluster llc package machine; do log "# sysfs $k spans: ${span[$k]}"; done

expect=() level=1 below=${span[smt]}
for k in cluster llc package machine; do
	[ "${span[$k]}" != "$below" ] || continue
	name=$k
	for o in machine package llc cluster; do
		[ "${span[$o]}" = "${span[$k]}" ] && { name=$o; break; }
	done
	level=$((level + 1))
	expect+=("cosched: level $level $name: $(width "${span[$k]}")")
	names[level]=$name
	spans[level]=${span[$k]}
	below=${span[$k]}
done

mapfile -t got < <(dmesg | sed -n 's/^\[[ 0-9.]*\] //; /^cosched: level [0-9]/p')
for l in "${got[@]}"; do log "# kernel: $l"; done
check_eq "number of level lines" "${#got[@]}" "${#expect[@]}"
for i in "${!expect[@]}"; do
	check_eq "level line $((i + 2))" "${got[$i]:-missing}" "${expect[$i]}"
done

ml=$(rd "$COSCHED_SYSFS/max_level")
check_eq "max_level (8 clamped to the highest level built)" "$ml" "$((${#expect[@]} + 1))"
clamp=$(dmesg | grep -o 'cosched: cosched_max_level=8 clamped to [0-9]*' | head -1)
check_eq "boot line on the clamp" "${clamp:-missing}" "cosched: cosched_max_level=8 clamped to $((${#expect[@]} + 1))"

# expand LIST: one CPU number per line.  compress: back to a CPU list.
expand() {
	echo "$1" | tr ',' '\n' | awk -F- '{ e = $2 == "" ? $1 : $2
		for (i = $1; i <= e; i++) print i }'
}
compress() {
	sort -n | awk 'NR == 1 { a = b = $1; next }
		$1 == b + 1 { b = $1; next }
		{ o = o (o == "" ? "" : ",") (a == b ? a : a "-" b); a = b = $1 }
		END { if (NR) print o (o == "" ? "" : ",") (a == b ? a : a "-" b) }'
}

# want LEVEL: "spans | leaders" the kernel should show now: the level's
# spans (from the topology files above) cut to the online CPUs, in order
# of their first CPU, a span with no CPU online left out, each led by its
# highest online CPU.
want() {
	local online s cut sp='' ld=''
	online=$(expand "$(cat $SYS/online)")
	for s in $(echo "${spans[$1]}" | tr ' ' '\n' | sort -n); do
		cut=$(comm -12 <(expand "$s" | sort) <(echo "$online" | sort) |
			compress)
		[ -n "$cut" ] || continue
		sp+="${sp:+ }$cut"
		ld+="${ld:+ }$(expand "$cut" | sort -n | tail -1)"
	done
	echo "$sp | $ld"
}

# shown LEVEL: the same, as the kernel shows it.
shown() {
	local d=$COSCHED_SYSFS/levels/$1
	echo "$(paste -sd' ' "$d/spans" 2>/dev/null) | $(paste -sd' ' "$d/leaders" 2>/dev/null)"
}

# check_levels WHEN: name (once), spans and leaders of every level >= 2.
check_levels() {
	local l
	for l in $(seq 2 $((${#expect[@]} + 1))); do
		[ "$1" != boot ] ||
			check_eq "levels/$l/name" "$(rd "$COSCHED_SYSFS/levels/$l/name")" "${names[l]}"
		check_eq "levels/$l spans | leaders, $1" "$(shown "$l")" "$(want "$l")"
	done
}

# set_online CPU 0|1, waiting for the file to say so.
set_online() {
	echo "$2" > "$SYS/cpu$1/online" ||
		fail "cpu$1/online: cannot write $2"
	[ "$(cat "$SYS/cpu$1/online")" = "$2" ] ||
		fail "cpu$1/online: reads $(cat "$SYS/cpu$1/online"), wrote $2"
}

PART=/sys/fs/cgroup/cosched-12-partition
restore() {
	local c
	for c in $(seq 1 $(($(nproc --all) - 1))); do
		[ "$(cat "$SYS/cpu$c/online" 2>/dev/null)" = 1 ] || echo 1 > "$SYS/cpu$c/online"
	done
	[ ! -d $PART ] || { echo member > $PART/cpuset.cpus.partition; rmdir $PART; }
}
trap restore EXIT

check_levels boot

# levels/2/turn_us takes 0 to 10 s in microseconds: ERANGE above, EINVAL
# for what is not a number, and a refused write leaves the value.
TURN=$COSCHED_SYSFS/levels/2/turn_us
if [ ${#expect[@]} -ge 1 ]; then
	turn_was=$(rd "$TURN")
	for tw in "10000000 ok" "10000001 ERANGE" "4294967296 ERANGE" \
		  "-1 EINVAL" "abc EINVAL" "1.5 EINVAL" "0 ok"; do
		set -- $tw
		turn_before=$(rd "$TURN")
		turn_res=$(schedw -n "$TURN" "$1")
		turn_now=$(rd "$TURN")
		turn_want=$turn_before; [ "$2" = ok ] && turn_want=$1
		check_eq "levels/2/turn_us := $1: result, reads back" \
			"$turn_res, $turn_now" "$2, $turn_want"
	done
	echo "$turn_was" > "$TURN"
fi

if [ ${#expect[@]} -ge 1 ] && [ "$(nproc --all)" -ge 8 ]; then
	last=$(($(nproc --all) - 1))
	set_online "$last" 0; check_levels "cpu$last offline"
	set_online 3 0; check_levels "cpu3 offline"
	for c in $((last - 1)) $((last - 2)) $((last - 3)); do
		set_online "$c" 0; check_levels "cpu$c offline"
	done
	for c in $((last - 3)) $((last - 2)) $((last - 1)) "$last" 3; do
		set_online "$c" 1; check_levels "cpu$c online"
	done
	hot="leaders right through 10 hotplug steps"
	# A cpuset partition rebuilds the scheduling domains, and
	# rq_attach_root() takes every runqueue offline and online again:
	# not hotplug.  The spans follow the hardware, not partitions, so
	# nothing may change.
	if grep -qw cpuset /sys/fs/cgroup/cgroup.controllers; then
		echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
		mkdir -p $PART
		echo "$((last - 1))-$last" > $PART/cpuset.cpus
		echo root > $PART/cpuset.cpus.partition
		check_eq "partition $((last - 1))-$last" "$(cat $PART/cpuset.cpus.partition)" root
		check_levels "in a cpuset partition of $((last - 1))-$last"
		echo member > $PART/cpuset.cpus.partition
		rmdir $PART
		check_levels "partition removed"
		hot="$hot and a cpuset partition"
	fi
else
	hot="hotplug steps skipped: fewer than 8 CPUs or no level above 1"
fi

finish "$(printf '%s; ' "${got[@]}" | sed 's/cosched: //g; s/; $//') (sysfs: $(printf '%s; ' "${expect[@]}" | sed 's/cosched: //g; s/; $//')), max_level $ml; levels/N as derived, $hot; turn_us 0-10 s"
