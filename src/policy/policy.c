/* policy.c - DeschedulerPolicy loading in upstream's order; see policy.h. */
#include "policy.h"

#include "../apimachinery/timeutil.h"
#include "../obs/log.h"
#include "../util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NINJECTED 2 /* evictor plugins injected into every profile, see inject_evictors */

#define SCHEME "sigs.k8s.io/descheduler/pkg/descheduler/scheme/scheme.go:40"

typedef struct {
  policy *p;
  plugin_lookup_fn lookup;
  dserr *err;
} loader;

static void warn_ignored(loader *l, const char *path, const char *why) {
  LOGW(NULL, "Ignoring a policy field, as upstream does", LSTR("file", l->p->path),
       LSTR("field", path), LSTR("reason", why));
  policy *p = l->p;
  p->ignored = arena_grow(p->mem, p->ignored, p->nignored, &p->cap_ignored, sizeof *p->ignored);
  p->ignored[p->nignored++] = (policy_ignored){arena_strdup(p->mem, path), why};
}

static int fail_decode(loader *l) {
  return dserr_prefix(l->err, "failed decoding descheduler's policy config \"%s\"", l->p->path);
}

static int type_error(loader *l, const char *path, const char *want, const doc_node *got) {
  dserr_set(l->err, "%s: expected %s, got %s", path, want, doc_describe(l->p->mem, got));
  return fail_decode(l);
}

static bool is_null(const doc_node *n) { return !n || n->type == DOC_NULL; }

static int read_names(loader *l, const doc_node *n, const char *path, plugin_set *out) {
  if (is_null(n))
    return 0;
  if (n->type != DOC_SEQ)
    return type_error(l, path, "a list of plugin names", n);
  out->n = n->n;
  out->names = ARENA_NEWN(l->p->mem, const char *, n->n ? n->n : 1);
  for (size_t i = 0; i < n->n; i++) {
    if (n->items[i]->type != DOC_STR) {
      char p[256];
      snprintf(p, sizeof p, "%s[%zu]", path, i);
      return type_error(l, p, "a plugin name", n->items[i]);
    }
    out->names[i] = n->items[i]->text;
  }
  return 0;
}

/* A plugin set with no plugin in it (null, {}, or null/empty enabled and disabled lists) */
static bool point_configures_anything(const doc_node *set) {
  if (is_null(set) || set->type != DOC_MAP)
    return !is_null(set);
  for (size_t k = 0; k < set->n; k++) {
    const doc_node *v = set->pairs[k].value;
    if (!is_null(v) && !(v->type == DOC_SEQ && v->n == 0))
      return true;
  }
  return false;
}

static int read_plugin_sets(loader *l, const doc_node *plugins, const char *path, profile *pr) {
  if (is_null(plugins))
    return 0;
  if (plugins->type != DOC_MAP)
    return type_error(l, path, "a map of extension points", plugins);
  for (size_t i = 0; i < plugins->n; i++) {
    const char *point = plugins->pairs[i].key;
    const doc_node *set = plugins->pairs[i].value;
    char p[256];
    snprintf(p, sizeof p, "%s.%s", path, point);
    plugin_set *dst = !strcmp(point, "deschedule")          ? &pr->deschedule
                      : !strcmp(point, "balance")           ? &pr->balance
                      : !strcmp(point, "filter")            ? &pr->filter
                      : !strcmp(point, "preevictionfilter") ? &pr->preevictionfilter
                                                            : NULL;
    if (!dst) {
      if (!point_configures_anything(set))
        continue; /* e.g. `sort: {enabled: null, disabled: null}`, as the OpenShift operator
                     writes every extension point */
      warn_ignored(l, p,
                   !strcmp(point, "presort") || !strcmp(point, "sort")
                       ? "the presort and sort extension points are not used"
                       : "not an extension point (they are lowercase: deschedule, balance, "
                         "filter, preevictionfilter)");
      continue;
    }
    if (is_null(set))
      continue;
    if (set->type != DOC_MAP)
      return type_error(l, p, "a map with enabled and disabled lists", set);
    for (size_t k = 0; k < set->n; k++) {
      char sp[300];
      snprintf(sp, sizeof sp, "%s.%s", p, set->pairs[k].key);
      if (!strcmp(set->pairs[k].key, "enabled")) {
        if (read_names(l, set->pairs[k].value, sp, dst) < 0)
          return -1;
      } else if (!strcmp(set->pairs[k].key, "disabled")) {
        if (!is_null(set->pairs[k].value) && set->pairs[k].value->n)
          warn_ignored(l, sp, "disabled lists have no effect");
      } else {
        warn_ignored(l, sp, "unknown field");
      }
    }
  }
  return 0;
}

static int read_plugin_configs(loader *l, const doc_node *list, const char *path, profile *pr) {
  if (pr->config) {
    /* a repeated key: the last one is used, as for every other field (the entries of the
     * first must not be counted into the second's array) */
    warn_ignored(l, path,
                 "pluginConfig is given more than once in this profile; the last one is used");
    pr->config = NULL;
    pr->nconfig = 0;
  }
  if (is_null(list))
    return 0;
  if (list->type != DOC_SEQ)
    return type_error(l, path, "a list of {name, args}", list);
  pr->config = ARENA_NEWN(l->p->mem, plugin_config, list->n + NINJECTED); /* room for injection */
  for (size_t i = 0; i < list->n; i++) {
    const doc_node *c = list->items[i];
    char p[256];
    snprintf(p, sizeof p, "%s[%zu]", path, i);
    if (c->type != DOC_MAP)
      return type_error(l, p, "a map with name and args", c);
    plugin_config *pc = &pr->config[pr->nconfig++];
    const doc_node *name = doc_get(c, "name"), *args = doc_get(c, "args");
    for (size_t k = 0; k < c->n; k++)
      if (strcmp(c->pairs[k].key, "name") && strcmp(c->pairs[k].key, "args")) {
        char fp[300];
        snprintf(fp, sizeof fp, "%s.%s", p, c->pairs[k].key);
        warn_ignored(l, fp, "unknown field");
      }
    if (is_null(name) || name->type != DOC_STR) {
      char np[300];
      snprintf(np, sizeof np, "%s.name", p);
      if (is_null(name)) {
        dserr_set(l->err, "%s: required (the plugin name)", np);
        return fail_decode(l);
      }
      return type_error(l, np, "a plugin name", name);
    }
    pc->name = name->text;
    pc->desc = l->lookup(pc->name);
    if (!pc->desc)
      continue; /* reported by validation */
    pc->args = arena_alloc(l->p->mem, pc->desc->args_size);
    char ap[300];
    snprintf(ap, sizeof ap, "%s.args", p);
    if (args_decode(l->p->mem, args, pc->desc->fields, pc->args, ap, l->err) < 0) {
      if (strncmp(l->err->msg, "strict decoding error", 21) == 0) {
        /* upstream's text names the field relative to args; say whose args they are */
        size_t len = strlen(l->err->msg);
        snprintf(l->err->msg + len, sizeof l->err->msg - len, " (in %s, plugin %s)", ap, pc->name);
      }
      return fail_decode(l);
    }
  }
  return 0;
}

static int read_profiles(loader *l, const doc_node *list) {
  if (is_null(list))
    return 0;
  if (list->type != DOC_SEQ)
    return type_error(l, "profiles", "a list of profiles", list);
  policy *p = l->p;
  p->nprofiles = list->n;
  p->profiles = ARENA_NEWN(p->mem, profile, list->n ? list->n : 1);
  for (size_t i = 0; i < list->n; i++) {
    const doc_node *pn = list->items[i];
    profile *pr = &p->profiles[i];
    char path[64];
    snprintf(path, sizeof path, "profiles[%zu]", i);
    if (pn->type != DOC_MAP)
      return type_error(l, path, "a profile (a map)", pn);
    pr->name = "";
    for (size_t k = 0; k < pn->n; k++) {
      const char *key = pn->pairs[k].key;
      const doc_node *v = pn->pairs[k].value;
      char fp[128];
      snprintf(fp, sizeof fp, "%s.%s", path, key);
      if (!strcmp(key, "name")) {
        if (!is_null(v) && v->type != DOC_STR)
          return type_error(l, fp, "a string", v);
        pr->name = is_null(v) ? "" : v->text;
      } else if (!strcmp(key, "pluginConfig")) {
        if (read_plugin_configs(l, v, fp, pr) < 0)
          return -1;
      } else if (!strcmp(key, "plugins")) {
        if (read_plugin_sets(l, v, fp, pr) < 0)
          return -1;
      } else {
        warn_ignored(l, fp, "unknown field");
      }
    }
    if (!pr->config)
      pr->config = ARENA_NEWN(p->mem, plugin_config, NINJECTED);
  }
  return 0;
}

static int read_uint(loader *l, const doc_node *v, const char *path, opt_uint *out) {
  if (is_null(v))
    return 0;
  if (v->type != DOC_INT || v->big || v->v.i < 0)
    return type_error(l, path, "a non-negative integer", v);
  *out = (opt_uint){true, (uint64_t)v->v.i};
  return 0;
}

/* usageSamples: {skipNodesWithoutSamples: bool, maxSampleAge: "2m", maxMissingFraction: 0.1},
 * decoded strictly (it is this project's own field: a typo there is an error). */
static int read_usage_samples(loader *l, const doc_node *v) {
  if (is_null(v))
    return 0;
  if (v->type != DOC_MAP)
    return type_error(l, "usageSamples", "a map", v);
  usage_trust *u = &l->p->usage;
  for (size_t i = 0; i < v->n; i++) {
    const char *key = v->pairs[i].key;
    const doc_node *x = v->pairs[i].value;
    if (!strcmp(key, "skipNodesWithoutSamples")) {
      if (x->type != DOC_BOOL)
        return type_error(l, "usageSamples.skipNodesWithoutSamples", "true or false", x);
      u->skip_nodes = x->v.b;
    } else if (!strcmp(key, "maxSampleAge")) {
      int64_t ns;
      dserr e;
      if (x->type != DOC_STR || duration_parse(x->text, &ns, &e) < 0 || ns < 0)
        return type_error(l, "usageSamples.maxSampleAge",
                          "a non-negative duration such as \"2m\" (\"0\": ages not checked)", x);
      u->max_age_ns = ns;
    } else if (!strcmp(key, "maxMissingFraction")) {
      double f = x->type == DOC_INT ? (double)x->v.i : x->type == DOC_FLOAT ? x->v.f : -1;
      if ((x->type != DOC_INT && x->type != DOC_FLOAT) || !(f >= 0 && f <= 1))
        return type_error(l, "usageSamples.maxMissingFraction", "a number from 0 to 1", x);
      u->max_missing = f;
    } else {
      dserr_set(l->err, "usageSamples.%s: unknown field (expected skipNodesWithoutSamples, "
                        "maxSampleAge or maxMissingFraction)", key);
      return fail_decode(l);
    }
  }
  return 0;
}

static int read_providers(loader *l, const doc_node *list) {
  if (is_null(list))
    return 0;
  if (list->type != DOC_SEQ)
    return type_error(l, "metricsProviders", "a list", list);
  policy *p = l->p;
  p->nproviders = list->n;
  p->providers = ARENA_NEWN(p->mem, metrics_provider, list->n ? list->n : 1);
  for (size_t i = 0; i < list->n; i++) {
    const doc_node *m = list->items[i];
    metrics_provider *mp = &p->providers[i];
    char path[64];
    snprintf(path, sizeof path, "metricsProviders[%zu]", i);
    if (m->type != DOC_MAP)
      return type_error(l, path, "a map", m);
    const doc_node *src = doc_get(m, "source"), *prom = doc_get(m, "prometheus");
    mp->source = doc_str(src) ? doc_str(src) : "";
    if (!is_null(prom)) {
      mp->has_prometheus = true;
      mp->prometheus_url = doc_str(doc_get(prom, "url"));
      const doc_node *tok = doc_get(prom, "authToken");
      if (!is_null(tok)) {
        mp->has_auth_token = true;
        const doc_node *ref = doc_get(tok, "secretReference");
        if (!is_null(ref)) {
          mp->has_secret_ref = true;
          mp->secret_namespace = doc_str(doc_get(ref, "namespace"));
          mp->secret_name = doc_str(doc_get(ref, "name"));
        }
      }
    }
  }
  return 0;
}

static int read_top(loader *l, const doc_node *root) {
  policy *p = l->p;
  if (is_null(root)) {
    dserr_set(l->err, "the file is empty: expected a DeschedulerPolicy");
    return fail_decode(l);
  }
  if (root->type != DOC_MAP)
    return type_error(l, "(top level)", "a DeschedulerPolicy map", root);
  const doc_node *av = doc_get(root, "apiVersion"), *kind = doc_get(root, "kind");
  if (is_null(av)) {
    /* upstream decodes such a file into an empty policy and runs nothing; refuse instead */
    dserr_set(l->err, "apiVersion: required, expected \"descheduler/v1alpha2\" (without it upstream "
                      "silently runs an empty policy)");
    return fail_decode(l);
  }
  const char *version = doc_str(av) ? doc_str(av) : av->text ? av->text : "";
  const char *kname = doc_str(kind) ? doc_str(kind) : "DeschedulerPolicy";
  if (strcmp(version, "descheduler/v1alpha2") != 0 || strcmp(kname, "DeschedulerPolicy") != 0) {
    dserr_set(l->err, "no kind \"%s\" is registered for version \"%s\" in scheme \"" SCHEME "\"",
              kname, version);
    return fail_decode(l);
  }
  for (size_t i = 0; i < root->n; i++) {
    const char *key = root->pairs[i].key;
    const doc_node *v = root->pairs[i].value;
    int rc = 0;
    if (!strcmp(key, "apiVersion") || !strcmp(key, "kind")) {
      continue;
    } else if (!strcmp(key, "profiles")) {
      rc = read_profiles(l, v);
    } else if (!strcmp(key, "nodeSelector")) {
      if (!is_null(v) && v->type != DOC_STR)
        return type_error(l, key, "a label selector string", v);
      p->node_selector = is_null(v) ? NULL : v->text;
      label_selector *sel;
      if (p->node_selector && selector_parse(p->mem, p->node_selector, &sel, l->err) < 0) {
        dserr_prefix(l->err, "nodeSelector");
        return fail_decode(l); /* upstream: fatal at startup */
      }
    } else if (!strcmp(key, "maxNoOfPodsToEvictPerNode")) {
      rc = read_uint(l, v, key, &p->max_per_node);
    } else if (!strcmp(key, "maxNoOfPodsToEvictPerNamespace")) {
      rc = read_uint(l, v, key, &p->max_per_namespace);
    } else if (!strcmp(key, "maxNoOfPodsToEvictTotal")) {
      rc = read_uint(l, v, key, &p->max_total);
    } else if (!strcmp(key, "evictionFailureEventNotification")) {
      if (!is_null(v) && v->type != DOC_BOOL)
        return type_error(l, key, "true or false", v);
      p->eviction_failure_events = !is_null(v) && v->v.b;
    } else if (!strcmp(key, "gracePeriodSeconds")) {
      if (!is_null(v) && (v->type != DOC_INT || v->big))
        return type_error(l, key, "an integer", v);
      if (!is_null(v))
        p->grace_period_seconds = (opt_int){true, v->v.i};
    } else if (!strcmp(key, "metricsCollector")) {
      const doc_node *en = doc_get(v, "enabled");
      if (!is_null(en) && en->type != DOC_BOOL)
        return type_error(l, "metricsCollector.enabled", "true or false", en);
      p->metrics_collector_enabled = !is_null(en) && en->v.b;
    } else if (!strcmp(key, "metricsProviders")) {
      rc = read_providers(l, v);
    } else if (!strcmp(key, "usageSamples")) {
      rc = read_usage_samples(l, v);
    } else {
      warn_ignored(l, key, "unknown field");
    }
    if (rc < 0)
      return -1;
  }
  return 0;
}

/* ---------- validation (errors collected, upstream's aggregate format) ---------- */

typedef struct {
  size_t n;
  char **msgs;
} err_list;

static void errs_add(err_list *e, const char *msg) {
  for (size_t i = 0; i < e->n; i++)
    if (strcmp(e->msgs[i], msg) == 0)
      return; /* duplicates merged */
  e->msgs = realloc(e->msgs, (e->n + 1) * sizeof *e->msgs);
  if (!e->msgs)
    abort();
  e->msgs[e->n++] = strdup(msg);
}

static void errs_render(err_list *e, dserr *err) {
  strbuf sb = {0};
  if (e->n == 1) {
    sb_append(&sb, e->msgs[0]);
  } else {
    sb_appendc(&sb, '[');
    for (size_t i = 0; i < e->n; i++) {
      if (i)
        sb_append(&sb, ", ");
      sb_append(&sb, e->msgs[i]);
    }
    sb_appendc(&sb, ']');
  }
  dserr_set(err, "%s", sb_str(&sb));
  sb_free(&sb);
}

static void errs_free(err_list *e) {
  for (size_t i = 0; i < e->n; i++)
    free(e->msgs[i]);
  free(e->msgs);
}

/* Go's url.Parse refuses an authority whose port is not all digits: returns the offending
 * ":port" text (in buf) for "scheme://[userinfo@]host:port/...", else NULL. */
static const char *url_bad_port(const char *url, char *buf, size_t cap) {
  const char *auth = strstr(url, "://");
  if (!auth)
    return NULL;
  auth += 3;
  size_t n = strcspn(auth, "/?#");
  const char *host = auth;
  for (size_t i = 0; i < n; i++)
    if (auth[i] == '@')
      host = auth + i + 1;
  const char *end = auth + n, *port = NULL;
  if (host < end && *host == '[') {
    for (const char *c = host; c < end; c++)
      if (*c == ']')
        port = c + 1; /* Go: the text after the last ']' */
    if (!port)
      return NULL; /* "missing ']' in host": not a port problem */
  } else {
    for (const char *c = host; c < end; c++)
      if (*c == ':')
        port = c;
  }
  if (!port || port == end)
    return NULL;
  bool ok = *port == ':';
  for (const char *c = port + 1; c < end && ok; c++)
    ok = *c >= '0' && *c <= '9';
  if (ok)
    return NULL;
  snprintf(buf, cap, "%.*s", (int)(end - port), port);
  return buf;
}

/* Upstream's order: a duplicate error per repeated source (in list order; the first entry of
 * a source is its configuration), then the collector conflict, then the checks of the
 * (first) Prometheus provider. */
static void validate_providers(const policy *p, err_list *errs) {
  char buf[512];
  const metrics_provider *kubernetes = NULL, *prometheus = NULL;
  for (size_t i = 0; i < p->nproviders; i++) {
    const metrics_provider *mp = &p->providers[i];
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++)
      seen = strcmp(p->providers[j].source, mp->source) == 0;
    if (seen) {
      snprintf(buf, sizeof buf,
               "metric provider \"%s\" is already configured, each source can be configured "
               "only once",
               mp->source);
      errs_add(errs, buf);
    } else if (!strcmp(mp->source, "KubernetesMetrics")) {
      kubernetes = mp;
    } else if (!strcmp(mp->source, "Prometheus")) {
      prometheus = mp;
    }
  }
  if (kubernetes && p->metrics_collector_enabled)
    errs_add(errs, "it is not allowed to combine metrics provider when metrics collector is enabled");
  const metrics_provider *mp = prometheus;
  if (!mp)
    return;
  if (!mp->has_prometheus) {
    errs_add(errs, "prometheus configuration is required when prometheus source is enabled");
    return;
  }
  if (!mp->prometheus_url || !*mp->prometheus_url) {
    errs_add(errs, "prometheus URL is required when prometheus is enabled");
  } else if (strncmp(mp->prometheus_url, "http://", 7) && strncmp(mp->prometheus_url, "https://", 8)) {
    snprintf(buf, sizeof buf, "error parsing prometheus URL: parse \"%s\": invalid URI for request",
             mp->prometheus_url);
    errs_add(errs, buf);
  } else {
    char port[256];
    if (url_bad_port(mp->prometheus_url, port, sizeof port)) {
      snprintf(buf, sizeof buf,
               "error parsing prometheus URL: parse \"%s\": invalid port \"%s\" after host",
               mp->prometheus_url, port);
      errs_add(errs, buf);
    }
  }
  if (mp->has_auth_token) {
    if (!mp->has_secret_ref)
      errs_add(errs, "prometheus authToken secret is expected to be set when authToken field is");
    else if (!mp->secret_namespace || !*mp->secret_namespace || !mp->secret_name ||
             !*mp->secret_name)
      errs_add(errs, "prometheus authToken secret reference does not set both namespace and name");
  }
}

static int validate(loader *l) {
  policy *p = l->p;
  err_list errs = {0};
  char buf[DSERR_MAX + 256];
  for (size_t i = 0; i < p->nprofiles; i++) {
    profile *pr = &p->profiles[i];
    for (size_t k = 0; k < pr->nconfig; k++) {
      plugin_config *pc = &pr->config[k];
      if (!pc->desc) {
        snprintf(buf, sizeof buf, "in profile %s: plugin %s in pluginConfig not registered",
                 pr->name, pc->name);
        errs_add(&errs, buf);
        continue;
      }
      dserr e;
      if (pc->desc->validate && pc->desc->validate(pc->args, &e) < 0) {
        snprintf(buf, sizeof buf, "in profile %s: %s", pr->name, e.msg);
        errs_add(&errs, buf);
      }
    }
  }
  validate_providers(p, &errs);
  if (errs.n) {
    errs_render(&errs, l->err);
    errs_free(&errs);
    return fail_decode(l);
  }
  errs_free(&errs);
  return 0;
}

/* ---------- DefaultEvictor injection, defaults, build ---------- */

plugin_config *profile_config(const profile *pr, const char *name) {
  for (size_t i = 0; i < pr->nconfig; i++)
    if (strcmp(pr->config[i].name, name) == 0)
      return &pr->config[i];
  return NULL;
}

static bool set_has(const plugin_set *s, const char *name) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->names[i], name) == 0)
      return true;
  return false;
}

/* Evictor plugins every profile gets when it does not configure them: upstream's
 * DefaultEvictor, then this project's VMSafety (plugins/vmsafety.c), each with default args,
 * enabled first at filter and preEvictionFilter in this order. */
static const char *const injected[NINJECTED] = {"DefaultEvictor", "VMSafety"};

static void set_insert(arena *a, plugin_set *s, size_t at, const char *name) {
  const char **names = ARENA_NEWN(a, const char *, s->n + 1);
  if (s->n) /* an empty set may have no array at all */
    memcpy(names, s->names, at * sizeof *names);
  names[at] = name;
  if (s->n > at)
    memcpy(names + at + 1, s->names + at, (s->n - at) * sizeof *names);
  s->names = names;
  s->n++;
}

static size_t set_index(const plugin_set *s, const char *name) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->names[i], name) == 0)
      return i;
  return s->n;
}

/* Puts `name` at *at unless the set has it; either way *at moves just past it, so the next
 * injected plugin follows it. */
static void inject_into_set(arena *a, plugin_set *s, size_t *at, const char *name) {
  size_t i = set_index(s, name);
  if (i < s->n) {
    *at = i + 1;
    return;
  }
  set_insert(a, s, *at, name);
  (*at)++;
}

static int inject_evictors(loader *l, profile *pr) {
  size_t at_filter = 0, at_pre = 0, at_config = 0;
  for (size_t i = 0; i < NINJECTED; i++) {
    const char *name = injected[i];
    const plugin_desc *d = l->lookup(name);
    if (!d) {
      if (i == 0)
        return dserr_set(l->err, "internal error: DefaultEvictor is not registered");
      continue;
    }
    inject_into_set(l->p->mem, &pr->filter, &at_filter, name);
    inject_into_set(l->p->mem, &pr->preevictionfilter, &at_pre, name);
    plugin_config *pc = profile_config(pr, name);
    if (pc) {
      at_config = (size_t)(pc - pr->config) + 1;
    } else {
      memmove(pr->config + at_config + 1, pr->config + at_config,
              (pr->nconfig - at_config) * sizeof *pr->config);
      pr->config[at_config++] = (plugin_config){name, d, arena_alloc(l->p->mem, d->args_size)};
      pr->nconfig++;
    }
  }
  return 0;
}

static bool is_enabled_anywhere(const profile *pr, const char *name) {
  return set_has(&pr->deschedule, name) || set_has(&pr->balance, name) ||
         set_has(&pr->filter, name) || set_has(&pr->preevictionfilter, name);
}

const char *policy_profile_enabling(const policy *p, const char *name) {
  for (size_t i = 0; i < p->nprofiles; i++)
    if (is_enabled_anywhere(&p->profiles[i], name))
      return p->profiles[i].name;
  return NULL;
}

/* Go prints map[string]struct{} keys sorted: map[A:{} B:{}] */
static int check_point(loader *l, profile *pr, plugin_set *s, const char *point, unsigned want) {
  const char *bad[64];
  size_t nbad = 0;
  for (size_t i = 0; i < s->n && nbad < 64; i++) {
    const plugin_desc *d = l->lookup(s->names[i]);
    if (!d || !(d->points & want)) {
      bool dup = false;
      for (size_t j = 0; j < nbad; j++)
        dup |= strcmp(bad[j], s->names[i]) == 0;
      if (!dup)
        bad[nbad++] = s->names[i];
    }
  }
  if (!nbad)
    return 0;
  for (size_t i = 1; i < nbad; i++)
    for (size_t j = i; j > 0 && strcmp(bad[j - 1], bad[j]) > 0; j--) {
      const char *t = bad[j];
      bad[j] = bad[j - 1];
      bad[j - 1] = t;
    }
  strbuf sb = {0};
  sb_printf(&sb, "profile \"%s\" configures %s extension point of non-existing plugins: map[",
            pr->name, point);
  for (size_t i = 0; i < nbad; i++)
    sb_printf(&sb, "%s%s:{}", i ? " " : "", bad[i]);
  sb_appendc(&sb, ']');
  dserr_set(l->err, "%s", sb_str(&sb));
  sb_free(&sb);
  return -1;
}

static int resolve_set(loader *l, profile *pr, plugin_set *s) {
  s->configs = ARENA_NEWN(l->p->mem, plugin_config *, s->n ? s->n : 1);
  for (size_t i = 0; i < s->n; i++) {
    plugin_config *pc = profile_config(pr, s->names[i]);
    if (!pc)
      return dserr_set(l->err, "unable to build %s plugin: unable to find \"%s\" plugin config",
                       s->names[i], s->names[i]);
    s->configs[i] = pc;
  }
  return 0;
}

static int build_profile(loader *l, profile *pr, const plugin_env *env) {
  if (check_point(l, pr, &pr->deschedule, "deschedule", PLUGIN_DESCHEDULE) < 0 ||
      check_point(l, pr, &pr->balance, "balance", PLUGIN_BALANCE) < 0 ||
      check_point(l, pr, &pr->filter, "filter", PLUGIN_EVICTOR) < 0 ||
      check_point(l, pr, &pr->preevictionfilter, "preEvictionFilter", PLUGIN_EVICTOR) < 0)
    return -1;
  if (resolve_set(l, pr, &pr->filter) < 0 || resolve_set(l, pr, &pr->preevictionfilter) < 0 ||
      resolve_set(l, pr, &pr->deschedule) < 0 || resolve_set(l, pr, &pr->balance) < 0)
    return -1;
  /* construction: the winning config of every enabled plugin, once */
  for (size_t i = 0; i < pr->nconfig; i++) {
    plugin_config *pc = &pr->config[i];
    if (profile_config(pr, pc->name) != pc || !is_enabled_anywhere(pr, pc->name))
      continue;
    if (pc->desc->prepare && pc->desc->prepare(pc->args, env, l->err) < 0) {
      if (pc->desc->points & PLUGIN_EVICTOR)
        return -1; /* the evictor's own errors are reported as they are */
      return dserr_prefix(l->err, "unable to build %s plugin: unable to initialize \"%s\" plugin",
                          pc->name, pc->name);
    }
  }
  return 0;
}

static policy *load(const char *name, const doc_node *root, policy *p, plugin_lookup_fn lookup,
                    const plugin_env *env, dserr *err) {
  loader l = {p, lookup, err};
  if (read_top(&l, root) < 0 || validate(&l) < 0)
    goto fail;
  for (size_t i = 0; i < p->nprofiles; i++) {
    profile *pr = &p->profiles[i];
    if (inject_evictors(&l, pr) < 0)
      goto fail;
    for (size_t k = 0; k < pr->nconfig; k++)
      if (pr->config[k].desc && pr->config[k].desc->set_defaults)
        pr->config[k].desc->set_defaults(pr->config[k].args);
  }
  for (size_t i = 0; i < p->nprofiles; i++)
    if (build_profile(&l, &p->profiles[i], env) < 0) {
      dserr_prefix(err, "failed to create new descheduler: unable to create \"%s\" profile",
                   p->profiles[i].name);
      goto fail;
    }
  (void)name;
  return p;
fail:
  policy_free(p);
  return NULL;
}

static policy *policy_new(const char *name) {
  policy *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  p->mem = arena_new(64 * 1024);
  p->path = arena_strdup(p->mem, name);
  p->usage = (usage_trust){true, USAGE_MAX_SAMPLE_AGE_DEFAULT_NS, USAGE_MAX_MISSING_FRACTION_DEFAULT};
  return p;
}

/* The parser names the file first; the prefix names it already. */
static void decode_error(dserr *err, const char *name) {
  size_t n = strlen(name);
  if (strncmp(err->msg, name, n) == 0 && err->msg[n] == ':' && err->msg[n + 1] == ' ')
    memmove(err->msg, err->msg + n + 2, strlen(err->msg + n + 2) + 1);
  dserr_prefix(err, "failed decoding descheduler's policy config \"%s\"", name);
}

policy *policy_load(const char *path, plugin_lookup_fn lookup, const plugin_env *env, dserr *err) {
  policy *p = policy_new(path);
  doc_node *root;
  if (doc_parse_yaml_file(p->mem, path, &root, err) < 0) {
    const char *why = strstr(err->msg, "cannot open: ");
    if (why) {
      char reason[256];
      snprintf(reason, sizeof reason, "%s", why + strlen("cannot open: "));
      dserr_set(err, "failed to read policy config file \"%s\": %s", path, reason);
    } else
      decode_error(err, path);
    policy_free(p);
    return NULL;
  }
  return load(path, root, p, lookup, env, err);
}

policy *policy_load_string(const char *name, const char *text, plugin_lookup_fn lookup,
                           const plugin_env *env, dserr *err) {
  policy *p = policy_new(name);
  doc_node *root;
  if (doc_parse_yaml(p->mem, name, text, strlen(text), &root, err) < 0) {
    decode_error(err, name);
    policy_free(p);
    return NULL;
  }
  return load(name, root, p, lookup, env, err);
}

void policy_free(policy *p) {
  if (!p)
    return;
  arena_free(p->mem);
  free(p);
}

const metrics_provider *policy_metrics_provider(const policy *p, const char *source) {
  const metrics_provider *found = NULL;
  for (size_t i = 0; i < p->nproviders; i++)
    if (p->providers[i].source && strcmp(p->providers[i].source, source) == 0)
      found = &p->providers[i];
  return found;
}

bool policy_metrics_collector(const policy *p) {
  return p->metrics_collector_enabled || policy_metrics_provider(p, "KubernetesMetrics");
}
