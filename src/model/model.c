/* model.c - model container, ordering and lookups; see model.h. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  size_t n, cap;
  void **items;
} any_vec;

int64_t res_get(const res_list *list, const char *name, bool *found) {
  for (size_t i = 0; i < list->n; i++)
    if (list->items[i].name == name || strcmp(list->items[i].name, name) == 0) {
      if (found)
        *found = true;
      return list->items[i].milli;
    }
  if (found)
    *found = false;
  return 0;
}

model *model_new(void) {
  model *m = calloc(1, sizeof *m);
  if (!m)
    abort();
  m->mem = arena_new(1 << 20);
  m->strings = intern_new();
  m->kubevirt.parallel_per_cluster = -1;
  m->kubevirt.parallel_outbound_per_node = -1;
  return m;
}

static void vec_release(void *vec) { free(((any_vec *)vec)->items); }

void model_free(model *m) {
  if (!m)
    return;
  vec_release(&m->nodes);
  vec_release(&m->pods);
  vec_release(&m->namespaces);
  vec_release(&m->pdbs);
  vec_release(&m->priority_classes);
  vec_release(&m->pvcs);
  vec_release(&m->vmis);
  vec_release(&m->vmims);
  arena_free(m->mem);
  intern_free(m->strings);
  free(m);
}

void model_push_(model *m, void *vec, void *item) {
  (void)m;
  any_vec *v = vec;
  if (v->n == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 64;
    v->items = realloc(v->items, v->cap * sizeof *v->items);
    if (!v->items)
      abort();
  }
  v->items[v->n++] = item;
}

static int cmp_node(const void *a, const void *b) {
  return strcmp((*(node *const *)a)->name, (*(node *const *)b)->name);
}

static int cmp_pod_name(const void *a, const void *b) {
  const pod *x = *(pod *const *)a, *y = *(pod *const *)b;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->ns, y->ns);
}

static int cmp_ns(const void *a, const void *b) {
  return strcmp((*(namespace_obj *const *)a)->name, (*(namespace_obj *const *)b)->name);
}

static int cmp_pvc(const void *a, const void *b) {
  const pvc_obj *x = *(pvc_obj *const *)a, *y = *(pvc_obj *const *)b;
  int c = strcmp(x->ns, y->ns);
  return c ? c : strcmp(x->name, y->name);
}

static int cmp_vmi(const void *a, const void *b) {
  const vmi_obj *x = *(vmi_obj *const *)a, *y = *(vmi_obj *const *)b;
  int c = strcmp(x->ns, y->ns);
  return c ? c : strcmp(x->name, y->name);
}

static int cmp_pc(const void *a, const void *b) {
  return strcmp((*(priority_class_obj *const *)a)->name, (*(priority_class_obj *const *)b)->name);
}

/* qsort of an empty vector (whose items may be NULL) is undefined; skip it */
static void sort_vec(void *items, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
  if (n > 1)
    qsort(items, n, size, cmp);
}

int model_finish(model *m, dserr *err) {
  sort_vec(m->nodes.items, m->nodes.n, sizeof(node *), cmp_node);
  sort_vec(m->namespaces.items, m->namespaces.n, sizeof(namespace_obj *), cmp_ns);
  sort_vec(m->pvcs.items, m->pvcs.n, sizeof(pvc_obj *), cmp_pvc);
  sort_vec(m->vmis.items, m->vmis.n, sizeof(vmi_obj *), cmp_vmi);
  sort_vec(m->priority_classes.items, m->priority_classes.n, sizeof(priority_class_obj *), cmp_pc);
  /* pods sorted by name give each node's list in name order after a stable bucket pass */
  sort_vec(m->pods.items, m->pods.n, sizeof(pod *), cmp_pod_name);
  for (size_t i = 1; i < m->nodes.n; i++)
    if (strcmp(m->nodes.items[i]->name, m->nodes.items[i - 1]->name) == 0)
      return dserr_set(err, "node \"%s\" appears more than once", m->nodes.items[i]->name);
  for (size_t i = 1; i < m->pods.n; i++) {
    const pod *a = m->pods.items[i - 1], *b = m->pods.items[i];
    if (strcmp(a->name, b->name) == 0 && strcmp(a->ns, b->ns) == 0)
      return dserr_set(err, "pod \"%s/%s\" appears more than once", b->ns, b->name);
  }
  for (size_t i = 0; i < m->nodes.n; i++) {
    m->nodes.items[i]->npods = 0;
    m->nodes.items[i]->index = (uint32_t)i;
  }
  for (size_t i = 0; i < m->pods.n; i++) {
    pod *p = m->pods.items[i];
    p->node = *p->node_name ? model_find_node(m, p->node_name) : NULL;
    if (p->node)
      p->node->npods++;
  }
  for (size_t i = 0; i < m->nodes.n; i++) {
    node *n = m->nodes.items[i];
    n->pods = ARENA_NEWN(m->mem, pod *, n->npods ? n->npods : 1);
    n->npods = 0;
  }
  for (size_t i = 0; i < m->pods.n; i++) {
    pod *p = m->pods.items[i];
    if (p->node)
      p->node->pods[p->node->npods++] = p;
  }
  m->finished = true;
  return 0;
}

node *model_find_node(const model *m, const char *name) {
  if (m->finished) {
    size_t lo = 0, hi = m->nodes.n;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      int c = strcmp(m->nodes.items[mid]->name, name);
      if (c == 0)
        return m->nodes.items[mid];
      if (c < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    return NULL;
  }
  for (size_t i = 0; i < m->nodes.n; i++)
    if (strcmp(m->nodes.items[i]->name, name) == 0)
      return m->nodes.items[i];
  return NULL;
}

namespace_obj *model_find_namespace(const model *m, const char *name) {
  size_t lo = 0, hi = m->namespaces.n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(m->namespaces.items[mid]->name, name);
    if (c == 0)
      return m->namespaces.items[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

pvc_obj *model_find_pvc(const model *m, const char *ns, const char *name) {
  size_t lo = 0, hi = m->pvcs.n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    pvc_obj *p = m->pvcs.items[mid];
    int c = strcmp(p->ns, ns);
    if (!c)
      c = strcmp(p->name, name);
    if (c == 0)
      return p;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

priority_class_obj *model_find_priority_class(const model *m, const char *name) {
  for (size_t i = 0; i < m->priority_classes.n; i++)
    if (strcmp(m->priority_classes.items[i]->name, name) == 0)
      return m->priority_classes.items[i];
  return NULL;
}

vmi_obj *model_find_vmi(const model *m, const char *ns, const char *name) {
  size_t lo = 0, hi = m->vmis.n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    vmi_obj *v = m->vmis.items[mid];
    int c = strcmp(v->ns, ns);
    if (!c)
      c = strcmp(v->name, name);
    if (c == 0)
      return v;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

bool pod_is_terminal(const pod *p) {
  return p->phase == PHASE_SUCCEEDED || p->phase == PHASE_FAILED;
}

const char *pod_phase_name(pod_phase ph) {
  static const char *names[] = {"", "Pending", "Running", "Succeeded", "Failed", "Unknown"};
  return names[ph];
}

const char *qos_name(qos_class q) {
  static const char *names[] = {"BestEffort", "Burstable", "Guaranteed"};
  return names[q];
}

const char *pod_ref(const pod *p, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/%s", p->ns, p->name);
  return buf;
}
