/* par.h - splitting a pure loop over both cores of the machine.
 *
 * par_halves runs fn(ctx, lo, hi) over [0, n) in two parts, the second on a thread of its own
 * while the caller runs the first, and returns when both are done. fn must write nothing the
 * other part reads or writes (each part its own elements); what it reads must not change
 * while it runs. Below min_n elements, or when no thread can be started, the caller runs the
 * whole range itself: the result is the same either way, only the time differs. `split`
 * says where the second part starts (0 < split < n), or 0 for the middle. */
#ifndef DS_PAR_H
#define DS_PAR_H

#include <stddef.h>

typedef void (*par_fn)(void *ctx, size_t lo, size_t hi);

void par_halves(size_t n, size_t split, size_t min_n, par_fn fn, void *ctx);

#endif
