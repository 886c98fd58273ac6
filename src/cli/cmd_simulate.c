/* cmd_simulate.c - `descheduler simulate`: one cycle on a saved cluster state, or on the
 * cluster as it is now.
 *
 * Reads a snapshot (a v1 List as `kubectl get ... -o json|yaml` prints it), loads the policy,
 * reads actual utilization from --metrics files when given (a Prometheus instant-query
 * response, metrics.k8s.io NodeMetrics / PodMetrics lists), runs the same cycle a live run
 * would, with an eviction sink that only records (and
 * answers for KubeVirt as its webhook would), and prints the plan (-o text, json or yaml). Logs
 * go to stderr, the plan to stdout. Exit 0 on success, 2 on bad input: a snapshot must be a
 * List with at least one node (one object, or a list without nodes, is not a cluster, and a
 * cycle on it would only say that it was skipped).
 *
 * With --kubedescheduler FILE the policy is the one the OpenShift operator renders from that
 * CR, with the snapshot as the cluster it reads (cli/kdsource.h); the CR's feature gate and log
 * level apply unless --feature-gates or --v are given.
 *
 * With --from-cluster the snapshot is read from the API server (found as kubectl finds it,
 * cli_connect) as a live cycle lists it, and the policy's metrics (metrics.k8s.io, Prometheus)
 * are queried as a live cycle queries them; the plan is made offline with the same recording
 * sink: nothing is written to the cluster. A cluster that cannot be read exits 1. */
#include "../decode/decode.h"
#include "../kube/cluster.h"
#include "../kube/openshift.h"
#include "../kube/pager.h"
#include "../framework/framework.h"
#include "../kubevirt/simsink.h"
#include "../kubevirt/vm.h"
#include "../obs/log.h"
#include "../plugins/registry.h"
#include "../policy/policy.h"
#include "../framework/decisions.h"
#include "../report/html.h"
#include "../usage/usage.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "../util/xalloc.h"
#include "cli.h"
#include "explain.h"
#include "flags.h"
#include "hint.h"
#include "kdsource.h"
#include "output.h"
#include "timings.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef struct {
  const char *policy, *snapshot, *gates, *now, *output, *logging_format, *report;
  long long v, examples;
  const char *kd_file, *prometheus_url, *psi;
  flag_strings metrics;
  bool from_cluster;
  const char *kubeconfig, *context;
  long long page;
  char source[600]; /* "snapshot FILE" or "the cluster at URL", for the plan's first line */
} sim_opts;

static int pc_value(void *ctx, const char *name, int32_t *value, dserr *err) {
  const model *m = ctx;
  const priority_class_obj *pc = model_find_priority_class(m, name);
  if (!pc)
    return dserr_set(err, "priorityclasses.scheduling.k8s.io \"%s\" not found (not in the snapshot)",
                     name);
  *value = pc->value;
  return 0;
}

/* The first, quiet read of the policy (below) looks only at which plugins read pod
 * conditions: a priority class named by DefaultEvictor, looked up in the snapshot not read
 * yet, is given any value. The read after the snapshot looks it up for real. */
static int pc_any_value(void *ctx, const char *name, int32_t *value, dserr *err) {
  (void)ctx;
  (void)name;
  (void)err;
  *value = 0;
  return 0;
}

static void json_pcts(strbuf *sb, const double pct[3], const bool has[3]) {
  static const char *names[3] = {"cpu", "memory", "pods"};
  sb_appendc(sb, '{');
  int first = 1;
  for (int r = 0; r < 3; r++) {
    if (!has[r])
      continue;
    sb_printf(sb, "%s\"%s\":%.2f", first ? "" : ",", names[r], pct[r]);
    first = 0;
  }
  sb_appendc(sb, '}');
}

/* One entry of the plan's "evictions" or "evacuations" list */
static void json_entry(strbuf *sb, const model *m, const fw_eviction *e, bool first) {
  char ref[512];
  sb_append(sb, first ? "{\"pod\":" : ",{\"pod\":");
  sb_append_json_str(sb, pod_ref(e->pod, ref, sizeof ref));
  sb_append(sb, ",\"node\":");
  sb_append_json_str(sb, e->pod->node_name);
  sb_append(sb, ",\"profile\":");
  sb_append_json_str(sb, e->profile);
  sb_append(sb, ",\"plugin\":");
  sb_append_json_str(sb, e->plugin);
  if (e->evacuation)
    sb_printf(sb, ",\"counted\":%s", e->counted ? "true" : "false");
  else
    sb_printf(sb, ",\"background\":%s", e->background ? "true" : "false");
  if (e->to) {
    sb_append(sb, ",\"to\":");
    sb_append_json_str(sb, e->to);
  }
  vm_view v;
  kubevirt_view(m, e->pod, &v);
  if (v.effect != VM_EFFECT_NONE) {
    char vmi[512];
    snprintf(vmi, sizeof vmi, "%s/%s", e->pod->ns, v.vmi_name);
    sb_append(sb, ",\"vm\":{\"vmi\":");
    sb_append_json_str(sb, vmi);
    sb_append(sb, ",\"strategy\":");
    sb_append_json_str(sb, v.strategy);
    sb_append(sb, ",\"effect\":");
    sb_append_json_str(sb, kubevirt_effect_name(v.effect));
    sb_printf(sb, ",\"assumed\":%s}", v.source == STRATEGY_ASSUMED ? "true" : "false");
  }
  sb_appendc(sb, '}');
}

/* The plan as one JSON document (-o json|yaml). "evictions" holds what the descheduler counts
 * as evicted or requested, as upstream counts them; "evacuations" the VMs KubeVirt moves in
 * answer to an eviction upstream counts as failed. */
static void plan_json(strbuf *sb, const model *m, const fw_result *res, const decisions *dec,
                      size_t examples) {
  sb_append(sb, "{\"evictions\":[");
  size_t k = 0;
  for (size_t i = 0; i < res->nevictions; i++)
    if (!res->evictions[i].evacuation)
      json_entry(sb, m, &res->evictions[i], k++ == 0);
  sb_append(sb, "],\"evacuations\":[");
  k = 0;
  for (size_t i = 0; i < res->nevictions; i++)
    if (res->evictions[i].evacuation)
      json_entry(sb, m, &res->evictions[i], k++ == 0);
  sb_append(sb, "],\"nodes\":[");
  for (size_t i = 0; i < m->nodes.n; i++) {
    const node *n = m->nodes.items[i];
    const dec_node *dn = decisions_node_of(dec, n);
    sb_append(sb, i ? ",{\"name\":" : "{\"name\":");
    sb_append_json_str(sb, n->name);
    sb_append(sb, ",\"category\":");
    sb_append_json_str(sb, res->node_category[i] ? res->node_category[i] : "");
    sb_append(sb, ",\"usagePercentage\":");
    json_pcts(sb, dn->requested, dn->has_requested);
    sb_append(sb, ",\"usagePercentageAfter\":");
    json_pcts(sb, dn->requested_after, dn->has_requested);
    sb_appendc(sb, '}');
  }
  sb_printf(sb,
            "],\"totals\":{\"evicted\":%llu,\"requests\":%llu,\"migrations\":%llu,"
            "\"evacuations\":%llu},\"decisions\":",
            (unsigned long long)res->evicted, (unsigned long long)res->requests,
            (unsigned long long)res->migrations, (unsigned long long)res->evacuations);
  decisions_json(dec, examples, false, sb);
  sb_append(sb, "}\n");
}

static void print_text(const model *m, const fw_result *res, const sim_opts *o, bool gate,
                       const decisions *dec) {
  if (o->policy)
    printf("Simulated one descheduling cycle: %s, policy %s\n", o->source, o->policy);
  else
    printf("Simulated one descheduling cycle: %s, policy rendered from KubeDescheduler %s\n",
           o->source, o->kd_file);
  if (o->from_cluster)
    printf("Nothing was evicted: the plan is what one cycle would do now.\n");
  if (res->skipped)
    printf("The cycle was skipped: it needs at least 2 ready nodes, found %zu.\n", res->nnodes);
  printf("\nNodes (requested cpu / memory / pods, before -> after):\n");
  for (size_t i = 0; i < m->nodes.n; i++) {
    const node *n = m->nodes.items[i];
    const dec_node *dn = decisions_node_of(dec, n);
    const double *before = dn->requested, *after = dn->requested_after;
    printf("  %-24s %-22s cpu %6.2f%% -> %6.2f%%  memory %6.2f%% -> %6.2f%%  pods %6.2f%% -> %6.2f%%\n",
           n->name, res->node_category[i] ? res->node_category[i] : "-", before[0], after[0],
           before[1], after[1], before[2], after[2]);
  }
  printf("\nPlan (%zu):\n", res->nevictions);
  if (!res->nevictions)
    printf("  nothing to evict\n");
  for (size_t i = 0; i < res->nevictions; i++) {
    const fw_eviction *e = &res->evictions[i];
    char ref[512];
    vm_view v;
    kubevirt_view(m, e->pod, &v);
    const char *note = "";
    char to[320];
    if (e->to) {
      snprintf(to, sizeof to, "  (live migration to %s)", e->to);
      note = to;
    } else if (e->evacuation)
      note = e->counted ? "  (evacuation: KubeVirt live-migrates the VM; a failed eviction to "
                          "upstream, counted against the limits here)"
                        : "  (evacuation: KubeVirt live-migrates the VM; a failed eviction, not "
                          "counted against the limits)";
    else if (v.effect == VM_EFFECT_EXTERNAL)
      note = "  (eviction request; the VM's external controller drains it, strategy External)";
    else if (e->background)
      note = "  (eviction request; KubeVirt live-migrates the VM)";
    else if (v.effect == VM_EFFECT_STOP)
      note = "  (the VM stops: its eviction strategy does not migrate it)";
    printf("  %zu. %-40s from %-20s by %s/%s%s\n", i + 1, pod_ref(e->pod, ref, sizeof ref),
           e->pod->node_name, e->profile, e->plugin, note);
    if (v.effect != VM_EFFECT_NONE && v.source == STRATEGY_ASSUMED)
      printf("     assumed: the %s has no VMI %s/%s (or no KubeVirt CR); strategy %s, "
             "live-migratable taken as given\n",
             o->from_cluster ? "cluster" : "snapshot", e->pod->ns, v.vmi_name, v.strategy);
  }
  if (res->evacuations && !gate)
    printf("  (evacuations: without --feature-gates EvictionsInBackground=true KubeVirt's answer "
           "counts as a failed eviction and is not followed across cycles)\n");
  printf("\nTotals: evicted=%llu requests=%llu migrations=%llu evacuations=%llu\n",
         (unsigned long long)res->evicted, (unsigned long long)res->requests,
         (unsigned long long)res->migrations, (unsigned long long)res->evacuations);
  strbuf sb = {0};
  decisions_text(dec, (size_t)o->examples, &sb);
  printf("\n%s", sb_str(&sb));
  sb_free(&sb);
}

/* --report: the HTML page, written whole (to a temporary name, then renamed) */
static int write_report(const sim_opts *o, const model *m, const fw_result *res,
                        const decisions *dec) {
  size_t nn = m->nodes.n ? m->nodes.n : 1;
  double (*before)[3] = calloc(nn, sizeof *before), (*after)[3] = calloc(nn, sizeof *after);
  bool (*has)[3] = calloc(nn, sizeof *has);
  if (!before || !after || !has)
    abort();
  for (size_t i = 0; i < m->nodes.n; i++) {
    const dec_node *dn = decisions_node_of(dec, m->nodes.items[i]);
    memcpy(before[i], dn->requested, sizeof before[i]);
    memcpy(after[i], dn->requested_after, sizeof after[i]);
    memcpy(has[i], dn->has_requested, sizeof has[i]);
  }
  strbuf title = {0}, html = {0}, tmp = {0};
  sb_printf(&title, "%c%s, policy %s%s", toupper((unsigned char)o->source[0]), o->source + 1,
            o->policy ? o->policy : "rendered from KubeDescheduler ",
            o->policy ? "" : o->kd_file);
  html_input in = {sb_str(&title), m, res, dec, before, after, has, 20000};
  report_html(&in, &html);
  sb_printf(&tmp, "%s.tmp", o->report);
  int rc = 0;
  FILE *f = fopen(sb_str(&tmp), "w");
  bool written = f && fwrite(sb_str(&html), 1, html.len, f) == html.len;
  if (f && fclose(f) != 0)
    written = false;
  if (!written || rename(sb_str(&tmp), o->report) != 0) {
    fprintf(stderr, "descheduler simulate: --report: cannot write \"%s\": %s\n", o->report,
            strerror(errno));
    remove(sb_str(&tmp));
    rc = -1;
  }
  sb_free(&title);
  sb_free(&html);
  sb_free(&tmp);
  free(before);
  free(after);
  free(has);
  return rc;
}

static void sim_usage(FILE *out, const flag_def *defs) {
  cli_usage_head(out, "simulate");
  fprintf(out, "\nRuns one descheduling cycle on a saved cluster state (a v1 List, JSON or YAML, as\n"
               "`" CLI_SNAPSHOT_COMMAND "` prints it)\n"
               "and prints the plan. Nothing is evicted: no cluster is contacted. With\n"
               "--from-cluster the state and the policy's metrics are read from the cluster\n"
               "instead (the kubeconfig found as kubectl finds it); nothing is written to it.\n"
               "\nFlags:\n");
  flags_usage(out, defs);
  cli_exit_status(out, NULL);
}

/* A snapshot stands for a whole cluster: a List with nodes. One object (`kubectl get node
 * NAME -o json`) or a list without nodes would run a cycle that is skipped (it needs two ready
 * nodes) and print an empty plan, as if the policy had found nothing to do. */
static int snapshot_is_cluster(const model *m, const char *single_kind, dserr *err) {
  static const char how[] = CLI_SNAPSHOT_COMMAND " prints one";
  if (single_kind)
    return dserr_set(err, "one %s object, not a List: a snapshot is the whole cluster (%s)",
                     single_kind, how);
  if (!m->nodes.n)
    return dserr_set(err, "no nodes: a snapshot is the whole cluster, its nodes included (%s)",
                     how);
  return 0;
}

/* simulate, or explain (one pod's record instead of the plan) */
int simulate_run(int argc, char **argv, const char *who, bool explain) {
  sim_opts o = {NULL, NULL, NULL, NULL, "text", "text", NULL, 0, DECISION_EXAMPLES_DEFAULT, NULL,
                NULL, "auto", {0}};
  o.page = KUBE_LIST_PAGE_SIZE_DEFAULT;
  flag_def defs[] = {
      {"policy-config-file", NULL, FLAG_STRING, &o.policy, "DeschedulerPolicy file (descheduler/v1alpha2)", NULL},
      {"snapshot", NULL, FLAG_STRING, &o.snapshot, "cluster state: a v1 List file (JSON or YAML)", NULL},
      {"from-cluster", NULL, FLAG_BOOL, &o.from_cluster, "read the cluster state and the policy's metrics from the API server instead of --snapshot and --metrics (evicts nothing)", NULL},
      FLAG_DEF_KUBECONFIG_KUBECTL(&o.kubeconfig),
      FLAG_DEF_CONTEXT(&o.context),
      {"list-page-size", NULL, FLAG_INT, &o.page, "with --from-cluster: objects per LIST page", NULL},
      {"metrics", NULL, FLAG_STRINGS, &o.metrics, "actual utilization: a Prometheus instant-query response (curl <prometheus>/api/v1/query) or kubectl get --raw /apis/metrics.k8s.io/v1beta1/nodes (or pods) output", NULL},
      {"feature-gates", NULL, FLAG_STRING, &o.gates, "comma-separated key=true|false: EvictionsInBackground, AllAlpha, AllBeta", NULL},
      {"now", NULL, FLAG_STRING, &o.now, "the time of the cycle, RFC 3339 (pod ages are measured against it)", "the current time"},
      FLAG_DEF_OUTPUT(&o.output),
      FLAG_DEF_VERBOSITY(&o.v),
      {"logging-format", NULL, FLAG_STRING, &o.logging_format, "log format: text or json", NULL},
      {"decision-examples", NULL, FLAG_INT, &o.examples, "pods named per reason in the decision summary", NULL},
      {"report", NULL, FLAG_STRING, &o.report, "also write the plan as a self-contained HTML page to this file", NULL},
      {"kubedescheduler", NULL, FLAG_STRING, &o.kd_file, "OpenShift KubeDescheduler CR: run the policy it renders (instead of --policy-config-file)", NULL},
      {"prometheus-url", NULL, FLAG_STRING, &o.prometheus_url, "with --kubedescheduler: Prometheus URL instead of the prometheus-k8s Route", NULL},
      {"psi", NULL, FLAG_STRING, &o.psi, "with --kubedescheduler: PSI on the worker nodes: auto (unknown offline), present, absent", NULL},
      {NULL}};
  const char *pos[1];
  int npos;
  dserr err;
  int rc = flags_parse(defs, argc, argv, 2, pos, explain ? 1 : 0, &npos, &err);
  if (rc == 1) {
    if (explain)
      explain_usage(stdout, defs);
    else
      sim_usage(stdout, defs);
    return 0;
  }
  if (rc == 0 && explain && npos != 1) {
    fprintf(stderr, "%s: name the pod to explain, as NAMESPACE/NAME\n", who);
    return EXIT_CONFIG;
  }
  const char *explained = explain ? pos[0] : NULL;
  if (explained && (!strchr(explained, '/') || strchr(explained, '/') == explained ||
                    !strchr(explained, '/')[1])) {
    fprintf(stderr, "%s: \"%s\": expected a pod as NAMESPACE/NAME\n", who, explained);
    return EXIT_CONFIG;
  }
  if (rc < 0) {
    fprintf(stderr, "%s: %s\n", who, err.msg);
    return EXIT_CONFIG;
  }
  if (o.policy && o.kd_file) {
    fprintf(stderr, "%s: --policy-config-file and --kubedescheduler cannot be used "
                    "together: the policy is rendered from the KubeDescheduler\n", who);
    return EXIT_CONFIG;
  }
  if ((!o.policy || !*o.policy) && !o.kd_file) {
    fprintf(stderr, "%s: --policy-config-file is required (or --kubedescheduler)\n", who);
    return EXIT_CONFIG;
  }
  if (o.from_cluster && o.snapshot) {
    fprintf(stderr, "%s: --snapshot and --from-cluster cannot be used together: the cluster "
                    "state comes from one of them\n", who);
    return EXIT_CONFIG;
  }
  if (o.from_cluster && o.metrics.n) {
    fprintf(stderr, "%s: --metrics and --from-cluster cannot be used together: with "
                    "--from-cluster the policy's metrics are queried live\n", who);
    return EXIT_CONFIG;
  }
  const char *live_only = flags_find(defs, "kubeconfig")->seen        ? "--kubeconfig"
                          : flags_find(defs, "context")->seen         ? "--context"
                          : flags_find(defs, "list-page-size")->seen ? "--list-page-size"
                                                                      : NULL;
  if (!o.from_cluster && live_only) {
    fprintf(stderr, "%s: %s is only used with --from-cluster\n", who, live_only);
    return EXIT_CONFIG;
  }
  if (!o.from_cluster && (!o.snapshot || !*o.snapshot)) {
    fprintf(stderr, "%s: --snapshot is required (or --from-cluster)\n", who);
    return EXIT_CONFIG;
  }
  if (o.page < 1) {
    fprintf(stderr, "%s: --list-page-size must be at least 1\n", who);
    return EXIT_CONFIG;
  }
  if (o.examples < 0) {
    fprintf(stderr, "%s: --decision-examples must be 0 or more\n", who);
    return EXIT_CONFIG;
  }
  output_format format;
  if (output_parse(who, o.output, &format) < 0)
    return EXIT_CONFIG;
  if (strcmp(o.logging_format, "text") && strcmp(o.logging_format, "json")) {
    fprintf(stderr, "%s: --logging-format: expected text or json, got \"%s\"\n", who,
            o.logging_format);
    return EXIT_CONFIG;
  }
  log_set_verbosity((int)o.v);
  log_set_format(strcmp(o.logging_format, "json") ? LOG_TEXT : LOG_JSON);
  feature_gates gates;
  if (feature_gates_parse(o.gates, &gates, &err) < 0) {
    fprintf(stderr, "%s: --feature-gates: %s\n", who, err.msg);
    return EXIT_CONFIG;
  }
  int64_t now = (int64_t)time(NULL);
  if (o.now && time_parse_rfc3339(o.now, &now, NULL, &err) < 0) {
    fprintf(stderr, "%s: --now: %s\n", who, err.msg);
    return EXIT_CONFIG;
  }

  cycle_timings tm = {.list = -1, .evict = -1, .wait = -1};
  double t_start = time_mono_seconds();
  /* the decoders' windows and a plugin's tables are freed before the cycle ends */
  xalloc_map_large();
  model *m = model_new();
  /* As a live read: pod conditions only when a plugin of the policy reads them. The policy is
   * read for that once before the snapshot, quietly: the read after it (which looks priority
   * classes up in the snapshot) gives the messages and errors. When this first read fails (a
   * bad policy), or the file can be read only once (a pipe), the conditions are kept. A
   * KubeDescheduler's policy is rendered from the snapshot: it keeps them. */
  struct stat pst;
  if (o.policy && stat(o.policy, &pst) == 0 && S_ISREG(pst.st_mode)) {
    dserr ignored;
    plugin_env any = {pc_any_value, NULL};
    log_mute(true);
    policy *peek = policy_load(o.policy, plugin_lookup, &any, &ignored);
    log_mute(false);
    if (peek)
      m->keep_pod_conditions = fw_reads_pod_conditions(peek);
    policy_free(peek);
  }
  kube_config *cfg = NULL;
  kube_client *client = NULL;
  char route_error[1024] = "";
  if (o.from_cluster) {
    client = cli_connect(explain ? "explain" : "simulate", o.kubeconfig, o.context, &cfg);
    if (!client) {
      model_free(m);
      return EXIT_CONFIG;
    }
    snprintf(o.source, sizeof o.source, "the cluster at %s", cfg->server);
    kube_discovery d;
    if (kube_discover(client, &d, &err) < 0 ||
        kube_read_cluster(client, m, d.kubevirt, (int)o.page, &err) < 0 ||
        (o.kd_file &&
         kube_read_openshift_objects(client, m, route_error, sizeof route_error, &err) < 0) ||
        model_finish(m, &err) < 0) {
      fprintf(stderr, "%s: cannot read the cluster: %s\n", who, err.msg);
      model_free(m);
      kube_client_free(client);
      kube_config_free(cfg);
      return EXIT_FAILED;
    }
  } else {
    snprintf(o.source, sizeof o.source, "snapshot %s", o.snapshot);
    const char *single = NULL;
    if (decode_snapshot_file_shape(m, o.snapshot, &single, &err) < 0 ||
        model_finish(m, &err) < 0 || snapshot_is_cluster(m, single, &err) < 0) {
      if (strncmp(err.msg, o.snapshot, strlen(o.snapshot)) != 0)
        dserr_prefix(&err, "%s", o.snapshot);
      fprintf(stderr, "%s: snapshot: %s\n", who, err.msg);
      model_free(m);
      return EXIT_CONFIG;
    }
  }
  tm.decode = time_mono_seconds() - t_start;
  /* what decoding freed (windows, trees, the second thread's scratch) goes back before deciding */
  xrelease();
  tm.pods = m->pods.n;
  tm.model = model_bytes(m);
  tm.objects = m->nodes.n + m->pods.n + m->namespaces.n + m->pdbs.n + m->priority_classes.n +
               m->pvcs.n + m->vmis.n + m->vmims.n + m->skipped;
  plugin_env env = {pc_value, m};
  policy *pol = NULL;
  if (o.kd_file) {
    /* the snapshot (or the cluster read) stands for the cluster the operator reads */
    kdsrc_options ko = {o.kd_file, NULL, o.prometheus_url, o.psi, false};
    kdsrc *src = kdsrc_new(&ko, &err);
    if (src && kdsrc_render(src, m, client, o.from_cluster ? route_error : NULL, &err) >= 0) {
      const kd_result *r = kdsrc_result(src);
      if (!flags_find(defs, "v")->seen)
        log_set_verbosity(r->verbosity);
      kdsrc_log_warnings(src, false);
      if (!flags_find(defs, "feature-gates")->seen)
        gates.evictions_in_background = r->evictions_in_background;
      pol = kdsrc_load_policy(src, &env, &err);
    }
    kdsrc_free(src);
  } else {
    pol = policy_load(o.policy, plugin_lookup, &env, &err);
  }
  int status = 0;
  usage_live *usage = NULL;
  if (!pol) {
    cli_error(who, err.msg);
    status = EXIT_CONFIG;
    goto out;
  }
  if (o.from_cluster) {
    /* as a live cycle: a source that does not answer is left in the model for the plugins
     * to report (and to evict nothing by); only a Prometheus token that cannot be read stops */
    usage = usage_live_new(pol, client);
    if (usage_live_fetch(usage, m, &err) < 0) {
      fprintf(stderr, "%s: metrics: %s\n", who, err.msg);
      status = EXIT_FAILED;
      goto out;
    }
  } else if (usage_load_files(m, pol, o.metrics.items, o.metrics.n, &err) < 0) {
    fprintf(stderr, "%s: --metrics: %s\n", who, err.msg);
    status = EXIT_CONFIG;
    goto out;
  }

  bg_cache bg = {0};
  if (gates.evictions_in_background)
    bg_sync(&bg, m, now, true);
  sim_sink sink;
  sim_sink_init(&sink, m);
  decisions *dec = decisions_new(m);
  fw_options opt = {gates.evictions_in_background, now, dec};
  fw_result res;
  double t_decide = time_mono_seconds();
  int frc = fw_run_cycle(pol, m, &bg, &sink.base, &opt, &res, &err);
  tm.decide = time_mono_seconds() - t_decide;
  tm.total = time_mono_seconds() - t_start;
  timings_log(&tm);
  if (frc < 0) {
    fprintf(stderr, "%s: %s\n", who, err.msg);
    status = EXIT_CONFIG;
  } else {
    if (explained) {
      status = explain_print(m, dec, explained, who, format);
    } else if (format != OUTPUT_TEXT) {
      strbuf sb = {0};
      plan_json(&sb, m, &res, dec, (size_t)o.examples);
      if (output_document(who, format, &sb, stdout) < 0)
        status = EXIT_FAILED;
      sb_free(&sb);
    } else {
      print_text(m, &res, &o, gates.evictions_in_background, dec);
    }
    if (o.report && write_report(&o, m, &res, dec) < 0)
      status = EXIT_CONFIG;
  }
  fw_result_free(&res);
  decisions_free(dec);
  sim_sink_free(&sink);
  bg_clear(&bg);
out:
  usage_live_free(usage);
  policy_free(pol);
  model_free(m);
  kube_client_free(client);
  kube_config_free(cfg);
  return status;
}

int cmd_simulate(int argc, char **argv) {
  return simulate_run(argc, argv, "descheduler simulate", false);
}
