# SPDX-License-Identifier: MIT
"""HTTPS operations through the live process (issue 10): session tickets
shared by the workers, certificate reload on HUP (with a download in
flight, and with a broken certificate), --redirect-http, --hsts,
--tls-only, and the command line's verdicts on bad TLS flags."""

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

import http_raw
import tlscerts
from conftest import PITH_BIN, free_port, socket_inodes
from opsnet_util import metrics, status_port, wait_metric
from tlsutil import client_ctx, leaf_der, plain_socket, served_cert, tls_args, tls_conn

pytestmark = pytest.mark.full_only("TLS")


@pytest.fixture(scope="module")
def pki():
    from conftest import tls_pki

    return tls_pki()


def worker_of(server, conn):
    """The worker pid that holds conn's connection: the server side's
    socket inode (its remote port is our local one) among each worker's
    descriptors. Only lines with the port are parsed: on a busy machine
    /proc/net/tcp is long."""
    port = conn.sock.getsockname()[1]
    needle = ":%04X " % port
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        inodes = set()
        with open("/proc/%d/net/tcp" % server.pid) as f:
            for line in f:
                if needle in line:
                    x = line.split()
                    if int(x[2].rsplit(":", 1)[1], 16) == port:
                        inodes.add(int(x[9]))
        for pid in server.workers():
            if socket_inodes(pid) & inodes:
                return pid
        time.sleep(0.02)
    pytest.fail("no worker holds the connection from port %d" % port)


def test_a_ticket_resumes_on_another_worker(pith, pki):
    s = pith(*tls_args(pki), workers=2)
    assert len(s.wait_workers(2)) == 2
    ctx = client_ctx(pki)
    c = tls_conn(s.tls_port, pki, ctx=ctx)
    assert c.exchange("GET", "/index.html").status == 200  # the ticket comes with it
    issuer = worker_of(s, c)
    session = c.sock.session
    c.close()
    assert session is not None and session.has_ticket
    for _ in range(300):
        c = tls_conn(s.tls_port, pki, ctx=ctx, session=session)
        try:
            assert c.exchange("GET", "/index.html").status == 200
            assert c.sock.session_reused, "the ticket was not accepted"
            other = worker_of(s, c) != issuer
        finally:
            c.close()
        if other:
            return
    pytest.fail("300 connections all landed on the worker that issued the ticket")


def test_ticket_keys_rotate_and_the_previous_one_still_resumes(pith, pki):
    """With a 2 s period (instead of 12 h): a ticket keeps resuming after
    its key is replaced as the current one, and stops at the rotation after
    that (a full handshake, never an error)."""
    s = pith(*tls_args(pki), env={"PITH_TICKET_ROTATE_S": "2"})
    ctx = client_ctx(pki)
    with tls_conn(s.tls_port, pki, ctx=ctx) as c:
        assert c.exchange("GET", "/index.html").status == 200
        session = c.sock.session
    t0 = time.monotonic()
    refused_after = None
    while time.monotonic() - t0 < 15:
        with tls_conn(s.tls_port, pki, ctx=ctx, session=session) as c:
            assert c.exchange("GET", "/index.html").status == 200
            reused = c.sock.session_reused
        if not reused:
            refused_after = time.monotonic() - t0
            break
        time.sleep(0.1)
    assert refused_after is not None, "the ticket still resumed after 15 s"
    # The key was made at start (before t0); the master replaces it as the
    # current key by t0 + 2.5 s (its tick is 0.5 s): resuming past that
    # means the previous key still decrypted.
    assert refused_after > 2.6, refused_after


def serial_of(der):
    p = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"], input=der,
                       stdout=subprocess.PIPE, check=True)
    return int(p.stdout.decode().strip().split("=")[1], 16)


@pytest.fixture
def reloadable(tmp_path, pki):
    """A certificate and key at paths the test may overwrite, and a second
    PKI whose ECDSA certificate has another serial."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    shutil.copy(pki["ecdsa"][0], cert)
    shutil.copy(pki["ecdsa"][1], key)
    other = tlscerts.make_pki(tmp_path / "pki2", serial_base=5000)
    return str(cert), str(key), other


def wait_for_serial(port, serial, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        got = serial_of(served_cert(port, "localhost"))
        if got == serial or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def test_hup_reloads_while_a_download_continues(pith, pki, reloadable, docroot):
    cert, key, other = reloadable
    s = pith("--tls-port", "0", "--tls-cert", cert, "--tls-key", key)
    old_serial = serial_of(leaf_der(pki["ecdsa"][0]))
    assert serial_of(served_cert(s.tls_port, "localhost")) == old_serial
    big = open(os.path.join(docroot.root, "big.bin"), "rb").read()
    # A small receive buffer from the start, so most of the 3 MiB is still
    # on the server's side when the HUP comes.
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    raw.settimeout(20)
    raw.connect(("127.0.0.1", s.tls_port))
    c = http_raw.Conn(0, sock=client_ctx(pki).wrap_socket(raw, server_hostname="localhost"),
                      timeout=20)
    # Three pipelined downloads of the 3 MiB file: more than the socket
    # buffers on both sides hold, so the server is still encrypting with
    # the old context long after the HUP.
    c.send(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
    c._fill()  # the download has begun, and waits for us
    shutil.copy(other["ecdsa"][0], cert)
    shutil.copy(other["ecdsa"][1], key)
    s.signal(signal.SIGHUP)
    new_serial = serial_of(leaf_der(other["ecdsa"][0]))
    assert wait_for_serial(s.tls_port, new_serial) == new_serial
    # The downloads in flight finish on the old context, byte-exact.
    digest = hashlib.sha256(big).digest()
    for _ in range(3):
        r = c.read_response()
        assert r.status == 200 and hashlib.sha256(r.body).digest() == digest
    c.close()
    # A verifying client with the new CA is served.
    with tls_conn(s.tls_port, other, host="a.test") as c2:
        assert c2.exchange("GET", "/index.html").status == 200
    # The master writes the line before it signals the workers, but the
    # harness's reader thread may not have collected it yet on a busy machine.
    said = s.err.wait_for(lambda t: "TLS certificates and keys reloaded" in t, 10)
    assert said is not None, s.stderr_text()


def test_a_broken_certificate_at_hup_keeps_the_old_one(pith, pki, reloadable):
    cert, key, other = reloadable
    s = pith("--tls-port", "0", "--tls-cert", cert, "--tls-key", key)
    old_serial = serial_of(leaf_der(pki["ecdsa"][0]))
    with open(cert, "w") as f:
        f.write("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n")
    s.signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while "keeping the current TLS certificates" not in s.stderr_text():
        assert time.monotonic() < deadline, s.stderr_text()
        time.sleep(0.05)
    line = [l for l in s.stderr_text().splitlines() if "keeping the current TLS" in l][0]
    assert cert in line, line  # names the file, and OpenSSL's reason follows
    # A key that belongs to another certificate is refused the same way.
    shutil.copy(pki["ecdsa"][0], cert)
    shutil.copy(other["ecdsa"][1], key)
    s.signal(signal.SIGHUP)
    while "key values mismatch" not in s.stderr_text():
        assert time.monotonic() < deadline + 5, s.stderr_text()
        time.sleep(0.05)
    assert serial_of(served_cert(s.tls_port, "localhost")) == old_serial
    with tls_conn(s.tls_port, pki) as c:
        assert c.exchange("GET", "/index.html").status == 200


def _install(src_cert, src_key, cert, key):
    """Puts a pair in place, each file by one rename (never half written)."""
    for src, dst in ((src_cert, cert), (src_key, key)):
        tmp = dst + ".new"
        shutil.copy(src, tmp)
        os.rename(tmp, dst)


def test_a_storm_of_hups_swapping_two_certificates_under_load(pith, pki, reloadable):
    """HUPs in quick succession, the files swapped between two valid pairs
    each time, while clients keep handshaking: the master rewrites the
    published PEM texts while workers may still be copying the previous
    ones. Every handshake must present one of the two whole certificates,
    and no worker may fail to rebuild (the master may refuse a pair it read
    between the two renames: that is its rule for a broken pair)."""
    cert, key, other = reloadable
    pairs = [pki["ecdsa"], other["ecdsa"]]
    leaves = {leaf_der(p[0]) for p in pairs}
    s = pith("--tls-port", "0", "--tls-cert", cert, "--tls-key", key, workers=2)
    assert len(s.wait_workers(2)) == 2
    seen, errors, stop = [], [], threading.Event()

    def handshakes():
        while not stop.is_set():
            try:
                seen.append(served_cert(s.tls_port, "localhost"))
            except OSError as e:  # ssl.SSLError is one
                errors.append(repr(e))

    clients = [threading.Thread(target=handshakes) for _ in range(2)]
    for t in clients:
        t.start()
    try:
        # 150 HUPs at least, and on until the clients made 60 handshakes
        # during the storm (a slow build makes fewer in the same time).
        i, deadline = 0, time.monotonic() + 60
        while i < 150 or (len(seen) < 60 and time.monotonic() < deadline):
            _install(*pairs[i % 2], cert, key)
            s.signal(signal.SIGHUP)
            time.sleep(0.002 * (i % 5))
            i += 1
    finally:
        stop.set()
        for t in clients:
            t.join()
    # The last pair, alone: everyone ends up serving it.
    _install(*pairs[1], cert, key)
    s.signal(signal.SIGHUP)
    last = serial_of(leaf_der(pairs[1][0]))
    assert wait_for_serial(s.tls_port, last) == last
    err = s.stderr_text()
    assert "this worker keeps its TLS certificates" not in err, err[-3000:]
    assert err.count("TLS certificates and keys reloaded") > 20, err[-3000:]
    assert not errors, errors[:5]
    assert len(seen) >= 60 and set(seen) <= leaves, len(seen)


# -- --redirect-http, --hsts, --tls-only --------------------------------------------


@pytest.fixture(scope="module")
def rserver(pith_module, pki):
    return pith_module(*tls_args(pki, "--redirect-http", "--hsts", "600"))


def plain_get(server, target, host):
    with http_raw.Conn(0, sock=plain_socket(server.http_port)) as c:
        return c.exchange("GET", target, host=host)


def test_redirect_goes_to_the_same_host_and_path_on_the_tls_port(rserver):
    r = plain_get(rserver, "/a/b.html?x=1&y=%20", "localhost:%d" % rserver.http_port)
    assert r.status == 308
    assert r["Location"] == "https://localhost:%d/a/b.html?x=1&y=%%20" % rserver.tls_port
    assert "Strict-Transport-Security" not in r  # never over plain HTTP
    r = plain_get(rserver, "/", "127.0.0.1")
    assert r["Location"] == "https://127.0.0.1:%d/" % rserver.tls_port
    r = plain_get(rserver, "/", "[::1]:8080")
    assert r["Location"] == "https://[::1]:%d/" % rserver.tls_port


@pytest.mark.parametrize("host", ["evil.example", "localhost.evil.example", "b.test.evil",
                                  "user@localhost", "local%68ost", "[::2]"])
def test_redirect_never_points_to_a_host_our_certificates_do_not_name(rserver, host):
    r = plain_get(rserver, "/", host)
    assert r.status == 400, (host, r.status)
    assert "Location" not in r


def test_redirect_keeps_the_authority_whatever_the_path(rserver):
    for path in ("//evil.example/x", "/\\evil.example", "/%2f%2fevil.example"):
        r = plain_get(rserver, path, "a.test")
        assert r.status == 308, path
        loc = r["Location"]
        assert loc.startswith("https://a.test:%d/" % rserver.tls_port), loc
        assert "\r" not in loc and "\n" not in loc


def test_hsts_on_https_responses(rserver, pki):
    with tls_conn(rserver.tls_port, pki) as c:
        r = c.exchange("GET", "/index.html")
        assert r["Strict-Transport-Security"] == "max-age=600"
        r = c.exchange("GET", "/no-such-file")
        assert r.status == 404 and r["Strict-Transport-Security"] == "max-age=600"


def test_tls_only_has_no_plain_listener(pith, pki):
    s = pith(*tls_args(pki, "--tls-only"))
    assert " on https://127.0.0.1:%d/ (" % s.tls_port in s.start_line, s.start_line
    assert s.http_port is None and "http://" not in s.start_line
    with tls_conn(s.tls_port, pki) as c:
        assert c.exchange("GET", "/index.html").status == 200


# -- the command line ------------------------------------------------------------------


def run_pith(*args):
    p = subprocess.run([PITH_BIN, "--port", "0", "--tls-port", "0"] + list(args) + ["/"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
    return p.returncode, p.stderr.decode()


@pytest.mark.parametrize("args,needle", [
    (["--tls-cert", "c.pem"], "in pairs"),
    (["--tls-key", "k.pem"], "in pairs"),
    (["--tls-only"], "--tls-only needs --tls-cert"),
    (["--redirect-http"], "--redirect-http needs --tls-cert"),
    (["--hsts", "600"], "--hsts needs --tls-cert"),
    (["--hsts", "0", "--tls-cert", "c", "--tls-key", "k"], "--hsts: '0'"),
    (["--tls-port", "70000"], "--tls-port: '70000'"),
    (["--timeout-handshake", "0"], "--timeout-handshake: '0'"),
    (["--tls-cert", "c", "--tls-key", "k", "--tls-only", "--redirect-http"], "--tls-only drops"),
])
def test_bad_tls_flags_exit_2_with_one_line(args, needle):
    rc, err = run_pith(*args)
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and needle in err, err


def test_unreadable_or_mismatched_files_exit_1_naming_the_file(pki, tmp_path):
    missing = str(tmp_path / "missing.pem")
    rc, err = run_pith("--tls-cert", missing, "--tls-key", pki["ecdsa"][1])
    assert rc == 1 and missing in err and "No such file" in err, err
    rc, err = run_pith("--tls-cert", pki["ecdsa"][0], "--tls-key", pki["rsa"][1])
    assert rc == 1 and pki["rsa"][1] in err and "RSA key" in err, err
    other = tlscerts.make_pki(tmp_path / "o", serial_base=7000)
    rc, err = run_pith("--tls-cert", pki["ecdsa"][0], "--tls-key", other["ecdsa"][1])
    assert rc == 1 and other["ecdsa"][1] in err and "key values mismatch" in err, err
    rc, err = run_pith("--tls-cert", pki["ecdsa"][1], "--tls-key", pki["ecdsa"][1])
    assert rc == 1 and "no certificate" in err, err
    assert all(len(e.splitlines()) == 1 for e in [err])


def test_help_and_man_page_name_the_tls_flags():
    out = subprocess.run([PITH_BIN, "--help"], stdout=subprocess.PIPE).stdout.decode()
    man = open(os.path.join(os.path.dirname(PITH_BIN), "docs", "pith.1")).read() \
        if os.path.exists(os.path.join(os.path.dirname(PITH_BIN), "docs", "pith.1")) else None
    for flag in ("--tls-cert", "--tls-key", "--tls-port", "--tls-only", "--redirect-http",
                 "--hsts", "--timeout-handshake"):
        assert flag in out
        if man is not None:
            assert flag.replace("-", "\\-") in man or flag in man, flag


# -- pith --check loads the certificates as a start would -------------------------------


def _check(*args):
    return subprocess.run([PITH_BIN, "--check", "--port", "0", "--tls-port", "0"] + list(args),
                          capture_output=True, text=True, timeout=30)


def test_check_refuses_a_key_of_another_certificate(pki, tmp_path):
    # The ECDSA certificate with the RSA key: a start exits 1 on it, so
    # --check must not call the configuration valid.
    root = tmp_path / "www"
    root.mkdir()
    p = _check("--tls-cert", pki["ecdsa"][0], "--tls-key", pki["rsa"][1], str(root))
    assert p.returncode == 2, p.stdout
    assert pki["rsa"][1] in p.stderr and "not valid" in p.stderr, p.stderr


def test_check_names_the_https_listener(pki, tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    p = _check("--tls-cert", pki["ecdsa"][0], "--tls-key", pki["ecdsa"][1], "--tls-cert",
               pki["rsa"][0], "--tls-key", pki["rsa"][1], str(root))
    assert p.returncode == 0, p.stderr
    listen = [line for line in p.stdout.splitlines() if line.startswith("  listen on")]
    assert listen and "https on port 0 (2 certificates, loaded)" in listen[0], p.stdout


# -- the --status process holds no key ---------------------------------------------------


def _big_shared_maps(pid):
    """The shared writable mappings of pid of 256 KiB or more: the TLS PEM
    area (certificates, private keys) is one; the --status counters and the
    ticket keys (a page of their own, unmapped with it) are smaller."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            addr, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in addr.split("-"))
            if perms.startswith("rw-s") and hi - lo >= 256 * 1024:
                out.append(line.strip())
    return out


def test_the_status_process_holds_no_private_key(pith, pki):
    # The metrics process faces the network and has no use for TLS: it must
    # not keep the shared area with the keys (a worker does).
    status_port = free_port()
    s = pith(*tls_args(pki), "--status", "127.0.0.1:%d" % status_port, workers=1)
    worker = s.worker()
    deadline = time.monotonic() + 10
    while True:
        children = [p for p in s.workers() if p != worker]
        if children:
            break
        assert time.monotonic() < deadline, "no status process"
        time.sleep(0.05)
    assert _big_shared_maps(worker), "the worker should map the TLS area"
    # It serves (503 until the worker reports itself up, then 200) ...
    while http_raw.fetch(status_port, "/healthz").status != 200:
        assert time.monotonic() < deadline, "/healthz never answered 200"
        time.sleep(0.05)
    # ... without the keys.
    assert _big_shared_maps(children[0]) == []


# -- /metrics counts what the workers' exit lines count --------------------------------


def test_metrics_count_handshakes_plain_http_and_data_paths(pith, pki):
    s = pith(*tls_args(pki), "--status", "127.0.0.1:0", workers=2)
    sp = status_port(s)
    for _ in range(3):
        with tls_conn(s.tls_port, pki) as c:
            assert c.exchange("GET", "/index.html").status == 200
    with plain_socket(s.tls_port) as c:  # plain HTTP on the TLS port: a 400
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert c.recv(100).startswith(b"HTTP/1.1 400")
    with plain_socket(s.tls_port) as c:  # not a handshake record: failed
        c.sendall(b"\x00" * 10)
        c.recv(100)
    ok = 'pith_tls_handshakes_total{result="ok"}'
    failed = 'pith_tls_handshakes_total{result="failed"}'
    m = wait_metric(sp, None, lambda m: m.get(ok) == 3 and m.get(failed) == 1
                    and m.get("pith_tls_plain_http_total") == 1)
    assert (m[ok], m[failed], m["pith_tls_plain_http_total"]) == (3, 1, 1), m
    paths = [m['pith_tls_connections_total{path="%s"}' % p] for p in ("kernel", "userspace")]
    assert sum(paths) == 3, m
    if "userspace TLS: " in s.start_line:
        assert paths[0] == 0
    # Without HTTPS there are no TLS families at all.
    plain = pith("--status", "127.0.0.1:0")
    assert not [k for k in metrics(status_port(plain)) if k.startswith("pith_tls_")]
