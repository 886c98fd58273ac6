"""A real Prometheus (Debian's `prometheus`) for the cluster lab: it scrapes the lab's exporter
(exporter.py) and evaluates the recording rules the project ships
(deploy/monitoring/descheduler-rules.yaml), so the descheduler's Prometheus queries are answered
by Prometheus itself from usage that follows the VMs.

The scrape keeps the exporter's `instance` labels (`honor_labels`), which name the nodes as the
rules expect. The rules' own group interval (30 s) and ranges (1 m) are kept as shipped: a VM's
move shows in `descheduler:nodeutilization:cpu:avg1m` about a minute after it completes, as it
would in a real cluster.
"""

import json
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RULES = os.path.join(ROOT, "deploy", "monitoring", "descheduler-rules.yaml")


class PrometheusUnavailable(Exception):
    pass


def version():
    exe = shutil.which("prometheus")
    if not exe:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True)
    first = (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else ""
    # "prometheus, version 2.42.0+ds (branch: ...)"
    parts = first.split()
    return parts[2] if len(parts) > 2 else first


class Prometheus:
    def __init__(self, workdir, exporter_port, port, scrape_interval="2s", spawn=None):
        self.dir = os.path.join(workdir, "prometheus")
        self.exporter_port, self.port = exporter_port, port
        self.scrape_interval = scrape_interval
        self.spawn = spawn  # the lab's process starter (own process group, stopped with the lab)
        self.proc = None
        self.url = "http://127.0.0.1:%d" % port

    def start(self, timeout=60):
        exe = shutil.which("prometheus")
        if not exe:
            raise PrometheusUnavailable("prometheus is not installed (Debian package prometheus; scripts/deps.sh test)")
        os.makedirs(self.dir, exist_ok=True)
        cfg = os.path.join(self.dir, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: %s\n  evaluation_interval: 30s\n"
                    "rule_files:\n  - %s\n"
                    "scrape_configs:\n  - job_name: lab\n    honor_labels: true\n"
                    "    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
                    % (self.scrape_interval, RULES, self.exporter_port))
        argv = [exe, "--config.file", cfg, "--storage.tsdb.path", os.path.join(self.dir, "data"),
                "--web.listen-address", "127.0.0.1:%d" % self.port, "--log.level", "warn"]
        self.proc = self.spawn("prometheus", argv)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("prometheus exited with status %d (log: %s)" % (
                    self.proc.returncode, os.path.join(os.path.dirname(self.dir), "prometheus.log")))
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("prometheus was not ready in %d s" % timeout)

    def query(self, expr):
        """The instant vector of expr as {instance or "": value}."""
        u = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(u, timeout=10) as r:
            ans = json.load(r)
        if ans.get("status") != "success":
            raise RuntimeError("prometheus query %s: %s" % (expr, ans.get("error")))
        return {s["metric"].get("instance", ""): float(s["value"][1]) for s in ans["data"]["result"]}

    def wait_series(self, expr, count, timeout):
        """Waits until expr has at least count samples (the rules' first evaluations)."""
        deadline = time.time() + timeout
        got = {}
        while time.time() < deadline:
            try:
                got = self.query(expr)
                if len(got) >= count:
                    return got
            except (OSError, RuntimeError):
                pass
            time.sleep(1)
        raise RuntimeError("prometheus: %s had %d of %d series after %d s" % (expr, len(got), count, timeout))
