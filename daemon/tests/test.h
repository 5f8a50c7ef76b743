/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One line per test, "PASS name" or "FAIL name: detail", as the harness
 * counts them. A test is a function that returns 0 or fills detail. */

#include <stdio.h>
#include <string.h>

static int test_failures;

static inline void test_report(const char *name, const char *detail) {
        if (detail && *detail) {
                printf("FAIL %s: %s\n", name, detail);
                test_failures++;
        } else
                printf("PASS %s\n", name);
        fflush(stdout);
}
