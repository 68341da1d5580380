"""The HTML report: one self-contained file (styles, script and images inside it; nothing fetched, which its
Content-Security-Policy enforces) with the verdict, the on-call view, every finding, a sortable fleet table of the
ports, and the plots of rdmatool.report.plots.

A renderer: it lays out a report page's values (rdmatool.report.page) and decides nothing. The on-call view is the
terminal one (rdmatool.report.text) recorded by rich, so the two never say different things.
"""

from __future__ import annotations

import html
import io

from rdmatool.model import Severity
from rdmatool.report import plots
from rdmatool.report.hostsets import grouped_failures
from rdmatool.report.page import Page, PortRow
from rdmatool.report.shown import terminal


def escape(text, quote: bool = True) -> str:
    """Text as HTML: its controls made visible and lone surrogates replaced (rdmatool.report.shown), then escaped."""
    return html.escape(terminal(text, newlines=True), quote)


# Nothing may leave the file: images are data: URIs, style and script are inline; a stray URL is refused by the
# browser (and said in its console) rather than fetched.
_CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
        "base-uri 'none'; form-action 'none'")
_SEVERITIES = (Severity.CRITICAL, Severity.ERROR, Severity.WARNING, Severity.INFO)

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1180px; padding: 0 16px 48px; color: #1d2733; }
h1 { font-size: 22px; margin: 18px 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; }
.verdict { display: inline-block; padding: 2px 12px; border-radius: 4px; color: white; font-weight: 700; }
.verdict.pass { background: #2da44e; } .verdict.warn { background: #bf8700; }
.verdict.fail { background: #cf222e; } .verdict.inconclusive { background: #8250df; }
.meta { color: #57606a; } nav a { margin-right: 12px; }
pre.oncall { background: #0d1117; color: #e6edf3; padding: 12px; overflow: auto; max-height: 640px; font-size: 12px;
  line-height: 1.35; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { border-bottom: 1px solid #e1e4e8; padding: 3px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; user-select: none; background: #f6f8fa; position: sticky; top: 0; }
table.sortable th[aria-sort=ascending]::after { content: " \\25B2"; }
table.sortable th[aria-sort=descending]::after { content: " \\25BC"; }
tr.critical td:first-child, tr.error td:first-child { border-left: 4px solid #cf222e; }
tr.warning td:first-child { border-left: 4px solid #bf8700; } tr.info td:first-child { border-left: 4px solid #0969da; }
.sev { font-weight: 600; } .sev.critical, .sev.error { color: #cf222e; } .sev.warning { color: #9a6700; }
.sev.info { color: #0969da; } img.plot { max-width: 100%; border: 1px solid #e1e4e8; }
.none { color: #57606a; font-style: italic; } code { font-size: 12px; }
"""

# Click a header to sort by it, again to reverse. Numbers sort by their data-sort value; an empty cell sorts last.
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var key = function (row) { var cell = row.cells[column]; return cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent; };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === "" || y === "") { return (x === "") - (y === ""); }
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

_COLUMNS = (  # fleet table: header, PortRow attribute, numeric
    ("target", "target", False), ("port", "port", False), ("netdev", "netdev", False), ("kind", "kind", False),
    ("state", "state", False), ("rate Gb/s", "rate_gbps", True), ("pause fraction", "pause_fraction", True),
    ("pause prio", "pause_priority", True), ("ECN mark ratio", "ecn_mark_ratio", True),
    ("CNPs sent/s", "cnp_sent_per_s", True), ("CNPs handled/s", "cnp_handled_per_s", True),
    ("errors in window", "errors", True), ("worst finding", "severity", False), ("findings", "findings", True),
)


def render(page: Page) -> str:
    """The whole report as one HTML document."""
    result = page.result
    verdict = result.verdict.value
    title = f"rdmatool report: {verdict.upper()}" + (f" — {result.source}" if result.source else "")
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        _header(page),
        '<nav><a href="#oncall">on-call view</a><a href="#findings">findings</a><a href="#fleet">fleet</a>'
        '<a href="#priorities">pause &amp; ECN</a><a href="#rates">counter rates</a><a href="#perf">perftest</a>'
        '<a href="#topology">topology</a><a href="#trend">trend</a></nav>',
        _section("oncall", "On-call view", _oncall(page)),
        _section("findings", f"Findings ({len(result.findings)})", _findings(page)),
        _section("fleet", f"Fleet: {len(page.ports)} ports (click a column to sort)", _fleet(page.ports)),
        _section("priorities", "Pause fraction and ECN mark ratio per priority",
                 _image(plots.priority_grid(page.priorities), "pause fraction and ECN mark ratio per port and priority",
                        "no pause or ECN figures per priority in this bundle")),
        _section("rates", "Counter rates", _image(plots.counter_rates(page.rates, result.window_s),
                                                  "counter rates per port", "no counter grew between the snapshots")),
        _section("perf", "Perftest matrix", _perf(page)),
        _section("topology", "Topology", _topology(page)),
        _section("trend", "Trend across nights", _trend(page)),
        _section("failures", f"Collection and parse failures ({len(result.failures)})", _failures(page)),
        "<footer class=\"meta\">Suggested changes are printed, never applied. Generated by rdmatool from the bundle "
        "alone: this file fetches nothing.</footer>",
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def _section(anchor: str, heading: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{escape(heading)}</h2>{body}</section>'


def _none(text: str) -> str:
    return f'<p class="none">{escape(text)}</p>'


def _header(page: Page) -> str:
    result = page.result
    verdict = result.verdict.value
    counts = [f"{sum(1 for f in result.findings if f.severity is s)} {s.value}" for s in _SEVERITIES
              if any(f.severity is s for f in result.findings)]
    facts = [escape(", ".join(counts) or "no findings")]
    if result.window_s:
        facts.append(f"window {result.window_s:.3g} s")
    if page.baseline:
        facts.append(f"baseline <code>{escape(page.baseline)}</code>")
    why = f'<p class="meta">{escape(result.no_data)}</p>' if result.no_data else ""
    return (f'<h1>verdict: <span class="verdict {escape(verdict)}" id="verdict">{escape(verdict.upper())}</span></h1>'
            f'<p class="meta">{" · ".join(facts)}<br>bundle <code>{escape(result.source)}</code></p>{why}')


def _oncall(page: Page) -> str:
    """The terminal's on-call view, recorded by rich with its colours as inline styles."""
    from rich.console import Console

    from rdmatool.report import text

    console = Console(record=True, width=120, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    text.render(page.result, console)
    return '<pre class="oncall">' + console.export_html(inline_styles=True, code_format="{code}") + "</pre>"


def _where(finding) -> str:
    where = finding.target + (f" {finding.entity}" if finding.entity else "")
    if finding.evidence.get("priority") is not None:
        where += f" prio {finding.evidence['priority']}"
    return where


def _evidence(evidence: dict) -> str:
    shown = []
    for key, value in evidence.items():
        if value is None or key in ("target", "entity", "priority"):
            continue
        shown.append(f"{key} {_number(value) if isinstance(value, float) else value}")
    return "; ".join(shown)


def _findings(page: Page) -> str:
    if not page.result.findings:
        return _none("no findings")
    rows = []
    for severity in _SEVERITIES:
        for f in (f for f in page.result.findings if f.severity is severity):
            rows.append(
                f'<tr class="{severity.value}"><td class="sev {severity.value}">{severity.value}</td>'
                f"<td>{escape(_where(f))}</td><td>{escape(f.symptom)}</td><td><code>{escape(f.rule)}</code></td>"
                f"<td>{escape(_evidence(f.evidence))}</td></tr>")
    return ('<table class="sortable" id="findings-table"><thead><tr><th>severity</th><th>where</th><th>symptom</th>'
            "<th>rule</th><th>evidence</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
            '<p class="meta">Cause, check, fix and the suggested commands of each rule: the on-call view above.</p>')


def _number(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):d}"
        return f"{value:.3g}"
    return str(value)


def _fleet(ports: list[PortRow]) -> str:
    if not ports:
        return _none("no port figures in this bundle")
    head = "".join(f"<th>{escape(label)}</th>" for label, _, _ in _COLUMNS)
    rows = []
    for row in ports:
        cells = []
        for _, name, numeric in _COLUMNS:
            value = getattr(row, name)
            if name == "severity":
                rank = "" if value is None else str(_SEVERITIES[::-1].index(value))
                shown = "" if value is None else value.value
                cells.append(f'<td class="sev {shown}" data-sort="{rank}">{escape(shown)}</td>')
            elif numeric:
                key = "" if value is None else repr(float(value))
                cells.append(f'<td class="num" data-sort="{key}">{escape(_number(value))}</td>')
            else:
                cells.append(f"<td>{escape(value or '')}</td>")
        css = f' class="{row.severity.value}"' if row.severity else ""
        rows.append(f"<tr{css}>{''.join(cells)}</tr>")
    return (f'<table class="sortable" id="fleet-table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table>")


def _image(png: bytes | None, alt: str, missing: str) -> str:
    if png is None:
        return _none(missing)
    return f'<img class="plot" alt="{escape(alt)}" src="{plots.data_uri(png)}">'


def _perf(page: Page) -> str:
    maps = plots.perf_heatmaps(page)
    if not maps:
        return _none("no perftest pairs in this bundle (a gate's or `rdmatool perf run`'s results, or per-peer "
                     "perftest outputs, are drawn here)")
    out = []
    attribution = page.attribution
    if attribution is not None:
        bad = [escape(n) for n in attribution.bad_nodes] + [escape(f"{a} ↔ {b}") for a, b in attribution.bad_links]
        out.append(f'<p>{len(page.pairs)} pair runs; bad: {", ".join(bad) or "none"}</p>')
    for test, png in maps.items():
        out.append(_image(png, f"perftest matrix {test}", ""))
    return "".join(out)


def _topology(page: Page) -> str:
    body = _image(plots.topology_map(page), "topology map: hosts and switches, bad links in red",
                  "no cabling in this bundle (no LLDP neighbours, no iblinkinfo)")
    bad = [link for link, is_bad in page.links if is_bad]
    if bad:
        body += "<p>Cables with a bad end:</p><ul>" + "".join(
            f"<li>{escape(f'{link.host} {link.nic} ↔ {link.switch} {link.switch_port}'.rstrip())}</li>"
            for link in bad) + "</ul>"
    return body


def _trend(page: Page) -> str:
    if not page.baseline:
        return _none("no baseline given (--baseline NAME or FILE draws the key figures of its nights here)")
    return _image(plots.trend(page.trend), "key figures per baseline night and this bundle",
                  "the baseline holds none of the key figures")


def _failures(page: Page) -> str:
    result = page.result
    items = [f"<li>{escape(targets)} [{escape(what)}]: {escape(error)}</li>"
             for targets, what, error in grouped_failures(result.failures)]
    listed = {f.get("error") for f in result.failures if f.get("kind") == "unread"}  # (a skipped file is a failure)
    items += [f"<li>not read: {escape(line)}</li>" for line in page.skipped if line not in listed]
    notes = "".join(f"<li>{escape(note)}</li>" for note in result.notes)
    body = f"<ul>{''.join(items)}</ul>" if items else _none("none")
    if notes:
        body += f"<h3>Notes</h3><ul>{notes}</ul>"
    return body
