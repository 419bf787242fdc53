/* SPDX-License-Identifier: MIT */
/*
 * transport.c - the plain TCP transport: the stream is the socket's bytes,
 * so each call is passed straight through (see transport.h).
 */
#include "event/transport.h"

#include "base/worker.h"
#include "event/conn.h"
#include "event/loop.h"

static ssize_t plain_send(struct worker *w, struct conn *c, const struct iovec *iov, unsigned n,
                          bool more)
{
    return w->loop->send(w, c, iov, n, more);
}

static ssize_t plain_sendfile(struct worker *w, struct conn *c, int fd, uint64_t *off, size_t n)
{
    return w->loop->sendfile(w, c, fd, off, n);
}

static void plain_want_read(struct worker *w, struct conn *c)
{
    w->loop->want_read(w, c);
}

const struct transport_ops transport_plain = {
    .name = "tcp",
    .send = plain_send,
    .sendfile = plain_sendfile,
    .recv_room = conn_input_room,
    .received = conn_input_done,
    .sent = conn_sent,
    .writable = conn_writable,
    .want_read = plain_want_read,
    .ending = NULL,
    .timeout = NULL,
    .release = NULL,
};
