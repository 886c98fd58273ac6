/* doc_fast.c - the fast JSON reader; see doc_fast.h for what it accepts and why.
 *
 * Recursive descent over a buffer. Children of open containers collect on one heap stack and
 * are copied into the arena when their container closes, as the yajl tree builder does, so
 * the trees are the same node for node. Skipped parts go through the same grammar checks
 * with nothing built. A streamed file is read in windows: each unit (the root's opening, one
 * root key with its value, one list item) is parsed from its first byte again when the
 * window ended inside it, after the window has been refilled (and doubled when the unit
 * alone fills it). */
#include "doc_fast.h"

#include "utf8.h"

#include "../util/xalloc.h"

#include <stdalign.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* bytes that stand for themselves inside a string: printable ASCII but '"' and '\\' */
static const unsigned char plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* The end of the run of plain string bytes at p: sixteen at a time where SSE2 is (every x86-64),
 * then eight at a time (a word has a byte that is not plain when one is '"', '\\', below 0x20
 * or above 0x7F), then one at a time. */
static inline const unsigned char *plain_run(const unsigned char *p, const unsigned char *end) {
#ifdef __SSE2__
  /* sixteen at a time: a signed byte below 0x20 is a control character or above 0x7F */
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                space = _mm_set1_epi8(' ');
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                     _mm_cmplt_epi8(v, space));
    unsigned mask = (unsigned)_mm_movemask_epi8(special);
    if (mask)
      return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  while (end - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t quote = w ^ (ones * '"'), bslash = w ^ (ones * '\\');
    uint64_t special =
        (((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) | ((w - ones * 0x20) & ~w) | w) &
        highs;
    if (special) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      /* the lowest flagged byte is the first special one (higher flags may be borrows) */
      return p + __builtin_ctzll(special) / 8;
#else
      break;
#endif
    }
    p += 8;
  }
  while (p < end && plain[*p])
    p++;
  return p;
}

/* The rest of a string from q, a backslash in it, when the string holds only plain bytes and
 * the one-character escapes (\" \\ \/ \b \f \n \r \t), as managedFields' keys do
 * ("k:{\"name\":\"x\"}"): past its closing quote, or NULL for anything else (UTF-8, \u, a
 * control character, a bad escape, the end of the window), which read_string_slow reads from
 * the opening quote again. */
static __attribute__((noinline)) const unsigned char *escaped_string_end(const unsigned char *q,
                                                                         const unsigned char *end) {
  for (;;) {
    if (end - q < 2)
      return NULL;
    switch (q[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't': break;
    default: return NULL;
    }
    q = plain_run(q + 2, end);
    if (q >= end)
      return NULL;
    if (*q == '"')
      return q + 1;
    if (*q != '\\')
      return NULL;
  }
}

/* Past the string whose opening quote is at p, for a skipped value: plain bytes up to the
 * quote, or with one-character escapes (escaped_string_end); NULL for the rest, which
 * read_string_slow reads from p. */
static inline const unsigned char *skipped_string_end(const unsigned char *p,
                                                      const unsigned char *end) {
  const unsigned char *q = plain_run(p + 1, end);
  if (q < end && *q == '"')
    return q + 1;
  if (q < end && *q == '\\')
    return escaped_string_end(q, end);
  return NULL;
}

/* ---------- skip rules: a trie of map keys, "[]" for the elements of a list ---------- */

typedef struct skip_node {
  char *key;
  size_t klen;
  unsigned char k0;        /* key[0] */
  uint64_t kid_bits;       /* a bit per kid at skip_slot(key): a key whose bit is clear is none */
  unsigned char first[64]; /* at a bit: 1 + the first kid there (kids before it are not) */
  bool skip;               /* leave this value out */
  struct skip_node *kids;
  size_t nkids;
} skip_node;

/* Where a key falls in a node's kid_bits: most keys of a kept map are no rule's, and are
 * turned away by one bit without a look at the kids. */
static inline unsigned skip_slot(const char *key, size_t len) {
  unsigned last = len ? (unsigned char)key[len - 1] : 0;
  return ((unsigned)len * 7u + (unsigned char)key[0] * 3u + last) & 63;
}

static skip_node *skip_child(skip_node *n, const char *key, size_t len, bool add) {
  for (size_t i = 0; i < n->nkids; i++)
    if (n->kids[i].klen == len && memcmp(n->kids[i].key, key, len) == 0)
      return &n->kids[i];
  if (!add)
    return NULL;
  n->kids = xrealloc(n->kids, (n->nkids + 1) * sizeof *n->kids);
  skip_node *k = &n->kids[n->nkids++];
  memset(k, 0, sizeof *k);
  k->key = xmalloc(len + 1);
  memcpy(k->key, key, len);
  k->key[len] = 0;
  k->klen = len;
  k->k0 = (unsigned char)k->key[0];
  unsigned b = skip_slot(key, len);
  if (!(n->kid_bits >> b & 1) && n->nkids <= UCHAR_MAX)
    n->first[b] = (unsigned char)n->nkids;
  n->kid_bits |= 1ull << b;
  return k;
}

/* "spec.containers[].env" -> spec / containers / [] / env (skip) */
static void skip_add(skip_node *root, const char *path) {
  skip_node *n = root;
  const char *s = path;
  while (*s) {
    const char *e = s + strcspn(s, ".[");
    n = skip_child(n, s, (size_t)(e - s), true);
    while (e[0] == '[' && e[1] == ']') {
      n = skip_child(n, "[]", 2, true);
      e += 2;
    }
    s = *e == '.' ? e + 1 : e;
  }
  if (n != root)
    n->skip = true;
}

static void skip_free(skip_node *n) {
  for (size_t i = 0; i < n->nkids; i++) {
    skip_free(&n->kids[i]);
    free(n->kids[i].key);
  }
  free(n->kids);
}

static inline const skip_node *skip_find(const skip_node *n, const char *key, size_t len) {
  if (!n)
    return NULL;
  unsigned b = skip_slot(key, len);
  if (!(n->kid_bits >> b & 1))
    return NULL;
  /* from the first kid at that bit; the length and the first byte (kept in the node) rule out
   * nearly every other key before its text is read */
  for (size_t i = n->first[b] ? n->first[b] - 1u : 0; i < n->nkids; i++)
    if (n->kids[i].klen == len && n->kids[i].k0 == (unsigned char)key[0] &&
        memcmp(n->kids[i].key, key, len) == 0)
      return &n->kids[i];
  return NULL;
}

/* ---------- the reader ---------- */

typedef struct {
  const unsigned char *p, *end;
  bool at_eof; /* end is the end of the document; else the window may go on (DOCF_MORE) */
  arena *a;
  void **kids; /* children of open containers (maps: key, value, key, value...) */
  size_t nkids, capkids;
  char *sbuf; /* an escaped string, unescaped */
  size_t scap;
  size_t slen; /* the length of the string read_string returned last */
  int depth;
  char *bump, *bump_end; /* the part of an arena chunk not handed out yet */
} rd;

/* rd_alloc when the chunk is used up (or there is none yet) */
static __attribute__((noinline)) void *rd_alloc_chunk(rd *r, size_t size, size_t align) {
  if (size > 4096)
    return arena_alloc_uninit(r->a, size, align);
  r->bump = arena_alloc_uninit(r->a, 8192, alignof(max_align_t));
  r->bump_end = r->bump + 8192;
  r->bump += size;
  return r->bump - size;
}

/* Memory for nodes and strings, carved from chunks of the arena (one call per chunk). */
static inline void *rd_alloc(rd *r, size_t size, size_t align) {
  uintptr_t at = ((uintptr_t)r->bump + align - 1) & ~(uintptr_t)(align - 1);
  if (!r->bump || at + size > (uintptr_t)r->bump_end)
    return rd_alloc_chunk(r, size, align);
  r->bump = (char *)(at + size);
  return (void *)at;
}

/* The arena changes or is reset: forget the chunk. */
static void rd_use(rd *r, arena *a) {
  r->a = a;
  r->bump = r->bump_end = NULL;
}

static inline char *rd_strndup(rd *r, const char *s, size_t len) {
  char *p = rd_alloc(r, len + 1, 1);
  memcpy(p, s, len);
  p[len] = 0;
  return p;
}

#define OUT_OF_INPUT(r) ((r)->at_eof ? DOCF_REFUSED : DOCF_MORE)

static inline void ws(rd *r) {
  /* compact JSON, as the API server writes it, has none: one test */
  while (r->p < r->end && *r->p <= ' ' &&
         (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
    r->p++;
}

static __attribute__((noinline)) void grow_kids(rd *r) {
  r->capkids = r->capkids ? r->capkids * 2 : 256;
  r->kids = xrealloc(r->kids, r->capkids * sizeof *r->kids);
}

/* called for every key and value built: the growing is out of line */
static inline void push_kid(rd *r, void *k) {
  if (r->nkids == r->capkids)
    grow_kids(r);
  r->kids[r->nkids++] = k;
}

static inline doc_node *new_node(rd *r, doc_type t) {
  doc_node *n = rd_alloc(r, sizeof *n, alignof(doc_node));
  memset(n, 0, sizeof *n);
  n->type = t;
  return n;
}

static int hex4(const unsigned char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i], d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return -1;
    v = v << 4 | d;
  }
  *out = v;
  return 0;
}

static void sbuf_put(rd *r, size_t *n, const void *s, size_t len) {
  if (*n + len + 1 > r->scap) {
    while (*n + len + 1 > r->scap)
      r->scap = r->scap ? r->scap * 2 : 1024;
    r->sbuf = xrealloc(r->sbuf, r->scap);
  }
  memcpy(r->sbuf + *n, s, len);
  *n += len;
}

/* read_string past the first byte that is not plain (an escape, UTF-8, what is wrong) */
static __attribute__((noinline)) int read_string_slow(rd *r, const char **out) {
  const unsigned char *p = r->p + 1, *end = r->end, *run = p;
  size_t n = 0;
  bool escaped = false;
  for (;;) {
    p = plain_run(p, end);
    if (p >= end)
      return OUT_OF_INPUT(r);
    unsigned c = *p;
    if (c == '"')
      break;
    if (c >= 0x80) {
      int k = utf8_seq_len(p, end);
      if (k == 0)
        return DOCF_REFUSED;
      if (k < 0)
        return OUT_OF_INPUT(r);
      p += k;
      continue;
    }
    if (c != '\\')
      return DOCF_REFUSED; /* a control character */
    if (end - p < 2)
      return OUT_OF_INPUT(r);
    if (out) {
      if (!escaped)
        n = 0;
      sbuf_put(r, &n, run, (size_t)(p - run));
    }
    escaped = true;
    char one;
    switch (p[1]) {
    case '"': one = '"'; break;
    case '\\': one = '\\'; break;
    case '/': one = '/'; break;
    case 'b': one = '\b'; break;
    case 'f': one = '\f'; break;
    case 'n': one = '\n'; break;
    case 'r': one = '\r'; break;
    case 't': one = '\t'; break;
    case 'u': {
      if (end - p < 6)
        return OUT_OF_INPUT(r);
      unsigned cp;
      /* NUL and surrogates: yajl has its own ways with them, so it reads those strings */
      if (hex4(p + 2, &cp) < 0 || cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
        return DOCF_REFUSED;
      if (out) {
        unsigned char u[3];
        size_t k;
        if (cp < 0x80) {
          u[0] = (unsigned char)cp;
          k = 1;
        } else if (cp < 0x800) {
          u[0] = (unsigned char)(cp >> 6 | 0xC0);
          u[1] = (unsigned char)((cp & 0x3F) | 0x80);
          k = 2;
        } else {
          u[0] = (unsigned char)(cp >> 12 | 0xE0);
          u[1] = (unsigned char)((cp >> 6 & 0x3F) | 0x80);
          u[2] = (unsigned char)((cp & 0x3F) | 0x80);
          k = 3;
        }
        sbuf_put(r, &n, u, k);
      }
      p += 6;
      run = p;
      continue;
    }
    default: return DOCF_REFUSED;
    }
    if (out)
      sbuf_put(r, &n, &one, 1);
    p += 2;
    run = p;
  }
  if (out) {
    if (escaped) {
      sbuf_put(r, &n, run, (size_t)(p - run));
      *out = rd_strndup(r, r->sbuf, n);
    } else {
      n = (size_t)(p - r->p - 1);
      *out = rd_strndup(r, (const char *)r->p + 1, n);
    }
    r->slen = n;
  }
  r->p = p + 1;
  return DOCF_OK;
}

/* The string at r->p (a '"'). With out, its unescaped text is copied into the arena. Most
 * strings are plain up to their closing quote: that case is taken here, in line. */
static inline int read_string(rd *r, const char **out) {
  const unsigned char *q = plain_run(r->p + 1, r->end);
  if (q >= r->end || *q != '"')
    return read_string_slow(r, out);
  if (out) {
    size_t n = (size_t)(q - r->p - 1);
    *out = rd_strndup(r, (const char *)r->p + 1, n);
    r->slen = n;
  }
  r->p = q + 1;
  return DOCF_OK;
}

/* A number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; *len its length. */
static int read_number(rd *r, size_t *len) {
  const unsigned char *p = r->p, *end = r->end;
#define DIGIT(q) ((q) < end && *(q) >= '0' && *(q) <= '9')
  if (p < end && *p == '-')
    p++;
  if (p >= end)
    return OUT_OF_INPUT(r);
  if (*p == '0')
    p++;
  else if (DIGIT(p))
    while (DIGIT(p))
      p++;
  else
    return DOCF_REFUSED;
  if (p < end && *p == '.') {
    p++;
    if (!DIGIT(p))
      return p >= end ? OUT_OF_INPUT(r) : DOCF_REFUSED;
    while (DIGIT(p))
      p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-'))
      p++;
    if (!DIGIT(p))
      return p >= end ? OUT_OF_INPUT(r) : DOCF_REFUSED;
    while (DIGIT(p))
      p++;
  }
#undef DIGIT
  if (p >= end && !r->at_eof)
    return DOCF_MORE; /* the number may go on in the next window */
  *len = (size_t)(p - r->p);
  return DOCF_OK;
}

static int read_literal(rd *r, doc_node **out) {
  static const struct {
    const char *text;
    size_t len;
    doc_type type;
    int b;
  } lits[] = {{"true", 4, DOC_BOOL, 1}, {"false", 5, DOC_BOOL, 0}, {"null", 4, DOC_NULL, 0}};
  for (size_t i = 0; i < 3; i++) {
    if (*r->p != lits[i].text[0])
      continue;
    size_t have = (size_t)(r->end - r->p);
    if (memcmp(r->p, lits[i].text, have < lits[i].len ? have : lits[i].len) != 0)
      return DOCF_REFUSED;
    if (have < lits[i].len)
      return OUT_OF_INPUT(r);
    r->p += lits[i].len;
    if (out) {
      doc_node *n = new_node(r, lits[i].type);
      n->v.b = lits[i].b;
      n->text = lits[i].type == DOC_NULL ? "null" : lits[i].b ? "true" : "false";
      *out = n;
    }
    return DOCF_OK;
  }
  return DOCF_REFUSED;
}

static int read_value(rd *r, const skip_node *rule, doc_node **out);

/* After a member or element: ',' (then more) or the closing byte. 1 = closed, 0 = more. */
static inline int next_or_close(rd *r, unsigned char close) {
  ws(r);
  if (r->p >= r->end)
    return OUT_OF_INPUT(r);
  if (*r->p == ',') {
    r->p++;
    ws(r);
    if (r->p >= r->end)
      return OUT_OF_INPUT(r);
    return 0;
  }
  if (*r->p == close) {
    r->p++;
    return 1;
  }
  return DOCF_REFUSED;
}

/* The end of a member or element: true when the loop over them ends (the container closed,
 * or *rc set to what went wrong). */
static bool member_end(rd *r, unsigned char close, int *rc) {
  int more = next_or_close(r, close);
  if (more < 0)
    *rc = more;
  return more != 0;
}

static int read_map(rd *r, const skip_node *rule, doc_node **out) {
  size_t base = r->nkids;
  r->p++;
  ws(r);
  if (r->p >= r->end)
    return OUT_OF_INPUT(r);
  int rc = DOCF_OK;
  if (*r->p == '}') {
    r->p++;
  } else {
    for (;;) {
      if (*r->p != '"') {
        rc = DOCF_REFUSED;
        break;
      }
      const char *key = NULL;
      if ((rc = read_string(r, out ? &key : NULL)) != DOCF_OK)
        break;
      ws(r);
      if (r->p >= r->end || *r->p != ':') {
        rc = r->p >= r->end ? OUT_OF_INPUT(r) : DOCF_REFUSED;
        break;
      }
      r->p++;
      ws(r);
      if (r->p >= r->end) {
        rc = OUT_OF_INPUT(r);
        break;
      }
      const skip_node *kid = rule && out ? skip_find(rule, key, r->slen) : NULL;
      doc_node *v = NULL;
      if ((rc = read_value(r, kid, out && !(kid && kid->skip) ? &v : NULL)) != DOCF_OK)
        break;
      if (out && v) {
        push_kid(r, (void *)key);
        push_kid(r, v);
      }
      if (member_end(r, '}', &rc))
        break;
    }
  }
  if (rc == DOCF_OK && out) {
    doc_node *n = new_node(r, DOC_MAP);
    n->n = (r->nkids - base) / 2;
    n->pairs = rd_alloc(r, (n->n ? n->n : 1) * sizeof *n->pairs, alignof(doc_pair));
    if (!n->n)
      memset(n->pairs, 0, sizeof *n->pairs);
    for (size_t i = 0; i < n->n; i++) {
      n->pairs[i].key = r->kids[base + 2 * i];
      n->pairs[i].value = r->kids[base + 2 * i + 1];
    }
    *out = n;
  }
  r->nkids = base;
  return rc;
}

static int read_seq(rd *r, const skip_node *rule, doc_node **out) {
  size_t base = r->nkids;
  const skip_node *each = skip_find(rule, "[]", 2);
  r->p++;
  ws(r);
  if (r->p >= r->end)
    return OUT_OF_INPUT(r);
  int rc = DOCF_OK;
  if (*r->p == ']') {
    r->p++;
  } else {
    for (;;) {
      doc_node *v = NULL;
      if ((rc = read_value(r, each, out ? &v : NULL)) != DOCF_OK)
        break;
      if (out)
        push_kid(r, v);
      if (member_end(r, ']', &rc))
        break;
    }
  }
  if (rc == DOCF_OK && out) {
    doc_node *n = new_node(r, DOC_SEQ);
    n->n = r->nkids - base;
    n->items = rd_alloc(r, (n->n ? n->n : 1) * sizeof *n->items, alignof(doc_node *));
    if (n->n)
      memcpy(n->items, r->kids + base, n->n * sizeof *n->items);
    else
      n->items[0] = NULL;
    *out = n;
  }
  r->nkids = base;
  return rc;
}

/* Checks the value at r->p and moves past it, building nothing (a skipped part): one loop
 * over its tokens, with a bit per open container (map or list) instead of recursion. Most
 * strings are plain ASCII up to the quote; the rest (escapes, UTF-8, what is wrong) goes
 * through read_string. */
static int skip_value(rd *r) {
  uint64_t maps[DOCF_MAX_DEPTH / 64 + 1];
  int depth = 0, rc;
  bool after = false; /* a value has just ended (inside a container) */
  /* the cursor lives in a register here; r->p is brought up to date around calls */
  const unsigned char *p = r->p, *end = r->end;
#define IN_MAP(d) ((maps[(d) / 64] >> ((d) % 64)) & 1)
#define WS()                                                                                       \
  while (p < end && *p <= ' ' && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))            \
  p++
#define CALL(expr) (r->p = p, rc = (expr), p = r->p, rc)
#define NEED()                                                                                     \
  do {                                                                                             \
    if (p >= end) {                                                                                \
      r->p = p;                                                                                    \
      return OUT_OF_INPUT(r);                                                                      \
    }                                                                                              \
  } while (0)
  for (;;) {
    WS();
    NEED();
    unsigned c = *p;
    if (after) {
      bool map = IN_MAP(depth - 1);
      if (c == (map ? '}' : ']')) {
        p++;
        if (--depth == 0)
          break;
        continue;
      }
      if (c != ',')
        return DOCF_REFUSED;
      p++;
      WS();
      NEED();
      c = *p;
      after = false;
      if (!map)
        continue; /* a value follows */
      goto key;
    }
    if (c == '{' || c == '[') {
      if (r->depth + depth + 1 > DOCF_MAX_DEPTH)
        return DOCF_REFUSED;
      bool map = c == '{';
      if (map)
        maps[depth / 64] |= 1ull << (depth % 64);
      else
        maps[depth / 64] &= ~(1ull << (depth % 64));
      depth++;
      p++;
      WS();
      NEED();
      c = *p;
      if (c == (map ? '}' : ']')) {
        p++;
        if (--depth == 0)
          break;
        after = true;
        continue;
      }
      if (!map)
        continue;
    key:
      if (c != '"')
        return DOCF_REFUSED;
      const unsigned char *q = skipped_string_end(p, end);
      if (q)
        p = q;
      else if (CALL(read_string_slow(r, NULL)) != DOCF_OK)
        return rc;
      WS();
      NEED();
      if (*p != ':')
        return DOCF_REFUSED;
      p++;
      /* most values of a managedFields entry's fieldsV1 are an empty map: taken whole, and
       * when the next member of the same map follows at once, so is its key */
      if (end - p >= 2 && p[0] == '{' && p[1] == '}' && r->depth + depth + 1 <= DOCF_MAX_DEPTH) {
        p += 2;
        if (end - p >= 2 && p[0] == ',' && p[1] == '"') {
          p++;
          c = '"';
          goto key;
        }
        after = true;
      }
      continue;
    }
    if (c == '"') {
      const unsigned char *q = skipped_string_end(p, end);
      if (q)
        p = q;
      else if (CALL(read_string_slow(r, NULL)) != DOCF_OK)
        return rc;
    } else if (c == 't' || c == 'f' || c == 'n') {
      if (CALL(read_literal(r, NULL)) != DOCF_OK)
        return rc;
    } else {
      size_t len;
      if (CALL(read_number(r, &len)) != DOCF_OK)
        return rc;
      p += len;
    }
    if (depth == 0)
      break;
    after = true;
  }
  r->p = p;
  return DOCF_OK;
#undef IN_MAP
#undef WS
#undef CALL
#undef NEED
}

/* One value at r->p (not whitespace). out NULL = check it and build nothing. */
static int read_value(rd *r, const skip_node *rule, doc_node **out) {
  int rc;
  if (!out)
    return skip_value(r);
  switch (*r->p) {
  case '{':
  case '[':
    if (++r->depth > DOCF_MAX_DEPTH)
      return DOCF_REFUSED;
    rc = *r->p == '{' ? read_map(r, rule, out) : read_seq(r, rule, out);
    r->depth--;
    return rc;
  case '"': {
    const char *s = NULL;
    if ((rc = read_string(r, out ? &s : NULL)) != DOCF_OK)
      return rc;
    if (out) {
      doc_node *n = new_node(r, DOC_STR);
      n->text = s;
      *out = n;
    }
    return DOCF_OK;
  }
  case 't':
  case 'f':
  case 'n': return read_literal(r, out);
  default: {
    size_t len;
    if ((rc = read_number(r, &len)) != DOCF_OK)
      return rc;
    if (out) {
      doc_node *n = new_node(r, DOC_INT);
      doc_type_json_number(n, rd_strndup(r, (const char *)r->p, len));
      *out = n;
    }
    r->p += len;
    return DOCF_OK;
  }
  }
}

static void rd_free(rd *r) {
  free(r->kids);
  free(r->sbuf);
}

int docf_parse(arena *a, const char *buf, size_t len, doc_node **root) {
  rd r = {0};
  r.p = (const unsigned char *)buf;
  r.end = r.p + len;
  r.at_eof = true;
  rd_use(&r, a);
  ws(&r);
  int rc = r.p < r.end ? read_value(&r, NULL, root) : DOCF_REFUSED;
  if (rc == DOCF_OK) {
    ws(&r);
    if (r.p != r.end)
      rc = DOCF_REFUSED;
  }
  rd_free(&r);
  return rc == DOCF_OK ? DOCF_OK : DOCF_REFUSED;
}

int docf_list_continue(arena *a, const char *buf, size_t len, const char **token) {
  rd r = {0};
  r.p = (const unsigned char *)buf;
  r.end = r.p + len;
  r.at_eof = true;
  rd_use(&r, a);
  int found = 0;
  *token = NULL;
  ws(&r);
  if (r.p >= r.end || *r.p != '{')
    goto out;
  r.p++;
  for (;;) {
    ws(&r);
    const char *key;
    if (r.p >= r.end || *r.p != '"' || read_string(&r, &key) != DOCF_OK)
      goto out;
    ws(&r);
    if (r.p >= r.end || *r.p != ':')
      goto out;
    r.p++;
    ws(&r);
    if (r.p >= r.end || strcmp(key, "items") == 0)
      goto out; /* items first: not said up front */
    doc_node *v = NULL;
    bool meta = strcmp(key, "metadata") == 0;
    if (read_value(&r, NULL, meta ? &v : NULL) != DOCF_OK)
      goto out;
    if (meta) {
      /* the reader of the whole page takes the first metadata, so does this */
      *token = doc_str(doc_get(v, "continue"));
      found = 1;
      goto out;
    }
    if (next_or_close(&r, '}') != 0)
      goto out;
  }
out:
  rd_free(&r);
  return found;
}

/* ---------- streaming ---------- */

typedef struct {
  const docf_source *src;
  unsigned char *own; /* the file's window */
  size_t cap, len;
  bool eof, failed;
  uint64_t base; /* the file offset of own[0] */
} window;

/* Keeps the window's bytes from offset keep on and reads more behind them. */
static void refill(window *w, rd *r, size_t keep) {
  memmove(w->own, w->own + keep, w->len - keep);
  w->len -= keep;
  w->base += keep;
  if (w->len == w->cap) {
    w->cap *= 2;
    w->own = xrealloc(w->own, w->cap);
  }
  size_t n = fread(w->own + w->len, 1, w->cap - w->len, w->src->file);
  if (n == 0) {
    w->eof = true;
    w->failed = ferror(w->src->file) != 0;
  }
  w->len += n;
  r->p = w->own;
  r->end = w->own + w->len;
  r->at_eof = w->eof;
}

/* The file offset of the reader's position. */
static uint64_t window_offset(const window *w, const rd *r) {
  return w->base + (uint64_t)(r->p - w->own);
}

/* Empties the window and fills it from file offset off on. */
static bool window_seek(window *w, rd *r, uint64_t off) {
  if (fseeko(w->src->file, (off_t)off, SEEK_SET) != 0)
    return false;
  w->len = 0;
  w->base = off;
  w->eof = w->failed = false;
  refill(w, r, 0);
  return true;
}

/* After the split's worker has handed over the items from split->at on: the reader goes on
 * from the end of its last item, where a separator or the list's closing bracket follows.
 * 1 = the list closed, 0 = more items, else what went wrong. */
static int resume_after_split(window *w, rd *r, uint64_t resume) {
  if (!window_seek(w, r, resume))
    return DOCF_REFUSED;
  for (;;) {
    const unsigned char *sep = r->p;
    int more = next_or_close(r, ']');
    if (more != DOCF_MORE)
      return more;
    refill(w, r, (size_t)(sep - w->own));
  }
}

static void split_drop(const doc_split **split) {
  if (*split)
    (*split)->drop((*split)->ctx);
  *split = NULL;
}

int docf_stream(const docf_source *src, const char *const *skip, doc_item_cb cb, void *ctx,
                arena *hdr, arena *item_arena, doc_node **root, size_t *delivered, int *cb_rc,
                dserr *err) {
  skip_node rules = {0};
  for (size_t i = 0; skip && skip[i]; i++)
    skip_add(&rules, skip[i]);
  window w = {src, NULL, 0, 0, true, false, 0};
  rd r = {0};
  /* a worker reads the items from split->at on (doc.h): until the reader gets there */
  const doc_split *split = src->mem ? NULL : src->split;
  if (src->mem) {
    r.p = (const unsigned char *)src->mem;
    r.end = r.p + src->mem_len;
    r.at_eof = true;
  } else {
    w.cap = src->window ? src->window : 4u << 20;
    w.own = xmalloc(w.cap);
    w.eof = false;
    refill(&w, &r, 0);
  }
  void **root_kids = NULL;
  size_t nroot = 0, caproot = 0;
  bool streamed = false, opened = false;
  int rc = DOCF_OK;
  *cb_rc = 0;
  /* each pass of the loop reads one unit from cp; a unit cut by the window is read again */
  for (;;) {
    const unsigned char *cp = r.p;
    rd_use(&r, hdr);
    ws(&r);
    if (r.p >= r.end) {
      rc = OUT_OF_INPUT(&r);
    } else if (!opened) {
      if (*r.p != '{') {
        rc = DOCF_REFUSED;
      } else {
        r.p++;
        ws(&r);
        if (r.p >= r.end)
          rc = OUT_OF_INPUT(&r);
        else if (*r.p == '}') {
          r.p++;
          opened = true;
          break;
        } else
          opened = true;
      }
    } else if (*r.p != '"') {
      rc = DOCF_REFUSED;
    } else {
      /* "key": value, then ',' or '}' */
      const char *key;
      if ((rc = read_string(&r, &key)) == DOCF_OK) {
        ws(&r);
        if (r.p >= r.end || *r.p != ':')
          rc = r.p >= r.end ? OUT_OF_INPUT(&r) : DOCF_REFUSED;
        else {
          r.p++;
          ws(&r);
          if (r.p >= r.end)
            rc = OUT_OF_INPUT(&r);
        }
      }
      if (rc == DOCF_OK && strcmp(key, "items") == 0 && (streamed || *r.p == '[')) {
        if (streamed) {
          rc = DOCF_REFUSED; /* a second items: yajl's reader decides what it means */
        } else {
          /* the items, one unit each */
          r.p++;
          const unsigned char *icp = r.p;
          bool first = true, closed = false;
          while (rc == DOCF_OK && !closed) {
            rd_use(&r, item_arena);
            icp = r.p;
            ws(&r);
            if (r.p >= r.end) {
              rc = OUT_OF_INPUT(&r);
            } else if (first && *r.p == ']') {
              r.p++;
              closed = true;
              break;
            } else if (split && window_offset(&w, &r) >= split->at) {
              /* an item starting where the worker started proves its guess right */
              if (window_offset(&w, &r) != split->at) {
                split_drop(&split);
                continue; /* the same item again, read here */
              }
              const doc_split *sp = split;
              split = NULL;
              uint64_t resume;
              size_t count;
              if (!sp->join(sp->ctx, &resume, &count))
                continue; /* the worker's items are not used: read here */
              *delivered += count;
              first = false;
              int more = resume_after_split(&w, &r, resume);
              if (more < 0)
                rc = more;
              closed = more == 1;
              continue;
            } else {
              doc_node *item = NULL;
              rc = read_value(&r, &rules, &item);
              int more = rc == DOCF_OK ? next_or_close(&r, ']') : rc;
              if (more < 0)
                rc = more;
              if (rc == DOCF_OK) {
                first = false;
                closed = more == 1;
                *cb_rc = cb(ctx, item, err);
                ++*delivered;
                arena_reset(item_arena);
                if (*cb_rc) {
                  rc = DOCF_STOPPED;
                  break;
                }
                continue;
              }
            }
            arena_reset(item_arena);
            if (rc == DOCF_MORE) {
              refill(&w, &r, (size_t)(icp - w.own));
              rc = DOCF_OK;
            }
          }
          if (rc == DOCF_OK) {
            rd_use(&r, hdr);
            doc_node *empty = new_node(&r, DOC_SEQ);
            empty->items = arena_alloc(hdr, sizeof *empty->items);
            streamed = true;
            if (nroot + 2 > caproot) {
              caproot = caproot ? caproot * 2 : 16;
              root_kids = xrealloc(root_kids, caproot * sizeof *root_kids);
            }
            root_kids[nroot++] = (void *)key;
            root_kids[nroot++] = empty;
            /* the items are handed over: a window ending here refills from the separator */
            int more;
            for (;;) {
              const unsigned char *sep = r.p;
              more = next_or_close(&r, '}');
              if (more != DOCF_MORE)
                break;
              refill(&w, &r, (size_t)(sep - w.own));
            }
            if (more < 0)
              rc = more; /* the pass ends refused below */
            else if (more == 1)
              break;
            else
              continue;
          }
        }
      } else if (rc == DOCF_OK) {
        /* the rules hold for the root too: a lone object is the one item */
        const skip_node *kid = skip_find(&rules, key, strlen(key));
        doc_node *v = NULL;
        rc = read_value(&r, kid, kid && kid->skip ? NULL : &v);
        int more = rc == DOCF_OK ? next_or_close(&r, '}') : rc;
        if (more < 0)
          rc = more;
        if (rc == DOCF_OK && !v) {
          if (more == 1)
            break;
          continue;
        }
        if (rc == DOCF_OK) {
          if (nroot + 2 > caproot) {
            caproot = caproot ? caproot * 2 : 16;
            root_kids = xrealloc(root_kids, caproot * sizeof *root_kids);
          }
          root_kids[nroot++] = (void *)key;
          root_kids[nroot++] = v;
          if (more == 1)
            break;
          continue;
        }
      }
    }
    if (rc == DOCF_MORE && !src->mem) {
      refill(&w, &r, (size_t)(cp - w.own));
      rc = DOCF_OK;
      continue;
    }
    if (rc != DOCF_OK)
      break;
  }
  if (rc == DOCF_OK) {
    for (;;) { /* only whitespace may follow */
      ws(&r);
      if (r.p < r.end || r.at_eof)
        break;
      refill(&w, &r, (size_t)(r.p - w.own));
    }
    if (r.p != r.end || w.failed)
      rc = DOCF_REFUSED;
  }
  if (rc == DOCF_OK) {
    rd_use(&r, hdr);
    doc_node *n = new_node(&r, DOC_MAP);
    n->n = nroot / 2;
    n->pairs = arena_alloc(hdr, (n->n ? n->n : 1) * sizeof *n->pairs);
    for (size_t i = 0; i < n->n; i++) {
      n->pairs[i].key = root_kids[2 * i];
      n->pairs[i].value = root_kids[2 * i + 1];
    }
    *root = n;
    if (!streamed) {
      /* no items: the document is one object */
      *cb_rc = cb(ctx, n, err);
      ++*delivered;
      if (*cb_rc)
        rc = DOCF_STOPPED;
    }
  }
  split_drop(&split);
  free(root_kids);
  free(w.own);
  rd_free(&r);
  skip_free(&rules);
  return rc == DOCF_OK || rc == DOCF_STOPPED ? rc : DOCF_REFUSED;
}

int docf_stream_items_at(FILE *file, size_t first_window, uint64_t at, const char *const *skip,
                         doc_item_cb cb, void *ctx, arena *item_arena, uint64_t *resume,
                         size_t *delivered, int *cb_rc, dserr *err) {
  docf_source src = {NULL, 0, file, first_window, NULL};
  size_t cap = first_window ? first_window : 4u << 20;
  window w = {&src, xmalloc(cap), cap, 0, false, false, 0};
  rd r = {0};
  *cb_rc = 0;
  if (!window_seek(&w, &r, at)) {
    free(w.own);
    return DOCF_REFUSED;
  }
  skip_node rules = {0};
  for (size_t i = 0; skip && skip[i]; i++)
    skip_add(&rules, skip[i]);
  int rc;
  for (;;) {
    const unsigned char *icp = r.p;
    rd_use(&r, item_arena);
    ws(&r);
    doc_node *item = NULL;
    if (r.p >= r.end)
      rc = OUT_OF_INPUT(&r);
    else if (*r.p != '{')
      rc = DOCF_REFUSED; /* items of a cluster's list are objects */
    else
      rc = read_value(&r, &rules, &item);
    uint64_t end = rc == DOCF_OK ? window_offset(&w, &r) : 0;
    int more = rc == DOCF_OK ? next_or_close(&r, ']') : rc;
    if (more < 0)
      rc = more;
    if (rc == DOCF_OK) {
      *cb_rc = cb(ctx, item, err);
      ++*delivered;
      arena_reset(item_arena);
      if (*cb_rc) {
        rc = DOCF_STOPPED;
        break;
      }
      if (more == 1) {
        *resume = end;
        break;
      }
      continue;
    }
    arena_reset(item_arena);
    if (rc != DOCF_MORE)
      break;
    refill(&w, &r, (size_t)(icp - w.own));
  }
  if (w.failed)
    rc = DOCF_REFUSED;
  free(w.own);
  rd_free(&r);
  skip_free(&rules);
  return rc;
}

/* A likely item at p: a map that has a map under "metadata" and a string "kind" or none, with
 * a separator or a closing bracket after it. */
static bool looks_like_item(arena *a, const unsigned char *p, const unsigned char *end) {
  rd r = {0};
  r.p = p;
  r.end = end;
  r.at_eof = true;
  rd_use(&r, a);
  doc_node *v = NULL;
  bool ok = read_value(&r, NULL, &v) == DOCF_OK && v->type == DOC_MAP && doc_get(v, "metadata") &&
            doc_get(v, "metadata")->type == DOC_MAP &&
            (!doc_get(v, "kind") || doc_get(v, "kind")->type == DOC_STR) &&
            next_or_close(&r, ']') >= 0;
  rd_free(&r);
  arena_reset(a);
  return ok;
}

/* The first position from j on in buf[0..len) that is not JSON whitespace. */
static size_t blanks_end(const unsigned char *buf, size_t j, size_t len) {
  while (j < len && (buf[j] == ' ' || buf[j] == '\n' || buf[j] == '\r' || buf[j] == '\t'))
    j++;
  return j;
}

int docf_find_item(FILE *file, uint64_t from, size_t span, uint64_t *at) {
  if (fseeko(file, (off_t)from, SEEK_SET) != 0)
    return DOCF_REFUSED;
  unsigned char *buf = xmalloc(span);
  size_t len = fread(buf, 1, span, file);
  arena *a = arena_new(64 * 1024);
  int rc = DOCF_REFUSED;
  /* '}' then ',' then '{', whitespace between: two neighbours in a list of maps */
  for (size_t i = 0; i < len && rc != DOCF_OK; i++) {
    if (buf[i] != '}')
      continue;
    size_t j = blanks_end(buf, i + 1, len);
    if (j >= len || buf[j] != ',')
      continue;
    j = blanks_end(buf, j + 1, len);
    if (j < len && buf[j] == '{' && looks_like_item(a, buf + j, buf + len)) {
      *at = from + j;
      rc = DOCF_OK;
    }
  }
  arena_free(a);
  free(buf);
  return rc;
}
