/* doc_pb.c - Kubernetes' protobuf encoding into doc trees; see doc_pb.h.
 *
 * One pass over each message: a field the schema names is built (going down into the
 * messages it names), every other one is stepped over by its length, never looked into. A
 * map's pairs are allocated at the most its schema can give; a list grows in the item's arena
 * (doubling), which is reset after every item. Go writes fields in ascending number order,
 * so the schema (sorted the same way) is looked up from where the last field was found. */
#include "doc_pb.h"

#include "utf8.h"

#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

/* a schema message names at most this many fields (checked where it is read) */
#define PB_MAX_FIELDS 32
/* messages nested deeper than this are refused (Pod needs 8) */
#define PB_MAX_DEPTH 24

typedef struct {
  arena *a;
  const uint8_t *base;
  const char *name;
  dserr *err;
  int depth;
  const char *path[PB_MAX_DEPTH + 1]; /* the fields being read, for messages; NULL: items[item] */
  size_t item;
  char *next, *limit; /* what is left of the chunk taken from a (pb_alloc) */
} pbr;

/* The chunk pb_alloc carves nodes and strings from */
#define PB_CHUNK 8192

static void *pb_alloc_chunk(pbr *r, size_t size, size_t align) {
  if (size > PB_CHUNK / 4)
    return arena_alloc_uninit(r->a, size, align);
  r->next = arena_alloc_uninit(r->a, PB_CHUNK, alignof(max_align_t));
  r->limit = r->next + PB_CHUNK;
  void *p = r->next;
  r->next += size;
  return p;
}

/* size bytes at alignment align (a power of two) in r->a, not zeroed */
static inline void *pb_alloc(pbr *r, size_t size, size_t align) {
  char *p = (char *)(((uintptr_t)r->next + align - 1) & ~(uintptr_t)(align - 1));
  if (!r->next || size > (size_t)(r->limit - p))
    return pb_alloc_chunk(r, size, align);
  r->next = p + size;
  return p;
}

/* the arena changes (or is reset): no chunk of the old one is used any more */
static void pb_use(pbr *r, arena *a) {
  r->a = a;
  r->next = r->limit = NULL;
}

static int fail(pbr *r, const uint8_t *at, const char *fmt, const char *what) {
  char where[512];
  size_t n = 0;
  where[0] = 0;
  for (int i = 0; i < r->depth && n < sizeof where - 1; i++) {
    int w = r->path[i] ? snprintf(where + n, sizeof where - n, "%s%s", i ? "." : "", r->path[i])
                       : snprintf(where + n, sizeof where - n, "items[%zu]", r->item);
    if (w < 0)
      break;
    n += (size_t)w;
  }
  char msg[256];
  snprintf(msg, sizeof msg, fmt, what);
  return dserr_set(r->err, "%s: protobuf at byte %td%s%s: %s", r->name, at - r->base,
                   *where ? ", field " : "", where, msg);
}

static inline bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  const uint8_t *q = *p;
  if (q < end && *q < 0x80) {
    *v = *q;
    *p = q + 1;
    return true;
  }
  uint64_t x = 0;
  for (int shift = 0; q < end && shift < 64; shift += 7) {
    uint8_t b = *q++;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (b < 0x80) {
      *v = x;
      *p = q;
      return true;
    }
  }
  return false;
}

/* A field as read from the wire: where it starts, its number and wire type, its value's extent
 * (a length-delimited value without its length) */
typedef struct {
  const uint8_t *at, *val, *vend;
  uint32_t num;
  int wire;
} pbfield;

static int fail(pbr *r, const uint8_t *at, const char *fmt, const char *what);

/* The field at *p (before end) into w, *p moved past it. false when it is malformed: the read
 * has failed with the byte offset and why. */
static inline __attribute__((always_inline)) bool next_field(pbr *r, const uint8_t **p,
                                                             const uint8_t *end, pbfield *w) {
  uint64_t tag, len;
  const char *why;
  w->at = *p;
  if (!varint(p, end, &tag)) {
    why = "a field tag is cut off or longer than 10 bytes";
    goto bad;
  }
  w->wire = (int)(tag & 7);
  if (tag >> 3 == 0 || tag >> 3 > UINT32_MAX >> 3) {
    why = "a field number out of range";
    goto bad;
  }
  w->num = (uint32_t)(tag >> 3);
  w->val = *p;
  switch (w->wire) {
  case WIRE_VARINT:
    if (!varint(p, end, &len)) {
      why = "a varint is cut off or longer than 10 bytes";
      goto bad;
    }
    break;
  case WIRE_I64:
  case WIRE_I32: {
    size_t n = w->wire == WIRE_I64 ? 8 : 4;
    if ((size_t)(end - *p) < n) {
      why = "a fixed-size value is cut off";
      goto bad;
    }
    *p += n;
    break;
  }
  case WIRE_LEN:
    if (!varint(p, end, &len)) {
      why = "a length is cut off or longer than 10 bytes";
      goto bad;
    }
    if (len > (uint64_t)(end - *p)) {
      why = "a length runs past the end of its message";
      goto bad;
    }
    w->val = *p;
    *p += len;
    break;
  default: why = "a group or an unknown wire type (3, 4, 6 or 7)"; goto bad;
  }
  w->vend = *p;
  return true;
bad:
  fail(r, w->at, "%s", why);
  return false;
}

/* The schema field numbered num, looked for from *cur on (the schema is in ascending order, as
 * Go writes the fields), from the start when num is below the field at *cur. */
static inline const pb_field *find_field(const pb_msg *s, uint32_t num, size_t *cur,
                                         size_t *index) {
  size_t j = *cur < s->n && s->fields[*cur].num <= num ? *cur : 0;
  while (j < s->n && s->fields[j].num < num)
    j++;
  *cur = j < s->n ? j : 0;
  if (j < s->n && s->fields[j].num == num) {
    *index = j;
    return &s->fields[j];
  }
  return NULL;
}

static int wire_of(const pb_field *f) {
  return f->kind == PB_INT || f->kind == PB_BOOL ? WIRE_VARINT : WIRE_LEN;
}

/* Length of the UTF-8 sequence at s[0] (of n > 0 bytes), 0 when it is not a valid one */
static inline size_t utf8_seq(const uint8_t *s, size_t n) {
  if (s[0] < 0x80)
    return 1;
  int k = utf8_seq_len(s, s + n);
  return k > 0 ? (size_t)k : 0;
}

/* The bytes as the C string the JSON page would give: kube-apiserver's JSON writes each byte
 * that is not part of valid UTF-8 as U+FFFD (Go's encoding/json), so the same is done here; a
 * NUL byte ends the string for every reader of the tree, as a \u0000 in JSON does. */
static const char *copy_text(pbr *r, const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      uint64_t w;
      memcpy(&w, s + i, 8);
      if (!(w & 0x8080808080808080ull)) { /* eight ASCII bytes */
        i += 8;
        continue;
      }
    }
    size_t k = utf8_seq(s + i, n - i);
    if (!k)
      break;
    i += k;
  }
  if (i == n) {
    char *t = pb_alloc(r, n + 1, 1);
    memcpy(t, s, n);
    t[n] = 0;
    return t;
  }
  char *t = pb_alloc(r, 3 * n + 1, 1), *o = t;
  memcpy(o, s, i);
  o += i;
  while (i < n) {
    size_t k = utf8_seq(s + i, n - i);
    if (k) {
      memcpy(o, s + i, k);
      o += k;
      i += k;
    } else {
      memcpy(o, "\xEF\xBF\xBD", 3);
      o += 3;
      i++;
    }
  }
  *o = 0;
  return t;
}

static inline doc_node *new_node(pbr *r, doc_type t) {
  doc_node *n = pb_alloc(r, sizeof *n, alignof(doc_node));
  *n = (doc_node){.type = t};
  return n;
}

static int new_str(pbr *r, const uint8_t *s, const uint8_t *e, doc_node **out) {
  doc_node *n = new_node(r, DOC_STR);
  n->text = copy_text(r, s, (size_t)(e - s));
  *out = n;
  return 0;
}

static doc_node *new_int(pbr *r, int64_t v) {
  doc_node *n = new_node(r, DOC_INT);
  char buf[24];
  size_t k = sizeof buf;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  buf[--k] = 0;
  do
    buf[--k] = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  if (v < 0)
    buf[--k] = '-';
  char *text = pb_alloc(r, sizeof buf - k, 1);
  memcpy(text, buf + k, sizeof buf - k);
  n->text = text;
  n->v.i = v;
  return n;
}

static char *put_digits(char *p, int64_t v, int width) {
  for (int i = width - 1; i >= 0; i--) {
    p[i] = (char)('0' + v % 10);
    v /= 10;
  }
  return p + width;
}

/* seconds since the epoch as RFC 3339 in UTC, to the second (metav1.Time's JSON) */
static void format_time(int64_t sec, char out[40]) {
  int64_t days = sec / 86400, rem = sec % 86400;
  if (rem < 0) {
    rem += 86400;
    days--;
  }
  /* civil date from days since 1970-01-01 (H. Hinnant's algorithm) */
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  if (y < 0 || y > 9999) { /* as Go writes them; time_parse_rfc3339 refuses them */
    snprintf(out, 40, "%" PRId64 "-%02" PRId64 "-%02" PRId64 "T%02d:%02d:%02dZ", y, m, d,
             (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
    return;
  }
  char *p = put_digits(out, y, 4);
  *p++ = '-';
  p = put_digits(p, m, 2);
  *p++ = '-';
  p = put_digits(p, d, 2);
  *p++ = 'T';
  p = put_digits(p, rem / 3600, 2);
  *p++ = ':';
  p = put_digits(p, rem / 60 % 60, 2);
  *p++ = ':';
  p = put_digits(p, rem % 60, 2);
  *p++ = 'Z';
  *p = 0;
}

static int read_msg(pbr *r, const pb_msg *s, const uint8_t *p, const uint8_t *end, doc_node *map);
static int read_value(pbr *r, const pb_field *f, const uint8_t *val, const uint8_t *vend,
                      doc_node **out);

static int read_quantity(pbr *r, const uint8_t *p, const uint8_t *end, doc_node **out) {
  const uint8_t *s = NULL, *e = NULL;
  pbfield w;
  while (p < end) {
    if (!next_field(r, &p, end, &w))
      return -1;
    if (w.num == 1) {
      if (w.wire != WIRE_LEN)
        return fail(r, w.at, "%s", "a quantity's string has another wire type");
      s = w.val;
      e = w.vend;
    }
  }
  if (!s) {
    *out = new_node(r, DOC_STR);
    (*out)->text = "0";
    return 0;
  }
  return new_str(r, s, e, out);
}

/* A map entry {key = 1, value = 2} into the pair at *pair. */
static int read_entry(pbr *r, const pb_msg *entry, const uint8_t *p, const uint8_t *end,
                      doc_pair *pair) {
  const pb_field *vf = &entry->fields[1];
  const uint8_t *key = NULL, *kend = NULL, *v = NULL, *vend2 = NULL;
  pbfield w;
  while (p < end) {
    if (!next_field(r, &p, end, &w))
      return -1;
    if (w.num == 1 || w.num == 2) {
      if (w.wire != WIRE_LEN && !(w.num == 2 && w.wire == wire_of(vf)))
        return fail(r, w.at, "%s", "the wire type of a map entry is not its field's");
      if (w.num == 1) {
        key = w.val;
        kend = w.vend;
      } else {
        v = w.val;
        vend2 = w.vend;
      }
    }
  }
  if (!key)
    key = kend = end; /* an empty key */
  pair->key = copy_text(r, key, (size_t)(kend - key));
  if (!v)
    v = vend2 = end; /* an absent value is the zero value */
  return read_value(r, vf, v, vend2, &pair->value);
}

/* Time {seconds = 1, nanos = 2}: *out NULL for the zero Time */
static int read_time(pbr *r, const uint8_t *p, const uint8_t *end, doc_node **out) {
  uint64_t sec = 0;
  bool any = p < end;
  pbfield w;
  while (p < end) {
    if (!next_field(r, &p, end, &w))
      return -1;
    if ((w.num == 1 || w.num == 2) && w.wire != WIRE_VARINT)
      return fail(r, w.at, "%s", "a time's seconds or nanos have another wire type");
    const uint8_t *q = w.val;
    if (w.num == 1)
      varint(&q, w.vend, &sec);
  }
  *out = NULL;
  if (!any)
    return 0;
  char text[40];
  format_time((int64_t)sec, text);
  doc_node *n = new_node(r, DOC_STR);
  size_t len = strlen(text) + 1;
  n->text = memcpy(pb_alloc(r, len, 1), text, len);
  *out = n;
  return 0;
}

/* A value of field f (kind not PB_INLINE, not PB_MAP) into *out; NULL when it is left out. */
static int read_value(pbr *r, const pb_field *f, const uint8_t *val, const uint8_t *vend,
                      doc_node **out) {
  *out = NULL;
  switch (f->kind) {
  case PB_STRING:
    /* an omitempty string that reads as empty (none, or a NUL first) is left out */
    if ((val == vend || !*val) && (f->flags & PB_OMITEMPTY))
      return 0;
    return new_str(r, val, vend, out);
  case PB_INT: {
    uint64_t v = 0;
    varint(&val, vend, &v);
    if (v == 0 && (f->flags & PB_OMITEMPTY))
      return 0;
    *out = new_int(r, (int64_t)v); /* int32's negative values are sign-extended */
    return 0;
  }
  case PB_BOOL: {
    uint64_t v = 0;
    varint(&val, vend, &v);
    if (v == 0 && (f->flags & PB_OMITEMPTY))
      return 0;
    doc_node *n = new_node(r, DOC_BOOL);
    n->v.b = v != 0;
    n->text = v ? "true" : "false";
    *out = n;
    return 0;
  }
  case PB_MESSAGE: {
    doc_node *n = new_node(r, DOC_MAP);
    if (read_msg(r, f->msg, val, vend, n) < 0)
      return -1;
    *out = n;
    return 0;
  }
  case PB_TIME: return read_time(r, val, vend, out);
  case PB_QUANTITY: return read_quantity(r, val, vend, out);
  default: return fail(r, val, "%s", "a field kind this reader does not build");
  }
}

/* The most pairs a map of s can get: one per field, an inline message's fields instead of it */
static size_t pairs_bound(const pb_msg *s) {
  size_t n = s->n;
  for (size_t i = 0; i < s->n; i++)
    if (s->fields[i].kind == PB_INLINE)
      n += pairs_bound(s->fields[i].msg) - 1;
  return n;
}

static int field_fail(pbr *r, const pb_field *f, const pb_msg *s, const uint8_t *at,
                      const char *why) {
  r->path[r->depth++] = f->name ? f->name : s->name;
  int rc = fail(r, at, "%s", why);
  r->depth--;
  return rc;
}

/* The fields s names, from [p, end), appended to map's pairs (room for pairs_bound(s)) */
static int fill_fields(pbr *r, const pb_msg *s, const uint8_t *p, const uint8_t *end,
                       doc_node *map) {
  if (s->n > PB_MAX_FIELDS)
    return fail(r, p, "%s", "a schema names too many fields"); /* a programming error */
  doc_node *lists[PB_MAX_FIELDS];
  size_t caps[PB_MAX_FIELDS];
  uint32_t seen = 0; /* fields met: a second one is refused, a list is made at the first */
  size_t cur = 0;
  pbfield w;
  while (p < end) {
    if (!next_field(r, &p, end, &w))
      return -1;
    size_t i;
    const pb_field *f = find_field(s, w.num, &cur, &i);
    if (!f)
      continue;
    if (w.wire != wire_of(f))
      return field_fail(r, f, s, w.at, "the wire type is not the field's");
    uint32_t bit = 1u << i;
    if ((seen & bit) && !(f->flags & PB_REPEATED))
      return field_fail(r, f, s, w.at, "a field that is no list is written twice");
    if (f->kind == PB_INLINE) {
      seen |= bit;
      if (fill_fields(r, f->msg, w.val, w.vend, map) < 0)
        return -1;
      continue;
    }
    r->path[r->depth++] = f->name;
    int rc = 0;
    if (f->flags & PB_REPEATED) {
      if (!(seen & bit)) {
        lists[i] = new_node(r, f->kind == PB_MAP ? DOC_MAP : DOC_SEQ);
        caps[i] = 0;
        map->pairs[map->n++] = (doc_pair){f->name, lists[i]};
      }
      doc_node *list = lists[i];
      if (list->n == caps[i]) { /* lists are short: 4, 8, ... in the item's arena */
        size_t ncap = caps[i] ? 2 * caps[i] : 4;
        if (f->kind == PB_MAP) {
          doc_pair *grown = pb_alloc(r, ncap * sizeof *grown, alignof(doc_pair));
          if (list->n)
            memcpy(grown, list->pairs, list->n * sizeof *grown);
          list->pairs = grown;
        } else {
          doc_node **grown = pb_alloc(r, ncap * sizeof *grown, alignof(doc_node *));
          if (list->n)
            memcpy(grown, list->items, list->n * sizeof *grown);
          list->items = grown;
        }
        caps[i] = ncap;
      }
      if (f->kind == PB_MAP) {
        rc = read_entry(r, f->msg, w.val, w.vend, &list->pairs[list->n]);
        list->n += rc == 0;
      } else {
        doc_node *item;
        rc = read_value(r, f, w.val, w.vend, &item);
        if (rc == 0) /* a zero Time in a list is JSON's null there */
          list->items[list->n++] = item ? item : new_node(r, DOC_NULL);
      }
    } else {
      doc_node *v;
      rc = read_value(r, f, w.val, w.vend, &v);
      if (rc == 0 && v)
        map->pairs[map->n++] = (doc_pair){f->name, v};
    }
    seen |= bit;
    r->depth--;
    if (rc < 0)
      return -1;
  }
  return 0;
}

static int read_msg(pbr *r, const pb_msg *s, const uint8_t *p, const uint8_t *end, doc_node *map) {
  if (r->depth >= PB_MAX_DEPTH)
    return fail(r, p, "%s", "messages nested too deep");
  size_t bound = pairs_bound(s);
  map->type = DOC_MAP;
  map->n = 0;
  map->pairs = bound ? pb_alloc(r, bound * sizeof(doc_pair), alignof(doc_pair)) : NULL;
  return fill_fields(r, s, p, end, map);
}

int docpb_parse(arena *a, const char *name, const pb_msg *schema, const uint8_t *buf, size_t len,
                doc_node **out, dserr *err) {
  pbr r = {.a = a, .base = buf, .name = name, .err = err};
  doc_node *map = new_node(&r, DOC_MAP);
  if (read_msg(&r, schema, buf, buf + len, map) < 0)
    return -1;
  *out = map;
  return 0;
}

/* ---------- the list envelope ---------- */

bool docpb_is_protobuf(const char *buf, size_t len) {
  return len >= 4 && memcmp(buf, "k8s\0", 4) == 0;
}

static const pb_field type_meta_fields[] = {
    {1, PB_STRING, PB_OMITEMPTY, "apiVersion", NULL},
    {2, PB_STRING, PB_OMITEMPTY, "kind", NULL},
};
static const pb_msg type_meta = {"TypeMeta", 2, type_meta_fields};

static const pb_field list_meta_fields[] = {
    {2, PB_STRING, PB_OMITEMPTY, "resourceVersion", NULL},
    {3, PB_STRING, PB_OMITEMPTY, "continue", NULL},
    {4, PB_INT, 0, "remainingItemCount", NULL},
};
static const pb_msg list_meta = {"ListMeta", 3, list_meta_fields};

/* The envelope's parts: the list's bytes [*raw, *raw_end) and its TypeMeta. */
static int open_envelope(pbr *r, const uint8_t *buf, size_t len, const uint8_t **raw,
                         const uint8_t **raw_end, doc_node **tm) {
  *raw = *raw_end = NULL;
  *tm = NULL;
  if (len < 4 || memcmp(buf, "k8s\0", 4) != 0)
    return fail(r, buf, "%s", "the body does not start with the protobuf magic \"k8s\\0\"");
  const uint8_t *p = buf + 4, *end = buf + len;
  pbfield w;
  while (p < end) {
    if (!next_field(r, &p, end, &w))
      return -1;
    if (w.num >= 1 && w.num <= 4 && w.wire != WIRE_LEN)
      return fail(r, w.at, "%s", "a field of the runtime.Unknown envelope has another wire type");
    if (w.num == 1) {
      doc_node *m = new_node(r, DOC_MAP);
      if (read_msg(r, &type_meta, w.val, w.vend, m) < 0)
        return -1;
      *tm = m;
    } else if (w.num == 2) {
      *raw = w.val;
      *raw_end = w.vend;
    } else if (w.num == 3 && w.vend > w.val) {
      char enc[64];
      snprintf(enc, sizeof enc, "%.*s", (int)(w.vend - w.val), (const char *)w.val);
      return fail(r, w.at, "the content encoding \"%s\" is not read (only none)", enc);
    }
  }
  if (!*raw)
    return fail(r, end, "%s", "the runtime.Unknown envelope holds no raw object");
  return 0;
}

static const pb_field status_fields[] = {
    {2, PB_STRING, PB_OMITEMPTY, "status", NULL},
    {3, PB_STRING, PB_OMITEMPTY, "message", NULL},
    {4, PB_STRING, PB_OMITEMPTY, "reason", NULL},
    {6, PB_INT, PB_OMITEMPTY, "code", NULL},
};
const pb_msg docpb_status = {"Status", 4, status_fields};

/* the envelope's kind is `kind` (when non-NULL); the TypeMeta read is tm */
static int check_kind(pbr *r, const uint8_t *buf, const doc_node *tm, const char *kind) {
  const char *got = doc_str(doc_get(tm, "kind"));
  if (!kind || (got && strcmp(got, kind) == 0))
    return 0;
  char what[160];
  snprintf(what, sizeof what, "%s, expected %s", got ? got : "no kind", kind);
  return fail(r, buf + 4, "the envelope says %s", what);
}

int docpb_parse_object(arena *a, const char *name, const uint8_t *buf, size_t len, const char *kind,
                       const pb_msg *schema, doc_node **out, dserr *err) {
  pbr r = {.a = a, .base = buf, .name = name, .err = err};
  const uint8_t *p = NULL, *end = NULL;
  doc_node *tm = NULL;
  if (open_envelope(&r, buf, len, &p, &end, &tm) < 0 || check_kind(&r, buf, tm, kind) < 0)
    return -1;
  doc_node *map = new_node(&r, DOC_MAP);
  if (read_msg(&r, schema, p, end, map) < 0)
    return -1;
  *out = map;
  return 0;
}

int docpb_stream_list(const char *name, const uint8_t *buf, size_t len, const char *kind,
                      const pb_msg *item_schema, doc_item_cb cb, void *ctx, arena *hdr_arena,
                      doc_node **header, size_t *count, dserr *err) {
  arena *scratch = hdr_arena ? NULL : arena_new(4096); /* no header wanted */
  arena *ha = hdr_arena ? hdr_arena : scratch;
  pbr r = {.a = ha, .base = buf, .name = name, .err = err};
  *count = 0;
  if (header)
    *header = NULL;
  const uint8_t *p = NULL, *end = NULL;
  doc_node *tm = NULL;
  int rc = open_envelope(&r, buf, len, &p, &end, &tm);
  const char *got = doc_str(doc_get(tm, "kind"));
  if (rc == 0)
    rc = check_kind(&r, buf, tm, kind);
  doc_node *meta = NULL;
  arena *items = rc == 0 ? arena_new(64 * 1024) : NULL;
  pbfield w;
  while (rc == 0 && p < end) {
    if (!next_field(&r, &p, end, &w)) {
      rc = -1;
      break;
    }
    if ((w.num == 1 || w.num == 2) && w.wire != WIRE_LEN) {
      rc = fail(&r, w.at, "%s", "the list's metadata or items have another wire type");
      break;
    }
    if (w.num == 1) {
      pb_use(&r, ha);
      r.path[r.depth++] = "metadata";
      meta = new_node(&r, DOC_MAP);
      rc = read_msg(&r, &list_meta, w.val, w.vend, meta);
      r.depth--;
    } else if (w.num == 2) {
      pb_use(&r, items); /* reset after the last item */
      r.item = *count;
      r.path[r.depth++] = NULL; /* items[r.item] in a message */
      doc_node *item = new_node(&r, DOC_MAP);
      rc = read_msg(&r, item_schema, w.val, w.vend, item);
      r.depth--;
      if (rc == 0) {
        (*count)++;
        rc = cb(ctx, item, err);
      }
      arena_reset(items);
    }
  }
  arena_free(items);
  if (rc == 0 && header && hdr_arena) {
    pb_use(&r, ha);
    doc_node *h = new_node(&r, DOC_MAP);
    h->pairs = pb_alloc(&r, 2 * sizeof(doc_pair), alignof(doc_pair));
    if (got)
      h->pairs[h->n++] = (doc_pair){"kind", doc_get(tm, "kind")};
    h->pairs[h->n++] = (doc_pair){"metadata", meta ? meta : new_node(&r, DOC_MAP)};
    *header = h;
  }
  arena_free(scratch);
  return rc;
}

int docpb_list_continue(arena *a, const uint8_t *buf, size_t len, const char **token) {
  dserr err;
  pbr r = {.a = a, .base = buf, .name = "", .err = &err};
  const uint8_t *p, *end;
  doc_node *tm;
  *token = NULL;
  if (open_envelope(&r, buf, len, &p, &end, &tm) < 0)
    return -1;
  pbfield w;
  while (p < end) {
    if (!next_field(&r, &p, end, &w))
      return -1;
    if (w.num == 1 && w.wire == WIRE_LEN) {
      doc_node *meta = new_node(&r, DOC_MAP);
      if (read_msg(&r, &list_meta, w.val, w.vend, meta) < 0)
        return -1;
      *token = doc_str(doc_get(meta, "continue"));
      return 0;
    }
  }
  return 0;
}

/* ---------- the JSON tree cut down to a schema (tests) ---------- */

static bool zero_scalar(const doc_node *v) {
  return (v->type == DOC_STR && !*v->text) || (v->type == DOC_INT && v->v.i == 0 && !v->big) ||
         (v->type == DOC_BOOL && !v->v.b);
}

static doc_node *project_value(arena *a, const pb_field *f, const doc_node *v) {
  if ((f->kind == PB_MESSAGE) && v->type == DOC_MAP)
    return docpb_project(a, f->msg, v);
  return doc_copy(a, v);
}

static void project_into(arena *a, const pb_msg *s, const doc_node *json, doc_node *out) {
  for (size_t i = 0; i < s->n; i++) {
    const pb_field *f = &s->fields[i];
    if (f->kind == PB_INLINE) {
      project_into(a, f->msg, json, out);
      continue;
    }
    const doc_node *v = doc_get(json, f->name);
    if (!v || v->type == DOC_NULL)
      continue;
    doc_node *nv;
    if ((f->flags & PB_REPEATED) && f->kind == PB_MAP && v->type == DOC_MAP) {
      if (!v->n)
        continue;
      nv = doc_new_map(a);
      const pb_field *vf = &f->msg->fields[1];
      /* every entry as it is, a repeated key too (the reader keeps them all) */
      nv->pairs = arena_alloc(a, v->n * sizeof *nv->pairs);
      for (size_t k = 0; k < v->n; k++)
        nv->pairs[nv->n++] =
            (doc_pair){arena_strdup(a, v->pairs[k].key), project_value(a, vf, v->pairs[k].value)};
    } else if ((f->flags & PB_REPEATED) && v->type == DOC_SEQ) {
      if (!v->n)
        continue;
      nv = doc_new_seq(a);
      for (size_t k = 0; k < v->n; k++)
        doc_seq_add(a, nv, project_value(a, f, v->items[k]));
    } else {
      if ((f->flags & PB_OMITEMPTY) && zero_scalar(v))
        continue;
      nv = project_value(a, f, v);
    }
    doc_map_put(a, out, f->name, nv);
  }
}

doc_node *docpb_project(arena *a, const pb_msg *schema, const doc_node *json) {
  doc_node *out = doc_new_map(a);
  if (json && json->type == DOC_MAP)
    project_into(a, schema, json, out);
  return out;
}
