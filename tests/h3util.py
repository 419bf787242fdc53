# SPDX-License-Identifier: MIT
"""HTTP/3 clients for the tests (issue 34): libcurl's (pycurl over Debian's
libcurl3-gnutls, built with ngtcp2 and nghttp3; HTTP_VERSION 31 is HTTP/3
only, no fallback to TCP) and, for comparison, the same libcurl over
HTTP/1.1 and HTTP/2 with TLS. A response is (status, fields, body, version):
fields a list of (lowercase name, value) in order."""

import io

import pytest

try:
    import pycurl
except ImportError:  # scripts/deps check installs python3-pycurl
    pycurl = None

H3 = 31  # CURL_HTTP_VERSION_3ONLY
H2 = 3  # CURL_HTTP_VERSION_2_0 (over TLS: ALPN h2)
H11 = 2  # CURL_HTTP_VERSION_1_1
VERSION_NAMES = {30: "3", 3: "2", 2: "1.1"}  # CURLINFO_HTTP_VERSION's answers


def available():
    """Why HTTP/3 tests cannot run here, or None."""
    if pycurl is None:
        return "python3-pycurl is not installed"
    if "ngtcp2" not in pycurl.version:
        return "pycurl's libcurl has no HTTP/3 (%s)" % pycurl.version
    return None


def need_h3():
    why = available()
    if why:
        pytest.fail(why + ": scripts/deps check installs libcurl3-gnutls 8 from bookworm-backports")


class Client:
    """One libcurl handle: requests made through it reuse its connection."""

    def __init__(self, port, version=H3, cafile=None, host="localhost", timeout=10):
        self.c = pycurl.Curl()
        self.port, self.version, self.host = port, version, host
        self.new_connections = 0
        self.c.setopt(pycurl.HTTP_VERSION, version)
        self.c.setopt(pycurl.TIMEOUT, timeout)
        self.c.setopt(pycurl.RESOLVE, ["%s:%d:127.0.0.1" % (host, port)])
        if cafile:
            self.c.setopt(pycurl.CAINFO, cafile)
        else:
            self.c.setopt(pycurl.SSL_VERIFYPEER, 0)
            self.c.setopt(pycurl.SSL_VERIFYHOST, 0)

    def request(self, path, method="GET", headers=()):
        body, head = io.BytesIO(), io.BytesIO()
        c = self.c
        c.setopt(pycurl.URL, "https://%s:%d%s" % (self.host, self.port, path))
        c.setopt(pycurl.WRITEDATA, body)
        c.setopt(pycurl.HEADERFUNCTION, head.write)
        c.setopt(pycurl.HTTPHEADER, list(headers))
        c.setopt(pycurl.NOBODY, 1 if method == "HEAD" else 0)
        if method not in ("GET", "HEAD"):
            c.setopt(pycurl.CUSTOMREQUEST, method)
        else:
            c.setopt(pycurl.CUSTOMREQUEST, None)
        c.perform()
        status = c.getinfo(pycurl.RESPONSE_CODE)
        self.new_connections += c.getinfo(pycurl.NUM_CONNECTS)
        version = VERSION_NAMES.get(c.getinfo(pycurl.INFO_HTTP_VERSION), "?")
        return status, parse_fields(head.getvalue()), body.getvalue(), version

    def connects(self):
        """Connections this handle opened for its requests so far."""
        return self.new_connections

    def close(self):
        self.c.close()


def parse_fields(raw):
    """The last response head's fields (1xx heads are skipped)."""
    fields = []
    for line in raw.decode("latin-1").split("\r\n"):
        if line.startswith("HTTP/"):
            fields = []
        elif ":" in line:
            name, _, value = line.partition(":")
            fields.append((name.strip().lower(), value.strip()))
    return fields


def get(port, path, **kw):
    c = Client(port, **kw)
    try:
        return c.request(path)
    finally:
        c.close()
