# SPDX-License-Identifier: MIT
"""The exact head limits at the socket (DESIGN.md §2 "request line > 8 KiB
| 414 · header section > 16 KiB or > 100 fields | 431"; the byte counts as
src/core/http_parse.h defines them): a request line of 8192 bytes (without
its CRLF) is served and one of 8193 is 414; a field section of 16384 bytes
(every field line with its CRLF, plus the empty line's CRLF) is served and
one of 16385 is 431; 100 field lines are served and 101 are 431. Both sides
of each boundary, built to the byte; every 414/431 closes the connection and
the request pipelined after it is never answered."""

import pytest

import http_raw

LINE_MAX = 8192
SECTION_MAX = 16384
FIELDS_MAX = 100
HOST = b"Host: localhost\r\n"


def _request_line(n):
    """A request line of exactly n bytes for /index.html (the length goes
    into the query, so the path stays a file that exists)."""
    head = b"GET /index.html?"
    tail = b" HTTP/1.1"
    line = head + b"q" * (n - len(head) - len(tail)) + tail
    assert len(line) == n
    return line


def _section(n, nfields=2):
    """A field section (HOST first) of exactly n bytes with nfields lines,
    the empty line's CRLF included; the last line takes up the slack."""
    lines = [HOST] + [b"X-F%03d: v\r\n" % i for i in range(nfields - 2)]
    used = sum(map(len, lines)) + len(b"X-Pad: \r\n") + 2
    assert n >= used, (n, used)
    lines.append(b"X-Pad: " + b"p" * (n - used) + b"\r\n")
    section = b"".join(lines) + b"\r\n"
    assert len(section) == n and section.count(b"\r\n") == nfields + 1
    return section


def _send(server, line, section):
    """Sends one head, then a pipelined GET. Returns (first response, the
    bytes after it up to the close). After a 200 the pipelined request must
    be answered (its own framing checked here), after an error never."""
    second = b"GET /1k.bin HTTP/1.1\r\n" + HOST + b"Connection: close\r\n\r\n"
    with server.conn() as c:
        c.send(line + b"\r\n" + section + second)
        first = c.read_response()
        if first.status < 400:
            r2 = c.read_response()
            assert r2.status == 200 and len(r2.body) == 1024
        return first, c.wait_closed(5.0)


def _assert_ok(first, index):
    assert first.status == 200, first
    assert first.body == index


def _assert_rejected(first, rest, status):
    assert first.status == status, first
    assert first.get("Connection") == "close", first.head_text()
    # Closed, and the pipelined request was never processed.
    assert rest == b"", rest[:200]


def test_request_line_8192_served(server, docroot):
    first, _ = _send(server, _request_line(LINE_MAX), HOST + b"\r\n")
    _assert_ok(first, docroot.files["index.html"])


def test_request_line_8193_is_414(server):
    first, rest = _send(server, _request_line(LINE_MAX + 1), HOST + b"\r\n")
    _assert_rejected(first, rest, 414)


def test_request_line_8193_is_414_without_crlf(server):
    """414 as soon as the 8193rd byte arrives, not after waiting for a CRLF."""
    with server.conn() as c:
        c.send(_request_line(LINE_MAX + 1))
        r = c.read_response(timeout=5.0)
        assert r.status == 414
        assert c.wait_closed(5.0) == b""


@pytest.mark.parametrize("nfields", [2, FIELDS_MAX])
def test_field_section_16384_served(server, docroot, nfields):
    first, _ = _send(server, b"GET /index.html HTTP/1.1", _section(SECTION_MAX, nfields))
    _assert_ok(first, docroot.files["index.html"])


@pytest.mark.parametrize("nfields", [2, FIELDS_MAX])
def test_field_section_16385_is_431(server, nfields):
    first, rest = _send(server, b"GET /index.html HTTP/1.1", _section(SECTION_MAX + 1, nfields))
    _assert_rejected(first, rest, 431)


def _fields(n):
    """HOST and n - 1 short fields, then the empty line."""
    return HOST + b"".join(b"X-F%03d: v\r\n" % i for i in range(n - 1)) + b"\r\n"


def test_100_fields_served(server, docroot):
    first, _ = _send(server, b"GET /index.html HTTP/1.1", _fields(FIELDS_MAX))
    _assert_ok(first, docroot.files["index.html"])


def test_101_fields_is_431(server):
    first, rest = _send(server, b"GET /index.html HTTP/1.1", _fields(FIELDS_MAX + 1))
    _assert_rejected(first, rest, 431)


def test_longest_head_served_in_pieces(server, docroot):
    """Both limits at once (8192-byte line, 16384-byte section of 100
    fields), arriving a few bytes at a time: still one 200."""
    head = _request_line(LINE_MAX) + b"\r\n" + _section(SECTION_MAX, FIELDS_MAX)
    with server.conn() as c:
        for i in range(0, len(head), 4000):
            c.send(head[i:i + 4000])
        r = c.read_response()
        assert r.status == 200 and r.body == docroot.files["index.html"]
        http_raw.assert_no_more_bytes(c)
