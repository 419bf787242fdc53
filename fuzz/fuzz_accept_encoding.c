/* SPDX-License-Identifier: MIT */
/*
 * fuzz_accept_encoding.c - accept_encoding_choose() on arbitrary field
 * values. The first 4 bytes choose the offer (which variants exist, their
 * sizes against identity); the rest is split at '\n' into up to
 * HTTP_LIST_MAX field lines, each in its own exact-size heap copy (ASan sees
 * a read past one). It traps when the verdict is unknown, names a coding
 * not offered, or when three properties of RFC 9110 break: the lines read as
 * one list give the verdict of the same elements joined by commas on one
 * line (§5.3); upper-casing every letter changes nothing (codings and the q
 * are case-insensitive); and a 406 comes only when some element excludes
 * identity.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/accept_encoding.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_accept_encoding: %s\n", what);
        __builtin_trap();
    }
}

/* Splits v into lines (heap copies, exact size) and chooses. */
static int choose_lines(const char *v, size_t n, const struct ae_offer *o, bool upper)
{
    struct span_list l = {0};
    char *copies[HTTP_LIST_MAX] = {0};
    size_t i = 0;
    while (i <= n && l.n < HTTP_LIST_MAX) {
        const char *nl = memchr(v + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (v + i)) : n - i;
        if (!nl && l.n == HTTP_LIST_MAX - 1)
            len = n - i;
        char *c = malloc(len ? len : 1);
        for (size_t k = 0; k < len; k++) {
            char ch = v[i + k];
            c[k] = upper && ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch;
        }
        copies[l.n] = c;
        l.v[l.n++] = span_make(c, len);
        i += len + 1;
        if (!nl)
            break;
    }
    int got = accept_encoding_choose(&l, o);
    for (unsigned k = 0; k < l.n; k++)
        free(copies[k]);
    return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || size > 4096)
        return 0;
    struct ae_offer o = {.identity_size = 1000};
    for (int c = 0; c < AE_CODINGS; c++) {
        o.have[c] = data[0] >> c & 1;
        o.size[c] = data[1 + c] % 4 == 0 ? 1000 : data[1 + c];
    }
    const char *v = (const char *)data + 4;
    size_t n = size - 4;
    int got = choose_lines(v, n, &o, false);
    require(got == AE_NOT_ACCEPTABLE || got == AE_IDENTITY || (got >= 0 && got < AE_CODINGS),
            "an unknown verdict");
    if (got >= 0 && got < AE_CODINGS)
        require(o.have[got], "a coding not offered");
    require(choose_lines(v, n, &o, true) == got, "upper case changed the verdict");
    /* The same elements on one line. Only when no line had a '\n' cut
     * short by the line limit: then the splits are the whole input. */
    size_t lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += v[i] == '\n';
    if (lines <= HTTP_LIST_MAX) {
        char *joined = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            joined[i] = v[i] == '\n' ? ',' : v[i];
        struct span_list one = {{span_make(joined, n)}, 1};
        /* An empty line is an empty field, which is a field: the joined
         * form only differs when every line is empty (then both say
         * identity). */
        require(accept_encoding_choose(&one, &o) == got, "lines differ from one list");
        free(joined);
    }
    /* A 406 needs an element that excludes identity: a q of 0. */
    if (got == AE_NOT_ACCEPTABLE)
        require(memchr(v, '0', n) != NULL, "406 without any q=0");
    return 0;
}
