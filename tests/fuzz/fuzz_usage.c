/* fuzz_usage.c - libFuzzer target: actual-utilization answers. The input is read as a
 * Prometheus instant-query response (decode_prom_response) and as a metrics.k8s.io list page
 * with the NodeMetrics and the PodMetrics kind hint, then linked to a small model. Checks,
 * besides "an error always has a message": an answer without an error has its samples sorted
 * by instance, without duplicates, every value in [0, 1]. */
#include "../../src/decode/decode.h"
#include "fuzz_common.h"

static const char *const cluster =
    "{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"}},"
    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\"}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{\"nodeName\":"
    "\"a\",\"containers\":[{\"name\":\"c\"}]}}]}";

static void check_answer(const model *m) {
  for (size_t i = 0; i < m->prom_answers.n; i++) {
    const prom_answer *a = m->prom_answers.items[i];
    if (a->error) {
      if (!*a->error || a->nsamples)
        abort();
      continue;
    }
    for (size_t k = 0; k < a->nsamples; k++) {
      double v;
      if (!(a->samples[k].value >= 0 && a->samples[k].value <= 1))
        abort();
      if (k && strcmp(a->samples[k - 1].instance, a->samples[k].instance) >= 0)
        abort();
      if (!prom_answer_value(a, a->samples[k].instance, &v) || v != a->samples[k].value)
        abort();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_quiet_logs(4);
  dserr err = {{0}};
  model *m = model_new();
  size_t count;
  char *next = NULL;
  if (decode_list_page(m, "cluster", cluster, strlen(cluster), NULL, &next, &count, &err) < 0 ||
      model_finish(m, &err) < 0)
    abort();
  free(next);
  int rc = decode_prom_response(m, "q", "fuzz.json", (const char *)data, size, &err);
  fuzz_require_error(rc, &err, "decode_prom_response");
  check_answer(m);
  static const char *const hints[] = {"NodeMetrics", "PodMetrics"};
  for (size_t h = 0; h < 2; h++) {
    err.msg[0] = 0;
    next = NULL;
    rc = decode_list_page(m, "fuzz.json", (const char *)data, size, hints[h], &next, &count, &err);
    fuzz_require_error(rc, &err, "decode_list_page");
    free(next);
  }
  m->node_metrics_read = m->pod_metrics_read = true;
  model_link_metrics(m);
  for (size_t i = 0; i < m->nodes.n; i++)
    if (m->nodes.items[i]->actual)
      (void)res_get(m->nodes.items[i]->actual, "cpu", NULL);
  for (size_t i = 0; i < m->pods.n; i++)
    if (m->pods.items[i]->metrics)
      for (size_t c = 0; c < m->pods.items[i]->metrics->ncontainers; c++)
        (void)strlen(m->pods.items[i]->metrics->containers[c].name);
  model_free(m);
  return 0;
}
