# SPDX-License-Identifier: MIT
"""`pith compress` and files that change under it, and what a crash leaves
(issue 19). A file that changes while it is read or compressed gets no
variant: one made from its old bytes would carry the mtime of before the
read, which marks it current (and the server serves it) if F's mtime is put
back or lands in the same second; the run names the file and exits 1. A
crashed run's temporary files (.pith-compress-PID-SEQ.tmp) are removed by
the next run once their status is TMP_STALE_S (10 minutes) old
(PITH_COMPRESS_TMP_STALE_S shortens it here), fresh ones are left to the
run that owns them, and the server never serves them."""

import os
import subprocess
import time

import pytest

from conftest import PITH_BIN
from precomp_util import decode, need_tools, text

pytestmark = pytest.mark.full_only("pith compress (left out of pith-tiny)")

TMP = ".pith-compress-4242-7.tmp"


def compress(*args, env=None, timeout=60):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([PITH_BIN, "compress"] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=timeout, env=e)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def test_a_file_that_changes_while_compressed_gets_no_variant(tmp_path):
    """F grows while brotli 11 works on it, and its mtime is put back (as
    rsync -t or a restore would): the old code wrote F.br from the old
    bytes with that very mtime, so the server took it for current."""
    need_tools()
    root = tmp_path / "site"
    f = str(root / "big.js")
    original = text(1_000_000, "grow")
    write(f, original)
    st = os.stat(f)
    p = subprocess.Popen([PITH_BIN, "compress", "--encodings", "br", "--jobs", "1", str(root)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.4)  # read (milliseconds), still compressing (about 1.5 s)
    assert p.poll() is None, "pith compress finished before the file could change"
    with open(f, "ab") as g:
        g.write(b"\n// appended while compressing\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    out, err = p.communicate(timeout=60)
    now = open(f, "rb").read()
    assert now != original
    if os.path.exists(f + ".br"):
        got = decode("br", open(f + ".br", "rb").read())
        assert got == now, "F.br (mtime %s, F's %s) holds F's old bytes" % (
            os.stat(f + ".br").st_mtime_ns, os.stat(f).st_mtime_ns)
    assert p.returncode == 1, (p.returncode, out, err)
    assert "big.js: changed while it was compressed: no variant written" in err, err
    # The next run makes it from the new bytes.
    r = compress("--encodings", "br", root)
    assert r.returncode == 0, r.stderr
    assert decode("br", open(f + ".br", "rb").read()) == now


def tree_with_leftovers(tmp_path, out=None):
    root = tmp_path / "site"
    write(str(root / "a.js"), text(5000, "a"))
    where = out or root
    for d in ("", "sub/"):
        write(str(where / d / TMP), b"half a variant")
    write(str(root / "sub" / "b.css"), text(5000, "b"))
    return root, [where / TMP, where / "sub" / TMP]


def test_stale_temporary_files_are_removed(tmp_path):
    root, tmps = tree_with_leftovers(tmp_path)
    # A look first: nothing is removed.
    r = compress("--dry-run", root, env={"PITH_COMPRESS_TMP_STALE_S": "0"})
    assert r.returncode == 0, r.stderr
    assert "would remove %s" % TMP in r.stdout and "would remove sub/%s" % TMP in r.stdout
    assert all(t.exists() for t in tmps)
    r = compress(root, env={"PITH_COMPRESS_TMP_STALE_S": "0"})
    assert r.returncode == 0, r.stderr
    assert "removed %s (a temporary file an interrupted run left)" % TMP in r.stdout, r.stdout
    assert not any(t.exists() for t in tmps), tmps
    # Only names of that shape go; the variants are made as usual.
    assert (root / "a.js.br").exists() and (root / "sub" / "b.css.gz").exists()


def test_stale_temporary_files_in_the_mirror_tree_are_removed(tmp_path):
    out = tmp_path / "variants"
    root, tmps = tree_with_leftovers(tmp_path, out=out)
    r = compress("--out", out, root, env={"PITH_COMPRESS_TMP_STALE_S": "0"})
    assert r.returncode == 0, r.stderr
    assert not any(t.exists() for t in tmps), tmps
    assert (out / "a.js.br").exists()


def test_fresh_temporary_files_are_left_alone(tmp_path):
    """One another run may be writing right now (its status changed less
    than 10 minutes ago): not ours to remove."""
    root, tmps = tree_with_leftovers(tmp_path)
    keep = root / ".pith-compress-4242-7.tmpx"  # not of the shape: never touched
    write(str(keep), b"x")
    r = compress(root)
    assert r.returncode == 0, r.stderr
    assert all(t.exists() for t in tmps) and keep.exists()


def test_temporary_files_are_never_served(pith, tmp_path):
    root, _ = tree_with_leftovers(tmp_path)
    s = pith(root=str(root))
    for path in ("/" + TMP, "/sub/" + TMP):
        assert s.get(path).status == 403, path  # a dotfile
    r = s.get("/a.js", headers={"Accept-Encoding": "gzip, br, zstd"})
    assert r.status == 200 and r.get("Content-Encoding") is None  # no variant yet
