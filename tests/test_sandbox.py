# SPDX-License-Identifier: MIT
"""The worker sandbox (issue 14; README "Security model"): Landlock and
seccomp in every worker unless --no-sandbox, said in the start line and
visible in /proc; the ASan build's test hooks prove a forbidden system call
kills the worker (and it is replaced) and an open outside the root is
refused and logged. Every build proves it from the outside: pith-asan with
its own hooks, pith and pith-tiny through their test-hook twins
(pith-testhook, build/tiny/pith-tiny-testhook: the same objects with
src/testhook/ linked in, never installed). Both loops."""

import os
import re
import signal
import socket
import stat

import pytest

import http_raw
from conftest import PITH_BIN, PITH_TINY, hook_bin, pid_alive, run_pith
from gaputil import poll_until, proc_status

ASAN = "asan" in os.path.basename(PITH_BIN)
# The calls no allow-list has (src/testhook/hooks.h); src/sys/arch/ has no
# ptrace for pith-tiny's hook.
FORBIDDEN = ["getcwd", "execve", "socket", "connect"] + ([] if PITH_TINY else ["ptrace"])


SANDBOX_RE = re.compile(r", (no sandbox|sandbox: [^,)]*)\)\s*$")


def sandbox_words(s):
    m = SANDBOX_RE.search(s.start_line)
    assert m, s.start_line
    return m.group(1)


def landlock_on(s):
    return "Landlock ABI" in sandbox_words(s)


def seccomp_on(s):
    w = sandbox_words(s)
    return "seccomp" in w and "no seccomp" not in w


def test_start_line_names_the_sandbox(pith, docroot):
    s = pith()
    w = sandbox_words(s)
    assert w.startswith("sandbox: "), w
    # This kernel's answer, checked against the kernel itself.
    lsm = "/sys/kernel/security/lsm"
    if os.path.exists(lsm) and "landlock" not in open(lsm).read():
        assert "Landlock ABI" not in w
    off = pith("--no-sandbox")
    assert sandbox_words(off) == "no sandbox"


def test_workers_are_filtered_unless_no_sandbox(pith, docroot):
    s = pith()
    w = s.worker()
    # The worker confines itself at the end of its setup: poll for it.
    assert poll_until(lambda: proc_status(w)["NoNewPrivs"] == ["1"], 5)
    st = proc_status(w)
    if seccomp_on(s):
        assert st["Seccomp"] == ["2"] and st["Seccomp_filters"] == ["1"]
    # The master is never confined: it restarts workers and reopens logs.
    assert proc_status(s.pid)["Seccomp"] == ["0"]
    assert s.get("/index.html").status == 200
    off = pith("--no-sandbox")
    st = proc_status(off.worker())
    assert st["Seccomp"] == ["0"] and st["NoNewPrivs"] == ["0"]


def test_sandboxed_worker_serves_every_kind_of_response(pith, docroot, tmp_path):
    """One request of each kind the worker makes system calls for: file,
    cached file, sendfile, range, multipart (getrandom), listing, redirect,
    symlink walk, error; then a log reopen on HUP. Any call missing from the
    allow-list kills the worker, which the fixture reports."""
    log = tmp_path / "access.log"
    s = pith("--log", str(log), "--follow-symlinks", env={"PITH_RESOLVE": "walk"})
    for target, status in [("/index.html", 200), ("/index.html", 200), ("/big.bin", 200),
                           ("/sub/", 200), ("/sub", 301), ("/noindex/", 200),
                           ("/link_in", 200), ("/nope", 404), ("/.env", 403)]:
        assert s.get(target).status == status, target
    assert s.get("/1k.bin", headers={"Range": "bytes=0-1,5-9"}).status == 206
    assert s.get("/noindex/?format=json").status == 200
    os.rename(str(log), str(tmp_path / "access.log.1"))
    s.signal(signal.SIGHUP)
    assert poll_until(lambda: log.exists(), 5), "the master recreates the log"
    assert poll_until(lambda: s.get("/index.html").status == 200 and
                      b"GET /index.html" in log.read_bytes(), 5), "the worker reopens it"


def test_release_binary_has_no_test_hooks(pith, docroot):
    """pith and pith-tiny answer the hook paths as the dotfiles they are."""
    if ASAN:
        pytest.skip("pith-asan is a test build: its hooks are the point")
    with open(PITH_BIN, "rb") as f:
        assert b"/.pith-test/" not in f.read(), "the release binary carries the hooks"
    s = pith(allow_worker_crash=True)
    for target in ["/.pith-test/forbidden-syscall", "/.pith-test/open-outside",
                   "/.pith-test/asan-report"] + \
            ["/.pith-test/forbidden/" + c for c in FORBIDDEN]:
        assert s.get(target).status == 403, target
    assert s.get("/index.html").status == 200
    text = s.stderr_text()
    assert "killed by signal" not in text and "test hook" not in text, text


@pytest.mark.parametrize("call", FORBIDDEN)
def test_forbidden_syscall_kills_the_worker_and_it_is_replaced(pith, docroot, call):
    """Each call a compromised worker would want (a shell, a socket of its
    own, a connection out, another process's memory) dies of SIGSYS in the
    filter: an allow-list that lets one through, or a filter whose default
    action allows, answers 200 instead."""
    s = pith(allow_worker_crash=True, binary=hook_bin())
    if not seccomp_on(s):
        pytest.fail("seccomp is not available: " + s.start_line)
    first = s.worker()
    assert poll_until(lambda: proc_status(first)["Seccomp"] == ["2"], 5)
    with s.conn() as c:
        c.request("GET", "/.pith-test/forbidden/" + call)
        try:
            got = c.wait_closed(5.0)
        except socket.timeout:
            got = b"(the connection stayed open)"
    assert got == b"", "the worker survived %s(): %r" % (call, got[:200])
    assert poll_until(lambda: "(pid %d) was killed by signal %d" % (first, signal.SIGSYS)
                      in s.stderr_text(), 5), s.stderr_text()
    assert poll_until(lambda: s.workers() and s.workers()[0] != first, 5)
    assert poll_until(lambda: s.get("/index.html").status == 200, 5)


def test_open_outside_the_root_is_refused_and_logged(pith, docroot):
    """Landlock, seen from outside: the worker's own open of /etc/passwd
    (not beneath the root) fails with EACCES; without Landlock it works,
    which this kernel must not allow."""
    s = pith(binary=hook_bin())
    if not landlock_on(s):
        pytest.fail("Landlock is not available: " + s.start_line)
    r = s.get("/.pith-test/open-outside")
    assert r.status == 403
    assert poll_until(lambda: 'test hook: open outside the root "/etc/passwd" failed: '
                      'Permission denied' in s.stderr_text(), 5), s.stderr_text()
    assert "opened /etc/passwd" not in s.stderr_text()
    assert s.get("/index.html").status == 200
    off = pith("--no-sandbox", binary=hook_bin())
    assert off.get("/.pith-test/open-outside").status == 200
    assert poll_until(lambda: "opened /etc/passwd" in off.stderr_text(), 5), off.stderr_text()


def test_group_and_chroot_need_user(docroot):
    for args in (["--group", "root"], ["--chroot", "/"]):
        p = run_pith("--port", "0", *args, docroot.root)
        assert p.returncode == 2 and "needs --user" in p.stderr, p.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="--user needs the tests to run as root")
def test_unknown_group_and_chroot_exit_1(docroot, tmp_path):
    p = run_pith("--port", "0", "--user", "nobody", "--group", "no-such-group-x", docroot.root)
    assert p.returncode == 1 and "no such group" in p.stderr, p.stderr
    p = run_pith("--port", "0", "--user", "nobody", "--chroot", str(tmp_path / "nope"),
                 docroot.root)
    assert p.returncode == 1 and "--chroot" in p.stderr, p.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="--user needs the tests to run as root")
def test_chroot_with_user_and_group_serves_and_reopens_the_log(pith, tmp_path):
    base = tmp_path / "w"
    root, jail, logs = base / "root", base / "jail", base / "logs"
    for d in (root, jail, logs):
        d.mkdir(parents=True)
    p = tmp_path
    while str(p) != "/" and str(p).startswith("/tmp/"):
        os.chmod(p, os.stat(p).st_mode | stat.S_IXOTH)
        p = p.parent
    for d in (base, root, jail, logs):
        os.chmod(d, 0o755)
    (root / "f.txt").write_bytes(b"chrooted\n")
    log = logs / "access.log"
    s = pith("--user", "nobody", "--group", "nogroup", "--chroot", str(jail),
             "--log", str(log), root=str(root))
    assert sandbox_words(s).endswith("+ chroot"), s.start_line
    w = s.worker()
    assert poll_until(lambda: os.readlink("/proc/%d/root" % w) == str(jail), 5)
    import grp
    assert int(proc_status(w)["Gid"][0]) == grp.getgrnam("nogroup").gr_gid
    r = s.get("/f.txt")
    assert r.status == 200 and r.body == b"chrooted\n"
    os.rename(str(log), str(logs / "access.log.1"))
    s.signal(signal.SIGHUP)
    assert poll_until(lambda: log.exists(), 5)
    assert poll_until(lambda: s.get("/f.txt").status == 200 and b"GET /f.txt" in
                      log.read_bytes(), 5), s.stderr_text()


def test_sanitizer_reports_from_inside_the_sandbox(pith, docroot):
    """The ASan runtime's report needs system calls of its own (its
    allow-list in src/testhook/libc.c): a report must come out whole, the
    worker must exit as ASan makes it (status 1), not die of SIGSYS."""
    if not ASAN:
        pytest.skip("only pith-asan has a sanitizer runtime to report from the sandbox")
    s = pith(allow_worker_crash=True, allow_sanitizer=".")
    first = s.worker()
    with s.conn() as c:
        c.request("GET", "/.pith-test/asan-report")
        c.wait_closed(5.0)
    assert poll_until(lambda: "(pid %d) exited with status 1" % first in s.stderr_text(), 10), \
        s.stderr_text()
    text = s.stderr_text()
    assert "ERROR: AddressSanitizer: stack-buffer-overflow" in text and "SUMMARY:" in text, text
    assert "killed by signal" not in text
    assert poll_until(lambda: s.get("/index.html").status == 200, 5)


def _status_process(s, sp):
    """The master's child that listens on the --status port."""
    from conftest import listening_ports

    def find():
        return [p for p in s.wait_workers(2) if sp in listening_ports(p)]
    # Not awaited by the harness where workers may die (no READY=1 wait).
    found = poll_until(lambda: len(find()) == 1 and find(), 5)
    assert found, (s.workers(), s.stderr_text())
    return found[0]


def test_status_process_is_confined_too(pith, docroot):
    """The --status process parses requests from the network as a worker
    does: it gets Landlock (no file at all: it serves none) and the epoll
    worker's seccomp allow-list, and still answers every request; never
    with --no-sandbox."""
    from opsnet_util import metrics, status_get, status_port

    s = pith("--status", "127.0.0.1:0")
    sp = status_port(s)
    p = _status_process(s, sp)
    assert poll_until(lambda: proc_status(p)["NoNewPrivs"] == ["1"], 5), proc_status(p)
    if seccomp_on(s):
        st = proc_status(p)
        assert st["Seccomp"] == ["2"] and st["Seccomp_filters"] == ["1"], st
    assert s.get("/index.html").status == 200
    # Every kind of answer it gives, with the filter on.
    assert status_get(sp, "/healthz").status == 200
    assert any(k.startswith("pith_requests_total") for k in metrics(sp))
    assert status_get(sp, "/nothing").status == 404
    assert proc_status(p)["State"][0] in "SR"  # alive after all of them
    assert "status process died" not in s.stderr_text()
    off = pith("--no-sandbox", "--status", "127.0.0.1:0")
    st = proc_status(_status_process(off, status_port(off)))
    assert st["Seccomp"] == ["0"] and st["NoNewPrivs"] == ["0"]


def test_status_process_landlock_and_seccomp_from_outside(pith, docroot):
    """The status process's two layers seen from outside (its NoNewPrivs 1
    would come from seccomp alone): its own open of /etc/passwd fails with
    EACCES (Landlock with no file allowed), and a forbidden call kills it
    (seccomp), after which the master starts a new one."""
    from opsnet_util import status_get, status_port

    s = pith("--status", "127.0.0.1:0", allow_worker_crash=True, binary=hook_bin())
    if not (landlock_on(s) and seccomp_on(s)):
        pytest.fail("Landlock and seccomp are not both available: " + s.start_line)
    sp = status_port(s)
    p = _status_process(s, sp)
    assert poll_until(lambda: proc_status(p)["Seccomp"] == ["2"], 5), proc_status(p)
    assert status_get(sp, "/.pith-test/open-outside").status == 403
    assert poll_until(lambda: 'test hook: open outside the root "/etc/passwd" failed: '
                      'Permission denied' in s.stderr_text(), 5), s.stderr_text()
    with http_raw.Conn(sp) as c:
        c.send("GET /.pith-test/forbidden/socket HTTP/1.1\r\nHost: status\r\n\r\n")
        try:
            got = c.wait_closed(5.0)
        except socket.timeout:
            got = b"(the connection stayed open)"
    assert got == b"", "the status process survived socket(): %r" % got[:200]
    assert poll_until(lambda: not pid_alive(p), 5)
    assert poll_until(lambda: "the status process died" in s.stderr_text(), 5), s.stderr_text()
    assert poll_until(lambda: _answers(sp, "/healthz") == 200, 5), s.stderr_text()


def _answers(port, path):
    from opsnet_util import status_get

    try:
        return status_get(port, path).status
    except OSError:
        return None
