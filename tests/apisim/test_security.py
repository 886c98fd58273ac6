"""HTTPS with run-time certificates, bearer tokens and client certificates.

Certificates are generated once per class with openssl (simcerts) into a
temporary directory and shared by the simulators the tests start.
"""

import os
import shutil
import ssl
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import simcerts  # noqa: E402
from simtest import SimProcess  # noqa: E402

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


class Security(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="apisim-tls-")
        cls.tls = os.path.join(cls.tmp, "tls")
        simcerts.ensure_certs(cls.tls)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_https_with_token(self):
        with SimProcess(tls_dir=self.tls, token="s3cret") as sim:
            no_cert = sim.ssl_context(client_cert=False)
            code, _, st = sim.get("/api/v1/nodes", token="", ssl_ctx=no_cert)
            self.assertEqual((code, st), (401, UNAUTHORIZED))
            self.assertEqual(sim.get("/api/v1/nodes", token="wrong", ssl_ctx=no_cert)[0], 401)
            self.assertEqual(sim.get("/_sim/health", token="", ssl_ctx=no_cert)[0], 401)
            self.assertEqual(sim.get("/no/such/path", token="", ssl_ctx=no_cert)[0], 401)
            self.assertEqual(sim.get("/no/such/path", ssl_ctx=no_cert)[0], 404)
            self.assertEqual(sim.get("/api/v1/nodes", ssl_ctx=no_cert)[0], 200)
            for public in ("/version", "/healthz", "/readyz", "/livez"):
                self.assertEqual(sim.get(public, token="", ssl_ctx=no_cert)[0], 200, public)
            # a client certificate signed by the CA is as good as the token
            self.assertEqual(sim.get("/api/v1/nodes", token="")[0], 200)
            with open(sim.kubeconfig) as f:
                kc = f.read()
            self.assertIn('server: "https://127.0.0.1:%d"' % sim.port, kc)
            self.assertIn("certificate-authority-data:", kc)
            self.assertIn('token: "s3cret"', kc)
            self.assertEqual(stat.S_IMODE(os.stat(sim.kubeconfig).st_mode), 0o600)
            out = sim.kubectl("get", "nodes", "-o", "name").stdout.split()
            self.assertEqual(len(out), 4)

    def test_https_client_certificate_only(self):
        with SimProcess(tls_dir=self.tls) as sim:
            self.assertEqual(sim.get("/api/v1/nodes", ssl_ctx=sim.ssl_context(client_cert=False))[0], 401)
            self.assertEqual(sim.get("/api/v1/nodes")[0], 200)
            with open(sim.kubeconfig) as f:
                kc = f.read()
            self.assertIn("client-certificate-data:", kc)
            self.assertNotIn("token:", kc)
            self.assertIn("vm-a", sim.kubectl("get", "vmi", "-A").stdout)

    def test_server_certificate_is_verified(self):
        with SimProcess(tls_dir=self.tls, token="t") as sim:
            other = tempfile.mkdtemp(dir=self.tmp)
            simcerts.ensure_certs(other)
            wrong_ca = ssl.create_default_context(cafile=os.path.join(other, "ca.crt"))
            with self.assertRaises(ssl.SSLCertVerificationError):
                sim.get("/api", ssl_ctx=wrong_ca)
            # a client certificate from another CA is rejected at the handshake
            foreign = ssl.create_default_context(cafile=os.path.join(self.tls, "ca.crt"))
            foreign.load_cert_chain(os.path.join(other, "client.crt"), os.path.join(other, "client.key"))
            with self.assertRaises((ssl.SSLError, ConnectionResetError, BrokenPipeError, OSError)):
                sim.get("/api", ssl_ctx=foreign, token="")

    def test_plain_http_with_token(self):
        with SimProcess(token="tok") as sim:
            self.assertEqual(sim.get("/api/v1/pods", token="")[0], 401)
            self.assertEqual(sim.get("/api/v1/pods")[0], 200)
            # (kubectl 1.20 never sends a bearer token over plain http, so it gets 401 here: use --tls-dir)

    def test_plain_http_without_auth(self):
        with SimProcess() as sim:
            self.assertEqual(sim.get("/api/v1/pods", token="")[0], 200)


if __name__ == "__main__":
    unittest.main()
