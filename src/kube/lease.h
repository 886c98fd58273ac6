/* lease.h - leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection.
 *
 * A candidate takes the lease when it is absent, released (empty holder) or not renewed by
 * its holder for leaseDuration as observed on this machine's monotonic clock (so clock skew
 * between replicas does not matter). The leader renews every retryPeriod and gives up when
 * it could not renew for renewDeadline. Release on shutdown empties the holder so another
 * replica takes over at once. */
#ifndef DS_LEASE_H
#define DS_LEASE_H

#include "client.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
  kube_client *client;
  char ns[254], name[254], identity[300];
  int64_t lease_duration_s, renew_deadline_ns, retry_period_ns;
  /* what we last saw, and when (monotonic ns) */
  char observed_holder[300], observed_renew[64];
  int64_t observed_at;
  bool leading;
  int64_t last_renewed; /* monotonic ns of the last successful acquire/renew */
} lease_elector;

/* identity = "<hostname>_<random uuid>" */
void lease_init(lease_elector *le, kube_client *c, const char *ns, const char *name,
                int64_t lease_duration_ns, int64_t renew_deadline_ns, int64_t retry_period_ns);
/* One attempt: 1 when we hold the lease afterwards, 0 when another holder does (or a write
 * conflicted), -1 with err on an API failure. */
int lease_try(lease_elector *le, dserr *err);
/* Empties the holder if we lead. */
void lease_release(lease_elector *le);
int64_t lease_monotonic_ns(void);

#endif
