# SPDX-License-Identifier: MIT
"""Bodies across TLS record and buffer boundaries (issue 19), byte for byte.

Userspace TLS writes a response in records of at most 16 KiB of plaintext
(tls.c: TLS_OUT_SIZE), staged one at a time, and sends small files from the
file cache's memory (up to --cache-max-file, 65,536 bytes by default) and
larger ones record by record from their descriptor. A write path that sent
only the first record of a body, or lost the tail of a record, passed every
other HTTPS test: none had a body between 16 and 64 KiB. Here each size
around a record (16,383 / 16,384 / 16,385), a few records (40,000), the
cache limit (65,535 / 65,536 / 65,537) and one byte goes over HTTPS and, for
contrast, plain HTTP, from a server that keeps small files in memory and one
without a file cache (every body by its descriptor), one request per
connection and pipelined on one connection. The loop is the pass's
(PITH_IO=epoll and PITH_IO=uring)."""

import hashlib
import os

import pytest

import http_raw
from conftest import tls_pki
from tlsutil import plain_socket, tls_args, tls_conn

pytestmark = pytest.mark.full_only("TLS")

CACHE_MAX_FILE = 65536  # src/cli/config.c: cache_max_file's default
SIZES = [1, 16383, 16384, 16385, 40000, CACHE_MAX_FILE - 1, CACHE_MAX_FILE,
         CACHE_MAX_FILE + 1]
MODES = {
    # Files up to the cache limit are answered from memory, larger ones by
    # their descriptor (the userspace TLS path's file records).
    "cached": [],
    # No file cache: every body goes by its descriptor.
    "uncached": ["--cache-entries", "0"],
}


@pytest.fixture(scope="module")
def bodies(docroot):
    out = {}
    for n in SIZES:
        # Each body distinct and position-dependent: a record sent twice,
        # skipped or shifted shows.
        seed = hashlib.sha256(b"%d" % n).digest()
        data = (seed * (n // len(seed) + 1))[:n]
        data = bytes((b + i // 32) & 0xFF for i, b in enumerate(data))
        rel = "tlsbodies/%d.bin" % n
        docroot.write(rel, data)
        out[n] = ("/" + rel, data)
    return out


@pytest.fixture(scope="module", params=sorted(MODES))
def bserver(request, pith_module, bodies):
    pki = tls_pki()
    s = pith_module(*tls_args(pki, *MODES[request.param]))
    s.pki = pki
    s.mode = request.param
    return s


def connect(server, scheme):
    if scheme == "https":
        return tls_conn(server.tls_port, server.pki)
    return http_raw.Conn(0, sock=plain_socket(server.http_port))


def check(resp, data, what):
    assert resp.status == 200, (what, resp.status)
    assert int(resp["content-length"]) == len(data), (what, resp["content-length"])
    assert len(resp.body) == len(data), "%s: %d of %d bytes" % (what, len(resp.body), len(data))
    assert resp.body == data, "%s: the body differs from byte %d" % (
        what, next(i for i, (a, b) in enumerate(zip(resp.body, data)) if a != b))


@pytest.mark.parametrize("scheme", ["https", "http"])
@pytest.mark.parametrize("size", SIZES)
def test_body_byte_exact(bserver, bodies, scheme, size):
    path, data = bodies[size]
    # Twice on one connection: the first open, then the cache's hit.
    with connect(bserver, scheme) as c:
        for i in range(2):
            check(c.exchange("GET", path), data, "%s %s %d bytes, request %d"
                  % (bserver.mode, scheme, size, i + 1))
            assert c.is_open(), "the server closed after %d bytes" % size


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_pipelined_bodies_byte_exact(bserver, bodies, scheme):
    """Every size pipelined on one connection, twice over: each response
    starts where the one before ended, so a short or long body shifts all
    that follow."""
    order = SIZES + SIZES[::-1]
    with connect(bserver, scheme) as c:
        c.send(b"".join(b"GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % bodies[n][0].encode()
                        for n in order))
        for i, n in enumerate(order):
            check(c.read_response("GET"), bodies[n][1], "%s %s pipelined #%d (%d bytes)"
                  % (bserver.mode, scheme, i, n))


def test_range_across_a_record_boundary(bserver, bodies):
    """A Range that starts inside the first record and ends inside the
    third, over HTTPS."""
    path, data = bodies[40000]
    with connect(bserver, "https") as c:
        r = c.exchange("GET", path, {"Range": "bytes=16000-33000"})
        assert r.status == 206, r.status
        assert r.body == data[16000:33001]
