# SPDX-License-Identifier: MIT
"""Helpers of the HTTPS tests (test_tls_*.py): pith's TLS flags for a PKI
from tlscerts.make_pki(), clients (Python's ssl, openssl s_client), and what
the server presented."""

import socket
import ssl
import subprocess

import http_raw


def tls_args(pki, *more, pairs=("ecdsa", "rsa")):
    args = ["--tls-port", "0"]
    for p in pairs:
        args += ["--tls-cert", pki[p][0], "--tls-key", pki[p][1]]
    return args + list(more)


def client_ctx(pki, **kw):
    ctx = ssl.create_default_context(cafile=pki["ca"])
    for k, v in kw.items():
        setattr(ctx, k, v)
    return ctx


def tls_conn(port, pki, host="localhost", ctx=None, timeout=10, session=None):
    ctx = ctx or client_ctx(pki)
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s = ctx.wrap_socket(raw, server_hostname=host, session=session)
    return http_raw.Conn(0, sock=s, timeout=timeout)


def plain_socket(port):
    """A plain TCP connection (never wrapped in TLS, even under PITH_TLS=1)."""
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def leaf_der(path):
    pem = open(path).read()
    first = pem[:pem.index("-----END CERTIFICATE-----") + 25]
    return ssl.PEM_cert_to_DER_cert(first)


def served_cert(port, host):
    """The DER certificate the server presents for SNI host (unverified)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname=host) as s:
            return s.getpeercert(binary_form=True)


def s_client(port, *args, data=b""):
    p = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port] + list(args),
                       input=data, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
    return p.returncode, p.stdout.decode("latin-1")
