/* fuzz_decode.c - libFuzzer target: a cluster snapshot or API list page into the model, then
 * model_finish. JSON goes through decode_list_page (the live path, once without and once with
 * a PodList kind hint); anything else is read as a YAML snapshot, item by item through
 * decode_object, as decode_snapshot_file does for a YAML file. */
#include "../../src/decode/decode.h"
#include "fuzz_common.h"

static int on_item(void *ctx, doc_node *item, dserr *err) {
  return decode_object(ctx, item, NULL, err);
}

static void finish(model *m, int rc, dserr *err) {
  fuzz_require_error(rc, err, "decode");
  if (rc == 0) {
    err->msg[0] = 0;
    rc = model_finish(m, err);
    fuzz_require_error(rc, err, "model_finish");
  }
  model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_quiet_logs(4);
  size_t i = 0;
  while (i < size && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
    i++;
  dserr err = {{0}};
  if (i < size && (data[i] == '{' || data[i] == '[')) {
    static const char *const hints[] = {NULL, "Pod"};
    for (size_t h = 0; h < 2; h++) {
      model *m = model_new();
      char *next = NULL;
      size_t count = 0;
      err.msg[0] = 0;
      int rc =
          decode_list_page(m, "fuzz.json", (const char *)data, size, hints[h], &next, &count, &err);
      free(next);
      finish(m, rc, &err);
    }
  } else {
    model *m = model_new();
    int rc = doc_stream_memory(DOC_FMT_YAML, "fuzz.yaml", (const char *)data, size, on_item, m,
                               NULL, NULL, &err);
    finish(m, rc, &err);
  }
  return 0;
}
