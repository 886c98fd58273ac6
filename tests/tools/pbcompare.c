/* pbcompare - checks that a PodList or NodeList page read from protobuf gives what the same page
 * read from JSON gives: the trees (JSON cut down to the fields the decoders read) and the
 * decoded objects.
 *
 *   pbcompare [--kind Pod|Node] PAGE.json PAGE.pb     (default kind: Pod)
 *
 * Both pages are the same LIST as an API server answers it with `Accept: application/json`
 * and with `Accept: application/vnd.kubernetes.protobuf` (tests/realapi fetches them from a
 * real kube-apiserver). Exit 0 when everything agrees (one line saying how many objects), 1
 * with each difference on stderr, 2 on bad usage or an unreadable file. */
#include "../unit/support/pbcompare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void) {
  fprintf(stderr, "usage: pbcompare [--kind Pod|Node] PAGE.json PAGE.pb\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *kind = "Pod";
  int at = 1;
  if (argc > 2 && strcmp(argv[1], "--kind") == 0) {
    kind = argv[2];
    at = 3;
    if (strcmp(kind, "Pod") != 0 && strcmp(kind, "Node") != 0) {
      fprintf(stderr, "pbcompare: --kind: expected Pod or Node, got \"%s\"\n", kind);
      return 2;
    }
  }
  if (argc - at != 2)
    return usage();
  size_t jl, pl;
  char *json = read_file_text(argv[at], &jl), *pb = read_file_text(argv[at + 1], &pl);
  if (!json || !pb) {
    fprintf(stderr, "pbcompare: cannot read %s\n", !json ? argv[at] : argv[at + 1]);
    return 2;
  }
  strbuf report = {0};
  size_t objects;
  int diffs = pb_compare_pages(kind, json, jl, pb, pl, &objects, &report);
  if (diffs)
    fprintf(stderr, "%s%d difference(s) between %s and %s\n", sb_str(&report), diffs, argv[at],
            argv[at + 1]);
  else
    printf("%zu %s objects: the protobuf and JSON pages give the same trees and the same objects\n",
           objects, kind);
  sb_free(&report);
  free(json);
  free(pb);
  return diffs ? 1 : 0;
}
