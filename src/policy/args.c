/* args.c - table-driven strict decoding of plugin args; see args.h. */
#include "args.h"

#include "../util/strbuf.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  arena *a;
  dserr *err;
  strbuf strict; /* collected strict-decoding problems, joined by ", " */
} decoder;

static int type_error(decoder *d, const char *path, const char *want, const doc_node *got) {
  return dserr_set(d->err, "%s: expected %s, got %s", path, want, doc_describe(d->a, got));
}

static void strict_problem(decoder *d, const char *what, const char *rel, const char *key) {
  if (d->strict.len)
    sb_append(&d->strict, ", ");
  sb_printf(&d->strict, "%s field \"%s%s%s\"", what, rel, *rel ? "." : "", key);
}

static bool is_null(const doc_node *n) { return !n || n->type == DOC_NULL; }

static int decode_strings(decoder *d, const doc_node *n, const char *path, str_list *out) {
  if (is_null(n))
    return 0;
  if (n->type != DOC_SEQ)
    return type_error(d, path, "a list of strings", n);
  out->set = true;
  out->n = n->n;
  out->items = ARENA_NEWN(d->a, const char *, n->n ? n->n : 1);
  for (size_t i = 0; i < n->n; i++) {
    if (n->items[i]->type != DOC_STR) {
      char p[600];
      snprintf(p, sizeof p, "%s[%zu]", path, i);
      return type_error(d, p, "a string", n->items[i]);
    }
    out->items[i] = arena_strdup(d->a, n->items[i]->text);
  }
  return 0;
}

static int want_int(decoder *d, const doc_node *n, const char *path, int64_t lo, int64_t hi,
                    const char *what, int64_t *out) {
  if (n->type != DOC_INT || n->big || n->v.i < lo || n->v.i > hi)
    return type_error(d, path, what, n);
  *out = n->v.i;
  return 0;
}

static int decode_fields(decoder *d, const doc_node *node, const args_field *fields, char *base,
                         const char *path, const char *rel);

static int decode_one(decoder *d, const args_field *f, const doc_node *v, char *base,
                      const char *path, const char *rel) {
  void *dst = base + f->offset;
  int64_t iv = 0;
  switch (f->kind) {
  case AF_PRESENT:
    *(bool *)dst = !is_null(v);
    return 0;
  case AF_BOOL:
  case AF_OPT_BOOL:
    if (is_null(v))
      return 0;
    if (v->type != DOC_BOOL)
      return type_error(d, path, "true or false", v);
    if (f->kind == AF_BOOL)
      *(bool *)dst = v->v.b;
    else
      *(opt_bool *)dst = (opt_bool){true, v->v.b};
    return 0;
  case AF_INT32:
    if (is_null(v))
      return 0;
    if (want_int(d, v, path, INT32_MIN, INT32_MAX, "a 32-bit integer", &iv) < 0)
      return -1;
    *(int32_t *)dst = (int32_t)iv;
    return 0;
  case AF_INT64:
  case AF_OPT_INT:
    if (is_null(v))
      return 0;
    if (want_int(d, v, path, INT64_MIN, INT64_MAX, "an integer", &iv) < 0)
      return -1;
    if (f->kind == AF_INT64)
      *(int64_t *)dst = iv;
    else
      *(opt_int *)dst = (opt_int){true, iv};
    return 0;
  case AF_UINT:
  case AF_OPT_UINT:
    if (is_null(v))
      return 0;
    if (want_int(d, v, path, 0, INT64_MAX, "a non-negative integer", &iv) < 0)
      return -1;
    if (f->kind == AF_UINT)
      *(uint64_t *)dst = (uint64_t)iv;
    else
      *(opt_uint *)dst = (opt_uint){true, (uint64_t)iv};
    return 0;
  case AF_OPT_FLOAT:
    if (is_null(v))
      return 0;
    if (v->type == DOC_INT)
      *(opt_float *)dst = (opt_float){true, v->big ? v->v.f : (double)v->v.i};
    else if (v->type == DOC_FLOAT)
      *(opt_float *)dst = (opt_float){true, v->v.f};
    else
      return type_error(d, path, "a number", v);
    return 0;
  case AF_STRING:
    if (is_null(v))
      return 0;
    if (v->type != DOC_STR)
      return type_error(d, path, "a string", v);
    *(const char **)dst = arena_strdup(d->a, v->text);
    return 0;
  case AF_STRINGS:
    return decode_strings(d, v, path, dst);
  case AF_INT32S: {
    if (is_null(v))
      return 0;
    if (v->type != DOC_SEQ)
      return type_error(d, path, "a list of integers", v);
    i32_list *l = dst;
    l->set = true;
    l->n = v->n;
    l->items = ARENA_NEWN(d->a, int32_t, v->n ? v->n : 1);
    for (size_t i = 0; i < v->n; i++) {
      char p[600];
      snprintf(p, sizeof p, "%s[%zu]", path, i);
      if (want_int(d, v->items[i], p, INT32_MIN, INT32_MAX, "a 32-bit integer", &iv) < 0)
        return -1;
      l->items[i] = (int32_t)iv;
    }
    return 0;
  }
  case AF_PCT_MAP: {
    if (is_null(v))
      return 0;
    if (v->type != DOC_MAP)
      return type_error(d, path, "a map of resource names to percentages", v);
    pct_map *m = dst;
    m->set = true;
    m->n = v->n;
    m->keys = ARENA_NEWN(d->a, const char *, v->n ? v->n : 1);
    m->values = ARENA_NEWN(d->a, double, v->n ? v->n : 1);
    for (size_t i = 0; i < v->n; i++) {
      const doc_node *x = v->pairs[i].value;
      for (size_t j = 0; j < i; j++)
        if (strcmp(m->keys[j], v->pairs[i].key) == 0)
          strict_problem(d, "duplicate", rel, v->pairs[i].key);
      m->keys[i] = arena_strdup(d->a, v->pairs[i].key);
      if (x->type == DOC_INT)
        m->values[i] = x->big ? x->v.f : (double)x->v.i;
      else if (x->type == DOC_FLOAT)
        m->values[i] = x->v.f;
      else {
        char p[600];
        snprintf(p, sizeof p, "%s.%s", path, v->pairs[i].key);
        return type_error(d, p, "a number (a percentage)", x);
      }
    }
    return 0;
  }
  case AF_NAMESPACES: {
    static const args_field ns_fields[] = {
        {"include", AF_STRINGS, offsetof(ns_filter, include)},
        {"exclude", AF_STRINGS, offsetof(ns_filter, exclude)},
        {NULL}};
    if (is_null(v))
      return 0;
    ((ns_filter *)dst)->set = true;
    return decode_fields(d, v, ns_fields, dst, path, rel);
  }
  case AF_SELECTOR:
    if (is_null(v))
      return 0;
    return selector_from_doc(d->a, v, path, (label_selector **)dst, d->err);
  case AF_OBJECT:
    if (is_null(v))
      return 0;
    if (f->present_offset)
      *(bool *)(base + f->present_offset) = true;
    return decode_fields(d, v, f->sub, dst, path, rel);
  case AF_OBJECTS: {
    if (is_null(v))
      return 0;
    if (v->type != DOC_SEQ)
      return type_error(d, path, "a list", v);
    obj_list *l = dst;
    l->n = v->n;
    l->items = arena_alloc(d->a, f->elem_size * (v->n ? v->n : 1));
    for (size_t i = 0; i < v->n; i++) {
      char p[600], r[600];
      snprintf(p, sizeof p, "%s[%zu]", path, i);
      snprintf(r, sizeof r, "%s[%zu]", rel, i);
      if (decode_fields(d, v->items[i], f->sub, (char *)l->items + i * f->elem_size, p, r) < 0)
        return -1;
    }
    return 0;
  }
  }
  return 0;
}

static int decode_fields(decoder *d, const doc_node *node, const args_field *fields, char *base,
                         const char *path, const char *rel) {
  if (is_null(node))
    return 0;
  if (node->type != DOC_MAP)
    return type_error(d, path, "a map", node);
  for (size_t i = 0; i < node->n; i++) {
    const char *key = node->pairs[i].key;
    bool dup = false;
    for (size_t j = 0; j < i; j++)
      dup |= strcmp(node->pairs[j].key, key) == 0;
    if (dup) {
      strict_problem(d, "duplicate", rel, key);
      continue;
    }
    const args_field *f = fields;
    while (f->key && strcmp(f->key, key) != 0)
      f++;
    if (!f->key) {
      strict_problem(d, "unknown", rel, key);
      continue;
    }
    char p[600], r[600];
    snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", key);
    snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "." : "", key);
    if (decode_one(d, f, node->pairs[i].value, base, p, r) < 0)
      return -1;
  }
  return 0;
}

int args_decode(arena *a, const doc_node *node, const args_field *fields, void *dst,
                const char *path, dserr *err) {
  decoder d = {a, err, {0}};
  int rc = decode_fields(&d, node, fields, dst, path, "");
  if (rc == 0 && d.strict.len) {
    /* "unknown field ..." problems become one upstream-shaped message */
    strbuf msg = {0};
    sb_append(&msg, "strict decoding error: ");
    /* upstream prints `unknown field "x"`; the collected text reads `unknown field "x"` */
    sb_append(&msg, sb_str(&d.strict));
    dserr_set(err, "%s", sb_str(&msg));
    sb_free(&msg);
    rc = -1;
  }
  sb_free(&d.strict);
  return rc;
}

bool str_list_contains(const str_list *l, const char *s) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->items[i], s) == 0)
      return true;
  return false;
}

bool ns_filter_allows(const ns_filter *f, const char *ns) {
  if (!f)
    return true;
  if (f->include.n && !str_list_contains(&f->include, ns))
    return false;
  if (f->exclude.n && str_list_contains(&f->exclude, ns))
    return false;
  return true;
}
