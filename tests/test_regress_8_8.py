# SPDX-License-Identifier: MIT
"""Regression test for issue 8, defect 8:

    "If-Range with a date is honoured for a weak Last-Modified. RFC 9110
    §13.1.5 honours it only for a strong validator: Last-Modified at least
    one second before the response's Date (§8.8.2.2), never the value
    clamped to "now"."

Contract row (DESIGN.md §2): "If-Range (strong ETag or exact date) mismatch:
200 full". A date If-Range matches only a strong Last-Modified: one at
least a second before the Date of the response, and the file's own mtime
(a future mtime is sent clamped to now, RFC 9110 §8.8.2.1, and that value is
never strong). Otherwise the Range is ignored: 200 with the whole file.
"""

import os
import time

import pytest

from conftest import FIXED_MTIME
from http_raw import parse_imf_fixdate

BODY = b"0123456789 if-range body\n"


def _fresh_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    return root


def _write(root, name, mtime):
    p = root / name
    p.write_bytes(BODY)
    os.utime(p, (mtime, mtime))
    return "/" + name


def _assert_full(r):
    assert r.status == 200, r
    assert r.body == BODY
    assert r.get("Content-Range") is None, r.head_text()


def _range_if_range(c, path, lm):
    return c.exchange("GET", path, headers=[("Range", "bytes=0-0"), ("If-Range", lm)])


def test_mtime_in_the_current_second_is_weak(pith, tmp_path):
    """A file modified in the second of the response: its Last-Modified is
    not a second before the Date, so a date If-Range is not honoured."""
    root = _fresh_root(tmp_path)
    s = pith(root=root)
    checked = 0
    for i in range(10):
        path = _write(root, "now-%d.txt" % i, time.time())
        with s.conn() as c:
            h = c.exchange("HEAD", path)
            assert h.status == 200
            lm = h["Last-Modified"]
            r = _range_if_range(c, path, lm)
        if r["Date"] != lm:
            # A second boundary fell between the write and the response: the
            # Last-Modified is a second before the Date by now (strong), so a
            # 206 would be right. Try again with a fresh file.
            continue
        _assert_full(r)
        assert r["Last-Modified"] == lm
        checked += 1
        if checked == 2:
            break
    assert checked, "never managed to write a file and ask for it within one second"


@pytest.mark.parametrize("wait_next_second", [False, True], ids=["at_once", "a_second_later"])
def test_future_mtime_clamped_is_weak(pith, tmp_path, wait_next_second):
    """A future mtime is sent as Last-Modified = now (the clamp). That value
    is not the file's modification time, so it never validates a Range, not
    even once the Date has moved past it."""
    root = _fresh_root(tmp_path)
    s = pith(root=root)
    path = _write(root, "future.txt", time.time() + 3600)
    with s.conn() as c:
        h = c.exchange("HEAD", path)
        assert h.status == 200
        lm = h["Last-Modified"]
        # Clamped: never later than the Date (RFC 9110 §8.8.2.1).
        assert parse_imf_fixdate(lm) <= parse_imf_fixdate(h["Date"])
        if wait_next_second:
            deadline = time.monotonic() + 5
            while parse_imf_fixdate(c.exchange("HEAD", "/nope")["Date"]) <= parse_imf_fixdate(lm):
                assert time.monotonic() < deadline
                time.sleep(0.05)
        r = _range_if_range(c, path, lm)
    _assert_full(r)


def test_old_mtime_exact_date_206(pith, tmp_path):
    root = _fresh_root(tmp_path)
    s = pith(root=root)
    path = _write(root, "old.txt", FIXED_MTIME)
    with s.conn() as c:
        lm = c.exchange("HEAD", path)["Last-Modified"]
        assert parse_imf_fixdate(lm) == FIXED_MTIME
        r = _range_if_range(c, path, lm)
        assert r.status == 206, r
        assert r["Content-Range"] == "bytes 0-0/%d" % len(BODY)
        assert r.body == BODY[:1]
        # A date one second off is a mismatch: the whole file.
        r = _range_if_range(c, path, "Tue, 14 Nov 2023 22:13:21 GMT")
        _assert_full(r)


def test_mtime_two_seconds_old_exact_date_206(pith, tmp_path):
    """A recent but settled file (mtime two seconds before the Date) is a
    strong validator: the exact date If-Range is honoured."""
    root = _fresh_root(tmp_path)
    s = pith(root=root)
    path = _write(root, "recent.txt", int(time.time()) - 3)
    with s.conn() as c:
        h = c.exchange("HEAD", path)
        lm = h["Last-Modified"]
        assert parse_imf_fixdate(h["Date"]) - parse_imf_fixdate(lm) >= 2, h.head_text()
        r = _range_if_range(c, path, lm)
    assert r.status == 206, r
    assert r.body == BODY[:1]
