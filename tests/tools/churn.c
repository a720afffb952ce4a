/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Many short TCP connections, for caad's churn test:
 *   churn server PORT [BYTES]          accept, read BYTES, close; forever
 *   churn client ADDR PORT N [BYTES]   N times: connect, send BYTES, wait
 *                                      for the server's close, close
 * BYTES: 100 unless given (1..16 MiB; the same on both sides).
 * The server closes first, so TIME_WAIT sits on its side and the client's
 * ephemeral ports last for any N. Prints connections/s at the end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int usage(void)
{
	fprintf(stderr, "usage: churn server PORT [BYTES] | churn client ADDR PORT N [BYTES]\n");
	return 2;
}

#define PAYLOAD_DEFAULT 100
#define PAYLOAD_MAX (16ul << 20)

static char *payload;
static size_t payload_size = PAYLOAD_DEFAULT;

/* BYTES, when given (digits only); -1 when it is not 1..PAYLOAD_MAX */
static int set_payload(const char *arg)
{
	char *end;
	unsigned long v;

	if (arg) {
		if (*arg < '0' || *arg > '9')
			return -1;
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || v == 0 || v > PAYLOAD_MAX)
			return -1;
		payload_size = v;
	}
	payload = malloc(payload_size);
	if (!payload) {
		perror("churn");
		exit(1);
	}
	memset(payload, 'c', payload_size);
	return 0;
}

static int drain(int fd)
{
	char buf[512];
	ssize_t k;

	while ((k = read(fd, buf, sizeof(buf))) > 0)
		;
	return k < 0 ? -errno : 0;
}

static int server(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1024) < 0) {
		perror("churn server");
		return 1;
	}
	for (;;) {
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("accept");
			return 1;
		}
		/* the payload, not EOF: the server must be the first to close */
		size_t got = 0;
		ssize_t k;
		while (got < payload_size && (k = read(c, payload + got, payload_size - got)) > 0)
			got += (size_t)k;
		close(c);
	}
}

static int write_all(int fd)
{
	for (size_t done = 0; done < payload_size;) {
		ssize_t k = write(fd, payload + done, payload_size - done);

		if (k < 0)
			return -errno;
		done += (size_t)k;
	}
	return 0;
}

static int client(const char *addr, unsigned port, unsigned long n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timespec t0, t1;
	unsigned long failed = 0;

	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		return usage();
	/* a server that reads fewer bytes resets: a failed connection (EPIPE),
	 * not a silent death */
	signal(SIGPIPE, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || write_all(fd) < 0 || drain(fd) < 0)
			failed++;
		if (fd >= 0)
			close(fd);
		if (failed > n / 100 + 10) {
			fprintf(stderr, "churn client: %lu of %lu connections failed (last: %m)\n", failed, i + 1);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%lu connections in %.1f s (%.0f/s), %lu failed\n", n, s, (double)n / s, failed);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "server") == 0)
		return set_payload(argc == 4 ? argv[3] : NULL) < 0 ? usage() : server((unsigned)strtoul(argv[2], NULL, 10));
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "client") == 0)
		return set_payload(argc == 6 ? argv[5] : NULL) < 0
		               ? usage()
		               : client(argv[2], (unsigned)strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10));
	return usage();
}
