/* fuzz_doc_yaml.c - libFuzzer target: doc_parse_yaml on any bytes, then a bounded walk of the
 * tree (aliases share nodes, so the walk has a budget). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  arena *a = arena_new(4096);
  doc_node *root = NULL;
  dserr err = {{0}};
  int rc = doc_parse_yaml(a, "fuzz.yaml", (const char *)data, size, &root, &err);
  fuzz_require_error(rc, &err, "doc_parse_yaml");
  if (rc == 0)
    fuzz_walk_doc(a, root, 1u << 20);
  arena_free(a);
  return 0;
}
