#!/usr/bin/env python3
"""Prints a JSON document as block-style YAML, the shape `kubectl get -o yaml` gives
(standard library only: the tests may not assume PyYAML). Strings are always quoted so
YAML reads them back as strings."""
import json
import sys


def scalar(v):
    return json.dumps(v)


def emit(v, ind, out):
    pad = "  " * ind
    if isinstance(v, dict):
        for k, x in v.items():
            key = json.dumps(k)
            if isinstance(x, (dict, list)) and x:
                out.append("%s%s:" % (pad, key))
                emit(x, ind + 1, out)
            else:
                out.append("%s%s: %s" % (pad, key, "{}" if x == {} else "[]" if x == [] else scalar(x)))
    else:
        for x in v:
            if isinstance(x, (dict, list)) and x:
                start = len(out)
                emit(x, ind + 1, out)
                out[start] = pad + "- " + out[start][len(pad) + 2:]
            else:
                out.append("%s- %s" % (pad, "{}" if x == {} else "[]" if x == [] else scalar(x)))


lines = []
emit(json.load(open(sys.argv[1])), 0, lines)
print("\n".join(lines))
