/* fixtures.h - inputs for the unit tests: a policy and a cluster as text, built from data.
 *
 * Maps in the compact fields are written "k=v,k2=v2" ("k=" for an empty value). The texts
 * live in static buffers: a policy until four more are built, a cluster until the next
 * cluster_begin. */
#ifndef DS_TEST_FIXTURES_H
#define DS_TEST_FIXTURES_H

#include <stdbool.h>

/* A policy of one profile "p": DefaultEvictor, then `plugin` enabled at its extension point.
 * Args are YAML flow text such as "{podRestartThreshold: 3}"; NULL writes no args. */
typedef struct {
  const char *plugin;
  const char *point;        /* NULL: "deschedule" */
  const char *args;         /* the plugin's */
  const char *evictor_args; /* DefaultEvictor's */
  const char *top;          /* top-level lines, e.g. "maxNoOfPodsToEvictTotal: 1\n" */
  const char *vmsafety;     /* VMSafety's args (a pluginConfig entry is written when set) */
} policy_opts;
const char *plugin_policy_(policy_opts o);
#define plugin_policy(...) plugin_policy_((policy_opts){__VA_ARGS__})

/* A v1 List built item by item: cluster_begin, then nodes, pods and other items, then
 * cluster_end for the text. cluster_end may be called again after adding more items. */
void cluster_begin(void);
const char *cluster_end(void);
/* Allocatable of the nodes added after it; cluster_begin sets 8 cpu / 8Gi / 110 pods. */
void cluster_capacity(const char *cpu, const char *memory, const char *pods);
/* Any other object, as printf-formatted JSON. */
void cluster_item(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A node: cluster_node("a", .labels = "zone=z1", .taints = "dedicated=x:NoSchedule"). */
typedef struct {
  const char *labels;              /* "k=v,..." */
  const char *taints;              /* "key=value:Effect,..." ("key:Effect": empty value) */
  bool unschedulable;              /* cordoned */
  const char *ready;               /* the Ready condition's status; NULL: no conditions */
  const char *cpu, *memory, *pods; /* allocatable; NULL: cluster_capacity's */
  const char *meta;                /* more metadata members (JSON) */
} node_opts;
void cluster_node_(const char *name, node_opts o);
#define cluster_node(name, ...) cluster_node_((name), (node_opts){__VA_ARGS__})

/* A pod, by default running in namespace ns, owned by ReplicaSet rs, with one container c:
 * cluster_pod("web-1", "a", .labels = "app=web", .cpu = "500m"). */
typedef struct {
  const char *ns;            /* NULL: "ns" */
  const char *uid;           /* NULL: "uid-<ns>-<name>"; "": none */
  const char *labels;        /* "k=v,..." */
  const char *annotations;   /* "k=v,..." */
  const char *owner;         /* "Kind/name,..." (uids "uid-<name>"); "": none (a bare pod) */
  const char *created;       /* metadata.creationTimestamp (RFC 3339) */
  const char *deleted;       /* metadata.deletionTimestamp: the pod is terminating */
  const char *meta;          /* more metadata members (JSON) */
  const char *priority;      /* spec.priority (a JSON number) */
  const char *node_selector; /* "k=v,..." */
  const char *image;         /* container c's image */
  const char *cpu, *memory;  /* container c's requests */
  const char *containers;    /* the whole containers list instead of c (JSON array) */
  const char *spec;          /* more spec members (JSON): affinity, tolerations, volumes... */
  const char *phase;         /* NULL: "Running" */
  const char *reason;        /* status.reason */
  const char *state;         /* container c's state (a JSON object): adds c's status */
  int restarts;              /* container c's restartCount: adds c's status */
  const char *init_state;    /* likewise for an init container i */
  int init_restarts;         /* likewise */
  const char *status;        /* more status members (JSON) */
} pod_opts;
void cluster_pod_(const char *name, const char *node, pod_opts o);
#define cluster_pod(name, node, ...) cluster_pod_((name), (node), (pod_opts){__VA_ARGS__})

#endif
