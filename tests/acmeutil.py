# SPDX-License-Identifier: MIT
"""Helpers of the automatic-HTTPS tests (test_acme*.py, issue 35): Debian's
pebble (an ACME CA for tests) and pebble-challtestsrv (a DNS server that
answers every name with 127.0.0.1) on loopback, with pebble's API
certificate made here, its validation pointed at pith's live ports; and
clients that check the chain pith serves against pebble's root."""

import base64
import calendar
import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import free_port

PEBBLE = shutil.which("pebble")
CHALLTESTSRV = shutil.which("pebble-challtestsrv")


def need_pebble():
    if not PEBBLE or not CHALLTESTSRV:
        pytest.skip("pebble and pebble-challtestsrv are not installed (scripts/deps check)")


def _wait_port(port, proc, what, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s" % (what, proc.returncode))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("%s did not listen on %d" % (what, port))


def loopback_name():
    """A host name that resolves to 127.0.0.1 through the system's resolver
    (this machine's name in /etc/hosts), so that libcurl resolves it in its
    resolver thread: it answers "localhost" itself. None where there is
    none."""
    name = socket.gethostname()
    try:
        return name if socket.gethostbyname(name) == "127.0.0.1" else None
    except OSError:
        return None


def api_cert(d):
    """A self-signed certificate for pebble's API (127.0.0.1, localhost, this
    machine's name):
    pith trusts it with --acme-ca-root."""
    cert, key = os.path.join(d, "api.pem"), os.path.join(d, "api.key")
    if not os.path.exists(cert):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "30", "-subj", "/CN=pebble api",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:%s"
                        % socket.gethostname(),
                        "-addext", "basicConstraints=critical,CA:TRUE"],
                       check=True, capture_output=True)
    return cert, key


class Pebble:
    """pebble + pebble-challtestsrv for one test: http_port and tls_port are
    the ports its validation connects to (pith's)."""

    def __init__(self, d, http_port, tls_port, validity=None, env=None):
        need_pebble()
        self.dir = str(d)
        os.makedirs(self.dir, exist_ok=True)
        self.cert, self.key = api_cert(self.dir)
        self.http_port, self.tls_port, self.validity = http_port, tls_port, validity
        self.config = os.path.join(self.dir, "pebble.json")
        self._pick_ports()
        self.env = dict(os.environ, PEBBLE_VA_NOSLEEP="1", PEBBLE_AUTHZREUSE="0")
        self.env.update(env or {})
        self.dns_proc = None
        self.proc = None
        self.log = os.path.join(self.dir, "pebble.log")

    def _pick_ports(self):
        """Ports for pebble's API, its management interface, the DNS server
        and that server's management interface, written into pebble's
        configuration. free_port only says a port was free when it looked:
        start() picks again when another process took one first."""
        self.port, self.mgmt = free_port(), free_port()
        self.dns, self.dns_mgmt = free_port(), free_port()
        cfg = {"pebble": {"listenAddress": "127.0.0.1:%d" % self.port,
                          "managementListenAddress": "127.0.0.1:%d" % self.mgmt,
                          "certificate": self.cert, "privateKey": self.key,
                          "httpPort": self.http_port, "tlsPort": self.tls_port,
                          "ocspResponderURL": "", "externalAccountBindingRequired": False}}
        if self.validity:
            cfg["pebble"]["certificateValidityPeriod"] = self.validity
        with open(self.config, "w") as f:
            json.dump(cfg, f)

    @property
    def url(self):
        return "https://127.0.0.1:%d/dir" % self.port

    def start(self):
        for attempt in range(4):
            try:
                self._start_once()
                return self
            except RuntimeError:
                self.stop()
                if attempt == 3 or "address already in use" not in self.log_text() + \
                        open(os.path.join(self.dir, "challtestsrv.log")).read():
                    raise
                self._pick_ports()
        return self

    def _start_once(self):
        dlog = open(os.path.join(self.dir, "challtestsrv.log"), "w")
        self.dns_proc = subprocess.Popen(
            [CHALLTESTSRV, "-dns01", "127.0.0.1:%d" % self.dns, "-http01", "", "-https01", "",
             "-tlsalpn01", "", "-management", "127.0.0.1:%d" % self.dns_mgmt,
             "-defaultIPv6", ""],
            stdout=dlog, stderr=subprocess.STDOUT, start_new_session=True)
        _wait_port(self.dns_mgmt, self.dns_proc, "pebble-challtestsrv")
        open(self.log, "w").close()  # a retry reads only its own attempt's log
        self.start_ca()

    def start_ca(self):
        plog = open(self.log, "a")
        self.proc = subprocess.Popen(
            [PEBBLE, "-config", self.config, "-dnsserver", "127.0.0.1:%d" % self.dns,
             "-strict=false"],
            stdout=plog, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        try:
            _wait_port(self.port, self.proc, "pebble")
            _wait_port(self.mgmt, self.proc, "pebble's management port")
        except RuntimeError as e:
            raise RuntimeError("%s; its log ends: %s" % (e, self.log_text()[-400:])) from None

    def stop_ca(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def stop(self):
        self.stop_ca()
        if self.dns_proc and self.dns_proc.poll() is None:
            self.dns_proc.terminate()
            self.dns_proc.wait(10)

    def root(self):
        """pebble's root (made anew at each start), from its management port."""
        ctx = ssl.create_default_context(cafile=self.cert)
        with urllib.request.urlopen("https://127.0.0.1:%d/roots/0" % self.mgmt,
                                    context=ctx, timeout=10) as r:
            pem = r.read()
        path = os.path.join(self.dir, "root.pem")
        with open(path, "wb") as f:
            f.write(pem)
        return path

    def log_text(self):
        try:
            return open(self.log).read()
        except OSError:
            return ""

    def args(self, email="ops@example.org", state=None):
        return ["--acme", email, "--acme-ca", self.url, "--acme-ca-root", self.cert,
                "--acme-dir", state or os.path.join(self.dir, "state")]


def wait_for(pred, timeout, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return None


def served(port, name, root, alpn=None):
    """The leaf (DER) pith serves for SNI name, verified against root; None
    when the handshake fails (no certificate yet)."""
    ctx = ssl.create_default_context(cafile=root)
    if alpn:
        ctx.set_alpn_protocols(alpn)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname=name) as s:
                return s.getpeercert(binary_form=True)
    except (ssl.SSLError, OSError):
        return None


def curl(url, name, port, root, *more):
    """curl over TLS to name (resolved to 127.0.0.1) validating the chain
    with root; (exit status, body)."""
    p = subprocess.run(["curl", "-sS", "--max-time", "10", "--cacert", root, "--resolve",
                        "%s:%d:127.0.0.1" % (name, port), *more, url],
                       capture_output=True, timeout=20)
    return p.returncode, p.stdout.decode("latin-1") + p.stderr.decode("latin-1")


# ---- a stored certificate of the test's making, and a fake CA ----------------------------

# RFC 9773 §4.1's example: a certificate whose issuer's key identifier is
# RFC_AKI and whose serial is 0x87654321 (DER 00 87 65 43 21) is named
# "aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE".
RFC_AKI = "69:88:5B:6B:87:46:40:41:E1:B3:7B:84:7B:A0:AE:2C:DE:01:C8:D4"
RFC_SERIAL = 0x87654321
RFC_ARI_ID = "aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE"


def _openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def stored_pair(d, name, not_before, not_after, serial=RFC_SERIAL, aki=RFC_AKI):
    """What pith keeps in certs/NAME.pem (the key, the leaf, its issuer),
    made with `openssl ca` for validity to the second: the leaf for name
    from not_before to not_after (seconds since the epoch), with serial,
    issued by a test CA whose key identifier is aki. Returns the text."""
    d = os.path.join(str(d), "pair-%s-%d" % (name, not_before))
    os.makedirs(d)
    p = lambda f: os.path.join(d, f)  # noqa: E731
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "3650", "-subj",
             "/CN=pith test issuer", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "subjectKeyIdentifier=" + aki, "-addext", "keyUsage=critical,keyCertSign")
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", p("leaf.key"), "-out", p("leaf.csr"), "-subj", "/CN=" + name)
    open(p("index.txt"), "w").close()
    with open(p("serial"), "w") as f:
        f.write("%X\n" % serial if len("%X" % serial) % 2 == 0 else "0%X\n" % serial)
    with open(p("ca.cnf"), "w") as f:
        f.write("[ca]\ndefault_ca = c\n[c]\ndatabase = %s\nnew_certs_dir = %s\nserial = %s\n"
                "default_md = sha256\npolicy = p\nunique_subject = no\n[p]\ncommonName = supplied\n"
                "[ext]\nsubjectAltName = DNS:%s\nauthorityKeyIdentifier = keyid\n"
                "basicConstraints = critical,CA:FALSE\n"
                % (p("index.txt"), d, p("serial"), name))
    gt = lambda t: time.strftime("%Y%m%d%H%M%SZ", time.gmtime(t))  # noqa: E731
    _openssl("ca", "-batch", "-config", p("ca.cnf"), "-cert", p("ca.pem"), "-keyfile", p("ca.key"),
             "-in", p("leaf.csr"), "-out", p("leaf.pem"), "-notext", "-extensions", "ext",
             "-startdate", gt(not_before), "-enddate", gt(not_after))
    return "".join(open(p(f)).read() for f in ("leaf.key", "leaf.pem", "ca.pem"))


def b64url_json(text):
    return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)) or b"null")


class FakeACME:
    """An ACME CA that issues nothing (HTTPS on loopback with api_cert): its
    directory, with renewalInfo when ari is given, nonces, an account, and
    a newOrder it records and refuses. ari(n, cert_id) answers the n-th
    renewalInfo question (from 1) with (status, content type, body,
    [(header, value)]). self.seen: (time.time(), method, path, JWS payload)
    of every request. bad_nonces: the first POSTs to newOrder answered
    badNonce (RFC 8555 §6.5)."""

    def __init__(self, d, ari=None, bad_nonces=0):
        self.cert, self.key = api_cert(str(d))
        self.port = free_port()
        self.ari = ari
        self.bad_nonces = bad_nonces
        self.seen = []
        self.lock = threading.Lock()
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

            def note(self, payload=None):
                with ca.lock:
                    ca.seen.append((time.time(), self.command, self.path, payload))
                    return sum(1 for s in ca.seen if s[2].startswith("/ari/"))

            def do_GET(self):
                n = self.note()
                base = "https://127.0.0.1:%d/" % ca.port
                if self.path == "/dir":
                    d = {"newNonce": base + "nonce", "newAccount": base + "acct",
                         "newOrder": base + "order"}
                    if ca.ari:
                        d["renewalInfo"] = base + "ari"
                    return self.send(200, "application/json", json.dumps(d).encode())
                if self.path == "/nonce":
                    return self.send(204, "text/plain", b"")
                if self.path.startswith("/ari/") and ca.ari:
                    return self.send(*ca.ari(n, self.path[5:]))
                return self.send(404, "application/problem+json", b'{"type": "about:blank"}')

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                self.note(b64url_json(body["payload"]))
                if self.path == "/acct":
                    return self.send(201, "application/json", b'{"status": "valid"}',
                                     [("Location", "https://127.0.0.1:%d/acct/1" % ca.port)])
                with ca.lock:
                    refuse = self.path == "/order" and ca.bad_nonces > 0
                    ca.bad_nonces -= refuse
                if refuse:
                    doc = {"type": "urn:ietf:params:acme:error:badNonce",
                           "detail": "JWS has an invalid anti-replay nonce"}
                    return self.send(400, "application/problem+json", json.dumps(doc).encode())
                doc = {"type": "urn:ietf:params:acme:error:unauthorized",
                       "detail": "this CA issues nothing"}
                return self.send(403, "application/problem+json", json.dumps(doc).encode())

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), H)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self):
        return "https://127.0.0.1:%d/dir" % self.port

    def args(self, state):
        return ["--acme", "ops@example.org", "--acme-ca", self.url, "--acme-ca-root", self.cert,
                "--acme-dir", str(state)]

    def requests(self, path):
        with self.lock:
            return [s for s in self.seen if s[2].startswith(path)]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def log_time(text):
    """A time as pith's log writes it ("2025-01-02 03:04:05 UTC")."""
    return calendar.timegm(time.strptime(text, "%Y-%m-%d %H:%M:%S UTC"))
