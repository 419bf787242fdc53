# SPDX-License-Identifier: MIT
"""Regression test for issue 8, defect 11:

    "HTTP/1.2 gets a 505. RFC 9110 §2.5 says a message with a higher minor
    version SHOULD be processed as the highest minor version implemented.
    Answer `GET / HTTP/1.2` as HTTP/1.1 would. Any other major version stays
    505."

Contract row (DESIGN.md §2): "HTTP/1.x with x > 1: processed as HTTP/1.1 and
answered as HTTP/1.1 (RFC 9110 §2.5 SHOULD) · any other major version: 505".
"""

import pytest

PIPELINED = b"GET /style.css HTTP/1.1\r\nHost: x\r\n\r\n"


def _req(version, target=b"/", host=True, extra=b""):
    return (b"GET " + target + b" " + version + b"\r\n" + (b"Host: x\r\n" if host else b"")
            + extra + b"\r\n")


@pytest.mark.parametrize("version", [b"HTTP/1.2", b"HTTP/1.9"])
def test_higher_minor_answered_as_http11_and_kept_alive(server, docroot, version):
    with server.conn() as c:
        c.send(_req(version))
        r = c.read_response()
        # Answered as HTTP/1.1 would: the root's index, status line HTTP/1.1.
        assert r.head_raw.startswith(b"HTTP/1.1 200 OK\r\n"), r
        assert r.body == docroot.files["index.html"]
        assert "close" not in r.get("Connection", "").lower(), r
        # Persistent like HTTP/1.1: the next request on this connection (same
        # version) is answered too.
        c.send(_req(version, b"/style.css"))
        r2 = c.read_response()
        assert r2.head_raw.startswith(b"HTTP/1.1 200 OK\r\n"), r2
        assert r2.body == docroot.files["style.css"]
        assert c.is_open(0.3), "the connection closed after a persistent HTTP/1.x response"


@pytest.mark.parametrize("version", [b"HTTP/1.2", b"HTTP/1.9"])
def test_higher_minor_pipelined_answered_in_order(server, docroot, version):
    with server.conn() as c:
        c.send(_req(version, b"/index.html") + _req(version, b"/app.js"))
        r1 = c.read_response()
        r2 = c.read_response()
    assert (r1.status, r2.status) == (200, 200)
    assert r1.body == docroot.files["index.html"] and r2.body == docroot.files["app.js"]


def test_higher_minor_processed_as_http11_needs_host(server):
    # Processed as HTTP/1.1: a request without Host is a 400 (RFC 9112 §3.2),
    # as it would be for HTTP/1.1 itself, and the connection closes.
    r, rest, closed = server.raw(_req(b"HTTP/1.2", host=False) + PIPELINED)
    assert r.status == 400, r
    assert r.version == "HTTP/1.1"
    assert closed and rest == b""


def test_higher_minor_connection_close_honoured(server):
    r, rest, closed = server.raw(_req(b"HTTP/1.2", extra=b"Connection: close\r\n") + PIPELINED)
    assert r.status == 200 and r.version == "HTTP/1.1"
    assert closed and rest == b"", rest[:200]


@pytest.mark.parametrize("version", [b"HTTP/2.0", b"HTTP/0.9", b"HTTP/3.1", b"HTTP/9.9"])
def test_other_major_version_505_and_close(server, version):
    r, rest, closed = server.raw(_req(version) + PIPELINED)
    assert r.status == 505, r
    assert r.version == "HTTP/1.1"
    assert closed, "connection still open after the 505"
    assert rest == b"", "the request pipelined behind the 505 was answered: %r" % rest[:200]
