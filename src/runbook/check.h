/* check.h - `descheduler check`: the VM rebalancing runbook's compatibility suite.
 *
 * Before an administrator lets a descheduler move VMs, the runbook has them confirm, object by
 * object, that the installation can live-migrate VMs at all and will not stop any: the policy
 * ConfigMap loads, the CronJob or Deployment passes the flags the runbook relies on
 * (EvictionsInBackground, --v=3, the policy file inside the ConfigMap's mount), KubeVirt's (and
 * HCO's) eviction strategy and migration limits, every running VMI whose recorded strategy or
 * migratability differs, the DefaultEvictor protections that make VM rebalancing a no-op, and
 * the launchers the policy's cycle would evict now whose VM would stop.
 *
 * Two halves. check_read does the I/O (through kube/): it lists and GETs what the items need
 * into a check_inputs, adding a FAIL row for anything it cannot read. check_evaluate is a pure
 * function of those inputs (documents and the cluster model) that adds one row per item; unit
 * tests drive it with inputs built from JSON text. Rows and inputs live in arenas owned by the
 * report and the inputs. */
#ifndef DS_RUNBOOK_CHECK_H
#define DS_RUNBOOK_CHECK_H

#include "../kube/client.h"
#include "../model/model.h"
#include "../util/arena.h"
#include "../doc/doc.h"
#include "../util/strbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The label the runbook puts on the policy ConfigMap and on the CronJob or Deployment. */
#define CHECK_APP_LABEL "app.kubernetes.io/name=descheduler"
/* The operator's CRD; when present, each of its CRs is rendered as the operator would
 * (policy/kubedescheduler.h) and its policy checked like a ConfigMap's. */
#define CHECK_KUBEDESCHEDULER_CRD "kubedeschedulers.operator.openshift.io"

typedef enum { CHECK_PASS, CHECK_WARN, CHECK_FAIL } check_status;

typedef struct {
  const char *item; /* "policy", "feature-gate", "vmi-strategy", ... */
  check_status status;
  const char *object; /* "ConfigMap descheduler/descheduler" ("" when none) */
  const char *detail;
} check_row;

typedef struct {
  arena *mem;
  size_t n, cap;
  check_row *rows;
  /* recorded versions ("" when unknown) */
  const char *descheduler_version, *server_version, *kubevirt_version, *hco_version;
  /* a KubeVirt / HyperConverged CR was found (its version may still be missing from its status) */
  bool kubevirt_present, hco_present;
} check_report;

/* An empty report; free with check_report_free. */
check_report *check_report_new(const char *descheduler_version);
void check_report_free(check_report *r);
void check_add(check_report *r, const char *item, check_status st, const char *object,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
size_t check_count(const check_report *r, check_status st);
/* "PASS", "WARN", "FAIL" */
const char *check_status_name(check_status st);
/* The first row of item (NULL when none); for tests and callers that act on one item. */
const check_row *check_find(const check_report *r, const char *item, const char *object);

/* A table (versions, then item / status / object / detail, then a summary line). */
void check_render_text(const check_report *r, strbuf *out);
/* {"versions":{...},"items":[{"item","status","object","detail"}],"summary":{...}} */
void check_render_json(const check_report *r, strbuf *out);

/* ---------- what check reads ---------- */

typedef struct {
  arena *mem;            /* every document below */
  const char *namespace; /* --namespace, or NULL for every namespace */
  int64_t now;           /* the plan's time (seconds since the epoch) */
  /* objects labelled CHECK_APP_LABEL */
  bool configmaps_read;
  size_t nconfigmaps;
  doc_node **configmaps;
  bool workloads_read;
  bool workloads_labelled; /* false: none was labelled; workloads are every CronJob and
                              Deployment of the ConfigMaps' namespaces */
  size_t nworkloads;
  doc_node **workloads; /* CronJobs and Deployments (kind set on each) */
  /* the OpenShift operator */
  bool kubedescheduler_crd;
  size_t nkubedeschedulers;
  doc_node **kubedeschedulers;
  const char *route_error; /* why the Prometheus Route could not be read (NULL: read or absent) */
  /* KubeVirt and HCO */
  bool kubevirt_served;
  doc_node *kubevirt; /* the KubeVirt CR, NULL when none */
  bool hco_served;
  doc_node *hco; /* the HyperConverged CR, NULL when none */
  /* the cluster as the descheduler reads it; NULL when it could not be read */
  model *m;
} check_inputs;

typedef struct {
  const char *namespace; /* NULL: every namespace */
  int page;              /* LIST page size */
} check_read_opts;

/* Reads everything check needs. Failures to read one thing become FAIL rows in r (the item
 * that needed it) and leave that input unread; returns -1 only when the API server cannot be
 * reached at all (err says why). Versions are recorded in r. in must be zeroed; free with
 * check_inputs_free. */
int check_read(kube_client *c, const check_read_opts *o, check_inputs *in, check_report *r,
               dserr *err);
void check_inputs_free(check_inputs *in);

/* Evaluates every item on the inputs and adds the rows. Runs one simulated cycle of the
 * policy on in->m (which it marks, as a cycle does). No I/O. */
void check_evaluate(check_inputs *in, check_report *r);

#endif
