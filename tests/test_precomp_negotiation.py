# SPDX-License-Identifier: MIT
"""Precompressed variants (issue 11): which representation each
Accept-Encoding gets (RFC 9110 §12.5.3), and what its responses say.

The fixture's app.js has three variants made by the real tools, sized
br < zstd < gzip (brotli -q 11, zstd -19, gzip -1; checked before any
test); plain.js has none. Every answer is checked against the bytes on
disk: the variant chosen is the file sent, byte for byte.
"""

import os
import re
import time

import pytest

from precomp_util import SUFFIX, decode, make_variant, need_tools, read, text

pytestmark = pytest.mark.full_only("precompressed variants (left out of pith-tiny)")

BR, ZSTD, GZIP, ID = "br", "zstd", "gzip", None
NA = 406


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    need_tools()
    root = tmp_path_factory.mktemp("precomp-neg")
    app = str(root / "app.js")
    with open(app, "wb") as f:
        f.write(text(30 * 1024, "app"))
    make_variant(app, "br", level=11)
    make_variant(app, "zstd", level=19)
    make_variant(app, "gzip", level=1)
    with open(str(root / "plain.js"), "wb") as f:
        f.write(text(4096, "plain"))
    sizes = {c: os.path.getsize(app + SUFFIX[c]) for c in SUFFIX}
    assert sizes["br"] < sizes["zstd"] < sizes["gzip"] < os.path.getsize(app), sizes
    return root


@pytest.fixture(scope="module")
def srv(pith_module, site):
    return pith_module(root=str(site))


def body_of(site, coding, name="app.js"):
    path = str(site / name)
    return read(path + SUFFIX[coding]) if coding else read(path)


def get(srv, target="/app.js", ae=None, method="GET", headers=()):
    """One request; ae: None (no field), a str (one line) or a list (lines)."""
    h = list(headers)
    if isinstance(ae, str):
        h.append(("Accept-Encoding", ae))
    elif ae is not None:
        h += [("Accept-Encoding", v) for v in ae]
    with srv.conn() as c:
        return c.exchange(method, target, h)


# (Accept-Encoding lines, the coding sent or ID, or NA for 406, why)
TABLE = [
    (None, ID, "no Accept-Encoding: identity"),
    ("", ID, "an empty field: no coding wanted"),
    ("br", BR, "br"),
    ("zstd", ZSTD, "zstd"),
    ("gzip", GZIP, "gzip"),
    ("gzip, deflate, br, zstd", BR, "all at q=1: the smallest file"),
    ("gzip, zstd", ZSTD, "the smaller of the two"),
    ("br;q=0.5, gzip", GZIP, "higher q beats smaller size"),
    ("br;q=0.8, zstd;q=0.8, gzip;q=0.9", GZIP, "highest q"),
    ("br;q=0.8, zstd;q=0.8", BR, "equal q: the smaller file"),
    ("zstd;q=0.801, br;q=0.8", ZSTD, "three decimals count"),
    ("br;q=0", ID, "q=0 excludes: identity"),
    ("br;q=0, gzip;q=0.1", GZIP, "q=0 excludes, q=0.1 does not"),
    ("*", BR, "* covers all three"),
    ("*;q=0.5, gzip", GZIP, "a named coding beats *"),
    ("*, br;q=0", ZSTD, "* covers what is not named"),
    ("identity;q=0", NA, "identity excluded, nothing else: 406"),
    ("identity;q=0, deflate", NA, "identity excluded, an unknown coding: 406"),
    ("identity;q=0, gzip", GZIP, "identity excluded, gzip fits"),
    ("*;q=0", NA, "*;q=0 without identity: 406"),
    ("*;q=0, identity", ID, "*;q=0 but identity named"),
    ("*;q=0, zstd", ZSTD, "*;q=0 but zstd named"),
    ("identity, br;q=0.9", ID, "identity named at a higher q"),
    ("identity;q=0.5, br", BR, "br at a higher q than identity"),
    ("BR", BR, "codings are case-insensitive"),
    ("GZip;Q=0.5", GZIP, "the q too"),
    ("x-gzip", GZIP, "x-gzip is gzip"),
    ("X-Gzip;q=0.9, br;q=0.8", GZIP, "x-gzip's q is gzip's"),
    ("gzip;q=0, x-gzip", ID, "gzip named first: its q=0 stands"),
    ("deflate, compress, foo", ID, "unknown codings only"),
    ("foo;q=1, zstd;q=0.1", ZSTD, "an unknown coding is ignored"),
    ("  br ;  q=1 ,\tgzip;q=0.5 ", BR, "OWS around elements and ;"),
    (", ,br,,", BR, "empty list elements"),
    (["gzip;q=0.5", "br;q=0.4"], GZIP, "two field lines: one list"),
    (["identity;q=0", "deflate"], NA, "two field lines: identity excluded on the first"),
    ("br;q=2", ID, "bad syntax: q above 1 -> identity"),
    ("br;q=1.5", ID, "bad syntax: 1.5"),
    ("br;q=0.1234", ID, "bad syntax: four decimals"),
    ("br;q = 1", ID, "bad syntax: spaces around ="),
    ("br;level=5", ID, "bad syntax: another parameter"),
    ("br gzip", ID, "bad syntax: no comma"),
    ("identity;q=0, br;q=x", ID, "a malformed field means identity, even excluded"),
]


@pytest.mark.parametrize("ae,want,why", TABLE, ids=[t[2] for t in TABLE])
def test_negotiation_table(srv, site, ae, want, why):
    r = get(srv, ae=ae)
    assert r.get("Vary") == "Accept-Encoding", why
    if want == NA:
        assert r.status == 406, (why, r.status)
        assert r.get("Content-Encoding") is None
        assert b"406" in r.body
        return
    assert r.status == 200, (why, r.status)
    assert r.get("Content-Encoding") == want, why
    assert r.get("Content-Type") == "text/javascript; charset=utf-8", why
    assert r.body == body_of(site, want), why
    assert int(r["Content-Length"]) == len(r.body)


def test_file_without_variants_is_not_negotiated(srv, site):
    # No Vary, no Content-Encoding, no 406: nothing varies for this file.
    for ae in (None, "br", "gzip, br, zstd", "identity;q=0", "*;q=0"):
        r = get(srv, "/plain.js", ae=ae)
        assert r.status == 200 and r.body == read(str(site / "plain.js")), ae
        assert r.get("Vary") is None and r.get("Content-Encoding") is None, ae
    tag = get(srv, "/plain.js")["ETag"]
    size = len(read(str(site / "plain.js")))
    for h, status in (([("If-None-Match", tag)], 304), ([("If-Match", '"other"')], 412),
                      ([("Range", "bytes=0-1")], 206), ([("Range", "bytes=99999-")], 416)):
        r = get(srv, "/plain.js", ae="br", headers=h)
        assert r.status == status and r.get("Vary") is None, (h, r.status)
        assert r.get("Content-Encoding") is None, (h, r)
        if status == 206:
            assert r.body == read(str(site / "plain.js"))[:2], r.body
            assert r["Content-Range"] == "bytes 0-1/%d" % size, r
        if status == 416:
            assert r["Content-Range"] == "bytes */%d" % size, r


def test_each_representation_has_its_own_etag(srv):
    tags = {c: get(srv, ae=c or "identity")["ETag"] for c in (BR, ZSTD, GZIP, ID)}
    assert len(set(tags.values())) == 4, tags
    base = tags[ID]
    assert re.fullmatch(r'"[0-9a-f]+(-[0-9a-f]+){3}"', base), base
    for c in (BR, ZSTD, GZIP):
        # The original's tag, the coding, the variant file's own identity.
        assert tags[c].startswith(base[:-1] + "-" + c + "-"), tags[c]
        assert re.fullmatch(r'"[0-9a-f-]+-%s(-[0-9a-f]+){4}"' % c, tags[c]), tags[c]
    # Same file, same tag, whichever spelling chose it.
    assert get(srv, ae="x-gzip")["ETag"] == tags[GZIP]
    # Last-Modified is the original's on every one.
    lm = {get(srv, ae=c or "identity")["Last-Modified"] for c in (BR, ZSTD, GZIP, ID)}
    assert len(lm) == 1


def test_head_says_what_get_would(srv):
    for c in (BR, ZSTD, GZIP, ID):
        g = get(srv, ae=c or "identity")
        h = get(srv, ae=c or "identity", method="HEAD")
        assert h.status == 200 and h.body == b""
        for f in ("Content-Encoding", "Content-Length", "ETag", "Vary", "Content-Type",
                  "Last-Modified"):
            assert h.get(f) == g.get(f), (c, f)


def test_range_applies_to_the_variant(srv, site):
    br = body_of(site, BR)
    r = get(srv, ae="br", headers=[("Range", "bytes=10-109")])
    assert r.status == 206
    assert r["Content-Encoding"] == "br" and r["Vary"] == "Accept-Encoding"
    assert r["Content-Range"] == "bytes 10-109/%d" % len(br)
    assert r.body == br[10:110]
    # The suffix form reaches the variant's last bytes, not the original's.
    r = get(srv, ae="br", headers=[("Range", "bytes=-20")])
    assert r.status == 206 and r.body == br[-20:]
    # Past the variant's end (though within the original): 416 of the variant.
    r = get(srv, ae="br", headers=[("Range", "bytes=%d-" % len(br))])
    assert r.status == 416 and r["Content-Range"] == "bytes */%d" % len(br)
    assert r["Vary"] == "Accept-Encoding"
    # Identity ranges are the original's bytes.
    r = get(srv, headers=[("Range", "bytes=10-109")])
    assert r.status == 206 and r.body == read(str(site / "app.js"))[10:110]
    assert r["Vary"] == "Accept-Encoding" and r.get("Content-Encoding") is None


def test_several_ranges_of_a_variant_send_it_whole(srv, site):
    # A multipart body's Content-Encoding would read as the multipart's own
    # coding: the whole variant is sent instead (RFC 9110 §14.2 allows it).
    r = get(srv, ae="br", headers=[("Range", "bytes=0-9,100-109")])
    assert r.status == 200 and r["Content-Encoding"] == "br"
    assert r.body == body_of(site, BR)
    # Identity keeps multipart/byteranges.
    r = get(srv, headers=[("Range", "bytes=0-9,100-109")])
    assert r.status == 206 and r["Content-Type"].startswith("multipart/byteranges")
    assert r["Vary"] == "Accept-Encoding"


def test_if_range_compares_the_selected_tag(srv, site):
    br_tag = get(srv, ae="br")["ETag"]
    id_tag = get(srv)["ETag"]
    r = get(srv, ae="br", headers=[("Range", "bytes=0-9"), ("If-Range", br_tag)])
    assert r.status == 206 and r.body == body_of(site, BR)[:10]
    r = get(srv, ae="br", headers=[("Range", "bytes=0-9"), ("If-Range", id_tag)])
    assert r.status == 200 and r.body == body_of(site, BR)  # another representation's tag
    r = get(srv, headers=[("Range", "bytes=0-9"), ("If-Range", br_tag)])
    assert r.status == 200 and r.body == body_of(site, ID)


def test_if_none_match_compares_the_selected_tag(srv, site):
    br_tag = get(srv, ae="br")["ETag"]
    id_tag = get(srv)["ETag"]
    # The variant's tag, asking for the variant: 304 with that tag and Vary.
    r = get(srv, ae="br", headers=[("If-None-Match", br_tag)])
    assert r.status == 304 and r.body == b""
    assert r["ETag"] == br_tag and r["Vary"] == "Accept-Encoding"
    assert r.get("Content-Encoding") is None
    # The identity tag, asking for br: the client does not have br: 200 br.
    r = get(srv, ae="br", headers=[("If-None-Match", id_tag)])
    assert r.status == 200 and r["Content-Encoding"] == "br" and r.body == body_of(site, BR)
    # The variant's tag without Accept-Encoding: identity is selected: 200.
    r = get(srv, headers=[("If-None-Match", br_tag)])
    assert r.status == 200 and r.get("Content-Encoding") is None and r.body == body_of(site, ID)
    # The identity tag for identity: 304, Vary on it too.
    r = get(srv, headers=[("If-None-Match", id_tag)])
    assert r.status == 304 and r["ETag"] == id_tag and r["Vary"] == "Accept-Encoding"
    # A list holding the right one, weak comparison (W/) as §13.1.2 says.
    r = get(srv, ae="gzip, br", headers=[("If-None-Match", '"x", W/' + br_tag)])
    assert r.status == 304
    # Range with a matching If-None-Match: 304 wins (§13.2.2), with Vary.
    r = get(srv, ae="br", headers=[("If-None-Match", br_tag), ("Range", "bytes=0-1")])
    assert r.status == 304 and r["Vary"] == "Accept-Encoding"


def test_if_match_compares_the_selected_tag(srv, site):
    br_tag = get(srv, ae="br")["ETag"]
    id_tag = get(srv)["ETag"]
    assert get(srv, ae="br", headers=[("If-Match", br_tag)]).status == 200
    r = get(srv, ae="br", headers=[("If-Match", id_tag)])
    assert r.status == 412 and r["Vary"] == "Accept-Encoding"
    assert get(srv, headers=[("If-Match", br_tag)]).status == 412
    assert get(srv, headers=[("If-Match", id_tag)]).status == 200


def test_round_trip_every_variant_decodes(srv, site):
    """Each coding served decodes to the original with an independent
    decoder: Python's gzip and zlib, brotli(1), zstd(1)."""
    import zlib
    original = read(str(site / "app.js"))
    for c in (BR, ZSTD, GZIP):
        r = get(srv, ae=c)
        assert r["Content-Encoding"] == c
        assert decode(c, r.body) == original, c
    g = get(srv, ae="gzip").body
    assert zlib.decompress(g, wbits=31) == original
    # Reassembled from ranges of the variant, it still decodes.
    br = get(srv, ae="br").body
    parts = b""
    for first in range(0, len(br), 700):
        r = get(srv, ae="br", headers=[("Range", "bytes=%d-%d" % (first, first + 699))])
        assert r.status == 206
        parts += r.body
    assert parts == br and decode(BR, parts) == original


def test_pipelined_requests_each_get_their_own_choice(srv, site):
    with srv.conn() as c:
        for ae in ("br", None, "gzip", "zstd", "identity;q=0"):
            c.request("GET", "/app.js", [("Accept-Encoding", ae)] if ae else [])
        got = [c.read_response() for _ in range(5)]
    assert [r.get("Content-Encoding") for r in got] == ["br", None, "gzip", "zstd", None]
    assert got[4].status == 406
    assert got[0].body == body_of(site, BR) and got[1].body == body_of(site, ID)


LOG_RE = re.compile(
    r'^\S+ - - \[[^\]]+\] "(?P<req>(?:[^"\\]|\\.)*)" (?P<status>\d{3}) (?P<size>\d+) '
    r'"(?:[^"\\]|\\.)*" "(?:[^"\\]|\\.)*"(?: "(?P<enc>br|zstd|gzip)")?$')


def test_access_log_records_the_coding(pith, site, tmp_path):
    log = str(tmp_path / "access.log")
    s = pith("--log", log, root=str(site))
    sizes = {}
    for ae in ("br", "zstd", "gzip", None):
        sizes[ae] = len(get(s, ae=ae).body)
    get(s, ae="identity;q=0")
    get(s, "/plain.js", ae="br")
    deadline = time.monotonic() + 5
    while True:
        lines = read(log).decode().splitlines() if os.path.exists(log) else []
        if len(lines) >= 6 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(lines) == 6, lines
    m = [LOG_RE.match(l) for l in lines]
    assert all(m), lines
    assert [x.group("enc") for x in m] == ["br", "zstd", "gzip", None, None, None]
    assert [int(x.group("size")) for x in m[:4]] == [sizes[a] for a in ("br", "zstd", "gzip", None)]
    assert m[4].group("status") == "406"
    # Lines without a coding are exactly combined format: nothing after the
    # user agent.
    for l in lines[3:]:
        assert l.endswith('"'), l
        assert not re.search(r'" "(br|zstd|gzip)"$', l), l
