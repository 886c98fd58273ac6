/* xalloc.c - see xalloc.h. */
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__ /* defined by the headers above */
#include <malloc.h>
#endif

static void *check(void *p, size_t n) {
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", n);
    abort();
  }
  return p;
}

void *xmalloc(size_t n) { return check(malloc(n ? n : 1), n); }

void *xcalloc(size_t count, size_t size) {
  return check(calloc(count ? count : 1, size ? size : 1), count * size);
}

void *xrealloc(void *p, size_t n) { return check(realloc(p, n ? n : 1), n); }

char *xstrdup(const char *s) { return s ? check(strdup(s), strlen(s) + 1) : NULL; }

void *xgrow(void *items, size_t n, size_t *cap, size_t size) {
  if (n < *cap)
    return items;
  size_t ncap = *cap ? *cap * 2 : 8;
  items = xrealloc(items, ncap * size);
  memset((char *)items + *cap * size, 0, (ncap - *cap) * size);
  *cap = ncap;
  return items;
}

void xrelease(void) {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

void xalloc_map_large(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}
