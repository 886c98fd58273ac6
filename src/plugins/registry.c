/* registry.c - plugin names to descriptors (upstream's RegisterDefaultPlugins, setupplugins.go).
 *
 * Every upstream plugin has a slot here, and so have the plugins of this project (VMSafety)
 * and of the OpenShift operator's KubeVirt profile (KubevirtMigrationAware). A descriptor is declared weak so that the table
 * links while a plugin file is being written; an absent plugin is simply not registered
 * (and a policy naming it gets upstream's "not registered" error). */
#include "registry.h"

#include "../util/strbuf.h"

#include <string.h>

#define PLUGIN(sym) extern const plugin_desc sym __attribute__((weak));
PLUGIN(plugin_default_evictor)
PLUGIN(plugin_low_node_utilization)
PLUGIN(plugin_high_node_utilization)
PLUGIN(plugin_remove_duplicates)
PLUGIN(plugin_topology_spread)
PLUGIN(plugin_node_affinity)
PLUGIN(plugin_node_taints)
PLUGIN(plugin_inter_pod_anti_affinity)
PLUGIN(plugin_too_many_restarts)
PLUGIN(plugin_pod_life_time)
PLUGIN(plugin_remove_failed_pods)
PLUGIN(plugin_vm_safety)
PLUGIN(plugin_kubevirt_migration_aware)
#undef PLUGIN

static const plugin_desc *const candidates[] = {
    &plugin_default_evictor,      &plugin_low_node_utilization, &plugin_high_node_utilization,
    &plugin_remove_duplicates,    &plugin_topology_spread,      &plugin_node_affinity,
    &plugin_node_taints,          &plugin_inter_pod_anti_affinity, &plugin_too_many_restarts,
    &plugin_pod_life_time,        &plugin_remove_failed_pods,   &plugin_vm_safety,
    &plugin_kubevirt_migration_aware,
};
#define NCANDIDATES (sizeof candidates / sizeof candidates[0])

static const plugin_desc *registered[NCANDIDATES + 1];

static const plugin_desc *const *table(void) {
  if (!registered[0]) {
    size_t k = 0;
    for (size_t i = 0; i < NCANDIDATES; i++)
      if (candidates[i])
        registered[k++] = candidates[i];
    registered[k] = NULL;
  }
  return registered;
}

const plugin_desc *plugin_lookup(const char *name) {
  const plugin_desc *const *all = table();
  for (size_t i = 0; all[i]; i++)
    if (strcmp(all[i]->name, name) == 0)
      return all[i];
  return NULL;
}

const char *plugin_nearest(const char *name) {
  const plugin_desc *const *all = table();
  const char *names[NCANDIDATES];
  size_t n = 0;
  for (; all[n]; n++)
    names[n] = all[n]->name;
  return str_nearest(name, names, n);
}
