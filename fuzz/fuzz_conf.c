/* SPDX-License-Identifier: MIT */
/*
 * fuzz_conf.c - the configuration file's line reader (src/core/conf.c) on
 * any bytes: every item's spans lie inside the text (the text is copied
 * into a buffer of exactly its length, so a read past it is an ASan
 * report), on the item's own line, with no line end and no control byte
 * but tab in them; a name is [a-z0-9-]+; line numbers grow, one item per
 * line at most; an error item has its sentence; the reader ends.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_conf: %s\n", what);
        __builtin_trap();
    }
}

static void check_span(const char *t, size_t n, struct span s)
{
    require(s.n == 0 || (s.p >= t && s.p + s.n <= t + n), "a span inside the text");
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        require(c != '\n' && c != '\r' && (c >= 0x20 || c == '\t') && c != 0x7f,
                "no line end or control byte");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *t = malloc(size ? size : 1);
    memcpy(t, data, size);
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += t[i] == '\n';
    struct conf_reader r = conf_reader_make((struct span){t, size});
    struct conf_item it;
    unsigned last = 0, items = 0;
    while (conf_next(&r, &it)) {
        require(it.line > last && it.line <= lines, "one item per line, in order");
        last = it.line;
        require(++items <= lines, "bounded items");
        switch (it.kind) {
        case CONF_OPTION:
            require(it.name.n > 0, "a name");
            for (size_t i = 0; i < it.name.n; i++) {
                char c = it.name.p[i];
                require((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-',
                        "name characters");
            }
            check_span(t, size, it.name);
            check_span(t, size, it.value);
            break;
        case CONF_SITE_BEGIN:
            require(it.value.n > 0, "a block has names");
            check_span(t, size, it.value);
            break;
        case CONF_SITE_END: break;
        case CONF_ERROR: require(it.error && it.error[0], "an error says why"); break;
        default: require(0, "a kind");
        }
    }
    require(r.pos == size, "the reader reaches the end");
    free(t);
    return 0;
}
