/* registry.h - every plugin, by the name a policy uses. */
#ifndef DS_REGISTRY_H
#define DS_REGISTRY_H

#include "../policy/plugin_desc.h"

/* The descriptor registered under name, or NULL. */
const plugin_desc *plugin_lookup(const char *name);
/* The registered plugin whose name name most likely misspells ("LowNodeUtilisation":
 * LowNodeUtilization), or NULL (util/strbuf.h's str_nearest). */
const char *plugin_nearest(const char *name);

#endif
