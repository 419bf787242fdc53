/* SPDX-License-Identifier: MIT */
/*
 * client_hello.c - a ClientHello's server_name and ALPN extensions, read
 * from the client's bytes before OpenSSL has looked at them (see
 * client_hello.h). Every length is checked against what is left before the
 * bytes it counts are touched.
 */
#include "core/client_hello.h"

#include "core/bytes.h"

static size_t be16(const unsigned char *p)
{
    return (size_t)p[0] << 8 | p[1];
}

bool client_hello_sni(const unsigned char *p, size_t len, struct span *name)
{
    if (len < 2 || be16(p) != len - 2)
        return false;
    for (size_t i = 2; i + 3 <= len;) {
        size_t n = be16(p + i + 1);
        if (n > len - i - 3)
            return false;
        if (p[i] == 0) { /* host_name */
            *name = span_make((const char *)p + i + 3, n);
            return n > 0;
        }
        i += 3 + n;
    }
    return false;
}

bool client_hello_alpn_offers(const unsigned char *p, size_t len, struct span proto)
{
    if (len < 2 || be16(p) != len - 2 || len == 2)
        return false;
    bool found = false;
    for (size_t i = 2; i < len; i += 1 + (size_t)p[i]) {
        size_t n = p[i];
        if (n == 0 || n > len - i - 1)
            return false; /* an empty name (RFC 7301 §3.1), or past the end */
        if (n == proto.n && mem_eq(p + i + 1, proto.p, n))
            found = true;
    }
    return found;
}
