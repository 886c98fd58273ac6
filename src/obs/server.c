/* server.c - the HTTPS endpoint for /metrics and /healthz; see server.h.
 *
 * libmicrohttpd serves from its own polling thread; the handlers only read the metrics
 * registry (which has its own lock) and the immutable server options, so no other locking
 * is needed here.
 *
 * The listening socket is made here rather than by libmicrohttpd, for two reasons: a bind
 * failure can then be reported with its errno in Go's words (`listen tcp 127.0.0.1:10258:
 * bind: address already in use`) instead of libmicrohttpd's silent NULL, and the port the
 * OS picked is known. As Go does for the wildcard 0.0.0.0, the socket is a dual-stack [::]
 * when the host has IPv6, so IPv6-only clusters can scrape the default listener.
 *
 * Certificates: given files are checked with OpenSSL first (GnuTLS inside libmicrohttpd
 * would reject a bad pair without saying why); without files a self-signed EC P-256
 * certificate is made in memory, as the Go server's loopback certificate is never written
 * to disk. TLS 1.2 is the minimum, as for Kubernetes serving. */
#include "server.h"

#include "../util/strbuf.h"
#include "log.h"
#include "metrics.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SELF_SIGNED_CN "apiserver-loopback-client"
#define CERT_FILE_MAX (1 << 20)
#define TLS_PRIORITIES "NORMAL:-VERS-TLS1.0:-VERS-TLS1.1"
#define IDLE_TIMEOUT_SECONDS 90 /* the Kubernetes secure server's IdleTimeout */

struct obs_server {
  struct MHD_Daemon *daemon; /* NULL when port 0 asked for no server */
  int port;
  bool metrics;
  char *cert_pem, *key_pem; /* heap, kept for the daemon's lifetime */
  atomic_int starting;      /* libmicrohttpd messages during start become the error reason */
  char start_msg[512];
};

/* ---- errors ---- */

/* strerror() in Go's spelling (syscall errors start lower case). */
static const char *go_strerror(int errnum, char *buf, size_t n) {
  snprintf(buf, n, "%s", strerror(errnum));
  buf[0] = (char)tolower((unsigned char)buf[0]);
  return buf;
}

/* The first queued OpenSSL error, or `fallback` when none is queued. Clears the queue. */
static const char *openssl_reason(const char *fallback, char *buf, size_t n) {
  unsigned long e = ERR_get_error();
  if (!e)
    return fallback;
  ERR_error_string_n(e, buf, n);
  ERR_clear_error();
  return buf;
}

/* ---- listening socket ---- */

typedef union {
  struct sockaddr sa;
  struct sockaddr_in in4;
  struct sockaddr_in6 in6;
} any_addr;

/* "host:port" as Go prints a TCP address: IPv6 hosts in brackets. */
static void format_hostport(char *buf, size_t n, const char *host, int port) {
  if (strchr(host, ':'))
    snprintf(buf, n, "[%s]:%d", host, port);
  else
    snprintf(buf, n, "%s:%d", host, port);
}

static int bind_listen(const any_addr *a, socklen_t len, int *fd_out, const char **step) {
  int fd = socket(a->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  *step = "socket";
  if (fd < 0)
    return errno;
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* as Go: TIME_WAIT is no conflict */
  if (a->sa.sa_family == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED(&a->in6.sin6_addr))
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  *step = "bind";
  if (bind(fd, &a->sa, len) == 0) {
    *step = "listen";
    if (listen(fd, SOMAXCONN) == 0) {
      *fd_out = fd;
      return 0;
    }
  }
  int e = errno;
  close(fd);
  return e;
}

/* Opens the listener; fills *port_out with the bound port. Returns the fd or -1 with err. */
static int open_listener(const char *host, int port, int *port_out, dserr *err) {
  any_addr a;
  socklen_t len;
  memset(&a, 0, sizeof a);
  if (inet_pton(AF_INET, host, &a.in4.sin_addr) == 1) {
    a.in4.sin_family = AF_INET;
    a.in4.sin_port = htons((uint16_t)port);
    len = sizeof a.in4;
  } else if (inet_pton(AF_INET6, host, &a.in6.sin6_addr) == 1) {
    a.in6.sin6_family = AF_INET6;
    a.in6.sin6_port = htons((uint16_t)port);
    len = sizeof a.in6;
  } else {
    return dserr_set(err, "invalid bind address \"%s\": not an IP address", host);
  }

  int fd = -1, e;
  const char *step;
  if (a.sa.sa_family == AF_INET && a.in4.sin_addr.s_addr == htonl(INADDR_ANY)) {
    any_addr dual;
    memset(&dual, 0, sizeof dual);
    dual.in6.sin6_family = AF_INET6;
    dual.in6.sin6_addr = in6addr_any;
    dual.in6.sin6_port = a.in4.sin_port;
    e = bind_listen(&dual, sizeof dual.in6, &fd, &step);
    /* no IPv6 on this host: plain IPv4 wildcard */
    if (e == EAFNOSUPPORT || e == EADDRNOTAVAIL || e == EPROTONOSUPPORT)
      e = bind_listen(&a, len, &fd, &step);
  } else {
    e = bind_listen(&a, len, &fd, &step);
  }
  if (e) {
    char hp[96], msg[128];
    format_hostport(hp, sizeof hp, host, port);
    return dserr_set(err, "listen tcp %s: %s: %s", hp, step, go_strerror(e, msg, sizeof msg));
  }

  any_addr bound;
  socklen_t blen = sizeof bound;
  if (getsockname(fd, &bound.sa, &blen) != 0) {
    char msg[128];
    dserr_set(err, "getsockname: %s", go_strerror(errno, msg, sizeof msg));
    close(fd);
    return -1;
  }
  *port_out = ntohs(bound.sa.sa_family == AF_INET6 ? bound.in6.sin6_port : bound.in4.sin_port);
  return fd;
}

/* ---- certificates ---- */

/* Reads a whole PEM file (caller frees). */
static char *read_pem_file(const char *path, dserr *err) {
  char msg[128];
  FILE *f = fopen(path, "rb");
  if (!f) {
    dserr_set(err, "open %s: %s", path, go_strerror(errno, msg, sizeof msg));
    return NULL;
  }
  strbuf sb = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && sb.len <= CERT_FILE_MAX)
    sb_appendn(&sb, chunk, n);
  int bad = ferror(f);
  fclose(f);
  if (bad || sb.len > CERT_FILE_MAX) {
    sb_free(&sb);
    dserr_set(err, "read %s: %s", path, bad ? "read error" : "file too large");
    return NULL;
  }
  return sb_detach(&sb); /* "" for an empty file, never NULL */
}

/* Checks what Go's tls.X509KeyPair checks: a certificate, a key, and that they match. */
static int check_key_pair(const char *cert_file, const char *cert_pem, const char *key_file,
                          const char *key_pem, dserr *err) {
  char buf[256];
  int rc = -1;
  BIO *cb = BIO_new_mem_buf(cert_pem, -1), *kb = BIO_new_mem_buf(key_pem, -1);
  X509 *cert = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
  EVP_PKEY *key = NULL;
  if (!cert) {
    dserr_set(err, "%s: tls: failed to find any PEM data in certificate input (%s)", cert_file,
              openssl_reason("no certificate", buf, sizeof buf));
    goto out;
  }
  /* an empty passphrase callback: an encrypted key fails instead of prompting on a tty */
  key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, (void *)"") : NULL;
  if (!key) {
    dserr_set(err, "%s: tls: failed to find any PEM data in key input (%s)", key_file,
              openssl_reason("no private key", buf, sizeof buf));
    goto out;
  }
  if (X509_check_private_key(cert, key) != 1) {
    ERR_clear_error();
    dserr_set(err, "%s, %s: tls: private key does not match public key", cert_file, key_file);
    goto out;
  }
  rc = 0;
out:
  X509_free(cert);
  EVP_PKEY_free(key);
  BIO_free(cb);
  BIO_free(kb);
  return rc;
}

static int add_extension(X509 *cert, int nid, const char *value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
  X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
  if (!ext)
    return -1;
  int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return ok ? 0 : -1;
}

static char *bio_to_string(BIO *b) {
  char *data;
  long n = BIO_get_mem_data(b, &data);
  char *s = malloc((size_t)n + 1);
  if (!s)
    abort();
  memcpy(s, data, (size_t)n);
  s[n] = 0;
  return s;
}

/* A self-signed serving certificate for localhost/127.0.0.1, valid from an hour ago (clock
 * skew, as client-go's certutil) for a year. Fills heap PEM strings (caller frees). */
static int make_self_signed(char **cert_pem, char **key_pem, dserr *err) {
  char buf[256];
  int rc = -1;
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *cert = X509_new();
  BIGNUM *serial = BN_new();
  BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
  if (!key || !cert || !serial || !cb || !kb)
    goto fail;
  X509_NAME *name = X509_get_subject_name(cert);
  if (!X509_set_version(cert, 2) || !BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) ||
      !BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert)) ||
      !X509_gmtime_adj(X509_getm_notBefore(cert), -3600) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert), 365L * 24 * 3600 - 3600) ||
      !X509_set_pubkey(cert, key) ||
      !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)SELF_SIGNED_CN,
                                  -1, -1, 0) ||
      !X509_set_issuer_name(cert, name))
    goto fail;
  if (add_extension(cert, NID_basic_constraints, "critical,CA:FALSE") ||
      add_extension(cert, NID_key_usage, "critical,digitalSignature") ||
      add_extension(cert, NID_ext_key_usage, "serverAuth") ||
      add_extension(cert, NID_subject_key_identifier, "hash") ||
      add_extension(cert, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"))
    goto fail;
  if (!X509_sign(cert, key, EVP_sha256()) || !PEM_write_bio_X509(cb, cert) ||
      !PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL))
    goto fail;
  *cert_pem = bio_to_string(cb);
  *key_pem = bio_to_string(kb);
  rc = 0;
  goto out;
fail:
  dserr_set(err, "generating a self-signed certificate: %s",
            openssl_reason("out of memory", buf, sizeof buf));
out:
  BIO_free(cb);
  BIO_free(kb);
  BN_free(serial);
  X509_free(cert);
  EVP_PKEY_free(key);
  return rc;
}

/* ---- request handling ---- */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type,
                               char *body, size_t len, enum MHD_ResponseMemoryMode mode) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
  if (!r)
    return MHD_NO;
  if (type)
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  enum MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

static enum MHD_Result respond_text(struct MHD_Connection *c, unsigned status, const char *text) {
  return respond(c, status, "text/plain; charset=utf-8", (char *)text, strlen(text),
                 MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result respond_buf(struct MHD_Connection *c, const char *type, strbuf *sb) {
  size_t len = sb->len;
  return respond(c, MHD_HTTP_OK, type, sb_detach(sb), len, MHD_RESPMEM_MUST_FREE);
}

typedef struct {
  bool verbose;
  char **excluded; /* heap, unique after healthz_query() */
  size_t nexcluded;
} healthz_query;

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value) {
  (void)kind;
  healthz_query *q = cls;
  if (!strcmp(key, "verbose")) {
    q->verbose = true; /* Go: the key's presence, whatever its value */
  } else if (!strcmp(key, "exclude")) {
    q->excluded = realloc(q->excluded, (q->nexcluded + 1) * sizeof *q->excluded);
    if (!q->excluded)
      abort();
    q->excluded[q->nexcluded++] = strdup(value ? value : "");
  }
  return MHD_YES;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The healthz handler of k8s.io/apiserver with one check, "Descheduler", that always
 * passes: "ok", or with ?verbose each check, unmatched ?exclude= names (sorted, quoted,
 * comma-joined) and the verdict. */
static enum MHD_Result serve_healthz(struct MHD_Connection *c) {
  healthz_query q = {0};
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_query, &q);
  strbuf out = {0};
  bool descheduler_excluded = false;
  if (q.nexcluded)
    qsort(q.excluded, q.nexcluded, sizeof *q.excluded, cmp_str);
  for (size_t i = 0; i < q.nexcluded; i++)
    if (!strcmp(q.excluded[i], "Descheduler"))
      descheduler_excluded = true;
  sb_append(&out, descheduler_excluded ? "[+]Descheduler excluded: ok\n" : "[+]Descheduler ok\n");
  size_t unmatched = 0;
  for (size_t i = 0; i < q.nexcluded; i++) {
    if (!strcmp(q.excluded[i], "Descheduler") || (i && !strcmp(q.excluded[i], q.excluded[i - 1])))
      continue;
    sb_append(&out,
              unmatched++ ? "," : "warn: some health checks cannot be excluded: no matches for ");
    sb_append_go_quoted(&out, q.excluded[i]);
  }
  if (unmatched)
    sb_appendc(&out, '\n');
  sb_append(&out, "healthz check passed\n");
  for (size_t i = 0; i < q.nexcluded; i++)
    free(q.excluded[i]);
  free(q.excluded);
  if (!q.verbose) {
    sb_free(&out);
    return respond_text(c, MHD_HTTP_OK, "ok");
  }
  return respond_buf(c, "text/plain; charset=utf-8", &out);
}

/* component-base's HandlerWithReset: DELETE forgets every series, any other method renders. */
static enum MHD_Result serve_metrics(struct MHD_Connection *c, const char *method) {
  if (!strcmp(method, MHD_HTTP_METHOD_DELETE)) {
    metrics_reset();
    return respond_text(c, MHD_HTTP_OK, "metrics reset");
  }
  strbuf out = {0};
  metrics_render(&out);
  return respond_buf(c, "text/plain; version=0.0.4; charset=utf-8", &out);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls) {
  static int seen;
  (void)version;
  (void)upload_data;
  const obs_server *s = cls;
  if (!*req_cls) { /* headers only so far; answer once any body has been read */
    *req_cls = &seen;
    return MHD_YES;
  }
  if (*upload_data_size) { /* no route takes a body: discard it */
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (!strcmp(url, "/healthz"))
    return serve_healthz(c);
  if (!strcmp(url, "/healthz/Descheduler"))
    return respond_text(c, MHD_HTTP_OK, "ok");
  if (s->metrics && !strcmp(url, "/metrics"))
    return serve_metrics(c, method);
  return respond_text(c, MHD_HTTP_NOT_FOUND, "404 page not found\n");
}

/* libmicrohttpd's messages: while starting they are the error's reason; afterwards (mostly
 * TLS handshakes from plain-HTTP clients or scanners) they are debug output, as the Go
 * server's handshake errors. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
  obs_server *s = cls;
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  size_t n = strlen(msg);
  while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
    msg[--n] = 0;
  if (atomic_load(&s->starting))
    snprintf(s->start_msg, sizeof s->start_msg, "%s", msg);
  else
    LOGV(4, NULL, "HTTPS server", LSTR("message", msg));
}

/* ---- lifecycle ---- */

static int load_certificates(obs_server *s, const server_options *opt, dserr *err) {
  if (!opt->cert_file && !opt->key_file)
    return make_self_signed(&s->cert_pem, &s->key_pem, err);
  if (!opt->cert_file || !opt->key_file)
    return dserr_set(err, "--tls-cert-file and --tls-private-key-file must be given together");
  if (!(s->cert_pem = read_pem_file(opt->cert_file, err)) ||
      !(s->key_pem = read_pem_file(opt->key_file, err)))
    return -1;
  return check_key_pair(opt->cert_file, s->cert_pem, opt->key_file, s->key_pem, err);
}

static void free_server(obs_server *s) {
  if (!s)
    return;
  if (s->key_pem)
    OPENSSL_cleanse(s->key_pem, strlen(s->key_pem));
  free(s->key_pem);
  free(s->cert_pem);
  free(s);
}

obs_server *obs_server_start(const server_options *opt, dserr *err) {
  obs_server *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  s->metrics = opt->metrics;
  if (opt->port == 0)
    return s;
  const char *host = opt->bind_address && *opt->bind_address ? opt->bind_address : "0.0.0.0";
  int fd = -1;
  if (opt->port < -1 || opt->port > 65535) {
    dserr_set(err, "invalid port %d: must be between 0 and 65535", opt->port);
    goto fail;
  }
  if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
    dserr_set(err, "libmicrohttpd was built without TLS support");
    goto fail;
  }
  if (load_certificates(s, opt, err) ||
      (fd = open_listener(host, opt->port < 0 ? 0 : opt->port, &s->port, err)) < 0)
    goto fail;
  /* libmicrohttpd may write to a peer that has gone; that must not kill the process. Builds
   * that cannot suppress SIGPIPE per send leave only the process-wide way. */
  if (MHD_is_feature_supported(MHD_FEATURE_AUTOSUPPRESS_SIGPIPE) != MHD_YES)
    signal(SIGPIPE, SIG_IGN);

  atomic_store(&s->starting, 1);
  s->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_TLS | MHD_USE_ERROR_LOG, 0,
                               NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
                               MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_HTTPS_MEM_KEY, s->key_pem,
                               MHD_OPTION_HTTPS_MEM_CERT, s->cert_pem, MHD_OPTION_HTTPS_PRIORITIES,
                               TLS_PRIORITIES, MHD_OPTION_CONNECTION_TIMEOUT,
                               (unsigned)IDLE_TIMEOUT_SECONDS, MHD_OPTION_END);
  atomic_store(&s->starting, 0);
  if (!s->daemon) {
    /* not closed here: libmicrohttpd 0.9.75 closes a given socket when it fails to start
     * (a later version may not; a leaked fd on a fatal error beats closing a reused one) */
    dserr_set(err, "%s", s->start_msg[0] ? s->start_msg : "libmicrohttpd could not start");
    goto fail;
  }
  return s;
fail:
  dserr_prefix(err, "failed to start secure server");
  free_server(s);
  return NULL;
}

int obs_server_port(const obs_server *s) {
  return s && s->daemon ? s->port : 0;
}

void obs_server_stop(obs_server *s) {
  if (!s)
    return;
  if (s->daemon)
    MHD_stop_daemon(s->daemon); /* joins the thread and closes the listening socket */
  free_server(s);
}
