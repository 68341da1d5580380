"""The HTML report: one self-contained file (styles, script and images inside it; nothing fetched, which its
Content-Security-Policy enforces) with the verdict, the on-call view, every finding, a sortable fleet table of the
ports, and the plots of rdmatool.report.plots.

A renderer: it lays out a report page's values (rdmatool.report.page) and decides nothing. The on-call view is the
terminal one (rdmatool.report.text) recorded by rich, so the two never say different things.
"""

from __future__ import annotations

import html
import io
import math

from rdmatool.model import Severity
from rdmatool.present import units
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

# The page's colours. Every text is drawn on a background it keeps WCAG AA contrast with (4.5:1 for normal text):
# TEXT_PAIRS lists each pair the style sheet declares, and tests/report/test_report_contrast.py computes their ratios.
INK, MUTED, PAPER, HEADER_BG = plots.INK, "#57606a", "#ffffff", "#f6f8fa"
RED, AMBER, BLUE, GREEN, VIOLET = "#cf222e", "#9a6700", "#0969da", "#1a7f37", "#8250df"
# The on-call pane: a dark terminal whose every colour reads on its background, dim text included (rich draws `dim`
# as the colour halfway to the background). ANSI order: black, red, green, yellow, blue, magenta, cyan, white.
ONCALL_BG, ONCALL_FG = "#0d1117", "#f0f6fc"
ONCALL_NORMAL = ("#8b949e", "#ff7b72", "#3fb950", "#d29922", "#58a6ff", "#bc8cff", "#39c5cf", "#f0f6fc")
ONCALL_BRIGHT = ("#9ea7b3", "#ffa198", "#56d364", "#e3b341", "#79c0ff", "#d2a8ff", "#56d4dd", "#ffffff")
TEXT_PAIRS = (  # (what, text colour, background)
    ("page text", INK, PAPER), ("muted text", MUTED, PAPER), ("table header", INK, HEADER_BG),
    ("verdict pass", PAPER, GREEN), ("verdict warn", PAPER, AMBER), ("verdict fail", PAPER, RED),
    ("verdict inconclusive", PAPER, VIOLET), ("critical/error", RED, PAPER), ("warning", AMBER, PAPER),
    ("info", BLUE, PAPER), ("on-call text", ONCALL_FG, ONCALL_BG),
)

_STYLE = f"""
body {{ font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1180px; padding: 0 16px 48px; color: {INK};
  background: {PAPER}; }}
h1 {{ font-size: 22px; margin: 18px 0 4px; }} h2 {{ font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; }}
.verdict {{ display: inline-block; padding: 2px 12px; border-radius: 4px; color: {PAPER}; font-weight: 700; }}
.verdict.pass {{ background: {GREEN}; }} .verdict.warn {{ background: {AMBER}; }}
.verdict.fail {{ background: {RED}; }} .verdict.inconclusive {{ background: {VIOLET}; }}
.meta {{ color: {MUTED}; }} nav a {{ margin-right: 12px; color: {BLUE}; }}
pre.oncall {{ background: {ONCALL_BG}; color: {ONCALL_FG}; padding: 12px; overflow: auto; max-height: 640px;
  font-size: 12px; line-height: 1.35; }}
table {{ border-collapse: collapse; width: 100%; font-size: 12.5px; }}
th, td {{ border-bottom: 1px solid #e1e4e8; padding: 3px 6px; text-align: left; vertical-align: top; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
table.sortable th {{ cursor: pointer; user-select: none; color: {INK}; background: {HEADER_BG}; position: sticky;
  top: 0; }}
table.sortable th[aria-sort=ascending]::after {{ content: " \\25B2"; }}
table.sortable th[aria-sort=descending]::after {{ content: " \\25BC"; }}
tr.critical td:first-child, tr.error td:first-child {{ border-left: 4px solid {RED}; }}
tr.warning td:first-child {{ border-left: 4px solid {AMBER}; }} tr.info td:first-child {{ border-left: 4px solid {BLUE}; }}
.sev {{ font-weight: 600; }} .sev.critical, .sev.error {{ color: {RED}; }} .sev.warning {{ color: {AMBER}; }}
.sev.info {{ color: {BLUE}; }} img.plot {{ max-width: 100%; border: 1px solid #e1e4e8; }}
ul.legend {{ list-style: none; padding: 0; margin: 4px 0; }}
ul.legend li {{ display: inline-block; margin-right: 16px; }} ul.legend svg {{ vertical-align: middle; }}
div.map {{ overflow-x: auto; border: 1px solid #e1e4e8; background: {PAPER}; }}
.none {{ color: {MUTED}; font-style: italic; }} code {{ font-size: 12px; }}
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

# The fleet table: header, PortRow attribute, form (None: text; "share": a share of the time or of the packets,
# shown in percent as the on-call view says it; "number": a plain number). Sorting reads the exact value.
_COLUMNS = (
    ("target", "target", None), ("port", "port", None), ("netdev", "netdev", None), ("kind", "kind", None),
    ("state", "state", None), ("rate Gb/s", "rate_gbps", "number"), ("pause % of time", "pause_fraction", "share"),
    ("pause prio", "pause_priority", "number"), ("ECN-marked %", "ecn_mark_ratio", "share"),
    ("CNPs sent/s", "cnp_sent_per_s", "number"), ("CNPs handled/s", "cnp_handled_per_s", "number"),
    ("errors in window", "errors", "number"), ("worst finding", "severity", None), ("findings", "findings", "number"),
)
# Below these a figure reads as "< 0.0001 %" or "< 0.001", never in scientific notation: the exact value is in the
# cell's data-sort and in the JSON.
_SMALLEST_PERCENT, _SMALLEST_NUMBER = 1e-4, 1e-3


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
        facts.append(f"window {units.duration(result.window_s)}")
    if page.baseline:
        facts.append(f"baseline <code>{escape(page.baseline)}</code>")
    why = f'<p class="meta">{escape(result.no_data)}</p>' if result.no_data else ""
    return (f'<h1>verdict: <span class="verdict {escape(verdict)}" id="verdict">{escape(verdict.upper())}</span></h1>'
            f'<p class="meta">{" · ".join(facts)}<br>bundle <code>{escape(result.source)}</code></p>{why}')


def oncall_theme():
    """The on-call pane's terminal colours (rich's TerminalTheme): the pane's background and text, and the ANSI
    palette the terminal view's styles name (`red`, `yellow`, `dim` ...)."""
    from rich.terminal_theme import TerminalTheme

    def rgb(colour: str) -> tuple[int, int, int]:
        return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)

    return TerminalTheme(rgb(ONCALL_BG), rgb(ONCALL_FG), [rgb(c) for c in ONCALL_NORMAL],
                         [rgb(c) for c in ONCALL_BRIGHT])


def _oncall(page: Page) -> str:
    """The terminal's on-call view, recorded by rich with its colours as inline styles, in the pane's palette."""
    from rich.console import Console

    from rdmatool.report import text

    console = Console(record=True, width=120, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    text.render(page.result, console)
    recorded = console.export_html(theme=oncall_theme(), inline_styles=True, code_format="{code}")
    return f'<pre class="oncall">{recorded}</pre>'


def _where(finding) -> str:
    where = finding.target + (f" {finding.entity}" if finding.entity else "")
    if finding.evidence.get("priority") is not None:
        where += f" prio {finding.evidence['priority']}"
    return where


def _evidence(evidence: dict) -> str:
    """Every key of the evidence; the observed, expected and baseline figures in the unit of the metric, as the
    on-call view writes them (`observed 97.5 %`), the window as a duration."""
    from rdmatool.metrics import GLOSSARY

    metric = evidence.get("metric")
    unit = units.unit_for(metric, GLOSSARY[metric].unit) if metric in GLOSSARY else ""
    shown = []
    for key, value in evidence.items():
        if value is None or key in ("target", "entity", "priority"):
            continue
        if key == "window_s" and isinstance(value, (int, float)):
            value = units.duration(value)
        elif key in ("observed", "expected", "baseline"):
            value = _in_unit(value, unit)
        elif isinstance(value, float):
            value = _number(value)
        shown.append(f"{key} {value}")
    return "; ".join(shown)


def _in_unit(value, unit: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if unit == units.SHARE:
        return _share(value)
    return units.human(value, unit) if unit else _number(value)


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
    """A plain number as people write it (`14,820`, `0.25`, `399.6`); a tiny one as `< 0.001`, never `1e-05`."""
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return str(value)
    if value and abs(value) < _SMALLEST_NUMBER:
        return f"{'-' if value < 0 else ''}< {_SMALLEST_NUMBER:g}"
    return units.number(value)


def _share(value) -> str:
    """A share of a whole in percent, as the on-call view says it (`97.5 %`, `0.0006 %`); a tiny one as
    `< 0.0001 %`, never `6e-06`."""
    if value is None:
        return "—"
    if value and abs(value) * 100 < _SMALLEST_PERCENT:
        return f"< {_SMALLEST_PERCENT:g} %"
    return units.percent(value)


def _fleet(ports: list[PortRow]) -> str:
    if not ports:
        return _none("no port figures in this bundle")
    head = "".join(f"<th>{escape(label)}</th>" for label, _, _ in _COLUMNS)
    rows = []
    for row in ports:
        cells = []
        for _, name, form in _COLUMNS:
            value = getattr(row, name)
            if name == "severity":
                rank = "" if value is None else str(_SEVERITIES[::-1].index(value))
                shown = "" if value is None else value.value
                cells.append(f'<td class="sev {shown}" data-sort="{rank}">{escape(shown)}</td>')
            elif form is not None:
                key = "" if value is None else repr(float(value))
                shown = _share(value) if form == "share" else _number(value)
                cells.append(f'<td class="num" data-sort="{key}">{escape(shown)}</td>')
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
    """The map, then in words the cables with a physical fault and the faults of ports (settings, traffic), each
    on its port: a wrong setting is not a bad cable."""
    svg = plots.topology_svg(page)
    if svg is None:
        body = _none("no cabling in this bundle (no LLDP neighbours, no iblinkinfo, no physically faulty port)")
    else:
        bad = sum(1 for cable in page.links if cable.bad)
        body = (f"<p>Cabling seen by LLDP and the subnet: {len(page.links)} cables, {bad} with a physical fault; "
                f"{len(page.port_faults)} ports with a fault of their own. Hover a cable or a marker for its names."
                f'</p>{_legend()}<div class="map">{svg}</div>')
    bad = [cable for cable in page.links if cable.bad]
    if bad:
        body += ('<p>Cables with a physical fault (link errors, flapping, down, degraded width or speed):</p>'
                 '<ul id="bad-cables">' + "".join(
                     f"<li>{escape(cable.name)}: <code>{escape(', '.join(cable.faults))}</code></li>" for cable in bad)
                 + "</ul>")
    elif page.links:
        body += _none("no cable with a physical fault")
    if page.port_faults:
        body += ('<p>Faults of a port, not of its cable (settings, traffic), marked at that end of the cable:</p>'
                 '<ul id="port-faults">' + "".join(
                     f'<li><span class="sev {fault.severity.value}">{fault.severity.value}</span> '
                     f"{escape(f'{fault.target} {fault.port}')}: <code>{escape(', '.join(fault.rules))}</code>"
                     + ("" if fault.cable else " (no cable of this port in the bundle)") + "</li>"
                     for fault in page.port_faults) + "</ul>")
    return body


def _legend() -> str:
    """What the map's colours and shapes say: each a small drawing beside its words (the words in the page's text
    colour, so the legend reads whatever the swatch)."""

    def swatch(shape: str) -> str:
        return f'<svg width="24" height="14" viewBox="0 -7 24 14" aria-hidden="true">{shape}</svg>'

    items = [
        (f'<line x1="0" y1="0" x2="24" y2="0" stroke="{plots.GOOD}" stroke-width="1.5"/>', "cable"),
        (f'<line x1="0" y1="0" x2="24" y2="0" stroke="{plots.BAD_COLOUR}" stroke-width="2.6"/>',
         "a physical fault on either end: link errors, flapping, down, degraded width or speed"),
        (plots.diamond(12, 0, plots.MARKER["error"]), "a fault of that port (error or critical): settings, traffic"),
        (plots.diamond(12, 0, plots.MARKER["warning"]), "the same, a warning"),
        (f'<rect x="7" y="-5" width="10" height="10" fill="white" stroke="{INK}" stroke-dasharray="3,2"/>',
         "the far end of a cable the bundle did not see (a link down sends no LLDP)"),
    ]
    return '<ul class="legend">' + "".join(f"<li>{swatch(shape)} {escape(words)}</li>" for shape, words in items) \
        + "</ul>"


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
