/* pager.c - the paged LIST with a fetcher thread; see pager.h.
 *
 * The fetcher and the caller meet in a queue of two fetched pages under one mutex. The
 * fetcher owns the client for the whole list; the caller only decodes. When a page's first
 * bytes do not give its continue token, the fetcher waits until the caller has decoded the
 * page and handed the token over. Either side stopping (an error, the last page) wakes the
 * other. A decoded page's buffer goes back to the fetcher, which lends it to the client for
 * a later page: pages of megabytes are then neither grown from nothing (a copy at every
 * doubling) nor faulted in anew. */
#include "pager.h"

#include "../doc/doc_fast.h"
#include "../doc/doc_pb.h"
#include "../obs/log.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  kube_response r;
  char *url;
  bool responded; /* a response came (r.status is set), whatever its status */
  int rc;         /* 0, or -1 with err */
  dserr err;
  bool expired;
  bool token_known; /* token was read from the page's first bytes */
  char *token;
  double fetch_s;
} fetched;

typedef struct {
  kube_client *c;
  const char *path, *accept;
  const char *min_rv; /* the first page's resourceVersion (NotOlderThan), or NULL */
  int page;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  fetched q[2];
  size_t head, n;
  bool stop; /* the caller is done: fetch nothing more */
  bool done; /* the fetcher has ended */
  bool have_token;
  char *handed; /* the caller's token for a page that did not say it up front */
  char *spare;  /* a decoded page's buffer, for the fetcher to fill again */
  size_t spare_cap;
} pager;

static void fetched_free(fetched *f) {
  kube_response_free(&f->r);
  free(f->url);
  free(f->token);
}

static char *dup_or_null(const char *s) {
  return s && *s ? strdup(s) : NULL;
}

static void fetch_one(pager *p, const char *token, bool later_page, const char *min_rv, fetched *f) {
  memset(f, 0, sizeof *f);
  strbuf url = {0};
  sb_printf(&url, "%s%climit=%d", p->path, strchr(p->path, '?') ? '&' : '?', p->page);
  if (token) {
    sb_append(&url, "&continue=");
    kube_path_escape(&url, token);
  } else if (min_rv) {
    sb_append(&url, "&resourceVersion=");
    kube_path_escape(&url, min_rv);
    sb_append(&url, "&resourceVersionMatch=NotOlderThan");
  }
  f->url = strdup(sb_str(&url));
  sb_free(&url);
  f->err.msg[0] = 0;
  double t0 = time_mono_seconds();
  f->rc = kube_get_as(p->c, f->url, p->accept, &f->r, &f->err);
  f->fetch_s = time_mono_seconds() - t0;
  f->responded = f->rc == 0;
  if (f->rc == 0 && f->r.status != 200) {
    char msg[1024], reason[128];
    kube_status_text(&f->r, msg, sizeof msg, reason, sizeof reason);
    f->rc = dserr_set(&f->err, "HTTP %ld: %s", f->r.status, *msg ? msg : "(no message)");
    f->expired = later_page && f->r.status == 410;
  }
  if (f->rc == 0) {
    arena *a = arena_new(4096);
    const char *tok;
    if (docpb_is_protobuf(f->r.body, f->r.len)
            ? docpb_list_continue(a, (const uint8_t *)f->r.body, f->r.len, &tok) == 0
            : docf_list_continue(a, f->r.body, f->r.len, &tok)) {
      f->token_known = true;
      f->token = dup_or_null(tok);
    }
    arena_free(a);
  }
}

static void *fetch_loop(void *arg) {
  pager *p = arg;
  char *token = NULL;
  bool later = false;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    char *spare = p->spare;
    size_t spare_cap = p->spare_cap;
    p->spare = NULL;
    pthread_mutex_unlock(&p->mu);
    if (spare)
      kube_client_lend_body(p->c, spare, spare_cap);
    fetched f;
    fetch_one(p, token, later, later ? NULL : p->min_rv, &f);
    /* a server that cannot serve the first page from its cache at min_rv (504 "Too large
     * resource version" once it has waited for it, 410) is asked for a consistent list */
    if (!later && p->min_rv && f.responded && (f.r.status == 504 || f.r.status == 410)) {
      LOGV(2, NULL, "The list could not be served at the resourceVersion asked; listing again without it",
           LSTR("url", f.url), LINT("status", f.r.status), LSTR("err", f.err.msg));
      fetched_free(&f);
      fetch_one(p, NULL, false, NULL, &f);
    }
    free(token);
    token = NULL;
    pthread_mutex_lock(&p->mu);
    while (p->n == 2 && !p->stop)
      pthread_cond_wait(&p->cv, &p->mu);
    if (p->stop) {
      pthread_mutex_unlock(&p->mu);
      fetched_free(&f);
      break;
    }
    p->q[(p->head + p->n) % 2] = f;
    p->n++;
    pthread_cond_broadcast(&p->cv);
    if (f.rc != 0) {
      pthread_mutex_unlock(&p->mu);
      break;
    }
    if (f.token_known) {
      token = f.token ? strdup(f.token) : NULL;
    } else {
      while (!p->have_token && !p->stop)
        pthread_cond_wait(&p->cv, &p->mu);
      if (p->stop) {
        pthread_mutex_unlock(&p->mu);
        break;
      }
      token = p->handed;
      p->handed = NULL;
      p->have_token = false;
    }
    pthread_mutex_unlock(&p->mu);
    if (!token)
      break;
    later = true;
  }
  pthread_mutex_lock(&p->mu);
  p->done = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

static bool same_token(const char *a, const char *b) {
  return (a == NULL) == (b == NULL) && (!a || strcmp(a, b) == 0);
}

const char *kube_pager_encoding(const kube_pager_stats *st) {
  return !st->protobuf_pages               ? "json"
         : st->protobuf_pages == st->pages ? "protobuf"
                                           : "protobuf and json";
}

int kube_pager_run(kube_client *c, const char *path, const char *accept, int page, kube_page_fn fn,
                   void *ctx, kube_pager_stats *st, dserr *err) {
  return kube_pager_run_from(c, path, accept, NULL, page, fn, ctx, st, err);
}

int kube_pager_run_from(kube_client *c, const char *path, const char *accept, const char *min_rv,
                        int page, kube_page_fn fn, void *ctx, kube_pager_stats *st, dserr *err) {
  memset(st, 0, sizeof *st);
  pager p = {.c = c, .path = path, .accept = accept, .min_rv = min_rv, .page = page};
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  pthread_t th;
  if (pthread_create(&th, NULL, fetch_loop, &p) != 0) {
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    return dserr_set(err, "cannot start the thread that fetches %s", path);
  }
  int rc = 0;
  for (;;) {
    pthread_mutex_lock(&p.mu);
    while (p.n == 0 && !p.done)
      pthread_cond_wait(&p.cv, &p.mu);
    if (p.n == 0) {
      pthread_mutex_unlock(&p.mu);
      break;
    }
    fetched f = p.q[p.head];
    p.head = (p.head + 1) % 2;
    p.n--;
    pthread_cond_broadcast(&p.cv);
    pthread_mutex_unlock(&p.mu);
    st->fetch_s += f.fetch_s;
    if (f.responded)
      st->status = f.r.status;
    if (f.rc < 0) {
      snprintf(err->msg, sizeof err->msg, "%s", f.err.msg);
      st->expired = f.expired;
      fetched_free(&f);
      rc = -1;
      break;
    }
    char *token = NULL;
    size_t count = 0;
    double t0 = time_mono_seconds();
    int frc = fn(ctx, f.url, &f.r, &token, &count, err);
    st->decode_s += time_mono_seconds() - t0;
    st->pages++;
    st->protobuf_pages += docpb_is_protobuf(f.r.body, f.r.len);
    st->bytes += f.r.len;
    st->items += count;
    if (frc == 0 && f.token_known && !same_token(token, f.token))
      frc = dserr_set(err,
                      "%s: the list's continue token differs between its metadata and the "
                      "page as a whole",
                      f.url);
    if (frc < 0) {
      free(token);
      fetched_free(&f);
      rc = -1;
      break;
    }
    if (f.token_known)
      free(token);
    pthread_mutex_lock(&p.mu);
    if (!f.token_known) {
      p.handed = token;
      p.have_token = true;
      pthread_cond_broadcast(&p.cv);
    }
    if (!p.spare) {
      p.spare = f.r.body;
      p.spare_cap = f.r.cap;
      f.r.body = NULL;
    }
    pthread_mutex_unlock(&p.mu);
    fetched_free(&f);
  }
  pthread_mutex_lock(&p.mu);
  p.stop = true;
  pthread_cond_broadcast(&p.cv);
  pthread_mutex_unlock(&p.mu);
  pthread_join(th, NULL);
  for (; p.n; p.n--, p.head = (p.head + 1) % 2)
    fetched_free(&p.q[p.head]);
  free(p.handed);
  free(p.spare);
  pthread_cond_destroy(&p.cv);
  pthread_mutex_destroy(&p.mu);
  return rc;
}
