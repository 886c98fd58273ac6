/* test_tlsconfig.c - the --tls-* flags as GnuTLS priority strings (obs/tlsconfig.h): the
 * strings for upstream's values, upstream's error texts for the values it refuses, our own for
 * what GnuTLS cannot serve exactly, and, for every accepted cipher suite name, that the string
 * made of it alone enables that suite in GnuTLS and no other TLS 1.0-1.2 suite. */
#include "../../src/obs/tlsconfig.h"
#include "support/support.h"

#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* tls_priorities of one value per flag (NULL: the flag not given) */
static int prio(const char *min, const char *suites, const char *curves, strbuf *out,
                dserr *err) {
  const char *s[1] = {suites}, *c[1] = {curves};
  tls_flags f = {min, s, suites != NULL, c, curves != NULL};
  return tls_priorities(&f, out, err);
}

static void expect_prio(const char *min, const char *suites, const char *curves,
                        const char *want) {
  strbuf sb = {0};
  dserr err = {{0}};
  int rc = prio(min, suites, curves, &sb, &err);
  if (rc != 0)
    fail_msg("min=%s suites=%s curves=%s: %s", min ? min : "-", suites ? suites : "-",
             curves ? curves : "-", err.msg);
  assert_string_equal(sb_str(&sb), want);
  sb_free(&sb);
}

static void expect_error(const char *min, const char *suites, const char *curves,
                         const char *want) {
  strbuf sb = {0};
  dserr err = {{0}};
  assert_int_equal(prio(min, suites, curves, &sb, &err), -1);
  assert_string_equal(err.msg, want);
  sb_free(&sb);
}

static void test_min_version(void **state) {
  (void)state;
  expect_prio(NULL, NULL, NULL, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
  /* upstream's default, VersionTLS12 */
  expect_prio("", NULL, NULL, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
  expect_prio("VersionTLS13", NULL, NULL, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
  expect_prio("VersionTLS12", NULL, NULL, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
  expect_prio("VersionTLS11", NULL, NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:+VERS-TLS1.1");
  expect_prio("VersionTLS10", NULL, NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:+VERS-TLS1.1:+VERS-TLS1.0");
  /* component-base's TLSVersion: exact, case-sensitive names */
  expect_error("VersionTLS14", NULL, NULL,
               "--tls-min-version: unknown tls version \"VersionTLS14\"");
  expect_error("versiontls13", NULL, NULL,
               "--tls-min-version: unknown tls version \"versiontls13\"");
  expect_error("1.3", NULL, NULL, "--tls-min-version: unknown tls version \"1.3\"");
}

static void test_cipher_suites(void **state) {
  (void)state;
  /* TLS 1.2 exactly the list; TLS 1.3 the suite of its cipher */
  expect_prio(NULL, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:-MAC-ALL:+AEAD:"
              "-KX-ALL:+ECDHE-ECDSA");
  /* OpenShift's Intermediate profile: both key exchanges with all three AEADs */
  expect_prio("VersionTLS12",
              "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256,"
              "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,"
              "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,"
              "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,"
              "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
              NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
              "+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA");
  /* the legacy ChaCha20 names component-base keeps; repeated names count once */
  expect_prio(NULL,
              "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
              NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+CHACHA20-POLY1305:-MAC-ALL:"
              "+AEAD:-KX-ALL:+ECDHE-RSA");
  /* no AEAD suite: no TLS 1.3 suite, so TLS 1.3 is left out */
  expect_prio(NULL, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-CBC:+AES-256-CBC:-MAC-ALL:+SHA1:"
              "-KX-ALL:+ECDHE-RSA");
  /* TLS 1.3 suites alone: no TLS 1.2 suite, so TLS 1.2 is left out (Go has none for it then) */
  expect_prio(NULL, "TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256", NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:-MAC-ALL:"
              "+AEAD:-KX-ALL");
  /* TLS 1.3 alone and a list that gives it no suite: Go's three, as upstream */
  expect_prio("VersionTLS13", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
              "+CHACHA20-POLY1305:+AES-128-CBC:-MAC-ALL:+AEAD:+SHA1:-KX-ALL:+ECDHE-RSA");
  /* ...and one that names one: that one */
  expect_prio("VersionTLS13", "TLS_AES_256_GCM_SHA384", NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-256-GCM:-MAC-ALL:+AEAD:-KX-ALL");
  /* the old versions with an insecure suite, which upstream accepts too */
  expect_prio("VersionTLS10", "TLS_RSA_WITH_3DES_EDE_CBC_SHA", NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.1:+VERS-TLS1.0:-CIPHER-ALL:+3DES-CBC:"
              "-MAC-ALL:+SHA1:-KX-ALL:+RSA");
  /* an empty value adds nothing (pflag's StringSlice): GnuTLS's defaults */
  expect_prio(NULL, "", NULL, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");

  /* component-base's TLSCipherSuites text, as given (no trimming, case-sensitive) */
  expect_error(NULL, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA384", NULL,
               "--tls-cipher-suites: Cipher suite TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA384 not "
               "supported or doesn't exist");
  expect_error(NULL, "TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384", NULL,
               "--tls-cipher-suites: Cipher suite  TLS_AES_256_GCM_SHA384 not supported or "
               "doesn't exist");
  expect_error(NULL, "TLS_AES_128_GCM_SHA256,,TLS_AES_256_GCM_SHA384", NULL,
               "--tls-cipher-suites: Cipher suite  not supported or doesn't exist");
  expect_error(NULL, "ECDHE-RSA-AES128-GCM-SHA256", NULL,
               "--tls-cipher-suites: Cipher suite ECDHE-RSA-AES128-GCM-SHA256 not supported or "
               "doesn't exist");
  /* what GnuTLS cannot serve exactly */
  expect_error(NULL,
               "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
               NULL,
               "--tls-cipher-suites: GnuTLS, which serves HTTPS here, enables every suite of the "
               "key exchanges, ciphers and MACs a list uses, so this list would also enable "
               "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 and TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "
               "which it does not name: add them to the list, or leave out the suites that bring "
               "in their key exchange, cipher or MAC");
  expect_error(NULL, "TLS_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", NULL,
               "--tls-cipher-suites: GnuTLS, which serves HTTPS here, enables every suite of the "
               "key exchanges, ciphers and MACs a list uses, so this list would also enable "
               "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, which it does not name: add it to the "
               "list, or leave out the suites that bring in its key exchange, cipher or MAC");
  /* a suite Go does not implement cannot be added: only leaving out helps */
  strbuf sb = {0};
  dserr err = {{0}};
  assert_int_equal(prio(NULL, "TLS_RSA_WITH_AES_128_CBC_SHA256,TLS_RSA_WITH_AES_256_CBC_SHA", NULL,
                        &sb, &err),
                   -1);
  assert_non_null(strstr(err.msg, "would also enable TLS_RSA_WITH_AES_128_CBC_SHA and 0x003D "
                                  "(GnuTLS's "));
  assert_non_null(strstr(err.msg, "which it does not name: leave out the suites"));
  sb_free(&sb);
  /* with TLS 1.3 alone the TLS 1.2 part cannot be negotiated, so it is not held to this */
  expect_prio("VersionTLS13",
              "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", NULL,
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:-MAC-ALL:+AEAD:"
              "-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA");
}

/* The IANA code of each name upstream accepts, written out again here (Go's crypto/tls
 * constants) to check the program's table against. */
static const struct {
  const char *name;
  uint16_t id;
  bool tls13;
} iana[] = {
    {"TLS_RSA_WITH_RC4_128_SHA", 0x0005, false},
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", 0x000a, false},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", 0x002f, false},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", 0x0035, false},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", 0x003c, false},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", 0x009c, false},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", 0x009d, false},
    {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", 0xc007, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", 0xc009, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", 0xc00a, false},
    {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", 0xc011, false},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", 0xc012, false},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", 0xc013, false},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", 0xc014, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", 0xc023, false},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", 0xc027, false},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", 0xc02f, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", 0xc02b, false},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", 0xc030, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", 0xc02c, false},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", 0xcca8, false},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", 0xcca9, false},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", 0xcca8, false},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", 0xcca9, false},
    {"TLS_AES_128_GCM_SHA256", 0x1301, true},
    {"TLS_AES_256_GCM_SHA384", 0x1302, true},
    {"TLS_CHACHA20_POLY1305_SHA256", 0x1303, true},
};
#define NIANA (sizeof iana / sizeof iana[0])

/* Every accepted name, alone, from TLS 1.0 on: GnuTLS enables that suite, no other TLS 1.0-1.2
 * suite, and at most the TLS 1.3 suite of its cipher. */
static void test_every_name_alone(void **state) {
  (void)state;
  size_t names = 0;
  for (const char *name; (name = tls_cipher_suite_name(names)); names++) {
    size_t k;
    for (k = 0; k < NIANA && strcmp(iana[k].name, name); k++)
      ;
    if (k == NIANA)
      fail_msg("%s: not a name upstream accepts", name);
    strbuf sb = {0};
    dserr err = {{0}};
    if (prio("VersionTLS10", name, NULL, &sb, &err) != 0)
      fail_msg("%s: %s", name, err.msg);
    gnutls_priority_t pc;
    assert_int_equal(gnutls_priority_init(&pc, sb_str(&sb), NULL), 0);
    size_t n12 = 0, n13 = 0;
    bool found = false;
    for (unsigned idx = 0;; idx++) {
      unsigned sidx;
      int rc = gnutls_priority_get_cipher_suite_index(pc, idx, &sidx);
      if (rc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
        break;
      if (rc < 0)
        continue;
      unsigned char id[2];
      gnutls_protocol_t min;
      assert_non_null(gnutls_cipher_suite_info(sidx, id, NULL, NULL, NULL, &min));
      min == GNUTLS_TLS1_3 ? n13++ : n12++;
      found |= (uint16_t)(id[0] << 8 | id[1]) == iana[k].id;
    }
    gnutls_priority_deinit(pc);
    if (!found)
      fail_msg("%s: not enabled by %s", name, sb_str(&sb));
    assert_int_equal(n12, iana[k].tls13 ? 0 : 1);
    assert_true(n13 <= 1);
    sb_free(&sb);
  }
  assert_int_equal(names, NIANA);
}

static void test_curves(void **state) {
  (void)state;
  expect_prio(NULL, NULL, "29",
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-GROUP-ALL:+GROUP-X25519");
  /* the order given; pflag's Int32Slice parses with base 0 */
  expect_prio(NULL, NULL, "24,0x17,0b11001",
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-GROUP-ALL:+GROUP-SECP384R1:"
              "+GROUP-SECP256R1:+GROUP-SECP521R1");
  /* occurrences add up */
  const char *c[2] = {"23", "29"};
  tls_flags f = {"VersionTLS13", NULL, 0, c, 2};
  strbuf sb = {0};
  dserr err = {{0}};
  assert_int_equal(tls_priorities(&f, &sb, &err), 0);
  assert_string_equal(sb_str(&sb),
                      "NORMAL:-VERS-ALL:+VERS-TLS1.3:-GROUP-ALL:+GROUP-SECP256R1:+GROUP-X25519");
  sb_free(&sb);
  /* with a cipher suite list */
  expect_prio(NULL, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "23",
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:-MAC-ALL:+AEAD:"
              "-KX-ALL:+ECDHE-ECDSA:-GROUP-ALL:+GROUP-SECP256R1");

  /* pflag's parse errors, with strconv's texts */
  expect_error(NULL, NULL, "X25519",
               "invalid argument \"X25519\" for \"--tls-curve-preferences\" flag: "
               "strconv.ParseInt: parsing \"X25519\": invalid syntax");
  expect_error(NULL, NULL, "23, 29",
               "invalid argument \"23, 29\" for \"--tls-curve-preferences\" flag: "
               "strconv.ParseInt: parsing \" 29\": invalid syntax");
  expect_error(NULL, NULL, "",
               "invalid argument \"\" for \"--tls-curve-preferences\" flag: strconv.ParseInt: "
               "parsing \"\": invalid syntax");
  expect_error(NULL, NULL, "4294967296",
               "invalid argument \"4294967296\" for \"--tls-curve-preferences\" flag: "
               "strconv.ParseInt: parsing \"4294967296\": value out of range");
  expect_error(NULL, NULL, "2147483648",
               "invalid argument \"2147483648\" for \"--tls-curve-preferences\" flag: "
               "strconv.ParseInt: parsing \"2147483648\": value out of range");
  expect_error(NULL, NULL, "2_9_",
               "invalid argument \"2_9_\" for \"--tls-curve-preferences\" flag: "
               "strconv.ParseInt: parsing \"2_9_\": invalid syntax");
  expect_prio(NULL, NULL, "2_9",
              "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-GROUP-ALL:+GROUP-X25519");
  /* component-base's TLSCurvePreferences texts */
  expect_error(NULL, NULL, "0",
               "--tls-curve-preferences: curve preference 0 is out of range (must be 1-65535)");
  expect_error(NULL, NULL, "-23",
               "--tls-curve-preferences: curve preference -23 is out of range (must be 1-65535)");
  expect_error(NULL, NULL, "65536",
               "--tls-curve-preferences: curve preference 65536 is out of range (must be 1-65535)");
  expect_error(NULL, NULL, "23,24,23", "--tls-curve-preferences: duplicate curve preference 23");
  expect_error(NULL, NULL, "30",
               "--tls-curve-preferences: curve preference 30 is not supported by the current Go "
               "version");
  /* Go's ML-KEM hybrids: served where this GnuTLS has them, refused by name where not */
  if (gnutls_group_get_id("X25519-MLKEM768") == GNUTLS_GROUP_INVALID) {
    char want[256];
    snprintf(want, sizeof want,
             "--tls-curve-preferences: curve preference 4588 (X25519MLKEM768) cannot be served: "
             "GnuTLS %s, which serves HTTPS here, has no X25519-MLKEM768 group",
             gnutls_check_version(NULL));
    expect_error(NULL, NULL, "29,4588", want);
  } else {
    expect_prio(NULL, NULL, "4588",
                "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-GROUP-ALL:+GROUP-X25519-MLKEM768");
  }
}

/* the order of the checks: pflag's parse errors, then ApplyTo's: suites, curves, version */
static void test_error_order(void **state) {
  (void)state;
  expect_error("bogus", "bogus", "x",
               "invalid argument \"x\" for \"--tls-curve-preferences\" flag: strconv.ParseInt: "
               "parsing \"x\": invalid syntax");
  expect_error("bogus", "bogus", "0",
               "--tls-cipher-suites: Cipher suite bogus not supported or doesn't exist");
  expect_error("bogus", NULL, "0",
               "--tls-curve-preferences: curve preference 0 is out of range (must be 1-65535)");
}

static void expect_hint(const char *msg, const char *want) {
  strbuf sb = {0};
  bool got = tls_flag_hint(msg, &sb);
  if (!want) {
    assert_false(got);
  } else {
    assert_true(got);
    assert_string_equal(sb_str(&sb), want);
  }
  sb_free(&sb);
}

static void test_hints(void **state) {
  (void)state;
  expect_hint("--tls-min-version: unknown tls version \"1.3\"",
              "possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13");
  expect_hint("--tls-cipher-suites: Cipher suite TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA384 not "
              "supported or doesn't exist",
              "did you mean TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256?");
  expect_hint("--tls-cipher-suites: Cipher suite ECDHE-RSA-AES128-GCM-SHA256 not supported or "
              "doesn't exist",
              "the names are Go's (crypto/tls), e.g. TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 or "
              "TLS_AES_128_GCM_SHA256; docs/security.md lists them");
  strbuf sb = {0};
  assert_true(tls_flag_hint("--tls-curve-preferences: curve preference 30 is not supported by "
                            "the current Go version",
                            &sb));
  assert_non_null(strstr(sb_str(&sb), "the values are Go's tls.CurveID numbers: 23 (CurveP256), "
                                      "24 (CurveP384), 25 (CurveP521), 29 (X25519), "));
  assert_non_null(strstr(sb_str(&sb), "; GnuTLS serves 23, 24, 25"));
  sb_free(&sb);
  expect_hint("--tls-curve-preferences: duplicate curve preference 23", NULL);
  expect_hint("unrelated", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_min_version),     cmocka_unit_test(test_cipher_suites),
      cmocka_unit_test(test_every_name_alone), cmocka_unit_test(test_curves),
      cmocka_unit_test(test_error_order),     cmocka_unit_test(test_hints),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
