"""The HTML report's figures: matplotlib figures of a report page's values → PNG bytes → `data:` URIs, so that the
report is one file that needs nothing else (no network, no side files); the topology map is SVG drawn here, inline
in the page.

Each function draws what rdmatool.report.page gathered and decides nothing; it returns None when there is nothing
to draw (the page says so in words instead). matplotlib is imported here only, when a report is drawn: `import
rdmatool.cli` stays light. Figures are matplotlib `Figure`s of their own (the Agg canvas), never pyplot's global
state, so drawing needs no display and two reports in one process never share a figure.
"""

from __future__ import annotations

import base64
import html
from collections import defaultdict

from rdmatool.present.figures import png as figure_png
from rdmatool.report.page import RATE_FAMILIES, Page, PriorityFigure
from rdmatool.report.shown import terminal

MAX_PORTS = 40  # ports in the per-priority grid and the rate bars: the busiest first, the table has them all
MAX_LABELLED_HOSTS = 400  # host names on the topology map: beyond, the map would be too wide to scroll
GOOD, BAD_COLOUR, SWITCH_COLOUR, HOST_COLOUR = "#9aa5b1", "#d62728", "#1f4e79", "#4c956c"


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _png(figure) -> bytes:
    """The figure as PNG, every text in it shown as the characters it is (rdmatool.present.figures)."""
    return figure_png(figure)


def priority_grid(figures: list[PriorityFigure]) -> bytes | None:
    """Two grids side by side, ports x priorities 0-7: the pause fraction (the larger of rx and tx) and the ECN mark
    ratio, on a log colour scale from 1e-6 to 1; a zero is white, a figure the bundle lacks is hatched grey."""
    if not figures:
        return None
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import LogNorm

    cells: dict[str, dict[int, PriorityFigure]] = defaultdict(dict)
    for f in figures:
        cells[f"{f.target} {f.port}"][f.priority] = f

    def peak(port: str) -> float:
        return max(max(f.pause_fraction or 0.0, f.ecn_mark_ratio or 0.0) for f in cells[port].values())

    ports = sorted(cells, key=lambda p: (-peak(p), p))[:MAX_PORTS]
    priorities = list(range(8))
    figure = _figure(11, 1.6 + 0.26 * len(ports))
    norm = LogNorm(vmin=1e-6, vmax=1.0)
    image = None
    for k, (name, title) in enumerate((("pause_fraction", "PFC pause fraction (rx or tx)"),
                                       ("ecn_mark_ratio", "ECN mark ratio"))):
        axes = figure.add_subplot(1, 2, k + 1)
        grid = np.full((len(ports), len(priorities)), np.nan)
        for i, port in enumerate(ports):
            for j in priorities:
                value = getattr(cells[port].get(j), name, None) if j in cells[port] else None
                if value is not None:
                    grid[i, j] = max(value, 1e-9)  # zero: white below the scale, not missing
        axes.set_facecolor("#e6e6e6")
        image = axes.imshow(np.ma.masked_invalid(grid), norm=norm, aspect="auto", interpolation="nearest",
                            cmap=colormaps["magma_r"].with_extremes(under="white"))
        for i in range(len(ports)):
            for j in priorities:
                if np.isfinite(grid[i, j]) and grid[i, j] >= 1e-6:
                    axes.text(j, i, f"{grid[i, j]:.2g}", ha="center", va="center", fontsize=6,
                              color="white" if grid[i, j] > 1e-2 else "black")
        axes.set_title(title, fontsize=10)
        axes.set_xticks(priorities, labels=[str(p) for p in priorities], fontsize=8)
        axes.set_xlabel("priority")
        axes.set_yticks(range(len(ports)), labels=ports if k == 0 else [""] * len(ports), fontsize=7)
    bar = figure.colorbar(image, ax=figure.axes, shrink=0.9, extend="min")
    bar.set_label("share (log scale; white = 0, grey = not reported)", fontsize=8)
    return _png(figure)


def counter_rates(rates: dict[str, dict[str, float]], window_s: float | None) -> bytes | None:
    """Grouped horizontal bars, one group per port (the busiest MAX_PORTS), one bar per counter family, on a log
    axis: the rates over the window between the bundle's two snapshots."""
    busy = {port: values for port, values in rates.items() if any(v > 0 for v in values.values())}
    if not busy:
        return None
    ports = sorted(busy, key=lambda p: (-max(busy[p].values()), p))[:MAX_PORTS]
    families = [label for label, _ in RATE_FAMILIES]
    figure = _figure(11, 1.6 + 0.34 * len(ports))
    axes = figure.add_subplot()
    height = 0.8 / len(families)
    for k, family in enumerate(families):
        values = [busy[p].get(family, 0.0) for p in ports]
        positions = [i + (k - (len(families) - 1) / 2) * height for i in range(len(ports))]
        axes.barh(positions, values, height=height, label=family)
    axes.set_xscale("symlog", linthresh=1.0)
    axes.set_yticks(range(len(ports)), labels=ports, fontsize=7)
    axes.invert_yaxis()
    window = f" (window {window_s:.3g} s)" if window_s else ""
    axes.set_title(f"counter rates between the bundle's two snapshots{window}", fontsize=10)
    axes.set_xlabel("per second (log scale above 1)")
    axes.legend(fontsize=7, loc="lower right")
    axes.grid(axis="x", alpha=0.3)
    return _png(figure)


def topology_svg(page: Page) -> str | None:
    """The cabling as an SVG drawing: switches on top, hosts below each under its switch, one line per cable, red
    when a physical fault names either end (rdmatool.report.page.CABLE_RULES), grey otherwise; a diamond near the
    end of a cable for a fault of that port (settings, traffic: page.port_faults). A faulty port whose cable the
    bundle did not see is a short cable from it to a dashed box, its unknown far end. A cable between two switches
    is an arc on the top row. Each cable and marker says what it is on hover (its <title>) and carries its ends as
    data- attributes. SVG rather than a picture so that the browser draws it sharp at any zoom, and so a test can
    read which cable is red; the page says the legend."""
    cables = page.links
    if not cables:
        return None
    switch_targets = {r.target for r in page.ports if r.kind == "switch"}
    switches = sorted({c.link.switch for c in cables if c.link.switch}
                      | {c.link.host for c in cables if c.link.host in switch_targets})
    hosts: list[str] = []
    for switch in switches:  # hosts grouped under the first switch they reach, so cables stay short
        for c in cables:
            if c.link.switch == switch and c.link.host and c.link.host not in hosts and c.link.host not in switches:
                hosts.append(c.link.host)
    hosts += sorted({c.link.host for c in cables if not c.link.switch and c.link.host not in hosts})
    labelled = len(hosts) <= MAX_LABELLED_HOSTS
    step = 18 if labelled else max(3, 4000 // max(len(hosts), 1))
    width = max(960, 60 + step * max(len(hosts), len(switches)))
    label_room = 8 + 6 * max((len(h) for h in hosts), default=0) if labelled else 10
    top, bottom, stub = 40, 250, 80
    height = bottom + 14 + label_room
    x_host = {h: 30 + (i + 0.5) * (width - 60) / max(len(hosts), 1) for i, h in enumerate(hosts)}
    x_switch = {s: 30 + (i + 0.5) * (width - 60) / len(switches) for i, s in enumerate(switches)}
    bad = sum(1 for c in cables if c.bad)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="topology" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="topology map: {len(cables)} cables, {bad} with a '
           'physical fault in red">']
    ends: dict[tuple[int, str], tuple[tuple[float, float], tuple[float, float]]] = {}  # for the port markers
    unseen: dict[str, int] = {}  # the cables of unknown far end drawn so far from each port's host or switch
    for c in sorted(cables, key=lambda c: c.bad):  # red drawn last, on top
        link = c.link
        colour, weight = (BAD_COLOUR, 2.6) if c.bad else (GOOD, 1.0)
        arc = link.host in x_switch
        if not link.switch or not link.host:  # a stub from the port to a dashed box: the far end is unknown
            name = link.host or link.switch
            k = unseen[name] = unseen.get(name, -1) + 1
            a = (x_host[name], bottom) if link.host else (x_switch[name], top)
            b = (a[0] + 10 + 9 * k, bottom - stub if link.host else top + stub)
        else:
            a = (x_switch[link.host], top) if arc else (x_host[link.host], bottom)
            b = (x_switch[link.switch], top)
        ends[id(c), "host"], ends[id(c), "switch"] = (a, b), (b, a)
        attrs = (f'class="cable{" physical" if c.bad else ""}" data-host="{_attr(link.host)}" '
                 f'data-nic="{_attr(link.nic)}" data-switch="{_attr(link.switch)}" '
                 f'data-switch-port="{_attr(link.switch_port)}"')
        if arc:  # between two switches: an arc above their row
            shape = (f'<path d="M{a[0]:.1f},{a[1]} Q{(a[0] + b[0]) / 2:.1f},{top - 36} {b[0]:.1f},{b[1]}" '
                     f'fill="none" stroke="{colour}" stroke-width="{weight}"/>')
        else:
            shape = (f'<line x1="{a[0]:.1f}" y1="{a[1]}" x2="{b[0]:.1f}" y2="{b[1]}" stroke="{colour}" '
                     f'stroke-width="{weight}"/>')
        if not link.switch or not link.host:
            shape += (f'<rect x="{b[0] - 5:.1f}" y="{b[1] - 5}" width="10" height="10" fill="white" '
                      f'stroke="{INK}" stroke-dasharray="3,2"/>')
        what = c.name + (f": {', '.join(c.faults)}" if c.faults else "")
        out.append(f"<g {attrs}><title>{_text(what)}</title>{shape}</g>")
    for name, x in x_switch.items():
        out.append(f'<rect x="{x - 7:.1f}" y="{top - 7}" width="14" height="14" fill="{SWITCH_COLOUR}"/>'
                   f'<text x="{x:.1f}" y="{top - 12}" font-size="11" font-weight="bold" text-anchor="middle" '
                   f'fill="{INK}">{_text(name)}</text>')
    for name, x in x_host.items():
        out.append(f'<circle cx="{x:.1f}" cy="{bottom}" r="4.5" fill="{HOST_COLOUR}"/>')
        if labelled:
            out.append(f'<text transform="translate({x + 3.5:.1f},{bottom + 10}) rotate(90)" font-size="10" '
                       f'fill="{INK}">{_text(name)}</text>')
    for fault in page.port_faults:
        point = _marker_at(fault, ends, x_host, x_switch, top, bottom)
        if point is None:
            continue  # a port of a host or switch not on the map: the list under it names it
        x, y = point
        out.append(f'<g class="port-fault {fault.severity.value}" data-target="{_attr(fault.target)}" '
                   f'data-port="{_attr(fault.port)}"><title>{_text(f"{fault.target} {fault.port}: ")}'
                   f'{_text(", ".join(fault.rules))}</title>{diamond(x, y, MARKER[fault.severity.value])}</g>')
    out.append("</svg>")
    return "".join(out)


INK = "#1d2733"  # the page's text colour
MARKER = {"warning": "#bf8700", "error": "#e8590c", "critical": "#e8590c"}  # a port's fault, by its severity


def diamond(x: float, y: float, colour: str) -> str:
    return (f'<polygon points="{x:.1f},{y - 6:.1f} {x + 6:.1f},{y:.1f} {x:.1f},{y + 6:.1f} {x - 6:.1f},{y:.1f}" '
            f'fill="{colour}" stroke="white" stroke-width="1"/>')


def _marker_at(fault, ends, x_host, x_switch, top, bottom) -> tuple[float, float] | None:
    """Where a port's marker goes: a sixth of the way along its cable from its end, else beside its host or switch."""
    if fault.cable is not None:
        link = fault.cable.link
        end = "host" if link.host == fault.target and link.host else "switch"
        (x0, y0), (x1, y1) = ends[id(fault.cable), end]
        return x0 + (x1 - x0) / 6, y0 + (y1 - y0) / 6
    if fault.target in x_switch:
        return x_switch[fault.target], top + 16
    if fault.target in x_host:
        return x_host[fault.target], bottom - 16
    return None


def _text(value: str) -> str:
    """A name or text as SVG character data: its controls made visible (rdmatool.report.shown), then escaped."""
    return html.escape(terminal(value), quote=False)


def _attr(value: str) -> str:
    return html.escape(terminal(value), quote=True)


def trend(points: list[dict]) -> bytes | None:
    """One small chart per figure: its median, p90 and largest value per baseline night, this bundle last (its
    point marked)."""
    if not points:
        return None
    by_label: dict[str, list[dict]] = defaultdict(list)
    for point in points:
        by_label[point["label"]].append(point)
    labels = sorted(by_label)
    columns = min(3, len(labels))
    rows = (len(labels) + columns - 1) // columns
    figure = _figure(11, 2.6 * rows)
    for k, label in enumerate(labels):
        axes = figure.add_subplot(rows, columns, k + 1)
        series = by_label[label]
        xs = list(range(len(series)))
        for key, style in (("median", "-o"), ("p90", "--s"), ("max", ":^")):
            axes.plot(xs, [p[key] for p in series], style, markersize=4, label=key)
        if series[-1]["night"] == "this bundle":
            axes.axvspan(xs[-1] - 0.4, xs[-1] + 0.4, color="#fde68a", alpha=0.6, lw=0)
        axes.set_title(label, fontsize=9)
        axes.set_xticks(xs, labels=[_night_label(p["night"]) for p in series], rotation=30, fontsize=7)
        axes.tick_params(axis="y", labelsize=7)
        if k == 0:
            axes.legend(fontsize=7)
    return _png(figure)


def _night_label(night: str) -> str:
    return night if night == "this bundle" else night[5:16].replace("T", " ")  # an ISO time: month-day hh:mm


def perf_heatmaps(page: Page) -> dict[str, bytes]:
    """The perftest matrix of each test, as `rdmatool perf run` draws it (rdmatool.perf.output.heatmaps)."""
    if not page.pairs:
        return {}
    from rdmatool.perf.output import heatmaps

    return heatmaps(page.pairs, page.attribution)

