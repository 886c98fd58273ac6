/* decode.h - Kubernetes objects (JSON or YAML) into the model.
 *
 * One code path for a snapshot file (`kubectl get ... -A -o json|yaml`, a v1 List) and for an
 * API list page: the streaming reader in util/doc.h hands over one object at a time and
 * decode_object keeps what the model needs. Objects of kinds the model does not use are
 * counted and skipped (V4 log). A malformed object is an error naming the object and the
 * field. */
#ifndef DS_DECODE_H
#define DS_DECODE_H

#include "../model/model.h"
#include "../util/doc.h"
#include "../util/err.h"

/* Adds one object to the model. `kind_hint` is used when the object has no `kind` (items of
 * a typed API list such as PodList carry none): "Pod", "Node", ... or NULL.
 * Errors name the field path inside the object. */
int decode_object(model *m, const doc_node *obj, const char *kind_hint, dserr *err);

/* Streams a snapshot file (v1 List or a single object, JSON or YAML) into the model.
 * Does not call model_finish. Errors are prefixed with the path and items[<i>]. */
int decode_snapshot_file(model *m, const char *path, dserr *err);

/* Streams an API list response body held in memory into the model. On success *next_token is
 * the list's metadata.continue (heap copy, caller frees; NULL when the list is complete) and
 * *count the number of items. */
int decode_list_page(model *m, const char *name, const char *body, size_t len,
                     const char *kind_hint, char **next_token, size_t *count, dserr *err);

/* Live mode's rule (one bad object never stops a cycle for the rest): the same, but an item
 * that cannot be decoded is left out of the model and reported to skip with its kind, its
 * "namespace/name" (or "items[<i>]" when it has none) and why. The page itself must still
 * be well-formed JSON: a broken or truncated body fails as above. *count counts the items
 * read, skipped ones included. */
typedef void (*decode_skip_fn)(void *ctx, const char *kind, const char *object, const char *why);
int decode_list_page_skipping(model *m, const char *name, const char *body, size_t len,
                              const char *kind_hint, decode_skip_fn skip, void *skip_ctx,
                              char **next_token, size_t *count, dserr *err);

#endif
