/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int errf(char *err, size_t errlen, int r, const char *fmt, ...) {
        va_list ap;

        if (err && errlen) {
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return r;
}

int read_file_str(const char *path, char **ret) {
        char *buf = NULL;
        size_t len = 0, cap = 0;
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t n;
                if (len + 1 >= cap) {
                        char *nb = realloc(buf, cap ? cap * 2 : 4096);
                        if (!nb) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        buf = nb;
                        cap = cap ? cap * 2 : 4096;
                }
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        goto fail;
                }
                if (n == 0)
                        break;
                len += n;
                if (len > 16 * 1024 * 1024) {
                        r = -EFBIG;
                        goto fail;
                }
        }
        close(fd);
        buf[len] = 0;
        *ret = buf;
        return (int) len;
fail:
        close(fd);
        free(buf);
        return r;
}

int write_file_str(const char *path, const char *s) {
        size_t len = strlen(s);
        ssize_t n;
        int fd, r = 0;

        /* O_TRUNC is ignored by cgroupfs and keeps fixture files exact. */
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        /* cgroupfs parses one write() per value; a short write is an error. */
        n = write(fd, s, len);
        if (n < 0)
                r = -errno;
        else if ((size_t) n != len)
                r = -EIO;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

int write_file_atomic(const char *path, const char *content) {
        char tmp[PATH_MAX];
        size_t len = strlen(content);
        int fd, r = 0;

        if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int) sizeof(tmp))
                return -ENAMETOOLONG;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        if (write(fd, content, len) != (ssize_t) len)
                r = errno ? -errno : -EIO;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp);
        return r;
}

int safe_atoi(const char *s, int *ret) {
        char *end;
        long v;

        if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9')))
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno)
                return -errno;
        while (*end == '\n' || *end == ' ' || *end == '\t')
                end++;
        if (*end || end == s)
                return -EINVAL;
        if (v < INT_MIN || v > INT_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

int strappendf(char **s, const char *fmt, ...) {
        size_t old = *s ? strlen(*s) : 0;
        va_list ap;
        char *n;
        int len;

        va_start(ap, fmt);
        len = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (len < 0)
                return -EINVAL;
        n = realloc(*s, old + len + 1);
        if (!n)
                return -ENOMEM;
        va_start(ap, fmt);
        vsnprintf(n + old, len + 1, fmt, ap);
        va_end(ap);
        *s = n;
        return 0;
}

size_t strcnt(const char *s, char c) {
        size_t n = 0;
        for (; s && *s; s++)
                n += *s == c;
        return n;
}

char *strstrip(char *s) {
        size_t len;
        char *p = s;

        if (!s)
                return s;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
        memmove(s, p, strlen(p) + 1);
        len = strlen(s);
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' || s[len - 1] == '\r'))
                s[--len] = 0;
        return s;
}
