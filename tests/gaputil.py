# SPDX-License-Identifier: MIT
"""Small helpers shared by the tests/test_gap_*.py files: reading a process's
state from /proc, and reading an HTTP/1.1 response byte for byte where the
framing itself is under test (http_raw.Conn is lenient about chunk sizes on
purpose; these are not)."""

import os
import re
import socket
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_status(pid):
    """/proc/<pid>/status as a dict of name -> list of whitespace-split values."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            name, _, value = line.partition(":")
            out[name] = value.split()
    return out


def cpu_ticks(pid):
    """utime + stime of pid, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def open_fds(pid):
    """{fd number: link target} of every descriptor pid holds."""
    out = {}
    d = "/proc/%d/fd" % pid
    for name in os.listdir(d):
        try:
            out[int(name)] = os.readlink(os.path.join(d, name))
        except FileNotFoundError:
            pass  # closed while we looked
    return out


def fds_under(pid, directory):
    """The paths under directory that pid holds open, as a sorted list (one
    entry per descriptor, so a file held twice appears twice)."""
    prefix = os.path.realpath(directory) + "/"
    return sorted(t for t in open_fds(pid).values() if t.startswith(prefix))


def poll_until(pred, timeout, step=0.02):
    """Calls pred() until it returns a true value or timeout seconds pass;
    returns the last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


class RawReader:
    """Reads one response from a socket without interpreting more than the
    head: the body bytes are returned exactly as they came off the wire."""

    def __init__(self, sock, timeout=15.0):
        self.sock = sock
        self.buf = b""
        self.eof = False
        self.timeout = timeout

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out reading the response")
        self.sock.settimeout(left)
        data = self.sock.recv(262144)
        if not data:
            self.eof = True
        self.buf += data
        return len(data)

    def head(self):
        """(status, {lower-case name: [values]}, raw head bytes)."""
        deadline = time.monotonic() + self.timeout
        while b"\r\n\r\n" not in self.buf:
            if self._fill(deadline) == 0:
                raise AssertionError("connection closed inside the head: %r" % self.buf[:300])
        i = self.buf.index(b"\r\n\r\n") + 4
        raw, self.buf = self.buf[:i], self.buf[i:]
        lines = raw[:-4].split(b"\r\n")
        m = re.match(rb"^HTTP/1\.[01] (\d{3}) ", lines[0] + b" ")
        assert m, "bad status line %r" % lines[0]
        fields = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            assert sep and re.match(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$", name), line
            fields.setdefault(name.decode().lower(), []).append(value.strip(b" \t").decode("latin-1"))
        return int(m.group(1)), fields, raw

    def chunked_body(self):
        """Parses a chunked body strictly (RFC 9112 §7.1): every chunk-size
        line is hex digits and CRLF (pith sends no extensions), every chunk's
        data is followed by exactly CRLF, the last chunk is "0" CRLF and the
        body ends with an empty trailer section. Returns (body, chunk sizes),
        leaving any bytes after the body in self.buf."""
        deadline = time.monotonic() + self.timeout
        body, sizes = b"", []
        while True:
            while b"\r\n" not in self.buf:
                if self._fill(deadline) == 0:
                    raise AssertionError("closed inside a chunk-size line")
            line, self.buf = self.buf.split(b"\r\n", 1)
            assert re.fullmatch(rb"[0-9A-Fa-f]{1,16}", line), "bad chunk-size line %r" % line[:80]
            size = int(line, 16)
            if size == 0:
                while len(self.buf) < 2:
                    if self._fill(deadline) == 0:
                        raise AssertionError("closed before the end of the chunked body")
                assert self.buf[:2] == b"\r\n", "trailer after the last chunk: %r" % self.buf[:80]
                self.buf = self.buf[2:]
                return body, sizes
            sizes.append(size)
            while len(self.buf) < size + 2:
                if self._fill(deadline) == 0:
                    raise AssertionError("closed inside a chunk of %d bytes" % size)
            assert self.buf[size:size + 2] == b"\r\n", "chunk data not followed by CRLF"
            body += self.buf[:size]
            self.buf = self.buf[size + 2:]

    def until_close(self):
        """Every byte up to the server's close (a close-delimited body)."""
        deadline = time.monotonic() + self.timeout
        while not self.eof:
            self._fill(deadline)
        out, self.buf = self.buf, b""
        return out
