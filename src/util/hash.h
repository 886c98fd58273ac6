/* hash.h - FNV-1a (64 bits), the hash of the project's own lookup tables.
 *
 * Chained: fnv1a_str(fnv1a(FNV1A_OFFSET, "ns", 2), "/name") hashes the bytes of both in
 * order, so a key in parts hashes as its joined text would. */
#ifndef DS_HASH_H
#define DS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_OFFSET 1469598103934665603ull

static inline uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* the bytes of s up to its NUL */
static inline uint64_t fnv1a_str(uint64_t h, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    h = (h ^ *p) * 1099511628211ull;
  return h;
}

#endif
