/* html.h - the plan as one self-contained HTML page (`simulate --report FILE.html`).
 *
 * Nothing is loaded from elsewhere: styles and the small filter script are inline, so the file
 * can be mailed or attached to a ticket. The page shows, per node, bars of requested cpu,
 * memory and pods before and after the plan against the thresholds in force; the planned moves
 * (source -> likely destination, see moves.h); and the decision table, filterable by node,
 * namespace and outcome (selects, or the page URL's fragment: #node=worker-a&outcome=requested,
 * which is how the tests drive it). Pure: renders into a buffer. */
#ifndef DS_REPORT_HTML_H
#define DS_REPORT_HTML_H

#include "../framework/framework.h"
#include "../util/strbuf.h"
#include "../framework/decisions.h"

#include <stdbool.h>

typedef struct {
  const char *title;     /* e.g. "snapshot cluster.json, policy policy.yaml" */
  const model *m;
  const fw_result *res;
  const decisions *dec;
  double (*before)[3];   /* per node (model order): requested cpu, memory, pods in % */
  double (*after)[3];
  bool (*has)[3];        /* whether the node has that resource's capacity */
  size_t max_rows;       /* pods listed in the decision table at most */
} html_input;

void report_html(const html_input *in, strbuf *out);

#endif
