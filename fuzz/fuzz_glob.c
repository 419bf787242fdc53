/* SPDX-License-Identifier: MIT */
/*
 * fuzz_glob.c - differential fuzzing of glob_valid() and glob_match() against
 * the reference in fuzz/ref/glob_ref.c. The input is a pattern, a NUL, and a
 * name (neither can hold a NUL in pith: patterns come from argv, names from
 * getdents). Both answers must equal the reference's; an invalid pattern
 * must match nothing. So that matches are not left to chance, the name's
 * bytes also seed a name the reference builds to match the pattern, which
 * glob_match() must then accept too. Pattern and names are copied into
 * buffers of exactly their length, so a read past either is an ASan report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/glob.h"
#include "ref/glob_ref.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_glob: %s\n", what);
        __builtin_trap();
    }
}

static char *copy(const void *p, size_t n)
{
    char *c = malloc(n ? n : 1);
    memcpy(c, p, n);
    return c;
}

static void differential(const char *pat, size_t pn, const char *name, size_t nn)
{
    char *n = copy(name, nn);
    bool got = glob_match(span_make(pat, pn), span_make(n, nn));
    bool want = ref_glob_match(pat, pn, n, nn);
    if (got != want) {
        fprintf(stderr, "fuzz_glob: pattern \"%.*s\" name \"%.*s\": glob_match %d, reference %d\n",
                (int)pn, pat, (int)nn, n, got, want);
        require(0, "glob_match differs from the reference");
    }
    free(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t pn = nul ? (size_t)(nul - data) : size;
    const uint8_t *name = nul ? nul + 1 : data + size;
    size_t nn = size - pn - (nul != NULL);

    char *pat = copy(data, pn);
    bool valid = glob_valid(span_make(pat, pn));
    require(valid == ref_glob_valid(pat, pn), "glob_valid differs from the reference");
    differential(pat, pn, (const char *)name, nn);
    if (!valid)
        require(!glob_match(span_make(pat, pn), span_make((const char *)name, nn)),
                "an invalid pattern matched");

    /* A name the pattern matches, built by the reference from the name's bytes. */
    char sample[4 * GLOB_MAX_TOKENS];
    size_t sn = ref_glob_sample(pat, pn, name, nn, sample, sizeof sample);
    if (sn != (size_t)-1) {
        require(ref_glob_match(pat, pn, sample, sn), "reference: its own sample does not match");
        differential(pat, pn, sample, sn);
    }
    free(pat);
    return 0;
}
