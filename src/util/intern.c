/* intern.c - open-addressing hash set of strings stored in an arena; see intern.h. */
#include "intern.h"

#include "arena.h"
#include "hash.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The strings met again and again (a namespace, a label key, "Running") are found in a small
 * direct-mapped cache by hash before the table, whose slot, hash and text are three loads from
 * memory a table of 100,000s of strings no longer holds in the cache. */
enum { RECENT = 1024 };
typedef struct {
  const char *s; /* NULL: empty */
  uint32_t h, len;
} recent_entry;

struct intern_table {
  arena *mem;
  const char **slots;
  uint32_t *hashes;
  size_t cap, count;
  intern_table *parent; /* a front (intern_new_front): misses go there */
  pthread_mutex_t lock; /* taken by the fronts of this table */
  recent_entry recent[RECENT];
};

intern_table *intern_new(void) {
  intern_table *t = calloc(1, sizeof *t);
  if (!t)
    abort();
  t->mem = arena_new(64 * 1024);
  t->cap = 1024;
  t->slots = calloc(t->cap, sizeof *t->slots);
  t->hashes = calloc(t->cap, sizeof *t->hashes);
  if (!t->slots || !t->hashes)
    abort();
  pthread_mutex_init(&t->lock, NULL);
  return t;
}

intern_table *intern_new_front(intern_table *parent) {
  intern_table *t = intern_new();
  t->parent = parent;
  return t;
}

void intern_free(intern_table *t) {
  if (!t)
    return;
  pthread_mutex_destroy(&t->lock);
  arena_free(t->mem);
  free(t->slots);
  free(t->hashes);
  free(t);
}

static void grow(intern_table *t) {
  size_t ncap = t->cap * 2;
  const char **ns = calloc(ncap, sizeof *ns);
  uint32_t *nh = calloc(ncap, sizeof *nh);
  if (!ns || !nh)
    abort();
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->slots[i])
      continue;
    size_t j = t->hashes[i] & (ncap - 1);
    while (ns[j])
      j = (j + 1) & (ncap - 1);
    ns[j] = t->slots[i];
    nh[j] = t->hashes[i];
  }
  free(t->slots);
  free(t->hashes);
  t->slots = ns;
  t->hashes = nh;
  t->cap = ncap;
}

/* The slot holding (s, len), or the empty slot where it goes. */
static size_t probe(const intern_table *t, const char *s, size_t len, uint32_t h) {
  size_t i = h & (t->cap - 1);
  while (t->slots[i] &&
         !(t->hashes[i] == h && strncmp(t->slots[i], s, len) == 0 && t->slots[i][len] == 0))
    i = (i + 1) & (t->cap - 1);
  return i;
}

static void store(intern_table *t, size_t i, const char *copy, uint32_t h) {
  t->slots[i] = copy;
  t->hashes[i] = h;
  if (++t->count * 2 > t->cap)
    grow(t);
}

const char *intern_n(intern_table *t, const char *s, size_t len) {
  uint32_t h = hash_words(s, len);
  recent_entry *r = &t->recent[h & (RECENT - 1)];
  if (r->s && r->h == h && r->len == len && memcmp(r->s, s, len) == 0)
    return r->s;
  size_t i = probe(t, s, len, h);
  const char *found = t->slots[i];
  if (!found) {
    if (t->parent) {
      pthread_mutex_lock(&t->parent->lock);
      found = intern_n(t->parent, s, len);
      pthread_mutex_unlock(&t->parent->lock);
    } else {
      found = arena_strndup(t->mem, s, len);
    }
    store(t, i, found, h);
  }
  if (len <= UINT32_MAX)
    *r = (recent_entry){found, h, (uint32_t)len};
  return found;
}

const char *intern(intern_table *t, const char *s) { return intern_n(t, s, strlen(s)); }

void intern_seed(intern_table *t, const char *s) {
  size_t len = strlen(s);
  uint32_t h = hash_words(s, len);
  size_t i = probe(t, s, len, h);
  if (!t->slots[i]) /* seeded already: the first copy stays */
    store(t, i, s, h);
}

size_t intern_count(const intern_table *t) { return t->count; }

size_t intern_bytes(const intern_table *t) {
  return arena_used(t->mem) + t->cap * (sizeof *t->slots + sizeof *t->hashes) + sizeof t->recent;
}

size_t intern_text_bytes(const intern_table *t) {
  return arena_used(t->mem);
}
