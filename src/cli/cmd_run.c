/* cmd_run.c - `descheduler [flags]`: upstream's command, against a cluster.
 *
 * Upstream's order (cmd/descheduler/app, pkg/descheduler Run): flags (options.go; `_` accepted for
 * `-`), feature gates, the HTTPS /metrics + /healthz listener, the API client, the policy,
 * eviction discovery, then the loop. --descheduling-interval 0 runs one cycle and exits
 * (CronJob); otherwise a cycle starts every interval, measured from the previous start
 * (Deployment). --leader-elect guards the loop with a Lease; losing it exits 0. SIGTERM and
 * SIGINT stop between requests, release the lease and exit 0.
 *
 * A one-shot cycle lists the cluster into a new model (paged); in Deployment mode the cycles
 * run on a watch cache (kube/watch.h: listed once, then watched; --watch-cache=false lists every
 * cycle). No pod is read again before its eviction: on the watch cache, the pod's watch events
 * that came since the cycle's view stop an eviction that is no longer right (the pod gone,
 * replaced, moved or being deleted), and every eviction carries the pod's UID as a
 * precondition, so the API server refuses it for another pod of the same name
 * (docs/watch-cache.md). Then the cycle reads the actual utilization the policy's plugins use
 * (metrics.k8s.io, Prometheus: src/usage/), brings the background eviction cache up to date,
 * and runs the same framework as `simulate`. A cycle whose lists fail, or whose watch cache is
 * not synced, evicts nothing; a one-shot run then retries with backoff and exits 1 when the
 * cluster stays unreadable (upstream retries forever).
 *
 * The command is in three parts: run_flags (the flags and their checks: bad input exits 2
 * before anything is contacted), run_setup (signals, the /metrics listener, the API client,
 * the policy, discovery, the leader lease), run_loop (the cycles), then run_teardown. The
 * signals and the client are made as soft-taint makes them (cli/live.h).
 *
 * --kubedescheduler FILE / --kubedescheduler-ref NAMESPACE/NAME take the policy and the flags
 * from an OpenShift KubeDescheduler CR instead (cli/kdsource.h, docs/openshift.md): the CR is
 * rendered at start (an invalid one exits 2) and again at the start of every cycle with that
 * cycle's view of the cluster (a reference is read again from the API server each time); a
 * changed rendering is used from that cycle on. A CR that becomes invalid (or whose policy
 * does not load) is refused once, with a log line, an Event on the CR and a metric, and the
 * last good policy keeps running; while the CR is not there or cannot be read, cycles evict
 * nothing. Flags given on the command line win over the rendered ones, except that a
 * Predictive CR always means a dry run.
 *
 * In Deployment mode --policy-config-file is read again before every cycle; a changed file
 * (a ConfigMap volume's ..data link swapped by the kubelet) is loaded and used from that cycle,
 * or refused as a changed CR is (the Event is on the descheduler's own pod). */
#include "../framework/framework.h"
#include "../kube/cluster.h"
#include "../kube/config.h"
#include "../kube/lease.h"
#include "../kube/pager.h"
#include "../kube/watch.h"
#include "../runbook/recorder.h"
#include "../kube/openshift.h"
#include "../obs/log.h"
#include "../obs/metrics.h"
#include "../obs/server.h"
#include "../obs/tlsconfig.h"
#include "../plugins/registry.h"
#include "../plugins/vmsafety.h"
#include "../policy/policy.h"
#include "../framework/decisions.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "../util/xalloc.h"
#include "../usage/usage.h"
#include "cli.h"
#include "flags.h"
#include "hint.h"
#include "kdsource.h"
#include "live.h"
#include "timings.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_leader_lost;

/* The leader could not renew its lease for the renew deadline (the renewer saw it, or a write
 * was about to leave: leader_gate): said once, the process stops and exits 0 without
 * releasing the lease, as upstream's OnStoppedLeading. */
static void leader_lost(void) {
  if (!__atomic_exchange_n(&g_leader_lost, 1, __ATOMIC_ACQ_REL))
    LOGV(1, NULL, "Leader lost");
  live_stop();
}

/* a one-shot (CronJob) run whose cycle cannot read the cluster tries this often in all */
#define CRONJOB_ATTEMPTS 4

typedef struct {
  int64_t interval_ns;
  const char *policy;
  bool dry_run;
  const char *kubeconfig, *kubeconfig2;
  double qps;
  long long burst;
  bool disable_metrics, enable_http2;
  const char *gates;
  bool leader_elect;
  int64_t lease_duration, renew_deadline, retry_period;
  const char *lock, *lease_name, *lease_ns;
  const char *bind_address;
  long long secure_port;
  const char *cert_dir, *tls_cert, *tls_key, *tls_min, *tls_sni;
  flag_strings tls_ciphers, tls_curves; /* pflag slices: every occurrence adds to the list */
  long long h2_streams;
  bool port_sharing, address_sharing, disable_h2;
  long long v;
  const char *vmodule, *logging_format;
  int64_t flush_frequency;
  bool text_split, json_split;
  const char *text_buf, *json_buf;
  const char *otel_endpoint, *otel_ca, *otel_service, *otel_ns;
  double otel_rate;
  bool otel_fallback;
  long long page_size;
  const char *decisions_file;
  long long decision_examples;
  const char *kd_file, *kd_ref, *prometheus_url, *psi;
  int64_t request_timeout, exec_timeout;
  bool allow_http;
  bool watch_cache;
  int64_t watch_stall;
  long long watch_compact;
  bool version;
} run_opts;

/* The leader renews its Lease every retry period in its own thread with its own client
 * (client-go's elector runs beside the loop the same way), so a long cycle cannot let the
 * lease lapse unnoticed. Failing to renew for the renew deadline stops the process. */
typedef struct {
  lease_elector *le;
  int64_t retry_period, renew_deadline;
  volatile sig_atomic_t quit;
} renewer;

typedef struct {
  kube_client *client;
  policy *pol;
  usage_live *usage;
  kube_discovery disc;
  bg_cache bg;
  bool first;
  feature_gates gates;
  run_opts *o;
  char hostname[256];
  FILE *decisions_out; /* --decisions-file, appended to */
  unsigned long long cycles;
  /* --kubedescheduler / --kubedescheduler-ref */
  kdsrc *kd;
  bool kd_broken;    /* the CR is not there: evict nothing */
  char *kd_rejected; /* the message the last refused rendering was refused with */
  /* --policy-config-file in Deployment mode: the content last read (the running policy's,
   * or a refused one's), read again before every cycle */
  char *policy_text;
  bool policy_unreadable; /* the last read failed (logged once) */
  bool explicit_interval, explicit_v, explicit_gates, explicit_dry_run;
  plugin_env env;
  /* Deployment mode: the cluster from a watch cache instead of a list every cycle */
  watch_cache *cache;
  bool cache_conditions; /* it keeps the pods' conditions */
  kube_config *cfg;
  /* Events, sent by a thread of their own so that no eviction waits on one (events.h) */
  event_sender *events;
  obs_server *srv; /* /metrics and /healthz */
  strbuf tls_priorities; /* the --tls-* flags as GnuTLS's priority string (obs/tlsconfig.h) */
  /* --leader-elect: the lease and the thread that renews it */
  bool elect, renewing;
  lease_elector le;
  kube_client *lease_client;
  renewer rn;
  pthread_t renew_thread;
  /* KubeVirt refused a targeted move's spec.addedNodeSelector: evict instead (cluster.h) */
  bool no_targeted_moves;
  /* since when nodes have been overutilized (VMSafety's overutilizedFor), across cycles */
  fw_history history;
} runner;

/* what the loop does between cycles: the metrics collector samples on its own period, as
 * upstream's collector runs beside the loop, and the watch cache (if any) stays current */
static void between_cycles(void *ctx) {
  runner *r = ctx;
  usage_live_tick(r->usage);
  if (r->cache)
    watch_cache_pump(r->cache);
}

/* One JSON line per cycle in --decisions-file: when, the totals, and the decision record. A
 * write that fails is logged; the cycle's evictions stand. */
static void write_decisions(runner *r, const fw_result *res, const decisions *dec, int64_t now) {
  strbuf sb = {0};
  sb_append(&sb, "{\"time\":\"");
  time_format_rfc3339(&sb, now);
  sb_printf(&sb,
            "\",\"cycle\":%llu,\"dryRun\":%s,\"totals\":{\"evicted\":%llu,\"requests\":%llu,"
            "\"migrations\":%llu,\"evacuations\":%llu},\"decisions\":",
            (unsigned long long)++r->cycles, r->o->dry_run ? "true" : "false",
            (unsigned long long)res->evicted, (unsigned long long)res->requests,
            (unsigned long long)res->migrations, (unsigned long long)res->evacuations);
  decisions_json(dec, (size_t)r->o->decision_examples, false, &sb);
  sb_append(&sb, "}\n");
  if (fputs(sb_str(&sb), r->decisions_out) == EOF || fflush(r->decisions_out) == EOF)
    LOGE(NULL, "Could not write the decision record", strerror(errno),
         LSTR("file", r->o->decisions_file));
  sb_free(&sb);
}

/* The rendered flags, where the command line did not give them (a Predictive CR is always a
 * dry run). */
static void kd_apply_settings(runner *r) {
  const kd_result *k = kdsrc_result(r->kd);
  if (!r->explicit_interval)
    r->o->interval_ns = k->interval_seconds * 1000000000LL;
  r->o->dry_run = r->explicit_dry_run || k->dry_run;
  if (!r->explicit_v)
    log_set_verbosity(k->verbosity);
  if (!r->explicit_gates) {
    if (k->evictions_in_background && !r->gates.evictions_in_background)
      r->first = true; /* rebuild the background cache from the pods' annotations */
    r->gates.evictions_in_background = k->evictions_in_background;
  }
}

/* An Event about the policy in force: on `about`, or (NULL) on the descheduler's own pod when
 * it knows it (kube_config_own_pod). None in a dry run, which writes nothing to the cluster. */
static void policy_event(runner *r, const event_regarding *about, const char *type,
                         const char *reason, const char *note) {
  char ns[256], name[256], text[1024];
  event_regarding pod = {"v1", "Pod", ns, name, NULL};
  if (r->o->dry_run || !r->events)
    return;
  if (!about) {
    if (!kube_config_own_pod(r->cfg, ns, sizeof ns, name, sizeof name)) {
      LOGV(2, NULL, "No Event about the policy: the descheduler does not know its own pod "
                    "(POD_NAMESPACE and POD_NAME, or the in-cluster config)",
           LSTR("reason", reason));
      return;
    }
    about = &pod;
  }
  /* an Event's note holds at most 1 kB */
  snprintf(text, sizeof text, "%s", note);
  event_sender_emit(r->events, about, type, reason, "PolicyReload", text, r->hostname);
}

/* A policy that loads but cannot run here: one that enables KubevirtMigrationAware on a cluster
 * without KubeVirt (upstream's plugin fails to build). true with the message in err. */
static bool policy_unusable(runner *r, const policy *pol, dserr *err) {
  const char *p = r->disc.kubevirt ? NULL : policy_profile_enabling(pol, "KubevirtMigrationAware");
  if (p)
    dserr_set(err,
              "failed to create new descheduler: unable to create \"%s\" profile: unable to "
              "build KubevirtMigrationAware plugin: timed out waiting for VMI informer cache to "
              "sync (is KubeVirt installed?)",
              p);
  return p != NULL;
}

/* Puts np in force from this cycle: what reads actual utilization follows it, and a watch cache
 * that leaves out the pods' conditions it needs is listed again. */
static void policy_switch(runner *r, policy *np) {
  policy_free(r->pol);
  r->pol = np;
  usage_live_free(r->usage);
  r->usage = usage_live_new(r->pol, r->client);
  if (r->cache && !r->cache_conditions && fw_reads_pod_conditions(np)) {
    LOGV(0, NULL, "The new policy reads the pods' conditions, which the watch cache leaves out; "
                  "it lists the cluster again");
    watch_cache_free(r->cache);
    r->cache = NULL;
  }
}

/* Renders the CR against this cycle's model and switches to a changed policy. -1 when the
 * cycle must evict nothing. */
static int kd_refresh(runner *r, model *m) {
  dserr err;
  char route_error[1024];
  if (kube_read_openshift_objects(r->client, m, route_error, sizeof route_error, &err) < 0) {
    LOGE(NULL, "Failed to read the cluster state; nothing is evicted this cycle", err.msg);
    return -1;
  }
  int changed = kdsrc_render(r->kd, m, r->client, route_error, &err);
  if (changed == KDSRC_UNREADABLE) {
    LOGE(NULL, "Failed to read the KubeDescheduler; nothing is evicted this cycle", err.msg,
         LSTR("kubedescheduler", kdsrc_name(r->kd)));
    return -1;
  }
  if (changed == KDSRC_NOT_FOUND) {
    LOGE(NULL, "The KubeDescheduler is not there; nothing is evicted until it is", err.msg,
         LSTR("kubedescheduler", kdsrc_name(r->kd)));
    r->kd_broken = true;
    return -1;
  }
  policy *np = NULL;
  if (changed == 1) {
    np = kdsrc_load_policy(r->kd, &r->env, &err);
    if (np && policy_unusable(r, np, &err)) {
      policy_free(np);
      np = NULL;
    }
  }
  if (changed < 0 || (changed == 1 && !np)) {
    /* refused once per message; the last good rendering's policy and settings stay (a
     * rendering whose policy did not load is tried again at the next cycle) */
    if (changed == 1)
      kdsrc_forget(r->kd);
    if (!r->kd_rejected || strcmp(r->kd_rejected, err.msg) != 0) {
      LOGE(NULL, "The KubeDescheduler's new rendering is refused; the last good policy keeps running",
           err.msg, LSTR("kubedescheduler", kdsrc_name(r->kd)));
      metrics_policy_reload("rejected");
      event_regarding cr = {"operator.openshift.io/v1", "KubeDescheduler", kdsrc_namespace(r->kd),
                            kdsrc_object_name(r->kd), NULL};
      policy_event(r, kdsrc_namespace(r->kd) ? &cr : NULL, "Warning", "PolicyRejected", err.msg);
      free(r->kd_rejected);
      r->kd_rejected = xstrdup(err.msg);
    }
    r->kd_broken = false;
    return 0;
  }
  bool was_refused = r->kd_broken || r->kd_rejected;
  free(r->kd_rejected);
  r->kd_rejected = NULL;
  r->kd_broken = false;
  if (!changed) {
    if (was_refused)
      LOGV(0, NULL, "The KubeDescheduler can be rendered again; its policy is used from this cycle",
           LSTR("kubedescheduler", kdsrc_name(r->kd)));
    return 0;
  }
  policy_switch(r, np);
  kd_apply_settings(r);
  kdsrc_log_warnings(r->kd, false);
  metrics_policy_reload("loaded");
  LOGV(0, NULL, "The KubeDescheduler's rendering changed; the new policy is used from this cycle",
       LSTR("kubedescheduler", kdsrc_name(r->kd)), LBOOL("dryRun", r->o->dry_run),
       LINT("deschedulingIntervalSeconds", r->o->interval_ns / 1000000000LL));
  return 0;
}

/* --policy-config-file in Deployment mode, before each cycle: the file read again (a ConfigMap
 * volume is updated by swapping its ..data link, so the read sees the old file or the new
 * one, whole). A changed content is loaded and used from this cycle, or refused (logged, an
 * Event, a metric) while the last good policy keeps running. */
static void policy_file_refresh(runner *r) {
  size_t len;
  char *text = read_file_text(r->o->policy, &len);
  if (!text) {
    if (!r->policy_unreadable)
      LOGE(NULL, "The policy file cannot be read; the last good policy keeps running",
           strerror(errno), LSTR("file", r->o->policy));
    r->policy_unreadable = true;
    return;
  }
  r->policy_unreadable = false;
  if (r->policy_text && strcmp(text, r->policy_text) == 0) {
    free(text);
    return;
  }
  free(r->policy_text);
  r->policy_text = text;
  dserr err;
  policy *np = policy_load_string(r->o->policy, text, plugin_lookup, &r->env, &err);
  if (np && policy_unusable(r, np, &err)) {
    policy_free(np);
    np = NULL;
  }
  if (!np) {
    LOGE(NULL, "The changed policy is refused; the last good policy keeps running", err.msg,
         LSTR("file", r->o->policy));
    metrics_policy_reload("rejected");
    policy_event(r, NULL, "Warning", "PolicyRejected", err.msg);
    return;
  }
  policy_switch(r, np);
  metrics_policy_reload("loaded");
  LOGV(0, NULL, "The policy file changed; the new policy is used from this cycle",
       LSTR("file", r->o->policy));
  strbuf note = {0};
  sb_printf(&note, "the policy file %s changed; its new policy is used from this cycle", r->o->policy);
  policy_event(r, NULL, "Normal", "PolicyLoaded", sb_str(&note));
  sb_free(&note);
}

/* The cycle's model from the watch cache: -1 (nothing evicted) while it is not synced. */
static model *cache_model(runner *r, cycle_timings *tm, dserr *err) {
  if (!r->cache) {
    watch_options wo = {r->cfg, r->o->qps, (int)r->o->burst, r->disc.kubevirt,
                        (int)r->o->page_size, r->kd || fw_reads_pod_conditions(r->pol),
                        (long)(r->o->watch_stall / 1000000000LL)};
    wo.compact_bytes = (size_t)r->o->watch_compact;
    r->cache = watch_cache_new(r->client, &wo, err);
    if (!r->cache)
      return NULL;
    r->cache_conditions = wo.keep_pod_conditions;
  }
  double t0 = time_mono_seconds();
  watch_cache_pump(r->cache);
  tm->list = time_mono_seconds() - t0;
  char why[2048];
  if (!watch_cache_synced(r->cache, why, sizeof why)) {
    dserr_set(err, "the watch cache is not synced: %s", why);
    return NULL;
  }
  double t1 = time_mono_seconds();
  model *m = watch_cache_view(r->cache, err);
  tm->decode = time_mono_seconds() - t1;
  watch_stats ws;
  watch_cache_stats(r->cache, &ws);
  tm->model = ws.bytes;
  tm->shared = ws.shared;
  tm->shared_tables = ws.shared_tables;
  tm->objects = ws.objects;
  return m;
}

/* One cycle: read, sync the background cache, decide, evict. -1 when the reads failed. */
static int run_cycle(runner *r) {
  model *m = NULL;
  dserr err;
  int rc = 0;
  cycle_timings tm = {0};
  kube_read_stats rs = {0};
  double t_start = time_mono_seconds();
  if (r->policy_text && r->o->interval_ns > 0)
    policy_file_refresh(r);
  if (r->o->watch_cache) {
    m = cache_model(r, &tm, &err);
    if (!m) {
      LOGE(NULL, "Failed to read the cluster state; nothing is evicted this cycle", err.msg);
      rc = -1;
      goto out;
    }
    goto read;
  }
  m = model_new();
  /* a KubeDescheduler's policy is rendered after the read: it may want them */
  m->keep_pod_conditions = r->kd || fw_reads_pod_conditions(r->pol);
  int rr = kube_read_cluster_stats(r->client, m, r->disc.kubevirt, (int)r->o->page_size, &rs, &err);
  if (rr == KUBE_READ_EXPIRED) {
    /* as client-go's pager: the expired list is read again from the start, once */
    LOGW(NULL, "A paged list expired while it was read; reading the cluster again from the start",
         LSTR("err", err.msg));
    bool keep = m->keep_pod_conditions;
    model_free(m);
    m = model_new();
    m->keep_pod_conditions = keep;
    rr = kube_read_cluster_stats(r->client, m, r->disc.kubevirt, (int)r->o->page_size, &rs, &err);
  }
  double t_finish = time_mono_seconds();
  if (rr < 0 || model_finish(m, &err) < 0) {
    LOGE(NULL, "Failed to read the cluster state; nothing is evicted this cycle", err.msg);
    rc = -1;
    goto out;
  }
  tm.list = time_mono_seconds() - t_start;
  tm.fetch = rs.fetch_s;
  tm.decode = rs.decode_s + (time_mono_seconds() - t_finish);
  tm.pages = rs.pages;
  tm.bytes = rs.bytes;
  tm.objects = rs.items;
  tm.model = model_bytes(m);
  /* what reading freed (pages, their trees, the decoders' scratch) goes back before deciding */
  xrelease();
read:
  tm.pods = m->pods.n;
  m->vmis_complete = r->disc.kubevirt;
  if (r->kd && kd_refresh(r, m) < 0) {
    rc = -1;
    goto out;
  }
  if (usage_live_fetch(r->usage, m, &err) < 0) {
    LOGE(NULL, "failed to run descheduler loop", err.msg);
    rc = -1;
    goto out;
  }
  if (r->gates.evictions_in_background)
    bg_sync(&r->bg, m, (int64_t)time(NULL), r->first);
  r->first = false;
  live_sink sink;
  live_sink_init(&sink, r->client, r->events, r->disc.policy_group_version, r->hostname,
                 r->o->dry_run, live_stop_flag());
  sink.m = m;
  sink.no_targeted_moves = &r->no_targeted_moves;
  decisions *dec = r->decisions_out ? decisions_new(m) : NULL;
  fw_options opt = {r->gates.evictions_in_background, (int64_t)time(NULL), dec, live_stop_flag(),
                    &r->history};
  /* VMSafety's cooldown needs each move remembered on its VMI */
  move_recorder rec;
  eviction_sink *out = &sink.base;
  /* on the watch cache, the pod's watch events since the view may stop its eviction (no
   * request: the UID precondition covers what the watch has not told yet) */
  recheck_sink fresh;
  if (r->cache && !r->o->dry_run) {
    recheck_sink_init(&fresh, out, r->cache);
    out = &fresh.base;
  }
  if (r->disc.kubevirt && !r->o->dry_run && vmsafety_records_moves(r->pol)) {
    move_recorder_init(&rec, out, r->client, m, opt.now);
    out = &rec.base;
  }
  timed_sink timed;
  timed_sink_init(&timed, out);
  fw_result res;
  double t_decide = time_mono_seconds(), waited = kube_client_waited(r->client);
  if (fw_run_cycle(r->pol, m, &r->bg, &timed.base, &opt, &res, &err) < 0) {
    LOGE(NULL, "failed to run descheduler loop", err.msg);
    rc = -1;
  } else {
    if (dec)
      write_decisions(r, &res, dec, opt.now);
    /* the hysteresis state on the nodes, so that it holds across one-shot runs and restarts */
    if (!r->o->dry_run && vmsafety_keeps_history(r->pol))
      kube_write_over_since(r->client, m, &r->history);
  }
  tm.evict = timed.seconds;
  tm.wait = kube_client_waited(r->client) - waited;
  tm.decide = time_mono_seconds() - t_decide - timed.seconds;
  tm.total = time_mono_seconds() - t_start;
  timings_log(&tm);
  decisions_free(dec);
  fw_result_free(&res);
out:
  if (r->cache)
    watch_cache_release_view(r->cache, m);
  else
    model_free(m);
  return rc;
}

/* the renewer was told to quit, or the process is stopping */
static bool renewer_done(renewer *rn) {
  return __atomic_load_n(&rn->quit, __ATOMIC_ACQUIRE) || live_stopping();
}

/* The gate of the leader's API client (kube_client_set_gate): no write leaves unless the
 * lease is surely still ours (lease_held). A leader stopped long enough (SIGSTOP, a stall, a
 * suspended machine) for another replica to take over runs on when it resumes, its cycle
 * before its renewer; this refuses its next eviction, or any other write, at the last moment
 * before the request leaves, and ends the leadership. Reads go on. */
static bool leader_gate(void *ctx, const char *method, char *why, size_t cap) {
  runner *r = ctx;
  if (!strcmp(method, "GET") || !strcmp(method, "HEAD") || lease_held(&r->le))
    return true;
  int64_t ago = lease_monotonic_ns() - __atomic_load_n(&r->le.last_renewed, __ATOMIC_ACQUIRE);
  snprintf(why, cap, "the leader lease was last renewed %.1fs ago, longer than the renew "
                     "deadline %.1fs: another replica may hold it",
           (double)ago / 1e9, (double)r->o->renew_deadline / 1e9);
  leader_lost();
  return false;
}

static void *renew_loop(void *arg) {
  renewer *rn = arg;
  dserr err;
  while (!renewer_done(rn)) {
    int64_t slept = 0;
    while (slept < rn->retry_period && !renewer_done(rn)) {
      struct timespec ts = {0, 50000000L};
      nanosleep(&ts, NULL);
      slept += 50000000LL;
    }
    if (renewer_done(rn))
      break;
    int got = lease_try(rn->le, &err);
    if (got < 0)
      LOGE(NULL, "Failed to renew the leader lease", err.msg);
    if (got != 1 && lease_monotonic_ns() - rn->le->last_renewed > rn->renew_deadline) {
      leader_lost();
      break;
    }
  }
  return NULL;
}

static void warn_unsupported(const flag_def *defs) {
  static const char *ignored[] = {"enable-http2", "tls-sni-cert-key",
                                  "http2-max-streams-per-connection", "permit-port-sharing",
                                  "permit-address-sharing", "disable-http2-serving", "vmodule",
                                  "log-flush-frequency", "log-text-split-stream",
                                  "log-json-split-stream", "log-text-info-buffer-size",
                                  "log-json-info-buffer-size", "otel-collector-endpoint",
                                  "otel-transport-ca-cert", "otel-service-name",
                                  "otel-trace-namespace", "otel-sample-rate",
                                  "otel-fallback-no-op-on-error", "cert-dir", NULL};
  for (size_t i = 0; ignored[i]; i++) {
    const flag_def *d = flags_find(defs, ignored[i]);
    if (d && d->seen)
      LOGW(NULL, "Flag accepted for compatibility but has no effect in this build",
           LSTR("flag", ignored[i]));
  }
}

/* `descheduler --help`: upstream's command first (its flags are the program's own), then the
 * commands of the table */
static void usage(FILE *out, const flag_def *defs) {
  fprintf(out,
          "The descheduler evicts pods which may be bound to less desired nodes (upstream's\n"
          "command, with its flags), and rebalances KubeVirt virtual machines. Without a command\n"
          "it runs against a cluster: one cycle with --descheduling-interval 0 (CronJob), else a\n"
          "cycle every interval (Deployment).\n\n"
          "Usage: descheduler [flags]\n"
          "       descheduler (--kubedescheduler FILE | --kubedescheduler-ref NS/NAME) [flags]\n"
          "       descheduler COMMAND [flags]\n\n");
  cli_commands_list(out);
  fprintf(out, "\nFlags:\n");
  flags_usage(out, defs);
  cli_exit_status(out, "the cluster could not be read (discovery, the eviction API, a one-shot\n"
                       "cycle after its retries) or the /metrics listener could not start");
  fprintf(out, "\nUse \"descheduler COMMAND --help\" for more information about a command.\n");
}

/* The flags' values and how they go together, once parsed; the decisions file is opened here
 * (a path that cannot be written is bad input). FLAGS_RUN, or EXIT_CONFIG after the message. */
static int run_check_flags(run_opts *o, runner *r, const flag_def *defs) {
  dserr err;
  if (strcmp(o->logging_format, "text") && strcmp(o->logging_format, "json")) {
    fprintf(stderr, "descheduler: --logging-format: expected text or json, got \"%s\"\n", o->logging_format);
    return EXIT_CONFIG;
  }
  log_set_verbosity((int)o->v);
  log_set_format(strcmp(o->logging_format, "json") ? LOG_TEXT : LOG_JSON);
  warn_unsupported(defs);
  r->o = o;
  r->first = true;
  if (feature_gates_parse(o->gates, &r->gates, &err) < 0) {
    fprintf(stderr, "descheduler: --feature-gates: %s\n", err.msg);
    return EXIT_CONFIG;
  }
  if (o->decision_examples < 0) {
    fprintf(stderr, "descheduler: --decision-examples must be 0 or more\n");
    return EXIT_CONFIG;
  }
  if (o->request_timeout < 0 || o->exec_timeout <= 0) {
    fprintf(stderr, "descheduler: %s must be %s\n",
            o->request_timeout < 0 ? "--client-connection-timeout" : "--client-connection-exec-timeout",
            o->request_timeout < 0 ? "0 (no limit) or positive" : "positive");
    return EXIT_CONFIG;
  }
  if (o->page_size < 1) {
    fprintf(stderr, "descheduler: --list-page-size must be at least 1\n");
    return EXIT_CONFIG;
  }
  if (o->watch_compact < 0) {
    fprintf(stderr, "descheduler: --watch-cache-compact-bytes must not be negative\n");
    return EXIT_CONFIG;
  }
  if (o->watch_stall < 1000000000LL) {
    fprintf(stderr, "descheduler: --watch-stall-timeout must be at least 1s\n");
    return EXIT_CONFIG;
  }
  bool kd = o->kd_file || o->kd_ref;
  if (kd && o->policy) {
    fprintf(stderr, "descheduler: --policy-config-file and --kubedescheduler%s cannot be used "
                    "together: the policy is rendered from the KubeDescheduler\n",
            o->kd_ref ? "-ref" : "");
    return EXIT_CONFIG;
  }
  r->explicit_interval = flags_find(defs, "descheduling-interval")->seen;
  r->explicit_v = flags_find(defs, "v")->seen;
  r->explicit_gates = flags_find(defs, "feature-gates")->seen;
  r->explicit_dry_run = o->dry_run;
  if (!kd && (!o->policy || !*o->policy)) {
    LOGV(1, NULL, "Policy config file not specified");
    fprintf(stderr, "descheduler: --policy-config-file is required (upstream: deschedulerPolicy is nil)\n");
    return EXIT_CONFIG;
  }
  if (strcmp(o->lock, "leases")) {
    fprintf(stderr, "descheduler: Invalid lock-type %s\n", o->lock);
    return EXIT_CONFIG;
  }
  if (!kd && o->leader_elect && !o->dry_run && o->interval_ns == 0) {
    fprintf(stderr, "descheduler: leaderElection must be used with deschedulingInterval\n");
    return EXIT_CONFIG;
  }
  if ((o->tls_cert && !o->tls_key) || (!o->tls_cert && o->tls_key)) {
    fprintf(stderr, "descheduler: --tls-cert-file and --tls-private-key-file must be given together\n");
    return EXIT_CONFIG;
  }
  /* as upstream's SecureServingOptions.ApplyTo, which reads them only when serving */
  if (o->secure_port != 0) {
    tls_flags tf = {o->tls_min, o->tls_ciphers.items, o->tls_ciphers.n, o->tls_curves.items,
                    o->tls_curves.n};
    if (tls_priorities(&tf, &r->tls_priorities, &err) < 0) {
      cli_error("descheduler", err.msg);
      return EXIT_CONFIG;
    }
  }
  if (o->decisions_file && *o->decisions_file) {
    r->decisions_out = fopen(o->decisions_file, "a");
    if (!r->decisions_out) {
      fprintf(stderr, "descheduler: --decisions-file: cannot open \"%s\": %s\n", o->decisions_file,
              strerror(errno));
      return EXIT_CONFIG;
    }
  }
  gethostname(r->hostname, sizeof r->hostname - 1);
  return FLAGS_RUN;
}

/* The flags and their checks: bad input exits 2 before anything is contacted. FLAGS_RUN to
 * go on, else the exit code (0 after --help or --version). */
static int run_flags(int argc, char **argv, run_opts *o, runner *r) {
  *o = (run_opts){0};
  o->bind_address = "0.0.0.0";
  o->secure_port = 10258;
  o->lease_duration = 137LL * 1000000000LL;
  o->renew_deadline = 107LL * 1000000000LL;
  o->retry_period = 26LL * 1000000000LL;
  o->lock = "leases";
  o->lease_name = "descheduler";
  o->lease_ns = "kube-system";
  o->logging_format = "text";
  o->flush_frequency = 5LL * 1000000000LL;
  o->otel_service = "descheduler";
  o->otel_rate = 1;
  o->page_size = KUBE_LIST_PAGE_SIZE_DEFAULT;
  o->decision_examples = DECISION_EXAMPLES_DEFAULT;
  o->psi = "auto";
  o->request_timeout = 60LL * 1000000000LL;
  o->exec_timeout = KUBE_EXEC_TIMEOUT_DEFAULT_NS;
  o->watch_cache = true;
  o->watch_stall = 150LL * 1000000000LL;
  o->watch_compact = 16LL << 20;
  flag_def defs[] = {
      {"descheduling-interval", NULL, FLAG_DURATION, &o->interval_ns, "time between descheduling cycles; 0 runs one cycle and exits", NULL},
      {"policy-config-file", NULL, FLAG_STRING, &o->policy, "DeschedulerPolicy file", NULL},
      {"dry-run", NULL, FLAG_BOOL, &o->dry_run, "decide and log, evict nothing", NULL},
      {"kubeconfig", NULL, FLAG_STRING, &o->kubeconfig, "kubeconfig file (deprecated alias of --client-connection-kubeconfig); empty = in-cluster config", NULL},
      {"client-connection-kubeconfig", NULL, FLAG_STRING, &o->kubeconfig2, "kubeconfig file; empty = in-cluster config", NULL},
      {"client-connection-qps", NULL, FLAG_FLOAT, &o->qps, "client-side requests per second (0 = 5)", NULL},
      {"client-connection-burst", NULL, FLAG_INT, &o->burst, "client-side request burst (0 = 10)", NULL},
      {"client-connection-timeout", NULL, FLAG_DURATION, &o->request_timeout, "longest time one API request may take, connecting included; 0 = no limit (not in upstream, whose client has none)", NULL},
      {"client-connection-exec-timeout", NULL, FLAG_DURATION, &o->exec_timeout, "longest time a kubeconfig exec credential plugin may run before it is killed (not in upstream, which waits for ever)", NULL},
      {"allow-insecure-http", NULL, FLAG_BOOL, &o->allow_http, "allow a plain http:// API server that is not loopback; the kubeconfig must also say insecure-skip-tls-verify (not in upstream)", NULL},
      {"disable-metrics", NULL, FLAG_BOOL, &o->disable_metrics, "serve no /metrics and record no metrics", NULL},
      {"enable-http2", NULL, FLAG_BOOL, &o->enable_http2, "HTTP/2 on the HTTPS server (accepted; HTTP/1.1 is served)", NULL},
      {"feature-gates", NULL, FLAG_STRING, &o->gates, "key=true|false,...: EvictionsInBackground (alpha), AllAlpha, AllBeta", NULL},
      {"leader-elect", NULL, FLAG_BOOL, &o->leader_elect, "run the loop only while holding the leader Lease", NULL},
      {"leader-elect-lease-duration", NULL, FLAG_DURATION, &o->lease_duration, "lease duration", NULL},
      {"leader-elect-renew-deadline", NULL, FLAG_DURATION, &o->renew_deadline, "the leader gives up when it cannot renew for this long", NULL},
      {"leader-elect-retry-period", NULL, FLAG_DURATION, &o->retry_period, "time between acquire and renew attempts", NULL},
      {"leader-elect-resource-lock", NULL, FLAG_STRING, &o->lock, "lock type; only leases", NULL},
      {"leader-elect-resource-name", NULL, FLAG_STRING, &o->lease_name, "Lease name", NULL},
      {"leader-elect-resource-namespace", NULL, FLAG_STRING, &o->lease_ns, "Lease namespace", NULL},
      {"bind-address", NULL, FLAG_STRING, &o->bind_address, "address of the HTTPS /metrics and /healthz listener", NULL},
      {"secure-port", NULL, FLAG_INT, &o->secure_port, "port of the HTTPS listener; 0 = none", NULL},
      {"cert-dir", NULL, FLAG_STRING, &o->cert_dir, "accepted for compatibility; without cert files a self-signed certificate is made in memory", NULL},
      {"tls-cert-file", NULL, FLAG_STRING, &o->tls_cert, "serving certificate (PEM)", NULL},
      {"tls-private-key-file", NULL, FLAG_STRING, &o->tls_key, "serving key (PEM)", NULL},
      {"tls-cipher-suites", NULL, FLAG_STRINGS, &o->tls_ciphers, "comma-separated cipher suites of the HTTPS listener, by Go's names (TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256, ...): TLS 1.0-1.2 negotiate exactly these, TLS 1.3 the TLS 1.3 suites among them or of their ciphers; a list GnuTLS cannot serve exactly is refused (docs/security.md#tls-versions-cipher-suites-and-groups)", "GnuTLS's NORMAL suites"},
      {"tls-min-version", NULL, FLAG_STRING, &o->tls_min, "minimum TLS version of the HTTPS listener: VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13", "VersionTLS12"},
      {"tls-curve-preferences", NULL, FLAG_STRINGS, &o->tls_curves, "comma-separated key exchange groups of the HTTPS listener, as Go's numeric tls.CurveID values: 23 (P-256), 24 (P-384), 25 (P-521), 29 (X25519); 4587, 4588 and 4589 (the ML-KEM hybrids) where GnuTLS has them", "GnuTLS's NORMAL groups"},
      {"tls-sni-cert-key", NULL, FLAG_STRING, &o->tls_sni, "accepted for compatibility, no effect", NULL},
      {"http2-max-streams-per-connection", NULL, FLAG_INT, &o->h2_streams, "accepted for compatibility, no effect", NULL},
      {"permit-port-sharing", NULL, FLAG_BOOL, &o->port_sharing, "accepted for compatibility, no effect", NULL},
      {"permit-address-sharing", NULL, FLAG_BOOL, &o->address_sharing, "accepted for compatibility, no effect", NULL},
      {"disable-http2-serving", NULL, FLAG_BOOL, &o->disable_h2, "accepted for compatibility, no effect", NULL},
      {"v", "v", FLAG_INT, &o->v, "log verbosity", NULL},
      {"vmodule", NULL, FLAG_STRING, &o->vmodule, "accepted for compatibility, no effect", NULL},
      {"log-flush-frequency", NULL, FLAG_DURATION, &o->flush_frequency, "accepted; lines are written at once", NULL},
      {"logging-format", NULL, FLAG_STRING, &o->logging_format, "text or json", NULL},
      {"log-text-split-stream", NULL, FLAG_BOOL, &o->text_split, "accepted for compatibility, no effect", NULL},
      {"log-json-split-stream", NULL, FLAG_BOOL, &o->json_split, "accepted for compatibility, no effect", NULL},
      {"log-text-info-buffer-size", NULL, FLAG_STRING, &o->text_buf, "accepted for compatibility, no effect", NULL},
      {"log-json-info-buffer-size", NULL, FLAG_STRING, &o->json_buf, "accepted for compatibility, no effect", NULL},
      {"otel-collector-endpoint", NULL, FLAG_STRING, &o->otel_endpoint, "tracing is not built; accepted, no effect", NULL},
      {"otel-transport-ca-cert", NULL, FLAG_STRING, &o->otel_ca, "tracing is not built; accepted, no effect", NULL},
      {"otel-service-name", NULL, FLAG_STRING, &o->otel_service, "tracing is not built; accepted, no effect", NULL},
      {"otel-trace-namespace", NULL, FLAG_STRING, &o->otel_ns, "tracing is not built; accepted, no effect", NULL},
      {"otel-sample-rate", NULL, FLAG_FLOAT, &o->otel_rate, "tracing is not built; accepted, no effect", NULL},
      {"otel-fallback-no-op-on-error", NULL, FLAG_BOOL, &o->otel_fallback, "tracing is not built; accepted, no effect", NULL},
      {"list-page-size", NULL, FLAG_INT, &o->page_size, "objects per LIST page (client-go's pager asks 500; larger pages cost the API server less)", NULL},
      {"decisions-file", NULL, FLAG_STRING, &o->decisions_file, "append one JSON line per cycle with every pod's outcome and why (docs/decisions.md)", NULL},
      {"decision-examples", NULL, FLAG_INT, &o->decision_examples, "pods named per reason in the decision record", NULL},
      {"kubedescheduler", NULL, FLAG_STRING, &o->kd_file, "OpenShift KubeDescheduler CR file: run the policy and flags it renders (instead of --policy-config-file)", NULL},
      {"kubedescheduler-ref", NULL, FLAG_STRING, &o->kd_ref, "the same, reading NAMESPACE/NAME from the API server at every cycle", NULL},
      {"prometheus-url", NULL, FLAG_STRING, &o->prometheus_url, "with a KubeDescheduler: Prometheus URL instead of the openshift-monitoring/prometheus-k8s Route", NULL},
      {"watch-cache", NULL, FLAG_BOOL, &o->watch_cache, "with an interval: list the cluster once and keep it current with watches instead of listing it every cycle (not in upstream, whose informers always watch)", NULL},
      {"watch-stall-timeout", NULL, FLAG_DURATION, &o->watch_stall, "with the watch cache: a watch that sends nothing (not even a bookmark) for this long is opened again", NULL},
      {"watch-cache-compact-bytes", NULL, FLAG_INT, &o->watch_compact, "with the watch cache: once the strings and arrays its objects share (label values, owner and container status arrays) have grown by this many bytes since every kind was last listed, the cache is dropped and every kind listed again into fresh tables, so that what no object uses any more is freed (cycles wait meanwhile); 0 = never (not in upstream)", NULL},
      {"psi", NULL, FLAG_STRING, &o->psi, "with a KubeDescheduler: PSI on the worker nodes: auto (checked in-cluster, else unknown), present, absent", NULL},
      {"version", NULL, FLAG_BOOL, &o->version, "print the version, as `descheduler version` does, and exit (not in upstream)", NULL},
      {NULL}};
  const char *pos[1];
  int npos;
  dserr err;
  int rc = flags_parse(defs, argc, argv, 1, pos, 0, &npos, &err);
  if (rc == 1) {
    usage(stdout, defs);
    return 0;
  }
  if (rc < 0) {
    fprintf(stderr, "descheduler: %s\nRun 'descheduler --help' for the flags.\n", err.msg);
    return EXIT_CONFIG;
  }
  if (o->version) {
    version_print_text(stdout);
    return 0;
  }
  return run_check_flags(o, r, defs);
}

/* The policy rendered from the KubeDescheduler, from what the operator reads as it is now (the
 * protected namespaces are fixed from this read). FLAGS_RUN, or the exit code: 1 when the
 * cluster cannot be read, 2 when the CR cannot be rendered. */
static int setup_kubedescheduler(runner *r, const char *kubeconfig) {
  run_opts *o = r->o;
  dserr err;
  kdsrc_options ko = {o->kd_file, o->kd_ref, o->prometheus_url, o->psi, !kubeconfig || !*kubeconfig};
  r->kd = kdsrc_new(&ko, &err);
  if (!r->kd) {
    fprintf(stderr, "descheduler: %s\n", err.msg);
    return EXIT_CONFIG;
  }
  char route_error[1024];
  model *facts = kube_openshift_facts_model(r->client, (int)o->page_size, route_error,
                                            sizeof route_error, &err);
  if (!facts) {
    LOGE(NULL, "Failed to read the cluster state the KubeDescheduler rendering needs", err.msg);
    return EXIT_FAILED;
  }
  int frc = kdsrc_render(r->kd, facts, r->client, route_error, &err);
  model_free(facts);
  if (frc == KDSRC_UNREADABLE) {
    LOGE(NULL, "Failed to read the KubeDescheduler", err.msg);
    return EXIT_FAILED;
  }
  if (frc < 0) {
    fprintf(stderr, "descheduler: %s\n", err.msg);
    return EXIT_CONFIG;
  }
  kd_apply_settings(r);
  kdsrc_log_warnings(r->kd, false);
  r->pol = kdsrc_load_policy(r->kd, &r->env, &err);
  if (!r->pol) {
    cli_error("descheduler", err.msg);
    return EXIT_CONFIG;
  }
  LOGV(0, NULL, "Using the policy rendered from the KubeDescheduler",
       LSTR("kubedescheduler", kdsrc_name(r->kd)), LBOOL("dryRun", o->dry_run),
       LINT("deschedulingIntervalSeconds", o->interval_ns / 1000000000LL));
  if (o->leader_elect && !o->dry_run && o->interval_ns == 0) {
    fprintf(stderr, "descheduler: leaderElection must be used with deschedulingInterval\n");
    return EXIT_CONFIG;
  }
  return FLAGS_RUN;
}

/* Waits for the leader Lease, then renews it from a thread of its own. FLAGS_RUN once
 * leading, else the exit code (0 when stopped while waiting). */
static int setup_leader(runner *r) {
  run_opts *o = r->o;
  dserr err;
  r->lease_client = kube_client_new(r->cfg, o->qps, (int)o->burst, &err);
  if (!r->lease_client) {
    fprintf(stderr, "descheduler: %s\n", err.msg);
    return EXIT_FAILED;
  }
  if (!*o->lease_name || !*o->lease_ns) {
    fprintf(stderr, "descheduler: %s\n", !*o->lease_name ? "name may not be empty" : "namespace may not be empty");
    return EXIT_CONFIG;
  }
  lease_init(&r->le, r->lease_client, o->lease_ns, o->lease_name, o->lease_duration,
             o->renew_deadline, o->retry_period);
  char lock[600];
  snprintf(lock, sizeof lock, "%s/%s", o->lease_ns, o->lease_name);
  LOGV(0, NULL, "Attempting to acquire leader lease...", LSTR("lock", lock));
  for (;;) {
    int got = lease_try(&r->le, &err);
    if (got < 0)
      LOGE(NULL, "error retrieving resource lock", err.msg, LSTR("lock", lock));
    if (got == 1)
      break;
    if (!live_sleep(o->retry_period, between_cycles, r))
      return 0;
  }
  LOGV(0, NULL, "Successfully acquired lease", LSTR("lock", lock));
  LOGV(1, NULL, "Started leading");
  kube_client_set_gate(r->client, leader_gate, r);
  r->rn = (renewer){&r->le, o->retry_period, o->renew_deadline, 0};
  if (pthread_create(&r->renew_thread, NULL, renew_loop, &r->rn) != 0) {
    LOGE(NULL, "failed to run descheduler server", "cannot start the lease renewal thread");
    return EXIT_FAILED;
  }
  r->renewing = true;
  return FLAGS_RUN;
}

/* Signals, the /metrics listener, the API client, the policy, discovery and the leader lease,
 * in upstream's order. FLAGS_RUN to start the loop, else the exit code. */
static int run_setup(runner *r) {
  run_opts *o = r->o;
  dserr err;
  live_signals();
  if (!o->disable_metrics)
    metrics_enable(DS_VERSION);
  if (o->secure_port != 0) {
    server_options so = {o->bind_address, (int)o->secure_port, o->tls_cert, o->tls_key,
                         !o->disable_metrics, sb_str(&r->tls_priorities)};
    r->srv = obs_server_start(&so, &err);
    if (!r->srv) {
      LOGE(NULL, "failed to run descheduler server", err.msg);
      return EXIT_FAILED;
    }
  }
  const char *kc = o->kubeconfig2 && *o->kubeconfig2 ? o->kubeconfig2 : o->kubeconfig;
  live_client_options lo = {kc, o->allow_http, o->request_timeout > 0 ? o->request_timeout : -1,
                            o->exec_timeout, o->qps, (int)o->burst};
  r->client = live_connect("descheduler", &lo, &r->cfg);
  if (!r->client)
    return EXIT_CONFIG;
  r->env = (plugin_env){kube_priority_class_value, r->client};
  r->events = event_sender_new(r->cfg, o->qps, (int)o->burst, &err);
  if (!r->events) {
    fprintf(stderr, "descheduler: %s\n", err.msg);
    return EXIT_CONFIG;
  }
  if (o->kd_file || o->kd_ref) {
    int rc = setup_kubedescheduler(r, kc);
    if (rc != FLAGS_RUN)
      return rc;
  } else {
    /* the content as it was before the load: a change during the load is seen at the next cycle */
    size_t len;
    char *text = read_file_text(o->policy, &len);
    r->pol = policy_load(o->policy, plugin_lookup, &r->env, &err);
    if (!r->pol) {
      free(text);
      cli_error("descheduler", err.msg);
      return EXIT_CONFIG;
    }
    r->policy_text = text;
  }
  r->elect = o->leader_elect && !o->dry_run;
  r->usage = usage_live_new(r->pol, r->client);
  if (kube_discover(r->client, &r->disc, &err) < 0) {
    LOGE(NULL, "failed to run descheduler server", err.msg);
    return EXIT_FAILED;
  }
  /* the operator's plugin fails to build without KubeVirt's API, as upstream's does */
  if (policy_unusable(r, r->pol, &err)) {
    fprintf(stderr, "descheduler: %s\n", err.msg);
    return EXIT_FAILED;
  }
  if (r->disc.server_major == 1 && abs(r->disc.server_minor - 36) > 3)
    LOGW(NULL, "descheduler version may not be supported on your version of Kubernetes",
         LSTR("descheduler", "0.36"), LSTR("kubernetes", r->disc.git_version));
  if (!*r->disc.policy_group_version || !r->disc.eviction_supported) {
    /* upstream exits 0 without a word here; say why instead */
    LOGE(NULL, "The API server does not offer the Eviction API (policy group or pods/eviction missing); nothing can be evicted",
         "eviction API not available");
    return EXIT_FAILED;
  }
  if (o->leader_elect && o->dry_run)
    LOGV(1, NULL, "Warning: DryRun is set to True. You need to disable it to use Leader Election.");
  if (r->elect)
    return setup_leader(r);
  return FLAGS_RUN;
}

/* The cycles, until one-shot's cycle succeeds (or gives up) or the process is asked to stop.
 * The exit code. */
static int run_loop(runner *r) {
  run_opts *o = r->o;
  /* the watch cache is for Deployment mode; a one-shot run lists */
  o->watch_cache = o->watch_cache && o->interval_ns > 0;
  /* A long-running process frees and allocates a cycle's large arrays (pages, trees, a
   * plugin's tables) again and again: mapped on their own, they go back to the system when
   * freed and leave no holes in the heap. A one-shot run keeps glibc's default, which reuses
   * the freed pages of one LIST page for the next (mapping each anew cost it 1.5 s of CPU at
   * 150,000 pods), and gives them back after the read (xrelease in run_cycle). */
  if (o->interval_ns > 0) {
    xalloc_map_large();
    /* ... except the large blocks every cycle needs again (the arenas' of a view and of a
     * plugin's scratch, the view's and RemoveDuplicates' tables): up to 64 MiB of them wait
     * for the next cycle instead of being faulted in afresh, page by page (arena_pool_keep;
     * docs/performance.md) */
    arena_pool_keep((size_t)64 << 20);
  }
  int failures = 0;
  for (;;) {
    double start = time_mono_seconds();
    int crc = run_cycle(r);
    metrics_loop_duration(time_mono_seconds() - start);
    /* what the cycle freed (its view, the objects the watches replaced) goes back to the system */
    if (r->cache)
      xrelease();
    if (live_stopping())
      return 0;
    if (o->interval_ns == 0) {
      if (crc == 0)
        return 0;
      /* upstream retries at once, forever, until a cycle succeeds; here a CronJob run retries
       * with backoff (1 s, 2 s, 4 s) and then fails, so the Job shows the failure */
      if (++failures >= CRONJOB_ATTEMPTS) {
        LOGE(NULL, "Giving up: the cycle could not read the cluster", "cycle failed",
             LINT("attempts", failures));
        return EXIT_FAILED;
      }
      if (!live_sleep(1000000000LL << (failures - 1), between_cycles, r))
        return 0;
      continue;
    }
    int64_t wait = o->interval_ns - (int64_t)((time_mono_seconds() - start) * 1e9);
    if (wait > 0)
      live_sleep(wait, between_cycles, r);
    if (live_stopping())
      return 0;
  }
}

/* Releases the lease (unless it was lost), sends the Events still queued and frees the rest. */
static void run_teardown(runner *r) {
  if (r->renewing) {
    __atomic_store_n(&r->rn.quit, 1, __ATOMIC_RELEASE);
    pthread_join(r->renew_thread, NULL);
  }
  if (r->elect && r->lease_client && r->le.client &&
      !__atomic_load_n(&g_leader_lost, __ATOMIC_ACQUIRE))
    lease_release(&r->le);
  kube_client_free(r->lease_client);
  /* the Events still queued are sent first (a stop signal leaves them less time) */
  event_sender_free(r->events, live_stopping() ? 2.0 : 5.0);
  watch_cache_free(r->cache);
  bg_clear(&r->bg);
  fw_history_free(&r->history);
  usage_live_free(r->usage);
  policy_free(r->pol);
  free(r->policy_text);
  free(r->kd_rejected);
  kdsrc_free(r->kd);
  kube_client_free(r->client);
  kube_config_free(r->cfg);
  obs_server_stop(r->srv);
  sb_free(&r->tls_priorities);
  if (r->decisions_out)
    fclose(r->decisions_out);
  arena_pool_keep(0); /* what waited for a next cycle */
}

int cmd_run(int argc, char **argv) {
  run_opts o;
  runner r = {0};
  int rc = run_flags(argc, argv, &o, &r);
  if (rc != FLAGS_RUN) {
    if (r.decisions_out)
      fclose(r.decisions_out);
    sb_free(&r.tls_priorities);
    return rc;
  }
  rc = run_setup(&r);
  if (rc == FLAGS_RUN)
    rc = run_loop(&r);
  run_teardown(&r);
  return rc;
}
