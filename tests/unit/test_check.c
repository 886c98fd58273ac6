/* test_check.c - `descheduler check`'s evaluation (runbook/check.c), driven by inputs built
 * from text: the policy ConfigMap, the CronJob or Deployment, the KubeVirt and HyperConverged
 * CRs, and a cluster (nodes, virt-launcher pods, VMIs) as the descheduler reads it.
 *
 * The runbook's setup passes; each trap names its item: a missing feature gate, a policy that
 * does not load (or uses evictableNamespaces.include), a VMI that recorded strategy None while
 * the cluster default is LiveMigrate, the PodsWithPVC and local-storage protections on a
 * VM-only policy, a launcher the policy would evict whose VM would stop. */
#include "support/fixtures.h"
#include "support/support.h"

#include "../../src/runbook/check.h"
#include "../../src/obs/log.h"
#include "../../src/plugins/vmsafety.h"

#include <stdio.h>
#include <string.h>

/* ---------- inputs ---------- */

#define RUNBOOK_POLICY                                                                             \
  "apiVersion: descheduler/v1alpha2\n"                                                             \
  "kind: DeschedulerPolicy\n"                                                                      \
  "maxNoOfPodsToEvictTotal: 1\n"                                                                   \
  "profiles:\n"                                                                                    \
  "- name: vm-rebalance\n"                                                                         \
  "  pluginConfig:\n"                                                                              \
  "  - name: DefaultEvictor\n"                                                                     \
  "    args:\n"                                                                                    \
  "      evictLocalStoragePods: true\n"                                                            \
  "      labelSelector: {matchLabels: {kubevirt.io: virt-launcher}}\n"                             \
  "  - name: LowNodeUtilization\n"                                                                 \
  "    args:\n"                                                                                    \
  "      thresholds: {cpu: 20, memory: 20, pods: 20}\n"                                            \
  "      targetThresholds: {cpu: 50, memory: 50, pods: 50}\n"                                      \
  "  plugins:\n"                                                                                   \
  "    balance:\n"                                                                                 \
  "      enabled: [LowNodeUtilization]\n"

#define RUNBOOK_ARGS                                                                               \
  "\"--policy-config-file=/policy-dir/policy.yaml\","                                              \
  "\"--feature-gates=EvictionsInBackground=true\",\"--v=3\""

static doc_node *json_doc(arena *a, const char *text) {
  doc_node *root;
  dserr err;
  if (doc_parse_json(a, "test", text, strlen(text), &root, &err) < 0)
    fail_msg("bad test JSON: %s", err.msg);
  return root;
}

/* the policy ConfigMap, its text under key */
static doc_node *configmap(arena *a, const char *key, const char *policy) {
  strbuf sb = {0};
  sb_append(&sb, "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"descheduler\",\"namespace\":"
                 "\"descheduler\",\"labels\":{\"app.kubernetes.io/name\":\"descheduler\"}},"
                 "\"data\":{");
  sb_append_json_str(&sb, key);
  sb_appendc(&sb, ':');
  sb_append_json_str(&sb, policy);
  sb_append(&sb, "}}");
  doc_node *d = json_doc(a, sb_str(&sb));
  sb_free(&sb);
  return d;
}

/* the runbook's CronJob with these args and volume (NULL: the runbook's) */
static doc_node *cronjob(arena *a, const char *args, const char *volume, const char *extra_spec) {
  char buf[4096];
  snprintf(buf, sizeof buf,
           "{\"kind\":\"CronJob\",\"metadata\":{\"name\":\"descheduler\",\"namespace\":"
           "\"descheduler\"},\"spec\":{%s\"schedule\":\"*/30 * * * *\",\"jobTemplate\":{\"spec\":"
           "{\"template\":{\"spec\":{\"containers\":[{\"name\":\"descheduler\",\"command\":["
           "\"/bin/descheduler\"],\"args\":[%s],\"volumeMounts\":[{\"name\":\"policy-volume\","
           "\"mountPath\":\"/policy-dir\"}]}],\"volumes\":[%s]}}}}}}",
           extra_spec ? extra_spec : "", args,
           volume ? volume
                  : "{\"name\":\"policy-volume\",\"configMap\":{\"name\":\"descheduler\"}}");
  return json_doc(a, buf);
}

#define KUBEVIRT_CR(strategy)                                                                      \
  "{\"kind\":\"KubeVirt\",\"apiVersion\":\"kubevirt.io/v1\",\"metadata\":{\"name\":\"kubevirt\","  \
  "\"namespace\":\"kubevirt\"},\"spec\":{\"configuration\":{" strategy                             \
  "\"migrations\":{\"parallelMigrationsPerCluster\":5}}},\"status\":{\"observedKubeVirtVersion\":" \
  "\"v1.6.0\"}}"

typedef struct {
  const char *name, *node, *strategy, *migratable;
  bool pvc;
} vm_opts;

/* a VMI and its launcher (emptyDir volumes, as KubeVirt renders it; a PVC disk when asked) */
static void add_vm(vm_opts v) {
  char spec[512], annotations[256];
  snprintf(annotations, sizeof annotations,
           "kubevirt.io/domain=%s,descheduler.alpha.kubernetes.io/request-evict-only=", v.name);
  snprintf(spec, sizeof spec, "\"volumes\":[{\"name\":\"private\",\"emptyDir\":{}}%s]",
           v.pvc ? ",{\"name\":\"disk\",\"persistentVolumeClaim\":{\"claimName\":\"disk\"}}" : "");
  char pod[128], owner[128];
  snprintf(pod, sizeof pod, "virt-launcher-%s-abcde", v.name);
  snprintf(owner, sizeof owner, "VirtualMachineInstance/%s", v.name);
  cluster_pod(pod, v.node, .ns = "vms", .owner = owner, .labels = "kubevirt.io=virt-launcher",
              .annotations = annotations, .spec = spec, .cpu = "2", .memory = "2Gi");
  char strategy[96] = "";
  if (v.strategy)
    snprintf(strategy, sizeof strategy, "\"evictionStrategy\":\"%s\"", v.strategy);
  cluster_item("{\"kind\":\"VirtualMachineInstance\",\"apiVersion\":\"kubevirt.io/v1\","
               "\"metadata\":{\"name\":\"%s\",\"namespace\":\"vms\",\"uid\":\"uid-%s\"},"
               "\"spec\":{%s},\"status\":{\"nodeName\":\"%s\",\"phase\":\"Running\","
               "\"conditions\":[{\"type\":\"LiveMigratable\",\"status\":\"%s\"}]}}",
               v.name, v.name, strategy, v.node, v.migratable ? v.migratable : "True");
}

/* two workers: three VMs crowded on w1 (one of them `first`), w2 empty */
static const char *cluster(const char *kubevirt_cr, vm_opts first, bool all_pvc) {
  cluster_begin();
  cluster_capacity("8", "16Gi", "110");
  cluster_node("w1");
  cluster_node("w2");
  cluster_item("%s", kubevirt_cr);
  cluster_item("{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
               "\"disk\",\"namespace\":\"vms\"},\"spec\":{\"storageClassName\":\"rbd\"}}");
  add_vm(first);
  add_vm((vm_opts){"vm-b", "w1", "LiveMigrate", NULL, all_pvc});
  add_vm((vm_opts){"vm-c", "w1", "LiveMigrate", NULL, all_pvc});
  return cluster_end();
}

typedef struct {
  const char *policy;    /* NULL: the runbook's */
  const char *key;       /* NULL: policy.yaml */
  const char *args;      /* NULL: the runbook's */
  const char *volume;    /* NULL: the runbook's */
  const char *cron_spec; /* extra CronJob spec members */
  const char *kubevirt;  /* NULL: KubeVirt CR with LiveMigrate */
  const char *hco;       /* NULL: none */
  vm_opts vm;            /* the first VM (name NULL: vm-a, LiveMigrate) */
  bool all_pvc;
  bool no_workload;
  bool unlabelled; /* the CronJob is found through the ConfigMap it mounts */
  bool no_configmap;
  const char *kubedescheduler;
} case_opts;

static check_report *R;
static check_inputs IN;

static const check_report *evaluate_(case_opts o) {
  check_inputs_free(&IN);
  check_report_free(R);
  R = check_report_new("test");
  memset(&IN, 0, sizeof IN);
  IN.mem = arena_new(64 * 1024);
  IN.now = 1800000000;
  arena *a = IN.mem;
  IN.configmaps_read = IN.workloads_read = true;
  IN.workloads_labelled = !o.unlabelled;
  IN.configmaps = ARENA_NEWN(a, doc_node *, 1);
  if (!o.no_configmap)
    IN.configmaps[IN.nconfigmaps++] =
        configmap(a, o.key ? o.key : "policy.yaml", o.policy ? o.policy : RUNBOOK_POLICY);
  IN.workloads = ARENA_NEWN(a, doc_node *, 1);
  if (!o.no_workload)
    IN.workloads[IN.nworkloads++] =
        cronjob(a, o.args ? o.args : RUNBOOK_ARGS, o.volume, o.cron_spec);
  const char *kv = o.kubevirt ? o.kubevirt : KUBEVIRT_CR("\"evictionStrategy\":\"LiveMigrate\",");
  IN.kubevirt_served = true;
  IN.kubevirt = json_doc(a, kv);
  if (o.hco) {
    IN.hco_served = true;
    IN.hco = json_doc(a, o.hco);
  }
  if (o.kubedescheduler) {
    IN.kubedescheduler_crd = true;
    IN.kubedeschedulers = ARENA_NEWN(a, doc_node *, 1);
    IN.kubedeschedulers[IN.nkubedeschedulers++] = json_doc(a, o.kubedescheduler);
  }
  vm_opts first = o.vm.name ? o.vm : (vm_opts){"vm-a", "w1", "LiveMigrate", NULL, false};
  first.pvc |= o.all_pvc;
  dserr err;
  IN.m = load_model_text(cluster(kv, first, o.all_pvc), &err);
  if (!IN.m)
    fail_msg("cluster: %s", err.msg);
  IN.m->vmis_complete = true;
  /* the simulated cycle's log is not what these tests read */
  FILE *devnull = fopen("/dev/null", "w");
  log_set_stream(devnull);
  log_set_verbosity(0);
  check_evaluate(&IN, R);
  log_set_stream(NULL);
  fclose(devnull);
  return R;
}
#define evaluate(...) evaluate_((case_opts){__VA_ARGS__})

static int teardown(void **state) {
  (void)state;
  check_inputs_free(&IN);
  check_report_free(R);
  R = NULL;
  return 0;
}

static void dump(void) {
  strbuf sb = {0};
  check_render_text(R, &sb);
  print_message("%s", sb_str(&sb));
  sb_free(&sb);
}

/* the row of item (naming object when given) has status st and its detail contains text */
static void assert_row(const char *item, const char *object, check_status st, const char *text) {
  const check_row *row = check_find(R, item, object);
  if (!row) {
    dump();
    fail_msg("no row %s %s", item, object ? object : "");
  }
  if (row->status != st || (text && !strstr(row->detail, text))) {
    dump();
    fail_msg("row %s %s: %s \"%s\", expected %s containing \"%s\"", item, row->object,
             check_status_name(row->status), row->detail, check_status_name(st), text ? text : "");
  }
}

static void assert_no_row(const char *item) {
  if (check_find(R, item, NULL)) {
    dump();
    fail_msg("unexpected row %s", item);
  }
}

/* ---------- the runbook's setup ---------- */

static void test_runbook_setup_passes(void **state) {
  (void)state;
  evaluate();
  assert_int_equal(check_count(R, CHECK_FAIL), 0);
  assert_int_equal(check_count(R, CHECK_WARN), 0);
  assert_row("configmap", "ConfigMap descheduler/descheduler", CHECK_PASS, "key \"policy.yaml\"");
  assert_row("policy", NULL, CHECK_PASS, "1 profile: vm-rebalance");
  assert_row("workload", "CronJob descheduler/descheduler", CHECK_PASS,
             "container \"descheduler\"");
  assert_row("policy-file", NULL, CHECK_PASS,
             "--policy-config-file=/policy-dir/policy.yaml is key \"policy.yaml\" of ConfigMap "
             "descheduler (mounted at /policy-dir)");
  assert_row("feature-gate", NULL, CHECK_PASS, "EvictionsInBackground=true");
  assert_row("verbosity", NULL, CHECK_PASS, "--v=3");
  assert_row("kubevirt-strategy", "KubeVirt kubevirt/kubevirt", CHECK_PASS, "LiveMigrate");
  assert_row("kubevirt-limits", NULL, CHECK_PASS,
             "parallelMigrationsPerCluster 5, parallelOutboundMigrationsPerNode 2 (default)");
  assert_row("vmis", NULL, CHECK_PASS, "3 running VMIs");
  assert_row("local-storage", "profile vm-rebalance", CHECK_PASS, NULL);
  assert_row("pvc-protection", "profile vm-rebalance", CHECK_PASS, NULL);
  /* three 2-cpu VMs on w1 of 8 cpu (75%), none on w2: one live migration */
  assert_row("plan", NULL, CHECK_PASS,
             "would request 1 eviction: 1 live migration, 0 external "
             "drains, 0 VM stops");
  assert_no_row("plan-vm-stops");
  assert_no_row("dry-run");
}

static void test_render(void **state) {
  (void)state;
  evaluate(.args = "\"--policy-config-file=/policy-dir/policy.yaml\"");
  strbuf sb = {0};
  check_render_json(R, &sb);
  assert_non_null(strstr(sb_str(&sb), "{\"versions\":{\"descheduler\":\"test\""));
  assert_non_null(strstr(sb_str(&sb), "{\"item\":\"feature-gate\",\"status\":\"fail\","
                                      "\"object\":\"CronJob descheduler/descheduler\""));
  assert_non_null(strstr(sb_str(&sb), "\"summary\":{\"pass\":"));
  sb_clear(&sb);
  check_render_text(R, &sb);
  assert_non_null(
      strstr(sb_str(&sb), "\nfeature-gate       FAIL    CronJob descheduler/descheduler"));
  assert_non_null(strstr(sb_str(&sb), "fix the failed items"));
  sb_free(&sb);
}

/* the version line tells a CR that reports no version from one that is missing */
static void test_version_line(void **state) {
  (void)state;
  evaluate();
  strbuf sb = {0};
  check_render_text(R, &sb);
  assert_non_null(strstr(sb_str(&sb), "; KubeVirt not found; HCO not found\n"));
  R->kubevirt_present = R->hco_present = true;
  sb_clear(&sb);
  check_render_text(R, &sb);
  assert_non_null(strstr(sb_str(&sb), "; KubeVirt present (its status has no observedKubeVirtVersion); "
                                      "HCO present (its status.versions has no operator version)\n"));
  R->kubevirt_version = "v1.6.2";
  sb_clear(&sb);
  check_render_text(R, &sb);
  assert_non_null(strstr(sb_str(&sb), "; KubeVirt v1.6.2; HCO present"));
  sb_free(&sb);
}

/* ---------- the workload's flags ---------- */

static void test_feature_gate(void **state) {
  (void)state;
  evaluate(.args = "\"--policy-config-file=/policy-dir/policy.yaml\",\"--v=3\"");
  assert_row("feature-gate", "CronJob descheduler/descheduler", CHECK_FAIL,
             "no --feature-gates=EvictionsInBackground=true");
  /* without the gate KubeVirt still migrates the VMs the plan picks */
  assert_row("plan", NULL, CHECK_PASS,
             "the workload lacks EvictionsInBackground, so it would count each migration as a "
             "failed eviction) would request 1 eviction: 1 live migration");
  evaluate(.args = "\"--policy-config-file=/policy-dir/policy.yaml\",\"--feature-gates\","
                   "\"EvictionsInBackground=false\",\"--v\",\"3\"");
  assert_row("feature-gate", NULL, CHECK_FAIL, "leaves EvictionsInBackground off");
  assert_row("verbosity", NULL, CHECK_PASS, "--v=3");
  evaluate(.args = "\"--policy-config-file=/policy-dir/policy.yaml\","
                   "\"--feature_gates=AllAlpha=true\",\"-v\",\"4\"");
  assert_row("feature-gate", NULL, CHECK_PASS, "AllAlpha=true");
  assert_row("verbosity", NULL, CHECK_PASS, "--v=4");
  evaluate(.args = "\"--policy-config-file=/policy-dir/policy.yaml\","
                   "\"--feature-gates=EvictionsInBackground=yes\",\"-v5\"");
  assert_row("feature-gate", NULL, CHECK_FAIL, "the descheduler refuses to start: invalid value");
  assert_row("verbosity", NULL, CHECK_PASS, "--v=5");
}

static void test_verbosity_dry_run_interval_suspend(void **state) {
  (void)state;
  evaluate(.args = "\"--policy-config-file=/policy-dir/policy.yaml\","
                   "\"--feature-gates=EvictionsInBackground=true\",\"--dry-run\","
                   "\"--descheduling-interval=5m\"",
           .cron_spec = "\"suspend\":true,");
  assert_row("verbosity", NULL, CHECK_WARN, "--v=0: the runbook's log lines");
  assert_row("dry-run", NULL, CHECK_WARN, "nothing is evicted");
  assert_row("interval", NULL, CHECK_WARN, "--descheduling-interval=5m in a CronJob");
  assert_row("suspended", NULL, CHECK_WARN, "descheduler resume");
  assert_int_equal(check_count(R, CHECK_FAIL), 0);
  evaluate(.args = RUNBOOK_ARGS ",\"--v=x\"");
  assert_row("verbosity", NULL, CHECK_FAIL, "is not a number");
}

static void test_policy_file_mount(void **state) {
  (void)state;
  evaluate(.args = "\"--policy-config-file=/etc/policy.yaml\","
                   "\"--feature-gates=EvictionsInBackground=true\",\"--v=3\"");
  assert_row("policy-file", NULL, CHECK_FAIL,
             "no volumeMount of container \"descheduler\" holds "
             "/etc/policy.yaml");
  evaluate(.args = "\"--feature-gates=EvictionsInBackground=true\",\"--v=3\"");
  assert_row("policy-file", NULL, CHECK_FAIL, "passes no --policy-config-file");
  /* items map the key to another file name */
  evaluate(.key = "rebalance.yaml",
           .args = "\"--policy-config-file\",\"/policy-dir/p.yaml\","
                   "\"--feature-gates=EvictionsInBackground=true\",\"--v=3\"",
           .volume = "{\"name\":\"policy-volume\",\"configMap\":{\"name\":\"descheduler\","
                     "\"items\":[{\"key\":\"rebalance.yaml\",\"path\":\"p.yaml\"}]}}");
  assert_row("policy-file", NULL, CHECK_PASS, "is key \"rebalance.yaml\" of ConfigMap descheduler");
  assert_row("configmap", NULL, CHECK_PASS, "key \"rebalance.yaml\"");
  assert_row("policy", NULL, CHECK_PASS, NULL);
  /* the file is a key the ConfigMap lacks */
  evaluate(.key = "other.yaml");
  assert_row("policy-file", NULL, CHECK_FAIL, "which has no such key");
  assert_row("configmap", NULL, CHECK_FAIL, "no key \"policy.yaml\" (keys: other.yaml)");
  /* mounted from something else */
  evaluate(.volume = "{\"name\":\"policy-volume\",\"emptyDir\":{}}");
  assert_row("policy-file", NULL, CHECK_FAIL, "which is not a ConfigMap volume");
  /* another ConfigMap than the labelled one */
  evaluate(.volume = "{\"name\":\"policy-volume\",\"configMap\":{\"name\":\"other\"}}");
  assert_row("policy-file", NULL, CHECK_WARN, "reads ConfigMap other, which is not labelled");
}

static void test_workload_found_or_not(void **state) {
  (void)state;
  evaluate(.no_workload = true);
  assert_row("workload", NULL, CHECK_FAIL, "no CronJob or Deployment labelled");
  evaluate(.unlabelled = true);
  assert_row("workload", NULL, CHECK_PASS, "mounts the policy ConfigMap (not labelled)");
  evaluate(.unlabelled = true, .volume = "{\"name\":\"policy-volume\",\"configMap\":{\"name\":"
                                         "\"other\"}}");
  assert_row("workload", NULL, CHECK_FAIL, "none mounts the policy ConfigMap");
}

/* ---------- the policy ---------- */

static void test_policy_does_not_load(void **state) {
  (void)state;
  evaluate(.policy = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: [\n");
  assert_row("policy", "ConfigMap descheduler/descheduler", CHECK_FAIL,
             "does not load as a DeschedulerPolicy, so every run would fail: failed decoding "
             "descheduler's policy config \"ConfigMap descheduler/descheduler key policy.yaml\"");
  assert_row("policy", NULL, CHECK_FAIL, "invalid YAML at line 4");
  assert_row("plan", NULL, CHECK_WARN, "not run: no policy loads");
  evaluate(.policy = "apiVersion: descheduler/v1alpha2\n"
                     "kind: DeschedulerPolicy\n"
                     "profiles:\n"
                     "- name: p\n"
                     "  pluginConfig:\n"
                     "  - name: DefaultEvictor\n"
                     "    args: {evictLocalStoragePods: true}\n"
                     "  - name: LowNodeUtilization\n"
                     "    args:\n"
                     "      thresholds: {cpu: 20}\n"
                     "      targetThresholds: {cpu: 50}\n"
                     "      evictableNamespaces: {include: [vms]}\n"
                     "  plugins: {balance: {enabled: [LowNodeUtilization]}}\n");
  assert_row("policy", NULL, CHECK_FAIL,
             "only Exclude namespaces can be set, inclusion is not "
             "supported");
  evaluate(.policy = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n");
  assert_row("policy", NULL, CHECK_FAIL, "has no profiles");
}

/* A misspelt field: upstream drops it, and so does the descheduler (a warning in its log). The
 * policy still loads and runs, so check warns, naming the file and the field, and passes. */
static void test_policy_unknown_field_warns(void **state) {
  (void)state;
  evaluate(.policy = "apiVersion: descheduler/v1alpha2\n"
                     "kind: DeschedulerPolicy\n"
                     "maxNoOfPodToEvictTotal: 1\n"
                     "profiles:\n"
                     "- name: vm-rebalance\n"
                     "  pluginConfig:\n"
                     "  - name: DefaultEvictor\n"
                     "    args:\n"
                     "      evictLocalStoragePods: true\n"
                     "      labelSelector: {matchLabels: {kubevirt.io: virt-launcher}}\n"
                     "  - name: LowNodeUtilization\n"
                     "    args:\n"
                     "      thresholds: {cpu: 20, memory: 20, pods: 20}\n"
                     "      targetThresholds: {cpu: 50, memory: 50, pods: 50}\n"
                     "  plugins:\n"
                     "    balance:\n"
                     "      enabled: [LowNodeUtilization]\n"
                     "      disabled: [RemoveDuplicates]\n");
  assert_int_equal(check_count(R, CHECK_FAIL), 0);
  assert_int_equal(check_count(R, CHECK_WARN), 2);
  assert_row("policy", "ConfigMap descheduler/descheduler", CHECK_WARN,
             "ConfigMap descheduler/descheduler key policy.yaml: field maxNoOfPodToEvictTotal is "
             "ignored (unknown field), as upstream ignores it: it has no effect");
  /* the loaded policy still passes, with its profile; every ignored field gets its row, with
   * its path and the reason */
  size_t passed = 0, disabled = 0;
  for (size_t i = 0; i < R->n; i++) {
    const check_row *row = &R->rows[i];
    if (strcmp(row->item, "policy"))
      continue;
    if (row->status == CHECK_PASS && strstr(row->detail, "1 profile: vm-rebalance"))
      passed++;
    if (row->status == CHECK_WARN &&
        strstr(row->detail, "field profiles[0].plugins.balance.disabled is ignored (disabled "
                            "lists have no effect)"))
      disabled++;
  }
  assert_int_equal(passed, 1);
  assert_int_equal(disabled, 1);
  /* the JSON rendering carries them as any row */
  strbuf sb = {0};
  check_render_json(R, &sb);
  assert_non_null(strstr(sb_str(&sb), "\"item\":\"policy\",\"status\":\"warn\""));
  sb_free(&sb);
}

/* ---------- KubeVirt, HCO, the operator ---------- */

static void test_kubevirt_strategy(void **state) {
  (void)state;
  evaluate(.kubevirt = KUBEVIRT_CR(""));
  assert_row("kubevirt-strategy", NULL, CHECK_FAIL, "is unset: KubeVirt's default None applies");
  evaluate(.kubevirt = KUBEVIRT_CR("\"evictionStrategy\":\"None\","));
  assert_row("kubevirt-strategy", NULL, CHECK_FAIL, "evictionStrategy None: evicting a launcher");
  evaluate(.kubevirt = KUBEVIRT_CR("\"evictionStrategy\":\"LiveMigrateIfPossible\","));
  assert_row("kubevirt-strategy", NULL, CHECK_WARN, "LiveMigrateIfPossible");
}

#define HCO(strategy, per_node)                                                                    \
  "{\"kind\":\"HyperConverged\",\"metadata\":{\"name\":\"kubevirt-hyperconverged\",\"namespace\":" \
  "\"kubevirt\"},\"spec\":{" strategy "\"liveMigrationConfig\":{\"parallelMigrationsPerCluster\":" \
  "5,\"parallelOutboundMigrationsPerNode\":" per_node "}}}"

static void test_hco(void **state) {
  (void)state;
  evaluate();
  assert_row("hco-strategy", NULL, CHECK_PASS, "no HyperConverged CR");
  evaluate(.hco = HCO("\"evictionStrategy\":\"LiveMigrate\",", "1"));
  assert_row("hco-strategy", "HyperConverged kubevirt/kubevirt-hyperconverged", CHECK_PASS,
             "LiveMigrate");
  assert_row("hco-limits", NULL, CHECK_WARN, "differs from the KubeVirt CR");
  evaluate(.hco = HCO("\"evictionStrategy\":\"None\",", "-1"));
  assert_row("hco-strategy", NULL, CHECK_WARN, "HCO overwrites the KubeVirt CR");
  evaluate(.hco = HCO("", "-1"));
  assert_row("hco-strategy", NULL, CHECK_WARN, "spec.evictionStrategy is unset");
  assert_row("hco-limits", NULL, CHECK_PASS,
             "parallelMigrationsPerCluster 5, parallelOutboundMigrationsPerNode unset");
  evaluate(.hco = "{\"kind\":\"HyperConverged\",\"metadata\":{\"name\":\"kubevirt-hyperconverged\","
                  "\"namespace\":\"kubevirt\"},\"spec\":{\"evictionStrategy\":\"LiveMigrate\"}}");
  assert_row("hco-limits", NULL, CHECK_PASS,
             "liveMigrationConfig sets neither parallelMigrationsPerCluster nor "
             "parallelOutboundMigrationsPerNode: the KubeVirt CR's limits apply");
}

#define KD_CR(spec)                                                                               \
  "{\"apiVersion\":\"operator.openshift.io/v1\",\"kind\":\"KubeDescheduler\",\"metadata\":{"      \
  "\"name\":\"cluster\",\"namespace\":\"openshift-kube-descheduler-operator\"},\"spec\":{"                     \
  "\"managementState\":\"Managed\"," spec "}}"
#define KD_REF "KubeDescheduler openshift-kube-descheduler-operator/cluster"

/* a CR is rendered as the operator would; beside the runbook's ConfigMap it is a second
 * descheduler */
static void test_kubedescheduler_rendered(void **state) {
  (void)state;
  evaluate(.kubedescheduler = KD_CR("\"mode\":\"Automatic\",\"deschedulingIntervalSeconds\":60,"
                                    "\"profiles\":[\"LongLifecycle\"]"));
  assert_row("kubedescheduler", KD_REF, CHECK_PASS,
             "renders a DeschedulerPolicy with 1 profile (LongLifecycle), a cycle every 60s");
  bool both = false; /* not the CR's first row: look at all of them */
  for (size_t i = 0; i < R->n; i++)
    both |= !strcmp(R->rows[i].item, "kubedescheduler") && R->rows[i].status == CHECK_WARN &&
            strstr(R->rows[i].detail, "two descheduler instances would evict");
  assert_true(both);
  /* the runbook's ConfigMap is still the policy planned */
  assert_row("plan", "ConfigMap descheduler/descheduler", CHECK_PASS, "one cycle now");
}

/* the CRD's default mode is Predictive: a dry run, nothing moves */
static void test_kubedescheduler_predictive(void **state) {
  (void)state;
  evaluate(.kubedescheduler = KD_CR("\"deschedulingIntervalSeconds\":3600,\"profiles\":[\"LongLifecycle\"]"));
  assert_row("kubedescheduler", KD_REF, CHECK_WARN,
             "mode Predictive runs it with --dry-run, so nothing moves");
}

/* the operator's own validation message, and a field the API server would refuse */
static void test_kubedescheduler_refused(void **state) {
  (void)state;
  evaluate(.kubedescheduler =
               KD_CR("\"mode\":\"Automatic\",\"deschedulingIntervalSeconds\":3600,"
                     "\"profiles\":[\"LongLifecycle\",\"LifecycleAndUtilization\"]"));
  assert_row("kubedescheduler", KD_REF, CHECK_FAIL,
             "the operator refuses this CR and runs no descheduler: cannot declare LongLifecycle "
             "and LifecycleAndUtilization profiles simultaneously");
  evaluate(.kubedescheduler = KD_CR("\"deschedulingIntervalSeconds\":\"30\""));
  assert_row("kubedescheduler", KD_REF, CHECK_FAIL,
             "not a valid KubeDescheduler: spec.deschedulingIntervalSeconds: expected an integer");
}

/* OpenShift without the runbook's objects: the CR's policy is the one checked and planned */
static void test_kubedescheduler_only(void **state) {
  (void)state;
  evaluate(.no_configmap = true, .no_workload = true,
           .kubedescheduler = KD_CR("\"mode\":\"Automatic\",\"deschedulingIntervalSeconds\":3600,"
                                     "\"profiles\":[\"LongLifecycle\"]"));
  assert_row("configmap", NULL, CHECK_PASS, "the policy is the one " KD_REF " renders");
  assert_row("workload", NULL, CHECK_PASS, "the operator runs the descheduler of " KD_REF);
  assert_row("plan", KD_REF, CHECK_PASS, "one cycle now");
  assert_int_equal(check_count(R, CHECK_FAIL), 0);
}

/* ---------- VMIs ---------- */

static void test_vmi_recorded_none(void **state) {
  (void)state;
  evaluate(.vm = {"vm-a", "w1", "None", NULL, false});
  assert_row("vmi-strategy", "VMI vms/vm-a", CHECK_FAIL,
             "recorded evictionStrategy None, the cluster default is LiveMigrate");
  assert_row("vmi-strategy", "VMI vms/vm-a", CHECK_FAIL, "evicting its launcher stops the VM");
  assert_no_row("vmis");
}

static void test_vmi_external_and_not_migratable(void **state) {
  (void)state;
  evaluate(.vm = {"vm-a", "w1", "External", NULL, false});
  assert_row("vmi-external", "VMI vms/vm-a", CHECK_WARN, "drained by its external controller");
  evaluate(.vm = {"vm-a", "w1", "LiveMigrate", "False", false});
  assert_row("vmi-migratable", "VMI vms/vm-a", CHECK_WARN, "KubeVirt refuses its eviction");
  evaluate(.vm = {"vm-a", "w1", "LiveMigrateIfPossible", "False", false});
  assert_row("vmi-strategy", "VMI vms/vm-a", CHECK_FAIL, "evicting its launcher stops the VM");
  /* a VMI without a strategy of its own follows the cluster default */
  evaluate(.vm = {"vm-a", "w1", NULL, NULL, false});
  assert_row("vmis", NULL, CHECK_PASS, "3 running VMIs");
}

/* ---------- DefaultEvictor protections ---------- */

static const char *policy_with_evictor(const char *evictor_args) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "profiles:\n"
           "- name: vms\n"
           "  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "    args: %s\n"
           "  - name: LowNodeUtilization\n"
           "    args:\n"
           "      thresholds: {cpu: 20}\n"
           "      targetThresholds: {cpu: 50}\n"
           "  plugins: {balance: {enabled: [LowNodeUtilization]}}\n",
           evictor_args);
  return buf;
}

static void test_pvc_protection(void **state) {
  (void)state;
  const char *vm_only_pvc = policy_with_evictor(
      "{evictLocalStoragePods: true, ignorePvcPods: true, labelSelector: {matchLabels: "
      "{kubevirt.io: virt-launcher}}}");
  evaluate(.policy = vm_only_pvc, .all_pvc = true);
  assert_row("pvc-protection", "profile vms", CHECK_FAIL,
             "all 3 VMs the policy may move have PVC disks: VM rebalancing is a no-op; set "
             "ignorePvcPods: false");
  /* only the VMs that have one */
  evaluate(.policy = vm_only_pvc);
  assert_row("pvc-protection", NULL, CHECK_WARN, "0 of 3 VMs have PVC disks");
  /* the podProtections spelling */
  evaluate(.policy = policy_with_evictor(
               "{podProtections: {defaultDisabled: [PodsWithLocalStorage], extraEnabled: "
               "[PodsWithPVC]}, labelSelector: {matchLabels: {kubevirt.io: virt-launcher}}}"),
           .all_pvc = true);
  assert_row("pvc-protection", NULL, CHECK_FAIL,
             "remove PodsWithPVC from podProtections.extraEnabled");
  assert_row("local-storage", NULL, CHECK_PASS, NULL);
  /* a policy that evicts other pods too: a warning */
  evaluate(.policy = policy_with_evictor("{evictLocalStoragePods: true, ignorePvcPods: true}"),
           .all_pvc = true);
  assert_row("pvc-protection", NULL, CHECK_WARN, "3 of 3 VMs have PVC disks and never move");
  /* only claims of the protected storage classes count */
  evaluate(.policy = policy_with_evictor(
               "{podProtections: {defaultDisabled: [PodsWithLocalStorage], extraEnabled: "
               "[PodsWithPVC], config: {PodsWithPVC: {protectedStorageClasses: [{name: nfs}]}}}, "
               "labelSelector: {matchLabels: {kubevirt.io: virt-launcher}}}"),
           .all_pvc = true);
  assert_row("pvc-protection", NULL, CHECK_WARN, "0 of 3 VMs have PVC disks");
}

static void test_local_storage_protection(void **state) {
  (void)state;
  evaluate(.policy = policy_with_evictor("{labelSelector: {matchLabels: {kubevirt.io: "
                                         "virt-launcher}}}"));
  assert_row("local-storage", "profile vms", CHECK_FAIL,
             "every virt-launcher has emptyDir volumes (3 of 3 VMs here): no VM moves; its "
             "labelSelector picks only VMs, so set evictLocalStoragePods: true");
  assert_row("plan", NULL, CHECK_PASS, "would request 0 evictions");
  evaluate(.policy = policy_with_evictor("{}"));
  assert_row("local-storage", NULL, CHECK_WARN, "it also evicts other pods");
}

/* ---------- the plan ---------- */

/* PodLifeTime evicts every launcher older than a second, on any node */
static const char *lifetime_policy(const char *vmsafety) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "profiles:\n"
           "- name: old-vms\n"
           "  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "    args: {evictLocalStoragePods: true, labelSelector: {matchLabels: {kubevirt.io: "
           "virt-launcher}}}\n"
           "%s"
           "  - name: PodLifeTime\n"
           "    args: {maxPodLifeTimeSeconds: 1}\n"
           "  plugins: {deschedule: {enabled: [PodLifeTime]}}\n",
           vmsafety ? vmsafety : "");
  return buf;
}

static void test_plan_vm_stops(void **state) {
  (void)state;
  evaluate(.policy = lifetime_policy(NULL), .vm = {"vm-a", "w1", "None", NULL, false});
  assert_row("plan-vm-stops", "Pod vms/virt-launcher-vm-a-abcde", CHECK_WARN,
             "the policy's cycle would evict this launcher now (old-vms/PodLifeTime) and VMI "
             "vms/vm-a would stop");
  assert_row("plan-vm-stops", NULL, CHECK_WARN, "VMSafety (requireLiveMigration) refuses it");
  /* the other two migrate (within KubeVirt's limit of 2 per node) */
  assert_row("plan", NULL, CHECK_WARN,
             "would request 3 evictions: 2 live migrations, 0 external drains, 1 VM stop");
  evaluate(.policy =
               lifetime_policy("  - name: VMSafety\n    args: {requireLiveMigration: false}\n"),
           .vm = {"vm-a", "w1", "None", NULL, false});
  assert_row("plan-vm-stops", NULL, CHECK_FAIL, "so this descheduler would evict it too");
  assert_row("plan", NULL, CHECK_FAIL, "1 VM stop");
}

static void test_requires_live_migration_restored(void **state) {
  (void)state;
  dserr err;
  policy *p = load_policy_text(lifetime_policy(NULL), &err);
  assert_non_null(p);
  assert_true(vmsafety_requires_live_migration(&p->profiles[0]));
  vmsafety_set_require_live_migration(p, false);
  assert_false(vmsafety_requires_live_migration(&p->profiles[0]));
  vmsafety_set_require_live_migration(p, true);
  assert_true(vmsafety_requires_live_migration(&p->profiles[0]));
  policy_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_runbook_setup_passes),
      cmocka_unit_test(test_render),
      cmocka_unit_test(test_feature_gate),
      cmocka_unit_test(test_verbosity_dry_run_interval_suspend),
      cmocka_unit_test(test_policy_file_mount),
      cmocka_unit_test(test_workload_found_or_not),
      cmocka_unit_test(test_policy_does_not_load),
      cmocka_unit_test(test_policy_unknown_field_warns),
      cmocka_unit_test(test_kubevirt_strategy),
      cmocka_unit_test(test_hco),
      cmocka_unit_test(test_version_line),
      cmocka_unit_test(test_kubedescheduler_rendered),
      cmocka_unit_test(test_kubedescheduler_predictive),
      cmocka_unit_test(test_kubedescheduler_refused),
      cmocka_unit_test(test_kubedescheduler_only),
      cmocka_unit_test(test_vmi_recorded_none),
      cmocka_unit_test(test_vmi_external_and_not_migratable),
      cmocka_unit_test(test_pvc_protection),
      cmocka_unit_test(test_local_storage_protection),
      cmocka_unit_test(test_plan_vm_stops),
      cmocka_unit_test(test_requires_live_migration_restored),
  };
  return cmocka_run_group_tests(tests, NULL, teardown);
}
