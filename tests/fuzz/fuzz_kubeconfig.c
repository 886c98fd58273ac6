/* fuzz_kubeconfig.c - libFuzzer target: the kubeconfig loader (kube_config_load). It reads a
 * file, so each input is written to a kubeconfig in a private temporary directory (relative
 * references such as `certificate-authority: ca.crt` resolve there; ca.crt, client.crt,
 * client.key and token exist, so the paths that read them run too). The directory is removed
 * at exit. */
#include "../../src/kube/config.h"
#include "fuzz_common.h"

#include <unistd.h>

static char dir[64], path[96];

static void write_file(const char *name, const char *text, size_t len) {
  char p[128];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
    abort();
}

static void cleanup(void) {
  static const char *const files[] = {"config",     "ca.crt", "client.crt",
                                      "client.key", "token",  NULL};
  char p[128];
  for (const char *const *f = files; *f; f++) {
    snprintf(p, sizeof p, "%s/%s", dir, *f);
    unlink(p);
  }
  rmdir(dir);
}

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/fuzz_kubeconfig.XXXXXX");
  if (!mkdtemp(dir))
    abort();
  snprintf(path, sizeof path, "%s/config", dir);
  static const char cert[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  static const char key[] = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
  write_file("ca.crt", cert, sizeof cert - 1);
  write_file("client.crt", cert, sizeof cert - 1);
  write_file("client.key", key, sizeof key - 1);
  write_file("token", "abc\n", 4);
  atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0])
    setup();
  write_file("config", (const char *)data, size);
  kube_config *cfg = NULL;
  dserr err = {{0}};
  int rc = kube_config_load(path, &cfg, &err);
  fuzz_require_error(rc, &err, "kube_config_load");
  if (rc == 0 && (!cfg || !cfg->server || !cfg->source))
    abort();
  kube_config_free(cfg);
  return 0;
}
