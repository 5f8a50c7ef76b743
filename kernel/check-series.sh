#!/bin/bash
# Check every patch of the series on its own:
#   - scripts/checkpatch.pl from the tree passes;
#   - with the series applied up to and including the patch, the
#     directories the series touches compile (kernel/sched/, kernel/fork.o,
#     kernel/cgroup/), with CONFIG_COSCHEDULING=y and =n.
# Needs kernel/build.sh patched to have run (it provides the tree and the
# config).  Output: one "PASS name" / "FAIL name" line per check.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${COSCHED_CACHE:-$HOME/.cache/cosched}
SRC=$CACHE/src-patched
WT=$CACHE/bisect-src
JOBS=${JOBS:-$(($(nproc) + 1))}
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache} CCACHE_BASEDIR=$CACHE
export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
TARGETS="kernel/sched/ kernel/fork.o kernel/cgroup/"
SERIES_ONLY_CHECKPATCH=${SERIES_ONLY_CHECKPATCH:-0}
# FROM=N: build only from patch N on (the ones changed since a full run);
# checkpatch still runs on every patch.
FROM=${FROM:-1}

[ -e "$CACHE/out/patched/config" ] || { echo "FAIL series/setup: run kernel/build.sh patched first"; exit 1; }
git -C "$SRC" worktree prune
[ -d "$WT" ] || git -C "$SRC" worktree add -q --detach "$WT" pristine

fail=0
n=0
# build.sh made one commit per patch, named after the patch file.
for c in $(git -C "$SRC" rev-list --reverse pristine..series); do
	n=$((n + 1))
	name=$(git -C "$SRC" log -1 --format=%s "$c")
	git -C "$WT" checkout -q --detach "$c"
	if (cd "$WT" && scripts/checkpatch.pl -q "$HERE/patches/$name" \
			>"$CACHE/checkpatch.$n.log" 2>/dev/null); then
		echo "PASS checkpatch/$n $name"
	else
		echo "FAIL checkpatch/$n $name (see $CACHE/checkpatch.$n.log)"; fail=1
	fi
	[ "$SERIES_ONLY_CHECKPATCH" = 1 ] && continue
	[ "$n" -ge "$FROM" ] || continue
	for cos in y n; do
		B=$CACHE/bisect-build-$cos
		mkdir -p "$B"
		cp "$CACHE/out/patched/config" "$B/.config"
		[ $cos = n ] && sed -i 's/^CONFIG_COSCHEDULING=y/# CONFIG_COSCHEDULING is not set/' "$B/.config"
		if make -s -C "$WT" O="$B" olddefconfig >/dev/null 2>&1 &&
		   make -s -C "$WT" O="$B" -j"$JOBS" CC="ccache gcc" $TARGETS \
				>"$B/build.$n.log" 2>&1; then
			echo "PASS build/$n-cosched=$cos $name"
		else
			echo "FAIL build/$n-cosched=$cos $name (see $B/build.$n.log)"; fail=1
		fi
	done
done
exit $fail
