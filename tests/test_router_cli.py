# SPDX-License-Identifier: MIT
"""What only the router profile answers (collected only when PITH_BIN is
pith-router, see conftest.py): every option outside its feature set exits 2
with one line naming it; the short --help with two examples; --version; the
access log in combined format, rotated past --log-max; --pidfile; -q;
--workers 1..16; prefork workers replaced when one dies. About 3 s."""

import os
import re
import signal
import time

import pytest

from conftest import PithServer, run_pith
from gaputil import poll_until

REFUSED = ["--io", "--tls-cert", "--precompressed", "--auth", "--status", "--proxy-protocol",
           "--follow-symlinks", "--immutable", "--site", "--config", "--cors", "--fallback",
           "--user", "--chroot", "--max-conns", "--log-format", "--check", "--grace",
           "--cache-size", "--unix-mode", "--no-such-option", "-x", "--io=uring"]


@pytest.mark.parametrize("flag", REFUSED)
def test_option_outside_the_profile_exits_2(tmp_path, flag):
    p = run_pith(flag, "x", "--port", "0", "--addr", "127.0.0.1", str(tmp_path))
    assert p.returncode == 2, p
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pith: " + flag), p.stderr
    assert "not in the router profile" in lines[0]
    assert p.stdout == ""


@pytest.mark.parametrize("args", [["--workers", "0"], ["--workers", "17"], ["--port", "8080junk"],
                                  ["--port", "70000"], ["--max-age"], ["--daemon=1"],
                                  ["--addr", "localhost"], ["a", "b"], ["--index", "a/b"],
                                  ["--index", ".x"], ["--index="]])
def test_bad_values_exit_2(args):
    p = run_pith(*args)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p


def test_help_is_short_with_two_examples():
    p = run_pith("--help")
    assert p.returncode == 0 and p.stderr == ""
    assert len(p.stdout) < 600 and p.stdout.count("\n  pith-router ") == 2, p.stdout
    assert run_pith("-h").stdout == p.stdout


def test_version():
    p = run_pith("--version")
    assert p.returncode == 0 and p.stdout == "pith 0.1.0 (router profile)\n" and p.stderr == ""


def test_workers_and_start_line(docroot):
    s = PithServer(docroot.root, workers=3).start()
    try:
        assert s.start_line.endswith("(3 workers, epoll, %s, router)"
                                     % ("openat2" if "openat2" in s.start_line else "walk"))
        assert len(s.wait_workers(3)) == 3
        victim = s.workers()[0]
        os.kill(victim, signal.SIGKILL)
        assert poll_until(lambda: victim not in s.workers() and len(s.workers()) == 3, 5)
        assert s.get("/").status == 200
        s.allow_worker_crash = True
    finally:
        assert s.stop() == []


def test_quiet_prints_nothing(docroot, tmp_path):
    pid = tmp_path / "pid"
    p = run_pith("-q", "--port", "0", "--addr", "127.0.0.1", "--pidfile", str(pid),
                 "--workers", "1", "--daemon", docroot.root)
    assert p.returncode == 0 and p.stderr == "", p
    n = int(poll_until(lambda: pid.exists() and pid.read_text().strip(), 5))
    os.kill(n, signal.SIGTERM)
    assert poll_until(lambda: not pid.exists(), 10), "the pidfile outlived the master"


def test_access_log_combined_and_rotated(docroot, tmp_path):
    log = tmp_path / "access.log"
    s = PithServer(docroot.root, args=["--log", str(log), "--log-max", "1"]).start()
    try:
        r = s.get("/index.html", headers={"User-Agent": 'ua"x', "Referer": "http://r/"})
        assert r.status == 200
        line = poll_until(lambda: log.exists() and log.read_text(), 5)
        assert re.match(r'^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] '
                        r'"GET /index\.html HTTP/1\.1" 200 %d "http://r/" "ua\\x22x"\n$'
                        % len(r.body), line), line
        # About 5.5 KiB of lines: past 1 KiB, so rotated (FILE.1 is the line
        # that took FILE past 1 KiB and those before it), then a new log.
        with s.conn() as c:
            for _ in range(40):
                c.request("GET", "/" + "n" * 60)
                assert c.read_response().status == 404
        old = tmp_path / "access.log.1"
        assert poll_until(old.exists, 5), os.listdir(tmp_path)
        assert s.get("/index.html").status == 200
        assert poll_until(lambda: "GET /index.html" in log.read_text(), 5)
    finally:
        assert s.stop() == []


def test_pipelined_behind_a_blocked_send(tmp_path):
    """A big answer that cannot be sent at once: the head, the file and the
    pipelined request behind it move out of the scratch buffers into the
    connection's own (and the log's spans with them), and another client
    is served meanwhile from the same scratch buffers."""
    (tmp_path / "big").write_bytes(b"b" * (16 << 20))
    (tmp_path / "a.txt").write_bytes(b"hello\n")
    log = tmp_path / "log"
    s = PithServer(str(tmp_path), args=["--log", str(log)]).start()
    try:
        with s.conn() as c:
            c.send(b"GET /big HTTP/1.1\r\nHost: x\r\nUser-Agent: first\r\n\r\n"
                   b"GET /a.txt HTTP/1.1\r\nHost: x\r\nUser-Agent: second\r\n\r\n")
            time.sleep(0.3)  # the server blocks on the full socket
            for _ in range(3):
                assert s.get("/a.txt").body == b"hello\n"  # meanwhile, another client
            r1 = c.read_response()
            r2 = c.read_response()
        assert r1.status == 200 and len(r1.body) == 16 << 20
        assert r2.status == 200 and r2.body == b"hello\n"
        text = poll_until(lambda: log.read_text().count("\n") >= 5 and log.read_text(), 5)
        assert '"GET /big HTTP/1.1" 200 16777216 "-" "first"' in text, text
        assert '"GET /a.txt HTTP/1.1" 200 6 "-" "second"' in text, text
    finally:
        assert s.stop() == []


def test_big_listing_in_chunks(tmp_path):
    """A listing longer than one out buffer: many chunks, every name once."""
    names = ["f%04d-%s.txt" % (i, "x" * 100) for i in range(600)]
    for n in names:
        (tmp_path / n).write_bytes(b"")
    s = PithServer(str(tmp_path)).start()
    try:
        r = s.get("/")
        assert r.status == 200 and r["Transfer-Encoding"] == "chunked"
        body = r.body.decode()
        assert all(body.count('href="%s"' % n) == 1 for n in names)
        r = s.get("/", version="HTTP/1.0")  # close-delimited
        assert r.body.decode().count("<li>") == 600
    finally:
        assert s.stop() == []


def test_connections_past_128_wait(docroot):
    """128 connections per worker; the 129th waits in the backlog and is
    served when one closes."""
    s = PithServer(docroot.root).start()
    try:
        conns = [s.conn() for _ in range(128)]
        for c in conns[:2]:
            c.request("GET", "/index.html")
            assert c.read_response().status == 200
        extra = s.conn()
        extra.request("GET", "/index.html")
        with pytest.raises(Exception):
            extra.read_response(timeout=0.5)
        conns[0].close()
        assert extra.read_response(timeout=5).status == 200
        for c in conns[1:] + [extra]:
            c.close()
    finally:
        assert s.stop() == []


def test_term_drains_a_download(tmp_path):
    (tmp_path / "big").write_bytes(b"d" * (8 << 20))
    s = PithServer(str(tmp_path)).start()
    with s.conn() as c:
        c.send(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.2)
        s.signal(signal.SIGTERM)
        r = c.read_response()
        assert r.status == 200 and len(r.body) == 8 << 20  # finished, then the worker exits
    assert s.wait_exit(10) == 0
    assert s.stop() == []
