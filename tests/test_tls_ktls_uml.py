# SPDX-License-Identifier: MIT
"""Kernel TLS, verified for real: pith serves HTTPS inside user-mode Linux
(Debian's user-mode-linux, Linux 6.1, booted by scripts/uml-run with the tls
module and its ciphers loaded), on the event loop of this pass (both when
PITH_IO is unset: `make test-ktls`), for TLS 1.2 and 1.3 with AES-GCM and
ChaCha20-Poly1305. The host's own kernel may have no tls module at all.

One guest boot per pass (not per xdist worker: see the guest fixture) runs
tests/tls_ktls_guest.py, which starts pith,
talks to it with Python's ssl module and records what it saw: the
negotiated cipher, every response's status, headers and body digest, and
/proc/net/tls_stat before and after each connection. The tests here judge
that record against the files on the host: a 3 MiB body, a Range, a HEAD,
keep-alive and three pipelined requests, byte for byte; and that the
kernel's software TLS counters rose, so kernel TLS carried the bytes
(TlsTxSw: a socket switched to kernel TLS for sending). pith does not
offload receiving (see below); the rig check shows the guest could.

Where user-mode Linux cannot run (not installed, or the guest does not
boot), the module is skipped with scripts/uml-run's reason; CI installs it
(scripts/deps) and must run it. The ASan build is skipped: its shadow memory
lies beyond the guest's 512 GiB user address space.
"""

import fcntl
import hashlib
import json
import os
import subprocess

import pytest

import tlscerts
from conftest import PITH_BIN, PITH_IO, REPO
from tls_ktls_guest import CASES, H2_AT_ONCE, PIPELINED_FROM, REQUESTS
from tlsutil import answered_key_update_first

pytestmark = [pytest.mark.full_only("TLS"), pytest.mark.xdist_group("ktls_uml")]

UML_RUN = os.path.join(REPO, "scripts", "uml-run")
GUEST = os.path.join(REPO, "tests", "tls_ktls_guest.py")
LOOPS = [PITH_IO] if PITH_IO else ["epoll", "uring"]
BIG = 3 * 1024 * 1024
GUEST_TIMEOUT = 420  # boot, then 6 cases per loop under ptrace; ~25 s per loop idle


def _sanitized_build():
    try:
        with open(PITH_BIN, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


def _boot(base):
    """Boots the guest once into base: its record (result.json) and the
    files it served (root/). Returns None, or why it skips ("skip: ...") or
    fails ("fail: ...")."""
    pki_dir = base / "pki"
    pki_dir.mkdir()
    pki = tlscerts.make_pki(str(pki_dir))
    root = base / "root"
    root.mkdir()
    files = {"/big.bin": os.urandom(BIG), "/small.txt": b"small file over TLS\n" * 101}
    for name, data in files.items():
        (root / name.lstrip("/")).write_bytes(data)
    out = base / "result.json"
    cert, key = pki["ecdsa"]
    argv = [UML_RUN, "--timeout", str(GUEST_TIMEOUT), "--", "/usr/bin/python3", GUEST, "pith",
            "--bin", PITH_BIN, "--loops", ",".join(LOOPS), "--root", str(root),
            "--cert", cert, "--key", key, "--ca", pki["ca"], "--out", str(out)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=GUEST_TIMEOUT + 30)
    if p.returncode == 77:
        why = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "no reason given"
        return "skip: user-mode Linux cannot run here: %s" % why.replace(
            "uml-run: user-mode Linux cannot run here: ", "")
    if p.returncode != 0 or not out.exists():
        return "fail: scripts/uml-run exited %d\nstdout:\n%s\nstderr:\n%s" % (
            p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    return None


def _shared_base(tmp_path_factory):
    """Where the pass's one boot lives. Under pytest-xdist the workers share
    the directory above their own base temp, and PYTEST_XDIST_TESTRUNUID
    names this pass there; in one process, the module's own directory."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        return tmp_path_factory.mktemp("ktls")
    base = tmp_path_factory.getbasetemp().parent / ("ktls-" + run)
    base.mkdir(exist_ok=True)
    return base


@pytest.fixture(scope="module")
def guest(tmp_path_factory):
    """The guest's record, and the files it was served. One boot per pass
    (it takes a core for minutes): the module's tests share an xdist group
    (the Makefile runs with --dist loadgroup), and should they land on
    several workers all the same, the first to take the lock boots and the
    others read its verdict and record."""
    if _sanitized_build():
        pytest.skip("the ASan build cannot run in user-mode Linux: ASan's shadow memory "
                    "lies beyond the guest's 512 GiB user address space")
    base = _shared_base(tmp_path_factory)
    verdict = base / "verdict"
    with open(base / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not verdict.exists():
            verdict.write_text(_boot(base) or "ok")
    why = verdict.read_text()
    if why.startswith("skip: "):
        pytest.skip(why[len("skip: "):])
    assert why == "ok", why[len("fail: "):]
    with open(base / "result.json") as f:
        record = json.load(f)
    record["files"] = {"/" + n: (base / "root" / n).read_bytes() for n in ("big.bin", "small.txt")}
    return record


def _loop(guest, loop):
    r = guest["loops"][loop]
    assert r["listening"], "pith did not listen on the TLS port in the guest: %s\nstderr:\n%s" % (
        " ".join(r["argv"]), r["stderr"])
    return r


def _case(guest, loop, version, cipher):
    r = _loop(guest, loop)
    c = r["cases"]["%s %s" % (version, cipher)]
    assert c["rc"] == 0, "the client failed:\n%s\npith's stderr:\n%s" % (c["stderr"], r["stderr"])
    return c


def _expected(files, method, path, rng):
    """(status, body) that a correct server sends for the request."""
    data = files[path]
    if rng is None:
        return 200, b"" if method == "HEAD" else data
    first, last = rng[len("bytes="):].split("-")
    if first == "":
        return 206, data[-int(last):]
    return 206, data[int(first):int(last) + 1]


CASE_IDS = ["%s-%s" % c for c in CASES]


def test_rig_kernel_offloads_openssl_s_server(guest):
    # The rig itself, without pith: if this fails, the guest (modules,
    # kernel, OpenSSL) is at fault, not pith.
    s = guest["standin"]
    assert s.get("listening") and "error" not in s, s
    assert s["head"].startswith("HTTP/1.0 200"), s
    assert s["sha256"] == hashlib.sha256(guest["files"]["/big.bin"]).hexdigest(), (
        "openssl s_server's body differs (%d bytes)" % s["length"])
    before, after = s["stat_before"], s["stat_after"]
    assert after["TlsTxSw"] > before["TlsTxSw"] and after["TlsRxSw"] > before["TlsRxSw"], (before,
                                                                                           after)


@pytest.mark.parametrize("loop", LOOPS)
def test_pith_starts_with_kernel_tls_and_stops_cleanly(guest, loop):
    r = _loop(guest, loop)
    assert r["exit"] == 0, "pith exited %r\n%s" % (r["exit"], r["stderr"])
    for bad in ("was killed by signal", "exited with status", "AddressSanitizer", "runtime error:"):
        assert bad not in r["stderr"], r["stderr"]


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("version,cipher", CASES, ids=CASE_IDS)
def test_bodies_are_byte_exact(guest, loop, version, cipher):
    c = _case(guest, loop, version, cipher)
    assert (c["version"], c["cipher"]) == (version, cipher)
    assert c["alpn"] == "http/1.1"
    assert len(c["responses"]) == len(REQUESTS)
    for i, ((method, path, rng), got) in enumerate(zip(REQUESTS, c["responses"])):
        where = "request %d (%s %s%s%s)" % (i, method, path, " Range: " + rng if rng else "",
                                            ", pipelined" if i >= PIPELINED_FROM else "")
        status, body = _expected(guest["files"], method, path, rng)
        assert got["status"] == status, where
        assert got["length"] == len(body), where
        assert got["sha256"] == hashlib.sha256(body).hexdigest(), where + ": the body differs"
        size = len(guest["files"][path])
        if method == "HEAD":
            assert got["headers"].get("content-length") == str(size), where
        elif rng:
            first = size - len(body) if rng.startswith("bytes=-") else int(rng[6:].split("-")[0])
            assert got["headers"].get("content-range") == "bytes %d-%d/%d" % (
                first, first + len(body) - 1, size), where
        assert got["headers"].get("connection", "").lower() != "close", where
    assert c["leftover"] == 0, "bytes after the last response"


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("version,cipher", CASES, ids=CASE_IDS)
def test_kernel_tls_sent_the_bytes(guest, loop, version, cipher):
    c = _case(guest, loop, version, cipher)
    before, after = c["stat_before"], c["stat_after"]
    assert after["TlsTxSw"] > before["TlsTxSw"], (
        "no socket switched to kernel TLS for sending (TlsTxSw %d -> %d); pith's stderr:\n%s"
        % (before["TlsTxSw"], after["TlsTxSw"], guest["loops"][loop]["stderr"]))
    assert after["TlsDecryptError"] == before["TlsDecryptError"]


# Receiving is not offloaded: the event loop owns the socket's reads and
# hands ciphertext to OpenSSL through a memory BIO (docs/DESIGN.md, HTTPS),
# so OpenSSL cannot switch the receive side to kernel TLS; requests are read
# with SSL_read. The rig check above proves the kernel could.


@pytest.mark.parametrize("loop", LOOPS)
def test_a_key_update_request_gets_no_data_under_the_old_key(guest, loop):
    """RFC 8446 4.6.3: a client's KeyUpdate with update_requested must be
    answered by one of ours before our next application data. Linux 6.1's
    kernel TLS cannot take a new sending key, and OpenSSL 3.0 would send its
    KeyUpdate only from an SSL_write, which pith does not use there: so pith
    ends such a connection rather than send more under the old key (the
    client reconnects). Userspace TLS answers it (test_tls_server.py)."""
    r = _loop(guest, loop)
    k = r.get("key_update", {"error": "no key update case ran"})
    assert "error" not in k, k
    events = [e for e in k["events"] if e.endswith(("response", "KeyUpdate"))]
    assert events[:2] == ["response", "client KeyUpdate"], k["events"]
    assert answered_key_update_first(events), (
        "a response followed the client's KeyUpdate request without a KeyUpdate of the server's "
        "first: %s" % events)
    assert "key_update_closed=1" in r["stderr"], r["stderr"]


@pytest.mark.parametrize("loop", LOOPS)
def test_http2_over_kernel_tls_is_byte_exact(guest, loop):
    """HTTP/2 (ALPN h2, TLS 1.3) on a socket kernel TLS sends for: the
    frames go out through the loop's plain sends (the kernel makes the
    records), corked for a body of several buffers, with
    TCP_NOTSENT_LOWAT. Every stream's body, one at a time and 20 at once
    (a 3 MiB download beside small files), is byte-exact, and the kernel's
    counters show it carried them."""
    r = _loop(guest, loop)
    h = r.get("h2", {"error": "no HTTP/2 case ran"})
    assert "error" not in h, "%s\npith's stderr:\n%s" % (h, r["stderr"])
    assert (h["alpn"], h["version"]) == ("h2", "TLSv1.3")
    for kind, reqs in (("one_at_a_time", REQUESTS), ("at_once", H2_AT_ONCE)):
        assert len(h[kind]) == len(reqs), kind
        for i, ((method, path, rng), got) in enumerate(zip(reqs, h[kind])):
            where = "%s stream %d (%s %s%s)" % (kind, i, method, path, " " + rng if rng else "")
            status, body = _expected(guest["files"], method, path, rng)
            assert got["reset"] is None and got["status"] == status, (where, got)
            assert got["length"] == len(body), where
            assert got["sha256"] == hashlib.sha256(body).hexdigest(), where + ": the body differs"
            if method == "HEAD":
                assert got["headers"].get("content-length") == str(len(guest["files"][path]))
    before, after = h["stat_before"], h["stat_after"]
    assert after["TlsTxSw"] > before["TlsTxSw"], (before, after, r["stderr"])
    assert after["TlsDecryptError"] == before["TlsDecryptError"]
