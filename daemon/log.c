/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "log.h"

static bool to_journal;
static int max_level = LOG_INFO;

/* stderr is the journal if its device:inode is what JOURNAL_STREAM says. */
void log_init(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
            (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino)
                to_journal = true;
        if (getenv("COSCHEDD_DEBUG"))
                max_level = LOG_DEBUG;
}

void log_set_max_level(int level) {
        max_level = level;
}

/* Both entry points filter by level and format the same way. */
static bool log_vformat(char *msg, size_t size, int prio, const char *fmt, va_list ap) {
        if (prio > max_level)
                return false;
        vsnprintf(msg, size, fmt, ap);
        return true;
}

void log_full(int prio, const char *group, const char *fmt, ...) {
        char msg[2048];
        va_list ap;
        bool wanted;

        va_start(ap, fmt);
        wanted = log_vformat(msg, sizeof(msg), prio, fmt, ap);
        va_end(ap);
        if (!wanted)
                return;
        if (to_journal) {
                if (group)
                        sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio, "COSCHED_GROUP=%s", group,
                                        "SYSLOG_IDENTIFIER=coschedd", NULL);
                else
                        sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio, "SYSLOG_IDENTIFIER=coschedd", NULL);
                return;
        }
        if (group)
                fprintf(stderr, "coschedd: [%s] %s\n", group, msg);
        else
                fprintf(stderr, "coschedd: %s\n", msg);
}

void log_transition_fields(int prio, const char *group, const char *state, const char *cpus, const char *fmt, ...) {
        char msg[2048];
        va_list ap;
        bool wanted;

        va_start(ap, fmt);
        wanted = log_vformat(msg, sizeof(msg), prio, fmt, ap);
        va_end(ap);
        if (!wanted)
                return;
        if (!to_journal) {
                fprintf(stderr, "coschedd: [%s] %s\n", group, msg);
                return;
        }
        sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio, "COSCHED_GROUP=%s", group, "COSCHED_STATE=%s", state,
                        "COSCHED_CPUS=%s", cpus, "SYSLOG_IDENTIFIER=coschedd", NULL);
}
