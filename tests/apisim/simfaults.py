"""Faults on demand: make chosen requests fail the way networks and apiservers do.

A rule matches requests by method, Kubernetes verb, a regular expression
searched in the path and one searched in the raw query string (`query`, e.g.
"continue=" for the later pages of a paged list), and applies, in this order:
  latency   seconds to sleep before answering
  status    answer this HTTP code with a Status body (reason/message/retryAfter
            optional; 429 and 5xx get a `Retry-After` header when retryAfter set)
  reset     drop the connection with a TCP reset, no response
  truncate  send the normal response but only its first N body bytes, then
            close (Content-Length still announces the full body); with
            `reset` as well, the connection is reset after those bytes
            (a reset in the middle of a response)
On a watch (verb "watch") that is answered, these act on the stream instead:
  watchDrop       events are not sent at all (the client's cache goes stale)
  watchDuplicate  every event is sent twice
  watchReorder    the events of one batch are sent pairwise swapped (a newer
                  before an older one)
  watchExpire N   after N events an ERROR event with a 410 Status ends the stream
                  (as when the watch falls out of etcd's history)
  watchCut N      after N events the connection is reset mid-stream
  watchDelay S    every batch of events is held S seconds before it is sent (a
                  watch that lags behind the store, as an API server's watch
                  cache may; what happens meanwhile comes in the next batch)
`skip` lets the next N matching requests through untouched before the rule
applies (the second list of a kind, not the first); `count` limits a rule to
the next N matching requests (then it is removed);
`fraction` applies it to that share of matching requests (seeded, so runs
repeat).  Rules are tried in the order they were added; the first one that
fires wins.  They come from `--faults FILE` (a JSON list) or
`POST /_sim/faults` and are listed/cleared with GET/DELETE on the same path.
Control requests under `/_sim/` are never faulted.
"""

import random
import re
import threading

_REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
            409: "Conflict", 410: "Expired", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
            503: "ServiceUnavailable", 504: "Timeout"}
_WATCH_KEYS = {"watchDrop", "watchDuplicate", "watchReorder", "watchExpire", "watchCut", "watchDelay"}
_KEYS = {"method", "verb", "path", "query", "latency", "status", "reason", "message", "retryAfter", "reset", "truncate",
         "count", "fraction", "seed", "skip"} | _WATCH_KEYS


class Fault:
    """What to do to one request (the outcome of matching)."""

    def __init__(self, rule):
        self.rule_id = rule.get("id")
        self.latency = float(rule.get("latency") or 0)
        self.status = rule.get("status")
        self.reason = rule.get("reason", _REASONS.get(self.status, "") if self.status else "")
        self.message = rule.get("message") or ("apisim injected fault: HTTP %s" % self.status)
        self.retry_after = rule.get("retryAfter")
        self.reset = bool(rule.get("reset"))
        self.truncate = rule.get("truncate")
        self.watch_drop = bool(rule.get("watchDrop"))
        self.watch_duplicate = bool(rule.get("watchDuplicate"))
        self.watch_reorder = bool(rule.get("watchReorder"))
        self.watch_expire = rule.get("watchExpire")
        self.watch_cut = rule.get("watchCut")
        self.watch_delay = float(rule.get("watchDelay") or 0)

    def on_watch(self):
        """True when the rule changes a watch stream rather than the request."""
        return (self.watch_drop or self.watch_duplicate or self.watch_reorder or self.watch_expire is not None
                or self.watch_cut is not None or self.watch_delay > 0)

    def describe(self):
        """A short text for the request journal: what was done to the request."""
        parts = []
        if self.latency:
            parts.append("latency=%g" % self.latency)
        if self.status:
            parts.append("status=%d" % self.status)
        if self.truncate is not None:
            parts.append("truncate=%d" % int(self.truncate))
        if self.reset:
            parts.append("reset")
        for key, value in (("watchDrop", self.watch_drop), ("watchDuplicate", self.watch_duplicate),
                           ("watchReorder", self.watch_reorder), ("watchExpire", self.watch_expire),
                           ("watchCut", self.watch_cut)):
            if value is True:
                parts.append(key)
            elif value not in (None, False):
                parts.append("%s=%d" % (key, int(value)))
        if self.watch_delay:
            parts.append("watchDelay=%g" % self.watch_delay)
        return ",".join(parts)


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []
        self.next_id = 1
        self.fired = 0

    def add(self, rule):
        """Validate and append a rule; returns it with its id.  ValueError when malformed."""
        if not isinstance(rule, dict):
            raise ValueError("a fault rule must be a JSON object")
        unknown = set(rule) - _KEYS - {"id"}
        if unknown:
            raise ValueError("unknown fault rule keys: %s" % ", ".join(sorted(unknown)))
        if not any(rule.get(k) not in (None, False, 0) for k in ("latency", "status", "reset", "truncate")) and \
                not any(rule.get(k) is not None and rule.get(k) is not False for k in _WATCH_KEYS):
            raise ValueError("a fault rule needs one of latency, status, reset, truncate, " + ", ".join(sorted(_WATCH_KEYS)))
        for key in ("watchExpire", "watchCut"):
            if rule.get(key) is not None and (not isinstance(rule[key], int) or rule[key] < 0):
                raise ValueError("%s must be a number of events (0 or more)" % key)
        delay = rule.get("watchDelay")
        if delay is not None and (isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= 3600):
            raise ValueError("watchDelay must be a number of seconds from 0 to 3600")
        if rule.get("status") is not None and not (isinstance(rule["status"], int) and 100 <= rule["status"] <= 599):
            raise ValueError("status must be an HTTP code")
        for key in ("path", "query"):
            if rule.get(key):
                try:
                    re.compile(rule[key])
                except re.error as e:
                    raise ValueError("%s is not a regular expression: %s" % (key, e)) from None
        if rule.get("fraction") is not None and not (0 <= float(rule["fraction"]) <= 1):
            raise ValueError("fraction must be between 0 and 1")
        if rule.get("count") is not None and (not isinstance(rule["count"], int) or rule["count"] < 1):
            raise ValueError("count must be a positive integer")
        if rule.get("skip") is not None and (isinstance(rule["skip"], bool) or not isinstance(rule["skip"], int)
                                             or rule["skip"] < 0):
            raise ValueError("skip must be a number of requests (0 or more)")
        r = dict(rule)
        with self.lock:
            r["id"] = self.next_id
            self.next_id += 1
            r["_re"] = re.compile(r["path"]) if r.get("path") else None
            r["_qre"] = re.compile(r["query"]) if r.get("query") else None
            r["_rng"] = random.Random(r.get("seed", r["id"]))
            self.rules.append(r)
        return self.public(r)

    @staticmethod
    def public(r):
        return {k: v for k, v in r.items() if not k.startswith("_")}

    def list(self):
        with self.lock:
            return [self.public(r) for r in self.rules]

    def clear(self, rule_id=None):
        with self.lock:
            if rule_id is None:
                n = len(self.rules)
                self.rules = []
            else:
                before = len(self.rules)
                self.rules = [r for r in self.rules if r["id"] != rule_id]
                n = before - len(self.rules)
            return n

    def match(self, method, verb, path, query=""):
        """The Fault for this request, or None."""
        with self.lock:
            for r in self.rules:
                if r.get("method") and r["method"].upper() != method:
                    continue
                if r.get("verb") and r["verb"] != verb:
                    continue
                if r["_re"] is not None and not r["_re"].search(path):
                    continue
                if r["_qre"] is not None and not r["_qre"].search(query):
                    continue
                if r.get("fraction") is not None and r["_rng"].random() >= float(r["fraction"]):
                    continue
                if r.get("skip"):
                    r["skip"] -= 1
                    continue
                if r.get("count") is not None:
                    r["count"] -= 1
                    if r["count"] <= 0:
                        self.rules.remove(r)
                self.fired += 1
                return Fault(r)
        return None
