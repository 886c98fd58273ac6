/* doc_pb.h - Kubernetes' protobuf encoding read into doc trees, by a schema.
 *
 * Asked with `Accept: application/vnd.kubernetes.protobuf`, kube-apiserver answers a LIST of
 * a built-in kind with the 4 bytes "k8s\0" and a runtime.Unknown message
 * (k8s.io/apimachinery/pkg/runtime/generated.proto) whose `raw` field holds the list: ListMeta
 * as field 1, every item as field 2 (k8s.io/api/core/v1/generated.proto, PodList). Protobuf
 * carries field numbers, not names, and every field with its length: a schema (pb_msg) names
 * the fields a caller reads and says how JSON writes each of them, and the reader builds for
 * those fields the tree the JSON reader builds from the same object's JSON; every other field
 * is stepped over by its length without being looked at (managedFields are half a pod).
 *
 * What "the same tree" takes, from how Go's generated code marshals (gogo, proto2):
 *  - a field that is no pointer in Go is always written, even when zero; JSON leaves it out
 *    when its tag says omitempty: such fields carry PB_OMITEMPTY and a zero value (empty
 *    string, 0, false) is then left out here too. Pointer fields are written when set, as
 *    JSON writes them.
 *  - a message that JSON writes inline (Go's `json:",inline"`, a Volume's VolumeSource) is
 *    PB_INLINE: its fields go into the enclosing map.
 *  - meta/v1 Time is {seconds, nanos}; JSON writes RFC 3339 to the second in UTC. A zero Time
 *    (an empty message) is left out, as JSON leaves it out or writes null (absent either way
 *    to a reader).
 *  - resource.Quantity is a message holding its canonical string, the string JSON writes.
 *  - a map<K,V> is a repeated entry message {key = 1, value = 2}; Go writes the keys sorted,
 *    as JSON does.
 *  - a string's bytes that are not UTF-8 are each U+FFFD, as Go's JSON encoder writes them;
 *    a NUL byte ends it for the tree's readers, as JSON's \u0000 does (an omitempty string
 *    that thus reads as empty is left out like an empty one).
 * Anything malformed (a length past its message, a varint of more than 10 bytes, a wire type a
 * schema field cannot have, a field that is no list written twice, groups) fails the read
 * with the byte offset and the field, never a crash. */
#ifndef DS_DOC_PB_H
#define DS_DOC_PB_H

#include "doc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  PB_STRING,   /* string -> DOC_STR */
  PB_INT,      /* int32/int64 varint -> DOC_INT */
  PB_BOOL,     /* bool varint -> DOC_BOOL */
  PB_MESSAGE,  /* -> DOC_MAP of the fields `msg` names */
  PB_INLINE,   /* a message whose fields `msg` names go into the enclosing map */
  PB_MAP,      /* a map entry message: `msg` names key (1, PB_STRING) and value (2) */
  PB_TIME,     /* meta/v1 Time -> RFC 3339 DOC_STR, left out when zero */
  PB_QUANTITY, /* resource.Quantity -> its string */
} pb_kind;

enum {
  PB_REPEATED = 1, /* a list (maps are repeated entries too: PB_MAP fields carry it) */
  PB_OMITEMPTY = 2 /* no pointer in Go, `omitempty` in JSON: a zero value is left out */
};

typedef struct pb_msg pb_msg;
typedef struct {
  uint32_t num;
  uint8_t kind;      /* pb_kind */
  uint8_t flags;     /* PB_REPEATED | PB_OMITEMPTY */
  const char *name;  /* the JSON name; unused for PB_INLINE */
  const pb_msg *msg; /* PB_MESSAGE, PB_INLINE, PB_MAP */
} pb_field;

/* The fields read of one message type, in ascending number order as Go writes them (the reader
 * looks a field up from where the last one was found), at most 32. */
struct pb_msg {
  const char *name; /* the message type, for messages */
  size_t n;
  const pb_field *fields;
};

/* One message's bytes into *out (a DOC_MAP in a). -1 with err naming `name`, the byte offset
 * and the field's path when it is malformed. */
int docpb_parse(arena *a, const char *name, const pb_msg *schema, const uint8_t *buf, size_t len,
                doc_node **out, dserr *err);

/* A "k8s\0" + runtime.Unknown list (a LIST page) whose items are read by item_schema: every
 * item to cb as doc_stream_* hands them (in an arena reset afterwards), and *header (if
 * hdr_arena is non-NULL, in it) a map {"kind": <the envelope's kind>, "metadata": {resourceVersion,
 * continue, remainingItemCount}} as the JSON page's root would give them. kind, when non-NULL,
 * is the list kind expected ("PodList"); another is refused. A non-zero return of cb stops the
 * read and is returned. -1 with err when the bytes are not such a list. */
int docpb_stream_list(const char *name, const uint8_t *buf, size_t len, const char *kind,
                      const pb_msg *item_schema, doc_item_cb cb, void *ctx, arena *hdr_arena,
                      doc_node **header, size_t *count, dserr *err);

/* One object in the envelope ("k8s\0" + runtime.Unknown whose kind must be `kind`) read by
 * schema into *out (in a). -1 with err when the bytes are not that. */
int docpb_parse_object(arena *a, const char *name, const uint8_t *buf, size_t len, const char *kind,
                       const pb_msg *schema, doc_node **out, dserr *err);

/* meta/v1 Status (an error answer in protobuf): status, message, reason, code */
extern const pb_msg docpb_status;

/* The list's continue token from a page's bytes without reading its items: 0 with *token (in
 * a; NULL when the page has none), -1 when the bytes are not a protobuf list. */
int docpb_list_continue(arena *a, const uint8_t *buf, size_t len, const char **token);

/* True when the bytes start with the protobuf envelope's magic "k8s\0". */
bool docpb_is_protobuf(const char *buf, size_t len);

/* The JSON tree `json` of an object cut down to what the schema reads, as docpb_parse builds
 * it from the same object's protobuf: the fields named and nothing else, nulls and (for
 * PB_OMITEMPTY fields) zero values left out, empty lists and maps left out (protobuf cannot
 * tell them from absent ones). For tests that compare both encodings of one
 * object, and the test that checks the schema covers what the decoders read. */
doc_node *docpb_project(arena *a, const pb_msg *schema, const doc_node *json);

#endif
