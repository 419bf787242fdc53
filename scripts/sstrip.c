/* SPDX-License-Identifier: MIT */
/*
 * sstrip.c - drops the section header table of a static ELF executable, and
 * what only that table names (.shstrtab, .gnu.attributes, ...): the file is
 * cut after the last byte a program header maps, and e_shoff, e_shnum and
 * e_shstrndx become 0 (ELFkickers' sstrip does the same). The kernel and
 * qemu-user load an executable by its program headers alone; readelf -S
 * and gdb then find no sections. The tiny and router builds run it after
 * the link (issue 36: about 350 bytes on x86-64, 410 on mips). ELF32 and
 * ELF64, either byte order, whatever the host's. A host tool: libc is fine.
 * Usage: sstrip FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int big; /* EI_DATA == ELFDATA2MSB */

static uint64_t get(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[big ? i : n - 1 - i];
    return v;
}

static void put(unsigned char *p, int n, uint64_t v)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[big ? n - 1 - i : i] = (unsigned char)v;
}

static int trim(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    static unsigned char b[1 << 22];
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    if (n < 52 || n == sizeof b || memcmp(b, "\177ELF", 4) != 0 || b[4] < 1 || b[4] > 2) {
        fprintf(stderr, "%s: not an ELF file this tool handles\n", path);
        return 1;
    }
    int wide = b[4] == 2; /* ELFCLASS64 */
    big = b[5] == 2;
    /* Offsets of e_phoff, e_shoff, e_phentsize (then e_phnum, e_shentsize,
     * e_shnum, e_shstrndx, 2 bytes each) and the size of an address. */
    int a = wide ? 8 : 4, phoff_at = wide ? 32 : 28, shoff_at = phoff_at + a;
    int phent_at = wide ? 54 : 42;
    uint64_t phoff = get(b + phoff_at, a), phent = get(b + phent_at, 2);
    uint64_t phnum = get(b + phent_at + 2, 2);
    uint64_t end = phoff + phent * phnum;
    if (end > n) {
        fprintf(stderr, "%s: program headers past the end\n", path);
        return 1;
    }
    for (uint64_t i = 0; i < phnum; i++) {
        const unsigned char *ph = b + phoff + i * phent;
        /* p_offset and p_filesz: ELF64 after p_type, p_flags; ELF32 after p_type. */
        uint64_t off = get(ph + (wide ? 8 : 4), a);
        uint64_t filesz = get(ph + (wide ? 32 : 16), a);
        if (filesz && off + filesz > end)
            end = off + filesz;
    }
    if (end > n) {
        fprintf(stderr, "%s: a segment past the end\n", path);
        return 1;
    }
    put(b + shoff_at, a, 0);
    put(b + phent_at + 6, 2, 0); /* e_shnum */
    put(b + phent_at + 8, 2, 0); /* e_shstrndx */
    f = fopen(path, "wb");
    if (!f || fwrite(b, 1, end, f) != end || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int r = 0;
    for (int i = 1; i < argc; i++)
        r |= trim(argv[i]);
    return r;
}
