/* selector.c - label selectors; see selector.h.
 *
 * Two error styles live here. The string syntax (policy nodeSelector, DefaultEvictor
 * nodeSelector) fails at once with a message quoting the text. A metav1.LabelSelector object
 * that decodes but does not convert keeps upstream's conversion error in `invalid`, because
 * what that means depends on who holds the selector (see selector.h). */
#include "selector.h"

#include "../util/strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *kv_get(const kvlist *list, const char *key) {
  if (!list)
    return NULL;
  for (size_t i = 0; i < list->n; i++)
    if (list->items[i].key == key ||
        (list->items[i].key[0] == key[0] && strcmp(list->items[i].key, key) == 0))
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
    /* "()" holds the empty value, as Go's parser reads it */
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

/* ---------- upstream's texts: labels.NewRequirement as LabelSelectorAsSelector reports it ----------
 *
 * k8s.io/apimachinery pkg/labels NewRequirement validates with pkg/api/validate/content
 * (IsLabelKey, IsLabelValue) and returns a field.ErrorList aggregate: one error prints as
 * `key: Invalid value: "x": <reasons joined by "; ">`, several as `[e1, e2]`. */

#define GO_LABEL_KEY_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define GO_LABEL_KEY_MSG                                                                           \
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "      \
  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "           \
  "validation is '" GO_LABEL_KEY_FMT "')"
#define GO_DNS_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define GO_DNS_SUBDOMAIN_MSG                                                                       \
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "    \
  "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "   \
  "for validation is '" GO_DNS_LABEL_FMT "(\\." GO_DNS_LABEL_FMT ")*')"
#define GO_LABEL_VALUE_MSG                                                                         \
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "     \
  "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  " \
  "or '12345', regex used for validation is '(" GO_LABEL_KEY_FMT ")?')"

/* ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ */
static bool go_name_ok(const char *s, size_t n) {
  if (n == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!name_char((unsigned char)s[i]) || (unsigned char)s[i] >= 0x80)
      return false;
  return true;
}

/* ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ */
static bool go_subdomain_ok(const char *s, size_t n) {
  size_t start = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i < n && s[i] != '.') {
      int c = (unsigned char)s[i];
      if (!(islower(c) || isdigit(c) || c == '-'))
        return false;
      continue;
    }
    if (i == start || s[start] == '-' || s[i - 1] == '-')
      return false; /* an empty label, or one starting or ending with '-' */
    start = i + 1;
  }
  return true;
}

/* content.IsLabelKey's reasons joined by "; "; 0 when the key is valid. */
static int go_key_reasons(strbuf *sb, const char *key) {
  int n = 0;
#define REASON(...) (sb_append(sb, n++ ? "; " : ""), sb_printf(sb, __VA_ARGS__))
  const char *slash = strchr(key, '/');
  const char *name = key;
  if (slash && strchr(slash + 1, '/')) {
    REASON("a valid label key %s with an optional DNS subdomain prefix and '/' (e.g. "
           "'example.com/MyName')",
           GO_LABEL_KEY_MSG);
    return n;
  }
  if (slash) {
    size_t plen = (size_t)(slash - key);
    if (plen == 0) {
      REASON("prefix part must be non-empty");
    } else {
      if (plen > 253)
        REASON("prefix part must be no more than 253 bytes");
      if (!go_subdomain_ok(key, plen))
        REASON("prefix part %s", GO_DNS_SUBDOMAIN_MSG);
    }
    name = slash + 1;
  }
  size_t nlen = strlen(name);
  if (nlen == 0)
    REASON("name part must be non-empty");
  else if (nlen > 63)
    REASON("name part must be no more than 63 bytes");
  if (!go_name_ok(name, nlen))
    REASON("name part %s", GO_LABEL_KEY_MSG);
  return n;
}

/* content.IsLabelValue's reasons joined by "; "; 0 when the value is valid. */
static int go_value_reasons(strbuf *sb, const char *v) {
  int n = 0;
  size_t len = strlen(v);
  if (len > 63)
    REASON("must be no more than 63 bytes");
  if (len && !go_name_ok(v, len))
    REASON("%s", GO_LABEL_VALUE_MSG);
  return n;
#undef REASON
}

/* The values list as encoding/json prints a []string (nil: null). */
static void go_json_strings(strbuf *sb, const char **values, size_t n) {
  if (!n) {
    sb_append(sb, "null");
    return;
  }
  sb_appendc(sb, '[');
  for (size_t i = 0; i < n; i++) {
    if (i)
      sb_appendc(sb, ',');
    sb_append_json_str(sb, values[i]);
  }
  sb_appendc(sb, ']');
}

/* One aggregated error list: duplicates dropped, one error alone, several in brackets. */
typedef struct {
  strbuf out;
  int n;
} go_agg;

static void agg_add(go_agg *g, const char *msg) {
  /* ToAggregate keeps the first of identical messages */
  const char *all = sb_str(&g->out);
  size_t ml = strlen(msg);
  for (const char *p = strstr(all, msg); p; p = strstr(p + 1, msg))
    if ((p == all || (p >= all + 2 && p[-2] == ',' && p[-1] == ' ')) &&
        (p[ml] == 0 || (p[ml] == ',' && p[ml + 1] == ' ')))
      return;
  if (g->n++)
    sb_append(&g->out, ", ");
  sb_append(&g->out, msg);
}

/* The error of NewRequirement(key, op, values), or NULL when it is valid. op is one of the
 * four label selector operators or SEL_EQUALS (matchLabels). Arena copy. */
static const char *requirement_problem(arena *a, const char *key, sel_op op, const char **values,
                                       size_t n) {
  go_agg g = {{0}, 0};
  strbuf e = {0}, why = {0};
  if (go_key_reasons(&why, key)) {
    sb_append(&e, "key: Invalid value: ");
    sb_append_go_quoted(&e, key);
    sb_printf(&e, ": %s", sb_str(&why));
    agg_add(&g, sb_str(&e));
  }
  const char *count_problem = NULL;
  if ((op == SEL_IN || op == SEL_NOTIN) && n == 0)
    count_problem = "for 'in', 'notin' operators, values set can't be empty";
  else if ((op == SEL_EXISTS || op == SEL_DOES_NOT_EXIST) && n != 0)
    count_problem = "values set must be empty for exists and does not exist";
  else if (op == SEL_EQUALS && n != 1)
    count_problem = "exact-match compatibility requires one single value";
  if (count_problem) {
    sb_clear(&e);
    sb_append(&e, "values: Invalid value: ");
    go_json_strings(&e, values, n);
    sb_printf(&e, ": %s", count_problem);
    agg_add(&g, sb_str(&e));
  }
  for (size_t i = 0; i < n; i++) {
    sb_clear(&why);
    if (!go_value_reasons(&why, values[i]))
      continue;
    sb_clear(&e);
    sb_printf(&e, "values[%zu][%s]: Invalid value: ", i, key);
    sb_append_go_quoted(&e, values[i]);
    sb_printf(&e, ": %s", sb_str(&why));
    agg_add(&g, sb_str(&e));
  }
  const char *res = NULL;
  if (g.n == 1)
    res = arena_strdup(a, sb_str(&g.out));
  else if (g.n > 1) {
    sb_clear(&e);
    sb_printf(&e, "[%s]", sb_str(&g.out));
    res = arena_strdup(a, sb_str(&e));
  }
  sb_free(&g.out);
  sb_free(&e);
  sb_free(&why);
  return res;
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

/* An optional string field of an expression: absent or null reads as "" (Go's zero value). */
static int expr_string(const doc_node *e, const char *key, const char *path, size_t i,
                       const char **out, dserr *err) {
  const doc_node *v = doc_get(e, key);
  *out = "";
  if (!v || v->type == DOC_NULL)
    return 0;
  if (v->type != DOC_STR)
    return dserr_set(err, "%s[%zu].%s: expected a string, got %s", path, i, key,
                     doc_type_name(v->type));
  *out = v->text;
  return 0;
}

/* Reads matchExpressions (or node selector requirements with node_ops). label_ops: the
 * first requirement LabelSelectorAsSelector refuses goes to *invalid (when still NULL) and
 * the expression is dropped; node requirements are taken as written (the API server has
 * checked them) and an unknown operator is an error. */
static int add_expressions(arena *a, req_vec *v, const doc_node *exprs, const char *path,
                           bool node_ops, const char **invalid, dserr *err) {
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
    const char *key, *opname;
    if (expr_string(e, "key", path, i, &key, err) < 0 ||
        expr_string(e, "operator", path, i, &opname, err) < 0)
      return -1;
    char vpath[512];
    snprintf(vpath, sizeof vpath, "%s[%zu].values", path, i);
    const char **values;
    size_t nvalues;
    if (strings_from_seq(a, doc_get(e, "values"), vpath, &values, &nvalues, err) < 0)
      return -1;
    sel_op op = SEL_EXISTS;
    const char *problem = NULL;
    if (op_from_text(opname, node_ops, &op) < 0) {
      if (node_ops)
        return dserr_set(err, "%s[%zu].operator: \"%s\" is not a valid label selector operator",
                         path, i, opname);
      strbuf sb = {0};
      sb_append_go_quoted(&sb, opname);
      sb_append(&sb, " is not a valid label selector operator");
      problem = arena_strdup(a, sb_str(&sb));
      sb_free(&sb);
    } else if (!node_ops) {
      problem = requirement_problem(a, key, op, values, nvalues);
    }
    if (problem) {
      if (!*invalid)
        *invalid = problem;
      continue;
    }
    sel_req *r = vec_push(v);
    r->key = arena_strdup(a, key);
    r->op = op;
    r->values = values;
    r->nvalues = nvalues;
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
  const char *invalid = NULL;
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
      const char *value = val->text;
      const char *problem = requirement_problem(a, ml->pairs[i].key, SEL_EQUALS, &value, 1);
      if (problem) {
        if (!invalid)
          invalid = problem;
        continue;
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
  if (add_expressions(a, &v, doc_get(node, "matchExpressions"), sub, false, &invalid, err) < 0) {
    free(v.reqs);
    return -1;
  }
  *out = vec_finish(a, &v);
  (*out)->invalid = invalid;
  return 0;
}

int selector_add_node_reqs(arena *a, label_selector *sel, const doc_node *exprs, const char *path,
                           dserr *err) {
  req_vec v = {0};
  const char *unused = NULL;
  if (add_expressions(a, &v, exprs, path, true, &unused, err) < 0) {
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
  if (!sel || sel->nothing || sel->invalid)
    return false;
  for (size_t i = 0; i < sel->n; i++)
    if (!req_matches(&sel->reqs[i], labels))
      return false;
  return true;
}

bool selector_is_empty(const label_selector *sel) {
  return sel && !sel->nothing && !sel->invalid && sel->n == 0;
}
