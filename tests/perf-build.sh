#!/bin/bash
# Build perf (for `perf bench sched messaging|pipe` in make bench) from the
# kernel tree the project extracts: the files perf's own MANIFEST names,
# taken from the "pristine" commit of $COSCHED_CACHE/src-stock (or
# src-patched: both start from the same tarball commit), built out of tree
# in the cache.  Static, with every optional library off: the guest needs
# nothing but the binary, and `perf bench` needs none of them.
#
# Keyed by content (the git trees of the MANIFEST paths, this script and
# the make flags): built once, rebuilt only when one of them changes.
# Output: $COSCHED_CACHE/out/perf/perf (image/build.sh installs it into
# the guest's /usr/lib/cosched-tests/bin when it is there).
#   tests/perf-build.sh        prints where perf is; JOBS= as kernel/build.sh
set -euo pipefail

CACHE=${COSCHED_CACHE:-$HOME/.cache/cosched}
OUT=$CACHE/out/perf
JOBS=${JOBS:-$(($(nproc) + 1))}
die() { echo "perf: $*" >&2; exit 1; }

SRC=
for s in "$CACHE/src-stock" "$CACHE/src-patched"; do
	git -C "$s" rev-parse -q --verify pristine >/dev/null 2>&1 && { SRC=$s; break; }
done
[ -n "$SRC" ] || die "no extracted kernel tree in $CACHE: run 'kernel/build.sh stock' first"

# Every optional feature off: perf bench needs only libc (and the
# in-tree libtraceevent, libapi, libsubcmd, libperf that perf always links).
FLAGS=(NO_LIBPYTHON=1 NO_LIBPERL=1 NO_LIBELF=1 NO_LIBUNWIND=1 NO_LIBDW_DWARF_UNWIND=1
	NO_DWARF=1 NO_LIBBPF=1 NO_SLANG=1 NO_GTK2=1 NO_LIBAUDIT=1 NO_LIBNUMA=1
	NO_LIBCRYPTO=1 NO_LIBBFD=1 NO_DEMANGLE=1 NO_ZLIB=1 NO_LZMA=1 NO_LIBZSTD=1
	NO_LIBCAP=1 NO_BACKTRACE=1 NO_LIBBABELTRACE=1 NO_JVMTI=1 NO_AUXTRACE=1
	NO_SDT=1 NO_LIBDEBUGINFOD=1 NO_JEVENTS=1 NO_SHELLCHECK=1 WERROR=0
	LDFLAGS=-static)

paths=$(git -C "$SRC" show pristine:tools/perf/MANIFEST | grep -v '^\s*\(#\|$\)')
[ -n "$paths" ] || die "no tools/perf/MANIFEST in $SRC"
# shellcheck disable=SC2086 # the MANIFEST paths are plain words
key=$( { git -C "$SRC" ls-tree -r pristine -- $paths; cat "$0"; echo "${FLAGS[*]}"; } |
	sha256sum | cut -c1-16)

exec 9>"$CACHE/perf-build.lock"
if ! flock -n 9; then
	echo "perf: another perf build is running; waiting for it"
	flock 9
fi
if [ -x "$OUT/perf" ] && [ "$(cat "$OUT/stamp" 2>/dev/null)" = "$key" ]; then
	echo "perf: $OUT/perf up to date ($key)"
	exit 0
fi

PSRC=$CACHE/perf-src
PBUILD=$CACHE/perf-build
t0=$(date +%s)
echo "perf: building $key from $SRC (pristine) with -j$JOBS (log: $PBUILD.log)"
rm -rf "$PSRC" "$PBUILD"
mkdir -p "$PSRC" "$PBUILD" "$OUT"
# shellcheck disable=SC2086
git -C "$SRC" archive pristine -- $paths | tar -x -C "$PSRC"
# Outside a git tree perf takes its version from this file ("perf version").
ver=$(git -C "$SRC" show pristine:Makefile |
	awk -F' *= *' '$1 ~ /^(VERSION|PATCHLEVEL|SUBLEVEL)$/ && !($1 in v) { v[$1] = $2 }
		END { print v["VERSION"] "." v["PATCHLEVEL"] "." v["SUBLEVEL"] }')
echo "#define PERF_VERSION \"$ver\"" > "$PSRC/PERF-VERSION-FILE"
if ! make -C "$PSRC/tools/perf" O="$PBUILD" -j"$JOBS" "${FLAGS[@]}" perf > "$PBUILD.log" 2>&1; then
	grep -E 'error|Error' "$PBUILD.log" | head -20 >&2
	die "perf build failed, see $PBUILD.log"
fi
"$PBUILD/perf" bench sched pipe -l 1000 >/dev/null 2>&1 || die "the built perf cannot run 'perf bench sched pipe'"
install -s -m 0755 "$PBUILD/perf" "$OUT/perf.tmp"
mv "$OUT/perf.tmp" "$OUT/perf"
echo "$key" > "$OUT/stamp"
rm -rf "$PSRC" "$PBUILD"
echo "perf: built $OUT/perf ($(du -k "$OUT/perf" | cut -f1) KiB, $key) in $(($(date +%s) - t0)) s"
