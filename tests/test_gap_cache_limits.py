# SPDX-License-Identifier: MIT
"""The file cache's size flags (README "Options", src/http/filecache.h):
--cache-size MiB bounds the memory a worker keeps for small files' bytes, and
files beyond it are still served whole (byte-exact, forwards and backwards,
so every entry is both filled and reused); --cache-max-file B keeps a file of
exactly B bytes in memory and sends one of B+1 bytes from an open
descriptor. Which one a file got is observed from outside: an entry whose
bytes are not in memory holds the file open, visible in /proc/<pid>/fd."""

import os
import random

import pytest

from gaputil import fds_under, poll_until

NFILES = 100
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def sixty(tmp_path_factory):
    """100 files of about 60 KB each (58,000..62,000 bytes, distinct random
    contents, so a block reused for another file would show)."""
    root = tmp_path_factory.mktemp("cache60")
    rng = random.Random(60)
    files = []
    for i in range(NFILES):
        data = rng.randbytes(rng.randint(58000, 62000))
        name = "f%03d.bin" % i
        (root / name).write_bytes(data)
        files.append((name, data))
    return str(root), files


def _fetch_all(s, order):
    """Fetches each (name, data) on one keep-alive connection; checks every
    byte, then a Range from the middle of the file."""
    with s.conn() as c:
        for name, data in order:
            r = c.exchange("GET", "/" + name)
            assert r.status == 200, (name, r)
            assert r.body == data, "%s: %d bytes differ" % (name, len(data))
            r = c.exchange("GET", "/" + name, {"Range": "bytes=1000-1999"})
            assert r.status == 206 and r.body == data[1000:2000], name


@pytest.mark.parametrize("entries", [None, "10"])
def test_cache_size_1_mib_forwards_backwards(pith, sixty, entries):
    root, files = sixty
    args = ["--cache-size", "1"] + (["--cache-entries", entries] if entries else [])
    s = pith(*args, root=root)
    _fetch_all(s, files)
    _fetch_all(s, files[::-1])
    _fetch_all(s, files)
    held = fds_under(s.worker(), root)
    sizes = {os.path.join(os.path.realpath(root), n): len(d) for n, d in files}
    assert len(set(held)) == len(held), "a file held open twice: %r" % held
    if entries is None:
        # Every file has an entry (1024 > 100). Those not held open have
        # their bytes in memory, and together they fit in 1 MiB.
        in_memory = [p for p in sizes if p not in held]
        assert in_memory, "nothing kept in memory"
        assert sum(sizes[p] for p in in_memory) <= MIB, len(in_memory)
    else:
        # 10 entries: at most 10 descriptors, however many files passed.
        assert len(held) <= int(entries), held


def _held(s, root, name):
    return os.path.join(os.path.realpath(root), name) in fds_under(s.worker(), root)


# B: a small value, the largest size class (the default), and a value the
# flag accepts (0..1048576) beyond 64 KiB.
@pytest.mark.parametrize("b", [
    1000,
    65536,
    100000,  # above the old 64 KiB top size class (fixed with this test)
])
def test_cache_max_file_boundary(pith, tmp_path, b):
    rng = random.Random(b)
    at = rng.randbytes(b)
    over = rng.randbytes(b + 1)
    (tmp_path / "at.bin").write_bytes(at)
    (tmp_path / "over.bin").write_bytes(over)
    s = pith("--cache-max-file", str(b), "--cache-size", "16", root=str(tmp_path))
    for _ in range(2):  # the second time from the cache
        r = s.get("/at.bin")
        assert r.status == 200 and r.body == at
        r = s.get("/over.bin")
        assert r.status == 200 and r.body == over
    # B+1 bytes: sent from the descriptor its entry keeps open. Exactly B
    # bytes: in memory, no descriptor left once the response is done.
    assert poll_until(lambda: _held(s, str(tmp_path), "over.bin"), 2.0), \
        "a file of B+1 bytes is not held open"
    assert poll_until(lambda: not _held(s, str(tmp_path), "at.bin"), 2.0), \
        "a file of exactly B bytes is held open: not kept in memory"


def test_cache_max_file_0_keeps_nothing_in_memory(pith, tmp_path):
    (tmp_path / "one.bin").write_bytes(b"1")
    s = pith("--cache-max-file", "0", root=str(tmp_path))
    r = s.get("/one.bin")
    assert r.status == 200 and r.body == b"1"
    assert poll_until(lambda: _held(s, str(tmp_path), "one.bin"), 2.0)
