/* config.h - how to reach the API server: kubeconfig files and in-cluster config.
 *
 * `--kubeconfig` / `--client-connection-kubeconfig` name a kubeconfig; its current-context
 * gives the cluster (server, certificate-authority(-data), insecure-skip-tls-verify) and the
 * user (token, tokenFile, client-certificate(-data) + client-key(-data), or an `exec`
 * credential plugin whose ExecCredential status.token is used). Without a kubeconfig the
 * in-cluster config is used: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the
 * service-account token file (re-read when it changes, as tokens rotate) and CA.
 *
 * Secrets (tokens, keys) are kept in memory only as long as the config lives and are never
 * logged. */
#ifndef DS_KUBE_CONFIG_H
#define DS_KUBE_CONFIG_H

#include "../util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  char *server;           /* "https://10.0.0.1:6443" (no trailing slash) */
  char *ca_file;          /* PEM file, or NULL */
  char *ca_data;          /* PEM bytes (decoded from base64), or NULL */
  size_t ca_data_len;
  bool insecure;          /* insecure-skip-tls-verify */
  char *tls_server_name;  /* tls-server-name, or NULL */
  char *token;            /* static bearer token, or NULL */
  char *token_file;       /* read per request when it changed (tokenFile, in-cluster) */
  char *cert_file, *key_file;   /* client certificate files, or NULL */
  char *cert_data, *key_data;   /* PEM bytes, or NULL */
  size_t cert_data_len, key_data_len;
  char **exec_argv;       /* exec credential plugin: command + args (NULL-terminated), or NULL */
  char **exec_env;        /* "NAME=value" entries added to the plugin's environment, or NULL */
  char *exec_api_version; /* client.authentication.k8s.io/v1 or v1beta1 */
  char *source;           /* kubeconfig path, or "in-cluster config" (for messages) */
  /* added after the first version of this header: */
  bool exec_provide_cluster_info; /* exec.provideClusterInfo: cluster in KUBERNETES_EXEC_INFO */
  char *proxy_url;                /* proxy-url, or NULL (then the usual *_proxy env vars apply) */
  bool disable_compression;       /* disable-compression: no "Accept-Encoding: gzip" */
  /* Not from the file; set by the caller before kube_client_new: */
  int64_t exec_timeout_ns; /* an exec plugin is killed after this long (0: 1 minute) */
  int64_t timeout_ns;      /* whole-request timeout (0: 60 s; negative: none) */
} kube_config;

#define KUBE_EXEC_TIMEOUT_DEFAULT_NS (60LL * 1000000000LL)

/* Where the in-cluster config reads `token` and `ca.crt`; tests point it elsewhere. */
#define KUBE_SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_SERVICEACCOUNT_DIR_ENV "DS_SERVICEACCOUNT_DIR"

/* path NULL or "" selects the in-cluster config. On error returns -1 with a message naming
 * the file and the field (e.g. `kubeconfig /x: users[0].user.client-key: file not found`). */
/*
 * Kubeconfig: the file named by path only (like upstream's descheduler, $KUBECONFIG is not
 * read; kube_config_load_kubectl below reads it); current-context picks the context, whose cluster and user are looked up by name (a
 * context without a user means no credentials). Relative file paths (certificate-authority,
 * client-certificate, client-key, tokenFile, an exec command containing a '/') are resolved
 * against the kubeconfig's directory, as kubectl does. Referenced files are read once here to
 * report a missing or malformed file early. Messages look like
 *   kubeconfig /x: contexts[0].context.cluster: cluster "prod" not found in clusters
 *   kubeconfig /x: users[1].user.client-key: open /y/key.pem: no such file or directory
 *   kubeconfig /x: users[1].user.client-key-data: illegal base64 data at input byte 12
 * and never contain a secret's value.
 *
 * In-cluster: $KUBERNETES_SERVICE_HOST and $KUBERNETES_SERVICE_PORT, the token and ca.crt
 * from KUBE_SERVICEACCOUNT_DIR ($DS_SERVICEACCOUNT_DIR when set). Without the variables the
 * message is client-go's `unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and
 * KUBERNETES_SERVICE_PORT must be defined` (upstream's descheduler prints it wrapped as
 * `unable to create config: unable to build in cluster config: <that>`); an unreadable token
 * is `open <dir>/token: no such file or directory`; an unreadable ca.crt is only logged (as
 * client-go does: `Expected to load root CA config from ...`) and the system roots are used.
 *
 * The returned config is heap memory owned by the caller: free it with kube_config_free,
 * which also wipes the secrets. */
int kube_config_load(const char *path, kube_config **out, dserr *err);

/* kubectl's loading rules, for the workstation commands (check, verify, pause, resume):
 *  - path (--kubeconfig) given: that file alone, which must exist;
 *  - else $KUBECONFIG: a ':'-separated list; entries that are empty or name no existing file
 *    are skipped; the files are merged as kubectl merges them: the first file to set
 *    current-context wins, and the first file to define a context, cluster or user of a name
 *    wins (relative paths resolve against the file the entry came from);
 *  - else ~/.kube/config when it exists;
 *  - else the in-cluster config.
 * context (--context; NULL or "": none) replaces current-context. When no file is found and
 * the in-cluster config cannot be loaded either, the message says each place looked at. A
 * message about one file names it; one about the merge names the files joined by ':'. */
int kube_config_load_kubectl(const char *path, const char *context, kube_config **out,
                             dserr *err);

/* Plain http:// to a host that is not loopback (localhost, 127.0.0.0/8, ::1) would carry the
 * credentials and every object unencrypted: refused with a message naming the kubeconfig and
 * the way out, unless the cluster entry says insecure-skip-tls-verify AND allow_http (the
 * command line's --allow-insecure-http) is true. https:// and loopback are always fine.
 * has_flag: the command has --allow-insecure-http (the message offers it only then). */
/* Whether cfg is the in-cluster config (the process runs in a pod of the cluster). */
bool kube_config_in_cluster(const kube_config *cfg);
/* The pod this process runs in, for Events about itself: $POD_NAMESPACE and $POD_NAME (the
 * downward API's usual names) when both are set; else, with the in-cluster config, the
 * service account's namespace file and the host name (a pod's host name is its name). false
 * when neither tells. */
bool kube_config_own_pod(const kube_config *cfg, char *ns, size_t ns_cap, char *name,
                         size_t name_cap);
int kube_config_check_transport(const kube_config *cfg, bool allow_http, bool has_flag,
                                dserr *err);
void kube_config_free(kube_config *c);

/* Base64 as a Kubernetes []byte field holds it (StdEncoding, padded, CR and LF ignored):
 * decodes text into a heap buffer (NUL-terminated, caller frees). On bad input returns -1
 * and the offset of the offending byte in *bad (Go's "illegal base64 data at input byte N"). */
int kube_b64_decode(const char *text, char **out, size_t *outlen, size_t *bad);

#endif
