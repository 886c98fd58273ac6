#!/usr/bin/env python3
"""Writes the golden cases of `descheduler profile render` into tests/data/profile/cases/.

Run by hand after changing the case list (needs PyYAML); the test (tests/cli/t0300) only reads
the files. Each case is a directory with:
  kubedescheduler.yaml  the CR, as a user writes it
  flags                 extra command-line flags (optional; --snapshot defaults to cluster.json)
  policy.yaml           the expected DeschedulerPolicy        } for a CR that renders
  args                  the expected descheduler args, one per line
  warnings              the expected warnings, one per line (absent: none)
  error                 the expected message, verbatim          } for an invalid CR

Expected policies come from the operator's own golden files (operator/*.yaml, copied from
openshift/cluster-kube-descheduler-operator pkg/operator/testdata/assets at commit 945dcaa9d,
see operator/README) where the operator's unit tests have a case; the other expectations are
derived here from those files with the operator's tables (thresholds, queries, namespace rules),
never from this project's renderer.
"""
import copy
import os
import shutil
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases")
PROTECTED = ["kube-system", "hypershift", "openshift", "openshift-kube-descheduler-operator",
             "openshift-kube-scheduler"]
PROM_URL = "https://prometheus-k8s-openshift-monitoring.apps.example.com"
SOFT_TAINTER = ("the operator also runs its soft-tainter for the KubeVirtRelieveAndMigrate profile "
                "(PreferNoSchedule taints on overutilized nodes); the descheduler command does not taint "
                "nodes: run `descheduler soft-taint` with the same --kubedescheduler or --kubedescheduler-ref for that")
LNU_INCLUDE = ("LowNodeUtilization is enabled, however it does not support namespace inclusion. "
               "Namespace inclusion will only be considered by other strategies (like "
               "RemovePodsHavingTooManyRestarts and PodLifeTime). Falling back to a list of excluded "
               "protected namespaces.")
HNU_INCLUDE = ("HighNodeUtilization is enabled, however it does not support namespace inclusion. "
               "Namespace inclusion will only be considered by other strategies (like "
               "RemovePodsHavingTooManyRestarts and PodLifeTime)")
QUERIES = {
    "PrometheusCPUUsage": "instance:node_cpu:rate:sum",
    "PrometheusCPUPSIPressure": "rate(node_pressure_cpu_waiting_seconds_total[1m])",
    "PrometheusCPUPSIPressureByUtilization":
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) and (1 - avg by "
        "(instance) (rate(node_cpu_seconds_total{mode=\"idle\"}[1m]))) > 0.7 or avg by (instance) ( "
        "rate(node_pressure_cpu_waiting_seconds_total[1m])) * 0",
    "PrometheusMemoryPSIPressure": "rate(node_pressure_memory_waiting_seconds_total[1m])",
    "PrometheusIOPSIPressure": "rate(node_pressure_io_waiting_seconds_total[1m])",
    "PrometheusCPUCombined": "descheduler:combined_utilization_and_pressure:avg1m",
    "PrometheusCPUMemoryCombinedProfile":
        "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m",
}

cases = {}


def op(name):
    with open(os.path.join(HERE, "operator", name + ".yaml")) as f:
        return yaml.safe_load(f)


def cr(profiles, customizations=None, interval=3600, mode="Predictive", limits=None, drop=(),
       **spec_extra):
    spec = {"managementState": "Managed", "mode": mode, "deschedulingIntervalSeconds": interval,
            "profiles": profiles}
    if customizations is not None:
        spec["profileCustomizations"] = customizations
    if limits is not None:
        spec["evictionLimits"] = limits
    spec.update(spec_extra)
    for k in drop:
        spec.pop(k, None)
    return {"apiVersion": "operator.openshift.io/v1", "kind": "KubeDescheduler",
            "metadata": {"name": "cluster", "namespace": "openshift-kube-descheduler-operator"},
            "spec": spec}


def args_for(c, gates=False):
    spec = c["spec"]
    a = ["--policy-config-file=/policy-dir/policy.yaml", "--logging-format=text",
         "--tls-cert-file=/certs-dir/tls.crt", "--tls-private-key-file=/certs-dir/tls.key",
         "--descheduling-interval=%ds" % spec["deschedulingIntervalSeconds"]]
    kv = any(p in ("KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate") for p in spec["profiles"])
    if gates or kv:
        a.append("--feature-gates=EvictionsInBackground=true")
    si = (spec.get("observedConfig") or {}).get("servingInfo") or {}
    if si.get("cipherSuites"):
        a.append("--tls-cipher-suites=" + ",".join(si["cipherSuites"]))
    if si.get("minTLSVersion"):
        a.append("--tls-min-version=" + si["minTLSVersion"])
    if spec.get("mode", "Predictive") == "Predictive":
        a.append("--dry-run=true")
    a.append("-v=%d" % {"Debug": 4, "Trace": 6, "TraceAll": 8}.get(spec.get("logLevel", "Normal"), 2))
    return a


def ok(name, c, policy, warnings=(), flags="", gates=False):
    cases[name] = {"cr": c, "policy": policy, "args": args_for(c, gates), "warnings": list(warnings),
                   "flags": flags}


def bad(name, c, error, flags=""):
    cases[name] = {"cr": c, "error": error, "flags": flags}


def plugin_args(policy, profile_index, plugin):
    for pc in policy["profiles"][profile_index]["pluginConfig"]:
        if pc["name"] == plugin:
            return pc["args"]
    raise KeyError(plugin)


def kubevirt(low, high, deviation=True, query=QUERIES["PrometheusCPUMemoryCombinedProfile"]):
    """relieveAndMigrateDefaults with other thresholds / query"""
    p = op("relieveAndMigrateDefaults")
    lnu = plugin_args(p, 0, "LowNodeUtilization")
    lnu["thresholds"] = {"MetricResource": low}
    lnu["targetThresholds"] = {"MetricResource": high}
    lnu["metricsUtilization"]["prometheus"]["query"] = query
    if deviation:
        lnu["useDeviationThresholds"] = True
    else:
        lnu.pop("useDeviationThresholds", None)
    return p


KVW = [SOFT_TAINTER]
PSI = "--psi present"

# ---------------------------------------------------------------- the operator's own cases
ok("op-podlifetime", cr(["LifecycleAndUtilization"], {"podLifetime": "5m"}),
   op("lifecycleAndUtilizationPodLifeTimeCustomizationConfig"))
ok("op-pvc-pods", cr(["LifecycleAndUtilization", "EvictPodsWithPVC"]),
   op("lifecycleAndUtilizationEvictPvcPodsConfig"))
ok("op-threshold-priority-class-name", cr(["LifecycleAndUtilization"], {"thresholdPriorityClassName": "className"}),
   op("lifecycleAndUtilizationPodLifeTimeWithThresholdPriorityClassNameConfig"))
ok("op-threshold-priority", cr(["LifecycleAndUtilization"], {"thresholdPriority": 1000}),
   op("lifecycleAndUtilizationPodLifeTimeWithThresholdPriorityConfig"))
bad("op-threshold-priority-both", cr(["LifecycleAndUtilization"], {"thresholdPriority": 1000,
                                                                 "thresholdPriorityClassName": "className"}),
    "It is invalid to set both .spec.profileCustomizations.thresholdPriority and "
    ".spec.profileCustomizations.ThresholdPriorityClassName fields")
ok("op-lnu-included-namespace", cr(["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": "Low",
                                                               "namespaces": {"included": ["includedNamespace"]}}),
   op("lowNodeUtilizationIncludedNamespace"), [LNU_INCLUDE])
ok("op-lnu-low", cr(["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": "Low"}),
   op("lowNodeUtilizationLowConfig"))
ok("op-lnu-medium", cr(["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": "Medium"}),
   op("lowNodeUtilizationMediumConfig"))
ok("op-lnu-no-customization", cr(["LifecycleAndUtilization"]), op("lowNodeUtilizationMediumConfig"))
ok("op-lnu-empty-default", cr(["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": ""}),
   op("lowNodeUtilizationMediumConfig"))
ok("op-lnu-high", cr(["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": "High"}),
   op("lowNodeUtilizationHighConfig"))
ok("op-lnu-eviction-limits", cr(["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": ""},
                                limits={"total": 10, "node": 3}),
   op("lowNodeUtilizationEvictionLimits"))
ok("op-kv-defaults", cr(["DevKubeVirtRelieveAndMigrate"]), op("relieveAndMigrateDefaults"), KVW, PSI)
ok("op-kv-eviction-limits", cr(["DevKubeVirtRelieveAndMigrate"], limits={"total": 10, "node": 3}),
   op("relieveAndMigrateEvictionLimits"), KVW, PSI)
for lvl in ("Low", "Medium", "High"):
    ok("op-kv-%s" % lvl.lower(), cr(["DevKubeVirtRelieveAndMigrate"], {"devLowNodeUtilizationThresholds": lvl}),
       op("relieveAndMigrate%sConfig" % lvl), KVW, PSI)
    ok("op-kv-dynamic-%s" % lvl.lower(), cr(["DevKubeVirtRelieveAndMigrate"], {"devDeviationThresholds": lvl}),
       op("relieveAndMigrateDynamicThresholds%s" % lvl), KVW, PSI)
ok("op-kv-deviation-low-combined", cr(["DevKubeVirtRelieveAndMigrate"], {"devDeviationThresholds": "Low",
                                                                        "devActualUtilizationProfile": "PrometheusCPUCombined"}),
   op("relieveAndMigrateDeviationLowWithCombinedMetrics"), KVW, PSI)
ok("op-kv-included-namespace", cr(["DevKubeVirtRelieveAndMigrate"], {"namespaces": {"included": ["includedNamespace"]}}),
   op("relieveAndMigrateIncludedNamespace"), [LNU_INCLUDE] + KVW, PSI)
bad("op-kv-dynamic-and-static", cr(["DevKubeVirtRelieveAndMigrate"], {"devDeviationThresholds": "Low",
                                                                     "devLowNodeUtilizationThresholds": "Low"}),
    "only one of DevLowNodeUtilizationThresholds and DevDeviationThresholds customizations can be "
    "configured simultaneously", PSI)
bad("op-kv-without-kubevirt", cr(["DevKubeVirtRelieveAndMigrate"], {"devDeviationThresholds": "Low",
                                                                   "devLowNodeUtilizationThresholds": "Low"}),
    "profile DevKubeVirtRelieveAndMigrate can only be used when KubeVirt is properly deployed",
    "--snapshot cluster-no-kubevirt.json " + PSI)
bad("op-kv-without-psi", cr(["DevKubeVirtRelieveAndMigrate"], {"devLowNodeUtilizationThresholds": "Low"}),
    "profile DevKubeVirtRelieveAndMigrate can only be used when PSI metrics are enabled for the worker nodes",
    "--psi absent")
bad("op-kv-without-route", cr(["DevKubeVirtRelieveAndMigrate"], {"devLowNodeUtilizationThresholds": "Low"}),
    "unable to get openshift-monitoring/prometheus-k8s route: route.route.openshift.io \"prometheus-k8s\" not found",
    "--snapshot cluster-no-route.json " + PSI)
ok("op-kv-migration-cooldown", cr(["DevKubeVirtRelieveAndMigrate"], {"devMigrationCooldown": "15m",
                                                                    "devMaxMigrationCooldown": "6h",
                                                                    "devMigrationHistoryWindow": "48h"}),
   op("relieveAndMigrateMigrationCooldown"), KVW, PSI)
ok("op-affinity-and-taints-namespaces", cr(["AffinityAndTaints"], {"namespaces": {"included": ["includedNamespace"]}}),
   op("affinityAndTaintsWithNamespaces"))
ok("op-long-lifecycle-namespaces", cr(["LongLifecycle"], {"namespaces": {"included": ["includedNamespace"]}}),
   op("longLifecycleWithNamespaces"), [LNU_INCLUDE])
ok("op-long-lifecycle-local-storage", cr(["LongLifecycle", "EvictPodsWithLocalStorage"]),
   op("longLifecycleWithLocalStorage"))
ok("op-long-lifecycle-metrics", cr(["LongLifecycle"], {"devActualUtilizationProfile": "PrometheusCPUUsage"}),
   op("longLifecycleWithMetrics"))
ok("op-soft-topology-and-duplicates", cr(["SoftTopologyAndDuplicates"]), op("softTopologyAndDuplicates"))
ok("op-topology-and-duplicates", cr(["TopologyAndDuplicates"]), op("topologyAndDuplicates"))
HIGH = "--snapshot cluster-scheduler-HighNodeUtilization.json"
ok("op-compact-namespaces", cr(["CompactAndScale"], {"namespaces": {"included": ["includedNamespace"]}}),
   op("highNodeUtilizationWithNamespaces"), [HNU_INCLUDE], HIGH)
ok("op-compact-minimal", cr(["CompactAndScale"], {"devHighNodeUtilizationThresholds": "Minimal"}),
   op("highNodeUtilizationMinimal"), flags=HIGH)
ok("op-compact-modest", cr(["CompactAndScale"], {"devHighNodeUtilizationThresholds": "Modest"}),
   op("highNodeUtilization"), flags=HIGH)
ok("op-compact-default", cr(["CompactAndScale"], {"devHighNodeUtilizationThresholds": ""}),
   op("highNodeUtilization"), flags=HIGH)
ok("op-compact-moderate", cr(["CompactAndScale"], {"devHighNodeUtilizationThresholds": "Moderate"}),
   op("highNodeUtilizationModerate"), flags=HIGH)

# ---------------------------------------------------------------- every profile alone
at = op("affinityAndTaintsWithNamespaces")
for i in range(3):
    at["profiles"][0]["pluginConfig"][i]["args"]["namespaces"] = {"exclude": PROTECTED}
ok("profile-affinity-and-taints", cr(["AffinityAndTaints"]), at)
ok("profile-topology-and-duplicates", cr(["TopologyAndDuplicates"]), op("topologyAndDuplicates"))
ok("profile-soft-topology-and-duplicates", cr(["SoftTopologyAndDuplicates"]), op("softTopologyAndDuplicates"))
ok("profile-lifecycle-and-utilization", cr(["LifecycleAndUtilization"]), op("lowNodeUtilizationMediumConfig"))
ll = op("longLifecycleWithLocalStorage")
ll["profiles"][0]["pluginConfig"][2]["args"].pop("evictLocalStoragePods")
ok("profile-long-lifecycle", cr(["LongLifecycle"]), ll)
ok("profile-dev-preview-long-lifecycle", cr(["DevPreviewLongLifecycle"]), ll)
both = copy.deepcopy(ll)
both["profiles"].append(copy.deepcopy(ll["profiles"][0]))
ok("profile-long-lifecycle-twice", cr(["LongLifecycle", "DevPreviewLongLifecycle"]), both)
empty = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": []}
ok("profile-evict-pods-with-pvc", cr(["EvictPodsWithPVC"]), empty)
ok("profile-evict-pods-with-local-storage", cr(["EvictPodsWithLocalStorage"]), empty)
ok("profile-compact-and-scale", cr(["CompactAndScale"]), op("highNodeUtilization"))
ok("profile-kubevirt-relieve-and-migrate", cr(["KubeVirtRelieveAndMigrate"]), op("relieveAndMigrateDefaults"),
   KVW, PSI)
ok("profile-dev-kubevirt-relieve-and-migrate", cr(["DevKubeVirtRelieveAndMigrate"]), op("relieveAndMigrateDefaults"),
   KVW, PSI)
# KubeVirtRelieveAndMigrate with another profile: its nodeSelector and limits are global
mix = op("relieveAndMigrateDefaults")
mix["profiles"].insert(0, copy.deepcopy(at["profiles"][0]))
ok("profile-affinity-and-kubevirt", cr(["AffinityAndTaints", "KubeVirtRelieveAndMigrate"]), mix, KVW, PSI)
cs_soft = op("highNodeUtilization")
cs_soft["profiles"].append(op("softTopologyAndDuplicates")["profiles"][0])
ok("profile-compact-and-soft-topology", cr(["CompactAndScale", "SoftTopologyAndDuplicates"]), cs_soft)

# ---------------------------------------------------------------- the seed CR
seed = cr(["SoftTopologyAndDuplicates", "DevKubeVirtRelieveAndMigrate"],
          {"devDeviationThresholds": "AsymmetricLow", "devActualUtilizationProfile": "PrometheusCPUCombined"},
          interval=30, mode="Automatic")
sp = kubevirt(0, 10, query=QUERIES["PrometheusCPUCombined"])
sp["profiles"].insert(0, op("softTopologyAndDuplicates")["profiles"][0])
ok("seed", seed, sp, KVW, PSI)

# ---------------------------------------------------------------- devDeviationThresholds
for name, (low, high) in {"Low": (10, 10), "Medium": (20, 20), "High": (30, 30), "AsymmetricLow": (0, 10),
                          "AsymmetricMedium": (0, 20), "AsymmetricHigh": (0, 30)}.items():
    ok("deviation-%s" % name, cr(["KubeVirtRelieveAndMigrate"], {"devDeviationThresholds": name}),
       kubevirt(low, high), KVW, PSI)
bad("deviation-empty", cr(["KubeVirtRelieveAndMigrate"], {"devDeviationThresholds": ""}),
    "unknown Descheduler DeviationThresholds threshold , only 'Low', 'Medium' and 'High' are supported", PSI)
ok("kv-low-thresholds-empty", cr(["KubeVirtRelieveAndMigrate"], {"devLowNodeUtilizationThresholds": ""}),
   kubevirt(20, 50, deviation=True), KVW, PSI)
# Lifecycle profiles ignore devDeviationThresholds
ok("deviation-ignored-by-lifecycle", cr(["LifecycleAndUtilization"], {"devDeviationThresholds": "High"}),
   op("lowNodeUtilizationMediumConfig"))

# ---------------------------------------------------------------- devActualUtilizationProfile
for prof, q in QUERIES.items():
    ok("metrics-%s" % prof, cr(["KubeVirtRelieveAndMigrate"], {"devActualUtilizationProfile": prof}),
       kubevirt(0, 10, query=q), KVW, PSI)
ok("metrics-query", cr(["KubeVirtRelieveAndMigrate"], {"devActualUtilizationProfile": "query:avg(up) by (instance)"}),
   kubevirt(0, 10, query="avg(up) by (instance)"), KVW, PSI)
bad("metrics-unknown", cr(["KubeVirtRelieveAndMigrate"], {"devActualUtilizationProfile": "PrometheusGPU"}),
    "unknown prometheus profile: PrometheusGPU", PSI)
lm = op("longLifecycleWithMetrics")
plugin_args(lm, 0, "LowNodeUtilization")["metricsUtilization"]["prometheus"]["query"] = "sum(rate(x[5m]))"
ok("metrics-query-lifecycle", cr(["LongLifecycle"], {"devActualUtilizationProfile": "query:sum(rate(x[5m]))"}), lm)
lm2 = op("longLifecycleWithMetrics")
lm2["profiles"][0]["pluginConfig"].insert(0, copy.deepcopy(op("lowNodeUtilizationMediumConfig")["profiles"][0]["pluginConfig"][0]))
lm2["profiles"][0]["name"] = "LifecycleAndUtilization"
lm2["profiles"][0]["plugins"]["deschedule"]["enabled"].insert(0, "PodLifeTime")
lnu2 = plugin_args(lm2, 0, "LowNodeUtilization")
lnu2["thresholds"] = {"MetricResource": 40}
lnu2["targetThresholds"] = {"MetricResource": 70}
lnu2["metricsUtilization"]["prometheus"]["query"] = QUERIES["PrometheusIOPSIPressure"]
ok("metrics-lifecycle-high", cr(["LifecycleAndUtilization"], {"devActualUtilizationProfile": "PrometheusIOPSIPressure",
                                                             "devLowNodeUtilizationThresholds": "High"}), lm2)
bad("metrics-route-missing-lifecycle", cr(["LongLifecycle"], {"devActualUtilizationProfile": "PrometheusCPUUsage"}),
    "unable to get openshift-monitoring/prometheus-k8s route: route.route.openshift.io \"prometheus-k8s\" not found",
    "--snapshot cluster-no-route.json")

# ---------------------------------------------------------------- namespaces
ex = op("lowNodeUtilizationMediumConfig")
for plugin in ("PodLifeTime", "RemovePodsHavingTooManyRestarts"):
    plugin_args(ex, 0, plugin)["namespaces"] = {"exclude": PROTECTED + ["team-a", "team-b"]}
plugin_args(ex, 0, "LowNodeUtilization")["evictableNamespaces"] = {"exclude": PROTECTED + ["team-a", "team-b"]}
ok("namespaces-excluded", cr(["LifecycleAndUtilization"], {"namespaces": {"excluded": ["team-a", "team-b"]}}), ex)
hx = op("highNodeUtilization")
plugin_args(hx, 0, "HighNodeUtilization")["evictableNamespaces"] = {"exclude": PROTECTED + ["team-a"]}
ok("namespaces-excluded-compact", cr(["CompactAndScale"], {"namespaces": {"excluded": ["team-a"]}}), hx)
kx = op("relieveAndMigrateDefaults")
plugin_args(kx, 0, "LowNodeUtilization")["evictableNamespaces"] = {"exclude": PROTECTED + ["team-a"]}
ok("namespaces-excluded-kubevirt", cr(["KubeVirtRelieveAndMigrate"], {"namespaces": {"excluded": ["team-a"]}}),
   kx, KVW, PSI)
ok("namespaces-included-compact", cr(["CompactAndScale"], {"namespaces": {"included": ["team-a"]}}),
   op("highNodeUtilizationWithNamespaces"), [HNU_INCLUDE])
li = op("lowNodeUtilizationIncludedNamespace")
for plugin in ("PodLifeTime", "RemovePodsHavingTooManyRestarts"):
    plugin_args(li, 0, plugin)["namespaces"] = {"include": ["team-a", "team-b"]}
plugin_args(li, 0, "LowNodeUtilization")["thresholds"] = {"cpu": 20, "memory": 20, "pods": 20}
plugin_args(li, 0, "LowNodeUtilization")["targetThresholds"] = {"cpu": 50, "memory": 50, "pods": 50}
ok("namespaces-included", cr(["LifecycleAndUtilization"], {"namespaces": {"included": ["team-a", "team-b"]}}),
   li, [LNU_INCLUDE])
bad("namespaces-both", cr(["LifecycleAndUtilization"], {"namespaces": {"included": ["a"], "excluded": ["b"]}}),
    "It is forbidden to combine both included and excluded namespaces")
bad("namespaces-included-protected", cr(["AffinityAndTaints"], {"namespaces": {"included": ["team-a", "openshift-kube-scheduler"]}}),
    "Protected namespace openshift-kube-scheduler included. It is forbidden to include any of the protected "
    "namespaces from [kube-system hypershift openshift openshift-kube-descheduler-operator openshift-kube-scheduler]")
bad("namespaces-included-hypershift", cr(["AffinityAndTaints"], {"namespaces": {"included": ["hypershift"]}}),
    "Protected namespace hypershift included. It is forbidden to include any of the protected "
    "namespaces from [kube-system hypershift openshift openshift-kube-descheduler-operator openshift-kube-scheduler]")

# ---------------------------------------------------------------- DefaultEvictor customizations
kp = op("relieveAndMigrateDefaults")
plugin_args(kp, 0, "DefaultEvictor")["priorityThreshold"] = {"name": "", "value": 2000}
ok("threshold-priority-kubevirt", cr(["KubeVirtRelieveAndMigrate"], {"thresholdPriority": 2000}), kp, KVW, PSI)
tc = op("topologyAndDuplicates")
plugin_args(tc, 0, "DefaultEvictor")["priorityThreshold"] = {"name": "className", "value": None}
ok("threshold-priority-class-topology", cr(["TopologyAndDuplicates"], {"thresholdPriorityClassName": "className"}), tc)
bad("threshold-priority-both-kubevirt", cr(["KubeVirtRelieveAndMigrate"], {"thresholdPriority": 1, "thresholdPriorityClassName": "x"}),
    "It is invalid to set both .spec.profileCustomizations.thresholdPriority and "
    ".spec.profileCustomizations.ThresholdPriorityClassName fields", PSI)
pl = op("lifecycleAndUtilizationPodLifeTimeCustomizationConfig")
plugin_args(pl, 0, "PodLifeTime")["maxPodLifeTimeSeconds"] = 90
ok("podlifetime-fraction", cr(["LifecycleAndUtilization"], {"podLifetime": "1m30.9s"}), pl)
pl2 = op("lifecycleAndUtilizationPodLifeTimeCustomizationConfig")
plugin_args(pl2, 0, "PodLifeTime")["maxPodLifeTimeSeconds"] = 2 * 86400
ok("podlifetime-48h", cr(["LifecycleAndUtilization"], {"podLifetime": "48h"}), pl2)
pvc = op("relieveAndMigrateDefaults")
ok("kubevirt-ignores-evict-pods-with", cr(["KubeVirtRelieveAndMigrate", "EvictPodsWithPVC", "EvictPodsWithLocalStorage"]),
   pvc, KVW, PSI)
tls = op("topologyAndDuplicates")
for pc in tls["profiles"][0]["pluginConfig"]:
    if pc["name"] == "DefaultEvictor":
        pc["args"] = {"evictLocalStoragePods": True, "podProtections": {}}
ok("evict-pods-with-pvc-and-local-storage", cr(["TopologyAndDuplicates", "EvictPodsWithPVC", "EvictPodsWithLocalStorage"]), tls)

# ---------------------------------------------------------------- eviction limits
el = op("topologyAndDuplicates")
el["maxNoOfPodsToEvictTotal"] = 0
ok("limits-total-zero", cr(["TopologyAndDuplicates"], limits={"total": 0}), el)
el2 = op("topologyAndDuplicates")
el2["maxNoOfPodsToEvictPerNode"] = 4
ok("limits-node-no-lnu", cr(["TopologyAndDuplicates"], limits={"node": 4}), el2)
el3 = op("relieveAndMigrateDefaults")
el3["maxNoOfPodsToEvictTotal"] = 20
ok("limits-total-kubevirt", cr(["KubeVirtRelieveAndMigrate"], limits={"total": 20}), el3, KVW, PSI)

# ---------------------------------------------------------------- Scheduler profile conflicts
LOW = "--snapshot cluster-scheduler-LowNodeUtilization.json"
for prof in ("LifecycleAndUtilization", "LongLifecycle", "DevPreviewLongLifecycle"):
    bad("scheduler-high-%s" % prof, cr([prof]),
        "enabling Descheduler LowNodeUtilization with Scheduler HighNodeUtilization may cause an "
        "eviction/scheduling hot loop", HIGH)
bad("scheduler-low-compact", cr(["CompactAndScale"]),
    "enabling Descheduler CompactAndScale with Scheduler LowNodeUtilization may cause an eviction/scheduling "
    "hot loop", LOW)
ok("scheduler-high-kubevirt", cr(["KubeVirtRelieveAndMigrate"]), op("relieveAndMigrateDefaults"), KVW,
   HIGH + " " + PSI)
ok("scheduler-low-lifecycle", cr(["LifecycleAndUtilization"]), op("lowNodeUtilizationMediumConfig"), flags=LOW)
bad("scheduler-after-profile-errors", cr(["LifecycleAndUtilization"], {"thresholdPriority": 1, "thresholdPriorityClassName": "x"}),
    "It is invalid to set both .spec.profileCustomizations.thresholdPriority and "
    ".spec.profileCustomizations.ThresholdPriorityClassName fields", HIGH)
ok("scheduler-missing", cr(["TopologyAndDuplicates"]), op("topologyAndDuplicates"),
   ["the Scheduler config.openshift.io/v1 \"cluster\" could not be read; rendering as if it set no profile "
    "(the operator would wait for it: scheduler.config.openshift.io \"cluster\" not found)"],
   "--snapshot cluster-no-scheduler.json")

# ---------------------------------------------------------------- KubeVirt preconditions
bad("kv-no-kubevirt-node", cr(["KubeVirtRelieveAndMigrate"]),
    "profile KubeVirtRelieveAndMigrate can only be used when KubeVirt is properly deployed",
    "--snapshot cluster-no-kubevirt.json " + PSI)
bad("kv-route-missing", cr(["KubeVirtRelieveAndMigrate"]),
    "unable to get openshift-monitoring/prometheus-k8s route: route.route.openshift.io \"prometheus-k8s\" not found",
    "--snapshot cluster-no-route.json " + PSI)
bad("kv-route-no-ingress", cr(["KubeVirtRelieveAndMigrate"]),
    "No ingress found in openshift-monitoring/prometheus-k8s route", "--snapshot cluster-route-no-ingress.json " + PSI)
bad("kv-route-empty-host", cr(["KubeVirtRelieveAndMigrate"]),
    "Host for status.ingress[0] in openshift-monitoring/prometheus-k8s route is empty",
    "--snapshot cluster-route-empty-host.json " + PSI)
bad("kv-psi-absent", cr(["KubeVirtRelieveAndMigrate"]),
    "profile KubeVirtRelieveAndMigrate can only be used when PSI metrics are enabled for the worker nodes",
    "--psi absent")
ok("kv-psi-unknown", cr(["KubeVirtRelieveAndMigrate"]), op("relieveAndMigrateDefaults"),
   ["profile KubeVirtRelieveAndMigrate: whether PSI (/proc/pressure) is enabled on the worker nodes was not "
    "checked; the operator refuses this profile without it (see --psi)"] + KVW)
pu = op("relieveAndMigrateDefaults")
pu["metricsProviders"][0]["prometheus"]["url"] = "http://prometheus.example:9090"
ok("kv-prometheus-url-flag", cr(["KubeVirtRelieveAndMigrate"]), pu, KVW,
   "--snapshot cluster-no-route.json --prometheus-url http://prometheus.example:9090 " + PSI)
ok("kv-no-monitoring-label", cr(["KubeVirtRelieveAndMigrate"]), op("relieveAndMigrateDefaults"),
   ["namespace openshift-kube-descheduler-operator is not labeled with openshift.io/cluster-monitoring=true "
    "(the operator waits for this label before it renders the policy)"] + KVW,
   "--snapshot cluster-no-monitoring-label.json " + PSI)
bad("kv-preconditions-before-customizations", cr(["KubeVirtRelieveAndMigrate"], {"devActualUtilizationProfile": "nope"}),
    "profile KubeVirtRelieveAndMigrate can only be used when KubeVirt is properly deployed",
    "--snapshot cluster-no-kubevirt.json " + PSI)

# ---------------------------------------------------------------- mode, interval, logLevel, gates, TLS
ok("mode-automatic", cr(["TopologyAndDuplicates"], mode="Automatic"), op("topologyAndDuplicates"))
ok("mode-default-predictive", cr(["TopologyAndDuplicates"], drop=("mode",)), op("topologyAndDuplicates"))
for lvl in ("Normal", "Debug", "Trace", "TraceAll", ""):
    ok("loglevel-%s" % (lvl or "empty"), cr(["TopologyAndDuplicates"], logLevel=lvl), op("topologyAndDuplicates"))
ok("interval-1", cr(["TopologyAndDuplicates"], interval=1), op("topologyAndDuplicates"))
ok("evictions-in-background", cr(["TopologyAndDuplicates"], {"devEnableEvictionsInBackground": True}),
   op("topologyAndDuplicates"), gates=True)
ok("soft-tainter-deprecated", cr(["TopologyAndDuplicates"], {"devEnableSoftTainter": True}), op("topologyAndDuplicates"),
   ["spec.profileCustomizations.devEnableSoftTainter is deprecated and ignored"])
ok("observed-tls", cr(["TopologyAndDuplicates"], observedConfig={"servingInfo": {
    "cipherSuites": ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"], "minTLSVersion": "VersionTLS12"}}),
   op("topologyAndDuplicates"))
bad("interval-missing", cr(["TopologyAndDuplicates"], drop=("deschedulingIntervalSeconds",)),
    "descheduler should have an interval set and it should be greater than 0")
bad("interval-zero", cr(["TopologyAndDuplicates"], interval=0),
    "validation errors: spec.deschedulingIntervalSeconds in body should be greater than or equal to 1")
bad("interval-negative", cr(["TopologyAndDuplicates"], interval=-5),
    "validation errors: spec.deschedulingIntervalSeconds in body should be greater than or equal to 1")

# ---------------------------------------------------------------- the 17 CEL rules, and their order
CEL = [("DevPreviewLongLifecycle", "LifecycleAndUtilization"), ("LongLifecycle", "LifecycleAndUtilization"),
       ("DevPreviewLongLifecycle", "DevKubeVirtRelieveAndMigrate"), ("LongLifecycle", "DevKubeVirtRelieveAndMigrate"),
       ("LifecycleAndUtilization", "DevKubeVirtRelieveAndMigrate"),
       ("KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate"),
       ("DevPreviewLongLifecycle", "KubeVirtRelieveAndMigrate"), ("LongLifecycle", "KubeVirtRelieveAndMigrate"),
       ("LifecycleAndUtilization", "KubeVirtRelieveAndMigrate"), ("SoftTopologyAndDuplicates", "TopologyAndDuplicates"),
       ("CompactAndScale", "LifecycleAndUtilization"), ("CompactAndScale", "LongLifecycle"),
       ("CompactAndScale", "DevPreviewLongLifecycle"), ("CompactAndScale", "DevKubeVirtRelieveAndMigrate"),
       ("CompactAndScale", "KubeVirtRelieveAndMigrate"), ("CompactAndScale", "TopologyAndDuplicates")]
bad("cel-01-duplicate", cr(["AffinityAndTaints", "TopologyAndDuplicates", "AffinityAndTaints"]),
    "duplicate profiles are not allowed")
for i, (a, b) in enumerate(CEL, start=2):
    # written in the reverse order, to show that the order in the CR does not matter
    bad("cel-%02d-%s-%s" % (i, a, b), cr([b, a]), "cannot declare %s and %s profiles simultaneously" % (a, b))
bad("cel-order-duplicate-first", cr(["CompactAndScale", "LifecycleAndUtilization", "CompactAndScale"]),
    "duplicate profiles are not allowed")
bad("cel-order-rule-11-before-17", cr(["CompactAndScale", "TopologyAndDuplicates", "SoftTopologyAndDuplicates"]),
    "cannot declare SoftTopologyAndDuplicates and TopologyAndDuplicates profiles simultaneously")
bad("cel-order-rule-3-before-12", cr(["CompactAndScale", "LongLifecycle", "LifecycleAndUtilization"]),
    "cannot declare LongLifecycle and LifecycleAndUtilization profiles simultaneously")
bad("cel-order-rule-7-before-16", cr(["CompactAndScale", "KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate"]),
    "cannot declare KubeVirtRelieveAndMigrate and DevKubeVirtRelieveAndMigrate profiles simultaneously")

# ---------------------------------------------------------------- the operator's schema check
ENUM = ("[AffinityAndTaints TopologyAndDuplicates LifecycleAndUtilization DevPreviewLongLifecycle LongLifecycle "
        "SoftTopologyAndDuplicates EvictPodsWithLocalStorage EvictPodsWithPVC CompactAndScale "
        "DevKubeVirtRelieveAndMigrate KubeVirtRelieveAndMigrate]")
bad("schema-unknown-profile", cr(["AffinityAndTaints", "Balanced"]),
    "validation errors: spec.profiles[1] in body should be one of " + ENUM)
bad("schema-profiles-missing", cr([], drop=("profiles",)),
    "validation errors: spec.profiles in body must be of type array: \"null\"")
bad("schema-too-many-profiles", cr(["AffinityAndTaints"] * 12),
    "validation errors: spec.profiles in body should have at most 11 items")
bad("schema-mode", cr(["AffinityAndTaints"], mode="Simulate"),
    "validation errors: spec.mode in body should be one of [Automatic Predictive]")
bad("schema-mode-empty", cr(["AffinityAndTaints"], mode=""),
    "validation errors: spec.mode in body should be one of [Automatic Predictive]")
bad("schema-loglevel", cr(["AffinityAndTaints"], logLevel="Verbose"),
    "validation errors: spec.logLevel in body should be one of [ Normal Debug Trace TraceAll]")
bad("schema-management-state-missing", cr(["AffinityAndTaints"], drop=("managementState",)),
    "validation errors: spec.managementState in body should match '^(Managed|Unmanaged|Force|Removed)$'")
bad("schema-dev-low", cr(["LifecycleAndUtilization"], {"devLowNodeUtilizationThresholds": "Extreme"}),
    "validation errors: spec.profileCustomizations.devLowNodeUtilizationThresholds in body should be one of "
    "[Low Medium High ]")
bad("schema-dev-high", cr(["CompactAndScale"], {"devHighNodeUtilizationThresholds": "Tight"}),
    "validation errors: spec.profileCustomizations.devHighNodeUtilizationThresholds in body should be one of "
    "[Minimal Modest Moderate ]")
bad("schema-dev-deviation", cr(["KubeVirtRelieveAndMigrate"], {"devDeviationThresholds": "Huge"}),
    "validation errors: spec.profileCustomizations.devDeviationThresholds in body should be one of "
    "[Low Medium High AsymmetricLow AsymmetricMedium AsymmetricHigh ]")
bad("schema-several", cr(["Balanced", "LongLifecycle"], mode="Now", interval=0, operatorLogLevel="Loud"),
    "validation errors: spec.deschedulingIntervalSeconds in body should be greater than or equal to 1; "
    "spec.mode in body should be one of [Automatic Predictive]; spec.operatorLogLevel in body should be one of "
    "[ Normal Debug Trace TraceAll]; spec.profiles[0] in body should be one of " + ENUM)
bad("schema-before-cel", cr(["LongLifecycle", "LifecycleAndUtilization"], mode="Now"),
    "validation errors: spec.mode in body should be one of [Automatic Predictive]")
bad("profiles-empty", cr([]), "descheduler should have at least 1 profile enabled")
c = cr(["AffinityAndTaints"])
c["metadata"]["name"] = "default"
bad("singleton-name", c, "kubedescheduler is a singleton, .metadata.name must be 'cluster'")


def dump(path, obj):
    with open(path, "w") as f:
        yaml.safe_dump(obj, f, default_flow_style=False, sort_keys=False, width=1000)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for name, c in sorted(cases.items()):
        d = os.path.join(OUT, name)
        os.makedirs(d)
        dump(os.path.join(d, "kubedescheduler.yaml"), c["cr"])
        if c["flags"]:
            with open(os.path.join(d, "flags"), "w") as f:
                f.write(c["flags"] + "\n")
        if "error" in c:
            with open(os.path.join(d, "error"), "w") as f:
                f.write(c["error"] + "\n")
            continue
        with open(os.path.join(d, "policy.yaml"), "w") as f:
            yaml.safe_dump(c["policy"], f, default_flow_style=False, sort_keys=True, width=1000)
        with open(os.path.join(d, "args"), "w") as f:
            f.write("\n".join(c["args"]) + "\n")
        if c["warnings"]:
            with open(os.path.join(d, "warnings"), "w") as f:
                f.write("\n".join(c["warnings"]) + "\n")
    print("%d cases written to %s" % (len(cases), OUT), file=sys.stderr)


if __name__ == "__main__":
    main()
