/* test_arena.c - the pool of large blocks (arena_pool_keep): a block an arena freed is handed
 * to the next arena that needs about its size, and what it held before never shows through
 * arena_alloc's zeroed memory; blocks of another size, small blocks and blocks past the cap
 * are not handed out. */
#include "../../src/util/arena.h"
#include "support/support.h"

#include <stdint.h>
#include <string.h>

#define MIB (1024 * 1024)

static bool all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i])
      return false;
  return true;
}

/* An arena with one block of `block` bytes, filled with 0xAB, then freed: the address its first
 * allocation had. */
static void *fill_and_free(size_t block) {
  arena *a = arena_new(block);
  unsigned char *p = arena_alloc_uninit(a, block, 16);
  memset(p, 0xAB, block);
  arena_free(a);
  return p;
}

static void test_reused_block_comes_zeroed(void **state) {
  (void)state;
  arena_pool_keep(8 * MIB);
  void *old = fill_and_free(MIB);
  arena *a = arena_new(MIB);
  unsigned char *p = arena_alloc(a, MIB / 2);
  assert_ptr_equal(p, old); /* the pooled block, not a new one */
  assert_true(all_zero(p, MIB / 2));
  unsigned char *q = arena_alloc(a, MIB / 2);
  assert_true(all_zero(q, MIB / 2));
  arena_free(a);
  arena_pool_keep(0);
}

static void test_reset_returns_blocks_to_the_pool(void **state) {
  (void)state;
  arena_pool_keep(8 * MIB);
  arena *a = arena_new(MIB);
  arena_alloc(a, MIB - 16); /* leaves 16 bytes of the first block */
  unsigned char *second = arena_alloc(a, 64);
  memset(second, 0xCD, 64);
  arena_reset(a); /* keeps the first block, lets the second go to the pool */
  arena *b = arena_new(MIB);
  unsigned char *p = arena_alloc(b, 64);
  assert_ptr_equal(p, second);
  assert_true(all_zero(p, 64));
  arena_free(b);
  arena_free(a);
  arena_pool_keep(0);
}

static void test_other_sizes_are_not_handed_out(void **state) {
  (void)state;
  arena_pool_keep(16 * MIB);
  void *four = fill_and_free(4 * MIB); /* stays pooled, so no new block can have its address */
  arena *a = arena_new(MIB);
  void *p = arena_alloc(a, 64);
  assert_ptr_not_equal(p, four); /* four times the size wanted: left in the pool */
  arena *b = arena_new(8 * MIB);
  void *q = arena_alloc(b, 64);
  assert_ptr_not_equal(q, four); /* too small */
  arena *c = arena_new(4 * MIB);
  assert_ptr_equal(arena_alloc(c, 64), four);
  arena_free(a);
  arena_free(b);
  arena_free(c);
  arena_pool_keep(0);
}

static void test_small_blocks_and_the_cap(void **state) {
  (void)state;
  arena_pool_keep(3 * MIB);
  void *small = fill_and_free(64 * 1024); /* below the pool's minimum: freed */
  void *one = fill_and_free(2 * MIB);     /* pooled */
  void *two = fill_and_free(2 * MIB);     /* past the cap of 3 MiB: freed */
  (void)small;
  (void)two;
  arena *a = arena_new(2 * MIB);
  assert_ptr_equal(arena_alloc(a, 64), one);
  arena *b = arena_new(2 * MIB);
  /* the pool is empty now: b's block is a new one, zeroed by the allocator */
  unsigned char *p = arena_alloc(b, 2 * MIB);
  assert_ptr_not_equal(p, one);
  assert_true(all_zero(p, 2 * MIB));
  arena_free(a);
  arena_free(b);
  /* without a pool nothing waits: the block just freed is not handed out again from a pool,
   * and a new arena's memory is zero either way */
  arena_pool_keep(0);
  arena *c = arena_new(2 * MIB);
  assert_true(all_zero(arena_alloc(c, 2 * MIB), 2 * MIB));
  arena_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reused_block_comes_zeroed),
      cmocka_unit_test(test_reset_returns_blocks_to_the_pool),
      cmocka_unit_test(test_other_sizes_are_not_handed_out),
      cmocka_unit_test(test_small_blocks_and_the_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
