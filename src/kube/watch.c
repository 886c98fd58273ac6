/* watch.c - the watch cache of Deployment mode; see watch.h.
 *
 * client-go's reflector (k8s.io/client-go/tools/cache/reflector.go) is the model: list, then
 * watch from the list's resourceVersion with allowWatchBookmarks and a timeoutSeconds between
 * 5 and 10 minutes, open the watch again from the last resourceVersion seen when it ends, list
 * again on 410 Gone. */
#include "watch.h"

#include "../decode/decode.h"
#include "../obs/log.h"
#include "../obs/metrics.h"
#include "../doc/doc.h"
#include "../util/hash.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "../util/xalloc.h"
#include "cluster.h"
#include "pager.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The kinds watched are the cycle's kinds of decode.h's registry (decode_kinds, by id). */

/* A model vector seen without its element type (every MODEL_VEC has this layout, as
 * model.c's own any_vec relies on). */
typedef struct {
  size_t n, cap;
  void **items;
} vec_of;

static vec_of *vec_in(model *m, int k) {
  return (vec_of *)((char *)m + decode_kinds[k].vec);
}

static const char *field(const void *obj, size_t at) {
  return at == KIND_NO_SLOT ? "" : *(const char *const *)((const char *)obj + at);
}

#define STALL_DEFAULT 150L
#define BACKOFF_MAX 30.0
#define TOMBSTONES 4096
#define WATCH_EVENT_MAX (64u << 20) /* one event's bytes, at most (a pod is a few KB) */

/* One object held: its key, the object (pod *, node *, ...; NULL for a KubeVirt CR that does
 * not decode, whose error text is then the arena's content) and the arena that holds it. */
typedef struct {
  const char *ns;   /* interned; "" for cluster-scoped kinds */
  const char *name; /* inside the object's arena */
  void *obj;
  arena *mem;
  uint64_t rv; /* metadata.resourceVersion as a number; 0 when it is not one */
} wentry;

/* A deleted object, remembered so that an older event for it is not taken for a new one. */
typedef struct {
  char *key;     /* "namespace/name" */
  uint64_t hash; /* of key: the scan compares this first */
  uint64_t rv;
} tombstone;

typedef enum { MSG_EVENT, MSG_RELIST, MSG_BROKEN, MSG_CONNECTED } msg_kind;

typedef struct wmsg {
  struct wmsg *next;
  int k;
  msg_kind kind;
  char type;          /* 'A' ADDED, 'M' MODIFIED, 'D' DELETED */
  arena *a;           /* the event's tree */
  doc_node *obj;      /* the event's object */
  char *text;         /* MSG_RELIST, MSG_BROKEN: why (heap) */
  const char *reason; /* MSG_RELIST: "expired" | "broken" */
} wmsg;

typedef struct watch_cache watch_cache;

typedef struct {
  watch_cache *w;
  int k;
  bool active; /* watched at all (KubeVirt's kinds only when served) */
  /* the objects, sorted by key; cycle thread only */
  wentry *items;
  size_t n, cap;
  tombstone tombs[TOMBSTONES];
  size_t ntombs, tomb_next;
  bool listed;       /* a list is current (none yet, or a 410 since: false) */
  uint64_t floor_rv; /* the current list's resourceVersion: events at or below it are in it */
  bool ever_listed;
  const char *relist_reason;
  bool broken;   /* the last watch request failed */
  char why[512]; /* why not synced */
  int list_failures;
  double list_retry_at;
  /* shared with the watch thread, under w->mu */
  char *watch_from; /* resourceVersion to watch from; NULL: wait for a list */
  bool restart;     /* watch_from is new: drop the thread's own position */
  /* the watch thread's */
  pthread_t thread;
  bool started;
  kube_client *client;
} wres;

struct watch_cache {
  kube_client *client;
  watch_options o;
  model *store;            /* decoding only: strings, model_share's table; vectors empty */
  arena *shared_mem;       /* model_share's copies */
  arena *measure;          /* an object's first decoding, to size its arena */
  const char **event_skip; /* decode_unread_paths under "object." */
  wres res[KIND_CYCLE_COUNT];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  wmsg *head, *tail;
  int quit;            /* set once, at free; read with quitting() where w->mu is not held */
  size_t object_bytes; /* every entry's entry_bytes */
  /* compaction: shared_content when every kind was last listed (0: not yet) */
  size_t shared_base;
  bool compacting;       /* every kind is being listed again into a fresh table */
  size_t compact_before; /* shared_bytes then */
  double compact_t0;
};

/* resourceVersion as a number, 0 when it is not one (it is opaque to clients; etcd's are) */
static uint64_t rv_number(const char *s) {
  if (!s || !*s || strlen(s) > 19)
    return 0;
  uint64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return 0;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  return v;
}

/* The API server's order of keys: "namespace/name" compared byte by byte (etcd's keys). */
static int key_cmp(const char *ans, const char *aname, const char *bns, const char *bname) {
  if (ans != bns && strcmp(ans, bns) != 0) {
    size_t i = 0;
    while (ans[i] && ans[i] == bns[i])
      i++;
    unsigned char ca = ans[i] ? (unsigned char)ans[i] : '/';
    unsigned char cb = bns[i] ? (unsigned char)bns[i] : '/';
    if (ca != cb)
      return ca < cb ? -1 : 1;
    return strcmp(ans, bns);
  }
  return strcmp(aname, bname);
}

static int entry_cmp(const void *a, const void *b) {
  const wentry *x = a, *y = b;
  return key_cmp(x->ns, x->name, y->ns, y->name);
}

/* Position of (ns, name) in items[0..n): *found tells whether it is there. */
static size_t find(const wentry *items, size_t n, const char *ns, const char *name, bool *found) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = key_cmp(items[mid].ns, items[mid].name, ns, name);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = false;
  return lo;
}

/* Bytes an entry's object takes: its arena's blocks, headers and the heap's included. */
static size_t entry_bytes(const wentry *e) {
  return e->mem ? arena_footprint(e->mem) + ARENA_EXACT_OVERHEAD : 0;
}

static void entry_free(watch_cache *w, wentry *e) {
  w->object_bytes -= entry_bytes(e);
  arena_free(e->mem);
  e->mem = NULL;
  e->obj = NULL;
}

/* ---------- decoding one object into an arena of its own ---------- */

static void staging_clear(model *s) {
  for (int k = 0; k < KIND_CYCLE_COUNT; k++)
    if (decode_kinds[k].vec != KIND_NO_SLOT)
      vec_in(s, k)->n = 0;
  memset(&s->kubevirt, 0, sizeof s->kubevirt);
  s->kubevirt.parallel_per_cluster = -1;
  s->kubevirt.parallel_outbound_per_node = -1;
  s->skipped = 0;
}

/* The object decode_object just added to the staging model, its namespace and name. The
 * KubeVirt CR is a struct in the model: it is copied into `a`. */
static void *staged(model *s, int k, arena *a, const char **ns, const char **name) {
  void *o = NULL;
  if (decode_kinds[k].vec == KIND_NO_SLOT) {
    if (s->kubevirt.present) {
      kubevirt_cr *kv = ARENA_NEW(a, kubevirt_cr);
      *kv = s->kubevirt;
      o = kv;
    }
  } else if (vec_in(s, k)->n) {
    o = vec_in(s, k)->items[0];
  }
  if (o) {
    *ns = field(o, decode_kinds[k].ns);
    *name = field(o, decode_kinds[k].name);
  }
  return o;
}

/* Decodes obj (of kind k) into e: the first decoding measures, the second fills an arena of
 * exactly that size. -1 with err when the object does not decode. */
static int decode_entry(watch_cache *w, int k, const doc_node *obj, wentry *e, dserr *err) {
  model *s = w->store;
  const char *ns, *name;
  arena_reset(w->measure);
  s->mem = w->measure;
  staging_clear(s);
  int rc = decode_object(s, obj, decode_kinds[k].kind, err);
  void *o = rc == 0 ? staged(s, k, w->measure, &ns, &name) : NULL;
  staging_clear(s);
  if (rc < 0)
    return -1;
  if (!o)
    return dserr_set(err, "not a %s", decode_kinds[k].kind);
  size_t size = arena_footprint(w->measure);
  arena *a = arena_new_exact(size);
  s->mem = a;
  rc = decode_object(s, obj, decode_kinds[k].kind, err);
  o = rc == 0 ? staged(s, k, a, &ns, &name) : NULL;
  staging_clear(s);
  s->mem = w->measure;
  if (!o) {
    arena_free(a);
    return rc < 0 ? -1 : dserr_set(err, "not a %s", decode_kinds[k].kind);
  }
  e->ns = ns && *ns ? ns : "";
  e->name = name;
  e->obj = o;
  e->mem = a;
  w->object_bytes += entry_bytes(e);
  return 0;
}

/* An entry for a KubeVirt CR that does not decode: the cycle must know its limits are unknown
 * (VMSafety then requests no migration), so it is kept with its error text. */
static void unreadable_entry(watch_cache *w, const char *ns, const char *name, const char *why,
                             wentry *e) {
  size_t nl = strlen(name) + 1, wl = strlen(why) + 1;
  e->mem = arena_new_exact(nl + wl);
  char *copy = arena_alloc_uninit(e->mem, nl + wl, 1);
  memcpy(copy, name, nl);
  memcpy(copy + nl, why, wl);
  e->ns = intern(w->store->strings, ns);
  e->name = copy;
  e->obj = NULL;
  w->object_bytes += entry_bytes(e);
}

static const char *entry_error(const wentry *e) {
  return e->obj ? NULL : e->name + strlen(e->name) + 1;
}

/* ---------- applying events ---------- */

/* the hash of "namespace/name" */
static uint64_t key_hash(const char *ns, const char *name) {
  return fnv1a_str(fnv1a(fnv1a_str(FNV1A_OFFSET, ns), "/", 1), name);
}

static void tomb_add(wres *r, const char *ns, const char *name, uint64_t rv) {
  tombstone *t = &r->tombs[r->tomb_next];
  free(t->key);
  size_t n = strlen(ns) + strlen(name) + 2;
  t->key = xmalloc(n);
  snprintf(t->key, n, "%s/%s", ns, name);
  t->hash = key_hash(ns, name);
  t->rv = rv;
  r->tomb_next = (r->tomb_next + 1) % TOMBSTONES;
  if (r->ntombs < TOMBSTONES)
    r->ntombs++;
}

/* The resourceVersion at which the cache saw (ns, name) deleted, 0 when it did not. */
static uint64_t tomb_rv(const wres *r, const char *ns, const char *name) {
  uint64_t h = key_hash(ns, name);
  size_t nl = strlen(ns);
  for (size_t i = 0; i < r->ntombs; i++) {
    const tombstone *t = &r->tombs[i];
    if (t->hash == h && strncmp(t->key, ns, nl) == 0 && t->key[nl] == '/' &&
        strcmp(t->key + nl + 1, name) == 0)
      return t->rv;
  }
  return 0;
}

static void tombs_clear(wres *r) {
  for (size_t i = 0; i < TOMBSTONES; i++) {
    free(r->tombs[i].key);
    r->tombs[i].key = NULL;
  }
  r->ntombs = r->tomb_next = 0;
}

static void remove_at(wres *r, size_t i) {
  entry_free(r->w, &r->items[i]);
  memmove(&r->items[i], &r->items[i + 1], (r->n - i - 1) * sizeof *r->items);
  r->n--;
}

static void insert_at(wres *r, size_t i, const wentry *e) {
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->items = xrealloc(r->items, r->cap * sizeof *r->items);
  }
  memmove(&r->items[i + 1], &r->items[i], (r->n - i) * sizeof *r->items);
  r->items[i] = *e;
  r->n++;
}

static void ignore_event(const wres *r, const char *type, const char *ns, const char *name,
                         const char *why) {
  metrics_watch_event(decode_kinds[r->k].kind, "ignored");
  LOGV(4, NULL, "Ignoring a watch event", LSTR("kind", decode_kinds[r->k].kind), LSTR("type", type),
       LSTR("object", *ns ? ns : name), LSTR("name", name), LSTR("why", why));
}

static void apply_event(watch_cache *w, wres *r, char type, const doc_node *obj) {
  const doc_node *md = doc_get(obj, "metadata");
  const char *ns = doc_str(doc_get(md, "namespace")), *name = doc_str(doc_get(md, "name"));
  const char *tname = type == 'A' ? "ADDED" : type == 'M' ? "MODIFIED" : "DELETED";
  if (!name || !*name) {
    kube_object_skipped(decode_kinds[r->k].kind, "(no name)",
                        "a watch event's object has no metadata.name");
    return;
  }
  ns = ns ? ns : "";
  uint64_t rv = rv_number(doc_str(doc_get(md, "resourceVersion")));
  if (rv && rv <= r->floor_rv) {
    /* from a stream older than the list (one a compaction left open): the list holds it */
    ignore_event(r, tname, ns, name, "not newer than the cache's list");
    return;
  }
  bool found;
  size_t i = find(r->items, r->n, ns, name, &found);
  if (type == 'D') {
    if (!found) {
      ignore_event(r, tname, ns, name, "not in the cache");
      return;
    }
    if (rv && r->items[i].rv && rv < r->items[i].rv) {
      ignore_event(r, tname, ns, name, "older than the cache's object");
      return;
    }
    remove_at(r, i);
    tomb_add(r, ns, name, rv);
    metrics_watch_event(decode_kinds[r->k].kind, tname);
    return;
  }
  if (found && rv && r->items[i].rv && rv <= r->items[i].rv) {
    ignore_event(r, tname, ns, name,
                 rv == r->items[i].rv ? "repeated" : "older than the cache's object");
    return;
  }
  if (!found && rv) {
    uint64_t gone = tomb_rv(r, ns, name);
    if (gone && rv <= gone) {
      ignore_event(r, tname, ns, name, "older than the object's deletion");
      return;
    }
  }
  wentry e = {0};
  dserr err;
  if (decode_entry(w, r->k, obj, &e, &err) < 0) {
    char object[600];
    snprintf(object, sizeof object, "%s%s%s", ns, *ns ? "/" : "", name);
    kube_object_skipped(decode_kinds[r->k].kind, object, err.msg);
    if (r->k == KIND_KUBEVIRT)
      unreadable_entry(w, ns, name, err.msg, &e);
    else if (found)
      remove_at(r, i); /* its older version is not what the cluster holds */
    if (!e.mem)
      return;
  }
  e.rv = rv;
  if (found) {
    entry_free(w, &r->items[i]);
    r->items[i] = e;
  } else {
    insert_at(r, i, &e);
  }
  metrics_watch_event(decode_kinds[r->k].kind, tname);
}

/* ---------- lists ---------- */

typedef struct {
  watch_cache *w;
  wres *r;
  wentry *items; /* the new list */
  size_t n, cap;
  char *rv; /* the list's resourceVersion (heap) */
  size_t reused;
} list_ctx;

static int on_list_item(void *ctx, doc_node *item, dserr *err) {
  (void)err;
  list_ctx *l = ctx;
  wres *r = l->r;
  const doc_node *md = doc_get(item, "metadata");
  const char *ns = doc_str(doc_get(md, "namespace")), *name = doc_str(doc_get(md, "name"));
  ns = ns ? ns : "";
  uint64_t rv = rv_number(doc_str(doc_get(md, "resourceVersion")));
  wentry e = {0};
  bool found = false;
  size_t i = name ? find(r->items, r->n, ns, name, &found) : 0;
  if (found && rv && r->items[i].rv == rv && r->items[i].mem) {
    /* unchanged since the cache read it: kept, not decoded again */
    e = r->items[i];
    r->items[i].mem = NULL;
    r->items[i].obj = NULL;
    l->reused++;
  } else {
    dserr derr;
    if (decode_entry(l->w, r->k, item, &e, &derr) < 0) {
      char object[600];
      snprintf(object, sizeof object, "%s%s%s", ns, *ns ? "/" : "", name ? name : "(no name)");
      kube_object_skipped(decode_kinds[r->k].kind, object, derr.msg);
      if (r->k != KIND_KUBEVIRT || !name)
        return 0;
      unreadable_entry(l->w, ns, name, derr.msg, &e);
    }
    e.rv = rv;
  }
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 256;
    l->items = xrealloc(l->items, l->cap * sizeof *l->items);
  }
  l->items[l->n++] = e;
  return 0;
}

static int on_list_page(void *ctx, const char *url, const kube_response *resp, char **token,
                        size_t *count, dserr *err) {
  list_ctx *l = ctx;
  arena *hdr = arena_new(4096);
  doc_node *header = NULL;
  size_t before = l->n;
  int rc = decode_stream_page(url, resp->body, resp->len, decode_kinds[l->r->k].kind, on_list_item,
                              l, hdr, &header, err);
  if (rc == 0) {
    const char *cont = doc_str(doc_path(header, "metadata", "continue", NULL));
    const char *rv = doc_str(doc_path(header, "metadata", "resourceVersion", NULL));
    *token = cont && *cont ? xstrdup(cont) : NULL;
    *count = l->n - before;
    if (rv && *rv) {
      free(l->rv);
      l->rv = xstrdup(rv);
    }
  }
  arena_free(hdr);
  return rc < 0 ? -1 : 0;
}

/* An object a failed list had taken over unchanged goes back to the old list; one it decoded
 * is freed. */
static void restore_or_free(wres *r, wentry *e) {
  bool found;
  size_t j = find(r->items, r->n, e->ns, e->name, &found);
  if (found && !r->items[j].mem)
    r->items[j] = *e;
  else
    entry_free(r->w, e);
}

static void *watch_thread(void *arg);

static void start_watch(watch_cache *w, wres *r, const char *rv) {
  pthread_mutex_lock(&w->mu);
  free(r->watch_from);
  r->watch_from = xstrdup(rv);
  r->restart = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  if (!r->started) {
    if (pthread_create(&r->thread, NULL, watch_thread, r) != 0) {
      LOGE(NULL, "Cannot start a watch thread; the cache is not synced", strerror(errno),
           LSTR("kind", decode_kinds[r->k].kind));
      r->broken = true;
      snprintf(r->why, sizeof r->why, "%s: the watch thread could not start",
               decode_kinds[r->k].plural);
      return;
    }
    r->started = true;
  }
}

/* 1 s after the first failure, doubling to 30 s */
static double backoff_seconds(int failures) {
  double wait = 1.0;
  for (int i = 1; i < failures && wait < BACKOFF_MAX; i++)
    wait *= 2;
  return wait > BACKOFF_MAX ? BACKOFF_MAX : wait;
}

/* The resourceVersion a kind's list asks to be not older than (kube_pager_run_from: served
 * from the API server's watch cache): after a list of its own, that list's, so a list never
 * goes back in time (client-go's reflector relists from its last resourceVersion likewise);
 * before, any (KUBE_LIST_ANY_RV). */
static void list_min_rv(const wres *r, char *rv, size_t cap) {
  if (r->floor_rv)
    snprintf(rv, cap, "%llu", (unsigned long long)r->floor_rv);
  else
    snprintf(rv, cap, "%s", KUBE_LIST_ANY_RV);
}

static void list_kind(watch_cache *w, wres *r) {
  list_ctx l = {w, r, NULL, 0, 0, NULL, 0};
  kube_pager_stats st;
  dserr err;
  const char *reason = r->ever_listed ? (r->relist_reason ? r->relist_reason : "expired") : "start";
  double t0 = time_mono_seconds();
  char min_rv[32];
  list_min_rv(r, min_rv, sizeof min_rv);
  int rc = kube_pager_run_from(w->client, decode_kinds[r->k].path,
                               kube_list_accept(decode_kinds[r->k].kind), min_rv, w->o.page,
                               on_list_page, &l, &st, &err);
  if (rc < 0 && st.expired && r->list_failures == 0) {
    /* a continue token expired mid-list: the list starts again at once, as client-go's pager
     * falls back to a full list; a second failure waits like any other */
    LOGW(NULL, "A paged list expired while it was read; listing again from the start",
         LSTR("kind", decode_kinds[r->k].kind), LSTR("err", err.msg));
    for (size_t i = 0; i < l.n; i++)
      restore_or_free(r, &l.items[i]);
    l.n = 0;
    free(l.rv);
    l.rv = NULL;
    rc = kube_pager_run_from(w->client, decode_kinds[r->k].path,
                             kube_list_accept(decode_kinds[r->k].kind), min_rv, w->o.page,
                             on_list_page, &l, &st, &err);
  }
  if (rc < 0)
    dserr_prefix(&err, "failed to list %s", decode_kinds[r->k].path);
  if (rc == 0 && !l.rv)
    rc = dserr_set(&err, "the list carries no metadata.resourceVersion to watch from");
  if (rc < 0) {
    for (size_t i = 0; i < l.n; i++)
      restore_or_free(r, &l.items[i]);
    free(l.items);
    free(l.rv);
    r->list_failures++;
    double wait = backoff_seconds(r->list_failures);
    r->list_retry_at = time_mono_seconds() + wait;
    snprintf(r->why, sizeof r->why, "%s: listing failed: %s", decode_kinds[r->k].plural, err.msg);
    LOGE(NULL, "Failed to list for the watch cache; it is not synced until a list succeeds",
         err.msg, LSTR("kind", decode_kinds[r->k].kind), LINT("retryInSeconds", (long long)wait));
    return;
  }
  /* the new list replaces the old one; what it did not reuse is gone */
  for (size_t i = 0; i < r->n; i++)
    entry_free(w, &r->items[i]);
  free(r->items);
  if (l.n > 1)
    qsort(l.items, l.n, sizeof *l.items, entry_cmp);
  /* a list holds a key once; should one come twice, the later copy stays */
  size_t out = 0;
  for (size_t i = 0; i < l.n; i++) {
    if (out && entry_cmp(&l.items[out - 1], &l.items[i]) == 0)
      entry_free(w, &l.items[--out]);
    l.items[out++] = l.items[i];
  }
  r->items = l.items;
  r->n = out;
  r->cap = l.cap;
  tombs_clear(r);
  r->floor_rv = rv_number(l.rv);
  r->listed = true;
  r->ever_listed = true;
  r->relist_reason = NULL;
  r->list_failures = 0;
  metrics_watch_list(decode_kinds[r->k].kind, reason);
  LOGV(strcmp(reason, "start") ? 1 : 3, NULL, "Listed for the watch cache",
       LSTR("kind", decode_kinds[r->k].kind), LSTR("reason", reason), LUINT("objects", r->n),
       LUINT("unchanged", l.reused), LUINT("pages", st.pages),
       LSTR("encoding", kube_pager_encoding(&st)), LSTR("resourceVersion", l.rv),
       LFLOAT("seconds", time_mono_seconds() - t0));
  start_watch(w, r, l.rv);
  free(l.rv);
}

/* ---------- compaction ---------- */

/* The decoding model: its string table and model_share's table hold what objects share. */
static void store_new(watch_cache *w) {
  w->store = model_new();
  w->shared_mem = arena_new(1 << 20);
  w->store->shared_mem = w->shared_mem;
  w->store->keep_pod_conditions = w->o.keep_pod_conditions;
  arena_free(w->store->mem);
  w->store->mem = w->measure; /* decode_entry points it at each object's arena in turn */
}

static void store_free(model *store, arena *shared_mem) {
  store->mem = NULL; /* the measuring arena, the cache's */
  model_free(store);
  arena_free(shared_mem);
}

/* Bytes of what objects share: interned strings, model_share's copies, both tables. */
static size_t shared_bytes(const watch_cache *w) {
  return intern_bytes(w->store->strings) + model_share_table_bytes(w->store) +
         arena_used(w->shared_mem);
}

/* What compaction watches: the strings and the copies alone. Their tables grow by doubling,
 * and a table doubled by a compaction's own list would start the next one. */
static size_t shared_content(const watch_cache *w) {
  return intern_text_bytes(w->store->strings) + arena_used(w->shared_mem);
}

/* What objects share is never freed one by one (nothing counts its users), so a string or an
 * array no object uses any more stays: a label value of a Job that is gone, the container
 * statuses of a restart count passed. When the strings and copies have grown by
 * o.compact_bytes since every kind was last listed, the cache drops its objects and tables
 * and lists every kind again into fresh ones (list_kind, in this pump: a cycle never sees
 * half of it). Dropping first keeps the peak at one cache, not two; a list that fails leaves
 * its kind not synced, retried with backoff, as after a 410. The watches stay open: an event
 * not newer than a kind's new list (by resourceVersion) is in the list and is ignored, which
 * needs resourceVersions that are numbers: a server whose are not is never compacted. */
static void compact(watch_cache *w) {
  for (int k = 0; k < KIND_CYCLE_COUNT; k++) {
    if (w->res[k].active && !w->res[k].floor_rv) {
      LOGE(NULL, "The watch cache cannot be compacted; it is not tried again",
           "its lists' resourceVersions are not numbers, so events cannot be ordered against them",
           LSTR("kind", decode_kinds[k].kind));
      w->o.compact_bytes = 0;
      return;
    }
  }
  w->compacting = true;
  w->compact_before = shared_bytes(w);
  w->compact_t0 = time_mono_seconds();
  LOGV(1, NULL, "Compacting the watch cache: every kind is listed again",
       LUINT("sharedBytes", w->compact_before),
       LUINT("growthBytes", shared_content(w) - w->shared_base));
  for (int k = 0; k < KIND_CYCLE_COUNT; k++) {
    wres *r = &w->res[k];
    if (!r->active)
      continue;
    for (size_t i = 0; i < r->n; i++)
      entry_free(w, &r->items[i]);
    r->n = 0;
    tombs_clear(r);
    r->listed = false;
    r->relist_reason = "compact";
    r->list_retry_at = 0;
    snprintf(r->why, sizeof r->why, "%s: listing again (compaction)", decode_kinds[k].plural);
  }
  store_free(w->store, w->shared_mem);
  store_new(w);
  w->shared_base = 0;
  /* what the old cache held goes back to the system now, not after the next cycle: the
   * allocator would keep much of it resident beside the new one */
  xrelease();
}

/* ---------- the watch threads ---------- */

/* ---------- splitting a watch stream into events ---------- */

int watch_framer_feed(watch_framer *f, const char *data, size_t len, watch_event_fn fn, void *ctx,
                      const char **failure) {
  *failure = NULL;
  if (f->buf.len + len > WATCH_EVENT_MAX) {
    *failure = "malformed watch stream: an event larger than 64 MiB";
    return -1;
  }
  sb_appendn(&f->buf, data, len);
  char *b = f->buf.buf;
  size_t i = f->scan;
  for (; i < f->buf.len; i++) {
    char c = b[i];
    if (f->in_str) {
      if (f->esc)
        f->esc = false;
      else if (c == '\\')
        f->esc = true;
      else if (c == '"')
        f->in_str = false;
      continue;
    }
    if (c == '"' && f->depth > 0) {
      f->in_str = true;
    } else if (c == '{' || c == '[') {
      if (f->depth++ == 0)
        f->start = i;
    } else if (c == '}' || c == ']') {
      if (f->depth == 0) {
        *failure = "malformed watch stream: unbalanced brackets";
        return -1;
      }
      if (--f->depth == 0) {
        int rc = fn(ctx, b + f->start, i + 1 - f->start);
        if (rc != 0)
          return rc;
      }
    } else if (f->depth == 0 && c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      *failure = "malformed watch stream: text between events";
      return -1;
    }
  }
  /* drop what has been handed over */
  size_t keep_from = f->depth > 0 ? f->start : i;
  if (keep_from > 0) {
    memmove(b, b + keep_from, f->buf.len - keep_from);
    f->buf.len -= keep_from;
    b[f->buf.len] = 0;
    f->start = 0;
  }
  f->scan = f->buf.len;
  return 0;
}

void watch_framer_free(watch_framer *f) {
  sb_free(&f->buf);
  memset(f, 0, sizeof *f);
}

typedef struct {
  watch_cache *w;
  wres *r;
  watch_framer frame;
  char *rv;      /* the last resourceVersion seen (heap) */
  bool expired;  /* ERROR 410 */
  char *failure; /* why the stream cannot be read further (heap) */
  size_t events;
  bool opened;  /* the server answered 200 */
  bool *broken; /* the thread's: the kind was reported not synced */
} stream_ctx;

static void push(watch_cache *w, wmsg *m) {
  pthread_mutex_lock(&w->mu);
  m->next = NULL;
  if (w->tail)
    w->tail->next = m;
  else
    w->head = m;
  w->tail = m;
  pthread_mutex_unlock(&w->mu);
}

static void push_note(watch_cache *w, int k, msg_kind kind, const char *reason, const char *text) {
  wmsg *m = xcalloc(1, sizeof *m);
  m->k = k;
  m->kind = kind;
  m->reason = reason;
  m->text = xstrdup(text ? text : "");
  push(w, m);
}

static void set_rv(stream_ctx *s, const doc_node *obj) {
  const char *rv = doc_str(doc_path(obj, "metadata", "resourceVersion", NULL));
  if (rv && *rv) {
    free(s->rv);
    s->rv = xstrdup(rv);
  }
}

/* The parsed event, kept: its type and a copy of its object in the message's arena. */
typedef struct {
  arena *a;
  char type[16];
  doc_node *obj;
} parsed_event;

static int keep_event(void *ctx, doc_node *root, dserr *err) {
  (void)err;
  parsed_event *e = ctx;
  const char *type = doc_str(doc_get(root, "type"));
  snprintf(e->type, sizeof e->type, "%s", type ? type : "");
  const doc_node *obj = doc_get(root, "object");
  e->obj = obj && obj->type == DOC_MAP ? doc_copy(e->a, obj) : NULL;
  return 0;
}

/* One whole event: parse it, hand it over or act on it. -1 stops the stream. */
static int on_event(stream_ctx *s, const char *data, size_t len) {
  arena *a = arena_new(16 * 1024);
  parsed_event ev = {a, "", NULL};
  dserr err;
  char name[64];
  snprintf(name, sizeof name, "watch event of %s", decode_kinds[s->r->k].plural);
  if (doc_stream_memory_skipping(DOC_FMT_JSON, name, data, len, s->w->event_skip, keep_event, &ev,
                                 NULL, NULL, &err) < 0) {
    arena_free(a);
    s->failure = xstrdup(err.msg);
    return -1;
  }
  const char *type = ev.type;
  doc_node *obj = ev.obj;
  if (!*type || !obj) {
    arena_free(a);
    s->failure = xstrdup("a watch event without type or object");
    return -1;
  }
  if (!strcmp(type, "BOOKMARK")) {
    set_rv(s, obj);
    arena_free(a);
    return 0;
  }
  if (!strcmp(type, "ERROR")) {
    const doc_node *code = doc_get(obj, "code");
    const char *msg = doc_str(doc_get(obj, "message"));
    if (code && code->type == DOC_INT && code->v.i == 410) {
      s->expired = true;
      s->failure = xstrdup(msg ? msg : "410 Gone");
    } else {
      strbuf sb = {0};
      sb_printf(&sb, "the watch sent an error: %s (code %lld)", msg ? msg : "no message",
                code && code->type == DOC_INT ? (long long)code->v.i : 0LL);
      s->failure = sb_detach(&sb);
    }
    arena_free(a);
    return -1;
  }
  char t = !strcmp(type, "ADDED")      ? 'A'
           : !strcmp(type, "MODIFIED") ? 'M'
           : !strcmp(type, "DELETED")  ? 'D'
                                       : 0;
  if (!t) {
    arena_free(a);
    s->failure = xstrdup("a watch event of an unknown type");
    return -1;
  }
  set_rv(s, obj);
  wmsg *m = xcalloc(1, sizeof *m);
  m->k = s->r->k;
  m->kind = MSG_EVENT;
  m->type = t;
  m->a = a;
  m->obj = obj;
  push(s->w, m);
  s->events++;
  return 0;
}

static int event_cb(void *ctx, const char *data, size_t len) {
  return on_event(ctx, data, len);
}

/* libcurl's chunks, split into whole JSON values (a value per event; the API server ends each
 * with a newline, which is not relied on). */
static int on_stream(void *ctx, const char *data, size_t len) {
  stream_ctx *s = ctx;
  if (!data) {
    /* the watch is open: a kind reported broken is synced again */
    s->opened = true;
    if (*s->broken) {
      *s->broken = false;
      push_note(s->w, s->r->k, MSG_CONNECTED, NULL, NULL);
    }
    return 0;
  }
  const char *failure;
  int rc = watch_framer_feed(&s->frame, data, len, event_cb, s, &failure);
  if (failure && !s->failure)
    s->failure = xstrdup(failure);
  return rc;
}

/* w->quit, read by the watch threads and (through kube_stream) libcurl's progress callback
 * while the main thread may set it */
static bool quitting(watch_cache *w) {
  return __atomic_load_n(&w->quit, __ATOMIC_ACQUIRE);
}

static bool sleep_or_quit(watch_cache *w, double seconds) {
  double until = time_mono_seconds() + seconds;
  while (!quitting(w) && time_mono_seconds() < until) {
    struct timespec ts = {0, 100000000L};
    nanosleep(&ts, NULL);
  }
  return !quitting(w);
}

static void *watch_thread(void *arg) {
  wres *r = arg;
  watch_cache *w = r->w;
  char *rv = NULL;
  int failures = 0;
  bool broken = false;
  unsigned seed = (unsigned)time(NULL) ^ (unsigned)(r->k * 2654435761u);
  long stall = w->o.stall_seconds > 0 ? w->o.stall_seconds : STALL_DEFAULT;
  while (!quitting(w)) {
    pthread_mutex_lock(&w->mu);
    while (!w->quit && !r->watch_from)
      pthread_cond_wait(&w->cv, &w->mu);
    if (w->quit) {
      pthread_mutex_unlock(&w->mu);
      break;
    }
    if (r->restart || !rv) {
      free(rv);
      rv = xstrdup(r->watch_from);
      r->restart = false;
    }
    pthread_mutex_unlock(&w->mu);

    strbuf path = {0};
    /* client-go's reflector asks for a random timeout between 5 and 10 minutes */
    sb_printf(&path, "%s?allowWatchBookmarks=true&resourceVersion=", decode_kinds[r->k].path);
    kube_path_escape(&path, rv);
    sb_printf(&path, "&timeoutSeconds=%u&watch=true", 300 + rand_r(&seed) % 300);
    stream_ctx s = {w, r, {{0}}, NULL, false, NULL, 0, false, &broken};
    kube_response resp;
    dserr err;
    double opened_at = time_mono_seconds();
    int rc = kube_stream(r->client, sb_str(&path), on_stream, &s, stall, &w->quit, &resp, &err);
    sb_free(&path);
    if (quitting(w)) {
      kube_response_free(&resp);
      watch_framer_free(&s.frame);
      free(s.rv);
      free(s.failure);
      break;
    }
    if (s.rv) {
      free(rv);
      rv = s.rv;
      s.rv = NULL;
    }
    bool opened = s.opened;
    char why[1024] = "";
    bool relist = false;
    char smsg[512] = "", sreason[128] = "";
    if (rc == 0 && resp.status != 200)
      kube_status_text(&resp, smsg, sizeof smsg, sreason, sizeof sreason);
    if (s.expired || (rc == 0 && resp.status == 410) ||
        (rc == 0 && resp.status == 504 && strstr(smsg, "Too large resource version"))) {
      /* 410: the resourceVersion left the server's history; 504 "Too large resource version":
       * the server is behind it (restored from a backup, another member): list again, as
       * client-go's reflector does for both */
      relist = true;
      snprintf(why, sizeof why, "%s", s.failure ? s.failure : *smsg ? smsg : "410 Gone");
      push_note(w, r->k, MSG_RELIST, "expired", why);
    } else if (s.failure) {
      relist = true; /* the stream cannot be trusted from here: list again */
      snprintf(why, sizeof why, "%s", s.failure);
      push_note(w, r->k, MSG_RELIST, "broken", why);
    } else if (rc == 0 && resp.status == 200) {
      /* the server ended the watch (its timeout): open it again from where it was; one that
       * ended at once with nothing in it waits a second first (as client-go's reflector does
       * with a very short watch), so a server that closes every watch is not asked in a loop */
      LOGV(4, NULL, "Watch ended; opening it again", LSTR("kind", decode_kinds[r->k].kind),
           LSTR("resourceVersion", rv), LUINT("events", s.events));
      if (s.events == 0 && time_mono_seconds() - opened_at < 1.0 && !sleep_or_quit(w, 1.0)) {
        kube_response_free(&resp);
        watch_framer_free(&s.frame);
        free(s.failure);
        break;
      }
    } else {
      if (rc == 0) {
        snprintf(why, sizeof why, "HTTP %ld: %s", resp.status, *smsg ? smsg : "(no message)");
      } else {
        snprintf(why, sizeof why, "%s", err.msg);
      }
    }
    kube_response_free(&resp);
    watch_framer_free(&s.frame);
    free(s.failure);
    if (relist) {
      LOGV(1, NULL, "The watch cannot go on; listing again", LSTR("kind", decode_kinds[r->k].kind),
           LSTR("why", why));
      pthread_mutex_lock(&w->mu);
      free(r->watch_from);
      r->watch_from = NULL;
      pthread_mutex_unlock(&w->mu);
      free(rv);
      rv = NULL;
      failures = 0;
      broken = false;
      continue;
    }
    if (*why) {
      /* a stream that was open and broke is opened again at once; a request that fails
       * waits 1 s, doubling to 30 s, and the kind is not synced meanwhile */
      if (!opened) {
        if (!broken)
          push_note(w, r->k, MSG_BROKEN, NULL, why);
        broken = true;
      }
      LOGE(NULL, opened ? "Watch stream broke; opening it again" : "Watch failed; retrying", why,
           LSTR("kind", decode_kinds[r->k].kind), LSTR("resourceVersion", rv));
      double wait = 0;
      if (!opened) {
        wait = backoff_seconds(++failures);
      } else {
        failures = 0;
      }
      if (wait > 0 && !sleep_or_quit(w, wait))
        break;
      continue;
    }
    failures = 0;
  }
  free(rv);
  return NULL;
}

/* ---------- the cycle thread's side ---------- */

watch_cache *watch_cache_new(kube_client *c, const watch_options *o, dserr *err) {
  watch_cache *w = xcalloc(1, sizeof *w);
  w->client = c;
  w->o = *o;
  if (w->o.page <= 0)
    w->o.page = 500;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->measure = arena_new(1 << 20);
  store_new(w);
  const char *const *unread = decode_unread_paths();
  size_t n = 0;
  while (unread[n])
    n++;
  w->event_skip = xcalloc(n + 1, sizeof *w->event_skip);
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(unread[i]) + sizeof "object.";
    char *p = xmalloc(len);
    snprintf(p, len, "object.%s", unread[i]);
    w->event_skip[i] = p;
  }
  for (int k = 0; k < KIND_CYCLE_COUNT; k++) {
    wres *r = &w->res[k];
    r->w = w;
    r->k = k;
    r->active = !decode_kinds[k].kubevirt || o->kubevirt;
    if (!r->active)
      continue;
    snprintf(r->why, sizeof r->why, "%s: not listed yet", decode_kinds[k].plural);
    r->client = kube_client_new(o->cfg, o->qps, o->burst, err);
    if (!r->client) {
      watch_cache_free(w);
      return NULL;
    }
  }
  return w;
}

static void free_msg(wmsg *m) {
  arena_free(m->a);
  free(m->text);
  free(m);
}

void watch_cache_free(watch_cache *w) {
  if (!w)
    return;
  pthread_mutex_lock(&w->mu);
  __atomic_store_n(&w->quit, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  for (int k = 0; k < KIND_CYCLE_COUNT; k++) {
    wres *r = &w->res[k];
    if (r->started)
      pthread_join(r->thread, NULL);
    kube_client_free(r->client);
    for (size_t i = 0; i < r->n; i++)
      entry_free(w, &r->items[i]);
    free(r->items);
    tombs_clear(r);
    free(r->watch_from);
  }
  while (w->head) {
    wmsg *m = w->head;
    w->head = m->next;
    free_msg(m);
  }
  for (size_t i = 0; w->event_skip && w->event_skip[i]; i++)
    free((char *)w->event_skip[i]);
  free(w->event_skip);
  store_free(w->store, w->shared_mem);
  arena_free(w->measure);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  free(w);
}

/* every kind watched has a current list */
static bool all_listed(const watch_cache *w) {
  for (int k = 0; k < KIND_CYCLE_COUNT; k++)
    if (w->res[k].active && !w->res[k].listed)
      return false;
  return true;
}

void watch_cache_pump(watch_cache *w) {
  pthread_mutex_lock(&w->mu);
  wmsg *m = w->head;
  w->head = w->tail = NULL;
  pthread_mutex_unlock(&w->mu);
  while (m) {
    wmsg *next = m->next;
    wres *r = &w->res[m->k];
    switch (m->kind) {
    case MSG_EVENT:
      if (r->listed) /* else a list is coming that holds this change */
        apply_event(w, r, m->type, m->obj);
      break;
    case MSG_RELIST:
      r->listed = false;
      r->relist_reason = m->reason;
      r->list_retry_at = 0;
      snprintf(r->why, sizeof r->why, "%s: listing again (%s)", decode_kinds[m->k].plural, m->text);
      break;
    case MSG_BROKEN:
      r->broken = true;
      snprintf(r->why, sizeof r->why, "%s: watch failed: %s", decode_kinds[m->k].plural, m->text);
      break;
    case MSG_CONNECTED:
      if (r->broken)
        LOGV(1, NULL, "Watch open again; the kind is synced",
             LSTR("kind", decode_kinds[m->k].kind));
      r->broken = false;
      break;
    }
    free_msg(m);
    m = next;
  }
  /* not while a kind waits for a list of its own (after a 410): that one comes first */
  if (all_listed(w) && w->o.compact_bytes && w->shared_base && !w->quit &&
      shared_content(w) >= w->shared_base + w->o.compact_bytes)
    compact(w);
  double now = time_mono_seconds();
  for (int k = 0; k < KIND_CYCLE_COUNT; k++) {
    wres *r = &w->res[k];
    if (r->active && !r->listed && now >= r->list_retry_at && !w->quit)
      list_kind(w, r);
  }
  if (w->shared_base || !all_listed(w))
    return;
  /* every kind listed, the first time or since a compaction */
  w->shared_base = shared_content(w);
  if (w->compacting) {
    w->compacting = false;
    LOGV(1, NULL, "Compacted the watch cache", LUINT("sharedBytesBefore", w->compact_before),
         LUINT("sharedBytesAfter", shared_bytes(w)),
         LFLOAT("seconds", time_mono_seconds() - w->compact_t0));
  }
}

bool watch_cache_synced(watch_cache *w, char *why, size_t cap) {
  strbuf sb = {0};
  for (int k = 0; k < KIND_CYCLE_COUNT; k++) {
    const wres *r = &w->res[k];
    if (r->active && (!r->listed || r->broken))
      sb_printf(&sb, "%s%s", sb.len ? "; " : "", r->why);
  }
  bool ok = sb.len == 0;
  snprintf(why, cap, "%s", ok ? "" : sb_str(&sb));
  sb_free(&sb);
  return ok;
}

model *watch_cache_view(watch_cache *w, dserr *err) {
  model *v = model_new_view(w->store->strings);
  v->keep_pod_conditions = w->o.keep_pod_conditions;
  v->keys_unique = true; /* the cache holds each key once */
  for (int k = 0; k < KIND_CYCLE_COUNT; k++) {
    if (decode_kinds[k].vec == KIND_NO_SLOT)
      continue;
    const wres *r = &w->res[k];
    vec_of *vv = vec_in(v, k);
    vv->cap = r->n ? r->n : 1;
    vv->items = xmalloc(vv->cap * sizeof *vv->items);
    vv->n = 0;
    for (size_t i = 0; i < r->n; i++)
      if (r->items[i].obj)
        vv->items[vv->n++] = r->items[i].obj;
  }
  /* as a list read into one model: the last KubeVirt CR that decodes, and the error of one
   * that does not */
  const wres *kv = &w->res[KIND_KUBEVIRT];
  for (size_t i = 0; i < kv->n; i++) {
    if (kv->items[i].obj)
      v->kubevirt = *(kubevirt_cr *)kv->items[i].obj;
    else
      v->kubevirt_unreadable = entry_error(&kv->items[i]);
  }
  v->vmis_complete = w->o.kubevirt;
  /* model_finish clears what the last cycle left on the objects (evicted, metrics, node
   * links) in the pass that links them */
  if (model_finish(v, err) < 0) {
    watch_cache_release_view(w, v);
    return NULL;
  }
  return v;
}

void watch_cache_release_view(watch_cache *w, model *view) {
  (void)w;
  if (!view)
    return;
  /* node pod lists live in the view's arena */
  for (size_t i = 0; i < view->nodes.n; i++) {
    view->nodes.items[i]->pods = NULL;
    view->nodes.items[i]->npods = 0;
    view->nodes.items[i]->actual = NULL;
  }
  /* PodMetrics live in the view too; only model_link_metrics points pods at them */
  for (size_t i = 0; view->pod_metrics.n && i < view->pods.n; i++)
    view->pods.items[i]->metrics = NULL;
  model_free(view);
}

void watch_cache_stats(watch_cache *w, watch_stats *st) {
  memset(st, 0, sizeof *st);
  /* what objects share, then each object with its arena's header and the heap's */
  st->shared = shared_bytes(w);
  st->shared_tables = st->shared - shared_content(w);
  st->bytes = st->shared + w->object_bytes;
  for (int k = 0; k < KIND_CYCLE_COUNT; k++) {
    st->objects += w->res[k].n;
    st->bytes += w->res[k].cap * sizeof *w->res[k].items;
  }
}

/* ---------- checking a pod again before its eviction ---------- */

/* The newest event about p that the watch brought since the view was taken (events wait in
 * the queue until the next pump, and only the cycle's thread pumps, so what this returns stays
 * valid through the eviction). NULL when there is none newer than the object the cycle read. */
static const wmsg *news_of(watch_cache *w, const pod *p) {
  const wres *r = &w->res[KIND_POD];
  bool found;
  size_t i = find(r->items, r->n, p->ns, p->name, &found);
  uint64_t held = found && r->items[i].obj == p ? r->items[i].rv : 0;
  const wmsg *newest = NULL;
  pthread_mutex_lock(&w->mu);
  for (const wmsg *m = w->head; m; m = m->next) {
    if (m->k != KIND_POD || m->kind != MSG_EVENT)
      continue;
    const doc_node *md = doc_get(m->obj, "metadata");
    const char *name = doc_str(doc_get(md, "name")), *ns = doc_str(doc_get(md, "namespace"));
    if (!name || strcmp(name, p->name) != 0 || strcmp(ns ? ns : "", p->ns) != 0)
      continue;
    uint64_t rv = rv_number(doc_str(doc_get(md, "resourceVersion")));
    if (rv && held && rv <= held)
      continue; /* a repeat of what the cycle read, or older */
    newest = m;
  }
  pthread_mutex_unlock(&w->mu);
  return newest;
}

/* What the watch said about the pod since the cycle read it, when that stops its eviction:
 * SINK_NOT_FOUND or SINK_ERROR with the reason in msg. SINK_EVICTED: nothing stops it. */
static sink_result local_check(watch_cache *w, const pod *p, char *msg, size_t cap) {
  const wmsg *m = news_of(w, p);
  if (!m)
    return SINK_EVICTED;
  const char *uid = doc_str(doc_path(m->obj, "metadata", "uid", NULL));
  const char *node = doc_str(doc_path(m->obj, "spec", "nodeName", NULL));
  const doc_node *del = doc_path(m->obj, "metadata", "deletionTimestamp", NULL);
  bool same = uid && !strcmp(uid, p->uid);
  if (m->type == 'D' && same) {
    snprintf(msg, cap,
             "not sent: the pod no longer exists (its watch said so after the cycle "
             "read it)");
    return SINK_NOT_FOUND;
  }
  if (!same) {
    snprintf(msg, cap,
             "not sent: the pod was replaced by another of the same name (uid %s, the cycle "
             "decided on %s)",
             uid ? uid : "none", p->uid);
    return SINK_ERROR;
  }
  if (strcmp(node ? node : "", p->node_name) != 0) {
    snprintf(msg, cap, "not sent: the pod is on node \"%s\" now, the cycle decided on \"%s\"",
             node ? node : "", p->node_name);
    return SINK_ERROR;
  }
  if (del && del->type != DOC_NULL && !p->deleting) {
    snprintf(msg, cap, "not sent: the pod is being deleted since the cycle read it");
    return SINK_ERROR;
  }
  return SINK_EVICTED;
}

/* Whether a watch failed, or must be listed again (410), since the view was taken: the notes
 * wait in the queue until the next pump, as the events do. A watch that failed and is open
 * again (resumed from its resourceVersion, so nothing was missed) does not count. The first
 * kind that lost its view is named in msg. */
static bool view_lost(watch_cache *w, char *msg, size_t cap) {
  const char *lost[KIND_CYCLE_COUNT] = {0};   /* a failed watch not open again: why */
  const char *relist[KIND_CYCLE_COUNT] = {0}; /* a 410: why (only a list mends it) */
  bool any = false;
  pthread_mutex_lock(&w->mu);
  for (const wmsg *m = w->head; m; m = m->next) {
    if (m->kind == MSG_BROKEN)
      lost[m->k] = m->text;
    else if (m->kind == MSG_CONNECTED)
      lost[m->k] = NULL;
    else if (m->kind == MSG_RELIST)
      relist[m->k] = m->text;
  }
  for (int k = 0; k < KIND_CYCLE_COUNT && !any; k++) {
    if (!lost[k] && !relist[k])
      continue;
    any = true;
    snprintf(msg, cap,
             "not sent: the watch of %s %s since the cycle read the cluster (%s); what changed "
             "meanwhile is not known, the next cycle decides again",
             decode_kinds[k].plural, relist[k] ? "must be listed again" : "has failed",
             relist[k] ? relist[k] : lost[k]);
  }
  pthread_mutex_unlock(&w->mu);
  return any;
}

static sink_result recheck_evict(eviction_sink *self, const pod *p, const eviction_request *req,
                                 char *msg, size_t cap) {
  recheck_sink *s = (recheck_sink *)self;
  /* nothing is evicted on a view the cache can no longer vouch for: the server came back
   * (after a restart, say) before the watches did, and the pods, their budgets and the VMs'
   * migrations may have changed unseen */
  if (view_lost(s->cache, msg, cap))
    return SINK_ERROR;
  sink_result res = local_check(s->cache, p, msg, cap);
  if (res != SINK_EVICTED)
    return res;
  /* what the watch has not told yet, the API server checks as it evicts: a pod that is gone
   * answers 404, and another pod of the same name fails the UID precondition that every
   * eviction carries (409; live_sink, cluster.h) */
  return s->inner->evict(s->inner, p, req, msg, cap);
}

static void recheck_event(eviction_sink *self, const pod *p, const char *type, const char *reason,
                          const char *note) {
  recheck_sink *s = (recheck_sink *)self;
  if (s->inner->event)
    s->inner->event(s->inner, p, type, reason, note);
}

void recheck_sink_init(recheck_sink *s, eviction_sink *inner, watch_cache *cache) {
  memset(s, 0, sizeof *s);
  s->base.evict = recheck_evict;
  s->base.event = inner->event ? recheck_event : NULL;
  s->base.dry_run = inner->dry_run;
  s->inner = inner;
  s->cache = cache;
}
