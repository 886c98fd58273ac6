/* jsonlibs_jsonc.c - json-c's part of bench/jsonlibs.c (its names clash with jansson's). */
#include <json-c/json.h>

#include <stddef.h>

int jsonlibs_parse_json_c(const char *buf, size_t len);

int jsonlibs_parse_json_c(const char *buf, size_t len) {
  struct json_tokener *tok = json_tokener_new_ex(64);
  struct json_object *o = json_tokener_parse_ex(tok, buf, (int)len);
  int ok = o != NULL;
  json_object_put(o);
  json_tokener_free(tok);
  return ok;
}
