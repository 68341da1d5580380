"""The HTML report's figures: matplotlib figures of a report page's values → PNG bytes → `data:` URIs, so that the
report is one file that needs nothing else (no network, no side files).

Each function draws what rdmatool.report.page gathered and decides nothing; it returns None when there is nothing
to draw (the page says so in words instead). matplotlib is imported here only, when a report is drawn: `import
rdmatool.cli` stays light. Figures are matplotlib `Figure`s of their own (the Agg canvas), never pyplot's global
state, so drawing needs no display and two reports in one process never share a figure.
"""

from __future__ import annotations

import base64
import io
from collections import defaultdict

from rdmatool.report.page import RATE_FAMILIES, Page, PriorityFigure
from rdmatool.report.shown import terminal

MAX_PORTS = 40  # ports in the per-priority grid and the rate bars: the busiest first, the table has them all
MAX_LABELLED_HOSTS = 48  # host names on the topology map beyond this many would overlap
GOOD, BAD_COLOUR, SWITCH_COLOUR, HOST_COLOUR = "#9aa5b1", "#d62728", "#1f4e79", "#4c956c"


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _png(figure) -> bytes:
    """The figure as PNG, every text in it (titles, tick labels: port and host names a device reported) shown as the
    characters it is: controls made visible, never parsed as mathtext or TeX (rdmatool.report.shown)."""
    import matplotlib
    from matplotlib.text import Text

    for text in figure.findobj(Text):
        text.set_parse_math(False)
        text.set_usetex(False)
        text.set_text(terminal(text.get_text()))
    buffer = io.BytesIO()
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):  # ticks made while drawing
        figure.savefig(buffer, format="png")
    return buffer.getvalue()


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


def topology_map(page: Page) -> bytes | None:
    """Switches on top, hosts below each under its switch, one line per cable: red when an error or critical
    finding names either end, grey otherwise. A cable between two switches joins them on the top row."""
    if not page.links:
        return None
    switches = sorted({link.switch for link, _ in page.links}
                      | {link.host for link, _ in page.links if _is_switch(link.host, page)})
    hosts: list[str] = []
    for switch in switches:  # hosts grouped under the first switch they reach, so cables stay short
        for link, _ in page.links:
            if link.switch == switch and link.host not in hosts and link.host not in switches:
                hosts.append(link.host)
    width = max(8.0, min(40.0, 0.32 * max(len(hosts), 2 * len(switches))))
    figure = _figure(width, 4.2)
    axes = figure.add_subplot()
    x_host = {h: i for i, h in enumerate(hosts)}
    spread = max(1, len(hosts) - 1)
    x_switch = {s: (i + 0.5) * spread / len(switches) for i, s in enumerate(switches)}
    for link, bad in sorted(page.links, key=lambda lb: lb[1]):  # red drawn last, on top
        colour, weight = (BAD_COLOUR, 2.4) if bad else (GOOD, 1.0)
        if link.host in x_switch:
            axes.annotate("", xy=(x_switch[link.switch], 1.0), xytext=(x_switch[link.host], 1.0),
                          arrowprops={"arrowstyle": "-", "color": colour, "lw": weight,
                                      "connectionstyle": "arc3,rad=0.3"})
            continue
        axes.plot([x_host[link.host], x_switch[link.switch]], [0.0, 1.0], color=colour, lw=weight, zorder=1)
    axes.scatter(list(x_switch.values()), [1.0] * len(switches), s=260, marker="s", color=SWITCH_COLOUR, zorder=2)
    axes.scatter(list(x_host.values()), [0.0] * len(hosts), s=60, color=HOST_COLOUR, zorder=2)
    for name, x in x_switch.items():
        axes.text(x, 1.09, name, ha="center", va="bottom", fontsize=8, fontweight="bold")
    if len(hosts) <= MAX_LABELLED_HOSTS:
        for name, x in x_host.items():
            axes.text(x, -0.08, name, ha="center", va="top", fontsize=7, rotation=90)
    bad_count = sum(1 for _, bad in page.links if bad)
    axes.set_title(f"cabling seen by LLDP / the subnet: {len(page.links)} cables, {bad_count} with a bad end (red)",
                   fontsize=10)
    axes.set_ylim(-0.75 if len(hosts) <= MAX_LABELLED_HOSTS else -0.2, 1.35)
    axes.set_xlim(-1, max(len(hosts), 1))
    axes.axis("off")
    return _png(figure)


def _is_switch(name: str, page: Page) -> bool:
    return any(r.target == name and r.kind == "switch" for r in page.ports)


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

