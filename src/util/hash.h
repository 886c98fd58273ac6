/* hash.h - the hashes of the project's own lookup tables: FNV-1a (64 bits) and, for longer
 * keys hashed whole, hash_words (eight bytes at a time).
 *
 * Chained: fnv1a_str(fnv1a(FNV1A_OFFSET, "ns", 2), "/name") hashes the bytes of both in
 * order, so a key in parts hashes as its joined text would. */
#ifndef DS_HASH_H
#define DS_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* Eight bytes at a time, each word mixed in with a multiply and a shift; never 0 (a table may
 * take 0 for an empty slot) */
static inline uint32_t hash_words(const void *data, size_t n) {
  const unsigned char *s = data;
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  for (; n >= 8; s += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  uint64_t w = 0;
  for (size_t i = 0; i < n; i++)
    w |= (uint64_t)s[i] << (8 * i);
  h = (h ^ w) * 0x94D049BB133111EBull;
  h ^= h >> 29;
  uint32_t r = (uint32_t)(h ^ (h >> 32));
  return r ? r : 1;
}

#endif
