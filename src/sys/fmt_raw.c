/* SPDX-License-Identifier: MIT */
/*
 * fmt_raw.c - pith-tiny's printf family, for the start-up code the builds
 * share (src/cli/sockets.c, check.c): one line written by one write(2),
 * unbuffered. Only what those messages use: %s, %.*s, %c, %d, %u, %zu,
 * %llu, %o with a zero-padded width, and %%. An unknown conversion is
 * copied as it stands, never guessed at.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "sys/sys.h"

struct out {
    char *p;
    size_t cap, len; /* len counts what would have been written */
};

static void out_char(struct out *o, char c)
{
    if (o->len + 1 < o->cap)
        o->p[o->len] = c;
    o->len++;
}

static void out_str(struct out *o, const char *s, size_t max)
{
    for (size_t i = 0; i < max && s[i]; i++)
        out_char(o, s[i]);
}

static void out_num(struct out *o, unsigned long long v, unsigned base, unsigned width, bool neg)
{
    char d[24];
    unsigned n = 0;
    do {
        unsigned long long q = v / base; /* one division: see u64_digits (bytes.c) */
        d[n++] = (char)('0' + (v - q * base));
        v = q;
    } while (v);
    if (neg)
        out_char(o, '-');
    for (; width > n; width--)
        out_char(o, '0');
    while (n)
        out_char(o, d[--n]);
}

int vsnprintf(char *out, size_t cap, const char *fmt, va_list ap)
{
    struct out o = {out, cap, 0};
    for (; *fmt; fmt++) {
        const char *start = fmt;
        if (*fmt != '%') {
            out_char(&o, *fmt);
            continue;
        }
        unsigned width = 0, longs = 0;
        size_t prec = (size_t)-1;
        while (*++fmt >= '0' && *fmt <= '9')
            width = width * 10 + (unsigned)(*fmt - '0');
        if (fmt[0] == '.' && fmt[1] == '*') {
            prec = (size_t)va_arg(ap, int);
            fmt += 2;
        }
        for (; *fmt == 'l' || *fmt == 'z'; fmt++)
            longs += *fmt == 'z' ? 2 : 1;
        switch (*fmt) {
        case 's': out_str(&o, va_arg(ap, const char *), prec); break;
        case 'c': out_char(&o, (char)va_arg(ap, int)); break;
        case '%': out_char(&o, '%'); break;
        case 'd': {
            long long v = longs >= 2   ? va_arg(ap, long long)
                          : longs == 1 ? va_arg(ap, long)
                                       : va_arg(ap, int);
            out_num(&o, v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v, 10, width,
                    v < 0);
            break;
        }
        case 'u':
        case 'o': {
            unsigned long long v = longs >= 2   ? va_arg(ap, unsigned long long)
                                   : longs == 1 ? va_arg(ap, unsigned long)
                                                : va_arg(ap, unsigned);
            out_num(&o, v, *fmt == 'o' ? 8 : 10, width, false);
            break;
        }
        default: /* not used by pith: shown as written */
            for (; start <= fmt && *start; start++)
                out_char(&o, *start);
            if (!*fmt)
                fmt--;
        }
    }
    if (cap)
        out[o.len < cap ? o.len : cap - 1] = '\0';
    return (int)o.len;
}

int snprintf(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, cap, fmt, ap);
    va_end(ap);
    return n;
}

static int vwrite_to(FILE *f, const char *fmt, va_list ap)
{
    char line[PATH_MAX + 256]; /* a message may carry a whole path */
    int n = vsnprintf(line, sizeof line, fmt, ap);
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    sys_write((int)(long)f, line, len);
    return n;
}

int fprintf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vwrite_to(f, fmt, ap);
    va_end(ap);
    return n;
}

int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vwrite_to(stdout, fmt, ap);
    va_end(ap);
    return n;
}

int fputs(const char *s, FILE *f)
{
    return (int)sys_write((int)(long)f, s, strlen(s));
}

int fflush(FILE *f)
{
    (void)f;
    return 0; /* nothing is buffered */
}

int atoi(const char *s)
{
    int v = 0;
    bool neg = *s == '-';
    for (s += neg || *s == '+'; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (*s - '0');
    return neg ? -v : v;
}
