# SPDX-License-Identifier: MIT
"""Session resumption and SNI (issue 19): a session (a ticket; pith keeps no
session cache) that one certificate's handshake issued must not resume a
handshake that SNI gives another certificate: each certificate context has
its own session id context (the SHA-256 of its certificate), which OpenSSL
compares with the ticket's. A ticket resumes under any name of the same
certificate, and under the same name as before. TLS 1.2 and 1.3, Python's
ssl (session=); the loop is the pass's."""

import ssl

import pytest

from conftest import tls_pki
from tlsutil import client_ctx, leaf_der, tls_args, tls_conn

pytestmark = pytest.mark.full_only("TLS")

# tlscerts: the ECDSA certificate names localhost and a.test, the RSA one b.test.
VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


@pytest.fixture(scope="module")
def pki():
    return tls_pki()


@pytest.fixture(scope="module")
def tserver(pith_module, pki):
    return pith_module(*tls_args(pki))


_CTX = {}


def connect(server, pki, host, version, session=None):
    """One GET over a new connection for SNI host; returns (resumed, the
    certificate it presented, the session for the next one). One client
    context per version: Python's ssl resumes only within the context that
    made the session."""
    if version not in _CTX:
        _CTX[version] = client_ctx(pki, minimum_version=VERSIONS[version],
                                   maximum_version=VERSIONS[version])
    ctx = _CTX[version]
    with tls_conn(server.tls_port, pki, host=host, ctx=ctx, session=session) as c:
        assert c.exchange("GET", "/index.html", host=host).status == 200  # the ticket too
        s = c.sock
        return s.session_reused, s.getpeercert(binary_form=True), s.session


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_same_name_resumes(tserver, pki, version):
    for host, pair in (("localhost", "ecdsa"), ("b.test", "rsa")):
        reused, cert, sess = connect(tserver, pki, host, version)
        assert not reused and cert == leaf_der(pki[pair][0])
        assert sess is not None and sess.has_ticket, (host, version)
        reused, cert, _ = connect(tserver, pki, host, version, session=sess)
        assert reused, "%s (TLS %s): the ticket of the same name did not resume" % (host, version)
        assert cert == leaf_der(pki[pair][0])


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_another_name_of_the_same_certificate_resumes(tserver, pki, version):
    _, _, sess = connect(tserver, pki, "localhost", version)
    reused, cert, _ = connect(tserver, pki, "a.test", version, session=sess)
    assert reused, "TLS %s: a.test and localhost share a certificate, yet no resumption" % version
    assert cert == leaf_der(pki["ecdsa"][0])


@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize("first,then,pair", [("localhost", "b.test", "rsa"),
                                             ("b.test", "localhost", "ecdsa"),
                                             ("b.test", "a.test", "ecdsa")])
def test_a_ticket_does_not_resume_under_another_certificate(tserver, pki, version, first,
                                                            then, pair):
    """The session of one certificate offered to a name SNI gives the other
    certificate: a full handshake (with that certificate), never a
    resumption of the first one's session."""
    _, _, sess = connect(tserver, pki, first, version)
    assert sess is not None and sess.has_ticket
    reused, cert, _ = connect(tserver, pki, then, version, session=sess)
    assert not reused, ("TLS %s: a session issued for %s (its certificate) resumed under %s"
                        % (version, first, then))
    assert cert == leaf_der(pki[pair][0])
