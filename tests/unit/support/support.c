/* support.c - see support.h. */
#include "support.h"

fw_history *sim_history;

#include "../../../src/decode/decode.h"
#include "../../../src/obs/log.h"
#include "../../../src/plugins/registry.h"
#include "../../../src/apimachinery/timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

arena *test_mem;

int test_mem_setup(void **state) {
  (void)state;
  test_mem = arena_new(64 * 1024);
  return 0;
}

int test_mem_teardown(void **state) {
  (void)state;
  arena_free(test_mem);
  test_mem = NULL;
  return 0;
}

static int pc_value(void *ctx, const char *name, int32_t *value, dserr *err) {
  const priority_class_obj *pc = model_find_priority_class(ctx, name);
  if (!pc)
    return dserr_set(err, "priorityclasses.scheduling.k8s.io \"%s\" not found", name);
  *value = pc->value;
  return 0;
}

policy *load_policy_text(const char *yaml, dserr *err) {
  return policy_load_string("policy.yaml", yaml, plugin_lookup, NULL, err);
}

model *load_model_text(const char *json, dserr *err) {
  model *m = model_new();
  size_t cnt;
  char *next = NULL;
  if (decode_list_page(m, "snapshot", json, strlen(json), NULL, &next, &cnt, err) < 0 ||
      model_finish(m, err) < 0) {
    model_free(m);
    free(next);
    return NULL;
  }
  free(next);
  return m;
}

int sim_run_strings(sim_run *r, const char *policy_yaml, const char *snapshot_json, bool gate,
                    const char *now, int verbosity) {
  return sim_run_prepared(r, policy_yaml, snapshot_json, gate, now, verbosity, NULL, NULL);
}

int sim_run_prepared(sim_run *r, const char *policy_yaml, const char *snapshot_json, bool gate,
                     const char *now, int verbosity, sim_prepare_fn prepare, void *ctx) {
  memset(r, 0, sizeof *r);
  size_t loglen = 0;
  FILE *logs = open_memstream(&r->logs, &loglen);
  log_set_stream(logs);
  log_set_verbosity(verbosity);
  r->rc = -1;
  r->m = load_model_text(snapshot_json, &r->err);
  if (r->m) {
    plugin_env env = {pc_value, r->m};
    r->pol = policy_load_string("policy.yaml", policy_yaml, plugin_lookup, &env, &r->err);
  }
  if (r->pol && prepare && prepare(r->m, r->pol, ctx, &r->err) < 0) {
    policy_free(r->pol);
    r->pol = NULL;
  }
  if (r->pol) {
    int64_t t = 1767225600; /* 2026-01-01T00:00:00Z */
    if (now)
      time_parse_rfc3339(now, &t, NULL, &r->err);
    if (gate)
      bg_sync(&r->bg, r->m, t, true);
    sim_sink sink;
    sim_sink_init(&sink, r->m);
    fw_options opt = {gate, t, NULL, NULL, sim_history};
    r->rc = fw_run_cycle(r->pol, r->m, &r->bg, &sink.base, &opt, &r->res, &r->err);
    sim_sink_free(&sink);
  }
  log_set_stream(NULL);
  log_set_verbosity(0);
  fclose(logs);
  return r->rc;
}

sim_run sim_run_ok(const char *policy_yaml, const char *snapshot_json, int verbosity) {
  sim_run r;
  if (sim_run_strings(&r, policy_yaml, snapshot_json, false, NULL, verbosity) != 0)
    fail_msg("cycle failed: %s", r.err.msg);
  return r;
}

void sim_rerun(sim_run *r, const char *policy_yaml, const char *snapshot_json, bool gate,
               const char *now, int verbosity) {
  sim_run_free(r);
  if (sim_run_strings(r, policy_yaml, snapshot_json, gate, now, verbosity) != 0)
    fail_msg("cycle failed: %s", r->err.msg);
}

void sim_run_free(sim_run *r) {
  fw_result_free(&r->res);
  bg_clear(&r->bg);
  policy_free(r->pol);
  model_free(r->m);
  free(r->logs);
  memset(r, 0, sizeof *r);
}

bool sim_evicted(const sim_run *r, const char *ref) {
  for (size_t i = 0; i < r->res.nevictions; i++) {
    char buf[512];
    if (strcmp(pod_ref(r->res.evictions[i].pod, buf, sizeof buf), ref) == 0)
      return true;
  }
  return false;
}

void sim_assert_evictions(const sim_run *r, const char *const *refs) {
  char have[2048] = "";
  size_t len = 0, n = 0;
  for (size_t i = 0; i < r->res.nevictions && len < sizeof have; i++) {
    char buf[512];
    len += (size_t)snprintf(have + len, sizeof have - len, " %s",
                            pod_ref(r->res.evictions[i].pod, buf, sizeof buf));
  }
  for (; refs[n]; n++)
    if (!sim_evicted(r, refs[n]))
      fail_msg("%s was not evicted; evicted:%s", refs[n], have);
  if (r->res.nevictions != n)
    fail_msg("%zu evictions, not %zu; evicted:%s", r->res.nevictions, n, have);
}

int sim_log_count(const sim_run *r, const char *needle) {
  int n = 0;
  const char *s = r->logs ? r->logs : "";
  while ((s = strstr(s, needle)) != NULL) {
    n++;
    s += strlen(needle);
  }
  return n;
}
