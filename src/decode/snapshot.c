/* snapshot.c - streaming a v1 List (file or API page) into the model; see decode.h.
 *
 * A snapshot file is the user's own input: an object that does not decode fails it (exit 2
 * names the item and the field). An API page in live mode may skip such an object instead:
 * decoders add an object to the model only once it is fully read, except the KubeVirt CR,
 * which is written in place and so is restored when its decoding fails. */
#include "decode.h"

#include "../util/intern.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What no decoder of objects.c reads, of any kind: left out of the items' trees (still
 * checked as JSON), so that reading a pod builds a third of it. metadata.managedFields is
 * about half of a pod as the API server serves it; then the container fields no plugin
 * looks at, the node's image list and system info, a VMI's domain and interfaces. A path
 * added here must be one no decoder reads (tests/conformance and tests/unit/test_decode.c
 * decode with the list in place). */
#define CONTAINER_UNREAD(c)                                                                        \
  c "[].env", c "[].envFrom", c "[].ports", c "[].volumeMounts", c "[].volumeDevices",             \
      c "[].livenessProbe", c "[].readinessProbe", c "[].startupProbe", c "[].lifecycle",          \
      c "[].securityContext", c "[].command", c "[].args", c "[].terminationMessagePath",          \
      c "[].terminationMessagePolicy", c "[].imagePullPolicy", c "[].workingDir"
#define STATUS_UNREAD(c) c "[].image", c "[].imageID", c "[].containerID", c "[].lastState"
static const char *const unread_paths[] = {"metadata.managedFields",
                                           "metadata.generateName",
                                           "spec.securityContext",
                                           "spec.readinessGates",
                                           "spec.dnsPolicy",
                                           "spec.dnsConfig",
                                           "spec.schedulerName",
                                           "spec.serviceAccountName",
                                           "spec.serviceAccount",
                                           "spec.automountServiceAccountToken",
                                           "spec.hostname",
                                           "spec.subdomain",
                                           "spec.enableServiceLinks",
                                           "spec.terminationGracePeriodSeconds",
                                           "status.hostIP",
                                           "status.hostIPs",
                                           "status.podIP",
                                           "status.podIPs",
                                           CONTAINER_UNREAD("spec.containers"),
                                           CONTAINER_UNREAD("spec.initContainers"),
                                           "spec.volumes[].projected",
                                           "spec.volumes[].configMap",
                                           "spec.volumes[].secret",
                                           "spec.volumes[].downwardAPI",
                                           STATUS_UNREAD("status.containerStatuses"),
                                           STATUS_UNREAD("status.initContainerStatuses"),
                                           "status.images",
                                           "status.nodeInfo",
                                           "status.addresses",
                                           "status.daemonEndpoints",
                                           "status.volumesAttached",
                                           "status.volumesInUse",
                                           "spec.domain",
                                           "status.interfaces",
                                           "status.volumeStatus",
                                           "status.guestOSInfo",
                                           NULL};

const char *const *decode_unread_paths(void) {
  return unread_paths;
}

typedef struct {
  model *m;
  const char *kind_hint;
  size_t index;
  decode_skip_fn skip;
  void *skip_ctx;
  struct split_worker *split; /* decode_snapshot_file_split's worker, or NULL */
} stream_ctx;

static int on_item(void *ctx, doc_node *item, dserr *err) {
  stream_ctx *s = ctx;
  size_t i = s->index++;
  kubevirt_cr saved = s->m->kubevirt;
  if (decode_object(s->m, item, s->kind_hint, err) < 0) {
    const char *kind = doc_str(doc_get(item, "kind"));
    const char *ns = doc_str(doc_path(item, "metadata", "namespace", NULL));
    const char *name = doc_str(doc_path(item, "metadata", "name", NULL));
    if (s->skip) {
      s->m->kubevirt = saved;
      if (kind && !strcmp(kind, "KubeVirt"))
        s->m->kubevirt_unreadable = arena_strdup(s->m->mem, err->msg);
      char object[600];
      if (name)
        snprintf(object, sizeof object, "%s%s%s", ns ? ns : "", ns ? "/" : "", name);
      else
        snprintf(object, sizeof object, "items[%zu]", i);
      s->skip(s->skip_ctx,
              kind && *kind  ? kind
              : s->kind_hint ? s->kind_hint
                             : "object",
              object, err->msg);
      return 0;
    }
    if (name)
      return dserr_prefix(err, "items[%zu] (%s %s%s%s)", i,
                          kind           ? kind
                          : s->kind_hint ? s->kind_hint
                                         : "object",
                          ns ? ns : "", ns ? "/" : "", name);
    return dserr_prefix(err, "items[%zu]", i);
  }
  return 0;
}

/* ---------- a large file decoded by two threads ----------
 *
 * A worker decodes the second half of the file's items into a model of its own (its objects
 * in its own arena, its strings interned through a front of the model's table) while the
 * calling thread decodes the first half into the model; when the calling thread's reader
 * reaches the item the worker started at, the worker's objects are appended after its own
 * (doc/doc.h, doc_split). Anything out of the ordinary in the worker's half (an object that
 * does not decode, JSON the fast reader leaves to yajl, a kind the worker does not take, a
 * guessed start that was not an item's) makes the calling thread read that half itself, so
 * that what is decoded, its order and every message are those of one thread reading the file.
 * The worker takes the kinds that only add objects to the model's lists; a KubeVirt CR (written
 * in place), the OpenShift objects, metrics and kinds the model skips (logged) are left to the
 * calling thread. */

typedef struct split_worker {
  const char *path;
  uint64_t at;
  model *part;           /* the worker's objects; NULL once joined (taken) */
  intern_table *strings; /* part's: a front of the model's table */
  atomic_bool stop;
  pthread_t thread;
  bool running;
  int rc;
  uint64_t resume;
  size_t count;
  dserr err;
} split_worker;

static int on_worker_item(void *ctx, doc_node *item, dserr *err) {
  static const char *const kinds[] = {"Pod",
                                      "Node",
                                      "Namespace",
                                      "PodDisruptionBudget",
                                      "PriorityClass",
                                      "PersistentVolumeClaim",
                                      "VirtualMachineInstance",
                                      "VirtualMachineInstanceMigration"};
  split_worker *w = ctx;
  if (atomic_load_explicit(&w->stop, memory_order_relaxed))
    return 1;
  const char *kind = doc_str(doc_get(item, "kind"));
  bool taken = false;
  for (size_t i = 0; kind && !taken && i < sizeof kinds / sizeof kinds[0]; i++)
    taken = strcmp(kind, kinds[i]) == 0;
  if (!taken)
    return 1;
  return decode_object(w->part, item, NULL, err) < 0 ? -1 : 0;
}

static void *worker_main(void *arg) {
  split_worker *w = arg;
  w->rc = doc_stream_items_at(w->path, w->at, unread_paths, on_worker_item, w, &w->resume,
                              &w->count, &w->err);
  return NULL;
}

static void worker_end(split_worker *w) {
  if (w->running) {
    pthread_join(w->thread, NULL);
    w->running = false;
  }
}

static bool split_join(void *ctx, uint64_t *resume, size_t *count) {
  stream_ctx *s = ctx;
  split_worker *w = s->split;
  worker_end(w);
  if (w->rc != 0)
    return false;
  model_adopt(s->m, w->part);
  w->part = NULL; /* taken: the sign that it was joined */
  *resume = w->resume;
  *count = w->count;
  s->index += w->count;
  return true;
}

static void split_drop(void *ctx) {
  split_worker *w = ((stream_ctx *)ctx)->split;
  atomic_store(&w->stop, true);
  worker_end(w);
}

/* Below this a file is read by one thread: starting the worker would cost more than it saves. */
#define SPLIT_MIN_BYTES (32u << 20)
/* how far past the middle a likely item start is looked for */
#define SPLIT_SPAN (4u << 20)

/* decode_snapshot_file_split; with hdr_arena, *header is the file's root without its items
 * (the whole object when the file is one) */
static int snapshot_file(model *m, const char *path, uint64_t min_bytes, size_t *by_worker,
                         arena *hdr_arena, doc_node **header, dserr *err) {
  stream_ctx s = {m, NULL, 0, NULL, NULL, NULL};
  split_worker w = {.path = path};
  *by_worker = 0;
  doc_split split = {0, split_join, split_drop, &s};
  intern_table *strings = m->strings;
  struct stat st;
  bool two = stat(path, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size >= min_bytes &&
             doc_find_item(path, (uint64_t)st.st_size / 2, SPLIT_SPAN, &w.at) == 0;
  if (two) {
    w.strings = intern_new_front(strings);
    w.part = model_new_view(w.strings);
    w.part->keep_pod_conditions = m->keep_pod_conditions;
    m->strings = intern_new_front(strings);
    s.split = &w;
    split.at = w.at;
    w.running = pthread_create(&w.thread, NULL, worker_main, &w) == 0;
    if (!w.running)
      w.rc = -1; /* no thread: the calling thread reads it all */
  }
  int rc = doc_stream_file_split(path, unread_paths, two ? &split : NULL, on_item, &s, hdr_arena,
                                 header, err);
  if (two) {
    atomic_store(&w.stop, true);
    worker_end(&w); /* joined or dropped already; this only makes sure */
    *by_worker = w.part ? 0 : w.count;
    model_free(w.part);
    intern_free(w.strings);
    intern_free(m->strings);
    m->strings = strings;
  }
  if (rc < 0) {
    if (strncmp(err->msg, path, strlen(path)) != 0)
      dserr_prefix(err, "%s", path);
    return -1;
  }
  return 0;
}

int decode_snapshot_file_split(model *m, const char *path, uint64_t min_bytes, size_t *by_worker,
                               dserr *err) {
  return snapshot_file(m, path, min_bytes, by_worker, NULL, NULL, err);
}

int decode_snapshot_file(model *m, const char *path, dserr *err) {
  size_t by_worker;
  return decode_snapshot_file_split(m, path, SPLIT_MIN_BYTES, &by_worker, err);
}

int decode_snapshot_file_shape(model *m, const char *path, const char **single_kind, dserr *err) {
  size_t by_worker;
  arena *hdr = arena_new(16 * 1024);
  doc_node *header = NULL;
  *single_kind = NULL;
  int rc = snapshot_file(m, path, SPLIT_MIN_BYTES, &by_worker, hdr, &header, err);
  const char *kind = rc == 0 ? doc_str(doc_get(header, "kind")) : NULL;
  size_t len = kind ? strlen(kind) : 0;
  /* kubectl prints a v1 List; `kubectl get --raw` a typed one (NodeList) */
  if (kind && *kind && !(len >= 4 && !strcmp(kind + len - 4, "List")))
    *single_kind = arena_strdup(m->mem, kind);
  arena_free(hdr);
  return rc;
}

int decode_list_page(model *m, const char *name, const char *body, size_t len,
                     const char *kind_hint, char **next_token, size_t *count, dserr *err) {
  return decode_list_page_skipping(m, name, body, len, kind_hint, NULL, NULL, next_token, count,
                                   err);
}

int decode_stream_page(const char *name, const char *body, size_t len, const char *kind,
                       doc_item_cb cb, void *ctx, arena *hdr, doc_node **header, dserr *err) {
  if (!docpb_is_protobuf(body, len))
    return doc_stream_memory_skipping(DOC_FMT_JSON, name, body, len, unread_paths, cb, ctx, hdr,
                                      header, err);
  const pb_msg *schema = decode_pb_schema(kind);
  size_t items;
  if (!schema)
    return dserr_set(err, "%s: a protobuf list of %s is not read (only JSON)", name,
                     kind ? kind : "objects of no known kind");
  return docpb_stream_list(name, (const uint8_t *)body, len, NULL, schema, cb, ctx, hdr, header,
                           &items, err);
}

int decode_list_page_skipping(model *m, const char *name, const char *body, size_t len,
                              const char *kind_hint, decode_skip_fn skip, void *skip_ctx,
                              char **next_token, size_t *count, dserr *err) {
  stream_ctx s = {m, kind_hint, 0, skip, skip_ctx, NULL};
  arena *hdr = arena_new(4096);
  doc_node *header = NULL;
  int rc = decode_stream_page(name, body, len, kind_hint, on_item, &s, hdr, &header, err);
  if (rc == 0) {
    const char *cont = doc_str(doc_path(header, "metadata", "continue", NULL));
    *next_token = cont && *cont ? strdup(cont) : NULL;
    *count = s.index;
  } else if (strncmp(err->msg, name, strlen(name)) != 0) {
    dserr_prefix(err, "%s", name);
  }
  arena_free(hdr);
  return rc < 0 ? -1 : rc;
}
