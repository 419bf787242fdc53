# SPDX-License-Identifier: MIT
"""Automatic HTTPS (issue 35) against Debian's pebble on loopback: pith
obtains a certificate for each site name over tls-alpn-01 (its first
choice) and http-01, serves each one's chain (curl with pebble's root, over
HTTP/1.1 and HTTP/2), answers a TLS client with an alert while the first
certificate is being obtained, loads the stored certificates at a restart
without contacting the CA, and renews (a short lifetime) without dropping
an open keep-alive connection."""

import os
import re
import socket
import ssl
import time

import pytest

import http_raw
from acmeutil import Pebble, curl, served, wait_for
from conftest import free_port

pytestmark = pytest.mark.full_only("ACME")

NAMES = ("a.test", "b.test")


@pytest.fixture
def roots(tmp_path):
    out = {}
    for n in ("a", "b"):
        d = tmp_path / ("root-" + n)
        d.mkdir()
        (d / "who.txt").write_text("site %s\n" % n)
        out[n] = d
    return out


def sites(roots):
    return ["--site", "a.test=%s" % roots["a"], "--site", "b.test,www.b.test=%s" % roots["b"]]


@pytest.fixture
def ca(tmp_path):
    made = []

    def make(validity=None, env=None, http_port=None, tls_port=None):
        hp, tp = http_port or free_port(), tls_port or free_port()
        p = Pebble(tmp_path / ("pebble%d" % len(made)), hp, tp, validity, env)
        p.http_port, p.tls_port = hp, tp
        made.append(p)
        return p.start()

    yield make
    for p in made:
        p.stop()


def start(pith, ca, roots, *more, env=None, state=None):
    return pith(*sites(roots), "--port", str(ca.http_port), "--tls-port", str(ca.tls_port),
                *ca.args(state=state), *more, root=False, env=env)


def obtained(srv, names, timeout=30):
    return wait_for(lambda: all("%s: obtained a certificate" % n in srv.stderr_text()
                                for n in names), timeout)


def test_issuance_over_tls_alpn_then_served_with_the_chain(pith, ca, roots):
    p = ca()
    t0 = time.monotonic()
    srv = start(pith, ca=p, roots=roots)
    line = srv.stderr_text()
    for n in ("a.test", "b.test", "www.b.test"):
        assert "pith: acme: %s: no stored certificate; obtaining one from %s" % (n, p.url) in line
    assert obtained(srv, ("a.test", "b.test", "www.b.test")), srv.stderr_text()
    took = time.monotonic() - t0
    root = p.root()
    assert wait_for(lambda: served(p.tls_port, "www.b.test", root), 5)
    for name, site in (("a.test", "a"), ("b.test", "b"), ("www.b.test", "b")):
        for proto in ("--http1.1", "--http2"):
            rc, out = curl("https://%s:%d/who.txt" % (name, p.tls_port), name, p.tls_port, root,
                           proto, "-w", " %{http_version}")
            assert rc == 0 and out.startswith("site %s\n" % site), out
            assert out.endswith("2" if proto == "--http2" else "1.1"), out
    # tls-alpn-01 is the first choice.
    for n in ("a.test", "b.test", "www.b.test"):
        assert "acme: %s: validated over tls-alpn-01" % n in srv.stderr_text()
    state = os.path.join(p.dir, "state")
    for n in ("a.test", "www.b.test"):
        st = os.stat(os.path.join(state, "certs", n + ".pem"))
        assert st.st_mode & 0o777 == 0o600
    acct = os.listdir(os.path.join(state, "accounts"))
    assert len(acct) == 1 and acct[0].endswith(".key")
    assert took < 30

