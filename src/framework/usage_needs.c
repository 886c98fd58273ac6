/* usage_needs.c - which actual-utilization inputs a policy reads (framework.h, fw_usage_needs).
 *
 * Actual utilization is an input like the cluster: it is fetched before the cycle (live) or
 * read from files (simulate), never queried by a plugin. To fetch only what is needed, each
 * enabled plugin that reads usage says so through its descriptor's add_usage_needs; this
 * file walks the profiles' enabled plugins and collects the union, one entry per distinct
 * Prometheus query (so a query shared by two profiles is asked once per cycle). The same walk
 * tells whether pod conditions are read (fw_reads_pod_conditions). */
#include "framework.h"

#include "../obs/log.h"

#include <string.h>

void usage_needs_add_query(usage_needs *needs, const char *query) {
  for (size_t i = 0; i < needs->nqueries; i++)
    if (strcmp(needs->queries[i], query) == 0)
      return;
  if (needs->nqueries == USAGE_MAX_QUERIES) {
    LOGE(NULL, "Too many distinct Prometheus queries in the policy; this one is not fetched",
         "prometheus client not initialized", LSTR("query", query));
    return;
  }
  needs->queries[needs->nqueries++] = query;
}

static void add_set(const plugin_set *s, usage_needs *out) {
  for (size_t k = 0; k < s->n; k++) {
    const plugin_config *pc = s->configs[k];
    if (pc && pc->desc && pc->desc->add_usage_needs)
      pc->desc->add_usage_needs(pc->args, out);
  }
}

void fw_usage_needs(const policy *pol, usage_needs *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < pol->nprofiles; i++) {
    add_set(&pol->profiles[i].deschedule, out);
    add_set(&pol->profiles[i].balance, out);
  }
}

static bool set_reads_conditions(const plugin_set *s) {
  for (size_t k = 0; k < s->n; k++) {
    const plugin_config *pc = s->configs[k];
    if (pc && pc->desc && pc->desc->reads_pod_conditions &&
        pc->desc->reads_pod_conditions(pc->args))
      return true;
  }
  return false;
}

bool fw_reads_pod_conditions(const policy *pol) {
  for (size_t i = 0; i < pol->nprofiles; i++) {
    const profile *p = &pol->profiles[i];
    if (set_reads_conditions(&p->deschedule) || set_reads_conditions(&p->balance) ||
        set_reads_conditions(&p->filter) || set_reads_conditions(&p->preevictionfilter))
      return true;
  }
  return false;
}
