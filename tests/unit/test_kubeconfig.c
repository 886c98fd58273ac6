/* test_kubeconfig.c - kube_config_load on kubeconfig files written to a temporary directory
 * (every field form, relative paths, exact error texts), the in-cluster config through
 * $DS_SERVICEACCOUNT_DIR, and the parts of the client that need no server: exec plugin
 * failures, a refused connection, kube_status_text. The live TLS, token, retry and fault
 * behaviour is tested against the API simulator by tests/cli/t0100-kube-client.sh. */
#include "../../src/kube/client.h"
#include "../../src/kube/config.h"
#include "../../src/obs/log.h"

#include <setjmp.h> /* cmocka needs these three first */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- data ---- */

#define CERT_PEM "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
#define KEY_PEM "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEfake\n-----END EC PRIVATE KEY-----\n"
#define CERT_B64                                                                                   \
  "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
#define KEY_B64                                                                                    \
  "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFZmFrZQotLS0tLUVORCBFQyBQUklWQVRFIEtFWS0t"   \
  "LS0tCg=="
#define NOT_PEM_B64 "bm90IGEgcGVtCg==" /* "not a pem\n" */

static char dir[256]; /* the test's temporary directory (absolute) */

static const char *at(const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static void write_file(const char *name, const char *text) {
  const char *p = at(name);
  char sub[512];
  snprintf(sub, sizeof sub, "%s", p);
  for (char *s = sub + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
    *s = 0;
    mkdir(sub, 0700);
    *s = '/';
  }
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/test_kubeconfig.XXXXXX");
  assert_non_null(mkdtemp(dir));
  write_file("pki/ca.crt", CERT_PEM);
  write_file("pki/client.crt", CERT_PEM);
  write_file("pki/client.key", KEY_PEM);
  write_file("pki/garbage.crt", "not a certificate\n");
  write_file("secrets/token", "file-token\n");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* A kubeconfig with one context "ctx" -> cluster "c" and user "u". */
static const char *kubeconfig(const char *name, const char *cluster, const char *user) {
  char text[8192];
  snprintf(text, sizeof text,
           "apiVersion: v1\n"
           "kind: Config\n"
           "clusters:\n"
           "- name: c\n"
           "  cluster:\n%s"
           "users:\n"
           "- name: u\n"
           "  user:\n%s"
           "contexts:\n"
           "- name: ctx\n"
           "  context: {cluster: c, user: u, namespace: default}\n"
           "current-context: ctx\n",
           cluster, user);
  write_file(name, text);
  return at(name);
}

static kube_config *load_ok(const char *path) {
  kube_config *c = NULL;
  dserr err = {{0}};
  int rc = kube_config_load(path, &c, &err);
  if (rc != 0)
    fail_msg("unexpected error: %s", err.msg);
  assert_non_null(c);
  return c;
}

/* Loads path, expects failure with exactly `kubeconfig <path>: <expected>`. */
static void expect_error(const char *path, const char *expected) {
  kube_config *c = NULL;
  dserr err = {{0}};
  assert_int_equal(kube_config_load(path, &c, &err), -1);
  assert_null(c);
  char want[DSERR_MAX];
  snprintf(want, sizeof want, "kubeconfig %s: %s", path, expected);
  assert_string_equal(err.msg, want);
}

#define SERVER "    server: https://10.0.0.1:6443\n"

/* ---- kubeconfig: the field forms ---- */

static void test_token_and_ca_data(void **state) {
  (void)state;
  const char *p = kubeconfig("kc1.yaml",
                             "    server: https://api.example:6443/\n"
                             "    certificate-authority-data: " CERT_B64 "\n",
                             "    token: abc.def\n");
  kube_config *c = load_ok(p);
  assert_string_equal(c->server, "https://api.example:6443"); /* trailing slash dropped */
  assert_non_null(c->ca_data);
  assert_int_equal(c->ca_data_len, strlen(CERT_PEM));
  assert_memory_equal(c->ca_data, CERT_PEM, c->ca_data_len);
  assert_null(c->ca_file);
  assert_false(c->insecure);
  assert_string_equal(c->token, "abc.def");
  assert_null(c->token_file);
  assert_null(c->cert_file);
  assert_null(c->cert_data);
  assert_null(c->exec_argv);
  assert_string_equal(c->source, p);
  kube_config_free(c);
}

static void test_relative_paths_resolve_against_the_kubeconfig(void **state) {
  (void)state;
  const char *p = kubeconfig("conf/kc2.yaml", SERVER "    certificate-authority: ../pki/ca.crt\n",
                             "    client-certificate: ../pki/./client.crt\n"
                             "    client-key: ../pki/client.key\n"
                             "    tokenFile: ../secrets/token\n");
  kube_config *c = load_ok(p);
  assert_string_equal(c->ca_file, at("pki/ca.crt"));
  assert_string_equal(c->cert_file, at("pki/client.crt"));
  assert_string_equal(c->key_file, at("pki/client.key"));
  assert_string_equal(c->token_file, at("secrets/token"));
  assert_null(c->token); /* the client reads the file */
  kube_config_free(c);

  /* a relative kubeconfig path: resolved against the working directory first */
  char cwd[512];
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(dir), 0);
  c = load_ok("conf/kc2.yaml");
  assert_string_equal(c->ca_file, at("pki/ca.crt"));
  assert_string_equal(c->source, "conf/kc2.yaml");
  kube_config_free(c);
  assert_int_equal(chdir(cwd), 0);

  /* absolute paths are kept */
  char user[1024];
  snprintf(user, sizeof user, "    client-certificate: %s\n    client-key: %s\n",
           at("pki/client.crt"), at("pki/client.key"));
  c = load_ok(kubeconfig("conf/kc3.yaml", SERVER, user));
  assert_string_equal(c->cert_file, at("pki/client.crt"));
  kube_config_free(c);
}

static void test_client_certificate_data(void **state) {
  (void)state;
  /* base64 broken over lines, as some tools write it: CR and LF are ignored */
  const char *p =
      kubeconfig("kc4.yaml", SERVER,
                 "    client-certificate-data: \"" CERT_B64 "\"\n"
                 "    client-key-data: \"LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1I\\n"
                 "Y0NBUUVFZmFrZQotLS0tLUVORCBFQyBQUklWQVRFIEtFWS0tLS0tCg==\\r\\n\"\n");
  kube_config *c = load_ok(p);
  assert_int_equal(c->cert_data_len, strlen(CERT_PEM));
  assert_memory_equal(c->cert_data, CERT_PEM, c->cert_data_len);
  assert_int_equal(c->key_data_len, strlen(KEY_PEM));
  assert_memory_equal(c->key_data, KEY_PEM, c->key_data_len);
  assert_null(c->token);
  kube_config_free(c);
}

static void test_cluster_options(void **state) {
  (void)state;
  kube_config *c = load_ok(kubeconfig("kc5.yaml",
                                      SERVER "    insecure-skip-tls-verify: true\n"
                                             "    tls-server-name: api.internal\n"
                                             "    proxy-url: http://proxy:3128\n"
                                             "    disable-compression: true\n",
                                      "    token: t\n"));
  assert_true(c->insecure);
  assert_string_equal(c->tls_server_name, "api.internal");
  assert_string_equal(c->proxy_url, "http://proxy:3128");
  assert_true(c->disable_compression);
  kube_config_free(c);

  /* a server without a scheme: https when TLS is configured, http otherwise (client-go) */
  c = load_ok(kubeconfig("kc6.yaml",
                         "    server: 10.0.0.1:6443\n"
                         "    certificate-authority: pki/ca.crt\n",
                         "    token: t\n"));
  assert_string_equal(c->server, "https://10.0.0.1:6443");
  kube_config_free(c);
  c = load_ok(kubeconfig("kc7.yaml", "    server: localhost:8080\n", "    token: t\n"));
  assert_string_equal(c->server, "http://localhost:8080");
  kube_config_free(c);
}

static void test_exec_plugin(void **state) {
  (void)state;
  kube_config *c = load_ok(kubeconfig("conf/kc8.yaml", SERVER,
                                      "    exec:\n"
                                      "      apiVersion: client.authentication.k8s.io/v1\n"
                                      "      command: ./bin/get-token\n"
                                      "      args: [--cluster, prod]\n"
                                      "      env:\n"
                                      "      - name: AWS_PROFILE\n"
                                      "        value: ops\n"
                                      "      - {name: EMPTY}\n"
                                      "      interactiveMode: Never\n"
                                      "      provideClusterInfo: true\n"));
  assert_string_equal(c->exec_argv[0], at("conf/bin/get-token"));
  assert_string_equal(c->exec_argv[1], "--cluster");
  assert_string_equal(c->exec_argv[2], "prod");
  assert_null(c->exec_argv[3]);
  assert_string_equal(c->exec_env[0], "AWS_PROFILE=ops");
  assert_string_equal(c->exec_env[1], "EMPTY=");
  assert_null(c->exec_env[2]);
  assert_string_equal(c->exec_api_version, "client.authentication.k8s.io/v1");
  assert_true(c->exec_provide_cluster_info);
  kube_config_free(c);

  /* a bare command is looked up in $PATH; v1beta1 defaults interactiveMode */
  c = load_ok(kubeconfig("kc9.yaml", SERVER,
                         "    exec:\n"
                         "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                         "      command: kubelogin\n"));
  assert_string_equal(c->exec_argv[0], "kubelogin");
  assert_null(c->exec_argv[1]);
  assert_null(c->exec_env[0]);
  assert_false(c->exec_provide_cluster_info);
  kube_config_free(c);
}

static void test_context_picks_entries_by_name(void **state) {
  (void)state;
  write_file("kc10.yaml", "apiVersion: v1\n"
                          "kind: Config\n"
                          "current-context: b\n"
                          "contexts:\n"
                          "- {name: a, context: {cluster: one, user: alice}}\n"
                          "- {name: b, context: {cluster: two, user: bob}}\n"
                          "clusters:\n"
                          "- {name: one, cluster: {server: 'https://one:6443', bogus: [1]}}\n"
                          "- {name: two, cluster: {server: 'https://two:6443'}}\n"
                          "users:\n"
                          "- {name: alice, user: {token: 12345}}\n" /* not used: not checked */
                          "- {name: bob, user: {token: bobs-token}}\n");
  kube_config *c = load_ok(at("kc10.yaml"));
  assert_string_equal(c->server, "https://two:6443");
  assert_string_equal(c->token, "bobs-token");
  kube_config_free(c);

  /* a context without a user: no credentials at all */
  write_file("kc11.yaml", "current-context: a\n"
                          "contexts: [{name: a, context: {cluster: one}}]\n"
                          "clusters: [{name: one, cluster: {server: 'https://one'}}]\n");
  c = load_ok(at("kc11.yaml"));
  assert_null(c->token);
  assert_null(c->token_file);
  assert_null(c->exec_argv);
  assert_null(c->cert_data);
  kube_config_free(c);

  /* JSON is YAML too */
  write_file("kc12.json", "{\"current-context\":\"a\",\"contexts\":[{\"name\":\"a\",\"context\":"
                          "{\"cluster\":\"one\",\"user\":\"u\"}}],\"clusters\":[{\"name\":\"one\","
                          "\"cluster\":{\"server\":\"https://one\"}}],\"users\":[{\"name\":\"u\","
                          "\"user\":{\"token\":\"j\"}}]}");
  c = load_ok(at("kc12.json"));
  assert_string_equal(c->token, "j");
  kube_config_free(c);
}

/* ---- kubeconfig: errors ---- */

static void test_errors_structure(void **state) {
  (void)state;
  expect_error(at("missing.yaml"), "no such file or directory");
  mkdir(at("adir"), 0700);
  expect_error(at("adir"), "is a directory");

  write_file("e1.yaml", "clusters: [\n");
  kube_config *c = NULL;
  dserr err = {{0}};
  assert_int_equal(kube_config_load(at("e1.yaml"), &c, &err), -1);
  char prefix[600];
  snprintf(prefix, sizeof prefix, "kubeconfig %s: invalid YAML at line", at("e1.yaml"));
  assert_true(strncmp(err.msg, prefix, strlen(prefix)) == 0);

  write_file("e2.yaml", "");
  expect_error(at("e2.yaml"), "current-context: not set");
  write_file("e3.yaml", "- a\n- b\n");
  expect_error(at("e3.yaml"), "expected a Config (a map), got a list");
  write_file("e4.yaml", "current-context: nope\ncontexts: [{name: a, context: {cluster: c}}]\n");
  expect_error(at("e4.yaml"), "current-context: context \"nope\" not found in contexts");
  write_file("e5.yaml", "current-context: a\ncontexts: [{name: a, context: {cluster: c2}}]\n"
                        "clusters: [{name: c, cluster: {server: 'https://x'}}]\n");
  expect_error(at("e5.yaml"), "contexts[0].context.cluster: cluster \"c2\" not found in clusters");
  write_file("e6.yaml", "current-context: a\n"
                        "contexts: [{name: z, context: {}}, {name: a, context: {cluster: c, "
                        "user: u2}}]\n"
                        "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
                        "users: [{name: u, user: {token: t}}]\n");
  expect_error(at("e6.yaml"), "contexts[1].context.user: user \"u2\" not found in users");
  write_file("e7.yaml", "current-context: a\ncontexts: [{name: a, context: {user: u}}]\n");
  expect_error(at("e7.yaml"), "contexts[0].context.cluster: not set");
  write_file("e8.yaml", "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                        "clusters: [{name: c, cluster: {server: 'https://x'}}, "
                        "{name: c, cluster: {server: 'https://y'}}]\n");
  expect_error(at("e8.yaml"), "clusters[1].name: duplicate name \"c\" (also clusters[0])");
  write_file("e9.yaml", "current-context: a\ncontexts: {a: b}\n");
  expect_error(at("e9.yaml"), "contexts: expected a list, got a map");
  write_file("e10.yaml", "current-context: [a]\n");
  expect_error(at("e10.yaml"), "current-context: expected a string, got a list");
}

static void test_errors_cluster(void **state) {
  (void)state;
  expect_error(
      kubeconfig("c1.yaml", "    certificate-authority-data: " CERT_B64 "\n", "    token: t\n"),
      "clusters[0].cluster.server: not set (the cluster has no server defined)");
  expect_error(kubeconfig("c2.yaml",
                          SERVER "    certificate-authority-data: " CERT_B64 "\n"
                                 "    certificate-authority: pki/ca.crt\n",
                          "    token: t\n"),
               "clusters[0].cluster: certificate-authority and certificate-authority-data are "
               "both set; keep one");
  expect_error(
      kubeconfig("c3.yaml", SERVER "    certificate-authority-data: LS0t$LS0\n", "    token: t\n"),
      "clusters[0].cluster.certificate-authority-data: illegal base64 data at input "
      "byte 4");
  expect_error(kubeconfig("c4.yaml", SERVER "    certificate-authority-data: " NOT_PEM_B64 "\n",
                          "    token: t\n"),
               "clusters[0].cluster.certificate-authority-data: no PEM certificate found in the "
               "decoded data");
  char want[1024];
  snprintf(want, sizeof want,
           "clusters[0].cluster.certificate-authority: open %s: no such file or directory",
           at("pki/nope.crt"));
  expect_error(
      kubeconfig("c5.yaml", SERVER "    certificate-authority: pki/nope.crt\n", "    token: t\n"),
      want);
  snprintf(want, sizeof want,
           "clusters[0].cluster.certificate-authority: %s: no PEM certificate found",
           at("pki/garbage.crt"));
  expect_error(kubeconfig("c6.yaml", SERVER "    certificate-authority: pki/garbage.crt\n",
                          "    token: t\n"),
               want);
  expect_error(
      kubeconfig("c7.yaml", SERVER "    insecure-skip-tls-verify: \"true\"\n", "    token: t\n"),
      "clusters[0].cluster.insecure-skip-tls-verify: expected a boolean, got a string");
  expect_error(kubeconfig("c8.yaml",
                          SERVER "    insecure-skip-tls-verify: true\n"
                                 "    certificate-authority: pki/ca.crt\n",
                          "    token: t\n"),
               "clusters[0].cluster: insecure-skip-tls-verify is set together with a certificate "
               "authority: specifying a root certificates file with the insecure flag is not "
               "allowed");
  expect_error(kubeconfig("c9.yaml", "    server: ftp://x\n", "    token: t\n"),
               "clusters[0].cluster.server: unsupported scheme in \"ftp://x\" (expected https:// "
               "or http://)");
}

static void test_errors_user(void **state) {
  (void)state;
  /* a mistyped token: the message says the type, never the value */
  kube_config *c = NULL;
  dserr err = {{0}};
  const char *p = kubeconfig("u1.yaml", SERVER, "    token: 987654321\n");
  assert_int_equal(kube_config_load(p, &c, &err), -1);
  assert_null(strstr(err.msg, "987654321"));
  expect_error(p, "users[0].user.token: expected a string, got an integer");

  expect_error(kubeconfig("u2.yaml", SERVER, "    client-certificate-data: " CERT_B64 "\n"),
               "users[0].user: a client certificate is set without client-key or "
               "client-key-data");
  expect_error(kubeconfig("u3.yaml", SERVER, "    client-key: pki/client.key\n"),
               "users[0].user: a client key is set without client-certificate or "
               "client-certificate-data");
  expect_error(kubeconfig("u4.yaml", SERVER,
                          "    client-certificate-data: " CERT_B64 "\n"
                          "    client-certificate: pki/client.crt\n"
                          "    client-key: pki/client.key\n"),
               "users[0].user: client-certificate and client-certificate-data are both set; keep "
               "one");
  expect_error(kubeconfig("u5.yaml", SERVER,
                          "    client-certificate-data: " CERT_B64 "\n"
                          "    client-key-data: abc\n"),
               "users[0].user.client-key-data: illegal base64 data at input byte 0");
  expect_error(kubeconfig("u6.yaml", SERVER,
                          "    client-certificate-data: " CERT_B64 "\n"
                          "    client-key-data: " CERT_B64 "\n"),
               "users[0].user.client-key-data: no PEM private key found in the decoded data");
  char want[1024];
  snprintf(want, sizeof want, "users[0].user.client-key: open %s: no such file or directory",
           at("pki/nope.key"));
  expect_error(kubeconfig("u7.yaml", SERVER,
                          "    client-certificate: pki/client.crt\n"
                          "    client-key: pki/nope.key\n"),
               want);
  snprintf(want, sizeof want, "users[0].user.tokenFile: open %s: no such file or directory",
           at("secrets/nope"));
  expect_error(kubeconfig("u8.yaml", SERVER, "    tokenFile: secrets/nope\n"), want);
  expect_error(
      kubeconfig("u9.yaml", SERVER, "    auth-provider: {name: oidc, config: {id-token: x}}\n"),
      "users[0].user.auth-provider: not supported by this descheduler (use a token, a "
      "client certificate or an exec plugin)");
  expect_error(kubeconfig("u10.yaml", SERVER, "    username: admin\n    password: pw\n"),
               "users[0].user.username: not supported by this descheduler (use a token, a client "
               "certificate or an exec plugin)");
}

static void test_errors_exec(void **state) {
  (void)state;
  expect_error(kubeconfig("x1.yaml", SERVER, "    exec: {command: x}\n"),
               "users[0].user.exec.apiVersion: not set (expected client.authentication.k8s.io/v1 "
               "or client.authentication.k8s.io/v1beta1)");
  expect_error(
      kubeconfig("x2.yaml", SERVER,
                 "    exec: {command: x, apiVersion: client.authentication.k8s.io/v1alpha1}\n"),
      "users[0].user.exec.apiVersion: exec plugin: invalid apiVersion "
      "\"client.authentication.k8s.io/v1alpha1\" (expected client.authentication.k8s.io/v1 "
      "or client.authentication.k8s.io/v1beta1)");
  expect_error(kubeconfig("x3.yaml", SERVER,
                          "    exec: {command: x, apiVersion: client.authentication.k8s.io/v1}\n"),
               "users[0].user.exec.interactiveMode: not set (required by "
               "client.authentication.k8s.io/v1; use Never or IfAvailable)");
  expect_error(kubeconfig("x4.yaml", SERVER,
                          "    exec: {apiVersion: client.authentication.k8s.io/v1beta1}\n"),
               "users[0].user.exec.command: not set (the exec credential plugin needs a command)");
  expect_error(
      kubeconfig("x5.yaml", SERVER,
                 "    exec: {command: x, apiVersion: client.authentication.k8s.io/v1beta1, "
                 "args: [a, 2]}\n"),
      "users[0].user.exec.args[1]: expected a string, got an integer");
  expect_error(
      kubeconfig("x6.yaml", SERVER,
                 "    exec: {command: x, apiVersion: client.authentication.k8s.io/v1beta1, "
                 "env: [{value: v}]}\n"),
      "users[0].user.exec.env[0].name: not set");
  expect_error(kubeconfig("x7.yaml", SERVER,
                          "    exec: {command: x, apiVersion: client.authentication.k8s.io/v1, "
                          "interactiveMode: Sometimes}\n"),
               "users[0].user.exec.interactiveMode: invalid value \"Sometimes\" (expected Never, "
               "IfAvailable or Always)");
}

static void test_base64_offsets(void **state) {
  (void)state;
  /* Go's encoding/base64 offsets for the same inputs */
  struct {
    const char *in;
    int byte;
  } cases[] = {{"abc", 0},  {"ab=c", 2},         {"abcd=", 4}, {"a===", 1},
               {"ab$d", 2}, {"YWJjZA==YQ==", 8}, {"ab=", 3}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char user[256], name[32], want[256];
    snprintf(user, sizeof user,
             "    client-certificate-data: " CERT_B64 "\n    client-key-data: \"%s\"\n",
             cases[i].in);
    snprintf(name, sizeof name, "b%zu.yaml", i);
    snprintf(want, sizeof want,
             "users[0].user.client-key-data: illegal base64 data at input byte %d", cases[i].byte);
    expect_error(kubeconfig(name, SERVER, user), want);
  }
}

/* ---- in-cluster ---- */

static void test_in_cluster(void **state) {
  (void)state;
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  kube_config *c = NULL;
  dserr err = {{0}};
  assert_int_equal(kube_config_load(NULL, &c, &err), -1);
  assert_string_equal(err.msg, "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST "
                               "and KUBERNETES_SERVICE_PORT must be defined");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  assert_int_equal(kube_config_load("", &c, &err), -1); /* PORT still missing */
  assert_non_null(strstr(err.msg, "KUBERNETES_SERVICE_PORT must be defined"));
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);

  write_file("sa/token", "  sa-token\n");
  write_file("sa/ca.crt", CERT_PEM);
  setenv(KUBE_SERVICEACCOUNT_DIR_ENV, at("sa"), 1);
  c = load_ok(NULL);
  assert_string_equal(c->server, "https://10.96.0.1:443");
  assert_string_equal(c->token, "sa-token");
  assert_string_equal(c->token_file, at("sa/token"));
  assert_string_equal(c->ca_file, at("sa/ca.crt"));
  assert_string_equal(c->source, "in-cluster config");
  kube_config_free(c);

  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  c = load_ok("");
  assert_string_equal(c->server, "https://[fd00::1]:443");
  kube_config_free(c);

  /* no ca.crt: logged as client-go does, the system roots are used */
  unlink(at("sa/ca.crt"));
  char *logs = NULL;
  size_t loglen = 0;
  FILE *ls = open_memstream(&logs, &loglen);
  log_set_stream(ls);
  c = load_ok(NULL);
  log_set_stream(NULL);
  fclose(ls);
  assert_null(c->ca_file);
  char want[600];
  snprintf(want, sizeof want,
           "Expected to load root CA config from %s, but got err: open %s: no such file or "
           "directory",
           at("sa/ca.crt"), at("sa/ca.crt"));
  assert_non_null(strstr(logs, want));
  assert_int_equal(logs[0], 'E');
  free(logs);
  kube_config_free(c);

  /* no token: client-go's os error */
  unlink(at("sa/token"));
  assert_int_equal(kube_config_load(NULL, &c, &err), -1);
  snprintf(want, sizeof want, "open %s: no such file or directory", at("sa/token"));
  assert_string_equal(err.msg, want);
  unsetenv(KUBE_SERVICEACCOUNT_DIR_ENV);
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
}

/* ---- kubectl's loading rules (the workstation commands) ---- */

static kube_config *load_kubectl_ok(const char *path, const char *context) {
  kube_config *c = NULL;
  dserr err = {{0}};
  if (kube_config_load_kubectl(path, context, &c, &err) != 0)
    fail_msg("unexpected error: %s", err.msg);
  assert_non_null(c);
  return c;
}

static void expect_kubectl_error(const char *path, const char *context, const char *expected) {
  kube_config *c = NULL;
  dserr err = {{0}};
  assert_int_equal(kube_config_load_kubectl(path, context, &c, &err), -1);
  assert_null(c);
  assert_string_equal(err.msg, expected);
}

static void test_kubectl_rules(void **state) {
  (void)state;
  char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  /* the first file sets current-context and defines "shared"; the second defines "shared" as
   * well (the first wins), the context "other" and its user, and a cluster whose certificate
   * path is relative to the second file's directory */
  write_file("merge/a.yaml", "current-context: shared\n"
                             "contexts: [{name: shared, context: {cluster: one, user: alice}}]\n"
                             "clusters: [{name: one, cluster: {server: 'https://one:6443'}}]\n"
                             "users: [{name: alice, user: {token: alices}}]\n");
  write_file("merge/b/b.yaml", "current-context: other\n"
                               "contexts:\n"
                               "- {name: shared, context: {cluster: two, user: bob}}\n"
                               "- {name: other, context: {cluster: two, user: bob}}\n"
                               "clusters: [{name: two, cluster: {server: 'https://two:6443', "
                               "certificate-authority: ca.crt}}]\n"
                               "users: [{name: bob, user: {token: bobs}}]\n");
  write_file("merge/b/ca.crt", CERT_PEM);
  char list[1200];
  snprintf(list, sizeof list, "%s::%s:%s", at("merge/missing.yaml"), at("merge/a.yaml"),
           at("merge/b/b.yaml"));
  setenv("KUBECONFIG", list, 1);
  kube_config *c = load_kubectl_ok(NULL, NULL);
  assert_string_equal(c->server, "https://one:6443");
  assert_string_equal(c->token, "alices");
  char both[1200];
  snprintf(both, sizeof both, "%s:%s", at("merge/a.yaml"), at("merge/b/b.yaml"));
  assert_string_equal(c->source, both); /* the missing file was skipped */
  kube_config_free(c);

  /* --context picks a context of the second file; its relative path is the second file's */
  c = load_kubectl_ok("", "other");
  assert_string_equal(c->server, "https://two:6443");
  assert_string_equal(c->token, "bobs");
  assert_string_equal(c->ca_file, at("merge/b/ca.crt"));
  kube_config_free(c);
  char want[1600];
  snprintf(want, sizeof want, "kubeconfig %s: context \"nope\" (--context) not found in contexts",
           both);
  expect_kubectl_error(NULL, "nope", want);

  /* --kubeconfig: that file alone, $KUBECONFIG aside */
  c = load_kubectl_ok(at("merge/b/b.yaml"), NULL);
  assert_string_equal(c->token, "bobs");
  kube_config_free(c);
  snprintf(want, sizeof want, "kubeconfig %s: no such file or directory", at("merge/missing.yaml"));
  expect_kubectl_error(at("merge/missing.yaml"), NULL, want);

  /* a bad file in the list is an error naming it */
  write_file("merge/bad.yaml", "clusters: 3\n");
  snprintf(list, sizeof list, "%s:%s", at("merge/bad.yaml"), at("merge/a.yaml"));
  setenv("KUBECONFIG", list, 1);
  snprintf(want, sizeof want, "kubeconfig %s: clusters: expected a list, got an integer",
           at("merge/bad.yaml"));
  expect_kubectl_error(NULL, NULL, want);

  /* no $KUBECONFIG: ~/.kube/config */
  unsetenv("KUBECONFIG");
  setenv("HOME", at("merge/b"), 1);
  write_file("merge/b/.kube/config", "current-context: h\n"
                                     "contexts: [{name: h, context: {cluster: h}}]\n"
                                     "clusters: [{name: h, cluster: {server: 'https://home'}}]\n");
  c = load_kubectl_ok(NULL, NULL);
  assert_string_equal(c->server, "https://home");
  assert_string_equal(c->source, at("merge/b/.kube/config"));
  kube_config_free(c);

  /* nothing: the in-cluster config, and a message that names every place looked at */
  setenv("HOME", at("merge"), 1);
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  snprintf(want, sizeof want,
           "no --kubeconfig, $KUBECONFIG is not set and %s does not exist; the in-cluster config: "
           "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
           "KUBERNETES_SERVICE_PORT must be defined",
           at("merge/.kube/config"));
  expect_kubectl_error(NULL, NULL, want);
  snprintf(want, sizeof want,
           "--context x: no --kubeconfig, $KUBECONFIG is not set and %s does not exist, so there "
           "is no context to pick",
           at("merge/.kube/config"));
  expect_kubectl_error(NULL, "x", want);
  if (home)
    setenv("HOME", home, 1);
  else
    unsetenv("HOME");
  free(home);
}

/* ---- client parts that need no server ---- */

static void expect_client_error(const char *plugin_body, const char *expected_tail) {
  write_file("plugin.sh", plugin_body);
  chmod(at("plugin.sh"), 0755);
  kube_config *cfg = load_ok(kubeconfig("xp.yaml", "    server: http://127.0.0.1:1\n",
                                        "    exec:\n"
                                        "      apiVersion: client.authentication.k8s.io/v1\n"
                                        "      command: ./plugin.sh\n"
                                        "      interactiveMode: Never\n"));
  dserr err = {{0}};
  kube_client *c = kube_client_new(cfg, 0, 0, &err);
  kube_config_free(cfg);
  assert_null(c);
  char want[1024];
  snprintf(want, sizeof want, "getting credentials: %s", expected_tail);
  assert_string_equal(err.msg, want);
}

static void test_exec_plugin_failures(void **state) {
  (void)state;
  char want[1024];
  snprintf(want, sizeof want, "exec: executable %s failed with exit code 3", at("plugin.sh"));
  expect_client_error("#!/bin/sh\nexit 3\n", want);
  expect_client_error("#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
                      "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}'\n",
                      "exec plugin is configured to use API version "
                      "client.authentication.k8s.io/v1, plugin returned version "
                      "client.authentication.k8s.io/v1beta1");
  expect_client_error("#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                      "\"kind\":\"ExecCredential\"}'\n",
                      "exec plugin didn't return a status field");
  expect_client_error("#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                      "\"kind\":\"ExecCredential\",\"status\":{}}'\n",
                      "exec plugin didn't return a token or cert/key pair");
  expect_client_error("#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                      "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
                      "\"expirationTimestamp\":\"soon\"}}'\n",
                      "decoding stdout: status.expirationTimestamp: "
                      "invalid time \"soon\": expected RFC 3339, e.g. 2026-01-02T15:04:05Z");
  /* output that is not JSON: the message must not echo the output (it may hold a token) */
  write_file("plugin.sh", "#!/bin/sh\necho 'secret-token-value'\n");
  kube_config *cfg = load_ok(at("xp.yaml"));
  dserr err = {{0}};
  assert_null(kube_client_new(cfg, 0, 0, &err));
  kube_config_free(cfg);
  assert_non_null(strstr(err.msg, "getting credentials: decoding stdout: "));
  assert_null(strstr(err.msg, "secret-token-value"));

  /* the command is not there */
  cfg = load_ok(kubeconfig("xq.yaml", "    server: http://127.0.0.1:1\n",
                           "    exec:\n"
                           "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                           "      command: no-such-credential-plugin-here\n"));
  assert_null(kube_client_new(cfg, 0, 0, &err));
  kube_config_free(cfg);
  assert_string_equal(err.msg,
                      "getting credentials: exec: executable no-such-credential-plugin-here not "
                      "found");
}

static void test_refused_connection_reads_like_client_go(void **state) {
  (void)state;
  kube_config *cfg = load_ok(kubeconfig("r1.yaml", "    server: http://127.0.0.1:1\n",
                                        "    token: tok-should-not-show\n"));
  dserr err = {{0}};
  kube_client *c = kube_client_new(cfg, 0, 0, &err);
  kube_config_free(cfg);
  assert_non_null(c);
  assert_string_equal(kube_client_server(c), "http://127.0.0.1:1");
  kube_response r;
  assert_int_equal(kube_request(c, "GET", "/api/v1/nodes?limit=500", NULL, NULL, &r, &err), -1);
  assert_string_equal(err.msg, "Get \"http://127.0.0.1:1/api/v1/nodes?limit=500\": dial tcp "
                               "127.0.0.1:1: connect: connection refused");
  assert_int_equal(kube_request(c, "PATCH", "/x", NULL, "{}", &r, &err), -1);
  assert_true(strncmp(err.msg, "Patch \"http://127.0.0.1:1/x\": ", 30) == 0);
  assert_null(strstr(err.msg, "tok-should-not-show"));
  kube_client_free(c);
}

static void test_status_text(void **state) {
  (void)state;
  char msg[64], reason[32];
  char body[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                "\"message\":\"pods \\\"x\\\" not found\",\"reason\":\"NotFound\",\"code\":404}";
  kube_response r = {404, body, strlen(body)};
  kube_status_text(&r, msg, sizeof msg, reason, sizeof reason);
  assert_string_equal(msg, "pods \"x\" not found");
  assert_string_equal(reason, "NotFound");

  char pod[] = "{\"kind\":\"Pod\",\"message\":\"m\",\"reason\":\"r\"}";
  kube_response r2 = {200, pod, strlen(pod)};
  kube_status_text(&r2, msg, sizeof msg, reason, sizeof reason);
  assert_string_equal(msg, "");
  assert_string_equal(reason, "");

  char junk[] = "<html>502 Bad Gateway</html>";
  kube_response r3 = {502, junk, strlen(junk)};
  kube_status_text(&r3, msg, sizeof msg, reason, sizeof reason);
  assert_string_equal(msg, "");
  assert_string_equal(reason, "");

  char longmsg[] = "{\"kind\":\"Status\",\"message\":\"0123456789abcdef\"}";
  kube_response r4 = {500, longmsg, strlen(longmsg)};
  char small[8];
  kube_status_text(&r4, small, sizeof small, reason, sizeof reason);
  assert_string_equal(small, "0123456"); /* truncated, NUL-terminated */
  assert_string_equal(reason, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_token_and_ca_data),
      cmocka_unit_test(test_relative_paths_resolve_against_the_kubeconfig),
      cmocka_unit_test(test_client_certificate_data),
      cmocka_unit_test(test_cluster_options),
      cmocka_unit_test(test_exec_plugin),
      cmocka_unit_test(test_context_picks_entries_by_name),
      cmocka_unit_test(test_errors_structure),
      cmocka_unit_test(test_errors_cluster),
      cmocka_unit_test(test_errors_user),
      cmocka_unit_test(test_errors_exec),
      cmocka_unit_test(test_base64_offsets),
      cmocka_unit_test(test_in_cluster),
      cmocka_unit_test(test_kubectl_rules),
      cmocka_unit_test(test_exec_plugin_failures),
      cmocka_unit_test(test_refused_connection_reads_like_client_go),
      cmocka_unit_test(test_status_text),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
