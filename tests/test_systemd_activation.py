# SPDX-License-Identifier: MIT
"""Socket activation without systemd: the test opens the socket(s), puts
them at descriptors 3.., sets LISTEN_FDS, LISTEN_PID (the pid that execs
pith) and LISTEN_FDNAMES, and execs pith. All workers share the inherited
socket (EPOLLEXCLUSIVE on epoll, a multishot accept each on io_uring), also
a worker started again after a crash."""

import concurrent.futures
import re
import os
import signal
import socket
import subprocess
import time

import pytest

import http_raw
from sdutil import Launched, fd_flags, fd_inodes, socket_inode, tcp_listener, unix_listener

O_NONBLOCK = 0o4000
O_CLOEXEC = 0o2000000


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text("hello from an inherited socket\n")
    return root


def get(port, target="/"):
    with http_raw.Conn(port) as c:
        return c.exchange("GET", target)


def test_tcp_socket_shared_by_all_workers(site, tmp_path):
    lsock = tcp_listener()
    port = lsock.getsockname()[1]
    p = Launched(["--workers", "3", "--port", "1", str(site)], fds=[lsock], names=["http"],
                 tmp=tmp_path)
    try:
        m = p.wait_start()
        assert m.group(2) == "http://127.0.0.1:%d/" % port, p.text()
        assert "socket activation" in m.group(4)
        workers = p.wait_workers(3)
        # Every worker accepts on the one socket we passed, none on another,
        # and pith made it close-on-exec and non-blocking.
        want = "socket:[%d]" % socket_inode(lsock)
        for pid in [p.pid] + workers:
            socks = [v for v in fd_inodes(pid).values() if v == want]
            assert socks, "process %d does not hold the inherited socket" % pid
        flags = fd_flags(p.pid, 3)
        assert flags & O_CLOEXEC and flags & O_NONBLOCK, oct(flags)
        # --port 1 was not bound: the inherited socket wins.
        out = subprocess.run(["ss", "-Hltn", "sport = :1"], capture_output=True, text=True)
        assert out.stdout.strip() == ""
        lsock.close()  # only pith holds it now
        # Many clients at once: each is answered (no worker blocks in accept
        # while another took the connection).
        with concurrent.futures.ThreadPoolExecutor(16) as ex:
            rs = list(ex.map(lambda _: get(port).status, range(200)))
        assert rs == [200] * 200
        assert get(port).body == b"hello from an inherited socket\n"
        assert p.stop() == 0
    finally:
        p.cleanup()
    # The master and the workers closed the socket: nothing listens anymore.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)


def test_unix_socket_activation_and_log(site, tmp_path):
    path = str(tmp_path / "act.sock")
    lsock = unix_listener(path)
    log = tmp_path / "access.log"
    p = Launched(["--workers", "2", "--log", str(log), str(site)], fds=[lsock],
                 names=["pith.socket"], tmp=tmp_path)
    try:
        m = p.wait_start()
        assert m.group(2) == "http://unix:%s:/" % path
        out = subprocess.run(["curl", "-sS", "--unix-socket", path, "http://localhost/"],
                             capture_output=True, text=True, timeout=10)
        assert out.stdout == "hello from an inherited socket\n", out.stderr
        assert p.stop() == 0
        # An inherited Unix socket belongs to whoever made it: pith leaves it.
        assert os.path.exists(path)
        assert log.read_text().startswith("unix: - - [")
    finally:
        p.cleanup()


def test_worker_restart_keeps_the_shared_socket(site, tmp_path):
    lsock = tcp_listener()
    port = lsock.getsockname()[1]
    want = "socket:[%d]" % socket_inode(lsock)
    p = Launched(["--workers", "2", str(site)], fds=[lsock], tmp=tmp_path)
    lsock.close()
    try:
        p.wait_start()
        old = p.wait_workers(2)
        os.kill(old[0], signal.SIGKILL)
        # The dead worker is replaced at once, on the same socket. (A
        # connection accepted by the dying worker is lost with it: on
        # io_uring the ring's armed accept is torn down after the process.)
        deadline = time.monotonic() + 10
        while True:
            kids = p.wait_workers(2)
            if old[0] not in kids:
                break
            assert time.monotonic() < deadline
            time.sleep(0.05)
        new = [k for k in kids if k not in old]
        assert new and want in fd_inodes(new[0]).values()
        assert [get(port).status for _ in range(50)] == [200] * 50
        assert "was killed by signal 9" in p.text()
        assert p.stop() == 0
    finally:
        p.cleanup()


def test_listen_pid_of_another_process_is_ignored(site, tmp_path):
    lsock = tcp_listener()
    p = Launched(["--workers", "1", "--addr", "127.0.0.1", "--port", "0", str(site)],
                 fds=[lsock], listen_pid=1, tmp=tmp_path)
    try:
        m = p.wait_start()
        assert "socket activation" not in m.group(4)
        assert m.group(2) != "http://127.0.0.1:%d/" % lsock.getsockname()[1]
        assert p.stop() == 0
    finally:
        p.cleanup()
        lsock.close()


@pytest.mark.parametrize("names,fds,want", [
    (["https"], "tcp", "is named \"https\""),
    (None, "pipe", "not a listening stream socket"),
    (None, "connected", "not a listening stream socket"),
])
def test_bad_inherited_descriptors_exit_1(site, tmp_path, names, fds, want):
    keep = []
    if fds == "tcp":
        keep = [tcp_listener()]
        passed = keep
    elif fds == "pipe":
        r, w = os.pipe()
        keep = [r, w]
        passed = [r]
    else:
        a, b = socket.socketpair()
        keep = [a, b]
        passed = [a]
    p = Launched(["--workers", "1", str(site)], fds=passed, names=names, tmp=tmp_path)
    try:
        assert p.wait_exit() == 1
        assert want in p.text()
        assert "serving" not in p.text()
    finally:
        p.cleanup()
        for k in keep:
            k.close() if hasattr(k, "close") else os.close(k)


@pytest.mark.parametrize("value", ["1x", "", "-1", "99999999999"])
def test_malformed_listen_fds_exits_1(site, tmp_path, value):
    p = Launched(["--workers", "1", str(site)], listen_fds=value, tmp=tmp_path)
    try:
        assert p.wait_exit() == 1
        assert "socket activation (LISTEN_FDS): LISTEN_PID or LISTEN_FDS is not a number" \
            in p.text()
    finally:
        p.cleanup()


def test_more_than_16_sockets_exit_1(site, tmp_path):
    p = Launched(["--workers", "1", str(site)], listen_fds="17", tmp=tmp_path)
    try:
        assert p.wait_exit() == 1
        assert "more than 16 sockets" in p.text()
    finally:
        p.cleanup()


def test_more_sockets_than_workers_is_a_usage_error(site, tmp_path):
    socks = [tcp_listener(), tcp_listener()]
    p = Launched(["--workers", "1", str(site)], fds=socks, names=["http", "http"], tmp=tmp_path)
    try:
        assert p.wait_exit() == 2
        assert "--workers 2" in p.text()
    finally:
        p.cleanup()
        for s in socks:
            s.close()


def test_two_sockets_served_by_alternate_workers(site, tmp_path):
    a, b = tcp_listener(), tcp_listener()
    p = Launched(["--workers", "2", str(site)], fds=[a, b], names=["http", "http"], tmp=tmp_path)
    try:
        p.wait_start()
        p.wait_workers(2)
        for s in (a, b):
            assert get(s.getsockname()[1]).status == 200
        assert p.stop() == 0
    finally:
        p.cleanup()
        a.close()
        b.close()


def epoll_watch_events(pid, target_fd):
    """{epoll fd: events} for every epoll set of pid that watches target_fd."""
    out = {}
    for fd, link in fd_inodes(pid).items():
        if link != "anon_inode:[eventpoll]":
            continue
        with open("/proc/%d/fdinfo/%d" % (pid, fd)) as f:
            for line in f:
                m = re.match(r"tfd:\s+(\d+) events:\s+([0-9a-f]+)", line)
                if m and int(m.group(1)) == target_fd:
                    out[fd] = int(m.group(2), 16)
    return out


def test_workers_share_without_a_herd(site, tmp_path):
    """On epoll each worker watches the shared socket with EPOLLEXCLUSIVE
    (1 << 28), so a connection wakes one worker, not all; io_uring workers
    arm a multishot accept instead (the kernel's accept poll is exclusive),
    and watch it with no epoll set."""
    lsock = tcp_listener()
    p = Launched(["--workers", "2", str(site)], fds=[lsock], tmp=tmp_path)
    try:
        loop = p.wait_start().group(4).split(",")[0].strip()
        for pid in p.wait_workers(2):
            if loop == "io_uring":
                assert epoll_watch_events(pid, 3) == {}
                continue
            assert loop == "epoll", loop
            deadline = time.monotonic() + 10
            while not epoll_watch_events(pid, 3):
                assert time.monotonic() < deadline, "worker %d does not watch fd 3" % pid
                time.sleep(0.02)
            (events,) = epoll_watch_events(pid, 3).values()
            assert events & (1 << 28) and events & 0x1, hex(events)
        assert p.stop() == 0
    finally:
        p.cleanup()
        lsock.close()
