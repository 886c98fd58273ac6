#!/usr/bin/env python3
"""apisim: a Kubernetes API server simulator with KubeVirt live-migration emulation.

It is the cluster every live-mode test, demo and benchmark of this project runs
against, so it speaks the real wire protocol to real clients (kubectl, client
libraries, the project's own C client): discovery, get/list/watch with
selectors and paging, create/update/patch/delete with resourceVersion
concurrency, Status errors with the apiserver's reasons and texts, the
Eviction subresource with PodDisruptionBudgets, and KubeVirt's eviction
interception followed by a live migration (simkubevirt.py).

Usage:
  python3 tests/apisim/apisim.py --snapshot FILE --port PORT [--migration-seconds N]
      [--tls-dir DIR] [--token TOKEN] [--kubeconfig-out FILE] [--faults FILE] ...
Prints `ready` on stdout once it serves; exits 0 on SIGTERM/SIGINT.
Test-only control endpoints live under /_sim/ (see README.md).

This file holds the HTTP layer and the command line; the parts are:
  simresources  what is served (discovery, CRDs, printer columns)
  simstore      objects, resourceVersions, selectors, paging, watch log
  simpatch      merge / JSON / strategic-merge patch
  simadmit      per-kind defaulting on create
  simeviction   the Eviction subresource and PDBs
  simkubevirt   KubeVirt webhook and controllers
  simmetrics    metrics.k8s.io
  simfaults     fault injection
  simcerts      certificates and kubeconfig
  simprotobuf   pod LISTs in kube-apiserver's protobuf (--protobuf-encoder, pbenc/)
"""

import argparse
import collections
import gc
import hmac
import json
import os
import re
import select
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import simcerts  # noqa: E402
import simprotobuf  # noqa: E402
import simresources  # noqa: E402
from simadmit import Admission  # noqa: E402
from simchurn import Churn  # noqa: E402
from simeviction import evict, refresh_pdb_status  # noqa: E402
from simfaults import Faults  # noqa: E402
from simkubevirt import KubeVirtSim  # noqa: E402
from simmetrics import Metrics  # noqa: E402
from simstore import Store, event_from_view  # noqa: E402
from simutil import (ApiError, CLOCK, dumps, loads, method_not_allowed, not_found, rfc3339,  # noqa: E402
                     route_not_found, status_object)

MAX_BODY = 3 * 1024 * 1024 + 1024
JOURNAL_MAX = 20000  # requests kept by GET /_sim/journal
PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version")
PATCH_TYPES = {"application/json-patch+json": "json", "application/merge-patch+json": "merge",
               "application/strategic-merge-patch+json": "strategic", "application/apply-patch+yaml": "apply"}
TRUE = ("1", "t", "T", "true", "TRUE", "True")


def log(msg):
    print("apisim: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Snapshot loading

_WS = re.compile(r"\s*")


def iter_snapshot(text):
    """Objects of a `v1 List` (or one object), parsed one item at a time to bound memory."""
    dec = json.JSONDecoder()
    i = _WS.match(text, 0).end()
    if i >= len(text) or text[i] != "{":
        raise ValueError("snapshot must be a JSON object (a v1 List)")
    i += 1
    top, saw_items = {}, False
    while True:
        i = _WS.match(text, i).end()
        if text[i] == "}":
            break
        key, i = dec.raw_decode(text, i)
        i = _WS.match(text, i).end()
        if text[i] != ":":
            raise ValueError("malformed JSON at offset %d" % i)
        i = _WS.match(text, i + 1).end()
        if key == "items" and text[i] == "[":
            saw_items = True
            i += 1
            while True:
                i = _WS.match(text, i).end()
                if text[i] == "]":
                    i += 1
                    break
                item, i = dec.raw_decode(text, i)
                yield item
                i = _WS.match(text, i).end()
                if text[i] == ",":
                    i += 1
        else:
            top[key], i = dec.raw_decode(text, i)
        i = _WS.match(text, i).end()
        if text[i] == ",":
            i += 1
    if not saw_items:
        yield top


# ---------------------------------------------------------------------------
# The simulator (state shared by all request threads)

class Sim:
    def __init__(self, args):
        self.args = args
        self.registry = simresources.Registry()
        self.store = Store(self.registry, window=args.watch_window)
        self.admit = Admission(self.registry, self.store)
        self.metrics = Metrics(self.store, self.registry)
        self.kubevirt = KubeVirtSim(self.store, self.registry, args.migration_seconds, args.backoff_seconds,
                                    args.unschedulable_timeout, log)
        self.kubevirt.metrics_hook = self.metrics.carry
        self.faults = Faults()
        self.churn = Churn(self.store, self.registry)
        self.counts = {}
        self.counts_lock = threading.Lock()
        self.journal = collections.deque(maxlen=JOURNAL_MAX)
        self.journal_seq = 0
        self.in_flight = 0  # requests outside /_sim/ being served (journalled when they end)
        self.watches_in_flight = 0  # of which watches (they end when the client or the timeout ends them)
        self.loaded_rv = 0  # the highest resourceVersion of the objects loaded (a state written by --state-out)
        self.stop = threading.Event()
        self.dirty_pdb_ns = set()
        self.pbenc = None  # simprotobuf.PodEncoder with --protobuf-encoder
        self.store.listeners.append(self._on_write)
        self.server_address = "127.0.0.1:%d" % args.port

    # -- loading -------------------------------------------------------------

    def load_text(self, text):
        n = 0
        for obj in iter_snapshot(text):
            n += self.load_object(obj)
        return n

    def load_object(self, obj):
        if not isinstance(obj, dict):
            log("snapshot: skipping a non-object item")
            return 0
        kind, av = obj.get("kind") or "", obj.get("apiVersion") or ""
        if kind in ("NodeMetrics", "PodMetrics"):
            self.metrics.load_object(obj)
            return 1
        if kind.endswith("List") and isinstance(obj.get("items"), list):
            return sum(self.load_object(o) for o in obj["items"])
        res = self.registry.by_kind(av, kind) or self.registry.by_kind_any_version(av.rpartition("/")[0], kind)
        if res is None or res.virtual:
            log("snapshot: skipping unsupported %s %s" % (av, kind))
            return 0
        if res.view:
            obj = event_from_view(obj)
            res = self.store.canonical(res)
        md = obj.get("metadata")
        if not isinstance(md, dict) or not md.get("name"):
            log("snapshot: skipping a %s without metadata.name" % kind)
            return 0
        if res.namespaced:
            md.setdefault("namespace", "default")
        else:
            md.pop("namespace", None)
        if not md.get("uid"):
            md["uid"] = str(uuid.uuid4())
        if not md.get("creationTimestamp"):
            md["creationTimestamp"] = rfc3339()
        try:
            self.loaded_rv = max(self.loaded_rv, int(md.get("resourceVersion") or 0))
        except (TypeError, ValueError):
            pass
        md.pop("resourceVersion", None)
        if res.generation:
            md.setdefault("generation", 1)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        self.store.put_raw(res, obj)  # a CRD registers its resource in _on_write
        return 1

    def finish_load(self):
        """Fill what a real cluster always has, then start the watch window at the loaded state."""
        st = self.store
        with st.lock:
            ns_res = self.registry.get("", "v1", "namespaces")
            have = set(st.bucket("namespaces").entries)
            want = {"default", "kube-system", "kube-public", "kube-node-lease"}
            for storage, b in st.buckets.items():
                r = self.registry.storage_resource(storage)
                if r is not None and r.namespaced:
                    want.update(e.ns for e in b.entries.values())
            for ns in sorted(want - have):
                st.put_raw(ns_res, {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": ns, "uid": str(uuid.uuid4()), "creationTimestamp": rfc3339(),
                                                 "labels": {"kubernetes.io/metadata.name": ns}},
                                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
            pc_res = self.registry.get("scheduling.k8s.io", "v1", "priorityclasses")
            for name, value in (("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000)):
                if st.entry(pc_res, "", name) is None:
                    st.put_raw(pc_res, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                        "metadata": {"name": name, "uid": str(uuid.uuid4()),
                                                     "creationTimestamp": rfc3339()},
                                        "value": value, "globalDefault": False,
                                        "preemptionPolicy": "PreemptLowerPriority",
                                        "description": "Used for system critical pods that must run in the "
                                                       "cluster, but can be moved to another node if necessary."})
            crd_res = self.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            for r in self.registry.resources:
                if r.custom and st.entry(crd_res, "", "%s.%s" % (r.plural, r.group)) is None:
                    st.put_raw(crd_res, _with_uid(simresources.crd_for(r)))
            pdb_ns = {e.ns for e in st.entries(self.registry.get("policy", "v1", "poddisruptionbudgets"))}
            refresh_pdb_status(st, self.registry, pdb_ns)
            # a state written by --state-out goes on from its resourceVersions, as etcd does after a
            # restart: a client's older resourceVersion is then out of the (empty) watch window (410)
            st.rv = max(st.rv, self.loaded_rv + 1)
            st.log.clear()
            st.compact_rv = st.rv
            self.dirty_pdb_ns.clear()

    # -- background controllers -----------------------------------------------

    def _on_write(self, storage, typ, entry, prev):
        if storage == "pods" or storage == "policy/poddisruptionbudgets":
            b = self.store.buckets.get("policy/poddisruptionbudgets")
            if b is not None and entry.ns:
                lo, hi = b.ns_range(entry.ns)
                if hi > lo:
                    self.dirty_pdb_ns.add(entry.ns)
                    self.kubevirt.wake.set()
        elif storage == "apiextensions.k8s.io/customresourcedefinitions":
            crd = loads(entry.raw)
            spec = crd.get("spec") or {}
            if spec.get("group") in ("kubevirt.io", "hco.kubevirt.io"):
                return  # built-in rows (printer columns, subresources) stay as they are
            if typ == "DELETED":
                plural = (spec.get("names") or {}).get("plural")
                if plural:
                    self.registry.remove_group_plural(spec.get("group"), plural)
                return
            try:
                for r in simresources.resources_from_crd(crd):
                    if self.registry.get(r.group, r.version, r.plural) is None:
                        self.registry.add(r)
            except ValueError as e:
                log("CRD %s not served: %s" % (crd["metadata"].get("name"), e))

    def controllers(self):
        while not self.stop.is_set():
            try:
                for _ in range(1000):
                    if not self.kubevirt.tick():
                        break
                with self.store.lock:
                    dirty, self.dirty_pdb_ns = self.dirty_pdb_ns, set()
                    if dirty:
                        refresh_pdb_status(self.store, self.registry, dirty)
            except Exception:
                log("controller error:\n" + traceback.format_exc())
            # poll while migrations are in flight (often enough for --migration-seconds to be accurate
            # to a tenth); otherwise sleep until a relevant write wakes us
            busy_poll = max(0.05, min(1.0, self.args.migration_seconds / 10))
            self.kubevirt.wake.wait(busy_poll if self.kubevirt.busy else 2.0)
            self.kubevirt.wake.clear()

    # -- accounting -----------------------------------------------------------

    def count(self, verb, path):
        with self.counts_lock:
            k = "%s %s" % (verb, path)
            self.counts[k] = self.counts.get(k, 0) + 1

    def record(self, entry):
        """Append one finished request to the journal (GET /_sim/journal)."""
        with self.counts_lock:
            self.journal_seq += 1
            entry["seq"] = self.journal_seq
            self.journal.append(entry)

    def count_report(self):
        with self.counts_lock:
            by_verb, by_path = {}, {}
            for k, n in self.counts.items():
                verb, path = k.split(" ", 1)
                by_verb[verb] = by_verb.get(verb, 0) + n
                by_path[path] = by_path.get(path, 0) + n
            return {"total": sum(self.counts.values()), "byVerb": by_verb, "byPath": by_path,
                    "byVerbAndPath": dict(self.counts)}

    def dump_state(self):
        """Every stored object as chunks of one `v1 List` (bytes)."""
        parts = []
        with self.store.lock:
            for storage in sorted(self.store.buckets):
                b = self.store.buckets[storage]
                parts.extend(b.entries[k].raw for k in b.keys)
            rv = self.store.rv
        return b'{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"%d"},"items":[' % rv, parts, b"]}"


def _with_uid(obj):
    obj["metadata"]["uid"] = str(uuid.uuid4())
    return obj


# ---------------------------------------------------------------------------
# Content negotiation and tables

def parse_accept(header):
    """The clauses of an Accept header in the order kube-apiserver tries them: goautoneg's
    ParseAccept (github.com/munnerz/goautoneg), [(type, subtype, params)] sorted by its rule
    (higher q first, a concrete type or subtype before `*`) with the insertion sort Go's
    sort.Sort uses for the few clauses a client sends; types are compared case-insensitively."""
    clauses = []
    for part in header.split(","):
        part = part.strip(" ")
        mt, _, rest = part.partition(";")
        typ, slash, sub = mt.partition("/")
        typ = typ.strip(" ").lower()
        if not slash:
            if typ != "*":
                continue
            sub = "*"
        elif "/" in sub:
            continue
        sub = sub.strip(" ").lower()
        q, params = 1.0, {}
        for p in rest.split(";") if rest else ():
            k, eq, v = p.partition("=")
            if not eq or "=" in v:
                continue
            k, v = k.strip(" "), v.strip(" ")
            if k == "q":
                try:
                    q = float(v)
                except ValueError:
                    q = 0.0
            else:
                params[k] = v
        clauses.append((q, typ, sub, params))

    def less(a, b):
        return a[0] > b[0] or (a[1] != "*" and b[1] == "*") or (a[2] != "*" and b[2] == "*")
    for i in range(1, len(clauses)):
        j = i
        while j > 0 and less(clauses[j], clauses[j - 1]):
            clauses[j], clauses[j - 1] = clauses[j - 1], clauses[j]
            j -= 1
    return [c[1:] for c in clauses]


def negotiate(accept, protobuf=False):
    """('json'|'table'|'meta'|'protobuf', version) for an Accept header; ApiError 406 if nothing
    fits. The clauses are tried in parse_accept's order, each against the media types served
    here in kube-apiserver's order (application/json, then application/vnd.kubernetes.protobuf
    when `protobuf`: a pod LIST with --protobuf-encoder); the first that fits wins, so `*/*` and
    `application/*` get JSON. Protobuf is served as the plain list only: a protobuf clause
    asking for a conversion (`as=Table`, ...) is passed over, as is every protobuf clause when
    `protobuf` is false."""
    if not accept:
        return "json", None
    for typ, sub, params in parse_accept(accept):
        as_ = params.get("as")
        if typ in ("application", "*") and sub in ("json", "*"):
            if not as_:
                return "json", None
            if params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
                if as_ == "Table":
                    return "table", params["v"]
                if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                    return "meta", params["v"]
        if protobuf and typ == "application" and sub == "vnd.kubernetes.protobuf" and not as_:
            return "protobuf", None
    raise ApiError(406, "NotAcceptable", "only the following media types are accepted: application/json" +
                   (", " + simprotobuf.MEDIA_TYPE if protobuf else ""))


def partial(obj, version="v1"):
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/" + version,
            "metadata": obj.get("metadata", {})}


def table(res, objs, version, include, meta):
    cols = simresources.columns_for(res)
    rows = []
    for o in objs:
        cells = []
        for c in cols:
            try:
                cells.append(c["fn"](o))
            except Exception:
                cells.append("")
        row = {"cells": cells}
        if include == "Object":
            row["object"] = o
        elif include != "None":
            row["object"] = partial(o, version)
        rows.append(row)
    defs = [{"name": c["name"], "type": "string" if c["type"] == "date" else c["type"],
             "format": "name" if c is cols[0] and c["name"] == "Name" else "",
             "description": c["description"], "priority": c["priority"]} for c in cols]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/" + version, "metadata": meta,
            "columnDefinitions": defs, "rows": rows}


# ---------------------------------------------------------------------------
# HTTP

def _precondition_uid(body):
    """An eviction body's deleteOptions.preconditions.uid, for the journal ("" when absent)."""
    try:
        d = json.loads(body or b"{}")
        return str(((d.get("deleteOptions") or {}).get("preconditions") or {}).get("uid") or "")
    except (ValueError, AttributeError):
        return ""


class _Truncated(Exception):
    pass


class SimServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False     # do not wait for idle keep-alive connections on shutdown
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, addr, handler, sim, ssl_ctx):
        self.sim = sim
        self.ssl_ctx = ssl_ctx
        super().__init__(addr, handler)

    def finish_request(self, request, client_address):
        # headers and body go out in separate writes: without NODELAY, Nagle plus the client's
        # delayed ACK would add ~40 ms to every small response
        try:
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        # the TLS handshake happens here, in the connection's own thread, not in the accept loop
        if self.ssl_ctx is not None:
            try:
                request.settimeout(10)
                request = self.ssl_ctx.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                try:
                    request.close()
                except OSError:
                    pass
                return
        try:
            self.RequestHandlerClass(request, client_address, self)
        finally:
            if self.ssl_ctx is not None:
                try:
                    request.close()
                except OSError:
                    pass

    def handle_error(self, request, client_address):
        if self.sim.args.verbose:
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "apisim"
    sys_version = ""
    timeout = 600
    budget = None          # bytes left before a `truncate` fault cuts the response
    reset_after_budget = False  # `truncate` with `reset`: RST instead of a clean close
    sent_headers = False
    status_sent = None     # journal: the status line sent, the Status message, list paging
    status_message = None
    list_continue = None
    eviction_uid = None    # journal: an eviction's deleteOptions.preconditions.uid
    outcome = None

    def version_string(self):
        return self.server_version

    # -- plumbing ---------------------------------------------------------------

    def log_message(self, fmt, *args):
        if self.server.sim.args.verbose:
            log("%s %s" % (self.address_string(), fmt % args))

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def do_HEAD(self):
        self.dispatch("HEAD")

    def send_response(self, code, message=None):
        self.status_sent = code
        super().send_response(code, message)

    def _out(self, data):
        if self.budget is not None:
            if len(data) >= self.budget:
                self.wfile.write(data[:self.budget])
                self.wfile.flush()
                if self.reset_after_budget:
                    self.reset_connection()
                    self.outcome = "reset"
                raise _Truncated()
            self.budget -= len(data)
        self.wfile.write(data)

    def send_bytes(self, code, chunks, ctype="application/json", headers=None):
        if isinstance(chunks, (bytes, bytearray)):
            chunks = [chunks]
        total = sum(len(c) for c in chunks)
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(total))
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.sent_headers = True
        if self.command == "HEAD":
            return
        batch, size = [], 0
        for c in chunks:
            batch.append(c)
            size += len(c)
            if size >= 262144:
                self._out(b"".join(batch))
                batch, size = [], 0
        if batch:
            self._out(b"".join(batch))
        self.wfile.flush()

    def send_error(self, code, message=None, explain=None):
        # http.server calls this for requests it cannot parse: answer with a Status, not HTML
        reasons = {400: "BadRequest", 404: "NotFound", 408: "Timeout", 413: "RequestEntityTooLarge",
                   414: "RequestURITooLong", 431: "RequestHeaderFieldsTooLarge", 501: "MethodNotAllowed"}
        if code == 501:
            code = 405
        if self.request_version == "HTTP/0.9":  # unparsable request line: still answer with a status line
            self.request_version = "HTTP/1.1"
        self.close_connection = True
        try:
            self.send_obj(code, status_object(code, reasons.get(code, ""), message or "bad request"),
                          headers={"Connection": "close"})
        except (OSError, _Truncated):
            pass

    def send_obj(self, code, obj, ctype="application/json", headers=None):
        if code >= 300 and isinstance(obj, dict) and obj.get("kind") == "Status":
            self.status_message = obj.get("message")
        self.send_bytes(code, dumps(obj), ctype, headers)

    def send_error_status(self, err):
        headers = dict(err.headers)
        self.send_obj(err.code, err.status(), headers=headers)

    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            data = b""
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline(65537)
                if len(data) > MAX_BODY:
                    raise ApiError(413, "RequestEntityTooLarge", "the request body is too large")
            return data
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            self.close_connection = True
            raise ApiError(413, "RequestEntityTooLarge", "limit is %d" % MAX_BODY)
        return self.rfile.read(n) if n > 0 else b""

    def authenticated(self):
        sim = self.server.sim
        if not sim.args.auth_required:
            return True
        auth = self.headers.get("Authorization") or ""
        if sim.args.token and auth.startswith("Bearer ") and hmac.compare_digest(auth[7:].strip(), sim.args.token):
            return True
        if self.server.ssl_ctx is not None:
            try:
                if self.connection.getpeercert():
                    return True
            except (ValueError, AttributeError):
                pass
        return False

    def reset_connection(self):
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close_connection = True
        try:
            self.connection.close()
        except OSError:
            pass

    def dispatch(self, method):
        """One request; every one outside /_sim/ is recorded in the journal when done."""
        self.status_sent = self.status_message = self.list_continue = self.outcome = None
        self.eviction_uid = None
        self.fault_text = None
        self.watch_fault = None
        t0, m0 = time.time(), time.monotonic()
        url = urlsplit(self.path)
        path = unquote(url.path) or "/"
        counted = not path.startswith("/_sim")
        if counted:
            with self.server.sim.counts_lock:
                self.server.sim.in_flight += 1
        try:
            self._dispatch(method)
        finally:
            if counted:
                outcome = self.outcome
                if outcome is None:
                    outcome = "sent" if self.status_sent is not None else "no-response"
                # end is t plus the time taken by the monotonic clock: a step of the wall clock
                # while the request is served cannot make it end before it began
                entry = {"t": t0, "end": t0 + (time.monotonic() - m0), "method": method, "path": path,
                         "query": url.query, "status": self.status_sent, "outcome": outcome,
                         "fault": self.fault_text}
                if self.status_message is not None:
                    entry["message"] = self.status_message
                if self.list_continue is not None:
                    entry["continue"] = self.list_continue
                if self.eviction_uid is not None:
                    entry["preconditionUid"] = self.eviction_uid
                self.server.sim.record(entry)
                with self.server.sim.counts_lock:
                    self.server.sim.in_flight -= 1

    def _dispatch(self, method):
        self.budget = None
        self.reset_after_budget = False
        self.sent_headers = False
        sim = self.server.sim
        try:
            url = urlsplit(self.path)
            path = unquote(url.path) or "/"
            query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            body = self.read_body() if method in ("POST", "PUT", "PATCH", "DELETE") else b""
            if method == "POST" and path.endswith("/eviction"):
                self.eviction_uid = _precondition_uid(body)
            if path.startswith("/_sim/") or path == "/_sim":
                if not self.authenticated():
                    raise ApiError(401, "Unauthorized", "Unauthorized")
                return self.control(method, path, query, body)
            route, route_error = None, None
            if path not in PUBLIC_PATHS:
                try:
                    route = Route(sim.registry, method, path, query)
                except ApiError as e:
                    route_error = e
            verb = route.verb if route else ("get" if method in ("GET", "HEAD") else method.lower())
            sim.count(verb, path)
            # authentication comes first, as in kube-apiserver: no 404s for anonymous callers
            if not self.authenticated() and path not in PUBLIC_PATHS:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            if route_error is not None:
                raise route_error
            fault = sim.faults.match(method, verb, path, url.query)
            if fault is not None:
                self.fault_text = fault.describe()
                if fault.on_watch():
                    self.watch_fault = fault
                if fault.latency:
                    time.sleep(fault.latency)
                if fault.reset and fault.truncate is None:
                    self.outcome = "reset"
                    return self.reset_connection()
                if fault.status:
                    hdr = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
                    return self.send_obj(fault.status, status_object(fault.status, fault.reason, fault.message,
                                                                     {"retryAfterSeconds": fault.retry_after}
                                                                     if fault.retry_after is not None else None),
                                         headers=hdr)
                if fault.truncate is not None:
                    self.budget = int(fault.truncate)
                    self.reset_after_budget = fault.reset
            if route is None:
                return self.serve_public(path)
            if route.kind == "discovery":
                return self.serve_discovery(route)
            return self.serve_resource(route, query, body)
        except _Truncated:
            self.close_connection = True
            if self.outcome is None:
                self.outcome = "truncated"
        except ApiError as e:
            if self.sent_headers:
                self.close_connection = True
                return
            try:
                self.send_error_status(e)
            except _Truncated:
                self.close_connection = True
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout, TimeoutError):
            self.close_connection = True
            self.outcome = "client-gone"
        except Exception as e:
            log("internal error on %s %s:\n%s" % (method, self.path, traceback.format_exc()))
            if self.sent_headers:
                self.close_connection = True
                return
            try:
                self.send_error_status(ApiError(500, "InternalError", "Internal error occurred: apisim: %s"
                                                % type(e).__name__))
            except Exception:
                self.close_connection = True

    # -- non-resource paths ---------------------------------------------------------

    def serve_public(self, path):
        if path == "/version":
            return self.send_obj(200, simresources.VERSION_INFO)
        return self.send_bytes(200, b"ok", "text/plain; charset=utf-8")

    def serve_discovery(self, route):
        reg = self.server.sim.registry
        if route.path == "/api":
            return self.send_obj(200, simresources.api_versions(self.server.sim.server_address))
        if route.path == "/apis":
            return self.send_obj(200, simresources.api_group_list(reg))
        if route.path.startswith("/openapi/v2"):
            accept = self.headers.get("Accept") or ""
            if "protobuf" in accept:
                # An OpenAPI v2 protobuf Document with only `swagger: "2.0"`: kubectl finds no schema for any
                # kind and therefore skips client-side validation instead of failing.
                return self.send_bytes(200, b"\x0a\x032.0", "application/octet-stream")
            return self.send_obj(200, {"swagger": "2.0", "info": {"title": "apisim", "version": "v1.30.0"},
                                       "paths": {}, "definitions": {}})
        if route.group_doc is not None:
            return self.send_obj(200, route.group_doc)
        return self.send_obj(200, route.resource_list)

    # -- resources ------------------------------------------------------------------

    def serve_resource(self, route, query, body):
        sim = self.server.sim
        store = sim.store
        res, ns, name, sub = route.res, route.ns, route.name, route.sub
        dry_run = query.get("dryRun") == "All"
        if query.get("dryRun") not in (None, "", "All"):
            raise ApiError(400, "BadRequest", "Invalid dry run value: %s" % query["dryRun"])
        verb = route.verb
        if verb not in res.verbs and not (sub and verb in res.subresources.get(sub, ("", []))[1]):
            raise method_not_allowed()
        if verb in ("get", "list", "watch"):
            # protobuf: pod LISTs only, with --protobuf-encoder (other kinds, GETs, watches: JSON)
            fmt, fver = negotiate(self.headers.get("Accept"), verb == "list" and sim.pbenc is not None and
                                  res.group == "" and res.plural == "pods")
        else:
            fmt, fver = "json", None
        if verb == "get":
            if sub and sub != "status":
                raise method_not_allowed()
            if res.virtual:
                entries, _, _, _ = store.list(res, ns, None, "metadata.name=" + name)
                if not entries:
                    raise not_found(res, name)
                return self.send_objects(res, [entries[0].obj()], fmt, fver, single=True, query=query)
            obj = store.get(res, ns, name)
            return self.send_objects(res, [obj], fmt, fver, single=True, query=query)
        if verb == "list":
            return self.serve_list(res, ns, query, fmt, fver)
        if verb == "watch":
            return self.serve_watch(res, ns, name, query, fmt, fver)
        if verb in ("create", "update"):
            self.require_json()
        data = self.parse_json(body, allow_empty=verb in ("delete", "deletecollection"))
        if verb == "create":
            if sub == "eviction":
                code, out = evict(store, sim.registry, sim.kubevirt, ns, name, data, query.get("dryRun"))
                return self.send_obj(code, out)
            out = store.create(res, ns, data, dry_run, sim.admit)
            return self.send_obj(201, out)
        if verb == "update":
            if sub not in (None, "status", "finalize"):
                raise method_not_allowed()
            out = store.update(res, ns, name, data, "status" if sub == "status" else None, dry_run, sim.admit)
            return self.send_obj(200, out)
        if verb == "patch":
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            ptype = PATCH_TYPES.get(ctype)
            if ptype is None or (ptype == "strategic" and res.custom):
                raise ApiError(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted media types include: "
                               "application/json-patch+json, application/merge-patch+json, "
                               "application/apply-patch+yaml" +
                               ("" if res.custom else ", application/strategic-merge-patch+json"))
            if sub not in (None, "status"):
                raise method_not_allowed()
            out, code = store.patch(res, ns, name, ptype, data, sub, dry_run, sim.admit)
            return self.send_obj(code, out)
        if verb == "delete":
            opts = data if isinstance(data, dict) else {}
            if query.get("propagationPolicy"):
                opts["propagationPolicy"] = query["propagationPolicy"]
            out, code = store.delete(res, ns, name, opts, dry_run)
            return self.send_obj(code, out)
        if verb == "deletecollection":
            opts = data if isinstance(data, dict) else {}
            entries, rv, _, _ = store.list(res, ns, query.get("labelSelector"), query.get("fieldSelector"))
            items = []
            for e in entries:
                try:
                    items.append(store.delete(res, e.ns, e.name, opts, dry_run)[0])
                except ApiError:
                    pass
            return self.send_obj(200, {"kind": res.list_kind, "apiVersion": res.api_version,
                                       "metadata": {"resourceVersion": str(store.rv)}, "items": items})
        raise method_not_allowed()

    def require_json(self):
        ctype = (self.headers.get("Content-Type") or "application/json").split(";")[0].strip().lower()
        if ctype not in ("application/json", ""):
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                           "accepted media types include: application/json")

    def parse_json(self, body, allow_empty=False):
        if not body.strip():
            if allow_empty:
                return None
            raise ApiError(400, "BadRequest", "the request body is empty; a JSON object is required")
        try:
            return json.loads(body)
        except ValueError as e:
            raise ApiError(400, "BadRequest", "the body of the request could not be decoded as JSON: %s" % e) from None

    def send_objects(self, res, objs, fmt, fver, single, query, meta=None):
        if fmt == "table":
            t = table(res, objs, fver, query.get("includeObject", "Metadata"), meta or {})
            return self.send_obj(200, t, "application/json;as=Table;v=%s;g=meta.k8s.io" % fver)
        if fmt == "meta":
            if single:
                return self.send_obj(200, partial(objs[0], fver))
            return self.send_obj(200, {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/" + fver,
                                       "metadata": meta or {}, "items": [partial(o, fver) for o in objs]})
        if single:
            return self.send_obj(200, objs[0])
        raise AssertionError("json lists are streamed by serve_list")

    def serve_list(self, res, ns, query, fmt, fver):
        store = self.server.sim.store
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid limit: %s" % query.get("limit")) from None
        entries, rv, token, remaining = store.list(res, ns, query.get("labelSelector"), query.get("fieldSelector"),
                                                   max(0, limit), query.get("continue") or None,
                                                   query.get("resourceVersion"), query.get("resourceVersionMatch"))
        meta = {"resourceVersion": str(rv)}
        self.list_continue = bool(token)
        if token:
            meta["continue"] = token
            if remaining is not None:
                meta["remainingItemCount"] = remaining
        if fmt == "protobuf":
            items = self.server.sim.pbenc.items(entries)
            lm = simprotobuf.list_meta(meta["resourceVersion"], token or "", remaining if token else None)
            return self.send_bytes(200, simprotobuf.list_chunks(res.api_version, res.list_kind, lm, items),
                                   simprotobuf.MEDIA_TYPE)
        if fmt != "json":
            return self.send_objects(res, [loads(store.raw_for(res, e)) for e in entries], fmt, fver, False, query,
                                     meta)
        head = dumps({"kind": res.list_kind, "apiVersion": res.api_version, "metadata": meta})
        chunks = [head[:-1] + b',"items":[']
        first = True
        for e in entries:
            if not first:
                chunks.append(b",")
            chunks.append(store.raw_for(res, e))
            first = False
        chunks.append(b"]}")
        self.send_bytes(200, chunks)

    def serve_watch(self, res, ns, name, query, fmt, fver):
        sim = self.server.sim
        fsel = query.get("fieldSelector") or ""
        if name:
            fsel = ",".join(x for x in (fsel, "metadata.name=" + name) if x)
        try:
            timeout = float(query.get("timeoutSeconds") or sim.args.watch_timeout)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid timeoutSeconds") from None
        bookmarks = query.get("allowWatchBookmarks") in TRUE
        send_initial = query.get("sendInitialEvents") in TRUE
        w = sim.store.watcher(res, ns, query.get("labelSelector"), fsel, query.get("resourceVersion"), send_initial)
        ctype = "application/json" if fmt == "json" else "application/json;as=Table;v=%s;g=meta.k8s.io" % fver
        first = [True]

        def open_stream():
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache, private")
            self.end_headers()
            self.sent_headers = True

        def emit(typ, payload):
            data = b'{"type":"' + typ.encode() + b'","object":' + payload + b"}\n"
            self._out(b"%x\r\n" % len(data) + data + b"\r\n")
            self.wfile.flush()

        def emit_entry(typ, entry):
            raw = sim.store.raw_for(res, entry)
            if fmt == "table":
                t = table(res, [loads(raw)], fver, query.get("includeObject", "Metadata"), {})
                if not first[0]:
                    t["columnDefinitions"] = []
                first[0] = False
                raw = dumps(t)
            elif fmt == "meta":
                raw = dumps(partial(loads(raw), fver))
            emit(typ, raw)

        def bookmark(rv, initial_end=False):
            md = {"resourceVersion": str(rv)}
            if initial_end:
                md["annotations"] = {"k8s.io/initial-events-end": "true"}
            emit("BOOKMARK", dumps({"kind": res.kind, "apiVersion": res.api_version, "metadata": md}))

        if w.too_old:
            open_stream()
            self.outcome = "expired"
            emit("ERROR", dumps(status_object(410, "Expired", w.too_old)))
            self._out(b"0\r\n\r\n")
            return
        # counted before its 200 goes out, not after: a client that has the answer's headers
        # finds its watch in inFlightWatches (GET /_sim/journal)
        with sim.counts_lock:
            sim.watches_in_flight += 1
        try:
            open_stream()
            return self._stream_watch(w, res, query, send_initial, bookmarks, timeout, emit, emit_entry, bookmark)
        finally:
            with sim.counts_lock:
                sim.watches_in_flight -= 1

    def _stream_watch(self, w, res, query, send_initial, bookmarks, timeout, emit, emit_entry, bookmark):
        sim = self.server.sim
        wf = self.watch_fault
        sent = [0]

        def deliver(events):
            """Sends a batch of events as the watch fault (if any) says; False ends the stream."""
            if wf is not None and wf.watch_drop:
                return True
            events = list(events)
            if events and wf is not None and wf.watch_delay:
                time.sleep(wf.watch_delay)
            if wf is not None and wf.watch_reorder:
                for i in range(0, len(events) - 1, 2):
                    events[i], events[i + 1] = events[i + 1], events[i]
            for typ, e in events:
                emit_entry(typ, e)
                if wf is not None and wf.watch_duplicate:
                    emit_entry(typ, e)
                sent[0] += 1
                if wf is not None and wf.watch_expire is not None and sent[0] >= wf.watch_expire:
                    self.outcome = "expired"
                    emit("ERROR", dumps(status_object(410, "Expired", "apisim injected fault: the watch expired")))
                    self._out(b"0\r\n\r\n")
                    self.wfile.flush()
                    return False
                if wf is not None and wf.watch_cut is not None and sent[0] >= wf.watch_cut:
                    self.outcome = "reset"
                    self.reset_connection()
                    return False
            return True

        if wf is not None and wf.watch_expire == 0:
            self.outcome = "expired"
            emit("ERROR", dumps(status_object(410, "Expired", "apisim injected fault: the watch expired")))
            self._out(b"0\r\n\r\n")
            return
        if wf is not None and wf.watch_cut == 0:
            self.outcome = "reset"
            return self.reset_connection()
        if not deliver(w.initial):
            return
        if send_initial and bookmarks:
            bookmark(w.last, True)
        deadline = time.monotonic() + timeout
        last_bm = time.monotonic()
        while not sim.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                batch = w.next_batch(min(left, 1.0))
            except ApiError as e:
                if e.code == 410:
                    self.outcome = "expired"
                emit("ERROR", dumps(e.status()))
                break
            if batch is None:
                break
            if not deliver(batch):
                return
            if bookmarks and time.monotonic() - last_bm >= sim.args.bookmark_seconds:
                bookmark(w.last)
                last_bm = time.monotonic()
            if not batch and self.client_gone():
                self.close_connection = True
                return
        self._out(b"0\r\n\r\n")
        self.wfile.flush()

    def client_gone(self):
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            if not r:
                return False
            if isinstance(self.connection, ssl.SSLSocket):
                return True  # nothing legitimate arrives on a watch connection; treat as closed
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    # -- control endpoints -------------------------------------------------------

    def control(self, method, path, query, body):
        sim = self.server.sim
        data = self.parse_json(body, allow_empty=True) if body else None
        parts = [p for p in path.split("/") if p][1:]
        what = "/".join(parts)
        try:
            if what == "health" and method == "GET":
                return self.send_obj(200, {"ok": True, "resourceVersion": sim.store.rv})
            if what == "state" and method == "GET":
                head, items, tail = sim.dump_state()
                chunks = [head]
                for i, raw in enumerate(items):
                    if i:
                        chunks.append(b",")
                    chunks.append(raw)
                chunks.append(tail)
                return self.send_bytes(200, chunks)
            if what == "requests":
                if method == "DELETE":
                    with sim.counts_lock:
                        sim.counts.clear()
                    return self.send_obj(200, {"ok": True})
                return self.send_obj(200, sim.count_report())
            if what == "journal":
                if method == "DELETE":
                    with sim.counts_lock:
                        sim.journal.clear()
                    return self.send_obj(200, {"ok": True})
                if method == "GET":
                    with sim.counts_lock:
                        items, busy, watches = list(sim.journal), sim.in_flight, sim.watches_in_flight
                    return self.send_obj(200, {"items": items, "inFlight": busy, "inFlightWatches": watches})
            if what == "faults":
                if method == "GET":
                    return self.send_obj(200, {"rules": sim.faults.list(), "fired": sim.faults.fired})
                if method == "DELETE":
                    rid = int(query["id"]) if query.get("id") else None
                    return self.send_obj(200, {"removed": sim.faults.clear(rid)})
                if method == "POST":
                    rules = data if isinstance(data, list) else [data]
                    return self.send_obj(201, {"rules": [sim.faults.add(r) for r in rules]})
            if what == "migrations" and method == "GET":
                return self.send_obj(200, {"phases": sim.kubevirt.summary(), "failRules": sim.kubevirt.fail_rules})
            if what == "migrations/advance" and method == "POST":
                secs = (data or {}).get("seconds", sim.args.migration_seconds) if isinstance(data, dict) else \
                    sim.args.migration_seconds
                return self.send_obj(200, {"phases": sim.kubevirt.advance(float(secs)), "now": rfc3339(CLOCK.now())})
            if what == "migrations/fail" and method == "POST":
                d = data if isinstance(data, dict) else {}
                sim.kubevirt.set_failures(d.get("vmi", "*"), int(d.get("count", 1)))
                return self.send_obj(200, {"failRules": sim.kubevirt.fail_rules})
            if what == "metrics" and method in ("POST", "PUT"):
                objs = data.get("items") if isinstance(data, dict) and "items" in data else \
                    (data if isinstance(data, list) else [data])
                for o in objs:
                    sim.metrics.load_object(o)
                return self.send_obj(200, {"loaded": len(objs)})
            if what == "churn" and method == "POST":
                return self.send_obj(200, sim.churn.run(data if data is not None else {}))
            if what == "load" and method == "POST":
                n = sim.load_text(body.decode("utf-8"))
                return self.send_obj(200, {"loaded": n, "resourceVersion": sim.store.rv})
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ApiError(400, "BadRequest", "apisim control: %s" % e) from None
        raise route_not_found()


class Route:
    """A parsed resource path: which resource, namespace, name, subresource and Kubernetes verb."""

    def __init__(self, registry, method, path, query):
        self.path = path.rstrip("/") or "/"
        self.kind = "resource"
        self.group_doc = None
        self.resource_list = None
        self.res = self.ns = self.name = self.sub = None
        parts = [p for p in self.path.split("/") if p]
        if self.path == "/openapi/v2":
            self._discovery(method)
            return
        if not parts or parts[0] not in ("api", "apis"):
            raise route_not_found()
        if parts[0] == "api":
            if len(parts) == 1:
                return self._discovery(method)
            group, version, rest = "", parts[1], parts[2:]
        else:
            if len(parts) == 1:
                return self._discovery(method)
            group = parts[1]
            if len(parts) == 2:
                self.group_doc = simresources.api_group(registry, group)
                if self.group_doc is None:
                    raise route_not_found()
                return self._discovery(method)
            version, rest = parts[2], parts[3:]
        if not rest:
            self.resource_list = simresources.api_resource_list(registry, group, version)
            if self.resource_list is None:
                raise route_not_found()
            return self._discovery(method)
        legacy_watch = rest[0] == "watch"
        if legacy_watch:
            rest = rest[1:]
        if len(rest) >= 3 and rest[0] == "namespaces":
            r = registry.get(group, version, rest[2])
            if r is not None and r.namespaced:
                self.ns = rest[1]
                rest = rest[2:]
        if not rest:
            raise route_not_found()
        self.res = registry.get(group, version, rest[0])
        if self.res is None or len(rest) > 3:
            raise route_not_found()
        if self.res.namespaced is False and self.ns:
            raise route_not_found()
        self.name = rest[1] if len(rest) > 1 else None
        self.sub = rest[2] if len(rest) > 2 else None
        if self.sub and self.sub not in self.res.subresources:
            raise route_not_found()
        if self.name is not None and self.res.namespaced and self.ns is None:
            raise route_not_found()
        watch = legacy_watch or query.get("watch") in TRUE
        if method in ("GET", "HEAD"):
            self.verb = "watch" if watch else ("get" if self.name else "list")
        elif method == "POST":
            self.verb = "create"
            if self.name and self.sub != "eviction":
                raise method_not_allowed()
        elif method == "PUT":
            self.verb = "update"
        elif method == "PATCH":
            self.verb = "patch"
        elif method == "DELETE":
            self.verb = "delete" if self.name else "deletecollection"
        else:
            raise method_not_allowed()
        if self.verb in ("update", "patch", "delete") and not self.name:
            raise method_not_allowed()

    def _discovery(self, method):
        if method not in ("GET", "HEAD"):
            raise method_not_allowed()
        self.kind = "discovery"
        self.verb = "get"


# ---------------------------------------------------------------------------
# Command line

def parse_args(argv):
    p = argparse.ArgumentParser(prog="apisim.py", description="Kubernetes API simulator with KubeVirt emulation")
    p.add_argument("--snapshot", required=True, help="v1 List (JSON) with the initial cluster")
    p.add_argument("--port", type=int, required=True, help="port on 127.0.0.1 (0 = any free port)")
    p.add_argument("--migration-seconds", type=float, default=5.0, help="duration of a live migration")
    p.add_argument("--backoff-seconds", type=float, default=20.0,
                   help="KubeVirt's delay after a failed evacuation migration (doubles per failure)")
    p.add_argument("--unschedulable-timeout", type=float, default=300.0,
                   help="seconds a target pod may stay unschedulable before the migration fails")
    p.add_argument("--tls-dir", help="serve HTTPS with certificates from DIR (created with openssl if missing)")
    p.add_argument("--token", help="require this bearer token (client certificates are also accepted with TLS)")
    p.add_argument("--kubeconfig-out", help="write a kubeconfig for this server to FILE")
    p.add_argument("--faults", help="JSON file with a list of fault rules to install at start")
    p.add_argument("--watch-window", type=int, default=20000, help="events kept for watches (older: 410)")
    p.add_argument("--watch-timeout", type=float, default=1800.0, help="default watch duration in seconds")
    p.add_argument("--bookmark-seconds", type=float, default=5.0, help="bookmark interval for watches asking")
    p.add_argument("--state-out", help="write the final state as a v1 List to FILE on exit")
    p.add_argument("--verbose", action="store_true", help="log every request on stderr")
    p.add_argument("--protobuf-encoder", metavar="PATH",
                   help="pbenc binary (tests/apisim/pbenc/build.sh --print): pod LISTs whose Accept puts "
                        "application/vnd.kubernetes.protobuf first are served in kube-apiserver's protobuf "
                        "encoding; every pod is encoded at load")
    args = p.parse_args(argv)
    args.auth_required = bool(args.token or args.tls_dir)
    return args


def ssl_context(tls_dir):
    paths = simcerts.ensure_certs(tls_dir)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(paths["server.crt"], paths["server.key"])
    ctx.load_verify_locations(paths["ca.crt"])
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx, paths


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    sim = Sim(args)
    t0 = time.monotonic()
    try:
        with open(args.snapshot, encoding="utf-8") as f:
            text = f.read()
        n = sim.load_text(text)
        del text
    except (OSError, ValueError) as e:
        log("cannot load snapshot %s: %s" % (args.snapshot, e))
        return 2
    sim.finish_load()
    if args.protobuf_encoder:
        t1 = time.monotonic()
        sim.pbenc = simprotobuf.PodEncoder(args.protobuf_encoder, log)
        pods = sim.registry.get("", "v1", "pods")
        try:
            sim.pbenc.start()
            entries = sim.store.entries(pods)
            bad = sim.pbenc.fill(entries)
        except simprotobuf.EncoderError as e:
            log("--protobuf-encoder: %s" % e)
            return 2
        if bad:
            first = next(e for e in entries if type(e.pb) is not bytes)
            log("protobuf: %d pods cannot be encoded (protobuf lists holding them answer 500), first %s/%s: %s"
                % (bad, first.ns, first.name, first.pb))
        log("protobuf: encoded %d pods in %.2fs" % (len(entries) - bad, time.monotonic() - t1))
    # the loaded objects live as long as the server: out of the cyclic collector's full passes,
    # which at 150,000 pods (millions of dicts) stopped every thread for seconds at moments
    # nobody chose, in the middle of a client's requests
    gc.collect()
    gc.freeze()
    log("loaded %d objects from %s in %.2fs" % (n, args.snapshot, time.monotonic() - t0))
    if args.faults:
        try:
            with open(args.faults, encoding="utf-8") as f:
                rules = json.load(f)
            for r in rules if isinstance(rules, list) else [rules]:
                sim.faults.add(r)
        except (OSError, ValueError) as e:
            log("cannot load faults %s: %s" % (args.faults, e))
            return 2
    ctx = paths = None
    if args.tls_dir:
        try:
            ctx, paths = ssl_context(args.tls_dir)
        except (RuntimeError, OSError, ssl.SSLError) as e:
            log("TLS setup failed: %s" % e)
            return 2
    try:
        server = SimServer(("127.0.0.1", args.port), Handler, sim, ctx)
    except OSError as e:
        log("cannot listen on 127.0.0.1:%d: %s" % (args.port, e))
        return 3
    port = server.server_address[1]
    sim.server_address = "127.0.0.1:%d" % port
    scheme = "https" if ctx else "http"
    if args.kubeconfig_out:
        simcerts.write_kubeconfig(args.kubeconfig_out, simcerts.kubeconfig_text(
            "%s://127.0.0.1:%d" % (scheme, port), paths["ca.crt"] if paths else None, args.token,
            paths["client.crt"] if paths and not args.token else None,
            paths["client.key"] if paths and not args.token else None))

    # the handler only appends: one that takes a lock (Event.set does) deadlocks the main thread
    # when a second signal lands while the first handler holds it (a burst of SIGTERMs hung the
    # server 2 times in 5)
    stopping = []

    def on_signal(signum, frame):
        stopping.append(signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True,
                     name="http").start()
    threading.Thread(target=sim.controllers, daemon=True, name="controllers").start()
    log("serving %s://127.0.0.1:%d" % (scheme, port))
    print("ready", flush=True)
    while not stopping:
        time.sleep(0.2)
    sim.stop.set()
    sim.store.close()
    server.shutdown()
    server.server_close()
    if sim.pbenc is not None:
        sim.pbenc.close()
    if args.state_out:
        head, items, tail = sim.dump_state()
        with open(args.state_out, "wb") as f:
            f.write(head + b",".join(items) + tail)
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
