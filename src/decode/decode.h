/* decode.h - Kubernetes objects (JSON or YAML) into the model.
 *
 * One code path for a snapshot file (`kubectl get ... -A -o json|yaml`, a v1 List) and for an
 * API list page: the streaming reader in doc/doc.h hands over one object at a time and
 * decode_object keeps what the model needs. Objects of kinds the model does not use are
 * counted and skipped (V4 log). A malformed object is an error naming the object and the
 * field. */
#ifndef DS_DECODE_H
#define DS_DECODE_H

#include "../model/model.h"
#include "../doc/doc.h"
#include "../doc/doc_pb.h"
#include "../util/err.h"

/* ---------- the kinds ----------
 * One table names every API kind the descheduler reads, once: the lister (kube_read_cluster),
 * the watch cache of Deployment mode and decode_object all walk it. The first
 * KIND_CYCLE_COUNT rows are what a cycle lists (in this order) and Deployment mode watches;
 * the rest are decoded from files or single GETs only. Adding a kind is one row here (an id
 * below and a row in objects.c's decode_kinds) plus its decoder (docs/architecture.md). */
typedef enum {
  KIND_NODE,
  KIND_POD,
  KIND_NAMESPACE,
  KIND_PDB,
  KIND_PRIORITY_CLASS,
  KIND_PVC,
  KIND_VMI,
  KIND_VMIM,
  KIND_KUBEVIRT,
  KIND_CYCLE_COUNT, /* the kinds above are listed by a cycle */
  KIND_ROUTE = KIND_CYCLE_COUNT,
  KIND_SCHEDULER,
  KIND_KUBEDESCHEDULER,
  KIND_NODE_METRICS,
  KIND_POD_METRICS,
  KIND_COUNT
} decode_kind_id;

#define KIND_NO_SLOT ((size_t)-1)

struct decode_ctx; /* objects.c's decoding state */

typedef struct {
  const char *kind;   /* "Pod" */
  const char *path;   /* the collection: "/api/v1/pods"; NULL for a kind never listed */
  const char *plural; /* its resource: "pods" */
  bool kubevirt;      /* listed and watched only where the API serves kubevirt.io/v1 */
  /* where a decoded object goes in a model: its MODEL_VEC (KIND_NO_SLOT: not a vector, e.g.
   * the KubeVirt CR), and its namespace and name fields (ns KIND_NO_SLOT: cluster-scoped) */
  size_t vec, ns, name;
  int (*decode)(struct decode_ctx *c, const doc_node *obj);
} decode_kind;

extern const decode_kind decode_kinds[KIND_COUNT];
/* The row of a kind by its name ("Pod"), or NULL. */
const decode_kind *decode_kind_named(const char *kind);

/* Adds one object to the model. `kind_hint` is used when the object has no `kind` (items of
 * a typed API list such as PodList carry none): "Pod", "Node", ... or NULL.
 * Errors name the field path inside the object. */
int decode_object(model *m, const doc_node *obj, const char *kind_hint, dserr *err);

/* Streams a snapshot file (v1 List or a single object, JSON or YAML) into the model.
 * Does not call model_finish. Errors are prefixed with the path and items[<i>]. */
int decode_snapshot_file(model *m, const char *path, dserr *err);
/* The same; a JSON file of min_bytes or more is decoded by two threads (the second half of its
 * items by a worker, snapshot.c), with the same objects, order and messages as one thread.
 * *by_worker: how many items the worker decoded (0: the calling thread read them all).
 * decode_snapshot_file uses 32 MiB; tests pass 0. */
int decode_snapshot_file_split(model *m, const char *path, uint64_t min_bytes, size_t *by_worker,
                               dserr *err);
/* decode_snapshot_file, also saying what the file's top level is: *single_kind is NULL for a
 * list (kind List or <Kind>List, or no kind), else the kind of the one object the file holds
 * (in the model's arena), so that a command that wants a whole cluster can refuse one object. */
int decode_snapshot_file_shape(model *m, const char *path, const char **single_kind, dserr *err);

/* Streams an API list response body held in memory into the model: JSON, or protobuf
 * (doc/doc_pb.h) when the body starts with its magic and kind_hint has a schema
 * (decode_pb_schema). On success *next_token is
 * the list's metadata.continue (heap copy, caller frees; NULL when the list is complete) and
 * *count the number of items. */
int decode_list_page(model *m, const char *name, const char *body, size_t len,
                     const char *kind_hint, char **next_token, size_t *count, dserr *err);

/* The parts of an object no decoder reads (NULL-terminated paths for
 * doc_stream_memory_skipping): metadata.managedFields, container fields no plugin reads... A
 * reader that parses objects itself (the watch cache) leaves them out the same way. */
const char *const *decode_unread_paths(void);

/* One API list page item by item to cb, as doc_stream_memory_skipping hands them (the parts
 * no decoder reads left unbuilt; *header the root without its items): JSON, or protobuf when
 * the body starts with its magic (a page of a kind without a schema is then refused). */
int decode_stream_page(const char *name, const char *body, size_t len, const char *kind,
                       doc_item_cb cb, void *ctx, arena *hdr, doc_node **header, dserr *err);

/* The fields of a Pod and of a Node the decoders read, by protobuf number (pbschema.c): a
 * PodList or NodeList page in kube-apiserver's protobuf encoding is read with them
 * (doc/doc_pb.h). */
extern const pb_msg decode_pod_pb;
extern const pb_msg decode_node_pb;
/* The protobuf schema of a list item of this kind ("Pod", "Node"), NULL when lists of that
 * kind are read as JSON only (custom resources are served in JSON). */
const pb_msg *decode_pb_schema(const char *kind);

/* ---------- actual utilization (usage.c) ---------- */

/* One Prometheus instant-query response (the HTTP API's JSON body) for `query` into
 * m->prom_answers. A well-formed answer that upstream refuses (an error status, a result that
 * is not a vector, a sample without `instance` or outside [0, 1]) is stored with its error
 * text and returns 0; only a body that is not such a response at all returns -1 with err
 * naming `name` and the field. NodeMetrics and PodMetrics objects go through decode_object
 * (kinds "NodeMetrics", "PodMetrics"). */
int decode_prom_response(model *m, const char *query, const char *name, const char *body,
                         size_t len, dserr *err);
/* The same from a parsed tree (errors without a name prefix). */
int decode_prom_answer(model *m, const char *query, const doc_node *root, dserr *err);
/* Stores an answer that failed before any response was read (e.g. the server could not be
 * reached): error is the text the plugins report. */
void decode_prom_failure(model *m, const char *query, const char *error);

typedef struct {
  bool prometheus;                  /* the file is a Prometheus response */
  bool node_list, pod_list;         /* a NodeMetricsList / PodMetricsList (possibly empty) */
  size_t node_metrics, pod_metrics; /* objects read */
} metrics_file_info;

/* A `simulate --metrics` file: a Prometheus instant-query response (`curl .../api/v1/query`),
 * answering `query` (not stored when query is NULL), or NodeMetrics / PodMetrics as
 * `kubectl get --raw /apis/metrics.k8s.io/v1beta1/nodes|pods` prints them (JSON or YAML;
 * items without a kind are told apart by `usage` / `containers`). Errors name the file and
 * the field. Call model_link_metrics afterwards. */
int decode_metrics_file(model *m, const char *path, const char *query, metrics_file_info *info,
                        dserr *err);
/* Live mode's rule (one bad object never stops a cycle for the rest): the same, but an item
 * that cannot be decoded is left out of the model and reported to skip with its kind, its
 * "namespace/name" (or "items[<i>]" when it has none) and why. The page itself must still
 * be well-formed JSON: a broken or truncated body fails as above. *count counts the items
 * read, skipped ones included. */
typedef void (*decode_skip_fn)(void *ctx, const char *kind, const char *object, const char *why);
int decode_list_page_skipping(model *m, const char *name, const char *body, size_t len,
                              const char *kind_hint, decode_skip_fn skip, void *skip_ctx,
                              char **next_token, size_t *count, dserr *err);

#endif
