# SPDX-License-Identifier: MIT
"""Sites over HTTPS (issue 22): each site's certificates, chosen by SNI
(openssl s_client -servername, curl --resolve), and 421 Misdirected Request
when a request's host names a site that SNI would have given another
certificate than the connection's (RFC 9110 §15.5.20). One certificate, or
one that names every site, never gives a 421; nor does a server without
site names (before sites: byte for byte as it was). Both loops."""

import os
import re
import socket
import ssl
import subprocess

import pytest

import http_raw
import tlscerts
from conftest import run_pith, tls_pki
from tlsutil import leaf_der, s_client, served_cert, tls_conn

pytestmark = pytest.mark.full_only("TLS")


@pytest.fixture(scope="module")
def pki():
    p = dict(tls_pki())
    d = os.path.dirname(p["ca"])
    ec = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
    if not os.path.exists(os.path.join(d, "c-chain.pem")):
        tlscerts._leaf(d, "c", ec, "DNS:c.test", 7001)
        tlscerts._leaf(d, "wild", ec, "DNS:*.w.test,DNS:w.test", 7002)
    p["c"] = (os.path.join(d, "c-chain.pem"), os.path.join(d, "c.key"))
    p["wild"] = (os.path.join(d, "wild-chain.pem"), os.path.join(d, "wild.key"))
    return p


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    base = tmp_path_factory.mktemp("tlssites")
    out = {}
    for n in ("a", "b", "c", "x", "y"):
        d = base / n
        d.mkdir()
        (d / "who.txt").write_bytes(("site %s\n" % n).encode())
        out[n] = d
    return out


def conf(tmp_path, text):
    p = tmp_path / "pith.conf"
    p.write_text(text)
    return p


def block(names, root, *lines):
    return "site %s {\n  root %s\n%s}\n" % (names, root, "".join("  %s\n" % l for l in lines))


def pair(pki, name):
    return ["tls-cert %s" % pki[name][0], "tls-key %s" % pki[name][1]]


@pytest.fixture(scope="module")
def three(pith_module, pki, roots, tmp_path_factory):
    """a.test (the ECDSA certificate: localhost, a.test), b.test (RSA: b.test),
    c.test (its own), each from its own block."""
    d = tmp_path_factory.mktemp("tlsconf")
    c = conf(d, "tls-port 0\n" + block("a.test", roots["a"], *pair(pki, "ecdsa")) +
             block("b.test", roots["b"], *pair(pki, "rsa")) +
             block("c.test", roots["c"], *pair(pki, "c")))
    return pith_module("--config", str(c), root=False)


def https_get(port, pki, sni, host, path="/who.txt"):
    with tls_conn(port, pki, host=sni) as c:
        return c.exchange("GET", path, host=host)


@pytest.mark.parametrize("name,cert", [("a.test", "ecdsa"), ("b.test", "rsa"), ("c.test", "c"),
                                       ("localhost", "ecdsa"), ("other.test", "ecdsa")])
def test_sni_picks_the_sites_certificate(three, pki, name, cert):
    assert served_cert(three.tls_port, name) == leaf_der(pki[cert][0])
    rc, out = s_client(three.tls_port, "-servername", name, "-CAfile", pki["ca"],
                       "-verify_hostname", name, data=b"")
    if name != "other.test":  # no certificate names other.test: the default site's
        assert "Verify return code: 0 (ok)" in out, out


def test_each_site_answers_over_its_certificate(three, pki, roots):
    for n in ("a", "b", "c"):
        r = https_get(three.tls_port, pki, "%s.test" % n, "%s.test" % n)
        assert r.status == 200 and r.body == ("site %s\n" % n).encode()


def test_curl_resolve_with_verification(three, pki, roots):
    for n in ("b", "c"):
        host = "%s.test" % n
        out = subprocess.run(["curl", "-sS", "--cacert", pki["ca"], "--resolve",
                              "%s:%d:127.0.0.1" % (host, three.tls_port),
                              "https://%s:%d/who.txt" % (host, three.tls_port)],
                             capture_output=True, timeout=20)
        assert out.returncode == 0, out.stderr
        assert out.stdout == ("site %s\n" % n).encode()


def test_another_sites_host_is_misdirected(three, pki):
    """SNI a.test, then Host: b.test on that connection: 421, and the
    connection stays open for a host it may serve."""
    with tls_conn(three.tls_port, pki, host="a.test") as c:
        r = c.exchange("GET", "/who.txt", host="b.test")
        assert r.status == 421 and r.reason == "Misdirected Request", r.head_text()
        assert b"421" in r.body
        r = c.exchange("GET", "/who.txt", host="a.test:443")
        assert r.status == 200 and r.body == b"site a\n"
        # A host no site has goes to the default site: served, never 421.
        assert c.exchange("GET", "/who.txt", host="nobody.test").status == 200
        # The absolute-form authority is the request's host.
        assert c.exchange("GET", "https://c.test/who.txt", host="a.test").status == 421


def test_without_sni_the_default_certificate(three, pki):
    """No SNI (an IP literal as server_hostname sends none): the default
    site's certificate; another site's host is misdirected."""
    ctx = ssl.create_default_context(cafile=pki["ca"])
    raw = socket.create_connection(("127.0.0.1", three.tls_port), timeout=10)
    s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    with http_raw.Conn(0, sock=s) as c:
        assert c.exchange("GET", "/who.txt", host="a.test").body == b"site a\n"
        assert c.exchange("GET", "/who.txt", host="c.test").status == 421


def test_plain_http_is_never_misdirected(three):
    with three.conn() as c:
        if three.http_port:
            assert c.exchange("GET", "/who.txt", host="b.test").body == b"site b\n"


def test_one_certificate_never_misdirects(pith, pki, roots, tmp_path):
    """Sites sharing one certificate that names them (a wildcard): a browser
    may coalesce their requests on one connection, and pith serves them."""
    c = conf(tmp_path, "tls-port 0\n" + "\n".join(pair(pki, "wild")) + "\n" +
             block("x.w.test", roots["x"]) + block("y.w.test, w.test", roots["y"]))
    s = pith("--config", str(c), root=False)
    with tls_conn(s.tls_port, pki, host="x.w.test") as conn:
        assert conn.exchange("GET", "/who.txt", host="y.w.test").body == b"site y\n"
        assert conn.exchange("GET", "/who.txt", host="x.w.test").body == b"site x\n"


def test_shared_top_level_pairs_follow_sni(pith, pki, roots, tmp_path):
    """Two sites without their own certificates use the top level's two
    pairs: SNI picks per name, and a request for the site whose name the
    other certificate covers is misdirected."""
    c = conf(tmp_path, "tls-port 0\n" + "\n".join(pair(pki, "ecdsa") + pair(pki, "rsa")) + "\n" +
             block("a.test", roots["a"]) + block("b.test", roots["b"]))
    s = pith("--config", str(c), root=False)
    assert served_cert(s.tls_port, "b.test") == leaf_der(pki["rsa"][0])
    with tls_conn(s.tls_port, pki, host="a.test") as conn:
        assert conn.exchange("GET", "/who.txt", host="b.test").status == 421
        assert conn.exchange("GET", "/who.txt", host="localhost").status == 200


def test_no_sites_no_421(pith, pki, docroot):
    """Before sites: two pairs, one root, no names. A Host the other
    certificate names is served as it always was."""
    s = pith("--tls-port", "0", "--tls-cert", pki["ecdsa"][0], "--tls-key", pki["ecdsa"][1],
             "--tls-cert", pki["rsa"][0], "--tls-key", pki["rsa"][1])
    with tls_conn(s.tls_port, pki, host="localhost") as conn:
        r = conn.exchange("GET", "/index.html", host="b.test")
        assert r.status == 200 and r.body == docroot.files["index.html"]


def test_a_sites_broken_key_is_named(pki, roots, tmp_path):
    c = conf(tmp_path, "tls-port 0\n" + block("a.test", roots["a"], *pair(pki, "ecdsa")) +
             block("b.test", roots["b"], "tls-cert %s" % pki["rsa"][0],
                   "tls-key %s" % pki["ecdsa"][1]))
    p = run_pith("--config", c, "--check")
    assert p.returncode == 2
    assert re.search(r"^pith: %s:7: site b\.test: --tls-key %s: a EC key, but the certificate's "
                     r"key is RSA$" % (re.escape(str(c)), re.escape(pki["ecdsa"][1])),
                     p.stderr, re.M), p.stderr
    c = conf(tmp_path, block("a.test", roots["a"], "tls-cert %s" % pki["rsa"][0]))
    p = run_pith("--config", c, "--check")
    assert p.returncode == 2
    assert ("pith: %s:1: site a.test: tls-cert and tls-key must come in pairs (one key per "
            "certificate)" % c) in p.stderr, p.stderr


def test_check_says_which_certificate_each_site_has(pki, roots, tmp_path):
    c = conf(tmp_path, "tls-port 0\n" + "\n".join(pair(pki, "ecdsa")) + "\n" +
             block("a.test", roots["a"]) + block("b.test", roots["b"], *pair(pki, "rsa")))
    p = run_pith("--config", c, "--check", "--addr", "127.0.0.1", "--port", "0")
    assert p.returncode == 0, p.stderr
    assert "  site        a.test (default)\n    serve       %s\n    https       certificate 1 of 2\n" \
        % roots["a"] in p.stdout, p.stdout
    assert "    https       certificate 2 of 2\n" in p.stdout
