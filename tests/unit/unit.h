/* SPDX-License-Identifier: MIT */
/*
 * unit.h - the table-driven harness every tests/unit/test_*.c includes once.
 * guarded_copy() places an input flush against a PROT_NONE page, so reading
 * one byte past its length faults at once instead of passing by luck (the
 * idea of picohttpparser's test.c); the CHECK_* macros record a result and,
 * on failure, print file:line, the row's reason and both values, and
 * unit_done() turns the tally into the exit status. A check never returns
 * early or jumps: a failing row is reported and the next one runs.
 *
 * The tally keeps hand-written cases apart from generated ones: checks made
 * between unit_gen_begin() and unit_gen_end() (loops over every byte value,
 * every cut of an input, pseudo-random inputs) count as generated, all others
 * as hand-written, and the summary line gives both. A check whose outcome the
 * compiler can compute (CHECK(true, ...), or a comparison of two constants)
 * cannot fail: when it holds it is not counted, only reported as "constant"
 * so that it can be removed; when it does not hold it is a failure.
 * Tests are host programs and may use libc.
 */
#ifndef PITH_UNIT_H
#define PITH_UNIT_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core.h"

/* [0]: hand-written cases, [1]: generated ones. */
static unsigned unit_checks[2], unit_failures[2];
static unsigned unit_constant;   /* checks that held and could not have failed */
static unsigned unit_generating; /* depth of unit_gen_begin() calls */
static const char *unit_file;    /* the test's source, for its name */

/* Checks from here to the matching unit_gen_end() run over generated
 * inputs. Pairs nest, so a helper may mark its own loop whoever calls it. */
static inline void unit_gen_begin(void)
{
    unit_generating++;
}

static inline void unit_gen_end(void)
{
    if (unit_generating)
        unit_generating--;
}

/* The core's assertion hook: the unit tests link src/core without a host. */
_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

/* A copy of p[0..n) whose last byte is followed by an unreadable page. Free
 * it with guarded_free(copy, n). n == 0 gives a pointer right at the guard. */
static inline void *guarded_copy(const void *p, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data = (n + page - 1) / page * page;
    char *base =
        mmap(NULL, data + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED || mprotect(base + data, page, PROT_NONE) != 0) {
        perror("guarded_copy");
        exit(2);
    }
    char *copy = base + data - n;
    if (n)
        memcpy(copy, p, n);
    return copy;
}

static inline void guarded_free(void *copy, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data = (n + page - 1) / page * page;
    munmap((char *)copy + n - data, data + page);
}

static inline void unit_escape(FILE *f, const char *p, size_t n)
{
    size_t shown = n > 200 ? 200 : n;
    fputc('"', f);
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            fputc(c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
    fprintf(f, n > shown ? "\"... (%zu bytes)" : "\"", n);
}

/* constant: the compiler proved ok (see UNIT_CONST); such a check is not
 * counted when it holds. */
static inline bool unit_record(const char *file, bool ok, bool constant)
{
    unit_file = file;
    if (constant && ok) {
        unit_constant++;
        return true;
    }
    unit_checks[unit_generating > 0]++;
    if (!ok)
        unit_failures[unit_generating > 0]++;
    return ok;
}

static inline void check_long(const char *file, int line, const char *why, long got, long want,
                              bool constant)
{
    if (!unit_record(file, got == want, constant))
        fprintf(stderr, "%s:%d: %s: got %ld, want %ld\n", file, line, why, got, want);
}

static inline void check_mem(const char *file, int line, const char *why, const void *got,
                             size_t got_n, const void *want, size_t want_n, bool constant)
{
    if (unit_record(file, got_n == want_n && (want_n == 0 || memcmp(got, want, want_n) == 0),
                    constant))
        return;
    fprintf(stderr, "%s:%d: %s: got ", file, line, why);
    unit_escape(stderr, got, got_n);
    fprintf(stderr, ", want ");
    unit_escape(stderr, want, want_n);
    fputc('\n', stderr);
}

static inline void check_true(const char *file, int line, const char *why, bool ok,
                              const char *expr, bool constant)
{
    if (!unit_record(file, ok, constant))
        fprintf(stderr, "%s:%d: %s: false: %s\n", file, line, why, expr);
}

/* True when the compiler can compute e: a check of it cannot fail at run
 * time. The operand is not evaluated (GCC and Clang), so a macro may name
 * its arguments here and once more for the check itself. */
#define UNIT_CONST(e) __builtin_constant_p(e)

#define CHECK_LONG(got, want, why)                                                                 \
    check_long(__FILE__, __LINE__, (why), (long)(got), (long)(want),                               \
               UNIT_CONST((long)(got) == (long)(want)))
#define CHECK_MEM(got, got_n, want, want_n, why)                                                   \
    check_mem(__FILE__, __LINE__, (why), (got), (got_n), (want), (want_n),                         \
              UNIT_CONST((got_n) == (want_n) && memcmp((got), (want), (want_n)) == 0))
#define CHECK_SPAN(span, cstr, why)                                                                \
    check_mem(__FILE__, __LINE__, (why), (span).p, (span).n, (cstr), strlen(cstr),                 \
              UNIT_CONST((span).n == strlen(cstr) && memcmp((span).p, (cstr), (span).n) == 0))
#define CHECK(cond, why) check_true(__FILE__, __LINE__, (why), (cond), #cond, UNIT_CONST(cond))

/* Prints the tally, hand-written and generated checks apart, e.g.
 * "test_range: 212 hand-written + 8 generated checks passed"; returns the
 * process exit status (0 or 1). */
static inline int unit_done(void)
{
    const char *name = unit_file ? unit_file : "unit";
    const char *slash = strrchr(name, '/');
    name = slash ? slash + 1 : name;
    int len = (int)(strlen(name) > 2 ? strlen(name) - 2 : strlen(name)); /* drop ".c" */
    char constant[64] = "";
    if (unit_constant)
        snprintf(constant, sizeof constant, " (%u constant, not counted)", unit_constant);
    if (unit_failures[0] || unit_failures[1]) {
        printf("%.*s: %u of %u hand-written + %u of %u generated checks FAILED%s\n", len, name,
               unit_failures[0], unit_checks[0], unit_failures[1], unit_checks[1], constant);
        return 1;
    }
    if (unit_checks[0] + unit_checks[1] == 0) {
        printf("%.*s: no checks ran%s\n", len, name, constant);
        return 1;
    }
    printf("%.*s: %u hand-written + %u generated checks passed%s\n", len, name, unit_checks[0],
           unit_checks[1], constant);
    return 0;
}

/* The tests' own UTF-8 oracle: length of a valid UTF-8 sequence (RFC 3629) at p, or 0. */
static inline size_t unit_utf8_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c >= 0xc2 && c <= 0xdf)
        return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return n >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return n >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80
                   ? 4
                   : 0;
    }
    return 0;
}

#endif
