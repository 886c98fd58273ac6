/* jsonlibs.c - how fast the JSON libraries Debian bookworm packages parse the descheduler's
 * LIST pages, to tell whether the library is what limits decoding (docs/performance.md).
 *
 * Each page file is read into memory once; then every library parses every page, --repeat
 * times, and the best run's CPU time is printed as MB/s: yajl with callbacks that do nothing
 * (its tokenizer alone: the floor of the project's yajl-based reader), yajl's own tree
 * (yajl_tree_parse), json-c, jansson and cJSON (each building its tree, then freeing it), and
 * this project's reader (src/doc/doc.h, compiled in from the sources): the page streamed
 * item by item into trees, whole and with metadata.managedFields left unbuilt.
 * Built and run by bench/jsonlibs.sh; not part of the product or of `make test`.
 *
 * Usage: jsonlibs [--repeat N] PAGE.json... */
#include <cjson/cJSON.h>
#include <jansson.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "util/arena.h"
#include "doc/doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  char *buf;
  size_t len;
} page;

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int nop_null(void *c) {
  return c != NULL;
}
static int nop_bool(void *c, int b) {
  return c != NULL || b;
}
static int nop_num(void *c, const char *s, size_t n) {
  return c != NULL || s || n;
}
static int nop_str(void *c, const unsigned char *s, size_t n) {
  return c != NULL || s || n;
}
static int nop(void *c) {
  return c != NULL;
}
static const yajl_callbacks nop_callbacks = {nop_null, nop_bool, NULL, NULL, nop_num, nop_str,
                                             nop,      nop_str,  nop,  nop,  nop};

static int parse_yajl_events(const page *p) {
  int ctx = 1;
  yajl_handle h = yajl_alloc(&nop_callbacks, NULL, &ctx);
  int ok = yajl_parse(h, (const unsigned char *)p->buf, p->len) == yajl_status_ok &&
           yajl_complete_parse(h) == yajl_status_ok;
  yajl_free(h);
  return ok;
}

static int parse_yajl_tree(const page *p) {
  char err[256];
  yajl_val v = yajl_tree_parse(p->buf, err, sizeof err);
  yajl_tree_free(v);
  return v != NULL;
}

/* in jsonlibs_jsonc.c: json-c and jansson both name something json_object */
int jsonlibs_parse_json_c(const char *buf, size_t len);
static int parse_json_c(const page *p) {
  return jsonlibs_parse_json_c(p->buf, p->len);
}

static int parse_jansson(const page *p) {
  json_error_t e;
  json_t *o = json_loadb(p->buf, p->len, 0, &e);
  json_decref(o);
  return o != NULL;
}

static int parse_cjson(const page *p) {
  cJSON *o = cJSON_ParseWithLength(p->buf, p->len);
  cJSON_Delete(o);
  return o != NULL;
}

static int count_item(void *ctx, doc_node *item, dserr *err) {
  (void)err;
  ++*(size_t *)ctx;
  return item == NULL;
}

static int parse_project(const page *p, const char *const *skip) {
  size_t items = 0;
  dserr err;
  arena *hdr = arena_new(4096);
  doc_node *header = NULL;
  int rc = doc_stream_memory_skipping(DOC_FMT_JSON, "page", p->buf, p->len, skip, count_item,
                                      &items, hdr, &header, &err);
  arena_free(hdr);
  return rc == 0 && items > 0;
}

static int parse_project_whole(const page *p) { return parse_project(p, NULL); }

static int parse_project_skipping(const page *p) {
  static const char *const skip[] = {"metadata.managedFields", NULL};
  return parse_project(p, skip);
}

static const struct {
  const char *name;
  int (*parse)(const page *);
} libs[] = {{"yajl 2.1 (events, no-op callbacks)", parse_yajl_events},
            {"yajl 2.1 (yajl_tree)", parse_yajl_tree},
            {"json-c 0.16", parse_json_c},
            {"jansson 2.14", parse_jansson},
            {"cJSON 1.7.15", parse_cjson},
            {"this project's reader (items, whole)", parse_project_whole},
            {"this project's reader (no managedFields)", parse_project_skipping}};

static int read_page(const char *path, page *p) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  p->buf = malloc((size_t)n + 1);
  p->len = fread(p->buf, 1, (size_t)n, f);
  p->buf[p->len] = 0;
  fclose(f);
  return p->len == (size_t)n ? 0 : -1;
}

int main(int argc, char **argv) {
  int repeat = 3, first = 1;
  if (argc > 2 && strcmp(argv[1], "--repeat") == 0) {
    repeat = atoi(argv[2]);
    first = 3;
  }
  if (first >= argc || repeat < 1) {
    fprintf(stderr, "usage: jsonlibs [--repeat N] PAGE.json...\n");
    return 2;
  }
  size_t npages = (size_t)(argc - first), total = 0;
  page *pages = calloc(npages, sizeof *pages);
  for (size_t i = 0; i < npages; i++) {
    if (read_page(argv[first + (int)i], &pages[i]) < 0) {
      fprintf(stderr, "jsonlibs: cannot read %s\n", argv[first + (int)i]);
      return 2;
    }
    total += pages[i].len;
  }
  printf("%zu pages, %.1f MB; best of %d runs, CPU time\n", npages, (double)total / 1e6, repeat);
  for (size_t l = 0; l < sizeof libs / sizeof libs[0]; l++) {
    double best = 1e99;
    for (int r = 0; r < repeat; r++) {
      double t = cpu_seconds();
      for (size_t i = 0; i < npages; i++)
        if (!libs[l].parse(&pages[i])) {
          fprintf(stderr, "jsonlibs: %s refused page %zu\n", libs[l].name, i);
          return 1;
        }
      t = cpu_seconds() - t;
      if (t < best)
        best = t;
    }
    printf("%-38s %8.3f s %8.0f MB/s\n", libs[l].name, best, (double)total / 1e6 / best);
  }
  return 0;
}
