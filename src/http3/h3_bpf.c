/* SPDX-License-Identifier: MIT */
/*
 * h3_bpf.c - the classic BPF program that steers each datagram to the
 * worker owning its connection (SO_ATTACH_REUSEPORT_CBPF, Linux 4.5). The
 * kernel runs it on the UDP payload and uses its result as an index into
 * the reuseport group, whose sockets are the workers' in order (the master
 * binds them 0..n-1 and keeps them all open, so the order never changes).
 *
 * A short-header packet (RFC 9000 §17.3: first bit 0) names one of our
 * connection IDs right after its first byte, and our IDs carry the owning
 * worker's index in their first byte (h3_token.c): that byte is the
 * result. A long-header packet (an Initial, a Handshake, 0-RTT) gets
 * 0xffffffff, past the group's end, which makes the kernel fall back to its
 * hash of the 4-tuple (reuseport_select_sock), so new connections spread as
 * TCP's do. Long-header packets of one handshake come from one 4-tuple and
 * so reach the same worker; an index past the group (a stale ID of a
 * larger pith) falls back to the hash too, and gets a stateless reset.
 */
#include "http3/h3_internal.h"

#include <errno.h>
#include <linux/filter.h>
#include <sys/socket.h>

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

int h3_bpf_attach(int fd, unsigned nworkers)
{
    (void)nworkers; /* the kernel bounds the index by the group's size */
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
