#!/usr/bin/env bash
# Writes pods.pb, the protobuf page kube-apiserver sends for the PodList in pods.json (its
# serializer, through tests/apisim/pbenc --list: k8s.io/api and k8s.io/apimachinery v0.37.2).
# pods.json holds pods with every field the Pod schema (src/decode/pbschema.c) names, and
# corner cases: zero values, pointers set to zero, empty messages, a negative exit code, a
# time before 2000, a pod being deleted. tests/unit/test_doc_pb.c reads both pages and
# compares them. Run it after editing pods.json; it needs Go (tests/apisim/pbenc/build.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pbenc=$("$here/../../../apisim/pbenc/build.sh" --print)
"$pbenc" --list <"$here/pods.json" >"$here/pods.pb.tmp"
mv "$here/pods.pb.tmp" "$here/pods.pb"
echo "wrote $here/pods.pb ($(wc -c <"$here/pods.pb") bytes)"
