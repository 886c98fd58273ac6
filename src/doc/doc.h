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

#include "../util/arena.h"
#include "../util/err.h"
#include "../util/strbuf.h"

#include <stddef.h>
#include <stdbool.h>
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
/* The same, leaving parts of every object handed to cb that the caller never reads out of
 * its tree: skip is a NULL-terminated list of paths from the object's root, map keys joined
 * by '.', "[]" for every element of a list ("metadata.managedFields",
 * "spec.containers[].env"); they apply to the header's root as well. Those parts are still
 * read as JSON (a malformed one fails the stream, as when it is built). YAML, and JSON that
 * the fast reader leaves to yajl (doc/doc_fast.h), come whole: skipping saves work, it is no
 * filter a caller may rely on. */
int doc_stream_memory_skipping(doc_format fmt, const char *name, const char *buf, size_t len,
                               const char *const *skip, doc_item_cb cb, void *ctx,
                               arena *hdr_arena, doc_node **header, dserr *err);
int doc_stream_file_skipping(const char *path, const char *const *skip, doc_item_cb cb, void *ctx,
                             arena *hdr_arena, doc_node **header, dserr *err);

/* One large JSON file read by two threads. A worker reads the items of the root's `items`
 * from a file offset where an item probably starts (doc_find_item) up to the list's closing
 * bracket (doc_stream_items_at), while the caller streams the file from its start
 * (doc_stream_file_split). When the caller's reader meets an item that starts exactly at that
 * offset, the guess is proven and join hands the worker's items over in its place; when it
 * passes the offset elsewhere (the guess fell inside an item), or ends before it, drop says
 * the worker's items are not used and it reads them itself. Every item is thus handed over
 * once and in file order, whatever the guess; and with a join, after the items handed over
 * before it. join and drop run on the caller's thread; exactly one of them is called. */
typedef struct doc_split {
  uint64_t at;
  /* true with resume (the offset just after the worker's last item) and count (its items):
   * they are handed over; false (the worker failed): the caller's reader reads them, and drop
   * is not called */
  bool (*join)(void *ctx, uint64_t *resume, size_t *count);
  void (*drop)(void *ctx);
  void *ctx;
} doc_split;
/* The offset of a likely item start (a map with a `metadata` map, after "}," in a list) in the
 * `span` bytes of the file from offset `from` on: 0 with *at, -1 when there is none or the
 * file is not a JSON map. */
int doc_find_item(const char *path, uint64_t from, size_t span, uint64_t *at);
/* The worker's part: the items from offset at on to cb, up to the closing bracket of their
 * list. 0 with *resume and *count when every item was read and accepted by cb; cb's non-zero
 * return when it stopped the run; -1 when the bytes there are not a run of items the fast
 * JSON reader accepts (not an error of the file: the caller's reader will see). */
int doc_stream_items_at(const char *path, uint64_t at, const char *const *skip, doc_item_cb cb,
                        void *ctx, uint64_t *resume, size_t *count, dserr *err);
/* doc_stream_file_skipping, with a worker reading from split->at (split NULL: none). */
int doc_stream_file_split(const char *path, const char *const *skip, const doc_split *split,
                          doc_item_cb cb, void *ctx, arena *hdr_arena, doc_node **header,
                          dserr *err);

/* Lookups (NULL-safe: a NULL or non-map node yields NULL). */
doc_node *doc_get(const doc_node *map, const char *key);
/* doc_path(node, "metadata", "name", NULL) */
doc_node *doc_path(const doc_node *node, ...);
/* The string value if node is DOC_STR, else NULL. */
const char *doc_str(const doc_node *node);
/* Type name for messages: "a string", "a number", "a map", ... */
const char *doc_type_name(doc_type t);
/* Short rendering of a scalar for messages ("true", "\"abc\"", "a map"). */
const char *doc_describe(arena *a, const doc_node *node);

/* ---------- building, copying, comparing and writing trees (doc_write.c) ----------
 * Renderers (the KubeDescheduler profiles) build a tree and write it as YAML or JSON; tests
 * compare trees as data. Every node is allocated in the arena given; strings are copied. */
doc_node *doc_new_null(arena *a);
doc_node *doc_new_bool(arena *a, bool b);
doc_node *doc_new_int(arena *a, int64_t i);
doc_node *doc_new_str(arena *a, const char *s);
doc_node *doc_new_map(arena *a);
doc_node *doc_new_seq(arena *a);
/* A list of strings (NULL entries are not allowed). */
doc_node *doc_new_strs(arena *a, const char *const *items, size_t n);
/* Sets key in map (replacing an existing value, else appending). Returns value. */
doc_node *doc_map_put(arena *a, doc_node *map, const char *key, doc_node *value);
/* Appends value to seq. Returns value. */
doc_node *doc_seq_add(arena *a, doc_node *seq, doc_node *value);
/* Deep copy into a (used to keep one object of a streamed list). */
doc_node *doc_copy(arena *a, const doc_node *node);
/* Structural equality: maps are compared as key sets (order does not matter), lists in order,
 * an integer equals a number of the same value. On a difference, where (if non-NULL) gets
 * the path of the first one found ("profiles[0].pluginConfig[1].args.thresholds.cpu"). */
bool doc_equal(const doc_node *x, const doc_node *y, strbuf *where);
/* How a plain (unquoted) YAML scalar with this text would be read back: DOC_STR when the
 * text stays a string, else the type YAML 1.1 (go-yaml v2) resolves it to. */
doc_type doc_plain_scalar_type(const char *text);
/* Writes the tree as one block-style YAML document (libyaml's emitter), map keys sorted as
 * Go's encoding/json sorts them (byte order); strings that would read back as another type
 * are quoted. Lines are never folded. Returns -1 with err if libyaml fails. */
int doc_write_yaml(strbuf *out, const doc_node *node, dserr *err);
/* Writes the tree as JSON with map keys sorted; indent 0 = one line, else pretty-printed. */
void doc_write_json(strbuf *out, const doc_node *node, int indent);

#endif
