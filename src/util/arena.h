/* arena.h - bump allocator for data that lives and dies together.
 *
 * The cluster model, a decoded policy and one cycle's scratch data each live in an arena:
 * objects are never freed one by one, the whole arena is reset or freed at once. Every
 * allocation is zeroed, except arena_alloc_uninit's. Allocation failure aborts the process
 * (out of memory is not a recoverable condition for this program). */
#ifndef DS_ARENA_H
#define DS_ARENA_H

#include <stddef.h>

typedef struct arena arena;

/* Creates an empty arena whose blocks are at least block_size bytes. Caller frees. */
arena *arena_new(size_t block_size);
void arena_free(arena *a);
/* Forgets every allocation but keeps the first block for reuse. */
void arena_reset(arena *a);
/* Zeroed memory aligned for any type, valid until the arena is reset or freed. */
void *arena_alloc(arena *a, size_t size);
/* Memory at alignment align (a power of two, at most alignof(max_align_t)) that is NOT
 * zeroed, for callers that fill all of it (the JSON reader's nodes and strings). */
void *arena_alloc_uninit(arena *a, size_t size, size_t align);
/* Copies (s, len) plus a terminating NUL into the arena. */
char *arena_strndup(arena *a, const char *s, size_t len);
char *arena_strdup(arena *a, const char *s);
/* For a vector of n items of `size` bytes with room for *cap in a: the same vector when there
 * is room for one more, else a copy with twice the room (*cap updated; 8 when empty). */
void *arena_grow(arena *a, void *items, size_t n, size_t *cap, size_t size);
/* Bytes handed out so far (for benchmarks and tests). */
size_t arena_used(const arena *a);
/* Takes every block of `from` (not an arena_new_exact one) into a and frees `from`: what was
 * allocated there lives as long as a now. a goes on filling its current block. */
void arena_adopt(arena *a, arena *from);
/* Bytes the arena's blocks hold up to their last allocation, alignment padding included:
 * what an arena_new_exact of the same allocations needs. */
size_t arena_footprint(const arena *a);
/* An arena whose first block holds exactly `size` bytes, in the same heap allocation as the
 * arena itself (one malloc). For one object of a long-lived cache that is freed on its own:
 * make the same allocations in a scratch arena first, then here with its arena_footprint, and
 * nothing is wasted. Allocations beyond `size` go to further blocks as usual. */
arena *arena_new_exact(size_t size);
/* Lets freed blocks of 256 KiB or more wait, up to `bytes` in all, for the next arena that
 * needs a block of about their size (0, the default: free them at once). For a process that
 * runs cycle after cycle: their pages stay mapped instead of being faulted in afresh. */
void arena_pool_keep(size_t bytes);
/* n zeroed bytes for a large table or array of its own that a cycle frees and the next one
 * needs again: a pooled block of about that size when one waits, else new memory. Released
 * with arena_big_free (NULL is fine), never free(). */
void *arena_big_calloc(size_t n);
void arena_big_free(void *p);
/* xgrow (xalloc.h) for an arena_big_calloc array: the same array when there is room for one
 * more, else a copy with twice the room, the rest zeroed (*cap updated; 8 when empty). */
void *arena_big_grow(void *items, size_t n, size_t *cap, size_t size);
/* The bytes an arena_new_exact adds to `size`: its headers and the heap's. */
#define ARENA_EXACT_OVERHEAD 80

#define ARENA_NEW(a, type) ((type *)arena_alloc((a), sizeof(type)))
#define ARENA_NEWN(a, type, n) ((type *)arena_alloc((a), sizeof(type) * (size_t)(n)))

#endif
