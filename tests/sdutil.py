# SPDX-License-Identifier: MIT
"""Helpers for the systemd and upgrade tests: start pith the way systemd
does (sockets at descriptors 3.., LISTEN_FDS, LISTEN_PID = the pid that
execs pith, LISTEN_FDNAMES), listen on a NOTIFY_SOCKET (a path or an
abstract name) and read what pith says there. No systemd is needed."""

import os
import re
import signal
import socket
import tempfile
import time

from conftest import PITH_BIN, PITH_IO, SANITIZER_RE, WORKER_DEATH_RE, pid_alive, proc_children
from gaputil import proc_status

START_LINE_RE = re.compile(r"pith \S+ serving (\S+) on (\S+) \((\d+) workers?, ([^)]*)\)")


def assert_clean_stderr(text):
    """What the harness checks of every server it starts (conftest.py),
    for the masters a test starts itself: no sanitizer report, and no
    worker that died while its master ran (the master's line about it)."""
    bad = [l for l in text.splitlines() if SANITIZER_RE.search(l) or WORKER_DEATH_RE.search(l)]
    assert not bad, "pith's stderr:\n  %s\n\nall of it:\n%s" % ("\n  ".join(bad), text[-6000:])


def assert_all_workers_serve(master, n, text=""):
    """Right after a READY=1: the master has n workers, each past its
    setup (confined: NoNewPrivs 1, Seccomp 2, its last step before it
    serves). No polling: with the test build's PITH_TEST_SETUP_DELAY_MS
    (src/testhook/testhook.h) a READY=1 sent before the workers serve
    fails here. Returns their pids."""
    kids = [k for k in proc_children(master) if pid_alive(k)]
    assert len(kids) == n, (kids, text)
    for k in kids:
        st = proc_status(k)
        assert st["NoNewPrivs"] == ["1"] and st["Seccomp"] == ["2"], \
            "READY=1 came before worker %d served: %s" % (
                k, {x: st[x] for x in ("NoNewPrivs", "Seccomp")})
    return kids


# How long the test build's workers linger at the end of their setup.
SETUP_DELAY_MS = 400


def wait_until(pred, timeout=15.0, what="condition"):
    """Polls pred until it is true (its value is returned); fails at the
    deadline, naming what it waited for."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.02)


def read_pid(path):
    """The pid in a pidfile, or None while there is none (or half of one)."""
    try:
        return int(open(path).read())
    except (FileNotFoundError, ValueError):
        return None


def io_args():
    return ["--io", PITH_IO] if PITH_IO else []


class Notify:
    """A NOTIFY_SOCKET: a datagram socket bound to a path under tmp, or to
    an abstract name (the variable then starts with '@')."""

    def __init__(self, tmp, abstract=False):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = "pith-test-%d-%d" % (os.getpid(), time.monotonic_ns())
            self.sock.bind("\0" + name)
            self.env = "@" + name
        else:
            path = os.path.join(str(tmp), "notify.sock")
            self.sock.bind(path)
            self.env = path
        self.messages = []

    def wait_for(self, key, timeout=10.0):
        """Reads datagrams until one carries key (e.g. "READY=1"); returns
        that message as a dict. Fails at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "no %s on NOTIFY_SOCKET within %.0f s; got %r" % (
                key, timeout, self.messages)
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            self.messages.append(data)
            lines = data.split("\n")
            if key in lines:
                return dict(x.split("=", 1) for x in lines if "=" in x)

    def close(self):
        self.sock.close()


class Launched:
    """pith started by fork + execve, with fds[i] at descriptor 3 + i."""

    def __init__(self, args, fds=(), names=None, env=None, listen_pid="self", tmp=None,
                 listen_fds=None, binary=None):
        """binary: another build of the same sources (conftest.hook_bin())."""
        self.errpath = tempfile.mktemp(prefix="pith-sd-", suffix=".err", dir=tmp)
        self.binary = binary or PITH_BIN
        self.argv = [self.binary] + io_args() + list(args)
        child_env = dict(os.environ)
        for k in ("LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET"):
            child_env.pop(k, None)
        child_env.update(env or {})
        if fds or listen_fds is not None:
            child_env["LISTEN_FDS"] = str(len(fds)) if listen_fds is None else listen_fds
            if names is not None:
                child_env["LISTEN_FDNAMES"] = ":".join(names)
        fdnums = [f if isinstance(f, int) else f.fileno() for f in fds]
        err = os.open(self.errpath, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        pid = os.fork()
        if pid == 0:  # the child: only descriptor moves, then exec
            try:
                os.dup2(err, 2)
                null = os.open("/dev/null", os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                high = [os.dup(f) for f in fdnums]
                high = [os.dup2(h, 100 + i) for i, h in enumerate(high)]
                for i, h in enumerate(high):
                    os.dup2(h, 3 + i)  # dup2 clears close-on-exec
                os.closerange(3 + len(high), 4096)
                if "LISTEN_FDS" in child_env:
                    child_env["LISTEN_PID"] = (str(os.getpid()) if listen_pid == "self"
                                               else str(listen_pid))
                os.execve(self.binary, self.argv, child_env)
            finally:
                os._exit(127)
        os.close(err)
        self.pid = pid
        self.status = None

    def text(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def poll(self):
        if self.status is None:
            p, st = os.waitpid(self.pid, os.WNOHANG)
            if p:
                self.status = os.waitstatus_to_exitcode(st)
        return self.status

    def wait_exit(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            assert time.monotonic() < deadline, "pith did not exit: %s" % self.text()
            time.sleep(0.02)
        return self.status

    def wait_start(self, timeout=10.0):
        """The start line's match; fails if pith exits or says nothing."""
        deadline = time.monotonic() + timeout
        while True:
            m = START_LINE_RE.search(self.text())
            if m:
                return m
            assert self.poll() is None, "pith exited %s: %s" % (self.status, self.text())
            assert time.monotonic() < deadline, "no start line: %s" % self.text()
            time.sleep(0.02)

    def wait_workers(self, n, timeout=10.0, pid=None):
        deadline = time.monotonic() + timeout
        while True:
            kids = [k for k in proc_children(pid or self.pid) if pid_alive(k)]
            if len(kids) >= n:
                return kids
            assert time.monotonic() < deadline, "workers did not start: %s" % self.text()
            time.sleep(0.02)

    def stop(self, sig=signal.SIGTERM, timeout=15.0):
        """Stops the master (if running) and returns its exit code; fails on
        a sanitizer report."""
        if self.poll() is None:
            os.kill(self.pid, sig)
            try:
                self.wait_exit(timeout)
            finally:
                if self.poll() is None:
                    os.kill(self.pid, signal.SIGKILL)
                    self.wait_exit(5)
        text = self.text()
        assert not SANITIZER_RE.search(text), text
        return self.status

    def cleanup(self):
        try:
            if self.poll() is None:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        finally:
            try:
                os.unlink(self.errpath)
            except FileNotFoundError:
                pass


def tcp_listener(family=socket.AF_INET, addr="127.0.0.1", reuseport=False):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuseport:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind((addr, 0))
    s.listen(128)
    return s


def unix_listener(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(128)
    return s


def socket_inode(sock):
    return os.fstat(sock.fileno()).st_ino


def fd_inodes(pid):
    """{fd: 'socket:[inode]'...} of pid's descriptors."""
    out = {}
    base = "/proc/%d/fd" % pid
    for fd in os.listdir(base):
        try:
            out[int(fd)] = os.readlink(os.path.join(base, fd))
        except FileNotFoundError:
            pass
    return out


def fd_flags(pid, fd):
    """The octal flags field of /proc/pid/fdinfo/fd."""
    with open("/proc/%d/fdinfo/%d" % (pid, fd)) as f:
        for line in f:
            if line.startswith("flags:"):
                return int(line.split()[1], 8)
    raise AssertionError("no flags for fd %d" % fd)


def environ_of(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        return [x.decode(errors="replace") for x in f.read().split(b"\0") if x]
