/* SPDX-License-Identifier: MIT */
/*
 * core.h - the vocabulary every core module shares: spans over caller-owned
 * bytes, a bounded output buffer, and an always-on assertion.
 *
 * src/core is libc-free, syscall-free and allocation-free: it may include only
 * the compiler's <stddef.h>, <stdint.h>, <stdbool.h> and its own headers, and
 * `make check` proves it by compiling it freestanding without libc headers.
 * The host (full or tiny build) provides pith_assert_fail().
 */
#ifndef PITH_CORE_H
#define PITH_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PITH_VERSION "0.1.0"

#define likely(x)    __builtin_expect(!!(x), 1)
#define unlikely(x)  __builtin_expect(!!(x), 0)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Called when a memory-safety invariant is broken; never returns. Kept even
 * in release builds: a wrong index here would otherwise read or write out of
 * bounds (lighttpd's ck_assert has the same rule). */
_Noreturn void pith_assert_fail(const char *file, int line, const char *expr);
#ifdef PITH_ROUTER /* the router profile: a trap, without the file names and texts */
#define PITH_ASSERT(e) ((e) ? (void)0 : __builtin_trap())
#else
#define PITH_ASSERT(e) ((e) ? (void)0 : pith_assert_fail(__FILE__, __LINE__, #e))
#endif

/* A run of bytes owned by someone else; never NUL-terminated by contract. */
struct span {
    const char *p;
    size_t n;
};

#define SPAN_LIT(s) ((struct span){(s), sizeof(s) - 1})

static inline struct span span_make(const char *p, size_t n)
{
    return (struct span){p, n};
}

/* A bounded output buffer: bytes are appended at p[len] while len <= cap.
 * A write that does not fit writes nothing and sets `full`; callers check
 * `full` once at the end instead of after every append. A buf with p == NULL
 * only counts: the same writer code then measures its output exactly. */
struct buf {
    char *p;
    size_t len;
    size_t cap;
    bool full;
};

static inline struct buf buf_make(char *p, size_t cap)
{
    return (struct buf){p, 0, cap, false};
}

static inline struct buf buf_counter(void)
{
    return (struct buf){NULL, 0, SIZE_MAX, false};
}

#endif
