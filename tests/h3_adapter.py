# SPDX-License-Identifier: MIT
"""The black-box suite's HTTP/1 client interface over HTTP/3 (PITH_H3=1,
`make test-h3`; issue 34), as tests/h2_adapter.py is over HTTP/2.

Under PITH_H3=1 the server fixture's helpers (`server.get()`,
`server.conn()`, see conftest.py) hand out a Conn from here: each Conn is
one QUIC connection to the server's TLS port made by build/h3client
(tests/h3client.c: ngtcp2 and nghttp3, the libraries pith itself uses, as
a client), driven over a pipe; each request is one stream, and each answer
comes back as an http_raw.Response, so the test files' assertions run
unchanged against the HTTP/3 answers. The answer is checked by RFC 9114's
rules: `:status` first and no other pseudo-field (§4.3.2), names in lower
case (§4.2), no connection-specific field (§4.2), a content-length that
agrees with the DATA (§4.1.2), no body for HEAD, 204 or 304, and never the
canary from outside the root. nghttp3 as a client already refuses much of
this (the stream then ends with H3_MESSAGE_ERROR, which fails the test).

What has no HTTP/3 form raises NotH3 at once: raw bytes, an HTTP version
other than 1.1, a connection-specific request field. Such a test is marked
@pytest.mark.h1_only("why") and skips under PITH_H3=1 as under PITH_H2=1."""

import os
import select
import subprocess
import time

import pytest

import h2_adapter
import http_raw

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H3CLIENT = os.environ.get("PITH_H3CLIENT") or os.path.join(REPO, "build", "h3client")
CONNECTION_SPECIFIC = h2_adapter.CONNECTION_SPECIFIC


def end_h3client(p):
    """Ends an h3client stdio process: C (close with H3_NO_ERROR) and a
    wait, a kill past 5 s."""
    if p.poll() is None:
        try:
            p.stdin.write(b"C\n")
            p.stdin.close()
        except OSError:  # BrokenPipeError among them
            pass
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    p.stdout.close()


class NotH3(AssertionError):
    """The test asked for something that only HTTP/1 has."""

    def __init__(self, what):
        super().__init__("%s has no HTTP/3 form: mark the test "
                         "@pytest.mark.h1_only(\"...\") (PITH_H3=1)" % what)


def _hex(b):
    return b.hex() if b else "-"


def _unhex(t):
    return b"" if t == b"-" else bytes.fromhex(t.decode("ascii"))


def request_block(method, target, headers, host):
    try:
        return h2_adapter.request_block(method, target, headers, host, "https")
    except h2_adapter.NotH2 as e:
        raise NotH3(str(e).split(" has no ")[0]) from None


def to_response(fields, body, reset, method, tag):
    """An http_raw.Response from the decoded fields and body, checked
    (RFC 9114)."""
    if reset is not None:
        raise http_raw.Closed("stream %s was reset (code 0x%x)" % (tag, reset))
    # Informational answers (1xx) come first, each its own field section.
    sections, cur = [], None
    for n, v in fields:
        if n == b":status":
            cur = [(n, v)]
            sections.append(cur)
        elif cur is None:
            raise http_raw.ProtocolError("a field before :status: %r (RFC 9114 §4.3.2)" % n)
        else:
            cur.append((n, v))
    if not sections:
        raise http_raw.ProtocolError("stream %s ended without :status" % tag)
    final = sections[-1]
    status = final[0][1]
    if not (len(status) == 3 and status.isdigit()) or status.startswith(b"1"):
        raise http_raw.ProtocolError("final :status %r" % status)
    status = int(status)
    out = []
    for n, v in final[1:]:
        name, value = n.decode("latin-1"), v.decode("latin-1")
        if name.startswith(":"):
            raise http_raw.ProtocolError("pseudo-field %s in a response (RFC 9114 §4.3.2)" % name)
        if name != name.lower() or not http_raw.TOKEN_RE.match(n):
            raise http_raw.ProtocolError("field name %r (RFC 9114 §4.2)" % name)
        if name in CONNECTION_SPECIFIC:
            raise http_raw.ProtocolError("connection-specific field %s (RFC 9114 §4.2)" % name)
        if "\r" in value or "\n" in value or "\0" in value:
            raise http_raw.ProtocolError("CR, LF or NUL in %s: %r" % (name, value))
        out.append((name, value))
    if http_raw.CANARY is not None:
        text = b"".join(n + v for n, v in fields)
        if http_raw.CANARY in text or http_raw.CANARY in body:
            raise AssertionError("response contains the canary from outside the root")
    bodiless = method.upper() == "HEAD" or status in (204, 304)
    if bodiless and body:
        raise http_raw.ProtocolError("%d bytes of DATA for a response that has no body "
                                     "(%s, %d)" % (len(body), method, status))
    cl = [v for n, v in out if n == "content-length"]
    if cl and not bodiless:
        if len(set(cl)) != 1 or not cl[0].isdigit() or int(cl[0]) != len(body):
            raise http_raw.ProtocolError("content-length %r but %d bytes of DATA "
                                         "(RFC 9114 §4.1.2)" % (cl, len(body)))
    head = [b"HTTP/3 %d" % status] + [("%s: %s" % f).encode("latin-1") for f in out]
    return http_raw.Response("HTTP/3", status, "", out, body, b"\r\n".join(head) + b"\r\n\r\n")


class Conn:
    """http_raw.Conn's request interface, one stream per request on one
    QUIC connection; requests sent ahead (request() twice, then
    read_response() twice) are concurrent streams, answered in the order
    they were sent."""

    def __init__(self, port, host="127.0.0.1", timeout=http_raw.DEFAULT_TIMEOUT, tls=None,
                 sni="localhost", rcvbuf=None, src=None):
        if not os.path.exists(H3CLIENT):
            pytest.fail("%s is missing: make build/h3client" % H3CLIENT)
        argv = [H3CLIENT, "stdio", str(port), "--addr", host, "--sni", sni]
        if tls:
            argv += ["--ca", tls]
        if src:
            argv += ["--bind", src]  # another client: its own source address
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.timeout = timeout
        self.inbuf = b""
        self.next_tag = 0
        self.pending = []  # (tag, request) sent and not yet read
        self.streams = {}  # tag -> {"fields", "body", "reset"}
        self.done = set()
        self.ready = False
        self.closed = None  # (kind, code, reason) once the connection ended
        self.buf = b""  # what http_raw.assert_no_more_bytes looks at

    def fileno(self):
        return self.p.stdout.fileno()

    def send(self, data):
        raise NotH3("raw bytes (Conn.send)")

    def request(self, method="GET", target="/", headers=None, version="HTTP/1.1",
                host="localhost", body=b""):
        if version != "HTTP/1.1":
            raise NotH3("the version %s" % version)
        fields = request_block(method, target, headers, host)
        tag = "s%d" % self.next_tag
        self.next_tag += 1
        line = "R %s %d %s %s\n" % (tag, len(fields),
                                    " ".join("%s %s" % (_hex(n), _hex(v)) for n, v in fields),
                                    _hex(h2_adapter._b(body)))
        self.streams[tag] = {"fields": [], "body": None, "reset": None}
        self.p.stdin.write(line.encode("ascii"))
        self.p.stdin.flush()
        self.pending.append((tag, (method, target, headers, host)))

    # -- the client's events --------------------------------------------------------
    def _event(self, deadline):
        """Reads one event (a tuple of tokens, or ("E", tag, body)); None at
        the deadline, ("EOF",) when the client exited."""
        while True:
            nl = self.inbuf.find(b"\n")
            if nl >= 0:
                words = self.inbuf[:nl].split(b" ")
                if words[0] == b"E":
                    n = int(words[2])
                    if len(self.inbuf) >= nl + 1 + n:
                        body = self.inbuf[nl + 1:nl + 1 + n]
                        self.inbuf = self.inbuf[nl + 1 + n:]
                        return ("E", words[1].decode(), body)
                else:
                    self.inbuf = self.inbuf[nl + 1:]
                    return tuple(w.decode("latin-1") if i < 2 else w for i, w in enumerate(words))
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                return None
            data = os.read(self.p.stdout.fileno(), 1 << 20)
            if not data:
                return ("EOF",)
            self.inbuf += data

    def _pump(self, deadline):
        """Handles one event; False at the deadline or once nothing more can
        come."""
        ev = self._event(deadline)
        if ev is None:
            return False
        kind = ev[0]
        if kind == "EOF":
            if self.closed is None:
                self.closed = ("exit", 0, b"")
            return False
        if kind == "READY":
            self.ready = True
        elif kind == "FAIL":
            self.closed = ("handshake", 0, b"")
        elif kind == "CLOSED":
            self.closed = (ev[1], int(ev[2]), _unhex(ev[3]))
        elif kind in ("H", "E", "X"):
            st = self.streams.get(ev[1])
            if st is None or ev[1] in self.done:
                raise http_raw.ProtocolError("an event for stream %s, which was answered "
                                             "or never asked: %r" % (ev[1], ev[:3]))
            if kind == "H":
                st["fields"].append((_unhex(ev[2]), _unhex(ev[3])))
            elif kind == "E":
                st["body"] = ev[2]
                self.done.add(ev[1])
            else:
                st["reset"] = int(ev[2])
                self.done.add(ev[1])
        else:
            raise http_raw.ProtocolError("h3client said %r" % (ev,))
        return True

    def read_response(self, method=None, timeout=None):
        tag, req = self.pending.pop(0)
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while tag not in self.done:
            if self.closed is not None:
                raise http_raw.Closed("the connection ended (%s, code 0x%x %r) before stream %s "
                                      "was answered" % (self.closed[0], self.closed[1],
                                                        self.closed[2], tag))
            if not self._pump(deadline) and tag not in self.done:
                if self.closed is None:
                    raise TimeoutError("no answer on stream %s within the timeout" % tag)
        st = self.streams.pop(tag)
        resp = to_response(st["fields"], st["body"] or b"", st["reset"], method or req[0], tag)
        if DIFF is not None:
            compare(resp, DIFF(*req))
        return resp

    def exchange(self, method="GET", target="/", headers=None, version="HTTP/1.1",
                 host="localhost", timeout=None):
        self.request(method, target, headers, version, host)
        return self.read_response(method, timeout)

    def assert_quiet(self, wait=0.3):
        """http_raw.assert_no_more_bytes for HTTP/3: within `wait` seconds
        nothing arrives for a stream already answered (an event for one is a
        ProtocolError in _pump)."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and self._pump(deadline):
            pass

    def is_open(self, wait=0.2):
        self.assert_quiet(wait)
        return self.closed is None

    def wait_closed(self, timeout=5.0):
        raise NotH3("waiting for the server to close the connection")

    def close(self, rst=False):
        end_h3client(self.p)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# PITH_H3_DIFF=1: conftest sets this to a function that asks the same
# request over HTTP/1.1 (over TLS); every answer is then compared with
# HTTP/1.1's, less the Date and the Alt-Svc that only TCP answers carry.
DIFF = None


def compare(h3, h1):
    def normal(resp):
        status, fields, body = h2_adapter._normal(resp)
        return status, [(n, v) for n, v in fields if n != "alt-svc"], body

    a, b = normal(h3), normal(h1)
    assert a[0] == b[0], "status: HTTP/3 %d, HTTP/1.1 %d" % (a[0], b[0])
    assert a[1] == b[1], "fields differ:\nHTTP/3:\n%s\nHTTP/1.1:\n%s" % (
        h3.head_text(), h1.head_text())
    if b[2] != a[2] and h1.get("transfer-encoding") is None:
        raise AssertionError("bodies differ: HTTP/3 %d bytes, HTTP/1.1 %d" % (len(a[2]), len(b[2])))
