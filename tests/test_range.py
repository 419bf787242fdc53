# SPDX-License-Identifier: MIT
"""Range requests (DESIGN.md §2; RFC 9110 §14): single ranges, 416,
multipart/byteranges with coalescing, the amplification limits, If-Range."""

import re

import pytest

import http_raw

LM_FIXED = "Tue, 14 Nov 2023 22:13:20 GMT"  # index.html's mtime (conftest FIXED_MTIME)
BOUNDARY_RE = re.compile(r'^multipart/byteranges;\s*boundary=("?)([^";]+)\1$', re.I)
CONTENT_RANGE_RE = re.compile(r"^bytes (\d+)-(\d+)/(\d+)$")


def _content_type(server, target):
    r = server.get(target, "HEAD")
    assert r.status == 200
    return r["Content-Type"]


def _assert_206(r, data, first, last):
    assert r.status == 206, r
    assert r["Content-Range"] == "bytes %d-%d/%d" % (first, last, len(data)), r.head_text()
    assert r["Content-Length"] == str(last - first + 1), r.head_text()
    assert r.body == data[first:last + 1]
    assert not r["Content-Type"].lower().startswith("multipart/"), r.head_text()
    assert "ETag" in r and "Last-Modified" in r, r.head_text()


def _assert_full(r, data):
    assert r.status == 200, r
    assert "Content-Range" not in r, r.head_text()
    assert r["Content-Length"] == str(len(data))
    assert r.body == data


def _assert_416(r, size):
    assert r.status == 416, r
    assert r["Content-Range"] == "bytes */%d" % size, r.head_text()
    assert r["Content-Type"].lower().startswith("text/html"), r.head_text()
    assert 0 < len(r.body) < 2048, r.body
    assert "Cache-Control" not in r, r.head_text()




def parse_multipart(r, data, part_type):
    """Parses a multipart/byteranges body strictly (RFC 9110 §14.6, RFC 2046
    §5.1.1): returns the [(first, last)] of its parts, after checking every
    part's Content-Type and Content-Range and its bytes against data."""
    assert r.status == 206, r
    assert "Content-Range" not in r, "a multipart 206 has no top-level Content-Range"
    m = BOUNDARY_RE.match(r["Content-Type"])
    assert m, r["Content-Type"]
    boundary = m.group(2).encode()
    assert 1 <= len(boundary) <= 70
    body = r.body
    assert r["Content-Length"] == str(len(body))
    delim = b"--" + boundary
    pos = 0
    if body.startswith(b"\r\n"):  # an optional CRLF before the first delimiter
        pos = 2
    assert body[pos:pos + len(delim) + 2] == delim + b"\r\n", body[:200]
    pos += len(delim) + 2
    parts = []
    while True:
        part_start = pos
        end = body.find(b"\r\n\r\n", pos)
        assert end >= 0, "part head not terminated: %r" % body[pos:pos + 200]
        head = body[pos:end].split(b"\r\n")
        fields = {}
        for line in head:
            name, sep, value = line.partition(b":")
            assert sep, "malformed part field line %r" % line
            key = name.decode().lower()
            assert key not in fields, "part field %s repeated" % key
            fields[key] = value.strip().decode("latin-1")
        assert set(fields) == {"content-type", "content-range"}, fields
        assert fields["content-type"] == part_type, fields
        cr = CONTENT_RANGE_RE.match(fields["content-range"])
        assert cr, fields["content-range"]
        first, last, size = int(cr.group(1)), int(cr.group(2)), int(cr.group(3))
        assert size == len(data)
        assert first <= last < size, fields["content-range"]
        pos = end + 4
        chunk = body[pos:pos + last - first + 1]
        assert chunk == data[first:last + 1], "part %d-%d bytes differ" % (first, last)
        parts.append((first, last))
        pos += last - first + 1
        # No part (its fields or its bytes) may contain the delimiter, or a
        # client would cut the part there (RFC 2046 §5.1.1).
        assert delim not in body[part_start:pos], (
            "part %d-%d contains the delimiter %r" % (first, last, delim))
        assert body[pos:pos + 2 + len(delim)] == b"\r\n" + delim, body[pos:pos + 100]
        pos += 2 + len(delim)
        if body[pos:pos + 2] == b"--":
            pos += 2
            break
        assert body[pos:pos + 2] == b"\r\n", body[pos:pos + 100]
        pos += 2
    # The close delimiter, then at most a CRLF (no epilogue of other bytes).
    assert body[pos:] in (b"", b"\r\n"), "bytes after the close delimiter: %r" % body[pos:]
    # Parts are sorted, disjoint and not adjacent (coalesced).
    for (a1, b1), (a2, b2) in zip(parts, parts[1:]):
        assert b1 + 1 < a2, "parts %r not sorted and coalesced" % parts
    assert len(parts) >= 2, "a multipart response with %d part(s)" % len(parts)
    return parts, boundary


@pytest.fixture(scope="module")
def files(docroot):
    return docroot.files


OCTET = "application/octet-stream"


# -- single ranges --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["1k.bin", "index.html", "big.bin"])
def test_first_two_bytes(server, files, name):
    r = server.get("/" + name, headers={"Range": "bytes=0-1"})
    _assert_206(r, files[name], 0, 1)
    assert len(r.body) == 2


@pytest.mark.parametrize("name", ["1k.bin", "big.bin"])
@pytest.mark.parametrize("spec,first,last", [
    ("bytes=100-", 100, None),
    ("bytes=-100", None, None),
    ("bytes=10-19", 10, 19),
    ("bytes=0-", 0, None),
    ("bytes=-1", None, None),
])
def test_single_range_forms(server, files, name, spec, first, last):
    data = files[name]
    n = len(data)
    if spec == "bytes=-100":
        first, last = n - 100, n - 1
    elif spec == "bytes=-1":
        first, last = n - 1, n - 1
    elif last is None:
        last = n - 1
    r = server.get("/" + name, headers={"Range": spec})
    _assert_206(r, data, first, last)


def test_range_in_the_middle_of_big_file(server, files):
    data = files["big.bin"]
    r = server.get("/big.bin", headers={"Range": "bytes=1048575-2097152"})
    _assert_206(r, data, 1048575, 2097152)


def test_last_byte_position(server, files):
    data = files["1k.bin"]
    r = server.get("/1k.bin", headers={"Range": "bytes=1023-1023"})
    _assert_206(r, data, 1023, 1023)


@pytest.mark.parametrize("spec", ["bytes=1000-5000", "bytes=1000-1024",
                                  "bytes=1000-99999999999999999999"])
def test_last_pos_beyond_end_clamped(server, files, spec):
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_206(r, files["1k.bin"], 1000, 1023)


@pytest.mark.parametrize("spec", ["bytes=0-99999999999999999999", "bytes=0-18446744073709551615",
                                  "bytes=0-18446744073709551616",
                                  "bytes=0-999999999999999999999999999999"])
def test_huge_last_pos_clamped(server, files, spec):
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_206(r, files["1k.bin"], 0, 1023)


@pytest.mark.parametrize("spec", ["bytes=-2000", "bytes=-1024", "bytes=-99999999999999999999",
                                  "bytes=-18446744073709551615"])
def test_suffix_longer_than_file(server, files, spec):
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_206(r, files["1k.bin"], 0, 1023)


def test_leading_zeros(server, files):
    spec = "bytes=00000000000000000000010-0000000000000000000019"
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_206(r, files["1k.bin"], 10, 19)


@pytest.mark.parametrize("unit", ["Bytes", "BYTES", "bYtEs"])
def test_unit_case_insensitive(server, files, unit):
    r = server.get("/1k.bin", headers={"Range": unit + "=0-1"})
    _assert_206(r, files["1k.bin"], 0, 1)


@pytest.mark.parametrize("spec,first,last", [("bytes=0-9,", 0, 9), ("bytes=,0-9", 0, 9),
                                             ("bytes=0-9,,", 0, 9)])
def test_empty_list_elements(server, files, spec, first, last):
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_206(r, files["1k.bin"], first, last)


def test_single_range_keepalive_continues(server, files):
    with server.conn() as c:
        for spec, first, last in [("bytes=0-1", 0, 1), ("bytes=-5", 1019, 1023),
                                  ("bytes=512-", 512, 1023)]:
            r = c.exchange("GET", "/1k.bin", {"Range": spec})
            _assert_206(r, files["1k.bin"], first, last)
        r = c.exchange("GET", "/big.bin", {"Range": "bytes=3000000-3000009"})
        _assert_206(r, files["big.bin"], 3000000, 3000009)
        r = c.exchange("GET", "/1k.bin")
        _assert_full(r, files["1k.bin"])
        http_raw.assert_no_more_bytes(c)


# -- 416 ------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["bytes=1024-", "bytes=1024-2000", "bytes=5000-6000", "bytes=-0",
                                  "bytes=18446744073709551615-", "bytes=18446744073709551616-",
                                  "bytes=99999999999999999999-", "bytes=2000-,3000-3001"])
def test_unsatisfiable_416(server, spec):
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_416(r, 1024)


def test_416_big_file(server, files):
    r = server.get("/big.bin", headers={"Range": "bytes=%d-" % len(files["big.bin"])})
    _assert_416(r, len(files["big.bin"]))


@pytest.mark.parametrize("spec", ["bytes=0-1", "bytes=0-", "bytes=-1", "bytes=-0", "bytes=0-0,5-9"])
def test_range_on_empty_file_416(server, spec):
    r = server.get("/empty.txt", headers={"Range": spec})
    _assert_416(r, 0)


def test_416_keeps_connection(server, files):
    with server.conn() as c:
        r = c.exchange("GET", "/1k.bin", {"Range": "bytes=4096-"})
        _assert_416(r, 1024)
        r = c.exchange("GET", "/1k.bin", {"Range": "bytes=0-1"})
        _assert_206(r, files["1k.bin"], 0, 1)
        http_raw.assert_no_more_bytes(c)


def test_satisfiable_part_wins_over_unsatisfiable(server, files):
    # One satisfiable range in the set: 206 for it alone.
    r = server.get("/1k.bin", headers={"Range": "bytes=5000-6000,0-9"})
    _assert_206(r, files["1k.bin"], 0, 9)


# -- invalid Range: ignored -----------------------------------------------------------


@pytest.mark.parametrize("spec", ["bytes=5-4", "items=0-1", "bytes=", "bytes=1-2x", "bytes 0-1",
                                  "bytes=-", "bytes=--1", "bytes=1--2", "bytes=0-1;x", "=0-1",
                                  "bytes=0x10-20", "bytes=+1-2", "bytes=1-+2", "bytes=a-b",
                                  "bytes=0-1,5-4", "bytes=0-1,x", "byte=0-1", "bytesx=0-1"])
def test_invalid_range_ignored(server, files, spec):
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_full(r, files["1k.bin"])


def test_head_with_range_is_full(server, files):
    r = server.get("/1k.bin", "HEAD", headers={"Range": "bytes=0-1"})
    assert r.status == 200, r
    assert r["Content-Length"] == "1024"
    assert "Content-Range" not in r
    with server.conn() as c:
        r = c.exchange("HEAD", "/big.bin", {"Range": "bytes=0-1,5-9"})
        assert r.status == 200, r
        assert r["Content-Length"] == str(len(files["big.bin"]))
        assert r.body == b""
        http_raw.assert_no_more_bytes(c)
        r = c.exchange("GET", "/1k.bin")
        _assert_full(r, files["1k.bin"])


def test_head_with_unsatisfiable_range_is_200(server):
    r = server.get("/1k.bin", "HEAD", headers={"Range": "bytes=5000-"})
    assert r.status == 200, r
    assert r["Content-Length"] == "1024"


def test_options_ignores_range(server):
    r = server.get("/1k.bin", "OPTIONS", headers={"Range": "bytes=0-1"})
    assert r.status == 204, r
    assert "Content-Range" not in r


@pytest.mark.parametrize("spec", ["bytes=0-1", "bytes=0-1,5-9", "bytes=99999-"])
def test_range_on_directory_listing_ignored(server, spec):
    full = server.get("/noindex/")
    assert full.status == 200
    r = server.get("/noindex/", headers={"Range": spec})
    assert r.status == 200, r
    assert "Content-Range" not in r
    assert r.body == full.body


# -- several ranges: multipart/byteranges -----------------------------------------------


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
@pytest.mark.parametrize("name", ["1k.bin", "index.html", "big.bin"])
def test_two_ranges_multipart(server, files, name):
    data = files[name]
    r = server.get("/" + name, headers={"Range": "bytes=0-4,20-29"})
    parts, _ = parse_multipart(r, data, _content_type(server, "/" + name))
    assert parts == [(0, 4), (20, 29)]


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
def test_multipart_many_forms_1k(server, files):
    data = files["1k.bin"]
    r = server.get("/1k.bin", headers={"Range": "bytes=-10,100-199,500-,0-0"})
    # 500- and -10 overlap: coalesced into 500-1023.
    parts, _ = parse_multipart(r, data, OCTET)
    assert parts == [(0, 0), (100, 199), (500, 1023)]


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
def test_multipart_big_file_sendfile_path(server, files):
    data = files["big.bin"]
    n = len(data)
    spec = "bytes=0-99,1048576-1114111,%d-%d,-100" % (n - 1000, n - 901)
    r = server.get("/big.bin", headers={"Range": spec})
    parts, _ = parse_multipart(r, data, _content_type(server, "/big.bin"))
    assert parts == [(0, 99), (1048576, 1114111), (n - 1000, n - 901), (n - 100, n - 1)]


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
def test_multipart_big_parts(server, files):
    data = files["big.bin"]
    r = server.get("/big.bin", headers={"Range": "bytes=0-1048575,2097152-"})
    parts, _ = parse_multipart(r, data, _content_type(server, "/big.bin"))
    assert parts == [(0, 1048575), (2097152, len(data) - 1)]


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
@pytest.mark.parametrize("spec", ["bytes=0-9, 20-29", "bytes=0-9 ,20-29", "bytes=0-9 , 20-29",
                                  "bytes=0-9,\t20-29", "bytes=0-9,,20-29", "bytes=,0-9,20-29,"])
def test_multipart_list_ows_and_empty_elements(server, files, spec):
    # RFC 9110 §5.6.1: OWS around the commas and empty elements are allowed.
    r = server.get("/1k.bin", headers={"Range": spec})
    parts, _ = parse_multipart(r, files["1k.bin"], OCTET)
    assert parts == [(0, 9), (20, 29)]


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
def test_multipart_unsorted_input_sorted(server, files):
    data = files["1k.bin"]
    r = server.get("/1k.bin", headers={"Range": "bytes=900-909,0-9,400-409"})
    parts, _ = parse_multipart(r, data, OCTET)
    assert parts == [(0, 9), (400, 409), (900, 909)]


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
def test_multipart_unsatisfiable_member_dropped(server, files):
    data = files["1k.bin"]
    r = server.get("/1k.bin", headers={"Range": "bytes=0-9,5000-6000,100-109"})
    parts, _ = parse_multipart(r, data, OCTET)
    assert parts == [(0, 9), (100, 109)]


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
def test_multipart_boundary_differs(server, files):
    a = server.get("/1k.bin", headers={"Range": "bytes=0-9,20-29"})
    b = server.get("/1k.bin", headers={"Range": "bytes=0-9,20-29"})
    _, ba = parse_multipart(a, files["1k.bin"], OCTET)
    _, bb = parse_multipart(b, files["1k.bin"], OCTET)
    assert ba != bb, "the same boundary twice: %r" % ba


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
@pytest.mark.h1_only("pipelining: raw requests back to back on one connection")
def test_multipart_keepalive_and_pipelining(server, files):
    data = files["1k.bin"]
    big = files["big.bin"]
    req = b"GET /1k.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9,20-29\r\n\r\n"
    req_big = b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9,-10\r\n\r\n"
    plain = b"GET /1k.bin HTTP/1.1\r\nHost: x\r\n\r\n"
    with server.conn() as c:
        c.send(req + req_big + plain + req)
        parse_multipart(c.read_response(), data, OCTET)
        parts, _ = parse_multipart(c.read_response(), big, OCTET)
        assert parts == [(0, 9), (len(big) - 10, len(big) - 1)]
        _assert_full(c.read_response(), data)
        parse_multipart(c.read_response(), data, OCTET)
        http_raw.assert_no_more_bytes(c)


@pytest.mark.parametrize("spec,first,last", [
    ("bytes=0-9,5-14", 0, 14),
    ("bytes=0-9,10-19", 0, 19),
    ("bytes=10-19,0-9", 0, 19),
    ("bytes=0-9,0-9", 0, 9),
    ("bytes=5-14,0-9,15-20", 0, 20),
    ("bytes=1000-,-30", 994, 1023),
])
def test_coalesced_to_single_range(server, files, spec, first, last):
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_206(r, files["1k.bin"], first, last)


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
def test_sixteen_ranges_multipart(server, files):
    spec = "bytes=" + ",".join("%d-%d" % (i, i) for i in range(0, 32, 2))
    r = server.get("/1k.bin", headers={"Range": spec})
    parts, _ = parse_multipart(r, files["1k.bin"], OCTET)
    assert parts == [(i, i) for i in range(0, 32, 2)]


def test_seventeen_ranges_full(server, files):
    spec = "bytes=" + ",".join("%d-%d" % (i, i) for i in range(0, 34, 2))
    assert spec.count(",") == 16
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_full(r, files["1k.bin"])


def test_seventeen_ranges_big_file_full(server, files):
    spec = "bytes=" + ",".join("%d-%d" % (i * 1000, i * 1000 + 9) for i in range(17))
    r = server.get("/big.bin", headers={"Range": spec})
    _assert_full(r, files["big.bin"])


@pytest.mark.parametrize("spec", ["bytes=0-,0-", "bytes=0-1023,0-1023", "bytes=-1024,0-",
                                  "bytes=0-600,500-1023,0-10"])
def test_ranges_adding_up_beyond_size_full(server, files, spec):
    r = server.get("/1k.bin", headers={"Range": spec})
    _assert_full(r, files["1k.bin"])


def test_thousand_copies_of_one_byte(server, files):
    spec = "bytes=" + ",".join(["0-0"] * 1000)
    assert len(spec) < 16 * 1024 - 100
    for name in ("1k.bin", "big.bin"):
        data = files[name]
        r = server.get("/" + name, headers={"Range": spec})
        assert r.status in (200, 206), r
        if r.status == 200:
            _assert_full(r, data)
        else:
            _assert_206(r, data, 0, 0)


def test_many_disjoint_ranges_bounded_response(server, files):
    # 2000 distinct one-byte ranges: not a 2000-part response.
    data = files["big.bin"]
    spec = "bytes=" + ",".join("%d-%d" % (i * 2, i * 2) for i in range(1500))
    assert len(spec) < 16 * 1024 - 100
    r = server.get("/big.bin", headers={"Range": spec})
    _assert_full(r, data)


# -- If-Range -------------------------------------------------------------------------


def _index_etag(server):
    r = server.get("/index.html")
    assert r.status == 200 and r["Last-Modified"] == LM_FIXED, r.head_text()
    return r["ETag"]


def test_if_range_current_etag_206(server, files):
    tag = _index_etag(server)
    r = server.get("/index.html", headers={"Range": "bytes=0-1", "If-Range": tag})
    _assert_206(r, files["index.html"], 0, 1)


@pytest.mark.router_lacks("multipart/byteranges (several ranges: 200 with the whole file)")
def test_if_range_current_etag_multipart(server, files):
    tag = _index_etag(server)
    r = server.get("/index.html", headers={"Range": "bytes=0-1,10-11", "If-Range": tag})
    parse_multipart(r, files["index.html"], "text/html; charset=utf-8")


@pytest.mark.parametrize("value", ['"other"', "W/{tag}", "{tag_short}",
                                   "Sun, 06 Nov 1994 08:49:37 GMT",
                                   "Tue, 14 Nov 2023 22:13:19 GMT", "Tue, 14 Nov 2023 22:13:21 GMT",
                                   "garbage", "*"])
def test_if_range_mismatch_full(server, files, value):
    tag = _index_etag(server)
    value = value.format(tag=tag, tag_short=tag[:-2] + '"')
    r = server.get("/index.html", headers={"Range": "bytes=0-1", "If-Range": value})
    _assert_full(r, files["index.html"])


def test_if_range_exact_date_206(server, files):
    _index_etag(server)
    r = server.get("/index.html", headers={"Range": "bytes=0-1", "If-Range": LM_FIXED})
    _assert_206(r, files["index.html"], 0, 1)


def test_if_range_without_range_is_full(server, files):
    tag = _index_etag(server)
    r = server.get("/index.html", headers={"If-Range": tag})
    _assert_full(r, files["index.html"])


def test_if_range_mismatch_with_unsatisfiable_range_is_200(server, files):
    r = server.get("/index.html", headers={"Range": "bytes=99999-", "If-Range": '"other"'})
    _assert_full(r, files["index.html"])
