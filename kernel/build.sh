#!/bin/bash
# Build the guest kernel out of tree, in a cache folder outside the checkout.
#
#   kernel/build.sh patched   Debian's 6.1 tree + kernel/series
#   kernel/build.sh stock     the same tree, no patches, identical config
#   kernel/build.sh cosched-n the patched tree with CONFIG_COSCHEDULING=n
#                             (only make peer-baseline builds it)
#   kernel/build.sh kasan     the patched tree (a copy of its own) with
#                             CONFIG_KASAN on top of the debug config, for
#                             the stress soak (make soak); never built by
#                             make test: cold, it costs a full build
#   kernel/build.sh without-N the series without its Nth patch, to show
#                             that a fix matters (KERNEL=without-2 make
#                             test TESTS=60-bandwidth); it shares the
#                             patched flavour's tree and build folder, so
#                             it costs an incremental build each way
#   kernel/build.sh plant-NAME the series plus kernel/plants/NAME.patch, a
#                             bug planted on purpose to show that a test
#                             catches it (KERNEL=plant-NAME make test
#                             TESTS=80-stress); same tree and build folder
#                             as without-N
#
# The source tree is a git repository in the cache: a pristine commit of
# the tarball, then one commit per patch.  When the series changes the tree
# is reset to the pristine commit and the series is applied again; git only
# rewrites files whose content changes, so make rebuilds only what changed.
# Output: $COSCHED_CACHE/out/<flavour>/{bzImage,release,version}.
set -euo pipefail

FLAVOUR=${1:?usage: kernel/build.sh patched|stock|cosched-n|kasan|without-N|plant-NAME}
DROP=
PLANT=
case $FLAVOUR in
patched|stock|cosched-n|kasan) ;;
without-[1-9]|without-[1-9][0-9]) DROP=${FLAVOUR#without-} ;;
plant-[a-z0-9-]*) PLANT=${FLAVOUR#plant-} ;;
*) echo "kernel: unknown flavour '$FLAVOUR'" >&2; exit 2;;
esac

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${COSCHED_CACHE:-$HOME/.cache/cosched}
TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
TREE=$FLAVOUR
[ -z "$DROP$PLANT" ] || TREE=patched	# without-N, plant-NAME: the patched tree and build
SRC=$CACHE/src-$TREE
BUILD=$CACHE/build-$TREE
OUT=$CACHE/out/$FLAVOUR
JOBS=${JOBS:-$(($(nproc) + 1))}
FRAGMENTS="$HERE/config/base-trim.config $HERE/config/guest.config $HERE/config/debug.config $HERE/config/cosched.config"

export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# The kernel build embeds paths and time; make ccache ignore what it can.
export CCACHE_BASEDIR=$CACHE
export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
export KBUILD_BUILD_USER=cosched KBUILD_BUILD_HOST=cosched

die() { echo "kernel: $*" >&2; exit 1; }

[ -r "$TARBALL" ] || die "$TARBALL missing: run 'make deps' (package linux-source-6.1)"
mkdir -p "$CACHE" "$OUT"

# One build per flavour at a time: a second caller waits for the first.
exec 9>"$CACHE/build-$TREE.lock"
if ! flock -n 9; then
	echo "kernel: another $TREE build is running; waiting for it"
	flock 9
fi

tar_id=$(stat -c '%s-%Y' "$TARBALL")
# The patches this flavour applies, in order.
series_list() {
	grep -v '^\s*\(#\|$\)' "$HERE/series" | awk -v d="${DROP:-0}" 'NR != d'
	[ -z "$PLANT" ] || echo "../plants/$PLANT.patch"
}
[ -z "$PLANT" ] || [ -r "$HERE/plants/$PLANT.patch" ] ||
	{ echo "kernel: no kernel/plants/$PLANT.patch" >&2; exit 2; }
if [ -n "$DROP" ]; then
	[ "$(grep -cv '^\s*\(#\|$\)' "$HERE/series")" -ge "$DROP" ] ||
		{ echo "kernel: the series has no patch $DROP" >&2; exit 2; }
fi
if [ "$FLAVOUR" != stock ]; then
	series_id=$(cd "$HERE" && {
		if [ -z "$DROP$PLANT" ]; then cat series; else series_list; fi
		series_list | sed 's|^|patches/|' | xargs -r cat
	} | sha256sum | cut -c1-16)
else
	series_id=pristine	# no patches: the stock tree is the tarball
fi
src_key="$tar_id $series_id"

extract() {
	echo "kernel: extracting $(basename "$TARBALL") into $SRC"
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xf "$TARBALL" -C "$SRC.tmp" --strip-components=1
	git -C "$SRC.tmp" init -q
	git -C "$SRC.tmp" -c user.name=cosched -c user.email=cosched@localhost \
		add -A -f
	git -C "$SRC.tmp" -c user.name=cosched -c user.email=cosched@localhost \
		commit -q -m "pristine $(basename "$TARBALL") $tar_id"
	git -C "$SRC.tmp" tag pristine
	echo "$tar_id" > "$SRC.tmp/.cosched-tarball"
	mv "$SRC.tmp" "$SRC"
}

# Build the series as a chain of commits on top of "pristine" in a private
# index, then check the result out: git rewrites only the files whose
# content differs from what is checked out now, so make (and ccache)
# rebuild only what the series change really touched.
apply_series() {
	local p n=0 head tree series=$HERE/series
	local idx="$SRC/.git/cosched-index"

	[ "$FLAVOUR" != stock ] || series=/dev/null
	# (a file: a <(...) given to a plain assignment is closed at once)
	if [ -n "$DROP$PLANT" ]; then
		series=$CACHE/series-$FLAVOUR
		series_list > "$series"
	fi
	head=$(git -C "$SRC" rev-parse pristine)
	GIT_INDEX_FILE=$idx git -C "$SRC" read-tree pristine
	while read -r p; do
		case $p in ''|'#'*) continue;; esac
		[ -r "$HERE/patches/$p" ] || die "series names $p, which is not in kernel/patches/"
		if ! GIT_INDEX_FILE=$idx git -C "$SRC" apply --cached --whitespace=nowarn \
				"$HERE/patches/$p" 2>"$CACHE/apply.err"; then
			cat "$CACHE/apply.err" >&2
			die "patch $p does not apply (patch $((n + 1)) of the series)"
		fi
		tree=$(GIT_INDEX_FILE=$idx git -C "$SRC" write-tree)
		head=$(git -C "$SRC" -c user.name=cosched -c user.email=cosched@localhost \
			commit-tree "$tree" -p "$head" -m "$p")
		n=$((n + 1))
	done < "$series"
	rm -f "$idx"
	git -C "$SRC" checkout -q -f --detach "$head"
	git -C "$SRC" tag -f series "$head" >/dev/null
	echo "kernel: applied $n patches${DROP:+ (all but patch $DROP)}${PLANT:+ (the last one the plant $PLANT)}"
}

t0=$(date +%s)
if [ ! -e "$SRC/.cosched-tarball" ] || [ "$(cat "$SRC/.cosched-tarball")" != "$tar_id" ]; then
	extract
fi
if [ "$(cat "$SRC/.cosched-series" 2>/dev/null)" != "$src_key" ]; then
	rm -f "$SRC/.cosched-series"
	apply_series
	echo "$src_key" > "$SRC/.cosched-series"
fi
# Keep the marker files out of git's way.
grep -qx '.cosched-\*' "$SRC/.git/info/exclude" 2>/dev/null ||
	echo '.cosched-*' >> "$SRC/.git/info/exclude"

# Configure: defconfig + kvm_guest.config + our fragments.  The result is
# installed only if it differs, so an unchanged config costs no rebuild.
mkdir -p "$BUILD" "$BUILD/cfg"
if [ "$FLAVOUR" = cosched-n ]; then
	echo '# CONFIG_COSCHEDULING is not set' > "$BUILD/cosched-n.config"
	FRAGMENTS="$FRAGMENTS $BUILD/cosched-n.config"
fi
[ "$FLAVOUR" != kasan ] || FRAGMENTS="$FRAGMENTS $HERE/config/kasan.config"
make -s -C "$SRC" O="$BUILD/cfg" defconfig >/dev/null
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$BUILD/cfg" "$BUILD/cfg/.config" \
	"$SRC/kernel/configs/kvm_guest.config" $FRAGMENTS >/dev/null
make -s -C "$SRC" O="$BUILD/cfg" olddefconfig >/dev/null
if ! cmp -s "$BUILD/cfg/.config" "$BUILD/.config"; then
	cp "$BUILD/cfg/.config" "$BUILD/.config"
	echo "kernel: config updated"
fi
for sym in MODULES VIRTIO_BLK EXT4_FS NET_9P_VIRTIO SCHED_SMT CGROUP_SCHED; do
	grep -qx "CONFIG_$sym=y" "$BUILD/.config" || [ $sym = MODULES ] ||
		die "config lost CONFIG_$sym=y (check kernel/config/)"
done
if { [ "$FLAVOUR" = patched ] || [ "$FLAVOUR" = kasan ]; } && grep -q 'config COSCHEDULING' "$SRC/init/Kconfig" "$SRC"/kernel/Kconfig.* 2>/dev/null; then
	grep -qx 'CONFIG_COSCHEDULING=y' "$BUILD/.config" || die "CONFIG_COSCHEDULING did not stick"
fi
if [ "$FLAVOUR" = kasan ]; then
	grep -qx 'CONFIG_KASAN=y' "$BUILD/.config" || die "kasan: CONFIG_KASAN did not stick"
fi
if [ "$FLAVOUR" = cosched-n ]; then
	grep -qx '# CONFIG_COSCHEDULING is not set' "$BUILD/.config" ||
		die "cosched-n: the config does not say CONFIG_COSCHEDULING is not set"
fi
# The comparison is worthless if the stock kernel has the feature.
if [ "$FLAVOUR" = stock ] && grep -q 'COSCHEDULING' "$BUILD/.config"; then
	die "the stock tree carries coscheduling code: $SRC is not pristine"
fi

stamp="$src_key $(sha256sum < "$BUILD/.config" | cut -c1-16) $(sha256sum < "$0" | cut -c1-16)"
if [ -e "$OUT/bzImage" ] && [ "$(cat "$OUT/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "kernel: $FLAVOUR $(cat "$OUT/release") up to date"
	exit 0
fi

echo "kernel: building $FLAVOUR with -j$JOBS (log: $BUILD/build.log)"
if ! make -C "$SRC" O="$BUILD" -j"$JOBS" CC="ccache gcc" LOCALVERSION="-$FLAVOUR" \
		bzImage > "$BUILD/build.log" 2>&1; then
	grep -E 'error|Error' "$BUILD/build.log" | head -20 >&2
	die "build of $FLAVOUR failed, see $BUILD/build.log"
fi
grep -E '^[^ ]*: warning:' "$BUILD/build.log" | sort -u | head -20 || true

cp "$BUILD/arch/x86/boot/bzImage" "$OUT/bzImage.tmp"
mv "$OUT/bzImage.tmp" "$OUT/bzImage"
cp "$BUILD/.config" "$OUT/config"
cat "$BUILD/include/config/kernel.release" > "$OUT/release"
sed -n 's/^#define UTS_VERSION "\(.*\)"$/\1/p' "$BUILD/include/generated/utsversion.h" > "$OUT/version"
echo "$stamp" > "$OUT/stamp"
echo "kernel: built $FLAVOUR $(cat "$OUT/release") $(cat "$OUT/version") in $(($(date +%s) - t0)) s"
