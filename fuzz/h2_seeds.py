#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes the seeds of fuzz/fuzz_h2.c into fuzz/corpus/h2/: a handful of
valid client conversations (python3-h2 frames them) and a few broken ones,
each behind the target's four control bytes (fuzz/fuzz_h2.c's header says
what they mean). The conversations carry their own preface and SETTINGS,
so the flags ask the target not to add its own.

    fuzz/h2_seeds.py            # rewrites fuzz/corpus/h2/seed-*
"""
import os
import struct
import sys

import h2.config
import hpack
import h2.connection

NO_PREFACE, NO_SETTINGS, COMPLETIONS, DRAIN, NO_EOF, STOP_READING = 1, 2, 4, 8, 16, 32
OWN_START = NO_PREFACE | NO_SETTINGS


def client():
    c = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
    )
    c.initiate_connection()
    return c


def req(c, sid, path, method="GET", extra=(), end=True):
    headers = [
        (":method", method),
        (":scheme", "http"),
        (":authority", "localhost"),
        (":path", path),
    ] + list(extra)
    c.send_headers(sid, headers, end_stream=end)


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def seeds():
    out = {}

    c = client()
    req(c, 1, "/")
    out["get"] = (OWN_START, 0, 0, 0, c.data_to_send())

    c = client()
    req(c, 1, "/a.txt", "HEAD")
    req(c, 3, "/sub/b.js", "HEAD")
    out["head"] = (OWN_START, 7, 0, 0, c.data_to_send())

    c = client()
    req(c, 1, "/big.bin", extra=[("range", "bytes=100-299,1000-1099")])
    req(c, 3, "/mid.css", extra=[("range", "bytes=-500"), ("if-range", '"x"')])
    out["range"] = (OWN_START, 0, 3, 0, c.data_to_send())

    c = client()
    req(c, 1, "/a.txt", "POST", extra=[("content-length", "11")], end=False)
    c.send_data(1, b"hello world", end_stream=True)
    out["post"] = (OWN_START, 3, 0, 0, c.data_to_send())

    c = client()
    req(c, 1, "/big.bin")
    c.reset_stream(1)
    req(c, 3, "/index.html")
    out["rst"] = (OWN_START, 0, 1, 0, c.data_to_send())

    c = client()
    c.ping(b"12345678")
    req(c, 1, "/sub/")
    c.ping(b"abcdefgh")
    out["ping"] = (OWN_START | COMPLETIONS, 5, 2, 0, c.data_to_send())

    # A big file with the windows opened, read by a slow client: the output
    # buffer fills and waits for the socket.
    c = client()
    c.increment_flow_control_window(1 << 20)
    req(c, 1, "/big.bin")
    c.increment_flow_control_window(1 << 20, stream_id=1)
    req(c, 3, "/.secret")
    req(c, 5, "/mid.css", extra=[("accept-encoding", "gzip, br")])
    out["window"] = (OWN_START, 0, 4, 0, c.data_to_send())

    # Streams past --h2-max-streams 2, conditionals, a listing, then a drain.
    c = client()
    req(c, 1, "/sub/", extra=[("if-none-match", "*")])
    req(c, 3, "/sub/c.html", extra=[("if-modified-since", "Sun, 06 Nov 1994 08:49:37 GMT")])
    req(c, 5, "/nope/../a.txt?x=1")
    req(c, 7, "/%2e%2e/etc/passwd")
    out["many"] = (OWN_START | DRAIN, 2, 0, 1, c.data_to_send())

    # A header list spread over CONTINUATION frames.
    c = client()
    start = c.data_to_send()
    enc = c.encoder
    block = enc.encode(
        [(":method", "GET"), (":scheme", "http"), (":authority", "localhost"), (":path", "/a.txt")]
        + [("x-pad-%d" % i, "v" * 200) for i in range(20)]
    )
    third = len(block) // 3
    conv = (
        frame(1, 0x1, 1, block[:third])
        + frame(9, 0, 1, block[third : 2 * third])
        + frame(9, 0x4, 1, block[2 * third :])
    )
    out["continuation"] = (OWN_START, 9, 0, 0, start + conv)

    # A header list past 16 KiB from a few hundred bytes: one 4000-byte
    # field in HPACK's dynamic table, then referenced 30 times (431).
    c = client()
    start = c.data_to_send()
    big = hpack.Encoder().encode(
        [(":method", "GET"), (":scheme", "http"), (":authority", "localhost"), (":path", "/")]
        + [("x-big", "v" * 4000)] * 30
    )
    out["listmax"] = (OWN_START, 0, 0, 0, start + frame(1, 0x5, 1, big))

    # Bad frames: HEADERS on an even stream, a WINDOW_UPDATE of 0, an
    # unknown type, PRIORITY, an empty DATA, a SETTINGS of bad length.
    bad = (
        frame(1, 0x5, 2, b"\x82\x86\x84\x41\x09localhost")
        + frame(8, 0, 0, b"\x00\x00\x00\x00")
        + frame(0xFA, 0, 0, b"xyz")
        + frame(2, 0, 3, b"\x00\x00\x00\x01\x10")
        + frame(0, 0, 1, b"")
        + frame(4, 0, 0, b"\x00\x03\x00")
    )
    out["bad"] = (0, 4, 0, 0, bad)

    # Silence after a request: the deadlines end it; a client that stops
    # reading: the send timeout ends it.
    c = client()
    req(c, 1, "/index.html", end=False)
    out["silent"] = (OWN_START | NO_EOF, 0, 0, 200, c.data_to_send())
    c = client()
    c.increment_flow_control_window(1 << 20)
    req(c, 1, "/big.bin")
    c.increment_flow_control_window(1 << 20, stream_id=1)
    out["stuck"] = (OWN_START | STOP_READING | NO_EOF, 0, 1, 100, c.data_to_send())

    # HTTP/1 on the same port (no preface): the other protocol's path.
    out["http1"] = (NO_PREFACE | NO_SETTINGS, 0, 0, 0, b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = os.path.join(here, "corpus", "h2")
    os.makedirs(outdir, exist_ok=True)
    for name in os.listdir(outdir):
        if name.startswith("seed-"):
            os.unlink(os.path.join(outdir, name))
    for name, (flags, sizes, room, clock, body) in seeds().items():
        with open(os.path.join(outdir, "seed-" + name), "wb") as f:
            f.write(bytes([flags, sizes, room, clock]) + body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
