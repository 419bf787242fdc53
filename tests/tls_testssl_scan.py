# SPDX-License-Identifier: MIT
"""testssl.sh (Debian package testssl.sh) scans pith's TLS port with its
protocol, cipher-category, forward-secrecy and vulnerability checks, once for
the ECDSA certificate (SNI localhost, the default) and once for the RSA one
(SNI b.test), the two scans side by side. A finding of severity MEDIUM,
HIGH or CRITICAL fails, as does a check testssl could not run (WARN, FATAL),
a scan that lacks one of the checks, or a protocol or curve outside the
policy of issue 10 (TLS 1.2 and 1.3 only, no CBC, X25519 and P-256).

Not named test_*.py: the scan looks at the TLS policy, which no event loop
or build changes, and takes half a minute, so `make check` runs it once
(`make test-testssl`) rather than once per pass.

Offline and fast: --ip 127.0.0.1 and --nodns none (no DNS, no internet),
--warnings off (no prompts), the connect and openssl timeouts short. Not
--fast: it replaces the socket-based checks with the local OpenSSL, which
has no RC4, so the RC4 check would not run.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import tlscerts
from conftest import PITH_BIN, PITH_IO, free_port

TESTSSL = shutil.which("testssl") or shutil.which("testssl.sh")
FAILING = ("MEDIUM", "HIGH", "CRITICAL", "WARN", "FATAL")
# Every check the scan must have run: a shorter list means testssl skipped
# something (an option dropped, a scan cut short), and a pass would mean less.
REQUIRED = ("SSLv2 SSLv3 TLS1 TLS1_1 TLS1_2 TLS1_3 ALPN cipherlist_NULL cipherlist_aNULL "
            "cipherlist_EXPORT cipherlist_LOW cipherlist_3DES_IDEA cipherlist_AVERAGE "
            "cipherlist_STRONG PFS PFS_ECDHE_curves heartbleed CCS ticketbleed ROBOT "
            "secure_renego secure_client_renego CRIME_TLS BREACH POODLE_SSL fallback_SCSV SWEET32 "
            "FREAK DROWN LOGJAM BEAST LUCKY13 RC4").split()
SCAN_TIMEOUT = 300


def run_testssl(sni, port, out_dir):
    """Runs one scan; returns (findings, the text report, seconds)."""
    json_path = os.path.join(out_dir, "testssl-%s.json" % sni)
    if os.path.exists(json_path):
        os.unlink(json_path)  # testssl refuses to overwrite
    argv = [TESTSSL, "--quiet", "--color", "0", "--warnings", "off", "--nodns", "none",
            "--ip", "127.0.0.1", "--connect-timeout", "5", "--openssl-timeout", "5",
            "--protocols", "--std", "--fs", "--vulnerable", "--jsonfile", json_path,
            "https://%s:%d/" % (sni, port)]
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=SCAN_TIMEOUT, cwd=out_dir)
    seconds = time.monotonic() - t0
    report = p.stdout + p.stderr
    if not os.path.exists(json_path):
        pytest.fail("testssl wrote no JSON (exit %d):\n%s" % (p.returncode, report[-4000:]))
    with open(json_path) as f:
        return json.load(f), report, seconds


def problems(findings):
    """What is wrong in one scan's findings, as lines; empty when nothing."""
    by_id = {f["id"]: f for f in findings}
    out = ["%s %s: %s" % (f["severity"], f["id"], f["finding"])
           for f in findings if f["severity"] in FAILING]
    out += ["check missing from the scan: %s" % i for i in REQUIRED if i not in by_id]

    def finding(i):
        return by_id[i]["finding"] if i in by_id else ""
    for proto in ("SSLv2", "SSLv3", "TLS1", "TLS1_1"):
        if proto in by_id and not finding(proto).startswith("not offered"):
            out.append("policy: %s must be refused, testssl says %r" % (proto, finding(proto)))
    for proto in ("TLS1_2", "TLS1_3"):
        if proto in by_id and not finding(proto).startswith("offered"):
            out.append("policy: %s must be offered, testssl says %r" % (proto, finding(proto)))
    if "cipherlist_AVERAGE" in by_id and finding("cipherlist_AVERAGE") != "not offered":
        out.append("policy: AEAD only, but testssl found AVERAGE ciphers (CBC or no forward "
                   "secrecy): %r" % finding("cipherlist_AVERAGE"))
    curves = set(finding("PFS_ECDHE_curves").split())
    if "PFS_ECDHE_curves" in by_id and curves != {"X25519", "prime256v1"}:
        out.append("policy: ECDHE curves must be X25519 and P-256, testssl found %s"
                   % sorted(curves))
    if "ALPN" in by_id and "http/1.1" not in finding("ALPN"):
        out.append("policy: ALPN must answer http/1.1, testssl says %r" % finding("ALPN"))
    return out


def low_findings(findings):
    return ["%s %s: %s" % (f["severity"], f["id"], f["finding"])
            for f in findings if f["severity"] == "LOW"]


@pytest.fixture(scope="module")
def tls_pith(tmp_path_factory):
    """pith with HTTPS only, the ECDSA pair first (the default), then RSA."""
    if not TESTSSL:
        pytest.fail("testssl is not installed (Debian package testssl.sh; scripts/deps check)")
    base = tmp_path_factory.mktemp("testssl")
    pki_dir = base / "pki"
    pki_dir.mkdir()
    pki = tlscerts.make_pki(str(pki_dir))
    root = base / "root"
    root.mkdir()
    (root / "index.html").write_text("<!doctype html><title>testssl</title>\n")
    port = free_port()
    argv = [PITH_BIN, "--addr", "127.0.0.1", "--workers", "1", "--tls-only",
            "--tls-port", str(port), "--tls-cert", pki["ecdsa"][0], "--tls-key", pki["ecdsa"][1],
            "--tls-cert", pki["rsa"][0], "--tls-key", pki["rsa"][1]]
    if PITH_IO:
        argv += ["--io", PITH_IO]
    argv.append(str(root))
    err_path = base / "pith.err"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("pith did not listen on its TLS port (exit %r): %s\n%s"
                            % (proc.poll(), " ".join(argv), err_path.read_text()))
            time.sleep(0.05)
    yield {"port": port, "dir": str(base), "proc": proc, "err": err_path}
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="module")
def scans(tls_pith):
    """Both scans, side by side: {sni: (findings, report, seconds)}."""
    snis = ("localhost", "b.test")  # the ECDSA default, the RSA certificate
    with ThreadPoolExecutor(len(snis)) as ex:
        futures = {s: ex.submit(run_testssl, s, tls_pith["port"], tls_pith["dir"]) for s in snis}
        return {s: f.result() for s, f in futures.items()}


@pytest.mark.parametrize("sni,kx", [("localhost", "ECDHE-ECDSA-"), ("b.test", "ECDHE-RSA-")])
def test_testssl_finds_nothing_medium_or_above(scans, tls_pith, sni, kx):
    findings, report, seconds = scans[sni]
    found = problems(findings)
    # The scan saw the certificate the name chose (else it checked one twice).
    fs = " ".join(f["finding"] for f in findings if f["id"] == "PFS_ciphers")
    if kx not in fs:
        found.append("SNI %s: no %s cipher among the forward-secret ones: %r" % (sni, kx, fs))
    low = low_findings(findings)
    print("testssl against pith (SNI %s): %d findings in %.0f s; LOW: %s"
          % (sni, len(findings), seconds, "; ".join(low) or "none"))
    assert not found, "testssl (SNI %s):\n  %s\n\nits report:\n%s" % (
        sni, "\n  ".join(found), report[-6000:])


def test_pith_survived_the_scans(scans, tls_pith):
    # testssl sends malformed and hostile handshakes (heartbleed, CCS
    # injection, ticketbleed, ROBOT): the worker must take them all.
    assert tls_pith["proc"].poll() is None, "pith exited during the scan"
    text = tls_pith["err"].read_text()
    for bad in ("was killed by signal", "exited with status", "AddressSanitizer", "runtime error:"):
        assert bad not in text, text[-4000:]
