/* fuzz_json_fast.c - libFuzzer target: the fast JSON reader (doc/doc_fast.c) against yajl's.
 *
 * What the fast reader accepts, yajl must accept with the same tree, node for node (type,
 * text, value, keys in order); what it refuses is read by yajl, so refusing is always safe.
 * The same holds for the streaming reader over memory and over a file read in windows of 1 to
 * 64 bytes (every unit cut by a window edge somewhere), with and without skip rules: with
 * rules, the items equal yajl's items with those parts taken out. A file read with a worker
 * (doc_split) started at any '{' of the input hands over what the plain stream hands over, each
 * item once and in order, and joins or drops the worker exactly once. */
#include "fuzz_common.h"

#include "../../src/doc/doc_fast.h"
#include "../../src/util/strbuf.h"

static void fail(const char *what) {
  fprintf(stderr, "fuzz_json_fast: %s\n", what);
  abort();
}

/* Exact equality: same types, texts, values, map keys in the same order. */
static bool same_tree(const doc_node *x, const doc_node *y) {
  if (!x || !y)
    return x == y;
  if (x->type != y->type || x->n != y->n || x->big != y->big || x->line != y->line)
    return false;
  if ((x->text == NULL) != (y->text == NULL) || (x->text && strcmp(x->text, y->text) != 0))
    return false;
  switch (x->type) {
  case DOC_BOOL: return x->v.b == y->v.b;
  case DOC_INT: return x->big ? memcmp(&x->v.f, &y->v.f, sizeof x->v.f) == 0 : x->v.i == y->v.i;
  case DOC_FLOAT: return memcmp(&x->v.f, &y->v.f, sizeof x->v.f) == 0;
  case DOC_MAP:
    for (size_t i = 0; i < x->n; i++)
      if (strcmp(x->pairs[i].key, y->pairs[i].key) != 0 ||
          !same_tree(x->pairs[i].value, y->pairs[i].value))
        return false;
    return true;
  case DOC_SEQ:
    for (size_t i = 0; i < x->n; i++)
      if (!same_tree(x->items[i], y->items[i]))
        return false;
    return true;
  default: return true;
  }
}

/* The skip rules under test and the same cut made on a yajl tree. */
static const char *const rules[] = {"metadata.managedFields", "a", "b[].c", NULL};

/* path: "key", "key.rest", "key[].rest" or "[].rest" (every element) */
static void cut(doc_node *n, const char *path) {
  if (!n)
    return;
  if (path[0] == '[') {
    for (size_t i = 0; n->type == DOC_SEQ && i < n->n; i++)
      cut(n->items[i], path[2] == '.' ? path + 3 : path + 2);
    return;
  }
  size_t klen = strcspn(path, ".[");
  const char *rest = path[klen] == '.' ? path + klen + 1 : path + klen;
  if (n->type != DOC_MAP)
    return;
  for (size_t i = 0; i < n->n; i++) {
    if (strlen(n->pairs[i].key) != klen || memcmp(n->pairs[i].key, path, klen) != 0)
      continue;
    if (!*rest) { /* the leaf: take the pair out */
      memmove(&n->pairs[i], &n->pairs[i + 1], (n->n - i - 1) * sizeof *n->pairs);
      n->n--;
      i--;
      continue;
    }
    cut(n->pairs[i].value, rest);
  }
}

static void cut_all(doc_node *item) {
  for (size_t i = 0; rules[i]; i++)
    cut(item, rules[i]);
}

typedef struct {
  arena *keep; /* copies of the items */
  doc_node **items;
  size_t n, cap;
  bool cut;
} collect;

static int keep_item(void *ctx, doc_node *item, dserr *err) {
  (void)err;
  collect *c = ctx;
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 16;
    c->items = realloc(c->items, c->cap * sizeof *c->items);
    if (!c->items)
      abort();
  }
  doc_node *copy = doc_copy(c->keep, item);
  if (c->cut)
    cut_all(copy);
  c->items[c->n++] = copy;
  return 0;
}

static void check_same_items(const collect *fast, const collect *slow, const char *what) {
  if (fast->n != slow->n)
    fail(what);
  for (size_t i = 0; i < fast->n; i++)
    if (!same_tree(fast->items[i], slow->items[i]))
      fail(what);
}

static void run_stream(const uint8_t *data, size_t size, const char *const *skip, size_t window,
                       collect *c, arena *hdr, doc_node **root, int *rc) {
  arena *item = arena_new(4096);
  size_t delivered = 0;
  int cb_rc = 0;
  dserr err = {{0}};
  FILE *f = NULL;
  docf_source src = {(const char *)data, size, NULL, 0};
  if (window) {
    f = fmemopen((void *)data, size ? size : 1, "rb");
    if (!f)
      abort();
    if (!size)
      fgetc(f); /* an empty file */
    src = (docf_source){NULL, 0, f, window};
  }
  *rc = docf_stream(&src, skip, keep_item, c, hdr, item, root, &delivered, &cb_rc, &err);
  if (delivered != c->n)
    fail("delivered count");
  if (f)
    fclose(f);
  arena_free(item);
}

/* ---------- a worker started at an offset (doc_split) ---------- */

typedef struct {
  collect *main, worker;
  int rc, calls;
  uint64_t resume;
  size_t count;
} split_probe;

static bool probe_join(void *ctx, uint64_t *resume, size_t *count) {
  split_probe *p = ctx;
  p->calls++;
  if (p->rc != DOCF_OK)
    return false;
  for (size_t i = 0; i < p->worker.n; i++)
    keep_item(p->main, p->worker.items[i], NULL);
  *resume = p->resume;
  *count = p->count;
  return true;
}

static void probe_drop(void *ctx) { ((split_probe *)ctx)->calls++; }

static void check_split(const uint8_t *data, size_t size, uint64_t at, size_t window,
                        arena *keep) {
  FILE *f = fmemopen((void *)data, size, "rb");
  if (!f)
    abort();
  split_probe p = {0};
  p.worker.keep = keep;
  arena *item = arena_new(4096);
  int cb_rc = 0;
  dserr err = {{0}};
  p.rc = docf_stream_items_at(f, window, at, rules, keep_item, &p.worker, item, &p.resume,
                              &p.count, &cb_rc, &err);
  if (p.rc == DOCF_OK && p.count != p.worker.n)
    fail("the worker's count");
  /* the plain stream and the stream with the worker, on the same window */
  collect plain = {keep, NULL, 0, 0, false}, joined = {keep, NULL, 0, 0, false};
  p.main = &joined;
  doc_split split = {at, probe_join, probe_drop, &p};
  arena *h1 = arena_new(4096), *h2 = arena_new(4096);
  doc_node *r1 = NULL, *r2 = NULL;
  size_t d1 = 0, d2 = 0;
  int c1 = 0, c2 = 0;
  docf_source s1 = {NULL, 0, f, window, NULL}, s2 = {NULL, 0, f, window, &split};
  rewind(f);
  int rc1 = docf_stream(&s1, rules, keep_item, &plain, h1, item, &r1, &d1, &c1, &err);
  rewind(f);
  int rc2 = docf_stream(&s2, rules, keep_item, &joined, h2, item, &r2, &d2, &c2, &err);
  if (p.calls != 1)
    fail("the split was not joined or dropped exactly once");
  if (rc1 != rc2 || d1 != d2)
    fail("the stream with a worker ended otherwise");
  if (rc1 == DOCF_OK) {
    check_same_items(&joined, &plain, "the stream with a worker handed over other items");
    if (!same_tree(r1, r2))
      fail("the stream with a worker read another header");
  }
  free(plain.items);
  free(joined.items);
  free(p.worker.items);
  arena_free(h1);
  arena_free(h2);
  arena_free(item);
  fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* whole documents */
  arena *a = arena_new(4096), *b = arena_new(4096);
  doc_node *fast = NULL, *slow = NULL;
  dserr err = {{0}};
  if (docf_parse(a, (const char *)data, size, &fast) == DOCF_OK) {
    if (doc_yajl_parse(b, "fuzz", (const char *)data, size, &slow, &err) != 0)
      fail("the fast reader accepted what yajl refuses");
    if (!same_tree(fast, slow))
      fail("docf_parse and yajl built different trees");
  }
  arena_free(a);
  arena_free(b);

  /* streams: yajl's items once, then the fast reader in memory and in windows */
  arena *keep = arena_new(4096), *yhdr = arena_new(4096);
  collect ys = {keep, NULL, 0, 0, false}, ycut = {keep, NULL, 0, 0, true};
  doc_node *yheader = NULL;
  err.msg[0] = 0;
  int yrc = doc_yajl_stream("fuzz", (const char *)data, size, keep_item, &ys, yhdr, &yheader, &err);
  err.msg[0] = 0;
  arena *yhdr2 = arena_new(4096);
  doc_node *yheader_cut = NULL;
  doc_yajl_stream("fuzz", (const char *)data, size, keep_item, &ycut, yhdr2, &yheader_cut, &err);
  if (yheader_cut)
    cut_all(yheader_cut); /* the rules hold for the root too */
  static const size_t windows[] = {0, 1, 2, 3, 7, 64};
  for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
    for (int with_rules = 0; with_rules < 2; with_rules++) {
      collect fs = {keep, NULL, 0, 0, false};
      arena *hdr = arena_new(4096);
      doc_node *root = NULL;
      int rc;
      run_stream(data, size, with_rules ? rules : NULL, windows[w], &fs, hdr, &root, &rc);
      if (rc == DOCF_OK) {
        if (yrc != 0)
          fail("the fast stream accepted what yajl refuses");
        check_same_items(&fs, with_rules ? &ycut : &ys, "stream items differ");
        if (!same_tree(root, with_rules ? yheader_cut : yheader))
          fail("stream headers differ");
      } else if (rc == DOCF_REFUSED) {
        /* what was handed over before the refusal is what yajl hands over first */
        const collect *ref = with_rules ? &ycut : &ys;
        if (fs.n > ref->n)
          fail("the fast stream handed over more items than yajl before refusing");
        for (size_t i = 0; i < fs.n; i++)
          if (!same_tree(fs.items[i], ref->items[i]))
            fail("items handed over before a refusal differ");
      } else {
        fail("unexpected stream result");
      }
      free(fs.items);
      arena_free(hdr);
    }
  }
  /* a worker at each of the first 16 '{' (an item start, or not) */
  for (size_t i = 0, tried = 0; size && i < size && tried < 16; i++)
    if (data[i] == '{') {
      check_split(data, size, i, tried % 2 ? 3 : 64, keep);
      tried++;
    }
  free(ys.items);
  free(ycut.items);
  arena_free(yhdr);
  arena_free(yhdr2);
  arena_free(keep);
  return 0;
}
