/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for QEMU's threads, for test-vms.sh on the host's real
 * /proc: run it as "qemu-system-x86_64 ... -smp N ..." (a symlink of that
 * name) and it starts N threads named "CPU i/TCG", as QEMU does with
 * -name ...,debug-threads=on, that sleep until the process is killed. It
 * prints "ready" once they are all named. Nothing spins: coschedd pins
 * these threads of the host with sched_setaffinity, and the test reads
 * the pins back.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static pthread_barrier_t named;

static void *vcpu(void *arg) {
        char name[16];

        snprintf(name, sizeof(name), "CPU %d/TCG", (int) (long) arg);
        prctl(PR_SET_NAME, name);
        pthread_barrier_wait(&named);
        for (;;)
                pause();
        return NULL;
}

int main(int argc, char **argv) {
        int n = 1;
        pthread_t t;

        for (int i = 1; i + 1 < argc; i++)
                if (!strcmp(argv[i], "-smp"))
                        n = atoi(argv[i + 1]);
        if (n < 1 || n > 64) {
                fprintf(stderr, "fake-qemu: -smp 1..64\n");
                return 1;
        }
        pthread_barrier_init(&named, NULL, n + 1);
        for (long i = 0; i < n; i++)
                if (pthread_create(&t, NULL, vcpu, (void *) i)) {
                        perror("fake-qemu: pthread_create");
                        return 1;
                }
        pthread_barrier_wait(&named);
        printf("ready\n");
        fflush(stdout);
        for (;;)
                pause();
}
