/* pbcompare.c - see pbcompare.h. */
#include "pbcompare.h"

#include "../../../src/decode/decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void str(strbuf *sb, const char *name, const char *s) {
  sb_printf(sb, "%s=", name);
  if (s)
    sb_append_json_str(sb, s);
  else
    sb_append(sb, "nil");
  sb_appendc(sb, '\n');
}

static void kvs(strbuf *sb, const char *name, const kvlist *l) {
  sb_printf(sb, "%s:", name);
  for (size_t i = 0; i < l->n; i++) {
    sb_appendc(sb, ' ');
    sb_append_json_str(sb, l->items[i].key);
    sb_appendc(sb, '=');
    sb_append_json_str(sb, l->items[i].value);
  }
  sb_appendc(sb, '\n');
}

static void res(strbuf *sb, const char *name, const res_list *l) {
  sb_printf(sb, "%s:", name);
  for (size_t i = 0; i < l->n; i++)
    sb_printf(sb, " %s=%lld", l->items[i].name, (long long)l->items[i].milli);
  sb_appendc(sb, '\n');
}

static void strs(strbuf *sb, const char *name, const char *const *v, size_t n) {
  sb_printf(sb, "%s:", name);
  for (size_t i = 0; i < n; i++) {
    sb_appendc(sb, ' ');
    sb_append_json_str(sb, v[i] ? v[i] : "(nil)");
  }
  sb_appendc(sb, '\n');
}

static void selector(strbuf *sb, const char *name, const label_selector *s) {
  if (!s) {
    sb_printf(sb, "%s=nil\n", name);
    return;
  }
  sb_printf(sb, "%s: nothing=%d invalid=%s", name, s->nothing, s->invalid ? s->invalid : "-");
  for (size_t i = 0; i < s->n; i++) {
    sb_printf(sb, " [%s op%d", s->reqs[i].key, (int)s->reqs[i].op);
    for (size_t k = 0; k < s->reqs[i].nvalues; k++)
      sb_printf(sb, " %s", s->reqs[i].values[k]);
    sb_appendc(sb, ']');
  }
  sb_appendc(sb, '\n');
}

static void term(strbuf *sb, const char *name, const node_term *t) {
  sb_printf(sb, "%s: empty=%d\n", name, t->empty);
  selector(sb, "  labels", t->labels);
  selector(sb, "  fields", t->fields);
}

static void statuses(strbuf *sb, const char *name, const container_status *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    sb_printf(sb, "%s[%zu]: %s restarts=%d waiting=%s terminated=%d/%s exit=%d\n", name, i,
              s[i].name ? s[i].name : "nil", s[i].restarts,
              s[i].waiting_reason ? s[i].waiting_reason : "nil", s[i].terminated,
              s[i].terminated_reason ? s[i].terminated_reason : "nil", s[i].exit_code);
}

void pod_text(strbuf *sb, const pod *p) {
  str(sb, "ns", p->ns);
  str(sb, "name", p->name);
  str(sb, "uid", p->uid);
  str(sb, "node_name", p->node_name);
  for (size_t i = 0; i < p->nowners; i++)
    sb_printf(sb, "owner[%zu]: %s %s %s controller=%d\n", i, p->owners[i].kind, p->owners[i].name,
              p->owners[i].uid, p->owners[i].controller);
  strs(sb, "images", p->images, p->nimages);
  for (size_t i = 0; i < p->ntolerations; i++)
    sb_printf(sb, "toleration[%zu]: %s %s %s op%d\n", i, p->tolerations[i].key,
              p->tolerations[i].value, p->tolerations[i].effect, (int)p->tolerations[i].op);
  kvs(sb, "labels", &p->labels);
  kvs(sb, "node_selector", &p->node_selector);
  res(sb, "requests", &p->requests);
  strs(sb, "request_keys", p->request_keys, p->nrequest_keys);
  sb_printf(sb,
            "priority=%d has_priority=%d annotations=%#x phase=%d qos=%d has_creation=%d "
            "creation=%lld deleting=%d deletion=%lld has_start=%d start=%lld "
            "has_node_selector=%d local_storage=%d resource_claims=%d launcher=%d ds_owner=%d\n",
            p->priority, p->has_priority, p->annotations, p->phase, p->qos, p->has_creation,
            (long long)p->creation, p->deleting, (long long)p->deletion, p->has_start_time,
            (long long)p->start_time, p->has_node_selector, p->local_storage, p->resource_claims,
            p->launcher_label, p->daemonset_owner);
  statuses(sb, "status", p->container_status, p->ncontainer_status);
  for (size_t i = 0; i < p->nconditions; i++)
    sb_printf(sb, "condition[%zu]: %s %s %s transition=%d/%lld\n", i, p->conditions[i].type,
              p->conditions[i].status, p->conditions[i].reason, p->conditions[i].has_transition,
              (long long)p->conditions[i].last_transition);
  const pod_extra *x = pod_x(p);
  sb_printf(sb, "extra=%s\n", p->extra ? "yes" : "no");
  str(sb, "status_reason", x->status_reason);
  str(sb, "config_source", x->config_source);
  str(sb, "kubevirt_domain", x->kubevirt_domain);
  if (x->node_affinity) {
    const node_affinity *na = x->node_affinity;
    sb_printf(sb, "node_affinity: has_required=%d\n", na->has_required);
    for (size_t i = 0; i < na->nrequired; i++)
      term(sb, "required", &na->required[i]);
    for (size_t i = 0; i < na->npreferred; i++) {
      sb_printf(sb, "preferred weight=%d\n", na->preferred[i].weight);
      term(sb, "preference", &na->preferred[i].term);
    }
  }
  for (size_t i = 0; i < x->nanti_affinity; i++) {
    const pod_affinity_term *t = &x->anti_affinity[i];
    sb_printf(sb, "anti_affinity[%zu]: topology=%s\n", i, t->topology_key);
    selector(sb, "  selector", t->selector);
    strs(sb, "  namespaces", t->namespaces, t->nnamespaces);
  }
  for (size_t i = 0; i < x->nspread; i++) {
    const spread_constraint *s = &x->spread[i];
    sb_printf(sb, "spread[%zu]: skew=%d topology=%s when=%s affinity=%s taints=%s\n", i,
              s->max_skew, s->topology_key, s->when_unsatisfiable, s->node_affinity_policy,
              s->node_taints_policy);
    selector(sb, "  selector", s->selector);
    strs(sb, "  match_label_keys", s->match_label_keys, s->nmatch_label_keys);
  }
  statuses(sb, "init_status", x->init_status, x->ninit_status);
  statuses(sb, "ephemeral_status", x->ephemeral_status, x->nephemeral_status);
  strs(sb, "pvc_claims", x->pvc_claims, x->npvc);
}

void node_text(strbuf *sb, const node *n) {
  str(sb, "name", n->name);
  str(sb, "uid", n->uid);
  str(sb, "ready_status", n->ready_status);
  kvs(sb, "labels", &n->labels);
  sb_printf(sb, "unschedulable=%d ready=%d over_since=%lld\n", n->unschedulable, n->ready,
            (long long)n->over_since);
  for (size_t i = 0; i < n->ntaints; i++)
    sb_printf(sb, "taint[%zu]: %s %s %s\n", i, n->taints[i].key, n->taints[i].value,
              n->taints[i].effect);
  res(sb, "allocatable", &n->allocatable);
  res(sb, "capacity", &n->capacity);
}

/* ---------- the two pages ---------- */

typedef struct {
  arena *a;
  doc_node **items;
  size_t n, cap;
} kept;

static int keep_item(void *ctx, doc_node *item, dserr *err) {
  (void)err;
  kept *k = ctx;
  if (k->n == k->cap) {
    k->cap = k->cap ? 2 * k->cap : 16;
    k->items = realloc(k->items, k->cap * sizeof *k->items);
  }
  k->items[k->n++] = doc_copy(k->a, item);
  return 0;
}

static const char *item_name(const doc_node *item) {
  const char *name = doc_str(doc_path(item, "metadata", "name", NULL));
  return name ? name : "(no name)";
}

static int compare_trees(const char *kind, const char *json, size_t json_len, const char *pb,
                         size_t pb_len, strbuf *report) {
  const pb_msg *schema = decode_pb_schema(kind);
  char list_kind[64];
  snprintf(list_kind, sizeof list_kind, "%sList", kind);
  arena *a = arena_new(1 << 16);
  kept kj = {a, NULL, 0, 0}, kp = {a, NULL, 0, 0};
  doc_node *hj = NULL, *hp = NULL;
  dserr err;
  int diffs = 0;
  size_t count;
  if (doc_stream_memory(DOC_FMT_JSON, "json page", json, json_len, keep_item, &kj, a, &hj, &err) <
      0) {
    sb_printf(report, "the JSON page does not read: %s\n", err.msg);
    diffs++;
  } else if (docpb_stream_list("protobuf page", (const uint8_t *)pb, pb_len, list_kind, schema,
                               keep_item, &kp, a, &hp, &count, &err) < 0) {
    sb_printf(report, "the protobuf page does not read: %s\n", err.msg);
    diffs++;
  } else {
    static const char *const meta[] = {"resourceVersion", "continue", "remainingItemCount"};
    for (size_t i = 0; i < 3; i++) {
      const doc_node *x = doc_path(hj, "metadata", meta[i], NULL);
      const doc_node *y = doc_path(hp, "metadata", meta[i], NULL);
      if ((x == NULL) != (y == NULL) || (x && !doc_equal(x, y, NULL))) {
        sb_printf(report, "list metadata.%s: JSON %s, protobuf %s\n", meta[i],
                  x ? doc_describe(a, x) : "absent", y ? doc_describe(a, y) : "absent");
        diffs++;
      }
    }
    if (kj.n != kp.n) {
      sb_printf(report, "items: %zu in JSON, %zu in protobuf\n", kj.n, kp.n);
      diffs++;
    }
    for (size_t i = 0; i < kj.n && i < kp.n; i++) {
      doc_node *cut = docpb_project(a, schema, kj.items[i]);
      strbuf where = {0};
      if (!doc_equal(cut, kp.items[i], &where)) {
        strbuf x = {0}, y = {0};
        doc_write_json(&x, cut, 0);
        doc_write_json(&y, kp.items[i], 0);
        sb_printf(report,
                  "items[%zu] (%s): the trees differ at %s\n  JSON:     %s\n  protobuf: %s\n", i,
                  item_name(kj.items[i]), sb_str(&where), sb_str(&x), sb_str(&y));
        sb_free(&x);
        sb_free(&y);
        diffs++;
      }
      sb_free(&where);
    }
  }
  free(kj.items);
  free(kp.items);
  arena_free(a);
  return diffs;
}

static model *decode_page(const char *kind, const char *what, const char *body, size_t len,
                          strbuf *report) {
  model *m = model_new();
  m->keep_pod_conditions = true;
  char *token = NULL;
  size_t count;
  dserr err;
  if (decode_list_page(m, what, body, len, kind, &token, &count, &err) < 0) {
    sb_printf(report, "the %s does not decode: %s\n", what, err.msg);
    model_free(m);
    return NULL;
  }
  free(token);
  return m;
}

void model_object_text(strbuf *sb, const model *m, const char *kind, size_t i) {
  if (strcmp(kind, "Pod") == 0)
    pod_text(sb, m->pods.items[i]);
  else
    node_text(sb, m->nodes.items[i]);
}

size_t model_object_count(const model *m, const char *kind) {
  return strcmp(kind, "Pod") == 0 ? m->pods.n : m->nodes.n;
}

static int compare_objects(const char *kind, const char *json, size_t json_len, const char *pb,
                           size_t pb_len, size_t *objects, strbuf *report) {
  model *mj = decode_page(kind, "JSON page", json, json_len, report);
  model *mp = decode_page(kind, "protobuf page", pb, pb_len, report);
  int diffs = 0;
  if (!mj || !mp) {
    diffs++;
  } else {
    size_t nj = model_object_count(mj, kind), np = model_object_count(mp, kind);
    if (nj != np) {
      sb_printf(report, "decoded %s objects: %zu from JSON, %zu from protobuf\n", kind, nj, np);
      diffs++;
    }
    for (size_t i = 0; i < nj && i < np; i++) {
      strbuf x = {0}, y = {0};
      model_object_text(&x, mj, kind, i);
      model_object_text(&y, mp, kind, i);
      if (strcmp(sb_str(&x), sb_str(&y)) != 0) {
        sb_printf(report, "%s %zu decodes differently\n--- from JSON\n%s--- from protobuf\n%s",
                  kind, i, sb_str(&x), sb_str(&y));
        diffs++;
      }
      sb_free(&x);
      sb_free(&y);
    }
    *objects = nj;
  }
  model_free(mj);
  model_free(mp);
  return diffs;
}

int pb_compare_pages(const char *kind, const char *json, size_t json_len, const char *pb,
                     size_t pb_len, size_t *objects, strbuf *report) {
  *objects = 0;
  if (!decode_pb_schema(kind)) {
    sb_printf(report, "no protobuf schema for kind %s\n", kind);
    return 1;
  }
  return compare_trees(kind, json, json_len, pb, pb_len, report) +
         compare_objects(kind, json, json_len, pb, pb_len, objects, report);
}
