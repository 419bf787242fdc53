# SPDX-License-Identifier: MIT
"""The part of test_tls_ktls_uml.py that runs inside user-mode Linux, where
the tls kernel module is loaded (scripts/uml-run): it starts a TLS server,
talks HTTPS to it with Python's ssl module, and writes what it saw to a JSON
file on the host's filesystem. It judges nothing; the test on the host
compares the bodies with the files and asserts on the counters.

  tls_ktls_guest.py pith   --bin PITH --loops epoll,uring --root DIR --cert C --key K --ca CA --out JSON
  tls_ktls_guest.py client --port N --ca CA --version V --cipher NAME  (one case; JSON on stdout)

Each case is one client process with its own OPENSSL_CONF: Python's ssl
module cannot choose TLS 1.3 cipher suites, OpenSSL's configuration can.
The client's configuration has no `Options = KTLS`, so every kernel TLS
socket that /proc/net/tls_stat counts is the server's.
"""

import argparse
import hashlib
import json
import os
import socket
import ssl
import subprocess
import sys
import time

PORT = 8443  # the guest has its own loopback: a fixed port is free
CASES = [  # (protocol, cipher) as OpenSSL names them
    ("TLSv1.2", "ECDHE-ECDSA-AES128-GCM-SHA256"),
    ("TLSv1.2", "ECDHE-ECDSA-CHACHA20-POLY1305"),
    ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    ("TLSv1.3", "TLS_AES_256_GCM_SHA384"),
    ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"),
]
# The requests of one keep-alive connection, in order; the last three are
# sent in one write (pipelined). The host knows the files and judges.
REQUESTS = [
    ("GET", "/big.bin", None),
    ("GET", "/big.bin", "bytes=1000-1049999"),
    ("HEAD", "/big.bin", None),
    ("GET", "/small.txt", None),
    ("GET", "/big.bin", "bytes=-100"),
    ("GET", "/small.txt", None),
]
PIPELINED_FROM = 3


def tls_stat():
    with open("/proc/net/tls_stat") as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def read_response(sock, buf, method):
    """(status, headers, body, rest of buf) of one response."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed inside a response head")
        buf += chunk
    head, buf = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, v = line.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    n = 0 if method == "HEAD" else int(headers.get("content-length", "0"))
    while len(buf) < n:
        chunk = sock.recv(262144)
        if not chunk:
            raise EOFError("connection closed after %d of %d body bytes" % (len(buf), n))
        buf += chunk
    return status, headers, buf[:n], buf[n:]


def request_bytes(method, path, rng):
    extra = "Range: %s\r\n" % rng if rng else ""
    return ("%s %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n" % (method, path, extra)).encode()


def client(args):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(args.ca)
    ctx.set_alpn_protocols(["http/1.1"])
    if args.version == "TLSv1.2":
        ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_ciphers(args.cipher)
    else:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3  # suite from OPENSSL_CONF
    before = tls_stat()
    out = {"responses": []}
    with socket.create_connection(("127.0.0.1", args.port), timeout=60) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            out["cipher"], out["version"], _ = s.cipher()
            out["alpn"] = s.selected_alpn_protocol()
            buf = b""
            for i, (method, path, rng) in enumerate(REQUESTS[:PIPELINED_FROM]):
                s.sendall(request_bytes(method, path, rng))
                status, headers, body, buf = read_response(s, buf, method)
                out["responses"].append(response_facts(status, headers, body))
            s.sendall(b"".join(request_bytes(*r) for r in REQUESTS[PIPELINED_FROM:]))
            for method, path, rng in REQUESTS[PIPELINED_FROM:]:
                status, headers, body, buf = read_response(s, buf, method)
                out["responses"].append(response_facts(status, headers, body))
            out["leftover"] = len(buf)
    out["stat_before"], out["stat_after"] = before, tls_stat()
    json.dump(out, sys.stdout)


def response_facts(status, headers, body):
    return {"status": status, "headers": headers, "length": len(body),
            "sha256": hashlib.sha256(body).hexdigest()}


def client_conf(directory, version, cipher):
    """An OpenSSL configuration that picks the TLS 1.3 suite."""
    path = os.path.join(directory, "client-%s.cnf" % cipher)
    with open(path, "w") as f:
        f.write("openssl_conf = conf\n[conf]\nssl_conf = ssl\n[ssl]\nsystem_default = sys\n"
                "[sys]\nMinProtocol = %s\n" % version)
        if version == "TLSv1.3":
            f.write("Ciphersuites = %s\n" % cipher)
    return path


def wait_listening(port, proc, deadline_s):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def run_standin(args, directory):
    """The rig's own check, without pith: `openssl s_server -WWW -sendfile`
    with kernel TLS switched on by its configuration (OpenSSL 3.0's s_server
    has no -ktls) serves the big file over TLS 1.2, which OpenSSL offloads
    both ways. -sendfile refuses to serve unless kernel TLS sends."""
    conf = os.path.join(directory, "standin-ktls.cnf")
    with open(conf, "w") as f:
        f.write("openssl_conf = conf\n[conf]\nssl_conf = ssl\n[ssl]\nsystem_default = sys\n"
                "[sys]\nOptions = KTLS\n")
    argv = ["openssl", "s_server", "-quiet", "-accept", "127.0.0.1:%d" % (PORT + 1), "-tls1_2",
            "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256", "-cert", args.cert, "-key", args.key,
            "-WWW", "-sendfile"]
    out = {}
    proc = subprocess.Popen(argv, cwd=args.root, env=dict(os.environ, OPENSSL_CONF=conf),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        out["listening"] = wait_listening(PORT + 1, proc, 30)
        if out["listening"]:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.load_verify_locations(args.ca)
            before = tls_stat()
            with socket.create_connection(("127.0.0.1", PORT + 1), timeout=60) as raw:
                with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                    s.sendall(b"GET /big.bin HTTP/1.0\r\n\r\n")
                    data = b""
                    while True:
                        chunk = s.recv(262144)
                        if not chunk:
                            break
                        data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            out.update(head=head.decode("latin-1"), length=len(body),
                       sha256=hashlib.sha256(body).hexdigest(),
                       stat_before=before, stat_after=tls_stat())
    except (OSError, ssl.SSLError) as e:
        out["error"] = repr(e)
    finally:
        proc.kill()
        out["stderr"] = proc.communicate()[1].decode("latin-1")[-2000:]
    return out


def run_pith(args):
    """The rig's own check, then pith on each event loop in turn, all cases
    against each."""
    out = {"kernel": os.uname().release, "openssl": ssl.OPENSSL_VERSION, "loops": {}}
    out["standin"] = run_standin(args, os.path.dirname(args.out))
    for loop in args.loops.split(","):
        out["loops"][loop] = run_loop(args, loop)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


def run_loop(args, loop):
    result = {"cases": {}}
    err_path = os.path.join(os.path.dirname(args.out), "pith-%s.err" % loop)
    # --http3 off: the guest has 512 MiB (scripts/uml-run), and HTTP/3's
    # stream slots would not fit the address space pith reserves at start
    # beside TCP's; kernel TLS (TCP) is what is under test here.
    argv = [args.bin, "--io", loop, "--addr", "127.0.0.1", "--workers", "1", "--http3", "off",
            "--tls-only", "--tls-port", str(PORT), "--tls-cert", args.cert, "--tls-key", args.key,
            # Timeouts are not under test here, and a guest on a loaded
            # host can be slow: no connection may be cut by one.
            "--timeout-handshake", "120", "--timeout-header", "120",
            "--timeout-keepalive", "120", "--timeout-send", "120", args.root]
    result["argv"] = argv
    with open(err_path, "w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    try:
        result["listening"] = wait_listening(PORT, proc, 30)
        if result["listening"]:
            for version, cipher in CASES:
                env = dict(os.environ, OPENSSL_CONF=client_conf(os.path.dirname(args.out),
                                                                version, cipher))
                p = subprocess.run([sys.executable, __file__, "client", "--port", str(PORT),
                                    "--ca", args.ca, "--version", version, "--cipher", cipher],
                                   env=env, capture_output=True, text=True, timeout=120)
                case = {"rc": p.returncode, "stderr": p.stderr[-2000:]}
                if p.returncode == 0:
                    case.update(json.loads(p.stdout))
                result["cases"]["%s %s" % (version, cipher)] = case
            result["key_update"] = key_update_case(args.ca)
            result["h2"] = h2_case(args.ca)
    finally:
        proc.terminate()
        try:
            result["exit"] = proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            result["exit"] = "killed after 20 s"
        with open(err_path) as f:
            result["stderr"] = f.read()[-8000:]
    return result


def key_update_case(ca):
    """A TLS 1.3 client asks for a key update between two requests (openssl
    s_client; see tlsutil.key_update_events): what followed, in order."""
    from tlsutil import key_update_events  # the tests directory: sys.path[0]
    try:
        return {"events": key_update_events(PORT, ca, "/small.txt", pause=2.0)}
    except Exception as e:  # recorded; the host judges
        return {"error": repr(e)}


# HTTP/2 over kernel TLS (ALPN h2, TLS 1.3 with the suite both sides
# prefer): the requests of REQUESTS one stream at a time, then H2_AT_ONCE
# streams sent in one write (the download beside small files), with a window
# big enough that the server's sends, not flow control, set the pace.
H2_AT_ONCE = [("GET", "/big.bin", None)] + [("GET", "/small.txt", None)] * 19


def h2_case(ca):
    from h2util import H2, SETTINGS_INITIAL_WINDOW_SIZE, request_fields
    try:
        before = tls_stat()
        out = {"one_at_a_time": [], "at_once": []}
        with H2(PORT, tls=ca, timeout=60, settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 2**31 - 1)],
                window=2**31 - 2**16 - 1, auto_window=False) as h:
            out["alpn"] = h.sock.selected_alpn_protocol()
            out["version"] = h.sock.version()

            def fields(method, path, rng):
                return request_fields(path, method, scheme="https",
                                      extra=[("range", rng)] if rng else [])

            def facts(r):
                return {"status": r.status, "headers": dict(r.fields), "length": len(r.body),
                        "sha256": hashlib.sha256(r.body).hexdigest(), "reset": r.reset}
            for req in REQUESTS:
                out["one_at_a_time"].append(facts(h.wait(h.send_headers(fields(*req)), 60)))
            sent, send = [], h.send
            h.send = sent.append
            ids = [h.send_headers(fields(*req)) for req in H2_AT_ONCE]
            h.send = send
            h.send(b"".join(sent))
            out["at_once"] = [facts(h.wait(i, 60)) for i in ids]
        out["stat_before"], out["stat_after"] = before, tls_stat()
        return out
    except Exception as e:  # recorded; the host judges
        return {"error": repr(e)}


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("pith")
    for name in ("bin", "loops", "root", "cert", "key", "ca", "out"):
        p.add_argument("--" + name, required=True)
    c = sub.add_parser("client")
    for name in ("ca", "version", "cipher"):
        c.add_argument("--" + name, required=True)
    c.add_argument("--port", type=int, required=True)
    args = ap.parse_args()
    run_pith(args) if args.what == "pith" else client(args)


if __name__ == "__main__":
    main()
