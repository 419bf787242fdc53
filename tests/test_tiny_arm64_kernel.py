# SPDX-License-Identifier: MIT
"""pith-tiny for aarch64 under a real arm64 Linux kernel (Debian 12's cloud
kernel, Linux 6.1, in qemu-system-aarch64's software emulation, booted by
scripts/qemu-arm64-run), with its worker sandbox on: Landlock and the
seccomp allow-list built from aarch64's own system call numbers. The cross
smoke (test_tiny_cross.py) runs under qemu-user, which has neither, so this
is where a call that aarch64 spells differently (newfstatat, ppoll,
epoll_pwait; no open, stat or epoll_wait) would show: as a worker killed by
SIGSYS.

One guest boot for the module runs tests/tiny_arm64_guest.sh, which starts
the servers, talks to them with busybox nc and records what it saw; the
tests here judge that record against the files on the host: every status,
every small body byte for byte, the big one (sendfile) by SHA-256, the
status port's counters against the responses, the access logs across a
HUP, both workers killed and replaced (sandboxed again), a graceful stop,
and the error logs line by line. The negative controls use
pith-tiny-testhook (src/testhook/raw.c): with the sandbox its open outside
the root is refused by Landlock and its getcwd kills the worker with SIGSYS;
with --no-sandbox both succeed and Seccomp is 0, so the rig can fail.

Only `make test-arm64-kernel` collects this file (PITH_ARM64_KERNEL=1, see
conftest.py). Where the guest cannot run (qemu-system-aarch64 missing, the
kernel or busybox not obtainable), the module is skipped with
scripts/qemu-arm64-run's reason; CI installs qemu (scripts/deps) and must
run it.
"""

import collections
import email.utils
import hashlib
import os
import re
import subprocess

import pytest

from conftest import REPO

RUN = os.path.join(REPO, "scripts", "qemu-arm64-run")
GUEST = os.path.join(REPO, "tests", "tiny_arm64_guest.sh")
BIN = os.path.join(REPO, "build", "tiny-aarch64", "pith-tiny")
HOOK_BIN = os.path.join(REPO, "build", "tiny-aarch64", "pith-tiny-testhook")
ROUTER_BIN = os.path.join(REPO, "build", "router-aarch64", "pith-router")
GUEST_TIMEOUT = 300  # boot ~6 s, the script ~20 s on a 2-core x86-64 (TCG)

A_TXT = b"hello, tiny world\n"
F_TXT = b"in dir\n"
BIG = (4 << 20) + 12345  # above the file cache's limit: sent with sendfile
BIG_RANGE = (3000000, 3000099)

# The main server's requests before the metrics, in order: (name, method,
# target). The pipelined connection carries two.
BEFORE_METRICS = [
    ("get", "GET", "/a.txt"), ("head", "HEAD", "/a.txt"), ("range", "GET", "/a.txt"),
    ("inm", "GET", "/a.txt"), ("listing", "GET", "/dir/"), ("notfound", "GET", "/nope.txt"),
    ("dotdot", "GET", "/../secret.txt"), ("encoded_dotdot", "GET", "/%2e%2e/secret.txt"),
    ("symlink", "GET", "/link.txt"), ("pipelined", "GET", "/a.txt"),
    ("pipelined", "GET", "/dir/f.txt"), ("big", "GET", "/big.bin"),
    ("big_range", "GET", "/big.bin"),
]


class Response:
    """One HTTP/1.1 response parsed from raw bytes (Content-Length or
    chunked framing); .rest is what followed it."""

    def __init__(self, raw, head_only=False):
        head, sep, rest = raw.partition(b"\r\n\r\n")
        assert sep, "no complete head: %r" % raw[:300]
        self.head_size = len(head) + 4
        lines = head.decode("latin-1").split("\r\n")
        self.status_line = lines[0]
        self.status = int(lines[0].split(" ")[1])
        self.fields = [tuple(s.strip() for s in l.split(":", 1)) for l in lines[1:]]
        if head_only or self.status == 304:
            self.body, self.rest = b"", rest
        elif self.get("Transfer-Encoding") == "chunked":
            self.body = b""
            while True:
                size, _, rest = rest.partition(b"\r\n")
                n = int(size, 16)
                self.body += rest[:n]
                assert rest[n:n + 2] == b"\r\n", rest[n:n + 10]
                rest = rest[n + 2:]
                if n == 0:
                    break
            self.rest = rest
        else:
            n = int(self.get("Content-Length"))
            self.body, self.rest = rest[:n], rest[n:]
        self.size = len(raw) - len(self.rest)
        self.body_size = self.size - self.head_size  # as sent: chunked framing included

    def get(self, name):
        vals = [v for k, v in self.fields if k.lower() == name.lower()]
        assert len(vals) <= 1, (name, self.fields)
        return vals[0] if vals else None

    def __repr__(self):
        return "<%s %r>" % (self.status_line, self.body[:200])


class Guest:
    """The guest's record and files (tests/tiny_arm64_guest.sh's /out)."""

    def __init__(self, out, root, run):
        self.out, self.root, self.run = out, root, run
        with open(os.path.join(out, "record")) as f:
            self.lines = [l.rstrip("\n").split(" ") for l in f]

    def facts(self, word):
        return [l[1:] for l in self.lines if l[0] == word]

    def fact(self, word, *prefix):
        got = [f[len(prefix):] for f in self.facts(word) if tuple(f[:len(prefix)]) == prefix]
        assert len(got) == 1, (word, prefix, got)
        return got[0]

    def procs(self, label, role):
        """{pid: {"Seccomp": ..., "NoNewPrivs": ..., "Seccomp_filters": ...}}"""
        return {int(f[2]): dict(kv.split("=", 1) for kv in f[3:])
                for f in self.facts("proc") if f[0] == label and f[1] == role}

    def raw(self, name):
        with open(os.path.join(self.out, "resp", name), "rb") as f:
            return f.read()

    def resp(self, name):
        r = Response(self.raw(name))
        assert r.rest == b"", (name, r.rest[:200])
        return r

    def text(self, name):
        with open(os.path.join(self.out, name), errors="replace") as f:
            return f.read()

    def file(self, name):
        with open(os.path.join(self.root, name), "rb") as f:
            return f.read()


@pytest.fixture(scope="module")
def guest(tmp_path_factory):
    for path in (BIN, HOOK_BIN, ROUTER_BIN):
        if not os.path.exists(path):
            pytest.fail("%s missing: run make test-arm64-kernel (it builds both)" % path)
    base = tmp_path_factory.mktemp("arm64")
    root = base / "www"
    (root / "dir").mkdir(parents=True)
    (root / "a.txt").write_bytes(A_TXT)
    (root / "dir" / "f.txt").write_bytes(F_TXT)
    (root / "big.bin").write_bytes(os.urandom(BIG))
    os.symlink("a.txt", root / "link.txt")
    (base / "secret.txt").write_bytes(b"outside the root\n")
    out = base / "out"
    argv = [RUN, "--timeout", str(GUEST_TIMEOUT), "--out", str(out),
            "--add", "%s=/bin/pith-tiny-testhook" % HOOK_BIN,
            "--add", "%s=/bin/pith-router" % ROUTER_BIN, "--add", "%s=/www" % root,
            "--add", "%s=/secret.txt" % (base / "secret.txt"), BIN, GUEST]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=GUEST_TIMEOUT + 30)
    if p.returncode == 77:
        why = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "no reason given"
        pytest.skip("the arm64 guest cannot run here: %s"
                    % why.replace("qemu-arm64-run: the arm64 guest cannot run here: ", ""))
    assert (out / "record").exists(), (
        "scripts/qemu-arm64-run exited %d\nstdout:\n%s\nstderr:\n%s"
        % (p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return Guest(str(out), str(root), p)


def test_the_guest_script_ran_to_the_end(guest):
    """Nothing it waited for failed to happen; otherwise the error logs
    (a worker killed by signal 31 is a system call missing from the
    aarch64 allow-list) say why."""
    logs = "\n".join("%s:\n%s" % (n, guest.text(n)) for n in sorted(os.listdir(guest.out))
                     if n.endswith(".err"))
    problems = [" ".join(l) for l in guest.lines if l[0] in ("missing", "fail")]
    assert guest.run.returncode == 0 and not problems and guest.lines[-1] == ["done"], (
        "exit %d; %s\n%s\n%s" % (guest.run.returncode, problems, guest.run.stderr[-2000:], logs))


def start_line(g, label):
    line = g.text(label + ".err").splitlines()[0]
    assert re.match(r"pith \S+ serving /www on http://127\.0\.0\.1:\d+/ \(", line), line
    return line


def test_the_guest_is_arm64_with_landlock_and_seccomp(guest):
    release, machine = guest.fact("kernel")
    assert machine == "aarch64" and release.startswith("6."), (release, machine)
    assert "landlock" in guest.fact("lsm")[0].split(","), guest.fact("lsm")
    for label in ("main", "hook"):
        assert re.search(r", epoll, openat2, sandbox: Landlock ABI [1-9]\d* \+ seccomp\)$",
                         start_line(guest, label)), start_line(guest, label)
    assert start_line(guest, "nosb").endswith(", epoll, openat2, no sandbox)")


def test_every_worker_is_filtered_and_the_master_is_not(guest):
    sandboxed = {"Seccomp": "2", "NoNewPrivs": "1", "Seccomp_filters": "1"}
    workers = guest.procs("main", "worker")
    replacements = guest.procs("main", "replacement")
    assert len(workers) == 2 and len(replacements) == 2, guest.lines
    assert not set(workers) & set(replacements)
    for st in list(workers.values()) + list(replacements.values()):
        assert st == sandboxed, st
    for label in ("worker", "replacement"):
        assert list(guest.procs("hook", label).values()) == [sandboxed], guest.lines
    assert list(guest.procs("main", "master").values())[0]["Seccomp"] == "0"


def test_every_response_exact(guest):
    mtime = os.stat(os.path.join(guest.root, "a.txt")).st_mtime
    r = guest.resp("get")
    assert r.status == 200 and r.body == A_TXT, r
    assert r.get("Content-Type") == "text/plain; charset=utf-8"
    assert r.get("Content-Length") == str(len(A_TXT))
    assert r.get("Last-Modified") == email.utils.formatdate(int(mtime), usegmt=True)
    etag = r.get("ETag")
    assert re.fullmatch(r'"[0-9a-f]+-12-[0-9a-f]+-0"', etag), etag

    h = Response(guest.raw("head"), head_only=True)
    assert h.status == 200 and h.rest == b"", h
    assert h.get("Content-Length") == "18" and h.get("ETag") == etag

    r = guest.resp("range")
    assert r.status == 206 and r.body == A_TXT[7:12], r
    assert r.get("Content-Range") == "bytes 7-11/18"

    r = guest.resp("inm")
    assert r.status == 304 and r.body == b"" and r.get("ETag") == etag, r

    r = guest.resp("listing")
    assert r.status == 200 and r.get("Content-Type") == "text/html; charset=utf-8", r
    assert b'<a href="./f.txt">f.txt</a>' in r.body, r.body

    for name, status in [("notfound", 404), ("dotdot", 400), ("encoded_dotdot", 400),
                         ("symlink", 403)]:
        r = guest.resp(name)
        assert r.status == status and b"outside the root" not in r.body, (name, r)
        assert r.get("Content-Type") == "text/html; charset=utf-8", (name, r)


def test_two_pipelined_requests_on_one_connection(guest):
    first = Response(guest.raw("pipelined"))
    second = Response(first.rest)
    assert first.status == 200 and first.body == A_TXT and first.get("Connection") is None
    assert second.status == 200 and second.body == F_TXT and second.get("Connection") == "close"
    assert second.rest == b""


def test_big_file_and_a_range_of_it(guest):
    big = guest.file("big.bin")
    h = Response(guest.raw("big.head"), head_only=True)
    assert h.status == 200 and h.get("Content-Length") == str(BIG) and h.rest == b"", h
    assert guest.fact("body", "big") == [str(BIG), hashlib.sha256(big).hexdigest()]
    r = guest.resp("big_range")
    lo, hi = BIG_RANGE
    assert r.status == 206 and r.body == big[lo:hi + 1], r
    assert r.get("Content-Range") == "bytes %d-%d/%d" % (lo, hi, BIG)


def served(guest):
    """(method, target, status, body bytes sent, all bytes sent) of each
    request in BEFORE_METRICS."""
    out = []
    pipelined = [Response(guest.raw("pipelined"))]
    pipelined.append(Response(pipelined[0].rest))
    for name, method, target in BEFORE_METRICS:
        if name == "big":
            head = guest.raw("big.head")
            size = int(guest.fact("body", "big")[0])
            r = Response(head, head_only=True)
            out.append((method, target, r.status, size, len(head) + size))
            continue
        r = pipelined.pop(0) if name == "pipelined" else Response(guest.raw(name),
                                                                    head_only=(method == "HEAD"))
        out.append((method, target, r.status, r.body_size, r.size))
    return out


def metrics(guest, name):
    r = guest.resp(name)
    assert r.status == 200 and r.get("Content-Type").startswith("text/plain; version=0.0.4"), r
    return {k: int(v) for k, v in (l.rsplit(" ", 1) for l in r.body.decode().splitlines()
                                   if l and not l.startswith("#"))}


def test_status_port_counts_what_was_served(guest):
    m = metrics(guest, "metrics")
    done = served(guest)
    want = collections.Counter('pith_requests_total{class="%dxx",method="%s"}'
                               % (status // 100, method) for method, _, status, _, _ in done)
    got = {k: v for k, v in m.items() if k.startswith("pith_requests_total") and v}
    assert got == dict(want), (got, want)
    assert m["pith_sent_bytes_total"] == sum(d[4] for d in done), m
    assert m['pith_connections_closed_total{reason="done"}'] == len(BEFORE_METRICS) - 1
    assert m["pith_workers_up"] == 2 and m["pith_worker_restarts_total"] == 0, m
    r = guest.resp("healthz")
    assert r.status == 200 and r.body == b"ok\n", r
    after = metrics(guest, "metrics_after")
    assert after["pith_workers_up"] == 2 and after["pith_worker_restarts_total"] == 2, after


LOG_RE = re.compile(r'127\.0\.0\.1 - - \[[^]]+\] "(\S+) (\S+) HTTP/1\.1" (\d{3}) (\d+) "-" "-"$')


def log_entries(guest, name):
    out = []
    for line in guest.text(name).splitlines():
        m = LOG_RE.match(line)
        assert m, (name, line)
        out.append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4))))
    return out


def test_access_log_reopened_on_hup(guest):
    """Every request in exactly one of the two logs, with its status and
    size; the ones before the HUP in the old one; the replacements (started
    after it) write only the new one. Each worker buffers its lines, so the
    order within a file is not the order of the requests."""
    pre = [d[:4] for d in served(guest)]
    tries = int(guest.fact("hup-tries")[0])
    after_hup = [("GET", "/a.txt?after-hup=%d" % i, 200, len(A_TXT)) for i in range(1, tries + 1)]
    replaced = [("GET", "/a.txt", 200, len(A_TXT))] * 4
    old, new = log_entries(guest, "main.log.1"), log_entries(guest, "main.log")
    assert sorted(old + new) == sorted(pre + after_hup + replaced), (old, new)
    assert collections.Counter(pre) - collections.Counter(old) == collections.Counter(), old
    assert after_hup[-1] in new and collections.Counter(replaced) <= collections.Counter(new), new


ERR_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ pith\[(\d+)\]: "
CLOSED_RE = re.compile(ERR_TIME + r"worker (\d) \(pid (\d+)\) closed connections: peer=(\d+) "
                       r"error=(\d+) done=(\d+) timeout=(\d+) shutdown=(\d+) overflow=(\d+) "
                       r"proxy=(\d+)$")
DIED_RE = re.compile(ERR_TIME + r"worker (\d) \(pid (\d+)\) was killed by signal (\d+); "
                     r"starting a new one in 0 s$")


def error_log(guest, label):
    """(deaths {pid: signal}, closes {pid: connections}, other lines) after
    the start line (and the status line)."""
    deaths, closes, other = {}, {}, []
    for line in guest.text(label + ".err").splitlines()[1:]:
        if line.startswith("pith: status on http://127.0.0.1:"):
            continue
        m, c = DIED_RE.match(line), CLOSED_RE.match(line)
        if m:
            deaths[int(m.group(3))] = int(m.group(4))
        elif c:
            assert c.group(1) == c.group(3), line
            closes[int(c.group(3))] = sum(int(c.group(i)) for i in range(4, 11))
        else:
            other.append(line)
    return deaths, closes, other


def test_killed_workers_are_replaced_sandboxed_and_serve(guest):
    workers = guest.procs("main", "worker")
    replacements = guest.procs("main", "replacement")
    assert sorted(int(f[1]) for f in guest.facts("killed") if f[0] == "main") == sorted(workers)
    deaths, closes, other = error_log(guest, "main")
    # SIGKILL from the guest script, nothing else: no SIGSYS, no exit.
    assert deaths == {pid: 9 for pid in workers}, guest.text("main.err")
    assert other == [], other
    # Only the replacements served the last four requests, and said so at the stop.
    for i in range(1, 5):
        r = guest.resp("replaced%d" % i)
        assert r.status == 200 and r.body == A_TXT, r
    assert set(closes) == set(replacements) and sum(closes.values()) == 4, closes


def test_graceful_stop_exits_0_and_leaves_nothing(guest):
    for label in ("main", "nosb", "hook", "router"):
        assert guest.fact("exit", label) == ["0"], label
        assert guest.fact("left", label) == ["0"], label


def test_control_without_the_sandbox_the_hooks_succeed(guest):
    """The same binary and requests as the next test, --no-sandbox: the
    open outside the root works, getcwd does not kill, Seccomp is 0. So
    the refusals below are the sandbox's, and Seccomp: 2 above means
    something."""
    (pid, st), = guest.procs("nosb", "worker").items()
    assert st == {"Seccomp": "0", "NoNewPrivs": "0", "Seccomp_filters": "0"}, st
    assert guest.procs("nosb", "after") == {pid: st}, "the worker survived"
    r = guest.resp("nosb_get")
    assert r.status == 200 and r.body == A_TXT, r
    assert guest.resp("nosb_outside").status == 200
    assert guest.resp("nosb_forbidden").status == 200
    deaths, closes, other = error_log(guest, "nosb")
    assert deaths == {} and list(closes) == [pid], guest.text("nosb.err")
    assert [l.split(": ", 1)[1] for l in other] == [
        "test hook: opened /etc/passwd outside the root"], other


def test_landlock_refuses_and_seccomp_kills(guest):
    (pid, _), = guest.procs("hook", "worker").items()
    (new, _), = guest.procs("hook", "replacement").items()
    r = guest.resp("hook_outside")
    assert r.status == 403, r
    assert guest.raw("hook_forbidden") == b"", "the worker died before answering"
    r = guest.resp("hook_after")
    assert r.status == 200 and r.body == A_TXT, r
    deaths, closes, other = error_log(guest, "hook")
    assert deaths == {pid: 31} and closes == {new: 1}, guest.text("hook.err")  # 31: SIGSYS
    assert [l.split(": ", 1)[1] for l in other] == [
        'test hook: open outside the root "/etc/passwd" failed: Permission denied'], other


# The router profile may send smaller bodies than the full build for these
# alone (issue 21): the listing page and the built-in error pages.
ROUTER_OWN_BODIES = {"listing", "notfound", "dotdot", "encoded_dotdot", "symlink"}


def fields_but(r, *names):
    skip = {n.lower() for n in ("Date",) + names}
    return [(k.lower(), v) for k, v in r.fields if k.lower() not in skip]


def test_router_profile_starts_unsandboxed_with_two_workers(guest):
    line = start_line(guest, "router")
    assert line.endswith(" (2 workers, epoll, openat2, router)"), line
    workers = guest.procs("router", "worker")
    assert len(workers) == 2, guest.lines
    for st in workers.values():
        assert st["Seccomp"] == "0", st


def test_router_profile_answers_as_pith_tiny_on_arm64(guest):
    """Status line, every field but Date, and the body of each request of
    the main run, from pith-router; the listing and error pages only by
    status, fields and media type (their bodies are the router's own)."""
    names = sorted({name for name, _, _ in BEFORE_METRICS} - {"pipelined", "big"})
    for name in names:
        head_only = name == "head"
        full = Response(guest.raw(name), head_only=head_only)
        router = Response(guest.raw("router_" + name), head_only=head_only)
        assert router.rest == b"", (name, router.rest[:200])
        assert router.status_line == full.status_line, (name, router, full)
        if name in ROUTER_OWN_BODIES:
            assert fields_but(router, "Content-Length") == fields_but(full, "Content-Length"), name
            assert router.body and b"outside the root" not in router.body, (name, router)
        else:
            assert fields_but(router) == fields_but(full), name
            assert router.body == full.body, name
    pipelined = [Response(guest.raw("router_pipelined"))]
    pipelined.append(Response(pipelined[0].rest))
    assert [(r.status, r.body) for r in pipelined] == [(200, A_TXT), (200, F_TXT)]
    assert pipelined[1].rest == b"" and pipelined[1].get("Connection") == "close"
    big = Response(guest.raw("router_big.head"), head_only=True)
    assert fields_but(big) == fields_but(Response(guest.raw("big.head"), head_only=True))
    assert guest.fact("body", "router_big") == guest.fact("body", "big")


def test_router_profile_replaces_a_killed_worker(guest):
    killed = [int(f[1]) for f in guest.facts("killed") if f[0] == "router"]
    assert len(killed) == 1 and killed[0] in guest.procs("router", "worker"), guest.lines
    for i in range(1, 5):
        r = guest.resp("router_replaced%d" % i)
        assert r.status == 200 and r.body == A_TXT, r
