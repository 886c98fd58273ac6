/* hint.c - see hint.h. */
#include "hint.h"

#include "../obs/tlsconfig.h"
#include "../plugins/registry.h"

#include <stdio.h>
#include <string.h>

/* The extension points a plugin serves, in words. */
static void points(strbuf *out, unsigned p) {
  static const struct {
    unsigned bit;
    const char *name;
  } all[] = {{PLUGIN_DESCHEDULE, "deschedule"},
             {PLUGIN_BALANCE, "balance"},
             {PLUGIN_EVICTOR, "filter and preEvictionFilter"}};
  bool first = true;
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (p & all[i].bit) {
      sb_printf(out, "%s%s", first ? "" : " and ", all[i].name);
      first = false;
    }
}

#define NAMES_MAX 16

/* The plugin names a message says are unknown (or unknown at an extension point). */
typedef struct {
  size_t n;
  char names[NAMES_MAX][128];
} name_list;

static void add_name(name_list *l, const char *name, size_t len) {
  if (l->n == NAMES_MAX || len >= sizeof l->names[0])
    return;
  snprintf(l->names[l->n], sizeof l->names[0], "%.*s", (int)len, name);
  for (size_t i = 0; i < l->n; i++)
    if (!strcmp(l->names[i], l->names[l->n]))
      return;
  l->n++;
}

/* The names in upstream's two unknown-plugin texts. */
static void plugin_names(const char *msg, name_list *l) {
  static const char map_mark[] = "non-existing plugins: map[";
  for (const char *p = strstr(msg, map_mark); p; p = strstr(p, map_mark)) {
    p += sizeof map_mark - 1;
    /* Go prints the keys of a map[string]struct{} as `A:{} B:{}` */
    while (*p && *p != ']') {
      const char *end = strstr(p, ":{}");
      if (!end)
        break;
      add_name(l, p, (size_t)(end - p));
      p = end + 3;
      if (*p == ' ')
        p++;
    }
  }
  static const char cfg_mark[] = ": plugin ", cfg_end[] = " in pluginConfig not registered";
  for (const char *p = strstr(msg, cfg_mark); p; p = strstr(p, cfg_mark)) {
    p += sizeof cfg_mark - 1;
    const char *end = strstr(p, cfg_end);
    if (!end)
      break;
    if (!memchr(p, ' ', (size_t)(end - p)))
      add_name(l, p, (size_t)(end - p));
    p = end;
  }
}

bool cli_hint(const char *msg, strbuf *out) {
  if (tls_flag_hint(msg, out))
    return true;
  if (strstr(msg, "is registered for version \"descheduler/v1alpha1\"")) {
    sb_append(out, "descheduler/v1alpha1 is not read by upstream's descheduler either since "
                   "v0.31.0: write the policy as descheduler/v1alpha2, each strategy a plugin of "
                   "a profile (its args under profiles[].pluginConfig[], its name under "
                   "profiles[].plugins.deschedule.enabled or .balance.enabled)");
    return true;
  }
  name_list l = {0};
  plugin_names(msg, &l);
  /* a misspelt name: the registered one it is nearest to */
  const char *near[NAMES_MAX];
  const char *of[NAMES_MAX];
  size_t nnear = 0;
  for (size_t i = 0; i < l.n; i++)
    if (!plugin_lookup(l.names[i]) && (near[nnear] = plugin_nearest(l.names[i])))
      of[nnear++] = l.names[i];
  size_t start = out->len;
  for (size_t i = 0; i < nnear; i++) {
    sb_printf(out, "%s%s", i ? ", " : "did you mean ", near[i]);
    if (nnear > 1)
      sb_printf(out, " (for %s)", of[i]);
  }
  if (nnear)
    sb_appendc(out, '?');
  /* a registered name at an extension point it does not serve: the ones it does serve */
  for (size_t i = 0; i < l.n; i++) {
    const plugin_desc *d = plugin_lookup(l.names[i]);
    if (!d)
      continue;
    sb_printf(out, "%s%s serves the ", out->len > start ? (nnear ? " " : "; ") : "", d->name);
    points(out, d->points);
    sb_append(out, d->points & (d->points - 1) || d->points == PLUGIN_EVICTOR ? " extension points"
                                                                               : " extension point");
  }
  return out->len > start;
}

void cli_error(const char *who, const char *msg) {
  fprintf(stderr, "%s: %s\n", who, msg);
  strbuf hint = {0};
  if (cli_hint(msg, &hint))
    fprintf(stderr, "%s\n", sb_str(&hint));
  sb_free(&hint);
}
