#!/bin/bash
# Create the cached base rootfs: debootstrap minbase bookworm plus
# packages.list, configured for a serial-console QEMU guest with no
# network and no initramfs.  Run by image/build.sh only when the package
# list or this recipe changed.
set -euo pipefail

DIR=${1:?usage: mkbase.sh DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

pkgs=$(grep -v '^\s*\(#\|$\)' "$HERE/packages.list" | paste -sd, -)
rm -rf "$DIR"
debootstrap --variant=minbase --include="$pkgs" bookworm "$DIR" "$MIRROR" \
	> "$DIR.log" 2>&1 || { tail -20 "$DIR.log" >&2; echo "image: debootstrap failed, see $DIR.log" >&2; exit 1; }

echo cosched-guest > "$DIR/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tcosched-guest\n' > "$DIR/etc/hosts"
printf '/dev/vda\t/\text4\tdefaults\t0\t1\n' > "$DIR/etc/fstab"
# Root logs in on the serial console without a password: a throwaway guest.
chroot "$DIR" passwd -d root >/dev/null
mkdir -p "$DIR/etc/systemd/system/serial-getty@ttyS0.service.d"
cat > "$DIR/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<'UNIT'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --keep-baud 115200,57600,38400,9600 %I $TERM
UNIT
# No network, no clock sync, nothing that waits on a timeout at boot.
for u in systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
	 e2scrub_all.timer fstrim.timer man-db.timer systemd-networkd-wait-online.service; do
	ln -sf /dev/null "$DIR/etc/systemd/system/$u"
done
# Keep the journal in memory; the image is booted with snapshot=on anyway.
mkdir -p "$DIR/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' > "$DIR/etc/systemd/journald.conf.d/volatile.conf"
rm -rf "$DIR/var/cache/apt/archives/"*.deb "$DIR/var/lib/apt/lists/"*
