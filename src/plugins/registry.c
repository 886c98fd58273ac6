/* registry.c - plugin names to descriptors (descheduler-core.md §2, "Registered names"). */
#include "registry.h"

#include <string.h>

extern const plugin_desc plugin_default_evictor;
extern const plugin_desc plugin_low_node_utilization;

static const plugin_desc *const all[] = {
    &plugin_default_evictor,
    &plugin_low_node_utilization,
    NULL,
};

const plugin_desc *plugin_lookup(const char *name) {
  for (size_t i = 0; all[i]; i++)
    if (strcmp(all[i]->name, name) == 0)
      return all[i];
  return NULL;
}

const plugin_desc *const *plugin_all(void) { return all; }
