/* SPDX-License-Identifier: MIT */
/*
 * h1_conn.h - HTTP/1.1 on a connection (h1_conn.c): the protocol every
 * connection begins with (the worker starts it at the accept), until
 * HTTP/2's preface or ALPN h2 hands it over.
 */
#ifndef PITH_H1_CONN_H
#define PITH_H1_CONN_H

#include "event/conn.h"

extern const struct conn_proto h1_proto;

#endif
