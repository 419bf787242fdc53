# SPDX-License-Identifier: MIT
"""Validators and conditional requests (DESIGN.md §2; RFC 9110 §8.8, §13).

Every 200/206/304 of a regular file carries ETag, Last-Modified, Cache-Control
and Date; the preconditions are evaluated in the order of RFC 9110 §13.2.2:
If-Match, else If-Unmodified-Since; then If-None-Match, else
If-Modified-Since (GET/HEAD only); then Range.
"""

import os
import re
import tempfile
import time

import pytest

import http_raw

from conftest import FIXED_MTIME
from http_raw import IMF_FIXDATE_RE, parse_imf_fixdate

# index.html in the shared docroot has mtime FIXED_MTIME.
LM_FIXED = "Tue, 14 Nov 2023 22:13:20 GMT"
LM_FIXED_RFC850 = "Tuesday, 14-Nov-23 22:13:20 GMT"
LM_FIXED_ASCTIME = "Tue Nov 14 22:13:20 2023"
ONE_SEC_BEFORE = ["Tue, 14 Nov 2023 22:13:19 GMT", "Tuesday, 14-Nov-23 22:13:19 GMT",
                  "Tue Nov 14 22:13:19 2023"]
ONE_SEC_AFTER = ["Tue, 14 Nov 2023 22:13:21 GMT", "Tuesday, 14-Nov-23 22:13:21 GMT",
                 "Tue Nov 14 22:13:21 2023"]
OLD_DATES = ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
             "Sun Nov  6 08:49:37 1994"]
GARBAGE_DATES = ["yesterday", "", "Tue, 14 Nov 2023 22:13:20", "Tue, 32 Nov 2023 22:13:20 GMT",
                 "Tue, 14 Nov 2023 25:13:20 GMT", "Tue, 14 Foo 2023 22:13:20 GMT",
                 "1700000000", "Tue, 14 Nov 2023 22:13:20 GMT garbage"]

IMMUTABLE_GLOB = "*.[0-9a-f]{8}.*"
IMMUTABLE_CC = "max-age=31536000, immutable"


def _future_http_date(days=1):
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + days * 86400))


def _etag(server, target="/index.html"):
    r = server.get(target)
    assert r.status == 200, r
    return r["ETag"]


def _weak(tag):
    return "W/" + tag


def _assert_validators(r, cache_control="max-age=60", lm=LM_FIXED):
    """ETag, Last-Modified, Cache-Control and Date, each exactly once."""
    for name in ("ETag", "Last-Modified", "Cache-Control", "Date"):
        assert len(r.all(name)) == 1, "%s must appear once in a %d:\n%s" % (
            name, r.status, r.head_text())
    assert re.fullmatch(r'"[\x21\x23-\x7e\x80-\xff]+"', r["ETag"]), r["ETag"]
    assert r["Cache-Control"] == cache_control, r.head_text()
    assert IMF_FIXDATE_RE.match(r["Date"]), r["Date"]
    if lm is not None:
        assert r["Last-Modified"] == lm, r.head_text()
    assert parse_imf_fixdate(r["Last-Modified"]) <= parse_imf_fixdate(r["Date"])


def _assert_412(r):
    assert r.status == 412, r
    assert "Cache-Control" not in r, r.head_text()
    assert r["Content-Type"].lower().startswith("text/html"), r.head_text()
    assert 0 < len(r.body) < 2048, r.body
    assert int(r["Content-Length"]) == len(r.body)




def _exchange_304(server, method, headers, docroot=None):
    """Sends a conditional request that must give 304, checks its shape and
    that the connection carries on with a normal second request."""
    with server.conn() as c:
        r = c.exchange(method, "/index.html", headers)
        assert r.status == 304, r
        assert r.body == b""
        http_raw.assert_no_more_bytes(c)
        r2 = c.exchange("GET", "/index.html")
        assert r2.status == 200, r2
        if docroot is not None:
            assert r2.body == docroot.files["index.html"]
        return r


# -- validators on 200 / 206 / 304 ----------------------------------------------------


def test_200_206_304_carry_validators(server, docroot):
    r200 = server.get("/index.html")
    assert r200.status == 200
    _assert_validators(r200)
    r206 = server.get("/index.html", headers={"Range": "bytes=0-1"})
    assert r206.status == 206
    _assert_validators(r206)
    r304 = server.get("/index.html", headers={"If-None-Match": r200["ETag"]})
    assert r304.status == 304
    _assert_validators(r304)
    assert r200["ETag"] == r206["ETag"] == r304["ETag"]
    for r in (r200, r206, r304):
        assert abs(parse_imf_fixdate(r["Date"]) - time.time()) < 5


def test_304_has_no_body_and_no_content_type(server, docroot):
    tag = _etag(server)
    r = _exchange_304(server, "GET", {"If-None-Match": tag}, docroot)
    assert "Content-Type" not in r, r.head_text()
    assert "Content-Range" not in r, r.head_text()
    assert "Transfer-Encoding" not in r, r.head_text()
    # A Content-Length in a 304 may only repeat what the 200 would send.
    if "Content-Length" in r:
        assert r["Content-Length"] == str(len(docroot.files["index.html"]))


def test_head_304_then_keepalive(server, docroot):
    tag = _etag(server)
    r = _exchange_304(server, "HEAD", {"If-None-Match": tag}, docroot)
    _assert_validators(r)


@pytest.mark.h1_only("pipelining: raw requests back to back on one connection")
def test_304_on_pipelined_requests(server, docroot):
    tag = _etag(server)
    req = ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: %s\r\n\r\n" % tag).encode()
    plain = b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n"
    with server.conn() as c:
        c.send(req + req + plain + req)
        for want in (304, 304, 200, 304):
            r = c.read_response()
            assert r.status == want, r
            if want == 200:
                assert r.body == docroot.files["index.html"]
        http_raw.assert_no_more_bytes(c)


def test_etag_differs_between_files_and_with_mtime(tmp_path, pith):
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_bytes(b"same bytes\n")
        os.utime(tmp_path / name, (FIXED_MTIME, FIXED_MTIME))
    s = pith(root=str(tmp_path))
    a, b = s.get("/a.txt")["ETag"], s.get("/b.txt")["ETag"]
    assert a != b, "two files with the same size and mtime share an ETag"
    # Only the mtime's nanoseconds change: a new ETag (asked of a fresh
    # server, so that no file cache is involved; test_cache.py covers that).
    os.utime(tmp_path / "a.txt", ns=(FIXED_MTIME * 10**9 + 1, FIXED_MTIME * 10**9 + 1))
    s = pith(root=str(tmp_path))
    a2 = s.get("/a.txt")["ETag"]
    assert a2 != a, "ETag did not change with the mtime's nanoseconds"
    assert s.get("/a.txt")["Last-Modified"] == LM_FIXED


# -- Cache-Control ------------------------------------------------------------------


@pytest.mark.parametrize("flag,expect", [("0", "no-cache"), ("3600", "max-age=3600")])
def test_max_age_on_200_206_304(pith, flag, expect):
    s = pith("--max-age", flag)
    r = s.get("/index.html")
    assert r.status == 200
    _assert_validators(r, cache_control=expect)
    r = s.get("/index.html", headers={"Range": "bytes=1-3"})
    assert r.status == 206
    _assert_validators(r, cache_control=expect)
    r = s.get("/index.html", headers={"If-Modified-Since": LM_FIXED})
    assert r.status == 304
    _assert_validators(r, cache_control=expect)


@pytest.fixture(scope="module")
def immutable_server(pith_module, tmp_path_factory):
    root = tmp_path_factory.mktemp("immutable")
    files = {
        "app.3f9a0c1e.js": True,
        "assets/vendor.0123abcd.css": True,
        "logo.deadbeef.png": True,
        "app.js": False,
        "app.3f9a0c1.js": False,  # 7 hex digits
        "app.3f9a0c1e9.js": False,  # 9 hex digits
        "app.3f9a0c1g.js": False,  # not hex
        "3f9a0c1e.js": False,  # no dot before the hash
    }
    for name in files:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"// " + name.encode() + b"\n" * 40)
        os.utime(p, (FIXED_MTIME, FIXED_MTIME))
    s = pith_module("--immutable", IMMUTABLE_GLOB, root=str(root))
    s.files = files
    return s


@pytest.mark.router_lacks("--immutable")
@pytest.mark.parametrize("name,immutable", [
    ("app.3f9a0c1e.js", True), ("assets/vendor.0123abcd.css", True), ("logo.deadbeef.png", True),
    ("app.js", False), ("app.3f9a0c1.js", False), ("app.3f9a0c1e9.js", False),
    ("app.3f9a0c1g.js", False), ("3f9a0c1e.js", False)])
def test_immutable_glob(immutable_server, name, immutable):
    want = IMMUTABLE_CC if immutable else "max-age=60"
    r = immutable_server.get("/" + name)
    assert r.status == 200, r
    assert r["Cache-Control"] == want, r.head_text()
    r2 = immutable_server.get("/" + name, headers={"If-None-Match": r["ETag"]})
    assert r2.status == 304
    assert r2["Cache-Control"] == want, r2.head_text()
    r3 = immutable_server.get("/" + name, headers={"Range": "bytes=0-0"})
    assert r3.status == 206
    assert r3["Cache-Control"] == want, r3.head_text()


@pytest.mark.router_lacks("--immutable")
def test_immutable_not_on_errors(immutable_server):
    r = immutable_server.get("/missing.3f9a0c1e.js")
    assert r.status == 404
    assert "Cache-Control" not in r, r.head_text()
    r = immutable_server.get("/app.3f9a0c1e.js", headers={"If-Match": '"nope"'})
    _assert_412(r)


# -- Last-Modified bounds ------------------------------------------------------------


def test_last_modified_of_future_file_not_after_date(tmp_path, pith):
    p = tmp_path / "future.txt"
    p.write_bytes(b"from the future\n")
    t = int(time.time()) + 10 * 86400
    os.utime(p, (t, t))
    s = pith(root=str(tmp_path))
    r = s.get("/future.txt")
    assert r.status == 200
    assert "Last-Modified" in r, r.head_text()
    assert IMF_FIXDATE_RE.match(r["Last-Modified"])
    assert parse_imf_fixdate(r["Last-Modified"]) <= parse_imf_fixdate(r["Date"]), r.head_text()


def _file_with_mtime(dirpath, name, t):
    p = os.path.join(dirpath, name)
    with open(p, "wb") as f:
        f.write(b"odd mtime\n")
    os.utime(p, (t, t))
    return os.stat(p).st_mtime == t


@pytest.mark.parametrize("t", [-86400, 253402300800])  # 1969-12-31, 10000-01-01
def test_last_modified_omitted_outside_range(tmp_path, pith, t):
    root = str(tmp_path)
    shm = None
    if not _file_with_mtime(root, "odd.txt", t):
        # ext4 stops at 2446; tmpfs keeps 64-bit times.
        if not os.path.isdir("/dev/shm"):
            pytest.skip("no filesystem here stores mtime %d" % t)
        shm = tempfile.mkdtemp(dir="/dev/shm", prefix="pith-test-")
        root = shm
        if not _file_with_mtime(root, "odd.txt", t):
            pytest.skip("no filesystem here stores mtime %d" % t)
    try:
        s = pith(root=root)
        r = s.get("/odd.txt")
        assert r.status == 200, r
        assert r.body == b"odd mtime\n"
        if t < 0:
            assert "Last-Modified" not in r, r.head_text()
        else:
            # Year 10000 is also "in the future": RFC 9110 §8.8.2.1 says to
            # replace such a time with the Date, which is as good as leaving
            # the field out. Anything else (a wrapped or 5-digit year) fails.
            if "Last-Modified" in r:
                lm = parse_imf_fixdate(r["Last-Modified"])
                assert lm is not None, r.head_text()
                assert lm <= parse_imf_fixdate(r["Date"]), r.head_text()
                assert lm > time.time() - 60, r.head_text()
        assert "ETag" in r and "Date" in r and "Cache-Control" in r, r.head_text()
        # Without Last-Modified, date preconditions cannot hold or fail by it.
        r = s.get("/odd.txt", headers={"If-Modified-Since": _future_http_date(-1)})
        assert r.status == 200, r
        r = s.get("/odd.txt", headers={"If-None-Match": r["ETag"]})
        assert r.status == 304, r
        if t < 0:
            assert "Last-Modified" not in r, r.head_text()
    finally:
        if shm:
            import shutil
            shutil.rmtree(shm, ignore_errors=True)


# -- If-Match ------------------------------------------------------------------------


def test_if_match_current_etag(server, docroot):
    tag = _etag(server)
    r = server.get("/index.html", headers={"If-Match": tag})
    assert r.status == 200
    assert r.body == docroot.files["index.html"]


def test_if_match_star(server, docroot):
    r = server.get("/index.html", headers={"If-Match": "*"})
    assert r.status == 200
    assert r.body == docroot.files["index.html"]


def test_if_match_list(server):
    tag = _etag(server)
    for value in ['"a", %s' % tag, '"a",%s,"b"' % tag, ' "x" , %s ' % tag]:
        r = server.get("/index.html", headers={"If-Match": value})
        assert r.status == 200, (value, r)


def test_if_match_across_lines(server):
    tag = _etag(server)
    r = server.get("/index.html", headers=[("If-Match", '"a"'), ("If-Match", tag)])
    assert r.status == 200, r
    r = server.get("/index.html", headers=[("If-Match", '"a"'), ("If-Match", '"b"')])
    _assert_412(r)


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_if_match_other_etag_412(server, method):
    r = server.get("/index.html", method, headers={"If-Match": '"not-the-etag"'})
    assert r.status == 412, r
    assert "Cache-Control" not in r, r.head_text()
    if method == "GET":
        _assert_412(r)


def test_if_match_weak_never_matches(server):
    tag = _etag(server)
    _assert_412(server.get("/index.html", headers={"If-Match": _weak(tag)}))
    _assert_412(server.get("/index.html", headers={"If-Match": '"zz", ' + _weak(tag)}))


def test_if_match_near_miss_412(server):
    tag = _etag(server)
    for value in [tag[:-2] + '"', tag[:-1] + 'x"', tag.strip('"'), '"' + tag + '"']:
        r = server.get("/index.html", headers={"If-Match": value})
        _assert_412(r)


def test_412_keeps_connection(server, docroot):
    with server.conn() as c:
        r = c.exchange("GET", "/index.html", {"If-Match": '"nope"'})
        _assert_412(r)
        r = c.exchange("GET", "/index.html")
        assert r.status == 200
        assert r.body == docroot.files["index.html"]


def test_if_match_beats_if_unmodified_since(server):
    tag = _etag(server)
    # If-Match present: If-Unmodified-Since is not evaluated (§13.2.2 step 2).
    r = server.get("/index.html", headers={"If-Match": tag,
                                           "If-Unmodified-Since": OLD_DATES[0]})
    assert r.status == 200, r


def test_if_match_fail_beats_if_none_match(server):
    tag = _etag(server)
    r = server.get("/index.html", headers={"If-Match": '"nope"', "If-None-Match": tag})
    _assert_412(r)


def test_if_match_fail_beats_range(server):
    r = server.get("/index.html", headers={"If-Match": '"nope"', "Range": "bytes=0-1"})
    _assert_412(r)
    assert "Content-Range" not in r


def test_if_match_ok_with_range(server, docroot):
    tag = _etag(server)
    r = server.get("/index.html", headers={"If-Match": tag, "Range": "bytes=0-1"})
    assert r.status == 206, r
    assert r.body == docroot.files["index.html"][:2]


def test_conditionals_ignored_on_404(server):
    for h in ({"If-Match": "*"}, {"If-None-Match": "*"}, {"If-Match": '"x"'},
              {"If-Modified-Since": LM_FIXED}, {"If-Unmodified-Since": OLD_DATES[0]}):
        r = server.get("/does-not-exist.txt", headers=h)
        assert r.status == 404, (h, r)


# -- If-Unmodified-Since --------------------------------------------------------------


@pytest.mark.parametrize("date", OLD_DATES + ONE_SEC_BEFORE)
def test_if_unmodified_since_older_412(server, date):
    _assert_412(server.get("/index.html", headers={"If-Unmodified-Since": date}))


@pytest.mark.parametrize("date", [LM_FIXED, LM_FIXED_RFC850, LM_FIXED_ASCTIME] + ONE_SEC_AFTER)
def test_if_unmodified_since_not_modified_200(server, docroot, date):
    r = server.get("/index.html", headers={"If-Unmodified-Since": date})
    assert r.status == 200, (date, r)
    assert r.body == docroot.files["index.html"]


@pytest.mark.parametrize("date", GARBAGE_DATES)
def test_if_unmodified_since_invalid_ignored(server, date):
    r = server.get("/index.html", headers={"If-Unmodified-Since": date})
    assert r.status == 200, (date, r)


def test_if_unmodified_since_fail_beats_if_none_match(server):
    tag = _etag(server)
    r = server.get("/index.html", headers={"If-Unmodified-Since": OLD_DATES[0],
                                           "If-None-Match": tag})
    _assert_412(r)


# -- If-None-Match -------------------------------------------------------------------


def test_if_none_match_strong_304(server, docroot):
    tag = _etag(server)
    _exchange_304(server, "GET", {"If-None-Match": tag}, docroot)


def test_if_none_match_weak_304(server, docroot):
    tag = _etag(server)
    _exchange_304(server, "GET", {"If-None-Match": _weak(tag)}, docroot)


def test_if_none_match_star_304(server, docroot):
    _exchange_304(server, "GET", {"If-None-Match": "*"}, docroot)


def test_if_none_match_list_304(server):
    tag = _etag(server)
    for value in ['"a", %s' % tag, '"a",W/%s,"b"' % tag, ' W/"x" , %s ' % tag]:
        r = server.get("/index.html", headers={"If-None-Match": value})
        assert r.status == 304, (value, r)


def test_if_none_match_across_lines_304(server):
    tag = _etag(server)
    r = server.get("/index.html", headers=[("If-None-Match", '"a"'),
                                           ("If-None-Match", _weak(tag))])
    assert r.status == 304, r


def test_if_none_match_no_match_200(server, docroot):
    tag = _etag(server)
    for value in ['"other"', '"a", "b"', tag[:-2] + '"', tag[:-1] + 'x"', 'W/"other"',
                  tag.strip('"')]:
        r = server.get("/index.html", headers={"If-None-Match": value})
        assert r.status == 200, (value, r)
        assert r.body == docroot.files["index.html"]


def test_if_none_match_head_304(server):
    tag = _etag(server)
    r = server.get("/index.html", "HEAD", headers={"If-None-Match": tag})
    assert r.status == 304, r


def test_if_none_match_miss_beats_if_modified_since(server, docroot):
    # If-Modified-Since alone would give 304; a present, non-matching
    # If-None-Match means it is not evaluated (§13.2.2 step 4).
    r = server.get("/index.html", headers={"If-None-Match": '"other"',
                                           "If-Modified-Since": LM_FIXED})
    assert r.status == 200, r
    assert r.body == docroot.files["index.html"]


def test_if_none_match_hit_beats_old_if_modified_since(server):
    tag = _etag(server)
    r = server.get("/index.html", headers={"If-None-Match": tag,
                                           "If-Modified-Since": OLD_DATES[0]})
    assert r.status == 304, r


def test_if_none_match_beats_range(server):
    tag = _etag(server)
    r = server.get("/index.html", headers={"If-None-Match": tag, "Range": "bytes=0-1"})
    assert r.status == 304, r
    assert "Content-Range" not in r


def test_if_none_match_with_other_method_not_304(server):
    tag = _etag(server)
    # RFC 9110 §13.1.2: 304 only for GET/HEAD (other methods: 412, or the
    # precondition is not evaluated at all for OPTIONS).
    r = server.get("/index.html", "OPTIONS", headers={"If-None-Match": tag})
    assert r.status in (204, 412), r


# -- If-Modified-Since ---------------------------------------------------------------


@pytest.mark.parametrize("date", [LM_FIXED, LM_FIXED_RFC850, LM_FIXED_ASCTIME] + ONE_SEC_AFTER)
def test_if_modified_since_not_modified_304(server, docroot, date):
    r = _exchange_304(server, "GET", {"If-Modified-Since": date}, docroot)
    _assert_validators(r)


@pytest.mark.parametrize("date", OLD_DATES + ONE_SEC_BEFORE)
def test_if_modified_since_older_200(server, docroot, date):
    r = server.get("/index.html", headers={"If-Modified-Since": date})
    assert r.status == 200, (date, r)
    assert r.body == docroot.files["index.html"]


@pytest.mark.parametrize("date", GARBAGE_DATES)
def test_if_modified_since_invalid_200(server, date):
    r = server.get("/index.html", headers={"If-Modified-Since": date})
    assert r.status == 200, (date, r)


def test_if_modified_since_future_200(server):
    for days in (1, 365 * 20):
        r = server.get("/index.html", headers={"If-Modified-Since": _future_http_date(days)})
        assert r.status == 200, r


def test_if_modified_since_head_304(server):
    r = server.get("/index.html", "HEAD", headers={"If-Modified-Since": LM_FIXED})
    assert r.status == 304, r
    _assert_validators(r)


def test_if_modified_since_with_date_of_response(server):
    # The Date a 200 carried is a valid, not-future date >= Last-Modified.
    d = server.get("/index.html")["Date"]
    r = server.get("/index.html", headers={"If-Modified-Since": d})
    assert r.status == 304, r
