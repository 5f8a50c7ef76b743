/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target: any bytes as a config file, then the checks across
 * sections, the dump, and turning groups into placement requests on the
 * QEMU guest topology and placing them. Built with -fsanitize=fuzzer when
 * clang has it; else FUZZ_STANDALONE gives a deterministic mutation driver.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "placement.h"
#include "topology.h"

static struct topology topo;
static FILE *devnull;

static void setup(void) {
        struct topo_input in = {
                .kernel = true, .max_level = 3, .nlevels = 3,
                .names = { "smt", "mc", "die" },
                .spans = { "0-1\n2-3\n4-5\n6-7\n", "0-3\n4-7\n", "0-7\n" },
                .smt_part = "0-1\n2-3\n4-5\n6-7\n", .pkg_part = "0-3\n4-7\n", .llc_part = "0-3\n4-7\n",
        };
        char err[256];

        if (topology_build(&in, &topo, err, sizeof(err)) < 0)
                abort();
        devnull = fopen("/dev/null", "w");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static bool ready;
        struct config c;
        struct config_errors e = {};
        char *text;

        if (!ready) {
                setup();
                ready = true;
        }
        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        config_init(&c);
        config_parse_string(&c, text, "fuzz.conf", &e);
        config_finish(&c, &e);
        config_dump(&c, devnull);
        if (c.ngroups && c.ngroups <= 64) {
                struct placement_request req[64];
                struct placement_result res[64];
                char errbuf[64][256];
                for (size_t i = 0; i < c.ngroups; i++)
                        config_group_to_request(&c, &c.groups[i], &topo, &req[i], errbuf[i], sizeof(errbuf[i]), NULL, 0);
                placement_compute(&topo, &(struct placement_options) { .reserved = &c.daemon.reserved, .repack = c.daemon.repack },
                                  c.ngroups, req, res);
        }
        config_errors_free(&e);
        config_free(&c);
        free(text);
        return 0;
}

#ifdef FUZZ_STANDALONE
/* Deterministic: seeds from argv files, byte flips/inserts/splices of
 * INI tokens, for -runs=N iterations. */
static const char *const tokens[] = { "[", "]", "=", ":", ";", "#", "\n", " ", "[daemon]", "Level=", "core",
                                      "Spans=", "CPUs=", "Slice=a.slice", "CgroupPath=/x", "0-7", "\xEF\xBB\xBF" };

int main(int argc, char **argv) {
        unsigned long runs = 100000, seed = 1;
        char *seedbuf[64];
        size_t seedlen[64], nseeds = 0;

        for (int i = 1; i < argc; i++) {
                if (!strncmp(argv[i], "-help", 5)) {
                        printf("usage: fuzz-config [-runs=N] [-seed=N] SEED-FILE...\n");
                        return 0;
                }
                if (!strncmp(argv[i], "-runs=", 6))
                        runs = strtoul(argv[i] + 6, NULL, 10);
                else if (!strncmp(argv[i], "-seed=", 6))
                        seed = strtoul(argv[i] + 6, NULL, 10);
                else if (argv[i][0] != '-' && nseeds < 64) {
                        FILE *f = fopen(argv[i], "r");
                        if (!f)
                                continue;
                        seedbuf[nseeds] = malloc(1 << 16);
                        seedlen[nseeds] = fread(seedbuf[nseeds], 1, 1 << 16, f);
                        fclose(f);
                        nseeds++;
                }
        }
        srandom(seed);
        for (unsigned long r = 0; r < runs; r++) {
                char buf[8192];
                size_t len = 0;
                if (nseeds) {
                        size_t s = random() % nseeds;
                        len = seedlen[s] < sizeof(buf) ? seedlen[s] : sizeof(buf);
                        memcpy(buf, seedbuf[s], len);
                }
                for (int m = random() % 8; m >= 0; m--) {
                        size_t at = len ? random() % len : 0;
                        switch (random() % 3) {
                        case 0:
                                if (len)
                                        buf[at] = (char) random();
                                break;
                        case 1: {
                                const char *t = tokens[random() % (sizeof(tokens) / sizeof(tokens[0]))];
                                size_t tl = strlen(t);
                                if (len + tl < sizeof(buf)) {
                                        memmove(buf + at + tl, buf + at, len - at);
                                        memcpy(buf + at, t, tl);
                                        len += tl;
                                }
                                break;
                        }
                        default:
                                if (len) {
                                        size_t n = random() % (len - at + 1);
                                        memmove(buf + at, buf + at + n, len - at - n);
                                        len -= n;
                                }
                        }
                }
                LLVMFuzzerTestOneInput((const uint8_t *) buf, len);
        }
        for (size_t i = 0; i < nseeds; i++)
                free(seedbuf[i]);
        topology_free(&topo);
        fclose(devnull);
        printf("Done %lu runs\n", runs);
        return 0;
}
#endif
