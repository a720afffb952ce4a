/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "caad/sysfs.h"

const char *caad_sysroot_canonical(const char *root)
{
	struct stat a, b;

	if (caad_sysroot_is_host(root) || stat(root, &a) < 0 || stat("/", &b) < 0)
		return root;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino ? "/" : root;
}

const char *caad_path_absolute(const char *p, char **owned)
{
	char cwd[PATH_MAX];

	if (!p || !p[0] || p[0] == '/' || !getcwd(cwd, sizeof(cwd)) || asprintf(owned, "%s/%s", cwd, p) < 0)
		return p;
	return *owned;
}

int caad_path(char **ret, const char *root, const char *fmt, ...)
{
	_cleanup_free_ char *rel = NULL;
	char *p;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&rel, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;

	if (caad_sysroot_is_host(root))
		root = "";
	/* drop a trailing slash of root so "root/" + "/proc" has one */
	size_t rl = strlen(root);
	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	if (asprintf(&p, "%.*s%s", (int)rl, root, rel) < 0)
		return -ENOMEM;
	*ret = p;
	return 0;
}

static void trim_trailing(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = 0;
}

static int read_fd(int fd, bool trim, char **ret);

static int read_whole(const char *path, bool trim, char **ret)
{
	_cleanup_close_ int fd = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return read_fd(fd, trim, ret);
}

int caad_read_file(const char *path, char **ret)
{
	return read_whole(path, true, ret);
}

int caad_read_file_raw(const char *path, char **ret)
{
	return read_whole(path, false, ret);
}

/* What a file that is neither a regular one nor a directory is, for people. */
static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
	case S_IFBLK:
		return "a device";
	default:
		return "a special file";
	}
}

static int read_own(const char *path, bool trim, char **ret, const char **ret_kind)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (ret_kind)
		*ret_kind = NULL;
	/* O_NONBLOCK: the open of a FIFO would wait for a writer (a regular
	 * file reads as without it). A symbolic link is followed, as before:
	 * one to a good store (a state dir moved by hand) is read */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* a directory cannot be read, as read() says: not set aside, nor
	 * written over, while it is there (an admin's, or a mistake) */
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode)) {
		if (ret_kind)
			*ret_kind = file_kind(st.st_mode);
		return -EBADFD;
	}
	return read_fd(fd, trim, ret);
}

int caad_read_own_file(const char *path, char **ret, const char **ret_kind)
{
	return read_own(path, true, ret, ret_kind);
}

int caad_read_own_file_raw(const char *path, char **ret, const char **ret_kind)
{
	return read_own(path, false, ret, ret_kind);
}

static int read_fd(int fd, bool trim, char **ret)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 4096, len = 0;

	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k;

		if (len + 1 >= size) {
			if (size >= 64u << 20)
				return -EFBIG;
			char *n = realloc(buf, size * 2);
			if (!n)
				return -ENOMEM;
			buf = n;
			size *= 2;
		}
		k = read(fd, buf + len, size - len - 1);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = 0;
	if (memchr(buf, 0, len))
		return -EBADMSG; /* binary junk where text was expected */
	if (trim)
		trim_trailing(buf);
	*ret = TAKE_PTR(buf);
	return 0;
}

int caad_read_line(const char *path, char *buf, size_t size)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = caad_read_file(path, &s);
	if (r < 0)
		return r;
	char *nl = strchr(s, '\n');
	if (nl)
		*nl = 0;
	if (strlen(s) >= size)
		return -ENOBUFS;
	strcpy(buf, s);
	return 0;
}

int caad_write_file(const char *path, const char *value)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *line = NULL;
	ssize_t k;
	int n;

	/* O_TRUNC: procfs/sysfs ignore it; a regular file (a fake tree) needs it */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	n = asprintf(&line, "%s\n", value);
	if (n < 0)
		return -ENOMEM;
	k = write(fd, line, (size_t)n);
	if (k < 0)
		return -errno;
	if (k != n)
		return -EIO;
	return 0;
}

/* A temporary file is PATH.caadtmp.XXXXXX: a name nobody else gives a
 * file (PATH.XXXXXX alone is also "journal.backup"), so that sweeping
 * what a killed write left removes only caad's. */
#define TMP_INFIX ".caadtmp."

int caad_open_tmp(const char *path, char **ret_tmp)
{
	char *tmp;
	int fd;

	if (asprintf(&tmp, "%s" TMP_INFIX "XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		free(tmp);
		return fd;
	}
	*ret_tmp = tmp;
	return fd;
}

static int write_replace(const char *path, const char *data, size_t len, unsigned mode, bool durable)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	fd = caad_open_tmp(path, &tmp);
	if (fd < 0)
		return fd;
	while (len > 0) {
		ssize_t k = write(fd, data, len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto fail;
		}
		data += k;
		len -= (size_t)k;
	}
	if (fchmod(fd, mode) < 0 || (durable && fsync(fd) < 0)) {
		r = -errno;
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	unlink(tmp);
	return r;
}

int caad_write_file_atomic(const char *path, const char *data, size_t len, unsigned mode)
{
	return write_replace(path, data, len, mode, true);
}

int caad_write_file_replace(const char *path, const char *data, size_t len, unsigned mode)
{
	return write_replace(path, data, len, mode, false);
}

/* "BASE.caadtmp." and six characters of mkostemp()'s alphabet */
static bool is_leftover(const char *name, const char *base, size_t base_len)
{
	size_t infix = strlen(TMP_INFIX);

	if (strlen(name) != base_len + infix + 6 || strncmp(name, base, base_len) != 0 ||
	    strncmp(name + base_len, TMP_INFIX, infix) != 0)
		return false;
	for (const char *c = name + base_len + infix; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
			return false;
	return true;
}

int caad_remove_atomic_leftovers(const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	_cleanup_free_ char *dir = NULL;
	struct dirent *de;
	size_t base_len;
	int n = 0, r = 0;
	DIR *d;

	/* "/x": "/"; "a/x": "a"; "x": "." */
	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	base_len = strlen(base);
	if (base_len == 0)
		return -EINVAL;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		struct stat st;

		if (!is_leftover(de->d_name, base, base_len) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0) {
			r = r ?: -errno;
			continue;
		}
		n++;
	}
	closedir(d);
	return r < 0 ? r : n;
}

int caad_mkdir_p(const char *path, unsigned mode)
{
	char buf[PATH_MAX];

	if (!path[0])
		return -ENOENT; /* as mkdir("") */
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}
