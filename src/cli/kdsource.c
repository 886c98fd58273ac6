/* kdsource.c - a KubeDescheduler CR as the source of the policy; see kdsource.h. */
#include "kdsource.h"

#include "../kube/openshift.h"
#include "../obs/log.h"
#include "../plugins/registry.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct kdsrc {
  kdsrc_options o;
  arena *file_mem;
  doc_node *file_obj;
  char *ref_ns, *ref_name;
  char *name;
  kd_psi psi;
  arena *protected_mem;
  bool have_protected;
  size_t nprotected;
  const char **protected_ns;
  arena *cur; /* holds res */
  kd_result res;
  char *yaml, *key;
};

/* Go's strconv.ParseBool true values (the operator reads EXPERIMENTAL_DISABLE_PSI_CHECK so) */
static bool env_true(const char *name) {
  static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
  const char *v = getenv(name);
  for (size_t i = 0; v && t[i]; i++)
    if (!strcmp(v, t[i]))
      return true;
  return false;
}

static int resolve_psi(const kdsrc_options *o, kd_psi *out, dserr *err) {
  const char *m = o->psi && *o->psi ? o->psi : "auto";
  if (!strcmp(m, "present")) {
    *out = KD_PSI_PRESENT;
  } else if (!strcmp(m, "absent")) {
    *out = KD_PSI_ABSENT;
  } else if (!strcmp(m, "auto")) {
    /* the operator looks at /proc/pressure inside its own pod; that stands for the nodes only
     * when this process also runs in a pod of the cluster */
    *out = KD_PSI_UNKNOWN;
    if (o->in_cluster) {
      struct stat st;
      if (env_true("EXPERIMENTAL_DISABLE_PSI_CHECK") || stat("/proc/pressure/", &st) == 0)
        *out = KD_PSI_PRESENT;
      else if (errno == ENOENT)
        *out = KD_PSI_ABSENT;
    }
  } else {
    return dserr_set(err, "--psi: expected auto, present or absent, got \"%s\"", m);
  }
  return 0;
}

static bool dns_name(const char *s, size_t n) {
  if (!n || n > 253)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
          s[i] == '.'))
      return false;
  return true;
}

/* The one KubeDescheduler in a file: the object itself, or the only one of a List. */
static int pick_object(const char *path, doc_node *root, doc_node **obj, dserr *err) {
  *obj = root;
  if (!root || root->type == DOC_NULL)
    return dserr_set(err, "%s: the file is empty: expected a KubeDescheduler object", path);
  const char *kind = doc_str(doc_get(root, "kind"));
  const doc_node *items = doc_get(root, "items");
  if (!kind || strcmp(kind, "List") != 0 || !items || items->type != DOC_SEQ)
    return 0;
  size_t found = 0;
  for (size_t i = 0; i < items->n; i++) {
    const char *k = doc_str(doc_get(items->items[i], "kind"));
    if (k && !strcmp(k, "KubeDescheduler")) {
      *obj = items->items[i];
      found++;
    }
  }
  if (found != 1)
    return dserr_set(err, "%s: expected one KubeDescheduler in the List, found %zu", path, found);
  return 0;
}

kdsrc *kdsrc_new(const kdsrc_options *o, dserr *err) {
  kdsrc *s = xcalloc(1, sizeof *s);
  s->o = *o;
  s->protected_mem = arena_new(4096);
  if (resolve_psi(o, &s->psi, err) < 0)
    goto fail;
  if (o->file && o->ref) {
    dserr_set(err, "--kubedescheduler and --kubedescheduler-ref cannot be used together");
    goto fail;
  }
  if (o->file) {
    s->name = xstrdup(o->file);
    s->file_mem = arena_new(16 * 1024);
    doc_node *root;
    if (doc_parse_yaml_file(s->file_mem, o->file, &root, err) < 0 ||
        pick_object(o->file, root, &s->file_obj, err) < 0)
      goto fail;
  } else if (o->ref) {
    const char *slash = strchr(o->ref, '/');
    if (!slash || !dns_name(o->ref, (size_t)(slash - o->ref)) ||
        !dns_name(slash + 1, strlen(slash + 1))) {
      dserr_set(err, "--kubedescheduler-ref: expected NAMESPACE/NAME (e.g. %s/%s), got \"%s\"",
                KD_OPERATOR_NAMESPACE, KD_NAME, o->ref);
      goto fail;
    }
    s->ref_ns = xmalloc((size_t)(slash - o->ref) + 1);
    memcpy(s->ref_ns, o->ref, (size_t)(slash - o->ref));
    s->ref_ns[slash - o->ref] = 0;
    s->ref_name = xstrdup(slash + 1);
    strbuf n = {0};
    sb_printf(&n, "kubedescheduler %s", o->ref);
    s->name = sb_detach(&n);
  } else {
    s->name = xstrdup("kubedescheduler " KD_OPERATOR_NAMESPACE "/" KD_NAME " (snapshot)");
  }
  return s;
fail:
  kdsrc_free(s);
  return NULL;
}

void kdsrc_free(kdsrc *s) {
  if (!s)
    return;
  if (s->file_mem)
    arena_free(s->file_mem);
  if (s->cur)
    arena_free(s->cur);
  arena_free(s->protected_mem);
  free(s->ref_ns);
  free(s->ref_name);
  free(s->name);
  free(s->yaml);
  free(s->key);
  free(s);
}

const kd_result *kdsrc_result(const kdsrc *s) {
  return &s->res;
}
const char *kdsrc_policy_yaml(const kdsrc *s) {
  return s->yaml ? s->yaml : "";
}
const char *kdsrc_namespace(const kdsrc *s) { return s->ref_ns; }

const char *kdsrc_object_name(const kdsrc *s) { return s->ref_name; }

const char *kdsrc_name(const kdsrc *s) {
  return s->name;
}
bool kdsrc_is_ref(const kdsrc *s) {
  return s->ref_name != NULL;
}

int kdsrc_render(kdsrc *s, const model *m, kube_client *c, const char *route_error, dserr *err) {
  arena *a = arena_new(64 * 1024);
  doc_node *obj = s->file_obj;
  kd_spec spec;
  kd_facts f;
  kd_result res;
  if (s->ref_name) {
    if (!c) {
      dserr_set(err, "%s: a reference is read from the API server (give --kubeconfig)", s->name);
      goto fail;
    }
    int got = kube_get_kubedescheduler(c, s->ref_ns, s->ref_name, a, &obj, err);
    if (got < 0) {
      if (strncmp(err->msg, s->name, strlen(s->name)) != 0)
        dserr_prefix(err, "%s", s->name);
      arena_free(a);
      return got == KUBE_GET_NOT_FOUND ? KDSRC_NOT_FOUND : KDSRC_UNREADABLE;
    }
  } else if (!obj) {
    obj = m->openshift.kubedescheduler;
    if (!obj) {
      dserr_set(err,
                "no --kubedescheduler given, and the snapshot holds no KubeDescheduler "
                "%s/%s%s",
                KD_OPERATOR_NAMESPACE, KD_NAME,
                m->openshift.other_kubedeschedulers
                    ? " (only other ones, which the operator ignores)"
                    : "");
      goto fail;
    }
  }
  if (kd_parse(a, s->name, obj, &spec, err) < 0)
    goto fail_named;
  kd_facts_from_model(a, m, &f);
  if (!s->have_protected) {
    /* the operator computes its protected list once, when it starts */
    s->protected_ns = ARENA_NEWN(s->protected_mem, const char *, f.nprotected + 1);
    for (size_t i = 0; i < f.nprotected; i++)
      s->protected_ns[i] = arena_strdup(s->protected_mem, f.protected_ns[i]);
    s->nprotected = f.nprotected;
    s->have_protected = true;
  }
  f.protected_ns = s->protected_ns;
  f.nprotected = s->nprotected;
  f.prometheus_url = s->o.prometheus_url && *s->o.prometheus_url ? s->o.prometheus_url : NULL;
  f.psi = s->psi;
  if (route_error && *route_error)
    f.route_error = route_error;
  if (kd_render(a, &spec, &f, &res, err) < 0)
    goto fail_named;
  strbuf yaml = {0}, key = {0};
  if (kd_policy_yaml(&res, &yaml, err) < 0) {
    sb_free(&yaml);
    goto fail_named;
  }
  sb_append(&key, sb_str(&yaml));
  for (size_t i = 0; i < res.nargs; i++)
    sb_printf(&key, "\n%s", res.args[i]);
  int changed = !s->key || strcmp(s->key, sb_str(&key)) != 0;
  free(s->yaml);
  free(s->key);
  s->yaml = sb_detach(&yaml);
  s->key = sb_detach(&key);
  if (s->cur)
    arena_free(s->cur);
  s->cur = a;
  s->res = res;
  return changed;
fail_named:
  if (strncmp(err->msg, s->name, strlen(s->name)) != 0)
    dserr_prefix(err, "%s", s->name);
fail:
  arena_free(a);
  return -1;
}

void kdsrc_forget(kdsrc *s) {
  free(s->key);
  s->key = NULL;
}

void kdsrc_log_warnings(const kdsrc *s, bool soft_tainter) {
  for (size_t i = 0; i < s->res.nwarnings; i++)
    if (!soft_tainter || s->res.warnings[i] != s->res.soft_tainter_note)
      log_writef('W', 0, __FILE__, __LINE__, "%s", s->res.warnings[i]);
}

policy *kdsrc_load_policy(const kdsrc *s, const plugin_env *env, dserr *err) {
  strbuf name = {0};
  sb_printf(&name, "%s (rendered)", s->name);
  policy *p = policy_load_string(sb_str(&name), kdsrc_policy_yaml(s), plugin_lookup, env, err);
  sb_free(&name);
  return p;
}
