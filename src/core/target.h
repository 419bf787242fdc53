/* SPDX-License-Identifier: MIT */
/*
 * target.h - from request-target (RFC 9112 §3.2) to a safe path relative to
 * the document root.
 *
 * target_split() takes the raw target apart; target_normalize() percent-decodes
 * the path exactly once, removes dot-segments without ever climbing above the
 * root, and applies the dotfile rule. The output never starts with '/', never
 * contains an empty, "." or ".." segment, a NUL, or an encoded '/', so it can
 * be handed to openat() beneath the root as is.
 */
#ifndef PITH_TARGET_H
#define PITH_TARGET_H

#include "core.h"

enum target_form {
    TARGET_ORIGIN,   /* "/path?query" */
    TARGET_ABSOLUTE, /* "http://authority/path?query" (http or https) */
    TARGET_ASTERISK, /* "*" (only meaningful with OPTIONS) */
};

struct target {
    enum target_form form;
    struct span authority; /* absolute-form only: host[:port], no userinfo */
    struct span path;      /* raw path, starts with '/'; "/" (a constant, not
                            * in raw) when the absolute-form path is empty;
                            * "*" for the asterisk-form */
    bool has_query;
    struct span query; /* raw, without the '?' */
};

/*
 * Splits a target already known to be 1*VCHAR.
 * Returns 0, or -400 for: a '#' anywhere (fragments are never sent, RFC 9112
 * §3.2), a form that is none of the three above (e.g. "../x", "x"), a scheme
 * other than http/https, userinfo or an empty host in the authority.
 */
int target_split(struct span raw, struct target *out);

/* True when `a` is uri-host [ ":" port ] (RFC 3986 §3.2.2-3, RFC 9110 §7.2):
 * an IP-literal ("[" IPv6address or IPvFuture "]"), or a reg-name of
 * unreserved, pct-encoded and sub-delims (which covers IPv4address), then an
 * optional ':' and *DIGIT. An empty host is valid here (a Host field may be
 * empty); target_split() refuses one in the absolute-form. */
bool target_host_valid(struct span a);

/* Flags set by target_normalize() (and target_normalize_all()). */
/* The normalized path names a directory form: the raw path ends in '/',
 * "/." or "/.." ("/%2e" too: dot-segments are recognized after decoding),
 * and RFC 3986 §5.2.4 keeps a trailing '/' there. "/" sets it as well. */
#define TARGET_TRAILING_SLASH 1u
/* target_normalize_all() only: a segment starts with '.' (what
 * target_normalize() refuses with -403). */
#define TARGET_HIDDEN 2u

/*
 * Turns a raw path into a relative path in out[0..cap) (not NUL-terminated).
 * "/" and "/./" give the empty path (the root itself).
 *
 * Returns the length written (>= 0) and sets *flags, or, checked in this
 * order (the first that applies wins; *flags is 0):
 *   -400  the path does not start with '/'; a bad %xx escape, %00 or a raw
 *         NUL, an encoded '/' (%2F) inside a segment; or a ".." that would
 *         climb above the root (anywhere in the path);
 *   -414  the normalized path is longer than cap bytes;
 *   -403  a remaining segment starts with '.', unless it is the first
 *         segment and equals ".well-known" (later segments are checked
 *         again: "/.well-known/.x" is 403; "/.x/../y" is "y").
 * Empty segments ("a//b") are dropped. Dot-segments are recognized after
 * decoding (so "/%2e%2e/x" climbs and is 400, exactly like "/../x"), and a
 * decoded byte is never decoded again ("%252e" gives the segment "%2e").
 * out[len..cap) may be overwritten with scratch bytes.
 */
long target_normalize(struct span path, char *out, size_t cap, unsigned *flags);

/* The same, except that a hidden segment is no error: the path is written
 * and TARGET_HIDDEN set (basic auth answers for a protected prefix before
 * the dotfile rule does, so that no rule shows through the password). */
long target_normalize_all(struct span path, char *out, size_t cap, unsigned *flags);

/* The most a Location of target_dir_location() may take: a request line's
 * worth (HTTP_MAX_REQUEST_LINE) and a little. A longer one is answered 414. */
#define TARGET_LOCATION_MAX (8192 + 8)

/* The Location of the 301 for a directory named without its trailing slash
 * (t's path named a directory; `normalized` is target_normalize()'s path of
 * it), into b: t's raw path with '/' added, then '?' and the query when t
 * has one. The raw path is kept unless it could read as another host in a
 * browser ("//host", or a backslash, which browsers take for '/'): then
 * '/' and the normalized path, percent-encoded (escape_uri_path). One
 * function for the full build's handler and the router profile; callers
 * give b at most TARGET_LOCATION_MAX bytes and answer 414 on b->full. */
void target_dir_location(struct buf *b, const struct target *t, struct span normalized);

#endif
