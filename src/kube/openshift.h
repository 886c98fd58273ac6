/* openshift.h - what rendering a KubeDescheduler CR reads from an OpenShift API server.
 *
 * The operator (cluster-kube-descheduler-operator) reads the namespaces (its protected list),
 * the nodes labelled kubevirt.io/schedulable=true, the Route openshift-monitoring/prometheus-k8s
 * (the Prometheus URL) and the Scheduler config.openshift.io/v1 "cluster" (profile conflicts).
 * These functions read the same objects into a model through the decoder, so a live read and a
 * snapshot give the same facts (policy/kubedescheduler.h: kd_facts_from_model). */
#ifndef DS_KUBE_OPENSHIFT_H
#define DS_KUBE_OPENSHIFT_H

#include "../model/model.h"
#include "../util/arena.h"
#include "../doc/doc.h"
#include "client.h"

/* GETs the Route and the Scheduler into m (404, or a server without these APIs: left absent).
 * Any other failure of the Route is not an error here: its text goes to route_error (cap bytes)
 * so the rendering can report it as the operator would; route_error[0] is 0 otherwise. A
 * transport failure returns -1 with err. */
int kube_read_openshift_objects(kube_client *c, model *m, char *route_error, size_t cap,
                                dserr *err);

/* Lists namespaces and nodes (paged) into m, then kube_read_openshift_objects. Does not call
 * model_finish. */
int kube_read_openshift_facts(kube_client *c, model *m, int page, char *route_error, size_t cap,
                              dserr *err);

/* A new model holding what kube_read_openshift_facts reads, finished (model_finish); NULL with
 * err when it cannot be read. */
model *kube_openshift_facts_model(kube_client *c, int page, char *route_error, size_t cap,
                                  dserr *err);

/* GETs KubeDescheduler ns/name (operator.openshift.io/v1). *obj lives in a. -1 with err when
 * the API server could not be asked (or did not answer it); not found gives
 * KUBE_GET_NOT_FOUND with `kubedeschedulers.operator.openshift.io "<name>" not found`, which a
 * command reports as bad input (the name is the user's). */
#define KUBE_GET_NOT_FOUND (-2)
int kube_get_kubedescheduler(kube_client *c, const char *ns, const char *name, arena *a,
                             doc_node **obj, dserr *err);

#endif
