#!/usr/bin/env python3
"""Writes a synthetic cluster snapshot for the benchmarks: a `v1 List` as `kubectl get -o json`
prints it, with objects shaped as kube-apiserver serves them (managedFields, owner references,
status with conditions and containerStatuses; ~5 KB per pod).

The cluster: N nodes, P pods spread unevenly (30% of the pods land on the first tenth of the
nodes, so LowNodeUtilization has work), V of the pods KubeVirt virt-launcher pods with their
VirtualMachineInstances and the KubeVirt CR, the rest ReplicaSet pods of 4,000 applications
in 50 namespaces (the pods of one application share its template: image, requests and
limits, as a ReplicaSet's pods do), one PodDisruptionBudget per 100 applications, the two
system priority classes. The output depends only on the arguments: a fixed seed (--seed, default 1) makes
every run byte-identical, so runs on different days and branches are comparable.

Usage: gen_cluster.py --nodes 5000 --pods 150000 --vms 20000 --out FILE [--seed 1]
                      [--per-pod-template]
"""
import argparse
import json
import random

T_CREATED = "2026-10-01T00:00:00Z"
T_POD = "2026-11-%02dT10:00:00Z"
APPS = 4000


def uid(rng):
    return "%08x-%04x-4%03x-%04x-%012x" % (rng.getrandbits(32), rng.getrandbits(16),
                                          rng.getrandbits(12), rng.getrandbits(16),
                                          rng.getrandbits(48))


def fields_v1(value, top=True):
    """The fieldsV1 set of a value, as the API server's structured-merge-diff writes it:
    maps as "f:<key>", lists of named maps as k:{"name":...}, leaves as {}."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            sub = fields_v1(v, False)
            if isinstance(v, (dict, list)) and sub and not top:
                sub = dict({".": {}}, **sub) if isinstance(v, dict) else sub
            out["f:" + k] = sub
        return out
    if isinstance(value, list) and value and isinstance(value[0], dict):
        out = {}
        for item in value:
            key = next((k for k in ("uid", "name", "type", "key", "containerPort", "mountPath") if k in item), None)
            if key is None:
                return {}
            sel = json.dumps({key: item[key]}, separators=(",", ":"))
            out["k:" + sel] = dict({".": {}}, **fields_v1(item, False))
        return out
    return {}


def managed(manager, operation, time, fields, subresource=None):
    m = {"manager": manager, "operation": operation, "apiVersion": "v1", "time": time,
         "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        m["subresource"] = subresource
    return m


def node(i, rng):
    name = "node-%05d" % i
    labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "node-role.kubernetes.io/worker": "", "node.kubernetes.io/instance-type": "m6i.16xlarge",
              "kubevirt.io/schedulable": "true", "cpumanager": "false",
              "topology.kubernetes.io/region": "region-1", "topology.kubernetes.io/zone": "zone-%d" % (i % 3)}
    annotations = {"node.alpha.kubernetes.io/ttl": "0",
                   "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                   "kubevirt.io/heartbeat": "2026-11-30T00:00:00Z"}
    spec = {"podCIDR": "10.%d.%d.0/24" % (i >> 8 & 255, i & 255),
            "podCIDRs": ["10.%d.%d.0/24" % (i >> 8 & 255, i & 255)],
            "providerID": "aws:///zone-%d/i-%017x" % (i % 3, rng.getrandbits(64))}
    cap = {"cpu": "64", "memory": "263921732Ki", "pods": "250", "ephemeral-storage": "523216876Ki",
           "hugepages-1Gi": "0", "hugepages-2Mi": "0", "devices.kubevirt.io/kvm": "1k",
           "devices.kubevirt.io/tun": "1k", "devices.kubevirt.io/vhost-net": "1k"}
    alloc = dict(cap, cpu="63500m", memory="262770756Ki", **{"ephemeral-storage": "482205499386"})
    conds = [{"type": t, "status": s, "lastHeartbeatTime": "2026-11-30T00:00:00Z",
              "lastTransitionTime": T_CREATED, "reason": r, "message": msg}
             for t, s, r, msg in (("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                                  ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                                  ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                                  ("Ready", "True", "KubeletReady", "kubelet is posting ready status"))]
    images = [{"names": ["registry.example.com/app@sha256:%064x" % rng.getrandbits(256),
                         "registry.example.com/app:%d" % k], "sizeBytes": 50000000 + k * 1000003}
              for k in range(6)]
    status = {"capacity": cap, "allocatable": alloc, "conditions": conds,
              "addresses": [{"type": "InternalIP", "address": "192.168.%d.%d" % (i >> 8 & 255, i & 255)},
                            {"type": "Hostname", "address": name}],
              "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
              "nodeInfo": {"machineID": "%032x" % rng.getrandbits(128), "systemUUID": uid(rng),
                           "bootID": uid(rng), "kernelVersion": "6.1.0-27-amd64",
                           "osImage": "Debian GNU/Linux 12 (bookworm)", "containerRuntimeVersion": "containerd://1.7.24",
                           "kubeletVersion": "v1.33.4", "kubeProxyVersion": "v1.33.4",
                           "operatingSystem": "linux", "architecture": "amd64"},
              "images": images}
    md = {"name": name, "uid": uid(rng), "creationTimestamp": T_CREATED, "labels": labels,
          "annotations": annotations}
    md["managedFields"] = [
        managed("kubelet", "Update", T_CREATED, fields_v1({"metadata": {"labels": labels}})),
        managed("kube-controller-manager", "Update", T_CREATED, fields_v1({"spec": spec})),
        managed("kubelet", "Update", "2026-11-30T00:00:00Z", fields_v1({"status": status}), "status")]
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "spec": spec, "status": status}


def pod_status(containers, started, host_ip, pod_ip, restarts, qos, rng):
    conds = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}
             for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
    statuses = [{"name": c["name"], "state": {"running": {"startedAt": started}}, "lastState": {},
                 "ready": True, "restartCount": restarts if k == 0 else 0, "image": c["image"],
                 "imageID": c["image"].split(":")[0] + "@sha256:%064x" % rng.getrandbits(256),
                 "containerID": "containerd://%064x" % rng.getrandbits(256), "started": True}
                for k, c in enumerate(containers)]
    return {"phase": "Running", "conditions": conds, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
            "podIP": pod_ip, "podIPs": [{"ip": pod_ip}], "startTime": started,
            "containerStatuses": statuses, "qosClass": qos}


def default_tolerations():
    """What the DefaultTolerationSeconds admission plugin adds to every pod."""
    return [{"key": "node.kubernetes.io/" + k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            for k in ("not-ready", "unreachable")]


def pod_managed_fields(manager, created, metadata, spec, status):
    """A pod's managedFields: its controller wrote metadata and spec, the kubelet its status."""
    return [managed(manager, "Update", created,
                    fields_v1({"metadata": dict(metadata, generateName=1), "spec": spec})),
            managed("kubelet", "Update", status["startTime"], fields_v1({"status": status}), "status")]


def started_at(created, i):
    """Pods start a few seconds to minutes after they are created, each at its own time."""
    return created[:14] + "%02d:%02d" % (i // 60 % 60, i % 60) + "Z"


def node_ip(nodename):
    i = int(nodename.split("-")[1])
    return "192.168.%d.%d" % (i >> 8 & 255, i & 255)


def app_pod(i, nodename, rng, per_pod):
    app = "app-%04d" % (i % APPS)
    # a ReplicaSet's pods share its template: image, requests and limits (per_pod: the
    # generator before 2026-12-02, which varied them pod by pod)
    t = i if per_pod else i % APPS
    rs = "%s-5d8f9c7b6" % app
    name = "%s-%05x" % (rs, i)
    ns = "team-%02d" % (i % APPS % 50)
    created = T_POD % (1 + i % 28)
    labels = {"app": app, "app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "shop",
              "pod-template-hash": "5d8f9c7b6", "tier": ["web", "api", "worker"][i % APPS % 3], "version": "v%d" % (i % APPS % 7)}
    annotations = {"kubectl.kubernetes.io/restartedAt": "2026-11-01T00:00:00Z", "prometheus.io/scrape": "true",
                   "prometheus.io/port": "9090"}
    owners = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": "6a1c0de5-0000-4000-8000-%012d" % (i % APPS),
               "controller": True, "blockOwnerDeletion": True}]
    mounts = [{"name": "kube-api-access-%05x" % (i & 0xfffff), "readOnly": True,
               "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    containers = [
        {"name": "main", "image": "registry.example.com/app:%d" % (t % 40),
         "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
         "resources": {"requests": {"cpu": "%dm" % (60 + t % 200), "memory": "%dMi" % (96 + t % 512)},
                       "limits": {"memory": "%dMi" % (128 + t % 512)}},
         "volumeMounts": mounts,
         "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "timeoutSeconds": 1,
                           "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
         "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
         "imagePullPolicy": "IfNotPresent"}]
    spec = {"volumes": [{"name": mounts[0]["name"], "projected": {"sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                                "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}], "defaultMode": 420}}],
            "containers": containers, "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "serviceAccountName": "default", "serviceAccount": "default",
            "nodeName": nodename, "securityContext": {}, "schedulerName": "default-scheduler",
            "tolerations": default_tolerations(),
            "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority"}
    status = pod_status(containers, started_at(created, i), node_ip(nodename),
                        "10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255), i % 3, "Burstable", rng)
    md = {"name": name, "generateName": rs + "-", "namespace": ns, "uid": uid(rng), "creationTimestamp": created,
          "labels": labels, "annotations": annotations, "ownerReferences": owners}
    md["managedFields"] = pod_managed_fields("kube-controller-manager", created,
                                             {"annotations": annotations, "labels": labels, "ownerReferences": owners},
                                             spec, status)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}


def vm_objects(i, nodename, rng):
    name = "vm-%05d" % i
    ns = "vms-%02d" % (i % 20)
    vmi_uid = uid(rng)
    pod = "virt-launcher-%s-%05x" % (name, i)
    created = "2026-11-20T08:00:00Z"
    vmi_labels = {"kubevirt.io/nodeName": nodename, "kubevirt.io/size": "large", "vm.kubevirt.io/name": name}
    vmi_spec = {"domain": {"cpu": {"cores": 4, "sockets": 1, "threads": 1, "model": "host-model"},
                           "memory": {"guest": "8Gi"}, "machine": {"type": "q35"},
                           "devices": {"disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}},
                                                 {"name": "cloudinitdisk", "disk": {"bus": "virtio"}}],
                                       "interfaces": [{"name": "default", "masquerade": {}}]},
                           "resources": {"requests": {"memory": "8Gi"}}},
                "evictionStrategy": "LiveMigrate",
                "networks": [{"name": "default", "pod": {}}],
                "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:40"}},
                            {"name": "cloudinitdisk", "cloudInitNoCloud": {"userData": "#cloud-config\n"}}]}
    vmi_status = {"phase": "Running", "nodeName": nodename, "qosClass": "Burstable",
                  "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                                  "lastTransitionTime": created},
                                 {"type": "LiveMigratable", "status": "True", "lastProbeTime": None,
                                  "lastTransitionTime": None},
                                 {"type": "AgentConnected", "status": "True", "lastProbeTime": None,
                                  "lastTransitionTime": created}],
                  "interfaces": [{"name": "default", "interfaceName": "eth0", "ipAddress": "10.200.%d.%d" % (i >> 8 & 255, i & 255),
                                  "mac": "52:54:00:%02x:%02x:%02x" % (i >> 16 & 255, i >> 8 & 255, i & 255),
                                  "infoSource": "domain, guest-agent"}],
                  "guestOSInfo": {"id": "fedora", "name": "Fedora Linux", "version": "40"},
                  "migrationMethod": "LiveMigration", "migrationTransport": "Unix",
                  "activePods": {}, "launcherContainerImageVersion": "quay.io/kubevirt/virt-launcher:v1.6.0",
                  "volumeStatus": [{"name": "rootdisk", "target": "vda"}, {"name": "cloudinitdisk", "target": "vdb"}]}
    vmi_md = {"name": name, "namespace": ns, "uid": vmi_uid, "creationTimestamp": created, "labels": vmi_labels,
              "annotations": {"kubevirt.io/latest-observed-api-version": "v1",
                              "kubevirt.io/storage-observed-api-version": "v1"},
              "finalizers": ["kubevirt.io/virtualMachineControllerFinalize", "foregroundDeleteVirtualMachine"]}
    vmi_md["managedFields"] = [
        managed("virt-controller", "Update", created, fields_v1({"metadata": {"labels": vmi_labels}, "spec": vmi_spec})),
        managed("virt-handler", "Update", created, fields_v1({"status": vmi_status}))]
    for m in vmi_md["managedFields"]:
        m["apiVersion"] = "kubevirt.io/v1"
    vmi = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": vmi_md, "spec": vmi_spec,
           "status": vmi_status}

    labels = {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmi_uid, "kubevirt.io/nodeName": nodename,
              "vm.kubevirt.io/name": name, "vmi.kubevirt.io/id": name}
    annotations = {"kubevirt.io/domain": name, "kubevirt.io/migrationTransportUnix": "true",
                   "descheduler.alpha.kubernetes.io/request-evict-only": "",
                   "kubectl.kubernetes.io/default-container": "compute"}
    owners = [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": name, "uid": vmi_uid,
               "controller": True, "blockOwnerDeletion": True}]
    mounts = [{"name": v, "mountPath": "/var/run/kubevirt-" + v} for v in
              ("private", "sockets", "libvirt-runtime")]
    containers = [{"name": "compute", "image": "quay.io/kubevirt/virt-launcher:v1.6.0",
                   "command": ["/usr/bin/virt-launcher-monitor", "--uid", vmi_uid],
                   "env": [{"name": "XDG_CACHE_HOME", "value": "/var/run/kubevirt-private"},
                           {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                           "fieldPath": "metadata.name"}}}],
                   "resources": {"requests": {"cpu": "200m", "memory": "8496Mi", "ephemeral-storage": "50M",
                                              "devices.kubevirt.io/kvm": "1", "devices.kubevirt.io/tun": "1"},
                                 "limits": {"devices.kubevirt.io/kvm": "1", "devices.kubevirt.io/tun": "1"}},
                   "volumeMounts": mounts,
                   "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                   "imagePullPolicy": "IfNotPresent"}]
    spec = {"volumes": [{"name": v, "emptyDir": {}} for v in
                        ("private", "public", "sockets", "libvirt-runtime", "ephemeral-disks", "container-disks")],
            "containers": containers, "restartPolicy": "Never", "terminationGracePeriodSeconds": 210,
            "dnsPolicy": "ClusterFirst", "serviceAccountName": "default", "serviceAccount": "default",
            "automountServiceAccountToken": False, "nodeName": nodename, "hostname": name,
            "securityContext": {"runAsUser": 107, "runAsGroup": 107, "fsGroup": 107, "runAsNonRoot": True},
            "schedulerName": "default-scheduler", "readinessGates": [{"conditionType": "kubevirt.io/virtual-machine-unpaused"}],
            "nodeSelector": {"kubevirt.io/schedulable": "true", "cpumanager": "false"},
            "tolerations": default_tolerations(),
            "priority": 0, "enableServiceLinks": False, "preemptionPolicy": "PreemptLowerPriority"}
    status = pod_status(containers, started_at(created, i), node_ip(nodename),
                        "10.200.%d.%d" % (i >> 8 & 255, i & 255), 0, "Burstable", rng)
    md = {"name": pod, "generateName": "virt-launcher-%s-" % name, "namespace": ns, "uid": uid(rng),
          "creationTimestamp": created, "labels": labels, "annotations": annotations, "ownerReferences": owners}
    md["managedFields"] = pod_managed_fields("virt-controller", created,
                                             {"annotations": annotations, "labels": labels, "ownerReferences": owners},
                                             spec, status)
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}
    return vmi, p


def kubevirt_cr():
    return {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt", "uid": "5e3b2c8a-0000-4000-8000-000000000001",
                         "creationTimestamp": T_CREATED},
            "spec": {"configuration": {"evictionStrategy": "LiveMigrate",
                                       "migrations": {"parallelMigrationsPerCluster": 5,
                                                      "parallelOutboundMigrationsPerNode": 2}}},
            "status": {"phase": "Deployed"}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--vms", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-pod-template", action="store_true",
                    help="vary image, requests and limits pod by pod, not per ReplicaSet "
                         "(the generator before 2026-12-02, to reproduce its figures)")
    a = ap.parse_args()
    if a.nodes < 1 or a.vms < 0 or a.pods < a.vms:
        ap.error("need --nodes >= 1 and 0 <= --vms <= --pods")
    rng = random.Random(a.seed)
    crowded = max(1, a.nodes // 10)

    def pick():  # 30% of the pods land on the crowded tenth of the nodes
        if rng.random() < 0.3:
            return "node-%05d" % rng.randrange(crowded)
        return "node-%05d" % rng.randrange(a.nodes)

    with open(a.out, "w") as f:
        f.write('{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[')
        first = True

        def emit(obj):
            nonlocal first
            f.write(("" if first else ",\n") + json.dumps(obj, separators=(",", ":")))
            first = False

        for i in range(a.nodes):
            emit(node(i, rng))
        namespaces = ["team-%02d" % k for k in range(50)] + ["vms-%02d" % k for k in range(20)] + ["kubevirt"]
        for ns in namespaces:
            emit({"apiVersion": "v1", "kind": "Namespace",
                  "metadata": {"name": ns, "uid": uid(rng), "creationTimestamp": T_CREATED,
                               "labels": {"kubernetes.io/metadata.name": ns}},
                  "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
        for name, value in (("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000)):
            emit({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                  "metadata": {"name": name, "uid": uid(rng), "creationTimestamp": T_CREATED},
                  "value": value, "globalDefault": False, "preemptionPolicy": "PreemptLowerPriority"})
        for k in range(0, min(APPS, a.pods), 100):
            app = "app-%04d" % k
            emit({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                  "metadata": {"name": app, "namespace": "team-%02d" % (k % 50), "uid": uid(rng),
                               "creationTimestamp": T_CREATED},
                  "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}}})
        if a.vms:
            emit(kubevirt_cr())
        for i in range(a.vms):
            vmi, p = vm_objects(i, pick(), rng)
            emit(vmi)
            emit(p)
        for i in range(a.pods - a.vms):
            emit(app_pod(i, pick(), rng, a.per_pod_template))
        f.write("]}\n")


if __name__ == "__main__":
    main()
