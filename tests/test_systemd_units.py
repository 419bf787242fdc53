# SPDX-License-Identifier: MIT
"""dist/systemd/: the units parse (systemd-analyze verify, with ExecStart
pointing at the binary under test), the service's sandbox rates "OK" or
better in `systemd-analyze security --offline=true` (the figure is printed
for the record), and the system call filter lets io_uring through, which
@system-service does not."""

import os
import re
import signal
import subprocess

import http_raw
from conftest import PITH_BIN, REPO
from sdutil import Notify, io_args

UNITS = os.path.join(REPO, "dist", "systemd")
SERVICE = os.path.join(UNITS, "pith.service")
SOCKET = os.path.join(UNITS, "pith.socket")

def directives(path):
    """{key: [values]} of a unit file."""
    out = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith(("#", "[")) and "=" in line:
            k, v = line.split("=", 1)
            out.setdefault(k, []).append(v)
    return out


def test_security_rating_is_ok_or_better():
    p = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager", SERVICE],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for pith\.service: (\d+\.\d+) (\w+)", p.stdout)
    assert m, p.stdout + p.stderr
    score, rating = float(m.group(1)), m.group(2)
    print("systemd-analyze security: exposure %.1f %s" % (score, rating))
    assert rating in ("SAFE", "OK"), p.stdout
    assert score < 2.0


def test_units_verify(tmp_path):
    # The unit as installed names /usr/bin/pith and its man page; verify a
    # copy that names the binary under test instead.
    for name in ("pith.service", "pith.socket"):
        text = open(os.path.join(UNITS, name)).read().replace("/usr/bin/pith", PITH_BIN)
        text = re.sub(r"(?m)^Documentation=.*\n", "", text)
        (tmp_path / name).write_text(text)
    p = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "pith.service"),
                        str(tmp_path / "pith.socket")], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stderr.strip() == "", p.stderr


def test_service_is_notify_and_hardened():
    d = directives(SERVICE)
    for key, want in [("Type", "notify"), ("NotifyAccess", "all"), ("DynamicUser", "yes"),
                      ("ProtectSystem", "strict"), ("ProtectHome", "yes"),
                      ("PrivateTmp", "yes"), ("NoNewPrivileges", "yes"),
                      ("CapabilityBoundingSet", "CAP_NET_BIND_SERVICE"),
                      ("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"),
                      ("ExecReload", "/bin/kill -HUP $MAINPID")]:
        assert d.get(key) == [want], (key, d.get(key))
    assert d["ExecStart"][0].startswith("/usr/bin/pith ")
    s = directives(SOCKET)
    assert s["FileDescriptorName"] == ["http"]


def test_syscall_filter_lets_io_uring_through():
    d = directives(SERVICE)["SystemCallFilter"]
    assert d[0].split()[0] == "@system-service"
    groups = syscall_groups()
    # Allow-lists add up; deny-lists (~) take away from them (systemd.exec(5)).
    allow = [x for line in d if not line.startswith("~") for x in line.split()]
    deny = [x for line in d if line.startswith("~") for x in line.lstrip("~").split()]
    allowed = expand(groups, allow) - expand(groups, deny)
    for call in ("io_uring_setup", "io_uring_enter", "io_uring_register"):
        assert call in allowed and call in d[0].split(), call
    # What pith needs that a deny list could take: raising RLIMIT_NOFILE
    # (@resources), epoll (@io-event) and fork/exec for an upgrade.
    for call in ("prlimit64", "setrlimit", "epoll_ctl", "clone", "execve", "sendto"):
        assert call in allowed | expand(groups, ["@default"]), call


def syscall_groups():
    """{"@group": [members]} from systemd-analyze, members being system calls
    or nested groups."""
    out = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"],
                         capture_output=True, text=True, timeout=60).stdout
    groups, cur = {}, None
    for line in out.splitlines():
        item = line.strip()
        if line.startswith("@"):
            cur = groups.setdefault(item, [])
        elif item and not item.startswith("#") and cur is not None:
            cur.append(item)
    return groups


def expand(groups, names):
    out, todo = set(), list(names)
    while todo:
        n = todo.pop()
        if n.startswith("@"):
            todo += groups[n]
        else:
            out.add(n)
    return out


def test_system_calls_pith_makes_pass_the_filter(tmp_path):
    """pith under strace (master and workers, both loops' start-up probe,
    requests for a small file, a large file, a listing and a 404, a HUP and
    a TERM, readiness messages): every system call it makes is one the
    service's SystemCallFilter= lines allow (@default is always allowed)."""
    d = directives(SERVICE)["SystemCallFilter"]
    groups = syscall_groups()
    # Allow-lists add up; deny-lists (~) take away from them (systemd.exec(5)).
    allow = [x for line in d if not line.startswith("~") for x in line.split()]
    deny = [x for line in d if line.startswith("~") for x in line.lstrip("~").split()]
    allowed = expand(groups, allow) - expand(groups, deny)
    allowed |= expand(groups, ["@default"])
    root = tmp_path / "www"
    (root / "dir").mkdir(parents=True)
    (root / "small.txt").write_text("small\n")
    (root / "large.bin").write_bytes(b"x" * 300000)
    trace = tmp_path / "trace"
    n = Notify(tmp_path)
    # LeakSanitizer needs ptrace, which strace holds: pith-asan checks
    # leaks in every other test.
    env = dict(os.environ, NOTIFY_SOCKET=n.env,
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    p = subprocess.Popen(["strace", "-f", "-qq", "-o", str(trace), PITH_BIN] + io_args() +
                         ["--workers", "2", "--addr", "127.0.0.1", "--port", "0", "--log", "-",
                          str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=env)
    try:
        ready = n.wait_for("READY=1", timeout=30)
        port = int(re.search(r":(\d+)/", ready["STATUS"]).group(1))
        for target in ("/small.txt", "/large.bin", "/dir/", "/missing", "/small.txt"):
            with http_raw.Conn(port) as c:
                assert c.exchange("GET", target).status in (200, 404)
        master = int(ready["MAINPID"])  # strace's child, not strace
        os.kill(master, signal.SIGHUP)
        n.wait_for("RELOADING=1")
        os.kill(master, signal.SIGTERM)
        assert p.wait(30) == 0, p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        n.close()
    made = set()
    for line in trace.read_text().splitlines():
        m = re.match(r"\d+\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]", line)
        if m and not line.split(None, 1)[1].startswith(("+++", "---")):
            made.add(m.group(1))
    assert {"epoll_pwait", "epoll_wait", "io_uring_enter"} & made, sorted(made)
    print("system calls made: %d, e.g. %s" % (len(made), ", ".join(sorted(made)[:8])))
    assert made - allowed == set(), sorted(made - allowed)
