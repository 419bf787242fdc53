# SPDX-License-Identifier: MIT
"""pith-tiny cross smoke: each cross-built pith-tiny (make cross) runs under
qemu-user (the static binary needs no sysroot) and answers the core of the
contract: GET, HEAD, Range (single and multipart), 304, 301, the listing, a
traversal and a symlink refused, keep-alive, pipelining, a 100 MiB file,
a sparse 3 GiB file read at offsets above 2^31 (64-bit offsets on the
32-bit ABIs), and the header timeout. Only `make test-cross` collects this
file (PITH_CROSS=1, see conftest.py); a missing binary or qemu fails."""

import hashlib
import os
import shutil
import socket
import time

import pytest

from conftest import REPO, PithServer

ARCHES = ["aarch64", "arm", "mips", "mipsel", "riscv64"]
BIG = 100 << 20
SPARSE = 3 << 30
MARK_AT = (1 << 31) + 12345  # above 2^31: a 32-bit off_t would wrap here
HEADER_TIMEOUT = 2


def _binary(arch):
    path = os.path.join(REPO, "build", "tiny-%s" % arch, "pith-tiny")
    if not os.path.exists(path):
        pytest.fail("%s missing: run make cross-%s" % (path, arch))
    qemu = shutil.which("qemu-%s" % arch)
    if not qemu:
        pytest.fail("qemu-%s missing: install Debian's qemu-user" % arch)
    return [qemu, path]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    d = tmp_path_factory.mktemp("cross")
    (d / "a.txt").write_bytes(b"hello, tiny world\n")
    (d / "dir").mkdir()
    (d / "dir" / "f.txt").write_bytes(b"in dir\n")
    (d / "site").mkdir()
    (d / "site" / "index.html").write_bytes(b"<p>index</p>\n")
    os.symlink("a.txt", d / "link.txt")
    block = os.urandom(1 << 20)
    with open(d / "big.bin", "wb") as f:
        for _ in range(BIG >> 20):
            f.write(block)
    with open(d / "sparse.bin", "wb") as f:
        f.seek(MARK_AT)
        f.write(b"MARK-above-2GiB")
        f.truncate(SPARSE)
    return d, hashlib.sha256(block * (BIG >> 20)).hexdigest()


@pytest.fixture(scope="module", params=ARCHES)
def tiny(request, root):
    argv = _binary(request.param)
    s = PithServer(root[0], args=["--timeout-header", str(HEADER_TIMEOUT)])
    s.argv = argv + [a for a in s.argv[1:] if a not in ("--io",) and a != "uring"]
    s.start()
    yield s
    problems = s.stop()
    assert not problems, problems


def test_get_head_and_keepalive(tiny):
    with tiny.conn() as c:
        r = c.exchange("GET", "/a.txt")
        assert r.status == 200 and r.body == b"hello, tiny world\n", r
        assert r["Content-Type"] == "text/plain; charset=utf-8"
        h = c.exchange("HEAD", "/a.txt")  # the same connection: keep-alive
        assert h.status == 200 and h.body == b"" and h["Content-Length"] == "18", h
        assert h["ETag"] == r["ETag"]


def test_pipelining(tiny):
    reqs = b"".join(b"GET /%s HTTP/1.1\r\nHost: x\r\n\r\n" % t
                    for t in (b"a.txt", b"dir/f.txt", b"a.txt"))
    with tiny.conn() as c:
        c.send(reqs)
        bodies = [c.read_response().body for _ in range(3)]
    assert bodies == [b"hello, tiny world\n", b"in dir\n", b"hello, tiny world\n"]


def test_range_single_and_multipart(tiny):
    r = tiny.get("/a.txt", headers={"Range": "bytes=0-4"})
    assert r.status == 206 and r.body == b"hello", r
    assert r["Content-Range"] == "bytes 0-4/18"
    r = tiny.get("/a.txt", headers={"Range": "bytes=0-4,7-10"})
    assert r.status == 206, r
    assert r["Content-Type"].startswith("multipart/byteranges; boundary=")
    assert b"Content-Range: bytes 0-4/18\r\n\r\nhello\r\n" in r.body
    assert b"Content-Range: bytes 7-10/18\r\n\r\ntiny\r\n" in r.body


def test_conditional_304(tiny):
    etag = tiny.get("/a.txt")["ETag"]
    r = tiny.get("/a.txt", headers={"If-None-Match": etag})
    assert r.status == 304 and r.body == b"" and r["ETag"] == etag, r


def test_redirect_index_and_listing(tiny):
    r = tiny.get("/site")
    assert r.status == 301 and r["Location"] == "/site/", r
    assert tiny.get("/site/").body == b"<p>index</p>\n"
    r = tiny.get("/dir/")
    assert r.status == 200 and b'<a href="./f.txt">f.txt</a>' in r.body, r


def test_traversal_and_symlink_refused(tiny):
    assert tiny.get("/../a.txt").status == 400
    assert tiny.get("/%2e%2e/etc/passwd").status == 400
    assert tiny.get("/link.txt").status == 403


def test_100_mib_file(tiny, root):
    # Hashed as it arrives: the client, not pith, is the slow side here.
    with socket.create_connection(("127.0.0.1", tiny.port), timeout=30) as sock:
        sock.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk, "closed before the head ended: %r" % data
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200 "), head
        assert b"\r\nContent-Length: %d\r\n" % BIG in head, head
        h, got = hashlib.sha256(body), len(body)
        buf = bytearray(1 << 20)
        while True:
            n = sock.recv_into(buf)
            if not n:
                break
            h.update(memoryview(buf)[:n])
            got += n
    assert got == BIG and h.hexdigest() == root[1], got


def test_sparse_3_gib_offsets_above_2_gib(tiny):
    h = tiny.get("/sparse.bin", method="HEAD")
    assert h.status == 200 and h["Content-Length"] == str(SPARSE), h
    r = tiny.get("/sparse.bin", headers={"Range": "bytes=%d-%d" % (MARK_AT, MARK_AT + 14)})
    assert r.status == 206 and r.body == b"MARK-above-2GiB", r
    assert r["Content-Range"] == "bytes %d-%d/%d" % (MARK_AT, MARK_AT + 14, SPARSE)
    r = tiny.get("/sparse.bin", headers={"Range": "bytes=-4"})
    assert r.status == 206 and r.body == b"\0" * 4, r
    assert r["Content-Range"] == "bytes %d-%d/%d" % (SPARSE - 4, SPARSE - 1, SPARSE)


def test_header_timeout(tiny):
    with tiny.conn() as c:
        t0 = time.monotonic()
        c.send(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n")  # never finished
        r = c.read_response(timeout=HEADER_TIMEOUT + 5)
        took = time.monotonic() - t0
        assert r.status == 408 and r["Connection"].lower() == "close", r
        assert HEADER_TIMEOUT - 0.3 <= took <= HEADER_TIMEOUT + 4, took
        assert c.wait_closed(5.0) == b""


# ---- what the merged production features add, each library-free ---------------
# A Unix socket (AF_UNIX, umask, fchmodat), --status (a MAP_SHARED counter
# block: 64-bit counters, in two halves on mips), socket activation (the
# SO_TYPE/SO_ACCEPTCONN numbers differ on mips) and --check.

def _start(argv, pass_fd=None, env=None, timeout=30.0):
    """Starts argv with stderr to a file; returns (proc, stderr path) once
    the start line is there. pass_fd: a socket put at descriptor 3 with
    LISTEN_FDS=1 and LISTEN_PID = the pid that execs (qemu-user runs the
    guest in its own process)."""
    import subprocess
    import tempfile
    err = tempfile.NamedTemporaryFile(prefix="pith-cross-", suffix=".err", delete=False)
    if pass_fd is not None:
        argv = ["/bin/sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"', "sh"] + argv
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                         env=dict(os.environ, **(env or {})), start_new_session=True,
                         pass_fds=(3,) if pass_fd is not None else (),
                         preexec_fn=(lambda: os.dup2(pass_fd, 3)) if pass_fd is not None else None)
    deadline = time.monotonic() + timeout
    while True:
        text = open(err.name, errors="replace").read()
        if " serving " in text:
            return p, err.name
        assert p.poll() is None, "exited %s: %s" % (p.returncode, text)
        assert time.monotonic() < deadline, "no start line: %s" % text
        time.sleep(0.05)


def _stop(p):
    import signal
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 0


def _get(sock, target):
    sock.settimeout(20)
    sock.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % target)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


@pytest.mark.parametrize("arch", ARCHES)
def test_unix_socket_status_and_check(arch, root, tmp_path):
    import subprocess
    argv = _binary(arch)
    path = str(tmp_path / "pith.sock")
    c = subprocess.run(argv + ["--check", "--addr", "unix:" + path, str(root[0])],
                       capture_output=True, text=True, timeout=30)
    assert c.returncode == 0 and "http://unix:%s:/ (mode 0666" % path in c.stdout, c
    p, errpath = _start(argv + ["--addr", "unix:" + path, "--workers", "1", "--status",
                                "127.0.0.1:0", str(root[0])])
    try:
        assert oct(os.stat(path).st_mode & 0o777) == "0o666"
        for _ in range(3):
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(path)
                assert _get(s, b"/a.txt").endswith(b"\r\n\r\nhello, tiny world\n")
        status = open(errpath).read().split("status on http://127.0.0.1:")[1]
        port = int(status.split("/")[0])
        with socket.create_connection(("127.0.0.1", port)) as s:
            metrics = _get(s, b"/metrics").decode()
        assert metrics.startswith("HTTP/1.1 200"), metrics
        got = sum(int(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                  if line.startswith("pith_requests_total{"))
        assert got == 3, metrics
    finally:
        _stop(p)
    assert not os.path.exists(path)  # removed at exit


@pytest.mark.parametrize("arch", ARCHES)
def test_socket_activation(arch, root):
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    port = lsock.getsockname()[1]
    p, errpath = _start(_binary(arch) + ["--workers", "1", str(root[0])], pass_fd=lsock.fileno())
    lsock.close()
    try:
        assert "socket activation" in open(errpath).read()
        with socket.create_connection(("127.0.0.1", port)) as s:
            assert _get(s, b"/a.txt").endswith(b"\r\n\r\nhello, tiny world\n")
    finally:
        _stop(p)
