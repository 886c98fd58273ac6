/* tlsconfig.h - upstream's serving TLS flags as a GnuTLS priority string.
 *
 * --tls-min-version, --tls-cipher-suites and --tls-curve-preferences take what upstream's
 * SecureServingOptions takes (k8s.io/apiserver pkg/server/options/serving.go, checked by
 * k8s.io/component-base cli/flag's TLSVersion, TLSCipherSuites and TLSCurvePreferences): Go's
 * version names, Go's cipher suite names, Go's numeric tls.CurveID values. tls_priorities
 * turns them into the priority string libmicrohttpd hands GnuTLS (server.h), and refuses with
 * upstream's text what upstream refuses, and with its own what GnuTLS cannot serve exactly.
 *
 * What the listener then negotiates (docs/security.md#tls-versions-cipher-suites-and-groups):
 * - TLS versions from --tls-min-version (default VersionTLS12, as upstream) to TLS 1.3.
 * - TLS 1.0-1.2: exactly the listed suites. GnuTLS enables suites by key exchange, cipher and
 *   MAC, not one by one, so a list whose key exchanges, ciphers and MACs also make up a suite
 *   it does not name is refused, naming that suite (upstream would serve the list exactly).
 * - TLS 1.3: Go offers its three TLS 1.3 suites whatever the list says; GnuTLS picks TLS 1.3
 *   suites by cipher, from the same list. So TLS 1.3 offers the TLS 1.3 suites the list
 *   names, and those whose cipher a listed TLS 1.2 suite uses (AES-128-GCM, AES-256-GCM,
 *   ChaCha20-Poly1305): never more than upstream's three. A list that gives none leaves TLS
 *   1.3 out; with --tls-min-version=VersionTLS13 (TLS 1.3 alone, where upstream's list has
 *   no effect) it gives the three. A list with no TLS 1.0-1.2 suite leaves those versions
 *   out, as Go then has no suite for them either.
 * - Groups: the listed curves, in the order given (Go ignores the order); a curve Go knows
 *   that this GnuTLS cannot serve (the ML-KEM hybrids before GnuTLS 3.8.9) is refused.
 * Without a flag GnuTLS's NORMAL set is used, from TLS 1.2 on. */
#ifndef DS_TLSCONFIG_H
#define DS_TLSCONFIG_H

#include "../util/err.h"
#include "../util/strbuf.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  const char *min_version; /* --tls-min-version; NULL or "": VersionTLS12 */
  /* every --tls-cipher-suites value, each a comma-separated list (pflag's StringSlice:
   * occurrences add up, an empty one adds nothing) */
  const char *const *cipher_suites;
  size_t ncipher_suites;
  /* every --tls-curve-preferences value, each a comma-separated list (pflag's Int32Slice) */
  const char *const *curves;
  size_t ncurves;
} tls_flags;

/* Appends the GnuTLS priority string the flags stand for to out. 0, or -1 with err naming the
 * flag, then upstream's text where upstream has one: `--tls-min-version: unknown tls version
 * "X"`, `--tls-cipher-suites: Cipher suite X not supported or doesn't exist`, pflag's
 * `invalid argument "x" for "--tls-curve-preferences" flag: strconv.ParseInt: parsing "x":
 * invalid syntax`, `--tls-curve-preferences: duplicate curve preference 23`... */
int tls_priorities(const tls_flags *f, strbuf *out, dserr *err);

/* One line of advice (no newline) into out for a message of tls_priorities that says what
 * is wrong in upstream's words but not what is right: the values --tls-min-version takes, the
 * accepted cipher suite name a misspelt one is nearest to, the curve numbers. false for any
 * other message. */
bool tls_flag_hint(const char *msg, strbuf *out);
/* Every accepted cipher suite name in turn: i from 0 until NULL. Static. */
const char *tls_cipher_suite_name(size_t i);

#endif
