/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for PID 1's D-Bus API on a private bus, enough for bus.c:
 * LoadUnit, Subscribe, SetUnitProperties (AllowedCPUs=, CPUWeight=) and the
 * ControlGroup/AllowedCPUs/CPUWeight properties. Like systemd it writes
 * AllowedCPUs= into the unit's cpuset.cpus (under --cgroup-root), and it
 * logs every call so the test can check what was asked, in which order.
 *
 *   mock-systemd [--realize-delay-ms=N] [--notify-socket=PATH] CGROUP_ROOT LOG UNIT=CGROUP...
 *                (CGROUP "" = inactive)
 *
 * --realize-delay-ms: like PID 1, which realizes cgroup settings from its
 * own loop after the method returned, write cpuset.cpus N ms after
 * SetUnitProperties (the property itself changes at once). The log says
 * what cpu.scheduled was just before, so a test sees whether the daemon
 * coscheduled the group before it was confined.
 * --notify-socket: PID 1's other half, the sd_notify socket: every line
 * received is logged with the wall clock in ms ("notify MS WATCHDOG=1").
 * SIGUSR1: PID 1 hangs: method calls (LoadUnit, GetAll, Get,
 * SetUnitProperties...) get no answer, ever ("ignored MEMBER" in the log);
 * the notify socket is still read. SIGUSR2: it answers again.
 *
 * Units, for units.c: ListUnits, the org.freedesktop.systemd1.Unit
 * properties Id, ActiveState (active while the unit has a cgroup),
 * FragmentPath and DropInPaths (--unit-dir=DIR: DIR/UNIT if it exists,
 * and DIR/UNIT.d/ *.conf in name order), Reload. Every method call is
 * logged first ("call MEMBER PATH"), so a test counts what the daemon
 * asks. --control=FIFO takes one command a line, as PID 1's events:
 *   start UNIT CGROUP  the unit starts (UnitNew if new, its cgroup gets
 *                      AllowedCPUs=, PropertiesChanged ActiveState, JobRemoved)
 *   stop UNIT          it stops (PropertiesChanged, JobRemoved)
 *   exit UNIT          its process exits: it stops without a job
 *   touch UNIT         PropertiesChanged ActiveState, no change (PID 1 sends
 *                      one whenever a unit's properties change)
 *   reload             daemon-reload as PID 1 does it: Reloading true, every
 *                      unit unloaded (UnitRemoved) and loaded again (UnitNew,
 *                      PropertiesChanged), Reloading false
 *   remove UNIT        UnitRemoved
 * Like the kernel, it refuses (ENOSPC) to empty the cpuset.cpus of an active
 * unit that had CPUs: systemd's reset of AllowedCPUs= fails there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "cpuset.h"
#include "util.h"

#define UNIT_PREFIX "/org/freedesktop/systemd1/unit"

#define MAX_UNITS 64

struct unit {
        char *name;
        char *cgroup;
        struct cpuset allowed;
        uint64_t weight;
        sd_event_source *realize;       /* delayed write of cpuset.cpus */
};

static struct unit units[MAX_UNITS];
static int nunits;
static const char *cg_root;
static FILE *logf;
static sd_event *ev;
static uint64_t realize_delay_usec;
static bool hung;
static const char *unit_dir;
static sd_bus *bus;
static unsigned job_id;

static struct unit *find(const char *name) {
        for (int i = 0; i < nunits; i++)
                if (!strcmp(units[i].name, name))
                        return &units[i];
        return NULL;
}

static int method_load_unit(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        const char *name;
        char *path = NULL;
        int r;

        (void) userdata;
        r = sd_bus_message_read(m, "s", &name);
        if (r < 0)
                return r;
        if (!find(name))
                return sd_bus_error_setf(e, "org.freedesktop.systemd1.NoSuchUnit", "Unit %s not found.", name);
        r = sd_bus_path_encode(UNIT_PREFIX, name, &path);
        if (r < 0)
                return r;
        r = sd_bus_reply_method_return(m, "o", path);
        free(path);
        return r;
}

static int method_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        (void) userdata;
        (void) e;
        return sd_bus_reply_method_return(m, NULL);
}

/* The kernel keeps a cgroup with tasks on some CPUs: an empty cpuset.cpus
 * is refused there (ENOSPC) once it had CPUs. Here: an active unit. */
static int write_cpus(const char *path, const char *list) {
        char *cur = NULL;
        bool had;

        had = read_file_str(path, &cur) >= 0 && strstrip(cur)[0];
        free(cur);
        if (had && !strcmp(list, "\n"))
                return -ENOSPC;
        return write_file_str(path, list);
}

/* What systemd does when it gets to the unit: AllowedCPUs= into cpuset.cpus. */
static void realize(struct unit *u) {
        char path[4096], list[4096], *level = NULL;
        int r;

        snprintf(path, sizeof(path), "%s%s/cpu.scheduled", cg_root, u->cgroup);
        (void) read_file_str(path, &level);
        cpuset_format(&u->allowed, list, sizeof(list));
        snprintf(path, sizeof(path), "%s%s/cpuset.cpus", cg_root, u->cgroup);
        strcat(list, "\n");
        r = write_cpus(path, list);
        fprintf(logf, "realized %s AllowedCPUs=%s: %s, cpu.scheduled was %s\n", u->name, strstrip(list),
                r < 0 ? strerror(-r) : "written", level ? strstrip(level) : "-");
        fflush(logf);
        free(level);
}

static int on_realize(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        realize(userdata);
        return 0;
}

/* Later, from the loop, as PID 1 does; a second call restarts the delay. */
static int realize_later(struct unit *u) {
        int r;

        if (u->realize) {
                r = sd_event_source_set_time_relative(u->realize, realize_delay_usec);
                return r < 0 ? r : sd_event_source_set_enabled(u->realize, SD_EVENT_ONESHOT);
        }
        /* 1 ms accuracy: the test measures this delay. */
        return sd_event_add_time_relative(ev, &u->realize, CLOCK_MONOTONIC, realize_delay_usec, 1000, on_realize, u);
}

static int read_allowed(sd_bus_message *m, struct unit *u) {
        const uint8_t *p;
        size_t n;
        char list[4096];
        int r;

        r = sd_bus_message_read_array(m, 'y', (const void **) &p, &n);
        if (r < 0)
                return r;
        cpuset_zero(&u->allowed);
        for (size_t i = 0; i < n * 8 && i < CPUSET_MAX; i++)
                if (p[i / 8] & (1u << (i % 8)))
                        cpuset_set(&u->allowed, i);
        cpuset_format(&u->allowed, list, sizeof(list));
        fprintf(logf, "SetUnitProperties %s AllowedCPUs=%s\n", u->name, list);
        if (!u->cgroup[0])
                return 0;
        if (realize_delay_usec)
                return realize_later(u);
        realize(u);
        return 0;
}

static int method_set_props(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        const char *name, *prop;
        struct unit *u;
        int runtime, r;

        (void) userdata;
        r = sd_bus_message_read(m, "sb", &name, &runtime);
        if (r < 0)
                return r;
        u = find(name);
        if (!u)
                return sd_bus_error_setf(e, "org.freedesktop.systemd1.NoSuchUnit", "Unit %s not found.", name);
        if (!runtime)
                fprintf(logf, "SetUnitProperties %s persistent!\n", name);
        r = sd_bus_message_enter_container(m, 'a', "(sv)");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &prop);
                if (r < 0)
                        return r;
                if (!strcmp(prop, "AllowedCPUs")) {
                        r = sd_bus_message_enter_container(m, 'v', "ay");
                        if (r >= 0)
                                r = read_allowed(m, u);
                } else if (!strcmp(prop, "CPUWeight")) {
                        r = sd_bus_message_enter_container(m, 'v', "t");
                        if (r >= 0)
                                r = sd_bus_message_read(m, "t", &u->weight);
                        if (u->weight == UINT64_MAX)
                                fprintf(logf, "SetUnitProperties %s CPUWeight=\n", name);
                        else
                                fprintf(logf, "SetUnitProperties %s CPUWeight=%llu\n", name,
                                        (unsigned long long) u->weight);
                } else
                        return sd_bus_error_setf(e, SD_BUS_ERROR_INVALID_ARGS, "unexpected property %s", prop);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m); /* v */
                if (r >= 0)
                        r = sd_bus_message_exit_container(m); /* r */
        }
        fflush(logf);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, NULL);
}

static int get_allowed(sd_bus *bus, const char *path, const char *iface, const char *prop, sd_bus_message *reply,
                       void *userdata, sd_bus_error *e) {
        struct unit *u = userdata;
        uint8_t mask[CPUSET_MAX / 8] = {};
        int last = cpuset_last(&u->allowed);

        (void) bus, (void) path, (void) iface, (void) prop, (void) e;
        CPUSET_FOREACH(c, &u->allowed)
                mask[c / 8] |= 1u << (c % 8);
        return sd_bus_message_append_array(reply, 'y', mask, last < 0 ? 0 : (size_t) last / 8 + 1);
}

static int find_unit(sd_bus *bus, const char *path, const char *iface, void *userdata, void **found, sd_bus_error *e) {
        char *name = NULL;

        (void) bus, (void) iface, (void) userdata, (void) e;
        if (sd_bus_path_decode(path, UNIT_PREFIX, &name) <= 0)
                return 0;
        *found = find(name);
        free(name);
        return *found ? 1 : 0;
}

/* Before dispatch: while hung, a method call is dropped unanswered, as a
 * PID 1 stuck in its own loop would leave it. */
static int filter(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        (void) userdata, (void) e;
        if (!sd_bus_message_is_method_call(m, NULL, NULL))
                return 0;
        fprintf(logf, "call %s %s\n", sd_bus_message_get_member(m), sd_bus_message_get_path(m));
        fflush(logf);
        if (!hung)
                return 0;
        fprintf(logf, "ignored %s\n", sd_bus_message_get_member(m));
        fflush(logf);
        return 1;
}

static int on_hang(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) s, (void) userdata;
        hung = si->ssi_signo == SIGUSR1;
        fprintf(logf, "%s\n", hung ? "hung" : "answering");
        fflush(logf);
        return 0;
}

static int method_list_units(sd_bus_message *m, void *userdata, sd_bus_error *e);
static int method_reload(sd_bus_message *m, void *userdata, sd_bus_error *e);

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("LoadUnit", "s", "o", method_load_unit, 0),
        SD_BUS_METHOD("Subscribe", "", "", method_subscribe, 0),
        SD_BUS_METHOD("SetUnitProperties", "sba(sv)", "", method_set_props, 0),
        SD_BUS_METHOD("ListUnits", "", "a(ssssssouso)", method_list_units, 0),
        SD_BUS_METHOD("Reload", "", "", method_reload, 0),
        SD_BUS_SIGNAL("JobRemoved", "uoss", 0),
        SD_BUS_SIGNAL("UnitNew", "so", 0),
        SD_BUS_SIGNAL("UnitRemoved", "so", 0),
        SD_BUS_SIGNAL("Reloading", "b", 0),
        SD_BUS_VTABLE_END,
};

static int get_active(sd_bus *b, const char *path, const char *iface, const char *prop, sd_bus_message *reply,
                      void *userdata, sd_bus_error *e) {
        struct unit *u = userdata;

        (void) b, (void) path, (void) iface, (void) prop, (void) e;
        return sd_bus_message_append(reply, "s", u->cgroup[0] ? "active" : "inactive");
}

static int get_fragment(sd_bus *b, const char *path, const char *iface, const char *prop, sd_bus_message *reply,
                        void *userdata, sd_bus_error *e) {
        struct unit *u = userdata;
        char p[4096] = "";

        (void) b, (void) path, (void) iface, (void) prop, (void) e;
        if (unit_dir) {
                snprintf(p, sizeof(p), "%s/%s", unit_dir, u->name);
                if (access(p, F_OK) < 0)
                        p[0] = 0;
        }
        return sd_bus_message_append(reply, "s", p);
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int get_dropins(sd_bus *b, const char *path, const char *iface, const char *prop, sd_bus_message *reply,
                       void *userdata, sd_bus_error *e) {
        struct unit *u = userdata;
        char dir[4096], *names[64];
        struct dirent *de;
        size_t n = 0;
        DIR *d;
        int r;

        (void) b, (void) path, (void) iface, (void) prop, (void) e;
        snprintf(dir, sizeof(dir), "%s/%s.d", unit_dir ? unit_dir : "/nonexistent", u->name);
        d = opendir(dir);
        while (d && (de = readdir(d)) && n < 64) {
                size_t l = strlen(de->d_name);
                if (de->d_name[0] != '.' && l > 5 && !strcmp(de->d_name + l - 5, ".conf") &&
                    asprintf(&names[n], "%s/%s", dir, de->d_name) >= 0)
                        n++;
        }
        if (d)
                closedir(d);
        qsort(names, n, sizeof(char *), cmp_str);
        r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; i < n; i++) {
                if (r >= 0)
                        r = sd_bus_message_append(reply, "s", names[i]);
                free(names[i]);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int method_list_units(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        sd_bus_message *reply = NULL;
        int r;

        (void) userdata, (void) e;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ssssssouso)");
        for (int i = 0; r >= 0 && i < nunits; i++) {
                char *path = NULL;
                const char *active = units[i].cgroup[0] ? "active" : "inactive";

                r = sd_bus_path_encode(UNIT_PREFIX, units[i].name, &path);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "(ssssssouso)", units[i].name, "", "loaded", active,
                                                  units[i].cgroup[0] ? "running" : "dead", "", path, 0, "", "/");
                free(path);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

static void unit_signals(struct unit *u, const char *member, bool job);

/* PID 1 serializes, frees every unit (UnitRemoved, running ones too) and
 * loads them again (UnitNew, then their properties) before it says done. */
static void emit_reloading(void) {
        sd_bus_emit_signal(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "Reloading", "b", 1);
        for (int i = 0; i < nunits; i++)
                unit_signals(&units[i], "UnitRemoved", false);
        for (int i = 0; i < nunits; i++) {
                unit_signals(&units[i], "UnitNew", false);
                unit_signals(&units[i], "PropertiesChanged", false);
        }
        sd_bus_emit_signal(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "Reloading", "b", 0);
}

static int method_reload(sd_bus_message *m, void *userdata, sd_bus_error *e) {
        (void) userdata, (void) e;
        fprintf(logf, "Reload\n");
        fflush(logf);
        emit_reloading();
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable unit_iface_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Id", "s", NULL, offsetof(struct unit, name), 0),
        SD_BUS_PROPERTY("ActiveState", "s", get_active, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("FragmentPath", "s", get_fragment, 0, 0),
        SD_BUS_PROPERTY("DropInPaths", "as", get_dropins, 0, 0),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable unit_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("ControlGroup", "s", NULL, offsetof(struct unit, cgroup), 0),
        SD_BUS_PROPERTY("AllowedCPUs", "ay", get_allowed, 0, 0),
        SD_BUS_PROPERTY("CPUWeight", "t", NULL, offsetof(struct unit, weight), 0),
        SD_BUS_VTABLE_END,
};

static void unit_signals(struct unit *u, const char *member, bool job) {
        char *path = NULL, job_path[64];

        if (sd_bus_path_encode(UNIT_PREFIX, u->name, &path) < 0)
                return;
        if (!strcmp(member, "UnitNew") || !strcmp(member, "UnitRemoved"))
                sd_bus_emit_signal(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", member, "so",
                                   u->name, path);
        else {
                sd_bus_emit_properties_changed(bus, path, "org.freedesktop.systemd1.Unit", "ActiveState", NULL);
                if (job) {
                        snprintf(job_path, sizeof(job_path), "/org/freedesktop/systemd1/job/%u", ++job_id);
                        sd_bus_emit_signal(bus, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                           "JobRemoved", "uoss", job_id, job_path, u->name, "done");
                }
        }
        free(path);
}

static void command(char *line) {
        char *verb = strtok(line, " \n"), *name = strtok(NULL, " \n"), *cg = strtok(NULL, " \n");
        struct unit *u = name ? find(name) : NULL;

        fprintf(logf, "cmd %s %s\n", verb ? verb : "", name ? name : "");
        fflush(logf);
        if (!verb)
                return;
        if (!strcmp(verb, "reload")) {
                emit_reloading();
                return;
        }
        if (!name)
                return;
        if (!u && !strcmp(verb, "start") && nunits < MAX_UNITS) {
                u = &units[nunits++];
                *u = (struct unit) { .name = strdup(name), .cgroup = strdup(""), .weight = UINT64_MAX };
                unit_signals(u, "UnitNew", false);
        }
        if (!u)
                return;
        if (!strcmp(verb, "start")) {
                free(u->cgroup);
                u->cgroup = strdup(cg ? cg : "");
                /* systemd realizes the unit's properties in its new cgroup. */
                if (!cpuset_empty(&u->allowed))
                        realize(u);
                unit_signals(u, "PropertiesChanged", true);
        } else if (!strcmp(verb, "stop") || !strcmp(verb, "exit")) {
                free(u->cgroup);
                u->cgroup = strdup("");
                unit_signals(u, "PropertiesChanged", !strcmp(verb, "stop"));
        } else if (!strcmp(verb, "touch"))
                unit_signals(u, "PropertiesChanged", false);
        else if (!strcmp(verb, "remove"))
                unit_signals(u, "UnitRemoved", false);
}

static int on_control(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        static char buf[8192];
        static size_t len;
        ssize_t n;
        char *nl;

        (void) s, (void) revents, (void) userdata;
        n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n <= 0)
                return 0;
        len += n;
        buf[len] = 0;
        while ((nl = strchr(buf, '\n'))) {
                *nl = 0;
                command(buf);
                memmove(buf, nl + 1, len - (nl + 1 - buf) + 1);
                len -= nl + 1 - buf;
        }
        return 0;
}

static int on_notify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char buf[4096], *save = NULL;
        struct timespec ts;
        ssize_t n;

        (void) s, (void) revents, (void) userdata;
        while ((n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) >= 0) {
                buf[n] = 0;
                clock_gettime(CLOCK_REALTIME, &ts);
                for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                        fprintf(logf, "notify %lld %s\n", (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000, l);
        }
        fflush(logf);
        return 0;
}

static int listen_notify(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        r = sd_event_add_io(ev, NULL, fd, EPOLLIN, on_notify, NULL);
        if (r < 0)
                close(fd);
        return r; /* the fd lives as long as the process */
}

int main(int argc, char **argv) {
        static const char *const ifaces[] = { "org.freedesktop.systemd1.Service", "org.freedesktop.systemd1.Slice",
                                              "org.freedesktop.systemd1.Scope" };
        static const struct option opts[] = {
                { "realize-delay-ms", required_argument, NULL, 'd' },
                { "notify-socket", required_argument, NULL, 'n' },
                { "unit-dir", required_argument, NULL, 'u' },
                { "control", required_argument, NULL, 'c' },
                {},
        };
        const char *notify = NULL, *control = NULL;
        sigset_t ss;
        int c, delay, r;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0)
                switch (c) {
                case 'd':
                        if (safe_atoi(optarg, &delay) < 0 || delay < 0)
                                return 2;
                        realize_delay_usec = (uint64_t) delay * 1000;
                        break;
                case 'n':
                        notify = optarg;
                        break;
                case 'u':
                        unit_dir = optarg;
                        break;
                case 'c':
                        control = optarg;
                        break;
                default:
                        return 2;
                }
        if (argc - optind < 2)
                return 2;
        cg_root = argv[optind];
        logf = fopen(argv[optind + 1], "a");
        if (!logf)
                return 1;
        for (int i = optind + 2; i < argc; i++) {
                char *eq = strchr(argv[i], '=');
                if (!eq || nunits >= MAX_UNITS)
                        return 2;
                *eq = 0;
                units[nunits++] = (struct unit) { .name = strdup(argv[i]), .cgroup = strdup(eq + 1),
                                                  .weight = UINT64_MAX };
        }
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGUSR1);
        sigaddset(&ss, SIGUSR2);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        r = sd_event_default(&ev);
        if (r >= 0)
                r = sd_event_add_signal(ev, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(ev, NULL, SIGUSR1, on_hang, NULL);
        if (r >= 0)
                r = sd_event_add_signal(ev, NULL, SIGUSR2, on_hang, NULL);
        if (r >= 0 && notify)
                r = listen_notify(notify);
        if (r >= 0 && control) {
                /* O_RDWR: no end of file when a writer closes it. */
                int fd = open(control, O_RDWR | O_NONBLOCK | O_CLOEXEC);
                r = fd < 0 ? -errno : sd_event_add_io(ev, NULL, fd, EPOLLIN, on_control, NULL);
        }
        if (r >= 0)
                r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_add_filter(bus, NULL, filter, NULL);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                             manager_vtable, NULL);
        for (int i = 0; r >= 0 && i < 3; i++)
                r = sd_bus_add_fallback_vtable(bus, NULL, UNIT_PREFIX, ifaces[i], unit_vtable, find_unit, NULL);
        if (r >= 0)
                r = sd_bus_add_fallback_vtable(bus, NULL, UNIT_PREFIX, "org.freedesktop.systemd1.Unit", unit_iface_vtable,
                                               find_unit, NULL);
        if (r >= 0)
                r = sd_bus_request_name(bus, "org.freedesktop.systemd1", 0);
        if (r >= 0)
                r = sd_bus_attach_event(bus, ev, 0);
        if (r >= 0) {
                fprintf(logf, "ready\n");
                fflush(logf);
                r = sd_event_loop(ev);
        }
        if (r < 0)
                fprintf(stderr, "mock-systemd: %s\n", strerror(-r));
        for (int i = 0; i < nunits; i++)
                sd_event_source_unref(units[i].realize);
        sd_bus_flush_close_unref(bus);
        sd_event_unref(ev);
        fclose(logf);
        return r < 0 ? 1 : 0;
}
