/* usage.c - reading actual utilization before a cycle (live) or from files (simulate); see
 * usage.h for what is read when and why. */
#define _GNU_SOURCE /* explicit_bzero */
#include "usage.h"

#include "../decode/decode.h"
#include "../framework/framework.h"
#include "../kube/cluster.h"
#include "../kube/config.h"
#include "../kube/prom.h"
#include "../obs/log.h"
#include "../apimachinery/quantity.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROM_TOKEN_KEY "prometheusAuthToken"

/* one node's smoothed usage, kept across cycles as upstream's collector keeps it */
typedef struct {
  char *name;
  int64_t cpu_milli, memory_bytes;
  bool sampled;
} smoothed;

struct usage_live {
  const policy *pol;
  kube_client *api;
  usage_needs needs;
  bool collector; /* NodeMetrics / PodMetrics are read */
  size_t nsmoothed, cap;
  smoothed *nodes;
  bool collected;
  double last_collect;
  usage_prom *prom; /* when a plugin queries Prometheus and a provider has a URL */
};

struct usage_prom {
  char *url, *secret_ns, *secret_name; /* secret_ns NULL: no authToken.secretReference */
  prom_client *client;
  char *token; /* the Secret's token the client was made with (heap, wiped) */
};

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *sa_dir(void) {
  const char *dir = getenv(KUBE_SERVICEACCOUNT_DIR_ENV);
  return dir && *dir ? dir : KUBE_SERVICEACCOUNT_DIR;
}

/* The service-account CA bundle when there is one (upstream trusts only it) */
static char *sa_ca_file(void) {
  strbuf sb = {0};
  sb_printf(&sb, "%s/ca.crt", sa_dir());
  if (access(sb_str(&sb), R_OK) == 0)
    return sb_detach(&sb);
  sb_free(&sb);
  return NULL;
}

static bool in_cluster(void) {
  const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
  return host && *host && port && *port;
}

static void wipe_token(usage_prom *u) {
  if (u->token) {
    explicit_bzero(u->token, strlen(u->token));
    free(u->token);
    u->token = NULL;
  }
}

static void drop_client(usage_prom *u) {
  prom_client_free(u->client);
  u->client = NULL;
  wipe_token(u);
}

usage_live *usage_live_new(const policy *pol, kube_client *api) {
  usage_live *u = calloc(1, sizeof *u);
  if (!u)
    abort();
  u->pol = pol;
  u->api = api;
  fw_usage_needs(pol, &u->needs);
  u->collector = (u->needs.node_metrics || u->needs.pod_metrics) && policy_metrics_collector(pol);
  const metrics_provider *mp = policy_metrics_provider(pol, "Prometheus");
  if (u->needs.nqueries && mp && mp->prometheus_url && *mp->prometheus_url)
    u->prom = usage_prom_new(mp);
  return u;
}

void usage_live_free(usage_live *u) {
  if (!u)
    return;
  for (size_t i = 0; i < u->nsmoothed; i++)
    free(u->nodes[i].name);
  free(u->nodes);
  usage_prom_free(u->prom);
  free(u);
}

/* ---------- metrics.k8s.io ---------- */

static int cmp_smoothed(const void *a, const void *b) {
  return strcmp(((const smoothed *)a)->name, ((const smoothed *)b)->name);
}

/* The table is kept sorted by name; new nodes are appended and sorted in after a sample. */
static smoothed *smoothed_find(usage_live *u, size_t sorted, const char *name) {
  smoothed key = {(char *)name, 0, 0, false};
  smoothed *s = sorted ? bsearch(&key, u->nodes, sorted, sizeof *u->nodes, cmp_smoothed) : NULL;
  if (s)
    return s;
  for (size_t i = sorted; i < u->nsmoothed; i++)
    if (strcmp(u->nodes[i].name, name) == 0)
      return &u->nodes[i];
  if (u->nsmoothed == u->cap) {
    u->cap = u->cap ? u->cap * 2 : 16;
    u->nodes = realloc(u->nodes, u->cap * sizeof *u->nodes);
    if (!u->nodes)
      abort();
  }
  s = &u->nodes[u->nsmoothed++];
  *s = (smoothed){xstrdup(name), 0, 0, false};
  return s;
}

/* upstream's weightedAverage: round(0.9 * previous + 0.1 * sample); the first sample as is */
static int64_t weighted(bool sampled, int64_t prev, int64_t sample) {
  return sampled ? (int64_t)llround(0.9 * (double)prev + 0.1 * (double)sample) : sample;
}

/* A GET of a metrics.k8s.io list into m (kind hint for items without one). */
static int read_metrics_list(kube_client *api, model *m, const char *path, const char *kind,
                             dserr *err) {
  kube_response r;
  if (kube_request(api, "GET", path, NULL, NULL, &r, err) < 0)
    return -1;
  int rc;
  if (r.status != 200) {
    char msg[1024], reason[128];
    kube_status_text(&r, msg, sizeof msg, reason, sizeof reason);
    rc = dserr_set(err, "GET %s: HTTP %ld: %s", path, r.status, *msg ? msg : "(no message)");
  } else {
    char *next = NULL;
    size_t count = 0;
    rc = decode_list_page(m, path, r.body, r.len, kind, &next, &count, err);
    free(next);
  }
  kube_response_free(&r);
  return rc;
}

/* One collector sample of every node's NodeMetrics into the smoothed table. */
static void collect(usage_live *u) {
  u->last_collect = mono_now();
  model *tmp = model_new();
  dserr err;
  if (read_metrics_list(u->api, tmp, "/apis/metrics.k8s.io/v1beta1/nodes", "NodeMetrics", &err) <
      0) {
    /* upstream keeps the previous values when a sample fails */
    LOGE(NULL, "Error fetching metrics", err.msg);
  } else {
    size_t sorted = u->nsmoothed;
    for (size_t i = 0; i < tmp->node_metrics.n; i++) {
      const node_metrics_obj *nm = tmp->node_metrics.items[i];
      smoothed *s = smoothed_find(u, sorted, nm->name);
      s->cpu_milli = weighted(s->sampled, s->cpu_milli, res_get(&nm->usage, RES_CPU, NULL));
      s->memory_bytes = weighted(s->sampled, s->memory_bytes,
                                 quantity_units(res_get(&nm->usage, RES_MEMORY, NULL)));
      s->sampled = true;
    }
    if (u->nsmoothed > sorted)
      qsort(u->nodes, u->nsmoothed, sizeof *u->nodes, cmp_smoothed);
    u->collected = true;
  }
  model_free(tmp);
}

void usage_live_tick(usage_live *u) {
  if (u && u->collector && mono_now() - u->last_collect >= USAGE_COLLECT_SECONDS)
    collect(u);
}

static void fetch_metrics_api(usage_live *u, model *m) {
  if (!u->collected || mono_now() - u->last_collect >= USAGE_COLLECT_SECONDS)
    collect(u);
  for (size_t i = 0; i < u->nsmoothed; i++) {
    node_metrics_obj *nm = ARENA_NEW(m->mem, node_metrics_obj);
    nm->name = intern(m->strings, u->nodes[i].name);
    nm->usage.n = 2;
    nm->usage.items = ARENA_NEWN(m->mem, res_q, 2);
    nm->usage.items[0] = (res_q){intern(m->strings, "cpu"), u->nodes[i].cpu_milli};
    int64_t bytes = u->nodes[i].memory_bytes;
    nm->usage.items[1] =
        (res_q){intern(m->strings, "memory"), bytes > INT64_MAX / 1000 ? INT64_MAX : bytes * 1000};
    MODEL_PUSH(m, node_metrics, nm);
  }
  m->node_metrics_read = true;
  if (u->needs.pod_metrics) {
    dserr err;
    if (read_metrics_list(u->api, m, "/apis/metrics.k8s.io/v1beta1/pods", "PodMetrics", &err) < 0)
      m->pod_metrics_error = arena_strdup(m->mem, err.msg);
    m->pod_metrics_read = true;
  }
}

/* ---------- Prometheus ---------- */

/* The Secret's token (heap, caller wipes) or NULL; *gone when the Secret is missing or holds
 * no token, so the client must go (upstream clears it then, and keeps it on other errors). */
static char *secret_token(usage_prom *u, kube_client *api, bool *gone) {
  *gone = false;
  strbuf path = {0};
  sb_append(&path, "/api/v1/namespaces/");
  kube_path_escape(&path, u->secret_ns);
  sb_append(&path, "/secrets/");
  kube_path_escape(&path, u->secret_name);
  arena *a = arena_new(16 * 1024);
  doc_node *root = NULL;
  long status = 0;
  dserr err;
  char *token = NULL;
  if (kube_get_doc(api, sb_str(&path), a, &root, &status, &err) < 0) {
    *gone = status == 404;
    LOGE(NULL, "unable to get the Prometheus authentication secret", err.msg,
         LSTR("secret", sb_str(&path) + strlen("/api/v1/namespaces/")));
  } else {
    const char *b64 = doc_str(doc_path(root, "data", PROM_TOKEN_KEY, NULL));
    size_t len = 0, bad = 0;
    if (b64 && *b64 && kube_b64_decode(b64, &token, &len, &bad) < 0) {
      LOGE(NULL, "unable to get the Prometheus authentication secret",
           "illegal base64 data in data.prometheusAuthToken");
      token = NULL;
      *gone = true;
    } else if (!token || !*token) {
      LOGE(NULL, "unable to get the Prometheus authentication secret",
           "prometheus authentication token secret missing \"" PROM_TOKEN_KEY "\" data or empty");
      free(token);
      token = NULL;
      *gone = true;
    }
    if (b64)
      explicit_bzero((char *)b64, strlen(b64));
  }
  arena_free(a);
  sb_free(&path);
  return token;
}

/* Makes sure the client matches the current credentials. -1 only for the in-cluster token. */
static int prepare_client(usage_prom *u, kube_client *api, dserr *err) {
  char *ca = sa_ca_file();
  prom_config cfg = {u->url, NULL, NULL, ca};
  int rc = 0;
  if (u->secret_ns) {
    bool gone;
    char *token = secret_token(u, api, &gone);
    if (gone)
      drop_client(u);
    if (token && (!u->token || strcmp(token, u->token) != 0)) {
      LOGV(2, NULL, "authentication secret token updated, recreating prometheus client");
      drop_client(u);
      cfg.token = token;
      dserr cerr;
      u->client = prom_client_new(&cfg, &cerr);
      if (u->client)
        u->token = xstrdup(token);
      else
        LOGE(NULL, "unable to create a prometheus client", cerr.msg);
    }
    if (token) {
      explicit_bzero(token, strlen(token));
      free(token);
    }
  } else if (!u->client) {
    strbuf tf = {0};
    if (in_cluster()) {
      sb_printf(&tf, "%s/token", sa_dir());
      cfg.token_file = sb_str(&tf);
      LOGV(2, NULL, "Creating Prometheus client (with SA token)");
    }
    u->client = prom_client_new(&cfg, err);
    if (!u->client && in_cluster())
      rc = dserr_prefix(err, "unable to reconcile an in cluster SA token");
    else if (!u->client)
      LOGE(NULL, "unable to create a prometheus client", err->msg);
    sb_free(&tf);
  }
  free(ca);
  return rc;
}

usage_prom *usage_prom_new(const metrics_provider *mp) {
  usage_prom *u = calloc(1, sizeof *u);
  if (!u)
    abort();
  u->url = xstrdup(mp->prometheus_url);
  if (mp->has_secret_ref) {
    u->secret_ns = xstrdup(mp->secret_namespace ? mp->secret_namespace : "");
    u->secret_name = xstrdup(mp->secret_name ? mp->secret_name : "");
  }
  return u;
}

static bool same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

bool usage_prom_same(const usage_prom *u, const metrics_provider *mp) {
  return u && mp && same_str(u->url, mp->prometheus_url) &&
         (mp->has_secret_ref ? u->secret_ns && same_str(u->secret_ns, mp->secret_namespace) &&
                                   same_str(u->secret_name, mp->secret_name)
                             : !u->secret_ns);
}

void usage_prom_free(usage_prom *u) {
  if (!u)
    return;
  drop_client(u);
  free(u->url);
  free(u->secret_ns);
  free(u->secret_name);
  free(u);
}

int usage_prom_query(usage_prom *u, kube_client *api, model *m, const char *const *queries,
                     size_t n, dserr *err) {
  if (prepare_client(u, api, err) < 0)
    return -1;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  double at = (double)now.tv_sec + (double)(now.tv_nsec / 1000000) / 1e3;
  /* without a client nothing answers: the plugins say "prometheus client not initialized" */
  for (size_t i = 0; u->client && i < n; i++)
    prom_query(u->client, m, queries[i], at);
  return 0;
}

/* The samples' times, for usageSamples.maxSampleAge: an instant query answers with its own
 * evaluation time, so each query is also asked as timestamp(<query>) and the two joined by
 * instance. An answer without them leaves the ages unknown (not checked; logged). */
static int fetch_sample_times(usage_live *u, model *m, dserr *err) {
  const usage_trust *t = &u->pol->usage;
  if (!t->skip_nodes || t->max_age_ns <= 0 || !u->needs.nqueries)
    return 0;
  size_t n = u->needs.nqueries;
  char **q = xmalloc(n * sizeof *q);
  for (size_t i = 0; i < n; i++) {
    strbuf sb = {0};
    sb_printf(&sb, "timestamp(%s)", u->needs.queries[i]);
    q[i] = sb_detach(&sb);
  }
  int rc = usage_prom_query(u->prom, u->api, m, (const char *const *)q, n, err);
  for (size_t i = 0; i < n; i++) {
    const prom_answer *a = model_find_prom_answer(m, q[i]);
    if (a && a->error)
      LOGV(2, NULL, "The samples' times could not be read; their ages are not checked this cycle",
           LSTR("query", q[i]), LSTR("err", a->error));
    model_prom_join_times(m, u->needs.queries[i]);
    free(q[i]);
  }
  free(q);
  return rc;
}

int usage_live_fetch(usage_live *u, model *m, dserr *err) {
  if (u->collector)
    fetch_metrics_api(u, m);
  if (u->prom && (usage_prom_query(u->prom, u->api, m, u->needs.queries, u->needs.nqueries, err) < 0 ||
                  fetch_sample_times(u, m, err) < 0))
    return -1;
  model_link_metrics(m);
  return 0;
}

/* ---------- simulate: --metrics files ---------- */

int usage_load_files(model *m, const policy *pol, const char *const *paths, size_t n, dserr *err) {
  usage_needs needs;
  fw_usage_needs(pol, &needs);
  const metrics_provider *mp = policy_metrics_provider(pol, "Prometheus");
  bool prom_ok = mp && mp->prometheus_url && *mp->prometheus_url;
  bool collector = policy_metrics_collector(pol);
  const char *query = needs.nqueries == 1 && prom_ok ? needs.queries[0] : NULL;
  bool seen_prom = false, nodes = m->node_metrics.n > 0, pods = m->pod_metrics.n > 0;
  for (size_t i = 0; i < n; i++) {
    metrics_file_info info;
    if (decode_metrics_file(m, paths[i], query, &info, err) < 0)
      return -1;
    if (info.prometheus) {
      if (seen_prom)
        return dserr_set(err, "%s: a second Prometheus response (one answers the policy's query)",
                         paths[i]);
      seen_prom = true;
      if (needs.nqueries > 1)
        return dserr_set(err,
                         "%s: the policy's plugins run %zu distinct Prometheus queries and a "
                         "response file answers one",
                         paths[i], needs.nqueries);
      if (needs.nqueries == 0)
        LOGW(NULL,
             "Ignoring a Prometheus response: no enabled plugin of the policy queries "
             "Prometheus",
             LSTR("file", paths[i]));
      else if (!prom_ok)
        LOGW(NULL,
             "Ignoring a Prometheus response: the policy has no Prometheus metrics "
             "provider with a URL, so the plugins report \"prometheus client not "
             "initialized\" as they would live",
             LSTR("file", paths[i]));
    }
    nodes |= info.node_list || info.node_metrics;
    pods |= info.pod_list || info.pod_metrics;
    if ((info.node_list || info.node_metrics || info.pod_list || info.pod_metrics) && !collector)
      LOGW(NULL,
           "Ignoring metrics.k8s.io usage: the policy runs no metrics collector "
           "(metricsCollector.enabled or a KubernetesMetrics metrics provider), so the "
           "plugins report \"metrics client not initialized\" as they would live",
           LSTR("file", paths[i]));
  }
  m->node_metrics_read = collector && nodes;
  m->pod_metrics_read = collector && pods;
  model_link_metrics(m);
  return 0;
}
