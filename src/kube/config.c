/* config.c - kubeconfig files and the in-cluster config; see config.h.
 *
 * A kubeconfig is small: it is parsed whole into a doc tree (libyaml; JSON is YAML too), the
 * current context's cluster and user are found by name, and their fields are copied into a
 * heap kube_config that outlives the tree. Only the entries the current context uses are
 * decoded; the others are checked for a name and nothing more, so a stale entry for another
 * cluster cannot break this one.
 *
 * Errors name the file and the field path as it appears in the file (`users[1].user.token`),
 * never a secret's value: a mistyped token says "expected a string, got an integer", not the
 * number. */
#define _GNU_SOURCE /* explicit_bzero */
#include "config.h"

#include "../obs/log.h"
#include "../util/arena.h"
#include "../doc/doc.h"
#include "../util/strbuf.h"

#include "../util/xalloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define KUBE_FILE_MAX (16u << 20) /* no kubeconfig, key or CA bundle is this large */
#define KUBE_IN_CLUSTER_SOURCE "in-cluster config" /* kube_config.source of the in-cluster config */

static const char *exec_api_versions[] = {"client.authentication.k8s.io/v1",
                                          "client.authentication.k8s.io/v1beta1", NULL};

/* ---------- small helpers ---------- */

/* strerror as Go prints it: "no such file or directory". Thread-unsafe buffer is fine: the
 * text is copied into the message right away. */
static const char *go_strerror(int e) {
  static __thread char buf[128];
  snprintf(buf, sizeof buf, "%s", strerror(e));
  buf[0] = (char)tolower((unsigned char)buf[0]);
  return buf;
}

/* Reads a whole file into a NUL-terminated heap buffer (caller frees). On error fills err
 * with Go's wording: `open /x: no such file or directory`. */
static int read_whole_file(const char *path, char **out, size_t *len, dserr *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return dserr_set(err, "open %s: %s", path, go_strerror(errno));
  strbuf sb = {0};
  char chunk[8192];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    sb_appendn(&sb, chunk, n);
    if (sb.len > KUBE_FILE_MAX) {
      fclose(f);
      sb_free(&sb);
      return dserr_set(err, "read %s: larger than %u bytes", path, KUBE_FILE_MAX);
    }
  }
  int rerr = ferror(f) ? errno : 0;
  fclose(f);
  if (rerr) {
    sb_free(&sb);
    return dserr_set(err, "read %s: %s", path, go_strerror(rerr));
  }
  *len = sb.len;
  *out = sb.buf ? sb_detach(&sb) : xstrdup("");
  return 0;
}

/* Go's filepath.Clean for absolute paths: collapse "//", "." and "..". */
static void path_clean(char *p) {
  char *out = p, *in = p;
  size_t base = 0; /* length of the kept prefix that ".." may not remove */
  if (*in == '/') {
    *out++ = '/';
    in++;
    base = 1;
  }
  while (*in) {
    if (*in == '/') {
      in++;
      continue;
    }
    char *seg = in;
    while (*in && *in != '/')
      in++;
    size_t n = (size_t)(in - seg);
    if (n == 1 && seg[0] == '.')
      continue;
    if (n == 2 && seg[0] == '.' && seg[1] == '.') {
      if ((size_t)(out - p) > base) { /* drop the last segment */
        out--;
        while ((size_t)(out - p) > base && out[-1] != '/')
          out--;
        if ((size_t)(out - p) > base)
          out--; /* its slash */
        continue;
      }
      if (base == 1)
        continue; /* "/.." is "/" */
      /* a relative path keeps leading ".." (not expected here) */
    }
    if ((size_t)(out - p) > base)
      *out++ = '/';
    memmove(out, seg, n);
    out += n;
  }
  if (out == p)
    *out++ = '.';
  *out = 0;
}

/* The absolute, cleaned directory of path (caller frees). */
static char *abs_dir_of(const char *path) {
  strbuf sb = {0};
  if (path[0] != '/') {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
      snprintf(cwd, sizeof cwd, ".");
    sb_printf(&sb, "%s/", cwd);
  }
  sb_append(&sb, path);
  char *s = sb_detach(&sb);
  path_clean(s);
  char *slash = strrchr(s, '/');
  if (slash == s)
    s[1] = 0;
  else if (slash)
    *slash = 0;
  return s;
}

/* filepath.Join(base, rel) for a relative rel, rel itself when absolute. Caller frees. */
static char *resolve_path(const char *base, const char *rel) {
  if (rel[0] == '/')
    return xstrdup(rel);
  strbuf sb = {0};
  sb_printf(&sb, "%s/%s", base, rel);
  char *s = sb_detach(&sb);
  path_clean(s);
  return s;
}

/* ---------- base64 (encoding/json's []byte: StdEncoding, padded, CR and LF ignored) ---------- */

static int b64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

int kube_b64_decode(const char *text, char **out, size_t *outlen, size_t *bad) {
  size_t n = strlen(text);
  unsigned char *buf = xmalloc(n / 4 * 3 + 4);
  size_t o = 0;
  int quad[4];
  size_t q = 0, pad = 0, last_pos = 0, first_pad = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c == '\r' || c == '\n')
      continue;
    last_pos = i;
    if (pad) { /* after '=' only the rest of the padding may follow */
      if (c != '=') {
        free(buf);
        *bad = first_pad;
        return -1;
      }
      pad++;
      q++;
    } else if (c == '=') {
      if (q < 2) {
        free(buf);
        *bad = i;
        return -1;
      }
      pad = 1;
      first_pad = i;
      q++;
    } else {
      int v = b64_value(c);
      if (v < 0) {
        free(buf);
        *bad = i;
        return -1;
      }
      quad[q++] = v;
    }
    if (q == 4) {
      size_t data = 4 - pad;
      buf[o++] = (unsigned char)(quad[0] << 2 | quad[1] >> 4);
      if (data > 2)
        buf[o++] = (unsigned char)(quad[1] << 4 | quad[2] >> 2);
      if (data > 3)
        buf[o++] = (unsigned char)(quad[2] << 6 | quad[3]);
      q = 0;
      if (pad) {
        /* the quantum with padding must be the last one */
        for (size_t j = i + 1; j < n; j++)
          if (text[j] != '\r' && text[j] != '\n') {
            free(buf);
            *bad = j;
            return -1;
          }
        break;
      }
    }
  }
  if (q != 0) { /* an incomplete last quantum: Go reports where it starts, or the end when
                   it has begun its padding */
    free(buf);
    *bad = pad ? n : last_pos + 1 - q;
    return -1;
  }
  buf[o] = 0;
  *out = (char *)buf;
  *outlen = o;
  return 0;
}

/* ---------- PEM sanity checks (the TLS library parses for real when it connects) ---------- */

static bool pem_has_certificate(const char *data) {
  return strstr(data, "-----BEGIN CERTIFICATE-----") != NULL;
}

static bool pem_has_private_key(const char *data) {
  for (const char *p = strstr(data, "-----BEGIN "); p; p = strstr(p + 1, "-----BEGIN ")) {
    const char *eol = strstr(p + 11, "-----");
    if (!eol)
      return false;
    size_t n = (size_t)(eol - p);
    const char *key = memmem(p, n, "PRIVATE KEY", 11);
    if (key && key + 11 == eol)
      return true;
  }
  return false;
}

/* ---------- the decoder state ---------- */

typedef struct {
  const char *file; /* the kubeconfig path as given */
  char *base_dir;   /* absolute directory of the file */
  dserr *err;
} kc_ctx;

/* Message with the file and field: `kubeconfig FILE: FIELD: text`. */
static int kc_fail(kc_ctx *k, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int kc_fail(kc_ctx *k, const char *field, const char *fmt, ...) {
  char text[DSERR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (field && *field)
    return dserr_set(k->err, "kubeconfig %s: %s: %s", k->file, field, text);
  return dserr_set(k->err, "kubeconfig %s: %s", k->file, text);
}

/* An optional string field: absent and null give NULL; "" counts as absent (Go's zero
 * value). Any other type is an error. */
/* "at.key" (or "key" at the top level) for messages. */
static const char *kc_field(char *buf, size_t cap, const char *at, const char *key) {
  if (at && *at)
    snprintf(buf, cap, "%s.%s", at, key);
  else
    snprintf(buf, cap, "%s", key);
  return buf;
}

static int kc_type_fail(kc_ctx *k, const char *at, const char *key, const char *want,
                        const doc_node *v) {
  char f[256];
  return kc_fail(k, kc_field(f, sizeof f, at, key), "expected %s, got %s", want,
                 doc_type_name(v->type));
}

static int kc_str(kc_ctx *k, const doc_node *map, const char *key, const char *at,
                  const char **out) {
  *out = NULL;
  const doc_node *v = doc_get(map, key);
  if (!v || v->type == DOC_NULL)
    return 0;
  if (v->type != DOC_STR)
    return kc_type_fail(k, at, key, "a string", v);
  *out = v->text[0] ? v->text : NULL;
  return 0;
}

static int kc_bool(kc_ctx *k, const doc_node *map, const char *key, const char *at, bool *out) {
  *out = false;
  const doc_node *v = doc_get(map, key);
  if (!v || v->type == DOC_NULL)
    return 0;
  if (v->type != DOC_BOOL)
    return kc_type_fail(k, at, key, "a boolean", v);
  *out = v->v.b != 0;
  return 0;
}

/* A map-valued field (absent/null: NULL). */
static int kc_map(kc_ctx *k, const doc_node *map, const char *key, const char *at,
                  const doc_node **out) {
  *out = NULL;
  const doc_node *v = doc_get(map, key);
  if (!v || v->type == DOC_NULL)
    return 0;
  if (v->type != DOC_MAP)
    return kc_type_fail(k, at, key, "a map", v);
  *out = v;
  return 0;
}

/* Finds the entry called name in one of the top-level lists (clusters, contexts, users):
 * every entry must be a map with a string name, names must be unique. *index is -1 when
 * no entry has that name. inner is "cluster", "context" or "user". */
static int kc_find(kc_ctx *k, const doc_node *root, const char *list, const char *inner,
                   const char *name, int *index, const doc_node **body) {
  *index = -1;
  *body = NULL;
  const doc_node *seq = doc_get(root, list);
  if (!seq || seq->type == DOC_NULL)
    return 0;
  if (seq->type != DOC_SEQ)
    return kc_type_fail(k, NULL, list, "a list", seq);
  for (size_t i = 0; i < seq->n; i++) {
    char at[64], f[96];
    snprintf(at, sizeof at, "%s[%zu]", list, i);
    const doc_node *item = seq->items[i];
    if (item->type != DOC_MAP)
      return kc_fail(k, at, "expected a map, got %s", doc_type_name(item->type));
    const char *n;
    if (kc_str(k, item, "name", at, &n) < 0)
      return -1;
    if (!n)
      continue; /* nameless entries cannot be referred to */
    for (size_t j = 0; j < i; j++) {
      const char *prev = doc_str(doc_get(seq->items[j], "name"));
      if (prev && strcmp(prev, n) == 0)
        return kc_fail(k, kc_field(f, sizeof f, at, "name"), "duplicate name \"%s\" (also %s[%zu])",
                       n, list, j);
    }
    if (name && strcmp(n, name) == 0) {
      *index = (int)i;
      if (kc_map(k, item, inner, at, body) < 0)
        return -1;
    }
  }
  return 0;
}

/* Reads a file the kubeconfig refers to, resolved against its directory. *resolved and
 * *data are heap (caller frees; data may be NULL when not wanted). */
static int kc_read_ref(kc_ctx *k, const char *field, const char *rel, char **resolved,
                       char **data) {
  *resolved = resolve_path(k->base_dir, rel);
  char *buf = NULL;
  size_t len = 0;
  dserr e;
  if (read_whole_file(*resolved, &buf, &len, &e) < 0)
    return kc_fail(k, field, "%s", e.msg);
  if (data)
    *data = buf;
  else {
    explicit_bzero(buf, len);
    free(buf);
  }
  return 0;
}

/* A *-data field: base64 text decoded into heap bytes. */
static int kc_data(kc_ctx *k, const char *field, const char *text, char **out, size_t *len) {
  size_t bad = 0;
  if (kube_b64_decode(text, out, len, &bad) < 0)
    return kc_fail(k, field, "illegal base64 data at input byte %zu", bad);
  return 0;
}

/* ---------- cluster ---------- */

static int kc_cluster(kc_ctx *k, const doc_node *c, int idx, kube_config *cfg) {
  char at[64];
  snprintf(at, sizeof at, "clusters[%d].cluster", idx);
  char field[128];
  const char *server, *ca, *ca_data, *sni, *proxy;
  if (kc_str(k, c, "server", at, &server) < 0 ||
      kc_str(k, c, "certificate-authority", at, &ca) < 0 ||
      kc_str(k, c, "certificate-authority-data", at, &ca_data) < 0 ||
      kc_str(k, c, "tls-server-name", at, &sni) < 0 || kc_str(k, c, "proxy-url", at, &proxy) < 0 ||
      kc_bool(k, c, "insecure-skip-tls-verify", at, &cfg->insecure) < 0 ||
      kc_bool(k, c, "disable-compression", at, &cfg->disable_compression) < 0)
    return -1;
  if (!server)
    return kc_fail(k, kc_field(field, sizeof field, at, "server"),
                   "not set (the cluster has no server defined)");
  if (ca && ca_data)
    return kc_fail(k, at,
                   "certificate-authority and certificate-authority-data are both set; "
                   "keep one");
  if (cfg->insecure && (ca || ca_data))
    return kc_fail(k, at,
                   "insecure-skip-tls-verify is set together with a certificate authority: "
                   "specifying a root certificates file with the insecure flag is not allowed");
  if (ca_data) {
    snprintf(field, sizeof field, "%s.certificate-authority-data", at);
    if (kc_data(k, field, ca_data, &cfg->ca_data, &cfg->ca_data_len) < 0)
      return -1;
    if (!pem_has_certificate(cfg->ca_data))
      return kc_fail(k, field, "no PEM certificate found in the decoded data");
  }
  if (ca) {
    snprintf(field, sizeof field, "%s.certificate-authority", at);
    char *data = NULL;
    if (kc_read_ref(k, field, ca, &cfg->ca_file, &data) < 0)
      return -1;
    bool ok = pem_has_certificate(data);
    free(data);
    if (!ok)
      return kc_fail(k, field, "%s: no PEM certificate found", cfg->ca_file);
  }
  /* client-go's DefaultServerURL: a server without a scheme gets https when TLS is configured */
  const char *scheme = strstr(server, "://");
  strbuf sb = {0};
  if (!scheme)
    sb_append(&sb, (ca || ca_data || cfg->insecure) ? "https://" : "http://");
  else if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
    return kc_fail(k, kc_field(field, sizeof field, at, "server"),
                   "unsupported scheme in \"%s\" (expected https:// or http://)", server);
  sb_append(&sb, server);
  while (sb.len > 0 && sb.buf[sb.len - 1] == '/')
    sb.buf[--sb.len] = 0;
  cfg->server = sb_detach(&sb);
  cfg->tls_server_name = xstrdup(sni);
  cfg->proxy_url = xstrdup(proxy);
  return 0;
}

/* ---------- user ---------- */

static int kc_exec(kc_ctx *k, const doc_node *ex, const char *at, kube_config *cfg) {
  const char *cmd, *api, *mode;
  if (kc_str(k, ex, "command", at, &cmd) < 0 || kc_str(k, ex, "apiVersion", at, &api) < 0 ||
      kc_str(k, ex, "interactiveMode", at, &mode) < 0 ||
      kc_bool(k, ex, "provideClusterInfo", at, &cfg->exec_provide_cluster_info) < 0)
    return -1;
  char field[160];
  if (!cmd) {
    snprintf(field, sizeof field, "%s.command", at);
    return kc_fail(k, field, "not set (the exec credential plugin needs a command)");
  }
  snprintf(field, sizeof field, "%s.apiVersion", at);
  if (!api)
    return kc_fail(k, field, "not set (expected %s or %s)", exec_api_versions[0],
                   exec_api_versions[1]);
  bool known = false;
  for (const char **v = exec_api_versions; *v; v++)
    known |= strcmp(*v, api) == 0;
  if (!known)
    return kc_fail(k, field, "exec plugin: invalid apiVersion \"%s\" (expected %s or %s)", api,
                   exec_api_versions[0], exec_api_versions[1]);
  snprintf(field, sizeof field, "%s.interactiveMode", at);
  if (!mode && strcmp(api, exec_api_versions[0]) == 0)
    return kc_fail(k, field, "not set (required by %s; use Never or IfAvailable)", api);
  if (mode && strcmp(mode, "Never") != 0 && strcmp(mode, "IfAvailable") != 0) {
    if (strcmp(mode, "Always") == 0)
      return kc_fail(k, field,
                     "Always: exec plugin cannot support interactive mode: the descheduler "
                     "never gives a plugin its standard input");
    return kc_fail(k, field, "invalid value \"%s\" (expected Never, IfAvailable or Always)", mode);
  }

  const doc_node *args = doc_get(ex, "args"), *env = doc_get(ex, "env");
  if (args && args->type != DOC_NULL && args->type != DOC_SEQ)
    return kc_type_fail(k, at, "args", "a list", args);
  if (env && env->type != DOC_NULL && env->type != DOC_SEQ)
    return kc_type_fail(k, at, "env", "a list", env);
  size_t nargs = args && args->type == DOC_SEQ ? args->n : 0;
  size_t nenv = env && env->type == DOC_SEQ ? env->n : 0;

  cfg->exec_argv = calloc(nargs + 2, sizeof(char *));
  cfg->exec_env = calloc(nenv + 1, sizeof(char *));
  if (!cfg->exec_argv || !cfg->exec_env)
    abort();
  /* kubectl resolves a command with a path separator against the kubeconfig's directory and
   * looks a bare name up in $PATH */
  cfg->exec_argv[0] = strchr(cmd, '/') ? resolve_path(k->base_dir, cmd) : xstrdup(cmd);
  for (size_t i = 0; i < nargs; i++) {
    const doc_node *a = args->items[i];
    if (a->type != DOC_STR) {
      char key[32];
      snprintf(key, sizeof key, "args[%zu]", i);
      return kc_type_fail(k, at, key, "a string", a);
    }
    cfg->exec_argv[i + 1] = xstrdup(a->text);
  }
  for (size_t i = 0; i < nenv; i++) {
    char eat[192];
    snprintf(eat, sizeof eat, "%s.env[%zu]", at, i);
    const doc_node *e = env->items[i];
    if (e->type != DOC_MAP)
      return kc_fail(k, eat, "expected a map with name and value, got %s", doc_type_name(e->type));
    const char *name, *value;
    if (kc_str(k, e, "name", eat, &name) < 0 || kc_str(k, e, "value", eat, &value) < 0)
      return -1;
    if (!name || strchr(name, '='))
      return kc_fail(k, kc_field(field, sizeof field, eat, "name"), "%s",
                     name ? "must not contain '='" : "not set");
    strbuf sb = {0};
    sb_printf(&sb, "%s=%s", name, value ? value : "");
    cfg->exec_env[i] = sb_detach(&sb);
  }
  cfg->exec_api_version = xstrdup(api);
  return 0;
}

static int kc_user(kc_ctx *k, const doc_node *u, int idx, kube_config *cfg) {
  char at[64];
  snprintf(at, sizeof at, "users[%d].user", idx);
  char field[160];
  /* credentials this client cannot use: refuse them rather than connect as someone else */
  static const char *unsupported[] = {"auth-provider", "username",  "password",      "as",
                                      "as-uid",        "as-groups", "as-user-extra", NULL};
  for (const char **f = unsupported; *f; f++) {
    const doc_node *v = doc_get(u, *f);
    if (v && v->type != DOC_NULL && !(v->type == DOC_STR && !v->text[0]) &&
        !((v->type == DOC_SEQ || v->type == DOC_MAP) && v->n == 0))
      return kc_fail(k, kc_field(field, sizeof field, at, *f),
                     "not supported by this descheduler (use a token, a client certificate or "
                     "an exec plugin)");
  }
  const char *token, *token_file, *cert, *cert_data, *key, *key_data;
  const doc_node *ex;
  if (kc_str(k, u, "token", at, &token) < 0 || kc_str(k, u, "tokenFile", at, &token_file) < 0 ||
      kc_str(k, u, "client-certificate", at, &cert) < 0 ||
      kc_str(k, u, "client-certificate-data", at, &cert_data) < 0 ||
      kc_str(k, u, "client-key", at, &key) < 0 ||
      kc_str(k, u, "client-key-data", at, &key_data) < 0 || kc_map(k, u, "exec", at, &ex) < 0)
    return -1;
  if (cert && cert_data)
    return kc_fail(k, at, "client-certificate and client-certificate-data are both set; keep one");
  if (key && key_data)
    return kc_fail(k, at, "client-key and client-key-data are both set; keep one");
  if ((cert || cert_data) && !(key || key_data))
    return kc_fail(k, at, "a client certificate is set without client-key or client-key-data");
  if ((key || key_data) && !(cert || cert_data))
    return kc_fail(k, at,
                   "a client key is set without client-certificate or client-certificate-data");

  if (token) {
    cfg->token = xstrdup(token);
  }
  if (token_file) {
    snprintf(field, sizeof field, "%s.tokenFile", at);
    if (kc_read_ref(k, field, token_file, &cfg->token_file, NULL) < 0)
      return -1;
  }
  if (cert_data) {
    snprintf(field, sizeof field, "%s.client-certificate-data", at);
    if (kc_data(k, field, cert_data, &cfg->cert_data, &cfg->cert_data_len) < 0)
      return -1;
    if (!pem_has_certificate(cfg->cert_data))
      return kc_fail(k, field, "no PEM certificate found in the decoded data");
  }
  if (key_data) {
    snprintf(field, sizeof field, "%s.client-key-data", at);
    if (kc_data(k, field, key_data, &cfg->key_data, &cfg->key_data_len) < 0)
      return -1;
    if (!pem_has_private_key(cfg->key_data))
      return kc_fail(k, field, "no PEM private key found in the decoded data");
  }
  if (cert) {
    snprintf(field, sizeof field, "%s.client-certificate", at);
    char *data = NULL;
    if (kc_read_ref(k, field, cert, &cfg->cert_file, &data) < 0)
      return -1;
    bool ok = pem_has_certificate(data);
    free(data);
    if (!ok)
      return kc_fail(k, field, "%s: no PEM certificate found", cfg->cert_file);
  }
  if (key) {
    snprintf(field, sizeof field, "%s.client-key", at);
    char *data = NULL;
    if (kc_read_ref(k, field, key, &cfg->key_file, &data) < 0)
      return -1;
    bool ok = pem_has_private_key(data);
    explicit_bzero(data, strlen(data));
    free(data);
    if (!ok)
      return kc_fail(k, field, "%s: no PEM private key found", cfg->key_file);
  }
  if (ex) {
    snprintf(field, sizeof field, "%s.exec", at);
    if (kc_exec(k, ex, field, cfg) < 0)
      return -1;
  }
  return 0;
}

/* ---------- kubeconfig ---------- */

/* One kubeconfig file of the ones read: its name and directory (messages, relative paths)
 * and its tree. */
typedef struct {
  kc_ctx k;
  doc_node *root;
} kc_file;

/* Parses path into f (the tree lives in a; the text is wiped once parsed). */
static int kc_parse(arena *a, const char *path, kc_file *f, dserr *err) {
  f->k = (kc_ctx){.file = path, .err = err};
  f->root = NULL;
  char *text = NULL;
  size_t len = 0;
  dserr e;
  if (read_whole_file(path, &text, &len, &e) < 0)
    return dserr_set(err, "kubeconfig %s", e.msg + 5); /* "open X: .." or "read X: .." */
  int rc = doc_parse_yaml(a, path, text, len, &f->root, &e);
  explicit_bzero(text, len);
  free(text);
  if (rc < 0)
    return dserr_set(err, "kubeconfig %s", e.msg);
  f->k.base_dir = abs_dir_of(path);
  if (f->root->type != DOC_MAP && f->root->type != DOC_NULL)
    return kc_fail(&f->k, NULL, "expected a Config (a map), got %s", doc_type_name(f->root->type));
  return 0;
}

/* The entry called name in list, from the first file that has one (kubectl's merge: the first
 * file to define a name wins). *at NULL when no file has it. */
static int kc_find_first(kc_file *files, size_t n, const char *list, const char *inner,
                         const char *name, kc_file **at, int *index, const doc_node **body) {
  *at = NULL;
  *index = -1;
  *body = NULL;
  for (size_t i = 0; i < n; i++) {
    if (kc_find(&files[i].k, files[i].root, list, inner, name, index, body) < 0)
      return -1;
    if (*index >= 0) {
      *at = &files[i];
      return 0;
    }
  }
  return 0;
}

/* The config of the context called context (NULL: the first current-context the files set)
 * from the files, merged as kubectl merges $KUBECONFIG's list. `all` names the files together
 * in messages that are about none of them alone (the one file's name when there is one). */
static int load_kubeconfig(kc_file *files, size_t n, const char *all, const char *context,
                           kube_config *cfg, dserr *err) {
  kc_ctx whole = {.file = all, .err = err};
  const char *current = context;
  for (size_t i = 0; i < n && !current; i++)
    if (kc_str(&files[i].k, files[i].root, "current-context", NULL, &current) < 0)
      return -1;
  if (!current)
    return kc_fail(&whole, "current-context", "not set");
  kc_file *cf, *clf, *uf;
  const doc_node *ctx, *cluster, *user;
  int ci, cli, ui;
  if (kc_find_first(files, n, "contexts", "context", current, &cf, &ci, &ctx) < 0)
    return -1;
  if (!cf) {
    if (context)
      return kc_fail(&whole, NULL, "context \"%s\" (--context) not found in contexts", current);
    return kc_fail(&whole, "current-context", "context \"%s\" not found in contexts", current);
  }
  char at[64], f[96];
  snprintf(at, sizeof at, "contexts[%d].context", ci);
  const char *cluster_name, *user_name;
  if (kc_str(&cf->k, ctx, "cluster", at, &cluster_name) < 0 ||
      kc_str(&cf->k, ctx, "user", at, &user_name) < 0)
    return -1;
  if (!cluster_name)
    return kc_fail(&cf->k, kc_field(f, sizeof f, at, "cluster"), "not set");
  if (kc_find_first(files, n, "clusters", "cluster", cluster_name, &clf, &cli, &cluster) < 0)
    return -1;
  if (!clf)
    return kc_fail(&cf->k, kc_field(f, sizeof f, at, "cluster"),
                   "cluster \"%s\" not found in clusters", cluster_name);
  if (kc_find_first(files, n, "users", "user", user_name, &uf, &ui, &user) < 0)
    return -1;
  if (user_name && !uf)
    return kc_fail(&cf->k, kc_field(f, sizeof f, at, "user"), "user \"%s\" not found in users",
                   user_name);
  if (!cluster) {
    snprintf(f, sizeof f, "clusters[%d].cluster", cli);
    return kc_fail(&clf->k, f, "not set (the cluster has no server defined)");
  }
  if (kc_cluster(&clf->k, cluster, cli, cfg) < 0)
    return -1;
  if (user && kc_user(&uf->k, user, ui, cfg) < 0)
    return -1;
  cfg->source = xstrdup(all);
  return 0;
}

/* Reads the files (all of them must exist) and loads the context from them. */
static int load_files(const char *const *paths, size_t n, const char *context, kube_config *cfg,
                      dserr *err) {
  arena *a = arena_new(16 * 1024);
  kc_file *files = xcalloc(n, sizeof *files);
  strbuf all = {0};
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    sb_printf(&all, i ? ":%s" : "%s", paths[i]);
    rc = kc_parse(a, paths[i], &files[i], err);
  }
  if (rc == 0)
    rc = load_kubeconfig(files, n, sb_str(&all), context, cfg, err);
  for (size_t i = 0; i < n; i++)
    free(files[i].k.base_dir);
  free(files);
  sb_free(&all);
  arena_free(a);
  return rc;
}

/* ---------- in-cluster ---------- */

static int load_in_cluster(kube_config *cfg, dserr *err) {
  const char *host = getenv("KUBERNETES_SERVICE_HOST");
  const char *port = getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    return dserr_set(err, "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                          "KUBERNETES_SERVICE_PORT must be defined");
  const char *dir = getenv(KUBE_SERVICEACCOUNT_DIR_ENV);
  if (!dir || !*dir)
    dir = KUBE_SERVICEACCOUNT_DIR;
  strbuf sb = {0};
  sb_printf(&sb, "%s/token", dir);
  char *token_path = sb_detach(&sb);
  char *token = NULL;
  size_t len = 0;
  if (read_whole_file(token_path, &token, &len, err) < 0) {
    free(token_path);
    return -1;
  }
  /* client-go's file token source trims surrounding white space */
  size_t b = 0, e = len;
  while (b < e && isspace((unsigned char)token[b]))
    b++;
  while (e > b && isspace((unsigned char)token[e - 1]))
    e--;
  cfg->token = xmalloc(e - b + 1);
  memcpy(cfg->token, token + b, e - b);
  cfg->token[e - b] = 0;
  explicit_bzero(token, len);
  free(token);
  cfg->token_file = token_path;

  sb_printf(&sb, "%s/ca.crt", dir);
  char *ca_path = sb_detach(&sb);
  char *ca = NULL;
  dserr cerr;
  if (read_whole_file(ca_path, &ca, &len, &cerr) < 0) {
    log_writef('E', 0, __FILE__, __LINE__,
               "Expected to load root CA config from %s, but got err: %s", ca_path, cerr.msg);
    free(ca_path);
  } else if (!pem_has_certificate(ca)) {
    log_writef('E', 0, __FILE__, __LINE__,
               "Expected to load root CA config from %s, but got err: data does not contain any "
               "valid RSA or ECDSA certificates",
               ca_path);
    free(ca_path);
  } else {
    cfg->ca_file = ca_path;
  }
  free(ca);

  /* net.JoinHostPort: an IPv6 address gets brackets */
  sb_printf(&sb, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
  cfg->server = sb_detach(&sb);
  cfg->source = xstrdup(KUBE_IN_CLUSTER_SOURCE);
  return 0;
}

int kube_config_load(const char *path, kube_config **out, dserr *err) {
  *out = NULL;
  kube_config *cfg = calloc(1, sizeof *cfg);
  if (!cfg)
    abort();
  int rc = path && *path ? load_files(&path, 1, NULL, cfg, err) : load_in_cluster(cfg, err);
  if (rc < 0) {
    kube_config_free(cfg);
    return -1;
  }
  *out = cfg;
  return 0;
}

bool kube_config_in_cluster(const kube_config *cfg) {
  return cfg && !strcmp(cfg->source, KUBE_IN_CLUSTER_SOURCE);
}

bool kube_config_own_pod(const kube_config *cfg, char *ns, size_t ns_cap, char *name,
                         size_t name_cap) {
  const char *pns = getenv("POD_NAMESPACE"), *pname = getenv("POD_NAME");
  if (pns && *pns && pname && *pname) {
    snprintf(ns, ns_cap, "%s", pns);
    snprintf(name, name_cap, "%s", pname);
    return true;
  }
  if (!kube_config_in_cluster(cfg))
    return false;
  const char *dir = getenv(KUBE_SERVICEACCOUNT_DIR_ENV);
  strbuf path = {0};
  sb_printf(&path, "%s/namespace", dir && *dir ? dir : KUBE_SERVICEACCOUNT_DIR);
  char *text = NULL;
  size_t len = 0;
  dserr err;
  bool ok = read_whole_file(sb_str(&path), &text, &len, &err) == 0;
  sb_free(&path);
  if (ok) {
    while (len && isspace((unsigned char)text[len - 1]))
      text[--len] = 0;
    ok = len > 0 && gethostname(name, name_cap) == 0 && *name;
    if (ok)
      snprintf(ns, ns_cap, "%s", text);
  }
  free(text);
  return ok;
}

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

int kube_config_load_kubectl(const char *path, const char *context, kube_config **out,
                             dserr *err) {
  *out = NULL;
  if (context && !*context)
    context = NULL;
  kube_config *cfg = xcalloc(1, sizeof *cfg);
  char *list = NULL, *home = NULL;
  const char **paths = NULL;
  size_t n = 0;
  strbuf tried = {0};
  const char *env = getenv("KUBECONFIG");
  int rc;
  if (path && *path) {
    rc = load_files(&path, 1, context, cfg, err);
    goto done;
  }
  if (env && *env) {
    /* filepath.SplitList: ':'-separated; empty entries and files that do not exist are skipped,
     * as client-go's loading rules skip them */
    list = xstrdup(env);
    paths = xcalloc(strlen(env) / 2 + 2, sizeof *paths);
    for (char *save = NULL, *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save))
      if (file_exists(p))
        paths[n++] = p;
    sb_printf(&tried, "$KUBECONFIG (%s) names no file that exists", env);
  } else {
    const char *h = getenv("HOME");
    if (h && *h) {
      strbuf sb = {0};
      sb_printf(&sb, "%s/.kube/config", h);
      home = sb_detach(&sb);
    }
    if (home && file_exists(home)) {
      paths = xcalloc(1, sizeof *paths);
      paths[n++] = home;
    }
    sb_printf(&tried, "no --kubeconfig, $KUBECONFIG is not set and %s does not exist",
              home ? home : "$HOME/.kube/config ($HOME is not set)");
  }
  if (n) {
    rc = load_files(paths, n, context, cfg, err);
    goto done;
  }
  if (context) {
    rc = dserr_set(err, "--context %s: %s, so there is no context to pick", context,
                   sb_str(&tried));
    goto done;
  }
  dserr e;
  rc = load_in_cluster(cfg, &e);
  if (rc < 0)
    dserr_set(err, "%s; the in-cluster config: %s", sb_str(&tried), e.msg);
done:
  sb_free(&tried);
  free(paths);
  free(list);
  free(home);
  if (rc < 0) {
    kube_config_free(cfg);
    return -1;
  }
  *out = cfg;
  return 0;
}

/* The host of "http://host:port/path" (brackets of an IPv6 literal removed) into buf. */
static void url_host(const char *url, char *buf, size_t cap) {
  const char *a = strstr(url, "://");
  a = a ? a + 3 : url;
  const char *at = strchr(a, '@'), *slash = strchr(a, '/');
  if (at && (!slash || at < slash))
    a = at + 1;
  size_t n;
  if (*a == '[') {
    a++;
    const char *close = strchr(a, ']');
    n = close ? (size_t)(close - a) : strlen(a);
  } else {
    n = strcspn(a, ":/?#");
  }
  if (n >= cap)
    n = cap - 1;
  memcpy(buf, a, n);
  buf[n] = 0;
}

static bool host_is_loopback(const char *host) {
  struct in_addr v4;
  struct in6_addr v6;
  if (strcasecmp(host, "localhost") == 0)
    return true;
  if (inet_pton(AF_INET, host, &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  if (inet_pton(AF_INET6, host, &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

int kube_config_check_transport(const kube_config *cfg, bool allow_http, bool has_flag,
                                dserr *err) {
  if (strncmp(cfg->server, "http://", 7) != 0)
    return 0;
  char host[256];
  url_host(cfg->server, host, sizeof host);
  if (host_is_loopback(host) || (cfg->insecure && allow_http))
    return 0;
  if (!has_flag)
    return dserr_set(err,
                     "kubeconfig %s: server \"%s\" is plain HTTP to a host that is not loopback: "
                     "the credentials and every object would cross the network unencrypted. Use "
                     "https:// (this command takes plain HTTP to a loopback address only)",
                     cfg->source, cfg->server);
  return dserr_set(err,
                   "kubeconfig %s: server \"%s\" is plain HTTP to a host that is not loopback: the "
                   "credentials and every object would cross the network unencrypted. Use "
                   "https://, or (for a test cluster) set insecure-skip-tls-verify: true on the "
                   "cluster %s pass --allow-insecure-http",
                   cfg->source, cfg->server,
                   cfg->insecure ? "(it is set) and" : "and");
}

static void free_secret(char *s, size_t len) {
  if (!s)
    return;
  explicit_bzero(s, len ? len : strlen(s));
  free(s);
}

static void free_strv(char **v) {
  if (!v)
    return;
  for (char **p = v; *p; p++)
    free_secret(*p, 0); /* exec env may carry secrets */
  free(v);
}

void kube_config_free(kube_config *c) {
  if (!c)
    return;
  free(c->server);
  free(c->ca_file);
  free(c->ca_data);
  free(c->tls_server_name);
  free_secret(c->token, 0);
  free(c->token_file);
  free(c->cert_file);
  free(c->key_file);
  free(c->cert_data);
  free_secret(c->key_data, c->key_data_len);
  free_strv(c->exec_argv);
  free_strv(c->exec_env);
  free(c->exec_api_version);
  free(c->source);
  free(c->proxy_url);
  free(c);
}
