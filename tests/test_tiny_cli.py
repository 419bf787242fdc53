# SPDX-License-Identifier: MIT
"""What only pith-tiny answers (collected only when PITH_BIN is pith-tiny,
see conftest.py): every flag whose feature needs a library is refused at
start with exit 2 and one line that names the flag and says why, before
anything is opened or bound; --io epoll and auto run the epoll loop."""

import os
import re
import signal

import pytest

from conftest import PithServer, run_pith
from gaputil import poll_until

REFUSED = [
    (["--io", "uring"], "--io uring", "io_uring"),
    (["--io=uring"], "--io uring", "io_uring"),
    (["--tls-cert", "c.pem", "--tls-key", "k.pem"], "--tls-cert", "OpenSSL"),
    (["--tls-key=k.pem"], "--tls-key", "OpenSSL"),
    (["--tls-port", "8443"], "--tls-port", "OpenSSL"),
    (["--http2", "on"], "--http2", "nghttp2"),
    (["--h2-max-streams=10"], "--h2-max-streams", "nghttp2"),
    (["--precompressed", "/srv"], "--precompressed", "zstd"),
    (["--auth", "/p/ /etc/users"], "--auth", "libxcrypt"),
    (["compress", "/srv"], "compress", "zlib"),
    # Automatic HTTPS (issue 35): the ACME process needs OpenSSL and libcurl.
    (["--acme", "ops@example.org"], "--acme", "libcurl"),
    (["--acme=ops@example.org"], "--acme", "libcurl"),
    (["--acme-ca", "https://ca.example/dir"], "--acme-ca", "libcurl"),
    (["--acme-ca-root", "root.pem"], "--acme-ca-root", "libcurl"),
    (["--acme-dir", "/var/lib/pith/acme"], "--acme-dir", "libcurl"),
]


@pytest.mark.parametrize("args,flag,why", REFUSED, ids=[" ".join(a) for a, _, _ in REFUSED])
def test_library_flag_refused_exit_2(tmp_path, args, flag, why):
    p = run_pith(*args, "--port", "0", "--addr", "127.0.0.1", str(tmp_path))
    assert p.returncode == 2, p
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pith: " + flag), p.stderr
    assert "not in pith-tiny" in lines[0] and why in lines[0], lines[0]
    assert "serving" not in p.stderr and p.stdout == ""


@pytest.mark.parametrize("io", ["epoll", "auto"])
def test_epoll_and_auto_run_epoll_silently(docroot, io):
    s = PithServer(docroot.root, args=["--io", io]).start()
    try:
        assert re.search(r"\(1 worker, epoll, ", s.start_line), s.start_line
        assert s.get("/").status == 200
        assert s.stderr_text().count("\n") == 1, s.stderr_text()
    finally:
        assert s.stop() == []


def _sockets(pid):
    out = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:"):
            out.add(link)
    return out


@pytest.mark.parametrize("reuseport", [True, False], ids=["reuseport", "no-reuseport"])
def test_listeners_with_and_without_reuseport(docroot, reuseport):
    # Linux before 3.9 has no SO_REUSEPORT: there the workers accept on
    # duplicates of one socket (PITH_NO_REUSEPORT=1 takes that path here);
    # with it, each worker has a listener of its own.
    env = None if reuseport else {"PITH_NO_REUSEPORT": "1"}
    s = PithServer(docroot.root, workers=2, env=env, allow_worker_crash=True).start()
    try:
        workers = s.wait_workers(2)
        assert len(workers) == 2, workers
        # A worker is forked holding every listener the master opened and
        # closes the others' as it starts: look until both have (5 s).
        def shared():
            return _sockets(workers[0]) & _sockets(workers[1])

        assert poll_until(lambda: bool(shared()) != reuseport, 5.0), (reuseport, shared())
        for _ in range(20):  # fresh connections, whichever worker takes them
            assert s.get("/").status == 200
        os.kill(workers[0], signal.SIGKILL)  # the replacement listens too
        assert len(s.wait_workers(2, exclude=[workers[0]])) == 2
        for _ in range(20):
            assert s.get("/").status == 200
    finally:
        assert s.stop() == []


def test_variants_beside_files_not_served(tmp_path):
    # The full build serves F.gz/F.br/F.zst beside F by default; pith-tiny
    # leaves precompressed variants out, so it answers with F itself and
    # says nothing of encodings (no Content-Encoding, no Vary).
    (tmp_path / "a.txt").write_bytes(b"plain text\n" * 100)
    for suffix in (".gz", ".br", ".zst"):
        (tmp_path / ("a.txt" + suffix)).write_bytes(b"not the file")
    s = PithServer(str(tmp_path)).start()
    try:
        r = s.get("/a.txt", headers=[("Accept-Encoding", "br, gzip, zstd")])
        assert r.status == 200 and r.body == b"plain text\n" * 100, r
        assert r.get("Content-Encoding") is None and r.get("Vary") is None, r.head_raw
        r = s.get("/a.txt", headers=[("Accept-Encoding", "br;q=1, identity;q=0")])
        assert r.status == 200 and r.body == b"plain text\n" * 100, r  # never a 406
    finally:
        assert s.stop() == []
