# SPDX-License-Identifier: MIT
"""A raw HTTP/2 client for the tests (issue 20): frames are built by hand
(python3-hyperframe masks the reserved bit, pads PINGs and refuses invalid
frames, so invalid input cannot go through it), header blocks with
python3-hpack's encoder (valid HPACK carrying invalid fields is what the
RFC 9113 §8 tests need). Over h2c (prior knowledge) or TLS with ALPN h2."""

import socket
import ssl
import struct
import time

import hpack

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0, 1, 2, 3
STREAM_CLOSED, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR, ENHANCE_YOUR_CALM = 5, 7, 8, 9, 11
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS_HEADER_TABLE_SIZE, SETTINGS_ENABLE_PUSH, SETTINGS_MAX_CONCURRENT_STREAMS = 1, 2, 3
SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_FRAME_SIZE, SETTINGS_MAX_HEADER_LIST_SIZE = 4, 5, 6
SETTINGS_NO_RFC7540_PRIORITIES = 9


def plain_conn(port):
    """An HTTP/1 connection to the plain port, even under PITH_TLS=1 (where
    http_raw wraps its own connections in TLS)."""
    import http_raw
    return http_raw.Conn(0, sock=socket.create_connection(("127.0.0.1", port), timeout=10))


def frame(ftype, flags, stream, payload=b""):
    """The bytes of one frame, exactly as given (stream may be >= 2**31)."""
    n = len(payload)
    return struct.pack(">BHBBI", n >> 16, n & 0xFFFF, ftype, flags, stream) + payload


def settings_frame(pairs=(), ack=False):
    return frame(SETTINGS, ACK if ack else 0, 0,
                 b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def window_update(stream, inc):
    return frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", inc))


def rst_stream(stream, code=CANCEL):
    return frame(RST_STREAM, 0, stream, struct.pack(">I", code))


# The :scheme a request names when none is given: the connection's own
# ("https" over TLS, "http" over h2c), filled in by H2.block (RFC 9113
# §8.3.1; pith refuses the other one).
CONN_SCHEME = object()


def request_fields(path="/", method="GET", authority="localhost", scheme=CONN_SCHEME, extra=()):
    f = [(":method", method), (":scheme", scheme), (":authority", authority), (":path", path)]
    return [x for x in f if x[1] is not None] + list(extra)


class Response:
    def __init__(self):
        self.status = None
        self.fields = []  # [(name, value)] less :status, as received
        self.body = b""
        self.reset = None  # the RST_STREAM code, if the stream was reset
        self.ended = False

    def get(self, name, default=None):
        vals = [v for n, v in self.fields if n == name]
        return vals[0] if vals else default

    def __repr__(self):
        return "<h2 %s %r %d bytes reset=%r>" % (self.status, self.fields, len(self.body),
                                                  self.reset)


class H2:
    """One HTTP/2 connection. `settings` go in the first SETTINGS frame."""

    def __init__(self, port, tls=None, host="127.0.0.1", sni="localhost", settings=(),
                 timeout=10.0, preface=True, rcvbuf=None, window=None, auto_window=True,
                 wrap=None, source=None):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if source:  # another client: another loopback address (127.0.0.0/8)
            sock.bind((source, 0))
        if rcvbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.settimeout(timeout)
        sock.connect((host, port))
        if wrap:  # a TLS client of the test's own (tlsutil.HalfClosingTLS)
            sock = wrap(sock)
            assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
        elif tls:
            ctx = ssl.create_default_context(cafile=tls)
            ctx.set_alpn_protocols(["h2"])
            sock = ctx.wrap_socket(sock, server_hostname=sni)
            assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
        self.sock = sock
        self.scheme = "https" if tls or wrap else "http"
        self.buf = b""
        self.eof = False
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.dec.max_allowed_table_size = 65536
        self.responses = {}
        self.goaway = None  # (last_stream_id, code)
        self.server_settings = {}
        self.pings = 0
        self.grants = {}  # stream -> the server's WINDOW_UPDATE increments, summed
        self.next_id = 1
        self.auto_window = auto_window  # WINDOW_UPDATE for each DATA frame read
        if preface:
            self.send(PREFACE + settings_frame(settings))
            if window:
                self.send(window_update(0, window))

    # -- bytes --------------------------------------------------------------------------
    def send(self, data, strict=False):
        """Sends data; a connection the server ended takes nothing (eof),
        unless strict."""
        try:
            self.sock.sendall(data)
        except (OSError, ssl.SSLError):
            if strict:
                raise
            self.eof = True

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _fill(self, deadline):
        if self.eof:
            return False
        self.sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            d = self.sock.recv(65536)
        except socket.timeout:
            return False
        except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
            d = b""
        if not d:
            self.eof = True
            return False
        self.buf += d
        return True

    def read_frame(self, timeout=10.0):
        """The next frame (type, flags, stream, payload), or None at EOF or
        when none came in time. SETTINGS are acknowledged, GOAWAY noted."""
        deadline = time.monotonic() + timeout
        while len(self.buf) < 9 or len(self.buf) < 9 + int.from_bytes(self.buf[:3], "big"):
            if time.monotonic() >= deadline or not self._fill(deadline):
                return None
        n = int.from_bytes(self.buf[:3], "big")
        t, fl, sid = self.buf[3], self.buf[4], struct.unpack(">I", self.buf[5:9])[0]
        payload, self.buf = self.buf[9:9 + n], self.buf[9 + n:]
        if t == SETTINGS and not fl & ACK:
            for i in range(0, len(payload), 6):
                k, v = struct.unpack(">HI", payload[i:i + 6])
                self.server_settings[k] = v
            self.send(settings_frame(ack=True))
        elif t == GOAWAY:
            self.goaway = struct.unpack(">II", payload[:8])
        elif t == PING and fl & ACK:
            self.pings += 1
        elif t in (HEADERS, CONTINUATION):
            self._headers(fl, sid, payload, t)
        elif t == DATA:
            r = self.responses.setdefault(sid, Response())
            r.body += payload
            r.ended = r.ended or bool(fl & END_STREAM)
            if n and self.auto_window:  # give the window back at once
                self.send(window_update(0, n) + (b"" if r.ended else window_update(sid, n)))
        elif t == WINDOW_UPDATE and len(payload) == 4:
            inc = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
            self.grants[sid] = self.grants.get(sid, 0) + inc
        elif t == RST_STREAM:
            self.responses.setdefault(sid, Response()).reset = struct.unpack(">I", payload)[0]
        return t, fl, sid, payload

    def _headers(self, fl, sid, payload, t):
        if t == HEADERS:
            if fl & PADDED:
                payload = payload[1:len(payload) - payload[0]]
            if fl & PRIORITY_FLAG:
                payload = payload[5:]
            self._block, self._block_flags = payload, fl
        else:
            self._block += payload
        if not fl & END_HEADERS:
            return
        r = self.responses.setdefault(sid, Response())
        for name, value in self.dec.decode(self._block, raw=True):
            name, value = name.decode(), value.decode("latin-1")
            if name == ":status":
                r.status = int(value)
            else:
                r.fields.append((name, value))
        r.ended = r.ended or bool(self._block_flags & END_STREAM)

    # -- requests -----------------------------------------------------------------------
    def block(self, fields):
        return self.enc.encode([(n, self.scheme if v is CONN_SCHEME else v) for n, v in fields])

    def send_headers(self, fields, stream=None, end_stream=True):
        sid = stream if stream is not None else self.next_id
        self.next_id = max(self.next_id, sid + 2)
        block = self.block(fields)
        es = END_STREAM if end_stream else 0
        # RFC 9113 §4.2: no frame over 16384 bytes; the rest in CONTINUATIONs.
        parts = [block[i:i + 16384] for i in range(0, len(block), 16384)] or [b""]
        out = frame(HEADERS, es | (END_HEADERS if len(parts) == 1 else 0), sid, parts[0])
        for i, p in enumerate(parts[1:], 2):
            out += frame(CONTINUATION, END_HEADERS if i == len(parts) else 0, sid, p)
        self.send(out)
        return sid

    def wait(self, sid, timeout=10.0):
        """Reads until stream sid ends or is reset; its Response."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.responses.get(sid)
            if r and (r.ended or r.reset is not None):
                return r
            if self.read_frame(max(0.01, deadline - time.monotonic())) is None:
                raise AssertionError("stream %d did not end (eof=%s goaway=%r): %r"
                                     % (sid, self.eof, self.goaway, r))

    def request(self, path="/", method="GET", authority="localhost", scheme=CONN_SCHEME, extra=(),
                timeout=10.0):
        sid = self.send_headers(request_fields(path, method, authority, scheme, extra))
        return self.wait(sid, timeout)

    def wait_goaway(self, timeout=10.0):
        """Reads until a GOAWAY (or EOF); the GOAWAY's (last id, code) or None."""
        deadline = time.monotonic() + timeout
        while self.goaway is None and time.monotonic() < deadline:
            if self.read_frame(max(0.01, deadline - time.monotonic())) is None and self.eof:
                break
        return self.goaway

    def wait_closed(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while not self.eof and time.monotonic() < deadline:
            self.read_frame(max(0.01, deadline - time.monotonic()))
        return self.eof
