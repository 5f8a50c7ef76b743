#!/bin/bash
# timeout: 420
# coschedd and a real QEMU VM with 2 vCPUs (issue 11 points 2 and 3), in
# the default boot: coschedd places it at level 1, the smallest level
# whose span holds 2 vCPUs, on one SMT core, and pins the two "CPU N/TCG"
# threads one to one on the core's siblings.  What is started, measured
# and asserted is in daemon-vm.sh; 58-daemon-vm-l2 runs the same with 4
# vCPUs at level 2.
. "$(dirname "$0")/lib.sh"
test_init 56-daemon-vm
VM_UNIT=vm56.service VM_SMP=2 VM_VCPUS=2 VM_THREADS=1 VM_LEVEL=1
. "$(dirname "$0")/daemon-vm.sh"
