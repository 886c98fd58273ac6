/* removeduplicates.c - RemoveDuplicates (Balance), as upstream's
 * pkg/framework/plugins/removeduplicates/removeduplicates.go.
 *
 * Spreads the copies of one workload evenly: pods with the same owners and the same set of
 * container images are duplicates when they share a node. For every owner key (namespace,
 * owner kind, owner name, sorted images) the plugin counts its pods cluster-wide, works out
 * on how many nodes the duplicates could land at all (taints and node selection only; a
 * cordoned node still counts), and evicts from each node the duplicates above the per-node
 * ceiling ceil(occurrences / feasible nodes).
 *
 * Only evictable pods are looked at: the namespace filter, then the evictor's Filter and
 * PreEvictionFilter (so nodeFit already applies while counting).
 *
 * Ordering choices where upstream's is random (it iterates Go maps): owner keys are handled
 * in the order they were first seen (nodes by name, each node's pods by name, a pod's owner
 * references as written); a key's per-node duplicate lists are in node-name order, and each
 * list keeps pod-name order. Pods without any regular container have no signature (upstream
 * would crash on them); they are skipped. */
#include "../framework/podutil.h"
#include "../util/hash.h"
#include "../util/xalloc.h"
#include "common.h"
#include "registry.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  ns_filter namespaces;
  str_list exclude_owner_kinds;
} rd_args;

static const args_field rd_fields[] = {
    {"namespaces", AF_NAMESPACES, offsetof(rd_args, namespaces)},
    {"excludeOwnerKinds", AF_STRINGS, offsetof(rd_args, exclude_owner_kinds)},
    {NULL}};

static int rd_validate(const void *vargs, dserr *err) {
  const rd_args *a = vargs;
  errlist e = {0};
  validate_namespaces(&a->namespaces, &e);
  return errlist_finish(&e, err);
}

/* The arrays and tables below grow by doubling while the nodes are scanned (tens of thousands
 * of owner keys at 150,000 pods): each one on its own (arena_big_calloc, arena_big_grow), so
 * that each old generation is freed at once, where the cycle's arena would keep every one until
 * the cycle ends; in Deployment mode the next cycle's tables reuse their memory (arena.h).
 * rd_run frees them. */

/* ---------- a string -> index map ---------- */

typedef struct {
  const char **keys;
  size_t *vals;
  size_t cap, n; /* cap is a power of two, kept at most half full */
} rd_map;

static size_t rd_slot(const rd_map *m, const char *key) {
  size_t i = (size_t)fnv1a_str(FNV1A_OFFSET, key) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0)
    i = (i + 1) & (m->cap - 1);
  return i;
}

/* key must stay valid as long as the map (it is not copied) */
static void rd_map_put(rd_map *m, const char *key, size_t val) {
  if (2 * (m->n + 1) > m->cap) {
    rd_map old = *m;
    m->cap = old.cap ? old.cap * 2 : 16;
    m->keys = arena_big_calloc(m->cap * sizeof *m->keys);
    m->vals = arena_big_calloc(m->cap * sizeof *m->vals);
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
      if (old.keys[i])
        rd_map_put(m, old.keys[i], old.vals[i]);
    arena_big_free(old.keys);
    arena_big_free(old.vals);
  }
  size_t i = rd_slot(m, key);
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->n++;
  }
  m->vals[i] = val;
}

/* ---------- a map from tuples of pointers to indexes (its keys in the plugin's scratch arena) ----------
 * Keys are arrays of pointers compared as bytes: interned strings (namespaces, owner kinds and
 * names, model.h) are equal exactly when their pointers are, and the other strings a key holds
 * are first made canonical through an rd_map of their text (rd_canon). */

typedef struct {
  const void *const *key;
  size_t n;
  uint64_t hash;
  size_t val;
} rd_tslot;

typedef struct {
  rd_tslot *slots;
  size_t cap, n;
} rd_tmap;

static uint64_t rd_thash(const void *const *key, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  for (size_t i = 0; i < n; i++) {
    h ^= (uint64_t)(uintptr_t)key[i];
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return h;
}

static rd_tslot *rd_tfind(const rd_tmap *m, const void *const *key, size_t n, uint64_t h) {
  size_t i = (size_t)h & (m->cap - 1);
  for (; m->slots[i].key; i = (i + 1) & (m->cap - 1))
    if (m->slots[i].hash == h && m->slots[i].n == n &&
        memcmp(m->slots[i].key, key, n * sizeof *key) == 0)
      break;
  return &m->slots[i];
}

/* The index stored for key, or SIZE_MAX. */
static size_t rd_tget(const rd_tmap *m, const void *const *key, size_t n) {
  if (!m->cap)
    return SIZE_MAX;
  const rd_tslot *s = rd_tfind(m, key, n, rd_thash(key, n));
  return s->key ? s->val : SIZE_MAX;
}

/* Stores a copy of key with val (key must not be present). */
static void rd_tput(arena *a, rd_tmap *m, const void *const *key, size_t n, size_t val) {
  if (2 * (m->n + 1) > m->cap) {
    rd_tmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->slots = arena_big_calloc(m->cap * sizeof *m->slots);
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
      if (old.slots[i].key) {
        rd_tslot *s = rd_tfind(m, old.slots[i].key, old.slots[i].n, old.slots[i].hash);
        *s = old.slots[i];
        m->n++;
      }
    arena_big_free(old.slots);
  }
  uint64_t h = rd_thash(key, n);
  rd_tslot *s = rd_tfind(m, key, n, h);
  const void **copy = ARENA_NEWN(a, const void *, n ? n : 1);
  memcpy(copy, key, n * sizeof *key);
  *s = (rd_tslot){copy, n, h, val};
  m->n++;
}

/* The per-pod memo: keys of five pointers kept in the slot itself, so that a lookup (one per
 * pod) reads one slot and calls nothing. */
typedef struct {
  const void *key[5];
  size_t val; /* SIZE_MAX: empty */
} rd_mslot;

typedef struct {
  rd_mslot *slots;
  size_t cap, n;
} rd_memo;

static rd_mslot *rd_mfind(const rd_memo *m, const void *const key[5]) {
  size_t i = (size_t)rd_thash(key, 5) & (m->cap - 1);
  for (; m->slots[i].val != SIZE_MAX; i = (i + 1) & (m->cap - 1)) {
    const void *const *k = m->slots[i].key;
    if (k[0] == key[0] && k[1] == key[1] && k[2] == key[2] && k[3] == key[3] && k[4] == key[4])
      break;
  }
  return &m->slots[i];
}

/* The value stored for key, or SIZE_MAX. */
static size_t rd_mget(const rd_memo *m, const void *const key[5]) {
  return m->cap ? rd_mfind(m, key)->val : SIZE_MAX;
}

static void rd_memo_key(const pod *p, const void *key[5]) {
  key[0] = p->ns;
  key[1] = p->owners;
  key[2] = (const void *)(uintptr_t)p->nowners;
  key[3] = p->images;
  key[4] = (const void *)(uintptr_t)p->nimages;
}

/* Asks for the slot rd_mget will read for p (the memo is too large to stay in cache). */
static void rd_memo_prefetch(const rd_memo *m, const pod *p) {
  if (!m->cap)
    return;
  const void *key[5];
  rd_memo_key(p, key);
  __builtin_prefetch(&m->slots[(size_t)rd_thash(key, 5) & (m->cap - 1)]);
}

/* Stores val for key (key must not be present). */
static void rd_mput(rd_memo *m, const void *const key[5], size_t val) {
  if (2 * (m->n + 1) > m->cap) {
    rd_memo old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->slots = arena_big_calloc(m->cap * sizeof *m->slots);
    for (size_t i = 0; i < m->cap; i++)
      m->slots[i].val = SIZE_MAX;
    for (size_t i = 0; i < old.cap; i++)
      if (old.slots[i].val != SIZE_MAX)
        *rd_mfind(m, old.slots[i].key) = old.slots[i];
    arena_big_free(old.slots);
  }
  rd_mslot *s = rd_mfind(m, key);
  memcpy(s->key, key, sizeof s->key);
  s->val = val;
  m->n++;
}

/* ---------- owner keys ---------- */

typedef struct {
  const node *node;
  pod_vec pods; /* duplicates found on that node (the first copy is not in the list) */
} rd_node_dups;

typedef struct {
  const char *ns, *kind, *name, *images_hash;
  int64_t occurrences; /* every pod of the key, first copies included, all nodes */
  rd_node_dups *dups;
  size_t ndups, dups_cap;
} rd_owner;

typedef struct {
  arena *a;
  rd_tmap index; /* (namespace, kind, name, images hash) -> position in items */
  rd_owner *items;
  size_t n, cap;
} rd_owners;

/* Position of the key in o->items, added on first sight (positions never change, while
 * pointers into items do when it grows). */
static size_t rd_owner_get(rd_owners *o, const char *ns, const owner_ref *ref,
                           const char *images_hash) {
  const void *key[4] = {ns, ref->kind, ref->name, images_hash};
  size_t idx = rd_tget(&o->index, key, 4);
  if (idx != SIZE_MAX)
    return idx;
  o->items = arena_big_grow(o->items, o->n, &o->cap, sizeof *o->items);
  o->items[o->n] = (rd_owner){ns, ref->kind, ref->name, images_hash, 0, NULL, 0, 0};
  rd_tput(o->a, &o->index, key, 4, o->n);
  return o->n++;
}

/* klog's %+v rendering of upstream's owner struct, for the logs (sb freed by the caller) */
static const char *rd_owner_display(strbuf *sb, const rd_owner *w) {
  sb_printf(sb, "{namespace:%s kind:%s name:%s imagesHash:%s}", w->ns, w->kind, w->name,
            w->images_hash);
  return sb_str(sb);
}

/* Appends p to the owner's duplicate list for node n (nodes arrive in order, so the current
 * node, if it has a list yet, is the last one). */
static void rd_owner_add_dup(arena *a, rd_owner *w, const node *n, pod *p) {
  if (!w->ndups || w->dups[w->ndups - 1].node != n) {
    if (w->ndups == w->dups_cap) {
      size_t cap = w->dups_cap ? w->dups_cap * 2 : 4;
      rd_node_dups *d = ARENA_NEWN(a, rd_node_dups, cap);
      if (w->ndups)
        memcpy(d, w->dups, w->ndups * sizeof *d);
      w->dups = d;
      w->dups_cap = cap;
    }
    w->dups[w->ndups++] = (rd_node_dups){n, {0}};
  }
  pod_vec_push(a, &w->dups[w->ndups - 1].pods, p);
}

/* ---------- per-pod signature ---------- */

static bool rd_excluded_owner(const rd_args *a, const pod *p) {
  if (!a->exclude_owner_kinds.n) /* the common case: the owners array is not read */
    return false;
  for (size_t i = 0; i < p->nowners; i++)
    if (str_list_contains(&a->exclude_owner_kinds, p->owners[i].kind))
      return true;
  return false;
}

/* The canonical copy of a string of this run (equal texts, one pointer). */
static const char *rd_canon(arena *a, rd_map *texts, const char *s) {
  if (texts->cap) {
    const char *seen = texts->keys[rd_slot(texts, s)];
    if (seen)
      return seen;
  }
  const char *copy = arena_strdup(a, s);
  rd_map_put(texts, copy, 0);
  return copy;
}

/* What a pod's images give its keys, worked out once per images array (the pods of one
 * ReplicaSet share theirs, model_share): the images sorted ascending (byte order, as Go sorts
 * strings) and made canonical, and their '#'-joined text, canonical too. */
typedef struct {
  const char **sorted;
  size_t n;
  const char *hash;
} rd_images;

/* What a pod's (namespace, owners array, images array) give it, worked out once per such
 * triple (the pods of one ReplicaSet share their arrays, model_share): its signature's number
 * and its owner keys, positions in rd_owners (owner_keys[first .. first + n)). */
typedef struct {
  size_t sig, first, n;
} rd_pod_keys;

/* Duplicates are pods whose sorted "namespace/kind/name/image" strings, one for every owner
 * and image, are equal (upstream's signature). None of the four parts holds a '/' except the
 * image, which comes last, so two such lists are equal exactly when the multisets of
 * (namespace, kind, name, image) are: a signature is that multiset, as canonical pointers
 * sorted by value, and numbered. */
typedef struct {
  arena *a;
  rd_map texts;     /* canonical strings */
  rd_tmap images;   /* (images array, count) -> position in img */
  rd_images *img;
  size_t nimg, capimg;
  rd_memo memo;     /* (namespace, owners array, count, images array, count) -> position in keys */
  rd_pod_keys *keys;
  size_t nkeys, capkeys;
  size_t *owner_keys;
  size_t nowner_keys, capowner_keys;
  rd_tmap sigs;     /* the signature's sorted tuple -> its number */
  size_t nsigs;
  size_t *seen_on;  /* per signature: 1 + index of the node it was last seen on, 0: never */
  size_t seen_cap;
  const void **key; /* rd_signature's tuple */
  size_t keycap;
} rd_sigs;

static int rd_cmp_str(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static const rd_images *rd_images_of(rd_sigs *g, const pod *p) {
  const void *key[2] = {p->images, (const void *)(uintptr_t)p->nimages};
  size_t i = rd_tget(&g->images, key, 2);
  if (i != SIZE_MAX)
    return &g->img[i];
  const char **sorted = ARENA_NEWN(g->a, const char *, p->nimages ? p->nimages : 1);
  for (size_t k = 0; k < p->nimages; k++)
    sorted[k] = rd_canon(g->a, &g->texts, p->images[k]);
  qsort(sorted, p->nimages, sizeof *sorted, rd_cmp_str);
  strbuf sb = {0};
  for (size_t k = 0; k < p->nimages; k++)
    sb_printf(&sb, "%s%s", k ? "#" : "", sorted[k]);
  const char *hash = rd_canon(g->a, &g->texts, sb_str(&sb));
  sb_free(&sb);
  g->img = arena_big_grow(g->img, g->nimg, &g->capimg, sizeof *g->img);
  g->img[g->nimg] = (rd_images){sorted, p->nimages, hash};
  rd_tput(g->a, &g->images, key, 2, g->nimg);
  return &g->img[g->nimg++];
}

static int rd_cmp_tuple(const void *x, const void *y) {
  const uintptr_t *a = x, *b = y;
  for (int i = 0; i < 3; i++)
    if (a[i] != b[i])
      return a[i] < b[i] ? -1 : 1;
  return 0;
}

/* The number of the signature of a pod with these owners and images. */
static size_t rd_signature(rd_sigs *g, const pod *p, const rd_images *im) {
  size_t n = p->nowners * im->n;
  /* the tuple is built in a buffer of the run's (rd_tput copies it when it is new) */
  while (g->keycap < 1 + 3 * n)
    g->key = arena_big_grow(g->key, g->keycap, &g->keycap, sizeof *g->key);
  const void **key = g->key;
  key[0] = p->ns;
  uintptr_t *t = (uintptr_t *)(key + 1);
  size_t k = 0;
  for (size_t o = 0; o < p->nowners; o++)
    for (size_t i = 0; i < im->n; i++) {
      t[3 * k] = (uintptr_t)p->owners[o].kind;
      t[3 * k + 1] = (uintptr_t)p->owners[o].name;
      t[3 * k + 2] = (uintptr_t)im->sorted[i];
      k++;
    }
  qsort(t, n, 3 * sizeof *t, rd_cmp_tuple);
  size_t id = rd_tget(&g->sigs, key, 1 + 3 * n);
  if (id == SIZE_MAX) {
    id = g->nsigs++;
    rd_tput(g->a, &g->sigs, key, 1 + 3 * n, id);
  }
  return id;
}

/* The pod's signature and owner keys: one lookup for a pod whose arrays were seen before
 * (owner keys are added in the order their first pod is met, as without the memo). */
static const rd_pod_keys *rd_pod_keys_of(rd_sigs *g, rd_owners *owners, const pod *p) {
  const void *memo[5];
  rd_memo_key(p, memo);
  size_t i = rd_mget(&g->memo, memo);
  if (i != SIZE_MAX)
    return &g->keys[i];
  const rd_images *im = rd_images_of(g, p);
  size_t first = g->nowner_keys;
  for (size_t o = 0; o < p->nowners; o++) {
    size_t idx = rd_owner_get(owners, p->ns, &p->owners[o], im->hash);
    g->owner_keys = arena_big_grow(g->owner_keys, g->nowner_keys, &g->capowner_keys,
                            sizeof *g->owner_keys);
    g->owner_keys[g->nowner_keys++] = idx;
  }
  g->keys = arena_big_grow(g->keys, g->nkeys, &g->capkeys, sizeof *g->keys);
  g->keys[g->nkeys] = (rd_pod_keys){rd_signature(g, p, im), first, p->nowners};
  rd_mput(&g->memo, memo, g->nkeys);
  return &g->keys[g->nkeys++];
}

/* true when the signature was already seen on node `index` (and marks it seen there) */
static bool rd_seen_on(rd_sigs *g, size_t sig, size_t index) {
  while (sig >= g->seen_cap) /* new entries come zeroed: never seen */
    g->seen_on = arena_big_grow(g->seen_on, g->seen_cap, &g->seen_cap, sizeof *g->seen_on);
  if (g->seen_on[sig] == index + 1)
    return true;
  g->seen_on[sig] = index + 1;
  return false;
}

static bool rd_pod_filter(plugin_handle *h, const rd_args *a, const pod *p) {
  return pod_passes_ns_and_labels(&a->namespaces, NULL, p) && fw_filter(h, p) &&
         fw_pre_eviction_filter(h, p);
}

/* One node: count owner keys, find the pods whose signature was already seen on it. */
static void rd_scan_node(plugin_handle *h, const rd_args *a, rd_owners *owners, rd_sigs *sigs,
                         node *nd, size_t index) {
  char ref[512];
  LOGV(2, &h->log, "Processing node", LSTR("node", nd->name));
  /* nothing is evicted while nodes are scanned, so the node's own list is read in place
   * (what fw_node_pods would copy: the pods not gone and not terminal) */
  for (size_t i = 0; i < nd->npods; i++) {
    pod *p = nd->pods[i];
    if (i + POD_AHEAD < nd->npods)
      pod_prefetch(nd->pods[i + POD_AHEAD]);
    if (i + POD_AHEAD / 2 < nd->npods) {
      const pod *q = nd->pods[i + POD_AHEAD / 2];
      rd_memo_prefetch(&sigs->memo, q);
      __builtin_prefetch(q->requests.items); /* nodeFit's first read */
    }
    if (fw_pod_gone(p) || pod_is_terminal(p) || !rd_pod_filter(h, a, p))
      continue;
    if (p->nowners == 0 || rd_excluded_owner(a, p) || p->nimages == 0)
      continue;
    const rd_pod_keys *pk = rd_pod_keys_of(sigs, owners, p);
    const size_t *kp = sigs->owner_keys + pk->first;
    for (size_t o = 0; o < pk->n; o++)
      owners->items[kp[o]].occurrences++;
    if (!rd_seen_on(sigs, pk->sig, index))
      continue;
    LOGV(3, &h->log, "Duplicate found", LSTR("pod", pod_ref(p, ref, sizeof ref)));
    for (size_t o = 0; o < pk->n; o++)
      rd_owner_add_dup(h->scratch, &owners->items[kp[o]], nd, p);
  }
}

/* ---------- where the duplicates could land ---------- */

static bool rd_node_accepts(const pod *p, const node *n) {
  return pod_tolerates_node_scheduling_taints(p, n) && pod_matches_node_selector_and_affinity(p, n);
}

/* Union, over the key's duplicates, of the nodes each could land on, counting a pod's nodes
 * only when there are at least two of them. Cordoned nodes are not excluded (upstream). */
static size_t rd_feasible_nodes(plugin_handle *h, const rd_owner *w) {
  size_t nn = h->nnodes, total = 0;
  bool *in_union = ARENA_NEWN(h->scratch, bool, nn ? nn : 1);
  bool *match = ARENA_NEWN(h->scratch, bool, nn ? nn : 1);
  for (size_t d = 0; d < w->ndups && total < nn; d++)
    for (size_t k = 0; k < w->dups[d].pods.n && total < nn; k++) {
      const pod *p = w->dups[d].pods.items[k];
      size_t cnt = 0;
      for (size_t i = 0; i < nn; i++) {
        match[i] = rd_node_accepts(p, h->nodes[i]);
        cnt += match[i];
      }
      if (cnt < 2)
        continue;
      for (size_t i = 0; i < nn; i++)
        if (match[i] && !in_union[i]) {
          in_union[i] = true;
          total++;
        }
    }
  return total;
}

typedef enum { RD_NEXT, RD_STOP } rd_result;

/* Evicts the duplicates above upperAvg on each node of one owner key. */
static rd_result rd_balance_owner(plugin_handle *h, const rd_owner *w) {
  size_t feasible = rd_feasible_nodes(h, w);
  strbuf disp = {0};
  const char *display = LOG_ON(1) ? rd_owner_display(&disp, w) : "";
  rd_result res = RD_NEXT;
  LOGV(2, &h->log, "Adjusting feasible nodes", LSTR("owner", display), LUINT("from", h->nnodes),
       LUINT("to", feasible));
  if (feasible < 2) {
    LOGV(1, &h->log, "Less than two feasible nodes for duplicates to land, skipping eviction",
         LSTR("owner", display));
    goto done;
  }
  int64_t upper_avg = (w->occurrences + (int64_t)feasible - 1) / (int64_t)feasible;
  for (size_t d = 0; d < w->ndups && res == RD_NEXT; d++) {
    const rd_node_dups *nd = &w->dups[d];
    LOGV(2, &h->log, "Average occurrence per node", LSTR("node", nd->node->name),
         LSTR("ownerKey", display), LINT("avg", upper_avg));
    /* the list leaves out the node's first copy: keep upperAvg pods in all */
    if ((int64_t)nd->pods.n + 1 <= upper_avg)
      continue;
    for (size_t k = (size_t)(upper_avg - 1); k < nd->pods.n; k++) {
      pod *p = nd->pods.items[k];
      evict_status st = fw_evict(h, p, "");
      if (st == EVICT_OK)
        continue;
      if (st == EVICT_LIMIT_NODE)
        break;
      if (st == EVICT_LIMIT_TOTAL) {
        res = RD_STOP;
        break;
      }
      if (st != EVICT_VETOED)
        log_eviction_failed(h, p);
    }
  }
done:
  sb_free(&disp);
  return res;
}

static int rd_run(plugin_handle *h, const void *vargs, dserr *err) {
  (void)err;
  const rd_args *a = vargs;
  rd_owners owners = {.a = h->scratch};
  rd_sigs sigs = {.a = h->scratch};
  for (size_t i = 0; i < h->nnodes; i++) {
    if (i + 1 < h->nnodes) /* the next node's first pods, which its loop does not ask for */
      for (size_t k = 0; k < POD_AHEAD && k < h->nodes[i + 1]->npods; k++)
        pod_prefetch(h->nodes[i + 1]->pods[k]);
    rd_scan_node(h, a, &owners, &sigs, h->nodes[i], i);
  }
  for (size_t i = 0; i < owners.n; i++)
    if (owners.items[i].ndups && rd_balance_owner(h, &owners.items[i]) == RD_STOP)
      break;
  arena_big_free(owners.items);
  arena_big_free(owners.index.slots);
  arena_big_free(sigs.texts.keys);
  arena_big_free(sigs.texts.vals);
  arena_big_free(sigs.images.slots);
  arena_big_free(sigs.img);
  arena_big_free(sigs.memo.slots);
  arena_big_free(sigs.keys);
  arena_big_free(sigs.owner_keys);
  arena_big_free(sigs.sigs.slots);
  arena_big_free(sigs.seen_on);
  arena_big_free(sigs.key);
  return 0;
}

const plugin_desc plugin_remove_duplicates = {
    .name = "RemoveDuplicates",
    .points = PLUGIN_BALANCE,
    .args_size = sizeof(rd_args),
    .fields = rd_fields,
    .validate = rd_validate,
    .run = rd_run,
};
