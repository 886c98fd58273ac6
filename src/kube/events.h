/* events.h - Events sent in the background.
 *
 * As client-go's event broadcaster does for upstream's descheduler, a cycle hands an Event over
 * and goes on with its next eviction; a thread of its own, on a connection and a rate limiter
 * of its own (the same qps and burst), POSTs the Events in the order they came. An Event is
 * best effort: one the server refuses, or that cannot be sent, is logged at --v 2 and dropped;
 * when EVENTS_QUEUED_MAX are waiting, a new one is dropped and logged at --v 2 (the
 * broadcaster drops too when its queue is full). At exit the queue is sent first, for a bounded
 * time. */
#ifndef DS_KUBE_EVENTS_H
#define DS_KUBE_EVENTS_H

#include "../util/err.h"
#include "config.h"

#define EVENTS_QUEUED_MAX 1000
/* each Event's POST gives up after this many seconds (the cycle no longer waits on it, the
 * exit does) */
#define EVENTS_REQUEST_TIMEOUT_S 5

typedef struct event_sender event_sender;

/* Starts the thread and its client. NULL with err when the client cannot be made (as
 * kube_client_new) or the thread cannot start. */
event_sender *event_sender_new(const kube_config *cfg, double qps, int burst, dserr *err);

/* Queues a POST of body to path; what (a "namespace/name") names the object in a log line.
 * All three are copied. */
void event_sender_post(event_sender *s, const char *path, const char *body, const char *what);

/* The object an Event is about (events.k8s.io/v1 `regarding`); uid may be NULL or "". */
typedef struct {
  const char *api_version, *kind, *ns, *name, *uid;
} event_regarding;

/* Queues an events.k8s.io/v1 Event about `regarding` in its namespace, as upstream's
 * descheduler writes them (reportingController sigs.k8s.io.descheduler, reportingInstance
 * sigs.k8s.io.descheduler-HOST, a name made of the object's and the time). */
void event_sender_emit(event_sender *s, const event_regarding *regarding, const char *type,
                       const char *reason, const char *action, const char *note,
                       const char *host);

/* Sends what is queued for at most `seconds` (what is left then is dropped and counted in a
 * --v 1 line), stops the thread and frees. NULL is a no-op. */
void event_sender_free(event_sender *s, double seconds);

#endif
