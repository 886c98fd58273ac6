"""The simulator's etcd: every object, one resourceVersion counter, a watch log.

Objects are kept as compact JSON bytes (`Entry.raw`), not as Python dicts: a
150,000-pod list then costs a few hundred MB instead of gigabytes, and a list
page is a `b",".join()` of stored bytes.  What selectors, paging, PDBs and the
scheduler need (labels, field-selector values, requests, readiness) is
extracted once per write into the entry.  Entries are immutable: a write
replaces the entry, so readers can release the lock and keep serialising
what they took.

Order and paging follow etcd: keys are `namespace/name` (or `name`), sorted
bytewise, a page is a slice after the continue key, and the continue token
carries the list's resourceVersion.  A token whose resourceVersion has been
compacted out of the watch window answers 410 Expired, as after etcd
compaction.

Watches read a bounded event log (`window` events).  A watch from a version
older than the log start gets an ERROR event with a 410 Status (what the
watch cache sends); a slow watcher that falls behind the window gets the
same.  All state sits behind one re-entrant lock; `cond` wakes watchers and
the controller thread on every write.
"""

import base64
import bisect
import collections
import json
import re
import sys
import threading
import uuid

from simutil import (ApiError, already_exists, bad_request, bytes_of, dumps, expired, invalid, loads,
                     milli, modified_conflict, not_found, rfc3339, generate_suffix, valid_name, qualified)
from simpatch import PatchError, json_patch, merge_patch, strategic_merge_patch

intern = sys.intern


# ---------------------------------------------------------------------------
# Entries

PodInfo = collections.namedtuple("PodInfo", "ready deleting cpu_m mem_b owners")
NodeInfo = collections.namedtuple("NodeInfo", "cpu_m mem_b pods taints unschedulable ready")
EMPTY = {}


class Entry:
    # an entry is one version of an object, never changed once made; "kv" is left unset for
    # KubeVirtSim to cache what it reads of a launcher's bytes (simkubevirt.launcher_flags),
    # "pb" for a pod's protobuf bytes (simprotobuf.PodEncoder, with --protobuf-encoder)
    __slots__ = ("raw", "uid", "ns", "name", "labels", "fields", "info", "rv", "kv", "pb")

    def obj(self):
        return loads(self.raw)


class Bucket:
    """All objects of one storage resource, with a sorted key list for paging."""

    def __init__(self, storage):
        self.storage = storage
        self.entries = {}
        self.keys = []           # sorted
        self.by_node = {}        # pods: nodeName -> set(keys)
        self.by_owner = {}       # owner uid -> set(keys), for garbage collection and launcher lookup

    def insert(self, key, entry, prev):
        if prev is None:
            bisect.insort(self.keys, key)
        else:
            self._unindex(key, prev)
        self.entries[key] = entry
        self._index(key, entry)

    def delete(self, key):
        prev = self.entries.pop(key)
        i = bisect.bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            del self.keys[i]
        self._unindex(key, prev)
        return prev

    def _index(self, key, e):
        node = e.fields.get("spec.nodeName") if e.fields else None
        if node is not None:
            self.by_node.setdefault(node, set()).add(key)
        if isinstance(e.info, PodInfo):
            for o in e.info.owners:
                self.by_owner.setdefault(o, set()).add(key)

    def _unindex(self, key, e):
        node = e.fields.get("spec.nodeName") if e.fields else None
        if node is not None:
            s = self.by_node.get(node)
            if s:
                s.discard(key)
                if not s:
                    del self.by_node[node]
        if isinstance(e.info, PodInfo):
            for o in e.info.owners:
                s = self.by_owner.get(o)
                if s:
                    s.discard(key)
                    if not s:
                        del self.by_owner[o]

    def ns_range(self, ns):
        """Index range of keys in namespace `ns` (keys are `ns/name`)."""
        lo = bisect.bisect_left(self.keys, ns + "/")
        hi = bisect.bisect_left(self.keys, ns + "0")  # '0' sorts right after '/'
        return lo, hi


_PATHS = {}


def _field_value(obj, path):
    if path == "source":
        return ((obj.get("source") or {}).get("component")) or ""
    cur = obj
    steps = _PATHS.get(path)
    if steps is None:
        steps = _PATHS[path] = tuple(path.split("."))
    for p in steps:
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p)
    if cur is None:
        return "false" if path in ("spec.unschedulable", "spec.hostNetwork") else ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def pod_requests(spec):
    """Effective cpu (millicores) and memory (bytes) requests of a pod spec."""
    def reqs(c):
        r = (c.get("resources") or {})
        req = r.get("requests") or {}
        lim = r.get("limits") or {}
        cpu = req.get("cpu", lim.get("cpu"))
        mem = req.get("memory", lim.get("memory"))
        return (milli(cpu) if cpu is not None else 0, bytes_of(mem) if mem is not None else 0)
    cpu = mem = 0
    for c in spec.get("containers") or []:
        if isinstance(c, dict):
            a, b = reqs(c)
            cpu += a
            mem += b
    for c in spec.get("initContainers") or []:
        if isinstance(c, dict):
            a, b = reqs(c)
            cpu, mem = max(cpu, a), max(mem, b)
    ov = spec.get("overhead") or {}
    cpu += milli(ov.get("cpu", 0))
    mem += bytes_of(ov.get("memory", 0))
    return cpu, mem


def pod_ready(obj):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def _info(storage, obj):
    if storage == "pods":
        spec = obj.get("spec") or {}
        cpu, mem = pod_requests(spec)
        owners = tuple(intern(o["uid"]) for o in (obj["metadata"].get("ownerReferences") or [])
                       if isinstance(o, dict) and o.get("uid"))
        return PodInfo(pod_ready(obj), bool(obj["metadata"].get("deletionTimestamp")), cpu, mem, owners)
    if storage == "nodes":
        st = obj.get("status") or {}
        alloc = st.get("allocatable") or st.get("capacity") or {}
        ready = any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
                    for c in st.get("conditions") or [])
        spec = obj.get("spec") or {}
        return NodeInfo(milli(alloc.get("cpu", 0)), bytes_of(alloc.get("memory", 0)),
                        int(bytes_of(alloc.get("pods", 110))), tuple(spec.get("taints") or ()),
                        bool(spec.get("unschedulable")), ready)
    return None


# ---------------------------------------------------------------------------
# Selectors

_LABEL_KEY = r"(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_LABEL_VAL = r"(?:[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_KEY_RE = re.compile("^" + _LABEL_KEY + "$")
_VAL_RE = re.compile("^" + _LABEL_VAL + "$")


def _split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def parse_label_selector(text):
    """`a=b,c!=d,e in (x,y),!f,g` -> [(key, op, values)]; ApiError 400 on bad syntax."""
    reqs = []
    if text is None or not text.strip():
        return reqs
    for part in _split_top(text):
        p = part.strip()
        if not p:
            raise bad_request("unable to parse requirement: found '', expected: identifier")
        m = re.match(r"^(\S+)\s+(in|notin)\s*\((.*)\)$", p)
        if m:
            key, op, vals = m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",")]
        elif p.startswith("!"):
            key, op, vals = p[1:].strip(), "!", []
        else:
            m = re.match(r"^([^=!<>\s]+)\s*(==|=|!=|<|>)\s*(.*)$", p)
            if m:
                key, op, vals = m.group(1), m.group(2), [m.group(3).strip()]
                op = "=" if op == "==" else op
            elif re.match(r"^\S+$", p):
                key, op, vals = p, "exists", []
            else:
                raise bad_request("unable to parse requirement: %s" % p)
        if not _KEY_RE.match(key) or len(key.split("/")[-1]) > 63:
            raise bad_request('unable to parse requirement: invalid label key "%s": name part must consist of '
                              "alphanumeric characters, '-', '_' or '.'" % key)
        for v in vals:
            if op in ("<", ">"):
                try:
                    int(v)
                except ValueError:
                    raise bad_request("unable to parse requirement: for 'Gt', 'Lt' operators, the value "
                                      "must be an integer") from None
            elif not _VAL_RE.match(v) or len(v) > 63:
                raise bad_request('unable to parse requirement: invalid label value: "%s"' % v)
        reqs.append((key, op, vals))
    return reqs


def match_labels(reqs, labels):
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "=":
            if not has or v != vals[0]:
                return False
        elif op == "!=":
            if has and v == vals[0]:
                return False
        elif op == "in":
            if not has or v not in vals:
                return False
        elif op == "notin":
            if has and v in vals:
                return False
        elif op == "exists":
            if not has:
                return False
        elif op == "!":
            if has:
                return False
        elif op in ("<", ">"):
            try:
                n = int(v)
            except (TypeError, ValueError):
                return False
            if (op == "<" and not n < int(vals[0])) or (op == ">" and not n > int(vals[0])):
                return False
    return True


def selector_from_object(sel):
    """A metav1.LabelSelector as requirements; None selects nothing, {} everything."""
    if sel is None:
        return None
    reqs = [(k, "=", [v]) for k, v in (sel.get("matchLabels") or {}).items()]
    for e in sel.get("matchExpressions") or []:
        op = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}.get(e.get("operator"))
        if op is None:
            return None
        reqs.append((e.get("key", ""), op, list(e.get("values") or [])))
    return reqs


def parse_field_selector(text, res):
    reqs = []
    if text is None or not text.strip():
        return reqs
    for part in text.split(","):
        p = part.strip()
        m = re.match(r"^([^=!]+)(==|=|!=)(.*)$", p)
        if not m:
            raise bad_request("invalid selector: '%s'; can't understand '%s'" % (text, p))
        key, op, val = m.group(1).strip(), m.group(2), m.group(3).strip()
        if key not in res.field_labels:
            raise bad_request('field label not supported: %s' % key)
        reqs.append((key, "!=" if op == "!=" else "=", val))
    return reqs


def match_fields(reqs, entry):
    for key, op, val in reqs:
        if key == "metadata.name":
            v = entry.name
        elif key == "metadata.namespace":
            v = entry.ns
        else:
            v = entry.fields.get(key, "") if entry.fields else ""
        if (op == "=") != (v == val):
            return False
    return True


# ---------------------------------------------------------------------------
# events.k8s.io/v1 <-> core/v1 Event (one storage, two shapes, as in kube-apiserver)

_EV_RENAMES = [("involvedObject", "regarding"), ("message", "note"), ("source", "deprecatedSource"),
               ("firstTimestamp", "deprecatedFirstTimestamp"), ("lastTimestamp", "deprecatedLastTimestamp"),
               ("count", "deprecatedCount"), ("reportingComponent", "reportingController")]


def event_to_view(obj):
    out = dict(obj)
    out["apiVersion"], out["kind"] = "events.k8s.io/v1", "Event"
    for core, new in _EV_RENAMES:
        if core in out:
            out[new] = out.pop(core)
    return out


def event_from_view(obj):
    out = dict(obj)
    out["apiVersion"], out["kind"] = "v1", "Event"
    for core, new in _EV_RENAMES:
        if new in out:
            out[core] = out.pop(new)
    return out


VIEWS = {"events.k8s.io": (event_to_view, event_from_view)}


# ---------------------------------------------------------------------------
# Watch log

class WatchEvent:
    __slots__ = ("rv", "storage", "type", "entry", "prev")

    def __init__(self, rv, storage, typ, entry, prev):
        self.rv, self.storage, self.type, self.entry, self.prev = rv, storage, typ, entry, prev


def encode_continue(rv, key):
    tok = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key + "\x00"}, separators=(",", ":"))
    return base64.urlsafe_b64encode(tok.encode()).decode().rstrip("=")


_B64URL = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _go_quote_char(c):
    """encoding/json's quoteChar: how Go's JSON errors show one byte."""
    if c == 0x27:
        return "'\\''"
    if c == 0x22:
        return "'\"'"
    esc = {0x07: "\\a", 0x08: "\\b", 0x0c: "\\f", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t", 0x0b: "\\v",
           0x5c: "\\\\"}
    if c in esc:
        return "'%s'" % esc[c]
    if c < 0x20 or c == 0x7f:
        return "'\\x%02x'" % c
    if c < 0x7f or (c >= 0xa1 and c != 0xad):  # strconv.IsPrint for U+0000..U+00FF
        return "'%s'" % chr(c)
    return "'\\u%04x'" % c


def decode_continue(token):
    """(resourceVersion, start key) of a continue token, or 400 with kube-apiserver's message
    (k8s.io/apiserver/pkg/storage/continue.go DecodeContinue, wrapped as the list handler does)."""
    def bad(why):
        return bad_request("invalid continue token: continue key is not valid" + why)
    # base64.RawURLEncoding: no padding, URL alphabet, a lone last character is illegal
    for i, ch in enumerate(token):
        if ch not in _B64URL:
            raise bad(": illegal base64 data at input byte %d" % i) from None
    if len(token) % 4 == 1:
        raise bad(": illegal base64 data at input byte %d" % (len(token) - 1)) from None
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    try:
        d = json.loads(raw)
    except ValueError:
        body = raw.lstrip(b" \t\r\n")
        if not body:
            raise bad(": unexpected end of JSON input") from None
        if body[0:1] not in b'{["-0123456789tfn':
            raise bad(": invalid character %s looking for beginning of value" % _go_quote_char(body[0])) from None
        raise bad(": unexpected end of JSON input") from None
    if not isinstance(d, dict) or d.get("v") != "meta.k8s.io/v1":
        raise bad(": server does not recognize this encoded version %s"
                  % (d.get("v", "") if isinstance(d, dict) else "")) from None
    try:
        rv = int(d.get("rv") or 0)
    except (TypeError, ValueError):
        rv = 0
    if rv == 0:
        raise bad(": incorrect encoded start resourceVersion (version meta.k8s.io/v1)") from None
    if not d.get("start"):
        raise bad(": encoded start key empty (version meta.k8s.io/v1)") from None
    return rv, str(d["start"])


CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. You can "
                    "start a new list without the continue parameter, or use the continue token in this response "
                    "to retrieve the remainder of the results. Continuing with the provided token results in an "
                    "inconsistent list - objects that were created, modified, or deleted between the time the "
                    "first chunk was returned and now may show up in the list.")


# ---------------------------------------------------------------------------
# The store

class Store:
    def __init__(self, registry, window=20000):
        self.registry = registry
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.rv = 0
        self.compact_rv = 0           # events with rv <= compact_rv are gone from the log
        self.log = collections.deque()
        self.window = window
        self.buckets = {}
        self.listeners = []           # fn(storage, type, entry, prev), called under the lock
        self.virtual = {}             # storage -> fn(res, ns) -> [obj] for computed resources
        self.closed = False

    # -- low level ---------------------------------------------------------

    def bucket(self, storage):
        b = self.buckets.get(storage)
        if b is None:
            b = self.buckets[storage] = Bucket(storage)
        return b

    def _make_entry(self, storage, obj, res):
        md = obj["metadata"]
        e = Entry()
        e.raw = dumps(obj)
        e.uid = md.get("uid", "")
        e.ns = intern(md.get("namespace", "")) if res.namespaced else ""
        e.name = md["name"]
        labels = md.get("labels") or EMPTY
        e.labels = {intern(str(k)): intern(str(v)) for k, v in labels.items()} if labels else EMPTY
        extra = res.extra_fields
        e.fields = {f: intern(_field_value(obj, f)) for f in extra} if extra else EMPTY
        e.info = _info(storage, obj)
        e.rv = int(md["resourceVersion"])
        return e

    def _write(self, res, obj, typ, prev):
        """Store `obj` (canonical shape) as a new version; returns the entry.  Lock held."""
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        e = self._make_entry(res.storage, obj, res)
        b = self.bucket(res.storage)
        key = res.key(e.ns, e.name)
        if typ == "DELETED":
            b.delete(key)
        else:
            b.insert(key, e, prev)
        self._log(WatchEvent(self.rv, res.storage, typ, e, prev))
        for fn in self.listeners:
            fn(res.storage, typ, e, prev)
        return e

    def _log(self, ev):
        self.log.append(ev)
        while len(self.log) > self.window:
            self.compact_rv = self.log.popleft().rv
        self.cond.notify_all()

    def canonical(self, res):
        return self.registry.storage_resource(res.storage) or res

    def to_view(self, res, obj):
        return VIEWS[res.view][0](obj) if res.view else obj

    def from_view(self, res, obj):
        return VIEWS[res.view][1](obj) if res.view else obj

    def raw_for(self, res, entry):
        return dumps(self.to_view(res, loads(entry.raw))) if res.view else entry.raw

    # -- reads -------------------------------------------------------------

    def entry(self, res, ns, name):
        with self.lock:
            return self.bucket(res.storage).entries.get(res.key(ns, name))

    def get(self, res, ns, name):
        """The object as a fresh dict (view shape), or ApiError 404."""
        e = self.entry(res, ns, name)
        if e is None:
            raise not_found(res, name)
        return self.to_view(res, e.obj())

    def find(self, res, ns, name):
        e = self.entry(res, ns, name)
        return e.obj() if e else None

    def entries(self, res, ns=None):
        """A snapshot list of entries (namespace-filtered); cheap, entries are immutable."""
        with self.lock:
            b = self.bucket(res.storage)
            if ns:
                lo, hi = b.ns_range(ns)
                return [b.entries[k] for k in b.keys[lo:hi]]
            return [b.entries[k] for k in b.keys]

    def list(self, res, ns, label_sel, field_sel, limit=0, cont=None, rv=None, rv_match=None):
        """One page: (entries, list_rv, continue_token, remaining_count_or_None)."""
        lreqs = parse_label_selector(label_sel)
        freqs = parse_field_selector(field_sel, res)
        with self.lock:
            if res.virtual:
                b = self._virtual_bucket(res, ns)
            else:
                b = self.bucket(res.storage)
            start = ""
            list_rv = self.rv
            if rv == "0" and not cont and rv_match != "Exact":
                # "any version": kube-apiserver serves it from its watch cache and ignores the
                # limit (every item, no continue token), as a real 1.37 server does
                limit = 0
            if cont:
                list_rv, start = decode_continue(cont)
                if list_rv < self.compact_rv:
                    raise expired(CONTINUE_EXPIRED)
            elif rv not in (None, "", "0"):
                try:
                    want = int(rv)
                except ValueError:
                    raise bad_request('invalid resource version "%s"' % rv) from None
                if want > self.rv:
                    raise ApiError(504, "Timeout", "Too large resource version: %d, current: %d" % (want, self.rv),
                                   {"causes": [{"reason": "ResourceVersionTooLarge",
                                                "message": "Too large resource version"}], "retryAfterSeconds": 1})
                if rv_match == "Exact" and want != self.rv:
                    if want < self.compact_rv:
                        raise expired("too old resource version: %d (%d)" % (want, self.compact_rv))
                    # we keep no history: serve current state, the closest we can do
            node_eq = next((v for k, op, v in freqs if k == "spec.nodeName" and op == "="), None)
            if node_eq is not None and b.by_node is not None and not res.virtual:
                keys = sorted(b.by_node.get(node_eq, ()))
                if ns:
                    keys = [k for k in keys if k.startswith(ns + "/")]
                lo, hi = 0, len(keys)
            else:
                keys = b.keys
                lo, hi = b.ns_range(ns) if ns else (0, len(keys))
            if start:
                lo = max(lo, bisect.bisect_left(keys, start, lo, hi))
            out = []
            entries = b.entries
            i = lo
            token = None
            while i < hi:
                e = entries[keys[i]]
                i += 1
                if (not lreqs or match_labels(lreqs, e.labels)) and (not freqs or match_fields(freqs, e)):
                    out.append(e)
                    if limit and len(out) >= limit:
                        if i < hi:
                            token = encode_continue(list_rv, keys[i - 1])
                        break
            remaining = (hi - i) if token and not lreqs and not freqs else None
            return out, list_rv, token, remaining

    def _virtual_bucket(self, res, ns):
        b = Bucket(res.storage)
        b.by_node = None
        for obj in self.virtual[res.storage](res, ns):
            obj.setdefault("metadata", {})["resourceVersion"] = "0"
            e = self._make_entry(res.storage, obj, res)
            k = res.key(e.ns, e.name)
            b.entries[k] = e
            b.keys.append(k)
        b.keys.sort()
        return b

    # -- writes ------------------------------------------------------------

    def _check_kind(self, res, obj):
        if not isinstance(obj, dict):
            raise bad_request("the body of the request was not a JSON object")
        av, kind = obj.get("apiVersion"), obj.get("kind")
        if kind and kind != res.kind:
            raise bad_request("the kind of the object (%s) does not match the kind of the resource (%s)"
                              % (kind, res.kind))
        if av and av != res.api_version:
            raise bad_request("the API version in the data (%s) does not match the expected API version (%s)"
                              % (av, res.api_version))
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        if not isinstance(obj.get("metadata"), dict):
            obj["metadata"] = {}
        return obj

    def create(self, res, ns, obj, dry_run=False, admit=None):
        """POST: validate, default, store.  `admit(res, obj)` runs kind-specific defaulting (simadmit)."""
        obj = self._check_kind(res, obj)
        md = obj["metadata"]
        if res.namespaced:
            if md.get("namespace") and ns and md["namespace"] != ns:
                raise bad_request("the namespace of the provided object does not match the namespace sent "
                                  "on the request")
            ns = ns or md.get("namespace") or "default"
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
            ns = ""
        with self.lock:
            if res.namespaced and ns not in self.bucket("namespaces").entries:
                raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                               {"name": ns, "kind": "namespaces"})
            canon = self.canonical(res)
            obj = self.from_view(res, obj)
            md = obj["metadata"]
            if not md.get("name"):
                if md.get("generateName"):
                    for _ in range(20):
                        cand = md["generateName"] + generate_suffix()
                        if canon.key(ns, cand) not in self.bucket(res.storage).entries:
                            md["name"] = cand
                            break
                else:
                    raise invalid(res, res.kind, "", "metadata.name", "name or generateName is required",
                                  "Required value")
            if not valid_name(md["name"]):
                raise invalid(res, res.kind, md["name"], "metadata.name", '"%s": a lowercase RFC 1123 subdomain '
                              "must consist of lower case alphanumeric characters, '-' or '.'" % md["name"])
            if canon.key(ns, md["name"]) in self.bucket(res.storage).entries:
                raise already_exists(res, md["name"])
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = rfc3339()
            for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"):
                md.pop(k, None)
            if canon.generation:
                md["generation"] = 1
            if admit:
                admit(canon, obj, None)
            if dry_run:
                obj["metadata"]["resourceVersion"] = str(self.rv)
                return self.to_view(res, obj)
            self._write(canon, obj, "ADDED", None)
            return self.to_view(res, obj)

    def update(self, res, ns, name, obj, subresource=None, dry_run=False, admit=None, check_rv=True):
        """PUT (also the tail of PATCH): optimistic concurrency on metadata.resourceVersion."""
        obj = self._check_kind(res, obj)
        md = obj["metadata"]
        if md.get("name") and md["name"] != name:
            raise bad_request("the name of the object (%s) does not match the name on the URL (%s)"
                              % (md["name"], name))
        if res.namespaced and md.get("namespace") and md["namespace"] != ns:
            raise bad_request("the namespace of the provided object does not match the namespace sent on the "
                              "request")
        with self.lock:
            canon = self.canonical(res)
            b = self.bucket(res.storage)
            key = canon.key(ns, name)
            prev = b.entries.get(key)
            if prev is None:
                raise not_found(res, name)
            old = loads(prev.raw)
            new = self.from_view(res, obj)
            nmd = new["metadata"]
            if check_rv and nmd.get("resourceVersion") and nmd["resourceVersion"] != old["metadata"]["resourceVersion"]:
                raise modified_conflict(res, name)
            if subresource == "status":
                merged = loads(prev.raw)     # a copy: `old` must stay the before-image
                if "status" in new:
                    merged["status"] = new["status"]
                else:
                    merged.pop("status", None)
                new = merged
            else:
                nmd["name"] = name
                if canon.namespaced:
                    nmd["namespace"] = ns
                for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
                    if k in old["metadata"]:
                        nmd[k] = old["metadata"][k]
                    else:
                        nmd.pop(k, None)
                if canon.status_subresource:
                    if "status" in old:
                        new["status"] = old["status"]
                    else:
                        new.pop("status", None)
                if canon.generation:
                    gen = old["metadata"].get("generation", 1)
                    if _spec_part(new) != _spec_part(old):
                        gen += 1
                    nmd["generation"] = gen
            new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            if admit:
                admit(canon, new, old)
            if new == old:
                return self.to_view(res, old)     # no-op writes do not bump resourceVersion
            if dry_run:
                return self.to_view(res, new)
            if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
                self._delete_entry(canon, key, new)
                return self.to_view(res, new)
            self._write(canon, new, "MODIFIED", prev)
            return self.to_view(res, new)

    def patch(self, res, ns, name, patch_type, body, subresource=None, dry_run=False, admit=None):
        with self.lock:
            if patch_type == "apply":
                if self.entry(res, ns, name) is None:
                    obj = dict(body) if isinstance(body, dict) else {}
                    obj.setdefault("metadata", {})["name"] = name
                    return self.create(res, ns, obj, dry_run, admit), 201
                patch_type = "merge"
            cur = self.get(res, ns, name)
            try:
                if patch_type == "json":
                    new = json_patch(cur, body)
                elif patch_type == "merge":
                    new = merge_patch(cur, body)
                elif patch_type == "strategic":
                    new = strategic_merge_patch(cur, body)
                else:
                    raise bad_request("unsupported patch type")
            except PatchError as e:
                raise ApiError(422, "Invalid", str(e)) from None
            if not isinstance(new, dict):
                raise bad_request("the patch produced a non-object")
            # a resourceVersion in the patch is a precondition; otherwise the patch applies to the current one
            patched_rv = new.get("metadata", {}).get("resourceVersion") if isinstance(new.get("metadata"), dict) else None
            if patched_rv and patched_rv != cur["metadata"]["resourceVersion"]:
                raise modified_conflict(res, name)
            if not isinstance(new.get("metadata"), dict):
                raise ApiError(422, "Invalid", "metadata must be an object")
            new["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
            return self.update(res, ns, name, new, subresource, dry_run, admit), 200

    def delete(self, res, ns, name, options=None, dry_run=False):
        """DELETE: returns (object, http code).  Finalizers leave the object with a deletionTimestamp."""
        options = options or {}
        with self.lock:
            canon = self.canonical(res)
            key = canon.key(ns, name)
            prev = self.bucket(res.storage).entries.get(key)
            if prev is None:
                raise not_found(res, name)
            obj = loads(prev.raw)
            pre = options.get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != obj["metadata"].get("uid"):
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": Precondition failed: '
                               "UID in precondition: %s, UID in object meta: %s"
                               % (qualified(res), name, pre["uid"], obj["metadata"].get("uid")))
            if pre.get("resourceVersion") and pre["resourceVersion"] != obj["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": Precondition failed: '
                               "ResourceVersion in precondition: %s, ResourceVersion in object meta: %s"
                               % (qualified(res), name, pre["resourceVersion"], obj["metadata"]["resourceVersion"]))
            if dry_run:
                return self.to_view(res, obj), 200
            if obj["metadata"].get("finalizers"):
                if not obj["metadata"].get("deletionTimestamp"):
                    obj["metadata"]["deletionTimestamp"] = rfc3339()
                    obj["metadata"]["deletionGracePeriodSeconds"] = 0
                    self._write(canon, obj, "MODIFIED", prev)
                return self.to_view(res, obj), 200
            self._delete_entry(canon, key, obj, options.get("propagationPolicy") != "Orphan")
            return self.to_view(res, obj), 200

    def _delete_entry(self, canon, key, obj, cascade=True):
        b = self.bucket(canon.storage)
        prev = b.entries.get(key)
        if prev is None:
            return
        self._write(canon, obj, "DELETED", prev)
        uid = obj["metadata"].get("uid")
        if canon.storage == "namespaces":
            self._delete_namespace_contents(obj["metadata"]["name"])
        elif cascade and uid and canon.storage != "pods":
            self._collect_dependents(uid, obj["metadata"].get("namespace", ""))

    def _delete_namespace_contents(self, ns):
        for storage, b in list(self.buckets.items()):
            res = self.registry.storage_resource(storage)
            if res is None or not res.namespaced:
                continue
            lo, hi = b.ns_range(ns)
            for k in list(b.keys[lo:hi]):
                self._delete_entry(res, k, loads(b.entries[k].raw), cascade=False)

    def _collect_dependents(self, uid, ns):
        """Background garbage collection, done synchronously: delete objects owned by `uid`."""
        pods = self.registry.storage_resource("pods")
        for k in list(self.bucket("pods").by_owner.get(uid, ())):
            e = self.bucket("pods").entries.get(k)
            if e:
                self._delete_entry(pods, k, loads(e.raw))
        for storage, b in list(self.buckets.items()):
            if storage == "pods":
                continue
            res = self.registry.storage_resource(storage)
            if res is None or not res.namespaced or not ns:
                continue
            lo, hi = b.ns_range(ns)
            for k in list(b.keys[lo:hi]):
                e = b.entries.get(k)
                if e and uid.encode() in e.raw:
                    o = loads(e.raw)
                    if any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences") or []):
                        self._delete_entry(res, k, o)

    def put_raw(self, res, obj, typ="ADDED"):
        """Write an object exactly as given (snapshot loading, controllers).  Lock taken here."""
        with self.lock:
            key = res.key(obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            prev = self.bucket(res.storage).entries.get(key)
            return self._write(res, obj, "MODIFIED" if prev else typ, prev)

    def modify(self, res, ns, name, fn):
        """Controller read-modify-write: fn(obj) mutates and returns True to write. Returns the new obj or None."""
        with self.lock:
            key = res.key(ns, name)
            prev = self.bucket(res.storage).entries.get(key)
            if prev is None:
                return None
            obj = loads(prev.raw)
            if not fn(obj):
                return obj
            self._write(res, obj, "MODIFIED", prev)
            return obj

    def remove(self, res, ns, name):
        with self.lock:
            key = res.key(ns, name)
            e = self.bucket(res.storage).entries.get(key)
            if e is not None:
                self._delete_entry(res, key, loads(e.raw))

    # -- watch -------------------------------------------------------------

    def watcher(self, res, ns, label_sel, field_sel, rv, send_initial=None):
        return Watcher(self, res, ns, parse_label_selector(label_sel), parse_field_selector(field_sel, res), rv,
                       send_initial)

    def close(self):
        with self.lock:
            self.closed = True
            self.cond.notify_all()


def _spec_part(obj):
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


class Watcher:
    """One watch stream's cursor into the event log."""

    def __init__(self, store, res, ns, lreqs, freqs, rv, send_initial):
        self.store, self.res, self.ns, self.lreqs, self.freqs = store, res, ns, lreqs, freqs
        self.initial = []
        self.too_old = None
        with store.lock:
            if rv in (None, "", "0") or send_initial:
                for e in store.entries(res, ns):
                    if self._match(e):
                        self.initial.append(("ADDED", e))
                self.last = store.rv
            else:
                try:
                    self.last = int(rv)
                except ValueError:
                    raise bad_request('invalid resource version "%s"' % rv) from None
                if self.last < store.compact_rv:
                    self.too_old = "too old resource version: %d (%d)" % (self.last, store.compact_rv)
                elif self.last > store.rv:
                    # kube-apiserver's watch cache waits a moment for a resourceVersion it has not
                    # reached, then answers this (the reflector lists again)
                    raise ApiError(504, "Timeout", "Too large resource version: %d, current: %d" % (self.last, store.rv),
                                   {"causes": [{"reason": "ResourceVersionTooLarge",
                                                "message": "Too large resource version"}], "retryAfterSeconds": 1})

    def _match(self, e):
        if self.ns and e.ns != self.ns:
            return False
        if self.lreqs and not match_labels(self.lreqs, e.labels):
            return False
        if self.freqs and not match_fields(self.freqs, e):
            return False
        return True

    def next_batch(self, timeout):
        """Events after the cursor: [(type, entry)]; [] on timeout; ApiError 410 if the log moved past us."""
        st = self.store
        with st.lock:
            if st.rv <= self.last and not st.closed:
                st.cond.wait(timeout)
            if st.closed:
                return None
            if self.last < st.compact_rv:
                raise expired("too old resource version: %d (%d)" % (self.last, st.compact_rv))
            fresh = []
            for ev in reversed(st.log):
                if ev.rv <= self.last:
                    break
                fresh.append(ev)
            if fresh:
                self.last = fresh[0].rv
        out = []
        storage = self.res.storage
        for ev in reversed(fresh):
            if ev.storage != storage:
                continue
            now = self._match(ev.entry)
            if ev.type == "MODIFIED":
                before = ev.prev is not None and self._match(ev.prev)
                if now and before:
                    out.append(("MODIFIED", ev.entry))
                elif now:
                    out.append(("ADDED", ev.entry))
                elif before:
                    out.append(("DELETED", ev.entry))
            elif now:
                out.append((ev.type, ev.entry))
        return out
