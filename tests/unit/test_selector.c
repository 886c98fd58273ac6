/* test_selector.c - label selectors (src/apimachinery/selector.h): the string syntax of labels.Parse
 * (apimachinery's selector.go), matching semantics (!= and notin match objects without the key),
 * parse errors that name the text, and metav1.LabelSelector objects from a document tree
 * (nil selects nothing, {} selects everything). */
#include "support/support.h"

#include "../../src/util/arena.h"
#include "../../src/doc/doc.h"
#include "../../src/apimachinery/selector.h"

#include <stdio.h>
#include <string.h>

/* A label set from "k=v,k2=v2" (no spaces); "" for no labels. */
static kvlist labels(const char *text) {
  kvlist l = {0, NULL};
  if (!*text)
    return l;
  size_t n = 1;
  for (const char *p = text; *p; p++)
    n += *p == ',';
  l.items = arena_alloc(test_mem, n * sizeof *l.items);
  char *copy = arena_strdup(test_mem, text);
  for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    *eq = 0;
    l.items[l.n++] = (kv){tok, eq + 1};
  }
  return l;
}

static label_selector *parse_ok(const char *text) {
  label_selector *sel = NULL;
  dserr err;
  err.msg[0] = 0;
  if (selector_parse(test_mem, text, &sel, &err) < 0)
    fail_msg("selector \"%s\" rejected: %s", text, err.msg);
  assert_non_null(sel);
  return sel;
}

static bool matches(const char *selector, const char *label_text) {
  kvlist l = labels(label_text);
  return selector_matches(parse_ok(selector), &l);
}

/* The selector text is refused with a message that quotes it. */
static void assert_parse_error(const char *text, const char *why) {
  label_selector *sel = NULL;
  dserr err;
  err.msg[0] = 0;
  if (selector_parse(test_mem, text, &sel, &err) == 0)
    fail_msg("selector \"%s\" accepted", text);
  char quoted[256];
  snprintf(quoted, sizeof quoted, "\"%s\"", text);
  if (!strstr(err.msg, quoted))
    fail_msg("error for %s does not name the text: %s", quoted, err.msg);
  if (why && !strstr(err.msg, why))
    fail_msg("error for %s does not say \"%s\": %s", quoted, why, err.msg);
}

/* ---------- string syntax ---------- */

static void test_parse_structure(void **state) {
  (void)state;
  label_selector *s = parse_ok("a in (x,y)");
  assert_int_equal(s->n, 1);
  assert_false(s->nothing);
  assert_string_equal(s->reqs[0].key, "a");
  assert_int_equal(s->reqs[0].op, SEL_IN);
  assert_int_equal(s->reqs[0].nvalues, 2);
  assert_string_equal(s->reqs[0].values[0], "x");
  assert_string_equal(s->reqs[0].values[1], "y");

  s = parse_ok("a notin (x)");
  assert_int_equal(s->reqs[0].op, SEL_NOTIN);
  assert_int_equal(s->reqs[0].nvalues, 1);
  assert_int_equal(parse_ok("a")->reqs[0].op, SEL_EXISTS);
  assert_int_equal(parse_ok("!a")->reqs[0].op, SEL_DOES_NOT_EXIST);
  assert_int_equal(parse_ok("a=b")->reqs[0].op, SEL_EQUALS);
  assert_int_equal(parse_ok("a==b")->reqs[0].op, SEL_EQUALS);
  assert_int_equal(parse_ok("a!=b")->reqs[0].op, SEL_NOT_EQUALS);
  assert_int_equal(parse_ok("k>5")->reqs[0].op, SEL_GT);
  assert_int_equal(parse_ok("k<5")->reqs[0].op, SEL_LT);

  s = parse_ok("a=b,c!=d,!e,f in (g),h");
  assert_int_equal(s->n, 5);
  assert_string_equal(s->reqs[4].key, "h");
  assert_int_equal(s->reqs[4].op, SEL_EXISTS);

  /* "" and blanks select everything */
  assert_true(selector_is_empty(parse_ok("")));
  assert_true(selector_is_empty(parse_ok("   ")));
  assert_false(selector_is_empty(parse_ok("a")));
}

static void test_whitespace(void **state) {
  (void)state;
  label_selector *s = parse_ok("  a  =  b  ,  c in ( x , y ) ,\t!d ,  e notin(z)  ");
  assert_int_equal(s->n, 4);
  assert_string_equal(s->reqs[0].key, "a");
  assert_string_equal(s->reqs[0].values[0], "b");
  assert_string_equal(s->reqs[1].values[1], "y");
  assert_int_equal(s->reqs[2].op, SEL_DOES_NOT_EXIST);
  assert_string_equal(s->reqs[2].key, "d");
  assert_int_equal(s->reqs[3].op, SEL_NOTIN);
  assert_true(matches("  a  =  b  ,  c in ( x , y ) ,\t!d", "a=b,c=y"));
  assert_true(matches("k > 5", "k=6"));
  assert_true(matches("a in(x)", "a=x"));
}

static void test_equality_semantics(void **state) {
  (void)state;
  assert_true(matches("a=b", "a=b"));
  assert_true(matches("a==b", "a=b,c=d"));
  assert_false(matches("a=b", "a=c"));
  assert_false(matches("a=b", ""));
  /* != matches objects without the key */
  assert_true(matches("a!=b", ""));
  assert_true(matches("a!=b", "a=c"));
  assert_false(matches("a!=b", "a=b"));
  /* an empty value is a value */
  assert_true(matches("a=", "a="));
  assert_false(matches("a=", "a=x"));
  assert_false(matches("a=", ""));
  assert_true(matches("example.com/role=db", "example.com/role=db"));
}

static void test_set_semantics(void **state) {
  (void)state;
  assert_true(matches("a in (x,y)", "a=x"));
  assert_true(matches("a in (x,y)", "a=y"));
  assert_false(matches("a in (x,y)", "a=z"));
  assert_false(matches("a in (x,y)", ""));
  /* notin matches objects without the key */
  assert_true(matches("a notin (x)", ""));
  assert_true(matches("a notin (x)", "a=y"));
  assert_false(matches("a notin (x)", "a=x"));
  /* (x,) also holds the empty value */
  assert_true(matches("a in (x,)", "a="));
  /* and "()" is the empty value alone, as Go's labels.Parse reads it (not an error) */
  label_selector *empty = parse_ok("a in ()");
  assert_int_equal(empty->reqs[0].nvalues, 1);
  assert_string_equal(empty->reqs[0].values[0], "");
  assert_true(matches("a in ()", "a="));
  assert_true(matches("a in ( )", "a="));
  assert_false(matches("a in ()", "a=x"));
  assert_false(matches("a in ()", ""));
  assert_true(matches("a notin ()", ""));
  assert_true(matches("a notin ()", "a=x"));
  assert_false(matches("a notin ()", "a="));
  assert_true(matches("a", "a="));
  assert_true(matches("a", "a=v"));
  assert_false(matches("a", "b=v"));
  assert_true(matches("!a", "b=v"));
  assert_false(matches("!a", "a="));
}

static void test_comma_is_and(void **state) {
  (void)state;
  assert_true(matches("a=b,c=d", "a=b,c=d"));
  assert_false(matches("a=b,c=d", "a=b"));
  assert_false(matches("a=b,c=d", "c=d"));
  assert_true(matches("a=b,!c", "a=b"));
  assert_false(matches("a=b,!c", "a=b,c=x"));
  assert_true(matches("a,b notin (x),c!=y", "a=1,b=2"));
  assert_false(matches("a,b notin (x),c!=y", "a=1,c=y"));
  /* everything matches "", even no labels */
  assert_true(matches("", ""));
}

static void test_gt_lt(void **state) {
  (void)state;
  assert_true(matches("k>5", "k=6"));
  assert_false(matches("k>5", "k=5"));
  assert_false(matches("k>5", "k=x"));
  assert_false(matches("k>5", ""));
  assert_true(matches("k<5", "k=4"));
  assert_true(matches("k<5", "k=-1"));
  assert_false(matches("k<5", "k=5"));
  assert_false(matches("k<5", ""));
  assert_true(matches("k>-3", "k=0"));
  /* a label value Go's ParseInt refuses (out of int64 range) never compares */
  assert_false(matches("k>5", "k=99999999999999999999"));
  assert_false(matches("k<5", "k=-99999999999999999999"));
}

static void test_parse_errors_name_the_text(void **state) {
  (void)state;
  assert_parse_error("a in (x", NULL);
  assert_parse_error("a in x", NULL);
  assert_parse_error("=b", NULL);
  assert_parse_error("==b", NULL);
  assert_parse_error("!", NULL);
  assert_parse_error("!=b", NULL);
  assert_parse_error("a b", NULL);
  assert_parse_error("a!b", NULL);
  assert_parse_error("a=b=c", NULL);
  assert_parse_error("a,", NULL);
  assert_parse_error(",a", NULL);
  assert_parse_error("a=b,,c=d", NULL);
  assert_parse_error("!a=b", NULL);
  /* keys and values must be label syntax */
  assert_parse_error("-a=b", "key \"-a\"");
  assert_parse_error("a-=b", "key \"a-\"");
  assert_parse_error("a/=b", "key \"a/\"");
  assert_parse_error("/a=b", "key \"/a\"");
  assert_parse_error("Example.com/a=b", "key \"Example.com/a\"");
  assert_parse_error("a=-b", "value \"-b\"");
  assert_parse_error("a=b_", "value \"b_\"");
  assert_parse_error("a in (x,-y)", "value \"-y\"");
  assert_parse_error("a=b/c", "value \"b/c\"");
  assert_parse_error("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=b",
                     "63 characters");
  assert_parse_error("a=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                     "63 characters");
  /* Gt / Lt need an integer */
  assert_parse_error("k>a", "integer");
  assert_parse_error("k>", "integer");
  assert_parse_error("k<1.5", "integer");
  assert_parse_error("k>99999999999999999999", "integer");
  /* longest valid key and value are fine */
  parse_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa="
           "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
  parse_ok("a.b-c.d9/e.F_g-H=I.j_K-l");
  /* the prefix is a DNS subdomain: every dot-separated label starts and ends alphanumeric */
  assert_parse_error("a..b/c=d", "key \"a..b/c\"");
  assert_parse_error("a-.b/c=d", "key \"a-.b/c\"");
  assert_parse_error("a.-b/c=d", "key \"a.-b/c\"");
}

/* ---------- metav1.LabelSelector ---------- */

static doc_node *yaml(const char *text) {
  doc_node *root = NULL;
  dserr err;
  if (doc_parse_yaml(test_mem, "test", text, strlen(text), &root, &err) < 0)
    fail_msg("bad test YAML: %s", err.msg);
  return root;
}

static label_selector *from_doc_ok(const char *text) {
  label_selector *sel = NULL;
  dserr err;
  err.msg[0] = 0;
  if (selector_from_doc(test_mem, yaml(text), "sel", &sel, &err) < 0)
    fail_msg("selector %s rejected: %s", text, err.msg);
  return sel;
}

static void assert_doc_error(const char *text, const char *expect) {
  label_selector *sel = NULL;
  dserr err;
  err.msg[0] = 0;
  if (selector_from_doc(test_mem, yaml(text), "sel", &sel, &err) == 0)
    fail_msg("selector %s accepted", text);
  if (!strstr(err.msg, expect))
    fail_msg("error\n  %s\ndoes not contain\n  %s", err.msg, expect);
}

static bool doc_matches(const char *text, const char *label_text) {
  kvlist l = labels(label_text);
  return selector_matches(from_doc_ok(text), &l);
}

static void test_label_selector_nil_and_empty(void **state) {
  (void)state;
  label_selector *sel = NULL;
  dserr err;
  kvlist none = {0, NULL}, some = labels("a=b");
  /* nil selects nothing */
  assert_int_equal(selector_from_doc(test_mem, NULL, "sel", &sel, &err), 0);
  assert_true(sel->nothing);
  assert_false(selector_matches(sel, &none));
  assert_false(selector_matches(sel, &some));
  assert_false(selector_is_empty(sel));
  /* an explicit null is nil too */
  sel = from_doc_ok("~");
  assert_true(sel->nothing);
  assert_false(selector_matches(sel, &some));
  /* {} selects everything */
  sel = from_doc_ok("{}");
  assert_false(sel->nothing);
  assert_true(selector_is_empty(sel));
  assert_true(selector_matches(sel, &none));
  assert_true(selector_matches(sel, &some));
  /* so do empty matchLabels / matchExpressions */
  assert_true(selector_is_empty(from_doc_ok("{matchLabels: {}, matchExpressions: []}")));
  assert_true(doc_matches("{matchLabels: {}}", ""));
}

static void test_label_selector_match(void **state) {
  (void)state;
  const char *sel = "matchLabels: {app: web}\n"
                    "matchExpressions:\n"
                    "- {key: tier, operator: In, values: [front, back]}\n"
                    "- {key: env, operator: NotIn, values: [prod]}\n"
                    "- {key: team, operator: Exists}\n"
                    "- {key: legacy, operator: DoesNotExist}\n";
  assert_int_equal(from_doc_ok(sel)->n, 5);
  assert_true(doc_matches(sel, "app=web,tier=front,team=a"));
  assert_true(doc_matches(sel, "app=web,tier=back,team=a,env=dev"));
  assert_false(doc_matches(sel, "app=db,tier=front,team=a"));           /* matchLabels */
  assert_false(doc_matches(sel, "app=web,tier=mid,team=a"));            /* In */
  assert_false(doc_matches(sel, "app=web,tier=front,team=a,env=prod")); /* NotIn */
  assert_false(doc_matches(sel, "app=web,tier=front"));                 /* Exists */
  assert_false(doc_matches(sel, "app=web,tier=front,team=a,legacy="));  /* DoesNotExist */
  /* NotIn without the key matches */
  assert_true(doc_matches("matchExpressions: [{key: env, operator: NotIn, values: [prod]}]", ""));
  /* several matchLabels are ANDed */
  assert_true(doc_matches("matchLabels: {a: p, b: q}", "a=p,b=q"));
  assert_false(doc_matches("matchLabels: {a: p, b: q}", "a=p"));
  /* "" is a valid matchLabels value */
  assert_true(doc_matches("matchLabels: {a: ''}", "a="));
}

/* What decodes but does not convert: the selector is kept, matches nothing, and carries
 * upstream's metav1.LabelSelectorAsSelector error word for word. */
static void assert_invalid(const char *text, const char *expect) {
  label_selector *sel = from_doc_ok(text);
  if (!sel->invalid)
    fail_msg("selector %s taken as valid", text);
  if (strcmp(sel->invalid, expect) != 0)
    fail_msg("selector %s:\n  got      %s\n  expected %s", text, sel->invalid, expect);
  kvlist l = labels("a=x");
  assert_false(selector_matches(sel, &l));
  kvlist none = {0, NULL};
  assert_false(selector_matches(sel, &none));
  assert_false(selector_is_empty(sel));
}

#define KEY_REGEX_MSG                                                                              \
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "  \
  "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " \
  "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define VALUE_REGEX_MSG                                                                            \
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', " \
  "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "  \
  "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

static void test_label_selector_errors(void **state) {
  (void)state;
  /* upstream's own validation test (removefailedpods/validation_test.go): an empty key and
   * In without values, two errors in one aggregate */
  assert_invalid("matchExpressions: [{key: '', operator: In}]",
                 "[key: Invalid value: \"\": name part must be non-empty; " KEY_REGEX_MSG
                 ", values: Invalid value: null: for 'in', 'notin' operators, values set can't "
                 "be empty]");
  /* a missing key or operator is Go's zero value "" */
  assert_invalid("matchExpressions: [{operator: Exists}]",
                 "key: Invalid value: \"\": name part must be non-empty; " KEY_REGEX_MSG);
  assert_invalid("matchExpressions: [{key: a}]", "\"\" is not a valid label selector operator");
  /* unknown operator; Gt / Lt are node-affinity operators, not label selector ones */
  assert_invalid("matchExpressions: [{key: a, operator: Foo, values: [x]}]",
                 "\"Foo\" is not a valid label selector operator");
  assert_invalid("matchExpressions: [{key: a, operator: Gt, values: ['1']}]",
                 "\"Gt\" is not a valid label selector operator");
  /* In / NotIn need values ([] is nil once copied, as in Go) */
  assert_invalid("matchExpressions: [{key: a, operator: In, values: []}]",
                 "values: Invalid value: null: for 'in', 'notin' operators, values set can't be "
                 "empty");
  assert_invalid("matchExpressions: [{key: a, operator: NotIn}]",
                 "values: Invalid value: null: for 'in', 'notin' operators, values set can't be "
                 "empty");
  /* Exists / DoesNotExist forbid values */
  assert_invalid("matchExpressions: [{key: a, operator: Exists, values: [x, y.z]}]",
                 "values: Invalid value: [\"x\",\"y.z\"]: values set must be empty for exists "
                 "and does not exist");
  /* label syntax of keys and values */
  assert_invalid("matchLabels: {-a: b}", "key: Invalid value: \"-a\": " KEY_REGEX_MSG);
  assert_invalid("matchLabels: {a: -b}", "values[0][a]: Invalid value: \"-b\": " VALUE_REGEX_MSG);
  assert_invalid("matchLabels: {'a b': 'c d'}",
                 "[key: Invalid value: \"a b\": " KEY_REGEX_MSG
                 ", values[0][a b]: Invalid value: \"c d\": " VALUE_REGEX_MSG "]");
  assert_invalid("matchExpressions: [{key: a, operator: In, values: [x, -y]}]",
                 "values[1][a]: Invalid value: \"-y\": " VALUE_REGEX_MSG);
  assert_invalid("matchExpressions: [{key: Example.com/a, operator: Exists}]",
                 "key: Invalid value: \"Example.com/a\": prefix part a lowercase RFC 1123 "
                 "subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex "
                 "used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  assert_invalid("matchExpressions: [{key: /a, operator: Exists}]",
                 "key: Invalid value: \"/a\": prefix part must be non-empty");
  assert_invalid("matchExpressions: [{key: a/b/c, operator: Exists}]",
                 "key: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric "
                 "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                 "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                 "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
                 "subdomain prefix and '/' (e.g. 'example.com/MyName')");
  assert_invalid("matchLabels: {aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: b}",
                 "key: Invalid value: "
                 "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": name part "
                 "must be no more than 63 bytes");
  /* matchLabels are converted first and the first failing requirement is the error */
  assert_invalid("matchLabels: {a: -b}\nmatchExpressions: [{key: a, operator: Foo}]",
                 "values[0][a]: Invalid value: \"-b\": " VALUE_REGEX_MSG);
  assert_invalid("matchExpressions: [{key: a, operator: Foo}, {key: -b, operator: Exists}]",
                 "\"Foo\" is not a valid label selector operator");
  /* what would not decode into metav1.LabelSelector stays an error: types */
  assert_doc_error("matchLabels: {a: 1}", "sel.matchLabels.a: expected a string");
  assert_doc_error("matchLabels: [a]", "sel.matchLabels: expected a map");
  assert_doc_error("matchExpressions: {key: a}", "sel.matchExpressions: expected a list");
  assert_doc_error("[a]", "sel: expected a label selector");
  assert_doc_error("matchExpressions: [{key: 1, operator: Exists}]",
                   "sel.matchExpressions[0].key: expected a string");
  assert_doc_error("matchExpressions: [{key: a, operator: [In]}]",
                   "sel.matchExpressions[0].operator: expected a string");
  assert_doc_error("matchExpressions: [{key: a, operator: In, values: x}]",
                   "sel.matchExpressions[0].values: expected a list");
  /* unknown fields */
  assert_doc_error("matchLabel: {a: b}", "unknown field \"matchLabel\"");
  assert_doc_error("matchExpressions: [{key: a, operator: Exists, value: [x]}]",
                   "unknown field \"value\"");
  /* a valid selector carries no error */
  assert_null(from_doc_ok("matchLabels: {a: ''}\nmatchExpressions: [{key: b, operator: In, "
                          "values: ['']}]")
                  ->invalid);
}

/* Node affinity requirements add Gt / Lt and skip label-syntax checks. */
static void test_node_requirements(void **state) {
  (void)state;
  label_selector *sel = from_doc_ok("{}");
  dserr err;
  assert_int_equal(selector_add_node_reqs(test_mem, sel,
                                          yaml("- {key: cores, operator: Gt, values: ['4']}\n"
                                               "- {key: zone, operator: In, values: [a]}\n"),
                                          "terms[0]", &err),
                   0);
  assert_int_equal(sel->n, 2);
  kvlist l = labels("cores=8,zone=a");
  assert_true(selector_matches(sel, &l));
  l = labels("cores=4,zone=a");
  assert_false(selector_matches(sel, &l));
  l = labels("cores=x,zone=a");
  assert_false(selector_matches(sel, &l));
  assert_int_equal(
      selector_add_node_reqs(test_mem, sel, yaml("- {key: a, operator: Near}\n"), "terms[0]", &err),
      -1);
  assert_non_null(strstr(err.msg, "\"Near\" is not a valid label selector operator"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_structure),
      cmocka_unit_test(test_whitespace),
      cmocka_unit_test(test_equality_semantics),
      cmocka_unit_test(test_set_semantics),
      cmocka_unit_test(test_comma_is_and),
      cmocka_unit_test(test_gt_lt),
      cmocka_unit_test(test_parse_errors_name_the_text),
      cmocka_unit_test(test_label_selector_nil_and_empty),
      cmocka_unit_test(test_label_selector_match),
      cmocka_unit_test(test_label_selector_errors),
      cmocka_unit_test(test_node_requirements),
  };
  return cmocka_run_group_tests(tests, test_mem_setup, test_mem_teardown);
}
