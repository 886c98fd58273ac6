/* kubevirtmigrationaware.c - KubevirtMigrationAware: the evictor plugin of the OpenShift
 * operator's KubeVirt profile (KubeVirtRelieveAndMigrate).
 *
 * Behaviour as github.com/openshift-virtualization/kubevirt-descheduler-plugins
 * plugins/kubevirtmigrationaware (vendored by openshift/cluster-kube-descheduler-operator):
 *   Filter             rejects a virt-launcher pod whose VMI (annotation kubevirt.io/domain, in
 *                      the pod's namespace) has status.migrationState.startTimestamp set and no
 *                      endTimestamp: a migration is running.
 *   PreEvictionFilter  after a finished migration, defers the pod for a cooldown: the longer of
 *                      migrationCooldown and the migration's own duration, doubled once for
 *                      every further completion of this VMI within migrationHistoryWindow,
 *                      at most maxMigrationCooldown.
 * Every lookup failure (no annotation, VMI not found) lets the pod pass. Args default to 15m,
 * 6h and 48h when missing or zero.
 *
 * The completions are counted from the model: the Succeeded VirtualMachineInstanceMigrations of
 * the VMI that ended within the window, plus the VMI's own last endTimestamp when no VMIM
 * records it. The operator's plugin keeps them in memory, seeded from the same VMIMs at
 * start; since KubeVirt keeps the five newest finished VMIMs of a VMI, counts above five may
 * be lower here, which changes nothing with the defaults (the cap is reached at five). */
#include "../framework/framework.h"
#include "../kubevirt/vm.h"
#include "../obs/metrics.h"
#include "../policy/args.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "common.h"
#include "registry.h"

#include <stdio.h>
#include <string.h>

#define NS_PER_S 1000000000LL

typedef struct {
  const char *cooldown, *max_cooldown, *window;
  int64_t cooldown_ns, max_cooldown_ns, window_ns; /* after defaults */
} kma_args;

static const args_field kma_fields[] = {
    {"migrationCooldown", AF_STRING, offsetof(kma_args, cooldown)},
    {"maxMigrationCooldown", AF_STRING, offsetof(kma_args, max_cooldown)},
    {"migrationHistoryWindow", AF_STRING, offsetof(kma_args, window)},
    {NULL}};

/* a Go duration; absent = 0 */
static int parse_ns(const char *field, const char *text, int64_t *ns, dserr *err) {
  *ns = 0;
  if (!text)
    return 0;
  if (duration_parse(text, ns, err) < 0)
    return dserr_prefix(err, "%s", field);
  return 0;
}

static void go_duration(strbuf *sb, int64_t ns) { duration_format(sb, ns); }

static int kma_validate(const void *vargs, dserr *err) {
  const kma_args *a = vargs;
  int64_t c, mx, w;
  if (parse_ns("migrationCooldown", a->cooldown, &c, err) < 0 ||
      parse_ns("maxMigrationCooldown", a->max_cooldown, &mx, err) < 0 ||
      parse_ns("migrationHistoryWindow", a->window, &w, err) < 0)
    return -1;
  strbuf x = {0}, y = {0};
  int rc = 0;
  if (c < 0) {
    go_duration(&x, c);
    rc = dserr_set(err, "migrationCooldown must be non-negative, got %s", sb_str(&x));
  } else if (mx < 0) {
    go_duration(&x, mx);
    rc = dserr_set(err, "maxMigrationCooldown must be non-negative, got %s", sb_str(&x));
  } else if (mx > 0 && mx < c) {
    go_duration(&x, mx);
    go_duration(&y, c);
    rc = dserr_set(err, "maxMigrationCooldown (%s) must be >= migrationCooldown (%s)", sb_str(&x),
                   sb_str(&y));
  } else if (w < 0) {
    go_duration(&x, w);
    rc = dserr_set(err, "migrationHistoryWindow must be non-negative, got %s", sb_str(&x));
  }
  sb_free(&x);
  sb_free(&y);
  return rc;
}

static void kma_defaults(void *vargs) {
  kma_args *a = vargs;
  dserr ignored;
  parse_ns("migrationCooldown", a->cooldown, &a->cooldown_ns, &ignored);
  parse_ns("maxMigrationCooldown", a->max_cooldown, &a->max_cooldown_ns, &ignored);
  parse_ns("migrationHistoryWindow", a->window, &a->window_ns, &ignored);
  if (!a->cooldown_ns)
    a->cooldown_ns = 15 * 60 * NS_PER_S;
  if (!a->max_cooldown_ns)
    a->max_cooldown_ns = 6 * 3600 * NS_PER_S;
  if (!a->window_ns)
    a->window_ns = 48 * 3600 * NS_PER_S;
}

static const log_field bound_plugin[] = {LSTR("plugin", "KubevirtMigrationAware")};
static const log_ctx plugin_log = {bound_plugin, 1};

static int kma_prepare(void *vargs, const plugin_env *env, dserr *err) {
  kma_args *a = vargs;
  if (env && env->kubevirt < 0)
    return dserr_set(err, "timed out waiting for VMI informer cache to sync (is KubeVirt installed?)");
  metrics_kubevirt_register();
  strbuf c = {0}, m = {0}, w = {0};
  go_duration(&c, a->cooldown_ns);
  go_duration(&m, a->max_cooldown_ns);
  go_duration(&w, a->window_ns);
  LOGV(2, &plugin_log, "VMI lister ready", LSTR("cooldown", sb_str(&c)),
       LSTR("maxCooldown", sb_str(&m)), LSTR("historyWindow", sb_str(&w)));
  sb_free(&c);
  sb_free(&m);
  sb_free(&w);
  return 0;
}

static const vmi_obj *vmi_of(plugin_handle *h, const pod *p) {
  return model_pod_vmi(h->m, p);
}

static bool kma_filter(plugin_handle *h, const void *vargs, const pod *p) {
  (void)vargs;
  const vmi_obj *v = vmi_of(h, p);
  if (!v || !v->has_migration_start || v->has_migration_end)
    return true;
  char ref[512];
  LOGV(3, &plugin_log, "VMI migration in progress, blocking eviction",
       LSTR("pod", pod_ref(p, ref, sizeof ref)), LSTR("vmi", pod_x(p)->kubevirt_domain),
       LSTR("node", p->node_name));
  metrics_kubevirt_block("migration_in_progress", p->node_name, p->ns);
  fw_reject_reason(h, "VMI migration in progress");
  return false;
}

/* completions of v within the window: its Succeeded VMIMs' end times, plus the VMI's own end
 * when no VMIM records it */
static int completions(const model *m, const vmi_obj *v, int64_t now, int64_t window_s) {
  int n = 0;
  bool vmi_end_seen = false;
  int64_t cutoff = now - window_s;
  for (size_t i = 0; i < m->vmims.n; i++) {
    const vmim_obj *mm = m->vmims.items[i];
    if (strcmp(mm->phase, "Succeeded") || strcmp(mm->ns, v->ns) || strcmp(mm->vmi_name, v->name) ||
        !mm->has_finished || mm->finished <= cutoff)
      continue;
    n++;
    if (v->has_migration_end && mm->finished == v->migration_end)
      vmi_end_seen = true;
  }
  if (v->has_migration_end && !vmi_end_seen && v->migration_end > cutoff)
    n++;
  return n;
}

static bool kma_pre_eviction_filter(plugin_handle *h, const void *vargs, const pod *p) {
  const kma_args *a = vargs;
  const vmi_obj *v = vmi_of(h, p);
  if (!v || !v->has_migration_end)
    return true;
  int64_t cooldown = a->cooldown_ns;
  if (v->has_migration_start && (v->migration_end - v->migration_start) * NS_PER_S > cooldown)
    cooldown = (v->migration_end - v->migration_start) * NS_PER_S;
  int count = completions(h->m, v, h->now, a->window_ns / NS_PER_S);
  for (int i = 1; i < count; i++) {
    if (cooldown > INT64_MAX / 2)
      break;
    cooldown *= 2;
    if (a->max_cooldown_ns > 0 && cooldown >= a->max_cooldown_ns)
      break;
  }
  if (a->max_cooldown_ns > 0 && cooldown > a->max_cooldown_ns)
    cooldown = a->max_cooldown_ns;
  int64_t elapsed = (h->now - v->migration_end) * NS_PER_S;
  if (elapsed >= cooldown)
    return true;
  char ref[512];
  strbuf e = {0}, c = {0}, r = {0};
  go_duration(&e, elapsed);
  go_duration(&c, cooldown);
  go_duration(&r, cooldown - elapsed);
  char why[256];
  snprintf(why, sizeof why, "VMI in migration cooldown: %d migration(s), %s of %s elapsed",
           count, sb_str(&e), sb_str(&c));
  fw_reject_reason(h, why);
  LOGV(3, &plugin_log, "VMI in migration cooldown, deferring eviction",
       LSTR("pod", pod_ref(p, ref, sizeof ref)), LSTR("vmi", pod_x(p)->kubevirt_domain),
       LSTR("node", p->node_name), LINT("migrationCount", count), LSTR("elapsed", sb_str(&e)),
       LSTR("effectiveCooldown", sb_str(&c)), LSTR("remaining", sb_str(&r)));
  sb_free(&e);
  sb_free(&c);
  sb_free(&r);
  metrics_kubevirt_block("cooldown", p->node_name, p->ns);
  metrics_kubevirt_cooldown((double)cooldown / 1e9);
  return false;
}

const plugin_desc plugin_kubevirt_migration_aware = {
    .name = "KubevirtMigrationAware",
    .points = PLUGIN_EVICTOR,
    .args_size = sizeof(kma_args),
    .fields = kma_fields,
    .validate = kma_validate,
    .set_defaults = kma_defaults,
    .prepare = kma_prepare,
    .filter = kma_filter,
    .pre_eviction_filter = kma_pre_eviction_filter,
};
