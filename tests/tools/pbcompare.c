/* pbcompare - checks that a PodList page read from protobuf gives what the same page read from
 * JSON gives: the trees (JSON cut down to the fields the decoders read) and the decoded pods.
 *
 *   pbcompare PAGE.json PAGE.pb
 *
 * Both pages are the same LIST as an API server answers it with `Accept: application/json`
 * and with `Accept: application/vnd.kubernetes.protobuf` (tests/realapi fetches them from a
 * real kube-apiserver). Exit 0 when everything agrees (one line saying how many pods), 1 with
 * each difference on stderr, 2 on bad usage or an unreadable file. */
#include "../unit/support/pbcompare.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: pbcompare PAGE.json PAGE.pb\n");
    return 2;
  }
  size_t jl, pl;
  char *json = read_file_text(argv[1], &jl), *pb = read_file_text(argv[2], &pl);
  if (!json || !pb) {
    fprintf(stderr, "pbcompare: cannot read %s\n", !json ? argv[1] : argv[2]);
    return 2;
  }
  strbuf report = {0};
  size_t pods;
  int diffs = pb_compare_pages(json, jl, pb, pl, &pods, &report);
  if (diffs)
    fprintf(stderr, "%s%d difference(s) between %s and %s\n", sb_str(&report), diffs, argv[1],
            argv[2]);
  else
    printf("%zu pods: the protobuf and JSON pages give the same trees and the same pods\n", pods);
  sb_free(&report);
  free(json);
  free(pb);
  return diffs ? 1 : 0;
}
