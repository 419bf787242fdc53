/* SPDX-License-Identifier: MIT */
/*
 * h3_bpf.c - the program that steers each datagram to the worker owning
 * its connection, attached by the master to the workers' SO_REUSEPORT
 * group before any worker exists (and before the sandbox).
 *
 * Our connection IDs start with a key (h3_token.c): the generation's base
 * (0, 64, 128 or 192) plus the worker's index. A short-header packet (RFC
 * 9000 §17.3: first bit 0) names one of our IDs right after its first
 * byte, so that byte picks the socket; so does a Handshake packet, whose
 * Destination Connection ID (§17.2: its length at byte 5, the ID from
 * byte 6) is ours once the client has our Initial. Initial and 0-RTT
 * packets, which may still carry the client's own choice, go by the
 * kernel's hash of their 4-tuple, so new connections spread as TCP's do,
 * and the packets of one handshake, from one 4-tuple, reach one worker.
 *
 * Where the kernel lets the master load one (CAP_BPF or CAP_SYS_ADMIN,
 * Linux 4.19), the program is eBPF over a REUSEPORT_SOCKARRAY map that
 * holds each worker's socket at its key: the key is looked up, not
 * counted along the group, so sockets may join and leave the group
 * without moving anyone's packets. That is what an upgrade or a reload
 * needs: the new master takes the map over (upgrade.c passes it on), puts
 * its own sockets at the next generation's keys and attaches its program,
 * which sends long headers, new connections, to its own workers; the old
 * workers' connections keep reaching them by their keys until they drain,
 * and a socket that closes leaves the map by itself. A key with no socket
 * (an ID of a worker gone, or of an older run) falls back to the hash, and
 * whoever gets it answers with a stateless reset.
 *
 * Elsewhere (the start line says why) the program is classic BPF
 * (SO_ATTACH_REUSEPORT_CBPF, Linux 4.5), whose result is an index into the
 * group in join order: right while the group stays as the master bound it
 * (the master keeps every socket open, restarts included), wrong once an
 * upgrade's sockets join and the old ones leave, since the kernel then
 * moves the last sockets into the holes (docs/DESIGN.md says what that
 * costs). A master that upgraded from one without the map starts a map of
 * its own at base 0: the old master's IDs, indices from 0, then name the
 * new sockets, and its connections end (pith(1), UPGRADES).
 */
#include "http3/h3_internal.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif
#ifndef SO_ATTACH_REUSEPORT_EBPF
#define SO_ATTACH_REUSEPORT_EBPF 52
#endif

#define KEYS 256 /* a connection ID's first byte */

static int attach_cbpf(int fd)
{
    static struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),            /* A = the first byte */
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80, 2, 0), /* long header: hash */
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 1),            /* A = the DCID's first byte */
        BPF_STMT(BPF_RET | BPF_A, 0),                     /* the worker's index */
        BPF_STMT(BPF_RET | BPF_K, 0xffffffff),            /* past the group: hash */
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) < 0)
        return -errno;
    return 0;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
    long r = syscall(__NR_bpf, cmd, attr, sizeof *attr);
    return r < 0 ? -errno : (int)r;
}

static int map_create(void)
{
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.map_type = BPF_MAP_TYPE_REUSEPORT_SOCKARRAY;
    a.key_size = sizeof(uint32_t);
    a.value_size = sizeof(uint64_t);
    a.max_entries = KEYS;
    return sys_bpf(BPF_MAP_CREATE, &a);
}

/* Whether fd is a map of ours (an upgrade's: anything else is left alone). */
static bool map_ours(int fd)
{
    struct bpf_map_info info;
    memset(&info, 0, sizeof info);
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.info.bpf_fd = (uint32_t)fd;
    a.info.info_len = sizeof info;
    a.info.info = (uint64_t)(uintptr_t)&info;
    return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0 &&
           info.type == BPF_MAP_TYPE_REUSEPORT_SOCKARRAY && info.key_size == sizeof(uint32_t) &&
           info.max_entries == KEYS;
}

static int map_put(int map, uint32_t key, int fd)
{
    uint64_t value = (uint64_t)fd;
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.map_fd = (uint32_t)map;
    a.key = (uint64_t)(uintptr_t)&key;
    a.value = (uint64_t)(uintptr_t)&value;
    a.flags = BPF_ANY;
    return sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

#define INSN(op, dst, src, o, i)                                                                   \
    ((struct bpf_insn){.code = (op), .dst_reg = (dst), .src_reg = (src), .off = (o), .imm = (i)})

/* The eBPF program over map: the key is the DCID's first byte for a short
 * header or a Handshake packet with an ID of our length, else base + hash
 * % n. It always passes: when no socket is at the key
 * (bpf_sk_select_reuseport fails), the kernel hashes. */
static int prog_load(int map, uint8_t base, unsigned n)
{
    enum { CTX = 6, KEY = -16, HEAD = -8 }; /* HEAD: the payload's first 7 bytes */
    const struct bpf_insn code[] = {
        INSN(BPF_ALU64 | BPF_MOV | BPF_X, CTX, 1, 0, 0),
        /* The UDP payload's first bytes (after the 8-byte header). */
        INSN(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 8),
        INSN(BPF_ALU64 | BPF_MOV | BPF_X, 3, 10, 0, 0),
        INSN(BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, HEAD),
        INSN(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 7),
        INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_skb_load_bytes),
        INSN(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 22, 0), /* too short: pass */
        INSN(BPF_LDX | BPF_MEM | BPF_B, 2, 10, HEAD, 0),
        INSN(BPF_JMP | BPF_JSET | BPF_K, 2, 0, 2, 0x80), /* long header */
        INSN(BPF_LDX | BPF_MEM | BPF_B, 2, 10, HEAD + 1, 0),
        INSN(BPF_JMP | BPF_JA, 0, 0, 10, 0), /* to the key */
        /* Long: a Handshake packet (type 2) to an ID of our length? */
        INSN(BPF_ALU64 | BPF_MOV | BPF_X, 3, 2, 0, 0),
        INSN(BPF_ALU64 | BPF_AND | BPF_K, 3, 0, 0, 0x30),
        INSN(BPF_JMP | BPF_JNE | BPF_K, 3, 0, 4, 0x20),
        INSN(BPF_LDX | BPF_MEM | BPF_B, 3, 10, HEAD + 5, 0),
        INSN(BPF_JMP | BPF_JNE | BPF_K, 3, 0, 2, H3_CID_LEN),
        INSN(BPF_LDX | BPF_MEM | BPF_B, 2, 10, HEAD + 6, 0),
        INSN(BPF_JMP | BPF_JA, 0, 0, 3, 0), /* to the key */
        /* Initial, 0-RTT: this generation's socket by the hash. */
        INSN(BPF_LDX | BPF_MEM | BPF_W, 2, CTX, offsetof(struct sk_reuseport_md, hash), 0),
        INSN(BPF_ALU | BPF_MOD | BPF_K, 2, 0, 0, (int32_t)n),
        INSN(BPF_ALU | BPF_ADD | BPF_K, 2, 0, 0, base),
        /* The key: the socket there, if any. */
        INSN(BPF_STX | BPF_MEM | BPF_W, 10, 2, KEY, 0),
        INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, CTX, 0, 0),
        INSN(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, map),
        INSN(0, 0, 0, 0, 0),
        INSN(BPF_ALU64 | BPF_MOV | BPF_X, 3, 10, 0, 0),
        INSN(BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, KEY),
        INSN(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0),
        INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_select_reuseport),
        INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, SK_PASS),
        INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    };
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.prog_type = BPF_PROG_TYPE_SK_REUSEPORT;
    a.insns = (uint64_t)(uintptr_t)code;
    a.insn_cnt = sizeof code / sizeof code[0];
    a.license = (uint64_t)(uintptr_t) "MIT";
    return sys_bpf(BPF_PROG_LOAD, &a);
}

/* The eBPF steering on map: fds at base.., the program attached. */
static int steer_ebpf(int map, const int *fds, unsigned n, uint8_t base)
{
    for (unsigned i = 0; i < n; i++) {
        int r = map_put(map, base + i, fds[i]);
        if (r < 0)
            return r;
    }
    int prog = prog_load(map, base, n);
    if (prog < 0)
        return prog;
    int r = setsockopt(fds[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &prog, sizeof prog);
    r = r < 0 ? -errno : 0;
    close(prog); /* the group holds it now */
    return r;
}

int h3_bpf_steer(struct server *srv, struct h3_server *h)
{
    const int *fds = srv->udp_fds;
    unsigned n = srv->nlisten;
    int map = srv->h3_map_fd, r = -EBADF; /* an upgrade's: the old keys live in it */
    if (map >= 0 && !map_ours(map))
        map = -1; /* not ours to use, nor to close */
    if (map < 0)
        srv->h3_cid_base = 0;
    if (map < 0)
        map = r = map_create();
    if (map >= 0 && (r = steer_ebpf(map, fds, n, srv->h3_cid_base)) == 0) {
        srv->h3_map_fd = map;
        h->cid_base = srv->h3_cid_base;
        h->ebpf = true;
        return 0;
    }
    if (map >= 0)
        close(map);
    h->ebpf_errno = -r;
    srv->h3_map_fd = -1;
    srv->h3_cid_base = h->cid_base = 0; /* the classic program's keys are indices */
    h->ebpf = false;
    /* After an upgrade, over the old master's program (with one worker
     * too): an eBPF one would send new connections to the old keys. */
    return n > 1 || srv->upgrade_from ? attach_cbpf(fds[0]) : 0;
}
