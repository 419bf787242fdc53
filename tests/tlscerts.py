"""A throwaway PKI for the HTTPS tests, made with the openssl command line.

make_pki(directory) -> {"ca": ca_cert_path,
                        "ecdsa": (cert_path, key_path),
                        "rsa": (cert_path, key_path)}

The ECDSA P-256 certificate names DNS:localhost, DNS:a.test, IP:127.0.0.1 and
IP:::1; the RSA-2048 one names DNS:b.test. Each certificate file is the full
chain (leaf, then the CA), as --tls-cert wants it. Other helpers code against
exactly this API.
"""
import os
import subprocess


def _openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _leaf(d, name, keyargs, san, serial):
    key = os.path.join(d, name + ".key")
    csr = os.path.join(d, name + ".csr")
    crt = os.path.join(d, name + ".crt")
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n" % san)
    _openssl("genpkey", *keyargs, "-out", key, cwd=d)
    _openssl("req", "-new", "-key", key, "-subj", "/CN=%s" % name, "-out", csr, cwd=d)
    _openssl("x509", "-req", "-in", csr, "-CA", "ca.crt", "-CAkey", "ca.key",
             "-set_serial", str(serial), "-days", "30", "-extfile", ext, "-out", crt, cwd=d)
    chain = os.path.join(d, name + "-chain.pem")
    with open(chain, "w") as out:
        out.write(open(crt).read())
        out.write(open(os.path.join(d, "ca.crt")).read())
    return chain, key


def make_pki(directory, serial_base=1000):
    d = str(directory)
    os.makedirs(d, exist_ok=True)
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-out", "ca.key", cwd=d)
    _openssl("req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=pith test CA",
             "-days", "30", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-out", "ca.crt", cwd=d)
    ecdsa = _leaf(d, "ecdsa", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
                  "DNS:localhost,DNS:a.test,IP:127.0.0.1,IP:::1", serial_base + 1)
    rsa = _leaf(d, "rsa", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
                "DNS:b.test", serial_base + 2)
    return {"ca": os.path.join(d, "ca.crt"), "ecdsa": ecdsa, "rsa": rsa}
