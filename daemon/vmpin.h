/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The pure half of VM handling (no I/O): what a QEMU command line says
 * about its vCPUs, and which host CPU each vCPU thread is pinned to.
 * vm.c does the reading and the writing.
 */

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "cpuset.h"
#include "topology.h"

struct vm_cmdline {
        bool qemu;              /* argv[0]'s name starts with qemu-system- */
        bool debug_threads;     /* -name ...,debug-threads=on: vCPU threads are named "CPU N/ACCEL" */
        int cpus;               /* -smp: vCPUs at start (1 without -smp) */
        int threads;            /* -smp threads= per guest core (1 if not said) */
        char name[64];          /* -name's guest name, "" if none */
};

/* /proc/PID/cmdline: len bytes of NUL-terminated arguments. Returns 0, or
 * -EINVAL if -smp cannot be read (then the VM is left alone). */
int vm_parse_cmdline(const char *buf, size_t len, struct vm_cmdline *ret);
/* A thread's comm "CPU 3/TCG" or "CPU 3/KVM": its vCPU index, else -1. */
int vm_vcpu_index(const char *comm);
/* The smallest level (1..max_level) whose spans hold n CPUs, or -1. */
int vm_auto_level(const struct topology *t, int n);
/* cpu[i] for vCPU i on span CPUs cpus (of the placement). Guest SMT
 * siblings (threads > 1) go onto one host core's siblings; otherwise
 * VM_PIN_CORES gives each core of the span one vCPU before any core gets a
 * second (vCPUs are not packed onto siblings while cores of the span idle),
 * VM_PIN_SIBLINGS fills a core's siblings first. Cores are the topology's
 * SMT level (single CPUs without one). Returns 0, -ENOSPC if cpus has fewer
 * CPUs than vCPUs, -EINVAL for VM_PIN_NO. */
int vm_pin_plan(const struct topology *t, const struct cpuset *cpus, int nvcpus, int threads, enum vm_pin pin,
                int *cpu);
/* The pins a placed VM group's reason names ("pinned vCPU:CPU 0:2 1:3"),
 * for coschedctl verify: cpu[i] for vCPU i, -1 where none is named.
 * Returns how many vCPUs (highest index + 1, at most n), 0 if none. */
int vm_parse_pins(const char *reason, int *cpu, int n);
