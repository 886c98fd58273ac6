/* moves.c - destinations of a plan's pods, chosen or likely; see moves.h. */
#include "moves.h"

#include "../framework/podutil.h"
#include "../util/xalloc.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t cpu, mem, pods; /* left: allocatable minus requests (cpu milli, memory milli-bytes) */
  bool has_cpu, has_mem, has_pods;
} room;

static void node_room(const node *n, room *r) {
  const res_list *cap = n->allocatable.n ? &n->allocatable : &n->capacity;
  r->cpu = res_get(cap, RES_CPU, &r->has_cpu);
  r->mem = res_get(cap, RES_MEMORY, &r->has_mem);
  r->pods = res_get(cap, RES_PODS, &r->has_pods) / 1000;
  for (size_t i = 0; i < n->npods; i++) {
    const pod *p = n->pods[i];
    if (p->evicted || p->leaving || pod_is_terminal(p))
      continue;
    r->cpu -= res_get(&p->requests, RES_CPU, NULL);
    r->mem -= res_get(&p->requests, RES_MEMORY, NULL);
    r->pods -= 1;
  }
}

static bool fits(const pod *p, const node *n, const room *r) {
  if (!n->ready || n->unschedulable || !pod_matches_node_selector_and_affinity(p, n) ||
      !pod_tolerates_node_scheduling_taints(p, n))
    return false;
  if (r->has_cpu && res_get(&p->requests, RES_CPU, NULL) > r->cpu)
    return false;
  if (r->has_mem && res_get(&p->requests, RES_MEMORY, NULL) > r->mem)
    return false;
  return !r->has_pods || r->pods >= 1;
}

planned_move *report_moves(const model *m, const fw_result *res, size_t *count) {
  planned_move *out = xcalloc(res->nevictions ? res->nevictions : 1, sizeof *out);
  room *rooms = xcalloc(m->nodes.n ? m->nodes.n : 1, sizeof *rooms);
  for (size_t i = 0; i < m->nodes.n; i++)
    node_room(m->nodes.items[i], &rooms[i]);
  for (size_t e = 0; e < res->nevictions; e++) {
    const pod *p = res->evictions[e].pod;
    planned_move *mv = &out[e];
    mv->pod = p;
    mv->from = p->node;
    long best = -1;
    /* a targeted move: the descheduler chose the node itself */
    const char *to = res->evictions[e].to;
    for (size_t i = 0; to && i < m->nodes.n; i++)
      if (!strcmp(m->nodes.items[i]->name, to))
        best = (long)i;
    mv->chosen = best >= 0;
    for (size_t i = 0; !mv->chosen && i < m->nodes.n; i++) {
      const node *n = m->nodes.items[i];
      if (n == p->node || !fits(p, n, &rooms[i]))
        continue;
      if (best < 0 || rooms[i].mem > rooms[best].mem ||
          (rooms[i].mem == rooms[best].mem && rooms[i].cpu > rooms[best].cpu))
        best = (long)i;
    }
    if (best < 0) {
      mv->why_none = "no other node fits it (selectors, taints, or room)";
      continue;
    }
    mv->to = m->nodes.items[best];
    rooms[best].cpu -= res_get(&p->requests, RES_CPU, NULL);
    rooms[best].mem -= res_get(&p->requests, RES_MEMORY, NULL);
    rooms[best].pods -= 1;
  }
  free(rooms);
  *count = res->nevictions;
  return out;
}
