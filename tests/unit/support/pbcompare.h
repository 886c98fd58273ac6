/* pbcompare.h - one PodList or NodeList page in JSON and in protobuf (doc/doc_pb.h) read both
 * ways and compared: the trees (the JSON one cut down to the schema) and the decoded objects. */
#ifndef DS_TEST_PBCOMPARE_H
#define DS_TEST_PBCOMPARE_H

#include "../../../src/model/model.h"
#include "../../../src/util/strbuf.h"

/* Every field of a decoded pod, one line each, to sb: strings quoted (NULL as `nil`), lists
 * in order. Two decodings of one pod agree when their texts do. */
void pod_text(strbuf *sb, const pod *p);

/* Every field of a decoded node, as pod_text. */
void node_text(strbuf *sb, const node *n);

/* m's objects of kind "Pod" or "Node": how many, and the text of the i-th (pod_text,
 * node_text). */
size_t model_object_count(const model *m, const char *kind);
void model_object_text(strbuf *sb, const model *m, const char *kind, size_t i);

/* The pages json and pb (the same objects of kind "Pod" or "Node", as a real API server serves
 * them both ways) read and compared: item count, the list metadata, each item's tree (the JSON
 * one cut down to the kind's schema, decode_pb_schema) and each decoded object (pod_text,
 * node_text). 0 when all agree; else the number of differences, each described in report.
 * *objects: the objects compared. */
int pb_compare_pages(const char *kind, const char *json, size_t json_len, const char *pb,
                     size_t pb_len, size_t *objects, strbuf *report);

#endif
