/* softtaint.h - the soft-tainter: keeps PreferNoSchedule taints on nodes in step with their
 * actual utilization, so the scheduler stops sending migrated VMs back to hot nodes.
 *
 * It is the OpenShift descheduler operator's soft-tainter (pkg/softtainter) as a mode of this
 * binary (`descheduler soft-taint`, docs/utilization.md). Every pass: take the policy and the
 * mode from the source (a policy file and --mode, or a KubeDescheduler rendered again),
 * list the nodes matching its nodeSelector, take the LowNodeUtilization configuration of the
 * profile named KubeVirtRelieveAndMigrate (or DevKubeVirtRelieveAndMigrate; the last one
 * wins, as upstream), ask its Prometheus query (provider and credentials as the descheduler
 * uses them), and classify the nodes with its thresholds exactly as LowNodeUtilization does
 * (deviation or static; unschedulable nodes are never underutilized). If no node is
 * underutilized, the nodes that are not overutilized count as underutilized (so a uniformly
 * busy cluster carries no `appropriate` taint). Then:
 *   underutilized  -> neither taint
 *   appropriate    -> nodeutilization.descheduler.openshift.io/appropriate
 *   overutilized   -> both appropriate and overutilized
 * (value "true", effect PreferNoSchedule). Without such a profile, both taints are removed
 * from every listed node.
 *
 * Only mode Automatic changes nodes; Predictive logs what it would change.
 * A change reads the node, rebuilds its taint list with every other taint as it was, and
 * sends a JSON patch that first tests the node's resourceVersion: a node changed in between
 * is read again (up to 3 tries), never overwritten. Only taints with these two keys and the
 * PreferNoSchedule effect are ever added or removed; a taint with one of these keys and
 * another effect belongs to someone else and is left alone (upstream would rewrite it). */
#ifndef DS_SOFTTAINT_H
#define DS_SOFTTAINT_H

#include "../kube/client.h"
#include "../policy/policy.h"
#include "../util/err.h"

#include <stdbool.h>

#define SOFTTAINT_OVERUTILIZED "nodeutilization.descheduler.openshift.io/overutilized"
#define SOFTTAINT_APPROPRIATE "nodeutilization.descheduler.openshift.io/appropriate"

typedef struct softtainter softtainter;

/* Where a pass takes its policy (loaded for this pass; the soft-tainter frees it) and its mode
 * (*automatic: patch the nodes; else log what would change). NULL with err: the pass fails
 * and changes nothing. */
typedef policy *(*softtaint_source_fn)(void *ctx, bool *automatic, dserr *err);

/* api: the Kubernetes client (borrowed, same thread); source and ctx as above (borrowed). */
softtainter *softtaint_new(kube_client *api, softtaint_source_fn source, void *ctx);
void softtaint_free(softtainter *st);

/* One pass. Returns -1 with err when it could not classify (policy, node list, Prometheus
 * answer) or some node could not be patched; nothing is changed on a classification error. */
int softtaint_reconcile(softtainter *st, dserr *err);

#endif
