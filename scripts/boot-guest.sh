#!/bin/bash
# Boot a kernel + the project image in QEMU (TCG with an SMT topology).
#
#   boot-guest.sh MODE KERNEL_FLAVOUR RUNDIR [EXTRA KERNEL ARGS...]
#
# MODE shell: serial console on this terminal, log in as root.
# MODE demo:  run the scripted demonstration, print it, power off.
# MODE test:  run the guest tests named by cosched.tests= (in the extra
#             args); console to RUNDIR/console.log.  Inputs and results
#             travel as a tar archive on a second virtio disk (io.img,
#             serial cosched-io), unpacked into RUNDIR afterwards.  A host
#             watchdog kills a guest that does not come up within
#             BOOT_TIMEOUT or does not finish within TIMEOUT.
set -euo pipefail

MODE=${1:?usage: boot-guest.sh shell|demo|test stock|patched RUNDIR [ARGS...]}
FLAVOUR=${2:?flavour}
RUNDIR=${3:?rundir}
shift 3
CACHE=${COSCHED_CACHE:-$HOME/.cache/cosched}
KERNEL=$CACHE/out/$FLAVOUR/bzImage
IMAGE=$CACHE/out/rootfs.img
ACCEL=${ACCEL:-tcg}
SMP=${SMP:-8,sockets=2,cores=2,threads=2}
MEM=${MEM:-1G}
TIMEOUT=${TIMEOUT:-900}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-480}

[ -r "$KERNEL" ] || { echo "boot: no $FLAVOUR kernel: run 'make kernel'" >&2; exit 1; }
[ -r "$IMAGE" ] || { echo "boot: no image: run 'make image'" >&2; exit 1; }
mkdir -p "$RUNDIR"
# What the guest's smoke test compares uname against, on the io disk.
cp "$CACHE/out/$FLAVOUR/release" "$RUNDIR/expect-release"
cp "$CACHE/out/$FLAVOUR/version" "$RUNDIR/expect-version"
tar -cf "$RUNDIR/io.img" -C "$RUNDIR" expect-release expect-version
truncate -s 64M "$RUNDIR/io.img"

case $ACCEL in
tcg) accel=(-accel tcg,thread=multi -cpu Skylake-Client) ;;
kvm) accel=(-accel kvm -cpu host) ;;
*) echo "boot: ACCEL must be tcg or kvm" >&2; exit 1 ;;
esac

# mitigations=off: a throwaway guest, and TCG runs faster without them.
cmdline="root=/dev/vda rw console=ttyS0 tsc=reliable loglevel=5 panic=-1 mitigations=off"
cmdline+=" cosched_max_level=${COSCHED_MAX_LEVEL:-1} cosched.mode=$MODE cosched.flavour=$FLAVOUR $*"

qemu=(qemu-system-x86_64 "${accel[@]}" -smp "$SMP" -m "$MEM"
	-kernel "$KERNEL" -append "$cmdline"
	-drive "file=$IMAGE,if=none,format=raw,snapshot=on,id=root"
	-device virtio-blk-pci,drive=root,addr=0x8
	-drive "file=$RUNDIR/io.img,if=none,format=raw,id=io"
	-device virtio-blk-pci,drive=io,serial=cosched-io,addr=0x9
	-device pvpanic -action panic=exit-failure
	-no-reboot -display none -monitor none)

case $MODE in
shell|demo)
	echo "boot: $FLAVOUR kernel $(cat "$CACHE/out/$FLAVOUR/release"), console log in $RUNDIR/console.log"
	[ "$MODE" = shell ] && echo "boot: log in as root (no password); 'poweroff' to leave, Ctrl-a x to kill"
	if [ "$MODE" = shell ]; then
		exec "${qemu[@]}" -serial mon:stdio
	fi
	"${qemu[@]}" -serial stdio </dev/null 2>&1 | tee "$RUNDIR/console.log"
	;;
test)
	"${qemu[@]}" -serial "file:$RUNDIR/console.log" </dev/null >"$RUNDIR/qemu.log" 2>&1 &
	pid=$!
	start=$(date +%s)
	verdict=ok
	# QEMU's CPU time every 10 s (seconds since start, user and system
	# clock ticks of all its vCPU threads): how busy the host was, test
	# by test, next to the console's "at N s up" lines.
	tick=$(getconf CLK_TCK)
	echo "# seconds utime stime (ticks of 1/$tick s)" > "$RUNDIR/qemu-cpu"
	sample=0
	while kill -0 $pid 2>/dev/null; do
		now=$(($(date +%s) - start))
		if [ "$now" -ge $sample ] && read -r -a st < /proc/$pid/stat 2>/dev/null; then
			# (fields 14 and 15; the name in field 2 has no blanks)
			echo "$now ${st[13]} ${st[14]}" >> "$RUNDIR/qemu-cpu"
			sample=$((now + 10))
		fi
		# Not anchored: the serial console's root shell prompt can
		# land on the same line first (a healthy guest was killed
		# so, at 480 s, in the middle of its tests).
		if [ $now -gt "$BOOT_TIMEOUT" ] &&
		   ! grep -aq 'cosched: guest runner started' "$RUNDIR/console.log" 2>/dev/null; then
			verdict="guest did not come up within $BOOT_TIMEOUT s"
		elif [ $now -gt "$TIMEOUT" ]; then
			verdict="guest did not finish within $TIMEOUT s"
		fi
		if [ "$verdict" != ok ]; then
			kill $pid 2>/dev/null; sleep 1; kill -9 $pid 2>/dev/null || true
			break
		fi
		sleep 1
	done
	wait $pid 2>/dev/null && rc=0 || rc=$?
	echo "$(($(date +%s) - start))" > "$RUNDIR/seconds"
	tar -xf "$RUNDIR/io.img" -C "$RUNDIR" 2>/dev/null || true
	if [ "$verdict" != ok ]; then
		echo "$verdict" > "$RUNDIR/error"; exit 1
	fi
	if [ ! -e "$RUNDIR/done" ]; then
		echo "guest stopped before finishing (qemu exit $rc)" > "$RUNDIR/error"; exit 1
	fi
	;;
*) echo "boot: unknown mode $MODE" >&2; exit 1 ;;
esac
