/* args.h - strict decoding of plugin arguments from a document tree.
 *
 * Upstream decodes each registered plugin's `args` strictly into its Go type: an unknown or
 * repeated key fails the whole policy with `strict decoding error: unknown field "<path>"`.
 * Plugins describe their args as a table of fields (key, kind, offset into the C struct) and
 * args_decode does the rest: type checks with the field path, unknown and duplicate keys,
 * nil-versus-empty for lists and optional scalars.
 *
 * Decoded values live in the arena passed in. */
#ifndef DS_ARGS_H
#define DS_ARGS_H

#include "../util/arena.h"
#include "../doc/doc.h"
#include "../util/err.h"
#include "../apimachinery/selector.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  bool set;
  uint64_t v;
} opt_uint;

typedef struct {
  bool set;
  double v;
} opt_float;

typedef struct {
  bool set;
  int64_t v;
} opt_int;

typedef struct {
  bool set;
  bool v;
} opt_bool;

/* A list of strings; `set` distinguishes an absent list (nil) from an empty one. */
typedef struct {
  bool set;
  size_t n;
  const char **items;
} str_list;

typedef struct {
  bool set;
  size_t n;
  int32_t *items;
} i32_list;

/* A map of resource name to percentage, in the order written. */
typedef struct {
  bool set;
  size_t n;
  const char **keys;
  double *values;
} pct_map;

/* `namespaces: {include, exclude}` */
typedef struct {
  bool set;
  str_list include, exclude;
} ns_filter;

typedef enum {
  AF_BOOL,      /* bool */
  AF_OPT_BOOL,  /* opt_bool */
  AF_INT32,     /* int32_t */
  AF_INT64,     /* int64_t */
  AF_UINT,      /* uint64_t, rejects negatives */
  AF_OPT_UINT,  /* opt_uint */
  AF_OPT_INT,   /* opt_int */
  AF_OPT_FLOAT, /* opt_float: a number, integer or not */
  AF_STRING,    /* const char * (NULL when absent) */
  AF_STRINGS,   /* str_list */
  AF_INT32S,    /* i32_list */
  AF_PCT_MAP,   /* pct_map */
  AF_NAMESPACES, /* ns_filter */
  AF_SELECTOR,  /* label_selector * (NULL when absent) */
  AF_OBJECT,    /* nested struct at offset, fields in `sub` (NULL/absent leaves zeros) */
  AF_OBJECTS,   /* list of nested structs: {size_t n; void *items;} at offset, elem_size */
  AF_PRESENT,   /* bool set true when the key is present and not null, any value (see `sub`) */
} args_field_kind;

typedef struct args_field args_field;
struct args_field {
  const char *key;
  args_field_kind kind;
  size_t offset;
  const args_field *sub; /* AF_OBJECT, AF_OBJECTS: fields, terminated by a {NULL} entry */
  size_t elem_size;      /* AF_OBJECTS */
  size_t present_offset; /* AF_OBJECT: offset of a bool set when present (0 = none); the
                            bool must not be the struct's first member */
};

typedef struct {
  size_t n;
  void *items;
} obj_list;

/* Decodes `node` (a map, or NULL/null for zero args) into the struct at dst using fields.
 * `path` is the field path of node for type errors (e.g. "profiles[0].pluginConfig[1].args").
 * Unknown and duplicate keys produce upstream's text: `strict decoding error: unknown field
 * "<dotted path from the args root>"`. */
int args_decode(arena *a, const doc_node *node, const args_field *fields, void *dst,
                const char *path, dserr *err);

/* Common pre-filter checks (the namespaces filter of upstream's pkg/descheduler/pod/pods.go). */
bool ns_filter_allows(const ns_filter *f, const char *ns);
bool str_list_contains(const str_list *l, const char *s);

#endif
