/* snapshot.c - streaming a v1 List (file or API page) into the model; see decode.h.
 *
 * A snapshot file is the user's own input: an object that does not decode fails it (exit 2
 * names the item and the field). An API page in live mode may skip such an object instead:
 * decoders add an object to the model only once it is fully read, except the KubeVirt CR,
 * which is written in place and so is restored when its decoding fails. */
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What no decoder of objects.c reads, of any kind: left out of the items' trees (still
 * checked as JSON), so that reading a pod builds a third of it. metadata.managedFields is
 * about half of a pod as the API server serves it; then the container fields no plugin
 * looks at, the node's image list and system info, a VMI's domain and interfaces. A path
 * added here must be one no decoder reads (tests/conformance and tests/unit/test_decode.c
 * decode with the list in place). */
#define CONTAINER_UNREAD(c)                                                                        \
  c "[].env", c "[].envFrom", c "[].ports", c "[].volumeMounts", c "[].volumeDevices",             \
      c "[].livenessProbe", c "[].readinessProbe", c "[].startupProbe", c "[].lifecycle",          \
      c "[].securityContext", c "[].command", c "[].args"
#define STATUS_UNREAD(c) c "[].image", c "[].imageID", c "[].containerID", c "[].lastState"
static const char *const unread_paths[] = {"metadata.managedFields",
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

const char *const *decode_unread_paths(void) { return unread_paths; }

typedef struct {
  model *m;
  const char *kind_hint;
  size_t index;
  decode_skip_fn skip;
  void *skip_ctx;
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
      s->skip(s->skip_ctx, kind && *kind ? kind : s->kind_hint ? s->kind_hint : "object", object,
              err->msg);
      return 0;
    }
    if (name)
      return dserr_prefix(err, "items[%zu] (%s %s%s%s)", i, kind ? kind : s->kind_hint ? s->kind_hint : "object",
                          ns ? ns : "", ns ? "/" : "", name);
    return dserr_prefix(err, "items[%zu]", i);
  }
  return 0;
}

int decode_snapshot_file(model *m, const char *path, dserr *err) {
  stream_ctx s = {m, NULL, 0, NULL, NULL};
  if (doc_stream_file_skipping(path, unread_paths, on_item, &s, NULL, NULL, err) < 0) {
    if (strncmp(err->msg, path, strlen(path)) != 0)
      dserr_prefix(err, "%s", path);
    return -1;
  }
  return 0;
}

int decode_list_page(model *m, const char *name, const char *body, size_t len,
                     const char *kind_hint, char **next_token, size_t *count, dserr *err) {
  return decode_list_page_skipping(m, name, body, len, kind_hint, NULL, NULL, next_token, count,
                                   err);
}

int decode_list_page_skipping(model *m, const char *name, const char *body, size_t len,
                              const char *kind_hint, decode_skip_fn skip, void *skip_ctx,
                              char **next_token, size_t *count, dserr *err) {
  stream_ctx s = {m, kind_hint, 0, skip, skip_ctx};
  arena *hdr = arena_new(4096);
  doc_node *header = NULL;
  int rc = doc_stream_memory_skipping(DOC_FMT_JSON, name, body, len, unread_paths, on_item, &s,
                                      hdr, &header, err);
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
