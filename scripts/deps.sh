#!/bin/sh
# Install every Debian package the project needs, idempotently: only the
# packages that are missing are passed to apt-get, so a warm machine pays
# one dpkg-query and nothing else.
set -eu

PKGS="linux-source-6.1 gcc make flex bison bc libelf-dev libssl-dev
dwarves qemu-system-x86 debootstrap systemd libsystemd-dev libcgroup-dev
libinih-dev e2fsprogs ccache pkg-config rsync cpio xz-utils git
clang libclang-rt-14-dev dbus-daemon"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done

if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi

echo "deps: installing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
