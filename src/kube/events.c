/* events.c - Events sent in the background; see events.h. */
#include "events.h"

#include "../obs/log.h"
#include "../apimachinery/timeutil.h"
#include "client.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct queued {
  struct queued *next;
  char *path, *body, *what;
} queued;

struct event_sender {
  kube_client *client;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  queued *head, *tail; /* in the order they came */
  size_t n;
  bool closing;    /* no new Event; send what is queued until the deadline */
  double deadline; /* time_mono_seconds() */
  unsigned long dropped_at_exit;
};

static void queued_free(queued *q) {
  free(q->path);
  free(q->body);
  free(q->what);
  free(q);
}

static void send_one(kube_client *c, const queued *q) {
  kube_response r = {0};
  dserr err;
  if (kube_request(c, "POST", q->path, NULL, q->body, &r, &err) < 0)
    LOGV(2, NULL, "Could not record an event", LSTR("pod", q->what), LSTR("err", err.msg));
  else if (r.status >= 300)
    LOGV(2, NULL, "Could not record an event", LSTR("pod", q->what), LINT("status", r.status));
  kube_response_free(&r);
}

static void *sender_main(void *arg) {
  event_sender *s = arg;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->head && !s->closing)
      pthread_cond_wait(&s->wake, &s->lock);
    if (!s->head)
      break; /* closing, and nothing left */
    if (s->closing && time_mono_seconds() > s->deadline) {
      /* out of time: what is left is dropped */
      while (s->head) {
        queued *q = s->head;
        s->head = q->next;
        queued_free(q);
        s->dropped_at_exit++;
      }
      break;
    }
    queued *q = s->head;
    s->head = q->next;
    if (!s->head)
      s->tail = NULL;
    s->n--;
    pthread_mutex_unlock(&s->lock);
    send_one(s->client, q);
    queued_free(q);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

event_sender *event_sender_new(const kube_config *cfg, double qps, int burst, dserr *err) {
  event_sender *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  s->client = kube_client_new(cfg, qps, burst, err);
  if (!s->client) {
    free(s);
    return NULL;
  }
  /* an Event gives up sooner than other requests; a shorter --request-timeout still applies */
  if (!(cfg->timeout_ns > 0 && cfg->timeout_ns < EVENTS_REQUEST_TIMEOUT_S * 1000000000LL))
    kube_client_set_timeout(s->client, EVENTS_REQUEST_TIMEOUT_S);
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->wake, NULL);
  if (pthread_create(&s->thread, NULL, sender_main, s) != 0) {
    dserr_set(err, "cannot start the thread that sends Events");
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    kube_client_free(s->client);
    free(s);
    return NULL;
  }
  return s;
}

static char *dup_str(const char *x) {
  char *d = strdup(x ? x : "");
  if (!d)
    abort();
  return d;
}

void event_sender_post(event_sender *s, const char *path, const char *body, const char *what) {
  pthread_mutex_lock(&s->lock);
  if (s->closing || s->n >= EVENTS_QUEUED_MAX) {
    bool full = !s->closing;
    pthread_mutex_unlock(&s->lock);
    LOGV(2, NULL, "Could not record an event", LSTR("object", what),
         LSTR("err", full ? "too many Events waiting to be sent" : "the Event sender has stopped"));
    return;
  }
  queued *q = calloc(1, sizeof *q);
  if (!q)
    abort();
  q->path = dup_str(path);
  q->body = dup_str(body);
  q->what = dup_str(what);
  if (s->tail)
    s->tail->next = q;
  else
    s->head = q;
  s->tail = q;
  s->n++;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->lock);
}

void event_sender_emit(event_sender *s, const event_regarding *regarding, const char *type,
                       const char *reason, const char *action, const char *note,
                       const char *host) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  char when[64];
  time_format_micro_now(when, sizeof when);
  const char *ns = regarding->ns && *regarding->ns ? regarding->ns : "default";
  strbuf body = {0}, path = {0}, name = {0}, inst = {0}, what = {0};
  sb_printf(&name, "%s.%llx", regarding->name,
            (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec);
  sb_printf(&inst, "sigs.k8s.io.descheduler-%s", host);
  sb_append(&body, "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":");
  sb_append_json_str(&body, sb_str(&name));
  sb_append(&body, ",\"namespace\":");
  sb_append_json_str(&body, ns);
  sb_printf(&body,
            "},\"eventTime\":\"%s\",\"reportingController\":\"sigs.k8s.io.descheduler\","
            "\"reportingInstance\":",
            when);
  sb_append_json_str(&body, sb_str(&inst));
  sb_append(&body, ",\"action\":");
  sb_append_json_str(&body, action);
  sb_append(&body, ",\"reason\":");
  sb_append_json_str(&body, reason);
  sb_append(&body, ",\"note\":");
  sb_append_json_str(&body, note);
  sb_append(&body, ",\"type\":");
  sb_append_json_str(&body, type);
  sb_append(&body, ",\"regarding\":{\"apiVersion\":");
  sb_append_json_str(&body, regarding->api_version);
  sb_append(&body, ",\"kind\":");
  sb_append_json_str(&body, regarding->kind);
  if (regarding->ns && *regarding->ns) {
    sb_append(&body, ",\"namespace\":");
    sb_append_json_str(&body, regarding->ns);
  }
  sb_append(&body, ",\"name\":");
  sb_append_json_str(&body, regarding->name);
  if (regarding->uid && *regarding->uid) {
    sb_append(&body, ",\"uid\":");
    sb_append_json_str(&body, regarding->uid);
  }
  sb_append(&body, "}}");
  sb_append(&path, "/apis/events.k8s.io/v1/namespaces/");
  kube_path_escape(&path, ns);
  sb_append(&path, "/events");
  if (regarding->ns && *regarding->ns)
    sb_printf(&what, "%s/", regarding->ns);
  sb_append(&what, regarding->name);
  event_sender_post(s, sb_str(&path), sb_str(&body), sb_str(&what));
  sb_free(&body);
  sb_free(&path);
  sb_free(&name);
  sb_free(&inst);
  sb_free(&what);
}

void event_sender_free(event_sender *s, double seconds) {
  if (!s)
    return;
  pthread_mutex_lock(&s->lock);
  s->closing = true;
  s->deadline = time_mono_seconds() + seconds;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->lock);
  pthread_join(s->thread, NULL);
  if (s->dropped_at_exit)
    LOGV(1, NULL, "Events not sent before exit", LUINT("count", s->dropped_at_exit),
         LSTR("err", "out of time"));
  pthread_cond_destroy(&s->wake);
  pthread_mutex_destroy(&s->lock);
  kube_client_free(s->client);
  free(s);
}
