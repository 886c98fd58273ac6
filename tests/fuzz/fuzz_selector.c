/* fuzz_selector.c - libFuzzer target: label selectors in the string syntax (selector_parse),
 * matched against a fixed label set and against labels built from the selector's own
 * requirements; the label syntax checks on the text itself. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  arena *a = arena_new(4096);
  label_selector *sel = NULL;
  dserr err = {{0}};
  int rc = selector_parse(a, text, &sel, &err);
  fuzz_require_error(rc, &err, "selector_parse");
  if (rc == 0)
    fuzz_match_selector(a, sel);
  (void)label_key_problem(text);
  (void)label_value_problem(text);
  arena_free(a);
  free(text);
  return 0;
}
