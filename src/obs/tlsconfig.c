/* tlsconfig.c - see tlsconfig.h.
 *
 * The names and numbers are Go's (crypto/tls at the Go version upstream's v0.36.0 builds with,
 * go.mod's `go 1.26.0`); what each suite is made of is GnuTLS's own table
 * (gnutls_cipher_suite_info), and what a priority string enables is asked of GnuTLS too
 * (gnutls_priority_get_cipher_suite_index), so the check that a list is served exactly holds
 * for the GnuTLS the program runs with. */
#include "tlsconfig.h"

#include <ctype.h>
#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* component-base's accepted names: Go's tls.CipherSuites() and tls.InsecureCipherSuites(),
 * and the two legacy ChaCha20 names it keeps (after the current name of the same suite, so
 * that a suite is named by its current name). */
static const struct {
  const char *name;
  uint16_t id;
} go_suites[] = {
    {"TLS_RSA_WITH_RC4_128_SHA", 0x0005},
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", 0x000A},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", 0x002F},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", 0x0035},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", 0x003C},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", 0x009C},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", 0x009D},
    {"TLS_AES_128_GCM_SHA256", 0x1301},
    {"TLS_AES_256_GCM_SHA384", 0x1302},
    {"TLS_CHACHA20_POLY1305_SHA256", 0x1303},
    {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", 0xC007},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", 0xC009},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", 0xC00A},
    {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", 0xC011},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", 0xC012},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", 0xC013},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", 0xC014},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", 0xC023},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", 0xC027},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", 0xC02F},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", 0xC02B},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", 0xC030},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", 0xC02C},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", 0xCCA8},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", 0xCCA9},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", 0xCCA8},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", 0xCCA9},
};
#define NSUITES (sizeof go_suites / sizeof go_suites[0])

/* TLS 1.3's three suites, which Go always offers */
static const char *const tls13_ciphers[] = {"AES-128-GCM", "AES-256-GCM", "CHACHA20-POLY1305"};

/* component-base's TLSVersion names; index = the minor version (TLS 1.x) */
static const char *const version_names[] = {"VersionTLS10", "VersionTLS11", "VersionTLS12",
                                            "VersionTLS13"};
#define DEFAULT_MIN_MINOR 2 /* component-base's DefaultTLSVersion */

/* The tls.CurveID values Go knows (CurveID.String() names them), and GnuTLS's group of each. */
static const struct {
  int id;
  const char *go_name, *group;
} go_curves[] = {
    {23, "CurveP256", "SECP256R1"},
    {24, "CurveP384", "SECP384R1"},
    {25, "CurveP521", "SECP521R1"},
    {29, "X25519", "X25519"},
    {4587, "SecP256r1MLKEM768", "SECP256R1-MLKEM768"},
    {4588, "X25519MLKEM768", "X25519-MLKEM768"},
    {4589, "SecP384r1MLKEM1024", "SECP384R1-MLKEM1024"},
};
#define NCURVES (sizeof go_curves / sizeof go_curves[0])
#define CURVES_MAX 64

/* The priority string's elements, each emitted in this order (Go's preference: AEADs first,
 * ECDSA before RSA); an element GnuTLS names otherwise goes last. */
static const char *const cipher_rank[] = {"AES-128-GCM", "AES-256-GCM", "CHACHA20-POLY1305",
                                          "AES-128-CBC", "AES-256-CBC", "3DES-CBC",
                                          "ARCFOUR-128"};
static const char *const mac_rank[] = {"AEAD", "SHA1", "SHA256"};
static const char *const kx_rank[] = {"ECDHE-ECDSA", "ECDHE-RSA", "RSA"};

#define ELEMS_MAX 16
typedef struct {
  size_t n;
  const char *names[ELEMS_MAX];
} elem_set;

static void elem_add(elem_set *s, const char *name) {
  if (!name)
    return;
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->names[i], name))
      return;
  if (s->n < ELEMS_MAX)
    s->names[s->n++] = name;
}

static size_t rank_of(const char *name, const char *const *rank, size_t nrank) {
  for (size_t i = 0; i < nrank; i++)
    if (!strcmp(rank[i], name))
      return i;
  return nrank;
}

/* ":-<ALL>:+A:+B..." with the set in rank order */
static void elem_emit(strbuf *out, const char *all, const elem_set *s, const char *const *rank,
                      size_t nrank) {
  sb_printf(out, ":-%s", all);
  for (size_t r = 0; r <= nrank; r++)
    for (size_t i = 0; i < s->n; i++)
      if (rank_of(s->names[i], rank, nrank) == r)
        sb_printf(out, ":+%s", s->names[i]);
}

const char *tls_cipher_suite_name(size_t i) {
  return i < NSUITES ? go_suites[i].name : NULL;
}

bool tls_flag_hint(const char *msg, strbuf *out) {
  if (strstr(msg, "--tls-min-version: unknown tls version ")) {
    sb_append(out, "possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13");
    return true;
  }
  static const char suite_mark[] = "--tls-cipher-suites: Cipher suite ",
                    suite_end[] = " not supported or doesn't exist";
  const char *p = strstr(msg, suite_mark), *end;
  if (p && (end = strstr(p += sizeof suite_mark - 1, suite_end))) {
    strbuf name = {0};
    sb_appendn(&name, p, (size_t)(end - p));
    const char *names[NSUITES];
    for (size_t i = 0; i < NSUITES; i++)
      names[i] = go_suites[i].name;
    const char *near = str_nearest(sb_str(&name), names, NSUITES);
    if (near)
      sb_printf(out, "did you mean %s?", near);
    else
      sb_append(out, "the names are Go's (crypto/tls), e.g. "
                     "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 or TLS_AES_128_GCM_SHA256; "
                     "docs/security.md lists them");
    sb_free(&name);
    return true;
  }
  if (strstr(msg, "\"--tls-curve-preferences\" flag: ") ||
      (strstr(msg, "--tls-curve-preferences: curve preference ") &&
       (strstr(msg, "out of range") || strstr(msg, "current Go version")))) {
    sb_append(out, "the values are Go's tls.CurveID numbers:");
    for (size_t i = 0; i < NCURVES; i++)
      sb_printf(out, "%s %d (%s)", i ? "," : "", go_curves[i].id, go_curves[i].go_name);
    size_t served = 0, k = 0;
    for (size_t i = 0; i < NCURVES; i++)
      served += gnutls_group_get_id(go_curves[i].group) != GNUTLS_GROUP_INVALID;
    sb_append(out, "; GnuTLS serves ");
    for (size_t i = 0; i < NCURVES; i++)
      if (gnutls_group_get_id(go_curves[i].group) != GNUTLS_GROUP_INVALID)
        sb_printf(out, "%s%d", k++ ? (k == served ? " and " : ", ") : "", go_curves[i].id);
    sb_append(out, " here");
    return true;
  }
  return false;
}

/* Go's name of a suite id, else GnuTLS's with the id (a suite Go does not implement): false
 * then. */
static bool suite_name(strbuf *out, uint16_t id, const char *gnutls_name) {
  for (size_t i = 0; i < NSUITES; i++)
    if (go_suites[i].id == id) {
      sb_append(out, go_suites[i].name);
      return true;
    }
  sb_printf(out, "0x%04X (GnuTLS's %s, which Go does not implement)", id, gnutls_name);
  return false;
}

/* ---- parsing, as upstream ---- */

/* strconv's rule for base 0: an underscore only between digits, or after a base prefix */
static bool underscores_ok(const char *s) {
  char saw = '^'; /* ^ start, 0 digit or prefix, _ underscore, ! other */
  if (*s == '+' || *s == '-')
    s++;
  bool hex = false;
  size_t i = 0;
  if (s[0] == '0' && s[1] && strchr("bBoOxX", s[1])) {
    i = 2;
    saw = '0';
    hex = tolower((unsigned char)s[1]) == 'x';
  }
  for (; s[i]; i++) {
    if (isdigit((unsigned char)s[i]) || (hex && isxdigit((unsigned char)s[i]))) {
      saw = '0';
      continue;
    }
    if (s[i] == '_') {
      if (saw != '0')
        return false;
      saw = '_';
      continue;
    }
    if (saw == '_')
      return false;
    saw = '!';
  }
  return saw != '_';
}

/* Go's strconv.ParseInt(s, 0, 32): a sign, a 0x/0o/0b/0 prefix, underscores between digits.
 * -1 with *why ("invalid syntax", "value out of range") as strconv says it. */
static int go_parse_int32(const char *s0, long long *out, const char **why) {
  const char *s = s0;
  *why = "invalid syntax";
  bool neg = false;
  if (*s == '+' || *s == '-')
    neg = *s++ == '-';
  if (!*s)
    return -1;
  unsigned base = 10;
  if (s[0] == '0') {
    size_t len = strlen(s);
    char c = (char)tolower((unsigned char)s[1]);
    if (len >= 3 && (c == 'b' || c == 'o' || c == 'x')) {
      base = c == 'b' ? 2 : c == 'o' ? 8 : 16;
      s += 2;
    } else {
      base = 8;
      s += 1;
    }
  }
  unsigned long long n = 0, max = 0xFFFFFFFFull; /* ParseUint's bitSize 32 */
  bool underscores = false;
  for (; *s; s++) {
    unsigned d;
    char c = *s;
    if (c == '_') {
      underscores = true;
      continue;
    }
    if (isdigit((unsigned char)c))
      d = (unsigned)(c - '0');
    else if (isalpha((unsigned char)c))
      d = (unsigned)(tolower((unsigned char)c) - 'a' + 10);
    else
      return -1;
    if (d >= base)
      return -1;
    n = n * base + d;
    if (n > max) {
      *why = "value out of range";
      return -1;
    }
  }
  if (underscores && !underscores_ok(s0))
    return -1;
  unsigned long long cutoff = 1ull << 31;
  if ((!neg && n >= cutoff) || (neg && n > cutoff)) {
    *why = "value out of range";
    return -1;
  }
  *out = neg ? -(long long)n : (long long)n;
  return 0;
}

/* pflag's Int32Slice: every value split at commas, each element ParseInt'ed; the message is
 * pflag's wrapping of strconv's. */
static int parse_curves(const tls_flags *f, long long *ids, size_t *n, dserr *err) {
  *n = 0;
  for (size_t i = 0; i < f->ncurves; i++) {
    const char *v = f->curves[i];
    for (const char *p = v;;) {
      size_t len = strcspn(p, ",");
      strbuf elem = {0};
      sb_appendn(&elem, p, len);
      const char *why;
      long long id;
      if (go_parse_int32(sb_str(&elem), &id, &why) < 0) {
        strbuf sb = {0};
        sb_append(&sb, "invalid argument ");
        sb_append_go_quoted(&sb, v);
        sb_append(&sb, " for \"--tls-curve-preferences\" flag: strconv.ParseInt: parsing ");
        sb_append_go_quoted(&sb, sb_str(&elem));
        sb_printf(&sb, ": %s", why);
        dserr_set(err, "%s", sb_str(&sb));
        sb_free(&sb);
        sb_free(&elem);
        return -1;
      }
      sb_free(&elem);
      if (*n == CURVES_MAX)
        return dserr_set(err, "--tls-curve-preferences: more than %d curves", CURVES_MAX);
      ids[(*n)++] = id;
      if (!p[len])
        break;
      p += len + 1;
    }
  }
  return 0;
}

/* pflag's StringSlice (an empty value adds nothing) and component-base's TLSCipherSuites. */
static int parse_suites(const tls_flags *f, uint16_t *ids, size_t *n, dserr *err) {
  *n = 0;
  for (size_t i = 0; i < f->ncipher_suites; i++) {
    const char *v = f->cipher_suites[i];
    if (!*v)
      continue;
    for (const char *p = v;;) {
      size_t len = strcspn(p, ","), k;
      for (k = 0; k < NSUITES; k++)
        if (strlen(go_suites[k].name) == len && !strncmp(go_suites[k].name, p, len))
          break;
      if (k == NSUITES)
        return dserr_set(err,
                         "--tls-cipher-suites: Cipher suite %.*s not supported or doesn't exist",
                         (int)len, p);
      size_t j;
      for (j = 0; j < *n && ids[j] != go_suites[k].id; j++)
        ;
      if (j == *n && *n < NSUITES)
        ids[(*n)++] = go_suites[k].id;
      if (!p[len])
        break;
      p += len + 1;
    }
  }
  return 0;
}

/* component-base's TLSCurvePreferences, then GnuTLS's group for each. */
static int check_curves(const long long *ids, size_t n, const char **groups, dserr *err) {
  for (size_t i = 0; i < n; i++) {
    long long id = ids[i];
    if (id <= 0 || id > 65535)
      return dserr_set(err,
                       "--tls-curve-preferences: curve preference %lld is out of range (must be "
                       "1-65535)",
                       id);
    for (size_t j = 0; j < i; j++)
      if (ids[j] == id)
        return dserr_set(err, "--tls-curve-preferences: duplicate curve preference %lld", id);
    size_t k;
    for (k = 0; k < NCURVES && go_curves[k].id != id; k++)
      ;
    if (k == NCURVES)
      return dserr_set(err,
                       "--tls-curve-preferences: curve preference %lld is not supported by the "
                       "current Go version",
                       id);
    if (gnutls_group_get_id(go_curves[k].group) == GNUTLS_GROUP_INVALID)
      return dserr_set(err,
                       "--tls-curve-preferences: curve preference %lld (%s) cannot be served: "
                       "GnuTLS %s, which serves HTTPS here, has no %s group",
                       id, go_curves[k].go_name, gnutls_check_version(NULL), go_curves[k].group);
    groups[i] = go_curves[k].group;
  }
  return 0;
}

static int parse_min_version(const char *v, int *minor, dserr *err) {
  if (!v || !*v) {
    *minor = DEFAULT_MIN_MINOR;
    return 0;
  }
  for (int i = 0; i < 4; i++)
    if (!strcmp(v, version_names[i])) {
      *minor = i;
      return 0;
    }
  strbuf sb = {0};
  sb_append(&sb, "--tls-min-version: unknown tls version ");
  sb_append_go_quoted(&sb, v);
  dserr_set(err, "%s", sb_str(&sb));
  sb_free(&sb);
  return -1;
}

/* ---- GnuTLS ---- */

typedef struct {
  const char *kx, *cipher, *mac, *name; /* GnuTLS's names; kx NULL for a TLS 1.3 suite */
  bool tls13;
} gnutls_suite;

static bool find_gnutls_suite(uint16_t id, gnutls_suite *out) {
  unsigned char cs[2];
  gnutls_kx_algorithm_t kx;
  gnutls_cipher_algorithm_t cipher;
  gnutls_mac_algorithm_t mac;
  gnutls_protocol_t min;
  for (size_t i = 0;; i++) {
    const char *name = gnutls_cipher_suite_info(i, cs, &kx, &cipher, &mac, &min);
    if (!name)
      return false;
    if ((uint16_t)(cs[0] << 8 | cs[1]) != id)
      continue;
    *out = (gnutls_suite){kx == GNUTLS_KX_UNKNOWN ? NULL : gnutls_kx_get_name(kx),
                          gnutls_cipher_get_name(cipher), gnutls_mac_get_name(mac), name,
                          min == GNUTLS_TLS1_3};
    return true;
  }
}

typedef struct {
  int min_minor;
  bool tls13, tls12; /* the TLS 1.3 version, the versions from min to TLS 1.2 */
  bool suites;       /* the cipher, MAC and key exchange elements below replace NORMAL's */
  elem_set ciphers, macs, kxs;
  const char *const *groups;
  size_t ngroups;
} prio_plan;

static void plan_string(const prio_plan *p, strbuf *out) {
  sb_append(out, "NORMAL:-VERS-ALL");
  for (int minor = 3; minor >= p->min_minor; minor--)
    if (minor == 3 ? p->tls13 : p->tls12)
      sb_printf(out, ":+VERS-TLS1.%d", minor);
  if (p->suites) {
    elem_emit(out, "CIPHER-ALL", &p->ciphers, cipher_rank,
              sizeof cipher_rank / sizeof *cipher_rank);
    elem_emit(out, "MAC-ALL", &p->macs, mac_rank, sizeof mac_rank / sizeof *mac_rank);
    elem_emit(out, "KX-ALL", &p->kxs, kx_rank, sizeof kx_rank / sizeof *kx_rank);
  }
  if (p->ngroups) {
    sb_append(out, ":-GROUP-ALL");
    for (size_t i = 0; i < p->ngroups; i++)
      sb_printf(out, ":+GROUP-%s", p->groups[i]);
  }
}

/* The suites a priority string enables (ids[], is13[] says which are TLS 1.3 ones); -1 with
 * err when GnuTLS refuses the string (not expected: every element is GnuTLS's own name). */
static int enabled_suites(const char *prio, uint16_t *ids, bool *is13, size_t max, size_t *n,
                          dserr *err) {
  gnutls_priority_t pc;
  const char *at = NULL;
  *n = 0;
  int rc = gnutls_priority_init(&pc, prio, &at);
  if (rc == GNUTLS_E_NO_PRIORITIES_WERE_SET) /* no suite for the versions: none enabled */
    return 0;
  if (rc < 0)
    return dserr_set(err, "GnuTLS refuses the priority string \"%s\" at \"%s\": %s", prio,
                     at ? at : "", gnutls_strerror(rc));
  for (unsigned idx = 0;; idx++) {
    unsigned sidx;
    rc = gnutls_priority_get_cipher_suite_index(pc, idx, &sidx);
    if (rc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
      break;
    if (rc < 0 || *n == max)
      continue;
    unsigned char cs[2];
    gnutls_protocol_t min;
    if (!gnutls_cipher_suite_info(sidx, cs, NULL, NULL, NULL, &min))
      continue;
    ids[*n] = (uint16_t)(cs[0] << 8 | cs[1]);
    is13[(*n)++] = min == GNUTLS_TLS1_3;
  }
  gnutls_priority_deinit(pc);
  return 0;
}

static bool listed(const uint16_t *ids, size_t n, uint16_t id) {
  for (size_t i = 0; i < n; i++)
    if (ids[i] == id)
      return true;
  return false;
}

/* "A", "A and B", "A, B and C" of the enabled TLS 1.0-1.2 suites the list does not name; how
 * many, and in *nameable whether each has a Go name (one that has not cannot be listed) */
static size_t unnamed_suites(strbuf *out, const uint16_t *en, const bool *en13, size_t nen,
                             const uint16_t *ids, size_t n, bool *nameable) {
  size_t total = 0, k = 0;
  *nameable = true;
  for (size_t i = 0; i < nen; i++)
    total += !en13[i] && !listed(ids, n, en[i]);
  for (size_t i = 0; i < nen; i++) {
    if (en13[i] || listed(ids, n, en[i]))
      continue;
    if (k)
      sb_append(out, k + 1 == total ? " and " : ", ");
    gnutls_suite g = {0};
    find_gnutls_suite(en[i], &g);
    if (!suite_name(out, en[i], g.name ? g.name : "?"))
      *nameable = false;
    k++;
  }
  return total;
}

/* The cipher suites part of the plan: what the listed suites are made of, checked against
 * what GnuTLS then enables. */
static int plan_suites(prio_plan *p, const uint16_t *ids, size_t n, dserr *err) {
  p->suites = true;
  for (size_t i = 0; i < n; i++) {
    gnutls_suite g;
    if (!find_gnutls_suite(ids[i], &g)) {
      strbuf sb = {0};
      suite_name(&sb, ids[i], "");
      dserr_set(err,
                "--tls-cipher-suites: cipher suite %s cannot be served: GnuTLS %s, which serves "
                "HTTPS here, does not implement it",
                sb_str(&sb), gnutls_check_version(NULL));
      sb_free(&sb);
      return -1;
    }
    elem_add(&p->ciphers, g.cipher);
    elem_add(&p->macs, g.mac);
    elem_add(&p->kxs, g.kx);
  }
  strbuf prio = {0};
  plan_string(p, &prio);
  uint16_t en[256];
  bool en13[256];
  size_t nen = 0;
  int rc = enabled_suites(sb_str(&prio), en, en13, 256, &nen, err);
  sb_free(&prio);
  if (rc < 0)
    return -1;
  size_t n12 = 0, n13 = 0;
  for (size_t i = 0; i < nen; i++)
    en13[i] ? n13++ : n12++;
  if (p->tls12) {
    for (size_t i = 0; i < n; i++) {
      gnutls_suite g;
      find_gnutls_suite(ids[i], &g);
      if (g.tls13 || listed(en, nen, ids[i]))
        continue;
      strbuf sb = {0};
      suite_name(&sb, ids[i], g.name);
      dserr_set(err,
                "--tls-cipher-suites: cipher suite %s cannot be served: GnuTLS %s, which serves "
                "HTTPS here, does not enable it from %s:%s:%s",
                sb_str(&sb), gnutls_check_version(NULL), g.kx, g.cipher, g.mac);
      sb_free(&sb);
      return -1;
    }
    strbuf extra = {0};
    bool nameable;
    size_t nextra = unnamed_suites(&extra, en, en13, nen, ids, n, &nameable);
    if (nextra) {
      dserr_set(err,
                "--tls-cipher-suites: GnuTLS, which serves HTTPS here, enables every suite of "
                "the key exchanges, ciphers and MACs a list uses, so this list would also enable "
                "%s, which it does not name: %sleave out the suites that bring in %s key "
                "exchange, cipher or MAC",
                sb_str(&extra),
                !nameable        ? ""
                : nextra > 1     ? "add them to the list, or "
                                 : "add it to the list, or ",
                nextra > 1 ? "their" : "its");
      sb_free(&extra);
      return -1;
    }
    sb_free(&extra);
    p->tls12 = n12 > 0;
  }
  if (n13 == 0) {
    if (p->min_minor == 3) {
      /* TLS 1.3 alone: upstream's list has no effect there, Go's three suites are offered */
      for (size_t i = 0; i < sizeof tls13_ciphers / sizeof *tls13_ciphers; i++)
        elem_add(&p->ciphers, tls13_ciphers[i]);
      elem_add(&p->macs, "AEAD");
    } else {
      p->tls13 = false;
    }
  }
  if (!p->tls12 && !p->tls13)
    return dserr_set(err, "--tls-cipher-suites: no listed suite can be used from %s on",
                     version_names[p->min_minor]);
  return 0;
}

int tls_priorities(const tls_flags *f, strbuf *out, dserr *err) {
  long long curve_ids[CURVES_MAX];
  size_t ncurves;
  uint16_t suite_ids[NSUITES];
  size_t nsuites;
  const char *groups[CURVES_MAX];
  prio_plan p = {0};
  /* pflag's parse errors first, then ApplyTo's order: suites, curves, version */
  if (parse_curves(f, curve_ids, &ncurves, err) < 0 ||
      parse_suites(f, suite_ids, &nsuites, err) < 0 ||
      check_curves(curve_ids, ncurves, groups, err) < 0 ||
      parse_min_version(f->min_version, &p.min_minor, err) < 0)
    return -1;
  p.tls13 = true;
  p.tls12 = p.min_minor <= 2;
  p.groups = groups;
  p.ngroups = ncurves;
  if (nsuites && plan_suites(&p, suite_ids, nsuites, err) < 0)
    return -1;
  strbuf prio = {0};
  plan_string(&p, &prio);
  /* the final string as libmicrohttpd will hand it to GnuTLS */
  gnutls_priority_t pc;
  const char *at = NULL;
  int rc = gnutls_priority_init(&pc, sb_str(&prio), &at);
  if (rc < 0) {
    dserr_set(err, "GnuTLS refuses the priority string \"%s\" at \"%s\": %s", sb_str(&prio),
              at ? at : "", gnutls_strerror(rc));
    sb_free(&prio);
    return -1;
  }
  gnutls_priority_deinit(pc);
  sb_append(out, sb_str(&prio));
  sb_free(&prio);
  return 0;
}
