#!/bin/sh
# make install into a staging root: the unit, its preset, and no
# multi-user.target.wants/ symlink of our own, so that "systemctl disable
# coschedd" works. systemctl --root acts on the staging root only.
cd "$(dirname "$0")/.." || exit 1
T=$(mktemp -d /tmp/coschedd-install.XXXXXX)
trap '[ -n "$KEEP" ] || rm -rf "$T"' EXIT
fail=0
pass() { echo "PASS daemon/$1"; }
failt() { echo "FAIL daemon/$1: $2"; fail=1; }

if ! make -s install DESTDIR=$T prefix=/usr >$T/make.log 2>&1; then
        failt install "make install failed: $(tail -2 $T/make.log | tr '\n' '|')"
        exit 1
fi
U=$T/usr/lib/systemd/system
wants=$(find $T -path '*.wants*' -o -path '*.requires*' | tr '\n' ' ')
if [ -z "$wants" ]; then pass install-no-wants-symlink; else failt install-no-wants-symlink "$wants"; fi
if [ "$(grep -v '^#' $T/usr/lib/systemd/system-preset/80-coschedd.preset 2>/dev/null)" = "enable coschedd.service" ] &&
   sed -n '/^\[Install\]/,$p' $U/coschedd.service | grep -qx 'WantedBy=multi-user.target'; then
        pass install-preset-and-wantedby
else failt install-preset-and-wantedby "$(cat $T/usr/lib/systemd/system-preset/80-coschedd.preset 2>&1)"; fi

# The daemon's start and reload check the syntax only (coschedd.8).
if [ "$(grep -c '^Exec.*coschedd --check-config --syntax-only$' $U/coschedd.service)" = 2 ] &&
   [ -e $T/usr/share/man/man5/coschedd.unit.5 ]; then
        pass install-syntax-only-check
else failt install-syntax-only-check "$(grep Exec $U/coschedd.service | tr '\n' '|')"; fi

if ! command -v systemctl >/dev/null 2>&1; then
        failt install-preset-enable-disable "systemctl not installed"
        exit 1
fi
link=$T/etc/systemd/system/multi-user.target.wants/coschedd.service
systemctl --root=$T --quiet preset coschedd.service 2>$T/err
st1=$(systemctl --root=$T is-enabled coschedd.service 2>&1)
[ -L $link ] && l1=link || l1=none
systemctl --root=$T --quiet disable coschedd.service 2>>$T/err
st2=$(systemctl --root=$T is-enabled coschedd.service 2>&1)
[ -L $link ] && l2=link || l2=none
if [ "$st1 $l1 $st2 $l2" = "enabled link disabled none" ]; then pass install-preset-enable-disable
else failt install-preset-enable-disable "after preset: $st1 $l1; after disable: $st2 $l2; $(cat $T/err | tr '\n' '|')"; fi
exit $fail
