"""The cluster lab's record of one run as one self-contained HTML page (no script, no external
resource): the headline figures, and three plots drawn as inline SVG: the imbalance per cycle
against the scenario's target, the migrations per cycle, and each cycle node's utilization
before the first cycle and after the last. tests/lab/test_report.py opens it in headless
Chromium and checks what a reader sees.
"""

import html

W, H, PAD = 640, 220, 40


def _esc(x):
    return html.escape(str(x), quote=True)


def _axes(title, ymax, ylabel, xs):
    out = ['<svg class="plot" role="img" aria-label="%s" width="%d" height="%d" viewBox="0 0 %d %d">'
           % (_esc(title), W, H, W, H),
           '<text x="%d" y="16" class="title">%s</text>' % (PAD, _esc(title)),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" class="axis"/>' % (PAD, H - PAD, W - 10, H - PAD),
           '<line x1="%d" y1="30" x2="%d" y2="%d" class="axis"/>' % (PAD, PAD, H - PAD),
           '<text x="4" y="34" class="tick">%s</text>' % _esc(_fmt(ymax)),
           '<text x="4" y="%d" class="tick">0</text>' % (H - PAD),
           '<text x="%d" y="%d" class="tick">%s</text>' % (PAD, H - 8, _esc(ylabel))]
    return out


def _fmt(v):
    return ("%.2f" % v).rstrip("0").rstrip(".") if isinstance(v, float) else str(v)


def _x(i, n):
    return PAD + (W - PAD - 20) * (i / max(1, n - 1))


def _y(v, ymax):
    return (H - PAD) - (H - PAD - 30) * (v / ymax if ymax else 0)


def line_plot(title, values, ymax, target=None, ylabel="cycle"):
    n = len(values)
    out = _axes(title, ymax, ylabel, range(n))
    if target is not None:
        y = _y(target, ymax)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="target"/>' % (PAD, y, W - 10, y))
        out.append('<text x="%d" y="%.1f" class="tick">target %s</text>' % (W - 90, y - 4, _esc(_fmt(target))))
    pts = " ".join("%.1f,%.1f" % (_x(i, n), _y(v, ymax)) for i, v in enumerate(values))
    out.append('<polyline points="%s" class="series"/>' % pts)
    for i, v in enumerate(values):
        out.append('<circle cx="%.1f" cy="%.1f" r="3" class="point"><title>cycle %d: %s</title></circle>'
                   % (_x(i, n), _y(v, ymax), i, _esc(_fmt(v))))
        out.append('<text x="%.1f" y="%d" class="tick">%d</text>' % (_x(i, n) - 3, H - PAD + 14, i))
    out.append("</svg>")
    return "\n".join(out)


def bar_plot(title, values, ymax, ylabel="cycle"):
    n = len(values)
    out = _axes(title, ymax, ylabel, range(n))
    bw = max(2.0, (W - PAD - 30) / max(1, n) * 0.6)
    for i, v in enumerate(values):
        x = PAD + 10 + (W - PAD - 30) * (i / max(1, n))
        y = _y(v, ymax)
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="bar"><title>cycle %d: %s</title></rect>'
                   % (x, y, bw, (H - PAD) - y, i, _esc(v)))
        out.append('<text x="%.1f" y="%d" class="tick">%d</text>' % (x, H - PAD + 14, i))
    out.append("</svg>")
    return "\n".join(out)


def node_plot(title, before, after):
    """Paired bars per node: before the first cycle (light) and after the last (dark)."""
    names = sorted(set(before) | set(after))
    ymax = max([100.0] + list(before.values()) + list(after.values()))
    width = max(W, PAD + 24 * len(names) + 20)
    out = ['<svg class="plot" role="img" aria-label="%s" width="%d" height="%d" viewBox="0 0 %d %d">'
           % (_esc(title), width, H + 40, width, H + 40),
           '<text x="%d" y="16" class="title">%s</text>' % (PAD, _esc(title)),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" class="axis"/>' % (PAD, H - PAD, width - 10, H - PAD),
           '<text x="4" y="34" class="tick">%s%%</text>' % _esc(_fmt(ymax)),
           '<text x="4" y="%d" class="tick">0</text>' % (H - PAD)]
    step = (width - PAD - 20) / max(1, len(names))
    for i, n in enumerate(names):
        x = PAD + 4 + i * step
        for j, (series, cls) in enumerate(((before, "before"), (after, "after"))):
            v = series.get(n, 0.0)
            y = _y(v, ymax)
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="%s"><title>%s %s: %s%%</title></rect>'
                       % (x + j * step * 0.4, y, step * 0.38, (H - PAD) - y, cls, _esc(n), cls, _esc(_fmt(v))))
        if len(names) <= 40:
            out.append('<text x="%.1f" y="%d" class="tick" transform="rotate(60 %.1f %d)">%s</text>'
                       % (x, H - PAD + 12, x, H - PAD + 12, _esc(n)))
    out.append("</svg>")
    return "\n".join(out)


CSS = """
body { font-family: sans-serif; margin: 24px; color: #222; }
table { border-collapse: collapse; margin: 12px 0; }
td, th { border: 1px solid #ccc; padding: 4px 8px; text-align: left; }
.plot { display: block; margin: 16px 0; border: 1px solid #eee; }
.title { font-size: 13px; font-weight: bold; }
.tick { font-size: 10px; fill: #555; }
.axis { stroke: #333; stroke-width: 1; }
.series { fill: none; stroke: #1f6fb2; stroke-width: 2; }
.point { fill: #1f6fb2; }
.target { stroke: #c0392b; stroke-dasharray: 4 3; }
.bar { fill: #1f6fb2; }
.before { fill: #b7d3ea; }
.after { fill: #1f6fb2; }
.bad { color: #c0392b; font-weight: bold; }
"""


def render(r):
    samples = r["samples"]
    imb = [s["imbalance"] for s in samples]
    created = [s["migrations"]["created"] for s in samples]
    first, last = samples[0], samples[-1]
    rows = [
        ("scenario", r["scenario"]), ("descheduler", "%s (%s)" % (r["who"], r["version"])),
        ("policy", r["policy"]), ("cadence", "%s, %s" % (r["cadence"], r["interval"])),
        ("cycles run", r["cycles"]),
        ("cycles to converge", r["cyclesToConverge"] if r["cyclesToConverge"] is not None else "did not converge"),
        ("migrations (succeeded / failed / pending)", "%d (%d / %d / %d)" % (
            r["migrations"], r["migrationsSucceeded"], r["migrationsFailed"], r["migrationsPending"])),
        ("ping-pongs", r["pingPongs"]),
        ("VMs stopped", r["vmsStopped"]),
        ("imbalance (max - min)", "%.3f -> %.3f" % (r["imbalanceStart"], r["imbalanceEnd"])),
        ("target", "%s: %s" % (", ".join("%s %s" % (k, "at most %s" % v) for k, v in sorted(r["target"].items())
                                         if v is not None), "met" if r["targetMet"] else "not met")),
        ("requests the descheduler sent", ", ".join("%s: %d" % kv for kv in r["requests"].items()) or "none"),
    ]
    comp = ", ".join("%s %s" % kv for kv in sorted(r["components"].items()))
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>lab: %s with %s</title><style>%s</style></head><body>"
             % (_esc(r["scenario"]), _esc(r["who"]), CSS),
             "<h1>Cluster lab: %s, %s's descheduler</h1>" % (_esc(r["scenario"]), _esc(r["who"])),
             "<table id='summary'>"]
    for k, v in rows:
        cls = " class='bad'" if (k == "VMs stopped" and v) else ""
        parts.append("<tr><th>%s</th><td%s>%s</td></tr>" % (_esc(k), cls, _esc(v)))
    parts.append("</table>")
    if r.get("failures"):
        parts.append("<p class='bad'>Failures: %s</p>" % _esc("; ".join(r["failures"])))
    if r.get("vmsStoppedWhy"):
        parts.append("<p class='bad'>Stopped: %s</p>" % _esc("; ".join("%s: %s" % kv for kv in r["vmsStoppedWhy"].items())))
    parts.append("<p>Components: %s.</p>" % _esc(comp))
    ti = r["target"].get("imbalance")
    parts.append(line_plot("Imbalance per cycle (max - min of the scenario's metric over the cycle nodes)",
                           imb, max([(ti or 0) * 1.2, 0.05] + imb), target=ti))
    parts.append(bar_plot("Migrations created per cycle", created, max([1] + created)))
    parts.append(node_plot("Node utilization (%s), before the first cycle and after the last" % _esc(r.get("metricLabel", "metric")),
                           first["metric"], last["metric"]))
    parts.append("<p>Imbalance and utilization use %s.</p>" % _esc(r.get("metricLabel", "the scenario's metric")))
    parts.append("</body></html>")
    return "\n".join(parts)
