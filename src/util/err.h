/* err.h - error messages that carry their context up.
 *
 * A function that can fail returns -1 (or NULL) and fills a caller-provided dserr with one
 * human message. Callers add context with dserr_prefix ("policy.yaml: profiles[0]: ...").
 * Nothing below cli/ exits the process. */
#ifndef DS_ERR_H
#define DS_ERR_H

#define DSERR_MAX 4096

typedef struct {
  char msg[DSERR_MAX];
} dserr;

/* Sets the message (replacing any). Always returns -1 so callers can `return dserr_set(...)`. */
int dserr_set(dserr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepends formatted context followed by ": ". Returns -1. */
int dserr_prefix(dserr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dserr_clear(dserr *e);

#endif
