/* verify.h - `descheduler verify`: the runbook's pass rule for one requested move.
 *
 * After the descheduler asked KubeVirt to move a VM off a node, the runbook counts the move as
 * done only when all of these hold:
 *   node          the VMI runs on another node than the one it was evicted from;
 *   migration     the newest `kubevirt-evacuation-*` VirtualMachineInstanceMigration of the VMI
 *                 from that node reached Succeeded, with that node as source and the VMI's
 *                 current node as target;
 *   uid           the VMI's UID is unchanged (a live migration keeps the VMI; a restart makes a
 *                 new one). Compared with --uid when given. Without it the only evidence left
 *                 in the cluster is the migration's source (or target) launcher pod: its label
 *                 kubevirt.io/created-by holds the UID of the VMI it ran. When neither pod exists
 *                 any more the condition is "not checked", which is not a pass;
 *   ready         the VMI is Running with condition Ready=True, and its VirtualMachine (when one
 *                 exists) reports status.ready and printableStatus Running;
 *   old-launcher  no launcher of the VMI on the source node is still running (gone, or in phase
 *                 Succeeded or Failed; a terminating one still counts as running).
 *
 * verify_read fetches the objects (through kube/); verify_evaluate is a pure function of what
 * was read; verify_log_pair pairs the migration with the descheduler's own log line
 * ("Eviction in background assumed" pod="ns/virt-launcher-...") and measures the delay. */
#ifndef DS_RUNBOOK_VERIFY_H
#define DS_RUNBOOK_VERIFY_H

#include "../kube/client.h"
#include "../util/arena.h"
#include "../util/err.h"
#include "../util/strbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *ns, *name; /* the VMI */
  const char *from;      /* the node it was evicted from */
  const char *uid;       /* the UID recorded before the move; NULL when not given */
  const char *to;        /* the node a targeted move asked for; NULL when not given */
} verify_target;

typedef struct {
  const char *name, *phase, *node, *created_by; /* created_by: label kubevirt.io/created-by */
  bool deleting;                                /* metadata.deletionTimestamp set */
} verify_pod;

typedef struct {
  const char *name, *phase;
  const char *evacuation_node;           /* annotation kubevirt.io/evacuationMigration, or for a
                                            targeted move KUBEVIRT_MOVE_FROM_ANNOTATION, or "" */
  const char *asked_node;                /* a targeted move's spec.addedNodeSelector hostname */
  const char *source_node, *target_node; /* status.migrationState, "" when unset */
  const char *source_pod, *target_pod, *failure_reason;
  bool has_created;
  int64_t created; /* metadata.creationTimestamp, epoch seconds */
} verify_migration;

/* What was read; every string lives in mem. */
typedef struct {
  arena *mem;
  bool vmi_found;
  const char *uid, *phase, *node;
  int ready;           /* VMI condition Ready: 1 True, 0 False, -1 absent */
  const char *vm_name; /* the owning VirtualMachine's name, NULL when the VMI has no owner */
  bool vm_found;
  int vm_ready;             /* VirtualMachine status.ready: 1, 0, -1 absent */
  const char *vm_printable; /* status.printableStatus or "" */
  size_t nmigrations;
  verify_migration *migrations; /* every VMIM whose spec.vmiName is the VMI */
  size_t npods;
  verify_pod *pods; /* launchers of the namespace whose kubevirt.io/domain is the VMI */
} verify_state;

typedef enum { VERIFY_PASS, VERIFY_FAIL, VERIFY_NOT_CHECKED } verify_status;

#define VERIFY_NCONDITIONS 5

typedef struct {
  const char *name; /* "node", "migration", "uid", "ready", "old-launcher" */
  verify_status status;
  char detail[768]; /* what was seen */
} verify_condition;

typedef struct {
  verify_condition c[VERIFY_NCONDITIONS];
  const verify_migration *migration; /* the evacuation judged (in the state), or NULL */
} verify_result;

/* Reads the VMI, its migrations, its launchers in the namespace and its VirtualMachine into
 * st (zeroed by the caller; st->mem is created here; free with verify_state_free). A missing
 * VMI is not an error (st->vmi_found false); -1 with err when the API cannot be read. */
int verify_read(kube_client *c, const verify_target *t, verify_state *st, dserr *err);
void verify_state_free(verify_state *st);

void verify_evaluate(const verify_state *st, const verify_target *t, verify_result *out);
/* every condition passed */
bool verify_passed(const verify_result *r);
/* nothing can change by waiting: everything passed except conditions that cannot be checked */
bool verify_settled(const verify_result *r);
const char *verify_status_name(verify_status s); /* "PASS", "FAIL", "NOT CHECKED" */

/* ---------- the descheduler's log ---------- */

/* The descheduler logs "Eviction in background assumed" once KubeVirt's 429 arrives, after
 * the webhook created the migration: a line up to this many seconds after the creation's
 * second still pairs with it. */
#define VERIFY_ANSWER_SLACK_S 2

typedef struct {
  bool found;
  char pod[512]; /* the pod named by the line */
  int64_t sec;   /* the line's time, epoch seconds (UTC) */
  int32_t usec;
  /* from the line to the migration's creation, in seconds: creation times have whole seconds,
   * so the delay lies between delay_min and delay_min + 1 (negative: the line came after) */
  double delay_min;
  size_t line_no;    /* 1-based */
  size_t candidates; /* lines for this pod seen */
} verify_log_match;

/* Finds the "Eviction in background assumed" line for the launcher `pod` (the exact name when
 * given, else any `virt-launcher-<vmi>-<suffix>`) in a descheduler log (klog text lines
 * `I1201 10:48:54.123456 ...`, or JSON lines with "ts"), the last one at or before the
 * migration's creation (plus one second: creation times have whole seconds), else the first
 * after it. klog lines carry no year: it is taken from the migration's creation (the year
 * before when that puts the line more than half a year after it); their time is read as UTC,
 * the descheduler image's zone. */
void verify_log_pair(const char *text, size_t len, const char *ns, const char *vmi, const char *pod,
                     int64_t migration_created, verify_log_match *out);

#endif
