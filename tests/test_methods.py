# SPDX-License-Identifier: MIT
"""Methods (DESIGN.md §2): GET/HEAD/OPTIONS served, the other standard
methods 405 with Allow, other valid tokens 501, invalid tokens 400."""

import pytest

ALLOW = "GET, HEAD, OPTIONS"


def _allow_set(v):
    return sorted(x.strip() for x in v.split(","))


def test_get_serves_file(server, docroot):
    r = server.get("/index.html")
    assert r.status == 200
    assert r.body == docroot.files["index.html"]


@pytest.mark.parametrize("path", ["/index.html", "/big.bin", "/empty.txt", "/sub/", "/noindex/"])
def test_head_same_headers_as_get_without_body(server, path):
    with server.conn() as c:
        g = c.exchange("GET", path)
        h = c.exchange("HEAD", path)
        # If HEAD had sent a body, this response would not parse.
        after = c.exchange("GET", "/style.css")
    assert g.status == h.status == 200
    assert after.status == 200 and after.body.startswith(b"body {")
    for name in ("Content-Type", "Content-Length", "Transfer-Encoding", "Last-Modified", "ETag",
                 "Accept-Ranges", "Cache-Control", "Server", "Vary"):
        assert h.get(name) == g.get(name), name
    if g.get("Content-Length") is not None:
        assert int(h["Content-Length"]) == len(g.body)
    elif g.version in ("HTTP/2", "HTTP/3"):  # a stream's end is its length (RFC 9113 §8.1)
        assert "Transfer-Encoding" not in g
    else:
        assert g["Transfer-Encoding"] == "chunked"
    assert h.body == b""


@pytest.mark.parametrize("target", ["/index.html", "*"])
def test_options_204_with_allow(server, target):
    with server.conn() as c:
        r = c.exchange("OPTIONS", target)
        assert r.status == 204
        assert _allow_set(r["Allow"]) == _allow_set(ALLOW)
        assert r.get("Content-Length") in (None, "0")
        # A 204 has no body: the next response on the connection parses.
        r2 = c.exchange("GET", "/index.html")
        assert r2.status == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "CONNECT", "TRACE"])
def test_known_unsupported_method_405_with_allow(server, method):
    r = server.get("/index.html", method=method)
    assert r.status == 405
    assert _allow_set(r["Allow"]) == _allow_set(ALLOW)


def test_post_with_zero_content_length_405(server):
    r = server.get("/index.html", method="POST", headers=[("Content-Length", "0")])
    assert r.status == 405
    assert _allow_set(r["Allow"]) == _allow_set(ALLOW)


@pytest.mark.parametrize("method", ["PROPFIND", "get", "Get", "MKCOL", "FOO-BAR", "X!#$%&'*+.^_`|~"])
def test_other_valid_token_501(server, method):
    r = server.get("/index.html", method=method)
    assert r.status == 501


@pytest.mark.parametrize("method", [b"G(ET", b"GE\"T", b"G,ET", b"GE/T", b"G@T", b"G\x80T",
                                    b"G{T"])
@pytest.mark.h1_only("raw bytes: an invalid token on the request line, the close after 400")
def test_invalid_method_token_400(server, method):
    # A 400 closes the connection, and nothing follows the response.
    r, rest, closed = server.raw(method + b" /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
    assert r.status == 400
    assert closed, "the connection stays open after a 400"
    assert rest == b"", rest[:200]
