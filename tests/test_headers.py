# SPDX-License-Identifier: MIT
"""Headers of a 200 (DESIGN.md §2) and the error-response shape."""

import re
import time

import pytest

from conftest import FIXED_MTIME, VERSION
from http_raw import IMF_FIXDATE_RE, parse_imf_fixdate

SINGLETONS = ["Content-Type", "Content-Length", "Last-Modified", "ETag", "Accept-Ranges",
              "Cache-Control", "Date", "Server"]


def test_200_has_every_header(server, docroot):
    r = server.get("/index.html")
    assert r.status == 200
    for name in SINGLETONS:
        assert len(r.all(name)) == 1, "%s must appear exactly once:\n%s" % (name, r.head_text())
    assert r["Content-Type"].lower().replace(" ", "") == "text/html;charset=utf-8"
    assert r["Content-Length"] == str(len(docroot.files["index.html"]))
    assert r["Accept-Ranges"] == "bytes"
    assert r["Cache-Control"] == "max-age=60"
    assert r["Server"] == "pith/" + VERSION
    assert r.body == docroot.files["index.html"]


def test_last_modified_is_imf_fixdate_of_mtime(server):
    r = server.get("/index.html")
    assert IMF_FIXDATE_RE.match(r["Last-Modified"]), r["Last-Modified"]
    assert r["Last-Modified"] == "Tue, 14 Nov 2023 22:13:20 GMT"
    assert parse_imf_fixdate(r["Last-Modified"]) == FIXED_MTIME


def test_date_is_imf_fixdate_now(server):
    r = server.get("/index.html")
    t = parse_imf_fixdate(r["Date"])
    assert t is not None, r["Date"]
    assert abs(t - time.time()) < 5


def test_etag_strong_quoted_and_stable(server):
    a = server.get("/index.html")
    b = server.get("/index.html")
    c = server.get("/style.css")
    assert re.fullmatch(r'"[\x21\x23-\x7e\x80-\xff]+"', a["ETag"]), a["ETag"]
    assert not a["ETag"].startswith("W/")
    assert a["ETag"] == b["ETag"]
    assert a["ETag"] != c["ETag"]


@pytest.mark.parametrize("name", ["big.bin", "1k.bin", "image.png", "empty.txt"])
def test_body_equals_file_bytes(server, docroot, name):
    r = server.get("/" + name)
    assert r.status == 200
    assert r["Content-Length"] == str(len(docroot.files[name]))
    assert r.body == docroot.files[name]


def test_big_file_twice_on_one_connection(server, docroot):
    with server.conn() as c:
        for _ in range(2):
            r = c.exchange("GET", "/big.bin")
            assert r.status == 200
            assert r.body == docroot.files["big.bin"]


ERROR_REQUESTS = [
    (b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404),
    (b"GET /.hidden HTTP/1.1\r\nHost: x\r\n\r\n", 403),
    (b"GET /../x HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"POST /index.html HTTP/1.1\r\nHost: x\r\n\r\n", 405),
    (b"PROPFIND /index.html HTTP/1.1\r\nHost: x\r\n\r\n", 501),
    (b"GET /index.html HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"b" * 17000 + b"\r\n\r\n", 431),
    (b"GET / HTTP/1.1\r\n\r\n", 400),
]


@pytest.mark.h1_only("raw bytes: request lines and heads (test_error_shape_through_the_helpers "
                     "has their HTTP/2 forms)")
@pytest.mark.parametrize("req,status", ERROR_REQUESTS, ids=[str(s) + "-" + str(i) for i, (_, s) in
                                                           enumerate(ERROR_REQUESTS)])
def test_error_has_small_html_body_no_cache_control(server, req, status):
    r, _, _ = server.raw(req, close_wait=0.5)
    assert r.status == status
    assert r.get("Content-Type", "").lower().startswith("text/html"), r.head_text()
    assert r.get("Cache-Control") is None, r.head_text()
    assert 0 < len(r.body) <= 2048
    assert r.get("Content-Length") == str(len(r.body))
    assert r["Server"] == "pith/" + VERSION


# The rows of ERROR_REQUESTS that HTTP/2 can carry, through the fixture's
# helpers, so the HTTP/2 passes (PITH_H2=1) check the same error shape.
HELPER_ERRORS = [
    ("GET", "/nope", [], 404),
    ("GET", "/.hidden", [], 403),
    ("GET", "/../x", [], 400),
    ("POST", "/index.html", [], 405),
    ("PROPFIND", "/index.html", [], 501),
    ("GET", "/" + "a" * 9000, [], 414),
    ("GET", "/", [("X-Big", "b" * 17000)], 431),
]


@pytest.mark.parametrize("method,target,headers,status", HELPER_ERRORS,
                         ids=[str(s) for _, _, _, s in HELPER_ERRORS])
def test_error_shape_through_the_helpers(server, method, target, headers, status):
    r = server.get(target, method=method, headers=headers)
    assert r.status == status
    assert r.get("Content-Type", "").lower().startswith("text/html"), r.head_text()
    assert r.get("Cache-Control") is None, r.head_text()
    assert 0 < len(r.body) <= 2048
    assert r.get("Content-Length") == str(len(r.body))
    assert r["Server"] == "pith/" + VERSION
