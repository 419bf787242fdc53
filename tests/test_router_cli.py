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
                                  ["--addr", "localhost"], ["a", "b"]])
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
    assert p.returncode == 0 and "pith-router 0.1.0" in p.stderr + p.stdout


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
        # About 5.5 KiB of lines: past 1 KiB, checked every 4 KiB, so one
        # rotation (a second would replace access.log.1), then a new log.
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
