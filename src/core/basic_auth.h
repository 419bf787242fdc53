/* SPDX-License-Identifier: MIT */
/*
 * basic_auth.h - the credentials of an Authorization field value in the
 * Basic scheme (RFC 7617 §2): "Basic" (any case), one or more spaces, and
 * token68, the base64 (RFC 4648 §4, the standard alphabet, padded) of
 * user-id ":" password. Decoded strictly: a character outside the
 * alphabet, a missing or misplaced '=', bits left over in the last
 * character, or a user-id without ':' after it, is no credential. Pure;
 * the decoded bytes go to the caller's buffer.
 */
#ifndef PITH_BASIC_AUTH_H
#define PITH_BASIC_AUTH_H

#include "core.h"

/* The credentials' bytes decoded into out[cap]: *user and *password point
 * there (the password is also NUL-terminated for crypt, and then holds no
 * NUL byte: one inside refuses the credentials). The token68's span in
 * *token. Returns 0, -1 when the value is not Basic credentials, -2 when
 * they do not fit. */
int basic_auth_parse(struct span value, char *out, size_t cap, struct span *user,
                     struct span *password, struct span *token);

#endif
