"""Builders for realistic cluster objects: nodes, VMIs and their virt-launcher pods, workloads.

A virt-launcher pod is shaped as KubeVirt renders it (services/template.go): the
labels the webhook and the descheduler key on, `kubevirt.io/domain`,
`request-evict-only`, the emptyDir volumes that make the DefaultEvictor's
local-storage rule matter, an owner reference to the VMI, and a compute
container requesting 100m per vCPU and guest memory plus KubeVirt's overhead
(289Mi for 512Mi/1 vCPU).  UIDs and name suffixes derive from names, so the
same call always builds the same objects.

`python3 tests/apisim/simfixtures.py > tests/apisim/data/cluster.json`
regenerates the checked-in example snapshot from `example_cluster()`.
"""

import hashlib
import json
import sys
import uuid

CREATED = "2024-05-01T10:00:00Z"
_NS_UUID = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")
MI = 1024 * 1024


def uid_for(*parts):
    return str(uuid.uuid5(_NS_UUID, "/".join(parts)))


def suffix_for(*parts, n=5):
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = int(hashlib.sha1("/".join(parts).encode()).hexdigest(), 16)
    out = ""
    for _ in range(n):
        h, r = divmod(h, len(alphabet))
        out += alphabet[r]
    return out


def parse_mi(q):
    """Mi/Gi strings used by the fixtures -> MiB."""
    if q.endswith("Gi"):
        return int(q[:-2]) * 1024
    if q.endswith("Mi"):
        return int(q[:-2])
    raise ValueError("fixture memory must be Mi or Gi: %s" % q)


def memory_overhead_mi(guest_mi, vcpus):
    """KubeVirt's KVM overhead with defaults (GetMemoryOverhead): RAM/512 + 240Mi + 8Mi*vCPU + 8Mi + 32Mi."""
    page_tables = -(-guest_mi // 512)
    return page_tables + 240 + 8 * vcpus + 8 + 32


def namespace(name, labels=None):
    lb = {"kubernetes.io/metadata.name": name}
    lb.update(labels or {})
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "uid": uid_for("ns", name), "creationTimestamp": CREATED, "labels": lb},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(name, cpu="16", memory="64Gi", pods="110", labels=None, taints=None, unschedulable=False,
         ready=True, worker=True, ip=None):
    lb = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
          "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}
    if worker:
        lb.update({"node-role.kubernetes.io/worker": "", "kubevirt.io/schedulable": "true",
                   "cpumanager": "false"})
    else:
        lb["node-role.kubernetes.io/control-plane"] = ""
    lb.update(labels or {})
    spec = {"podCIDR": "10.244.%d.0/24" % (int(hashlib.sha1(name.encode()).hexdigest(), 16) % 250)}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    res = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "100Gi",
           "devices.kubevirt.io/kvm": "1k", "devices.kubevirt.io/tun": "1k", "devices.kubevirt.io/vhost-net": "1k"}
    conds = [{"type": t, "status": "False", "reason": r, "message": m, "lastHeartbeatTime": CREATED,
              "lastTransitionTime": CREATED}
             for t, r, m in (("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                             ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                             ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"))]
    conds.append({"type": "Ready", "status": "True" if ready else "False",
                  "reason": "KubeletReady" if ready else "KubeletNotReady",
                  "message": "kubelet is posting ready status" if ready else "container runtime is down",
                  "lastHeartbeatTime": CREATED, "lastTransitionTime": CREATED})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": uid_for("node", name), "creationTimestamp": CREATED, "labels": lb,
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                         "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": spec,
            "status": {"capacity": dict(res), "allocatable": dict(res), "conditions": conds,
                       "addresses": [{"type": "InternalIP", "address": ip or "192.168.10.%d" %
                                      (int(hashlib.sha1(name.encode()).hexdigest(), 16) % 250 + 2)},
                                     {"type": "Hostname", "address": name}],
                       "nodeInfo": {"bootID": uid_for("boot", name), "machineID": uid_for("machine", name)
                                    .replace("-", ""), "systemUUID": uid_for("system", name),
                                    "kubeletVersion": "v1.30.2", "kubeProxyVersion": "v1.30.2",
                                    "containerRuntimeVersion": "cri-o://1.30.2", "operatingSystem": "linux",
                                    "architecture": "amd64", "osImage": "Fedora CoreOS 40",
                                    "kernelVersion": "6.8.9-300.fc40.x86_64"}}}


def _running_pod_status(node_name, pod_ip, containers, extra_conditions=(), qos="Burstable"):
    conds = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": CREATED}
             for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
    conds += [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": CREATED}
              for t in extra_conditions]
    return {"phase": "Running", "hostIP": "", "podIP": pod_ip, "podIPs": [{"ip": pod_ip}], "startTime": CREATED,
            "qosClass": qos, "conditions": conds,
            "containerStatuses": [{"name": c["name"], "ready": True, "started": True, "restartCount": 0,
                                   "image": c.get("image", ""), "imageID": "", "containerID": "cri-o://" +
                                   hashlib.sha1((node_name + c["name"] + pod_ip).encode()).hexdigest(),
                                   "state": {"running": {"startedAt": CREATED}}} for c in containers]}


def vmi(name, ns, node_name, guest="1Gi", cpus=1, migratable=True, strategy=None, labels=None, vm_owned=True,
        ip=None, pvc=None):
    """A Running VirtualMachineInstance; `pvc` adds a ReadWriteOnce disk (not live-migratable)."""
    uid = uid_for("vmi", ns, name)
    md = {"name": name, "namespace": ns, "uid": uid, "creationTimestamp": CREATED, "generation": 1,
          "labels": {"kubevirt.io/nodeName": node_name, "vm.kubevirt.io/name": name},
          "annotations": {"kubevirt.io/latest-observed-api-version": "v1",
                          "kubevirt.io/storage-observed-api-version": "v1", "kubevirt.io/vm-generation": "1"}}
    md["labels"].update(labels or {})
    if vm_owned:
        md["ownerReferences"] = [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name,
                                  "uid": uid_for("vm", ns, name), "controller": True, "blockOwnerDeletion": True}]
    disks = [{"name": "rootdisk", "disk": {"bus": "virtio"}}, {"name": "cloudinitdisk", "disk": {"bus": "virtio"}}]
    if pvc:
        volumes = [{"name": "rootdisk", "persistentVolumeClaim": {"claimName": pvc}}]
    else:
        volumes = [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:40"}}]
    volumes.append({"name": "cloudinitdisk", "cloudInitNoCloud": {"userData": "#cloud-config\n"}})
    spec = {"domain": {"cpu": {"cores": cpus, "sockets": 1, "threads": 1, "model": "host-model"},
                       "memory": {"guest": guest}, "resources": {"requests": {"memory": guest}},
                       "devices": {"disks": disks, "interfaces": [{"name": "default", "masquerade": {}}]},
                       "machine": {"type": "q35"}, "firmware": {"uuid": uid_for("fw", ns, name)}},
            "networks": [{"name": "default", "pod": {}}], "volumes": volumes,
            "terminationGracePeriodSeconds": 180}
    if strategy:
        spec["evictionStrategy"] = strategy
    ip = ip or "10.244.%d.%d" % (len(name) % 200, int(hashlib.sha1(name.encode()).hexdigest(), 16) % 250 + 2)
    lm = {"type": "LiveMigratable", "status": "True", "lastProbeTime": None, "lastTransitionTime": None}
    if not migratable:
        lm = {"type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable",
              "message": "cannot migrate VMI: PVC %s is not shared, live migration requires that all PVCs must be "
                         "shared (using ReadWriteMany access mode)" % (pvc or "rootdisk"),
              "lastProbeTime": None, "lastTransitionTime": None}
    status = {"phase": "Running", "nodeName": node_name, "qosClass": "Burstable",
              "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                              "lastTransitionTime": CREATED}, lm,
                             {"type": "StorageLiveMigratable", "status": "True" if migratable else "False",
                              "lastProbeTime": None, "lastTransitionTime": None}],
              "interfaces": [{"name": "default", "ipAddress": ip, "ipAddresses": [ip],
                              "mac": "02:00:00:%02x:%02x:%02x" % tuple(hashlib.sha1(name.encode()).digest()[:3]),
                              "interfaceName": "eth0", "infoSource": "domain, guest-agent"}],
              "migrationMethod": "BlockMigration" if not pvc else "LiveMigration",
              "migrationTransport": "Unix", "launcherContainerImageVersion": "quay.io/kubevirt/virt-launcher:v1.6.0",
              "currentCPUTopology": {"cores": cpus, "sockets": 1, "threads": 1},
              "guestOSInfo": {"id": "fedora", "name": "Fedora Linux", "version": "40"},
              "virtualMachineRevisionName": "revision-start-vm-%s-1" % uid_for("vm", ns, name),
              "volumeStatus": [{"name": v["name"], "target": "vd" + "ab"[i]} for i, v in enumerate(volumes)]}
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": md, "spec": spec,
            "status": status}


def virtual_machine(v):
    """The VirtualMachine owning VMI `v` (runStrategy Always)."""
    md = v["metadata"]
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": md["name"], "namespace": md["namespace"], "uid": uid_for("vm", md["namespace"],
                                                                                              md["name"]),
                         "creationTimestamp": CREATED, "generation": 1,
                         "annotations": {"kubevirt.io/latest-observed-api-version": "v1",
                                         "kubevirt.io/storage-observed-api-version": "v1"}},
            "spec": {"runStrategy": "Always",
                     "template": {"metadata": {"labels": {"kubevirt.io/domain": md["name"]}},
                                  "spec": {k: val for k, val in v["spec"].items()}}},
            "status": {"created": True, "ready": True, "printableStatus": "Running",
                       "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                                       "lastTransitionTime": CREATED}],
                       "desiredGeneration": 1, "observedGeneration": 1}}


def launcher_pod(v, extra_annotations=None):
    """The virt-launcher pod of VMI `v`, Running and Ready on the VMI's node."""
    vmd, vspec = v["metadata"], v["spec"]
    name, ns, node_name = vmd["name"], vmd["namespace"], v["status"]["nodeName"]
    cpus = vspec["domain"]["cpu"]["cores"] * vspec["domain"]["cpu"].get("sockets", 1)
    guest_mi = parse_mi(vspec["domain"]["memory"]["guest"])
    mem_mi = guest_mi + memory_overhead_mi(guest_mi, cpus)
    pod_name = "virt-launcher-%s-%s" % (name, suffix_for("pod", ns, name, node_name))
    labels = dict(vmd.get("labels") or {})
    labels.update({"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": vmd["uid"],
                   "vm.kubevirt.io/name": name.split(".")[0][:63], "vmi.kubevirt.io/id": name,
                   "kubevirt.io/nodeName": node_name})
    freeze = ["/usr/bin/virt-freezer", "--%s", "--name", name, "--namespace", ns]
    ann = {"kubevirt.io/domain": name, "kubectl.kubernetes.io/default-container": "compute",
           "kubevirt.io/migrationTransportUnix": "true",
           "descheduler.alpha.kubernetes.io/request-evict-only": "",
           "pre.hook.backup.velero.io/container": "compute",
           "pre.hook.backup.velero.io/command": json.dumps([a.replace("%s", "freeze") for a in freeze]),
           "pre.hook.backup.velero.io/timeout": "60s",
           "post.hook.backup.velero.io/container": "compute",
           "post.hook.backup.velero.io/command": json.dumps([a.replace("%s", "unfreeze") for a in freeze])}
    for k, val in (vmd.get("annotations") or {}).items():
        if not (k.startswith("kubectl.kubernetes.io") or k in ("kubevirt.io/storage-observed-api-version",
                                                               "kubevirt.io/latest-observed-api-version")):
            ann.setdefault(k, val)
    ann.update(extra_annotations or {})
    mounts = [{"name": "private", "mountPath": "/var/run/kubevirt-private"},
              {"name": "public", "mountPath": "/var/run/kubevirt"},
              {"name": "sockets", "mountPath": "/var/run/kubevirt/sockets"},
              {"name": "virt-bin-share-dir", "mountPath": "/var/run/kubevirt/init"},
              {"name": "libvirt-runtime", "mountPath": "/var/run/libvirt"},
              {"name": "ephemeral-disks", "mountPath": "/var/run/kubevirt-ephemeral-disks"},
              {"name": "container-disks", "mountPath": "/var/run/kubevirt/container-disks",
               "mountPropagation": "HostToContainer"},
              {"name": "hotplug-disks", "mountPath": "/var/run/kubevirt/hotplug-disks",
               "mountPropagation": "HostToContainer"}]
    volumes = [{"name": m["name"], "emptyDir": {}} for m in mounts]
    for vol in vspec.get("volumes") or []:
        if "persistentVolumeClaim" in vol:
            volumes.append({"name": vol["name"], "persistentVolumeClaim":
                            {"claimName": vol["persistentVolumeClaim"]["claimName"]}})
    containers = [{"name": "compute", "image": "quay.io/kubevirt/virt-launcher:v1.6.0",
                   "command": ["/usr/bin/virt-launcher-monitor", "--qemu-timeout", "262s", "--name", name,
                               "--uid", vmd["uid"], "--namespace", ns, "--kubevirt-share-dir", "/var/run/kubevirt",
                               "--ephemeral-disk-dir", "/var/run/kubevirt-ephemeral-disks",
                               "--container-disk-dir", "/var/run/kubevirt/container-disks",
                               "--grace-period-seconds", "195", "--hook-sidecars", "0"],
                   "resources": {"requests": {"cpu": "%dm" % (100 * cpus), "memory": "%dMi" % mem_mi,
                                              "ephemeral-storage": "50M",
                                              "devices.kubevirt.io/kvm": "1", "devices.kubevirt.io/tun": "1",
                                              "devices.kubevirt.io/vhost-net": "1"},
                                 "limits": {"devices.kubevirt.io/kvm": "1", "devices.kubevirt.io/tun": "1",
                                            "devices.kubevirt.io/vhost-net": "1"}},
                   "volumeMounts": mounts,
                   "securityContext": {"runAsUser": 107, "runAsGroup": 107, "runAsNonRoot": True,
                                       "allowPrivilegeEscalation": False,
                                       "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}}}]
    pod_ip = v["status"]["interfaces"][0]["ipAddress"] if v["status"].get("interfaces") else "10.244.0.9"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod_name, "generateName": "virt-launcher-%s-" % name, "namespace": ns,
                         "uid": uid_for("pod", ns, pod_name), "creationTimestamp": CREATED,
                         "labels": labels, "annotations": ann,
                         "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                                              "name": name, "uid": vmd["uid"], "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": {"containers": containers, "volumes": volumes, "nodeName": node_name,
                     "nodeSelector": {"kubevirt.io/schedulable": "true", "cpumanager": "false"},
                     "restartPolicy": "Never", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
                     "terminationGracePeriodSeconds": 210, "hostname": name.split(".")[0][:63],
                     "automountServiceAccountToken": False, "enableServiceLinks": False,
                     "serviceAccountName": "default", "priority": 0, "preemptionPolicy": "PreemptLowerPriority",
                     "securityContext": {"runAsUser": 107, "runAsGroup": 107, "fsGroup": 107,
                                         "runAsNonRoot": True, "seLinuxOptions": {"type": "virt_launcher.process"}},
                     "readinessGates": [{"conditionType": "kubevirt.io/virtual-machine-unpaused"}],
                     "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                      "effect": "NoExecute", "tolerationSeconds": 300},
                                     {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                      "effect": "NoExecute", "tolerationSeconds": 300}]},
            "status": _running_pod_status(node_name, pod_ip, containers, ("kubevirt.io/virtual-machine-unpaused",))}


def kubevirt_cr(strategy="LiveMigrate", per_cluster=5, per_node=2):
    cfg = {"developerConfiguration": {"featureGates": []},
           "migrations": {"parallelMigrationsPerCluster": per_cluster,
                          "parallelOutboundMigrationsPerNode": per_node,
                          "completionTimeoutPerGiB": 150, "progressTimeout": 150}}
    if strategy:
        cfg["evictionStrategy"] = strategy
    return {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt", "uid": uid_for("kv", "kubevirt"),
                         "creationTimestamp": CREATED, "generation": 1,
                         "finalizers": ["foregroundDeleteKubeVirt"]},
            "spec": {"certificateRotateStrategy": {}, "configuration": cfg, "customizeComponents": {},
                     "imagePullPolicy": "IfNotPresent", "workloadUpdateStrategy": {}},
            "status": {"phase": "Deployed", "observedKubeVirtVersion": "v1.6.0", "targetKubeVirtVersion": "v1.6.0",
                       "conditions": [{"type": "Available", "status": "True", "reason": "AllComponentsReady",
                                       "message": "All components are ready."}]}}


def hyperconverged(strategy="LiveMigrate"):
    return {"apiVersion": "hco.kubevirt.io/v1beta1", "kind": "HyperConverged",
            "metadata": {"name": "kubevirt-hyperconverged", "namespace": "kubevirt",
                         "uid": uid_for("hco", "kubevirt"), "creationTimestamp": CREATED, "generation": 1},
            "spec": {"evictionStrategy": strategy,
                     "liveMigrationConfig": {"parallelMigrationsPerCluster": 5, "parallelOutboundMigrationsPerNode": 2,
                                             "completionTimeoutPerGiB": 150, "progressTimeout": 150}},
            "status": {"infrastructureHighlyAvailable": True,
                       "conditions": [{"type": "Available", "status": "True", "reason": "ReconcileCompleted",
                                       "message": "Reconcile completed successfully"}]}}


def workload_pod(name, ns, node_name, labels, owner=None, cpu="250m", memory="256Mi", ip="10.244.9.9",
                 priority_class=None, priority=0):
    containers = [{"name": "app", "image": "registry.k8s.io/e2e-test-images/agnhost:2.47",
                   "args": ["netexec", "--http-port=8080"], "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                   "resources": {"requests": {"cpu": cpu, "memory": memory},
                                 "limits": {"memory": memory}}}]
    md = {"name": name, "namespace": ns, "uid": uid_for("pod", ns, name), "creationTimestamp": CREATED,
          "labels": dict(labels)}
    if owner:
        md["ownerReferences"] = [dict(owner, controller=True, blockOwnerDeletion=True)]
    spec = {"containers": containers, "nodeName": node_name, "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30,
            "serviceAccountName": "default", "priority": priority,
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec,
            "status": _running_pod_status(node_name, ip, containers)}


def deployment_with_pods(name, ns, nodes, replicas, pdb_min_available=None, cpu="250m", memory="256Mi"):
    """A Deployment, its ReplicaSet, `replicas` pods spread over `nodes`, and optionally a PDB."""
    labels = {"app": name}
    rs_hash = suffix_for("rs", ns, name, n=10)
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": name, "namespace": ns, "uid": uid_for("deploy", ns, name),
                        "creationTimestamp": CREATED, "generation": 1, "labels": labels,
                        "annotations": {"deployment.kubernetes.io/revision": "1"}},
           "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                    "template": {"metadata": {"labels": labels},
                                 "spec": {"containers": [{"name": "app",
                                                          "image": "registry.k8s.io/e2e-test-images/agnhost:2.47",
                                                          "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}},
                    "strategy": {"type": "RollingUpdate",
                                 "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}},
           "status": {"observedGeneration": 1, "replicas": replicas, "readyReplicas": replicas,
                      "availableReplicas": replicas, "updatedReplicas": replicas}}
    rs_name = "%s-%s" % (name, rs_hash)
    rs_labels = dict(labels, **{"pod-template-hash": rs_hash})
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": rs_name, "namespace": ns, "uid": uid_for("rs", ns, rs_name),
                       "creationTimestamp": CREATED, "generation": 1, "labels": rs_labels,
                       "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                                            "uid": dep["metadata"]["uid"], "controller": True,
                                            "blockOwnerDeletion": True}]},
          "spec": {"replicas": replicas, "selector": {"matchLabels": rs_labels},
                   "template": {"metadata": {"labels": rs_labels}, "spec": dep["spec"]["template"]["spec"]}},
          "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                     "fullyLabeledReplicas": replicas, "observedGeneration": 1}}
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name, "uid": rs["metadata"]["uid"]}
    pods = [workload_pod("%s-%s" % (rs_name, suffix_for("p", ns, name, str(i))), ns, nodes[i % len(nodes)],
                         rs_labels, owner, cpu, memory, ip="10.244.%d.%d" % (i + 20, i + 10))
            for i in range(replicas)]
    out = [dep, rs] + pods
    if pdb_min_available is not None:
        out.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                    "metadata": {"name": name + "-pdb", "namespace": ns, "uid": uid_for("pdb", ns, name),
                                 "creationTimestamp": CREATED, "generation": 1},
                    "spec": {"minAvailable": pdb_min_available, "selector": {"matchLabels": labels}}})
    return out


def priority_class(name, value, global_default=False, description=""):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name, "uid": uid_for("pc", name), "creationTimestamp": CREATED},
            "value": value, "globalDefault": global_default, "preemptionPolicy": "PreemptLowerPriority",
            "description": description}


def pvc(name, ns, size="20Gi", mode="ReadWriteOnce"):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "uid": uid_for("pvc", ns, name),
                         "creationTimestamp": CREATED},
            "spec": {"accessModes": [mode], "resources": {"requests": {"storage": size}},
                     "storageClassName": "local-path", "volumeMode": "Filesystem",
                     "volumeName": "pvc-" + uid_for("pv", ns, name)},
            "status": {"phase": "Bound", "accessModes": [mode], "capacity": {"storage": size}}}


def vm_with_launcher(name, ns, node_name, **kw):
    v = vmi(name, ns, node_name, **kw)
    return [virtual_machine(v), v, launcher_pod(v)]


def cluster_list(items):
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def example_cluster():
    """The checked-in example: a control-plane node, three workers, VMs in every eviction situation."""
    items = [namespace(n) for n in ("default", "kube-system", "kubevirt", "vms", "shop")]
    items.append(node("cp-0", cpu="4", memory="16Gi", worker=False,
                      taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]))
    items += [node("worker-%d" % i) for i in (1, 2, 3)]
    items.append(priority_class("workload-high", 100000, description="business-critical workloads"))
    items.append(kubevirt_cr("LiveMigrate", 5, 2))
    items.append(hyperconverged("LiveMigrate"))
    # live-migratable VMs (cluster strategy LiveMigrate); worker-1 is the busy one
    items += vm_with_launcher("vm-a", "vms", "worker-1", guest="2Gi", cpus=2)
    items += vm_with_launcher("vm-b", "vms", "worker-1", guest="1Gi")
    items += vm_with_launcher("vm-c", "vms", "worker-1", guest="512Mi")
    items += vm_with_launcher("vm-d", "vms", "worker-2", guest="1Gi")
    # not live-migratable: RWO PVC disk; the webhook refuses its eviction under LiveMigrate
    items.append(pvc("vm-rwo-disk", "vms"))
    items += vm_with_launcher("vm-rwo", "vms", "worker-2", guest="1Gi", migratable=False, pvc="vm-rwo-disk")
    # VM-level strategy None: eviction is allowed and the launcher is deleted
    items += vm_with_launcher("vm-none", "vms", "worker-3", guest="512Mi", strategy="None")
    # LiveMigrateIfPossible but not migratable: eviction allowed
    items.append(pvc("vm-maybe-disk", "vms"))
    items += vm_with_launcher("vm-maybe", "vms", "worker-3", guest="512Mi", migratable=False,
                              strategy="LiveMigrateIfPossible", pvc="vm-maybe-disk")
    # ordinary workload protected by a PDB that allows no disruption, and one that allows one
    items += deployment_with_pods("web", "shop", ["worker-1", "worker-2", "worker-3"], 3, pdb_min_available=3)
    items += deployment_with_pods("api", "shop", ["worker-1", "worker-2"], 2, pdb_min_available=1)
    items.append(workload_pod("coredns-6f6b679f8f-x2vzb", "kube-system", "cp-0", {"k8s-app": "kube-dns"},
                              cpu="100m", memory="70Mi", ip="10.244.0.3",
                              priority_class="system-cluster-critical", priority=2000000000))
    items.append({"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "shop-config", "namespace": "shop", "uid": uid_for("cm", "shop", "cfg"),
                               "creationTimestamp": CREATED},
                  "data": {"mode": "production"}})
    return cluster_list(items)


if __name__ == "__main__":
    json.dump(example_cluster(), sys.stdout, indent=1)
    sys.stdout.write("\n")
