/* featuregates.c - upstream's feature gates and Go's boolean syntax; see featuregates.h. */
#include "featuregates.h"

#include <stdlib.h>
#include <string.h>

int go_parse_bool(const char *v, bool *out) {
  static const char *t[] = {"1", "t", "T", "true", "TRUE", "True"};
  static const char *f[] = {"0", "f", "F", "false", "FALSE", "False"};
  for (size_t i = 0; i < 6; i++) {
    if (!strcmp(v, t[i])) {
      *out = true;
      return 0;
    }
    if (!strcmp(v, f[i])) {
      *out = false;
      return 0;
    }
  }
  return -1;
}

int feature_gates_parse(const char *text, feature_gates *out, dserr *err) {
  memset(out, 0, sizeof *out);
  if (!text || !*text)
    return 0;
  char *copy = strdup(text), *save = NULL;
  bool all_alpha = false, alpha_set = false, eib = false, eib_set = false;
  int rc = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    if (!*tok)
      continue;
    char *eq = strchr(tok, '=');
    if (!eq) {
      rc = dserr_set(err, "missing bool value for %s", tok);
      break;
    }
    *eq = 0;
    const char *key = tok, *val = eq + 1;
    bool b;
    if (go_parse_bool(val, &b) < 0) {
      rc = dserr_set(
          err, "invalid value of %s=%s, err: strconv.ParseBool: parsing \"%s\": invalid syntax",
          key, val, val);
      break;
    }
    if (!strcmp(key, "EvictionsInBackground")) {
      eib = b;
      eib_set = true;
    } else if (!strcmp(key, "AllAlpha")) {
      all_alpha = b;
      alpha_set = true;
    } else if (!strcmp(key, "AllBeta")) {
      /* no beta gates exist */
    } else {
      rc = dserr_set(err, "unrecognized feature gate: %s", key);
      break;
    }
  }
  free(copy);
  if (rc < 0)
    return -1;
  out->evictions_in_background = eib_set ? eib : (alpha_set && all_alpha);
  return 0;
}
