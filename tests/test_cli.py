# SPDX-License-Identifier: MIT
"""Command line (DESIGN.md §3): --help/--version, usage errors exit 2 with a
one-line reason, runtime failures exit 1, ROOT anywhere, --root, --pidfile
(written, removed on exit, unwritable: exit 1), --daemon (a new session,
stdio on /dev/null, a clean stop), -q."""

import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import (PITH_BIN, PITH_IO, SANITIZER_RE, START_RE, VERSION, PithServer, _limit_core,
                      listening_ports, pid_alive, proc_children, run_pith)
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


def _wait_file(path, timeout=3.0):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, "%s not written within %.0f s" % (path, timeout)
        time.sleep(0.02)


def test_pidfile_written_and_removed_on_exit(pith, tmp_path):
    pf = tmp_path / "pith.pid"
    s = pith("--pidfile", str(pf))
    _wait_file(pf)
    assert pf.read_text() == "%d\n" % s.pid
    s.signal(signal.SIGTERM)
    assert s.wait_exit(10) == 0
    assert not pf.exists(), "the pidfile is left behind after a clean exit"


@pytest.mark.parametrize("where", ["missing_dir", "is_a_directory"])
def test_pidfile_unwritable_exits_1(docroot, tmp_path, where):
    # Paths that stay unwritable for root too (the suite may run as root).
    if where == "missing_dir":
        pf = tmp_path / "no-such-dir" / "pith.pid"
    else:
        pf = tmp_path / "a-directory"
        pf.mkdir()
    p = run_pith("--pidfile", str(pf), "--port", "0", "--addr", "127.0.0.1", "--workers", "1",
                 docroot.root, timeout=5)
    assert p.returncode == 1, "exit %r\nstderr: %s" % (p.returncode, p.stderr)
    assert str(pf) in p.stderr and "pidfile" in p.stderr, p.stderr
    assert "serving" not in p.stderr
    assert not (tmp_path / "no-such-dir").exists()


def _stat_fields(pid):
    """/proc/<pid>/stat fields after the command name: [0] state, [1] ppid,
    [2] process group, [3] session."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def _stdio(pid):
    """Where fds 0, 1, 2 of pid point (None: closed)."""
    out = []
    for fd in (0, 1, 2):
        try:
            out.append(os.readlink("/proc/%d/fd/%d" % (pid, fd)))
        except FileNotFoundError:
            out.append(None)
    return out


def _kill_tree(pid):
    """SIGKILL for pid and its children, whatever state they are in."""
    for q in [pid] + proc_children(pid):
        try:
            os.kill(q, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def daemon_pids():
    """Pids of daemons a test started: killed at teardown even when the test
    fails (a daemon is no child of ours, so nothing else would stop it)."""
    pids = []
    yield pids
    for pid in pids:
        if pid_alive(pid):
            _kill_tree(pid)


def test_daemon(docroot, tmp_path, daemon_pids):
    pf = tmp_path / "daemon.pid"
    err_path = tmp_path / "err"
    argv = [PITH_BIN, "--daemon", "--pidfile", str(pf), "--port", "0", "--addr", "127.0.0.1",
            "--workers", "1"] + (["--io", PITH_IO] if PITH_IO else []) + [docroot.root]
    t0 = time.monotonic()
    with open(tmp_path / "out", "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             preexec_fn=_limit_core)
    try:
        rc = p.wait(5)
    except subprocess.TimeoutExpired:
        _kill_tree(p.pid)
        p.wait()
        pytest.fail("pith --daemon did not return within 5 s")
    finally:
        # Learn the daemon's pid as early as possible, so that teardown
        # kills it whatever fails below.
        if pf.exists() and pf.read_text().strip().isdigit():
            daemon_pids.append(int(pf.read_text()))
    text = err_path.read_text(errors="replace")
    assert rc == 0, text
    assert time.monotonic() - t0 < 5
    _wait_file(pf)
    pid = int(pf.read_text().strip())
    if pid not in daemon_pids:
        daemon_pids.append(pid)
    assert pid != p.pid and pid_alive(pid)
    # The start line came before the detach (stderr is /dev/null after it),
    # with the port that --port 0 chose.
    lines = text.splitlines()
    assert len(lines) == 1 and START_RE.match(lines[0]), text
    port = int(START_RE.match(lines[0]).group(3))
    # Detached: its own session (it is the session leader), no terminal,
    # and stdin, stdout and stderr on /dev/null (or closed); the same for
    # its worker.
    # Its worker: forked by the master once it detached, so on a loaded
    # machine it may come a moment after the pidfile (CI saw none at once).
    deadline = time.monotonic() + 5
    while not workers_of(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workers_of(pid), "the daemon has no worker"
    st = _stat_fields(pid)
    assert int(st[3]) == pid, "the daemon does not lead a session of its own: %s" % st[:4]
    assert int(st[3]) != os.getsid(0)
    assert int(st[4]) == 0, "the daemon has a controlling terminal"
    for q in [pid] + workers_of(pid):
        assert int(_stat_fields(q)[3]) == pid
        for where in _stdio(q):
            assert where in (None, "/dev/null"), "pid %d has stdio on %s" % (q, _stdio(q))
    _serve_check(port, docroot)
    # A clean stop on SIGTERM: the master and its worker exit, and the
    # master removes the pidfile, which it does only at the end of an
    # orderly stop (the daemon is no child of ours: its exit status is not
    # ours to read).
    workers = workers_of(pid)
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while any(pid_alive(q) for q in [pid] + workers):
        assert time.monotonic() < deadline, "the daemon did not stop within 10 s of SIGTERM"
        time.sleep(0.05)
    assert not pf.exists(), "the daemon left its pidfile behind"
    assert not SANITIZER_RE.search(err_path.read_text(errors="replace"))


def workers_of(pid):
    return [q for q in proc_children(pid) if pid_alive(q)]


def test_quiet_prints_no_start_line(docroot, tmp_path):
    err = open(tmp_path / "err", "w+b")
    io = ["--io", PITH_IO] if PITH_IO else []
    argv = [PITH_BIN, "-q", "--port", "0", "--addr", "127.0.0.1", "--workers", "1"] + io
    p = subprocess.Popen(argv + [docroot.root], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                         preexec_fn=_limit_core)
    try:
        # No start line to read the port from: /proc shows the listener
        # (the master keeps its copy open).
        deadline = time.monotonic() + 5
        while not listening_ports(p.pid):
            assert p.poll() is None, "pith -q exited with %r" % p.returncode
            assert time.monotonic() < deadline, "pith -q is not listening after 5 s"
            time.sleep(0.02)
        (port,) = listening_ports(p.pid)
        _serve_check(port, docroot)
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
    if io:
        assert text == "", text  # (auto may say why it falls back to epoll)
    assert rc == 0


def _sanitized_build():
    with open(PITH_BIN, "rb") as f:
        return b"__asan_init" in f.read()


@pytest.mark.skipif(_sanitized_build(), reason="the ASan build cannot run under an address-space "
                    "limit (it reserves terabytes of shadow memory)")
def test_address_space_too_small_exits_2(docroot):
    """Every worker reserves its connection slots and small-file cache up
    front. Under an address-space limit too small for them, pith says so at
    start (exit 2, one line naming the flags) instead of starting workers
    that fail and are restarted forever."""
    limit = 1 << 30
    p = subprocess.run(["prlimit", "--as=%d" % limit, PITH_BIN, "--port", "0", "--addr",
                        "127.0.0.1", "--max-conns", "18000", "--cache-entries", "10",
                        docroot.root], capture_output=True, text=True, timeout=10)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pith: "), p.stderr
    assert "--max-conns" in lines[0] and "--cache-size" in lines[0], lines[0]
    assert "serving" not in p.stderr
    # The defaults fit the same limit.
    s = PithServer(docroot.root, env={"PITH_RESOLVE": None})
    s.argv = ["prlimit", "--as=%d" % limit] + s.argv
    s.start()
    try:
        r = fetch(s.port, "/index.html")
        assert r.status == 200
    finally:
        assert s.stop() == []
