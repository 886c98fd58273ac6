/* test_vmsafety.c - the VMSafety evictor plugin and kubevirt/vm.c: no request that would stop
 * a VM, none beyond KubeVirt's migration limits, none for a VM migrating or in its cooldown.
 *
 * The clusters are built from data: workers n1 (crowded) and n2, launcher pods of VMs with
 * their VMIs, a KubeVirt CR with the cluster's default strategy and limits. PodLifeTime with
 * maxPodLifeTimeSeconds 0 is the plugin that asks for every pod, so the plan shows exactly what
 * the evictors let through. */
#include "support/fixtures.h"
#include "support/support.h"

#include "../../src/kubevirt/vm.h"
#include "../../src/obs/log.h"
#include "../../src/util/strbuf.h"
#include "../../src/apimachinery/timeutil.h"

#include <stdio.h>
#include <string.h>

#define NOW "2026-01-01T00:00:00Z"
#define NOW_S 1767225600LL

static sim_run R;

static int teardown(void **state) {
  (void)state;
  sim_run_free(&R);
  return 0;
}

/* ---------- cluster pieces ---------- */

static void begin(const char *cluster_strategy, int per_cluster, int per_node) {
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  if (cluster_strategy)
    cluster_item("{\"kind\":\"KubeVirt\",\"apiVersion\":\"kubevirt.io/v1\",\"metadata\":{\"name\":"
                 "\"kubevirt\",\"namespace\":\"kubevirt\"},\"spec\":{\"configuration\":{"
                 "\"evictionStrategy\":\"%s\",\"migrations\":{\"parallelMigrationsPerCluster\":%d,"
                 "\"parallelOutboundMigrationsPerNode\":%d}}}}",
                 cluster_strategy, per_cluster, per_node);
}

typedef struct {
  const char *node;        /* NULL: n1 */
  const char *strategy;    /* the VMI's own; NULL: none recorded */
  const char *migratable;  /* LiveMigratable status; NULL: "True" */
  const char *status;      /* more VMI status members (JSON) */
  const char *annotations; /* VMI annotations (a JSON object body) */
  bool no_vmi;             /* the launcher only */
} vm_opts;

/* VM `name`: its launcher virt-launcher-<name> (KubeVirt's labels and annotations) and VMI */
static void vm_(const char *name, vm_opts o) {
  char pod[128], ann[256], owner[128];
  snprintf(pod, sizeof pod, "virt-launcher-%s", name);
  snprintf(ann, sizeof ann,
           "kubevirt.io/domain=%s,descheduler.alpha.kubernetes.io/request-evict-only=", name);
  snprintf(owner, sizeof owner, "VirtualMachineInstance/%s", name);
  const char *node = o.node ? o.node : "n1";
  cluster_pod(pod, node, .ns = "vms", .labels = "kubevirt.io=virt-launcher", .annotations = ann,
              .owner = owner);
  if (o.no_vmi)
    return;
  char spec[128] = "{}";
  if (o.strategy)
    snprintf(spec, sizeof spec, "{\"evictionStrategy\":\"%s\"}", o.strategy);
  cluster_item("{\"kind\":\"VirtualMachineInstance\",\"apiVersion\":\"kubevirt.io/v1\","
               "\"metadata\":{\"name\":\"%s\",\"namespace\":\"vms\",\"uid\":\"uid-vmi-%s\","
               "\"annotations\":{%s}},\"spec\":%s,\"status\":{\"nodeName\":\"%s\",\"phase\":"
               "\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
               "{\"type\":\"LiveMigratable\",\"status\":\"%s\"}]%s%s}}",
               name, name, o.annotations ? o.annotations : "", spec, node,
               o.migratable ? o.migratable : "True", o.status ? "," : "",
               o.status ? o.status : "");
}
#define vm(name, ...) vm_((name), (vm_opts){__VA_ARGS__})

static void vmim(const char *name, const char *vmi, const char *phase, const char *source) {
  cluster_item("{\"kind\":\"VirtualMachineInstanceMigration\",\"apiVersion\":\"kubevirt.io/v1\","
               "\"metadata\":{\"name\":\"%s\",\"namespace\":\"vms\",\"uid\":\"uid-%s\","
               "\"annotations\":{\"kubevirt.io/evacuationMigration\":\"%s\"}},"
               "\"spec\":{\"vmiName\":\"%s\"},\"status\":{\"phase\":\"%s\"}}",
               name, name, source, vmi, phase);
}

static const char *vs_policy(const char *vmsafety, const char *top) {
  return plugin_policy(.plugin = "PodLifeTime", .args = "{maxPodLifeTimeSeconds: 0}",
                       .evictor_args = "{evictLocalStoragePods: true}", .vmsafety = vmsafety,
                       .top = top);
}

static void run(const char *pol) { sim_rerun(&R, pol, cluster_end(), true, NOW, 3); }

static const char *plan(void) {
  static char out[4096];
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

/* ---------- requireLiveMigration ---------- */

/* The runbook's trap: the cluster default is LiveMigrate, but the VMI recorded None when it
 * was created; its eviction would be allowed and the VM would stop. */
static void test_recorded_none_is_never_requested(void **state) {
  (void)state;
  begin("LiveMigrate", 5, 2);
  vm("old", .strategy = "None");
  vm("new");
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-new");
  assert_logged("\"VM safety: not requesting the eviction of this launcher\" plugin=\"VMSafety\" "
                "ExtensionPoint=\"Filter\" pod=\"vms/virt-launcher-old\" vmi=\"vms/old\" "
                "rule=\"requireLiveMigration\" reason=\"the eviction would stop the VM: eviction "
                "strategy None (recorded on the VMI): KubeVirt lets the eviction delete the "
                "launcher\"");
  /* with the rule off, upstream's behaviour: the launcher is evicted and the VM stops */
  run(vs_policy("{requireLiveMigration: false}", NULL));
  assert_string_equal(plan(), "vms/virt-launcher-new vms/virt-launcher-old");
}

static void test_not_live_migratable_is_never_requested(void **state) {
  (void)state;
  begin("LiveMigrate", 5, 2);
  vm("gpu", .migratable = "False");
  vm("maybe", .strategy = "LiveMigrateIfPossible", .migratable = "False");
  vm("unknown", .migratable = "Unknown");
  vm("ok");
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-ok");
  assert_logged("pod=\"vms/virt-launcher-gpu\" vmi=\"vms/gpu\" rule=\"requireLiveMigration\" "
                "reason=\"KubeVirt would refuse the eviction: VMI gpu is configured with an "
                "eviction strategy but is not live-migratable\"");
  assert_logged("pod=\"vms/virt-launcher-maybe\" vmi=\"vms/maybe\" rule=\"requireLiveMigration\" "
                "reason=\"the eviction would stop the VM: eviction strategy LiveMigrateIfPossible "
                "and the VMI is not live-migratable");
  assert_logged("pod=\"vms/virt-launcher-unknown\"");
}

/* No strategy anywhere: KubeVirt's own default is None */
static void test_cluster_default_none(void **state) {
  (void)state;
  begin("None", 5, 2);
  vm("a");
  vm("b", .strategy = "LiveMigrate");
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-b");
  assert_logged("pod=\"vms/virt-launcher-a\" vmi=\"vms/a\" rule=\"requireLiveMigration\" "
                "reason=\"the eviction would stop the VM: eviction strategy None (the KubeVirt "
                "CR's default)");
}

/* External (hosted-cluster NodePool VMs): KubeVirt marks the VMI and the external controller
 * drains it; that is a request, not a stop */
static void test_external_is_a_request(void **state) {
  (void)state;
  begin("LiveMigrate", 5, 2);
  vm("hosted", .strategy = "External");
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-hosted");
  assert_true(R.res.evictions[0].background);
  vm_view v;
  kubevirt_view(R.m, R.res.evictions[0].pod, &v);
  assert_int_equal(v.effect, VM_EFFECT_EXTERNAL);
  assert_string_equal(kubevirt_effect_name(v.effect), "external-drain");
}

/* A snapshot may leave VMIs out: the cluster default is assumed for the VM (and said so); a
 * live read lists every VMI, so there a missing VMI means KubeVirt would refuse */
static void test_missing_vmi(void **state) {
  (void)state;
  begin("LiveMigrate", 5, 2);
  vm("ghost", .no_vmi = true);
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-ghost");
  vm_view v;
  kubevirt_view(R.m, R.res.evictions[0].pod, &v);
  assert_int_equal(v.source, STRATEGY_ASSUMED);
  assert_string_equal(v.strategy, "LiveMigrate");
  R.m->vmis_complete = true;
  kubevirt_view(R.m, R.res.evictions[0].pod, &v);
  assert_int_equal(v.effect, VM_EFFECT_REFUSED);
  assert_string_equal(v.why, "kubevirt failed getting the vmi: virtualmachineinstances.kubevirt.io "
                             "\"ghost\" not found");
  /* a snapshot whose cluster default is None: the missing VMI's VM would stop */
  begin("None", 5, 2);
  vm("ghost", .no_vmi = true);
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "");
}

/* ---------- skipMigrating ---------- */

static void test_migrating_vmi_is_skipped(void **state) {
  (void)state;
  begin("LiveMigrate", 5, 2);
  vm("marked", .status = "\"evacuationNodeName\":\"n1\"");
  vm("running", .status = "\"migrationState\":{\"startTimestamp\":\"2025-12-31T23:59:00Z\","
                          "\"sourceNode\":\"n1\"}");
  vm("queued");
  vmim("kubevirt-evacuation-q", "queued", "Pending", "n1");
  vm("done", .status = "\"migrationState\":{\"startTimestamp\":\"2025-12-31T20:00:00Z\","
                       "\"endTimestamp\":\"2025-12-31T20:01:00Z\",\"completed\":true}");
  vm("free", .node = "n2");
  run(vs_policy("{migrationLimits: false}", NULL));
  assert_string_equal(plan(), "vms/virt-launcher-done vms/virt-launcher-free");
  assert_logged("pod=\"vms/virt-launcher-marked\" vmi=\"vms/marked\" rule=\"skipMigrating\" "
                "reason=\"the VMI has a migration in flight: marked for evacuation from n1\"");
  assert_logged("pod=\"vms/virt-launcher-queued\" vmi=\"vms/queued\" rule=\"skipMigrating\" "
                "reason=\"the VMI has a migration in flight: migration kubevirt-evacuation-q is in "
                "phase Pending\"");
  assert_logged("pod=\"vms/virt-launcher-running\" vmi=\"vms/running\" rule=\"skipMigrating\" "
                "reason=\"the VMI has a migration in flight: a migration from n1 started and has "
                "not ended\"");
}

/* ---------- migrationLimits ---------- */

/* Six overloaded VMs on one node, parallelOutboundMigrationsPerNode 2, one migration already
 * running from that node: at most one new request. */
static void test_outbound_limit_counts_running_migrations(void **state) {
  (void)state;
  begin("LiveMigrate", 5, 2);
  const char *names[] = {"vm1", "vm2", "vm3", "vm4", "vm5", "vm6"};
  for (int i = 0; i < 6; i++)
    vm(names[i]);
  vm("moving");
  vmim("kubevirt-evacuation-m", "moving", "Running", "n1");
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-vm1");
  assert_int_equal(R.res.requests, 1);
  assert_logged("pod=\"vms/virt-launcher-vm2\" vmi=\"vms/vm2\" rule=\"migrationLimits\" "
                "reason=\"KubeVirt's migration limit: 2 migrations in flight or requested from "
                "node n1 (parallelOutboundMigrationsPerNode 2)\"");
  /* without the running one: two */
  begin("LiveMigrate", 5, 2);
  for (int i = 0; i < 6; i++)
    vm(names[i]);
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-vm1 vms/virt-launcher-vm2");
}

static void test_cluster_limit(void **state) {
  (void)state;
  begin("LiveMigrate", 3, 5);
  vm("a1");
  vm("a2");
  vm("b1", .node = "n2");
  vm("b2", .node = "n2");
  vm("moving", .node = "n2", .status = "\"evacuationNodeName\":\"n2\"");
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-a1 vms/virt-launcher-a2");
  assert_logged("pod=\"vms/virt-launcher-b1\" vmi=\"vms/b1\" rule=\"migrationLimits\" "
                "reason=\"KubeVirt's migration limit: 3 migrations in flight or requested in the "
                "cluster (parallelMigrationsPerCluster 3)\"");
}

/* An eviction whose answer never came (kube-apiserver killed while it was in flight: a reset,
 * a timeout) may have started an evacuation: it counts against KubeVirt's limits for the rest
 * of the cycle, as against the policy's. Live sink: vm1's request gets no answer, every other
 * launcher's becomes an evacuation; with parallelOutboundMigrationsPerNode 2 only vm2 follows
 * (vm1 may be migrating already). */
typedef struct {
  eviction_sink base;
  const char *unanswered;
  int calls;
} silent_sink;

static sink_result silent_evict(eviction_sink *self, const pod *p, const eviction_request *req,
                                char *msg, size_t cap) {
  silent_sink *s = (silent_sink *)self;
  (void)req;
  s->calls++;
  if (strcmp(p->name, s->unanswered) == 0) {
    snprintf(msg, cap, "Post \"https://x/api/v1/namespaces/vms/pods/%s/eviction\": unexpected EOF",
             p->name);
    return SINK_UNKNOWN;
  }
  snprintf(msg, cap,
           "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the "
           "request: Eviction triggered evacuation of VMI \"vms/%s\"",
           p->name + strlen("virt-launcher-"));
  return SINK_TOO_MANY;
}

static void test_unanswered_eviction_counts_against_migration_limits(void **state) {
  (void)state;
  begin("LiveMigrate", 5, 2);
  const char *names[] = {"vm1", "vm2", "vm3", "vm4"};
  for (int i = 0; i < 4; i++)
    vm(names[i]);
  sim_run_free(&R);
  silent_sink sink = {.base = {.evict = silent_evict, .dry_run = false},
                      .unanswered = "virt-launcher-vm1"};
  size_t len = 0;
  FILE *logs = open_memstream(&R.logs, &len);
  log_set_stream(logs);
  log_set_verbosity(3);
  R.m = load_model_text(cluster_end(), &R.err);
  assert_non_null(R.m);
  R.pol = load_policy_text(vs_policy(NULL, NULL), &R.err);
  assert_non_null(R.pol);
  bg_sync(&R.bg, R.m, NOW_S, true);
  fw_options opt = {true, NOW_S};
  R.rc = fw_run_cycle(R.pol, R.m, &R.bg, &sink.base, &opt, &R.res, &R.err);
  log_set_stream(NULL);
  log_set_verbosity(0);
  fclose(logs);
  assert_int_equal(R.rc, 0);
  assert_int_equal(sink.calls, 2);
  assert_logged("(the request may have been carried out: it counts against the eviction limits)\" "
                "pod=\"vms/virt-launcher-vm1\"");
  assert_logged("\"Eviction in background assumed\" pod=\"vms/virt-launcher-vm2\"");
  assert_logged("pod=\"vms/virt-launcher-vm3\" vmi=\"vms/vm3\" rule=\"migrationLimits\" "
                "reason=\"KubeVirt's migration limit: 2 migrations in flight or requested from "
                "node n1 (parallelOutboundMigrationsPerNode 2)\"");
}

/* ---------- countEvacuationsAgainstLimits ---------- */

/* The case: without EvictionsInBackground KubeVirt still live-migrates each VM whose
 * eviction it answers with "Eviction triggered evacuation", which upstream counts as a failed
 * eviction; with maxNoOfPodsToEvictTotal: 1 upstream moves two VMs (KubeVirt's limit of two per
 * node stops the third). By default the evacuation counts, and one VM moves; the switch set to
 * false is upstream's count. */
static void test_limit_holds_without_the_gate(void **state) {
  (void)state;
  const char *names[] = {"vm1", "vm2", "vm3"};
  begin("LiveMigrate", 5, 2);
  for (int i = 0; i < 3; i++)
    vm(names[i]);
  sim_rerun(&R, vs_policy(NULL, "maxNoOfPodsToEvictTotal: 1\n"), cluster_end(), false, NOW, 3);
  assert_string_equal(plan(), "vms/virt-launcher-vm1");
  assert_true(R.res.evictions[0].evacuation && R.res.evictions[0].counted);
  assert_int_equal(R.res.evicted + R.res.requests, 0);
  assert_logged("\"Error evicting pod\" err=\"maximum number of evicted pods per a descheduling "
                "cycle reached\" limit=1\n");

  begin("LiveMigrate", 5, 2);
  for (int i = 0; i < 3; i++)
    vm(names[i]);
  sim_rerun(&R, vs_policy("{countEvacuationsAgainstLimits: false}", "maxNoOfPodsToEvictTotal: 1\n"),
            cluster_end(), false, NOW, 3);
  assert_string_equal(plan(), "vms/virt-launcher-vm1 vms/virt-launcher-vm2");
  assert_false(R.res.evictions[1].counted);
  assert_logged("pod=\"vms/virt-launcher-vm3\" vmi=\"vms/vm3\" rule=\"migrationLimits\"");

  /* with the gate they are requests in background, counted as upstream counts them */
  begin("LiveMigrate", 5, 2);
  for (int i = 0; i < 3; i++)
    vm(names[i]);
  run(vs_policy("{countEvacuationsAgainstLimits: false}", "maxNoOfPodsToEvictTotal: 1\n"));
  assert_string_equal(plan(), "vms/virt-launcher-vm1");
  assert_true(R.res.evictions[0].background);
  assert_int_equal(R.res.evacuations, 0);
}

/* No KubeVirt CR in the snapshot: KubeVirt's defaults, 5 per cluster and 2 per node */
static void test_default_limits(void **state) {
  (void)state;
  begin(NULL, 0, 0);
  vm("v1", .strategy = "LiveMigrate");
  vm("v2", .strategy = "LiveMigrate");
  vm("v3", .strategy = "LiveMigrate");
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-v1 vms/virt-launcher-v2");
}

/* A KubeVirt CR live mode could not decode (and skipped): KubeVirt's limits are unknown, so no
 * migration is asked for, even for VMIs that recorded LiveMigrate themselves. */
static int mark_kubevirt_unreadable(model *m, const policy *pol, void *ctx, dserr *err) {
  (void)pol;
  (void)err;
  m->kubevirt_unreadable = ctx;
  return 0;
}

static void test_unreadable_kubevirt_cr_requests_nothing(void **state) {
  (void)state;
  begin(NULL, 0, 0);
  vm("v1", .strategy = "LiveMigrate");
  sim_run_free(&R);
  assert_int_equal(sim_run_prepared(&R, vs_policy(NULL, NULL), cluster_end(), true, NOW, 3,
                                    mark_kubevirt_unreadable, "spec.configuration: bad"),
                   0);
  assert_string_equal(plan(), "");
  assert_logged("rule=\"migrationLimits\" reason=\"KubeVirt's migration limits are unknown: its "
                "KubeVirt CR could not be read (spec.configuration: bad)\"");
}

/* ---------- cooldown ---------- */

#define MOVES(list) "\"" VMI_MOVES_ANNOTATION "\":\"" list "\""

static void test_cooldown_after_a_move(void **state) {
  (void)state;
  begin("LiveMigrate", 5, 2);
  vm("recent", .annotations = MOVES("2025-12-31T23:50:00Z"));
  vm("older", .node = "n2", .annotations = MOVES("2025-12-31T23:20:00Z"));
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-older");
  assert_logged("pod=\"vms/virt-launcher-recent\" vmi=\"vms/recent\" rule=\"cooldown\" "
                "reason=\"moved by this descheduler 10m0s ago (1 recorded move); cooldown 30m0s, "
                "20m0s left\"");
  /* a custom cooldown */
  run(vs_policy("{cooldown: 5m}", NULL));
  assert_string_equal(plan(), "vms/virt-launcher-recent vms/virt-launcher-older");
  /* off */
  run(vs_policy("{cooldown: 0s}", NULL));
  assert_string_equal(plan(), "vms/virt-launcher-recent vms/virt-launcher-older");
}

/* Each earlier move within the window doubles the cooldown, up to maxCooldown */
static void test_cooldown_doubles_and_caps(void **state) {
  (void)state;
  begin("LiveMigrate", 5, 2);
  /* three moves within 24h, the last 100 minutes ago: 30m * 4 = 2h */
  vm("flappy", .annotations = MOVES("2025-12-31T10:00:00Z,2025-12-31T14:00:00Z,"
                                    "2025-12-31T22:20:00Z"));
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "");
  assert_logged("reason=\"moved by this descheduler 1h40m0s ago (3 recorded moves); cooldown "
                "2h0m0s, 20m0s left\"");
  run(vs_policy("{maxCooldown: 1h}", NULL));
  assert_string_equal(plan(), "vms/virt-launcher-flappy");
  /* moves outside the window do not count */
  run(vs_policy("{cooldownWindow: 1h}", NULL));
  assert_string_equal(plan(), "vms/virt-launcher-flappy");
}

static void test_cooldown_math(void **state) {
  (void)state;
  int64_t t[4], c;
  size_t bad;
  size_t n = kubevirt_moves_parse("2026-01-01T00:00:00Z, junk ,2025-12-31T23:00:00Z", t, 4, &bad);
  assert_int_equal(n, 2);
  assert_int_equal(bad, 1);
  assert_true(t[0] < t[1]); /* sorted oldest first */
  assert_int_equal(kubevirt_cooldown_left(t, n, NOW_S + 60, 1800, 28800, 86400, &c), 3540);
  assert_int_equal(c, 3600); /* two moves: doubled */
  assert_int_equal(kubevirt_cooldown_left(t, n, NOW_S + 3600, 1800, 28800, 86400, &c), 0);
  assert_int_equal(kubevirt_cooldown_left(t, 0, NOW_S, 1800, 28800, 86400, &c), 0);
  /* the cap holds however many moves there were */
  int64_t many[16];
  for (int i = 0; i < 16; i++)
    many[i] = NOW_S - 16 + i;
  kubevirt_cooldown_left(many, 16, NOW_S, 1800, 28800, 86400, &c);
  assert_int_equal(c, 28800);
  kubevirt_cooldown_left(many, 16, NOW_S, INT64_MAX / 4, 0, 0, &c);
  assert_int_equal(c, INT64_MAX); /* no cap: saturates instead of overflowing */

  /* appending keeps the newest KUBEVIRT_MOVES_KEPT, oldest first */
  strbuf sb = {0};
  kubevirt_moves_append(NULL, NOW_S, 0, &sb);
  assert_string_equal(sb_str(&sb), "2026-01-01T00:00:00Z");
  sb_free(&sb);
  strbuf list = {0};
  for (int i = 0; i < 20; i++) {
    strbuf next = {0};
    kubevirt_moves_append(sb_str(&list), NOW_S + i, 0, &next);
    sb_free(&list);
    list = next;
  }
  n = kubevirt_moves_parse(sb_str(&list), many, 16, NULL);
  assert_int_equal(n, KUBEVIRT_MOVES_KEPT);
  assert_int_equal(many[0], NOW_S + 4);
  assert_int_equal(many[15], NOW_S + 19);
  /* with a window, old moves are dropped */
  strbuf w = {0};
  kubevirt_moves_append("2025-01-01T00:00:00Z", NOW_S, 86400, &w);
  assert_string_equal(sb_str(&w), "2026-01-01T00:00:00Z");
  sb_free(&w);
  sb_free(&list);
}

/* ---------- args ---------- */

static void test_args_validation(void **state) {
  (void)state;
  assert_policy_error(vs_policy("{cooldown: soon}", NULL),
                      "cooldown: invalid duration \"soon\"");
  assert_policy_error(vs_policy("{cooldown: -5m}", NULL),
                      "cooldown must be a non-negative duration, got -5m");
  assert_policy_error(vs_policy("{cooldown: 2h, maxCooldown: 1h}", NULL),
                      "maxCooldown (1h) must not be shorter than cooldown (2h)");
  assert_policy_error(vs_policy("{requireLiveMigration: maybe}", NULL), "requireLiveMigration");
  assert_policy_error(vs_policy("{countEvacuationsAgainstLimits: 1}", NULL),
                      "countEvacuationsAgainstLimits");
  assert_policy_error(vs_policy("{countEvacuationAgainstLimits: false}", NULL),
                      "unknown field \"countEvacuationAgainstLimits\"");
  assert_policy_error(vs_policy("{cooldwon: 1h}", NULL), "unknown field \"cooldwon\"");
}

/* Pods that are not launchers never meet the plugin */
static void test_ordinary_pods_pass(void **state) {
  (void)state;
  begin("None", 1, 1);
  cluster_pod("web", "n1", .ns = "shop");
  vm("stopper", .strategy = "None");
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "shop/web");
}

/* A VM opts out on its VMI, where an owner can change it without restarting the VM (the launcher
 * pod only gets the VMI's annotations at start): vm-rebalance.descheduler.io/no-eviction is
 * never moved; descheduler.alpha.kubernetes.io/prefer-no-eviction on the VMI counts as on the
 * launcher (the DefaultEvictor's noEvictionPolicy decides) */
static void test_vm_opt_out_on_the_vmi(void **state) {
  (void)state;
  begin("LiveMigrate", 10, 10);
  vm("keep", .annotations = "\"vm-rebalance.descheduler.io/no-eviction\":\"true\"");
  vm("prefer", .annotations = "\"descheduler.alpha.kubernetes.io/prefer-no-eviction\":\"\"");
  vm("free");
  run(vs_policy(NULL, NULL));
  assert_string_equal(plan(), "vms/virt-launcher-free vms/virt-launcher-prefer");
  assert_logged("pod=\"vms/virt-launcher-keep\" vmi=\"vms/keep\" rule=\"noEviction\" reason=\"the VM "
                "opted out (annotation vm-rebalance.descheduler.io/no-eviction on its VMI or "
                "launcher)\"");
  run(plugin_policy(.plugin = "PodLifeTime", .args = "{maxPodLifeTimeSeconds: 0}",
                    .evictor_args = "{evictLocalStoragePods: true, noEvictionPolicy: Mandatory}"));
  assert_string_equal(plan(), "vms/virt-launcher-free");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_vm_opt_out_on_the_vmi, teardown),
      cmocka_unit_test_teardown(test_recorded_none_is_never_requested, teardown),
      cmocka_unit_test_teardown(test_not_live_migratable_is_never_requested, teardown),
      cmocka_unit_test_teardown(test_cluster_default_none, teardown),
      cmocka_unit_test_teardown(test_external_is_a_request, teardown),
      cmocka_unit_test_teardown(test_missing_vmi, teardown),
      cmocka_unit_test_teardown(test_migrating_vmi_is_skipped, teardown),
      cmocka_unit_test_teardown(test_outbound_limit_counts_running_migrations, teardown),
      cmocka_unit_test_teardown(test_cluster_limit, teardown),
      cmocka_unit_test_teardown(test_limit_holds_without_the_gate, teardown),
      cmocka_unit_test_teardown(test_default_limits, teardown),
      cmocka_unit_test_teardown(test_unreadable_kubevirt_cr_requests_nothing, teardown),
      cmocka_unit_test_teardown(test_cooldown_after_a_move, teardown),
      cmocka_unit_test_teardown(test_cooldown_doubles_and_caps, teardown),
      cmocka_unit_test(test_cooldown_math),
      cmocka_unit_test_teardown(test_unanswered_eviction_counts_against_migration_limits, teardown),
      cmocka_unit_test(test_args_validation),
      cmocka_unit_test_teardown(test_ordinary_pods_pass, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
