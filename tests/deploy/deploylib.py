"""Helpers for the install tests: render deploy/ with kubectl's kustomize, and run the binary
the way a rendered workload would run it, against the API simulator.

A workload (CronJob or Deployment) is turned into a command line faithfully: its container's
`command` + `args`, with the binary's path for `/bin/descheduler`, the policy ConfigMap's
keys written to a directory that stands for the volume mount (so `/policy-dir/policy.yaml`
reads the rendered ConfigMap), and the two things a pod gets from its environment instead:
the simulator's kubeconfig (in-cluster config in a pod) and `--secure-port=0` (a free port,
so parallel tests do not collide on 10258).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "apisim"))

from simtest import KubectlCase, SimProcess, free_port, kubectl_path  # noqa: E402,F401

import yaml  # noqa: E402  python3-yaml, a dependency of python3-kubernetes (scripts/deps.sh test)

DEPLOY = os.path.join(REPO, "deploy")
EXAMPLE_CLUSTER = os.path.join(REPO, "examples", "kubevirt-rebalance", "cluster.json")
APISIM_CLUSTER = os.path.join(REPO, "tests", "apisim", "data", "cluster.json")
# the Prometheus Operator's ServiceMonitor CRD, reduced to what registers the kind
SERVICEMONITOR_CRD = os.path.join(HERE, "data", "servicemonitor-crd.yaml")
IMAGE_BINARY = "/bin/descheduler"


def binary():
    path = os.environ.get("DESCHEDULER") or os.path.join(REPO, "build", "descheduler")
    if not os.access(path, os.X_OK):
        raise RuntimeError("descheduler binary not found at %s: run make build (or set $DESCHEDULER)" % path)
    return path


def render(directory):
    """The objects `kubectl kustomize DIR` renders (Debian's kubectl 1.20: kustomize v2.0.3)."""
    p = subprocess.run([kubectl_path(), "kustomize", directory], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("kubectl kustomize %s failed: %s" % (directory, p.stderr))
    return [o for o in yaml.safe_load_all(p.stdout) if o]


def find(objects, kind, name, namespace=None):
    for o in objects:
        md = o.get("metadata") or {}
        if o.get("kind") == kind and md.get("name") == name and (namespace is None or md.get("namespace") == namespace):
            return o
    raise AssertionError("no %s %s in the rendered manifests" % (kind, name))


def pod_template(workload):
    if workload["kind"] == "CronJob":
        return workload["spec"]["jobTemplate"]["spec"]["template"]
    return workload["spec"]["template"]


def workload_command(objects, workload, policy_dir):
    """(argv, service account (ns, name)) the workload's container runs (the one named
    descheduler if there are several).

    The ConfigMap volumes are written under policy_dir and their mount paths rewritten there."""
    tmpl = pod_template(workload)
    spec = tmpl["spec"]
    ns = workload["metadata"]["namespace"]
    containers = spec["containers"]
    if len(containers) > 1:
        containers = [c for c in containers if c["name"] == "descheduler"]
    (container,) = containers
    mounts = {}
    for vol in spec.get("volumes") or []:
        if "configMap" not in vol:
            continue
        cm = find(objects, "ConfigMap", vol["configMap"]["name"], ns)
        d = os.path.join(policy_dir, vol["name"])
        os.makedirs(d, exist_ok=True)
        for key, text in (cm.get("data") or {}).items():
            with open(os.path.join(d, key), "w") as f:
                f.write(text)
        for m in container.get("volumeMounts") or []:
            if m["name"] == vol["name"]:
                mounts[m["mountPath"].rstrip("/") + "/"] = d + "/"
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    if not argv or argv[0] != IMAGE_BINARY:
        raise AssertionError("the container does not run %s: %r" % (IMAGE_BINARY, argv))
    argv[0] = binary()
    out = []
    for a in argv:
        for mount, local in mounts.items():
            a = a.replace(mount, local)
        out.append(a)
    return out, (ns, spec.get("serviceAccountName", "default"))


def set_flags(argv, drop=(), values=None):
    """argv without the flags in drop and with --name=value for each of values (replacing)."""
    values = dict(values or {})
    out = []
    for a in argv:
        name = a.split("=", 1)[0]
        if name in drop or name in values:
            continue
        out.append(a)
    return out + ["%s=%s" % kv for kv in values.items()]


class Process:
    """The binary started in the background, its stderr in a file."""

    def __init__(self, argv, tmp, label):
        self.err_path = os.path.join(tmp, label + ".err")
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.err)

    def log(self):
        with open(self.err_path) as f:
            return f.read()

    def wait_log(self, text, count=1, timeout=30):
        end = time.monotonic() + timeout
        while self.log().count(text) < count:
            if self.proc.poll() is not None:
                raise AssertionError("the descheduler exited (%d) before logging %r:\n%s"
                                     % (self.proc.returncode, text, self.log()[-3000:]))
            if time.monotonic() > end:
                raise AssertionError("timed out waiting for %r:\n%s" % (text, self.log()[-3000:]))
            time.sleep(0.05)

    def kill(self):
        """Cleanup after a failed scenario: no process outlives its test."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.err.close()

    def stop(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the descheduler did not stop on SIGTERM:\n" + self.log()[-3000:])
        self.err.close()
        return code


def server(snapshot, args=()):
    """The API server a run talks to: the simulator, or with LIVE_BACKEND=realapi a real
    kube-apiserver (tests/realapi/realtest.py) that enforces RBAC."""
    backend = os.environ.get("LIVE_BACKEND", "apisim")
    if backend == "realapi":
        sys.path.insert(0, os.path.join(REPO, "tests", "realapi"))
        import realtest
        return realtest.RealServer(snapshot, args)
    if backend != "apisim":
        raise ValueError("LIVE_BACKEND must be apisim or realapi, not %r" % backend)
    return SimProcess(snapshot=snapshot, args=args)


def run_once(argv, timeout=60):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return p.returncode, p.stderr


class Recorder:
    """Requests the binary makes: reset before it starts, read when it has stopped, summed."""

    def __init__(self, sim):
        self.sim = sim
        self.counts = {}

    def start(self):
        self.sim.control("DELETE", "requests")

    def stop(self):
        for k, n in self.sim.control("GET", "requests")["byVerbAndPath"].items():
            self.counts[k] = self.counts.get(k, 0) + n


def dump(obj):
    return json.dumps(obj, indent=1, sort_keys=True)


class Prometheus:
    """A real Prometheus (Debian's `prometheus`) on loopback that scrapes, every second, a file
    of gauges served by a Python HTTP server: set(metric, {instance: value}) rewrites it.
    What the soft-tainter's runs query (tests/cli/promlib.sh does the same for the scripts)."""

    def __init__(self, tmp):
        for tool in ("prometheus", "python3"):
            if not shutil.which(tool):
                raise AssertionError("%s not found (scripts/deps.sh test installs it)" % tool)
        self.dir = os.path.join(tmp, "prometheus")
        self.www = os.path.join(self.dir, "www")
        os.makedirs(self.www)
        self.series = {}
        self._write()
        self.procs = []
        web = free_port()
        self.procs.append(subprocess.Popen(
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory", self.www, str(web)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with open(os.path.join(self.dir, "prometheus.yml"), "w") as f:
            f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                    "scrape_configs:\n"
                    "  - {job_name: load, honor_labels: true, metrics_path: /metrics.txt,"
                    " static_configs: [{targets: ['127.0.0.1:%d']}]}\n" % web)
        port = free_port()
        self.url = "http://127.0.0.1:%d" % port
        self.log_path = os.path.join(self.dir, "log")
        with open(self.log_path, "w") as log:
            self.procs.append(subprocess.Popen(
                ["prometheus", "--config.file=" + os.path.join(self.dir, "prometheus.yml"),
                 "--storage.tsdb.path=" + os.path.join(self.dir, "tsdb"),
                 "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"],
                stdout=subprocess.DEVNULL, stderr=log))
        self._wait(lambda: self._get("/-/ready") is not None, "ready")

    def _write(self):
        lines = ['%s{instance="%s"} %s' % (m, i, v) for m, by in sorted(self.series.items()) for i, v in by.items()]
        tmp = os.path.join(self.www, "metrics.new")
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, os.path.join(self.www, "metrics.txt"))

    def _get(self, path):
        import urllib.request
        try:
            with urllib.request.urlopen(self.url + path, timeout=5) as r:
                return r.read()
        except OSError:
            return None

    def _wait(self, fn, what, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.procs[-1].poll() is not None:
                break
            if fn():
                return
            time.sleep(0.1)
        with open(self.log_path) as f:
            raise AssertionError("prometheus: not %s; its log: %s" % (what, f.read()[-2000:]))

    def set(self, metric, values):
        """Serves metric{instance=...} = value for each of values and waits until Prometheus has
        scraped every one of them."""
        import urllib.parse
        self.series[metric] = dict(values)
        self._write()

        def scraped():
            body = self._get("/api/v1/query?" + urllib.parse.urlencode({"query": metric}))
            if body is None:
                return False
            got = {r["metric"].get("instance"): float(r["value"][1]) for r in json.loads(body)["data"]["result"]}
            return got == {k: float(v) for k, v in values.items()}
        self._wait(scraped, "scraping %s" % metric)

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
