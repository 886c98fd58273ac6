/* test_doc_pb.c - kube-apiserver's protobuf encoding read into doc trees (src/doc/doc_pb.h)
 * with the Pod and Node schemas (src/decode/pbschema.c):
 *  - the PodList and NodeList pages kube-apiserver's serializer writes for
 *    tests/data/unit/pb/pods.json and nodes.json (pods.pb, nodes.pb, made by make-pages.sh)
 *    give the trees and the objects the JSON gives;
 *  - every pod and node of the conformance vectors and the examples decodes the same from its
 *    whole JSON and from its JSON cut down to the schema: the schema names every field the
 *    pod and node decoders read;
 *  - a page cut at any byte, or with any byte changed, is read or refused, never a crash,
 *    and a page read whole is never short of items;
 *  - malformed messages are refused with the byte offset and the field; strings read as the
 *    JSON page gives them (bytes that are not UTF-8 as U+FFFD);
 *  - times are written as RFC 3339 the way util/timeutil writes them;
 *  - an error answer in protobuf (a Status) gives its message and reason. */
#include "support/pbcompare.h"
#include "support/support.h"

#include "../../src/decode/decode.h"
#include "../../src/kube/client.h"
#include "../../src/util/arena.h"
#include "../../src/doc/doc_pb.h"
#include "../../src/util/strbuf.h"
#include "../../src/apimachinery/timeutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA DS_TEST_DATA "/unit/pb/"

static char *slurp(const char *path, size_t *len) {
  char *text = read_file_text(path, len);
  if (!text)
    fail_msg("cannot read %s", path);
  return text;
}

/* ---------- the marshalled page ---------- */

static void page_matches_json(const char *kind, const char *json_file, const char *pb_file,
                              size_t want) {
  size_t jl, pl, objects;
  char *json = slurp(json_file, &jl), *pb = slurp(pb_file, &pl);
  strbuf report = {0};
  int diffs = pb_compare_pages(kind, json, jl, pb, pl, &objects, &report);
  if (diffs)
    fail_msg("%s: %d difference(s):\n%s", pb_file, diffs, sb_str(&report));
  assert_int_equal(objects, want);
  sb_free(&report);
  free(json);
  free(pb);
}

static void test_page_matches_json(void **state) {
  (void)state;
  page_matches_json("Pod", DATA "pods.json", DATA "pods.pb", 3);
  page_matches_json("Node", DATA "nodes.json", DATA "nodes.pb", 4);
}

static int count_item(void *ctx, doc_node *item, dserr *err) {
  (void)item;
  (void)err;
  (*(size_t *)ctx)++;
  return 0;
}

static int read_page(const char *buf, size_t len, size_t *items, dserr *err) {
  size_t seen = 0, count;
  arena *hdr = arena_new(4096);
  doc_node *header;
  int rc = docpb_stream_list("page", (const uint8_t *)buf, len, "PodList", &decode_pod_pb,
                             count_item, &seen, hdr, &header, &count, err);
  arena_free(hdr);
  *items = seen;
  return rc;
}

/* Cut at every byte: refused with an offset, or (cut after the list, inside the envelope's
 * trailing empty strings) read with every item. */
static void test_every_cut(void **state) {
  (void)state;
  size_t len, items;
  char *pb = slurp(DATA "pods.pb", &len);
  dserr err;
  assert_int_equal(read_page(pb, len, &items, &err), 0);
  assert_int_equal(items, 3);
  size_t refused = 0;
  for (size_t cut = 0; cut < len; cut++) {
    char *copy = malloc(cut ? cut : 1);
    memcpy(copy, pb, cut);
    err.msg[0] = 0;
    if (read_page(copy, cut, &items, &err) < 0) {
      refused++;
      if (!strstr(err.msg, "page: protobuf at byte "))
        fail_msg("cut at %zu: the message names no offset: %s", cut, err.msg);
    } else if (items != 3) {
      fail_msg("cut at %zu: read with %zu of 3 items", cut, items);
    }
    free(copy);
  }
  /* only the cuts in the last few bytes (after the list) can be read */
  assert_true(refused >= len - 8);
  free(pb);
}

/* Every byte changed to a few values: read or refused, never a crash (ASan/UBSan run it). */
static void test_every_byte_changed(void **state) {
  (void)state;
  size_t len, items, read = 0, refused = 0;
  char *pb = slurp(DATA "pods.pb", &len);
  static const unsigned char values[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x0a, 0x12};
  for (size_t at = 0; at < len; at++) {
    for (size_t v = 0; v < sizeof values; v++) {
      if ((unsigned char)pb[at] == values[v])
        continue;
      char saved = pb[at];
      pb[at] = (char)values[v];
      dserr err;
      if (read_page(pb, len, &items, &err) == 0)
        read++;
      else
        refused++;
      pb[at] = saved;
    }
  }
  assert_true(read > 0 && refused > 0);
  free(pb);
}

/* ---------- the schema covers the decoder ---------- */

typedef struct {
  size_t files, pods, nodes;
  strbuf report;
} coverage;

/* item decoded as kind from its whole tree and from its tree cut down to the kind's schema:
 * the same outcome, and the same object (pod_text, node_text) */
static void decode_both(coverage *cv, const char *file, const doc_node *item, const char *kind) {
  bool is_pod = strcmp(kind, "Pod") == 0;
  arena *a = arena_new(1 << 14);
  doc_node *cut = docpb_project(a, decode_pb_schema(kind), item);
  model *whole = model_new(), *part = model_new();
  whole->keep_pod_conditions = part->keep_pod_conditions = true;
  dserr e1, e2;
  e1.msg[0] = e2.msg[0] = 0;
  int r1 = decode_object(whole, item, kind, &e1), r2 = decode_object(part, cut, kind, &e2);
  const char *name = doc_str(doc_path(item, "metadata", "name", NULL));
  size_t nw = model_object_count(whole, kind), np = model_object_count(part, kind);
  if (r1 != r2) {
    sb_printf(&cv->report, "%s: %s %s: whole %s, cut %s\n", file, kind, name ? name : "?",
              r1 ? e1.msg : "decodes", r2 ? e2.msg : "decodes");
  } else if (r1 == 0 && nw == 1 && np == 1) {
    strbuf x = {0}, y = {0};
    model_object_text(&x, whole, kind, 0);
    model_object_text(&y, part, kind, 0);
    if (strcmp(sb_str(&x), sb_str(&y)) != 0)
      sb_printf(&cv->report, "%s: %s %s decodes differently\n--- whole\n%s--- cut\n%s", file, kind,
                name ? name : "?", sb_str(&x), sb_str(&y));
    sb_free(&x);
    sb_free(&y);
    if (is_pod)
      cv->pods++;
    else
      cv->nodes++;
  }
  model_free(whole);
  model_free(part);
  arena_free(a);
}

static void objects_of(coverage *cv, const char *file, const doc_node *list) {
  const doc_node *items = doc_get(list, "items");
  for (size_t i = 0; items && items->type == DOC_SEQ && i < items->n; i++) {
    const char *kind = doc_str(doc_get(items->items[i], "kind"));
    if (kind && (strcmp(kind, "Pod") == 0 || strcmp(kind, "Node") == 0))
      decode_both(cv, file, items->items[i], kind);
  }
}

static void scan(coverage *cv, const char *dir, const char *member) {
  DIR *d = opendir(dir);
  if (!d)
    fail_msg("cannot open %s", dir);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t n = strlen(e->d_name);
    if (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0) {
      size_t len;
      char *text = slurp(path, &len);
      arena *a = arena_new(1 << 16);
      doc_node *root;
      dserr err;
      if (doc_parse_json(a, path, text, len, &root, &err) < 0)
        fail_msg("%s", err.msg);
      objects_of(cv, path, member ? doc_get(root, member) : root);
      cv->files++;
      arena_free(a);
      free(text);
    } else if (e->d_type == DT_DIR) {
      scan(cv, path, member);
    }
  }
  closedir(d);
}

static void test_schema_covers_decoder(void **state) {
  (void)state;
  coverage cv = {0};
  scan(&cv, DS_TEST_DATA "/../conformance/vectors", "objects");
  scan(&cv, DS_TEST_DATA "/../../examples", NULL);
  scan(&cv, DS_TEST_DATA "/unit/pb", NULL);
  if (cv.report.len)
    fail_msg("%s", sb_str(&cv.report));
  /* the corpus is there: 310 vectors' pods and nodes and more */
  assert_true(cv.files > 300);
  assert_true(cv.pods > 1000);
  assert_true(cv.nodes > 500);
  print_message("%zu pods and %zu nodes of %zu files decode the same from the schema's fields\n",
                cv.pods, cv.nodes, cv.files);
  sb_free(&cv.report);
}

/* Every message of the schema names its fields in ascending number order, at most 32 of them,
 * each message field with a message (the reader relies on all three). */
static size_t check_schema(const pb_msg *m, const pb_msg **seen, size_t nseen) {
  for (size_t i = 0; i < nseen; i++)
    if (seen[i] == m)
      return nseen;
  seen[nseen++] = m;
  if (m->n > 32)
    fail_msg("%s names %zu fields", m->name, m->n);
  for (size_t i = 0; i < m->n; i++) {
    const pb_field *f = &m->fields[i];
    if (i && f->num <= m->fields[i - 1].num)
      fail_msg("%s: field %u after %u", m->name, f->num, m->fields[i - 1].num);
    bool needs_msg = f->kind == PB_MESSAGE || f->kind == PB_INLINE || f->kind == PB_MAP;
    if (needs_msg != (f->msg != NULL))
      fail_msg("%s: field %u has %s message", m->name, f->num, f->msg ? "a" : "no");
    if (f->kind == PB_MAP && (f->msg->n != 2 || f->msg->fields[0].num != 1 ||
                              f->msg->fields[1].num != 2 || !(f->flags & PB_REPEATED)))
      fail_msg("%s: map field %u is not a repeated {key = 1, value = 2}", m->name, f->num);
    if (f->msg)
      nseen = check_schema(f->msg, seen, nseen);
  }
  return nseen;
}

static void test_schema_in_order(void **state) {
  (void)state;
  const pb_msg *seen[128];
  size_t n = check_schema(&decode_pod_pb, seen, 0);
  n = check_schema(&decode_node_pb, seen, n);
  n = check_schema(&docpb_status, seen, n);
  assert_true(n > 20);
}

/* ---------- malformed messages ---------- */

typedef struct {
  uint8_t b[512];
  size_t n;
} buf;

static void put(buf *w, const void *p, size_t n) {
  memcpy(w->b + w->n, p, n);
  w->n += n;
}

static void put_varint(buf *w, uint64_t v) {
  while (v >= 0x80) {
    w->b[w->n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  w->b[w->n++] = (uint8_t)v;
}

static void put_bytes(buf *w, uint32_t num, const void *p, size_t n) {
  put_varint(w, (uint64_t)num << 3 | 2);
  put_varint(w, n);
  put(w, p, n);
}

static void put_str(buf *w, uint32_t num, const char *s) {
  put_bytes(w, num, s, strlen(s));
}

/* a page holding one pod whose PodSpec is `spec` (and metadata name "p") */
static buf page_with_spec(const buf *spec) {
  buf md = {0}, pod = {0}, list = {0}, tm = {0}, env = {0};
  put_str(&md, 1, "p");
  put_str(&md, 3, "ns");
  put_bytes(&pod, 1, md.b, md.n);
  put_bytes(&pod, 2, spec->b, spec->n);
  put_bytes(&list, 2, pod.b, pod.n);
  put_str(&tm, 1, "v1");
  put_str(&tm, 2, "PodList");
  put(&env, "k8s", 4);
  put_bytes(&env, 1, tm.b, tm.n);
  put_bytes(&env, 2, list.b, list.n);
  put_str(&env, 3, "");
  put_str(&env, 4, "");
  return env;
}

static void assert_page_refused(const buf *page, const char *expect) {
  size_t items;
  dserr err;
  err.msg[0] = 0;
  if (read_page((const char *)page->b, page->n, &items, &err) == 0)
    fail_msg("accepted; expected a refusal with \"%s\"", expect);
  if (!strstr(err.msg, expect))
    fail_msg("message does not contain \"%s\": %s", expect, err.msg);
}

static void test_malformed(void **state) {
  (void)state;
  buf spec = {0};
  put_str(&spec, 10, "node-1");
  buf ok = page_with_spec(&spec);
  size_t items;
  dserr err;
  assert_int_equal(read_page((const char *)ok.b, ok.n, &items, &err), 0);
  assert_int_equal(items, 1);

  buf magic = ok;
  magic.b[0] = '{';
  assert_page_refused(&magic, "does not start with the protobuf magic");

  /* nodeName as a varint */
  buf bad = {0};
  put_varint(&bad, 10 << 3 | 0);
  put_varint(&bad, 5);
  buf page = page_with_spec(&bad);
  assert_page_refused(&page, "field items[0].spec.nodeName: the wire type is not the field's");

  /* nodeName twice */
  bad.n = 0;
  put_str(&bad, 10, "a");
  put_str(&bad, 10, "b");
  page = page_with_spec(&bad);
  assert_page_refused(&page, "spec.nodeName: a field that is no list is written twice");

  /* a group, an 11-byte varint, a length past the end, in a field nobody reads */
  bad.n = 0;
  put_varint(&bad, 99 << 3 | 3);
  page = page_with_spec(&bad);
  assert_page_refused(&page, "a group or an unknown wire type");
  bad.n = 0;
  put_varint(&bad, 99 << 3 | 0);
  for (int i = 0; i < 10; i++)
    bad.b[bad.n++] = 0xff;
  bad.b[bad.n++] = 0x01;
  page = page_with_spec(&bad);
  assert_page_refused(&page, "a varint is cut off or longer than 10 bytes");
  bad.n = 0;
  put_varint(&bad, 99 << 3 | 2);
  put_varint(&bad, 1000);
  page = page_with_spec(&bad);
  assert_page_refused(&page, "a length runs past the end of its message");

  /* a content encoding, another kind */
  buf env = {0}, tm = {0};
  put_str(&tm, 2, "PodList");
  put(&env, "k8s", 4);
  put_bytes(&env, 1, tm.b, tm.n);
  put_bytes(&env, 2, "", 0);
  put_str(&env, 3, "gzip");
  assert_page_refused(&env, "the content encoding \"gzip\" is not read");
  env.n = tm.n = 0;
  put_str(&tm, 2, "NodeList");
  put(&env, "k8s", 4);
  put_bytes(&env, 1, tm.b, tm.n);
  put_bytes(&env, 2, "", 0);
  assert_page_refused(&env, "the envelope says NodeList, expected PodList");
  env.n = 0;
  put(&env, "k8s", 4);
  assert_page_refused(&env, "holds no raw object");
}

/* A field nobody reads is stepped over whatever it holds; a zero value of an omitempty field
 * is left out as JSON leaves it out; a pointer field's zero stays. */
static void test_values(void **state) {
  (void)state;
  buf spec = {0}, aff = {0}, junk = {0};
  put_str(&junk, 1, "\xff\xfe not read, not checked");
  put_bytes(&spec, 14, junk.b, junk.n); /* securityContext */
  put_str(&spec, 10, "");               /* nodeName: omitempty */
  put_varint(&spec, 25 << 3 | 0);       /* priority: *int32 */
  put_varint(&spec, (uint64_t)-7);      /* int32 -7, sign-extended */
  put_bytes(&spec, 18, aff.b, 0);       /* affinity: an empty message is there */
  buf page = page_with_spec(&spec);
  arena *a = arena_new(4096);
  doc_node *tree;
  dserr err;
  /* the pod alone: the list's item bytes start after envelope, list and item headers */
  buf md = {0}, pod = {0};
  put_str(&md, 1, "p");
  put_bytes(&pod, 1, md.b, md.n);
  put_bytes(&pod, 2, spec.b, spec.n);
  assert_int_equal(docpb_parse(a, "pod", &decode_pod_pb, pod.b, pod.n, &tree, &err), 0);
  const doc_node *s = doc_get(tree, "spec");
  assert_null(doc_get(s, "nodeName"));
  assert_null(doc_get(s, "securityContext"));
  assert_int_equal(doc_get(s, "priority")->v.i, -7);
  assert_string_equal(doc_get(s, "priority")->text, "-7");
  assert_int_equal(doc_get(s, "affinity")->type, DOC_MAP);
  assert_int_equal(doc_get(s, "affinity")->n, 0);
  size_t items;
  assert_int_equal(read_page((const char *)page.b, page.n, &items, &err), 0);
  arena_free(a);
}

/* Bytes that are not UTF-8 become U+FFFD each, as kube-apiserver's JSON writes them; a NUL
 * ends the string as JSON's \u0000 does for every reader of the tree, and an omitempty string
 * that then reads as empty is left out. */
static void test_strings_as_json_gives_them(void **state) {
  (void)state;
  static const struct {
    const char *bytes;
    size_t n;
    const char *want;
  } cases[] = {
      {"plain ascii, more than eight bytes", 34, "plain ascii, more than eight bytes"},
      {"v\xc3\xa4lue \xe2\x9c\x93", 10, "v\xc3\xa4lue \xe2\x9c\x93"},
      {"a\xff", 2, "a\xef\xbf\xbd"},
      {"\xe2\x82", 2, "\xef\xbf\xbd\xef\xbf\xbd"},                 /* cut short: each byte */
      {"\xc0\x80x", 3, "\xef\xbf\xbd\xef\xbf\xbdx"},               /* overlong */
      {"\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* a surrogate */
      {"12345678\xf4\x90\x80\x80", 12,
       "12345678\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* above U+10FFFF */
      {"a\0b", 3, "a"},
      {"\0b", 2, NULL}, /* reads as empty: left out, nodeName being omitempty */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    buf spec = {0}, pod = {0}, md = {0};
    put_bytes(&spec, 10, cases[i].bytes, cases[i].n);
    put_str(&md, 1, "p");
    put_bytes(&md, 11, "", 0); /* a label entry with neither key nor value */
    put_bytes(&pod, 1, md.b, md.n);
    put_bytes(&pod, 2, spec.b, spec.n);
    arena *a = arena_new(4096);
    doc_node *tree;
    dserr err;
    assert_int_equal(docpb_parse(a, "pod", &decode_pod_pb, pod.b, pod.n, &tree, &err), 0);
    const char *got = doc_str(doc_path(tree, "spec", "nodeName", NULL));
    if (cases[i].want)
      assert_string_equal(got, cases[i].want);
    else
      assert_null(got);
    const doc_node *labels = doc_path(tree, "metadata", "labels", NULL);
    assert_int_equal(labels->n, 1);
    assert_string_equal(labels->pairs[0].key, "");
    assert_string_equal(doc_str(labels->pairs[0].value), "");
    arena_free(a);
  }
}

/* A pod whose one condition has lastTransitionTime t (a Time message's bytes), read: that time
 * as the tree has it, NULL when it is left out */
static const char *transition_time(arena *a, const buf *t) {
  buf cond = {0}, st = {0}, pod = {0};
  put_str(&cond, 1, "Ready");
  put_bytes(&cond, 4, t->b, t->n);
  put_bytes(&st, 2, cond.b, cond.n);
  put_bytes(&pod, 3, st.b, st.n);
  doc_node *tree;
  dserr err;
  assert_int_equal(docpb_parse(a, "pod", &decode_pod_pb, pod.b, pod.n, &tree, &err), 0);
  const doc_node *conds = doc_path(tree, "status", "conditions", NULL);
  return doc_str(doc_get(conds->items[0], "lastTransitionTime"));
}

/* Time {seconds, nanos} as RFC 3339 to the second, as util/timeutil writes it */
static void test_times(void **state) {
  (void)state;
  static const int64_t secs[] = {1,         59,          86399,      86400,        951782400,
                                 951868799, 1767323045,  4102444800, 253402300799, -1,
                                 -86400,    -62135596800};
  arena *a = arena_new(4096);
  for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
    buf t = {0};
    put_varint(&t, 1 << 3 | 0);
    put_varint(&t, (uint64_t)secs[i]);
    put_varint(&t, 2 << 3 | 0);
    put_varint(&t, 999999999); /* nanos are not written */
    const char *got = transition_time(a, &t);
    strbuf want = {0};
    time_format_rfc3339(&want, secs[i]);
    if (!got || strcmp(got, sb_str(&want)) != 0)
      fail_msg("%lld seconds: %s, expected %s", (long long)secs[i], got ? got : "(none)",
               sb_str(&want));
    sb_free(&want);
  }
  /* the zero Time (an empty message) is left out */
  buf zero = {0};
  assert_null(transition_time(a, &zero));
  arena_free(a);
}

/* An error answer to a request that accepted protobuf comes in protobuf: its message and reason
 * are read from it (tests/data/unit/pb/status-forbidden.pb: kube-apiserver v1.37.2's answer
 * to an anonymous pod LIST). */
static void test_protobuf_status(void **state) {
  (void)state;
  size_t len;
  char *body = slurp(DATA "status-forbidden.pb", &len);
  kube_response r = {.status = 403, .body = body, .len = len};
  char message[512], reason[64];
  kube_status_text(&r, message, sizeof message, reason, sizeof reason);
  assert_string_equal(reason, "Forbidden");
  assert_string_equal(message, "pods is forbidden: User \"system:anonymous\" cannot list "
                               "resource \"pods\" in API group \"\" at the cluster scope");
  /* a Status is no PodList, and a PodList no Status */
  size_t items;
  dserr err;
  assert_int_equal(read_page(body, len, &items, &err), -1);
  assert_non_null(strstr(err.msg, "the envelope says Status, expected PodList"));
  free(body);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_page_matches_json),
      cmocka_unit_test(test_every_cut),
      cmocka_unit_test(test_every_byte_changed),
      cmocka_unit_test(test_schema_covers_decoder),
      cmocka_unit_test(test_schema_in_order),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_values),
      cmocka_unit_test(test_strings_as_json_gives_them),
      cmocka_unit_test(test_times),
      cmocka_unit_test(test_protobuf_status),
  };
  return cmocka_run_group_tests(tests, test_mem_setup, test_mem_teardown);
}
