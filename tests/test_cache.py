# SPDX-License-Identifier: MIT
"""The per-worker file cache, seen from outside (DESIGN.md §1 filecache, §5).

Each worker keeps open files, and the bytes of small ones, revalidated with
one stat at most once a second. So a changed file may be served stale for
about a second, but every response is one whole, consistent version of the
file (its body, Content-Length and ETag belong together), a replaced, deleted
or swapped file is noticed within ~1.5 s, and the cache's descriptors and
memory stay bounded. The cache-size flags (0 = off) must not change what is
served.
"""

import os
import socket
import time

import pytest

import http_raw
from conftest import fd_count, settled_fd_count

SMALL = 64 * 1024  # --cache-max-file default: up to this, bytes kept in memory
# Revalidation once a second: no request sent later than NOTICE_S after a
# change may get the old version. The bound is judged on the time each
# request was sent (the server answered it later still), so a slow poll on
# a loaded machine cannot fail it; the new version must show by POLL_S.
NOTICE_S = 1.5
POLL_S = 5.0
POLL_EVERY = 0.1


def _write(path, data, mtime=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def _replace(path, data):
    """Atomically replaces path by a new file (a new inode)."""
    tmp = path + ".tmp-new"
    _write(tmp, data)
    os.rename(tmp, path)




def _wait_for(pred, what, timeout=POLL_S):
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "%s after %.1f s" % (what, timeout)
        time.sleep(POLL_EVERY)


def _version_bytes(n, tag):
    """n bytes that differ from any other tag's everywhere it matters."""
    unit = (tag * 64)[:64]
    return (unit * (n // len(unit) + 1))[:n]


class Watch:
    """Polls one target after a change and checks every response seen: each
    is a whole 'old' or a whole 'new' version, never a mix, never old after
    new, and the new one shows within NOTICE_S."""

    def __init__(self, server, target, old_body, old_etag):
        self.server = server
        self.target = target
        self.old_body = old_body
        self.old_etag = old_etag
        self.seen = []  # (t, status, len, etag)

    def run(self, is_new, t0):
        """is_new(resp) -> True for the new version (it checks that version's
        consistency itself), False for the old one. Returns when (after t0)
        the last request answered with the old version was sent, or None
        when there was none."""
        first_new = last_old = None
        deadline = t0 + POLL_S
        with self.server.conn() as c:
            while time.monotonic() < deadline:
                t = time.monotonic() - t0  # when the request leaves
                r = c.exchange("GET", self.target)
                self.seen.append((round(t, 2), r.status, len(r.body), r.get("ETag")))
                if is_new(r):
                    if first_new is None:
                        first_new = t
                else:
                    assert first_new is None, "old version after the new one: %s" % self.seen
                    last_old = t
                    assert r.status == 200, r
                    assert r.body == self.old_body, (
                        "neither the old nor the new version (a mix?) at %.2f s: %r\n%s"
                        % (t, r.body[:80], r.head_text()))
                    assert r["ETag"] == self.old_etag, r.head_text()
                    assert r["Content-Length"] == str(len(self.old_body))
                if first_new is not None and t > first_new + 0.2:
                    break
                time.sleep(POLL_EVERY)
        assert first_new is not None, "the change never showed in %.1f s: %s" % (POLL_S,
                                                                                   self.seen)
        assert last_old is None or last_old <= NOTICE_S, (
            "the old version for a request sent %.2f s after the change: %s" % (last_old,
                                                                                self.seen))
        return last_old


def _new_version_check(new_body, old_etag, etags):
    def is_new(r):
        if r.status == 200 and r.body == new_body:
            assert r["Content-Length"] == str(len(new_body))
            assert r["ETag"] != old_etag, "new bytes served with the old ETag:\n%s" % r.head_text()
            etags.add(r["ETag"])
            assert len(etags) == 1, "the new version's ETag is not stable: %s" % etags
            return True
        return False
    return is_new


@pytest.fixture
def root(tmp_path):
    d = tmp_path / "root"
    d.mkdir()
    return str(d)


def _prime(s, target, body):
    """Requests target twice (so it is cached) and returns its ETag."""
    r = s.get(target)
    assert r.status == 200, r
    assert r.body == body
    r2 = s.get(target)
    assert r2.body == body and r2["ETag"] == r["ETag"]
    return r["ETag"]


# -- replaced, rewritten, deleted, swapped ------------------------------------------
#
# Every change scenario gets its own file under one server; all the changes are
# made at once and then every target is polled every POLL_EVERY seconds, so
# the second that revalidation may take is waited out once for all of them.
# Each test then judges its own scenario's record.


class Scenario:
    """old: the bytes served before the change. change(root): makes it.
    is_new(resp): True for the expected outcome after the change (raising
    AssertionError when a response claims to be it but is inconsistent).
    cut_ok: a response cut short by a close is tolerated before the change
    shows (a file rewritten in place under a cached descriptor)."""

    def __init__(self, name, target, old, setup, change, is_new, cut_ok=False):
        self.name, self.target, self.old = name, target, old
        self.setup, self.change, self.is_new, self.cut_ok = setup, change, is_new, cut_ok
        self.old_etag = None
        self.t0 = None
        self.first_new = None
        self.last_old = None  # when the last request answered "old" was sent
        self.error = None
        self.seen = []
        self.after = 0  # polls after the new outcome first showed

    def observe(self, port):
        t = time.monotonic() - self.t0
        try:
            with http_raw.Conn(port, timeout=3.0) as c:
                r = c.exchange("GET", self.target)
        except http_raw.Closed as e:
            self.seen.append((round(t, 2), "closed"))
            if not self.cut_ok or self.first_new is not None:
                self.error = "response cut short at %.2f s: %s" % (t, e)
            self.last_old = t  # not the new version yet
            return
        except socket.timeout:
            self.error = "no complete response and no close within 3 s at %.2f s" % t
            return
        self.seen.append((round(t, 2), r.status, len(r.body), r.get("ETag")))
        try:
            if self.is_new(self, r):
                if self.first_new is None:
                    self.first_new = t
                self.after += 1
                return
        except AssertionError as e:
            self.error = "at %.2f s: %s\n%s" % (t, e, r.head_text())
            return
        self.last_old = t
        if self.first_new is not None:
            self.error = "the old version again after the new one"
        elif self.cut_ok:
            self.error = "a complete response that is no version of the file: %r" % r.body[:80]
        elif r.status != 200 or r.body != self.old:
            self.error = ("neither the old nor the new version (a mix?) at %.2f s: %d %r\n%s"
                          % (t, r.status, r.body[:80], r.head_text()))
        elif r.get("ETag") != self.old_etag or r.get("Content-Length") != str(len(self.old)):
            self.error = "the old bytes with another ETag or length:\n%s" % r.head_text()

    def done(self):
        return self.error is not None or self.after >= 3

    def check(self):
        assert self.error is None, "%s: %s\nseen: %s" % (self.name, self.error, self.seen)
        assert self.first_new is not None, "%s: the change never showed in %.1f s: %s" % (
            self.name, POLL_S, self.seen)
        assert self.last_old is None or self.last_old <= NOTICE_S, (
            "%s: the old version for a request sent %.2f s after the change: %s"
            % (self.name, self.last_old, self.seen))


def new_version(new_body):
    """is_new for a change to new_body: its bytes, length and a new, stable ETag."""
    def is_new(sc, r):
        if r.status == 200 and r.body == new_body:
            assert r["Content-Length"] == str(len(new_body))
            assert r["ETag"] != sc.old_etag, "new bytes served with the old ETag"
            sc.new_etags = getattr(sc, "new_etags", set()) | {r["ETag"]}
            assert len(sc.new_etags) == 1, "the new version's ETag changes: %s" % sc.new_etags
            return True
        return False
    return is_new


def status_is(status, location=None):
    def is_new(sc, r):
        if r.status != status:
            return False
        if location is not None:
            assert r["Location"] == location
        assert sc.outside is None or sc.outside not in r.body, "bytes from outside the root"
        return True
    return is_new


def _scenarios(base):
    root = os.path.join(base, "root")
    outside = os.path.join(base, "outside.txt")
    out = []

    def add(name, rel, old, change, is_new, mtime=None, cut_ok=False, extra_setup=None):
        def setup():
            if old is not None:
                _write(os.path.join(root, rel), old, mtime)
            if extra_setup:
                extra_setup()
        sc = Scenario(name, "/" + rel, old, setup, lambda: change(os.path.join(root, rel)),
                      is_new, cut_ok)
        sc.outside = None
        out.append(sc)
        return sc

    # Replaced by rename (a new inode), in memory and by sendfile.
    for label, a, b in [("memory-grow", 200, 320), ("memory-shrink", 320, 200),
                        ("sendfile-grow", 100 * 1024, 150 * 1024),
                        ("sendfile-shrink", 150 * 1024, 100 * 1024),
                        ("memory-to-sendfile", 1000, 100 * 1024),
                        ("sendfile-to-memory", 100 * 1024, 1000)]:
        old, new = _version_bytes(a, b"old-"), _version_bytes(b, b"NEW!")
        add("rename-" + label, "rename-%s.bin" % label, old,
            lambda p, new=new: _replace(p, new), new_version(new))

    # Same size and mtime: only the inode differs.
    old, new = _version_bytes(500, b"aaaa"), _version_bytes(500, b"bbbb")

    def same_inode_change(p, new=new):
        _write(p + ".tmp", new, mtime=1700000000)
        os.rename(p + ".tmp", p)
    add("rename-same-size-mtime", "same.txt", old, same_inode_change, new_version(new),
        mtime=1700000000)

    # Deleted.
    add("deleted-memory", "gone.txt", b"soon gone\n", os.unlink, status_is(404))
    add("deleted-sendfile", "gone.bin", _version_bytes(200 * 1024, b"gone"), os.unlink,
        status_is(404))

    # Rewritten in place (same inode).
    old, new = _version_bytes(300, b"old-"), _version_bytes(700, b"NEW!")

    def overwrite(p, new=new):
        with open(p, "r+b") as f:
            f.write(new)
    add("in-place-other-size", "inplace.txt", old, overwrite, new_version(new))

    old, new = _version_bytes(300, b"old-"), _version_bytes(300, b"NEW!")

    def overwrite_utime(p, new=new):
        with open(p, "r+b") as f:
            f.write(new)
        os.utime(p, (1700000100, 1700000100))
    def new_with_lm(sc, r, check=new_version(new)):
        if check(sc, r):
            assert r["Last-Modified"] == "Tue, 14 Nov 2023 22:15:00 GMT"
            return True
        return False
    add("in-place-same-size-new-mtime", "utime.txt", old, overwrite_utime, new_with_lm,
        mtime=1700000000)

    # Same size, mtimes within one second of each other.
    old, new = _version_bytes(300, b"old-"), _version_bytes(300, b"NEW!")
    base_ns = 1700000000 * 10**9

    def overwrite_ns(p, new=new):
        with open(p, "r+b") as f:
            f.write(new)
        os.utime(p, ns=(base_ns + 500000000, base_ns + 500000000))
    sc = add("in-place-same-second", "ns.txt", old, overwrite_ns, new_version(new))
    sc.setup = (lambda s0=sc.setup, p=os.path.join(root, "ns.txt"):
                (s0(), os.utime(p, ns=(base_ns + 100, base_ns + 100))))

    # A big file truncated and rewritten in place under its cached descriptor:
    # responses may be cut short (the server must close, not hang) until the
    # change shows; a complete response must be the new version.
    old, new = _version_bytes(300 * 1024, b"old-"), _version_bytes(100 * 1024, b"NEW!")

    def truncate_rewrite(p, new=new):
        with open(p, "r+b") as f:
            f.truncate(0)
            f.write(new)
    add("in-place-sendfile-shrink", "inplace.bin", old, truncate_rewrite, new_version(new),
        cut_ok=True)

    # A file replaced by a directory.
    def to_dir(p):
        os.unlink(p)
        _write(os.path.join(p, "index.html"), b"<p>now a dir</p>\n")
    add("file-to-directory", "thing", b"a file\n", to_dir, status_is(301, "/thing/"))

    # Symlinks swapped in under a cached path: 403 (DESIGN.md §2).
    def to_link(target):
        def change(p):
            os.symlink(target, p + ".lnk")
            os.rename(p + ".lnk", p)
        return change
    sc = add("symlink-outside", "link-out.txt", b"inside\n", to_link(outside), status_is(403),
             extra_setup=lambda: _write(outside, b"OUTSIDE-SECRET\n"))
    sc.outside = b"OUTSIDE-SECRET"
    # The final component now a symlink to a hard link of the very same inode.
    add("symlink-same-inode", "link-same.txt", b"same inode\n", to_link("hard.txt"),
        status_is(403), extra_setup=lambda: os.link(os.path.join(root, "link-same.txt"),
                                                    os.path.join(root, "hard.txt")))

    # A directory in the path replaced by a symlink to it (renamed): the file
    # at the end is the same inode, but the path now has a symlink.
    def dir_to_link(p):
        d = os.path.dirname(p)
        os.rename(d, d + "2")
        os.symlink("d2", d)
    add("directory-to-symlink", "d/f.txt", b"in d\n", dir_to_link, status_is(403))

    # A file that did not exist (404 seen first) appears.
    sc = add("new-file-after-404", "late.txt", None,
             lambda p: _write(p, b"now here\n"), lambda sc, r: r.status == 200 and
             r.body == b"now here\n")
    return root, out


@pytest.fixture(scope="module")
def changes(pith_module, tmp_path_factory):
    base = str(tmp_path_factory.mktemp("changes"))
    root, scenarios = _scenarios(base)
    os.makedirs(root)
    for sc in scenarios:
        sc.setup()
    s = pith_module(root=root)
    for sc in scenarios:
        if sc.old is None:
            for _ in range(2):
                r = s.get(sc.target)
                assert r.status == 404, r
            sc.old_etag = None
            sc.old = b""
            sc.expect_404_before = True
            continue
        sc.old_etag = _prime(s, sc.target, sc.old)
    for sc in scenarios:
        sc.change()
        sc.t0 = time.monotonic()
    deadline = time.monotonic() + POLL_S
    while time.monotonic() < deadline:
        pending = [sc for sc in scenarios if not sc.done()]
        if not pending:
            break
        for sc in pending:
            if getattr(sc, "expect_404_before", False):
                _observe_404_then_new(sc, s.port)
            else:
                sc.observe(s.port)
        time.sleep(POLL_EVERY)
    return {sc.name: sc for sc in scenarios}


def _observe_404_then_new(sc, port):
    t = time.monotonic() - sc.t0
    r = http_raw.fetch(port, sc.target)
    sc.seen.append((round(t, 2), r.status))
    if sc.is_new(sc, r):
        sc.first_new = sc.first_new if sc.first_new is not None else t
        sc.after += 1
    elif r.status != 404 or sc.first_new is not None:
        sc.error = "unexpected %d at %.2f s" % (r.status, t)
    else:
        sc.last_old = t


# Every scenario defined above, by name (building them touches no file).
SCENARIOS = [sc.name for sc in _scenarios("/nonexistent")[1]]


@pytest.mark.parametrize("name", SCENARIOS)
def test_change_noticed(changes, name):
    changes[name].check()


# -- responses in flight -------------------------------------------------------------


def _start_slow_download(s, target):
    c = http_raw.Conn(s.port, rcvbuf=4096, timeout=10.0)
    c.request("GET", target)
    # Read the head only; the body stays (mostly) in flight.
    deadline = time.monotonic() + 5
    while b"\r\n\r\n" not in c.buf:
        assert time.monotonic() < deadline, "no response head"
        c._fill(5)
    return c


def _finish(c, method="GET"):
    # A larger window now, so that the rest arrives quickly.
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
    return c.read_response(method, timeout=20)


def test_in_flight_response_survives_replace_and_delete(pith, root):
    # Slow responses of two cached big files are in flight when one is
    # replaced and the other deleted; their entries are dropped while in use.
    a, c = os.urandom(8 * 1024 * 1024), os.urandom(8 * 1024 * 1024)
    b = os.urandom(6 * 1024 * 1024)
    pa, pc = os.path.join(root, "a.bin"), os.path.join(root, "c.bin")
    _write(pa, a)
    _write(pc, c)
    s = pith(root=root)
    _prime(s, "/a.bin", a)
    _prime(s, "/c.bin", c)
    ca = _start_slow_download(s, "/a.bin")
    cc = _start_slow_download(s, "/c.bin")
    try:
        _replace(pa, b)
        os.unlink(pc)
        # Poll until both changes show: each entry revalidates on its own
        # clock (about a second), so c.bin's 404 says nothing about a.bin.
        _wait_for(lambda: s.get("/c.bin").status == 404, "the deleted c.bin still served")
        _wait_for(lambda: s.get("/a.bin").body == b, "the replaced a.bin still served old")
        ra = _finish(ca)
        rc = _finish(cc)
    finally:
        ca.close()
        cc.close()
    assert ra.status == 200 and ra["Content-Length"] == str(len(a))
    assert ra.body == a, "the in-flight response changed under a replace"
    assert rc.status == 200 and rc["Content-Length"] == str(len(c))
    assert rc.body == c, "the in-flight response changed under a delete"
    # Once the responses ended, the dropped entries let go of the old
    # files: no descriptor of a deleted file stays open in the worker.
    w = s.worker()

    def deleted_open():
        out = []
        for fd in os.listdir("/proc/%d/fd" % w):
            try:
                target = os.readlink("/proc/%d/fd/%s" % (w, fd))
            except OSError:
                continue
            if target.endswith(" (deleted)"):
                out.append(target)
        return out

    _wait_for(lambda: not deleted_open(), "the worker keeps deleted files open: %r" % deleted_open())


@pytest.mark.router_lacks("the --cache-* flags")
def test_in_flight_entry_not_evicted(pith, root):
    # One cache entry, held by a slow response: other files must be served
    # (uncached), and the held one must not be freed under the response.
    a = os.urandom(8 * 1024 * 1024)
    files = {"a.bin": a}
    for i in range(5):
        files["s%d.txt" % i] = _version_bytes(1000 + i, b"s%d--" % i)
    files["b.bin"] = os.urandom(300 * 1024)
    for name, data in files.items():
        _write(os.path.join(root, name), data)
    s = pith("--cache-entries", "1", root=root)
    worker = s.worker()
    c1 = _start_slow_download(s, "/a.bin")
    try:
        with s.conn() as c:
            for _ in range(3):
                for name, data in files.items():
                    r = c.exchange("GET", "/" + name)
                    assert r.status == 200 and r.body == data, name
        r1 = _finish(c1)
    finally:
        c1.close()
    assert r1.status == 200 and r1.body == a
    before = settled_fd_count(worker)
    with s.conn() as c:
        for _ in range(10):
            for name, data in files.items():
                r = c.exchange("GET", "/" + name)
                assert r.status == 200 and r.body == data, name
    assert settled_fd_count(worker) <= before, "descriptors leaked with --cache-entries 1"


# -- flags that turn parts of the cache off -------------------------------------------


@pytest.mark.router_lacks("the --cache-* flags")
@pytest.mark.parametrize("flags", [["--cache-entries", "0"], ["--cache-size", "0"],
                                   ["--cache-max-file", "0"], ["--cache-entries", "1"]],
                         ids=["entries0", "size0", "maxfile0", "entries1"])
def test_cache_flags_serve_correctly(pith, root, flags):
    small = _version_bytes(5000, b"small")
    big = os.urandom(1024 * 1024 + 17)
    _write(os.path.join(root, "small.txt"), small)
    _write(os.path.join(root, "big.bin"), big)
    _write(os.path.join(root, "empty.txt"), b"")
    _write(os.path.join(root, "index.html"), b"<p>index</p>\n")
    s = pith(*flags, root=root)
    try:
        http_raw.fetch(s.port, "/small.txt", timeout=3.0)
    except socket.timeout:
        pytest.fail("no response within 3 s with %s (stderr: %s)"
                    % (" ".join(flags), s.stderr_text()[-400:]))
    worker = s.worker()
    with s.conn() as c:
        for _ in range(3):
            r = c.exchange("GET", "/small.txt")
            assert r.status == 200 and r.body == small
            assert r["Content-Type"] == "text/plain; charset=utf-8"
            tag = r["ETag"]
            r = c.exchange("GET", "/big.bin")
            assert r.status == 200 and r.body == big
            r = c.exchange("GET", "/empty.txt")
            assert r.status == 200 and r.body == b"" and r["Content-Length"] == "0"
            r = c.exchange("GET", "/")
            assert r.status == 200 and r.body == b"<p>index</p>\n"
            r = c.exchange("HEAD", "/big.bin")
            assert r.status == 200 and r["Content-Length"] == str(len(big))
            r = c.exchange("GET", "/small.txt", {"If-None-Match": tag})
            assert r.status == 304 and r["ETag"] == tag
            r = c.exchange("GET", "/small.txt", {"Range": "bytes=10-19"})
            assert r.status == 206 and r.body == small[10:20]
            r = c.exchange("GET", "/big.bin", {"Range": "bytes=1000000-1000009"})
            assert r.status == 206 and r.body == big[1000000:1000010]
            r = c.exchange("GET", "/big.bin", {"Range": "bytes=0-9,-10"})
            assert r.status == 206 and r["Content-Type"].startswith("multipart/byteranges")
            assert big[:10] in r.body and big[-10:] in r.body
            r = c.exchange("GET", "/small.txt", {"Range": "bytes=0-9,-10"})
            assert r.status == 206 and r["Content-Type"].startswith("multipart/byteranges")
            assert small[:10] in r.body and small[-10:] in r.body
            r = c.exchange("GET", "/nope.txt")
            assert r.status == 404
            r = c.exchange("GET", "/small.txt/")
            assert r.status == 404
        http_raw.assert_no_more_bytes(c)
    def loop(n):
        with s.conn() as c:
            for _ in range(n):
                assert c.exchange("GET", "/small.txt").body == small
                assert c.exchange("GET", "/big.bin").body == big
                assert c.exchange("GET", "/nope.txt").status == 404
        return settled_fd_count(worker)
    before = loop(1)  # leaves the cache as every later loop leaves it
    assert loop(30) <= before, "descriptors leaked with %s" % flags
    # A replaced file: at once without a cache, else within NOTICE_S.
    p = os.path.join(root, "small.txt")
    old_etag = s.get("/small.txt")["ETag"]
    new = _version_bytes(4000, b"NEW!")
    _replace(p, new)
    t0 = time.monotonic()
    last_old = Watch(s, "/small.txt", small, old_etag).run(
        _new_version_check(new, old_etag, set()), t0)
    if flags == ["--cache-entries", "0"]:
        assert last_old is None, "with no cache, the old file served %.2f s after its replace" % (
            last_old)


# -- paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["/index.html/", "/1k.bin/", "/sub/page.txt/", "/index.html//",
                                    "/index.html/."])
def test_file_with_trailing_slash_404(pith, docroot, target):
    s = pith()
    bare = target.split(".html")[0] + ".html" if ".html" in target else target.rstrip("/.")
    # Both before and after the file itself is cached.
    r = s.get(target)
    assert r.status == 404, (target, r)
    assert s.get(bare).status == 200
    r = s.get(target)
    assert r.status == 404, (target, r)
    assert s.get(bare).status == 200


def test_long_path_bypasses_cache(pith, root):
    # Paths longer than the cache's key are served uncached, still correctly,
    # and without leaking their descriptors.
    rel = "d" * 200 + "/" + "e" * 100 + "/" + "f" * 60 + ".txt"
    small = _version_bytes(1000, b"long")
    big = os.urandom(200 * 1024)
    _write(os.path.join(root, rel), small)
    _write(os.path.join(root, rel + ".bin"), big)
    s = pith(root=root)
    worker = s.worker()
    with s.conn() as c:
        r = c.exchange("GET", "/" + rel)
        assert r.status == 200 and r.body == small
        assert c.exchange("GET", "/" + rel + ".bin").body == big
    before = settled_fd_count(worker)
    with s.conn() as c:
        for _ in range(50):
            assert c.exchange("GET", "/" + rel).body == small
            assert c.exchange("GET", "/" + rel + ".bin").body == big
    assert settled_fd_count(worker) <= before
    new = _version_bytes(1200, b"NEW!")
    _replace(os.path.join(root, rel), new)
    r = s.get("/" + rel)
    assert r.status == 200 and r.body == new


# -- eviction and bounds -------------------------------------------------------------


@pytest.mark.router_lacks("the --cache-* flags")
def test_many_files_lru_bounded(pith, root):
    files = {}
    for i in range(50):
        if i % 2:
            data = _version_bytes(1000 + i, b"small%02d-" % i)
            name = "small%02d.txt" % i
        else:
            data = os.urandom(SMALL + 1 + i * 1000)  # sendfile path: a descriptor each
            name = "big%02d.bin" % i
        files[name] = data
        _write(os.path.join(root, name), data)
    s = pith("--cache-entries", "8", root=root)
    worker = s.worker()
    start = fd_count(worker)
    high = start
    after = []
    with s.conn() as c:
        for round_ in range(2):
            for name, data in files.items():
                r = c.exchange("GET", "/" + name)
                assert r.status == 200, (name, r)
                assert r.body == data, name
                assert r["Content-Length"] == str(len(data))
                high = max(high, fd_count(worker))
            after.append(fd_count(worker))
        # Recently used files, then all again in reverse: still right.
        for name in list(files)[::-1]:
            r = c.exchange("GET", "/" + name, {"Range": "bytes=0-9"})
            assert r.status == 206 and r.body == files[name][:10], name
            high = max(high, fd_count(worker))
    assert high < start + 8 + 20, "worker held %d descriptors (started with %d)" % (high, start)
    assert after[1] <= after[0], "descriptors grew between rounds: %s" % after


def test_hot_loop_identical(server, docroot):
    want = None
    with server.conn() as c:
        for i in range(200):
            r = c.exchange("GET", "/index.html")
            got = (r.status, r.body, r["ETag"], r["Last-Modified"], r["Content-Length"],
                   r["Content-Type"], r["Cache-Control"])
            if want is None:
                want = got
                assert r.status == 200 and r.body == docroot.files["index.html"]
            assert got == want, "response %d differs: %r" % (i, got)
        http_raw.assert_no_more_bytes(c)


def test_hot_loop_pipelined_identical(server, docroot):
    req = b"GET /1k.bin HTTP/1.1\r\nHost: x\r\n\r\n"
    with server.conn() as c:
        c.send(req * 100)
        tags = set()
        for i in range(100):
            r = c.read_response()
            assert r.status == 200, (i, r)
            assert r.body == docroot.files["1k.bin"], i
            tags.add(r["ETag"])
        assert len(tags) == 1
        http_raw.assert_no_more_bytes(c)
