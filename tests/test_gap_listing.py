# SPDX-License-Identifier: MIT
"""Directory listings at size (DESIGN.md §2 "directory listing"): a directory
of about 3,000 entries (subdirectories, files, dotfiles, symlinks, fifos)
listed as HTML and as JSON (`Accept: application/json` and `?format=json`),
streamed over HTTP/1.1 with valid chunked framing and over HTTP/1.0
close-delimited (no Content-Length, no Transfer-Encoding, closed at the end).
The names shown, parsed from the HTML links and from the JSON, equal
os.listdir minus what src/http/dirlist.c hides (dotfiles, special files,
and symlinks unless --follow-symlinks); Content-Type, Cache-Control: no-cache
and Vary: Accept are as designed."""

import html
import json
import os
import re
import socket
import stat
import urllib.parse

import pytest

from gaputil import RawReader

NDIRS = 300
NFILES = 2600
NDOT = 100
NLINKS = 5
NFIFOS = 2
HTML_TYPE = "text/html; charset=utf-8"
JSON_TYPE = "application/json; charset=utf-8"
# One HTML row: directories end in '/', both in the href and in the text.
ROW_RE = re.compile(r'<tr data-dir="([01])"><td><a href="\./([^"]*)">([^<]*)</a></td>'
                    r'<td class="num"(?: data-v="(\d+)")?>')


def _file_name(i):
    # Names that need escaping in HTML, in URIs and in JSON, some non-ASCII,
    # so escaping is exercised across every chunk boundary.
    specials = ["plain", "sp ace", "a&b", "<lt>", 'q"uote', "it's", "per%25cent", "h#sh",
                "q?mark", "héllo", "日本", "back\\slash", "tab\tname", "semi;colon"]
    return "f%04d-%s.txt" % (i, specials[i % len(specials)])


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    root = tmp_path_factory.mktemp("biglisting")
    d = root / "big"
    d.mkdir()
    for i in range(NDIRS):
        (d / ("d%03d <dir> &" % i)).mkdir()
    for i in range(NFILES):
        (d / _file_name(i)).write_bytes(b"x" * (i % 97))
    for i in range(NDOT // 2):
        (d / (".dot%02d" % i)).write_bytes(b"SECRET dotfile\n")
        (d / (".dotdir%02d" % i)).mkdir()
    for i in range(NLINKS):
        os.symlink(_file_name(i) if i % 2 else "d000 <dir> &", str(d / ("link%d" % i)))
    for i in range(NFIFOS):
        os.mkfifo(str(d / ("fifo%d" % i)))
    names = os.listdir(str(d))
    assert len(names) == NDIRS + NFILES + NDOT + NLINKS + NFIFOS >= 3000
    return str(root), str(d)


def _visible(d, follow):
    """os.listdir minus what the listing hides: {name: (is_dir, size or None)}."""
    out = {}
    for n in os.listdir(d):
        if n.startswith("."):
            continue
        st = os.lstat(os.path.join(d, n))
        if stat.S_ISLNK(st.st_mode):
            if follow:
                out[n] = (False, None)  # shown without metadata (the target's)
            continue
        if stat.S_ISDIR(st.st_mode):
            out[n] = (True, None)
        elif stat.S_ISREG(st.st_mode):
            out[n] = (False, st.st_size)
    return out


def _html_entries(body):
    """{name: (is_dir, size or None)} from the listing's rows."""
    text = body.decode("utf-8")
    out = {}
    rows = ROW_RE.findall(text)
    assert len(rows) == text.count('<tr data-dir="'), "a row the pattern does not read"
    for is_dir, href, label, size in rows:
        name = urllib.parse.unquote(html.unescape(href), errors="strict")
        shown = html.unescape(label)
        if is_dir == "1":
            assert name.endswith("/") and shown.endswith("/"), (href, label)
            name, shown = name[:-1], shown[:-1]
        assert shown == name, "link text %r for href %r" % (label, href)
        assert name not in out, "listed twice: %r" % name
        out[name] = (is_dir == "1", int(size) if size else None)
    assert text.rstrip().endswith("</html>")
    return out


def _json_entries(body):
    doc = json.loads(body.decode("utf-8"))
    assert isinstance(doc, list)
    out = {}
    for e in doc:
        assert e["name"] not in out, "listed twice: %r" % e["name"]
        assert e["type"] in ("file", "directory"), e
        size = e["size"] if e["type"] == "file" else None
        out[e["name"]] = (e["type"] == "directory", size)
    return out


def _request(port, target, version, accept=None, extra=b""):
    s = socket.create_connection(("127.0.0.1", port), timeout=15)
    head = b"GET " + target.encode() + b" " + version.encode() + b"\r\n"
    if version == "HTTP/1.1":
        head += b"Host: localhost\r\n"
    if accept:
        head += b"Accept: " + accept.encode() + b"\r\n"
    s.sendall(head + extra + b"\r\n")
    return s


def _check_head(fields, ctype):
    assert fields["content-type"] == [ctype], fields
    assert fields["cache-control"] == ["no-cache"], fields
    assert fields["vary"] == ["Accept"], fields
    # No validators: the listing changes with the directory.
    assert "etag" not in fields and "last-modified" not in fields, fields


# (target, Accept, what the body is)
FORMATS = [
    ("/big/", None, "html"),
    ("/big/", "text/html", "html"),
    ("/big/", "application/json", "json"),
    ("/big/", "application/json, */*;q=0.1", "json"),
    ("/big/?format=json", None, "json"),
    ("/big/?a=1&format=json", "text/html", "json"),
    # Only the whole parameter counts: no suffix or prefix of another.
    ("/big/?xformat=json", None, "html"),
    ("/big/?format=jsonx", None, "html"),
    ("/big/?a=1xformat=json", None, "html"),
]


@pytest.fixture(scope="module")
def lserver(pith_module, big):
    return pith_module("--timeout-keepalive", "30", root=big[0])


@pytest.mark.parametrize("target,accept,fmt", FORMATS)
def test_listing_http11_chunked(lserver, big, target, accept, fmt):
    s = _request(lserver.port, target, "HTTP/1.1", accept)
    try:
        rd = RawReader(s)
        status, fields, _ = rd.head()
        assert status == 200
        _check_head(fields, JSON_TYPE if fmt == "json" else HTML_TYPE)
        assert fields["transfer-encoding"] == ["chunked"], fields
        assert "content-length" not in fields
        assert "connection" not in fields, "HTTP/1.1 listing must keep the connection"
        body, sizes = rd.chunked_body()
        # Streamed in bounded pieces, not built whole.
        assert len(sizes) > 10, sizes
        entries = _json_entries(body) if fmt == "json" else _html_entries(body)
        assert entries == _visible(big[1], follow=False)
        # The framing ended exactly where it said: the connection is still
        # usable, and the next answer starts at the next byte.
        assert rd.buf == b""
        s.sendall(b"GET /big/f0000-plain.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
        status, fields, _ = rd.head()
        assert status == 200 and fields["content-length"] == ["0"]
    finally:
        s.close()


@pytest.mark.parametrize("target,accept,fmt", FORMATS[::2])
@pytest.mark.parametrize("keep_alive", [False, True])
def test_listing_http10_close_delimited(lserver, big, target, accept, fmt, keep_alive):
    extra = b"Connection: keep-alive\r\n" if keep_alive else b""
    s = _request(lserver.port, target, "HTTP/1.0", accept, extra)
    try:
        rd = RawReader(s)
        status, fields, _ = rd.head()
        assert status == 200
        _check_head(fields, JSON_TYPE if fmt == "json" else HTML_TYPE)
        # Close-delimited: nothing says the length, and the close ends it,
        # even when the client asked to keep the connection.
        assert "transfer-encoding" not in fields and "content-length" not in fields, fields
        assert fields.get("connection") == ["close"], fields
        body = rd.until_close()
        entries = _json_entries(body) if fmt == "json" else _html_entries(body)
        assert entries == _visible(big[1], follow=False)
    finally:
        s.close()


def test_listing_head_has_no_body(lserver):
    s = socket.create_connection(("127.0.0.1", lserver.port), timeout=15)
    try:
        s.sendall(b"HEAD /big/ HTTP/1.1\r\nHost: localhost\r\n\r\n"
                  b"GET /big/f0001-sp%20ace.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
        rd = RawReader(s)
        status, fields, _ = rd.head()
        assert status == 200
        _check_head(fields, HTML_TYPE)
        # The next bytes are the pipelined answer, not a chunked body.
        status, fields, _ = rd.head()
        assert status == 200 and fields["content-length"] == ["1"]
    finally:
        s.close()


@pytest.mark.parametrize("fmt", ["html", "json"])
def test_listing_follow_symlinks_shows_links(pith, big, fmt):
    s = pith("--follow-symlinks", root=big[0])
    r = s.get("/big/" + ("?format=json" if fmt == "json" else ""))
    assert r.status == 200
    entries = _json_entries(r.body) if fmt == "json" else _html_entries(r.body)
    want = _visible(big[1], follow=True)
    assert set(entries) == set(want)
    assert sum(1 for n in entries if n.startswith("link")) == NLINKS
    # Links carry no metadata (it would be the target's); the rest do.
    for name, (is_dir, size) in want.items():
        if name.startswith("link"):
            assert entries[name] == (False, None), (name, entries[name])
        else:
            assert entries[name] == (is_dir, size), name
