/* lease.h - leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection.
 *
 * A candidate takes the lease when it is absent, released (empty holder) or not renewed by
 * its holder for leaseDuration as observed on this machine's monotonic clock (so clock skew
 * between replicas does not matter). The leader renews every retryPeriod and gives up when
 * it could not renew for renewDeadline. Release on shutdown empties the holder so another
 * replica takes over at once.
 *
 * A leader whose process was stopped (SIGSTOP, a long stall, a suspended machine) for longer
 * than leaseDuration may find, when it runs again, that another replica took the lease
 * meanwhile, and its threads run on before its renewer has read the Lease again. So a leader
 * sends no write unless lease_held says so just before the request leaves (the run command
 * puts that check on its API client: kube_client_set_gate in client.h): the last successful
 * acquire or renew was sent less than renewDeadline ago. The others wait leaseDuration from
 * when they saw that write, which came after it was sent; leaseDuration - renewDeadline is
 * the time a request has to reach the server. */
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
  /* written by the thread that acquires and renews, read by the others (lease_held):
   * atomically */
  bool leading;
  int64_t last_renewed; /* monotonic ns when the last successful acquire/renew was sent */
} lease_elector;

/* identity = "<hostname>_<random uuid>" */
void lease_init(lease_elector *le, kube_client *c, const char *ns, const char *name,
                int64_t lease_duration_ns, int64_t renew_deadline_ns, int64_t retry_period_ns);
/* One attempt: 1 when we hold the lease afterwards, 0 when another holder does (or a write
 * conflicted), -1 with err on an API failure. */
int lease_try(lease_elector *le, dserr *err);
/* Empties the holder if we lead. */
void lease_release(lease_elector *le);
/* CLOCK_BOOTTIME where there is one: monotonic, and it counts the time the machine was
 * suspended, as the other replicas' clocks did */
int64_t lease_monotonic_ns(void);
/* Whether this process may act as the leader now: it leads, and its last successful acquire
 * or renew was sent less than renewDeadline ago. Any thread. */
bool lease_held(const lease_elector *le);

#endif
