/* simsink.c - simulated evictions with KubeVirt's webhook; see simsink.h. */
#include "simsink.h"

#include "vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEBHOOK "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: "

static sink_result answer(const vm_view *v, char *msg, size_t cap) {
  switch (v->effect) {
  case VM_EFFECT_MIGRATE:
  case VM_EFFECT_EXTERNAL:
  case VM_EFFECT_REFUSED:
    snprintf(msg, cap, WEBHOOK "%s", v->why);
    return SINK_TOO_MANY;
  default:
    return SINK_EVICTED;
  }
}

sink_result kubevirt_webhook_decision(const model *m, const pod *p, char *msg, size_t cap) {
  vm_view v;
  kubevirt_view(m, p, &v);
  return answer(&v, msg, cap);
}

/* A targeted migration, as KubeVirt's migration-create webhook would answer it
 * (pkg/virt-api/webhooks/validating-webhook/admitters/migration-create-admitter.go): the VMI
 * must exist, run, be live-migratable and have no migration in flight. */
static sink_result sim_migrate(sim_sink *s, const pod *p, const vm_view *v, const char *to,
                               char *msg, size_t cap) {
  if (!v->vmi) {
    snprintf(msg, cap, "the VMI \"%s/%s\" does not exist", p->ns, v->vmi_name);
    return SINK_ERROR;
  }
  if (v->migratable == 0) {
    snprintf(msg, cap, "Cannot migrate VMI, Reason: %s",
             v->vmi->live_migratable_reason ? v->vmi->live_migratable_reason : "not migratable");
    return SINK_ERROR;
  }
  if (!s->flights) {
    s->mem = arena_new(4096);
    s->flights = kubevirt_flights_build(s->m, s->mem);
  }
  if (kubevirt_flight_of(s->flights, v->vmi)) {
    snprintf(msg, cap, "in-flight migration detected for VMI %s", v->vmi->name);
    return SINK_ERROR;
  }
  snprintf(msg, cap, "simulated migration of %s to %s", v->vmi->name, to);
  return SINK_MIGRATING;
}

static bool marked(const sim_sink *s, const pod *p) {
  for (size_t i = 0; i < s->nmarked; i++)
    if (s->marked[i] == p)
      return true;
  return false;
}

static const pod **push(const pod **items, size_t *n, size_t *cap, const pod *p) {
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 8;
    items = realloc(items, *cap * sizeof *items);
    if (!items)
      abort();
  }
  items[(*n)++] = p;
  return items;
}

static sink_result sim_evict(eviction_sink *self, const pod *p, const eviction_request *req,
                             char *msg, size_t cap) {
  sim_sink *s = (sim_sink *)self;
  vm_view v;
  kubevirt_view(s->m, p, &v);
  if (req->to_node && v.effect != VM_EFFECT_NONE)
    return sim_migrate(s, p, &v, req->to_node, msg, cap);
  if (v.effect != VM_EFFECT_NONE && v.source == STRATEGY_ASSUMED)
    s->assumed = push(s->assumed, &s->nassumed, &s->cap, p);
  bool marks = (v.effect == VM_EFFECT_MIGRATE || v.effect == VM_EFFECT_EXTERNAL) &&
               !strncmp(v.why, "Eviction triggered evacuation", 29);
  if (marks && marked(s, p)) {
    /* the webhook finds the VMI it marked at the first request */
    snprintf(msg, cap, WEBHOOK "Evacuation in progress: %s", v.why);
    return SINK_TOO_MANY;
  }
  if (marks)
    s->marked = push(s->marked, &s->nmarked, &s->cap_marked, p);
  return answer(&v, msg, cap);
}

void sim_sink_init(sim_sink *s, const model *m) {
  memset(s, 0, sizeof *s);
  s->base.evict = sim_evict;
  s->base.event = NULL;
  s->base.dry_run = true;
  s->m = m;
}

void sim_sink_free(sim_sink *s) {
  arena_free(s->mem);
  s->mem = NULL;
  s->flights = NULL;
  free(s->assumed);
  s->assumed = NULL;
  s->nassumed = s->cap = 0;
  free(s->marked);
  s->marked = NULL;
  s->nmarked = s->cap_marked = 0;
}
