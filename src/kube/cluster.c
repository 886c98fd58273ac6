/* cluster.c - discovery, paged reads and live evictions; see cluster.h. */
#include "cluster.h"

#include "../decode/decode.h"
#include "../kubevirt/vm.h"
#include "../obs/log.h"
#include "../obs/metrics.h"
#include "../doc/doc.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "pager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* ---------- helpers ---------- */

int kube_get_doc(kube_client *c, const char *path, arena *a, doc_node **root, long *status,
                 dserr *err) {
  kube_response r = {0};
  *status = 0;
  if (kube_request(c, "GET", path, NULL, NULL, &r, err) < 0)
    return -1;
  *status = r.status;
  int rc = 0;
  if (r.status == 200) {
    rc = doc_parse_json(a, path, r.body, r.len, root, err);
  } else {
    char msg[1024], reason[128];
    kube_status_text(&r, msg, sizeof msg, reason, sizeof reason);
    rc = dserr_set(err, "GET %s: HTTP %ld: %s", path, r.status, *msg ? msg : "(no message)");
  }
  kube_response_free(&r);
  return rc;
}

int kube_merge_patch(kube_client *c, const char *path, const char *body, dserr *err) {
  kube_response r = {0};
  if (kube_request(c, "PATCH", path, "application/merge-patch+json", body, &r, err) < 0)
    return dserr_prefix(err, "PATCH %s", path);
  int rc = 0;
  if (r.status < 200 || r.status >= 300) {
    char msg[1024], reason[128];
    kube_status_text(&r, msg, sizeof msg, reason, sizeof reason);
    rc = dserr_set(err, "PATCH %s: HTTP %ld: %s", path, r.status, *msg ? msg : "(no message)");
  }
  kube_response_free(&r);
  return rc;
}

size_t kube_write_over_since(kube_client *c, const model *m, const fw_history *h) {
  size_t sent = 0;
  for (size_t i = 0; i < m->nodes.n; i++) {
    const node *n = m->nodes.items[i];
    int64_t since = fw_history_since(h, n->name);
    if (since == n->over_since)
      continue;
    strbuf body = {0}, path = {0};
    sb_append(&body, "{\"metadata\":{\"annotations\":{\"" NODE_OVER_SINCE_ANNOTATION "\":");
    if (since > 0) {
      sb_appendc(&body, '"');
      time_format_rfc3339(&body, since);
      sb_appendc(&body, '"');
    } else {
      sb_append(&body, "null");
    }
    sb_append(&body, "}}}");
    sb_append(&path, "/api/v1/nodes/");
    kube_path_escape(&path, n->name);
    dserr err;
    if (kube_merge_patch(c, sb_str(&path), sb_str(&body), &err) < 0)
      LOGE(NULL, "Could not record on the node since when it has been overutilized", err.msg,
           LSTR("node", n->name));
    else
      LOGV(3, NULL, "Recorded on the node since when it has been overutilized",
           LSTR("node", n->name), LSTR("annotation", NODE_OVER_SINCE_ANNOTATION),
           LINT("since", since));
    sent++;
    sb_free(&body);
    sb_free(&path);
  }
  return sent;
}

/* ---------- discovery ---------- */

int kube_discover(kube_client *c, kube_discovery *d, dserr *err) {
  memset(d, 0, sizeof *d);
  arena *a = arena_new(64 * 1024);
  doc_node *root;
  long status;
  int rc = -1;
  if (kube_get_doc(c, "/version", a, &root, &status, err) == 0) {
    const char *maj = doc_str(doc_get(root, "major")), *min = doc_str(doc_get(root, "minor"));
    const char *gv = doc_str(doc_get(root, "gitVersion"));
    d->server_major = maj ? atoi(maj) : 0;
    d->server_minor = min ? atoi(min) : 0; /* "33+" reads as 33 */
    snprintf(d->git_version, sizeof d->git_version, "%s", gv ? gv : "");
  } else {
    goto out;
  }
  /* the preferred version of the policy group is the Eviction body's apiVersion */
  if (kube_get_doc(c, "/apis", a, &root, &status, err) < 0)
    goto out;
  const doc_node *groups = doc_get(root, "groups");
  for (size_t i = 0; groups && groups->type == DOC_SEQ && i < groups->n; i++) {
    const char *name = doc_str(doc_get(groups->items[i], "name"));
    const char *pref =
        doc_str(doc_path(groups->items[i], "preferredVersion", "groupVersion", NULL));
    if (name && !strcmp(name, "policy") && pref)
      snprintf(d->policy_group_version, sizeof d->policy_group_version, "%s", pref);
    if (name && !strcmp(name, "kubevirt.io")) {
      const doc_node *versions = doc_get(groups->items[i], "versions");
      for (size_t k = 0; versions && versions->type == DOC_SEQ && k < versions->n; k++) {
        const char *gv = doc_str(doc_get(versions->items[k], "groupVersion"));
        if (gv && !strcmp(gv, "kubevirt.io/v1"))
          d->kubevirt = true;
      }
    }
  }
  if (kube_get_doc(c, "/api/v1", a, &root, &status, err) < 0)
    goto out;
  const doc_node *res = doc_get(root, "resources");
  for (size_t i = 0; res && res->type == DOC_SEQ && i < res->n; i++) {
    const char *name = doc_str(doc_get(res->items[i], "name"));
    const char *kind = doc_str(doc_get(res->items[i], "kind"));
    if (name && kind && !strcmp(name, "pods/eviction") && !strcmp(kind, "Eviction"))
      d->eviction_supported = true;
  }
  rc = 0;
out:
  arena_free(a);
  return rc;
}

/* ---------- reading the cluster ---------- */

/* GETs path page by page (kube/pager.h: the next page is fetched while this one is decoded)
 * and hands each page to fn. A 410 on a later page (the continue token expired) returns
 * KUBE_READ_EXPIRED. */
static int list_pages(kube_client *c, const char *path, const char *accept, const char *min_rv,
                      const char *what, int page, kube_page_fn fn, void *ctx, long *status,
                      kube_read_stats *stats, dserr *err) {
  kube_pager_stats st;
  int rc = kube_pager_run_from(c, path, accept, min_rv, page, fn, ctx, &st, err);
  if (status)
    *status = st.status;
  if (stats) {
    stats->fetch_s += st.fetch_s;
    stats->decode_s += st.decode_s;
    stats->pages += st.pages;
    stats->bytes += st.bytes;
    stats->items += st.items;
  }
  if (rc < 0) {
    dserr_prefix(err, "failed to list %s", path);
    return st.expired ? KUBE_READ_EXPIRED : -1;
  }
  LOGV(4, NULL, "Listed objects", LSTR("kind", what), LUINT("count", st.items),
       LUINT("pages", st.pages), LSTR("encoding", kube_pager_encoding(&st)));
  return 0;
}

/* One object of a page could not be decoded: it is left out of this cycle (the rest of the
 * cluster is still read), said on an error line and counted. */
void kube_object_skipped(const char *kind, const char *object, const char *why) {
  LOGE(NULL, "Skipping an object that cannot be decoded; the cycle goes on without it", why,
       LSTR("kind", kind), LSTR("object", object));
  metrics_objects_skipped(kind);
}

static void skip_object(void *ctx, const char *kind, const char *object, const char *why) {
  (void)ctx;
  kube_object_skipped(kind, object, why);
}

typedef struct {
  model *m;
  const char *kind;
} model_page;

static int page_into_model(void *ctx, const char *url, const kube_response *r, char **token,
                           size_t *count, dserr *err) {
  model_page *mp = ctx;
  return decode_list_page_skipping(mp->m, url, r->body, r->len, mp->kind, skip_object, NULL, token,
                                   count, err);
}

const char *kube_list_accept(const char *kind) {
  return decode_pb_schema(kind) ? KUBE_ACCEPT_PROTOBUF : NULL;
}

static int list_into(kube_client *c, model *m, const char *path, const char *kind,
                     const char *min_rv, int page, kube_read_stats *stats, dserr *err) {
  model_page mp = {m, kind};
  return list_pages(c, path, kube_list_accept(kind), min_rv, kind, page, page_into_model, &mp, NULL,
                    stats, err);
}

int kube_list_into(kube_client *c, model *m, const char *path, const char *kind, int page,
                   dserr *err) {
  return list_into(c, m, path, kind, NULL, page, NULL, err);
}

typedef struct {
  doc_item_cb cb;
  void *ctx;
  size_t count;
} item_page;

static int count_item(void *ctx, doc_node *item, dserr *err) {
  item_page *ip = ctx;
  ip->count++;
  return ip->cb(ip->ctx, item, err);
}

static int page_items(void *ctx, const char *url, const kube_response *r, char **token,
                      size_t *count, dserr *err) {
  item_page *ip = ctx;
  arena *hdr = arena_new(4096);
  doc_node *header = NULL;
  ip->count = 0;
  int rc = doc_stream_memory(DOC_FMT_JSON, url, r->body, r->len, count_item, ip, hdr, &header, err);
  if (rc == 0) {
    const char *cont = doc_str(doc_path(header, "metadata", "continue", NULL));
    *token = cont && *cont ? strdup(cont) : NULL;
    *count = ip->count;
  }
  arena_free(hdr);
  return rc < 0 ? -1 : rc;
}

int kube_list_each(kube_client *c, const char *path, int page, doc_item_cb cb, void *ctx,
                   long *status, dserr *err) {
  item_page ip = {cb, ctx, 0};
  return list_pages(c, path, NULL, NULL, path, page > 0 ? page : 500, page_items, &ip, status, NULL,
                    err);
}

int kube_read_cluster(kube_client *c, model *m, bool kubevirt, int page, dserr *err) {
  return kube_read_cluster_stats(c, m, kubevirt, page, NULL, err);
}

int kube_read_cluster_stats(kube_client *c, model *m, bool kubevirt, int page,
                            kube_read_stats *stats, dserr *err) {
  /* the cycle's kinds, in the registry's order (decode.h), from the API server's watch cache
   * (KUBE_LIST_ANY_RV) */
  for (size_t i = 0; i < KIND_CYCLE_COUNT; i++) {
    const decode_kind *k = &decode_kinds[i];
    if (k->kubevirt && !kubevirt)
      continue;
    int rc = list_into(c, m, k->path, k->kind, KUBE_LIST_ANY_RV, page, stats, err);
    if (rc < 0)
      return rc;
  }
  return 0;
}

int kube_priority_class_value(void *ctx, const char *name, int32_t *value, dserr *err) {
  kube_client *c = ctx;
  strbuf path = {0};
  sb_append(&path, "/apis/scheduling.k8s.io/v1/priorityclasses/");
  kube_path_escape(&path, name);
  arena *a = arena_new(8192);
  doc_node *root;
  long status;
  int rc = kube_get_doc(c, sb_str(&path), a, &root, &status, err);
  if (rc == 0) {
    const doc_node *v = doc_get(root, "value");
    if (!v || v->type != DOC_INT)
      rc = dserr_set(err, "priorityclass %s has no integer value", name);
    else
      *value = (int32_t)v->v.i;
  }
  arena_free(a);
  sb_free(&path);
  return rc;
}

/* ---------- evictions and events ---------- */

/* The answer to a request as a sink result; msg gets the server's text. */
static sink_result answer_of(const kube_response *r, char *msg, size_t cap) {
  char reason[128];
  kube_status_text(r, msg, cap, reason, sizeof reason);
  if (!*msg)
    snprintf(msg, cap, "the server answered HTTP %ld", r->status);
  return r->status == 429 || !strcmp(reason, "TooManyRequests") ? SINK_TOO_MANY
         : r->status == 404 || !strcmp(reason, "NotFound")      ? SINK_NOT_FOUND
                                                                : SINK_ERROR;
}

/* A targeted move: a VirtualMachineInstanceMigration of the launcher's VMI to req->to_node.
 * 1 when KubeVirt does not know spec.addedNodeSelector (the caller evicts instead). */
static int live_migrate(live_sink *s, const pod *p, const eviction_request *req, char *msg,
                        size_t cap, sink_result *res) {
  const vmi_obj *v = s->m ? model_pod_vmi(s->m, p) : NULL;
  const char *vmi = v ? v->name : pod_x(p)->kubevirt_domain;
  if (!vmi) {
    snprintf(msg, cap, "not sent: the pod runs no VMI (no kubevirt.io/domain annotation)");
    *res = SINK_ERROR;
    return 0;
  }
  strbuf body = {0}, path = {0}, annotation = {0};
  sb_printf(&annotation, "triggered by %s/%s: %s", req->profile, req->strategy, req->reason);
  sb_append(&body, "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstanceMigration\","
                   "\"metadata\":{\"generateName\":\"" KUBEVIRT_MOVE_PREFIX "\",\"namespace\":");
  sb_append_json_str(&body, p->ns);
  sb_append(&body, ",\"labels\":{\"" KUBEVIRT_MOVE_LABEL "\":\"true\"},\"annotations\":{\"reason\":");
  sb_append_json_str(&body, sb_str(&annotation));
  sb_append(&body, ",\"requested-by\":\"sigs.k8s.io/descheduler\",\"" KUBEVIRT_MOVE_FROM_ANNOTATION "\":");
  sb_append_json_str(&body, p->node_name);
  sb_append(&body, "}},\"spec\":{\"vmiName\":");
  sb_append_json_str(&body, vmi);
  sb_append(&body, ",\"addedNodeSelector\":{\"kubernetes.io/hostname\":");
  sb_append_json_str(&body, req->to_node);
  sb_append(&body, "}}}");
  sb_append(&path, "/apis/kubevirt.io/v1/namespaces/");
  kube_path_escape(&path, p->ns);
  /* strict: a server whose CRD lacks the field refuses it instead of dropping it, which would
   * leave an untargeted migration the scheduler places anywhere */
  sb_append(&path, "/virtualmachineinstancemigrations?fieldValidation=Strict");
  kube_response r = {0};
  dserr err;
  int unsupported = 0;
  if (kube_request(s->client, "POST", sb_str(&path), NULL, sb_str(&body), &r, &err) < 0) {
    snprintf(msg, cap, "%s", err.msg);
    *res = r.maybe_delivered ? SINK_UNKNOWN : SINK_ERROR;
  } else if (r.status >= 200 && r.status < 300) {
    arena *a = arena_new(4096);
    doc_node *root = NULL;
    dserr perr;
    const char *name = NULL;
    if (doc_parse_json(a, "VirtualMachineInstanceMigration", r.body, r.len, &root, &perr) == 0)
      name = doc_str(doc_path(root, "metadata", "name", NULL));
    snprintf(msg, cap, "%s", name ? name : KUBEVIRT_MOVE_PREFIX "(name not read)");
    arena_free(a);
    *res = SINK_MIGRATING;
  } else {
    *res = answer_of(&r, msg, cap);
    unsupported = r.status == 400 && strstr(msg, "addedNodeSelector") && strstr(msg, "unknown field");
  }
  kube_response_free(&r);
  sb_free(&body);
  sb_free(&path);
  sb_free(&annotation);
  return unsupported;
}

static sink_result live_evict(eviction_sink *self, const pod *p, const eviction_request *req,
                              char *msg, size_t cap) {
  live_sink *s = (live_sink *)self;
  bool targeted = req->to_node && !(s->no_targeted_moves && *s->no_targeted_moves);
  if (self->dry_run) {
    if (targeted)
      snprintf(msg, cap, "not sent (dry run)");
    return targeted ? SINK_MIGRATING : SINK_EVICTED;
  }
  if (s->stop && __atomic_load_n(s->stop, __ATOMIC_ACQUIRE)) {
    snprintf(msg, cap, "not sent: the descheduler is shutting down");
    return SINK_ERROR;
  }
  if (targeted) {
    sink_result res;
    if (!live_migrate(s, p, req, msg, cap, &res))
      return res;
    LOGW(NULL, "KubeVirt does not know VirtualMachineInstanceMigration spec.addedNodeSelector "
               "(KubeVirt 1.6 or later has it): targeted moves are evictions from now on",
         LSTR("answer", msg));
    if (s->no_targeted_moves)
      *s->no_targeted_moves = true;
  }
  strbuf body = {0}, path = {0}, annotation = {0};
  sb_printf(&annotation, "triggered by %s/%s: %s", req->profile, req->strategy, req->reason);
  sb_append(&body, "{\"apiVersion\":");
  sb_append_json_str(&body, s->policy_group_version);
  sb_append(&body, ",\"kind\":\"Eviction\",\"metadata\":{\"name\":");
  sb_append_json_str(&body, p->name);
  sb_append(&body, ",\"namespace\":");
  sb_append_json_str(&body, p->ns);
  sb_append(&body, ",\"annotations\":{\"reason\":");
  sb_append_json_str(&body, sb_str(&annotation));
  sb_append(&body, ",\"requested-by\":\"sigs.k8s.io/descheduler\"}},\"deleteOptions\":{");
  if (req->has_grace_period)
    sb_printf(&body, "\"gracePeriodSeconds\":%lld", (long long)req->grace_period_seconds);
  /* the pod the cycle decided on, not another of the same name created since: the API server
   * checks the UID in the eviction itself and answers 409 for another pod */
  if (*p->uid) {
    sb_append(&body, req->has_grace_period ? "," : "");
    sb_append(&body, "\"preconditions\":{\"uid\":");
    sb_append_json_str(&body, p->uid);
    sb_append(&body, "}");
  }
  sb_append(&body, "}}");
  sb_append(&path, "/api/v1/namespaces/");
  kube_path_escape(&path, p->ns);
  sb_append(&path, "/pods/");
  kube_path_escape(&path, p->name);
  sb_append(&path, "/eviction");
  kube_response r = {0};
  dserr err;
  sink_result res;
  if (kube_request(s->client, "POST", sb_str(&path), NULL, sb_str(&body), &r, &err) < 0) {
    snprintf(msg, cap, "%s", err.msg);
    res = r.maybe_delivered ? SINK_UNKNOWN : SINK_ERROR;
  } else if (r.status >= 200 && r.status < 300) {
    res = SINK_EVICTED;
  } else {
    res = answer_of(&r, msg, cap);
  }
  kube_response_free(&r);
  sb_free(&body);
  sb_free(&path);
  sb_free(&annotation);
  return res;
}

static void live_event(eviction_sink *self, const pod *p, const char *type, const char *reason,
                       const char *note) {
  live_sink *s = (live_sink *)self;
  event_regarding about = {"v1", "Pod", p->ns, p->name, p->uid};
  event_sender_emit(s->events, &about, type, reason, "Descheduled", note, s->hostname);
}

void live_sink_init(live_sink *s, kube_client *c, event_sender *events, const char *group_version,
                    const char *hostname, bool dry_run, volatile sig_atomic_t *stop) {
  memset(s, 0, sizeof *s);
  s->base.evict = live_evict;
  s->base.event = dry_run ? NULL : live_event;
  s->base.dry_run = dry_run;
  s->client = c;
  s->events = events;
  s->policy_group_version = group_version;
  s->hostname = hostname;
  s->stop = stop;
}
