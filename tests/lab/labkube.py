"""List-and-watch caches and a work queue for the cluster lab's Python parts (standard library).

The lab's virt-handler stand-in (handler.py) and the lab itself react to what the API server
tells them the way a controller does: one list, then a watch from its resourceVersion, kept in a
dict; a dropped watch resumes from the last version seen (bookmarks keep it current), a 410 Gone
relists and reports the differences as events. Event callbacks only queue keys; the work is done
by workers taking keys from a `WorkQueue`, which never hands the same key to two workers at
once and folds repeated adds of a waiting key into one. So the cost of an event is one object,
never a pass over all of them, which is what a lab of hundreds of nodes and thousands of VMs
needs.

Requests go through tests/realapi/kubeclient.py's `Client` (bearer token, the lab's CA).
"""

import collections
import heapq
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "realapi"))

from kubeclient import ApiError  # noqa: E402,F401  (re-exported for the lab's modules)


def key_of(obj):
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    return "%s/%s" % (ns, md["name"]) if ns else md["name"]


class Informer:
    """One collection (e.g. /api/v1/pods), listed then watched; `on_event(type, obj, old)` is
    called from the informer's thread for ADDED, MODIFIED and DELETED, with the previous object
    (or None). Readers use get()/values(), which are safe from any thread."""

    def __init__(self, client, path, on_event=None, label_selector=None, field_selector=None,
                 name=None, log=None):
        self.client, self.path, self.on_event = client, path, on_event
        self.label_selector, self.field_selector = label_selector, field_selector
        self.name = name or path
        self.log = log or (lambda m: None)
        self.objects = {}
        self.lock = threading.Lock()
        self.synced = threading.Event()
        self.stopping = threading.Event()
        self.rv = None
        self.conn = None
        self.thread = None
        self.errors = 0

    def start(self):
        self.thread = threading.Thread(target=self._run, daemon=True, name="informer " + self.name)
        self.thread.start()
        return self

    def wait_synced(self, timeout=60):
        if not self.synced.wait(timeout):
            raise RuntimeError("informer %s did not sync in %d s" % (self.name, timeout))

    def stop(self):
        self.stopping.set()
        c = self.conn
        if c is not None and c.sock is not None:
            try:  # unblocks the thread's readline()
                c.sock.shutdown(2)
            except OSError:
                pass
        if self.thread is not None:
            self.thread.join(5)

    def get(self, key):
        with self.lock:
            return self.objects.get(key)

    def values(self):
        with self.lock:
            return list(self.objects.values())

    # -- the loop --------------------------------------------------------------------

    def _query(self, **extra):
        q = {}
        if self.label_selector:
            q["labelSelector"] = self.label_selector
        if self.field_selector:
            q["fieldSelector"] = self.field_selector
        q.update(extra)
        return q

    def _emit(self, typ, obj, old):
        if self.on_event is None:
            return
        try:
            self.on_event(typ, obj, old)
        except Exception as e:  # a callback's bug must not stop the cache
            self.errors += 1
            self.log("informer %s: event handler failed: %r" % (self.name, e))

    def _relist(self):
        items, page = self.client.list_all(self.path, **self._query())
        fresh = {key_of(o): o for o in items}
        with self.lock:
            old = self.objects
            self.objects = fresh
        for k, o in fresh.items():
            prev = old.get(k)
            if prev is None:
                self._emit("ADDED", o, None)
            elif prev["metadata"].get("resourceVersion") != o["metadata"].get("resourceVersion"):
                self._emit("MODIFIED", o, prev)
        for k, o in old.items():
            if k not in fresh:
                self._emit("DELETED", o, o)
        self.rv = page["metadata"]["resourceVersion"]
        self.synced.set()

    def _run(self):
        need_list = True
        while not self.stopping.is_set():
            try:
                if need_list:
                    self._relist()
                    need_list = False
                need_list = self._watch()
            except Exception as e:
                if self.stopping.is_set():
                    return
                self.errors += 1
                self.log("informer %s: %s; retrying" % (self.name, e))
                self.stopping.wait(0.5)

    def _watch(self):
        """Streams events until the server closes the watch; True when a relist is needed."""
        q = self._query(watch="1", allowWatchBookmarks="true", resourceVersion=self.rv,
                        timeoutSeconds="600")
        c = http.client.HTTPSConnection(self.client.host, self.client.port, context=self.client.ctx,
                                        timeout=None)
        self.conn = c
        try:
            c.request("GET", self.path + "?" + urllib.parse.urlencode(q),
                      headers={"Authorization": "Bearer " + self.client.token, "Accept": "application/json"})
            r = c.getresponse()
            if r.status == 410:
                return True
            if r.status != 200:
                raise RuntimeError("watch %s: HTTP %d %s" % (self.path, r.status, r.read()[:300]))
            while not self.stopping.is_set():
                line = r.readline()
                if not line:
                    return False  # the server ended the watch: resume from self.rv
                ev = json.loads(line)
                typ, obj = ev.get("type"), ev.get("object") or {}
                if typ == "ERROR":
                    if obj.get("code") == 410:
                        return True
                    raise RuntimeError("watch %s: %s" % (self.path, obj.get("message")))
                rv = (obj.get("metadata") or {}).get("resourceVersion")
                if typ == "BOOKMARK":
                    self.rv = rv or self.rv
                    continue
                k = key_of(obj)
                with self.lock:
                    old = self.objects.get(k)
                    if typ == "DELETED":
                        self.objects.pop(k, None)
                    else:
                        self.objects[k] = obj
                self.rv = rv or self.rv
                self._emit(typ, obj, old)
            return False
        finally:
            self.conn = None
            c.close()


class WorkQueue:
    """Keys to work on, as client-go's workqueue: a key added while it waits is queued once; a
    key added while a worker has it is queued again after done(); add_after() delays an add."""

    def __init__(self):
        self.cond = threading.Condition()
        self.queue = collections.deque()  # keys in order
        self.dirty = set()       # keys waiting in self.queue
        self.processing = set()  # keys a worker holds
        self.again = set()       # keys added while processing
        self.timers = []         # heap of (when, seq, key)
        self.seq = 0
        self.closed = False

    def add(self, key):
        with self.cond:
            self._add(key)

    def _add(self, key):
        if key in self.processing:
            self.again.add(key)
            return
        if key not in self.dirty:
            self.dirty.add(key)
            self.queue.append(key)
            self.cond.notify()

    def add_after(self, key, seconds):
        if seconds <= 0:
            return self.add(key)
        with self.cond:
            self.seq += 1
            heapq.heappush(self.timers, (time.monotonic() + seconds, self.seq, key))
            self.cond.notify_all()

    def get(self):
        """The next key (None once closed); the caller calls done(key) when finished."""
        with self.cond:
            while True:
                if self.closed:
                    return None
                now = time.monotonic()
                while self.timers and self.timers[0][0] <= now:
                    self._add(heapq.heappop(self.timers)[2])
                if self.queue:
                    key = self.queue.popleft()
                    self.dirty.discard(key)
                    self.processing.add(key)
                    return key
                wait = self.timers[0][0] - now if self.timers else None
                self.cond.wait(wait)

    def done(self, key):
        with self.cond:
            self.processing.discard(key)
            if key in self.again:
                self.again.discard(key)
                self._add(key)

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def __len__(self):
        with self.cond:
            return len(self.queue) + len(self.timers)
