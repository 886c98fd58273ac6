/* pause.h - `descheduler pause` / `descheduler resume`: stop and restart the descheduler the
 * runbook way.
 *
 * The runbook stops the descheduler before maintenance or when migrations repeat or stay
 * pending, and starts it again only once every VirtualMachineInstanceMigration has finished:
 * a run while migrations are queued requests more evacuations on top of them. The descheduler
 * is the CronJob or Deployment labelled app.kubernetes.io/name=descheduler (exactly one).
 * A CronJob is paused with spec.suspend; a Deployment is scaled to 0 and its replica count
 * kept in the annotation PAUSE_REPLICAS_ANNOTATION on it, so resume restores it.
 *
 * pause_read_* do the I/O (through kube/); pause_target, pause_plan and
 * pause_unfinished are pure functions of what was read. */
#ifndef DS_RUNBOOK_PAUSE_H
#define DS_RUNBOOK_PAUSE_H

#include "../kube/client.h"
#include "../util/arena.h"
#include "../doc/doc.h"
#include "../util/err.h"
#include "../util/strbuf.h"

#include <stdbool.h>
#include <stddef.h>

#define PAUSE_SELECTOR "app.kubernetes.io/name=descheduler"
#define PAUSE_REPLICAS_ANNOTATION "vm-rebalance.descheduler.io/paused-replicas"

typedef struct {
  const char *kind; /* "CronJob" or "Deployment" */
  const char *ns, *name;
  bool suspended;              /* CronJob: spec.suspend */
  long long replicas;          /* Deployment: spec.replicas (1 when unset) */
  const char *paused_replicas; /* the annotation, NULL when absent */
  size_t nactive;
  const char **active; /* CronJob: status.active Job names */
} pause_workload;

typedef struct {
  const char *ns, *name, *vmi, *phase;
} pause_migration;

typedef struct {
  arena *mem;
  size_t nworkloads;
  pause_workload *workloads;
  bool kubevirt_served; /* false: the migrations list answered 404 */
  size_t nmigrations;
  pause_migration *migrations; /* every VMIM of the cluster */
} pause_state;

/* Reads the labelled CronJobs and Deployments (in ns, or every namespace when ns is NULL).
 * st zeroed by the caller; free with pause_state_free. -1 with err on an API failure. */
int pause_read_workloads(kube_client *c, const char *ns, pause_state *st, dserr *err);
/* Reads every VirtualMachineInstanceMigration of the cluster (none when KubeVirt is not
 * served). -1 with err on an API failure. */
int pause_read_migrations(kube_client *c, pause_state *st, dserr *err);
void pause_state_free(pause_state *st);

/* Decoding one object (for the readers and for tests). Strings are copied into a. */
void pause_workload_from_doc(arena *a, const doc_node *o, const char *kind, pause_workload *w);
void pause_migration_from_doc(arena *a, const doc_node *o, pause_migration *m);

/* The one workload to act on; NULL with err when there is none or more than one (listed). */
const pause_workload *pause_target(const pause_state *st, const char *ns, dserr *err);

/* Migrations neither Succeeded nor Failed, in the order read; the array lives in st->mem. */
const pause_migration **pause_unfinished(const pause_state *st, size_t *n);

typedef enum {
  PAUSE_PATCH,   /* send `patch` to `path` */
  PAUSE_NOTHING, /* already in the wanted state (why says so) */
  PAUSE_REFUSE,  /* cannot do it safely (why says so) */
} pause_action;

/* What pausing (resume false) or resuming w takes: a JSON merge patch and the object's path.
 * done gets a one-line description of the change for the operator. */
pause_action pause_plan(const pause_workload *w, bool resume, strbuf *path, strbuf *patch,
                        strbuf *done, char *why, size_t cap);

#endif
