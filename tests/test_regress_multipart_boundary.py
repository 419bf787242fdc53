# SPDX-License-Identifier: MIT
"""Regression: the multipart/byteranges boundary must be unpredictable.

Found while hardening the suite (issue 9): the boundary was splitmix64 of a
per-worker seed plus a counter, with the seed's bits as a constant suffix.
splitmix64 is invertible, so one response gave away the next boundary; a
file containing it then produced a part that contains its own delimiter
(RFC 2046 §5.1.1 forbids that). The boundary now comes from getrandom for
every response."""

import os

import test_range

M = (1 << 64) - 1
PHI = 0x9e3779b97f4a7c15


def _unxorshift(y, s):
    x = y
    for _ in range(64 // s + 1):
        x = y ^ (x >> s)
    return x & M


def _unmix(x):
    x = _unxorshift(x, 31)
    x = (x * pow(0x94D049BB133111EB, -1, 1 << 64)) & M
    x = _unxorshift(x, 27)
    x = (x * pow(0xBF58476D1CE4E5B9, -1, 1 << 64)) & M
    return _unxorshift(x, 30)


def _mix(x):
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & M
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & M
    return x ^ (x >> 31)


def _boundary(r):
    return r["Content-Type"].split("boundary=")[1]


def _predict_next(b):
    """The next boundary under the old scheme, from one boundary."""
    x = sum(int(b[i], 16) << (4 * i) for i in range(16))
    nxt = _mix((_unmix(x) + PHI) & M)
    return "".join("0123456789abcdef"[(nxt >> (4 * i)) & 15] for i in range(16)) + b[16:]


def test_planted_next_boundary_does_not_break_the_body(pith, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "seed.bin").write_bytes(b"x" * 100)
    s = pith(root=str(root))
    first = _boundary(s.get("/seed.bin", headers={"Range": "bytes=0-1,10-11"}))
    planted = _predict_next(first)
    data = b"A" * 50 + b"\r\n--" + planted.encode() + b"\r\n" + b"B" * 50
    (root / "evil.bin").write_bytes(data)
    r = s.get("/evil.bin", headers={"Range": "bytes=0-90,100-120"})
    assert _boundary(r) != planted, "the server used the boundary predicted from the last one"
    test_range.parse_multipart(r, data, "application/octet-stream")


def test_boundaries_share_no_constant_part(pith, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "f.bin").write_bytes(os.urandom(64))
    s = pith(root=str(root))
    seen = [_boundary(s.get("/f.bin", headers={"Range": "bytes=0-1,10-11"})) for _ in range(40)]
    assert len(set(seen)) == len(seen)
    # Every position varies: no bits of a fixed seed show through.
    for i in range(len(seen[0])):
        assert len({b[i] for b in seen}) > 1, "boundary character %d never changes: %r" % (i, seen[:3])
