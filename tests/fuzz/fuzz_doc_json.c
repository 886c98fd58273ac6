/* fuzz_doc_json.c - libFuzzer target: doc_parse_json on any bytes, then a walk of the tree. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  arena *a = arena_new(4096);
  doc_node *root = NULL;
  dserr err = {{0}};
  int rc = doc_parse_json(a, "fuzz.json", (const char *)data, size, &root, &err);
  fuzz_require_error(rc, &err, "doc_parse_json");
  if (rc == 0)
    fuzz_walk_doc(a, root, 1u << 20);
  arena_free(a);
  return 0;
}
