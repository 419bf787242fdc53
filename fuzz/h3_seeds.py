#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes the seeds of fuzz/fuzz_h3.c into fuzz/corpus/h3/: inputs behind
the target's three control bytes (fuzz/fuzz_h3.c's header says what they
mean), each a list of records. With the HANDSHAKE flag the target's
in-process client finishes a real handshake first; the records of type 1
are QUIC frames it seals as 1-RTT packets with that client's keys, so the
seeds carry frames in the clear: requests as HTTP/3 bytes on new streams
(QPACK with the static table and literals), resets, flow control,
connection IDs, a close. Without it, raw datagrams: a short header of
nobody, an Initial of an unknown version, a truncated long header.

    fuzz/h3_seeds.py            # rewrites fuzz/corpus/h3/seed-*
"""
import os
import struct
import sys

HANDSHAKE, REQUEST, DRAIN, RETRY = 1, 2, 4, 8
RAW, SEALED, OTHER, CLOCK = 0, 1, 2, 3


def varint(v):
    if v < 64:
        return bytes([v])
    if v < 16384:
        return struct.pack(">H", 0x4000 | v)
    return struct.pack(">I", 0x80000000 | v)


def record(kind, payload):
    return bytes([kind << 6 | len(payload) >> 8, len(payload) & 0xFF]) + payload


def qpack_get(path, authority=b"localhost"):
    """A field section: GET https (static 17, 23), :authority and :path as
    literals with a static name (0, 1)."""
    return (b"\x00\x00\xd1\xd7" + b"\x50" + bytes([len(authority)]) + authority +
            b"\x51" + bytes([len(path)]) + path)


def h3_frame(t, payload):
    return varint(t) + varint(len(payload)) + payload


def stream(sid, data, fin=True, off=0):
    t = 0x08 | 0x02 | (0x04 if off else 0) | (0x01 if fin else 0)
    return (bytes([t]) + varint(sid) + (varint(off) if off else b"") + varint(len(data)) + data)


def seed(flags, path_index, ms, *records):
    return bytes([flags, path_index, ms]) + b"".join(records)


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "h3")
    os.makedirs(out, exist_ok=True)
    get_a = h3_frame(1, qpack_get(b"/a.txt"))
    seeds = {
        "handshake": seed(HANDSHAKE, 0, 10),
        "request-index": seed(HANDSHAKE | REQUEST, 0, 10),
        "request-big": seed(HANDSHAKE | REQUEST, 2, 1),
        "request-listing-drain": seed(HANDSHAKE | REQUEST | DRAIN, 3, 5),
        "retry": seed(HANDSHAKE | REQUEST | RETRY, 1, 5),
        # after a request of its own, the client sends two more as frames
        "sealed-requests": seed(HANDSHAKE | REQUEST, 0, 2,
                                record(SEALED, stream(4, get_a)),
                                record(SEALED, stream(8, h3_frame(1, qpack_get(b"/big.bin")))),
                                record(CLOCK, b"\x05")),
        "sealed-reset": seed(HANDSHAKE, 0, 2,
                             record(SEALED, stream(0, get_a, fin=False)),
                             record(SEALED, b"\x04" + varint(0) + varint(0x10c) + varint(20)),
                             record(SEALED, b"\x05" + varint(0) + varint(0x10c))),
        "sealed-flow": seed(HANDSHAKE, 0, 2,
                            record(SEALED, stream(0, get_a)),
                            record(SEALED, b"\x10" + varint(10) + b"\x11" + varint(0) + varint(1)),
                            record(SEALED, b"\x01" * 30),
                            record(CLOCK, b"\x14")),
        "sealed-cids": seed(HANDSHAKE, 0, 2,
                            record(SEALED, b"\x18" + varint(5) + varint(5) + b"\x08" +
                                   bytes(range(8)) + bytes(16)),
                            record(SEALED, b"\x19" + varint(1)),
                            record(SEALED, b"\x1a" + bytes(8))),
        "sealed-close": seed(HANDSHAKE | REQUEST, 1, 2,
                             record(SEALED, b"\x1d" + varint(0x100) + varint(0))),
        "sealed-empty-streams": seed(HANDSHAKE, 0, 1,
                                     record(SEALED, stream(0, b"", fin=False) * 50)),
        "sealed-bad-qpack": seed(HANDSHAKE, 0, 1,
                                 record(SEALED, stream(0, h3_frame(1, b"\x02\x00\x80"), False)),
                                 record(SEALED, stream(6, b"\x02" + b"\x3f\xe2\x1f", False))),
        "migration": seed(HANDSHAKE | REQUEST, 2, 1, record(OTHER, bytes(40))),
        "raw-reset": seed(0, 0, 10, record(RAW, b"\x40\x00" + bytes(60))),
        "raw-version": seed(0, 0, 10, record(RAW, b"\xc0\x1a\x2a\x3a\x4a\x08" + bytes(8) +
                                             b"\x08" + bytes(8) + bytes(1180))),
        "raw-initial-garbage": seed(0, 0, 10, record(RAW, b"\xc3\x00\x00\x00\x01\x10" +
                                                     bytes(16) + b"\x08" + bytes(8) +
                                                     b"\x00\x44\xd0" + bytes(1180))),
        "raw-short": seed(0, 0, 0, record(RAW, b"\xc0"), record(RAW, b"")),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, "seed-" + name), "wb") as f:
            f.write(data)
    print("%d seeds in %s" % (len(seeds), out), file=sys.stderr)


if __name__ == "__main__":
    main()
