#!/bin/bash
# Build the guest disk image: the cached Debian 12 base rootfs (rebuilt only
# when packages.list or mkbase.sh change) plus, on every build, the
# project's daemon, units, config, test tools and guest tests.  The ext4
# image is made by mkfs.ext4 -d: no root mounts, no loop devices.
# Output: $COSCHED_CACHE/out/rootfs.img
#
#   image/build.sh          the image
#   image/build.sh --base   only the cached base rootfs (tests/run.sh makes
#                           it while the host tests run and the kernel
#                           builds)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(dirname "$HERE")
CACHE=${COSCHED_CACHE:-$HOME/.cache/cosched}
OUT=$CACHE/out
STAGE=$CACHE/image-stage
SIZE=${IMAGE_SIZE:-2G}

die() { echo "image: $*" >&2; exit 1; }

mkdir -p "$OUT"
key=$(cat "$HERE/packages.list" "$HERE/mkbase.sh" | sha256sum | cut -c1-16)
BASE=$CACHE/rootfs-base-$key
if [ ! -e "$BASE/.cosched-complete" ]; then
	echo "image: creating base rootfs $key with debootstrap (about 2 minutes)"
	t0=$(date +%s)
	rm -rf "$CACHE"/rootfs-base-*
	"$HERE/mkbase.sh" "$BASE"
	touch "$BASE/.cosched-complete"
	echo "image: base rootfs done in $(($(date +%s) - t0)) s"
fi
[ "${1:-}" != --base ] || exit 0

# A fresh copy of the base for every build, so nothing stale survives.
rsync -a --delete --exclude=/.cosched-complete "$BASE/" "$STAGE/"

if [ -e "$TOP/daemon/Makefile" ]; then
	make -s -C "$TOP/daemon" >/dev/null || die "daemon build failed (make -C daemon)"
	make -s -C "$TOP/daemon" install DESTDIR="$STAGE" prefix=/usr >/dev/null ||
		die "daemon install failed"
	# Enabled as its preset says, the way a package is: the symlink goes
	# to /etc, where "systemctl disable coschedd" removes it.
	systemctl --root="$STAGE" --quiet preset coschedd.service ||
		die "systemctl preset coschedd.service failed"
	[ -L "$STAGE/etc/systemd/system/multi-user.target.wants/coschedd.service" ] ||
		die "coschedd.service not enabled by its preset"
fi
if [ -e "$TOP/tests/tools/Makefile" ]; then
	make -s -C "$TOP/tests/tools" >/dev/null || die "test tools build failed (make -C tests/tools)"
	make -s -C "$TOP/tests/tools" install DESTDIR="$STAGE" >/dev/null ||
		die "test tools install failed"
fi

T=$STAGE/usr/lib/cosched-tests
mkdir -p "$T/guest" "$T/bin" "$STAGE/etc/systemd/system/multi-user.target.wants"
# perf, when tests/perf-build.sh has built it (make bench does).
if [ -x "$CACHE/out/perf/perf" ]; then
	install -m 0755 "$CACHE/out/perf/perf" "$T/bin/perf"
fi
# The kernel's selftests and their recorded stock baseline, for the
# peer-suite tests (tests/peer-build.sh, tests/guest/7x-peer-*).
"$TOP/tests/peer-build.sh" || die "selftests build failed (tests/peer-build.sh)"
cp -a "$CACHE/out/selftests" "$T/selftests"
[ ! -d "$TOP/tests/peer-baseline" ] || cp -a "$TOP/tests/peer-baseline" "$T/peer-baseline"
cp -a "$TOP"/tests/guest/. "$T/guest/"
install -m 0755 "$HERE/guest/cosched-guest-run" "$HERE/guest/cosched-demo" "$T/"
install -m 0644 "$HERE/guest/cosched-guest.service" "$STAGE/etc/systemd/system/"
ln -sf ../cosched-guest.service \
	"$STAGE/etc/systemd/system/multi-user.target.wants/cosched-guest.service"
mkdir -p "$STAGE/etc/profile.d"
install -m 0644 "$HERE/guest/motd" "$STAGE/etc/motd"

rm -f "$OUT/rootfs.img.tmp"
mkfs.ext4 -q -F -L cosched-root -d "$STAGE" "$OUT/rootfs.img.tmp" "$SIZE" ||
	die "mkfs.ext4 failed"
mv "$OUT/rootfs.img.tmp" "$OUT/rootfs.img"
echo "image: $OUT/rootfs.img ($SIZE, base $key)"
