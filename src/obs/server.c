/* server.c - the HTTPS endpoint for /metrics and /healthz; see server.h.
 *
 * libmicrohttpd serves HTTPS from its own polling thread; the handlers only read the metrics
 * registry (which has its own lock) and the immutable server options.
 *
 * The listening socket is ours, with its own accept thread, for three reasons. A bind
 * failure is reported with its errno in Go's words (`listen tcp 127.0.0.1:10258: bind:
 * address already in use`) instead of libmicrohttpd's silent NULL, and the port the OS
 * picked is known. A client speaking plain HTTP gets what Go's net/http TLS server answers
 * (HTTP/1.0 400 `Client sent an HTTP request to an HTTPS server.`) instead of a dropped
 * connection: the accept thread looks at the first bytes and hands only TLS clients (first
 * byte 0x16, a handshake record) to libmicrohttpd with MHD_add_connection. And the same
 * thread checks the certificate files once a second. As Go does for the wildcard 0.0.0.0,
 * the socket is a dual-stack [::] when the host has IPv6.
 *
 * Certificates: given files are checked first, with GnuTLS's x509 functions, as Go's
 * tls.X509KeyPair checks them (libmicrohttpd would reject a bad pair without saying why);
 * without files a self-signed EC P-256 certificate is made in memory with GnuTLS, as the Go
 * server's loopback certificate is never written to disk. GnuTLS is the one crypto library
 * the program's own code calls, as libmicrohttpd serves with it (libcurl, the API client,
 * brings its own). GnuTLS asks for the certificate at every handshake (MHD_OPTION_HTTPS_CERT_CALLBACK),
 * so when the files change (a cert-manager rotation) new connections get the new pair, as
 * with upstream's dynamic serving certificate; a pair that does not load keeps the old one
 * and says why once. The TLS versions, cipher suites and groups are the GnuTLS priority
 * string tlsconfig.c makes of the --tls-* flags; without it, TLS 1.2 is the minimum, as
 * upstream's default --tls-min-version. */
#define _GNU_SOURCE /* accept4, pipe2 */
#include "server.h"

#include "../util/strbuf.h"
#include "log.h"
#include "metrics.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SELF_SIGNED_CN "apiserver-loopback-client"
#define CERT_FILE_MAX (1 << 20)
/* what tls_priorities gives without a --tls-* flag */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define IDLE_TIMEOUT_SECONDS 90 /* the Kubernetes secure server's IdleTimeout */


/* ---- errors ---- */

/* strerror() in Go's spelling (syscall errors start lower case). */
static const char *go_strerror(int errnum, char *buf, size_t n) {
  snprintf(buf, n, "%s", strerror(errnum));
  buf[0] = (char)tolower((unsigned char)buf[0]);
  return buf;
}

/* ---- listening socket ---- */

typedef union {
  struct sockaddr sa;
  struct sockaddr_in in4;
  struct sockaddr_in6 in6;
} any_addr;

/* The files' identity: a rotation replaces a file (new inode, as kubelet's atomic writer
 * swaps a symlink) or rewrites it (new size or mtime). */
typedef struct {
  bool ok;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
} file_id;

#define PENDING_MAX 64
#define SNIFF_SECONDS 10.0   /* a client that sends nothing is dropped after this */
#define LINGER_SECONDS 2.0   /* after the 400, input is drained this long before closing */
#define RELOAD_CHECK_SECONDS 1.0
static const char http_to_https[] =
    "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

typedef struct {
  int fd;
  double deadline;
  bool lingering; /* the 400 is sent; draining until EOF or deadline */
  unsigned char head[5];
  size_t nhead;
  any_addr addr;
  socklen_t addrlen;
} pending_conn;

struct obs_server {
  struct MHD_Daemon *daemon; /* NULL when port 0 asked for no server */
  int port;
  bool metrics;
  int listen_fd;
  int wake[2]; /* written to stop the accept thread */
  pthread_t thread;
  bool thread_started;
  pending_conn pending[PENDING_MAX];
  size_t npending;
  /* given certificate files, re-read when they change (NULL: self-signed, never changes) */
  char *cert_file, *key_file;
  file_id cert_id, key_id;     /* of the pair being served */
  file_id bad_cert, bad_key;   /* of the last pair that failed to load (logged once) */
  double next_check;
  bool serving; /* holds the process's one server slot and its certificates */
  atomic_int starting; /* libmicrohttpd messages during start become the error reason */
  char start_msg[512];
};


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

/* Checks what Go's tls.X509KeyPair checks: a certificate, a key, and that they match (the
 * same public key: its key ID, a hash of it, is the same). */
static int check_key_pair(const char *cert_file, const char *cert_pem, const char *key_file,
                          const char *key_pem, dserr *err) {
  int rc = -1, e;
  gnutls_x509_crt_t cert = NULL;
  gnutls_x509_privkey_t key = NULL;
  gnutls_datum_t cd = {(unsigned char *)cert_pem, (unsigned)strlen(cert_pem)};
  gnutls_datum_t kd = {(unsigned char *)key_pem, (unsigned)strlen(key_pem)};
  if ((e = gnutls_x509_crt_init(&cert)) < 0 ||
      (e = gnutls_x509_crt_import(cert, &cd, GNUTLS_X509_FMT_PEM)) < 0) {
    dserr_set(err, "%s: tls: failed to find any PEM data in certificate input (%s)", cert_file,
              gnutls_strerror(e));
    goto out;
  }
  /* no password: an encrypted key fails instead of asking for one */
  if ((e = gnutls_x509_privkey_init(&key)) < 0 ||
      (e = gnutls_x509_privkey_import2(key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
    dserr_set(err, "%s: tls: failed to find any PEM data in key input (%s)", key_file,
              gnutls_strerror(e));
    goto out;
  }
  unsigned char cert_id[64], key_id[64];
  size_t cert_len = sizeof cert_id, key_len = sizeof key_id;
  if (gnutls_x509_crt_get_key_id(cert, GNUTLS_KEYID_USE_SHA256, cert_id, &cert_len) < 0 ||
      gnutls_x509_privkey_get_key_id(key, GNUTLS_KEYID_USE_SHA256, key_id, &key_len) < 0 ||
      cert_len != key_len || memcmp(cert_id, key_id, cert_len) != 0) {
    dserr_set(err, "%s, %s: tls: private key does not match public key", cert_file, key_file);
    goto out;
  }
  rc = 0;
out:
  if (cert)
    gnutls_x509_crt_deinit(cert);
  if (key)
    gnutls_x509_privkey_deinit(key);
  return rc;
}

/* A heap copy of a GnuTLS datum as a C string (the caller frees it with free). */
static char *datum_string(const gnutls_datum_t *d) {
  char *s = malloc((size_t)d->size + 1);
  if (!s)
    abort();
  memcpy(s, d->data, d->size);
  s[d->size] = 0;
  return s;
}

/* A self-signed serving certificate for localhost/127.0.0.1, valid from an hour ago (clock
 * skew, as client-go's certutil) for a year. Fills heap PEM strings (caller frees). */
static int make_self_signed(char **cert_pem, char **key_pem, dserr *err) {
  static const unsigned char loopback[4] = {127, 0, 0, 1};
  int rc = -1, e;
  gnutls_x509_privkey_t key = NULL;
  gnutls_x509_crt_t cert = NULL;
  gnutls_datum_t cd = {NULL, 0}, kd = {NULL, 0};
  unsigned char serial[16], key_id[64];
  size_t key_id_len = sizeof key_id;
  time_t now = time(NULL);
  /* a positive random serial of 127 bits, as the Go server's */
  if ((e = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial)) < 0)
    goto fail;
  serial[0] = (unsigned char)((serial[0] & 0x7f) | 0x01);
  if ((e = gnutls_x509_privkey_init(&key)) < 0 ||
      (e = gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                        GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0)) < 0 ||
      (e = gnutls_x509_crt_init(&cert)) < 0 || (e = gnutls_x509_crt_set_version(cert, 3)) < 0 ||
      (e = gnutls_x509_crt_set_serial(cert, serial, sizeof serial)) < 0 ||
      (e = gnutls_x509_crt_set_activation_time(cert, now - 3600)) < 0 ||
      (e = gnutls_x509_crt_set_expiration_time(cert, now + 365L * 24 * 3600 - 3600)) < 0 ||
      (e = gnutls_x509_crt_set_dn_by_oid(cert, GNUTLS_OID_X520_COMMON_NAME, 0, SELF_SIGNED_CN,
                                         sizeof SELF_SIGNED_CN - 1)) < 0 ||
      (e = gnutls_x509_crt_set_key(cert, key)) < 0 ||
      /* critical, CA:FALSE; critical digitalSignature; serverAuth */
      (e = gnutls_x509_crt_set_basic_constraints(cert, 0, -1)) < 0 ||
      (e = gnutls_x509_crt_set_key_usage(cert, GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
      (e = gnutls_x509_crt_set_key_purpose_oid(cert, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0 ||
      (e = gnutls_x509_crt_get_key_id(cert, 0, key_id, &key_id_len)) < 0 ||
      (e = gnutls_x509_crt_set_subject_key_id(cert, key_id, key_id_len)) < 0 ||
      (e = gnutls_x509_crt_set_subject_alt_name(cert, GNUTLS_SAN_DNSNAME, "localhost", 9,
                                                GNUTLS_FSAN_APPEND)) < 0 ||
      (e = gnutls_x509_crt_set_subject_alt_name(cert, GNUTLS_SAN_IPADDRESS, loopback,
                                                sizeof loopback, GNUTLS_FSAN_APPEND)) < 0 ||
      (e = gnutls_x509_crt_sign2(cert, cert, key, GNUTLS_DIG_SHA256, 0)) < 0 ||
      (e = gnutls_x509_crt_export2(cert, GNUTLS_X509_FMT_PEM, &cd)) < 0 ||
      (e = gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &kd)) < 0)
    goto fail;
  *cert_pem = datum_string(&cd);
  *key_pem = datum_string(&kd);
  rc = 0;
  goto out;
fail:
  dserr_set(err, "generating a self-signed certificate: %s", gnutls_strerror(e));
out:
  if (kd.data) {
    gnutls_memset(kd.data, 0, kd.size);
    gnutls_free(kd.data);
  }
  gnutls_free(cd.data);
  if (cert)
    gnutls_x509_crt_deinit(cert);
  if (key)
    gnutls_x509_privkey_deinit(key);
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


/* ---- serving certificates: GnuTLS takes the current one at every handshake ---- */

/* One loaded cert/key pair. Generations are never freed while serving: a handshake may
 * still hold the one it was given when a newer one is installed, and certificates change
 * rarely (the list is freed when the server stops). */
#define CHAIN_MAX 16
typedef struct cert_gen {
  gnutls_pcert_st pcerts[CHAIN_MAX];
  unsigned npcerts;
  gnutls_privkey_t key;
  struct cert_gen *older;
} cert_gen;

/* GnuTLS's certificate callback carries no user pointer, so the current generation is
 * process state: one obs_server at a time (obs_server_start refuses a second). */
static pthread_mutex_t g_cert_lock = PTHREAD_MUTEX_INITIALIZER;
static cert_gen *g_cert;
static bool g_serving;

static void cert_gen_free(cert_gen *g) {
  while (g) {
    cert_gen *older = g->older;
    for (unsigned i = 0; i < g->npcerts; i++)
      gnutls_pcert_deinit(&g->pcerts[i]);
    if (g->key)
      gnutls_privkey_deinit(g->key);
    free(g);
    g = older;
  }
}

/* PEM texts (already checked with check_key_pair or made here) into GnuTLS objects. */
static cert_gen *cert_gen_new(const char *cert_pem, const char *key_pem, dserr *err) {
  cert_gen *g = calloc(1, sizeof *g);
  if (!g)
    abort();
  gnutls_datum_t cd = {(unsigned char *)cert_pem, (unsigned)strlen(cert_pem)};
  gnutls_datum_t kd = {(unsigned char *)key_pem, (unsigned)strlen(key_pem)};
  unsigned n = CHAIN_MAX;
  int rc = gnutls_pcert_list_import_x509_raw(g->pcerts, &n, &cd, GNUTLS_X509_FMT_PEM, 0);
  if (rc < 0) {
    dserr_set(err, "certificate: %s", gnutls_strerror(rc));
    free(g);
    return NULL;
  }
  g->npcerts = n;
  if ((rc = gnutls_privkey_init(&g->key)) < 0 ||
      (rc = gnutls_privkey_import_x509_raw(g->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
    dserr_set(err, "private key: %s", gnutls_strerror(rc));
    cert_gen_free(g);
    return NULL;
  }
  return g;
}

static void cert_install(cert_gen *g) {
  pthread_mutex_lock(&g_cert_lock);
  g->older = g_cert;
  g_cert = g;
  pthread_mutex_unlock(&g_cert_lock);
}

static int cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                         const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                         gnutls_pcert_st **pcert, unsigned int *pcert_length,
                         gnutls_privkey_t *key) {
  (void)session, (void)req_ca_dn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
  pthread_mutex_lock(&g_cert_lock);
  cert_gen *g = g_cert;
  pthread_mutex_unlock(&g_cert_lock);
  if (!g)
    return -1;
  *pcert = g->pcerts;
  *pcert_length = g->npcerts;
  *key = g->key;
  return 0;
}

static file_id file_identity(const char *path) {
  struct stat st;
  file_id id = {0};
  if (stat(path, &st) == 0)
    id = (file_id){true, st.st_dev, st.st_ino, st.st_size, st.st_mtim};
  return id;
}

static bool same_file(const file_id *a, const file_id *b) {
  return a->ok == b->ok && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
         a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* ---- the accept loop: plain HTTP gets Go's 400, TLS goes to libmicrohttpd ---- */

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads and checks a pair from the files; a generation ready to install, or NULL with err. */
static cert_gen *load_pair(const char *cert_file, const char *key_file, dserr *err) {
  char *cert = read_pem_file(cert_file, err), *key = NULL;
  cert_gen *g = NULL;
  if (cert && (key = read_pem_file(key_file, err)) &&
      check_key_pair(cert_file, cert, key_file, key, err) == 0) {
    g = cert_gen_new(cert, key, err);
    if (!g)
      dserr_prefix(err, "%s, %s", cert_file, key_file);
  }
  if (key)
    gnutls_memset(key, 0, strlen(key));
  free(key);
  free(cert);
  return g;
}

/* upstream's DynamicServingCertificateController: a changed pair is loaded and used for new
 * connections; a pair that does not load (half written, mismatched) keeps the previous one */
static void maybe_reload(obs_server *s) {
  double now = mono_now();
  if (!s->cert_file || now < s->next_check)
    return;
  s->next_check = now + RELOAD_CHECK_SECONDS;
  file_id c = file_identity(s->cert_file), k = file_identity(s->key_file);
  if (same_file(&c, &s->cert_id) && same_file(&k, &s->key_id))
    return;
  dserr err;
  cert_gen *g = load_pair(s->cert_file, s->key_file, &err);
  char name[1024];
  snprintf(name, sizeof name, "serving-cert::%s::%s", s->cert_file, s->key_file);
  if (!g) {
    if (!same_file(&c, &s->bad_cert) || !same_file(&k, &s->bad_key))
      LOGE(NULL, "Failed to load the changed serving certificate; the previous one is still served",
           err.msg, LSTR("name", name));
    s->bad_cert = c;
    s->bad_key = k;
    return;
  }
  cert_install(g);
  s->cert_id = c;
  s->key_id = k;
  LOGV(2, NULL, "Loaded a new cert/key pair", LSTR("name", name));
}

static void pending_close(obs_server *s, size_t i) {
  close(s->pending[i].fd);
  s->pending[i] = s->pending[--s->npending];
}

/* Go's net/http: a first TLS record header that reads as one of these answers 400. */
static bool looks_like_http(const unsigned char h[5]) {
  static const char *const starts[] = {"GET /", "HEAD ", "POST ", "PUT /", "OPTIO"};
  for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
    if (memcmp(h, starts[i], 5) == 0)
      return true;
  return false;
}

/* Something arrived on pending connection i: hand a TLS client to libmicrohttpd, answer a
 * plain HTTP one, drop anything else. */
static void pending_readable(obs_server *s, size_t i) {
  pending_conn *p = &s->pending[i];
  if (p->lingering) {
    char sink[512];
    ssize_t n = recv(p->fd, sink, sizeof sink, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      pending_close(s, i);
    return;
  }
  if (p->nhead == 0) {
    unsigned char first;
    ssize_t n = recv(p->fd, &first, 1, MSG_PEEK);
    if (n <= 0) {
      if (n == 0 || (errno != EAGAIN && errno != EINTR))
        pending_close(s, i);
      return;
    }
    if (first == 0x16) { /* a TLS handshake record: libmicrohttpd reads it from the start */
      int fd = p->fd;
      any_addr addr = p->addr;
      socklen_t len = p->addrlen;
      s->pending[i] = s->pending[--s->npending];
      if (MHD_add_connection(s->daemon, fd, &addr.sa, len) != MHD_YES)
        LOGV(4, NULL, "HTTPS server", LSTR("message", "could not take a connection"));
      return; /* libmicrohttpd closes fd on failure too */
    }
  }
  ssize_t n = recv(p->fd, p->head + p->nhead, sizeof p->head - p->nhead, 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n > 0)
    p->nhead += (size_t)n;
  if (n > 0 && p->nhead < sizeof p->head)
    return;
  if (p->nhead == sizeof p->head && looks_like_http(p->head)) {
    (void)send(p->fd, http_to_https, sizeof http_to_https - 1, MSG_NOSIGNAL);
    shutdown(p->fd, SHUT_WR);
    p->lingering = true;
    p->deadline = mono_now() + LINGER_SECONDS;
    return;
  }
  LOGV(4, NULL, "HTTPS server",
       LSTR("message", "TLS handshake error: first record does not look like a TLS handshake"));
  pending_close(s, i);
}

static void *accept_loop(void *arg) {
  obs_server *s = arg;
  struct pollfd fds[PENDING_MAX + 2];
  for (;;) {
    maybe_reload(s);
    double now = mono_now(), wait = RELOAD_CHECK_SECONDS;
    for (size_t i = 0; i < s->npending;) {
      if (s->pending[i].deadline <= now) {
        pending_close(s, i);
        continue;
      }
      if (s->pending[i].deadline - now < wait)
        wait = s->pending[i].deadline - now;
      i++;
    }
    size_t n = 0;
    fds[n++] = (struct pollfd){s->wake[0], POLLIN, 0};
    bool room = s->npending < PENDING_MAX;
    fds[n++] = (struct pollfd){room ? s->listen_fd : -1, POLLIN, 0};
    for (size_t i = 0; i < s->npending; i++)
      fds[n++] = (struct pollfd){s->pending[i].fd, POLLIN, 0};
    size_t npoll = s->npending;
    int rc = poll(fds, n, (int)(wait * 1000) + 1);
    if (rc < 0 && errno != EINTR)
      break;
    if (rc <= 0)
      continue;
    if (fds[0].revents)
      break;
    /* pending connections first (their indexes move as entries are removed: go backwards) */
    for (size_t k = npoll; k-- > 0;)
      if (fds[2 + k].revents)
        pending_readable(s, k);
    if (room && (fds[1].revents & POLLIN)) {
      pending_conn *p = &s->pending[s->npending];
      p->addrlen = sizeof p->addr;
      int fd = accept4(s->listen_fd, &p->addr.sa, &p->addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        p->fd = fd;
        p->deadline = mono_now() + SNIFF_SECONDS;
        p->lingering = false;
        p->nhead = 0;
        s->npending++;
      }
    }
  }
  return NULL;
}

/* libmicrohttpd's messages: while starting they are the error's reason; afterwards (mostly
 * TLS handshake failures) they are debug output, as the Go server's handshake errors. */
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

/* The first generation: the given files, or a self-signed certificate made in memory. */
static int load_certificates(obs_server *s, const server_options *opt, dserr *err) {
  if (!opt->cert_file && !opt->key_file) {
    char *cert = NULL, *key = NULL;
    if (make_self_signed(&cert, &key, err) < 0)
      return -1;
    cert_gen *g = cert_gen_new(cert, key, err);
    gnutls_memset(key, 0, strlen(key));
    free(key);
    free(cert);
    if (!g)
      return dserr_prefix(err, "self-signed certificate");
    cert_install(g);
    return 0;
  }
  if (!opt->cert_file || !opt->key_file)
    return dserr_set(err, "--tls-cert-file and --tls-private-key-file must be given together");
  s->cert_file = strdup(opt->cert_file);
  s->key_file = strdup(opt->key_file);
  if (!s->cert_file || !s->key_file)
    abort();
  s->cert_id = file_identity(s->cert_file);
  s->key_id = file_identity(s->key_file);
  cert_gen *g = load_pair(s->cert_file, s->key_file, err);
  if (!g)
    return -1;
  cert_install(g);
  s->next_check = mono_now() + RELOAD_CHECK_SECONDS;
  return 0;
}

static void free_server(obs_server *s) {
  if (!s)
    return;
  free(s->cert_file);
  free(s->key_file);
  free(s);
}

obs_server *obs_server_start(const server_options *opt, dserr *err) {
  obs_server *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  s->metrics = opt->metrics;
  s->listen_fd = s->wake[0] = s->wake[1] = -1;
  if (opt->port == 0)
    return s;
  const char *host = opt->bind_address && *opt->bind_address ? opt->bind_address : "0.0.0.0";
  if (opt->port < -1 || opt->port > 65535) {
    dserr_set(err, "invalid port %d: must be between 0 and 65535", opt->port);
    goto fail;
  }
  if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
    dserr_set(err, "libmicrohttpd was built without TLS support");
    goto fail;
  }
  pthread_mutex_lock(&g_cert_lock);
  bool busy = g_serving;
  g_serving = true;
  pthread_mutex_unlock(&g_cert_lock);
  if (busy) {
    free_server(s);
    dserr_set(err, "failed to start secure server: a server is already running in this process");
    return NULL;
  }
  s->serving = true;
  if (load_certificates(s, opt, err) ||
      (s->listen_fd = open_listener(host, opt->port < 0 ? 0 : opt->port, &s->port, err)) < 0)
    goto fail;
  /* libmicrohttpd may write to a peer that has gone; that must not kill the process. Builds
   * that cannot suppress SIGPIPE per send leave only the process-wide way. */
  if (MHD_is_feature_supported(MHD_FEATURE_AUTOSUPPRESS_SIGPIPE) != MHD_YES)
    signal(SIGPIPE, SIG_IGN);

  atomic_store(&s->starting, 1);
  s->daemon = MHD_start_daemon(
      MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_TLS | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET |
          MHD_USE_ITC,
      0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
      MHD_OPTION_HTTPS_CERT_CALLBACK, cert_callback, MHD_OPTION_HTTPS_PRIORITIES,
      opt->tls_priorities ? opt->tls_priorities : TLS_PRIORITIES,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_SECONDS, MHD_OPTION_END);
  atomic_store(&s->starting, 0);
  if (!s->daemon) {
    dserr_set(err, "%s", s->start_msg[0] ? s->start_msg : "libmicrohttpd could not start");
    goto fail;
  }
  if (pipe2(s->wake, O_CLOEXEC) != 0 ||
      pthread_create(&s->thread, NULL, accept_loop, s) != 0) {
    dserr_set(err, "cannot start the accept thread");
    goto fail;
  }
  s->thread_started = true;
  return s;
fail:
  dserr_prefix(err, "failed to start secure server");
  obs_server_stop(s);
  return NULL;
}

int obs_server_port(const obs_server *s) {
  return s && s->daemon ? s->port : 0;
}

void obs_server_stop(obs_server *s) {
  if (!s)
    return;
  if (s->thread_started) {
    (void)!write(s->wake[1], "x", 1);
    pthread_join(s->thread, NULL);
  }
  while (s->npending)
    pending_close(s, s->npending - 1);
  if (s->daemon)
    MHD_stop_daemon(s->daemon); /* joins its thread and closes the connections it took */
  if (s->listen_fd >= 0)
    close(s->listen_fd);
  for (int i = 0; i < 2; i++)
    if (s->wake[i] >= 0)
      close(s->wake[i]);
  if (s->serving) {
    pthread_mutex_lock(&g_cert_lock);
    cert_gen *all = g_cert;
    g_cert = NULL;
    g_serving = false;
    pthread_mutex_unlock(&g_cert_lock);
    cert_gen_free(all);
  }
  free_server(s);
}
