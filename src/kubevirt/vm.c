/* vm.c - KubeVirt's answer to a launcher eviction, migrations in flight, moves and cooldown;
 * see vm.h. */
#include "vm.h"

#include "../apimachinery/timeutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the label kubevirt.io=virt-launcher, which decode keeps as a bit of the pod */
bool kubevirt_is_launcher(const pod *p) {
  return p->launcher_label;
}

const char *kubevirt_effect_name(vm_effect e) {
  switch (e) {
  case VM_EFFECT_MIGRATE:
    return "live-migration";
  case VM_EFFECT_EXTERNAL:
    return "external-drain";
  case VM_EFFECT_STOP:
    return "vm-stops";
  case VM_EFFECT_REFUSED:
    return "refused";
  default:
    return "pod-eviction";
  }
}

const char *kubevirt_vmi_strategy(const model *m, const vmi_obj *v, strategy_source *source) {
  if (v && *v->eviction_strategy) {
    *source = STRATEGY_FROM_VMI;
    return v->eviction_strategy;
  }
  if (m->kubevirt.present && *m->kubevirt.eviction_strategy) {
    *source = STRATEGY_FROM_CLUSTER;
    return m->kubevirt.eviction_strategy;
  }
  if (m->kubevirt.present || m->vmis_complete) {
    *source = STRATEGY_BUILTIN;
    return "None";
  }
  /* a snapshot without the KubeVirt CR says nothing of the cluster default */
  *source = STRATEGY_ASSUMED;
  return "LiveMigrate";
}

/* Writes out->why only when `why` is set: kubevirt_view_effect, which the filters call for
 * every launcher of every cycle, leaves it empty. */
static void say(vm_view *out, bool why, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(vm_view *out, bool why, const char *fmt, ...) {
  if (!why)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out->why, sizeof out->why, fmt, ap);
  va_end(ap);
}

static void view(const model *m, const pod *p, vm_view *out, bool why) {
  out->vmi = NULL;
  out->source = STRATEGY_FROM_VMI; /* what a zeroed view held; set below for a launcher */
  out->why[0] = '\0';
  out->vmi_name = "";
  out->strategy = "";
  out->migratable = -1;
  out->effect = VM_EFFECT_NONE;
  /* the webhook lets through anything that is not a live launcher */
  if (!kubevirt_is_launcher(p) || pod_is_terminal(p))
    return;
  if (!(p->annotations & ANN_KUBEVIRT_DOMAIN)) {
    out->effect = VM_EFFECT_STOP;
    say(out, why,
        "the launcher has no kubevirt.io/domain annotation, so KubeVirt lets the eviction "
        "delete it");
    return;
  }
  const char *domain = pod_x(p)->kubevirt_domain;
  out->vmi_name = domain;
  const vmi_obj *v = model_pod_vmi(m, p);
  out->vmi = v;
  if (!v && m->vmis_complete) {
    out->effect = VM_EFFECT_REFUSED;
    say(out, why,
        "kubevirt failed getting the vmi: virtualmachineinstances.kubevirt.io \"%s\" not found",
        domain);
    return;
  }
  out->strategy = kubevirt_vmi_strategy(m, v, &out->source);
  if (v) {
    out->migratable = v->live_migratable;
  } else {
    /* a snapshot without this VMI: what the cluster default would do to a migratable VM */
    out->source = STRATEGY_ASSUMED;
    out->migratable = 1;
  }
  bool migratable = out->migratable == 1;
  if (!strcmp(out->strategy, "None")) {
    out->effect = VM_EFFECT_STOP;
    say(out, why, "eviction strategy None (%s): KubeVirt lets the eviction delete the launcher",
        out->source == STRATEGY_FROM_VMI       ? "recorded on the VMI"
        : out->source == STRATEGY_FROM_CLUSTER ? "the KubeVirt CR's default"
        : out->source == STRATEGY_BUILTIN      ? "KubeVirt's built-in default"
                                               : "assumed: the snapshot lacks the VMI");
    return;
  }
  if (!strcmp(out->strategy, "LiveMigrate") && !migratable) {
    out->effect = VM_EFFECT_REFUSED;
    say(out, why, "VMI %s is configured with an eviction strategy but is not live-migratable",
        domain);
    return;
  }
  if (!strcmp(out->strategy, "LiveMigrateIfPossible") && !migratable) {
    out->effect = VM_EFFECT_STOP;
    say(out, why,
        "eviction strategy LiveMigrateIfPossible and the VMI is not live-migratable: "
        "KubeVirt lets the eviction delete the launcher");
    return;
  }
  if (strcmp(out->strategy, "LiveMigrate") && strcmp(out->strategy, "LiveMigrateIfPossible") &&
      strcmp(out->strategy, "External")) {
    out->effect = VM_EFFECT_STOP;
    say(out, why, "unknown eviction strategy \"%s\"", out->strategy);
    return;
  }
  out->effect = strcmp(out->strategy, "External") ? VM_EFFECT_MIGRATE : VM_EFFECT_EXTERNAL;
  if (v && *v->evacuation_node) {
    say(out, why, "Evacuation in progress: Eviction triggered evacuation of VMI \"%s/%s\"", p->ns,
        domain);
    return;
  }
  if (v && strcmp(v->node_name, p->node_name) != 0) {
    out->effect = VM_EFFECT_REFUSED;
    say(out, why, "Eviction request for target Pod");
    return;
  }
  say(out, why, "Eviction triggered evacuation of VMI \"%s/%s\"", p->ns, domain);
}

void kubevirt_view(const model *m, const pod *p, vm_view *out) {
  view(m, p, out, true);
}

void kubevirt_view_effect(const model *m, const pod *p, vm_view *out) {
  view(m, p, out, false);
}

bool kubevirt_vm_no_eviction(const model *m, const pod *p) {
  if (!kubevirt_is_launcher(p))
    return false;
  const vmi_obj *v = model_pod_vmi(m, p);
  return (p->annotations & ANN_VM_NO_EVICTION) || (v && v->no_eviction);
}

bool kubevirt_vm_prefers_no_eviction(const model *m, const pod *p) {
  if (!kubevirt_is_launcher(p))
    return false;
  const vmi_obj *v = model_pod_vmi(m, p);
  return v && v->prefer_no_eviction;
}

/* ---------- migrations in flight ---------- */

typedef struct {
  const char *node;
  int count;
} node_count;

struct kubevirt_flights {
  const model *m;
  const char **desc; /* parallel to m->vmis.items: NULL when nothing is in flight */
  node_count *per_node;
  size_t nnodes;
  int total;
};

static bool vmim_finished_phase(const char *phase) {
  return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

static void count_source(kubevirt_flights *f, const char *node) {
  f->total++;
  for (size_t i = 0; i < f->nnodes; i++)
    if (!strcmp(f->per_node[i].node, node)) {
      f->per_node[i].count++;
      return;
    }
  f->per_node[f->nnodes++] = (node_count){node, 1};
}

kubevirt_flights *kubevirt_flights_build(const model *m, arena *a) {
  kubevirt_flights *f = ARENA_NEW(a, kubevirt_flights);
  size_t n = m->vmis.n ? m->vmis.n : 1;
  f->m = m;
  f->desc = ARENA_NEWN(a, const char *, n);
  const char **source = ARENA_NEWN(a, const char *, n);
  f->per_node = ARENA_NEWN(a, node_count, n);
  char buf[512];
  for (size_t i = 0; i < m->vmims.n; i++) {
    const vmim_obj *mm = m->vmims.items[i];
    if (vmim_finished_phase(mm->phase))
      continue;
    long k = model_vmi_position(m, mm->ns, mm->vmi_name);
    if (k < 0 || f->desc[k])
      continue;
    const vmi_obj *v = m->vmis.items[k];
    snprintf(buf, sizeof buf, "migration %s is in phase %s", mm->name, *mm->phase ? mm->phase : "\"\"");
    f->desc[k] = arena_strdup(a, buf);
    source[k] = *mm->evacuation_node ? mm->evacuation_node
                : *mm->source_node   ? mm->source_node
                                     : v->node_name;
  }
  for (size_t k = 0; k < m->vmis.n; k++) {
    const vmi_obj *v = m->vmis.items[k];
    if (f->desc[k])
      continue;
    if (*v->evacuation_node) {
      snprintf(buf, sizeof buf, "marked for evacuation from %s", v->evacuation_node);
      f->desc[k] = arena_strdup(a, buf);
      source[k] = v->evacuation_node;
    } else if (v->has_migration_start && !v->has_migration_end && !v->migration_completed &&
               !v->migration_failed) {
      snprintf(buf, sizeof buf, "a migration from %s started and has not ended",
               *v->migration_source ? v->migration_source : v->node_name);
      f->desc[k] = arena_strdup(a, buf);
      source[k] = *v->migration_source ? v->migration_source : v->node_name;
    }
  }
  for (size_t k = 0; k < m->vmis.n; k++)
    if (f->desc[k])
      count_source(f, source[k]);
  return f;
}

const char *kubevirt_flight_of(const kubevirt_flights *f, const vmi_obj *v) {
  /* a VMI of the flights' model knows its place; another one is looked up */
  long k = !v ? -1
           : v->index < f->m->vmis.n && f->m->vmis.items[v->index] == v
               ? (long)v->index
               : model_vmi_position(f->m, v->ns, v->name);
  return k < 0 ? NULL : f->desc[k];
}

int kubevirt_flights_from(const kubevirt_flights *f, const char *node) {
  for (size_t i = 0; i < f->nnodes; i++)
    if (!strcmp(f->per_node[i].node, node))
      return f->per_node[i].count;
  return 0;
}

int kubevirt_flights_total(const kubevirt_flights *f) { return f->total; }

void kubevirt_migration_limits(const model *m, int *per_cluster, int *per_node) {
  *per_cluster = m->kubevirt.present && m->kubevirt.parallel_per_cluster >= 0
                     ? m->kubevirt.parallel_per_cluster
                     : KUBEVIRT_DEFAULT_PARALLEL_PER_CLUSTER;
  *per_node = m->kubevirt.present && m->kubevirt.parallel_outbound_per_node >= 0
                  ? m->kubevirt.parallel_outbound_per_node
                  : KUBEVIRT_DEFAULT_PARALLEL_OUTBOUND_PER_NODE;
}

/* ---------- moves and cooldown ---------- */

size_t kubevirt_moves_parse(const char *annotation, int64_t *times, size_t cap, size_t *bad) {
  size_t n = 0;
  if (bad)
    *bad = 0;
  if (!annotation)
    return 0;
  const char *s = annotation;
  while (*s) {
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    char item[64];
    while (len && (*s == ' ')) {
      s++;
      len--;
    }
    while (len && s[len - 1] == ' ')
      len--;
    if (len && len < sizeof item) {
      memcpy(item, s, len);
      item[len] = 0;
      int64_t t;
      dserr ignored;
      if (time_parse_rfc3339(item, &t, NULL, &ignored) == 0) {
        if (n == cap) { /* keep the newest: drop the oldest */
          memmove(times, times + 1, (cap - 1) * sizeof *times);
          n--;
        }
        if (cap)
          times[n++] = t;
      } else if (bad) {
        (*bad)++;
      }
    } else if (len && bad) {
      (*bad)++;
    }
    if (!end)
      break;
    s = end + 1;
  }
  /* oldest first, whatever order they were written in */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && times[j - 1] > times[j]; j--) {
      int64_t t = times[j];
      times[j] = times[j - 1];
      times[j - 1] = t;
    }
  return n;
}

void kubevirt_moves_append(const char *annotation, int64_t now, int64_t window, strbuf *out) {
  int64_t times[KUBEVIRT_MOVES_KEPT + 1];
  size_t n = kubevirt_moves_parse(annotation, times, KUBEVIRT_MOVES_KEPT, NULL);
  times[n++] = now;
  size_t first = 0;
  while (first < n && window > 0 && now - times[first] > window)
    first++;
  if (n - first > KUBEVIRT_MOVES_KEPT)
    first = n - KUBEVIRT_MOVES_KEPT;
  for (size_t i = first; i < n; i++) {
    if (i > first)
      sb_appendc(out, ',');
    time_format_rfc3339(out, times[i]);
  }
}

int64_t kubevirt_cooldown_left(const int64_t *times, size_t n, int64_t now, int64_t base,
                               int64_t max, int64_t window, int64_t *cooldown) {
  *cooldown = 0;
  if (!n || base <= 0)
    return 0;
  int64_t last = times[n - 1];
  size_t recent = 0;
  for (size_t i = 0; i < n; i++)
    if (window <= 0 || last - times[i] <= window)
      recent++;
  int64_t c = base;
  for (size_t i = 1; i < recent; i++) {
    if (max > 0 && c >= max)
      break;
    if (c > INT64_MAX / 2) {
      c = INT64_MAX;
      break;
    }
    c *= 2;
  }
  if (max > 0 && c > max)
    c = max;
  *cooldown = c;
  int64_t since = now - last;
  return since < c ? c - since : 0;
}
