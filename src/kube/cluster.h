/* cluster.h - what live mode reads from and writes to the API server.
 *
 * Discovery (the Eviction API's group version, KubeVirt's presence, the server version),
 * paged LISTs of every kind the decisions need into the model (the same decode code as
 * `simulate`), the live eviction sink (policy/v1 Eviction, upstream's annotations, events),
 * a PriorityClass lookup for the policy's priorityThreshold.name, and plain GET / list / merge
 * patch of single objects for the runbook commands (check, verify, pause), which read objects
 * the model does not keep and decode them themselves. */
#ifndef DS_KUBE_CLUSTER_H
#define DS_KUBE_CLUSTER_H

#include "../framework/framework.h"
#include "../model/model.h"
#include "../doc/doc.h"
#include "client.h"
#include "events.h"

#include <signal.h>

typedef struct {
  char policy_group_version[64]; /* "policy/v1": the Eviction body's apiVersion */
  bool eviction_supported;       /* core v1 lists pods/eviction of kind Eviction */
  bool kubevirt;                 /* kubevirt.io/v1 is served */
  int server_major, server_minor;
  char git_version[64];
} kube_discovery;

int kube_discover(kube_client *c, kube_discovery *d, dserr *err);

/* Lists nodes, pods, namespaces, PDBs, priority classes, PVCs (and VMIs, VMIMs and the
 * KubeVirt CR when kubevirt) into m with limit=`page` pages. Does not call model_finish.
 * A failed request or a page that is not a well-formed list fails the whole read (a cycle
 * that cannot list its inputs evicts nothing). One object that does not decode is skipped:
 * an error line names it and descheduler_objects_skipped_total{kind} counts it. */
int kube_read_cluster(kube_client *c, model *m, bool kubevirt, int page, dserr *err);

/* What reading cost, for the cycle's timings line (docs/performance.md): seconds from sending
 * each page's request to holding its whole body, seconds decoding pages into the model, and
 * the pages, body bytes and items read. Added to, never reset. */
typedef struct {
  double fetch_s, decode_s;
  size_t pages, bytes, items;
} kube_read_stats;
/* kube_read_cluster that also adds its costs to *stats (may be NULL). */
int kube_read_cluster_stats(kube_client *c, model *m, bool kubevirt, int page,
                            kube_read_stats *stats, dserr *err);
/* kube_read_cluster's answer when a later page's continue token had expired (HTTP 410, the
 * list fell out of etcd's history): what was read is incomplete; a fresh model read again
 * from the start is what client-go's pager does (a full list). */
#define KUBE_READ_EXPIRED (-2)

/* The error line and the descheduler_objects_skipped_total count of one object left out of
 * the model because it does not decode (object: "namespace/name"). */
void kube_object_skipped(const char *kind, const char *object, const char *why);

/* The Accept header of a LIST of kind: protobuf for the kinds the decoders read from it
 * (decode_pb_schema), as client-go asks for them; NULL (JSON) for the others. Watches stay
 * JSON (a cycle's events are few and small). */
const char *kube_list_accept(const char *kind);

/* One paged LIST (path like "/api/v1/nodes", kind the items' kind) into m. */
int kube_list_into(kube_client *c, model *m, const char *path, const char *kind, int page,
                   dserr *err);

/* ---------- single objects and small lists, for check, verify and pause ---------- */

/* GETs path and parses the JSON body into a tree in a. 0 on HTTP 200; otherwise -1 with err
 * (`GET <path>: HTTP 404: <server message>`, or the transport failure) and *status the HTTP
 * status (0 when no response came), so callers can tell a missing object (404) apart. */
int kube_get_doc(kube_client *c, const char *path, arena *a, doc_node **root, long *status,
                 dserr *err);

/* Lists a collection page by page (limit=`page`, 500 when <= 0, and continue, as client-go's
 * pager) and calls cb for every item, one at a time, with the item's tree in a scratch arena
 * (copy what you keep). path may carry a query ("...?labelSelector=a%3Db"). A failure is -1
 * with err and *status as for kube_get_doc (404: the resource is not served). */
int kube_list_each(kube_client *c, const char *path, int page, doc_item_cb cb, void *ctx,
                   long *status, dserr *err);

/* Sends a JSON merge patch (RFC 7386) to path. 0 on 2xx; else -1 with the server's message. */
int kube_merge_patch(kube_client *c, const char *path, const char *body, dserr *err);

/* Writes the hysteresis state (framework.h, fw_history) back to the nodes of m whose
 * NODE_OVER_SINCE_ANNOTATION differs from it: the time where a node has been overutilized, no
 * annotation where it is not. One JSON merge patch per changed node; a patch that fails is
 * logged and the cycle's decisions stand (the next cycle tries again). Returns the patches
 * sent. */
size_t kube_write_over_since(kube_client *c, const model *m, const fw_history *h);

/* plugin_env.priority_class_value over the API (GET priorityclasses/<name>). ctx = client. */
int kube_priority_class_value(void *ctx, const char *name, int32_t *value, dserr *err);

typedef struct {
  eviction_sink base;
  kube_client *client;
  const char *policy_group_version;
  const char *hostname;
  volatile sig_atomic_t *stop; /* set by SIGTERM/SIGINT: no new requests */
  event_sender *events;        /* Events are queued to it (sent in the background) */
  /* set once KubeVirt refused spec.addedNodeSelector (a release before 1.6): targeted moves
   * are evictions from then on (borrowed, kept by the caller across cycles; NULL: not kept) */
  bool *no_targeted_moves;
  const model *m; /* the cycle's model: the VMI a launcher runs (borrowed) */
} live_sink;

/* A sink that POSTs evictions (dry_run false) or only records them (dry_run true, upstream's
 * --dry-run: "Evicted pod in dry run mode", no API call, no events). Each Eviction carries the
 * pod's UID as deleteOptions.preconditions.uid (upstream sends none): the API server refuses
 * it (409) when the pod of that name is another one, created since the cycle read it. Events
 * are queued to `events` (events.h: sent in the background by a client of their own).
 * A targeted move (eviction_request.to_node) creates a VirtualMachineInstanceMigration of the
 * launcher's VMI with spec.addedNodeSelector {kubernetes.io/hostname: NODE}, validated
 * strictly: when KubeVirt's CRD does not know the field, the sink logs it once, sets
 * *no_targeted_moves and evicts the pod instead. */
void live_sink_init(live_sink *s, kube_client *c, event_sender *events, const char *group_version,
                    const char *hostname, bool dry_run, volatile sig_atomic_t *stop);

#endif
