/* softtaint.c - one soft-tainter pass: classify, then bring each node's two soft taints in
 * line; see softtaint.h for the rules and why patches look the way they do.
 *
 * The classification is LowNodeUtilization's own (plugins/nodeutilization.h: the Prometheus
 * usage, the threshold pair, the under/over tests), so the taints always agree with what the
 * descheduler will decide on the same answer. Nodes are handled in name order, one request
 * at a time (upstream patches up to 20 nodes in parallel). */
#include "softtaint.h"

#include "../decode/decode.h"
#include "../kube/cluster.h"
#include "../model/model.h"
#include "../obs/log.h"
#include "../plugins/nodeutilization.h"
#include "../policy/policy.h"
#include "../usage/usage.h"
#include "../apimachinery/selector.h"
#include "../util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SOFT_EFFECT "PreferNoSchedule"
#define PATCH_TRIES 3

struct softtainter {
  kube_client *api;
  softtaint_source_fn source;
  void *source_ctx;
  bool automatic;   /* this pass's mode */
  usage_prom *prom; /* kept across passes while the provider stays the same */
};

softtainter *softtaint_new(kube_client *api, softtaint_source_fn source, void *ctx) {
  softtainter *st = calloc(1, sizeof *st);
  if (!st)
    abort();
  st->api = api;
  st->source = source;
  st->source_ctx = ctx;
  return st;
}

void softtaint_free(softtainter *st) {
  if (!st)
    return;
  usage_prom_free(st->prom);
  free(st);
}

typedef enum { CAT_UNDER, CAT_APPROPRIATE, CAT_OVER } category;

static const char *category_name(category c) {
  return c == CAT_OVER          ? "overutilized"
         : c == CAT_APPROPRIATE ? "appropriatelyutilized"
                                : "underutilized";
}

/* ---------- the node's taints ---------- */

static bool has_soft_taint(const node *n, const char *key) {
  for (size_t i = 0; i < n->ntaints; i++)
    if (n->taints[i].key && !strcmp(n->taints[i].key, key) && n->taints[i].effect &&
        !strcmp(n->taints[i].effect, SOFT_EFFECT))
      return true;
  return false;
}

typedef struct {
  bool want_appropriate, want_over;
} wanted;

/* The node's taint list with ours as wanted; every other taint is written back unchanged.
 * Sets *changed and logs nothing. */
static void rebuild_taints(const doc_node *taints, const wanted *w, strbuf *out, bool *changed,
                           bool *added, bool *removed, size_t *kept) {
  static const char *keys[2] = {SOFTTAINT_APPROPRIATE, SOFTTAINT_OVERUTILIZED};
  bool want[2] = {w->want_appropriate, w->want_over};
  bool present[2] = {false, false};
  *changed = false;
  *kept = 0;
  added[0] = added[1] = removed[0] = removed[1] = false;
  sb_appendc(out, '[');
  size_t n = taints && taints->type == DOC_SEQ ? taints->n : 0;
  for (size_t i = 0; i < n; i++) {
    const doc_node *t = taints->items[i];
    const char *key = doc_str(doc_get(t, "key")), *effect = doc_str(doc_get(t, "effect"));
    int mine = -1;
    for (int k = 0; k < 2; k++)
      if (key && effect && !strcmp(key, keys[k]) && !strcmp(effect, SOFT_EFFECT))
        mine = k;
    if (mine >= 0 && !want[mine]) {
      removed[mine] = *changed = true;
      continue;
    }
    if (mine >= 0)
      present[mine] = true;
    if ((*kept)++)
      sb_appendc(out, ',');
    doc_write_json(out, t, 0);
  }
  for (int k = 0; k < 2; k++)
    if (want[k] && !present[k]) {
      if ((*kept)++)
        sb_appendc(out, ',');
      sb_append(out, "{\"key\":");
      sb_append_json_str(out, keys[k]);
      sb_append(out, ",\"value\":\"true\",\"effect\":\"" SOFT_EFFECT "\"}");
      added[k] = *changed = true;
    }
  sb_appendc(out, ']');
}

/* Reads the node, rebuilds its taints and sends a JSON patch guarded by its resourceVersion;
 * a node changed in between is read again. */
static int patch_node(softtainter *st, const char *name, const wanted *w, dserr *err) {
  static const char *keys[2] = {SOFTTAINT_APPROPRIATE, SOFTTAINT_OVERUTILIZED};
  strbuf path = {0};
  sb_append(&path, "/api/v1/nodes/");
  kube_path_escape(&path, name);
  int rc = -1;
  for (int attempt = 1; attempt <= PATCH_TRIES; attempt++) {
    arena *a = arena_new(64 * 1024);
    doc_node *root = NULL;
    long status = 0;
    strbuf list = {0}, body = {0};
    bool changed, added[2], removed[2], retry = false;
    size_t kept;
    if (kube_get_doc(st->api, sb_str(&path), a, &root, &status, err) < 0)
      goto next;
    const char *rv = doc_str(doc_path(root, "metadata", "resourceVersion", NULL));
    const doc_node *taints = doc_path(root, "spec", "taints", NULL);
    rebuild_taints(taints, w, &list, &changed, added, removed, &kept);
    if (!changed) {
      rc = 0;
      goto next;
    }
    sb_append(&body, "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":");
    sb_append_json_str(&body, rv ? rv : "");
    if (kept == 0)
      sb_append(&body, "},{\"op\":\"remove\",\"path\":\"/spec/taints\"}]");
    else
      sb_printf(&body, "},{\"op\":\"add\",\"path\":\"/spec/taints\",\"value\":%s}]", sb_str(&list));
    kube_response r;
    if (kube_request(st->api, "PATCH", sb_str(&path), "application/json-patch+json", sb_str(&body),
                     &r, err) < 0)
      goto next;
    if (r.status / 100 == 2) {
      for (int k = 0; k < 2; k++) {
        if (added[k])
          LOGV(0, NULL, "The soft taint got added to the node", LSTR("node", name),
               LSTR("taint", keys[k]));
        if (removed[k])
          LOGV(0, NULL, "The soft taint got removed from the node", LSTR("node", name),
               LSTR("taint", keys[k]));
      }
      rc = 0;
    } else {
      char msg[1024], reason[128];
      kube_status_text(&r, msg, sizeof msg, reason, sizeof reason);
      dserr_set(err, "failed to patch node \"%s\": HTTP %ld: %s", name, r.status,
                *msg ? msg : "(no message)");
      /* 409 (stale resourceVersion) or 422 (the test op failed): the node changed meanwhile */
      retry = r.status == 409 || r.status == 422;
      if (retry && attempt < PATCH_TRIES)
        LOGV(2, NULL, "The node changed while its soft taints were updated; reading it again",
             LSTR("node", name), LINT("attempt", attempt));
    }
    kube_response_free(&r);
  next:
    sb_free(&list);
    sb_free(&body);
    arena_free(a);
    if (rc == 0 || !retry)
      break;
  }
  sb_free(&path);
  return rc;
}

/* ---------- one pass ---------- */

/* The LowNodeUtilization config of the KubeVirt profile (the last one, as upstream's loop). */
static const plugin_config *kubevirt_lnu(const policy *pol) {
  const plugin_config *found = NULL;
  for (size_t i = 0; i < pol->nprofiles; i++) {
    const profile *pr = &pol->profiles[i];
    if (!pr->name || (strcmp(pr->name, "KubeVirtRelieveAndMigrate") &&
                      strcmp(pr->name, "DevKubeVirtRelieveAndMigrate")))
      continue;
    for (size_t k = 0; k < pr->nconfig; k++)
      if (!strcmp(pr->config[k].name, "LowNodeUtilization") && pr->config[k].args)
        found = &pr->config[k];
  }
  return found;
}

/* upstream takes the URL of any provider with a prometheus section (the last one) */
static const metrics_provider *prometheus_provider(const policy *pol) {
  const metrics_provider *mp = NULL;
  for (size_t i = 0; i < pol->nproviders; i++)
    if (pol->providers[i].has_prometheus)
      mp = &pol->providers[i];
  return mp;
}

/* Classifies the nodes from the answer; -1 with upstream's error. */
static int classify(arena *a, const lnu_classification *cls, const prom_answer *ans, node **nodes,
                    size_t n, category *cat, const char *query, dserr *err) {
  nu_resources r;
  nu_resources_init(&r, cls->thresholds, true);
  nu_node *nn = ARENA_NEWN(a, nu_node, n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    nn[i].node = nodes[i];
    if (nu_prom_node_usage(ans, &r, &nn[i], err) < 0)
      return dserr_set(err, "unable to find metric entry for %s, query: %s", nodes[i]->name, query);
  }
  pct_map low, high;
  nu_assess_thresholds(a, cls->thresholds, cls->target, cls->use_deviation, &r, nn, n, &low, &high,
                       NULL);
  size_t nunder = 0;
  for (size_t i = 0; i < n; i++) {
    if (!nodes[i]->unschedulable && nu_below(&r, &nn[i], &low))
      cat[i] = CAT_UNDER;
    else if (nu_above(&r, &nn[i], &high))
      cat[i] = CAT_OVER;
    else
      cat[i] = CAT_APPROPRIATE;
    nunder += cat[i] == CAT_UNDER;
  }
  /* no underutilized node: nobody gets the "appropriate" taint (upstream's rule) */
  for (size_t i = 0; i < n && nunder == 0; i++)
    if (cat[i] == CAT_APPROPRIATE)
      cat[i] = CAT_UNDER;
  plugin_handle h;
  memset(&h, 0, sizeof h);
  h.scratch = a; /* nu_usage_json / nu_pct_json only use the scratch arena */
  size_t counts[3] = {0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    counts[cat[i]]++;
    LOGV(0, NULL, "Node has been classified", LSTR("category", category_name(cat[i])),
         LSTR("node", nodes[i]->name), LJSON("usage", nu_usage_json(&h, &r, nn[i].usage)),
         LJSON("usagePercentage", nu_pct_json(&h, &r, &nn[i])));
  }
  LOGV(0, NULL, "Number of under utilized nodes", LUINT("totalNumber", counts[CAT_UNDER]));
  LOGV(0, NULL, "Number of appropriately utilized nodes",
       LUINT("totalNumber", counts[CAT_APPROPRIATE]));
  LOGV(0, NULL, "Number of over utilized nodes", LUINT("totalNumber", counts[CAT_OVER]));
  return 0;
}

/* Applies (Automatic) or reports (Predictive) the wanted taints; -1 when a patch failed. */
static int apply(softtainter *st, node **nodes, size_t n, const wanted *w, dserr *err) {
  static const char *keys[2] = {SOFTTAINT_APPROPRIATE, SOFTTAINT_OVERUTILIZED};
  int failures = 0;
  if (st->automatic)
    LOGV(0, NULL, "reconciling soft taints on nodes");
  for (size_t i = 0; i < n; i++) {
    const node *nd = nodes[i];
    bool want[2] = {w[i].want_appropriate, w[i].want_over};
    bool change = false;
    for (int k = 0; k < 2; k++)
      change |= want[k] != has_soft_taint(nd, keys[k]);
    if (!change)
      continue;
    if (!st->automatic) {
      for (int k = 0; k < 2; k++)
        if (want[k] != has_soft_taint(nd, keys[k]))
          LOGV(0, NULL,
               want[k] ? "Predictive mode: the soft taint would be added to the node"
                       : "Predictive mode: the soft taint would be removed from the node",
               LSTR("node", nd->name), LSTR("taint", keys[k]));
      continue;
    }
    dserr perr;
    if (patch_node(st, nd->name, &w[i], &perr) < 0) {
      LOGE(NULL, "Failed updating the soft taints of the node, check RBAC", perr.msg,
           LSTR("node", nd->name));
      if (!failures++)
        dserr_set(err, "%s", perr.msg);
    }
  }
  if (failures > 1) {
    char first[sizeof err->msg];
    snprintf(first, sizeof first, "%s", err->msg);
    dserr_set(err, "%d nodes could not be patched (first: %s)", failures, first);
  }
  return failures ? -1 : 0;
}

int softtaint_reconcile(softtainter *st, dserr *err) {
  policy *pol = st->source(st->source_ctx, &st->automatic, err);
  if (!pol)
    return -1;
  model *m = model_new();
  arena *a = arena_new(64 * 1024);
  int rc = -1;
  if (kube_list_into(st->api, m, "/api/v1/nodes", "Node", 500, err) < 0 || model_finish(m, err) < 0)
    goto out;
  label_selector *sel = NULL;
  if (pol->node_selector && *pol->node_selector &&
      selector_parse(a, pol->node_selector, &sel, err) < 0) {
    dserr_prefix(err, "nodeSelector");
    goto out;
  }
  node **nodes = ARENA_NEWN(a, node *, m->nodes.n ? m->nodes.n : 1);
  size_t n = 0;
  for (size_t i = 0; i < m->nodes.n; i++)
    if (!sel || selector_matches(sel, &m->nodes.items[i]->labels))
      nodes[n++] = m->nodes.items[i];
  wanted *w = ARENA_NEWN(a, wanted, n ? n : 1);
  memset(w, 0, sizeof *w * (n ? n : 1));
  const plugin_config *pc = kubevirt_lnu(pol);
  if (!pc) {
    LOGV(0, NULL, "SoftTainter is disabled, cleaning up eventual leftover taints");
    rc = apply(st, nodes, n, w, err);
    goto out;
  }
  lnu_classification cls;
  lnu_classification_of(pc->args, &cls);
  if (!cls.query) {
    dserr_set(err, "unable to read MetricsUtilization.Prometheus");
    goto out;
  }
  const metrics_provider *mp = prometheus_provider(pol);
  if (!mp || !mp->prometheus_url || !*mp->prometheus_url) {
    dserr_set(err, "unable to read promURL");
    goto out;
  }
  if (!usage_prom_same(st->prom, mp)) {
    usage_prom_free(st->prom);
    st->prom = usage_prom_new(mp);
  }
  const char *queries[1] = {cls.query};
  if (usage_prom_query(st->prom, st->api, m, queries, 1, err) < 0)
    goto out;
  const prom_answer *ans = nu_prom_answer(m, cls.query, true, err);
  if (!ans)
    goto out;
  category *cat = ARENA_NEWN(a, category, n ? n : 1);
  if (classify(a, &cls, ans, nodes, n, cat, cls.query, err) < 0)
    goto out;
  for (size_t i = 0; i < n; i++) {
    w[i].want_appropriate = cat[i] != CAT_UNDER;
    w[i].want_over = cat[i] == CAT_OVER;
  }
  rc = apply(st, nodes, n, w, err);
out:
  arena_free(a);
  model_free(m);
  policy_free(pol);
  return rc;
}
