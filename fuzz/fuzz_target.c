/* SPDX-License-Identifier: MIT */
/*
 * fuzz_target.c - differential fuzzing of target_normalize() against the
 * reference in fuzz/ref/target_ref.c: the input is a raw path, normalized
 * with a roomy cap and with a small one derived from the input (so the 414
 * paths and the "too long only on the way" stack are reached); any
 * difference in verdict, bytes or flags traps, and so does an accepted path
 * that is not safe to hand to openat(); target_normalize_all() must agree
 * but for hidden segments. Inputs that are 1*VCHAR also go
 * through target_split(), whose spans must stay inside the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/target.h"
#include "ref/target_ref.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_target: %s\n", what);
        __builtin_trap();
    }
}

static void differential(const char *p, size_t n, size_t cap)
{
    /* Exactly cap bytes each, so ASan sees a write past cap. */
    char *out = malloc(cap), *ref = malloc(cap);
    unsigned f1 = 7, f2 = 7;
    long a = target_normalize(span_make(p, n), out, cap, &f1);
    long b = target_ref_normalize(p, n, ref, cap, &f2);
    require(a == b, "verdict differs from the reference");
    require(a >= 0 || a == -400 || a == -403 || a == -414, "unknown verdict");
    if (a >= 0) {
        require((size_t)a <= cap, "longer than cap");
        require(memcmp(out, ref, (size_t)a) == 0, "bytes differ from the reference");
        require(f1 == f2, "flags differ from the reference");
        require(target_ref_output_ok(out, (size_t)a), "unsafe output");
    } else {
        require(f1 == 0, "flags set on a refusal");
    }
    /* target_normalize_all() (basic auth looks before the dotfile rule):
     * the same, except that a hidden segment is a flag, not -403, and the
     * path is still written; its bytes then pass the rest of the checks
     * but the dotfile one. */
    unsigned f3 = 7;
    long c = target_normalize_all(span_make(p, n), out, cap, &f3);
    if (a == -403) {
        require(c >= 0 && (f3 & TARGET_HIDDEN), "a hidden path is a flag for _all");
        require((size_t)c <= cap && !memchr(out, '\0', (size_t)c), "the hidden path's bytes");
    } else {
        require(c == a && (c < 0 || f3 == f1), "_all agrees where no segment is hidden");
        require(c < 0 || memcmp(out, ref, (size_t)c) == 0, "_all's bytes");
    }
    free(out);
    free(ref);
}

static int inside(struct span s, const char *p, size_t n)
{
    return s.n == 0 || (s.p >= p && s.p + s.n <= p + n);
}

static void split(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x21 || (unsigned char)p[i] > 0x7e)
            return; /* target_split() takes only what the parser passed */
    struct target t;
    int r = target_split(span_make(p, n), &t);
    require(r == 0 || r == -400, "unknown split verdict");
    if (r)
        return;
    require(memchr(p, '#', n) == NULL, "fragment accepted");
    require(inside(t.authority, p, n) && inside(t.query, p, n), "span outside the target");
    require(inside(t.path, p, n) || (t.path.n == 1 && t.path.p[0] == '/'), "path outside");
    require(t.path.n > 0, "empty path");
    if (t.form == TARGET_ASTERISK)
        require(n == 1 && t.path.p[0] == '*', "asterisk-form of another target");
    else
        require(t.path.p[0] == '/', "path without '/'");
    if (t.form == TARGET_ABSOLUTE)
        require(t.authority.n > 0 && memchr(t.authority.p, '@', t.authority.n) == NULL &&
                    target_host_valid(t.authority),
                "bad authority accepted");
    differential(t.path.p, t.path.n, 4096);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    differential(p, size, 4096);
    differential(p, size, size ? (size_t)(data[size / 2] ^ size) % 24 : 0);
    split(p, size);
    return 0;
}
