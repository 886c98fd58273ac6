/* err.c - see err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int dserr_set(dserr *e, const char *fmt, ...) {
  if (!e)
    return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return -1;
}

int dserr_prefix(dserr *e, const char *fmt, ...) {
  if (!e)
    return -1;
  char head[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  /* build "head: old" in place: move the old text right, then copy the head in front */
  size_t hl = strlen(head), ol = strlen(e->msg);
  if (hl + 2 >= sizeof e->msg)
    hl = sizeof e->msg - 3;
  if (hl + 2 + ol >= sizeof e->msg)
    ol = sizeof e->msg - hl - 3;
  memmove(e->msg + hl + 2, e->msg, ol);
  e->msg[hl + 2 + ol] = 0;
  memcpy(e->msg, head, hl);
  e->msg[hl] = ':';
  e->msg[hl + 1] = ' ';
  return -1;
}

void dserr_clear(dserr *e) {
  if (e)
    e->msg[0] = 0;
}
