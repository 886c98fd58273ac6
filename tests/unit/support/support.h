/* support.h - helpers for the cmocka unit tests.
 *
 * Tests hold their inputs as data: a policy (YAML text) and a cluster (a v1 List in JSON
 * text), run one simulated cycle, and assert on the plan and the log lines. */
#ifndef DS_TEST_SUPPORT_H
#define DS_TEST_SUPPORT_H

#include "../../../src/framework/framework.h"
#include "../../../src/kubevirt/simsink.h"
#include "../../../src/model/model.h"
#include "../../../src/policy/policy.h"
#include "../../../src/util/arena.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

typedef struct {
  model *m;
  policy *pol;
  fw_result res;
  bg_cache bg;
  dserr err;
  int rc;      /* 0 ok; -1 snapshot, policy or cycle error (err holds it) */
  char *logs;  /* everything logged during the run (at the verbosity given) */
} sim_run;

/* The state across cycles the runs keep (a Deployment's), or NULL (each cycle its own, seeded
 * from the nodes' annotations, as simulate does). */
extern fw_history *sim_history;

/* Runs one cycle. now is RFC 3339 or NULL (2026-01-01T00:00:00Z). verbosity sets --v. */
int sim_run_strings(sim_run *r, const char *policy_yaml, const char *snapshot_json, bool gate,
                    const char *now, int verbosity);
/* The same with a hook run after the policy is loaded and before the cycle (e.g. to add actual
 * utilization to the model); a hook failing with err fails the run. */
typedef int (*sim_prepare_fn)(model *m, const policy *pol, void *ctx, dserr *err);
int sim_run_prepared(sim_run *r, const char *policy_yaml, const char *snapshot_json, bool gate,
                     const char *now, int verbosity, sim_prepare_fn prepare, void *ctx);
/* The same with no gate and the default now; fails the test with the error unless the cycle
 * completes. */
sim_run sim_run_ok(const char *policy_yaml, const char *snapshot_json, int verbosity);
/* For a run kept in a zero-initialised static across a test's cycles: frees *r, then runs one
 * cycle into it as sim_run_strings does and fails the test unless the cycle completes. */
void sim_rerun(sim_run *r, const char *policy_yaml, const char *snapshot_json, bool gate,
               const char *now, int verbosity);
void sim_run_free(sim_run *r);
/* "ns/name" was evicted (or requested in background) by the cycle. */
bool sim_evicted(const sim_run *r, const char *ref);
/* Asserts that the cycle evicted (or requested in background) exactly these pods, "ns/name",
 * in any order. */
#define assert_evictions(r, ...) sim_assert_evictions((r), (const char *[]){__VA_ARGS__, NULL})
void sim_assert_evictions(const sim_run *r, const char *const *refs);
/* Number of log lines containing needle. */
int sim_log_count(const sim_run *r, const char *needle);

/* Loads a policy from text; NULL with err on failure. */
policy *load_policy_text(const char *yaml, dserr *err);
/* Loads a model from JSON text (model_finish applied); NULL with err. */
model *load_model_text(const char *json, dserr *err);

/* The next value of Marsaglia's xorshift64 sequence in *x (never 0 unless *x is): the
 * tests' seeded values, the same on every run. */
static inline uint64_t xorshift64(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* A cmocka group setup and teardown: test_mem is one arena for all tests of the group. */
extern arena *test_mem;
int test_mem_setup(void **state);
int test_mem_teardown(void **state);

/* Asserts that loading the policy fails with a message containing `expect`. */
#define assert_policy_error(yaml, expect)                                                          \
  do {                                                                                             \
    dserr e_;                                                                                      \
    policy *p_ = load_policy_text((yaml), &e_);                                                    \
    if (p_) {                                                                                      \
      policy_free(p_);                                                                             \
      fail_msg("policy loaded, expected error containing: %s", (expect));                         \
    }                                                                                              \
    if (!strstr(e_.msg, (expect)))                                                                 \
      fail_msg("error\n  %s\ndoes not contain\n  %s", e_.msg, (expect));                          \
  } while (0)

#endif
