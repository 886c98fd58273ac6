/* openshift.c - reading the OpenShift objects of the KubeDescheduler rendering; see
 * openshift.h. */
#include "openshift.h"

#include "../decode/decode.h"
#include "cluster.h"

#include <stdio.h>
#include <string.h>

/* GET path into a tree: 0 with *obj, or with *obj NULL when the object (or its API) is not
 * found; -1 with err otherwise (*status 0 for a transport failure). */
static int get_object(kube_client *c, const char *path, arena *a, doc_node **obj, long *status,
                      dserr *err) {
  *obj = NULL;
  if (kube_get_doc(c, path, a, obj, status, err) == 0)
    return 0;
  *obj = NULL;
  return *status == 404 ? 0 : -1;
}

static int decode_into(model *m, const doc_node *obj, const char *kind, const char *what,
                       dserr *err) {
  if (decode_object(m, obj, kind, err) < 0)
    return dserr_prefix(err, "%s", what);
  return 0;
}

int kube_read_openshift_objects(kube_client *c, model *m, char *route_error, size_t cap,
                                dserr *err) {
  arena *a = arena_new(16 * 1024);
  doc_node *obj;
  long status;
  int rc = -1;
  route_error[0] = 0;
  const char *route = "/apis/route.openshift.io/v1/namespaces/openshift-monitoring/routes/"
                      "prometheus-k8s";
  if (get_object(c, route, a, &obj, &status, err) < 0) {
    if (!status)
      goto out; /* transport failure: the cycle cannot read the cluster */
    snprintf(route_error, cap, "%s", err->msg);
  } else if (obj &&
             decode_into(m, obj, "Route", "route openshift-monitoring/prometheus-k8s", err) < 0) {
    goto out;
  }
  if (get_object(c, "/apis/config.openshift.io/v1/schedulers/cluster", a, &obj, &status, err) < 0)
    goto out;
  if (obj && decode_into(m, obj, "Scheduler", "scheduler cluster", err) < 0)
    goto out;
  rc = 0;
out:
  arena_free(a);
  return rc;
}

int kube_read_openshift_facts(kube_client *c, model *m, int page, char *route_error, size_t cap,
                              dserr *err) {
  if (kube_list_into(c, m, "/api/v1/namespaces", "Namespace", page, err) < 0 ||
      kube_list_into(c, m, "/api/v1/nodes", "Node", page, err) < 0)
    return -1;
  return kube_read_openshift_objects(c, m, route_error, cap, err);
}

model *kube_openshift_facts_model(kube_client *c, int page, char *route_error, size_t cap,
                                  dserr *err) {
  model *m = model_new();
  if (kube_read_openshift_facts(c, m, page, route_error, cap, err) < 0 ||
      model_finish(m, err) < 0) {
    model_free(m);
    return NULL;
  }
  return m;
}

int kube_get_kubedescheduler(kube_client *c, const char *ns, const char *name, arena *a,
                             doc_node **obj, dserr *err) {
  char path[600];
  snprintf(path, sizeof path, "/apis/operator.openshift.io/v1/namespaces/%s/kubedeschedulers/%s",
           ns, name);
  long status;
  if (get_object(c, path, a, obj, &status, err) < 0)
    return -1;
  if (!*obj) {
    dserr_set(err, "kubedeschedulers.operator.openshift.io \"%s\" not found", name);
    return KUBE_GET_NOT_FOUND;
  }
  return 0;
}
