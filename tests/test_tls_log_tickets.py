# SPDX-License-Identifier: MIT
"""What DESIGN.md §9 and §7 promise of HTTPS, through the live process
(issue 19): a session ticket says it resumes for a day (its lifetime hint is
86,400 s, not OpenSSL's default of 7,200), on TLS 1.2 and 1.3; and
`--log-format json` names the TLS version of each request's connection
("tls": "TLSv1.2" / "TLSv1.3", HTTP/1.1 and HTTP/2; null on the plain
port). The loop is the
pass's."""

import ssl
import subprocess

import pytest

import http_raw
from conftest import tls_pki
from opsnet_util import json_lines
from tlsutil import client_ctx, plain_socket, tls_args, tls_conn

pytestmark = pytest.mark.full_only("TLS")

VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
TICKET_LIFETIME_S = 86400  # DESIGN.md §9: "for up to a day"


@pytest.fixture(scope="module")
def pki():
    return tls_pki()


def version_ctx(pki, name):
    return client_ctx(pki, minimum_version=VERSIONS[name], maximum_version=VERSIONS[name])


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_ticket_lifetime_hint_is_a_day(pith, pki, version):
    s = pith(*tls_args(pki))
    with tls_conn(s.tls_port, pki, ctx=version_ctx(pki, version)) as c:
        assert c.exchange("GET", "/index.html").status == 200  # the ticket comes with it
        sess = c.sock.session
        assert c.sock.version() == version
    assert sess is not None and sess.has_ticket
    assert sess.ticket_lifetime_hint == TICKET_LIFETIME_S, sess.ticket_lifetime_hint


def test_json_log_names_the_tls_version(pith, pki, tmp_path):
    log = tmp_path / "access.json"
    s = pith(*tls_args(pki, "--log", str(log), "--log-format", "json"))
    for version in ("TLSv1.2", "TLSv1.3"):
        with tls_conn(s.tls_port, pki, ctx=version_ctx(pki, version)) as c:
            r = c.exchange("GET", "/index.html?" + version)
            assert r.status == 200 and c.sock.version() == version
    with http_raw.Conn(0, sock=plain_socket(s.http_port)) as c:
        assert c.exchange("GET", "/index.html?plain").status == 200
    # HTTP/2 over TLS (ALPN h2): its streams' lines name the version too.
    p = subprocess.run(["curl", "-sS", "--http2", "--tlsv1.3", "--cacert", pki["ca"], "-o",
                        "/dev/null", "-w", "%{http_version}",
                        "https://localhost:%d/index.html?h2" % s.tls_port],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout == "2", (p.stdout, p.stderr)
    lines = {o["target"]: o for o in json_lines(log, 4)}
    assert set(lines) == {"/index.html?TLSv1.2", "/index.html?TLSv1.3", "/index.html?plain",
                          "/index.html?h2"}, lines
    assert lines["/index.html?h2"]["protocol"] == "HTTP/2.0"
    assert lines["/index.html?h2"]["tls"] == "TLSv1.3"
    assert lines["/index.html?TLSv1.2"]["tls"] == "TLSv1.2"
    assert lines["/index.html?TLSv1.3"]["tls"] == "TLSv1.3"
    assert "tls" in lines["/index.html?plain"] and lines["/index.html?plain"]["tls"] is None
