/* par.c - see par.h. */
#include "par.h"

#include <pthread.h>

typedef struct {
  par_fn fn;
  void *ctx;
  size_t lo, hi;
} part;

static void *run_part(void *arg) {
  part *p = arg;
  p->fn(p->ctx, p->lo, p->hi);
  return NULL;
}

void par_halves(size_t n, size_t split, size_t min_n, par_fn fn, void *ctx) {
  if (split == 0 || split >= n)
    split = n / 2;
  pthread_t t;
  part second = {fn, ctx, split, n};
  if (n < min_n || split == 0 || pthread_create(&t, NULL, run_part, &second) != 0) {
    fn(ctx, 0, n);
    return;
  }
  fn(ctx, 0, split);
  pthread_join(t, NULL);
}
