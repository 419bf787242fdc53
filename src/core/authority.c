/* SPDX-License-Identifier: MIT */
/*
 * authority.c - see authority.h. One pass: the host's characters, then the
 * port's; nothing is copied unless all of it is valid.
 */
#include "core/authority.h"

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* ":" 1*5DIGIT, or nothing. */
static bool valid_port(const char *p, size_t n)
{
    if (n == 0)
        return true;
    if (p[0] != ':' || n < 2 || n > 6)
        return false;
    for (size_t i = 1; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return false;
    return true;
}

long authority_host(struct span host, char *out, size_t cap, bool *ipv6)
{
    const char *p = host.p;
    size_t n = host.n, from = 0, end = 0;
    *ipv6 = n > 0 && p[0] == '[';
    if (*ipv6) {
        from = 1;
        end = 1;
        while (end < n && (is_hex(p[end]) || p[end] == ':' || p[end] == '.'))
            end++;
        /* at least "::" inside, and the closing bracket */
        if (end == n || p[end] != ']' || end - from < 2 || !valid_port(p + end + 1, n - end - 1))
            return -1;
    } else {
        while (end < n && (is_alnum(p[end]) || p[end] == '-' || p[end] == '.'))
            end++;
        if (end == 0 || !valid_port(p + end, n - end))
            return -1;
    }
    size_t len = end - from;
    if (len + 1 > cap)
        return -1;
    for (size_t i = 0; i < len; i++)
        out[i] = p[from + i];
    out[len] = '\0';
    return (long)len;
}
