# SPDX-License-Identifier: MIT
"""Helpers of the automatic-HTTPS tests (test_acme*.py, issue 35): Debian's
pebble (an ACME CA for tests) and pebble-challtestsrv (a DNS server that
answers every name with 127.0.0.1) on loopback, with pebble's API
certificate made here, its validation pointed at pith's live ports; and
clients that check the chain pith serves against pebble's root."""

import json
import os
import shutil
import socket
import ssl
import subprocess
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
        self.cert, key = api_cert(self.dir)
        self.port = free_port()
        self.mgmt = free_port()
        self.dns = free_port()
        cfg = {"pebble": {"listenAddress": "127.0.0.1:%d" % self.port,
                          "managementListenAddress": "127.0.0.1:%d" % self.mgmt,
                          "certificate": self.cert, "privateKey": key,
                          "httpPort": http_port, "tlsPort": tls_port,
                          "ocspResponderURL": "", "externalAccountBindingRequired": False}}
        if validity:
            cfg["pebble"]["certificateValidityPeriod"] = validity
        self.config = os.path.join(self.dir, "pebble.json")
        with open(self.config, "w") as f:
            json.dump(cfg, f)
        self.env = dict(os.environ, PEBBLE_VA_NOSLEEP="1", PEBBLE_AUTHZREUSE="0")
        self.env.update(env or {})
        self.dns_proc = None
        self.proc = None
        self.log = os.path.join(self.dir, "pebble.log")

    @property
    def url(self):
        return "https://127.0.0.1:%d/dir" % self.port

    def start(self):
        dlog = open(os.path.join(self.dir, "challtestsrv.log"), "w")
        self.dns_proc = subprocess.Popen(
            [CHALLTESTSRV, "-dns01", "127.0.0.1:%d" % self.dns, "-http01", "", "-https01", "",
             "-tlsalpn01", "", "-management", "127.0.0.1:%d" % free_port(), "-defaultIPv6", ""],
            stdout=dlog, stderr=subprocess.STDOUT, start_new_session=True)
        self.start_ca()
        return self

    def start_ca(self):
        plog = open(self.log, "a")
        self.proc = subprocess.Popen(
            [PEBBLE, "-config", self.config, "-dnsserver", "127.0.0.1:%d" % self.dns,
             "-strict=false"],
            stdout=plog, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        _wait_port(self.port, self.proc, "pebble")
        _wait_port(self.mgmt, self.proc, "pebble's management port")

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
