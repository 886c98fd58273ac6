/* pager.h - a paged LIST (limit/continue, as client-go's pager) whose next page is fetched
 * while the current one is decoded.
 *
 * Decoding a page takes about as long as fetching the next one (docs/performance.md), so a
 * fetcher thread requests page N+1 as soon as page N has arrived, taking the continue token
 * from the first bytes of page N (the API server writes the list's metadata before its items;
 * when a page does not, the fetcher waits for the decoder's token). At most two pages wait.
 * The page function runs on the calling thread, in page order, as a plain loop would run it;
 * the client is used by the fetcher alone while the list runs (a client is not thread-safe).
 * Errors read as a plain loop's would: `HTTP <status>: <message>` or the transport failure. */
#ifndef DS_KUBE_PAGER_H
#define DS_KUBE_PAGER_H

#include "client.h"

#include <stdbool.h>
#include <stddef.h>

/* One page's body: hand its items on and return the list's continue token (heap, NULL at the
 * end) in *token and the items read in *count. */
typedef int (*kube_page_fn)(void *ctx, const char *url, const kube_response *r, char **token,
                            size_t *count, dserr *err);

typedef struct {
  double fetch_s;  /* request sent to body received, summed over the pages */
  double decode_s; /* in the page function, summed */
  size_t pages, bytes, items;
  size_t protobuf_pages; /* pages the server sent in protobuf (the rest came as JSON) */
  long status;  /* the HTTP status of the last response (0 when none came) */
  bool expired; /* a later page's continue token had expired (HTTP 410) */
} kube_pager_stats;

/* "json", "protobuf" or "protobuf and json": how the server sent the pages, for log lines */
const char *kube_pager_encoding(const kube_pager_stats *st);

/* GETs path page by page (limit=page) and hands each page to fn; accept is the Accept header
 * (kube_get_as; NULL: JSON). A page's continue token is read ahead of its items in either
 * encoding. 0, or -1 with err (st->expired tells a 410 on a later page apart). st is filled
 * in either case. */
int kube_pager_run(kube_client *c, const char *path, const char *accept, int page, kube_page_fn fn,
                   void *ctx, kube_pager_stats *st, dserr *err);

/* The same, the first page asked with resourceVersion=min_rv&resourceVersionMatch=NotOlderThan
 * (min_rv NULL: as kube_pager_run). kube-apiserver then serves the list, every page of it,
 * from its watch cache, where a list without a resourceVersion is read from etcd unless the
 * server can prove its cache current (ConsistentListFromCache, which etcd older than 3.4.31 /
 * 3.5.13 cannot support): the same objects for about half the server's CPU (docs/performance.md).
 * min_rv must be one the resource's cache has reached (a resourceVersion a list of it
 * answered, or KUBE_LIST_ANY_RV): for a newer one the cache waits for an event of its own
 * resource, seconds or longer, before it answers 504. A first page the server cannot serve so
 * (504 "Too large resource version", 410) is asked again without it. */
int kube_pager_run_from(kube_client *c, const char *path, const char *accept, const char *min_rv,
                        int page, kube_page_fn fn, void *ctx, kube_pager_stats *st, dserr *err);

/* What a first list asks when it has no resourceVersion of its own: any state the API server's
 * cache holds, as client-go's reflector asks with resourceVersion=0 for its first list; "0"
 * itself would make the server ignore the limit and send the whole list as one page. */
#define KUBE_LIST_ANY_RV "1"

/* Objects per LIST page unless --list-page-size says otherwise. client-go's pager asks 500,
 * but its reflector's first list (resourceVersion=0) comes from the API server's cache as one
 * answer. kube-apiserver 1.37 spends about 7 MB of allocations on each page it serves from its
 * cache: at 150,000 pods, pages of 500 cost it 3.0 GB and 11-14 s of CPU, pages of 5,000 1.1 GB
 * and 5-8 s, for 28 MB more of this process's peak RSS (docs/performance.md). */
#define KUBE_LIST_PAGE_SIZE_DEFAULT 5000

#endif
