/* pause.c - suspending and resuming the descheduler's CronJob or Deployment; see pause.h. */
#include "pause.h"

#include "../kube/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *dup_str(arena *a, const doc_node *n) {
  const char *s = doc_str(n);
  return arena_strdup(a, s ? s : "");
}

void pause_workload_from_doc(arena *a, const doc_node *o, const char *kind, pause_workload *w) {
  memset(w, 0, sizeof *w);
  w->kind = kind;
  w->ns = dup_str(a, doc_path(o, "metadata", "namespace", NULL));
  w->name = dup_str(a, doc_path(o, "metadata", "name", NULL));
  const doc_node *suspend = doc_path(o, "spec", "suspend", NULL);
  w->suspended = suspend && suspend->type == DOC_BOOL && suspend->v.b;
  const doc_node *replicas = doc_path(o, "spec", "replicas", NULL);
  w->replicas = replicas && replicas->type == DOC_INT ? (long long)replicas->v.i : 1;
  const char *ann =
      doc_str(doc_path(o, "metadata", "annotations", PAUSE_REPLICAS_ANNOTATION, NULL));
  w->paused_replicas = ann ? arena_strdup(a, ann) : NULL;
  const doc_node *active = doc_path(o, "status", "active", NULL);
  if (active && active->type == DOC_SEQ && active->n) {
    w->active = ARENA_NEWN(a, const char *, active->n);
    for (size_t i = 0; i < active->n; i++)
      w->active[w->nactive++] = dup_str(a, doc_get(active->items[i], "name"));
  }
}

void pause_migration_from_doc(arena *a, const doc_node *o, pause_migration *m) {
  m->ns = dup_str(a, doc_path(o, "metadata", "namespace", NULL));
  m->name = dup_str(a, doc_path(o, "metadata", "name", NULL));
  m->vmi = dup_str(a, doc_path(o, "spec", "vmiName", NULL));
  m->phase = dup_str(a, doc_path(o, "status", "phase", NULL));
}

/* ---------- reading ---------- */

typedef struct {
  pause_state *st;
  const char *kind;
  size_t cap;
} read_ctx;

static int keep_workload(void *ctx, doc_node *o, dserr *err) {
  (void)err;
  read_ctx *rc = ctx;
  pause_state *st = rc->st;
  st->workloads = arena_grow(st->mem, st->workloads, st->nworkloads, &rc->cap, sizeof *st->workloads);
  pause_workload_from_doc(st->mem, o, rc->kind, &st->workloads[st->nworkloads++]);
  return 0;
}

static int keep_migration(void *ctx, doc_node *o, dserr *err) {
  (void)err;
  read_ctx *rc = ctx;
  pause_state *st = rc->st;
  st->migrations = arena_grow(st->mem, st->migrations, st->nmigrations, &rc->cap, sizeof *st->migrations);
  pause_migration_from_doc(st->mem, o, &st->migrations[st->nmigrations++]);
  return 0;
}

static void ensure_mem(pause_state *st) {
  if (!st->mem)
    st->mem = arena_new(16 * 1024);
}

static void collection(strbuf *sb, const char *group_version, const char *resource,
                       const char *ns) {
  sb_clear(sb);
  sb_printf(sb, "/apis/%s", group_version);
  if (ns) {
    sb_append(sb, "/namespaces/");
    kube_path_escape(sb, ns);
  }
  sb_printf(sb, "/%s?labelSelector=", resource);
  kube_path_escape(sb, PAUSE_SELECTOR);
}

int pause_read_workloads(kube_client *c, const char *ns, pause_state *st, dserr *err) {
  ensure_mem(st);
  strbuf path = {0};
  long status;
  read_ctx cj = {st, "CronJob", 0};
  collection(&path, "batch/v1", "cronjobs", ns);
  int rc = kube_list_each(c, sb_str(&path), 500, keep_workload, &cj, &status, err);
  if (rc == 0) {
    read_ctx dp = {st, "Deployment", cj.cap};
    collection(&path, "apps/v1", "deployments", ns);
    rc = kube_list_each(c, sb_str(&path), 500, keep_workload, &dp, &status, err);
  }
  sb_free(&path);
  return rc;
}

int pause_read_migrations(kube_client *c, pause_state *st, dserr *err) {
  ensure_mem(st);
  long status;
  read_ctx mc = {st, NULL, 0};
  st->kubevirt_served = true;
  if (kube_list_each(c, "/apis/kubevirt.io/v1/virtualmachineinstancemigrations", 500,
                     keep_migration, &mc, &status, err) < 0) {
    if (status != 404)
      return -1;
    st->kubevirt_served = false;
  }
  return 0;
}

void pause_state_free(pause_state *st) {
  arena_free(st->mem);
  memset(st, 0, sizeof *st);
}

/* ---------- deciding ---------- */

const pause_workload *pause_target(const pause_state *st, const char *ns, dserr *err) {
  if (st->nworkloads == 1)
    return &st->workloads[0];
  if (!st->nworkloads) {
    dserr_set(err, "no CronJob or Deployment labelled %s %s%s", PAUSE_SELECTOR,
              ns ? "in namespace " : "in any namespace", ns ? ns : "");
    return NULL;
  }
  strbuf sb = {0};
  for (size_t i = 0; i < st->nworkloads; i++)
    sb_printf(&sb, "%s%s %s/%s", i ? ", " : "", st->workloads[i].kind, st->workloads[i].ns,
              st->workloads[i].name);
  dserr_set(err,
            "%zu objects are labelled %s: %s; name the namespace with --namespace (one of "
            "them per namespace)",
            st->nworkloads, PAUSE_SELECTOR, sb_str(&sb));
  sb_free(&sb);
  return NULL;
}

const pause_migration **pause_unfinished(const pause_state *st, size_t *n) {
  *n = 0;
  if (!st->mem || !st->nmigrations)
    return NULL;
  const pause_migration **out = ARENA_NEWN(st->mem, const pause_migration *, st->nmigrations);
  for (size_t i = 0; i < st->nmigrations; i++) {
    const char *ph = st->migrations[i].phase;
    if (strcmp(ph, "Succeeded") && strcmp(ph, "Failed"))
      out[(*n)++] = &st->migrations[i];
  }
  return out;
}

static void object_path(const pause_workload *w, strbuf *path) {
  bool cron = !strcmp(w->kind, "CronJob");
  sb_clear(path);
  sb_printf(path, "/apis/%s/namespaces/", cron ? "batch/v1" : "apps/v1");
  kube_path_escape(path, w->ns);
  sb_append(path, cron ? "/cronjobs/" : "/deployments/");
  kube_path_escape(path, w->name);
}

pause_action pause_plan(const pause_workload *w, bool resume, strbuf *path, strbuf *patch,
                        strbuf *done, char *why, size_t cap) {
  object_path(w, path);
  sb_clear(patch);
  sb_clear(done);
  *why = 0;
  if (!strcmp(w->kind, "CronJob")) {
    if (w->suspended != resume) {
      snprintf(why, cap, "CronJob %s/%s is already %s", w->ns, w->name,
               resume ? "running (spec.suspend is not true)" : "suspended");
      return PAUSE_NOTHING;
    }
    sb_printf(patch, "{\"spec\":{\"suspend\":%s}}", resume ? "false" : "true");
    sb_printf(done, "CronJob %s/%s: spec.suspend %s", w->ns, w->name, resume ? "false" : "true");
    return PAUSE_PATCH;
  }
  if (!resume) {
    if (w->replicas == 0) {
      snprintf(why, cap, "Deployment %s/%s is already scaled to 0%s", w->ns, w->name,
               w->paused_replicas ? "" : " (not by pause: resume will not know its replica count)");
      return PAUSE_NOTHING;
    }
    sb_printf(patch, "{\"metadata\":{\"annotations\":{\"%s\":\"%lld\"}},\"spec\":{\"replicas\":0}}",
              PAUSE_REPLICAS_ANNOTATION, w->replicas);
    sb_printf(done, "Deployment %s/%s: scaled from %lld to 0 (the count is kept in annotation %s)",
              w->ns, w->name, w->replicas, PAUSE_REPLICAS_ANNOTATION);
    return PAUSE_PATCH;
  }
  if (!w->paused_replicas) {
    if (w->replicas > 0) {
      snprintf(why, cap, "Deployment %s/%s is already running (%lld replicas)", w->ns, w->name,
               w->replicas);
      return PAUSE_NOTHING;
    }
    snprintf(why, cap,
             "Deployment %s/%s is scaled to 0 but has no annotation %s: it was not paused by "
             "`descheduler pause`; scale it yourself",
             w->ns, w->name, PAUSE_REPLICAS_ANNOTATION);
    return PAUSE_REFUSE;
  }
  char *end;
  long long n = strtoll(w->paused_replicas, &end, 10);
  if (!*w->paused_replicas || *end || n < 1) {
    snprintf(why, cap,
             "Deployment %s/%s: annotation %s is \"%s\", not a replica count; scale it "
             "yourself",
             w->ns, w->name, PAUSE_REPLICAS_ANNOTATION, w->paused_replicas);
    return PAUSE_REFUSE;
  }
  sb_printf(patch, "{\"metadata\":{\"annotations\":{\"%s\":null}},\"spec\":{\"replicas\":%lld}}",
            PAUSE_REPLICAS_ANNOTATION, n);
  sb_printf(done, "Deployment %s/%s: scaled from %lld back to %lld", w->ns, w->name, w->replicas,
            n);
  return PAUSE_PATCH;
}
