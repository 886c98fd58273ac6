/* check.c - the runbook's compatibility suite: reads (check_read) and pure evaluation
 * (check_evaluate); see check.h.
 *
 * Item by item, in the order an administrator installs things:
 *   configmap, policy          the labelled ConfigMap and the DeschedulerPolicy in it, loaded
 *                              by this program's own loader (upstream's validation messages)
 *   kubedescheduler           the OpenShift operator's CR, when its CRD is installed, rendered
 *                              into the policy it stands for (policy/kubedescheduler.h)
 *   workload, policy-file, feature-gate, verbosity, dry-run, interval, suspended
 *                              the CronJob or Deployment and the flags it passes
 *   kubevirt-strategy, kubevirt-limits, hco-strategy, hco-limits
 *   vmi-strategy, vmi-external, vmi-migratable, vmis
 *                              running VMIs KubeVirt would not simply live-migrate
 *   local-storage, pvc-protection
 *                              DefaultEvictor protections that keep every VM in place
 *   plan, plan-vm-stops       one cycle of the policy on the cluster as read, with VMSafety's
 *                              requireLiveMigration off (what upstream's descheduler would do),
 *                              and each launcher it would evict whose VM would stop. */
#include "check.h"

#include "../framework/framework.h"
#include "../kube/cluster.h"
#include "../kube/openshift.h"
#include "../plugins/defaultevictor.h"
#include "../plugins/registry.h"
#include "../plugins/vmsafety.h"
#include "../policy/featuregates.h"
#include "../policy/kubedescheduler.h"
#include "../policy/policy.h"
#include "../kubevirt/simsink.h"
#include "../kubevirt/vm.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------- the report ---------- */

check_report *check_report_new(const char *descheduler_version) {
  arena *a = arena_new(64 * 1024);
  check_report *r = ARENA_NEW(a, check_report);
  r->mem = a;
  r->descheduler_version = arena_strdup(a, descheduler_version ? descheduler_version : "");
  r->server_version = r->kubevirt_version = r->hco_version = "";
  return r;
}

void check_report_free(check_report *r) {
  if (!r)
    return;
  free(r->rows);
  arena_free(r->mem);
}

static const char *vfmt(arena *a, const char *fmt, va_list ap) {
  strbuf sb = {0};
  sb_vprintf(&sb, fmt, ap);
  const char *s = arena_strdup(a, sb_str(&sb));
  sb_free(&sb);
  return s;
}

static const char *afmt(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *afmt(arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *s = vfmt(a, fmt, ap);
  va_end(ap);
  return s;
}

void check_add(check_report *r, const char *item, check_status st, const char *object,
               const char *fmt, ...) {
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 32;
    r->rows = realloc(r->rows, r->cap * sizeof *r->rows);
    if (!r->rows)
      abort();
  }
  va_list ap;
  va_start(ap, fmt);
  r->rows[r->n++] = (check_row){arena_strdup(r->mem, item), st,
                                arena_strdup(r->mem, object ? object : ""), vfmt(r->mem, fmt, ap)};
  va_end(ap);
}

size_t check_count(const check_report *r, check_status st) {
  size_t n = 0;
  for (size_t i = 0; i < r->n; i++)
    n += r->rows[i].status == st;
  return n;
}

const char *check_status_name(check_status st) {
  return st == CHECK_PASS ? "PASS" : st == CHECK_WARN ? "WARN" : "FAIL";
}

const check_row *check_find(const check_report *r, const char *item, const char *object) {
  for (size_t i = 0; i < r->n; i++)
    if (!strcmp(r->rows[i].item, item) && (!object || strstr(r->rows[i].object, object)))
      return &r->rows[i];
  return NULL;
}

static void version_line(const check_report *r, strbuf *out) {
  sb_printf(out, "descheduler %s; Kubernetes %s; KubeVirt %s; HCO %s\n", r->descheduler_version,
            *r->server_version ? r->server_version : "unknown",
            *r->kubevirt_version ? r->kubevirt_version
            : r->kubevirt_present ? "present (its status has no observedKubeVirtVersion)"
                                  : "not found",
            *r->hco_version ? r->hco_version
            : r->hco_present ? "present (its status.versions has no operator version)"
                             : "not found");
}

void check_render_text(const check_report *r, strbuf *out) {
  version_line(r, out);
  int wi = 4, wo = 6;
  for (size_t i = 0; i < r->n; i++) {
    int li = (int)strlen(r->rows[i].item), lo = (int)strlen(r->rows[i].object);
    wi = li > wi ? li : wi;
    wo = lo > wo ? lo : wo;
  }
  if (wo > 60)
    wo = 60;
  sb_printf(out, "\n%-*s  %-6s  %-*s  %s\n", wi, "ITEM", "STATUS", wo, "OBJECT", "DETAIL");
  for (size_t i = 0; i < r->n; i++) {
    const check_row *row = &r->rows[i];
    sb_printf(out, "%-*s  %-6s  %-*s  %s\n", wi, row->item, check_status_name(row->status), wo,
              *row->object ? row->object : "-", row->detail);
  }
  size_t f = check_count(r, CHECK_FAIL), w = check_count(r, CHECK_WARN);
  sb_printf(out, "\n%zu passed, %zu warning%s, %zu failed: %s\n", check_count(r, CHECK_PASS), w,
            w == 1 ? "" : "s", f,
            f ? "fix the failed items before the descheduler moves VMs"
              : "the installation can rebalance VMs by live migration");
}

void check_render_json(const check_report *r, strbuf *out) {
  sb_append(out, "{\"versions\":{\"descheduler\":");
  sb_append_json_str(out, r->descheduler_version);
  sb_append(out, ",\"kubernetes\":");
  sb_append_json_str(out, r->server_version);
  sb_append(out, ",\"kubevirt\":");
  sb_append_json_str(out, r->kubevirt_version);
  sb_append(out, ",\"hco\":");
  sb_append_json_str(out, r->hco_version);
  sb_append(out, "},\"items\":[");
  for (size_t i = 0; i < r->n; i++) {
    const check_row *row = &r->rows[i];
    sb_append(out, i ? ",{\"item\":" : "{\"item\":");
    sb_append_json_str(out, row->item);
    sb_printf(out, ",\"status\":\"%s\",\"object\":",
              row->status == CHECK_PASS   ? "pass"
              : row->status == CHECK_WARN ? "warn"
                                          : "fail");
    sb_append_json_str(out, row->object);
    sb_append(out, ",\"detail\":");
    sb_append_json_str(out, row->detail);
    sb_appendc(out, '}');
  }
  sb_printf(out, "],\"summary\":{\"pass\":%zu,\"warn\":%zu,\"fail\":%zu}}\n",
            check_count(r, CHECK_PASS), check_count(r, CHECK_WARN), check_count(r, CHECK_FAIL));
}

/* ---------- document helpers ---------- */

static const char *meta(const doc_node *o, const char *key) {
  const char *s = doc_str(doc_path(o, "metadata", key, NULL));
  return s ? s : "";
}

static const char *obj_ref(arena *a, const char *kind, const doc_node *o) {
  const char *ns = meta(o, "namespace");
  return afmt(a, "%s %s%s%s", kind, ns, *ns ? "/" : "", meta(o, "name"));
}

/* a string member, or "" */
static const char *str_at(const doc_node *n, const char *key) {
  const char *s = doc_str(doc_get(n, key));
  return s ? s : "";
}

/* an integer member (-1 when absent or not a number) */
static long long int_at(const doc_node *n, const char *key) {
  const doc_node *v = doc_get(n, key);
  return v && v->type == DOC_INT ? (long long)v->v.i : -1;
}

static size_t seq_len(const doc_node *n) {
  return n && n->type == DOC_SEQ ? n->n : 0;
}

/* ---------- the workload: CronJob or Deployment, its container and flags ---------- */

typedef struct {
  const doc_node *obj;
  const char *kind, *ref;
  bool cronjob;
  const doc_node *pod_spec, *container;
  size_t nargv;
  const char **argv; /* command, then args */
  /* the flags the runbook relies on (NULL when absent) */
  const char *policy_file, *gates, *verbosity, *interval;
  bool dry_run;
  /* where --policy-config-file points */
  const char *cm_name, *cm_key, *mount_path;
  const char *mount_problem; /* NULL when the file is a key of a mounted ConfigMap */
} workload;

static const char *kind_of(const doc_node *o) {
  const char *k = doc_str(doc_get(o, "kind"));
  return k ? k : "";
}

/* `--name=value`, `--name value` (pflag; `_` read as `-`), and for v also `-v=N`, `-v N`,
 * `-vN`. The last occurrence wins, as pflag's. Returns NULL when absent; *bare is set when the
 * flag came without `=` (for booleans). */
static const char *flag_value(const char *const *argv, size_t n, const char *name, bool boolean,
                              bool *present) {
  const char *val = NULL;
  *present = false;
  size_t nlen = strlen(name);
  for (size_t i = 0; i < n; i++) {
    const char *a = argv[i];
    const char *body;
    if (a[0] == '-' && a[1] == '-')
      body = a + 2;
    else if (a[0] == '-' && !strcmp(name, "v") && a[1] == 'v')
      body = a + 1;
    else
      continue;
    char fname[128];
    size_t k = 0;
    while (body[k] && body[k] != '=' && k < sizeof fname - 1) {
      fname[k] = body[k] == '_' ? '-' : body[k];
      k++;
    }
    fname[k] = 0;
    bool short_digits = body == a + 1 && k > 1 && isdigit((unsigned char)fname[1]);
    if (short_digits) { /* -v3 */
      *present = true;
      val = body + 1;
      continue;
    }
    if (k != nlen || strcmp(fname, name))
      continue;
    *present = true;
    if (body[k] == '=')
      val = body + k + 1;
    else if (boolean)
      val = "true";
    else if (i + 1 < n)
      val = argv[++i];
    else
      val = "";
  }
  return val;
}

static void collect_argv(arena *a, workload *w) {
  const doc_node *cmd = doc_get(w->container, "command"), *args = doc_get(w->container, "args");
  size_t n = seq_len(cmd) + seq_len(args);
  w->argv = ARENA_NEWN(a, const char *, n ? n : 1);
  for (size_t i = 0; i < seq_len(cmd); i++)
    if (doc_str(cmd->items[i]))
      w->argv[w->nargv++] = doc_str(cmd->items[i]);
  for (size_t i = 0; i < seq_len(args); i++)
    if (doc_str(args->items[i]))
      w->argv[w->nargv++] = doc_str(args->items[i]);
}

static bool argv_mentions(const doc_node *container, const char *needle) {
  const char *keys[] = {"command", "args"};
  for (int k = 0; k < 2; k++) {
    const doc_node *l = doc_get(container, keys[k]);
    for (size_t i = 0; i < seq_len(l); i++)
      if (doc_str(l->items[i]) && strstr(doc_str(l->items[i]), needle))
        return true;
  }
  return false;
}

/* The ConfigMap key behind --policy-config-file: the container's volumeMount whose path holds
 * the file, the pod volume it names, and that volume's configMap (items map keys to paths). */
static void resolve_mount(arena *a, workload *w) {
  const char *file = w->policy_file;
  const doc_node *mounts = doc_get(w->container, "volumeMounts");
  const doc_node *best = NULL;
  size_t best_len = 0;
  const char *rel = NULL;
  for (size_t i = 0; i < seq_len(mounts); i++) {
    const doc_node *mnt = mounts->items[i];
    const char *mp = str_at(mnt, "mountPath"), *sub = str_at(mnt, "subPath");
    size_t l = strlen(mp);
    while (l > 1 && mp[l - 1] == '/')
      l--;
    if (*sub && !strcmp(mp, file)) { /* a single file mounted with subPath */
      best = mnt;
      best_len = l;
      rel = sub;
      break;
    }
    if (!*sub && l && !strncmp(file, mp, l) && file[l] == '/' && l > best_len) {
      best = mnt;
      best_len = l;
      rel = file + l + 1;
    }
  }
  if (!best) {
    w->mount_problem =
        afmt(a, "no volumeMount of container \"%s\" holds %s", str_at(w->container, "name"), file);
    return;
  }
  w->mount_path = str_at(best, "mountPath");
  const char *vol = str_at(best, "name");
  const doc_node *vols = doc_get(w->pod_spec, "volumes"), *v = NULL;
  for (size_t i = 0; i < seq_len(vols); i++)
    if (!strcmp(str_at(vols->items[i], "name"), vol))
      v = vols->items[i];
  const doc_node *cm = doc_get(v, "configMap");
  if (!cm) {
    w->mount_problem = afmt(a, "%s is mounted from volume \"%s\", which is not a ConfigMap volume",
                            w->mount_path, vol);
    return;
  }
  w->cm_name = str_at(cm, "name");
  const doc_node *items = doc_get(cm, "items");
  if (seq_len(items)) {
    for (size_t i = 0; i < items->n; i++)
      if (!strcmp(str_at(items->items[i], "path"), rel)) {
        w->cm_key = str_at(items->items[i], "key");
        return;
      }
    w->mount_problem = afmt(a, "the items of ConfigMap volume \"%s\" map no key to %s", vol, rel);
    return;
  }
  if (strchr(rel, '/')) {
    w->mount_problem =
        afmt(a, "%s is below a subdirectory of the ConfigMap mount %s", file, w->mount_path);
    return;
  }
  w->cm_key = rel;
}

static bool analyse_workload(arena *a, const doc_node *o, workload *w) {
  memset(w, 0, sizeof *w);
  w->obj = o;
  w->kind = kind_of(o);
  w->cronjob = !strcmp(w->kind, "CronJob");
  w->ref = obj_ref(a, w->kind, o);
  w->pod_spec = w->cronjob ? doc_path(o, "spec", "jobTemplate", "spec", "template", "spec", NULL)
                           : doc_path(o, "spec", "template", "spec", NULL);
  const doc_node *cs = doc_get(w->pod_spec, "containers");
  for (size_t i = 0; i < seq_len(cs) && !w->container; i++)
    if (argv_mentions(cs->items[i], "--policy-config-file"))
      w->container = cs->items[i];
  for (size_t i = 0; i < seq_len(cs) && !w->container; i++)
    if (!strcmp(str_at(cs->items[i], "name"), "descheduler"))
      w->container = cs->items[i];
  if (!w->container && seq_len(cs))
    w->container = cs->items[0];
  if (!w->container)
    return false;
  collect_argv(a, w);
  const char *const *av = w->argv;
  bool present;
  w->policy_file = flag_value(av, w->nargv, "policy-config-file", false, &present);
  w->gates = flag_value(av, w->nargv, "feature-gates", false, &present);
  w->verbosity = flag_value(av, w->nargv, "v", false, &present);
  w->interval = flag_value(av, w->nargv, "descheduling-interval", false, &present);
  const char *dry = flag_value(av, w->nargv, "dry-run", true, &present);
  bool b = false;
  w->dry_run = present && go_parse_bool(dry, &b) == 0 && b;
  if (w->policy_file && *w->policy_file)
    resolve_mount(a, w);
  return true;
}

/* a labelled ConfigMap named name in the workload's namespace */
static const doc_node *mounted_configmap(const check_inputs *in, const workload *w) {
  if (!w->cm_name)
    return NULL;
  for (size_t i = 0; i < in->nconfigmaps; i++)
    if (!strcmp(meta(in->configmaps[i], "name"), w->cm_name) &&
        !strcmp(meta(in->configmaps[i], "namespace"), meta(w->obj, "namespace")))
      return in->configmaps[i];
  return NULL;
}

/* Workloads are the labelled ones; when none is labelled, those that mount a labelled
 * ConfigMap. */
static size_t select_workloads(check_inputs *in, workload *out) {
  size_t n = 0;
  for (size_t i = 0; i < in->nworkloads; i++) {
    workload w;
    if (!analyse_workload(in->mem, in->workloads[i], &w))
      continue;
    if (!in->workloads_labelled && !mounted_configmap(in, &w))
      continue;
    out[n++] = w;
  }
  return n;
}

static void report_workload(check_inputs *in, check_report *r, const workload *w) {
  if (!w->policy_file || !*w->policy_file) {
    check_add(r, "policy-file", CHECK_FAIL, w->ref,
              "container \"%s\" passes no --policy-config-file: the descheduler runs no policy",
              str_at(w->container, "name"));
  } else if (w->mount_problem) {
    check_add(r, "policy-file", CHECK_FAIL, w->ref, "--policy-config-file=%s: %s", w->policy_file,
              w->mount_problem);
  } else {
    const doc_node *cm = mounted_configmap(in, w);
    const doc_node *data = doc_get(cm, "data");
    if (!cm)
      check_add(r, "policy-file", CHECK_WARN, w->ref,
                "--policy-config-file=%s reads ConfigMap %s, which is not labelled %s: its policy "
                "was not checked",
                w->policy_file, w->cm_name, CHECK_APP_LABEL);
    else if (!doc_str(doc_get(data, w->cm_key)))
      check_add(r, "policy-file", CHECK_FAIL, w->ref,
                "--policy-config-file=%s is key \"%s\" of ConfigMap %s, which has no such key",
                w->policy_file, w->cm_key, w->cm_name);
    else
      check_add(r, "policy-file", CHECK_PASS, w->ref,
                "--policy-config-file=%s is key \"%s\" of ConfigMap %s (mounted at %s)",
                w->policy_file, w->cm_key, w->cm_name, w->mount_path);
  }

  feature_gates g;
  dserr err;
  if (!w->gates)
    check_add(r, "feature-gate", CHECK_FAIL, w->ref,
              "no --feature-gates=EvictionsInBackground=true: KubeVirt's answer (429 \"Eviction "
              "triggered evacuation\") then counts as a failed eviction, the limits do not count "
              "the migrations earlier runs started that are still under way, and every run asks "
              "again for the same VMs");
  else if (feature_gates_parse(w->gates, &g, &err) < 0)
    check_add(r, "feature-gate", CHECK_FAIL, w->ref,
              "--feature-gates=%s: the descheduler refuses to start: %s", w->gates, err.msg);
  else if (!g.evictions_in_background)
    check_add(r, "feature-gate", CHECK_FAIL, w->ref,
              "--feature-gates=%s leaves EvictionsInBackground off: KubeVirt's answer counts as a "
              "failed eviction; pass --feature-gates=EvictionsInBackground=true",
              w->gates);
  else
    check_add(r, "feature-gate", CHECK_PASS, w->ref,
              "--feature-gates=%s: live migrations are requests in background", w->gates);

  char *end = NULL;
  long v = w->verbosity ? strtol(w->verbosity, &end, 10) : 0;
  if (w->verbosity && (!*w->verbosity || *end))
    check_add(r, "verbosity", CHECK_FAIL, w->ref,
              "--v=%s is not a number: the descheduler refuses to start", w->verbosity);
  else if (v < 3)
    check_add(r, "verbosity", CHECK_WARN, w->ref,
              "--v=%ld: the runbook's log lines (\"Eviction in background assumed\", \"Evicted "
              "pod\") are written at --v=3 and above",
              v);
  else
    check_add(r, "verbosity", CHECK_PASS, w->ref, "--v=%ld", v);

  if (w->dry_run)
    check_add(r, "dry-run", CHECK_WARN, w->ref, "--dry-run: nothing is evicted, no VM moves");
  if (w->interval && *w->interval && strcmp(w->interval, "0") && strcmp(w->interval, "0s") &&
      w->cronjob)
    check_add(r, "interval", CHECK_WARN, w->ref,
              "--descheduling-interval=%s in a CronJob: the Job never ends and the next runs "
              "pile up; a CronJob runs one cycle (interval 0)",
              w->interval);
  if (!w->cronjob &&
      (!w->interval || !*w->interval || !strcmp(w->interval, "0") || !strcmp(w->interval, "0s")))
    check_add(r, "interval", CHECK_WARN, w->ref,
              "no --descheduling-interval in a Deployment: its pod runs one cycle, exits and is "
              "restarted in a loop");

  const doc_node *suspend = doc_path(w->obj, "spec", "suspend", NULL);
  long long replicas = int_at(doc_get(w->obj, "spec"), "replicas");
  if (w->cronjob && suspend && suspend->type == DOC_BOOL && suspend->v.b)
    check_add(r, "suspended", CHECK_WARN, w->ref,
              "spec.suspend is true: no run starts (descheduler resume)");
  if (!w->cronjob && replicas == 0)
    check_add(r, "suspended", CHECK_WARN, w->ref,
              "scaled to 0 replicas: nothing runs (descheduler resume)");
}

/* ---------- policies ---------- */

static int pc_from_model(void *ctx, const char *name, int32_t *value, dserr *err) {
  const priority_class_obj *pc = ctx ? model_find_priority_class(ctx, name) : NULL;
  if (!pc)
    return dserr_set(err, "priorityclasses.scheduling.k8s.io \"%s\" not found", name);
  *value = pc->value;
  return 0;
}

typedef struct {
  const doc_node *cm; /* NULL for a KubeDescheduler CR's policy */
  const char *ref, *key;
  policy *pol; /* NULL when it does not load */
  int gate;    /* a CR's EvictionsInBackground (0 or 1); -1: the workload's flags say */
} loaded_policy;

static void load_policies(check_inputs *in, check_report *r, const workload *ws, size_t nw,
                          loaded_policy *out) {
  for (size_t i = 0; i < in->nconfigmaps; i++) {
    const doc_node *cm = in->configmaps[i];
    loaded_policy *lp = &out[i];
    lp->cm = cm;
    lp->gate = -1;
    lp->ref = obj_ref(in->mem, "ConfigMap", cm);
    lp->key = "policy.yaml";
    for (size_t k = 0; k < nw; k++)
      if (ws[k].cm_key && mounted_configmap(in, &ws[k]) == cm)
        lp->key = ws[k].cm_key;
    const doc_node *data = doc_get(cm, "data");
    const char *text = doc_str(doc_get(data, lp->key));
    if (!text) {
      strbuf keys = {0};
      for (size_t k = 0; data && data->type == DOC_MAP && k < data->n; k++)
        sb_printf(&keys, "%s%s", k ? ", " : "", data->pairs[k].key);
      check_add(r, "configmap", CHECK_FAIL, lp->ref, "no key \"%s\" (keys: %s)", lp->key,
                keys.len ? sb_str(&keys) : "none");
      sb_free(&keys);
      continue;
    }
    check_add(r, "configmap", CHECK_PASS, lp->ref, "labelled %s, key \"%s\"", CHECK_APP_LABEL,
              lp->key);
    plugin_env env = {pc_from_model, in->m};
    dserr err;
    const char *name = afmt(in->mem, "%s key %s", lp->ref, lp->key);
    lp->pol = policy_load_string(name, text, plugin_lookup, &env, &err);
    if (!lp->pol) {
      check_add(r, "policy", CHECK_FAIL, lp->ref,
                "does not load as a DeschedulerPolicy, so every run would fail: %s", err.msg);
      continue;
    }
    /* upstream drops a field it does not know, and so does the descheduler (it logs a
     * warning nobody may read): a misspelt limit is no limit */
    for (size_t k = 0; k < lp->pol->nignored; k++)
      check_add(r, "policy", CHECK_WARN, lp->ref,
                "%s: field %s is ignored (%s), as upstream ignores it: it has no effect",
                name, lp->pol->ignored[k].field, lp->pol->ignored[k].reason);
    if (!lp->pol->nprofiles) {
      check_add(r, "policy", CHECK_FAIL, lp->ref,
                "the DeschedulerPolicy has no profiles: the descheduler would do nothing");
      continue;
    }
    strbuf names = {0};
    for (size_t k = 0; k < lp->pol->nprofiles; k++)
      sb_printf(&names, "%s%s", k ? ", " : "", lp->pol->profiles[k].name);
    check_add(r, "policy", CHECK_PASS, lp->ref, "a DeschedulerPolicy with %zu profile%s: %s",
              lp->pol->nprofiles, lp->pol->nprofiles == 1 ? "" : "s", sb_str(&names));
    sb_free(&names);
  }
}

/* ---------- KubeDescheduler ---------- */

/* Renders each KubeDescheduler CR as the OpenShift operator would (policy/kubedescheduler.h)
 * and loads the policy it stands for, so the protections and the plan below can judge it like
 * a ConfigMap's. out[i].pol stays NULL when CR i does not render or load. */
static void render_kubedeschedulers(check_inputs *in, check_report *r, loaded_policy *out) {
  if (!in->kubedescheduler_crd) {
    check_add(r, "kubedescheduler", CHECK_PASS, "",
              "CRD %s is not installed: the policy comes from the ConfigMap",
              CHECK_KUBEDESCHEDULER_CRD);
    return;
  }
  if (!in->nkubedeschedulers)
    check_add(r, "kubedescheduler", CHECK_PASS, "",
              "CRD %s is installed, no KubeDescheduler CR exists", CHECK_KUBEDESCHEDULER_CRD);
  for (size_t i = 0; i < in->nkubedeschedulers; i++) {
    const doc_node *cr = in->kubedeschedulers[i];
    loaded_policy *lp = &out[i];
    lp->ref = obj_ref(in->mem, "KubeDescheduler", cr);
    lp->gate = -1;
    kd_spec spec;
    kd_result res;
    dserr err;
    if (kd_parse(in->mem, lp->ref, cr, &spec, &err) < 0) {
      check_add(r, "kubedescheduler", CHECK_FAIL, lp->ref, "not a valid KubeDescheduler: %s",
                err.msg);
      continue;
    }
    if (!in->m) {
      check_add(r, "kubedescheduler", CHECK_WARN, lp->ref,
                "not rendered: the cluster (namespaces, nodes) could not be read");
      continue;
    }
    kd_facts facts;
    kd_facts_from_model(in->mem, in->m, &facts);
    facts.route_error = in->route_error;
    if (kd_render(in->mem, &spec, &facts, &res, &err) < 0) {
      check_add(r, "kubedescheduler", CHECK_FAIL, lp->ref,
                "the operator refuses this CR and runs no descheduler: %s", err.msg);
      continue;
    }
    strbuf yaml = {0};
    plugin_env env = {pc_from_model, in->m};
    if (kd_policy_yaml(&res, &yaml, &err) == 0)
      lp->pol = policy_load_string(afmt(in->mem, "the policy %s renders", lp->ref),
                                   sb_str(&yaml), plugin_lookup, &env, &err);
    sb_free(&yaml);
    if (!lp->pol) {
      check_add(r, "kubedescheduler", CHECK_FAIL, lp->ref,
                "the policy it renders does not load: %s", err.msg);
      continue;
    }
    lp->gate = res.evictions_in_background;
    strbuf names = {0};
    for (size_t k = 0; k < spec.nprofiles; k++)
      sb_printf(&names, "%s%s", k ? ", " : "", spec.profiles[k]);
    bool managed = !spec.management_state || !strcmp(spec.management_state, "Managed");
    check_status st = res.dry_run || !managed ? CHECK_WARN : CHECK_PASS;
    check_add(r, "kubedescheduler", st, lp->ref,
              "renders a DeschedulerPolicy with %zu profile%s (%s), a cycle every %llds%s%s",
              lp->pol->nprofiles, lp->pol->nprofiles == 1 ? "" : "s", sb_str(&names),
              (long long)res.interval_seconds,
              res.dry_run ? "; mode Predictive runs it with --dry-run, so nothing moves "
                            "(spec.mode: Automatic)"
                          : "",
              managed ? ""
                      : afmt(in->mem, "; managementState %s: the operator does not run it",
                             spec.management_state));
    sb_free(&names);
    for (size_t k = 0; k < res.nwarnings; k++)
      check_add(r, "kubedescheduler", CHECK_WARN, lp->ref, "%s", res.warnings[k]);
    if (res.kubevirt_profile)
      check_add(r, "feature-gate", res.evictions_in_background ? CHECK_PASS : CHECK_FAIL, lp->ref,
                res.evictions_in_background
                    ? "the operator passes --feature-gates=EvictionsInBackground=true: live "
                      "migrations are requests in background"
                    : "the rendered command line leaves EvictionsInBackground off: KubeVirt's "
                      "answer counts as a failed eviction (profileCustomizations."
                      "devEnableEvictionsInBackground: true)");
  }
}

/* ---------- KubeVirt and HCO ---------- */

static void report_strategy(check_report *r, const char *item, const char *object,
                            const char *field, const char *s) {
  if (!*s)
    check_add(r, item, CHECK_FAIL, object,
              "%s is unset: KubeVirt's default None applies, so evicting a launcher deletes it "
              "and the VM stops; set it to LiveMigrate",
              field);
  else if (!strcmp(s, "LiveMigrate"))
    check_add(r, item, CHECK_PASS, object,
              "%s LiveMigrate: evicting a launcher live-migrates its VM", field);
  else if (!strcmp(s, "LiveMigrateIfPossible"))
    check_add(r, item, CHECK_WARN, object,
              "%s LiveMigrateIfPossible: a VM that cannot live-migrate is stopped when its "
              "launcher is evicted",
              field);
  else if (!strcmp(s, "External"))
    check_add(r, item, CHECK_WARN, object,
              "%s External: evictions are handed to an external controller; KubeVirt creates no "
              "migration",
              field);
  else if (!strcmp(s, "None"))
    check_add(r, item, CHECK_FAIL, object,
              "%s None: evicting a launcher deletes it and the VM stops; set it to LiveMigrate "
              "(VMs created meanwhile keep None until restarted)",
              field);
  else
    check_add(r, item, CHECK_FAIL, object, "%s \"%s\" is not a strategy KubeVirt knows", field, s);
}

static void report_kubevirt(const check_inputs *in, check_report *r) {
  if (!in->kubevirt_served) {
    check_add(
        r, "kubevirt-strategy", CHECK_FAIL, "",
        "kubevirt.io/v1 is not served: KubeVirt is not installed, no VM can be live-migrated");
    return;
  }
  if (!in->kubevirt) {
    check_add(r, "kubevirt-strategy", CHECK_FAIL, "", "no KubeVirt CR: KubeVirt is not deployed");
    return;
  }
  const char *ref = obj_ref(r->mem, "KubeVirt", in->kubevirt);
  const doc_node *conf = doc_path(in->kubevirt, "spec", "configuration", NULL);
  report_strategy(r, "kubevirt-strategy", ref, "spec.configuration.evictionStrategy",
                  str_at(conf, "evictionStrategy"));
  const doc_node *mig = doc_get(conf, "migrations");
  long long pc = int_at(mig, "parallelMigrationsPerCluster");
  long long pn = int_at(mig, "parallelOutboundMigrationsPerNode");
  check_add(r, "kubevirt-limits", CHECK_PASS, ref,
            "parallelMigrationsPerCluster %lld%s, parallelOutboundMigrationsPerNode %lld%s: "
            "more evacuations wait as Pending migrations",
            pc >= 0 ? pc : KUBEVIRT_DEFAULT_PARALLEL_PER_CLUSTER, pc >= 0 ? "" : " (default)",
            pn >= 0 ? pn : KUBEVIRT_DEFAULT_PARALLEL_OUTBOUND_PER_NODE,
            pn >= 0 ? "" : " (default)");
}

/* a migration limit read from a CR, or "unset" (int_at's -1) */
static const char *limit_text(arena *a, long long v) {
  return v < 0 ? "unset" : afmt(a, "%lld", v);
}

static void report_hco(const check_inputs *in, check_report *r) {
  if (!in->hco_served || !in->hco) {
    check_add(r, "hco-strategy", CHECK_PASS, "",
              "no HyperConverged CR: KubeVirt's own CR is the configuration");
    return;
  }
  const char *ref = obj_ref(r->mem, "HyperConverged", in->hco);
  const char *s = str_at(doc_get(in->hco, "spec"), "evictionStrategy");
  const char *kv = in->kubevirt ? str_at(doc_path(in->kubevirt, "spec", "configuration", NULL),
                                         "evictionStrategy")
                                : "";
  if (!*s)
    check_add(r, "hco-strategy", CHECK_WARN, ref,
              "spec.evictionStrategy is unset: HCO fills it on the CR's next write (LiveMigrate "
              "with more than one worker, else None); set it to LiveMigrate");
  else if (in->kubevirt && strcmp(s, kv))
    check_add(r, "hco-strategy", CHECK_WARN, ref,
              "spec.evictionStrategy %s but the KubeVirt CR has %s: HCO overwrites the KubeVirt CR "
              "on its next reconcile",
              s, *kv ? kv : "none");
  else
    report_strategy(r, "hco-strategy", ref, "spec.evictionStrategy", s);
  const doc_node *lm = doc_path(in->hco, "spec", "liveMigrationConfig", NULL);
  const doc_node *kvm = doc_path(in->kubevirt, "spec", "configuration", "migrations", NULL);
  long long pc = int_at(lm, "parallelMigrationsPerCluster");
  long long pn = int_at(lm, "parallelOutboundMigrationsPerNode");
  long long kpc = int_at(kvm, "parallelMigrationsPerCluster");
  long long kpn = int_at(kvm, "parallelOutboundMigrationsPerNode");
  if (in->kubevirt && ((pc >= 0 && pc != kpc) || (pn >= 0 && pn != kpn)))
    check_add(r, "hco-limits", CHECK_WARN, ref,
              "liveMigrationConfig %s per cluster, %s per node differs from the KubeVirt CR "
              "(%s, %s): HCO overwrites the KubeVirt CR on its next reconcile",
              limit_text(r->mem, pc), limit_text(r->mem, pn), limit_text(r->mem, kpc),
              limit_text(r->mem, kpn));
  else if (pc < 0 && pn < 0)
    check_add(r, "hco-limits", CHECK_PASS, ref,
              "liveMigrationConfig sets neither parallelMigrationsPerCluster nor "
              "parallelOutboundMigrationsPerNode: the KubeVirt CR's limits apply");
  else
    check_add(r, "hco-limits", CHECK_PASS, ref,
              "liveMigrationConfig parallelMigrationsPerCluster %s, "
              "parallelOutboundMigrationsPerNode %s",
              limit_text(r->mem, pc), limit_text(r->mem, pn));
}

/* ---------- running VMIs ---------- */

static int launcher_cmp(const void *a, const void *b) {
  const pod *x = *(const pod *const *)a, *y = *(const pod *const *)b;
  int c = strcmp(x->ns, y->ns);
  return c ? c : strcmp(pod_x(x)->kubevirt_domain, pod_x(y)->kubevirt_domain);
}

/* non-terminal launchers naming their VMI, sorted by (namespace, VMI) */
static const pod **launchers_by_vmi(const model *m, arena *a, size_t *n) {
  const pod **v = ARENA_NEWN(a, const pod *, m->pods.n ? m->pods.n : 1);
  *n = 0;
  for (size_t i = 0; i < m->pods.n; i++) {
    const pod *p = m->pods.items[i];
    if (kubevirt_is_launcher(p) && !pod_is_terminal(p) && (p->annotations & ANN_KUBEVIRT_DOMAIN))
      v[(*n)++] = p;
  }
  qsort(v, *n, sizeof *v, launcher_cmp);
  return v;
}

/* the VMI's launcher on its node, or NULL */
static const pod *launcher_of(const pod **ls, size_t n, const vmi_obj *v) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(ls[mid]->ns, v->ns);
    if (!c)
      c = strcmp(pod_x(ls[mid])->kubevirt_domain, v->name);
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo;
       i < n && !strcmp(ls[i]->ns, v->ns) && !strcmp(pod_x(ls[i])->kubevirt_domain, v->name); i++)
    if (!strcmp(ls[i]->node_name, v->node_name))
      return ls[i];
  return NULL;
}

static void report_vmis(check_inputs *in, check_report *r) {
  model *m = in->m;
  if (!m || !in->kubevirt_served)
    return;
  strategy_source src;
  const char *dflt = kubevirt_vmi_strategy(m, NULL, &src);
  size_t nl, running = 0, flagged = 0;
  const pod **ls = launchers_by_vmi(m, in->mem, &nl);
  for (size_t i = 0; i < m->vmis.n; i++) {
    const vmi_obj *v = m->vmis.items[i];
    if (strcmp(v->phase, "Running"))
      continue;
    running++;
    const char *own = v->eviction_strategy;
    const char *eff = kubevirt_vmi_strategy(m, v, &src);
    bool differs = *own && strcmp(own, dflt);
    bool external = !strcmp(eff, "External");
    if (!differs && !external && v->live_migratable == 1)
      continue;
    flagged++;
    const char *ref = afmt(r->mem, "VMI %s/%s", v->ns, v->name);
    const pod *p = launcher_of(ls, nl, v);
    vm_view view;
    memset(&view, 0, sizeof view);
    if (p)
      kubevirt_view(m, p, &view);
    const char *mig = v->live_migratable == 1   ? "live-migratable"
                      : v->live_migratable == 0 ? "not live-migratable"
                                                : "no LiveMigratable condition";
    const char *reason =
        v->live_migratable == 0 && v->live_migratable_reason && *v->live_migratable_reason
            ? afmt(r->mem, " (%s)", v->live_migratable_reason)
            : "";
    if (external) {
      check_add(r, "vmi-external", CHECK_WARN, ref,
                "eviction strategy External%s: drained by its external controller (e.g. a hosted "
                "cluster's NodePool); an eviction marks the VMI and KubeVirt creates no migration",
                *own ? "" : " (cluster default)");
      continue;
    }
    if (!p) {
      check_add(r, differs ? "vmi-strategy" : "vmi-migratable", CHECK_WARN, ref,
                "eviction strategy %s (%s), %s%s; no running launcher on %s was found", eff,
                *own ? "recorded on the VMI" : "cluster default", mig, reason, v->node_name);
      continue;
    }
    const char *item = differs ? "vmi-strategy" : "vmi-migratable";
    const char *head =
        differs ? afmt(r->mem,
                       "recorded evictionStrategy %s, the cluster default is %s (a VMI keeps "
                       "the strategy it was created with)",
                       own, dflt)
                : afmt(r->mem, "eviction strategy %s, %s%s", eff, mig, reason);
    switch (view.effect) {
    case VM_EFFECT_STOP:
      check_add(r, item, CHECK_FAIL, ref,
                "%s: evicting its launcher stops the VM (%s); restart the VM so its VMI takes "
                "the cluster default, or set spec.template.spec.evictionStrategy on the "
                "VirtualMachine",
                head, view.why);
      break;
    case VM_EFFECT_REFUSED:
      check_add(r, item, CHECK_WARN, ref,
                "%s: KubeVirt refuses its eviction (\"%s\"), the VM stays where it is", head,
                view.why);
      break;
    default:
      check_add(r, item, CHECK_WARN, ref, "%s: an eviction still live-migrates it (%s)", head,
                kubevirt_effect_name(view.effect));
      break;
    }
  }
  if (!flagged)
    check_add(r, "vmis", CHECK_PASS, "",
              "%zu running VMI%s: every one follows the cluster default %s and is live-migratable",
              running, running == 1 ? "" : "s", dflt);
}

/* ---------- DefaultEvictor protections ---------- */

/* a profile that can evict at all (something enabled at deschedule or balance) */
static bool profile_acts(const profile *pr) {
  return pr->deschedule.n || pr->balance.n;
}

static void report_protections(check_inputs *in, check_report *r, const loaded_policy *lp) {
  model *m = in->m;
  if (!m || !lp || !lp->pol)
    return;
  for (size_t k = 0; k < lp->pol->nprofiles; k++) {
    const profile *pr = &lp->pol->profiles[k];
    defaultevictor_protections dp;
    if (!profile_acts(pr) || !defaultevictor_protections_of(pr, &dp))
      continue;
    const char *ref = afmt(r->mem, "profile %s (%s)", pr->name, lp->ref);
    /* the VMs this profile may pick, and whether it picks anything else */
    size_t cand = 0, local = 0, pvc = 0, others = 0;
    for (size_t i = 0; i < m->pods.n; i++) {
      const pod *p = m->pods.items[i];
      if (pod_is_terminal(p))
        continue;
      bool selected = !dp.label_selector || selector_matches(dp.label_selector, &p->labels);
      if (!selected)
        continue;
      if (!kubevirt_is_launcher(p)) {
        others++;
        continue;
      }
      cand++;
      local += p->local_storage;
      pvc += defaultevictor_pvc_protects(pr, m, p, NULL, 0);
    }
    bool vm_only = dp.label_selector && !others;
    const char *scope = vm_only ? "its labelSelector picks only VMs" : "it also evicts other pods";
    if (!dp.local_storage)
      check_add(r, "local-storage", CHECK_PASS, ref,
                "PodsWithLocalStorage is off: launchers (emptyDir volumes) may be evicted");
    else
      check_add(r, "local-storage", vm_only && cand ? CHECK_FAIL : CHECK_WARN, ref,
                "the DefaultEvictor keeps pods with local storage, and every virt-launcher has "
                "emptyDir volumes (%zu of %zu VMs here): no VM moves; %s, so set %s",
                local, cand, scope,
                dp.by_protections ? "podProtections.defaultDisabled: [PodsWithLocalStorage]"
                                  : "evictLocalStoragePods: true");
    if (!dp.pvc)
      check_add(r, "pvc-protection", CHECK_PASS, ref,
                "PodsWithPVC is off: VMs with PVC disks may move");
    else if (vm_only && cand && pvc == cand)
      check_add(r, "pvc-protection", CHECK_FAIL, ref,
                "PodsWithPVC is on and all %zu VMs the policy may move have PVC disks: VM "
                "rebalancing is a no-op; set %s",
                cand,
                dp.by_protections ? "remove PodsWithPVC from podProtections.extraEnabled"
                                  : "ignorePvcPods: false");
    else
      check_add(r, "pvc-protection", CHECK_WARN, ref,
                "PodsWithPVC is on: %zu of %zu VMs have PVC disks and never move (%s); set %s", pvc,
                cand, scope,
                dp.by_protections ? "remove PodsWithPVC from podProtections.extraEnabled"
                                  : "ignorePvcPods: false");
  }
}

/* ---------- the plan ---------- */

static const profile *find_profile(const policy *pol, const char *name) {
  for (size_t i = 0; i < pol->nprofiles; i++)
    if (!strcmp(pol->profiles[i].name, name))
      return &pol->profiles[i];
  return NULL;
}

/* The cycle runs with EvictionsInBackground on whatever the workload passes: without the gate
 * KubeVirt still migrates each VM it is asked for while the descheduler counts the request as
 * a failed eviction (gate_off says so in the row), and the cycle's limits count those
 * evacuations all the same (VMSafety's countEvacuationsAgainstLimits, on by default). */
static void report_plan(check_inputs *in, check_report *r, loaded_policy *lp, bool gate_off) {
  const bool gate = true;
  model *m = in->m;
  if (!m || !lp || !lp->pol) {
    check_add(r, "plan", CHECK_WARN, "", "not run: %s",
              !m ? "the cluster could not be read" : "no policy loads");
    return;
  }
  policy *pol = lp->pol;
  bool *guarded = calloc(pol->nprofiles ? pol->nprofiles : 1, sizeof *guarded);
  for (size_t i = 0; i < pol->nprofiles; i++)
    guarded[i] = vmsafety_requires_live_migration(&pol->profiles[i]);
  vmsafety_set_require_live_migration(pol, false);
  m->vmis_complete = in->kubevirt_served;
  bg_cache bg = {0};
  if (gate)
    bg_sync(&bg, m, in->now, true);
  sim_sink sink;
  sim_sink_init(&sink, m);
  fw_options opt = {gate, in->now};
  fw_result res;
  dserr err;
  if (fw_run_cycle(pol, m, &bg, &sink.base, &opt, &res, &err) < 0) {
    check_add(r, "plan", CHECK_FAIL, lp->ref, "the cycle cannot run: %s", err.msg);
  } else {
    size_t migrate = 0, external = 0, stops = 0, other = 0;
    check_status worst = CHECK_PASS;
    for (size_t i = 0; i < res.nevictions; i++) {
      const fw_eviction *e = &res.evictions[i];
      vm_view v;
      kubevirt_view(m, e->pod, &v);
      switch (v.effect) {
      case VM_EFFECT_MIGRATE: migrate++; continue;
      case VM_EFFECT_EXTERNAL: external++; continue;
      case VM_EFFECT_STOP: break;
      default: other++; continue;
      }
      stops++;
      const profile *pr = find_profile(pol, e->profile);
      bool g = pr && guarded[pr - pol->profiles];
      check_status st = g ? CHECK_WARN : CHECK_FAIL;
      worst = st > worst ? st : worst;
      char ref[512];
      check_add(r, "plan-vm-stops", st, afmt(r->mem, "Pod %s", pod_ref(e->pod, ref, sizeof ref)),
                "the policy's cycle would evict this launcher now (%s/%s) and VMI %s/%s would "
                "stop: %s; %s",
                e->profile, e->plugin, e->pod->ns, v.vmi_name, v.why,
                g ? "this descheduler's VMSafety (requireLiveMigration) refuses it, upstream's "
                    "descheduler would evict it"
                  : "the policy turns VMSafety's requireLiveMigration off, so this descheduler "
                    "would evict it too");
    }
    check_add(r, "plan", worst, lp->ref,
              "one cycle now (requireLiveMigration off, as upstream%s) would request %zu "
              "eviction%s: %zu live migration%s, %zu external drain%s, %zu VM stop%s, %zu other "
              "pod%s",
              gate_off ? "; the workload lacks EvictionsInBackground, so it would count each "
                         "migration as a failed eviction"
                       : "",
              res.nevictions, res.nevictions == 1 ? "" : "s", migrate, migrate == 1 ? "" : "s",
              external, external == 1 ? "" : "s", stops, stops == 1 ? "" : "s", other,
              other == 1 ? "" : "s");
  }
  fw_result_free(&res);
  sim_sink_free(&sink);
  bg_clear(&bg);
  for (size_t i = 0; i < pol->nprofiles; i++) /* leave the policy as loaded */
    if (guarded[i])
      vmsafety_set_require_live_migration(pol, true);
  free(guarded);
}

/* ---------- evaluation ---------- */

void check_evaluate(check_inputs *in, check_report *r) {
  workload *ws = ARENA_NEWN(in->mem, workload, in->nworkloads ? in->nworkloads : 1);
  size_t nw = in->workloads_read ? select_workloads(in, ws) : 0;
  loaded_policy *lps = ARENA_NEWN(in->mem, loaded_policy, in->nconfigmaps ? in->nconfigmaps : 1);
  loaded_policy *kds =
      ARENA_NEWN(in->mem, loaded_policy, in->nkubedeschedulers ? in->nkubedeschedulers : 1);

  /* on OpenShift the operator renders the policy from a KubeDescheduler CR and runs its own
   * Deployment: no labelled ConfigMap or workload is then expected */
  render_kubedeschedulers(in, r, kds);
  const char *by_cr = NULL;
  for (size_t k = 0; k < in->nkubedeschedulers && !by_cr; k++)
    if (kds[k].pol)
      by_cr = kds[k].ref;
  if (in->configmaps_read && !in->nconfigmaps) {
    if (by_cr)
      check_add(r, "configmap", CHECK_PASS, "",
                "no ConfigMap labelled %s: the policy is the one %s renders", CHECK_APP_LABEL,
                by_cr);
    else
      check_add(r, "configmap", CHECK_FAIL, "",
                "no ConfigMap labelled %s%s%s: the runbook keeps the policy in one",
                CHECK_APP_LABEL, in->namespace ? " in namespace " : "",
                in->namespace ? in->namespace : "");
  }
  load_policies(in, r, ws, nw, lps);
  if (by_cr && in->nconfigmaps)
    check_add(r, "kubedescheduler", CHECK_WARN, by_cr,
              "the operator runs a descheduler from it and the runbook's %s is there too: two descheduler instances would evict independently; keep one",
              obj_ref(in->mem, "ConfigMap", in->configmaps[0]));

  if (in->workloads_read && !nw) {
    if (by_cr && !in->nconfigmaps)
      check_add(r, "workload", CHECK_PASS, "",
                "no CronJob or Deployment labelled %s: the operator runs the descheduler of %s",
                CHECK_APP_LABEL, by_cr);
    else
      check_add(r, "workload", CHECK_FAIL, "",
                "no CronJob or Deployment labelled %s%s%s, and none mounts the policy ConfigMap",
                CHECK_APP_LABEL, in->namespace ? " in namespace " : "",
                in->namespace ? in->namespace : "");
  }
  for (size_t i = 0; i < nw; i++) {
    check_add(r, "workload", CHECK_PASS, ws[i].ref, "%s, container \"%s\"",
              in->workloads_labelled ? "labelled " CHECK_APP_LABEL
                                     : "mounts the policy ConfigMap (not labelled)",
              str_at(ws[i].container, "name"));
    report_workload(in, r, &ws[i]);
  }

  report_kubevirt(in, r);
  report_hco(in, r);
  report_vmis(in, r);

  /* the policy the descheduler runs: the first workload's, else the first that loads */
  loaded_policy *run = NULL;
  for (size_t i = 0; i < nw && !run; i++)
    for (size_t k = 0; k < in->nconfigmaps && !run; k++)
      if (lps[k].pol && mounted_configmap(in, &ws[i]) == lps[k].cm)
        run = &lps[k];
  for (size_t k = 0; k < in->nconfigmaps && !run; k++)
    if (lps[k].pol)
      run = &lps[k];
  for (size_t k = 0; k < in->nkubedeschedulers && !run; k++)
    if (kds[k].pol)
      run = &kds[k];
  bool gate_off = false;
  feature_gates g;
  dserr err;
  if (run && run->gate >= 0)
    gate_off = !run->gate;
  else if (nw)
    gate_off = !ws[0].gates || feature_gates_parse(ws[0].gates, &g, &err) < 0 ||
               !g.evictions_in_background;
  report_protections(in, r, run);
  if (in->kubevirt_served)
    report_plan(in, r, run, gate_off);

  for (size_t k = 0; k < in->nconfigmaps; k++)
    policy_free(lps[k].pol);
  for (size_t k = 0; k < in->nkubedeschedulers; k++)
    policy_free(kds[k].pol);
}

/* ---------- reading ---------- */

typedef struct {
  arena *mem;
  size_t n, cap;
  doc_node **items;
} doc_vec;

static int keep_item(void *ctx, doc_node *item, dserr *err) {
  (void)err;
  doc_vec *v = ctx;
  v->items = arena_grow(v->mem, v->items, v->n, &v->cap, sizeof *v->items);
  v->items[v->n++] = doc_copy(v->mem, item);
  return 0;
}

/* Lists a collection into v (kind set on each item, as typed lists leave it out). */
static int list_docs(kube_client *c, const char *path, const char *kind, doc_vec *v, long *status,
                     dserr *err) {
  size_t from = v->n;
  if (kube_list_each(c, path, 500, keep_item, v, status, err) < 0)
    return -1;
  for (size_t i = from; i < v->n; i++) {
    doc_node *o = v->items[i];
    if (o->type == DOC_MAP && !doc_get(o, "kind")) {
      doc_pair *pairs = ARENA_NEWN(v->mem, doc_pair, o->n + 1);
      memcpy(pairs, o->pairs, o->n * sizeof *pairs);
      doc_node *k = ARENA_NEW(v->mem, doc_node);
      k->type = DOC_STR;
      k->text = kind;
      pairs[o->n++] = (doc_pair){"kind", k};
      o->pairs = pairs;
    }
  }
  return 0;
}

static const char *collection(arena *a, const char *group_version, const char *resource,
                              const char *ns, const char *selector) {
  strbuf sb = {0};
  sb_printf(&sb, "/%s/%s", strchr(group_version, '/') ? "apis" : "api", group_version);
  if (ns) {
    sb_append(&sb, "/namespaces/");
    kube_path_escape(&sb, ns);
  }
  sb_printf(&sb, "/%s", resource);
  if (selector) {
    sb_append(&sb, "?labelSelector=");
    kube_path_escape(&sb, selector);
  }
  const char *s = arena_strdup(a, sb_str(&sb));
  sb_free(&sb);
  return s;
}

static void read_workloads(kube_client *c, check_inputs *in, check_report *r, const char *ns,
                           const char *selector, doc_vec *v) {
  long status;
  dserr err;
  if (list_docs(c, collection(in->mem, "batch/v1", "cronjobs", ns, selector), "CronJob", v, &status,
                &err) < 0 ||
      list_docs(c, collection(in->mem, "apps/v1", "deployments", ns, selector), "Deployment", v,
                &status, &err) < 0) {
    check_add(r, "workload", CHECK_FAIL, "", "cannot list CronJobs and Deployments: %s", err.msg);
    in->workloads_read = false;
  }
}

int check_read(kube_client *c, const check_read_opts *o, check_inputs *in, check_report *r,
               dserr *err) {
  in->mem = arena_new(256 * 1024);
  in->now = (int64_t)time(NULL);
  in->namespace = o->namespace ? arena_strdup(in->mem, o->namespace) : NULL;
  kube_discovery d;
  if (kube_discover(c, &d, err) < 0)
    return -1;
  r->server_version = arena_strdup(r->mem, d.git_version);
  in->kubevirt_served = d.kubevirt;
  long status;
  dserr e;

  doc_vec cms = {in->mem, 0, 0, NULL};
  in->configmaps_read = true;
  if (list_docs(c, collection(in->mem, "v1", "configmaps", in->namespace, CHECK_APP_LABEL),
                "ConfigMap", &cms, &status, &e) < 0) {
    check_add(r, "configmap", CHECK_FAIL, "", "cannot list ConfigMaps: %s", e.msg);
    in->configmaps_read = false;
  }
  in->configmaps = cms.items;
  in->nconfigmaps = cms.n;

  doc_vec wl = {in->mem, 0, 0, NULL};
  in->workloads_read = true;
  in->workloads_labelled = true;
  read_workloads(c, in, r, in->namespace, CHECK_APP_LABEL, &wl);
  if (in->workloads_read && !wl.n) {
    /* none labelled: every CronJob and Deployment beside a policy ConfigMap */
    in->workloads_labelled = false;
    for (size_t i = 0; i < cms.n && in->workloads_read; i++) {
      bool seen = false;
      for (size_t k = 0; k < i; k++)
        seen |= !strcmp(meta(cms.items[k], "namespace"), meta(cms.items[i], "namespace"));
      if (!seen)
        read_workloads(c, in, r, meta(cms.items[i], "namespace"), NULL, &wl);
    }
  }
  in->workloads = wl.items;
  in->nworkloads = wl.n;

  /* the OpenShift operator's CRD and CRs */
  doc_node *crd = NULL;
  const char *crd_path =
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" CHECK_KUBEDESCHEDULER_CRD;
  if (kube_get_doc(c, crd_path, in->mem, &crd, &status, &e) == 0) {
    in->kubedescheduler_crd = true;
    const doc_node *vs = doc_path(crd, "spec", "versions", NULL);
    const char *version = "v1";
    for (size_t i = 0; i < seq_len(vs); i++) {
      const doc_node *served = doc_get(vs->items[i], "served");
      if (served && served->type == DOC_BOOL && served->v.b &&
          doc_str(doc_get(vs->items[i], "name"))) {
        version = doc_str(doc_get(vs->items[i], "name"));
        break;
      }
    }
    doc_vec kd = {in->mem, 0, 0, NULL};
    const char *gv = afmt(in->mem, "operator.openshift.io/%s", version);
    if (list_docs(c, collection(in->mem, gv, "kubedeschedulers", NULL, NULL), "KubeDescheduler",
                  &kd, &status, &e) < 0)
      check_add(r, "kubedescheduler", CHECK_WARN, "", "cannot list KubeDescheduler CRs: %s", e.msg);
    in->kubedeschedulers = kd.items;
    in->nkubedeschedulers = kd.n;
  } else if (status != 404) {
    check_add(r, "kubedescheduler", CHECK_WARN, "", "cannot read CRD %s: %s",
              CHECK_KUBEDESCHEDULER_CRD, e.msg);
  }

  if (in->kubevirt_served) {
    doc_vec kv = {in->mem, 0, 0, NULL};
    if (list_docs(c, "/apis/kubevirt.io/v1/kubevirts", "KubeVirt", &kv, &status, &e) < 0)
      check_add(r, "kubevirt-strategy", CHECK_FAIL, "", "cannot list KubeVirt CRs: %s", e.msg);
    in->kubevirt = kv.n ? kv.items[0] : NULL;
    r->kubevirt_present = in->kubevirt != NULL;
    const char *ver = str_at(doc_get(in->kubevirt, "status"), "observedKubeVirtVersion");
    r->kubevirt_version = arena_strdup(r->mem, ver);
  }
  doc_vec hco = {in->mem, 0, 0, NULL};
  if (list_docs(c, "/apis/hco.kubevirt.io/v1beta1/hyperconvergeds", "HyperConverged", &hco, &status,
                &e) == 0) {
    in->hco_served = true;
    in->hco = hco.n ? hco.items[0] : NULL;
    r->hco_present = in->hco != NULL;
    const doc_node *vs = doc_path(in->hco, "status", "versions", NULL);
    for (size_t i = 0; i < seq_len(vs); i++)
      if (!strcmp(str_at(vs->items[i], "name"), "operator"))
        r->hco_version = arena_strdup(r->mem, str_at(vs->items[i], "version"));
  } else if (status != 404) {
    check_add(r, "hco-strategy", CHECK_WARN, "", "cannot list HyperConverged CRs: %s", e.msg);
  }

  model *m = model_new();
  char route_error[512] = "";
  int rc = kube_read_cluster(c, m, in->kubevirt_served, o->page > 0 ? o->page : 500, &e);
  /* what rendering a CR reads beside namespaces and nodes: the Prometheus Route, the Scheduler */
  if (rc == 0 && in->nkubedeschedulers &&
      kube_read_openshift_objects(c, m, route_error, sizeof route_error, &e) < 0)
    rc = -1;
  if (*route_error)
    in->route_error = arena_strdup(in->mem, route_error);
  if (rc < 0 || model_finish(m, &e) < 0) {
    check_add(r, "cluster", CHECK_FAIL, "",
              "cannot read the cluster as the descheduler does (nodes, pods, VMIs...): %s", e.msg);
    model_free(m);
  } else {
    m->vmis_complete = in->kubevirt_served;
    in->m = m;
  }
  return 0;
}

void check_inputs_free(check_inputs *in) {
  if (in->m)
    model_free(in->m);
  arena_free(in->mem);
  memset(in, 0, sizeof *in);
}
