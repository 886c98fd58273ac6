/* verify.c - reads and judges one requested VM move; see verify.h. */
#include "verify.h"

#include "../kube/cluster.h"
#include "../kubevirt/vm.h"
#include "../doc/doc.h"
#include "../apimachinery/timeutil.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVACUATION_PREFIX "kubevirt-evacuation-"

/* ---------- reading ---------- */

static const char *dup_str(arena *a, const doc_node *n) {
  const char *s = doc_str(n);
  return arena_strdup(a, s ? s : "");
}

static int condition_status(const doc_node *obj, const char *type) {
  const doc_node *cs = doc_path(obj, "status", "conditions", NULL);
  for (size_t i = 0; cs && cs->type == DOC_SEQ && i < cs->n; i++) {
    const char *t = doc_str(doc_get(cs->items[i], "type"));
    const char *s = doc_str(doc_get(cs->items[i], "status"));
    if (t && !strcmp(t, type))
      return s && !strcmp(s, "True") ? 1 : 0;
  }
  return -1;
}

typedef struct {
  verify_state *st;
  const char *vmi;
  size_t cap;
} collect_ctx;

static int keep_migration(void *ctx, doc_node *o, dserr *err) {
  (void)err;
  collect_ctx *cc = ctx;
  verify_state *st = cc->st;
  const char *vmi = doc_str(doc_path(o, "spec", "vmiName", NULL));
  if (!vmi || strcmp(vmi, cc->vmi))
    return 0;
  st->migrations = arena_grow(st->mem, st->migrations, st->nmigrations, &cc->cap, sizeof *st->migrations);
  verify_migration *m = &st->migrations[st->nmigrations++];
  arena *a = st->mem;
  const doc_node *ms = doc_path(o, "status", "migrationState", NULL);
  m->name = dup_str(a, doc_path(o, "metadata", "name", NULL));
  m->phase = dup_str(a, doc_path(o, "status", "phase", NULL));
  m->evacuation_node =
      dup_str(a, doc_path(o, "metadata", "annotations", "kubevirt.io/evacuationMigration", NULL));
  if (!*m->evacuation_node) /* a targeted move names the node it leaves itself */
    m->evacuation_node =
        dup_str(a, doc_path(o, "metadata", "annotations", KUBEVIRT_MOVE_FROM_ANNOTATION, NULL));
  m->asked_node =
      dup_str(a, doc_path(o, "spec", "addedNodeSelector", "kubernetes.io/hostname", NULL));
  m->source_node = dup_str(a, doc_get(ms, "sourceNode"));
  m->target_node = dup_str(a, doc_get(ms, "targetNode"));
  m->source_pod = dup_str(a, doc_get(ms, "sourcePod"));
  m->target_pod = dup_str(a, doc_get(ms, "targetPod"));
  m->failure_reason = dup_str(a, doc_get(ms, "failureReason"));
  const char *created = doc_str(doc_path(o, "metadata", "creationTimestamp", NULL));
  dserr ignored;
  m->has_created = created && time_parse_rfc3339(created, &m->created, NULL, &ignored) == 0;
  return 0;
}

static int keep_launcher(void *ctx, doc_node *o, dserr *err) {
  (void)err;
  collect_ctx *cc = ctx;
  verify_state *st = cc->st;
  const char *domain = doc_str(doc_path(o, "metadata", "annotations", "kubevirt.io/domain", NULL));
  if (!domain || strcmp(domain, cc->vmi))
    return 0;
  st->pods = arena_grow(st->mem, st->pods, st->npods, &cc->cap, sizeof *st->pods);
  verify_pod *p = &st->pods[st->npods++];
  arena *a = st->mem;
  p->name = dup_str(a, doc_path(o, "metadata", "name", NULL));
  p->phase = dup_str(a, doc_path(o, "status", "phase", NULL));
  p->node = dup_str(a, doc_path(o, "spec", "nodeName", NULL));
  p->created_by = dup_str(a, doc_path(o, "metadata", "labels", "kubevirt.io/created-by", NULL));
  p->deleting = doc_path(o, "metadata", "deletionTimestamp", NULL) != NULL;
  return 0;
}

static const char *ns_path(strbuf *sb, const char *prefix, const char *ns, const char *resource,
                           const char *name) {
  sb_clear(sb);
  sb_append(sb, prefix);
  sb_append(sb, "/namespaces/");
  kube_path_escape(sb, ns);
  sb_printf(sb, "/%s", resource);
  if (name) {
    sb_appendc(sb, '/');
    kube_path_escape(sb, name);
  }
  return sb_str(sb);
}

int verify_read(kube_client *c, const verify_target *t, verify_state *st, dserr *err) {
  st->mem = arena_new(64 * 1024);
  arena *a = st->mem;
  strbuf path = {0};
  doc_node *vmi = NULL;
  long status;
  int rc = -1;
  st->ready = st->vm_ready = -1;
  st->uid = st->phase = st->node = st->vm_printable = "";
  if (kube_get_doc(
          c, ns_path(&path, "/apis/kubevirt.io/v1", t->ns, "virtualmachineinstances", t->name), a,
          &vmi, &status, err) == 0) {
    st->vmi_found = true;
    st->uid = dup_str(a, doc_path(vmi, "metadata", "uid", NULL));
    st->phase = dup_str(a, doc_path(vmi, "status", "phase", NULL));
    st->node = dup_str(a, doc_path(vmi, "status", "nodeName", NULL));
    st->ready = condition_status(vmi, "Ready");
    const doc_node *owners = doc_path(vmi, "metadata", "ownerReferences", NULL);
    for (size_t i = 0; owners && owners->type == DOC_SEQ && i < owners->n; i++) {
      const char *kind = doc_str(doc_get(owners->items[i], "kind"));
      if (kind && !strcmp(kind, "VirtualMachine"))
        st->vm_name = dup_str(a, doc_get(owners->items[i], "name"));
    }
  } else if (status != 404) {
    goto out;
  }
  collect_ctx mc = {st, t->name, 0};
  if (kube_list_each(
          c,
          ns_path(&path, "/apis/kubevirt.io/v1", t->ns, "virtualmachineinstancemigrations", NULL),
          500, keep_migration, &mc, &status, err) < 0 &&
      status != 404)
    goto out;
  collect_ctx pc = {st, t->name, 0};
  ns_path(&path, "/api/v1", t->ns, "pods", NULL);
  sb_append(&path, "?labelSelector=kubevirt.io%3Dvirt-launcher");
  if (kube_list_each(c, sb_str(&path), 500, keep_launcher, &pc, &status, err) < 0)
    goto out;
  if (st->vm_name) {
    doc_node *vm = NULL;
    if (kube_get_doc(c,
                     ns_path(&path, "/apis/kubevirt.io/v1", t->ns, "virtualmachines", st->vm_name),
                     a, &vm, &status, err) == 0) {
      st->vm_found = true;
      const doc_node *ready = doc_path(vm, "status", "ready", NULL);
      st->vm_ready = ready && ready->type == DOC_BOOL ? ready->v.b : -1;
      st->vm_printable = dup_str(a, doc_path(vm, "status", "printableStatus", NULL));
    } else if (status != 404) {
      goto out;
    }
  }
  rc = 0;
out:
  sb_free(&path);
  return rc;
}

void verify_state_free(verify_state *st) {
  arena_free(st->mem);
  memset(st, 0, sizeof *st);
}

/* ---------- judging ---------- */

const char *verify_status_name(verify_status s) {
  return s == VERIFY_PASS ? "PASS" : s == VERIFY_FAIL ? "FAIL" : "NOT CHECKED";
}

static void set(verify_condition *c, const char *name, verify_status s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set(verify_condition *c, const char *name, verify_status s, const char *fmt, ...) {
  c->name = name;
  c->status = s;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->detail, sizeof c->detail, fmt, ap);
  va_end(ap);
}

static bool terminal(const char *phase) {
  return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

/* KubeVirt's evacuation of the VMI from `from` (what an eviction starts), or this descheduler's
 * targeted move of it (docs/vm-safety.md) */
static bool is_evacuation_from(const verify_migration *m, const char *from) {
  bool ours = !strncmp(m->name, KUBEVIRT_MOVE_PREFIX, strlen(KUBEVIRT_MOVE_PREFIX));
  return (ours || !strncmp(m->name, EVACUATION_PREFIX, strlen(EVACUATION_PREFIX))) &&
         (!strcmp(m->evacuation_node, from) || !strcmp(m->source_node, from));
}

/* the newest evacuation of the VMI from `from` (creation time, then name) */
static const verify_migration *newest_evacuation(const verify_state *st, const char *from) {
  const verify_migration *best = NULL;
  for (size_t i = 0; i < st->nmigrations; i++) {
    const verify_migration *m = &st->migrations[i];
    if (!is_evacuation_from(m, from))
      continue;
    if (!best || m->created > best->created ||
        (m->created == best->created && strcmp(m->name, best->name) > 0))
      best = m;
  }
  return best;
}

static const verify_pod *find_pod(const verify_state *st, const char *name) {
  for (size_t i = 0; name && *name && i < st->npods; i++)
    if (!strcmp(st->pods[i].name, name))
      return &st->pods[i];
  return NULL;
}

static void judge_node(const verify_state *st, const verify_target *t, verify_condition *c) {
  if (!st->vmi_found)
    set(c, "node", VERIFY_FAIL, "VMI %s/%s not found", t->ns, t->name);
  else if (!*st->node)
    set(c, "node", VERIFY_FAIL, "the VMI runs on no node (phase %s)",
        *st->phase ? st->phase : "\"\"");
  else if (!strcmp(st->node, t->from))
    set(c, "node", VERIFY_FAIL, "the VMI still runs on %s", t->from);
  else if (t->to && strcmp(st->node, t->to))
    set(c, "node", VERIFY_FAIL, "the VMI runs on %s, not on %s (--to) where it was sent", st->node,
        t->to);
  else if (t->to)
    set(c, "node", VERIFY_PASS, "the VMI runs on %s, where it was sent (--to), not on %s",
        st->node, t->from);
  else
    set(c, "node", VERIFY_PASS, "the VMI runs on %s, not on %s", st->node, t->from);
}

/* "; 2 earlier evacuations from w1 Failed (latest kubevirt-evacuation-x: reason)" or "" */
static void earlier_failures(const verify_state *st, const verify_target *t,
                             const verify_migration *m, char *out, size_t cap) {
  size_t n = 0;
  const verify_migration *latest = NULL;
  for (size_t i = 0; i < st->nmigrations; i++) {
    const verify_migration *o = &st->migrations[i];
    if (o == m || !is_evacuation_from(o, t->from) || strcmp(o->phase, "Failed"))
      continue;
    n++;
    if (!latest || o->created > latest->created)
      latest = o;
  }
  *out = 0;
  if (n)
    snprintf(out, cap,
             "; %zu earlier evacuation%s from %s Failed (latest %s%s%s): migrations that repeat "
             "must be stopped (descheduler pause)",
             n, n == 1 ? "" : "s", t->from, latest->name, *latest->failure_reason ? ": " : "",
             latest->failure_reason);
}

static void judge_migration(const verify_state *st, const verify_target *t,
                            const verify_migration *m, verify_condition *c) {
  if (!m) {
    set(c, "migration", VERIFY_FAIL,
        "no " EVACUATION_PREFIX "* or " KUBEVIRT_MOVE_PREFIX
        "* migration of %s/%s from %s (%zu other migration%s of the VMI)",
        t->ns, t->name, t->from, st->nmigrations, st->nmigrations == 1 ? "" : "s");
    return;
  }
  char failures[400];
  earlier_failures(st, t, m, failures, sizeof failures);
  if (!strcmp(m->phase, "Succeeded")) {
    if (strcmp(m->source_node, t->from))
      set(c, "migration", VERIFY_FAIL, "%s Succeeded but its source is %s, not %s", m->name,
          *m->source_node ? m->source_node : "unset", t->from);
    else if (!st->vmi_found || strcmp(m->target_node, st->node))
      set(c, "migration", VERIFY_FAIL, "%s Succeeded to %s but the VMI runs on %s", m->name,
          *m->target_node ? m->target_node : "an unrecorded node",
          st->vmi_found && *st->node ? st->node : "no node");
    else
      set(c, "migration", VERIFY_PASS, "%s Succeeded: %s -> %s%s", m->name, m->source_node,
          m->target_node, failures);
  } else if (!strcmp(m->phase, "Failed")) {
    set(c, "migration", VERIFY_FAIL,
        "%s Failed%s%s%s: while the VMI stays marked KubeVirt retries with a new migration%s",
        m->name, *m->failure_reason ? " (" : "", m->failure_reason, *m->failure_reason ? ")" : "",
        failures);
  } else {
    set(c, "migration", VERIFY_FAIL, "%s is in phase %s, not finished%s", m->name,
        *m->phase ? m->phase : "\"\"", failures);
  }
}

static void judge_uid(const verify_state *st, const verify_target *t, const verify_migration *m,
                      verify_condition *c) {
  if (!st->vmi_found) {
    set(c, "uid", VERIFY_FAIL, "no VMI to compare");
    return;
  }
  if (t->uid) {
    if (!strcmp(t->uid, st->uid))
      set(c, "uid", VERIFY_PASS, "%s, as --uid: the same VMI moved", st->uid);
    else
      set(c, "uid", VERIFY_FAIL,
          "the VMI's UID is %s, --uid was %s: the VMI was recreated (the VM restarted), not "
          "live-migrated",
          st->uid, t->uid);
    return;
  }
  const verify_pod *p = m ? find_pod(st, m->source_pod) : NULL;
  const char *role = "migration's source";
  if (!p || !*p->created_by) {
    p = m ? find_pod(st, m->target_pod) : NULL;
    role = "migration's target";
  }
  for (size_t i = 0; (!p || !*p->created_by) && i < st->npods; i++)
    if (!strcmp(st->pods[i].node, t->from) && *st->pods[i].created_by) {
      p = &st->pods[i];
      role = "source node's";
    }
  if (p && *p->created_by) {
    if (!strcmp(p->created_by, st->uid))
      set(c, "uid", VERIFY_PASS,
          "%s: the %s launcher %s was made for this same VMI (kubevirt.io/created-by)", st->uid,
          role, p->name);
    else
      set(c, "uid", VERIFY_FAIL,
          "the %s launcher %s was made for VMI UID %s, the VMI's UID is now %s: the VMI was "
          "recreated (the VM restarted)",
          role, p->name, p->created_by, st->uid);
    return;
  }
  set(c, "uid", VERIFY_NOT_CHECKED,
      "the VMI's UID is %s, but without --uid only the launcher pods of the migration or on %s "
      "record the old one and none is left; record it before the move (kubectl get vmi -o "
      "jsonpath='{.metadata.uid}') and pass --uid",
      st->uid, t->from);
}

static void judge_ready(const verify_state *st, verify_condition *c) {
  if (!st->vmi_found) {
    set(c, "ready", VERIFY_FAIL, "no VMI");
    return;
  }
  bool vmi_ok = !strcmp(st->phase, "Running") && st->ready == 1;
  char vm[400];
  bool vm_ok = true;
  if (!st->vm_name) {
    snprintf(vm, sizeof vm, "no VirtualMachine owns the VMI");
  } else if (!st->vm_found) {
    snprintf(vm, sizeof vm, "VirtualMachine %s not found", st->vm_name);
  } else {
    vm_ok = st->vm_ready == 1 && (!*st->vm_printable || !strcmp(st->vm_printable, "Running"));
    snprintf(vm, sizeof vm, "VirtualMachine %s: ready %s, printableStatus %s", st->vm_name,
             st->vm_ready == 1   ? "true"
             : st->vm_ready == 0 ? "false"
                                 : "unset",
             *st->vm_printable ? st->vm_printable : "unset");
  }
  set(c, "ready", vmi_ok && vm_ok ? VERIFY_PASS : VERIFY_FAIL, "VMI phase %s, Ready=%s; %s",
      *st->phase ? st->phase : "\"\"",
      st->ready == 1   ? "True"
      : st->ready == 0 ? "False"
                       : "absent",
      vm);
}

static void judge_old_launcher(const verify_state *st, const verify_target *t,
                               verify_condition *c) {
  strbuf seen = {0};
  const verify_pod *running = NULL;
  for (size_t i = 0; i < st->npods; i++) {
    const verify_pod *p = &st->pods[i];
    if (strcmp(p->node, t->from))
      continue;
    if (!terminal(p->phase) || p->deleting) {
      running = running ? running : p;
      continue;
    }
    sb_printf(&seen, "%s%s (%s)", seen.len ? ", " : "", p->name, p->phase);
  }
  if (running)
    set(c, "old-launcher", VERIFY_FAIL, "%s on %s is still %s%s", running->name, t->from,
        *running->phase ? running->phase : "without a phase",
        running->deleting ? " (terminating)" : "");
  else if (seen.len)
    set(c, "old-launcher", VERIFY_PASS, "terminated on %s: %s", t->from, sb_str(&seen));
  else
    set(c, "old-launcher", VERIFY_PASS, "no launcher of the VMI left on %s", t->from);
  sb_free(&seen);
}

void verify_evaluate(const verify_state *st, const verify_target *t, verify_result *out) {
  memset(out, 0, sizeof *out);
  out->migration = newest_evacuation(st, t->from);
  judge_node(st, t, &out->c[0]);
  judge_migration(st, t, out->migration, &out->c[1]);
  judge_uid(st, t, out->migration, &out->c[2]);
  judge_ready(st, &out->c[3]);
  judge_old_launcher(st, t, &out->c[4]);
}

bool verify_passed(const verify_result *r) {
  for (int i = 0; i < VERIFY_NCONDITIONS; i++)
    if (r->c[i].status != VERIFY_PASS)
      return false;
  return true;
}

bool verify_settled(const verify_result *r) {
  for (int i = 0; i < VERIFY_NCONDITIONS; i++)
    if (r->c[i].status == VERIFY_FAIL)
      return false;
  return true;
}

/* ---------- the descheduler's log ---------- */

#define ASSUMED_MSG "Eviction in background assumed"

static int digits(const char *s, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i]))
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* `I1201 10:48:54.123456 ...`: the time (seconds and microseconds), with the year inferred */
static bool klog_time(const char *line, size_t len, int64_t ref, int64_t *sec, int32_t *usec) {
  if (len < 22 || !strchr("IWEF", line[0]) || line[5] != ' ' || line[8] != ':' || line[11] != ':' ||
      line[14] != '.')
    return false;
  int mo = digits(line + 1, 2), d = digits(line + 3, 2), h = digits(line + 6, 2),
      mi = digits(line + 9, 2), s = digits(line + 12, 2), us = digits(line + 15, 6);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 ||
      s > 60 || us < 0)
    return false;
  int64_t y = time_year(ref);
  int64_t t = time_from_civil(y, mo, d, h, mi, s);
  if (t - ref > 183 * 86400) /* a December line for a January migration */
    t = time_from_civil(y - 1, mo, d, h, mi, s);
  *sec = t;
  *usec = us;
  return true;
}

/* the value of key="..." after `from` in a klog line, copied into out */
static bool klog_string(const char *line, size_t len, const char *key, char *out, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, " %s=\"", key);
  size_t pl = strlen(pat);
  for (size_t i = 0; i + pl <= len; i++) {
    if (memcmp(line + i, pat, pl))
      continue;
    size_t k = 0;
    for (size_t j = i + pl; j < len && line[j] != '"' && k + 1 < cap; j++)
      out[k++] = line[j];
    out[k] = 0;
    return true;
  }
  return false;
}

/* a JSON log line: {"ts":<epoch>,"msg":...,"pod":"ns/name" or {"name","namespace"}} */
static bool json_line(const char *line, size_t len, int64_t *sec, int32_t *usec, char *pod,
                      size_t cap) {
  arena *a = arena_new(4096);
  doc_node *root = NULL;
  dserr err;
  bool ok = false;
  if (doc_parse_json(a, "log", line, len, &root, &err) == 0) {
    const char *msg = doc_str(doc_get(root, "msg"));
    const doc_node *ts = doc_get(root, "ts");
    const doc_node *p = doc_get(root, "pod");
    if (msg && !strcmp(msg, ASSUMED_MSG) && ts && (ts->type == DOC_FLOAT || ts->type == DOC_INT)) {
      double t = ts->type == DOC_FLOAT ? ts->v.f : (double)ts->v.i;
      *sec = (int64_t)t;
      *usec = (int32_t)((t - (double)*sec) * 1e6 + 0.5);
      if (doc_str(p))
        snprintf(pod, cap, "%s", doc_str(p));
      else if (p && p->type == DOC_MAP)
        snprintf(pod, cap, "%s/%s",
                 doc_str(doc_get(p, "namespace")) ? doc_str(doc_get(p, "namespace")) : "",
                 doc_str(doc_get(p, "name")) ? doc_str(doc_get(p, "name")) : "");
      ok = *pod != 0;
    }
  }
  arena_free(a);
  return ok;
}

static bool contains(const char *s, size_t len, const char *needle) {
  size_t nl = strlen(needle);
  for (size_t i = 0; i + nl <= len; i++)
    if (!memcmp(s + i, needle, nl))
      return true;
  return false;
}

/* "ns/virt-launcher-<vmi>-<suffix>" naming this VMI's launcher (or exactly pod) */
static bool pod_matches(const char *ref, const char *ns, const char *vmi, const char *pod) {
  size_t nl = strlen(ns);
  if (strncmp(ref, ns, nl) || ref[nl] != '/')
    return false;
  const char *name = ref + nl + 1;
  if (pod && *pod)
    return !strcmp(name, pod);
  char prefix[512];
  snprintf(prefix, sizeof prefix, "virt-launcher-%s-", vmi);
  size_t pl = strlen(prefix);
  return !strncmp(name, prefix, pl) && name[pl] && !strchr(name + pl, '-');
}

void verify_log_pair(const char *text, size_t len, const char *ns, const char *vmi, const char *pod,
                     int64_t migration_created, verify_log_match *out) {
  memset(out, 0, sizeof *out);
  const char *p = text, *end = text + len;
  size_t line_no = 0;
  bool before_found = false;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
    line_no++;
    int64_t sec;
    int32_t usec;
    char ref[512] = "";
    bool hit = false;
    if (l && p[0] == '{') {
      hit = json_line(p, l, &sec, &usec, ref, sizeof ref);
    } else if (contains(p, l, "\"" ASSUMED_MSG "\"")) {
      hit = klog_time(p, l, migration_created, &sec, &usec) &&
            klog_string(p, l, "pod", ref, sizeof ref);
    }
    if (hit && pod_matches(ref, ns, vmi, pod)) {
      out->candidates++;
      /* the line is written once KubeVirt's answer arrives, just after it created the migration */
      bool before = sec <= migration_created + 1 + VERIFY_ANSWER_SLACK_S;
      /* the last line at or before the migration; else the first after it */
      if ((before && (!before_found || sec >= out->sec)) || (!before && !out->found)) {
        out->found = true;
        before_found |= before;
        out->sec = sec;
        out->usec = usec;
        out->line_no = line_no;
        snprintf(out->pod, sizeof out->pod, "%s", ref);
      }
    }
    p = nl ? nl + 1 : end;
  }
  if (out->found)
    out->delay_min = (double)(migration_created - out->sec) - out->usec / 1e6;
}
