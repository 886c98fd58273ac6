/* test_kubevirtmigrationaware.c - the OpenShift KubeVirt profile's evictor plugin: a VM whose
 * migration runs is filtered, one that migrated recently waits for its cooldown (the longer of
 * migrationCooldown and the migration's duration, doubled per further completion within the
 * window, capped), lookups that fail let the pod pass, the blocks and cooldowns reach /metrics,
 * and the args are validated with the plugin's own texts. VMSafety is told to stand aside here so only this plugin speaks. */
#include "../../src/obs/metrics.h"
#include "support/fixtures.h"
#include "support/support.h"

#include <stdio.h>
#include <string.h>

#define NOW "2026-01-01T12:00:00Z"

static sim_run R;

static int teardown(void **state) {
  (void)state;
  sim_run_free(&R);
  return 0;
}

static void begin(void) {
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
}

/* VM `name` on n1 with its migrationState (JSON members, may be "") */
static void vm(const char *name, const char *migration_state) {
  char pod[128], ann[128];
  snprintf(pod, sizeof pod, "virt-launcher-%s", name);
  snprintf(ann, sizeof ann,
           "kubevirt.io/domain=%s,descheduler.alpha.kubernetes.io/request-evict-only=", name);
  cluster_pod(pod, "n1", .ns = "vms", .labels = "kubevirt.io=virt-launcher", .annotations = ann);
  cluster_item("{\"kind\":\"VirtualMachineInstance\",\"apiVersion\":\"kubevirt.io/v1\","
               "\"metadata\":{\"name\":\"%s\",\"namespace\":\"vms\",\"uid\":\"uid-%s\"},"
               "\"spec\":{\"evictionStrategy\":\"LiveMigrate\"},\"status\":{\"nodeName\":\"n1\","
               "\"phase\":\"Running\",\"conditions\":[{\"type\":\"LiveMigratable\",\"status\":"
               "\"True\"}],\"migrationState\":{%s}}}",
               name, name, migration_state);
}

static void succeeded_vmim(const char *name, const char *vmi, const char *end) {
  cluster_item("{\"kind\":\"VirtualMachineInstanceMigration\",\"apiVersion\":\"kubevirt.io/v1\","
               "\"metadata\":{\"name\":\"%s\",\"namespace\":\"vms\"},\"spec\":{\"vmiName\":\"%s\"},"
               "\"status\":{\"phase\":\"Succeeded\",\"migrationState\":{\"endTimestamp\":\"%s\"}}}",
               name, vmi, end);
}

/* A profile with KubevirtMigrationAware at filter and preevictionfilter, PodLifeTime asking
 * for every pod */
static const char *kma_policy(const char *args) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n"
           "  pluginConfig:\n  - name: DefaultEvictor\n    args: {evictLocalStoragePods: true}\n"
           "  - name: VMSafety\n    args: {cooldown: 0s, migrationLimits: false, skipMigrating: false}\n"
           "  - name: KubevirtMigrationAware\n    args: %s\n"
           "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 0}\n"
           "  plugins:\n    filter: {enabled: [DefaultEvictor, KubevirtMigrationAware]}\n"
           "    preevictionfilter: {enabled: [KubevirtMigrationAware]}\n"
           "    deschedule: {enabled: [PodLifeTime]}\n",
           args ? args : "{}");
  return buf;
}

static const char *plan(void) {
  static char out[1024];
  size_t k = 0;
  out[0] = 0;
  for (size_t i = 0; i < R.res.nevictions; i++) {
    char ref[512];
    k += (size_t)snprintf(out + k, sizeof out - k, "%s%s", k ? " " : "",
                          pod_ref(R.res.evictions[i].pod, ref, sizeof ref));
  }
  return out;
}

static void assert_logged(const char *needle) {
  if (sim_log_count(&R, needle) == 0)
    fail_msg("log lacks\n  %s\nlog:\n%s", needle, R.logs ? R.logs : "");
}

static void test_migration_in_progress_is_filtered(void **state) {
  (void)state;
  begin();
  vm("moving", "\"startTimestamp\":\"2026-01-01T11:59:00Z\"");
  vm("idle", "");
  sim_rerun(&R, kma_policy(NULL), cluster_end(), true, NOW, 3);
  assert_string_equal(plan(), "vms/virt-launcher-idle");
  assert_logged("\"VMI migration in progress, blocking eviction\" plugin=\"KubevirtMigrationAware\" "
                "pod=\"vms/virt-launcher-moving\" vmi=\"moving\" node=\"n1\"");
}

static void test_cooldown(void **state) {
  (void)state;
  begin();
  /* ended 10 minutes ago: within the default 15m */
  vm("recent", "\"startTimestamp\":\"2026-01-01T11:49:00Z\",\"endTimestamp\":\"2026-01-01T11:50:00Z\"");
  /* ended 20 minutes ago, but it took 30 minutes: the cooldown is its duration */
  vm("slow", "\"startTimestamp\":\"2026-01-01T11:10:00Z\",\"endTimestamp\":\"2026-01-01T11:40:00Z\"");
  /* ended 20 minutes ago after a minute: free */
  vm("done", "\"startTimestamp\":\"2026-01-01T11:39:00Z\",\"endTimestamp\":\"2026-01-01T11:40:00Z\"");
  sim_rerun(&R, kma_policy(NULL), cluster_end(), true, NOW, 3);
  assert_string_equal(plan(), "vms/virt-launcher-done");
  assert_logged("\"VMI in migration cooldown, deferring eviction\" plugin=\"KubevirtMigrationAware\" "
                "pod=\"vms/virt-launcher-recent\" vmi=\"recent\" node=\"n1\" migrationCount=1 "
                "elapsed=\"10m0s\" effectiveCooldown=\"15m0s\" remaining=\"5m0s\"");
  assert_logged("pod=\"vms/virt-launcher-slow\" vmi=\"slow\" node=\"n1\" migrationCount=1 "
                "elapsed=\"20m0s\" effectiveCooldown=\"30m0s\" remaining=\"10m0s\"");
}

/* Completions counted from Succeeded VMIMs in the window: each doubles the cooldown */
static void test_repeated_migrations_double(void **state) {
  (void)state;
  begin();
  vm("flappy", "\"startTimestamp\":\"2026-01-01T11:29:00Z\",\"endTimestamp\":\"2026-01-01T11:30:00Z\"");
  succeeded_vmim("m1", "flappy", "2026-01-01T11:30:00Z"); /* the VMI's own last one */
  succeeded_vmim("m2", "flappy", "2026-01-01T08:00:00Z");
  succeeded_vmim("m3", "flappy", "2025-12-31T20:00:00Z");
  succeeded_vmim("old", "flappy", "2025-12-29T20:00:00Z"); /* outside 48h */
  sim_rerun(&R, kma_policy(NULL), cluster_end(), true, NOW, 3);
  assert_string_equal(plan(), "");
  assert_logged("migrationCount=3 elapsed=\"30m0s\" effectiveCooldown=\"1h0m0s\" remaining=\"30m0s\"");
  /* a cap below: 45m */
  sim_rerun(&R, kma_policy("{migrationCooldown: 15m, maxMigrationCooldown: 45m}"), cluster_end(),
            true, NOW, 3);
  assert_logged("migrationCount=3 elapsed=\"30m0s\" effectiveCooldown=\"45m0s\" remaining=\"15m0s\"");
  /* a short window sees only the last one: 15m, over */
  sim_rerun(&R, kma_policy("{migrationHistoryWindow: 1h}"), cluster_end(), true, NOW, 3);
  assert_string_equal(plan(), "vms/virt-launcher-flappy");
}

/* A launcher whose VMI is not in the model passes (every lookup failure does) */
static void test_lookup_failure_passes(void **state) {
  (void)state;
  begin();
  cluster_pod("virt-launcher-ghost", "n1", .ns = "vms", .labels = "kubevirt.io=virt-launcher",
              .annotations = "kubevirt.io/domain=ghost,"
                             "descheduler.alpha.kubernetes.io/request-evict-only=");
  sim_rerun(&R, kma_policy(NULL), cluster_end(), true, NOW, 3);
  assert_string_equal(plan(), "vms/virt-launcher-ghost");
}

/* The plugin's metrics: every block counted by reason, node and namespace, and each cooldown
 * that deferred a pod in the histogram (buckets 15m, 30m, 1h, 2h, 4h, 6h) */
static void assert_metric(const char *text, const char *line) {
  char want[512];
  snprintf(want, sizeof want, "\n%s\n", line);
  if (!strstr(text, want))
    fail_msg("/metrics lacks\n  %s\ngot:\n%s", line, text);
}

static void test_metrics(void **state) {
  (void)state;
  metrics_enable("test");
  metrics_reset();
  strbuf out = {0};
  metrics_render(&out);
  /* no block counted yet: the counter family is not printed (an empty vector, as
   * client_golang leaves it out) */
  assert_null(strstr(sb_str(&out), "descheduler_kubevirt_eviction_blocks_total"));
  sb_free(&out);

  begin();
  vm("moving", "\"startTimestamp\":\"2026-01-01T11:59:00Z\"");
  /* 10 of 15 minutes: deferred with 900 s */
  vm("recent", "\"startTimestamp\":\"2026-01-01T11:49:00Z\",\"endTimestamp\":\"2026-01-01T11:50:00Z\"");
  /* three completions in the window: 15m doubled twice, 3600 s */
  vm("flappy", "\"startTimestamp\":\"2026-01-01T11:29:00Z\",\"endTimestamp\":\"2026-01-01T11:30:00Z\"");
  succeeded_vmim("m1", "flappy", "2026-01-01T11:30:00Z");
  succeeded_vmim("m2", "flappy", "2026-01-01T08:00:00Z");
  succeeded_vmim("m3", "flappy", "2025-12-31T20:00:00Z");
  vm("idle", "");
  sim_rerun(&R, kma_policy(NULL), cluster_end(), true, NOW, 3);
  assert_string_equal(plan(), "vms/virt-launcher-idle");
  metrics_render(&out);
  const char *t = sb_str(&out);
  assert_metric(t, "# TYPE descheduler_kubevirt_eviction_blocks_total counter");
  assert_metric(t, "descheduler_kubevirt_eviction_blocks_total{namespace=\"vms\",node=\"n1\","
                   "reason=\"migration_in_progress\"} 1");
  assert_metric(t, "descheduler_kubevirt_eviction_blocks_total{namespace=\"vms\",node=\"n1\","
                   "reason=\"cooldown\"} 2");
  assert_metric(t, "# TYPE descheduler_kubevirt_effective_cooldown_seconds histogram");
  assert_metric(t, "descheduler_kubevirt_effective_cooldown_seconds_bucket{le=\"900\"} 1");
  assert_metric(t, "descheduler_kubevirt_effective_cooldown_seconds_bucket{le=\"1800\"} 1");
  assert_metric(t, "descheduler_kubevirt_effective_cooldown_seconds_bucket{le=\"3600\"} 2");
  assert_metric(t, "descheduler_kubevirt_effective_cooldown_seconds_bucket{le=\"21600\"} 2");
  assert_metric(t, "descheduler_kubevirt_effective_cooldown_seconds_bucket{le=\"+Inf\"} 2");
  assert_metric(t, "descheduler_kubevirt_effective_cooldown_seconds_sum 4500");
  assert_metric(t, "descheduler_kubevirt_effective_cooldown_seconds_count 2");
  sb_free(&out);
  metrics_reset();
}

static void test_args(void **state) {
  (void)state;
  assert_policy_error(kma_policy("{migrationCooldown: -5m}"),
                      "migrationCooldown must be non-negative, got -5m0s");
  assert_policy_error(kma_policy("{maxMigrationCooldown: -1h}"),
                      "maxMigrationCooldown must be non-negative, got -1h0m0s");
  assert_policy_error(kma_policy("{migrationCooldown: 2h, maxMigrationCooldown: 1h}"),
                      "maxMigrationCooldown (1h0m0s) must be >= migrationCooldown (2h0m0s)");
  assert_policy_error(kma_policy("{migrationHistoryWindow: -1s}"),
                      "migrationHistoryWindow must be non-negative, got -1s");
  assert_policy_error(kma_policy("{migrationCooldwn: 1h}"), "unknown field \"migrationCooldwn\"");
  /* the operator renders these three, as Go duration strings */
  dserr e;
  policy *p = load_policy_text(kma_policy("{migrationCooldown: 15m0s, maxMigrationCooldown: "
                                          "6h0m0s, migrationHistoryWindow: 48h0m0s}"),
                               &e);
  if (!p)
    fail_msg("%s", e.msg);
  policy_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_migration_in_progress_is_filtered, teardown),
      cmocka_unit_test_teardown(test_cooldown, teardown),
      cmocka_unit_test_teardown(test_repeated_migrations_double, teardown),
      cmocka_unit_test_teardown(test_lookup_failure_passes, teardown),
      cmocka_unit_test_teardown(test_metrics, teardown),
      cmocka_unit_test(test_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
