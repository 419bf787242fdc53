/* SPDX-License-Identifier: MIT */
/*
 * bytes.h - byte helpers the core needs instead of libc's <string.h>:
 * comparison, search, ASCII case folding, decimal and hex conversion, and the
 * appenders for struct buf. Every function is bounded by explicit lengths and
 * never reads past them; none allocates.
 */
#ifndef PITH_BYTES_H
#define PITH_BYTES_H

#include "core.h"

/* True when a[0..n) equals b[0..n). */
bool mem_eq(const void *a, const void *b, size_t n);

/* Index of the first byte c in p[0..n), or n when absent. */
size_t mem_find(const char *p, size_t n, char c);

/* Copies n bytes; the regions must not overlap. Returns dst. */
void *mem_copy(void *dst, const void *src, size_t n);

/* Copies n bytes; the regions may overlap. Returns dst. */
void *mem_move(void *dst, const void *src, size_t n);

/* Sets n bytes to zero. Returns p. */
void *mem_zero(void *p, size_t n);

/* Length of a NUL-terminated string (for constants and argv only). */
size_t cstr_len(const char *s);

static inline char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
}

static inline bool ascii_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Value of an ASCII hex digit, or -1. */
int hex_value(char c);

/* ASCII case-insensitive equality of two spans. */
bool span_eq_nocase(struct span a, struct span b);

/* Exact equality of a span and a NUL-terminated constant. */
bool span_eq_cstr(struct span a, const char *s);

/* ASCII case-insensitive equality of a span and a NUL-terminated constant. */
bool span_eq_nocase_cstr(struct span a, const char *s);

/* The same two for a string literal, whose length is known when compiled:
 * the _cstr forms count their constant on every call, which on HTTP/2's
 * path (each field of each request and response checked against several
 * names) was 4% of a small request's CPU. */
#define span_eq_lit(a, lit)        span_eq_len((a), "" lit, sizeof(lit) - 1)
#define span_eq_nocase_lit(a, lit) span_eq_nocase((a), span_make("" lit, sizeof(lit) - 1))

static inline bool span_eq_len(struct span a, const char *s, size_t n)
{
    return a.n == n && mem_eq(a.p, s, n);
}

/* The span without leading and trailing SP/HTAB (RFC 9110 OWS). */
struct span span_trim_ows(struct span s);

/* Parses s as 1*DIGIT. Returns false on an empty span, a non-digit, or a
 * value above UINT64_MAX (20-digit numbers are handled exactly). */
bool u64_parse(struct span s, uint64_t *out);

/* Writes v in decimal to out (at least 20 bytes); returns the length. */
size_t u64_format(uint64_t v, char *out);

/* v / 10 by shifts and adds (Hacker's Delight, divu10): no division. */
static inline uint64_t u64_div10_shift(uint64_t v)
{
    uint64_t q = (v >> 1) + (v >> 2); /* 0.75 v, then towards 0.8 v */
    q += q >> 4;
    q += q >> 8;
    q += q >> 16;
    q += q >> 32;
    q >>= 3; /* 0.1 v, low by at most one */
    uint64_t r = v - ((q << 3) + (q << 1));
    return q + (r > 9);
}

/* v / 10: a multiplication on 64-bit targets, u64_div10_shift on 32-bit
 * ones, which so link no 64-bit division helper for the decimal digits of
 * a 64-bit number (libgcc's __udivdi3: 1,116 bytes on mips). */
static inline uint64_t u64_div10(uint64_t v)
{
    return UINTPTR_MAX > 0xffffffffu ? v / 10 : u64_div10_shift(v);
}

/* The largest value whose tenfold plus d still fits in 64 bits is
 * (UINT64_MAX - d) / 10; this asks the same with constants only. */
static inline bool u64_times10_fits(uint64_t v, unsigned d)
{
    return v < UINT64_MAX / 10 || (v == UINT64_MAX / 10 && d <= UINT64_MAX % 10);
}

/* Writes v in lower-case hex to out (at least 16 bytes); returns the length. */
size_t u64_format_hex(uint64_t v, char *out);

/* Appenders: on overflow they write nothing and set b->full. */
void buf_put(struct buf *b, const void *p, size_t n);
void buf_put_span(struct buf *b, struct span s);
void buf_put_cstr(struct buf *b, const char *s);
void buf_put_char(struct buf *b, char c);
void buf_put_u64(struct buf *b, uint64_t v);

/* Appends v in decimal left-padded with '0' to at least `width` digits. */
void buf_put_u64_pad(struct buf *b, uint64_t v, unsigned width);

#endif
