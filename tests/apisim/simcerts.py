"""TLS material and kubeconfig files for the simulator.

Certificates are made at run time with the `openssl` command (never checked
in): a CA, a server certificate for 127.0.0.1/localhost (Go clients insist
on a subjectAltName), and a client certificate (CN `apisim-admin`, O
`system:masters`) for client-certificate auth.  EC P-256 keys keep
generation fast.  Existing files in the directory are reused, so a test can
make them once and start several simulators.

The kubeconfig is YAML whose scalars are JSON-quoted strings, which kubectl,
the Python client and libyaml all read.
"""

import base64
import json
import os
import subprocess
import tempfile

FILES = ("ca.crt", "ca.key", "server.crt", "server.key", "client.crt", "client.key")


def _run(args, cwd):
    p = subprocess.run(["openssl"] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (" ".join(args[:2]), p.stderr.strip()))


def _sign(d, name, subj, ext):
    _run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
          "-keyout", name + ".key", "-out", name + ".csr", "-subj", subj], d)
    with open(os.path.join(d, name + ".ext"), "w") as f:
        f.write(ext)
    _run(["x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
          "-out", name + ".crt", "-days", "30", "-sha256", "-extfile", name + ".ext"], d)
    for suffix in (".csr", ".ext"):
        os.unlink(os.path.join(d, name + suffix))


def ensure_certs(d):
    """Create CA, server and client certificates in `d` unless all are there; returns the paths."""
    os.makedirs(d, exist_ok=True)
    paths = {f: os.path.join(d, f) for f in FILES}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    _run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
          "-keyout", "ca.key", "-out", "ca.crt", "-days", "30", "-subj", "/CN=apisim-ca",
          "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign"], d)
    _sign(d, "server", "/CN=apisim-server",
          "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
          "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _sign(d, "client", "/O=system:masters/CN=apisim-admin",
          "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
          "extendedKeyUsage=clientAuth\n")
    srl = os.path.join(d, "ca.srl")
    if os.path.exists(srl):
        os.unlink(srl)
    return paths


def _b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def kubeconfig_text(server, ca_path=None, token=None, client_cert=None, client_key=None, namespace="default"):
    q = json.dumps
    lines = ["apiVersion: v1", "kind: Config", "clusters:", "- name: apisim", "  cluster:",
             "    server: %s" % q(server)]
    if ca_path:
        lines.append("    certificate-authority-data: %s" % q(_b64(ca_path)))
    lines += ["users:", "- name: apisim", "  user:"]
    user = []
    if token:
        user.append("    token: %s" % q(token))
    if client_cert and client_key:
        user.append("    client-certificate-data: %s" % q(_b64(client_cert)))
        user.append("    client-key-data: %s" % q(_b64(client_key)))
    lines += user or ["    {}"]
    if not user:
        lines[-2] = "  user: {}"
        lines.pop()
    lines += ["contexts:", "- name: apisim", "  context:", "    cluster: apisim", "    user: apisim",
              "    namespace: %s" % q(namespace), "current-context: apisim", ""]
    return "\n".join(lines)


def write_kubeconfig(path, text):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".kubeconfig")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
