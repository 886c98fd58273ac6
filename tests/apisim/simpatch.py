"""The three PATCH flavours kube-apiserver accepts, applied to plain dicts.

- JSON merge patch (RFC 7386, `application/merge-patch+json`): `kubectl label`,
  `kubectl annotate`, `kubectl patch --type merge`.
- JSON patch (RFC 6902, `application/json-patch+json`): KubeVirt's eviction
  webhook marks a VMI this way, and clients use `test` for optimistic updates.
  Behaves like evanphx/json-patch v4 as the apiserver vendors it: `replace` of
  a missing map key adds it; `remove` of a missing key fails.
- Strategic merge patch (`application/strategic-merge-patch+json`), built-in
  kinds only (custom resources get 415 like a real server): what `kubectl
  apply` and `kubectl patch` send.  The real algorithm reads per-field merge
  keys from Go struct tags; here a table lists the list fields the project's
  objects use (containers by name, tolerations atomic, conditions by type,
  ...).  Directives `$patch`, `$retainKeys`, `$setElementOrder/...` and
  `$deleteFromPrimitiveList/...` are honoured.

Every function works on copies: the caller's objects are never mutated.
"""

import copy


class PatchError(Exception):
    """A patch that cannot be applied (apiserver answers 422 or 400)."""


# ---------------------------------------------------------------------------
# RFC 7386

def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


# ---------------------------------------------------------------------------
# RFC 6902

def _unescape(tok):
    return tok.replace("~1", "/").replace("~0", "~")


def _split(path):
    if path == "":
        return []
    if not isinstance(path, str) or not path.startswith("/"):
        raise PatchError("invalid JSON pointer %r" % (path,))
    return [_unescape(t) for t in path[1:].split("/")]


def _index(container, tok, for_add=False):
    if tok == "-" and for_add:
        return len(container)
    try:
        i = int(tok)
    except ValueError:
        raise PatchError("invalid array index %r" % tok) from None
    limit = len(container) if for_add else len(container) - 1
    if i < 0 or i > limit:
        raise PatchError("array index %d out of bounds" % i)
    return i


def _parent(doc, toks, op):
    cur = doc
    for t in toks[:-1]:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError("%s operation does not apply: doc is missing path: %s" % (op, "/" + "/".join(toks)))
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(cur, t)]
        else:
            raise PatchError("%s operation does not apply: doc is missing path: %s" % (op, "/" + "/".join(toks)))
    return cur


def _get(doc, toks):
    cur = doc
    for t in toks:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError("doc is missing key: %s" % t)
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(cur, t)]
        else:
            raise PatchError("doc is missing path")
    return cur


def _add(doc, toks, value, op="add"):
    if not toks:
        return value
    parent = _parent(doc, toks, op)
    last = toks[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, for_add=True), value)
    else:
        raise PatchError("%s operation does not apply: parent is not a container" % op)
    return doc


def _remove(doc, toks):
    if not toks:
        raise PatchError("remove of the whole document is not allowed")
    parent = _parent(doc, toks, "remove")
    last = toks[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError("Unable to remove nonexistent key: %s: missing value" % last)
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last))
    raise PatchError("remove operation does not apply")


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise PatchError("json patch must be an array of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op:
            raise PatchError("invalid operation %r" % (op,))
        kind = op["op"]
        toks = _split(op.get("path", ""))
        if kind == "add":
            if "value" not in op:
                raise PatchError("add operation requires a value")
            doc = _add(doc, toks, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, toks)
        elif kind == "replace":
            if "value" not in op:
                raise PatchError("replace operation requires a value")
            if not toks:
                doc = copy.deepcopy(op["value"])
                continue
            parent = _parent(doc, toks, "replace")
            if isinstance(parent, list):
                parent[_index(parent, toks[-1])] = copy.deepcopy(op["value"])
            elif isinstance(parent, dict):
                parent[toks[-1]] = copy.deepcopy(op["value"])  # v4 semantics: missing key is added
            else:
                raise PatchError("replace operation does not apply")
        elif kind == "move":
            val = _remove(doc, _split(op.get("from", "")))
            doc = _add(doc, toks, val, "move")
        elif kind == "copy":
            val = copy.deepcopy(_get(doc, _split(op.get("from", ""))))
            doc = _add(doc, toks, val, "copy")
        elif kind == "test":
            try:
                cur = _get(doc, toks)
            except PatchError:
                cur = None
            if cur != op.get("value"):
                raise PatchError("testing value %s failed: test failed" % op.get("path"))
        else:
            raise PatchError("Unexpected kind: %s" % kind)
    return doc


# ---------------------------------------------------------------------------
# Strategic merge patch

# list field name -> merge key ("" = merge as a set of primitives); absent = atomic replace
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "env": "name", "ports": ("containerPort", "port"), "volumes": "name", "volumeMounts": "mountPath",
    "volumeDevices": "devicePath", "conditions": "type", "ownerReferences": "uid",
    "imagePullSecrets": "name", "hostAliases": "ip", "topologySpreadConstraints": "topologyKey",
    "containerStatuses": "name", "initContainerStatuses": "name", "resourceClaims": "name",
    "finalizers": "", "addresses": "type", "taints": "key", "podIPs": "ip", "readinessGates": None,
}
# fields whose map is replaced by `$retainKeys` semantics are handled generically


def strategic_merge_patch(original, patch):
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object")
    return _smp_map(copy.deepcopy(original) if isinstance(original, dict) else {}, patch)


def _smp_map(orig, patch):
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys") or k.startswith("$setElementOrder/"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(orig.get(field), list) and isinstance(v, list):
                orig[field] = [e for e in orig[field] if e not in v]
            continue
        if v is None:
            orig.pop(k, None)
        elif isinstance(v, dict):
            cur = orig.get(k)
            merged = _smp_map(cur if isinstance(cur, dict) else {}, v)
            if merged is None:
                orig.pop(k, None)
            else:
                orig[k] = merged
        elif isinstance(v, list):
            orig[k] = _smp_list(k, orig.get(k), v)
        else:
            orig[k] = copy.deepcopy(v)
    if isinstance(retain, list):
        for k in list(orig):
            if k not in retain:
                del orig[k]
    return orig


def _smp_list(field, orig, patch):
    key = MERGE_KEYS.get(field, None)
    if isinstance(key, tuple):  # one field name, several kinds: a container's ports, a Service's ports
        elems = [e for e in list(patch) + list(orig or []) if isinstance(e, dict)]
        key = next((k for k in key if any(k in e for e in elems)), key[0])
    if field not in MERGE_KEYS or key is None:
        return [copy.deepcopy(e) for e in patch if not (isinstance(e, dict) and e.get("$patch"))]
    orig = list(orig) if isinstance(orig, list) else []
    if key == "":
        out = list(orig)
        for e in patch:
            if e not in out:
                out.append(copy.deepcopy(e))
        return out
    if any(isinstance(e, dict) and e.get("$patch") == "replace" for e in patch):
        return [copy.deepcopy(e) for e in patch if not (isinstance(e, dict) and "$patch" in e)]
    out = [copy.deepcopy(e) for e in orig]
    for e in patch:
        if not isinstance(e, dict):
            raise PatchError("list %s with merge key %s must hold objects" % (field, key))
        if key not in e:
            raise PatchError("map: %r does not contain declared merge key: %s" % (e, key))
        idx = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == e[key]), None)
        if e.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(_smp_map({}, e))
        else:
            out[idx] = _smp_map(out[idx], e)
    return out
