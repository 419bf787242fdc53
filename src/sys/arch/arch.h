/* SPDX-License-Identifier: MIT */
/*
 * arch.h - pith-tiny's view of the kernel ABI, and the one place where the
 * architectures differ: x86-64, aarch64, arm EABI, mips o32 (big and little
 * endian) and riscv64. The numbers (system calls, errno, flags, struct stat
 * offsets) come from src/sys/arch/<arch>.h, which scripts/tiny-arch writes
 * from the kernel's UAPI headers; what the UAPI headers do not say (socket
 * types on mips, the epoll_event packing on x86-64, the kernel's sigaction
 * layouts, how 64-bit arguments travel on 32-bit ABIs) is written here, with
 * the reason. Never included by the full build: src/sys/raw/ maps the libc
 * header names the shared code includes onto this file.
 */
#ifndef PITH_ARCH_H
#define PITH_ARCH_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include "sys/arch/x86_64.h"
#elif defined(__aarch64__)
#include "sys/arch/aarch64.h"
#elif defined(__arm__) && defined(__ARM_EABI__)
#include "sys/arch/arm.h"
#elif defined(__mips__) && defined(_ABIO32)
#include "sys/arch/mips.h"
#elif defined(__riscv) && __riscv_xlen == 64
#include "sys/arch/riscv64.h"
#else
#error "pith-tiny: no system call table for this architecture (see scripts/tiny-arch)"
#endif

/* ---- what the UAPI headers leave to libc ---------------------------------- */
#if defined(__mips__)
#define SOCK_STREAM  2 /* arch/mips/include/asm/socket.h: ARCH_HAS_SOCKET_TYPES */
#define SOCK_DGRAM   1
#define KSIGSET_BITS 128 /* _NSIG on mips */
#else
#define SOCK_STREAM  1
#define SOCK_DGRAM   2
#define KSIGSET_BITS 64
#endif
#define SOCK_NONBLOCK    O_NONBLOCK /* the kernel defines them so, on every ABI */
#define SOCK_CLOEXEC     O_CLOEXEC
#define AF_UNSPEC        0
#define AF_UNIX          1
#define AF_INET          2
#define AF_INET6         10
#define MSG_NOSIGNAL     0x4000 /* include/linux/socket.h: the same on every ABI */
#define MSG_MORE         0x8000
#define SHUT_WR          1
#define SEEK_SET         0
#define EWOULDBLOCK      EAGAIN
#define ENOTSUP          EOPNOTSUPP
#define SIG_DFL          ((void (*)(int))0)
#define SIG_IGN          ((void (*)(int))1)
#define S_IFMT           0170000
#define S_IFDIR          0040000
#define S_IFREG          0100000
#define S_IFLNK          0120000
#define S_IFSOCK         0140000
#define O_ASYNC          FASYNC /* the UAPI's name for it */
#define DT_UNKNOWN       0
#define DT_DIR           4
#define DT_REG           8
#define DT_LNK           10
#define PATH_MAX         4096
#define NAME_MAX         255
#define INET_ADDRSTRLEN  16
#define INET6_ADDRSTRLEN 46

typedef long ssize_t;
typedef int64_t off_t;
typedef int pid_t;
typedef unsigned socklen_t;
typedef unsigned short sa_family_t;

struct iovec {
    void *iov_base;
    size_t iov_len;
};

struct sockaddr {
    sa_family_t sa_family;
    char sa_data[14];
};
struct sockaddr_storage {
    sa_family_t ss_family;
    char ss_pad[128 - sizeof(sa_family_t) - sizeof(unsigned long)];
    unsigned long ss_align;
};
struct sockaddr_un {
    sa_family_t sun_family;
    char sun_path[108];
};
struct in_addr {
    uint32_t s_addr;
};
struct sockaddr_in {
    sa_family_t sin_family;
    uint16_t sin_port;
    struct in_addr sin_addr;
    unsigned char sin_zero[8];
};
struct in6_addr {
    unsigned char s6_addr[16];
};
struct sockaddr_in6 {
    sa_family_t sin6_family;
    uint16_t sin6_port;
    uint32_t sin6_flowinfo;
    struct in6_addr sin6_addr;
    uint32_t sin6_scope_id;
};
static inline int in6_is_v4mapped(const struct in6_addr *a)
{
    static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    for (int i = 0; i < 12; i++)
        if (a->s6_addr[i] != prefix[i])
            return 0;
    return 1;
}
#define IN6_IS_ADDR_V4MAPPED(a) in6_is_v4mapped(a)

/* The kernel's struct user_msghdr: size_t lengths, int flags. */
struct msghdr {
    void *msg_name;
    int msg_namelen;
    struct iovec *msg_iov;
    size_t msg_iovlen;
    void *msg_control;
    size_t msg_controllen;
    unsigned msg_flags;
};
struct linger {
    int l_onoff;
    int l_linger;
};

/* The kernel's sigset: KSIGSET_BITS bits in longs (not glibc's 1024). */
typedef struct {
    unsigned long sig[KSIGSET_BITS / (8 * sizeof(unsigned long))];
} sigset_t;

typedef union epoll_data {
    void *ptr;
    int fd;
    uint32_t u32;
    uint64_t u64;
} epoll_data_t;
/* x86-64 packs it (12 bytes) so 32- and 64-bit processes share one layout
 * (include/uapi/linux/eventpoll.h, __EPOLL_PACKED); elsewhere the u64 is
 * naturally aligned and the struct is 16 bytes. */
struct epoll_event {
    uint32_t events;
    epoll_data_t data;
}
#if defined(__x86_64__)
__attribute__((packed))
#endif
;

/* The kernel's struct sigaction for rt_sigaction. mips puts the flags
 * first (arch/mips/include/uapi/asm/signal.h) and has no restorer; x86-64
 * requires one (SA_RESTORER), the others fall back to the vDSO's. */
struct ksigaction {
#if defined(__mips__)
    unsigned flags;
    void (*handler)(int);
    sigset_t mask;
#else
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    sigset_t mask;
#endif
};

static inline uint16_t htons(uint16_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return v;
#else
    return (uint16_t)(v << 8 | v >> 8);
#endif
}
#define ntohs htons

/* A 64-bit argument on a 32-bit ABI: two registers, the pair starting on an
 * even register (arm EABI, mips o32: the caller passes a pad word first),
 * in memory order. (On 64-bit ABIs it is one register.) */
#if __SIZEOF_LONG__ == 4
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ARG64_PADDED(x) 0, (long)((uint64_t)(x) >> 32), (long)(uint32_t)(x)
#else
#define ARG64_PADDED(x) 0, (long)(uint32_t)(x), (long)((uint64_t)(x) >> 32)
#endif
#else
#define ARG64_PADDED(x) (long)(x), 0, 0
#endif

/* ---- the system call instruction ------------------------------------------ */
/* Returns the kernel's result: >= 0, or -errno. On mips, gcc -Os keeps the
 * o32 sequence (two arguments on the stack) out of line, which made one copy
 * of it per object: there it is one function, in rt_raw.c. */
#if defined(__mips__)
long sys6(long n, long a, long b, long c, long d, long e, long f);
#else
static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
#elif defined(__arm__)
    register long r7 __asm__("r7") = n;
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r5 __asm__("r5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(r0)
                     : "r"(r7), "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5)
                     : "memory");
    return r0;
#elif defined(__riscv)
    register long a7 __asm__("a7") = n;
    register long a0 __asm__("a0") = a;
    register long a1 __asm__("a1") = b;
    register long a2 __asm__("a2") = c;
    register long a3 __asm__("a3") = d;
    register long a4 __asm__("a4") = e;
    register long a5 __asm__("a5") = f;
    __asm__ volatile("ecall"
                     : "+r"(a0)
                     : "r"(a7), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5)
                     : "memory");
    return a0;
#endif
}
#endif

#define SC0(n)             sys6(SYS_##n, 0, 0, 0, 0, 0, 0)
#define SC1(n, a)          sys6(SYS_##n, (long)(a), 0, 0, 0, 0, 0)
#define SC2(n, a, b)       sys6(SYS_##n, (long)(a), (long)(b), 0, 0, 0, 0)
#define SC3(n, a, b, c)    sys6(SYS_##n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SC4(n, a, b, c, d) sys6(SYS_##n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define SC5(n, a, b, c, d, e)                                                                      \
    sys6(SYS_##n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)
#define SC6(n, a, b, c, d, e, f)                                                                   \
    sys6(SYS_##n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

/* The vDSO's clock_gettime (ABI timespec: two longs), or NULL (rt_raw.c). */
typedef int (*raw_clock_fn)(int clock, long *ts);
extern raw_clock_fn raw_vdso_clock_gettime;
/* The kernel's page size (AT_PAGESZ), or 0 when it did not say (4096). */
extern unsigned long raw_page_size;

/* The few libc functions the shared code calls (src/sys/rt_raw.c). */
void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
size_t strcspn(const char *s, const char *reject);
int strncmp(const char *a, const char *b, size_t n);
char *strcpy(char *restrict d, const char *restrict s);
char *strrchr(const char *s, int c);
const char *inet_ntop(int af, const void *src, char *dst, socklen_t size);
const char *strerrordesc_np(int err); /* glibc's texts; NULL when unknown */

#endif
