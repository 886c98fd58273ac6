#!/usr/bin/env bash
# Writes pods.pb and nodes.pb, the protobuf pages kube-apiserver sends for the PodList in
# pods.json and the NodeList in nodes.json (its serializer, through tests/apisim/pbenc --list:
# k8s.io/api and k8s.io/apimachinery v0.37.2). The JSON pages hold objects with every field the
# Pod and Node schemas (src/decode/pbschema.c) name, and corner cases: zero values, pointers set
# to zero, empty messages, a negative exit code, a time before 2000, a pod being deleted, a
# node with nothing but its name. tests/unit/test_doc_pb.c reads both pages of each and
# compares them. Run it after editing a JSON page; it needs Go (tests/apisim/pbenc/build.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pbenc=$("$here/../../../apisim/pbenc/build.sh" --print)
for kind in pods nodes; do
  "$pbenc" --list <"$here/$kind.json" >"$here/$kind.pb.tmp"
  mv "$here/$kind.pb.tmp" "$here/$kind.pb"
  echo "wrote $here/$kind.pb ($(wc -c <"$here/$kind.pb") bytes)"
done
