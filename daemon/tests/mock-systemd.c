/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for PID 1's D-Bus API on a private bus, enough for bus.c:
 * LoadUnit, Subscribe, SetUnitProperties (AllowedCPUs=, CPUWeight=) and the
 * ControlGroup/AllowedCPUs/CPUWeight properties. Like systemd it writes
 * AllowedCPUs= into the unit's cpuset.cpus (under --cgroup-root), and it
 * logs every call so the test can check what was asked, in which order.
 *
 *   mock-systemd CGROUP_ROOT LOG UNIT=CGROUP...   (CGROUP "" = inactive)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "cpuset.h"
#include "util.h"

#define UNIT_PREFIX "/org/freedesktop/systemd1/unit"

struct unit {
        char *name;
        char *cgroup;
        struct cpuset allowed;
        uint64_t weight;
};

static struct unit units[16];
static int nunits;
static const char *cg_root;
static FILE *logf;

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

static int read_allowed(sd_bus_message *m, struct unit *u) {
        const uint8_t *p;
        size_t n;
        char path[4096], list[4096];
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
        if (u->cgroup[0]) {
                snprintf(path, sizeof(path), "%s%s/cpuset.cpus", cg_root, u->cgroup);
                strcat(list, "\n");
                write_file_str(path, list);
        }
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
                        fprintf(logf, "SetUnitProperties %s CPUWeight=%llu\n", name, (unsigned long long) u->weight);
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

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("LoadUnit", "s", "o", method_load_unit, 0),
        SD_BUS_METHOD("Subscribe", "", "", method_subscribe, 0),
        SD_BUS_METHOD("SetUnitProperties", "sba(sv)", "", method_set_props, 0),
        SD_BUS_SIGNAL("JobRemoved", "uoss", 0),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable unit_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("ControlGroup", "s", NULL, offsetof(struct unit, cgroup), 0),
        SD_BUS_PROPERTY("AllowedCPUs", "ay", get_allowed, 0, 0),
        SD_BUS_PROPERTY("CPUWeight", "t", NULL, offsetof(struct unit, weight), 0),
        SD_BUS_VTABLE_END,
};

int main(int argc, char **argv) {
        static const char *const ifaces[] = { "org.freedesktop.systemd1.Service", "org.freedesktop.systemd1.Slice",
                                              "org.freedesktop.systemd1.Scope" };
        sd_bus *bus = NULL;
        sd_event *ev = NULL;
        sigset_t ss;
        int r;

        if (argc < 3)
                return 2;
        cg_root = argv[1];
        logf = fopen(argv[2], "a");
        if (!logf)
                return 1;
        for (int i = 3; i < argc && nunits < 16; i++) {
                char *eq = strchr(argv[i], '=');
                if (!eq)
                        return 2;
                *eq = 0;
                units[nunits++] = (struct unit) { .name = argv[i], .cgroup = eq + 1, .weight = UINT64_MAX };
        }
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        r = sd_event_default(&ev);
        if (r >= 0)
                r = sd_event_add_signal(ev, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                             manager_vtable, NULL);
        for (int i = 0; r >= 0 && i < 3; i++)
                r = sd_bus_add_fallback_vtable(bus, NULL, UNIT_PREFIX, ifaces[i], unit_vtable, find_unit, NULL);
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
        sd_bus_flush_close_unref(bus);
        sd_event_unref(ev);
        fclose(logf);
        return r < 0 ? 1 : 0;
}
