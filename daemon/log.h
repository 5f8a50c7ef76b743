/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <syslog.h>

/*
 * Logging to the journal with structured fields when stderr is the journal
 * (JOURNAL_STREAM, as under systemd), else plain lines on stderr (tests,
 * a terminal). group may be NULL; it becomes COSCHED_GROUP=.
 */
void log_init(void);
void log_set_max_level(int level);
void log_full(int prio, const char *group, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A group's state change, with COSCHED_STATE= and COSCHED_CPUS= too, so
 * that "journalctl COSCHED_STATE=pending" finds them. */
void log_transition_fields(int prio, const char *group, const char *state, const char *cpus, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

#define log_error(...) log_full(LOG_ERR, NULL, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, NULL, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, NULL, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, NULL, __VA_ARGS__)
#define log_group(prio, g, ...) log_full(prio, g, __VA_ARGS__)
