# SPDX-License-Identifier: MIT
"""Issue 36's defects of the router profile, each through the live process
(collected only when PITH_BIN is pith-router, see conftest.py):

1. Out of descriptors, a worker sleeps instead of spinning: accept4 failing
   with EMFILE takes the listener out of the epoll set until a descriptor
   frees (or a second passes), and the connection cap follows the
   descriptor limit found at start, so an accepted connection's file never
   gets a 503 for want of a descriptor.
2. A connection's own buffers are given back when it goes idle with
   nothing buffered and when it closes: the worker's RSS returns to its
   baseline.
3. The idle worker stays within 64 KiB before and after a file, a listing
   and a redirect, with --log (x86-64 here; test-router-cross runs the
   same under qemu-user for mips, see _guest_rss).
4. Every worker writes into the live log once it was rotated: with three
   workers and a small --log-max, every line in FILE.1 precedes every line
   in FILE, and no line of the last full generation is lost.
About 15 s."""

import os
import re
import resource
import signal
import socket
import subprocess
import time

import pytest

import http_raw
from conftest import PITH_BIN, PithServer
from gaputil import CLK_TCK, cpu_ticks, open_fds, poll_until

# PITH_ROUTER_CMD runs the router another way (make test-router-cross:
# "qemu-mips build/router-mips/pith-router"); only the memory test uses it.
ROUTER_CMD = os.environ.get("PITH_ROUTER_CMD", "").split() or [PITH_BIN]


def _vm_rss(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))


def _guest_rss(pid, binary):
    """A worker's resident KiB. Native: VmRSS. Under qemu-user: what the
    guest has resident, i.e. the mappings inside its 4 GiB address space
    (found from where the binary's first segment is mapped), not qemu's own
    code, heap and translation cache."""
    if len(ROUTER_CMD) == 1:
        return _vm_rss(pid)
    with open(binary, "rb") as f:
        elf = f.read(4096)
    assert elf[4] == 1, "a 32-bit guest"
    big = elf[5] == 2
    end = ">" if big else "<"
    import struct

    phoff, = struct.unpack(end + "I", elf[28:32])
    phentsize, phnum = struct.unpack(end + "HH", elf[42:46])
    vaddr = None
    for i in range(phnum):
        p = elf[phoff + i * phentsize:phoff + (i + 1) * phentsize]
        ptype, _, pvaddr = struct.unpack(end + "III", p[:12])
        if ptype == 1:
            vaddr = pvaddr & ~0xfff
            break
    real = os.path.realpath(binary)
    total, base, blocks = 0, None, []
    with open("/proc/%d/smaps" % pid) as f:
        text = f.read()
    for blk in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", text):
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)", blk)
        rss = int(re.search(r"^Rss:\s+(\d+) kB", blk, re.M).group(1))
        lo, hi = int(m.group(1), 16), int(m.group(2), 16)
        blocks.append((lo, hi, rss))
        if base is None and m.group(3).strip() == real:
            base = lo - vaddr
    assert base is not None, "the binary is not mapped"
    for lo, hi, rss in blocks:
        if base <= lo and hi <= base + (1 << 32):
            total += rss
    return total


# ---- 1. out of descriptors ---------------------------------------------------------


def _limit_for(pid, free):
    """The smallest RLIMIT_NOFILE that leaves exactly `free` descriptor
    numbers unused below it (the kernel hands out the lowest free one)."""
    used = set(open_fds(pid))
    n = 0
    while n - len([fd for fd in used if fd < n]) < free:
        n += 1
    return n


def _options(s):
    c = s.conn()
    c.request("OPTIONS", "*")
    return c


def _answered(c, timeout):
    try:
        return c.read_response("OPTIONS", timeout=timeout).status
    except socket.timeout:
        assert c.buf == b"", "part of an answer: %r" % c.buf[:200]
        return None


def test_out_of_descriptors_sleeps_then_resumes(tmp_path):
    """The worker's limit lowered after start (prlimit) to leave one free
    descriptor, which one connection takes: the next waits in the backlog,
    the worker burns no CPU (before: about 28,000 accept4 calls a second),
    the open connection is still served, and the waiting one is served as
    soon as a descriptor frees."""
    (tmp_path / "a.txt").write_bytes(b"hello\n")
    s = PithServer(str(tmp_path), args=["--timeout-keepalive", "60",
                                        "--timeout-header", "60"]).start()
    w = s.worker()
    waiting = a = None
    try:
        c = _options(s)
        assert _answered(c, 5) == 204
        c.close()
        assert poll_until(lambda: sum(1 for t in open_fds(w).values()
                                      if t.startswith("socket:")) == 1, 3.0), open_fds(w)
        limit = _limit_for(w, 1)
        resource.prlimit(w, resource.RLIMIT_NOFILE, (limit, limit))
        a = _options(s)
        assert _answered(a, 5) == 204
        waiting = _options(s)
        assert _answered(waiting, 1.0) is None, "answered beyond the descriptor limit"
        before = cpu_ticks(w)
        time.sleep(2.0)
        spent = cpu_ticks(w) - before
        assert spent <= 5, "the worker used %.2f s of CPU in 2 s out of descriptors" % (
            spent / CLK_TCK)
        assert a.exchange("OPTIONS", "*").status == 204
        a.close()
        t0 = time.monotonic()
        assert _answered(waiting, 3.0) == 204
        assert time.monotonic() - t0 < 0.5, "served only %.2f s after a descriptor freed" % (
            time.monotonic() - t0)
        assert s.workers() == [w]
    finally:
        for c in (a, waiting):
            if c is not None:
                c.close()
        assert s.stop() == []


def test_connection_cap_follows_the_descriptor_limit(tmp_path):
    """Started with RLIMIT_NOFILE 48: the worker takes only the connections
    its descriptors can serve (a socket and a file each, besides what it
    keeps), so 30 clients fetching a file that cannot leave at once all get
    200 (before: the worker took all 30 and answered most of them 503, the
    file's open failing with EMFILE), the others waiting in the backlog,
    and nothing spins meanwhile."""
    body = bytes(range(256)) * (32 << 10)  # 8 MiB: more than the socket buffers hold
    (tmp_path / "big").write_bytes(body)
    s = PithServer(str(tmp_path))
    s.argv = ["prlimit", "--nofile=48:48", "--"] + s.argv
    s.start()
    w = s.worker()
    conns = []
    try:
        for _ in range(30):
            c = s.conn(timeout=20)
            c.send(b"GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            conns.append(c)
        time.sleep(0.5)  # every answer that will start has started
        before = cpu_ticks(w)
        time.sleep(1.0)
        spent = cpu_ticks(w) - before
        assert spent <= 5, "the worker used %.2f s of CPU in 1 s, blocked" % (spent / CLK_TCK)
        statuses = []
        for c in conns:
            r = c.read_response()
            statuses.append(r.status)
            assert r.status != 200 or r.body == body
            c.close()
        assert statuses == [200] * 30, statuses
        assert s.workers() == [w]
    finally:
        for c in conns:
            c.close()
        assert s.stop() == []


# ---- 2. connection buffers given back ---------------------------------------------

PAD = b"X-Pad: " + b"p" * 15000 + b"\r\n"  # a 15 KB head, sent in two parts


def _settle_rss(w):
    time.sleep(0.3)
    return _vm_rss(w)


def test_connection_buffers_are_given_back(tmp_path):
    """30 connections each hold a 15 KB partial head (the bytes move into
    the connection's own buffer), then finish it and stay open, idle; then
    close. Idle and closed, the worker is back at its baseline (before:
    about 19 KiB more per idle connection, and never given back). The same
    for a listing (its own out buffer) and for heads abandoned half-sent."""
    (tmp_path / "a.txt").write_bytes(b"hello\n")
    for i in range(40):
        (tmp_path / "d" / ("f%02d-%s" % (i, "n" * 200))).parent.mkdir(exist_ok=True)
        (tmp_path / "d" / ("f%02d-%s" % (i, "n" * 200))).write_bytes(b"")
    s = PithServer(str(tmp_path), args=["--timeout-keepalive", "60",
                                        "--timeout-header", "60"]).start()
    w = s.worker()

    def partials(n):
        cs = [s.conn() for _ in range(n)]
        for c in cs:
            c.send(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n" + PAD)
        time.sleep(0.3)  # read by the worker, waiting for the rest
        return cs

    def finish(cs, target=b"/a.txt"):
        for c in cs:
            c.send(b"\r\n")
            r = c.read_response()
            assert r.status == 200
    try:
        # The warm-up: the connection slots and the scratch buffers the rest
        # uses are touched once, by small requests and one partial head.
        warm = [s.conn() for _ in range(30)]
        for c in warm:
            assert c.exchange("GET", "/a.txt").status == 200
        finish(partials(1))
        assert warm[0].exchange("GET", "/d/").status == 200
        for c in warm:
            c.close()
        base = _settle_rss(w)

        cs = partials(30)
        held = _vm_rss(w)
        assert held >= base + 30 * 12, "the partial heads are not held (%d, base %d KiB)" % (
            held, base)
        finish(cs)
        idle = _settle_rss(w)
        assert idle <= base + 8, "30 idle connections hold %d KiB over the baseline %d KiB" % (
            idle - base, base)
        for c in cs:
            c.close()
        closed = _settle_rss(w)
        assert closed <= base + 8, "%d KiB over the baseline after they closed" % (closed - base)

        for c in partials(30):  # abandoned half-sent
            c.close()
        assert _settle_rss(w) <= base + 8

        cs = [s.conn() for _ in range(20)]  # listings: the connection's own out buffer
        for c in cs:
            assert c.exchange("GET", "/d/").status == 200
        assert _settle_rss(w) <= base + 8
        for c in cs:
            c.close()
        assert _settle_rss(w) <= base + 8
    finally:
        assert s.stop() == []


# ---- 3. the idle worker's memory ----------------------------------------------------

BUDGET_KIB = 64


def test_idle_worker_within_its_budget(tmp_path):
    """VmRSS of the one worker, with --log, before any request and after
    one file, one listing and one redirect (before: 68-72 and 88-92 KiB).
    A clean environment: the kernel copies it onto the stack."""
    root = tmp_path / "www"
    (root / "dir").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"hello\n")
    (root / "dir" / "x.txt").write_bytes(b"x")
    p = subprocess.Popen(ROUTER_CMD + ["--port", "0", "--addr", "127.0.0.1", "--workers", "1",
                                       "--log", str(tmp_path / "log"), str(root)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env={}, start_new_session=True)
    try:
        line = p.stderr.readline().decode()
        port = int(re.search(r":(\d+)/ \(", line).group(1))
        w = int(poll_until(lambda: open("/proc/%d/task/%d/children" % (p.pid, p.pid))
                           .read().split(), 5)[0])
        time.sleep(0.5)
        before = _guest_rss(w, ROUTER_CMD[-1])
        for target, status in (("/a.txt", 200), ("/", 200), ("/dir", 301)):
            with http_raw.Conn(port) as c:
                assert c.exchange("GET", target).status == status
        time.sleep(0.3)
        after = _guest_rss(w, ROUTER_CMD[-1])
        assert before <= BUDGET_KIB and after <= BUDGET_KIB, \
            "idle worker: %d KiB before any request, %d KiB after (budget %d)" % (
                before, after, BUDGET_KIB)
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        assert p.wait(10) == 0


# ---- 4. log rotation across workers ---------------------------------------------------


def _tags(path):
    try:
        with open(path) as f:
            return [int(m) for m in re.findall(r'"GET /\?t=(\d+) ', f.read())]
    except FileNotFoundError:
        return []


def _both(old, log):
    """FILE.1's and FILE's tags as of one instant: read again until two
    reads agree (a rotation may rename FILE between the two reads)."""
    now = (_tags(old), _tags(log))
    while True:
        again = (_tags(old), _tags(log))
        if again == now:
            return now
        now = again


def test_every_worker_follows_a_rotation(tmp_path):
    """Three workers, --log-max 1 (KiB), 150 requests tagged in order, each
    on a new connection (any worker may take it), each sent once the
    previous one's line is in a file. At every step every line in FILE.1
    precedes every line in FILE, and FILE.1 and FILE hold an unbroken run
    of tags up to the last (before: a quiet worker kept appending to FILE.1
    until its own next size check, 4 KiB later, and the next rotation threw
    those lines away)."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "index.html").write_bytes(b"hi\n")
    log = tmp_path / "access.log"
    old = tmp_path / "access.log.1"
    s = PithServer(str(tmp_path / "www"), workers=3,
                   args=["--log", str(log), "--log-max", "1"]).start()
    ua = "u" * 200
    firsts = set()
    try:
        assert len(s.wait_workers(3)) == 3
        for t in range(150):
            with s.conn() as c:
                assert c.exchange("GET", "/?t=%d" % t, headers={"User-Agent": ua}).status == 200
            assert poll_until(lambda: t in _tags(log) + _tags(old), 5), "line %d missing" % t
            a, b = _both(old, log)
            if a and b:
                assert max(a) < min(b), "FILE.1 has %s after FILE's first %d" % (
                    [x for x in a if x > min(b)], min(b))
            both = a + b
            assert both == list(range(both[0], t + 1)), \
                "lines lost or out of order at %d: FILE.1 %s FILE %s" % (t, a, b)
            if a:
                firsts.add(a[0])
        assert len(firsts) > 5, "too few rotations to tell (%d)" % len(firsts)
    finally:
        assert s.stop() == []
