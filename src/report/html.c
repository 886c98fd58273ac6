/* html.c - the self-contained HTML report; see html.h. */
#include "html.h"

#include "moves.h"

#include <stdlib.h>
#include <string.h>

static void esc(strbuf *out, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '<':
      sb_append(out, "&lt;");
      break;
    case '>':
      sb_append(out, "&gt;");
      break;
    case '&':
      sb_append(out, "&amp;");
      break;
    case '"':
      sb_append(out, "&quot;");
      break;
    case '\'':
      sb_append(out, "&#39;");
      break;
    default:
      sb_appendc(out, *s);
    }
  }
}

static const char *style =
    "body{font-family:system-ui,sans-serif;margin:24px;color:#222}"
    "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
    "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;border-bottom:1px solid #ddd;"
    "text-align:left;vertical-align:top}"
    ".bars td.res{width:60px;color:#555}.bar{position:relative;width:320px;height:14px;"
    "background:#eee;margin:2px 0}.bar .fill{position:absolute;left:0;top:0;bottom:0}"
    ".before .fill{background:#9bb8d3}.after .fill{background:#3a78b5}"
    ".bar .mark{position:absolute;top:-2px;bottom:-2px;width:2px}.mark.low{background:#2a9d3a}"
    ".mark.high{background:#c0392b}.pct{font-size:11px;color:#555}"
    ".cat-overutilized{color:#c0392b}.cat-underutilized{color:#2a9d3a}"
    ".o-evicted,.o-requested{font-weight:bold}.o-failed,.o-limit,.o-vetoed{color:#b35900}"
    "select{margin-right:12px}.note{color:#666;font-size:12px}";

/* Reads the selects (or the URL fragment on load) and hides the rows that do not match. */
static const char *script =
    "function dsApply(){var f={node:document.getElementById('f-node').value,"
    "namespace:document.getElementById('f-namespace').value,"
    "outcome:document.getElementById('f-outcome').value};var n=0;"
    "document.querySelectorAll('#decisions tbody tr').forEach(function(r){"
    "var ok=(!f.node||r.dataset.node===f.node)&&(!f.namespace||r.dataset.namespace===f.namespace)"
    "&&(!f.outcome||r.dataset.outcome===f.outcome);r.hidden=!ok;if(ok)n++;});"
    "document.getElementById('shown').textContent=n;}"
    "function dsFill(id,key){var s=document.getElementById(id),seen={};"
    "document.querySelectorAll('#decisions tbody tr').forEach(function(r){seen[r.dataset[key]]=1;});"
    "Object.keys(seen).sort().forEach(function(v){var o=document.createElement('option');"
    "o.value=v;o.textContent=v;s.appendChild(o);});s.addEventListener('change',dsApply);}"
    "window.addEventListener('DOMContentLoaded',function(){dsFill('f-node','node');"
    "dsFill('f-namespace','namespace');dsFill('f-outcome','outcome');"
    "var h=new URLSearchParams(location.hash.slice(1));['node','namespace','outcome'].forEach("
    "function(k){if(h.get(k)!==null)document.getElementById('f-'+k).value=h.get(k);});dsApply();});";

static const char *const res_names[3] = {"cpu", "memory", "pods"};

static void bar(strbuf *out, const char *cls, double pct, const dec_node *dn, const char *res) {
  double w = pct < 0 ? 0 : pct > 100 ? 100 : pct;
  sb_printf(out, "<div class=\"bar %s\"><div class=\"fill\" style=\"width:%.2f%%\"></div>", cls, w);
  for (size_t t = 0; dn && t < dn->nthresholds; t++)
    if (!strcmp(dn->thresholds_by_resource[t].resource, res)) {
      sb_printf(out,
                "<div class=\"mark low\" title=\"low %.2f%%\" style=\"left:%.2f%%\"></div>"
                "<div class=\"mark high\" title=\"high %.2f%%\" style=\"left:%.2f%%\"></div>",
                dn->thresholds_by_resource[t].low, dn->thresholds_by_resource[t].low,
                dn->thresholds_by_resource[t].high, dn->thresholds_by_resource[t].high);
    }
  sb_append(out, "</div>");
}

static void nodes_section(const html_input *in, strbuf *out) {
  const model *m = in->m;
  sb_append(out, "<h2>Nodes: requested resources before and after the plan</h2>"
                 "<p class=\"note\">Light bar: before; dark bar: after. Green mark: low threshold; "
                 "red mark: high threshold (where a plugin used them for this node).</p>"
                 "<table class=\"bars\" id=\"nodes\"><thead><tr><th>node</th><th>category</th>"
                 "<th>resource</th><th>before / after</th><th></th></tr></thead><tbody>");
  for (size_t i = 0; i < m->nodes.n; i++) {
    const node *n = m->nodes.items[i];
    const dec_node *dn = in->dec ? decisions_node_of(in->dec, n) : NULL;
    const char *cat = dn && dn->category ? dn->category : (dn && !dn->in_cycle ? "not in cycle" : "-");
    for (int r = 0; r < 3; r++) {
      sb_append(out, "<tr class=\"node-row\" data-node=\"");
      esc(out, n->name);
      sb_append(out, "\">");
      if (r == 0) {
        sb_append(out, "<td rowspan=\"3\">");
        esc(out, n->name);
        sb_append(out, "</td><td rowspan=\"3\" class=\"cat-");
        esc(out, cat);
        sb_append(out, "\">");
        esc(out, cat);
        if (dn && dn->why) {
          sb_append(out, "<div class=\"note\">");
          esc(out, dn->why);
          sb_append(out, "</div>");
        }
        sb_append(out, "</td>");
      }
      sb_printf(out, "<td class=\"res\">%s</td><td>", res_names[r]);
      if (in->has[i][r]) {
        bar(out, "before", in->before[i][r], dn, res_names[r]);
        bar(out, "after", in->after[i][r], dn, res_names[r]);
        sb_printf(out, "</td><td class=\"pct\">%.2f%% &rarr; %.2f%%</td></tr>", in->before[i][r],
                  in->after[i][r]);
      } else {
        sb_append(out, "<span class=\"note\">no capacity given</span></td><td></td></tr>");
      }
    }
  }
  sb_append(out, "</tbody></table>");
}

static void moves_section(const html_input *in, strbuf *out) {
  size_t n;
  planned_move *mv = report_moves(in->m, in->res, &n);
  sb_printf(out, "<h2>Planned moves (%zu)</h2>", n);
  sb_append(out, "<table id=\"moves\"><thead><tr><th>#</th><th>pod</th><th>from</th>"
                 "<th>to</th><th>how</th><th>by</th></tr></thead><tbody>");
  for (size_t i = 0; i < n; i++) {
    const fw_eviction *e = &in->res->evictions[i];
    char ref[512];
    sb_printf(out, "<tr class=\"move\"><td>%zu</td><td>", i + 1);
    esc(out, pod_ref(mv[i].pod, ref, sizeof ref));
    sb_append(out, "</td><td>");
    esc(out, mv[i].from ? mv[i].from->name : mv[i].pod->node_name);
    sb_append(out, "</td><td>");
    if (mv[i].to) {
      esc(out, mv[i].to->name);
      if (!mv[i].chosen)
        sb_append(out, " <span class=\"note\">(likely: the scheduler places it)</span>");
    } else {
      sb_append(out, "<span class=\"note\">");
      esc(out, mv[i].why_none);
      sb_append(out, "</span>");
    }
    sb_printf(out, "</td><td>%s</td><td>",
              e->to           ? "live migration to the chosen node"
              : e->background ? "eviction request: KubeVirt live-migrates the VM"
              : e->evacuation ? (e->counted ? "evacuation: KubeVirt live-migrates the VM (a "
                                              "failed eviction to upstream, counted against the "
                                              "limits)"
                                            : "evacuation: KubeVirt live-migrates the VM (a "
                                              "failed eviction, not counted against the limits)")
                              : "eviction");
    esc(out, e->profile);
    sb_appendc(out, '/');
    esc(out, e->plugin);
    sb_append(out, "</td></tr>");
  }
  if (!n)
    sb_append(out, "<tr><td colspan=\"6\">nothing to move</td></tr>");
  sb_append(out, "</tbody></table>");
  free(mv);
}

static void decisions_section(const html_input *in, strbuf *out) {
  const model *m = in->m;
  sb_append(out, "<h2>Decisions</h2><p>node <select id=\"f-node\"><option value=\"\">all</option>"
                 "</select> namespace <select id=\"f-namespace\"><option value=\"\">all</option>"
                 "</select> outcome <select id=\"f-outcome\"><option value=\"\">all</option></select>"
                 " <span class=\"note\"><span id=\"shown\">0</span> shown</span></p>"
                 "<table id=\"decisions\"><thead><tr><th>pod</th><th>node</th><th>outcome</th>"
                 "<th>by</th><th>why</th></tr></thead><tbody>");
  size_t rows = 0, left = 0;
  for (size_t i = 0; i < m->pods.n; i++) {
    const pod *p = m->pods.items[i];
    const dec_pod *dp = decisions_find(in->dec, p);
    if (!dp)
      continue;
    if (rows >= in->max_rows) {
      left++;
      continue;
    }
    rows++;
    const dec_event *last = NULL;
    for (const dec_event *e = dp->events; e; e = e->next)
      if (e->outcome == dp->outcome)
        last = e;
    const char *o = dec_outcome_name(dp->outcome);
    sb_append(out, "<tr data-node=\"");
    esc(out, p->node_name);
    sb_append(out, "\" data-namespace=\"");
    esc(out, p->ns);
    sb_printf(out, "\" data-outcome=\"%s\"><td>", o);
    esc(out, p->name);
    sb_append(out, "</td><td>");
    esc(out, p->node_name);
    sb_printf(out, "</td><td class=\"o-%s\">%s</td><td>", o, o);
    esc(out, last ? last->by : "");
    sb_append(out, "</td><td>");
    esc(out, last ? last->reason : "");
    sb_append(out, "</td></tr>");
  }
  sb_append(out, "</tbody></table>");
  if (left)
    sb_printf(out, "<p class=\"note\">%zu more pods are not listed here; the JSON plan's decision "
                   "record counts every one.</p>",
              left);
}

void report_html(const html_input *in, strbuf *out) {
  sb_append(out, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<title>Descheduling plan</title><style>");
  sb_append(out, style);
  sb_append(out, "</style><script>");
  sb_append(out, script);
  sb_append(out, "</script></head><body><h1>Descheduling plan</h1><p>");
  esc(out, in->title);
  sb_printf(out,
            "</p><p id=\"totals\">evicted: %llu, requested in background: %llu, evacuations: "
            "%llu, moves: %zu</p>",
            (unsigned long long)in->res->evicted, (unsigned long long)in->res->requests,
            (unsigned long long)in->res->evacuations, in->res->nevictions);
  nodes_section(in, out);
  moves_section(in, out);
  decisions_section(in, out);
  sb_append(out, "</body></html>\n");
}
