# SPDX-License-Identifier: MIT
"""Automatic HTTPS (issue 35): the ACME process is confined on its own
(seccomp and NoNewPrivs in /proc, and it still orders over a CA URL with a
host name, so its resolver thread and Landlock's port rule are exercised),
and no worker can read the account key (the test build's open-outside
hook, pointed at it, is refused by the worker's Landlock), nor write the
challenge table: the ACME process maps it read-write, every worker
read-only (and a worker's seccomp filter has no mprotect to undo that)."""

import glob
import os
import pwd
import re
import stat

import pytest

import http_raw
from acmeutil import Pebble, loopback_name, served, wait_for
from conftest import free_port, hook_bin, listening_ports, proc_children
from gaputil import proc_status

pytestmark = pytest.mark.full_only("ACME")


def status_field(pid, name):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split()[1]
    return None


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def shared_maps(pid):
    """The MAP_SHARED anonymous mappings of pid: {(start, end): perms}."""
    out = {}
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[5] == "/dev/zero" and fields[1][3] == "s":
                start, end = (int(x, 16) for x in fields[0].split("-"))
                out[(start, end)] = fields[1]
    return out


def test_acme_process_confined_and_account_key_unreadable_from_a_worker(pith, tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "who.txt").write_text("a\n")
    hp, tp = free_port(), free_port()
    p = Pebble(tmp_path / "pebble", hp, tp).start()
    try:
        state = str(tmp_path / "state")
        # A name the resolver thread resolves (libcurl answers "localhost"
        # itself), so clone3, futex and the rest run under the filter.
        host = loopback_name() or "localhost"
        args = ["--acme", "ops@example.org", "--acme-ca", "https://%s:%d/dir" % (host, p.port),
                "--acme-ca-root", p.cert, "--acme-dir", state]
        key_glob = os.path.join(state, "accounts", "*.key")
        srv = pith("--site", "a.test=%s" % root, "--port", str(hp), "--tls-port", str(tp), *args,
                   root=False, binary=hook_bin(),
                   env={"PITH_TEST_OPEN_OUTSIDE": os.path.join(state, "accounts",
                                                               "%s-%d-dir.key" % (host, p.port))})
        assert wait_for(lambda: "acme: a.test: obtained a certificate" in srv.stderr_text(), 30), \
            srv.stderr_text()
        assert glob.glob(key_glob)
        # The ACME process is the child without listeners.
        others = [c for c in proc_children(srv.pid) if not listening_ports(c)]
        assert len(others) == 1, "no ACME process beside the workers"
        for pid in others:
            assert status_field(pid, "Seccomp") == "2"
            assert status_field(pid, "NoNewPrivs") == "1"
        # The challenge table (64 slots of over 3 KiB) is the one mapping
        # the workers share with the ACME process read-only: it writes, they
        # answer (they did: the certificate was obtained through them).
        acme_maps = shared_maps(others[0])
        workers = [c for c in proc_children(srv.pid) if c not in others]
        assert workers
        for w in workers:
            ro = {r: p for r, p in shared_maps(w).items() if not p.startswith("rw")}
            assert len(ro) == 1, (w, shared_maps(w))
            (start, end), perms = next(iter(ro.items()))
            assert perms == "r--s" and end - start >= 64 * 3 * 1024, (perms, start, end)
            assert acme_maps.get((start, end)) == "rw-s", acme_maps
        # A worker asked to open the account key: Landlock says no (403),
        # though the file exists and the worker runs as its owner.
        r = http_raw.Conn(hp).exchange("GET", "/.pith-test/open-outside", host="a.test")
        assert r.status == 403
        assert wait_for(lambda: re.search(r"open outside the root \"[^\"]*accounts/%s-\d+"
                                          r"-dir\.key\" failed: Permission denied" % re.escape(host),
                                          srv.stderr_text()), 5), srv.stderr_text()
        assert wait_for(lambda: served(tp, "a.test", p.root()), 5)
        assert "was killed by signal" not in srv.stderr_text()
    finally:
        p.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="--user needs the tests to run as root")
def test_user_owns_the_state_directory_and_the_acme_process_runs_as_it(pith, tmp_path):
    """Started as root with --user nobody (test_gap_user.py's way): the
    master makes the state directory and its folders 0700 and gives them
    to nobody, the ACME process drops to nobody (every uid and gid, no
    capability) and orders as it; every file it writes is nobody's, 0600;
    the master stays root."""
    pw = pwd.getpwnam("nobody")
    base = tmp_path / "world"
    www = base / "www"
    www.mkdir(parents=True)
    (www / "who.txt").write_text("a\n")
    os.chmod(www / "who.txt", 0o644)
    for d in (tmp_path, base, www):
        os.chmod(d, 0o755)
    p = tmp_path  # pytest's 0700 parents: search permission only, as test_gap_user.py does
    while str(p) != "/" and str(p).startswith("/tmp/"):
        os.chmod(p, os.stat(p).st_mode | stat.S_IXOTH)
        p = p.parent
    hp, tp = free_port(), free_port()
    ca = Pebble(base / "pebble", hp, tp).start()  # its API certificate: 0644, for nobody's curl
    try:
        state = base / "state"
        srv = pith("--site", "a.test=%s" % www, "--port", str(hp), "--tls-port", str(tp),
                   "--user", "nobody", *ca.args(state=str(state)), root=False)
        assert wait_for(lambda: "acme: a.test: obtained a certificate" in srv.stderr_text(), 30), \
            srv.stderr_text()
        others = [c for c in proc_children(srv.pid) if not listening_ports(c)]
        assert len(others) == 1, "no ACME process beside the workers"
        st = proc_status(others[0])
        assert [int(x) for x in st["Uid"]] == [pw.pw_uid] * 4, st["Uid"]
        assert [int(x) for x in st["Gid"]] == [pw.pw_gid] * 4, st["Gid"]
        assert int(st["CapEff"][0], 16) == 0 and int(st["CapPrm"][0], 16) == 0
        assert [int(x) for x in proc_status(srv.pid)["Uid"]] == [0] * 4
        for d in ("", "certs", "accounts", "locks", "challenges"):
            s = os.stat(state / d)
            assert (s.st_uid, s.st_mode & 0o777) == (pw.pw_uid, 0o700), (d, s)
        files = [state / "certs" / "a.test.pem"] + list((state / "accounts").iterdir())
        for f in files:
            s = os.stat(f)
            assert (s.st_uid, s.st_mode & 0o777) == (pw.pw_uid, 0o600), (f, s)
        assert wait_for(lambda: served(tp, "a.test", ca.root()), 5)
    finally:
        ca.stop()
