/* common.h - small pieces most plugins share: aggregated validation errors, the
 * namespaces/labelSelector pre-filter (as pkg/descheduler/pod/pods.go), a growing pod array. */
#ifndef DS_PLUGINS_COMMON_H
#define DS_PLUGINS_COMMON_H

#include "../framework/framework.h"
#include "../policy/args.h"
#include "../util/strbuf.h"

/* Validation errors collected in check order; one prints as itself, several as [e1, e2];
 * a message repeated is kept once. */
typedef struct {
  strbuf sb;
  int n;
  char **msgs;
  size_t nmsgs;
} errlist;

void errlist_add(errlist *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns 0 when empty, else -1 with the aggregate in err. Frees e. */
int errlist_finish(errlist *e, dserr *err);

/* `only one of Include/Exclude namespaces can be set` */
void validate_namespaces(const ns_filter *f, errlist *e);

/* `failed to get label selectors from strategy's params: <why>` for a labelSelector that
 * upstream's metav1.LabelSelectorAsSelector refuses (NULL: none given). */
void validate_label_selector(const label_selector *sel, errlist *e);

/* namespaces include/exclude and labelSelector (nil = no constraint; `{}` = everything) */
bool pod_passes_ns_and_labels(const ns_filter *f, const label_selector *sel, const pod *p);

/* Appends src (n pods) to a growing array in arena a. */
typedef struct {
  pod **items;
  size_t n, cap;
} pod_vec;
void pod_vec_push(arena *a, pod_vec *v, pod *p);

/* Logs a failed eviction the way plugins do ("eviction failed"). */
void log_eviction_failed(plugin_handle *h, const pod *p);

/* Some container status (of the n given) terminated with an exit code in codes. */
bool statuses_exited_with(const i32_list *codes, const container_status *cs, size_t n);

/* Evicts pods in order, reacting to errors as most Deschedule plugins do (docs/behaviour.md):
 * a total limit stops (returns true: the plugin is done), a node limit ends the list or,
 * with skip_on_node_limit, skips just that pod; other failures are logged. */
bool evict_in_order(plugin_handle *h, pod **pods, size_t n, bool skip_on_node_limit);

#endif
