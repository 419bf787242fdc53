/* SPDX-License-Identifier: MIT */
/*
 * escape.h - the three ways bytes from the outside world (file names,
 * request targets, client headers) are made harmless before pith writes them
 * into HTML, URLs or logs. Each appends to a struct buf and never writes a
 * byte of the input unescaped where it could end a token, a line or a tag.
 */
#ifndef PITH_ESCAPE_H
#define PITH_ESCAPE_H

#include "core.h"

/* HTML text and attribute values: & < > " ' become entities; every other
 * byte, including UTF-8 sequences, is copied. Safe inside "..." and '...'
 * attributes and in text. */
void escape_html(struct buf *b, struct span s);

/* A path for an href or a Location: every byte outside RFC 3986 unreserved
 * (ALPHA DIGIT - . _ ~) and '/' becomes %XX (upper-case hex), so no CR, LF,
 * quote, space, '?', '#' or '%' survives. Set `encode_slash` to encode '/'
 * too (a single file name as one path segment). */
void escape_uri_path(struct buf *b, struct span s, bool encode_slash);

/* A log field: bytes outside 0x20..0x7E, '"' and '\\' become \xHH, so a
 * request cannot end a line or a quoted field (no forged log lines). */
void escape_log(struct buf *b, struct span s);

/* A JSON string body (without the quotes): '"', '\\' and bytes below 0x20
 * escaped; bytes >= 0x80 copied as is (file names are shown as UTF-8; a name
 * that is not valid UTF-8 gets its bad bytes as \u00XX so the output stays
 * valid JSON). */
void escape_json(struct buf *b, struct span s);

#endif
