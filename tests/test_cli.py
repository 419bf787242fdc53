# SPDX-License-Identifier: MIT
"""Command line (DESIGN.md §3): --help/--version, usage errors exit 2 with a
one-line reason, runtime failures exit 1, ROOT anywhere, --root, --pidfile,
--daemon."""

import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import (PITH_BIN, SANITIZER_RE, START_RE, VERSION, PithServer, _limit_core, free_port, pid_alive,
                      proc_children, run_pith)
from http_raw import fetch


def test_help_exits_0_with_usage_and_examples():
    p = run_pith("--help")
    assert p.returncode == 0
    out = p.stdout
    assert "usage" in out.lower()
    assert "example" in out.lower()
    for flag in ("--port", "--addr", "--workers", "--max-conns", "--index", "--no-listing",
                 "--follow-symlinks", "--max-age", "--log", "--pidfile", "--daemon", "--version"):
        assert flag in out, flag


def test_short_help():
    p = run_pith("-h")
    assert p.returncode == 0 and "usage" in p.stdout.lower()


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    p = run_pith(flag)
    assert p.returncode == 0
    assert p.stdout.splitlines()[0].strip() == "pith " + VERSION, p.stdout


BAD_USAGE = [
    (["--port", "8080junk"], "8080junk"),
    (["--port", "70000"], "70000"),
    (["--port", "-1"], "-1"),
    (["--port", ""], "port"),
    (["--workers", "0"], "workers"),
    (["--workers", "65"], "workers"),
    (["--workers", "two"], "workers"),
    (["--max-conns", "0"], "max-conns"),
    (["--max-age", "x"], "max-age"),
    (["--timeout-header", "abc"], "timeout-header"),
    (["--bogus"], "--bogus"),
    (["--port"], "--port"),
    (["--index"], "--index"),
    (["-p"], "-p"),
]


@pytest.mark.parametrize("args,mention", BAD_USAGE, ids=[" ".join(a) or "empty" for a, _ in BAD_USAGE])
def test_bad_usage_exits_2(docroot, args, mention):
    if len(args) == 1 and args[0] in ("--port", "--index", "-p"):
        argv = [docroot.root] + args  # the flag is last: its value is missing
    else:
        argv = args + [docroot.root]
    p = run_pith(*argv, timeout=5)
    assert p.returncode == 2, "exit %r\nstderr: %s" % (p.returncode, p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, "want a one-line reason, got:\n%s" % p.stderr
    assert mention.lstrip("-") in lines[0], lines[0]
    assert "serving" not in p.stderr


def test_missing_root_exits_1(tmp_path):
    missing = str(tmp_path / "no-such-dir")
    p = run_pith("--port", "0", "--addr", "127.0.0.1", missing, timeout=5)
    assert p.returncode == 1, p.stderr
    assert "no-such-dir" in p.stderr
    assert "serving" not in p.stderr


def test_root_is_a_file_exits_1(docroot):
    p = run_pith("--port", "0", "--addr", "127.0.0.1", docroot.path("index.html"), timeout=5)
    assert p.returncode == 1, p.stderr
    assert "index.html" in p.stderr


def test_busy_port_exits_1(docroot):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        p = run_pith("--port", port, "--addr", "127.0.0.1", "--workers", "1", docroot.root, timeout=5)
    finally:
        busy.close()
    assert p.returncode == 1, p.stderr
    assert str(port) in p.stderr or "in use" in p.stderr.lower(), p.stderr


def test_start_line(pith, docroot):
    s = pith()
    m = START_RE.match(s.start_line)
    assert m
    assert s.start_line.startswith("pith %s serving %s on http://127.0.0.1:%d/ (1 worker, "
                                   % (VERSION, os.path.realpath(docroot.root), s.port)), s.start_line


def _serve_check(port, docroot):
    r = fetch(port, "/index.html")
    assert r.status == 200 and r.body == docroot.files["index.html"]


@pytest.mark.parametrize("order", ["root_first", "root_middle", "root_flag", "root_flag_first",
                                   "equals_form"])
def test_root_position(docroot, order):
    rest = ["--port", "0", "--addr", "127.0.0.1"]
    if order == "equals_form":
        argv = ["--port=0", "--root=" + docroot.root, "--addr=127.0.0.1", "--workers=1"]
    elif order == "root_first":
        argv = [docroot.root] + rest + ["--workers", "1"]
    elif order == "root_middle":
        argv = rest + [docroot.root, "--workers", "1"]
    elif order == "root_flag":
        argv = rest + ["--workers", "1", "--root", docroot.root]
    else:
        argv = ["--root", docroot.root] + rest + ["--workers", "1"]
    s = _RawServer(argv)
    try:
        s.start()
        assert os.path.realpath(docroot.root) in s.start_line
        _serve_check(s.port, docroot)
    finally:
        problems = s.stop()
    assert not problems, problems


class _RawServer(PithServer):
    """A PithServer whose argv is given whole (no default flags, no ROOT)."""

    def __init__(self, argv, **kw):
        super().__init__("unused", **kw)
        self.argv = [PITH_BIN] + argv


def test_short_aliases(docroot):
    s = _RawServer(["-p", "0", "-a", "127.0.0.1", "-w", "1", docroot.root])
    try:
        s.start()
        _serve_check(s.port, docroot)
    finally:
        problems = s.stop()
    assert not problems, problems


def test_default_root_is_cwd(docroot):
    s = _RawServer(["--port", "0", "--addr", "127.0.0.1", "--workers", "1"], cwd=docroot.root)
    try:
        s.start()
        assert os.path.realpath(docroot.root) in s.start_line
        _serve_check(s.port, docroot)
    finally:
        problems = s.stop()
    assert not problems, problems


def test_pidfile(pith, tmp_path):
    pf = tmp_path / "pith.pid"
    s = pith("--pidfile", str(pf))
    deadline = time.monotonic() + 3
    while not pf.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert int(pf.read_text().strip()) == s.pid


def test_daemon(docroot, tmp_path):
    pf = tmp_path / "daemon.pid"
    port = free_port()
    out = open(tmp_path / "out", "wb")
    err = open(tmp_path / "err", "wb")
    argv = [PITH_BIN, "--daemon", "--pidfile", str(pf), "--port", str(port), "--addr", "127.0.0.1",
            "--workers", "1", docroot.root]
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                         preexec_fn=_limit_core)
    pid = None
    try:
        rc = p.wait(5)
        assert rc == 0, (tmp_path / "err").read_text()
        assert time.monotonic() - t0 < 5
        deadline = time.monotonic() + 3
        while not pf.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pf.read_text().strip())
        assert pid != p.pid
        assert pid_alive(pid)
        deadline = time.monotonic() + 3
        while True:
            try:
                _serve_check(port, docroot)
                break
            except ConnectionRefusedError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if pid is None and pf.exists():
            try:
                pid = int(pf.read_text().strip())
            except ValueError:
                pid = None
        if pid is not None and pid_alive(pid):
            workers = proc_children(pid)
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 5
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            for q in [pid] + workers:
                if pid_alive(q):
                    os.kill(q, signal.SIGKILL)
        out.close()
        err.close()
    text = (tmp_path / "err").read_text(errors="replace")
    assert not SANITIZER_RE.search(text), text


def test_quiet_prints_no_start_line(docroot, tmp_path):
    port = free_port()
    err = open(tmp_path / "err", "w+b")
    p = subprocess.Popen([PITH_BIN, "-q", "--port", str(port), "--addr", "127.0.0.1", "--workers",
                          "1", docroot.root], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=err, start_new_session=True, preexec_fn=_limit_core)
    try:
        deadline = time.monotonic() + 5
        while True:
            try:
                _serve_check(port, docroot)
                break
            except ConnectionRefusedError:
                if time.monotonic() > deadline or p.poll() is not None:
                    raise
                time.sleep(0.1)
    finally:
        workers = proc_children(p.pid)
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            rc = p.wait()
        for w in workers:
            if pid_alive(w):
                os.kill(w, signal.SIGKILL)
    err.seek(0)
    text = err.read().decode("utf-8", "replace")
    err.close()
    assert "serving" not in text, text
    assert rc == 0
