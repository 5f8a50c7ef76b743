/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "util.h"

#define STATE_MAGIC "# coschedd state 1"

/* Tabs and newlines separate fields and records; keep them out of values. */
static void put_field(FILE *f, const char *v) {
        fputc('\t', f);
        if (!v || !*v)
                v = "-";
        for (; *v; v++)
                fputc(*v == '\t' || *v == '\n' ? ' ' : *v, f);
}

static void put_entry(FILE *f, const struct state_entry *e) {
        char cpus[CPUSET_MAX * 6], lvl[16];

        fputs("group", f);
        put_field(f, e->name);
        put_field(f, group_kind_to_string(e->kind));
        put_field(f, e->target);
        snprintf(lvl, sizeof(lvl), "%d", e->level);
        put_field(f, lvl);
        put_field(f, e->level_name);
        put_field(f, group_state_to_string(e->state));
        put_field(f, cpuset_format(&e->cpus, cpus, sizeof(cpus)));
        put_field(f, e->cgroup);
        put_field(f, e->reason);
        fputc('\n', f);
        /* A line of its own: readers of the group lines stay as they were. */
        if (e->weight_ours) {
                fputs("weight-ours", f);
                put_field(f, e->name);
                fputc('\n', f);
        }
}

/* A memory stream, not repeated appends: those copy the whole text per
 * group, quadratic with 100 000 groups. */
int state_write(const char *dir, const struct state *s) {
        char path[PATH_MAX], cpus[CPUSET_MAX * 6];
        char *out = NULL;
        size_t len;
        FILE *f;
        int r;

        snprintf(path, sizeof(path), "%s/%s", dir, STATE_FILE);
        f = open_memstream(&out, &len);
        if (!f)
                return -ENOMEM;
        fprintf(f, "%s\n", STATE_MAGIC);
        fprintf(f, "reserved\t%s\n", cpuset_format(&s->reserved, cpus, sizeof(cpus)));
        for (size_t i = 0; i < s->n; i++)
                put_entry(f, &s->e[i]);
        r = ferror(f) ? -ENOMEM : 0;
        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r == 0)
                r = write_file_atomic(path, out);
        free(out);
        return r;
}

static void get_field(char *dst, size_t len, const char *v) {
        snprintf(dst, len, "%s", strcmp(v, "-") ? v : "");
}

static int parse_line(char *line, struct state_entry *e) {
        char *f[10], *save = NULL;
        int n = 0;

        for (char *t = strtok_r(line, "\t", &save); t && n < 10; t = strtok_r(NULL, "\t", &save))
                f[n++] = t;
        if (n != 10 || strcmp(f[0], "group"))
                return -EINVAL;
        *e = (struct state_entry) {};
        get_field(e->name, sizeof(e->name), f[1]);
        e->kind = group_kind_from_string(f[2]);
        get_field(e->target, sizeof(e->target), f[3]);
        if (safe_atoi(f[4], &e->level) < 0)
                return -EINVAL;
        get_field(e->level_name, sizeof(e->level_name), f[5]);
        if (!strcmp(f[6], "placed"))
                e->state = GROUP_PLACED;
        else if (!strcmp(f[6], "pending"))
                e->state = GROUP_PENDING;
        else if (!strcmp(f[6], "waiting"))
                e->state = GROUP_WAITING;
        else
                e->state = GROUP_ERROR;
        if (cpuset_parse(strcmp(f[7], "-") ? f[7] : "", &e->cpus) < 0)
                return -EINVAL;
        get_field(e->cgroup, sizeof(e->cgroup), f[8]);
        get_field(e->reason, sizeof(e->reason), f[9]);
        return 0;
}

/* Room for one more entry, doubling. */
static int reserve_entry(struct state *s, size_t *cap) {
        struct state_entry *n;
        size_t want = *cap ? *cap * 2 : 16;

        if (s->n < *cap)
                return 0;
        n = realloc(s->e, sizeof(*n) * want);
        if (!n)
                return -ENOMEM;
        s->e = n;
        *cap = want;
        return 0;
}

int state_read(const char *dir, struct state *s) {
        char path[PATH_MAX], *text = NULL, *save = NULL;
        size_t cap = 0;
        int r;

        *s = (struct state) {};
        snprintf(path, sizeof(path), "%s/%s", dir, STATE_FILE);
        r = read_file_str(path, &text);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (strncmp(text, STATE_MAGIC "\n", strlen(STATE_MAGIC) + 1)) {
                free(text);
                return -EINVAL; /* another version: start afresh rather than guess */
        }
        for (char *line = strtok_r(text + strlen(STATE_MAGIC) + 1, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct state_entry e;
                if (!strncmp(line, "reserved\t", 9)) {
                        (void) cpuset_parse(line + 9, &s->reserved);
                        continue;
                }
                if (!strncmp(line, "weight-ours\t", 12)) {
                        /* About the group line before it. */
                        if (s->n && !strcmp(s->e[s->n - 1].name, line + 12))
                                s->e[s->n - 1].weight_ours = true;
                        continue;
                }
                if (parse_line(line, &e) < 0)
                        continue;
                if (reserve_entry(s, &cap) < 0) {
                        free(text);
                        state_free(s);
                        return -ENOMEM;
                }
                s->e[s->n++] = e;
        }
        free(text);
        (void) state_index(s);
        return 0;
}

void state_free(struct state *s) {
        free(s->e);
        strindex_free(&s->by_name);
        *s = (struct state) {};
}

int state_index(struct state *s) {
        strindex_free(&s->by_name);
        for (size_t i = 0; i < s->n; i++)
                if (strindex_put(&s->by_name, s->e[i].name, i) < 0) {
                        strindex_free(&s->by_name);
                        return -ENOMEM;
                }
        return 0;
}

struct state_entry *state_find(const struct state *s, const char *name) {
        size_t i;

        if (s->by_name.n == s->n && s->n)
                return strindex_get(&s->by_name, name, &i) ? &s->e[i] : NULL;
        for (size_t i = 0; i < s->n; i++)
                if (!strcmp(s->e[i].name, name))
                        return &s->e[i];
        return NULL;
}
