/* doc_fast.h - the fast JSON reader behind doc.h's JSON entry points (used by doc.c only).
 *
 * yajl tokenizes at about 450 MB/s and the event-driven tree builder on top of it brings the
 * whole read to about 100 MB/s; a cluster's LIST pages are a gigabyte at 150,000 pods
 * (docs/performance.md). This reader parses a complete buffer by recursive descent straight
 * into doc_node trees, and leaves out the parts of list items a caller never reads (their
 * JSON still checked) without building them.
 *
 * It accepts strict RFC 8259 JSON only, and less: anything unusual (a \u escape of a surrogate
 * or of NUL, whitespace other than space, tab, CR and LF, nesting deeper than
 * DOCF_MAX_DEPTH, a root that is not a map, a second `items`) is refused, and so is every
 * malformed document. The caller then reads the input again with yajl, which builds the same
 * tree for what both accept and gives its exact message for what is malformed. So what this
 * reader accepts, yajl accepts with the same tree (tests/fuzz/fuzz_json_fast.c checks it). */
#ifndef DS_DOC_FAST_H
#define DS_DOC_FAST_H

#include "doc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DOCF_MAX_DEPTH 256

enum { DOCF_OK = 0, DOCF_REFUSED = -1, DOCF_MORE = -2, DOCF_STOPPED = -3 };

/* One whole document in buf into *root (nodes in a). DOCF_REFUSED: let yajl read it. */
int docf_parse(arena *a, const char *buf, size_t len, doc_node **root);

/* Where a streamed document comes from: a buffer in memory, or a file read in windows. */
typedef struct {
  const char *mem; /* the whole document, or NULL for a file */
  size_t mem_len;
  FILE *file;
  size_t window; /* a file's first window in bytes; 0 = 4 MiB (tests use tiny ones) */
  const doc_split *split; /* a file's items read from an offset on by a worker (doc.h), or NULL */
} docf_source;

/* The streaming reader (doc_stream_*): items of the root's `items` go to cb one by one in
 * item_arena (reset after each), everything else of the root into hdr; skip lists paths of
 * item parts left out (doc.h). *delivered counts the objects handed to cb. Returns DOCF_OK
 * (then *root is the root map, items replaced by an empty list, or the whole object when
 * there are no items; it was handed to cb), DOCF_REFUSED, or DOCF_STOPPED when cb returned
 * non-zero (*cb_rc, which ends the stream). */
int docf_stream(const docf_source *src, const char *const *skip, doc_item_cb cb, void *ctx,
                arena *hdr, arena *item_arena, doc_node **root, size_t *delivered, int *cb_rc,
                dserr *err);

/* The worker's part of a split (doc.h, doc_stream_items_at): the items from file offset at on
 * (read in windows of first_window bytes to begin with, 0 = 4 MiB),
 * up to the closing bracket of their list, to cb one by one. DOCF_OK with *resume the offset
 * just after the last item; DOCF_STOPPED when cb returned non-zero (*cb_rc); DOCF_REFUSED when
 * what is there is not such a run of items the fast reader accepts, or the end came first. */
int docf_stream_items_at(FILE *file, size_t first_window, uint64_t at, const char *const *skip,
                         doc_item_cb cb, void *ctx, arena *item_arena, uint64_t *resume,
                         size_t *delivered, int *cb_rc, dserr *err);

/* Where an item of a list of objects probably starts, in the span bytes of file from offset
 * from on (doc.h, doc_find_item). DOCF_OK with *at, else DOCF_REFUSED. */
int docf_find_item(FILE *file, uint64_t from, size_t span, uint64_t *at);

/* The continue token of a LIST page read from its first bytes, as the API server writes the
 * list's metadata before its items: 1 with *token (in a, NULL when the page has none) when
 * the root map's `metadata` comes before `items`, 0 when the page does not say so up front
 * (then only reading the whole page tells). */
int docf_list_continue(arena *a, const char *buf, size_t len, const char **token);

/* JSON number text into an integer or float node (shared with the yajl tree builder). */
void doc_type_json_number(doc_node *n, const char *text);

/* yajl's readers alone (doc.c), for the tests that compare both readers. */
int doc_yajl_parse(arena *a, const char *name, const char *buf, size_t len, doc_node **root,
                   dserr *err);
int doc_yajl_stream(const char *name, const char *buf, size_t len, doc_item_cb cb, void *ctx,
                    arena *hdr_arena, doc_node **header, dserr *err);

#endif
