/* vm.h - what KubeVirt does with a VM when its launcher pod is evicted, read from the model.
 *
 * Pure functions of the model, no I/O: the simulate sink, the VM-safety and
 * KubevirtMigrationAware evictor plugins, `check` and the plan all ask the same questions here,
 * so they cannot disagree.
 *
 *  - Which VMI a pod runs (a virt-launcher pod names it in annotation `kubevirt.io/domain`).
 *  - The eviction strategy that applies to it: the VMI's own `spec.evictionStrategy`, else the
 *    KubeVirt CR's `spec.configuration.evictionStrategy`, else KubeVirt's built-in `None`
 *    (KubeVirt's pkg/util/migrations/migrations.go), and so what an eviction does to the VM
 *    (the webhook in pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go):
 *    live-migrate it, hand it to an external controller, stop it, or be refused.
 *  - Which VMIs have a migration in flight, from which source node, and KubeVirt's migration
 *    concurrency limits (pkg/virt-controller/watch/migration/migration.go).
 *  - The history of moves this descheduler asked for, kept in a VMI annotation
 *    (VMI_MOVES_ANNOTATION), and the anti-flapping cooldown it implies. */
#ifndef DS_KUBEVIRT_VM_H
#define DS_KUBEVIRT_VM_H

#include "../model/model.h"
#include "../util/arena.h"
#include "../util/strbuf.h"

#include <stdbool.h>
#include <stdint.h>

/* KubeVirt's defaults when the KubeVirt CR leaves them unset (pkg/virt-config/virt-config.go) */
#define KUBEVIRT_DEFAULT_PARALLEL_PER_CLUSTER 5
#define KUBEVIRT_DEFAULT_PARALLEL_OUTBOUND_PER_NODE 2

/* A live migration this descheduler asks for with a chosen destination (a targeted move,
 * docs/vm-safety.md): a VirtualMachineInstanceMigration named from this prefix, with the label
 * and the annotation naming the node the VM leaves, so that `verify` and the decision record
 * tell it from KubeVirt's own evacuations ("kubevirt-evacuation-"). */
#define KUBEVIRT_MOVE_PREFIX "descheduler-move-"
#define KUBEVIRT_MOVE_LABEL "descheduler.alpha.kubernetes.io/move"
#define KUBEVIRT_MOVE_FROM_ANNOTATION "descheduler.alpha.kubernetes.io/move-from"

/* true for a virt-launcher pod: label kubevirt.io=virt-launcher */
bool kubevirt_is_launcher(const pod *p);

/* A VM's opt-outs, read from its VMI as well as its launcher pod (the pod gets the VMI's
 * annotations only when the VM starts; the VMI's count from the next cycle):
 * VM_NO_EVICTION_ANNOTATION (never move it) and PREFER_NO_EVICTION_ANNOTATION (upstream's
 * DefaultEvictor noEvictionPolicy decides). false for other pods. */
bool kubevirt_vm_no_eviction(const model *m, const pod *p);
bool kubevirt_vm_prefers_no_eviction(const model *m, const pod *p);

typedef enum {
  VM_EFFECT_NONE,     /* not a launcher (or a finished one): an ordinary pod eviction */
  VM_EFFECT_MIGRATE,  /* KubeVirt answers 429 and live-migrates the VM */
  VM_EFFECT_EXTERNAL, /* strategy External: KubeVirt marks the VMI, an external controller
                         (e.g. a hosted cluster's NodePool) drains and replaces the VM */
  VM_EFFECT_STOP,     /* the eviction is allowed: the launcher is deleted and the VM stops */
  VM_EFFECT_REFUSED,  /* KubeVirt refuses the eviction (429, not a request in background) */
} vm_effect;

typedef enum {
  STRATEGY_FROM_VMI,     /* spec.evictionStrategy of the VMI */
  STRATEGY_FROM_CLUSTER, /* the KubeVirt CR's default */
  STRATEGY_BUILTIN,      /* neither set: KubeVirt's own default None */
  STRATEGY_ASSUMED,      /* a snapshot lacks the VMI, or lacks the KubeVirt CR and the VMI
                            sets no strategy: LiveMigrate is assumed */
} strategy_source;

/* What evicting one launcher pod would do, and why. Strings are borrowed from the model. */
typedef struct {
  const vmi_obj *vmi;     /* NULL when not in the model */
  const char *vmi_name;   /* from kubevirt.io/domain ("" when the pod has none) */
  const char *strategy;   /* "None", "LiveMigrate", "LiveMigrateIfPossible", "External" */
  strategy_source source;
  int migratable;         /* LiveMigratable condition: 1, 0, or -1 unknown */
  vm_effect effect;
  /* for REFUSED: the webhook's text; for STOP: why the VM stops; "" otherwise */
  char why[256];
} vm_view;

/* Describes what an eviction of p would do. A launcher whose VMI is missing: when the model
 * holds every VMI (m->vmis_complete, a live read) that is a refusal (KubeVirt answers
 * "kubevirt failed getting the vmi"); in a snapshot the VMI may just have been left out, so
 * the strategy is the KubeVirt CR's default (LiveMigrate when the snapshot has no CR) and the
 * VM is assumed live-migratable (source STRATEGY_ASSUMED). */
void kubevirt_view(const model *m, const pod *p, vm_view *out);
/* The same view with out->why left empty: for the evictor's filters, which read every launcher
 * every cycle and need the text only for a pod they reject (they call kubevirt_view then). */
void kubevirt_view_effect(const model *m, const pod *p, vm_view *out);
const char *kubevirt_effect_name(vm_effect e);

/* The effective strategy of a VMI (v may be NULL): its own, else the KubeVirt CR's, else
 * KubeVirt's built-in "None"; in a snapshot that has no KubeVirt CR, "LiveMigrate" assumed. */
const char *kubevirt_vmi_strategy(const model *m, const vmi_obj *v, strategy_source *source);

/* ---------- migrations in flight ---------- */

/* Per-model index of migrations in flight. A VMI has one when it has an unfinished VMIM, is
 * marked for evacuation (status.evacuationNodeName: the webhook marked it, the VMIM may not
 * exist yet), or its migrationState has started and not ended. Its source node is the VMIM's
 * evacuation annotation or migration source, else the VMI's node. Built once per model and
 * cycle (arena-allocated). */
typedef struct kubevirt_flights kubevirt_flights;

kubevirt_flights *kubevirt_flights_build(const model *m, arena *a);
/* NULL when v has no migration in flight, else a short description ("VMIM kubevirt-evacuation-x
 * in phase Running", "marked for evacuation from worker-a"). Borrowed from the index. */
const char *kubevirt_flight_of(const kubevirt_flights *f, const vmi_obj *v);
/* Migrations in flight out of node (by name), and in all. */
int kubevirt_flights_from(const kubevirt_flights *f, const char *node);
int kubevirt_flights_total(const kubevirt_flights *f);

/* KubeVirt's parallelMigrationsPerCluster and parallelOutboundMigrationsPerNode in force. */
void kubevirt_migration_limits(const model *m, int *per_cluster, int *per_node);

/* ---------- moves recorded on the VMI and the cooldown ---------- */

#define KUBEVIRT_MOVES_KEPT 16 /* at most this many times are kept in the annotation */

/* Parses VMI_MOVES_ANNOTATION ("2026-12-01T10:00:00Z,2026-12-01T11:30:00Z"): up to `cap`
 * times in epoch seconds, oldest first. Unparsable entries are skipped (counted in *bad). */
size_t kubevirt_moves_parse(const char *annotation, int64_t *times, size_t cap, size_t *bad);
/* The annotation value after a new move at `now`: times older than `window` seconds dropped,
 * at most KUBEVIRT_MOVES_KEPT kept. */
void kubevirt_moves_append(const char *annotation, int64_t now, int64_t window, strbuf *out);

/* The anti-flapping rule: after the k-th move within `window` seconds, the VM is left alone
 * for base * 2^(k-1) seconds, at most max (max <= 0: no cap). Returns the seconds still to
 * wait at `now` (0 = free to move) and, in *cooldown, the cooldown in force. */
int64_t kubevirt_cooldown_left(const int64_t *times, size_t n, int64_t now, int64_t base,
                               int64_t max, int64_t window, int64_t *cooldown);

#endif
