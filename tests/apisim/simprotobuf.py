"""Pod LISTs in kube-apiserver's protobuf encoding (`--protobuf-encoder PATH`).

Asked for `application/vnd.kubernetes.protobuf`, kube-apiserver answers a LIST with the 4
bytes `k8s\\x00` and a `runtime.Unknown` message (k8s.io/apimachinery/pkg/runtime/
generated.proto):

    1 typeMeta        {1 apiVersion "v1", 2 kind "PodList"}
    2 raw             the PodList (k8s.io/api/core/v1/generated.proto):
                        1 metadata  ListMeta {1 selfLink, 2 resourceVersion, 3 continue,
                                              4 remainingItemCount}
                        2 items     one Pod message each (repeated)
    3 contentEncoding ""
    4 contentType     ""

Go's generated code (gogo, proto2) writes every field that is no pointer, even when empty:
typeMeta's two strings, selfLink, resourceVersion and continue, contentEncoding and
contentType always; remainingItemCount (a pointer) only when set, raw always (the streaming
collection encoder, kube-apiserver's default, writes the same bytes; pbenc --list checks
that). `list_chunks` builds that envelope here; the Pods' own bytes come from pbenc
(tests/apisim/pbenc/, Go: k8s.io/api's corev1.Pod.Marshal of the Pod decoded from its JSON
as kube-apiserver decodes JSON), one long-running process per simulator, asked in batches
under a lock. Each store Entry caches its bytes in `Entry.pb` (bytes; a str is pbenc's error
for that object): entries never change, so the cache never goes stale, and a write makes a
new entry that is encoded when a protobuf list first needs it.
"""

import fcntl
import struct
import subprocess
import threading

from simutil import ApiError

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
_TRAILER = b"\x1a\x00\x22\x00"  # contentEncoding "", contentType ""
_FRAME = struct.Struct(">I")
_REPLY = struct.Struct(">BI")


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(tag, data):
    """A length-delimited field: its tag byte (field number << 3 | 2), the length, the bytes."""
    return bytes((tag,)) + varint(len(data)) + data


def list_meta(resource_version, cont="", remaining=None):
    out = field(0x0A, b"") + field(0x12, resource_version.encode()) + field(0x1A, cont.encode())
    if remaining is not None:
        out += b"\x20" + varint(remaining & 0xFFFFFFFFFFFFFFFF)  # int64 as Go writes it
    return out


def list_chunks(api_version, kind, meta, items):
    """The response body of a LIST page, as chunks: magic, Unknown{typeMeta, raw = the list
    (ListMeta `meta`, then every item's bytes), "", ""}."""
    parts = [field(0x0A, meta)]
    for it in items:
        parts.append(b"\x12" + varint(len(it)))
        parts.append(it)
    raw_len = sum(len(p) for p in parts)
    type_meta = field(0x0A, api_version.encode()) + field(0x12, kind.encode())
    head = MAGIC + field(0x0A, type_meta) + b"\x12" + varint(raw_len)
    return [head] + parts + [_TRAILER]


class EncoderError(Exception):
    """pbenc could not be run or stopped answering."""


class PodEncoder:
    """One pbenc process: frames of Pod JSON in, frames of protobuf (or an error text) out."""

    BATCH = 8192  # entries per round trip; the lock is released between batches

    def __init__(self, path, log):
        self.path = path
        self.log = log
        self.lock = threading.Lock()
        self.proc = None

    def start(self):
        """Starts pbenc and checks that it answers (an empty Pod); EncoderError if not."""
        with self.lock:
            res = self._call([b"{}"])
        if not res[0][0]:
            raise EncoderError("pbenc could not encode an empty Pod: %s" % res[0][1].decode(errors="replace"))

    def close(self):
        with self.lock:
            self._stop()

    def _stop(self):
        p, self.proc = self.proc, None
        if p is None:
            return
        try:
            p.stdin.close()
        except OSError:
            pass
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        p.stdout.close()

    def _process(self):
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None:
                self.log("pbenc exited with status %s; starting it again" % self.proc.returncode)
                self._stop()
            try:
                self.proc = subprocess.Popen([self.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             bufsize=1 << 20)
            except OSError as e:
                raise EncoderError("cannot run the protobuf encoder %s: %s" % (self.path, e)) from None
            for f in (self.proc.stdin, self.proc.stdout):
                try:  # 1 MiB pipes (Linux): 16 times fewer wake-ups than 64 KiB ones
                    fcntl.fcntl(f, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
                except OSError:
                    pass
        return self.proc

    def _call(self, raws):
        """[(ok, bytes)] for the JSON objects raws, in order; the lock is held."""
        p = self._process()
        failed = []

        def write():
            try:
                w = p.stdin.write
                for raw in raws:
                    w(_FRAME.pack(len(raw)))
                    w(raw)
                p.stdin.flush()
            except (OSError, ValueError) as e:
                failed.append(e)

        # the replies are read while the frames are written: pbenc answers as it reads, and a
        # writer that waited for its whole batch to go in first would fill both pipes
        writer = None
        if len(raws) > 1:
            writer = threading.Thread(target=write, daemon=True, name="pbenc-writer")
            writer.start()
        else:
            write()
        out = []
        read = p.stdout.read
        try:
            for _ in raws:
                hdr = read(5)
                if len(hdr) < 5:
                    break
                status, n = _REPLY.unpack(hdr)
                data = read(n) if n else b""
                if len(data) < n:
                    break
                out.append((status == 0, data))
        finally:
            if writer is not None:
                writer.join()
        if len(out) < len(raws):
            try:
                p.kill()
            except OSError:
                pass
            p.wait()
            code = p.returncode
            self._stop()
            why = ("; writing to it: %s" % failed[0]) if failed else ""
            raise EncoderError("the protobuf encoder %s stopped answering (exit status %s)%s; see the "
                               "simulator's stderr" % (self.path, code, why))
        return out

    def fill(self, entries):
        """Encodes the entries that have no bytes yet; returns how many failed."""
        todo = [e for e in entries if getattr(e, "pb", None) is None]
        bad = 0
        for i in range(0, len(todo), self.BATCH):
            batch = todo[i:i + self.BATCH]
            with self.lock:
                batch = [e for e in batch if getattr(e, "pb", None) is None]  # another thread's batch
                if not batch:
                    continue
                res = self._call([e.raw for e in batch])
            for e, (ok, data) in zip(batch, res):
                if ok:
                    e.pb = data
                else:
                    e.pb = data.decode("utf-8", "replace") or "pbenc failed"
                    bad += 1
        return bad

    def items(self, entries):
        """Every entry's Pod bytes, encoding those not done yet; ApiError 500 naming the first
        object pbenc could not encode (never a silent fallback to JSON)."""
        try:
            self.fill(entries)
        except EncoderError as e:
            raise ApiError(500, "InternalError", "Internal error occurred: apisim: %s" % e) from None
        out = []
        for e in entries:
            pb = e.pb
            if type(pb) is not bytes:
                what = "%s/%s" % (e.ns, e.name) if e.ns else e.name
                raise ApiError(500, "InternalError",
                               'Internal error occurred: apisim: pod "%s" cannot be encoded as protobuf: %s'
                               % (what, pb),
                               {"name": e.name, "kind": "pods", "causes": [{"message": pb}]})
            out.append(pb)
        return out
