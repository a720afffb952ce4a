/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "caad/macro.h"

/*
 * All procfs/sysfs access goes through a root prefix so that tests and
 * demos can point caad at a fake tree: with root "/tmp/x", "/proc/irq/5/…"
 * is read from "/tmp/x/proc/irq/5/…". Root "" or "/" is the host.
 */

/* Whether root is the host's own tree (NULL, "" or "/"), not a fake one. */
static inline bool caad_sysroot_is_host(const char *root)
{
	return !root || !root[0] || (root[0] == '/' && !root[1]);
}

/* root, or "/" where root names the host's own root by another spelling
 * ("//", "/./", a link to /, a bind mount of it: the same directory),
 * which caad_path() would read and write as the host's while
 * caad_sysroot_is_host() took it for a fake tree. */
const char *caad_sysroot_canonical(const char *root);

/* p made absolute against the working directory (for a daemon about to
 * chdir("/")): p itself when NULL, absolute, or empty (not a path but
 * "none": --sysroot= and CAAD_CONF_ROOT= mean the host's own root, which
 * the directory caad started in is not), else a copy in *owned (p again
 * where that fails). */
const char *caad_path_absolute(const char *p, char **owned);

/* Build ROOT + the formatted path into a new string. Returns 0 or -ENOMEM. */
int caad_path(char **ret, const char *root, const char *fmt, ...) _printf_(3, 4);

/* Read a whole (small) file into a NUL-terminated string with trailing
 * newlines/spaces removed. Returns 0 or a negative errno. */
int caad_read_file(const char *path, char **ret);
/* The same, untrimmed: every byte as the file holds it (caad's own files,
 * whose last field may be empty). */
int caad_read_file_raw(const char *path, char **ret);
/* caad_read_file() of a file caad itself writes, by rename (a store):
 * without waiting on a FIFO's writer. -EISDIR for a directory (what a
 * read() of one says), -EBADFD for anything else but a regular file (a
 * FIFO, a socket, a device), with what it is in *ret_kind (may be NULL),
 * "a FIFO" and the like. A symbolic link is followed. */
int caad_read_own_file(const char *path, char **ret, const char **ret_kind);
/* The same, untrimmed (a journal, whose last field may be empty). */
int caad_read_own_file_raw(const char *path, char **ret, const char **ret_kind);
/* Read one line of a file into buf (trimmed). */
int caad_read_line(const char *path, char *buf, size_t size);
/* Write value (a newline is added) in one write(2). Returns 0 or -errno,
 * exactly as the kernel answered the write. */
int caad_write_file(const char *path, const char *value);
/* Write data to path atomically: temp file in the same directory, fsync,
 * rename. mode is the file mode. */
int caad_write_file_atomic(const char *path, const char *data, size_t len, unsigned mode);
/* The same without the fsync: a reader sees the old file or the new one,
 * never a part, but a power loss may leave either. For what is written
 * again after every scan and matters only while caad runs (trials.json,
 * MetricsFile=), where an fsync a scan would cost a disk flush each time. */
int caad_write_file_replace(const char *path, const char *data, size_t len, unsigned mode);
/* A new temporary file beside path, for a write renamed over it:
 * "PATH.caadtmp.XXXXXX" (its name in *ret_tmp). Returns its fd, or -errno. */
int caad_open_tmp(const char *path, char **ret_tmp);
/* The temporary files of caad_open_tmp() (regular files) that a write
 * killed before its rename left beside path: removed. Returns how many, 0
 * when path's directory does not exist, or -errno. */
int caad_remove_atomic_leftovers(const char *path);
/* mkdir -p */
int caad_mkdir_p(const char *path, unsigned mode);
