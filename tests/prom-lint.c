/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prom-lint FILE...: check Prometheus text files strictly (the rules of
 * ctl_prom_parse() in src/caadctl/prometheus.c; "-" is stdin). Prints
 * "FILE: line N: what" for a bad one. Exit 0 when all are good, 1 when one
 * is not, 2 on a usage or read error. For the integration tests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caadctl.h"

static int read_all(FILE *f, char **ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[65536];
	size_t n;

	if (!m)
		return -ENOMEM;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	if (ferror(f) || fclose(m) != 0) {
		free(buf);
		return -EIO;
	}
	if (strlen(buf) != len) {
		free(buf);
		return -EILSEQ; /* a NUL byte */
	}
	*ret = buf;
	return 0;
}

int main(int argc, char **argv)
{
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: prom-lint FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		_cleanup_free_ char *text = NULL;
		_cleanup_(ctl_prom_freep) struct ctl_prom *p = NULL;
		bool std = streq(argv[i], "-");
		FILE *f = std ? stdin : fopen(argv[i], "re");
		size_t samples = 0;
		char err[256];
		int r;

		if (!f) {
			fprintf(stderr, "prom-lint: %s: %s\n", argv[i], strerror(errno));
			return 2;
		}
		r = read_all(f, &text);
		if (!std)
			fclose(f);
		if (r == -EILSEQ) {
			printf("%s: contains a NUL byte\n", argv[i]);
			status = 1;
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "prom-lint: %s: %s\n", argv[i], strerror(-r));
			return 2;
		}
		r = ctl_prom_parse(text, &p, err, sizeof(err));
		if (r == -ENOMEM) {
			fprintf(stderr, "prom-lint: out of memory\n");
			return 2;
		}
		if (r < 0) {
			printf("%s: %s\n", argv[i], err);
			status = 1;
			continue;
		}
		for (size_t k = 0; k < p->n_families; k++)
			samples += p->families[k].n_samples;
		printf("%s: OK, %zu families, %zu samples\n", argv[i], p->n_families, samples);
	}
	return status;
}
