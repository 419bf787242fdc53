# SPDX-License-Identifier: MIT
"""Precompressed variants that are not what they claim (issue 19): an empty
file, or one that does not start with its coding's magic number (gzip
1f 8b, zstd 28 b5 2f fd), or a brotli variant (brotli has no magic number)
that is empty or not smaller than the original, is no variant: the
original is served, byte for byte, as if the file were not there (no Vary
when no other variant is left). Otherwise such a file, newer than the
original, won as the smallest representation and clients got an empty or
undecodable body. The loop is the pass's."""

import os

import pytest

from precomp_util import SUFFIX, decode, make_variant, need_tools, read, text

pytestmark = pytest.mark.full_only("precompressed variants (left out of pith-tiny)")

AE = {"gzip": "gzip", "zstd": "zstd", "br": "br"}

BAD = {
    # name -> coding -> bytes of the bogus variant (None: the real one, then emptied)
    "empty": {"gzip": b"", "zstd": b"", "br": b""},
    "wrong magic": {"gzip": b"\x1f\x8c" + b"x" * 40, "zstd": b"\x28\xb5\x2f\xfe" + b"x" * 40},
    "plain text": {"gzip": b"not gzip at all\n", "zstd": b"not zstd at all\n"},
    "one magic byte": {"gzip": b"\x1f", "zstd": b"\x28\xb5\x2f"},
}


def write(path, data, mtime=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def get(srv, target, ae=None):
    with srv.conn() as c:
        return c.exchange("GET", target, [("Accept-Encoding", ae)] if ae else [])


@pytest.fixture
def root(tmp_path):
    need_tools()
    return tmp_path / "site"


CASES = [(name, coding) for name in BAD for coding in BAD[name]]


@pytest.mark.parametrize("name,coding", CASES)
def test_bogus_variant_is_not_served(pith, root, name, coding):
    f = str(root / "a.js")
    original = text(9000, "inv")
    write(f, original, mtime=1700000000)
    write(f + SUFFIX[coding], BAD[name][coding], mtime=1700000100)  # newer than F
    s = pith(root=str(root))
    r = get(s, "/a.js", AE[coding])
    assert r.status == 200, r.status
    assert r.get("Content-Encoding") is None, "%s %s variant served" % (name, coding)
    assert r.body == original
    assert r.get("Vary") is None  # no variant is left


@pytest.mark.parametrize("size", ["same", "larger"])
def test_brotli_variant_not_smaller_than_the_original_is_not_served(pith, root, size):
    """Brotli has no magic number: a .br no smaller than its original is
    taken for something else (a copy, junk), never sent as br."""
    f = str(root / "b.txt")
    original = text(3000, "br")
    write(f, original, mtime=1700000000)
    junk = os.urandom(len(original) + (0 if size == "same" else 100))
    write(f + ".br", junk, mtime=1700000100)
    s = pith(root=str(root))
    r = get(s, "/b.txt", "br")
    assert r.get("Content-Encoding") is None and r.body == original


def test_a_bogus_variant_leaves_the_good_ones(pith, root):
    """An empty .gz beside a real .br and .zst: br and zstd are still
    served (and decode to the original); a gzip-only client gets F."""
    f = str(root / "c.js")
    original = text(12000, "mix")
    write(f, original, mtime=1700000000)
    make_variant(f, "br")
    make_variant(f, "zstd")
    write(f + ".gz", b"", mtime=1700000100)
    s = pith(root=str(root))
    for coding in ("br", "zstd"):
        r = get(s, "/c.js", AE[coding])
        assert r["Content-Encoding"] == coding and decode(coding, r.body) == original
    r = get(s, "/c.js", "gzip")
    assert r.get("Content-Encoding") is None and r.body == original
    assert r["Vary"] == "Accept-Encoding"
    # With every coding offered, the smallest valid one wins, never the empty .gz.
    r = get(s, "/c.js", "gzip, br, zstd")
    assert r["Content-Encoding"] in ("br", "zstd") and decode(r["Content-Encoding"],
                                                                r.body) == original


def test_real_variants_still_win(pith, root):
    f = str(root / "d.js")
    original = text(20000, "ok")
    write(f, original, mtime=1700000000)
    for coding in ("gzip", "zstd", "br"):
        make_variant(f, coding)
    s = pith(root=str(root))
    for coding in ("gzip", "zstd", "br"):
        r = get(s, "/d.js", AE[coding])
        assert r["Content-Encoding"] == coding and r.body == read(f + SUFFIX[coding])
        assert decode(coding, r.body) == original
