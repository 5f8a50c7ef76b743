/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Out of memory while loading a config must fail the load, never yield a
 * smaller config that looks valid. This binary replaces malloc, calloc and
 * realloc (glibc lets a program do that, and its own strdup, asprintf,
 * opendir and libinih then allocate through them) so that the Nth
 * allocation fails; it loads the same config with N = 1, 2, ... until a
 * load makes fewer than N allocations, and each load must either fail
 * saying "out of memory" or produce exactly the full config.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fixture.h"
#include "test.h"
#include "util.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static bool armed;
static long countdown;  /* allocations left before the one that fails */
static long made;       /* allocations while armed */

/* Like a real failed malloc: NULL with errno ENOMEM. */
static bool fail_now(void) {
        if (!armed)
                return false;
        made++;
        if (countdown-- != 0)
                return false;
        errno = ENOMEM;
        return true;
}

void *malloc(size_t n) {
        return fail_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
        return fail_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n) {
        return fail_now() ? NULL : __libc_realloc(p, n);
}

static char *dump(const struct config *c) {
        char *text = NULL;
        size_t len;
        FILE *f = open_memstream(&text, &len);

        if (!f)
                return NULL;
        config_dump(c, f);
        fclose(f);
        return text;
}

static bool says_nomem(const struct config_errors *e) {
        for (size_t i = 0; i < e->n; i++)
                if (strstr(e->msgs[i], "out of memory") || strstr(e->msgs[i], "Cannot allocate memory"))
                        return true;
        return false;
}

/* Load with the nth allocation failing (n < 0: none). *made_ret: how many
 * allocations the load made. Returns the dump if the load succeeded. */
static int load_failing(const char *main_path, const char *dir, long n, struct config *c, struct config_errors *e,
                        long *made_ret) {
        int r;

        made = 0;
        countdown = n;
        armed = true; /* n < 0: counts, never fails */
        r = config_load(main_path, dir, CONFIG_MAIN_REQUIRED | CONFIG_DIR_REQUIRED, c, e);
        armed = false;
        *made_ret = made;
        return r;
}

static void test_oom(const char *root) {
        char main_path[512], dir[512], *full, *detail = NULL;
        struct config c;
        struct config_errors e = {};
        long n, total = 0, failed = 0, same = 0;

        snprintf(main_path, sizeof(main_path), "%s/coschedd.conf", root);
        snprintf(dir, sizeof(dir), "%s/conf.d", root);
        if (load_failing(main_path, dir, -1, &c, &e, &total) < 0) {
                test_report("config/oom-fails-the-load", "the fixture config does not load");
                return;
        }
        full = dump(&c);
        config_errors_free(&e);
        config_free(&c);
        for (n = 0; !detail; n++) {
                long m;
                int r = load_failing(main_path, dir, n, &c, &e, &m);
                char *got = r == 0 ? dump(&c) : NULL;

                if (m <= n) {
                        if (r < 0 || !got || strcmp(got, full))
                                strappendf(&detail, "no allocation failed (N=%ld), yet the load differs", n);
                        free(got);
                        config_errors_free(&e);
                        config_free(&c);
                        break;
                }
                if (r == 0 && got && !strcmp(got, full))
                        same++; /* that allocation had a fallback (qsort's buffer) */
                else if (r == 0)
                        strappendf(&detail, "allocation %ld failed and the load \"succeeded\" with %zu groups", n,
                                   c.ngroups);
                else if (r != -ENOMEM || !says_nomem(&e))
                        strappendf(&detail, "allocation %ld failed: returned %d with %zu errors, none about memory%s%s",
                                   n, r, e.n, e.n ? ": " : "", e.n ? e.msgs[0] : "");
                else
                        failed++;
                free(got);
                config_errors_free(&e);
                config_free(&c);
        }
        free(full);
        if (!detail && failed == 0)
                strappendf(&detail, "no load failed: the injection hook is not working");
        if (!detail)
                printf("# %ld allocations per load: %ld failed loads, %ld unaffected\n", total, failed, same);
        test_report("config/oom-fails-the-load", detail);
        free(detail);
}

int main(void) {
        char *root = fixture_tmpdir();

        fixture_write(root, "coschedd.conf",
                      "[daemon]\nReservedCPUs=0\nRepack=yes\n"
                      "[db]\nSlice=db.slice\nLevel=core\nSpans=2\nPriority=3\n"
                      "[web]\nUnit=web.service\nLevel=package\nCPUs=4\nAllowedCPUs=0-7\n");
        fixture_write(root, "conf.d/10-batch.conf", "[batch]\nCgroupPath=/batch/jobs\nLevel=1\nSpans=1\n");
        fixture_write(root, "conf.d/20-vm.conf", "[vm]\nSlice=machine-vm.slice\nLevel=llc\nCPUs=2\nPlacement=spread\n");
        test_oom(root);
        fixture_rm_rf(root);
        free(root);
        return test_failures ? 1 : 0;
}
