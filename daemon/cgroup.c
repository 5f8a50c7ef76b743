/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "util.h"

static void cg_file(char *buf, size_t len, const char *root, const char *cg, const char *file) {
        snprintf(buf, len, "%s%s%s%s", root, cg, file ? "/" : "", file ? file : "");
}

bool cgroup_exists(const char *root, const char *cg) {
        char path[PATH_MAX];
        struct stat st;

        cg_file(path, sizeof(path), root, cg, NULL);
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_word(const char *text, const char *word) {
        size_t n = strlen(word);
        for (const char *p = text; (p = strstr(p, word)); p += n)
                if ((p == text || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
                        return true;
        return false;
}

/* One controller at a time: a combined write fails as a whole and would not
 * say which controller the parent lacks. */
static int enable_in(const char *root, const char *parent, const char *ctrl, char *err, size_t errlen) {
        char path[PATH_MAX], word[16], *cur = NULL;
        int r;

        cg_file(path, sizeof(path), root, parent, "cgroup.subtree_control");
        if (read_file_str(path, &cur) >= 0 && has_word(cur, ctrl)) {
                free(cur);
                return 0;
        }
        free(cur);
        snprintf(word, sizeof(word), "+%s", ctrl);
        r = write_file_str(path, word);
        if (r < 0)
                return errf(err, errlen, r, "enabling %s in %s: %s", ctrl, path, strerror(-r));
        return 0;
}

int cgroup_enable_controllers(const char *root, const char *cg, char *err, size_t errlen) {
        char parent[PATH_MAX];
        int r;

        /* Walk "/a/b/c": enable in "", "/a", "/a/b". */
        for (const char *p = cg; (p = strchr(p, '/')); p++) {
                snprintf(parent, sizeof(parent), "%.*s", (int) (p - cg), cg);
                if (p[1] == 0)
                        break;
                r = enable_in(root, parent, "cpuset", err, errlen);
                if (r < 0)
                        return r;
                r = enable_in(root, parent, "cpu", err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

int cgroup_set_cpus(const char *root, const char *cg, const struct cpuset *cpus) {
        char path[PATH_MAX], buf[CPUSET_MAX * 6];

        cg_file(path, sizeof(path), root, cg, "cpuset.cpus");
        if (!cpus)
                return write_file_str(path, "\n"); /* empty: use the parent's CPUs */
        cpuset_format(cpus, buf, sizeof(buf) - 1);
        strcat(buf, "\n");
        return write_file_str(path, buf);
}

int cgroup_set_cpus_of_parent(const char *root, const char *cg) {
        const char *slash = strrchr(cg, '/');
        char parent[PATH_MAX];
        struct cpuset cpus;
        int r;

        /* "/a/b" -> "/a", "/a" -> "" (the root) */
        snprintf(parent, sizeof(parent), "%.*s", slash ? (int) (slash - cg) : 0, cg);
        r = cgroup_get_cpus(root, parent, &cpus, true);
        if (r < 0)
                return r;
        return cgroup_set_cpus(root, cg, &cpus);
}

int cgroup_get_cpus(const char *root, const char *cg, struct cpuset *ret, bool effective) {
        char path[PATH_MAX], *v = NULL;
        int r;

        cg_file(path, sizeof(path), root, cg, effective ? "cpuset.cpus.effective" : "cpuset.cpus");
        r = read_file_str(path, &v);
        if (r < 0)
                return r;
        r = cpuset_parse(v, ret);
        free(v);
        return r;
}

bool cgroup_effective_differs(const char *root, const char *cg, const struct cpuset *cpus, struct cpuset *ret) {
        return cgroup_get_cpus(root, cg, ret, true) == 0 && !cpuset_equal(ret, cpus);
}

int cgroup_set_scheduled(const char *root, const char *cg, int level) {
        char path[PATH_MAX], buf[16];

        cg_file(path, sizeof(path), root, cg, "cpu.scheduled");
        snprintf(buf, sizeof(buf), "%d\n", level);
        return write_file_str(path, buf);
}

int cgroup_get_scheduled(const char *root, const char *cg, int *level) {
        char path[PATH_MAX], *v = NULL;
        int r;

        cg_file(path, sizeof(path), root, cg, "cpu.scheduled");
        r = read_file_str(path, &v);
        if (r < 0)
                return r;
        r = safe_atoi(v, level);
        free(v);
        return r;
}
