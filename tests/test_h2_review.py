# SPDX-License-Identifier: MIT
"""HTTP/2 (issue 20) regressions from a security review of h2_conn.c and
h2_stream.c: each test is one defect the review found, through the live
binary, over h2c and TLS, on whichever loop PITH_IO names. A worker that
dies fails the test (conftest)."""

import pytest

from conftest import tls_pki
from h2util import H2, request_fields

pytestmark = pytest.mark.full_only("HTTP/2")


@pytest.fixture(scope="module")
def srv(pith_module):
    cert, key = tls_pki()["ecdsa"]
    return pith_module("--tls-cert", cert, "--tls-key", key, "--tls-port", "0")


@pytest.fixture(params=["h2c", "tls"])
def connect(request, srv):
    def make(**kw):
        if request.param == "tls":
            return H2(srv.tls_port, tls=tls_pki()["ca"], **kw)
        return H2(srv.http_port, **kw)
    return make


# ---- the request, as HTTP/1 would judge it -------------------------------------------------

def test_connect_with_a_long_authority_is_414_not_a_crash(connect):
    """CONNECT has no :path, so its :authority is the request target and the
    Host at once. When the request was rebuilt as HTTP/1 text it was written
    twice and could pass the slot's room (an assertion: the worker died;
    then a 431). Decoded natively, it is what HTTP/1 answers for
    "CONNECT <16290 bytes> HTTP/1.1": a request line over 8 KiB, 414."""
    authority = "a" * 16290  # 16290 + 10 + 32 + CONNECT's 46 <= 16384: inside the list limit
    with connect() as h:
        sid = h.send_headers([(":method", "CONNECT"), (":authority", authority)])
        r = h.wait(sid)
        assert r.status == 414, r
        assert h.request("/index.html").status == 200  # the connection (and worker) go on


def test_connect_with_a_short_authority_gets_http11s_answer(connect):
    with connect() as h:
        sid = h.send_headers([(":method", "CONNECT"), (":authority", "localhost:443")])
        r = h.wait(sid)
        assert r.reset is None and r.status in (400, 405, 501), r
