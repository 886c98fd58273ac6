/* client.h - a Kubernetes REST client over libcurl.
 *
 * One connection is kept and reused (HTTP keep-alive). TLS is always verified unless the
 * kubeconfig says insecure-skip-tls-verify. Authentication: bearer token (static, token file
 * re-read when it changes, or an exec plugin's token, re-run when it expires or a request
 * gets 401), or a client certificate. A client-side rate limit (token bucket, qps/burst,
 * client-go's defaults 5/10 when 0) is applied before every request. Responses 429 and 5xx
 * that carry Retry-After are retried after that many seconds, at most 10 times, as client-go
 * does; nothing else is retried here. The bearer token never appears in any log line or
 * error message. */
#ifndef DS_KUBE_CLIENT_H
#define DS_KUBE_CLIENT_H

#include "../util/err.h"
#include "config.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct kube_client kube_client;

/* qps <= 0 and burst <= 0 select 5 and 10. Returns NULL with err (bad CA file, unreadable
 * client key, exec plugin failure...). */
kube_client *kube_client_new(const kube_config *cfg, double qps, int burst, dserr *err);
void kube_client_free(kube_client *c);

typedef struct {
  long status;  /* HTTP status */
  char *body;   /* NUL-terminated response body (heap), may be empty */
  size_t len;
  size_t cap; /* bytes allocated for body (for kube_client_lend_body) */
  /* after a transport failure (-1): the request was sent, so the server may have acted on
   * it (a timeout awaiting the answer, a reset mid-response); false when it never left
   * (refused connection, TLS failure, credentials) */
  bool maybe_delivered;
} kube_response;

/* Sends one request. path starts with "/" and may carry a query ("/api/v1/pods?limit=500").
 * body may be NULL; content_type defaults to application/json. Returns 0 with the response
 * for any HTTP status (the caller decides), or -1 with err for a transport failure (refused
 * connection, TLS verification failure, timeout, truncated body): the message reads like
 * client-go's, e.g. `Get "https://127.0.0.1:6443/api/v1/nodes": <reason>`. */
int kube_request(kube_client *c, const char *method, const char *path, const char *content_type,
                 const char *body, kube_response *resp, dserr *err);
void kube_response_free(kube_response *r);
/* A GET whose Accept header is `accept` (kube_request sends `application/json, *\/\*`):
 * KUBE_ACCEPT_PROTOBUF asks for kube-apiserver's protobuf encoding with JSON as the fallback,
 * as client-go's typed clients ask for built-in kinds (k8s.io/client-go/rest/request.go,
 * UseProtobufAsDefault). The body says which came (doc/doc_pb.h: docpb_is_protobuf). */
#define KUBE_ACCEPT_PROTOBUF "application/vnd.kubernetes.protobuf,application/json"
int kube_get_as(kube_client *c, const char *path, const char *accept, kube_response *resp,
                dserr *err);

/* From a Status body: message and reason (empty strings when absent or not a Status). */
void kube_status_text(const kube_response *r, char *message, size_t mcap, char *reason,
                      size_t rcap);

/* The server URL the client talks to (for messages). Borrowed. */
const char *kube_client_server(const kube_client *c);

/* added after the first version of this header: */

/* Whole-request timeout in seconds (default 60 or the config's timeout_ns; the connect
 * timeout is 30 s); 0 = none, for long requests such as watches. */
void kube_client_set_timeout(kube_client *c, long seconds);
/* Connections opened so far (1 while keep-alive works; for tests and diagnostics). */
long kube_client_connections(const kube_client *c);
/* Seconds this client's requests have taken so far, from sending each to its answer's end
 * (the rate limiter's waits not included): the part of a phase that is the wire's and the
 * server's. */
double kube_client_waited(const kube_client *c);

/* A check of every request as it is about to leave: libcurl asks it once the connection is
 * ready (CURLOPT_PREREQFUNCTION), after the rate limiter's and any Retry-After wait, so that
 * a process stopped and resumed on the way sends nothing the check would refuse now. false
 * (with why, NUL-terminated within cap) refuses the request: nothing is sent, and it fails
 * with `<Op> "<url>": not sent: <why>` (maybe_delivered false). NULL removes the gate. */
typedef bool (*kube_send_gate)(void *ctx, const char *method, char *why, size_t cap);
void kube_client_set_gate(kube_client *c, kube_send_gate gate, void *ctx);

/* Appends s to a URL path, percent-encoding all but unreserved characters (names are DNS
 * labels in practice; this keeps a hostile name from changing the path). */
#include "../util/strbuf.h"
void kube_path_escape(strbuf *sb, const char *s);

/* A long GET whose body is handed over as it arrives (a watch): when the answer is HTTP 200,
 * fn is called once with data NULL as soon as that is known (the headers may come long before
 * any byte of the body), then with every chunk of the body in order (a non-zero return stops
 * the request); any
 * other answer is read whole into resp, as kube_request does, with no Retry-After retries (the
 * caller has its own backoff). The request has no overall time limit; it fails when no byte
 * came for stall_seconds (0: never) or when *abort_flag becomes non-zero (checked about once
 * a second). Returns 0 when the server ended the response, with resp->status (the body of a
 * 200 is not kept), else -1 with err. */
typedef int (*kube_stream_fn)(void *ctx, const char *data, size_t len);
int kube_stream(kube_client *c, const char *path, kube_stream_fn fn, void *ctx,
                long stall_seconds, volatile int *abort_flag, kube_response *resp, dserr *err);

/* Gives the client buf, cap bytes (a response's body and cap, done with), to hold the body of
 * its next response instead of one grown from nothing: a paged LIST reuses its pages'
 * buffers. The client owns buf from here on (and frees it when it holds one already). */
void kube_client_lend_body(kube_client *c, char *buf, size_t cap);

/* A client is not thread-safe: it owns one libcurl handle; use one client per thread.
 * Notes on client-go parity: qps < 0 selects the default 5 here (client-go would disable the
 * limiter); transport errors are not retried (client-go retries a GET after a connection
 * reset or EOF); everything else in the comment at the top holds. */

#endif
