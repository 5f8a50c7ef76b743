// SPDX-License-Identifier: GPL-2.0
/*
 * schedw - write a value into a (cgroup) file with one write(2) and report
 * exactly what the kernel said.
 *
 *   schedw FILE VALUE     write VALUE's bytes as given (no newline added)
 *   schedw -n FILE VALUE  append a newline, as "echo VALUE > FILE" does
 *   schedw -e FILE VALUE  VALUE with C escapes: \n \t \\ \xHH (\x00 a NUL)
 *   schedw -s FILE V1 V2...  one open, then one write(2) per value on
 *                         that one file descriptor (a number written in
 *                         parts); one result line per value
 *   schedw -p FILE1 V1 FILE2 V2...  pairs: for each, open FILE, one
 *                         write(2) of V, close; one result line per pair
 *                         (many writes for one fork: under TCG a fork
 *                         costs more than the write it would wrap)
 *
 * Prints "ok" and exits 0 when write(2) took every byte; otherwise prints
 * the errno name (EINVAL, ERANGE, ENOENT, ...) or "short N/M" and exits 1
 * (-s, -p: exit 1 if any write failed).  Options combine (-s or -p with
 * -e -n).
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

/* Decode \n \t \\ \xHH in place; returns the length (may contain NULs). */
static size_t unescape(char *s)
{
	char *o = s, *i = s;
	unsigned int v;
	int n;

	while (*i) {
		if (*i != '\\' || !i[1]) {
			*o++ = *i++;
			continue;
		}
		i++;
		switch (*i) {
		case 'n': *o++ = '\n'; i++; break;
		case 't': *o++ = '\t'; i++; break;
		case 'x':
			if (sscanf(i + 1, "%2x%n", &v, &n) == 1) {
				*o++ = (char)v;
				i += 1 + n;
				break;
			}
			/* fall through */
		default: *o++ = *i++; break;
		}
	}
	return o - s;
}

/* One write(2) of VALUE to fd: prints the result, 0 if every byte went. */
static int write_one(int fd, const char *value, int newline, int escapes)
{
	size_t len = strlen(value);
	char *buf = malloc(len + 2);
	ssize_t n;
	int ret = 1;

	if (!buf) {
		printf("ENOMEM\n");
		return 1;
	}
	memcpy(buf, value, len + 1);
	if (escapes)
		len = unescape(buf);
	if (newline)
		buf[len++] = '\n';
	n = write(fd, buf, len);
	if (n < 0)
		printf("%s\n", errname(errno));
	else if ((size_t)n != len)
		printf("short %zd/%zu\n", n, len);
	else {
		printf("ok\n");
		ret = 0;
	}
	free(buf);
	return ret;
}

/* -p: open, write and close each FILE VALUE pair in turn. */
static int write_pairs(int npairs, char **pairs, int newline, int escapes)
{
	int fd, i, ret = 0;

	for (i = 0; i < npairs; i++) {
		fflush(stdout);
		fd = open(pairs[2 * i], O_WRONLY);
		if (fd < 0) {
			printf("%s\n", errname(errno));
			ret = 1;
			continue;
		}
		if (write_one(fd, pairs[2 * i + 1], newline, escapes))
			ret = 1;
		close(fd);
	}
	return ret;
}

int main(int argc, char **argv)
{
	int newline = 0, escapes = 0, seq = 0, pairs = 0, fd, i, ret = 0;

	while (argc > 1 && argv[1][0] == '-' && argv[1][1] && !argv[1][2] && strchr("nesp", argv[1][1])) {
		if (argv[1][1] == 'n')
			newline = 1;
		else if (argv[1][1] == 'e')
			escapes = 1;
		else if (argv[1][1] == 's')
			seq = 1;
		else
			pairs = 1;
		argv++;
		argc--;
	}
	if ((seq && pairs) ||
	    (pairs ? argc < 3 || argc % 2 == 0 : seq ? argc < 3 : argc != 3)) {
		fprintf(stderr, "usage: schedw [-n] [-e] FILE VALUE | schedw -s [-n] [-e] FILE VALUE...\n"
				"       schedw -p [-n] [-e] FILE VALUE [FILE VALUE]...\n");
		return 2;
	}
	if (pairs)
		return write_pairs((argc - 1) / 2, argv + 1, newline, escapes);
	fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	for (i = 2; i < argc; i++) {
		fflush(stdout);
		ret |= write_one(fd, argv[i], newline, escapes);
	}
	if (close(fd) && !ret) {
		printf("%s\n", errname(errno));
		return 1;
	}
	return ret;
}
