/* SPDX-License-Identifier: MIT */
/*
 * escape.c - escapers for HTML, URI paths, log fields and JSON strings.
 * Listing XSS through file names (serve-index, monkey, cherokee) and forged
 * log lines are the incidents these guard against (research/users.md S5, S6).
 */
#include "escape.h"

#include "bytes.h"

static const char hex_upper[] = "0123456789ABCDEF";

void escape_html(struct buf *b, struct span s)
{
    size_t start = 0;
    for (size_t i = 0; i < s.n; i++) {
        const char *entity;
        switch (s.p[i]) {
        case '&': entity = "&amp;"; break;
        case '<': entity = "&lt;"; break;
        case '>': entity = "&gt;"; break;
        case '"': entity = "&quot;"; break;
        case '\'': entity = "&#39;"; break;
        default: continue;
        }
        buf_put(b, s.p + start, i - start);
        buf_put_cstr(b, entity);
        start = i + 1;
    }
    buf_put(b, s.p + start, s.n - start);
}

static bool is_unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

void escape_uri_path(struct buf *b, struct span s, bool encode_slash)
{
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (is_unreserved(c) || (c == '/' && !encode_slash)) {
            buf_put_char(b, (char)c);
        } else {
            char e[3] = {'%', hex_upper[c >> 4], hex_upper[c & 15]};
            buf_put(b, e, 3);
        }
    }
}

void escape_log(struct buf *b, struct span s)
{
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\') {
            buf_put_char(b, (char)c);
        } else {
            char e[4] = {'\\', 'x', hex_upper[c >> 4], hex_upper[c & 15]};
            buf_put(b, e, 4);
        }
    }
}

/* Length of the valid UTF-8 sequence at p[0..n), or 0 if it is not one
 * (overlongs, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_valid_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void escape_json(struct buf *b, struct span s)
{
    const unsigned char *p = (const unsigned char *)s.p;
    for (size_t i = 0; i < s.n;) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            buf_put(b, e, 2);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            char e[6] = {'\\', 'u', '0', '0', hex_upper[c >> 4], hex_upper[c & 15]};
            buf_put(b, e, 6);
            i++;
        } else if (c < 0x80) {
            buf_put_char(b, (char)c);
            i++;
        } else {
            size_t len = utf8_valid_len(p + i, s.n - i);
            if (len) {
                buf_put(b, p + i, len);
                i += len;
            } else {
                char e[6] = {'\\', 'u', '0', '0', hex_upper[c >> 4], hex_upper[c & 15]};
                buf_put(b, e, 6);
                i++;
            }
        }
    }
}
