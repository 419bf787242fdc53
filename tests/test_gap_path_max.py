# SPDX-License-Identifier: MIT
"""A decoded path longer than PATH_MAX within the request-line limit
(DESIGN.md §2 "decoded path longer than PATH_MAX | 404 (names no file; the
request line was within its limit)"): a clean 404 with the small error body,
the connection kept alive as for any 404 (only 400/408/414/431/505 close), a
request pipelined after it answered, and the worker unharmed. From below, a
file at the longest path the kernel opens (PATH_MAX - 1 bytes) is served,
with either resolver."""

import os
import urllib.parse

import pytest

import http_raw
from conftest import PITH_BIN

PATH_MAX = 4096
LINE_MAX = 8192

TARGETS = [
    # Many short segments: past PATH_MAX after decoding and normalizing.
    ("segments", "/" + "a/" * 2100 + "x"),
    # One segment longer than NAME_MAX as well.
    ("one_segment", "/" + "b" * 5000),
    # Escapes that decode to fewer bytes, still past PATH_MAX.
    ("escaped", "/" + "%63" * 1400 + "c" * 3000),
    # Exactly one byte past PATH_MAX once decoded.
    ("just_over", "/" + "d/" * 2048 + "e"),
    # Inside an existing directory, so the prefix resolves.
    ("under_sub", "/sub/" + "f/" * 2100),
]


def _decoded_len(target):
    return len(urllib.parse.unquote_to_bytes(target))


@pytest.mark.parametrize("name,target", TARGETS, ids=[t[0] for t in TARGETS])
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_decoded_path_over_path_max_is_404(resolver_server, name, target, method, docroot):
    server = resolver_server
    line = "%s %s HTTP/1.1" % (method, target)
    assert len(line) <= LINE_MAX
    assert _decoded_len(target) > PATH_MAX
    w = server.worker()
    with server.conn() as c:
        c.send(line.encode() + b"\r\nHost: localhost\r\n\r\n"
               b"GET /1k.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
        r = c.read_response(method)
        assert r.status == 404, r
        assert r.get("Connection") is None, r.head_text()
        assert int(r["Content-Length"]) > 0
        # The next request on the same connection is answered.
        r2 = c.read_response()
        assert r2.status == 200 and r2.body == docroot.files["1k.bin"]
        assert c.is_open(0.2)
        http_raw.assert_no_more_bytes(c, 0.1)
    assert server.workers() == [w], "the worker died or was replaced"


def _deep_file(base, length):
    """Creates base/D1/.../Dk/F whose path below base is exactly `length`
    bytes (components of at most NAME_MAX bytes), through directory
    descriptors since the absolute path is longer than PATH_MAX. Returns
    the relative path."""
    comps, left = [], length
    while left > 201:
        comps.append("d%02d" % len(comps) + "x" * 197)  # 200 bytes and a '/'
        left -= 201
    comps.append("f" * left)
    rel = "/".join(comps)
    assert len(rel) == length
    fd = os.open(str(base), os.O_RDONLY | os.O_DIRECTORY)
    try:
        for d in comps[:-1]:
            os.mkdir(d, dir_fd=fd)
            nfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        wfd = os.open(comps[-1], os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(wfd, b"deep\n")
        os.close(wfd)
    finally:
        os.close(fd)
    return rel


@pytest.mark.parametrize("resolver", ["openat2", "walk"])
def test_longest_openable_path_served(pith, tmp_path, resolver):
    """From below: a file whose decoded path is PATH_MAX - 1 bytes (the
    longest the kernel opens) is served, so the limit does not bite early;
    one byte more names no file (ENAMETOOLONG or ENOENT: 404)."""
    rel = _deep_file(tmp_path, PATH_MAX - 1)
    env = {"PITH_RESOLVE": "walk"} if resolver == "walk" else None
    s = pith(root=str(tmp_path), env=env)
    r = s.get("/" + rel)
    assert r.status == 200 and r.body == b"deep\n", r
    r = s.get("/" + rel + "g")
    assert r.status == 404, r


def _sanitized_build():
    with open(PITH_BIN, "rb") as f:
        return b"__asan_init" in f.read()


# Under the sanitizer build this caught a stack overflow in resolve.c's
# next_component (a component copied before its length was checked).
@pytest.mark.parametrize("length", [256, 1000, 4000])
def test_long_component_under_walk(pith, tmp_path, length):
    """A path component longer than NAME_MAX (255) under the component walk
    (kernels without openat2): 404 like openat2's ENAMETOOLONG, no memory
    error, the worker unharmed."""
    (tmp_path / "a.txt").write_bytes(b"a\n")
    s = pith(root=str(tmp_path), env={"PITH_RESOLVE": "walk"})
    assert "walk" in s.start_line
    w = s.worker()
    try:
        with s.conn() as c:
            r = c.exchange("GET", "/" + "b" * length)
            assert r.status == 404, r
            r = c.exchange("GET", "/a.txt")
            assert r.status == 200 and r.body == b"a\n"
        assert s.workers() == [w], "the worker died or was replaced"
    finally:
        # Stopped here so that a sanitizer report fails the test itself,
        # not the fixture's teardown.
        problems = s.stop()
    assert problems == []
