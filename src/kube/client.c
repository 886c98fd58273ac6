/* client.c - the Kubernetes REST client over one libcurl easy handle; see client.h.
 *
 * One easy handle per client: libcurl keeps its connection cache in the handle, so
 * consecutive requests reuse the keep-alive connection (TLS session included). The TLS
 * settings (CA, client certificate, verification) are set once; every request sets its
 * method, URL, body and headers.
 *
 * Credentials are resolved just before each attempt: a token file is re-read when its
 * inode, size or mtime changed (kubelet rotates projected service-account tokens by swapping
 * a symlink), an exec plugin is re-run when its credential has expired, and once more after
 * a 401. The Authorization header is built into a buffer that is wiped after the request;
 * the token is never part of a log line or an error message (verbose logs print
 * `Authorization: Bearer <masked>` as client-go does).
 *
 * Retries follow client-go's rest.Request: a 429 or 5xx response carrying an integer
 * Retry-After is retried after that many seconds, at most 10 times, each attempt going
 * through the rate limiter again. Transport errors are returned, not retried (libcurl does
 * retry a request once on a fresh connection when a reused one turns out to be dead). */
#define _GNU_SOURCE /* explicit_bzero */
#include "client.h"

#include "../obs/log.h"
#include "../util/arena.h"
#include "../doc/doc.h"
#include "../doc/doc_pb.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"

#include "../util/xalloc.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define KUBE_DEFAULT_QPS 5.0
#define KUBE_DEFAULT_BURST 10
#define KUBE_MAX_RETRIES 10 /* client-go's rest.Request maxRetries */
#define KUBE_CONNECT_TIMEOUT_S 30
#define KUBE_REQUEST_TIMEOUT_S 60
#define KUBE_EXEC_OUTPUT_MAX (4u << 20)
#define KUBE_USER_AGENT "descheduler (linux) kube-client/libcurl"

struct kube_client {
  CURL *curl;
  char errbuf[CURL_ERROR_SIZE];
  char *server;   /* as configured: used in messages and logs */
  char *url_base; /* where requests go: differs from server with tls-server-name */
  char *authority;
  struct curl_slist *connect_to; /* tls-server-name: connect to the real host */
  char *host_header;
  long timeout_ms; /* 0: none */
  long connections;
  double waited; /* seconds in curl_easy_perform, all requests (kube_client_waited) */

  /* bearer token sources, in client-go's order: token file (when readable), static token */
  char *static_token;
  char *token_file;
  char *file_token;
  struct stat file_st;
  bool file_seen, file_err_logged;

  /* exec credential plugin */
  char **exec_argv, **exec_env;
  int64_t exec_timeout_ns;
  char *exec_api_version;
  char *exec_info; /* KUBERNETES_EXEC_INFO */
  char *exec_token;
  bool exec_have;
  int64_t exec_expiry; /* seconds since the epoch; 0 = never expires */
  bool cfg_has_cert;   /* a configured client certificate wins over the plugin's */
  char *exec_cert, *exec_key;

  /* token bucket */
  double qps, tokens;
  int burst;
  struct timespec last;

  /* the response being read */
  strbuf body;
  /* kube_stream: a 200 body goes to the function as it arrives instead of into body */
  kube_stream_fn stream_fn;
  void *stream_ctx;
  volatile int *stream_abort;
  bool stream_failed; /* the function asked to stop */
  bool stream_opened; /* the function was told the answer is 200 */

  /* kube_client_set_gate */
  kube_send_gate gate;
  void *gate_ctx;
  const char *gate_method; /* of the request being sent */
  bool gate_refused;       /* the gate refused it: gate_why says why */
  char gate_why[512];
};

/* ---------- helpers ---------- */

static void wipe_free(char *s) {
  if (s) {
    explicit_bzero(s, strlen(s));
    free(s);
  }
}

static char **strv_dup(char **v) {
  if (!v)
    return NULL;
  size_t n = 0;
  while (v[n])
    n++;
  char **d = calloc(n + 1, sizeof *d);
  if (!d)
    abort();
  for (size_t i = 0; i < n; i++)
    d[i] = xstrdup(v[i]);
  return d;
}

static void strv_free(char **v) {
  if (!v)
    return;
  for (char **p = v; *p; p++)
    wipe_free(*p);
  free(v);
}

static const char *go_strerror(int e) {
  static __thread char buf[128];
  snprintf(buf, sizeof buf, "%s", strerror(e));
  buf[0] = (char)tolower((unsigned char)buf[0]);
  return buf;
}

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_seconds(double s) {
  if (s <= 0)
    return;
  log_flush();
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* Go's url.Error Op: "Get", "Post", "Patch"... */
static void go_method_op(char *out, size_t cap, const char *method) {
  size_t i = 0;
  for (; method[i] && i + 1 < cap; i++)
    out[i] = (char)(i == 0 ? toupper((unsigned char)method[i]) : tolower((unsigned char)method[i]));
  out[i] = 0;
}

/* Header values must not carry control characters (Go refuses them too). */
static bool header_value_ok(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return false;
  return true;
}

static char *trim_dup(const char *s, size_t len) {
  size_t b = 0, e = len;
  while (b < e && isspace((unsigned char)s[b]))
    b++;
  while (e > b && isspace((unsigned char)s[e - 1]))
    e--;
  char *d = malloc(e - b + 1);
  if (!d)
    abort();
  memcpy(d, s + b, e - b);
  d[e - b] = 0;
  return d;
}

static const char *http_status_text(long code) {
  switch (code) {
  case 200: return "OK";
  case 201: return "Created";
  case 202: return "Accepted";
  case 204: return "No Content";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 409: return "Conflict";
  case 410: return "Gone";
  case 415: return "Unsupported Media Type";
  case 422: return "Unprocessable Entity";
  case 413: return "Request Entity Too Large";
  case 429: return "Too Many Requests";
  case 500: return "Internal Server Error";
  case 502: return "Bad Gateway";
  case 503: return "Service Unavailable";
  case 504: return "Gateway Timeout";
  }
  return "";
}

/* ---------- base64 (for KUBERNETES_EXEC_INFO's certificate-authority-data) ---------- */

static void b64_encode(strbuf *sb, const unsigned char *p, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)p[i] << 16;
    if (i + 1 < n)
      v |= (unsigned)p[i + 1] << 8;
    if (i + 2 < n)
      v |= p[i + 2];
    sb_appendc(sb, tab[v >> 18 & 63]);
    sb_appendc(sb, tab[v >> 12 & 63]);
    sb_appendc(sb, i + 1 < n ? tab[v >> 6 & 63] : '=');
    sb_appendc(sb, i + 2 < n ? tab[v & 63] : '=');
  }
}

/* ---------- rate limiter: golang.org/x/time/rate as client-go's token bucket uses it ---------- */

static void rate_wait(kube_client *c) {
  double now = mono_now();
  double last = (double)c->last.tv_sec + (double)c->last.tv_nsec / 1e9;
  c->tokens += (now - last) * c->qps;
  if (c->tokens > c->burst)
    c->tokens = c->burst;
  c->last.tv_sec = (time_t)now;
  c->last.tv_nsec = (long)((now - (double)(time_t)now) * 1e9);
  c->tokens -= 1; /* reserve; a negative balance is paid by waiting */
  if (c->tokens < 0)
    sleep_seconds(-c->tokens / c->qps);
}

/* ---------- token file ---------- */

static bool same_file_state(const struct stat *a, const struct stat *b) {
  return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Re-reads the token file when it changed. On failure keeps the previous token and logs
 * once per change (client-go: "Unable to rotate token"). Returns 0 when a token is known. */
static int token_file_refresh(kube_client *c, dserr *err) {
  struct stat st;
  char why[512] = "";
  if (stat(c->token_file, &st) != 0) {
    snprintf(why, sizeof why, "open %s: %s", c->token_file, go_strerror(errno));
  } else if (c->file_seen && same_file_state(&st, &c->file_st)) {
    return 0;
  } else {
    FILE *f = fopen(c->token_file, "rb");
    if (!f) {
      snprintf(why, sizeof why, "open %s: %s", c->token_file, go_strerror(errno));
    } else {
      strbuf sb = {0};
      char chunk[4096];
      size_t n;
      while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && sb.len < (1u << 20))
        sb_appendn(&sb, chunk, n);
      int rerr = ferror(f) ? errno : 0;
      fclose(f);
      char *tok = rerr ? NULL : trim_dup(sb_str(&sb), sb.len);
      if (sb.buf)
        explicit_bzero(sb.buf, sb.len);
      sb_free(&sb);
      c->file_st = st;
      c->file_seen = true;
      if (rerr)
        snprintf(why, sizeof why, "read %s: %s", c->token_file, go_strerror(rerr));
      else if (!*tok)
        snprintf(why, sizeof why, "read empty token from file \"%s\"", c->token_file);
      else if (!header_value_ok(tok))
        snprintf(why, sizeof why, "token file \"%s\" holds control characters", c->token_file);
      if (why[0]) {
        wipe_free(tok);
      } else {
        wipe_free(c->file_token);
        c->file_token = tok;
        c->file_err_logged = false;
      }
    }
  }
  if (why[0]) {
    if (!c->file_token && !c->static_token)
      return dserr_set(err, "%s", why);
    if (!c->file_err_logged)
      log_writef('E', 0, __FILE__, __LINE__, "Unable to rotate token: %s", why);
    c->file_err_logged = true;
  }
  return 0;
}

/* ---------- exec credential plugin ---------- */

static char **exec_envp(kube_client *c) {
  size_t n = 0, m = 0;
  while (environ[n])
    n++;
  while (c->exec_env && c->exec_env[m])
    m++;
  char **envp = calloc(n + m + 2, sizeof *envp);
  if (!envp)
    abort();
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const char *eq = strchr(environ[i], '=');
    size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
    bool overridden = strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) == 0;
    for (size_t j = 0; j < m && !overridden; j++)
      overridden = strncmp(c->exec_env[j], environ[i], nl) == 0 && c->exec_env[j][nl] == '=';
    if (!overridden)
      envp[k++] = environ[i];
  }
  for (size_t j = 0; j < m; j++)
    envp[k++] = c->exec_env[j];
  envp[k++] = c->exec_info;
  envp[k] = NULL;
  return envp;
}

/* Runs the plugin and reads its ExecCredential. Messages are client-go's (without the
 * "getting credentials: " prefix the caller adds). */
static int exec_run(kube_client *c, dserr *err) {
  const char *cmd = c->exec_argv[0];
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return dserr_set(err, "exec: pipe: %s", go_strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  char **envp = exec_envp(c);
  pid_t pid;
  int rc = posix_spawnp(&pid, cmd, &fa, NULL, c->exec_argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  free(envp);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    if (rc == ENOENT)
      return dserr_set(err, "exec: executable %s not found", cmd);
    return dserr_set(err, "exec: fork/exec %s: %s", cmd, go_strerror(rc));
  }
  strbuf out = {0};
  char chunk[4096];
  /* client-go waits for a plugin for ever; a hung plugin would stop the descheduler without
   * a word, so it gets exec_timeout_ns to print its credential and exit, then SIGKILL */
  double deadline = mono_now() + (double)c->exec_timeout_ns / 1e9;
  bool timed_out = false;
  for (;;) {
    int left_ms = (int)((deadline - mono_now()) * 1000);
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int pr = poll(&pfd, 1, left_ms);
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr == 0) {
      timed_out = true;
      break;
    }
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    if (out.len < KUBE_EXEC_OUTPUT_MAX)
      sb_appendn(&out, chunk, (size_t)n);
  }
  close(fds[0]);
  int status = 0;
  if (timed_out)
    kill(pid, SIGKILL);
  /* the output has ended; a plugin that lingers after closing it gets the rest of the time */
  while (!timed_out) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR))
      break;
    if (mono_now() >= deadline) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    sleep_seconds(0.01);
  }
  if (timed_out)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
      ;
  explicit_bzero(chunk, sizeof chunk);
  rc = -1;
  if (timed_out) {
    strbuf limit = {0};
    duration_format(&limit, c->exec_timeout_ns);
    dserr_set(err,
              "exec: executable %s did not exit within %s (killed; a credential plugin must "
              "print its ExecCredential and exit, see --client-connection-exec-timeout)",
              cmd, sb_str(&limit));
    sb_free(&limit);
    goto done;
  }
  if (WIFSIGNALED(status)) {
    dserr_set(err, "exec: executable %s failed: signal: %s", cmd, strsignal(WTERMSIG(status)));
    goto done;
  }
  if (WEXITSTATUS(status) != 0) {
    dserr_set(err, "exec: executable %s failed with exit code %d", cmd, WEXITSTATUS(status));
    goto done;
  }
  arena *a = arena_new(4096);
  doc_node *root = NULL;
  dserr perr;
  if (doc_parse_json(a, "exec plugin output", sb_str(&out), out.len, &root, &perr) < 0) {
    dserr_set(err, "decoding stdout: %s", perr.msg);
  } else if (root->type != DOC_MAP) {
    dserr_set(err, "decoding stdout: expected an ExecCredential object, got %s",
              doc_type_name(root->type));
  } else {
    const char *api = doc_str(doc_get(root, "apiVersion"));
    const char *kind = doc_str(doc_get(root, "kind"));
    doc_node *st = doc_get(root, "status");
    const char *token = doc_str(doc_get(st, "token"));
    const char *cert = doc_str(doc_get(st, "clientCertificateData"));
    const char *key = doc_str(doc_get(st, "clientKeyData"));
    const char *exp = doc_str(doc_get(st, "expirationTimestamp"));
    int64_t exp_sec = 0;
    int32_t exp_nsec = 0;
    dserr terr;
    if (!api || strcmp(api, c->exec_api_version) != 0)
      dserr_set(err, "exec plugin is configured to use API version %s, plugin returned version %s",
                c->exec_api_version, api ? api : "");
    else if (!kind || strcmp(kind, "ExecCredential") != 0)
      dserr_set(err, "decoding stdout: kind is \"%s\", expected ExecCredential", kind ? kind : "");
    else if (!st || st->type != DOC_MAP)
      dserr_set(err, "exec plugin didn't return a status field");
    else if ((!token || !*token) && (!cert || !*cert) && (!key || !*key))
      dserr_set(err, "exec plugin didn't return a token or cert/key pair");
    else if ((!cert || !*cert) != (!key || !*key))
      dserr_set(err, "exec plugin returned only certificate or key, not both");
    else if (token && !header_value_ok(token))
      dserr_set(err, "exec plugin returned a token with control characters");
    else if (exp && time_parse_rfc3339(exp, &exp_sec, &exp_nsec, &terr) < 0)
      dserr_set(err, "decoding stdout: status.expirationTimestamp: %s", terr.msg);
    else {
      wipe_free(c->exec_token);
      c->exec_token = token && *token ? xstrdup(token) : NULL;
      if (!c->cfg_has_cert && cert && *cert) {
        wipe_free(c->exec_cert);
        wipe_free(c->exec_key);
        c->exec_cert = xstrdup(cert);
        c->exec_key = xstrdup(key);
        struct curl_blob cb = {c->exec_cert, strlen(c->exec_cert), CURL_BLOB_COPY};
        struct curl_blob kb = {c->exec_key, strlen(c->exec_key), CURL_BLOB_COPY};
        curl_easy_setopt(c->curl, CURLOPT_SSLCERT_BLOB, &cb);
        curl_easy_setopt(c->curl, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(c->curl, CURLOPT_SSLKEY_BLOB, &kb);
        curl_easy_setopt(c->curl, CURLOPT_SSLKEYTYPE, "PEM");
      }
      c->exec_expiry = exp ? (exp_sec > 0 ? exp_sec : 1) : 0;
      c->exec_have = true;
      rc = 0;
    }
    /* the tree holds the token: wipe the scalars before the arena goes */
    if (token)
      explicit_bzero((char *)token, strlen(token));
    if (key)
      explicit_bzero((char *)key, strlen(key));
  }
  arena_free(a);
done:
  if (out.buf)
    explicit_bzero(out.buf, out.len);
  sb_free(&out);
  return rc;
}

static bool exec_expired(const kube_client *c) {
  return !c->exec_have || (c->exec_expiry && (int64_t)time(NULL) >= c->exec_expiry);
}

/* KUBERNETES_EXEC_INFO as client-go sets it: spec.interactive false; the cluster when the
 * kubeconfig asks for provideClusterInfo. */
static char *exec_info_json(const kube_config *cfg) {
  strbuf sb = {0};
  sb_append(&sb, "KUBERNETES_EXEC_INFO={\"kind\":\"ExecCredential\",\"apiVersion\":");
  sb_append_json_str(&sb, cfg->exec_api_version);
  sb_append(&sb, ",\"spec\":{");
  if (cfg->exec_provide_cluster_info) {
    sb_append(&sb, "\"cluster\":{\"server\":");
    sb_append_json_str(&sb, cfg->server);
    if (cfg->tls_server_name) {
      sb_append(&sb, ",\"tls-server-name\":");
      sb_append_json_str(&sb, cfg->tls_server_name);
    }
    if (cfg->insecure)
      sb_append(&sb, ",\"insecure-skip-tls-verify\":true");
    char *ca = NULL;
    size_t calen = 0;
    if (cfg->ca_data) {
      ca = cfg->ca_data;
      calen = cfg->ca_data_len;
    } else if (cfg->ca_file) {
      FILE *f = fopen(cfg->ca_file, "rb");
      if (f) {
        strbuf cb = {0};
        char chunk[4096];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
          sb_appendn(&cb, chunk, n);
        fclose(f);
        calen = cb.len;
        ca = sb_detach(&cb);
      }
    }
    if (ca && calen) {
      sb_append(&sb, ",\"certificate-authority-data\":\"");
      b64_encode(&sb, (const unsigned char *)ca, calen);
      sb_appendc(&sb, '"');
    }
    if (ca != cfg->ca_data)
      free(ca);
    if (cfg->proxy_url) {
      sb_append(&sb, ",\"proxy-url\":");
      sb_append_json_str(&sb, cfg->proxy_url);
    }
    if (cfg->disable_compression)
      sb_append(&sb, ",\"disable-compression\":true");
    sb_append(&sb, ",\"config\":null},"); /* no exec extension in the cluster entry */
  }
  sb_append(&sb, "\"interactive\":false}}");
  return sb_detach(&sb);
}

/* ---------- construction ---------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  kube_client *c = ud;
  if (c->stream_fn) {
    long code = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
    if (code == 200) {
      if (!c->stream_opened) {
        c->stream_opened = true;
        if (c->stream_fn(c->stream_ctx, NULL, 0) != 0) {
          c->stream_failed = true;
          return 0;
        }
      }
      if (c->stream_fn(c->stream_ctx, p, size * n) != 0) {
        c->stream_failed = true;
        return 0; /* libcurl ends the transfer with CURLE_WRITE_ERROR */
      }
      return size * n;
    }
  }
  sb_appendn(&c->body, p, size * n);
  return size * n;
}

/* kube_stream's way out of a quiet stream: libcurl calls this about once a second */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
  (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
  kube_client *c = ud;
  if (c->stream_fn && !c->stream_opened) {
    long code = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
    if (code == 200) {
      c->stream_opened = true;
      if (c->stream_fn(c->stream_ctx, NULL, 0) != 0) {
        c->stream_failed = true;
        return 1;
      }
    }
  }
  /* the flag is set by another thread (watch_cache_free) */
  return c->stream_abort && __atomic_load_n(c->stream_abort, __ATOMIC_ACQUIRE) ? 1 : 0;
}

/* Splits "https://host:port/prefix" for tls-server-name: requests go to
 * https://<sni>:<port>/prefix, libcurl connects to host:port, the Host header keeps host. */
static int setup_server_name(kube_client *c, const kube_config *cfg, dserr *err) {
  const char *s = cfg->server;
  const char *auth = strstr(s, "://");
  if (!auth)
    return dserr_set(err, "%s: server \"%s\" has no scheme", cfg->source, s);
  auth += 3;
  const char *path = strchr(auth, '/');
  size_t alen = path ? (size_t)(path - auth) : strlen(auth);
  c->authority = strndup(auth, alen);
  if (!cfg->tls_server_name) {
    c->url_base = xstrdup(s);
    return 0;
  }
  bool https = strncmp(s, "https://", 8) == 0;
  const char *host_end = c->authority[0] == '[' ? strchr(c->authority, ']') : NULL;
  const char *colon = strrchr(host_end ? host_end : c->authority, ':');
  char host[512], port[16];
  if (colon) {
    snprintf(host, sizeof host, "%.*s", (int)(colon - c->authority), c->authority);
    snprintf(port, sizeof port, "%s", colon + 1);
  } else {
    snprintf(host, sizeof host, "%s", c->authority);
    snprintf(port, sizeof port, "%s", https ? "443" : "80");
  }
  strbuf sb = {0};
  sb_printf(&sb, "%s://%s:%s%s", https ? "https" : "http", cfg->tls_server_name, port,
            path ? path : "");
  c->url_base = sb_detach(&sb);
  sb_printf(&sb, "%s:%s:%s:%s", cfg->tls_server_name, port, host, port);
  c->connect_to = curl_slist_append(NULL, sb_str(&sb));
  sb_clear(&sb);
  sb_printf(&sb, "Host: %s", c->authority);
  c->host_header = sb_detach(&sb);
  return 0;
}

/* Checks that a file the TLS library will read later can be read now, for a clear error. */
static int check_readable(const char *what, const char *path, dserr *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return dserr_set(err, "%s: open %s: %s", what, path, go_strerror(errno));
  fclose(f);
  return 0;
}

kube_client *kube_client_new(const kube_config *cfg, double qps, int burst, dserr *err) {
  pthread_once(&curl_once, curl_init_once);
  if (!cfg || !cfg->server)
    return dserr_set(err, "kube client: no server configured"), NULL;
  kube_client *c = calloc(1, sizeof *c);
  if (!c)
    abort();
  c->server = xstrdup(cfg->server);
  c->timeout_ms = cfg->timeout_ns < 0    ? 0
                  : cfg->timeout_ns == 0 ? KUBE_REQUEST_TIMEOUT_S * 1000L
                                         : (long)((cfg->timeout_ns + 999999) / 1000000);
  c->qps = qps > 0 ? qps : KUBE_DEFAULT_QPS;
  c->burst = burst > 0 ? burst : KUBE_DEFAULT_BURST;
  c->tokens = c->burst;
  clock_gettime(CLOCK_MONOTONIC, &c->last);
  c->curl = curl_easy_init();
  if (!c->curl) {
    dserr_set(err, "kube client: cannot initialise libcurl");
    goto fail;
  }
  if (setup_server_name(c, cfg, err) < 0)
    goto fail;

  CURL *h = c->curl;
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 1L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)KUBE_CONNECT_TIMEOUT_S);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 30L);
  curl_easy_setopt(h, CURLOPT_USERAGENT, KUBE_USER_AGENT);
  /* a LIST page is megabytes: read it in large pieces (fewer reads, polls and callbacks) */
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 256L * 1024);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
  if (!cfg->disable_compression)
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip");
  if (cfg->proxy_url)
    curl_easy_setopt(h, CURLOPT_PROXY, cfg->proxy_url);
  if (c->connect_to)
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);

  /* TLS: verified unless the kubeconfig says insecure-skip-tls-verify */
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, cfg->insecure ? 0L : 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, cfg->insecure ? 0L : 2L);
  if (cfg->ca_data || cfg->ca_file) {
    /* only the configured CA is trusted, as client-go does: no system directory */
    curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
    if (cfg->ca_data) {
      struct curl_blob b = {cfg->ca_data, cfg->ca_data_len, CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
    } else {
      if (check_readable("certificate-authority", cfg->ca_file, err) < 0)
        goto fail;
      curl_easy_setopt(h, CURLOPT_CAINFO, cfg->ca_file);
    }
  }
  if (cfg->cert_data || cfg->cert_file) {
    c->cfg_has_cert = true;
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    if (cfg->cert_data) {
      struct curl_blob b = {cfg->cert_data, cfg->cert_data_len, CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
    } else {
      if (check_readable("client-certificate", cfg->cert_file, err) < 0)
        goto fail;
      curl_easy_setopt(h, CURLOPT_SSLCERT, cfg->cert_file);
    }
    if (cfg->key_data) {
      struct curl_blob b = {cfg->key_data, cfg->key_data_len, CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
    } else if (cfg->key_file) {
      if (check_readable("client-key", cfg->key_file, err) < 0)
        goto fail;
      curl_easy_setopt(h, CURLOPT_SSLKEY, cfg->key_file);
    } else {
      dserr_set(err, "%s: a client certificate needs a client key", cfg->source);
      goto fail;
    }
  }

  /* credentials */
  if (cfg->token) {
    if (!header_value_ok(cfg->token)) {
      dserr_set(err, "%s: the bearer token holds control characters", cfg->source);
      goto fail;
    }
    c->static_token = xstrdup(cfg->token);
  }
  if (cfg->token_file) {
    c->token_file = xstrdup(cfg->token_file);
    if (token_file_refresh(c, err) < 0)
      goto fail;
  }
  if (cfg->exec_argv && cfg->exec_argv[0] && !c->static_token && !c->token_file) {
    c->exec_argv = strv_dup(cfg->exec_argv);
    c->exec_timeout_ns =
        cfg->exec_timeout_ns > 0 ? cfg->exec_timeout_ns : KUBE_EXEC_TIMEOUT_DEFAULT_NS;
    c->exec_env = strv_dup(cfg->exec_env);
    c->exec_api_version =
        xstrdup(cfg->exec_api_version ? cfg->exec_api_version : "client.authentication.k8s.io/v1");
    c->exec_info = exec_info_json(cfg);
    if (exec_run(c, err) < 0) {
      dserr_prefix(err, "getting credentials");
      goto fail;
    }
  }
  return c;
fail:
  kube_client_free(c);
  return NULL;
}

void kube_client_free(kube_client *c) {
  if (!c)
    return;
  if (c->curl)
    curl_easy_cleanup(c->curl);
  curl_slist_free_all(c->connect_to);
  free(c->server);
  free(c->url_base);
  free(c->authority);
  free(c->host_header);
  wipe_free(c->static_token);
  free(c->token_file);
  wipe_free(c->file_token);
  strv_free(c->exec_argv);
  strv_free(c->exec_env);
  free(c->exec_api_version);
  free(c->exec_info);
  wipe_free(c->exec_token);
  wipe_free(c->exec_cert);
  wipe_free(c->exec_key);
  sb_free(&c->body);
  free(c);
}

const char *kube_client_server(const kube_client *c) {
  return c->server;
}

void kube_client_set_timeout(kube_client *c, long seconds) {
  c->timeout_ms = seconds > 0 ? seconds * 1000 : 0;
}

long kube_client_connections(const kube_client *c) {
  return c->connections;
}

double kube_client_waited(const kube_client *c) {
  return c->waited;
}

/* ---------- one request ---------- */

/* The bearer token for this attempt in *token (borrowed; NULL: none). -1 with err when the
 * credential source fails and no token is known. */
static int current_token(kube_client *c, const char **token, dserr *err) {
  *token = NULL;
  if (c->token_file) {
    if (token_file_refresh(c, err) < 0)
      return -1;
    *token = c->file_token ? c->file_token : c->static_token;
  } else if (c->static_token) {
    *token = c->static_token;
  } else if (c->exec_argv) {
    if (exec_expired(c) && exec_run(c, err) < 0)
      return dserr_prefix(err, "getting credentials");
    *token = c->exec_token;
  }
  return 0;
}

/* The reason part of a transport error, worded like Go's net/http where there is an
 * equivalent. */
static void transport_reason(kube_client *c, CURLcode rc, char *out, size_t cap) {
  long oserr = 0, code = 0;
  char *ip = NULL;
  long port = 0;
  curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &oserr);
  curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_getinfo(c->curl, CURLINFO_PRIMARY_IP, &ip);
  curl_easy_getinfo(c->curl, CURLINFO_PRIMARY_PORT, &port);
  char addr[300];
  if (ip && *ip && port)
    snprintf(addr, sizeof addr, strchr(ip, ':') ? "[%s]:%ld" : "%s:%ld", ip, port);
  else
    snprintf(addr, sizeof addr, "%s", c->authority);
  const char *detail = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
  switch (rc) {
  case CURLE_COULDNT_CONNECT:
    if (oserr)
      snprintf(out, cap, "dial tcp %s: connect: %s", addr, go_strerror((int)oserr));
    else
      snprintf(out, cap, "dial tcp %s: %s", addr, detail);
    break;
  case CURLE_COULDNT_RESOLVE_HOST:
    snprintf(out, cap, "dial tcp: lookup %s: no such host (%s)", c->authority, detail);
    break;
  case CURLE_OPERATION_TIMEDOUT:
    if (code == 0 && !(ip && *ip))
      snprintf(out, cap, "dial tcp %s: i/o timeout", addr);
    else if (code == 0)
      snprintf(out, cap,
               "net/http: request canceled (Client.Timeout exceeded while awaiting headers)");
    else
      snprintf(out, cap,
               "context deadline exceeded (Client.Timeout or context cancellation "
               "while reading body)");
    break;
  case CURLE_PEER_FAILED_VERIFICATION:
    /* Go's x509 wording first (what runbooks grep for), OpenSSL's in parentheses */
    if (strstr(detail, "local issuer") || strstr(detail, "self-signed") ||
        strstr(detail, "self signed") || strstr(detail, "unable to get issuer"))
      snprintf(out, cap,
               "tls: failed to verify certificate: x509: certificate signed by unknown "
               "authority (%s)",
               detail);
    else if (strstr(detail, "subject name") || strstr(detail, "host name"))
      snprintf(out, cap,
               "tls: failed to verify certificate: x509: certificate is not valid for "
               "the server name (%s)",
               detail);
    else if (strstr(detail, "expired") || strstr(detail, "not yet valid"))
      snprintf(out, cap,
               "tls: failed to verify certificate: x509: certificate has expired or is "
               "not yet valid (%s)",
               detail);
    else
      snprintf(out, cap, "tls: failed to verify certificate: %s", detail);
    break;
  case CURLE_SSL_CONNECT_ERROR: snprintf(out, cap, "tls: handshake failure: %s", detail); break;
  case CURLE_SSL_CACERT_BADFILE:
    snprintf(out, cap, "unable to load root certificates: %s", detail);
    break;
  case CURLE_SSL_CERTPROBLEM:
    snprintf(out, cap, "tls: failed to load client certificate: %s", detail);
    break;
  case CURLE_PARTIAL_FILE: snprintf(out, cap, "unexpected EOF (%s)", detail); break;
  case CURLE_GOT_NOTHING: snprintf(out, cap, "EOF"); break;
  case CURLE_RECV_ERROR:
  case CURLE_SEND_ERROR:
    if (oserr == ECONNRESET || strstr(detail, "reset by peer")) {
      char *lip = NULL;
      long lport = 0;
      curl_easy_getinfo(c->curl, CURLINFO_LOCAL_IP, &lip);
      curl_easy_getinfo(c->curl, CURLINFO_LOCAL_PORT, &lport);
      const char *op = rc == CURLE_RECV_ERROR ? "read" : "write";
      if (lip && *lip && lport)
        snprintf(out, cap, "%s tcp %s:%ld->%s: %s: connection reset by peer", op, lip, lport, addr,
                 op);
      else
        snprintf(out, cap, "%s: connection reset by peer", op);
    } else {
      snprintf(out, cap, "%s", detail);
    }
    break;
  default: snprintf(out, cap, "%s", detail);
  }
}

static void log_request_headers(const struct curl_slist *hdrs, const char *method, const char *url,
                                bool curl_cmd) {
  if (curl_cmd) {
    strbuf sb = {0};
    sb_printf(&sb, "curl -v -X%s ", method);
    for (const struct curl_slist *l = hdrs; l; l = l->next) {
      if (strcmp(l->data, "Expect:") == 0)
        continue;
      if (strncasecmp(l->data, "Authorization: Bearer ", 22) == 0)
        sb_append(&sb, " -H \"Authorization: Bearer <masked>\"");
      else
        sb_printf(&sb, " -H \"%s\"", l->data);
    }
    sb_printf(&sb, " -H \"User-Agent: %s\" '%s'", KUBE_USER_AGENT, url);
    LOGF(9, "%s", sb_str(&sb));
    sb_free(&sb);
    return;
  }
  LOGF(7, "%s %s", method, url);
  LOGF(7, "Request Headers:");
  for (const struct curl_slist *l = hdrs; l; l = l->next) {
    if (strcmp(l->data, "Expect:") == 0)
      continue;
    if (strncasecmp(l->data, "Authorization: Bearer ", 22) == 0)
      LOGF(7, "    Authorization: Bearer <masked>");
    else
      LOGF(7, "    %s", l->data);
  }
  LOGF(7, "    User-Agent: %s", KUBE_USER_AGENT);
}

static void log_response_headers(kube_client *c) {
  LOGF(8, "Response Headers:");
  struct curl_header *prev = NULL, *h;
  while ((h = curl_easy_nextheader(c->curl, CURLH_HEADER, -1, prev)) != NULL) {
    LOGF(8, "    %s: %s", h->name, h->value);
    prev = h;
  }
}

/* libcurl's last call before a request leaves: the gate (kube_client_set_gate) may refuse it */
static int on_prereq(void *p, char *primary_ip, char *local_ip, int primary_port, int local_port) {
  (void)primary_ip, (void)local_ip, (void)primary_port, (void)local_port;
  kube_client *c = p;
  if (!c->gate)
    return CURL_PREREQFUNC_OK;
  c->gate_why[0] = 0;
  if (c->gate(c->gate_ctx, c->gate_method, c->gate_why, sizeof c->gate_why))
    return CURL_PREREQFUNC_OK;
  c->gate_refused = true;
  return CURL_PREREQFUNC_ABORT;
}

void kube_client_set_gate(kube_client *c, kube_send_gate gate, void *ctx) {
  c->gate = gate;
  c->gate_ctx = ctx;
  curl_easy_setopt(c->curl, CURLOPT_PREREQFUNCTION, gate ? on_prereq : NULL);
  curl_easy_setopt(c->curl, CURLOPT_PREREQDATA, gate ? (void *)c : NULL);
}

/* One attempt. Returns 0 with *status, or -1 with err (transport failure; *sent says whether
 * the request had left). */
static int perform_once(kube_client *c, const char *method, const char *url, const char *log_url,
                        struct curl_slist *hdrs, const char *body, long *status, bool *sent,
                        dserr *err) {
  CURL *h = c->curl;
  sb_clear(&c->body);
  c->errbuf[0] = 0;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
  curl_easy_setopt(h, CURLOPT_NOBODY, 0L);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
  if (strcmp(method, "HEAD") == 0) {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (body) {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    if (strcmp(method, "POST") != 0)
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  } else {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    if (strcmp(method, "GET") != 0)
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  }
  int v = log_verbosity();
  if (v >= 7)
    log_request_headers(hdrs, method, log_url, v >= 9);
  c->gate_method = method;
  c->gate_refused = false;
  double t0 = mono_now();
  CURLcode rc = curl_easy_perform(h);
  double took = mono_now() - t0;
  c->waited += took;
  long ms = (long)(took * 1000);
  long newconns = 0;
  curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &newconns);
  c->connections += newconns;
  char st[128] = "";
  if (rc == CURLE_OK) {
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    snprintf(st, sizeof st, "%ld %s", *status, http_status_text(*status)); /* Go's resp.Status */
  }
  if (v >= 9 || v == 6)
    LOGF(6, "%s %s %s in %ld milliseconds", method, log_url, st, ms);
  if (v >= 7 && v <= 8)
    LOGF(7, "Response Status: %s in %ld milliseconds", st, ms);
  if (v >= 8 && rc == CURLE_OK)
    log_response_headers(c);
  if (rc != CURLE_OK && c->gate_refused) {
    char op[16];
    go_method_op(op, sizeof op, method);
    *sent = false;
    return dserr_set(err, "%s \"%s\": not sent: %s", op, log_url, c->gate_why);
  }
  if (rc != CURLE_OK) {
    long request_bytes = 0;
    curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &request_bytes);
    *sent = request_bytes > 0;
    char reason[1024], op[16];
    transport_reason(c, rc, reason, sizeof reason);
    go_method_op(op, sizeof op, method);
    return dserr_set(err, "%s \"%s\": %s", op, log_url, reason);
  }
  return 0;
}

/* client-go's checkWait: 429 and 5xx with an integer Retry-After. */
static bool retry_after(kube_client *c, long status, long *seconds) {
  if (status != 429 && status < 500)
    return false;
  struct curl_header *hd = NULL;
  if (curl_easy_header(c->curl, "Retry-After", 0, CURLH_HEADER, -1, &hd) != CURLHE_OK || !hd)
    return false;
  const char *s = hd->value;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end || errno)
    return false;
  *seconds = v;
  return true;
}

static int request_impl(kube_client *c, const char *method, const char *path, const char *accept,
                        const char *content_type, const char *body, kube_response *resp,
                        int max_retries, dserr *err) {
  memset(resp, 0, sizeof *resp);
  strbuf url = {0}, log_url = {0};
  sb_printf(&url, "%s%s", c->url_base, path);
  sb_printf(&log_url, "%s%s", c->server, path);
  char auth[8192];
  int rc = -1;
  bool reran_exec = false;
  for (int attempt = 0;; attempt++) {
    log_flush(); /* held log lines go out before the wait for the server */
    rate_wait(c);
    dserr cerr;
    const char *token;
    if (current_token(c, &token, &cerr) < 0) {
      char op[16];
      go_method_op(op, sizeof op, method);
      dserr_set(err, "%s \"%s\": %s", op, sb_str(&log_url), cerr.msg);
      break;
    }
    char accept_hdr[160];
    snprintf(accept_hdr, sizeof accept_hdr, "Accept: %s",
             accept ? accept : "application/json, */*");
    struct curl_slist *hdrs = curl_slist_append(NULL, accept_hdr);
    if (body) {
      char ct[256];
      snprintf(ct, sizeof ct, "Content-Type: %s", content_type ? content_type : "application/json");
      hdrs = curl_slist_append(hdrs, ct);
    }
    hdrs = curl_slist_append(hdrs, "Expect:");
    if (c->host_header)
      hdrs = curl_slist_append(hdrs, c->host_header);
    if (token) {
      int n = snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
      if (n >= (int)sizeof auth) {
        explicit_bzero(auth, sizeof auth);
        curl_slist_free_all(hdrs);
        char op[16];
        go_method_op(op, sizeof op, method);
        dserr_set(err, "%s \"%s\": the bearer token is longer than %zu bytes", op, sb_str(&log_url),
                  sizeof auth - 23);
        break;
      }
      hdrs = curl_slist_append(hdrs, auth);
      explicit_bzero(auth, sizeof auth);
    }
    long status = 0;
    bool sent = false;
    int prc =
        perform_once(c, method, sb_str(&url), sb_str(&log_url), hdrs, body, &status, &sent, err);
    /* the slist holds a copy of the header: wipe it before it goes */
    for (struct curl_slist *l = hdrs; l; l = l->next)
      if (strncmp(l->data, "Authorization:", 14) == 0)
        explicit_bzero(l->data, strlen(l->data));
    curl_slist_free_all(hdrs);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
    if (prc < 0) {
      resp->maybe_delivered = sent;
      break;
    }
    if (status == 401 && c->exec_argv && !reran_exec) {
      /* client-go refreshes the plugin's credential after a 401; retry once with it */
      reran_exec = true;
      dserr xerr;
      if (exec_run(c, &xerr) == 0) {
        attempt--;
        continue;
      }
      log_writef('E', 0, __FILE__, __LINE__, "refreshing credentials: %s", xerr.msg);
    }
    long wait = 0;
    if (attempt < max_retries && retry_after(c, status, &wait)) {
      LOGF(4, "Got a Retry-After %lds response for attempt %d to %s", wait, attempt + 1,
           sb_str(&log_url));
      sleep_seconds((double)wait);
      continue;
    }
    resp->status = status;
    resp->len = c->body.len;
    resp->cap = c->body.buf ? c->body.cap : 1;
    resp->body = c->body.buf ? sb_detach(&c->body) : xstrdup("");
    rc = 0;
    break;
  }
  sb_clear(&c->body);
  sb_free(&url);
  sb_free(&log_url);
  return rc;
}

int kube_request(kube_client *c, const char *method, const char *path, const char *content_type,
                 const char *body, kube_response *resp, dserr *err) {
  return request_impl(c, method, path, NULL, content_type, body, resp, KUBE_MAX_RETRIES, err);
}

int kube_get_as(kube_client *c, const char *path, const char *accept, kube_response *resp,
                dserr *err) {
  return request_impl(c, "GET", path, accept, NULL, NULL, resp, KUBE_MAX_RETRIES, err);
}

int kube_stream(kube_client *c, const char *path, kube_stream_fn fn, void *ctx, long stall_seconds,
                volatile int *abort_flag, kube_response *resp, dserr *err) {
  CURL *h = c->curl;
  long saved_timeout = c->timeout_ms;
  c->timeout_ms = 0;
  c->stream_fn = fn;
  c->stream_ctx = ctx;
  c->stream_abort = abort_flag;
  c->stream_failed = false;
  c->stream_opened = false;
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, stall_seconds > 0 ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, stall_seconds > 0 ? stall_seconds : 0L);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
  int rc = request_impl(c, "GET", path, NULL, NULL, NULL, resp, 0, err);
  if (rc < 0 && c->stream_failed)
    dserr_set(err, "GET \"%s%s\": the stream was stopped by its reader", c->server, path);
  else if (rc < 0 && abort_flag && *abort_flag)
    dserr_set(err, "GET \"%s%s\": stopped", c->server, path);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 0L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 0L);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 1L);
  c->timeout_ms = saved_timeout;
  c->stream_fn = NULL;
  c->stream_ctx = NULL;
  c->stream_abort = NULL;
  return rc;
}

void kube_response_free(kube_response *r) {
  if (!r)
    return;
  free(r->body);
  r->body = NULL;
  r->len = r->cap = 0;
}

void kube_client_lend_body(kube_client *c, char *buf, size_t cap) {
  if (c->body.buf || !buf || cap == 0) {
    free(buf);
    return;
  }
  c->body.buf = buf;
  c->body.cap = cap;
  sb_clear(&c->body);
}

void kube_status_text(const kube_response *r, char *message, size_t mcap, char *reason,
                      size_t rcap) {
  if (mcap)
    message[0] = 0;
  if (rcap)
    reason[0] = 0;
  if (!r || !r->body || !r->len)
    return;
  arena *a = arena_new(4096);
  doc_node *root = NULL;
  dserr e;
  const char *kind = NULL;
  if (docpb_is_protobuf(r->body, r->len)) {
    /* an answer to a request that accepted protobuf (kube_get_as) */
    if (docpb_parse_object(a, "response", (const uint8_t *)r->body, r->len, "Status", &docpb_status,
                           &root, &e) == 0)
      kind = "Status";
  } else if (doc_parse_json(a, "response", r->body, r->len, &root, &e) == 0) {
    kind = doc_str(doc_get(root, "kind"));
  }
  if (kind && strcmp(kind, "Status") == 0) {
    const char *m = doc_str(doc_get(root, "message"));
    const char *rs = doc_str(doc_get(root, "reason"));
    if (m && mcap)
      snprintf(message, mcap, "%s", m);
    if (rs && rcap)
      snprintf(reason, rcap, "%s", rs);
  }
  arena_free(a);
}

void kube_path_escape(strbuf *sb, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
        strchr("-._~", ch))
      sb_appendc(sb, (char)ch);
    else
      sb_printf(sb, "%%%02X", ch);
  }
}
