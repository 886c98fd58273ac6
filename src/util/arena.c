/* arena.c - bump allocator; see arena.h. Blocks form a singly linked list, newest first. */
#include "arena.h"

#include "xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct block {
  struct block *next;
  size_t size, used;
  size_t dirty; /* bytes ever handed out: beyond this the block is still zero from calloc */
  max_align_t data[];
};

struct arena {
  struct block *head;
  size_t block_size, total;
  struct block *inline_block; /* arena_new_exact's block, freed with the arena itself */
};

/* ---------- the pool of large blocks (arena_pool_keep) ----------
 * Blocks of at least POOL_MIN bytes that arenas free wait here for the next arena that needs
 * one, up to pool_cap bytes in all, instead of going back to the system: a long-running
 * process whose cycles allocate the same large blocks again and again then writes to pages it
 * already has rather than taking a fresh, zeroed page from the kernel (a page fault) for
 * every 4 KiB of them. Arenas of any thread free and take blocks, hence the lock. */

#define POOL_MIN (256 * 1024)

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct block *pool;
static size_t pool_bytes, pool_cap;

void arena_pool_keep(size_t bytes) {
  pthread_mutex_lock(&pool_lock);
  __atomic_store_n(&pool_cap, bytes, __ATOMIC_RELAXED);
  while (pool && pool_bytes > pool_cap) {
    struct block *b = pool;
    pool = b->next;
    pool_bytes -= b->size;
    free(b);
  }
  pthread_mutex_unlock(&pool_lock);
}

/* A pooled block with room for want bytes and not much more (a quarter), or NULL. */
static struct block *pool_take(size_t want) {
  if (want < POOL_MIN || !__atomic_load_n(&pool_cap, __ATOMIC_RELAXED))
    return NULL;
  pthread_mutex_lock(&pool_lock);
  struct block **at = &pool, *b = NULL;
  for (; *at; at = &(*at)->next)
    if ((*at)->size >= want && (*at)->size - want <= want / 4) {
      b = *at;
      *at = b->next;
      pool_bytes -= b->size;
      break;
    }
  pthread_mutex_unlock(&pool_lock);
  return b;
}

/* Frees b, or keeps it in the pool when it is large and there is room. */
static void block_free(struct block *b) {
  if (b->size >= POOL_MIN && __atomic_load_n(&pool_cap, __ATOMIC_RELAXED)) {
    pthread_mutex_lock(&pool_lock);
    bool kept = pool_bytes + b->size <= pool_cap;
    if (kept) {
      b->next = pool;
      pool = b;
      pool_bytes += b->size;
    }
    pthread_mutex_unlock(&pool_lock);
    if (kept)
      return;
  }
  free(b);
}

void *arena_big_calloc(size_t n) {
  struct block *b = pool_take(n);
  if (b) {
    memset(b->data, 0, n);
  } else {
    b = xcalloc(1, sizeof *b + n);
    b->size = n;
  }
  return b->data;
}

void *arena_big_grow(void *items, size_t n, size_t *cap, size_t size) {
  if (n < *cap)
    return items;
  size_t ncap = *cap ? *cap * 2 : 8;
  void *p = arena_big_calloc(ncap * size);
  if (*cap)
    memcpy(p, items, *cap * size);
  arena_big_free(items);
  *cap = ncap;
  return p;
}

void arena_big_free(void *p) {
  if (p)
    block_free((struct block *)((char *)p - offsetof(struct block, data)));
}

arena *arena_new(size_t block_size) {
  arena *a = xmalloc(sizeof *a);
  a->head = NULL;
  a->block_size = block_size < 1024 ? 1024 : block_size;
  a->total = 0;
  a->inline_block = NULL;
  return a;
}

/* the inline block starts at the first max_align_t boundary after the arena */
#define INLINE_OFFSET ((sizeof(arena) + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1))

arena *arena_new_exact(size_t size) {
  arena *a = xcalloc(1, INLINE_OFFSET + sizeof(struct block) + size);
  struct block *b = (struct block *)((char *)a + INLINE_OFFSET);
  b->size = size;
  a->head = a->inline_block = b;
  a->block_size = 1024;
  return a;
}

size_t arena_footprint(const arena *a) {
  size_t n = 0;
  for (const struct block *b = a->head; b; b = b->next)
    n += b->used;
  return n;
}

void arena_free(arena *a) {
  if (!a)
    return;
  struct block *b = a->head;
  while (b) {
    struct block *n = b->next;
    if (b != a->inline_block)
      block_free(b);
    b = n;
  }
  free(a);
}

void arena_reset(arena *a) {
  struct block *b = a->head;
  if (!b)
    return;
  /* keep the oldest block (the tail), which has the default size */
  while (b->next) {
    struct block *n = b->next;
    if (b != a->inline_block)
      block_free(b);
    b = n;
  }
  b->used = 0;
  a->head = b;
  a->total = 0;
}

/* Room for size bytes at alignment align (a power of two): in the head block, or in a new
 * block (*out tells which). The block's `dirty` mark is brought up to date. */
static void *take(arena *a, size_t size, size_t align, struct block **out) {
  struct block *b = a->head;
  size_t start = b ? (b->used + align - 1) & ~(align - 1) : 0;
  if (!b || start > b->size || b->size - start < size) {
    size_t want = size > a->block_size ? size : a->block_size;
    /* fresh blocks come zeroed (large ones straight from the kernel), so only memory
     * handed out before a reset needs clearing again; a pooled block is dirty throughout */
    b = pool_take(want);
    if (b) {
      b->dirty = b->size;
    } else {
      b = xcalloc(1, sizeof *b + want);
      b->size = want;
      b->dirty = 0;
    }
    b->used = 0;
    if (a->head && size > a->block_size) {
      /* an oversized block goes behind the current one so the current keeps filling */
      b->next = a->head->next;
      a->head->next = b;
    } else {
      b->next = a->head;
      a->head = b;
    }
    start = 0;
  }
  *out = b;
  b->used = start + size;
  a->total += size;
  return (char *)b->data + start;
}

void *arena_alloc(arena *a, size_t size) {
  /* the alignment of max_align_t (16 here), not its size (32): sizes are rounded up to it */
  const size_t align = _Alignof(max_align_t);
  size = (size + align - 1) & ~(align - 1);
  if (size == 0)
    size = align;
  struct block *b;
  char *p = take(a, size, align, &b);
  size_t at = (size_t)(p - (char *)b->data);
  if (at < b->dirty)
    memset(p, 0, b->dirty - at < size ? b->dirty - at : size);
  if (b->used > b->dirty)
    b->dirty = b->used;
  return p;
}

void *arena_alloc_uninit(arena *a, size_t size, size_t align) {
  struct block *b;
  void *p = take(a, size ? size : 1, align, &b);
  if (b->used > b->dirty)
    b->dirty = b->used;
  return p;
}

char *arena_strndup(arena *a, const char *s, size_t len) {
  char *p = arena_alloc_uninit(a, len + 1, 1); /* strings need no alignment */
  memcpy(p, s, len);
  p[len] = 0;
  return p;
}

char *arena_strdup(arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

size_t arena_used(const arena *a) { return a->total; }

void arena_adopt(arena *a, arena *from) {
  if (!from)
    return;
  if (from->inline_block)
    abort(); /* its block is part of the arena itself */
  struct block *first = from->head;
  if (first) {
    struct block *last = first;
    while (last->next)
      last = last->next;
    /* behind a's head, which keeps filling; a's oldest block stays the tail (arena_reset) */
    if (a->head) {
      last->next = a->head->next;
      a->head->next = first;
    } else {
      a->head = first;
    }
  }
  a->total += from->total;
  free(from);
}

void *arena_grow(arena *a, void *items, size_t n, size_t *cap, size_t size) {
  if (n < *cap)
    return items;
  size_t ncap = *cap ? *cap * 2 : 8;
  void *p = arena_alloc(a, ncap * size);
  if (n)
    memcpy(p, items, n * size);
  *cap = ncap;
  return p;
}
