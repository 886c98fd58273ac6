/* test_doc_write.c - building, copying, comparing and writing document trees
 * (src/doc/doc_write.c): YAML written by libyaml reads back as the same tree (strings that
 * look like other types are quoted, long lines are not folded), keys come out sorted, empty
 * containers are {} and [], JSON output, and doc_equal's first-difference path. */
#include "support/support.h"

#include "../../src/doc/doc.h"
#include "../../src/util/strbuf.h"

#include <string.h>

static doc_node *round_trip_yaml(const doc_node *tree, strbuf *text) {
  dserr err;
  sb_clear(text);
  if (doc_write_yaml(text, tree, &err) < 0)
    fail_msg("write: %s", err.msg);
  doc_node *back = NULL;
  if (doc_parse_yaml(test_mem, "written.yaml", sb_str(text), text->len, &back, &err) < 0)
    fail_msg("the written YAML does not parse: %s\n%s", err.msg, sb_str(text));
  return back;
}

static void test_strings_that_look_like_other_types_are_quoted(void **state) {
  (void)state;
  static const char *const tricky[] = {"true",      "no",
                                       "yes",       "on",
                                       "null",      "~",
                                       "",          "10",
                                       "0x1F",      "1e3",
                                       ".inf",      "010",
                                       "-5",        "3.14",
                                       "a: b",      "- x",
                                       "#comment",  "'quoted'",
                                       "\"dq\"",    "x\ny",
                                       "ünïcode",   "kubevirt.io/schedulable=true",
                                       "query:a b", "{x}",
                                       "[y]",       "Protected: yes",
                                       "  leading", "trailing  ",
                                       NULL};
  doc_node *m = doc_new_map(test_mem);
  for (size_t i = 0; tricky[i]; i++) {
    char key[16];
    snprintf(key, sizeof key, "k%02zu", i);
    doc_map_put(test_mem, m, key, doc_new_str(test_mem, tricky[i]));
  }
  strbuf text = {0};
  doc_node *back = round_trip_yaml(m, &text);
  for (size_t i = 0; tricky[i]; i++) {
    char key[16];
    snprintf(key, sizeof key, "k%02zu", i);
    const doc_node *v = doc_get(back, key);
    assert_non_null(v);
    if (v->type != DOC_STR || strcmp(v->text, tricky[i]) != 0)
      fail_msg("%s: \"%s\" read back as %s %s\n%s", key, tricky[i], doc_type_name(v->type),
               v->text ? v->text : "", sb_str(&text));
  }
  sb_free(&text);
}

static void test_scalars_keep_their_types(void **state) {
  (void)state;
  doc_node *m = doc_new_map(test_mem);
  doc_map_put(test_mem, m, "i", doc_new_int(test_mem, -42));
  doc_map_put(test_mem, m, "big", doc_new_int(test_mem, 9007199254740993LL));
  doc_map_put(test_mem, m, "t", doc_new_bool(test_mem, true));
  doc_map_put(test_mem, m, "f", doc_new_bool(test_mem, false));
  doc_map_put(test_mem, m, "n", doc_new_null(test_mem));
  doc_map_put(test_mem, m, "emptymap", doc_new_map(test_mem));
  doc_map_put(test_mem, m, "emptyseq", doc_new_seq(test_mem));
  strbuf text = {0};
  doc_node *back = round_trip_yaml(m, &text);
  assert_int_equal(doc_get(back, "i")->type, DOC_INT);
  assert_int_equal(doc_get(back, "i")->v.i, -42);
  assert_int_equal(doc_get(back, "big")->v.i, 9007199254740993LL);
  assert_int_equal(doc_get(back, "t")->type, DOC_BOOL);
  assert_true(doc_get(back, "t")->v.b);
  assert_false(doc_get(back, "f")->v.b);
  assert_int_equal(doc_get(back, "n")->type, DOC_NULL);
  assert_int_equal(doc_get(back, "emptymap")->type, DOC_MAP);
  assert_int_equal(doc_get(back, "emptyseq")->type, DOC_SEQ);
  assert_non_null(strstr(sb_str(&text), "emptymap: {}\n"));
  assert_non_null(strstr(sb_str(&text), "emptyseq: []\n"));
  assert_true(doc_equal(m, back, NULL));
  sb_free(&text);
}

static void test_keys_sorted_and_lines_not_folded(void **state) {
  (void)state;
  doc_node *m = doc_new_map(test_mem);
  doc_map_put(test_mem, m, "zeta", doc_new_int(test_mem, 1));
  doc_map_put(test_mem, m, "Alpha", doc_new_int(test_mem, 2));
  doc_map_put(test_mem, m, "alpha", doc_new_int(test_mem, 3));
  char longtext[400];
  memset(longtext, 0, sizeof longtext);
  for (size_t i = 0; i < 60; i++)
    strcat(longtext, "word ");
  strcat(longtext, "end");
  doc_map_put(test_mem, m, "long", doc_new_str(test_mem, longtext));
  doc_node *seq = doc_map_put(test_mem, m, "list", doc_new_seq(test_mem));
  doc_seq_add(test_mem, seq, doc_new_str(test_mem, "b"));
  doc_seq_add(test_mem, seq, doc_new_str(test_mem, "a"));
  strbuf text = {0};
  dserr err;
  assert_int_equal(doc_write_yaml(&text, m, &err), 0);
  /* Go's encoding/json order: bytes, so upper case first; lists keep their order */
  char want[800];
  snprintf(want, sizeof want, "Alpha: 2\nalpha: 3\nlist:\n- b\n- a\nlong: %s\nzeta: 1\n", longtext);
  assert_string_equal(sb_str(&text), want);
  sb_clear(&text);
  doc_write_json(&text, m, 0);
  snprintf(want, sizeof want,
           "{\"Alpha\":2,\"alpha\":3,\"list\":[\"b\",\"a\"],\"long\":\"%s\",\"zeta\":1}", longtext);
  assert_string_equal(sb_str(&text), want);
  sb_free(&text);
}

static void test_json_output(void **state) {
  (void)state;
  doc_node *m = doc_new_map(test_mem);
  doc_map_put(test_mem, m, "s", doc_new_str(test_mem, "a \"q\" \\ \n"));
  doc_map_put(test_mem, m, "n", doc_new_null(test_mem));
  doc_map_put(test_mem, m, "e", doc_new_map(test_mem));
  doc_map_put(test_mem, m, "l", doc_new_seq(test_mem));
  doc_node *inner = doc_map_put(test_mem, m, "m", doc_new_map(test_mem));
  doc_map_put(test_mem, inner, "b", doc_new_bool(test_mem, false));
  strbuf text = {0};
  doc_write_json(&text, m, 0);
  assert_string_equal(
      sb_str(&text),
      "{\"e\":{},\"l\":[],\"m\":{\"b\":false},\"n\":null,\"s\":\"a \\\"q\\\" \\\\ \\n\"}");
  sb_clear(&text);
  doc_write_json(&text, inner, 2);
  assert_string_equal(sb_str(&text), "{\n  \"b\": false\n}");
  /* JSON output parses back to the same tree */
  sb_clear(&text);
  doc_write_json(&text, m, 0);
  doc_node *back;
  dserr err;
  assert_int_equal(doc_parse_json(test_mem, "x", sb_str(&text), text.len, &back, &err), 0);
  assert_true(doc_equal(m, back, NULL));
  sb_free(&text);
}

static void test_map_put_replaces(void **state) {
  (void)state;
  doc_node *m = doc_new_map(test_mem);
  doc_map_put(test_mem, m, "a", doc_new_int(test_mem, 1));
  doc_map_put(test_mem, m, "b", doc_new_int(test_mem, 2));
  doc_map_put(test_mem, m, "a", doc_new_int(test_mem, 3));
  assert_int_equal(m->n, 2);
  assert_int_equal(doc_get(m, "a")->v.i, 3);
}

static void test_equal_and_copy(void **state) {
  (void)state;
  dserr err;
  doc_node *x, *y;
  const char *a = "a: {b: [1, 2.0, {c: x}], d: null}\ne: true\n";
  const char *b = "e: true\na: {d: ~, b: [1.0, 2, {c: x}]}\n";
  assert_int_equal(doc_parse_yaml(test_mem, "a", a, strlen(a), &x, &err), 0);
  assert_int_equal(doc_parse_yaml(test_mem, "b", b, strlen(b), &y, &err), 0);
  strbuf where = {0};
  assert_true(doc_equal(x, y, &where)); /* key order and int/float spelling do not matter */
  doc_node *c = doc_copy(test_mem, x);
  assert_true(doc_equal(x, c, NULL));
  doc_map_put(test_mem, doc_path(c, "a", "b", NULL)->items[2], "c", doc_new_str(test_mem, "z"));
  assert_false(doc_equal(x, c, &where));
  assert_string_equal(sb_str(&where), "a.b[2].c");
  assert_true(doc_equal(x, y, NULL)); /* the copy is deep: x is unchanged */
  doc_map_put(test_mem, c, "extra", doc_new_null(test_mem));
  assert_false(doc_equal(x, c, &where));
  doc_node *d = doc_copy(test_mem, x);
  doc_map_put(test_mem, d, "extra", doc_new_null(test_mem));
  assert_false(doc_equal(x, d, &where));
  assert_string_equal(sb_str(&where), "extra (missing in the first)");
  assert_false(doc_equal(d, x, &where));
  assert_string_equal(sb_str(&where), "extra (missing in the second)");
  sb_free(&where);
  assert_int_equal(doc_plain_scalar_type("yes"), DOC_BOOL);
  assert_int_equal(doc_plain_scalar_type("0o17"), DOC_INT);
  assert_int_equal(doc_plain_scalar_type("Predictive"), DOC_STR);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strings_that_look_like_other_types_are_quoted),
      cmocka_unit_test(test_scalars_keep_their_types),
      cmocka_unit_test(test_keys_sorted_and_lines_not_folded),
      cmocka_unit_test(test_json_output),
      cmocka_unit_test(test_map_put_replaces),
      cmocka_unit_test(test_equal_and_copy),
  };
  return cmocka_run_group_tests(tests, test_mem_setup, test_mem_teardown);
}
