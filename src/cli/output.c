/* output.c - see output.h. */
#include "output.h"

#include "../doc/doc.h"
#include "../util/arena.h"

#include <string.h>

int output_parse(const char *who, const char *value, output_format *f) {
  static const struct {
    const char *name;
    output_format f;
  } formats[] = {{"text", OUTPUT_TEXT}, {"json", OUTPUT_JSON}, {"yaml", OUTPUT_YAML}};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (value && !strcmp(value, formats[i].name)) {
      *f = formats[i].f;
      return 0;
    }
  fprintf(stderr, "%s: --output: expected text, json or yaml, got \"%s\"\n", who,
          value ? value : "");
  return -1;
}

int output_document(const char *who, output_format f, const strbuf *json, FILE *out) {
  if (f != OUTPUT_YAML) {
    fputs(sb_str(json), out);
    if (!json->len || sb_str(json)[json->len - 1] != '\n')
      fputc('\n', out);
    return 0;
  }
  arena *a = arena_new(64 * 1024);
  doc_node *root = NULL;
  strbuf yaml = {0};
  dserr err;
  int rc = doc_parse_json(a, "output", sb_str(json), json->len, &root, &err);
  if (rc == 0)
    rc = doc_write_yaml(&yaml, root, &err);
  if (rc == 0)
    fputs(sb_str(&yaml), out);
  else
    fprintf(stderr, "%s: writing YAML: %s\n", who, err.msg);
  sb_free(&yaml);
  arena_free(a);
  return rc < 0 ? -1 : 0;
}
