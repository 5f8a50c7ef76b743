#!/bin/bash
# Create the cached base rootfs: debootstrap minbase bookworm plus
# packages.list, configured for a serial-console QEMU guest with no
# network and no initramfs.  Run by image/build.sh only when the package
# list or this recipe changed.
set -euo pipefail

DIR=${1:?usage: mkbase.sh DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
APT_ETC=${APT_ETC:-/etc/apt}	# another folder only to try the parser

# The Debian archive this machine's apt installs bookworm from: the first
# entry, in apt's order (sources.list, then sources.list.d/ by name), of
# type deb with suite bookworm and component main, as a one-line
# "deb [options] URI bookworm main..." or a deb822 stanza (Types: URIs:
# Suites: Components:, not Enabled: no).  When apt has fetched the
# archive's Release file, it must say "Origin: Debian": a third-party
# archive that also offers bookworm main is skipped.
apt_mirror() {
	local f uri rel uris=
	for f in "$APT_ETC/sources.list" "$APT_ETC"/sources.list.d/*; do
		[ -f "$f" ] || continue
		case $f in
		*.sources) uris+=$(_deb822_uris "$f")$'\n' ;;
		*/sources.list|*.list) uris+=$(_oneline_uris "$f")$'\n' ;;
		esac
	done
	while read -r uri; do
		case $uri in http://*|https://*|file:/*) ;; *) continue ;; esac
		# apt's name for the archive's Release file in its lists folder.
		rel=${uri#*:}; rel=${rel#//}; rel=${rel%/}
		rel=/var/lib/apt/lists/${rel//\//_}_dists_bookworm_
		if [ -e "${rel}InRelease" ] || [ -e "${rel}Release" ]; then
			grep -qsx 'Origin: Debian' "${rel}InRelease" "${rel}Release" || continue
		fi
		echo "${uri%/}"
		return 0
	done <<< "$uris"
	return 1
}
# URIs of the deb822 stanzas of FILE with Types deb, Suites bookworm,
# Components main (fields may continue on indented lines).
_deb822_uris() {
	awk '
	function has(list, w) { return (" " list " ") ~ (" " w " ") }
	function flush() {
		if (has(f["types"], "deb") && has(f["suites"], "bookworm") &&
		    has(f["components"], "main") && tolower(f["enabled"]) != "no") {
			n = split(f["uris"], u, " ")
			for (i = 1; i <= n; i++) print u[i]
		}
		delete f; key = ""
	}
	/^#/ { next }
	/^[ \t]*$/ { flush(); next }
	/^[ \t]/ { if (key != "") f[key] = f[key] " " $0; next }
	{ key = tolower($0); sub(/:.*/, "", key)
	  v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/[ \t]+$/, "", v); f[key] = v }
	END { flush() }' "$1"
}
# URIs of the lines "deb [options] URI bookworm ... main ..." of FILE.
_oneline_uris() {
	awk '
	{ sub(/#.*/, "") }
	$1 == "deb" {
		line = $0; sub(/^[ \t]*deb[ \t]+/, "", line)
		sub(/^\[[^]]*\][ \t]*/, "", line)
		n = split(line, w, /[ \t]+/)
		if (w[2] != "bookworm") next
		for (i = 3; i <= n; i++) if (w[i] == "main") { print w[1]; next }
	}' "$1"
}

if [ -n "${DEBIAN_MIRROR:-}" ]; then
	MIRROR=$DEBIAN_MIRROR
elif ! MIRROR=$(apt_mirror); then
	echo "image: no Debian archive for bookworm main in this machine's apt sources" \
		"($APT_ETC/sources.list, $APT_ETC/sources.list.d/*.list, *.sources);" \
		"add one, or set DEBIAN_MIRROR=URI" >&2
	exit 1
fi
echo "image: debootstrap from $MIRROR${DEBIAN_MIRROR:+ (DEBIAN_MIRROR)}"

pkgs=$(grep -v '^\s*\(#\|$\)' "$HERE/packages.list" | paste -sd, -)
rm -rf "$DIR"
# A mirror caught between two syncs serves a Release that its signature
# does not match ("Invalid Release signature"): try once more.
for try in 1 2; do
	debootstrap --variant=minbase --include="$pkgs" bookworm "$DIR" "$MIRROR" \
		> "$DIR.log" 2>&1 && break
	if [ $try = 2 ]; then
		tail -20 "$DIR.log" >&2
		echo "image: debootstrap failed, see $DIR.log" >&2
		exit 1
	fi
	echo "image: debootstrap failed ($(grep '^E:' "$DIR.log" | head -1)); trying once more in 30 s"
	sleep 30
	rm -rf "$DIR"
done

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
