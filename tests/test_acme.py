# SPDX-License-Identifier: MIT
"""Automatic HTTPS (issue 35) against Debian's pebble on loopback: pith
obtains a certificate for each site name over tls-alpn-01 (its first
choice) and http-01, serves each one's chain (curl with pebble's root, over
HTTP/1.1 and HTTP/2), answers a TLS client with an alert while the first
certificate is being obtained, loads the stored certificates at a restart
without contacting the CA, and renews (a short lifetime) without dropping
an open keep-alive connection, and tells systemd of the reload."""

import os
import re
import socket
import ssl
import time

import pytest

import http_raw
from acmeutil import Pebble, curl, served, wait_for
from conftest import free_port
from sdutil import Notify

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


def start_one(pith, ca, roots, *more, env=None):
    """pith with the one name a.test: the ACME process has nothing else to
    do (the tests that wait on its timing)."""
    return pith("--site", "a.test=%s" % roots["a"], "--port", str(ca.http_port), "--tls-port",
                str(ca.tls_port), *ca.args(), *more, root=False, env=env)


def obtained(srv, names, timeout=30):
    return wait_for(lambda: all("%s: obtained a certificate" % n in srv.stderr_text()
                                for n in names), timeout)


def test_issuance_over_tls_alpn_then_served_with_the_chain(pith, ca, roots):
    p = ca()
    t0 = time.monotonic()
    srv = start(pith, p, roots)
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



def test_http01_under_redirect_http_and_unknown_tokens(pith, ca, roots):
    """http-01 when asked for (the test knob), answered though --redirect-http
    redirects everything else; an unknown token is 404, before the redirect."""
    p = ca()
    srv = start(pith, p, roots, "--redirect-http",
                env={"PITH_ACME_PREFER": "http-01"})
    assert obtained(srv, ("a.test", "b.test", "www.b.test")), srv.stderr_text()
    for n in ("a.test", "b.test", "www.b.test"):
        assert "acme: %s: validated over http-01" % n in srv.stderr_text()
    c = http_raw.Conn(p.http_port)
    r = c.exchange("GET", "/.well-known/acme-challenge/nosuchtoken", host="a.test")
    assert r.status == 404
    r = c.exchange("GET", "/.well-known/acme-challenge/bad%2Ftoken", host="a.test")
    assert r.status in (400, 404)
    r = c.exchange("GET", "/who.txt", host="a.test")
    assert r.status == 308 and r["location"] == "https://a.test:%d/who.txt" % p.tls_port
    root = p.root()
    rc, out = curl("https://a.test:%d/who.txt" % p.tls_port, "a.test", p.tls_port, root)
    assert rc == 0 and out == "site a\n", out


def test_first_start_ca_down_alert_then_obtained(pith, ca, roots):
    """The CA is down at start: HTTP is served at once, a TLS client asking
    for a name gets a handshake alert (never another name's certificate),
    the log says when pith tries again; once the CA is up, it is obtained."""
    p = ca()
    p.stop_ca()
    srv = start(pith, p, roots, env={"PITH_ACME_BACKOFF_S": "1"})
    c = http_raw.Conn(p.http_port)
    assert c.exchange("GET", "/who.txt", host="b.test").body == b"site b\n"
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", p.tls_port), timeout=5) as raw:
        with pytest.raises(ssl.SSLError) as e:
            ctx.wrap_socket(raw, server_hostname="a.test")
    assert "INTERNAL_ERROR" in str(e.value).upper()
    assert wait_for(lambda: re.search(r"acme: a\.test: no certificate this time; the next attempt "
                                      r"at \d{4}-\d\d-\d\d", srv.stderr_text()), 10), \
        srv.stderr_text()
    assert "the CA's directory" in srv.stderr_text()
    p.start_ca()
    assert obtained(srv, ("a.test", "b.test", "www.b.test"), timeout=40), srv.stderr_text()
    root = p.root()
    assert wait_for(lambda: served(p.tls_port, "a.test", root), 5)


def test_restart_loads_stored_certificates_without_the_ca(pith, ca, roots):
    p = ca()
    srv = start(pith, p, roots)
    assert obtained(srv, ("a.test", "b.test", "www.b.test")), srv.stderr_text()
    root = p.root()
    assert wait_for(lambda: served(p.tls_port, "b.test", root), 5)
    first = served(p.tls_port, "b.test", root)
    srv.stop()
    p.stop_ca()  # a contact would fail, and say so
    srv = start(pith, p, roots)
    for n in ("a.test", "b.test", "www.b.test"):
        assert re.search(r"pith: acme: %s: loaded the stored certificate \(valid until "
                         % re.escape(n), srv.stderr_text())
    assert served(p.tls_port, "b.test", root) == first
    rc, out = curl("https://b.test:%d/who.txt" % p.tls_port, "b.test", p.tls_port, root)
    assert rc == 0 and out == "site b\n"
    time.sleep(1.5)
    assert "acme:" not in srv.stderr_text().split("\n", 4)[-1], srv.stderr_text()


def test_renewal_goes_live_without_dropping_a_keepalive_connection(pith, ca, roots):
    """A 30 s lifetime: renewal at two thirds (20 s); the connection opened on
    the first certificate keeps serving, new handshakes get the second. Each
    step polls for the event it waits for, with deadlines that a loaded
    machine meets (it failed once on 2 busy cores with fixed waits): the
    connection's own certificate is the one compared, and the renewal
    waited for is the one after it was opened, whichever that is."""
    p = ca(validity=30)
    srv = start_one(pith, p, roots, "--timeout-keepalive", "120")
    assert obtained(srv, ("a.test",), timeout=60), srv.stderr_text()
    root = p.root()
    assert wait_for(lambda: served(p.tls_port, "a.test", root), 20), srv.stderr_text()
    ctx = ssl.create_default_context(cafile=root)
    raw = socket.create_connection(("127.0.0.1", p.tls_port), timeout=20)
    tls = ctx.wrap_socket(raw, server_hostname="a.test")
    first = tls.getpeercert(binary_form=True)
    seen = srv.stderr_text().count("acme: a.test: obtained a certificate")
    conn = http_raw.Conn(0, sock=tls, timeout=20)
    assert conn.exchange("GET", "/who.txt", host="a.test").status == 200
    # The renewal after this connection's certificate, and a handshake that
    # gets the new one.
    assert wait_for(lambda: srv.stderr_text().count("acme: a.test: obtained a certificate")
                    > seen, 90, step=0.5), srv.stderr_text()
    second = wait_for(lambda: (lambda d: d if d and d != first else None)(
        served(p.tls_port, "a.test", root)), 30, step=0.2)
    assert second and second != first, srv.stderr_text()
    # The keep-alive connection was never dropped, and still serves, on
    # the certificate it started with.
    for _ in range(3):
        r = conn.exchange("GET", "/who.txt", host="a.test")
        assert r.status == 200 and r.body == b"site a\n"
    assert tls.getpeercert(binary_form=True) == first
    assert "TLS certificates and keys reloaded" in srv.stderr_text()


def test_a_new_certificate_tells_systemd_reloading_then_ready(pith, ca, roots, tmp_path):
    """A certificate the ACME process stores goes live as a HUP's reload
    does, and systemd hears of it the same way: RELOADING=1, then READY=1
    (tests/test_systemd_notify.py's socket). The CA is down at start, so the
    certificate comes after the first READY=1."""
    n = Notify(tmp_path)
    p = ca()
    p.stop_ca()
    try:
        srv = start_one(pith, p, roots, env={"NOTIFY_SOCKET": n.env, "PITH_ACME_BACKOFF_S": "1"})
        ready = n.wait_for("READY=1")
        assert ready["MAINPID"] == str(srv.pid)
        assert wait_for(lambda: "acme: a.test: no certificate this time" in srv.stderr_text(), 15)
        assert not any("RELOADING=1" in m.split("\n") for m in n.messages)
        p.start_ca()
        assert obtained(srv, ("a.test",), timeout=40), srv.stderr_text()
        reloading = n.wait_for("RELOADING=1", timeout=15)
        assert "certificate" in reloading["STATUS"], reloading
        again = n.wait_for("READY=1", timeout=15)
        assert "MAINPID" not in again
        assert "TLS certificates and keys reloaded" in srv.stderr_text()
        assert wait_for(lambda: served(p.tls_port, "a.test", p.root()), 5)
    finally:
        n.close()
