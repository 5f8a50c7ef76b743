#!/bin/bash
# timeout: 480
# boot: cosched_max_level=3 cosched.levelhold=1
# coschedd and a real QEMU VM with 4 vCPUs (issue 11 points 2 and 3) in
# the level boot: with CPUs 0-1 reserved, no core holds 4 vCPUs and
# package 0 has only 2 CPUs left, so coschedd must place the VM at
# level 2 on package 1 (CPUs 4-7), coschedule its vcpus group there and
# pin the 4 "CPU N/TCG" threads one to one on the package's CPUs.  The VM
# is started with -smp 4,sockets=1,cores=2,threads=2: guest core k's two
# threads must land on the two siblings of one host core.  The turns at
# level 2 are set to 400 ms for TCG (why in 22-l2-gang).  What is started,
# measured and asserted is in daemon-vm.sh (56-daemon-vm: 2 vCPUs at
# level 1).
. "$(dirname "$0")/lib.sh"
test_init 58-daemon-vm-l2
VM_UNIT=vm58.service VM_SMP=4,sockets=1,cores=2,threads=2 VM_VCPUS=4 VM_THREADS=2 VM_LEVEL=2
. "$(dirname "$0")/daemon-vm.sh"
