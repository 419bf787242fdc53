# SPDX-License-Identifier: MIT
"""Raw HTTP/1.1 over a socket, parsed strictly, for black-box tests of pith.

The helper never "fixes" what the server sends: a response head must use CRLF
line endings, every field line must be `name: value` with a token name, and a
body is read by Content-Length, chunked coding, or until the server closes,
exactly as RFC 9112 §6.3 orders them. Every byte that passes through a Conn is
checked against CANARY (the content of a file outside the document root) so
that no test can receive it unnoticed.
"""

import errno
import re
import select
import socket
import time

# Set by conftest.py once the document root exists; no response may contain it.
CANARY = None

DEFAULT_TIMEOUT = 10.0
TOKEN_RE = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
STATUS_RE = re.compile(rb"^HTTP/(\d)\.(\d) (\d{3}) ([\t \x21-\x7e\x80-\xff]*)$")


class ProtocolError(AssertionError):
    """The server sent something that is not a well-formed HTTP/1.1 response."""


class Closed(AssertionError):
    """The connection closed (or was reset) before a complete response arrived."""


class Response:
    def __init__(self, version, status, reason, fields, body, head_raw):
        self.version = version  # "HTTP/1.1"
        self.status = status  # int
        self.reason = reason  # str
        self.fields = fields  # [(name, value)] as received, latin-1 decoded
        self.body = body  # bytes
        self.head_raw = head_raw  # bytes, the status line and fields with CRLFs

    def all(self, name):
        """Every value of the field `name` (case-insensitive), in order."""
        name = name.lower()
        return [v for n, v in self.fields if n.lower() == name]

    def get(self, name, default=None):
        """The value of a field that must not be repeated, or default."""
        vals = self.all(name)
        if len(vals) > 1:
            raise ProtocolError("field %s repeated: %r" % (name, vals))
        return vals[0] if vals else default

    def __getitem__(self, name):
        v = self.get(name)
        if v is None:
            raise KeyError("response has no %s field; head:\n%s" % (name, self.head_text()))
        return v

    def __contains__(self, name):
        return bool(self.all(name))

    def head_text(self):
        return self.head_raw.decode("latin-1")

    def __repr__(self):
        return "<Response %d %s, %d body bytes>\n%s" % (
            self.status,
            self.reason,
            len(self.body),
            self.head_text(),
        )


# An ssl.SSLContext when the suite runs over TLS (conftest, PITH_TLS=1):
# every Conn made here then speaks TLS to the port it is given.
TLS_CONTEXT = None


def _tls_wrap(sock, host):
    import ssl

    try:
        return TLS_CONTEXT.wrap_socket(sock, server_hostname=host)
    except (ssl.SSLError, OSError):
        sock.close()
        raise


class Conn:
    """One client connection with its own receive buffer (so that pipelined
    responses can be read one after another)."""

    def __init__(self, port, host="127.0.0.1", timeout=DEFAULT_TIMEOUT, family=None, sock=None,
                 rcvbuf=None):
        if sock is None:
            if family is None:
                family = socket.AF_INET6 if ":" in host else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            if rcvbuf is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.settimeout(timeout)
            try:
                sock.connect((host, port))
            except BaseException:
                sock.close()
                raise
            if TLS_CONTEXT is not None:
                sock = _tls_wrap(sock, host)
        self.sock = sock
        self.timeout = timeout
        self.buf = b""
        self.eof = False
        self.reset = False
        self.received = 0

    # -- low level -----------------------------------------------------------------
    def fileno(self):
        return self.sock.fileno()

    def send(self, data):
        """Sends all of data. A reset or broken pipe is recorded, not raised:
        a server may legitimately close while a rejected request is still
        being sent."""
        if isinstance(data, str):
            data = data.encode("latin-1")
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            self.reset = True
            return False

    def _fill(self, timeout=None):
        """Receives once into the buffer. Returns the number of bytes added
        (0 at EOF or reset). Raises socket.timeout when nothing arrives."""
        if self.eof:
            return 0
        self.sock.settimeout(self.timeout if timeout is None else timeout)
        try:
            data = self.sock.recv(262144)
        except ConnectionResetError:
            self.eof = self.reset = True
            return 0
        if not data:
            self.eof = True
            return 0
        if CANARY is not None:
            # A canary split across two recv() calls is caught too.
            window = self.buf[-len(CANARY):] + data
            if CANARY in window:
                raise AssertionError("response bytes contain the canary from outside the root")
        self.buf += data
        self.received += len(data)
        return len(data)

    def _need(self, n, deadline):
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("timed out waiting for %d bytes (have %d)" % (n, len(self.buf)))
            if self._fill(left) == 0:
                raise Closed("connection closed after %d of %d bytes" % (len(self.buf), n))

    def _take(self, n):
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _line(self, deadline, limit=65536):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                return self._take(i + 2)[:-2]
            if len(self.buf) > limit:
                raise ProtocolError("line longer than %d bytes" % limit)
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("timed out waiting for a line")
            if self._fill(left) == 0:
                raise Closed("connection closed in the middle of a line: %r" % self.buf[:200])

    # -- requests ------------------------------------------------------------------
    def request(self, method="GET", target="/", headers=None, version="HTTP/1.1",
                host="localhost", body=b""):
        """Sends one request. headers: list of (name, value) or a dict; values
        may be str or bytes. host=None leaves Host out."""
        lines = [b"%s %s %s" % (_b(method), _b(target), _b(version))]
        if host is not None:
            lines.append(b"Host: " + _b(host))
        if headers:
            items = headers.items() if isinstance(headers, dict) else headers
            for k, v in items:
                lines.append(_b(k) + b": " + _b(v))
        self.send(b"\r\n".join(lines) + b"\r\n\r\n" + body)

    def read_response(self, method="GET", timeout=None):
        """Reads exactly one response. method tells whether a body follows
        (HEAD never has one)."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        status_line = self._line(deadline)
        m = STATUS_RE.match(status_line)
        if not m:
            raise ProtocolError("bad status line: %r" % status_line[:200])
        version = "HTTP/%s.%s" % (m.group(1).decode(), m.group(2).decode())
        status = int(m.group(3))
        reason = m.group(4).decode("latin-1")
        fields = []
        head = [status_line]
        while True:
            line = self._line(deadline)
            if line == b"":
                break
            head.append(line)
            if b"\n" in line or b"\r" in line:
                raise ProtocolError("bare CR/LF inside a field line: %r" % line)
            name, sep, value = line.partition(b":")
            if not sep or not TOKEN_RE.match(name):
                raise ProtocolError("malformed field line: %r" % line[:200])
            fields.append((name.decode("latin-1"), value.strip(b" \t").decode("latin-1")))
            if len(fields) > 200:
                raise ProtocolError("more than 200 response fields")
        head_raw = b"\r\n".join(head) + b"\r\n\r\n"
        resp = Response(version, status, reason, fields, b"", head_raw)
        if method.upper() == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return resp
        te = resp.all("Transfer-Encoding")
        cl = resp.all("Content-Length")
        if te:
            if cl:
                raise ProtocolError("response has both Transfer-Encoding and Content-Length")
            if te[-1].lower() != "chunked":
                raise ProtocolError("unknown transfer coding %r" % te)
            resp.body = self._read_chunked(deadline)
        elif cl:
            if len(set(cl)) != 1 or not re.fullmatch(r"\d+", cl[0]):
                raise ProtocolError("bad Content-Length %r" % cl)
            n = int(cl[0])
            self._need(n, deadline)
            resp.body = self._take(n)
        else:
            while self._fill(max(0.01, deadline - time.monotonic())):
                pass
            resp.body = self._take(len(self.buf))
        return resp

    def _read_chunked(self, deadline):
        body = b""
        while True:
            line = self._line(deadline)
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                while self._line(deadline) != b"":
                    pass
                return body
            self._need(size + 2, deadline)
            body += self._take(size)
            if self._take(2) != b"\r\n":
                raise ProtocolError("chunk not followed by CRLF")

    def exchange(self, method="GET", target="/", headers=None, version="HTTP/1.1",
                 host="localhost", timeout=None):
        self.request(method, target, headers, version, host)
        return self.read_response(method, timeout)

    # -- connection state ----------------------------------------------------------
    def wait_closed(self, timeout=5.0):
        """Waits until the server closes (EOF or reset). Returns the bytes that
        arrived in the meantime (normally none); raises socket.timeout if the
        connection is still open after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("connection still open after %.1f s" % timeout)
            try:
                self._fill(left)
            except socket.timeout:
                raise socket.timeout("connection still open after %.1f s" % timeout) from None
        return self._take(len(self.buf))

    def is_open(self, wait=0.2):
        """True when nothing (no EOF, no data) arrives within `wait` seconds."""
        if self.eof:
            return False
        if TLS_CONTEXT is not None and hasattr(self.sock, "pending"):
            return self._tls_is_open(wait)
        r, _, _ = select.select([self.sock], [], [], wait)
        if not r:
            return True
        try:
            data = self.sock.recv(65536, socket.MSG_PEEK)
        except ConnectionResetError:
            self.eof = self.reset = True
            return False
        if not data:
            self.eof = True
            return False
        return True

    def _tls_is_open(self, wait):
        """is_open over TLS: no peeking there, so what arrives is kept in
        the buffer for the next read."""
        import ssl

        if self.sock.pending():
            return True
        r, _, _ = select.select([self.sock], [], [], wait)
        if not r:
            return True
        try:
            self.sock.settimeout(0.2)
            data = self.sock.recv(65536)
        except (ssl.SSLWantReadError, socket.timeout):
            return True
        except (ConnectionResetError, ssl.SSLError):
            self.eof = self.reset = True
            return False
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def close(self, rst=False):
        if rst:
            import struct

            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def assert_no_more_bytes(c, wait=0.3):
    """Nothing follows a response on the connection c (a Conn): no stray
    body bytes, neither buffered nor arriving within `wait` seconds. For an
    HTTP/2 connection (tests/h2_adapter.py): no frame but the connection's
    own."""
    if hasattr(c, "assert_quiet"):
        return c.assert_quiet(wait)
    assert c.buf == b"", "bytes after the response: %r" % c.buf[:200]
    if TLS_CONTEXT is not None and hasattr(c.sock, "pending"):
        import ssl

        assert c.sock.pending() == 0, "bytes after the response (TLS)"
        r, _, _ = select.select([c.sock], [], [], wait)
        if r:
            try:
                c.sock.settimeout(0.2)
                data = c.sock.recv(65536)
            except (ssl.SSLWantReadError, socket.timeout, ConnectionResetError, ssl.SSLError):
                data = b""
            assert data == b"", "bytes after the response: %r" % data[:200]
        return
    r, _, _ = select.select([c.sock], [], [], wait)
    if r:
        try:
            data = c.sock.recv(65536, socket.MSG_PEEK)
        except ConnectionResetError:
            data = b""
        assert data == b"", "bytes after the response: %r" % data[:200]


class _Received:
    """The socket of a Conn whose bytes have all arrived already."""

    def settimeout(self, t):
        pass


def parse_response(data, method="GET"):
    """Parses one response, as strictly as Conn.read_response, from bytes
    received earlier on a connection that has closed since. Returns
    (response, the bytes after it)."""
    c = Conn(0, sock=_Received())
    c.buf, c.eof = data, True
    r = c.read_response(method)
    return r, c.buf


def _b(x):
    return x if isinstance(x, bytes) else str(x).encode("utf-8")


def fetch(port, target="/", method="GET", headers=None, version="HTTP/1.1", host="localhost",
          addr="127.0.0.1", timeout=DEFAULT_TIMEOUT):
    """One request on a fresh connection; returns the response."""
    with Conn(port, addr, timeout=timeout) as c:
        return c.exchange(method, target, headers, version, host)


def raw(port, data, addr="127.0.0.1", method="GET", close_wait=5.0):
    """Sends raw bytes, reads one response, then waits for the server to close.
    Returns (response, bytes_after_it, closed) where closed tells whether the
    server closed within close_wait seconds."""
    with Conn(port, addr) as c:
        c.send(data)
        resp = c.read_response(method)
        try:
            rest = c.wait_closed(close_wait)
            closed = True
        except socket.timeout:
            rest = c._take(len(c.buf))
            closed = False
        return resp, rest, closed


def connect_error(port, addr="127.0.0.1", timeout=3.0):
    """None when a TCP connection can be made, else the errno name."""
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.settimeout(timeout)
    try:
        s.connect((addr, port))
        return None
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e)) if e.errno else str(e)
    finally:
        s.close()


IMF_FIXDATE_RE = re.compile(
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d\d) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"(\d{4}) (\d\d):(\d\d):(\d\d) GMT$"
)


def parse_imf_fixdate(s):
    """Seconds since the epoch for an IMF-fixdate, or None when s is not one."""
    import calendar

    m = IMF_FIXDATE_RE.match(s)
    if not m:
        return None
    months = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
    t = (int(m.group(4)), months.index(m.group(3)) + 1, int(m.group(2)), int(m.group(5)),
         int(m.group(6)), int(m.group(7)))
    ts = calendar.timegm(t + (0, 0, 0))
    # The day name must agree with the date.
    if time.strftime("%a", time.gmtime(ts)) != m.group(1):
        return None
    return ts
