# SPDX-License-Identifier: MIT
"""dist/systemd/: the units parse (systemd-analyze verify, with ExecStart
pointing at the binary under test), the service's sandbox rates "OK" or
better in `systemd-analyze security --offline=true` (the figure is printed
for the record), and the system call filter lets io_uring through, which
@system-service does not."""

import os
import re
import subprocess

from conftest import PITH_BIN, REPO

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
    allow = directives(SERVICE)["SystemCallFilter"][0].split()
    assert allow[0] == "@system-service"
    group = subprocess.run(["systemd-analyze", "syscall-filter", "@system-service"],
                           capture_output=True, text=True, timeout=60).stdout.split()
    for call in ("io_uring_setup", "io_uring_enter", "io_uring_register"):
        assert call in allow or call in group, call
    # What pith needs that a deny list could take: raising RLIMIT_NOFILE
    # (@resources) and epoll (@io-event, in @system-service).
    denied = " ".join(directives(SERVICE)["SystemCallFilter"][1:])
    assert "@resources" not in denied
