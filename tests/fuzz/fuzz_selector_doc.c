/* fuzz_selector_doc.c - libFuzzer target: metav1.LabelSelector trees (selector_from_doc) and
 * node selector requirements (selector_add_node_reqs), from YAML text; the result is matched
 * against the labels of fuzz_match_selector. A selector LabelSelectorAsSelector would refuse
 * must carry its error text and match nothing. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  arena *a = arena_new(4096);
  doc_node *root = NULL;
  dserr err = {{0}};
  if (doc_parse_yaml(a, "fuzz.yaml", (const char *)data, size, &root, &err) == 0) {
    label_selector *sel = NULL;
    int rc = selector_from_doc(a, root, "spec.selector", &sel, &err);
    fuzz_require_error(rc, &err, "selector_from_doc");
    if (rc == 0 && sel->invalid) {
      /* a selector that does not convert carries upstream's error text and matches nothing */
      kvlist none = {0, NULL};
      if (!*sel->invalid || selector_matches(sel, &none) || selector_is_empty(sel)) {
        fprintf(stderr, "selector_from_doc: an invalid selector without text or matching\n");
        abort();
      }
    }
    if (rc == 0) {
      fuzz_match_selector(a, sel);
      /* node affinity: the same list read as node selector requirements, appended */
      const doc_node *exprs = doc_get(root, "matchExpressions");
      err.msg[0] = 0;
      rc = selector_add_node_reqs(a, sel, exprs, "nodeSelectorTerms[0].matchExpressions", &err);
      fuzz_require_error(rc, &err, "selector_add_node_reqs");
      if (rc == 0)
        fuzz_match_selector(a, sel);
    }
    /* a bare list of requirements */
    label_selector empty = {0};
    err.msg[0] = 0;
    rc = selector_add_node_reqs(a, &empty, root, "matchExpressions", &err);
    fuzz_require_error(rc, &err, "selector_add_node_reqs");
    if (rc == 0)
      fuzz_match_selector(a, &empty);
  }
  arena_free(a);
  return 0;
}
