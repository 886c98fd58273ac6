/* fuzz_kubedescheduler.c - libFuzzer target: a KubeDescheduler CR (YAML text) read and
 * rendered (kd_parse, kd_render) against the facts of a healthy OpenShift cluster with KubeVirt
 * (the first byte picks PSI and the Scheduler profile, so those paths run too). What renders
 * is written as YAML and JSON, must read back as the same tree, and is handed to the policy
 * loader, which may refuse it but must not crash. */
#include "../../src/plugins/registry.h"
#include "../../src/policy/kubedescheduler.h"
#include "../../src/policy/policy.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_quiet_logs(4);
  char *text = fuzz_cstr(data, size);
  arena *a = arena_new(64 * 1024);
  dserr err = {{0}};
  doc_node *root = NULL;
  kd_spec spec;
  kd_result r;
  if (doc_parse_yaml(a, "cr.yaml", text, strlen(text), &root, &err) < 0)
    goto out;
  int rc = kd_parse(a, "cr.yaml", root, &spec, &err);
  fuzz_require_error(rc, &err, "kd_parse");
  if (rc < 0)
    goto out;
  static const char *const names[] = {"kube-system", "openshift-b", "default", "openshift-a"};
  kd_facts f;
  memset(&f, 0, sizeof f);
  kd_protected_namespaces(a, names, 4, &f);
  unsigned pick = size ? data[0] : 0;
  f.kubevirt_node = !(pick & 1);
  f.route_present = true;
  f.route_ningress = 1;
  f.route_host = "prom.example";
  f.scheduler_known = !(pick & 2);
  f.scheduler_profile = (pick & 4) ? "HighNodeUtilization" : (pick & 8) ? "LowNodeUtilization" : "";
  f.psi = (pick & 16) ? KD_PSI_UNKNOWN : KD_PSI_PRESENT;
  f.monitoring_label = 1;
  rc = kd_render(a, &spec, &f, &r, &err);
  fuzz_require_error(rc, &err, "kd_render");
  if (rc < 0)
    goto out;
  strbuf yaml = {0}, json = {0}, where = {0};
  if (kd_policy_yaml(&r, &yaml, &err) < 0) {
    fprintf(stderr, "the rendered policy cannot be written: %s\n", err.msg);
    abort();
  }
  doc_node *back = NULL;
  if (doc_parse_yaml(a, "rendered.yaml", sb_str(&yaml), yaml.len, &back, &err) < 0 ||
      !doc_equal(r.policy, back, &where)) {
    fprintf(stderr, "the rendered policy does not read back: %s %s\n%s", err.msg, sb_str(&where),
            sb_str(&yaml));
    abort();
  }
  doc_write_json(&json, r.policy, 0);
  if (doc_parse_json(a, "rendered.json", sb_str(&json), json.len, &back, &err) < 0 ||
      !doc_equal(r.policy, back, &where)) {
    fprintf(stderr, "the rendered JSON does not read back: %s %s\n", err.msg, sb_str(&where));
    abort();
  }
  policy *p = policy_load_string("rendered.yaml", sb_str(&yaml), plugin_lookup, NULL, &err);
  fuzz_require_error(p ? 0 : -1, &err, "policy_load_string");
  policy_free(p);
  sb_free(&yaml);
  sb_free(&json);
  sb_free(&where);
out:
  arena_free(a);
  free(text);
  return 0;
}
