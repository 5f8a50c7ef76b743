/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cpuset.h"
#include "placement.h"
#include "strindex.h"

#define CONFIG_MAX_LINE 4000    /* longer lines are errors, not silently split */
#define GROUP_NAME_MAX 64

enum group_kind {
        KIND_NONE,
        KIND_SLICE,     /* Slice=   a systemd slice */
        KIND_UNIT,      /* Unit=    a systemd service or scope */
        KIND_CGROUP,    /* CgroupPath= a raw cgroup, relative to the cgroup2 root */
};

enum rounding {
        ROUND_UP,       /* CPUs= not a multiple of the span size: round up */
        ROUND_DOWN,
        ROUND_ERROR,
};

struct where {
        const char *file;       /* owned by config->files */
        int line;
};

struct group_config {
        char *name;
        struct where at;        /* the section header */
        enum group_kind kind;
        struct where kind_at;
        char *target;
        char *level;            /* as written: "core", "2", ... */
        struct where level_at;
        unsigned cpus, spans;
        struct where size_at;
        bool has_allowed;
        struct cpuset allowed;
        struct where allowed_at;
        enum placement_pref pref;
        bool has_pref;
        int priority;
        bool has_priority;
        bool kind_seen, level_seen, size_seen; /* set, even if to a bad value */
        char *error;            /* set: the group cannot be placed, this says why (a unit's
                                 * [X-Cosched] with errors: its first "file:line: message") */
};

enum vm_pin {
        VM_PIN_CORES,           /* one vCPU per core of the span before any sibling (default) */
        VM_PIN_SIBLINGS,        /* fill each core's siblings first */
        VM_PIN_NO,              /* no per-thread pins: the vcpus cgroup's cpuset only */
};

/* [vms]: QEMU VMs under machine.slice (vm.c). */
struct vm_policy {
        bool enable;            /* default yes */
        char *level;            /* NULL: auto, the smallest level whose span holds the vCPUs */
        enum placement_pref pref;
        enum vm_pin pin;
};

struct daemon_config {
        struct cpuset reserved;
        enum rounding rounding;
        bool repack;
        unsigned reconcile_sec;
        struct vm_policy vms;
};

struct config {
        struct daemon_config daemon;
        struct group_config *groups;
        size_t ngroups, groups_cap;
        struct strindex by_name;        /* group name -> index in groups */
        char **files;
        size_t nfiles;
};

/* Every error, as "file:line: message". nomem: an allocation failed, so
 * the config is incomplete even if no message could be recorded. */
struct config_errors {
        char **msgs;
        size_t n;
        bool nomem;
};

/* config_load flags: paths named on the command line must be there. */
#define CONFIG_MAIN_REQUIRED 1u
#define CONFIG_DIR_REQUIRED 2u

/* Record "file:line: message" (line 0: "file: message"). */
void config_error_add(struct config_errors *e, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

void config_init(struct config *c);
void config_free(struct config *c);
void config_errors_free(struct config_errors *e);

/* Parse one INI text into c, recording errors. */
void config_parse_string(struct config *c, const char *text, const char *filename, struct config_errors *e);
/* A systemd unit's [X-Cosched] section in one of its files (text read
 * from filename), into c as the group named unit, whose target is the
 * unit itself. Call it for the fragment, then each drop-in in systemd's
 * order: a later file overrides the keys it sets (CPUs= and Spans= are
 * one key), and an empty value (Level=) resets a key. Other sections, and
 * their lines, are systemd's and not looked at. Returns true if the text
 * has an [X-Cosched] section. */
bool config_parse_unit_file(struct config *c, const char *unit, const char *text, const char *filename,
                            struct config_errors *e);
/* Checks across sections and files, after everything is parsed. */
void config_finish(struct config *c, struct config_errors *e);
/* main_path plus the *.conf files of dropin_dir in name order (dropin_dir NULL: none).
 * A missing main file or directory is empty unless flags require it.
 * Returns 0 if valid, -ENOMEM if an allocation failed, -EINVAL if e holds
 * errors: never a partial config. */
int config_load(const char *main_path, const char *dropin_dir, unsigned flags, struct config *c,
                struct config_errors *e);
/* An "out of memory" line if e->nomem and no message says so already. */
void config_errors_note_nomem(struct config_errors *e);
const struct group_config *config_find_group(const struct config *c, const char *name);

void config_dump(const struct config *c, FILE *f);

const char *group_kind_to_string(enum group_kind k);
enum group_kind group_kind_from_string(const char *s);
const char *rounding_to_string(enum rounding r);
const char *vm_pin_to_string(enum vm_pin p);

/* Turn a group into a placement request on topology t (level names, size
 * rounding). Sets req->error (pointing into errbuf) when it cannot. note
 * gets what was rounded ("CPUs=3 rounded up to 4 ..."), "" if nothing. */
void config_group_to_request(const struct config *c, const struct group_config *g, const struct topology *t,
                             struct placement_request *req, char *errbuf, size_t errlen, char *note,
                             size_t notelen);
