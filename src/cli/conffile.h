/* SPDX-License-Identifier: MIT */
/*
 * conffile.h - reading `pith --config FILE` (issue 22): the file and the
 * files its `include GLOB` lines name, in order, as items of core's line
 * grammar (core/conf.h), each with the file it came from. What the items
 * mean is config.c's; this file only reads, expands includes and reports
 * what it could not read as error items. Both builds share it (it uses
 * sys.h and what pith-tiny's runtime gives in place of libc).
 *
 * `include GLOB` is read in place of its line: GLOB is relative to the
 * including file's directory unless absolute, its last component may hold
 * a pattern (core/glob.h: *, ?, [...]) and matches the names in that
 * directory that do not start with '.', in byte order (a pattern that
 * matches nothing is no error: sites-enabled/ may be empty); a GLOB without
 * a pattern must name a file. Includes nest 8 deep at most.
 */
#ifndef PITH_CONFFILE_H
#define PITH_CONFFILE_H

#include "core/conf.h"

#define CONFFILE_FILES_MAX 64
#define CONFFILE_TEXT_MAX  (1024 * 1024) /* all files' bytes together */

/* One item: it->value (and, for an option, it->name) are NUL-terminated in
 * place, in memory that lives as long as the process. file is the path as
 * given or joined, for messages. */
typedef void (*conffile_fn)(void *ctx, const char *file, const struct conf_item *it);

/* Reads path and its includes, calling fn for each item in file order.
 * Returns the number of files read (0: path itself could not be, after an
 * error item). */
unsigned conffile_read(const char *path, conffile_fn fn, void *ctx);

#endif
