/* test_usage.c - actual utilization: Prometheus answers (parsing and upstream's checks), the
 * metrics.k8s.io objects, which inputs a policy needs, and LowNodeUtilization classifying and
 * evicting on actual usage (usageclients.go semantics). */
#include "../../src/decode/decode.h"
#include "../../src/framework/framework.h"
#include "../../src/plugins/registry.h"
#include "../../src/util/strbuf.h"
#include "support/fixtures.h"
#include "support/support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define Q "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m"

/* ---------- Prometheus answers ---------- */

/* Decodes body as the answer to Q into a fresh model; returns the answer (model in *out). */
static const prom_answer *answer(const char *body, model **out) {
  model *m = model_new();
  dserr err;
  if (decode_prom_response(m, Q, "answer", body, strlen(body), &err) < 0)
    fail_msg("decode failed: %s", err.msg);
  *out = m;
  const prom_answer *a = model_find_prom_answer(m, Q);
  assert_non_null(a);
  return a;
}

static void assert_answer_error(const char *body, const char *expect) {
  model *m;
  const prom_answer *a = answer(body, &m);
  if (!a->error)
    fail_msg("no error, expected: %s", expect);
  assert_string_equal(a->error, expect);
  assert_int_equal(a->nsamples, 0);
  model_free(m);
}

static void assert_malformed(const char *body, const char *expect) {
  model *m = model_new();
  dserr err;
  assert_int_equal(decode_prom_response(m, Q, "answer", body, strlen(body), &err), -1);
  if (!strstr(err.msg, expect))
    fail_msg("error\n  %s\ndoes not contain\n  %s", err.msg, expect);
  assert_int_equal(m->prom_answers.n, 0);
  model_free(m);
}

#define VEC(samples)                                                                               \
  "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[" samples "]}}"
#define S(inst, v)                                                                                 \
  "{\"metric\":{\"__name__\":\"x\",\"instance\":\"" inst "\"},\"value\":[1764000000.5,\"" v "\"]}"

static void test_vector_samples(void **state) {
  (void)state;
  model *m;
  const prom_answer *a =
      answer(VEC(S("b", "0.25") "," S("a", "1") "," S("c", "0") "," S("b", "0.5")), &m);
  assert_null(a->error);
  /* sorted by instance; the later sample of b wins, as in upstream's map */
  assert_int_equal(a->nsamples, 3);
  double v;
  assert_true(prom_answer_value(a, "a", &v));
  assert_true(v == 1);
  assert_true(prom_answer_value(a, "b", &v));
  assert_true(v == 0.5);
  assert_true(prom_answer_value(a, "c", &v));
  assert_true(v == 0);
  assert_false(prom_answer_value(a, "d", &v));
  model_free(m);
}

static void test_empty_vector(void **state) {
  (void)state;
  model *m;
  const prom_answer *a = answer(VEC(""), &m);
  assert_null(a->error);
  assert_int_equal(a->nsamples, 0);
  model_free(m);
}

static void test_error_status(void **state) {
  (void)state;
  assert_answer_error("{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"1:5: parse "
                      "error: unexpected end of input\"}",
                      "unable to capture prometheus metrics: bad_data: 1:5: parse error: "
                      "unexpected end of input");
}

static void test_result_types(void **state) {
  (void)state;
  assert_answer_error("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":"
                      "[{\"metric\":{\"instance\":\"a\"},\"values\":[[1,\"0.5\"]]}]}}",
                      "expected query results to be of type \"vector\", got \"matrix\" instead");
  assert_answer_error("{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":"
                      "[1,\"0.5\"]}}",
                      "expected query results to be of type \"vector\", got \"scalar\" instead");
  assert_answer_error("{\"status\":\"success\",\"data\":{\"resultType\":\"string\",\"result\":"
                      "[1,\"x\"]}}",
                      "unable to capture prometheus metrics: unexpected value type \"string\"");
}

static void test_missing_instance(void **state) {
  (void)state;
  assert_answer_error(VEC(S("a", "0.5") ",{\"metric\":{\"node\":\"b\"},\"value\":[1,\"0.5\"]}"),
                      "the collected metrics sample is missing 'instance' key");
  /* no labels at all (e.g. `vector(0.5)`) */
  assert_answer_error(VEC("{\"metric\":{},\"value\":[1,\"0.5\"]}"),
                      "the collected metrics sample is missing 'instance' key");
  /* a NaN without an instance names no node to leave out: refused as any other (found by
   * fuzz_usage, a null instance reached the sort) */
  assert_answer_error(VEC("{\"metric\":{},\"value\":[1,\"NaN\"]}," S("a", "0.5")),
                      "the collected metrics sample is missing 'instance' key");
}

static void test_value_outside_0_1(void **state) {
  (void)state;
  assert_answer_error(VEC(S("a", "0.5") "," S("b", "1.5")),
                      "the collected metrics sample for \"b\" has value 1.5 outside of <0; 1> "
                      "interval");
  assert_answer_error(VEC(S("a", "-0.25")),
                      "the collected metrics sample for \"a\" has value -0.25 outside of <0; 1> "
                      "interval");
  assert_answer_error(VEC(S("a", "2")),
                      "the collected metrics sample for \"a\" has value 2 outside of <0; 1> "
                      "interval");
  assert_answer_error(VEC(S("a", "+Inf")),
                      "the collected metrics sample for \"a\" has value +Inf outside of <0; 1> "
                      "interval");
  /* upstream lets NaN through (and makes a huge negative usage of it): the sample is kept with
   * the error it would get as nan_error, for the plugin to refuse or to leave the node out */
  model *m;
  const prom_answer *a = answer(VEC(S("a", "0.5") "," S("b", "NaN")), &m);
  assert_null(a->error);
  assert_string_equal(a->nan_error,
                      "the collected metrics sample for \"b\" has value NaN outside of <0; 1> "
                      "interval");
  assert_int_equal(a->nsamples, 2);
  assert_true(isnan(a->samples[1].value));
  assert_true(a->at == 1764000000.5);
  model_free(m);
  /* a NaN first and a real failure after it: the real one is the answer's error */
  a = answer(VEC(S("a", "NaN") "," S("b", "1.5")), &m);
  assert_string_equal(a->error, "the collected metrics sample for \"b\" has value 1.5 outside of "
                                "<0; 1> interval");
  assert_string_equal(a->nan_error, "the collected metrics sample for \"a\" has value NaN outside "
                                    "of <0; 1> interval");
  model_free(m);
}

/* The first failing sample in answer order decides, whichever check it fails. */
static void test_first_failing_sample_decides(void **state) {
  (void)state;
  assert_answer_error(VEC(S("a", "7") ",{\"metric\":{},\"value\":[1,\"0.5\"]}"),
                      "the collected metrics sample for \"a\" has value 7 outside of <0; 1> "
                      "interval");
  assert_answer_error(VEC("{\"metric\":{},\"value\":[1,\"0.5\"]}," S("a", "7")),
                      "the collected metrics sample is missing 'instance' key");
}

static void test_malformed_responses(void **state) {
  (void)state;
  assert_malformed("not json", "answer");
  assert_malformed("[]", "expected a Prometheus API response");
  assert_malformed("{\"data\":{}}", "status: expected \"success\" or \"error\", got nothing");
  assert_malformed("{\"status\":\"ok\"}", "status: expected \"success\" or \"error\", got \"ok\"");
  assert_malformed("{\"status\":\"success\"}", "data: expected a map");
  assert_malformed("{\"status\":\"success\",\"data\":{\"result\":[]}}", "data.resultType");
  assert_malformed(VEC("{\"metric\":{\"instance\":\"a\"},\"value\":[1,0.5]}"),
                   "data.result[0].value: expected [<unix time>, \"<number>\"]");
  assert_malformed(VEC(S("a", "0.5") "," S("b", "abc")),
                   "data.result[1].value[1]: \"abc\" is not a number");
  assert_malformed(VEC("{\"metric\":{\"instance\":7},\"value\":[1,\"0\"]}"),
                   "data.result[0].metric.instance: expected a string");
  assert_malformed(VEC("3"), "data.result[0]: expected a sample");
  assert_malformed("{\"status\":\"success\",\"warnings\":[1],\"data\":{}}", "warnings[0]");
}

static void test_go_float_formatting(void **state) {
  (void)state;
  static const struct {
    double v;
    const char *s;
  } cases[] = {{0, "0"},
               {1, "1"},
               {1.5, "1.5"},
               {0.1, "0.1"},
               {100, "100"},
               {-2.5, "-2.5"},
               {1e21, "1000000000000000000000"},
               {1.2345e-7, "0.00000012345"},
               {123456.789, "123456.789"},
               {0.30000000000000004, "0.30000000000000004"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    strbuf sb = {0};
    sb_append_go_float(&sb, cases[i].v);
    assert_string_equal(sb_str(&sb), cases[i].s);
    sb_free(&sb);
  }
}

/* ---------- metrics files (simulate) ---------- */

/* Each call's path stays valid for the test's whole run (test_metrics_files unlinks them all at
 * its end): one slot per file, never reused. */
enum { TMP_FILES_MAX = 16 };
static const char *write_tmp(const char *name, const char *text) {
  static char path[TMP_FILES_MAX][256];
  static unsigned next;
  assert_true(next < TMP_FILES_MAX);
  char *p = path[next++];
  snprintf(p, sizeof path[0], "/tmp/ds-test-usage-%d-%s", (int)getpid(), name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return p;
}

static void test_metrics_files(void **state) {
  (void)state;
  model *m = model_new();
  metrics_file_info info;
  dserr err;
  /* kubectl get --raw /apis/metrics.k8s.io/v1beta1/nodes: items without a kind */
  const char *nodes = write_tmp(
      "nodes.json", "{\"kind\":\"NodeMetricsList\",\"apiVersion\":\"metrics.k8s.io/v1beta1\","
                    "\"items\":[{\"metadata\":{\"name\":\"a\"},\"usage\":{\"cpu\":"
                    "\"1500000000n\",\"memory\":\"2Gi\"}}]}");
  assert_int_equal(decode_metrics_file(m, nodes, NULL, &info, &err), 0);
  assert_int_equal(info.node_metrics, 1);
  assert_true(info.node_list);
  assert_int_equal(res_get(&m->node_metrics.items[0]->usage, "cpu", NULL), 1500);
  const char *pods = write_tmp(
      "pods.json", "{\"kind\":\"PodMetricsList\",\"items\":[{\"metadata\":{\"name\":\"p\","
                   "\"namespace\":\"ns\"},\"containers\":[{\"name\":\"c\",\"usage\":"
                   "{\"cpu\":\"250m\",\"memory\":\"1Mi\"}}]}]}");
  assert_int_equal(decode_metrics_file(m, pods, NULL, &info, &err), 0);
  assert_int_equal(info.pod_metrics, 1);
  const char *empty = write_tmp("empty.json", "{\"kind\":\"PodMetricsList\",\"items\":[]}");
  assert_int_equal(decode_metrics_file(m, empty, NULL, &info, &err), 0);
  assert_true(info.pod_list);
  const char *prom = write_tmp("prom.json", VEC(S("a", "0.5")));
  assert_int_equal(decode_metrics_file(m, prom, Q, &info, &err), 0);
  assert_true(info.prometheus);
  assert_non_null(model_find_prom_answer(m, Q));
  /* a refused query (`curl` of a bad expression) is a Prometheus answer too: it has no data */
  const char *refused = write_tmp(
      "refused.json",
      "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at char 5\"}");
  model *m2 = model_new();
  assert_int_equal(decode_metrics_file(m2, refused, Q, &info, &err), 0);
  assert_true(info.prometheus);
  assert_string_equal(model_find_prom_answer(m2, Q)->error,
                      "unable to capture prometheus metrics: bad_data: parse error at char 5");
  model_free(m2);
  /* errors name the file and the field */
  const char *bad =
      write_tmp("bad.json", "{\"items\":[{\"metadata\":{\"name\":\"x\"},\"spec\":{}}]}");
  assert_int_equal(decode_metrics_file(m, bad, NULL, &info, &err), -1);
  assert_non_null(strstr(err.msg, bad));
  assert_non_null(strstr(err.msg, "items[0]: expected NodeMetrics or PodMetrics"));
  const char *badval = write_tmp("badval.json", VEC(S("a", "x")));
  assert_int_equal(decode_metrics_file(m, badval, Q, &info, &err), -1);
  assert_non_null(strstr(err.msg, "data.result[0].value[1]: \"x\" is not a number"));
  const char *badpod =
      write_tmp("badpod.json", "{\"kind\":\"PodMetricsList\",\"items\":[{\"metadata\":{\"name\":"
                               "\"p\"},\"containers\":[]}]}");
  assert_int_equal(decode_metrics_file(m, badpod, NULL, &info, &err), -1);
  assert_non_null(strstr(err.msg, "items[0] (PodMetrics p): metadata.namespace: required"));
  assert_int_equal(decode_metrics_file(m, "/nonexistent/metrics.json", NULL, &info, &err), -1);
  assert_non_null(strstr(err.msg, "/nonexistent/metrics.json"));
  const char *paths[] = {nodes, pods, empty, prom, refused, bad, badval, badpod};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    unlink(paths[i]);
  model_free(m);
}

/* ---------- what a policy needs ---------- */

static const char *two_profiles =
    "apiVersion: descheduler/v1alpha2\n"
    "kind: DeschedulerPolicy\n"
    "profiles:\n"
    "- name: one\n"
    "  pluginConfig:\n"
    "  - name: LowNodeUtilization\n"
    "    args: {thresholds: {MetricResource: 0}, targetThresholds: {MetricResource: 10},\n"
    "           metricsUtilization: {source: Prometheus, prometheus: {query: " Q "}}}\n"
    "  plugins: {balance: {enabled: [LowNodeUtilization]}}\n"
    "- name: two\n"
    "  pluginConfig:\n"
    "  - name: LowNodeUtilization\n"
    "    args: {thresholds: {MetricResource: 0}, targetThresholds: {MetricResource: 10},\n"
    "           metricsUtilization: {source: Prometheus, prometheus: {query: " Q "}}}\n"
    "  plugins: {balance: {enabled: [LowNodeUtilization]}}\n"
    "- name: three\n"
    "  pluginConfig:\n"
    "  - name: LowNodeUtilization\n"
    "    args: {thresholds: {cpu: 20}, targetThresholds: {cpu: 50},\n"
    "           metricsUtilization: {source: KubernetesMetrics}}\n"
    "  plugins: {balance: {enabled: [LowNodeUtilization]}}\n"
    "- name: four\n"
    "  pluginConfig:\n"
    "  - name: LowNodeUtilization\n"
    "    args: {thresholds: {MetricResource: 0}, targetThresholds: {MetricResource: 10},\n"
    "           metricsUtilization: {source: Prometheus, prometheus: {query: 'not_enabled'}}}\n";

static void test_usage_needs(void **state) {
  (void)state;
  dserr err;
  policy *pol = load_policy_text(two_profiles, &err);
  if (!pol)
    fail_msg("%s", err.msg);
  usage_needs needs;
  fw_usage_needs(pol, &needs);
  /* one query however many profiles ask it; a configured but not enabled plugin asks nothing */
  assert_int_equal(needs.nqueries, 1);
  assert_string_equal(needs.queries[0], Q);
  assert_true(needs.node_metrics);
  assert_true(needs.pod_metrics);
  policy_free(pol);
}

/* Pod conditions are kept only when an enabled plugin reads them (PodLifeTime's
 * `conditions`); without them a pod's model is a third smaller. */
static void test_reads_pod_conditions(void **state) {
  (void)state;
  const char *with = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n"
                     "- name: p\n  pluginConfig:\n  - name: PodLifeTime\n"
                     "    args: {conditions: [{type: Ready, status: 'False'}]}\n"
                     "  plugins: {deschedule: {enabled: [PodLifeTime]}}\n";
  const char *age = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n"
                    "- name: p\n  pluginConfig:\n  - name: PodLifeTime\n"
                    "    args: {maxPodLifeTimeSeconds: 60}\n"
                    "  plugins: {deschedule: {enabled: [PodLifeTime]}}\n";
  const char *not_enabled = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n"
                            "- name: p\n  pluginConfig:\n  - name: PodLifeTime\n"
                            "    args: {conditions: [{type: Ready}]}\n";
  const char *cases[] = {with, age, not_enabled, two_profiles};
  bool want[] = {true, false, false, false};
  for (size_t i = 0; i < 4; i++) {
    dserr err;
    policy *pol = load_policy_text(cases[i], &err);
    if (!pol)
      fail_msg("case %zu: %s", i, err.msg);
    assert_int_equal(fw_reads_pod_conditions(pol), want[i]);
    policy_free(pol);
  }
  /* a model told not to keep them still checks them: a bad condition is still an error */
  model *m = model_new();
  m->keep_pod_conditions = false;
  const char *pods =
      "{\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"},"
      "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}]}";
  char *next = NULL;
  size_t count = 0;
  dserr err;
  assert_int_equal(decode_list_page(m, "page", pods, strlen(pods), NULL, &next, &count, &err), 0);
  assert_int_equal(m->pods.n, 1);
  assert_int_equal(m->pods.items[0]->nconditions, 0);
  const char *bad =
      "{\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\",\"namespace\":\"n\"},"
      "\"status\":{\"conditions\":[{\"type\":7}]}}]}";
  assert_int_equal(decode_list_page(m, "page", bad, strlen(bad), NULL, &next, &count, &err), -1);
  assert_non_null(strstr(err.msg, "status.conditions[0]: expected a string, got an integer"));
  model_free(m);
}

/* ---------- LowNodeUtilization on actual usage ---------- */

typedef struct {
  const char *prom;  /* answer to Q, or NULL: none */
  bool metrics;      /* a metrics collector read the snapshot's NodeMetrics / PodMetrics */
  const char *times; /* answer to timestamp(Q), or NULL: the samples' times are unknown */
} usage_input;

static int add_usage(model *m, const policy *pol, void *ctx, dserr *err) {
  (void)pol;
  const usage_input *in = ctx;
  if (in->prom && decode_prom_response(m, Q, "answer", in->prom, strlen(in->prom), err) < 0)
    return -1;
  if (in->times) {
    if (decode_prom_response(m, "timestamp(" Q ")", "times", in->times, strlen(in->times), err) < 0)
      return -1;
    model_prom_join_times(m, Q);
  }
  m->node_metrics_read = m->pod_metrics_read = in->metrics;
  model_link_metrics(m);
  return 0;
}

static void run_usage(sim_run *r, const char *policy, const char *cluster, usage_input in,
                      bool gate) {
  if (sim_run_prepared(r, policy, cluster, gate, NULL, 3, add_usage, &in) != 0)
    fail_msg("cycle failed: %s", r->err.msg);
}

/* the KubeVirt profile's LowNodeUtilization; limits: ", evictionLimits: {node: 2}" or "" */
static const char *prom_policy(const char *limits, const char *top) {
  static char args[512];
  snprintf(args, sizeof args,
           "{thresholds: {MetricResource: 0}, targetThresholds: {MetricResource: 10}, "
           "useDeviationThresholds: true, metricsUtilization: {source: Prometheus, prometheus: "
           "{query: " Q "}}%s}",
           limits);
  return plugin_policy(.plugin = "LowNodeUtilization", .point = "balance", .args = args,
                       .evictor_args = "{evictLocalStoragePods: true}", .top = top);
}

/* n nodes named n0.., each with `pods` pods of equal requests */
static const char *nodes_cluster(int n, int pods) {
  cluster_begin();
  for (int i = 0; i < n; i++) {
    char name[8];
    snprintf(name, sizeof name, "n%d", i);
    cluster_node(name);
    for (int k = 0; k < pods; k++) {
      char pod[16];
      snprintf(pod, sizeof pod, "p%d-%d", i, k);
      cluster_pod(pod, name, .cpu = "100m", .memory = "1Gi");
    }
  }
  return cluster_end();
}

/* Hot by usage, equal by requests: the query decides. Without evictionLimits.node upstream
 * moves one pod per overutilized node (a query says nothing about single pods). */
static void test_prometheus_one_pod_per_node(void **state) {
  (void)state;
  sim_run r;
  run_usage(&r, prom_policy("", NULL), nodes_cluster(3, 3),
            (usage_input){VEC(S("n0", "0.9") "," S("n1", "0.2") "," S("n2", "0.1")), false}, false);
  assert_string_equal(r.res.node_category[0], "overutilized");
  assert_string_equal(r.res.node_category[1], "underutilized");
  assert_string_equal(r.res.node_category[2], "underutilized");
  assert_evictions(&r, "ns/p0-0");
  assert_int_equal(sim_log_count(&r, "\"Currently, only a single pod eviction is allowed\""), 1);
  /* MetricResource usage is trunc(value * 100), the capacity 100 */
  assert_int_equal(sim_log_count(&r, "node=\"n0\" usage={\"MetricResource\":\"90\"} "
                                     "usagePercentage={\"MetricResource\":90}"),
                   1);
  /* average 40: thresholds 40 / 50; the criteria lines show the configured pair */
  assert_int_equal(sim_log_count(&r, "\"Assessed thresholds for overutilized nodes\" "
                                     "plugin=\"LowNodeUtilization\" ExtensionPoint=\"Balance\" "
                                     "MetricResource=\"50.00%\""),
                   1);
  assert_int_equal(sim_log_count(&r, "\"Criteria for a node above target utilization\" "
                                     "plugin=\"LowNodeUtilization\" ExtensionPoint=\"Balance\" "
                                     "MetricResource=\"10.00%\""),
                   1);
  sim_run_free(&r);
}

/* evictionLimits.node lets that many go, without re-checking the node in between. */
static void test_prometheus_node_limit(void **state) {
  (void)state;
  sim_run r;
  run_usage(&r, prom_policy(", evictionLimits: {node: 2}", NULL), nodes_cluster(3, 3),
            (usage_input){VEC(S("n0", "0.9") "," S("n1", "0.2") "," S("n2", "0.1")), false}, false);
  assert_evictions(&r, "ns/p0-0", "ns/p0-1");
  assert_int_equal(sim_log_count(&r, "\"Max number of evictions per node per plugin reached\""), 1);
  sim_run_free(&r);
}

/* The policy's limits hold over several hot nodes: 2 per node, 5 in all. */
static void test_prometheus_total_limit(void **state) {
  (void)state;
  sim_run r;
  run_usage(&r,
            prom_policy(", evictionLimits: {node: 2}",
                        "maxNoOfPodsToEvictTotal: 5\nmaxNoOfPodsToEvictPerNode: 2\n"),
            nodes_cluster(6, 3),
            (usage_input){VEC(S("n0", "1") "," S("n1", "1") "," S("n2", "1") "," S("n3", "0") "," S(
                              "n4", "0") "," S("n5", "0")),
                          false},
            false);
  assert_int_equal(r.res.nevictions, 5);
  assert_evictions(&r, "ns/p0-0", "ns/p0-1", "ns/p1-0", "ns/p1-1", "ns/p2-0");
  assert_int_equal(
      sim_log_count(&r, "maximum number of evicted pods per a descheduling cycle reached"), 1);
  sim_run_free(&r);
}

/* Upstream's TestLowNodeUtilizationWithPrometheusMetrics (lownodeutilization_test.go): three
 * nodes of 4 cpu, n1 with five evictable pods and three that are not (DaemonSet, local
 * storage, system-critical). */
static const char *upstream_cluster(void) {
  cluster_begin();
  cluster_node("n1", .cpu = "4", .memory = "3000", .pods = "9");
  cluster_node("n2", .cpu = "4", .memory = "3000", .pods = "10");
  cluster_node("n3", .cpu = "4", .memory = "3000", .pods = "10");
  for (int i = 1; i <= 5; i++) {
    char name[8];
    snprintf(name, sizeof name, "p%d", i);
    cluster_pod(name, "n1", .cpu = "400m");
  }
  cluster_pod("p6", "n1", .cpu = "400m", .owner = "DaemonSet/ds");
  cluster_pod("p7", "n1", .cpu = "400m", .spec = "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]");
  cluster_pod("p8", "n1", .cpu = "400m", .priority = "2000000000");
  cluster_pod("p9", "n2", .cpu = "400m");
  return cluster_end();
}

static void test_upstream_prometheus_vectors(void **state) {
  (void)state;
  static const struct {
    const char *args, *samples;
    size_t evicted;
  } cases[] = {
      /* with instance:node_cpu:rate:sum query */
      {"{thresholds: {MetricResource: 30}, targetThresholds: {MetricResource: 50}",
       VEC(S("n1", "0.5695757575757561") "," S("n2", "0.4245454545454522") "," S(
           "n3", "0.20381818181818104")),
       1},
      /* ... with more evictions */
      {"{thresholds: {MetricResource: 30}, targetThresholds: {MetricResource: 50}, "
       "evictionLimits: {node: 3}",
       VEC(S("n1", "0.5695757575757561") "," S("n2", "0.4245454545454522") "," S(
           "n3", "0.20381818181818104")),
       3},
      /* ... with deviation */
      {"{thresholds: {MetricResource: 5}, targetThresholds: {MetricResource: 5}, "
       "evictionLimits: {node: 2}, useDeviationThresholds: true",
       VEC(S("n1", "0.5695757575757561") "," S("n2", "0.4245454545454522") "," S(
           "n3", "0.20381818181818104")),
       2},
      /* ... and deviation thresholds */
      {"{thresholds: {MetricResource: 10}, targetThresholds: {MetricResource: 10}, "
       "useDeviationThresholds: true",
       VEC(S("n1", "1") "," S("n2", "0.5") "," S("n3", "0")), 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char args[512];
    snprintf(args, sizeof args,
             "%s, metricsUtilization: {source: Prometheus, prometheus: {query: " Q "}}}",
             cases[i].args);
    sim_run r;
    run_usage(&r, plugin_policy(.plugin = "LowNodeUtilization", .point = "balance", .args = args),
              upstream_cluster(), (usage_input){cases[i].samples, false}, false);
    if (r.res.nevictions != cases[i].evicted)
      fail_msg("case %zu: %zu evictions, expected %zu\n%s", i, r.res.nevictions, cases[i].evicted,
               r.logs);
    for (size_t k = 0; k < r.res.nevictions; k++)
      assert_string_equal(r.res.evictions[k].pod->node_name, "n1");
    sim_run_free(&r);
  }
}

/* Every failure of the usage source stops the plugin with upstream's words; nothing goes. */
static void assert_usage_error(usage_input in, const char *policy, const char *expect) {
  sim_run r;
  run_usage(&r, policy, nodes_cluster(3, 3), in, false);
  assert_int_equal(r.res.nevictions, 0);
  if (sim_log_count(&r, expect) != 1)
    fail_msg("logs lack: %s\n%s", expect, r.logs);
  sim_run_free(&r);
}

#define UPSTREAM_SAMPLES "usageSamples: {skipNodesWithoutSamples: false}\n"

static void test_prometheus_errors(void **state) {
  (void)state;
  /* upstream's rule: one node without a sample fails the plugin */
  assert_usage_error((usage_input){VEC(S("n0", "0.9") "," S("n1", "0.2")), false},
                     prom_policy(", evictionLimits: {node: 2}", UPSTREAM_SAMPLES),
                     "error getting node usage: unable to find metric entry for n2");
  assert_usage_error((usage_input){VEC(S("n0", "0.9") "," S("n1", "0.2") "," S("n2", "NaN")), false},
                     prom_policy(", evictionLimits: {node: 2}", UPSTREAM_SAMPLES),
                     "error getting node usage: the collected metrics sample for \\\"n2\\\" has "
                     "value NaN outside of <0; 1> interval");
  /* the default: one of three nodes is more than maxMissingFraction 10% */
  assert_usage_error((usage_input){VEC(S("n0", "0.9") "," S("n1", "0.2")), false},
                     prom_policy(", evictionLimits: {node: 2}", NULL),
                     "error getting node usage: 1 of 3 nodes have no usable usage sample, more than "
                     "maxMissingFraction 0.1 allows (n2: no sample for the node in the query's "
                     "answer); nothing is evicted");
  const char *p = prom_policy(", evictionLimits: {node: 2}", NULL);
  assert_usage_error((usage_input){"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\","
                                   "\"result\":[]}}",
                                   false},
                     p,
                     "error getting node usage: expected query results to be of type "
                     "\\\"vector\\\", got \\\"matrix\\\" instead");
  assert_usage_error((usage_input){VEC(S("n0", "1.5")), false}, p,
                     "error getting node usage: the collected metrics sample for \\\"n0\\\" has "
                     "value 1.5 outside of <0; 1> interval");
  assert_usage_error((usage_input){NULL, false}, p,
                     "error initializing usage client: prometheus client not initialized");
}

/* metrics.k8s.io: NodeMetrics classify, PodMetrics account for what an eviction frees. */
static const char *metrics_cluster(bool pod_metrics_for_a1) {
  cluster_begin();
  cluster_capacity("10", "100Gi", "100");
  const char *nodes[3] = {"a", "b", "c"};
  const char *node_cpu[3] = {"9", "1", "500m"};
  for (int i = 0; i < 3; i++) {
    cluster_node(nodes[i]);
    cluster_item("{\"kind\":\"NodeMetrics\",\"apiVersion\":\"metrics.k8s.io/v1beta1\","
                 "\"metadata\":{\"name\":\"%s\"},\"usage\":{\"cpu\":\"%s\",\"memory\":\"10Gi\"}}",
                 nodes[i], node_cpu[i]);
    for (int k = 0; k < 3; k++) {
      char pod[16];
      snprintf(pod, sizeof pod, "%s%d", nodes[i], k);
      cluster_pod(pod, nodes[i], .cpu = "100m", .memory = "1Gi");
      if (i == 0 && (k != 1 || pod_metrics_for_a1))
        cluster_item("{\"kind\":\"PodMetrics\",\"apiVersion\":\"metrics.k8s.io/v1beta1\","
                     "\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\"},\"containers\":"
                     "[{\"name\":\"c\",\"usage\":{\"cpu\":\"2500m\",\"memory\":\"3Gi\"}}]}",
                     pod);
    }
  }
  return cluster_end();
}

static const char *metrics_policy_top(const char *source, const char *top) {
  static char args[512];
  snprintf(args, sizeof args,
           "{thresholds: {cpu: 20, memory: 20, pods: 20}, targetThresholds: {cpu: 70, memory: "
           "80, pods: 50}, metricsUtilization: %s}",
           source);
  return plugin_policy(.plugin = "LowNodeUtilization", .point = "balance", .args = args, .top = top);
}

static const char *metrics_policy(const char *source) { return metrics_policy_top(source, NULL); }

static void test_metrics_api_classifies_and_accounts(void **state) {
  (void)state;
  sim_run r;
  run_usage(&r, metrics_policy("{source: KubernetesMetrics}"), metrics_cluster(true),
            (usage_input){NULL, true}, false);
  /* by requests every node is at 3%: by NodeMetrics a is at 90% */
  assert_string_equal(r.res.node_category[0], "overutilized");
  assert_string_equal(r.res.node_category[1], "underutilized");
  /* cap 70% of 10 cpu = 7000m: one pod using 2500m brings a to 6500m, below the cap */
  assert_evictions(&r, "ns/a0");
  assert_int_equal(sim_log_count(&r, "\"Updated node usage\" node=\"a\" CPU=\"6500m\""), 1);
  sim_run_free(&r);
  /* the deprecated metricsServer switch is the same source */
  run_usage(&r, metrics_policy("{metricsServer: true}"), metrics_cluster(true),
            (usage_input){NULL, true}, false);
  assert_evictions(&r, "ns/a0");
  sim_run_free(&r);
}

/* A pod without PodMetrics is skipped, as upstream skips a pod whose usage it cannot get. */
static void test_metrics_api_pod_without_metrics(void **state) {
  (void)state;
  sim_run r;
  /* a1 has no PodMetrics; a cap of 30% (3000m) wants more than one eviction */
  run_usage(&r,
            plugin_policy(.plugin = "LowNodeUtilization", .point = "balance",
                          .args = "{thresholds: {cpu: 20, memory: 20, pods: 20}, "
                                  "targetThresholds: {cpu: 30, memory: 80, pods: 50}, "
                                  "metricsUtilization: {source: KubernetesMetrics}}"),
            metrics_cluster(false), (usage_input){NULL, true}, false);
  assert_int_equal(sim_log_count(&r, "\"unable to get pod usage\" err=\"unable to get podmetrics "
                                     "for \\\"ns\\\"/\\\"a1\\\": podmetrics.metrics.k8s.io "
                                     "\\\"a1\\\" not found\""),
                   1);
  /* 9000m - 2500m - 2500m = 4000m, still above 3000m; a1 was skipped */
  assert_evictions(&r, "ns/a0", "ns/a2");
  sim_run_free(&r);
}

/* usageSamples (the default): a node whose sample is missing, NaN or older than maxSampleAge
 * is left out of the classification, neither source nor destination, and the rest of the
 * cluster is balanced; more than maxMissingFraction of them stop the plugin. */
static void test_untrusted_samples_leave_nodes_out(void **state) {
  (void)state;
  /* n0 hot, n1..n10 cold; n1 is the one left out */
#define COLD                                                                                       \
  S("n2", "0.1") "," S("n3", "0.1") "," S("n4", "0.1") "," S("n5", "0.1") "," S("n6", "0.1") ","   \
      S("n7", "0.1") "," S("n8", "0.1") "," S("n9", "0.1") "," S("n10", "0.1")
  struct {
    const char *n1, *why;
  } cases[] = {
      {NULL, "no sample for the node in the query's answer"},
      {S("n1", "NaN") ",", "the sample is NaN"},
  };
  for (size_t i = 0; i < 2; i++) {
    char body[4096];
    snprintf(body, sizeof body, VEC("%s%s,%s"), cases[i].n1 ? cases[i].n1 : "", S("n0", "0.9"), COLD);
    sim_run r;
    run_usage(&r, prom_policy("", NULL), nodes_cluster(11, 3), (usage_input){body, false}, false);
    assert_evictions(&r, "ns/p0-0");
    assert_int_equal(sim_log_count(&r, "\"Nodes left out of this cycle: their usage samples cannot be "
                                       "trusted\" plugin=\"LowNodeUtilization\" ExtensionPoint=\"Balance\" "
                                       "leftOut=1 nodes=11 first=\"n1\""),
                     1);
    char line[256];
    snprintf(line, sizeof line, "node=\"n1\" reason=\"%s\"", cases[i].why);
    assert_int_equal(sim_log_count(&r, line), 1);
    /* neither source nor destination: not classified at all */
    assert_int_equal(sim_log_count(&r, "category=\"underutilized\" node=\"n1\""), 0);
    sim_run_free(&r);
  }
  /* stale: n1's sample is 300 s old at the answer's time, maxSampleAge 2m; n2's 60 s is fine */
  const char *times = VEC("{\"metric\":{\"instance\":\"n0\"},\"value\":[1764000000.5,\"1764000000\"]},"
                          "{\"metric\":{\"instance\":\"n1\"},\"value\":[1764000000.5,\"1763999700\"]},"
                          "{\"metric\":{\"instance\":\"n2\"},\"value\":[1764000000.5,\"1763999940\"]}");
  sim_run r;
  run_usage(&r, prom_policy("", NULL), nodes_cluster(11, 3),
            (usage_input){VEC(S("n0", "0.9") "," S("n1", "0.1") "," COLD), false, times}, false);
  assert_evictions(&r, "ns/p0-0");
  assert_int_equal(sim_log_count(&r, "node=\"n1\" reason=\"the sample is 300s old, older than "
                                     "maxSampleAge 2m0s\""),
                   1);
  assert_int_equal(sim_log_count(&r, "leftOut=1 nodes=11"), 1);
  sim_run_free(&r);
  /* maxSampleAge "0": ages are not checked, n1 takes part */
  run_usage(&r, prom_policy("", "usageSamples: {maxSampleAge: \"0\"}\n"), nodes_cluster(11, 3),
            (usage_input){VEC(S("n0", "0.9") "," S("n1", "0.1") "," COLD), false, times}, false);
  assert_int_equal(sim_log_count(&r, "leftOut="), 0);
  assert_int_equal(sim_log_count(&r, "category=\"underutilized\" node=\"n1\""), 1);
  sim_run_free(&r);
  /* two of eleven is more than 10%; maxMissingFraction 0.2 lets it through */
  char body[4096];
  snprintf(body, sizeof body, VEC("%s,%s"), S("n0", "0.9"), COLD);
  run_usage(&r, prom_policy("", NULL), nodes_cluster(12, 3), (usage_input){body, false}, false);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "2 of 12 nodes have no usable usage sample, more than "
                                     "maxMissingFraction 0.1 allows (n1: no sample for the node in "
                                     "the query's answer); nothing is evicted"),
                   1);
  sim_run_free(&r);
  run_usage(&r, prom_policy("", "usageSamples: {maxMissingFraction: 0.2}\n"), nodes_cluster(12, 3),
            (usage_input){body, false}, false);
  assert_evictions(&r, "ns/p0-0");
  assert_int_equal(sim_log_count(&r, "leftOut=2 nodes=12"), 1);
  sim_run_free(&r);
}

/* usageSamples is decoded strictly: it is this project's field. */
static void test_usage_samples_policy_errors(void **state) {
  (void)state;
  struct {
    const char *top, *expect;
  } cases[] = {
      {"usageSamples: {maxSampleAge: soon}\n",
       "usageSamples.maxSampleAge: expected a non-negative duration such as \"2m\" (\"0\": ages not "
       "checked), got \"soon\""},
      {"usageSamples: {maxMissingFraction: 1.5}\n",
       "usageSamples.maxMissingFraction: expected a number from 0 to 1, got 1.5"},
      {"usageSamples: {skipNodesWithoutSamples: maybe}\n",
       "usageSamples.skipNodesWithoutSamples: expected true or false, got \"maybe\""},
      {"usageSamples: {maxSampleAges: 2m}\n",
       "usageSamples.maxSampleAges: unknown field (expected skipNodesWithoutSamples, maxSampleAge "
       "or maxMissingFraction)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dserr err;
    policy *p = policy_load_string("p.yaml", prom_policy("", cases[i].top), plugin_lookup, NULL, &err);
    assert_null(p);
    if (!strstr(err.msg, cases[i].expect))
      fail_msg("case %zu:\n  %s\nlacks\n  %s", i, err.msg, cases[i].expect);
  }
}

static void test_metrics_api_errors(void **state) {
  (void)state;
  assert_usage_error((usage_input){NULL, false}, metrics_policy("{source: KubernetesMetrics}"),
                     "error initializing usage client: metrics client not initialized");
  /* nodes_cluster has no NodeMetrics: upstream's rule, then the default's */
  assert_usage_error((usage_input){NULL, true},
                     metrics_policy_top("{source: KubernetesMetrics}", UPSTREAM_SAMPLES),
                     "error getting node usage: unable to find node \\\"n0\\\" in the collected "
                     "metrics");
  assert_usage_error((usage_input){NULL, true}, metrics_policy("{source: KubernetesMetrics}"),
                     "error getting node usage: 3 of 3 nodes have no usable usage sample, more "
                     "than maxMissingFraction 0.1 allows (n0: no NodeMetrics for the node); nothing "
                     "is evicted");
  assert_usage_error((usage_input){NULL, false}, metrics_policy("{}"),
                     "error initializing usage client: metrics source is empty");
  assert_usage_error((usage_input){NULL, false}, metrics_policy("{source: Graphite}"),
                     "error initializing usage client: unrecognized metrics source");
}

static void test_metrics_api_other_resource(void **state) {
  (void)state;
  sim_run r;
  run_usage(&r,
            plugin_policy(.plugin = "LowNodeUtilization", .point = "balance",
                          .args = "{thresholds: {nvidia.com/gpu: 20}, targetThresholds: "
                                  "{nvidia.com/gpu: 50}, metricsUtilization: {source: "
                                  "KubernetesMetrics}}"),
            metrics_cluster(true), (usage_input){NULL, true}, false);
  assert_int_equal(sim_log_count(&r, "error getting node usage: unable to find "
                                     "\\\"nvidia.com/gpu\\\" resource for collected \\\"a\\\" "
                                     "node metric"),
                   1);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vector_samples),
      cmocka_unit_test(test_empty_vector),
      cmocka_unit_test(test_error_status),
      cmocka_unit_test(test_result_types),
      cmocka_unit_test(test_missing_instance),
      cmocka_unit_test(test_value_outside_0_1),
      cmocka_unit_test(test_untrusted_samples_leave_nodes_out),
      cmocka_unit_test(test_usage_samples_policy_errors),
      cmocka_unit_test(test_first_failing_sample_decides),
      cmocka_unit_test(test_malformed_responses),
      cmocka_unit_test(test_go_float_formatting),
      cmocka_unit_test(test_metrics_files),
      cmocka_unit_test(test_usage_needs),
      cmocka_unit_test(test_reads_pod_conditions),
      cmocka_unit_test(test_prometheus_one_pod_per_node),
      cmocka_unit_test(test_prometheus_node_limit),
      cmocka_unit_test(test_prometheus_total_limit),
      cmocka_unit_test(test_prometheus_errors),
      cmocka_unit_test(test_upstream_prometheus_vectors),
      cmocka_unit_test(test_metrics_api_classifies_and_accounts),
      cmocka_unit_test(test_metrics_api_pod_without_metrics),
      cmocka_unit_test(test_metrics_api_errors),
      cmocka_unit_test(test_metrics_api_other_resource),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
