/* xalloc.h - allocation that cannot fail: out of memory aborts with a message.
 *
 * Running out of memory is not a condition this program can recover from (see arena.h), so
 * these wrappers spare every caller the check. xstrdup(NULL) is NULL. */
#ifndef DS_XALLOC_H
#define DS_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#endif
