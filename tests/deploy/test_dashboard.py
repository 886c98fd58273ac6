"""The Grafana dashboard (deploy/monitoring/grafana-dashboard.json) and its ConfigMap.

Every panel query must parse as PromQL (promtool, from Debian's prometheus package, checks
each one as the expression of a recording rule, Grafana's variables replaced by values), and
every metric it names must exist: a family the binary declares (src/obs/metrics.c, the only
place metric names are written), a series of the shipped recording rules
(deploy/monitoring/descheduler-rules.yaml), or one of the few KubeVirt virt-controller metrics
the dashboard shows where KubeVirt is scraped (checked against KubeVirt's source when the lab's
Go module cache holds it). The kustomize base renders the dashboard into a ConfigMap with the
label Grafana's dashboard sidecar looks for.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import deploylib as dl  # noqa: E402

MONITORING = os.path.join(dl.DEPLOY, "monitoring")
DASHBOARD = os.path.join(MONITORING, "grafana-dashboard.json")
METRICS_C = os.path.join(dl.REPO, "src", "obs", "metrics.c")
RULES = os.path.join(MONITORING, "descheduler-rules.yaml")

# KubeVirt v1.6.0, pkg/monitoring/metrics/virt-controller/migrationstats_collector.go
KUBEVIRT_METRICS = {
    "kubevirt_vmi_migrations_in_pending_phase", "kubevirt_vmi_migrations_in_scheduling_phase",
    "kubevirt_vmi_migrations_in_running_phase", "kubevirt_vmi_migration_succeeded",
    "kubevirt_vmi_migration_failed",
}
KUBEVIRT_SOURCE = "kubevirt.io/kubevirt@v1.6.0/pkg/monitoring/metrics/virt-controller/migrationstats_collector.go"

# what Grafana puts in place of its variables (and of the dashboard's own) before querying
GRAFANA_VARS = {"$__rate_interval": "2m", "$__range": "1h", "$__interval": "1m"}

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
            "and", "or", "unless", "inf", "nan", "le"}


def panels(dash):
    for p in dash["panels"]:
        yield p
        yield from p.get("panels", [])


def queries(dash):
    """(panel title, expression) of every target."""
    return [(p["title"], t["expr"]) for p in panels(dash) for t in p.get("targets", [])]


def substitute(expr, dash):
    values = dict(GRAFANA_VARS)
    for v in dash["templating"]["list"]:
        if v["type"] == "textbox":
            values["$" + v["name"]] = v["current"]["value"]
        elif v["type"] == "query":
            values["$" + v["name"]] = ".*"  # used only inside =~ matchers
    for k in sorted(values, key=len, reverse=True):
        expr = expr.replace(k, values[k])
    return expr


def metric_names(expr):
    """The metric names a PromQL expression selects: identifiers that are not functions,
    keywords, label names or parts of strings, durations and grouping lists."""
    e = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        word, rest = m.group(0), e[m.end():]
        if re.match(r"\s*\(", rest) or word.lower() in KEYWORDS:
            continue
        if m.start() > 0 and (e[m.start() - 1].isdigit() or e[m.start() - 1] == "."):
            continue  # a number's exponent or unit
        names.add(word)
    return names


def binary_metrics():
    with open(METRICS_C) as f:
        text = f.read()
    names = set(re.findall(r'"(descheduler_[a-z_]+)"', text))
    names |= set(re.findall(r"# TYPE (process_[a-z_]+) ", text))
    return names


def recorded_series():
    with open(RULES) as f:
        rules = dl.yaml.safe_load(f)
    return {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}


def known(name, catalogue):
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    return name in catalogue or base in catalogue


def promtool_rejects(expressions, tmp):
    """{index: promtool's complaint} for expressions promtool does not accept."""
    promtool = shutil.which("promtool")
    if not promtool:
        raise unittest.SkipTest("promtool not found (Debian package prometheus; scripts/deps.sh test)")
    bad = {}
    for i, expr in enumerate(expressions):
        path = os.path.join(tmp, "q%d.yaml" % i)
        with open(path, "w") as f:
            dl.yaml.safe_dump({"groups": [{"name": "dashboard", "rules": [
                {"record": "dashboard:query:%d" % i, "expr": expr}]}]}, f)
        p = subprocess.run([promtool, "check", "rules", path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        if p.returncode != 0:
            bad[i] = p.stdout.strip()
    return bad


class Dashboard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(DASHBOARD) as f:
            cls.text = f.read()
        cls.dash = json.loads(cls.text)
        cls.catalogue = binary_metrics() | recorded_series() | KUBEVIRT_METRICS
        cls.tmp = tempfile.mkdtemp(prefix="dashboard-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_every_query_parses(self):
        qs = queries(self.dash)
        self.assertGreaterEqual(len(qs), 15)
        exprs = [substitute(e, self.dash) for _, e in qs]
        for e in exprs:
            self.assertNotIn("$", e, "a Grafana variable the test does not know")
        bad = promtool_rejects(exprs, self.tmp)
        self.assertEqual({qs[i][0]: msg for i, msg in bad.items()}, {})

    def test_every_metric_exists(self):
        missing = {}
        for title, expr in queries(self.dash):
            expr = substitute(expr, self.dash)
            names = metric_names(expr)
            # a threshold line is a constant; every other query selects something
            constant = re.fullmatch(r"vector\([0-9. /*+-]+\)", expr)
            self.assertTrue(names or constant, "panel %r: a query that selects no metric: %s" % (title, expr))
            for n in names:
                if not known(n, self.catalogue):
                    missing.setdefault(title, []).append(n)
        self.assertEqual(missing, {})

    def test_the_check_can_fail(self):
        # a misspelled metric and a broken expression are caught
        self.assertFalse(known("descheduler_pods_evictd_total", self.catalogue))
        self.assertEqual(metric_names('sum by (result) (rate(descheduler_pods_evicted_total{result="x"}[5m]))'),
                         {"descheduler_pods_evicted_total"})
        self.assertEqual(list(promtool_rejects(["sum(rate(descheduler_pods_evicted_total[5m])"], self.tmp)), [0])

    def test_panels_are_described(self):
        ids = set()
        for p in panels(self.dash):
            self.assertTrue(p.get("title"), p)
            self.assertNotIn(p["id"], ids, "duplicate panel id")
            ids.add(p["id"])
            if p["type"] == "row":
                continue
            self.assertTrue(p.get("description"), "panel %r has no description" % p["title"])
            self.assertEqual(p["datasource"], {"type": "prometheus", "uid": "${datasource}"}, p["title"])
        # what the dashboard must show: cycles, requests by plugin and result, VMSafety and
        # KubevirtMigrationAware blocks, KubeVirt's migrations, node utilization vs thresholds
        exprs = " ".join(e for _, e in queries(self.dash))
        for want in ("descheduler_loop_duration_seconds_bucket", "sum by (strategy, result)",
                     "descheduler_vmsafety_blocks_total", "descheduler_kubevirt_eviction_blocks_total",
                     "kubevirt_vmi_migrations_in_running_phase", "descheduler:nodeutilization:cpu:avg1m",
                     "$high_threshold"):
            self.assertIn(want, exprs)

    def test_kubevirt_names_are_kubevirts(self):
        found = glob.glob(os.path.join(os.path.expanduser("~"), "go", "pkg", "mod", KUBEVIRT_SOURCE))
        if not found:
            self.skipTest("KubeVirt's v1.6.0 source is not in the Go module cache (tests/lab/build.sh puts it there)")
        with open(found[0]) as f:
            source = f.read()
        for name in KUBEVIRT_METRICS:
            self.assertIn('"%s"' % name, source)

    def test_configmap_for_the_grafana_sidecar(self):
        cm = dl.find(dl.render(MONITORING), "ConfigMap", "descheduler-dashboard")
        self.assertEqual(cm["metadata"]["labels"].get("grafana_dashboard"), "1")
        self.assertEqual(cm["data"]["grafana-dashboard.json"], self.text)


if __name__ == "__main__":
    unittest.main()
