# vmspin: the smallest VM payload whose every vCPU is busy, for the guest
# test of coschedd's VM handling (56-daemon-vm).  A multiboot (v1) ELF
# that QEMU boots with -kernel: the boot CPU wakes the others with
# INIT-SIPI-SIPI (they sit halted in wait-for-SIPI otherwise, and a halted
# TCG vCPU thread sleeps) into a real-mode "jmp ." at 0x8000, then spins
# itself.  No firmware or kernel boot to wait for under nested TCG.
	.code32
	.section .text
	.globl _start
	.align 4
mb_header:
	.long 0x1BADB002		# multiboot magic
	.long 0				# flags: ELF, no memory map wanted
	.long -0x1BADB002		# checksum
_start:
	cli
	movw $0xFEEB, 0x8000		# EB FE: jmp . (the APs' trampoline)
	orl $0x100, 0xFEE000F0		# local APIC software-enabled
	movl $0x000C4500, 0xFEE00300	# INIT, all excluding self
	movl $100000, %ecx
1:	loop 1b
	movl $0x000C4608, 0xFEE00300	# SIPI, vector 0x08: CS:IP 0800:0000
	movl $100000, %ecx
2:	loop 2b
	movl $0x000C4608, 0xFEE00300	# the second SIPI, as the MP spec says
spin:
	jmp spin
