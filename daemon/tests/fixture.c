/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "util.h"

static int mkdir_p(char *path) {
        for (char *p = path + 1; *p; p++)
                if (*p == '/') {
                        *p = 0;
                        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        *p = '/';
                }
        return 0;
}

int fixture_write(const char *root, const char *rel, const char *content) {
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        if (mkdir_p(path) < 0)
                return -errno;
        f = fopen(path, "w");
        if (!f)
                return -errno;
        fputs(content, f);
        return fclose(f) == 0 ? 0 : -errno;
}

char *fixture_tmpdir(void) {
        char tmpl[] = "/tmp/coschedd-test.XXXXXX";
        return mkdtemp(tmpl) ? strdup(tmpl) : NULL;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(p);
}

void fixture_rm_rf(const char *dir) {
        if (dir && strncmp(dir, "/tmp/coschedd-test.", 19) == 0)
                nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int cpu_id(int pkgs, int cores, int threads, bool inter, int p, int c, int t) {
        if (inter)
                return t * pkgs * cores + p * cores + c;
        return (p * cores + c) * threads + t;
}

int fixture_machine(struct topo_input *in, int pkgs, int cores, int threads, bool inter) {
        char *smt = NULL, *pkg = NULL, *die = NULL, buf[64];
        int k = 0;

        *in = (struct topo_input) { .kernel = true };
        for (int p = 0; p < pkgs; p++) {
                char *line = NULL;
                for (int c = 0; c < cores; c++) {
                        char *core = NULL;
                        for (int t = 0; t < threads; t++) {
                                snprintf(buf, sizeof(buf), "%s%d", core ? "," : "", cpu_id(pkgs, cores, threads, inter, p, c, t));
                                strappendf(&core, "%s", buf);
                        }
                        {
                                struct cpuset s;
                                char fmt[4096];
                                cpuset_parse(core, &s);
                                strappendf(&smt, "%s\n", cpuset_format(&s, fmt, sizeof(fmt)));
                        }
                        strappendf(&line, "%s%s", line && *line ? "," : "", core);
                        free(core);
                }
                {
                        struct cpuset s;
                        char fmt[4096];
                        cpuset_parse(line, &s);
                        strappendf(&pkg, "%s\n", cpuset_format(&s, fmt, sizeof(fmt)));
                        strappendf(&die, "%s%s", die ? "," : "", fmt);
                }
                free(line);
        }
        {
                struct cpuset s;
                char fmt[4096];
                cpuset_parse(die, &s);
                free(die);
                die = NULL;
                strappendf(&die, "%s\n", cpuset_format(&s, fmt, sizeof(fmt)));
        }
        if (threads > 1) {
                in->names[k] = "smt";
                in->spans[k++] = strdup(smt);
        }
        in->names[k] = "mc";
        in->spans[k++] = strdup(pkg);
        if (pkgs > 1) {
                in->names[k] = "die";
                in->spans[k++] = strdup(die);
        }
        in->nlevels = k;
        in->max_level = k;
        in->smt_part = smt;
        in->pkg_part = pkg;
        in->llc_part = strdup(pkg);
        free(die);
        return 0;
}

void fixture_input_free(struct topo_input *in) {
        for (int k = 0; k < in->nlevels; k++)
                free((char *) in->spans[k]);
        free((char *) in->smt_part);
        free((char *) in->pkg_part);
        free((char *) in->llc_part);
        *in = (struct topo_input) {};
}
