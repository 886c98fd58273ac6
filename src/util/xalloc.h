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

/* items (xmalloc'd, or NULL) with room for n + 1 elements of size bytes: the capacity *cap
 * doubles (from 8) when n reaches it, and the elements added come zeroed (arena_grow's twin
 * for arrays that are freed on their own). */
void *xgrow(void *items, size_t n, size_t *cap, size_t size);

/* Gives the memory freed so far back to the system where the allocator keeps it (glibc:
 * malloc_trim, which also empties the arenas other threads used); nothing elsewhere. For
 * after a phase that freed much, such as decoding a cluster. */
void xrelease(void);

/* Has every block of 256 KiB or more mapped on its own, so that freeing it gives it back to
 * the system at once (glibc; nothing elsewhere). glibc's default threshold rises to the size
 * of the largest block freed so far, after which such blocks go on the heap, where the holes
 * they leave keep the process larger than what it holds. Call before allocating. */
void xalloc_map_large(void);

#endif
