/* test_doc.c - the document tree and the streaming list reader (src/doc/doc.h): YAML scalars
 * typed as go-yaml v2 types them (what upstream's policy decoding sees), JSON typing, the
 * streaming reader (items one at a time in a scratch arena, the header kept, a single object
 * as one item, any chunking of the input), and the error messages: malformed JSON with a
 * byte offset, truncated JSON, malformed YAML with a line, a second YAML document. The fast
 * JSON reader: the same trees as yajl's, what it leaves to yajl, files in windows of any
 * size, skipped parts still checked, a refusal halfway handing each item over once.
 * Test files live in tests/data/unit/doc/. */
#include "support/support.h"

#include "../../src/util/arena.h"
#include "../../src/doc/doc.h"
#include "../../src/doc/doc_fast.h"
#include "../../src/util/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA DS_TEST_DATA "/unit/doc/"

static doc_node *yaml(const char *text) {
  doc_node *root = NULL;
  dserr err;
  err.msg[0] = 0;
  if (doc_parse_yaml(test_mem, "test.yaml", text, strlen(text), &root, &err) < 0)
    fail_msg("YAML rejected: %s", err.msg);
  return root;
}

static doc_node *json(const char *text) {
  doc_node *root = NULL;
  dserr err;
  err.msg[0] = 0;
  if (doc_parse_json(test_mem, "test.json", text, strlen(text), &root, &err) < 0)
    fail_msg("JSON rejected: %s", err.msg);
  return root;
}

/* The value of `v: <text>` in a one-line YAML map. */
static doc_node *yaml_value(const char *text) {
  char buf[256];
  snprintf(buf, sizeof buf, "v: %s\n", text);
  doc_node *root = yaml(buf);
  assert_int_equal(root->type, DOC_MAP);
  doc_node *v = doc_get(root, "v");
  assert_non_null(v);
  return v;
}

static void assert_yaml_bool(const char *text, int want) {
  doc_node *v = yaml_value(text);
  if (v->type != DOC_BOOL)
    fail_msg("%s: expected a boolean, got %s", text, doc_type_name(v->type));
  assert_int_equal(v->v.b, want);
}

static void assert_yaml_int(const char *text, int64_t want) {
  doc_node *v = yaml_value(text);
  if (v->type != DOC_INT)
    fail_msg("%s: expected an integer, got %s", text, doc_type_name(v->type));
  assert_int_equal(v->v.i, want);
  assert_false(v->big);
}

static void assert_yaml_float(const char *text, double want) {
  doc_node *v = yaml_value(text);
  if (v->type != DOC_FLOAT)
    fail_msg("%s: expected a float, got %s", text, doc_type_name(v->type));
  if (isnan(want))
    assert_true(isnan(v->v.f));
  else
    assert_true(v->v.f == want);
}

static void assert_yaml_null(const char *text) {
  doc_node *v = yaml_value(text);
  if (v->type != DOC_NULL)
    fail_msg("%s: expected null, got %s", text, doc_type_name(v->type));
}

static void assert_yaml_str(const char *text, const char *want) {
  doc_node *v = yaml_value(text);
  if (v->type != DOC_STR)
    fail_msg("%s: expected a string, got %s", text, doc_type_name(v->type));
  assert_string_equal(v->text, want);
}

/* ---------- YAML scalars (go-yaml v2 resolution) ---------- */

static void test_yaml_booleans(void **state) {
  (void)state;
  const char *trues[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
  const char *falses[] = {"n",     "N",     "no",  "No",  "NO", "false",
                          "False", "FALSE", "off", "Off", "OFF"};
  for (size_t i = 0; i < sizeof trues / sizeof trues[0]; i++)
    assert_yaml_bool(trues[i], 1);
  for (size_t i = 0; i < sizeof falses / sizeof falses[0]; i++)
    assert_yaml_bool(falses[i], 0);
  /* not booleans in YAML 1.1 */
  assert_yaml_str("tRUE", "tRUE");
  assert_yaml_str("yEs", "yEs");
  assert_yaml_str("enabled", "enabled");
}

static void test_yaml_integers(void **state) {
  (void)state;
  assert_yaml_int("0", 0);
  assert_yaml_int("42", 42);
  assert_yaml_int("-42", -42);
  assert_yaml_int("+7", 7);
  assert_yaml_int("010", 8); /* leading zero: octal */
  assert_yaml_int("-010", -8);
  assert_yaml_int("0x1F", 31);
  assert_yaml_int("0X1f", 31);
  assert_yaml_int("-0x10", -16);
  assert_yaml_int("0b101", 5);
  assert_yaml_int("1_000", 1000);
  assert_yaml_int("9223372036854775807", INT64_MAX);
  /* go-yaml v2 hands the text to strconv.ParseInt with base 0, which also knows 0o / 0B */
  assert_yaml_int("0o17", 15);
  assert_yaml_int("0O17", 15);
  assert_yaml_int("0B11", 3);
  /* beyond int64: still an integer, flagged big */
  doc_node *v = yaml_value("18446744073709551615");
  assert_int_equal(v->type, DOC_INT);
  assert_true(v->big);
}

static void test_yaml_floats(void **state) {
  (void)state;
  assert_yaml_float("1.5", 1.5);
  assert_yaml_float("-0.25", -0.25);
  assert_yaml_float(".5", 0.5);
  assert_yaml_float("5.", 5.0);
  assert_yaml_float("1e3", 1000.0);
  assert_yaml_float("1E-2", 0.01);
  assert_yaml_float("+2.5e+1", 25.0);
  assert_yaml_float("08", 8.0); /* not octal, not an integer: the float pattern */
  assert_yaml_float("1_0.5", 10.5);
  assert_yaml_float(".inf", INFINITY);
  assert_yaml_float("+.Inf", INFINITY);
  assert_yaml_float("-.INF", -INFINITY);
  assert_yaml_float(".nan", NAN);
  assert_yaml_float(".NaN", NAN);
}

static void test_yaml_nulls_and_strings(void **state) {
  (void)state;
  assert_yaml_null("~");
  assert_yaml_null("null");
  assert_yaml_null("Null");
  assert_yaml_null("NULL");
  assert_yaml_null("");
  assert_yaml_str("nULL", "nULL");
  /* quoted scalars stay strings */
  assert_yaml_str("\"yes\"", "yes");
  assert_yaml_str("'010'", "010");
  assert_yaml_str("\"1.5\"", "1.5");
  assert_yaml_str("'null'", "null");
  assert_yaml_str("\"\"", "");
  /* explicitly tagged */
  assert_yaml_str("!!str 10", "10");
  /* plain strings */
  assert_yaml_str("abc", "abc");
  assert_yaml_str("1.2.3", "1.2.3");
  assert_yaml_str("0x", "0x");
  assert_yaml_str("1e", "1e");
  assert_yaml_str(".", ".");
  assert_yaml_str("-x", "-x");
  assert_yaml_str("100m", "100m");
  assert_yaml_str("512Mi", "512Mi");
  /* block scalars are strings */
  doc_node *root = yaml("v: |\n  10\n");
  assert_int_equal(doc_get(root, "v")->type, DOC_STR);
  assert_string_equal(doc_get(root, "v")->text, "10\n");
}

static void test_yaml_structure(void **state) {
  (void)state;
  doc_node *root = yaml("a:\n  b: [1, two, {c: 3}]\n  d: {}\ne: []\n");
  assert_int_equal(root->type, DOC_MAP);
  assert_int_equal(root->n, 2);
  doc_node *b = doc_path(root, "a", "b", NULL);
  assert_int_equal(b->type, DOC_SEQ);
  assert_int_equal(b->n, 3);
  assert_int_equal(b->items[0]->type, DOC_INT);
  assert_string_equal(b->items[1]->text, "two");
  assert_int_equal(doc_get(b->items[2], "c")->v.i, 3);
  assert_int_equal(doc_path(root, "a", "d", NULL)->type, DOC_MAP);
  assert_int_equal(doc_path(root, "a", "d", NULL)->n, 0);
  assert_int_equal(doc_get(root, "e")->type, DOC_SEQ);
  assert_int_equal(doc_get(root, "e")->n, 0);
  assert_int_equal(b->line, 2);
  assert_null(doc_path(root, "a", "x", NULL));
  assert_null(doc_get(b, "c")); /* not a map */
  /* anchors and aliases */
  root = yaml("a: &x {k: v}\nb: *x\n");
  assert_string_equal(doc_path(root, "b", "k", NULL)->text, "v");
  /* an empty document is a null root; an explicit start marker is still one document */
  assert_int_equal(yaml("")->type, DOC_NULL);
  assert_int_equal(yaml("# only a comment\n")->type, DOC_NULL);
  assert_int_equal(yaml("---\na: 1\n")->type, DOC_MAP);
  assert_int_equal(yaml("---\na: 1\n...\n")->type, DOC_MAP);
}

/* ---------- JSON typing ---------- */

static void test_json_typing(void **state) {
  (void)state;
  doc_node *root =
      json("{\"i\": 1, \"neg\": -5, \"f\": 1.0, \"e\": 1e3, \"t\": true, \"no\": false,"
           " \"n\": null, \"s\": \"yes\", \"o\": \"010\", \"l\": [1, \"a\"], \"m\": {},"
           " \"big\": 12345678901234567890}");
  assert_int_equal(doc_get(root, "i")->type, DOC_INT);
  assert_int_equal(doc_get(root, "i")->v.i, 1);
  assert_int_equal(doc_get(root, "neg")->v.i, -5);
  assert_int_equal(doc_get(root, "f")->type, DOC_FLOAT);
  assert_true(doc_get(root, "f")->v.f == 1.0);
  assert_int_equal(doc_get(root, "e")->type, DOC_FLOAT);
  assert_true(doc_get(root, "e")->v.f == 1000.0);
  assert_int_equal(doc_get(root, "t")->type, DOC_BOOL);
  assert_int_equal(doc_get(root, "t")->v.b, 1);
  assert_int_equal(doc_get(root, "no")->v.b, 0);
  assert_int_equal(doc_get(root, "n")->type, DOC_NULL);
  /* JSON strings are strings, whatever they look like */
  assert_int_equal(doc_get(root, "s")->type, DOC_STR);
  assert_string_equal(doc_get(root, "o")->text, "010");
  assert_int_equal(doc_get(root, "l")->n, 2);
  assert_int_equal(doc_get(root, "m")->type, DOC_MAP);
  assert_int_equal(doc_get(root, "big")->type, DOC_INT);
  assert_true(doc_get(root, "big")->big);
  assert_string_equal(doc_get(root, "big")->text, "12345678901234567890");
  /* unicode escapes */
  assert_string_equal(doc_get(json("{\"u\": \"caf\\u00e9\"}"), "u")->text, "caf\xc3\xa9");
  /* the top level may be any value */
  assert_int_equal(json("[1]")->type, DOC_SEQ);
  assert_int_equal(json("3")->type, DOC_INT);
}

static void test_describe(void **state) {
  (void)state;
  assert_string_equal(doc_describe(test_mem, yaml_value("abc")), "\"abc\"");
  assert_string_equal(doc_describe(test_mem, yaml_value("true")), "true");
  assert_string_equal(doc_describe(test_mem, yaml_value("-1")), "-1");
  assert_string_equal(doc_describe(test_mem, yaml_value("[1]")), "a list");
  assert_string_equal(doc_describe(test_mem, yaml_value("{}")), "a map");
  assert_string_equal(doc_describe(test_mem, NULL), "nothing");
}

/* ---------- errors ---------- */

static const char *parse_error(doc_format fmt, const char *text) {
  static dserr err;
  doc_node *root = NULL;
  err.msg[0] = 0;
  int rc = fmt == DOC_FMT_JSON
               ? doc_parse_json(test_mem, "in.json", text, strlen(text), &root, &err)
               : doc_parse_yaml(test_mem, "in.yaml", text, strlen(text), &root, &err);
  if (rc == 0)
    fail_msg("document accepted: %s", text);
  return err.msg;
}

static void assert_contains(const char *have, const char *want) {
  if (!strstr(have, want))
    fail_msg("\n  %s\ndoes not contain\n  %s", have, want);
}

static void test_malformed_json_names_byte_offset(void **state) {
  (void)state;
  /* the offset is 1-based: the second comma is the 13th byte */
  assert_string_equal(parse_error(DOC_FMT_JSON, "{\"a\": [1, 2,, 3]}"),
                      "in.json: invalid JSON near byte 13: parse error: unallowed token at this "
                      "point in JSON text");
  assert_string_equal(parse_error(DOC_FMT_JSON, "{\"a\" 1}"),
                      "in.json: invalid JSON near byte 6: parse error: object key and value must "
                      "be separated by a colon (':')");
  assert_string_equal(parse_error(DOC_FMT_JSON, "{\"a\": 1} x"),
                      "in.json: invalid JSON near byte 10: parse error: trailing garbage");
  assert_contains(parse_error(DOC_FMT_JSON, "{'a': 1}"), "in.json: invalid JSON near byte 2: ");
  assert_contains(parse_error(DOC_FMT_JSON, "{\"a\": tru}"), "invalid JSON near byte ");
}

static void test_truncated_json(void **state) {
  (void)state;
  assert_string_equal(
      parse_error(DOC_FMT_JSON, "{\"a\": [1, 2"),
      "in.json: truncated JSON: the document ends at byte 11 before it is complete");
  assert_contains(parse_error(DOC_FMT_JSON, "{\"a\": \"abc"), "in.json: truncated JSON");
  assert_contains(parse_error(DOC_FMT_JSON, "{"), "truncated JSON");
}

static void test_malformed_yaml_names_line(void **state) {
  (void)state;
  assert_contains(parse_error(DOC_FMT_YAML, "a: 1\nb: [1, 2\nc: 3\n"),
                  "in.yaml: invalid YAML at line ");
  assert_contains(parse_error(DOC_FMT_YAML, "a:\n  b: 1\n c: 2\n"),
                  "in.yaml: invalid YAML at line 3");
  assert_contains(parse_error(DOC_FMT_YAML, "a: 1\n\tb: 2\n"), "invalid YAML at line 2");
  assert_contains(parse_error(DOC_FMT_YAML, "a: \"x\n"), "invalid YAML at line ");
  assert_contains(parse_error(DOC_FMT_YAML, "a: *nope\n"),
                  "in.yaml: line 1: alias *nope refers to no anchor");
  assert_contains(parse_error(DOC_FMT_YAML, "? [a]\n: 1\n"), "a map key must be a plain value");
}

static void test_second_yaml_document_refused(void **state) {
  (void)state;
  assert_string_equal(parse_error(DOC_FMT_YAML, "a: 1\n---\nb: 2\n"),
                      "in.yaml: line 2: a second YAML document starts here; only one is expected");
  assert_contains(parse_error(DOC_FMT_YAML, "---\na: 1\n---\n"), "line 3: a second YAML document");
}

/* Aliases share nodes, so a few bytes of aliases of aliases stand for billions of nodes that
 * every consumer walks, and an alias inside its own anchor makes a cycle. Both are refused as
 * go-yaml refuses them; ordinary reuse of anchors is not. Found while fuzzing the YAML paths
 * (tests/fuzz): a 35 KB snapshot of aliased containers took minutes to decode. */
static void test_yaml_alias_bombs_and_cycles_refused(void **state) {
  (void)state;
  doc_node *root = NULL;
  dserr err;
  err.msg[0] = 0;
  assert_int_equal(doc_parse_yaml_file(test_mem, DATA "alias-bomb.yaml", &root, &err), -1);
  assert_contains(err.msg, "alias-bomb.yaml: line ");
  assert_contains(err.msg, "the document contains excessive aliasing (alias *");
  assert_int_equal(doc_parse_yaml_file(test_mem, DATA "alias-cycle.yaml", &root, &err), -1);
  assert_contains(err.msg,
                  "alias-cycle.yaml: line 5: alias *m is inside the value of its own anchor");
  assert_contains(parse_error(DOC_FMT_YAML, "a: &a [*a]\n"),
                  "line 1: alias *a is inside the value of its own anchor");
  /* ordinary reuse: one anchored map used a hundred times is fine */
  char text[2048] = "base: &b {cpu: 1, memory: 2, pods: 3}\nuses: [";
  for (int i = 0; i < 100; i++)
    strcat(text, i ? ", *b" : "*b");
  strcat(text, "]\n");
  root = yaml(text);
  assert_int_equal(doc_get(root, "uses")->n, 100);
  assert_int_equal(doc_path(root, "uses", NULL)->items[99]->n, 3);
}

/* ---------- streaming ---------- */

typedef struct {
  const char *buf;
  size_t len, pos, chunk;
} chunked_src;

static long chunked_read(void *src, char *buf, size_t cap) {
  chunked_src *s = src;
  size_t n = s->len - s->pos;
  if (n > cap)
    n = cap;
  if (n > s->chunk)
    n = s->chunk;
  memcpy(buf, s->buf + s->pos, n);
  s->pos += n;
  return (long)n;
}

typedef struct {
  int count, stop_after;
  char names[8][64];
  size_t sizes[8];
} collected;

/* Records each item's metadata.name (or its first key) and checks it is a fresh tree. */
static int collect(void *ctx, doc_node *item, dserr *err) {
  collected *c = ctx;
  const char *name = doc_str(doc_path(item, "metadata", "name", NULL));
  if (!name && item->type == DOC_MAP && item->n)
    name = item->pairs[0].key;
  if (c->count < 8) {
    snprintf(c->names[c->count], sizeof c->names[0], "%s", name ? name : "?");
    c->sizes[c->count] = item->n;
  }
  c->count++;
  if (c->stop_after && c->count == c->stop_after)
    return dserr_set(err, "stopped after %d", c->count);
  return 0;
}

static int stream_text(doc_format fmt, const char *text, size_t chunk, collected *c,
                       doc_node **header, dserr *err) {
  chunked_src src = {text, strlen(text), 0, chunk};
  memset(c->names, 0, sizeof c->names);
  c->count = 0;
  return doc_stream_list(fmt, "stream", chunked_read, &src, collect, c, header ? test_mem : NULL,
                         header, err);
}

static const char *list_json =
    "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"continue\":\"tok\"},"
    "\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"x\":[1,2,3]}"
    "},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a-very-long-pod-name-that-spans-chunks\"}}],"
    "\"trailer\":true,\"after\":{\"nested\":{\"deep\":\"kept\"},\"list\":[\"x\"]}}";

static void test_stream_items_one_by_one(void **state) {
  (void)state;
  size_t chunks[] = {1, 2, 7, 64, 1 << 20};
  for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
    collected c = {0};
    doc_node *header = NULL;
    dserr err;
    assert_int_equal(stream_text(DOC_FMT_JSON, list_json, chunks[k], &c, &header, &err), 0);
    assert_int_equal(c.count, 3);
    assert_string_equal(c.names[0], "n1");
    assert_string_equal(c.names[1], "p1");
    assert_string_equal(c.names[2], "a-very-long-pod-name-that-spans-chunks");
    assert_int_equal(c.sizes[1], 3);
    /* the header keeps everything but the items, also what follows them */
    assert_non_null(header);
    assert_string_equal(doc_str(doc_get(header, "kind")), "List");
    assert_string_equal(doc_str(doc_path(header, "metadata", "continue", NULL)), "tok");
    assert_int_equal(doc_get(header, "trailer")->type, DOC_BOOL);
    /* fields after the items (kubectl prints kind and metadata last) outlive the items */
    assert_string_equal(doc_str(doc_path(header, "after", "nested", "deep", NULL)), "kept");
    assert_string_equal(doc_path(header, "after", "list", NULL)->items[0]->text, "x");
    doc_node *items = doc_get(header, "items");
    assert_true(items == NULL || items->n == 0);
  }
}

static void test_stream_yaml_list(void **state) {
  (void)state;
  collected c = {0};
  doc_node *header = NULL;
  dserr err;
  const char *text = "kind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n"
                     "- kind: Pod\n  metadata:\n    name: p1\nmetadata:\n  continue: \"\"\n";
  for (size_t chunk = 1; chunk <= 4096; chunk *= 8) {
    assert_int_equal(stream_text(DOC_FMT_YAML, text, chunk, &c, &header, &err), 0);
    assert_int_equal(c.count, 2);
    assert_string_equal(c.names[0], "n1");
    assert_string_equal(c.names[1], "p1");
    assert_string_equal(doc_str(doc_get(header, "kind")), "List");
    assert_string_equal(doc_str(doc_path(header, "metadata", "continue", NULL)), "");
  }
}

static void test_stream_single_object(void **state) {
  (void)state;
  collected c = {0};
  doc_node *header = NULL;
  dserr err;
  assert_int_equal(stream_text(DOC_FMT_JSON,
                               "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"solo\"},\"spec\":{}}", 3,
                               &c, &header, &err),
                   0);
  assert_int_equal(c.count, 1);
  assert_string_equal(c.names[0], "solo");
  assert_string_equal(doc_str(doc_get(header, "kind")), "Pod");
  /* an items key below the top level is data, not a list to stream */
  assert_int_equal(stream_text(DOC_FMT_JSON, "{\"items\":[{\"items\":[1,2],\"x\":1},{\"y\":2}]}", 5,
                               &c, NULL, &err),
                   0);
  assert_int_equal(c.count, 2);
  assert_string_equal(c.names[0], "items");
  assert_int_equal(c.sizes[0], 2);
  /* an empty list delivers nothing */
  assert_int_equal(stream_text(DOC_FMT_JSON, "{\"kind\":\"List\",\"items\":[]}", 4, &c, NULL, &err),
                   0);
  assert_int_equal(c.count, 0);
}

static void test_stream_stops_on_callback_error(void **state) {
  (void)state;
  collected c = {0};
  c.stop_after = 2;
  dserr err;
  err.msg[0] = 0;
  assert_int_not_equal(stream_text(DOC_FMT_JSON, list_json, 16, &c, NULL, &err), 0);
  assert_int_equal(c.count, 2);
  assert_string_equal(err.msg, "stopped after 2");
}

static void test_stream_errors(void **state) {
  (void)state;
  collected c = {0};
  dserr err;
  /* a byte offset that does not depend on how the input was chunked */
  const char *bad = "{\"items\":[{\"a\":1},{\"b\":2},,{\"c\":3}]}";
  char first[DSERR_MAX];
  assert_int_equal(stream_text(DOC_FMT_JSON, bad, 1 << 20, &c, NULL, &err), -1);
  snprintf(first, sizeof first, "%s", err.msg);
  assert_contains(first, "stream: invalid JSON near byte ");
  assert_int_equal(c.count, 2);
  assert_int_equal(stream_text(DOC_FMT_JSON, bad, 3, &c, NULL, &err), -1);
  assert_string_equal(err.msg, first);
  /* truncated */
  assert_int_equal(stream_text(DOC_FMT_JSON, "{\"items\":[{\"a\":1},{\"b\":", 4, &c, NULL, &err),
                   -1);
  assert_string_equal(err.msg,
                      "stream: truncated JSON: the document ends at byte 23 before it is complete");
  /* not an object */
  assert_int_equal(stream_text(DOC_FMT_JSON, "[1,2]", 4, &c, NULL, &err), -1);
  assert_contains(err.msg, "expected a v1 List or a Kubernetes object (a map), got a list");
  assert_int_equal(stream_text(DOC_FMT_YAML, "", 4, &c, NULL, &err), -1);
  assert_contains(err.msg, "stream: empty document");
  /* YAML: line numbers, second document */
  assert_int_equal(stream_text(DOC_FMT_YAML, "items:\n- a: 1\n- b: [\n", 2, &c, NULL, &err), -1);
  assert_contains(err.msg, "stream: invalid YAML at line ");
  assert_int_equal(stream_text(DOC_FMT_YAML, "kind: Pod\n---\nkind: Pod\n", 2, &c, NULL, &err), -1);
  assert_string_equal(err.msg,
                      "stream: line 2: a second YAML document starts here; only one is expected");
}

/* ---------- files ---------- */

static void test_stream_files(void **state) {
  (void)state;
  collected c = {0};
  doc_node *header = NULL;
  dserr err;
  assert_int_equal(doc_stream_file(DATA "list.json", collect, &c, test_mem, &header, &err), 0);
  assert_int_equal(c.count, 3);
  assert_string_equal(c.names[2], "p2");
  assert_string_equal(doc_str(doc_path(header, "metadata", "continue", NULL)), "next-page");
  assert_string_equal(doc_str(doc_path(header, "metadata", "resourceVersion", NULL)), "42");

  memset(&c, 0, sizeof c);
  assert_int_equal(doc_stream_file(DATA "list.yaml", collect, &c, test_mem, &header, &err), 0);
  assert_int_equal(c.count, 2);
  assert_string_equal(c.names[1], "p1");
  assert_string_equal(doc_str(doc_get(header, "apiVersion")), "v1");

  memset(&c, 0, sizeof c);
  assert_int_equal(doc_stream_file(DATA "truncated.json", collect, &c, NULL, NULL, &err), -1);
  assert_contains(err.msg, "truncated.json: truncated JSON: the document ends at byte 110");
  assert_int_equal(c.count, 1);

  memset(&c, 0, sizeof c);
  assert_int_equal(doc_stream_file(DATA "malformed.json", collect, &c, NULL, NULL, &err), -1);
  assert_contains(err.msg, "malformed.json: invalid JSON near byte ");

  assert_int_equal(doc_stream_file(DATA "malformed.yaml", collect, &c, NULL, NULL, &err), -1);
  assert_contains(err.msg, "malformed.yaml: invalid YAML at line ");

  assert_int_equal(doc_stream_file(DATA "two-documents.yaml", collect, &c, NULL, NULL, &err), -1);
  assert_contains(err.msg, "two-documents.yaml: line 3: a second YAML document starts here");

  assert_int_equal(doc_stream_file(DATA "no-such-file.json", collect, &c, NULL, NULL, &err), -1);
  assert_contains(err.msg, "no-such-file.json: cannot open: ");

  doc_node *root = NULL;
  assert_int_equal(doc_parse_yaml_file(test_mem, DATA "two-documents.yaml", &root, &err), -1);
  assert_contains(err.msg, "line 3: a second YAML document");
  assert_int_equal(doc_parse_yaml_file(test_mem, DATA "list.yaml", &root, &err), 0);
  assert_int_equal(doc_get(root, "items")->n, 2);
}

/* ---------- the fast JSON reader (doc/doc_fast.h) ---------- */

/* What it accepts reads as yajl reads it, escapes and UTF-8 included. */
static void test_fast_reader_same_trees(void **state) {
  (void)state;
  const char *docs[] = {list_json,
                        "{\"s\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0041\\u00e9\\u2603 caf\xc3\xa9 "
                        "\xf0\x9f\x98\x80\"}",
                        "[0,-1,1.5,-2e3,1E+2,12345678901234567890123,true,false,null,{},[],\"\"]",
                        " \n{\"a\" : [ 1 , { \"b\" : { } } ] }\t\r\n"};
  for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
    doc_node *fast = NULL, *slow = NULL;
    dserr err;
    assert_int_equal(docf_parse(test_mem, docs[i], strlen(docs[i]), &fast), DOCF_OK);
    assert_int_equal(doc_yajl_parse(test_mem, "t", docs[i], strlen(docs[i]), &slow, &err), 0);
    strbuf where = {0};
    if (!doc_equal(fast, slow, &where))
      fail_msg("document %zu differs at %s", i, sb_str(&where));
    sb_free(&where);
  }
  /* refused, so yajl reads them: a surrogate pair, NUL, \v as whitespace, deep nesting, and
   * whatever is malformed */
  const char *refused[] = {"\"\\ud83d\\ude00\"", "\"\\u0000\"", "\v1", "{\"a\":1,}", "[1 2]",
                           "\"\xc0\x80\"",       "01",          "",    "{\"a\":1}x"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    doc_node *root = NULL;
    assert_int_equal(docf_parse(test_mem, refused[i], strlen(refused[i]), &root), DOCF_REFUSED);
  }
  char deep[2 * DOCF_MAX_DEPTH + 8];
  memset(deep, '[', DOCF_MAX_DEPTH + 1);
  memset(deep + DOCF_MAX_DEPTH + 1, ']', DOCF_MAX_DEPTH + 1);
  doc_node *root = NULL;
  assert_int_equal(docf_parse(test_mem, deep, 2 * DOCF_MAX_DEPTH + 2, &root), DOCF_REFUSED);
  /* ...and doc_parse_json still reads them as before */
  dserr err;
  assert_int_equal(doc_parse_json(test_mem, "t", deep, 2 * DOCF_MAX_DEPTH + 2, &root, &err), 0);
  assert_int_equal(doc_parse_json(test_mem, "t", "\"\\ud83d\\ude00\"", 14, &root, &err), 0);
  assert_string_equal(root->text, "\xf0\x9f\x98\x80");
}

static int stream_file_window(const char *text, size_t window, const char *const *skip,
                              collected *c, doc_node **root) {
  FILE *f = fmemopen((void *)text, strlen(text), "rb");
  assert_non_null(f);
  docf_source src = {NULL, 0, f, window};
  arena *item = arena_new(4096);
  size_t delivered = 0;
  int cb_rc = 0;
  dserr err;
  memset(c, 0, sizeof *c);
  int rc = docf_stream(&src, skip, collect, c, test_mem, item, root, &delivered, &cb_rc, &err);
  assert_int_equal((int)delivered, c->count);
  arena_free(item);
  fclose(f);
  return rc;
}

/* A file read in windows of any size gives what memory gives, each item once. */
static void test_fast_stream_windows(void **state) {
  (void)state;
  size_t windows[] = {1, 2, 3, 5, 16, 64, 0};
  for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
    collected c;
    doc_node *root = NULL;
    assert_int_equal(stream_file_window(list_json, windows[k], NULL, &c, &root), DOCF_OK);
    assert_int_equal(c.count, 3);
    assert_string_equal(c.names[2], "a-very-long-pod-name-that-spans-chunks");
    assert_string_equal(doc_str(doc_path(root, "after", "nested", "deep", NULL)), "kept");
    assert_int_equal(doc_get(root, "items")->n, 0);
    /* a document cut short is refused (yajl then says where it ends) */
    char cut[256];
    snprintf(cut, sizeof cut, "%.*s", (int)strlen(list_json) - 5, list_json);
    assert_int_equal(stream_file_window(cut, windows[k], NULL, &c, &root), DOCF_REFUSED);
  }
}

typedef struct {
  int count;
  bool saw_managed;
  char pods[4][64];
} page_items;

static int note_item(void *ctx, doc_node *item, dserr *err) {
  (void)err;
  page_items *p = ctx;
  if (doc_path(item, "metadata", "managedFields", NULL))
    p->saw_managed = true;
  if (p->count < 4)
    snprintf(p->pods[p->count], sizeof p->pods[0], "%s",
             doc_str(doc_path(item, "metadata", "name", NULL)));
  p->count++;
  return 0;
}

/* Skipped parts are not built but still checked; a refusal halfway hands each item over once. */
static void test_fast_stream_skips_and_resumes(void **state) {
  (void)state;
  static const char *const skip[] = {"metadata.managedFields", NULL};
  const char *page = "{\"metadata\":{\"continue\":\"c\"},\"items\":["
                     "{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"f:spec\":{}}]}},"
                     "{\"metadata\":{\"name\":\"b\",\"managedFields\":[]}}]}";
  page_items p = {0};
  doc_node *header = NULL;
  dserr err;
  assert_int_equal(doc_stream_memory_skipping(DOC_FMT_JSON, "page", page, strlen(page), skip,
                                              note_item, &p, test_mem, &header, &err),
                   0);
  assert_int_equal(p.count, 2);
  assert_false(p.saw_managed);
  assert_string_equal(doc_str(doc_path(header, "metadata", "continue", NULL)), "c");
  /* malformed inside a skipped part: yajl's message, as without skipping */
  const char *bad = "{\"items\":[{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"x\":1,}]}}]}";
  char with[DSERR_MAX], without[DSERR_MAX];
  memset(&p, 0, sizeof p);
  assert_int_equal(doc_stream_memory_skipping(DOC_FMT_JSON, "page", bad, strlen(bad), skip,
                                              note_item, &p, NULL, NULL, &err),
                   -1);
  snprintf(with, sizeof with, "%s", err.msg);
  assert_int_equal(doc_yajl_stream("page", bad, strlen(bad), note_item, &p, NULL, NULL, &err), -1);
  snprintf(without, sizeof without, "%s", err.msg);
  assert_string_equal(with, without);
  assert_contains(with, "page: invalid JSON near byte ");
  /* the second item holds what the fast reader leaves to yajl (a surrogate pair) */
  const char *mixed =
      "{\"items\":[{\"metadata\":{\"name\":\"one\"}},"
      "{\"metadata\":{\"name\":\"\\ud83d\\ude00\"}},{\"metadata\":{\"name\":\"three\"}}]}";
  memset(&p, 0, sizeof p);
  assert_int_equal(doc_stream_memory_skipping(DOC_FMT_JSON, "page", mixed, strlen(mixed), skip,
                                              note_item, &p, NULL, NULL, &err),
                   0);
  assert_int_equal(p.count, 3);
  assert_string_equal(p.pods[0], "one");
  assert_string_equal(p.pods[1], "\xf0\x9f\x98\x80");
  assert_string_equal(p.pods[2], "three");
}

/* What follows the items list is checked as the rest: a member after it without a comma is
 * refused (the fast stream once read on as though the comma were there; found by
 * fuzz_json_fast), in memory and in windows, and yajl then names the byte. */
static void test_fast_stream_member_after_items(void **state) {
  (void)state;
  const char *bad = "{\"items\":[{\"metadata\":{\"name\":\"a\"}}]\"kind\":\"PodList\"}";
  const char *good = "{\"items\":[{\"metadata\":{\"name\":\"a\"}}],\"kind\":\"PodList\"}";
  size_t windows[] = {1, 2, 3, 7, 64, 0};
  for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
    collected c;
    doc_node *root = NULL;
    assert_int_equal(stream_file_window(bad, windows[k], NULL, &c, &root), DOCF_REFUSED);
    assert_int_equal(stream_file_window(good, windows[k], NULL, &c, &root), DOCF_OK);
    assert_string_equal(doc_str(doc_get(root, "kind")), "PodList");
  }
  page_items p = {0};
  dserr err;
  assert_int_equal(doc_stream_memory_skipping(DOC_FMT_JSON, "page", bad, strlen(bad), NULL,
                                              note_item, &p, NULL, NULL, &err),
                   -1);
  assert_contains(err.msg, "page: invalid JSON near byte ");
}

/* A skipped value's empty maps (most of managedFields) are taken whole, within the same
 * grammar and depth limit as the rest: in windows of any size, what follows them is checked,
 * and the depth at which a skipped {} is refused is the one at which building it is. */
static void test_fast_skip_empty_maps(void **state) {
  (void)state;
  static const char *const skip[] = {"a", NULL};
  size_t windows[] = {1, 2, 3, 7, 0};
  const char *ok = "{\"items\":[{\"a\":{\"x\":{},\"y\":[{},{}],\"z\":{\"w\":{}},\"v\" : {}},"
                   "\"metadata\":{\"name\":\"n\"}}]}";
  const char *bad[] = {
      "{\"items\":[{\"a\":{\"x\":{},}}]}",        "{\"items\":[{\"a\":{\"x\":{}x}}]}",
      "{\"items\":[{\"a\":{\"x\":{}]}]}",         "{\"items\":[{\"a\":{\"x\":{}",
      "{\"items\":[{\"a\":{\"x\":{}\"y\":{}}}]}", "{\"items\":[{\"a\":[{}:{}]}]}",
  };
  for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
    collected c;
    doc_node *root = NULL;
    assert_int_equal(stream_file_window(ok, windows[k], skip, &c, &root), DOCF_OK);
    assert_int_equal(c.count, 1);
    assert_string_equal(c.names[0], "n");
    assert_int_equal(c.sizes[0], 1); /* "a" left out */
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
      assert_int_equal(stream_file_window(bad[b], windows[k], skip, &c, &root), DOCF_REFUSED);
  }
  /* {"items":[{"a":{"k":{"k": ... {"k":{}} ... }}]}: skipped and built agree on each depth */
  int flips = 0;
  bool last = true;
  for (int n = DOCF_MAX_DEPTH - 8; n <= DOCF_MAX_DEPTH + 2; n++) {
    strbuf b = {0};
    sb_append(&b, "{\"items\":[{\"a\":");
    for (int i = 0; i < n; i++)
      sb_append(&b, "{\"k\":");
    sb_append(&b, "{}");
    for (int i = 0; i < n; i++)
      sb_append(&b, "}");
    sb_append(&b, "}]}");
    doc_node *root = NULL;
    collected c;
    bool built = stream_file_window(b.buf, 0, NULL, &c, &root) == DOCF_OK;
    assert_int_equal(stream_file_window(b.buf, 0, skip, &c, &root), built ? DOCF_OK : DOCF_REFUSED);
    flips += built != last;
    last = built;
    sb_free(&b);
  }
  assert_int_equal(flips, 1); /* the limit lies inside the range tried */
}

/* Strings and members in a skipped value (managedFields' "k:{\"name\":\"x\"}" keys, runs of
 * "f:x":{} members) are accepted and refused as they are when the value is built, in windows
 * of any size. */
static void test_fast_skip_strings_and_members(void **state) {
  (void)state;
  static const char *const skip[] = {"a", NULL};
  size_t windows[] = {1, 2, 3, 7, 0};
  /* string bodies (between the quotes), good and bad */
  const char *strings[] = {"plain",
                           "k:{\\\"name\\\":\\\"x\\\"}",
                           "\\\"\\\\\\/\\b\\f\\n\\r\\t",
                           "a\\u0041b",
                           "caf\xc3\xa9",
                           "\\\\",
                           "\\u0000",
                           "\\q",
                           "a\\",
                           "\xc0\x80",
                           "\x01",
                           "\\u12",
                           "\\\"\\u00e9\\\"",
                           "x\\/\\x"};
  /* values of "a" built from members, good and bad */
  const char *members[] = {"{\"x\":{},\"y\":{}}",
                           "{\"x\":{},\"y\":{},\"z\":{\"w\":{}}}",
                           "{\"x\":{},\"y\":1}",
                           "{\"x\":{},\"y\":{}, \"z\":{}}",
                           "{\"x\":{},\"y\"}",
                           "{\"x\":{},\"y\":{},}",
                           "{\"x\":{},\"y\":{}]",
                           "{\"x\":{},\"y\":{}",
                           "{\"x\":{},\"y\":{},\"y\":[]}",
                           "{\"x\":{},\"\\q\":{}}",
                           "{\"x\":{},\"k:{\\\"a\\\":1}\":{},\"z\":{}}"};
  size_t ns = sizeof strings / sizeof strings[0], nm = sizeof members / sizeof members[0];
  int accepted = 0, refused = 0;
  for (size_t i = 0; i < ns + nm; i++) {
    strbuf b = {0};
    if (i < ns)
      sb_printf(&b,
                "{\"items\":[{\"a\":{\"%s\":{},\"v\":\"%s\",\"w\":[\"%s\"]},"
                "\"metadata\":{\"name\":\"n\"}}]}",
                strings[i], strings[i], strings[i]);
    else
      sb_printf(&b, "{\"items\":[{\"a\":%s,\"metadata\":{\"name\":\"n\"}}]}", members[i - ns]);
    collected c;
    doc_node *root = NULL;
    int built = stream_file_window(b.buf, 0, NULL, &c, &root);
    assert_true(built == DOCF_OK || built == DOCF_REFUSED);
    built == DOCF_OK ? accepted++ : refused++;
    for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
      int skipped = stream_file_window(b.buf, windows[k], skip, &c, &root);
      if (skipped != built)
        fail_msg("%s: %d skipped in windows of %zu, %d built", b.buf, skipped, windows[k], built);
      if (skipped == DOCF_OK) {
        assert_int_equal(c.count, 1);
        assert_int_equal(c.sizes[0], 1); /* "a" left out */
      }
    }
    sb_free(&b);
  }
  /* the first six strings and the thirteenth; the first four members, a repeated key, the last */
  assert_int_equal(accepted, 7 + 6);
  assert_int_equal(refused, 7 + 5);
}

/* A tree read from the API written back: keys sorted (as Go's encoding/json writes maps),
 * numbers as written, even an integer too big for int64. */
static void test_write_json(void **state) {
  (void)state;
  arena *a = arena_new(4096);
  doc_node *root;
  dserr err;
  const char *in = "{\"b\":[1,2.5,\"x\",true,null],\"a\":{},\"big\":123456789012345678901234}";
  assert_int_equal(doc_parse_json(a, "t", in, strlen(in), &root, &err), 0);
  strbuf sb = {0};
  doc_write_json(&sb, root, 0);
  assert_string_equal(sb_str(&sb),
                      "{\"a\":{},\"b\":[1,2.5,\"x\",true,null],\"big\":123456789012345678901234}");
  sb_clear(&sb);
  doc_write_json(&sb, doc_get(root, "b"), 2);
  assert_string_equal(sb_str(&sb), "[\n  1,\n  2.5,\n  \"x\",\n  true,\n  null\n]");
  sb_free(&sb);
  arena_free(a);
}

/* ---------- a file read by two threads (doc_split) ---------- */

/* Items with lists of maps inside them (a guessed start can fall on one of those), pretty
 * printed, and root keys after the items. */
static const char *split_json =
    "{\"kind\": \"List\",\n \"items\": [\n"
    "  {\"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}},\n"
    "  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"p1\"}, \"spec\": {\"t\": "
    "[{\"metadata\": {\"name\": \"inner1\"}}, {\"metadata\": {\"name\": \"inner2\"}}]}},\n"
    "  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"p2\", \"annotations\": {\"a\": \"}, {\\\"metadata\\\": {}}\"}}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p3\"}},\n"
    "  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"p4\"}, \"status\": {\"c\": [{\"x\": 1}, {\"y\": 2}]}}\n"
    " ],\n \"metadata\": {\"continue\": \"\"}, \"trailer\": [1, {\"metadata\": {}}]}\n";

typedef struct {
  collected *main;   /* what the reader hands over, the worker's items put in at the join */
  collected worker;  /* what the worker read */
  int rc, joins, drops;
  uint64_t resume;
  size_t count;
} split_probe;

static bool probe_join(void *ctx, uint64_t *resume, size_t *count) {
  split_probe *p = ctx;
  p->joins++;
  if (p->rc != 0)
    return false;
  for (int i = 0; i < p->worker.count && p->main->count + i < 8; i++)
    memcpy(p->main->names[p->main->count + i], p->worker.names[i], sizeof p->main->names[0]);
  p->main->count += p->worker.count;
  *resume = p->resume;
  *count = p->count;
  return true;
}

static void probe_drop(void *ctx) { ((split_probe *)ctx)->drops++; }

/* Wherever the worker starts (every byte of the file), the items are handed over once each in
 * file order and the root keys after them are read; the split joins exactly where an item of
 * the root's list starts, in windows of any size. */
static void test_split_every_offset(void **state) {
  (void)state;
  char path[] = "/tmp/test_doc_split_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  size_t len = strlen(split_json);
  assert_int_equal(write(fd, split_json, len), (ssize_t)len);
  close(fd);
  const char *expect[] = {"n1", "p1", "p2", "p3", "p4"};
  /* where the root's items start */
  const char *heads[] = {"{\"kind\": \"Node\"", "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p1\"",
                         "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p2\"",
                         "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p3\"",
                         "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p4\""};
  size_t starts[5], nstarts = 5;
  for (size_t i = 0; i < nstarts; i++) {
    assert_non_null(strstr(split_json, heads[i]));
    starts[i] = (size_t)(strstr(split_json, heads[i]) - split_json);
  }
  size_t windows[] = {1, 7, 64, 0};
  int joined_total = 0;
  for (size_t at = 0; at < len; at++) {
    split_probe p = {0};
    p.rc = doc_stream_items_at(path, at, NULL, collect, &p.worker, &p.resume, &p.count, NULL);
    for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++) {
      collected c = {0};
      p.main = &c;
      p.joins = p.drops = 0;
      doc_split split = {at, probe_join, probe_drop, &p};
      FILE *f = fopen(path, "rb");
      assert_non_null(f);
      docf_source src = {NULL, 0, f, windows[k], &split};
      arena *item = arena_new(4096);
      doc_node *root = NULL;
      size_t delivered = 0;
      int cb_rc = 0;
      dserr err;
      assert_int_equal(docf_stream(&src, NULL, collect, &c, test_mem, item, &root, &delivered,
                                   &cb_rc, &err),
                       DOCF_OK);
      arena_free(item);
      fclose(f);
      assert_int_equal(c.count, 5);
      assert_int_equal((int)delivered, 5);
      for (int i = 0; i < 5; i++)
        assert_string_equal(c.names[i], expect[i]);
      assert_non_null(doc_get(root, "trailer"));
      bool item_start = false;
      for (size_t i = 0; i < nstarts; i++)
        item_start |= starts[i] == at;
      /* one of the two, once; a join (with the worker's items) exactly at an item's start */
      assert_int_equal(p.joins + p.drops, 1);
      bool joined = p.joins == 1 && p.rc == 0;
      assert_int_equal(joined, item_start);
      joined_total += joined;
    }
  }
  assert_int_equal(joined_total, 5 * 4);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_yaml_booleans),
      cmocka_unit_test(test_yaml_integers),
      cmocka_unit_test(test_yaml_floats),
      cmocka_unit_test(test_yaml_nulls_and_strings),
      cmocka_unit_test(test_yaml_structure),
      cmocka_unit_test(test_json_typing),
      cmocka_unit_test(test_describe),
      cmocka_unit_test(test_malformed_json_names_byte_offset),
      cmocka_unit_test(test_truncated_json),
      cmocka_unit_test(test_malformed_yaml_names_line),
      cmocka_unit_test(test_second_yaml_document_refused),
      cmocka_unit_test(test_yaml_alias_bombs_and_cycles_refused),
      cmocka_unit_test(test_stream_items_one_by_one),
      cmocka_unit_test(test_stream_yaml_list),
      cmocka_unit_test(test_stream_single_object),
      cmocka_unit_test(test_stream_stops_on_callback_error),
      cmocka_unit_test(test_stream_errors),
      cmocka_unit_test(test_stream_files),
      cmocka_unit_test(test_fast_reader_same_trees),
      cmocka_unit_test(test_fast_stream_windows),
      cmocka_unit_test(test_fast_stream_skips_and_resumes),
      cmocka_unit_test(test_fast_skip_empty_maps),
      cmocka_unit_test(test_fast_skip_strings_and_members),
      cmocka_unit_test(test_fast_stream_member_after_items),
      cmocka_unit_test(test_write_json),
      cmocka_unit_test(test_split_every_offset),
  };
  return cmocka_run_group_tests(tests, test_mem_setup, test_mem_teardown);
}
