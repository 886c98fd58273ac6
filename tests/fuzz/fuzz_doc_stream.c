/* fuzz_doc_stream.c - libFuzzer target: the streaming list reader (doc_stream_memory) in both
 * formats. Each item is walked inside the callback, while its scratch arena is alive; the
 * header is walked afterwards. Every 7th item stops the stream, as a failing decoder does. */
#include "fuzz_common.h"

typedef struct {
  arena *scratch;
  size_t items;
} stream_ctx;

static int on_item(void *ctx, doc_node *item, dserr *err) {
  stream_ctx *s = ctx;
  fuzz_walk_doc(s->scratch, item, 1u << 16);
  arena_reset(s->scratch);
  if (++s->items % 7 == 0 && item->type == DOC_STR)
    return dserr_set(err, "item %zu refused", s->items);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int fmt = DOC_FMT_JSON; fmt <= DOC_FMT_YAML; fmt++) {
    arena *hdr = arena_new(4096);
    stream_ctx s = {arena_new(4096), 0};
    doc_node *header = NULL;
    dserr err = {{0}};
    int rc = doc_stream_memory((doc_format)fmt, "fuzz", (const char *)data, size, on_item, &s, hdr,
                               &header, &err);
    fuzz_require_error(rc, &err, "doc_stream_memory");
    if (rc == 0 && header)
      fuzz_walk_doc(hdr, header, 1u << 20);
    /* without a header arena the reader owns one */
    s.items = 0;
    err.msg[0] = 0;
    rc = doc_stream_memory((doc_format)fmt, "fuzz", (const char *)data, size, on_item, &s, NULL,
                           NULL, &err);
    fuzz_require_error(rc, &err, "doc_stream_memory");
    arena_free(s.scratch);
    arena_free(hdr);
  }
  return 0;
}
