// SPDX-License-Identifier: GPL-2.0
/*
 * schedw - write a value into a (cgroup) file with one write(2) and report
 * exactly what the kernel said.
 *
 *   schedw FILE VALUE     write VALUE's bytes as given (no newline added)
 *   schedw -n FILE VALUE  append a newline, as "echo VALUE > FILE" does
 *
 * Prints "ok" and exits 0 when write(2) took every byte; otherwise prints
 * the errno name (EINVAL, ERANGE, ENOENT, ...) or "short N/M" and exits 1.
 * Usage errors exit 2.  The file is opened without O_CREAT or O_TRUNC, so a
 * missing cgroup file is reported as ENOENT rather than created.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *errname(int e)
{
	static char buf[32];
	const char *n = strerrorname_np(e);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

int main(int argc, char **argv)
{
	int newline = 0, fd;
	size_t len;
	ssize_t n;
	char *buf;

	if (argc > 1 && !strcmp(argv[1], "-n")) {
		newline = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: schedw [-n] FILE VALUE\n");
		return 2;
	}
	len = strlen(argv[2]);
	buf = malloc(len + 2);
	if (!buf)
		return 2;
	memcpy(buf, argv[2], len);
	if (newline)
		buf[len++] = '\n';
	fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	n = write(fd, buf, len);
	if (n < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	if ((size_t)n != len) {
		printf("short %zd/%zu\n", n, len);
		return 1;
	}
	if (close(fd)) {
		printf("%s\n", errname(errno));
		return 1;
	}
	printf("ok\n");
	return 0;
}
