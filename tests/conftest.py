# SPDX-License-Identifier: MIT
"""Fixtures for the black-box tests: the document root, and the real pith
binary started on an ephemeral port.

PITH_BIN selects the binary (default: <repo>/pith); the same suite runs
against the ASan+UBSan build (`PITH_BIN=<repo>/pith-asan`), so a server
stopped by a fixture fails the test when its stderr carries a sanitizer
report. No server process outlives its fixture.

A worker that dies while its master runs fails the test during which it died
(the master's "was killed by signal" line, or a known worker found dead);
a test that kills workers on purpose says so with allow_worker_crash=True.

Skips are never silent: PITH_IO=uring where io_uring cannot run stops the
pass with a failure unless PITH_ALLOW_NO_URING=1, and with PITH_CI=1 (set by
.ci/run) any skip that tests/skips_allowed.txt does not list fails the run.
"""

import collections
import fcntl
import fnmatch
import os
import re
import resource
import signal
import socket
import struct
import subprocess
import termios
import threading
import time
import uuid

import pytest

import http_raw

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PITH_BIN = os.environ.get("PITH_BIN") or os.path.join(REPO, "pith")
# The event loop every started server uses: "epoll", "uring" or unset (the
# server's own default, auto). `make test` runs the whole suite once per
# backend; where io_uring cannot run, the "uring" pass fails at once (with
# the reason) unless PITH_ALLOW_NO_URING=1 turns it into skips.
PITH_IO = os.environ.get("PITH_IO") or None
ALLOW_NO_URING = os.environ.get("PITH_ALLOW_NO_URING") == "1"
# Set by .ci/run: a skip that skips_allowed.txt does not list fails the run.
PITH_CI = os.environ.get("PITH_CI") == "1"
SKIPS_ALLOWED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "skips_allowed.txt")
VERSION = "0.1.0"
START_TIMEOUT = 10.0
# With HTTPS the TLS URL follows the plain one ("on http://H:P/ and
# https://H:P2/ (...)"), or stands alone with --tls-only; group 3 is always
# the first URL's port, groups 4 and 5 the TLS URL's host and port.
START_RE = re.compile(r"^pith \S+ serving (.*) on https?://(\S+):(\d+)/(?: and https://(\S+):(\d+)/)? "
                      r"\((\d+) workers?, ([^)]*)\)\s*$")
# PITH_TLS=1 (make test-tls): every server started by the fixtures also
# serves HTTPS with a throwaway certificate, its `port` is the TLS port, and
# http_raw's connections speak TLS, so the black-box files listed in the
# Makefile's TLS_TEST_FILES run unchanged over TLS. `http_port` keeps the
# plain one.
# PITH_H3=1 (make test-h3, below) implies it: HTTP/3 is on the TLS port.
PITH_TLS = os.environ.get("PITH_TLS") == "1" or os.environ.get("PITH_H3") == "1"
_TLS_PKI = None


def tls_pki():
    """The session's throwaway PKI (tests/tlscerts.py), made once."""
    global _TLS_PKI
    if _TLS_PKI is None:
        import atexit
        import shutil
        import tempfile

        import tlscerts

        d = tempfile.mkdtemp(prefix="pith-pki-")
        atexit.register(shutil.rmtree, d, True)
        _TLS_PKI = tlscerts.make_pki(d)
    return _TLS_PKI


if PITH_TLS:
    import ssl

    _ctx = ssl.create_default_context(cafile=tls_pki()["ca"])
    http_raw.TLS_CONTEXT = _ctx
# PITH_H2=1 (make test-h2): the fixture's request helpers (PithServer.get and
# .conn) speak HTTP/2 through tests/h2_adapter.py, TLS with ALPN h2 on the
# TLS port under PITH_TLS=1, h2c by prior knowledge on the plain port
# otherwise, and hand back http_raw.Response objects ("HTTP/2" their
# version), so the files in the Makefile's H2_TEST_FILES run unchanged over
# HTTP/2. What has no HTTP/2 form (raw bytes, other versions,
# connection-specific fields) raises h2_adapter.NotH2; a test of that kind
# carries @pytest.mark.h1_only("why") and skips in these passes.
PITH_H2 = os.environ.get("PITH_H2") == "1"
# PITH_H3=1 (make test-h3): the same over HTTP/3, through tests/h3_adapter.py
# (build/h3client, ngtcp2 and nghttp3 as a client) to the TLS port's UDP
# twin; what has no HTTP/3 form raises h3_adapter.NotH3, and the h1_only
# tests skip as they do for HTTP/2.
PITH_H3 = os.environ.get("PITH_H3") == "1"
SANITIZER_RE = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:")
# The master's line about a worker that died (src/process/master.c,
# report_exit): "worker 0 (pid 4242) was killed by signal 11; starting a new
# one in 1 s". A worker that exits with a status while its master runs is a
# death too.
WORKER_DEATH_RE = re.compile(
    r"worker (\d+) \(pid (\d+)\) (?:was killed by signal|exited with status)")

socket.setdefaulttimeout(15)

# pith-tiny (make test-tiny, or a PITH_BIN named pith-tiny*) leaves out what
# needs a library; a test of such a feature carries
# @pytest.mark.full_only("which feature") and is skipped for it, with that
# reason (listed once in skips_allowed.txt). The cross-built pith-tiny smoke
# (test_tiny_cross.py, qemu-user) runs only under `make test-cross`, the
# aarch64 one under a real arm64 kernel (test_tiny_arm64_kernel.py, one
# qemu-system-aarch64 boot) only under `make test-arm64-kernel`.
PITH_TINY = os.environ.get("PITH_TINY") == "1" or os.path.basename(PITH_BIN).startswith("pith-tiny")
# The router profile (make test-router, or a PITH_BIN named pith-router*,
# issue 21) has less still: every full_only test skips for it too, and a
# test of what pith-tiny has but the router lacks carries
# @pytest.mark.router_lacks("which feature"). It sends no sd_notify, so the
# harness does not wait for READY=1 (its workers accept on the listening
# socket bound before the start line, so connections made after it wait in
# the backlog).
PITH_ROUTER = (os.environ.get("PITH_ROUTER") == "1" or
               os.path.basename(PITH_BIN).startswith("pith-router"))
PITH_TINY = PITH_TINY or PITH_ROUTER
collect_ignore = [] if os.environ.get("PITH_CROSS") == "1" else ["test_tiny_cross.py"]
if os.environ.get("PITH_ARM64_KERNEL") != "1":
    collect_ignore.append("test_tiny_arm64_kernel.py")
if not PITH_TINY or PITH_ROUTER:
    collect_ignore.append("test_tiny_cli.py")
if not PITH_ROUTER:
    collect_ignore.append("test_router_cli.py")  # what only pith-router answers  # what only pith-tiny answers
    collect_ignore.append("test_router_regress_36.py")  # issue 36's router defects


def hook_bin():
    """The build under test with the test hooks (src/testhook/testhook.h):
    pith-asan has them, pith's twin is pith-testhook, pith-tiny's
    build/tiny/pith-tiny-testhook (the Makefile's test targets build them;
    neither is ever installed)."""
    name = os.path.basename(PITH_BIN)
    if "asan" in name:
        return PITH_BIN
    if PITH_TINY:
        return os.path.join(REPO, "build", "tiny", "pith-tiny-testhook")
    return os.path.join(os.path.dirname(PITH_BIN), "pith-testhook")


def pytest_configure(config):
    config.addinivalue_line("markers", "full_only(reason): needs a full-build feature that "
                            "pith-tiny leaves out (skipped for pith-tiny, with the reason)")
    config.addinivalue_line("markers", "router_lacks(reason): needs a feature the router "
                            "profile leaves out (skipped for pith-router, with the reason)")
    config.addinivalue_line("markers", "h1_only(reason): HTTP/1 by its nature (raw bytes, "
                            "versions, connection fields): skipped in the HTTP/2 passes "
                            "(PITH_H2=1) and the HTTP/3 passes (PITH_H3=1), with the reason")


def pytest_report_header(config):
    return "pith binary: %s; event loop: %s; protocol: %s" % (
        PITH_BIN, PITH_IO or "auto",
        "HTTP/3" if PITH_H3 else
        ("HTTP/2 over TLS" if PITH_TLS else "h2c") if PITH_H2 else
        "HTTP/1.1 over TLS" if PITH_TLS else "HTTP/1.1")


def _uring_unavailable():
    """Why `--io uring` cannot run here, or None when it can."""
    if PITH_IO != "uring" or not os.path.exists(PITH_BIN):
        return None
    p = subprocess.run([PITH_BIN, "--io", "uring", "--port", "0", "--addr", "127.0.0.1",
                        "--workers", "1", "--grace", "0", "/nonexistent-pith-probe"],
                       capture_output=True, text=True, timeout=10)
    m = re.search(r"io_uring cannot run here: (.*)", p.stderr)
    return m.group(1) if m else None


def uring_cannot_run(why):
    """Where io_uring cannot run, a test (or the whole uring pass) fails;
    PITH_ALLOW_NO_URING=1 makes it a skip instead. CI never sets it."""
    msg = "io_uring cannot run on this machine: %s" % why
    if ALLOW_NO_URING:
        pytest.skip(msg + " (PITH_ALLOW_NO_URING=1)")
    pytest.fail(msg + " (set PITH_ALLOW_NO_URING=1 to skip instead)", pytrace=False)


def pytest_collection_modifyitems(config, items):
    if PITH_TINY:
        for item in items:
            m = item.get_closest_marker("full_only")
            if m:
                item.add_marker(pytest.mark.skip(reason="pith-tiny: full build only: %s"
                                                 % (m.args[0] if m.args else "?")))
    if PITH_ROUTER:
        for item in items:
            m = item.get_closest_marker("router_lacks")
            if m and not item.get_closest_marker("full_only"):
                item.add_marker(pytest.mark.skip(reason="pith-router: not in the router "
                                                 "profile: %s" % (m.args[0] if m.args else "?")))
    if PITH_H2 or PITH_H3:
        for item in items:
            m = item.get_closest_marker("h1_only")
            if m:
                item.add_marker(pytest.mark.skip(reason="HTTP/%d pass: HTTP/1 only: %s"
                                                 % (3 if PITH_H3 else 2,
                                                    m.args[0] if m.args else "?")))
    why = _uring_unavailable()
    if not why:
        return
    if not ALLOW_NO_URING:
        # Not 700 skips and "passed": the pass that was asked for cannot run.
        pytest.exit("PITH_IO=uring, but io_uring cannot run on this machine: %s\n"
                    "(set PITH_ALLOW_NO_URING=1 to turn the pass into skips)" % why,
                    returncode=1)
    skip = pytest.mark.skip(reason="io_uring cannot run on this machine: %s "
                            "(PITH_ALLOW_NO_URING=1)" % why)
    for item in items:
        item.add_marker(skip)


# -- skips are reported, and in CI only the listed ones pass ---------------------------

def _skips_allowed():
    """[(test id pattern, reason pattern, why)] from skips_allowed.txt."""
    out = []
    with open(SKIPS_ALLOWED) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [x.strip() for x in line.split("|")]
            if len(parts) != 3 or not all(parts):
                raise pytest.UsageError("%s:%d: want 'test id | reason | why', got %r"
                                        % (SKIPS_ALLOWED, n, line))
            out.append(tuple(parts))
    return out


_SKIPS = []  # (test or module id, reason) of every skip in this session


def _skip_reason(rep):
    if isinstance(rep.longrepr, tuple) and len(rep.longrepr) == 3:
        reason = str(rep.longrepr[2])
    else:
        reason = str(rep.longrepr)
    return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPS.append((report.nodeid, _skip_reason(report)))


def pytest_collectreport(report):
    # A module skipped as a whole (pytest.importorskip, a module-level skip).
    if report.skipped:
        _SKIPS.append((report.nodeid, _skip_reason(report)))


def unexpected_skips():
    allowed = _skips_allowed()

    def listed(nodeid, reason):
        # Test ids are relative to tests/, whichever rootdir pytest chose.
        nodeid = nodeid[len("tests/"):] if nodeid.startswith("tests/") else nodeid
        return any(fnmatch.fnmatchcase(nodeid, t) and fnmatch.fnmatchcase(reason, r)
                   for t, r, _ in allowed)
    return [(nodeid, reason) for nodeid, reason in _SKIPS if not listed(nodeid, reason)]


def pytest_sessionfinish(session, exitstatus):
    if PITH_CI and unexpected_skips() and session.exitstatus in (0, 5):
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not PITH_CI:
        return
    bad = unexpected_skips()
    tr = terminalreporter
    if bad:
        tr.section("skips not in tests/skips_allowed.txt (PITH_CI=1: the run fails)", red=True)
        for nodeid, reason in bad:
            tr.line("SKIPPED %s: %s" % (nodeid, reason), red=True)
    else:
        tr.line("PITH_CI=1: %d skip(s), all listed in tests/skips_allowed.txt" % len(_SKIPS))


def _limit_core():
    # A worker killed on purpose must not leave a core file in the tree.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def proc_children(pid):
    """Pids of the direct children of pid (the workers of a master)."""
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        pass
    return sorted(set(out))


def pid_alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def cpu_seconds(pid):
    """utime + stime of pid in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def fd_links(pid):
    """What pid's descriptors point at, sorted: the diagnosis when a count
    does not come back."""
    out = []
    for f in os.listdir("/proc/%d/fd" % pid):
        try:
            out.append(os.readlink("/proc/%d/fd/%s" % (pid, f)))
        except OSError:
            pass  # closed meanwhile
    return sorted(out)


def socket_inodes(pid):
    """Inodes of the sockets that pid holds open (none once it has exited:
    a worker listed a moment ago may be gone by now)."""
    out = set()
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except FileNotFoundError:
        return out
    for f in fds:
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, f))
        except OSError:
            continue  # closed meanwhile
        if link.startswith("socket:["):
            out.add(int(link[8:-1]))
    return out


TCP_LISTEN = 0x0A


def tcp_sockets(pid):
    """inode -> (local port, remote port, state) for every TCP socket in
    pid's network namespace (/proc/<pid>/net/tcp and tcp6)."""
    out = {}
    for name in ("tcp", "tcp6"):
        try:
            with open("/proc/%d/net/%s" % (pid, name)) as f:
                rows = f.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for row in rows:
            x = row.split()
            out[int(x[9])] = (int(x[1].rsplit(":", 1)[1], 16), int(x[2].rsplit(":", 1)[1], 16),
                              int(x[3], 16))
    return out


def tcp_conns(pid):
    """(local port, remote port) of the TCP connections (anything but a
    listener) that pid holds open."""
    table = tcp_sockets(pid)
    return sorted(table[i][:2] for i in socket_inodes(pid)
                  if i in table and table[i][2] != TCP_LISTEN)


def listening_ports(pid):
    """Ports of the TCP listeners that pid holds open."""
    table = tcp_sockets(pid)
    return sorted({table[i][0] for i in socket_inodes(pid)
                   if i in table and table[i][2] == TCP_LISTEN})


def port_listeners(port):
    """pid -> number of TCP listeners on port that the process holds, for
    every process here: the diagnosis when connections to a server go
    unanswered (a listener of someone else's in its SO_REUSEPORT group, or
    one nobody accepts on)."""
    table = tcp_sockets(os.getpid())  # the tests and the servers share a namespace
    ours = {i for i, (lport, _, state) in table.items() if lport == port and state == TCP_LISTEN}
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            n = len(socket_inodes(int(pid)) & ours)
        except OSError:
            continue
        if n:
            out[int(pid)] = n
    return out


def unix_socket_inodes(pid):
    """Inodes of every Unix socket in pid's network namespace."""
    try:
        with open("/proc/%d/net/unix" % pid) as f:
            return {int(row.split()[6]) for row in f.read().splitlines()[1:]}
    except FileNotFoundError:
        return set()


def udp_socket_inodes(pid):
    """Inodes of every UDP socket in pid's network namespace: HTTP/3's
    (issue 34), one per worker on the TLS port, never a TCP connection."""
    out = set()
    for name in ("udp", "udp6"):
        try:
            with open("/proc/%d/net/%s" % (pid, name)) as f:
                out |= {int(row.split()[9]) for row in f.read().splitlines()[1:]}
        except FileNotFoundError:
            continue
    return out


def closing_sockets(pid):
    """Sockets pid holds that are neither a TCP listener nor a Unix socket:
    a TCP connection the kernel has already closed (after the peer's RST it
    is in no table of /proc/net/tcp) while pid has not closed its
    descriptor yet. A worker that is about to close it (a lingering close
    waking on the error) reads as one descriptor too many if it is counted
    then (it did, twice, in CI's ASan pass)."""
    table = tcp_sockets(pid)
    listeners = {i for i, (_, _, state) in table.items() if state == TCP_LISTEN}
    return socket_inodes(pid) - listeners - unix_socket_inodes(pid) - udp_socket_inodes(pid)


def settled_fd_count(pid, timeout=5.0):
    """pid's descriptor count once it holds no TCP connection any more, not
    even one the kernel has closed under it. Closes are not instant
    (io_uring completes them later; a lingering close may wait 2 s for the
    client), so poll to a deadline instead of sampling after a fixed sleep;
    fails the test if connections remain."""
    deadline = time.monotonic() + timeout
    while True:
        conns = tcp_conns(pid) or sorted(closing_sockets(pid))
        if not conns:
            return fd_count(pid)
        if time.monotonic() > deadline:
            pytest.fail("pid %d still holds TCP connections %s after %.0f s"
                        % (pid, conns, timeout))
        time.sleep(0.05)


class _Readiness(threading.Thread):
    """The NOTIFY_SOCKET the harness gives each server it starts (an abstract
    name): the master says READY=1 once every worker has reported that it
    serves, so a test starts against workers in their loops, not ones still
    setting up (a descriptor count or a /proc read taken then would see a
    half-built worker). Reads every message until stop(), so that later
    ones (RELOADING=1, STOPPING=1) never fill the socket's small queue."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        name = "pith-harness-%d-%s" % (os.getpid(), uuid.uuid4().hex)
        self.addr = "\0" + name
        self.sock.bind(self.addr)
        self.env = "@" + name
        self.ready = threading.Event()
        self.stopped = False

    def run(self):
        while True:
            try:
                data = self.sock.recv(4096)
            except OSError:
                break
            if self.stopped:
                break
            if b"READY=1" in data.split(b"\n"):
                self.ready.set()
        self.sock.close()

    def stop(self):
        """Ends the thread at once: a datagram to itself wakes its recv."""
        self.stopped = True
        try:
            self.sock.sendto(b"", self.addr)
        except OSError:
            pass  # the thread has closed the socket already
        self.join(2.0)


class _Reader(threading.Thread):
    """Collects one output pipe of the server, line by line."""

    def __init__(self, pipe):
        super().__init__(daemon=True)
        self.pipe = pipe
        self.lines = []
        self.cond = threading.Condition()

    def run(self):
        for line in iter(self.pipe.readline, b""):
            with self.cond:
                self.lines.append(line.decode("utf-8", "replace"))
                self.cond.notify_all()
        with self.cond:
            self.done = True
            self.cond.notify_all()

    def text(self):
        with self.cond:
            return "".join(self.lines)

    def settle(self, timeout=1.0):
        """Waits until what the server has written so far is collected: the
        pipe empty (FIONREAD), then a moment for this thread to file what it
        read last. A test that reads stderr right after seeing an effect
        elsewhere (a counter, a closed socket) otherwise races this thread
        (CI's clean runs lost three such races)."""
        if getattr(self, "done", False):
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                left = struct.unpack("i", fcntl.ioctl(self.pipe.fileno(), termios.FIONREAD,
                                                      b"\0\0\0\0"))[0]
            except (OSError, ValueError):
                return  # the pipe is closed: everything is in
            if left == 0:
                break
            time.sleep(0.005)
        time.sleep(0.005)

    def wait_for(self, pred, timeout):
        """Waits until pred(text) is true; returns the text or None on timeout."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                t = "".join(self.lines)
                if pred(t):
                    return t
                left = deadline - time.monotonic()
                if left <= 0 or getattr(self, "done", False):
                    return None
                self.cond.wait(min(left, 0.2))


class PithServer:
    """One pith process tree started on an ephemeral port."""

    def __init__(self, root, args=(), env=None, addr="127.0.0.1", workers=1, port="0",
                 allow_sanitizer=None, stdout_pipe=False, cwd=None, allow_worker_crash=False,
                 await_ready=True, binary=None):
        self.root = None if root is None else str(root)  # None: no ROOT argument
        self.args = list(args)
        self.allow_sanitizer = allow_sanitizer
        # True for a test that kills workers on purpose; otherwise any worker
        # death fails the test.
        self.allow_worker_crash = allow_worker_crash
        # binary: another build of the same sources (test_sandbox.py's test
        # hook builds); PITH_BIN unless given.
        self.binary = binary or PITH_BIN  # argv[0] may be a wrapper (prlimit)
        self.argv = [self.binary, "--port", str(port)]
        if addr is not None:
            self.argv += ["--addr", addr]
        if workers is not None:
            self.argv += ["--workers", str(workers)]
        if PITH_IO:
            self.argv += ["--io", PITH_IO]
        if PITH_TLS and "--tls-cert" not in self.args:
            cert, key = tls_pki()["ecdsa"]
            self.argv += ["--tls-cert", cert, "--tls-key", key, "--tls-port", "0"]
        self.argv += self.args + ([self.root] if self.root is not None else [])
        self.env = dict(os.environ)
        self.env.pop("PITH_RESOLVE", None)
        self.env.pop("NOTIFY_SOCKET", None)
        # Wait for READY=1 unless the test listens itself, its workers may
        # die before they report, or it times their start (await_ready=False).
        self.await_ready = (await_ready and not allow_worker_crash and not PITH_ROUTER and
                            "NOTIFY_SOCKET" not in (env or {}))
        self.readiness = None
        if env:
            for k, v in env.items():
                if v is None:
                    self.env.pop(k, None)
                else:
                    self.env[k] = v
        self.addr = addr or "127.0.0.1"
        self.stdout_pipe = stdout_pipe
        self.cwd = cwd
        self.proc = None
        self.port = None
        self.http_port = None  # the plain port (None with --tls-only)
        self.tls_port = None  # the HTTPS port (None without HTTPS)
        self.start_line = None
        self.exit_code = None
        self.known_workers = set()
        self.stopping = False  # the test (or stop()) asked the master to exit
        self._deaths_seen = set()  # worker pids already blamed on a test
        self._sanitizer_seen = 0  # sanitizer lines already blamed on a test

    # -- life cycle ------------------------------------------------------------------
    def start(self):
        if not os.path.exists(self.binary):
            pytest.fail("pith binary not found at %s (build it: make -C %s %s)"
                        % (self.binary, REPO, os.path.relpath(self.binary, REPO)))
        if self.await_ready:
            self.readiness = _Readiness()
            self.readiness.start()
            self.env["NOTIFY_SOCKET"] = self.readiness.env
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if self.stdout_pipe else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
            preexec_fn=_limit_core,
        )
        self.pid = self.proc.pid
        _LIVE.append(self)
        self.err = _Reader(self.proc.stderr)
        self.err.start()
        self.out = None
        if self.stdout_pipe:
            self.out = _Reader(self.proc.stdout)
            self.out.start()
        text = self.err.wait_for(lambda t: any(START_RE.match(l) for l in t.splitlines()),
                                 START_TIMEOUT)
        if text is None:
            rc = self.proc.poll()
            self.stopping = True
            self._kill_all()
            self._stop_readiness()
            pytest.fail(
                "pith did not print its start line within %.0f s (exit status %r)\nargv: %s\n"
                "stderr:\n%s" % (START_TIMEOUT, rc, " ".join(self.argv), self.err.text())
            )
        for line in text.splitlines():
            m = START_RE.match(line)
            if m:
                self.start_line = line
                self.port = int(m.group(3))
                tls_only = " on https://" in line
                self.http_port = None if tls_only else self.port
                self.tls_port = int(m.group(5)) if m.group(5) else self.port if tls_only else None
                if PITH_TLS and self.tls_port and "--tls-cert" not in self.args:
                    self.port = self.tls_port
                break
        self._wait_ready()
        self.wait_workers(1, timeout=2.0)
        return self

    def _wait_ready(self):
        if self.readiness is None:
            return
        deadline = time.monotonic() + START_TIMEOUT
        while not self.readiness.ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                rc = self.proc.poll()
                self.stopping = True
                self._kill_all()
                self._stop_readiness()
                pytest.fail("pith printed its start line but its workers did not all report "
                            "ready (READY=1) within %.0f s (exit status %r)\nargv: %s\n"
                            "stderr:\n%s" % (START_TIMEOUT, rc, " ".join(self.argv),
                                              self.err.text()))

    def _stop_readiness(self):
        if self.readiness is not None:
            self.readiness.stop()
            self.readiness = None

    def wait_workers(self, n, timeout=5.0, exclude=()):
        """Waits until the master has at least n children not in exclude."""
        deadline = time.monotonic() + timeout
        while True:
            w = [p for p in self.workers() if p not in exclude]
            if len(w) >= n or time.monotonic() > deadline:
                return w
            time.sleep(0.02)

    def workers(self):
        w = [p for p in proc_children(self.pid) if pid_alive(p)]
        self.known_workers.update(w)
        return w

    def worker(self):
        w = self.wait_workers(1)
        assert w, "the master has no worker process"
        return w[0]

    def stderr_text(self):
        self.err.settle()
        return self.err.text()

    def stderr_at_exit(self, timeout=10):
        """All of stderr once the process tree has exited: the reader thread
        may not yet have collected the last lines (a worker's exit line) when
        wait_exit returns, so this waits for the pipe's end."""
        self.err.join(timeout)
        return self.err.text()

    def signal(self, sig):
        if sig in (signal.SIGTERM, signal.SIGINT):
            self.stopping = True
        os.kill(self.pid, sig)

    def worker_deaths(self):
        """Worker deaths not reported before: the master's lines about them,
        and known workers found dead while the master runs and was not asked
        to stop (their line may not have arrived yet)."""
        out = []
        for line in self.err.text().splitlines():
            m = WORKER_DEATH_RE.search(line)
            if m and int(m.group(2)) not in self._deaths_seen:
                self._deaths_seen.add(int(m.group(2)))
                out.append("the master said: " + line.strip())
        if self.proc is not None and self.proc.poll() is None and not self.stopping:
            for p in sorted(self.known_workers - self._deaths_seen):
                if not pid_alive(p):
                    self._deaths_seen.add(p)
                    out.append("worker pid %d is gone (the master runs and was not stopped)" % p)
        return out

    def new_sanitizer_lines(self):
        """Sanitizer report lines not reported before (allow_sanitizer aside)."""
        lines = [l for l in self.err.text().splitlines() if SANITIZER_RE.search(l)]
        if self.allow_sanitizer:
            lines = [l for l in lines if not re.search(self.allow_sanitizer, l)]
        new, self._sanitizer_seen = lines[self._sanitizer_seen:], len(lines)
        return new

    def describe(self):
        return "pith pid %s (%s)" % (self.pid, " ".join(self.argv[1:]))

    def wait_exit(self, timeout):
        """Exit status, or None if the master is still running after timeout."""
        try:
            self.exit_code = self.proc.wait(timeout)
            return self.exit_code
        except subprocess.TimeoutExpired:
            return None

    def _kill_all(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for p in self.known_workers:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def stop(self, grace=10.0):
        """SIGTERM, wait, then SIGKILL. Returns a list of problems found (a
        worker that died, a sanitizer report, workers that outlived the
        master, a hung master, a master that did not exit 0 on SIGTERM)."""
        problems = []
        if self.proc is None:
            return problems
        self.workers()
        # Before SIGTERM: a worker gone now died on its own.
        deaths = self.worker_deaths()
        if self.proc.poll() is None:
            self.stopping = True
            self.proc.send_signal(signal.SIGTERM)
            rc = self.wait_exit(grace)
            if rc is None:
                problems.append("master did not exit within %.0f s of SIGTERM" % grace)
                self._kill_all()
            elif rc != 0:
                problems.append("master exited with status %r after SIGTERM" % rc)
        elif not self.stopping:
            problems.append("master exited on its own with status %r" % self.proc.returncode)
        # Workers must follow the master out.
        deadline = time.monotonic() + 3.0
        while any(pid_alive(p) for p in self.known_workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [p for p in self.known_workers if pid_alive(p)]
        if left:
            problems.append("workers %s still alive after the master exited" % left)
        self._kill_all()
        self._stop_readiness()
        self.err.join(3.0)
        if self.out is not None:
            self.out.join(3.0)
        if self in _LIVE:
            _LIVE.remove(self)
        text = self.err.text()
        # Lines that arrived while stopping count too (the master logs a
        # death it reaped before the SIGTERM).
        deaths += self.worker_deaths()
        if deaths and not self.allow_worker_crash:
            problems.append("worker died:\n  %s\nstderr:\n%s" % ("\n  ".join(deaths),
                                                                 _tail(text, 30)))
        if self.new_sanitizer_lines():
            problems.append("sanitizer report on stderr:\n" + _tail(text, 60))
        self.proc = None
        return problems

    # -- client helpers -------------------------------------------------------------
    def conn(self, **kw):
        """A client connection: http_raw.Conn, or under PITH_H2=1 an HTTP/2
        one with the same request interface (tests/h2_adapter.py), under
        PITH_H3=1 an HTTP/3 one (tests/h3_adapter.py)."""
        host = self.addr if self.addr not in ("::", "0.0.0.0") else "127.0.0.1"
        if PITH_H3:
            import h3_adapter

            if os.environ.get("PITH_H3_DIFF") == "1":
                h3_adapter.DIFF = lambda m, t, h, hs: http_raw.fetch(
                    self.port, t, m, h, "HTTP/1.1", hs, host)
            kw.pop("family", None)
            kw.pop("rcvbuf", None)
            return h3_adapter.Conn(self.port, host, tls=tls_pki()["ca"], **kw)
        if PITH_H2:
            import h2_adapter

            if os.environ.get("PITH_H2_DIFF") == "1":
                h2_adapter.DIFF = lambda m, t, h, hs: http_raw.fetch(
                    self.port, t, m, h, "HTTP/1.1", hs, host)
            kw.pop("family", None)
            return h2_adapter.Conn(self.port, host, tls=tls_pki()["ca"] if PITH_TLS else None,
                                   **kw)
        return http_raw.Conn(self.port, host, **kw)

    def get(self, target="/", method="GET", headers=None, version="HTTP/1.1", host="localhost"):
        with self.conn() as c:
            return c.exchange(method, target, headers, version, host)

    def raw(self, data, method="GET", close_wait=5.0):
        if PITH_H3:
            import h3_adapter

            raise h3_adapter.NotH3("raw bytes (server.raw)")
        if PITH_H2:
            import h2_adapter

            raise h2_adapter.NotH2("raw bytes (server.raw)")
        return http_raw.raw(self.port, data, self.addr, method, close_wait)


def _tail(text, n):
    return "\n".join(text.splitlines()[-n:])


# Servers started and not yet stopped, whatever fixture (or test) owns them.
_LIVE = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A worker that died, or a sanitizer report, during a test fails that
    test, even where the server belongs to a module-scoped fixture and is
    stopped only after the module's last test."""
    outcome = yield
    rep = outcome.get_result()
    if rep.when != "call":
        return
    found = []
    for s in list(_LIVE):
        if s.proc is None:
            continue
        deaths = s.worker_deaths()
        if deaths and not s.allow_worker_crash:
            found.append("%s: worker died:\n  %s" % (s.describe(), "\n  ".join(deaths)))
        san = s.new_sanitizer_lines()
        if san:
            found.append("%s: sanitizer report:\n%s" % (s.describe(), _tail(s.err.text(), 60)))
    if not found:
        return
    msg = "\n".join(found)
    if rep.passed:
        rep.outcome = "failed"
        rep.longrepr = msg
    else:
        rep.sections.append(("pith", msg))


class ServerSet:
    """Starts servers and stops all of them, reporting problems at the end."""

    def __init__(self, docroot):
        self.docroot = docroot
        self.servers = []

    def __call__(self, *args, root=None, **kw):
        """root=False starts pith without a ROOT argument (its --site or
        --config then says what to serve)."""
        s = PithServer(None if root is False else root if root is not None else self.docroot.root,
                       args, **kw)
        self.servers.append(s)
        return s.start()

    def finish(self):
        problems = []
        for s in self.servers:
            problems += s.stop()
        self.servers = []
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)


# -- the document root -------------------------------------------------------------

MIME_FILES = {
    # extension -> acceptable Content-Type values (compared after normalizing
    # case and the space after ';')
    "html": ["text/html; charset=utf-8"],
    "css": ["text/css; charset=utf-8"],
    "js": ["text/javascript; charset=utf-8"],
    "mjs": ["text/javascript; charset=utf-8"],
    "json": ["application/json; charset=utf-8"],
    "wasm": ["application/wasm"],
    "svg": ["image/svg+xml; charset=utf-8"],
    "png": ["image/png"],
    "jpg": ["image/jpeg"],
    "jpeg": ["image/jpeg"],
    "webp": ["image/webp"],
    "avif": ["image/avif"],
    "gif": ["image/gif"],
    "ico": ["image/x-icon", "image/vnd.microsoft.icon"],
    "woff": ["font/woff"],
    "woff2": ["font/woff2"],
    "ttf": ["font/ttf"],
    "otf": ["font/otf"],
    "mp4": ["video/mp4"],
    "webm": ["video/webm"],
    "mp3": ["audio/mpeg"],
    "ogg": ["audio/ogg", "application/ogg"],
    "pdf": ["application/pdf"],
    "txt": ["text/plain; charset=utf-8"],
    "xml": ["application/xml; charset=utf-8", "text/xml; charset=utf-8"],
    "md": ["text/markdown; charset=utf-8"],
    "csv": ["text/csv; charset=utf-8"],
    "zip": ["application/zip"],
    "gz": ["application/gzip"],
    "tar": ["application/x-tar"],
    "map": ["application/json; charset=utf-8"],
    "webmanifest": ["application/manifest+json; charset=utf-8"],
}

# Names in noindex/ that a listing must show, escaped.
LISTED_NAMES = [
    "a.txt",
    "b.txt",
    "<script>.txt",
    '"><svg onload=alert(1)>',
    "a&b",
    "%2e%2e",
    "#x",
    "?x",
    "it's.txt",
    "héllo wörld.txt",
]


class DocRoot:
    def __init__(self, base):
        self.base = str(base)
        self.root = os.path.join(self.base, "root")
        self.outside = os.path.join(self.base, "outside")
        self.canary = ("CANARY-" + uuid.uuid4().hex).encode()
        self.files = {}

    def path(self, rel):
        return os.path.join(self.root, rel)

    def write(self, rel, data, mtime=None):
        p = self.path(rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        if mtime is not None:
            os.utime(p, (mtime, mtime))
        self.files[rel] = data
        return p

    def mkdir(self, rel):
        os.makedirs(self.path(rel), exist_ok=True)

    def symlink(self, rel, target):
        os.symlink(target, self.path(rel))


HUGE_SIZE = 32 * 1024 * 1024
FIXED_MTIME = 1700000000  # Tue, 14 Nov 2023 22:13:20 GMT


def build_docroot(base):
    d = DocRoot(base)
    os.makedirs(d.root)
    os.makedirs(d.outside)
    with open(os.path.join(d.outside, "canary.txt"), "wb") as f:
        f.write(d.canary + b"\n")
    with open(os.path.join(d.outside, "x"), "wb") as f:
        f.write(d.canary + b" x\n")

    d.write("index.html", b"<!doctype html><title>pith test</title><p>root index</p>\n",
            mtime=FIXED_MTIME)
    d.write("style.css", b"body { color: #123; }\n")
    d.write("app.js", b"console.log('pith');\n")
    d.write("data.json", b'{"pith": true}\n')
    d.write("image.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    d.write("empty.txt", b"")
    d.write("1k.bin", bytes((i * 7) & 0xFF for i in range(1024)))
    d.write("big.bin", os.urandom(3 * 1024 * 1024))
    # A sparse file larger than any socket buffer, so that a response to a
    # client that does not read stays in flight inside the server.
    with open(d.path("huge.bin"), "wb") as f:
        f.truncate(HUGE_SIZE)
    d.write("sub/index.html", b"<p>sub index</p>\n")
    d.write("sub/page.txt", b"sub page\n")
    d.write("sub/deeper/file.txt", b"deeper file\n")
    d.write("sub/.htpasswd", b"admin:$apr1$SECRET-htpasswd\n")
    d.write("dir with space/file.txt", b"file in a dir with a space\n")
    d.write("noindex/a.txt", b"a\n")
    d.write("noindex/b.txt", b"b\n")
    for name in LISTED_NAMES[2:]:
        d.write("noindex/" + name, b"hostile name\n")
    d.write("noindex/.dotfile", b"dotfile in noindex\n")
    d.mkdir("noindex/child")
    d.symlink("noindex/out_link", "../../outside/canary.txt")
    d.symlink("noindex/out_dirlink", "../../outside")
    d.write(".hidden", b"SECRET-hidden\n")
    d.write(".git/config", b"[core]\n\tSECRET-gitconfig\n")
    d.write(".env", b"SECRET_ENV=1\n")
    d.write(".well-known/acme-challenge/x", b"acme-token-x\n")
    d.write(".well-known/.secret", b"SECRET-well-known\n")
    d.symlink("link_in", "index.html")
    d.symlink("dirlink_in", "sub")
    d.symlink("link_out", "../outside/canary.txt")
    d.symlink("dirlink_out", "../outside")
    d.symlink("dangling", "does-not-exist")
    os.mkfifo(d.path("fifo"))
    us = socket.socket(socket.AF_UNIX)
    try:
        us.bind(d.path("sock"))  # a socket file stays behind: another special file
    except OSError:
        pass
    us.close()
    # Directories for Location tests.
    d.write('pct%dir"q/f.txt', b"pct\n")
    d.write("evil.example/f.txt", b"evil\n")
    d.write("\\evil.example/f.txt", b"backslash evil\n")
    d.write("crlf\r\nX-Injected: yes/f.txt", b"crlf\n")
    d.write("déjà/f.txt", b"utf8 dir\n")
    # --index other.html
    d.write("alt/other.html", b"<p>alt other index</p>\n")
    d.write("alt/index.html", b"<p>alt index.html</p>\n")
    # A literal name that looks like an escaped "..".
    d.write("%2e%2e/x", b"literal percent-two-e dir\n")
    # MIME
    for ext in MIME_FILES:
        d.write("mime/f." + ext, b"mime " + ext.encode() + b"\n")
    d.write("mime/FILE.PNG", b"upper-case png\n")
    d.write("mime/noext", b"no extension\n")
    d.write("mime/f.unknownext", b"unknown extension\n")
    d.write("mime/archive.tar.gz", b"tar.gz\n")
    return d


@pytest.fixture(scope="session")
def docroot(tmp_path_factory):
    d = build_docroot(tmp_path_factory.mktemp("pith"))
    http_raw.CANARY = d.canary
    return d


@pytest.fixture
def pith(docroot):
    """Function-scoped factory: pith(*flags, root=..., env=..., workers=...)."""
    s = ServerSet(docroot)
    yield s
    s.finish()


@pytest.fixture(scope="module")
def pith_module(docroot):
    """Module-scoped factory for servers whose state the tests do not change."""
    s = ServerSet(docroot)
    yield s
    s.finish()


@pytest.fixture(scope="module")
def server(pith_module):
    """A default server: one worker, 127.0.0.1, every flag at its default."""
    return pith_module()


RESOLVERS = ["openat2", "walk"]


def resolver_env(name):
    return {"PITH_RESOLVE": "walk"} if name == "walk" else {"PITH_RESOLVE": None}


@pytest.fixture(scope="module", params=RESOLVERS)
def resolver_server(request, pith_module):
    """A default server for each resolver (openat2, and the component walk)."""
    s = pith_module(env=resolver_env(request.param))
    s.resolver = request.param
    return s


def run_pith(*args, timeout=10.0, env=None):
    """Runs the binary directly (CLI tests); returns CompletedProcess with
    text stdout/stderr. Fails the test if it does not exit in time."""
    if not os.path.exists(PITH_BIN):
        pytest.fail("pith binary not found at %s" % PITH_BIN)
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.Popen([PITH_BIN] + [str(a) for a in args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e,
                         start_new_session=True, preexec_fn=_limit_core)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        workers = proc_children(p.pid)
        os.killpg(p.pid, signal.SIGKILL)
        for w in workers:
            try:
                os.kill(w, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out, err = p.communicate()
        pytest.fail("pith %s did not exit within %.0f s\nstderr:\n%s"
                    % (" ".join(map(str, args)), timeout, err.decode("utf-8", "replace")))
    if SANITIZER_RE.search(err.decode("utf-8", "replace")):
        pytest.fail("sanitizer report:\n" + err.decode("utf-8", "replace"))
    return subprocess.CompletedProcess(p.args, p.returncode, out.decode("utf-8", "replace"),
                                       err.decode("utf-8", "replace"))


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


# The ports free_port gave this process lately: a test that asks for several
# at once (before binding any) must get different ones.
_HANDED_OUT = collections.deque(maxlen=256)


def free_port(family=socket.AF_INET, addr="127.0.0.1"):
    """A free port for a test that must name it before pith binds it (else
    start pith with --port 0 and read PithServer.port, or listening_ports).

    Never one the kernel hands out: the port comes from below the ephemeral
    range (ip_local_port_range), where no autobind lands (a server started
    with --port 0, a client's connect), and from a slice of its own for each
    pytest-xdist worker. Every pith listener sets SO_REUSEPORT, and the
    tests run as one user: an explicit bind to a port that another test's
    server had been given would join that server's reuseport group and take
    a share of its connections. Random within the slice, so a port used a
    moment ago (TIME_WAIT) is not picked again at once; checked free by a
    bind of its own."""
    low, high = 10000, max(_ephemeral_low(), 10000 + 1024)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:] or 0)
    width = (high - low) // max(workers, 1)
    first = low + worker * width
    for _ in range(200):
        port = first + int.from_bytes(os.urandom(4), "little") % width
        if port in _HANDED_OUT:
            continue
        s = socket.socket(family)
        try:
            s.bind((addr, port))
            _HANDED_OUT.append(port)
            return port
        except OSError:
            continue
        finally:
            s.close()
    pytest.fail("no free port in %d..%d after 200 tries" % (first, first + width - 1))


def ipv6_available():
    if not socket.has_ipv6:
        return False
    try:
        s = socket.socket(socket.AF_INET6)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False
