#!/usr/bin/env python3
"""Writes a synthetic cluster snapshot (a v1 List as `kubectl get -o json` prints it) for
benchmarks: N nodes, P pods spread unevenly (the first tenth of the nodes are crowded), a
share of them KubeVirt virt-launcher pods with their VMIs, the rest ReplicaSet pods with
realistic metadata (labels, annotations, owner references, tolerations, volumes, statuses).

Usage: gen_cluster.py --nodes 5000 --pods 150000 --vms 20000 --out FILE [--seed 1]
"""
import argparse, json, random


def uid(rng):
    return "%08x-%04x-%04x-%04x-%012x" % (rng.getrandbits(32), rng.getrandbits(16),
                                         rng.getrandbits(16), rng.getrandbits(16),
                                         rng.getrandbits(48))


def node(i, rng):
    name = "node-%05d" % i
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": uid(rng), "creationTimestamp": "2026-10-01T00:00:00Z",
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                    "node-role.kubernetes.io/worker": "",
                                    "kubevirt.io/schedulable": "true",
                                    "topology.kubernetes.io/zone": "zone-%d" % (i % 3)}},
            "spec": {},
            "status": {"capacity": {"cpu": "64", "memory": "263921732Ki", "pods": "250",
                                    "devices.kubevirt.io/kvm": "1k"},
                       "allocatable": {"cpu": "63500m", "memory": "262770756Ki", "pods": "250",
                                       "devices.kubevirt.io/kvm": "1k"},
                       "conditions": [{"type": "Ready", "status": "True",
                                       "lastHeartbeatTime": "2026-11-30T00:00:00Z",
                                       "lastTransitionTime": "2026-10-01T00:00:00Z",
                                       "reason": "KubeletReady", "message": "kubelet is posting ready status"}],
                       "nodeInfo": {"kubeletVersion": "v1.33.4", "osImage": "Linux"}}}


def app_pod(i, nodename, rng):
    rs = "app-%04d-5d8f9c7b6" % (i % 4000)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "%s-%05x" % (rs, i), "namespace": "team-%02d" % (i % 50), "uid": uid(rng),
                         "creationTimestamp": "2026-11-%02dT10:00:00Z" % (1 + i % 28),
                         "labels": {"app": "app-%04d" % (i % 4000), "pod-template-hash": "5d8f9c7b6",
                                    "tier": ["web", "api", "worker"][i % 3]},
                         "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-01T00:00:00Z",
                                         "prometheus.io/scrape": "true"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                              "uid": "rs-%04d" % (i % 4000), "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": {"nodeName": nodename, "restartPolicy": "Always", "schedulerName": "default-scheduler",
                     "containers": [{"name": "main", "image": "registry.example.com/app:%d" % (i % 40),
                                     "resources": {"requests": {"cpu": "%dm" % (50 + i % 200),
                                                                "memory": "%dMi" % (64 + i % 512)},
                                                   "limits": {"memory": "%dMi" % (128 + i % 512)}}},
                                    {"name": "sidecar", "image": "registry.example.com/proxy:1.2",
                                     "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}}}],
                     "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                      "effect": "NoExecute", "tolerationSeconds": 300},
                                     {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                      "effect": "NoExecute", "tolerationSeconds": 300}],
                     "volumes": [{"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]},
            "status": {"phase": "Running", "qosClass": "Burstable", "startTime": "2026-11-01T10:00:05Z",
                       "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-01T10:00:20Z"}],
                       "containerStatuses": [{"name": "main", "ready": True, "restartCount": i % 3,
                                              "state": {"running": {"startedAt": "2026-11-01T10:00:10Z"}}},
                                             {"name": "sidecar", "ready": True, "restartCount": 0,
                                              "state": {"running": {"startedAt": "2026-11-01T10:00:10Z"}}}]}}


def vm_objects(i, nodename, rng):
    name = "vm-%05d" % i
    vmi_uid = uid(rng)
    pod = "virt-launcher-%s-%05x" % (name, i)
    vmi = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
           "metadata": {"name": name, "namespace": "vms-%02d" % (i % 20), "uid": vmi_uid},
           "spec": {"domain": {"memory": {"guest": "8Gi"}}},
           "status": {"phase": "Running", "nodeName": nodename,
                      "conditions": [{"type": "Ready", "status": "True"},
                                     {"type": "LiveMigratable", "status": "True"}]}}
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": pod, "namespace": "vms-%02d" % (i % 20), "uid": uid(rng),
                      "creationTimestamp": "2026-11-20T08:00:00Z",
                      "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmi_uid,
                                 "vm.kubevirt.io/name": name, "vmi.kubevirt.io/id": name},
                      "annotations": {"kubevirt.io/domain": name,
                                      "descheduler.alpha.kubernetes.io/request-evict-only": "",
                                      "kubectl.kubernetes.io/default-container": "compute"},
                      "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                                           "name": name, "uid": vmi_uid, "controller": True}]},
         "spec": {"nodeName": nodename, "restartPolicy": "Never",
                  "containers": [{"name": "compute", "image": "quay.io/kubevirt/virt-launcher:v1.6.0",
                                  "resources": {"requests": {"cpu": "200m", "memory": "8496Mi",
                                                             "devices.kubevirt.io/kvm": "1"},
                                                "limits": {"devices.kubevirt.io/kvm": "1"}}}],
                  "volumes": [{"name": v, "emptyDir": {}} for v in
                              ("private", "public", "sockets", "libvirt-runtime", "ephemeral-disks")]},
         "status": {"phase": "Running", "qosClass": "Burstable"}}
    return vmi, p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--vms", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    crowded = max(1, a.nodes // 10)

    def pick(i):  # 30% of the pods land on the crowded tenth of the nodes
        if rng.random() < 0.3:
            return "node-%05d" % rng.randrange(crowded)
        return "node-%05d" % rng.randrange(a.nodes)

    with open(a.out, "w") as f:
        f.write('{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[')
        first = True

        def emit(obj):
            nonlocal first
            f.write(("" if first else ",") + json.dumps(obj, separators=(",", ":")))
            first = False

        for i in range(a.nodes):
            emit(node(i, rng))
        for ns in ["team-%02d" % k for k in range(50)] + ["vms-%02d" % k for k in range(20)]:
            emit({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}})
        for i in range(a.vms):
            vmi, p = vm_objects(i, pick(i), rng)
            emit(vmi)
            emit(p)
        for i in range(a.pods - a.vms):
            emit(app_pod(i, pick(i), rng))
        f.write("]}\n")


if __name__ == "__main__":
    main()
