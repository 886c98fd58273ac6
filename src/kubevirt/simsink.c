/* simsink.c - simulated evictions with KubeVirt's webhook; see simsink.h. */
#include "simsink.h"

#include <stdio.h>
#include <string.h>

#define WEBHOOK "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: "

static bool is_launcher(const pod *p) {
  const char *app = kv_get(&p->labels, "kubevirt.io");
  return app && strcmp(app, "virt-launcher") == 0;
}

sink_result kubevirt_webhook_decision(const model *m, const pod *p, char *msg, size_t cap) {
  if (!is_launcher(p) || pod_is_terminal(p) || !(p->annotations & ANN_KUBEVIRT_DOMAIN))
    return SINK_EVICTED;
  const vmi_obj *vmi = model_find_vmi(m, p->ns, p->kubevirt_domain);
  const char *strategy = "LiveMigrate";
  int migratable = 1;
  if (vmi) {
    strategy = *vmi->eviction_strategy ? vmi->eviction_strategy
               : m->kubevirt.present   ? m->kubevirt.eviction_strategy
                                       : "";
    if (!*strategy)
      strategy = m->kubevirt.present ? "None" : "LiveMigrate";
    migratable = vmi->live_migratable == 1;
  }
  /* kubevirt.md §3.2 step 7; External marks the VMI like the live-migrating strategies */
  if (!strcmp(strategy, "None"))
    return SINK_EVICTED;
  if (!strcmp(strategy, "LiveMigrate") && !migratable) {
    snprintf(msg, cap, WEBHOOK "VMI %s is configured with an eviction strategy but is not live-migratable",
             p->kubevirt_domain);
    return SINK_TOO_MANY;
  }
  if (!strcmp(strategy, "LiveMigrateIfPossible") && !migratable)
    return SINK_EVICTED;
  if (vmi && *vmi->evacuation_node) {
    snprintf(msg, cap, WEBHOOK "Evacuation in progress: Eviction triggered evacuation of VMI \"%s/%s\"",
             p->ns, p->kubevirt_domain);
    return SINK_TOO_MANY;
  }
  if (vmi && strcmp(vmi->node_name, p->node_name) != 0) {
    snprintf(msg, cap, WEBHOOK "Eviction request for target Pod");
    return SINK_TOO_MANY;
  }
  snprintf(msg, cap, WEBHOOK "Eviction triggered evacuation of VMI \"%s/%s\"", p->ns,
           p->kubevirt_domain);
  return SINK_TOO_MANY;
}

static sink_result sim_evict(eviction_sink *self, const pod *p, const eviction_request *req,
                             char *msg, size_t cap) {
  (void)req;
  sim_sink *s = (sim_sink *)self;
  return kubevirt_webhook_decision(s->m, p, msg, cap);
}

void sim_sink_init(sim_sink *s, const model *m) {
  s->base.evict = sim_evict;
  s->base.event = NULL;
  s->base.dry_run = true;
  s->m = m;
}
