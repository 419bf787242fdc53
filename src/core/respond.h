/* SPDX-License-Identifier: MIT */
/*
 * respond.h - writing a response head (RFC 9112 §4, §5) and the small HTML
 * bodies of error responses into a caller's struct buf. No printf: numbers
 * go through bytes.h. Every response is sent as HTTP/1.1 (RFC 9110 §6.2: the
 * highest minor version we conform to, also to 1.0 clients).
 */
#ifndef PITH_RESPOND_H
#define PITH_RESPOND_H

#include "core.h"

/* The reason phrase of a status pith sends ("Not Found"); "Unknown" for any
 * other code. */
struct span respond_reason(int status);

/* The statuses whose request's end is unknown or untrusted (400, 408, 414,
 * 431, 505): the connection closes after the answer, and nothing pipelined
 * after it is read. One rule for the full build and the router profile. */
bool respond_status_closes(int status);

/* "HTTP/1.1 <status> <reason>\r\n" */
void respond_status_line(struct buf *b, int status);

/* "<name>: <value>\r\n". The caller guarantees value has no CR, LF or NUL. */
void respond_field(struct buf *b, const char *name, struct span value);
void respond_field_cstr(struct buf *b, const char *name, const char *value);
void respond_field_span(struct buf *b, struct span name, struct span value);
void respond_field_u64(struct buf *b, const char *name, uint64_t value);

/* "\r\n": the end of the head. */
void respond_end_head(struct buf *b);

/* The small HTML body of an error response, and its exact length (for
 * Content-Length before the body is written); status is 100..999. The body names the status
 * only: never a path, a file name or anything from the request. */
size_t respond_error_body_len(int status);
void respond_error_body(struct buf *b, int status);

#endif
