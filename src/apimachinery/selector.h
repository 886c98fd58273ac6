/* selector.h - Kubernetes label selectors and node selector requirements.
 *
 * One compiled form serves every selector the descheduler meets: the string syntax of
 * `--node-selector`-like fields ("a in (x,y),!b,c=d"), metav1.LabelSelector objects
 * (matchLabels / matchExpressions in policies, PDBs, topology spread and affinity terms)
 * and node selector requirements of node affinity (which add Gt / Lt).
 *
 * A selector is a conjunction of requirements. `nothing` marks the selector that matches
 * no object (what a nil metav1.LabelSelector converts to). */
#ifndef DS_SELECTOR_H
#define DS_SELECTOR_H

#include "../util/arena.h"
#include "../doc/doc.h"
#include "../util/err.h"

#include <stdbool.h>
#include <stddef.h>

/* A label set: key/value pairs, keys unique. Strings are borrowed. */
typedef struct {
  const char *key, *value;
} kv;
typedef struct {
  size_t n;
  kv *items;
} kvlist;

/* Value of key in list, or NULL. */
const char *kv_get(const kvlist *list, const char *key);

typedef enum {
  SEL_IN,
  SEL_NOTIN,
  SEL_EXISTS,
  SEL_DOES_NOT_EXIST,
  SEL_EQUALS, /* "=" or "==": like In with one value */
  SEL_NOT_EQUALS,
  SEL_GT,
  SEL_LT
} sel_op;

typedef struct {
  const char *key;
  sel_op op;
  size_t nvalues;
  const char **values;
} sel_req;

typedef struct {
  bool nothing;
  size_t n;
  sel_req *reqs;
  /* A metav1.LabelSelector that upstream's metav1.LabelSelectorAsSelector refuses (a bad
   * key or value, an unknown operator, In without values...): its error text, exactly as Go
   * prints it; NULL for a usable selector. An invalid selector matches nothing; each user
   * decides what upstream does with it (a policy fails validation, a topology spread
   * constraint is skipped, a PDB covers no pod). */
  const char *invalid;
} label_selector;

/* Parses the string syntax (labels.Parse): comma-separated requirements, each `k=v`, `k==v`,
 * `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>N`, `k<N`. "" selects everything.
 * Keys and values are checked as label syntax. As Go's parser does, an empty value list
 * `k in ()` holds the one empty value (`k in ("")`). Selector lives in a. */
int selector_parse(arena *a, const char *text, label_selector **out, dserr *err);

/* Converts a metav1.LabelSelector map (matchLabels, matchExpressions with In / NotIn / Exists /
 * DoesNotExist). A NULL or null node gives the `nothing` selector; `{}` gives everything.
 * Returns -1 only for what would not decode into the Go type (a wrong type, an unknown
 * field); messages name `path`. What decodes but does not convert (bad label syntax, an
 * unknown operator, a missing key) gives 0 and a selector whose `invalid` holds upstream's
 * text (matchLabels in the order written first, then matchExpressions; the first failing
 * requirement, as LabelSelectorAsSelector stops there). */
int selector_from_doc(arena *a, const doc_node *node, const char *path, label_selector **out,
                      dserr *err);

/* Appends node selector requirements (node affinity matchExpressions: In, NotIn, Exists,
 * DoesNotExist, Gt, Lt) to a selector, with no label-syntax checks (the API server checked
 * them). Used by the object decoder. */
int selector_add_node_reqs(arena *a, label_selector *sel, const doc_node *exprs, const char *path,
                           dserr *err);

bool selector_matches(const label_selector *sel, const kvlist *labels);
/* true for the selector that selects everything (no requirements, not `nothing`). */
bool selector_is_empty(const label_selector *sel);

/* Label syntax checks (keys: optional DNS-subdomain prefix + "/" + name of at most 63
 * characters; values: empty or a name of at most 63 characters). Return NULL when valid,
 * else a short reason. */
const char *label_key_problem(const char *key);
const char *label_value_problem(const char *value);

#endif
