# SPDX-License-Identifier: MIT
"""Regression test for issue 8, defect 12:

    "A POST with a body gets 400. A well-formed `POST /file` with
    `Content-Length: 5` and a body, or with `Transfer-Encoding: chunked`
    alone, is answered 400 Bad Request. It is not a bad request: the honest
    answer is 405 with Allow (RFC 9110 §15.5.6), as it already is for a POST
    without a body. Close the connection after it without reading the body
    (or discard the body during the lingering close); never read the body as
    a request. A GET, HEAD or OPTIONS with a body, CL+TE, duplicate or bad CL
    stay 400 and close; an unknown transfer coding is 501 and close."

Contract rows (DESIGN.md §2):
- "a body (non-zero Content-Length, or Transfer-Encoding: chunked alone) on
  POST PUT DELETE PATCH: 405 with Allow and close; the body is never read as
  a request"
- "a body on GET, HEAD or OPTIONS; CL+TE; a transfer coding other than
  chunked; bad or duplicate CL: 400 and close (unknown coding: 501 and close)"

Every body below is itself a complete request for a marker path: if the
server ever read it as a request, a second response would arrive, or the
marker would show up in the access log.
"""

import socket
import time

import pytest

ALLOW = ["GET", "HEAD", "OPTIONS"]
SMUGGLED = b"GET /secret-smuggle HTTP/1.1\r\nHost: x\r\n\r\n"
AFTER = b"GET /secret-after HTTP/1.1\r\nHost: x\r\n\r\n"


def _head(method, *fields, target=b"/index.html"):
    return (method + b" " + target + b" HTTP/1.1\r\nHost: x\r\n" + b"".join(f + b"\r\n"
                                                                         for f in fields) + b"\r\n")


def _chunked(data):
    return b"%x\r\n" % len(data) + data + b"\r\n0\r\n\r\n"


def _allow_set(v):
    return sorted(x.strip() for x in v.split(","))


@pytest.fixture(scope="module")
def logged(pith_module, tmp_path_factory):
    """One server with an access log, shared by the tests of this module."""
    log = tmp_path_factory.mktemp("regress12") / "access.log"
    s = pith_module("--log", str(log))
    s.log = log
    return s


def _log_lines(s, marker, timeout=4.0):
    """Sends a request for `marker` on a fresh connection and waits until its
    line is in the log, so every line before it is there too."""
    assert s.get(marker).status == 404
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(s.log, "rb") as f:
                lines = f.read().split(b"\n")[:-1]
        except FileNotFoundError:
            lines = []
        if any(marker.encode() in l for l in lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def _assert_answered_once_and_closed(s, data, status, close_wait=5.0):
    r, rest, closed = s.raw(data, close_wait=close_wait)
    assert r.status == status, r
    assert closed, "connection still open after the %d" % status
    assert rest == b"", "a second response (the body read as a request?): %r" % rest[:300]
    assert r.get("Connection", "").lower() == "close", r.head_text()
    return r


# -- a body on a method pith does not allow: 405 with Allow, then close ---------------

@pytest.mark.parametrize("method", [b"POST", b"PUT", b"DELETE", b"PATCH"])
def test_content_length_body_405_and_close(logged, method):
    data = _head(method, b"Content-Length: %d" % len(SMUGGLED)) + SMUGGLED + AFTER
    r = _assert_answered_once_and_closed(logged, data, 405)
    assert _allow_set(r["Allow"]) == ALLOW
    lines = _log_lines(logged, "/marker-cl-" + method.decode())
    assert not any(b"secret-" in l for l in lines), b"\n".join(lines).decode("latin-1")


@pytest.mark.parametrize("method", [b"POST", b"PUT", b"DELETE", b"PATCH"])
def test_chunked_body_405_and_close(logged, method):
    data = _head(method, b"Transfer-Encoding: chunked") + _chunked(SMUGGLED) + AFTER
    r = _assert_answered_once_and_closed(logged, data, 405)
    assert _allow_set(r["Allow"]) == ALLOW
    lines = _log_lines(logged, "/marker-te-" + method.decode())
    assert not any(b"secret-" in l for l in lines), b"\n".join(lines).decode("latin-1")


@pytest.mark.parametrize("framing", [b"Content-Length: 100000", b"Transfer-Encoding: chunked"])
def test_405_does_not_wait_for_the_body(logged, framing):
    """The body is not read: the 405 comes at once even when the client sends
    only the head (well before the 15 s header timeout)."""
    with logged.conn() as c:
        c.send(_head(b"POST", framing))
        t0 = time.monotonic()
        r = c.read_response(timeout=5.0)
        took = time.monotonic() - t0
        assert r.status == 405, r
        assert took < 2.0, took
        assert _allow_set(r["Allow"]) == ALLOW
        # The body the client sends after the 405 is discarded, never answered.
        late = _chunked(SMUGGLED) if framing.startswith(b"Transfer") else SMUGGLED
        c.send(late + AFTER)
        rest = c.wait_closed(5.0)
        assert rest == b"", rest[:300]
    lines = _log_lines(logged, "/marker-late-" + framing[:1].decode())
    assert not any(b"secret-" in l for l in lines), b"\n".join(lines).decode("latin-1")


def test_post_content_length_zero_405_keeps_connection(logged, docroot):
    with logged.conn() as c:
        c.send(_head(b"POST", b"Content-Length: 0"))
        r = c.read_response()
        assert r.status == 405, r
        assert _allow_set(r["Allow"]) == ALLOW
        # No body: the connection stays usable.
        r2 = c.exchange("GET", "/index.html")
        assert r2.status == 200 and r2.body == docroot.files["index.html"]


# -- framing that stays a 400 (or 501), then close ---------------------------------------

STAY_400 = [
    ("get_cl_body", _head(b"GET", b"Content-Length: 5") + b"hello"),
    ("head_cl_body", _head(b"HEAD", b"Content-Length: 5") + b"hello"),
    ("options_cl_body", _head(b"OPTIONS", b"Content-Length: 5") + b"hello"),
    ("get_cl_smuggled", _head(b"GET", b"Content-Length: %d" % len(SMUGGLED)) + SMUGGLED),
    ("get_chunked", _head(b"GET", b"Transfer-Encoding: chunked") + _chunked(SMUGGLED)),
    ("head_chunked", _head(b"HEAD", b"Transfer-Encoding: chunked") + _chunked(b"hello")),
    ("options_chunked", _head(b"OPTIONS", b"Transfer-Encoding: chunked") + _chunked(b"hello")),
    ("post_gzip_chunked", _head(b"POST", b"Transfer-Encoding: gzip, chunked")
     + _chunked(SMUGGLED)),
    ("post_cl_te", _head(b"POST", b"Content-Length: %d" % len(SMUGGLED),
                         b"Transfer-Encoding: chunked") + _chunked(SMUGGLED)),
    ("post_te_cl", _head(b"POST", b"Transfer-Encoding: chunked",
                         b"Content-Length: %d" % len(SMUGGLED)) + _chunked(SMUGGLED)),
    ("post_two_cl_same", _head(b"POST", b"Content-Length: 5", b"Content-Length: 5") + b"hello"),
    ("post_two_cl_differ", _head(b"POST", b"Content-Length: 5", b"Content-Length: 6")
     + b"hello!"),
    ("post_cl_list", _head(b"POST", b"Content-Length: 5, 5") + b"hello"),
    ("post_cl_abc", _head(b"POST", b"Content-Length: abc") + b"hello"),
    ("post_cl_negative", _head(b"POST", b"Content-Length: -5") + b"hello"),
    ("post_cl_plus", _head(b"POST", b"Content-Length: +5") + b"hello"),
    ("put_cl_hex", _head(b"PUT", b"Content-Length: 0x5") + b"hello"),
]


@pytest.mark.parametrize("data", [d for _, d in STAY_400], ids=[n for n, _ in STAY_400])
def test_bad_framing_400_and_close(logged, data):
    method = data.split(b" ", 1)[0].decode()
    r, rest, closed = logged.raw(data + AFTER, method=method)
    assert r.status == 400, r
    assert closed, "connection still open after the 400"
    assert rest == b"", "a second response (the body read as a request?): %r" % rest[:300]


@pytest.mark.parametrize("method", [b"POST", b"PUT"])
def test_unknown_transfer_coding_501_and_close(logged, method):
    data = _head(method, b"Transfer-Encoding: foo") + SMUGGLED + AFTER
    _assert_answered_once_and_closed(logged, data, 501)
    lines = _log_lines(logged, "/marker-501-" + method.decode())
    assert not any(b"secret-" in l for l in lines), b"\n".join(lines).decode("latin-1")
