#!/bin/bash
# Build the kernel's own selftests that the peer-suite guest tests
# (tests/guest/7x-peer-*, issue 12) run, from the extracted kernel tree's
# committed sources: tools/testing/selftests/cgroup (test_cpu, test_core,
# test_freezer, test_kill, test_cpuset_prs.sh with wait_inotify) and
# sched/cs_prctl_test.  Also test_cpu_cosched: the same test_cpu.c, its
# calls to cg_create()/cg_destroy() renamed at compile time (-D) to the
# wrappers in tests/peer-cosched-cg.c, which coschedule every group the
# test creates (cpu.scheduled) and log its forced idle before removing it.
# The kernel tree is not modified.
#
# The sources come from the patched tree's "series" commit (the series
# does not touch tools/, so every tree has the same selftests), else the
# stock tree's, else straight from the tarball.  The build is keyed by
# content (git tree id of tools/testing/selftests or the tarball id, this
# script and the wrapper) and cached in $COSCHED_CACHE/out/selftests.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${COSCHED_CACHE:-$HOME/.cache/cosched}
TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
OUT=$CACHE/out/selftests
WORK=$CACHE/selftests-build
WRAP=$TOP/tests/peer-cosched-cg.c
ST=tools/testing/selftests
PARTS="$ST/lib.mk $ST/kselftest.h $ST/kselftest_harness.h $ST/cgroup $ST/sched $ST/clone3 $ST/pidfd"

die() { echo "selftests: $*" >&2; exit 1; }

mkdir -p "$CACHE/out"
exec 9>"$CACHE/selftests-build.lock"
flock 9

src= ref=
for f in patched:series stock:pristine; do
	s=$CACHE/src-${f%%:*}
	if git -C "$s" rev-parse -q --verify "${f#*:}^{commit}" >/dev/null 2>&1; then
		src=$s ref=${f#*:}
		break
	fi
done
mine=$(cat "$0" "$WRAP" | sha256sum | cut -c1-16)
if [ -n "$src" ]; then
	from="$(basename "$src") $ref:$ST $(git -C "$src" rev-parse "$ref:$ST")"
else
	[ -r "$TARBALL" ] || die "no kernel tree in $CACHE and no $TARBALL"
	from="$(basename "$TARBALL") $(stat -c '%s-%Y' "$TARBALL")"
fi
key="$from $mine"
if [ "$(cat "$OUT/key" 2>/dev/null)" = "$key" ]; then
	echo "selftests: up to date ($from)"
	exit 0
fi

echo "selftests: building from $from"
rm -rf "$WORK" "$OUT.tmp"
mkdir -p "$WORK" "$OUT.tmp/cgroup" "$OUT.tmp/sched"
if [ -n "$src" ]; then
	# shellcheck disable=SC2086
	git -C "$src" archive "$ref" $PARTS | tar -x -C "$WORK"
else
	pats=()
	for p in $PARTS; do pats+=("*/$p"); done
	tar -xJf "$TARBALL" -C "$WORK" --strip-components=1 --wildcards "${pats[@]}" ||
		die "cannot extract $PARTS from $TARBALL"
fi
C=$WORK/$ST/cgroup
# lib.mk's targets are $(OUTPUT)/NAME, OUTPUT being the suite's folder.
# lib.mk sets OUTPUT itself only at MAKELEVEL 0: under "make test" or
# "make image" it would stay empty ("No rule to make target"), so say it.
make -s -C "$C" OUTPUT="$C" "$C/test_cpu" "$C/test_core" "$C/test_freezer" "$C/test_kill" "$C/wait_inotify" \
	> "$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; die "make -C $ST/cgroup failed"; }
make -s -C "$WORK/$ST/sched" OUTPUT="$WORK/$ST/sched" "$WORK/$ST/sched/cs_prctl_test" \
	>> "$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; die "make -C $ST/sched failed"; }
# test_cpu_cosched: the kernel's test_cpu.c unchanged, its cg_create and
# cg_destroy calls (and their declarations in cgroup_util.h) renamed.
(
	cd "$C"
	gcc -Wall -pthread -Dcg_create=peer_cg_create -Dcg_destroy=peer_cg_destroy \
		-c -o "$WORK/test_cpu_cosched.o" test_cpu.c
	gcc -Wall -pthread -c -o "$WORK/cgroup_util.o" cgroup_util.c
	gcc -Wall -pthread -I "$C" -c -o "$WORK/peer-cosched-cg.o" "$WRAP"
	gcc -pthread -o "$WORK/test_cpu_cosched" "$WORK/test_cpu_cosched.o" \
		"$WORK/cgroup_util.o" "$WORK/peer-cosched-cg.o"
) >> "$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; die "test_cpu_cosched failed to build"; }
nm "$WORK/test_cpu_cosched.o" | grep -q ' U peer_cg_create$' ||
	die "test_cpu_cosched: test_cpu.o does not call the wrapper"

install -m 0755 "$C/test_cpu" "$C/test_core" "$C/test_freezer" "$C/test_kill" \
	"$C/wait_inotify" "$C/test_cpuset_prs.sh" "$WORK/test_cpu_cosched" "$OUT.tmp/cgroup/"
install -m 0755 "$WORK/$ST/sched/cs_prctl_test" "$OUT.tmp/sched/"
echo "$key" > "$OUT.tmp/key"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
echo "selftests: built into $OUT"
