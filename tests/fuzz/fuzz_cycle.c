/* fuzz_cycle.c - libFuzzer target: a policy, a snapshot and one simulated cycle, as
 * `descheduler simulate` runs it (tests/unit/support/support.c does the same for the unit
 * tests). Decisions must never crash, whatever the cluster holds.
 *
 * Input: an optional first line "#!<flags>" (g: the EvictionsInBackground gate, j: JSON
 * logs), the policy YAML, a line "====", the snapshot JSON (a v1 List). Logs are written at
 * --v=4 to /dev/null so every log call formats its fields. */
#include "../../src/decode/decode.h"
#include "../../src/framework/framework.h"
#include "../../src/kubevirt/simsink.h"
#include "../../src/plugins/registry.h"
#include "../../src/policy/policy.h"
#include "fuzz_common.h"

static int priority_class_value(void *ctx, const char *name, int32_t *value, dserr *err) {
  const priority_class_obj *pc = model_find_priority_class(ctx, name);
  if (!pc)
    return dserr_set(err, "priorityclasses.scheduling.k8s.io \"%s\" not found", name);
  *value = pc->value;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  char *pol_text = text;
  bool gate = false, json = false;
  if (strncmp(text, "#!", 2) == 0) {
    char *eol = strchr(text, '\n');
    if (!eol)
      goto out;
    *eol = 0;
    gate = strchr(text, 'g') != NULL;
    json = strchr(text, 'j') != NULL;
    pol_text = eol + 1;
  }
  char *sep = strstr(pol_text, "\n====\n");
  if (!sep)
    goto out;
  *sep = 0;
  const char *snap = sep + 6;
  /* the snapshot is read by length: it may hold NUL bytes */
  size_t snap_len = size - (size_t)(snap - text);

  fuzz_quiet_logs(4);
  log_set_format(json ? LOG_JSON : LOG_TEXT);
  dserr err = {{0}};
  model *m = model_new();
  char *next = NULL;
  size_t count = 0;
  int rc = decode_list_page(m, "snapshot", snap, snap_len, NULL, &next, &count, &err);
  free(next);
  if (rc == 0)
    rc = model_finish(m, &err);
  fuzz_require_error(rc, &err, "snapshot");
  if (rc == 0) {
    plugin_env env = {priority_class_value, m};
    policy *pol = policy_load_string("policy.yaml", pol_text, plugin_lookup, &env, &err);
    fuzz_require_error(pol ? 0 : -1, &err, "policy");
    if (pol) {
      int64_t now = 1767225600; /* 2026-01-01T00:00:00Z */
      bg_cache bg = {0};
      if (gate)
        bg_sync(&bg, m, now, true);
      sim_sink sink;
      sim_sink_init(&sink, m);
      fw_options opt = {gate, now};
      fw_result res;
      err.msg[0] = 0;
      rc = fw_run_cycle(pol, m, &bg, &sink.base, &opt, &res, &err);
      fuzz_require_error(rc, &err, "fw_run_cycle");
      if (rc == 0) {
        for (size_t i = 0; i < res.nevictions; i++) {
          char ref[512];
          (void)pod_ref(res.evictions[i].pod, ref, sizeof ref);
        }
      }
      fw_result_free(&res);
      sim_sink_free(&sink);
      bg_clear(&bg);
      policy_free(pol);
    }
  }
  model_free(m);
  log_set_format(LOG_TEXT);
out:
  free(text);
  return 0;
}
