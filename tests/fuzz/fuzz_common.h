/* fuzz_common.h - small helpers shared by the libFuzzer targets in this directory.
 *
 * Every target checks the project rule "bad input gets a clear error, never a crash": the
 * sanitizers catch the crashes, fuzz_require_error catches a failure without a message. */
#ifndef DS_FUZZ_COMMON_H
#define DS_FUZZ_COMMON_H

#include "../../src/obs/log.h"
#include "../../src/doc/doc.h"
#include "../../src/util/err.h"
#include "../../src/apimachinery/selector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The input as a NUL-terminated heap string (caller frees). Parsers of C strings see the
 * text up to the first NUL, as they would from a file read into a string. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s)
    abort();
  memcpy(s, data, size);
  s[size] = 0;
  return s;
}

/* A failing call must leave a message: an empty one is a bug. */
static inline void fuzz_require_error(int rc, const dserr *err, const char *what) {
  if (rc < 0 && err->msg[0] == 0) {
    fprintf(stderr, "%s failed without an error message\n", what);
    abort();
  }
}

/* Sends every log line to /dev/null at a high verbosity, so log formatting runs too. */
static inline void fuzz_quiet_logs(int verbosity) {
  static FILE *null;
  if (!null) {
    null = fopen("/dev/null", "w");
    if (!null)
      abort();
    log_set_stream(null);
  }
  log_set_verbosity(verbosity);
}

/* Visits at most `budget` nodes of a tree (YAML aliases may share or even loop), touching
 * every field so the sanitizers see a bad pointer. Returns the number of nodes visited. */
static inline size_t fuzz_walk_doc(arena *a, const doc_node *root, size_t budget) {
  const doc_node **stack = malloc(sizeof *stack * 1024);
  size_t cap = 1024, n = 0, seen = 0;
  if (!stack)
    abort();
  if (root)
    stack[n++] = root;
  while (n && seen < budget) {
    const doc_node *d = stack[--n];
    seen++;
    (void)doc_describe(a, d);
    (void)doc_type_name(d->type);
    if (d->type == DOC_STR && strlen(d->text) > SIZE_MAX / 2)
      abort();
    size_t kids = d->type == DOC_MAP || d->type == DOC_SEQ ? d->n : 0;
    if (n + kids > cap) {
      cap = (n + kids) * 2;
      stack = realloc(stack, sizeof *stack * cap);
      if (!stack)
        abort();
    }
    if (d->type == DOC_MAP && kids)
      (void)doc_get(d, d->pairs[kids - 1].key);
    for (size_t i = 0; i < kids; i++) {
      if (d->type == DOC_MAP) {
        (void)strlen(d->pairs[i].key);
        stack[n++] = d->pairs[i].value;
      } else {
        stack[n++] = d->items[i];
      }
    }
  }
  free(stack);
  return seen;
}

static const kv fuzz_fixed_labels[] = {
    {"app", "web"}, {"tier", "frontend"}, {"version", "3"}, {"example.com/zone", "a"}, {"x", ""}};

/* Matches sel against the fixed labels, no labels, and labels that echo its requirements
 * (first value of each), so both outcomes of every operator run. */
static inline void fuzz_match_selector(arena *a, const label_selector *sel) {
  kvlist fixed = {sizeof fuzz_fixed_labels / sizeof fuzz_fixed_labels[0], (kv *)fuzz_fixed_labels};
  kvlist none = {0, NULL};
  (void)selector_matches(sel, &fixed);
  (void)selector_matches(sel, &none);
  (void)selector_is_empty(sel);
  kvlist echo = {0, ARENA_NEWN(a, kv, sel->n ? sel->n : 1)};
  for (size_t i = 0; i < sel->n; i++) {
    const sel_req *r = &sel->reqs[i];
    if (!r->key)
      abort();
    for (size_t j = 0; j < r->nvalues; j++)
      if (!r->values[j])
        abort();
    if (kv_get(&echo, r->key))
      continue;
    echo.items[echo.n].key = r->key;
    echo.items[echo.n].value = r->nvalues ? r->values[0] : "";
    echo.n++;
  }
  (void)selector_matches(sel, &echo);
}

#endif
