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
} kube_config;

/* path NULL or "" selects the in-cluster config. On error returns -1 with a message naming
 * the file and the field (e.g. `kubeconfig /x: users[0].user.client-key: file not found`). */
int kube_config_load(const char *path, kube_config **out, dserr *err);
void kube_config_free(kube_config *c);

#endif
