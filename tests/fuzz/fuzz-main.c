/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fuzz target without libFuzzer: runs LLVMFuzzerTestOneInput() once on
 * every file named, descending into directories. Linked with each target in
 * ordinary builds so that the seed corpora, and the reproducers of past
 * findings added to them, are regression tests of every build (gcc, ASan,
 * valgrind). An empty corpus is an error: it means the path is wrong.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* The input in a buffer of exactly its size, as libFuzzer hands it over, so
 * that ASan and valgrind see a read past its end. */
static int run_file(const char *path, size_t size)
{
	uint8_t *data = malloc(size ? size : 1);
	FILE *f = fopen(path, "re");

	if (!data)
		abort();
	if (!f || fread(data, 1, size, f) != size) {
		fprintf(stderr, "%s: cannot read it\n", path);
		if (f)
			fclose(f);
		free(data);
		return -EIO;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static int not_hidden(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

static int run_path(const char *path, unsigned *n)
{
	struct dirent **list;
	struct stat st;
	int k, r = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "%s: %m\n", path);
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		r = run_file(path, (size_t)st.st_size);
		if (r == 0)
			(*n)++;
		return r;
	}

	k = scandir(path, &list, not_hidden, alphasort);
	if (k < 0) {
		fprintf(stderr, "%s: %m\n", path);
		return -errno;
	}
	for (int i = 0; i < k; i++) {
		char *sub;

		if (r == 0) {
			if (asprintf(&sub, "%s/%s", path, list[i]->d_name) < 0)
				abort();
			r = run_path(sub, n);
			free(sub);
		}
		free(list[i]);
	}
	free(list);
	return r;
}

int main(int argc, char *argv[])
{
	unsigned n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &n) < 0)
			return 1;
	if (n == 0) {
		fprintf(stderr, "no inputs found\n");
		return 1;
	}
	printf("%u inputs ran\n", n);
	return 0;
}
