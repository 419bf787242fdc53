# SPDX-License-Identifier: MIT
"""Precompressed variants (issue 11): which files count as variants and
where they are looked for. A variant is used only when it is a regular
file and no symlink (resolved like any file), no older than the original
(to the second), and the original itself is servable; `--precompressed
DIR` looks in a mirror tree instead, `off` nowhere. The cache revalidates
the original and its variants together: a variant that appears, changes
or goes away is noticed within about a second.
"""

import os
import subprocess
import time

import pytest

from conftest import PITH_BIN
from precomp_util import SUFFIX, make_variant, need_tools, read, text

pytestmark = pytest.mark.full_only("precompressed variants (left out of pith-tiny)")

POLL_S = 5.0


def write(path, data, mtime=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def get(srv, target, ae=None):
    with srv.conn() as c:
        return c.exchange("GET", target, [("Accept-Encoding", ae)] if ae else [])


def wait_for(srv, target, ae, pred, what):
    deadline = time.monotonic() + POLL_S
    while True:
        r = get(srv, target, ae)
        if pred(r):
            return r
        assert time.monotonic() < deadline, "%s: still %r after %.1f s" % (
            what, (r.status, r.get("Content-Encoding"), r.get("Vary")), POLL_S)
        time.sleep(0.1)


@pytest.fixture
def root(tmp_path):
    need_tools()
    return tmp_path / "site"


def test_stale_variant_is_ignored(pith, root):
    f = str(root / "a.js")
    write(f, text(8000, "a"))
    make_variant(f, "gzip")
    make_variant(f, "br")
    # The br variant is from before the original's last change.
    os.utime(f + ".br", (os.stat(f).st_mtime - 10,) * 2)
    s = pith(root=str(root))
    r = get(s, "/a.js", "br")
    assert r.status == 200 and r.get("Content-Encoding") is None and r.body == read(f)
    assert r["Vary"] == "Accept-Encoding"  # gzip is still a variant
    r = get(s, "/a.js", "br, gzip")
    assert r["Content-Encoding"] == "gzip" and r.body == read(f + ".gz")


def test_only_stale_variants_mean_no_variants(pith, root):
    f = str(root / "b.js")
    write(f, text(8000, "b"))
    make_variant(f, "gzip")
    os.utime(f + ".gz", (os.stat(f).st_mtime - 5,) * 2)
    s = pith(root=str(root))
    r = get(s, "/b.js", "gzip")
    assert r.get("Content-Encoding") is None and r.get("Vary") is None and r.body == read(f)


def test_variant_newer_by_the_same_second_counts(pith, root):
    # brotli(1) keeps the original's time only to the second.
    f = str(root / "c.js")
    write(f, text(8000, "c"))
    os.utime(f, ns=(0, 1_700_000_000_900_000_000))
    make_variant(f, "br")
    assert os.stat(f + ".br").st_mtime_ns < os.stat(f).st_mtime_ns
    s = pith(root=str(root))
    assert get(s, "/c.js", "br")["Content-Encoding"] == "br"


def test_symlink_variant_is_refused(pith, root):
    f = str(root / "d.js")
    write(f, text(8000, "d"))
    real = make_variant(f, "br", out=str(root / "elsewhere.br"))
    os.symlink("elsewhere.br", f + ".br")
    s = pith(root=str(root))
    r = get(s, "/d.js", "br")
    assert r.status == 200 and r.get("Content-Encoding") is None and r.body == read(f)
    assert r.get("Vary") is None
    assert os.path.exists(real)


def test_symlink_in_the_variants_directory_is_refused(pith, root):
    f = str(root / "sub" / "e.js")
    write(f, text(8000, "e"))
    out = root.parent / "mirror"
    os.makedirs(str(out / "real"))
    make_variant(f, "gzip", out=str(out / "real" / "e.js.gz"))
    os.symlink("real", str(out / "sub"))  # mirror/sub -> mirror/real
    s = pith("--precompressed", str(out), root=str(root))
    r = get(s, "/sub/e.js", "gzip")
    assert r.status == 200 and r.get("Content-Encoding") is None and r.body == read(f)


def test_directory_or_fifo_named_like_a_variant_is_not_one(pith, root):
    f = str(root / "g.js")
    write(f, text(8000, "g"))
    os.makedirs(f + ".br")
    os.mkfifo(f + ".gz")
    os.utime(f + ".gz", (os.stat(f).st_mtime + 5,) * 2)
    s = pith(root=str(root))
    r = get(s, "/g.js", "br, gzip")
    assert r.status == 200 and r.get("Content-Encoding") is None and r.body == read(f)
    assert r.get("Vary") is None


def test_variant_of_a_dotfile_or_missing_file_is_never_served(pith, root):
    dot = str(root / ".secret.js")
    write(dot, text(8000, "s"))
    make_variant(dot, "br")
    write(str(root / "gone.js.gz"), b"\x1f\x8b not a real one")
    inner = str(root / ".hidden" / "x.js")
    write(inner, text(8000, "x"))
    make_variant(inner, "br")
    s = pith(root=str(root))
    assert get(s, "/.secret.js", "br").status == 403
    assert get(s, "/.hidden/x.js", "br").status == 403
    assert get(s, "/gone.js", "gzip").status == 404


def test_precompressed_dir_mirror_tree(pith, root):
    f = str(root / "sub" / "app.js")
    write(f, text(9000, "m"))
    make_variant(f, "gzip")  # beside: ignored when a mirror tree is given
    out = root.parent / "mirror"
    os.makedirs(str(out / "sub"))
    make_variant(f, "br", out=str(out / "sub" / "app.js.br"))
    make_variant(f, "zstd", out=str(out / "sub" / "app.js.zst"))
    s = pith("--precompressed", str(out), root=str(root))
    r = get(s, "/sub/app.js", "br")
    assert r["Content-Encoding"] == "br" and r.body == read(str(out / "sub" / "app.js.br"))
    assert r["Content-Type"] == "text/javascript; charset=utf-8"
    r = get(s, "/sub/app.js", "zstd")
    assert r["Content-Encoding"] == "zstd"
    r = get(s, "/sub/app.js", "gzip")
    assert r.get("Content-Encoding") is None and r.body == read(f)
    assert r["Vary"] == "Accept-Encoding"
    # The mirror's own files are not served by it.
    assert get(s, "/sub/app.js.br").status == 404


def test_precompressed_off(pith, root):
    f = str(root / "o.js")
    write(f, text(8000, "o"))
    for c in SUFFIX:
        make_variant(f, c)
    s = pith("--precompressed", "off", root=str(root))
    for ae in ("br", "gzip", "zstd", "*", "identity;q=0"):
        r = get(s, "/o.js", ae)
        assert r.status == 200 and r.body == read(f), ae
        assert r.get("Content-Encoding") is None and r.get("Vary") is None, ae


def test_precompressed_dir_missing_is_a_start_failure(root):
    os.makedirs(str(root))
    p = subprocess.run([PITH_BIN, "--port", "0", "--precompressed", str(root / "nope"), str(root)],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 1, p
    assert p.stderr.count("\n") == 1 and "--precompressed" in p.stderr and "nope" in p.stderr


def test_precompressed_empty_value_is_usage(root):
    os.makedirs(str(root))
    p = subprocess.run([PITH_BIN, "--precompressed=", str(root)], capture_output=True, text=True,
                       timeout=10)
    assert p.returncode == 2 and "--precompressed" in p.stderr


@pytest.mark.parametrize("max_file", ["65536", "0"])
def test_revalidation_follows_variants(pith, root, max_file):
    """A variant appearing, changing and going away is noticed (with
    --cache-max-file 0 the entry holds descriptors, not bytes)."""
    f = str(root / "r.js")
    write(f, text(8000, "r"))
    s = pith("--cache-max-file", max_file, root=str(root))
    r = get(s, "/r.js", "br")
    assert r.get("Content-Encoding") is None and r.get("Vary") is None
    make_variant(f, "br")
    r = wait_for(s, "/r.js", "br", lambda r: r.get("Content-Encoding") == "br", "variant appeared")
    assert r.body == read(f + ".br") and r["Vary"] == "Accept-Encoding"
    old_tag = r["ETag"]
    # A new version of the variant (new inode, later time): new bytes, new tag.
    tmp = f + ".tmp"
    make_variant(f, "br", out=tmp, level=1)
    os.utime(tmp, (os.stat(f).st_mtime + 3,) * 2)
    os.rename(tmp, f + ".br")
    r = wait_for(s, "/r.js", "br", lambda r: r["ETag"] != old_tag, "variant changed")
    assert r.body == read(f + ".br") and r["Content-Encoding"] == "br"
    # The original changes after its variant: the variant is stale now.
    write(f, text(8100, "r2"), mtime=os.stat(f + ".br").st_mtime + 5)
    r = wait_for(s, "/r.js", "br", lambda r: r.get("Content-Encoding") is None, "stale")
    assert r.body == read(f) and r.get("Vary") is None
    # Fresh again, then removed.
    make_variant(f, "br")
    wait_for(s, "/r.js", "br", lambda r: r.get("Content-Encoding") == "br", "fresh again")
    os.unlink(f + ".br")
    r = wait_for(s, "/r.js", "br", lambda r: r.get("Content-Encoding") is None, "removed")
    assert r.body == read(f) and r.get("Vary") is None


def test_descriptor_budget_shared_with_variants(pith, root):
    """--cache-entries bounds every descriptor the cache holds, the
    variants' too: with 4 entries and files held by descriptor
    (--cache-max-file 0), each with three variants (4 descriptors a file),
    idle entries give theirs back for the next file, every answer is the
    right variant, and the worker never holds more than 4 for its cache."""
    from conftest import settled_fd_count
    names = ["f%d.js" % i for i in range(4)]
    for n in names:
        f = str(root / n)
        write(f, text(5000, n))
        for c in SUFFIX:
            make_variant(f, c)
    s = pith("--cache-entries", "4", "--cache-max-file", "0", root=str(root))
    w = s.worker()
    base = settled_fd_count(w)
    for _ in range(3):
        for n in names:
            f = str(root / n)
            r = get(s, "/" + n, "br")
            assert r.status == 200 and r["Content-Encoding"] == "br", n
            assert r.body == read(f + ".br"), n
            r = get(s, "/" + n)
            assert r.status == 200 and r.body == read(f) and r["Vary"] == "Accept-Encoding", n
            assert settled_fd_count(w) <= base + 4, n


def test_follow_symlinks_applies_to_variants_beneath_the_root_only(pith, root, tmp_path):
    # With --follow-symlinks a variant that is a link staying beneath the
    # root is followed like any file; one leading outside it never is.
    f = str(root / "l.js")
    write(f, text(8000, "l"))
    os.makedirs(str(root / "store"))
    make_variant(f, "br", out=str(root / "store" / "l.js.br"))
    os.symlink("store/l.js.br", f + ".br")
    outside = str(tmp_path / "outside.gz")
    make_variant(f, "gzip", out=outside)
    os.symlink(outside, f + ".gz")
    s = pith("--follow-symlinks", root=str(root))
    r = get(s, "/l.js", "br")
    assert r["Content-Encoding"] == "br" and r.body == read(str(root / "store" / "l.js.br"))
    r = get(s, "/l.js", "gzip")
    assert r.get("Content-Encoding") is None and r.body == read(f)
    assert r["Vary"] == "Accept-Encoding"


def test_index_file_variants(pith, root):
    # A directory's index file is looked up like any file: its variants too.
    f = str(root / "docs" / "index.html")
    write(f, text(6000, "i"))
    make_variant(f, "zstd")
    s = pith(root=str(root))
    r = get(s, "/docs/", "zstd")
    assert r.status == 200 and r["Content-Encoding"] == "zstd"
    assert r["Content-Type"] == "text/html; charset=utf-8"
    assert r.body == read(f + ".zst")
