# SPDX-License-Identifier: MIT
"""Regression test for issue 8, defect 7:

    "Special files are opened before their type is checked. A FIFO inside
    the root is opened for reading, which blocks or has side effects. Open
    with O_PATH (or O_NONBLOCK|O_NOCTTY), check the type, then reopen for
    reading. Test: a FIFO in the root gets a 403 at once, and its writer
    never sees a reader."

Contract row (DESIGN.md §2): "special file (fifo, device, socket) 403". The
server may look at a special file's type (O_PATH, fstatat) but must never
open it for reading: a process blocked in open(fifo, O_WRONLY) is woken by
any reader, so it tells whether the server opened the FIFO.
"""

import os
import threading
import time

import pytest

from conftest import RESOLVERS, resolver_env

INDEX = b"<p>fifo test root</p>\n"


class FifoWriter(threading.Thread):
    """Blocks in open(path, O_WRONLY), which returns only once some process
    opens the FIFO for reading."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.tid = None
        self.opened_at = None
        self.started = threading.Event()

    def run(self):
        self.tid = threading.get_native_id()
        self.started.set()
        fd = os.open(self.path, os.O_WRONLY)
        self.opened_at = time.monotonic()
        os.close(fd)

    def blocked_in_open(self):
        """True while the thread sleeps in the kernel's FIFO open: asleep
        (state S) in wait_for_partner (fs/pipe.c), or, where wchan is
        hidden, asleep inside openat (257 on x86_64, 56 on arm64)."""
        task = "/proc/self/task/%d/" % self.tid
        try:
            with open(task + "stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(task + "wchan") as f:
                wchan = f.read().strip()
            with open(task + "syscall") as f:
                nr = f.read().split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return False
        if state != "S":
            return False
        return wchan in ("wait_for_partner", "fifo_open") or (wchan in ("", "0")
                                                              and nr in ("257", "56"))

    def release(self):
        """Ends the thread (if still blocked) by opening the FIFO for reading."""
        if self.is_alive():
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            self.join(5)
            os.close(fd)
        self.join(5)
        assert not self.is_alive(), "the FIFO writer thread did not end"


@pytest.fixture
def fifo_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "index.html").write_bytes(INDEX)
    fifo = root / ("pipe-%s" % os.urandom(4).hex())
    os.mkfifo(fifo)
    return root, fifo


@pytest.mark.parametrize("resolver", RESOLVERS)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_fifo_403_and_its_writer_never_sees_a_reader(pith, fifo_root, resolver, method):
    root, fifo = fifo_root
    s = pith(root=root, env=resolver_env(resolver))
    writer = FifoWriter(str(fifo))
    writer.start()
    try:
        assert writer.started.wait(5)
        # The writer must be waiting in open() before the request, or a
        # reader that came and went would go unnoticed.
        deadline = time.monotonic() + 5
        while not writer.blocked_in_open():
            assert time.monotonic() < deadline, "the writer thread never blocked in open()"
            time.sleep(0.01)
        with s.conn() as c:
            t0 = time.monotonic()
            r = c.exchange(method, "/" + fifo.name, timeout=5)
            took = time.monotonic() - t0
            assert r.status == 403, r
            assert took < 0.5, "the 403 took %.2f s" % took
            # Give a reader that the server might have opened time to wake
            # the writer: it must still be blocked afterwards.
            writer.join(0.5)
            assert writer.opened_at is None and writer.is_alive(), \
                "the server opened the FIFO for reading (its writer saw a reader)"
            assert writer.blocked_in_open()
            # The worker is not stuck: the same connection and a new one serve.
            r2 = c.exchange("GET", "/index.html", timeout=5)
            assert r2.status == 200 and r2.body == INDEX
        assert s.get("/index.html").status == 200
    finally:
        writer.release()
