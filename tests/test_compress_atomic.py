# SPDX-License-Identifier: MIT
"""`pith compress` replaces variants atomically (issue 11): a live pith
serves F.gz, F.br and F.zst in a loop, by their own names, while
`pith compress` rewrites them round after round; every response must decode
(with Python's gzip and Debian's brotli and zstd tools) to one whole version
of F. A writer that truncated and rewrote the variant in place would hand
out empty or partial bodies here."""

import gzip
import hashlib
import os
import subprocess
import threading

from conftest import run_pith
import http_raw
from test_compress import text
import pytest

pytestmark = pytest.mark.full_only("pith compress (zlib, brotli and zstd)")

ROUNDS = 8
SIZE = 300 * 1024


def write_atomically(path, data, mtime_ns):
    tmp = path + ".new"
    with open(tmp, "wb") as f:
        f.write(data)
    os.utime(tmp, ns=(mtime_ns, mtime_ns))
    os.rename(tmp, path)


def decode(suffix, body):
    if suffix == ".gz":
        return gzip.decompress(body)
    tool = ["brotli", "-d", "-c"] if suffix == ".br" else ["zstd", "-d", "-c", "-q"]
    p = subprocess.run(tool, input=body, capture_output=True, timeout=30)
    assert p.returncode == 0, "%s cannot decode a served body of %d bytes: %s" % (
        tool[0], len(body), p.stderr)
    return p.stdout


def test_a_live_server_never_serves_a_partial_variant(pith, tmp_path):
    root = str(tmp_path / "site")
    os.makedirs(root)
    f = os.path.join(root, "app.js")
    versions = {}
    base = 1_700_000_000 * 10**9

    def new_version(i):
        data = text(SIZE, 1000 + i)
        versions[hashlib.sha256(data).hexdigest()] = i
        write_atomically(f, data, base + i * 10**9)

    new_version(0)
    assert run_pith("compress", "--level", "fast", root, timeout=60).returncode == 0
    # No open-file cache: every request opens the variant by its name.
    srv = pith("--cache-entries", "0", root=root)
    bodies = {".gz": {}, ".br": {}, ".zst": {}}  # suffix -> sha256 -> body
    counts = {s: 0 for s in bodies}
    stop = threading.Event()
    errors = []

    def client():
        try:
            with http_raw.Conn(srv.port) as c:
                while not stop.is_set():
                    for s in bodies:
                        r = c.exchange("GET", "/app.js" + s)
                        assert r.status == 200, (s, r.status)
                        bodies[s].setdefault(hashlib.sha256(r.body).hexdigest(), r.body)
                        counts[s] += 1
        except Exception as e:  # reported by the main thread
            errors.append(e)

    t = threading.Thread(target=client, daemon=True)
    t.start()
    try:
        for i in range(1, ROUNDS + 1):
            new_version(i)
            p = run_pith("compress", "--level", "fast", "--jobs", "2", root, timeout=60)
            assert p.returncode == 0, p.stderr
            assert "1 file compressed" in p.stdout, p.stdout
    finally:
        stop.set()
        t.join(30)
    assert not errors, errors
    assert all(n >= ROUNDS for n in counts.values()), counts
    seen = set()
    for s, got in bodies.items():
        for body in got.values():
            plain = decode(s, body)
            v = versions.get(hashlib.sha256(plain).hexdigest())
            assert v is not None, "%s: a body that decodes to no version of app.js" % s
            seen.add(v)
    # The loop overlapped the rewrites: more than one version was served.
    assert len(seen) >= 2, (seen, counts)
