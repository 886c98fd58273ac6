/* defaultevictor.h - what a profile's DefaultEvictor protects, for `descheduler check`.
 *
 * The runbook's traps: virt-launcher pods always have emptyDir volumes (so the
 * PodsWithLocalStorage protection keeps every VM in place) and VMs with PVC disks are kept by
 * PodsWithPVC (ignorePvcPods: true). `check` asks these questions of the loaded policy rather
 * than re-reading its YAML, so it answers exactly as the filter decides. */
#ifndef DS_PLUGINS_DEFAULTEVICTOR_H
#define DS_PLUGINS_DEFAULTEVICTOR_H

#include "../model/model.h"
#include "../policy/policy.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  bool local_storage;  /* PodsWithLocalStorage is on (evictLocalStoragePods false) */
  bool pvc;            /* PodsWithPVC is on (ignorePvcPods true, or extraEnabled) */
  bool by_protections; /* configured with podProtections (else the deprecated booleans) */
  const label_selector *label_selector; /* the evictor's labelSelector; NULL when none */
} defaultevictor_protections;

/* The resolved protections of the profile's DefaultEvictor (a loaded policy always has one;
 * false when not). Borrowed pointers live as long as the policy. */
bool defaultevictor_protections_of(const profile *pr, defaultevictor_protections *out);

/* true when the profile's PodsWithPVC protection keeps p (its claims, or with
 * protectedStorageClasses a claim of one of them, looked up in m); why gets the filter's text. */
bool defaultevictor_pvc_protects(const profile *pr, const model *m, const pod *p, char *why,
                                 size_t cap);

#endif
