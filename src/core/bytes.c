/* SPDX-License-Identifier: MIT */
/*
 * bytes.c - byte helpers in place of libc's string functions. The loops are
 * written plainly; the compiler may turn them into calls to memcpy/memset,
 * which both builds provide (glibc, or rt_raw.c in the tiny build).
 */
#include "bytes.h"

bool mem_eq(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return false;
    return true;
}

size_t mem_find(const char *p, size_t n, char c)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == c)
            return i;
    return n;
}

void *mem_copy(void *dst, const void *src, size_t n)
{
    return __builtin_memcpy(dst, src, n);
}

void *mem_move(void *dst, const void *src, size_t n)
{
    return __builtin_memmove(dst, src, n);
}

void *mem_zero(void *p, size_t n)
{
    return __builtin_memset(p, 0, n);
}

size_t cstr_len(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool span_eq_nocase(struct span a, struct span b)
{
    if (a.n != b.n)
        return false;
    for (size_t i = 0; i < a.n; i++)
        if (ascii_lower(a.p[i]) != ascii_lower(b.p[i]))
            return false;
    return true;
}

bool span_eq_cstr(struct span a, const char *s)
{
    size_t n = cstr_len(s);
    return a.n == n && mem_eq(a.p, s, n);
}

bool span_eq_nocase_cstr(struct span a, const char *s)
{
    return span_eq_nocase(a, span_make(s, cstr_len(s)));
}

struct span span_trim_ows(struct span s)
{
    while (s.n && (s.p[0] == ' ' || s.p[0] == '\t')) {
        s.p++;
        s.n--;
    }
    while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
        s.n--;
    return s;
}

bool u64_parse(struct span s, uint64_t *out)
{
    uint64_t v = 0;
    if (s.n == 0)
        return false;
    for (size_t i = 0; i < s.n; i++) {
        if (!ascii_is_digit(s.p[i]))
            return false;
        unsigned d = (unsigned)(s.p[i] - '0');
        if (!u64_times10_fits(v, d))
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* The digits of v at the end of tmp[20]; returns where they start. */
static char *u64_digits(uint64_t v, char *tmp)
{
    char *p = tmp + 20;
    do {
        uint64_t q = u64_div10(v);
        *--p = (char)('0' + (v - q * 10));
        v = q;
    } while (v);
    return p;
}

size_t u64_format(uint64_t v, char *out)
{
    char tmp[20];
    char *p = u64_digits(v, tmp);
    size_t n = (size_t)(tmp + 20 - p);
    mem_copy(out, p, n);
    return n;
}

size_t u64_format_hex(uint64_t v, char *out)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = digits[v & 15];
        v >>= 4;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

void buf_put(struct buf *b, const void *p, size_t n)
{
    if (b->full || n > b->cap - b->len) {
        b->full = true;
        return;
    }
    if (b->p) /* a buf without memory only counts (see core.h) */
        mem_copy(b->p + b->len, p, n);
    b->len += n;
}

void buf_put_span(struct buf *b, struct span s)
{
    buf_put(b, s.p, s.n);
}

void buf_put_cstr(struct buf *b, const char *s)
{
    buf_put(b, s, cstr_len(s));
}

void buf_put_char(struct buf *b, char c)
{
    buf_put(b, &c, 1);
}

void buf_put_u64(struct buf *b, uint64_t v)
{
    char tmp[20];
    char *p = u64_digits(v, tmp);
    buf_put(b, p, (size_t)(tmp + 20 - p));
}

void buf_put_u64_pad(struct buf *b, uint64_t v, unsigned width)
{
    char tmp[20];
    size_t n = u64_format(v, tmp);
    for (size_t i = n; i < width; i++)
        buf_put_char(b, '0');
    buf_put(b, tmp, n);
}
