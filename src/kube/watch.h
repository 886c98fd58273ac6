/* watch.h - the watch cache of Deployment mode: list once, then watch.
 *
 * What client-go's informers do for upstream: every kind a cycle reads (nodes, pods,
 * namespaces, PDBs, priority classes, PVCs and, with KubeVirt, VMIs, migrations and the
 * KubeVirt CR) is listed once, in pages, and then watched from the list's resourceVersion with
 * bookmarks; the events keep the cache current, so a cycle after the first costs the API
 * server nothing. The one-shot (CronJob) path does not use it: it lists (kube/cluster.h).
 *
 * Threads. One thread per kind holds its watch open with a client of its own and parses the
 * events (JSON, without the parts no decoder reads); the events wait in a queue. The cycle's
 * thread applies them (watch_cache_pump) and makes the lists, so the cache never changes
 * while a cycle reads it.
 *
 * Objects. Each object is decoded into an arena of its own, sized exactly (a first decoding
 * measures it), so an object replaced or deleted is freed: the cache's memory follows the
 * cluster, not the number of events. What objects share (interned strings, model_share's
 * arrays) is not freed one by one; once it has grown by compact_bytes since every kind was
 * last listed, the cache drops its objects and tables and lists every kind again into fresh
 * ones (the watches stay open; see compact() in watch.c). Objects are kept in the API
 * server's list order (by namespace/name, as etcd's keys), so a cycle on the cache decides
 * exactly as a cycle on a fresh list would.
 *
 * Events. An event older than the object the cache holds (by resourceVersion, when both are
 * numbers) and a repeated one are ignored, as is an ADDED or MODIFIED for an object the cache
 * saw deleted later. A DELETED for an object the cache does not hold is ignored, and so is an
 * event not newer than the kind's last list (one that a watch older than a compaction's list
 * still brings). An object that does not decode is left out (kube_object_skipped), and its
 * older version with it.
 *
 * Failures. A watch that ends is opened again from the last resourceVersion seen. 410 Gone
 * (an ERROR event or the answer to the watch), or a stream that cannot be read (malformed
 * JSON), makes that kind listed again, with backoff when the list fails (1 s doubling to
 * 30 s). A watch request that fails (refused, 5xx, 403) is retried with the same backoff and
 * the kind counts as not synced until a watch is open again. A stream quiet for longer than
 * stall_seconds is dropped and opened again. Each of these is one log line. A cycle runs on
 * the cache only when every kind is synced (watch_cache_synced); otherwise it evicts nothing.
 */
#ifndef DS_KUBE_WATCH_H
#define DS_KUBE_WATCH_H

#include "../framework/framework.h"
#include "../model/model.h"
#include "client.h"
#include "config.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct watch_cache watch_cache;

typedef struct {
  const kube_config *cfg; /* for the watch threads' own clients */
  double qps;
  int burst;
  bool kubevirt;            /* KubeVirt's kinds are served: watch them too */
  int page;                 /* LIST page size */
  bool keep_pod_conditions; /* decode pods' conditions (a plugin reads them) */
  long stall_seconds;       /* a watch silent this long is opened again (0: 150) */
  size_t compact_bytes;     /* what objects share grew this much: compact (0: never) */
} watch_options;

/* c is the cycle thread's client (lists); borrowed. NULL with err when a watch client cannot
 * be made. Nothing is read until the first watch_cache_pump. */
watch_cache *watch_cache_new(kube_client *c, const watch_options *o, dserr *err);
/* Stops the watches (within about a second) and frees everything. */
void watch_cache_free(watch_cache *w);

/* Applies the events waiting, then lists every kind that needs it (at start, after a 410)
 * and whose backoff has passed. Call it often between cycles and once before each. */
void watch_cache_pump(watch_cache *w);

/* true when every kind has been listed and its watch is open (or being opened again after a
 * normal end). Otherwise false, and why names the kinds that are not ("pods: listing failed:
 * ..."). */
bool watch_cache_synced(watch_cache *w, char *why, size_t cap);

/* The model one cycle runs on: the cache's objects (not copies) in list order, with
 * model_finish done and the per-cycle fields (node pods, evicted marks, usage links) fresh.
 * Per-cycle data (usage, OpenShift objects) may be added to it; it goes with the view.
 * Release it before the next pump. */
model *watch_cache_view(watch_cache *w, dserr *err);
void watch_cache_release_view(watch_cache *w, model *view);

/* For the cycle's timings line (events and lists are counted in the metrics). */
typedef struct {
  size_t objects; /* objects held */
  size_t bytes;   /* the objects' memory, what they share, the indexes */
  size_t shared;  /* of bytes, what they share (interned strings, model_share's arrays) */
  size_t shared_tables; /* of shared, the two hash tables that find them; the rest is what
                         * --watch-cache-compact-bytes bounds (the tables grow by doubling) */
} watch_stats;
void watch_cache_stats(watch_cache *w, watch_stats *st);

/* ---------- splitting a watch stream into its events ----------
 * The bytes of a watch response, as they arrive, split into whole top-level JSON values (one
 * per event; the API server ends each with a newline, which is not relied on), brackets
 * counted outside strings. fn gets each value once it is whole; its non-zero return stops the
 * feed and is returned. A closing bracket with nothing open or text between values is a
 * broken stream: -1 with *failure saying so. Exposed for tests/fuzz/fuzz_watch_stream.c. */
#include "../util/strbuf.h"
typedef struct {
  strbuf buf;  /* bytes not yet handed over */
  size_t scan; /* how far buf has been scanned */
  int depth;
  bool in_str, esc;
  size_t start; /* where the current value began */
} watch_framer;
typedef int (*watch_event_fn)(void *ctx, const char *data, size_t len);
int watch_framer_feed(watch_framer *f, const char *data, size_t len, watch_event_fn fn, void *ctx,
                      const char **failure);
void watch_framer_free(watch_framer *f);

/* ---------- checking again before an eviction ----------
 * A cycle on the cache decides from what the watches said when it took its view; the watches
 * go on meanwhile, their events waiting for the next pump. This sink wraps the live one.
 * Before each request it looks at the pod's events that came since the view: nothing is sent
 * when the pod is gone (SINK_NOT_FOUND), was replaced by another of the same name (its UID
 * differs), moved to another node or is being deleted (SINK_ERROR with the reason). What the
 * watch has not told yet the API server checks as it evicts: every eviction carries
 * deleteOptions.preconditions.uid (live_sink, cluster.h), so another pod of the same name is
 * refused (409 Conflict) and a pod that is gone answers 404. Neither check costs a request of
 * its own. */
typedef struct {
  eviction_sink base;
  eviction_sink *inner; /* borrowed */
  watch_cache *cache;   /* borrowed */
} recheck_sink;

void recheck_sink_init(recheck_sink *s, eviction_sink *inner, watch_cache *cache);

#endif
