/* common.c - see common.h. */
#include "common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Upstream's error aggregate lists each distinct message once. */
void errlist_add(errlist *e, const char *fmt, ...) {
  strbuf msg = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&msg, fmt, ap);
  va_end(ap);
  for (size_t i = 0; i < e->nmsgs; i++)
    if (strcmp(e->msgs[i], sb_str(&msg)) == 0) {
      sb_free(&msg);
      return;
    }
  e->msgs = realloc(e->msgs, (e->nmsgs + 1) * sizeof *e->msgs);
  if (!e->msgs)
    abort();
  e->msgs[e->nmsgs++] = sb_detach(&msg);
  if (e->n++)
    sb_append(&e->sb, ", ");
  sb_append(&e->sb, e->msgs[e->nmsgs - 1]);
}

int errlist_finish(errlist *e, dserr *err) {
  int rc = 0;
  if (e->n == 1)
    rc = dserr_set(err, "%s", sb_str(&e->sb));
  else if (e->n > 1)
    rc = dserr_set(err, "[%s]", sb_str(&e->sb));
  sb_free(&e->sb);
  for (size_t i = 0; i < e->nmsgs; i++)
    free(e->msgs[i]);
  free(e->msgs);
  e->msgs = NULL;
  e->n = 0;
  e->nmsgs = 0;
  return rc;
}

void validate_namespaces(const ns_filter *f, errlist *e) {
  if (f && f->include.n && f->exclude.n)
    errlist_add(e, "only one of Include/Exclude namespaces can be set");
}

void validate_label_selector(const label_selector *sel, errlist *e) {
  if (sel && sel->invalid)
    errlist_add(e, "failed to get label selectors from strategy's params: %s", sel->invalid);
}

bool pod_passes_ns_and_labels(const ns_filter *f, const label_selector *sel, const pod *p) {
  if (!ns_filter_allows(f, p->ns))
    return false;
  if (sel && !selector_matches(sel, &p->labels))
    return false;
  return true;
}

void pod_vec_push(arena *a, pod_vec *v, pod *p) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 64;
    pod **items = ARENA_NEWN(a, pod *, cap);
    if (v->n)
      memcpy(items, v->items, v->n * sizeof *items);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->n++] = p;
}

void log_eviction_failed(plugin_handle *h, const pod *p) {
  char ref[512];
  LOGE(&h->log, "eviction failed", "the eviction request did not succeed",
       LSTR("pod", pod_ref(p, ref, sizeof ref)));
}

bool evict_in_order(plugin_handle *h, pod **pods, size_t n, bool skip_on_node_limit) {
  for (size_t i = 0; i < n; i++) {
    evict_status st = fw_evict(h, pods[i], "");
    if (st == EVICT_LIMIT_TOTAL)
      return true;
    if (st == EVICT_LIMIT_NODE) {
      if (skip_on_node_limit)
        continue;
      return false;
    }
    if (st != EVICT_OK && st != EVICT_VETOED)
      log_eviction_failed(h, pods[i]);
  }
  return false;
}

bool statuses_exited_with(const i32_list *codes, const container_status *cs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!cs[i].terminated)
      continue;
    for (size_t k = 0; k < codes->n; k++)
      if (codes->items[k] == cs[i].exit_code)
        return true;
  }
  return false;
}
