/* timings.c - the "Cycle timings" line and the timing sink; see timings.h. */
#include "timings.h"

#include "../obs/log.h"
#include "../apimachinery/timeutil.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

/* microseconds are enough, and keep the line short */
static double us(double seconds) {
  return round(seconds * 1e6) / 1e6;
}

/* Resident memory now (Linux /proc/self/statm), 0 when unknown. */
static unsigned long long rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long size = 0, resident = 0;
  if (!f)
    return 0;
  if (fscanf(f, "%llu %llu", &size, &resident) != 2)
    resident = 0;
  fclose(f);
  return resident * (unsigned long long)sysconf(_SC_PAGESIZE);
}

void timings_log(const cycle_timings *t) {
  /* klog key order: the phases in the order they run, then the totals */
  if (!LOG_ON(3))
    return;
  log_field f[15];
  size_t n = 0;
  if (t->list >= 0) {
    f[n++] = LFLOAT("list", us(t->list));
    f[n++] = LFLOAT("fetch", us(t->fetch));
  }
  f[n++] = LFLOAT("decode", us(t->decode));
  f[n++] = LFLOAT("decide", us(t->decide));
  if (t->evict >= 0)
    f[n++] = LFLOAT("evict", us(t->evict));
  if (t->wait >= 0)
    f[n++] = LFLOAT("wait", us(t->wait));
  f[n++] = LFLOAT("total", us(t->total));
  if (t->list >= 0) {
    f[n++] = LUINT("pages", t->pages);
    f[n++] = LUINT("bytes", t->bytes);
  }
  f[n++] = LUINT("objects", t->objects);
  f[n++] = LUINT("pods", t->pods);
  f[n++] = LUINT("model", t->model);
  if (t->shared) {
    f[n++] = LUINT("shared", t->shared);
    f[n++] = LUINT("sharedTables", t->shared_tables);
  }
  f[n++] = LUINT("rss", rss_bytes());
  log_write('I', 3, __FILE__, __LINE__, "Cycle timings", NULL, NULL, f, n);
}

static sink_result timed_evict(eviction_sink *self, const pod *p, const eviction_request *req,
                               char *message, size_t cap) {
  timed_sink *t = (timed_sink *)self;
  double t0 = time_mono_seconds();
  sink_result r = t->inner->evict(t->inner, p, req, message, cap);
  t->seconds += time_mono_seconds() - t0;
  return r;
}

static void timed_event(eviction_sink *self, const pod *p, const char *type, const char *reason,
                        const char *note) {
  timed_sink *t = (timed_sink *)self;
  double t0 = time_mono_seconds();
  t->inner->event(t->inner, p, type, reason, note);
  t->seconds += time_mono_seconds() - t0;
}

void timed_sink_init(timed_sink *t, eviction_sink *inner) {
  t->base.evict = timed_evict;
  t->base.event = inner->event ? timed_event : NULL;
  t->base.dry_run = inner->dry_run;
  t->inner = inner;
  t->seconds = 0;
}
