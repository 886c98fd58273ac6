/* timings.h - how long each phase of a cycle took, said on one log line per cycle.
 *
 * Benchmarks (bench/run.sh) and operators read where a cycle's time goes from the line
 * `"Cycle timings" list=... fetch=... decode=... decide=... evict=... wait=... total=... rss=...`
 * (seconds; this project's own line, at V3, the verbosity the runbook asks for;
 * docs/performance.md). Upstream has no such line; its loop duration metric is kept as it is.
 *
 * Phases: list = reading the cluster (wall), of which fetch = waiting for the API server's
 * page bodies and decode = decoding them into the model (with model_finish); decide = the
 * framework's cycle without the time spent in the eviction sink; evict = in the sink
 * (eviction requests, queueing their events, recording VM moves; on the watch cache also the
 * look at each pod's watch events since the view, which sends no request), of which wait = the
 * cycle's own requests on the wire and in the API server (the evictions, the VM move records;
 * not the Events, which a client of their own sends beside the cycle). total = the whole cycle: total - wait is the part of it
 * this process spends, whatever the server's load.
 * Then the pages and bytes listed, the objects read, the pods and the model's bytes (with the
 * watch cache: shared, the part its objects share, and of it sharedTables, the hash tables
 * that find it, which --watch-cache-compact-bytes does not count; see kube/watch.h), and rss:
 * the resident memory (bytes) at the end of the cycle, with its model still held. */
#ifndef DS_CLI_TIMINGS_H
#define DS_CLI_TIMINGS_H

#include "../framework/framework.h"

#include <stddef.h>

typedef struct {
  double list, fetch, decode, decide, evict, total;
  double wait; /* of evict: the cycle's requests (evictions, VM move records) on the wire and
                * in the server, from kube_client_waited; negative: not measured (simulate) */
  size_t pages, bytes, objects;
  size_t pods, model; /* the model's pods and the bytes it holds (model_bytes) */
  size_t shared;      /* watch cache: of model, what its objects share (0: no cache) */
  size_t shared_tables; /* of shared, the tables that find it: compaction does not count them */
} cycle_timings;

/* Logs t as the "Cycle timings" line at V3; fields that do not apply (simulate does not
 * list) are left out when negative. */
void timings_log(const cycle_timings *t);

/* A sink that forwards to inner and adds the time spent there to seconds. */
typedef struct {
  eviction_sink base;
  eviction_sink *inner;
  double seconds;
} timed_sink;

void timed_sink_init(timed_sink *t, eviction_sink *inner);

#endif
