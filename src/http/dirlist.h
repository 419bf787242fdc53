/* SPDX-License-Identifier: MIT */
/*
 * dirlist.h - a directory listing as a body source: the directory is read
 * with getdents in bounded steps, so neither a huge directory nor one full
 * of hidden entries holds the worker for long.
 */
#ifndef PITH_DIRLIST_H
#define PITH_DIRLIST_H

#include "core/listing.h"

struct worker;
struct exchange;

/* Answers x with the listing of dirfd (owned by x from now on) for the
 * normalized path in w->path, in format f (200, streamed), or with an error
 * response. */
void dirlist_start(struct worker *w, struct exchange *x, int dirfd, enum listing_format f);

#endif
