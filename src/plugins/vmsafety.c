/* vmsafety.c - VMSafety: never ask KubeVirt for a move that would hurt the VM.
 *
 * Not an upstream plugin. Evicting a virt-launcher pod is only safe when KubeVirt turns the
 * eviction into a live migration; upstream's DefaultEvictor knows nothing of that, so a VM
 * whose VMI recorded `evictionStrategy: None` (or that cannot live-migrate) is stopped. This
 * evictor plugin is added to every profile's filter and preEvictionFilter after the
 * DefaultEvictor (the policy loader injects it, as it injects the DefaultEvictor), and only
 * ever rejects virt-launcher pods. Its rules, each switchable in the policy:
 *
 *   requireLiveMigration (Filter)  the eviction must become a live migration (or a drain by the
 *                                  external controller of strategy External): rejects strategy
 *                                  None, a VMI that is not LiveMigratable=True, a launcher whose
 *                                  VMI cannot be found, and migration-target pods.
 *   skipMigrating (Filter)         the VMI has no migration in flight (an unfinished VMIM, a
 *                                  mark for evacuation, a started migration).
 *   migrationLimits (at the eviction itself, plugin_desc.admit)
 *                                  migrations in flight plus this cycle's requests stay within
 *                                  KubeVirt's parallelOutboundMigrationsPerNode (from the
 *                                  launcher's node) and parallelMigrationsPerCluster: more
 *                                  would only queue as Pending VMIMs while the descheduler
 *                                  counts them as done. When the cluster's KubeVirt CR
 *                                  could not be decoded the limits are unknown and no
 *                                  migration is requested.
 *   noEviction (Filter, always)    the VM opted out: annotation vm-rebalance.descheduler.io/
 *                                  no-eviction on its VMI (read every cycle, no restart of
 *                                  the VM needed) or its launcher pod.
 *   cooldown, maxCooldown, cooldownWindow (PreEvictionFilter)
 *                                  anti-flapping: after this descheduler moved a VM (recorded on
 *                                  the VMI, see runbook/recorder.h) it is left alone for
 *                                  `cooldown`, doubled for each earlier move within
 *                                  `cooldownWindow`, at most `maxCooldown`. "0s" turns it off.
 *   countEvacuationsAgainstLimits (after the eviction, plugin_desc.counts_evacuations)
 *                                  an eviction KubeVirt answers by starting a live migration
 *                                  that upstream counts as a failed one (429 "Eviction
 *                                  triggered evacuation" without EvictionsInBackground) counts
 *                                  against the policy's maxNoOfPodsToEvict* limits of the
 *                                  cycle, so that the limits hold for the VMs that really
 *                                  move. false: upstream's count (a failure, not counted).
 *
 * Every rejection is logged at V(2) with the pod, the VMI and the reason. Defaults: every rule
 * on, cooldown 30m, maxCooldown 8h, cooldownWindow 24h.
 *
 * It also says how the profile's balance plugins move VMs (vmsafety_moves_of, read by
 * LowNodeUtilization; all off by default, so a policy behaves as upstream's):
 *
 *   targetedMigration              choose each launcher's destination in the cycle and ask
 *                                  KubeVirt for a migration to it, instead of an eviction the
 *                                  scheduler places by requests (plugins/nodeutilization.c)
 *   maxInboundPerNode (default 2)  targeted moves to one node in one cycle
 *   minImprovement                 a move is made only when it takes more than this many
 *                                  percentage points off the plugin's imbalance (the standard
 *                                  deviation of its nodes' usage): 0 refuses only moves that
 *                                  make it no better; unset (default): off
 *   overutilizedFor                hysteresis: a node gives up VMs only once it has been
 *                                  overutilized for this long (framework's fw_history, kept on
 *                                  the node); "0s" (default): off */
#include "../framework/framework.h"
#include "../kubevirt/vm.h"
#include "../obs/metrics.h"
#include "../policy/args.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "common.h"
#include "registry.h"
#include "vmsafety.h"

#include <stdio.h>
#include <string.h>

#define NS_PER_S 1000000000LL

typedef struct {
  opt_bool require_live_migration, skip_migrating, migration_limits;
  opt_bool count_evacuations; /* countEvacuationsAgainstLimits */
  const char *cooldown, *max_cooldown, *cooldown_window;
  bool targeted_migration;
  opt_uint max_inbound_per_node;
  opt_float min_improvement;
  const char *overutilized_for;
  int64_t overutilized_for_s; /* resolved by prepare */
  /* resolved by prepare, in seconds */
  int64_t cooldown_s, max_cooldown_s, window_s;
} vs_args;

static const args_field vs_fields[] = {
    {"requireLiveMigration", AF_OPT_BOOL, offsetof(vs_args, require_live_migration)},
    {"skipMigrating", AF_OPT_BOOL, offsetof(vs_args, skip_migrating)},
    {"migrationLimits", AF_OPT_BOOL, offsetof(vs_args, migration_limits)},
    {"countEvacuationsAgainstLimits", AF_OPT_BOOL, offsetof(vs_args, count_evacuations)},
    {"cooldown", AF_STRING, offsetof(vs_args, cooldown)},
    {"maxCooldown", AF_STRING, offsetof(vs_args, max_cooldown)},
    {"cooldownWindow", AF_STRING, offsetof(vs_args, cooldown_window)},
    {"targetedMigration", AF_BOOL, offsetof(vs_args, targeted_migration)},
    {"maxInboundPerNode", AF_OPT_UINT, offsetof(vs_args, max_inbound_per_node)},
    {"minImprovement", AF_OPT_FLOAT, offsetof(vs_args, min_improvement)},
    {"overutilizedFor", AF_STRING, offsetof(vs_args, overutilized_for)},
    {NULL}};

static bool on(opt_bool b) { return !b.set || b.v; }

/* a duration arg: absent = dflt; -1 with the error added to e when it does not parse or is
 * negative */
static int64_t seconds_of(const char *field, const char *text, const char *dflt, errlist *e) {
  int64_t ns;
  dserr err;
  if (duration_parse(text ? text : dflt, &ns, &err) < 0) {
    errlist_add(e, "%s: %s", field, err.msg);
    return -1;
  }
  if (ns < 0) {
    errlist_add(e, "%s must be a non-negative duration, got %s", field, text);
    return -1;
  }
  return ns / NS_PER_S;
}

static int vs_validate(const void *vargs, dserr *err) {
  const vs_args *a = vargs;
  errlist e = {0};
  int64_t c = seconds_of("cooldown", a->cooldown, "30m", &e);
  int64_t mx = seconds_of("maxCooldown", a->max_cooldown, "8h", &e);
  seconds_of("cooldownWindow", a->cooldown_window, "24h", &e);
  seconds_of("overutilizedFor", a->overutilized_for, "0s", &e);
  if (c > 0 && mx > 0 && mx < c)
    errlist_add(&e, "maxCooldown (%s) must not be shorter than cooldown (%s)",
                a->max_cooldown ? a->max_cooldown : "8h", a->cooldown ? a->cooldown : "30m");
  if (a->max_inbound_per_node.set && a->max_inbound_per_node.v == 0)
    errlist_add(&e, "maxInboundPerNode must be at least 1 (leave targetedMigration off to move "
                    "no VM by target)");
  if (a->min_improvement.set && (a->min_improvement.v < 0 || a->min_improvement.v > 100 ||
                                 a->min_improvement.v != a->min_improvement.v))
    errlist_add(&e, "minImprovement is percentage points, from 0 to 100, got %g",
                a->min_improvement.v);
  return errlist_finish(&e, err);
}

static int vs_prepare(void *vargs, const plugin_env *env, dserr *err) {
  (void)env;
  (void)err;
  vs_args *a = vargs;
  errlist ignored = {0};
  a->cooldown_s = seconds_of("cooldown", a->cooldown, "30m", &ignored);
  a->max_cooldown_s = seconds_of("maxCooldown", a->max_cooldown, "8h", &ignored);
  a->window_s = seconds_of("cooldownWindow", a->cooldown_window, "24h", &ignored);
  a->overutilized_for_s = seconds_of("overutilizedFor", a->overutilized_for, "0s", &ignored);
  dserr none;
  errlist_finish(&ignored, &none); /* validated already */
  return 0;
}

static void *build_flights(plugin_handle *h, void *ctx) {
  (void)ctx;
  return kubevirt_flights_build(h->m, fw_cycle_arena(h));
}

static const kubevirt_flights *flights(plugin_handle *h) {
  return fw_cycle_memo(h, "kubevirt-flights", build_flights, NULL);
}

static bool reject(plugin_handle *h, const char *point, const char *rule, const pod *p,
                   const vm_view *v, const char *reason) {
  log_field bound[] = {LSTR("plugin", "VMSafety"), LSTR("ExtensionPoint", point)};
  log_ctx ctx = {bound, 2};
  char ref[512], vmi[512];
  snprintf(vmi, sizeof vmi, "%s/%s", p->ns, v->vmi_name);
  LOGV(2, &ctx, "VM safety: not requesting the eviction of this launcher",
       LSTR("pod", pod_ref(p, ref, sizeof ref)), LSTR("vmi", vmi), LSTR("rule", rule),
       LSTR("reason", reason));
  metrics_vmsafety_block(rule, p->node_name, p->ns);
  char why[600];
  snprintf(why, sizeof why, "%s: %s", rule, reason);
  fw_reject_reason(h, why);
  return false;
}

static bool vs_filter(plugin_handle *h, const void *vargs, const pod *p) {
  const vs_args *a = vargs;
  if (!kubevirt_is_launcher(p) || pod_is_terminal(p))
    return true;
  vm_view v;
  kubevirt_view_effect(h->m, p, &v);
  if (kubevirt_vm_no_eviction(h->m, p))
    return reject(h, "Filter", "noEviction", p, &v,
                  "the VM opted out (annotation " VM_NO_EVICTION_ANNOTATION " on its VMI or launcher)");
  if (on(a->require_live_migration) && v.effect != VM_EFFECT_MIGRATE &&
      v.effect != VM_EFFECT_EXTERNAL) {
    kubevirt_view(h->m, p, &v); /* with its text, for the record */
    char why[400];
    snprintf(why, sizeof why, "%s: %s",
             v.effect == VM_EFFECT_STOP ? "the eviction would stop the VM"
                                        : "KubeVirt would refuse the eviction",
             v.why);
    return reject(h, "Filter", "requireLiveMigration", p, &v, why);
  }
  if (on(a->skip_migrating) && v.vmi) {
    const char *flight = kubevirt_flight_of(flights(h), v.vmi);
    if (flight) {
      char why[400];
      snprintf(why, sizeof why, "the VMI has a migration in flight: %s", flight);
      return reject(h, "Filter", "skipMigrating", p, &v, why);
    }
  }
  return true;
}

static bool vs_pre_eviction_filter(plugin_handle *h, const void *vargs, const pod *p) {
  const vs_args *a = vargs;
  if (!kubevirt_is_launcher(p) || pod_is_terminal(p))
    return true;
  vm_view v;
  kubevirt_view_effect(h->m, p, &v); /* the rejection below reads the VMI, not v.why */
  char why[400];
  if (a->cooldown_s > 0 && v.vmi && v.vmi->moves) {
    int64_t times[KUBEVIRT_MOVES_KEPT];
    size_t n = kubevirt_moves_parse(v.vmi->moves, times, KUBEVIRT_MOVES_KEPT, NULL);
    int64_t cooldown;
    int64_t left = kubevirt_cooldown_left(times, n, h->now, a->cooldown_s, a->max_cooldown_s,
                                          a->window_s, &cooldown);
    if (left > 0) {
      strbuf c = {0}, l = {0}, ago = {0};
      duration_format(&c, cooldown * NS_PER_S);
      duration_format(&l, left * NS_PER_S);
      duration_format(&ago, (h->now - times[n - 1]) * NS_PER_S);
      snprintf(why, sizeof why,
               "moved by this descheduler %s ago (%zu recorded move%s); cooldown %s, %s left",
               sb_str(&ago), n, n == 1 ? "" : "s", sb_str(&c), sb_str(&l));
      sb_free(&ago);
      sb_free(&c);
      sb_free(&l);
      return reject(h, "PreEvictionFilter", "cooldown", p, &v, why);
    }
  }
  return true;
}

/* KubeVirt's concurrency limits, checked when the eviction is about to be sent: the count
 * includes every evacuation this cycle has started so far */
static bool vs_admit(plugin_handle *h, const void *vargs, const pod *p) {
  const vs_args *a = vargs;
  if (!on(a->migration_limits) || !kubevirt_is_launcher(p) || pod_is_terminal(p))
    return true;
  vm_view v;
  kubevirt_view(h->m, p, &v);
  char why[400];
  if (v.effect == VM_EFFECT_MIGRATE && h->m->kubevirt_unreadable) {
    snprintf(why, sizeof why,
             "KubeVirt's migration limits are unknown: its KubeVirt CR could not be read (%s)",
             h->m->kubevirt_unreadable);
    return reject(h, "Evict", "migrationLimits", p, &v, why);
  }
  if (v.effect == VM_EFFECT_MIGRATE) {
    int per_cluster, per_node;
    kubevirt_migration_limits(h->m, &per_cluster, &per_node);
    const kubevirt_flights *f = flights(h);
    uint64_t from_node = (uint64_t)kubevirt_flights_from(f, p->node_name) +
                         (p->node ? fw_cycle_evacuations(h, p->node) : 0);
    uint64_t total = (uint64_t)kubevirt_flights_total(f) + fw_cycle_evacuations(h, NULL);
    if (from_node + 1 > (uint64_t)(per_node > 0 ? per_node : 0)) {
      snprintf(why, sizeof why,
               "KubeVirt's migration limit: %llu migrations in flight or requested from node %s "
               "(parallelOutboundMigrationsPerNode %d)",
               (unsigned long long)from_node, p->node_name, per_node);
      return reject(h, "Evict", "migrationLimits", p, &v, why);
    }
    if (total + 1 > (uint64_t)(per_cluster > 0 ? per_cluster : 0)) {
      snprintf(why, sizeof why,
               "KubeVirt's migration limit: %llu migrations in flight or requested in the "
               "cluster (parallelMigrationsPerCluster %d)",
               (unsigned long long)total, per_cluster);
      return reject(h, "Evict", "migrationLimits", p, &v, why);
    }
  }
  return true;
}

static bool vs_counts_evacuations(const void *vargs) {
  return on(((const vs_args *)vargs)->count_evacuations);
}

bool vmsafety_records_moves(const policy *pol) {
  for (size_t i = 0; i < pol->nprofiles; i++) {
    const plugin_config *pc = profile_config(&pol->profiles[i], "VMSafety");
    if (pc && pc->args && ((const vs_args *)pc->args)->cooldown_s > 0)
      return true;
  }
  return false;
}

void vmsafety_moves_of(const profile *pr, vmsafety_moves *out) {
  const plugin_config *pc = profile_config(pr, "VMSafety");
  const vs_args *a = pc ? pc->args : NULL;
  out->targeted = a && a->targeted_migration;
  out->max_inbound = a && a->max_inbound_per_node.set ? a->max_inbound_per_node.v : 2;
  out->check_improvement = a && a->min_improvement.set;
  out->min_improvement = out->check_improvement ? a->min_improvement.v : 0;
  out->overutilized_for_s = a && a->overutilized_for_s > 0 ? a->overutilized_for_s : 0;
}

bool vmsafety_keeps_history(const policy *pol) {
  for (size_t i = 0; i < pol->nprofiles; i++) {
    vmsafety_moves mv;
    vmsafety_moves_of(&pol->profiles[i], &mv);
    if (mv.overutilized_for_s > 0)
      return true;
  }
  return false;
}

bool vmsafety_requires_live_migration(const profile *pr) {
  const plugin_config *pc = profile_config(pr, "VMSafety");
  return pc && pc->args && on(((const vs_args *)pc->args)->require_live_migration);
}

void vmsafety_set_require_live_migration(policy *pol, bool value) {
  for (size_t i = 0; i < pol->nprofiles; i++) {
    plugin_config *pc = profile_config(&pol->profiles[i], "VMSafety");
    if (pc && pc->args)
      ((vs_args *)pc->args)->require_live_migration = (opt_bool){true, value};
  }
}

const plugin_desc plugin_vm_safety = {
    .name = "VMSafety",
    .points = PLUGIN_EVICTOR,
    .args_size = sizeof(vs_args),
    .fields = vs_fields,
    .validate = vs_validate,
    .prepare = vs_prepare,
    .filter = vs_filter,
    .pre_eviction_filter = vs_pre_eviction_filter,
    .admit = vs_admit,
    .counts_evacuations = vs_counts_evacuations,
};
