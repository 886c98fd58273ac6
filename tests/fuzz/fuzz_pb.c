/* fuzz_pb.c - libFuzzer target: a PodList or NodeList page in kube-apiserver's protobuf
 * encoding (doc/doc_pb.c, the Pod and Node schemas of decode/pbschema.c) into the model, as
 * live mode reads one; every input is read as both.
 *
 * Besides "refused with a message, never a crash": every item the reader builds has the shape
 * of the schema, so cutting it down to the schema (docpb_project, what the tests do to a JSON
 * object) leaves it as it is; the page decodes into a model (decode_list_page) with a message
 * when it does not; and the same bytes read as an error answer (a Status) are read or refused
 * with a message. */
#include "../../src/decode/decode.h"
#include "fuzz_common.h"

#include "../../src/util/strbuf.h"

/* The k-th pair keyed `key` of map m, NULL when there are fewer */
static const doc_node *nth_value(const doc_node *m, const char *key, size_t k) {
  for (size_t i = 0; i < m->n; i++)
    if (strcmp(m->pairs[i].key, key) == 0 && k-- == 0)
      return m->pairs[i].value;
  return NULL;
}

/* Equal as data, maps in any order, a repeated key's values matched in their order (doc_equal
 * finds only the first value of a key) */
static bool same(const doc_node *x, const doc_node *y) {
  if (x->type != y->type || x->n != y->n)
    return false;
  switch (x->type) {
  case DOC_MAP:
    for (size_t i = 0; i < x->n; i++) {
      size_t k = 0;
      for (size_t j = 0; j < i; j++)
        k += strcmp(x->pairs[j].key, x->pairs[i].key) == 0;
      const doc_node *v = nth_value(y, x->pairs[i].key, k);
      if (!v || !same(x->pairs[i].value, v))
        return false;
    }
    return true;
  case DOC_SEQ:
    for (size_t i = 0; i < x->n; i++)
      if (!same(x->items[i], y->items[i]))
        return false;
    return true;
  case DOC_NULL: return true;
  default: return doc_equal(x, y, NULL);
  }
}

typedef struct {
  arena *a;
  const pb_msg *schema;
} item_ctx;

static int check_item(void *ctx, doc_node *item, dserr *err) {
  (void)err;
  item_ctx *c = ctx;
  doc_node *cut = docpb_project(c->a, c->schema, item);
  if (!same(cut, item)) {
    strbuf where = {0};
    doc_equal(cut, item, &where);
    strbuf x = {0}, y = {0};
    doc_write_json(&x, item, 0);
    doc_write_json(&y, cut, 0);
    fprintf(stderr,
            "fuzz_pb: an item read from protobuf is not in the %s schema's shape (at %s)\n"
            "  read: %s\n  cut:  %s\n",
            c->schema->name, sb_str(&where), sb_str(&x), sb_str(&y));
    abort();
  }
  return 0;
}

static void read_as(const uint8_t *data, size_t size, const char *kind) {
  char list_kind[32];
  snprintf(list_kind, sizeof list_kind, "%sList", kind);
  item_ctx c = {arena_new(4096), decode_pb_schema(kind)};
  arena *hdr = arena_new(4096);
  doc_node *header;
  size_t count;
  dserr err = {{0}};
  int rc = docpb_stream_list("fuzz.pb", data, size, list_kind, c.schema, check_item, &c, hdr,
                             &header, &count, &err);
  fuzz_require_error(rc, &err, "docpb_stream_list");
  arena_free(c.a);
  arena_free(hdr);

  model *m = model_new();
  char *next = NULL;
  err.msg[0] = 0;
  rc = decode_list_page(m, "fuzz.pb", (const char *)data, size, kind, &next, &count, &err);
  fuzz_require_error(rc, &err, "decode_list_page");
  free(next);
  if (rc == 0) {
    err.msg[0] = 0;
    rc = model_finish(m, &err);
    fuzz_require_error(rc, &err, "model_finish");
  }
  model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_quiet_logs(4);
  read_as(data, size, "Pod");
  read_as(data, size, "Node");
  /* the same bytes as an error answer (a Status), as the client reads one */
  arena *a = arena_new(4096);
  doc_node *status;
  dserr err = {{0}};
  int rc = docpb_parse_object(a, "fuzz.pb", data, size, "Status", &docpb_status, &status, &err);
  fuzz_require_error(rc, &err, "docpb_parse_object");
  arena_free(a);
  return 0;
}
