/* doc.h - a small document tree for YAML and JSON, and a streaming list reader.
 *
 * Small documents (a policy, a kubeconfig, a KubeDescheduler CR, one API object) are read
 * whole into a tree of doc_node. Large `v1 List` documents (a cluster snapshot, an API list
 * page) are never held whole: doc_stream_* builds one list item at a time and hands it to a
 * callback, then reuses the memory. Scalars are typed as JSON would type them; plain YAML
 * scalars are resolved the way Kubernetes' YAML reader (go-yaml v2) resolves them, so
 * `yes` is a boolean and `010` an octal integer, as upstream reads them.
 *
 * Every node lives in the arena given to the parser. */
#ifndef DS_DOC_H
#define DS_DOC_H

#include "arena.h"
#include "err.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { DOC_NULL, DOC_BOOL, DOC_INT, DOC_FLOAT, DOC_STR, DOC_MAP, DOC_SEQ } doc_type;

typedef struct doc_node doc_node;
typedef struct {
  const char *key;
  doc_node *value;
} doc_pair;

struct doc_node {
  doc_type type;
  int line;         /* 1-based source line (YAML only; 0 when unknown) */
  int big;          /* DOC_INT whose literal does not fit in int64 (v.i is then clamped) */
  const char *text; /* scalar text as written (DOC_STR: the string) */
  union {
    int b;
    int64_t i;
    double f;
  } v;
  size_t n; /* number of pairs (map) or items (seq) */
  doc_pair *pairs;
  doc_node **items;
};

/* Whole-document parsers. On error return -1 with a message that names `name` (a file path
 * or a description) and the line (YAML) or byte offset (JSON). An empty document gives a
 * DOC_NULL root. YAML files with several documents are refused. */
int doc_parse_yaml(arena *a, const char *name, const char *buf, size_t len, doc_node **root,
                   dserr *err);
int doc_parse_yaml_file(arena *a, const char *path, doc_node **root, dserr *err);
int doc_parse_json(arena *a, const char *name, const char *buf, size_t len, doc_node **root,
                   dserr *err);

/* Streaming list reader. Calls item_cb for every element of the root object's `items` array,
 * one at a time, with the element's tree in a scratch arena that is reset afterwards (copy
 * what you keep). If the root has no `items` (a single object), item_cb is called once with
 * the whole root. After the stream ends, *header (if non-NULL) is the root map without its
 * items, in `hdr_arena`, so callers can read `kind` and `metadata.continue`.
 * A non-zero return from item_cb stops the stream and is returned (err filled by the callback).
 * The reader function fills buf and returns the byte count, 0 at end, -1 on error. */
typedef int (*doc_item_cb)(void *ctx, doc_node *item, dserr *err);
typedef long (*doc_read_fn)(void *src, char *buf, size_t cap);

typedef enum { DOC_FMT_JSON, DOC_FMT_YAML } doc_format;

int doc_stream_list(doc_format fmt, const char *name, doc_read_fn read, void *src, doc_item_cb cb,
                    void *ctx, arena *hdr_arena, doc_node **header, dserr *err);
/* Convenience: stream a document held in memory. */
int doc_stream_memory(doc_format fmt, const char *name, const char *buf, size_t len,
                      doc_item_cb cb, void *ctx, arena *hdr_arena, doc_node **header, dserr *err);
/* Convenience: stream a file; the format is guessed from its first non-blank byte
 * ('{' or '[' = JSON, anything else = YAML). */
int doc_stream_file(const char *path, doc_item_cb cb, void *ctx, arena *hdr_arena,
                    doc_node **header, dserr *err);

/* Lookups (NULL-safe: a NULL or non-map node yields NULL). */
doc_node *doc_get(const doc_node *map, const char *key);
/* doc_path(node, "metadata", "name", NULL) */
doc_node *doc_path(const doc_node *node, ...);
/* The string value if node is DOC_STR, else NULL. */
const char *doc_str(const doc_node *node);
/* A deep copy of n in a (for keeping an item of a streamed list). NULL for NULL. */
doc_node *doc_copy(arena *a, const doc_node *n);
/* Type name for messages: "a string", "a number", "a map", ... */
const char *doc_type_name(doc_type t);
/* Short rendering of a scalar for messages ("true", "\"abc\"", "a map"). */
const char *doc_describe(arena *a, const doc_node *node);

#endif
