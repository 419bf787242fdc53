# SPDX-License-Identifier: MIT
"""Automatic HTTPS (issue 35), bad input: a CA that answers malformed JSON,
the wrong content type, an oversized body, or stalls; one that refuses the
email or rate-limits; a challenge the CA reports failed; a state directory
that cannot be written; a stored certificate that does not match its key or
its name, and one corrupted while served; nonces refused several times in a
row. Each time: a clear log line,
nothing good overwritten, every site still served over HTTP."""

import http.server
import json
import os
import re
import shutil
import signal
import ssl
import threading
import time

import pytest

import http_raw
from acmeutil import FakeACME, Pebble, api_cert, served, wait_for
from conftest import free_port

pytestmark = pytest.mark.full_only("ACME")


@pytest.fixture
def www(tmp_path):
    out = {}
    for n in ("a", "b"):
        d = tmp_path / ("www-" + n)
        d.mkdir()
        (d / "who.txt").write_text("site %s\n" % n)
        out[n] = d
    return out


def site_args(www):
    return ["--site", "a.test=%s" % www["a"], "--site", "b.test=%s" % www["b"]]


def http_still_served(port):
    c = http_raw.Conn(port)
    for n in ("a", "b"):
        r = c.exchange("GET", "/who.txt", host="%s.test" % n)
        assert r.status == 200 and r.body == ("site %s\n" % n).encode()


class FakeCA:
    """An HTTPS server that misbehaves as `mode` says."""

    def __init__(self, d, mode):
        self.cert, self.key = api_cert(str(d))
        self.port = free_port()
        self.mode = mode
        ca = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def send(self, status, ctype, body, extra=()):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Replay-Nonce", "nonce%d" % time.monotonic_ns())
                for k, v in extra:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def directory(self):
                base = "https://127.0.0.1:%d/" % ca.port
                return json.dumps({"newNonce": base + "nonce", "newAccount": base + "acct",
                                   "newOrder": base + "order"}).encode()

            def do_GET(self):
                m = ca.mode
                if self.path == "/nonce":
                    return self.send(204, "text/plain", b"")
                if m == "malformed":
                    return self.send(200, "application/json", b'{"newNonce": "https://x/",')
                if m == "ctype":
                    return self.send(200, "text/html", b"<html>a directory?</html>")
                if m == "big":
                    return self.send(200, "application/json",
                                     b'{"pad": "' + b"x" * 200000 + b'"}')
                if m == "stall":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                    self.wfile.write(b"{")
                    self.wfile.flush()
                    time.sleep(20)
                    return
                return self.send(200, "application/json", self.directory())

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(n)
                if ca.mode == "badcontact":
                    doc = {"type": "urn:ietf:params:acme:error:invalidContact",
                           "detail": "contact email has a forbidden domain"}
                    return self.send(400, "application/problem+json", json.dumps(doc).encode())
                doc = {"type": "urn:ietf:params:acme:error:rateLimited",
                       "detail": "too many new accounts"}
                return self.send(429, "application/problem+json", json.dumps(doc).encode(),
                                 [("Retry-After", "3600")])

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), H)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()


WANT = {
    "malformed": r"dir: the CA's answer is not a JSON object: ",
    "ctype": r"dir: the CA answered with Content-Type 'text/html', not application/json",
    "big": r"the answer from https://127\.0\.0\.1:\d+/dir is larger than 64 KiB",
    "stall": r"dir: no whole answer in time \(the CA stalls\)",
    "badcontact": r"the account for ops@example\.org: the CA answered 400: "
                  r"urn:ietf:params:acme:error:invalidContact: contact email has a forbidden domain",
    "ratelimit": r"the account for ops@example\.org: the CA answered 429: "
                 r"urn:ietf:params:acme:error:rateLimited: too many new accounts",
}


@pytest.mark.parametrize("mode", sorted(WANT))
def test_misbehaving_ca(pith, www, tmp_path, mode):
    ca = FakeCA(tmp_path, mode)
    state = tmp_path / "state"
    try:
        t0 = time.time()
        srv = pith(*site_args(www), "--tls-port", "0", "--acme", "ops@example.org", "--acme-ca",
                   "https://127.0.0.1:%d/dir" % ca.port, "--acme-ca-root", ca.cert, "--acme-dir",
                   str(state), root=False,
                   env={"PITH_ACME_TIMEOUT_S": "3", "PITH_ACME_BACKOFF_S": "30"})
        assert wait_for(lambda: re.search(WANT[mode], srv.stderr_text()), 15), srv.stderr_text()
        m = wait_for(lambda: re.search(r"acme: a\.test: no certificate this time; the next attempt "
                                       r"at (\S+ \S+) UTC.*", srv.stderr_text()), 10)
        assert m, srv.stderr_text()
        at = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) - time.timezone
        assert at - t0 >= (3500 if mode == "ratelimit" else 29), (m.group(0), t0)
        if mode == "ratelimit":
            assert "(the CA's rate limit)" in m.group(0)
        http_still_served(srv.http_port)
        assert os.listdir(state / "certs") == []
        assert served(srv.tls_port, "a.test", ca.cert) is None  # an alert, no certificate
        # Nothing the CA said reaches the log with a control byte.
        assert not re.search(r"[\x00-\x08\x0b-\x1f]", srv.stderr_text())
    finally:
        ca.stop()


def test_nonces_refused_four_times_in_a_row_are_retried(pith, www, tmp_path):
    """badNonce is retried at once with the nonce it carried (RFC 8555 §6.5),
    up to five times: pebble refuses 5% of nonces, so three tries failed one
    order in 8,000 requests and cost a minute's backoff (CI saw it). Here the
    fourth retry of newOrder reaches the CA's real answer."""
    ca = FakeACME(tmp_path, bad_nonces=4)
    try:
        srv = pith(*site_args(www), "--tls-port", "0", *ca.args(tmp_path / "state"), root=False,
                   env={"PITH_ACME_BACKOFF_S": "300"})
        said = wait_for(lambda: re.search(r"acme: a\.test: a new order: the CA answered 403: "
                                          r"urn:ietf:params:acme:error:unauthorized",
                                          srv.stderr_text()), 15)
        assert said, srv.stderr_text()
        assert "nonces in a row" not in srv.stderr_text()
        assert len(ca.requests("/order")) >= 5, ca.seen
    finally:
        ca.stop()


@pytest.fixture
def pebble(tmp_path):
    made = []

    def make(http_port, tls_port, **kw):
        p = Pebble(tmp_path / ("pebble%d" % len(made)), http_port, tls_port, **kw)
        made.append(p)
        return p.start()

    yield make
    for p in made:
        p.stop()


def test_failed_challenge_is_logged_with_the_problem_then_retried(pith, www, pebble):
    """pebble validates against ports nobody listens on: both challenges
    fail, the CA's problem document is in the log, the next attempt comes
    later (and uses http-01 after tls-alpn-01 failed)."""
    hp, tp = free_port(), free_port()
    p = pebble(free_port(), free_port())  # not pith's ports
    srv = pith(*site_args(www), "--port", str(hp), "--tls-port", str(tp), *p.args(), root=False,
               env={"PITH_ACME_BACKOFF_S": "1"})
    want = (r"acme: a\.test: the tls-alpn-01 challenge failed \(authorization invalid\): "
            r"\{\\x22type\\x22:\\x22urn:ietf:params:acme:error:(unauthorized|connection)\\x22")
    assert wait_for(lambda: re.search(want, srv.stderr_text()), 30), srv.stderr_text()
    assert wait_for(lambda: re.search(r"acme: a\.test: the http-01 challenge failed",
                                      srv.stderr_text()), 30), srv.stderr_text()
    assert re.search(r"acme: a\.test: no certificate this time; the next attempt at ",
                     srv.stderr_text())
    http_still_served(hp)


def test_unwritable_state_directory_orders_nothing(pith, www, pebble, tmp_path):
    hp, tp = free_port(), free_port()
    p = pebble(hp, tp)
    state = tmp_path / "state"
    state.mkdir()
    (state / "certs").write_text("a file where the folder should be\n")
    srv = pith(*site_args(www), "--port", str(hp), "--tls-port", str(tp),
               *p.args(state=str(state)), root=False, env={"PITH_ACME_BACKOFF_S": "30"})
    assert wait_for(lambda: re.search(r"acme: \S+/certs is not writable \(Not a directory\): no "
                                      r"certificate is ordered until it is",
                                      srv.stderr_text()), 15), srv.stderr_text()
    assert "pith: acme: cannot make %s/certs: Not a directory" % state in srv.stderr_text()
    http_still_served(hp)
    assert "new-order" not in p.log_text() and "order-plz" not in p.log_text()
    assert (state / "certs").read_text() == "a file where the folder should be\n"


def _pem_blocks(text):
    return re.findall(r"-----BEGIN [A-Z ]+-----\n.*?-----END [A-Z ]+-----\n", text, re.S)


def test_stored_certificate_of_another_name_or_key(pith, www, pebble, tmp_path):
    """First run: both names obtained. Then a.test's file holds b.test's
    certificate, and b.test's a key that is not its certificate's: the
    start says why for each, serves neither wrongly, orders both anew."""
    hp, tp = free_port(), free_port()
    p = pebble(hp, tp)
    state = tmp_path / "state"
    srv = pith(*site_args(www), "--port", str(hp), "--tls-port", str(tp),
               *p.args(state=str(state)), root=False)
    assert wait_for(lambda: srv.stderr_text().count("obtained a certificate") == 2, 30), \
        srv.stderr_text()
    srv.stop()
    a = (state / "certs" / "a.test.pem").read_text()
    b = (state / "certs" / "b.test.pem").read_text()
    (state / "certs" / "a.test.pem").write_text(b)  # b.test's pair under a.test's name
    ka, kb = _pem_blocks(a)[0], _pem_blocks(b)[0]
    (state / "certs" / "b.test.pem").write_text(b.replace(kb, ka))  # a.test's key
    srv = pith(*site_args(www), "--port", str(hp), "--tls-port", str(tp),
               *p.args(state=str(state)), root=False)
    text = srv.stderr_text()
    assert re.search(r"pith: acme: a\.test: the stored certificate \S+a\.test\.pem is not usable "
                     r"\(the certificate does not name the site\); obtaining a new one", text), text
    assert re.search(r"pith: acme: b\.test: the stored certificate \S+b\.test\.pem is not usable "
                     r"\(the certificate does not match the key\); obtaining a new one", text), text
    http_still_served(hp)
    assert wait_for(lambda: srv.stderr_text().count("obtained a certificate") == 2, 30), \
        srv.stderr_text()
    root = p.root()
    assert wait_for(lambda: served(tp, "a.test", root) and served(tp, "b.test", root), 5)


def test_corrupted_while_served_keeps_the_good_certificate(pith, www, pebble, tmp_path):
    hp, tp = free_port(), free_port()
    p = pebble(hp, tp)
    state = tmp_path / "state"
    srv = pith(*site_args(www), "--port", str(hp), "--tls-port", str(tp),
               *p.args(state=str(state)), root=False)
    assert wait_for(lambda: srv.stderr_text().count("obtained a certificate") == 2, 30)
    root = p.root()
    good = wait_for(lambda: served(tp, "a.test", root), 5)
    assert good
    (state / "certs" / "a.test.pem").write_text("not a certificate\n")
    srv.signal(signal.SIGHUP)
    assert wait_for(lambda: "HUP: keeping the current certificate of a.test: its file in "
                            "--acme-dir does not load" in srv.stderr_text(), 5), srv.stderr_text()
    time.sleep(0.5)
    assert served(tp, "a.test", root) == good
    assert served(tp, "b.test", root)
