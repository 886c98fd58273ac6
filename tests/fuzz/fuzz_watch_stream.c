/* fuzz_watch_stream.c - libFuzzer target: the watch stream splitter of the watch cache
 * (watch_framer_feed, src/kube/watch.h) and the parse of each event it hands over.
 *
 * The first byte chooses how the rest is cut into chunks (libcurl hands a response over in
 * pieces of any size). The same bytes are fed whole and in those chunks: the events handed over,
 * in order, and the verdict (a broken stream, and where) must not depend on the cutting. Each
 * event starts with an opening bracket and ends with its closing one, and is parsed as the
 * cache parses it (doc_stream_memory_skipping with the parts no decoder reads left out), which
 * may refuse it with a message but must not crash. */
#include "fuzz_common.h"

#include "../../src/decode/decode.h"
#include "../../src/kube/watch.h"

typedef struct {
  strbuf seen; /* every event, each followed by a NUL */
  size_t n;
} events;

static int keep(void *ctx, doc_node *item, dserr *err) {
  (void)ctx, (void)item, (void)err;
  return 0;
}

static int on_event(void *ctx, const char *data, size_t len) {
  events *e = ctx;
  if (len < 2 || (data[0] != '{' && data[0] != '[') || (data[len - 1] != '}' && data[len - 1] != ']')) {
    fprintf(stderr, "an event that is not one bracketed value (%zu bytes)\n", len);
    abort();
  }
  sb_appendn(&e->seen, data, len);
  sb_appendc(&e->seen, 0);
  e->n++;
  arena *a = arena_new(4096);
  dserr err = {{0}};
  int rc = doc_stream_memory_skipping(DOC_FMT_JSON, "event", data, len, decode_unread_paths(), keep,
                                      NULL, a, NULL, &err);
  fuzz_require_error(rc, &err, "doc_stream_memory_skipping");
  arena_free(a);
  return 0;
}

static int feed(const char *data, size_t size, unsigned cut, events *out, const char **failure) {
  watch_framer f = {0};
  int rc = 0;
  size_t at = 0, step = 1 + cut % 17;
  while (at < size && rc == 0) {
    size_t n = cut ? (step < size - at ? step : size - at) : size;
    rc = watch_framer_feed(&f, data + at, n, on_event, out, failure);
    at += n;
    step = 1 + (step * 7 + cut) % 23;
  }
  watch_framer_free(&f);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  unsigned cut = data[0];
  const char *text = (const char *)data + 1;
  size--;
  events whole = {{0}, 0}, chunked = {{0}, 0};
  const char *fail_whole = NULL, *fail_chunked = NULL;
  int rc_whole = feed(text, size, 0, &whole, &fail_whole);
  int rc_chunked = feed(text, size, cut ? cut : 1, &chunked, &fail_chunked);
  if (rc_whole != rc_chunked || (fail_whole == NULL) != (fail_chunked == NULL) ||
      (fail_whole && strcmp(fail_whole, fail_chunked) != 0)) {
    fprintf(stderr, "the verdict depends on the cutting: %d %s / %d %s\n", rc_whole,
            fail_whole ? fail_whole : "-", rc_chunked, fail_chunked ? fail_chunked : "-");
    abort();
  }
  if (rc_whole < 0 && !fail_whole) {
    fprintf(stderr, "a broken stream without a reason\n");
    abort();
  }
  if (whole.n != chunked.n || whole.seen.len != chunked.seen.len ||
      (whole.seen.len && memcmp(whole.seen.buf, chunked.seen.buf, whole.seen.len) != 0)) {
    fprintf(stderr, "the events depend on the cutting: %zu / %zu\n", whole.n, chunked.n);
    abort();
  }
  sb_free(&whole.seen);
  sb_free(&chunked.seen);
  return 0;
}
