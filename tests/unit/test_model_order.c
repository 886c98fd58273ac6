/* test_model_order.c - model_finish gives each node its pods sorted by name, then namespace
 * (strcmp order, as the plugins rely on), whatever the names share: the sort compares eight
 * bytes of each name read past the node's common prefix, so the cases are names that are
 * prefixes of others, that share more than eight bytes, that end inside the eight bytes, that
 * are equal in two namespaces, and lists of every size around the insertion sort's limit. */
#include "../../src/model/model.h"
#include "support/fixtures.h"
#include "support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char ns[16], name[64];
} pod_key;

static int cmp_key(const void *a, const void *b) {
  const pod_key *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->ns, y->ns);
}

/* Puts the pods on node "a" in the given order, then checks the node's list against the keys
 * sorted by strcmp. */
static void check_order(pod_key *keys, size_t n) {
  cluster_begin();
  cluster_node("a");
  cluster_node("b");
  for (size_t i = 0; i < n; i++)
    cluster_pod(keys[i].name, "a", .ns = keys[i].ns);
  dserr err;
  model *m = load_model_text(cluster_end(), &err);
  assert_non_null(m);
  qsort(keys, n, sizeof *keys, cmp_key);
  const node *a = m->nodes.items[0];
  assert_string_equal(a->name, "a");
  assert_int_equal(a->npods, n);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(a->pods[i]->name, keys[i].name);
    assert_string_equal(a->pods[i]->ns, keys[i].ns);
  }
  model_free(m);
}

static void test_prefixes_and_namespaces(void **state) {
  (void)state;
  pod_key keys[] = {
      {"ns", "abcdefgh"},
      {"ns", "abcdefgh0"},
      {"ns", "abcdefghi"},
      {"ns", "abcdefgh-"},
      {"ns", "a"},
      {"ns", "ab"},
      {"ns", "a-"},
      {"ns", "a.b"},
      {"zz", "ab"},
      {"aa", "ab"},
      {"ns", "abcdefg"},
      {"ns", "b"},
      {"ns", "abcdefgz9"},
      {"ns", "0"},
      {"ns", "abcdefgh00000000001"},
      {"ns", "abcdefgh00000000000"},
  };
  check_order(keys, sizeof keys / sizeof *keys);
}

static void test_long_common_prefix(void **state) {
  (void)state;
  /* every name shares 17 bytes; some end right there, some differ only after 8 more */
  pod_key keys[] = {
      {"ns", "virt-launcher-vm-"},          {"ns", "virt-launcher-vm-9"},
      {"ns", "virt-launcher-vm-10"},        {"ns", "virt-launcher-vm-1"},
      {"ns", "virt-launcher-vm-12345678a"}, {"ns", "virt-launcher-vm-12345678"},
      {"ns", "virt-launcher-vm-12345677z"}, {"vm", "virt-launcher-vm-1"},
  };
  check_order(keys, sizeof keys / sizeof *keys);
}

static void test_already_sorted_and_reversed(void **state) {
  (void)state;
  pod_key keys[40];
  for (size_t i = 0; i < 40; i++) {
    snprintf(keys[i].ns, sizeof keys[i].ns, "ns");
    snprintf(keys[i].name, sizeof keys[i].name, "web-%02zu", i);
  }
  check_order(keys, 40);
  for (size_t i = 0; i < 40; i++)
    snprintf(keys[i].name, sizeof keys[i].name, "web-%02zu", 39 - i);
  check_order(keys, 40);
}

/* Random names from a few stems, in random order, for sizes around 64 (the insertion sort's
 * limit) and beyond. */
static void test_random_lists(void **state) {
  (void)state;
  static const char *const stems[] = {
      "", "a", "ab", "virt-launcher-", "virt-launcher-vm-000", "web-7d9f8c6b5-", "web-7d9f8c6b5-x"};
  static const char alphabet[] = "0a9z-.bc";
  static const size_t sizes[] = {2, 3, 63, 64, 65, 200};
  uint64_t seed = 0x5eed;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int round = 0; round < 5; round++) {
      size_t n = sizes[s];
      pod_key *keys = calloc(n, sizeof *keys);
      for (size_t i = 0; i < n; i++) {
        for (;;) {
          const char *stem = stems[xorshift64(&seed) % (sizeof stems / sizeof *stems)];
          size_t len = strlen(stem), extra = (size_t)(xorshift64(&seed) % 12);
          memcpy(keys[i].name, stem, len);
          for (size_t c = 0; c < extra; c++)
            keys[i].name[len + c] = alphabet[xorshift64(&seed) % (sizeof alphabet - 1)];
          keys[i].name[len + extra] = 0;
          snprintf(keys[i].ns, sizeof keys[i].ns, "%s", xorshift64(&seed) % 4 ? "ns" : "other");
          /* a pod name starts with a letter or digit; names are unique in a namespace */
          bool ok = keys[i].name[0] && keys[i].name[0] != '-' && keys[i].name[0] != '.';
          for (size_t k = 0; k < i && ok; k++)
            ok = cmp_key(&keys[k], &keys[i]) != 0;
          if (ok)
            break;
        }
      }
      check_order(keys, n);
      free(keys);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prefixes_and_namespaces),
      cmocka_unit_test(test_long_common_prefix),
      cmocka_unit_test(test_already_sorted_and_reversed),
      cmocka_unit_test(test_random_lists),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
