# SPDX-License-Identifier: MIT
"""Helpers of the HTTPS tests (test_tls_*.py): pith's TLS flags for a PKI
from tlscerts.make_pki(), clients (Python's ssl, openssl s_client), and what
the server presented."""

import socket
import ssl
import subprocess
import time

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


def s_client_events(port, ca, path, command, version="-tls1_3", pause=1.0):
    """One connection of openssl s_client (-msg) that sends a GET of path,
    then one of its commands (b"K\\n": a KeyUpdate asking for ours; b"R\\n":
    a renegotiation), then a second GET. Returns what it saw, in order:
    "response" (a status line), "client X" / "server X" for the handshake
    messages KeyUpdate, ClientHello and ServerHello, and "client alert X" /
    "server alert X" for the alerts each side sent. Python's ssl module can do neither
    command; s_client can. Only the standard library and s_client: the
    user-mode Linux guest uses it too."""
    get = b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path.encode()
    p = subprocess.Popen(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, version,
                          "-CAfile", ca, "-servername", "localhost", "-msg"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for chunk in (get, command, get):  # s_client reads its commands at a read's start
            time.sleep(pause)
            p.stdin.write(chunk)
            p.stdin.flush()
        time.sleep(pause * 1.5)
    except BrokenPipeError:
        pass  # s_client ended: the connection is over
    finally:
        try:
            p.stdin.close()  # s_client's end: it closes the connection
        except BrokenPipeError:
            pass
        out = p.stdout.read().decode("latin-1")
        p.wait(30)
    events = []
    for line in out.splitlines():
        side = {">>>": "client", "<<<": "server"}.get(line[:3])
        if line.startswith("HTTP/1.1 "):
            events.append("response")
        elif side and ", Alert " in line:
            events.append("%s alert %s" % (side, line.split()[-1]))
        elif side:
            for msg in ("KeyUpdate", "ClientHello", "ServerHello"):
                if line.endswith(", " + msg):
                    events.append("%s %s" % (side, msg))
    return events


def key_update_events(port, ca, path, pause=1.0):
    """s_client_events() of a TLS 1.3 client that asks for a key update
    (RFC 8446 4.6.3: update_requested) between two requests."""
    return s_client_events(port, ca, path, b"K\n", "-tls1_3", pause)


def answered_key_update_first(events):
    """RFC 8446 4.6.3: after a KeyUpdate with update_requested, the receiver
    sends a KeyUpdate of its own before its next application data. True
    when no response followed the client's KeyUpdate before the server's."""
    i = events.index("client KeyUpdate")
    for e in events[i + 1:]:
        if e == "server KeyUpdate":
            return True
        if e == "response":
            return False
    return True


def memory_tls(raw, ctx, sni="localhost"):
    """A TLS client over memory BIOs on the connected socket raw, its
    handshake done: (SSLObject, incoming BIO, outgoing BIO). What goes on
    the wire after it, and when, is the caller's choice."""
    inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, outg, server_hostname=sni)
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            raw.sendall(outg.read())
            chunk = raw.recv(1 << 16)
            assert chunk, "the server closed during the handshake"
            inc.write(chunk)
    raw.sendall(outg.read())
    return tls, inc, outg


class HalfClosingTLS:
    """A TLS client socket (sendall, recv, settimeout, close) over memory
    BIOs, so that it can send its close_notify and go on reading, which
    TLS 1.3 allows (RFC 8446 §6.1: the alert closes the sender's direction)
    and ssl.SSLSocket cannot do (its unwrap() waits for the peer's)."""

    def __init__(self, raw, ca, sni="localhost", alpn=("h2",)):
        ctx = ssl.create_default_context(cafile=ca)
        ctx.set_alpn_protocols(list(alpn))
        self.raw = raw
        self.held = b""  # plaintext read before our close_notify
        self.notified = False  # the server's close_notify came
        self.tls, self.inc, self.outg = memory_tls(raw, ctx, sni)

    def selected_alpn_protocol(self):
        return self.tls.selected_alpn_protocol()

    def _flush(self):
        data = self.outg.read()
        if data:
            self.raw.sendall(data)

    def settimeout(self, t):
        self.raw.settimeout(t)

    def getsockname(self):
        return self.raw.getsockname()

    def sendall(self, data):
        self.tls.write(data)
        self._flush()

    def recv(self, n):
        """Plaintext; b"" at the server's close_notify or a bare FIN."""
        if self.held:
            data, self.held = self.held[:n], self.held[n:]
            return data
        while True:
            try:
                return self.tls.read(n)
            except ssl.SSLWantReadError:
                chunk = self.raw.recv(1 << 16)  # socket.timeout propagates
                if not chunk:
                    return b""
                self.inc.write(chunk)
            except ssl.SSLZeroReturnError:
                self.notified = True
                return b""

    def close_notify(self):
        """Our close_notify, and nothing else: the TCP stream stays open.
        OpenSSL's SSL_shutdown (which unwrap() calls twice) reads on to wait
        for the server's, and takes application data there for an error:
        what it could read is taken out first and served by recv()."""
        while True:
            try:
                self.held += self.tls.read(1 << 16)
            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                break
        try:
            self.tls.unwrap()
        except ssl.SSLWantReadError:
            pass  # sent; the server's comes when it is done
        self._flush()

    def close(self):
        self.raw.close()
