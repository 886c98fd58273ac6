/* selector.c - label selectors; see selector.h. */
#include "selector.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *kv_get(const kvlist *list, const char *key) {
  if (!list)
    return NULL;
  for (size_t i = 0; i < list->n; i++)
    if (list->items[i].key == key || strcmp(list->items[i].key, key) == 0)
      return list->items[i].value;
  return NULL;
}

static bool name_char(int c) { return isalnum(c) || c == '-' || c == '_' || c == '.'; }

/* a "qualified name" part: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63 characters */
static const char *name_problem(const char *s, size_t n) {
  if (n == 0)
    return "name part must be non-empty";
  if (n > 63)
    return "name part must be no more than 63 characters";
  if (!isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
    return "name part must start and end with an alphanumeric character";
  for (size_t i = 0; i < n; i++)
    if (!name_char((unsigned char)s[i]))
      return "name part must consist of alphanumeric characters, '-', '_' or '.'";
  return NULL;
}

const char *label_key_problem(const char *key) {
  const char *slash = strchr(key, '/');
  if (!slash)
    return name_problem(key, strlen(key));
  size_t plen = (size_t)(slash - key);
  if (plen == 0)
    return "prefix part must be non-empty";
  if (plen > 253)
    return "prefix part must be no more than 253 characters";
  for (size_t i = 0; i < plen; i++) {
    int c = (unsigned char)key[i];
    if (!(islower(c) || isdigit(c) || c == '-' || c == '.'))
      return "prefix part must be a lowercase DNS subdomain";
    /* each dot-separated label of the subdomain starts and ends alphanumeric */
    if (c == '.' && (i == 0 || i + 1 == plen || !isalnum((unsigned char)key[i - 1]) ||
                     !isalnum((unsigned char)key[i + 1])))
      return "prefix part must be a lowercase DNS subdomain";
  }
  if (!isalnum((unsigned char)key[0]) || !isalnum((unsigned char)key[plen - 1]))
    return "prefix part must start and end with an alphanumeric character";
  return name_problem(slash + 1, strlen(slash + 1));
}

const char *label_value_problem(const char *value) {
  size_t n = strlen(value);
  if (n == 0)
    return NULL;
  if (n > 63)
    return "a label value must be no more than 63 characters";
  if (!isalnum((unsigned char)value[0]) || !isalnum((unsigned char)value[n - 1]))
    return "a label value must start and end with an alphanumeric character";
  for (size_t i = 0; i < n; i++)
    if (!name_char((unsigned char)value[i]))
      return "a label value must consist of alphanumeric characters, '-', '_' or '.'";
  return NULL;
}

/* ---------- building ---------- */

typedef struct {
  sel_req *reqs;
  size_t n, cap;
} req_vec;

static sel_req *vec_push(req_vec *v) {
  if (v->n == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 4;
    v->reqs = realloc(v->reqs, v->cap * sizeof *v->reqs);
    if (!v->reqs)
      abort();
  }
  memset(&v->reqs[v->n], 0, sizeof v->reqs[0]);
  return &v->reqs[v->n++];
}

static label_selector *vec_finish(arena *a, req_vec *v) {
  label_selector *s = ARENA_NEW(a, label_selector);
  s->n = v->n;
  s->reqs = ARENA_NEWN(a, sel_req, v->n ? v->n : 1);
  if (v->n)
    memcpy(s->reqs, v->reqs, v->n * sizeof *v->reqs);
  free(v->reqs);
  return s;
}

/* ---------- string syntax ---------- */

typedef struct {
  const char *s, *p;
  arena *a;
  dserr *err;
} lexer;

static void skip_ws(lexer *l) {
  while (*l->p == ' ' || *l->p == '\t')
    l->p++;
}

/* identifier: any run of characters that are not whitespace or an operator character */
static const char *ident(lexer *l) {
  skip_ws(l);
  const char *start = l->p;
  while (*l->p && !strchr(" \t,=!<>()", *l->p))
    l->p++;
  return arena_strndup(l->a, start, (size_t)(l->p - start));
}

static int lex_fail(lexer *l, const char *what) {
  return dserr_set(l->err, "invalid label selector \"%s\": %s at position %d", l->s, what,
                   (int)(l->p - l->s) + 1);
}

static int check_key(lexer *l, const char *key) {
  const char *why = label_key_problem(key);
  if (why)
    return dserr_set(l->err, "invalid label selector \"%s\": key \"%s\": %s", l->s, key, why);
  return 0;
}

static int check_value(lexer *l, const char *v) {
  const char *why = label_value_problem(v);
  if (why)
    return dserr_set(l->err, "invalid label selector \"%s\": value \"%s\": %s", l->s, v, why);
  return 0;
}

static int parse_values(lexer *l, sel_req *r) {
  skip_ws(l);
  if (*l->p != '(')
    return lex_fail(l, "expected '(' after in/notin");
  l->p++;
  size_t cap = 4;
  const char **vals = malloc(cap * sizeof *vals);
  size_t n = 0;
  for (;;) {
    const char *v = ident(l);
    skip_ws(l);
    if (*v == 0 && *l->p == ')' && n == 0)
      break; /* "()" : rejected below */
    if (check_value(l, v) < 0) {
      free(vals);
      return -1;
    }
    if (n == cap)
      vals = realloc(vals, (cap *= 2) * sizeof *vals);
    vals[n++] = v;
    if (*l->p == ',') {
      l->p++;
      continue;
    }
    if (*l->p == ')')
      break;
    free(vals);
    return lex_fail(l, "expected ',' or ')' in a value list");
  }
  l->p++;
  if (n == 0) {
    free(vals);
    return dserr_set(l->err, "invalid label selector \"%s\": in/notin for key \"%s\" needs at least one value",
                     l->s, r->key);
  }
  r->values = ARENA_NEWN(l->a, const char *, n);
  memcpy(r->values, vals, n * sizeof *vals);
  r->nvalues = n;
  free(vals);
  return 0;
}

static bool parse_i64(const char *s, long long *out);

static int one_value(lexer *l, sel_req *r, bool numeric) {
  const char *v = ident(l);
  if (numeric) {
    long long ignored;
    if (!parse_i64(v, &ignored))
      return dserr_set(l->err, "invalid label selector \"%s\": value for %s must be an integer, got \"%s\"",
                       l->s, r->key, v);
  } else if (check_value(l, v) < 0) {
    return -1;
  }
  r->values = ARENA_NEWN(l->a, const char *, 1);
  r->values[0] = v;
  r->nvalues = 1;
  return 0;
}

static int parse_req(lexer *l, sel_req *r) {
  skip_ws(l);
  if (*l->p == '!') {
    l->p++;
    r->key = ident(l);
    r->op = SEL_DOES_NOT_EXIST;
    if (*r->key == 0)
      return lex_fail(l, "expected a key after '!'");
    return check_key(l, r->key);
  }
  r->key = ident(l);
  if (*r->key == 0)
    return lex_fail(l, "expected a key");
  if (check_key(l, r->key) < 0)
    return -1;
  skip_ws(l);
  const char *p = l->p;
  if (*p == 0 || *p == ',') {
    r->op = SEL_EXISTS;
    return 0;
  }
  if (p[0] == '=' && p[1] == '=') {
    l->p += 2;
    r->op = SEL_EQUALS;
    return one_value(l, r, false);
  }
  if (p[0] == '=') {
    l->p += 1;
    r->op = SEL_EQUALS;
    return one_value(l, r, false);
  }
  if (p[0] == '!' && p[1] == '=') {
    l->p += 2;
    r->op = SEL_NOT_EQUALS;
    return one_value(l, r, false);
  }
  if (p[0] == '>' || p[0] == '<') {
    l->p += 1;
    r->op = p[0] == '>' ? SEL_GT : SEL_LT;
    return one_value(l, r, true);
  }
  if (strncmp(p, "in", 2) == 0 && (p[2] == ' ' || p[2] == '(' || p[2] == '\t')) {
    l->p += 2;
    r->op = SEL_IN;
    return parse_values(l, r);
  }
  if (strncmp(p, "notin", 5) == 0 && (p[5] == ' ' || p[5] == '(' || p[5] == '\t')) {
    l->p += 5;
    r->op = SEL_NOTIN;
    return parse_values(l, r);
  }
  return lex_fail(l, "expected an operator (=, ==, !=, in, notin, >, <), ',' or the end");
}

int selector_parse(arena *a, const char *text, label_selector **out, dserr *err) {
  lexer l = {text, text, a, err};
  req_vec v = {0};
  skip_ws(&l);
  if (*l.p == 0) {
    *out = vec_finish(a, &v);
    return 0;
  }
  for (;;) {
    sel_req *r = vec_push(&v);
    if (parse_req(&l, r) < 0) {
      free(v.reqs);
      return -1;
    }
    skip_ws(&l);
    if (*l.p == 0)
      break;
    if (*l.p != ',') {
      free(v.reqs);
      return lex_fail(&l, "expected ',' between requirements");
    }
    l.p++;
  }
  *out = vec_finish(a, &v);
  return 0;
}

/* ---------- metav1.LabelSelector ---------- */

static int strings_from_seq(arena *a, const doc_node *seq, const char *path, const char ***out,
                            size_t *n, dserr *err) {
  *out = NULL;
  *n = 0;
  if (!seq || seq->type == DOC_NULL)
    return 0;
  if (seq->type != DOC_SEQ)
    return dserr_set(err, "%s: expected a list of strings, got %s", path, doc_type_name(seq->type));
  *out = ARENA_NEWN(a, const char *, seq->n ? seq->n : 1);
  for (size_t i = 0; i < seq->n; i++) {
    if (seq->items[i]->type != DOC_STR)
      return dserr_set(err, "%s[%zu]: expected a string, got %s", path, i,
                       doc_type_name(seq->items[i]->type));
    (*out)[i] = arena_strdup(a, seq->items[i]->text);
  }
  *n = seq->n;
  return 0;
}

static int op_from_text(const char *s, bool node_ops, sel_op *op) {
  static const struct {
    const char *name;
    sel_op op;
    bool node_only;
  } ops[] = {{"In", SEL_IN, false},     {"NotIn", SEL_NOTIN, false},
             {"Exists", SEL_EXISTS, false}, {"DoesNotExist", SEL_DOES_NOT_EXIST, false},
             {"Gt", SEL_GT, true},       {"Lt", SEL_LT, true}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(s, ops[i].name) == 0 && (node_ops || !ops[i].node_only)) {
      *op = ops[i].op;
      return 0;
    }
  return -1;
}

static int add_expressions(arena *a, req_vec *v, const doc_node *exprs, const char *path,
                           bool node_ops, bool check_syntax, dserr *err) {
  if (!exprs || exprs->type == DOC_NULL)
    return 0;
  if (exprs->type != DOC_SEQ)
    return dserr_set(err, "%s: expected a list, got %s", path, doc_type_name(exprs->type));
  for (size_t i = 0; i < exprs->n; i++) {
    const doc_node *e = exprs->items[i];
    if (e->type != DOC_MAP)
      return dserr_set(err, "%s[%zu]: expected a map with key, operator and values", path, i);
    for (size_t k = 0; k < e->n; k++)
      if (strcmp(e->pairs[k].key, "key") && strcmp(e->pairs[k].key, "operator") &&
          strcmp(e->pairs[k].key, "values"))
        return dserr_set(err, "%s[%zu]: unknown field \"%s\" (expected key, operator, values)", path,
                         i, e->pairs[k].key);
    const char *key = doc_str(doc_get(e, "key"));
    const char *opname = doc_str(doc_get(e, "operator"));
    if (!key)
      return dserr_set(err, "%s[%zu].key: expected a string", path, i);
    if (!opname)
      return dserr_set(err, "%s[%zu].operator: expected a string", path, i);
    sel_req *r = vec_push(v);
    r->key = arena_strdup(a, key);
    if (op_from_text(opname, node_ops, &r->op) < 0)
      return dserr_set(err, "%s[%zu].operator: \"%s\" is not a valid label selector operator", path,
                       i, opname);
    char vpath[512];
    snprintf(vpath, sizeof vpath, "%s[%zu].values", path, i);
    if (strings_from_seq(a, doc_get(e, "values"), vpath, &r->values, &r->nvalues, err) < 0)
      return -1;
    if (check_syntax) {
      const char *why = label_key_problem(key);
      if (why)
        return dserr_set(err, "%s[%zu].key: invalid label key \"%s\": %s", path, i, key, why);
      bool set_op = r->op == SEL_IN || r->op == SEL_NOTIN;
      if (set_op && r->nvalues == 0)
        return dserr_set(err, "%s[%zu].values: must be specified when `operator` is 'In' or 'NotIn'",
                         path, i);
      if (!set_op && r->op != SEL_GT && r->op != SEL_LT && r->nvalues != 0)
        return dserr_set(err,
                         "%s[%zu].values: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                         path, i);
      for (size_t j = 0; j < r->nvalues; j++)
        if ((why = label_value_problem(r->values[j])))
          return dserr_set(err, "%s[%zu].values[%zu]: invalid label value \"%s\": %s", path, i, j,
                           r->values[j], why);
    }
  }
  return 0;
}

int selector_from_doc(arena *a, const doc_node *node, const char *path, label_selector **out,
                      dserr *err) {
  req_vec v = {0};
  if (!node || node->type == DOC_NULL) {
    *out = vec_finish(a, &v);
    (*out)->nothing = true;
    return 0;
  }
  if (node->type != DOC_MAP) {
    return dserr_set(err, "%s: expected a label selector (a map with matchLabels and/or "
                          "matchExpressions), got %s",
                     path, doc_type_name(node->type));
  }
  for (size_t i = 0; i < node->n; i++)
    if (strcmp(node->pairs[i].key, "matchLabels") && strcmp(node->pairs[i].key, "matchExpressions"))
      return dserr_set(err, "%s: unknown field \"%s\" (expected matchLabels, matchExpressions)",
                       path, node->pairs[i].key);
  const doc_node *ml = doc_get(node, "matchLabels");
  char sub[512];
  if (ml && ml->type != DOC_NULL) {
    if (ml->type != DOC_MAP)
      return dserr_set(err, "%s.matchLabels: expected a map of strings, got %s", path,
                       doc_type_name(ml->type));
    for (size_t i = 0; i < ml->n; i++) {
      const doc_node *val = ml->pairs[i].value;
      if (val->type != DOC_STR) {
        free(v.reqs);
        return dserr_set(err, "%s.matchLabels.%s: expected a string, got %s", path,
                         ml->pairs[i].key, doc_type_name(val->type));
      }
      const char *why = label_key_problem(ml->pairs[i].key);
      if (!why)
        why = label_value_problem(val->text);
      if (why) {
        free(v.reqs);
        return dserr_set(err, "%s.matchLabels: \"%s\": \"%s\": %s", path, ml->pairs[i].key,
                         val->text, why);
      }
      sel_req *r = vec_push(&v);
      r->key = arena_strdup(a, ml->pairs[i].key);
      r->op = SEL_EQUALS;
      r->values = ARENA_NEWN(a, const char *, 1);
      r->values[0] = arena_strdup(a, val->text);
      r->nvalues = 1;
    }
  }
  snprintf(sub, sizeof sub, "%s.matchExpressions", path);
  if (add_expressions(a, &v, doc_get(node, "matchExpressions"), sub, false, true, err) < 0) {
    free(v.reqs);
    return -1;
  }
  *out = vec_finish(a, &v);
  return 0;
}

int selector_add_node_reqs(arena *a, label_selector *sel, const doc_node *exprs, const char *path,
                           dserr *err) {
  req_vec v = {0};
  if (add_expressions(a, &v, exprs, path, true, false, err) < 0) {
    free(v.reqs);
    return -1;
  }
  if (v.n) {
    sel_req *all = ARENA_NEWN(a, sel_req, sel->n + v.n);
    if (sel->n)
      memcpy(all, sel->reqs, sel->n * sizeof *all);
    memcpy(all + sel->n, v.reqs, v.n * sizeof *all);
    sel->reqs = all;
    sel->n += v.n;
  }
  free(v.reqs);
  return 0;
}

/* ---------- matching ---------- */

static bool in_values(const sel_req *r, const char *v) {
  for (size_t i = 0; i < r->nvalues; i++)
    if (strcmp(r->values[i], v) == 0)
      return true;
  return false;
}

static bool parse_i64(const char *s, long long *out) {
  char *end;
  if (!*s)
    return false;
  errno = 0;
  *out = strtoll(s, &end, 10);
  return *end == 0 && errno != ERANGE; /* Go's ParseInt refuses out-of-range values */
}

static bool req_matches(const sel_req *r, const kvlist *labels) {
  const char *v = kv_get(labels, r->key);
  switch (r->op) {
  case SEL_IN:
  case SEL_EQUALS:
    return v && in_values(r, v);
  case SEL_NOTIN:
  case SEL_NOT_EQUALS:
    return !v || !in_values(r, v);
  case SEL_EXISTS:
    return v != NULL;
  case SEL_DOES_NOT_EXIST:
    return v == NULL;
  case SEL_GT:
  case SEL_LT: {
    long long have, want;
    if (!v || r->nvalues != 1 || !parse_i64(v, &have) || !parse_i64(r->values[0], &want))
      return false;
    return r->op == SEL_GT ? have > want : have < want;
  }
  }
  return false;
}

bool selector_matches(const label_selector *sel, const kvlist *labels) {
  if (!sel || sel->nothing)
    return false;
  for (size_t i = 0; i < sel->n; i++)
    if (!req_matches(&sel->reqs[i], labels))
      return false;
  return true;
}

bool selector_is_empty(const label_selector *sel) { return sel && !sel->nothing && sel->n == 0; }
