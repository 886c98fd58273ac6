"""Scenario files of the cluster lab (tests/lab/scenarios/NAME.yaml): what cluster to build, what
runs on it with what load, which policy the descheduler runs, and what "balanced" means.

A bad file is refused before anything starts, with one message naming the file, the field path
and what was expected (`ScenarioError`). The fields, with their defaults, are in FIELDS below and
in README.md beside this file; a field the lab does not know is an error too (a typo must not be
ignored silently).
"""

import os
import re

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCENARIOS = os.path.join(HERE, "scenarios")

QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")
DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$")
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class ScenarioError(Exception):
    pass


def seconds(text):
    total = 0.0
    for num, _, unit in re.findall(r"([0-9]+(\.[0-9]+)?)(ms|s|m|h)", text):
        total += float(num) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    return total


# field -> (type, default or REQUIRED, check); types: str, int, float, bool, quantity, duration,
# path, dict, list (of a sub-schema), one of a tuple of strings
REQUIRED = object()
LOAD = {
    "kind": (("steady", "bursty", "hot"), "steady", None),
    "cpu": (float, 0.3, (0.0, 4.0)),
    "memory": (float, 0.5, (0.0, 1.0)),
    "jitter": (float, 0.1, (0.0, 1.0)),
    "period": ("duration", "2m", None),
    "low": (float, None, (0.0, 4.0)),
    "high": (float, None, (0.0, 4.0)),
}
POOL = {
    "pool": ("name", REQUIRED, None),
    "count": (int, REQUIRED, (1, 5000)),
    "cpu": ("quantity", "32", None),
    "memory": ("quantity", "128Gi", None),
    "pods": (int, 110, (1, 1000)),
    "labels": ("labels", {}, None),
    "taints": ("taints", [], None),
}
VMS = {
    "name": ("name", REQUIRED, None),
    "count": (int, REQUIRED, (1, 20000)),
    "namespace": ("name", "vms", None),
    "cpu": ("quantity", "2", None),
    "memory": ("quantity", "4Gi", None),
    "evictionStrategy": (("LiveMigrate", "LiveMigrateIfPossible", "None", "External"), "LiveMigrate", None),
    "migratable": (bool, True, None),
    "localStorage": (bool, False, None),
    "nodeSelector": ("labels", {}, None),
    "tolerations": ("list-any", [], None),
    "load": ("load", {}, None),
    "createOn": ("name", None, None),
}
PODS = {
    "name": ("name", REQUIRED, None),
    "count": (int, REQUIRED, (1, 200000)),
    "namespace": ("name", "apps", None),
    "cpu": ("quantity", "500m", None),
    "memory": ("quantity", "1Gi", None),
    "nodeSelector": ("labels", {}, None),
    "load": ("load", {}, None),
}
KUBEVIRT = {
    "parallelMigrationsPerCluster": (int, 5, (1, 1000)),
    "parallelOutboundMigrationsPerNode": (int, 2, (1, 100)),
    "migrationSeconds": (float, 3.0, (0.0, 600.0)),
}
TARGET = {
    "imbalance": (float, None, (0.0, 1.0)),
    "overutilized": (int, None, (0, 100000)),
}
FIELDS = {
    "description": (str, REQUIRED, None),
    "seed": (int, 1, None),
    "cadence": (("cronjob", "deployment"), REQUIRED, None),
    "interval": ("duration", "2m", None),
    "labInterval": ("duration", "10s", None),
    "cycles": (int, 8, (1, 1000)),
    "settle": ("duration", "5m", None),
    "kubevirt": ("dict", {}, KUBEVIRT),
    "nodes": ("list", REQUIRED, POOL),
    "vms": ("list", [], VMS),
    "pods": ("list", [], PODS),
    "policy": ("path", None, None),
    "kubedescheduler": ("path", None, None),
    "upstreamPolicy": ("path", None, None),
    "targetedPolicy": ("path", None, None),
    "featureGates": (str, "EvictionsInBackground=true", None),
    "prometheus": (bool, False, None),
    "metric": (("requests", "actual"), "requests", None),
    "resource": (("cpu", "memory"), "cpu", None),
    "target": ("dict", REQUIRED, TARGET),
    "pingPongWindow": (int, 0, (0, 1000)),
    "softTainter": (bool, False, None),
    "small": ("dict-any", {}, None),
}


def _type_name(v):
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a map", type(None): "nothing"}.get(type(v), type(v).__name__)


def _check(path, spec, value, where):
    kind, _, extra = spec
    fail = lambda want: ScenarioError("%s: %s: expected %s, got %s" % (where, path, want, _describe(value)))
    if isinstance(kind, tuple):
        if value not in kind:
            raise fail("one of " + ", ".join(kind))
        return value
    if kind is bool:
        if not isinstance(value, bool):
            raise fail("true or false")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail("an integer")
        if extra and not extra[0] <= value <= extra[1]:
            raise fail("an integer from %d to %d" % extra)
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail("a number")
        if extra and not extra[0] <= value <= extra[1]:
            raise fail("a number from %g to %g" % extra)
        return float(value)
    if kind is str:
        if not isinstance(value, str) or not value:
            raise fail("a non-empty string")
        return value
    if kind == "name":
        if not isinstance(value, str) or not NAME.match(value):
            raise fail("a lowercase DNS label (a-z, 0-9, -)")
        return value
    if kind == "quantity":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not QUANTITY.match(value):
            raise fail("a Kubernetes quantity such as 16, 500m or 64Gi")
        return value
    if kind == "duration":
        if not isinstance(value, str) or not DURATION.match(value):
            raise fail("a duration such as 30s, 2m or 1h")
        return value
    if kind == "path":
        if not isinstance(value, str) or not value:
            raise fail("a file path relative to the repository")
        full = os.path.join(ROOT, value)
        if not os.path.isfile(full):
            raise ScenarioError("%s: %s: no such file: %s" % (where, path, value))
        return value
    if kind == "labels":
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise fail("a map of strings to strings")
        return dict(value)
    if kind == "taints":
        if not isinstance(value, list):
            raise fail("a list of taints {key, value, effect}")
        for i, t in enumerate(value):
            if not isinstance(t, dict) or not isinstance(t.get("key"), str) or \
                    t.get("effect") not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                raise ScenarioError("%s: %s[%d]: expected a taint {key, value, effect: NoSchedule|"
                                    "PreferNoSchedule|NoExecute}, got %s" % (where, path, i, _describe(t)))
        return value
    if kind == "list-any":
        if not isinstance(value, list):
            raise fail("a list")
        return value
    if kind == "dict-any":
        if not isinstance(value, dict):
            raise fail("a map")
        return value
    if kind == "load":
        return _fill(path, LOAD, value, where)
    if kind == "dict":
        return _fill(path, extra, value, where)
    if kind == "list":
        if not isinstance(value, list) or not value and spec[1] is REQUIRED:
            raise fail("a non-empty list")
        return [_fill("%s[%d]" % (path, i), extra, item, where) for i, item in enumerate(value)]
    raise AssertionError(kind)


def _describe(v):
    if isinstance(v, (dict, list)):
        return _type_name(v)
    return "%s %r" % (_type_name(v), v)


def _fill(path, schema, value, where):
    if not isinstance(value, dict):
        raise ScenarioError("%s: %s: expected a map, got %s" % (where, path or "(top)", _describe(value)))
    for k in value:
        if k not in schema:
            raise ScenarioError("%s: %s: unknown field (expected one of %s)" % (
                where, (path + "." if path else "") + str(k), ", ".join(sorted(schema))))
    out = {}
    for k, spec in schema.items():
        p = (path + "." if path else "") + k
        if k in value and value[k] is not None:
            out[k] = _check(p, spec, value[k], where)
        elif spec[1] is REQUIRED:
            raise ScenarioError("%s: %s: required" % (where, p))
        else:
            d = spec[1]
            if spec[0] in ("dict", "load"):
                d = _fill(p, spec[2] if spec[0] == "dict" else LOAD, d or {}, where)
            out[k] = d
    return out


def path_of(name_or_path):
    if os.sep in name_or_path or name_or_path.endswith((".yaml", ".yml")):
        return name_or_path
    return os.path.join(SCENARIOS, name_or_path + ".yaml")


def load(name_or_path, small=False):
    """The scenario as a dict with every default filled in. `small` applies the file's `small:`
    overrides (a smaller cluster for `make test`), which are checked like the rest."""
    path = path_of(name_or_path)
    # the repository's own files by their path in it; anything else as the user gave it
    full = os.path.abspath(path)
    where = os.path.relpath(full, ROOT) if full.startswith(ROOT + os.sep) else path
    if not os.path.isfile(path):
        names = sorted(f[:-5] for f in os.listdir(SCENARIOS) if f.endswith(".yaml"))
        raise ScenarioError("%s: no such scenario (known: %s)" % (where, ", ".join(names)))
    try:
        with open(path) as f:
            raw = yaml.safe_load(f)
    except yaml.YAMLError as e:
        raise ScenarioError("%s: not valid YAML: %s" % (where, str(e).replace("\n", " ")))
    s = _fill("", FIELDS, raw, where)
    if small and s["small"]:
        merged = dict(raw)
        merged.update(s["small"])
        merged.pop("small", None)
        s = _fill("", FIELDS, merged, where + " (small)")
    if s["target"]["imbalance"] is None and s["target"]["overutilized"] is None:
        raise ScenarioError("%s: target: expected imbalance, overutilized or both" % where)
    if bool(s["policy"]) == bool(s["kubedescheduler"]):
        raise ScenarioError("%s: policy, kubedescheduler: exactly one of them must be given" % where)
    names = set()
    for i, g in enumerate(s["vms"] + s["pods"]):
        if g["name"] in names:
            raise ScenarioError("%s: %s: the name %r is used twice" % (where, "vms/pods[%d].name" % i, g["name"]))
        names.add(g["name"])
    pools = {p["pool"] for p in s["nodes"]}
    for i, g in enumerate(s["vms"]):
        if g["createOn"] and g["createOn"] not in pools:
            raise ScenarioError("%s: vms[%d].createOn: expected one of the pools (%s), got %r" % (
                where, i, ", ".join(sorted(pools)), g["createOn"]))
    s["name"] = os.path.basename(path)[:-5]
    s["file"] = where
    return s
