/* model.c - model container, ordering and lookups; see model.h. */
#include "model.h"

#include "../util/hash.h"
#include "../util/par.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  size_t n, cap;
  void **items;
} any_vec;

static void vmi_map_free(model *m);

int64_t res_get(const res_list *list, const char *name, bool *found) {
  for (size_t i = 0; i < list->n; i++)
    if (list->items[i].name == name ||
        (list->items[i].name[0] == name[0] && strcmp(list->items[i].name, name) == 0)) {
      if (found)
        *found = true;
      return list->items[i].milli;
    }
  if (found)
    *found = false;
  return 0;
}

const char RES_CPU[] = "cpu", RES_MEMORY[] = "memory", RES_PODS[] = "pods";

const char *res_name(const char *name) {
  return strcmp(name, RES_CPU) == 0      ? RES_CPU
         : strcmp(name, RES_MEMORY) == 0 ? RES_MEMORY
         : strcmp(name, RES_PODS) == 0   ? RES_PODS
                                         : name;
}

model *model_new(void) {
  model *m = calloc(1, sizeof *m);
  if (!m)
    abort();
  m->mem = arena_new(1 << 20);
  m->strings = intern_new();
  intern_seed(m->strings, RES_CPU);
  intern_seed(m->strings, RES_MEMORY);
  intern_seed(m->strings, RES_PODS);
  m->keep_pod_conditions = true;
  m->kubevirt.parallel_per_cluster = -1;
  m->kubevirt.parallel_outbound_per_node = -1;
  return m;
}

model *model_new_view(intern_table *strings) {
  model *m = model_new();
  intern_free(m->strings);
  m->strings = strings;
  m->borrowed_strings = true;
  return m;
}

struct model_shared;
static void shared_free(struct model_shared *t);

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
  vmi_map_free(m);
  vec_release(&m->vmims);
  vec_release(&m->node_metrics);
  vec_release(&m->pod_metrics);
  vec_release(&m->prom_answers);
  arena_free(m->mem);
  arena_free(m->scratch);
  if (!m->borrowed_strings)
    intern_free(m->strings);
  shared_free(m->shared);
  free(m);
}

/* model_share's table: open addressing on a hash of the bytes. */
typedef struct {
  const void *data;
  uint32_t bytes, hash;
} shared_slot;

struct model_shared {
  shared_slot *slots;
  size_t cap, n;
  const void *zeros;
};

static void shared_free(struct model_shared *t) {
  if (t)
    free(t->slots);
  free(t);
}

static void shared_grow(struct model_shared *t) {
  size_t ncap = t->cap ? t->cap * 2 : 1024;
  shared_slot *ns = calloc(ncap, sizeof *ns);
  if (!ns)
    abort();
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->slots[i].data)
      continue;
    size_t j = t->slots[i].hash & (ncap - 1);
    while (ns[j].data)
      j = (j + 1) & (ncap - 1);
    ns[j] = t->slots[i];
  }
  free(t->slots);
  t->slots = ns;
  t->cap = ncap;
}

const void *model_share(model *m, const void *data, size_t bytes, size_t align) {
  struct model_shared *t = m->shared;
  if (!t) {
    t = m->shared = calloc(1, sizeof *t);
    if (!t)
      abort();
    t->zeros = arena_alloc(m->shared_mem ? m->shared_mem : m->mem, 128);
  }
  if (bytes == 0)
    return t->zeros;
  if (2 * (t->n + 1) > t->cap)
    shared_grow(t);
  if (bytes > UINT32_MAX) /* not worth sharing, and too long for a slot */
    return memcpy(arena_alloc_uninit(m->mem, bytes, align), data, bytes);
  arena *to = m->shared_mem ? m->shared_mem : m->mem;
  uint32_t h = hash_words(data, bytes);
  size_t i = h & (t->cap - 1);
  for (; t->slots[i].data; i = (i + 1) & (t->cap - 1))
    if (t->slots[i].hash == h && t->slots[i].bytes == bytes &&
        memcmp(t->slots[i].data, data, bytes) == 0)
      return t->slots[i].data;
  void *copy = arena_alloc_uninit(to, bytes, align);
  memcpy(copy, data, bytes);
  t->slots[i] = (shared_slot){copy, (uint32_t)bytes, h};
  t->n++;
  return copy;
}

size_t model_share_table_bytes(const model *m) {
  return m->shared ? m->shared->cap * sizeof *m->shared->slots : 0;
}

const pod_extra pod_extra_none;

size_t model_bytes(const model *m) {
  const any_vec *vecs[] = {(const any_vec *)&m->nodes,
                           (const any_vec *)&m->pods,
                           (const any_vec *)&m->namespaces,
                           (const any_vec *)&m->pdbs,
                           (const any_vec *)&m->priority_classes,
                           (const any_vec *)&m->pvcs,
                           (const any_vec *)&m->vmis,
                           (const any_vec *)&m->vmims,
                           (const any_vec *)&m->node_metrics,
                           (const any_vec *)&m->pod_metrics,
                           (const any_vec *)&m->prom_answers};
  size_t n = arena_used(m->mem) + intern_bytes(m->strings) + model_share_table_bytes(m);
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
    n += vecs[i]->cap * sizeof(void *);
  return n;
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

static void vec_append(any_vec *v, const any_vec *from) {
  if (!from->n)
    return;
  if (v->n + from->n > v->cap) {
    v->cap = v->n + from->n;
    v->items = realloc(v->items, v->cap * sizeof *v->items);
    if (!v->items)
      abort();
  }
  memcpy(v->items + v->n, from->items, from->n * sizeof *v->items);
  v->n += from->n;
}

void model_adopt(model *m, model *from) {
  any_vec *to[] = {(any_vec *)&m->nodes, (any_vec *)&m->pods, (any_vec *)&m->namespaces,
                   (any_vec *)&m->pdbs, (any_vec *)&m->priority_classes, (any_vec *)&m->pvcs,
                   (any_vec *)&m->vmis, (any_vec *)&m->vmims};
  const any_vec *add[] = {(any_vec *)&from->nodes, (any_vec *)&from->pods,
                          (any_vec *)&from->namespaces, (any_vec *)&from->pdbs,
                          (any_vec *)&from->priority_classes, (any_vec *)&from->pvcs,
                          (any_vec *)&from->vmis, (any_vec *)&from->vmims};
  for (size_t i = 0; i < sizeof to / sizeof to[0]; i++)
    vec_append(to[i], add[i]);
  arena_adopt(m->mem, from->mem);
  from->mem = NULL;
  model_free(from);
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
  int c = x->ns == y->ns ? 0 : strcmp(x->ns, y->ns); /* interned */
  return c ? c : strcmp(x->name, y->name);
}

static int cmp_pc(const void *a, const void *b) {
  return strcmp((*(priority_class_obj *const *)a)->name, (*(priority_class_obj *const *)b)->name);
}

/* qsort of an empty vector (whose items may be NULL) is undefined; skip it. A watch cache's
 * view gives its lists in key order, which for most kinds is already this order: one pass
 * finds that out (an unsorted list fails it within its first few items). */
static void sort_vec(void *items, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
  const char *b = items;
  size_t i = 1;
  while (i < n && cmp(b + (i - 1) * size, b + i * size) <= 0)
    i++;
  if (i < n)
    qsort(items, n, size, cmp);
}

/* Open-addressing map keyed by a pair: an interned string pointer (a namespace, a node name)
 * and either another interned pointer or, with text set, a string compared by its bytes (a
 * pod's name is its own copy, not interned), for lookups that would otherwise strcmp their
 * way through 150,000 pods. */
typedef struct {
  const void *a, *b;
  void *value;
} ptr_slot;

typedef struct {
  ptr_slot *slots;
  size_t cap;
  bool text; /* b is compared as a string */
} ptr_map;

static size_t ptr_hash(const ptr_map *pm, const void *a, const void *b) {
  uint64_t hb = (uint64_t)(uintptr_t)b;
  if (pm->text && b)
    hb = fnv1a_str(FNV1A_OFFSET, b);
  uint64_t h = ((uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ULL) ^ (hb * 0xC2B2AE3D27D4EB4FULL);
  return (size_t)(h ^ (h >> 29)) & (pm->cap - 1);
}

static bool ptr_same(const ptr_map *pm, const ptr_slot *s, const void *a, const void *b) {
  if (s->a != a)
    return false;
  if (!pm->text || !s->b || !b)
    return s->b == b;
  return strcmp(s->b, b) == 0;
}

/* slots for n keys in an open-addressing table: a power of two, at most half full */
static size_t table_slots(size_t n) {
  size_t cap = 16;
  while (cap < 2 * n + 1)
    cap *= 2;
  return cap;
}

static void ptr_map_init(ptr_map *pm, size_t n, bool text) {
  pm->cap = table_slots(n);
  pm->text = text;
  pm->slots = arena_big_calloc(pm->cap * sizeof *pm->slots); /* every cycle's view needs it again */
}

/* Returns the existing value for (a, b), or stores value and returns NULL. */
static void *ptr_map_put(ptr_map *pm, const void *a, const void *b, void *value) {
  size_t i = ptr_hash(pm, a, b);
  while (pm->slots[i].a) {
    if (ptr_same(pm, &pm->slots[i], a, b))
      return pm->slots[i].value;
    i = (i + 1) & (pm->cap - 1);
  }
  pm->slots[i] = (ptr_slot){a, b, value};
  return NULL;
}

static void *ptr_map_get(const ptr_map *pm, const void *a, const void *b) {
  size_t i = ptr_hash(pm, a, b);
  while (pm->slots[i].a) {
    if (ptr_same(pm, &pm->slots[i], a, b))
      return pm->slots[i].value;
    i = (i + 1) & (pm->cap - 1);
  }
  return NULL;
}

/* Fails when two pods have the same namespace and name. Each slot of the open-addressing
 * table holds 32 bits of the pair's hash and the pod's position (+1; 0 = empty): 8 bytes a
 * slot, a third of a ptr_map's, so that the table a one-shot run fills for 150,000 pods is
 * 4 MiB of fresh pages, not 12, and names are compared only when the hash bits agree. */
static int check_pods_unique(const model *m, dserr *err) {
  size_t n = m->pods.n, cap = table_slots(n);
  uint64_t *slots = arena_big_calloc(cap * sizeof *slots);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    const pod *p = m->pods.items[i];
    uint64_t h = fnv1a_str((uint64_t)(uintptr_t)p->ns * 0x9E3779B97F4A7C15ULL, p->name);
    uint32_t tag = (uint32_t)(h >> 32);
    size_t j = (size_t)(h ^ (h >> 29)) & (cap - 1);
    for (; slots[j]; j = (j + 1) & (cap - 1)) {
      const pod *q = m->pods.items[(uint32_t)slots[j] - 1];
      if ((uint32_t)(slots[j] >> 32) == tag && q->ns == p->ns && strcmp(q->name, p->name) == 0)
        break;
    }
    if (slots[j]) {
      rc = dserr_set(err, "pod \"%s/%s\" appears more than once", p->ns, p->name);
      break;
    }
    slots[j] = (uint64_t)tag << 32 | (uint64_t)(i + 1);
  }
  arena_big_free(slots);
  return rc;
}

/* namespaces by pointer (interned in the model's table), VMI names as text */
struct model_vmi_map {
  ptr_map map;
};

static void vmi_map_free(model *m) {
  if (m->vmi_map) {
    arena_big_free(m->vmi_map->map.slots);
    free(m->vmi_map);
    m->vmi_map = NULL;
  }
}

/* ---------- linking pods to their nodes (model_finish), on both cores ---------- */

typedef struct {
  model *m;
  const ptr_map *nodes;
  uint32_t *node_of;  /* by pod position: 1 + the index of its node, 0 for none */
  uint32_t *count[2]; /* by node index: the pods each part found there, then its cursors */
  size_t split;       /* where the second part starts */
} link_job;

/* Pods [lo, hi) of the positions counted in count (one side of the split) */
static void link_range(link_job *j, size_t lo, size_t hi, uint32_t *count) {
  model *m = j->m;
  for (size_t i = lo; i < hi; i++) {
    pod *p = m->pods.items[i];
    /* what a cycle leaves on a pod, cleared here in the pass that links it (a watch cache's
     * view reuses its pods cycle after cycle; fresh ones have these zero already) */
    p->evicted = p->leaving = false;
    p->metrics = NULL;
    p->vmi_link = 0;
    if (m->vmis.n && (p->annotations & ANN_KUBEVIRT_DOMAIN))
      p->vmi_link = (uint32_t)(model_vmi_position(m, p->ns, pod_x(p)->kubevirt_domain) + 1);
    p->node = *p->node_name ? ptr_map_get(j->nodes, p->node_name, NULL) : NULL;
    j->node_of[i] = p->node ? p->node->index + 1 : 0;
    if (p->node)
      count[p->node->index]++;
  }
}

static void fill_range(link_job *j, size_t lo, size_t hi, uint32_t *cursor) {
  for (size_t i = lo; i < hi; i++)
    if (j->node_of[i]) {
      node *n = j->m->nodes.items[j->node_of[i] - 1];
      n->pods[cursor[n->index]++] = j->m->pods.items[i];
    }
}

/* The pods before j->split are counted (and placed) with count[0], the others with count[1],
 * however par_halves cut the range: a part run alone covers both sides. */
static void by_side(link_job *j, size_t lo, size_t hi,
                    void (*range)(link_job *j, size_t lo, size_t hi, uint32_t *count)) {
  if (lo < j->split)
    range(j, lo, hi < j->split ? hi : j->split, j->count[0]);
  if (hi > j->split)
    range(j, lo > j->split ? lo : j->split, hi, j->count[1]);
}

/* Links the pods of [lo, hi) to their nodes and clears what a cycle leaves on them. */
static void link_part(void *ctx, size_t lo, size_t hi) { by_side(ctx, lo, hi, link_range); }

/* Puts the pods of [lo, hi) in their nodes' lists. */
static void fill_part(void *ctx, size_t lo, size_t hi) { by_side(ctx, lo, hi, fill_range); }

/* Asks for what cmp_pod_name reads of the pods of node i: at stage 0 the line of each pod
 * that holds its name pointer, at stage 1 (that line arrived) the names themselves. */
static void sort_prefetch(const link_job *j, size_t i, int stage) {
  const node *n = j->m->nodes.items[i];
  for (size_t k = 0; k < n->npods; k++)
    __builtin_prefetch(stage ? (const void *)n->pods[k]->name : (const void *)&n->pods[k]->name);
}

/* A pod of a node's list with eight bytes of its name, read at the offset where the node's
 * names start to differ, as a big-endian number (bytes past the name's end are zero). */
typedef struct {
  uint64_t key;
  pod *p;
} keyed_pod;

/* cmp_pod_name's order: all the names share their first `common` bytes, so two keys that
 * differ order their names as strcmp does (unsigned bytes, a name's end before any byte);
 * equal keys leave it to the names. */
static int cmp_keyed_pod(const keyed_pod *a, const keyed_pod *b) {
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return cmp_pod_name(&a->p, &b->p);
}

static int cmp_keyed_pod_q(const void *a, const void *b) {
  return cmp_keyed_pod(a, b);
}

/* Sorts one node's pods by name (then namespace), as sort_vec with cmp_pod_name does, but
 * reads each name once: a Deployment's view sorts 150,000 pods this way every cycle, where
 * strcmp through each pod's name pointer, five times a pod, costs a tenth of the cycle. */
static void sort_node_pods(pod **pods, size_t n) {
  if (n < 2)
    return;
  keyed_pod small[64], *k = n <= 64 ? small : xmalloc(n * sizeof *k);
  const char *first = pods[0]->name;
  size_t common = strlen(first);
  for (size_t i = 1; i < n && common; i++) {
    const char *name = pods[i]->name;
    size_t c = 0;
    while (c < common && name[c] == first[c])
      c++;
    common = c;
  }
  bool sorted = true;
  for (size_t i = 0; i < n; i++) {
    const unsigned char *name = (const unsigned char *)pods[i]->name + common;
    uint64_t key = 0;
    size_t b = 0;
    for (; b < 8 && name[b]; b++)
      key = key << 8 | name[b];
    if (b) /* the name's bytes to the top, zeros after its end */
      key <<= 8 * (8 - b);
    k[i] = (keyed_pod){key, pods[i]};
    if (i && sorted && cmp_keyed_pod(&k[i - 1], &k[i]) > 0)
      sorted = false;
  }
  if (!sorted) {
    if (n <= 64) {
      for (size_t i = 1; i < n; i++) { /* insertion sort: most lists hold tens of pods */
        keyed_pod x = k[i];
        size_t at = i;
        for (; at > 0 && cmp_keyed_pod(&k[at - 1], &x) > 0; at--)
          k[at] = k[at - 1];
        k[at] = x;
      }
    } else {
      qsort(k, n, sizeof *k, cmp_keyed_pod_q);
    }
    for (size_t i = 0; i < n; i++)
      pods[i] = k[i].p;
  }
  if (k != small)
    free(k);
}

/* Sorts the pod lists of nodes [lo, hi) by name, asking for the next nodes' names ahead. */
static void sort_part(void *ctx, size_t lo, size_t hi) {
  link_job *j = ctx;
  for (size_t i = lo; i < hi; i++) {
    if (i + 2 < hi)
      sort_prefetch(j, i + 2, 0);
    if (i + 1 < hi)
      sort_prefetch(j, i + 1, 1);
    sort_node_pods(j->m->nodes.items[i]->pods, j->m->nodes.items[i]->npods);
  }
}

/* Links every pod to its node and gives each node its pods sorted by name. Both parts of each
 * step write only their own pods' fields, their own counts and their own slots of the lists,
 * so the result is the one a single pass gives. */
static void link_pods(model *m, const ptr_map *nodes) {
  size_t np = m->pods.n, nn = m->nodes.n ? m->nodes.n : 1;
  link_job j = {m,
                nodes,
                xmalloc((np ? np : 1) * sizeof *j.node_of),
                {xcalloc(nn, sizeof(uint32_t)), xcalloc(nn, sizeof(uint32_t))},
                np / 2};
  const size_t min_pods = 20000; /* below this a thread costs more than it saves */
  par_halves(np, j.split, min_pods, link_part, &j);
  for (size_t i = 0; i < m->nodes.n; i++) {
    node *n = m->nodes.items[i];
    n->npods = j.count[0][i] + j.count[1][i];
    n->pods = ARENA_NEWN(m->mem, pod *, n->npods ? n->npods : 1);
    /* the first part fills each list from the front, the second after the first's pods */
    j.count[1][i] = j.count[0][i];
    j.count[0][i] = 0;
  }
  par_halves(np, j.split, min_pods, fill_part, &j);
  par_halves(m->nodes.n, model_nodes_half_pods(m->nodes.items, m->nodes.n), min_pods / 32,
             sort_part, &j);
  free(j.node_of);
  free(j.count[0]);
  free(j.count[1]);
}

size_t model_nodes_half_pods(node *const *nodes, size_t n) {
  size_t total = 0, half = 0, split = 0;
  for (size_t i = 0; i < n; i++)
    total += nodes[i]->npods;
  while (split < n && 2 * half < total)
    half += nodes[split++]->npods;
  return split;
}

int model_finish(model *m, dserr *err) {
  /* everything is decoded: what is shared stays shared, the table is not needed any more */
  if (m->shared) {
    free(m->shared->slots);
    m->shared->slots = NULL;
    m->shared->cap = m->shared->n = 0;
  }
  sort_vec(m->nodes.items, m->nodes.n, sizeof(node *), cmp_node);
  sort_vec(m->namespaces.items, m->namespaces.n, sizeof(namespace_obj *), cmp_ns);
  sort_vec(m->pvcs.items, m->pvcs.n, sizeof(pvc_obj *), cmp_pvc);
  sort_vec(m->vmis.items, m->vmis.n, sizeof(vmi_obj *), cmp_vmi);
  vmi_map_free(m);
  if (m->vmis.n) {
    m->vmi_map = malloc(sizeof *m->vmi_map);
    if (!m->vmi_map)
      abort();
    ptr_map_init(&m->vmi_map->map, m->vmis.n, true);
    for (size_t i = 0; i < m->vmis.n; i++) {
      vmi_obj *v = m->vmis.items[i];
      v->index = (uint32_t)i;
      ptr_map_put(&m->vmi_map->map, v->ns, v->name, v);
    }
  }
  sort_vec(m->priority_classes.items, m->priority_classes.n, sizeof(priority_class_obj *), cmp_pc);
  for (size_t i = 1; i < m->nodes.n; i++)
    if (strcmp(m->nodes.items[i]->name, m->nodes.items[i - 1]->name) == 0)
      return dserr_set(err, "node \"%s\" appears more than once", m->nodes.items[i]->name);
  /* node names and namespaces are interned (pointer identity), pod names are compared */
  ptr_map nodes;
  ptr_map_init(&nodes, m->nodes.n, false);
  for (size_t i = 0; i < m->nodes.n; i++) {
    node *n = m->nodes.items[i];
    n->npods = 0;
    n->actual = NULL; /* model_link_metrics sets it again */
    n->index = (uint32_t)i;
    ptr_map_put(&nodes, n->name, NULL, n);
  }
  int rc = 0;
  if (!m->keys_unique && (rc = check_pods_unique(m, err)) < 0)
    goto out;
  link_pods(m, &nodes);
out:
  arena_big_free(nodes.slots);
  return rc;
}

void model_link_metrics(model *m) {
  /* model_finish left every link NULL: with no metrics of a kind there is nothing to look up
   * (a Deployment cycle on requests alone would otherwise hash 150,000 pods for nothing) */
  if (m->node_metrics.n) {
    ptr_map nodes;
    ptr_map_init(&nodes, m->nodes.n, false);
    for (size_t i = 0; i < m->nodes.n; i++) {
      m->nodes.items[i]->actual = NULL;
      ptr_map_put(&nodes, m->nodes.items[i]->name, NULL, m->nodes.items[i]);
    }
    /* namespaces and node names are interned in the model's table: pointer identity */
    for (size_t i = 0; i < m->node_metrics.n; i++) {
      node_metrics_obj *nm = m->node_metrics.items[i];
      node *n = ptr_map_get(&nodes, nm->name, NULL);
      if (n)
        n->actual = &nm->usage;
    }
    arena_big_free(nodes.slots);
  }
  if (m->pod_metrics.n) {
    ptr_map pods;
    ptr_map_init(&pods, m->pods.n, true);
    for (size_t i = 0; i < m->pods.n; i++) {
      m->pods.items[i]->metrics = NULL;
      ptr_map_put(&pods, m->pods.items[i]->ns, m->pods.items[i]->name, m->pods.items[i]);
    }
    for (size_t i = 0; i < m->pod_metrics.n; i++) {
      pod_metrics_obj *pm = m->pod_metrics.items[i];
      pod *p = ptr_map_get(&pods, pm->ns, pm->name);
      if (p)
        p->metrics = pm;
    }
    arena_big_free(pods.slots);
  }
}

const prom_answer *model_find_prom_answer(const model *m, const char *query) {
  for (size_t i = m->prom_answers.n; i-- > 0;)
    if (strcmp(m->prom_answers.items[i]->query, query) == 0)
      return m->prom_answers.items[i];
  return NULL;
}

const prom_sample *prom_answer_sample(const prom_answer *a, const char *instance) {
  size_t lo = 0, hi = a->nsamples;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(a->samples[mid].instance, instance);
    if (c == 0)
      return &a->samples[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

bool prom_answer_value(const prom_answer *a, const char *instance, double *value) {
  const prom_sample *s = prom_answer_sample(a, instance);
  if (s)
    *value = s->value;
  return s != NULL;
}

void model_prom_join_times(model *m, const char *query) {
  strbuf tq = {0};
  sb_printf(&tq, "timestamp(%s)", query);
  const prom_answer *values = model_find_prom_answer(m, query);
  const prom_answer *times = model_find_prom_answer(m, sb_str(&tq));
  sb_free(&tq);
  if (!values || !times || times->error)
    return;
  for (size_t i = 0; i < values->nsamples; i++) {
    const prom_sample *t = prom_answer_sample(times, values->samples[i].instance);
    if (t)
      values->samples[i].ts = t->value;
  }
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

long model_vmi_position(const model *m, const char *ns, const char *name) {
  if (m->vmi_map) {
    const vmi_obj *v = ptr_map_get(&m->vmi_map->map, ns, name);
    if (v)
      return (long)v->index;
    /* a namespace that is not the model's interned copy is not in the map: the search below
     * decides (a launcher without its VMI, rare, pays for it) */
  }
  size_t lo = 0, hi = m->vmis.n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const vmi_obj *v = m->vmis.items[mid];
    int c = strcmp(v->ns, ns);
    if (!c)
      c = strcmp(v->name, name);
    if (c == 0)
      return (long)mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

vmi_obj *model_find_vmi(const model *m, const char *ns, const char *name) {
  long k = model_vmi_position(m, ns, name);
  return k < 0 ? NULL : m->vmis.items[k];
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
