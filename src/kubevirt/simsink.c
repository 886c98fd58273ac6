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

static sink_result sim_evict(eviction_sink *self, const pod *p, const eviction_request *req,
                             char *msg, size_t cap) {
  (void)req;
  sim_sink *s = (sim_sink *)self;
  vm_view v;
  kubevirt_view(s->m, p, &v);
  if (v.effect != VM_EFFECT_NONE && v.source == STRATEGY_ASSUMED) {
    if (s->nassumed == s->cap) {
      s->cap = s->cap ? s->cap * 2 : 8;
      s->assumed = realloc(s->assumed, s->cap * sizeof *s->assumed);
      if (!s->assumed)
        abort();
    }
    s->assumed[s->nassumed++] = p;
  }
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
  free(s->assumed);
  s->assumed = NULL;
  s->nassumed = s->cap = 0;
}
