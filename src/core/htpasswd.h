/* SPDX-License-Identifier: MIT */
/*
 * htpasswd.h - one line of a password file for basic auth (issue 22):
 * "user:hash", where the hash is one pith accepts: yescrypt ("$y$"),
 * bcrypt ("$2b$", "$2y$") or SHA-512 crypt ("$6$"), in their crypt(3)
 * syntax. Every other kind is refused with its name, so that an operator
 * learns at start, not at the first sign-in, that a line is weak or is not
 * a hash at all: a plain-text password, DES or MD5 crypt, Apache's $apr1$
 * and {SHA}, SHA-256 crypt, the old bcrypt $2a$. Blank lines and lines
 * starting with '#' are nothing. Pure: the entry's spans point into the
 * line. (libxcrypt checks each accepted hash once more at start.)
 */
#ifndef PITH_HTPASSWD_H
#define PITH_HTPASSWD_H

#include "core.h"

#define HTPASSWD_USER_MAX 255
#define HTPASSWD_HASH_MAX 255

struct htpasswd_entry {
    struct span user; /* no ':', no control byte */
    struct span hash;
};

/* 1 with *e for an entry, 0 for a blank or comment line, -1 with *why (a
 * constant sentence) for anything else, e->user then set when the line has
 * one (the hash is what is wrong). A CR before the line's end is ignored. */
int htpasswd_line(struct span line, struct htpasswd_entry *e, const char **why);

#endif
