# SPDX-License-Identifier: MIT
"""The black-box suite's HTTP/1 client interface over HTTP/2 (PITH_H2=1,
`make test-h2`; issue 20).

Under PITH_H2=1 the server fixture's helpers (`server.get()`,
`server.conn()`, see conftest.py) hand out a Conn from here instead of
http_raw's: each request is one stream of one HTTP/2 connection (h2c by
prior knowledge on the plain port, or TLS with ALPN h2 under PITH_TLS=1,
through tests/h2util.py's H2), and each answer comes back as an
http_raw.Response, so the test files' assertions run unchanged against the
HTTP/2 answers. The answer is checked as strictly as http_raw checks an
HTTP/1.1 one, by RFC 9113's rules: `:status` and nothing else among the
pseudo-fields, names in lower case, no connection-specific field (§8.2.2),
a content-length that agrees with the DATA (§8.1.1), no body for HEAD, 204
or 304, and never the canary from outside the root.

What has no HTTP/2 form raises NotH2 at once, so that no test runs over
HTTP/1 in an HTTP/2 pass unnoticed: raw bytes (Conn.send, server.raw), an
HTTP version other than 1.1, a connection-specific request field. Such a
test is marked @pytest.mark.h1_only("why") and skips under PITH_H2=1."""

import time

import http_raw
from h2util import (DATA, END_STREAM, H2, PING, SETTINGS, SETTINGS_INITIAL_WINDOW_SIZE,
                    WINDOW_UPDATE, frame, request_fields)

# RFC 9113 §8.2.2: fields that HTTP/2 leaves to the connection; `te` only
# as "trailers".
CONNECTION_SPECIFIC = frozenset(["connection", "keep-alive", "proxy-connection",
                                 "transfer-encoding", "upgrade"])
# A window large enough that no response of the suite's waits for a
# WINDOW_UPDATE (the stream's and, with the update sent after the
# preface, the connection's); h2util gives back what each DATA frame took.
WINDOW = 1 << 26


class NotH2(AssertionError):
    """The test asked for something that only HTTP/1 has."""

    def __init__(self, what):
        super().__init__("%s has no HTTP/2 form: mark the test "
                         "@pytest.mark.h1_only(\"...\") (PITH_H2=1)" % what)


def _b(x):
    return x if isinstance(x, bytes) else str(x).encode("utf-8")


def request_block(method, target, headers, host, scheme):
    """The request's header list: the pseudo-fields from the request line and
    host (as :authority), then the fields in order, names lowercased and
    values without the optional whitespace around them (which HTTP/1 does
    not count as the value, RFC 9112 §5, and HTTP/2 forbids, RFC 9113
    §8.2.1). CONNECT has only :method and :authority (§8.5)."""
    if method == "CONNECT":
        fields = [(b":method", b"CONNECT")] + ([(b":authority", _b(host))] if host else [])
    else:
        fields = [(_b(n), _b(v)) for n, v in request_fields(target, method, host or None, scheme)]
    items = headers.items() if isinstance(headers, dict) else (headers or [])
    for k, v in items:
        name = _b(k).lower()
        if name.decode("latin-1") in CONNECTION_SPECIFIC:
            raise NotH2("the request field %s" % name.decode("latin-1"))
        if name == b"te" and _b(v).strip().lower() != b"trailers":
            raise NotH2("te: %s" % _b(v).decode("latin-1"))
        fields.append((name, _b(v).strip(b" \t")))
    return fields


def to_response(r, method, sid):
    """An http_raw.Response from h2util's Response, checked (RFC 9113)."""
    if r.reset is not None:
        raise http_raw.Closed("stream %d was reset (code %d)" % (sid, r.reset))
    if r.status is None:
        raise http_raw.ProtocolError("stream %d ended without :status" % sid)
    for name, value in r.fields:
        if name.startswith(":"):
            raise http_raw.ProtocolError("pseudo-field %s in a response" % name)
        if name != name.lower() or not http_raw.TOKEN_RE.match(name.encode("latin-1")):
            raise http_raw.ProtocolError("field name %r (RFC 9113 §8.2.1)" % name)
        if name in CONNECTION_SPECIFIC:
            raise http_raw.ProtocolError("connection-specific field %s (RFC 9113 §8.2.2)" % name)
        if "\r" in value or "\n" in value or "\0" in value:
            raise http_raw.ProtocolError("CR, LF or NUL in %s: %r" % (name, value))
    if http_raw.CANARY is not None:
        text = b"".join(n.encode("latin-1") + v.encode("latin-1") for n, v in r.fields)
        if http_raw.CANARY in text or http_raw.CANARY in r.body:
            raise AssertionError("response contains the canary from outside the root")
    bodiless = method.upper() == "HEAD" or r.status in (204, 304)
    if bodiless and r.body:
        raise http_raw.ProtocolError("%d bytes of DATA for a response that has no body "
                                     "(%s, %d)" % (len(r.body), method, r.status))
    cl = [v for n, v in r.fields if n == "content-length"]
    if cl and not bodiless:
        if len(set(cl)) != 1 or not cl[0].isdigit() or int(cl[0]) != len(r.body):
            raise http_raw.ProtocolError("content-length %r but %d bytes of DATA "
                                         "(RFC 9113 §8.1.1)" % (cl, len(r.body)))
    head = [b"HTTP/2 %d" % r.status] + [("%s: %s" % f).encode("latin-1") for f in r.fields]
    head_raw = b"\r\n".join(head) + b"\r\n\r\n"
    return http_raw.Response("HTTP/2", r.status, "", list(r.fields), r.body, head_raw)


class Conn:
    """http_raw.Conn's request interface, one stream per request on one
    HTTP/2 connection; requests sent ahead (request() twice, then
    read_response() twice) are concurrent streams, answered in the order
    they were sent."""

    def __init__(self, port, host="127.0.0.1", timeout=http_raw.DEFAULT_TIMEOUT, tls=None,
                 sni="localhost", rcvbuf=None):
        self.h2 = H2(port, tls=tls, host=host, sni=sni, timeout=timeout, rcvbuf=rcvbuf,
                     settings=[(SETTINGS_INITIAL_WINDOW_SIZE, WINDOW)], window=WINDOW)
        self.scheme = "https" if tls else "http"
        self.sock = self.h2.sock
        self.timeout = timeout
        self.buf = b""  # what http_raw.assert_no_more_bytes looks at
        self.pending = []  # (stream id, method) sent and not yet read

    def fileno(self):
        return self.sock.fileno()

    def send(self, data):
        raise NotH2("raw bytes (Conn.send)")

    def request(self, method="GET", target="/", headers=None, version="HTTP/1.1",
                host="localhost", body=b""):
        if version != "HTTP/1.1":
            raise NotH2("the version %s" % version)
        fields = request_block(method, target, headers, host, self.scheme)
        sid = self.h2.send_headers(fields, end_stream=not body)
        for i in range(0, len(body), 16384):
            part = body[i:i + 16384]
            self.h2.send(frame_data(sid, part, i + len(part) == len(body)))
        self.pending.append((sid, (method, target, headers, host)))

    def read_response(self, method=None, timeout=None):
        sid, req = self.pending.pop(0)
        r = self.h2.wait(sid, self.timeout if timeout is None else timeout)
        del self.h2.responses[sid]
        resp = to_response(r, method or req[0], sid)
        if DIFF is not None:
            compare(resp, DIFF(*req))
        return resp

    def exchange(self, method="GET", target="/", headers=None, version="HTTP/1.1",
                 host="localhost", timeout=None):
        self.request(method, target, headers, version, host)
        return self.read_response(method, timeout)

    def assert_quiet(self, wait=0.3):
        """http_raw.assert_no_more_bytes for HTTP/2: within `wait` seconds no
        frame arrives but the connection's own (SETTINGS, PING,
        WINDOW_UPDATE), and nothing for a stream already answered."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            f = self.h2.read_frame(max(0.01, deadline - time.monotonic()))
            if f is None:
                break
            t, _, sid, payload = f
            assert t in (SETTINGS, PING, WINDOW_UPDATE), \
                "a frame after the answers: type %d stream %d %r" % (t, sid, payload[:100])

    def is_open(self, wait=0.2):
        self.assert_quiet(wait)
        return not self.h2.eof and self.h2.goaway is None

    def wait_closed(self, timeout=5.0):
        raise NotH2("waiting for the server to close the connection")

    def close(self, rst=False):
        self.h2.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def frame_data(sid, payload, last):
    return frame(DATA, END_STREAM if last else 0, sid, payload)


# PITH_H2_DIFF=1: conftest sets this to a function that asks the same
# request over HTTP/1.1; every answer is then compared with HTTP/1.1's.
DIFF = None
VOLATILE = frozenset(["date"])


def _normal(resp):
    fields = [(n.lower(), v) for n, v in resp.fields
              if n.lower() not in CONNECTION_SPECIFIC and n.lower() not in VOLATILE]
    body = resp.body
    ct = resp.get("content-type") or ""
    m = ct.partition("boundary=")[2]
    if m:
        fields = [(n, v.replace(m, "BOUNDARY")) for n, v in fields]
        body = body.replace(m.encode(), b"BOUNDARY")
    return resp.status, fields, body


def compare(h2, h1):
    a, b = _normal(h2), _normal(h1)
    assert a[0] == b[0], "status: HTTP/2 %d, HTTP/1.1 %d" % (a[0], b[0])
    assert a[1] == b[1], "fields differ:\nHTTP/2:\n%s\nHTTP/1.1:\n%s" % (
        h2.head_text(), h1.head_text())
    if b[2] != a[2] and h1.get("transfer-encoding") is None:
        raise AssertionError("bodies differ: HTTP/2 %d bytes, HTTP/1.1 %d" % (len(a[2]), len(b[2])))
