/* SPDX-License-Identifier: MIT */
/*
 * transport.h - the seam between a connection and its event loop, where a
 * byte stream is carried: plain TCP today; TLS (kernel TLS records, or
 * userspace records from OpenSSL) plugs in here without conn.c or the loops
 * knowing.
 *
 * Downwards, conn.c sends through the transport (memory, and file ranges
 * that plain TCP and kernel TLS hand to sendfile). Upwards, the loop hands
 * what the socket delivered to the transport, which passes the stream's
 * bytes on to the connection: it asks for room, reports received bytes,
 * finished sends and writability. A TLS transport decrypts and encrypts in
 * between; the plain one forwards.
 */
#ifndef PITH_TRANSPORT_H
#define PITH_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct worker;
struct conn;

struct transport_ops {
    const char *name;
    /* Sends iov[0..n) (MSG_MORE when more follows at once): bytes taken
     * now, -EAGAIN (the result comes later through sent(), or room through
     * writable()), or -errno. */
    ssize_t (*send)(struct worker *w, struct conn *c, const struct iovec *iov, unsigned n,
                    bool more);
    /* Sends up to n bytes of fd from *off (advanced): bytes sent, -EAGAIN
     * (writable() comes when there is room), or -errno. */
    ssize_t (*sendfile)(struct worker *w, struct conn *c, int fd, uint64_t *off, size_t n);
    /* Where the loop puts the next bytes from the socket: *room bytes at the
     * result. *room 0 is "no room": the loop receives and reports nothing
     * until want_read() is called again (after the transport passed on what
     * it holds). */
    char *(*recv_room)(struct worker *w, struct conn *c, size_t *room);
    /* n bytes were put at recv_room() (n > 0), the peer really ended its
     * stream (0; never "no room", never "nothing this time"), nothing was
     * there after all (-EAGAIN: the room offered is unused) or the socket
     * failed (-errno). */
    void (*received)(struct worker *w, struct conn *c, ssize_t n);
    /* A send that returned -EAGAIN ended: n bytes, -EAGAIN (the socket
     * was full and nothing went: wait for room, then send again) or
     * -errno. */
    void (*sent)(struct worker *w, struct conn *c, ssize_t n);
    /* The socket can take bytes again (never for a peer's FIN alone). */
    void (*writable)(struct worker *w, struct conn *c);
    /* The connection waits for stream bytes (the loop's want_read, after
     * handing over what the transport already holds). */
    void (*want_read)(struct worker *w, struct conn *c);
    /* Our side of the stream ends now (a close, or the write side shut
     * before lingering): TLS says so with a close_notify. May be NULL. */
    void (*ending)(struct worker *w, struct conn *c);
    /* The connection's deadline passed: true when the transport ended c
     * itself (a TLS handshake that did not finish in time), false to leave
     * it to conn.c's timeout. May be NULL. */
    bool (*timeout)(struct worker *w, struct conn *c);
    /* The connection is being freed (NULL: nothing to release). */
    void (*release)(struct worker *w, struct conn *c);
};

/* Plain TCP: every call goes straight to the connection or the loop. */
extern const struct transport_ops transport_plain;

/* What a connection offers its transport (the stream's bytes, to its
 * protocol) is in conn.h: conn_input_room, conn_input_done, conn_sent,
 * conn_writable. */

#endif
