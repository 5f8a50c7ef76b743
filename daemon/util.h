/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* Format an error message into err and return r (a negative errno), so
 * that error paths read "return errf(err, len, -EINVAL, ...)". */
int errf(char *err, size_t errlen, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Whole small file into a NUL-terminated string (sysfs/cgroupfs files).
 * Returns length or -errno. */
int read_file_str(const char *path, char **ret);
/* Write s to an existing file in one write(), as cgroupfs expects. */
int write_file_str(const char *path, const char *s);
/* Write a whole file atomically: tmp file + rename. */
int write_file_atomic(const char *path, const char *content);

int safe_atoi(const char *s, int *ret);  /* decimal, whole string, trailing \n ok */
int strappendf(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t strcnt(const char *s, char c);
char *strstrip(char *s);  /* in place, returns s; NULL-safe */
