/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coschedd: confines coscheduled cgroups to whole spans of their level. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "log.h"
#include "manager.h"
#include "version.h"

#define DEFAULT_CONFIG "/etc/coschedd/coschedd.conf"

static void help(void) {
        printf("coschedd [OPTIONS...]\n\n"
               "Places coscheduled cgroups on whole spans of their coscheduling level.\n\n"
               "  -h --help             Show this help\n"
               "     --version          Show the version\n"
               "  -t --check-config     Validate the configuration, and its levels and sizes\n"
               "                        against this machine's topology: silent and exit 0,\n"
               "                        or print every error as file:line: message and exit 1\n"
               "     --syntax-only      With -t: the files alone, not the topology (what the\n"
               "                        unit runs before a start or reload: a level this kernel\n"
               "                        lacks is that group's error at run time, not a failed start)\n"
               "     --dump-config      Print the effective configuration\n"
               "     --once             Place and apply once, then exit\n"
               "     --config=PATH      Main configuration file (default %s; when given,\n"
               "                        it must exist)\n"
               "     --config-dir=DIR   Drop-in directory (default: conf.d next to the config;\n"
               "                        when given, it must exist)\n"
               "     --sysfs-root=DIR   Read /sys below DIR (tests)\n"
               "     --cgroup-root=DIR  The cgroup2 mount (default /sys/fs/cgroup)\n"
               "     --proc-root=DIR    Read VMs' processes below DIR instead of /proc (tests:\n"
               "                        their vCPU pins are reported, not applied)\n"
               "     --state-dir=DIR    Checkpoint directory (default /run/coschedd)\n"
               "     --no-bus           Do not talk to systemd (units cannot be confined)\n",
               DEFAULT_CONFIG);
}

enum { ARG_VERSION = 0x100, ARG_SYNTAX, ARG_DUMP, ARG_ONCE, ARG_CONFIG, ARG_CONFIG_DIR, ARG_SYSFS, ARG_CGROUP, ARG_STATE, ARG_NO_BUS, ARG_PROC };

struct args {
        struct manager_options o;
        bool check, syntax_only, dump, once;
        char dropin[PATH_MAX];
};

static int parse_args(int argc, char **argv, struct args *a) {
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "check-config", no_argument, NULL, 't' },
                { "syntax-only", no_argument, NULL, ARG_SYNTAX },
                { "dump-config", no_argument, NULL, ARG_DUMP },
                { "once", no_argument, NULL, ARG_ONCE },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "config-dir", required_argument, NULL, ARG_CONFIG_DIR },
                { "sysfs-root", required_argument, NULL, ARG_SYSFS },
                { "cgroup-root", required_argument, NULL, ARG_CGROUP },
                { "proc-root", required_argument, NULL, ARG_PROC },
                { "state-dir", required_argument, NULL, ARG_STATE },
                { "no-bus", no_argument, NULL, ARG_NO_BUS },
                {},
        };
        int c;

        a->o = (struct manager_options) { .config_path = DEFAULT_CONFIG, .sysfs_root = "",
                                          .cgroup_root = "/sys/fs/cgroup", .proc_root = "", .state_dir = "/run/coschedd",
                                          .use_bus = true };
        while ((c = getopt_long(argc, argv, "ht", opts, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        exit(0);
                case ARG_VERSION:
                        printf("coschedd %s\n", COSCHED_VERSION);
                        exit(0);
                case 't':
                        a->check = true;
                        break;
                case ARG_SYNTAX:
                        a->syntax_only = true;
                        break;
                case ARG_DUMP:
                        a->dump = true;
                        break;
                case ARG_ONCE:
                        a->once = true;
                        break;
                case ARG_CONFIG:
                        a->o.config_path = optarg;
                        a->o.config_flags |= CONFIG_MAIN_REQUIRED;
                        break;
                case ARG_CONFIG_DIR:
                        a->o.config_dir = optarg;
                        a->o.config_flags |= CONFIG_DIR_REQUIRED;
                        break;
                case ARG_SYSFS:
                        a->o.sysfs_root = optarg;
                        break;
                case ARG_CGROUP:
                        a->o.cgroup_root = optarg;
                        break;
                case ARG_PROC:
                        a->o.proc_root = optarg;
                        break;
                case ARG_STATE:
                        a->o.state_dir = optarg;
                        break;
                case ARG_NO_BUS:
                        a->o.use_bus = false;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "coschedd: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (a->syntax_only && !a->check) {
                fprintf(stderr, "coschedd: --syntax-only goes with -t (--check-config)\n");
                return -EINVAL;
        }
        if (!a->o.config_dir) {
                char tmp[PATH_MAX];
                snprintf(tmp, sizeof(tmp), "%s", a->o.config_path);
                snprintf(a->dropin, sizeof(a->dropin), "%s/conf.d", dirname(tmp));
                a->o.config_dir = a->dropin;
        }
        return 0;
}

/* Like sshd -t: nothing on success, every error on failure. -t also
 * resolves the levels on this machine, which --dump-config and
 * --syntax-only (the unit's check before a start or reload) do not. */
static int check_or_dump(const struct args *a) {
        struct config c;
        struct config_errors e = {};
        int r = config_load(a->o.config_path, a->o.config_dir, a->o.config_flags, &c, &e);

        if (r == 0 && a->check && !a->syntax_only) {
                check_config_sysfs(&c, a->o.sysfs_root, &e);
                r = e.n ? -EINVAL : 0;
        }
        for (size_t i = 0; i < e.n; i++)
                fprintf(stderr, "%s\n", e.msgs[i]);
        if (r == 0 && a->dump)
                config_dump(&c, stdout);
        config_errors_free(&e);
        config_free(&c);
        return r < 0 ? 1 : 0;
}

int main(int argc, char **argv) {
        struct manager *m = NULL;
        struct args a = {};
        int r;

        if (parse_args(argc, argv, &a) < 0)
                return 2;
        if (a.check || a.dump)
                return check_or_dump(&a);

        log_init();
        r = manager_new(&a.o, &m);
        if (r < 0) {
                log_error("not starting: %s", r == -ENOMEM ? "out of memory" : "the configuration is invalid");
                return 1;
        }
        if (a.once)
                r = manager_once(m);
        else
                r = manager_run(m);
        manager_free(m);
        return r < 0 ? 1 : 0;
}
