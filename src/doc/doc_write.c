/* doc_write.c - building, copying, comparing and writing document trees; see doc.h.
 *
 * The parsers in doc.c read trees; this file is the other direction. A renderer (the
 * KubeDescheduler CR -> DeschedulerPolicy translation) builds a tree with doc_new_* and
 * doc_map_put, then writes it. Map keys are written sorted, the way Go's encoding/json writes
 * a map and therefore the way the OpenShift operator's policy (JSON turned into YAML) looks.
 * YAML goes through libyaml's emitter so quoting and escaping follow the YAML spec; on top of
 * that a string whose plain form would read back as another type ("true", "10", "") is
 * quoted, since the emitter only checks that a plain scalar is well formed. */
#include "doc.h"

#include "../util/xalloc.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---------- building ---------- */

static doc_node *new_node(arena *a, doc_type t) {
  doc_node *n = ARENA_NEW(a, doc_node);
  n->type = t;
  return n;
}

doc_node *doc_new_null(arena *a) {
  doc_node *n = new_node(a, DOC_NULL);
  n->text = "null";
  return n;
}

doc_node *doc_new_bool(arena *a, bool b) {
  doc_node *n = new_node(a, DOC_BOOL);
  n->v.b = b;
  n->text = b ? "true" : "false";
  return n;
}

doc_node *doc_new_int(arena *a, int64_t i) {
  doc_node *n = new_node(a, DOC_INT);
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, i);
  n->v.i = i;
  n->text = arena_strdup(a, buf);
  return n;
}

doc_node *doc_new_str(arena *a, const char *s) {
  doc_node *n = new_node(a, DOC_STR);
  n->text = arena_strdup(a, s ? s : "");
  return n;
}

doc_node *doc_new_map(arena *a) {
  return new_node(a, DOC_MAP);
}
doc_node *doc_new_seq(arena *a) {
  return new_node(a, DOC_SEQ);
}

doc_node *doc_new_strs(arena *a, const char *const *items, size_t n) {
  doc_node *seq = doc_new_seq(a);
  for (size_t i = 0; i < n; i++)
    doc_seq_add(a, seq, doc_new_str(a, items[i]));
  return seq;
}

doc_node *doc_map_put(arena *a, doc_node *map, const char *key, doc_node *value) {
  for (size_t i = 0; i < map->n; i++)
    if (strcmp(map->pairs[i].key, key) == 0) {
      map->pairs[i].value = value;
      return value;
    }
  /* trees built here are small (a policy): copying the pair array on growth is fine */
  doc_pair *pairs = ARENA_NEWN(a, doc_pair, map->n + 1);
  if (map->n)
    memcpy(pairs, map->pairs, map->n * sizeof *pairs);
  pairs[map->n].key = arena_strdup(a, key);
  pairs[map->n].value = value;
  map->pairs = pairs;
  map->n++;
  return value;
}

doc_node *doc_seq_add(arena *a, doc_node *seq, doc_node *value) {
  doc_node **items = ARENA_NEWN(a, doc_node *, seq->n + 1);
  if (seq->n)
    memcpy(items, seq->items, seq->n * sizeof *items);
  items[seq->n++] = value;
  seq->items = items;
  return value;
}

doc_node *doc_copy(arena *a, const doc_node *src) {
  if (!src)
    return NULL;
  doc_node *n = ARENA_NEW(a, doc_node);
  *n = *src;
  if (src->text)
    n->text = arena_strdup(a, src->text);
  if (src->type == DOC_MAP) {
    n->pairs = ARENA_NEWN(a, doc_pair, src->n ? src->n : 1);
    for (size_t i = 0; i < src->n; i++) {
      n->pairs[i].key = arena_strdup(a, src->pairs[i].key);
      n->pairs[i].value = doc_copy(a, src->pairs[i].value);
    }
  } else if (src->type == DOC_SEQ) {
    n->items = ARENA_NEWN(a, doc_node *, src->n ? src->n : 1);
    for (size_t i = 0; i < src->n; i++)
      n->items[i] = doc_copy(a, src->items[i]);
  }
  return n;
}

/* ---------- comparing ---------- */

static bool is_number(const doc_node *n) {
  return n->type == DOC_INT || n->type == DOC_FLOAT;
}

static double number_of(const doc_node *n) {
  return n->type == DOC_INT && !n->big ? (double)n->v.i : n->v.f;
}

static bool equal_at(const doc_node *x, const doc_node *y, strbuf *where) {
  if (!x || !y)
    return x == y;
  if (is_number(x) && is_number(y)) {
    if (x->type == DOC_INT && y->type == DOC_INT && !x->big && !y->big)
      return x->v.i == y->v.i;
    return number_of(x) == number_of(y);
  }
  if (x->type != y->type)
    return false;
  switch (x->type) {
  case DOC_NULL: return true;
  case DOC_BOOL: return !x->v.b == !y->v.b;
  case DOC_STR: return strcmp(x->text, y->text) == 0;
  case DOC_SEQ: {
    size_t n = x->n < y->n ? x->n : y->n;
    for (size_t i = 0; i < n; i++) {
      size_t mark = where ? where->len : 0;
      if (where)
        sb_printf(where, "[%zu]", i);
      if (!equal_at(x->items[i], y->items[i], where))
        return false;
      if (where) {
        where->len = mark;
        where->buf[mark] = 0;
      }
    }
    if (x->n != y->n && where)
      sb_printf(where, " (%zu items, %zu items)", x->n, y->n);
    return x->n == y->n;
  }
  case DOC_MAP: {
    /* every key of x must be in y with an equal value, and y must have no other key */
    for (size_t i = 0; i < x->n; i++) {
      size_t mark = where ? where->len : 0;
      if (where)
        sb_printf(where, "%s%s", mark ? "." : "", x->pairs[i].key);
      const doc_node *other = doc_get(y, x->pairs[i].key);
      if (!other) {
        if (where)
          sb_append(where, " (missing in the second)");
        return false;
      }
      if (!equal_at(x->pairs[i].value, other, where))
        return false;
      if (where) {
        where->len = mark;
        if (where->buf)
          where->buf[mark] = 0;
      }
    }
    for (size_t i = 0; i < y->n; i++)
      if (!doc_get(x, y->pairs[i].key)) {
        if (where)
          sb_printf(where, "%s%s (missing in the first)", where->len ? "." : "", y->pairs[i].key);
        return false;
      }
    return true;
  }
  default: return false;
  }
}

bool doc_equal(const doc_node *x, const doc_node *y, strbuf *where) {
  if (where)
    sb_clear(where);
  return equal_at(x, y, where);
}

/* ---------- writing ---------- */

static int cmp_pairs(const void *a, const void *b) {
  return strcmp(((const doc_pair *)a)->key, ((const doc_pair *)b)->key);
}

/* The pairs of a map in key order (heap array, caller frees). */
static doc_pair *sorted_pairs(const doc_node *map) {
  doc_pair *p = xmalloc((map->n ? map->n : 1) * sizeof *p);
  if (map->n)
    memcpy(p, map->pairs, map->n * sizeof *p);
  qsort(p, map->n, sizeof *p, cmp_pairs);
  return p;
}

/* an integer too big for int64 keeps the digits it was written with */
static void number_text(const doc_node *n, char *buf, size_t cap) {
  if (n->type == DOC_INT && !n->big)
    snprintf(buf, cap, "%" PRId64, n->v.i);
  else if (n->type == DOC_INT && n->text && *n->text)
    snprintf(buf, cap, "%s", n->text);
  else {
    strbuf sb = {0};
    sb_append_json_double(&sb, n->v.f);
    snprintf(buf, cap, "%s", sb_str(&sb));
    sb_free(&sb);
  }
}

static int emit(yaml_emitter_t *em, yaml_event_t *ev) {
  return yaml_emitter_emit(em, ev) ? 0 : -1;
}

static int emit_scalar(yaml_emitter_t *em, const char *text, const char *tag, bool plain_only,
                       yaml_scalar_style_t style) {
  yaml_event_t ev;
  if (!yaml_scalar_event_initialize(&ev, NULL, (yaml_char_t *)tag, (yaml_char_t *)text,
                                    (int)strlen(text), 1, !plain_only, style))
    return -1;
  return emit(em, &ev);
}

static int emit_str(yaml_emitter_t *em, const char *s) {
  /* a string that would be read back as null, a boolean or a number must be quoted */
  bool quote = doc_plain_scalar_type(s) != DOC_STR;
  return emit_scalar(em, s, YAML_STR_TAG, false,
                     quote ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
}

static int emit_node(yaml_emitter_t *em, const doc_node *n) {
  yaml_event_t ev;
  char buf[64];
  switch (n->type) {
  case DOC_NULL: return emit_scalar(em, "null", YAML_NULL_TAG, true, YAML_PLAIN_SCALAR_STYLE);
  case DOC_BOOL:
    return emit_scalar(em, n->v.b ? "true" : "false", YAML_BOOL_TAG, true, YAML_PLAIN_SCALAR_STYLE);
  case DOC_INT:
  case DOC_FLOAT:
    number_text(n, buf, sizeof buf);
    return emit_scalar(em, buf, n->type == DOC_INT ? YAML_INT_TAG : YAML_FLOAT_TAG, true,
                       YAML_PLAIN_SCALAR_STYLE);
  case DOC_STR: return emit_str(em, n->text);
  case DOC_SEQ:
    if (!yaml_sequence_start_event_initialize(&ev, NULL, (yaml_char_t *)YAML_SEQ_TAG, 1,
                                              YAML_BLOCK_SEQUENCE_STYLE) ||
        emit(em, &ev) < 0)
      return -1;
    for (size_t i = 0; i < n->n; i++)
      if (emit_node(em, n->items[i]) < 0)
        return -1;
    if (!yaml_sequence_end_event_initialize(&ev))
      return -1;
    return emit(em, &ev);
  case DOC_MAP: {
    if (!yaml_mapping_start_event_initialize(&ev, NULL, (yaml_char_t *)YAML_MAP_TAG, 1,
                                             YAML_BLOCK_MAPPING_STYLE) ||
        emit(em, &ev) < 0)
      return -1;
    doc_pair *p = sorted_pairs(n);
    int rc = 0;
    for (size_t i = 0; i < n->n && rc == 0; i++)
      if (emit_str(em, p[i].key) < 0 || emit_node(em, p[i].value) < 0)
        rc = -1;
    free(p);
    if (rc < 0 || !yaml_mapping_end_event_initialize(&ev))
      return -1;
    return emit(em, &ev);
  }
  }
  return -1;
}

static int write_handler(void *data, unsigned char *buffer, size_t size) {
  sb_appendn(data, (const char *)buffer, size);
  return 1;
}

int doc_write_yaml(strbuf *out, const doc_node *node, dserr *err) {
  yaml_emitter_t em;
  yaml_event_t ev;
  if (!yaml_emitter_initialize(&em))
    return dserr_set(err, "cannot initialize the YAML writer");
  yaml_emitter_set_output(&em, write_handler, out);
  yaml_emitter_set_unicode(&em, 1);
  yaml_emitter_set_width(&em, -1);
  yaml_emitter_set_indent(&em, 2);
  int rc = -1;
  if (yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && emit(&em, &ev) == 0 &&
      yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && emit(&em, &ev) == 0 &&
      emit_node(&em, node) == 0 && yaml_document_end_event_initialize(&ev, 1) &&
      emit(&em, &ev) == 0 && yaml_stream_end_event_initialize(&ev) && emit(&em, &ev) == 0 &&
      yaml_emitter_flush(&em))
    rc = 0;
  if (rc < 0)
    dserr_set(err, "writing YAML: %s", em.problem ? em.problem : "libyaml failed");
  yaml_emitter_delete(&em);
  return rc;
}

static void json_at(strbuf *out, const doc_node *n, int indent, int depth) {
  char buf[64];
  switch (n->type) {
  case DOC_NULL: sb_append(out, "null"); return;
  case DOC_BOOL: sb_append(out, n->v.b ? "true" : "false"); return;
  case DOC_INT:
  case DOC_FLOAT:
    number_text(n, buf, sizeof buf);
    sb_append(out, buf);
    return;
  case DOC_STR: sb_append_json_str(out, n->text); return;
  case DOC_SEQ:
  case DOC_MAP: {
    bool map = n->type == DOC_MAP;
    if (!n->n) {
      sb_append(out, map ? "{}" : "[]");
      return;
    }
    doc_pair *p = map ? sorted_pairs(n) : NULL;
    sb_appendc(out, map ? '{' : '[');
    for (size_t i = 0; i < n->n; i++) {
      if (i)
        sb_appendc(out, ',');
      if (indent)
        sb_printf(out, "\n%*s", indent * (depth + 1), "");
      if (map) {
        sb_append_json_str(out, p[i].key);
        sb_append(out, indent ? ": " : ":");
      }
      json_at(out, map ? p[i].value : n->items[i], indent, depth + 1);
    }
    if (indent)
      sb_printf(out, "\n%*s", indent * depth, "");
    sb_appendc(out, map ? '}' : ']');
    free(p);
    return;
  }
  }
}

void doc_write_json(strbuf *out, const doc_node *node, int indent) {
  json_at(out, node, indent, 0);
}
