#!/usr/bin/env python3
"""Writes the cluster of tests/cli/t0210-live-vm-safety.sh (a v1 List on stdout).

Built with the API simulator's own fixtures (tests/apisim/simfixtures.py), so the VMIs and
launcher pods have KubeVirt's shape. The KubeVirt CR's default is LiveMigrate with KubeVirt's
default limits (5 per cluster, 2 outbound per node). Worker w-hot carries eight VMs of 4Gi:
  vm-a-legacy  its VMI recorded evictionStrategy None when it was created (the runbook's trap)
  vm-a-rwo     a ReadWriteOnce disk: LiveMigratable=False
  vm-b .. vm-g six live-migratable VMs
Workers w-cold-1 and w-cold-2 are empty but for one small VM each."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apisim"))
import simfixtures as f  # noqa: E402

items = [f.namespace(n) for n in ("default", "kubevirt", "vms")]
items += [f.node(n) for n in ("w-hot", "w-cold-1", "w-cold-2")]
items.append(f.kubevirt_cr("LiveMigrate", 5, 2))
items += f.vm_with_launcher("vm-a-legacy", "vms", "w-hot", guest="4Gi", strategy="None")
items.append(f.pvc("vm-a-rwo-disk", "vms"))
items += f.vm_with_launcher("vm-a-rwo", "vms", "w-hot", guest="4Gi", migratable=False, pvc="vm-a-rwo-disk")
for name in ("vm-b", "vm-c", "vm-d", "vm-e", "vm-f", "vm-g"):
    items += f.vm_with_launcher(name, "vms", "w-hot", guest="4Gi")
items += f.vm_with_launcher("vm-small-1", "vms", "w-cold-1", guest="512Mi")
items += f.vm_with_launcher("vm-small-2", "vms", "w-cold-2", guest="512Mi")
json.dump(f.cluster_list(items), sys.stdout, indent=1)
sys.stdout.write("\n")
