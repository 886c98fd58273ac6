/* doc.c - document trees from YAML (libyaml) and JSON (yajl); see doc.h.
 *
 * Both parsers feed the same builder with events (start/end of map or sequence, key,
 * scalar). The builder keeps a stack of open containers whose children collect in heap
 * vectors reused across list items, and copies each finished container into the arena.
 * In streaming mode the elements of the root's `items` are built in a scratch arena,
 * handed to the callback one at a time and then forgotten. */
#include "doc.h"

#include "doc_fast.h"
#include "../util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <yaml.h>

/* ---------- builder ---------- */

typedef struct {
  doc_node *node;
  void **kids; /* map: key, value, key, value...; seq: values */
  size_t n, cap;
  const char *pending_key;
  int streaming; /* the root's `items` in streaming mode: children go to the callback */
  size_t size;   /* nodes in the subtree so far, aliases counted as what they stand for */
  size_t anchor; /* index in anchors + 1 when the container is anchored, else 0 */
} frame;

typedef struct {
  arena *hdr;  /* root and everything outside items */
  arena *item; /* current list item (streaming) */
  frame *stack;
  size_t depth, cap;
  doc_node *root;
  int stream;
  size_t items_depth; /* stack depth of the streaming items frame, 0 if none */
  doc_item_cb cb;
  void *ctx;
  int cb_rc;
  dserr *err;
  /* YAML anchors of the current tree */
  struct anchor {
    char *name;
    doc_node *node;
    size_t size; /* the node's subtree size (see frame.size) */
    int open;    /* a container still being read: an alias to it would make a cycle */
  } *anchors;
  size_t nanchors, capanchors;
  /* go-yaml's guard against alias bombs: nodes read, and nodes that aliases stand for */
  size_t nodes, alias_nodes;
} builder;

/* The arena for a node that sits at stack depth d (the root is 1): list items and all
 * below them go to the scratch arena, but only while the items list is open: what follows
 * it in the root (kubectl prints `kind` and `metadata` after `items`) belongs to the header. */
static arena *arena_at(builder *b, size_t d) {
  return (b->items_depth && d > b->items_depth && b->stack[b->items_depth - 1].streaming)
             ? b->item
             : b->hdr;
}

static void anchors_clear(builder *b) {
  for (size_t i = 0; i < b->nanchors; i++)
    free(b->anchors[i].name);
  b->nanchors = 0;
}

static void push_kid(frame *f, void *p) {
  if (f->n == f->cap) {
    f->cap = f->cap ? f->cap * 2 : 16;
    f->kids = xrealloc(f->kids, f->cap * sizeof *f->kids);
  }
  f->kids[f->n++] = p;
}

/* Adds a finished node of subtree size `size` to the open container (or makes it the root).
 * Returns -1 to stop. */
static int add_sized_node(builder *b, doc_node *node, size_t size) {
  if (b->depth == 0) {
    b->root = node;
    return 0;
  }
  frame *f = &b->stack[b->depth - 1];
  f->size = f->size + size < f->size ? SIZE_MAX : f->size + size;
  if (f->node->type == DOC_MAP) {
    push_kid(f, (void *)f->pending_key);
    push_kid(f, node);
    f->pending_key = NULL;
    return 0;
  }
  if (f->streaming) {
    int rc = b->cb(b->ctx, node, b->err);
    arena_reset(b->item);
    anchors_clear(b);
    if (rc) {
      b->cb_rc = rc;
      return -1;
    }
    return 0;
  }
  push_kid(f, node);
  return 0;
}

static int add_node(builder *b, doc_node *node) { return add_sized_node(b, node, 1); }

/* A new node that will be a child of the open container. */
static doc_node *new_node(builder *b, doc_type t, int line) {
  b->nodes++;
  doc_node *n = ARENA_NEW(arena_at(b, b->depth + 1), doc_node);
  n->type = t;
  n->line = line;
  return n;
}

static void open_container(builder *b, doc_type t, int line) {
  /* the new container's arena is decided by the depth it will have */
  int streaming = 0;
  if (b->stream && b->depth == 1 && t == DOC_SEQ && b->stack[0].node->type == DOC_MAP &&
      b->stack[0].pending_key && strcmp(b->stack[0].pending_key, "items") == 0 && !b->items_depth)
    streaming = 1;
  if (b->depth == b->cap) {
    size_t old = b->cap;
    b->cap = b->cap ? b->cap * 2 : 16;
    b->stack = xrealloc(b->stack, b->cap * sizeof *b->stack);
    memset(b->stack + old, 0, (b->cap - old) * sizeof *b->stack);
  }
  frame *f = &b->stack[b->depth];
  f->node = new_node(b, t, line);
  f->n = 0;
  f->pending_key = NULL;
  f->streaming = streaming;
  f->size = 1;
  f->anchor = 0;
  b->depth++;
  if (streaming)
    b->items_depth = b->depth;
}

static int close_container(builder *b) {
  frame *f = &b->stack[b->depth - 1];
  doc_node *node = f->node;
  arena *a = arena_at(b, b->depth);
  if (node->type == DOC_MAP) {
    node->n = f->n / 2;
    node->pairs = ARENA_NEWN(a, doc_pair, node->n ? node->n : 1);
    for (size_t i = 0; i < node->n; i++) {
      node->pairs[i].key = f->kids[2 * i];
      node->pairs[i].value = f->kids[2 * i + 1];
    }
  } else {
    node->n = f->n;
    node->items = ARENA_NEWN(a, doc_node *, node->n ? node->n : 1);
    if (node->n)
      memcpy(node->items, f->kids, node->n * sizeof(void *));
  }
  /* an anchor on this container now knows its size (unless the anchors were reset since) */
  if (f->anchor && f->anchor <= b->nanchors && b->anchors[f->anchor - 1].node == node) {
    b->anchors[f->anchor - 1].size = f->size;
    b->anchors[f->anchor - 1].open = 0;
  }
  b->depth--;
  return add_sized_node(b, node, f->size);
}

/* A key of the open map. */
static const char *key_copy(builder *b, const char *s, size_t len) {
  return arena_strndup(arena_at(b, b->depth), s, len);
}

static void builder_free(builder *b) {
  for (size_t i = 0; i < b->cap; i++)
    free(b->stack[i].kids);
  free(b->stack);
  anchors_clear(b);
  free(b->anchors);
}

/* ---------- scalar typing ---------- */

static int parse_int_text(const char *t, int base, int64_t *out, int *big) {
  errno = 0;
  char *end;
  long long v = strtoll(t, &end, base);
  if (*end || end == t)
    return -1;
  *big = errno == ERANGE;
  *out = v;
  return 0;
}

/* JSON number text: integer unless it has a fraction or exponent. */
void doc_type_json_number(doc_node *n, const char *text) {
  n->text = text;
  if (strpbrk(text, ".eE") == NULL && parse_int_text(text, 10, &n->v.i, &n->big) == 0) {
    n->type = DOC_INT;
    if (n->big)
      n->v.f = strtod(text, NULL);
    return;
  }
  n->type = DOC_FLOAT;
  n->v.f = strtod(text, NULL);
}

static int is_one_of(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0)
      return 1;
  return 0;
}

/* Resolves a plain (unquoted) YAML scalar as go-yaml v2 does. */
static void type_yaml_plain(arena *a, doc_node *n, const char *text) {
  static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
  static const char *const trues[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE",
                                      "on", "On", "ON", NULL};
  static const char *const falses[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE",
                                       "off", "Off", "OFF", NULL};
  n->text = text;
  if (is_one_of(text, nulls)) {
    n->type = DOC_NULL;
    return;
  }
  if (is_one_of(text, trues) || is_one_of(text, falses)) {
    n->type = DOC_BOOL;
    n->v.b = is_one_of(text, trues);
    return;
  }
  /* integers: decimal, 0x hex, 0b binary, 0o or leading-0 octal; underscores allowed */
  size_t len = strlen(text);
  char *plain = arena_alloc(a, len + 1);
  size_t j = 0;
  for (size_t i = 0; i < len; i++)
    if (text[i] != '_')
      plain[j++] = text[i];
  plain[j] = 0;
  const char *p = plain;
  int neg = 0;
  if (*p == '+' || *p == '-')
    neg = *p++ == '-';
  int base = 10;
  const char *digits = p;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
    base = 16, digits = p + 2;
  else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
    base = 2, digits = p + 2;
  else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) /* strconv.ParseInt base 0 */
    base = 8, digits = p + 2;
  else if (p[0] == '0' && p[1])
    base = 8, digits = p + 1;
  int ok = *digits != 0;
  for (const char *q = digits; *q && ok; q++) {
    int c = (unsigned char)*q;
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                                  : 99;
    ok = d < base;
  }
  if (ok) {
    int64_t v;
    int big = 0;
    if (parse_int_text(digits, base, &v, &big) == 0) {
      n->type = DOC_INT;
      n->big = big;
      n->v.i = neg ? -v : v;
      if (big)
        n->v.f = neg ? -strtod(digits, NULL) : strtod(digits, NULL);
      return;
    }
  }
  /* floats: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? and .inf/.nan */
  static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
  static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
  static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
  if (is_one_of(text, infs) || is_one_of(text, ninfs) || is_one_of(text, nans)) {
    n->type = DOC_FLOAT;
    n->v.f = is_one_of(text, nans) ? NAN : is_one_of(text, ninfs) ? -INFINITY : INFINITY;
    return;
  }
  p = plain;
  if (*p == '+' || *p == '-')
    p++;
  int mant = 0, dot = 0;
  while ((*p >= '0' && *p <= '9') || (*p == '.' && !dot)) {
    if (*p == '.')
      dot = 1;
    else
      mant = 1;
    p++;
  }
  if (mant && (*p == 'e' || *p == 'E')) {
    p++;
    if (*p == '+' || *p == '-')
      p++;
    int ed = 0;
    while (*p >= '0' && *p <= '9')
      p++, ed = 1;
    if (!ed)
      mant = 0;
  }
  if (mant && *p == 0) {
    n->type = DOC_FLOAT;
    n->v.f = strtod(plain, NULL);
    return;
  }
  n->type = DOC_STR;
}

/* ---------- YAML ---------- */

typedef struct {
  doc_read_fn read;
  void *src;
} yaml_src;

static int yaml_read_handler(void *data, unsigned char *buffer, size_t size, size_t *size_read) {
  yaml_src *s = data;
  long n = s->read(s->src, (char *)buffer, size);
  if (n < 0)
    return 0;
  *size_read = (size_t)n;
  return 1;
}

static int yaml_fail(dserr *err, const char *name, yaml_parser_t *p) {
  const char *what = p->problem ? p->problem : "unknown error";
  if (p->context)
    return dserr_set(err, "%s: invalid YAML at line %zu, column %zu: %s %s", name,
                     p->problem_mark.line + 1, p->problem_mark.column + 1, p->context, what);
  return dserr_set(err, "%s: invalid YAML at line %zu, column %zu: %s", name,
                   p->problem_mark.line + 1, p->problem_mark.column + 1, what);
}

/* Records an anchor: a scalar (complete, size 1) or the container just opened. */
static void anchor_add(builder *b, const char *name, doc_node *node, int container) {
  if (b->nanchors == b->capanchors) {
    b->capanchors = b->capanchors ? b->capanchors * 2 : 8;
    b->anchors = xrealloc(b->anchors, b->capanchors * sizeof *b->anchors);
  }
  b->anchors[b->nanchors].name = strdup(name);
  b->anchors[b->nanchors].node = node;
  b->anchors[b->nanchors].size = 1;
  b->anchors[b->nanchors].open = container;
  b->nanchors++;
  if (container)
    b->stack[b->depth - 1].anchor = b->nanchors;
}

/* go-yaml v2's allowedAliasRatio: the share of decoded nodes that may come from aliases. */
static double allowed_alias_ratio(size_t decoded) {
  if (decoded <= 400000)
    return 0.99;
  if (decoded >= 4000000)
    return 0.10;
  return 0.99 - 0.89 * ((double)(decoded - 400000) / 3600000.0);
}

/* An alias stands for `size` nodes. Consumers walk an aliased subtree once per alias, so a
 * few bytes of aliases of aliases can stand for billions of nodes: refuse what go-yaml
 * (upstream's YAML reader) refuses, with its rule. */
static int alias_expand(builder *b, const char *name, int line, const char *alias, size_t size) {
  b->alias_nodes = b->alias_nodes + size < b->alias_nodes ? SIZE_MAX : b->alias_nodes + size;
  size_t decoded = b->nodes + b->alias_nodes < b->nodes ? SIZE_MAX : b->nodes + b->alias_nodes;
  if (b->alias_nodes > 100 && decoded > 1000 &&
      (double)b->alias_nodes / (double)decoded > allowed_alias_ratio(decoded))
    return dserr_set(b->err,
                     "%s: line %d: the document contains excessive aliasing (alias *%s stands for "
                     "%zu nodes)",
                     name, line, alias, size);
  return 0;
}

/* Adds a scalar event: a map key when the open map awaits one, else a value. */
static int yaml_scalar(builder *b, yaml_event_t *ev) {
  const char *text = (const char *)ev->data.scalar.value;
  size_t len = ev->data.scalar.length;
  int line = (int)ev->start_mark.line + 1;
  if (b->depth && b->stack[b->depth - 1].node->type == DOC_MAP &&
      !b->stack[b->depth - 1].pending_key) {
    b->stack[b->depth - 1].pending_key = key_copy(b, text, len);
    return 0;
  }
  doc_node *n = new_node(b, DOC_STR, line);
  arena *a = arena_at(b, b->depth + 1);
  char *copy = arena_strndup(a, text, len);
  const char *tag = (const char *)ev->data.scalar.tag;
  if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !tag)
    type_yaml_plain(a, n, copy);
  else
    n->text = copy;
  if (ev->data.scalar.anchor)
    anchor_add(b, (const char *)ev->data.scalar.anchor, n, 0);
  return add_node(b, n);
}

static int yaml_run(builder *b, const char *name, yaml_parser_t *parser) {
  int docs = 0, done = 0;
  while (!done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(parser, &ev))
      return yaml_fail(b->err, name, parser);
    int rc = 0, line = (int)ev.start_mark.line + 1;
    switch (ev.type) {
    case YAML_STREAM_END_EVENT:
      done = 1;
      break;
    case YAML_DOCUMENT_START_EVENT:
      if (++docs > 1)
        rc = dserr_set(b->err,
                       "%s: line %d: a second YAML document starts here; only one is expected",
                       name, line);
      break;
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
      frame *top = b->depth ? &b->stack[b->depth - 1] : NULL;
      if (top && top->node->type == DOC_MAP && !top->pending_key) {
        rc = dserr_set(b->err, "%s: line %d: a map key must be a plain value, not a %s", name,
                       line, ev.type == YAML_MAPPING_START_EVENT ? "map" : "list");
        break;
      }
      open_container(b, ev.type == YAML_MAPPING_START_EVENT ? DOC_MAP : DOC_SEQ, line);
      const yaml_char_t *anchor = ev.type == YAML_MAPPING_START_EVENT
                                      ? ev.data.mapping_start.anchor
                                      : ev.data.sequence_start.anchor;
      if (anchor)
        anchor_add(b, (const char *)anchor, b->stack[b->depth - 1].node, 1);
      break;
    }
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
      rc = close_container(b);
      break;
    case YAML_SCALAR_EVENT:
      rc = yaml_scalar(b, &ev);
      break;
    case YAML_ALIAS_EVENT: {
      const char *an = (const char *)ev.data.alias.anchor;
      const struct anchor *target = NULL;
      for (size_t i = b->nanchors; i-- > 0;)
        if (strcmp(b->anchors[i].name, an) == 0) {
          target = &b->anchors[i];
          break;
        }
      if (!target)
        rc = dserr_set(b->err, "%s: line %d: alias *%s refers to no anchor in this object", name,
                       line, an);
      else if (target->open) /* go-yaml: "anchor 'a' value contains itself" */
        rc = dserr_set(b->err, "%s: line %d: alias *%s is inside the value of its own anchor", name,
                       line, an);
      else if (b->depth && b->stack[b->depth - 1].node->type == DOC_MAP &&
               !b->stack[b->depth - 1].pending_key)
        b->stack[b->depth - 1].pending_key = target->node->text ? target->node->text : "";
      else if (!(rc = alias_expand(b, name, line, an, target->size)))
        rc = add_sized_node(b, target->node, target->size);
      break;
    }
    default:
      break;
    }
    yaml_event_delete(&ev);
    if (rc)
      return b->cb_rc ? b->cb_rc : -1;
  }
  return 0;
}

/* ---------- JSON ---------- */

static int j_null(void *ctx) {
  builder *b = ctx;
  doc_node *n = new_node(b, DOC_NULL, 0);
  n->text = "null";
  return add_node(b, n) == 0;
}

static int j_bool(void *ctx, int v) {
  builder *b = ctx;
  doc_node *n = new_node(b, DOC_BOOL, 0);
  n->v.b = v;
  n->text = v ? "true" : "false";
  return add_node(b, n) == 0;
}

static int j_number(void *ctx, const char *s, size_t len) {
  builder *b = ctx;
  doc_node *n = new_node(b, DOC_INT, 0);
  doc_type_json_number(n, arena_strndup(arena_at(b, b->depth + 1), s, len));
  return add_node(b, n) == 0;
}

static int j_string(void *ctx, const unsigned char *s, size_t len) {
  builder *b = ctx;
  doc_node *n = new_node(b, DOC_STR, 0);
  n->text = arena_strndup(arena_at(b, b->depth + 1), (const char *)s, len);
  return add_node(b, n) == 0;
}

static int j_start_map(void *ctx) {
  open_container(ctx, DOC_MAP, 0);
  return 1;
}

static int j_key(void *ctx, const unsigned char *s, size_t len) {
  builder *b = ctx;
  b->stack[b->depth - 1].pending_key = key_copy(b, (const char *)s, len);
  return 1;
}

static int j_end(void *ctx) { return close_container(ctx) == 0; }

static int j_start_array(void *ctx) {
  open_container(ctx, DOC_SEQ, 0);
  return 1;
}

static const yajl_callbacks json_callbacks = {
    j_null, j_bool, NULL, NULL, j_number, j_string, j_start_map, j_key, j_end, j_start_array, j_end,
};

static int json_fail(builder *b, yajl_handle h, const char *name, size_t offset,
                     const unsigned char *chunk, size_t len) {
  if (b->cb_rc)
    return b->cb_rc;
  unsigned char *msg = yajl_get_error(h, 0, chunk, len);
  const char *m = (const char *)msg;
  /* yajl says "parse error: premature EOF" for truncated input */
  if (strstr(m, "premature EOF"))
    dserr_set(b->err, "%s: truncated JSON: the document ends at byte %zu before it is complete",
              name, offset);
  else
    dserr_set(b->err, "%s: invalid JSON near byte %zu: %s", name, offset, m);
  /* yajl ends its text with a newline; a message is one line */
  size_t n = b->err ? strlen(b->err->msg) : 0;
  while (n && (b->err->msg[n - 1] == '\n' || b->err->msg[n - 1] == ' '))
    b->err->msg[--n] = 0;
  yajl_free_error(h, msg);
  return -1;
}

static int json_run(builder *b, const char *name, doc_read_fn read, void *src) {
  yajl_handle h = yajl_alloc(&json_callbacks, NULL, b);
  char *buf = malloc(65536);
  if (!h || !buf)
    abort();
  size_t total = 0;
  int rc = 0;
  for (;;) {
    long n = read(src, buf, 65536);
    if (n < 0) {
      rc = dserr_set(b->err, "%s: read error", name);
      break;
    }
    yajl_status st = n == 0 ? yajl_complete_parse(h) : yajl_parse(h, (unsigned char *)buf, (size_t)n);
    if (st != yajl_status_ok) {
      size_t consumed = n ? yajl_get_bytes_consumed(h) : 0;
      rc = json_fail(b, h, name, total + consumed, (unsigned char *)buf, n > 0 ? (size_t)n : 0);
      break;
    }
    if (n == 0)
      break;
    total += (size_t)n;
  }
  free(buf);
  yajl_free(h);
  return rc;
}

/* ---------- public entry points ---------- */

typedef struct {
  const char *buf;
  size_t len, pos;
} mem_src;

static long mem_read(void *src, char *buf, size_t cap) {
  mem_src *m = src;
  size_t n = m->len - m->pos < cap ? m->len - m->pos : cap;
  memcpy(buf, m->buf + m->pos, n);
  m->pos += n;
  return (long)n;
}

static long file_read(void *src, char *buf, size_t cap) {
  FILE *f = src;
  size_t n = fread(buf, 1, cap, f);
  if (n == 0 && ferror(f))
    return -1;
  return (long)n;
}

static int run_parser(doc_format fmt, builder *b, const char *name, doc_read_fn read, void *src) {
  if (fmt == DOC_FMT_JSON)
    return json_run(b, name, read, src);
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    abort();
  yaml_src ys = {read, src};
  yaml_parser_set_input(&parser, yaml_read_handler, &ys);
  int rc = yaml_run(b, name, &parser);
  yaml_parser_delete(&parser);
  return rc;
}

static int parse_with(doc_format fmt, arena *a, const char *name, doc_read_fn read, void *src,
                      doc_node **root, dserr *err) {
  builder b = {0};
  b.hdr = a;
  b.err = err;
  int rc = run_parser(fmt, &b, name, read, src);
  if (rc == 0 && b.depth != 0)
    rc = dserr_set(err, "%s: the document ends before it is complete", name);
  if (rc == 0) {
    if (!b.root) {
      b.root = ARENA_NEW(a, doc_node);
      b.root->type = DOC_NULL;
    }
    *root = b.root;
  }
  builder_free(&b);
  return rc;
}

int doc_parse_yaml(arena *a, const char *name, const char *buf, size_t len, doc_node **root,
                   dserr *err) {
  mem_src m = {buf, len, 0};
  return parse_with(DOC_FMT_YAML, a, name, mem_read, &m, root, err);
}

int doc_parse_json(arena *a, const char *name, const char *buf, size_t len, doc_node **root,
                   dserr *err) {
  if (docf_parse(a, buf, len, root) == DOCF_OK)
    return 0;
  /* refused: yajl reads it, with its own message for what is malformed */
  return doc_yajl_parse(a, name, buf, len, root, err);
}

int doc_yajl_parse(arena *a, const char *name, const char *buf, size_t len, doc_node **root,
                   dserr *err) {
  mem_src m = {buf, len, 0};
  return parse_with(DOC_FMT_JSON, a, name, mem_read, &m, root, err);
}

int doc_yajl_stream(const char *name, const char *buf, size_t len, doc_item_cb cb, void *ctx,
                    arena *hdr_arena, doc_node **header, dserr *err) {
  mem_src m = {buf, len, 0};
  return doc_stream_list(DOC_FMT_JSON, name, mem_read, &m, cb, ctx, hdr_arena, header, err);
}

int doc_parse_yaml_file(arena *a, const char *path, doc_node **root, dserr *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return dserr_set(err, "%s: cannot open: %s", path, strerror(errno));
  int rc = parse_with(DOC_FMT_YAML, a, path, file_read, f, root, err);
  fclose(f);
  return rc;
}

int doc_stream_list(doc_format fmt, const char *name, doc_read_fn read, void *src, doc_item_cb cb,
                    void *ctx, arena *hdr_arena, doc_node **header, dserr *err) {
  builder b = {0};
  arena *own_hdr = hdr_arena ? NULL : arena_new(16 * 1024);
  b.hdr = hdr_arena ? hdr_arena : own_hdr;
  b.item = arena_new(256 * 1024);
  b.stream = 1;
  b.cb = cb;
  b.ctx = ctx;
  b.err = err;
  int rc = run_parser(fmt, &b, name, read, src);
  if (rc == 0 && b.depth != 0)
    rc = dserr_set(err, "%s: the document ends before it is complete", name);
  if (rc == 0 && !b.root)
    rc = dserr_set(err, "%s: empty document: expected a v1 List or a Kubernetes object", name);
  if (rc == 0 && b.root->type != DOC_MAP)
    rc = dserr_set(err, "%s: expected a v1 List or a Kubernetes object (a map), got %s", name,
                   doc_type_name(b.root->type));
  if (rc == 0 && !b.items_depth) {
    /* no `items`: the document is one object */
    rc = cb(ctx, b.root, err);
  }
  if (rc == 0 && header)
    *header = hdr_arena ? b.root : NULL;
  builder_free(&b);
  arena_free(b.item);
  arena_free(own_hdr);
  return rc;
}

/* After the fast reader refused a document halfway, yajl's reader reads it from the start:
 * the items already handed over are not handed over again. */
typedef struct {
  doc_item_cb cb;
  void *ctx;
  size_t seen, skip;
} resume_ctx;

static int resume_item(void *ctx, doc_node *item, dserr *err) {
  resume_ctx *r = ctx;
  if (r->seen++ < r->skip)
    return 0;
  return r->cb(r->ctx, item, err);
}

/* The fast reader on a JSON document: false (with *delivered items handed over) when yajl
 * must read it, else true with the stream's result, as doc_stream_list gives it, in *result. */
static bool stream_fast(const docf_source *src, const char *const *skip, doc_item_cb cb,
                        void *ctx, arena *hdr_arena, doc_node **header, size_t *delivered,
                        int *result, dserr *err) {
  arena *own_hdr = hdr_arena ? NULL : arena_new(16 * 1024);
  arena *item = arena_new(256 * 1024);
  doc_node *root = NULL;
  int cb_rc = 0;
  int rc = docf_stream(src, skip, cb, ctx, hdr_arena ? hdr_arena : own_hdr, item, &root,
                       delivered, &cb_rc, err);
  arena_free(item);
  arena_free(own_hdr);
  if (rc == DOCF_REFUSED)
    return false;
  *result = rc == DOCF_STOPPED ? cb_rc : 0;
  if (rc == DOCF_OK && header)
    *header = hdr_arena ? root : NULL;
  return true;
}

int doc_stream_memory_skipping(doc_format fmt, const char *name, const char *buf, size_t len,
                               const char *const *skip, doc_item_cb cb, void *ctx,
                               arena *hdr_arena, doc_node **header, dserr *err) {
  size_t delivered = 0;
  if (fmt == DOC_FMT_JSON) {
    docf_source src = {buf, len, NULL, 0};
    int rc;
    if (stream_fast(&src, skip, cb, ctx, hdr_arena, header, &delivered, &rc, err))
      return rc;
  }
  resume_ctx r = {cb, ctx, 0, delivered};
  mem_src m = {buf, len, 0};
  return doc_stream_list(fmt, name, mem_read, &m, resume_item, &r, hdr_arena, header, err);
}

int doc_stream_memory(doc_format fmt, const char *name, const char *buf, size_t len,
                      doc_item_cb cb, void *ctx, arena *hdr_arena, doc_node **header, dserr *err) {
  return doc_stream_memory_skipping(fmt, name, buf, len, NULL, cb, ctx, hdr_arena, header, err);
}

/* The file's first byte that is not blank (EOF when there is none). */
static int first_byte(FILE *f) {
  int c;
  do
    c = fgetc(f);
  while (c == ' ' || c == '\n' || c == '\r' || c == '\t');
  return c;
}

int doc_stream_file_split(const char *path, const char *const *skip, const doc_split *split,
                          doc_item_cb cb, void *ctx, arena *hdr_arena, doc_node **header,
                          dserr *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (split)
      split->drop(split->ctx);
    return dserr_set(err, "%s: cannot open: %s", path, strerror(errno));
  }
  int c = first_byte(f);
  doc_format fmt = (c == '{' || c == '[') ? DOC_FMT_JSON : DOC_FMT_YAML;
  rewind(f);
  size_t delivered = 0;
  if (fmt == DOC_FMT_JSON) {
    /* the fast reader joins or drops the split, whatever comes */
    docf_source src = {NULL, 0, f, 0, split};
    int rc;
    if (stream_fast(&src, skip, cb, ctx, hdr_arena, header, &delivered, &rc, err)) {
      fclose(f);
      return rc;
    }
    rewind(f);
  } else if (split) {
    split->drop(split->ctx);
  }
  resume_ctx r = {cb, ctx, 0, delivered};
  int rc = doc_stream_list(fmt, path, file_read, f, resume_item, &r, hdr_arena, header, err);
  fclose(f);
  return rc;
}

int doc_stream_file_skipping(const char *path, const char *const *skip, doc_item_cb cb, void *ctx,
                             arena *hdr_arena, doc_node **header, dserr *err) {
  return doc_stream_file_split(path, skip, NULL, cb, ctx, hdr_arena, header, err);
}

int doc_find_item(const char *path, uint64_t from, size_t span, uint64_t *at) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  int c = first_byte(f);
  /* only a JSON map's items are read by the fast reader, which joins or drops the worker */
  int rc = c == '{' ? docf_find_item(f, from, span, at) : DOCF_REFUSED;
  fclose(f);
  return rc == DOCF_OK ? 0 : -1;
}

int doc_stream_items_at(const char *path, uint64_t at, const char *const *skip, doc_item_cb cb,
                        void *ctx, uint64_t *resume, size_t *count, dserr *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  arena *item = arena_new(256 * 1024);
  int cb_rc = 0;
  *count = 0;
  int rc = docf_stream_items_at(f, 0, at, skip, cb, ctx, item, resume, count, &cb_rc, err);
  arena_free(item);
  fclose(f);
  return rc == DOCF_OK ? 0 : rc == DOCF_STOPPED ? cb_rc : -1;
}

int doc_stream_file(const char *path, doc_item_cb cb, void *ctx, arena *hdr_arena,
                    doc_node **header, dserr *err) {
  return doc_stream_file_skipping(path, NULL, cb, ctx, hdr_arena, header, err);
}

/* ---------- lookups ---------- */

doc_node *doc_get(const doc_node *map, const char *key) {
  if (!map || map->type != DOC_MAP)
    return NULL;
  /* decoders look up a dozen keys in maps of a dozen: the first byte rules most out */
  for (size_t i = 0; i < map->n; i++)
    if (map->pairs[i].key[0] == key[0] && strcmp(map->pairs[i].key, key) == 0)
      return map->pairs[i].value;
  return NULL;
}

doc_node *doc_path(const doc_node *node, ...) {
  va_list ap;
  va_start(ap, node);
  const char *k;
  doc_node *cur = (doc_node *)node;
  while (cur && (k = va_arg(ap, const char *)) != NULL)
    cur = doc_get(cur, k);
  va_end(ap);
  return cur;
}

const char *doc_str(const doc_node *node) {
  return node && node->type == DOC_STR ? node->text : NULL;
}

const char *doc_type_name(doc_type t) {
  switch (t) {
  case DOC_NULL: return "null";
  case DOC_BOOL: return "a boolean";
  case DOC_INT: return "an integer";
  case DOC_FLOAT: return "a number";
  case DOC_STR: return "a string";
  case DOC_MAP: return "a map";
  case DOC_SEQ: return "a list";
  }
  return "?";
}

const char *doc_describe(arena *a, const doc_node *node) {
  if (!node)
    return "nothing";
  switch (node->type) {
  case DOC_MAP:
  case DOC_SEQ:
  case DOC_NULL:
    return doc_type_name(node->type);
  case DOC_STR: {
    size_t n = strlen(node->text);
    char *s = arena_alloc(a, n + 3);
    s[0] = '"';
    memcpy(s + 1, node->text, n);
    s[n + 1] = '"';
    return s;
  }
  default:
    return node->text ? node->text : "?";
  }
}

doc_type doc_plain_scalar_type(const char *text) {
  arena *a = arena_new(256);
  doc_node n;
  memset(&n, 0, sizeof n);
  type_yaml_plain(a, &n, text);
  arena_free(a);
  return n.type;
}
