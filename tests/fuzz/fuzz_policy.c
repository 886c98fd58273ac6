/* fuzz_policy.c - libFuzzer target: the DeschedulerPolicy loader (policy_load_string) with
 * every registered plugin, from YAML text. PriorityClass lookups (thresholdPriorityClassName)
 * know "high" and "system-cluster-critical" and refuse any other name. */
#include "../../src/plugins/registry.h"
#include "../../src/policy/policy.h"
#include "fuzz_common.h"

static int priority_class_value(void *ctx, const char *name, int32_t *value, dserr *err) {
  (void)ctx;
  if (strcmp(name, "high") == 0)
    *value = 1000;
  else if (strcmp(name, "system-cluster-critical") == 0)
    *value = 2000000000;
  else
    return dserr_set(err, "priorityclasses.scheduling.k8s.io \"%s\" not found", name);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_quiet_logs(4);
  char *text = fuzz_cstr(data, size);
  plugin_env env = {priority_class_value, NULL};
  dserr err = {{0}};
  policy *p = policy_load_string("policy.yaml", text, plugin_lookup, &env, &err);
  fuzz_require_error(p ? 0 : -1, &err, "policy_load_string");
  if (p) {
    for (size_t i = 0; i < p->nprofiles; i++) {
      const profile *pr = &p->profiles[i];
      for (size_t j = 0; j < pr->nconfig; j++)
        (void)profile_config(pr, pr->config[j].name);
    }
  }
  policy_free(p);
  free(text);
  return 0;
}
