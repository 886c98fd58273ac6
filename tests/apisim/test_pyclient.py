"""Debian's Python Kubernetes client (python3-kubernetes) lists and watches pods through the simulator.

The client is a different code base from kubectl (urllib3, OpenAPI-generated
models that deserialise every field), so it catches wire-format slips the Go
client tolerates.  It lives in the system interpreter's dist-packages, which
may not be the interpreter running the tests, so the client script runs as a
subprocess of whichever interpreter can import `kubernetes`.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from simtest import SimProcess  # noqa: E402

CLIENT_SCRIPT = r'''
import json, sys, threading, time
from kubernetes import client, config, watch

config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
out = {}

names, cont = [], None
while True:
    page = v1.list_pod_for_all_namespaces(limit=4, _continue=cont)
    names += [p.metadata.name for p in page.items]
    cont = page.metadata._continue
    if not cont:
        break
out["paged"] = names
full = v1.list_pod_for_all_namespaces()
out["full"] = [p.metadata.name for p in full.items]
out["nodes"] = sorted(n.metadata.name for n in v1.list_node().items)
out["phase"] = full.items[0].status.phase
out["created"] = full.items[0].metadata.creation_timestamp.isoformat()

def watch_open():
    j = v1.api_client.call_api("/_sim/journal", "GET", auth_settings=["BearerToken"], response_type="object",
                               _return_http_data_only=True)
    return j["inFlightWatches"] > 0

def churn():
    # the writes start once the simulator serves the watch below (it counts a watch from its
    # starting point on), not after a guess at how long opening it takes: one opened after a
    # write would begin with the pod in its initial state and miss the events before
    end = time.monotonic() + 30
    while not watch_open() and time.monotonic() < end:
        time.sleep(0.02)
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pyclient"},
            "spec": {"nodeName": "worker-2", "containers": [{"name": "c", "image": "busybox"}]}}
    v1.create_namespaced_pod("default", body)
    v1.patch_namespaced_pod("pyclient", "default", {"metadata": {"labels": {"seen": "yes"}}})
    v1.delete_namespaced_pod("pyclient", "default")
threading.Thread(target=churn, daemon=True).start()
events = []
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_pod, "default", timeout_seconds=10):
    events.append([ev["type"], ev["object"].metadata.name, (ev["object"].metadata.labels or {}).get("seen")])
    if len(events) == 3:
        w.stop()
out["events"] = events

vmis = client.CustomObjectsApi().list_namespaced_custom_object("kubevirt.io", "v1", "vms", "virtualmachineinstances")
out["vmis"] = len(vmis["items"])
try:
    v1.read_namespaced_pod("nope", "default")
except client.exceptions.ApiException as e:
    out["missing"] = [e.status, json.loads(e.body)["reason"]]
print(json.dumps(out))
'''


def client_python():
    """An interpreter that can import the Debian client, or None."""
    for py in (sys.executable, "/usr/bin/python3"):
        if py and os.path.exists(py) and subprocess.run([py, "-c", "import kubernetes"],
                                                        stderr=subprocess.DEVNULL).returncode == 0:
            return py
    return None


class PythonClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.python = client_python()
        if cls.python is None:
            raise RuntimeError("the Python Kubernetes client is missing: apt-get install python3-kubernetes "
                               "(scripts/deps.sh test installs it)")
        cls.tmp = tempfile.mkdtemp(prefix="apisim-pyclient-")
        cls.script = os.path.join(cls.tmp, "client.py")
        with open(cls.script, "w") as f:
            f.write(CLIENT_SCRIPT)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_client(self, sim):
        p = subprocess.run([self.python, self.script, sim.kubeconfig], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def check(self, out):
        self.assertEqual(len(out["full"]), 13)
        self.assertEqual(out["paged"], out["full"], "4-item pages cover the list in order")
        self.assertEqual(out["nodes"], ["cp-0", "worker-1", "worker-2", "worker-3"])
        self.assertEqual(out["phase"], "Running")
        self.assertEqual(out["events"], [["ADDED", "pyclient", None], ["MODIFIED", "pyclient", "yes"],
                                         ["DELETED", "pyclient", "yes"]])
        self.assertEqual(out["vmis"], 7)
        self.assertEqual(out["missing"], [404, "NotFound"])

    def test_list_and_watch_over_http(self):
        with SimProcess() as sim:
            self.check(self.run_client(sim))

    def test_list_and_watch_over_https_with_token(self):
        tls = os.path.join(self.tmp, "tls")
        with SimProcess(tls_dir=tls, token="py-secret") as sim:
            self.check(self.run_client(sim))


if __name__ == "__main__":
    unittest.main()
