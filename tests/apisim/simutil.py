"""Small helpers shared by every part of the API simulator.

The simulator answers errors the way kube-apiserver does: a `v1 Status`
object whose `code`, `reason` and `message` a client library can classify
(client-go's `IsNotFound`, `IsConflict`, `IsTooManyRequests` ...).  Code deep
inside the store or the KubeVirt emulation raises `ApiError`; the HTTP layer
turns it into a response, so no handler ever has to build a Status by hand.

Also here: a clock that tests can move forward (migrations and back-offs are
timed against it), RFC 3339 timestamps, Kubernetes resource quantities and
compact JSON encoding.
"""

import json
import random
import re
import string
import threading
import time
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation


# ---------------------------------------------------------------------------
# Errors as Status objects

class ApiError(Exception):
    """An error the client should see as a Status object with HTTP `code`."""

    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self):
        return status_object(self.code, self.reason, self.message, self.details)


def status_object(code, reason, message, details=None):
    """A `v1 Status` failure body; `reason` empty is omitted as Go's omitempty does."""
    st = {"kind": "Status", "apiVersion": "v1", "metadata": {},
          "status": "Failure", "message": message}
    if reason:
        st["reason"] = reason
    if details:
        st["details"] = details
    st["code"] = code
    return st


def success_status(code):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success", "code": code}


def qualified(res):
    """`pods` or `virtualmachineinstances.kubevirt.io`: how apiserver names a resource in messages."""
    return res.plural + ("." + res.group if res.group else "")


def _details(res, name):
    d = {"name": name}
    if res.group:
        d["group"] = res.group
    d["kind"] = res.plural
    return d


def not_found(res, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (qualified(res), name),
                    _details(res, name))


def already_exists(res, name):
    return ApiError(409, "AlreadyExists", '%s "%s" already exists' % (qualified(res), name),
                    _details(res, name))


def conflict(res, name, why):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s'
                    % (qualified(res), name, why), _details(res, name))


def modified_conflict(res, name):
    return conflict(res, name, "the object has been modified; please apply your changes "
                    "to the latest version and try again")


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def invalid(res, kind, name, field, detail, kind_of_error="Invalid value"):
    """422 as apiserver's field validation reports it."""
    msg = '%s "%s" is invalid: %s: %s: %s' % (kind, name, field, kind_of_error, detail)
    d = _details(res, name)
    d["kind"] = kind
    d["causes"] = [{"reason": "FieldValueInvalid", "message": "%s: %s" % (kind_of_error, detail),
                    "field": field}]
    return ApiError(422, "Invalid", msg, d)


def method_not_allowed():
    return ApiError(405, "MethodNotAllowed",
                    "the server does not allow this method on the requested resource")


def route_not_found():
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    {"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]})


def expired(message):
    return ApiError(410, "Expired", message)


# ---------------------------------------------------------------------------
# Clock

class SimClock:
    """Wall time plus an offset that `/_sim/migrations/advance` moves forward."""

    def __init__(self):
        self._offset = 0.0
        self._lock = threading.Lock()

    def now(self):
        with self._lock:
            return time.time() + self._offset

    def advance(self, seconds):
        with self._lock:
            self._offset += seconds


CLOCK = SimClock()


def rfc3339(ts=None):
    if ts is None:
        ts = CLOCK.now()
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(ts=None):
    """MicroTime, as used by Lease renewTime and events.k8s.io eventTime."""
    if ts is None:
        ts = CLOCK.now()
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text):
    """Seconds since the epoch for an RFC 3339 string, None if unparsable."""
    if not isinstance(text, str) or not text:
        return None
    t = text.strip()
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(t).timestamp()
    except ValueError:
        # fromisoformat in 3.11 handles most forms; fall back for odd fractions
        m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)", t)
        if not m:
            return None
        return datetime.fromisoformat(m.group(1) + "+00:00").timestamp()


def human_duration(seconds):
    """kubectl's AGE formatting (apimachinery duration.HumanDuration)."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return "%ds" % s
    m = s // 60
    if m < 10:
        return "%dm%ds" % (m, s % 60) if s % 60 else "%dm" % m
    if m < 180:
        return "%dm" % m
    h = s // 3600
    if h < 8:
        return "%dh%dm" % (h, m % 60) if m % 60 else "%dh" % h
    if h < 48:
        return "%dh" % h
    if h < 24 * 8:
        return "%dd%dh" % (h // 24, h % 24) if h % 24 else "%dd" % (h // 24)
    if h < 24 * 365 * 2:
        return "%dd" % (h // 24)
    if h < 24 * 365 * 8:
        y = h // (24 * 365)
        d = (h % (24 * 365)) // 24
        return "%dy%dd" % (y, d) if d else "%dy" % y
    return "%dy" % (h // (24 * 365))


def age_of(obj):
    ts = parse_time(obj.get("metadata", {}).get("creationTimestamp"))
    if ts is None:
        return "<unknown>"
    return human_duration(CLOCK.now() - ts)


# ---------------------------------------------------------------------------
# Quantities

_SUFFIX = {
    "Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "Ti": 1024 ** 4, "Pi": 1024 ** 5, "Ei": 1024 ** 6,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1,
    "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18,
}
_QTY = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


def parse_quantity(q):
    """A Kubernetes quantity as a Decimal in base units; ValueError if malformed."""
    if isinstance(q, (int, float)):
        return Decimal(str(q))
    if not isinstance(q, str):
        raise ValueError("quantity must be a string: %r" % (q,))
    m = _QTY.match(q.strip())
    if not m:
        raise ValueError("unable to parse quantity's suffix: %r" % q)
    try:
        num = Decimal(m.group(1) + (m.group(2) or ""))
    except InvalidOperation:
        raise ValueError("unable to parse quantity: %r" % q) from None
    return num * Decimal(_SUFFIX[m.group(3) or ""])


def quantity_or(q, default=Decimal(0)):
    try:
        return parse_quantity(q)
    except ValueError:
        return default


def milli(q):
    """CPU as integer millicores (rounded up, as the scheduler does)."""
    v = quantity_or(q) * 1000
    return int(v.to_integral_value(rounding="ROUND_CEILING"))


def bytes_of(q):
    v = quantity_or(q)
    return int(v.to_integral_value(rounding="ROUND_CEILING"))


def format_cpu(millicores):
    return "%dm" % millicores


def format_memory(nbytes):
    if nbytes % (1024 ** 2) == 0:
        return "%dMi" % (nbytes // 1024 ** 2)
    if nbytes % 1024 == 0:
        return "%dKi" % (nbytes // 1024)
    return str(nbytes)


# ---------------------------------------------------------------------------
# Names and JSON

_GEN_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apiserver's SimpleNameGenerator alphabet
_rand = random.Random()


def generate_suffix(n=5):
    return "".join(_rand.choice(_GEN_ALPHABET) for _ in range(n))


def dumps(obj):
    """Compact UTF-8 JSON bytes, the form objects are stored and served in."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def loads(raw):
    return json.loads(raw)


DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def valid_name(name):
    return isinstance(name, str) and 0 < len(name) <= 253 and bool(DNS1123_SUBDOMAIN.match(name))


def printable_ascii(s):
    return all(c in string.printable for c in s)
