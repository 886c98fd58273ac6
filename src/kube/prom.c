/* prom.c - Prometheus instant queries over the Kubernetes REST client; see prom.h. */
#include "prom.h"

#include "../decode/decode.h"
#include "../obs/log.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"
#include "client.h"
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct prom_client {
  kube_client *http;
};

prom_client *prom_client_new(const prom_config *cfg, dserr *err) {
  kube_config kc = {0};
  /* client_golang joins the endpoint path and "/api/v1/query" (path.Join: no double slash) */
  char *server = xstrdup(cfg->url);
  size_t n = strlen(server);
  while (n > 0 && server[n - 1] == '/')
    server[--n] = 0;
  kc.server = server;
  kc.ca_file = (char *)cfg->ca_file;
  kc.token = (char *)cfg->token;
  kc.token_file = (char *)cfg->token_file;
  kc.source = "prometheus provider";
  /* one query per cycle: no client-side rate limit worth having */
  kube_client *http = kube_client_new(&kc, 100, 100, err);
  free(server);
  if (!http)
    return NULL;
  prom_client *c = calloc(1, sizeof *c);
  if (!c)
    abort();
  c->http = http;
  return c;
}

void prom_client_free(prom_client *c) {
  if (!c)
    return;
  kube_client_free(c->http);
  free(c);
}

/* url.QueryEscape: unreserved bytes kept, space as '+', everything else %XX */
static void query_escape(strbuf *sb, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
        ch == '-' || ch == '_' || ch == '.' || ch == '~')
      sb_appendc(sb, (char)ch);
    else if (ch == ' ')
      sb_appendc(sb, '+');
    else
      sb_printf(sb, "%%%02X", ch);
  }
}

/* client_golang's errorTypeAndMsgFor, for statuses that are not 2xx, 400 or 422 */
static void status_error(strbuf *sb, long code) {
  if (code / 100 == 4)
    sb_printf(sb, "client_error: client error: %ld", code);
  else if (code / 100 == 5)
    sb_printf(sb, "server_error: server error: %ld", code);
  else
    sb_printf(sb, "bad_response: bad response code %ld", code);
}

void prom_query(prom_client *c, model *m, const char *query, double at) {
  strbuf form = {0}, why = {0};
  sb_append(&form, "query=");
  query_escape(&form, query);
  sb_append(&form, "&time=");
  sb_append_go_float(&form, at);
  kube_response resp;
  dserr err;
  int rc = kube_request(c->http, "POST", "/api/v1/query", "application/x-www-form-urlencoded",
                        sb_str(&form), &resp, &err);
  if (rc == 0 && (resp.status == 405 || resp.status == 501)) {
    kube_response_free(&resp);
    strbuf path = {0};
    sb_printf(&path, "/api/v1/query?%s", sb_str(&form));
    rc = kube_request(c->http, "GET", sb_str(&path), NULL, NULL, &resp, &err);
    sb_free(&path);
  }
  sb_append(&why, "unable to capture prometheus metrics: ");
  if (rc < 0) {
    sb_append(&why, err.msg);
    decode_prom_failure(m, query, sb_str(&why));
  } else if (resp.status / 100 != 2 && resp.status != 400 && resp.status != 422) {
    status_error(&why, resp.status);
    decode_prom_failure(m, query, sb_str(&why));
  } else if (decode_prom_response(m, query, "prometheus response", resp.body, resp.len, &err) < 0) {
    sb_printf(&why, "bad_response: %s", err.msg);
    decode_prom_failure(m, query, sb_str(&why));
  } else if (resp.status != 200 && resp.status / 100 != 2) {
    /* 400 / 422 must carry an error status (client_golang: "inconsistent body") */
    prom_answer *a = m->prom_answers.items[m->prom_answers.n - 1];
    if (!a->error) {
      sb_append(&why, "bad_response: inconsistent body for response code");
      a->error = arena_strdup(m->mem, sb_str(&why));
      a->nsamples = 0;
      a->samples = NULL;
    }
  }
  if (rc == 0)
    kube_response_free(&resp);
  const prom_answer *a = m->prom_answers.items[m->prom_answers.n - 1];
  LOGV(4, NULL, "Prometheus query answered", LSTR("query", query), LUINT("samples", a->nsamples),
       LSTR("error", a->error ? a->error : ""));
  sb_free(&form);
  sb_free(&why);
}
