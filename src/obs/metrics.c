/* metrics.c - in-memory Prometheus registry and text rendering; see metrics.h.
 *
 * Series are few (one per result x strategy x profile x namespace x node that actually
 * occurred), so they sit in plain arrays searched linearly, except the evicted-pods counter:
 * a Deployment at 5,000 nodes makes thousands of its series, and every eviction attempt that
 * fails adds to one, so it has a hash index. Label names are printed in sorted order, as
 * client_golang does. */
#include "metrics.h"

#include "../util/hash.h"
#include "../util/xalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NLABELS 5

typedef struct {
  char *labels[NLABELS]; /* namespace, node, profile, result, strategy */
  double value;
} counter_series;

static const double loop_buckets[] = {.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500};
static const double strategy_buckets[] = {.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25, 50, 100};
#define NLOOP (sizeof loop_buckets / sizeof loop_buckets[0])
#define NSTRAT (sizeof strategy_buckets / sizeof strategy_buckets[0])

typedef struct {
  char *profile, *strategy;
  unsigned long long counts[NSTRAT];
  unsigned long long count;
  double sum;
} strategy_series;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_enabled;
static char *g_version;
static double g_start_time;
static counter_series *g_evicted;
static size_t g_nevicted, g_evicted_cap;
static uint32_t *g_evicted_index; /* hash of the labels -> position + 1 (0: empty) */
static size_t g_evicted_slots;    /* a power of two, at most half full */
static unsigned long long g_loop_counts[NLOOP], g_loop_count;
static double g_loop_sum;
static strategy_series *g_strat;
static size_t g_nstrat;
typedef struct {
  char *kind;
  double value;
} skipped_series;
static skipped_series *g_skipped;
static size_t g_nskipped;

void metrics_enable(const char *version) {
  pthread_mutex_lock(&g_lock);
  g_enabled = 1;
  free(g_version);
  g_version = strdup(version ? version : "");
  struct timeval tv;
  gettimeofday(&tv, NULL);
  g_start_time = (double)tv.tv_sec + tv.tv_usec / 1e6;
  pthread_mutex_unlock(&g_lock);
}

int metrics_enabled(void) { return g_enabled; }

/* the NUL after each label keeps ("ab", "c") apart from ("a", "bc") */
static uint64_t labels_hash(const char *const labels[NLABELS]) {
  uint64_t h = FNV1A_OFFSET;
  for (int k = 0; k < NLABELS; k++)
    h = fnv1a(h, labels[k], strlen(labels[k]) + 1);
  return h;
}

/* Indexes every evicted-pods series again in a table twice the size (under g_lock). */
static void evicted_reindex(void) {
  free(g_evicted_index);
  g_evicted_slots = g_evicted_slots ? 2 * g_evicted_slots : 64;
  g_evicted_index = calloc(g_evicted_slots, sizeof *g_evicted_index);
  if (!g_evicted_index)
    abort();
  for (size_t i = 0; i < g_nevicted; i++) {
    size_t j = (size_t)labels_hash((const char *const *)g_evicted[i].labels) & (g_evicted_slots - 1);
    while (g_evicted_index[j])
      j = (j + 1) & (g_evicted_slots - 1);
    g_evicted_index[j] = (uint32_t)(i + 1);
  }
}

void metrics_pods_evicted(const char *result, const char *strategy, const char *profile,
                          const char *ns, const char *node) {
  if (!g_enabled)
    return;
  const char *want[NLABELS] = {ns, node, profile, result, strategy};
  for (int k = 0; k < NLABELS; k++)
    want[k] = want[k] ? want[k] : "";
  uint64_t h = labels_hash(want);
  pthread_mutex_lock(&g_lock);
  if (!g_evicted_slots)
    evicted_reindex();
  size_t slot = (size_t)h & (g_evicted_slots - 1);
  for (; g_evicted_index[slot]; slot = (slot + 1) & (g_evicted_slots - 1)) {
    counter_series *c = &g_evicted[g_evicted_index[slot] - 1];
    int same = 1;
    for (int k = 0; k < NLABELS && same; k++)
      same = strcmp(c->labels[k], want[k]) == 0;
    if (same) {
      c->value += 1;
      pthread_mutex_unlock(&g_lock);
      return;
    }
  }
  g_evicted = xgrow(g_evicted, g_nevicted, &g_evicted_cap, sizeof *g_evicted);
  counter_series *c = &g_evicted[g_nevicted++];
  for (int k = 0; k < NLABELS; k++)
    c->labels[k] = strdup(want[k]);
  c->value = 1;
  if (2 * g_nevicted > g_evicted_slots)
    evicted_reindex();
  else
    g_evicted_index[slot] = (uint32_t)g_nevicted;
  pthread_mutex_unlock(&g_lock);
}

void metrics_loop_duration(double seconds) {
  if (!g_enabled)
    return;
  pthread_mutex_lock(&g_lock);
  for (size_t b = 0; b < NLOOP; b++)
    if (seconds <= loop_buckets[b])
      g_loop_counts[b]++;
  g_loop_count++;
  g_loop_sum += seconds;
  pthread_mutex_unlock(&g_lock);
}

void metrics_strategy_duration(const char *strategy, const char *profile, double seconds) {
  if (!g_enabled)
    return;
  pthread_mutex_lock(&g_lock);
  size_t i;
  for (i = 0; i < g_nstrat; i++)
    if (!strcmp(g_strat[i].strategy, strategy) && !strcmp(g_strat[i].profile, profile))
      break;
  if (i == g_nstrat) {
    g_strat = realloc(g_strat, (g_nstrat + 1) * sizeof *g_strat);
    if (!g_strat)
      abort();
    memset(&g_strat[i], 0, sizeof g_strat[i]);
    g_strat[i].strategy = strdup(strategy);
    g_strat[i].profile = strdup(profile);
    g_nstrat++;
  }
  for (size_t b = 0; b < NSTRAT; b++)
    if (seconds <= strategy_buckets[b])
      g_strat[i].counts[b]++;
  g_strat[i].count++;
  g_strat[i].sum += seconds;
  pthread_mutex_unlock(&g_lock);
}

/* ---------- small labelled counters (three labels) and one plain histogram ---------- */

typedef struct {
  char *v[3];
  double value;
} triple_series;

typedef struct {
  const char *name, *help;
  const char *label[3]; /* in sorted order, as they are printed; NULL after the last */
  triple_series *s;
  size_t n;
} triple_family;

static triple_family g_kv_blocks = {
    "descheduler_kubevirt_eviction_blocks_total",
    "[ALPHA] Number of virt-launcher pod evictions blocked by KubevirtMigrationAware, by reason, "
    "node, and namespace.",
    {"namespace", "node", "reason"}, NULL, 0};
static triple_family g_vs_blocks = {
    "descheduler_vmsafety_blocks_total",
    "[ALPHA] Number of virt-launcher pod evictions the VMSafety evictor plugin refused, by rule, "
    "node, and namespace.",
    {"namespace", "node", "rule"}, NULL, 0};

static triple_family g_watch_events = {
    "descheduler_watch_cache_events_total",
    "Number of watch events the watch cache of Deployment mode received, by kind and type "
    "(ADDED, MODIFIED, DELETED, or ignored for a duplicate or an event older than the cache).",
    {"kind", "type", NULL}, NULL, 0};
static triple_family g_watch_lists = {
    "descheduler_watch_cache_lists_total",
    "Number of full lists the watch cache of Deployment mode made, by kind and reason (start, "
    "expired: the watch's resourceVersion was too old, broken: the stream could not be read).",
    {"kind", "reason", NULL}, NULL, 0};

static triple_family g_policy_reloads = {
    "descheduler_policy_reloads_total",
    "Number of times a running descheduler met a changed policy (a new policy file, or a new "
    "rendering of its KubeDescheduler), by result: loaded, or rejected (invalid: the last good "
    "policy keeps running).",
    {"result", NULL, NULL}, NULL, 0};

static triple_family g_untrusted = {
    "descheduler_usage_untrusted_nodes_total",
    "Number of times a utilization plugin left a node out of its classification because the "
    "node's actual-usage sample could not be trusted, by node and reason (missing, nan, stale).",
    {"node", "reason", NULL}, NULL, 0};

static const double cooldown_buckets[] = {900, 1800, 3600, 7200, 14400, 21600};
#define NCOOL (sizeof cooldown_buckets / sizeof cooldown_buckets[0])
static int g_kv_registered;
static unsigned long long g_cool_counts[NCOOL], g_cool_count;
static double g_cool_sum;

static void triple_inc(triple_family *f, const char *a, const char *b, const char *c) {
  if (!g_enabled)
    return;
  const char *want[3] = {a ? a : "", b ? b : "", c ? c : ""};
  pthread_mutex_lock(&g_lock);
  size_t i;
  for (i = 0; i < f->n; i++)
    if (!strcmp(f->s[i].v[0], want[0]) && !strcmp(f->s[i].v[1], want[1]) &&
        !strcmp(f->s[i].v[2], want[2]))
      break;

  if (i == f->n) {
    f->s = realloc(f->s, (f->n + 1) * sizeof *f->s);
    if (!f->s)
      abort();
    for (int k = 0; k < 3; k++)
      f->s[i].v[k] = strdup(want[k]);
    f->s[i].value = 0;
    f->n++;
  }
  f->s[i].value += 1;
  pthread_mutex_unlock(&g_lock);
}

static void triple_free(triple_family *f) {
  for (size_t i = 0; i < f->n; i++)
    for (int k = 0; k < 3; k++)
      free(f->s[i].v[k]);
  free(f->s);
  f->s = NULL;
  f->n = 0;
}

void metrics_kubevirt_register(void) { g_kv_registered = 1; }

void metrics_watch_event(const char *kind, const char *type) {
  triple_inc(&g_watch_events, kind, type, NULL);
}

void metrics_watch_list(const char *kind, const char *reason) {
  triple_inc(&g_watch_lists, kind, reason, NULL);
}

void metrics_kubevirt_block(const char *reason, const char *node, const char *ns) {
  triple_inc(&g_kv_blocks, ns, node, reason);
}

void metrics_vmsafety_block(const char *rule, const char *node, const char *ns) {
  triple_inc(&g_vs_blocks, ns, node, rule);
}

void metrics_kubevirt_cooldown(double seconds) {
  if (!g_enabled)
    return;
  pthread_mutex_lock(&g_lock);
  for (size_t b = 0; b < NCOOL; b++)
    if (seconds <= cooldown_buckets[b])
      g_cool_counts[b]++;
  g_cool_count++;
  g_cool_sum += seconds;
  pthread_mutex_unlock(&g_lock);
}

void metrics_usage_untrusted(const char *node, const char *reason) {
  triple_inc(&g_untrusted, node, reason, NULL);
}

void metrics_policy_reload(const char *result) { triple_inc(&g_policy_reloads, result, NULL, NULL); }

void metrics_objects_skipped(const char *kind) {
  if (!g_enabled)
    return;
  pthread_mutex_lock(&g_lock);
  size_t i;
  for (i = 0; i < g_nskipped; i++)
    if (!strcmp(g_skipped[i].kind, kind))
      break;
  if (i == g_nskipped) {
    g_skipped = realloc(g_skipped, (g_nskipped + 1) * sizeof *g_skipped);
    if (!g_skipped)
      abort();
    g_skipped[i].kind = strdup(kind);
    g_skipped[i].value = 0;
    g_nskipped++;
  }
  g_skipped[i].value += 1;
  pthread_mutex_unlock(&g_lock);
}

/* label values escape \, " and newline */
static void label_value(strbuf *sb, const char *v) {
  for (; *v; v++) {
    if (*v == '\\' || *v == '"')
      sb_appendc(sb, '\\'), sb_appendc(sb, *v);
    else if (*v == '\n')
      sb_append(sb, "\\n");
    else
      sb_appendc(sb, *v);
  }
}

static void render_counter(strbuf *out, const char *name) {
  static const char *names[NLABELS] = {"namespace", "node", "profile", "result", "strategy"};
  sb_printf(out,
            "# HELP %s [ALPHA] Number of total evicted pods, by the result, by the strategy, by the "
            "namespace, by the node name. 'error' result means a pod could not be evicted\n"
            "# TYPE %s counter\n",
            name, name);
  for (size_t i = 0; i < g_nevicted; i++) {
    sb_printf(out, "%s{", name);
    for (int k = 0; k < NLABELS; k++) {
      sb_printf(out, "%s%s=\"", k ? "," : "", names[k]);
      label_value(out, g_evicted[i].labels[k]);
      sb_appendc(out, '"');
    }
    sb_printf(out, "} %.17g\n", g_evicted[i].value);
  }
}

static void render_skipped(strbuf *out) {
  const char *name = "descheduler_objects_skipped_total";
  sb_printf(out,
            "# HELP %s Number of objects left out of the cluster state because they could not be "
            "decoded, by kind (each time one is read: every cycle when the cluster is listed, once "
            "per version on the watch cache)\n# TYPE %s counter\n",
            name, name);
  for (size_t i = 0; i < g_nskipped; i++) {
    sb_printf(out, "%s{kind=\"", name);
    label_value(out, g_skipped[i].kind);
    sb_printf(out, "\"} %.17g\n", g_skipped[i].value);
  }
}

static void render_bucket_le(strbuf *out, double le) { sb_printf(out, "%g", le); }

/* a family without series is not printed, as client_golang leaves out empty vectors */
static void render_triple(strbuf *out, const triple_family *f) {
  if (!f->n)
    return;
  sb_printf(out, "# HELP %s %s\n# TYPE %s counter\n", f->name, f->help, f->name);
  for (size_t i = 0; i < f->n; i++) {
    sb_printf(out, "%s{", f->name);
    for (int k = 0; k < 3 && f->label[k]; k++) {
      sb_printf(out, "%s%s=\"", k ? "," : "", f->label[k]);
      label_value(out, f->s[i].v[k]);
      sb_appendc(out, '"');
    }
    sb_printf(out, "} %.17g\n", f->s[i].value);
  }
}

static void render_cooldown(strbuf *out) {
  if (!g_kv_registered)
    return;
  const char *name = "descheduler_kubevirt_effective_cooldown_seconds";
  sb_printf(out,
            "# HELP %s [ALPHA] Distribution of effective cooldown durations applied when deferring "
            "virt-launcher pod evictions, in seconds.\n# TYPE %s histogram\n",
            name, name);
  for (size_t b = 0; b < NCOOL; b++) {
    sb_printf(out, "%s_bucket{le=\"", name);
    render_bucket_le(out, cooldown_buckets[b]);
    sb_printf(out, "\"} %llu\n", g_cool_counts[b]);
  }
  sb_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.17g\n%s_count %llu\n", name, g_cool_count,
            name, g_cool_sum, name, g_cool_count);
}

static void render_loop(strbuf *out, const char *name) {
  sb_printf(out,
            "# HELP %s [ALPHA] Time taken to complete a full descheduling cycle\n# TYPE %s histogram\n",
            name, name);
  for (size_t b = 0; b < NLOOP; b++) {
    sb_printf(out, "%s_bucket{le=\"", name);
    render_bucket_le(out, loop_buckets[b]);
    sb_printf(out, "\"} %llu\n", g_loop_counts[b]);
  }
  sb_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.17g\n%s_count %llu\n", name, g_loop_count,
            name, g_loop_sum, name, g_loop_count);
}

static void render_strategy(strbuf *out, const char *name) {
  sb_printf(out,
            "# HELP %s [ALPHA] Time taken to complete Each strategy of the descheduling "
            "operation\n# TYPE %s histogram\n",
            name, name);
  for (size_t i = 0; i < g_nstrat; i++) {
    strbuf lbl = {0};
    sb_append(&lbl, "profile=\"");
    label_value(&lbl, g_strat[i].profile);
    sb_append(&lbl, "\",strategy=\"");
    label_value(&lbl, g_strat[i].strategy);
    sb_appendc(&lbl, '"');
    for (size_t b = 0; b < NSTRAT; b++) {
      sb_printf(out, "%s_bucket{%s,le=\"", name, sb_str(&lbl));
      render_bucket_le(out, strategy_buckets[b]);
      sb_printf(out, "\"} %llu\n", g_strat[i].counts[b]);
    }
    sb_printf(out, "%s_bucket{%s,le=\"+Inf\"} %llu\n%s_sum{%s} %.17g\n%s_count{%s} %llu\n", name,
              sb_str(&lbl), g_strat[i].count, name, sb_str(&lbl), g_strat[i].sum, name,
              sb_str(&lbl), g_strat[i].count);
    sb_free(&lbl);
  }
}

static long read_rss_bytes(long *vsize) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, total = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &total, &pages) != 2)
      pages = total = 0;
    fclose(f);
  }
  long ps = sysconf(_SC_PAGESIZE);
  *vsize = total * ps;
  return pages * ps;
}

static void render_process(strbuf *out) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
  long vsize, rss = read_rss_bytes(&vsize);
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  sb_printf(out,
            "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
            "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.6f\n"
            "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
            "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %ld\n"
            "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
            "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %ld\n"
            "# HELP process_start_time_seconds Start time of the process since unix epoch in "
            "seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.3f\n"
            "# HELP process_max_fds Maximum number of open file descriptors.\n"
            "# TYPE process_max_fds gauge\nprocess_max_fds %llu\n",
            cpu, rss, vsize, g_start_time, (unsigned long long)rl.rlim_cur);
}

void metrics_render(strbuf *out) {
  pthread_mutex_lock(&g_lock);
  const char *bi = "descheduler_build_info";
  sb_printf(out,
            "# HELP %s [ALPHA] Build info about descheduler, including Go version, Descheduler "
            "version, Git SHA, Git branch\n# TYPE %s gauge\n"
            "%s{AppVersion=\"%s\",DeschedulerVersion=\"%s\",GitBranch=\"\",GitSha1=\"\","
            "GoVersion=\"none (C build)\"} 1\n",
            bi, bi, bi, g_version ? g_version : "", g_version ? g_version : "");
  render_loop(out, "descheduler_descheduler_loop_duration_seconds");
  render_strategy(out, "descheduler_descheduler_strategy_duration_seconds");
  render_cooldown(out);
  render_triple(out, &g_kv_blocks);
  render_loop(out, "descheduler_loop_duration_seconds");
  render_skipped(out);
  render_counter(out, "descheduler_pods_evicted");
  render_counter(out, "descheduler_pods_evicted_total");
  render_triple(out, &g_policy_reloads);
  render_strategy(out, "descheduler_strategy_duration_seconds");
  render_triple(out, &g_untrusted);
  render_triple(out, &g_vs_blocks);
  render_triple(out, &g_watch_events);
  render_triple(out, &g_watch_lists);
  render_process(out);
  pthread_mutex_unlock(&g_lock);
}

void metrics_reset(void) {
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_nevicted; i++)
    for (int k = 0; k < NLABELS; k++)
      free(g_evicted[i].labels[k]);
  free(g_evicted);
  g_evicted = NULL;
  g_nevicted = g_evicted_cap = 0;
  free(g_evicted_index);
  g_evicted_index = NULL;
  g_evicted_slots = 0;
  for (size_t i = 0; i < g_nstrat; i++) {
    free(g_strat[i].strategy);
    free(g_strat[i].profile);
  }
  free(g_strat);
  g_strat = NULL;
  g_nstrat = 0;
  triple_free(&g_kv_blocks);
  triple_free(&g_vs_blocks);
  triple_free(&g_watch_events);
  triple_free(&g_watch_lists);
  triple_free(&g_policy_reloads);
  triple_free(&g_untrusted);
  memset(g_cool_counts, 0, sizeof g_cool_counts);
  g_cool_count = 0;
  g_cool_sum = 0;
  for (size_t i = 0; i < g_nskipped; i++)
    free(g_skipped[i].kind);
  free(g_skipped);
  g_skipped = NULL;
  g_nskipped = 0;
  memset(g_loop_counts, 0, sizeof g_loop_counts);
  g_loop_count = 0;
  g_loop_sum = 0;
  pthread_mutex_unlock(&g_lock);
}
