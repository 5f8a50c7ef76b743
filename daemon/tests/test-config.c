/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Config edge cases: every error with its file:line, and what inih alone would accept. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fixture.h"
#include "test.h"
#include "util.h"

struct ccase {
        const char *name;
        const char *text;
        const char *errors; /* all errors, one per line; "" = valid */
};

#define GOOD "[db]\nSlice=db.slice\nLevel=core\nSpans=2\n"

static const struct ccase cases[] = {
        { "empty", "", "" },
        { "comments-only", "; a\n# b\n\n   \n", "" },
        { "one-group", GOOD, "" },
        { "all-keys",
          "[daemon]\nReservedCPUs=0-1\nRounding=down\nRepack=yes\nReconcileSec=5\n"
          "[web]\nUnit=nginx.service\nLevel=package\nCPUs=8\nAllowedCPUs=0-15\nPlacement=spread\nPriority=-3\n"
          "[batch]\nCgroupPath=/batch/jobs\nLevel=2\nSpans=1\n",
          "" },
        { "keys-case-insensitive", "[db]\nslice=db.slice\nlevel=core\nspans=2\n", "" },
        { "inline-semicolon-comment", "[db]\nSlice=db.slice ; the database\nLevel=core\nSpans=2\n", "" },
        { "crlf-and-bom", "\xEF\xBB\xBF[db]\r\nSlice=db.slice\r\nLevel=core\r\nSpans=2\r\n", "" },
        { "hash-after-value", "[db]\nSlice=db.slice\nLevel=core # the SMT level\nSpans=2\n",
          "t.conf:3: '#' in the value of Level=: comments after a value start with ';', or go on a line of their own" },
        { "repeated-section", GOOD "[db]\nSpans=3\n", "t.conf:5: group [db] is already defined at t.conf:1" },
        { "repeated-daemon", "[daemon]\nRepack=yes\n[daemon]\nRepack=no\n",
          "t.conf:3: section [daemon] repeated (first at line 1)" },
        { "repeated-key", "[db]\nSlice=db.slice\nLevel=core\nSpans=2\nLevel=package\n",
          "t.conf:5: Level= repeated (first at line 3)" },
        { "unknown-key", GOOD "Colour=blue\n", "t.conf:5: unknown key 'Colour' in a group section" },
        { "daemon-key-in-group", GOOD "Repack=yes\n", "t.conf:5: unknown key 'Repack' in a group section" },
        { "group-key-in-daemon", "[daemon]\nLevel=core\n", "t.conf:2: unknown key 'Level' in the [daemon] section" },
        { "key-outside-section", "Level=core\n" GOOD, "t.conf:1: Level= outside of a section" },
        { "colon-separator", "[db]\nSlice: db.slice\nLevel=core\nSpans=2\n", "t.conf:2: expected key=value\nt.conf:1: group [db] needs one of Unit=, Slice= or CgroupPath=" },
        { "no-equals", GOOD "justaword\n", "t.conf:5: expected key=value" },
        { "indented-is-not-continuation", "[db]\nSlice=db.slice\n  Level=core\nSpans=2\n", "" },
        { "header-with-comment", "[db] ; the database\nSlice=db.slice\nLevel=core\nSpans=2\n", "" },
        { "header-with-hash", "[db] # the database\nSlice=db.slice\n", "t.conf:1: malformed section header: expected [name]" },
        { "malformed-header", "[db\nSlice=db.slice\n", "t.conf:1: malformed section header: expected [name]" },
        { "bad-group-name", "[my db]\nSlice=db.slice\nLevel=core\nSpans=1\n",
          "t.conf:1: invalid group name 'my db' (1-64 characters of A-Z a-z 0-9 _ . @ : -)" },
        { "long-line", "[db]\nSlice=db.slice\nLevel=core\nSpans=2\n; LONG\n", "t.conf:5: line too long (4005 bytes, at most 4000)" },
        { "missing-everything", "[db]\n",
          "t.conf:1: group [db] needs one of Unit=, Slice= or CgroupPath=\nt.conf:1: group [db] needs Level=\n"
          "t.conf:1: group [db] needs CPUs= or Spans=" },
        { "two-targets", "[db]\nSlice=db.slice\nUnit=db.service\nLevel=core\nSpans=2\n",
          "t.conf:3: Unit= conflicts with Slice= at line 2: a group has one target" },
        { "two-sizes", "[db]\nSlice=db.slice\nLevel=core\nSpans=2\nCPUs=4\n",
          "t.conf:5: CPUs= conflicts with Spans= at line 4: give the size one way" },
        { "same-target", GOOD "[db2]\nSlice=db.slice\nLevel=core\nSpans=1\n",
          "t.conf:6: group [db2] has the same target 'db.slice' as group [db] at t.conf:2" },
        { "bad-values",
          "[db]\nSlice=db.service\nLevel=hyper\nSpans=0\nAllowedCPUs=3-1\nPlacement=random\nPriority=99999\n"
          "[x]\nUnit=x.slice\nLevel=1\nCPUs=lots\n[y]\nCgroupPath=relative/path\nLevel=1\nSpans=1\n"
          "[z]\nCgroupPath=/a/../b\nLevel=1\nSpans=1\n[daemon]\nReservedCPUs=x\nRounding=sideways\nRepack=maybe\nReconcileSec=0\n",
          "t.conf:2: Slice=db.service: not a slice unit name (NAME.slice, not -.slice)\n"
          "t.conf:3: Level=hyper: expected a level number (1-15) or one of core, smt, llc, cache, package, socket, cls, mc, die, numa\n"
          "t.conf:4: Spans=0: expected a number from 1 to 8192\n"
          "t.conf:5: AllowedCPUs=3-1: expected a non-empty CPU list such as 0-7,16\n"
          "t.conf:6: Placement=random: expected pack or spread\n"
          "t.conf:7: Priority=99999: expected a number from -1000 to 1000\n"
          "t.conf:9: Unit=x.slice: not a service or scope unit name (slices go in Slice=)\n"
          "t.conf:11: CPUs=lots: expected a number from 1 to 8192\n"
          "t.conf:13: CgroupPath=relative/path: not an absolute, normalized cgroup path below the root\n"
          "t.conf:17: CgroupPath=/a/../b: not an absolute, normalized cgroup path below the root\n"
          "t.conf:21: ReservedCPUs=x: expected a CPU list such as 0-1\n"
          "t.conf:22: Rounding=sideways: expected up, down or error\n"
          "t.conf:23: Repack=maybe: expected yes or no\n"
          "t.conf:24: ReconcileSec=0: expected seconds from 1 to 3600" },
        { "nested-cgroups", "[a]\nCgroupPath=/batch\nLevel=1\nSpans=1\n[b]\nCgroupPath=/batch/b\nLevel=1\nSpans=1\n"
          "[c]\nCgroupPath=/batchx\nLevel=1\nSpans=1\n",
          "t.conf:6: group [b] ('/batch/b') is inside group [a] ('/batch' at t.conf:2): coscheduled groups cannot nest" },
        { "nested-slices", "[a]\nSlice=db.slice\nLevel=1\nSpans=1\n[b]\nSlice=db-x.slice\nLevel=1\nSpans=1\n"
          "[c]\nSlice=dbx.slice\nLevel=1\nSpans=1\n",
          "t.conf:6: group [b] ('db-x.slice') is inside group [a] ('db.slice' at t.conf:2): coscheduled groups cannot nest" },
        { "empty-value", "[db]\nSlice=\nLevel=core\nSpans=2\n",
          "t.conf:2: Slice= has an empty value" },
        { "vms-all-keys", "[vms]\nEnable=no\nLevel=package\nPlacement=spread\nPin=siblings\n" GOOD, "" },
        { "vms-level-auto", "[vms]\nLevel=auto\nPin=no\n", "" },
        { "vms-bad-values", "[vms]\nEnable=maybe\nLevel=huge\nPlacement=far\nPin=tight\nSpans=2\n[vms]\n",
          "t.conf:2: Enable=maybe: expected yes or no\n"
          "t.conf:3: Level=huge: expected auto, a level number (1-15) or one of core, smt, llc, cache, package, socket, cls, mc, die, numa\n"
          "t.conf:4: Placement=far: expected pack or spread\n"
          "t.conf:5: Pin=tight: expected cores, siblings or no\n"
          "t.conf:6: unknown key 'Spans' in the [vms] section\n"
          "t.conf:7: section [vms] repeated (first at line 1)" },
        { "allowed-all-reserved", "[daemon]\nReservedCPUs=0-3\n" GOOD "AllowedCPUs=2-3\n",
          "t.conf:7: group [db]: every CPU in AllowedCPUs= is reserved by ReservedCPUs=" },
};

static void run_case(const struct ccase *c) {
        struct config cfg;
        struct config_errors e = {};
        char name[128], *got = NULL, *text = NULL;

        snprintf(name, sizeof(name), "config/%s", c->name);
        /* "; LONG" stands for a 4005-byte comment line. */
        if (strstr(c->text, "; LONG")) {
                size_t at = strstr(c->text, "; LONG") - c->text;
                strappendf(&text, "%.*s;", (int) at, c->text);
                for (int i = 0; i < 4004; i++)
                        strappendf(&text, "x");
                strappendf(&text, "%s", c->text + at + 6);
        } else
                strappendf(&text, "%s", c->text);
        config_init(&cfg);
        config_parse_string(&cfg, text, "t.conf", &e);
        config_finish(&cfg, &e);
        strappendf(&got, "%s", "");
        for (size_t i = 0; i < e.n; i++)
                strappendf(&got, "%s%s", i ? "\n" : "", e.msgs[i]);
        if (strcmp(got, c->errors)) {
                char *detail = NULL;
                strappendf(&detail, "expected [%s] got [%s]", c->errors, got);
                for (char *p = detail; *p; p++)
                        if (*p == '\n')
                                *p = '|';
                test_report(name, detail);
                free(detail);
        } else
                test_report(name, NULL);
        free(got);
        free(text);
        config_errors_free(&e);
        config_free(&cfg);
}

/* conf.d: files in name order, a group redefined in a drop-in is an error
 * with both places, [daemon] keys in a later file override. */
static void test_dropins(void) {
        char *root = fixture_tmpdir(), main_path[512], dir[512], *detail = NULL;
        struct config cfg;
        struct config_errors e = {};

        fixture_write(root, "coschedd.conf", "[daemon]\nRepack=no\n" GOOD);
        fixture_write(root, "conf.d/20-web.conf", "[web]\nUnit=web.service\nLevel=package\nSpans=1\n");
        fixture_write(root, "conf.d/10-daemon.conf", "[daemon]\nRepack=yes\n");
        fixture_write(root, "conf.d/ignored.txt", "garbage");
        snprintf(main_path, sizeof(main_path), "%s/coschedd.conf", root);
        snprintf(dir, sizeof(dir), "%s/conf.d", root);
        if (config_load(main_path, dir, 0, &cfg, &e) < 0 || cfg.ngroups != 2 || !cfg.daemon.repack ||
            strcmp(cfg.groups[1].name, "web"))
                strappendf(&detail, "unexpected result: %zu errors, %zu groups", e.n, cfg.ngroups);
        config_errors_free(&e);
        config_free(&cfg);
        test_report("config/dropins-merge", detail);
        free(detail);
        detail = NULL;

        fixture_write(root, "conf.d/30-dup.conf", "\n[db]\nSlice=other.slice\nLevel=1\nSpans=1\n");
        if (config_load(main_path, dir, 0, &cfg, &e) != -EINVAL || e.n != 1 ||
            !strstr(e.msgs[0], "conf.d/30-dup.conf:2: group [db] is already defined at ") ||
            !strstr(e.msgs[0], "coschedd.conf:3"))
                strappendf(&detail, "got %zu errors: %s", e.n, e.n ? e.msgs[0] : "");
        config_errors_free(&e);
        config_free(&cfg);
        test_report("config/dropins-duplicate-group", detail);
        free(detail);
        detail = NULL;

        snprintf(main_path, sizeof(main_path), "%s/missing.conf", root);
        if (config_load(main_path, NULL, 0, &cfg, &e) != 0 || cfg.ngroups != 0)
                strappendf(&detail, "a missing main config should be empty");
        config_errors_free(&e);
        config_free(&cfg);
        test_report("config/missing-file-is-empty", detail);
        free(detail);
        fixture_rm_rf(root);
        free(root);
}

/* load(main, dir, flags): "ok N groups" or the errors joined by '|'. */
static char *load_result(const char *main_path, const char *dir, unsigned flags) {
        struct config cfg;
        struct config_errors e = {};
        char *out = NULL;

        if (config_load(main_path, dir, flags, &cfg, &e) == 0)
                strappendf(&out, "ok %zu groups", cfg.ngroups);
        for (size_t i = 0; i < e.n; i++)
                strappendf(&out, "%s%s", i ? "|" : "", e.msgs[i]);
        config_errors_free(&e);
        config_free(&cfg);
        return out;
}

static void expect_load(const char *name, const char *root, const char *main_rel, const char *dir_rel, unsigned flags,
                        const char *want_fmt) {
        char main_path[512], dir[512], want[2048], *got, *detail = NULL;

        snprintf(main_path, sizeof(main_path), "%s/%s", root, main_rel);
        snprintf(dir, sizeof(dir), "%s/%s", root, dir_rel);
        snprintf(want, sizeof(want), want_fmt, root, root);
        got = load_result(main_path, dir, flags);
        if (!got || strcmp(got, want))
                strappendf(&detail, "expected [%s] got [%s]", want, got ? got : "");
        test_report(name, detail);
        free(detail);
        free(got);
}

/* Paths named on the command line must be there and readable; the
 * default ones may be absent (an empty config, as documented). */
static void test_required_paths(void) {
        char *root = fixture_tmpdir(), path[512];

        fixture_write(root, "etc/coschedd.conf", GOOD);
        fixture_write(root, "etc/conf.d/10.conf", "[web]\nUnit=web.service\nLevel=1\nSpans=1\n");
        fixture_write(root, "locked.conf", GOOD);
        snprintf(path, sizeof(path), "%s/locked.conf", root);
        chmod(path, 0);
        expect_load("config/required-main-missing", root, "nope.conf", "etc/conf.d", CONFIG_MAIN_REQUIRED,
                    "%s/nope.conf: cannot read: No such file or directory");
        expect_load("config/required-dir-missing", root, "etc/coschedd.conf", "nodir", CONFIG_DIR_REQUIRED,
                    "%s/nodir: cannot read the drop-in directory: No such file or directory");
        expect_load("config/required-dir-not-a-dir", root, "etc/coschedd.conf", "etc/coschedd.conf",
                    CONFIG_DIR_REQUIRED, "%s/etc/coschedd.conf: cannot read the drop-in directory: Not a directory");
        expect_load("config/default-paths-absent-are-empty", root, "nope.conf", "nodir", 0, "ok 0 groups");
        expect_load("config/required-both-present", root, "etc/coschedd.conf", "etc/conf.d",
                    CONFIG_MAIN_REQUIRED | CONFIG_DIR_REQUIRED, "ok 2 groups");
        expect_load("config/main-is-a-directory", root, "etc/conf.d", "nodir", 0,
                    "%s/etc/conf.d: cannot read: Is a directory");
        /* root reads anything: the check only means something for others. */
        if (geteuid() != 0)
                expect_load("config/unreadable-main", root, "locked.conf", "nodir", 0,
                            "%s/locked.conf: cannot read: Permission denied");
        fixture_rm_rf(root);
        free(root);
}

static void strip_comments(char *d) {
        for (char *p = d; (p = strstr(p, "\n; "));) {
                char *eol = strchr(p + 1, '\n');
                memmove(p + 1, eol + 1, strlen(eol + 1) + 1);
        }
}

/* --dump-config output parses back to the same dump. */
static void test_dump_roundtrip(void) {
        const char *text = "[daemon]\nReservedCPUs=0,2-3\nRounding=error\n[web]\nUnit=nginx.service\nLevel=package\n"
                           "CPUs=8\nAllowedCPUs=0-15\nPlacement=spread\nPriority=-3\n";
        struct config a, b;
        struct config_errors e = {};
        char *d1 = NULL, *d2 = NULL;
        size_t n1, n2;
        FILE *f;

        config_init(&a);
        config_parse_string(&a, text, "a.conf", &e);
        f = open_memstream(&d1, &n1);
        config_dump(&a, f);
        fclose(f);
        config_init(&b);
        config_parse_string(&b, d1, "a.conf", &e);
        f = open_memstream(&d2, &n2);
        config_dump(&b, f);
        fclose(f);
        /* The "; file:line" provenance comments differ by construction. */
        strip_comments(d1);
        strip_comments(d2);
        test_report("config/dump-roundtrip", e.n ? e.msgs[0] : strcmp(d1, d2) ? "dumps differ" : NULL);
        free(d1);
        free(d2);
        config_errors_free(&e);
        config_free(&a);
        config_free(&b);
}

/* A unit's [X-Cosched]: files in systemd's order, later ones override. */
struct ucase {
        const char *name, *unit;
        const char *files[3];   /* fragment, drop-ins; NULL ends */
        const char *dump;       /* the group's keys as config_dump prints them; NULL: no section */
        const char *errors;
};

static const struct ucase ucases[] = {
        { "config/unit-fragment", "web.service",
          { "[Unit]\nDescription=web\n\n[Service]\nExecStart=/bin/sleep 1\n\n[X-Cosched]\nLevel=core\nCPUs=4\n" },
          "Unit=web.service\nLevel=core\nCPUs=4\nPlacement=pack\nPriority=0\n", "" },
        { "config/unit-no-section", "web.service", { "[Service]\nExecStart=/bin/true\n" }, NULL, "" },
        { "config/unit-systemd-lines-not-ours", "web.service",
          { "[Service]\nExecStart=/bin/sh -c \\\n  'echo [x]'\nEnvironment=A=B # not a comment for systemd\nweird line\n"
            "[X-Cosched]\nLevel=core\nSpans=1\n" },
          "Unit=web.service\nLevel=core\nSpans=1\nPlacement=pack\nPriority=0\n", "" },
        { "config/unit-slice", "db.slice", { "[Slice]\n[X-Cosched]\nLevel=package\nSpans=1\nPlacement=spread\n" },
          "Slice=db.slice\nLevel=package\nSpans=1\nPlacement=spread\nPriority=0\n", "" },
        { "config/unit-dropin-overrides", "web.service",
          { "[X-Cosched]\nLevel=core\nCPUs=4\nPriority=3\n", "[X-Cosched]\nLevel=package\nSpans=1\n",
            "[X-Cosched]\nPriority=\n" },
          "Unit=web.service\nLevel=package\nSpans=1\nPlacement=pack\nPriority=0\n", "" },
        { "config/unit-dropin-only", "web.service", { "[Service]\n", "[X-Cosched]\nLevel=core\nCPUs=2\n" },
          "Unit=web.service\nLevel=core\nCPUs=2\nPlacement=pack\nPriority=0\n", "" },
        { "config/unit-bad-line", "web.service", { "[Service]\n[X-Cosched]\nLevel=core\nCPUs=lots\n" },
          "Unit=web.service\nLevel=core\nSpans=0\nPlacement=pack\nPriority=0\n",
          "f0:4: CPUs=lots: expected a number from 1 to 8192" },
        { "config/unit-needs-level", "web.service", { "[X-Cosched]\nCPUs=2\n" }, "Unit=web.service\nLevel=\nCPUs=2\nPlacement=pack\nPriority=0\n",
          "f0:1: group [web.service] needs Level=" },
        { "config/unit-reset-level", "web.service", { "[X-Cosched]\nLevel=core\nCPUs=2\n", "[X-Cosched]\nLevel=\n" },
          "Unit=web.service\nLevel=\nCPUs=2\nPlacement=pack\nPriority=0\n", "f0:1: group [web.service] needs Level=" },
        { "config/unit-target-key", "web.service", { "[X-Cosched]\nUnit=other.service\nLevel=core\nCPUs=2\n" },
          "Unit=web.service\nLevel=core\nCPUs=2\nPlacement=pack\nPriority=0\n",
          "f0:2: Unit= in [X-Cosched]: the unit itself is coscheduled (Unit= names a target in coschedd.conf)" },
        { "config/unit-repeated-in-file", "web.service", { "[X-Cosched]\nLevel=core\nCPUs=2\n[Service]\n[X-Cosched]\nLevel=package\n" },
          "Unit=web.service\nLevel=core\nCPUs=2\nPlacement=pack\nPriority=0\n", "f0:6: Level= repeated (first at line 2)" },
        { "config/unit-continued-line", "web.service", { "[X-Cosched]\nLevel=core \\\n  package\nCPUs=2\n" },
          "Unit=web.service\nLevel=\nCPUs=2\nPlacement=pack\nPriority=0\n",
          "f0:2: Level=core \\: expected a level number (1-15) or one of core, smt, llc, cache, package, socket, cls, mc, die, numa\n"
          "f0:3: a continued line ('\\' at the end of the line before) in [X-Cosched]" },
        { "config/unit-socket-refused", "web.socket", { "[X-Cosched]\nLevel=core\nCPUs=2\n" },
          "?=web.socket\nLevel=core\nCPUs=2\nPlacement=pack\nPriority=0\n",
          "f0:1: [X-Cosched] in web.socket: only services, scopes and slices (not -.slice) can be coscheduled" },
};

static void run_ucase(const struct ucase *u) {
        struct config c;
        struct config_errors e = {};
        char *got = NULL, *dump = NULL, detail[2048] = "", fname[8];
        bool any = false;
        size_t n;
        FILE *f;

        config_init(&c);
        for (int i = 0; i < 3 && u->files[i]; i++) {
                snprintf(fname, sizeof(fname), "f%d", i);
                any |= config_parse_unit_file(&c, u->unit, u->files[i], fname, &e);
        }
        config_finish(&c, &e);
        for (size_t i = 0; i < e.n; i++)
                strappendf(&got, "%s%s", i ? "\n" : "", e.msgs[i]);
        if (any != (u->dump != NULL) || c.ngroups != (u->dump ? 1u : 0u))
                snprintf(detail, sizeof(detail), "section found %d, %zu groups", any, c.ngroups);
        else if (strcmp(got ? got : "", u->errors))
                snprintf(detail, sizeof(detail), "errors '%s', expected '%s'", got ? got : "", u->errors);
        else if (u->dump) {
                f = open_memstream(&dump, &n);
                config_dump(&c, f);
                fclose(f);
                if (!strstr(dump, u->dump))
                        snprintf(detail, sizeof(detail), "dump '%s', expected '%s'", dump, u->dump);
        }
        test_report(u->name, detail);
        free(got);
        free(dump);
        config_errors_free(&e);
        config_free(&c);
}

int main(void) {
        for (size_t i = 0; i < sizeof(ucases) / sizeof(ucases[0]); i++)
                run_ucase(&ucases[i]);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                run_case(&cases[i]);
        test_dropins();
        test_required_paths();
        test_dump_roundtrip();
        return test_failures ? 1 : 0;
}
