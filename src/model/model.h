/* model.h - the cluster in memory.
 *
 * Only what the descheduler's decisions read is kept, in compact structs: strings that repeat
 * (namespaces, node names, label keys and values, owner kinds, resource names) are interned,
 * so equal strings are equal pointers. Everything lives in the model's arena and is freed
 * with the model. The same model is filled from a snapshot file (simulate) and from API list
 * pages (live mode); see decode/.
 *
 * Order: after model_finish(), nodes are sorted by name and every node's pod list by
 * (name, namespace); the model's own pod vector keeps the input order. Upstream iterates
 * informer indexes whose order is random; sorting gives one fixed, documented order. */
#ifndef DS_MODEL_H
#define DS_MODEL_H

#include "../util/arena.h"
#include "../util/intern.h"
#include "../apimachinery/selector.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *name; /* interned resource name: "cpu", "memory", "pods", "nvidia.com/gpu" */
  int64_t milli;    /* quantity in thousandths, rounded up */
} res_q;

typedef struct {
  size_t n;
  res_q *items;
} res_list;

/* The quantity of name in list (0 if absent); *found tells whether it was present. */
int64_t res_get(const res_list *list, const char *name, bool *found);

/* The model's own copies of the resource names every cycle looks up: a model's string table
 * is seeded with them (model_new), so a decoded "cpu" is RES_CPU and res_get finds it by
 * pointer, without comparing text. */
extern const char RES_CPU[], RES_MEMORY[], RES_PODS[];
/* RES_CPU, RES_MEMORY or RES_PODS when name spells one of them, else name. */
const char *res_name(const char *name);

typedef struct {
  const char *key, *value, *effect; /* effect: "NoSchedule", "PreferNoSchedule", "NoExecute" */
} taint;

typedef enum { TOL_EQUAL, TOL_EXISTS, TOL_LT, TOL_GT, TOL_OTHER } toleration_op;

typedef struct {
  const char *key, *value, *effect; /* "" when unset */
  toleration_op op;
} toleration;

/* A node selector term: matchExpressions on labels AND matchFields on metadata.name.
 * An empty term (no requirements at all) matches no node. */
typedef struct {
  label_selector *labels;
  label_selector *fields; /* keys are field paths, only "metadata.name" is meaningful */
  bool empty;
} node_term;

typedef struct {
  int32_t weight;
  node_term term;
} weighted_term;

typedef struct {
  bool has_required; /* requiredDuringSchedulingIgnoredDuringExecution present */
  size_t nrequired;
  node_term *required; /* ORed */
  size_t npreferred;
  weighted_term *preferred;
} node_affinity;

typedef struct {
  label_selector *selector; /* nil selector = matches nothing */
  size_t nnamespaces;
  const char **namespaces;
  const char *topology_key;
} pod_affinity_term;

typedef struct {
  int32_t max_skew;
  const char *topology_key;
  const char *when_unsatisfiable; /* "DoNotSchedule" | "ScheduleAnyway" */
  label_selector *selector;       /* nil = nothing */
  size_t nmatch_label_keys;
  const char **match_label_keys;
  const char *node_affinity_policy; /* "" = default (Honor) */
  const char *node_taints_policy;   /* "" = default (Ignore) */
} spread_constraint;

typedef struct {
  const char *name;
  int32_t restarts;
  const char *waiting_reason;    /* NULL if not waiting */
  const char *terminated_reason; /* NULL if not terminated or no reason */
  bool terminated;
  int32_t exit_code;
} container_status;

typedef struct {
  const char *type, *status, *reason;
  bool has_transition;
  int64_t last_transition; /* seconds since epoch */
} pod_condition;

typedef struct {
  const char *kind, *name, *uid;
  bool controller;
} owner_ref;

typedef enum {
  PHASE_NONE,
  PHASE_PENDING,
  PHASE_RUNNING,
  PHASE_SUCCEEDED,
  PHASE_FAILED,
  PHASE_UNKNOWN
} pod_phase;

typedef enum { QOS_BESTEFFORT, QOS_BURSTABLE, QOS_GUARANTEED } qos_class;

/* Annotations the decisions read, as bits. */
enum {
  ANN_EVICT = 1u << 0,                  /* descheduler.alpha.kubernetes.io/evict */
  ANN_PREFER_NO_EVICTION = 1u << 1,     /* descheduler.alpha.kubernetes.io/prefer-no-eviction */
  ANN_MIRROR = 1u << 2,                 /* kubernetes.io/config.mirror */
  ANN_CONFIG_SOURCE = 1u << 3,          /* kubernetes.io/config.source (value kept) */
  ANN_REQUEST_EVICT_ONLY = 1u << 4,     /* descheduler.alpha.kubernetes.io/request-evict-only */
  ANN_EVICTION_IN_PROGRESS = 1u << 5,   /* descheduler.alpha.kubernetes.io/eviction-in-progress */
  ANN_KUBEVIRT_DOMAIN = 1u << 6,        /* kubevirt.io/domain (value kept) */
  ANN_VM_NO_EVICTION = 1u << 7,         /* VM_NO_EVICTION_ANNOTATION (any value) */
};

typedef struct node node;

/* What few pods have, kept apart so that the pod struct stays small: a pod with none of it
 * has pod.extra NULL, and pod_x() gives every pod a view of it (all empty for those). */
typedef struct {
  const char *status_reason; /* status.reason or NULL */
  const char *config_source;   /* annotation kubernetes.io/config.source, or NULL */
  const char *kubevirt_domain; /* annotation kubevirt.io/domain (a virt-launcher's VMI), or NULL */
  node_affinity *node_affinity; /* NULL when spec.affinity.nodeAffinity is absent */
  pod_affinity_term *anti_affinity; /* required pod anti-affinity terms */
  spread_constraint *spread;
  container_status *init_status, *ephemeral_status;
  const char **pvc_claims; /* claim names of persistentVolumeClaim volumes */
  uint32_t nanti_affinity, nspread, ninit_status, nephemeral_status, npvc;
} pod_extra;

/* Fields are laid out for size (pointers, then 64-bit times, then counts, then narrow
 * fields and flags), in two groups: first what a cycle reads of every pod (the filters,
 * nodeFit, RemoveDuplicates' keys, the node sums: 128 bytes), then the rest, so that a pass
 * over 150,000 pods touches two or three cache lines of each rather than four or five. The
 * arrays of pods that share them (labels, owners, tolerations, requests, images, container
 * statuses) are one shared copy (model_share): never write through these pointers. */
typedef struct pod {
  const char *ns;              /* interned */
  const char *node_name;       /* interned, "" if unbound */
  node *node;                  /* NULL if unbound or bound to a node not in the model */
  const pod_extra *extra;      /* NULL when the pod has none of it: read it with pod_x() */
  owner_ref *owners;
  const char **images; /* regular containers, in order */
  toleration *tolerations;
  kvlist labels;
  kvlist node_selector;
  res_list requests; /* effective pod requests, as component-helpers' resource.PodRequests */
  uint32_t nowners, nimages, ntolerations;
  int32_t priority;
  uint32_t annotations; /* ANN_* bits */
  uint8_t phase;        /* a pod_phase */
  uint8_t qos;          /* a qos_class */
  bool has_priority : 1;
  bool has_creation : 1, deleting : 1, has_start_time : 1;
  bool has_node_selector : 1; /* spec.nodeSelector present, even `{}` (Go's non-nil map) */
  bool local_storage : 1;     /* a hostPath or emptyDir volume */
  bool resource_claims : 1;   /* spec.resourceClaims non-empty */
  bool launcher_label : 1;    /* labelled kubevirt.io=virt-launcher (kubevirt_is_launcher) */
  bool daemonset_owner : 1;   /* an owner reference of kind DaemonSet (pod_is_daemonset) */
  /* per-cycle state, owned by the framework */
  bool evicted : 1; /* evicted by this cycle: gone for the rest of it */
  bool leaving : 1; /* eviction requested in background (live migration); reports only */
  /* the rest */
  const char *name, *uid;                 /* the pod's own copies */
  int64_t creation, deletion, start_time; /* seconds since epoch */
  const char **request_keys; /* resources named in any regular or init container's requests */
  container_status *container_status;
  pod_condition *conditions;
  /* actual utilization (model_link_metrics): its PodMetrics, NULL when none was read */
  const struct pod_metrics_obj *metrics;
  uint32_t nrequest_keys, ncontainer_status, nconditions;
  /* 1 + the position in the model's vmis of the VMI the pod's kubevirt.io/domain annotation
   * names, 0 for none: linked by model_finish (model_pod_vmi) */
  uint32_t vmi_link;
} pod;

extern const pod_extra pod_extra_none;

/* p's rarely set fields (pod_extra_none's empty ones when it has none) */
static inline const pod_extra *pod_x(const pod *p) { return p->extra ? p->extra : &pod_extra_none; }

/* Asks the CPU for the part of p that every pass reads (its first 128 bytes, which may span
 * three cache lines), ahead of use. The passes over a node's pods wait on memory more than
 * they compute: a loop at pod i asks for pod i + POD_AHEAD. */
#define POD_AHEAD 8
static inline void pod_prefetch(const pod *p) {
  __builtin_prefetch(p);
  __builtin_prefetch((const char *)p + 64);
  __builtin_prefetch((const char *)p + 127);
}

struct node {
  const char *name, *uid;
  uint32_t index;           /* position in model.nodes after model_finish */
  const char *ready_status; /* status of the Ready condition, "" when absent */
  kvlist labels;
  bool unschedulable, ready;
  size_t ntaints;
  taint *taints;
  res_list allocatable, capacity;
  size_t npods;
  pod **pods; /* pods bound to this node, any phase, sorted by name */
  /* actual utilization (model_link_metrics): NodeMetrics usage, NULL when none was read */
  const res_list *actual;
  /* annotation NODE_OVER_SINCE_ANNOTATION: when this descheduler first saw the node
   * overutilized (epoch seconds), 0 when absent or not a time */
  int64_t over_since;
};

/* Where this descheduler keeps, on a node, since when a balance plugin has seen it
 * overutilized (RFC 3339): VMSafety's overutilizedFor holds across one-shot runs and restarts
 * (docs/vm-safety.md, "Hysteresis"). */
#define NODE_OVER_SINCE_ANNOTATION "descheduler.alpha.kubernetes.io/overutilized-since"

typedef struct {
  const char *name;
  kvlist labels;
} namespace_obj;

typedef struct {
  const char *ns, *name;
  label_selector *selector;
} pdb_obj;

typedef struct {
  const char *name;
  int32_t value;
} priority_class_obj;

typedef struct {
  const char *ns, *name, *storage_class; /* storage_class "" when unset */
} pvc_obj;

/* Where this descheduler records, on a VMI, when it asked KubeVirt to move the VM: RFC 3339
 * times, comma-separated, oldest first (kubevirt/vm.h reads and writes it). Kept on the VMI so
 * the anti-flapping cooldown survives restarts of the descheduler. */
#define VMI_MOVES_ANNOTATION "vm-rebalance.descheduler.io/requests"
/* A VM's opt-out, on its VMI or its launcher pod (any value): VMSafety never moves it
 * (docs/vm-safety.md). On a VMI it takes effect at the next cycle; a launcher pod gets the VMI's
 * annotations only when the VM starts. */
#define VM_NO_EVICTION_ANNOTATION "vm-rebalance.descheduler.io/no-eviction"
#define PREFER_NO_EVICTION_ANNOTATION "descheduler.alpha.kubernetes.io/prefer-no-eviction"

/* KubeVirt objects (KubeVirt's staging/src/kubevirt.io/api/core/v1/types.go). */
typedef struct {
  const char *ns, *name, *uid, *node_name, *phase;
  const char *eviction_strategy;    /* spec.evictionStrategy or "" */
  const char *evacuation_node;      /* status.evacuationNodeName or "" */
  int live_migratable;              /* condition LiveMigratable: 1 True, 0 False, -1 absent */
  const char *live_migratable_reason;
  int ready;                        /* condition Ready: 1 True, 0 False, -1 absent */
  const char *migration_source, *migration_target; /* status.migrationState */
  bool migration_completed, migration_failed;
  bool has_migration_start, has_migration_end;
  int64_t migration_start, migration_end; /* migrationState start/endTimestamp, epoch seconds */
  const char *moves; /* annotation VMI_MOVES_ANNOTATION or NULL */
  bool no_eviction;        /* annotation VM_NO_EVICTION_ANNOTATION */
  bool prefer_no_eviction; /* annotation PREFER_NO_EVICTION_ANNOTATION, as on its launcher */
  uint32_t index;    /* position in the model's vmis (model_finish) */
} vmi_obj;

typedef struct {
  const char *ns, *name, *uid, *vmi_name, *phase;
  const char *evacuation_node; /* annotation kubevirt.io/evacuationMigration or "" */
  const char *source_node;     /* status.migrationState.sourceNode or "" */
  bool has_created, has_finished;
  int64_t created;  /* metadata.creationTimestamp */
  int64_t finished; /* when it reached Succeeded or Failed (phase transition or endTimestamp) */
} vmim_obj;

typedef struct {
  bool present;
  const char *ns, *name;
  const char *eviction_strategy; /* spec.configuration.evictionStrategy or "" */
  int parallel_per_cluster;      /* -1 when unset (KubeVirt default 5) */
  int parallel_outbound_per_node; /* -1 when unset (KubeVirt default 2) */
} kubevirt_cr;

/* OpenShift objects that rendering a KubeDescheduler CR reads (policy/kubedescheduler.h,
 * docs/openshift.md). Only the named objects are kept. */
typedef struct {
  bool route_present;            /* Route openshift-monitoring/prometheus-k8s */
  size_t route_ningress;         /* its status.ingress entries */
  const char *route_host;        /* status.ingress[0].host, "" when absent */
  bool scheduler_present;        /* Scheduler (config.openshift.io/v1) "cluster" */
  const char *scheduler_profile; /* its spec.profile, "" when unset */
  doc_node *kubedescheduler; /* KubeDescheduler openshift-kube-descheduler-operator/cluster: a
                                copy of the object in the model arena, NULL when absent */
  size_t other_kubedeschedulers; /* KubeDeschedulers of another namespace/name (ignored) */
} openshift_objs;

/* ---------- actual utilization: an input read before the cycle, like the cluster ----------
 *
 * Plugins never query a metrics source: live mode fetches what the policy's plugins need
 * (metrics.k8s.io NodeMetrics/PodMetrics, Prometheus instant queries) and simulate reads the
 * same answers from files; both store them here (docs/utilization.md). */

/* metrics.k8s.io NodeMetrics: the node's usage (cpu, memory). */
typedef struct {
  const char *name;
  res_list usage;
} node_metrics_obj;

typedef struct {
  const char *name;
  res_list usage;
} container_usage;

/* metrics.k8s.io PodMetrics: usage per container, in the order served. */
typedef struct pod_metrics_obj {
  const char *ns, *name;
  size_t ncontainers;
  container_usage *containers;
} pod_metrics_obj;

typedef struct {
  const char *instance; /* the sample's `instance` label: a node name */
  double value;         /* NaN kept: whether to trust it is the plugin's rule */
  double ts;            /* when the sample was taken (timestamp(query)), NaN when unknown */
} prom_sample;

/* The answer to one Prometheus instant query. Either error is set (upstream's words, e.g.
 * `expected query results to be of type "vector", got "matrix" instead`) or samples hold the
 * vector in answer order. */
typedef struct {
  const char *query;
  const char *error;
  /* upstream's error when NaN samples count as failing ones (its check refuses NaN here, as
   * `error` does when no sample is NaN); NULL when no sample fails that way */
  const char *nan_error;
  double at; /* the evaluation time the answer carries (NaN without samples) */
  size_t nsamples;
  prom_sample *samples;
} prom_answer;

#define MODEL_VEC(type, name)                                                                      \
  struct {                                                                                         \
    size_t n, cap;                                                                                 \
    type **items;                                                                                  \
  } name

typedef struct model {
  arena *mem;
  intern_table *strings;
  struct model_shared *shared; /* model_share's table */
  /* where model_share keeps its copies; NULL: mem. A watch cache decodes every object into
   * an arena of its own (mem, swapped per object) while what objects share stays here. */
  arena *shared_mem;
  /* strings belongs to another model (model_new_view): model_free leaves it */
  bool borrowed_strings;
  /* every object's key is known to be unique (a watch cache's view): model_finish does not
   * look for duplicates */
  bool keys_unique;
  arena *scratch;               /* decoders' per-object scratch (decode/objects.c) */
  /* pod.conditions are decoded (true from model_new); live mode clears it when no enabled
   * plugin reads them (fw_reads_pod_conditions): pods then have none */
  bool keep_pod_conditions;
  MODEL_VEC(node, nodes);
  MODEL_VEC(pod, pods);
  MODEL_VEC(namespace_obj, namespaces);
  MODEL_VEC(pdb_obj, pdbs);
  MODEL_VEC(priority_class_obj, priority_classes);
  MODEL_VEC(pvc_obj, pvcs);
  MODEL_VEC(vmi_obj, vmis);
  /* (namespace, name) -> VMI, built by model_finish (model_find_vmi; NULL before) */
  struct model_vmi_map *vmi_map;
  MODEL_VEC(vmim_obj, vmims);
  kubevirt_cr kubevirt;
  /* why a KubeVirt CR of the cluster could not be decoded (live mode skips such an object), or
   * NULL: KubeVirt's default strategy and migration limits are then unknown */
  const char *kubevirt_unreadable;
  /* true when the VMIs are every VMI of the cluster (a live read lists them all); a snapshot
   * may omit some, so a launcher without its VMI is then not proof of anything */
  bool vmis_complete;
  openshift_objs openshift;
  size_t skipped; /* objects of kinds the model does not keep */
  /* actual utilization (see above) */
  MODEL_VEC(node_metrics_obj, node_metrics);
  MODEL_VEC(pod_metrics_obj, pod_metrics);
  MODEL_VEC(prom_answer, prom_answers);
  bool node_metrics_read;     /* a metrics collector read NodeMetrics (even none) */
  bool pod_metrics_read;      /* PodMetrics were read (even none) */
  const char *pod_metrics_error; /* why PodMetrics could not be read, or NULL */
} model;

/* Creates an empty model. Caller frees with model_free. */
model *model_new(void);
/* An empty model whose interned strings are `strings` (borrowed: they must outlive it). A
 * watch cache fills it each cycle with pointers to the objects it keeps (kube/watch.h):
 * model_free frees the model's own memory (vectors, arena, per-cycle objects) and none of
 * those objects. */
model *model_new_view(intern_table *strings);
void model_free(model *m);
/* Appends the nodes, pods, namespaces, PDBs, priority classes, PVCs, VMIs and migrations of
 * `from` after m's, takes the memory they live in and frees `from`. from must share m's
 * interned strings (its table a front of m's, util/intern.h) and hold nothing else: no
 * KubeVirt or OpenShift object, no metrics, no skipped kind. For a second thread decoding part
 * of a snapshot (decode/snapshot.c). */
void model_adopt(model *m, model *from);
/* Sorts nodes and namespaces, attaches pods to their nodes and sorts each node's pods.
 * Call once after all objects are added. Fails (naming the object) if a node, or a pod in
 * one namespace, appears twice. */
#include "../util/err.h"
int model_finish(model *m, dserr *err);

/* The one copy in m->mem of a flat array (scalars and interned strings, nothing to free or
 * patch): pods of one ReplicaSet have the same labels, owners, tolerations, requests and
 * images, and share one copy of each. bytes 0 gives a block of zeros that reads as an empty
 * array of any element type (never NULL). The copy must never be written to. */
const void *model_share(model *m, const void *data, size_t bytes, size_t align);
/* Bytes of model_share's table (its slots; the copies are in m->shared_mem or m->mem). */
size_t model_share_table_bytes(const model *m);

/* Bytes the model holds: its arena, its interned strings, its vectors (for the cycle's
 * timings line and the benchmark's bytes per pod). */
size_t model_bytes(const model *m);

/* Appends an object (allocated in m->mem) to a vector. */
void model_push_(model *m, void *vec, void *item);
#define MODEL_PUSH(m, vec, item) model_push_((m), &(m)->vec, (item))

/* Attaches node_metrics to nodes (node.actual) and pod_metrics to pods (pod.metrics) by name;
 * entries for objects not in the model are ignored, a later entry for the same object wins.
 * Call after model_finish (which leaves every link NULL) and after adding metrics; may be
 * called again (metrics are only added). */
void model_link_metrics(model *m);
/* The answer to query (the exact text), or NULL when none was read. */
const prom_answer *model_find_prom_answer(const model *m, const char *query);
/* The sample of a node in an answer (samples are sorted by instance). */
bool prom_answer_value(const prom_answer *a, const char *instance, double *value);
/* The sample of instance, or NULL. */
const prom_sample *prom_answer_sample(const prom_answer *a, const char *instance);
/* Sets the samples' times of the answer to query from the answer to "timestamp(<query>)" when
 * both are there and usable (a sample without one keeps NaN). */
void model_prom_join_times(model *m, const char *query);

namespace_obj *model_find_namespace(const model *m, const char *name);
pvc_obj *model_find_pvc(const model *m, const char *ns, const char *name);
priority_class_obj *model_find_priority_class(const model *m, const char *name);
vmi_obj *model_find_vmi(const model *m, const char *ns, const char *name);
/* The VMI a pod's kubevirt.io/domain annotation names in its namespace, or NULL: what
 * model_find_vmi would answer, linked once per model by model_finish. */
static inline vmi_obj *model_pod_vmi(const model *m, const pod *p) {
  return p->vmi_link ? m->vmis.items[p->vmi_link - 1] : NULL;
}
/* Where to split nodes[0..n) so that each side holds about half of their pods (n->npods):
 * the first position whose nodes before it hold half or more (par_halves' split). */
size_t model_nodes_half_pods(node *const *nodes, size_t n);
/* The position of that VMI in m->vmis (vmis sorted by model_finish), or -1. */
long model_vmi_position(const model *m, const char *ns, const char *name);

/* Pod helpers used across plugins. */
bool pod_is_terminal(const pod *p); /* phase Succeeded or Failed */
const char *pod_phase_name(pod_phase ph);
const char *qos_name(qos_class q);
/* "namespace/name" into buf (klog's KObj rendering). */
const char *pod_ref(const pod *p, char *buf, size_t cap);

#endif
