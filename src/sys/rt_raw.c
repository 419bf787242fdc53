/* SPDX-License-Identifier: MIT */
/*
 * rt_raw.c - pith-tiny's runtime in place of a libc: the entry point of
 * each architecture (_start: argc, argv and envp from the initial stack,
 * then main, then exit_group), the memory functions compilers emit calls
 * to, the few string functions the shared code calls, abort() for the
 * assertion hook, and inet_ntop for the access log.
 */
#include "sys/arch/arch.h"
#include "sys/sys.h"

#include <stdbool.h>
#include <stdlib.h>

/* The memory functions must not be compiled into calls to themselves (gcc
 * turns such loops into memcpy/memset calls; clang does not under
 * -ffreestanding). used: link-time optimization must keep them. */
#if defined(__GNUC__) && !defined(__clang__)
#define MEMFN __attribute__((used, optimize("no-tree-loop-distribute-patterns")))
#else
#define MEMFN __attribute__((used))
#endif

int main(int argc, char **argv);
_Noreturn void raw_start(long *sp);

char **raw_envp;
raw_clock_fn raw_vdso_clock_gettime;
unsigned long raw_page_size;

/* ---- the vDSO's clock_gettime ------------------------------------------------
 * The worker reads the clock twice per loop iteration; through the vDSO
 * that costs no system call (as in glibc). Found by name in the vDSO's
 * dynamic symbol table (the kernel links it with a SysV hash table, whose
 * second word is the symbol count); absent (older kernels on arm, qemu-user)
 * or not looked for (mips: its PIC vDSO expects to be called through $t9,
 * which code built -mno-abicalls does not promise), sys_raw_proc.c makes the
 * system call. */
#if __SIZEOF_POINTER__ == 8
struct elf_ehdr {
    unsigned char ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct elf_phdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
};
struct elf_sym {
    uint32_t name;
    unsigned char info, other;
    uint16_t shndx;
    uint64_t value, size;
};
#else
struct elf_ehdr {
    unsigned char ident[16];
    uint16_t type, machine;
    uint32_t version, entry, phoff, shoff, flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct elf_phdr {
    uint32_t type, offset, vaddr, paddr, filesz, memsz, flags, align;
};
struct elf_sym {
    uint32_t name, value, size;
    unsigned char info, other;
    uint16_t shndx;
};
#endif
struct elf_dyn {
    long tag;
    unsigned long val;
};

#define AT_SYSINFO_EHDR 33
#define AT_PAGESZ       6
#define PT_LOAD         1
#define PT_DYNAMIC      2
#define DT_HASH         4
#define DT_STRTAB       5
#define DT_SYMTAB       6

#if defined(__aarch64__)
#define VDSO_GETTIME "__kernel_clock_gettime"
#else
#define VDSO_GETTIME "__vdso_clock_gettime"
#endif

static void vdso_find(const unsigned long *auxv)
{
#if defined(__mips__)
    return;
#endif
    uintptr_t base = 0;
    for (; auxv[0]; auxv += 2)
        if (auxv[0] == AT_SYSINFO_EHDR)
            base = auxv[1];
    if (!base)
        return;
    const struct elf_ehdr *eh = (const struct elf_ehdr *)base;
    const struct elf_phdr *ph = (const struct elf_phdr *)(base + eh->phoff);
    uintptr_t load = 0;
    const struct elf_dyn *dyn = NULL;
    bool have_load = false;
    for (unsigned i = 0; i < eh->phnum; i++) {
        if (ph[i].type == PT_LOAD && !have_load)
            load = base + ph[i].offset - ph[i].vaddr, have_load = true;
        else if (ph[i].type == PT_DYNAMIC)
            dyn = (const struct elf_dyn *)(base + ph[i].offset);
    }
    if (!have_load || !dyn)
        return;
    const uint32_t *hash = NULL;
    const struct elf_sym *sym = NULL;
    const char *str = NULL;
    for (; dyn->tag; dyn++) {
        if (dyn->tag == DT_HASH)
            hash = (const uint32_t *)(load + dyn->val);
        else if (dyn->tag == DT_SYMTAB)
            sym = (const struct elf_sym *)(load + dyn->val);
        else if (dyn->tag == DT_STRTAB)
            str = (const char *)(load + dyn->val);
    }
    if (!hash || !sym || !str)
        return;
    for (uint32_t i = 0; i < hash[1]; i++)
        if (sym[i].shndx != 0 && (sym[i].info & 0xf) == 2 /* STT_FUNC */ &&
            strcmp(str + sym[i].name, VDSO_GETTIME) == 0) {
            raw_vdso_clock_gettime = (raw_clock_fn)(load + sym[i].value);
            return;
        }
}

/* The kernel leaves argc, argv[], NULL, envp[], NULL on the stack. Each
 * stub clears the frame registers, aligns the stack as the ABI wants, and
 * passes the original stack pointer on. */
#if defined(__x86_64__)
__asm__(".text\n.global _start\n.type _start,@function\n_start:\n"
        "  xor %ebp, %ebp\n  mov %rsp, %rdi\n  and $-16, %rsp\n  call raw_start\n  hlt\n"
        /* SA_RESTORER: x86-64 returns from a signal handler through this */
        ".global raw_sigreturn\n.type raw_sigreturn,@function\nraw_sigreturn:\n"
        "  mov $15, %eax\n  syscall\n");
#elif defined(__aarch64__)
__asm__(".text\n.global _start\n.type _start,%function\n_start:\n"
        "  mov x29, #0\n  mov x30, #0\n  mov x0, sp\n  and sp, x0, #-16\n  bl raw_start\n");
#elif defined(__arm__)
__asm__(".text\n.syntax unified\n.thumb\n.global _start\n.type _start,%function\n.thumb_func\n"
        "_start:\n  mov r0, sp\n  bic r1, r0, #15\n  mov sp, r1\n  movs r1, #0\n  mov lr, r1\n"
        "  bl raw_start\n");
#elif defined(__mips__)
/* Built -mno-abicalls -G 0: no $gp to set up, every global by absolute
 * address. o32 callers leave 16 bytes of argument space. */
__asm__(".text\n.set push\n.set noreorder\n.global _start\n.type _start,@function\n_start:\n"
        "  move $4, $sp\n  li $8, -8\n  and $sp, $sp, $8\n  addiu $sp, $sp, -16\n"
        "  jal raw_start\n  move $31, $0\n.set pop\n");
#elif defined(__riscv)
/* gp serves linker relaxation: point it at __global_pointer$ first. */
__asm__(".text\n.global _start\n.type _start,@function\n_start:\n"
        "  .option push\n  .option norelax\n  lla gp, __global_pointer$\n  .option pop\n"
        "  mv a0, sp\n  andi sp, sp, -16\n  call raw_start\n");
#endif

#if defined(__arm__)
/* libgcc's __aeabi_ldiv0 (a 64-bit division by zero) raises SIGFPE.
 * used: link-time optimization must keep it for libgcc, linked after. */
int raise(int sig);
__attribute__((used)) int raise(int sig)
{
    return (int)SC2(kill, SC0(getpid), sig);
}
#endif

/* The system call instruction on mips (arch.h declares it): out of line
 * once, as gcc -Os compiles it anyway. */
#if defined(__mips__)
long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    /* o32: four arguments in a0-a3, the fifth and sixth on the stack at
     * 16 and 20; a3 comes back non-zero on failure with errno in v0. v0 is
     * loaded right before `syscall` because old kernels restart a call by
     * stepping back one instruction. */
    register long v0 __asm__("$2");
    register long a0 __asm__("$4") = a;
    register long a1 __asm__("$5") = b;
    register long a2 __asm__("$6") = c;
    register long a3 __asm__("$7") = d;
    __asm__ volatile(".set push\n\t.set noreorder\n\t"
                     "addiu $sp, $sp, -32\n\t"
                     "sw %5, 16($sp)\n\t"
                     "sw %6, 20($sp)\n\t"
                     "addu $2, $0, %2\n\t"
                     "syscall\n\t"
                     "addiu $sp, $sp, 32\n\t"
                     ".set pop"
                     : "=&r"(v0), "+r"(a3)
                     : "r"(n), "r"(a0), "r"(a1), "r"(e), "r"(f), "r"(a2)
                     : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$24",
                       "$25", "hi", "lo", "memory");
    return a3 ? -v0 : v0;
}
#endif

/* used: only the assembly above calls it (link-time optimization must
 * keep it). */
__attribute__((used)) _Noreturn void raw_start(long *sp)
{
    int argc = (int)sp[0];
    char **argv = (char **)(sp + 1);
    raw_envp = argv + argc + 1;
    char **e = raw_envp;
    while (*e)
        e++;
    for (unsigned long *a = (unsigned long *)(e + 1); a[0]; a += 2) /* the auxiliary vector */
        if (a[0] == AT_PAGESZ)
            raw_page_size = a[1];
#ifdef PITH_ROUTER /* the router profile reads the clock by system call: 0.4 KB less */
    (void)vdso_find;
#else
    vdso_find((const unsigned long *)(e + 1)); /* the auxiliary vector follows envp */
#endif
    int code = main(argc, argv);
    for (;;)
        SC1(exit_group, code);
}

/* For the assertion hook (src/cli/start.c): death by SIGABRT, as libc's,
 * and the shell's 134 should the signal not end the process. */
_Noreturn void abort(void)
{
    sys_signal_default(SIGABRT);
    sys_kill(sys_getpid(), SIGABRT);
    sys_exit(134);
}

MEMFN void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    while (n--)
        *dp++ = *sp++;
    return d;
}

MEMFN void *memmove(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if (dp < sp)
        return memcpy(d, s, n);
    while (n--)
        dp[n] = sp[n];
    return d;
}

MEMFN void *memset(void *d, int c, size_t n)
{
    unsigned char *dp = d;
    while (n--)
        *dp++ = (unsigned char)c;
    return d;
}

MEMFN int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x - *y;
    return 0;
}

/* ---- 64-bit atomics on mips o32 ----------------------------------------------
 * The --status counters (src/base/stats.h) are 64-bit relaxed loads and
 * stores, one writer per counter. mips32 has no 64-bit load or store, so gcc
 * calls these (libatomic's names; there is no libatomic here, and its
 * per-process locks would not cover the processes that share the counters
 * anyway). They move the two halves separately: a reader in another process
 * can see a counter torn while its low half carries (once per 4 GiB sent,
 * per 2^32 requests), off by 2^32 for that one scrape (docs/DESIGN.md). */
#if __GCC_ATOMIC_LLONG_LOCK_FREE < 2
uint64_t __atomic_load_8(const volatile void *p, int order);
void __atomic_store_8(volatile void *p, uint64_t v, int order);

uint64_t __atomic_load_8(const volatile void *p, int order)
{
    const volatile uint32_t *w = p;
    (void)order;
    uint32_t a = w[0], b = w[1];
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (uint64_t)a << 32 | b;
#else
    return (uint64_t)b << 32 | a;
#endif
}

void __atomic_store_8(volatile void *p, uint64_t v, int order)
{
    volatile uint32_t *w = p;
    (void)order;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w[1] = (uint32_t)v;
    w[0] = (uint32_t)(v >> 32);
#else
    w[0] = (uint32_t)v;
    w[1] = (uint32_t)(v >> 32);
#endif
}
#endif

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n && *a && *a == *b; n--)
        a++, b++;
    return n ? (unsigned char)*a - (unsigned char)*b : 0;
}

char *strcpy(char *restrict d, const char *restrict s)
{
    return memcpy(d, s, strlen(s) + 1);
}

char *strrchr(const char *s, int c)
{
    const char *last = NULL;
    do
        if (*s == (char)c)
            last = s;
    while (*s++);
    return (char *)last;
}

size_t strcspn(const char *s, const char *reject)
{
    size_t n = 0;
    for (; s[n]; n++)
        for (const char *r = reject; *r; r++)
            if (s[n] == *r)
                return n;
    return n;
}

static char *put_dec(char *p, unsigned v)
{
    if (v >= 10)
        p = put_dec(p, v / 10);
    *p++ = (char)('0' + v % 10);
    return p;
}

/* inet_ntop as glibc writes it: dotted quad; IPv6 in lowercase hex with
 * the longest run (first of equals) of two or more zero groups as "::",
 * and an IPv4 tail for ::a.b.c.d and ::ffff:a.b.c.d. */
const char *inet_ntop(int af, const void *src, char *dst, socklen_t size)
{
    const unsigned char *a = src;
    char tmp[INET6_ADDRSTRLEN], *p = tmp;
    if (af == AF_INET) {
        for (int i = 0; i < 4; i++) {
            p = put_dec(p, a[i]);
            *p++ = '.';
        }
        p--;
    } else {
        unsigned w[8];
        int best = -1, best_len = 0;
        for (int i = 0; i < 8; i++)
            w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
        for (int i = 0; i < 8;) {
            int j = i;
            while (j < 8 && w[j] == 0)
                j++;
            if (j - i > best_len && j - i >= 2)
                best = i, best_len = j - i;
            i = j > i ? j : i + 1;
        }
        for (int i = 0; i < 8; i++) {
            if (i == best) {
                *p++ = ':';
                if (i == 0)
                    *p++ = ':';
                i += best_len - 1;
                continue;
            }
            if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff))) {
                p = (char *)inet_ntop(AF_INET, a + 12, p, (socklen_t)(tmp + sizeof tmp - p));
                p += strlen(p);
                break;
            }
            for (int shift = 12, started = 0; shift >= 0; shift -= 4) {
                unsigned d = (w[i] >> shift) & 15;
                if (d || started || shift == 0)
                    *p++ = "0123456789abcdef"[d], started = 1;
            }
            if (i < 7)
                *p++ = ':';
        }
    }
    size_t n = (size_t)(p - tmp);
    if (n >= size)
        return NULL;
    memcpy(dst, tmp, n);
    dst[n] = '\0';
    return dst;
}

/* glibc's descriptions of the errors pith can meet, so messages read the
 * same in both builds. Kept as two tables, the numbers and the texts one
 * after another, rather than pairs with a pointer each: 14 bytes less per
 * error on a 64-bit ABI. */
#define ERRORS(X)                                                                                  \
    X(EPERM, "Operation not permitted")                                                            \
    X(ENOENT, "No such file or directory")                                                         \
    X(ESRCH, "No such process")                                                                    \
    X(EINTR, "Interrupted system call")                                                            \
    X(EIO, "Input/output error")                                                                   \
    X(ENXIO, "No such device or address")                                                          \
    X(E2BIG, "Argument list too long")                                                             \
    X(EBADF, "Bad file descriptor")                                                                \
    X(ECHILD, "No child processes")                                                                \
    X(EAGAIN, "Resource temporarily unavailable")                                                  \
    X(ENOMEM, "Cannot allocate memory")                                                            \
    X(EACCES, "Permission denied")                                                                 \
    X(EFAULT, "Bad address")                                                                       \
    X(EEXIST, "File exists")                                                                       \
    X(EXDEV, "Invalid cross-device link")                                                          \
    X(ENODEV, "No such device")                                                                    \
    X(ENOTDIR, "Not a directory")                                                                  \
    X(EISDIR, "Is a directory")                                                                    \
    X(EINVAL, "Invalid argument")                                                                  \
    X(ENFILE, "Too many open files in system")                                                     \
    X(EMFILE, "Too many open files")                                                               \
    X(ENOSPC, "No space left on device")                                                           \
    X(ESPIPE, "Illegal seek")                                                                      \
    X(EROFS, "Read-only file system")                                                              \
    X(EPIPE, "Broken pipe")                                                                        \
    X(ERANGE, "Numerical result out of range")                                                     \
    X(ENAMETOOLONG, "File name too long")                                                          \
    X(ENOSYS, "Function not implemented")                                                          \
    X(ELOOP, "Too many levels of symbolic links")                                                  \
    X(EOVERFLOW, "Value too large for defined data type")                                          \
    X(EOPNOTSUPP, "Operation not supported")                                                       \
    X(EAFNOSUPPORT, "Address family not supported by protocol")                                    \
    X(EADDRINUSE, "Address already in use")                                                        \
    X(EADDRNOTAVAIL, "Cannot assign requested address")                                            \
    X(ECONNABORTED, "Software caused connection abort")                                            \
    X(ECONNRESET, "Connection reset by peer")                                                      \
    X(ENOBUFS, "No buffer space available")                                                        \
    X(ETIMEDOUT, "Connection timed out")                                                           \
    X(ENOTCONN, "Transport endpoint is not connected")                                             \
    X(ECANCELED, "Operation canceled")

#define ERROR_NUMBER(err, text) err,
#define ERROR_TEXT(err, text)   text "\0"
static const unsigned short error_numbers[] = {ERRORS(ERROR_NUMBER)};
static const char error_texts[] = ERRORS(ERROR_TEXT);

const char *strerrordesc_np(int err)
{
    const char *text = error_texts;
    for (size_t i = 0; i < sizeof error_numbers / sizeof error_numbers[0]; i++) {
        if (error_numbers[i] == err)
            return text;
        text += strlen(text) + 1;
    }
    return NULL;
}
