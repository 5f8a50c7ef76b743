#!/bin/bash
# timeout: 60
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
# levels are not schedulable yet: max_level stays 1 (checked).  That no
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
	below=${span[$k]}
done

mapfile -t got < <(dmesg | sed -n 's/^\[[ 0-9.]*\] //; /^cosched: level [0-9]/p')
for l in "${got[@]}"; do log "# kernel: $l"; done
check_eq "number of level lines" "${#got[@]}" "${#expect[@]}"
for i in "${!expect[@]}"; do
	check_eq "level line $((i + 2))" "${got[$i]:-missing}" "${expect[$i]}"
done

ml=$(rd "$COSCHED_SYSFS/max_level")
check_eq "max_level (levels above 1 not schedulable yet)" "$ml" 1

finish "$(printf '%s; ' "${got[@]}" | sed 's/cosched: //g; s/; $//') (sysfs: $(printf '%s; ' "${expect[@]}" | sed 's/cosched: //g; s/; $//')), max_level $ml"
