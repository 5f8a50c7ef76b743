/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "util.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"

int bus_open(sd_bus **ret) {
        return sd_bus_open_system(ret);
}

static const char *unit_interface(const char *unit) {
        const char *dot = strrchr(unit, '.');

        if (dot && !strcmp(dot, ".slice"))
                return "org.freedesktop.systemd1.Slice";
        if (dot && !strcmp(dot, ".scope"))
                return "org.freedesktop.systemd1.Scope";
        return "org.freedesktop.systemd1.Service";
}

static int unit_path(sd_bus *bus, const char *unit, char **ret, char *err, size_t errlen) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *path;
        int r;

        /* LoadUnit rather than GetUnit: a slice nobody started yet is still a unit. */
        r = sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "LoadUnit", &e, &reply, "s", unit);
        if (r < 0) {
                errf(err, errlen, r, "LoadUnit %s: %s", unit, e.message ? e.message : strerror(-r));
                sd_bus_error_free(&e);
                return r;
        }
        r = sd_bus_message_read(reply, "o", &path);
        if (r >= 0) {
                *ret = strdup(path);
                r = *ret ? 0 : -ENOMEM;
        }
        sd_bus_message_unref(reply);
        return r;
}

int bus_unit_cgroup(sd_bus *bus, const char *unit, char *cg, size_t len, char *err, size_t errlen) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        char *path = NULL, *v = NULL;
        int r;

        r = unit_path(bus, unit, &path, err, errlen);
        if (r < 0)
                return r;
        r = sd_bus_get_property_string(bus, SD_DEST, path, unit_interface(unit), "ControlGroup", &e, &v);
        if (r < 0)
                errf(err, errlen, r, "%s ControlGroup: %s", unit, e.message ? e.message : strerror(-r));
        else
                snprintf(cg, len, "%s", v);
        sd_bus_error_free(&e);
        free(v);
        free(path);
        return r;
}

/* systemd's AllowedCPUs= on D-Bus: a little-endian bitmask as bytes. */
static size_t cpus_to_mask(const struct cpuset *cpus, uint8_t *mask, size_t len) {
        int last = cpus ? cpuset_last(cpus) : -1;
        size_t n = last < 0 ? 0 : (size_t) last / 8 + 1;

        memset(mask, 0, len);
        if (n > len)
                n = len;
        if (cpus)
                CPUSET_FOREACH(c, cpus)
                        if ((size_t) c / 8 < n)
                                mask[c / 8] |= 1u << (c % 8);
        return n;
}

static int get_unit_mask(sd_bus *bus, const char *path, const char *iface, uint8_t *mask, size_t len, size_t *n,
                         uint64_t *weight) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const void *p;
        size_t sz;
        int r;

        r = sd_bus_get_property(bus, SD_DEST, path, iface, "AllowedCPUs", &e, &reply, "ay");
        sd_bus_error_free(&e);
        if (r < 0)
                return r;
        r = sd_bus_message_read_array(reply, 'y', &p, &sz);
        if (r >= 0) {
                *n = sz < len ? sz : len;
                memset(mask, 0, len);
                memcpy(mask, p, *n);
                /* Trailing zero bytes carry no CPUs. */
                while (*n && mask[*n - 1] == 0)
                        (*n)--;
        }
        sd_bus_message_unref(reply);
        if (r < 0)
                return r;
        r = sd_bus_get_property_trivial(bus, SD_DEST, path, iface, "CPUWeight", &e, 't', weight);
        sd_bus_error_free(&e);
        return r;
}

int bus_set_unit_cpus(sd_bus *bus, const char *unit, const struct cpuset *cpus, char *err, size_t errlen) {
        static uint8_t want[CPUSET_MAX / 8], have[CPUSET_MAX / 8];
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL;
        uint64_t weight = UINT64_MAX;
        size_t nwant, nhave = 0;
        char *path = NULL;
        bool set_weight;
        int r;

        r = unit_path(bus, unit, &path, err, errlen);
        if (r < 0)
                return r;
        nwant = cpus_to_mask(cpus, want, sizeof(want));
        r = get_unit_mask(bus, path, unit_interface(unit), have, sizeof(have), &nhave, &weight);
        free(path);
        set_weight = cpus && (r < 0 || weight == UINT64_MAX);
        if (r >= 0 && nhave == nwant && !memcmp(have, want, nwant) && !set_weight)
                return 0;

        r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "SetUnitProperties");
        if (r >= 0)
                r = sd_bus_message_append(m, "sb", unit, 1); /* runtime: gone at reboot, like our placement */
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0 && set_weight)
                r = sd_bus_message_append(m, "(sv)", "CPUWeight", "t", (uint64_t) 100);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "AllowedCPUs");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "ay");
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', want, nwant);
        for (int i = 0; r >= 0 && i < 3; i++)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, &e, NULL);
        if (r < 0)
                errf(err, errlen, r, "SetUnitProperties %s AllowedCPUs: %s", unit, e.message ? e.message : strerror(-r));
        sd_bus_error_free(&e);
        sd_bus_message_unref(m);
        return r < 0 ? r : 0;
}

int bus_subscribe(sd_bus *bus, sd_bus_message_handler_t handler, void *userdata) {
        int r;

        r = sd_bus_match_signal(bus, NULL, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved", handler, userdata);
        if (r < 0)
                return r;
        /* PID 1 only broadcasts job signals to subscribed clients. */
        return sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe", NULL, NULL, NULL);
}
