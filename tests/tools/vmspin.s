# vmspin: the smallest VM payload whose every vCPU is busy and records what
# it executed, for the guest tests of coschedd's VM handling (56-daemon-vm,
# 58-daemon-vm-l2).  A multiboot (v1) ELF that QEMU boots with -kernel: no
# firmware or kernel boot to wait for under nested TCG.  The boot CPU loads
# a flat GDT, copies the APs' trampoline to 0x8000 and wakes them with
# INIT-SIPI-SIPI (they sit halted in wait-for-SIPI otherwise, and a halted
# TCG vCPU thread sleeps); the trampoline switches them to 32-bit
# protected mode.  Then every vCPU runs the same loop, identified by its
# local APIC id (bits 31-24 of the APIC's ID register at 0xFEE00020):
#
#   loop: count down from SPIN; rdtsc; publish it as "now" (a seqlock);
#         if it is at least GAP ticks after the previous read, the vCPU
#         did not execute in between: record (previous, now) in its ring.
#
# The countdown: QEMU's TCG reads the TSC for rdtsc (cpu_get_ticks())
# under a spinlock that all vCPU threads of the VM share (and the outer
# TCG guest's own rdtsc, under its QEMU's), so a vCPU thread stopped
# while it holds it stalls the others' next rdtsc: they record a gap
# they spent spinning inside QEMU.  Plain code between two reads keeps
# the lock mostly free.
#
# Guest-physical layout (with QEMU's -object memory-backend-file,share=on
# the RAM file's offset is the guest-physical address; tests/tools/vmrun
# reads it):
#   0x8000                  the APs' real-mode trampoline
#   0x200000 + 64 * id      header of the vCPU with APIC id id (0-7):
#     +0  u32 magic "VMSP" (0x50534D56), written last at its start
#     +4  u32 its APIC id
#     +8  u32 seq: +2 per loop; odd while "now" is being written, so a
#             reader that sees the same even seq before and after reading
#             "now" has a consistent value (a seqlock)
#     +12 u32 n: records written so far; record i is in slot i % NREC
#     +16 u64 now: the TSC of the latest loop
#     +24 u64 start: the TSC of its first loop
#     +32 u32 the guest-physical address of its ring
#   0x400000 + 0x200000 * id  its ring: NREC records of 16 bytes, each a
#             gap as two u64 TSC values (the last read before, the first
#             read after); a record is complete before n counts it
# A vCPU with an APIC id above 7 spins without recording.
#
# GAP is 0x10000 ticks: 25 us at the 2.6 GHz TSC of the machines this
# runs on (the nested guest's TSC is QEMU's cpu_get_ticks(): the outer
# guest's TSC plus an offset, and the outer guest's is the host's),
# below the 50 us that vmrun (like corun) takes as "did not run" by
# default and well above one loop (45 ns on the host's TCG, 0.5 us
# nested, vmrun's loop_ns), so vmrun can apply any threshold from 25 us
# up; a full ring of 131072 records is more than 10 s of a gap at every
# 1 ms tick and every turn.
	.set TRAMP,	0x8000		# SIPI vector 0x08: CS:IP 0800:0000
	.set HDR,	0x200000	# headers, 64 bytes per APIC id
	.set RING,	0x400000	# rings, RING_SZ per APIC id
	.set RING_SZ,	0x200000
	.set NREC,	131072		# records per ring (RING_SZ / 16)
	.set MAXID,	8		# APIC ids 0-7 record
	.set GAP,	0x10000		# TSC ticks
	.set SPIN,	8		# countdown between two rdtsc
	.set MAGIC,	0x50534D56	# "VMSP"
	.set H_MAGIC,	0
	.set H_ID,	4
	.set H_SEQ,	8
	.set H_N,	12
	.set H_NOW,	16
	.set H_START,	24
	.set H_RING,	32
	.set CODE,	0x08		# GDT selectors
	.set DATA,	0x10

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
	lgdt gdtr			# our own flat GDT (the loader's may go away)
	ljmp $CODE, $1f
1:	movl $DATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	movl %eax, %fs
	movl %eax, %gs
	movl $tramp, %esi		# the APs' trampoline to 0x8000
	movl $TRAMP, %edi
	movl $(tramp_end - tramp), %ecx
	cld
	rep movsb
	orl $0x100, 0xFEE000F0		# local APIC software-enabled
	movl $0x000C4500, 0xFEE00300	# INIT, all excluding self
	movl $100000, %ecx
2:	loop 2b
	movl $0x000C4608, 0xFEE00300	# SIPI, vector 0x08: CS:IP 0800:0000
	movl $100000, %ecx
3:	loop 3b
	movl $0x000C4608, 0xFEE00300	# the second SIPI, as the MP spec says
	jmp vcpu

# The APs start here in real mode, at 0x8000 (CS 0x0800): load the GDT
# (its descriptor copied along), set CR0.PE, far jump into 32-bit code.
	.code16
tramp:
	cli
	lgdtl %cs:(tramp_gdtr - tramp)
	movl %cr0, %eax
	orl $1, %eax
	movl %eax, %cr0
	ljmpl $CODE, $ap32
	.align 4
tramp_gdtr:
	.word gdt_end - gdt - 1
	.long gdt
tramp_end:
	.code32

ap32:
	movl $DATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	movl %eax, %fs
	movl %eax, %gs

# Every vCPU: esi its header, ecx:ebx the previous TSC read.
vcpu:
	movl 0xFEE00020, %ebx		# local APIC ID register
	shrl $24, %ebx
	cmpl $MAXID, %ebx
	jae spin
	movl %ebx, %esi
	shll $6, %esi
	addl $HDR, %esi
	movl %ebx, H_ID(%esi)
	movl $0, H_SEQ(%esi)
	movl $0, H_N(%esi)
	shll $21, %ebx			# id * RING_SZ
	addl $RING, %ebx
	movl %ebx, H_RING(%esi)
	rdtsc
	movl %eax, H_START(%esi)
	movl %edx, H_START+4(%esi)
	movl %eax, H_NOW(%esi)
	movl %edx, H_NOW+4(%esi)
	movl %eax, %ebx
	movl %edx, %ecx
	movl $MAGIC, H_MAGIC(%esi)
loop:
	movl $SPIN, %ebp
1:	decl %ebp
	jnz 1b
	rdtsc
	incl H_SEQ(%esi)		# odd: now being written
	movl %eax, H_NOW(%esi)
	movl %edx, H_NOW+4(%esi)
	incl H_SEQ(%esi)		# even: now consistent
	movl %eax, %ebp			# edi:ebp = now - previous
	subl %ebx, %ebp
	movl %edx, %edi
	sbbl %ecx, %edi
	jnz gap				# 2^32 ticks or more (or backwards)
	cmpl $GAP, %ebp
	jae gap
next:
	movl %eax, %ebx
	movl %edx, %ecx
	jmp loop
gap:					# ring[n % NREC] = (previous, now); n++
	movl H_N(%esi), %ebp
	andl $(NREC - 1), %ebp
	shll $4, %ebp
	addl H_RING(%esi), %ebp
	movl %ebx, 0(%ebp)
	movl %ecx, 4(%ebp)
	movl %eax, 8(%ebp)
	movl %edx, 12(%ebp)
	incl H_N(%esi)
	jmp next

spin:
	jmp spin

	.align 8
gdt:
	.quad 0
	.quad 0x00CF9A000000FFFF	# 0x08: code, flat 4 GiB, 32-bit
	.quad 0x00CF92000000FFFF	# 0x10: data, flat 4 GiB
gdt_end:
gdtr:
	.word gdt_end - gdt - 1
	.long gdt
